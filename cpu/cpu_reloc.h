/* cpu_reloc: applying one ELF relocation for the CPU loader, per architecture.
 *
 * Kept apart from ELF parsing so the encodings can be unit-tested on any host (an aarch64 CALL26 is patched
 * into a plain buffer on x86_64). The loader computes the addresses; these functions only check range and
 * write bits. 32-bit Arm (EM_ARM) relocations come from SHT_REL tables: their addend is implicit (read from the
 * patched field) and added to A, which the loader sets to 0 when it widens REL entries. */
#ifndef HCQ_CPU_RELOC_H
#define HCQ_CPU_RELOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

typedef struct cpu_reloc {
  uint32_t type;   /* R_X86_64_*, R_AARCH64_* or R_ARM_* */
  uint8_t *loc;    /* where to write (a writable view of P) */
  size_t avail_B;  /* bytes of the target section from loc to its end */
  uint64_t P;      /* run-time address of the place */
  uint64_t S;      /* run-time address of the symbol */
  int64_t A;       /* addend */
  uint64_t G;      /* run-time address of the GOT slot that holds S (GOT relocations only) */
  uint64_t GOT;    /* run-time address of the GOT origin, _GLOBAL_OFFSET_TABLE_ (Arm GOT-relative types) */
  bool tramp;      /* S is a loader trampoline (cpu_reloc_write_tramp); on EM_ARM it has an Arm entry at S and a
                      Thumb entry at S + 8, and a branch that cannot switch state takes the one of its own state */
} cpu_reloc;

/* Apply one relocation for an architecture (e_machine EM_X86_64, EM_AARCH64 or EM_ARM). Errors: an unknown or unhandled
 * type (named with its number and name), a value out of the field's range, a place too close to the section end. */
hcq_status cpu_reloc_apply(uint16_t machine, const cpu_reloc *r);
hcq_status cpu_reloc_apply_x86_64(const cpu_reloc *r);
hcq_status cpu_reloc_apply_aarch64(const cpu_reloc *r);
hcq_status cpu_reloc_apply_arm(const cpu_reloc *r);

/* Does this relocation type address a GOT slot (so the loader must build one for its symbol)? */
bool cpu_reloc_uses_got(uint16_t machine, uint32_t type);
/* Is this relocation type known to need no action (R_*_NONE)? */
bool cpu_reloc_is_none(uint16_t machine, uint32_t type);

/* "R_X86_64_GOTTPOFF" for a type defined in <elf.h>, "unknown" otherwise. */
const char *cpu_reloc_type_name(uint16_t machine, uint32_t type);

/* A jump stub to an absolute address (for calls from a kernel to a loader built-in like memcpy, which lives
 * too far away for a 32-bit or 26-bit displacement). cpu_reloc_tramp_size is 0 for an unsupported machine.
 * EM_ARM: 16 bytes, an Arm stub then a Thumb stub (B and B.W tail calls cannot switch state). */
size_t cpu_reloc_tramp_size(uint16_t machine);
void cpu_reloc_write_tramp(uint16_t machine, uint8_t *loc, uint64_t target);

/* Machine name for messages ("x86_64", "aarch64", "arm", "EM_123"); the e_machine of this host. */
const char *cpu_machine_name(uint16_t machine);
uint16_t cpu_host_machine(void);

#endif
