/* Shared between the ELF loader's files (cpu_elf.c: header checks, symbols, lifetime; cpu_elf_rel.c: ET_REL;
 * cpu_elf_image.c: linked images). Not a public API. */
#ifndef HCQ_CPU_ELF_INTERNAL_H
#define HCQ_CPU_ELF_INTERNAL_H

#include <elf.h>
#include <stdbool.h>

#include "cpu/cpu_elf.h"

typedef struct cpu_elf_sym {
  char *name;
  uint64_t addr;
} cpu_elf_sym;

struct cpu_program {
  uint8_t *base;     /* from cpu_alloc */
  size_t size_B;     /* length of the mapping */
  void *entry;
  cpu_elf_sym *syms; /* defined, named symbols, for lookup */
  size_t nsyms;
};

/* A validated view of the input file. */
typedef struct cpu_elf_file {
  const uint8_t *data;
  size_t size_B;
  const Elf64_Ehdr *eh;
  const Elf64_Shdr *sh; /* NULL when e_shnum == 0 */
  size_t shnum;
} cpu_elf_file;

/* Is [off, off+len) inside the file? (overflow-safe) */
static inline bool cpu_elf_in_file(const cpu_elf_file *f, uint64_t off, uint64_t len) {
  return off <= f->size_B && len <= f->size_B - off;
}

/* NUL-terminated string at `index` of string-table section `strsec`, or NULL when out of range. */
const char *cpu_elf_str(const cpu_elf_file *f, size_t strsec, uint64_t index);
/* Section name for messages: never NULL. */
const char *cpu_elf_section_name(const cpu_elf_file *f, size_t i);
/* Check that section `i` has the given entry size and that its contents lie inside the file. */
hcq_status cpu_elf_check_table(const cpu_elf_file *f, size_t i, uint64_t entsize);
/* Append the defined named symbols of symbol table `symsec`; addr_of maps a symbol to its run-time address
 * (returning false to skip it). */
hcq_status cpu_elf_collect_symbols(cpu_program *prog, const cpu_elf_file *f, size_t symsec,
                                   bool (*addr_of)(void *ctx, size_t index, const Elf64_Sym *s, uint64_t *out), void *ctx);

/* A 32-bit little-endian file (armhf): replace f's data and header with a widened 64-bit view (cpu_elf32.c);
 * *out_owned is the new buffer, which the caller frees after loading. */
hcq_status cpu_elf32_widen(cpu_elf_file *f, uint8_t **out_owned);

hcq_status cpu_elf_load_rel(const cpu_elf_file *f, cpu_program *prog);
hcq_status cpu_elf_load_image(const cpu_elf_file *f, cpu_program *prog);

static inline uint64_t cpu_elf_align_up(uint64_t x, uint64_t a) { return (x + a - 1) & ~(a - 1); }

#endif
