/* The PTX interpreter's number conversions (PTX ISA "cvt", "Floating-Point Instructions"), exact for
 * every rounding modifier: a value is taken apart into sign, integer magnitude and power of two, and rounded once to
 * the destination format in software (no host rounding mode, no double rounding), so f64 -> f16 and s64 -> f32 are
 * as exact as f32 -> f16. */
#include <fenv.h>
#include <math.h>
#include <string.h>

#include "emulator_tests/ptx_internal.h"

typedef struct fmt {
  int p, emin, emax, bits; /* significand bits incl. the hidden one, min/max normal exponent, storage bits */
} fmt;

static fmt fmt_of(ptx_type t) {
  switch (t) {
    case PT_F16: return (fmt){11, -14, 15, 16};
    case PT_BF16: return (fmt){8, -126, 127, 16};
    case PT_F32: return (fmt){24, -126, 127, 32};
    default: return (fmt){53, -1022, 1023, 64};
  }
}

static uint64_t inf_bits(fmt f, bool sign) {
  return (uint64_t)sign << (f.bits - 1) | (uint64_t)(f.emax - f.emin + 2) << (f.p - 1);
}
static uint64_t max_bits(fmt f, bool sign) {
  return (uint64_t)sign << (f.bits - 1) | (uint64_t)(f.emax - f.emin + 1) << (f.p - 1) | (((uint64_t)1 << (f.p - 1)) - 1);
}
static uint64_t nan_bits(ptx_type t) { /* the canonical NaNs (PTX ISA "cvt": NaN inputs give the canonical NaN) */
  return t == PT_F64 ? PTX_F64_CANON_NAN : t == PT_F32 ? PTX_F32_CANON_NAN : 0x7fff;
}

uint64_t ptx_round_float(bool sign, uint64_t mag, int exp2, bool sticky, ptx_type dt, ptx_rnd rnd) {
  fmt f = fmt_of(dt);
  uint64_t sbit = (uint64_t)sign << (f.bits - 1);
  if (!mag) return sbit;
  int lz = __builtin_clzll(mag);
  uint64_t m = mag << lz;
  int e = exp2 - lz;    /* value = m * 2^e, m in [2^63, 2^64) */
  int lead = e + 63;    /* exponent of the leading bit */
  int q = (lead < f.emin ? f.emin : lead) - (f.p - 1); /* exponent of the last kept bit */
  int sh = q - e;       /* >= 64 - p: bits dropped */
  uint64_t kept;
  bool half, rest;
  if (sh >= 65) {
    kept = 0, half = false, rest = true;
  } else if (sh == 64) {
    kept = 0, half = m >> 63, rest = (m << 1) != 0;
  } else {
    kept = m >> sh;
    half = (m >> (sh - 1)) & 1;
    rest = (m & (((uint64_t)1 << (sh - 1)) - 1)) != 0;
  }
  rest = rest || sticky;
  bool inexact = half || rest, up;
  switch (rnd) {
    case PR_RZ: case PR_RZI: up = false; break;
    case PR_RM: case PR_RMI: up = sign && inexact; break;
    case PR_RP: case PR_RPI: up = !sign && inexact; break;
    default: up = half && (rest || (kept & 1)); break; /* nearest, ties to even */
  }
  kept += up;
  if (kept == (uint64_t)1 << f.p) kept >>= 1, q++;
  if (kept < (uint64_t)1 << (f.p - 1)) return sbit | kept; /* subnormal or zero */
  int top = q + f.p - 1;
  if (top > f.emax) { /* overflow: infinity, or the largest finite toward zero */
    bool to_inf = rnd == PR_RZ || rnd == PR_RZI ? false
                  : rnd == PR_RM || rnd == PR_RMI ? sign
                  : rnd == PR_RP || rnd == PR_RPI ? !sign
                                                  : true;
    return to_inf ? inf_bits(f, sign) : max_bits(f, sign);
  }
  return sbit | (uint64_t)(top - f.emin + 1) << (f.p - 1) | (kept - ((uint64_t)1 << (f.p - 1)));
}

/* Take a float apart: 0 finite (sign, mag, exp), 1 infinity, 2 NaN. */
static int decompose(uint64_t v, ptx_type t, bool *sign, uint64_t *mag, int *exp2) {
  fmt f = fmt_of(t);
  int ebits = f.bits - f.p;
  *sign = (v >> (f.bits - 1)) & 1;
  uint64_t ef = (v >> (f.p - 1)) & (((uint64_t)1 << ebits) - 1), mf = v & (((uint64_t)1 << (f.p - 1)) - 1);
  if (ef == ((uint64_t)1 << ebits) - 1) return mf ? 2 : 1;
  if (ef == 0) {
    *mag = mf;
    *exp2 = f.emin - (f.p - 1);
  } else {
    *mag = mf | (uint64_t)1 << (f.p - 1);
    *exp2 = (int)ef - 1 + f.emin - (f.p - 1);
  }
  return 0;
}

double ptx_f16_to_double(uint16_t h) {
  bool s;
  uint64_t m;
  int e;
  int k = decompose(h, PT_F16, &s, &m, &e);
  double v = k == 2 ? NAN : k == 1 ? INFINITY : ldexp((double)m, e);
  return s ? -v : v;
}

double ptx_bf16_to_double(uint16_t h) {
  uint32_t b = (uint32_t)h << 16;
  float f;
  memcpy(&f, &b, 4);
  return f;
}

/* The exact value of a float of type t as a double (every f16/bf16/f32/f64 is one). */
static double to_double(uint64_t v, ptx_type t) {
  switch (t) {
    case PT_F16: return ptx_f16_to_double((uint16_t)v);
    case PT_BF16: return ptx_bf16_to_double((uint16_t)v);
    case PT_F32: {
      uint32_t b = (uint32_t)v;
      float f;
      memcpy(&f, &b, 4);
      return f;
    }
    default: {
      double d;
      memcpy(&d, &v, 8);
      return d;
    }
  }
}

static uint64_t from_double(double d, ptx_type t, ptx_rnd rnd) {
  uint64_t b;
  memcpy(&b, &d, 8);
  bool s;
  uint64_t m;
  int e;
  int k = decompose(b, PT_F64, &s, &m, &e);
  if (k == 2) return nan_bits(t);
  if (k == 1) return inf_bits(fmt_of(t), s);
  return ptx_round_float(s, m, e, false, t, rnd);
}

static bool is_subnormal(uint64_t v, ptx_type t) {
  fmt f = fmt_of(t);
  uint64_t ef = (v >> (f.p - 1)) & (((uint64_t)1 << (f.bits - f.p)) - 1), mf = v & (((uint64_t)1 << (f.p - 1)) - 1);
  return ef == 0 && mf != 0;
}

static uint64_t mask_bits(uint64_t v, int bits) { return bits >= 64 ? v : v & (((uint64_t)1 << bits) - 1); }

/* An integral double r clamped to the integer type's range (PTX ISA "cvt": float-to-integer conversions saturate,
 * NaN gives 0). */
static uint64_t clamp_to_int(double r, ptx_type dt) {
  int n = ptx_type_bits(dt);
  if (isnan(r)) return 0;
  if (ptx_type_signed(dt)) {
    double lim = ldexp(1.0, n - 1);
    if (r >= lim) return ((uint64_t)1 << (n - 1)) - 1;
    if (r < -lim) return (uint64_t)1 << (n - 1); /* the minimum's bits */
    return mask_bits((uint64_t)(int64_t)r, n);
  }
  if (r <= 0) return 0;
  if (r >= ldexp(1.0, n)) return mask_bits(UINT64_MAX, n);
  return (uint64_t)r;
}

static double round_integral(double x, ptx_rnd rnd) {
  switch (rnd) {
    case PR_RZI: case PR_RZ: return trunc(x);
    case PR_RMI: case PR_RM: return floor(x);
    case PR_RPI: case PR_RP: return ceil(x);
    default: return nearbyint(x); /* the default rounding mode: nearest, ties to even */
  }
}

static uint64_t cvt(uint64_t v, ptx_type dt, ptx_type st, ptx_rnd rnd, unsigned flags);

/* PTX ISA "Operand Size Exceeding Instruction-Type Size": a destination register wider than the type gets
 * the value sign-extended (signed types) or zero-extended; registers hold 64 bits here, readers take their width. */
uint64_t ptx_cvt(uint64_t v, ptx_type dt, ptx_type st, ptx_rnd rnd, unsigned flags) {
  uint64_t r = cvt(v, dt, st, rnd, flags);
  int b = ptx_type_bits(dt);
  if (ptx_type_signed(dt) && b < 64) r = (uint64_t)((int64_t)(r << (64 - b)) >> (64 - b));
  return r;
}

static uint64_t cvt(uint64_t v, ptx_type dt, ptx_type st, ptx_rnd rnd, unsigned flags) {
  bool df = ptx_type_float(dt), sf = ptx_type_float(st);
  int dbits = ptx_type_bits(dt), sbits = ptx_type_bits(st);
  if (!df && !sf) { /* int -> int: extend by the source's signedness, then truncate or saturate */
    int64_t sv = ptx_type_signed(st) ? (int64_t)(v << (64 - sbits)) >> (64 - sbits) : 0;
    uint64_t uv = mask_bits(v, sbits);
    if (flags & PF_SAT) {
      bool sneg = ptx_type_signed(st) && sv < 0;
      if (ptx_type_signed(dt)) {
        int64_t hi = (int64_t)(((uint64_t)1 << (dbits - 1)) - 1), lo = -hi - 1;
        if (sneg) return mask_bits((uint64_t)(sv < lo ? lo : sv), dbits);
        return mask_bits(uv > (uint64_t)hi ? (uint64_t)hi : uv, dbits);
      }
      if (sneg) return 0;
      return uv > mask_bits(UINT64_MAX, dbits) ? mask_bits(UINT64_MAX, dbits) : uv;
    }
    return mask_bits(ptx_type_signed(st) ? (uint64_t)sv : uv, dbits);
  }
  if (!sf) { /* int -> float: one rounding of the exact integer */
    bool neg = false;
    uint64_t mag = mask_bits(v, sbits);
    if (ptx_type_signed(st)) {
      int64_t sv = (int64_t)(v << (64 - sbits)) >> (64 - sbits);
      neg = sv < 0;
      mag = neg ? 0 - (uint64_t)sv : (uint64_t)sv;
    }
    uint64_t r = ptx_round_float(neg, mag, 0, false, dt, rnd == PR_NONE ? PR_RN : rnd);
    if (flags & PF_SAT) r = from_double(fmin(fmax(to_double(r, dt), 0.0), 1.0), dt, PR_RN);
    return r;
  }
  if ((flags & PF_FTZ) && st == PT_F32 && is_subnormal(v, st)) v &= 0x80000000u; /* flush the input */
  double x = to_double(v, st);
  if (!df) return clamp_to_int(isnan(x) ? x : round_integral(x, rnd), dt);
  uint64_t r;
  if (isnan(x)) return flags & PF_SAT ? 0 : nan_bits(dt); /* .sat flushes NaN to +0.0 */
  if (rnd >= PR_RNI) r = from_double(round_integral(x, rnd), dt, PR_RN); /* to an integral value of the source */
  else r = from_double(x, dt, rnd == PR_NONE ? PR_RN : rnd);
  if ((flags & PF_FTZ) && dt == PT_F32 && is_subnormal(r, dt)) r &= 0x80000000u;
  if (flags & PF_SAT) { /* clamp to [0.0, 1.0] */
    double y = to_double(r, dt);
    if (!(y > 0)) r = 0;
    else if (y > 1) r = from_double(1.0, dt, PR_RN);
  }
  return r;
}

static int host_mode(ptx_rnd rnd) {
  switch (rnd) {
    case PR_RZ: return FE_TOWARDZERO;
    case PR_RM: return FE_DOWNWARD;
    case PR_RP: return FE_UPWARD;
    default: return FE_TONEAREST;
  }
}

/* Directed roundings switch the host's mode around one volatile operation (IEEE 754 ops honour it). */
float ptx_f32_op(char op, float a, float b, float c, ptx_rnd rnd) {
  volatile float va = a, vb = b, vc = c, r;
  bool directed = rnd == PR_RZ || rnd == PR_RM || rnd == PR_RP;
  if (directed) fesetround(host_mode(rnd));
  switch (op) {
    case '+': r = va + vb; break;
    case '-': r = va - vb; break;
    case '*': r = va * vb; break;
    case '/': r = va / vb; break;
    case 's': r = sqrtf(va); break;
    default: r = fmaf(va, vb, vc); break;
  }
  if (directed) fesetround(FE_TONEAREST);
  return r;
}

double ptx_f64_op(char op, double a, double b, double c, ptx_rnd rnd) {
  volatile double va = a, vb = b, vc = c, r;
  bool directed = rnd == PR_RZ || rnd == PR_RM || rnd == PR_RP;
  if (directed) fesetround(host_mode(rnd));
  switch (op) {
    case '+': r = va + vb; break;
    case '-': r = va - vb; break;
    case '*': r = va * vb; break;
    case '/': r = va / vb; break;
    case 's': r = sqrt(va); break;
    default: r = fma(va, vb, vc); break;
  }
  if (directed) fesetround(FE_TONEAREST);
  return r;
}

/* ------------------------------------------------------------------------------------------------ types */

static const struct {
  const char *name;
  int bits;
  bool is_signed, is_float;
} TYPES[PT_COUNT] = {
    [PT_NONE] = {"?", 0, false, false},     [PT_PRED] = {"pred", 1, false, false},
    [PT_B8] = {"b8", 8, false, false},      [PT_U8] = {"u8", 8, false, false},
    [PT_S8] = {"s8", 8, true, false},       [PT_B16] = {"b16", 16, false, false},
    [PT_U16] = {"u16", 16, false, false},   [PT_S16] = {"s16", 16, true, false},
    [PT_B32] = {"b32", 32, false, false},   [PT_U32] = {"u32", 32, false, false},
    [PT_S32] = {"s32", 32, true, false},    [PT_B64] = {"b64", 64, false, false},
    [PT_U64] = {"u64", 64, false, false},   [PT_S64] = {"s64", 64, true, false},
    [PT_F16] = {"f16", 16, false, true},    [PT_BF16] = {"bf16", 16, false, true},
    [PT_F32] = {"f32", 32, false, true},    [PT_F64] = {"f64", 64, false, true},
};

int ptx_type_bits(ptx_type t) { return t < PT_COUNT ? TYPES[t].bits : 0; }
bool ptx_type_signed(ptx_type t) { return t < PT_COUNT && TYPES[t].is_signed; }
bool ptx_type_float(ptx_type t) { return t < PT_COUNT && TYPES[t].is_float; }
const char *ptx_type_name(ptx_type t) { return t < PT_COUNT ? TYPES[t].name : "?"; }
