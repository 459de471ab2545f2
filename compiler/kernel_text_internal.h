/* Private pieces shared by kernel_text.c, kernel_parse.c, kernel_print.c, kernel_valid.c and interp*.c:
 * a pointer-keyed hash map (on base_ptrmap) and the typing rules of the named forms (one function used by
 * the parser to build and by the printer to decide whether a node can be written in a named form). */
#ifndef HCQ_COMPILER_KERNEL_TEXT_INTERNAL_H
#define HCQ_COMPILER_KERNEL_TEXT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/kernel_text.h"
#include "uop/uop_internal.h"

/* ------------------------------------------------------------------------------------------------ pointer map */

/* A node-keyed map of words: base_ptrmap (uop/uop_internal.h) with a sticky flag set when an insert runs out of
 * memory, so a walk can check once at the end. */
typedef struct kt_map {
  base_ptrmap m;
  bool failed;
} kt_map;

static inline void kt_map_free(kt_map *m) {
  base_ptrmap_free(&m->m);
  m->failed = false;
}

static inline intptr_t *kt_map_find(const kt_map *m, const void *key) {
  return (intptr_t *)base_ptrmap_find(&m->m, key);
}

/* Insert (or find) key; returns its value slot (new slots hold `init`), NULL on out of memory. */
static inline intptr_t *kt_map_put(kt_map *m, const void *key, intptr_t init) {
  uintptr_t *slot = base_ptrmap_get_or_put(&m->m, key, (uintptr_t)init);
  if (!slot) m->failed = true;
  return (intptr_t *)slot;
}

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

/* The named-form head word of an ALU op, or NULL. */
const char *kt_alu_word(uop_op op);
bool kt_alu_from_word(const char *s, size_t len, uop_op *out);

#endif
