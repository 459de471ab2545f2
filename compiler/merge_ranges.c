/* Range merging (reference pm_simplify_ranges, tinygrad/codegen/simplify.py): two adjacent range sources of a STORE or
 * REDUCE with the same axis type become one range of the product size, r0 -> m // s1 and r1 -> m % s1; the merge is
 * kept only if, after re-simplifying, the kernel has no more IDIV/MOD nodes than before. A contiguous 2-D elementwise
 * kernel becomes a 1-D loop this way, so later opts see the biggest axes. */
#include <stdlib.h>

#include "compiler/cc_internal.h"
#include "uop/symbolic.h"

static bool is_holder(const uop *n) { return n->op == UOP_STORE || n->op == UOP_REDUCE; }
static uint32_t first_range_src(const uop *n) { return n->op == UOP_STORE ? 2 : 1; }

static bool holds(const uop *h, const uop *r) {
  for (uint32_t i = first_range_src(h); i < h->nsrc; i++)
    if (h->src[i] == r) return true;
  return false;
}

typedef struct merge_job {
  const uop *a, *b;           /* original ranges */
  const uop *a_expr, *b_expr; /* their replacements */
  const uop *merged;
} merge_job;

static const uop *merge_fn(void *user, uop_ctx *ctx, const uop *n, hcq_status *st) {
  (void)st;
  merge_job *j = user;
  if (n == j->a) return j->a_expr;
  if (n == j->b) return j->b_expr;
  if (!is_holder(n)) return n;
  const uop **src = malloc(n->nsrc * sizeof *src);
  if (!src) return NULL;
  uint32_t k = 0;
  for (uint32_t i = 0; i < n->nsrc; i++) {
    const uop *s = n->src[i];
    if (i >= first_range_src(n)) {
      if (s == j->b_expr) continue;
      if (s == j->a_expr) s = j->merged;
    }
    src[k++] = s;
  }
  const uop *out = uop_replace_src(ctx, n, src, k);
  free(src);
  return out;
}

/* Try merging a and b; *out_sink is the merged kernel, or NULL when the merge does not pay. */
static hcq_status try_merge(cc_pass_ctx *pc, const uop *sink, const uop *a, const uop *b, size_t divmod_before,
                            const uop **out_sink) {
  *out_sink = NULL;
  uop_ctx *ctx = pc->ctx;
  const uop *end = NULL;
  HCQ_TRY(uop_simplify(ctx, uop_alu2(ctx, UOP_MUL, a->src[0], b->src[0]), &end));
  merge_job j = {.a = a, .b = b};
  j.merged = uop_range(ctx, end, a->arg.i, (uop_axis)a->arg.i2);
  j.a_expr = uop_alu2(ctx, UOP_IDIV, j.merged, b->src[0]);
  j.b_expr = uop_alu2(ctx, UOP_MOD, j.merged, b->src[0]);
  if (!j.b_expr) return hcq_status_make(HCQ_CODE_NOMEM, "merge ranges: out of memory");
  const uop *rebuilt = NULL, *simple = NULL;
  HCQ_TRY(cc_rebuild(ctx, sink, merge_fn, &j, &rebuilt));
  HCQ_TRY(cc_pass_symbolic(pc, rebuilt, &simple));
  if (cc_count_ops(ctx, simple, UOP_OPBIT(UOP_IDIV) | UOP_OPBIT(UOP_MOD)) <= divmod_before) *out_sink = simple;
  return HCQ_OK;
}

hcq_status cc_pass_merge_ranges(cc_pass_ctx *pc, const uop *sink, const uop **out_sink) {
  *out_sink = NULL;
  for (bool progress = true; progress;) {
    progress = false;
    const uop **nodes;
    size_t count;
    HCQ_TRY(uop_toposort(pc->ctx, sink, &nodes, &count));
    size_t divmod = cc_count_ops(pc->ctx, sink, UOP_OPBIT(UOP_IDIV) | UOP_OPBIT(UOP_MOD));
    for (size_t k = 0; k < count && !progress; k++) {
      const uop *h = nodes[k];
      if (!is_holder(h)) continue;
      for (uint32_t i = first_range_src(h); i + 1 < h->nsrc && !progress; i++) {
        const uop *a = h->src[i], *b = h->src[i + 1];
        if (a->op != UOP_RANGE || b->op != UOP_RANGE || a == b || a->arg.i2 != b->arg.i2) continue;
        /* Every holder must list both or neither: a range closed by one store alone cannot be merged away. */
        bool consistent = true;
        for (size_t m = 0; m < count && consistent; m++)
          if (is_holder(nodes[m]) && holds(nodes[m], a) != holds(nodes[m], b)) consistent = false;
        if (!consistent) continue;
        const uop *merged = NULL;
        HCQ_TRY(try_merge(pc, sink, a, b, divmod, &merged));
        if (merged) {
          sink = merged;
          progress = true;
        }
      }
    }
  }
  *out_sink = sink;
  return HCQ_OK;
}
