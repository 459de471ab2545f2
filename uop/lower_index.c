/* uop_lower_index: give every `index`-typed node a concrete integer dtype (reference pm_lower_index_dtype,
 * tinygrad/uop/ops.py).
 *
 * Per node: int64 if its proven bounds (of the unlowered, non-wrapping index value) leave int32, else int32; an
 * op whose index operands are wider widens to them, and its narrower operands are cast up. So an int32 node's
 * operands are int32 too, and since both they and the node's result fit int32 the wrapping int32 arithmetic is
 * exact. Comparisons, WHERE branches and VECTORIZE lanes cast their index operands to the widest of them.
 * RANGE/SPECIAL also cover their end (the loop test `ridx < end` must not wrap). DEFINE_VAR is int32 (kernel
 * arguments are 32-bit): one declared outside int32 is an error. CAST(x -> index) becomes x when x already has the
 * chosen width; CAST(index -> T) disappears when its lowered source is already T. */
#include "uop/uop.h"
#include "uop/uop_internal.h"

static bool is_index_value(uop_dtype dt) { return dt.scalar == UOP_INDEX && !uop_dt_is_ptr(dt); }

static uop_scalar width_for(int64_t lo, int64_t hi) {
  return lo < INT32_MIN || hi > INT32_MAX ? UOP_INT64 : UOP_INT32;
}

static uop_scalar wider(uop_scalar a, uop_scalar b) { return a == UOP_INT64 || b == UOP_INT64 ? UOP_INT64 : UOP_INT32; }

/* x (an already lowered former index value) as scalar width w; constants are rebuilt rather than cast. */
static const uop *as_width(uop_ctx *ctx, const uop *x, uop_scalar w) {
  if (x->dtype.scalar == w) return x;
  uop_dtype dt = uop_dt_vec(uop_dt(w), x->dtype.count);
  if (x->op == UOP_CONST) return uop_new(ctx, UOP_CONST, dt, NULL, 0, x->arg);
  return uop_cast(ctx, dt, x);
}

static bool is_cmp(uop_op op) { return op == UOP_CMPLT || op == UOP_CMPNE || op == UOP_CMPEQ; }

/* The lowered form of n, whose sources are already lowered into src (modified in place). */
static const uop *lower_node(uop_ctx *ctx, const uop *n, const uop **src, bool changed, hcq_status *st) {
  bool idx = is_index_value(n->dtype);
  if (n->op == UOP_CAST && n->nsrc == 1) {
    if (idx) { /* int -> index: the value is the source's; keep it when it has the width */
      uop_scalar w = width_for(uop_vmin(n), uop_vmax(n));
      if (src[0]->dtype.scalar == w && src[0]->dtype.count == n->dtype.count) return src[0];
      return uop_cast(ctx, uop_dt_vec(uop_dt(w), n->dtype.count), src[0]);
    }
    if (is_index_value(n->src[0]->dtype) && uop_dt_eq(src[0]->dtype, n->dtype)) return src[0];
    return changed ? uop_replace_src(ctx, n, src, n->nsrc) : n;
  }
  if (n->op == UOP_DEFINE_VAR && idx) {
    if (n->arg.kind == UOP_ARG_VAR && (n->arg.i < INT32_MIN || n->arg.i2 > INT32_MAX)) {
      *st = hcq_status_make(HCQ_CODE_UNSUPPORTED,
                            "lower index: variable %s is declared %lld..%lld, outside the int32 range of kernel "
                            "variables",
                            n->arg.str ? n->arg.str : "?", (long long)n->arg.i, (long long)n->arg.i2);
      return NULL;
    }
    return uop_new(ctx, UOP_DEFINE_VAR, uop_dt_vec(uop_dt(UOP_INT32), n->dtype.count), src, n->nsrc, n->arg);
  }
  /* the widest width among the index operands (and the node's own bounds, if it is an index value) */
  uop_scalar w = idx ? width_for(uop_vmin(n), uop_vmax(n)) : UOP_INT32;
  bool any_index_src = false;
  for (uint32_t i = 0; i < n->nsrc; i++)
    if (is_index_value(n->src[i]->dtype)) {
      w = wider(w, (uop_scalar)src[i]->dtype.scalar);
      any_index_src = true;
    }
  /* operands meet at w: ALU ops (comparisons included), VECTORIZE lanes, RANGE/SPECIAL ends */
  bool unify = uop_op_is_alu((uop_op)n->op) || n->op == UOP_VECTORIZE || n->op == UOP_RANGE || n->op == UOP_SPECIAL;
  if (any_index_src && unify && (idx || is_cmp((uop_op)n->op) || n->op == UOP_WHERE))
    for (uint32_t i = 0; i < n->nsrc; i++)
      if (is_index_value(n->src[i]->dtype)) {
        const uop *c = as_width(ctx, src[i], w);
        if (!c) return NULL;
        changed |= c != src[i];
        src[i] = c;
      }
  if (idx) {
    if (n->op == UOP_GEP && n->nsrc == 1) w = (uop_scalar)src[0]->dtype.scalar;
    return uop_new(ctx, (uop_op)n->op, uop_dt_vec(uop_dt(w), n->dtype.count), src, n->nsrc, n->arg);
  }
  return changed ? uop_replace_src(ctx, n, src, n->nsrc) : n;
}

hcq_status uop_lower_index(uop_ctx *ctx, const uop *root, const uop **out_root) {
  *out_root = NULL;
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(ctx, root, &nodes, &count));
  /* node id -> its lowered form; every graph node is set before its users read it, so no clearing is needed */
  const uop **map = malloc((uop_ctx_node_count(ctx) + 1) * sizeof *map);
  if (!map) return hcq_status_make(HCQ_CODE_NOMEM, "uop_lower_index: out of memory");
  const uop *small[4];
  hcq_status st = HCQ_OK;
  for (size_t k = 0; k < count; k++) {
    const uop *n = nodes[k];
    const uop **src = n->nsrc <= 4 ? small : malloc(n->nsrc * sizeof *src);
    if (!src) goto oom;
    bool changed = false;
    for (uint32_t i = 0; i < n->nsrc; i++) {
      src[i] = map[n->src[i]->id];
      changed |= src[i] != n->src[i];
    }
    const uop *out = lower_node(ctx, n, src, changed, &st);
    if (src != small) free(src);
    if (st) goto done;
    if (!out) goto oom;
    map[n->id] = out;
  }
  *out_root = map[root->id];
  goto done;
oom:
  st = uop_ctx_status(ctx);
  if (!st) st = hcq_status_make(HCQ_CODE_NOMEM, "uop_lower_index: out of memory");
done:
  free(map);
  return st;
}
