/* RDNA3 VOP3P dot products (gfx11): v_dot2_f32_f16, v_dot2_f32_bf16, v_dot4_i32_iu8, v_dot4_u32_u8,
 * v_dot8_i32_iu4, v_dot8_u32_u4. Semantics per AMD's "RDNA3 Instruction Set Architecture Reference Guide" (VOP3P
 * opcodes, pseudocode of each V_DOT*):
 *  - integer: D = S2 + sum of the products of the 8-bit (4-bit) fields of S0 and S1, field 0 in the low bits. For
 *    the iu forms NEG[0] / NEG[1] (the neg_lo bits of src0 / src1) make that source's fields signed, else they are
 *    zero-extended (LLVM's llvm.amdgcn.sudot4/sudot8 put the sign flags there; sdot4 sets both). CLAMP saturates
 *    the exact sum to the int32 (iu) or uint32 (u) range, else it wraps.
 *  - float: tmp = S2.f32; tmp += f32(lo(S0)) * f32(lo(S1)); tmp += f32(hi(S0)) * f32(hi(S1)); each step is an f32
 *    operation rounded to nearest even (for f16 inputs the products are exact). As for packed math, op_sel /
 *    op_sel_hi pick the half of src0/src1 feeding the low / high product and neg_lo / neg_hi negate it; the f32
 *    src2 takes neg_lo as negate and neg_hi as abs (LLVM AMDGPUISelDAGToDAG SelectVOP3PModsF32). v_dot2_f32_f16
 *    flushes f32 denormals of src2 and of the result to zero whatever the denorm mode (LLVM SIISelLowering.cpp
 *    performFMACombine: "fdot2_f32_f16 always flushes fp32 denormal operand and output to zero"); in
 *    v_dot2_f32_bf16 each step is an f32 operation under the wave's f32 denorm mode (inputs, bf16 ones included,
 *    and each result flushed as the mode says). CLAMP clamps to [0, 1] (NaN gives 0).
 * Modifiers whose hardware meaning the guide leaves open (op_sel on the integer forms, neg_lo on the unsigned ones,
 * neg_hi on an integer source, op_sel of the f32 src2) are refused, never guessed; LLVM does not emit them. */
#pragma GCC optimize("fp-contract=off") /* each step rounds on its own */
#include <string.h>

#include "emulator_tests/rdna3_float.h"
#include "emulator_tests/rdna3_wave.h"

bool r3_is_dot(unsigned id) {
  switch (id) {
    case R3_V_DOT2_F32_F16: case R3_V_DOT2_F32_BF16: case R3_V_DOT4_I32_IU8: case R3_V_DOT4_U32_U8:
    case R3_V_DOT8_I32_IU4: case R3_V_DOT8_U32_U4: return true;
    default: return false;
  }
}

/* Source k on all lanes; kind as for sval32 (inline float constants: 1 f32, 3 f16 in the low half). */
static void fetch(const wave *w, const r3_inst *in, int k, int kind, uint32_t out[32]) {
  unsigned code = in->src[k];
  if (code >= R3_VGPR) {
    memcpy(out, w->v[code - R3_VGPR], 32 * sizeof *out);
    return;
  }
  uint32_t x = sval32(w, code, in->lit, kind);
  for (int l = 0; l < 32; l++) out[l] = x;
}

/* Field i (bits wide) of x, sign-extended when sgn. */
static int64_t field(uint32_t x, int bits, int i, bool sgn) {
  uint32_t f = (x >> (bits * i)) & ((1u << bits) - 1);
  return sgn && (f >> (bits - 1)) ? (int64_t)f - ((int64_t)1 << bits) : (int64_t)f;
}

static hcq_status int_dot(ex *c, wave *w, const r3_inst *in, uint32_t *out) {
  bool iu = in->id == R3_V_DOT4_I32_IU8 || in->id == R3_V_DOT8_I32_IU4;
  int bits = in->id == R3_V_DOT4_I32_IU8 || in->id == R3_V_DOT4_U32_U8 ? 8 : 4;
  if ((in->opsel & 7) || (in->omod & 7) != 7) return r3_bad(c, w, in, "op_sel/op_sel_hi on an integer dot");
  if (in->abs & 7) return r3_bad(c, w, in, "neg_hi on an integer dot");
  if (in->neg & (iu ? 4 : 7)) return r3_bad(c, w, in, iu ? "neg_lo on the accumulator of an iu dot" : "neg_lo on an unsigned dot");
  bool sa = iu && (in->neg & 1), sb = iu && (in->neg & 2);
  uint32_t a[32], b[32], acc[32];
  fetch(w, in, 0, 0, a), fetch(w, in, 1, 0, b), fetch(w, in, 2, 0, acc);
  for (int l = 0; l < 32; l++) {
    int64_t sum = iu ? (int64_t)(int32_t)acc[l] : (int64_t)acc[l];
    for (int i = 0; i < 32 / bits; i++) sum += field(a[l], bits, i, sa) * field(b[l], bits, i, sb);
    if (in->clamp) {
      int64_t lo = iu ? INT32_MIN : 0, hi = iu ? INT32_MAX : UINT32_MAX;
      sum = sum < lo ? lo : sum > hi ? hi : sum;
    }
    out[l] = (uint32_t)sum;
  }
  return HCQ_OK;
}

static float bf16_to_f32(uint16_t h) { return r3_f((uint32_t)h << 16); }
static inline uint32_t ftz32(uint32_t u) { return (u & 0x7f800000u) ? u : u & 0x80000000u; }

static hcq_status float_dot(ex *c, wave *w, const r3_inst *in, uint32_t *out) {
  bool bf = in->id == R3_V_DOT2_F32_BF16;
  if ((in->opsel & 4) || !(in->omod & 4)) return r3_bad(c, w, in, "op_sel/op_sel_hi on the f32 accumulator of a dot");
  for (int k = 0; k < 2 && bf; k++)
    if (in->src[k] >= 240 && in->src[k] <= 248) return r3_bad(c, w, in, "inline float constant for a bf16 source");
  bool flush_in = !bf || w->ftz_in32, flush_out = !bf || w->ftz_out32;
  uint32_t a[32], b[32], acc[32];
  fetch(w, in, 0, 3, a), fetch(w, in, 1, 3, b), fetch(w, in, 2, 1, acc);
  for (int l = 0; l < 32; l++) {
    uint32_t cu = flush_in ? ftz32(acc[l]) : acc[l];
    if (in->abs & 4) cu &= 0x7fffffffu;
    if (in->neg & 4) cu ^= 0x80000000u;
    float tmp = r3_f(cu);
    for (int h = 0; h < 2; h++) {
      uint8_t sel = h ? in->omod : in->opsel, ng = h ? in->abs : in->neg;
      uint16_t x = (uint16_t)(sel & 1 ? a[l] >> 16 : a[l]), y = (uint16_t)(sel & 2 ? b[l] >> 16 : b[l]);
      float fx = bf ? bf16_to_f32(x) : r3_h2f(x), fy = bf ? bf16_to_f32(y) : r3_h2f(y);
      if (ng & 1) fx = -fx;
      if (ng & 2) fy = -fy;
      if (bf && w->ftz_in32) fx = r3_f(ftz32(r3_u(fx))), fy = r3_f(ftz32(r3_u(fy)));
      float p = fx * fy; /* exact for f16 inputs */
      if (bf && w->ftz_out32) p = r3_f(ftz32(r3_u(p)));
      if (bf && w->ftz_in32) p = r3_f(ftz32(r3_u(p))), tmp = r3_f(ftz32(r3_u(tmp)));
      tmp = tmp + p;
      if (bf && w->ftz_out32) tmp = r3_f(ftz32(r3_u(tmp)));
    }
    uint32_t r = r3_u(tmp);
    if (flush_out) r = ftz32(r);
    if (in->clamp) r = isnan(tmp) || tmp < 0 ? 0 : tmp > 1 ? r3_u(1.0f) : r;
    out[l] = r;
  }
  return HCQ_OK;
}

hcq_status r3_dot(ex *c, wave *w, const r3_inst *in) {
  uint32_t out[32];
  bool fl = in->id == R3_V_DOT2_F32_F16 || in->id == R3_V_DOT2_F32_BF16;
  hcq_status st = fl ? float_dot(c, w, in, out) : int_dot(c, w, in, out);
  if (st) return st;
  uint32_t exec = w->s[R3_EXEC];
  for (int l = 0; l < 32; l++)
    if ((exec >> l) & 1) w->v[in->dst][l] = out[l];
  return HCQ_OK;
}
