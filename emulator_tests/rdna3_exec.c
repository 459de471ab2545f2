/* RDNA3 executor: runs a decoded program (rdna3_decode.c) over a dispatch. One wave = 32 lanes; SGPRs, VGPRs
 * ([register][lane], so an operation is a loop over 32 adjacent values), EXEC/VCC/SCC, LDS per workgroup. Waves of a
 * workgroup run in turn between s_barrier points; everything executes in order, so s_waitcnt is a no-op. Initial
 * state per AMDGPUUsage.rst "Initial Kernel Execution State" (user SGPRs in the order of the enables in
 * kernel_code_properties, then workgroup ids from SGPR user_sgpr_count on; work-item ids packed in v0 on gfx11:
 * x bits 9:0, y 19:10, z 29:20). Semantics per the RDNA3 ISA guide; float ops use the host's IEEE binary32/64
 * arithmetic (round to nearest even), fused multiply-adds through fmaf/fma (one rounding). */
#pragma GCC optimize("fp-contract=off") /* a*b+c must round twice, as the GPU's separate mul and add do */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator_tests/rdna3_float.h"
#include "emulator_tests/rdna3_internal.h"

typedef struct wave {
  uint32_t s[128];
  uint32_t (*v)[32];
  bool scc;
  int state; /* 0 running, 1 at a barrier, 2 ended */
  size_t pc;
  uint64_t ninst;
  int id;
  uint8_t *scratch; /* private_segment_B per lane */
  uint32_t mode;    /* MODE hardware register: FP_ROUND 3:0, FP_DENORM 7:4 (f32 5:4), DX10_CLAMP 8, IEEE 9 */
  int ftz_in32, ftz_out32; /* from FP_DENORM f32: 0 flush in+out, 1 flush out, 2 flush in, 3 none */
} wave;

typedef struct ex {
  const rdna3_program *p;
  const rdna3_mem_ops *mem;
  const rdna3_dispatch *d;
  uint8_t *lds;
  uint32_t lds_B;
  uint32_t wg[3];
  uint64_t max_insts, max_total;
} ex;

/* ---- errors ---- */

static hcq_status fault(ex *c, wave *w, const r3_inst *in, int lane, uint64_t addr, const char *what,
                        hcq_status inner) {
  char dis[192];
  r3_print(in, dis, sizeof dis);
  char who[32] = "scalar unit";
  if (lane >= 0) snprintf(who, sizeof who, "lane %d", lane);
  hcq_status st = hcq_status_make(HCQ_CODE_INVALID,
                                  "rdna3: GPU page fault: %s of address 0x%" PRIx64 " by `%s` at code offset 0x%x, "
                                  "%s of wave %d in workgroup (%u,%u,%u)%s%s",
                                  what, addr, dis, in->off_B, who, w->id, c->wg[0], c->wg[1], c->wg[2],
                                  inner ? ": " : "", inner ? hcq_status_message(inner) : "");
  hcq_status_free(inner);
  return st;
}

static hcq_status bad(ex *c, wave *w, const r3_inst *in, const char *why) {
  char dis[192];
  r3_print(in, dis, sizeof dis);
  return hcq_status_make(HCQ_CODE_UNSUPPORTED, "rdna3: `%s` at code offset 0x%x (wave %d, workgroup (%u,%u,%u)): %s",
                         dis, in->off_B, w->id, c->wg[0], c->wg[1], c->wg[2], why);
}

/* ---- operands ---- */

static const uint32_t k_f32[9] = {0x3f000000, 0xbf000000, 0x3f800000, 0xbf800000, 0x40000000, 0xc0000000,
                                  0x40800000, 0xc0800000, 0x3e22f983};
static const uint64_t k_f64[9] = {0x3fe0000000000000, 0xbfe0000000000000, 0x3ff0000000000000, 0xbff0000000000000,
                                  0x4000000000000000, 0xc000000000000000, 0x4010000000000000, 0xc010000000000000,
                                  0x3fc45f306dc9c882};
static const uint16_t k_f16[9] = {0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118};

/* Scalar value of operand code (kind: 0 int, 1 f32, 2 f64 (64-bit), 3 f16). */
static uint32_t sval32(const wave *w, unsigned code, uint32_t lit, int kind) {
  if (code < 128) return code == R3_NULL ? 0 : w->s[code];
  if (code <= 192) return code - 128;
  if (code <= 208) return (uint32_t)(192 - (int)code);
  if (code >= 240 && code <= 248) return kind == 3 ? k_f16[code - 240] : k_f32[code - 240];
  switch (code) {
    case R3_LIT: return lit;
    case R3_SCC: return w->scc;
    case R3_VCCZ: return w->s[R3_VCC] == 0;
    case R3_EXECZ: return w->s[R3_EXEC] == 0;
    default: return 0;
  }
}
static uint64_t sval64(const wave *w, unsigned code, uint32_t lit, int kind) {
  if (code < 128) return code == R3_NULL ? 0 : w->s[code] | (uint64_t)w->s[(code + 1) & 127] << 32;
  if (code <= 192) return code - 128;
  if (code <= 208) return (uint64_t)(int64_t)(192 - (int)code);
  if (code >= 240 && code <= 248) return k_f64[code - 240]; /* a 64-bit operand's float constants are doubles */
  if (code == R3_LIT) /* a float64 literal gives the high half; an integer one is sign-extended */ return kind == 2 ? (uint64_t)lit << 32 : (uint64_t)(int64_t)(int32_t)lit;
  return sval32(w, code, lit, kind);
}

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
  for (int l = 0; l < 32; l++) {
    if (ftz) s->t[l] = flush32(s->t[l]);
    if (abs) s->t[l] &= ~sign;
    if (neg) s->t[l] ^= sign;
  }
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

static void swrite32(wave *w, unsigned code, uint32_t v) {
  if (code < 128 && code != R3_NULL) w->s[code] = v;
}
static void swrite64(wave *w, unsigned code, uint64_t v) {
  if (code < 127 && code != R3_NULL) w->s[code] = (uint32_t)v, w->s[code + 1] = (uint32_t)(v >> 32);
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
    bool mods = (fl & F_FP) || id == R3_V_CNDMASK_B32; /* v_cndmask_b32_e64 takes float source modifiers too */
    bool ab = e64 && ((in->abs >> k) & 1) && mods, ng = e64 && ((in->neg >> k) & 1) && mods;
    if (w64) fetch64(w, in, codes[k], kind, ab, ng, &s[k]);
    else fetch32(w, in, codes[k], kind, ab, ng, e64 && kind == 3 && ((in->opsel >> k) & 1), &s[k]);
  }
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
    case R3_V_CNDMASK_B32: LANES OUT((mask >> l) & 1 ? B : A); break;
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
    case R3_V_SUBREV_NC_U32: LANES OUT(B - A); break;
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
        if (id == R3_V_MAD_U32_U16) { OUT((uint32_t)a * b + c32); continue; }
        if (id == R3_V_MAD_I32_I16) { OUT((uint32_t)((int32_t)sa * sb_) + c32); continue; }
        switch (id) {
          case R3_V_ADD_NC_U16: r = (uint16_t)(a + b); break;
          case R3_V_SUB_NC_U16: r = (uint16_t)(a - b); break;
          case R3_V_MUL_LO_U16: r = (uint16_t)(a * b); break;
          case R3_V_LSHLREV_B16: r = (uint16_t)(b << (a & 15)); break;
          case R3_V_LSHRREV_B16: r = (uint16_t)(b >> (a & 15)); break;
          case R3_V_ASHRREV_I16: r = (uint16_t)((int16_t)b >> (a & 15)); break;
          case R3_V_AND_B16: r = a & b; break;
          case R3_V_MAX_U16: r = a > b ? a : b; break;
          case R3_V_MIN_U16: r = a < b ? a : b; break;
          case R3_V_MAX_I16: r = (int16_t)a > (int16_t)b ? a : b; break;
          case R3_V_MIN_I16: r = (int16_t)a < (int16_t)b ? a : b; break;
          case R3_V_ADD_NC_I16: r = (uint16_t)(a + b); break;
          case R3_V_SUB_NC_I16: r = (uint16_t)(a - b); break;
          case R3_V_MAD_U16: case R3_V_MAD_I16: r = (uint16_t)(a * b + cc); break;
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
          switch (id) {
            case R3_V_PK_MAD_I16: case R3_V_PK_MAD_U16: v = (uint16_t)(a * b + cc); break;
            case R3_V_PK_MUL_LO_U16: v = (uint16_t)(a * b); break;
            case R3_V_PK_ADD_I16: case R3_V_PK_ADD_U16: v = (uint16_t)(a + b); break;
            case R3_V_PK_SUB_I16: case R3_V_PK_SUB_U16: v = (uint16_t)(a - b); break;
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
  for (int l = 0; l < 32; l++)
    if ((exec >> l) & 1) {
      w->v[dst][l] = lo[l];
      if (d64) w->v[(dst + 1) & 255][l] = hi[l];
    }
}

static hcq_status valu(ex *c, wave *w, const r3_inst *in) {
  uint32_t lo[32], hi[32], cm, exec = w->s[R3_EXEC];
  unsigned id = in->id;
  const r3_opinfo *o = r3_info_ready(id);
  bool e64 = in->enc == E_VOP3;
  if (in->enc == E_VOPD) {
    uint32_t lo2[32], hi2[32], cm2;
    if (!vcompute(w, in, id, in->src, false, R3_VCC, lo, hi, &cm)) return bad(c, w, in, "not implemented");
    r3_inst iy = *in;
    iy.dst = in->dsty;
    if (!vcompute(w, &iy, in->idy, in->srcy, false, R3_VCC, lo2, hi2, &cm2)) return bad(c, w, in, "not implemented");
    vwrite(w, in->dst, false, lo, hi);
    vwrite(w, in->dsty, false, lo2, hi2);
    return HCQ_OK;
  }
  if (id == R3_V_NOP) return HCQ_OK;
  if (id == R3_V_READLANE_B32 || id == R3_V_WRITELANE_B32) {
    uint32_t lane = sval32(w, in->src[1], in->lit, 0) & 31;
    if (id == R3_V_READLANE_B32) {
      if (in->src[0] < R3_VGPR) return bad(c, w, in, "v_readlane_b32 needs a VGPR source");
      swrite32(w, in->dst, w->v[in->src[0] - R3_VGPR][lane]);
    } else {
      w->v[in->dst][lane] = sval32(w, in->src[0], in->lit, 0);
    }
    return HCQ_OK;
  }
  unsigned mask_code = (o->flags & F_CIN) ? (e64 ? in->src[2] : R3_VCC) : R3_NULL;
  if (!vcompute(w, in, id, in->src, e64, mask_code, lo, hi, &cm)) return bad(c, w, in, "not implemented");
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

/* ---- SALU ---- */

static hcq_status set_mode(ex *c, wave *w, const r3_inst *in, uint32_t mode) {
  if (mode & 15) return bad(c, w, in, "a rounding mode other than round-to-nearest-even is not modelled");
  w->mode = mode;
  int dm = (mode >> 4) & 3;
  w->ftz_in32 = dm == 0 || dm == 2;
  w->ftz_out32 = dm == 0 || dm == 1;
  return HCQ_OK;
}

static hcq_status salu(ex *c, wave *w, const r3_inst *in) {
  const r3_opinfo *o = r3_info_ready(in->id);
  uint32_t fl = o->flags;
  uint32_t a = 0, b = 0;
  uint64_t a64 = 0, b64 = 0;
  if (o->nsrc > 0) a = sval32(w, in->src[0], in->lit, 0), a64 = (fl & F_S0_64) ? sval64(w, in->src[0], in->lit, 0) : a;
  if (o->nsrc > 1) b = sval32(w, in->src[1], in->lit, 0), b64 = (fl & F_S1_64) ? sval64(w, in->src[1], in->lit, 0) : b;
  uint32_t r = 0;
  uint64_t r64 = 0;
  bool scc = w->scc;
  int32_t sa = (int32_t)a, sb = (int32_t)b;
  switch (in->id) {
    case R3_S_ADD_U32: r64 = (uint64_t)a + b, r = (uint32_t)r64, scc = r64 >> 32; break;
    case R3_S_SUB_U32: r = a - b, scc = b > a; break;
    case R3_S_ADD_I32: r = a + b, scc = ((~(a ^ b)) & (a ^ r)) >> 31; break;
    case R3_S_SUB_I32: r = a - b, scc = ((a ^ b) & (a ^ r)) >> 31; break;
    case R3_S_ADDC_U32: r64 = (uint64_t)a + b + w->scc, r = (uint32_t)r64, scc = r64 >> 32; break;
    case R3_S_SUBB_U32: r = a - b - w->scc, scc = (uint64_t)b + w->scc > a; break;
    case R3_S_ABSDIFF_I32: r = sa > sb ? a - b : b - a, scc = r != 0; break;
    case R3_S_LSHL_B32: r = a << (b & 31), scc = r != 0; break;
    case R3_S_LSHR_B32: r = a >> (b & 31), scc = r != 0; break;
    case R3_S_ASHR_I32: r = (uint32_t)(sa >> (b & 31)), scc = r != 0; break;
    case R3_S_LSHL_B64: r64 = a64 << (b & 63), scc = r64 != 0; break;
    case R3_S_LSHR_B64: r64 = a64 >> (b & 63), scc = r64 != 0; break;
    case R3_S_ASHR_I64: r64 = (uint64_t)((int64_t)a64 >> (b & 63)), scc = r64 != 0; break;
    case R3_S_LSHL1_ADD_U32: case R3_S_LSHL2_ADD_U32: case R3_S_LSHL3_ADD_U32: case R3_S_LSHL4_ADD_U32: {
      int sh = 1 + (int)(in->id - R3_S_LSHL1_ADD_U32);
      r64 = ((uint64_t)a << sh) + b, r = (uint32_t)r64, scc = r64 >> 32 != 0;
      break;
    }
    case R3_S_MIN_I32: r = sa < sb ? a : b, scc = sa < sb; break;
    case R3_S_MIN_U32: r = a < b ? a : b, scc = a < b; break;
    case R3_S_MAX_I32: r = sa > sb ? a : b, scc = sa > sb; break;
    case R3_S_MAX_U32: r = a > b ? a : b, scc = a > b; break;
    case R3_S_AND_B32: r = a & b, scc = r != 0; break;
    case R3_S_OR_B32: r = a | b, scc = r != 0; break;
    case R3_S_XOR_B32: r = a ^ b, scc = r != 0; break;
    case R3_S_NAND_B32: r = ~(a & b), scc = r != 0; break;
    case R3_S_NOR_B32: r = ~(a | b), scc = r != 0; break;
    case R3_S_XNOR_B32: r = ~(a ^ b), scc = r != 0; break;
    case R3_S_AND_NOT1_B32: r = a & ~b, scc = r != 0; break;
    case R3_S_OR_NOT1_B32: r = a | ~b, scc = r != 0; break;
    case R3_S_AND_B64: r64 = a64 & b64, scc = r64 != 0; break;
    case R3_S_OR_B64: r64 = a64 | b64, scc = r64 != 0; break;
    case R3_S_XOR_B64: r64 = a64 ^ b64, scc = r64 != 0; break;
    case R3_S_AND_NOT1_B64: r64 = a64 & ~b64, scc = r64 != 0; break;
    case R3_S_OR_NOT1_B64: r64 = a64 | ~b64, scc = r64 != 0; break;
    case R3_S_BFE_U32: case R3_S_BFE_I32: {
      uint32_t off = b & 31, wd = (b >> 16) & 127;
      if (wd > 32) wd = 32;
      uint32_t v = wd ? (a >> off) & (uint32_t)((1ull << wd) - 1) : 0;
      if (in->id == R3_S_BFE_I32 && wd && wd < 32) v = (uint32_t)((int32_t)(v << (32 - wd)) >> (32 - wd));
      r = v, scc = r != 0;
      break;
    }
    case R3_S_BFE_U64: case R3_S_BFE_I64: {
      uint32_t off = b & 63, wd = (b >> 16) & 127;
      if (wd > 64) wd = 64;
      uint64_t v = wd ? (a64 >> off) & (wd == 64 ? ~0ull : (1ull << wd) - 1) : 0;
      if (in->id == R3_S_BFE_I64 && wd && wd < 64) v = (uint64_t)((int64_t)(v << (64 - wd)) >> (64 - wd));
      r64 = v, scc = r64 != 0;
      break;
    }
    case R3_S_BFM_B32: r = (uint32_t)((1ull << (a & 31)) - 1) << (b & 31); break;
    case R3_S_MUL_I32: r = a * b; break;
    case R3_S_MUL_HI_U32: r = (uint32_t)((uint64_t)a * b >> 32); break;
    case R3_S_MUL_HI_I32: r = (uint32_t)((uint64_t)((int64_t)sa * sb) >> 32); break;
    case R3_S_CSELECT_B32: r = w->scc ? a : b; break;
    case R3_S_CSELECT_B64: r64 = w->scc ? a64 : b64; break;
    case R3_S_PACK_LL_B32_B16: r = (a & 0xffff) | b << 16; break;
    case R3_S_PACK_LH_B32_B16: r = (a & 0xffff) | (b & 0xffff0000u); break;
    case R3_S_PACK_HH_B32_B16: r = a >> 16 | (b & 0xffff0000u); break;
    case R3_S_PACK_HL_B32_B16: r = a >> 16 | b << 16; break;
    case R3_S_MOV_B32: r = a; break;
    case R3_S_MOV_B64: r64 = a64; break;
    case R3_S_CMOV_B32: if (!w->scc) return HCQ_OK; r = a; break;
    case R3_S_CMOV_B64: if (!w->scc) return HCQ_OK; r64 = a64; break;
    case R3_S_NOT_B32: r = ~a, scc = r != 0; break;
    case R3_S_NOT_B64: r64 = ~a64, scc = r64 != 0; break;
    case R3_S_BREV_B32: for (int k = 0; k < 32; k++) r |= ((a >> k) & 1) << (31 - k); break;
    case R3_S_CTZ_I32_B32: r = a ? (uint32_t)__builtin_ctz(a) : 0xffffffffu; break;
    case R3_S_CTZ_I32_B64: r = a64 ? (uint32_t)__builtin_ctzll(a64) : 0xffffffffu; break;
    case R3_S_CLZ_I32_U64: r = a64 ? (uint32_t)__builtin_clzll(a64) : 0xffffffffu; break;
    case R3_S_BCNT1_I32_B64: r = (uint32_t)__builtin_popcountll(a64), scc = r != 0; break;
    case R3_S_BREV_B64: for (int k = 0; k < 64; k++) r64 |= ((a64 >> k) & 1) << (63 - k); break;
    case R3_S_CLZ_I32_U32: r = a ? (uint32_t)__builtin_clz(a) : 0xffffffffu; break;
    case R3_S_SEXT_I32_I8: r = (uint32_t)(int32_t)(int8_t)a; break;
    case R3_S_SEXT_I32_I16: r = (uint32_t)(int32_t)(int16_t)a; break;
    case R3_S_BITSET0_B32: r = w->s[in->dst] & ~(1u << (a & 31)); break;
    case R3_S_BITSET1_B32: r = w->s[in->dst] | (1u << (a & 31)); break;
    case R3_S_ABS_I32: r = sa < 0 ? 0u - a : a, scc = r != 0; break;
    case R3_S_BCNT1_I32_B32: r = (uint32_t)__builtin_popcount(a), scc = r != 0; break;
    case R3_S_AND_SAVEEXEC_B32: case R3_S_OR_SAVEEXEC_B32: case R3_S_XOR_SAVEEXEC_B32:
    case R3_S_AND_NOT0_SAVEEXEC_B32: case R3_S_OR_NOT0_SAVEEXEC_B32: case R3_S_AND_NOT1_SAVEEXEC_B32:
    case R3_S_OR_NOT1_SAVEEXEC_B32: case R3_S_AND_NOT0_WREXEC_B32: case R3_S_AND_NOT1_WREXEC_B32: {
      uint32_t ex0 = w->s[R3_EXEC], nx;
      switch (in->id) {
        case R3_S_AND_SAVEEXEC_B32: nx = a & ex0; break;
        case R3_S_OR_SAVEEXEC_B32: nx = a | ex0; break;
        case R3_S_XOR_SAVEEXEC_B32: nx = a ^ ex0; break;
        case R3_S_AND_NOT0_SAVEEXEC_B32: case R3_S_AND_NOT0_WREXEC_B32: nx = ~a & ex0; break;
        case R3_S_OR_NOT0_SAVEEXEC_B32: nx = ~a | ex0; break;
        case R3_S_AND_NOT1_SAVEEXEC_B32: case R3_S_AND_NOT1_WREXEC_B32: nx = a & ~ex0; break;
        default: nx = a | ~ex0; break;
      }
      w->s[R3_EXEC] = nx;
      w->scc = nx != 0;
      bool wr = in->id == R3_S_AND_NOT0_WREXEC_B32 || in->id == R3_S_AND_NOT1_WREXEC_B32;
      swrite32(w, in->dst, wr ? nx : ex0);
      return HCQ_OK;
    }
    case R3_S_GETPC_B64: r64 = c->p->code_va + in->off_B + 4; break;
    case R3_S_SETPC_B64: {
      uint64_t va = a64;
      if (va < c->p->code_va || va >= c->p->code_va + UINT32_MAX) return bad(c, w, in, "jump outside the code");
      uint32_t off = (uint32_t)(va - c->p->code_va);
      size_t lo_i = 0, hi_i = c->p->n;
      while (lo_i < hi_i) {
        size_t mid = (lo_i + hi_i) / 2;
        if (c->p->insts[mid].off_B < off) lo_i = mid + 1;
        else hi_i = mid;
      }
      if (lo_i >= c->p->n || c->p->insts[lo_i].off_B != off) return bad(c, w, in, "jump to an address that is not an instruction");
      w->pc = lo_i;
      return HCQ_OK;
    }
    /* SOPC */
    case R3_S_CMP_EQ_I32: case R3_S_CMP_EQ_U32: w->scc = a == b; return HCQ_OK;
    case R3_S_CMP_LG_I32: case R3_S_CMP_LG_U32: w->scc = a != b; return HCQ_OK;
    case R3_S_CMP_GT_I32: w->scc = sa > sb; return HCQ_OK;
    case R3_S_CMP_GE_I32: w->scc = sa >= sb; return HCQ_OK;
    case R3_S_CMP_LT_I32: w->scc = sa < sb; return HCQ_OK;
    case R3_S_CMP_LE_I32: w->scc = sa <= sb; return HCQ_OK;
    case R3_S_CMP_GT_U32: w->scc = a > b; return HCQ_OK;
    case R3_S_CMP_GE_U32: w->scc = a >= b; return HCQ_OK;
    case R3_S_CMP_LT_U32: w->scc = a < b; return HCQ_OK;
    case R3_S_CMP_LE_U32: w->scc = a <= b; return HCQ_OK;
    case R3_S_BITCMP0_B32: w->scc = !((a >> (b & 31)) & 1); return HCQ_OK;
    case R3_S_BITCMP1_B32: w->scc = (a >> (b & 31)) & 1; return HCQ_OK;
    case R3_S_CMP_EQ_U64: w->scc = a64 == b64; return HCQ_OK;
    case R3_S_CMP_LG_U64: w->scc = a64 != b64; return HCQ_OK;
    default: return bad(c, w, in, "not implemented");
  }
  if (fl & F_D64) swrite64(w, in->dst, r64);
  else swrite32(w, in->dst, r);
  w->scc = scc;
  return HCQ_OK;
}

static hcq_status sopk(ex *c, wave *w, const r3_inst *in) {
  int32_t simm = in->imm;
  uint32_t uimm = (uint32_t)simm & 0xffff, d = w->s[in->dst];
  switch (in->id) {
    case R3_S_MOVK_I32: swrite32(w, in->dst, (uint32_t)simm); break;
    case R3_S_CMOVK_I32: if (w->scc) swrite32(w, in->dst, (uint32_t)simm); break;
    case R3_S_CMPK_EQ_I32: w->scc = (int32_t)d == simm; break;
    case R3_S_CMPK_LG_I32: w->scc = (int32_t)d != simm; break;
    case R3_S_CMPK_GT_I32: w->scc = (int32_t)d > simm; break;
    case R3_S_CMPK_GE_I32: w->scc = (int32_t)d >= simm; break;
    case R3_S_CMPK_LT_I32: w->scc = (int32_t)d < simm; break;
    case R3_S_CMPK_LE_I32: w->scc = (int32_t)d <= simm; break;
    case R3_S_CMPK_EQ_U32: w->scc = d == uimm; break;
    case R3_S_CMPK_LG_U32: w->scc = d != uimm; break;
    case R3_S_CMPK_GT_U32: w->scc = d > uimm; break;
    case R3_S_CMPK_GE_U32: w->scc = d >= uimm; break;
    case R3_S_CMPK_LT_U32: w->scc = d < uimm; break;
    case R3_S_CMPK_LE_U32: w->scc = d <= uimm; break;
    case R3_S_ADDK_I32: {
      uint32_t r = d + (uint32_t)simm;
      w->scc = ((~(d ^ (uint32_t)simm)) & (d ^ r)) >> 31;
      swrite32(w, in->dst, r);
      break;
    }
    case R3_S_MULK_I32: swrite32(w, in->dst, d * (uint32_t)simm); break;
    case R3_S_GETREG_B32: case R3_S_SETREG_B32: case R3_S_SETREG_IMM32_B32: {
      uint32_t hid = uimm & 63, off = (uimm >> 6) & 31, size = (uimm >> 11) + 1;
      uint32_t mask = (uint32_t)(((1ull << size) - 1) << off);
      if (hid != 1) return bad(c, w, in, "only the MODE hardware register is modelled");
      if (in->id == R3_S_GETREG_B32) {
        swrite32(w, in->dst, (w->mode & mask) >> off);
        break;
      }
      uint32_t v = in->id == R3_S_SETREG_B32 ? sval32(w, in->dst, 0, 0) : in->lit;
      return set_mode(c, w, in, (w->mode & ~mask) | ((v << off) & mask));
    }
    case R3_S_VERSION: case R3_S_WAITCNT_VSCNT: case R3_S_WAITCNT_VMCNT: case R3_S_WAITCNT_EXPCNT:
    case R3_S_WAITCNT_LGKMCNT: break;
    default: return bad(c, w, in, "not implemented");
  }
  return HCQ_OK;
}

/* ---- memory ---- */

static hcq_status smem(ex *c, wave *w, const r3_inst *in) {
  uint32_t n = 1u << (in->id - R3_S_LOAD_B32);
  uint64_t base = (w->s[in->src[0]] | (uint64_t)w->s[(in->src[0] + 1) & 127] << 32) & 0xffffffffffffull;
  uint64_t va = base + (uint64_t)(int64_t)in->imm + ((unsigned)in->imm1 == R3_NULL ? 0 : w->s[in->imm1]);
  va &= ~3ull; /* the scalar cache ignores the low two address bits */
  uint32_t buf[16];
  if (in->dst + n > 106) return bad(c, w, in, "scalar load past the SGPRs");
  hcq_status st = c->mem->read(c->mem->ctx, va, n * 4, buf);
  if (st) return fault(c, w, in, -1, va, "scalar read", st);
  memcpy(&w->s[in->dst], buf, n * 4);
  return HCQ_OK;
}

static hcq_status lds_check(ex *c, wave *w, const r3_inst *in, int lane, uint32_t addr, uint32_t size) {
  if ((uint64_t)addr + size > c->lds_B) {
    char why[96];
    snprintf(why, sizeof why, "LDS access of %u bytes (the workgroup has %u bytes of LDS)", size, c->lds_B);
    return fault(c, w, in, lane, addr, why, NULL);
  }
  return HCQ_OK;
}

static hcq_status ds(ex *c, wave *w, const r3_inst *in) {
  uint32_t exec = w->s[R3_EXEC];
  unsigned a = in->src[0], d0 = in->src[1], d1 = in->src[2], dst = in->dst;
  uint32_t off = (uint32_t)(in->imm | (in->imm1 << 8));
  for (int l = 0; l < 32; l++) {
    if (!((exec >> l) & 1)) continue;
    uint32_t addr = w->v[a][l];
    uint32_t n = 0, sz = 0;
    switch (in->id) {
      case R3_DS_LOAD_B32: n = 1; goto load;
      case R3_DS_LOAD_B64: n = 2; goto load;
      case R3_DS_LOAD_B96: n = 3; goto load;
      case R3_DS_LOAD_B128: n = 4;
      load:
        HCQ_TRY(lds_check(c, w, in, l, addr + off, n * 4));
        for (uint32_t k = 0; k < n; k++) memcpy(&w->v[(dst + k) & 255][l], c->lds + addr + off + 4 * k, 4);
        break;
      case R3_DS_LOAD_U8: case R3_DS_LOAD_I8: case R3_DS_LOAD_U16: case R3_DS_LOAD_I16: {
        sz = in->id == R3_DS_LOAD_U8 || in->id == R3_DS_LOAD_I8 ? 1 : 2;
        HCQ_TRY(lds_check(c, w, in, l, addr + off, sz));
        uint8_t *p = c->lds + addr + off;
        uint32_t v = sz == 1 ? p[0] : (uint32_t)(p[0] | p[1] << 8);
        if (in->id == R3_DS_LOAD_I8) v = (uint32_t)(int32_t)(int8_t)v;
        if (in->id == R3_DS_LOAD_I16) v = (uint32_t)(int32_t)(int16_t)v;
        w->v[dst][l] = v;
        break;
      }
      case R3_DS_LOAD_2ADDR_B32: case R3_DS_LOAD_2ADDR_B64: {
        sz = in->id == R3_DS_LOAD_2ADDR_B32 ? 4 : 8;
        uint32_t a0 = addr + (uint32_t)in->imm * sz, a1 = addr + (uint32_t)in->imm1 * sz;
        HCQ_TRY(lds_check(c, w, in, l, a0, sz));
        HCQ_TRY(lds_check(c, w, in, l, a1, sz));
        uint32_t words = sz / 4;
        for (uint32_t k = 0; k < words; k++) {
          memcpy(&w->v[(dst + k) & 255][l], c->lds + a0 + 4 * k, 4);
          memcpy(&w->v[(dst + words + k) & 255][l], c->lds + a1 + 4 * k, 4);
        }
        break;
      }
      case R3_DS_STORE_B32: n = 1; goto store;
      case R3_DS_STORE_B64: n = 2; goto store;
      case R3_DS_STORE_B96: n = 3; goto store;
      case R3_DS_STORE_B128: n = 4;
      store:
        HCQ_TRY(lds_check(c, w, in, l, addr + off, n * 4));
        for (uint32_t k = 0; k < n; k++) memcpy(c->lds + addr + off + 4 * k, &w->v[(d0 + k) & 255][l], 4);
        break;
      case R3_DS_STORE_B8: case R3_DS_STORE_B16:
        sz = in->id == R3_DS_STORE_B8 ? 1 : 2;
        HCQ_TRY(lds_check(c, w, in, l, addr + off, sz));
        memcpy(c->lds + addr + off, &w->v[d0][l], sz); /* little-endian host: the low bytes */
        break;
      case R3_DS_STORE_2ADDR_B32: case R3_DS_STORE_2ADDR_B64: {
        sz = in->id == R3_DS_STORE_2ADDR_B32 ? 4 : 8;
        uint32_t a0 = addr + (uint32_t)in->imm * sz, a1 = addr + (uint32_t)in->imm1 * sz, words = sz / 4;
        HCQ_TRY(lds_check(c, w, in, l, a0, sz));
        HCQ_TRY(lds_check(c, w, in, l, a1, sz));
        for (uint32_t k = 0; k < words; k++) {
          memcpy(c->lds + a0 + 4 * k, &w->v[(d0 + k) & 255][l], 4);
          memcpy(c->lds + a1 + 4 * k, &w->v[(d1 + k) & 255][l], 4);
        }
        break;
      }
      case R3_DS_ADD_U32: {
        HCQ_TRY(lds_check(c, w, in, l, addr + off, 4));
        uint32_t v;
        memcpy(&v, c->lds + addr + off, 4);
        v += w->v[d0][l];
        memcpy(c->lds + addr + off, &v, 4);
        break;
      }
      default: return bad(c, w, in, "not implemented");
    }
  }
  return HCQ_OK;
}

static hcq_status flat(ex *c, wave *w, const r3_inst *in) {
  uint32_t exec = w->s[R3_EXEC];
  unsigned id = in->id;
  bool load = id <= R3_M_LOAD_B128 || (id >= R3_M_LOAD_D16_U8 && id <= R3_M_LOAD_D16_HI_B16);
  static const uint8_t size_of[] = {[R3_M_LOAD_U8 - R3_M_LOAD_U8] = 1, [R3_M_LOAD_I8 - R3_M_LOAD_U8] = 1,
                                    [R3_M_LOAD_U16 - R3_M_LOAD_U8] = 2, [R3_M_LOAD_I16 - R3_M_LOAD_U8] = 2,
                                    [R3_M_LOAD_B32 - R3_M_LOAD_U8] = 4, [R3_M_LOAD_B64 - R3_M_LOAD_U8] = 8,
                                    [R3_M_LOAD_B96 - R3_M_LOAD_U8] = 12, [R3_M_LOAD_B128 - R3_M_LOAD_U8] = 16,
                                    [R3_M_STORE_B8 - R3_M_LOAD_U8] = 1, [R3_M_STORE_B16 - R3_M_LOAD_U8] = 2,
                                    [R3_M_STORE_B32 - R3_M_LOAD_U8] = 4, [R3_M_STORE_B64 - R3_M_LOAD_U8] = 8,
                                    [R3_M_STORE_B96 - R3_M_LOAD_U8] = 12, [R3_M_STORE_B128 - R3_M_LOAD_U8] = 16,
                                    [R3_M_LOAD_D16_U8 - R3_M_LOAD_U8] = 1, [R3_M_LOAD_D16_I8 - R3_M_LOAD_U8] = 1,
                                    [R3_M_LOAD_D16_B16 - R3_M_LOAD_U8] = 2, [R3_M_LOAD_D16_HI_U8 - R3_M_LOAD_U8] = 1,
                                    [R3_M_LOAD_D16_HI_I8 - R3_M_LOAD_U8] = 1, [R3_M_LOAD_D16_HI_B16 - R3_M_LOAD_U8] = 2,
                                    [R3_M_STORE_D16_HI_B8 - R3_M_LOAD_U8] = 1, [R3_M_STORE_D16_HI_B16 - R3_M_LOAD_U8] = 2};
  uint32_t size = size_of[id - R3_M_LOAD_U8], words = (size + 3) / 4;
  unsigned a = in->src[0], dat = in->src[1], sa = in->src[2];
  for (int l = 0; l < 32; l++) {
    if (!((exec >> l) & 1)) continue;
    uint32_t buf[4] = {0};
    if (in->seg == 1) { /* scratch: per-lane private memory */
      uint64_t pa = (uint64_t)(int64_t)in->imm + (in->abs ? w->v[a][l] : 0) + (sa == R3_NULL ? 0 : w->s[sa]);
      uint32_t priv = c->p->kd.private_segment_B;
      if (pa + size > priv) {
        char why[96];
        snprintf(why, sizeof why, "scratch %s (the private segment is %u bytes per lane)", load ? "read" : "write", priv);
        return fault(c, w, in, l, pa, why, NULL);
      }
      uint8_t *p = w->scratch + (size_t)l * priv + pa;
      if (load) memcpy(buf, p, size);
      else {
        for (uint32_t k = 0; k < words; k++) buf[k] = w->v[(dat + k) & 255][l];
        memcpy(p, buf, size);
        continue;
      }
    } else {
      uint64_t va;
      if (in->seg == 2 && sa != R3_NULL) va = (w->s[sa] | (uint64_t)w->s[(sa + 1) & 127] << 32) + w->v[a][l];
      else va = w->v[a][l] | (uint64_t)w->v[(a + 1) & 255][l] << 32;
      va += (uint64_t)(int64_t)in->imm;
      if (load) {
        hcq_status st = c->mem->read(c->mem->ctx, va, size, buf);
        if (st) return fault(c, w, in, l, va, "read", st);
      } else {
        for (uint32_t k = 0; k < words; k++) buf[k] = w->v[(dat + k) & 255][l];
        if (id == R3_M_STORE_D16_HI_B8 || id == R3_M_STORE_D16_HI_B16) buf[0] >>= 16;
        hcq_status st = c->mem->write(c->mem->ctx, va, size, buf);
        if (st) return fault(c, w, in, l, va, "write", st);
        continue;
      }
    }
    uint32_t v = buf[0], old = w->v[in->dst][l];
    switch (id) { /* d16 loads fill one half of the VGPR and keep the other */
      case R3_M_LOAD_D16_U8: w->v[in->dst][l] = (old & 0xffff0000u) | (v & 0xff); continue;
      case R3_M_LOAD_D16_I8: w->v[in->dst][l] = (old & 0xffff0000u) | ((uint32_t)(int32_t)(int8_t)v & 0xffff); continue;
      case R3_M_LOAD_D16_B16: w->v[in->dst][l] = (old & 0xffff0000u) | (v & 0xffff); continue;
      case R3_M_LOAD_D16_HI_U8: w->v[in->dst][l] = (old & 0xffff) | (v & 0xff) << 16; continue;
      case R3_M_LOAD_D16_HI_I8: w->v[in->dst][l] = (old & 0xffff) | (uint32_t)(int32_t)(int8_t)v << 16; continue;
      case R3_M_LOAD_D16_HI_B16: w->v[in->dst][l] = (old & 0xffff) | (v & 0xffff) << 16; continue;
      default: break;
    }
    switch (id) {
      case R3_M_LOAD_I8: v = (uint32_t)(int32_t)(int8_t)v; break;
      case R3_M_LOAD_I16: v = (uint32_t)(int32_t)(int16_t)v; break;
      case R3_M_LOAD_U8: v &= 0xff; break;
      case R3_M_LOAD_U16: v &= 0xffff; break;
      default: break;
    }
    buf[0] = v;
    for (uint32_t k = 0; k < words; k++) w->v[(in->dst + k) & 255][l] = buf[k];
  }
  return HCQ_OK;
}

/* ---- control ---- */

/* Run wave w until it ends, reaches a barrier or fails. */
static hcq_status run_wave(ex *c, wave *w, int nwaves, rdna3_stats *stats) {
  const r3_inst *insts = c->p->insts;
  size_t n = c->p->n;
  uint64_t count = 0;
  hcq_status st = HCQ_OK;
  while (!st) {
    if (w->pc >= n) {
      st = hcq_status_make(HCQ_CODE_INVALID, "rdna3: wave %d ran past the end of the code (no s_endpgm)", w->id);
      break;
    }
    const r3_inst *in = &insts[w->pc++];
    count++;
    if (c->d->trace) {
      char dis[192], line[288];
      r3_print(in, dis, sizeof dis);
      snprintf(line, sizeof line, "wg %u,%u,%u wave %d 0x%x: %s | exec=0x%08x scc=%d", c->wg[0], c->wg[1], c->wg[2],
               w->id, in->off_B, dis, w->s[R3_EXEC], w->scc);
      c->d->trace(c->d->trace_user, line);
    }
    switch (in->enc) {
      case E_VOP1: case E_VOP2: case E_VOPC: case E_VOP3: case E_VOP3P: case E_VOPD: st = valu(c, w, in); break;
      case E_SOP1: case E_SOP2: case E_SOPC: st = salu(c, w, in); break;
      case E_SOPK: st = sopk(c, w, in); break;
      case E_SMEM: st = smem(c, w, in); break;
      case E_DS: st = ds(c, w, in); break;
      case E_FLAT: st = flat(c, w, in); break;
      case E_MUBUF: break; /* buffer_gl0_inv / buffer_gl1_inv: no caches are modelled */
      case E_SOPP:
        switch (in->id) {
          case R3_S_ENDPGM: w->state = 2; goto out;
          case R3_S_BARRIER:
            if (nwaves > 1) {
              w->state = 1;
              goto out;
            }
            break;
          case R3_S_BRANCH: w->pc = in->target; break;
          case R3_S_CBRANCH_SCC0: if (!w->scc) w->pc = in->target; break;
          case R3_S_CBRANCH_SCC1: if (w->scc) w->pc = in->target; break;
          case R3_S_CBRANCH_VCCZ: if (!w->s[R3_VCC]) w->pc = in->target; break;
          case R3_S_CBRANCH_VCCNZ: if (w->s[R3_VCC]) w->pc = in->target; break;
          case R3_S_CBRANCH_EXECZ: if (!w->s[R3_EXEC]) w->pc = in->target; break;
          case R3_S_CBRANCH_EXECNZ: if (w->s[R3_EXEC]) w->pc = in->target; break;
          case R3_S_CODE_END: st = bad(c, w, in, "executed the padding after the code (s_code_end)"); break;
          case R3_S_DENORM_MODE: st = set_mode(c, w, in, (w->mode & ~0xf0u) | (((uint32_t)in->imm & 15) << 4)); break;
          case R3_S_ROUND_MODE: st = set_mode(c, w, in, (w->mode & ~0xfu) | ((uint32_t)in->imm & 15)); break;
          default: break; /* s_nop, s_waitcnt*, s_clause, s_delay_alu, s_sendmsg, s_setprio, s_icache_inv */
        }
        break;
      default: st = bad(c, w, in, "not implemented"); break;
    }
    if (c->max_total && stats->wave_insts + count > c->max_total) {
      st = hcq_status_make(HCQ_CODE_TIMEOUT, "rdna3: the dispatch ran over its budget of %" PRIu64 " instructions",
                           c->max_total);
    } else if (w->ninst + count > c->max_insts) {
      st = hcq_status_make(HCQ_CODE_TIMEOUT,
                           "rdna3: wave %d of workgroup (%u,%u,%u) executed %" PRIu64 " instructions without ending "
                           "(a hang?); now at code offset 0x%x",
                           w->id, c->wg[0], c->wg[1], c->wg[2], w->ninst + count, insts[w->pc < n ? w->pc : n - 1].off_B);
    }
  }
out:
  w->ninst += count;
  stats->wave_insts += count;
  return st;
}

static void init_wave(ex *c, wave *w, int wid, uint32_t threads) {
  const rdna3_kd *kd = &c->p->kd;
  memset(w->s, 0, sizeof w->s);
  w->scc = false;
  w->state = 0;
  w->pc = c->p->entry;
  w->ninst = 0;
  w->id = wid;
  unsigned sg = 0;
  uint16_t cp = kd->code_props;
  if (cp & 1) sg += 4;                     /* private segment buffer: not modelled (zeros) */
  if (cp & 2) {                            /* dispatch ptr */
    w->s[sg] = (uint32_t)c->d->dispatch_ptr_va, w->s[sg + 1] = (uint32_t)(c->d->dispatch_ptr_va >> 32);
    sg += 2;
  }
  if (cp & 4) sg += 2;                     /* queue ptr */
  if (cp & 8) {                            /* kernarg segment ptr */
    w->s[sg] = (uint32_t)c->d->kernarg_va, w->s[sg + 1] = (uint32_t)(c->d->kernarg_va >> 32);
    sg += 2;
  }
  sg = (kd->rsrc2 >> 1) & 31;              /* USER_SGPR_COUNT: system SGPRs follow */
  for (int d = 0; d < 3; d++)
    if ((kd->rsrc2 >> (7 + d)) & 1) w->s[sg++] = c->wg[d];
  uint32_t base = (uint32_t)wid * 32, bx = c->d->block[0], by = c->d->block[1];
  int ids = (kd->rsrc2 >> 11) & 3;         /* ENABLE_VGPR_WORKITEM_ID: 0 x, 1 x+y, 2 x+y+z */
  uint32_t exec = 0;
  for (int l = 0; l < 32; l++) {
    uint32_t t = base + (uint32_t)l;
    if (t < threads) exec |= 1u << l;
    uint32_t x = t % bx, y = t / bx % by, z = t / (bx * by);
    w->v[0][l] = x | (ids >= 1 ? y << 10 : 0) | (ids >= 2 ? z << 20 : 0);
  }
  w->s[R3_EXEC] = exec;
  /* MODE from rsrc1: FLOAT_ROUND_MODE_32 13:12, _16_64 15:14, FLOAT_DENORM_MODE_32 17:16, _16_64 19:18,
   * ENABLE_DX10_CLAMP 21, ENABLE_IEEE_MODE 23 */
  uint32_t r1 = kd->rsrc1;
  w->mode = ((r1 >> 12) & 15) | ((r1 >> 16) & 15) << 4 | ((r1 >> 21) & 1) << 8 | ((r1 >> 23) & 1) << 9;
  int dm = (w->mode >> 4) & 3;
  w->ftz_in32 = dm == 0 || dm == 2;
  w->ftz_out32 = dm == 0 || dm == 1;
}

hcq_status rdna3_run(const rdna3_program *p, const rdna3_dispatch *d, const rdna3_mem_ops *mem, rdna3_stats *stats) {
  rdna3_stats dummy = {0};
  if (!stats) stats = &dummy;
  uint64_t threads64 = (uint64_t)d->block[0] * d->block[1] * d->block[2];
  if (!threads64 || threads64 > 1024)
    return hcq_status_make(HCQ_CODE_INVALID, "rdna3: a workgroup of %" PRIu64 " work-items (block %ux%ux%u); 1..1024 allowed",
                           threads64, d->block[0], d->block[1], d->block[2]);
  if (d->block[0] > 1024 || d->block[1] > 1024 || d->block[2] > 1024)
    return hcq_status_make(HCQ_CODE_INVALID, "rdna3: block dimension above 1023 cannot be packed in v0");
  uint32_t threads = (uint32_t)threads64;
  int nwaves = (int)((threads + 31) / 32);
  ex c = {.p = p, .mem = mem, .d = d, .lds_B = p->kd.group_segment_B,
          .max_insts = d->max_wave_insts ? d->max_wave_insts : (1ull << 32), .max_total = d->max_total_insts};
  wave *waves = calloc((size_t)nwaves, sizeof *waves);
  uint32_t(*vregs)[32] = calloc((size_t)nwaves * 256, sizeof *vregs);
  uint8_t *lds = calloc(1, c.lds_B ? c.lds_B : 1);
  size_t priv = (size_t)p->kd.private_segment_B * 32;
  uint8_t *scratch = priv ? calloc((size_t)nwaves, priv) : NULL;
  hcq_status st = HCQ_OK;
  if (!waves || !vregs || !lds || (priv && !scratch)) {
    st = hcq_status_make(HCQ_CODE_NOMEM, "rdna3: out of memory for %d waves", nwaves);
    goto done;
  }
  c.lds = lds;
  for (int i = 0; i < nwaves; i++) waves[i].v = vregs + (size_t)i * 256, waves[i].scratch = scratch ? scratch + i * priv : NULL;
  for (uint32_t gz = 0; gz < d->groups[2] && !st; gz++)
    for (uint32_t gy = 0; gy < d->groups[1] && !st; gy++)
      for (uint32_t gx = 0; gx < d->groups[0] && !st; gx++) {
        c.wg[0] = gx, c.wg[1] = gy, c.wg[2] = gz;
        memset(lds, 0, c.lds_B);
        for (int i = 0; i < nwaves; i++) init_wave(&c, &waves[i], i, threads);
        for (;;) {
          int waiting = 0;
          for (int i = 0; i < nwaves && !st; i++)
            if (waves[i].state == 0) st = run_wave(&c, &waves[i], nwaves, stats);
          if (st) break;
          for (int i = 0; i < nwaves; i++) waiting += waves[i].state == 1;
          if (!waiting) break;
          for (int i = 0; i < nwaves; i++)
            if (waves[i].state == 1) waves[i].state = 0; /* every live wave reached the barrier: release */
        }
      }
done:
  stats->lane_insts = stats->wave_insts * 32;
  free(waves);
  free(vregs);
  free(lds);
  free(scratch);
  return st;
}
