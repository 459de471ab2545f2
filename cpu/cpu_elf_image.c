/* cpu_elf_image: linked images (ET_DYN / ET_EXEC made with linker_scripts/cpu_kernel.ld).
 * Every PT_LOAD is copied to base + p_vaddr - lowest page; R_*_RELATIVE is the only dynamic relocation
 * accepted (anything else would be an import); pages take the protection of their segment. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cpu/cpu_elf_internal.h"
#include "cpu/cpu_mem.h"
#include "cpu/cpu_reloc.h"

typedef struct image {
  const cpu_elf_file *f;
  Elf64_Phdr *ph;    /* owned: the program headers, widened and checked by elf_segment_get */
  size_t phnum;
  uint64_t lo, hi;  /* page-aligned vaddr span */
  uint8_t *base;
  uint64_t bias;    /* run-time address - vaddr */
} image;

static hcq_status check_segments(image *im) {
  const elf_file *ef = &im->f->ef;
  size_t ps = cpu_page_size();
  if (ef->phnum == 0) return hcq_status_make(HCQ_CODE_INVALID, "linked image without program headers");
  im->ph = calloc(ef->phnum, sizeof *im->ph);
  if (!im->ph) return hcq_status_make(HCQ_CODE_NOMEM, "%zu program headers", ef->phnum);
  im->phnum = ef->phnum;
  for (size_t i = 0; i < im->phnum; i++) HCQ_TRY(elf_segment_get(ef, i, &im->ph[i], NULL));
  im->lo = UINT64_MAX;
  im->hi = 0;
  for (size_t i = 0; i < im->phnum; i++) {
    const Elf64_Phdr *p = &im->ph[i];
    if (p->p_type == PT_INTERP) return hcq_status_make(HCQ_CODE_UNSUPPORTED, "image asks for a dynamic linker (PT_INTERP)");
    if (p->p_type == PT_TLS) return hcq_status_make(HCQ_CODE_UNSUPPORTED, "image has thread-local storage (PT_TLS)");
    if (p->p_type != PT_LOAD) continue;
    if ((p->p_flags & PF_W) && (p->p_flags & PF_X))
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "segment %zu is writable and executable (W^X)", i);
    if (p->p_memsz > CPU_ELF_MAX_IMAGE_B || p->p_vaddr > UINT64_MAX - CPU_ELF_MAX_IMAGE_B ||
        p->p_align > CPU_ELF_MAX_ALIGN_B)
      return hcq_status_make(HCQ_CODE_INVALID, "segment %zu: absurd vaddr 0x%llx / size 0x%llx / align 0x%llx", i,
                             (unsigned long long)p->p_vaddr, (unsigned long long)p->p_memsz,
                             (unsigned long long)p->p_align);
    if (p->p_memsz == 0) continue;
    uint64_t s = p->p_vaddr & ~(uint64_t)(ps - 1), e = cpu_elf_align_up(p->p_vaddr + p->p_memsz, ps);
    /* segments with different protections must not share a page */
    for (size_t j = 0; j < i; j++) {
      const Elf64_Phdr *q = &im->ph[j];
      if (q->p_type != PT_LOAD || q->p_memsz == 0) continue;
      uint64_t qs = q->p_vaddr & ~(uint64_t)(ps - 1), qe = cpu_elf_align_up(q->p_vaddr + q->p_memsz, ps);
      if (s < qe && qs < e)
        return hcq_status_make(HCQ_CODE_INVALID, "segments %zu and %zu share a page (link with linker_scripts/cpu_kernel.ld)",
                               j, i);
    }
    if (s < im->lo) im->lo = s;
    if (e > im->hi) im->hi = e;
  }
  if (im->hi <= im->lo) return hcq_status_make(HCQ_CODE_INVALID, "image has no loadable bytes");
  if (im->hi - im->lo > CPU_ELF_MAX_IMAGE_B) return hcq_status_make(HCQ_CODE_INVALID, "absurd image span 0x%llx",
                                                                   (unsigned long long)(im->hi - im->lo));
  return HCQ_OK;
}

/* Is [vaddr, vaddr+len) inside the mapped span? */
static bool in_span(const image *im, uint64_t vaddr, uint64_t len) {
  return vaddr >= im->lo && vaddr <= im->hi && len <= im->hi - vaddr;
}

/* Arm images (ELF32) carry Elf32_Rel entries: R_ARM_RELATIVE adds the load bias to the 32-bit word in place. */
static hcq_status apply_rel32(image *im, uint64_t rel, uint64_t relsz, uint64_t relent) {
  if (!relsz) return HCQ_OK;
  if (relent != sizeof(Elf32_Rel) || relsz % relent || !in_span(im, rel, relsz))
    return hcq_status_make(HCQ_CODE_INVALID, "dynamic relocations at 0x%llx (0x%llx bytes, entries %llu) are malformed",
                           (unsigned long long)rel, (unsigned long long)relsz, (unsigned long long)relent);
  const uint8_t *table = im->base + (rel - im->lo);
  for (uint64_t off = 0; off < relsz; off += sizeof(Elf32_Rel)) {
    Elf32_Rel r;
    memcpy(&r, table + off, sizeof r);
    uint32_t type = ELF32_R_TYPE(r.r_info);
    if (cpu_reloc_is_none(EM_ARM, type)) continue;
    if (type != R_ARM_RELATIVE)
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "dynamic relocation type %u (%s): only R_ARM_RELATIVE is allowed (no imports)",
                             type, cpu_reloc_type_name(EM_ARM, type));
    if (!in_span(im, r.r_offset, 4))
      return hcq_status_make(HCQ_CODE_INVALID, "dynamic relocation at 0x%x is outside the image", r.r_offset);
    uint32_t v;
    memcpy(&v, im->base + (r.r_offset - im->lo), 4);
    v += (uint32_t)im->bias;
    memcpy(im->base + (r.r_offset - im->lo), &v, 4);
  }
  return HCQ_OK;
}

static hcq_status apply_dynamic(image *im) {
  uint16_t machine = im->f->eh->e_machine;
  uint32_t relative = machine == EM_X86_64 ? R_X86_64_RELATIVE : machine == EM_ARM ? R_ARM_RELATIVE : R_AARCH64_RELATIVE;
  for (size_t i = 0; i < im->phnum; i++) {
    const Elf64_Phdr *p = &im->ph[i];
    if (p->p_type != PT_DYNAMIC) continue;
    elf_table dyn;
    HCQ_TRY(elf_table_dynamic(&im->f->ef, p, &dyn));
    uint64_t rela = 0, relasz = 0, relaent = sizeof(Elf64_Rela), rel = 0, relsz = 0, relent = sizeof(Elf32_Rel);
    for (size_t k = 0; k < dyn.count; k++) {
      Elf64_Dyn d;
      elf_dyn_at(&dyn, k, &d);
      if (d.d_tag == DT_NULL) break;
      switch (d.d_tag) {
      case DT_RELA: rela = d.d_un.d_ptr; break;
      case DT_RELASZ: relasz = d.d_un.d_val; break;
      case DT_RELAENT: relaent = d.d_un.d_val; break;
      case DT_NEEDED: return hcq_status_make(HCQ_CODE_UNSUPPORTED, "image needs a shared library (DT_NEEDED): kernels must not import");
      case DT_REL:
      case DT_RELSZ:
      case DT_RELENT:
        if (machine != EM_ARM)
          return hcq_status_make(HCQ_CODE_UNSUPPORTED, "image has DT_REL relocations (not supported for %s)", cpu_machine_name(machine));
        if (d.d_tag == DT_REL) rel = d.d_un.d_ptr;
        else if (d.d_tag == DT_RELSZ) relsz = d.d_un.d_val;
        else relent = d.d_un.d_val;
        break;
      case DT_PLTRELSZ:
        if (d.d_un.d_val) return hcq_status_make(HCQ_CODE_UNSUPPORTED, "image has PLT relocations: it imports functions");
        break;
      default: break;
      }
    }
    HCQ_TRY(apply_rel32(im, rel, relsz, relent));
    if (!relasz) continue;
    if (relaent != sizeof(Elf64_Rela) || relasz % relaent || !in_span(im, rela, relasz))
      return hcq_status_make(HCQ_CODE_INVALID, "dynamic relocations at 0x%llx (0x%llx bytes, entries %llu) are malformed",
                             (unsigned long long)rela, (unsigned long long)relasz, (unsigned long long)relaent);
    const uint8_t *table = im->base + (rela - im->lo);
    for (uint64_t off = 0; off < relasz; off += sizeof(Elf64_Rela)) {
      Elf64_Rela r;
      memcpy(&r, table + off, sizeof r);
      uint32_t type = (uint32_t)ELF64_R_TYPE(r.r_info);
      if (cpu_reloc_is_none(machine, type)) continue;
      if (type != relative)
        return hcq_status_make(HCQ_CODE_UNSUPPORTED, "dynamic relocation type %u (%s): only %s is allowed (no imports)", type,
                               cpu_reloc_type_name(machine, type), cpu_reloc_type_name(machine, relative));
      if (!in_span(im, r.r_offset, 8))
        return hcq_status_make(HCQ_CODE_INVALID, "dynamic relocation at 0x%llx is outside the image", (unsigned long long)r.r_offset);
      uint64_t v = im->bias + (uint64_t)r.r_addend;
      memcpy(im->base + (r.r_offset - im->lo), &v, 8);
    }
  }
  return HCQ_OK;
}

static hcq_status protect(image *im) {
  size_t ps = cpu_page_size();
  if (mprotect(im->base, im->hi - im->lo, PROT_NONE) != 0) return hcq_status_make(HCQ_CODE_IO, "mprotect");
  for (size_t i = 0; i < im->phnum; i++) {
    const Elf64_Phdr *p = &im->ph[i];
    if (p->p_type != PT_LOAD || p->p_memsz == 0) continue;
    uint64_t s = p->p_vaddr & ~(uint64_t)(ps - 1), e = cpu_elf_align_up(p->p_vaddr + p->p_memsz, ps);
    int prot = (p->p_flags & PF_R ? PROT_READ : 0) | (p->p_flags & PF_W ? PROT_WRITE : 0) |
               (p->p_flags & PF_X ? PROT_EXEC : 0);
    if (mprotect(im->base + (s - im->lo), e - s, prot) != 0)
      return hcq_status_make(HCQ_CODE_IO, "mprotect of segment %zu", i);
    if (p->p_flags & PF_X)
      __builtin___clear_cache((char *)im->base + (p->p_vaddr - im->lo), (char *)im->base + (p->p_vaddr - im->lo) + p->p_memsz);
  }
  return HCQ_OK;
}

static bool image_addr(void *ctx, size_t index, const Elf64_Sym *s, uint64_t *out) {
  image *im = ctx;
  (void)index;
  if (s->st_shndx == SHN_ABS || !in_span(im, s->st_value, 0)) return false;
  *out = s->st_value + im->bias;
  return true;
}

static hcq_status load(image *im, cpu_program *prog) {
  const cpu_elf_file *f = im->f;
  HCQ_TRY(check_segments(im));
  uint64_t align = cpu_page_size();
  for (size_t i = 0; i < im->phnum; i++)
    if (im->ph[i].p_type == PT_LOAD && im->ph[i].p_align > align) align = im->ph[i].p_align;
  if (align & (align - 1)) return hcq_status_make(HCQ_CODE_INVALID, "segment alignment 0x%llx is not a power of two",
                                                  (unsigned long long)align);
  void *base;
  HCQ_TRY(cpu_alloc(im->hi - im->lo, align, &base));
  im->base = base;
  prog->base = base;
  prog->size_B = im->hi - im->lo;
  im->bias = (uint64_t)(uintptr_t)base - im->lo;
  for (size_t i = 0; i < im->phnum; i++) {
    const Elf64_Phdr *p = &im->ph[i];
    if (p->p_type == PT_LOAD && p->p_filesz) memcpy(im->base + (p->p_vaddr - im->lo), f->ef.data + p->p_offset, p->p_filesz);
  }
  HCQ_TRY(apply_dynamic(im));
  HCQ_TRY(protect(im));
  if (f->eh->e_entry) {
    if (!in_span(im, f->eh->e_entry, 1))
      return hcq_status_make(HCQ_CODE_INVALID, "entry point 0x%llx is outside the image", (unsigned long long)f->eh->e_entry);
    prog->entry = (void *)(uintptr_t)(f->eh->e_entry + im->bias);
  }
  /* Symbols: the full symbol table when present, else the dynamic one. */
  size_t symsec = 0;
  for (size_t i = 0; i < f->shnum; i++)
    if (f->sh[i].sh_type == SHT_SYMTAB || (f->sh[i].sh_type == SHT_DYNSYM && !symsec)) symsec = i;
  if (symsec) {
    elf_table t;
    HCQ_TRY(elf_table_open(&f->ef, symsec, &t));
    HCQ_TRY(cpu_elf_collect_symbols(prog, &t, image_addr, im));
  }
  return HCQ_OK;
}

hcq_status cpu_elf_load_image(const cpu_elf_file *f, cpu_program *prog) {
  image im = {.f = f};
  hcq_status st = load(&im, prog);
  free(im.ph);
  return st;
}
