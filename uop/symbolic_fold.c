/* symbolic families: constant folding (wrapping to the dtype width), folding by bounds (vmin == vmax), self and zero
 * folding, commutative operand order, boolean algebra, WHERE (incl. merging two WHEREs on one condition), MAX and
 * cast folding (incl. (T)x op (T)y -> (T)(x op y) when nothing wraps). */
#include "uop/symbolic_rules.h"

static bool scalar_intlike(const uop *n) {
  return !uop_dt_is_ptr(n->dtype) && n->dtype.count <= 1 && (uop_dt_is_int(n->dtype) || uop_dt_is_bool(n->dtype));
}

static bool is_const_val(const uop *n, int64_t v) {
  int64_t c;
  return n->op == UOP_CONST && uop_const_value(n, &c) && c == v;
}

/* All-ones of an int dtype, as its stored value (-1 signed, the max for unsigned). */
static int64_t all_ones(uop_dtype dt) { return uop_dt_is_unsigned(dt) ? uop_dt_max(dt) : -1; }

static const uop *mk_const(uop_ctx *ctx, uop_dtype dt, int64_t v) {
  if (uop_dt_is_bool(dt)) return uop_const_bool(ctx, v != 0);
  return uop_const_int(ctx, dt, v);
}

/* ------------------------------------------------------------------------------------------------ const folding */

/* Evaluate op on constant operands of dtype `dt` (the operands' dtype). false if not foldable (division by zero,
 * shift out of range, INT64_MIN / -1). The result is wrapped by the constant constructor. */
static bool fold_eval(uop_op op, uop_dtype dt, const int64_t *v, int64_t *out) {
  bool uns = uop_dt_is_unsigned(dt);
  uint64_t ua = (uint64_t)v[0], ub = (uint64_t)v[1];
  int64_t a = v[0], b = v[1];
  int bits = uop_dt_bits(dt);
  switch (op) {
  case UOP_ADD: *out = (int64_t)(ua + ub); return true;
  case UOP_SUB: *out = (int64_t)(ua - ub); return true;
  case UOP_MUL: *out = (int64_t)(ua * ub); return true;
  case UOP_NEG: *out = (int64_t)(0 - ua); return true;
  case UOP_IDIV:
  case UOP_MOD:
    if (b == 0) return false;
    if (uns) {
      *out = (int64_t)(op == UOP_IDIV ? ua / ub : ua % ub);
      return true;
    }
    if (a == INT64_MIN && b == -1) return false;
    *out = op == UOP_IDIV ? a / b : a % b;
    return true;
  case UOP_MAX: *out = uns ? (int64_t)(ua > ub ? ua : ub) : (a > b ? a : b); return true;
  case UOP_CMPLT: *out = uns ? ua < ub : a < b; return true;
  case UOP_CMPNE: *out = a != b; return true;
  case UOP_CMPEQ: *out = a == b; return true;
  case UOP_AND: *out = a & b; return true;
  case UOP_OR: *out = a | b; return true;
  case UOP_XOR: *out = a ^ b; return true;
  case UOP_SHL:
    if (b < 0 || b >= bits) return false;
    *out = (int64_t)(ua << b);
    return true;
  case UOP_SHR:
    if (b < 0 || b >= bits) return false;
    *out = uns ? (int64_t)(ua >> b) : a >> b; /* arithmetic shift for signed (gcc/clang semantics) */
    return true;
  case UOP_WHERE: *out = a ? v[1] : v[2]; return true;
  default: return false;
  }
}

static const uop *r_const_fold(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  if (!uop_op_is_alu(n->op) || n->nsrc == 0 || n->nsrc > 3 || !scalar_intlike(n)) return NULL;
  int64_t v[3] = {0, 0, 0};
  for (uint32_t i = 0; i < n->nsrc; i++)
    if (n->src[i]->op != UOP_CONST || !uop_const_value(n->src[i], &v[i])) return NULL;
  if (n->op != UOP_WHERE && !scalar_intlike(n->src[0])) return NULL;
  int64_t r;
  if (!fold_eval((uop_op)n->op, n->op == UOP_WHERE ? n->dtype : n->src[0]->dtype, v, &r)) return NULL;
  return mk_const(rc->uctx, n->dtype, r);
}

/* Any node whose bounds pin one value is that constant (this folds a >= 3 to true when a is in [3, 8]). */
static const uop *r_bounds_fold(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  if (!scalar_intlike(n)) return NULL;
  if (!uop_op_is_alu(n->op) && n->op != UOP_DEFINE_VAR && n->op != UOP_RANGE && n->op != UOP_SPECIAL &&
      n->op != UOP_CAST)
    return NULL;
  int64_t lo = uop_vmin(n), hi = uop_vmax(n);
  if (lo != hi) return NULL;
  return mk_const(rc->uctx, n->dtype, lo);
}

/* ------------------------------------------------------------------------------------------------ self folding */

static const uop *r_x(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)rc;
  (void)n;
  return uop_b(b, "x");
}

static const uop *r_zero(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  if (!scalar_intlike(n)) return NULL;
  return mk_const(rc->uctx, n->dtype, 0);
}

/* x != x is false only when x cannot be NaN: integers, index and bool, never floats. */
static const uop *r_ne_self(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  if (!scalar_intlike(n) || !scalar_intlike(n->src[0])) return NULL;
  return mk_const(rc->uctx, n->dtype, 0);
}

static const uop *r_one(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  if (!scalar_intlike(n)) return NULL;
  return mk_const(rc->uctx, n->dtype, 1);
}

/* x // -1 -> -x on signed/index. */
static const uop *r_div_neg1(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  const uop *x = uop_b(b, "x");
  if (uop_dt_is_unsigned(n->dtype) || !scalar_intlike(n)) return NULL;
  return uop_alu2(rc->uctx, UOP_MUL, x, uop_const_int(rc->uctx, n->dtype, -1));
}

/* x & all-ones -> x (ints). */
static const uop *r_and_ones(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)rc;
  const uop *c = uop_b(b, "c");
  int64_t v;
  if (sym_is_bool(n) || !uop_const_value(c, &v) || v != all_ones(n->dtype)) return NULL;
  return uop_b(b, "x");
}

/* Non-index int chains: (x op c1) op c2 -> x op (c1 op c2) for ADD MUL AND OR XOR MAX (wrapping ring ops); MAX on
 * index too. */
static const uop *r_assoc_const(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  const uop *inner = uop_b(b, "inner"), *c1 = uop_b(b, "c1"), *c2 = uop_b(b, "c2");
  /* index ADD/MUL chains have their own normalizers; index MAX has none */
  if (inner->op != n->op || (sym_is_index(n) && n->op != UOP_MAX) || sym_is_bool(n) || !scalar_intlike(n)) return NULL;
  int64_t v[2], r;
  if (!uop_const_value(c1, &v[0]) || !uop_const_value(c2, &v[1])) return NULL;
  if (!fold_eval((uop_op)n->op, n->dtype, v, &r)) return NULL;
  return uop_alu2(rc->uctx, (uop_op)n->op, uop_b(b, "x"), uop_const_int(rc->uctx, n->dtype, r));
}

/* Commutative binary ops on non-index ints and index/bool comparisons: operands in structural order (constants
 * last). Index ADD/MUL and bool AND/OR chains are ordered by their own normalizers. */
static const uop *r_commute(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  if (n->nsrc != 2 || !uop_op_is_commutative((uop_op)n->op) || !scalar_intlike(n->src[0])) return NULL;
  if ((n->op == UOP_ADD || n->op == UOP_MUL) && sym_is_index(n)) return NULL;
  if ((n->op == UOP_AND || n->op == UOP_OR) && sym_is_bool(n)) return NULL;
  if (uop_struct_cmp(n->src[1], n->src[0]) >= 0) return NULL;
  const uop *s[2] = {n->src[1], n->src[0]};
  return uop_replace_src(rc->uctx, n, s, 2);
}

/* ------------------------------------------------------------------------------------------------ bool algebra */

/* On bools: a*b -> a&b, a+b -> a|b, max(a,b) -> a|b. */
static const uop *r_bool_arith(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  if (!sym_is_bool(n) || n->nsrc != 2) return NULL;
  return uop_alu2(rc->uctx, n->op == UOP_MUL ? UOP_AND : UOP_OR, n->src[0], n->src[1]);
}

/* Flatten a bool AND/OR chain, drop identities, fold absorbing constants, complements and duplicates, absorb
 * x | (x & y) -> x (and dually), sort, rebuild left-associated. */
#define SYM_MAX_CLAUSES 64
static int clause_collect(const uop *n, uop_op op, const uop **out, int max) {
  const uop *stack[SYM_MAX_CLAUSES * 2];
  int sp = 0, cnt = 0;
  stack[sp++] = n;
  while (sp) {
    const uop *u = stack[--sp];
    if (u->op == op && sym_is_bool(u) && u->nsrc == 2) {
      if (sp + 2 > (int)(sizeof stack / sizeof *stack)) return -1;
      stack[sp++] = u->src[1];
      stack[sp++] = u->src[0];
      continue;
    }
    if (cnt == max) return -1;
    out[cnt++] = u;
  }
  return cnt;
}

static bool clause_has(const uop *chain, uop_op op, const uop *c) {
  const uop *cl[SYM_MAX_CLAUSES];
  int n = clause_collect(chain, op, cl, SYM_MAX_CLAUSES);
  for (int i = 0; i < n; i++)
    if (cl[i] == c) return true;
  return false;
}

static const uop *r_bool_chain(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  if (!sym_is_bool(n) || n->nsrc != 2) return NULL;
  uop_op op = (uop_op)n->op, dual = op == UOP_AND ? UOP_OR : UOP_AND;
  bool absorb_val = op == UOP_OR; /* x | true = true, x & false = false */
  const uop *cl[SYM_MAX_CLAUSES];
  int cnt = clause_collect(n, op, cl, SYM_MAX_CLAUSES);
  if (cnt < 0) return NULL;
  const uop *keep[SYM_MAX_CLAUSES];
  int nk = 0;
  for (int i = 0; i < cnt; i++) {
    const uop *c = cl[i];
    int64_t v;
    if (c->op == UOP_CONST && uop_const_value(c, &v)) {
      if ((v != 0) == absorb_val) return uop_const_bool(rc->uctx, absorb_val);
      continue; /* identity */
    }
    bool dup = false;
    for (int j = 0; j < nk; j++) dup |= keep[j] == c;
    if (!dup) keep[nk++] = c;
  }
  /* complements: x op !x */
  for (int i = 0; i < nk; i++) {
    const uop *c = keep[i];
    if (c->op == UOP_CMPNE && sym_is_bool(c->src[0]) && is_const_val(c->src[1], 1))
      for (int j = 0; j < nk; j++)
        if (keep[j] == c->src[0]) return uop_const_bool(rc->uctx, absorb_val);
  }
  /* absorption: a clause that is a dual chain containing another kept clause is implied / redundant */
  int w = 0;
  for (int i = 0; i < nk; i++) {
    bool drop = false;
    if (keep[i]->op == dual)
      for (int j = 0; j < nk && !drop; j++)
        if (j != i && keep[j]->op != dual && clause_has(keep[i], dual, keep[j])) drop = true;
    if (!drop) keep[w++] = keep[i];
  }
  nk = w;
  if (nk == 0) return uop_const_bool(rc->uctx, !absorb_val);
  for (int i = 1; i < nk; i++)
    for (int j = i; j > 0 && uop_struct_cmp(keep[j - 1], keep[j]) > 0; j--) {
      const uop *t = keep[j];
      keep[j] = keep[j - 1];
      keep[j - 1] = t;
    }
  const uop *acc = keep[0];
  for (int i = 1; i < nk; i++) acc = uop_alu2(rc->uctx, op, acc, keep[i]);
  return acc;
}

/* bool != const: x != false -> x; x != true stays as the canonical NOT; !!x -> x. */
static const uop *r_bool_ne(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)n;
  const uop *x = uop_b(b, "x");
  int64_t v;
  if (!sym_is_bool(x) || !uop_const_value(uop_b(b, "c"), &v)) return NULL;
  if (v == 0) return x;
  if (x->op == UOP_CMPNE && sym_is_bool(x->src[0]) && is_const_val(x->src[1], 1)) return x->src[0];
  (void)rc;
  return NULL;
}

/* bool ^ const: x ^ false -> x, x ^ true -> !x; bool a ^ b -> a != b. */
static const uop *r_bool_xor(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  if (!sym_is_bool(n)) return NULL;
  return uop_alu2(rc->uctx, UOP_CMPNE, n->src[0], n->src[1]);
}

/* ------------------------------------------------------------------------------------------------ WHERE */

static const uop *r_where_const(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)rc;
  (void)n;
  int64_t v;
  if (!uop_const_value(uop_b(b, "c"), &v)) return NULL;
  return v ? uop_b(b, "t") : uop_b(b, "f");
}

static const uop *r_where_not(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)n;
  if (!sym_is_bool(uop_b(b, "c"))) return NULL;
  return uop_where(rc->uctx, uop_b(b, "c"), uop_b(b, "f"), uop_b(b, "t"));
}

static const uop *r_where_bool(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  int64_t t, f;
  if (!sym_is_bool(n) || !uop_const_value(uop_b(b, "t"), &t) || !uop_const_value(uop_b(b, "f"), &f)) return NULL;
  if (t && !f) return uop_b(b, "c");
  if (!t && f) return sym_not(rc->uctx, uop_b(b, "c"));
  return NULL;
}

static const uop *r_where_nest_f(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)n;
  uop_ctx *ctx = rc->uctx;
  return uop_where(ctx, uop_alu2(ctx, UOP_AND, uop_b(b, "a"), uop_b(b, "c")), uop_b(b, "x"), uop_b(b, "y"));
}

static const uop *r_where_nest_t(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)n;
  uop_ctx *ctx = rc->uctx;
  return uop_where(ctx, uop_alu2(ctx, UOP_OR, uop_b(b, "a"), uop_b(b, "c")), uop_b(b, "x"), uop_b(b, "y"));
}

/* op(where(c, t, f), where(c, tt, ff)) -> where(c, op(t, tt), op(f, ff)) when one pair of arms is two constants (it
 * folds, so the ALU count does not grow). Index ADD chains do the same in the sum normalizer. */
static const uop *r_where_merge(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  uop_ctx *ctx = rc->uctx;
  const uop *w1 = uop_b(b, "w1"), *w2 = uop_b(b, "w2");
  if (!scalar_intlike(n) || sym_is_bool(n) || (sym_is_index(n) && n->op != UOP_MAX)) return NULL;
  if (!((w1->src[1]->op == UOP_CONST && w2->src[1]->op == UOP_CONST) ||
        (w1->src[2]->op == UOP_CONST && w2->src[2]->op == UOP_CONST)))
    return NULL;
  return uop_where(ctx, w1->src[0], uop_alu2(ctx, (uop_op)n->op, w1->src[1], w2->src[1]),
                   uop_alu2(ctx, (uop_op)n->op, w1->src[2], w2->src[2]));
}

/* ------------------------------------------------------------------------------------------------ MAX */

static const uop *r_max_bounds(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)rc;
  const uop *x = n->src[0], *y = n->src[1];
  (void)b;
  if (!scalar_intlike(n) || sym_is_bool(n) || n->dtype.scalar == UOP_UINT64) return NULL;
  if (uop_vmin(x) >= uop_vmax(y)) return x;
  if (uop_vmax(x) <= uop_vmin(y)) return y;
  return NULL;
}

/* ------------------------------------------------------------------------------------------------ casts */

static const uop *r_cast(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  uop_ctx *ctx = rc->uctx;
  const uop *x = n->src[0];
  if (uop_dt_eq(n->dtype, x->dtype)) return x;
  if (!scalar_intlike(n) || !scalar_intlike(x)) return NULL;
  int64_t v;
  if (x->op == UOP_CONST && uop_const_value(x, &v)) return mk_const(ctx, n->dtype, v);
  if (sym_is_bool(n)) return uop_alu2(ctx, UOP_CMPNE, x, mk_const(ctx, x->dtype, 0));
  if (x->op == UOP_CAST && scalar_intlike(x->src[0])) {
    const uop *y = x->src[0];
    /* y -> a -> b with b == y's dtype and a holding all of b: the round trip is exact */
    if (uop_dt_eq(n->dtype, y->dtype) && uop_dt_can_safe_cast(y->dtype, x->dtype)) return y;
    /* a holds every value of y: the middle cast changes nothing */
    if (uop_dt_can_safe_cast(y->dtype, x->dtype)) return uop_cast(ctx, n->dtype, y);
  }
  if (x->op == UOP_WHERE && (x->src[1]->op == UOP_CONST || x->src[2]->op == UOP_CONST))
    return uop_where(ctx, x->src[0], uop_cast(ctx, n->dtype, x->src[1]), uop_cast(ctx, n->dtype, x->src[2]));
  return NULL;
}

static bool in_dt(uop_dtype dt, int64_t lo, int64_t hi) { return lo >= uop_dt_min(dt) && hi <= uop_dt_max(dt); }

/* (T)x op (T)y -> (T)(x op y) for ADD/MUL on signed ints when x, y and x op y fit both dtypes (no cast and no
 * operation wraps, so both sides are the exact value): the math happens in the operands' dtype, one cast. */
static const uop *r_cast_hoist(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  const uop *x = uop_b(b, "x"), *y = uop_b(b, "y");
  uop_dtype t = n->dtype, s = x->dtype;
  if (!scalar_intlike(n) || sym_is_bool(n) || sym_is_index(n) || uop_dt_is_unsigned(t) || !uop_dt_eq(s, y->dtype) ||
      !scalar_intlike(x) || sym_is_bool(x) || uop_dt_is_unsigned(s))
    return NULL;
  int64_t xl, xh, yl, yh, lo, hi;
  if (!sym_bounds(x, &xl, &xh) || !sym_bounds(y, &yl, &yh)) return NULL;
  if (n->op == UOP_ADD) {
    lo = xl + yl; /* bounds are within 2^61: no overflow */
    hi = xh + yh;
  } else {
    int64_t p[4];
    if (__builtin_mul_overflow(xl, yl, &p[0]) || __builtin_mul_overflow(xl, yh, &p[1]) ||
        __builtin_mul_overflow(xh, yl, &p[2]) || __builtin_mul_overflow(xh, yh, &p[3]))
      return NULL;
    lo = hi = p[0];
    for (int i = 1; i < 4; i++) {
      lo = p[i] < lo ? p[i] : lo;
      hi = p[i] > hi ? p[i] : hi;
    }
  }
  if (!in_dt(t, xl, xh) || !in_dt(t, yl, yh) || !in_dt(t, lo, hi) || !in_dt(s, lo, hi)) return NULL;
  return uop_cast(rc->uctx, t, uop_alu2(rc->uctx, (uop_op)n->op, x, y));
}

const uop_rule sym_rules_fold[] = {
    {"(*@n)", r_const_fold, "const_fold"},
    {"(*@n)", r_bounds_fold, "bounds_fold"},
    /* self and zero folding */
    {"(ADD:ints~ x 0)", r_x, "x+0"},
    {"(MUL:ints~ x 1)", r_x, "x*1"},
    {"(MUL:ints~ x 0)", r_zero, "x*0"},
    {"(IDIV x 1)", r_x, "x//1"},
    {"(MOD x 1)", r_zero, "x%1"},
    {"(IDIV x -1)", r_div_neg1, "x//-1"},
    {"(MOD:sints|index x -1)", r_zero, "x%-1"},
    {"(IDIV x x)", r_one, "x//x"},
    {"(MOD x x)", r_zero, "x%x"},
    {"(MOD (MOD@x _ y) y)", r_x, "(x%y)%y"},
    {"(IDIV:index (MUL~ x y) y)", r_x, "(x*y)//y"},
    {"(CMPLT x x)", r_zero, "x<x"},
    {"(CMPNE:bool x x)", r_ne_self, "x!=x"},
    {"(XOR x x)", r_zero, "x^x"},
    {"(AND:ints|index x x)", r_x, "x&x"},
    {"(OR:ints|index x x)", r_x, "x|x"},
    {"(MAX x x)", r_x, "max(x,x)"},
    {"(XOR:ints|index~ x 0)", r_x, "x^0"},
    {"(OR:ints|index~ x 0)", r_x, "x|0"},
    {"(AND:ints|index~ x 0)", r_zero, "x&0"},
    {"(AND:ints|index~ x #c)", r_and_ones, "x&ones"},
    {"(SHL x 0)", r_x, "x<<0"},
    {"(SHR x 0)", r_x, "x>>0"},
    {"(ADD|MUL|AND|OR|XOR|MAX (ADD|MUL|AND|OR|XOR|MAX@inner x #c1) #c2)", r_assoc_const, "assoc_const"},
    {"(ADD|MUL|MAX|CMPNE|CMPEQ|XOR|OR|AND@n _ _)", r_commute, "commute"},
    /* bool algebra */
    {"(MUL|ADD|MAX:bool@n _ _)", r_bool_arith, "bool_arith"},
    {"(AND|OR:bool@n _ _)", r_bool_chain, "bool_chain"},
    {"(CMPNE x #c)", r_bool_ne, "bool_ne"},
    {"(XOR:bool@n _ _)", r_bool_xor, "bool_xor"},
    /* where */
    {"(WHERE _ x x)", r_x, "where_same"},
    {"(WHERE #c t f)", r_where_const, "where_const"},
    {"(WHERE (CMPNE c 1) t f)", r_where_not, "where_not"},
    {"(WHERE c #t #f)", r_where_bool, "where_bool"},
    {"(WHERE a (WHERE c x y) y)", r_where_nest_f, "where_nest_f"},
    {"(WHERE a x (WHERE c x y))", r_where_nest_t, "where_nest_t"},
    {"(ADD|MUL|MAX@n (WHERE@w1 c _ _) (WHERE@w2 c _ _))", r_where_merge, "where_merge"},
    /* max */
    {"(MAX@n _ _)", r_max_bounds, "max_bounds"},
    /* casts */
    {"(CAST@n _)", r_cast, "cast"},
    {"(ADD|MUL@n (CAST x) (CAST y))", r_cast_hoist, "cast_hoist"},
};
const size_t sym_rules_fold_count = sizeof sym_rules_fold / sizeof *sym_rules_fold;
