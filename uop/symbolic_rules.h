/* Internal to the symbolic simplifier: the sum/term algebra shared by the rule families, and the family tables.
 * A canonical index sum is a left-associated ADD chain of terms sorted by uop_struct_cmp, then one constant:
 * ((t0 + t1) + t2) + k, where a term is `base` (coefficient 1) or (MUL base c). A canonical product is a left
 * associated MUL chain of sorted non-constant factors, then one constant. */
#ifndef HCQ_UOP_SYMBOLIC_RULES_H
#define HCQ_UOP_SYMBOLIC_RULES_H

#include <stdbool.h>

#include "uop/match.h"
#include "uop/symbolic.h"

#define SYM_MAX_TERMS 48

typedef struct sym_term {
  const uop *base;
  int64_t coeff;
} sym_term;

typedef struct sym_sum {
  int n;
  int64_t k; /* constant addend */
  sym_term t[SYM_MAX_TERMS];
} sym_sum;

/* Split an index expression into terms (like terms combined); false if too many terms or a coefficient overflows. */
bool sym_decompose(const uop *x, sym_sum *s);
/* Add coeff*base to s (combining with an equal base); false on overflow or too many terms. */
bool sym_sum_add(sym_sum *s, const uop *base, int64_t coeff);
/* Build the canonical index node of s (terms with coefficient 0 dropped). NULL on out-of-memory. */
const uop *sym_build(uop_ctx *ctx, const sym_sum *s);
/* Sound bounds of s from its terms' bounds; false if unbounded or overflowing. */
bool sym_sum_bounds(const sym_sum *s, int64_t *lo, int64_t *hi);
/* coeff*base as a node (coefficient 1: base itself). */
const uop *sym_term_node(uop_ctx *ctx, const uop *base, int64_t coeff);
/* a*c + b as a canonical index expression. */
const uop *sym_lin(uop_ctx *ctx, const uop *a, int64_t c, int64_t b);

/* Bounds of n if they are finite, known (not uint64, not the unbounded index extremes). */
bool sym_bounds(const uop *n, int64_t *lo, int64_t *hi);
int64_t sym_gcd(int64_t a, int64_t b); /* non-negative; gcd(0, 0) = 0 */
int64_t sym_ceildiv(int64_t a, int64_t d); /* d > 0 */
static inline bool sym_is_index(const uop *n) {
  return n->dtype.scalar == UOP_INDEX && n->dtype.count <= 1 && n->dtype.addrspace == UOP_AS_NONE;
}
static inline bool sym_is_bool(const uop *n) {
  return n->dtype.scalar == UOP_BOOL && n->dtype.count <= 1 && n->dtype.addrspace == UOP_AS_NONE;
}
const uop *sym_not(uop_ctx *ctx, const uop *b); /* (b != true), folding !!x */

/* Memo slot of the current simplification: the gate-nesting depth (the gate rules stop at the maximum depth, so
 * each depth has its own results). */
int sym_memo_slot(void);

/* The families, in priority order. */
extern const uop_rule sym_rules_fold[];
extern const size_t sym_rules_fold_count;
extern const uop_rule sym_rules_sum[];
extern const size_t sym_rules_sum_count;
extern const uop_rule sym_rules_divmod[];
extern const size_t sym_rules_divmod_count;
extern const uop_rule sym_rules_cmp[];
extern const size_t sym_rules_cmp_count;
extern const uop_rule sym_rules_valid[];
extern const size_t sym_rules_valid_count;

#endif
