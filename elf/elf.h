/* elf: a validated, read-only view of an ELF file held in memory (ELF32 and ELF64, little-endian).
 *
 * Shared by the CPU loader (cpu/cpu_elf*.c), AMD code objects (amd/amd_code_object.c) and NVIDIA cubins
 * (nv/nv_cubin.c). Nothing is allocated and nothing is copied: the views point into the caller's buffer, which must
 * outlive them. Entries are read with memcpy (the buffer needs no alignment) and handed out in their 64-bit form
 * (Elf64_Shdr, Elf64_Sym, Elf64_Rela, ...) whatever the file's class, so callers have one code path; an ELF32
 * REL entry reads as an Elf64_Rela with r_addend 0 (its addend is implicit, in the place).
 *
 * Every offset, size, entry size, index and alignment is checked (overflow-safe) before use; a bad one is an
 * hcq_status naming what and where (section index and name, offset). Layout and constants: the System V gABI
 * ("ELF-64 Object File Format" / gABI chapter 4, https://www.sco.com/developers/gabi/latest/contents.html) through
 * the system <elf.h>. */
#ifndef HCQ_ELF_H
#define HCQ_ELF_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

typedef struct elf_file {
  const uint8_t *data;
  size_t size_B;
  uint8_t elfclass; /* ELFCLASS32 or ELFCLASS64 */
  Elf64_Ehdr eh;    /* the file header, widened */
  size_t shnum;     /* 0 when the file has no section headers */
  size_t phnum;     /* 0 when the file has no program headers */
} elf_file;

/* A section: its header (widened), its name ("" when it has none) and its contents in the file (NULL for
 * SHT_NOBITS and SHT_NULL; otherwise [data, data + sh_size) lies inside the file). */
typedef struct elf_section {
  size_t index;
  const char *name;
  Elf64_Shdr sh;
  const uint8_t *data;
} elf_section;

/* A table of fixed-size entries inside the file (symbols, relocations, dynamic entries). */
typedef struct elf_table {
  const elf_file *f;
  const uint8_t *data;
  size_t count;
  size_t entsize_B; /* the file's entry size (class-dependent) */
  uint32_t type;    /* SHT_SYMTAB, SHT_DYNSYM, SHT_REL, SHT_RELA or SHT_DYNAMIC */
  size_t section;   /* the section it came from (0 for PT_DYNAMIC) */
  size_t strsec;    /* symbol tables: the linked string table */
} elf_table;

/* One note (gABI "Note Section"): name without its NUL, descriptor bytes. */
typedef struct elf_note {
  uint32_t type;
  const char *name;
  size_t namesz; /* characters before the terminating NUL */
  const uint8_t *desc;
  size_t descsz;
} elf_note;

typedef struct elf_note_iter {
  const uint8_t *data;
  size_t size_B, pos, align;
  const char *where; /* for messages: the section or segment name */
} elf_note_iter;

/* Check the file header and where the section and program header tables lie. Any machine and type. */
hcq_status elf_open(elf_file *f, const void *data, size_t size_B);

/* Section i < shnum (0 is the null section). Errors name the index and the section's name. */
hcq_status elf_section_get(const elf_file *f, size_t i, elf_section *out);
/* The first section with this name; HCQ_CODE_NOT_FOUND names it. */
hcq_status elf_section_find(const elf_file *f, const char *name, elf_section *out);
/* The section's name for messages: never NULL ("?" when unreadable). */
const char *elf_section_name(const elf_file *f, size_t i);
/* The NUL-terminated string at `index` of string table section `strsec`, or NULL when out of range. */
const char *elf_string(const elf_file *f, size_t strsec, uint64_t index);

/* Program header `i` and its file bytes (*out_data NULL when p_filesz is 0); p_filesz <= p_memsz is checked. */
hcq_status elf_segment_get(const elf_file *f, size_t i, Elf64_Phdr *out, const uint8_t **out_data);

/* Tables. A symbol table (SHT_SYMTAB / SHT_DYNSYM) must link a string table; a relocation table (SHT_REL /
 * SHT_RELA) must name a section it applies to (sh_info < shnum). The entry size must be the class's. */
hcq_status elf_table_open(const elf_file *f, size_t section, elf_table *out);
/* The first section of this type as a table; HCQ_CODE_NOT_FOUND when there is none. */
hcq_status elf_table_find(const elf_file *f, uint32_t type, elf_table *out);
/* PT_DYNAMIC contents (`ph` from elf_segment_get) as a table of dynamic entries. */
hcq_status elf_table_dynamic(const elf_file *f, const Elf64_Phdr *ph, elf_table *out);

/* Entry i < t->count, widened. */
void elf_sym_at(const elf_table *t, size_t i, Elf64_Sym *out);
void elf_rela_at(const elf_table *t, size_t i, Elf64_Rela *out);
void elf_dyn_at(const elf_table *t, size_t i, Elf64_Dyn *out);
/* Symbol i with its name checked (*out_name "" for an unnamed one). */
hcq_status elf_symbol(const elf_table *t, size_t i, Elf64_Sym *out, const char **out_name);
/* The first symbol with this name; HCQ_CODE_NOT_FOUND names it. */
hcq_status elf_symbol_find(const elf_table *t, const char *name, Elf64_Sym *out, size_t *out_index);

/* Notes of a section or segment's bytes: 4-byte alignment unless align_B is 8 (gABI; 8 for
 * sh_addralign/p_align 8). elf_note_next sets *out_done at the end; a malformed note is an error naming its offset. */
void elf_notes_begin(elf_note_iter *it, const uint8_t *data, size_t size_B, uint64_t align_B, const char *where);
hcq_status elf_note_next(elf_note_iter *it, elf_note *out, bool *out_done);

/* Is [off, off + len) inside [0, size)? (overflow-safe) */
static inline bool elf_in_range(uint64_t size, uint64_t off, uint64_t len) { return off <= size && len <= size - off; }

#endif
