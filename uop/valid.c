/* Gate (valid) simplification (reference tinygrad/uop/symbolic.py): uop_given_valid simplifies an expression under the
 * assumption that a bool gate holds (a bounded expression is replaced by a variable of the narrowed range; a
 * simplex clause X >= 1 is also split into the branches x_i >= 1); uop_simplify_valid drops gate clauses implied by
 * the others. The symbolic rule set uses both: on WHERE (each arm under its condition) and on bool AND chains. */
#include <stdio.h>

#include "uop/symbolic_rules.h"

#define VALID_MAX_CLAUSES 32
#define VALID_MAX_DEPTH 2

static _Thread_local int valid_depth;

int sym_memo_slot(void) { return valid_depth; }

typedef struct vbound {
  const uop *x;
  int64_t lo, hi;
} vbound;

static int split_and(const uop *v, const uop **out, int max) {
  const uop *stack[VALID_MAX_CLAUSES * 2];
  int sp = 0, n = 0;
  stack[sp++] = v;
  while (sp) {
    const uop *u = stack[--sp];
    if (u->op == UOP_AND && sym_is_bool(u) && u->nsrc == 2) {
      if (sp + 2 > (int)(sizeof stack / sizeof *stack)) return -1;
      stack[sp++] = u->src[1];
      stack[sp++] = u->src[0];
      continue;
    }
    if (n == max) return -1;
    out[n++] = u;
  }
  return n;
}

static bool int_operand(const uop *x) {
  return x->op != UOP_CONST && !uop_dt_is_ptr(x->dtype) && x->dtype.count <= 1 && uop_dt_is_int(x->dtype) &&
         !uop_dt_is_unsigned(x->dtype);
}

static bool is_true(const uop *n) { return n->op == UOP_CONST && sym_is_bool(n) && n->arg.i == 1; }

/* A clause as a bound on one expression X. Bool clauses bound themselves (b -> b in [1,1], !b -> b in [0,0]). */
static bool parse_clause(const uop *cl, vbound *out) {
  int64_t c;
  bool neg = false;
  if (cl->op == UOP_CMPNE && is_true(cl->src[1]) && sym_is_bool(cl->src[0])) {
    neg = true;
    cl = cl->src[0];
  }
  if (cl->op == UOP_CMPLT && uop_const_value(cl->src[1], &c) && int_operand(cl->src[0])) {
    const uop *x = cl->src[0];
    *out = neg ? (vbound){x, c, uop_vmax(x)} : (vbound){x, uop_vmin(x), c - 1};
    return c != INT64_MIN && c != INT64_MAX;
  }
  if (cl->op == UOP_CMPLT && uop_const_value(cl->src[0], &c) && int_operand(cl->src[1])) {
    const uop *x = cl->src[1];
    *out = neg ? (vbound){x, uop_vmin(x), c} : (vbound){x, c + 1, uop_vmax(x)};
    return c != INT64_MIN && c != INT64_MAX;
  }
  if (sym_is_bool(cl) && cl->op != UOP_CONST) {
    *out = (vbound){cl, neg ? 0 : 1, neg ? 0 : 1};
    return true;
  }
  return false;
}

static hcq_status subst1(uop_ctx *ctx, const uop *root, const uop *from, const uop *to, const uop **out) {
  return uop_substitute(ctx, root, &from, &to, 1, out);
}

/* Simplex candidates (the reference's uop_given_valid): the gate says X >= 1 with X = c_0*x_0 + c_1*x_1 + ... (all
 * c_i > 0, no constant), so at every point some x_i >= 1 (if all were <= 0, X would be <= 0). If u simplifies to
 * one and the same node N in every branch "x_i in [max(1, vmin), vmax]" (and N differs from u), N equals u wherever
 * the gate holds. Branches that cannot happen (vmax < 1) are skipped. */
static hcq_status simplex_step(uop_ctx *ctx, const uop *x, const uop **cur) {
  sym_sum s;
  if (x->op != UOP_ADD || !sym_is_index(x) || !sym_decompose(x, &s) || s.k != 0 || s.n < 2 || s.n > 8) return HCQ_OK;
  for (int i = 0; i < s.n; i++)
    if (s.t[i].coeff <= 0) return HCQ_OK;
  const uop *same = NULL;
  for (int i = 0; i < s.n; i++) {
    const uop *xi = s.t[i].base, *sub, *simp, *back;
    int64_t lo = uop_vmin(xi) < 1 ? 1 : uop_vmin(xi), hi = uop_vmax(xi);
    if (lo > hi) continue;
    char name[48];
    snprintf(name, sizeof name, "simplex.%d.%d", valid_depth, i);
    const uop *f = uop_var(ctx, name, lo, hi, xi->dtype);
    if (!f) return uop_ctx_status(ctx);
    HCQ_TRY(subst1(ctx, *cur, xi, f, &sub));
    if (sub == *cur) return HCQ_OK; /* u does not use x_i: this branch cannot change it */
    HCQ_TRY(uop_simplify(ctx, sub, &simp));
    HCQ_TRY(subst1(ctx, simp, f, xi, &back));
    HCQ_TRY(uop_simplify(ctx, back, &back));
    if (back == *cur || (same && back != same)) return HCQ_OK;
    same = back;
  }
  if (same) *cur = same;
  return HCQ_OK;
}

hcq_status uop_given_valid(uop_ctx *ctx, const uop *valid, const uop *u, const uop **out) {
  const uop *cl[VALID_MAX_CLAUSES];
  vbound bs[VALID_MAX_CLAUSES];
  int nb = 0;
  *out = u;
  int ncl = split_and(valid, cl, VALID_MAX_CLAUSES);
  if (ncl < 0) return HCQ_OK; /* too many clauses: no simplification, still sound */
  for (int i = 0; i < ncl; i++) {
    if (cl[i]->op == UOP_CONST) {
      if (!cl[i]->arg.i) {
        *out = NULL;
        return HCQ_OK;
      }
      continue;
    }
    vbound v;
    if (!parse_clause(cl[i], &v)) continue;
    int j = 0;
    while (j < nb && bs[j].x != v.x) j++;
    if (j == nb) {
      bs[nb++] = v;
    } else {
      if (v.lo > bs[j].lo) bs[j].lo = v.lo;
      if (v.hi < bs[j].hi) bs[j].hi = v.hi;
    }
  }
  for (int i = 0; i < nb; i++)
    if (bs[i].lo > bs[i].hi) {
      *out = NULL;
      return HCQ_OK;
    }
  valid_depth++;
  hcq_status st = HCQ_OK;
  const uop *cur = u;
  /* The clauses themselves hold. */
  for (int i = 0; i < ncl && !st; i++)
    if (cl[i]->op != UOP_CONST) st = subst1(ctx, cur, cl[i], uop_const_bool(ctx, true), &cur);
  if (!st && cur != u) st = uop_simplify(ctx, cur, &cur);
  for (int i = 0; i < nb && !st; i++) {
    const uop *x = bs[i].x, *sub;
    if (bs[i].lo == bs[i].hi) {
      const uop *k = sym_is_bool(x) ? uop_const_bool(ctx, bs[i].lo != 0) : uop_const_int(ctx, x->dtype, bs[i].lo);
      st = subst1(ctx, cur, x, k, &sub);
      if (!st && sub != cur) st = uop_simplify(ctx, sub, &cur);
      continue;
    }
    if (sym_is_bool(x)) continue;
    if (bs[i].lo >= 1) st = simplex_step(ctx, x, &cur);
    if (st) break;
    char name[48];
    snprintf(name, sizeof name, "valid.%d.%d", valid_depth, i);
    const uop *f = uop_var(ctx, name, bs[i].lo, bs[i].hi, x->dtype);
    if (!f) break;
    st = subst1(ctx, cur, x, f, &sub);
    if (st || sub == cur) continue;
    const uop *simp, *back;
    st = uop_simplify(ctx, sub, &simp);
    if (!st) st = subst1(ctx, simp, f, x, &back);
    if (!st && back != cur) st = uop_simplify(ctx, back, &cur);
  }
  valid_depth--;
  if (!st) st = uop_ctx_status(ctx);
  if (!st) *out = cur;
  return st;
}

/* Rewrite each clause under all the other (current) clauses. Each step keeps the AND's value at every point, so
 * the sequence is sound even when clauses imply each other. */
hcq_status uop_simplify_valid(uop_ctx *ctx, const uop *valid, const uop **out) {
  const uop *cl[VALID_MAX_CLAUSES];
  *out = valid;
  int n = split_and(valid, cl, VALID_MAX_CLAUSES);
  if (n < 2) return HCQ_OK;
  bool changed = false;
  for (int i = 0; i < n; i++) {
    const uop *others = NULL;
    for (int j = 0; j < n; j++)
      if (j != i) others = others ? uop_alu2(ctx, UOP_AND, others, cl[j]) : cl[j];
    const uop *nc;
    HCQ_TRY(uop_given_valid(ctx, others, cl[i], &nc));
    if (!nc) {
      *out = uop_const_bool(ctx, false);
      return HCQ_OK;
    }
    if (nc != cl[i]) {
      cl[i] = nc;
      changed = true;
    }
  }
  if (!changed) return HCQ_OK;
  const uop *acc = cl[0];
  for (int i = 1; i < n; i++) acc = uop_alu2(ctx, UOP_AND, acc, cl[i]);
  *out = acc;
  return uop_ctx_status(ctx);
}

/* ------------------------------------------------------------------------------------------------ rules */

static bool any_parsable(const uop *v) {
  const uop *cl[VALID_MAX_CLAUSES];
  int n = split_and(v, cl, VALID_MAX_CLAUSES);
  vbound b;
  for (int i = 0; i < n; i++)
    if (cl[i]->op == UOP_CMPLT || (cl[i]->op == UOP_CMPNE && cl[i]->src[0]->op == UOP_CMPLT))
      if (parse_clause(cl[i], &b)) return true;
  return false;
}

static const uop *r_and_valid(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  if (!sym_is_bool(n) || valid_depth >= VALID_MAX_DEPTH || !any_parsable(n)) return NULL;
  const uop *out;
  hcq_status st = uop_simplify_valid(rc->uctx, n, &out);
  if (st) {
    hcq_status_free(st);
    return NULL;
  }
  return out;
}

static const uop *r_where_valid(uop_rewrite_ctx *rc, const uop *n, const uop_bindings *b) {
  (void)b;
  uop_ctx *ctx = rc->uctx;
  const uop *c = n->src[0], *t = n->src[1], *f = n->src[2];
  if (valid_depth >= VALID_MAX_DEPTH || !any_parsable(c)) return NULL;
  const uop *nt, *nf = f;
  hcq_status st = uop_given_valid(ctx, c, t, &nt);
  if (st) {
    hcq_status_free(st);
    return NULL;
  }
  if (!nt) return f; /* the condition is never true */
  const uop *cl[2];
  if (split_and(c, cl, 2) == 1) {
    st = uop_given_valid(ctx, sym_not(ctx, c), f, &nf);
    if (st) {
      hcq_status_free(st);
      return NULL;
    }
    if (!nf) return nt; /* the condition is always true */
  }
  if (nt == t && nf == f) return NULL;
  return uop_where(ctx, c, nt, nf);
}

const uop_rule sym_rules_valid[] = {
    {"(AND:bool@n _ _)", r_and_valid, "simplify_valid"},
    {"(WHERE@n _ _ _)", r_where_valid, "where_given_valid"},
};
const size_t sym_rules_valid_count = sizeof sym_rules_valid / sizeof *sym_rules_valid;
