/* symbolic: hcq's algebraic simplifier for index/int/bool expressions (reference tinygrad/uop/symbolic.py).
 *
 * The rule set is data: uop_rule tables (patterns in the match.h language plus callbacks), split by family into
 * symbolic_*.c, compiled once into one immutable matcher. Every rule is sound under C semantics: `//` and `%`
 * truncate toward zero, fixed-width ints wrap; rules that need a sign or range check it with uop_vmin/uop_vmax.
 */
#ifndef HCQ_UOP_SYMBOLIC_H
#define HCQ_UOP_SYMBOLIC_H

#include "uop/match.h"
#include "uop/uop.h"

/* Simplify expr with the full symbolic rule set to a fixed point (sources first). *out is interned in ctx. */
hcq_status uop_simplify(uop_ctx *ctx, const uop *expr, const uop **out);

/* Simplify u assuming the bool expression `valid` holds (reference 4.6: bounds of variables are narrowed from the
 * clauses of valid, and clauses are substituted by true). *out = NULL if valid is unsatisfiable. */
hcq_status uop_given_valid(uop_ctx *ctx, const uop *valid, const uop *u, const uop **out);

/* Simplify a gate: drop clauses of `valid` implied by the others (reference 4.6 simplify_valid). */
hcq_status uop_simplify_valid(uop_ctx *ctx, const uop *valid, const uop **out);

/* The compiled symbolic rule set, built once (thread-safe), immutable; NULL only if building it failed. */
const uop_pm *uop_symbolic_pm(void);

/* Floor division and modulo helpers (Python semantics) for constants; d != 0. */
int64_t uop_floordiv(int64_t a, int64_t d);
int64_t uop_floormod(int64_t a, int64_t d);

#endif
