/* Vectorize: fold the expander's scalar lanes back into vector memory accesses and vector arithmetic (the load/store
 * folding of the reference's devectorize step, tinygrad/codegen/late/devectorizer.py, built up from scalars instead of
 * split down from vectors).
 *
 * Runs last (after index lowering and decompositions), only for targets with vector_max >= 2 (the c target):
 * 1. Loads: global LOADs of float32 whose index is root + c, with the same buffer, root, gate and other sources,
 *    and consecutive offsets c0..c0+w-1, become one LOAD of a w-vector; the scalar users read its lanes (GEP).
 *    A group the target's buffer alignment covers (w*4 <= buf_align_B: rendered through the aligned vector type)
 *    folds only when root + c0 is provably a multiple of w: root must divide w (constants, sums and products
 *    thereof) and c0 % w == 0; wider groups are rendered unaligned and fold at any offset. Lanes that differ only
 *    in their gate (a padded tile's edge) fold at full width with a vector of lane gates (mixed_run).
 * 2. Stores: the SINK's global STOREs, grouped the same way, become one STORE of a vector value; so do the stores
 *    under a BARRIER (a CPU cross-thread reduce's per-lane partials, into its DEFINE_LOCAL scratch array, whose loads
 *    fold as in 1.), first.
 * 3. The vector value of a store is built by vec(): lane-parallel ALU (+ - * / neg, mulacc) on float lanes becomes
 *    one vector op (and float32 compares, selects, float32/uint32 bitcasts and uint32 arithmetic: vector_other), lanes of a folded load become that load, identical lanes a broadcast, and per-lane accumulators
 *    (LOAD/STORE chains on distinct one-element DEFINE_REGs) become one vector accumulator. Anything else stays a
 *    VECTORIZE of the scalar lanes. Widths tried: vector_max, vector_max/2, ..., 2. */
#include <stdlib.h>
#include <string.h>

#include "compiler/cc_internal.h"
#include "compiler/opt_internal.h"
#include "base/ptrmap.h"

#define VEC_MAX 16

typedef struct vz {
  uop_ctx *ctx;
  base_ptrmap memo;   /* VECTORIZE(lanes) key -> vectorized node */
  base_ptrmap regs;   /* first lane DEFINE_REG -> vector DEFINE_REG (with its lanes checked in reg_lanes) */
  base_ptrmap stores; /* first lane REG STORE -> vector STORE */
  base_ptrmap repl;   /* scalar LOAD -> GEP of the vector load */
  int64_t next_reg;  /* next free DEFINE_REG slot */
  int64_t align_B;   /* the target's buf_align_B */
  bool oom;
} vz;

/* ------------------------------------------------------------------------------------------------ alignment */

/* True when every value of n is a multiple of w (w > 0): constants, sums, differences, products, shifts by a
 * constant and widening casts of such expressions. Unknown forms are not multiples. */
static bool divides(const uop *n, int64_t w) {
  int64_t v;
  if (uop_const_value(n, &v)) return v % w == 0;
  switch (n->op) {
    case UOP_ADD: case UOP_SUB: return divides(n->src[0], w) && divides(n->src[1], w);
    case UOP_MUL: return divides(n->src[0], w) || divides(n->src[1], w);
    case UOP_SHL:
      if (uop_const_value(n->src[1], &v) && v >= 0 && v < 62 && ((int64_t)1 << v) % w == 0) return true;
      return divides(n->src[0], w);
    case UOP_CAST:
      return uop_dt_is_int(n->dtype) && uop_dt_is_int(n->src[0]->dtype) &&
             uop_dt_bits(n->dtype) >= uop_dt_bits(n->src[0]->dtype) && divides(n->src[0], w);
    default: return false;
  }
}

/* index = root + off with off a constant (root = index, off = 0 otherwise; root NULL for a constant index). */
static void split_index(const uop *idx, const uop **root, int64_t *off) {
  int64_t v;
  if (uop_const_value(idx, &v)) {
    *root = NULL;
    *off = v;
    return;
  }
  if (idx->op == UOP_ADD && uop_const_value(idx->src[1], &v)) {
    *root = idx->src[0];
    *off = v;
    return;
  }
  *root = idx;
  *off = 0;
}

/* ------------------------------------------------------------------------------------------------ groups */

/* One scalar global access: LOAD(INDEX(buf, root+off[, gate]), rest...) or STORE(INDEX(...), val, rest...). */
typedef struct acc {
  const uop *node, *buf, *root, *gate;
  int64_t off;
  size_t order; /* position in the SINK (stores) or toposort (loads) */
} acc;

/* Nodes (or NULL, first) by creation id: an order that does not depend on where the arena put them (comparing
 * addresses made the group order, and so the generated source, change with the allocation pattern). */
static int cmp_node(const uop *a, const uop *b) {
  int64_t x = a ? (int64_t)a->id : -1, y = b ? (int64_t)b->id : -1;
  return x < y ? -1 : x > y;
}

/* Same group: same buffer, root, gate and the same sources other than the index (and, for stores, the value). */
static int acc_key_cmp(const acc *a, const acc *b) {
  int c;
  if ((c = cmp_node(a->buf, b->buf)) || (c = cmp_node(a->root, b->root)) || (c = cmp_node(a->gate, b->gate))) return c;
  const uop *x = a->node, *y = b->node;
  if (x->nsrc != y->nsrc) return x->nsrc < y->nsrc ? -1 : 1;
  for (uint32_t i = x->op == UOP_STORE ? 2 : 1; i < x->nsrc; i++) {
    /* a store's expanded UPCAST lane (what closed it before the expander) is a constant per lane */
    if (x->op == UOP_STORE && x->src[i]->op == UOP_CONST && y->src[i]->op == UOP_CONST) continue;
    if ((c = cmp_node(x->src[i], y->src[i]))) return c;
  }
  return 0;
}

static int acc_cmp(const void *pa, const void *pb) {
  const acc *a = pa, *b = pb;
  int c = acc_key_cmp(a, b);
  if (c) return c;
  return a->off < b->off ? -1 : a->off > b->off;
}

/* A scalar float32 access to a global buffer, or to a CPU cross-thread reduce's scratch array (DEFINE_LOCAL), through
 * INDEX(buf, idx[, gate]); fills the group fields. */
static bool as_access(const uop *n, acc *out) {
  const uop *val = n->op == UOP_LOAD ? n : n->nsrc >= 2 ? n->src[1] : NULL;
  if (!val || n->nsrc < 1 || val->dtype.scalar != UOP_FLOAT32 || val->dtype.count != 1 ||
      uop_dt_is_ptr(val->dtype))
    return false;
  const uop *ix = n->src[0];
  if (ix->op != UOP_INDEX_OP || ix->nsrc < 2 || ix->nsrc > 3 ||
      (ix->src[0]->op != UOP_DEFINE_GLOBAL && ix->src[0]->op != UOP_DEFINE_LOCAL))
    return false;
  if (ix->src[0]->dtype.count != 1 || !uop_dt_is_int(ix->src[1]->dtype)) return false;
  out->node = n;
  out->buf = ix->src[0];
  out->gate = ix->nsrc == 3 ? ix->src[2] : NULL;
  split_index(ix->src[1], &out->root, &out->off);
  return true;
}

/* The renderer (render_c.c access_ptr) uses the aligned vector type when the buffers' alignment covers the whole
 * vector, so such a group must start on a multiple of w; a wider one is accessed through the unaligned type
 * (a 16-float group at row 1 of a 1000-wide matrix, offset 1000). Accesses are float32 (4 bytes). */
static bool aligned_enough(const acc *a, int w, int64_t align_B) {
  return (int64_t)w * 4 > align_B || (a->off % w == 0 && (!a->root || divides(a->root, w)));
}

/* The widest width w (vector_max, /2, ..., 2) such that a[i..i+w) is one group with offsets off..off+w-1, off % w
 * == 0 and the root divisible by w where aligned_enough asks for it; 0 if none. */
static int run_width(const acc *a, size_t n, size_t i, int vmax, int64_t align_B) {
  for (int w = vmax; w >= 2; w /= 2) {
    if (i + (size_t)w > n || !aligned_enough(&a[i], w, align_B)) continue;
    bool ok = true;
    for (int j = 1; j < w && ok; j++)
      ok = acc_key_cmp(&a[i], &a[i + j]) == 0 && a[i + j].off == a[i].off + j;
    if (ok) return w;
  }
  return 0;
}

/* Mixed gates: lanes that differ only in their gate (a padded tile's edge: with 16 lanes over a 1000-wide axis,
 * lanes 0-7 are valid while tile < 63, lanes 8-15 while tile < 62). Grouped by everything else, a run of w
 * lanes with consecutive offsets and at least two different gates folds whole: its INDEX gets a vector gate (a
 * VECTORIZE of the lane gates, true for an ungated lane) and render_c.c emits one full-width access when every
 * lane is valid and lane by lane otherwise, so the arithmetic stays w wide instead of splitting at the gate. */
static int acc_key_nogate_cmp(const acc *a, const acc *b) {
  acc x = *a, y = *b;
  x.gate = y.gate = NULL;
  int c = acc_key_cmp(&x, &y);
  if (c) return c;
  if (a->off != b->off) return a->off < b->off ? -1 : 1;
  return cmp_node(a->gate, b->gate);
}

static int acc_nogate_qsort(const void *pa, const void *pb) { return acc_key_nogate_cmp(pa, pb); }

/* w if a[i..i+w) (sorted by acc_key_nogate_cmp) is one mixed-gate run as above, else 0. */
static int mixed_run(const acc *a, size_t n, size_t i, int w, int64_t align_B) {
  if (i + (size_t)w > n || !aligned_enough(&a[i], w, align_B)) return 0;
  bool mixed = false;
  for (int j = 1; j < w; j++) {
    acc x = a[i], y = a[i + j];
    x.gate = y.gate = NULL;
    if (acc_key_cmp(&x, &y) != 0 || a[i + j].off != a[i].off + j) return 0;
    mixed |= a[i + j].gate != a[i].gate;
  }
  return mixed ? w : 0;
}

/* INDEX(buf, lane 0's index, VECTORIZE(lane gates)) for the w lanes at a (NULL on oom). */
static const uop *mixed_index(uop_ctx *ctx, const acc *a, int w, bool *oom) {
  const uop *g[VEC_MAX], *t = uop_const_bool(ctx, true);
  for (int l = 0; l < w; l++) g[l] = a[l].gate ? a[l].gate : t;
  const uop *ix = a[0].node->src[0];
  const uop *vg = t ? uop_new(ctx, UOP_VECTORIZE, uop_dt_vec(uop_dt(UOP_BOOL), w), g, (uint32_t)w, uop_arg_none()) : NULL;
  const uop *src[3] = {ix->src[0], ix->src[1], vg};
  const uop *out = vg ? uop_new(ctx, UOP_INDEX_OP, ix->dtype, src, 3, ix->arg) : NULL;
  if (!out) *oom = true;
  return out;
}

/* Sort a[0..n) for the mixed-gate runs, widest first (vmax, vmax/2, ..., 2), a run of w starting a multiple of w
 * lanes into its chain of consecutive offsets (the tiles the expander made); mark their lanes in used[] (a run's
 * lanes end up consecutive) and the run's width at its first lane in widths[] (0 elsewhere). */
static void take_mixed(acc *a, size_t n, int vmax, int64_t align_B, bool *used, int *widths) {
  /* no gate at all: no mixed run, and the sort is left to the callers' acc_cmp one, which is this order when every
   * gate is NULL (sorting twice by one order = once, for glibc's stable merge sort or when no two accesses tie) */
  bool gated = false;
  for (size_t i = 0; i < n && !gated; i++) gated = a[i].gate != NULL;
  if (!gated) {
    memset(used, 0, n * sizeof *used);
    memset(widths, 0, n * sizeof *widths);
    return;
  }
  qsort(a, n, sizeof *a, acc_nogate_qsort);
  int64_t chain_off = 0;
  for (size_t i = 0; i < n;) {
    acc prev = i ? a[i - 1] : a[i], cur = a[i];
    prev.gate = cur.gate = NULL;
    if (i == 0 || acc_key_cmp(&prev, &cur) != 0 || a[i - 1].off != a[i].off - 1) chain_off = a[i].off;
    int w = vmax;
    while (w >= 2 && ((a[i].off - chain_off) % w || !mixed_run(a, n, i, w, align_B))) w /= 2;
    if (w >= 2) {
      for (int l = 0; l < w; l++) used[i + (size_t)l] = true, widths[i + (size_t)l] = l ? 0 : w;
      i += (size_t)w;
    } else {
      used[i] = false, widths[i] = 0;
      i++;
    }
  }
}

/* ------------------------------------------------------------------------------------------------ vec() */

static const uop *vec(vz *z, const uop *const *lanes, int w);

static const uop *mk(vz *z, uop_op op, uop_dtype dt, const uop *const *src, uint32_t nsrc, uop_arg arg) {
  for (uint32_t i = 0; i < nsrc; i++)
    if (!src[i]) return NULL;
  const uop *n = uop_new(z->ctx, op, dt, src, nsrc, arg);
  if (!n) z->oom = true;
  return n;
}

static bool same_srcs_from(const uop *const *lanes, int w, uint32_t first) {
  for (int l = 1; l < w; l++) {
    if (lanes[l]->nsrc != lanes[0]->nsrc) return false;
    for (uint32_t i = first; i < lanes[0]->nsrc; i++)
      if (lanes[l]->src[i] != lanes[0]->src[i]) return false;
  }
  return true;
}

/* INDEX(DEFINE_REG(T*[1]), 0) on w distinct scalar registers -> INDEX(one vector register, 0), or NULL. */
static const uop *vec_reg_index(vz *z, const uop *const *lanes, int w) {
  const uop *regs[VEC_MAX];
  for (int l = 0; l < w; l++) {
    const uop *ix = lanes[l];
    int64_t v;
    if (ix->op != UOP_INDEX_OP || ix->nsrc != 2 || ix->src[0]->op != UOP_DEFINE_REG || ix->src[0]->dtype.size != 1 ||
        ix->src[0]->dtype.count != 1 || !uop_const_value(ix->src[1], &v) || v != 0 || ix->src[1] != lanes[0]->src[1])
      return NULL;
    regs[l] = ix->src[0];
    for (int k = 0; k < l; k++)
      if (regs[k] == regs[l]) return NULL;
  }
  /* the vector register of this lane tuple: the first lane's entry must hold the same tuple */
  uintptr_t *m = base_ptrmap_find(&z->regs, regs[0]);
  const uop *vreg;
  if (m) {
    const uop *const *tuple = (const uop *const *)*m;
    for (int l = 0; l < w; l++)
      if (tuple[l] != regs[l]) return NULL;
    vreg = tuple[w];
  } else {
    const uop **tuple = uop_ctx_alloc(z->ctx, (size_t)(w + 1) * sizeof *tuple);
    if (!tuple) {
      z->oom = true;
      return NULL;
    }
    memcpy(tuple, regs, (size_t)w * sizeof *tuple);
    uop_dtype dt = uop_dt_ptr(uop_dt_vec(uop_dt_base_of(regs[0]->dtype), w), UOP_AS_REG, 1);
    vreg = tuple[w] = mk(z, UOP_DEFINE_REG, dt, NULL, 0, uop_arg_int(z->next_reg++));
    if (!vreg || !base_ptrmap_put(&z->regs, regs[0], (uintptr_t)tuple)) {
      z->oom = true;
      return NULL;
    }
  }
  const uop *src[2] = {vreg, lanes[0]->src[1]};
  return mk(z, UOP_INDEX_OP, vreg->dtype, src, 2, uop_arg_none());
}

/* STORE(INDEX(reg_l, 0), v_l, rest...) lanes -> STORE(INDEX(vreg, 0), vec(v), rest...), or NULL. */
static const uop *vec_reg_store(vz *z, const uop *const *lanes, int w) {
  uintptr_t *m = base_ptrmap_find(&z->stores, lanes[0]);
  if (m) { /* the memo holds lane 0's tuple and its vector store */
    const uop *const *tuple = (const uop *const *)*m;
    for (int l = 0; l < w; l++)
      if (tuple[l] != lanes[l]) return NULL;
    return tuple[w];
  }
  for (int l = 0; l < w; l++)
    if (lanes[l]->op != UOP_STORE || lanes[l]->nsrc < 2) return NULL;
  if (!same_srcs_from(lanes, w, 2)) return NULL;
  const uop *ix[VEC_MAX], *vals[VEC_MAX];
  for (int l = 0; l < w; l++) {
    ix[l] = lanes[l]->src[0];
    vals[l] = lanes[l]->src[1];
  }
  const uop *vix = vec_reg_index(z, ix, w);
  if (!vix) return NULL;
  const uop **src = malloc(lanes[0]->nsrc * sizeof *src);
  if (!src) {
    z->oom = true;
    return NULL;
  }
  src[0] = vix;
  src[1] = vec(z, vals, w);
  for (uint32_t i = 2; i < lanes[0]->nsrc; i++) src[i] = lanes[0]->src[i];
  const uop *out = mk(z, UOP_STORE, lanes[0]->dtype, src, lanes[0]->nsrc, lanes[0]->arg);
  free(src);
  const uop **tuple = out ? uop_ctx_alloc(z->ctx, (size_t)(w + 1) * sizeof *tuple) : NULL;
  if (!tuple) {
    z->oom = true;
    return NULL;
  }
  memcpy(tuple, lanes, (size_t)w * sizeof *tuple);
  tuple[w] = out;
  if (!base_ptrmap_put(&z->stores, lanes[0], (uintptr_t)tuple)) z->oom = true;
  return out;
}

/* True if a DEFINE_REG of lanes' INDEXes (lanes[l]->src[0]->src[0]) is under n: then n still reads or writes the
 * scalar accumulators, whose update stores the vector chain replaces, so it cannot stand for them. */
static bool uses_lane_regs(vz *z, const uop *n, const uop *const *lanes, int w) {
  const uop **nodes;
  size_t count;
  hcq_status st = uop_toposort(z->ctx, n, &nodes, &count);
  if (st) {
    hcq_status_free(st);
    z->oom = true;
    return true;
  }
  for (size_t k = 0; k < count; k++)
    if (nodes[k]->op == UOP_DEFINE_REG)
      for (int l = 0; l < w; l++)
        if (nodes[k] == lanes[l]->src[0]->src[0]) return true;
  return false;
}

/* LOAD(INDEX(reg_l, 0), STORE_l, rest...) lanes (accumulator reads) -> one vector LOAD, or NULL. */
static const uop *vec_reg_load(vz *z, const uop *const *lanes, int w) {
  if (!same_srcs_from(lanes, w, 2)) return NULL;
  const uop *ix[VEC_MAX], *st[VEC_MAX];
  for (int l = 0; l < w; l++) {
    ix[l] = lanes[l]->src[0];
    st[l] = lanes[l]->nsrc >= 2 ? lanes[l]->src[1] : NULL;
  }
  const uop *vix = vec_reg_index(z, ix, w);
  if (!vix) return NULL;
  const uop **src = malloc(lanes[0]->nsrc * sizeof *src);
  if (!src) {
    z->oom = true;
    return NULL;
  }
  src[0] = vix;
  for (uint32_t i = 1; i < lanes[0]->nsrc; i++) src[i] = lanes[0]->src[i];
  const uop *out = NULL;
  if (lanes[0]->nsrc >= 2) src[1] = st[0] && st[0]->op == UOP_STORE ? vec_reg_store(z, st, w) : NULL;
  if (lanes[0]->nsrc < 2 || src[1]) out = mk(z, UOP_LOAD, uop_dt_vec(lanes[0]->dtype, w), src, lanes[0]->nsrc, lanes[0]->arg);
  free(src);
  /* all or nothing: a chain whose update fell back to scalar lanes would mix the two register sets */
  if (out && uses_lane_regs(z, out, lanes, w)) out = NULL;
  return out;
}

static bool vector_alu(uop_op op) {
  return op == UOP_ADD || op == UOP_SUB || op == UOP_MUL || op == UOP_FDIV || op == UOP_NEG || op == UOP_MULACC;
}

static bool is_cmp(uop_op op) { return op == UOP_CMPLT || op == UOP_CMPNE || op == UOP_CMPEQ; }
static bool is_dt(uop_dtype d, uop_scalar sc) { return d.scalar == sc && d.count == 1 && !uop_dt_is_ptr(d); }

/* Lane-parallel ops beyond float arithmetic that have a C vector form (render_c.c): float32 compares (an int mask),
 * float32 MAX, selects on such a mask, float32 <-> uint32 bitcasts, and uint32 arithmetic with shifts by a constant
 * below 32 (unsigned: wrapping is defined). What exp2/log2's decompositions are built from. */
static bool vector_other(const uop *n) {
  uop_op op = (uop_op)n->op;
  if (is_cmp(op)) return is_dt(n->src[0]->dtype, UOP_FLOAT32);
  if (op == UOP_MAX) return is_dt(n->dtype, UOP_FLOAT32); /* only c keeps float MAX (its HCQ_FMAX macros) */
  if (op == UOP_WHERE) return is_dt(n->dtype, UOP_FLOAT32) || is_dt(n->dtype, UOP_UINT32);
  if (op == UOP_BITCAST)
    return (is_dt(n->dtype, UOP_UINT32) && is_dt(n->src[0]->dtype, UOP_FLOAT32)) ||
           (is_dt(n->dtype, UOP_FLOAT32) && is_dt(n->src[0]->dtype, UOP_UINT32));
  if (!is_dt(n->dtype, UOP_UINT32)) return false;
  int64_t v;
  if (op == UOP_SHL || op == UOP_SHR) return uop_const_value(n->src[1], &v) && v >= 0 && v < 32;
  return op == UOP_ADD || op == UOP_SUB || op == UOP_MUL || op == UOP_AND || op == UOP_OR || op == UOP_XOR;
}

/* A w-vector whose lane l equals lanes[l] (scalars of one dtype). */
static const uop *vec(vz *z, const uop *const *lanes, int w) {
  for (int l = 0; l < w; l++)
    if (!lanes[l]) return NULL;
  const uop *key = mk(z, UOP_VECTORIZE, uop_dt_vec(lanes[0]->dtype, w), lanes, (uint32_t)w, uop_arg_none());
  if (!key) return NULL;
  uintptr_t *m = base_ptrmap_find(&z->memo, key);
  if (m) return (const uop *)*m;
  const uop *out = NULL, *first = lanes[0];
  bool same = true, same_op = true;
  for (int l = 1; l < w; l++) {
    same &= lanes[l] == first;
    same_op &= lanes[l]->op == first->op && lanes[l]->nsrc == first->nsrc && uop_dt_eq(lanes[l]->dtype, first->dtype) &&
               uop_arg_eq(&lanes[l]->arg, &first->arg);
  }
  if (same) {
    out = key; /* broadcast */
  } else if (first->op == UOP_GEP && first->src[0]->dtype.count == w) { /* lanes 0..w-1 of one vector */
    bool seq = true;
    for (int l = 0; l < w && seq; l++)
      seq = lanes[l]->op == UOP_GEP && lanes[l]->src[0] == first->src[0] && lanes[l]->arg.kind == UOP_ARG_INTS &&
            lanes[l]->arg.n == 1 && lanes[l]->arg.ints[0] == l;
    if (seq) out = first->src[0];
  } else if (same_op && vector_alu((uop_op)first->op) && uop_dt_is_float(first->dtype) && first->nsrc <= 3) {
    const uop *src[3], *col[VEC_MAX];
    for (uint32_t i = 0; i < first->nsrc; i++) {
      for (int l = 0; l < w; l++) col[l] = lanes[l]->src[i];
      src[i] = vec(z, col, w);
    }
    out = mk(z, (uop_op)first->op, key->dtype, src, first->nsrc, first->arg);
  } else if (same_op && first->nsrc <= 3 && vector_other(first)) {
    bool ok = true;
    for (int l = 1; l < w && ok; l++) ok = vector_other(lanes[l]);
    const uop *src[3], *col[VEC_MAX];
    for (uint32_t i = 0; i < first->nsrc && ok; i++) {
      for (int l = 0; l < w; l++) col[l] = lanes[l]->src[i];
      src[i] = vec(z, col, w);
      /* a select needs a real mask (a compare), not lanes of bools; shifts their constant, broadcast */
      ok = src[i] && (first->op != UOP_WHERE || i || is_cmp((uop_op)src[i]->op));
    }
    if (ok) out = mk(z, (uop_op)first->op, key->dtype, src, first->nsrc, first->arg);
  } else if (same_op && first->op == UOP_LOAD && first->src[0]->op == UOP_INDEX_OP &&
             first->src[0]->src[0]->op == UOP_DEFINE_REG) {
    out = vec_reg_load(z, lanes, w);
  }
  if (z->oom) return NULL;
  if (!out) out = key;
  if (!base_ptrmap_put(&z->memo, key, (uintptr_t)out)) {
    z->oom = true;
    return NULL;
  }
  return out;
}

/* ------------------------------------------------------------------------------------------------ the pass */

static const uop *replace_loads(void *user, uop_ctx *ctx, const uop *n, hcq_status *st) {
  (void)ctx;
  (void)st;
  uintptr_t *m = base_ptrmap_find(&((vz *)user)->repl, n);
  return m ? (const uop *)*m : n;
}

/* One vector LOAD through ix for the w lanes at a; each lane's GEP recorded in z->repl. */
static void fold_load_run(vz *z, const acc *a, int w, const uop *ix) {
  const uop *ld = a[0].node;
  const uop **src = malloc(ld->nsrc * sizeof *src);
  if (!src || !ix) {
    free(src);
    z->oom = true;
    return;
  }
  src[0] = ix;
  for (uint32_t s = 1; s < ld->nsrc; s++) {
    const uop *alt = ld->src[s];
    if (s == 1 && alt->op != UOP_STORE && uop_dt_eq(alt->dtype, ld->dtype)) {
      const uop *col[VEC_MAX];
      for (int l = 0; l < w; l++) col[l] = alt;
      alt = mk(z, UOP_VECTORIZE, uop_dt_vec(alt->dtype, w), col, (uint32_t)w, uop_arg_none());
    }
    src[s] = alt;
  }
  const uop *vl = mk(z, UOP_LOAD, uop_dt_vec(ld->dtype, w), src, ld->nsrc, ld->arg);
  free(src);
  for (int l = 0; l < w && vl; l++) {
    int64_t lane = l;
    const uop *gep = mk(z, UOP_GEP, a[l].node->dtype, &vl, 1, uop_arg_ints(z->ctx, &lane, 1));
    if (!gep || !base_ptrmap_put(&z->repl, a[l].node, (uintptr_t)gep)) z->oom = true;
  }
}

/* Loads: the mixed-gate runs folded first, the rest compacted to a[0..*n) for the uniform-gate
 * grouping. */
static hcq_status fold_mixed_loads(vz *z, acc *a, size_t *n, int vmax) {
  bool *used = malloc((*n ? *n : 1) * sizeof *used);
  int *widths = malloc((*n ? *n : 1) * sizeof *widths);
  if (!used || !widths) return free(used), free(widths), hcq_status_make(HCQ_CODE_NOMEM, "vectorize: out of memory");
  take_mixed(a, *n, vmax, z->align_B, used, widths);
  size_t k = 0;
  for (size_t i = 0; i < *n && !z->oom;) {
    if (used[i]) {
      fold_load_run(z, a + i, widths[i], mixed_index(z->ctx, a + i, widths[i], &z->oom));
      i += (size_t)widths[i];
    } else {
      a[k++] = a[i++];
    }
  }
  *n = k;
  free(used);
  free(widths);
  return z->oom ? hcq_status_make(HCQ_CODE_NOMEM, "vectorize: out of memory") : HCQ_OK;
}

/* Group the scalar global loads; record each folded lane's GEP in z->repl. */
static hcq_status fold_loads(vz *z, const uop *const *nodes, size_t count, int vmax) {
  acc *a = malloc((count ? count : 1) * sizeof *a);
  if (!a) return hcq_status_make(HCQ_CODE_NOMEM, "vectorize: out of memory");
  size_t n = 0;
  for (size_t k = 0; k < count; k++)
    if (nodes[k]->op == UOP_LOAD && as_access(nodes[k], &a[n])) a[n++].order = k;
  hcq_status st = fold_mixed_loads(z, a, &n, vmax);
  if (st) return free(a), st;
  qsort(a, n, sizeof *a, acc_cmp);
  for (size_t i = 0; i < n && !z->oom;) {
    int w = run_width(a, n, i, vmax, z->align_B);
    if (!w) {
      i++;
      continue;
    }
    fold_load_run(z, a + i, w, a[i].node->src[0]);
    i += (size_t)w;
  }
  free(a);
  return z->oom ? hcq_status_make(HCQ_CODE_NOMEM, "vectorize: out of memory") : HCQ_OK;
}

/* Group the scalar stores among sink's sources (the SINK, or a BARRIER: a cross-thread reduce's partials) that nothing
 * else uses (users: node id -> number of users); vector stores replace each group. */
static hcq_status fold_store_list(vz *z, const uop *sink, const uint32_t *users, int vmax, const uop **out_sink) {
  *out_sink = sink;
  hcq_status st = HCQ_OK;
  acc *a = malloc((sink->nsrc ? sink->nsrc : 1) * sizeof *a);
  const uop **out = malloc((sink->nsrc ? sink->nsrc : 1) * sizeof *out);
  if (!st && (!a || !out)) st = hcq_status_make(HCQ_CODE_NOMEM, "vectorize: out of memory");
  size_t n = 0;
  for (uint32_t i = 0; i < sink->nsrc && !st; i++) {
    out[i] = sink->src[i];
    const uop *s = sink->src[i];
    if (s->op == UOP_STORE && users[s->id] == 1 && as_access(s, &a[n])) a[n++].order = i;
  }
  bool *mixed = !st ? malloc((n ? n : 1) * sizeof *mixed) : NULL;
  int *widths = !st ? malloc((n ? n : 1) * sizeof *widths) : NULL, *mw = NULL;
  acc *b = !st ? malloc((n ? n : 1) * sizeof *b) : NULL;
  if (!st && (!mixed || !widths || !b)) st = hcq_status_make(HCQ_CODE_NOMEM, "vectorize: out of memory");
  if (!st) take_mixed(a, n, vmax, z->align_B, mixed, widths);
  /* mixed-gate runs first (they keep their order: a stable partition), then the uniform-gate runs */
  size_t nmixed = 0;
  for (size_t i = 0; i < n && !st; i++) nmixed += mixed[i];
  for (size_t i = 0, km = 0, ku = nmixed; i < n && !st; i++) {
    if (mixed[i]) widths[km] = widths[i];
    b[mixed[i] ? km++ : ku++] = a[i];
  }
  if (!st) {
    memcpy(a, b, n * sizeof *a);
    qsort(a + nmixed, n - nmixed, sizeof *a, acc_cmp);
    mw = widths;
  }
  free(b);
  free(mixed);
  bool changed = false;
  for (size_t i = 0; i < n && !st && !z->oom;) {
    bool is_mixed = i < nmixed;
    int w = is_mixed ? mw[i] : run_width(a, n, i, vmax, z->align_B);
    if (!w) {
      i++;
      continue;
    }
    const uop *vals[VEC_MAX];
    size_t first = a[i].order;
    for (int l = 0; l < w; l++) {
      vals[l] = a[i + l].node->src[1];
      if (a[i + l].order < first) first = a[i + l].order;
    }
    const uop *s0 = a[i].node;
    const uop **src = malloc(s0->nsrc * sizeof *src);
    if (!src) {
      st = hcq_status_make(HCQ_CODE_NOMEM, "vectorize: out of memory");
      break;
    }
    memcpy(src, s0->src, s0->nsrc * sizeof *src);
    if (is_mixed) src[0] = mixed_index(z->ctx, a + i, w, &z->oom);
    src[1] = vec(z, vals, w);
    const uop *vs = mk(z, UOP_STORE, s0->dtype, src, s0->nsrc, s0->arg);
    free(src);
    for (int l = 0; l < w; l++) out[a[i + l].order] = NULL;
    out[first] = vs; /* the group takes the place of its first store */
    changed = true;
    i += (size_t)w;
  }
  if (!st && z->oom) st = hcq_status_make(HCQ_CODE_NOMEM, "vectorize: out of memory");
  if (!st && changed) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < sink->nsrc; i++)
      if (out[i]) out[k++] = out[i];
    *out_sink = uop_replace_src(z->ctx, sink, out, k);
    if (!*out_sink) st = hcq_status_make(HCQ_CODE_NOMEM, "vectorize: out of memory");
  }
  free(a);
  free(out);
  free(widths);
  return st;
}

static const uop *replace_bars(void *user, uop_ctx *ctx, const uop *n, hcq_status *st) {
  (void)ctx;
  (void)st;
  uintptr_t *m = base_ptrmap_find(user, n);
  return m ? (const uop *)*m : n;
}

/* Fold the stores under every BARRIER (a cross-thread reduce's per-lane partials into its scratch array: one vector
 * store, its accumulators one vector accumulator), then the SINK's. */
static hcq_status fold_stores(vz *z, const uop *sink, const uop *const *nodes, size_t count, int vmax,
                              const uop **out_sink) {
  *out_sink = sink;
  /* node id -> number of users (only the graph's entries are set and read) */
  uint32_t *users = malloc((uop_ctx_node_count(z->ctx) + 1) * sizeof *users);
  if (!users) return hcq_status_make(HCQ_CODE_NOMEM, "vectorize: out of memory");
  for (size_t k = 0; k < count; k++) users[nodes[k]->id] = 0;
  for (size_t k = 0; k < count; k++)
    for (uint32_t i = 0; i < nodes[k]->nsrc; i++) users[nodes[k]->src[i]->id]++;
  base_ptrmap bars = {0};
  hcq_status st = HCQ_OK;
  for (size_t k = 0; k < count && !st; k++) {
    if (nodes[k]->op != UOP_BARRIER) continue;
    const uop *nb;
    st = fold_store_list(z, nodes[k], users, vmax, &nb);
    if (!st && nb != nodes[k] && !base_ptrmap_put(&bars, nodes[k], (uintptr_t)nb))
      st = hcq_status_make(HCQ_CODE_NOMEM, "vectorize: out of memory");
  }
  const uop *rebuilt = sink;
  if (!st && bars.count) {
    st = cc_rebuild(z->ctx, sink, replace_bars, &bars, &rebuilt);
    free(users);
    users = NULL;
    const uop **nodes2;
    size_t count2;
    if (!st) st = uop_toposort(z->ctx, rebuilt, &nodes2, &count2);
    if (!st && !(users = malloc((uop_ctx_node_count(z->ctx) + 1) * sizeof *users)))
      st = hcq_status_make(HCQ_CODE_NOMEM, "vectorize: out of memory");
    for (size_t k = 0; !st && k < count2; k++) users[nodes2[k]->id] = 0;
    for (size_t k = 0; !st && k < count2; k++)
      for (uint32_t i = 0; i < nodes2[k]->nsrc; i++) users[nodes2[k]->src[i]->id]++;
  }
  base_ptrmap_free(&bars);
  if (!st) st = fold_store_list(z, rebuilt, users, vmax, out_sink);
  free(users);
  return st;
}

/* The final value of a one-element accumulator: LOAD(INDEX(DEFINE_REG(T*[1]), 0), STORE, ...), float32. */
static bool is_acc_value(const uop *n) {
  return n->op == UOP_LOAD && n->nsrc >= 2 && n->src[1]->op == UOP_STORE && n->dtype.scalar == UOP_FLOAT32 &&
         n->dtype.count == 1 && n->src[0]->op == UOP_INDEX_OP && n->src[0]->src[0]->op == UOP_DEFINE_REG &&
         n->src[0]->src[0]->dtype.size == 1;
}

/* The accumulator values under n through scalar float32 arithmetic, MAX, compares and selects (at most MAX_LEAVES of
 * them, each once; false when the walk grows past its budget). */
#define MAX_LEAVES (CC_REDUCE_CHAINS * VEC_MAX)
typedef struct leaf_walk {
  uint32_t *mark; /* node id -> the walk (gen) that saw it; ids below cap (the graph's nodes when the round began) */
  size_t cap;
  uint32_t gen;
  int nseen, nleaves;
  const uop *leaves[MAX_LEAVES];
} leaf_walk;

static void walk_reset(leaf_walk *w) {
  w->gen++;
  w->nseen = w->nleaves = 0;
}

static bool acc_leaves(const uop *n, leaf_walk *w) {
  if (n->id >= w->cap || w->nseen == 1024) return false;
  if (w->mark[n->id] == w->gen) return true;
  w->mark[n->id] = w->gen;
  w->nseen++;
  if (is_acc_value(n)) {
    if (w->nleaves == MAX_LEAVES) return false;
    w->leaves[w->nleaves++] = n;
    return true;
  }
  uop_op op = (uop_op)n->op;
  bool walk = n->dtype.count == 1 && (n->dtype.scalar == UOP_FLOAT32 || n->dtype.scalar == UOP_BOOL) &&
              (op == UOP_ADD || op == UOP_SUB || op == UOP_MUL || op == UOP_MAX || op == UOP_WHERE || is_cmp(op));
  for (uint32_t i = 0; walk && i < n->nsrc; i++)
    if (!acc_leaves(n->src[i], w)) return false;
  return true;
}

/* The highest nodes under n (n included) with c accumulator leaves each, in walk order, deduplicated (at most max
 * of them): the lane values of per-lane chains. False when some part of n has fewer leaves but not none. */
typedef struct root_walk {
  const uop *done[512]; /* nodes already descended (the combines share their operands: a DAG, not a tree) */
  int ndone;
} root_walk;

static bool chain_roots(const uop *n, int c, const uop **roots, int *nroots, int max, leaf_walk *w, root_walk *rw) {
  for (int i = 0; i < rw->ndone; i++)
    if (rw->done[i] == n) return true;
  if (rw->ndone == (int)(sizeof rw->done / sizeof rw->done[0])) return false;
  rw->done[rw->ndone++] = n;
  walk_reset(w);
  if (!acc_leaves(n, w)) return false;
  if (w->nleaves == 0) return true; /* constants, the combine's own compares of nothing */
  if (w->nleaves < c) return false;
  if (w->nleaves == c && n->dtype.scalar == UOP_FLOAT32) { /* a compare of a lane value descends to it */
    if (*nroots == max) return false;
    roots[(*nroots)++] = n;
    return true;
  }
  for (uint32_t i = 0; i < n->nsrc; i++)
    if (!chain_roots(n->src[i], c, roots, nroots, max, w, rw)) return false;
  return true;
}

/* Chains of per-lane accumulators (expander.c: c chains of w lanes, lane j of every chain combined first, then the
 * lanes): each chain becomes one vector accumulator, the lane-j combines one vector combine of the chains' vectors,
 * and only the last vector is combined lane by lane. Records root j -> GEP(combined vector, j) in z->repl; false
 * (nothing recorded) when some part does not fold. */
static bool fold_chains(vz *z, const uop *n, int nl, int w, leaf_walk *lw) {
  int c = nl / w;
  if (c < 2 || c > CC_REDUCE_CHAINS || nl % w) return false;
  const uop *roots[VEC_MAX], *lanes[VEC_MAX], *leaves[VEC_MAX][CC_REDUCE_CHAINS];
  int nroots = 0;
  root_walk *rw = malloc(sizeof *rw);
  if (!rw) {
    z->oom = true;
    return false;
  }
  rw->ndone = 0;
  bool found = chain_roots(n, c, roots, &nroots, w, lw, rw);
  free(rw);
  if (!found || nroots != w) return false;
  for (int j = 0; j < w; j++) {
    walk_reset(lw);
    if (!acc_leaves(roots[j], lw) || lw->nleaves != c) return false;
    memcpy(leaves[j], lw->leaves, (size_t)c * sizeof *lw->leaves);
  }
  for (int i = 0; i < c; i++) { /* chain i: leaf i of every root, one vector accumulator */
    for (int j = 0; j < w; j++) lanes[j] = leaves[j][i];
    const uop *v = vec(z, lanes, w);
    if (!v || v->op != UOP_LOAD || v->dtype.count != w) return false;
  }
  const uop *y = vec(z, roots, w);
  if (!y || y->op == UOP_VECTORIZE || y->dtype.count != w) return false;
  for (int j = 0; j < w && !z->oom; j++) {
    int64_t lane = j;
    const uop *gep = mk(z, UOP_GEP, roots[j]->dtype, &y, 1, uop_arg_ints(z->ctx, &lane, 1));
    if (!gep || !base_ptrmap_put(&z->repl, roots[j], (uintptr_t)gep)) z->oom = true;
  }
  return !z->oom;
}

/* Per-lane accumulators (the expander's per-lane REDUCEs) combined after their loop (sum, product, max: any float
 * arithmetic over their final values): their update chains become one vector accumulator when vec() finds them
 * lane-parallel; each lane's final value then reads its lane (GEP) and the combining code stays as it is. */
static hcq_status fold_acc_trees(vz *z, const uop *sink, int vmax, const uop **out_sink) {
  *out_sink = sink;
  leaf_walk *lw = calloc(1, sizeof *lw);
  if (!lw) return hcq_status_make(HCQ_CODE_NOMEM, "vectorize: out of memory");
  hcq_status st = HCQ_OK;
  /* one group per round: the rebuild that swaps a group's lanes for GEPs rebuilds every user of what an earlier
   * group's lanes read (another accumulator's value in the chain), so later groups are found on the new graph */
  for (bool changed = true; changed && !st;) {
    changed = false;
    const uop **nodes;
    size_t count;
    st = uop_toposort(z->ctx, *out_sink, &nodes, &count);
    free(lw->mark);
    lw->cap = uop_ctx_node_count(z->ctx) + 1;
    lw->gen = 0;
    if (!st && !(lw->mark = calloc(lw->cap, sizeof *lw->mark))) st = hcq_status_make(HCQ_CODE_NOMEM, "vectorize: out of memory");
    base_ptrmap_free(&z->repl);
    z->repl = (base_ptrmap){0};
    for (size_t k = count; !st && k-- > 0 && !z->oom && !changed;) { /* users first: the largest group first */
      const uop *n = nodes[k];
      if ((n->op != UOP_ADD && n->op != UOP_MUL && n->op != UOP_MAX && n->op != UOP_WHERE) ||
          n->dtype.scalar != UOP_FLOAT32 || n->dtype.count != 1)
        continue;
      walk_reset(lw);
      if (!acc_leaves(n, lw)) continue;
      int nl = lw->nleaves;
      if (nl > vmax) {
        changed = fold_chains(z, n, nl, vmax, lw);
        continue;
      }
      if (nl < 2 || (nl & (nl - 1))) continue;
      const uop *v = vec(z, lw->leaves, nl);
      if (!v || v->op != UOP_LOAD || v->dtype.count != nl) continue;
      for (int l = 0; l < nl && !z->oom; l++) {
        int64_t lane = l;
        const uop *gep = mk(z, UOP_GEP, lw->leaves[l]->dtype, &v, 1, uop_arg_ints(z->ctx, &lane, 1));
        if (!gep || !base_ptrmap_put(&z->repl, lw->leaves[l], (uintptr_t)gep)) z->oom = true;
      }
      changed = true;
    }
    if (!st && z->oom) st = hcq_status_make(HCQ_CODE_NOMEM, "vectorize: out of memory");
    if (!st && changed) st = cc_rebuild(z->ctx, *out_sink, replace_loads, z, out_sink);
  }
  free(lw->mark);
  free(lw);
  return st;
}

hcq_status cc_pass_vectorize(cc_pass_ctx *pc, const uop *sink, const uop **out_sink) {
  *out_sink = sink;
  int vmax = pc->target->vector_max;
  if (vmax > VEC_MAX) vmax = VEC_MAX;
  if (vmax < 2 || sink->op != UOP_SINK) return HCQ_OK;
  vz z = {.ctx = pc->ctx, .align_B = pc->target->buf_align_B};
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(pc->ctx, sink, &nodes, &count));
  for (size_t k = 0; k < count; k++)
    if (nodes[k]->op == UOP_DEFINE_REG && nodes[k]->arg.i >= z.next_reg) z.next_reg = nodes[k]->arg.i + 1;
  /* rounds: a load whose other sources held folded loads (a scratch load after the BARRIER of partials computed
   * from global loads) is rebuilt by the replacement, so it is no longer the node recorded; the next round folds it */
  hcq_status st = HCQ_OK;
  const uop *loaded = sink;
  for (int round = 0; round < 4 && !st; round++) {
    if (round) st = uop_toposort(pc->ctx, loaded, &nodes, &count);
    base_ptrmap_free(&z.repl);
    z.repl = (base_ptrmap){0};
    if (!st) st = fold_loads(&z, nodes, count, vmax);
    if (st || !z.repl.count) break;
    st = cc_rebuild(pc->ctx, loaded, replace_loads, &z, &loaded);
  }
  if (!st) st = uop_toposort(pc->ctx, loaded, &nodes, &count);
  const uop *stored = NULL;
  if (!st) st = fold_stores(&z, loaded, nodes, count, vmax, &stored);
  if (!st) st = fold_acc_trees(&z, stored, vmax, out_sink);
  base_ptrmap_free(&z.memo);
  base_ptrmap_free(&z.regs);
  base_ptrmap_free(&z.stores);
  base_ptrmap_free(&z.repl);
  if (st) *out_sink = NULL;
  return st;
}
