/* Group reduce (reference fix_group_for_reduce in tinygrad/codegen/late/expander.py + add local buffers), for targets
 * with local dims and shared memory. A REDUCE(x, ranges...) whose range list holds GROUP_REDUCE ranges g... (the
 * workitems of one workgroup, lidxN after gpudims) becomes:
 *
 *   partial = REDUCE(x, the other ranges)                      -- per thread (x itself when none remain)
 *   st      = STORE(INDEX(DEFINE_LOCAL(T[n]), lin(l..., g...)), partial, g...)
 *   bar     = BARRIER(st)
 *   value   = REDUCE(LOAD(INDEX(local, lin(l..., q...)), bar), q...)   -- q: new REDUCE ranges, one per g
 *
 * where l... are the LOCAL/WARP/GROUP_REDUCE ranges x also depends on (threads that own different outputs need
 * their own slots) and n the product of all their sizes. Every thread of the group computes `value` (the same
 * loads in the same order, so the same result), which keeps it usable by any later computation; the global STOREs
 * are gated on (g == 0) for every GROUP_REDUCE range of the kernel, so one thread per output writes.
 * The reference instead puts the second reduce under IF(g == 0); the gated store gives the same memory effect
 * without IF blocks in the linearizer, at the cost of a few redundant shared-memory loads per thread.
 *
 * Independent group reduces (UPCAST lanes, separate outputs) then share one BARRIER (merge_barriers).
 *
 * A barrier must be reached by every thread of the group the same number of times. Inside a loop (LOOP or REDUCE
 * range, e.g. a grouped reduce nested in another reduce) the loop's trip count must be the same in every thread
 * (its end depends on no range or thread id; otherwise the kernel is refused), and the partial's STORE also waits
 * at a second BARRIER(partial) (an extra source after its ranges), so that no thread overwrites the buffer while
 * another still reads the previous iteration's partials.
 *
 * CPU targets (c): a REDUCE that lists the THREAD range (THREAD on a reduce axis) is lowered the same way with the
 * THREAD range as g: each core_id stores its partial into a scratch array (DEFINE_LOCAL, a static array in the
 * kernel object; a thread's UPCAST lanes are contiguous in it, slot g * lanes + l, so vectorize.c stores and loads
 * them as vectors), and render_c.c renders the BARRIER as an atomic arrival count past which only the last thread to
 * arrive goes on, so it alone combines the partials (in thread order: the result does not depend on timing) and
 * writes; stores are not gated. The REDUCE must not sit inside another range (the others would not wait for it). */
#include <stdlib.h>

#include "compiler/cc_internal.h"
#include "compiler/opt.h"
#include "compiler/opt_internal.h"
#include "uop/match.h"
#include "uop/symbolic.h"
#include "base/ptrmap.h"

#define MAX_GROUP_DIMS 16

static bool is_group(const uop *n) { return n->op == UOP_RANGE && n->arg.i2 == UOP_AXIS_GROUP_REDUCE; }
static bool is_local_like(const uop *n) {
  return n->arg.i2 == UOP_AXIS_LOCAL || n->arg.i2 == UOP_AXIS_WARP || n->arg.i2 == UOP_AXIS_GROUP_REDUCE;
}

static int cmp_range_id(const void *a, const void *b) {
  int64_t x = (*(const uop *const *)a)->arg.i, y = (*(const uop *const *)b)->arg.i;
  return x < y ? -1 : x > y;
}

static bool listed(const uop *holder, uint32_t first, const uop *r) {
  for (uint32_t i = first; i < holder->nsrc; i++)
    if (holder->src[i] == r) return true;
  return false;
}

/* True if the end of loop range r is the same in every thread of a workgroup: no thread-id range (LOCAL, WARP,
 * GROUP_REDUCE) or lidx SPECIAL under it (the ends of ranges it uses are under it too). */
static hcq_status uniform_end(uop_ctx *ctx, const uop *r, bool *out) {
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(ctx, r->src[0], &nodes, &count));
  *out = true;
  for (size_t k = 0; k < count; k++) {
    const uop *n = nodes[k];
    if ((n->op == UOP_RANGE && is_local_like(n)) || (n->op == UOP_SPECIAL && n->arg.str && n->arg.str[0] == 'l'))
      *out = false;
  }
  return HCQ_OK;
}

/* The ranges open around the source of reduce `red` other than its own: ranges used in x that no REDUCE or STORE
 * inside x closes. The local-like ones (sorted by id) go to loc[], their count to *nloc; *in_loop tells whether a
 * loop range (LOOP, REDUCE) is open, which must have the same trip count in every thread. UPCAST/UNROLL ranges are
 * allowed only before the expander (allow_unexpanded). */
static hcq_status outer_ranges(uop_ctx *ctx, const uop *red, bool allow_unexpanded, bool upcast_dims,
                               const uop **loc, int *nloc, bool *in_loop) {
  *nloc = 0;
  *in_loop = false;
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(ctx, red->src[0], &nodes, &count));
  base_ptrmap closed = {0};
  hcq_status st = HCQ_OK;
  for (size_t k = 0; k < count && !st; k++) {
    const uop *n = nodes[k];
    uint32_t first = n->op == UOP_REDUCE ? 1 : n->op == UOP_STORE ? 2 : n->nsrc;
    for (uint32_t i = first; i < n->nsrc && !st; i++)
      if (!base_ptrmap_put(&closed, n->src[i], 1)) st = hcq_status_make(HCQ_CODE_NOMEM, "group reduce: out of memory");
  }
  for (size_t k = 0; k < count && !st; k++) {
    const uop *n = nodes[k];
    if (n->op != UOP_RANGE || listed(red, 1, n) || base_ptrmap_find(&closed, n)) continue;
    uop_axis at = (uop_axis)n->arg.i2;
    if (at == UOP_AXIS_GLOBAL || at == UOP_AXIS_THREAD) continue;
    if (upcast_dims && at == UOP_AXIS_UPCAST) { /* CPU, before the expander: each lane needs its own slots */
      if (*nloc == MAX_GROUP_DIMS) {
        st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "group reduce: more than %d local dims", MAX_GROUP_DIMS);
        break;
      }
      loc[(*nloc)++] = n;
      continue;
    }
    if (allow_unexpanded && (at == UOP_AXIS_UPCAST || at == UOP_AXIS_UNROLL)) continue;
    if (at == UOP_AXIS_LOOP || at == UOP_AXIS_REDUCE) {
      bool uniform;
      st = uniform_end(ctx, n, &uniform);
      if (!st && !uniform)
        st = hcq_status_make(HCQ_CODE_UNSUPPORTED,
                             "group reduce: the grouped REDUCE sits inside the %s range r%lld whose trip count may "
                             "differ between the threads of a workgroup (its barriers would diverge)",
                             uop_axis_name(at), (long long)n->arg.i);
      *in_loop = true;
      continue;
    }
    if (!is_local_like(n)) {
      st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "group reduce: the grouped REDUCE sits inside the %s range r%lld",
                           uop_axis_name(at), (long long)n->arg.i);
      break;
    }
    if (*nloc == MAX_GROUP_DIMS) {
      st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "group reduce: more than %d local dims", MAX_GROUP_DIMS);
      break;
    }
    loc[(*nloc)++] = n;
  }
  base_ptrmap_free(&closed);
  if (!st) qsort(loc, (size_t)*nloc, sizeof *loc, cmp_range_id);
  return st;
}

hcq_status cc_group_reduce_check(uop_ctx *ctx, const uop *sink) {
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(ctx, sink, &nodes, &count));
  for (size_t k = 0; k < count; k++) {
    const uop *n = nodes[k];
    if (n->op != UOP_REDUCE) continue;
    bool grouped = false;
    for (uint32_t i = 1; i < n->nsrc; i++) grouped |= is_group(n->src[i]);
    if (!grouped) continue;
    const uop *loc[MAX_GROUP_DIMS];
    int nloc;
    bool in_loop;
    HCQ_TRY(outer_ranges(ctx, n, true, false, loc, &nloc, &in_loop));
  }
  return HCQ_OK;
}

typedef struct group_job {
  const cc_target *t;
  bool cpu;                /* CPU cross-thread reduce: THREAD ranges are the group, no store gate (see below) */
  const uop *const *nodes; /* the kernel's nodes, for fresh range ids */
  size_t count;
  int64_t *new_ids;        /* range ids handed out so far */
  size_t nnew, capnew;
  int64_t nlocal;      /* DEFINE_LOCAL numbering */
  int64_t shared_B;    /* bytes of all DEFINE_LOCALs so far */
  const uop *gate;     /* all GROUP_REDUCE ranges == 0 */
  base_ptrmap keep;     /* barriers merge_barriers leaves alone */
} group_job;

/* sum of dims[i] * stride_i, row-major (the last dim fastest); sizes are constant. */
static const uop *linear_index(uop_ctx *ctx, const uop *const *dims, const int64_t *sizes, int n) {
  const uop *idx = NULL;
  int64_t stride = 1;
  for (int i = n; i-- > 0;) {
    const uop *term = stride == 1 ? dims[i] : uop_alu2(ctx, UOP_MUL, dims[i], uop_index_const(ctx, stride));
    idx = idx ? uop_alu2(ctx, UOP_ADD, term, idx) : term;
    stride *= sizes[i];
  }
  return idx ? idx : uop_index_const(ctx, 0);
}

/* The ranges a lowered REDUCE spreads over threads: GROUP_REDUCE ranges, or THREAD ranges in a CPU job. */
static bool is_group_of(const group_job *j, const uop *n) {
  return j->cpu ? n->op == UOP_RANGE && n->arg.i2 == UOP_AXIS_THREAD : is_group(n);
}

static const uop *lower_reduce(group_job *j, uop_ctx *ctx, const uop *n, hcq_status *st) {
  const uop *g[MAX_GROUP_DIMS], *dims[2 * MAX_GROUP_DIMS];
  int64_t sizes[2 * MAX_GROUP_DIMS];
  int ng = 0, nloc = 0;
  /* one shared slot per thread holds one scalar; on CPU the partial may reduce a vector (per-lane accumulators) */
  if (n->dtype.count != 1 || (!j->cpu && n->src[0]->dtype.count != 1)) {
    *st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "group reduce: a vector REDUCE (%u lanes) over GROUP_REDUCE ranges",
                          (unsigned)n->src[0]->dtype.count);
    return NULL;
  }
  const uop **rest = malloc(n->nsrc * sizeof *rest);
  if (!rest) return NULL;
  uint32_t nrest = 0;
  rest[nrest++] = n->src[0];
  for (uint32_t i = 1; i < n->nsrc; i++) {
    if (!is_group_of(j, n->src[i])) {
      rest[nrest++] = n->src[i];
    } else if (ng == MAX_GROUP_DIMS) {
      *st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "group reduce: more than %d GROUP_REDUCE ranges", MAX_GROUP_DIMS);
      free(rest);
      return NULL;
    } else {
      g[ng++] = n->src[i];
    }
  }
  bool in_loop;
  *st = outer_ranges(ctx, n, j->cpu, j->cpu, dims, &nloc, &in_loop);
  if (!*st && j->cpu && in_loop) /* only the last thread goes on past the barrier: it must be the only one */
    *st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "cross-thread reduce: the REDUCE over THREAD range r%lld sits inside "
                          "another range", (long long)g[0]->arg.i);
  if (*st) {
    free(rest);
    return NULL;
  }
  for (int i = 0; i < ng; i++) dims[nloc + i] = g[i];
  int nd = nloc + ng;
  int64_t total = 1;
  for (int i = 0; i < nd; i++) {
    if (!uop_const_value(dims[i]->src[0], &sizes[i]) || sizes[i] < 1) {
      *st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "group reduce: %s range r%lld has no constant size",
                            uop_axis_name((uop_axis)dims[i]->arg.i2), (long long)dims[i]->arg.i);
      free(rest);
      return NULL;
    }
    total *= sizes[i];
    if (total > ((int64_t)1 << 31)) break;
  }
  int64_t bytes = total * uop_dt_itemsize_B(n->dtype);
  if (total > ((int64_t)1 << 31) || (j->t->shared_max_B > 0 && j->shared_B + bytes > j->t->shared_max_B)) {
    *st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "group reduce: shared buffers of %lld bytes (this one %lld elements) "
                          "exceed the target's %lld bytes", (long long)(j->shared_B + bytes), (long long)total,
                          (long long)j->t->shared_max_B);
    free(rest);
    return NULL;
  }
  j->shared_B += bytes;
  bool keep_reduce = nrest > 1 || n->src[0]->dtype.count != 1; /* a vector source still needs its horizontal reduce */
  const uop *partial = !keep_reduce ? n->src[0] : uop_new(ctx, UOP_REDUCE, n->dtype, rest, nrest, n->arg);
  free(rest);
  const uop *buf = uop_new(ctx, UOP_DEFINE_LOCAL, uop_dt_ptr(n->dtype, UOP_AS_LOCAL, total), NULL, 0,
                           uop_arg_int(j->nlocal++));
  if (!partial || !buf) return NULL;
  /* partial -> shared[lin(l, g)], closing g. Inside a loop the store also waits at a barrier on the partial: every
   * thread has then finished the previous iteration's reads of the buffer. */
  /* slot order: GPU [l..., g...]; CPU [g..., l...]: each thread's lanes contiguous, so its partial is one vector
   * store and the combine reads whole vectors (the lanes fold in vectorize.c) */
  const uop *ord[2 * MAX_GROUP_DIMS];
  int64_t ordsz[2 * MAX_GROUP_DIMS];
  for (int i = 0; i < nd; i++) {
    int from = !j->cpu ? i : i < ng ? nloc + i : i - ng;
    ord[i] = dims[from];
    ordsz[i] = sizes[from];
  }
  const uop *wsrc[2] = {buf, linear_index(ctx, ord, ordsz, nd)};
  const uop *widx = uop_new(ctx, UOP_INDEX_OP, buf->dtype, wsrc, 2, uop_arg_none());
  const uop *ssrc[3 + 2 * MAX_GROUP_DIMS] = {widx, partial};
  uint32_t nss = 2;
  for (int i = 0; i < ng; i++) ssrc[nss++] = g[i];
  for (int i = 0; j->cpu && i < nloc; i++) ssrc[nss++] = dims[i]; /* CPU: the UPCAST lanes, expanded later */
  const uop *pre = in_loop ? uop_new(ctx, UOP_BARRIER, uop_dt(UOP_VOID), &partial, 1, uop_arg_none()) : NULL;
  if (pre) ssrc[nss++] = pre;
  const uop *store = uop_new(ctx, UOP_STORE, uop_dt(UOP_VOID), ssrc, nss, uop_arg_none());
  const uop *bar = uop_new(ctx, UOP_BARRIER, uop_dt(UOP_VOID), &store, 1, uop_arg_none());
  /* barriers inside loops stay apart from the others (merging them would pull other work into the loop) */
  if (in_loop && (!pre || !base_ptrmap_put(&j->keep, pre, 1) || !bar || !base_ptrmap_put(&j->keep, bar, 1))) return NULL;
  /* read back over new reduce ranges q */
  const uop *q[MAX_GROUP_DIMS];
  for (int i = 0; i < ng; i++) {
    int64_t id;
    if (j->nnew == j->capnew) {
      size_t nc = j->capnew ? j->capnew * 2 : 8;
      int64_t *ni = realloc(j->new_ids, nc * sizeof *ni);
      if (!ni) return NULL;
      j->new_ids = ni;
      j->capnew = nc;
    }
    if ((*st = cc_fresh_range_id(j->nodes, j->count, j->new_ids, j->nnew, &id))) return NULL;
    j->new_ids[j->nnew++] = id;
    q[i] = uop_range(ctx, g[i]->src[0], id, UOP_AXIS_REDUCE);
  }
  for (int i = 0; i < ng; i++) ord[j->cpu ? i : nloc + i] = q[i];
  const uop *rsrc[2] = {buf, linear_index(ctx, ord, ordsz, nd)};
  const uop *ridx = uop_new(ctx, UOP_INDEX_OP, buf->dtype, rsrc, 2, uop_arg_none());
  const uop *lsrc[2] = {ridx, bar};
  const uop *ld = uop_new(ctx, UOP_LOAD, n->dtype, lsrc, 2, uop_arg_none());
  const uop *fsrc[1 + MAX_GROUP_DIMS] = {ld};
  for (int i = 0; i < ng; i++) fsrc[1 + i] = q[i];
  const uop *value = uop_new(ctx, UOP_REDUCE, n->dtype, fsrc, 1 + (uint32_t)ng, n->arg);
  if (!value) return NULL;
  return value;
}

/* Every global STORE is gated on (g == 0) for all GROUP_REDUCE ranges g of the kernel: after the lowering no
 * stored value or address differs between the threads of one group, so one of them writes. */
static const uop *gate_store(group_job *j, uop_ctx *ctx, const uop *n) {
  const uop *idx = n->src[0];
  if (idx->op != UOP_INDEX_OP || idx->nsrc < 2 || idx->src[0]->op != UOP_DEFINE_GLOBAL) return n;
  const uop *cond = idx->nsrc >= 3 ? uop_alu2(ctx, UOP_AND, idx->src[2], j->gate) : j->gate;
  const uop *isrc[3] = {idx->src[0], idx->src[1], cond};
  const uop *gidx = uop_new(ctx, UOP_INDEX_OP, idx->dtype, isrc, 3, idx->arg);
  if (!gidx) return NULL;
  const uop **src = malloc(n->nsrc * sizeof *src);
  if (!src) return NULL;
  for (uint32_t i = 0; i < n->nsrc; i++) src[i] = n->src[i];
  src[0] = gidx;
  const uop *out = uop_replace_src(ctx, n, src, n->nsrc);
  free(src);
  return out;
}

static const uop *group_fn(void *user, uop_ctx *ctx, const uop *n, hcq_status *st) {
  group_job *j = user;
  if (n->op == UOP_STORE && n->nsrc >= 2) return j->cpu ? n : gate_store(j, ctx, n);
  if (n->op != UOP_REDUCE) return n;
  for (uint32_t i = 1; i < n->nsrc; i++)
    if (is_group_of(j, n->src[i])) return lower_reduce(j, ctx, n, st);
  return n;
}


/* One BARRIER for independent group reduces (the lanes of an UPCAST, two outputs): barriers are ranked by how many
 * barriers lie under them, and all of one rank become a single BARRIER over all their stores. Two barriers of one
 * rank cannot depend on each other, so no cycle appears; every thread still passes each barrier once. */
static hcq_status merge_barriers(uop_ctx *ctx, const base_ptrmap *keep, const uop *sink, const uop **out_sink) {
  *out_sink = sink;
  for (int rank = 1;; rank++) {
    const uop **nodes;
    size_t count;
    HCQ_TRY(uop_toposort(ctx, *out_sink, &nodes, &count));
    base_ptrmap level = {0};
    const uop **same = malloc((count + 1) * sizeof *same);
    const uop **stores = malloc((count + 1) * sizeof *stores);
    size_t nsame = 0, nstores = 0;
    hcq_status st = same && stores ? HCQ_OK : hcq_status_make(HCQ_CODE_NOMEM, "group reduce: out of memory");
    for (size_t k = 0; k < count && !st; k++) {
      const uop *n = nodes[k];
      uintptr_t lv = 0;
      for (uint32_t i = 0; i < n->nsrc; i++) {
        uintptr_t *m = base_ptrmap_find(&level, n->src[i]);
        if (m && *m > lv) lv = *m;
      }
      if (n->op == UOP_BARRIER && ++lv == (uintptr_t)rank && !base_ptrmap_find(keep, n)) {
        same[nsame++] = n;
        for (uint32_t i = 0; i < n->nsrc; i++) stores[nstores++] = n->src[i];
      }
      if (lv && !base_ptrmap_put(&level, n, lv)) st = hcq_status_make(HCQ_CODE_NOMEM, "group reduce: out of memory");
    }
    base_ptrmap_free(&level);
    const uop *merged = NULL;
    if (!st && nsame > 1) {
      merged = uop_new(ctx, UOP_BARRIER, uop_dt(UOP_VOID), stores, (uint32_t)nstores, uop_arg_none());
      if (!merged) st = hcq_status_make(HCQ_CODE_NOMEM, "group reduce: out of memory");
      for (size_t i = 0; i < nsame && !st; i++) stores[i] = merged; /* reused as the `to` list */
      if (!st) st = uop_substitute(ctx, *out_sink, same, stores, nsame, out_sink);
    }
    free(same);
    free(stores);
    if (st) return st;
    if (nsame == 0) return HCQ_OK;
  }
}

static hcq_status group_pass(cc_pass_ctx *pc, const uop *sink, bool cpu, const uop **out_sink) {
  *out_sink = NULL;
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(pc->ctx, sink, &nodes, &count));
  group_job j = {.t = pc->target, .cpu = cpu, .nodes = nodes, .count = count};
  const uop *first = NULL;
  for (size_t k = 0; k < count && cpu; k++) { /* CPU: REDUCEs that list the THREAD range */
    const uop *n = nodes[k];
    if (n->op == UOP_DEFINE_LOCAL && n->arg.i >= j.nlocal) j.nlocal = n->arg.i + 1;
    for (uint32_t i = 1; n->op == UOP_REDUCE && i < n->nsrc; i++)
      if (is_group_of(&j, n->src[i])) first = n->src[i];
  }
  for (size_t k = 0; k < count && !cpu; k++) {
    const uop *n = nodes[k];
    if (n->op == UOP_DEFINE_LOCAL && n->arg.i >= j.nlocal) j.nlocal = n->arg.i + 1; /* keep ids unique */
    if (n->op != UOP_RANGE) continue;
    if (!is_group(n)) continue;
    if (!first) first = n;
    const uop *c = uop_alu2(pc->ctx, UOP_CMPEQ, n, uop_index_const(pc->ctx, 0));
    j.gate = j.gate ? uop_alu2(pc->ctx, UOP_AND, j.gate, c) : c;
  }
  if (!first) {
    *out_sink = sink;
    /* CPU, after the expander: a cross-thread reduce's lanes (UPCAST) each got a BARRIER; they become one */
    if (!cpu && pc->target->has_threads) {
      hcq_status st = merge_barriers(pc->ctx, &j.keep, sink, out_sink);
      base_ptrmap_free(&j.keep);
      return st;
    }
    return HCQ_OK;
  }
  if (j.cpu && !pc->target->has_threads)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "cross-thread reduce: target %s has no threads (THREAD range r%lld)",
                           pc->target->name, (long long)first->arg.i);
  if (!j.cpu && (!pc->target->has_local || !pc->target->has_shared))
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "group reduce: target %s has no local dims or shared memory "
                           "(GROUP_REDUCE range r%lld)", pc->target->name, (long long)first->arg.i);
  const uop *lowered;
  if (!j.cpu && !j.gate) return hcq_status_make(HCQ_CODE_NOMEM, "group reduce: out of memory");
  hcq_status st = cc_rebuild(pc->ctx, sink, group_fn, &j, &lowered);
  if (!st) st = merge_barriers(pc->ctx, &j.keep, lowered, &lowered);
  base_ptrmap_free(&j.keep);
  free(j.new_ids);
  if (st) return st;
  const uop_pm *pm = uop_symbolic_pm();
  if (!pm) return hcq_status_make(HCQ_CODE_INTERNAL, "group reduce: the symbolic rule set failed to build");
  return uop_graph_rewrite(pc->ctx, lowered, pm, UOP_REWRITE_SOURCES_FIRST, NULL, out_sink);
}

hcq_status cc_pass_group_reduce(cc_pass_ctx *pc, const uop *sink, const uop **out_sink) {
  return group_pass(pc, sink, false, out_sink);
}

hcq_status cc_pass_thread_reduce(cc_pass_ctx *pc, const uop *sink, const uop **out_sink) {
  return group_pass(pc, sink, true, out_sink);
}
