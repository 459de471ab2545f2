/* Instruction tests of the PTX interpreter against independent references: every kernel of ptx_test_kernels.h runs
 * on thousands of threads (warps of 32, several blocks) over inputs that expose rounding bugs (ties of every
 * narrower format, values one f64 ulp off a tie that a double rounding through f32 gets wrong, +-0, +-inf, NaN,
 * subnormals, huge and tiny values, INT_MIN / -1, division by zero, shifts of 0..100) and each output is compared
 * with: the host FPU under the same rounding mode (fesetround) for f32/f64 results, a brute-force search of all
 * 65536 encodings for f16/bf16 results, libm (with the documented .approx bounds) for transcendentals, and the
 * rules PTX ISA "Integer Arithmetic Instructions" states (written out here in plain C). */
#include <fenv.h>
#include <float.h>
#include <math.h>

#include "compiler/interp.h"
#include "emulator_tests/ptx_test_kernels.h"
#include "emulator_tests/ptx_test_util.h"
#include "base/testing.h"

static uint64_t g_rng = 0x243f6a8885a308d3ull;
static uint64_t rnd64(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

static float asf(uint64_t v) {
  uint32_t b = (uint32_t)v;
  float f;
  memcpy(&f, &b, 4);
  return f;
}
static double asd(uint64_t v) {
  double d;
  memcpy(&d, &v, 8);
  return d;
}
static uint64_t fbits(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return b;
}
static uint64_t dbits(double d) {
  uint64_t b;
  memcpy(&b, &d, 8);
  return b;
}

/* ------------------------------------------------------------------------------------------------ references */

static int host_mode(char m) {
  return m == 'z' ? FE_TOWARDZERO : m == 'm' ? FE_DOWNWARD : m == 'p' ? FE_UPWARD : FE_TONEAREST;
}

static double dec16(uint16_t h, bool bf) { return bf ? (double)asf((uint64_t)h << 16) : (double)cc_f16_to_f32(h); }

/* x rounded to f16/bf16 by mode, by searching the encodings: the positive ones are ordered like their values. */
static uint16_t brute16(double x, bool bf, char mode) {
  if (isnan(x)) return 0x7fff;
  bool neg = signbit(x);
  double ax = fabs(x);
  char m = mode;
  if (neg && mode == 'm') m = 'p';
  else if (neg && mode == 'p') m = 'm';
  uint16_t inf = bf ? 0x7f80 : 0x7c00;
  double top = bf ? ldexp(1.0, 128) : 65536.0; /* where the exponent would run out: infinity's place */
  uint16_t lo = 0, hi = inf;                    /* largest encoding <= ax, smallest >= ax */
  while (hi - lo > 1) {
    uint16_t mid = (uint16_t)((lo + hi) / 2);
    if (dec16(mid, bf) <= ax) lo = mid;
    else hi = mid;
  }
  double vl = dec16(lo, bf), vh = hi == inf ? top : dec16(hi, bf);
  uint16_t r;
  if (isinf(ax)) r = inf;
  else if (vl == ax) r = lo;
  else if (m == 'z' || m == 'm') r = lo;
  else if (m == 'p') r = hi;
  else r = ax - vl < vh - ax ? lo : ax - vl > vh - ax ? hi : (lo & 1 ? hi : lo);
  return (uint16_t)(r | (neg ? 0x8000 : 0));
}

static float host_f32(double x, char m) {
  fesetround(host_mode(m));
  volatile double v = x;
  volatile float r = (float)v;
  fesetround(FE_TONEAREST);
  return r;
}

/* An integer -neg^mag rounded by mode to float (f64: double): the two neighbours bracketing it, found with
 * nextafter and compared with the integer exactly (hosts differ: 32-bit Arm converts 64-bit integers in software
 * that ignores the rounding mode, so no host conversion serves as the reference here). */
static bool le_int(double f, uint64_t mag) { /* f <= mag, f >= 0 integral or not */
  if (f >= 18446744073709551616.0) return false;
  uint64_t i = (uint64_t)f;
  return i < mag || (i == mag && f == (double)i);
}
static double int_to_float(uint64_t mag, bool neg, bool f64, char mode) {
  double lo = f64 ? (double)mag : (double)(float)mag; /* near the value, in the right format */
  if (f64) {
    while (!le_int(lo, mag)) lo = nextafter(lo, 0);
    while (le_int(nextafter(lo, INFINITY), mag)) lo = nextafter(lo, INFINITY);
  } else {
    while (!le_int(lo, mag)) lo = nextafterf((float)lo, 0);
    while (le_int(nextafterf((float)lo, INFINITY), mag)) lo = nextafterf((float)lo, INFINITY);
  }
  double hi = f64 ? nextafter(lo, INFINITY) : nextafterf((float)lo, INFINITY);
  bool exact = lo >= 18446744073709551616.0 ? false : (uint64_t)lo == mag && lo == (double)(uint64_t)lo;
  char m = mode;
  if (neg && mode == 'm') m = 'p';
  else if (neg && mode == 'p') m = 'm';
  double r;
  if (exact || m == 'z' || m == 'm') r = lo;
  else if (m == 'p') r = hi;
  else { /* nearest: twice the distance to lo against the gap, both exact */
    uint64_t ilo = (uint64_t)lo, gap_lo = mag - ilo; /* lo <= mag: both integers here when inexact */
    double gap = hi - lo;                           /* a power of two, exact */
    double twice = 2.0 * (double)gap_lo;            /* exact: gap_lo < gap <= 2^11 * ulp */
    if (twice < gap) r = lo;
    else if (twice > gap) r = hi;
    else r = (f64 ? (dbits(lo) & 1) : (fbits((float)lo) & 1)) ? hi : lo;
  }
  return neg ? -r : r;
}

/* float -> integer with an integer rounding: libm's rounding to an integral value, then PTX's saturation. */
static uint64_t f2i(double x, char m, int bits, bool sgn) {
  if (isnan(x)) return 0;
  fesetround(host_mode(m));
  volatile double v = x;
  double r = nearbyint(v);
  fesetround(FE_TONEAREST);
  double lo = sgn ? -ldexp(1, bits - 1) : 0, hi = sgn ? ldexp(1, bits - 1) : ldexp(1, bits);
  uint64_t mask = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
  if (r < lo) return sgn ? ((uint64_t)1 << (bits - 1)) : 0;
  if (r >= hi) return sgn ? ((uint64_t)1 << (bits - 1)) - 1 : mask;
  return (sgn ? (uint64_t)(int64_t)r : (uint64_t)r) & mask;
}

/* IEEE minNum/maxNum with -0 < +0; two NaNs give NaN (PTX ISA "min", "max"). */
static double minmax(double a, double b, bool mx, bool nanprop) {
  if (isnan(a) || isnan(b)) return nanprop || (isnan(a) && isnan(b)) ? NAN : isnan(a) ? b : a;
  if (a == 0 && b == 0) return mx ? (signbit(a) ? b : a) : (signbit(a) ? a : b);
  return mx ? (a > b ? a : b) : (a < b ? a : b);
}

/* The high 64 bits of a 64 x 64-bit product, by schoolbook multiplication of 16-bit digits of the magnitudes (a
 * method of its own, and no __int128 on 32-bit hosts), negated as a 128-bit two's complement when signs differ. */
static uint64_t mulhi_ref(uint64_t a, uint64_t b, bool sgn) {
  bool neg = false;
  if (sgn && (int64_t)a < 0) a = 0 - a, neg = !neg;
  if (sgn && (int64_t)b < 0) b = 0 - b, neg = !neg;
  uint64_t prod[8] = {0};
  for (int i = 0; i < 4; i++) {
    uint64_t carry = 0;
    for (int j = 0; j < 4; j++) {
      uint64_t t = prod[i + j] + ((a >> (16 * i)) & 0xffff) * ((b >> (16 * j)) & 0xffff) + carry;
      prod[i + j] = t & 0xffff;
      carry = t >> 16;
    }
    prod[i + 4] += carry;
  }
  uint64_t lo = 0, hi = 0;
  for (int i = 0; i < 4; i++) lo |= (uint64_t)prod[i] << (16 * i), hi |= (uint64_t)prod[i + 4] << (16 * i);
  if (neg) hi = ~hi + (lo == 0); /* -(hi:lo) = ~(hi:lo) + 1 */
  return hi;
}

typedef enum okind { O_INT, O_F16, O_BF16, O_F32, O_F64, O_APPROX } okind;

typedef struct expect {
  okind kind;
  uint64_t bits;      /* exact results */
  double want, tol;   /* O_APPROX: |got - want| <= tol (NaN/inf must match) */
  bool zero_any_sign; /* +0 or -0 both fine */
} expect;

static double ulp32(double x) {
  x = fabs(x);
  if (x < FLT_MIN) return ldexp(1, -149);
  int e;
  frexp(x, &e);
  return ldexp(1, e - 24);
}

#define NAME(s) (!strcmp(k->name, s))

static expect reference(const ptk_kernel *k, uint64_t a, uint64_t b) {
  expect e = {.kind = O_INT};
  const char *n = k->name;
  float fa = asf(a), fb = asf(b);
  double da = asd(a), db = asd(b);
  int32_t ia = (int32_t)a, ib = (int32_t)b;
  uint32_t ua = (uint32_t)a, ub = (uint32_t)b;
  int64_t la = (int64_t)a, lb = (int64_t)b;
  if (!strncmp(n, "cvt.r", 5) && (strstr(n, ".f16.f") || strstr(n, ".bf16.f")) && !strstr(n, ".s32")) {
    bool bf = strstr(n, ".bf16.") != NULL;
    double x = strstr(n, ".f64") ? da : fa;
    e.kind = bf ? O_BF16 : O_F16;
    e.bits = brute16(x, bf, n[5]);
    return e;
  }
  if (!strncmp(n, "cvt.r", 5) && strstr(n, ".f32.f64")) {
    e.kind = O_F32;
    e.bits = isnan(da) ? 0x7fffffff : fbits(host_f32(da, n[5]));
    return e;
  }
  if (!strncmp(n, "cvt.r", 5) && (strstr(n, ".f32.s") || strstr(n, ".f32.u") || strstr(n, ".f64.s") ||
                                  strstr(n, ".f64.u") || strstr(n, ".f16.s"))) {
    char m = n[5];
    bool u = strstr(n, ".u") != NULL, w64 = strstr(n, "64") && !strstr(n, ".f64.s32");
    int64_t sv = w64 ? la : ia;
    uint64_t mag = u ? (w64 ? a : ua) : sv < 0 ? 0 - (uint64_t)sv : (uint64_t)sv;
    bool neg = !u && sv < 0;
    if (strstr(n, ".f16.")) return (expect){.kind = O_F16, .bits = brute16((double)ia, false, 'n')};
    if (strstr(n, ".f64.")) return (expect){.kind = O_F64, .bits = dbits(int_to_float(mag, neg, true, m))};
    return (expect){.kind = O_F32, .bits = fbits((float)int_to_float(mag, neg, false, m))};
  }
  if (NAME("cvt.f32.f16")) return (expect){.kind = O_F32, .bits = fbits(cc_f16_to_f32((uint16_t)a))};
  if (NAME("cvt.f32.bf16")) return (expect){.kind = O_F32, .bits = (a & 0xffff) << 16};
  if (NAME("cvt.f64.f32")) return (expect){.kind = O_F64, .bits = dbits((double)fa)};
  if (!strncmp(n, "cvt.r", 5) && n[6] == 'i' && (strstr(n, ".s") || strstr(n, ".u")) && !strstr(n, ".f32.f32")) {
    int bits = strstr(n, "64.") ? 64 : strstr(n, "16.") ? 16 : 32;
    bool sgn = strstr(n, "i.s") != NULL;
    double x = strstr(n, ".f64") ? da : fa;
    uint64_t r = f2i(x, n[5] == 'n' ? 'n' : n[5], bits, sgn);
    if (bits == 16) r = (uint64_t)(int64_t)(int16_t)r; /* the kernel sign-extends */
    return (expect){.kind = O_INT, .bits = r};
  }
  if (NAME("cvt.rni.f32.f32")) return (expect){.kind = O_F32, .bits = fbits(nearbyintf(fa))};
  if (NAME("cvt.rmi.f64.f64")) return (expect){.kind = O_F64, .bits = dbits(floor(da))};
  if (NAME("cvt.sat.f32.f32"))
    return (expect){.kind = O_F32, .bits = fbits(isnan(fa) ? 0.0f : fa < 0 ? 0.0f : fa > 1 ? 1.0f : fa),
                    .zero_any_sign = true};
  if (NAME("cvt.ftz.f32.f32"))
    return (expect){.kind = O_F32, .bits = fbits(fabsf(fa) < FLT_MIN ? copysignf(0, fa) : fa)};
  if (NAME("cvt.s16.s8")) return (expect){.bits = (uint16_t)(int16_t)(int8_t)a};
  if (NAME("cvt.sat.u8.s32")) return (expect){.bits = (uint32_t)(ia < 0 ? 0 : ia > 255 ? 255 : ia)};
  if (NAME("cvt.sat.s16.s64")) return (expect){.bits = (uint16_t)(la < -32768 ? -32768 : la > 32767 ? 32767 : la)};
  if (NAME("cvt.s64.s32")) return (expect){.bits = (uint64_t)(int64_t)ia};
  /* integers: PTX ISA (division by zero: all ones / the dividend, see ptx_exec.c) */
  if (NAME("div.s32")) return (expect){.bits = ib == 0 ? 0xffffffffu : (ib == -1 ? (uint32_t)(0u - ua) : (uint32_t)(ia / ib))};
  if (NAME("div.u32")) return (expect){.bits = ub == 0 ? 0xffffffffu : ua / ub};
  if (NAME("rem.s32")) return (expect){.bits = ib == 0 ? ua : ib == -1 ? 0 : (uint32_t)(ia % ib)};
  if (NAME("rem.u32")) return (expect){.bits = ub == 0 ? ua : ua % ub};
  if (NAME("div.s64")) return (expect){.bits = lb == 0 ? UINT64_MAX : lb == -1 ? 0 - a : (uint64_t)(la / lb)};
  if (NAME("rem.u64")) return (expect){.bits = b == 0 ? a : a % b};
  if (NAME("shl.b32")) return (expect){.bits = ub >= 32 ? 0 : (uint32_t)(ua << ub)};
  if (NAME("shr.s32")) return (expect){.bits = (uint32_t)(ub >= 32 ? (ia < 0 ? -1 : 0) : ia >> ub)};
  if (NAME("shr.u32")) return (expect){.bits = ub >= 32 ? 0 : ua >> ub};
  if (NAME("shl.b64")) return (expect){.bits = ub >= 64 ? 0 : a << ub};
  if (NAME("shr.s64")) return (expect){.bits = (uint64_t)(ub >= 64 ? (la < 0 ? -1 : 0) : la >> ub)};
  if (NAME("shr.u16")) return (expect){.bits = ub >= 16 ? 0 : (uint16_t)a >> ub};
  if (NAME("mul.hi.s32")) return (expect){.bits = (uint32_t)(((int64_t)ia * ib) >> 32)};
  if (NAME("mul.hi.u32")) return (expect){.bits = (uint32_t)(((uint64_t)ua * ub) >> 32)};
  if (NAME("mul.hi.s64")) return (expect){.bits = mulhi_ref(a, b, true)};
  if (NAME("mul.hi.u64")) return (expect){.bits = mulhi_ref(a, b, false)};
  if (NAME("mul.wide.s32")) return (expect){.bits = (uint64_t)((int64_t)ia * ib)};
  if (NAME("mul.wide.u32")) return (expect){.bits = (uint64_t)ua * ub};
  if (NAME("mul.lo.s64")) return (expect){.bits = a * b};
  if (NAME("mad.lo.s32")) return (expect){.bits = (uint32_t)(ua * ub + ua)};
  if (NAME("add.sat.s32")) {
    int64_t s = (int64_t)ia + ib;
    return (expect){.bits = (uint32_t)(s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : s)};
  }
  if (NAME("sub.s16")) return (expect){.bits = (uint16_t)(a - b)};
  if (NAME("min.s32")) return (expect){.bits = (uint32_t)(ia < ib ? ia : ib)};
  if (NAME("max.u32")) return (expect){.bits = ua > ub ? ua : ub};
  if (NAME("max.s64")) return (expect){.bits = (uint64_t)(la > lb ? la : lb)};
  if (NAME("neg.s32")) return (expect){.bits = (uint32_t)(0u - ua)};
  if (NAME("abs.s32")) return (expect){.bits = ia < 0 ? 0u - ua : ua};
  if (NAME("not.b32")) return (expect){.bits = (uint32_t)~ua};
  if (NAME("setp.lt.s32")) return (expect){.bits = ia < ib};
  if (NAME("setp.hi.u32")) return (expect){.bits = ua > ub};
  if (NAME("setp.ge.s64")) return (expect){.bits = la >= lb ? 2 : 1};
  /* floats: the host's IEEE arithmetic under the same rounding mode */
  if (strstr(n, ".f32") && (!strncmp(n, "add.", 4) || !strncmp(n, "sub.", 4) || !strncmp(n, "mul.", 4) ||
                            !strncmp(n, "fma.", 4) || !strncmp(n, "mad.", 4) || !strncmp(n, "div.r", 5) ||
                            !strncmp(n, "sqrt.r", 6) || !strncmp(n, "rcp.r", 5))) {
    const char *dot = strchr(n, '.');
    fesetround(host_mode(dot[2]));
    volatile float x = fa, y = fb, r;
    switch (n[0]) {
      case 'a': r = x + y; break;
      case 's': r = n[1] == 'u' ? x - y : sqrtf(x); break;
      case 'm': r = n[1] == 'u' ? x * y : fmaf(x, y, y); break;
      case 'f': r = fmaf(x, y, n[5] == 'n' ? x : y); break;
      case 'd': r = x / y; break;
      default: r = 1.0f / x; break;
    }
    fesetround(FE_TONEAREST);
    return (expect){.kind = O_F32, .bits = fbits(r)};
  }
  if (NAME("add.rn.f64")) return (expect){.kind = O_F64, .bits = dbits(da + db)};
  if (NAME("div.rn.f64")) return (expect){.kind = O_F64, .bits = dbits(da / db)};
  if (NAME("fma.rn.f64")) return (expect){.kind = O_F64, .bits = dbits(fma(da, db, da))};
  if (NAME("sqrt.rn.f64")) return (expect){.kind = O_F64, .bits = dbits(sqrt(da))};
  if (NAME("rcp.rn.f64")) return (expect){.kind = O_F64, .bits = dbits(1.0 / da)};
  if (NAME("neg.f32")) return (expect){.kind = O_F32, .bits = (a ^ 0x80000000u) & 0xffffffffu};
  if (NAME("abs.f64")) return (expect){.kind = O_F64, .bits = a & ~((uint64_t)1 << 63)};
  if (NAME("min.f32")) return (expect){.kind = O_F32, .bits = fbits((float)minmax(fa, fb, false, false))};
  if (NAME("max.f32")) return (expect){.kind = O_F32, .bits = fbits((float)minmax(fa, fb, true, false))};
  if (NAME("max.NaN.f32")) return (expect){.kind = O_F32, .bits = fbits((float)minmax(fa, fb, true, true))};
  if (NAME("min.f64")) return (expect){.kind = O_F64, .bits = dbits(minmax(da, db, false, false))};
  if (NAME("setp.lt.f32")) return (expect){.bits = fa < fb};
  if (NAME("setp.ltu.f32")) return (expect){.bits = !(fa >= fb)};
  if (NAME("setp.neu.f32")) return (expect){.bits = !(fa == fb)};
  if (NAME("setp.eq.f64")) return (expect){.bits = da == db};
  if (NAME("setp.nan.f32")) return (expect){.bits = isnan(fa) || isnan(fb)};
  if (NAME("setp.num.and.f32")) return (expect){.bits = !isnan(fa) && !isnan(fb) && ia < 0};
  if (NAME("selp.f32")) return (expect){.kind = O_F32, .bits = ia < ib ? (uint32_t)a : (uint32_t)b};
  /* approximations: the documented bound around libm's value (PTX ISA "div", "sqrt", "rcp", "ex2", "lg2",
   * "sin", "cos") */
  e.kind = O_APPROX;
  if (NAME("div.full.f32") || NAME("div.approx.f32")) {
    e.want = (double)fa / fb;
    e.tol = fabs(fb) >= ldexp(1, -126) && fabs(fb) <= ldexp(1, 126) ? 2 * ulp32(e.want) : INFINITY;
  } else if (NAME("sqrt.approx.f32")) {
    e.want = sqrt((double)fa);
    e.tol = ldexp(fabs(e.want), -23) + ldexp(1, -149);
  } else if (NAME("rcp.approx.f32")) {
    e.want = 1.0 / fa;
    e.tol = ulp32(e.want);
  } else if (!strncmp(n, "ex2", 3)) {
    bool ftz = strstr(n, "ftz") != NULL;
    e.want = exp2(ftz && fabsf(fa) < FLT_MIN ? 0.0 : (double)fa);
    e.tol = 2.5 * ulp32(e.want) + (ftz ? ldexp(1, -126) : 0); /* 2 ulp from the correctly rounded result */
  } else if (!strncmp(n, "lg2", 3)) {
    e.want = log2((double)fa);
    bool near1 = fa > 0.5f && fa < 2.0f; /* absolute 2^-22 there, relative 2^-22 elsewhere */
    e.tol = near1 ? ldexp(1, -22) : ldexp(fabs(e.want), -22) + ldexp(1, -149);
  } else {
    e.want = n[0] == 's' ? sin((double)fa) : cos((double)fa);
    double ax = fabs((double)fa);
    e.tol = ax <= 2 * M_PI ? pow(2, -20.5) : ax <= 100 * M_PI ? pow(2, -14.7) : 2.0; /* absolute; none beyond */
  }
  return e;
}

static bool matches(const expect *e, uint64_t got, const ptk_kernel *k) {
  switch (e->kind) {
    case O_INT: return got == e->bits;
    case O_F16: case O_BF16: {
      got &= 0xffff;
      bool gn = e->kind == O_F16 ? (got & 0x7c00) == 0x7c00 && (got & 0x3ff) : (got & 0x7f80) == 0x7f80 && (got & 0x7f);
      bool wn = e->kind == O_F16 ? (e->bits & 0x7c00) == 0x7c00 && (e->bits & 0x3ff)
                                 : (e->bits & 0x7f80) == 0x7f80 && (e->bits & 0x7f);
      return gn || wn ? gn && wn : got == e->bits;
    }
    case O_F32: {
      if (got >> 32) return false;
      float g = asf(got), w = asf(e->bits);
      if (isnan(g) || isnan(w)) return isnan(g) && isnan(w);
      if (e->zero_any_sign && g == 0 && w == 0) return true;
      return got == e->bits;
    }
    case O_F64: {
      double g = asd(got), w = asd(e->bits);
      if (isnan(g) || isnan(w)) return isnan(g) && isnan(w);
      return got == e->bits;
    }
    default: {
      (void)k;
      if (got >> 32) return false;
      double g = asf(got);
      if (isnan(e->want) || isnan(g)) return isnan(e->want) && isnan(g);
      if (isinf(g) && isinf((float)e->want)) return signbit(g) == signbit(e->want); /* beyond FLT_MAX */
      if (isinf(e->want) || isinf(g)) return g == e->want || fabs(g - e->want) <= e->tol;
      return fabs(g - e->want) <= e->tol;
    }
  }
}

/* ------------------------------------------------------------------------------------------------ inputs */

static const float SPECIAL_F[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1.5f, 2.5f, -2.5f, 3.5f, -0.5f, 0.49999997f,
                                  1e10f, -1e10f, 4294967296.0f, 2147483648.0f, -2147483648.0f, 2147483520.0f,
                                  INFINITY, -INFINITY, NAN, -NAN, FLT_MIN, -FLT_MIN, 1e-45f, -1e-45f, 1e-40f,
                                  FLT_MAX, -FLT_MAX, 65504.0f, 65520.0f, 65519.996f, 3.14159265f, -3.14159265f,
                                  100.0f, -100.0f, 1e-8f, 128.0f, -150.0f, 0.75f, 1e-38f};
#define NSF (sizeof SPECIAL_F / sizeof SPECIAL_F[0])
static const int64_t SPECIAL_I[] = {0, 1, -1, 2, 31, 32, 33, 63, 64, 100, INT64_MIN, INT64_MAX, INT32_MIN, INT32_MAX,
                                    (int64_t)UINT32_MAX, 16777217, 16777219, ((int64_t)1 << 53) + 1,
                                    ((int64_t)1 << 62) + ((int64_t)1 << 38), -((int64_t)1 << 24) - 1, 255, 256, -129,
                                    32767, -32768, 65535, 65536, -2, 7};
#define NSI (sizeof SPECIAL_I / sizeof SPECIAL_I[0])

/* A value near a tie of f16 or bf16 (exact midpoints, and f32/f64 neighbours of them). */
static double near_tie(bool f64) {
  bool bf = rnd64() & 1;
  uint16_t h = (uint16_t)(rnd64() & 0x7fff);
  if ((h & (bf ? 0x7f80 : 0x7c00)) == (bf ? 0x7f80 : 0x7c00)) h = (uint16_t)(h & (bf ? 0x407f : 0x43ff));
  uint16_t h2 = (uint16_t)(h + 1);
  double v = dec16(h, bf), v2 = (h2 & (bf ? 0x7f80 : 0x7c00)) == (bf ? 0x7f80 : 0x7c00) ? (bf ? ldexp(1, 128) : 65536.0)
                                                                                       : dec16(h2, bf);
  double mid = (v + v2) / 2;
  switch (rnd64() % 4) {
    case 0: break;
    case 1: mid = f64 ? nextafter(mid, INFINITY) : nextafterf((float)mid, INFINITY); break;
    case 2: mid = f64 ? nextafter(mid, 0) : nextafterf((float)mid, 0); break;
    default: mid = f64 ? mid * (1 + ldexp(1, -40)) : mid; break; /* off the tie by less than an f32 ulp */
  }
  return rnd64() & 2 ? -mid : mid;
}

static uint64_t draw(ptk_in in, size_t i, int which) {
  uint64_t r = rnd64();
  switch (in) {
    case IN_F32: {
      if (i < NSF * NSF) return fbits(SPECIAL_F[which ? i % NSF : i / NSF]);
      if (r % 3 == 0) return (uint32_t)(r >> 32);
      return fbits((float)ldexp((double)(r >> 40) / (1 << 24) * ((r & 1) ? -1 : 1), (int)((r >> 8) % 40) - 20));
    }
    case IN_F64: {
      if (i < NSF * NSF) return dbits(SPECIAL_F[which ? i % NSF : i / NSF]);
      if (r % 3 == 0) return r;
      if (r % 3 == 1) return dbits((double)asf(r >> 32) * (1 + ldexp((double)(r & 0xffff), -45))); /* f32 + a bit */
      return dbits(ldexp((double)(r >> 11) / ldexp(1, 53) * ((r & 1) ? -1 : 1), (int)((r >> 8) % 80) - 40));
    }
    case IN_I64: case IN_I32: {
      if (i < NSI * NSI) return (uint64_t)SPECIAL_I[which ? i % NSI : i / NSI];
      int sh = (int)(rnd64() % 64);
      return which && r % 4 == 0 ? r % 70 : r >> sh;
    }
    case IN_F16: case IN_BF16: return which ? r : i & 0xffff;
    case IN_F16MID: {
      if (i < NSF) return fbits(SPECIAL_F[i]);
      return r % 4 == 0 ? (uint32_t)r : fbits((float)near_tie(false));
    }
    default: {
      if (i < NSF) return dbits(SPECIAL_F[i]);
      return r % 4 == 0 ? r : dbits(near_tie(true));
    }
  }
}

/* ------------------------------------------------------------------------------------------------ runs */

static hcq_status run_kernel(const char *src, const uint64_t *in, uint64_t *out, size_t n, ptx_stats *stats) {
  ptx_module *m = NULL;
  HCQ_TRY(ptx_module_parse(src, strlen(src), &m));
  ptu_mem mem = {.n = 0};
  uint64_t va[2] = {ptu_add(&mem, (void *)in, n * 16), ptu_add(&mem, out, n * 8)};
  ptx_launch l = {.grid = {(uint32_t)(n / 64), 1, 1}, .block = {64, 1, 1}, .params = va, .params_size_B = 16,
                  .mem = &(ptx_mem_ops){&mem, ptu_read, ptu_write}};
  hcq_status st = ptx_launch_run(m, &l, stats);
  ptx_module_free(m);
  return st;
}

static void test_kernel(const ptk_kernel *k) {
  size_t n = k->in == IN_F16 || k->in == IN_BF16 ? 65536 : 8192;
  uint64_t *in = calloc(n * 2, 8), *out = calloc(n, 8);
  char src[4096];
  snprintf(src, sizeof src, "%s%s%s", PTK_HEAD, k->body, PTK_TAIL);
  for (size_t i = 0; i < n; i++) {
    in[2 * i] = draw(k->in, i, 0);
    in[2 * i + 1] = draw(k->in, i, 1);
  }
  hcq_status st = run_kernel(src, in, out, n, NULL);
  if (st) {
    fprintf(stderr, "%s: %s\n", k->name, hcq_status_message(st));
    hcq_status_free(st);
    CHECK(!"run");
  } else {
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
      expect e = reference(k, in[2 * i], in[2 * i + 1]);
      if (!matches(&e, out[i], k)) {
        if (bad++ < 4)
          fprintf(stderr, "%s: inputs 0x%llx 0x%llx: got 0x%llx, want 0x%llx (%.9g, tol %.3g)\n", k->name,
                  (unsigned long long)in[2 * i], (unsigned long long)in[2 * i + 1], (unsigned long long)out[i],
                  (unsigned long long)e.bits, e.want, e.tol);
      }
    }
    testing_checks++;
    if (bad) {
      testing_failures++;
      fprintf(stderr, "%s: %zu of %zu results wrong\n", k->name, bad, n);
    }
  }
  free(in);
  free(out);
}

int main(void) {
  for (size_t i = 0; i < PTK_COUNT; i++) test_kernel(&PTK_KERNELS[i]);
  printf("%zu instruction kernels checked\n", PTK_COUNT);
  return testing_summary("ptx_interp");
}
