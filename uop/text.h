/* text: the expression s-expression format of hcq (DESIGN.md section 3): parser, printer and infix render.
 *
 * Grammar (whitespace separates tokens; `;` starts a comment to end of line):
 *   expr := INT | true | false | (const V DT) | (var NAME MIN MAX DT) | (range N END) | (special NAME END)
 *         | (OP A B) with OP in + * // % < != & | ^ max << >> | (recip A) | (trunc A) | (where C A B)
 *         | (cast DT A)
 *   DT   := index bool int8 uint8 int16 uint16 int32 uint32 int64 uint64 float16 bfloat16 float32 float64
 * A bare INT is an `index` constant (any int64; a leading '-' is part of the integer, there is no negation op).
 * `//` and `%` truncate toward zero; `<` and `!=` give bool; the other binary ops give their operands' dtype.
 * Typing rules enforced by the parser (errors name the dtypes and positions; nothing is promoted silently):
 *   - both operands of a binary op have the same dtype;
 *   - // % << >> need integer (or index) operands; & | ^ need integer or bool; + * max < != any scalar dtype;
 *   - recip and trunc need a float operand; where needs a bool condition and two arms of one dtype;
 *   - the END of range/special is index; N of range is an integer >= 0 (the range's axis is LOOP);
 *   - (const V DT): V is an integer inside DT's range for integer dtypes (uint64 up to 18446744073709551615),
 *     true/false/0/1 for bool, a decimal (1, -2.5, 1e-3) or inf/-inf/nan for floats (finite values beyond the
 *     dtype's largest finite value are rejected);
 *   - (var NAME MIN MAX DT): NAME an identifier [A-Za-z_][A-Za-z0-9_]*, DT an integer dtype or index,
 *     MIN <= MAX both inside DT's range. (special NAME END): NAME an identifier.
 * Errors are HCQ_CODE_PARSE with "LINE:COL: expected X, got Y" (or "LINE:COL: <what is wrong>"); columns count
 * bytes from 1. Parsing uses an explicit stack (64 bytes per open form): nesting depth is limited only by memory
 * (100,000 levels are fine; a 12 MB line nested two million deep parses).
 *
 * Printing (uop_print) writes a node back in exactly that grammar: index constants as bare integers, bool
 * constants as true/false, other constants as (const V DT) (floats as uop_text_fmt_double writes them: the shortest
 * text that reads back to the same double, e.g. 2.0 0.1 1e+16 inf nan), variables as (var NAME MIN MAX DT).
 * For every node the parser can produce, parse(print(n)) == n (pointer-equal in the same ctx). Nodes outside the
 * grammar are printed as an equivalent grammar expression, so the text still parses, but to a different
 * (equal-valued) node:
 *   (NEG x)      -> (* x -1)              (-1 typed like x: bare -1 for index, (const -1 DT) otherwise,
 *                                         the all-ones value for unsigned DT)
 *   (SUB a b)    -> (+ a (* b -1))
 *   (CMPEQ a b)  -> (!= (!= a b) true)
 *   (FDIV a b)   -> (* a (recip b))
 *   (MULACC a b c) -> (+ (* a b) c)
 *   RANGE of any axis -> (range N END) (the axis is not kept).
 * Other ops (EXP2, LOAD, ...), vector and pointer dtypes give an HCQ_CODE_UNSUPPORTED error naming the op/dtype.
 *
 * Render (uop_render) is the infix debug form (reference tinygrad/uop/ops.py), fully parenthesized:
 *   (a+b) (a*b) (a//b) (a%b) (a<b) (a!=b) (a==b) (a&b) (a|b) (a^b) (a<<b) (a>>b) max(a, b) (x if c else y)
 *   (1/x) (-x) (a-b) (a/b) trunc(x) exp2(x) log2(x) sin(x) sqrt(x) ((a*b)+c) for MULACC, casts as (T)(x) with
 *   C names (int long short char uchar ushort uint ulong half float double bfloat16 bool index), bitcasts as
 *   bitcast<T>(x), variables and specials by name, ranges as ridxN, bool constants True/False, integer constants
 *   in decimal (uint64 unsigned), floats as uop_text_fmt_double writes them (2.0 0.1 inf -inf nan). Any other op
 *   renders as its lower-case name applied to its sources: name(a, b). Render never fails on a well-formed node
 *   (only on OOM).
 *
 * Output strings are malloc'd, NUL-terminated, owned by the caller (free()). Printer and renderer walk with an
 * explicit stack (no recursion), and expand shared sub-DAGs as trees: outputs larger than UOP_TEXT_MAX_OUTPUT_B
 * give an HCQ_CODE_NOMEM error instead of exhausting memory.
 */
#ifndef HCQ_UOP_TEXT_H
#define HCQ_UOP_TEXT_H

#include <stddef.h>

#include "uop/uop.h"

#define UOP_TEXT_MAX_OUTPUT_B ((size_t)1 << 30)

/* Parse exactly one expression from text[0..len) (surrounding whitespace and comments allowed). */
hcq_status uop_parse(uop_ctx *ctx, const char *text, size_t len, const uop **out);
/* The same, numbering lines from first_line (for error positions when text is one line of a larger file). */
hcq_status uop_parse_at(uop_ctx *ctx, const char *text, size_t len, int first_line, const uop **out);

/* The grammar form of n (see above). *out_text is malloc'd. */
hcq_status uop_print(const uop *n, char **out_text);

/* The infix render of n (see above). *out_text is malloc'd. */
hcq_status uop_render(const uop *n, char **out_text);

/* Grammar and C-style names of a scalar dtype (NULL for UOP_VOID or out of range). */
const char *uop_text_dt_name(uop_scalar s);
const char *uop_text_dt_cname(uop_scalar s);
/* Look up a grammar dtype name; false if unknown. */
bool uop_text_dt_lookup(const char *name, size_t len, uop_scalar *out_scalar);

/* Quote len bytes of source text for a message: 'text', at most 40 bytes then "...", non-printables as '?'.
 * buf needs cap >= 8 (64 holds any quote). Returns buf. */
const char *uop_text_quote(const char *s, size_t len, char *buf, size_t cap);
/* Decimal float syntax: [-+]? (digits [. digits?] | . digits) ([eE] [-+]? digits)? over the n bytes at s. */
bool uop_text_is_decimal(const char *s, size_t n);
/* Largest finite value of a float scalar (float16, bfloat16, float32; DBL_MAX for any other). */
double uop_text_float_max(uop_scalar s);

/* Shortest decimal text of v that strtod reads back to the same double, Python-repr style: "0.1", "10.0", "1e+16",
 * "2.5e-05" ("inf", "-inf", "nan" for those).
 * buf must hold at least 32 bytes. Returns buf. */
char *uop_text_fmt_double(double v, char *buf);

#endif
