/* Kernel buffers for tests, `hcq run` and the bench: the list of a kernel's buffers, deterministic fill, and the
 * float16/bfloat16 conversions the interpreter and the fill share. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "compiler/interp.h"
#include "compiler/kernel_text_internal.h"
#include "compiler/kernel_valid.h"

uint16_t cc_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000, exp = (x >> 23) & 0xff, man = x & 0x7fffff;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0)); /* inf, nan */
  int e = (int)exp - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | 0x7c00); /* overflow -> inf */
  if (e <= 0) { /* subnormal or zero */
    if (e < -10) return (uint16_t)sign;
    man |= 0x800000;
    int shift = 14 - e;
    uint32_t half = man >> shift, rest = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1))) half++;
    return (uint16_t)(sign | half);
  }
  uint32_t half = (uint32_t)e << 10 | man >> 13, rest = man & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) half++; /* may carry into the exponent: still correct */
  return (uint16_t)(sign | half);
}

float cc_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, x;
  if (exp == 0x1f) x = sign | 0x7f800000 | man << 13;
  else if (exp) x = sign | (exp + 127 - 15) << 23 | man << 13;
  else if (!man) x = sign;
  else {
    float f = ldexpf((float)man, -24);
    return sign ? -f : f;
  }
  float f;
  memcpy(&f, &x, 4);
  return f;
}

uint16_t cc_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40); /* quiet nan */
  x += 0x7fff + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

float cc_bf16_to_f32(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

/* x rounded to nearest even in a binary format with `man` stored mantissa bits and normal exponents emin..emax
 * (subnormals below 2^emin, inf above the largest finite value plus half an ulp). Written with double arithmetic
 * (frexp/ldexp, exact scaling by powers of two), apart from the renderers' bit-level conversions. */
double cc_round_format(double x, int man, int emin, int emax) {
  if (x != x || isinf(x) || x == 0) return x;
  double a = fabs(x);
  int e;
  frexp(a, &e); /* a in [2^(e-1), 2^e) */
  e = e - 1 < emin ? emin : e - 1;
  double q = ldexp(1.0, e - man), m = a / q, fl = floor(m), d = m - fl; /* all exact */
  if (d > 0.5 || (d == 0.5 && fmod(fl, 2.0) != 0)) fl += 1;
  double r = fl * q;
  if (r >= ldexp(1.0, emax + 1)) r = INFINITY;
  return copysign(r, x);
}

uint16_t cc_f64_to_f16(double x) {
  if (x != x) return signbit(x) ? 0xfe00 : 0x7e00;
  return cc_f32_to_f16((float)cc_round_format(x, 10, -14, 15)); /* exact in float: one rounding */
}

uint16_t cc_f64_to_bf16(double x) {
  if (x != x) return signbit(x) ? 0xffc0 : 0x7fc0;
  return cc_f32_to_bf16((float)cc_round_format(x, 7, -126, 127));
}

double cc_int_to_f64_odd(int64_t v, bool is_unsigned) {
  bool neg = !is_unsigned && v < 0;
  uint64_t u = neg ? 0 - (uint64_t)v : (uint64_t)v;
  int sh = 0;
  while (u >> sh >= (uint64_t)1 << 53) sh++;
  uint64_t t = u >> sh | (sh && (u & (((uint64_t)1 << sh) - 1)) != 0); /* sticky bit: round to odd */
  double d = ldexp((double)t, sh);
  return neg ? -d : d;
}

hcq_status cc_kernel_buffers(const uop *sink, cc_kbuf **out, size_t *out_count) {
  *out = NULL;
  *out_count = 0;
  const uop **order;
  size_t n;
  HCQ_TRY(kv_toposort(sink, &order, &n));
  cc_kbuf *b = NULL;
  size_t nb = 0;
  hcq_status st = HCQ_OK;
  for (size_t i = 0; i < n && !st; i++) {
    const uop *u = order[i];
    if (u->op != UOP_DEFINE_GLOBAL) continue;
    bool dup = false;
    for (size_t k = 0; k < nb; k++) dup |= b[k].slot == (int)u->arg.i;
    if (dup) continue;
    uop_dtype dt = uop_dt_base_of(u->dtype);
    int64_t item = uop_dt_itemsize_B(dt);
    if (u->dtype.size < 0 || (item && u->dtype.size > (int64_t)(SIZE_MAX / 2) / item)) {
      st = hcq_status_make(HCQ_CODE_INVALID, "buffer slot %" PRId64 " has %s size", u->arg.i,
                           u->dtype.size < 0 ? "an unknown" : "a too large");
      break;
    }
    cc_kbuf *nbuf = realloc(b, (nb + 1) * sizeof *b);
    if (!nbuf) {
      st = hcq_status_make(HCQ_CODE_NOMEM, "kernel buffers: out of memory");
      break;
    }
    b = nbuf;
    size_t k = nb++;
    for (; k > 0 && b[k - 1].slot > (int)u->arg.i; k--) b[k] = b[k - 1];
    b[k] = (cc_kbuf){.slot = (int)u->arg.i, .dtype = dt, .nelems = u->dtype.size,
                     .size_B = (size_t)(u->dtype.size * item)};
  }
  free(order);
  if (st) {
    free(b);
    return st;
  }
  *out = b;
  *out_count = nb;
  return HCQ_OK;
}

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void cc_fill_buffer(void *data, uop_dtype dt, int64_t nelems, uint64_t seed) {
  uint8_t *p = data;
  uop_dtype el = uop_dt_scalar_of(dt);
  int64_t lanes = dt.count ? dt.count : 1, item = uop_dt_itemsize_B(el);
  uint64_t s = seed * 0x2545F4914F6CDD1Dull + 1;
  for (int64_t i = 0; i < nelems * lanes; i++, p += item) {
    uint64_t r = splitmix(&s) >> 32;
    /* odd multiples of 2^-16 in [-2, 2): sums stay nearly exact, but each rounds in float16 and bfloat16 (a
     * dropped conversion shows); float64 adds 2^-40, which rounds in float32 */
    double f = (double)(((int64_t)(r % 64) - 32) * 4096 + (int64_t)(2 * ((r >> 6) % 2048) + 1)) / 65536.0;
    if (el.scalar == UOP_FLOAT64) f += 0x1p-40;
    int64_t v = uop_dt_is_unsigned(el) ? (int64_t)(r % 16) : (int64_t)(r % 16) - 8;
    switch (el.scalar) {
    case UOP_BOOL: *p = (uint8_t)(r & 1); break;
    case UOP_INT8: case UOP_UINT8: *p = (uint8_t)v; break;
    case UOP_INT16: case UOP_UINT16: { uint16_t w = (uint16_t)v; memcpy(p, &w, 2); break; }
    case UOP_INT32: case UOP_UINT32: { uint32_t w = (uint32_t)v; memcpy(p, &w, 4); break; }
    case UOP_FLOAT16: { uint16_t w = cc_f32_to_f16((float)f); memcpy(p, &w, 2); break; }
    case UOP_BFLOAT16: { uint16_t w = cc_f32_to_bf16((float)f); memcpy(p, &w, 2); break; }
    case UOP_FLOAT32: { float w = (float)f; memcpy(p, &w, 4); break; }
    case UOP_FLOAT64: memcpy(p, &f, 8); break;
    default: memcpy(p, &v, 8); break;
    }
  }
}

hcq_status cc_kbufs_alloc_fill(cc_kbuf *bufs, size_t count, uint64_t seed) {
  for (size_t i = 0; i < count; i++) {
    /* 64-byte aligned: at least every target's buf_align_B (malloc gives only 8 on 32-bit glibc). */
    void *p = NULL;
    bufs[i].data = posix_memalign(&p, 64, bufs[i].size_B ? bufs[i].size_B : 1) == 0 ? p : NULL;
    if (!bufs[i].data)
      return hcq_status_make(HCQ_CODE_NOMEM, "buffer slot %d: cannot allocate %zu bytes", bufs[i].slot,
                             bufs[i].size_B);
    cc_fill_buffer(bufs[i].data, bufs[i].dtype, bufs[i].nelems, seed + (uint64_t)bufs[i].slot);
  }
  return HCQ_OK;
}

void cc_kbufs_free(cc_kbuf *bufs, size_t count) {
  if (!bufs) return;
  for (size_t i = 0; i < count; i++) free(bufs[i].data);
  free(bufs);
}

bool cc_float_match(double got, double want, double rel, double abs) {
  if (isnan(got) || isnan(want)) return isnan(got) && isnan(want);
  if (got == want) return true; /* equal infinities, -0 == +0 */
  if (isinf(got) || isinf(want)) return false;
  return fabs(got - want) <= rel * fabs(want) + abs;
}
