/* remove_reduce (reference tinygrad/codegen/late/devectorizer.py, reduce_to_acc): each REDUCE(x, ranges...) becomes an
 * accumulator.
 *
 *   acc   = INDEX(DEFINE_REG(T*[1], n), 0)
 *   init  = STORE(acc, identity, NOOP(outer ranges))        -- inside the outer loops, before the reduce loops
 *   part  = LOAD(acc, init, ranges...) (+|*|max) x
 *   upd   = STORE(acc, part, ranges...)                      -- closes the reduce loops
 *   value = LOAD(acc, upd)                                   -- after the loops
 * The outer ranges are the ranges x depends on that the reduce does not range over. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc_internal.h"
#include "uop/uop_internal.h"

static const uop *identity(uop_ctx *ctx, uop_op op, uop_dtype dt) {
  if (op == UOP_ADD) return uop_dt_is_float(dt) ? uop_const_float(ctx, dt, 0.0) : uop_const_int(ctx, dt, 0);
  if (op == UOP_MUL) return uop_dt_is_float(dt) ? uop_const_float(ctx, dt, 1.0) : uop_const_int(ctx, dt, 1);
  if (uop_dt_is_float(dt)) return uop_const_float(ctx, dt, -INFINITY);
  return uop_const_int(ctx, dt, uop_dt_min(dt));
}

/* Open-range sets memoized per node for the whole pass: nodes are hash-consed and immutable, so a node's set never
 * changes, and the many REDUCEs the expander makes (one per lane) share most of their subgraphs. */
typedef struct range_set {
  const uop **r;
  uint32_t n;
} range_set;

typedef struct reduce_job {
  cc_pass_ctx *pc;
  base_ptrmap memo; /* node -> index into sets */
  range_set *sets;
  size_t nsets, cap;
} reduce_job;

static void reduce_job_free(reduce_job *j) {
  for (size_t k = 0; k < j->nsets; k++) free(j->sets[k].r);
  free(j->sets);
  base_ptrmap_free(&j->memo);
}

/* The set of n from its sources' sets (all memoized already). */
static bool add_set(reduce_job *j, const uop *n) {
  if (j->nsets == j->cap) {
    size_t nc = j->cap ? j->cap * 2 : 64;
    range_set *ns = realloc(j->sets, nc * sizeof *ns);
    if (!ns) return false;
    j->sets = ns;
    j->cap = nc;
  }
  size_t cap = 0;
  for (uint32_t s = 0; s < n->nsrc; s++) cap += j->sets[*base_ptrmap_find(&j->memo, n->src[s])].n + 1;
  range_set cur = {malloc((cap + 1) * sizeof *cur.r), 0};
  if (!cur.r) return false;
  for (uint32_t s = 0; s < n->nsrc; s++) {
    const uop *src = n->src[s];
    const range_set *ss = &j->sets[*base_ptrmap_find(&j->memo, src)];
    for (uint32_t i = 0; i <= ss->n; i++) {
      const uop *r = i < ss->n ? ss->r[i] : (src->op == UOP_RANGE ? src : NULL);
      if (!r) continue;
      bool skip = false;
      if (src->op == UOP_STORE)
        for (uint32_t q = 2; q < src->nsrc; q++) skip |= src->src[q] == r;
      for (uint32_t q = 0; q < cur.n && !skip; q++) skip = cur.r[q] == r;
      if (!skip) cur.r[cur.n++] = r;
    }
  }
  if (!base_ptrmap_put(&j->memo, n, j->nsets)) {
    free(cur.r);
    return false;
  }
  j->sets[j->nsets++] = cur;
  return true;
}

/* The ranges open at x: union of the sources' (a RANGE source adds itself; a STORE source removes the ranges it
 * lists). *out is malloc'd. A post-order walk that stops at memoized nodes, so each node is visited once per pass. */
static hcq_status live_ranges(reduce_job *j, const uop *x, const uop ***out, uint32_t *out_n) {
  *out = NULL;
  *out_n = 0;
  base_vec stack = {0}; /* (node, next source index) pairs */
  if (!base_ptrmap_find(&j->memo, x) && (!base_vec_push(&stack, (uintptr_t)x) || !base_vec_push(&stack, 0))) goto oom;
  while (stack.n) {
    const uop *n = (const uop *)stack.v[stack.n - 2];
    uintptr_t i = stack.v[stack.n - 1];
    if (i < n->nsrc) {
      stack.v[stack.n - 1] = i + 1;
      const uop *s = n->src[i];
      if (!base_ptrmap_find(&j->memo, s) && (!base_vec_push(&stack, (uintptr_t)s) || !base_vec_push(&stack, 0)))
        goto oom;
      continue;
    }
    stack.n -= 2;
    if (!base_ptrmap_find(&j->memo, n) && !add_set(j, n)) goto oom;
  }
  base_vec_free(&stack);
  const range_set *xs = &j->sets[*base_ptrmap_find(&j->memo, x)];
  *out = malloc((xs->n + 1) * sizeof **out);
  if (!*out) return hcq_status_make(HCQ_CODE_NOMEM, "remove reduce: out of memory");
  if (xs->n) memcpy(*out, xs->r, xs->n * sizeof **out);
  *out_n = xs->n;
  return HCQ_OK;
oom:
  base_vec_free(&stack);
  return hcq_status_make(HCQ_CODE_NOMEM, "remove reduce: out of memory");
}

static const uop *reduce_fn(void *user, uop_ctx *ctx, const uop *n, hcq_status *st) {
  reduce_job *j = user;
  if (n->op != UOP_REDUCE) return n;
  uop_op op = (uop_op)n->arg.i;
  if (n->arg.kind != UOP_ARG_INT || (op != UOP_ADD && op != UOP_MUL && op != UOP_MAX)) {
    *st = hcq_status_make(HCQ_CODE_INVALID, "REDUCE with op %lld: expected ADD, MUL or MAX", (long long)n->arg.i);
    return NULL;
  }
  if (n->nsrc < 1 || n->dtype.count != 1 || n->src[0]->dtype.count != 1) {
    *st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "REDUCE: vector reduces need the expander (not implemented yet)");
    return NULL;
  }
  const uop *x = n->src[0];
  uop_dtype dt = n->dtype;
  /* Outer ranges: the ranges open around x (its context: a STORE closes the ranges it lists), minus the reduced. */
  const uop **outer = NULL;
  uint32_t nouter = 0;
  *st = live_ranges(j, x, &outer, &nouter);
  if (*st) return NULL;
  uint32_t kept = 0;
  for (uint32_t k = 0; k < nouter; k++) {
    bool reduced = false;
    for (uint32_t i = 1; i < n->nsrc; i++) reduced |= n->src[i] == outer[k];
    if (!reduced) outer[kept++] = outer[k];
  }
  nouter = kept;
  const uop *reg = uop_new(ctx, UOP_DEFINE_REG, uop_dt_ptr(dt, UOP_AS_REG, 1), NULL, 0,
                           uop_arg_int(j->pc->acc_count++));
  const uop *acc_src[2] = {reg, uop_index_const(ctx, 0)};
  const uop *acc = uop_new(ctx, UOP_INDEX_OP, reg ? reg->dtype : dt, acc_src, 2, uop_arg_none());
  const uop *noop = uop_new(ctx, UOP_NOOP, uop_dt(UOP_VOID), outer, nouter, uop_arg_none());
  free(outer);
  const uop *init_src[3] = {acc, identity(ctx, op, dt), noop};
  const uop *init = uop_new(ctx, UOP_STORE, uop_dt(UOP_VOID), init_src, 3, uop_arg_none());
  /* LOAD(acc, init, ranges...) and STORE(acc, part, ranges...) */
  const uop **ls = malloc((n->nsrc + 2) * sizeof *ls);
  if (!ls) return NULL;
  ls[0] = acc;
  ls[1] = init;
  for (uint32_t i = 1; i < n->nsrc; i++) ls[i + 1] = n->src[i];
  const uop *cur = uop_new(ctx, UOP_LOAD, dt, ls, n->nsrc + 1, uop_arg_none());
  const uop *part = uop_alu2(ctx, op, cur, x);
  ls[1] = part;
  const uop *upd = uop_new(ctx, UOP_STORE, uop_dt(UOP_VOID), ls, n->nsrc + 1, uop_arg_none());
  free(ls);
  const uop *fin_src[2] = {acc, upd};
  return uop_new(ctx, UOP_LOAD, dt, fin_src, 2, uop_arg_none());
}

hcq_status cc_pass_reduce(cc_pass_ctx *pc, const uop *sink, const uop **out_sink) {
  reduce_job j = {.pc = pc};
  hcq_status st = cc_rebuild(pc->ctx, sink, reduce_fn, &j, out_sink);
  reduce_job_free(&j);
  return st;
}
