/* KBLOCK:axis:amount (ours, not in the reference; CPU targets): cache blocking along a reduce axis of a kernel that
 * stores one add-reduce straight into its output. The reduce axis k (size K) becomes ki (size amount, still REDUCE)
 * and ko (K/amount, an OUTER loop: nested outside every other loop, closed by the store):
 *
 *   out[i] = sum_k f(k)   ->   for ko: out[i] = sum_ki f(ko*amount + ki) + (ko > 0 ? out[i] : 0)
 *
 * so one k-block of the inputs (a matmul's slice of B) stays in cache while every output tile passes over it; the
 * partial sums pass through the output buffer. The load of out[i] is gated on ko > 0: it reads nothing before the
 * first store and depends on ko, so no pass can hoist it out of the ko loop. Amount 0: the heuristic's block
 * (cc_kblock_auto), so BEAM's action table can name it for any k. */
#include "compiler/cc_internal.h"
#include "compiler/opt_internal.h"

typedef struct kblock_job {
  const uop *rng, *expr, *ki;
} kblock_job;

static const uop *kblock_fn(void *user, uop_ctx *ctx, const uop *n, hcq_status *st) {
  (void)st;
  kblock_job *j = user;
  if (n == j->rng) return j->expr;
  if (n->op != UOP_REDUCE) return n;
  /* the reduce's range list: its k (now the expression) becomes ki */
  const uop *src[64];
  if (n->nsrc > sizeof src / sizeof *src) return n; /* cc_kblock refuses such kernels before the walk */
  bool hit = false;
  for (uint32_t i = 0; i < n->nsrc; i++) {
    src[i] = i && n->src[i] == j->expr ? j->ki : n->src[i];
    hit |= src[i] != n->src[i];
  }
  return hit ? uop_replace_src(ctx, n, src, n->nsrc) : n;
}

/* Is the output read: buf used by a node other than the store's INDEX, or that INDEX (hash-consed: a load of the
 * same element is the same node) by a node other than the store? */
static bool other_use(uop_ctx *ctx, const uop *store, const uop *root, hcq_status *st) {
  const uop **nodes;
  size_t count;
  *st = uop_toposort(ctx, root, &nodes, &count);
  if (*st) return true;
  const uop *idx = store->src[0], *buf = idx->src[0];
  for (size_t k = 0; k < count; k++)
    for (uint32_t i = 0; i < nodes[k]->nsrc; i++)
      if ((nodes[k]->src[i] == buf && nodes[k] != idx) || (nodes[k]->src[i] == idx && nodes[k] != store)) return true;
  return false;
}

int64_t cc_kblock_auto(int64_t k) {
  int64_t kc = CC_KBLOCK_MAX;
  while (kc >= CC_KBLOCK_MAX / 4 && k % kc) kc--;
  return kc >= CC_KBLOCK_MAX / 4 && kc < k ? kc : 0;
}

hcq_status cc_kblock(cc_sched *s, const uop *rng, int64_t amount, const uop **out_sink, const char **why) {
  uop_ctx *ctx = s->ctx;
  *out_sink = NULL;
  *why = NULL;
  int64_t size = cc_axis_size(rng);
  if (amount == 0 && size > 0 && !(amount = cc_kblock_auto(size))) {
    *why = "no block between 32 and 128 divides the axis (amount 0 picks one)";
    return HCQ_OK;
  }
  const uop *sink = s->sink, *st = sink->nsrc == 1 ? sink->src[0] : NULL;
  const uop *red = st && st->nsrc >= 2 ? st->src[1] : NULL, *idx = st ? st->src[0] : NULL;
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(ctx, sink, &nodes, &count));
  for (size_t k = 0; k < count; k++)
    if (nodes[k]->op == UOP_RANGE && cc_axis_type(nodes[k]) == UOP_AXIS_OUTER) {
      *why = "the kernel is already blocked (one KBLOCK per kernel)";
      return HCQ_OK;
    }
  if (!s->t->has_threads) *why = "KBLOCK is for CPU targets";
  else if (cc_axis_type(rng) != UOP_AXIS_REDUCE || size < 0) *why = "KBLOCK needs a reduce axis of constant size";
  else if (amount < 1 || amount >= size || size % amount) *why = "the amount must divide the axis size and be smaller";
  else if (!red || red->op != UOP_REDUCE || red->arg.i != UOP_ADD || red->dtype.count != 1)
    *why = "KBLOCK needs a kernel of one STORE whose value is an add REDUCE";
  else if (idx->op != UOP_INDEX_OP || idx->nsrc < 2 || idx->src[0]->op != UOP_DEFINE_GLOBAL)
    *why = "KBLOCK needs a store to a global buffer";
  else if (red->nsrc > 64 || st->nsrc >= 64)
    *why = "too many ranges on the store or the reduce";
  if (*why) return HCQ_OK;
  bool listed = false, threaded = false;
  for (uint32_t i = 1; i < red->nsrc; i++) {
    listed |= red->src[i] == rng;
    threaded |= cc_axis_type(red->src[i]) == UOP_AXIS_THREAD;
  }
  if (!listed) {
    *why = "the axis is not a range of the stored REDUCE";
    return HCQ_OK;
  }
  /* group_reduce.c combines the threads' partials once, after the whole reduce: not once per OUTER iteration */
  if (threaded) {
    *why = "the REDUCE is a cross-thread reduce (THREAD on a reduce axis), whose combine cannot sit in an OUTER loop";
    return HCQ_OK;
  }
  hcq_status e;
  if (other_use(ctx, st, sink, &e)) {
    HCQ_TRY(e);
    *why = "the kernel reads its output buffer";
    return HCQ_OK;
  }
  int64_t id;
  HCQ_TRY(uop_toposort(ctx, sink, &nodes, &count)); /* the walk in other_use reused the toposort's buffer */
  HCQ_TRY(cc_fresh_range_id(nodes, count, NULL, 0, &id));
  const uop *ko = uop_range(ctx, uop_index_const(ctx, size / amount), id, UOP_AXIS_OUTER);
  kblock_job j = {.rng = rng, .ki = uop_range(ctx, uop_index_const(ctx, amount), rng->arg.i, UOP_AXIS_REDUCE)};
  j.expr = uop_alu2(ctx, UOP_ADD, uop_alu2(ctx, UOP_MUL, ko, uop_index_const(ctx, amount)), j.ki);
  if (!j.expr) return hcq_status_make(HCQ_CODE_NOMEM, "KBLOCK: out of memory");
  const uop *rebuilt;
  HCQ_TRY(cc_rebuild(ctx, sink, kblock_fn, &j, &rebuilt));
  st = rebuilt->src[0];
  /* out[i] += the block's sum: a load of the stored element, gated on ko > 0 (and on the store's own gate) */
  const uop *gate = uop_alu2(ctx, UOP_CMPLT, uop_index_const(ctx, 0), ko);
  if (idx->nsrc > 2) gate = uop_alu2(ctx, UOP_AND, gate, idx->src[2]);
  const uop *lsrc[3] = {idx->src[0], idx->src[1], gate};
  const uop *lidx = uop_replace_src(ctx, idx, lsrc, 3);
  const uop *load = lidx ? uop_new(ctx, UOP_LOAD, uop_dt_base_of(lidx->dtype), &lidx, 1, uop_arg_none()) : NULL;
  const uop *val = uop_alu2(ctx, UOP_ADD, st->src[1], load);
  if (!val) return hcq_status_make(HCQ_CODE_NOMEM, "KBLOCK: out of memory");
  const uop *ssrc[64];
  for (uint32_t i = 0; i < st->nsrc; i++) ssrc[i] = st->src[i];
  ssrc[1] = val;
  ssrc[st->nsrc] = ko;
  const uop *nst = uop_replace_src(ctx, st, ssrc, st->nsrc + 1);
  *out_sink = nst ? uop_replace_src(ctx, rebuilt, &nst, 1) : NULL;
  if (!*out_sink) return hcq_status_make(HCQ_CODE_NOMEM, "KBLOCK: out of memory");
  return HCQ_OK;
}
