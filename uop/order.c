/* Structural order (reference tuplize, tinygrad/uop/ops.py) and iterative topological sort. */
#include <stdlib.h>
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

/* Capacity for at least n entries. */
static bool reserve(base_vec *s, size_t n) {
  if (s->cap >= n) return true;
  size_t ncap = n > 2 * s->cap ? n : 2 * s->cap;
  uintptr_t *nv = realloc(s->v, ncap * sizeof *nv);
  if (!nv) return false;
  s->v = nv;
  s->cap = ncap;
  return true;
}

/* Iterative DFS, sources before users, each node once. Seen-marks are the context's epoch-stamped array (indexed
 * by node id), so a walk touches only the nodes it reaches; a private array stands in if that one is in use. The
 * stack (a (node, next source index) pair per level) and the order are sized for every node of the context up
 * front, so the loop has no capacity checks. */
hcq_status uop_toposort(uop_ctx *ctx, const uop *root, const uop ***out_nodes, size_t *out_count) {
  *out_nodes = NULL;
  *out_count = 0;
  if (!root) return hcq_status_make(HCQ_CODE_INVALID, "uop_toposort: NULL root");
  if (!ctx) return hcq_status_make(HCQ_CODE_INVALID, "uop_toposort: NULL context");
  if (root->id >= uop_ctx_node_count(ctx))
    return hcq_status_make(HCQ_CODE_INVALID, "uop_toposort: the root is not a node of this context");
  if (uop_ctx_topo_get(ctx, root, out_nodes, out_count)) return HCQ_OK;
  hcq_status st = HCQ_OK;
  uop_visit own = {0}, *v = uop_ctx_visit_acquire(ctx);
  if (!v) {
    v = &own;
    v->cap = uop_ctx_node_count(ctx);
    v->epoch = 1;
    v->mark = calloc(v->cap, sizeof *v->mark);
    if (!v->mark) goto oom;
  }
  const uint32_t epoch = v->epoch;
  const size_t cap = v->cap;
  uint32_t *mark = v->mark;
  base_vec *stack = &v->stack, *order = &v->order;
  /* a node is on the stack at most once (marked when pushed) and in the order once: every node the walk can reach
   * has an id below the node count (a larger one is refused before it is pushed) */
  const size_t most = uop_ctx_node_count(ctx) + 1;
  if (!reserve(stack, 2 * most) || !reserve(order, most)) goto oom;
  uintptr_t *sv = stack->v, *ov = order->v;
  size_t sp = 0, on = 0;
  mark[root->id] = epoch;
  sv[sp++] = (uintptr_t)root;
  sv[sp++] = 0;
  while (sp) {
    const uop *n = (const uop *)sv[sp - 2];
    uint32_t i = (uint32_t)sv[sp - 1];
    const uint32_t ns = n->nsrc;
    const uop *s = NULL;
    for (; i < ns; i++) { /* the next unseen source */
      s = n->src[i];
      if (s->id >= cap) { /* sources are older than their users; a larger id is a node of another context */
        st = hcq_status_make(HCQ_CODE_INVALID, "uop_toposort: a %s has a source from another context",
                             uop_op_name((uop_op)n->op));
        goto done;
      }
      if (mark[s->id] != epoch) break;
    }
    if (i < ns) {
      sv[sp - 1] = i + 1;
      mark[s->id] = epoch;
      sv[sp++] = (uintptr_t)s;
      sv[sp++] = 0;
      continue;
    }
    sp -= 2;
    ov[on++] = (uintptr_t)n;
  }
  const uop **out = uop_ctx_alloc(ctx, on * sizeof *out + 1);
  if (!out) goto oom;
  _Static_assert(sizeof(uintptr_t) == sizeof(const uop *), "the order is copied as words");
  memcpy(out, ov, on * sizeof *out);
  *out_nodes = out;
  *out_count = on;
  uop_ctx_topo_put(ctx, root, out, on);
  goto done;
oom:
  st = hcq_status_make(HCQ_CODE_NOMEM, "uop_toposort: out of memory");
done:
  if (v == &own) {
    free(own.mark);
    base_vec_free(&own.stack);
    base_vec_free(&own.order);
  } else {
    uop_ctx_visit_release(ctx, v);
  }
  return st;
}
