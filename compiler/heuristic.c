/* The hand-coded heuristic (reference tinygrad/codegen/opt/heuristic.py), in the reference's order: GROUPTOP (targets
 * with locals), full upcast of small masked axes, the upcast loop, reduce unroll, default upcast, locals (targets with
 * locals), THREAD last (an output loop axis; in a kernel without one that is one reduce, such as a sum, the reduce
 * axis: a cross-thread reduce, group_reduce.c). CPU targets with cpu_tiles deviate: reduce kernels get a vectorizable
 * register tile instead of the upcast loop and unroll (column reduces: the output axis upcast by the vector width, then
 * by 4 chains, rows blocked by 8 (KBLOCK) over a panel bigger than an L2, a row count 8 does not divide padded up
 * to a multiple first (PADTO); other reduces: cpu_vector_reduce; a register-tiled reduce over a big panel: KBLOCK,
 * compiler/kblock.c, and THREAD on the tile's lane axis rather than the first output axis when the k-slice is big),
 * transposes a 16x4 tile instead of the default upcast (axes off the tile's multiples padded first: PADTO). Tensor
 * cores and the matvec special case are not implemented. An opt the checks refuse is skipped (the reference would skip
 * or end that step too). */
#include <stdlib.h>
#include <string.h>

#include "compiler/opt_internal.h"

#define MAX_AXES 64
/* GROUPTOP in the heuristic (group_reduce.c lowers GROUP_REDUCE ranges to shared memory). */
#define CC_HEURISTIC_GROUPTOP 1
/* Transpose tile on CPU targets: lanes along the store's contiguous axis (16 floats: a whole 64-byte line written
 * per visit, so the power-of-two row stride's cache set conflicts cost nothing) and along the load's. */
#ifndef CC_HEURISTIC_CPU_TILE_STORE
#define CC_HEURISTIC_CPU_TILE_STORE 16
#endif
#ifndef CC_HEURISTIC_CPU_TILE_LOAD
#define CC_HEURISTIC_CPU_TILE_LOAD 4
#endif
/* Register tile of reduce kernels on CPU targets: accumulator lanes along the output's contiguous axis x rows. */
#ifndef CC_HEURISTIC_CPU_REG_LANES
#define CC_HEURISTIC_CPU_REG_LANES 16
#endif
/* ... times this many on targets whose vectors hold all of CC_HEURISTIC_CPU_REG_LANES (AVX-512: 32 registers), where
 * the output is wide enough: 8 rows of 2 vectors are 16 accumulators, and each k step loads 2 B vectors and 8 A
 * broadcasts for 16 FMAs instead of 1 and 8 for 8 (measured as the kernel threads' CPU time, 2 threads, on a shared
 * Zen 4 VM, medians of 8-20 interleaved rounds: 4096x256x4096 18% less, matmul_2048 4-5%, matmul_1024 0-10%;
 * 512, 1000 and batched_64 the same). */
#ifndef CC_HEURISTIC_CPU_REG_VECS
#define CC_HEURISTIC_CPU_REG_VECS 2
#endif
/* ... for products of at least this many multiply-adds (1024^3). The wide tile doubles the lanes the pipeline expands
 * (matmul_512: 5.2k -> 10.2k nodes, compile 0.74-0.99 -> 2.0-2.4 ms in hcq bench's cold row) and gains nothing
 * measurable at 512^3 (the same run time within noise), so smaller products keep one vector a row. */
#ifndef CC_HEURISTIC_CPU_WIDE_MIN_MACS
#define CC_HEURISTIC_CPU_WIDE_MIN_MACS ((int64_t)1 << 30)
#endif
#ifndef CC_HEURISTIC_CPU_REG_ROWS
#define CC_HEURISTIC_CPU_REG_ROWS 8
#endif
/* ... and the input panel size above which the lane axis becomes the outer loop (about a quarter of an L3). */
#ifndef CC_HEURISTIC_CPU_SWAP_B
#define CC_HEURISTIC_CPU_SWAP_B ((int64_t)8 << 20)
#endif
/* ... or, first choice, the panel size above which the reduce axis is cache-blocked (KBLOCK: about an L2; the block,
 * cc_kblock_auto's, is at most CC_KBLOCK_MAX: the panel's k-slice, block x lanes x 4 bytes, stays in the L2 while the
 * row tiles pass). */
#ifndef CC_HEURISTIC_CPU_KBLOCK_B
#define CC_HEURISTIC_CPU_KBLOCK_B ((int64_t)1 << 20)
#endif

/* ... but only when k holds at least this many blocks */
#ifndef CC_HEURISTIC_CPU_KBLOCK_MIN
#define CC_HEURISTIC_CPU_KBLOCK_MIN 4
#endif
/* ... and the k-slice size (block, or all of k when unblocked for few blocks, x lane-axis width x 4 bytes) above
 * which the threads split the tile's lane axis rather than its rows: about half an L2 (with a power-of-two row
 * stride a bigger slice fills every way of the L2 sets it maps to). */
#ifndef CC_HEURISTIC_CPU_LANE_THREAD_B
#define CC_HEURISTIC_CPU_LANE_THREAD_B ((int64_t)512 << 10)
#endif

/* Column reduces on CPU targets whose strided column strips cover more than CC_HEURISTIC_CPU_KBLOCK_B (reduce size x
 * row stride): the reduce axis is blocked by this many rows (KBLOCK; partial sums through the output), so the rows of
 * one block stream through the cache side by side while the strips pass over them, instead of every strip walking
 * the whole height a page apart (4096x4096 column sums: about 2.5x faster). */
#ifndef CC_HEURISTIC_CPU_COL_BLOCK
#define CC_HEURISTIC_CPU_COL_BLOCK 8
#endif

/* Apply an opt; a refusal (HCQ_CODE_INVALID) sets *ok = false and is not an error. */
static hcq_status try_opt(cc_sched *s, cc_opt_op op, int axis, int64_t amount, bool *ok) {
  cc_opt o = {.op = op, .axis = axis, .amount = amount};
  hcq_status st = cc_apply_opt(s, o);
  *ok = st == HCQ_OK;
  if (st && hcq_status_code(st) == HCQ_CODE_INVALID) {
    hcq_status_free(st);
    return HCQ_OK;
  }
  return st;
}

static bool is_type(const uop *r, uint32_t mask) { return (mask >> cc_axis_type(r)) & 1u; }
#define AX(t) (1u << UOP_AXIS_##t)

/* Indices of the axes whose type is in mask (and, if const_only, whose size is constant). */
static size_t axes_of(const cc_sched *s, uint32_t mask, bool const_only, int *out) {
  size_t n = 0;
  for (size_t i = 0; i < s->nrngs && i < MAX_AXES; i++)
    if (is_type(s->rngs[i], mask) && (!const_only || cc_axis_size(s->rngs[i]) >= 0)) out[n++] = (int)i;
  return n;
}

static size_t upcastable(const cc_sched *s, int *out) { return axes_of(s, AX(GLOBAL) | AX(LOCAL) | AX(LOOP), true, out); }
static size_t unrollable(const cc_sched *s, int *out) { return axes_of(s, AX(REDUCE) | AX(GROUP_REDUCE), true, out); }

static int64_t size_of(const cc_sched *s, int axis) { return cc_axis_size(s->rngs[axis]); }

static int64_t sat_mul(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return a * b;
  return a > INT64_MAX / b ? INT64_MAX : a * b;
}

/* Product of the output (upcastable) axis sizes: all constant. */
static int64_t output_prod(const cc_sched *s) {
  int ax[MAX_AXES];
  size_t n = upcastable(s, ax);
  int64_t p = 1;
  for (size_t i = 0; i < n; i++) p = sat_mul(p, size_of(s, ax[i]));
  return p;
}

static bool is_masked(const cc_sched *s, const uop *rng) {
  const uop **nodes;
  size_t count;
  hcq_status st = uop_toposort(s->ctx, s->sink, &nodes, &count);
  if (st) {
    hcq_status_free(st);
    return false;
  }
  for (size_t k = 0; k < count; k++) {
    const uop *n = nodes[k];
    if (n->op == UOP_INDEX_OP && n->nsrc > 2 && cc_uses(n->src[2], rng)) return true;
    if (n->op == UOP_WHERE && cc_uses(n->src[0], rng)) return true;
  }
  return false;
}

/* Stride terms of idx: the sum of c over terms rng*c (and 1 for a bare rng term). */
static int64_t stride_sum(const uop *idx, const uop *rng) {
  if (idx->op == UOP_ADD) return stride_sum(idx->src[0], rng) + stride_sum(idx->src[1], rng);
  if (idx == rng) return 1;
  int64_t c;
  if (idx->op == UOP_MUL && idx->src[0] == rng && uop_const_value(idx->src[1], &c)) return c;
  return 0;
}

typedef struct choice {
  int64_t nstrides, sum_strides;
  int axis;
  int64_t amount;
} choice;

static int choice_cmp(const choice *a, const choice *b) {
  if (a->nstrides != b->nstrides) return a->nstrides < b->nstrides ? -1 : 1;
  if (a->sum_strides != b->sum_strides) return a->sum_strides < b->sum_strides ? -1 : 1;
  if (a->axis != b->axis) return a->axis < b->axis ? -1 : 1;
  return a->amount < b->amount ? -1 : a->amount > b->amount;
}

/* Step 5: while the output has >= 1024 elements, upcast by 3 or 4 an axis some buffer ignores while it uses every
 * current UPCAST/UNROLL range; pick the smallest (buffers using it, sum of its strides, axis, amount). */
static hcq_status upcast_loop(cc_sched *s) {
  bool upcasted[MAX_AXES] = {0};
  while (output_prod(s) >= 1024) {
    int ax[MAX_AXES], up[MAX_AXES];
    size_t n = upcastable(s, ax), nup = axes_of(s, AX(UPCAST) | AX(UNROLL), false, up);
    const uop **bufs;
    size_t nbufs;
    HCQ_TRY(cc_sched_bufs(s, &bufs, &nbufs));
    choice best = {0};
    bool have = false;
    for (size_t i = 0; i < n; i++) {
      for (int64_t amt = 3; amt <= 4; amt++) {
        int axis = ax[i];
        if (upcasted[axis] || size_of(s, axis) % amt) continue;
        const uop *rng = s->rngs[axis];
        bool ok = false;
        for (size_t b = 0; b < nbufs && !ok; b++) {
          const uop *idx = bufs[b]->src[1];
          if (cc_uses(idx, rng)) continue;
          bool all = true;
          for (size_t u = 0; u < nup && all; u++) all = cc_uses(idx, s->rngs[up[u]]);
          ok = all;
        }
        if (!ok) continue;
        choice c = {.axis = axis, .amount = amt};
        for (size_t b = 0; b < nbufs; b++) {
          const uop *idx = bufs[b]->src[1];
          if (cc_uses(idx, rng)) c.nstrides++;
          c.sum_strides += stride_sum(idx, rng);
        }
        if (!have || choice_cmp(&c, &best) < 0) best = c;
        have = true;
      }
    }
    free(bufs);
    if (!have) break;
    bool ok;
    HCQ_TRY(try_opt(s, CC_OPT_UPCAST, best.axis, best.amount, &ok));
    if (!ok) break;
    upcasted[best.axis] = true;
  }
  return HCQ_OK;
}

static hcq_status reduce_unroll(cc_sched *s) {
  int up[MAX_AXES], un[MAX_AXES];
  size_t nup = axes_of(s, AX(UPCAST) | AX(UNROLL), false, up);
  int64_t upcast_size = 1;
  for (size_t i = 0; i < nup; i++) upcast_size = sat_mul(upcast_size, uop_vmax(s->rngs[up[i]]) + 1);
  size_t nun = unrollable(s, un);
  bool has_unroll = axes_of(s, AX(UNROLL), false, up) > 0;
  if (!nun || !(upcast_size <= 4 || !has_unroll) || upcast_size >= 64) return HCQ_OK;
  int64_t last = size_of(s, un[nun - 1]);
  bool ok;
  if (last <= 32) {
    HCQ_TRY(try_opt(s, CC_OPT_UNROLL, (int)nun - 1, 0, &ok));
    if (!ok) return HCQ_OK;
    /* a tiny reduce: unroll the next one too */
    nun = unrollable(s, un);
    if (nun && last <= 3 && size_of(s, un[nun - 1]) <= 3) HCQ_TRY(try_opt(s, CC_OPT_UNROLL, (int)nun - 1, 0, &ok));
  } else if (last % 4 == 0) {
    HCQ_TRY(try_opt(s, CC_OPT_UNROLL, (int)nun - 1, 4, &ok));
  }
  return HCQ_OK;
}

typedef struct local_rank {
  bool ignored;
  int axis;
} local_rank;

static hcq_status locals(cc_sched *s) {
  int ax[MAX_AXES];
  size_t n = axes_of(s, AX(GLOBAL) | AX(LOOP), true, ax);
  const uop **bufs;
  size_t nbufs;
  HCQ_TRY(cc_sched_bufs(s, &bufs, &nbufs));
  local_rank rank[MAX_AXES];
  for (size_t i = 0; i < n; i++) {
    rank[i] = (local_rank){.axis = ax[i]};
    for (size_t b = 0; b < nbufs && !rank[i].ignored; b++) rank[i].ignored = !cc_uses(bufs[b]->src[1], s->rngs[ax[i]]);
  }
  free(bufs);
  /* "some buffer ignores it" first, then higher axis first */
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0; j--) {
      local_rank a = rank[j - 1], b = rank[j];
      bool swap = a.ignored != b.ignored ? b.ignored : b.axis > a.axis;
      if (!swap) break;
      rank[j - 1] = b;
      rank[j] = a;
    }
  int to_axis[MAX_AXES];
  int64_t to_size[MAX_AXES];
  size_t nto = 0;
  int64_t local_size = 1;
  for (size_t i = 0; i < n; i++) {
    static const int64_t CANDS[] = {32, 16, 8, 4, 3, 2};
    for (size_t c = rank[i].axis == 0 ? 0 : 1; c < sizeof CANDS / sizeof CANDS[0]; c++) {
      if (size_of(s, rank[i].axis) % CANDS[c] == 0 && local_size * CANDS[c] <= 128) {
        to_axis[nto] = rank[i].axis;
        to_size[nto++] = CANDS[c];
        local_size *= CANDS[c];
        break;
      }
    }
  }
  if (nto > 3) nto = 3;
  /* apply in axis order; an axis used up entirely leaves the view, shifting the later ones */
  for (size_t i = 1; i < nto; i++)
    for (size_t j = i; j > 0 && to_axis[j - 1] > to_axis[j]; j--) {
      int ta = to_axis[j - 1];
      int64_t ts = to_size[j - 1];
      to_axis[j - 1] = to_axis[j];
      to_size[j - 1] = to_size[j];
      to_axis[j] = ta;
      to_size[j] = ts;
    }
  int deleted = 0;
  for (size_t i = 0; i < nto; i++) {
    int axis = to_axis[i] - deleted;
    bool will_delete = to_size[i] == size_of(s, axis);
    bool ok;
    HCQ_TRY(try_opt(s, CC_OPT_LOCAL, axis, to_size[i], &ok));
    if (ok && will_delete) deleted++;
  }
  return HCQ_OK;
}

/* prefer_id: the range id of a LOOP axis to split first (a blocked register tile's lane axis), or -1. */
static hcq_status threads(cc_sched *s, int64_t prefer_id) {
  static const int64_t COUNTS[] = {32, 16, 12, 8, 6, 5, 4, 3, 2};
  /* symbolic sizes count at their largest (THREAD gates a symbolic axis it cannot divide) */
  int64_t full = 1;
  for (size_t i = 0; i < s->nrngs; i++) {
    const uop *end = s->rngs[i]->src[0];
    full = sat_mul(full, cc_axis_size(s->rngs[i]) >= 0 ? uop_vmin(end) : uop_vmax(end));
  }
  /* and a KBLOCK's OUTER loop, out of the view (its size is constant) */
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(s->ctx, s->sink, &nodes, &count));
  for (size_t k = 0; k < count; k++)
    if (nodes[k]->op == UOP_RANGE && cc_axis_type(nodes[k]) == UOP_AXIS_OUTER && cc_axis_size(nodes[k]) > 0)
      full = sat_mul(full, cc_axis_size(nodes[k]));
  for (size_t c = 0; c < sizeof COUNTS / sizeof COUNTS[0]; c++) {
    int64_t t = COUNTS[c];
    if (t > s->t->global_max[0] || full / 131072 < t) continue;
    int ax[MAX_AXES];
    size_t n = axes_of(s, AX(LOOP), false, ax);
    for (size_t i = 1; i < n; i++) /* the preferred axis first, the rest in order */
      if (s->rngs[ax[i]]->arg.i == prefer_id) {
        int a = ax[i];
        memmove(ax + 1, ax, i * sizeof *ax);
        ax[0] = a;
        break;
      }
    for (size_t i = 0; i < n; i++) {
      const uop *q;
      if (cc_axis_size(s->rngs[ax[i]]) >= 0 && !cc_divides(s->ctx, s->rngs[ax[i]]->src[0], t, &q)) continue;
      bool ok;
      HCQ_TRY(try_opt(s, CC_OPT_THREAD, ax[i], t, &ok));
      if (ok) return HCQ_OK;
    }
    /* no output loop to split (a full reduce such as sum): a cross-thread reduce over the outermost reduce axis */
    for (size_t i = 0, nr = n ? 0 : axes_of(s, AX(REDUCE), true, ax); i < nr; i++) {
      bool ok;
      HCQ_TRY(try_opt(s, CC_OPT_THREAD, ax[i], t, &ok));
      if (ok) return HCQ_OK;
    }
  }
  return HCQ_OK;
}

/* The axis along which idx is contiguous (a term rng*1), or -1. */
static int unit_stride_axis(const cc_sched *s, const uop *idx, const int *ax, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (stride_sum(idx, s->rngs[ax[i]]) == 1) return ax[i];
  return -1;
}

/* CPU targets (cpu_tiles): a kernel that stores contiguously along one axis and loads contiguously along another (a
 * transpose) gets both axes upcast, so each step reads and writes short contiguous runs instead of striding
 * through a new page per element. Returns whether it applied anything. */
static hcq_status cpu_transpose_tile(cc_sched *s, int64_t tile_store, int64_t tile_load, bool *applied) {
  *applied = false;
  int ax[MAX_AXES];
  size_t n = upcastable(s, ax);
  if (n < 2) return HCQ_OK;
  int store_axis = -1, load_axis = -1;
  for (uint32_t i = 0; i < s->sink->nsrc; i++) {
    const uop *st = s->sink->src[i];
    if (st->op != UOP_STORE || st->src[0]->op != UOP_INDEX_OP) return HCQ_OK;
    int a = unit_stride_axis(s, st->src[0]->src[1], ax, n);
    if (a < 0 || (store_axis >= 0 && a != store_axis)) return HCQ_OK;
    store_axis = a;
  }
  const uop **bufs;
  size_t nbufs;
  HCQ_TRY(cc_sched_bufs(s, &bufs, &nbufs));
  for (size_t b = 0; b < nbufs && load_axis < 0; b++) {
    int a = unit_stride_axis(s, bufs[b]->src[1], ax, n);
    if (a >= 0 && a != store_axis) load_axis = a;
  }
  free(bufs);
  if (store_axis < 0 || load_axis < 0) return HCQ_OK;
  /* An axis that is not a multiple of twice its tile (the 2 keeps THREAD:2 possible) is padded up to one (PADTO:
   * gated loads and stores in the tail) when it is at least 8 tiles long (under a quarter more work); shorter
   * ones leave the kernel untiled. 4096x4097: 5x faster padded and tiled than untiled. */
  int64_t ss = size_of(s, store_axis), ls = size_of(s, load_axis);
  if ((ss % (2 * tile_store) && ss < 8 * tile_store) || (ls % (2 * tile_load) && ls < 8 * tile_load)) return HCQ_OK;
  bool ok;
  const uop *before = s->sink;
  size_t napplied = s->napplied;
  if (ss % (2 * tile_store)) HCQ_TRY(try_opt(s, CC_OPT_PADTO, store_axis, 2 * tile_store, &ok));
  if (ss % (2 * tile_store) && !ok) return HCQ_OK;
  if (ls % (2 * tile_load)) HCQ_TRY(try_opt(s, CC_OPT_PADTO, load_axis, 2 * tile_load, &ok));
  if (ls % (2 * tile_load) && !ok) { /* undo the first pad: an untiled kernel gains nothing from it */
    s->sink = before;
    s->napplied = napplied;
    return cc_sched_refresh(s);
  }
  /* both axes stay in the view (amount < size), so the second axis number is still valid after the first upcast */
  HCQ_TRY(try_opt(s, CC_OPT_UPCAST, store_axis, tile_store, &ok));
  if (!ok) return HCQ_OK;
  HCQ_TRY(try_opt(s, CC_OPT_UPCAST, load_axis, tile_load, &ok));
  *applied = true;
  return HCQ_OK;
}

/* Block the reduce axis (range id krng_id, the kblock_axis-th REDUCE axis, ksize rows) of a column reduce by
 * CC_HEURISTIC_CPU_COL_BLOCK rows. A row count the block does not divide (1030, 4097, a prime) is padded up to a
 * multiple first (PADTO: the padded rows' loads are gated to 0; only the last block has any), which keeps the
 * blocked loop, one compare per row, about as fast as a dividing count's (4097x4096 col sums: 1.5-2.2x faster than
 * unblocked, within the noise of 4096x4096; KBLOCK:17 was slower); 4097 = 17 x 241, a prime has no block. If KBLOCK
 * refuses, the pad is undone: alone it gains nothing. */
static hcq_status col_block(cc_sched *s, int64_t krng_id, int kblock_axis, int64_t ksize) {
  const uop *before = s->sink;
  size_t napplied = s->napplied;
  bool ok;
  if (ksize % CC_HEURISTIC_CPU_COL_BLOCK) {
    int axis = -1;
    for (size_t i = 0; i < s->nrngs && i < MAX_AXES && axis < 0; i++)
      if (s->rngs[i]->arg.i == krng_id && cc_axis_type(s->rngs[i]) == UOP_AXIS_REDUCE) axis = (int)i;
    if (axis < 0) return HCQ_OK;
    HCQ_TRY(try_opt(s, CC_OPT_PADTO, axis, CC_HEURISTIC_CPU_COL_BLOCK, &ok));
    if (!ok) return HCQ_OK;
  }
  HCQ_TRY(try_opt(s, CC_OPT_KBLOCK, kblock_axis, CC_HEURISTIC_CPU_COL_BLOCK, &ok));
  if (ok || s->napplied == napplied) return HCQ_OK;
  s->sink = before;
  s->napplied = napplied;
  return cc_sched_refresh(s);
}

/* CPU targets (cpu_tiles): a reduce kernel whose one store is contiguous along an output axis while no load is
 * contiguous along the last reduce axis (a column reduce) gets that output axis upcast by the vector width (one
 * vector of accumulators, loaded and stored whole), and by CC_REDUCE_CHAINS more where the columns allow; when strips
 * of columns are left and the panel they walk down is bigger than an L2, the reduce axis is blocked
 * (CC_HEURISTIC_CPU_COL_BLOCK, padded to a multiple of the block first: col_block). Returns whether it applied
 * anything. */
static hcq_status cpu_column_reduce(cc_sched *s, bool *applied) {
  *applied = false;
  int ax[MAX_AXES], un[MAX_AXES];
  size_t n = upcastable(s, ax), nun = unrollable(s, un);
  int64_t w = s->t->vector_max;
  if (!n || !nun || w < 4 || s->sink->nsrc != 1) return HCQ_OK;
  const uop *st = s->sink->src[0];
  if (st->op != UOP_STORE || st->src[0]->op != UOP_INDEX_OP) return HCQ_OK;
  int lane_axis = unit_stride_axis(s, st->src[0]->src[1], ax, n);
  if (lane_axis < 0 || size_of(s, lane_axis) % w) return HCQ_OK;
  const uop **bufs;
  size_t nbufs;
  HCQ_TRY(cc_sched_bufs(s, &bufs, &nbufs));
  bool along_reduce = false;
  for (size_t b = 0; b < nbufs; b++) along_reduce |= stride_sum(bufs[b]->src[1], s->rngs[un[nun - 1]]) == 1;
  /* the bytes one column strip walks: the reduce size times its row stride in the load */
  int64_t ksize = size_of(s, un[nun - 1]), stride = 0;
  for (size_t b = 0; b < nbufs; b++) {
    int64_t sb = stride_sum(bufs[b]->src[1], s->rngs[un[nun - 1]]);
    stride = sb > stride ? sb : stride;
  }
  free(bufs);
  if (along_reduce) return HCQ_OK;
  int64_t krng_id = s->rngs[un[nun - 1]]->arg.i; /* the upcasts renumber the axes, not the ranges */
  bool ok;
  int64_t strips = size_of(s, lane_axis) / w; /* the lane axis's size after the upcast; 1: used up, out of the view */
  HCQ_TRY(try_opt(s, CC_OPT_UPCAST, lane_axis, w, &ok));
  *applied = ok;
  if (!ok) return HCQ_OK;
  /* then by CC_REDUCE_CHAINS more (the axis stays while columns are left): that many vectors of columns, independent
   * add chains */
  if (strips % CC_REDUCE_CHAINS == 0 && strips > CC_REDUCE_CHAINS) {
    HCQ_TRY(try_opt(s, CC_OPT_UPCAST, lane_axis, CC_REDUCE_CHAINS, &ok));
    if (ok) strips /= CC_REDUCE_CHAINS;
  }
  /* strips left to walk down a panel bigger than the L2: block the rows */
  if (strips > 1 && sat_mul(sat_mul(ksize, stride), 4) > CC_HEURISTIC_CPU_KBLOCK_B &&
      ksize > CC_HEURISTIC_CPU_COL_BLOCK)
    HCQ_TRY(col_block(s, krng_id, (int)nun - 1, ksize));
  return HCQ_OK;
}

/* True when every REDUCE is a float32 ADD, MUL or MAX: the ones the expander gives per-lane accumulators (an
 * integer reduce unrolled further would only add lanes to its one accumulator). */
static hcq_status float_reduces_only(cc_sched *s, bool *out) {
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(s->ctx, s->sink, &nodes, &count));
  *out = true;
  for (size_t k = 0; k < count; k++)
    if (nodes[k]->op == UOP_REDUCE)
      *out &= nodes[k]->dtype.scalar == UOP_FLOAT32 && nodes[k]->dtype.count == 1 &&
              (nodes[k]->arg.i == UOP_ADD || nodes[k]->arg.i == UOP_MUL || nodes[k]->arg.i == UOP_MAX);
  return HCQ_OK;
}

/* CPU targets (cpu_tiles), other reduce kernels (sums, row reduces, softmax): every constant reduce axis the vector
 * width divides unrolled by it (one vector of per-lane accumulators each: expander.c, vectorize.c) and, for float32
 * reduces, by CC_REDUCE_CHAINS more where the axis allows (that many vectors: independent add chains), and the store's
 * contiguous output axis upcast by it when no reduce reads that axis (softmax's elementwise tail). Returns whether it
 * applied anything. */
static hcq_status cpu_vector_reduce(cc_sched *s, bool *applied) {
  *applied = false;
  int64_t w = s->t->vector_max;
  int un[MAX_AXES], ax[MAX_AXES];
  size_t nun = unrollable(s, un);
  if (w < 4 || !nun) return HCQ_OK;
  bool ok, chains;
  HCQ_TRY(float_reduces_only(s, &chains));
  for (size_t i = nun; i-- > 0;) /* last first: an axis that stays (w < size) keeps the numbers before it */
    if (size_of(s, un[i]) % w == 0 && size_of(s, un[i]) > w) {
      HCQ_TRY(try_opt(s, CC_OPT_UNROLL, (int)i, w, &ok));
      *applied |= ok;
      /* then by CC_REDUCE_CHAINS more: that many vector accumulators, independent add (max) chains */
      int64_t rest = size_of(s, un[i]);
      if (ok && chains && rest % CC_REDUCE_CHAINS == 0 && rest > CC_REDUCE_CHAINS)
        HCQ_TRY(try_opt(s, CC_OPT_UNROLL, (int)i, CC_REDUCE_CHAINS, &ok));
    }
  size_t n = upcastable(s, ax);
  if (!*applied || !n || s->sink->nsrc != 1) return HCQ_OK;
  const uop *st = s->sink->src[0];
  if (st->op != UOP_STORE || st->src[0]->op != UOP_INDEX_OP) return HCQ_OK;
  int lane_axis = unit_stride_axis(s, st->src[0]->src[1], ax, n);
  if (lane_axis < 0 || size_of(s, lane_axis) % w) return HCQ_OK;
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(s->ctx, s->sink, &nodes, &count));
  for (size_t k = 0; k < count; k++)
    if (nodes[k]->op == UOP_REDUCE && cc_uses(nodes[k]->src[0], s->rngs[lane_axis])) return HCQ_OK;
  HCQ_TRY(try_opt(s, CC_OPT_UPCAST, lane_axis, w, &ok));
  return HCQ_OK;
}

/* CPU targets (cpu_tiles), reduce kernels such as matmul: instead of the reference's 4x4 upcasts, a register tile the
 * C compiler vectorizes: 16 lanes along the axis the store is contiguous on (one 512-bit vector, or several narrower
 * ones, of accumulators; two 512-bit vectors, 32 lanes, with AVX-512 where the width allows:
 * CC_HEURISTIC_CPU_REG_VECS, for products of at least CC_HEURISTIC_CPU_WIDE_MIN_MACS) times `rows` along another
 * output axis, each axis ignored by some buffer (so its lanes reuse loads: a matmul's B row for every A row). No
 * reduce unroll: the accumulators already fill the registers. An output width the tiles do not cover is padded up to
 * them (cheap edge masking; at most 1/8 more work), and so is a height that leaves an odd count of row tiles (THREAD
 * splits an even one). Returns whether it applied anything. */
static hcq_status cpu_reduce_tile(cc_sched *s, int64_t lanes, int64_t rows, int64_t swap_min_B, bool *applied,
                                  int64_t *thread_id) {
  *applied = false;
  *thread_id = -1;
  int ax[MAX_AXES], un[MAX_AXES];
  size_t n = upcastable(s, ax);
  if (n < 2 || !unrollable(s, un) || s->sink->nsrc != 1) return HCQ_OK;
  const uop *st = s->sink->src[0];
  if (st->op != UOP_STORE || st->src[0]->op != UOP_INDEX_OP) return HCQ_OK;
  int lane_axis = unit_stride_axis(s, st->src[0]->src[1], ax, n);
  if (lane_axis < 0) return HCQ_OK;
  /* A lane axis that whole tiles do not cover (a 1000-wide matmul) is padded up to them (PADTO: masked edge lanes)
   * when that adds at most 1/8 more work: far cheaper than the reference's 4x4 upcasts it would fall back to. Wide
   * tiles (vecs vectors of lanes) first, where they fit that rule (padded to twice the tile, so the axis stays). */
  int64_t macs = output_prod(s);
  for (size_t i = 0, nu = unrollable(s, un); i < nu; i++) macs = sat_mul(macs, size_of(s, un[i]));
  int64_t lane_size = size_of(s, lane_axis);
  int64_t vecs = s->t->vector_max >= lanes && macs >= CC_HEURISTIC_CPU_WIDE_MIN_MACS ? CC_HEURISTIC_CPU_REG_VECS : 1;
  int64_t step = 2 * lanes * vecs, padded = (lane_size + step - 1) / step * step;
  if (vecs > 1 && padded - lane_size > lane_size / 8) {
    vecs = 1;
    step = 2 * lanes;
    padded = (lane_size + step - 1) / step * step;
  }
  if (padded - lane_size > lane_size / 8) return HCQ_OK;
  const uop **bufs;
  size_t nbufs;
  HCQ_TRY(cc_sched_bufs(s, &bufs, &nbufs));
  bool lane_reuse = false;
  int row_axis = -1;
  for (size_t b = 0; b < nbufs; b++) lane_reuse |= !cc_uses(bufs[b]->src[1], s->rngs[lane_axis]);
  /* Rows: an even count of row tiles (or all rows) lets THREAD split the row axis; a height that gives an odd count
   * is first tried with 2 rows more (when a vector holds a row's lanes, AVX-512's 32 registers: 10 rows of 1 or 2
   * vectors are at most 20 accumulators; 1000 rows / 10) or
   * fewer (36 / 6), so no row is gated; else padded to twice the tile when that adds at most 1/8 more work; else
   * `rows` or half of it as the height allows. */
  int64_t row_pad = 0, near_rows[2] = {s->t->vector_max >= lanes ? rows + 2 : 0, rows - 2};
  for (size_t i = 0; i < n && row_axis < 0; i++) {
    int64_t sz = size_of(s, ax[i]), step2 = 2 * rows, sz_pad = (sz + step2 - 1) / step2 * step2;
    bool reuse = false;
    for (size_t b = 0; b < nbufs && !reuse; b++) reuse = !cc_uses(bufs[b]->src[1], s->rngs[ax[i]]);
    if (ax[i] == lane_axis || !reuse) continue;
    if (sz % step2 == 0 || sz == rows) row_axis = ax[i];
    else if (near_rows[0] > 0 && sz % (2 * near_rows[0]) == 0) row_axis = ax[i], rows = near_rows[0];
    else if (near_rows[1] > 0 && sz % (2 * near_rows[1]) == 0) row_axis = ax[i], rows = near_rows[1];
    else if (sz_pad - sz <= sz / 8) row_axis = ax[i], row_pad = step2;
    else if (sz % rows == 0) row_axis = ax[i];
    else if (sz % (rows / 2) == 0) row_axis = ax[i], rows /= 2;
  }
  free(bufs);
  if (!lane_reuse || row_axis < 0) return HCQ_OK;
  /* the panel of the lane-indexed input one row tile reads (a matmul's B: reduce x lane-axis sizes, in bytes) */
  int64_t panel_B = sat_mul(padded, 4);
  for (size_t i = 0, nun = unrollable(s, un); i < nun; i++) panel_B = sat_mul(panel_B, size_of(s, un[i]));
  bool ok;
  if (padded != lane_size) {
    HCQ_TRY(try_opt(s, CC_OPT_PADTO, lane_axis, step, &ok));
    if (!ok) return HCQ_OK; /* e.g. a max reduce: padding is refused, the reference's upcasts follow */
  }
  if (row_pad) HCQ_TRY(try_opt(s, CC_OPT_PADTO, row_axis, row_pad, &ok)); /* refused: an odd tile count, still valid */
  int64_t lane_id = s->rngs[lane_axis]->arg.i; /* kept by the upcast's outer part */
  HCQ_TRY(try_opt(s, CC_OPT_UPCAST, lane_axis, lanes, &ok));
  if (!ok) return HCQ_OK;
  /* the second vector(s): an upcast of the outer part (lanes apart), which stays in the view (padded > lanes * vecs);
   * refused, the tile keeps one vector per row */
  bool wide;
  if (vecs > 1) HCQ_TRY(try_opt(s, CC_OPT_UPCAST, lane_axis, vecs, &wide));
  /* the lane axis stays in the view (lanes < size); the row axis may be used up (rows == size): last, no shift */
  bool row_stays = size_of(s, row_axis) > rows;
  HCQ_TRY(try_opt(s, CC_OPT_UPCAST, row_axis, rows, &ok));
  *applied = true;
  /* A panel bigger than the L2 is re-read from farther for every row tile: block the reduce axis (one k-slice of
   * the panel stays in the L2 while every output tile passes over it, partial sums through the output); else, for
   * a panel bigger than the cache, make the lane axis the outer loop, so one lane tile's column panel stays cached
   * while the row tiles pass. */
  if (panel_B > CC_HEURISTIC_CPU_KBLOCK_B && unrollable(s, un) == 1) {
    int64_t k = size_of(s, un[0]), kc = cc_kblock_auto(k);
    /* fewer blocks than CC_HEURISTIC_CPU_KBLOCK_MIN (k = 256: two): the partial sums' extra pass through the output
     * costs more than the block saves (measured on 4096x256x4096); the panel stays whole */
    bool blocked = false, few = kc && k / kc < CC_HEURISTIC_CPU_KBLOCK_MIN;
    if (kc && !few) HCQ_TRY(try_opt(s, CC_OPT_KBLOCK, 0, kc, &blocked));
    /* a big k-slice (the block's, or the whole unblocked panel's): the threads split the lane axis, so each core's
     * L2 holds only its share of the slice (split rows, every core sweeps the whole slice through its own L2); a
     * small one: rows (A is then read once) */
    if (blocked || few) {
      if (sat_mul(blocked ? kc : k, padded * 4) > CC_HEURISTIC_CPU_LANE_THREAD_B) *thread_id = lane_id;
      return HCQ_OK;
    }
  }
  if (ok && row_stays && row_axis < lane_axis && panel_B > swap_min_B)
    HCQ_TRY(try_opt(s, CC_OPT_SWAP, row_axis, lane_axis, &ok));
  return HCQ_OK;
}

hcq_status cc_hand_coded(cc_sched *s) {
  bool ok;
  int ax[MAX_AXES];
  /* 3: GROUPTOP 16 when the output is small and not symbolic (targets with locals and shared memory); grouped
   * kernels stop here.
   * A grouped reduce that group_reduce.c cannot lower (inside a loop whose trip count differs between threads) is
   * undone. */
  int all_out[MAX_AXES];
  bool out_const = axes_of(s, AX(GLOBAL) | AX(LOCAL) | AX(LOOP), false, all_out) == upcastable(s, ax);
  if (CC_HEURISTIC_GROUPTOP && s->t->has_local && s->t->has_shared && out_const && output_prod(s) <= 2048) {
    const uop *before = s->sink;
    size_t napplied = s->napplied;
    HCQ_TRY(try_opt(s, CC_OPT_GROUPTOP, 0, 16, &ok));
    hcq_status bad = ok ? cc_group_reduce_check(s->ctx, s->sink) : HCQ_OK;
    if (bad) {
      hcq_status_free(bad);
      s->sink = before;
      s->napplied = napplied;
      HCQ_TRY(cc_sched_refresh(s));
    }
  }
  if (axes_of(s, AX(GROUP_REDUCE), false, ax)) return HCQ_OK;

  /* 4: fully upcast small masked axes (product <= 49), last first so earlier axis numbers stay valid */
  int to_up[MAX_AXES];
  size_t nto = 0, n = upcastable(s, ax);
  int64_t prod = 1;
  for (size_t i = 0; i < n; i++) {
    int64_t sz = size_of(s, ax[i]);
    if (sz <= 7 && is_masked(s, s->rngs[ax[i]]) && prod * sz <= 49) {
      to_up[nto++] = ax[i];
      prod *= sz;
    }
  }
  for (size_t i = nto; i-- > 0;) HCQ_TRY(try_opt(s, CC_OPT_UPCAST, to_up[i], 0, &ok));

  /* 5 (CPU): a vectorizable register tile for reduce kernels (not in the reference); else 5: the upcast loop and
   * 6: unroll the last reduce axis */
  bool reg_tiled = false;
  int64_t thread_id = -1;
  if (s->t->cpu_tiles && !nto)
    HCQ_TRY(cpu_reduce_tile(s, CC_HEURISTIC_CPU_REG_LANES, CC_HEURISTIC_CPU_REG_ROWS, CC_HEURISTIC_CPU_SWAP_B,
                            &reg_tiled, &thread_id));
  if (s->t->cpu_tiles && !nto && !reg_tiled) HCQ_TRY(cpu_column_reduce(s, &reg_tiled));
  if (s->t->cpu_tiles && !nto && !reg_tiled) HCQ_TRY(cpu_vector_reduce(s, &reg_tiled));
  if (!reg_tiled) {
    HCQ_TRY(upcast_loop(s));
    HCQ_TRY(reduce_unroll(s));
  }
  /* 7 (CPU): if nothing is upcast, tile a transpose (not in the reference) */
  bool tiled = false;
  if (s->t->cpu_tiles && !axes_of(s, AX(UPCAST) | AX(UNROLL), false, to_up))
    HCQ_TRY(cpu_transpose_tile(s, CC_HEURISTIC_CPU_TILE_STORE, CC_HEURISTIC_CPU_TILE_LOAD, &tiled));
  /* 7: if nothing is upcast, upcast the last upcastable axis by 4 */
  n = upcastable(s, ax);
  if (!tiled && !axes_of(s, AX(UPCAST) | AX(UNROLL), false, to_up) && n && size_of(s, ax[n - 1]) % 4 == 0)
    HCQ_TRY(try_opt(s, CC_OPT_UPCAST, ax[n - 1], 4, &ok));
  /* 8: locals */
  if (s->t->has_local) HCQ_TRY(locals(s));
  /* 9: threads */
  if (s->t->has_threads && s->t->global_max[0] > 0) HCQ_TRY(threads(s, thread_id));
  return HCQ_OK;
}
