/* The expander for hcq's scalar C design (reference compiler.md 3.10, without the UNROLL/CONTRACT vector form):
 *
 * - a REDUCE whose range list holds UPCAST/UNROLL ranges reduces the combination of its lanes (each lane = the
 *   source with those ranges replaced by constants; ADD sums, MUL multiplies, MAX takes the max, as a balanced tree)
 *   over its remaining ranges, or is that combination when none remain;
 * - a STORE over UPCAST ranges becomes one STORE per lane, lanes in list order with the last range fastest, so that
 *   consecutive stores of an upcast innermost axis hit consecutive addresses. A REDUCE under it is copied per lane:
 *   one accumulator per lane.
 * REDUCEs are expanded first (sources first), so nested reduces work. GROUP_REDUCE ranges pass through: the next
 * pass (group_reduce.c) lowers them to shared memory per lane. */
#include <stdlib.h>

#include "compiler/cc_internal.h"
#include "compiler/opt.h"
#include "uop/match.h"
#include "uop/symbolic.h"

#define MAX_LANES 4096

static bool is_expand_axis(const uop *n) {
  return n->op == UOP_RANGE && (n->arg.i2 == UOP_AXIS_UPCAST || n->arg.i2 == UOP_AXIS_UNROLL);
}

/* The ranges of holder n from `first` that expand: their nodes in `ex` (capacity n->nsrc), count returned; the
 * product of their sizes in *lanes (error if one is symbolic or there are too many lanes). */
static hcq_status expand_ranges(const uop *n, uint32_t first, const uop **ex, uint32_t *nex, int64_t *lanes) {
  *nex = 0;
  *lanes = 1;
  for (uint32_t i = first; i < n->nsrc; i++) {
    if (!is_expand_axis(n->src[i])) continue;
    int64_t size;
    if (!uop_const_value(n->src[i]->src[0], &size) || size < 1)
      return hcq_status_make(HCQ_CODE_INVALID, "expand: %s range r%lld has no constant size",
                             uop_axis_name((uop_axis)n->src[i]->arg.i2), (long long)n->src[i]->arg.i);
    *lanes *= size;
    if (*lanes > MAX_LANES)
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "expand: more than %d lanes (r%lld)", MAX_LANES,
                             (long long)n->src[i]->arg.i);
    ex[(*nex)++] = n->src[i];
  }
  return HCQ_OK;
}

/* Lane `lane` as constants for ex[0..nex) (the last range varies fastest). */
static void lane_values(uop_ctx *ctx, const uop *const *ex, uint32_t nex, int64_t lane, const uop **vals) {
  for (uint32_t i = nex; i-- > 0;) {
    int64_t size;
    uop_const_value(ex[i]->src[0], &size);
    vals[i] = uop_index_const(ctx, lane % size);
    lane /= size;
  }
}

/* Combine values[0..n) with op as a balanced tree (in place). */
static const uop *combine(uop_ctx *ctx, uop_op op, const uop **v, int64_t n) {
  while (n > 1) {
    int64_t k = 0;
    for (int64_t i = 0; i + 1 < n; i += 2) v[k++] = uop_alu2(ctx, op, v[i], v[i + 1]);
    if (n & 1) v[k++] = v[n - 1];
    n = k;
  }
  return v[0];
}

static const uop *reduce_fn(void *user, uop_ctx *ctx, const uop *n, hcq_status *st) {
  (void)user;
  if (n->op != UOP_REDUCE) return n;
  const uop **ex = malloc(n->nsrc * sizeof *ex);
  const uop **rest = malloc(n->nsrc * sizeof *rest);
  const uop **vals = malloc(n->nsrc * sizeof *vals);
  const uop **lanes = NULL;
  const uop *out = NULL;
  if (!ex || !rest || !vals) goto done;
  uint32_t nex;
  int64_t nl;
  *st = expand_ranges(n, 1, ex, &nex, &nl);
  if (*st) goto done;
  if (!nex) {
    out = n;
    goto done;
  }
  lanes = malloc((size_t)nl * sizeof *lanes);
  if (!lanes) goto done;
  for (int64_t l = 0; l < nl && !*st; l++) {
    lane_values(ctx, ex, nex, l, vals);
    *st = uop_substitute(ctx, n->src[0], ex, vals, nex, &lanes[l]);
  }
  if (*st) goto done;
  const uop *sum = combine(ctx, (uop_op)n->arg.i, lanes, nl);
  uint32_t k = 0;
  rest[k++] = sum;
  for (uint32_t i = 1; i < n->nsrc; i++)
    if (!is_expand_axis(n->src[i])) rest[k++] = n->src[i];
  out = k == 1 ? sum : uop_new(ctx, UOP_REDUCE, n->dtype, rest, k, n->arg);
done:
  free(ex);
  free(rest);
  free(vals);
  free(lanes);
  return out;
}

/* The lanes of one STORE appended to out[*nout]. */
static hcq_status expand_store(uop_ctx *ctx, const uop *s, const uop ***out, size_t *nout, size_t *cap) {
  const uop **ex = malloc(s->nsrc * sizeof *ex), **vals = malloc(s->nsrc * sizeof *vals);
  const uop **src = malloc(s->nsrc * sizeof *src);
  hcq_status st = HCQ_OK;
  if (!ex || !vals || !src) {
    st = hcq_status_make(HCQ_CODE_NOMEM, "expand: out of memory");
    goto done;
  }
  uint32_t nex;
  int64_t nl;
  st = expand_ranges(s, 2, ex, &nex, &nl);
  if (st) goto done;
  if (*nout + (size_t)nl > *cap) {
    size_t nc = (*nout + (size_t)nl) * 2;
    const uop **no = realloc(*out, nc * sizeof *no);
    if (!no) {
      st = hcq_status_make(HCQ_CODE_NOMEM, "expand: out of memory");
      goto done;
    }
    *out = no;
    *cap = nc;
  }
  if (!nex) {
    (*out)[(*nout)++] = s;
    goto done;
  }
  for (int64_t l = 0; l < nl && !st; l++) {
    lane_values(ctx, ex, nex, l, vals);
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->nsrc && !st; i++) {
      if (i >= 2 && is_expand_axis(s->src[i])) continue;
      if (i < 2) st = uop_substitute(ctx, s->src[i], ex, vals, nex, &src[k]);
      else src[k] = s->src[i];
      k++;
    }
    if (st) break;
    const uop *lane = uop_replace_src(ctx, s, src, k);
    if (!lane) st = hcq_status_make(HCQ_CODE_NOMEM, "expand: out of memory");
    else (*out)[(*nout)++] = lane;
  }
done:
  free(ex);
  free(vals);
  free(src);
  return st;
}

hcq_status cc_expand(uop_ctx *ctx, const uop *sink, const cc_target *t, const uop **out_sink) {
  (void)t;
  *out_sink = NULL;
  if (!ctx || !sink || sink->op != UOP_SINK) return hcq_status_make(HCQ_CODE_INVALID, "expand: the root is not a SINK");
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(ctx, sink, &nodes, &count));
  bool any = false;
  for (size_t k = 0; k < count; k++)
    any |= is_expand_axis(nodes[k]);
  if (!any) {
    *out_sink = sink;
    return HCQ_OK;
  }
  const uop *reduced;
  HCQ_TRY(cc_rebuild(ctx, sink, reduce_fn, NULL, &reduced));
  const uop **stores = NULL;
  size_t nst = 0, cap = 0;
  hcq_status st = HCQ_OK;
  for (uint32_t i = 0; i < reduced->nsrc && !st; i++) {
    const uop *s = reduced->src[i];
    if (s->op == UOP_STORE) st = expand_store(ctx, s, &stores, &nst, &cap);
    else {
      if (nst == cap) {
        size_t nc = cap ? cap * 2 : 8;
        const uop **no = realloc(stores, nc * sizeof *no);
        if (!no) {
          st = hcq_status_make(HCQ_CODE_NOMEM, "expand: out of memory");
          break;
        }
        stores = no;
        cap = nc;
      }
      stores[nst++] = s;
    }
  }
  const uop *expanded = NULL;
  if (!st) {
    expanded = uop_replace_src(ctx, reduced, stores, (uint32_t)nst);
    if (!expanded) st = hcq_status_make(HCQ_CODE_NOMEM, "expand: out of memory");
  }
  free(stores);
  if (st) return st;
  const uop_pm *pm = uop_symbolic_pm();
  if (!pm) return hcq_status_make(HCQ_CODE_INTERNAL, "expand: the symbolic rule set failed to build");
  return uop_graph_rewrite(ctx, expanded, pm, UOP_REWRITE_SOURCES_FIRST, NULL, out_sink);
}
