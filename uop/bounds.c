/* vmin/vmax: sound value bounds, computed once per node and cached in it (reference _min_max, tinygrad/uop/ops.py, made
 * sound).
 *
 * Integer bounds are exact int64 endpoints for the fixed-width dtypes: the mathematical result range is computed
 * with overflow checks, and if it leaves the dtype's range (the C result would wrap) the node gets the full range.
 * For `index`, INT64_MIN as a lower bound and INT64_MAX as an upper bound mean "unbounded"; any op whose result
 * depends on an unbounded endpoint, or that overflows int64, is unbounded. uint64 is handled in the int64 domain
 * while its values provably stay below 2^63, and gets its full range [0, UINT64_MAX] otherwise.
 * The computation is iterative (explicit stack), so 100,000-deep chains do not recurse.
 */
#include <math.h>

#include "uop/uop.h"
#include "uop/uop_internal.h"

typedef struct ib { int64_t lo, hi; } ib;

static bool is_intlike(uop_dtype dt) {
  return dt.scalar == UOP_INDEX || dt.scalar == UOP_BOOL || uop_dt_is_int(dt); /* index first: the common case */
}
static bool is_index(uop_dtype dt) { return dt.scalar == UOP_INDEX; }

static ib full_range(uop_dtype dt) {
  if (dt.scalar == UOP_BOOL) return (ib){0, 1};
  if (dt.scalar == UOP_INDEX && dt.addrspace == UOP_AS_NONE) return (ib){INT64_MIN, INT64_MAX};
  if (uop_dt_is_ptr(dt) || !uop_dt_is_int(dt)) return (ib){INT64_MIN, INT64_MAX};
  return (ib){uop_dt_min(dt), uop_dt_max(dt)};
}

/* Bounds of a source in the int64 value domain; ok=false if it cannot be represented there (uint64 >= 2^63). */
static bool src_ib(const uop *s, ib *out) {
  *out = (ib){s->vmin_, s->vmax_};
  if (!is_intlike(s->dtype) || s->dtype.addrspace != UOP_AS_NONE) return false;
  if (s->dtype.scalar == UOP_UINT64 && (out->lo < 0 || out->hi < 0)) return false;
  return true;
}

/* An endpoint that stands for infinity (index only). */
static bool has_inf(const uop *s, ib b) { return is_index(s->dtype) && (b.lo == INT64_MIN || b.hi == INT64_MAX); }

/* Fit a mathematical range into dtype dt: full range if it would wrap. */
static ib fit(uop_dtype dt, ib r) {
  if (dt.scalar == UOP_BOOL) {
    if (r.lo > 0 || r.hi < 0) return (ib){1, 1};
    if (r.lo == 0 && r.hi == 0) return (ib){0, 0};
    return (ib){0, 1};
  }
  if (is_index(dt)) {
    if (r.lo == INT64_MAX) r.lo = INT64_MAX - 1; /* keep "lo == MAX" and "hi == MIN" from reading as infinities */
    if (r.hi == INT64_MIN) r.hi = INT64_MIN + 1;
    return r;
  }
  if (dt.scalar == UOP_UINT64) return r.lo >= 0 ? r : full_range(dt);
  ib f = full_range(dt);
  if (r.lo < f.lo || r.hi > f.hi) return f;
  return r;
}

static int64_t min4(int64_t a, int64_t b, int64_t c, int64_t d) {
  int64_t m = a < b ? a : b, n = c < d ? c : d;
  return m < n ? m : n;
}
static int64_t max4(int64_t a, int64_t b, int64_t c, int64_t d) {
  int64_t m = a > b ? a : b, n = c > d ? c : d;
  return m > n ? m : n;
}

static bool mul_range(ib a, ib b, ib *r) {
  int64_t p[4];
  if (__builtin_mul_overflow(a.lo, b.lo, &p[0]) || __builtin_mul_overflow(a.lo, b.hi, &p[1]) ||
      __builtin_mul_overflow(a.hi, b.lo, &p[2]) || __builtin_mul_overflow(a.hi, b.hi, &p[3]))
    return false;
  *r = (ib){min4(p[0], p[1], p[2], p[3]), max4(p[0], p[1], p[2], p[3])};
  return true;
}

/* Smallest 2^k - 1 >= v, for v >= 0. */
static int64_t ones_cover(int64_t v) {
  uint64_t m = 0;
  while (m < (uint64_t)v) m = (m << 1) | 1;
  return (int64_t)m;
}

/* C truncating division of exact int64 values, with b != 0 and no INT64_MIN / -1. */
static int64_t cdiv(int64_t a, int64_t b) { return a / b; }

/* Mathematical result range of a binary op on exact int64 ranges; false = unknown. `a_inf`/`b_inf` say whether
 * an endpoint is an index infinity (only ops that stay bounded then may succeed). `bits` is the shift width. */
static bool binop(uop_op op, ib a, ib b, bool a_inf, bool b_inf, int bits, bool boolean, ib *r) {
  bool any_inf = a_inf || b_inf;
  switch (op) {
  case UOP_ADD:
    if (any_inf) return false;
    if (boolean) { *r = (ib){a.lo || b.lo, a.hi || b.hi}; return true; } /* bool + is OR */
    return !__builtin_add_overflow(a.lo, b.lo, &r->lo) && !__builtin_add_overflow(a.hi, b.hi, &r->hi);
  case UOP_SUB:
    if (any_inf) return false;
    return !__builtin_sub_overflow(a.lo, b.hi, &r->lo) && !__builtin_sub_overflow(a.hi, b.lo, &r->hi);
  case UOP_MUL:
    if (any_inf) return false;
    if (boolean) { *r = (ib){a.lo && b.lo, a.hi && b.hi}; return true; }
    return mul_range(a, b, r);
  case UOP_MAX:
    *r = (ib){a.lo > b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi}; /* infinities order correctly */
    return true;
  case UOP_CMPLT: *r = (ib){a.hi < b.lo, a.lo < b.hi}; return true;
  case UOP_CMPNE:
  case UOP_CMPEQ: {
    bool never_eq = a.hi < b.lo || b.hi < a.lo;
    bool always_eq = a.lo == a.hi && b.lo == b.hi && a.lo == b.lo && !any_inf;
    *r = op == UOP_CMPNE ? (ib){never_eq, !always_eq} : (ib){always_eq, !never_eq};
    return true;
  }
  case UOP_AND:
    if (boolean) { *r = (ib){a.lo && b.lo, a.hi && b.hi}; return true; }
    /* x & y with y >= 0 lies in [0, y] (a bit subset of y); with both >= 0 also <= x */
    if (a.lo >= 0 && b.lo >= 0) { *r = (ib){0, a.hi < b.hi ? a.hi : b.hi}; return true; }
    if (b.lo >= 0 && !b_inf) { *r = (ib){0, b.hi}; return true; }
    if (a.lo >= 0 && !a_inf) { *r = (ib){0, a.hi}; return true; }
    return false;
  case UOP_OR:
    if (boolean) { *r = (ib){a.lo || b.lo, a.hi || b.hi}; return true; }
    if (any_inf || a.lo < 0 || b.lo < 0) return false;
    *r = (ib){a.lo > b.lo ? a.lo : b.lo, ones_cover(a.hi > b.hi ? a.hi : b.hi)};
    return true;
  case UOP_XOR:
    if (boolean) {
      if (a.lo == a.hi && b.lo == b.hi) { *r = (ib){a.lo != b.lo, a.lo != b.lo}; return true; }
      *r = (ib){0, 1};
      return true;
    }
    if (any_inf || a.lo < 0 || b.lo < 0) return false;
    *r = (ib){0, ones_cover(a.hi > b.hi ? a.hi : b.hi)};
    return true;
  case UOP_SHL:
    /* a << s == a * 2^s (with wrap detected by the caller's fit); s must be a valid shift amount */
    if (any_inf || b.lo < 0 || b.hi >= bits || b.hi >= 63) return false;
    return mul_range(a, (ib){(int64_t)1 << b.lo, (int64_t)1 << b.hi}, r);
  case UOP_SHR:
    if (a_inf || b_inf || b.lo < 0 || b.hi >= bits || b.hi >= 64) return false;
    /* arithmetic shift is floor division by 2^s: monotone in a, and in s towards 0 / -1 */
    r->lo = a.lo >= 0 ? a.lo >> b.hi : a.lo >> b.lo;
    r->hi = a.hi >= 0 ? a.hi >> b.lo : a.hi >> b.hi;
    return true;
  case UOP_IDIV: {
    if (any_inf || (b.lo <= 0 && b.hi >= 0)) return false; /* divisor range contains 0 */
    if (a.lo == INT64_MIN && b.lo <= -1 && b.hi >= -1) return false; /* INT64_MIN / -1 overflows */
    /* truncating division is monotone in each argument on a sign-fixed divisor: extremes at the corners */
    int64_t q0 = cdiv(a.lo, b.lo), q1 = cdiv(a.lo, b.hi), q2 = cdiv(a.hi, b.lo), q3 = cdiv(a.hi, b.hi);
    *r = (ib){min4(q0, q1, q2, q3), max4(q0, q1, q2, q3)};
    return true;
  }
  case UOP_MOD: {
    if (b_inf || (b.lo <= 0 && b.hi >= 0)) return false;
    /* C: the result has the sign of a, |r| < |b| and |r| <= |a| */
    int64_t m = b.lo > 0 ? b.hi - 1 : -(b.lo + 1); /* max |b| - 1, no overflow */
    if (a.lo >= 0 && !a_inf) {
      bool below = b.lo > 0 ? a.hi < b.lo : a.hi + b.hi < 0; /* a < min |b|: a % b == a */
      if (below) { *r = a; return true; }
      *r = (ib){0, a.hi < m ? a.hi : m};
      return true;
    }
    if (a.lo >= 0) { *r = (ib){0, m}; return true; }
    if (a.hi <= 0) { *r = (ib){a.lo > -m ? a.lo : -m, 0}; return true; }
    *r = (ib){a.lo > -m ? a.lo : -m, a.hi < m ? a.hi : m};
    return true;
  }
  default: return false;
  }
}

static void set_bounds(uop *n, ib r) {
  n->vmin_ = r.lo;
  n->vmax_ = r.hi;
}

static void compute_float(uop *n) {
  n->fmin_ = -INFINITY;
  n->fmax_ = INFINITY;
  n->vmin_ = INT64_MIN;
  n->vmax_ = INT64_MAX;
  switch (n->op) {
  case UOP_CONST:
    if (n->arg.kind == UOP_ARG_FLOAT && !isnan(n->arg.f)) n->fmin_ = n->fmax_ = n->arg.f;
    break;
  case UOP_CAST: {
    const uop *s = n->src[0];
    if (!is_intlike(s->dtype) || uop_dt_is_ptr(s->dtype) || (s->dtype.scalar == UOP_UINT64 && (s->vmin_ < 0 || s->vmax_ < 0)))
      break;
    if (is_index(s->dtype) && (s->vmin_ == INT64_MIN || s->vmax_ == INT64_MAX)) break;
    double lo = (double)s->vmin_, hi = (double)s->vmax_;
    /* exact in the target format only if small enough; int->float rounding is monotone, so widen by the target's
     * rounding otherwise: float32/64 round to nearest, which the double conversion already over-approximates */
    int mant = n->dtype.scalar == UOP_FLOAT16 ? 11 : n->dtype.scalar == UOP_BFLOAT16 ? 8 :
               n->dtype.scalar == UOP_FLOAT32 ? 24 : 53;
    double lim = ldexp(1.0, mant);
    if (fabs(lo) <= lim && fabs(hi) <= lim) {
      n->fmin_ = lo;
      n->fmax_ = hi;
    }
    break;
  }
  case UOP_WHERE: {
    const uop *t = n->src[1], *f = n->src[2];
    n->fmin_ = fmin(t->fmin_, f->fmin_);
    n->fmax_ = fmax(t->fmax_, f->fmax_);
    break;
  }
  case UOP_GEP: n->fmin_ = n->src[0]->fmin_; n->fmax_ = n->src[0]->fmax_; break;
  case UOP_VECTORIZE:
    n->fmin_ = INFINITY;
    n->fmax_ = -INFINITY;
    for (uint32_t i = 0; i < n->nsrc; i++) {
      n->fmin_ = fmin(n->fmin_, n->src[i]->fmin_);
      n->fmax_ = fmax(n->fmax_, n->src[i]->fmax_);
    }
    if (!n->nsrc) { n->fmin_ = -INFINITY; n->fmax_ = INFINITY; }
    break;
  default: break;
  }
  if (isnan(n->fmin_) || isnan(n->fmax_)) { n->fmin_ = -INFINITY; n->fmax_ = INFINITY; }
}

/* Compute n's bounds, all its sources being done. */
static void compute_one(uop *n) {
  uop_dtype dt = n->dtype;
  if (dt.scalar != UOP_INDEX && uop_dt_is_float(dt) && dt.addrspace == UOP_AS_NONE) {
    compute_float(n);
    return;
  }
  ib full = full_range(dt);
  set_bounds(n, full);
  n->fmin_ = -INFINITY;
  n->fmax_ = INFINITY;
  if (!is_intlike(dt) || dt.addrspace != UOP_AS_NONE) return;
  ib a, b, r;
  switch (n->op) {
  case UOP_CONST:
    if (n->arg.kind == UOP_ARG_INT) {
      int64_t v = uop_wrap_to(dt, n->arg.i);
      set_bounds(n, dt.scalar == UOP_UINT64 ? (ib){v, v} : fit(dt, (ib){v, v}));
    }
    break;
  case UOP_VCONST:
    if (n->arg.kind == UOP_ARG_INTS && n->arg.n > 0 && dt.scalar != UOP_UINT64) {
      r = (ib){INT64_MAX, INT64_MIN};
      for (uint32_t i = 0; i < n->arg.n; i++) {
        int64_t v = uop_wrap_to(dt, n->arg.ints[i]);
        if (v < r.lo) r.lo = v;
        if (v > r.hi) r.hi = v;
      }
      set_bounds(n, fit(dt, r));
    }
    break;
  case UOP_DEFINE_VAR:
    if (n->arg.kind == UOP_ARG_VAR && n->arg.i <= n->arg.i2) {
      r = (ib){n->arg.i, n->arg.i2};
      if (dt.scalar == UOP_UINT64) {
        if (r.lo >= 0) set_bounds(n, r);
      } else if (is_index(dt)) {
        set_bounds(n, fit(dt, r));
      } else { /* the variable holds a value of its dtype: intersect */
        if (r.lo < full.lo) r.lo = full.lo;
        if (r.hi > full.hi) r.hi = full.hi;
        if (r.lo <= r.hi) set_bounds(n, r);
      }
    }
    break;
  case UOP_RANGE:
  case UOP_SPECIAL: {
    int64_t hi = full.hi;
    if (n->nsrc >= 1 && src_ib(n->src[0], &a) && !(is_index(n->src[0]->dtype) && a.hi == INT64_MAX))
      hi = a.hi > 0 ? a.hi - 1 : 0;
    if (hi < 0) hi = 0; /* an empty loop's counter never exists; keep a valid range */
    set_bounds(n, fit(dt, (ib){0, hi}));
    break;
  }
  case UOP_GEP:
  case UOP_UNROLL:
  case UOP_CONTRACT:
    if (n->nsrc >= 1 && is_intlike(n->src[0]->dtype)) set_bounds(n, (ib){n->src[0]->vmin_, n->src[0]->vmax_});
    break;
  case UOP_VECTORIZE:
    if (!n->nsrc) break;
    r = (ib){INT64_MAX, INT64_MIN};
    for (uint32_t i = 0; i < n->nsrc; i++) {
      if (!src_ib(n->src[i], &a) || n->src[i]->dtype.scalar != dt.scalar) return;
      if (a.lo < r.lo) r.lo = a.lo;
      if (a.hi > r.hi) r.hi = a.hi;
    }
    set_bounds(n, r);
    break;
  case UOP_WHERE: {
    if (n->nsrc != 3) break;
    const uop *c = n->src[0];
    bool t_ok = src_ib(n->src[1], &a), f_ok = src_ib(n->src[2], &b);
    if (uop_dt_is_bool(c->dtype) && c->vmin_ == 1 && t_ok) { set_bounds(n, a); break; }
    if (uop_dt_is_bool(c->dtype) && c->vmax_ == 0 && f_ok) { set_bounds(n, b); break; }
    if (t_ok && f_ok) set_bounds(n, (ib){a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi});
    break;
  }
  case UOP_CAST: {
    const uop *s = n->src[0];
    if (uop_dt_is_float(s->dtype)) { /* float -> int truncates; out-of-range is undefined: keep full range */
      double lo = trunc(s->fmin_), hi = trunc(s->fmax_);
      if (dt.scalar == UOP_BOOL) {
        if (s->fmin_ > 0 || s->fmax_ < 0) set_bounds(n, (ib){1, 1});
        else if (s->fmin_ == 0 && s->fmax_ == 0) set_bounds(n, (ib){0, 0});
        break;
      }
      if (isfinite(lo) && isfinite(hi) && lo >= (double)full.lo && hi <= (double)full.hi && lo > -9.2e18 && hi < 9.2e18 &&
          dt.scalar != UOP_UINT64)
        set_bounds(n, (ib){(int64_t)lo, (int64_t)hi});
      break;
    }
    if (!src_ib(s, &a)) break;
    if (has_inf(s, a)) { /* unbounded source: only a cast to index keeps it */
      if (is_index(dt)) set_bounds(n, a);
      else if (dt.scalar == UOP_BOOL) set_bounds(n, fit(dt, a));
      break;
    }
    set_bounds(n, fit(dt, a)); /* value-preserving when it fits, else the full range (a wrapping conversion) */
    break;
  }
  case UOP_BITCAST: break;
  case UOP_TRUNC:
    if (src_ib(n->src[0], &a)) set_bounds(n, a);
    break;
  case UOP_NEG:
    if (src_ib(n->src[0], &a) && !has_inf(n->src[0], a) && a.lo != INT64_MIN) set_bounds(n, fit(dt, (ib){-a.hi, -a.lo}));
    break;
  case UOP_MULACC:
    if (n->nsrc == 3 && src_ib(n->src[0], &a) && src_ib(n->src[1], &b) && src_ib(n->src[2], &r)) {
      ib p, s;
      if (has_inf(n->src[0], a) || has_inf(n->src[1], b) || has_inf(n->src[2], r)) break;
      if (!mul_range(a, b, &p)) break;
      p = fit(dt, p); /* the product wraps on its own in C */
      if (__builtin_add_overflow(p.lo, r.lo, &s.lo) || __builtin_add_overflow(p.hi, r.hi, &s.hi)) break;
      set_bounds(n, fit(dt, s));
    }
    break;
  default:
    if (uop_op_alu_arity((uop_op)n->op) == 2 && n->nsrc == 2) {
      const uop *x = n->src[0], *y = n->src[1];
      if (!src_ib(x, &a) || !src_ib(y, &b)) break; /* float operands (NaN may appear): full range */
      int bits = uop_dt_bits(x->dtype);
      bool boolean = dt.scalar == UOP_BOOL && uop_dt_is_bool(x->dtype);
      if (binop((uop_op)n->op, a, b, has_inf(x, a), has_inf(y, b), bits, boolean, &r)) set_bounds(n, fit(dt, r));
    }
    break;
  }
}

static void ensure(const uop *root) {
  if (root->bounds_done) return;
  /* Common case (nodes are built bottom-up and asked for right away): the sources are done, no stack needed. */
  uint32_t k = 0;
  while (k < root->nsrc && root->src[k]->bounds_done) k++;
  if (k == root->nsrc) {
    compute_one((uop *)root);
    ((uop *)root)->bounds_done = 1;
    return;
  }
  base_vec stack = {0};
  if (!base_vec_push(&stack, (uintptr_t)root)) goto oom;
  while (stack.n) {
    uop *n = (uop *)stack.v[stack.n - 1];
    if (n->bounds_done) {
      stack.n--;
      continue;
    }
    bool ready = true;
    for (uint32_t i = 0; i < n->nsrc; i++) {
      if (!n->src[i]->bounds_done) {
        ready = false;
        if (!base_vec_push(&stack, (uintptr_t)n->src[i])) goto oom;
      }
    }
    if (!ready) continue;
    compute_one(n);
    n->bounds_done = 1;
    stack.n--;
  }
  base_vec_free(&stack);
  return;
oom: /* cannot allocate the stack: mark the root with its full range (sound, not cached as precise) */
  base_vec_free(&stack);
  {
    uop *n = (uop *)root;
    ib f = full_range(n->dtype);
    set_bounds(n, f);
    n->fmin_ = -INFINITY;
    n->fmax_ = INFINITY;
    n->bounds_done = 1;
  }
}

int64_t uop_vmin(const uop *n) { ensure(n); return n->vmin_; }
int64_t uop_vmax(const uop *n) { ensure(n); return n->vmax_; }

double uop_fmin(const uop *n) {
  ensure(n);
  if (uop_dt_is_float(n->dtype)) return n->fmin_;
  if (n->dtype.scalar == UOP_UINT64) return (double)(uint64_t)n->vmin_;
  if (is_index(n->dtype) && n->vmin_ == INT64_MIN) return -INFINITY;
  return (double)n->vmin_;
}

double uop_fmax(const uop *n) {
  ensure(n);
  if (uop_dt_is_float(n->dtype)) return n->fmax_;
  if (n->dtype.scalar == UOP_UINT64) return (double)(uint64_t)n->vmax_;
  if (is_index(n->dtype) && n->vmax_ == INT64_MAX) return INFINITY;
  return (double)n->vmax_;
}
