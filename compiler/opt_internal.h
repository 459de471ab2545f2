/* Private interface of the optimizer (opts.c: the scheduler view and apply_opt; heuristic.c: hand-coded opts).
 *
 * The scheduler view of a kernel (reference tinygrad/codegen/opt/postrange.py): its RANGEs of size > 1 (vmax > 0),
 * OUTER ones (KBLOCK) left out, sorted by axis position (LOOP -1, THREAD/GLOBAL 0, WARP 1, LOCAL/GROUP_REDUCE 2, UPCAST 3, REDUCE 4, UNROLL 5), then
 * by id. "Axis k" of an opt is rngs[k]. The view is recomputed after every opt. */
#ifndef HCQ_COMPILER_OPT_INTERNAL_H
#define HCQ_COMPILER_OPT_INTERNAL_H

#include "compiler/compiler.h"

/* Per-lane reduce accumulators may fill up to this many vectors (independent add chains that hide the add latency:
 * a reduce unrolled by the vector width and then by this many more; expander.c, heuristic.c). */
#define CC_REDUCE_CHAINS 4

typedef struct cc_sched {
  uop_ctx *ctx;
  const cc_target *t;
  const uop *sink;
  const uop **rngs; /* sorted axes (malloc'd) */
  size_t nrngs;
  bool dont_use_locals;
  cc_opt *applied; /* malloc'd */
  size_t napplied, capplied;
} cc_sched;

hcq_status cc_sched_init(cc_sched *s, uop_ctx *ctx, const uop *sink, const cc_target *t);
void cc_sched_free(cc_sched *s);
/* Recompute rngs from s->sink. */
hcq_status cc_sched_refresh(cc_sched *s);

/* Apply one opt; on error s is unchanged and the message names the opt, the axis and the rule violated.
 * On success the opt is appended to s->applied. */
hcq_status cc_apply_opt(cc_sched *s, cc_opt opt);

/* LOOP ranges that become GLOBAL on targets with local dims (reference 3.8 step 3). */
hcq_status cc_convert_loop_to_global(cc_sched *s);

/* The hand-coded heuristic (reference tinygrad/codegen/opt/heuristic.py): applies its opts to s. */
hcq_status cc_hand_coded(cc_sched *s);

/* Sizes: the constant end of an axis, or -1 when symbolic. */
int64_t cc_axis_size(const uop *rng);
uop_axis cc_axis_type(const uop *rng);
/* Ranges the first STORE lists (and every other STORE too) that are LOOP: the ones THREAD may split. */
bool cc_globalizable(const cc_sched *s, const uop *rng);

/* If expr is a multiple of d (constant, product with a multiple, sum of multiples), *out = expr / d. */
bool cc_divides(uop_ctx *ctx, const uop *expr, int64_t d, const uop **out);

/* The INDEX nodes of global buffers (loads and stores), in toposort order. *out is malloc'd. */
hcq_status cc_sched_bufs(const cc_sched *s, const uop ***out, size_t *out_count);
/* True if `needle` occurs in the DAG under `root`. */
bool cc_uses(const uop *root, const uop *needle);

/* kblock.c: KBLOCK on reduce axis rng: *out_sink is the blocked kernel (not yet simplified), or NULL with *why
 * saying why the opt does not apply. */
hcq_status cc_kblock(cc_sched *s, const uop *rng, int64_t amount, const uop **out_sink, const char **why);
/* The block size for a reduce axis of size k (amount 0, and the heuristic's choice): the largest divisor of k in
 * [CC_KBLOCK_MAX/4, CC_KBLOCK_MAX], or 0 (no block) if there is none or it is k itself. */
#ifndef CC_KBLOCK_MAX
#define CC_KBLOCK_MAX 128
#endif
int64_t cc_kblock_auto(int64_t k);

/* group_reduce.c: error if a REDUCE over GROUP_REDUCE ranges cannot be lowered (inside a loop whose trip count
 * may differ between the threads of a workgroup). */
hcq_status cc_group_reduce_check(uop_ctx *ctx, const uop *sink);

#endif
