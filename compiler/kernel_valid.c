/* kernel_valid: the canonical kernel AST checks (docs/FORMATS.md) behind cc_kernel_validate. */
#include <inttypes.h>
#include <stdio.h>

#include "compiler/kernel_text_internal.h"
#include "compiler/kernel_valid.h"

hcq_status kv_toposort(const uop *root, const uop ***out, size_t *out_count) {
  kt_map seen = {0};
  const uop **order = NULL, **stack = NULL;
  uint32_t *next = NULL;
  size_t n = 0, ocap = 0, sp = 0, scap = 0;
  hcq_status st = HCQ_OK;
#define GROW(arr, cap, need)                                         \
  do {                                                               \
    if ((need) > (cap)) {                                            \
      size_t c_ = (cap) ? (cap) * 2 : 256;                           \
      void *p_ = realloc((arr), c_ * sizeof *(arr));                 \
      if (!p_) goto nomem;                                           \
      (arr) = p_;                                                    \
      (cap) = c_;                                                    \
    }                                                                \
  } while (0)
  size_t ncap = 0;
  GROW(stack, scap, 1);
  GROW(next, ncap, 1);
  if (!kt_map_put(&seen, root, 1)) goto nomem;
  stack[sp] = root;
  next[sp++] = 0;
  while (sp) {
    const uop *u = stack[sp - 1];
    if (next[sp - 1] < u->nsrc) {
      const uop *s = u->src[next[sp - 1]++];
      if (kt_map_find(&seen, s)) continue;
      if (!kt_map_put(&seen, s, 1)) goto nomem;
      GROW(stack, scap, sp + 1);
      GROW(next, ncap, sp + 1);
      stack[sp] = s;
      next[sp++] = 0;
      continue;
    }
    GROW(order, ocap, n + 1);
    order[n++] = u;
    sp--;
  }
  goto done;
nomem:
  st = hcq_status_make(HCQ_CODE_NOMEM, "toposort: out of memory");
  free(order);
  order = NULL;
  n = 0;
done:
#undef GROW
  free(stack);
  free(next);
  kt_map_free(&seen);
  *out = order;
  *out_count = n;
  return st;
}

static bool canonical_op(uop_op op) {
  switch (op) {
  case UOP_SINK: case UOP_DEFINE_GLOBAL: case UOP_DEFINE_VAR: case UOP_RANGE: case UOP_INDEX_OP: case UOP_LOAD:
  case UOP_STORE: case UOP_REDUCE: case UOP_CONST: case UOP_CAST: case UOP_BITCAST:
    return true;
  default:
    return uop_op_is_alu(op);
  }
}

static bool canonical_node(const uop *n) {
  if (!canonical_op((uop_op)n->op) || n->dtype.count != 1 || n->dtype.ptr_v != 1) return false;
  return n->op == UOP_DEFINE_GLOBAL || n->op == UOP_INDEX_OP || !uop_dt_is_ptr(n->dtype);
}

bool kv_is_canonical(const uop *root) {
  const uop **order;
  size_t n;
  hcq_status st = kv_toposort(root, &order, &n);
  if (st) {
    hcq_status_free(st);
    return false;
  }
  bool ok = true;
  for (size_t i = 0; i < n && ok; i++) ok = canonical_node(order[i]);
  free(order);
  return ok;
}

static const char *default_describe(void *user, const uop *n, char *buf, size_t cap) {
  (void)user;
  snprintf(buf, cap, "%s #%u", uop_op_name((uop_op)n->op), n->id);
  return buf;
}

typedef struct vctx {
  kv_describe_fn describe;
  void *user;
} vctx;

#define DESC(v, n) (v)->describe((v)->user, (n), (char[200]){0}, 200)

static hcq_status bad(const vctx *v, const uop *n, const char *what) {
  return hcq_status_make(HCQ_CODE_INVALID, "%s: %s", DESC(v, n), what);
}

/* Per-node checks that hold for any canonical node (types and arg kinds, since the generic form can spell anything). */
static hcq_status check_node(const vctx *v, const uop *n) {
  char msg[400], tmp[500];
  uop_op op = (uop_op)n->op;
  if (!canonical_node(n)) {
    snprintf(tmp, sizeof tmp, "%s is not allowed in a kernel AST (only buf/var/range/index/load/store/reduce/sink, "
             "constants and scalar ALU ops)", uop_op_name(op));
    return bad(v, n, tmp);
  }
  switch (op) {
  case UOP_CONST: {
    bool f = uop_dt_is_float(n->dtype);
    if (n->nsrc || n->arg.kind != (f ? UOP_ARG_FLOAT : UOP_ARG_INT) || n->dtype.scalar == UOP_VOID)
      return bad(v, n, "constant with a malformed arg or dtype");
    return HCQ_OK;
  }
  case UOP_DEFINE_VAR:
    if (n->nsrc || n->arg.kind != UOP_ARG_VAR || !uop_dt_is_int(n->dtype) || !n->arg.str)
      return bad(v, n, "variable must be an integer with a (name min max) arg");
    return HCQ_OK;
  case UOP_DEFINE_GLOBAL:
    if (n->nsrc || n->arg.kind != UOP_ARG_INT || n->arg.i < 0 || n->dtype.addrspace != UOP_AS_GLOBAL ||
        n->dtype.scalar == UOP_VOID)
      return bad(v, n, "buffer must be a global pointer with a slot >= 0");
    return HCQ_OK;
  case UOP_SINK:
    return HCQ_OK;
  case UOP_RANGE:
    if (n->arg.kind != UOP_ARG_RANGE) return bad(v, n, "range without a (id axis) arg");
    break;
  case UOP_REDUCE:
    if (n->arg.kind != UOP_ARG_INT || (n->arg.i != UOP_ADD && n->arg.i != UOP_MUL && n->arg.i != UOP_MAX))
      return bad(v, n, "reduce op must be add, mul or max");
    break;
  default:
    if (n->arg.kind != UOP_ARG_NONE) return bad(v, n, "unexpected arg");
    break;
  }
  uop_dtype dt;
  if (!kt_form_dtype(op, n->src, n->nsrc, n->dtype, &dt, msg, sizeof msg)) return bad(v, n, msg);
  if (!kt_dt_same(dt, n->dtype)) {
    char a[80], b[80];
    snprintf(tmp, sizeof tmp, "dtype mismatch: node is %s but its sources give %s", cc_dtype_str(n->dtype, a, 80),
             cc_dtype_str(dt, b, 80));
    return bad(v, n, tmp);
  }
  if ((op == UOP_INDEX_OP && n->src[0]->op != UOP_DEFINE_GLOBAL))
    return bad(v, n, "index must address a buffer (buf) directly");
  if ((op == UOP_LOAD || op == UOP_STORE) &&
      (n->src[0]->op != UOP_INDEX_OP || n->src[0]->src[0]->op != UOP_DEFINE_GLOBAL))
    return bad(v, n, op == UOP_STORE ? "store without a buffer: the pointer must be (index BUF IDX [GATE])"
                                     : "load must read (index BUF IDX [GATE])");
  return HCQ_OK;
}

/* Bitset helpers over range numbers. */
typedef struct bits {
  uint64_t *w;
  size_t words;
} bits;
static inline uint64_t *row(const bits *b, size_t i) { return b->w + i * b->words; }

static int first_extra(const uint64_t *a, const uint64_t *allowed, size_t words) {
  for (size_t k = 0; k < words; k++) {
    uint64_t x = a[k] & ~allowed[k];
    if (x) return (int)(k * 64 + (size_t)__builtin_ctzll(x));
  }
  return -1;
}

hcq_status kv_validate(const uop *root, kv_describe_fn describe, void *user) {
  vctx v = {describe ? describe : default_describe, user};
  if (root->op != UOP_SINK) return bad(&v, root, "kernel root must be a sink");
  if (root->nsrc == 0) return bad(&v, root, "kernel has no store (the sink is empty)");
  for (uint32_t i = 0; i < root->nsrc; i++) {
    if (root->src[i]->op != UOP_STORE) {
      char tmp[200];
      snprintf(tmp, sizeof tmp, "sink source %u is %s, not a store", i + 1, uop_op_name((uop_op)root->src[i]->op));
      return bad(&v, root, tmp);
    }
  }
  const uop **order;
  size_t n;
  HCQ_TRY(kv_toposort(root, &order, &n));
  hcq_status st = HCQ_OK;
  kt_map idx = {0}, slots = {0}, rnum = {0};
  bits fr = {0};
  const uop **ranges = NULL;
  size_t nranges = 0;
  uint64_t *allowed = NULL;
  for (size_t i = 0; i < n && !st; i++) {
    const uop *u = order[i];
    if (!kt_map_put(&idx, u, (intptr_t)i)) goto nomem;
    if (u->op == UOP_SINK && u != root) st = bad(&v, u, "a sink inside the kernel");
    if (!st) st = check_node(&v, u);
    if (st) break;
    if (u->op == UOP_RANGE) nranges++;
    if (u->op == UOP_DEFINE_GLOBAL) {
      intptr_t *s = kt_map_put(&slots, (const void *)(intptr_t)(u->arg.i + 1), (intptr_t)u);
      if (!s) goto nomem;
      const uop *o = (const uop *)*s;
      if (o != u) {
        char a[80], b[80], tmp[400];
        snprintf(tmp, sizeof tmp, "buffer slot %" PRId64 " declared twice with different types: %s and %s (at %s)",
                 u->arg.i, cc_dtype_str(o->dtype, a, 80), cc_dtype_str(u->dtype, b, 80), DESC(&v, o));
        st = bad(&v, u, tmp);
      }
    }
  }
  if (st) goto done;
  /* Free ranges of every node, as bitsets over range numbers. */
  fr.words = (nranges + 63) / 64;
  if (!fr.words) fr.words = 1;
  fr.w = calloc(n * fr.words, sizeof *fr.w);
  ranges = calloc(nranges ? nranges : 1, sizeof *ranges);
  allowed = calloc(fr.words, sizeof *allowed);
  if (!fr.w || !ranges || !allowed) goto nomem;
  size_t nr = 0;
  for (size_t i = 0; i < n && !st; i++) {
    const uop *u = order[i];
    uint64_t *me = row(&fr, i);
    if (u->op == UOP_RANGE) {
      intptr_t *r = kt_map_put(&rnum, u, (intptr_t)nr);
      if (!r) goto nomem;
      ranges[nr] = u;
      me[nr / 64] |= (uint64_t)1 << (nr % 64);
      nr++;
    }
    if (u->op == UOP_STORE || u->op == UOP_SINK) continue; /* stores bind their ranges; checked below */
    if (u->op == UOP_REDUCE) { /* free(body) minus its ranges, plus what the ranges' ends use */
      memcpy(me, row(&fr, (size_t)*kt_map_find(&idx, u->src[0])), fr.words * sizeof *me);
      for (uint32_t s = 1; s < u->nsrc; s++) {
        size_t rn = (size_t)*kt_map_find(&rnum, u->src[s]);
        me[rn / 64] &= ~((uint64_t)1 << (rn % 64));
      }
      for (uint32_t s = 1; s < u->nsrc && !st; s++) {
        const uint64_t *end = row(&fr, (size_t)*kt_map_find(&idx, u->src[s]->src[0]));
        for (uint32_t t = 1; t < u->nsrc; t++) {
          size_t tn = (size_t)*kt_map_find(&rnum, u->src[t]);
          if (end[tn / 64] >> (tn % 64) & 1) {
            char tmp[300];
            snprintf(tmp, sizeof tmp, "the end of reduce range %s depends on a range of the same reduce",
                     DESC(&v, u->src[s]));
            st = bad(&v, u, tmp);
            break;
          }
        }
        for (size_t k = 0; k < fr.words; k++) me[k] |= end[k];
      }
      continue;
    }
    for (uint32_t s = 0; s < u->nsrc; s++) {
      const uint64_t *o = row(&fr, (size_t)*kt_map_find(&idx, u->src[s]));
      for (size_t k = 0; k < fr.words; k++) me[k] |= o[k];
    }
  }
  /* Stores: everything they use must be closed by them (or reduced over inside). */
  for (uint32_t si = 0; si < root->nsrc && !st; si++) {
    const uop *s = root->src[si];
    memset(allowed, 0, fr.words * sizeof *allowed);
    for (uint32_t j = 2; j < s->nsrc && !st; j++) {
      size_t rn = (size_t)*kt_map_find(&rnum, s->src[j]);
      if (allowed[rn / 64] >> (rn % 64) & 1) {
        st = bad(&v, s, "store closes the same range twice");
        break;
      }
      const uint64_t *end = row(&fr, (size_t)*kt_map_find(&idx, s->src[j]->src[0]));
      int x = first_extra(end, allowed, fr.words);
      if (x >= 0) {
        char tmp[400];
        snprintf(tmp, sizeof tmp, "the end of range %s uses range %s, which is not an earlier range of this store",
                 DESC(&v, s->src[j]), DESC(&v, ranges[x]));
        st = bad(&v, s, tmp);
      }
      allowed[rn / 64] |= (uint64_t)1 << (rn % 64);
    }
    for (uint32_t j = 0; j < 2 && !st; j++) {
      int x = first_extra(row(&fr, (size_t)*kt_map_find(&idx, s->src[j])), allowed, fr.words);
      if (x >= 0) {
        char tmp[400];
        snprintf(tmp, sizeof tmp, "range %s (id %" PRId64 ", %s) is used outside its scope: this store does not close "
                 "it and it is not inside a reduce over it", DESC(&v, ranges[x]), ranges[x]->arg.i,
                 uop_axis_name((uop_axis)ranges[x]->arg.i2));
        st = bad(&v, s, tmp);
      }
    }
  }
  if (!st) st = kv_check_values(order, n, v.describe, v.user);
  goto done;
nomem:
  st = hcq_status_make(HCQ_CODE_NOMEM, "validate: out of memory");
done:
  free(order);
  free(fr.w);
  free(ranges);
  free(allowed);
  kt_map_free(&idx);
  kt_map_free(&slots);
  kt_map_free(&rnum);
  return st;
}

hcq_status cc_kernel_validate(const uop *sink) { return kv_validate(sink, NULL, NULL); }
