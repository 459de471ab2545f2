/* The kernel optimizer's entry points, called by the pipeline's "optimize" and "expand" slots (reference
 * tinygrad/codegen/opt/postrange.py and tinygrad/codegen/late/expander.py).
 *
 * cc_optimize works on the canonical kernel AST (a SINK of STOREs whose trailing sources list the RANGEs they close,
 * REDUCEs listing theirs): it applies the explicit opts of `o` in order, or the hand-coded heuristic when o->opts is
 * NULL (nothing when o->noopt). Ranges keep being plain ranges with an axis type, so the reference interpreter runs
 * the result unchanged. An opt that does not apply is an error naming the opt, the axis and the rule.
 *
 * cc_expand removes the UPCAST and UNROLL ranges: a STORE over UPCAST ranges becomes one STORE per lane (the range
 * substituted by each constant), a REDUCE over UNROLL ranges reduces the combined lanes over its other ranges. */
#ifndef HCQ_COMPILER_OPT_H
#define HCQ_COMPILER_OPT_H

#include "compiler/compiler.h"

/* *out_sink: the optimized AST; *applied (malloc'd, may be NULL when *napplied is 0): the opts applied, as the
 * axis/amount values given (explicit) or chosen (heuristic). o may be NULL (= heuristic). */
hcq_status cc_optimize(uop_ctx *ctx, const uop *sink, const cc_target *t, const cc_options *o, const uop **out_sink,
                       cc_opt **applied, size_t *napplied);

hcq_status cc_expand(uop_ctx *ctx, const uop *sink, const cc_target *t, const uop **out_sink);

#endif
