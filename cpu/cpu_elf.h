/* cpu_elf: hcq's own ELF loader for CPU kernels.
 *
 * Accepts, for the host machine (x86_64, aarch64, or armhf: 32-bit little-endian EM_ARM, Arm or Thumb-2 code,
 * read through a widened 64-bit view, see cpu_elf32.c):
 *  - relocatable objects (ET_REL) as produced by
 *      cc -c -O2 -fPIC -ffreestanding -fno-builtin -nostdlib -fno-stack-protector -fno-asynchronous-unwind-tables
 *    All SHF_ALLOC sections are laid out in ONE mapping (so 32-bit and 26-bit PC-relative reach always suffices):
 *    code, then trampolines  | read-only data, then the GOT |  writable data, .bss and COMMON symbols.
 *  - images linked with linker_scripts/cpu_kernel.ld (ET_DYN or ET_EXEC, position independent): each PT_LOAD is
 *    copied to base + p_vaddr; the only dynamic relocations allowed are R_*_RELATIVE (no imports).
 * Memory is W^X: the mapping is filled and relocated read-write, then code becomes read+execute, read-only data
 * read-only, and the instruction cache is flushed where the architecture needs it.
 *
 * Built-ins: kernels must import nothing, but compilers emit calls to memcpy, memset, memmove and memcmp even in
 * freestanding code (big struct copies / zeroing). An undefined symbol with one of those four names is resolved
 * to the host C library's function through a trampoline inside the mapping; any other undefined symbol is an
 * error that names it. An undefined WEAK symbol resolves to 0.
 *
 * Every malformed input (truncated file, offsets outside the file, bad entry sizes, string indices out of range,
 * absurd sizes or alignments, a foreign machine) is an error status, never a crash. */
#ifndef HCQ_CPU_ELF_H
#define HCQ_CPU_ELF_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

typedef struct cpu_program cpu_program;

/* Upper bounds that make a file "absurd" rather than merely large. */
#define CPU_ELF_MAX_IMAGE_B ((uint64_t)1 << 30)
#define CPU_ELF_MAX_ALIGN_B ((uint64_t)1 << 21)

/* Load an ELF file held in memory (the caller keeps ownership of `elf`; it may be freed after the call). */
hcq_status cpu_program_load(const void *elf, size_t size_B, cpu_program **out_prog);
/* Look up a defined symbol (function or data) by name; a HCQ_CODE_NOT_FOUND error names it. */
hcq_status cpu_program_symbol(const cpu_program *prog, const char *name, void **out_addr);
/* The ELF entry point of a linked image (e_entry + load bias); NULL for relocatable objects. */
void *cpu_program_entry(const cpu_program *prog);
/* The mapping (for diagnostics and tests). */
void *cpu_program_base(const cpu_program *prog);
size_t cpu_program_size_B(const cpu_program *prog);
void cpu_program_destroy(cpu_program *prog);

#endif
