/* Backend decompositions (reference compiler.md 3.17): rewrite the ops the target does not render directly.
 * For `c`: MAX -> compare + where; RECIP -> 1 / x; EXP2, LOG2, SIN -> polynomial code built from plain arithmetic,
 * compares, selects, casts and bitcasts (a kernel may not call libm). float16/bfloat16 go through float32.
 *
 * exp2(x): n = round(x), f = x - n in [-1/2, 1/2], 2^f by its Taylor series in f*ln2 (degree 7 for float32, 13 for
 *   float64), times 2^n built from exponent bits in two halves (so that 2^n for n near the limits, where the result
 *   is subnormal or overflows, still has two valid exponent fields).
 * log2(x): x = m * 2^e with m in [sqrt(1/2), sqrt(2)) from the bits (subnormals pre-scaled); log2(m) =
 *   2/ln2 * atanh(s), s = (m-1)/(m+1), |s| < 0.172, by its odd series; then e is added. Specials by selects.
 * sin(x): Cody-Waite reduction by pi/2 with a three-part constant (k = round(x*2/pi), r = x - k*pi/2), Taylor
 *   polynomials for sin and cos on |r| <= pi/4, the quadrant k&3 picks and signs. Accurate for |x| up to ~1e5 in
 *   float32 (large arguments would need Payne-Hanek reduction); inf and nan give nan. */
#include <math.h>

#include "compiler/cc_internal.h"

#define LN2 0.693147180559945309417232121458176568
#define TWO_OVER_PI 0.636619772367581343075535053490057448

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
/* 2^n for an int n whose exponent field n + bias is valid */
static const uop *pow2i(fb *b, const uop *n) {
  int mant = b->f64 ? 52 : 23, bias = b->f64 ? 1023 : 127;
  return bitcast(b, b->f, uop_alu2(b->ctx, UOP_SHL, add(b, n, ic(b, bias)), ic(b, mant)));
}

static const uop *xexp2(fb *b, const uop *x) {
  double lo = b->f64 ? -1076 : -151, hi = b->f64 ? 1025 : 129;
  const uop *xc = sel(b, lt(b, x, fc(b, lo)), fc(b, lo), x);
  xc = sel(b, lt(b, fc(b, hi), xc), fc(b, hi), xc);        /* nan passes through both selects */
  const uop *xn = sel(b, ne(b, xc, xc), fc(b, 0), xc);      /* no float->int conversion of nan */
  const uop *half = sel(b, lt(b, xn, fc(b, 0)), fc(b, -0.5), fc(b, 0.5));
  const uop *n = uop_cast(b->ctx, b->i, add(b, xn, half));
  const uop *f = sub(b, xc, uop_cast(b->ctx, b->f, n));
  double c[14];
  int deg = b->f64 ? 13 : 7;
  c[0] = 1;
  for (int k = 1; k <= deg; k++) c[k] = c[k - 1] * LN2 / k;
  const uop *p = horner(b, f, c, deg + 1);
  const uop *n1 = uop_alu2(b->ctx, UOP_IDIV, n, ic(b, 2));
  const uop *n2 = sub(b, n, n1);
  return mul(b, mul(b, p, pow2i(b, n1)), pow2i(b, n2));
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
  const uop *s = uop_alu2(b->ctx, UOP_FDIV, sub(b, m, fc(b, 1)), add(b, m, fc(b, 1)));
  const uop *s2 = mul(b, s, s);
  double c[12];
  int nterms = b->f64 ? 11 : 5;
  for (int k = 0; k < nterms; k++) c[k] = 2.0 / ((2 * k + 1) * LN2);
  const uop *r = add(b, mul(b, s, horner(b, s2, c, nterms)), ef);
  r = sel(b, eq(b, x, fc(b, INFINITY)), fc(b, INFINITY), r);
  r = sel(b, lt(b, x, fc(b, 0)), fc(b, NAN), r);
  r = sel(b, eq(b, x, fc(b, 0)), fc(b, -INFINITY), r);
  return sel(b, ne(b, x, x), x, r);
}

static const uop *xsin(fb *b, const uop *x) {
  uop_dtype i32 = uop_dt(UOP_INT32);
  /* pi/2 split so that k*c1 (and k*c2 for float64) are exact for the k in range */
  double c1 = b->f64 ? 1.57079632673412561417e+00 : 1.5703125;
  double c2 = b->f64 ? 6.07710050630396597660e-11 : 4.837512969970703125e-4;
  double c3 = b->f64 ? 2.02226624879595063154e-21 : 7.54978995489188216e-8;
  double lim = 1e9;
  const uop *xn = sel(b, ne(b, x, x), fc(b, 0), x);
  xn = sel(b, lt(b, xn, fc(b, -lim)), fc(b, -lim), xn);
  xn = sel(b, lt(b, fc(b, lim), xn), fc(b, lim), xn);
  const uop *kx = mul(b, xn, fc(b, TWO_OVER_PI));
  const uop *half = sel(b, lt(b, kx, fc(b, 0)), fc(b, -0.5), fc(b, 0.5));
  const uop *k = uop_cast(b->ctx, i32, add(b, kx, half));
  const uop *kf = uop_cast(b->ctx, b->f, k);
  const uop *r = sub(b, sub(b, sub(b, x, mul(b, kf, fc(b, c1))), mul(b, kf, fc(b, c2))), mul(b, kf, fc(b, c3)));
  const uop *r2 = mul(b, r, r);
  double sc[10], cc[11];
  int ns = b->f64 ? 9 : 6, ncos = b->f64 ? 10 : 7;
  sc[0] = 1;
  for (int j = 1; j < ns; j++) sc[j] = -sc[j - 1] / ((2.0 * j) * (2.0 * j + 1));
  cc[0] = 1;
  for (int j = 1; j < ncos; j++) cc[j] = -cc[j - 1] / ((2.0 * j - 1) * (2.0 * j));
  const uop *sinp = mul(b, r, horner(b, r2, sc, ns));
  const uop *cosp = horner(b, r2, cc, ncos);
  const uop *q = uop_alu2(b->ctx, UOP_AND, k, uop_const_int(b->ctx, i32, 3));
  const uop *zero = uop_const_int(b->ctx, i32, 0);
  const uop *res = sel(b, ne(b, uop_alu2(b->ctx, UOP_AND, q, uop_const_int(b->ctx, i32, 1)), zero), cosp, sinp);
  res = sel(b, ne(b, uop_alu2(b->ctx, UOP_AND, q, uop_const_int(b->ctx, i32, 2)), zero), mul(b, res, fc(b, -1)), res);
  return add(b, res, sub(b, x, x)); /* + (x - x): nan for inf and nan inputs, 0 otherwise */
}

static const uop *decomp_fn(void *user, uop_ctx *ctx, const uop *n, hcq_status *st) {
  const cc_target *t = user;
  uop_op op = (uop_op)n->op;
  bool f64_decomp = n->dtype.scalar == UOP_FLOAT64 && (t->f64_decomposed_ops & UOP_OPBIT(op));
  if (!uop_op_is_alu(op) || ((t->supported_ops & UOP_OPBIT(op)) && !f64_decomp)) return n;
  if (n->dtype.count != 1) {
    *st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "decompositions: vector %s not supported yet", uop_op_name(op));
    return NULL;
  }
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
  return cc_rebuild(pc->ctx, sink, decomp_fn, (void *)pc->target, out_sink);
}
