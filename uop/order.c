/* Structural order (reference compiler.md 4.3) and iterative topological sort. */
#include <string.h>

#include "uop/uop.h"
#include "uop/uop_internal.h"

static int cmp_i64(int64_t a, int64_t b) { return a < b ? -1 : a > b; }

static int cmp_str(const char *a, const char *b) {
  if (a == b) return 0;
  int c = strcmp(a ? a : "", b ? b : "");
  return c < 0 ? -1 : c > 0;
}

static int cmp_arg(const uop_arg *a, const uop_arg *b) {
  if (a->kind != b->kind) return cmp_i64(a->kind, b->kind);
  int c = 0;
  switch (a->kind) {
  case UOP_ARG_INT: return cmp_i64(a->i, b->i);
  case UOP_ARG_FLOAT: return a->f < b->f ? -1 : a->f > b->f ? 1 : 0;
  case UOP_ARG_STR: return cmp_str(a->str, b->str);
  case UOP_ARG_VAR: /* (name, min, max) */
    if ((c = cmp_str(a->str, b->str))) return c;
    if ((c = cmp_i64(a->i, b->i))) return c;
    return cmp_i64(a->i2, b->i2);
  case UOP_ARG_RANGE: /* (id, axis) */
    if ((c = cmp_i64(a->i, b->i))) return c;
    return cmp_i64(a->i2, b->i2);
  case UOP_ARG_INTS:
    for (uint32_t k = 0; k < a->n && k < b->n; k++)
      if ((c = cmp_i64(a->ints[k], b->ints[k]))) return c;
    return cmp_i64(a->n, b->n);
  default: return 0;
  }
}

/* dtypes compare by (priority, itemsize, name, count); the scalar enum is the priority order. */
static int cmp_dtype(uop_dtype a, uop_dtype b) {
  int c;
  if ((c = cmp_i64(a.scalar, b.scalar))) return c;
  if ((c = cmp_i64(a.count, b.count))) return c;
  if ((c = cmp_i64(a.addrspace, b.addrspace))) return c;
  if ((c = cmp_i64(a.ptr_v, b.ptr_v))) return c;
  return cmp_i64(a.size, b.size);
}

/* key(n) = (op, arg, dtype, key(src0), key(src1), ...) compared lexicographically. Nodes are hash-consed, so the
 * first source pair that differs decides (it cannot compare equal): the comparison follows one path down the DAG
 * and needs no stack and no memo. */
int uop_struct_cmp(const uop *a, const uop *b) {
  while (a != b) {
    int c;
    if ((c = cmp_i64(a->op, b->op))) return c;
    if ((c = cmp_arg(&a->arg, &b->arg))) return c;
    if ((c = cmp_dtype(a->dtype, b->dtype))) return c;
    uint32_t k = 0, n = a->nsrc < b->nsrc ? a->nsrc : b->nsrc;
    while (k < n && a->src[k] == b->src[k]) k++;
    if (k == n) return cmp_i64(a->nsrc, b->nsrc); /* equal prefix: the shorter key is smaller */
    a = a->src[k];
    b = b->src[k];
  }
  return 0;
}

hcq_status uop_toposort(uop_ctx *ctx, const uop *root, const uop ***out_nodes, size_t *out_count) {
  *out_nodes = NULL;
  *out_count = 0;
  if (!root) return hcq_status_make(HCQ_CODE_INVALID, "uop_toposort: NULL root");
  uop_ptrmap seen = {0};
  uop_vec stack = {0}, order = {0}; /* stack holds (node, next source index) pairs */
  hcq_status st = HCQ_OK;
  if (!uop_ptrmap_put(&seen, root, 1) || !uop_vec_push(&stack, (uintptr_t)root) || !uop_vec_push(&stack, 0)) goto oom;
  while (stack.n) {
    const uop *n = (const uop *)stack.v[stack.n - 2];
    uintptr_t i = stack.v[stack.n - 1];
    if (i < n->nsrc) {
      stack.v[stack.n - 1] = i + 1;
      const uop *s = n->src[i];
      if (uop_ptrmap_find(&seen, s)) continue;
      if (!uop_ptrmap_put(&seen, s, 1) || !uop_vec_push(&stack, (uintptr_t)s) || !uop_vec_push(&stack, 0)) goto oom;
      continue;
    }
    stack.n -= 2;
    if (!uop_vec_push(&order, (uintptr_t)n)) goto oom;
  }
  const uop **out = uop_ctx_alloc(ctx, order.n * sizeof *out + 1);
  if (!out) goto oom;
  for (size_t k = 0; k < order.n; k++) out[k] = (const uop *)order.v[k];
  *out_nodes = out;
  *out_count = order.n;
  goto done;
oom:
  st = hcq_status_make(HCQ_CODE_NOMEM, "uop_toposort: out of memory");
done:
  uop_ptrmap_free(&seen);
  uop_vec_free(&stack);
  uop_vec_free(&order);
  return st;
}
