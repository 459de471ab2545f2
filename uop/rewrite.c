/* graph_rewrite (both modes, to a fixed point, explicit stack) and substitute. Every node the rewrite meets (the
 * root, each source, each rule's result) must be of its own context: the memo is indexed by node id, so another
 * context's node would read and write a wrong slot; it is refused with a status that names it (foreign_error). */
#include <stdlib.h>

#include "uop/uop_internal.h"

#define MAX_STACK_WORDS ((size_t)1500 * 1000) /* 500k entries of (node, stage, node): >= 200,000-deep chains */
#define MAX_STEPS ((size_t)50 * 1000 * 1000)
#define MAX_CHAIN ((size_t)10 * 1000)          /* node-first: rules applied to one node in a row */
#define NO_MATCH ((uintptr_t)1)

typedef struct rw {
  uop_ctx *ctx;
  uint32_t serial; /* uop_ctx_serial(ctx): the nodes it may meet */
  const uop_pm *pm;
  uop_rewrite_ctx rc;
  bool node_first;
  uop_rw_memo *m;      /* own, or the ctx memo of a memoizable matcher */
  uop_rw_memo own;
  base_ptrmap *replace; /* m->replace: node -> its final rewrite (own maps) */
  bool by_id;           /* ctx memo: the final rewrites are m->fin, indexed by node id (no hashing) */
  base_ptrmap *inprog;  /* m->inprog: nodes whose rewrite is under way (a second entry is a cycle); by id: m->busy */
  base_vec *stack;      /* m->stack */
  base_ptrmap memo;     /* node-first: node -> pm result, or NO_MATCH */
} rw;

static hcq_status oom(rw *w) {
  hcq_status st = uop_ctx_status(w->ctx);
  return st ? st : hcq_status_make(HCQ_CODE_NOMEM, "graph_rewrite: out of memory");
}

/* Room for one more entry (3 words) on the stack; the stack never grows past MAX_STACK_WORDS. */
static __attribute__((noinline)) hcq_status push_grow(rw *w) {
  base_vec *v = w->stack;
  if (v->n + 3 > MAX_STACK_WORDS)
    return hcq_status_make(HCQ_CODE_INVALID, "graph_rewrite: stack limit of %zu entries exceeded (rules do not converge?)",
                           MAX_STACK_WORDS / 3);
  size_t ncap = v->cap ? v->cap * 2 : 96;
  if (ncap > MAX_STACK_WORDS) ncap = MAX_STACK_WORDS;
  uintptr_t *nv = realloc(v->v, ncap * sizeof *nv);
  if (!nv) return oom(w);
  v->v = nv;
  v->cap = ncap;
  return HCQ_OK;
}

/* Inlined: the rewrite loop pushes several entries per node. */
static inline hcq_status push(rw *w, const uop *n, uintptr_t stage, const uop *nn) {
  base_vec *v = w->stack;
  hcq_status st;
  if (v->n + 3 > v->cap && (st = push_grow(w))) return st;
  v->v[v->n] = (uintptr_t)n;
  v->v[v->n + 1] = stage;
  v->v[v->n + 2] = (uintptr_t)nn;
  v->n += 3;
  return HCQ_OK;
}

static inline const uop *final_of(rw *w, const uop *n) {
  if (w->by_id) return n->id < w->m->fin_cap ? w->m->fin[n->id] : NULL;
  uintptr_t *r = base_ptrmap_find(w->replace, n);
  return r ? (const uop *)*r : NULL;
}

/* Grow the by-id arrays to cover node n (rules made nodes since they were sized), with headroom. */
static bool cover(rw *w, const uop *n) {
  uop_rw_memo *m = w->m;
  if (n->id < m->fin_cap) return true;
  size_t want = uop_ctx_node_count(w->ctx) * 2 + 64, ncap = m->fin_cap * 2 > want ? m->fin_cap * 2 : want;
  const uop **nf = realloc(m->fin, ncap * sizeof *nf);
  if (!nf) return false;
  memset(nf + m->fin_cap, 0, (ncap - m->fin_cap) * sizeof *nf);
  m->fin = nf;
  uint8_t *nb = realloc(m->busy, ncap);
  if (!nb) return false; /* fin is longer than fin_cap says: harmless */
  memset(nb + m->fin_cap, 0, ncap - m->fin_cap);
  m->busy = nb;
  m->fin_cap = ncap;
  return true;
}

static inline bool set_final(rw *w, const uop *n, const uop *f) {
  if (!w->by_id) return base_ptrmap_put(w->replace, n, (uintptr_t)f);
  if (!cover(w, n)) return false;
  w->m->fin[n->id] = f;
  return true;
}

/* In progress: n's rewrite is under way (reaching n again is a cycle). */
static bool busy(rw *w, const uop *n) {
  if (w->by_id) return n->id < w->m->fin_cap && w->m->busy[n->id];
  return base_ptrmap_find(w->inprog, n) != NULL;
}

static bool set_busy(rw *w, const uop *n) {
  if (!w->by_id) return base_ptrmap_put(w->inprog, n, 1);
  if (!cover(w, n)) return false;
  w->m->busy[n->id] = 1;
  return true;
}

static void clear_busy(rw *w, const uop *n) {
  if (w->by_id) w->m->busy[n->id] = 0; /* set_busy covered it */
  else base_ptrmap_del(w->inprog, n);
}

static hcq_status memo_try(rw *w, const uop *n, const uop **out) {
  uintptr_t *m = base_ptrmap_find(&w->memo, n);
  if (m) {
    *out = *m == NO_MATCH ? NULL : (const uop *)*m;
    return HCQ_OK;
  }
  const uop *r = uop_pm_rewrite(w->pm, &w->rc, n);
  if (!r && uop_ctx_is_oom(w->ctx)) return oom(w);
  if (!base_ptrmap_put(&w->memo, n, r ? (uintptr_t)r : NO_MATCH)) return oom(w);
  *out = r;
  return HCQ_OK;
}

static hcq_status foreign_error(const uop *n) {
  return hcq_status_make(HCQ_CODE_INVALID, "graph_rewrite: %s (node %u) is of another uop context than the rewrite",
                         uop_op_name((uop_op)n->op), n->id);
}

static hcq_status cycle_error(const uop *n) {
  return hcq_status_make(HCQ_CODE_INVALID, "graph_rewrite: cycle: rewriting %s (node %u) leads back to itself",
                         uop_op_name((uop_op)n->op), n->id);
}

/* Node-first: apply the rules to n until none matches. */
static hcq_status apply_chain(rw *w, const uop *n, const uop **out) {
  const uop *cur = n;
  base_ptrmap seen = {0};
  hcq_status st = HCQ_OK;
  for (size_t k = 0;; k++) {
    const uop *r = NULL;
    if ((st = memo_try(w, cur, &r))) break;
    if (!r) break;
    if (r == n || busy(w, r)) {
      st = cycle_error(n);
      break;
    }
    if (k >= 4) { /* long chains: remember what we saw */
      if (base_ptrmap_find(&seen, r)) {
        st = cycle_error(r);
        break;
      }
      if (!base_ptrmap_put(&seen, cur, 1)) {
        st = oom(w);
        break;
      }
    }
    if (k >= MAX_CHAIN) {
      st = hcq_status_make(HCQ_CODE_INVALID, "graph_rewrite: rules applied %zu times in a row to one node (%s)", k,
                           uop_op_name((uop_op)n->op));
      break;
    }
    cur = r;
  }
  base_ptrmap_free(&seen);
  *out = cur;
  return st;
}

static hcq_status run(rw *w, const uop *root, const uop **out_root) {
  hcq_status st;
  const uop *small[8];
  if (root->ctx_serial_ != w->serial) return foreign_error(root);
  if ((st = push(w, root, 0, root))) return st;
  size_t steps = 0;
  while (w->stack->n) {
    w->stack->n -= 3;
    const uop *n = (const uop *)w->stack->v[w->stack->n];
    uintptr_t stage = w->stack->v[w->stack->n + 1];
    const uop *nn = (const uop *)w->stack->v[w->stack->n + 2];
    if (++steps > MAX_STEPS)
      return hcq_status_make(HCQ_CODE_INVALID, "graph_rewrite: no fixed point after %zu steps", MAX_STEPS);
    if (stage == 0) {
      /* n was checked before it was pushed (the root, a source, a rule's result) */
      if (final_of(w, n)) continue;
      if (busy(w, n)) return cycle_error(n);
      if (w->node_first) {
        if ((st = apply_chain(w, n, &nn))) return st;
        if (nn->ctx_serial_ != w->serial) return foreign_error(nn);
      }
      if (!set_busy(w, n)) return oom(w);
      if ((st = push(w, n, 1, nn))) return st;
      for (uint32_t i = nn->nsrc; i-- > 0;) {
        const uop *s = nn->src[i];
        if (s->ctx_serial_ != w->serial) return foreign_error(s);
        if (!final_of(w, s) && (st = push(w, s, 0, s))) return st;
      }
    } else if (stage == 1) {
      const uop **src = nn->nsrc <= 8 ? small : malloc(nn->nsrc * sizeof *src);
      if (!src) return oom(w);
      bool changed = false;
      for (uint32_t i = 0; i < nn->nsrc; i++) {
        src[i] = final_of(w, nn->src[i]);
        if (!src[i]) { /* cannot happen: every pushed source completes before its user's stage 1 */
          if (src != small) free(src);
          return hcq_status_make(HCQ_CODE_INTERNAL, "graph_rewrite: source of %s not ready", uop_op_name((uop_op)nn->op));
        }
        changed |= src[i] != nn->src[i];
      }
      const uop *next = NULL;
      if (changed) {
        next = uop_replace_src(w->ctx, nn, src, nn->nsrc);
        if (src != small) free(src);
        if (!next) return oom(w);
      } else {
        if (src != small) free(src);
        if (!w->node_first) {
          next = uop_pm_rewrite(w->pm, &w->rc, nn);
          if (!next && uop_ctx_is_oom(w->ctx)) return oom(w);
          if (next && next->ctx_serial_ != w->serial) return foreign_error(next);
        }
      }
      if (next) {
        if ((st = push(w, n, 2, next)) || (st = push(w, next, 0, next))) return st;
      } else {
        if (!set_final(w, n, nn)) return oom(w);
        if (nn != n && !set_final(w, nn, nn)) return oom(w);
        clear_busy(w, n);
      }
    } else {
      const uop *f = final_of(w, nn);
      if (!f) return hcq_status_make(HCQ_CODE_INTERNAL, "graph_rewrite: rewrite of %s not ready", uop_op_name((uop_op)n->op));
      if (!set_final(w, n, f)) return oom(w);
      clear_busy(w, n);
    }
  }
  *out_root = final_of(w, root);
  return *out_root ? HCQ_OK : hcq_status_make(HCQ_CODE_INTERNAL, "graph_rewrite: root not rewritten");
}

hcq_status uop_graph_rewrite(uop_ctx *ctx, const uop *root, const uop_pm *pm, uop_rewrite_mode mode, void *user,
                             const uop **out_root) {
  *out_root = NULL;
  if (!ctx || !root || !pm) return hcq_status_make(HCQ_CODE_INVALID, "graph_rewrite: NULL argument");
  rw w = {.ctx = ctx, .serial = uop_ctx_serial(ctx), .pm = pm, .rc = {ctx, user},
          .node_first = mode == UOP_REWRITE_NODE_FIRST};
  /* Sources-first results of a memoizable matcher are fixed points that depend on the node only: keep them in the
   * context (entries are only added for finished nodes, so they stay valid even if this call fails). */
  int slot = w.node_first ? -1 : uop_pm_memo_slot(pm);
  w.m = slot >= 0 ? uop_ctx_memo_acquire(ctx, pm, slot) : NULL;
  if (!w.m) {
    slot = -1;
    w.m = &w.own;
  }
  w.replace = &w.m->replace;
  w.by_id = slot >= 0;
  w.inprog = &w.m->inprog;
  w.stack = &w.m->stack;
  w.stack->n = 0;
  hcq_status st = run(&w, root, out_root);
  if (st) *out_root = NULL;
  if (slot >= 0) {
    base_ptrmap_clear(w.inprog); /* scratch for the next call */
    if (st && w.m->busy) memset(w.m->busy, 0, w.m->fin_cap); /* a failed call leaves marks (a success none) */
    w.stack->n = 0;
    uop_ctx_memo_release(ctx, slot);
  }
  base_ptrmap_free(&w.own.replace);
  base_ptrmap_free(&w.own.inprog);
  base_vec_free(&w.own.stack);
  base_ptrmap_free(&w.memo);
  return st;
}

/* Simultaneous one-shot replacement: occurrences of from[i] in the graph under root become to[i]; the to[i] are
 * taken as they are (not substituted again), so a map like x -> x+1 is fine. One post-order walk recording node ->
 * result (seeded with the replacements, so the walk stops at them) in the context's epoch-stamped visit arrays when
 * free (this is called a lot, on small graphs, by the gate simplification: nothing is cleared per call). */
hcq_status uop_substitute(uop_ctx *ctx, const uop *root, const uop *const *from, const uop *const *to, size_t count,
                          const uop **out_root) {
  *out_root = NULL;
  if (!ctx || !root) return hcq_status_make(HCQ_CODE_INVALID, "uop_substitute: NULL argument");
  size_t nodes = uop_ctx_node_count(ctx);
  const uint32_t serial = uop_ctx_serial(ctx);
  if (root->ctx_serial_ != serial)
    return hcq_status_make(HCQ_CODE_INVALID, "uop_substitute: the root is not of this context");
  for (size_t i = 0; i < count; i++) {
    if (!from[i] || !to[i]) return hcq_status_make(HCQ_CODE_INVALID, "uop_substitute: NULL entry %zu in the map", i);
    if (from[i]->ctx_serial_ != serial || to[i]->ctx_serial_ != serial)
      return hcq_status_make(HCQ_CODE_INVALID, "uop_substitute: entry %zu is not of this context", i);
  }
  hcq_status st = HCQ_OK;
  uop_visit own = {0}, *v = uop_ctx_visit_acquire(ctx);
  if (!v) {
    v = &own;
    own.cap = nodes;
    own.epoch = 1;
    own.mark = calloc(nodes, sizeof *own.mark);
    own.val = malloc(nodes * sizeof *own.val);
    if (!own.mark || !own.val) goto nomem;
  }
  const uint32_t ep = v->epoch;
  const size_t cap = v->cap;
  uint32_t *mark = v->mark;
  const uop **val = v->val;
  base_vec *stack = &v->stack;
  stack->n = 0;
  const uop *small[8];
  for (size_t i = 0; i < count; i++) {
    mark[from[i]->id] = ep;
    val[from[i]->id] = to[i];
  }
  if (mark[root->id] != ep && !base_vec_push(stack, (uintptr_t)root)) goto nomem;
  while (stack->n) {
    const uop *x = (const uop *)stack->v[stack->n - 1];
    if (mark[x->id] == ep) { /* reached twice before it was finished */
      stack->n--;
      continue;
    }
    bool ready = true;
    for (uint32_t i = x->nsrc; i-- > 0;) {
      const uop *s = x->src[i];
      if (s->ctx_serial_ != serial || s->id >= cap) { /* of this ctx: older than its user, so within cap */
        st = hcq_status_make(HCQ_CODE_INVALID, "uop_substitute: a %s has a source from another context",
                             uop_op_name((uop_op)x->op));
        goto cleanup;
      }
      if (mark[s->id] != ep) {
        ready = false;
        if (!base_vec_push(stack, (uintptr_t)s)) goto nomem;
      }
    }
    if (!ready) continue;
    stack->n--;
    const uop *res = x;
    if (x->nsrc) {
      const uop **src = x->nsrc <= 8 ? small : malloc(x->nsrc * sizeof *src);
      if (!src) goto nomem;
      bool changed = false;
      for (uint32_t i = 0; i < x->nsrc; i++) {
        src[i] = val[x->src[i]->id];
        changed |= src[i] != x->src[i];
      }
      if (changed) res = uop_replace_src(ctx, x, src, x->nsrc);
      if (src != small) free(src);
      if (!res) goto nomem;
    }
    mark[x->id] = ep;
    val[x->id] = res;
  }
  *out_root = val[root->id];
  goto cleanup;
nomem:
  st = uop_ctx_status(ctx);
  if (!st) st = hcq_status_make(HCQ_CODE_NOMEM, "uop_substitute: out of memory");
cleanup:
  if (v == &own) {
    free(own.mark);
    free(own.val);
    base_vec_free(&own.stack);
  } else {
    v->stack.n = 0;
    uop_ctx_visit_release(ctx, v);
  }
  return st;
}
