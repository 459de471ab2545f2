/* A pointer-keyed open-addressing hash map (the compiler's and the symbolic engine's node maps). Header-only:
 * every function is small and on hot paths. */
#ifndef HCQ_BASE_PTRMAP_H
#define HCQ_BASE_PTRMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* Empty the map, keeping its storage. */
static inline void base_ptrmap_clear(base_ptrmap *m) {
  if (m->count) memset(m->slots, 0, m->cap * sizeof *m->slots);
  m->count = 0;
}

#endif
