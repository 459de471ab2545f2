/* add gpudims (reference tinygrad/codegen/gpudims.py): hardware dimensions.
 *
 * CPU targets (c, llvm-cpu): the only hardware dim is THREAD: the THREAD range becomes SPECIAL("gidx0", size),
 * rendered as the kernel's core_id argument. GLOBAL/LOCAL ranges on a target without locals stay loops.
 *
 * GPU targets (has_local): GLOBAL ranges become workgroup ids gidxN, LOCAL/WARP/GROUP_REDUCE ranges workitem ids
 * lidxN. Global dims are ordered by range id and reversed, so the innermost range is x. With more than three global
 * dims the outermost ones are merged (the original indices come back with / and %); a dim larger than its
 * global_max is split by its smallest factors into the next, unused dim. Local dims must fit as they are.
 *
 * Replaced ranges leave the range lists of the STOREs and REDUCEs that closed them.
 *
 * On CPU targets the THREAD substitution runs before expansion (cc_pass_cpu_threads, from the expand slot), while the
 * graph is a few dozen nodes: after it every lane's index math depends on the range and the whole expanded graph
 * would be rebuilt (a tenth of a matmul's compile). A THREAD range listed on a REDUCE waits for this pass. */
#include <stdlib.h>

#include "compiler/cc_internal.h"
#include "base/ptrmap.h"

#define MAX_DIM_RANGES 16

typedef struct gpudims_job {
  const cc_target *t;
  int nthread;
  base_ptrmap repl;     /* RANGE -> replacement expression */
  base_ptrmap is_repl;  /* replacement expressions (dropped from range lists) */
} gpudims_job;

/* One hardware dim: the original ranges it carries, innermost first. */
typedef struct hw_dim {
  const uop *rng[MAX_DIM_RANGES];
  int n;
} hw_dim;

static int cmp_range_id(const void *a, const void *b) {
  int64_t x = (*(const uop *const *)a)->arg.i, y = (*(const uop *const *)b)->arg.i;
  return x < y ? -1 : x > y;
}

/* a * b, folded when both are constants (launch sizes should be plain numbers when they can be) */
static const uop *mul_size(uop_ctx *ctx, const uop *a, const uop *b) {
  int64_t x, y;
  if (uop_const_value(a, &x) && uop_const_value(b, &y) && !__builtin_mul_overflow(x, y, &x))
    return uop_index_const(ctx, x);
  return uop_alu2(ctx, UOP_MUL, a, b);
}

static const uop *dim_size(uop_ctx *ctx, const hw_dim *d) {
  const uop *s = d->rng[0]->src[0];
  for (int i = 1; i < d->n; i++) s = mul_size(ctx, s, d->rng[i]->src[0]);
  return s;
}

/* The replacement of each range of d, given the hardware id `id` of the dim: (id / inner) % size. */
static hcq_status map_dim(gpudims_job *j, uop_ctx *ctx, const hw_dim *d, const uop *id) {
  const uop *inner = NULL;
  for (int i = 0; i < d->n; i++) {
    const uop *e = inner ? uop_alu2(ctx, UOP_IDIV, id, inner) : id;
    if (i + 1 < d->n) e = uop_alu2(ctx, UOP_MOD, e, d->rng[i]->src[0]);
    inner = inner ? mul_size(ctx, inner, d->rng[i]->src[0]) : d->rng[i]->src[0];
    if (!e || !inner) return hcq_status_make(HCQ_CODE_NOMEM, "gpudims: out of memory");
    if (!base_ptrmap_put(&j->repl, d->rng[i], (uintptr_t)e) || !base_ptrmap_put(&j->is_repl, e, 1))
      return hcq_status_make(HCQ_CODE_NOMEM, "gpudims: out of memory");
  }
  return HCQ_OK;
}

static int64_t smallest_factor(int64_t v) {
  for (int64_t f = 2; f * f <= v; f++)
    if (v % f == 0) return f;
  return v;
}

static hcq_status plan_global(gpudims_job *j, uop_ctx *ctx, const uop **rngs, int n) {
  hw_dim dims[MAX_DIM_RANGES] = {0};
  int nd = n;
  for (int i = 0; i < n; i++) { /* reversed: the innermost (highest id) range is x */
    dims[i].rng[0] = rngs[n - 1 - i];
    dims[i].n = 1;
  }
  while (nd > 3) { /* merge the two outermost dims: dims[nd-2] stays inner */
    hw_dim *a = &dims[nd - 2], *b = &dims[nd - 1];
    for (int i = 0; i < b->n; i++) a->rng[a->n++] = b->rng[i];
    nd--;
  }
  /* split a single-range dim that exceeds its limit into the next unused dim: r = hi * (size / F) + lo */
  const uop *hi_id[3] = {0};
  int64_t hi_size[3] = {0};
  for (int d = 0; d < nd; d++) {
    int64_t size;
    if (!uop_const_value(dim_size(ctx, &dims[d]), &size) || size <= j->t->global_max[d]) continue;
    int64_t lo = size, f = 1;
    while (lo > j->t->global_max[d]) {
      int64_t p = smallest_factor(lo);
      lo /= p;
      f *= p;
    }
    if (dims[d].n != 1 || nd >= 3 || d + 1 != nd || f > j->t->global_max[d + 1])
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "global dim %d of size %lld exceeds the target's %lld and cannot "
                             "be split into a free dim", d, (long long)size, (long long)j->t->global_max[d]);
    hi_size[d] = f;
    const uop *lo_size = uop_index_const(ctx, lo);
    char name[8] = "gidx0";
    name[4] = (char)('0' + d + 1);
    hi_id[d] = uop_special(ctx, name, uop_index_const(ctx, f));
    name[4] = (char)('0' + d);
    const uop *lo_id = uop_special(ctx, name, lo_size);
    const uop *e = uop_alu2(ctx, UOP_ADD, uop_alu2(ctx, UOP_MUL, hi_id[d], lo_size), lo_id);
    if (!e) return hcq_status_make(HCQ_CODE_NOMEM, "gpudims: out of memory");
    if (!base_ptrmap_put(&j->repl, dims[d].rng[0], (uintptr_t)e) || !base_ptrmap_put(&j->is_repl, e, 1))
      return hcq_status_make(HCQ_CODE_NOMEM, "gpudims: out of memory");
    nd++; /* the factor's dim is taken */
    break;
  }
  for (int d = 0; d < nd; d++) {
    if (hi_size[d > 0 ? d - 1 : 0] && d > 0) continue; /* the split's upper half, mapped above */
    if (base_ptrmap_find(&j->repl, dims[d].rng[0])) continue;
    char name[8] = "gidx0";
    name[4] = (char)('0' + d);
    const uop *id = uop_special(ctx, name, dim_size(ctx, &dims[d]));
    if (!id) return hcq_status_make(HCQ_CODE_NOMEM, "gpudims: out of memory");
    HCQ_TRY(map_dim(j, ctx, &dims[d], id));
  }
  return HCQ_OK;
}

static hcq_status plan_local(gpudims_job *j, uop_ctx *ctx, const uop **rngs, int n) {
  if (n > 3) return hcq_status_make(HCQ_CODE_UNSUPPORTED, "%d local dims (at most 3)", n);
  /* threads per workgroup: CUDA and AMD both allow 1024 (local_max[0]) in total, not per dim */
  int64_t threads = 1, size;
  for (int d = 0; d < n; d++)
    if (uop_const_value(rngs[d]->src[0], &size)) threads *= size;
  if (threads > j->t->local_max[0])
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "%lld threads per workgroup exceed the target's %lld",
                           (long long)threads, (long long)j->t->local_max[0]);
  for (int d = 0; d < n; d++) {
    int64_t size;
    if (uop_const_value(rngs[d]->src[0], &size) && size > j->t->local_max[d])
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "local dim %d of size %lld exceeds the target's %lld", d,
                             (long long)size, (long long)j->t->local_max[d]);
    char name[8] = "lidx0";
    name[4] = (char)('0' + d);
    hw_dim one = {.rng = {rngs[d]}, .n = 1};
    const uop *id = uop_special(ctx, name, rngs[d]->src[0]);
    if (!id) return hcq_status_make(HCQ_CODE_NOMEM, "gpudims: out of memory");
    HCQ_TRY(map_dim(j, ctx, &one, id));
  }
  return HCQ_OK;
}

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
    const uop *s = uop_special(ctx, "gidx0", n->src[0]);
    if (s && !base_ptrmap_put(&j->is_repl, s, 1)) return NULL;
    return s;
  }
  if (n->op == UOP_RANGE) {
    uintptr_t *m = base_ptrmap_find(&j->repl, n);
    return m ? (const uop *)*m : n;
  }
  if (n->op != UOP_STORE && n->op != UOP_REDUCE) return n;
  /* Drop replaced ranges from the range sources. */
  uint32_t first = n->op == UOP_STORE ? 2 : 1, k = 0;
  bool any = false;
  for (uint32_t i = first; i < n->nsrc; i++) any |= base_ptrmap_find(&j->is_repl, n->src[i]) != NULL;
  if (!any) return n;
  const uop **src = malloc(n->nsrc * sizeof *src);
  if (!src) return NULL;
  for (uint32_t i = 0; i < n->nsrc; i++)
    if (i < first || !base_ptrmap_find(&j->is_repl, n->src[i])) src[k++] = n->src[i];
  const uop *out = uop_replace_src(ctx, n, src, k);
  free(src);
  return out;
}

hcq_status cc_pass_cpu_threads(cc_pass_ctx *pc, const uop *sink, const uop **out_sink) {
  *out_sink = sink;
  if (!pc->target->has_threads || pc->target->has_local) return HCQ_OK;
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(pc->ctx, sink, &nodes, &count));
  bool thread = false;
  for (size_t k = 0; k < count; k++) {
    const uop *n = nodes[k];
    thread |= n->op == UOP_RANGE && n->arg.i2 == UOP_AXIS_THREAD;
    for (uint32_t i = 1; n->op == UOP_REDUCE && i < n->nsrc; i++)
      if (n->src[i]->op == UOP_RANGE && n->src[i]->arg.i2 == UOP_AXIS_THREAD) return HCQ_OK; /* after the reduce */
  }
  if (thread) HCQ_TRY(cc_pass_gpudims(pc, sink, out_sink));
  pc->threads_mapped = true;
  return HCQ_OK;
}

hcq_status cc_pass_gpudims(cc_pass_ctx *pc, const uop *sink, const uop **out_sink) {
  gpudims_job j = {.t = pc->target};
  hcq_status st = HCQ_OK;
  if (pc->threads_mapped) { /* CPU: done before expansion; nothing after it adds a THREAD range */
    *out_sink = sink;
    return HCQ_OK;
  }
  if (pc->target->has_local) {
    const uop **nodes;
    size_t count;
    HCQ_TRY(uop_toposort(pc->ctx, sink, &nodes, &count));
    const uop *glob[MAX_DIM_RANGES], *loc[MAX_DIM_RANGES];
    int ng = 0, nl = 0;
    for (size_t k = 0; k < count; k++) {
      const uop *n = nodes[k];
      if (n->op != UOP_RANGE) continue;
      uop_axis at = (uop_axis)n->arg.i2;
      bool g = at == UOP_AXIS_GLOBAL, l = at == UOP_AXIS_LOCAL || at == UOP_AXIS_WARP || at == UOP_AXIS_GROUP_REDUCE;
      if ((g && ng == MAX_DIM_RANGES) || (l && nl == MAX_DIM_RANGES))
        return hcq_status_make(HCQ_CODE_UNSUPPORTED, "gpudims: more than %d global or local ranges", MAX_DIM_RANGES);
      if (g) glob[ng++] = n;
      if (l) loc[nl++] = n;
    }
    qsort(glob, (size_t)ng, sizeof *glob, cmp_range_id);
    qsort(loc, (size_t)nl, sizeof *loc, cmp_range_id);
    if (ng) st = plan_global(&j, pc->ctx, glob, ng);
    if (!st && nl) st = plan_local(&j, pc->ctx, loc, nl);
  }
  if (!st) st = cc_rebuild(pc->ctx, sink, gpudims_fn, &j, out_sink);
  base_ptrmap_free(&j.repl);
  base_ptrmap_free(&j.is_repl);
  return st;
}
