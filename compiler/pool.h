/* cc_pool: the heap blocks a renderer hands out while it works (formatted strings, small arrays), freed together
 * when the render ends. Header-only; private to compiler/. */
#ifndef HCQ_COMPILER_POOL_H
#define HCQ_COMPILER_POOL_H

#include <stdlib.h>

typedef struct cc_pool {
  void **items;
  size_t len, cap;
} cc_pool;

/* Keep p until cc_pool_free. Returns p, or NULL when p is NULL or the list cannot grow (then p is freed). */
static inline void *cc_pool_keep(cc_pool *pool, void *p) {
  if (!p) return NULL;
  if (pool->len == pool->cap) {
    size_t cap = pool->cap ? pool->cap * 2 : 64;
    void **items = realloc(pool->items, cap * sizeof *items);
    if (!items) {
      free(p);
      return NULL;
    }
    pool->items = items;
    pool->cap = cap;
  }
  pool->items[pool->len++] = p;
  return p;
}

static inline void cc_pool_free(cc_pool *pool) {
  for (size_t i = 0; i < pool->len; i++) free(pool->items[i]);
  free(pool->items);
  pool->items = NULL;
  pool->len = pool->cap = 0;
}

#endif
