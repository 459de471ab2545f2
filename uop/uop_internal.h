/* Private helpers shared by the uop implementation files: a pointer-keyed hash map and a growable pointer stack. */
#ifndef HCQ_UOP_INTERNAL_H
#define HCQ_UOP_INTERNAL_H

#include <stdlib.h>
#include <string.h>

#include "uop/match.h"
#include "uop/uop.h"

/* Open-addressing map from a node pointer to a word (pointer or integer). Key NULL marks an empty slot. Key and
 * value share a slot (one cache line per probe); the load factor stays at most 1/2 so probes are short. */
typedef struct base_ptrmap_slot {
  const void *key;
  uintptr_t val;
} base_ptrmap_slot;

typedef struct base_ptrmap {
  base_ptrmap_slot *slots;
  size_t cap, count; /* cap is 0 or a power of two */
} base_ptrmap;

static inline size_t base_ptrhash(const void *p) {
  uint64_t h = (uint64_t)(uintptr_t)p;
  h ^= h >> 29;
  h *= 0x9E3779B97F4A7C15ull;
  return (size_t)(h ^ (h >> 32));
}

static inline void base_ptrmap_free(base_ptrmap *m) {
  free(m->slots);
  memset(m, 0, sizeof *m);
}

/* Returns the slot of key, or NULL if absent. */
static inline uintptr_t *base_ptrmap_find(const base_ptrmap *m, const void *key) {
  if (!m->cap) return NULL;
  size_t mask = m->cap - 1;
  for (size_t i = base_ptrhash(key) & mask;; i = (i + 1) & mask) {
    if (m->slots[i].key == key) return &m->slots[i].val;
    if (!m->slots[i].key) return NULL;
  }
}

static inline bool base_ptrmap_grow(base_ptrmap *m) {
  size_t ncap = m->cap ? m->cap * 2 : 32;
  base_ptrmap_slot *ns = calloc(ncap, sizeof *ns);
  if (!ns) return false;
  for (size_t j = 0; j < m->cap; j++) {
    if (!m->slots[j].key) continue;
    size_t i = base_ptrhash(m->slots[j].key) & (ncap - 1);
    while (ns[i].key) i = (i + 1) & (ncap - 1);
    ns[i] = m->slots[j];
  }
  free(m->slots);
  m->slots = ns;
  m->cap = ncap;
  return true;
}

/* Find key, or insert it with value `init`; returns its value slot, NULL on out-of-memory. */
static inline uintptr_t *base_ptrmap_get_or_put(base_ptrmap *m, const void *key, uintptr_t init) {
  if ((m->count + 1) * 2 > m->cap && !base_ptrmap_grow(m)) return NULL;
  size_t mask = m->cap - 1;
  size_t i = base_ptrhash(key) & mask;
  while (m->slots[i].key && m->slots[i].key != key) i = (i + 1) & mask;
  if (!m->slots[i].key) {
    m->slots[i].key = key;
    m->slots[i].val = init;
    m->count++;
  }
  return &m->slots[i].val;
}

/* Insert or overwrite. Returns false on out-of-memory. */
static inline bool base_ptrmap_put(base_ptrmap *m, const void *key, uintptr_t val) {
  uintptr_t *slot = base_ptrmap_get_or_put(m, key, val);
  if (!slot) return false;
  *slot = val;
  return true;
}

/* Remove (backward-shift deletion keeps probe chains intact). */
static inline void base_ptrmap_del(base_ptrmap *m, const void *key) {
  if (!m->cap) return;
  size_t mask = m->cap - 1;
  size_t i = base_ptrhash(key) & mask;
  while (m->slots[i].key != key) {
    if (!m->slots[i].key) return;
    i = (i + 1) & mask;
  }
  m->count--;
  for (size_t j = (i + 1) & mask; m->slots[j].key; j = (j + 1) & mask) {
    size_t home = base_ptrhash(m->slots[j].key) & mask;
    /* can the entry at j move to the hole at i? only if its home is not in (i, j] cyclically */
    if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
      m->slots[i] = m->slots[j];
      i = j;
    }
  }
  m->slots[i].key = NULL;
}

/* Growable array of words used as an explicit stack. */
typedef struct base_vec {
  uintptr_t *v;
  size_t n, cap;
} base_vec;

static inline bool base_vec_push(base_vec *s, uintptr_t x) {
  if (s->n == s->cap) {
    size_t ncap = s->cap ? s->cap * 2 : 64;
    uintptr_t *nv = realloc(s->v, ncap * sizeof *nv);
    if (!nv) return false;
    s->v = nv;
    s->cap = ncap;
  }
  s->v[s->n++] = x;
  return true;
}

static inline void base_vec_free(base_vec *s) {
  free(s->v);
  memset(s, 0, sizeof *s);
}

/* True once an allocation in ctx failed (sticky). */
bool uop_ctx_is_oom(const uop_ctx *ctx);

/* Per-context rewrite memo for matchers whose result on a node is a pure function of the node (uop_pm_set_memo):
 * `replace` maps node -> its final rewrite and is kept across uop_graph_rewrite calls, one per slot (the symbolic
 * rules use the gate-nesting depth as the slot, since deeper levels skip the gate rules). `inprog` and `stack` are
 * scratch reused by the next call (left empty by a call that succeeds; a failed call clears them).
 * uop_ctx_memo_acquire returns NULL when the slot is out of range, belongs to another matcher or is in use by an
 * enclosing rewrite (then the caller uses private maps); a non-NULL memo must be released. */
#define UOP_CTX_MEMO_SLOTS 4
typedef struct uop_rw_memo {
  base_ptrmap replace, inprog;
  base_vec stack;
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

/* Empty the map, keeping its storage. */
static inline void base_ptrmap_clear(base_ptrmap *m) {
  if (m->count) memset(m->slots, 0, m->cap * sizeof *m->slots);
  m->count = 0;
}

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
