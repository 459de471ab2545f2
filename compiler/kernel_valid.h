/* kernel_valid: canonical-form checks of a kernel AST (private to the compiler front end: parser, interpreter). */
#ifndef HCQ_COMPILER_KERNEL_VALID_H
#define HCQ_COMPILER_KERNEL_VALID_H

#include <stddef.h>

#include "base/status.h"
#include "uop/uop.h"

/* Writes a description of n ("file:3:5: STORE st") into buf and returns it. */
typedef const char *(*kv_describe_fn)(void *user, const uop *n, char *buf, size_t cap);

/* True if the DAG under root uses only AST ops (SINK DEFINE_GLOBAL DEFINE_VAR RANGE INDEX LOAD STORE REDUCE CONST
 * CAST BITCAST and ALU ops) and scalar dtypes. */
bool kv_is_canonical(const uop *root);
/* The rules of cc_kernel_validate; describe may be NULL (nodes are then named by op and id). */
hcq_status kv_validate(const uop *root, kv_describe_fn describe, void *user);

/* kernel_access.c: value checks on a validated canonical DAG (order = its toposort): a LOAD/STORE whose index is
 * provably outside its buffer (a reachable point under the gate is shown), an IDIV/MOD by a provable 0 or of the
 * type's minimum by -1. Errors name the node through describe. */
hcq_status kv_check_values(const uop *const *order, size_t n, kv_describe_fn describe, void *user);

/* Iterative post-order (sources first) of the DAG under root; *out malloc'd. */
hcq_status kv_toposort(const uop *root, const uop ***out, size_t *out_count);

#endif
