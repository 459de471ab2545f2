/* 32-bit Arm (armhf) relocations for the CPU loader (ELF for the Arm Architecture, "AAELF").
 *
 * Arm objects use SHT_REL: the addend is implicit, stored in the field that the relocation patches (a data word,
 * a BL immediate, a MOVW/MOVT immediate). The loader widens REL entries to RELA with A = 0, so the addend used
 * here is r->A plus the implicit one decoded from the place. Addresses are 32 bits: arithmetic wraps mod 2^32.
 *
 * T is the Thumb bit: symbol addresses of Thumb functions carry bit 0 (the loader passes S with it). A call
 * between the instruction sets is turned into BLX (Arm BL -> BLX to Thumb code, Thumb BL -> BLX to Arm code);
 * a plain branch (JUMP24) cannot change state and is an error naming the cause.
 *
 * Thumb-2 32-bit instructions are two little-endian halfwords, the first one at the lower address. */
#include <elf.h>
#include <string.h>

#include "cpu/cpu_reloc.h"

/* Old <elf.h> names for the GOT relocations (AAELF calls them GOTOFF32, BASE_PREL, GOT_BREL). */
#ifndef R_ARM_GOTOFF32
#define R_ARM_GOTOFF32 24
#endif
#ifndef R_ARM_BASE_PREL
#define R_ARM_BASE_PREL 25
#endif
#ifndef R_ARM_GOT_BREL
#define R_ARM_GOT_BREL 26
#endif
#ifndef R_ARM_THM_CALL
#define R_ARM_THM_CALL 10 /* <elf.h>: R_ARM_THM_PC22 */
#endif

static hcq_status too_short(const cpu_reloc *r, size_t width) {
  return hcq_status_make(HCQ_CODE_INVALID, "%s at 0x%llx: needs %zu bytes, the section has %zu left",
                         cpu_reloc_type_name(EM_ARM, r->type), (unsigned long long)r->P, width, r->avail_B);
}

static hcq_status out_of_range(const cpu_reloc *r, int64_t v, const char *why) {
  return hcq_status_make(HCQ_CODE_INVALID, "%s at 0x%llx: value 0x%llx does not fit the field%s",
                         cpu_reloc_type_name(EM_ARM, r->type), (unsigned long long)r->P, (unsigned long long)v, why);
}

static uint32_t get32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static uint16_t get16(const uint8_t *p) {
  uint16_t v;
  memcpy(&v, p, 2);
  return v;
}
static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }

static int32_t sext(uint32_t v, unsigned bits) {
  uint32_t m = 1u << (bits - 1);
  return (int32_t)((v ^ m) - m);
}

static bool fits_signed(int32_t v, unsigned bits) { return v >= -(1 << (bits - 1)) && v < (1 << (bits - 1)); }

/* --- Arm (A32) fields --- */

/* MOVW/MOVT A1: imm16 = imm4 (19:16) : imm12 (11:0). */
static uint32_t a32_mov_imm(uint32_t insn) { return ((insn >> 4) & 0xf000) | (insn & 0xfff); }
static uint32_t a32_mov_set(uint32_t insn, uint32_t imm16) {
  return (insn & 0xfff0f000u) | ((imm16 & 0xf000) << 4) | (imm16 & 0xfff);
}

/* --- Thumb-2 (T32) fields; hw1 = first halfword, hw2 = second --- */

/* BL / BLX / B.W (T4): S (hw1 bit 10), imm10 (hw1 9:0), J1 (hw2 bit 13), J2 (hw2 bit 11), imm11 (hw2 10:0);
 * I1 = NOT(J1 XOR S), I2 = NOT(J2 XOR S); offset = SignExtend(S:I1:I2:imm10:imm11:0). */
static int32_t t32_branch_imm(uint16_t hw1, uint16_t hw2) {
  uint32_t s = (hw1 >> 10) & 1, j1 = (hw2 >> 13) & 1, j2 = (hw2 >> 11) & 1;
  uint32_t i1 = !(j1 ^ s), i2 = !(j2 ^ s);
  uint32_t v = (s << 24) | (i1 << 23) | (i2 << 22) | ((uint32_t)(hw1 & 0x3ff) << 12) | ((uint32_t)(hw2 & 0x7ff) << 1);
  return sext(v, 25);
}
static void t32_branch_set(uint16_t *hw1, uint16_t *hw2, int32_t off) {
  uint32_t v = (uint32_t)off;
  uint32_t s = (v >> 24) & 1, i1 = (v >> 23) & 1, i2 = (v >> 22) & 1;
  uint32_t j1 = !i1 ^ s, j2 = !i2 ^ s;
  *hw1 = (uint16_t)((*hw1 & 0xf800) | (s << 10) | ((v >> 12) & 0x3ff));
  *hw2 = (uint16_t)((*hw2 & 0xd000) | (j1 << 13) | (j2 << 11) | ((v >> 1) & 0x7ff));
}

/* B<cond>.W (T3): S (hw1 10), imm6 (hw1 5:0), J1 (hw2 13), J2 (hw2 11), imm11; offset = SignExtend(S:J2:J1:imm6:imm11:0). */
static int32_t t32_condbr_imm(uint16_t hw1, uint16_t hw2) {
  uint32_t v = ((uint32_t)((hw1 >> 10) & 1) << 20) | ((uint32_t)((hw2 >> 11) & 1) << 19) |
               ((uint32_t)((hw2 >> 13) & 1) << 18) | ((uint32_t)(hw1 & 0x3f) << 12) | ((uint32_t)(hw2 & 0x7ff) << 1);
  return sext(v, 21);
}
static void t32_condbr_set(uint16_t *hw1, uint16_t *hw2, int32_t off) {
  uint32_t v = (uint32_t)off;
  *hw1 = (uint16_t)((*hw1 & 0xfbc0) | (((v >> 20) & 1) << 10) | ((v >> 12) & 0x3f));
  *hw2 = (uint16_t)((*hw2 & 0xd000) | (((v >> 18) & 1) << 13) | (((v >> 19) & 1) << 11) | ((v >> 1) & 0x7ff));
}

/* MOVW/MOVT T3: imm16 = imm4 (hw1 3:0) : i (hw1 10) : imm3 (hw2 14:12) : imm8 (hw2 7:0). */
static uint32_t t32_mov_imm(uint16_t hw1, uint16_t hw2) {
  return ((uint32_t)(hw1 & 0xf) << 12) | ((uint32_t)((hw1 >> 10) & 1) << 11) | ((uint32_t)((hw2 >> 12) & 7) << 8) |
         (hw2 & 0xff);
}
static void t32_mov_set(uint16_t *hw1, uint16_t *hw2, uint32_t imm16) {
  *hw1 = (uint16_t)((*hw1 & 0xfbf0) | ((imm16 >> 12) & 0xf) | (((imm16 >> 11) & 1) << 10));
  *hw2 = (uint16_t)((*hw2 & 0x8f00) | (((imm16 >> 8) & 7) << 12) | (imm16 & 0xff));
}

static hcq_status apply_data(const cpu_reloc *r, uint32_t S, uint32_t T, uint32_t P) {
  if (r->avail_B < 4) return too_short(r, 4);
  uint32_t word = get32(r->loc);
  uint32_t G = (uint32_t)r->G, GOT = (uint32_t)r->GOT;
  switch (r->type) {
  case R_ARM_ABS32:
  case R_ARM_TARGET1: put32(r->loc, ((S + word + (uint32_t)r->A) | T)); return HCQ_OK;
  case R_ARM_REL32: put32(r->loc, ((S + word + (uint32_t)r->A) | T) - P); return HCQ_OK;
  case R_ARM_GOTOFF32: put32(r->loc, ((S + word + (uint32_t)r->A) | T) - GOT); return HCQ_OK;
  case R_ARM_BASE_PREL: put32(r->loc, GOT + word + (uint32_t)r->A - P); return HCQ_OK;
  case R_ARM_GOT_BREL: put32(r->loc, G + word + (uint32_t)r->A - GOT); return HCQ_OK;
  case R_ARM_GOT_PREL: put32(r->loc, G + word + (uint32_t)r->A - P); return HCQ_OK;
  case R_ARM_PREL31: {
    int32_t v = (int32_t)(((S + (uint32_t)sext(word & 0x7fffffffu, 31) + (uint32_t)r->A) | T) - P);
    if (!fits_signed(v, 31)) return out_of_range(r, v, "");
    put32(r->loc, (word & 0x80000000u) | ((uint32_t)v & 0x7fffffffu));
    return HCQ_OK;
  }
  default: return HCQ_OK;
  }
}

static hcq_status apply_a32(const cpu_reloc *r, uint32_t S, uint32_t T, uint32_t P) {
  if (r->avail_B < 4) return too_short(r, 4);
  uint32_t insn = get32(r->loc);
  switch (r->type) {
  case R_ARM_PC24:
  case R_ARM_CALL:
  case R_ARM_JUMP24: {
    bool is_blx = (insn >> 28) == 0xf;
    int32_t A = sext((insn & 0xffffff) << 2, 26) + (is_blx ? (int32_t)((insn >> 23) & 2) : 0) + (int32_t)r->A;
    int32_t v = (int32_t)((S + (uint32_t)A) - P); /* the Thumb bit decides the instruction, not the offset */
    if (T) {
      if (r->type != R_ARM_CALL)
        return hcq_status_make(HCQ_CODE_INVALID, "%s at 0x%llx: branch from Arm to Thumb code needs BLX, a B cannot switch",
                               cpu_reloc_type_name(EM_ARM, r->type), (unsigned long long)r->P);
      if (!fits_signed(v, 26) || (v & 1)) return out_of_range(r, v, "");
      insn = 0xfa000000u | (((uint32_t)v & 2) << 23) | (((uint32_t)v >> 2) & 0xffffff); /* BLX imm */
    } else {
      if (!fits_signed(v, 26) || (v & 3)) return out_of_range(r, v, "");
      if (is_blx) insn = 0xeb000000u; /* BLX to Arm code: plain BL (always) */
      insn = (insn & 0xff000000u) | (((uint32_t)v >> 2) & 0xffffff);
    }
    put32(r->loc, insn);
    return HCQ_OK;
  }
  case R_ARM_MOVW_ABS_NC:
  case R_ARM_MOVT_ABS:
  case R_ARM_MOVW_PREL_NC:
  case R_ARM_MOVT_PREL: {
    uint32_t A = (uint32_t)sext(a32_mov_imm(insn), 16) + (uint32_t)r->A;
    uint32_t v;
    switch (r->type) {
    case R_ARM_MOVW_ABS_NC: v = (S + A) | T; break;
    case R_ARM_MOVT_ABS: v = (S + A) >> 16; break;
    case R_ARM_MOVW_PREL_NC: v = ((S + A) | T) - P; break;
    default: v = (S + A - P) >> 16; break;
    }
    put32(r->loc, a32_mov_set(insn, v & 0xffff));
    return HCQ_OK;
  }
  default: return HCQ_OK;
  }
}

static hcq_status apply_t32(const cpu_reloc *r, uint32_t S, uint32_t T, uint32_t P) {
  if (r->avail_B < 4) return too_short(r, 4);
  uint16_t hw1 = get16(r->loc), hw2 = get16(r->loc + 2);
  switch (r->type) {
  case R_ARM_THM_CALL:
  case R_ARM_THM_JUMP24: {
    int32_t A = t32_branch_imm(hw1, hw2) + (int32_t)r->A;
    if (!T && r->tramp) { /* the trampoline's Thumb entry: BL/B.W without a state change */
      S += 8;
      T = 1;
    }
    if (T) {
      int32_t v = (int32_t)((S + (uint32_t)A) - P);
      if (!fits_signed(v, 25)) return out_of_range(r, v, "");
      if (r->type == R_ARM_THM_CALL) hw2 |= 0x1000; /* BL (a BLX to Thumb code becomes BL) */
      t32_branch_set(&hw1, &hw2, v);
    } else {
      if (r->type != R_ARM_THM_CALL)
        return hcq_status_make(HCQ_CODE_INVALID, "%s at 0x%llx: branch from Thumb to Arm code needs BLX, a B.W cannot switch",
                               cpu_reloc_type_name(EM_ARM, r->type), (unsigned long long)r->P);
      /* BLX: target is Align(PC, 4) + offset; offset must be a multiple of 4 */
      int32_t v = (int32_t)((S + (uint32_t)A) - (P & ~3u));
      if (!fits_signed(v, 25) || (v & 3)) return out_of_range(r, v, "");
      hw2 &= (uint16_t)~0x1000;
      t32_branch_set(&hw1, &hw2, v);
      hw2 &= (uint16_t)~1;
    }
    break;
  }
  case R_ARM_THM_JUMP19: {
    if (!T && r->tramp) { /* the trampoline's Thumb entry */
      S += 8;
      T = 1;
    }
    int32_t v = (int32_t)(((S + (uint32_t)(t32_condbr_imm(hw1, hw2) + (int32_t)r->A)) | T) - P);
    if (!T) return hcq_status_make(HCQ_CODE_INVALID, "R_ARM_THM_JUMP19 at 0x%llx: conditional branch to Arm code",
                                   (unsigned long long)r->P);
    if (!fits_signed(v, 21)) return out_of_range(r, v, "");
    t32_condbr_set(&hw1, &hw2, v);
    break;
  }
  case R_ARM_THM_MOVW_ABS_NC:
  case R_ARM_THM_MOVT_ABS:
  case R_ARM_THM_MOVW_PREL_NC:
  case R_ARM_THM_MOVT_PREL: {
    uint32_t A = (uint32_t)sext(t32_mov_imm(hw1, hw2), 16) + (uint32_t)r->A;
    uint32_t v;
    switch (r->type) {
    case R_ARM_THM_MOVW_ABS_NC: v = (S + A) | T; break;
    case R_ARM_THM_MOVT_ABS: v = (S + A) >> 16; break;
    case R_ARM_THM_MOVW_PREL_NC: v = ((S + A) | T) - P; break;
    default: v = (S + A - P) >> 16; break;
    }
    t32_mov_set(&hw1, &hw2, v & 0xffff);
    break;
  }
  default: return HCQ_OK;
  }
  put16(r->loc, hw1);
  put16(r->loc + 2, hw2);
  return HCQ_OK;
}

hcq_status cpu_reloc_apply_arm(const cpu_reloc *r) {
  uint32_t T = (uint32_t)r->S & 1, S = (uint32_t)r->S & ~1u, P = (uint32_t)r->P;
  switch (r->type) {
  case R_ARM_NONE:
  case R_ARM_V4BX: return HCQ_OK;
  case R_ARM_ABS32:
  case R_ARM_TARGET1:
  case R_ARM_REL32:
  case R_ARM_GOTOFF32:
  case R_ARM_BASE_PREL:
  case R_ARM_GOT_BREL:
  case R_ARM_GOT_PREL:
  case R_ARM_PREL31: return apply_data(r, S, T, P);
  case R_ARM_PC24:
  case R_ARM_CALL:
  case R_ARM_JUMP24:
  case R_ARM_MOVW_ABS_NC:
  case R_ARM_MOVT_ABS:
  case R_ARM_MOVW_PREL_NC:
  case R_ARM_MOVT_PREL: return apply_a32(r, S, T, P);
  case R_ARM_THM_CALL:
  case R_ARM_THM_JUMP24:
  case R_ARM_THM_JUMP19:
  case R_ARM_THM_MOVW_ABS_NC:
  case R_ARM_THM_MOVT_ABS:
  case R_ARM_THM_MOVW_PREL_NC:
  case R_ARM_THM_MOVT_PREL: return apply_t32(r, S, T, P);
  default:
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "unsupported arm relocation type %u (%s) at 0x%llx", r->type,
                           cpu_reloc_type_name(EM_ARM, r->type), (unsigned long long)r->P);
  }
}
