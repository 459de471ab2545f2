/* x86_64 relocations for the CPU loader (psABI names: S symbol, A addend, P place, G GOT slot address). */
#include <elf.h>
#include <string.h>

#include "cpu/cpu_reloc.h"

static hcq_status too_short(const cpu_reloc *r, size_t width) {
  return hcq_status_make(HCQ_CODE_INVALID, "%s at 0x%llx: needs %zu bytes, the section has %zu left",
                         cpu_reloc_type_name(EM_X86_64, r->type), (unsigned long long)r->P, width, r->avail_B);
}

static hcq_status out_of_range(const cpu_reloc *r, int64_t v, const char *hint) {
  return hcq_status_make(HCQ_CODE_INVALID, "%s at 0x%llx: value 0x%llx does not fit the field%s",
                         cpu_reloc_type_name(EM_X86_64, r->type), (unsigned long long)r->P, (unsigned long long)v,
                         hint);
}

static hcq_status put32s(const cpu_reloc *r, int64_t v, const char *hint) {
  if (r->avail_B < 4) return too_short(r, 4);
  if (v < INT32_MIN || v > INT32_MAX) return out_of_range(r, v, hint);
  int32_t w = (int32_t)v;
  memcpy(r->loc, &w, 4);
  return HCQ_OK;
}

hcq_status cpu_reloc_apply_x86_64(const cpu_reloc *r) {
  /* unsigned arithmetic wraps (no UB on hostile inputs); the range checks look at the signed result */
  uint64_t S = r->S, A = (uint64_t)r->A, P = r->P;
  switch (r->type) {
  case R_X86_64_NONE: return HCQ_OK;
  case R_X86_64_64: {
    if (r->avail_B < 8) return too_short(r, 8);
    uint64_t v = S + A;
    memcpy(r->loc, &v, 8);
    return HCQ_OK;
  }
  case R_X86_64_PC64: {
    if (r->avail_B < 8) return too_short(r, 8);
    uint64_t v = S + A - P;
    memcpy(r->loc, &v, 8);
    return HCQ_OK;
  }
  case R_X86_64_PC32:
  case R_X86_64_PLT32: /* calls resolve directly: every callee is in the same mapping (or a trampoline) */
    return put32s(r, (int64_t)(S + A - P), " (the image is one mapping; is the target far away?)");
  case R_X86_64_GOTPCREL:
  case R_X86_64_GOTPCRELX:
  case R_X86_64_REX_GOTPCRELX: /* always through a real GOT slot; no instruction relaxation */
    return put32s(r, (int64_t)(r->G + A - P), "");
  case R_X86_64_32: {
    if (r->avail_B < 4) return too_short(r, 4);
    uint64_t v = S + A;
    if (v > UINT32_MAX) return out_of_range(r, (int64_t)v, " (absolute 32-bit address: compile with -fPIC)");
    uint32_t w = (uint32_t)v;
    memcpy(r->loc, &w, 4);
    return HCQ_OK;
  }
  case R_X86_64_32S: return put32s(r, (int64_t)(S + A), " (absolute 32-bit address: compile with -fPIC)");
  default:
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "unsupported x86_64 relocation type %u (%s) at 0x%llx", r->type,
                           cpu_reloc_type_name(EM_X86_64, r->type), (unsigned long long)r->P);
  }
}
