/* aarch64 relocations for the CPU loader (ELF for the Arm 64-bit Architecture: S, A, P, G, Page(x) = x & ~0xfff).
 * Instruction fields are cleared before the new value is written. */
#include <elf.h>
#include <string.h>

#include "cpu/cpu_reloc.h"

static hcq_status too_short(const cpu_reloc *r, size_t width) {
  return hcq_status_make(HCQ_CODE_INVALID, "%s at 0x%llx: needs %zu bytes, the section has %zu left",
                         cpu_reloc_type_name(EM_AARCH64, r->type), (unsigned long long)r->P, width, r->avail_B);
}

static hcq_status out_of_range(const cpu_reloc *r, int64_t v) {
  return hcq_status_make(HCQ_CODE_INVALID, "%s at 0x%llx: value 0x%llx does not fit the field",
                         cpu_reloc_type_name(EM_AARCH64, r->type), (unsigned long long)r->P, (unsigned long long)v);
}

/* Replace bits [lo, lo+width) of the instruction word at the place with `field`. */
static hcq_status patch_insn(const cpu_reloc *r, unsigned lo, unsigned width, uint64_t field) {
  if (r->avail_B < 4) return too_short(r, 4);
  uint32_t insn, mask = (uint32_t)(((1ull << width) - 1) << lo);
  memcpy(&insn, r->loc, 4);
  insn = (insn & ~mask) | ((uint32_t)(field << lo) & mask);
  memcpy(r->loc, &insn, 4);
  return HCQ_OK;
}

static bool fits_signed(int64_t v, unsigned bits) {
  return v >= -(1ll << (bits - 1)) && v < (1ll << (bits - 1));
}

/* ADR/ADRP immediate: immlo in bits 30:29, immhi in bits 23:5. */
static hcq_status patch_adr(const cpu_reloc *r, int64_t imm21) {
  hcq_status st = patch_insn(r, 29, 2, (uint64_t)imm21 & 3);
  if (st) return st;
  return patch_insn(r, 5, 19, ((uint64_t)imm21 >> 2) & 0x7ffff);
}

/* page delta in pages, computed unsigned (wraps instead of overflowing on hostile inputs) */
static int64_t page_delta(uint64_t x, uint64_t p) { return (int64_t)((x & ~0xfffull) - (p & ~0xfffull)) >> 12; }

hcq_status cpu_reloc_apply_aarch64(const cpu_reloc *r) {
  uint64_t SA = r->S + (uint64_t)r->A;
  int64_t rel = (int64_t)(SA - r->P);
  switch (r->type) {
  case R_AARCH64_NONE: return HCQ_OK;
  case R_AARCH64_ABS64:
  case R_AARCH64_PREL64: {
    if (r->avail_B < 8) return too_short(r, 8);
    uint64_t v = r->type == R_AARCH64_ABS64 ? SA : (uint64_t)rel;
    memcpy(r->loc, &v, 8);
    return HCQ_OK;
  }
  case R_AARCH64_ABS32:
  case R_AARCH64_PREL32: {
    if (r->avail_B < 4) return too_short(r, 4);
    int64_t v = r->type == R_AARCH64_ABS32 ? (int64_t)SA : rel;
    /* ABS32 accepts signed or unsigned 32-bit values; PREL32 only signed */
    if (r->type == R_AARCH64_ABS32 ? (v < INT32_MIN || (uint64_t)v > UINT32_MAX) : !fits_signed(v, 32))
      return out_of_range(r, v);
    uint32_t w = (uint32_t)v;
    memcpy(r->loc, &w, 4);
    return HCQ_OK;
  }
  case R_AARCH64_CALL26:
  case R_AARCH64_JUMP26:
    if (!fits_signed(rel, 28) || (rel & 3)) return out_of_range(r, rel);
    return patch_insn(r, 0, 26, (uint64_t)rel >> 2);
  case R_AARCH64_CONDBR19:
    if (!fits_signed(rel, 21) || (rel & 3)) return out_of_range(r, rel);
    return patch_insn(r, 5, 19, (uint64_t)rel >> 2);
  case R_AARCH64_TSTBR14:
    if (!fits_signed(rel, 16) || (rel & 3)) return out_of_range(r, rel);
    return patch_insn(r, 5, 14, (uint64_t)rel >> 2);
  case R_AARCH64_ADR_PREL_LO21:
    if (!fits_signed(rel, 21)) return out_of_range(r, rel);
    return patch_adr(r, rel);
  case R_AARCH64_ADR_PREL_PG_HI21:
  case R_AARCH64_ADR_PREL_PG_HI21_NC: {
    int64_t pages = page_delta(SA, r->P);
    if (r->type == R_AARCH64_ADR_PREL_PG_HI21 && !fits_signed(pages, 21)) return out_of_range(r, pages);
    return patch_adr(r, pages);
  }
  case R_AARCH64_ADR_GOT_PAGE: {
    int64_t pages = page_delta(r->G, r->P);
    if (!fits_signed(pages, 21)) return out_of_range(r, pages);
    return patch_adr(r, pages);
  }
  case R_AARCH64_ADD_ABS_LO12_NC: return patch_insn(r, 10, 12, SA & 0xfff);
  case R_AARCH64_LDST8_ABS_LO12_NC: return patch_insn(r, 10, 12, SA & 0xfff);
  case R_AARCH64_LDST16_ABS_LO12_NC: return patch_insn(r, 10, 12, (SA & 0xfff) >> 1);
  case R_AARCH64_LDST32_ABS_LO12_NC: return patch_insn(r, 10, 12, (SA & 0xfff) >> 2);
  case R_AARCH64_LDST64_ABS_LO12_NC: return patch_insn(r, 10, 12, (SA & 0xfff) >> 3);
  case R_AARCH64_LDST128_ABS_LO12_NC: return patch_insn(r, 10, 12, (SA & 0xfff) >> 4);
  case R_AARCH64_LD64_GOT_LO12_NC: return patch_insn(r, 10, 12, (r->G & 0xfff) >> 3);
  case R_AARCH64_MOVW_UABS_G0:
  case R_AARCH64_MOVW_UABS_G0_NC:
  case R_AARCH64_MOVW_UABS_G1:
  case R_AARCH64_MOVW_UABS_G1_NC:
  case R_AARCH64_MOVW_UABS_G2:
  case R_AARCH64_MOVW_UABS_G2_NC:
  case R_AARCH64_MOVW_UABS_G3: {
    /* G0=263, G0_NC=264, ..., G3=269: group = (type - 263) / 2; odd offsets are the unchecked _NC forms */
    unsigned group = (r->type - R_AARCH64_MOVW_UABS_G0) / 2;
    bool checked = ((r->type - R_AARCH64_MOVW_UABS_G0) % 2) == 0 && group < 3;
    if (checked && (SA >> (16 * (group + 1))) != 0) return out_of_range(r, (int64_t)SA);
    return patch_insn(r, 5, 16, (SA >> (16 * group)) & 0xffff);
  }
  default:
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "unsupported aarch64 relocation type %u (%s) at 0x%llx", r->type,
                           cpu_reloc_type_name(EM_AARCH64, r->type), (unsigned long long)r->P);
  }
}
