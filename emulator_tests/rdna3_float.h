/* Float helpers of the RDNA3 interpreter (header-only, static inline): bit casts, IEEE-mode min/max, f16
 * conversion, the division helpers and the transcendental model. Semantics: AMD "RDNA3 Instruction Set
 * Architecture Reference Guide" (VOP1/VOP2/VOP3 opcode descriptions). */
#ifndef HCQ_EMU_RDNA3_FLOAT_H
#define HCQ_EMU_RDNA3_FLOAT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float r3_f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t r3_u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline double r3_d(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }
static inline uint64_t r3_ud(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }

static inline float r3_quiet(float a) { return r3_f(r3_u(a) | 0x400000u); }
static inline double r3_quietd(double a) { return r3_d(r3_ud(a) | (1ull << 51)); }

/* IEEE mode min/max (ISA: a NaN operand yields the other operand, quieted if both are NaN; -0 < +0). */
static inline float r3_fmin(float a, float b) {
  if (isnan(a)) return isnan(b) ? r3_quiet(a) : b;
  if (isnan(b)) return a;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}
static inline float r3_fmax(float a, float b) {
  if (isnan(a)) return isnan(b) ? r3_quiet(a) : b;
  if (isnan(b)) return a;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
static inline double r3_dmin(double a, double b) {
  if (isnan(a)) return isnan(b) ? r3_quietd(a) : b;
  if (isnan(b)) return a;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}
static inline double r3_dmax(double a, double b) {
  if (isnan(a)) return isnan(b) ? r3_quietd(a) : b;
  if (isnan(b)) return a;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
static inline float r3_fmed3(float a, float b, float c) {
  if (isnan(a) || isnan(b) || isnan(c)) return r3_fmin(r3_fmin(a, b), c);
  return r3_fmax(r3_fmin(a, b), r3_fmin(r3_fmax(a, b), c));
}

/* f16 <-> f32 (IEEE binary16; f32 -> f16 rounds to nearest even). */
static inline float r3_h2f(uint16_t h) {
  uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 0x3ff;
  if (e == 31) return r3_f(s | 0x7f800000u | (m << 13));
  if (e == 0) return r3_f(s) + (s ? -1.0f : 1.0f) * ldexpf((float)m, -24);
  return r3_f(s | ((e + 112) << 23) | (m << 13));
}
static inline uint16_t r3_f2h(float f) {
  uint32_t u = r3_u(f), s = (u >> 16) & 0x8000;
  float a = fabsf(f);
  if (isnan(f)) return (uint16_t)(s | 0x7e00 | ((u >> 13) & 0x3ff));
  if (a >= 65520.0f) return (uint16_t)(s | 0x7c00);
  if (a < 0x1p-14f) return (uint16_t)(s | (uint32_t)nearbyintf(a * 0x1p24f)); /* subnormal (RNE) */
  uint32_t au = r3_u(a), mant = au & 0x7fffff, exp = (au >> 23) - 112;
  uint32_t h = (exp << 10) | (mant >> 13), rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++;
  return (uint16_t)(s | h);
}

/* Biased exponent field. */
static inline int r3_exp32(float f) { return (int)((r3_u(f) >> 23) & 0xff); }
static inline int r3_exp64(double f) { return (int)((r3_ud(f) >> 52) & 0x7ff); }

/* V_DIV_SCALE_F32 (ISA pseudocode): scale numerator/denominator by 2^+-64 so the Newton steps stay in range;
 * *vcc tells V_DIV_FMAS to undo a scale applied to one side only. "Is denormal" is read as "exponent field 0",
 * so a quotient that rounds to 0 counts (otherwise a tiny/huge division would scale both sides into overflow);
 * the ops test checks the whole division sequence gives correctly rounded quotients. */
static inline float r3_div_scale32(float s0, float den, float num, int *vcc) {
  *vcc = 0;
  if (num == 0 || den == 0) return NAN;
  if (isinf(den) || isinf(num) || isnan(den) || isnan(num)) return s0;
  float q = num / den;
  double r = 1.0 / (double)den; /* the pseudocode takes this reciprocal in double precision */
  if (r3_exp32(num) - r3_exp32(den) >= 96) {
    *vcc = 1;
    return s0 == den ? ldexpf(s0, 64) : s0;
  }
  if (r3_exp32(den) == 0) return ldexpf(s0, 64);
  if (r3_exp64(r) == 0 && r3_exp32(q) == 0) {
    *vcc = 1;
    return s0 == den ? ldexpf(s0, 64) : s0;
  }
  if (r3_exp64(r) == 0) return ldexpf(s0, -64);
  if (r3_exp32(q) == 0) {
    *vcc = 1;
    return s0 == num ? ldexpf(s0, 64) : s0;
  }
  if (r3_exp32(num) <= 23) return ldexpf(s0, 64);
  return s0;
}
static inline double r3_div_scale64(double s0, double den, double num, int *vcc) {
  *vcc = 0;
  if (num == 0 || den == 0) return NAN;
  if (isinf(den) || isinf(num) || isnan(den) || isnan(num)) return s0;
  double q = num / den, r = 1.0 / den;
  if (r3_exp64(num) - r3_exp64(den) >= 768) {
    *vcc = 1;
    return s0 == den ? ldexp(s0, 128) : s0;
  }
  if (r3_exp64(den) == 0) return ldexp(s0, 128);
  if (r3_exp64(r) == 0 && r3_exp64(q) == 0) {
    *vcc = 1;
    return s0 == den ? ldexp(s0, 128) : s0;
  }
  if (r3_exp64(r) == 0) return ldexp(s0, -128);
  if (r3_exp64(q) == 0) {
    *vcc = 1;
    return s0 == num ? ldexp(s0, 128) : s0;
  }
  if (r3_exp64(num) <= 53) return ldexp(s0, 128);
  return s0;
}

/* V_DIV_FIXUP_F32: special cases of the quotient num/den; otherwise the refined quotient q with the sign fixed. */
static inline float r3_div_fixup32(float q, float den, float num) {
  int neg = signbit(den) != signbit(num);
  if (isnan(num)) return r3_quiet(num);
  if (isnan(den)) return r3_quiet(den);
  if (den == 0 && num == 0) return NAN;
  if (isinf(den) && isinf(num)) return NAN;
  if (den == 0 || isinf(num)) return neg ? -INFINITY : INFINITY;
  if (isinf(den) || num == 0) return neg ? -0.0f : 0.0f;
  if (isnan(q)) return neg ? -INFINITY : INFINITY;
  return neg ? -fabsf(q) : fabsf(q);
}
static inline double r3_div_fixup64(double q, double den, double num) {
  int neg = signbit(den) != signbit(num);
  if (isnan(num)) return r3_quietd(num);
  if (isnan(den)) return r3_quietd(den);
  if (den == 0 && num == 0) return NAN;
  if (isinf(den) && isinf(num)) return NAN;
  if (den == 0 || isinf(num)) return neg ? -INFINITY : INFINITY;
  if (isinf(den) || num == 0) return neg ? -0.0 : 0.0;
  if (isnan(q)) return neg ? -INFINITY : INFINITY;
  return neg ? -fabs(q) : fabs(q);
}

/* Transcendentals. The ISA documents 1 ULP for v_exp_f32, v_log_f32, v_rcp_f32, v_rsq_f32, v_sqrt_f32 and an
 * absolute error for v_sin/v_cos; we model each as the double-precision result rounded once to float (within 1
 * ULP; exact for v_sqrt_f32 and v_rcp_f32 on normal inputs). v_sin/v_cos take revolutions: sin(2*pi*x). */
static inline float r3_exp2(float x) { return (float)exp2((double)x); }
static inline float r3_log2(float x) {
  if (x == 0) return -INFINITY; /* also for -0 */
  return (float)log2((double)x);
}
static inline float r3_rcp(float x) { return (float)(1.0 / (double)x); }
static inline float r3_rsq(float x) { return (float)(1.0 / sqrt((double)x)); }
static inline float r3_sin(float x) {
  if (isinf(x)) return NAN;
  return (float)sin(fmod((double)x, 1.0) * 6.283185307179586476925286766559);
}
static inline float r3_cos(float x) {
  if (isinf(x)) return NAN;
  return (float)cos(fmod((double)x, 1.0) * 6.283185307179586476925286766559);
}

/* V_CMP_CLASS mask bits: 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0, 6 +0, 7 +denormal, 8 +normal,
 * 9 +inf. */
#define R3_CLASS_BIT(v, is_snan)                                                                 \
  (isnan(v) ? ((is_snan) ? 0 : 1)                                                                   \
   : fpclassify(v) == FP_INFINITE ? (signbit(v) ? 2 : 9)                                            \
   : fpclassify(v) == FP_ZERO     ? (signbit(v) ? 5 : 6)                                            \
   : fpclassify(v) == FP_SUBNORMAL ? (signbit(v) ? 4 : 7)                                           \
                                   : (signbit(v) ? 3 : 8))

#endif
