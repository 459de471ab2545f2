/* Every cast between bool, int8..int64, uint8..uint64, float16, bfloat16, float32 and float64, compiled for the c
 * and llvm-cpu targets with no opts, UPCAST 4 and UPCAST 8, run natively on inputs that cover each source type
 * (boundaries, values that round in every narrower type, halfway cases for round-to-nearest-even, overflow to
 * inf, subnormals, +-inf, NaN, -0, random bit patterns) and compared bit-exactly (a NaN matches any NaN) with the
 * reference below and with the interpreter.
 *
 * The reference is written apart from every conversion in the project: a value of a narrow float format is found
 * by binary search over its (monotone) bit patterns and the tie against the exact midpoint of the two neighbours
 * (sums of two <= 24-bit significands: exact in double); integers compare exactly against those candidates.
 * Semantics (docs/FORMATS.md): int -> int wraps; float -> int truncates, saturates, NaN -> 0; x -> bool is x != 0
 * (NaN -> true); to a float rounds once to nearest even, overflow to inf. */
#include "compiler/cc_test_util.h"
#include "compiler/interp.h"
#include "base/testing.h"

enum { NDT = 13, N = 512 };

static const uop_scalar DTS[NDT] = {UOP_BOOL,   UOP_INT8,   UOP_INT16,   UOP_INT32,   UOP_INT64,
                                    UOP_UINT8,  UOP_UINT16, UOP_UINT32,  UOP_UINT64,  UOP_FLOAT16,
                                    UOP_BFLOAT16, UOP_FLOAT32, UOP_FLOAT64};

/* ------------------------------------------------------------------------------------------------ reference */

typedef struct fmt {
  int bits, man, bias; /* total bits, stored mantissa bits, exponent bias */
} fmt;

static const fmt F16 = {16, 10, 15}, BF16 = {16, 7, 127}, F32 = {32, 23, 127}, F64 = {64, 52, 1023};

static uint64_t inf_bits(fmt f) { return ((((uint64_t)1 << (f.bits - 1 - f.man)) - 1) << f.man); }

/* value of a non-negative bit pattern; the inf pattern stands for 2^(emax+1), the virtual next value */
static double decode(fmt f, uint64_t b) {
  if (b == inf_bits(f)) return ldexp(1.0, f.bias + 1);
  uint64_t e = b >> f.man, m = b & (((uint64_t)1 << f.man) - 1);
  if (!e) return ldexp((double)m, 1 - f.bias - f.man);
  return ldexp((double)(m | (uint64_t)1 << f.man), (int)e - f.bias - f.man);
}

typedef struct xval { /* an exact source value */
  bool is_int, neg, nan;
  uint64_t mag; /* integers: magnitude */
  double d;     /* floats */
} xval;

/* |x| compared with c >= 0 (c may be 2^64 or more) */
static int cmp_mag(const xval *x, double c) {
  if (!x->is_int) {
    double a = fabs(x->d);
    return a < c ? -1 : a > c;
  }
  if (c >= 18446744073709551616.0) return -1;
  double fl = floor(c);
  uint64_t ci = (uint64_t)fl;
  if (fl == c) return x->mag < ci ? -1 : x->mag > ci;
  return x->mag <= ci ? -1 : 1; /* c is not an integer: strictly between ci and ci + 1 */
}

static uint64_t round_ref(fmt f, const xval *x) {
  uint64_t sign = (uint64_t)x->neg << (f.bits - 1), top = inf_bits(f);
  if (cmp_mag(x, decode(f, top)) >= 0) return sign | top;
  uint64_t lo = 0, hi = top; /* decode(lo) <= |x| < decode(hi) */
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (cmp_mag(x, decode(f, mid)) >= 0) lo = mid;
    else hi = mid;
  }
  if (cmp_mag(x, decode(f, lo)) == 0) return sign | lo;
  int c = cmp_mag(x, (decode(f, lo) + decode(f, hi)) / 2);
  return sign | (c < 0 ? lo : c > 0 ? hi : (lo & 1) ? hi : lo);
}

static bool is_float(uop_scalar s) { return s >= UOP_FLOAT16 && s <= UOP_FLOAT64; }
static fmt fmt_of(uop_scalar s) {
  return s == UOP_FLOAT16 ? F16 : s == UOP_BFLOAT16 ? BF16 : s == UOP_FLOAT32 ? F32 : F64;
}
static int bits_of(uop_scalar s) { return uop_dt_bits(uop_dt(s)); }
static bool is_uns(uop_scalar s) { return uop_dt_is_unsigned(uop_dt(s)); }

static uint64_t get_raw(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  memcpy(&v, p, (size_t)bytes); /* little-endian hosts */
  return v;
}

/* The exact value of element raw of dtype s. */
static xval read_x(uop_scalar s, uint64_t raw) {
  xval x = {0};
  if (!is_float(s)) {
    int bits = bits_of(s);
    if (s == UOP_BOOL) raw = raw != 0;
    x.is_int = true;
    bool neg = !is_uns(s) && s != UOP_BOOL && (raw >> (bits - 1) & 1);
    uint64_t v = bits < 64 && neg ? raw | ~(((uint64_t)1 << bits) - 1) : raw;
    x.neg = neg;
    x.mag = neg ? 0 - v : v;
    return x;
  }
  fmt f = fmt_of(s);
  uint64_t sign = raw >> (f.bits - 1) & 1, mag = raw & (~0ull >> (65 - f.bits));
  x.neg = sign;
  if (mag > inf_bits(f)) x.nan = true, x.d = NAN;
  else x.d = (mag == inf_bits(f) ? INFINITY : decode(f, mag)) * (sign ? -1 : 1);
  return x;
}

/* expected result bits; *any_nan when any NaN is right */
static uint64_t expect(uop_scalar to, const xval *x, bool *any_nan) {
  *any_nan = false;
  int bits = bits_of(to);
  uint64_t mask = bits == 64 ? ~0ull : ((uint64_t)1 << bits) - 1;
  if (to == UOP_BOOL) return x->is_int ? x->mag != 0 : (x->nan || x->d != 0);
  if (!is_float(to)) {
    if (x->is_int) return (x->neg ? 0 - x->mag : x->mag) & mask; /* wrap */
    if (x->nan) return 0;
    double t = trunc(x->d);
    if (is_uns(to)) return t <= 0 ? 0 : t >= ldexp(1.0, bits) ? mask : (uint64_t)t;
    double lim = ldexp(1.0, bits - 1);
    if (t >= lim) return ((uint64_t)1 << (bits - 1)) - 1;
    if (t < -lim) return (uint64_t)1 << (bits - 1);
    return (uint64_t)(int64_t)t & mask;
  }
  if (x->nan) {
    *any_nan = true;
    return 0;
  }
  if (to == UOP_FLOAT64 && x->is_int) { /* the C compiler's int -> double: one rounding */
    double d = x->neg ? (double)(int64_t)(0 - x->mag) : (double)x->mag;
    if (x->neg && x->mag == (uint64_t)1 << 63) d = -9223372036854775808.0;
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
  }
  if (to == UOP_FLOAT64 || (x->is_int && x->mag == 0)) {
    double d = x->is_int ? 0.0 : x->d;
    uint64_t u;
    memcpy(&u, &d, 8);
    return to == UOP_FLOAT64 ? u : (u >> 63) << (bits - 1);
  }
  if (!x->is_int && isinf(x->d)) return (uint64_t)x->neg << (bits - 1) | inf_bits(fmt_of(to));
  return round_ref(fmt_of(to), x);
}

static bool nan_bits(uop_scalar s, uint64_t raw) {
  fmt f = fmt_of(s);
  uint64_t mag = raw & (~0ull >> (65 - f.bits));
  return mag > inf_bits(f);
}

/* ------------------------------------------------------------------------------------------------ inputs */

static uint64_t rng(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* a double as the nearest value of float dtype s, as raw bits (any rounding: the reference reads it back) */
static uint64_t to_raw(uop_scalar s, double d) {
  if (s == UOP_FLOAT64) {
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
  }
  if (s == UOP_FLOAT32) {
    float f = (float)d;
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
  }
  return s == UOP_FLOAT16 ? cc_f64_to_f16(d) : cc_f64_to_bf16(d);
}

static void gen_inputs(uop_scalar s, uint8_t *buf, uint64_t seed) {
  int bytes = uop_dt_itemsize_B(uop_dt(s)), n = 0;
  uint64_t vals[N];
  if (is_float(s)) {
    double sp[160];
    int k = 0;
    double base[] = {0.0, 1.0, 0.5, 0.99, 1.5, 2.5, 3.5, 127.5, 128.0, 255.5, 256.0, 32767.5, 65535.5, 1e30, 1e-30,
                     1e300, 1e-300, 4.9e-324, INFINITY, NAN};
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) sp[k++] = base[i], sp[k++] = -base[i];
    const fmt fs[] = {F16, BF16, F32};
    for (int i = 0; i < 3; i++) {
      fmt f = fs[i];
      double mx = decode(f, inf_bits(f) - 1), top = decode(f, inf_bits(f)), minsub = decode(f, 1);
      double pts[] = {mx, (mx + top) / 2, nextafter((mx + top) / 2, 0), nextafter((mx + top) / 2, INFINITY),
                      decode(f, (uint64_t)1 << f.man), minsub, minsub / 2, minsub * 1.5, nextafter(minsub / 2, 1),
                      1 + ldexp(1, -f.man - 1), 1 + 3 * ldexp(1, -f.man - 1), nextafter(1 + ldexp(1, -f.man - 1), 2)};
      for (size_t j = 0; j < sizeof pts / sizeof pts[0]; j++) sp[k++] = pts[j], sp[k++] = -pts[j];
    }
    const int pw[] = {7, 8, 15, 16, 31, 32, 63, 64};
    for (int i = 0; i < 8; i++) {
      double p = ldexp(1.0, pw[i]);
      sp[k++] = p, sp[k++] = -p, sp[k++] = p - 1, sp[k++] = -p - 1;
    }
    for (int i = 0; i < k && n < N; i++) vals[n++] = to_raw(s, sp[i]);
    for (; n < N; n++) { /* random bit patterns, and exact ties of a narrower format */
      uint64_t r = rng(&seed);
      if (n % 3 || s == UOP_FLOAT16) vals[n] = bytes == 8 ? r : r & ((1ull << (8 * bytes)) - 1);
      else {
        fmt f = r & 1 ? F16 : r & 2 ? BF16 : F32;
        uint64_t b = (r >> 8) % (inf_bits(f) - 1);
        vals[n] = to_raw(s, (decode(f, b) + decode(f, b + 1)) / 2 * (r >> 4 & 1 ? -1 : 1));
      }
    }
  } else {
    int bits = bits_of(s);
    const uint64_t sp[] = {0, 1, ~0ull, 2, 3, 2049, 2050, 2051, 4097, 65519, 65520, 65521, 0x1000001, 0x1000003,
                           0x1010001, 0x1018000, 0x7fffffff, 0x80000000, 0xffffffff, (1ull << 53) + 1,
                           (1ull << 62) + (1ull << 38), (1ull << 62) + (1ull << 38) + 1, (1ull << 60) + (1ull << 52) + 1,
                           (1ull << 63) - 1, 1ull << 63, (1ull << 63) + (1ull << 39), 0xffffffffffffff00ull};
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++) vals[n++] = sp[i], vals[n++] = 0 - sp[i];
    for (int k = 1; k < 64 && n + 2 < N; k++) vals[n++] = (1ull << k) + 1, vals[n++] = 0 - (1ull << k) - 1;
    for (; n < N; n++) {
      uint64_t r = rng(&seed);
      vals[n] = r >> (rng(&seed) % 64);
      if (r & 1) vals[n] = 0 - vals[n];
    }
    for (int i = 0; i < N; i++) {
      if (bits < 64) vals[i] &= ((1ull << bits) - 1);
      if (s == UOP_BOOL) vals[i] = vals[i] & 1;
    }
  }
  for (int i = 0; i < N; i++) memcpy(buf + (size_t)i * (size_t)bytes, &vals[i], (size_t)bytes);
}

/* ------------------------------------------------------------------------------------------------ kernels */

/* all casts into `to`: out[s*N + i] = cast(to, in_s[i]), one store and range per source */
static char *kernel_text(uop_scalar to) {
  char *t = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&t, &len);
  fprintf(f, "(kernel cast_to_%s (let o (buf 0 %s %d))\n", uop_dt_name(uop_dt(to)), uop_dt_name(uop_dt(to)), NDT * N);
  for (int s = 0; s < NDT; s++) fprintf(f, " (let i%d (buf %d %s %d)) (let r%d (range %d %d loop))\n", s, s + 1, uop_dt_name(uop_dt(DTS[s])), N, s, s, N);
  fprintf(f, " (sink");
  for (int s = 0; s < NDT; s++)
    fprintf(f, "\n  (store (index o (+ r%d %d)) (cast %s (load (index i%d r%d))) r%d)", s, s * N, uop_dt_name(uop_dt(to)), s, s, s);
  fprintf(f, "))\n");
  fclose(f);
  return t;
}

typedef void (*kfn16)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t,
                      uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t);

static uint8_t *inputs[NDT];
static size_t fails;

static void check_out(const char *who, uop_scalar to, const uint8_t *out) {
  int ob = uop_dt_itemsize_B(uop_dt(to));
  size_t bad = 0;
  for (int s = 0; s < NDT; s++) {
    int ib = uop_dt_itemsize_B(uop_dt(DTS[s]));
    for (int i = 0; i < N; i++) {
      xval x = read_x(DTS[s], get_raw(inputs[s] + (size_t)i * (size_t)ib, ib));
      bool any_nan;
      uint64_t want = expect(to, &x, &any_nan), got = get_raw(out + ((size_t)s * N + (size_t)i) * (size_t)ob, ob);
      bool ok = any_nan ? nan_bits(to, got) : got == want;
      if (!ok && fails++ < 40)
        fprintf(stderr, "  %s: cast %s <- %s input 0x%llx: got 0x%llx want 0x%llx%s\n", who, uop_dt_name(uop_dt(to)),
                uop_dt_name(uop_dt(DTS[s])), (unsigned long long)get_raw(inputs[s] + (size_t)i * (size_t)ib, ib),
                (unsigned long long)got, (unsigned long long)want, any_nan ? " (any NaN)" : "");
      bad += !ok;
    }
  }
  if (bad) fprintf(stderr, "  %s: %zu wrong casts to %s\n", who, bad, uop_dt_name(uop_dt(to)));
  CHECK(bad == 0);
}

/* The target by name and the options for `opts` (NULL: no opts); *ov (the parsed opts) is the caller's to free. */
static cc_options target_options(const char *target, const char *opts, cc_target *t, cc_opt **ov) {
  size_t nov = 0;
  *ov = NULL;
  CHECK_OK(cc_target_get(target, 1, t));
  if (opts) CHECK_OK(cc_opts_parse(opts, ov, &nov));
  return (cc_options){.opts = *ov, .nopts = nov, .noopt = !opts};
}

static void run_native(uop_ctx *ctx, const uop *sink, const char *target, const char *opts, uop_scalar to) {
  cc_target t;
  cc_opt *ov = NULL;
  cc_options o = target_options(target, opts, &t, &ov);
  cc_program *p = NULL;
  tu_kernel k = {0};
  hcq_status st = tu_build_sink(ctx, sink, &t, &o, &p, &k);
  if (st) {
    fprintf(stderr, "  %s %s cast to %s: %s\n", target, opts ? opts : "noopt", uop_dt_name(uop_dt(to)), hcq_status_message(st));
    CHECK(false);
    hcq_status_free(st);
  } else {
    uint8_t *out = calloc(NDT * N, 8);
    uintptr_t a[16] = {(uintptr_t)out};
    for (int s = 0; s < NDT; s++) a[s + 1] = (uintptr_t)inputs[s];
    int64_t threads = 1;
    if ((threads = cc_launch_const(p->desc.global[0])) < 1) threads = 1;
    CHECK(hcq_program_nbufs(&p->desc) == NDT + 1 && hcq_program_nvars(&p->desc) == 0);
    for (int64_t core = 0; core < threads; core++) {
      a[NDT + 1] = (uintptr_t)core;
      ((kfn16)k.fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15]);
    }
    char who[64];
    snprintf(who, sizeof who, "%s %s", target, opts ? opts : "noopt");
    check_out(who, to, out);
    free(out);
  }
  tu_unload(&k);
  cc_program_free(p);
  free(ov);
}

/* float16/bfloat16 arithmetic (computed in float32, rounded once) on random bit patterns (subnormal results,
 * overflow, NaN): c and llvm-cpu against the interpreter, bit for bit. */
static void arith16(uop_scalar dt, const char *target, const char *opts) {
  static const char *ops[] = {"(+ A B)", "(- A B)", "(* A B)", "(/ A B)", "(mulacc A B C)", "(sqrt A)"};
  enum { NOPS = 6 };
  const char *dn = uop_dt_name(uop_dt(dt));
  char text[4096];
  int len = snprintf(text, sizeof text, "(kernel arith16 (let o (buf 0 %s %d)) (let a (buf 1 %s %d)) (let b (buf 2 %s %d))"
                     " (let c (buf 3 %s %d)) (sink", dn, NOPS * N, dn, N, dn, N, dn, N);
  for (int k = 0; k < NOPS; k++) {
    len += snprintf(text + len, sizeof text - (size_t)len, " (store (index o (+ (range %d %d) %d)) ", k, N, k * N);
    for (const char *p = ops[k]; *p; p++)
      len += *p == 'A' || *p == 'B' || *p == 'C'
                 ? snprintf(text + len, sizeof text - (size_t)len, "(load (index %c (range %d %d)))", *p - 'A' + 'a', k, N)
                 : snprintf(text + len, sizeof text - (size_t)len, "%c", *p);
    len += snprintf(text + len, sizeof text - (size_t)len, " (range %d %d))", k, N);
  }
  snprintf(text + len, sizeof text - (size_t)len, "))");
  uint16_t in[3][N], want[NOPS * N], got[NOPS * N];
  uint64_t seed = 99 + (uint64_t)dt;
  for (int j = 0; j < 3; j++)
    for (int i = 0; i < N; i++) {
      uint64_t r = rng(&seed);
      in[j][i] = (uint16_t)(i % 4 == 0 ? (r & 0x83ff) : r); /* a quarter subnormal or zero */
    }
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *sink = NULL;
  CHECK_OK(cc_kernel_parse(ctx, text, strlen(text), "<arith16>", &sink));
  void *bufs[4] = {want, in[0], in[1], in[2]};
  size_t sizes[4] = {sizeof want, sizeof in[0], sizeof in[1], sizeof in[2]};
  CHECK_OK(cc_interp_run(sink, bufs, sizes, 4, NULL, 0));
  cc_target t;
  cc_opt *ov = NULL;
  cc_options o = target_options(target, opts, &t, &ov);
  cc_program *p = NULL;
  tu_kernel k = {0};
  hcq_status st = tu_build_sink(ctx, sink, &t, &o, &p, &k);
  CHECK_OK(st);
  if (!st) {
    uintptr_t a[5] = {(uintptr_t)got, (uintptr_t)in[0], (uintptr_t)in[1], (uintptr_t)in[2], 0};
    tu_call(&k, a, 5);
    size_t bad = 0;
    for (int i = 0; i < NOPS * N; i++) {
      bool ok = nan_bits(dt, want[i]) ? nan_bits(dt, got[i]) : got[i] == want[i];
      if (!ok && bad++ < 4)
        fprintf(stderr, "  %s %s: %s on %s: 0x%04x 0x%04x 0x%04x: got 0x%04x want 0x%04x\n", target, opts ? opts : "noopt",
                ops[i / N], dn, in[0][i % N], in[1][i % N], in[2][i % N], got[i], want[i]);
    }
    CHECK_EQ_INT(bad, 0);
  }
  tu_unload(&k);
  cc_program_free(p);
  free(ov);
  uop_ctx_destroy(ctx);
}

/* MULACC is fused for float32/float64 (docs/FORMATS.md): c, llvm-cpu and the interpreter against libm's fmaf/fma,
 * on random operands where a rounded product would differ. */
static void mulacc_fused(uop_scalar dt, const char *target) {
  bool f64 = dt == UOP_FLOAT64;
  const char *dn = uop_dt_name(uop_dt(dt));
  char text[512];
  snprintf(text, sizeof text, "(kernel mulacc_f (let o (buf 0 %s %d)) (let r (range 0 %d))"
           " (sink (store (index o r) (mulacc (load (index (buf 1 %s %d) r)) (load (index (buf 2 %s %d) r))"
           " (load (index (buf 3 %s %d) r))) r)))", dn, N, N, dn, N, dn, N, dn, N);
  double in[3][N], want[N], got[N], ref[N];
  uint64_t seed = 7;
  for (int i = 0; i < N; i++) {
    double x = 1 + (double)(rng(&seed) >> 11) * 0x1p-53, y = 1 + (double)(rng(&seed) >> 11) * 0x1p-53;
    double vals[3] = {x, y, -x * y};
    for (int j = 0; j < 3; j++) {
      if (f64) in[j][i] = vals[j];
      else ((float *)in[j])[i] = (float)vals[j];
    }
    if (f64) ref[i] = fma(in[0][i], in[1][i], in[2][i]);
    else ((float *)ref)[i] = fmaf(((float *)in[0])[i], ((float *)in[1])[i], ((float *)in[2])[i]);
  }
  int differ = 0; /* the inputs expose an unfused a*b+c */
  for (int i = 0; i < N; i++) {
    volatile double p64 = in[0][i] * in[1][i];
    volatile float p32 = ((float *)in[0])[i] * ((float *)in[1])[i];
    differ += f64 ? p64 + in[2][i] != ref[i] : p32 + ((float *)in[2])[i] != ((float *)ref)[i];
  }
  CHECK(differ > N / 2);
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *sink = NULL;
  CHECK_OK(cc_kernel_parse(ctx, text, strlen(text), "<mulacc>", &sink));
  void *bufs[4] = {want, in[0], in[1], in[2]};
  size_t sizes[4] = {sizeof want, sizeof in[0], sizeof in[1], sizeof in[2]};
  CHECK_OK(cc_interp_run(sink, bufs, sizes, 4, NULL, 0));
  CHECK(memcmp(want, ref, f64 ? sizeof ref : sizeof ref / 2) == 0);
  cc_target t;
  CHECK_OK(cc_target_get(target, 1, &t));
  cc_options o = {.noopt = true};
  cc_program *p = NULL;
  tu_kernel k = {0};
  hcq_status st = tu_build_sink(ctx, sink, &t, &o, &p, &k);
  CHECK_OK(st);
  if (!st) {
    uintptr_t a[5] = {(uintptr_t)got, (uintptr_t)in[0], (uintptr_t)in[1], (uintptr_t)in[2], 0};
    tu_call(&k, a, 5);
    CHECK(memcmp(got, ref, f64 ? sizeof ref : sizeof ref / 2) == 0);
  }
  tu_unload(&k);
  cc_program_free(p);
  uop_ctx_destroy(ctx);
}

int main(void) {
  for (int s = 0; s < NDT; s++) {
    inputs[s] = aligned_alloc(64, (size_t)N * 8);
    gen_inputs(DTS[s], inputs[s], 1234 + (uint64_t)s);
  }
  bool llvm = tu_have("clang-19") || getenv("HCQ_CLANG");
  char up4[200] = "", up8[200] = "";
  for (int s = 0; s < NDT; s++) {
    snprintf(up4 + strlen(up4), sizeof up4 - strlen(up4), "%sUPCAST:%d:4", s ? "," : "", s);
    snprintf(up8 + strlen(up8), sizeof up8 - strlen(up8), "%sUPCAST:%d:8", s ? "," : "", s);
  }
  for (int d = 0; d < NDT; d++) {
    uop_ctx *ctx = NULL;
    CHECK_OK(uop_ctx_create(&ctx));
    char *text = kernel_text(DTS[d]);
    const uop *sink = NULL;
    CHECK_OK(cc_kernel_parse(ctx, text, strlen(text), "<cast>", &sink));
    /* the interpreter */
    void *bufs[NDT + 1];
    size_t sizes[NDT + 1];
    uint8_t *out = calloc(NDT * N, 8);
    bufs[0] = out, sizes[0] = (size_t)NDT * N * 8;
    for (int s = 0; s < NDT; s++) bufs[s + 1] = inputs[s], sizes[s + 1] = (size_t)N * 8;
    CHECK_OK(cc_interp_run(sink, bufs, sizes, NDT + 1, NULL, 0));
    check_out("interp", DTS[d], out);
    free(out);
    const char *variants[] = {NULL, up4, up8};
    for (int v = 0; v < 3; v++) {
      run_native(ctx, sink, "c", variants[v], DTS[d]);
      if (llvm && v < 2) run_native(ctx, sink, "llvm-cpu", variants[v], DTS[d]);
    }
    free(text);
    uop_ctx_destroy(ctx);
  }
  for (int s = 0; s < NDT; s++) free(inputs[s]);
  const uop_scalar h[2] = {UOP_FLOAT16, UOP_BFLOAT16};
  for (int i = 0; i < 2; i++) {
    arith16(h[i], "c", NULL);
    arith16(h[i], "c", "UPCAST:0:4,UPCAST:1:4,UPCAST:2:4,UPCAST:3:4,UPCAST:4:4,UPCAST:5:4");
    if (llvm) arith16(h[i], "llvm-cpu", NULL);
  }
  for (int i = 0; i < 2; i++) {
    mulacc_fused(i ? UOP_FLOAT64 : UOP_FLOAT32, "c");
    if (llvm) mulacc_fused(i ? UOP_FLOAT64 : UOP_FLOAT32, "llvm-cpu");
  }
  if (fails) fprintf(stderr, "cast_test: %zu wrong elements\n", fails);
  return testing_summary("cast_test");
}
