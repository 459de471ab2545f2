/* C renderer (reference ClangRenderer, tinygrad/renderer/cstyle.py): a linear program -> one freestanding C function
 *   void NAME(T* restrict data0_N, ..., const int VAR, ..., int core_id)
 * SSA naming: loads, multi-use ALU, WHERE, loops, accumulators get names (val, alu, cast, ridx, acc); constants,
 * INDEX and single-use ALU/CAST/BITCAST are inlined. No libc or libm: SQRT and TRUNC use compiler builtins, bitcasts
 * a union in a statement expression. Works with gcc and clang.
 * Vectors (from compiler/vectorize.c): one typedef per vector dtype before the function (float4, or float4_u where
 * the target's buffer alignment does not cover the access), vector loads/stores through a cast of the scalar
 * pointer `*((float4*)(p))`, VECTORIZE as `(float4){a,b,c,d}`, GEP as `v[i]`, + - * / and negation infix.
 * float16/bfloat16 values are their bit patterns (unsigned short), computed in float and converted by integer
 * operations with round-to-nearest-even (HALF_PREAMBLE): no _Float16/__bf16, which gcc 12 mis-vectorizes (SLP
 * drops (float)(_Float16)x round trips with AVX512-FP16), lowers to libgcc calls (no F16C) or lacks (__bf16 on
 * x86_64). Integer code has one meaning at any -O/-march, for gcc and clang alike.
 * Casts follow docs/FORMATS.md: float -> int truncates and saturates (NaN -> 0), MULACC is fused (fma). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc_internal.h"
#include "compiler/interp.h"
#include "uop/text.h"
#include "base/fmt.h"
#include "base/ptrmap.h"

char *cc_fmt_float32(float v, char *buf) {
  for (int prec = 1; prec <= 9; prec++) {
    snprintf(buf, 32, "%.*g", prec, (double)v);
    if (strtof(buf, NULL) == v) return buf;
  }
  snprintf(buf, 32, "%.9g", (double)v);
  return buf;
}

/* A non-temporal store held back so that runs of 4 consecutive floats can be written as one vector store. */
typedef struct nt_store {
  const uop *buf, *base; /* DEFINE_GLOBAL and the index without its constant offset (NULL: constant index) */
  int64_t off;
  const char *ptr, *val;
  bool f32, done;
} nt_store;

enum { NT_WINDOW = 64 };

typedef struct rc {
  const cc_target *t;
  base_ptrmap nt_bufs; /* DEFINE_GLOBALs written with non-temporal stores */
  nt_store nt[NT_WINDOW];
  size_t nnt;
  bool nt_used;
  base_ptrmap str;   /* node -> char* (its name or inline expression) */
  base_ptrmap uses;  /* node -> use count */
  char **owned;     /* every string, freed at the end */
  size_t nowned, capowned;
  FILE *body;
  int depth;
  uint32_t vtypes[32]; /* vector typedefs used: scalar | count << 8 | unaligned << 24 */
  const char *vnames[32]; /* their names, formatted once */
  int nvtypes;
  const uop *const *list; /* the program, for range names */
  const char *nthreads;   /* the size of SPECIAL gidx0 (the kernel's thread count), NULL before it */
  struct { const uop *src[4]; const char *name; } tr4[16]; /* 4x4 transposes emitted in the current scope */
  int ntr4, ntr4_names;    /* entries; names handed out (a group transposed again gets a new name) */
  bool shuffled;          /* HCQ_SHUFFLE used: define it in the head */
  uint32_t fmax_widths;   /* float32 MAX used on these lane counts (bit w): HCQ_FMAX<w> defined in the head */
  uint32_t vminmax_widths; /* float32 vector selects of a compare's operands: HCQ_VMAX<w>/HCQ_VMIN<w> in the head */
  int nbarriers;
  hcq_status st;
} rc;

static char *own(rc *r, char *s) {
  if (!s) {
    if (!r->st) r->st = hcq_status_make(HCQ_CODE_NOMEM, "render c: out of memory");
    return NULL;
  }
  if (r->nowned == r->capowned) {
    size_t nc = r->capowned ? r->capowned * 2 : 64;
    char **no = realloc(r->owned, nc * sizeof *no);
    if (!no) {
      free(s);
      if (!r->st) r->st = hcq_status_make(HCQ_CODE_NOMEM, "render c: out of memory");
      return NULL;
    }
    r->owned = no;
    r->capowned = nc;
  }
  r->owned[r->nowned++] = s;
  return s;
}

static char *fmt(rc *r, const char *f, ...) __attribute__((format(printf, 2, 3)));
static char *fmt(rc *r, const char *f, ...) {
  /* most pieces are short: format on the stack and copy out (vasprintf grows a heap buffer per call); base_fmt_v
   * does the common conversions for a fraction of vsnprintf's cost */
  char buf[256];
  va_list ap, aq;
  va_start(ap, f);
  va_copy(aq, ap);
  int n = base_fmt_v(buf, sizeof buf, f, aq);
  va_end(aq);
  if (n < 0) n = vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (s && (size_t)n < sizeof buf) {
    memcpy(s, buf, (size_t)n + 1);
  } else if (s) {
    va_start(ap, f);
    vsnprintf(s, (size_t)n + 1, f, ap);
    va_end(ap);
  }
  return own(r, s);
}

static const char *scalar_ctype(rc *r, uop_dtype dt);

/* Vector dtypes are GCC/Clang vector types, one typedef each: float4 (aligned to its size) or float4_u (aligned
 * like its scalar, for accesses whose alignment is not proven). */
static const char *vec_ctype(rc *r, uop_dtype dt, bool unaligned) {
  const char *base = scalar_ctype(r, dt);
  uint32_t key = (uint32_t)dt.scalar | (uint32_t)dt.count << 8 | (uint32_t)unaligned << 24;
  int i = 0;
  while (i < r->nvtypes && r->vtypes[i] != key) i++;
  if (i == r->nvtypes) {
    if (i == (int)(sizeof r->vtypes / sizeof r->vtypes[0])) {
      if (!r->st) r->st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "render c: too many vector types");
      return "void";
    }
    char *name = fmt(r, "%s%u%s", base, (unsigned)dt.count, unaligned ? "_u" : "");
    if (!name) return "void";
    for (char *c = name; *c; c++)
      if (*c == ' ') *c = '_';
    r->vnames[i] = name;
    r->vtypes[r->nvtypes++] = key;
  }
  return r->vnames[i];
}

static const char *ctype(rc *r, uop_dtype dt) {
  if (dt.count > 1 && dt.scalar == UOP_BOOL) dt = uop_dt_vec(uop_dt(UOP_INT32), dt.count); /* a compare's mask */
  if (dt.count > 1) return vec_ctype(r, dt, false);
  return scalar_ctype(r, dt);
}

static const char *scalar_ctype(rc *r, uop_dtype dt) {
  switch (dt.scalar) {
    case UOP_BOOL: return "_Bool";
    case UOP_INT8: return "signed char";
    case UOP_UINT8: return "unsigned char";
    case UOP_INT16: return "short";
    case UOP_UINT16: return "unsigned short";
    case UOP_INT32: return "int";
    case UOP_UINT32: return "unsigned int";
    case UOP_INT64: return "long long";
    case UOP_UINT64: return "unsigned long long";
    case UOP_FLOAT16: case UOP_BFLOAT16: return "unsigned short"; /* the bits; see HALF_PREAMBLE */
    case UOP_FLOAT32: return "float";
    case UOP_FLOAT64: return "double";
    default:
      if (!r->st) r->st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "render c: no C type for dtype %s", uop_dt_name(dt));
      return "void";
  }
}

static bool is_half(uop_dtype dt) { return dt.scalar == UOP_FLOAT16 || dt.scalar == UOP_BFLOAT16; }

/* Conversions between the bits of float16/bfloat16 and float/double, emitted before a kernel that uses them.
 * hcq_d2x rounds a double to a 16-bit format (M stored mantissa bits, exponent bias B) to nearest even: the kept
 * significand is m >> shift, rounded by the dropped bits; subnormals drop more bits; the exponent is added on top
 * (a carry out of the significand moves into it); too large is inf. hcq_u2d_odd: an integer of more than 53 bits
 * as a double rounded to odd (sticky bit), so that rounding it again to 16 bits is a single correct rounding. */
static const char *HALF_PREAMBLE =
    "#define HCQ_INL static inline __attribute__((always_inline))\n"
    "HCQ_INL float hcq_bits_f(unsigned int u) { union { unsigned int u; float f; } v = {u}; return v.f; }\n"
    "HCQ_INL float hcq_h2f(unsigned short h) {\n"
    "  unsigned int s = (unsigned int)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;\n"
    "  if (e == 0x1fu) return hcq_bits_f(s | 0x7f800000u | m << 13);\n"
    "  if (e) return hcq_bits_f(s | (e + 112u) << 23 | m << 13);\n"
    "  if (!m) return hcq_bits_f(s);\n"
    "  int k = 31 - __builtin_clz(m); /* subnormal m * 2^-24 */\n"
    "  return hcq_bits_f(s | (unsigned int)(k + 103) << 23 | ((m << (23 - k)) & 0x7fffffu));\n"
    "}\n"
    "HCQ_INL float hcq_b2f(unsigned short b) { return hcq_bits_f((unsigned int)b << 16); }\n"
    "HCQ_INL unsigned short hcq_d2x(double x, int M, int B, unsigned int nan) {\n"
    "  union { double d; unsigned long long u; } v = {x};\n"
    "  unsigned long long a = v.u & 0x7fffffffffffffffull, inf = (unsigned long long)((1 << (15 - M)) - 1) << M;\n"
    "  unsigned int s = (unsigned int)(v.u >> 48) & 0x8000u;\n"
    "  if (a > 0x7ff0000000000000ull) return (unsigned short)(s | nan);\n"
    "  int e = (int)(a >> 52) - 1023 + B, shift = 52 - M + (e < 1 ? 1 - e : 0);\n"
    "  if (shift > 53) return (unsigned short)s; /* below half the smallest subnormal (or zero) */\n"
    "  unsigned long long m = (a & 0xfffffffffffffull) | 1ull << 52, q = m >> shift;\n"
    "  unsigned long long rest = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);\n"
    "  q += rest > half || (rest == half && (q & 1));\n"
    "  unsigned long long bits = e < 1 ? q : ((unsigned long long)(e - 1) << M) + q;\n"
    "  return (unsigned short)(s | (bits < inf ? bits : inf));\n"
    "}\n"
    "HCQ_INL unsigned short hcq_d2h(double x) { return hcq_d2x(x, 10, 15, 0x7e00u); }\n"
    "HCQ_INL unsigned short hcq_d2b(double x) { return hcq_d2x(x, 7, 127, 0x7fc0u); }\n"
    "HCQ_INL double hcq_u2d_odd(unsigned long long u) {\n"
    "  if (u < 1ull << 53) return (double)u;\n"
    "  int sh = 11 - __builtin_clzll(u);\n"
    "  return (double)(u >> sh | ((u & ((1ull << sh) - 1)) != 0)) * (double)(1ull << sh);\n"
    "}\n"
    "HCQ_INL double hcq_i2d_odd(long long x) {\n"
    "  return x < 0 ? -hcq_u2d_odd(0ull - (unsigned long long)x) : hcq_u2d_odd((unsigned long long)x);\n"
    "}\n";

static const char *render_const(rc *r, const uop *n) {
  uop_dtype dt = n->dtype;
  char b[40];
  if (is_half(dt)) {
    double v = n->arg.kind == UOP_ARG_FLOAT ? n->arg.f : (double)n->arg.i;
    return fmt(r, "((unsigned short)0x%04x)", dt.scalar == UOP_FLOAT16 ? cc_f64_to_f16(v) : cc_f64_to_bf16(v));
  }
  if (uop_dt_is_float(dt)) {
    double v = n->arg.kind == UOP_ARG_FLOAT ? n->arg.f : (double)n->arg.i;
    bool f64 = dt.scalar == UOP_FLOAT64;
    const char *txt;
    if (v != v) txt = f64 ? "__builtin_nan(\"\")" : "__builtin_nanf(\"\")";
    else if (isinf(v) && v > 0) txt = f64 ? "__builtin_inf()" : "__builtin_inff()";
    else if (isinf(v)) txt = f64 ? "(-__builtin_inf())" : "(-__builtin_inff())";
    else {
      if (f64) uop_text_fmt_double(v, b);
      else cc_fmt_float32((float)v, b);
      if (!strpbrk(b, ".e")) strcat(b, ".0");
      txt = f64 ? fmt(r, "%s%s", b[0] == '-' ? "(" : "", b) : fmt(r, "%s%sf", b[0] == '-' ? "(" : "", b);
      if (txt && b[0] == '-') txt = fmt(r, "%s)", txt);
    }
    return txt;
  }
  int64_t v = n->arg.i;
  switch (dt.scalar) {
    case UOP_BOOL: return v ? "1" : "0";
    case UOP_INT32:
      if (v == INT32_MIN) return "(-2147483647-1)";
      return v < 0 ? fmt(r, "(%lld)", (long long)v) : fmt(r, "%lld", (long long)v);
    case UOP_INT64:
      if (v == INT64_MIN) return "(-9223372036854775807ll-1)";
      return v < 0 ? fmt(r, "(%lldll)", (long long)v) : fmt(r, "%lldll", (long long)v);
    case UOP_UINT32: return fmt(r, "%lluu", (unsigned long long)(uint32_t)v);
    case UOP_UINT64: return fmt(r, "%lluull", (unsigned long long)v);
    default: return fmt(r, "((%s)(%lld))", ctype(r, dt), (long long)v);
  }
}

static void set(rc *r, const uop *n, const char *s);

static const char *get(rc *r, const uop *n) {
  uintptr_t *m = base_ptrmap_find(&r->str, n);
  if (!m && n->op == UOP_CONST) { /* rendered once, on first use (a float's shortest round-trip text is costly) */
    const char *s = render_const(r, n);
    set(r, n, s);
    return s;
  }
  if (!m) {
    if (!r->st)
      r->st = hcq_status_make(HCQ_CODE_INTERNAL, "render c: %s used before it was rendered",
                              uop_op_name((uop_op)n->op));
    return "?";
  }
  return (const char *)*m;
}

static void set(rc *r, const uop *n, const char *s) {
  if (s && !base_ptrmap_put(&r->str, n, (uintptr_t)s) && !r->st)
    r->st = hcq_status_make(HCQ_CODE_NOMEM, "render c: out of memory");
}

static void line(rc *r, const char *f, ...) __attribute__((format(printf, 2, 3)));
static void line(rc *r, const char *f, ...) {
  static const char spaces[] = "                                "; /* 32 */
  for (int n = 2 + 2 * r->depth; n > 0; n -= 32) fwrite(spaces, 1, n < 32 ? (size_t)n : 32, r->body);
  char buf[512];
  va_list ap, aq;
  va_start(ap, f);
  va_copy(aq, ap);
  int n = base_fmt_v(buf, sizeof buf - 1, f, aq);
  va_end(aq);
  if (n >= 0) {
    buf[n] = '\n';
    fwrite(buf, 1, (size_t)n + 1, r->body);
  } else {
    vfprintf(r->body, f, ap);
    fputc('\n', r->body);
  }
  va_end(ap);
}

static const char *binop(uop_op op) {
  switch (op) {
    case UOP_ADD: return "+";
    case UOP_SUB: return "-";
    case UOP_MUL: return "*";
    case UOP_IDIV: case UOP_FDIV: return "/";
    case UOP_MOD: return "%";
    case UOP_SHL: return "<<";
    case UOP_SHR: return ">>";
    case UOP_CMPLT: return "<";
    case UOP_CMPNE: return "!=";
    case UOP_CMPEQ: return "==";
    case UOP_XOR: return "^";
    case UOP_OR: return "|";
    case UOP_AND: return "&";
    default: return NULL;
  }
}

/* (T)x for a float x of C type fty into integer dtype to: truncate, saturate to to's range, NaN -> 0 (C leaves
 * out-of-range conversions undefined). lo is the largest float below the valid range (or the range's bottom when
 * that float does not exist, compared with >=). */
static const char *float_to_int(rc *r, const uop *n, const char *fty, bool f64, const char *x) {
  uop_dtype to = n->dtype;
  int bits = uop_dt_bits(to);
  bool uns = uop_dt_is_unsigned(to);
  const char *ty = ctype(r, to), *sfx = f64 ? "" : "f";
  char hi[48], lo[48], mx[48], mn[48];
  snprintf(hi, sizeof hi, "%.1f%s", ldexp(1.0, uns ? bits : bits - 1), sfx); /* 2^k, exact in any float type */
  int prec = f64 ? 53 : 24;
  const char *cmp = ">";
  if (uns) snprintf(lo, sizeof lo, "-1.0%s", sfx);
  else if (bits - 1 < prec) snprintf(lo, sizeof lo, "%.1f%s", -ldexp(1.0, bits - 1) - 1, sfx);
  else snprintf(lo, sizeof lo, "%.1f%s", -ldexp(1.0, bits - 1), sfx), cmp = ">=";
  if (uns) snprintf(mn, sizeof mn, "0"), snprintf(mx, sizeof mx, "((%s)~0ull)", ty);
  else snprintf(mn, sizeof mn, "((%s)(-%lldll-1))", ty, (long long)((((uint64_t)1 << (bits - 1)) - 1))),
       snprintf(mx, sizeof mx, "((%s)%lldll)", ty, (long long)((((uint64_t)1 << (bits - 1)) - 1)));
  return fmt(r, "({ %s t%u_ = (%s); t%u_ < %s ? (t%u_ %s %s ? (%s)t%u_ : %s) : (t%u_ != t%u_ ? (%s)0 : %s); })", fty,
             n->id, x, n->id, hi, n->id, cmp, lo, ty, n->id, mn, n->id, n->id, ty, mx);
}

/* CAST: float16/bfloat16 through float and the preamble's conversions, float -> int saturating, else C's cast
 * (int -> float rounds once to nearest even, int -> int wraps). */
static const char *render_cast(rc *r, const uop *n, const char *a) {
  uop_dtype from = n->src[0]->dtype, to = n->dtype;
  if (is_half(from) && from.scalar == to.scalar) return a;
  const char *x = a; /* the value as a C float/double/integer */
  bool xf = uop_dt_is_float(from), x64 = from.scalar == UOP_FLOAT64;
  if (is_half(from)) x = fmt(r, "%s(%s)", from.scalar == UOP_FLOAT16 ? "hcq_h2f" : "hcq_b2f", a);
  if (is_half(to)) {
    const char *d = x;
    if (!xf && uop_dt_bits(from) >= 64 && !uop_dt_is_bool(from))
      d = fmt(r, "%s(%s)", uop_dt_is_unsigned(from) ? "hcq_u2d_odd" : "hcq_i2d_odd", x);
    else if (!xf) d = fmt(r, "((double)(%s))", x); /* exact: at most 32 bits */
    return fmt(r, "%s(%s)", to.scalar == UOP_FLOAT16 ? "hcq_d2h" : "hcq_d2b", d);
  }
  if (xf && uop_dt_is_int(to) && !uop_dt_is_bool(to)) return float_to_int(r, n, x64 ? "double" : "float", x64, x);
  return fmt(r, "((%s)(%s))", ctype(r, to), x);
}

/* MULACC a*b+c: fused (one rounding) for floats, as the interpreter and the GPU renderers; wrapping for ints. */
static const char *render_mulacc(rc *r, const uop *n, const char *a, const char *b, const char *c) {
  if (!uop_dt_is_float(n->dtype)) return fmt(r, "((%s*%s)+%s)", a, b, c);
  const char *f = n->dtype.scalar == UOP_FLOAT64 ? "__builtin_fma" : "__builtin_fmaf";
  if (n->dtype.count <= 1) return fmt(r, "%s(%s, %s, %s)", f, a, b, c);
  const char *ty = ctype(r, n->dtype), *e = fmt(r, "((%s){", ty); /* per lane: there is no vector fma builtin */
  for (int l = 0; l < n->dtype.count && e; l++) e = fmt(r, "%s%s%s((%s)[%d], (%s)[%d], (%s)[%d])", e, l ? "," : "", f, a, l, b, l, c, l);
  return e ? fmt(r, "%s})", e) : "?";
}

/* An ALU op on float16/bfloat16 operands: computed in float (exact widening), rounded back once. */
static const char *render_half_alu(rc *r, const uop *n) {
  uop_op op = (uop_op)n->op;
  const char *s[3] = {"", "", ""};
  for (uint32_t i = 0; i < n->nsrc && i < 3; i++) {
    uop_dtype d = n->src[i]->dtype;
    s[i] = is_half(d) ? fmt(r, "%s(%s)", d.scalar == UOP_FLOAT16 ? "hcq_h2f" : "hcq_b2f", get(r, n->src[i])) : get(r, n->src[i]);
  }
  const char *bo = binop(op), *e;
  if (bo) e = fmt(r, "(%s%s%s)", s[0], bo, s[1]);
  else if (op == UOP_NEG) e = fmt(r, "(-%s)", s[0]);
  else if (op == UOP_SQRT) e = fmt(r, "__builtin_sqrtf(%s)", s[0]);
  else if (op == UOP_TRUNC) e = fmt(r, "__builtin_truncf(%s)", s[0]);
  else if (op == UOP_RECIP) e = fmt(r, "(1.0f/%s)", s[0]);
  else if (op == UOP_MULACC) e = fmt(r, "__builtin_fmaf(%s, %s, %s)", s[0], s[1], s[2]);
  else {
    if (!r->st) r->st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "render c: cannot render %s", uop_op_name(op));
    return "?";
  }
  if (!is_half(n->dtype)) return e; /* comparisons */
  return fmt(r, "%s(%s)", n->dtype.scalar == UOP_FLOAT16 ? "hcq_d2h" : "hcq_d2b", e);
}

/* Integer ops whose C form can be undefined where the interpreter and the other targets wrap or saturate (docs/
 * FORMATS.md): a signed ADD/SUB/MUL/NEG/SHL whose exact result may leave the dtype (8/16-bit MUL/SHL too: C computes
 * them in int), a shift by a negative amount or by the width or more. Such nodes are rendered through the unsigned
 * type and with a guarded shift; where the sources' bounds prove the plain form defined (all lowered index
 * arithmetic) it stays plain, so gcc keeps its induction-variable strength reduction. */
static bool int_result_fits(const uop *n) {
  int bits = uop_dt_bits(n->dtype);
  int64_t lo = bits >= 64 ? INT64_MIN : -((int64_t)1 << (bits - 1)), hi = bits >= 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
  if (bits < 32) lo = INT32_MIN, hi = INT32_MAX; /* computed in int */
  int64_t a0 = uop_vmin(n->src[0]), a1 = uop_vmax(n->src[0]);
  int64_t b0 = n->nsrc > 1 ? uop_vmin(n->src[1]) : 0, b1 = n->nsrc > 1 ? uop_vmax(n->src[1]) : 0, r0, r1;
  bool ovf = false; /* beyond int64: certainly beyond the dtype (no __int128 on 32-bit hosts) */
  switch ((uop_op)n->op) {
  case UOP_ADD: ovf = __builtin_add_overflow(a0, b0, &r0) | __builtin_add_overflow(a1, b1, &r1); break;
  case UOP_SUB: ovf = __builtin_sub_overflow(a0, b1, &r0) | __builtin_sub_overflow(a1, b0, &r1); break;
  case UOP_NEG: ovf = __builtin_sub_overflow((int64_t)0, a1, &r0) | __builtin_sub_overflow((int64_t)0, a0, &r1); break;
  case UOP_MUL: {
    int64_t c[4];
    ovf = __builtin_mul_overflow(a0, b0, &c[0]) | __builtin_mul_overflow(a0, b1, &c[1]) |
          __builtin_mul_overflow(a1, b0, &c[2]) | __builtin_mul_overflow(a1, b1, &c[3]);
    r0 = r1 = c[0];
    for (int i = 1; i < 4; i++) {
      if (c[i] < r0) r0 = c[i];
      if (c[i] > r1) r1 = c[i];
    }
    break;
  }
  case UOP_SHL: /* C: the left operand must be non-negative and the result representable */
    if (a0 < 0 || b0 < 0 || b1 >= 63 || a1 > (INT64_MAX >> b1)) return false;
    r0 = a0 << b0, r1 = a1 << b1;
    break;
  default: return true;
  }
  return !ovf && r0 >= lo && r1 <= hi;
}

static const char *render_int_defined(rc *r, const uop *n, const char *a, const char *b) {
  uop_op op = (uop_op)n->op;
  int bits = uop_dt_bits(n->dtype);
  bool uns = uop_dt_is_unsigned(n->dtype);
  const char *ty = ctype(r, n->dtype);
  const char *uty = bits <= 32 ? "unsigned int" : "unsigned long long";
  if (op == UOP_SHL || op == UOP_SHR) {
    /* a uint64 amount of full range has vmax -1 (the bit pattern of UINT64_MAX, uop/bounds.c): not below bits */
    bool amount_ok = uop_vmin(n->src[1]) >= 0 && uop_vmax(n->src[1]) >= 0 && uop_vmax(n->src[1]) < bits;
    const char *big = fmt(r, "((%s)(%s) >= %d)", uty, b, bits); /* a negative amount is huge as unsigned */
    if (op == UOP_SHR) {
      if (amount_ok) return NULL;
      const char *fill = uns ? "0" : fmt(r, "((%s) < 0 ? -1 : 0)", a);
      return fmt(r, "((%s)(%s ? %s : ((%s) >> (%s))))", ty, big, fill, a, b);
    }
    if (amount_ok && (uns ? bits >= 32 : int_result_fits(n))) return NULL;
    const char *sh = fmt(r, "((%s)(%s) << (%s))", uty, a, b);
    return amount_ok ? fmt(r, "((%s)%s)", ty, sh) : fmt(r, "((%s)(%s ? 0u : %s))", ty, big, sh);
  }
  if (op == UOP_IDIV || op == UOP_MOD) {
    /* x86 traps (SIGFPE) on a zero divisor and on MIN / -1; Arm returns a value for both. The interpreter wraps
     * MIN / -1 and calls a zero divisor an error: so -1 is handled where MIN may meet it, and on other
     * architectures a zero divisor traps explicitly (a kernel fault, like on x86). */
    const uop *d = n->src[1]; /* uint64 bounds are bit patterns: [0, -1] is its full range */
    bool zero = (d->dtype.scalar == UOP_UINT64 ? uop_vmin(d) == 0 : uop_vmin(d) <= 0 && uop_vmax(d) >= 0) &&
                strcmp(r->t->arch, "x86_64") != 0;
    bool min_m1 = !uns && bits >= 32 && uop_vmin(n->src[0]) == (bits == 32 ? INT32_MIN : INT64_MIN) &&
                  uop_vmin(n->src[1]) <= -1 && uop_vmax(n->src[1]) >= -1;
    if (!zero && !min_m1) return NULL;
    const char *m1 = op == UOP_MOD ? "0" : fmt(r, "(%s)(0u - (%s)a_)", ty, uty);
    return fmt(r, "({ %s a_ = %s, d_ = %s; %s%s(a_ %s d_); })", ty, a, b, zero ? "if (d_ == 0) __builtin_trap(); " : "",
               min_m1 ? fmt(r, "d_ == -1 ? %s : ", m1) : "", binop(op));
  }
  if (op != UOP_ADD && op != UOP_SUB && op != UOP_MUL && op != UOP_NEG) return NULL;
  if (uns ? (bits >= 32 || op != UOP_MUL) : int_result_fits(n)) return NULL;
  if (op == UOP_NEG) return fmt(r, "((%s)(0u - (%s)(%s)))", ty, uty, a);
  return fmt(r, "((%s)((%s)(%s) %s (%s)(%s)))", ty, uty, a, binop(op), uty, b);
}

/* A float32 vector select between the operands of its own compare, where(p < q, q, p) or where(p < q, p, q) (the
 * clamps of exp2/log2, a max without NaN rules): HCQ_VMAX<w>(q, p) / HCQ_VMIN<w>(p, q), which gcc emits as one
 * maxps/minps on x86 (it leaves the bitwise blend as a compare and a masked move; clang finds the max itself). NULL:
 * not that pattern. */
static const char *render_vminmax(rc *r, const uop *n) {
  const uop *c = n->src[0], *t = n->src[1], *f = n->src[2];
  int w = n->dtype.count;
  if (n->dtype.scalar != UOP_FLOAT32 || c->op != UOP_CMPLT || w >= 32 || !uop_dt_eq(c->src[0]->dtype, n->dtype))
    return NULL;
  const uop *p = c->src[0], *q = c->src[1];
  bool max = t == q && f == p, min = t == p && f == q;
  if (!max && !min) return NULL;
  (void)ctype(r, n->dtype), (void)ctype(r, uop_dt_vec(uop_dt(UOP_INT32), w)); /* the fallback's types */
  r->vminmax_widths |= 1u << w;
  if (max) return fmt(r, "HCQ_VMAX%d(%s, %s)", w, get(r, q), get(r, p));
  return fmt(r, "HCQ_VMIN%d(%s, %s)", w, get(r, p), get(r, q));
}

static const char *render_alu(rc *r, const uop *n) {
  uop_op op = (uop_op)n->op;
  bool f64 = n->dtype.scalar == UOP_FLOAT64;
  const char *a = n->nsrc > 0 ? get(r, n->src[0]) : "", *b = n->nsrc > 1 ? get(r, n->src[1]) : "";
  const char *e = NULL;
  if (op == UOP_MAX && n->dtype.scalar == UOP_FLOAT32) { /* the target keeps it (fmax_f32_rendered) */
    int w = n->dtype.count;
    if (w > 31) {
      if (!r->st) r->st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "render c: float32 MAX of %d lanes (at most 31)", w);
      return "?";
    }
    if (w > 1) (void)ctype(r, uop_dt_vec(uop_dt(UOP_INT32), w)); /* the fallback's mask type */
    r->fmax_widths |= 1u << w;
    return fmt(r, "HCQ_FMAX%d(%s, %s)", w, a, b);
  }
  /* vectors: the arithmetic GCC/Clang vector extensions spell like scalars (what compiler/vectorize.c builds) */
  if (n->dtype.count > 1 && op != UOP_ADD && op != UOP_SUB && op != UOP_MUL && op != UOP_FDIV && op != UOP_NEG &&
      op != UOP_MULACC && op != UOP_CMPLT && op != UOP_CMPNE && op != UOP_CMPEQ && op != UOP_WHERE &&
      op != UOP_BITCAST && op != UOP_SHL && op != UOP_SHR && op != UOP_AND && op != UOP_OR && op != UOP_XOR) {
    if (!r->st) r->st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "render c: no vector form of %s", uop_op_name(op));
    return "?";
  }
  /* vector compares give an int mask (-1/0 lanes); a vector cast between same-sized vectors reinterprets the bits,
   * so a select is a bitwise blend on the mask */
  if (n->dtype.count > 1 && op == UOP_BITCAST) return fmt(r, "((%s)(%s))", ctype(r, n->dtype), a);
  if (n->dtype.count > 1 && op == UOP_WHERE && (e = render_vminmax(r, n))) return e;
  if (n->dtype.count > 1 && op == UOP_WHERE) {
    const char *m = ctype(r, uop_dt_vec(uop_dt(UOP_INT32), n->dtype.count)), *c = get(r, n->src[2]);
    return fmt(r, "((%s)((%s & (%s)(%s)) | (~%s & (%s)(%s))))", ctype(r, n->dtype), a, m, b, a, m, c);
  }
  bool half_in = n->nsrc > 0 && is_half(n->src[op == UOP_WHERE ? 1 : 0]->dtype);
  if ((is_half(n->dtype) || half_in) && n->dtype.count > 1) {
    if (!r->st) r->st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "render c: no vector form of %s on %s", uop_op_name(op), uop_dt_name(n->dtype));
    return "?";
  }
  if (op == UOP_CAST) return render_cast(r, n, a);
  if (op != UOP_BITCAST && op != UOP_WHERE && (is_half(n->dtype) || half_in)) return render_half_alu(r, n);
  if (op == UOP_BITCAST)
    return fmt(r, "({ union { %s from_; %s to_; } bits_ = {.from_ = (%s)}; bits_.to_; })",
               ctype(r, n->src[0]->dtype), ctype(r, n->dtype), a);
  const char *bo = binop(op);
  if (uop_dt_is_int(n->dtype) && !uop_dt_is_bool(n->dtype) && n->dtype.count == 1 &&
      (e = render_int_defined(r, n, a, b)))
    return e;
  if (bo) e = fmt(r, "(%s%s%s)", a, bo, b);
  else if (op == UOP_NEG) e = fmt(r, "(-%s)", a);
  else if (op == UOP_SQRT) e = fmt(r, "%s(%s)", f64 ? "__builtin_sqrt" : "__builtin_sqrtf", a);
  else if (op == UOP_TRUNC) e = fmt(r, "%s(%s)", f64 ? "__builtin_trunc" : "__builtin_truncf", a);
  else if (op == UOP_RECIP) e = fmt(r, "(1/%s)", a);
  /* float MAX: float32 is HCQ_FMAX above, other floats were decomposed (decomp.c) */
  else if (op == UOP_MAX && !uop_dt_is_float(n->dtype)) e = fmt(r, "((%s<%s)?%s:%s)", a, b, b, a);
  else if (op == UOP_WHERE) e = fmt(r, "(%s?%s:%s)", a, b, get(r, n->src[2]));
  else if (op == UOP_MULACC) e = render_mulacc(r, n, a, b, get(r, n->src[2]));
  else {
    if (!r->st) r->st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "render c: cannot render %s", uop_op_name(op));
    return "?";
  }
  /* C computes 8/16-bit ints in int: wrap the result back to the dtype's width. */
  int bits = uop_dt_bits(n->dtype);
  if (e && uop_dt_is_int(n->dtype) && !uop_dt_is_bool(n->dtype) && bits < 32) e = fmt(r, "((%s)%s)", ctype(r, n->dtype), e);
  return e;
}

static const char *ptr_of(rc *r, const uop *idx) {
  if (idx->op != UOP_INDEX_OP) {
    if (!r->st) r->st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "render c: LOAD/STORE of a %s (expected INDEX)",
                                        uop_op_name((uop_op)idx->op));
    return "?";
  }
  return get(r, idx);
}

/* The pointer expression of a LOAD/STORE of value dtype vdt through idx: a scalar pointer is cast to the vector
 * type, aligned when the target's buffer alignment covers the vector (the vectorize pass only folds accesses whose
 * element index is a multiple of the width). */
static const char *access_ptr(rc *r, const uop *idx, uop_dtype vdt) {
  const char *p = ptr_of(r, idx);
  if (vdt.count <= 1 || idx->op != UOP_INDEX_OP || uop_dt_base_of(idx->src[0]->dtype).count != 1) return p;
  bool aligned = r->t->buf_align_B >= uop_dt_itemsize_B(vdt) && idx->src[0]->op == UOP_DEFINE_GLOBAL;
  return fmt(r, "((%s*)%s)", vec_ctype(r, vdt, !aligned), p);
}

/* ------------------------------------------------------------------------------------------------ NT stores */

/* Big outputs the kernel only writes (every use of the buffer is the INDEX of a STORE) skip the cache: no read for
 * ownership, no eviction of the inputs. Only where the target asks for it (x86_64), and the kernel ends with a
 * store fence, since non-temporal stores are not ordered by the pool's release of its completion. */
static void nt_find_buffers(rc *r, const uop *const *list, size_t count) {
  if (r->t->nt_store_min_B <= 0) return;
  for (size_t k = 0; k < count; k++) {
    const uop *n = list[k];
    if (n->op != UOP_DEFINE_GLOBAL || n->dtype.size <= 0) continue;
    int item = uop_dt_itemsize_B(uop_dt_base_of(n->dtype));
    if (n->dtype.size >= r->t->nt_store_min_B / (item > 0 ? item : 1) && !base_ptrmap_put(&r->nt_bufs, n, 1))
      r->st = hcq_status_make(HCQ_CODE_NOMEM, "render c: oom");
  }
  for (size_t k = 0; k < count && r->nt_bufs.count; k++) {
    const uop *n = list[k];
    for (uint32_t i = 0; i < n->nsrc; i++) {
      const uop *src = n->src[i];
      if (base_ptrmap_find(&r->nt_bufs, src) && (n->op != UOP_INDEX_OP || i != 0)) base_ptrmap_del(&r->nt_bufs, src);
      bool store_addr = n->op == UOP_STORE && i == 0;
      if (src->op == UOP_INDEX_OP && src->nsrc >= 1 && !store_addr) base_ptrmap_del(&r->nt_bufs, src->src[0]);
    }
  }
}

static const char *NT_PREAMBLE =
    "/* non-temporal stores: 16-byte aligned runs of 4 floats as one vector store, the rest plain (gcc) or\n"
    " * scalar non-temporal (clang) */\n"
    "typedef float hcq_nt_f4 __attribute__((vector_size(16)));\n"
    "#if defined(__clang__)\n"
    "#define HCQ_NT1(p, v) __builtin_nontemporal_store((v), (p))\n"
    "#define HCQ_NT_V4(p, v) __builtin_nontemporal_store((v), (hcq_nt_f4 *)(p))\n"
    "#else\n"
    "#define HCQ_NT1(p, v) (*(p) = (v))\n"
    "#define HCQ_NT_V4(p, v) __builtin_ia32_movntps((p), (v))\n"
    "#endif\n"
    "#define HCQ_NT4(p, a, b, c, d) do { float *hcq_p_ = (p); \\\n"
    "    if (((__UINTPTR_TYPE__)hcq_p_ & 15) == 0) HCQ_NT_V4(hcq_p_, ((hcq_nt_f4){(a), (b), (c), (d)})); \\\n"
    "    else { hcq_p_[0] = (a); hcq_p_[1] = (b); hcq_p_[2] = (c); hcq_p_[3] = (d); } } while (0)\n"
    "/* a 64-byte aligned vector of 16 floats as one whole-line store (AVX-512; a transposed tile's rows) */\n"
    "#if defined(__AVX512F__)\n"
    "typedef float hcq_nt_f16 __attribute__((vector_size(64)));\n"
    "#define HCQ_NT_HAS16 1\n"
    "#if defined(__clang__)\n"
    "#define HCQ_NT_V16(p, v) __builtin_nontemporal_store((v), (hcq_nt_f16 *)(p))\n"
    "#else\n"
    "#define HCQ_NT_V16(p, v) __builtin_ia32_movntps512((p), (v))\n"
    "#endif\n"
    "#else\n"
    "#define HCQ_NT_HAS16 0\n"
    "#define HCQ_NT_V16(p, v) ((void)0)\n"
    "#endif\n";

static bool nt_same_run(const nt_store *a, const nt_store *b, int64_t step) {
  return !b->done && b->f32 && a->buf == b->buf && a->base == b->base && b->off == a->off + step;
}

/* Emit the held-back stores: runs of 4 consecutive floats (lowest offset first) as HCQ_NT4, the rest one by one.
 * Reordering is safe only while the addresses are known apart: same buffer, same base, distinct offsets (stores to
 * one address keep their order). If some buffer is written through two different bases, which might alias at run
 * time, everything goes out one by one in program order. */
static void nt_flush(rc *r) {
  bool mixed = false;
  for (size_t i = 0; i < r->nnt && !mixed; i++)
    for (size_t j = 0; j < i && !mixed; j++) mixed = r->nt[i].buf == r->nt[j].buf && r->nt[i].base != r->nt[j].base;
  for (size_t i = 0; i < r->nnt && mixed; i++) line(r, "HCQ_NT1(%s, %s);", r->nt[i].ptr, r->nt[i].val);
  if (mixed) r->nnt = 0;
  for (;;) {
    nt_store *first = NULL;
    for (size_t i = 0; i < r->nnt && !first; i++)
      if (!r->nt[i].done) first = &r->nt[i];
    if (!first) break;
    for (size_t i = 0; i < r->nnt; i++) {
      nt_store *e = &r->nt[i];
      if (!e->done && e->buf == first->buf && e->base == first->base && e->off < first->off) first = e;
    }
    nt_store *run[4] = {first, NULL, NULL, NULL};
    for (int j = 1; j < 4 && first->f32; j++)
      for (size_t i = 0; i < r->nnt && !run[j]; i++)
        if (nt_same_run(first, &r->nt[i], j)) run[j] = &r->nt[i];
    if (first->f32 && run[1] && run[2] && run[3]) {
      line(r, "HCQ_NT4(%s, %s, %s, %s, %s);", first->ptr, first->val, run[1]->val, run[2]->val, run[3]->val);
      for (int j = 0; j < 4; j++) run[j]->done = true;
    } else {
      line(r, "HCQ_NT1(%s, %s);", first->ptr, first->val);
      first->done = true;
    }
  }
  r->nnt = 0;
}

/* A scalar STORE into a non-temporal buffer (unmasked): held back until the window fills or the scope changes.
 * float32 vector stores go out at once as 4-lane chunks; a masked one (one bool for the vector: the padded tail of a
 * tiled transpose, PADTO) too, under its gate, when it is a whole line. */
static bool nt_store_hold(rc *r, const uop *n) {
  const uop *idx = n->src[0];
  if (idx->op != UOP_INDEX_OP || idx->nsrc < 2 || idx->nsrc > 3 || !base_ptrmap_find(&r->nt_bufs, idx->src[0]))
    return false;
  uop_dtype vdt = n->src[1]->dtype;
  /* gated: whole 64-byte lines only; 16-byte pieces of a line written apart (an odd row stride) reach memory as
   * partial-line writes (4095x4097 transpose: 10x slower than plain stores) */
  if (idx->nsrc == 3 && (vdt.count != 16 || idx->src[2]->dtype.count != 1)) return false;
  if (vdt.count != 1) {
    /* A float32 vector from the vectorize pass: 4-lane chunks through HCQ_NT4 (which checks alignment at run
     * time and falls back to plain stores). Other vectors take the plain path. */
    if (vdt.scalar != UOP_FLOAT32 || vdt.count % 4 != 0) return false;
    nt_flush(r);
    const char *v = get(r, n->src[1]), *ptr = get(r, idx);
    line(r, "%s{ %s hcq_v_ = %s;", idx->nsrc == 3 ? fmt(r, "if (%s) ", get(r, idx->src[2])) : "",
         vec_ctype(r, vdt, false), v);
    if (vdt.count == 16) /* one whole 64-byte line where it is aligned */
      line(r, "  if (HCQ_NT_HAS16 && ((__UINTPTR_TYPE__)(%s) & 63) == 0) HCQ_NT_V16((%s), hcq_v_); else {", ptr, ptr);
    for (int i = 0; i < vdt.count; i += 4)
      line(r, "  HCQ_NT4((%s)+%d, hcq_v_[%d], hcq_v_[%d], hcq_v_[%d], hcq_v_[%d]);", ptr, i, i, i + 1, i + 2, i + 3);
    line(r, vdt.count == 16 ? "} }" : "}");
    r->nt_used = true;
    return true;
  }
  if (r->nnt == NT_WINDOW) nt_flush(r);
  const uop *e = idx->src[1];
  int64_t c;
  nt_store *h = &r->nt[r->nnt++];
  *h = (nt_store){.buf = idx->src[0], .base = e, .ptr = get(r, idx), .val = get(r, n->src[1])};
  h->f32 = n->src[1]->dtype.scalar == UOP_FLOAT32 && n->src[1]->dtype.count == 1;
  if (uop_const_value(e, &c)) h->base = NULL, h->off = c;
  else if (e->op == UOP_ADD && uop_const_value(e->src[1], &c)) h->base = e->src[0], h->off = c;
  r->nt_used = true;
  return true;
}

/* Lane `lane` of the 4-lane vectors a[0..3] as one 4-lane vector, through a 4x4 transpose of the four emitted once
 * per scope (8 shuffles give all four lanes' vectors: NAME_0..NAME_3). */
static const char *tr4_lane(rc *r, const uop *const *a, int lane) {
  int i = 0;
  while (i < r->ntr4 && memcmp(r->tr4[i].src, a, sizeof r->tr4[i].src)) i++;
  if (i == r->ntr4) {
    if (r->ntr4 == 16) r->ntr4 = 0; /* a full table starts over: later groups transpose again */
    i = r->ntr4++;
    memcpy(r->tr4[i].src, a, sizeof r->tr4[i].src);
    const char *nm = r->tr4[i].name = fmt(r, "tr%d", r->ntr4_names++), *ty = ctype(r, a[0]->dtype);
    r->shuffled = true;
    fprintf(r->body, "#if HCQ_SHUFFLE\n");
    line(r, "%s %s_ab0 = __builtin_shufflevector(%s, %s, 0, 4, 1, 5), %s_ab2 = __builtin_shufflevector(%s, %s, 2, 6, 3, 7);",
         ty, nm, get(r, a[0]), get(r, a[1]), nm, get(r, a[0]), get(r, a[1]));
    line(r, "%s %s_cd0 = __builtin_shufflevector(%s, %s, 0, 4, 1, 5), %s_cd2 = __builtin_shufflevector(%s, %s, 2, 6, 3, 7);",
         ty, nm, get(r, a[2]), get(r, a[3]), nm, get(r, a[2]), get(r, a[3]));
    for (int l = 0; l < 4; l++)
      line(r, "%s %s_%d = __builtin_shufflevector(%s_%s, %s_%s, %s);", ty, nm, l, nm, l < 2 ? "ab0" : "ab2", nm,
           l < 2 ? "cd0" : "cd2", l % 2 ? "2, 3, 6, 7" : "0, 1, 4, 5");
    fprintf(r->body, "#endif\n");
  }
  return fmt(r, "%s_%d", r->tr4[i].name, lane);
}

/* A VECTORIZE of lane k of 4, 8 or 16 four-lane vectors (a transposed tile, vectorize.c): gcc builds it lane by
 * lane (dozens of inserts); 4x4 transposes (shared by the other lanes' vectors) and concatenations are a few
 * shuffles each. Returns the expression, or NULL when n is not of that form. */
static const char *transpose_vectorize(rc *r, const uop *n) {
  uint32_t cnt = n->nsrc;
  if ((cnt != 4 && cnt != 8 && cnt != 16) || n->dtype.count != (int)cnt || uop_dt_itemsize_B(uop_dt_scalar_of(n->dtype)) != 4)
    return NULL;
  const uop *v[16];
  int64_t lane = -1;
  for (uint32_t i = 0; i < cnt; i++) {
    const uop *g = n->src[i];
    if (g->op != UOP_GEP || g->arg.kind != UOP_ARG_INTS || g->arg.n != 1 || g->src[0]->dtype.count != 4 ||
        !uop_dt_eq(uop_dt_scalar_of(g->src[0]->dtype), uop_dt_scalar_of(n->dtype)) ||
        (lane >= 0 && g->arg.ints[0] != lane))
      return NULL;
    lane = g->arg.ints[0];
    v[i] = g->src[0];
  }
  const char *part[4];
  for (uint32_t g = 0; g < cnt / 4; g++) part[g] = tr4_lane(r, v + 4 * g, (int)lane);
  if (cnt == 4) return part[0];
  const char *c8 = "0, 1, 2, 3, 4, 5, 6, 7";
  if (cnt == 8) return fmt(r, "__builtin_shufflevector(%s, %s, %s)", part[0], part[1], c8);
  return fmt(r, "__builtin_shufflevector(__builtin_shufflevector(%s, %s, %s), __builtin_shufflevector(%s, %s, %s), "
             "%s, 8, 9, 10, 11, 12, 13, 14, 15)", part[0], part[1], c8, part[2], part[3], c8, c8);
}

/* ------------------------------------------------------------------------------------------------ lane gates */

/* A vector access whose INDEX gate is a VECTORIZE of per-lane gates (vectorize.c: a padded tile's edge). */
static bool lane_gated(const uop *idx) {
  return idx->op == UOP_INDEX_OP && idx->nsrc >= 3 && idx->src[2]->op == UOP_VECTORIZE && idx->src[2]->dtype.count > 1;
}

/* "(g_a&g_b...)": every lane valid, each distinct gate once ("(1)" when all are constant true, "(0)" when one is
 * constant false). */
static const char *all_lanes(rc *r, const uop *vg) {
  const char *e = NULL;
  for (uint32_t l = 0; l < vg->nsrc; l++) {
    const uop *g = vg->src[l];
    int64_t c;
    if (uop_const_value(g, &c) && !c) return "(0)";
    bool seen = g->op == UOP_CONST;
    for (uint32_t j = 0; j < l && !seen; j++) seen = vg->src[j] == g;
    if (!seen) e = e ? fmt(r, "%s&%s", e, get(r, g)) : get(r, g);
  }
  return e ? fmt(r, "(%s)", e) : "(1)";
}

/* "_Bool hcq_g_[w] = {g0,...};": the lane gates for the lane by lane path. */
static const char *gate_array(rc *r, const uop *vg) {
  const char *e = fmt(r, "_Bool hcq_g_[%u] = {", vg->nsrc);
  for (uint32_t l = 0; l < vg->nsrc; l++) e = fmt(r, "%s%s%s", e, l ? "," : "", get(r, vg->src[l]));
  return fmt(r, "%s};", e);
}

/* All lanes valid: one vector load (the hot path, a branch on a loop-invariant gate); else lane by lane, invalid
 * lanes taking the alternative (or 0). */
static void render_lane_gated_load(rc *r, const uop *n, const char *p, const char *name) {
  const uop *idx = n->src[0], *vg = idx->src[2];
  const uop *alt = n->nsrc > 1 && n->src[1]->op != UOP_STORE && uop_dt_eq(n->src[1]->dtype, n->dtype) ? n->src[1] : NULL;
  const char *other = alt ? fmt(r, "%s[hcq_l_]", get(r, alt)) : "0";
  line(r, "%s %s;", ctype(r, n->dtype), name);
  line(r, "if %s %s = *%s;", all_lanes(r, vg), name, p);
  line(r, "else { %s for (int hcq_l_ = 0; hcq_l_ < %u; hcq_l_++) %s[hcq_l_] = hcq_g_[hcq_l_]?%s[hcq_l_]:%s; }",
       gate_array(r, vg), vg->nsrc, name, ptr_of(r, idx), other);
}

static void render_lane_gated_store(rc *r, const uop *n, const char *p) {
  const uop *idx = n->src[0], *vg = idx->src[2];
  const char *v = get(r, n->src[1]);
  line(r, "if %s *%s = %s;", all_lanes(r, vg), p, v);
  line(r, "else { %s hcq_v_ = %s; %s", ctype(r, n->src[1]->dtype), v, gate_array(r, vg));
  line(r, "  for (int hcq_l_ = 0; hcq_l_ < %u; hcq_l_++) if (hcq_g_[hcq_l_]) %s[hcq_l_] = hcq_v_[hcq_l_]; }", vg->nsrc,
       ptr_of(r, idx));
}

static void render_node(rc *r, const uop *n, size_t k) {
  uop_op op = (uop_op)n->op;
  uintptr_t *u = base_ptrmap_find(&r->uses, n);
  size_t uses = u ? *u : 0;
  if (op == UOP_STORE && nt_store_hold(r, n)) return;
  if (r->nnt && (op == UOP_STORE || op == UOP_RANGE || op == UOP_ENDRANGE || op == UOP_BARRIER)) nt_flush(r);
  if (op == UOP_RANGE || op == UOP_ENDRANGE) r->ntr4 = 0; /* transposes are visible in their own scope only */
  switch (op) {
    case UOP_DEFINE_GLOBAL: case UOP_DEFINE_VAR: return; /* parameters, named up front */
    case UOP_SPECIAL:
      if (n->arg.str[0] != 'g') {
        r->st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "render c: SPECIAL %s (the CPU has only gidx0)", n->arg.str);
        return;
      }
      line(r, "int %s = core_id; /* %s */", n->arg.str, get(r, n->src[0]));
      set(r, n, n->arg.str);
      r->nthreads = get(r, n->src[0]);
      return;
    case UOP_DEFINE_LOCAL: { /* cross-thread reduce scratch (group_reduce.c): one slot per thread, in the object */
      const char *name = fmt(r, "temp%lld", (long long)n->arg.i);
      line(r, "static %s %s[%lld] __attribute__((aligned(64)));", ctype(r, uop_dt_base_of(n->dtype)), name,
           (long long)(n->dtype.size > 0 ? n->dtype.size : 1));
      set(r, n, name);
      return;
    }
    case UOP_DEFINE_REG: {
      const char *name = fmt(r, "acc%lld", (long long)n->arg.i);
      line(r, "%s %s[%lld];", ctype(r, uop_dt_base_of(n->dtype)), name, (long long)(n->dtype.size > 0 ? n->dtype.size : 1));
      set(r, n, name);
      return;
    }
    case UOP_RANGE: {
      /* ids are names that two ranges may share (one nested in the other): the later ones get the statement number */
      int64_t id = n->arg.i;
      bool dup = false;
      for (size_t j = 0; j < k && !dup; j++) dup = r->list[j]->op == UOP_RANGE && r->list[j]->arg.i == id;
      const char *name = id < 0 ? fmt(r, "ridxm%llu", 0ull - (unsigned long long)id) : fmt(r, "ridx%lld", (long long)id);
      if (dup) name = fmt(r, "%s_%zu", name, k);
      line(r, "for (%s %s = 0; %s < %s; %s++) {", ctype(r, n->dtype), name, name, get(r, n->src[0]), name);
      set(r, n, name);
      r->depth++;
      return;
    }
    case UOP_ENDRANGE:
      r->depth--;
      line(r, "}");
      return;
    case UOP_INDEX_OP:
      set(r, n, fmt(r, "(%s+%s)", get(r, n->src[0]), get(r, n->src[1])));
      return;
    case UOP_LOAD: {
      const uop *idx = n->src[0];
      const char *p = access_ptr(r, idx, n->dtype), *name = fmt(r, "val%zu", k);
      if (lane_gated(idx)) {
        render_lane_gated_load(r, n, p, name);
      } else if (idx->op == UOP_INDEX_OP && idx->nsrc >= 3) {
        const uop *alt = n->nsrc > 1 && n->src[1]->op != UOP_STORE && uop_dt_eq(n->src[1]->dtype, n->dtype) ? n->src[1] : NULL;
        const char *alts = alt                        ? get(r, alt)
                           : n->dtype.count > 1       ? fmt(r, "((%s){0})", ctype(r, n->dtype))
                           : uop_dt_is_float(n->dtype) ? "0.0f"
                                                       : "0";
        line(r, "%s %s = (%s?*%s:%s);", ctype(r, n->dtype), name, get(r, idx->src[2]), p, alts);
      } else {
        line(r, "%s %s = *%s;", ctype(r, n->dtype), name, p);
      }
      set(r, n, name);
      return;
    }
    case UOP_STORE: {
      const uop *idx = n->src[0];
      const char *p = access_ptr(r, idx, n->nsrc > 1 ? n->src[1]->dtype : n->dtype);
      if (lane_gated(idx)) render_lane_gated_store(r, n, p);
      else if (idx->op == UOP_INDEX_OP && idx->nsrc >= 3) line(r, "if (%s) *%s = %s;", get(r, idx->src[2]), p, get(r, n->src[1]));
      else line(r, "*%s = %s;", p, get(r, n->src[1]));
      return;
    }
    case UOP_BARRIER:
      /* A cross-thread reduce (group_reduce.c): every thread counts its arrival (acq_rel: its partials are seen by
       * whoever counts after it); all but the last return, the last resets the count for the next launch (the
       * pool's join orders that before it) and combines. Nobody waits, so any number of workers runs any number
       * of core_ids. The atomic is inline on every host (pragmas around the function turn off gcc's and clang's
       * out-of-line aarch64 atomics: a freestanding kernel has no libgcc helpers to call). A count above the
       * thread count was poisoned after a fault (cpu_device_fault.c): trap rather than combine stale partials. */
      if (!r->nthreads) return; /* one thread: nothing to wait for */
      if (r->depth || r->nbarriers++) {
        r->st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "render c: a cross-thread BARRIER %s",
                                r->depth ? "inside a loop" : "after another one");
        return;
      }
      line(r, "{ unsigned hcq_n_ = __atomic_add_fetch(&hcq_arrived, 1u, __ATOMIC_ACQ_REL);");
      line(r, "  if (hcq_n_ != (unsigned)(%s)) { if (hcq_n_ > (unsigned)(%s)) __builtin_trap(); return; } }", r->nthreads,
           r->nthreads);
      line(r, "__atomic_store_n(&hcq_arrived, 0u, __ATOMIC_RELAXED);");
      return;
    case UOP_GEP: /* lane access: v[i] */
      if (n->arg.kind != UOP_ARG_INTS || n->arg.n != 1 || n->dtype.count != 1) {
        r->st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "render c: GEP of more than one lane");
        return;
      }
      set(r, n, fmt(r, "%s[%lld]", get(r, n->src[0]), (long long)n->arg.ints[0]));
      return;
    case UOP_VECTORIZE: { /* (float4){a,b,c,d}, named unless used once */
      const char *ty = ctype(r, n->dtype); /* built in one buffer: a memstream per vector was a hot spot */
      size_t len = strlen(ty) + 8;
      for (uint32_t i = 0; i < n->nsrc; i++) len += strlen(get(r, n->src[i])) + 1;
      char *e = malloc(len);
      if (e) {
        char *p = e + sprintf(e, "((%s){", ty);
        for (uint32_t i = 0; i < n->nsrc; i++) {
          if (i) *p++ = ',';
          p = stpcpy(p, get(r, n->src[i]));
        }
        strcpy(p, "})");
      }
      const char *ex = own(r, e);
      bool prev_ok = !r->st;
      const char *tr = ex ? transpose_vectorize(r, n) : NULL;
      if (tr && prev_ok && !r->st) { /* shuffles where the compiler has them (gcc >= 12, clang), else the lanes */
        const char *name = fmt(r, "vec%zu", k);
        r->shuffled = true;
        fprintf(r->body, "#if HCQ_SHUFFLE\n");
        line(r, "%s %s = %s;", ctype(r, n->dtype), name, tr);
        fprintf(r->body, "#else\n");
        line(r, "%s %s = %s;", ctype(r, n->dtype), name, ex);
        fprintf(r->body, "#endif\n");
        set(r, n, name);
        return;
      }
      /* a vector gate (vectorize.c's lane gates) is read lane by lane, never whole: no variable for it */
      if (uses == 1 || !ex || n->dtype.scalar == UOP_BOOL) {
        set(r, n, ex);
        return;
      }
      const char *name = fmt(r, "vec%zu", k);
      line(r, "%s %s = %s;", ctype(r, n->dtype), name, ex);
      set(r, n, name);
      return;
    }
    default: break;
  }
  if (!uop_op_is_alu(op) && op != UOP_CAST && op != UOP_BITCAST) {
    r->st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "render c: cannot render %s", uop_op_name(op));
    return;
  }
  const char *e = render_alu(r, n);
  if (uses == 1 && op != UOP_WHERE) {
    set(r, n, e);
    return;
  }
  const char *name = fmt(r, "%s%zu", op == UOP_CAST || op == UOP_BITCAST ? "cast" : "alu", k);
  line(r, "%s %s = %s;", ctype(r, n->dtype), name, e);
  set(r, n, name);
}

/* HCQ_FMAX<w>(a, b): float32 MAX of w lanes, IEEE 754-2019 maximum like every target's (decomp.c max_ieee): a NaN
 * if either operand is NaN, -0 < +0, else the larger. x86 with AVX-512DQ (and VL below 16 lanes): VRANGEPS with
 * imm 5 (max, sign from the comparison: -0 < +0) picks the larger, but returns the other operand when one is NaN,
 * so lanes where a and b are unordered (compare predicate 7, _CMP_ORD_Q, false) keep a + b, a NaN, by merge-masking
 * (Intel SDM, VRANGEPS; the gcc/clang builtins behind _mm512_mask_range_ps and _mm512_cmp_ps_mask). Elsewhere the
 * selects written out: b if a < b, a if b < a or a == b != 0, else a + b (equal zeros: +0 unless both are -0;
 * unordered: NaN). aarch64, 1 and 4 lanes: FMAX is that maximum, and picks the NaN it returns as FADD does (Arm ARM
 * FPMax and FPProcessNaNs: a signaling NaN first, else the first operand's), so it equals the selects bit for bit;
 * inline asm, the one spelling gcc and clang share without arm_neon.h. Statement expressions, not functions: the
 * kernel stays the only function in .text. */
static void put_fmax(rc *r, FILE *f, int w) {
  if (w == 1) {
    fputs("#if defined(__aarch64__)\n#define HCQ_FMAX1(a, b) ({ float hcq_r_; __asm__(\"fmax %s0, %s1, %s2\" : "
          "\"=w\"(hcq_r_) : \"w\"((float)(a)), \"w\"((float)(b))); hcq_r_; })\n#else\n", f);
    fputs("#define HCQ_FMAX1(a, b) ({ float hcq_a_ = (a), hcq_b_ = (b); hcq_a_ < hcq_b_ ? hcq_b_ : "
          "hcq_b_ < hcq_a_ || (hcq_a_ == hcq_b_ && hcq_a_ != 0) ? hcq_a_ : hcq_a_ + hcq_b_; })\n#endif\n", f);
    return;
  }
  const char *ft = ctype(r, uop_dt_vec(uop_dt(UOP_FLOAT32), w)), *it = ctype(r, uop_dt_vec(uop_dt(UOP_INT32), w));
  const char *vl = w == 16 ? "" : " && defined(__AVX512VL__)";
  const char *mask = w == 16 ? "unsigned short" : "unsigned char";
  const char *rnd = w == 16 ? ", 4" : "";
  int bits = w * 32;
  if (bits == 128 || bits == 256 || bits == 512)
    fprintf(f, "#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512DQ__)%s\n"
               "#define HCQ_FMAX%d(a, b) ({ %s hcq_a_ = (a), hcq_b_ = (b); (%s)__builtin_ia32_rangeps%d_mask(hcq_a_, "
               "hcq_b_, 5, hcq_a_ + hcq_b_, __builtin_ia32_cmpps%d_mask(hcq_a_, hcq_b_, 7, (%s)-1%s)%s); })\n",
            vl, w, ft, ft, bits, bits, mask, rnd, rnd);
  if (bits == 128)
    fprintf(f, "#elif defined(__aarch64__)\n#define HCQ_FMAX4(a, b) ({ %s hcq_r_; __asm__(\"fmax %%0.4s, %%1.4s, "
               "%%2.4s\" : \"=w\"(hcq_r_) : \"w\"((%s)(a)), \"w\"((%s)(b))); hcq_r_; })\n", ft, ft, ft);
  if (bits == 128 || bits == 256 || bits == 512) fputs("#else\n", f);
  fprintf(f, "#define HCQ_FMAX%d(a, b) ({ %s hcq_a_ = (a), hcq_b_ = (b); %s hcq_lt_ = hcq_a_ < hcq_b_, hcq_ge_ = "
             "(hcq_b_ < hcq_a_) | ((hcq_a_ == hcq_b_) & (hcq_a_ != (%s){0})); (%s)((hcq_lt_ & (%s)hcq_b_) | "
             "(hcq_ge_ & (%s)hcq_a_) | (~(hcq_lt_ | hcq_ge_) & (%s)(hcq_a_ + hcq_b_))); })\n",
          w, ft, it, ft, ft, it, it, it);
  if (bits == 128 || bits == 256 || bits == 512) fputs("#endif\n", f);
}

/* HCQ_VMAX<w>(a, b) = a > b ? a : b and HCQ_VMIN<w>(a, b) = a < b ? a : b, lane by lane, b where unordered: exactly
 * x86 MAXPS/MINPS (Intel SDM: the second operand when either is NaN or both are zero), used as such under gcc. */
static void put_vminmax(rc *r, FILE *f, int w) {
  const char *ft = ctype(r, uop_dt_vec(uop_dt(UOP_FLOAT32), w)), *it = ctype(r, uop_dt_vec(uop_dt(UOP_INT32), w));
  const char *isa = w == 4 ? "defined(__SSE__)" : w == 8 ? "defined(__AVX__)" : w == 16 ? "defined(__AVX512F__)" : NULL;
  if (isa) {
    fprintf(f, "#if defined(__x86_64__) && !defined(__clang__) && %s\n", isa);
    for (int mx = 1; mx >= 0; mx--) {
      const char *op = mx ? "max" : "min";
      if (w == 16)
        fprintf(f, "#define HCQ_V%s16(a, b) ({ %s hcq_a_ = (a), hcq_b_ = (b); (%s)__builtin_ia32_%sps512_mask(hcq_a_, "
                   "hcq_b_, hcq_b_, (unsigned short)-1, 4); })\n", mx ? "MAX" : "MIN", ft, ft, op);
      else
        fprintf(f, "#define HCQ_V%s%d(a, b) ({ %s hcq_a_ = (a), hcq_b_ = (b); (%s)__builtin_ia32_%sps%s(hcq_a_, "
                   "hcq_b_); })\n", mx ? "MAX" : "MIN", w, ft, ft, op, w == 8 ? "256" : "");
    }
    fputs("#else\n", f);
  }
  for (int mx = 1; mx >= 0; mx--)
    fprintf(f, "#define HCQ_V%s%d(a, b) ({ %s hcq_a_ = (a), hcq_b_ = (b); %s hcq_m_ = %s; (%s)((hcq_m_ & (%s)hcq_a_) | "
               "(~hcq_m_ & (%s)hcq_b_)); })\n", mx ? "MAX" : "MIN", w, ft, it,
            mx ? "hcq_b_ < hcq_a_" : "hcq_a_ < hcq_b_", ft, it, it);
  if (isa) fputs("#endif\n", f);
}

hcq_status cc_render_c(const cc_target *t, const char *name, const uop *const *list, size_t count, char **out_src) {
  *out_src = NULL;
  rc r = {.t = t, .list = list};
  char *body = NULL, *out = NULL;
  size_t body_len = 0, out_len = 0;
  r.body = open_memstream(&body, &body_len);
  FILE *f = open_memstream(&out, &out_len);
  if (!r.body || !f) {
    if (r.body) fclose(r.body);
    if (f) fclose(f);
    free(body);
    free(out);
    return hcq_status_make(HCQ_CODE_NOMEM, "render c: open_memstream failed");
  }
  /* use counts over the program's statements (constants and the nodes they hide are not counted) */
  for (size_t k = 0; k < count && !r.st; k++)
    for (uint32_t s = 0; s < list[k]->nsrc; s++) {
      uintptr_t *m = base_ptrmap_find(&r.uses, list[k]->src[s]);
      if (m) (*m)++;
      else if (!base_ptrmap_put(&r.uses, list[k]->src[s], 1)) r.st = hcq_status_make(HCQ_CODE_NOMEM, "render c: oom");
    }
  /* signature: buffers by slot, then vars by name (the linearizer lists them in that order), then core_id */
  nt_find_buffers(&r, list, count);
  if (r.nt_bufs.count) fputs(NT_PREAMBLE, f);
  bool half = false;
  for (size_t k = 0; k < count && !half; k++)
    for (uint32_t i = 0; i <= list[k]->nsrc && !half; i++)
      half = is_half(uop_dt_base_of((i ? list[k]->src[i - 1] : list[k])->dtype));
  if (half) fputs(HALF_PREAMBLE, f);
  /* A loop whose length is a runtime variable cannot be upcast (vectorize.c needs constant lane counts): let gcc
   * vectorize it with a scalar tail, which its -O2 cost model ("very cheap": no epilogue loops) refuses. Clang
   * vectorizes such loops at -O2 already. */
  bool var = false;
  for (size_t k = 0; k < count && !var; k++) var = list[k]->op == UOP_DEFINE_VAR;
  if (var) fputs("#if defined(__GNUC__) && !defined(__clang__)\n#pragma GCC optimize(\"vect-cost-model=cheap\")\n#endif\n", f);
  /* GCC 12's loop vectorizer miscompiles loop-carried integer sums written with wrapping conversions, `acc =
   * (int)((unsigned)acc + (unsigned)x)` (int32 accumulators with `+ 2` after the reduce: loads at the wrong stride,
   * wrong sums at -O2 on any x86 ISA, other wrong sums at -O3; found by opt_fuzz, seeds 0x3039 and 0x15502b66;
   * compiler/gcc_vec_width_test.c). Every loop-carried value is an accumulator register here, so a kernel with an
   * integer one is kept from that pass; its own vector types (UPCAST) do not depend on it, and clang is not
   * affected. */
  bool int_acc = false;
  for (size_t k = 0; k < count && !int_acc; k++)
    int_acc = list[k]->op == UOP_DEFINE_REG && uop_dt_is_int(uop_dt_base_of(list[k]->dtype));
  if (int_acc) fputs("#if defined(__GNUC__) && !defined(__clang__)\n#pragma GCC optimize(\"no-tree-loop-vectorize\")\n"
                     "#endif\n", f);
  bool barrier = false;
  for (size_t k = 0; k < count && !barrier; k++) barrier = list[k]->op == UOP_BARRIER;
  /* the arrival count: the CPU device finds it by name (cpu_device.c) and poisons it after a fault */
  static const char *const ATOMICS_POP = "#if defined(__aarch64__) && defined(__clang__)\n#pragma clang attribute pop\n#endif\n";
  if (barrier)
    fputs("#if defined(__aarch64__) && defined(__clang__)\n"
          "#pragma clang attribute push (__attribute__((target(\"no-outline-atomics\"))), apply_to = function)\n"
          "#elif defined(__aarch64__) && defined(__GNUC__)\n"
          "#pragma GCC target(\"no-outline-atomics\")\n#endif\n"
          "__attribute__((visibility(\"hidden\"))) unsigned hcq_arrived;\n", f);
  fprintf(f, "void %s(", name);
  for (size_t k = 0; k < count && !r.st; k++) {
    const uop *n = list[k];
    if (n->op == UOP_DEFINE_GLOBAL) {
      const char *pname = n->dtype.size >= 0 ? fmt(&r, "data%lld_%lld", (long long)n->arg.i, (long long)n->dtype.size)
                                             : fmt(&r, "data%lld", (long long)n->arg.i);
      fprintf(f, "%s* restrict %s, ", ctype(&r, uop_dt_base_of(n->dtype)), pname);
      set(&r, n, pname);
    } else if (n->op == UOP_DEFINE_VAR) {
      /* user-chosen: prefixed, so no name (int, core_id, ridx0, data0_16) collides with C or our own names */
      const char *vname = fmt(&r, "var_%s", n->arg.str);
      fprintf(f, "const int %s, ", vname);
      set(&r, n, n->dtype.scalar == UOP_INT64 ? fmt(&r, "((long long)%s)", vname) : vname);
    }
  }
  fprintf(f, "int core_id) {\n");
  for (size_t k = 0; k < count && !r.st; k++) render_node(&r, list[k], k);
  if (r.nnt) nt_flush(&r);
  if (r.nt_used) line(&r, "__builtin_ia32_sfence(); /* order the non-temporal stores before the kernel's end */");
  fclose(r.body);
  /* the vector typedefs go before the function (which stays the first and only function in .text) */
  char *head = NULL;
  size_t head_len = 0;
  FILE *hf = open_memstream(&head, &head_len);
  if (!hf && !r.st) r.st = hcq_status_make(HCQ_CODE_NOMEM, "render c: open_memstream failed");
  for (int i = 0; hf && i < r.nvtypes && !r.st; i++) {
    uop_dtype dt = uop_dt_vec(uop_dt((uop_scalar)(r.vtypes[i] & 0xff)), (int)((r.vtypes[i] >> 8) & 0xffff));
    bool unaligned = r.vtypes[i] >> 24;
    int bytes = uop_dt_itemsize_B(dt), align = 1;
    while (align * 2 <= bytes) align *= 2;
    if (unaligned) align = uop_dt_itemsize_B(uop_dt_scalar_of(dt));
    /* GCC applies the attributes in order: aligned() before vector_size() cannot lower the alignment */
    if (unaligned)
      fprintf(hf, "typedef %s %s __attribute__((vector_size(%d),aligned(%d)));\n", scalar_ctype(&r, dt),
              vec_ctype(&r, dt, unaligned), bytes, align);
    else
      fprintf(hf, "typedef %s %s __attribute__((aligned(%d),vector_size(%d)));\n", scalar_ctype(&r, dt),
              vec_ctype(&r, dt, unaligned), align, bytes);
  }
  for (int w = 1; hf && w < 32 && !r.st; w++) {
    if (r.fmax_widths >> w & 1) put_fmax(&r, hf, w);
    if (r.vminmax_widths >> w & 1) put_vminmax(&r, hf, w);
  }
  if (hf && r.shuffled)
    fputs("#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)\n#define HCQ_SHUFFLE 1\n#else\n"
          "#define HCQ_SHUFFLE 0\n#endif\n", hf);
  if (hf) fclose(hf);
  fputs(body ? body : "", f);
  fputs("}\n", f);
  if (barrier) fputs(ATOMICS_POP, f);
  fclose(f);
  free(body);
  if (head && head_len && !r.st) { /* prepend the typedefs */
    char *both = malloc(head_len + out_len + 1);
    if (!both) r.st = hcq_status_make(HCQ_CODE_NOMEM, "render c: out of memory");
    else {
      memcpy(both, head, head_len);
      memcpy(both + head_len, out, out_len + 1);
      free(out);
      out = both;
    }
  }
  free(head);
  for (size_t i = 0; i < r.nowned; i++) free(r.owned[i]);
  free(r.owned);
  base_ptrmap_free(&r.str);
  base_ptrmap_free(&r.uses);
  base_ptrmap_free(&r.nt_bufs);
  if (r.st) {
    free(out);
    return r.st;
  }
  *out_src = out;
  return HCQ_OK;
}
