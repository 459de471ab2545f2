/* Backend decompositions (reference tinygrad/uop/decompositions.py): rewrite the ops the target does not render
 * directly. Float MAX -> compares + wheres (IEEE maximum, max_ieee below; c keeps float32 MAX). For `c` and
 * llvm-cpu: int MAX -> compare + where; RECIP -> 1 / x; EXP2, LOG2, SIN -> polynomial code built from plain
 * arithmetic, integer mul/shift/and/or, compares, selects, casts and bitcasts (a kernel may not call libm). The ptx
 * targets use the same EXP2/LOG2/SIN graphs, amdgpu SIN for every dtype and EXP2/LOG2 for float64 (target.c).
 * float16/bfloat16 go through float32 (one more rounding at the end).
 *
 * Accuracy, over the whole range (every finite input, subnormals included; compiler/decomp_test.c checks it
 * against libm with random bit patterns and the hard cases): sin <= 1 ulp and |sin| <= 1, log2 <= 1 ulp, exp2 <=
 * 1.5 ulp, for float32 and float64 (float16, bfloat16: <= 1 ulp). Measured maxima over 5e6 inputs per function,
 * dtype and target: sin 0.78, log2 0.82, exp2 1.11 ulp without fused multiply-adds (llvm-cpu, interpreter), less
 * with gcc's contraction (c); all 2^32 float32 inputs on c: sin 0.79, log2 0.82, exp2 0.91 ulp, specials right.
 * Nothing depends on whether the C compiler fuses a multiply-add. Specials: sin(+-inf)
 * and sin(nan) = nan, sin(-0) = -0; exp2(-inf) = 0, exp2(+inf) = inf, results under/overflow to subnormals, 0 and
 * inf as they should; log2(0) = -inf, log2(x < 0) = nan, log2(inf) = inf.
 *
 * exp2(x): n = round(x) (by adding 1.5*2^mant: no float->int conversion, so it vectorizes), f = x - n in [-1/2, 1/2],
 *   2^f by its Taylor series in f*ln2 (degree 7 for float32, 13 for float64), times 2^n built from exponent bits in
 *   two halves (so that 2^n for n near the limits, where the result
 *   is subnormal or overflows, still has two valid exponent fields).
 * log2(x): x = m * 2^e with m in [sqrt(1/2), sqrt(2)) from the bits (subnormals pre-scaled); ln(m) by fdlibm's
 *   f - (f^2/2 - s*(f^2/2 + R(s^2))), f = m - 1, s = f/(2+f), and its hi + lo split times 1/ln2 (fdlibm e_log2.c);
 *   then e is added. Specials by selects.
 * sin(x): |x| < pi/4 is its own reduced argument; else Payne-Hanek reduction by pi/2 in integer arithmetic
 *   (payne_hanek below: the bits of 2/pi that matter for x's exponent, selected from a table, times the
 *   significand, exact mod 4), giving the quadrant q and r = rh + rl in [-pi/4, pi/4] accurate to about 2^-60
 *   relative even for the inputs closest to a multiple of pi/2. Taylor polynomials for sin and cos on r (rl to
 *   first order), q picks and signs, the sign of x is applied by flipping the sign bit. The old Cody-Waite form
 *   (r = x - k*pi/2 with a 3-part pi/2) lost all accuracy from about 1e5 (float32) / 1e9 (float64). */
#include <math.h>
#include <string.h>

#include "compiler/cc_internal.h"

#define LN2 0.693147180559945309417232121458176568
#define INV_LN2L 1.442695040888963407359924681001892137L

typedef struct fb {
  uop_ctx *ctx;
  uop_dtype f, i; /* float dtype and the int dtype of its bits */
  bool f64;
} fb;

static const uop *fc(fb *b, double v) { return uop_const_float(b->ctx, b->f, v); }
static const uop *ic(fb *b, int64_t v) { return uop_const_int(b->ctx, b->i, v); }
static const uop *add(fb *b, const uop *x, const uop *y) { return uop_alu2(b->ctx, UOP_ADD, x, y); }
static const uop *sub(fb *b, const uop *x, const uop *y) { return uop_alu2(b->ctx, UOP_SUB, x, y); }
static const uop *mul(fb *b, const uop *x, const uop *y) { return uop_alu2(b->ctx, UOP_MUL, x, y); }
static const uop *lt(fb *b, const uop *x, const uop *y) { return uop_alu2(b->ctx, UOP_CMPLT, x, y); }
static const uop *ne(fb *b, const uop *x, const uop *y) { return uop_alu2(b->ctx, UOP_CMPNE, x, y); }
static const uop *eq(fb *b, const uop *x, const uop *y) { return uop_alu2(b->ctx, UOP_CMPEQ, x, y); }
static const uop *sel(fb *b, const uop *c, const uop *x, const uop *y) { return uop_where(b->ctx, c, x, y); }
static const uop *bitcast(fb *b, uop_dtype dt, const uop *x) {
  return uop_new(b->ctx, UOP_BITCAST, dt, &x, 1, uop_arg_none());
}
/* Horner: c[0] + x*(c[1] + x*(...)) */
static const uop *horner(fb *b, const uop *x, const double *c, int n) {
  const uop *acc = fc(b, c[n - 1]);
  for (int k = n - 2; k >= 0; k--) acc = add(b, mul(b, acc, x), fc(b, c[k]));
  return acc;
}
static const uop *xexp2(fb *b, const uop *x) {
  int mant = b->f64 ? 52 : 23;
  double lo = b->f64 ? -1076 : -151, hi = b->f64 ? 1025 : 129;
  const uop *xc = sel(b, lt(b, x, fc(b, lo)), fc(b, lo), x);
  xc = sel(b, lt(b, fc(b, hi), xc), fc(b, hi), xc);        /* nan passes through both selects */
  /* n = round(xc) without a float->int conversion (which vectorizes badly): xc + 1.5*2^mant lies in
   * [2^mant, 2^(mant+1)), where the ulp is 1, so the sum is rounded to an integer (to nearest even) and its low
   * bits are n plus the constant's bits. A nan makes f and so the result nan, whatever bits 2^n gets. */
  const uop *magic = fc(b, ldexp(1.5, mant));
  const uop *t = add(b, xc, magic);
  const uop *f = sub(b, xc, sub(b, t, magic)); /* both subtractions are exact */
  double c[14];
  int deg = b->f64 ? 13 : 7;
  c[0] = 1;
  for (int k = 1; k <= deg; k++) c[k] = c[k - 1] * LN2 / k;
  const uop *p = horner(b, f, c, deg + 1);
  /* 2^n = 2^n1 * 2^n2, n1 = floor(n/2), n2 = n - n1, in unsigned arithmetic: u = n + off - 2 > 0 (off = 256 / 2048
   * covers n >= -151 / -1076), so n1 + bias = u >> 1 and n2 + bias = u - (u >> 1) (bias = off/2 - 1): the biases
   * are folded into the one subtraction that makes u. */
  uop_dtype u_dt = uop_dt(b->f64 ? UOP_UINT64 : UOP_UINT32);
  uint64_t magic_bits = b->f64 ? 0x4338000000000000ull : 0x4b400000u, off = b->f64 ? 2048 : 256;
  const uop *u =
      uop_alu2(b->ctx, UOP_SUB, bitcast(b, u_dt, t), uop_const_int(b->ctx, u_dt, (int64_t)(magic_bits - off + 2)));
  const uop *h = uop_alu2(b->ctx, UOP_SHR, u, uop_const_int(b->ctx, u_dt, 1));
  const uop *sh = uop_const_int(b->ctx, u_dt, mant);
  const uop *e1 = h, *e2 = uop_alu2(b->ctx, UOP_SUB, u, h);
  const uop *p1 = bitcast(b, b->f, uop_alu2(b->ctx, UOP_SHL, e1, sh)), *p2 = bitcast(b, b->f, uop_alu2(b->ctx, UOP_SHL, e2, sh));
  return mul(b, mul(b, p, p1), p2);
}

static const uop *xlog2(fb *b, const uop *x) {
  int mant = b->f64 ? 52 : 23, bias = b->f64 ? 1023 : 127, scale = b->f64 ? 54 : 24;
  double min_normal = b->f64 ? 0x1p-1022 : 0x1p-126;
  const uop *tiny = lt(b, x, fc(b, min_normal));
  const uop *xs = sel(b, tiny, mul(b, x, fc(b, b->f64 ? 0x1p54 : 0x1p24)), x);
  const uop *eadj = sel(b, tiny, fc(b, -scale), fc(b, 0));
  const uop *bits = bitcast(b, b->i, xs);
  const uop *e = sub(b, uop_alu2(b->ctx, UOP_AND, uop_alu2(b->ctx, UOP_SHR, bits, ic(b, mant)),
                                 ic(b, b->f64 ? 0x7ff : 0xff)),
                     ic(b, bias));
  int64_t mant_mask = b->f64 ? (int64_t)0xfffffffffffffLL : 0x7fffff;
  int64_t one_bits = b->f64 ? (int64_t)0x3ff0000000000000LL : 0x3f800000;
  const uop *m = bitcast(b, b->f,
                         uop_alu2(b->ctx, UOP_OR, uop_alu2(b->ctx, UOP_AND, bits, ic(b, mant_mask)), ic(b, one_bits)));
  const uop *big = lt(b, fc(b, 1.41421356237309504880), m);
  m = sel(b, big, mul(b, m, fc(b, 0.5)), m);
  const uop *ef = add(b, add(b, uop_cast(b->ctx, b->f, e), sel(b, big, fc(b, 1), fc(b, 0))), eadj);
  /* ln(1+f) = f - (hfsq - s*(hfsq + R)), f = m - 1 (exact), s = f/(2+f), R = sum 2 s^2k/(2k+1) (fdlibm's form);
   * split as hi + lo with hi's low bits cleared so that hi * INV_LN2_HI is exact, then e added (fdlibm e_log2.c) */
  const uop *f = sub(b, m, fc(b, 1));
  const uop *s = uop_alu2(b->ctx, UOP_FDIV, f, add(b, f, fc(b, 2)));
  const uop *z = mul(b, s, s), *hfsq = mul(b, mul(b, f, f), fc(b, 0.5));
  double c[12];
  int nterms = b->f64 ? 11 : 5;
  for (int k = 0; k < nterms; k++) c[k] = 2.0 / (2 * k + 3);
  const uop *R = mul(b, z, horner(b, z, c, nterms));
  int64_t himask = b->f64 ? (int64_t)0xffffffff : 0xfff;
  const uop *hi = sub(b, f, hfsq);
  hi = bitcast(b, b->f, uop_alu2(b->ctx, UOP_AND, bitcast(b, b->i, hi), ic(b, ~himask)));
  const uop *lo = add(b, sub(b, sub(b, f, hi), hfsq), mul(b, s, add(b, hfsq, R)));
  double ivhi, ivlo;
  if (b->f64) {
    uint64_t u;
    double d = (double)INV_LN2L;
    memcpy(&u, &d, 8);
    u &= ~(uint64_t)0xffffffff;
    memcpy(&ivhi, &u, 8);
    ivlo = (double)(INV_LN2L - ivhi);
  } else {
    uint32_t u;
    float d = (float)INV_LN2L, h;
    memcpy(&u, &d, 4);
    u &= ~(uint32_t)0xfff;
    memcpy(&h, &u, 4);
    ivhi = h, ivlo = (float)(INV_LN2L - h);
  }
  const uop *vhi = mul(b, hi, fc(b, ivhi));
  const uop *vlo = add(b, mul(b, add(b, lo, hi), fc(b, ivlo)), mul(b, lo, fc(b, ivhi)));
  const uop *w = add(b, ef, vhi);
  vlo = add(b, vlo, add(b, sub(b, ef, w), vhi)); /* |ef| >= 1 > |vhi| or ef == 0: exact */
  const uop *r = add(b, vlo, w);
  r = sel(b, eq(b, x, fc(b, INFINITY)), fc(b, INFINITY), r);
  r = sel(b, lt(b, x, fc(b, 0)), fc(b, NAN), r);
  r = sel(b, eq(b, x, fc(b, 0)), fc(b, -INFINITY), r);
  return sel(b, ne(b, x, x), x, r);
}

/* Bits 1..1216 after the binary point of 2/pi, 64 to a word (from `bc -l`: scale=450; obase=16; 2/(4*a(1)));
 * index 0 is a zero word so that the window of small arguments starts at a valid bit. */
static const uint64_t TWO_OVER_PI_BITS[20] = {
    0, 0xA2F9836E4E441529ull, 0xFC2757D1F534DDC0ull, 0xDB6295993C439041ull, 0xFE5163ABDEBBC561ull,
    0xB7246E3A424DD2E0ull, 0x06492EEA09D1921Cull, 0xFE1DEB1CB129A73Eull, 0xE88235F52EBB4484ull,
    0xE99C7026B45F7E41ull, 0x3991D639835339F4ull, 0x9C845F8BBDF9283Bull, 0x1FF897FFDE05980Full,
    0xEF2F118B5A0A6D1Full, 0x6D367ECF27CB09B7ull, 0x4F463F669E5FEA2Dull, 0x7527BAC7EBE5F17Bull,
    0x3D0739F78A5292EAull, 0x6BFB5FB11F8D5D08ull, 0x56033046FC7B6BABull};

static const uop *uc(fb *b, uint64_t v) { return uop_const_int(b->ctx, uop_dt(UOP_UINT64), (int64_t)v); }
static const uop *u_and(fb *b, const uop *x, uint64_t m) { return uop_alu2(b->ctx, UOP_AND, x, uc(b, m)); }
static const uop *u_shl(fb *b, const uop *x, const uop *s) { return uop_alu2(b->ctx, UOP_SHL, x, s); }
static const uop *u_shr(fb *b, const uop *x, const uop *s) { return uop_alu2(b->ctx, UOP_SHR, x, s); }
static const uop *u_or(fb *b, const uop *x, const uop *y) { return uop_alu2(b->ctx, UOP_OR, x, y); }

/* Payne-Hanek: for a finite |x| >= pi/4 with bits ab (sign cleared, as uint64), the quadrant q (low 2 bits count)
 * and the reduced argument r = |x| - q*pi/2 in [-pi/4, pi/4] as rh + rl, from exact integer arithmetic.
 * x = m * 2^E (m the integer significand). Bits j of 2/pi with E - j >= 2 add multiples of 4 to x*2/pi and are
 * skipped: the window of L 32-bit limbs A starts at bit E - 1, and (x*2/pi mod 4) = (m*A mod 2^32L) * 2^(2-32L),
 * whose top 2 bits are q and the rest the fraction. L = 3 (float32) / 6 (float64) keeps the dropped tail below
 * 2^-70 / 2^-137, enough for the closest approaches of a float / double to a multiple of pi/2 (about 2^-62 for
 * doubles, Muller, "Elementary Functions", ch. 11). The fraction, rounded to nearest, is converted to a float pair
 * and multiplied by pi/2 split so that the leading products are exact (so a C compiler fusing a multiply-add
 * changes nothing that matters). The reduction itself is integer mul/shift/and/or, compares, selects and casts. */
static void payne_hanek(fb *b, const uop *ab, const uop **q_out, const uop **rh_out, const uop **rl_out) {
  uop_dtype i64 = uop_dt(UOP_INT64);
  int mant = b->f64 ? 52 : 23, bias = b->f64 ? 1023 : 127, L = b->f64 ? 6 : 3;
  const uop *eb = u_shr(b, ab, uc(b, (uint64_t)mant));
  eb = sel(b, lt(b, eb, uc(b, (uint64_t)bias - 1)), uc(b, (uint64_t)bias - 1), eb); /* small x: a valid window */
  const uop *m = u_or(b, u_and(b, ab, ((uint64_t)1 << mant) - 1), uc(b, (uint64_t)1 << mant));
  /* bit index of the window start in the table (bit 0 = the MSB of word 0): E - 2 + 64 */
  const uop *g0 = sub(b, eb, uc(b, (uint64_t)(bias + mant - 62)));
  const uop *w = u_shr(b, g0, uc(b, 6)), *s = u_and(b, g0, 63);
  int nw = (L + 1) / 2, ntab = b->f64 ? 20 : 5;
  const uop *raw[4];
  for (int i = 0; i <= nw; i++) { /* raw[i] = table[w + i]; the compares w == j are shared */
    raw[i] = uc(b, TWO_OVER_PI_BITS[ntab - 1]);
    for (int j = ntab - 2 - i; j >= 0; j--)
      raw[i] = sel(b, eq(b, w, uc(b, (uint64_t)j)), uc(b, TWO_OVER_PI_BITS[j + i]), raw[i]);
  }
  const uop *A[6];
  for (int i = 0; i < nw; i++) { /* (raw[i] << s) | (raw[i+1] >> (64 - s)), without a shift by 64 */
    const uop *bw = u_or(b, u_shl(b, raw[i], s), u_shr(b, u_shr(b, raw[i + 1], uc(b, 1)), sub(b, uc(b, 63), s)));
    A[2 * i] = u_shr(b, bw, uc(b, 32));
    if (2 * i + 1 < L) A[2 * i + 1] = u_and(b, bw, 0xffffffffu);
  }
  /* columns of the low L digits of m*A (A[0] most significant), then carries */
  const uop *ml = u_and(b, m, 0xffffffffu), *mh = u_shr(b, m, uc(b, 32));
  const uop *col[6] = {0};
  for (int i = 0; i < L; i++)
    for (int h = 0; h < (b->f64 ? 2 : 1); h++) {
      int p = L - 1 - i + h;
      if (p >= L) continue;
      const uop *prod = mul(b, h ? mh : ml, A[i]);
      const uop *lo = u_and(b, prod, 0xffffffffu);
      col[p] = col[p] ? add(b, col[p], lo) : lo;
      if (p + 1 < L) {
        const uop *hi = u_shr(b, prod, uc(b, 32));
        col[p + 1] = col[p + 1] ? add(b, col[p + 1], hi) : hi;
      }
    }
  const uop *D[6];
  for (int p = 0; p < L; p++) {
    if (p > 0) col[p] = add(b, col[p], u_shr(b, col[p - 1], uc(b, 32)));
    D[p] = u_and(b, col[p], 0xffffffffu);
  }
  /* t: the 64 fraction bits after the quadrant bits; as a signed number it is the fraction rounded to nearest */
  const uop *t = u_or(b, u_or(b, u_shl(b, D[L - 1], uc(b, 34)), u_shl(b, D[L - 2], uc(b, 2))),
                      u_shr(b, D[L - 3], uc(b, 30)));
  *q_out = add(b, u_shr(b, D[L - 1], uc(b, 30)), u_shr(b, t, uc(b, 63)));
  /* sf = t / 2 as int64 (|sf| <= 2^62: its float conversion converts back without overflow); scale 2^-63 */
  const uop *sf = bitcast(b, i64, u_or(b, u_shr(b, t, uc(b, 1)), u_and(b, t, (uint64_t)1 << 63)));
  const uop *hi = uop_cast(b->ctx, b->f, sf);
  const uop *lo = uop_cast(b->ctx, b->f, sub(b, sf, uop_cast(b->ctx, i64, hi))); /* exact residual */
  if (b->f64) { /* the next 64 bits, below the one t / 2 dropped */
    const uop *t2 = u_or(b, u_or(b, u_shl(b, D[L - 3], uc(b, 34)), u_shl(b, D[L - 4], uc(b, 2))),
                         u_shr(b, D[L - 5], uc(b, 30)));
    t2 = u_or(b, u_shl(b, u_and(b, t, 1), uc(b, 63)), u_shr(b, t2, uc(b, 1)));
    lo = add(b, lo, mul(b, uop_cast(b->ctx, b->f, t2), fc(b, 0x1p-64)));
  }
  const uop *sh = add(b, hi, lo), *sl = sub(b, lo, sub(b, sh, hi)); /* renormalize (|hi| >= |lo|) */
  /* (sh + sl) * 2^-63 * pi/2, pi/2 = P1 + P2 with P1 of 26 (12) bits; sh = shh + shl splits sh's significand */
  double p1 = b->f64 ? 0x1.921fb5p+0 : 0x1.92p+0, p2 = b->f64 ? 0x1.110b4611a6263p-26 : 0x1.fb5444p-12;
  p1 *= 0x1p-63, p2 *= 0x1p-63;
  int64_t lowmask = b->f64 ? ((int64_t)1 << 27) - 1 : ((int64_t)1 << 12) - 1;
  const uop *shh = bitcast(b, b->f, uop_alu2(b->ctx, UOP_AND, bitcast(b, b->i, sh), ic(b, ~lowmask)));
  const uop *shl = sub(b, sh, shh);
  const uop *pa = mul(b, shh, fc(b, p1)), *pb = mul(b, shl, fc(b, p1)); /* both exact */
  const uop *pc = add(b, mul(b, sh, fc(b, p2)), mul(b, sl, fc(b, p1)));
  const uop *tail = add(b, pb, pc);
  *rh_out = add(b, pa, tail);
  *rl_out = add(b, sub(b, pa, *rh_out), tail);
}

static const uop *xsin(fb *b, const uop *x) {
  int nbits = b->f64 ? 64 : 32;
  int64_t sign = (int64_t)((uint64_t)1 << (nbits - 1));
  const uop *bits = bitcast(b, b->i, x);
  const uop *ab = uop_alu2(b->ctx, UOP_AND, bits, ic(b, ~sign));
  const uop *ax = bitcast(b, b->f, ab);
  const uop *q, *rh, *rl;
  payne_hanek(b, uop_cast(b->ctx, uop_dt(UOP_UINT64), ab), &q, &rh, &rl);
  const uop *small = lt(b, ax, fc(b, b->f64 ? 0x1.921fb54442d18p-1 : 0x1.921fb4p-1)); /* below pi/4 */
  rh = sel(b, small, ax, rh);
  rl = sel(b, small, fc(b, 0), rl);
  q = sel(b, small, uc(b, 0), q);
  /* Taylor polynomials on |r| <= pi/4, the tail rl entering to first order */
  const uop *r2 = mul(b, rh, rh);
  double sc[10], cc[11];
  int ns = b->f64 ? 9 : 6, ncos = b->f64 ? 10 : 7;
  sc[0] = 1;
  for (int j = 1; j < ns; j++) sc[j] = -sc[j - 1] / ((2.0 * j) * (2.0 * j + 1));
  cc[0] = 1;
  for (int j = 1; j < ncos; j++) cc[j] = -cc[j - 1] / ((2.0 * j - 1) * (2.0 * j));
  const uop *sinp = add(b, rh, add(b, mul(b, mul(b, rh, r2), horner(b, r2, sc + 1, ns - 1)),
                                  mul(b, rl, sub(b, fc(b, 1), mul(b, r2, fc(b, 0.5))))));
  /* cos = 1 - r2/2 + r2^2*C: w = 1 - r2/2 rounded, its rounding error added back (exact: w >= 1/2) */
  const uop *hz = mul(b, r2, fc(b, 0.5)), *w = sub(b, fc(b, 1), hz);
  const uop *ctail = sub(b, mul(b, mul(b, r2, r2), horner(b, r2, cc + 2, ncos - 2)), mul(b, rh, rl));
  const uop *cosp = add(b, w, add(b, sub(b, sub(b, fc(b, 1), w), hz), ctail));
  const uop *res = sel(b, ne(b, u_and(b, q, 1), uc(b, 0)), cosp, sinp);
  /* sign: quadrants 2 and 3 negate, and sin(-x) = -sin(x); by flipping the sign bit (keeps -0) */
  const uop *qs = uop_alu2(b->ctx, UOP_SHL, uop_cast(b->ctx, b->i, u_and(b, q, 2)), ic(b, nbits - 2));
  const uop *flip = uop_alu2(b->ctx, UOP_XOR, qs, uop_alu2(b->ctx, UOP_AND, bits, ic(b, sign)));
  res = bitcast(b, b->f, uop_alu2(b->ctx, UOP_XOR, bitcast(b, b->i, res), flip));
  return sel(b, lt(b, ax, fc(b, INFINITY)), res, fc(b, NAN)); /* inf and nan give nan */
}

/* Float MAX is IEEE 754-2019 maximum on every target: a NaN if either operand is NaN (a + b), -0 < +0 (for equal
 * zeros a + b is the larger one), else the larger operand. The result does not depend on the operand order, which
 * the simplifier (commutative MAX) and reductions in any order (UPCAST, UNROLL, GROUP) rely on. No plain max
 * instruction has that meaning (x86 maxss returns its second operand for NaN and zeros, ptx max.f32 drops NaN), so
 * every target gets these selects, except float32 on c: render_c.c's HCQ_FMAX macros compute the same function. */
static const uop *max_ieee(uop_ctx *ctx, const uop *a, const uop *b) {
  const uop *sum = uop_alu2(ctx, UOP_ADD, a, b);
  const uop *tie = uop_where(ctx, uop_alu2(ctx, UOP_CMPEQ, a, uop_const_float(ctx, a->dtype, 0.0)), sum, a);
  const uop *rest = uop_where(ctx, uop_alu2(ctx, UOP_CMPEQ, a, b), tie, sum);
  return uop_where(ctx, uop_alu2(ctx, UOP_CMPLT, a, b), b,
                   uop_where(ctx, uop_alu2(ctx, UOP_CMPLT, b, a), a, rest));
}

/* Does the target need n rewritten (an ALU op it lacks, a float64 op it decomposes, or a float MAX)? */
static bool needs_decomp(const cc_target *t, const uop *n) {
  uop_op op = (uop_op)n->op;
  bool f64_decomp = n->dtype.scalar == UOP_FLOAT64 && (t->f64_decomposed_ops & UOP_OPBIT(op));
  if (op == UOP_MAX && n->dtype.scalar == UOP_FLOAT32 && t->fmax_f32_rendered) return false; /* c: HCQ_FMAX */
  bool fmax = op == UOP_MAX && uop_dt_is_float(n->dtype); /* decomposed (max_ieee) */
  return uop_op_is_alu(op) && (!(t->supported_ops & UOP_OPBIT(op)) || f64_decomp || fmax);
}

static const uop *decomp_fn(void *user, uop_ctx *ctx, const uop *n, hcq_status *st) {
  const cc_target *t = user;
  uop_op op = (uop_op)n->op;
  if (!needs_decomp(t, n)) return n;
  bool fmax = op == UOP_MAX && uop_dt_is_float(n->dtype);
  if (n->dtype.count != 1) {
    *st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "decompositions: vector %s not supported yet", uop_op_name(op));
    return NULL;
  }
  if (fmax) return max_ieee(ctx, n->src[0], n->src[1]);
  if (op == UOP_MAX) return uop_where(ctx, uop_alu2(ctx, UOP_CMPLT, n->src[0], n->src[1]), n->src[1], n->src[0]);
  if (op == UOP_RECIP) return uop_alu2(ctx, UOP_FDIV, uop_const_float(ctx, n->dtype, 1.0), n->src[0]);
  if (op != UOP_EXP2 && op != UOP_LOG2 && op != UOP_SIN) {
    *st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "target %s cannot render %s and has no decomposition for it",
                          t->name, op == UOP_OP_COUNT ? "?" : uop_op_name(op));
    return NULL;
  }
  if (!uop_dt_is_float(n->dtype)) {
    *st = hcq_status_make(HCQ_CODE_INVALID, "%s of non-float dtype %s", uop_op_name(op), uop_dt_name(n->dtype));
    return NULL;
  }
  fb b = {.ctx = ctx, .f64 = n->dtype.scalar == UOP_FLOAT64};
  b.f = b.f64 ? uop_dt(UOP_FLOAT64) : uop_dt(UOP_FLOAT32);
  b.i = b.f64 ? uop_dt(UOP_INT64) : uop_dt(UOP_INT32);
  const uop *x = n->src[0];
  bool narrow = n->dtype.scalar != UOP_FLOAT32 && !b.f64;
  if (narrow) x = uop_cast(ctx, b.f, x);
  const uop *r = op == UOP_EXP2 ? xexp2(&b, x) : op == UOP_LOG2 ? xlog2(&b, x) : xsin(&b, x);
  return narrow ? uop_cast(ctx, n->dtype, r) : r;
}

hcq_status cc_pass_decompose(cc_pass_ctx *pc, const uop *sink, const uop **out_sink) {
  /* nothing to decompose (the common case on c): the rebuild would return sink itself, skip its walk */
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(pc->ctx, sink, &nodes, &count));
  size_t k = 0;
  while (k < count && !needs_decomp(pc->target, nodes[k])) k++;
  if (k == count) {
    *out_sink = sink;
    return HCQ_OK;
  }
  return cc_rebuild(pc->ctx, sink, decomp_fn, (void *)pc->target, out_sink);
}
