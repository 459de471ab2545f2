/* A growable array of words, used as an explicit stack (graph walks without recursion). Header-only. */
#ifndef HCQ_BASE_VEC_H
#define HCQ_BASE_VEC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

#endif
