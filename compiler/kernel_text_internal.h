/* Private pieces shared by kernel_text.c, kernel_parse.c, kernel_print.c, kernel_valid.c and interp*.c:
 * a pointer-keyed hash map, a growable text buffer, and the typing rules of the named forms (one function used by
 * the parser to build and by the printer to decide whether a node can be written in a named form). */
#ifndef HCQ_COMPILER_KERNEL_TEXT_INTERNAL_H
#define HCQ_COMPILER_KERNEL_TEXT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/kernel_text.h"

/* ------------------------------------------------------------------------------------------------ pointer map */

typedef struct kt_map {
  const void **keys;
  intptr_t *vals;
  size_t cap, count;
  bool failed; /* an insert ran out of memory */
} kt_map;

static inline size_t kt_hash(const void *p) {
  uint64_t h = (uint64_t)(uintptr_t)p;
  h ^= h >> 29;
  h *= 0x9E3779B97F4A7C15ull;
  return (size_t)(h ^ (h >> 32));
}

static inline void kt_map_free(kt_map *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

static inline intptr_t *kt_map_find(const kt_map *m, const void *key) {
  if (!m->cap) return NULL;
  size_t mask = m->cap - 1;
  for (size_t i = kt_hash(key) & mask;; i = (i + 1) & mask) {
    if (m->keys[i] == key) return &m->vals[i];
    if (!m->keys[i]) return NULL;
  }
}

/* Insert (or find) key; returns its value slot (new slots hold `init`), NULL on out of memory. */
static inline intptr_t *kt_map_put(kt_map *m, const void *key, intptr_t init) {
  if ((m->count + 1) * 2 > m->cap) {
    size_t ncap = m->cap ? m->cap * 2 : 64;
    const void **nk = calloc(ncap, sizeof *nk);
    intptr_t *nv = calloc(ncap, sizeof *nv);
    if (!nk || !nv) {
      free(nk);
      free(nv);
      m->failed = true;
      return NULL;
    }
    for (size_t j = 0; j < m->cap; j++) {
      if (!m->keys[j]) continue;
      size_t i = kt_hash(m->keys[j]) & (ncap - 1);
      while (nk[i]) i = (i + 1) & (ncap - 1);
      nk[i] = m->keys[j];
      nv[i] = m->vals[j];
    }
    free(m->keys);
    free(m->vals);
    m->keys = nk;
    m->vals = nv;
    m->cap = ncap;
  }
  size_t mask = m->cap - 1, i = kt_hash(key) & mask;
  for (; m->keys[i]; i = (i + 1) & mask)
    if (m->keys[i] == key) return &m->vals[i];
  m->keys[i] = key;
  m->vals[i] = init;
  m->count++;
  return &m->vals[i];
}

/* ------------------------------------------------------------------------------------------------ text buffer */

typedef struct kt_buf {
  char *data;
  size_t len, cap;
  bool failed;
} kt_buf;

static inline void kt_buf_add(kt_buf *b, const char *s, size_t n) {
  if (b->failed) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
      b->failed = true;
      return;
    }
    b->data = p;
    b->cap = cap;
  }
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}

static inline void kt_buf_puts(kt_buf *b, const char *s) { kt_buf_add(b, s, strlen(s)); }

/* ------------------------------------------------------------------------------------------------ typing */

/* The dtype a named form with op `op` builds from its sources (for CAST/BITCAST: the given dtype `cast_dt`), or
 * false with a message in msg naming what is wrong. Ops without a source-typed named form return false. */
bool kt_form_dtype(uop_op op, const uop *const *src, uint32_t nsrc, uop_dtype cast_dt, uop_dtype *out_dt, char *msg,
                   size_t cap);
/* True when a and b are the same dtype in every field that node identity compares. */
static inline bool kt_dt_same(uop_dtype a, uop_dtype b) { return uop_dt_eq(a, b) && a.ptr_v == b.ptr_v; }

bool kt_is_identifier(const char *s, size_t len);
/* Words that cannot be let names (they are atoms of the grammar). */
bool kt_is_reserved(const char *s, size_t len);
/* Float range of a float scalar (largest finite). */
double kt_float_max(uop_scalar s);

/* The named-form head word of an ALU op, or NULL. */
const char *kt_alu_word(uop_op op);
bool kt_alu_from_word(const char *s, size_t len, uop_op *out);

#endif
