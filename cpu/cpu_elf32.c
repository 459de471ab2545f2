/* cpu_elf32: 32-bit ELF (armhf) input for the loader, by widening.
 *
 * The loader works on Elf64 structures. A 32-bit file is turned into an equivalent 64-bit view once, up front:
 * the original bytes are copied unchanged (section and segment contents keep their file offsets), and after them
 * come a 64-bit file header, 64-bit section and program headers, and 64-bit copies of the tables whose entry
 * layout differs: symbol tables (Elf32_Sym -> Elf64_Sym), relocation tables (Elf32_Rel -> Elf64_Rela with
 * r_addend 0: Arm addends are implicit, read from the place by cpu_reloc_apply_arm) and the dynamic section
 * (Elf32_Dyn -> Elf64_Dyn). The widened headers point at those copies; every later check runs on them.
 * Values are zero-extended (addresses) or sign-extended (d_tag), so nothing the 32-bit file says is lost. */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_elf_internal.h"

typedef struct widen_plan {
  uint64_t ehdr_off, shdr_off, phdr_off, end; /* offsets in the widened buffer */
  uint64_t *sec_off;                          /* per section: offset of its widened table, or 0 */
  uint64_t dyn_off;                           /* widened PT_DYNAMIC contents */
  size_t dyn_phdr;                            /* index of PT_DYNAMIC, or SIZE_MAX */
} widen_plan;

/* Entry sizes of the 32-bit tables we widen, and the widened size; 0 for sections copied as they are. */
static size_t entry32(uint32_t type) {
  switch (type) {
  case SHT_SYMTAB:
  case SHT_DYNSYM: return sizeof(Elf32_Sym);
  case SHT_REL: return sizeof(Elf32_Rel);
  case SHT_RELA: return sizeof(Elf32_Rela);
  default: return 0;
  }
}
static size_t entry64(uint32_t type) {
  return type == SHT_SYMTAB || type == SHT_DYNSYM ? sizeof(Elf64_Sym) : sizeof(Elf64_Rela);
}

static bool in_file(size_t size_B, uint64_t off, uint64_t len) { return off <= size_B && len <= size_B - off; }

static hcq_status plan(const uint8_t *d, size_t size_B, const Elf32_Ehdr *eh, const Elf32_Shdr *sh,
                       const Elf32_Phdr *ph, widen_plan *p) {
  uint64_t o = cpu_elf_align_up(size_B, 8);
  p->ehdr_off = o;
  o += sizeof(Elf64_Ehdr);
  p->shdr_off = o;
  o += (uint64_t)(sh ? eh->e_shnum : 0) * sizeof(Elf64_Shdr);
  p->phdr_off = o;
  o += (uint64_t)(ph ? eh->e_phnum : 0) * sizeof(Elf64_Phdr);
  for (size_t i = 0; sh && i < eh->e_shnum; i++) {
    size_t e32 = entry32(sh[i].sh_type);
    if (!e32) continue;
    if (sh[i].sh_entsize != e32 || sh[i].sh_size % e32 || !in_file(size_B, sh[i].sh_offset, sh[i].sh_size))
      return hcq_status_make(HCQ_CODE_INVALID, "ELF32 section %zu: table of %u bytes at 0x%x (entries of %u, want %zu) "
                             "is malformed or outside the file (%zu bytes)", i, sh[i].sh_size, sh[i].sh_offset,
                             sh[i].sh_entsize, e32, size_B);
    p->sec_off[i] = o;
    o += (uint64_t)(sh[i].sh_size / e32) * entry64(sh[i].sh_type);
  }
  p->dyn_phdr = SIZE_MAX;
  for (size_t i = 0; ph && i < eh->e_phnum; i++) {
    if (ph[i].p_type != PT_DYNAMIC) continue;
    if (p->dyn_phdr != SIZE_MAX) return hcq_status_make(HCQ_CODE_INVALID, "ELF32 image has two PT_DYNAMIC headers");
    if (!in_file(size_B, ph[i].p_offset, ph[i].p_filesz))
      return hcq_status_make(HCQ_CODE_INVALID, "ELF32 PT_DYNAMIC at 0x%x (%u bytes) lies outside the file",
                             ph[i].p_offset, ph[i].p_filesz);
    p->dyn_phdr = i;
    p->dyn_off = o;
    o += (uint64_t)(ph[i].p_filesz / sizeof(Elf32_Dyn)) * sizeof(Elf64_Dyn);
  }
  (void)d;
  p->end = o;
  return HCQ_OK;
}

static void widen_table(uint8_t *out, const uint8_t *in, uint32_t type, size_t n) {
  for (size_t k = 0; k < n; k++) {
    if (type == SHT_SYMTAB || type == SHT_DYNSYM) {
      Elf32_Sym s;
      memcpy(&s, in + k * sizeof s, sizeof s);
      Elf64_Sym w = {.st_name = s.st_name, .st_info = s.st_info, .st_other = s.st_other, .st_shndx = s.st_shndx,
                     .st_value = s.st_value, .st_size = s.st_size};
      memcpy(out + k * sizeof w, &w, sizeof w);
    } else {
      Elf32_Rela r = {0};
      memcpy(&r, in + k * entry32(type), entry32(type)); /* Elf32_Rel is a prefix of Elf32_Rela */
      Elf64_Rela w = {.r_offset = r.r_offset,
                      .r_info = ELF64_R_INFO(ELF32_R_SYM(r.r_info), ELF32_R_TYPE(r.r_info)),
                      .r_addend = type == SHT_RELA ? r.r_addend : 0};
      memcpy(out + k * sizeof w, &w, sizeof w);
    }
  }
}

hcq_status cpu_elf32_widen(cpu_elf_file *f, uint8_t **out_owned) {
  *out_owned = NULL;
  const uint8_t *d = f->data;
  size_t size_B = f->size_B;
  if (size_B < sizeof(Elf32_Ehdr))
    return hcq_status_make(HCQ_CODE_INVALID, "truncated ELF32 header (%zu bytes, need %zu)", size_B, sizeof(Elf32_Ehdr));
  Elf32_Ehdr eh;
  memcpy(&eh, d, sizeof eh);
  Elf32_Shdr *sh = NULL;
  Elf32_Phdr *ph = NULL;
  widen_plan p = {0};
  hcq_status st = HCQ_OK;
  if (eh.e_shoff) {
    if (eh.e_shentsize != sizeof(Elf32_Shdr) || eh.e_shnum == 0 ||
        !in_file(size_B, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf32_Shdr)))
      return hcq_status_make(HCQ_CODE_INVALID, "ELF32 section headers at 0x%x (%u x %u bytes) are malformed or outside "
                             "the file (%zu bytes)", eh.e_shoff, eh.e_shnum, eh.e_shentsize, size_B);
    sh = malloc((size_t)eh.e_shnum * sizeof *sh);
    p.sec_off = calloc(eh.e_shnum, sizeof *p.sec_off);
    if (!sh || !p.sec_off) {
      st = hcq_status_make(HCQ_CODE_NOMEM, "ELF32 section headers");
      goto out;
    }
    memcpy(sh, d + eh.e_shoff, (size_t)eh.e_shnum * sizeof *sh);
  }
  if (eh.e_phoff && eh.e_phnum) {
    if (eh.e_phentsize != sizeof(Elf32_Phdr) || !in_file(size_B, eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf32_Phdr))) {
      st = hcq_status_make(HCQ_CODE_INVALID, "ELF32 program headers at 0x%x (%u x %u bytes) are malformed or outside "
                           "the file (%zu bytes)", eh.e_phoff, eh.e_phnum, eh.e_phentsize, size_B);
      goto out;
    }
    ph = malloc((size_t)eh.e_phnum * sizeof *ph);
    if (!ph) {
      st = hcq_status_make(HCQ_CODE_NOMEM, "ELF32 program headers");
      goto out;
    }
    memcpy(ph, d + eh.e_phoff, (size_t)eh.e_phnum * sizeof *ph);
  }
  if ((st = plan(d, size_B, &eh, sh, ph, &p))) goto out;
  uint8_t *w = calloc(1, p.end);
  if (!w) {
    st = hcq_status_make(HCQ_CODE_NOMEM, "widened ELF32 copy of %llu bytes", (unsigned long long)p.end);
    goto out;
  }
  memcpy(w, d, size_B);
  Elf64_Ehdr e64 = {.e_type = eh.e_type, .e_machine = eh.e_machine, .e_version = eh.e_version, .e_entry = eh.e_entry,
                    .e_phoff = ph ? p.phdr_off : 0, .e_shoff = sh ? p.shdr_off : 0, .e_flags = eh.e_flags,
                    .e_ehsize = sizeof(Elf64_Ehdr), .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = ph ? eh.e_phnum : 0,
                    .e_shentsize = sizeof(Elf64_Shdr), .e_shnum = sh ? eh.e_shnum : 0, .e_shstrndx = eh.e_shstrndx};
  memcpy(e64.e_ident, eh.e_ident, EI_NIDENT);
  memcpy(w + p.ehdr_off, &e64, sizeof e64);
  for (size_t i = 0; sh && i < eh.e_shnum; i++) {
    const Elf32_Shdr *s = &sh[i];
    Elf64_Shdr s64 = {.sh_name = s->sh_name, .sh_type = s->sh_type, .sh_flags = s->sh_flags, .sh_addr = s->sh_addr,
                      .sh_offset = s->sh_offset, .sh_size = s->sh_size, .sh_link = s->sh_link, .sh_info = s->sh_info,
                      .sh_addralign = s->sh_addralign, .sh_entsize = s->sh_entsize};
    size_t e32 = entry32(s->sh_type);
    if (e32) {
      size_t n = s->sh_size / e32;
      widen_table(w + p.sec_off[i], d + s->sh_offset, s->sh_type, n);
      s64.sh_offset = p.sec_off[i];
      s64.sh_size = (uint64_t)n * entry64(s->sh_type);
      s64.sh_entsize = entry64(s->sh_type);
      if (s->sh_type == SHT_REL) s64.sh_type = SHT_RELA;
    }
    memcpy(w + p.shdr_off + i * sizeof s64, &s64, sizeof s64);
  }
  for (size_t i = 0; ph && i < eh.e_phnum; i++) {
    const Elf32_Phdr *q = &ph[i];
    Elf64_Phdr q64 = {.p_type = q->p_type, .p_flags = q->p_flags, .p_offset = q->p_offset, .p_vaddr = q->p_vaddr,
                      .p_paddr = q->p_paddr, .p_filesz = q->p_filesz, .p_memsz = q->p_memsz, .p_align = q->p_align};
    if (i == p.dyn_phdr) {
      size_t n = q->p_filesz / sizeof(Elf32_Dyn);
      for (size_t k = 0; k < n; k++) {
        Elf32_Dyn dy;
        memcpy(&dy, d + q->p_offset + k * sizeof dy, sizeof dy);
        Elf64_Dyn d64 = {.d_tag = dy.d_tag, .d_un.d_val = dy.d_un.d_val};
        memcpy(w + p.dyn_off + k * sizeof d64, &d64, sizeof d64);
      }
      q64.p_offset = p.dyn_off;
      q64.p_filesz = (uint64_t)n * sizeof(Elf64_Dyn);
    }
    memcpy(w + p.phdr_off + i * sizeof q64, &q64, sizeof q64);
  }
  f->data = w;
  f->size_B = p.end;
  f->eh = (const Elf64_Ehdr *)(w + p.ehdr_off);
  *out_owned = w;
out:
  free(sh);
  free(ph);
  free(p.sec_off);
  return st;
}
