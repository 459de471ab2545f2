/* kernel_text: the kernel s-expression format (docs/FORMATS.md): parser, printer and validator.
 *
 * The kernel grammar extends the expression grammar of uop/text.h with buffers, index/load/store, ranges with axis
 * types, reduce, sink, named let-bindings and a generic node form that spells any node of any pipeline stage:
 *
 *   file  := (kernel NAME ITEM... ROOT)          NAME: identifier, "quoted string", or _ (root keeps no name)
 *   ITEM  := (let NAME EXPR)                     binds NAME for the ITEMs and ROOT after it
 *   EXPR  := NAME | INT | true | false | DECIMAL (a float32 constant, e.g. 1.0 -2.5 1e-3)
 *          | (const V DT) | (var NAME MIN MAX DT) | (range ID END [AXIS]) | (special NAME END)
 *          | (buf SLOT DT SIZE) | (index BUF IDX [GATE]) | (load PTR [ALT]) | (store PTR VALUE RANGE...)
 *          | (reduce add|mul|max VALUE RANGE...) | (sink SRC...)
 *          | (OP A B) with OP in + * // % < != & | ^ max << >> - / ==
 *          | (U A) with U in recip trunc exp2 log2 sin sqrt neg | (where C A B) | (mulacc A B C)
 *          | (cast DT A) | (bitcast DT A)
 *          | (op OPNAME DT ARG SRC...)           generic: any op, dtype and arg
 *   DT    := SCALAR | SCALARxN | void | ptr.AS.SCALAR[xN][SIZE][.vK]   AS in global local reg
 *   ARG   := _ | INT | (f V) | (s NAME) | (v NAME MIN MAX) | (r ID AXIS) | (ints INT...)
 *   AXIS  := global warp local loop group_reduce reduce upcast unroll thread
 *
 * The root SINK gets the kernel NAME as its string arg. Typing errors and validation errors are HCQ_CODE_PARSE /
 * HCQ_CODE_INVALID with "FILE:LINE:COL: ..." naming the form.
 */
#ifndef HCQ_COMPILER_KERNEL_TEXT_H
#define HCQ_COMPILER_KERNEL_TEXT_H

#include <stddef.h>

#include "base/status.h"
#include "uop/uop.h"

/* Parse one kernel file. filename_for_errors may be NULL ("<input>"). On success *out_sink is the root (a SINK for
 * every kernel the printer writes; any node for `(kernel _ ROOT)`). Validation (cc_kernel_validate's rules) runs
 * when the kernel is named and in canonical AST form (only the ops docs/FORMATS.md lists, scalar dtypes);
 * kernels of later pipeline stages and `(kernel _ ...)` are only type-checked form by form. */
hcq_status cc_kernel_parse(uop_ctx *ctx, const char *text, size_t len, const char *filename_for_errors,
                           const uop **out_sink);
/* Read and parse a file. */
hcq_status cc_kernel_parse_file(uop_ctx *ctx, const char *path, const uop **out_sink);

/* Print any DAG as kernel text; parse(print(k)) == k (pointer-equal in the same ctx) for every node. Nodes used
 * more than once, buffers, variables and ranges are let-bound. *out_text is malloc'd. */
hcq_status cc_kernel_print(const uop *sink, char **out_text);

/* Check that `sink` is a kernel AST in canonical form (docs/FORMATS.md): a SINK of STOREs into
 * INDEX(DEFINE_GLOBAL...), loads from INDEX(DEFINE_GLOBAL...), every RANGE used only inside a store that closes it
 * or a REDUCE over it, buffer slots consistent, only AST ops and scalar dtypes. Errors name the node. */
hcq_status cc_kernel_validate(const uop *sink);

/* Dtype spelling of the kernel grammar ("float32", "float32x4", "ptr.global.float32[4096]"): buf >= 64 bytes. */
char *cc_dtype_str(uop_dtype dt, char *buf, size_t cap);
bool cc_dtype_parse(const char *s, size_t len, uop_dtype *out);

#endif
