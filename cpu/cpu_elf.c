/* cpu_elf: ELF header validation, dispatch by file type, symbol lookup and program lifetime. */
#include "cpu/cpu_elf_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_mem.h"
#include "cpu/cpu_reloc.h"

const char *cpu_elf_str(const cpu_elf_file *f, size_t strsec, uint64_t index) {
  if (strsec == 0 || strsec >= f->shnum) return NULL;
  const Elf64_Shdr *s = &f->sh[strsec];
  if (s->sh_type != SHT_STRTAB || !cpu_elf_in_file(f, s->sh_offset, s->sh_size) || index >= s->sh_size)
    return NULL;
  const char *str = (const char *)f->data + s->sh_offset + index;
  if (!memchr(str, 0, s->sh_size - index)) return NULL;
  return str;
}

const char *cpu_elf_section_name(const cpu_elf_file *f, size_t i) {
  const char *n = i < f->shnum ? cpu_elf_str(f, f->eh->e_shstrndx, f->sh[i].sh_name) : NULL;
  return n ? n : "?";
}

hcq_status cpu_elf_check_table(const cpu_elf_file *f, size_t i, uint64_t entsize) {
  const Elf64_Shdr *s = &f->sh[i];
  if (s->sh_entsize != entsize || s->sh_size % entsize)
    return hcq_status_make(HCQ_CODE_INVALID, "section %zu (%s): entry size %llu / size %llu, expected entries of %llu",
                           i, cpu_elf_section_name(f, i), (unsigned long long)s->sh_entsize,
                           (unsigned long long)s->sh_size, (unsigned long long)entsize);
  if (s->sh_offset % 8)
    return hcq_status_make(HCQ_CODE_INVALID, "section %zu (%s): table offset 0x%llx is not 8-byte aligned", i,
                           cpu_elf_section_name(f, i), (unsigned long long)s->sh_offset);
  if (!cpu_elf_in_file(f, s->sh_offset, s->sh_size))
    return hcq_status_make(HCQ_CODE_INVALID, "section %zu (%s): contents [0x%llx, +0x%llx) lie outside the file (%zu bytes)",
                           i, cpu_elf_section_name(f, i), (unsigned long long)s->sh_offset,
                           (unsigned long long)s->sh_size, f->size_B);
  return HCQ_OK;
}

hcq_status cpu_elf_collect_symbols(cpu_program *prog, const cpu_elf_file *f, size_t symsec,
                                   bool (*addr_of)(void *ctx, size_t index, const Elf64_Sym *s, uint64_t *out), void *ctx) {
  const Elf64_Shdr *ss = &f->sh[symsec];
  size_t n = ss->sh_size / sizeof(Elf64_Sym);
  const Elf64_Sym *syms = (const Elf64_Sym *)(f->data + ss->sh_offset);
  cpu_elf_sym *out = calloc(n ? n : 1, sizeof *out);
  if (!out) return hcq_status_make(HCQ_CODE_NOMEM, "symbol table of %zu entries", n);
  size_t k = 0;
  for (size_t i = 1; i < n; i++) {
    Elf64_Sym s;
    memcpy(&s, &syms[i], sizeof s);
    int type = ELF64_ST_TYPE(s.st_info);
    if (s.st_shndx == SHN_UNDEF || s.st_name == 0) continue;
    if (type != STT_FUNC && type != STT_OBJECT && type != STT_NOTYPE) continue;
    const char *name = cpu_elf_str(f, ss->sh_link, s.st_name);
    uint64_t addr;
    if (!name || !*name || !addr_of(ctx, i, &s, &addr)) continue;
    out[k].name = strdup(name);
    if (!out[k].name) {
      for (size_t j = 0; j < k; j++) free(out[j].name);
      free(out);
      return hcq_status_make(HCQ_CODE_NOMEM, "symbol name");
    }
    out[k++].addr = addr;
  }
  prog->syms = out;
  prog->nsyms = k;
  return HCQ_OK;
}

/* Header checks common to every file type; fills f->sh when there are section headers. A 32-bit Arm file is
 * widened first (*out_owned: the widened copy, to free). */
static hcq_status check_header(cpu_elf_file *f, uint8_t **out_owned) {
  if (f->size_B < EI_NIDENT || memcmp(f->data, ELFMAG, SELFMAG) != 0)
    return hcq_status_make(HCQ_CODE_INVALID, "not an ELF file (bad magic, %zu bytes)", f->size_B);
  if (f->size_B < 20) return hcq_status_make(HCQ_CODE_INVALID, "truncated ELF header (%zu bytes)", f->size_B);
  /* e_machine sits at offset 18 in both ELF classes: report a foreign machine before anything else */
  uint16_t machine;
  memcpy(&machine, f->data + 18, 2);
  if (f->data[EI_DATA] == ELFDATA2MSB) machine = (uint16_t)((machine >> 8) | (machine << 8));
  if (machine != cpu_host_machine()) {
    char want[32];
    snprintf(want, sizeof want, "%s", cpu_machine_name(cpu_host_machine()));
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "ELF is for %s, this host is %s", cpu_machine_name(machine), want);
  }
  if (f->data[EI_DATA] != ELFDATA2LSB)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "ELF data encoding %u is not little-endian", f->data[EI_DATA]);
  if (f->data[EI_CLASS] == ELFCLASS32 && machine == EM_ARM) {
    HCQ_TRY(cpu_elf32_widen(f, out_owned));
  } else if (f->data[EI_CLASS] != ELFCLASS64) {
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "ELF class %u is not supported for %s", f->data[EI_CLASS],
                           cpu_machine_name(machine));
  } else if (f->size_B < sizeof(Elf64_Ehdr)) {
    return hcq_status_make(HCQ_CODE_INVALID, "truncated ELF header (%zu bytes, need %zu)", f->size_B,
                           sizeof(Elf64_Ehdr));
  }
  const Elf64_Ehdr *eh = f->eh;
  if (eh->e_version != EV_CURRENT || f->data[EI_VERSION] != EV_CURRENT)
    return hcq_status_make(HCQ_CODE_INVALID, "ELF version %u is not EV_CURRENT", eh->e_version);
  f->shnum = 0;
  f->sh = NULL;
  if (eh->e_shoff != 0) {
    if (eh->e_shentsize != sizeof(Elf64_Shdr))
      return hcq_status_make(HCQ_CODE_INVALID, "bad e_shentsize %u (expected %zu)", eh->e_shentsize,
                             sizeof(Elf64_Shdr));
    if (eh->e_shnum == 0)
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "extended section numbering (e_shnum 0) is not supported");
    if (eh->e_shoff % 8 || !cpu_elf_in_file(f, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)))
      return hcq_status_make(HCQ_CODE_INVALID, "section headers at 0x%llx (%u x %zu bytes) lie outside the file (%zu bytes)",
                             (unsigned long long)eh->e_shoff, eh->e_shnum, sizeof(Elf64_Shdr), f->size_B);
    if (eh->e_shstrndx == SHN_UNDEF || eh->e_shstrndx >= eh->e_shnum)
      return hcq_status_make(HCQ_CODE_INVALID, "section name table index %u out of range (%u sections)",
                             eh->e_shstrndx, eh->e_shnum);
    f->sh = (const Elf64_Shdr *)(f->data + eh->e_shoff);
    f->shnum = eh->e_shnum;
  }
  return HCQ_OK;
}

hcq_status cpu_program_load(const void *elf, size_t size_B, cpu_program **out_prog) {
  if (!out_prog || (!elf && size_B)) return hcq_status_make(HCQ_CODE_INVALID, "cpu_program_load: NULL argument");
  *out_prog = NULL;
  /* The headers are read in place: require the alignment of Elf64 structures (ELF32 files are widened). */
  void *copy = NULL;
  if ((uintptr_t)elf % 8) {
    copy = malloc(size_B ? size_B : 1);
    if (!copy) return hcq_status_make(HCQ_CODE_NOMEM, "cpu_program_load: copy of %zu bytes", size_B);
    memcpy(copy, elf, size_B);
    elf = copy;
  }
  cpu_elf_file f = {.data = elf, .size_B = size_B, .eh = elf};
  cpu_program *prog = NULL;
  uint8_t *widened = NULL;
  hcq_status st = check_header(&f, &widened);
  if (st) goto done;
  prog = calloc(1, sizeof *prog);
  if (!prog) {
    st = hcq_status_make(HCQ_CODE_NOMEM, "cpu_program");
    goto done;
  }
  switch (f.eh->e_type) {
  case ET_REL: st = cpu_elf_load_rel(&f, prog); break;
  case ET_EXEC:
  case ET_DYN: st = cpu_elf_load_image(&f, prog); break;
  default: st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "ELF type %u is not loadable (want ET_REL, ET_EXEC or ET_DYN)",
                                f.eh->e_type);
  }
done:
  free(widened);
  free(copy);
  if (st) {
    cpu_program_destroy(prog);
    return hcq_status_annotate(st, "ELF load");
  }
  *out_prog = prog;
  return HCQ_OK;
}

hcq_status cpu_program_symbol(const cpu_program *prog, const char *name, void **out_addr) {
  if (!prog || !name || !out_addr) return hcq_status_make(HCQ_CODE_INVALID, "cpu_program_symbol: NULL argument");
  *out_addr = NULL;
  for (size_t i = 0; i < prog->nsyms; i++)
    if (strcmp(prog->syms[i].name, name) == 0) {
      *out_addr = (void *)(uintptr_t)prog->syms[i].addr;
      return HCQ_OK;
    }
  return hcq_status_make(HCQ_CODE_NOT_FOUND, "symbol '%s' is not defined in the program", name);
}

void *cpu_program_entry(const cpu_program *prog) { return prog ? prog->entry : NULL; }
void *cpu_program_base(const cpu_program *prog) { return prog ? prog->base : NULL; }
size_t cpu_program_size_B(const cpu_program *prog) { return prog ? prog->size_B : 0; }

void cpu_program_destroy(cpu_program *prog) {
  if (!prog) return;
  if (prog->base) cpu_free(prog->base, prog->size_B);
  for (size_t i = 0; i < prog->nsyms; i++) free(prog->syms[i].name);
  free(prog->syms);
  free(prog);
}
