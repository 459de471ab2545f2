/* The expander for hcq's scalar C design (reference tinygrad/codegen/late/expander.py, without the UNROLL/CONTRACT
 * vector form):
 *
 * - a REDUCE whose range list holds UPCAST/UNROLL ranges reduces the combination of its lanes (each lane = the
 *   source with those ranges replaced by constants; ADD sums, MUL multiplies, MAX takes the max, as a balanced tree)
 *   over its remaining ranges, or is that combination when none remain;
 * - a STORE over UPCAST ranges becomes one STORE per lane, lanes in list order with the last range fastest, so that
 *   consecutive stores of an upcast innermost axis hit consecutive addresses. A REDUCE under it is copied per lane:
 *   one accumulator per lane.
 * REDUCEs are expanded first (sources first), so nested reduces work. GROUP_REDUCE ranges pass through: the next
 * pass (group_reduce.c) lowers them to shared memory per lane. Index sums are regrouped first so that every lane's
 * index is a shared base plus a constant (group_fn). */
#include <stdlib.h>

#include "compiler/cc_internal.h"
#include "compiler/opt.h"
#include "compiler/opt_internal.h"
#include "uop/match.h"
#include "uop/symbolic.h"
#include "base/ptrmap.h"

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

/* An index ADD or MUL with constant operands (a lane's offset, such as 1*512 + 5, or lane 0's x + 0) folded as the
 * lane is built: otherwise the symbolic rewrite after the expansion folds it and rebuilds every lane's index, load
 * and store around it. */
static const uop *fold_lane_const(uop_ctx *ctx, const uop *n, const uop *const *src) {
  if ((n->op != UOP_ADD && n->op != UOP_MUL) || n->dtype.scalar != UOP_INDEX || n->dtype.count != 1) return NULL;
  int64_t a, b;
  bool ca = uop_const_value(src[0], &a), cb = uop_const_value(src[1], &b);
  if (ca && cb) /* unsigned: no signed overflow UB */
    return uop_index_const(ctx, (int64_t)(n->op == UOP_ADD ? (uint64_t)a + (uint64_t)b : (uint64_t)a * (uint64_t)b));
  int64_t unit = n->op == UOP_ADD ? 0 : 1; /* x + 0 and x * 1 are x */
  if (cb && b == unit && src[0]->dtype.scalar == UOP_INDEX) return src[0];
  if (ca && a == unit && src[1]->dtype.scalar == UOP_INDEX) return src[1];
  return NULL;
}

/* All nl lanes of root at once (out[l] = root with ex[i] replaced by lane l's constant, as lane_values numbers
 * them). Each node is rebuilt once per combination of the expand ranges it depends on, not once per lane: in a
 * 16x8 tile, a load indexed by one range is built 16 times, not 128, and nodes that use no expand range are kept
 * as they are. Returns false (nothing built) when the tables would be too large; the caller then substitutes lane
 * by lane. */
#define MAX_SHARED_ENTRIES (1u << 20)
static bool substitute_lanes(uop_ctx *ctx, const uop *root, const uop *const *ex, uint32_t nex, int64_t nl,
                             const uop **out, hcq_status *st) {
  if (nex > 32) return false;
  int64_t size[32];
  for (uint32_t i = 0; i < nex; i++) uop_const_value(ex[i]->src[0], &size[i]);
  const uop **nodes;
  size_t count;
  *st = uop_toposort(ctx, root, &nodes, &count);
  if (*st) return true;
  base_ptrmap idx = {0};
  uint32_t *deps = calloc(count, sizeof *deps);
  size_t *base = malloc(count * sizeof *base);
  const uop **res = NULL;
  bool done = false;
  if (!deps || !base) goto oom;
  size_t total = 0;
  for (size_t k = 0; k < count; k++) {
    const uop *n = nodes[k];
    if (!base_ptrmap_put(&idx, n, k)) goto oom;
    uint32_t d = 0;
    bool is_ex = false;
    for (uint32_t i = 0; i < nex; i++)
      if (ex[i] == n) {
        d = 1u << i;
        is_ex = true;
      }
    if (!is_ex)
      for (uint32_t s = 0; s < n->nsrc; s++) d |= deps[*base_ptrmap_find(&idx, n->src[s])];
    deps[k] = d;
    int64_t combos = 1;
    for (uint32_t i = 0; i < nex; i++)
      if (d >> i & 1) combos *= size[i];
    base[k] = total;
    total += d ? (size_t)combos : 0;
    if (total > MAX_SHARED_ENTRIES) goto out; /* fall back */
  }
  res = malloc((total + 1) * sizeof *res);
  if (!res) goto oom;
  int64_t vals[32];
  const uop *small[8];
  for (size_t k = 0; k < count; k++) {
    const uop *n = nodes[k];
    uint32_t d = deps[k];
    if (!d) continue;
    int64_t combos = 1;
    for (uint32_t i = 0; i < nex; i++)
      if (d >> i & 1) combos *= size[i];
    int exi = -1;
    for (uint32_t i = 0; i < nex; i++)
      if (ex[i] == n) exi = (int)i;
    const uop **src = n->nsrc <= 8 ? small : malloc(n->nsrc * sizeof *src);
    if (!src) goto oom;
    bool fail = false;
    for (int64_t p = 0; p < combos && !fail; p++) {
      if (exi >= 0) {
        res[base[k] + (size_t)p] = uop_index_const(ctx, p);
        if (!res[base[k] + (size_t)p]) fail = true;
        continue;
      }
      /* p in mixed radix over the ranges in d (the last one fastest) */
      int64_t q = p;
      for (uint32_t i = nex; i-- > 0;)
        if (d >> i & 1) {
          vals[i] = q % size[i];
          q /= size[i];
        }
      for (uint32_t s = 0; s < n->nsrc; s++) {
        size_t sk = *base_ptrmap_find(&idx, n->src[s]);
        uint32_t sd = deps[sk];
        if (!sd) {
          src[s] = n->src[s];
          continue;
        }
        int64_t sp = 0;
        for (uint32_t i = 0; i < nex; i++)
          if (sd >> i & 1) sp = sp * size[i] + vals[i];
        src[s] = res[base[sk] + (size_t)sp];
      }
      const uop *folded = fold_lane_const(ctx, n, src);
      res[base[k] + (size_t)p] = folded ? folded : uop_replace_src(ctx, n, src, n->nsrc);
      if (!res[base[k] + (size_t)p]) fail = true;
    }
    if (src != small) free(src);
    if (fail) goto oom;
  }
  {
    size_t rk = count - 1; /* the root is last in post-order */
    uint32_t rd = deps[rk];
    for (int64_t l = 0; l < nl; l++) {
      if (!rd) {
        out[l] = root;
        continue;
      }
      int64_t q = l;
      for (uint32_t i = nex; i-- > 0;) {
        vals[i] = q % size[i];
        q /= size[i];
      }
      int64_t sp = 0;
      for (uint32_t i = 0; i < nex; i++)
        if (rd >> i & 1) sp = sp * size[i] + vals[i];
      out[l] = res[base[rk] + (size_t)sp];
    }
  }
  done = true;
  goto out;
oom:
  *st = uop_ctx_status(ctx);
  if (!*st) *st = hcq_status_make(HCQ_CODE_NOMEM, "expand: out of memory");
  done = true;
out:
  base_ptrmap_free(&idx);
  free(deps);
  free(base);
  free(res);
  return done;
}

/* Lane-constant index sums (not in the reference). An index sum whose terms mix lane-constant ones (built only from
 * UPCAST/UNROLL ranges and constants) with the rest is regrouped as (rest) + (lane-constant part) before the lanes are
 * substituted, and fold_lane_const folds each lane's part as it is built: each lane's index is then one shared base
 * plus a constant, instead of a sum that the symbolic rewrite re-normalizes lane by lane (matmul 512's 16x8 tile: the
 * expansion made 1,657 nodes before, 847 now; the whole pipeline 0.52-0.56 -> 0.45-0.47 ms warm). Index adds only:
 * their reassociation is exact, and the symbolic rules reorder them anyway. */
static bool is_index_add(const uop *n) {
  return n->op == UOP_ADD && n->dtype.scalar == UOP_INDEX && n->dtype.count == 1;
}

static bool lane_const(const uop *n, int depth) {
  if (n->op == UOP_CONST || is_expand_axis(n)) return true;
  if (depth == 0 || !uop_op_is_alu((uop_op)n->op) || n->dtype.scalar != UOP_INDEX) return false;
  for (uint32_t i = 0; i < n->nsrc; i++)
    if (!lane_const(n->src[i], depth - 1)) return false;
  return true;
}

/* x as rest + lanes (either may be NULL). Every index add the walk has rebuilt is rest-only, lane-constant, or
 * grouped (an add of a rest-only sum and a lane-constant term), so a look at the top is enough. */
static void split_sum(const uop *x, const uop **rest, const uop **lanes) {
  if (lane_const(x, 6)) {
    *rest = NULL;
    *lanes = x;
  } else if (is_index_add(x) && lane_const(x->src[1], 6)) {
    *rest = x->src[0];
    *lanes = x->src[1];
  } else {
    *rest = x;
    *lanes = NULL;
  }
}

static const uop *add_or(uop_ctx *ctx, const uop *a, const uop *b) { return !a ? b : !b ? a : uop_alu2(ctx, UOP_ADD, a, b); }

static const uop *group_fn(void *user, uop_ctx *ctx, const uop *n, hcq_status *st) {
  (void)user;
  (void)st;
  if (!is_index_add(n)) return n;
  const uop *ra, *la, *rb, *lb;
  split_sum(n->src[0], &ra, &la);
  split_sum(n->src[1], &rb, &lb);
  if ((!la && !lb) || (!ra && !rb) || (!la && !rb)) return n; /* rest-only, lane-constant, or rest + lanes */
  return add_or(ctx, add_or(ctx, ra, rb), add_or(ctx, la, lb));
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

/* Per-lane accumulators (not in the reference, which sums the lanes into one accumulator): on targets that fold
 * lanes into vectors, a float32 REDUCE ADD/MUL/MAX over at most vector_max UNROLL lanes (or a multiple of it up to
 * CC_REDUCE_CHAINS times it) that still loops over other ranges becomes one REDUCE per lane, combined after the loop,
 * so vectorize.c can keep the lanes in vector accumulators (no horizontal sum per step; the chain of dependent adds
 * is vector_max times shorter, and chains of independent vectors hide the add latency). Not when the source uses an
 * UPCAST range: that REDUCE is copied per output lane already (a register tile has accumulators enough). */
typedef struct expand_job {
  int vector_max;
  const uop **upcast; /* the kernel's UPCAST ranges */
  size_t nupcast;
} expand_job;

static bool per_lane_accs(const expand_job *j, const uop *n, int64_t nl, uint32_t nrest) {
  uop_op op = (uop_op)n->arg.i;
  if (!j || nrest == 0 || nl < 2 || (op != UOP_ADD && op != UOP_MUL && op != UOP_MAX)) return false;
  if (nl > j->vector_max && (nl > CC_REDUCE_CHAINS * j->vector_max || nl % j->vector_max)) return false;
  /* float32 only: what vectorize.c folds. Integer lanes would stay scalar accumulators, and gcc 12.2 -O2 with
   * AVX2/AVX-512 miscompiles such a group of int accumulators whose lanes are permuted (its loop vectorizer's
   * SLP reduction; an int32 sum of 16 came out 46 instead of 136; found by opt_fuzz_test) */
  if (n->dtype.scalar != UOP_FLOAT32 || n->dtype.count != 1) return false;
  for (size_t i = 0; i < j->nupcast; i++)
    if (cc_uses(n->src[0], j->upcast[i])) return false;
  return true;
}

static const uop *reduce_fn(void *user, uop_ctx *ctx, const uop *n, hcq_status *st) {
  const expand_job *job = user;
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
  if (!substitute_lanes(ctx, n->src[0], ex, nex, nl, lanes, st))
    for (int64_t l = 0; l < nl && !*st; l++) {
      lane_values(ctx, ex, nex, l, vals);
      *st = uop_substitute(ctx, n->src[0], ex, vals, nex, &lanes[l]);
    }
  if (*st) goto done;
  uint32_t k = 1;
  for (uint32_t i = 1; i < n->nsrc; i++)
    if (!is_expand_axis(n->src[i])) rest[k++] = n->src[i];
  if (per_lane_accs(job, n, nl, k - 1)) {
    for (int64_t l = 0; l < nl; l++) {
      rest[0] = lanes[l];
      if (!(lanes[l] = uop_new(ctx, UOP_REDUCE, n->dtype, rest, k, n->arg))) goto done;
    }
    /* more lanes than a vector (chains of vector_max lanes each): lane j of every chain combined first, so that
     * vectorize.c can add the chains' vectors lane by lane before one horizontal combine */
    int64_t w = nl > job->vector_max ? job->vector_max : nl, c = nl / w;
    for (int64_t j = 0; j < w && c > 1; j++) {
      const uop *col[CC_REDUCE_CHAINS];
      for (int64_t i = 0; i < c; i++) col[i] = lanes[i * w + j];
      lanes[j] = combine(ctx, (uop_op)n->arg.i, col, c);
    }
    out = combine(ctx, (uop_op)n->arg.i, lanes, w);
    goto done;
  }
  const uop *sum = combine(ctx, (uop_op)n->arg.i, lanes, nl);
  rest[0] = sum;
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
  const uop **src = malloc(s->nsrc * sizeof *src), **lanes = NULL;
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
  /* the lanes of the address and the value, built for all lanes at once where the tables fit */
  lanes = malloc(2 * (size_t)nl * sizeof *lanes);
  if (!lanes) {
    st = hcq_status_make(HCQ_CODE_NOMEM, "expand: out of memory");
    goto done;
  }
  bool shared[2] = {false, false};
  for (uint32_t i = 0; i < 2 && i < s->nsrc && !st; i++)
    shared[i] = substitute_lanes(ctx, s->src[i], ex, nex, nl, lanes + i * (size_t)nl, &st);
  for (int64_t l = 0; l < nl && !st; l++) {
    lane_values(ctx, ex, nex, l, vals);
    uint32_t k = 0;
    for (uint32_t i = 0; i < s->nsrc && !st; i++) {
      if (i >= 2 && is_expand_axis(s->src[i])) continue;
      if (i < 2 && shared[i]) src[k] = lanes[i * (size_t)nl + (size_t)l];
      else if (i < 2) st = uop_substitute(ctx, s->src[i], ex, vals, nex, &src[k]);
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
  free(lanes);
  return st;
}

hcq_status cc_expand(uop_ctx *ctx, const uop *sink, const cc_target *t, const uop **out_sink) {
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
  const uop *grouped;
  HCQ_TRY(cc_rebuild(ctx, sink, group_fn, NULL, &grouped)); /* the ranges stay the same nodes */
  expand_job job = {.vector_max = t ? t->vector_max : 0};
  if (job.vector_max >= 2) {
    job.upcast = malloc((count ? count : 1) * sizeof *job.upcast);
    if (!job.upcast) return hcq_status_make(HCQ_CODE_NOMEM, "expand: out of memory");
    for (size_t k = 0; k < count; k++)
      if (nodes[k]->op == UOP_RANGE && nodes[k]->arg.i2 == UOP_AXIS_UPCAST) job.upcast[job.nupcast++] = nodes[k];
  }
  const uop *reduced;
  hcq_status rst = cc_rebuild(ctx, grouped, reduce_fn, job.vector_max >= 2 ? &job : NULL, &reduced);
  free(job.upcast);
  HCQ_TRY(rst);
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
