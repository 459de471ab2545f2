/* Private to uop/: helpers shared by the uop implementation files (per-context memo and visit marks, integer wrap).
 * The containers they use live in the base layer (base/ptrmap.h, base/vec.h). */
#ifndef HCQ_UOP_INTERNAL_H
#define HCQ_UOP_INTERNAL_H

#include <stdlib.h>
#include <string.h>

#include "base/ptrmap.h"
#include "base/vec.h"
#include "uop/match.h"
#include "uop/uop.h"

/* True once an allocation in ctx failed (sticky). */
bool uop_ctx_is_oom(const uop_ctx *ctx);

/* The context's serial (process-wide, nonzero), stamped on its nodes as ctx_serial_: node n is of ctx iff
 * n->ctx_serial_ == uop_ctx_serial(ctx) (walks indexed by node id check it before using n->id). */
uint32_t uop_ctx_serial(const uop_ctx *ctx);

/* Per-context rewrite memo for matchers whose result on a node is a pure function of the node (uop_pm_set_memo):
 * `fin` maps node id -> its final rewrite and is kept across uop_graph_rewrite calls, one per slot (the symbolic
 * rules use the gate-nesting depth as the slot, since deeper levels skip the gate rules). `busy` and `stack` are
 * scratch reused by the next call (left empty by a call that succeeds; a failed call clears them).
 * uop_ctx_memo_acquire returns NULL when the slot is out of range, belongs to another matcher or is in use by an
 * enclosing rewrite (then the caller uses private maps); a non-NULL memo must be released. */
#define UOP_CTX_MEMO_SLOTS 4
typedef struct uop_rw_memo {
  base_ptrmap replace, inprog;
  base_vec stack;
  const uop **fin; /* NULL: none yet; an array by id, not a hash map: the memo covers most of the ctx's nodes */
  uint8_t *busy;   /* node id -> rewrite under way (by id, like fin; same capacity) */
  size_t fin_cap;
} uop_rw_memo;
uop_rw_memo *uop_ctx_memo_acquire(uop_ctx *ctx, const void *owner, int slot);
void uop_ctx_memo_release(uop_ctx *ctx, int slot);


/* Visit marks for graph walks (uop_toposort, uop_substitute): mark[node->id] == epoch means "seen in this walk",
 * so a walk costs nothing for the nodes it does not reach (no per-walk clearing); val[node->id] is the walk's word
 * for a marked node (unset otherwise). The stacks are kept for reuse. Acquire returns NULL when in use or out of
 * memory; otherwise mark and val cover every node now in ctx and epoch is fresh. */
typedef struct uop_visit {
  uint32_t *mark;
  const uop **val;
  size_t cap;
  uint32_t epoch;
  base_vec stack, order;
  bool busy;
} uop_visit;
uop_visit *uop_ctx_visit_acquire(uop_ctx *ctx);
void uop_ctx_visit_release(uop_ctx *ctx, uop_visit *v);

/* Toposort cache: nodes are immutable and interned, so the order under a root is a pure function of the root and
 * an arena array computed once stays valid for the ctx's life. Passes sort the same SINK several times (a pass's
 * own walk, then cc_rebuild's); a few direct-mapped entries keyed by root id catch those repeats. get returns false
 * on a miss; put overwrites the entry. */
#define UOP_CTX_TOPO_SLOTS 8
bool uop_ctx_topo_get(const uop_ctx *ctx, const uop *root, const uop ***out_nodes, size_t *out_count);
void uop_ctx_topo_put(uop_ctx *ctx, const uop *root, const uop **nodes, size_t count);

/* Mark pm as memoizable per context; slot_fn gives the memo slot for the current call (-1: do not memoize). */
typedef int (*uop_pm_memo_slot_fn)(void);
void uop_pm_set_memo(uop_pm *pm, uop_pm_memo_slot_fn slot_fn);
int uop_pm_memo_slot(const uop_pm *pm); /* -1 if pm is not memoizable */

/* Integer helpers used by bounds, evaluation and folding. */
static inline int64_t uop_wrap_to(uop_dtype dt, int64_t v) {
  int bits = uop_dt_bits(dt);
  if (dt.scalar == UOP_BOOL) return v != 0;
  if (!uop_dt_is_int(dt) || bits >= 64) return v;
  uint64_t mask = ((uint64_t)1 << bits) - 1, u = (uint64_t)v & mask;
  if (uop_dt_is_unsigned(dt)) return (int64_t)u;
  if (u >> (bits - 1)) u |= ~mask; /* sign-extend */
  return (int64_t)u;
}

#endif
