/* Shared between the ELF loader's files (cpu_elf.c: header checks, symbols, lifetime; cpu_elf_rel.c: ET_REL;
 * cpu_elf_image.c: linked images). Not a public API. Parsing and validation are elf/elf.h's; the headers reach the
 * loader widened to their 64-bit form whatever the file's class. */
#ifndef HCQ_CPU_ELF_INTERNAL_H
#define HCQ_CPU_ELF_INTERNAL_H

#include <stdbool.h>

#include "cpu/cpu_elf.h"
#include "elf/elf.h"

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

/* The input file: the elf/ view plus every section header, checked by elf_section_get (contents inside the file,
 * names readable). */
typedef struct cpu_elf_file {
  elf_file ef;
  const Elf64_Ehdr *eh; /* &ef.eh */
  Elf64_Shdr *sh;       /* owned; NULL when the file has no section headers */
  size_t shnum;
} cpu_elf_file;

/* Section name for messages: never NULL. */
static inline const char *cpu_elf_section_name(const cpu_elf_file *f, size_t i) { return elf_section_name(&f->ef, i); }
/* Append the defined named symbols of symbol table `t`; addr_of maps a symbol to its run-time address
 * (returning false to skip it). */
hcq_status cpu_elf_collect_symbols(cpu_program *prog, const elf_table *t,
                                   bool (*addr_of)(void *ctx, size_t index, const Elf64_Sym *s, uint64_t *out), void *ctx);

hcq_status cpu_elf_load_rel(const cpu_elf_file *f, cpu_program *prog);
hcq_status cpu_elf_load_image(const cpu_elf_file *f, cpu_program *prog);

static inline uint64_t cpu_elf_align_up(uint64_t x, uint64_t a) { return (x + a - 1) & ~(a - 1); }

#endif
