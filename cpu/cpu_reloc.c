/* cpu_reloc: per-machine dispatch, trampolines and machine names. */
#include "cpu/cpu_reloc.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>

hcq_status cpu_reloc_apply(uint16_t machine, const cpu_reloc *r) {
  switch (machine) {
  case EM_X86_64: return cpu_reloc_apply_x86_64(r);
  case EM_AARCH64: return cpu_reloc_apply_aarch64(r);
  case EM_ARM: return cpu_reloc_apply_arm(r);
  default:
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "relocations for %s are not supported", cpu_machine_name(machine));
  }
}

bool cpu_reloc_uses_got(uint16_t machine, uint32_t type) {
  if (machine == EM_X86_64)
    return type == R_X86_64_GOTPCREL || type == R_X86_64_GOTPCRELX || type == R_X86_64_REX_GOTPCRELX;
  if (machine == EM_AARCH64) return type == R_AARCH64_ADR_GOT_PAGE || type == R_AARCH64_LD64_GOT_LO12_NC;
  if (machine == EM_ARM) return type == 26 /* R_ARM_GOT_BREL */ || type == R_ARM_GOT_PREL;
  return false;
}

bool cpu_reloc_is_none(uint16_t machine, uint32_t type) {
  return (machine == EM_X86_64 && type == R_X86_64_NONE) || (machine == EM_AARCH64 && type == R_AARCH64_NONE) ||
         (machine == EM_ARM && (type == R_ARM_NONE || type == R_ARM_V4BX));
}

size_t cpu_reloc_tramp_size(uint16_t machine) {
  return machine == EM_X86_64 || machine == EM_AARCH64 || machine == EM_ARM ? 16 : 0;
}

void cpu_reloc_write_tramp(uint16_t machine, uint8_t *loc, uint64_t target) {
  if (machine == EM_X86_64) {
    /* jmp *0(%rip) ; .quad target ; two bytes of int3 padding */
    static const uint8_t jmp[6] = {0xff, 0x25, 0, 0, 0, 0};
    memcpy(loc, jmp, 6);
    memcpy(loc + 6, &target, 8);
    loc[14] = loc[15] = 0xcc;
  } else if (machine == EM_AARCH64) {
    /* ldr x16, #8 ; br x16 ; .quad target   (x16 is the intra-procedure-call scratch register) */
    uint32_t ldr = 0x58000050u, br = 0xd61f0200u;
    memcpy(loc, &ldr, 4);
    memcpy(loc + 4, &br, 4);
    memcpy(loc + 8, &target, 8);
  } else if (machine == EM_ARM) {
    /* +0 Arm state: ldr pc, [pc, #-4] ; .word target    +8 Thumb state: ldr.w pc, [pc, #0] ; .word target
     * (a load to pc interworks: a Thumb target keeps bit 0; Thumb pc reads as +4, and +8 is word aligned) */
    uint32_t ldr = 0xe51ff004u, addr = (uint32_t)target;
    uint16_t tldr[2] = {0xf8df, 0xf000};
    memcpy(loc, &ldr, 4);
    memcpy(loc + 4, &addr, 4);
    memcpy(loc + 8, tldr, 4);
    memcpy(loc + 12, &addr, 4);
  }
}

const char *cpu_machine_name(uint16_t machine) {
  switch (machine) {
  case EM_X86_64: return "x86_64";
  case EM_AARCH64: return "aarch64";
  case EM_ARM: return "arm";
  case EM_386: return "i386";
  case EM_RISCV: return "riscv";
  case EM_AMDGPU: return "amdgpu";
  case EM_CUDA: return "cuda";
  default: {
    static __thread char buf[24];
    snprintf(buf, sizeof buf, "EM_%u", (unsigned)machine);
    return buf;
  }
  }
}

uint16_t cpu_host_machine(void) {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#elif defined(__arm__)
  return EM_ARM;
#else
  return EM_NONE;
#endif
}
