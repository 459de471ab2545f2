/* uop_lower_index: give every `index`-typed node a concrete integer dtype (reference compiler.md 3.15).
 *
 * One width for the whole DAG under root: int32 if every index node's proven bounds fit int32, else int64. (The
 * reference picks per node and casts at the seams; one width is simpler and keeps every operand pair of the same
 * dtype.) CAST(x -> index) becomes a cast to the chosen width, or disappears when x already has it. */
#include "uop/uop.h"
#include "uop/uop_internal.h"

static bool is_index_value(uop_dtype dt) { return dt.scalar == UOP_INDEX && !uop_dt_is_ptr(dt); }

hcq_status uop_lower_index(uop_ctx *ctx, const uop *root, const uop **out_root) {
  *out_root = NULL;
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(ctx, root, &nodes, &count));
  bool wide = false;
  for (size_t k = 0; k < count && !wide; k++) {
    const uop *n = nodes[k];
    if (!is_index_value(n->dtype)) continue;
    int64_t lo = uop_vmin(n), hi = uop_vmax(n);
    if (lo < INT32_MIN || hi > INT32_MAX) wide = true;
    if (n->op == UOP_DEFINE_VAR && n->arg.kind == UOP_ARG_VAR && (n->arg.i < INT32_MIN || n->arg.i2 > INT32_MAX))
      wide = true;
  }
  uop_scalar target = wide ? UOP_INT64 : UOP_INT32;
  uop_ptrmap map = {0};
  const uop *small[4];
  hcq_status st = HCQ_OK;
  for (size_t k = 0; k < count; k++) {
    const uop *n = nodes[k];
    const uop **src = n->nsrc <= 4 ? small : malloc(n->nsrc * sizeof *src);
    if (!src) goto oom;
    bool changed = false;
    for (uint32_t i = 0; i < n->nsrc; i++) {
      uintptr_t *m = uop_ptrmap_find(&map, n->src[i]);
      src[i] = m ? (const uop *)*m : n->src[i];
      changed |= src[i] != n->src[i];
    }
    const uop *out = n;
    if (is_index_value(n->dtype)) {
      uop_dtype dt = uop_dt_vec(uop_dt(target), n->dtype.count);
      if (n->op == UOP_CAST && n->nsrc == 1 && uop_dt_eq(src[0]->dtype, dt)) {
        out = src[0];
      } else {
        out = uop_new(ctx, (uop_op)n->op, dt, src, n->nsrc, n->arg);
      }
    } else if (changed) {
      out = uop_replace_src(ctx, n, src, n->nsrc);
    }
    if (src != small) free(src);
    if (!out) goto oom;
    if (out != n && !uop_ptrmap_put(&map, n, (uintptr_t)out)) goto oom;
  }
  {
    uintptr_t *m = uop_ptrmap_find(&map, root);
    *out_root = m ? (const uop *)*m : root;
  }
  goto done;
oom:
  st = uop_ctx_status(ctx);
  if (!st) st = hcq_status_make(HCQ_CODE_NOMEM, "uop_lower_index: out of memory");
done:
  uop_ptrmap_free(&map);
  return st;
}
