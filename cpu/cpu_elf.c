/* cpu_elf: ELF header validation, dispatch by file type, symbol lookup and program lifetime. */
#include "cpu/cpu_elf_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_mem.h"
#include "cpu/cpu_reloc.h"

hcq_status cpu_elf_collect_symbols(cpu_program *prog, const elf_table *t,
                                   bool (*addr_of)(void *ctx, size_t index, const Elf64_Sym *s, uint64_t *out), void *ctx) {
  size_t n = t->count;
  cpu_elf_sym *out = calloc(n ? n : 1, sizeof *out);
  if (!out) return hcq_status_make(HCQ_CODE_NOMEM, "symbol table of %zu entries", n);
  size_t k = 0;
  for (size_t i = 1; i < n; i++) {
    Elf64_Sym s;
    elf_sym_at(t, i, &s);
    int type = ELF64_ST_TYPE(s.st_info);
    if (s.st_shndx == SHN_UNDEF || s.st_name == 0) continue;
    if (type != STT_FUNC && type != STT_OBJECT && type != STT_NOTYPE) continue;
    const char *name = elf_string(t->f, t->strsec, s.st_name);
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

/* Header checks common to every file type (through elf_open), then every section header, checked and widened. */
static hcq_status open_file(cpu_elf_file *f, const void *data, size_t size_B) {
  const uint8_t *d = data;
  if (size_B < EI_NIDENT || memcmp(d, ELFMAG, SELFMAG) != 0)
    return hcq_status_make(HCQ_CODE_INVALID, "not an ELF file (bad magic, %zu bytes)", size_B);
  if (size_B < 20) return hcq_status_make(HCQ_CODE_INVALID, "truncated ELF header (%zu bytes)", size_B);
  /* e_machine sits at offset 18 in both ELF classes: report a foreign machine before anything else */
  uint16_t machine;
  memcpy(&machine, d + 18, 2);
  if (d[EI_DATA] == ELFDATA2MSB) machine = (uint16_t)((machine >> 8) | (machine << 8));
  if (machine != cpu_host_machine()) {
    char want[32];
    snprintf(want, sizeof want, "%s", cpu_machine_name(cpu_host_machine()));
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "ELF is for %s, this host is %s", cpu_machine_name(machine), want);
  }
  HCQ_TRY(elf_open(&f->ef, data, size_B));
  f->eh = &f->ef.eh;
  /* 32-bit files only for 32-bit Arm (armhf); every other host takes ELF64 */
  uint8_t want_class = machine == EM_ARM ? ELFCLASS32 : ELFCLASS64;
  if (f->ef.elfclass != want_class)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "ELF class %u is not supported for %s", f->ef.elfclass,
                           cpu_machine_name(machine));
  if (!f->ef.shnum) return HCQ_OK;
  f->sh = calloc(f->ef.shnum, sizeof *f->sh);
  if (!f->sh) return hcq_status_make(HCQ_CODE_NOMEM, "%zu section headers", f->ef.shnum);
  f->shnum = f->ef.shnum;
  for (size_t i = 0; i < f->shnum; i++) {
    elf_section s;
    HCQ_TRY(elf_section_get(&f->ef, i, &s));
    f->sh[i] = s.sh;
  }
  return HCQ_OK;
}

hcq_status cpu_program_load(const void *elf, size_t size_B, cpu_program **out_prog) {
  if (!out_prog || (!elf && size_B)) return hcq_status_make(HCQ_CODE_INVALID, "cpu_program_load: NULL argument");
  *out_prog = NULL;
  cpu_elf_file f = {0};
  cpu_program *prog = NULL;
  hcq_status st = open_file(&f, elf, size_B);
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
  free(f.sh);
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
