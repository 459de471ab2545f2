/* add gpudims (reference compiler.md 3.13, 6): hardware dimensions. For the CPU target the only one is THREAD: the
 * THREAD range becomes SPECIAL("gidx0", size), rendered as the kernel's core_id argument, and leaves the range lists
 * of the stores that closed it. GLOBAL/LOCAL ranges on a target without them stay loops. */
#include <stdlib.h>

#include "compiler/cc_internal.h"

typedef struct gpudims_job {
  const cc_target *t;
  int nthread;
} gpudims_job;

static const uop *gpudims_fn(void *user, uop_ctx *ctx, const uop *n, hcq_status *st) {
  gpudims_job *j = user;
  if (n->op == UOP_RANGE && n->arg.i2 == UOP_AXIS_THREAD) {
    if (!j->t->has_threads) {
      *st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "target %s has no threads (THREAD range r%lld)", j->t->name,
                            (long long)n->arg.i);
      return NULL;
    }
    if (j->nthread++) {
      *st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "more than one THREAD range (r%lld)", (long long)n->arg.i);
      return NULL;
    }
    int64_t size;
    if (uop_const_value(n->src[0], &size) && j->t->global_max[0] > 0 && size > j->t->global_max[0]) {
      *st = hcq_status_make(HCQ_CODE_INVALID, "THREAD range of %lld exceeds the target's %lld threads",
                            (long long)size, (long long)j->t->global_max[0]);
      return NULL;
    }
    return uop_special(ctx, "gidx0", n->src[0]);
  }
  if (n->op != UOP_STORE && n->op != UOP_REDUCE) return n;
  /* Drop SPECIALs (former THREAD ranges) from the range sources. */
  uint32_t first = n->op == UOP_STORE ? 2 : 1, k = 0;
  bool any = false;
  for (uint32_t i = first; i < n->nsrc; i++) any |= n->src[i]->op == UOP_SPECIAL;
  if (!any) return n;
  const uop **src = malloc(n->nsrc * sizeof *src);
  if (!src) return NULL;
  for (uint32_t i = 0; i < n->nsrc; i++)
    if (i < first || n->src[i]->op != UOP_SPECIAL) src[k++] = n->src[i];
  const uop *out = uop_replace_src(ctx, n, src, k);
  free(src);
  return out;
}

hcq_status cc_pass_gpudims(cc_pass_ctx *pc, const uop *sink, const uop **out_sink) {
  gpudims_job j = {.t = pc->target};
  return cc_rebuild(pc->ctx, sink, gpudims_fn, &j, out_sink);
}
