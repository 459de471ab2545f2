/* Pattern matcher as data, and graph_rewrite.
 *
 * A rule is a pattern written in a small s-expression language plus a callback. A matcher compiles an ordered rule
 * list once (errors name the rule index and the column), indexes it by the root pattern's op set, and pre-computes an
 * early-reject mask (ops that must appear among the node's direct sources). First matching rule wins: for a node the
 * rules of its op are tried in order; for each rule every binding (all commutative permutations) is tried until the
 * callback returns a node that is neither NULL nor the node itself.
 *
 * Pattern language (whitespace separates tokens):
 *   pat    := '_'                     any node, not captured
 *           | NAME                    any node, captured as NAME (lower case identifier); a name used twice must
 *                                     bind the same node (this is how x+x and (x//c)*c + x%c are written)
 *           | INT                     a CONST (int/bool/index dtype, or a float CONST equal to INT) with that value
 *           | '(' head pat* [ '...' ] ')'
 *   head   := OPS [':' DTYPES] ['@' NAME] ['~'] ['=' ARG]
 *   OPS    := OPNAME ('|' OPNAME)*   upper-case op names (ADD|MUL), or '*' for any op
 *   DTYPES := DT ('|' DT)*           scalar dtype names (index|int32) or class names: ints (fixed-width ints),
 *                                    sints, uints, floats, bool, intlike (ints+index+bool), all_ints (ints+index);
 *                                    a node matches if its scalar dtype is in the set (vectors match scalar sets)
 *   '@' NAME  capture the node itself
 *   '~'       commutative: sources may match in any permutation
 *   '=' ARG   the node's arg must equal ARG (an integer: CONST value / slot / REDUCE op; or a name: SPECIAL)
 *   '...'     after the listed sources, any number of further sources is allowed
 *   (OPS:DT@n ** pat)  the form with '**' as the only source: every source (any count) must match pat
 *   A head with no source list, e.g. (CONST@c) or (RANGE@r), places no constraint on the sources.
 * Shorthands: `#c` = (CONST@c) any constant; `#c:index` = (CONST:index@c).
 * Examples:
 *   "(ADD~ x 0)"                          x+0 in either order
 *   "(IDIV:index (MUL~ x #c) #d)"          (x*c)//d on index
 *   "(ADD~ (MUL~ (IDIV x #c) #c) (MOD x #c))"
 */
#ifndef HCQ_UOP_MATCH_H
#define HCQ_UOP_MATCH_H

#include "uop/uop.h"

#define UOP_MAX_CAPTURES 16

/* The nodes bound by a match, by capture name. The names are the pattern's own, in order of first appearance. */
typedef struct uop_bindings {
  int count;
  const char *names[UOP_MAX_CAPTURES];
  const uop *nodes[UOP_MAX_CAPTURES];
} uop_bindings;

/* Look up a capture; asserts (debug) that the name exists in the rule's pattern. */
const uop *uop_b(const uop_bindings *b, const char *name);

/* Rewrite context handed to callbacks: the uop ctx, the caller's user pointer. */
typedef struct uop_rewrite_ctx {
  uop_ctx *uctx;
  void *user;
} uop_rewrite_ctx;

/* Return the replacement, or NULL for "no match" (the next binding / rule is tried). */
typedef const uop *(*uop_rule_fn)(uop_rewrite_ctx *rc, const uop *node, const uop_bindings *b);

typedef struct uop_rule {
  const char *pattern;
  uop_rule_fn fn;
  const char *name; /* for debugging / statistics; may be NULL */
} uop_rule;

typedef struct uop_pm uop_pm;

/* Compile rules (copied; the pattern strings may be freed after). Errors name the rule index, its pattern text and
 * the column of the problem. */
hcq_status uop_pm_create(const uop_rule *rules, size_t count, uop_pm **out_pm);
/* A matcher whose rules are a's followed by b's (first match wins, a first). */
hcq_status uop_pm_concat(const uop_pm *a, const uop_pm *b, uop_pm **out_pm);
void uop_pm_destroy(uop_pm *pm);

/* Try the rules on one node (no recursion). Returns NULL if nothing matched. */
const uop *uop_pm_rewrite(const uop_pm *pm, uop_rewrite_ctx *rc, const uop *node);

typedef enum uop_rewrite_mode {
  /* Sources first (post-order): each node is rewritten after all its sources reached their fixed point; a replaced
   * node is itself rewritten again until no rule matches. */
  UOP_REWRITE_SOURCES_FIRST,
  /* Node first (pre-order): rules are applied to a node until none matches, then the result's sources are
   * visited. A node that comes back to itself in a cycle is an error, not a hang. */
  UOP_REWRITE_NODE_FIRST,
} uop_rewrite_mode;

/* Rewrite the DAG under root to a fixed point; memoized per call (each distinct node is matched once); explicit
 * stack, no recursion (100,000-deep chains are fine). `user` is passed to callbacks in uop_rewrite_ctx. */
hcq_status uop_graph_rewrite(uop_ctx *ctx, const uop *root, const uop_pm *pm, uop_rewrite_mode mode, void *user,
                             const uop **out_root);

/* Replace nodes by the map (from[i] -> to[i]) everywhere under root, rebuilding users. */
hcq_status uop_substitute(uop_ctx *ctx, const uop *root, const uop *const *from, const uop *const *to, size_t count,
                          const uop **out_root);

#endif
