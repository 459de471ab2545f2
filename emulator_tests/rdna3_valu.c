/* RDNA3 vector ALU: VOP1/VOP2/VOPC/VOP3/VOP3P and VOPD dual issue. Sources are fetched as 32 lanes (a VGPR row
 * is used in place; scalars and constants are broadcast; abs/neg/op_sel applied on a copy), each operation is one
 * loop over 32 lanes into result arrays, and the results are written under EXEC. Float ops use the host's IEEE
 * binary32/64 arithmetic (round to nearest even), fused multiply-adds through fmaf/fma (one rounding); f16 as
 * described at the f16 cases. Semantics per AMD's "RDNA3 Instruction Set Architecture Reference Guide". */
#pragma GCC optimize("fp-contract=off") /* a*b+c must round twice, as the GPU's separate mul and add do */
#include <stdlib.h>
#include <string.h>

#include "emulator_tests/rdna3_float.h"
#include "emulator_tests/rdna3_wave.h"

typedef struct src {
  const uint32_t *p;
  uint32_t t[32];
  uint64_t d[32];
} src;

static inline uint32_t flush32(uint32_t u) { return (u & 0x7f800000u) ? u : u & 0x80000000u; }

/* hi: a 16-bit float source taken from the high half (VOP3 op_sel); modifiers then apply to that half. */
static void fetch32(const wave *w, const r3_inst *in, unsigned code, int kind, bool abs, bool neg, bool hi,
                    src *s) {
  bool ftz = w->ftz_in32 && kind == 1;
  if (code >= R3_VGPR && !abs && !neg && !ftz && !hi) {
    s->p = w->v[code - R3_VGPR];
    return;
  }
  if (code >= R3_VGPR && hi) for (int l = 0; l < 32; l++) s->t[l] = w->v[code - R3_VGPR][l] >> 16;
  else if (code >= R3_VGPR) memcpy(s->t, w->v[code - R3_VGPR], sizeof s->t);
  else {
    uint32_t x = sval32(w, code, in->lit, kind);
    for (int l = 0; l < 32; l++) s->t[l] = x;
  }
  uint32_t sign = kind == 3 ? 0x8000u : 0x80000000u;
  uint32_t keep = abs ? ~sign : ~0u, flip = neg ? sign : 0; /* branch-free lane loops (they vectorize) */
  if (ftz)
    for (int l = 0; l < 32; l++) s->t[l] = flush32(s->t[l]);
  for (int l = 0; l < 32; l++) s->t[l] = (s->t[l] & keep) ^ flip;
  s->p = s->t;
}

static void fetch64(const wave *w, const r3_inst *in, unsigned code, int kind, bool abs, bool neg, src *s) {
  if (code >= R3_VGPR) {
    unsigned r = code - R3_VGPR;
    for (int l = 0; l < 32; l++) s->d[l] = w->v[r][l] | (uint64_t)w->v[(r + 1) & 255][l] << 32;
  } else {
    uint64_t x = sval64(w, code, in->lit, kind);
    for (int l = 0; l < 32; l++) s->d[l] = x;
  }
  if (abs || neg)
    for (int l = 0; l < 32; l++) {
      if (abs) s->d[l] &= ~(1ull << 63);
      if (neg) s->d[l] ^= 1ull << 63;
    }
}

/* ---- VALU ---- */

static bool float_result(unsigned id) {
  if (id >= R3_VOPC_BASE) return false;
  const r3_opinfo *o = r3_info_ready(id);
  if (!(o->flags & F_FP) || (o->flags & F_F16) || o->enc == E_VOP3P) return false; /* f16/packed: no clamp/omod */
  switch (id) {
    case R3_V_CVT_I32_F32: case R3_V_CVT_U32_F32: case R3_V_CVT_I32_F64: case R3_V_CVT_U32_F64:
    case R3_V_FREXP_EXP_I32_F32: case R3_V_FREXP_EXP_I32_F64: case R3_V_CVT_F16_F32: return false;
    case R3_V_CVT_F32_F16: return true;
    default: return true;
  }
}

static uint32_t cvt_i32(double x) {
  if (isnan(x)) return 0;
  if (x >= 2147483647.0) return 0x7fffffffu;
  if (x <= -2147483648.0) return 0x80000000u;
  return (uint32_t)(int32_t)x;
}
static uint32_t cvt_u32(double x) {
  if (isnan(x) || x <= 0) return 0;
  if (x >= 4294967295.0) return 0xffffffffu;
  return (uint32_t)x;
}
static int32_t s24(uint32_t x) { return (int32_t)(x << 8) >> 8; }

/* Integer results with CLAMP saturate to the destination's range (RDNA3 ISA, "clamp" on integer VOP3/VOP3P ops);
 * without it they wrap. */
static uint16_t satu16(int64_t x, bool sat) { return !sat ? (uint16_t)x : x < 0 ? 0 : x > UINT16_MAX ? UINT16_MAX : (uint16_t)x; }
static uint16_t sati16(int64_t x, bool sat) {
  return (uint16_t)(!sat ? x : x < INT16_MIN ? INT16_MIN : x > INT16_MAX ? INT16_MAX : x);
}
static int32_t sat32(int64_t x, bool sat) {
  return (int32_t)(uint32_t)(!sat ? x : x < INT32_MIN ? INT32_MIN : x > INT32_MAX ? INT32_MAX : x);
}

/* CLAMP is modelled on f32/f64 results and on these integer ops; elsewhere (f16 and packed float results, other
 * integer ops) an instruction with it is refused rather than run without it. */
static bool clamp_modelled(unsigned id) {
  switch (id) {
    case R3_V_ADD_NC_U32: case R3_V_SUB_NC_U32: case R3_V_SUBREV_NC_U32: case R3_V_ADD_NC_I32: case R3_V_SUB_NC_I32: case R3_V_ADD_CO_U32:
    case R3_V_SUB_CO_U32: case R3_V_SUBREV_CO_U32: case R3_V_ADD_NC_U16: case R3_V_SUB_NC_U16: case R3_V_ADD_NC_I16:
    case R3_V_SUB_NC_I16: case R3_V_MAD_U16: case R3_V_MAD_I16: case R3_V_MAD_U32_U16: case R3_V_MAD_I32_I16:
    case R3_V_PK_ADD_U16: case R3_V_PK_SUB_U16: case R3_V_PK_ADD_I16: case R3_V_PK_SUB_I16: case R3_V_PK_MAD_U16:
    case R3_V_PK_MAD_I16: return true;
    default: return float_result(id);
  }
}

#define LANES for (int l = 0; l < 32; l++)
#define A pa[l]
#define B pb[l]
#define C pc[l]
#define FA r3_f(pa[l])
#define FB r3_f(pb[l])
#define FC r3_f(pc[l])
#define DA r3_d(s[0].d[l])
#define DB r3_d(s[1].d[l])
#define DC r3_d(s[2].d[l])
#define OUT(x) lo[l] = (x)
#define HA r3_h2f((uint16_t)pa[l])
#define HB r3_h2f((uint16_t)pb[l])
#define HC r3_h2f((uint16_t)pc[l])
#define OUTH16(h) do { uint32_t o_ = w->v[in->dst][l], h_ = (h); \
    lo[l] = e64 && (in->opsel & 8) ? (o_ & 0xffffu) | h_ << 16 : (o_ & 0xffff0000u) | h_; } while (0)
#define OUTH(x) OUTH16(r3_f2h(x))
#define OUTF(x) lo[l] = r3_u(x)
#define OUT64(x) do { uint64_t o_ = (x); lo[l] = (uint32_t)o_; hi[l] = (uint32_t)(o_ >> 32); } while (0)
#define OUTD(x) OUT64(r3_ud(x))

static int cmp_f(double a, double b, int cond) {
  bool un = isnan(a) || isnan(b);
  switch (cond) {
    case 0: return 0;
    case 1: return a < b;
    case 2: return a == b;
    case 3: return a <= b;
    case 4: return a > b;
    case 5: return a < b || a > b;
    case 6: return a >= b;
    case 7: return !un;
    case 8: return un;
    case 9: return !(a >= b);
    case 10: return !(a < b || a > b);
    case 11: return !(a > b);
    case 12: return !(a <= b);
    case 13: return !(a == b);
    case 14: return !(a < b);
    default: return 1;
  }
}
#define CMP_I(a, b, cond) \
  ((cond) == 0 ? 0 : (cond) == 1 ? (a) < (b) : (cond) == 2 ? (a) == (b) : (cond) == 3 ? (a) <= (b) \
   : (cond) == 4 ? (a) > (b) : (cond) == 5 ? (a) != (b) : (cond) == 6 ? (a) >= (b) : 1)

/* Compute operation id on all 32 lanes into lo/hi (64-bit results) and *cmask (compare / carry masks). Returns
 * false for an operation the executor does not implement. */
static bool vcompute(const wave *w, const r3_inst *in, unsigned id, const uint16_t *codes, bool e64,
                     unsigned mask_code, uint32_t *restrict lo, uint32_t *restrict hi, uint32_t *cmask) {
  const r3_opinfo *o = r3_info_ready(id);
  uint32_t fl = o->flags;
  src s[3];
  int type = -1, cond = 0;
  if (id >= R3_VOPC_BASE) {
    bool x;
    r3_vopc_split(id - R3_VOPC_BASE, &type, &cond, &x);
  }
  int ns = o->nsrc;
  if (id == R3_V_DUAL_FMAAK_F32 || id == R3_V_DUAL_FMAMK_F32 || id == R3_V_FMAAK_F32 || id == R3_V_FMAMK_F32) ns = 2;
  for (int k = 0; k < ns; k++) {
    bool w64 = (k == 0 && (fl & F_S0_64)) || (k == 1 && (fl & F_S1_64)) || (k == 2 && (fl & F_S2_64));
    int kind = (fl & F_FP) ? (w64 ? 2 : (fl & F_F16) ? 3 : 1) : w64 ? 0 : 0;
    if (id == R3_V_LDEXP_F32 && k == 1) kind = 0;
    if ((id == R3_V_LDEXP_F64) && k == 1) kind = 0;
    if (type >= 9 && k == 1) kind = 0; /* v_cmp_class: src1 is the class mask */
    if (type == 7 || (id == R3_V_ASHRREV_I64 && k == 1) || (id == R3_V_MAD_I64_I32 && k == 2))
      kind = 4; /* signed 64-bit sources (v_cmp_*_i64 too): a 32-bit literal sign-extends */
    bool mods = (fl & F_FP) || id == R3_V_CNDMASK_B32; /* v_cndmask_b32_e64 takes float source modifiers too */
    bool ab = e64 && ((in->abs >> k) & 1) && mods, ng = e64 && ((in->neg >> k) & 1) && mods;
    if (w64) fetch64(w, in, codes[k], kind, ab, ng, &s[k]);
    else fetch32(w, in, codes[k], kind, ab, ng, e64 && kind == 3 && ((in->opsel >> k) & 1), &s[k]);
  }
  bool sat = in->clamp && (e64 || in->enc == E_VOP3P); /* integer clamp: saturate (clamp_modelled says which) */
  /* restrict: the sources (registers or copies) never alias the caller's result arrays, so the lane loops vectorize */
  const uint32_t *restrict pa = ns > 0 ? s[0].p : NULL, *restrict pb = ns > 1 ? s[1].p : NULL,
                           *restrict pc = ns > 2 ? s[2].p : NULL;
  uint32_t mask = 0;
  if (fl & F_CIN) mask = mask_code == R3_VCC ? w->s[R3_VCC] : sval32(w, mask_code, in->lit, 0);
  *cmask = 0;
  if (id >= R3_VOPC_BASE) {
    uint32_t m = 0;
    switch (type) {
      case 0: LANES m |= (uint32_t)cmp_f(r3_h2f((uint16_t)A), r3_h2f((uint16_t)B), cond) << l; break;
      case 1: /* the hot one: one loop per condition */
        switch (cond) {
          case 1: LANES m |= (uint32_t)(FA < FB) << l; break;
          case 2: LANES m |= (uint32_t)(FA == FB) << l; break;
          case 3: LANES m |= (uint32_t)(FA <= FB) << l; break;
          case 4: LANES m |= (uint32_t)(FA > FB) << l; break;
          case 6: LANES m |= (uint32_t)(FA >= FB) << l; break;
          case 13: LANES m |= (uint32_t)!(FA == FB) << l; break;
          default: LANES m |= (uint32_t)cmp_f(FA, FB, cond) << l; break;
        }
        break;
      case 2: LANES m |= (uint32_t)cmp_f(DA, DB, cond) << l; break;
      case 3: LANES m |= (uint32_t)CMP_I((int16_t)A, (int16_t)B, cond) << l; break;
      case 4: LANES m |= (uint32_t)CMP_I((uint16_t)A, (uint16_t)B, cond) << l; break;
      case 5: LANES m |= (uint32_t)CMP_I((int32_t)A, (int32_t)B, cond) << l; break;
      case 6: LANES m |= (uint32_t)CMP_I(A, B, cond) << l; break;
      case 7: LANES m |= (uint32_t)CMP_I((int64_t)s[0].d[l], (int64_t)s[1].d[l], cond) << l; break;
      case 8: LANES m |= (uint32_t)CMP_I(s[0].d[l], s[1].d[l], cond) << l; break;
      case 9: LANES { uint16_t h = (uint16_t)A; float f = r3_h2f(h); m |= ((B >> R3_CLASS_BIT(f, (h & 0x7c00) == 0x7c00 && (h & 0x3ff) && !(h & 0x200))) & 1u) << l; } break;
      case 10: LANES { float f = FA; m |= ((B >> R3_CLASS_BIT(f, isnan(f) && !(A & 0x400000u))) & 1u) << l; } break;
      case 11: LANES { double f = DA; m |= ((B >> R3_CLASS_BIT(f, isnan(f) && !(s[0].d[l] & (1ull << 51)))) & 1u) << l; } break;
      default: return false;
    }
    *cmask = m;
    return true;
  }
  switch (id) {
    case R3_V_MOV_B32: LANES OUT(A); break;
    case R3_V_READFIRSTLANE_B32: LANES OUT(A); break;
    case R3_V_CNDMASK_B32: LANES { uint32_t m_ = 0u - ((mask >> l) & 1); OUT((B & m_) | (A & ~m_)); } break;
    case R3_V_ADD_F32: LANES OUTF(FA + FB); break;
    case R3_V_SUB_F32: LANES OUTF(FA - FB); break;
    case R3_V_SUBREV_F32: LANES OUTF(FB - FA); break;
    case R3_V_MUL_F32: LANES OUTF(FA * FB); break;
    case R3_V_MUL_DX9_ZERO_F32: LANES OUTF((FA == 0 && !isnan(FB)) || (FB == 0 && !isnan(FA)) ? 0.0f : FA * FB); break;
    case R3_V_FMAC_F32: LANES OUTF(fmaf(FA, FB, r3_f(w->v[in->dst][l]))); break;
    case R3_V_FMAMK_F32: case R3_V_DUAL_FMAMK_F32: LANES OUTF(fmaf(FA, r3_f(in->lit), FB)); break;
    case R3_V_FMAAK_F32: case R3_V_DUAL_FMAAK_F32: LANES OUTF(fmaf(FA, FB, r3_f(in->lit))); break;
    case R3_V_FMA_F32: LANES OUTF(fmaf(FA, FB, FC)); break;
    case R3_V_MIN_F32: LANES OUTF(r3_fmin(FA, FB)); break;
    case R3_V_MAX_F32: LANES OUTF(r3_fmax(FA, FB)); break;
    case R3_V_MIN3_F32: LANES OUTF(r3_fmin(r3_fmin(FA, FB), FC)); break;
    case R3_V_MAX3_F32: LANES OUTF(r3_fmax(r3_fmax(FA, FB), FC)); break;
    case R3_V_MED3_F32: LANES OUTF(r3_fmed3(FA, FB, FC)); break;
    case R3_V_MAXMIN_F32: LANES OUTF(r3_fmin(r3_fmax(FA, FB), FC)); break;
    case R3_V_MINMAX_F32: LANES OUTF(r3_fmax(r3_fmin(FA, FB), FC)); break;
    case R3_V_MUL_I32_I24: LANES OUT((uint32_t)((int64_t)s24(A) * s24(B))); break;
    case R3_V_MUL_HI_I32_I24: LANES OUT((uint32_t)((uint64_t)((int64_t)s24(A) * s24(B)) >> 32)); break;
    case R3_V_MUL_U32_U24: LANES OUT((A & 0xffffffu) * (B & 0xffffffu)); break;
    case R3_V_MUL_HI_U32_U24: LANES OUT((uint32_t)((uint64_t)(A & 0xffffffu) * (B & 0xffffffu) >> 32)); break;
    case R3_V_MAD_I32_I24: LANES OUT((uint32_t)((int64_t)s24(A) * s24(B)) + C); break;
    case R3_V_MAD_U32_U24: LANES OUT((A & 0xffffffu) * (B & 0xffffffu) + C); break;
    case R3_V_MIN_I32: LANES OUT((int32_t)A < (int32_t)B ? A : B); break;
    case R3_V_MAX_I32: LANES OUT((int32_t)A > (int32_t)B ? A : B); break;
    case R3_V_MIN_U32: LANES OUT(A < B ? A : B); break;
    case R3_V_MAX_U32: LANES OUT(A > B ? A : B); break;
    case R3_V_LSHLREV_B32: LANES OUT(B << (A & 31)); break;
    case R3_V_LSHRREV_B32: LANES OUT(B >> (A & 31)); break;
    case R3_V_ASHRREV_I32: LANES OUT((uint32_t)((int32_t)B >> (A & 31))); break;
    case R3_V_AND_B32: LANES OUT(A & B); break;
    case R3_V_OR_B32: LANES OUT(A | B); break;
    case R3_V_XOR_B32: LANES OUT(A ^ B); break;
    case R3_V_XNOR_B32: LANES OUT(~(A ^ B)); break;
    case R3_V_NOT_B32: LANES OUT(~A); break;
    case R3_V_ADD_NC_U32:
      if (in->clamp) LANES OUT(A + B < A ? 0xffffffffu : A + B);
      else LANES OUT(A + B);
      break;
    case R3_V_SUB_NC_U32:
      if (in->clamp) LANES OUT(A < B ? 0 : A - B);
      else LANES OUT(A - B);
      break;
    case R3_V_SUBREV_NC_U32: LANES OUT(in->clamp && A > B ? 0 : B - A); break;
    case R3_V_ADD_NC_I32: LANES {
        int64_t r = (int64_t)(int32_t)A + (int32_t)B;
        if (in->clamp) r = r > INT32_MAX ? INT32_MAX : r < INT32_MIN ? INT32_MIN : r;
        OUT((uint32_t)r);
      }
      break;
    case R3_V_SUB_NC_I32: LANES {
        int64_t r = (int64_t)(int32_t)A - (int32_t)B;
        if (in->clamp) r = r > INT32_MAX ? INT32_MAX : r < INT32_MIN ? INT32_MIN : r;
        OUT((uint32_t)r);
      }
      break;
    case R3_V_ADD_CO_U32: LANES { uint64_t r = (uint64_t)A + B; *cmask |= (uint32_t)(r >> 32) << l; OUT(in->clamp && r >> 32 ? 0xffffffffu : (uint32_t)r); } break;
    case R3_V_SUB_CO_U32: LANES { *cmask |= (uint32_t)(B > A) << l; OUT(in->clamp && B > A ? 0 : A - B); } break;
    case R3_V_SUBREV_CO_U32: LANES { *cmask |= (uint32_t)(A > B) << l; OUT(in->clamp && A > B ? 0 : B - A); } break;
    case R3_V_ADD_CO_CI_U32: LANES { uint64_t r = (uint64_t)A + B + ((mask >> l) & 1); *cmask |= (uint32_t)(r >> 32) << l; OUT((uint32_t)r); } break;
    case R3_V_SUB_CO_CI_U32: LANES { uint64_t ci = (mask >> l) & 1; *cmask |= (uint32_t)((uint64_t)B + ci > A) << l; OUT(A - B - (uint32_t)ci); } break;
    case R3_V_SUBREV_CO_CI_U32: LANES { uint64_t ci = (mask >> l) & 1; *cmask |= (uint32_t)((uint64_t)A + ci > B) << l; OUT(B - A - (uint32_t)ci); } break;
    case R3_V_MUL_LO_U32: LANES OUT(A * B); break;
    case R3_V_MUL_HI_U32: LANES OUT((uint32_t)((uint64_t)A * B >> 32)); break;
    case R3_V_MUL_HI_I32: LANES OUT((uint32_t)((uint64_t)((int64_t)(int32_t)A * (int32_t)B) >> 32)); break;
    case R3_V_MAD_U64_U32: LANES { /* a*b < 2^64 - 2^33, so the sum wrapped iff it is below the addend */
        uint64_t r = (uint64_t)A * B + s[2].d[l];
        *cmask |= (uint32_t)(r < s[2].d[l]) << l;
        OUT64(r);
      }
      break;
    case R3_V_MAD_I64_I32: LANES {
        int64_t r;
        *cmask |= (uint32_t)__builtin_add_overflow((int64_t)(int32_t)A * (int32_t)B, (int64_t)s[2].d[l], &r) << l;
        OUT64((uint64_t)r);
      }
      break;
    case R3_V_BFE_U32: LANES { uint32_t off = B & 31, wd = C & 31; OUT(wd ? (A >> off) & (uint32_t)((1ull << wd) - 1) : 0); } break;
    case R3_V_BFE_I32: LANES { uint32_t off = B & 31, wd = C & 31; OUT(wd ? (uint32_t)((int32_t)((A >> off) << (32 - wd)) >> (32 - wd)) : 0); } break;
    case R3_V_BFI_B32: LANES OUT((A & B) | (~A & C)); break;
    case R3_V_BFM_B32: LANES OUT((uint32_t)((1ull << (A & 31)) - 1) << (B & 31)); break;
    case R3_V_ALIGNBIT_B32: LANES OUT((uint32_t)((((uint64_t)A << 32) | B) >> (C & 31))); break;
    case R3_V_ALIGNBYTE_B32: LANES OUT((uint32_t)((((uint64_t)A << 32) | B) >> (8 * (C & 3)))); break;
    case R3_V_PERM_B32: LANES {
        uint64_t v = ((uint64_t)A << 32) | B;
        uint32_t r = 0;
        for (int k = 0; k < 4; k++) {
          uint32_t sel = (C >> (8 * k)) & 0xff, byte;
          if (sel < 8) byte = (uint32_t)(v >> (8 * sel)) & 0xff;
          else if (sel < 12) byte = (uint32_t)(v >> (16 * (sel - 8) + 15)) & 1 ? 0xff : 0; /* sign of a 16-bit half */
          else byte = sel == 12 ? 0 : 0xff;
          r |= byte << (8 * k);
        }
        OUT(r);
      }
      break;
    case R3_V_XOR3_B32: LANES OUT(A ^ B ^ C); break;
    case R3_V_OR3_B32: LANES OUT(A | B | C); break;
    case R3_V_AND_OR_B32: LANES OUT((A & B) | C); break;
    case R3_V_LSHL_OR_B32: LANES OUT((A << (B & 31)) | C); break;
    case R3_V_LSHL_ADD_U32: LANES OUT((A << (B & 31)) + C); break;
    case R3_V_ADD_LSHL_U32: LANES OUT((A + B) << (C & 31)); break;
    case R3_V_ADD3_U32: LANES OUT(A + B + C); break;
    case R3_V_XAD_U32: LANES OUT((A ^ B) + C); break;
    case R3_V_MIN3_I32: LANES { int32_t a = (int32_t)A, b = (int32_t)B, d = (int32_t)C, m = a < b ? a : b; OUT((uint32_t)(m < d ? m : d)); } break;
    case R3_V_MAX3_I32: LANES { int32_t a = (int32_t)A, b = (int32_t)B, d = (int32_t)C, m = a > b ? a : b; OUT((uint32_t)(m > d ? m : d)); } break;
    case R3_V_MIN3_U32: LANES { uint32_t m = A < B ? A : B; OUT(m < C ? m : C); } break;
    case R3_V_MAX3_U32: LANES { uint32_t m = A > B ? A : B; OUT(m > C ? m : C); } break;
    case R3_V_MED3_I32: LANES {
        int32_t a = (int32_t)A, b = (int32_t)B, d = (int32_t)C;
        int32_t mx = a > b ? a : b, mn = a < b ? a : b, t = mx < d ? mx : d;
        OUT((uint32_t)(mn > t ? mn : t));
      }
      break;
    case R3_V_MED3_U32: LANES {
        uint32_t mx = A > B ? A : B, mn = A < B ? A : B, t = mx < C ? mx : C;
        OUT(mn > t ? mn : t);
      }
      break;
    case R3_V_MAXMIN_U32: LANES { uint32_t m = A > B ? A : B; OUT(m < C ? m : C); } break;
    case R3_V_MINMAX_U32: LANES { uint32_t m = A < B ? A : B; OUT(m > C ? m : C); } break;
    case R3_V_MAXMIN_I32: LANES { int32_t m = (int32_t)A > (int32_t)B ? (int32_t)A : (int32_t)B; OUT((uint32_t)(m < (int32_t)C ? m : (int32_t)C)); } break;
    case R3_V_MINMAX_I32: LANES { int32_t m = (int32_t)A < (int32_t)B ? (int32_t)A : (int32_t)B; OUT((uint32_t)(m > (int32_t)C ? m : (int32_t)C)); } break;
    case R3_V_BFREV_B32: LANES {
        uint32_t x = A, r = 0;
        for (int k = 0; k < 32; k++) r |= ((x >> k) & 1) << (31 - k);
        OUT(r);
      }
      break;
    case R3_V_CLZ_I32_U32: LANES OUT(A ? (uint32_t)__builtin_clz(A) : 0xffffffffu); break;
    case R3_V_CTZ_I32_B32: LANES OUT(A ? (uint32_t)__builtin_ctz(A) : 0xffffffffu); break;
    case R3_V_BCNT_U32_B32: LANES OUT((uint32_t)__builtin_popcount(A) + B); break;
    case R3_V_MBCNT_LO_U32_B32: LANES OUT((uint32_t)__builtin_popcount(A & ((1u << l) - 1)) + B); break;
    case R3_V_MBCNT_HI_U32_B32: LANES OUT(B); break; /* wave32: the high half of the mask has no lanes below */
    case R3_V_LSHLREV_B64: LANES OUT64(s[1].d[l] << (A & 63)); break;
    case R3_V_LSHRREV_B64: LANES OUT64(s[1].d[l] >> (A & 63)); break;
    case R3_V_ASHRREV_I64: LANES OUT64((uint64_t)((int64_t)s[1].d[l] >> (A & 63))); break;
    /* conversions */
    case R3_V_CVT_F32_I32: LANES OUTF((float)(int32_t)A); break;
    case R3_V_CVT_F32_U32: LANES OUTF((float)A); break;
    case R3_V_CVT_I32_F32: LANES OUT(cvt_i32(FA)); break;
    case R3_V_CVT_U32_F32: LANES OUT(cvt_u32(FA)); break;
    case R3_V_CVT_F32_UBYTE0: LANES OUTF((float)(A & 0xff)); break;
    case R3_V_CVT_F32_UBYTE1: LANES OUTF((float)((A >> 8) & 0xff)); break;
    case R3_V_CVT_F32_UBYTE2: LANES OUTF((float)((A >> 16) & 0xff)); break;
    case R3_V_CVT_F32_UBYTE3: LANES OUTF((float)(A >> 24)); break;
    case R3_V_CVT_F64_I32: LANES OUTD((double)(int32_t)A); break;
    case R3_V_CVT_F64_U32: LANES OUTD((double)A); break;
    case R3_V_CVT_I32_F64: LANES OUT(cvt_i32(DA)); break;
    case R3_V_CVT_U32_F64: LANES OUT(cvt_u32(DA)); break;
    case R3_V_CVT_F32_F64: LANES OUTF((float)DA); break;
    case R3_V_CVT_F64_F32: LANES OUTD((double)FA); break;
    case R3_V_CVT_F16_F32: LANES OUT((w->v[in->dst][l] & 0xffff0000u) | r3_f2h(FA)); break;
    case R3_V_CVT_F32_F16: LANES OUTF(r3_h2f((uint16_t)A)); break;
    /* f16: computed in f32 and rounded once to f16 (f32 carries 24 >= 2*11+2 bits, so add, sub, mul, div and sqrt are
     * correctly rounded); the result fills one half of the VGPR (op_sel bit 3 in VOP3: the high one) */
    case R3_V_ADD_F16: LANES OUTH(HA + HB); break;
    case R3_V_SUB_F16: LANES OUTH(HA - HB); break;
    case R3_V_SUBREV_F16: LANES OUTH(HB - HA); break;
    case R3_V_MUL_F16: LANES OUTH(HA * HB); break;
    case R3_V_FMAC_F16: LANES OUTH((float)fma(HA, HB, r3_h2f((uint16_t)w->v[in->dst][l]))); break;
    case R3_V_FMA_F16: LANES OUTH((float)fma(HA, HB, HC)); break;
    case R3_V_MAX_F16: LANES OUTH(r3_fmax(HA, HB)); break;
    case R3_V_MIN_F16: LANES OUTH(r3_fmin(HA, HB)); break;
    case R3_V_MAX3_F16: LANES OUTH(r3_fmax(r3_fmax(HA, HB), HC)); break;
    case R3_V_MIN3_F16: LANES OUTH(r3_fmin(r3_fmin(HA, HB), HC)); break;
    case R3_V_MED3_F16: LANES OUTH(r3_fmed3(HA, HB, HC)); break;
    case R3_V_DIV_FIXUP_F16: LANES OUTH(r3_div_fixup32(HA, HB, HC)); break;
    case R3_V_CVT_F16_U16: LANES OUTH((float)(uint16_t)A); break;
    case R3_V_CVT_F16_I16: LANES OUTH((float)(int16_t)A); break;
    case R3_V_CVT_U16_F16: LANES { float x = HA; OUTH16(isnan(x) || x <= 0 ? 0 : x >= 65535.0f ? 0xffff : (uint16_t)x); } break;
    case R3_V_CVT_I16_F16: LANES { float x = HA; OUTH16(isnan(x) ? 0 : x >= 32767.0f ? 0x7fff : x <= -32768.0f ? 0x8000 : (uint16_t)(int16_t)x); } break;
    case R3_V_RCP_F16: LANES OUTH(1.0f / HA); break;
    case R3_V_SQRT_F16: LANES OUTH(sqrtf(HA)); break;
    case R3_V_RSQ_F16: LANES OUTH((float)(1.0 / sqrt((double)HA))); break;
    case R3_V_LOG_F16: LANES OUTH(r3_log2(HA)); break;
    case R3_V_EXP_F16: LANES OUTH(r3_exp2(HA)); break;
    case R3_V_FLOOR_F16: LANES OUTH(floorf(HA)); break;
    case R3_V_CEIL_F16: LANES OUTH(ceilf(HA)); break;
    case R3_V_TRUNC_F16: LANES OUTH(truncf(HA)); break;
    case R3_V_RNDNE_F16: LANES OUTH(nearbyintf(HA)); break;
    case R3_V_SIN_F16: LANES OUTH(r3_sin(HA)); break;
    case R3_V_COS_F16: LANES OUTH(r3_cos(HA)); break;
    /* rounding and transcendentals */
    case R3_V_TRUNC_F32: LANES OUTF(truncf(FA)); break;
    case R3_V_CEIL_F32: LANES OUTF(ceilf(FA)); break;
    case R3_V_FLOOR_F32: LANES OUTF(floorf(FA)); break;
    case R3_V_RNDNE_F32: LANES OUTF(nearbyintf(FA)); break;
    case R3_V_FRACT_F32: LANES {
        float x = FA, r = x - floorf(x);
        OUTF(isnan(x) ? r3_quiet(x) : isinf(x) ? NAN : r < 0x1.fffffep-1f ? r : 0x1.fffffep-1f);
      }
      break;
    case R3_V_TRUNC_F64: LANES OUTD(trunc(DA)); break;
    case R3_V_CEIL_F64: LANES OUTD(ceil(DA)); break;
    case R3_V_FLOOR_F64: LANES OUTD(floor(DA)); break;
    case R3_V_RNDNE_F64: LANES OUTD(nearbyint(DA)); break;
    case R3_V_FRACT_F64: LANES {
        double x = DA, r = x - floor(x);
        OUTD(isnan(x) ? r3_quietd(x) : isinf(x) ? NAN : r < 0x1.fffffffffffffp-1 ? r : 0x1.fffffffffffffp-1);
      }
      break;
    case R3_V_EXP_F32: LANES OUTF(r3_exp2(FA)); break;
    case R3_V_LOG_F32: LANES OUTF(r3_log2(FA)); break;
    case R3_V_RCP_F32: case R3_V_RCP_IFLAG_F32: LANES OUTF(r3_rcp(FA)); break;
    case R3_V_RSQ_F32: LANES OUTF(r3_rsq(FA)); break;
    case R3_V_SQRT_F32: LANES OUTF(sqrtf(FA)); break;
    case R3_V_SIN_F32: LANES OUTF(r3_sin(FA)); break;
    case R3_V_COS_F32: LANES OUTF(r3_cos(FA)); break;
    case R3_V_RCP_F64: LANES OUTD(1.0 / DA); break;
    case R3_V_RSQ_F64: LANES OUTD(1.0 / sqrt(DA)); break;
    case R3_V_SQRT_F64: LANES OUTD(sqrt(DA)); break;
    case R3_V_LDEXP_F32: LANES { int32_t e = (int32_t)B; OUTF(ldexpf(FA, e < -1000 ? -1000 : e > 1000 ? 1000 : e)); } break;
    case R3_V_LDEXP_F64: LANES { int32_t e = (int32_t)B; OUTD(ldexp(DA, e < -5000 ? -5000 : e > 5000 ? 5000 : e)); } break;
    case R3_V_FREXP_MANT_F32: LANES { float x = FA; int e; OUTF(isnan(x) || isinf(x) ? x : frexpf(x, &e)); } break;
    case R3_V_FREXP_EXP_I32_F32: LANES { float x = FA; int e = 0; if (!isnan(x) && !isinf(x)) frexpf(x, &e); OUT((uint32_t)e); } break;
    case R3_V_FREXP_MANT_F64: LANES { double x = DA; int e; OUTD(isnan(x) || isinf(x) ? x : frexp(x, &e)); } break;
    case R3_V_FREXP_EXP_I32_F64: LANES { double x = DA; int e = 0; if (!isnan(x) && !isinf(x)) frexp(x, &e); OUT((uint32_t)e); } break;
    /* f64 arithmetic */
    case R3_V_ADD_F64: LANES OUTD(DA + DB); break;
    case R3_V_MUL_F64: LANES OUTD(DA * DB); break;
    case R3_V_MIN_F64: LANES OUTD(r3_dmin(DA, DB)); break;
    case R3_V_MAX_F64: LANES OUTD(r3_dmax(DA, DB)); break;
    case R3_V_FMA_F64: LANES OUTD(fma(DA, DB, DC)); break;
    /* division helpers */
    case R3_V_DIV_SCALE_F32: LANES { int v; OUTF(r3_div_scale32(FA, FB, FC, &v)); *cmask |= (uint32_t)v << l; } break;
    case R3_V_DIV_SCALE_F64: LANES { int v; OUTD(r3_div_scale64(DA, DB, DC, &v)); *cmask |= (uint32_t)v << l; } break;
    case R3_V_DIV_FMAS_F32: {
      uint32_t vcc = w->s[R3_VCC];
      LANES {
        float r = fmaf(FA, FB, FC);
        OUTF((vcc >> l) & 1 ? ldexpf(r, r3_exp32(FC) > 127 ? 64 : -64) : r);
      }
      break;
    }
    case R3_V_DIV_FMAS_F64: {
      uint32_t vcc = w->s[R3_VCC];
      LANES {
        double r = fma(DA, DB, DC);
        OUTD((vcc >> l) & 1 ? ldexp(r, r3_exp64(DC) > 1023 ? 128 : -128) : r);
      }
      break;
    }
    case R3_V_DIV_FIXUP_F32: LANES OUTF(r3_div_fixup32(FA, FB, FC)); break;
    case R3_V_DIV_FIXUP_F64: LANES OUTD(r3_div_fixup64(DA, DB, DC)); break;
    /* 16-bit integer ops: op_sel picks source halves; the other half of the destination is kept */
    case R3_V_ADD_NC_U16: case R3_V_SUB_NC_U16: case R3_V_MUL_LO_U16: case R3_V_LSHLREV_B16: case R3_V_LSHRREV_B16:
    case R3_V_ASHRREV_I16: case R3_V_AND_B16: case R3_V_OR_B16: case R3_V_XOR_B16: case R3_V_MAX_U16:
    case R3_V_MAX_I16: case R3_V_MIN_U16: case R3_V_MIN_I16: case R3_V_ADD_NC_I16: case R3_V_SUB_NC_I16:
    case R3_V_MAD_U16: case R3_V_MAD_I16: case R3_V_MIN3_I16: case R3_V_MIN3_U16: case R3_V_MAX3_I16:
    case R3_V_MAX3_U16: case R3_V_MED3_I16: case R3_V_MED3_U16: case R3_V_MAD_U32_U16: case R3_V_MAD_I32_I16:
      LANES {
        uint16_t a = (uint16_t)((in->opsel & 1) ? A >> 16 : A), b = (uint16_t)((in->opsel & 2) ? B >> 16 : B), r;
        uint32_t c32 = ns > 2 ? C : 0;
        uint16_t cc = (uint16_t)((in->opsel & 4) ? c32 >> 16 : c32);
        int16_t sa = (int16_t)a, sb_ = (int16_t)b, sc = (int16_t)cc;
        if (id == R3_V_MAD_U32_U16) { uint64_t t = (uint64_t)a * b + c32; OUT(sat && t > UINT32_MAX ? UINT32_MAX : (uint32_t)t); continue; }
        if (id == R3_V_MAD_I32_I16) { OUT((uint32_t)sat32((int64_t)sa * sb_ + (int32_t)c32, sat)); continue; }
        switch (id) {
          case R3_V_ADD_NC_U16: r = satu16((int32_t)a + b, sat); break;
          case R3_V_SUB_NC_U16: r = satu16((int32_t)a - b, sat); break;
          case R3_V_MUL_LO_U16: r = (uint16_t)(a * b); break;
          case R3_V_LSHLREV_B16: r = (uint16_t)(b << (a & 15)); break;
          case R3_V_LSHRREV_B16: r = (uint16_t)(b >> (a & 15)); break;
          case R3_V_ASHRREV_I16: r = (uint16_t)((int16_t)b >> (a & 15)); break;
          case R3_V_AND_B16: r = a & b; break;
          case R3_V_MAX_U16: r = a > b ? a : b; break;
          case R3_V_MIN_U16: r = a < b ? a : b; break;
          case R3_V_MAX_I16: r = (int16_t)a > (int16_t)b ? a : b; break;
          case R3_V_MIN_I16: r = (int16_t)a < (int16_t)b ? a : b; break;
          case R3_V_ADD_NC_I16: r = sati16((int32_t)sa + sb_, sat); break;
          case R3_V_SUB_NC_I16: r = sati16((int32_t)sa - sb_, sat); break;
          case R3_V_MAD_U16: r = satu16((int64_t)a * b + cc, sat); break;
          case R3_V_MAD_I16: r = sati16((int64_t)sa * sb_ + sc, sat); break;
          case R3_V_MIN3_U16: { uint16_t m = a < b ? a : b; r = m < cc ? m : cc; break; }
          case R3_V_MAX3_U16: { uint16_t m = a > b ? a : b; r = m > cc ? m : cc; break; }
          case R3_V_MIN3_I16: { int16_t m = sa < sb_ ? sa : sb_; r = (uint16_t)(m < sc ? m : sc); break; }
          case R3_V_MAX3_I16: { int16_t m = sa > sb_ ? sa : sb_; r = (uint16_t)(m > sc ? m : sc); break; }
          case R3_V_MED3_U16: { uint16_t mx = a > b ? a : b, mn = a < b ? a : b, t = mx < cc ? mx : cc; r = mn > t ? mn : t; break; }
          case R3_V_MED3_I16: { int16_t mx = sa > sb_ ? sa : sb_, mn = sa < sb_ ? sa : sb_, t = mx < sc ? mx : sc; r = (uint16_t)(mn > t ? mn : t); break; }
          case R3_V_OR_B16: r = a | b; break;
          default: r = a ^ b; break;
        }
        uint32_t old = w->v[in->dst][l];
        OUT((in->opsel & 8) ? (old & 0xffffu) | (uint32_t)r << 16 : (old & 0xffff0000u) | r);
      }
      break;
    case R3_V_PK_MAD_I16: case R3_V_PK_MUL_LO_U16: case R3_V_PK_ADD_I16: case R3_V_PK_SUB_I16:
    case R3_V_PK_LSHLREV_B16: case R3_V_PK_LSHRREV_B16: case R3_V_PK_ASHRREV_I16: case R3_V_PK_MAX_I16:
    case R3_V_PK_MIN_I16: case R3_V_PK_MAD_U16: case R3_V_PK_ADD_U16: case R3_V_PK_SUB_U16: case R3_V_PK_MAX_U16:
    case R3_V_PK_MIN_U16:
      /* per half h: source s's half is op_sel bit s (low result) or op_sel_hi bit s (high result) */
      LANES {
        uint32_t r = 0;
        for (int h = 0; h < 2; h++) {
          uint8_t sel = h ? in->omod : in->opsel;
          uint16_t a = (uint16_t)((sel & 1) ? A >> 16 : A), b = (uint16_t)((sel & 2) ? B >> 16 : B);
          uint16_t cc = ns > 2 ? (uint16_t)((sel & 4) ? C >> 16 : C) : 0, v;
          int16_t sa = (int16_t)a, sb_ = (int16_t)b, sc = (int16_t)cc;
          switch (id) {
            case R3_V_PK_MAD_I16: v = sati16((int64_t)sa * sb_ + sc, sat); break;
            case R3_V_PK_MAD_U16: v = satu16((int64_t)a * b + cc, sat); break;
            case R3_V_PK_MUL_LO_U16: v = (uint16_t)(a * b); break;
            case R3_V_PK_ADD_I16: v = sati16((int32_t)sa + sb_, sat); break;
            case R3_V_PK_ADD_U16: v = satu16((int32_t)a + b, sat); break;
            case R3_V_PK_SUB_I16: v = sati16((int32_t)sa - sb_, sat); break;
            case R3_V_PK_SUB_U16: v = satu16((int32_t)a - b, sat); break;
            case R3_V_PK_LSHLREV_B16: v = (uint16_t)(b << (a & 15)); break;
            case R3_V_PK_LSHRREV_B16: v = (uint16_t)(b >> (a & 15)); break;
            case R3_V_PK_ASHRREV_I16: v = (uint16_t)((int16_t)b >> (a & 15)); break;
            case R3_V_PK_MAX_I16: v = (int16_t)a > (int16_t)b ? a : b; break;
            case R3_V_PK_MIN_I16: v = (int16_t)a < (int16_t)b ? a : b; break;
            case R3_V_PK_MAX_U16: v = a > b ? a : b; break;
            default: v = a < b ? a : b; break;
          }
          r |= (uint32_t)v << (16 * h);
        }
        OUT(r);
      }
      break;
    case R3_V_PACK_B32_F16: LANES OUT((A & 0xffff) | B << 16); break; /* halves chosen by op_sel in the fetch */
    case R3_V_PK_FMA_F16: case R3_V_PK_ADD_F16: case R3_V_PK_MUL_F16: case R3_V_PK_MIN_F16: case R3_V_PK_MAX_F16:
      /* per half h: op_sel / op_sel_hi pick each source's half, neg_lo / neg_hi negate it */
      LANES {
        uint32_t r = 0;
        for (int h = 0; h < 2; h++) {
          uint8_t sel = h ? in->omod : in->opsel, ng = h ? in->abs : in->neg;
          float x[3] = {0, 0, 0};
          for (int k = 0; k < ns; k++) {
            uint32_t v = k == 0 ? A : k == 1 ? B : C;
            x[k] = r3_h2f((uint16_t)((sel >> k) & 1 ? v >> 16 : v));
            if ((ng >> k) & 1) x[k] = -x[k];
          }
          float v;
          switch (id) {
            case R3_V_PK_FMA_F16: v = (float)fma(x[0], x[1], x[2]); break;
            case R3_V_PK_ADD_F16: v = x[0] + x[1]; break;
            case R3_V_PK_MUL_F16: v = x[0] * x[1]; break;
            case R3_V_PK_MIN_F16: v = r3_fmin(x[0], x[1]); break;
            default: v = r3_fmax(x[0], x[1]); break;
          }
          r |= (uint32_t)r3_f2h(v) << (16 * h);
        }
        OUT(r);
      }
      break;
    case R3_V_FMA_MIX_F32: case R3_V_FMA_MIXLO_F16: case R3_V_FMA_MIXHI_F16:
      /* each source is f32, or (op_sel_hi bit) an f16 from the half op_sel picks; neg_lo negates, neg_hi is abs */
      LANES {
        double x[3];
        for (int k = 0; k < 3; k++) {
          uint32_t v = k == 0 ? A : k == 1 ? B : C;
          unsigned code = codes[k];
          if ((in->omod >> k) & 1) {
            uint16_t hv = code >= 240 && code <= 248 ? (uint16_t)(v == k_f32[code - 240] ? k_f16[code - 240] : v)
                                                     : (uint16_t)((in->opsel >> k) & 1 ? v >> 16 : v);
            x[k] = r3_h2f(hv);
          } else {
            x[k] = r3_f(v);
          }
          if ((in->abs >> k) & 1) x[k] = fabs(x[k]);
          if ((in->neg >> k) & 1) x[k] = -x[k];
        }
        float f = (float)fma(x[0], x[1], x[2]);
        uint32_t old = w->v[in->dst][l];
        if (id == R3_V_FMA_MIX_F32) OUTF(fmaf((float)x[0], (float)x[1], (float)x[2]));
        else if (id == R3_V_FMA_MIXLO_F16) OUT((old & 0xffff0000u) | r3_f2h(f));
        else OUT((old & 0xffffu) | (uint32_t)r3_f2h(f) << 16);
      }
      break;
    default: return false;
  }
  if (float_result(id)) {
    bool d64 = fl & F_D64;
    if (w->ftz_out32 && !d64) LANES lo[l] = flush32(lo[l]);
    if (in->omod && e64) {
      double f = in->omod == 1 ? 2.0 : in->omod == 2 ? 4.0 : 0.5;
      if (d64) LANES { double x = r3_d(lo[l] | (uint64_t)hi[l] << 32) * f; OUTD(x); }
      else LANES OUTF(r3_f(lo[l]) * (float)f);
    }
    if (in->clamp && e64) { /* clamp to [0, 1]; NaN becomes 0 (DX10 clamp mode, the compute default) */
      if (d64) LANES { double x = r3_d(lo[l] | (uint64_t)hi[l] << 32); OUTD(isnan(x) || x < 0 ? 0.0 : x > 1 ? 1.0 : x); }
      else LANES { float x = r3_f(lo[l]); OUTF(isnan(x) || x < 0 ? 0.0f : x > 1 ? 1.0f : x); }
    }
  }
  return true;
}

static void vwrite(wave *w, unsigned dst, bool d64, const uint32_t *lo, const uint32_t *hi) {
  uint32_t exec = w->s[R3_EXEC];
  if (exec == 0xffffffffu) {
    memcpy(w->v[dst], lo, 128);
    if (d64) memcpy(w->v[(dst + 1) & 255], hi, 128);
    return;
  }
  uint32_t *d0 = w->v[dst], *d1 = w->v[(dst + 1) & 255];
  for (uint32_t e = exec; e; e &= e - 1) { /* only the active lanes (often few: serial tails, guards) */
    int l = __builtin_ctz(e);
    d0[l] = lo[l];
    if (d64) d1[l] = hi[l];
  }
}

hcq_status r3_valu(ex *c, wave *w, const r3_inst *in) {
  uint32_t lo[32], hi[32], cm, exec = w->s[R3_EXEC];
  unsigned id = in->id;
  const r3_opinfo *o = r3_info_ready(id);
  bool e64 = in->enc == E_VOP3;
  if (in->enc == E_VOPD) {
    uint32_t lo2[32], hi2[32], cm2;
    if (!vcompute(w, in, id, in->src, false, R3_VCC, lo, hi, &cm)) return r3_bad(c, w, in, "not implemented");
    r3_inst iy = *in;
    iy.dst = in->dsty;
    if (!vcompute(w, &iy, in->idy, in->srcy, false, R3_VCC, lo2, hi2, &cm2)) return r3_bad(c, w, in, "not implemented");
    vwrite(w, in->dst, false, lo, hi);
    vwrite(w, in->dsty, false, lo2, hi2);
    return HCQ_OK;
  }
  if (id == R3_V_NOP) return HCQ_OK;
  if (in->enc == E_VOP3P && r3_is_dot(id)) return r3_dot(c, w, in);
  if (id == R3_V_READLANE_B32 || id == R3_V_WRITELANE_B32) {
    uint32_t lane = sval32(w, in->src[1], in->lit, 0) & 31;
    if (id == R3_V_READLANE_B32) {
      if (in->src[0] < R3_VGPR) return r3_bad(c, w, in, "v_readlane_b32 needs a VGPR source");
      swrite32(w, in->dst, w->v[in->src[0] - R3_VGPR][lane]);
    } else {
      w->v[in->dst][lane] = sval32(w, in->src[0], in->lit, 0);
    }
    return HCQ_OK;
  }
  if (in->clamp && !clamp_modelled(id)) return r3_bad(c, w, in, "clamp is not modelled for this instruction");
  if (e64 && in->omod && !float_result(id)) return r3_bad(c, w, in, "omod is not modelled for this instruction");
  unsigned mask_code = (o->flags & F_CIN) ? (e64 ? in->src[2] : R3_VCC) : R3_NULL;
  if (!vcompute(w, in, id, in->src, e64, mask_code, lo, hi, &cm)) return r3_bad(c, w, in, "not implemented");
  if (id >= R3_VOPC_BASE) {
    cm &= exec;
    if (o->flags & F_NODST) w->s[R3_EXEC] = cm; /* v_cmpx: EXEC only (gfx11) */
    else swrite32(w, in->sdst, cm);
    return HCQ_OK;
  }
  if (id == R3_V_READFIRSTLANE_B32) {
    swrite32(w, in->dst, lo[exec ? __builtin_ctz(exec) : 0]);
    return HCQ_OK;
  }
  vwrite(w, in->dst, (o->flags & F_D64) != 0, lo, hi);
  if ((o->flags & F_VOP3B) || (o->flags & F_COUT)) swrite32(w, in->sdst, cm & exec);
  return HCQ_OK;
}
