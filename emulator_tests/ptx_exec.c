/* PTX execution: a block's threads run as warps of 32 lanes over a register file of rows x 32 lanes (ptx_internal.h).
 * A warp issues the instruction at the lowest pc of its running lanes, for the lanes at that pc (the active mask);
 * lanes that branched apart run separately and merge again when their pcs meet (structured code reconverges at
 * the join). bar.sync (PTX ISA "bar, barrier": .aligned, all threads of the CTA) must be reached by every
 * live lane of a warp together and by every thread of the block; anything else is reported, not guessed.
 *
 * Instruction semantics cite PTX ISA "Instructions" by section name beside each case. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator_tests/ptx_internal.h"

#define LANES 32
#define ALL_LANES 0xffffffffu

typedef struct warp {
  uint64_t *rf;          /* nrows x 32 */
  uint32_t pc[LANES];
  uint32_t live;         /* lanes with a thread that has not exited */
  uint32_t running;      /* live lanes not waiting at a barrier */
  uint32_t bar_id, bar_pc;
} warp;

typedef struct exec {
  const ptx_entry *e;
  const ptx_launch *l;
  const uint32_t *poff;
  uint32_t *poff_own;
  uint8_t *shared;
  uint32_t shared_B;
  uint8_t *local;              /* per thread of the block: local_B bytes each */
  uint32_t local_B, local_window_B; /* backed bytes (the .local variables within the window), the window */
  warp *warps;
  uint32_t nwarps, nthreads;
  uint32_t ctaid[3];
  uint64_t issued;
  ptx_stats stats;
  hcq_status st;
} exec;

static inline uint64_t zx(uint64_t v, int b) { return b >= 64 ? v : v & (((uint64_t)1 << b) - 1); }
static inline int64_t sx(uint64_t v, int b) { return b >= 64 ? (int64_t)v : (int64_t)(v << (64 - b)) >> (64 - b); }
static inline float f32(uint64_t v) {
  uint32_t b = (uint32_t)v;
  float f;
  memcpy(&f, &b, 4);
  return f;
}
static inline double f64(uint64_t v) {
  double d;
  memcpy(&d, &v, 8);
  return d;
}
/* Float results: NaNs are the canonical NaN (PTX ISA "Floating-Point Instructions"). */
static inline uint64_t bf32(float f) {
  uint32_t b;
  memcpy(&b, &f, 4);
  return (b & 0x7fffffffu) > 0x7f800000u ? PTX_F32_CANON_NAN : b;
}
static inline uint64_t bf64(double d) {
  uint64_t b;
  memcpy(&b, &d, 8);
  return (b & ~((uint64_t)1 << 63)) > 0x7ff0000000000000ull ? PTX_F64_CANON_NAN : b;
}
static inline uint32_t popcount32(uint32_t v) { /* without -mpopcnt the builtin is a libgcc call */
  v = v - ((v >> 1) & 0x55555555u);
  v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
  return (((v + (v >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;
}
static inline float ftz32(float f) { return fpclassify(f) == FP_SUBNORMAL ? copysignf(0.0f, f) : f; }

#define ROW(r) (rf + (size_t)(r) * LANES)
#define FOR_LANES(em) for (uint32_t m_ = (em); m_; m_ &= m_ - 1) { const int l = __builtin_ctz(m_);
#define END_LANES }
/* The body for each lane of em; a full warp takes a plain loop the compiler can vectorize. */
#define LANES_DO(em, ...)                                              \
  do {                                                                 \
    uint32_t em_ = (em);                                               \
    if (em_ == ALL_LANES) {                                            \
      for (int l = 0; l < LANES; l++) { __VA_ARGS__; }                 \
    } else {                                                           \
      for (uint32_t m_ = em_; m_; m_ &= m_ - 1) {                      \
        const int l = __builtin_ctz(m_);                               \
        __VA_ARGS__;                                                   \
      }                                                                \
    }                                                                  \
  } while (0)

/* ------------------------------------------------------------------------------------------------ faults */

static void lane_tid(const exec *x, uint32_t w, int l, uint32_t out[3]) {
  uint32_t lin = w * LANES + (uint32_t)l;
  const uint32_t *b = x->l->block;
  out[0] = lin % b[0];
  out[1] = lin / b[0] % b[1];
  out[2] = lin / (b[0] * b[1]);
}

static void fault(exec *x, uint32_t w, int lane, const ptx_ins *in, const char *f, ...)
    __attribute__((format(printf, 5, 6)));
static void fault(exec *x, uint32_t w, int lane, const ptx_ins *in, const char *f, ...) {
  if (x->st) return;
  char msg[512];
  va_list ap;
  va_start(ap, f);
  vsnprintf(msg, sizeof msg, f, ap);
  va_end(ap);
  uint32_t t[3];
  lane_tid(x, w, lane, t);
  x->st = hcq_status_make(HCQ_CODE_INVALID, "ptx: kernel %s, line %u `%s`: thread (%u,%u,%u) of block (%u,%u,%u): %s",
                          x->e->info.name, in->line, in->text, t[0], t[1], t[2], x->ctaid[0], x->ctaid[1],
                          x->ctaid[2], msg);
}

/* ------------------------------------------------------------------------------------------------ memory */

static const char *space_name(int s) {
  return s == PS_GLOBAL ? "global" : s == PS_SHARED ? "shared" : s == PS_LOCAL ? "local" : "param";
}

/* Access size_B bytes at addr in the instruction's space for lane l (write: from buf, else into buf). */
static bool mem_access(exec *x, uint32_t w, int l, const ptx_ins *in, uint64_t addr, uint32_t size_B, bool write,
                       void *buf) {
  if (addr % size_B) { /* PTX ISA "Alignment": accesses must be naturally aligned to their size */
    fault(x, w, l, in, "misaligned %s %s of %u bytes at 0x%llx", space_name(in->space), write ? "write" : "read",
          size_B, (unsigned long long)addr);
    return false;
  }
  if (in->space == PS_GLOBAL) {
    const ptx_mem_ops *m = x->l->mem;
    hcq_status st = !m ? hcq_status_make(HCQ_CODE_INVALID, "no memory is mapped")
                    : write ? m->write(m->ctx, addr, size_B, buf) : m->read(m->ctx, addr, size_B, buf);
    if (st) {
      fault(x, w, l, in, "MMU fault: global %s of %u bytes at 0x%llx: %s", write ? "write" : "read", size_B,
            (unsigned long long)addr, hcq_status_message(st));
      hcq_status_free(st);
      return false;
    }
    return true;
  }
  if (in->space == PS_LOCAL) { /* per thread: outside the window (or the .local variables) is a memory fault */
    uint64_t lim = x->local_B;
    if (addr > lim || size_B > lim - addr) {
      fault(x, w, l, in, "MMU fault: local %s of %u bytes at 0x%llx is outside %s of %u bytes", write ? "write" : "read",
            size_B, (unsigned long long)addr, x->local_window_B < x->e->info.static_local_B ? "the local window"
            : "the .local variables", x->local_B);
      return false;
    }
    uint8_t *t = x->local + (size_t)(w * LANES + (uint32_t)l) * x->local_B + addr;
    if (write) memcpy(t, buf, size_B);
    else memcpy(buf, t, size_B);
    return true;
  }
  uint8_t *base = in->space == PS_SHARED ? x->shared : (uint8_t *)x->l->params;
  uint64_t limit = in->space == PS_SHARED ? x->shared_B : x->l->params_size_B;
  if (addr > limit || size_B > limit - addr) {
    fault(x, w, l, in, "%s %s of %u bytes at 0x%llx is outside the %s window of %llu bytes", space_name(in->space),
          write ? "write" : "read", size_B, (unsigned long long)addr, space_name(in->space),
          (unsigned long long)limit);
    return false;
  }
  if (write) memcpy(base + addr, buf, size_B);
  else memcpy(buf, base + addr, size_B);
  return true;
}

static bool do_ld_st(exec *x, uint32_t w, const ptx_ins *in, uint32_t em) {
  uint64_t *rf = x->warps[w].rf;
  uint32_t esize = in->tbits / 8u, size = esize * in->vec;
  bool sgn = in->tsigned, write = in->op == PO_ST;
  FOR_LANES(em)
    uint64_t addr = (uint64_t)in->off;
    if (in->s[0] >= 0) addr += ROW(in->s[0])[l];
    if (in->param >= 0) addr += x->poff[in->param];
    uint8_t buf[16];
    if (write)
      for (int i = 0; i < in->vec; i++) {
        uint64_t v = ROW(in->s[1 + i])[l];
        memcpy(buf + i * esize, &v, esize); /* little-endian host: the low bytes */
      }
    if (!mem_access(x, w, l, in, addr, size, write, buf)) return false;
    if (!write)
      for (int i = 0; i < in->vec; i++) {
        uint64_t v = 0;
        memcpy(&v, buf + i * esize, esize);
        ROW(in->d[i])[l] = sgn ? (uint64_t)sx(v, (int)esize * 8) : v; /* ld.s8/s16/s32 sign-extend */
      }
  END_LANES
  return true;
}

/* ------------------------------------------------------------------------------------------------ ALU */

/* A float op under the instruction's rounding and flags (.ftz inputs/outputs, .sat clamp to [0, 1], NaN -> 0). */
static uint64_t fop(const ptx_ins *in, char op, uint64_t a, uint64_t b, uint64_t c) {
  ptx_rnd r = (ptx_rnd)in->rnd;
  if (in->type == PT_F32) {
    float x = f32(a), y = f32(b), z = f32(c);
    if (in->flags & PF_FTZ) x = ftz32(x), y = ftz32(y), z = ftz32(z);
    float v = ptx_f32_op(op, x, y, z, r);
    if (in->flags & PF_FTZ) v = ftz32(v);
    if (in->flags & PF_SAT) v = v > 0 ? (v < 1 ? v : 1) : 0;
    return bf32(v);
  }
  double v = ptx_f64_op(op, f64(a), f64(b), f64(c), r);
  if (in->flags & PF_SAT) v = v > 0 ? (v < 1 ? v : 1) : 0;
  return bf64(v);
}

/* The high 64 bits of a 64 x 64-bit product from 32-bit halves (no __int128 on 32-bit hosts); signed: the unsigned
 * product less b << 64 when a < 0 and a << 64 when b < 0. */
static uint64_t umulhi64(uint64_t a, uint64_t b) {
  uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
  uint64_t p0 = al * bl, p1 = al * bh, p2 = ah * bl, p3 = ah * bh;
  uint64_t mid = (p0 >> 32) + (uint32_t)p1 + (uint32_t)p2;
  return p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32);
}

/* High half of the product of two w-bit values (mul.hi, PTX ISA "mul"). */
static uint64_t mul_hi(uint64_t a, uint64_t b, int w, bool sgn) {
  if (w == 64) {
    uint64_t h = umulhi64(a, b);
    if (sgn) h -= ((int64_t)a < 0 ? b : 0) + ((int64_t)b < 0 ? a : 0);
    return h;
  }
  if (sgn) return (uint64_t)((sx(a, w) * sx(b, w)) >> w);
  return (zx(a, w) * zx(b, w)) >> w;
}

static uint64_t mul_wide(uint64_t a, uint64_t b, int w, bool sgn) {
  return sgn ? (uint64_t)(sx(a, w) * sx(b, w)) : zx(a, w) * zx(b, w);
}

/* min/max of floats (PTX ISA "min"/"max"): a NaN operand is ignored, two NaNs give the canonical NaN
 * (.NaN: any NaN gives it); -0.0 counts as below +0.0. */
static double fminmax(double a, double b, bool is_max, bool nan_prop, bool *nan) {
  *nan = false;
  if (isnan(a) || isnan(b)) {
    if (nan_prop || (isnan(a) && isnan(b))) {
      *nan = true;
      return 0;
    }
    return isnan(a) ? b : a;
  }
  if (a == b && a == 0) return (signbit(a) != signbit(b)) ? (is_max ? 0.0 : -0.0) : a;
  return is_max ? (a > b ? a : b) : (a < b ? a : b);
}

static bool compare(const ptx_ins *in, uint64_t a, uint64_t b) {
  ptx_type t = (ptx_type)in->type;
  if (in->tfloat) {
    double x = t == PT_F32 ? f32(a) : f64(a), y = t == PT_F32 ? f32(b) : f64(b);
    if (t == PT_F32 && (in->flags & PF_FTZ)) x = ftz32((float)x), y = ftz32((float)y);
    bool un = isnan(x) || isnan(y);
    switch (in->cmp) {
      case PC_EQ: return !un && x == y;
      case PC_NE: return !un && x != y;
      case PC_LT: return !un && x < y;
      case PC_LE: return !un && x <= y;
      case PC_GT: return !un && x > y;
      case PC_GE: return !un && x >= y;
      case PC_EQU: return un || x == y;
      case PC_NEU: return un || x != y;
      case PC_LTU: return un || x < y;
      case PC_LEU: return un || x <= y;
      case PC_GTU: return un || x > y;
      case PC_GEU: return un || x >= y;
      case PC_NUM: return !un;
      case PC_NAN: return un;
      default: return false;
    }
  }
  int w = in->tbits;
  bool sgn = in->tsigned;
  uint64_t ua = zx(a, w), ub = zx(b, w);
  int64_t sa = sx(a, w), sb = sx(b, w);
  switch (in->cmp) {
    case PC_EQ: return ua == ub;
    case PC_NE: return ua != ub;
    case PC_LT: return sgn ? sa < sb : ua < ub;
    case PC_LE: return sgn ? sa <= sb : ua <= ub;
    case PC_GT: return sgn ? sa > sb : ua > ub;
    case PC_GE: return sgn ? sa >= sb : ua >= ub;
    case PC_LO: return ua < ub;
    case PC_LS: return ua <= ub;
    case PC_HI: return ua > ub;
    case PC_HS: return ua >= ub;
    default: return false;
  }
}

static inline bool boolop(int op, bool t, bool c) {
  return op == PB_AND ? t && c : op == PB_OR ? t || c : op == PB_XOR ? t != c : t;
}

/* Integer division (PTX ISA "div", "rem"): division by zero is "unspecified, machine-specific";
 * the mock gives all ones for div (like NVIDIA GPUs) and the dividend for rem, never a trap. Signed MIN / -1 wraps
 * to MIN (rem 0). */
static uint64_t idiv(uint64_t a, uint64_t b, int w, bool sgn, bool rem) {
  if (zx(b, w) == 0) return rem ? zx(a, w) : zx(~(uint64_t)0, w);
  if (sgn) {
    int64_t x = sx(a, w), y = sx(b, w);
    if (y == -1) return rem ? 0 : zx(0 - (uint64_t)x, w);
    return zx((uint64_t)(rem ? x % y : x / y), w);
  }
  return rem ? zx(a, w) % zx(b, w) : zx(a, w) / zx(b, w);
}

/* Transcendentals .approx.f32 (PTX ISA "Floating Point Instructions: sin", "cos", "lg2", "ex2"): the documented
 * bounds are, for sin/cos, absolute error 2^-20.5 in [-2pi, 2pi] and 2^-14.7 in [-100pi, 100pi] (none beyond); for
 * lg2, absolute 2^-22 in (0.5, 2) and relative 2^-22 elsewhere; for ex2, 2 ulp from the correctly rounded result.
 * The mock computes each in double and rounds once, which is within all of them (ptx_interp_test checks it). */
static float transcendental(int op, float x) {
  switch (op) {
    case PO_EX2: return (float)exp2((double)x);
    case PO_LG2: return (float)log2((double)x);
    case PO_SIN: return (float)sin((double)x);
    default: return (float)cos((double)x);
  }
}

static bool exec_alu(exec *x, uint32_t w, const ptx_ins *in, uint32_t em) {
  uint64_t *rf = x->warps[w].rf;
  ptx_type t = (ptx_type)in->type;
  int bits = in->tbits;
  bool sgn = in->tsigned;
  uint64_t *d = in->d[0] >= 0 ? ROW(in->d[0]) : NULL;
  const uint64_t *a = in->s[0] >= 0 ? ROW(in->s[0]) : NULL, *b = in->s[1] >= 0 ? ROW(in->s[1]) : NULL,
                 *c = in->s[2] >= 0 ? ROW(in->s[2]) : NULL;
  bool plain = (in->rnd == PR_NONE || in->rnd == PR_RN) && !(in->flags & (PF_FTZ | PF_SAT));
  switch (in->op) {
    case PO_MOV: case PO_CVTA: /* "mov"; "cvta": generic and global addresses are the same here */
      LANES_DO(em, d[l] = a[l]);
      return true;
    case PO_ADD: case PO_SUB: { /* "add", "sub"; and for floats */
      bool sub = in->op == PO_SUB;
      if (t == PT_F32 && plain) {
        if (sub) { LANES_DO(em, d[l] = bf32(f32(a[l]) - f32(b[l]))); }
        else { LANES_DO(em, d[l] = bf32(f32(a[l]) + f32(b[l]))); }
      } else if (in->tfloat) {
        LANES_DO(em, d[l] = fop(in, sub ? '-' : '+', a[l], b[l], 0));
      } else if (in->flags & PF_SAT) { /* .sat.s32: clamp to [INT32_MIN, INT32_MAX] */
        FOR_LANES(em)
          int64_t v = sub ? sx(a[l], 32) - sx(b[l], 32) : sx(a[l], 32) + sx(b[l], 32);
          d[l] = zx((uint64_t)(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v), 32);
        END_LANES
      } else if (sub) {
        LANES_DO(em, d[l] = zx(a[l] - b[l], bits));
      } else {
        LANES_DO(em, d[l] = zx(a[l] + b[l], bits));
      }
      return true;
    }
    case PO_MUL: case PO_MAD: { /* "mul", "mad"; and for floats (mad.f32 with a rounding = fma) */
      bool mad = in->op == PO_MAD;
      if (t == PT_F32 && plain && !mad) {
        LANES_DO(em, d[l] = bf32(f32(a[l]) * f32(b[l])));
      } else if (in->tfloat) {
        LANES_DO(em, d[l] = fop(in, mad ? 'f' : '*', a[l], b[l], mad ? c[l] : 0));
      } else if (in->mul == PM_LO) {
        LANES_DO(em, d[l] = zx(a[l] * b[l] + (mad ? c[l] : 0), bits));
      } else if (in->mul == PM_HI) {
        LANES_DO(em, d[l] = zx(mul_hi(a[l], b[l], bits, sgn) + (mad ? c[l] : 0), bits));
      } else {
        LANES_DO(em, d[l] = zx(mul_wide(a[l], b[l], bits, sgn) + (mad ? c[l] : 0), 2 * bits));
      }
      return true;
    }
    case PO_FMA: /* "fma": one rounding */
      if (t == PT_F32 && plain) { LANES_DO(em, d[l] = bf32(fmaf(f32(a[l]), f32(b[l]), f32(c[l])))); }
      else { LANES_DO(em, d[l] = fop(in, 'f', a[l], b[l], c[l])); }
      return true;
    case PO_DIV: case PO_REM: /* "div", "rem"; "div" (.approx/.full: at most 2 ulp; computed exactly here) */
      if (in->tfloat) { LANES_DO(em, d[l] = fop(in, '/', a[l], b[l], 0)); }
      else { LANES_DO(em, d[l] = idiv(a[l], b[l], bits, sgn, in->op == PO_REM)); }
      return true;
    case PO_NEG: case PO_ABS: { /* "abs", "neg"; floats: the sign bit only */
      bool neg = in->op == PO_NEG;
      if (in->tfloat) {
        uint64_t sbit = (uint64_t)1 << (bits - 1);
        FOR_LANES(em)
          uint64_t v = zx(a[l], bits);
          if ((in->flags & PF_FTZ) && fpclassify(f32(v)) == FP_SUBNORMAL) v &= sbit;
          d[l] = neg ? v ^ sbit : v & ~sbit;
        END_LANES
      } else {
        FOR_LANES(em)
          int64_t v = sx(a[l], bits);
          d[l] = zx(neg || v < 0 ? 0 - (uint64_t)v : (uint64_t)v, bits);
        END_LANES
      }
      return true;
    }
    case PO_NOT: /* "not" */
      if (t == PT_PRED) { LANES_DO(em, d[l] = (a[l] & 1) ^ 1); }
      else { LANES_DO(em, d[l] = zx(~a[l], bits)); }
      return true;
    case PO_AND: LANES_DO(em, d[l] = a[l] & b[l]); return true; /* "and", "or", "xor" */
    case PO_OR: LANES_DO(em, d[l] = a[l] | b[l]); return true;
    case PO_XOR: LANES_DO(em, d[l] = a[l] ^ b[l]); return true;
    case PO_SHL: /* "shl": shift amounts beyond the width give 0 */
      FOR_LANES(em)
        uint32_t n = (uint32_t)b[l];
        d[l] = n >= (uint32_t)bits ? 0 : zx(a[l] << n, bits);
      END_LANES
      return true;
    case PO_SHR: /* "shr": beyond the width, 0 (unsigned) or the sign (signed) */
      FOR_LANES(em)
        uint32_t n = (uint32_t)b[l];
        if (sgn) d[l] = zx((uint64_t)(sx(a[l], bits) >> (n >= (uint32_t)bits ? (uint32_t)bits - 1 : n)), bits);
        else d[l] = n >= (uint32_t)bits ? 0 : zx(a[l], bits) >> n;
      END_LANES
      return true;
    case PO_MIN: case PO_MAX: { /* "min"/"max"; and for floats */
      bool mx = in->op == PO_MAX;
      if (in->tfloat) {
        FOR_LANES(em)
          double x1 = t == PT_F32 ? f32(a[l]) : f64(a[l]), y1 = t == PT_F32 ? f32(b[l]) : f64(b[l]);
          if (in->flags & PF_FTZ) x1 = ftz32((float)x1), y1 = ftz32((float)y1);
          bool nan;
          double r = fminmax(x1, y1, mx, in->flags & PF_NAN, &nan);
          d[l] = t == PT_F32 ? (nan ? PTX_F32_CANON_NAN : bf32((float)r)) : (nan ? PTX_F64_CANON_NAN : bf64(r));
        END_LANES
      } else {
        FOR_LANES(em)
          bool lt = sgn ? sx(a[l], bits) < sx(b[l], bits) : zx(a[l], bits) < zx(b[l], bits);
          d[l] = zx(lt != mx ? a[l] : b[l], bits);
        END_LANES
      }
      return true;
    }
    case PO_SETP: { /* "setp": p = BoolOp(a CmpOp b, c), q = BoolOp(!(a CmpOp b), c) */
      uint64_t *q = in->d[1] >= 0 ? ROW(in->d[1]) : NULL;
      FOR_LANES(em)
        bool r = compare(in, a[l], b[l]), cc = c ? c[l] & 1 : false;
        d[l] = boolop(in->boolop, r, cc);
        if (q) q[l] = boolop(in->boolop, !r, cc);
      END_LANES
      return true;
    }
    case PO_SELP: LANES_DO(em, d[l] = c[l] & 1 ? a[l] : b[l]); return true; /* "selp" */
    case PO_CVT: /* "cvt" */
      LANES_DO(em, d[l] = ptx_cvt(a[l], t, (ptx_type)in->stype, (ptx_rnd)in->rnd, in->flags));
      return true;
    case PO_SQRT: /* "sqrt": .rn IEEE; .approx.f32 max relative error 2^-23 (computed exactly here) */
      LANES_DO(em, d[l] = fop(in, 's', a[l], 0, 0));
      return true;
    case PO_RCP: { /* "rcp": .rn IEEE; .approx.f32 max 1 ulp (computed exactly here) */
      uint64_t one = t == PT_F32 ? 0x3f800000u : 0x3ff0000000000000ull;
      LANES_DO(em, d[l] = fop(in, '/', one, a[l], 0));
      return true;
    }
    case PO_EX2: case PO_LG2: case PO_SIN: case PO_COS:
      FOR_LANES(em)
        float v = f32(a[l]);
        if (in->flags & PF_FTZ) v = ftz32(v);
        float r = transcendental(in->op, v);
        d[l] = bf32(in->flags & PF_FTZ ? ftz32(r) : r);
      END_LANES
      return true;
    case PO_LD: case PO_ST: return do_ld_st(x, w, in, em);
    default:
      fault(x, w, __builtin_ctz(em ? em : 1), in, "internal: instruction not executable here");
      return false;
  }
}

/* ------------------------------------------------------------------------------------------------ warps */

static inline uint32_t guard_mask(const uint64_t *rf, const ptx_ins *in, uint32_t mask) {
  if (in->guard < 0) return mask;
  const uint64_t *g = ROW(in->guard);
  uint32_t pm = 0;
  FOR_LANES(mask) pm |= (uint32_t)(g[l] & 1) << l; END_LANES
  if (in->flags & PF_GUARD_NEG) pm = ~pm;
  return mask & pm;
}

/* Run warp w until every live lane waits at a barrier or has exited. */
static bool run_warp_(exec *x, uint32_t wi, uint64_t *issued, uint64_t *tins) {
  warp *w = &x->warps[wi];
  const ptx_ins *code = x->e->code;
  uint64_t *rf = w->rf;
  uint64_t budget = x->l->max_warp_instructions, base = x->issued, n = 0, t = 0; /* counters kept in registers */
#define SAVE_COUNTS (*issued = n, *tins = t)
  while (w->running) {
    uint32_t minpc = UINT32_MAX, next = UINT32_MAX, mask = 0;
    FOR_LANES(w->running)
      uint32_t pc = w->pc[l];
      if (pc < minpc) {
        if (minpc < next) next = minpc;
        minpc = pc;
        mask = 1u << l;
      } else if (pc == minpc) {
        mask |= 1u << l;
      } else if (pc < next) {
        next = pc;
      }
    END_LANES
    uint32_t pc = minpc, cnt = popcount32(mask);
    for (;;) {
      if (pc >= next) break; /* reached (or passed) lanes waiting further on: merge by rescanning */
      const ptx_ins *in = &code[pc];
      n++;
      t += cnt;
      if (budget && base + n > budget) {
        fault(x, wi, __builtin_ctz(mask), in, "the kernel ran past its budget of %llu warp instructions (a hang?)",
              (unsigned long long)budget);
        SAVE_COUNTS;
        return false;
      }
      if (in->op == PO_BRA) { /* "bra" */
        uint32_t taken = guard_mask(rf, in, mask);
        if (taken == mask) {
          pc = (uint32_t)in->off;
        } else if (!taken) {
          pc++;
        } else { /* the warp diverges */
          FOR_LANES(mask) w->pc[l] = taken >> l & 1 ? (uint32_t)in->off : pc + 1; END_LANES
          mask = 0;
          break;
        }
        continue;
      }
      if (in->op == PO_RET) { /* "ret" / "exit": from the entry, the thread ends */
        uint32_t ex = guard_mask(rf, in, mask);
        w->live &= ~ex;
        w->running &= ~ex;
        mask &= ~ex;
        cnt = popcount32(mask);
        pc++;
        if (!mask) break;
        continue;
      }
      if (in->op == PO_BAR) {
        uint32_t g = guard_mask(rf, in, mask);
        if (g != mask || mask != w->live || next != UINT32_MAX) {
          uint32_t missing = w->live & ~g;
          fault(x, wi, __builtin_ctz(g ? g : mask), in,
                "divergent barrier: lane %d of this warp is not here (bar.sync is .aligned: all threads of a warp "
                "must execute it together)",
                __builtin_ctz(missing ? missing : 1));
          SAVE_COUNTS;
          return false;
        }
        uint64_t id = ROW(in->s[0])[__builtin_ctz(mask)];
        if (id > 15 || (in->ns > 1 && ROW(in->s[1])[__builtin_ctz(mask)] != x->nthreads)) {
          fault(x, wi, __builtin_ctz(mask), in, "barrier %llu with a thread count other than the block's is not supported",
                (unsigned long long)id);
          SAVE_COUNTS;
          return false;
        }
        FOR_LANES(mask) w->pc[l] = pc + 1; END_LANES
        w->running = 0;
        w->bar_id = (uint32_t)id;
        w->bar_pc = pc;
        SAVE_COUNTS;
        return true;
      }
      uint32_t em = guard_mask(rf, in, mask);
      if (em && !exec_alu(x, wi, in, em)) {
        SAVE_COUNTS;
        return false;
      }
      pc++;
    }
    FOR_LANES(mask) w->pc[l] = pc; END_LANES
  }
  SAVE_COUNTS;
  return true;
}
#undef SAVE_COUNTS

static bool run_warp(exec *x, uint32_t wi) {
  uint64_t n = 0, t = 0;
  bool ok = run_warp_(x, wi, &n, &t);
  x->issued += n;
  x->stats.thread_instructions += t;
  return ok;
}

/* ------------------------------------------------------------------------------------------------ launch */

/* Once per launch: immediates and the special registers that do not change between blocks, in every lane. */
static void init_launch(exec *x) {
  const ptx_entry *e = x->e;
  const ptx_launch *l = x->l;
  for (uint32_t wi = 0; wi < x->nwarps; wi++) {
    uint64_t *rf = x->warps[wi].rf;
    memset(rf, 0, e->nrows * LANES * sizeof *rf);
    for (size_t r = 0; r < e->nrows; r++) {
      const ptx_row *row = &e->rows[r];
      uint64_t *dst = rf + r * LANES;
      if (row->kind == PRK_CONST)
        for (int ln = 0; ln < LANES; ln++) dst[ln] = row->value;
      if (row->kind != PRK_SPECIAL) continue;
      for (int ln = 0; ln < LANES; ln++) {
        uint32_t t[3];
        lane_tid(x, wi, ln, t);
        uint64_t v = 0;
        switch ((ptx_special)row->value) {
          case PSR_TID_X: case PSR_TID_Y: case PSR_TID_Z: v = t[row->value - PSR_TID_X]; break;
          case PSR_NTID_X: case PSR_NTID_Y: case PSR_NTID_Z: v = l->block[row->value - PSR_NTID_X]; break;
          case PSR_NCTAID_X: case PSR_NCTAID_Y: case PSR_NCTAID_Z: v = l->grid[row->value - PSR_NCTAID_X]; break;
          case PSR_LANEID: v = (uint64_t)ln; break;
          case PSR_WARPID: v = wi; break;
          default: break; /* %ctaid: per block */
        }
        dst[ln] = v;
      }
    }
  }
}

/* Per block: registers zeroed (reads before writes are deterministic), %ctaid, fresh shared memory. Only the lanes
 * that hold threads are touched (a one-thread block costs one lane per row). */
static void init_block(exec *x) {
  const ptx_entry *e = x->e;
  for (uint32_t wi = 0; wi < x->nwarps; wi++) {
    warp *w = &x->warps[wi];
    uint64_t *rf = w->rf;
    uint32_t nl = x->nthreads - wi * LANES < LANES ? x->nthreads - wi * LANES : LANES;
    w->live = w->running = nl == LANES ? ALL_LANES : (1u << nl) - 1;
    memset(w->pc, 0, sizeof w->pc);
    for (size_t r = 0; r < e->nrows; r++) {
      const ptx_row *row = &e->rows[r];
      uint64_t *dst = rf + r * LANES;
      if (row->kind == PRK_REG) memset(dst, 0, nl * sizeof *dst);
      else if (row->kind == PRK_SPECIAL && row->value >= PSR_CTAID_X && row->value <= PSR_CTAID_Z)
        for (uint32_t ln = 0; ln < nl; ln++) dst[ln] = x->ctaid[row->value - PSR_CTAID_X];
    }
  }
  /* fresh shared memory holds garbage on a GPU: all ones (NaN as floats) makes a read before a write visible */
  memset(x->shared, 0xff, x->shared_B);
  if (x->local) memset(x->local, 0xff, (size_t)x->nthreads * x->local_B);
}

static bool run_block(exec *x) {
  init_block(x);
  for (;;) {
    uint32_t waiting = 0;
    for (uint32_t wi = 0; wi < x->nwarps; wi++) {
      if (!run_warp(x, wi)) return false;
      if (x->warps[wi].live) waiting++;
    }
    if (!waiting) return true;
    /* every live warp waits at a barrier: all threads of the block must be there ("bar") */
    const warp *first = NULL;
    for (uint32_t wi = 0; wi < x->nwarps; wi++) {
      warp *w = &x->warps[wi];
      if (!w->live) {
        const ptx_ins *in = x->e->code;
        for (uint32_t k = 0; k < x->nwarps; k++)
          if (x->warps[k].live) in = &x->e->code[x->warps[k].bar_pc];
        fault(x, wi, 0, in, "this thread exited while other threads of its block wait at this barrier");
        return false;
      }
      if (first && (w->bar_id != first->bar_id)) {
        fault(x, wi, 0, &x->e->code[w->bar_pc], "warps of one block wait at different barriers (%u and %u)",
              first->bar_id, w->bar_id);
        return false;
      }
      first = w;
    }
    for (uint32_t wi = 0; wi < x->nwarps; wi++) x->warps[wi].running = x->warps[wi].live;
  }
}

static hcq_status check_launch(const ptx_entry *e, const ptx_launch *l, exec *x) {
  const uint32_t *g = l->grid, *b = l->block;
  if (!g[0] || !g[1] || !g[2] || !b[0] || !b[1] || !b[2])
    return hcq_status_make(HCQ_CODE_INVALID, "ptx: launch of %s with an empty grid or block", e->info.name);
  if (b[0] > 1024 || b[1] > 1024 || b[2] > 64 || (uint64_t)b[0] * b[1] * b[2] > 1024)
    return hcq_status_make(HCQ_CODE_INVALID, "ptx: launch of %s: block %ux%ux%u exceeds 1024 threads (x, y <= 1024, z <= 64)",
                           e->info.name, b[0], b[1], b[2]);
  if (g[0] > 0x7fffffffu || g[1] > 65535 || g[2] > 65535)
    return hcq_status_make(HCQ_CODE_INVALID, "ptx: launch of %s: grid %ux%ux%u beyond 2^31-1 x 65535 x 65535",
                           e->info.name, g[0], g[1], g[2]);
  const uint32_t *mx = e->info.maxntid;
  if (e->info.reqntid && (b[0] != mx[0] || b[1] != mx[1] || b[2] != mx[2]))
    return hcq_status_make(HCQ_CODE_INVALID, "ptx: launch of %s: block %ux%ux%u is not its .reqntid %u, %u, %u",
                           e->info.name, b[0], b[1], b[2], mx[0], mx[1], mx[2]);
  /* PTX ISA "Performance-Tuning Directives: .maxntid": the maximum number of threads is the product of the extents */
  if (mx[0] && (uint64_t)b[0] * b[1] * b[2] > (uint64_t)mx[0] * mx[1] * mx[2])
    return hcq_status_make(HCQ_CODE_INVALID, "ptx: launch of %s: block %ux%ux%u exceeds its .maxntid %u, %u, %u",
                           e->info.name, b[0], b[1], b[2], mx[0], mx[1], mx[2]);
  if (l->shared_size_B > (16u << 20))
    return hcq_status_make(HCQ_CODE_INVALID, "ptx: launch of %s: a shared window of %u bytes (more than 16 MiB)",
                           e->info.name, l->shared_size_B);
  uint32_t stat = e->info.static_shared_B;
  if (l->shared_size_B && l->shared_size_B < stat)
    return hcq_status_make(HCQ_CODE_INVALID, "ptx: launch of %s: shared window of %u bytes < its %u bytes of .shared",
                           e->info.name, l->shared_size_B, stat);
  x->shared_B = l->shared_size_B ? l->shared_size_B : stat;
  uint32_t lstat = e->info.static_local_B;
  x->local_window_B = l->local_size_given ? l->local_size_B : lstat;
  x->local_B = x->local_window_B < lstat ? x->local_window_B : lstat;
  if (l->param_offsets) {
    if (l->nparam_offsets != e->info.nparams)
      return hcq_status_make(HCQ_CODE_INVALID, "ptx: launch of %s: %zu parameter offsets for %zu parameters",
                             e->info.name, l->nparam_offsets, e->info.nparams);
    x->poff = l->param_offsets;
  } else {
    x->poff_own = calloc(e->info.nparams + 1, sizeof *x->poff_own);
    if (!x->poff_own) return hcq_status_make(HCQ_CODE_NOMEM, "ptx: out of memory");
    for (size_t i = 0; i < e->info.nparams; i++) x->poff_own[i] = e->params[i].offset_B;
    x->poff = x->poff_own;
  }
  for (size_t i = 0; i < e->info.nparams; i++)
    if ((uint64_t)x->poff[i] + e->params[i].size_B > l->params_size_B || (l->params_size_B && !l->params))
      return hcq_status_make(HCQ_CODE_INVALID,
                             "ptx: launch of %s: parameter %s (%u bytes at offset %u) outside the %zu parameter bytes",
                             e->info.name, e->params[i].name, e->params[i].size_B, x->poff[i], l->params_size_B);
  return HCQ_OK;
}

hcq_status ptx_launch_run(const ptx_module *m, const ptx_launch *l, ptx_stats *out_stats) {
  if (out_stats) memset(out_stats, 0, sizeof *out_stats);
  const ptx_entry_info *info;
  HCQ_TRY(ptx_module_entry(m, l->entry, &info));
  const ptx_entry *e = (const ptx_entry *)info; /* info is the entry's first member */
  exec x = {.e = e, .l = l};
  hcq_status st = check_launch(e, l, &x);
  if (st) {
    free(x.poff_own);
    return st;
  }
  x.nthreads = l->block[0] * l->block[1] * l->block[2];
  x.nwarps = (x.nthreads + LANES - 1) / LANES;
  x.warps = calloc(x.nwarps, sizeof *x.warps);
  x.shared = malloc(x.shared_B + 1);
  if (x.local_B) x.local = malloc((size_t)x.nthreads * x.local_B);
  bool ok = x.warps && x.shared && (x.local || !x.local_B);
  for (uint32_t i = 0; ok && i < x.nwarps; i++) ok = (x.warps[i].rf = malloc((e->nrows + 1) * LANES * sizeof(uint64_t)));
  if (!ok) {
    x.st = hcq_status_make(HCQ_CODE_NOMEM, "ptx: out of memory for %u warps of %zu registers", x.nwarps, e->nrows);
  } else {
    init_launch(&x);
    for (uint32_t z = 0; z < l->grid[2] && !x.st; z++)
      for (uint32_t y = 0; y < l->grid[1] && !x.st; y++)
        for (uint32_t gx = 0; gx < l->grid[0] && !x.st; gx++) {
          x.ctaid[0] = gx, x.ctaid[1] = y, x.ctaid[2] = z;
          run_block(&x);
        }
  }
  for (uint32_t i = 0; x.warps && i < x.nwarps; i++) free(x.warps[i].rf);
  free(x.warps);
  free(x.shared);
  free(x.local);
  free(x.poff_own);
  x.stats.warp_instructions = x.issued;
  if (out_stats) *out_stats = x.stats;
  return x.st;
}
