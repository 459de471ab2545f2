/* Variables used by a queue's symbols: recorded once per symbol, looked up once per apply, so that a symbol whose
 * variables did not change is not re-evaluated. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hcq/queue_internal.h"

static hcq_status var_index(hcq_queue *q, const char *name, uint32_t *out_idx) {
  for (size_t v = 0; v < q->nvars; v++)
    if (q->vars[v].name == name || strcmp(q->vars[v].name, name) == 0) return *out_idx = (uint32_t)v, HCQ_OK;
  if (q->nvars == q->vars_cap) {
    size_t cap = q->vars_cap ? 2 * q->vars_cap : 16;
    hcq_qvar *vars = realloc(q->vars, cap * sizeof(*vars));
    if (!vars) return hcq_status_make(HCQ_CODE_NOMEM, "queue variable list (%zu)", cap);
    q->vars = vars;
    q->vars_cap = cap;
  }
  q->vars[q->nvars] = (hcq_qvar){.name = name};
  *out_idx = (uint32_t)q->nvars++;
  return HCQ_OK;
}

static hcq_status push_sym_var(hcq_queue *q, uint32_t var) {
  if (q->nsym_vars == q->sym_vars_cap) {
    size_t cap = q->sym_vars_cap ? 2 * q->sym_vars_cap : 64;
    uint32_t *sv = realloc(q->sym_vars, cap * sizeof(*sv));
    if (!sv) return hcq_status_make(HCQ_CODE_NOMEM, "queue symbol variables (%zu)", cap);
    q->sym_vars = sv;
    q->sym_vars_cap = cap;
  }
  q->sym_vars[q->nsym_vars++] = var;
  return HCQ_OK;
}

hcq_status hcq_queue_track_sym_vars(hcq_queue *q, uint32_t sym_idx) {
  hcq_qsym *s = &q->syms[sym_idx];
  s->var_start = (uint32_t)q->nsym_vars;
  s->var_count = 0;
  /* Iterative DAG walk; symbol expressions are small, so a linear visited list is fine. */
  size_t cap = 32, nstack = 0, nseen = 0;
  const uop **stack = malloc(cap * sizeof(*stack)), **seen = malloc(cap * sizeof(*seen));
  size_t seen_cap = cap;
  hcq_status st = (stack && seen) ? HCQ_OK : hcq_status_make(HCQ_CODE_NOMEM, "queue symbol walk");
  if (!st) stack[nstack++] = s->node;
  while (!st && nstack) {
    const uop *n = stack[--nstack];
    bool dup = false;
    for (size_t i = 0; i < nseen && !dup; i++) dup = seen[i] == n;
    if (dup) continue;
    if (nseen == seen_cap) {
      const uop **ns = realloc(seen, 2 * seen_cap * sizeof(*ns));
      if (!ns) { st = hcq_status_make(HCQ_CODE_NOMEM, "queue symbol walk"); break; }
      seen = ns;
      seen_cap *= 2;
    }
    seen[nseen++] = n;
    if (n->op == UOP_DEFINE_VAR) {
      if (!n->arg.str) { st = hcq_status_make(HCQ_CODE_INVALID, "queue symbol: variable without a name"); break; }
      uint32_t v = 0;
      st = var_index(q, n->arg.str, &v);
      if (!st && n->arg.kind == UOP_ARG_VAR && !(uop_dt_is_unsigned(n->dtype) && uop_dt_bits(n->dtype) == 64)) {
        hcq_qvar *qv = &q->vars[v]; /* the kernel was compiled assuming the declared range: keep to it */
        if (!qv->ranged || n->arg.i > qv->lo) qv->lo = n->arg.i;
        if (!qv->ranged || n->arg.i2 < qv->hi) qv->hi = n->arg.i2;
        qv->ranged = 1;
      }
      if (!st) st = push_sym_var(q, v);
      if (!st) s->var_count++;
      if (!st && n == s->node && uop_dt_bits(n->dtype) == 64) s->direct_var = (int32_t)v;
    } else if (n->op == UOP_SPECIAL || n->op == UOP_RANGE) {
      s->always_eval = 1; /* looked up by names we do not track */
    }
    for (uint32_t k = 0; !st && k < n->nsrc; k++) {
      if (nstack == cap) {
        const uop **ns = realloc(stack, 2 * cap * sizeof(*ns));
        if (!ns) { st = hcq_status_make(HCQ_CODE_NOMEM, "queue symbol walk"); break; }
        stack = ns;
        cap *= 2;
      }
      stack[nstack++] = n->src[k];
    }
  }
  free(stack);
  free(seen);
  return st;
}

hcq_status hcq_queue_lookup_vars(hcq_queue *q, const uop_var_val *vals, size_t n) {
  for (size_t v = 0; v < q->nvars; v++) {
    hcq_qvar *qv = &q->vars[v];
    const uop_var_val *found = NULL;
    if (qv->hint < n && vals[qv->hint].name &&
        (vals[qv->hint].name == qv->name || strcmp(vals[qv->hint].name, qv->name) == 0)) {
      found = &vals[qv->hint];
    } else {
      for (size_t i = 0; i < n; i++)
        if (vals[i].name && strcmp(vals[i].name, qv->name) == 0) {
          found = &vals[i];
          qv->hint = (uint32_t)i;
          break;
        }
    }
    if (!found)
      return hcq_status_make(HCQ_CODE_NOT_FOUND, "queue submit: no value for variable '%s' (%zu values given)", qv->name, n);
    if (qv->ranged && (found->value < qv->lo || found->value > qv->hi))
      return hcq_status_make(HCQ_CODE_INVALID,
                             "queue submit: variable '%s' = %" PRId64 " is outside its declared range %" PRId64 "..%" PRId64
                             "; nothing was written",
                             qv->name, found->value, qv->lo, qv->hi);
    qv->cur = (uint64_t)found->value;
    qv->changed = !q->applied || qv->cur != qv->prev;
  }
  return HCQ_OK;
}
