/* symbolic: the rule set's assembly (families concatenated in priority order), uop_simplify, and the term algebra
 * shared by the families (canonical sums and their bounds). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uop/symbolic_rules.h"
#include "uop/uop_internal.h"

int64_t uop_floordiv(int64_t a, int64_t d) {
  int64_t q = a / d;
  if ((a % d != 0) && ((a < 0) != (d < 0))) q--;
  return q;
}

int64_t uop_floormod(int64_t a, int64_t d) {
  int64_t r = a % d;
  if (r != 0 && ((r < 0) != (d < 0))) r += d;
  return r;
}

int64_t sym_ceildiv(int64_t a, int64_t d) { return -uop_floordiv(-a, d); }

int64_t sym_gcd(int64_t a, int64_t b) {
  uint64_t x = a < 0 ? -(uint64_t)a : (uint64_t)a, y = b < 0 ? -(uint64_t)b : (uint64_t)b;
  while (y) {
    uint64_t t = x % y;
    x = y;
    y = t;
  }
  return x > (uint64_t)INT64_MAX ? 0 : (int64_t)x;
}


bool sym_bounds(const uop *n, int64_t *lo, int64_t *hi) {
  if (uop_dt_is_ptr(n->dtype) || n->dtype.scalar == UOP_UINT64) return false;
  if (!uop_dt_is_int(n->dtype) && !uop_dt_is_bool(n->dtype)) return false;
  *lo = uop_vmin(n);
  *hi = uop_vmax(n);
  /* Keep a margin so that sums of a few bounds cannot overflow. */
  const int64_t lim = (int64_t)1 << 61;
  return *lo >= -lim && *hi <= lim && *lo <= *hi;
}

const uop *sym_not(uop_ctx *ctx, const uop *b) {
  if (b->op == UOP_CMPNE && b->src[1]->op == UOP_CONST && b->src[1]->arg.i == 1 && sym_is_bool(b->src[0]))
    return b->src[0];
  if (b->op == UOP_CONST) return uop_const_bool(ctx, b->arg.i == 0);
  return uop_alu2(ctx, UOP_CMPNE, b, uop_const_bool(ctx, true));
}

/* ------------------------------------------------------------------------------------------------ sums */

bool sym_sum_add(sym_sum *s, const uop *base, int64_t coeff) {
  if (coeff == 0) return true;
  for (int i = 0; i < s->n; i++)
    if (s->t[i].base == base) return !__builtin_add_overflow(s->t[i].coeff, coeff, &s->t[i].coeff);
  if (s->n == SYM_MAX_TERMS) return false;
  s->t[s->n++] = (sym_term){base, coeff};
  return true;
}

bool sym_decompose(const uop *x, sym_sum *s) {
  s->n = 0;
  s->k = 0;
  const uop *stack[SYM_MAX_TERMS * 2];
  int sp = 0;
  stack[sp++] = x;
  while (sp) {
    const uop *n = stack[--sp];
    if (n->op == UOP_ADD && sym_is_index(n)) {
      if (sp + 2 > (int)(sizeof stack / sizeof *stack)) return false;
      stack[sp++] = n->src[1];
      stack[sp++] = n->src[0];
      continue;
    }
    int64_t c;
    if (n->op == UOP_CONST && uop_const_value(n, &c)) {
      if (__builtin_add_overflow(s->k, c, &s->k)) return false;
      continue;
    }
    if (n->op == UOP_MUL && sym_is_index(n) && n->nsrc == 2 && n->src[1]->op == UOP_CONST &&
        uop_const_value(n->src[1], &c)) {
      if (!sym_sum_add(s, n->src[0], c)) return false;
      continue;
    }
    if (!sym_sum_add(s, n, 1)) return false;
  }
  return true;
}

const uop *sym_term_node(uop_ctx *ctx, const uop *base, int64_t coeff) {
  if (coeff == 1) return base;
  return uop_alu2(ctx, UOP_MUL, base, uop_index_const(ctx, coeff));
}

const uop *sym_build(uop_ctx *ctx, const sym_sum *s) {
  const uop *nodes[SYM_MAX_TERMS];
  int n = 0;
  for (int i = 0; i < s->n; i++) {
    if (s->t[i].coeff == 0) continue;
    const uop *t = sym_term_node(ctx, s->t[i].base, s->t[i].coeff);
    if (!t) return NULL;
    int j = n++;
    while (j > 0 && uop_struct_cmp(nodes[j - 1], t) > 0) {
      nodes[j] = nodes[j - 1];
      j--;
    }
    nodes[j] = t;
  }
  const uop *acc = NULL;
  for (int i = 0; i < n; i++) acc = acc ? uop_alu2(ctx, UOP_ADD, acc, nodes[i]) : nodes[i];
  if (!acc) return uop_index_const(ctx, s->k);
  if (s->k != 0) acc = uop_alu2(ctx, UOP_ADD, acc, uop_index_const(ctx, s->k));
  return acc;
}

bool sym_sum_bounds(const sym_sum *s, int64_t *lo, int64_t *hi) {
  int64_t l = s->k, h = s->k;
  for (int i = 0; i < s->n; i++) {
    int64_t bl, bh, p, q;
    if (s->t[i].coeff == 0) continue;
    if (!sym_bounds(s->t[i].base, &bl, &bh)) return false;
    if (__builtin_mul_overflow(bl, s->t[i].coeff, &p) || __builtin_mul_overflow(bh, s->t[i].coeff, &q)) return false;
    if (p > q) {
      int64_t t = p;
      p = q;
      q = t;
    }
    if (__builtin_add_overflow(l, p, &l) || __builtin_add_overflow(h, q, &h)) return false;
  }
  *lo = l;
  *hi = h;
  return true;
}

const uop *sym_lin(uop_ctx *ctx, const uop *a, int64_t c, int64_t b) {
  sym_sum s;
  if (!sym_decompose(a, &s)) {
    const uop *t = sym_term_node(ctx, a, c);
    return b ? uop_alu2(ctx, UOP_ADD, t, uop_index_const(ctx, b)) : t;
  }
  for (int i = 0; i < s.n; i++)
    if (__builtin_mul_overflow(s.t[i].coeff, c, &s.t[i].coeff)) return NULL;
  if (__builtin_mul_overflow(s.k, c, &s.k) || __builtin_add_overflow(s.k, b, &s.k)) return NULL;
  return sym_build(ctx, &s);
}

/* ------------------------------------------------------------------------------------------------ rule set */

static pthread_once_t sym_once = PTHREAD_ONCE_INIT;
static uop_pm *sym_pm;

static void sym_build_pm(void) {
  const struct {
    const uop_rule *rules;
    size_t count;
  } fams[] = {
      {sym_rules_fold, sym_rules_fold_count},     {sym_rules_sum, sym_rules_sum_count},
      {sym_rules_divmod, sym_rules_divmod_count}, {sym_rules_cmp, sym_rules_cmp_count},
      {sym_rules_valid, sym_rules_valid_count},
  };
  size_t total = 0;
  for (size_t i = 0; i < sizeof fams / sizeof *fams; i++) total += fams[i].count;
  uop_rule *all = malloc(total * sizeof *all);
  if (!all) return;
  size_t at = 0;
  for (size_t i = 0; i < sizeof fams / sizeof *fams; i++) {
    memcpy(all + at, fams[i].rules, fams[i].count * sizeof *all);
    at += fams[i].count;
  }
  hcq_status st = uop_pm_create(all, total, &sym_pm);
  free(all);
  if (!st) uop_pm_set_memo(sym_pm, sym_memo_slot);
  if (st) {
    /* A broken rule table is a programming error: say which rule, leave the matcher NULL. */
    fprintf(stderr, "uop_symbolic_pm: %s\n", hcq_status_message(st));
    hcq_status_free(st);
    sym_pm = NULL;
  }
}

const uop_pm *uop_symbolic_pm(void) {
  pthread_once(&sym_once, sym_build_pm);
  return sym_pm;
}

hcq_status uop_simplify(uop_ctx *ctx, const uop *expr, const uop **out) {
  const uop_pm *pm = uop_symbolic_pm();
  if (!pm) return hcq_status_make(HCQ_CODE_INTERNAL, "uop_simplify: the symbolic rule set failed to compile");
  if (!expr) return hcq_status_make(HCQ_CODE_INVALID, "uop_simplify: NULL expression");
  return uop_graph_rewrite(ctx, expr, pm, UOP_REWRITE_SOURCES_FIRST, NULL, out);
}
