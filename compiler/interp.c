/* The reference interpreter (interp.h). Compile once, then run:
 *
 * - Every node gets a value slot. Constants and variables are filled in before the run; ranges are written by
 *   their loops; ALU/CAST/BITCAST/INDEX/LOAD/REDUCE nodes become instructions.
 * - A loop nest ("prog") is a list of ranges and one instruction list per level: level 0 runs before the first
 *   loop, level k inside loop k. The root progs are the stores (ranges = the ranges they close); each REDUCE owns a
 *   child prog over its ranges. A node goes into the innermost prog of its context that owns one of the ranges it
 *   depends on, at the level of the deepest such range, so it is evaluated once per iteration of that loop.
 * - The final action of a store prog writes one element; of a reduce prog, accumulates one value. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "compiler/interp.h"
#include "compiler/kernel_text_internal.h"
#include "compiler/kernel_valid.h"

typedef union ival {
  int64_t i;
  double f;
} ival;

/* Value classes: how a slot is interpreted. */
enum cls { C_INT, C_UINT, C_BOOL, C_F16, C_BF16, C_F32, C_F64 };

typedef struct prog prog;

typedef struct instr {
  uint8_t op, cls, scls; /* op, result class, class of src[0] */
  uint8_t bits, sbits;   /* integer widths of result and src[0] */
  int32_t dst, a, b, c;
  const uop *n;
  prog *sub;             /* REDUCE */
  int bslot;             /* LOAD: buffer slot */
} instr;

typedef struct ilist {
  instr *v;
  size_t n, cap;
} ilist;

struct prog {
  prog *parent, *next_all;
  const uop *owner;      /* STORE or REDUCE */
  uint32_t nranges;
  const uop *const *ranges;
  int32_t *range_slot, *end_slot;
  ilist *levels;         /* nranges + 1 */
  kt_map added;          /* nodes placed in this prog */
  /* final action */
  int32_t val_slot, idx_slot, gate_slot, dst_slot;
  int bslot;
  uint8_t cls, bits, redop;
};

typedef struct bufinfo {
  uint8_t *base;
  int64_t limit;
  uop_dtype dt;
  size_t item_B;
  uop_scalar elem;
} bufinfo;

typedef struct interp {
  const uop **order;
  size_t n;
  kt_map slot;           /* node -> slot */
  ival *vals;
  bufinfo *bufs;
  size_t nbufs;
  prog *all;             /* every prog, for freeing */
  /* free ranges per node, as bitsets over range numbers */
  uint64_t *fr;
  size_t words;
  kt_map rnum;
} interp;

static int32_t slot_of(const interp *I, const uop *n) { return (int32_t)*kt_map_find(&I->slot, n); }
static const uint64_t *free_of(const interp *I, const uop *n) { return I->fr + (size_t)slot_of(I, n) * I->words; }

static uint8_t cls_of(uop_dtype dt, uint8_t *bits) {
  *bits = (uint8_t)uop_dt_bits(dt);
  switch (dt.scalar) {
  case UOP_BOOL: return C_BOOL;
  case UOP_FLOAT16: return C_F16;
  case UOP_BFLOAT16: return C_BF16;
  case UOP_FLOAT32: return C_F32;
  case UOP_FLOAT64: return C_F64;
  default: return uop_dt_is_unsigned(dt) ? C_UINT : C_INT;
  }
}

static hcq_status nomem(void) { return hcq_status_make(HCQ_CODE_NOMEM, "interp: out of memory"); }

/* ------------------------------------------------------------------------------------------------ values */

static inline int64_t wrapv(uint64_t v, int bits, bool uns) {
  if (bits >= 64) return (int64_t)v;
  uint64_t m = ((uint64_t)1 << bits) - 1, u = v & m;
  if (!uns && (u >> (bits - 1))) u |= ~m;
  return (int64_t)u;
}

static inline double round_to(uint8_t cls, double f) {
  switch (cls) {
  case C_F32: return (double)(float)f;
  case C_F16: return cc_round_format(f, 10, -14, 15); /* from double in one rounding (not via float) */
  case C_BF16: return cc_round_format(f, 7, -126, 127);
  default: return f;
  }
}

static inline bool is_f(uint8_t cls) { return cls >= C_F16; }

/* Integer result of class cls/bits from a raw 64-bit value. */
static inline int64_t fix_int(uint8_t cls, int bits, uint64_t v) {
  if (cls == C_BOOL) return v != 0;
  return wrapv(v, bits, cls == C_UINT);
}

/* float -> integer (docs/FORMATS.md, casts): truncate toward zero, saturate to the type's range, NaN -> 0;
 * bool is x != 0 (NaN -> true). */
static int64_t float_to_int(double f, uint8_t cls, int bits) {
  if (cls == C_BOOL) return f != 0;
  if (isnan(f)) return 0;
  double t = trunc(f);
  if (cls == C_UINT) {
    if (t <= 0) return 0;
    if (t >= ldexp(1.0, bits)) return fix_int(cls, bits, UINT64_MAX);
    return fix_int(cls, bits, (uint64_t)t);
  }
  double lim = ldexp(1.0, bits - 1);
  if (t >= lim) return fix_int(cls, bits, ((uint64_t)1 << (bits - 1)) - 1);
  if (t < -lim) return fix_int(cls, bits, (uint64_t)1 << (bits - 1));
  return (int64_t)t;
}

/* integer -> float of class cls, rounded once (an int64 through double would round twice). */
static double int_to_float(int64_t v, uint8_t scls, uint8_t cls) {
  bool uns = scls == C_UINT;
  if (cls == C_F64) return uns ? (double)(uint64_t)v : (double)v;
  if (cls == C_F32) return uns ? (double)(float)(uint64_t)v : (double)(float)v;
  return round_to(cls, cc_int_to_f64_odd(v, uns));
}

/* Raw bits of a value (for BITCAST). */
static uint64_t raw_bits(ival v, uint8_t cls, int bits) {
  switch (cls) {
  case C_F32: {
    float f = (float)v.f;
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
  }
  case C_F64: {
    uint64_t u;
    memcpy(&u, &v.f, 8);
    return u;
  }
  case C_F16: return cc_f32_to_f16((float)v.f);
  case C_BF16: return cc_f32_to_bf16((float)v.f);
  default: return bits >= 64 ? (uint64_t)v.i : (uint64_t)v.i & (((uint64_t)1 << bits) - 1);
  }
}

static ival from_bits(uint64_t u, uint8_t cls, int bits) {
  ival r;
  switch (cls) {
  case C_F32: {
    uint32_t w = (uint32_t)u;
    float f;
    memcpy(&f, &w, 4);
    r.f = f;
    break;
  }
  case C_F64: memcpy(&r.f, &u, 8); break;
  case C_F16: r.f = cc_f16_to_f32((uint16_t)u); break;
  case C_BF16: r.f = cc_bf16_to_f32((uint16_t)u); break;
  default: r.i = fix_int(cls, bits, u); break;
  }
  return r;
}

static ival load_elem(const uint8_t *p, uop_scalar s) {
  ival r;
  switch (s) {
  case UOP_BOOL: r.i = *p != 0; break;
  case UOP_INT8: r.i = (int8_t)*p; break;
  case UOP_UINT8: r.i = *p; break;
  case UOP_INT16: { int16_t v; memcpy(&v, p, 2); r.i = v; break; }
  case UOP_UINT16: { uint16_t v; memcpy(&v, p, 2); r.i = v; break; }
  case UOP_INT32: { int32_t v; memcpy(&v, p, 4); r.i = v; break; }
  case UOP_UINT32: { uint32_t v; memcpy(&v, p, 4); r.i = v; break; }
  case UOP_FLOAT16: { uint16_t v; memcpy(&v, p, 2); r.f = cc_f16_to_f32(v); break; }
  case UOP_BFLOAT16: { uint16_t v; memcpy(&v, p, 2); r.f = cc_bf16_to_f32(v); break; }
  case UOP_FLOAT32: { float v; memcpy(&v, p, 4); r.f = v; break; }
  case UOP_FLOAT64: memcpy(&r.f, p, 8); break;
  default: memcpy(&r.i, p, 8); break; /* int64, uint64, index */
  }
  return r;
}

static void store_elem(uint8_t *p, uop_scalar s, ival v) {
  switch (s) {
  case UOP_BOOL: *p = v.i != 0; break;
  case UOP_INT8: case UOP_UINT8: *p = (uint8_t)v.i; break;
  case UOP_INT16: case UOP_UINT16: { uint16_t w = (uint16_t)v.i; memcpy(p, &w, 2); break; }
  case UOP_INT32: case UOP_UINT32: { uint32_t w = (uint32_t)v.i; memcpy(p, &w, 4); break; }
  case UOP_FLOAT16: { uint16_t w = cc_f32_to_f16((float)v.f); memcpy(p, &w, 2); break; }
  case UOP_BFLOAT16: { uint16_t w = cc_f32_to_bf16((float)v.f); memcpy(p, &w, 2); break; }
  case UOP_FLOAT32: { float w = (float)v.f; memcpy(p, &w, 4); break; }
  case UOP_FLOAT64: memcpy(p, &v.f, 8); break;
  default: memcpy(p, &v.i, 8); break;
  }
}

/* ------------------------------------------------------------------------------------------------ evaluation */

static hcq_status div_zero(const instr *in) {
  return hcq_status_make(HCQ_CODE_INVALID, "interp: division by zero in %s #%u", uop_op_name((uop_op)in->op),
                         in->n->id);
}

static hcq_status oob(const interp *I, const char *what, int bslot, int64_t idx, const uop *n) {
  char dts[80];
  const bufinfo *b = &I->bufs[bslot];
  return hcq_status_make(HCQ_CODE_INVALID, "interp: %s out of bounds: buffer slot %d (%s[%" PRId64 "]) index %" PRId64
                         " (valid 0..%" PRId64 ") at %s #%u", what, bslot, cc_dtype_str(uop_dt_base_of(b->dt), dts, 80),
                         b->dt.size, idx, b->limit - 1, uop_op_name((uop_op)n->op), n->id);
}

static hcq_status run_prog(interp *I, prog *P, uint32_t level);

/* IEEE 754-2019 maximum (docs/FORMATS.md): a NaN if either operand is NaN, -0 < +0; independent of operand order. */
static double max_ieee(double a, double b) {
  if (isnan(a) || isnan(b)) return a + b;
  if (a == b) return a == 0 ? a + b : a; /* -0 + +0 = +0 */
  return a > b ? a : b;
}

static hcq_status exec_float(const instr *in, ival *v) {
  double a = v[in->a].f, b = in->b >= 0 ? v[in->b].f : 0, r;
  bool f32 = in->scls != C_F64; /* float16/bfloat16 are computed in float, then rounded */
  switch (in->op) {
  case UOP_ADD: r = f32 ? (double)((float)a + (float)b) : a + b; break;
  case UOP_SUB: r = f32 ? (double)((float)a - (float)b) : a - b; break;
  case UOP_MUL: r = f32 ? (double)((float)a * (float)b) : a * b; break;
  case UOP_FDIV: r = f32 ? (double)((float)a / (float)b) : a / b; break;
  case UOP_MAX: r = max_ieee(a, b); break;
  case UOP_NEG: r = -a; break;
  case UOP_RECIP: r = f32 ? (double)(1.0f / (float)a) : 1.0 / a; break;
  case UOP_TRUNC: r = f32 ? (double)truncf((float)a) : trunc(a); break;
  case UOP_EXP2: r = f32 ? (double)exp2f((float)a) : exp2(a); break;
  case UOP_LOG2: r = f32 ? (double)log2f((float)a) : log2(a); break;
  case UOP_SIN: r = f32 ? (double)sinf((float)a) : sin(a); break;
  case UOP_SQRT: r = f32 ? (double)sqrtf((float)a) : sqrt(a); break;
  case UOP_MULACC:
    r = f32 ? (double)fmaf((float)a, (float)b, (float)v[in->c].f) : fma(a, b, v[in->c].f); /* fused */
    break;
  case UOP_CMPLT: v[in->dst].i = a < b; return HCQ_OK;
  case UOP_CMPNE: v[in->dst].i = a != b; return HCQ_OK;
  case UOP_CMPEQ: v[in->dst].i = a == b; return HCQ_OK;
  default:
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "interp: %s on floats", uop_op_name((uop_op)in->op));
  }
  v[in->dst].f = round_to(in->cls, r);
  return HCQ_OK;
}

static hcq_status exec_int(const instr *in, ival *v) {
  int64_t a = v[in->a].i, b = in->b >= 0 ? v[in->b].i : 0;
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b, r;
  bool uns = in->scls == C_UINT || in->scls == C_BOOL;
  int bits = in->sbits;
  switch (in->op) {
  case UOP_ADD: r = ua + ub; break;
  case UOP_SUB: r = ua - ub; break;
  case UOP_MUL: r = ua * ub; break;
  case UOP_NEG: r = 0 - ua; break;
  case UOP_MULACC: r = ua * ub + (uint64_t)v[in->c].i; break;
  case UOP_IDIV:
  case UOP_MOD:
    if (b == 0) return div_zero(in);
    if (uns) r = in->op == UOP_IDIV ? ua / ub : ua % ub;
    else if (a == INT64_MIN && b == -1) r = in->op == UOP_IDIV ? ua : 0;
    else r = (uint64_t)(in->op == UOP_IDIV ? a / b : a % b);
    break;
  case UOP_MAX: r = uns ? (ua > ub ? ua : ub) : (uint64_t)(a > b ? a : b); break;
  case UOP_AND: r = ua & ub; break;
  case UOP_OR: r = ua | ub; break;
  case UOP_XOR: r = ua ^ ub; break;
  case UOP_SHL: r = (ub >= (uint64_t)bits) ? 0 : ua << ub; break;
  case UOP_SHR:
    if (uns) r = ub >= (uint64_t)bits ? 0 : ua >> ub;
    else r = (uint64_t)(ub >= (uint64_t)bits ? (a < 0 ? -1 : 0) : a >> ub);
    break;
  case UOP_CMPLT: v[in->dst].i = uns ? ua < ub : a < b; return HCQ_OK;
  case UOP_CMPNE: v[in->dst].i = a != b; return HCQ_OK;
  case UOP_CMPEQ: v[in->dst].i = a == b; return HCQ_OK;
  default:
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "interp: %s on integers", uop_op_name((uop_op)in->op));
  }
  v[in->dst].i = fix_int(in->cls, in->bits, r);
  return HCQ_OK;
}

static hcq_status exec(interp *I, const instr *in) {
  ival *v = I->vals;
  switch (in->op) {
  case UOP_INDEX_OP: v[in->dst].i = v[in->a].i; return HCQ_OK;
  case UOP_LOAD: {
    if (in->b >= 0 && !v[in->b].i) { /* gated off */
      if (in->c >= 0) v[in->dst] = v[in->c];
      else if (is_f(in->cls)) v[in->dst].f = 0.0;
      else v[in->dst].i = 0;
      return HCQ_OK;
    }
    const bufinfo *b = &I->bufs[in->bslot];
    int64_t idx = v[in->a].i;
    if (idx < 0 || idx >= b->limit) return oob(I, "load", in->bslot, idx, in->n);
    v[in->dst] = load_elem(b->base + (size_t)idx * b->item_B, b->elem);
    return HCQ_OK;
  }
  case UOP_REDUCE: {
    prog *P = in->sub;
    ival init;
    if (P->redop == UOP_ADD) {
      if (is_f(P->cls)) init.f = 0.0;
      else init.i = 0;
    } else if (P->redop == UOP_MUL) {
      if (is_f(P->cls)) init.f = 1.0;
      else init.i = 1;
    } else {
      if (is_f(P->cls)) init.f = -INFINITY;
      else init.i = P->cls == C_INT ? wrapv((uint64_t)1 << (P->bits - 1), P->bits, false) : 0;
    }
    v[in->dst] = init;
    return run_prog(I, P, 0);
  }
  case UOP_CAST: {
    if (is_f(in->cls)) v[in->dst].f = is_f(in->scls) ? round_to(in->cls, v[in->a].f) : int_to_float(v[in->a].i, in->scls, in->cls);
    else if (is_f(in->scls)) v[in->dst].i = float_to_int(v[in->a].f, in->cls, in->bits);
    else v[in->dst].i = fix_int(in->cls, in->bits, (uint64_t)v[in->a].i);
    return HCQ_OK;
  }
  case UOP_BITCAST:
    v[in->dst] = from_bits(raw_bits(v[in->a], in->scls, in->sbits), in->cls, in->bits);
    return HCQ_OK;
  case UOP_WHERE:
    v[in->dst] = v[in->a].i ? v[in->b] : v[in->c];
    return HCQ_OK;
  default:
    return is_f(in->scls) ? exec_float(in, v) : exec_int(in, v);
  }
}

static hcq_status finish(interp *I, prog *P) {
  ival *v = I->vals;
  if (P->owner->op == UOP_REDUCE) {
    ival x = v[P->val_slot], *acc = &v[P->dst_slot];
    if (is_f(P->cls)) {
      double r = P->redop == UOP_ADD ? acc->f + x.f : P->redop == UOP_MUL ? acc->f * x.f : max_ieee(acc->f, x.f);
      if (P->cls != C_F64 && P->redop != UOP_MAX) {
        float fa = (float)acc->f, fx = (float)x.f;
        r = P->redop == UOP_ADD ? fa + fx : fa * fx;
      }
      acc->f = round_to(P->cls, r);
    } else {
      uint64_t a = (uint64_t)acc->i, b = (uint64_t)x.i, r;
      if (P->redop == UOP_ADD) r = a + b;
      else if (P->redop == UOP_MUL) r = a * b;
      else if (P->cls == C_INT) r = (int64_t)a > (int64_t)b ? a : b;
      else r = a > b ? a : b;
      acc->i = fix_int(P->cls, P->bits, r);
    }
    return HCQ_OK;
  }
  if (P->gate_slot >= 0 && !v[P->gate_slot].i) return HCQ_OK;
  const bufinfo *b = &I->bufs[P->bslot];
  int64_t idx = v[P->idx_slot].i;
  if (idx < 0 || idx >= b->limit) return oob(I, "store", P->bslot, idx, P->owner);
  store_elem(b->base + (size_t)idx * b->item_B, b->elem, v[P->val_slot]);
  return HCQ_OK;
}

static hcq_status run_prog(interp *I, prog *P, uint32_t level) {
  const ilist *l = &P->levels[level];
  for (size_t k = 0; k < l->n; k++) HCQ_TRY(exec(I, &l->v[k]));
  if (level == P->nranges) return finish(I, P);
  int64_t end = I->vals[P->end_slot[level]].i;
  ival *r = &I->vals[P->range_slot[level]];
  for (int64_t x = 0; x < end; x++) {
    r->i = x;
    HCQ_TRY(run_prog(I, P, level + 1));
  }
  return HCQ_OK;
}

/* ------------------------------------------------------------------------------------------------ compile */

static prog *new_prog(interp *I, prog *parent, const uop *owner, const uop *const *ranges, uint32_t nranges) {
  prog *P = calloc(1, sizeof *P);
  if (!P) return NULL;
  P->next_all = I->all;
  I->all = P;
  P->parent = parent;
  P->owner = owner;
  P->ranges = ranges;
  P->nranges = nranges;
  P->range_slot = calloc(nranges + 1, sizeof *P->range_slot);
  P->end_slot = calloc(nranges + 1, sizeof *P->end_slot);
  P->levels = calloc(nranges + 1, sizeof *P->levels);
  if (!P->range_slot || !P->end_slot || !P->levels) return NULL;
  for (uint32_t k = 0; k < nranges; k++) {
    P->range_slot[k] = slot_of(I, ranges[k]);
    P->end_slot[k] = slot_of(I, ranges[k]->src[0]);
  }
  P->gate_slot = -1;
  return P;
}

static void free_progs(interp *I) {
  for (prog *P = I->all, *nx; P; P = nx) {
    nx = P->next_all;
    if (P->levels)
      for (uint32_t k = 0; k <= P->nranges; k++) free(P->levels[k].v);
    free(P->levels);
    free(P->range_slot);
    free(P->end_slot);
    kt_map_free(&P->added);
    free(P);
  }
  I->all = NULL;
}

/* The prog and level where node n is evaluated when reached from prog ctx. */
static void place(const interp *I, prog *ctx, const uop *n, prog **out_p, uint32_t *out_level) {
  const uint64_t *f = free_of(I, n);
  for (prog *P = ctx; P; P = P->parent) {
    uint32_t level = 0;
    for (uint32_t k = 0; k < P->nranges; k++) {
      size_t rn = (size_t)*kt_map_find(&I->rnum, P->ranges[k]);
      if (f[rn / 64] >> (rn % 64) & 1) level = k + 1;
    }
    if (level || !P->parent) {
      *out_p = P;
      *out_level = level;
      return;
    }
  }
}

static bool ilist_push(ilist *l, instr in) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 16;
    instr *p = realloc(l->v, cap * sizeof *p);
    if (!p) return false;
    l->v = p;
    l->cap = cap;
  }
  l->v[l->n++] = in;
  return true;
}

typedef struct frame {
  const uop *n;
  prog *ctx;
  int state;
} frame;

typedef struct fstack {
  frame *v;
  size_t n, cap;
} fstack;

static bool fpush(fstack *s, const uop *n, prog *ctx, int state) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    frame *p = realloc(s->v, cap * sizeof *p);
    if (!p) return false;
    s->v = p;
    s->cap = cap;
  }
  s->v[s->n++] = (frame){n, ctx, state};
  return true;
}

static instr make_instr(interp *I, const uop *u) {
  instr in = {.op = u->op, .dst = slot_of(I, u), .a = -1, .b = -1, .c = -1, .n = u};
  in.cls = cls_of(u->dtype, &in.bits);
  if (u->nsrc) in.scls = cls_of(u->src[0]->dtype, &in.sbits);
  if (u->op == UOP_LOAD) {
    const uop *idx = u->src[0];
    in.a = slot_of(I, idx);
    in.b = idx->nsrc > 2 ? slot_of(I, idx->src[2]) : -1;
    in.c = u->nsrc > 1 ? slot_of(I, u->src[1]) : -1;
    in.bslot = (int)idx->src[0]->arg.i;
    return in;
  }
  if (u->op == UOP_INDEX_OP) {
    in.a = slot_of(I, u->src[1]);
    return in;
  }
  if (u->op == UOP_WHERE) in.scls = cls_of(u->src[1]->dtype, &in.sbits);
  if (u->nsrc > 0) in.a = slot_of(I, u->src[0]);
  if (u->nsrc > 1) in.b = slot_of(I, u->src[1]);
  if (u->nsrc > 2) in.c = slot_of(I, u->src[2]);
  return in;
}

/* Place every node under the store's pointer and value into progs. */
static hcq_status compile_store(interp *I, const uop *st) {
  prog *S = new_prog(I, NULL, st, st->src + 2, st->nsrc - 2);
  if (!S) return nomem();
  const uop *idx = st->src[0];
  S->val_slot = slot_of(I, st->src[1]);
  S->idx_slot = slot_of(I, idx);
  S->gate_slot = idx->nsrc > 2 ? slot_of(I, idx->src[2]) : -1;
  S->bslot = (int)idx->src[0]->arg.i;
  fstack fs = {0};
  hcq_status err = HCQ_OK;
  bool ok = fpush(&fs, st->src[1], S, 0) && fpush(&fs, idx, S, 0);
  for (uint32_t k = 2; k < st->nsrc && ok; k++) ok = fpush(&fs, st->src[k]->src[0], S, 0);
  while (ok && fs.n && !err) {
    frame f = fs.v[--fs.n];
    const uop *u = f.n;
    if (u->op == UOP_CONST || u->op == UOP_DEFINE_VAR || u->op == UOP_DEFINE_GLOBAL) continue; /* preset */
    if (u->op == UOP_RANGE) { /* written by its loop; its end is evaluated before the loop */
      ok = fpush(&fs, u->src[0], f.ctx, 0);
      continue;
    }
    prog *Q = f.ctx;
    uint32_t level = 0;
    place(I, f.ctx, u, &Q, &level);
    if (f.state == 1) {
      instr in = make_instr(I, u);
      if (u->op == UOP_REDUCE) in.sub = (prog *)*kt_map_find(&Q->added, u);
      ok = ilist_push(&Q->levels[level], in);
      continue;
    }
    if (kt_map_find(&Q->added, u)) continue;
    intptr_t *mark = kt_map_put(&Q->added, u, 0);
    if (!mark || !fpush(&fs, u, Q, 1)) {
      ok = false;
      break;
    }
    if (u->op == UOP_REDUCE) {
      prog *C = new_prog(I, Q, u, u->src + 1, u->nsrc - 1);
      if (!C) {
        ok = false;
        break;
      }
      *mark = (intptr_t)C;
      C->val_slot = slot_of(I, u->src[0]);
      C->dst_slot = slot_of(I, u);
      C->cls = cls_of(u->dtype, &C->bits);
      C->redop = (uint8_t)u->arg.i;
      ok = fpush(&fs, u->src[0], C, 0);
      for (uint32_t k = 1; k < u->nsrc && ok; k++) ok = fpush(&fs, u->src[k]->src[0], Q, 0);
      continue;
    }
    for (uint32_t k = u->nsrc; k > 0 && ok; k--) ok = fpush(&fs, u->src[k - 1], Q, 0);
  }
  free(fs.v);
  if (!err && !ok) err = nomem();
  if (!err) err = run_prog(I, S, 0);
  return err;
}

static hcq_status compute_free(interp *I) {
  size_t nr = 0;
  for (size_t i = 0; i < I->n; i++)
    if (I->order[i]->op == UOP_RANGE && !kt_map_put(&I->rnum, I->order[i], (intptr_t)nr++)) return nomem();
  I->words = (nr + 63) / 64 ? (nr + 63) / 64 : 1;
  I->fr = calloc(I->n * I->words, sizeof *I->fr);
  if (!I->fr) return nomem();
  for (size_t i = 0; i < I->n; i++) {
    const uop *u = I->order[i];
    uint64_t *me = I->fr + i * I->words;
    if (u->op == UOP_STORE || u->op == UOP_SINK) continue;
    if (u->op == UOP_RANGE) {
      size_t rn = (size_t)*kt_map_find(&I->rnum, u);
      me[rn / 64] |= (uint64_t)1 << (rn % 64);
    }
    for (uint32_t s = 0; s < u->nsrc; s++) {
      const uop *src = u->op == UOP_REDUCE && s > 0 ? u->src[s]->src[0] : u->src[s];
      const uint64_t *o = free_of(I, src);
      for (size_t k = 0; k < I->words; k++) me[k] |= o[k];
    }
    if (u->op == UOP_REDUCE) /* validation guarantees the ends do not use the reduce's ranges */
      for (uint32_t s = 1; s < u->nsrc; s++) {
        size_t rn = (size_t)*kt_map_find(&I->rnum, u->src[s]);
        me[rn / 64] &= ~((uint64_t)1 << (rn % 64));
      }
  }
  return HCQ_OK;
}

static hcq_status setup(interp *I, void *const *buffers, const size_t *sizes_B, size_t nbuffers,
                        const uop_var_val *vars, size_t nvars) {
  I->vals = calloc(I->n ? I->n : 1, sizeof *I->vals);
  I->bufs = calloc(nbuffers ? nbuffers : 1, sizeof *I->bufs);
  I->nbufs = nbuffers;
  if (!I->vals || !I->bufs) return nomem();
  for (size_t i = 0; i < I->n; i++) {
    const uop *u = I->order[i];
    if (!kt_map_put(&I->slot, u, (intptr_t)i)) return nomem();
    if (u->op == UOP_CONST) {
      uint8_t bits;
      /* a constant holds its dtype's value: (const 0.1 float16) is 0.0999755859375 wherever it is used */
      if (uop_dt_is_float(u->dtype)) I->vals[i].f = round_to(cls_of(u->dtype, &bits), u->arg.f);
      else I->vals[i].i = u->arg.i;
    } else if (u->op == UOP_DEFINE_VAR) {
      size_t k = 0;
      while (k < nvars && strcmp(vars[k].name, u->arg.str) != 0) k++;
      if (k == nvars) return hcq_status_make(HCQ_CODE_NOT_FOUND, "interp: no value for variable %s", u->arg.str);
      int64_t x = vars[k].value;
      if (x < u->arg.i || x > u->arg.i2)
        return hcq_status_make(HCQ_CODE_INVALID, "interp: variable %s = %" PRId64 " is outside %" PRId64 "..%" PRId64,
                               u->arg.str, x, u->arg.i, u->arg.i2);
      I->vals[i].i = x;
    } else if (u->op == UOP_DEFINE_GLOBAL) {
      int64_t s = u->arg.i;
      if ((size_t)s >= nbuffers || !buffers[s])
        return hcq_status_make(HCQ_CODE_INVALID, "interp: kernel uses buffer slot %" PRId64 " but %s", s,
                               (size_t)s >= nbuffers ? "fewer buffers were given" : "its buffer is NULL");
      bufinfo *b = &I->bufs[s];
      int64_t item = uop_dt_itemsize_B(uop_dt_base_of(u->dtype));
      int64_t have = item ? (int64_t)(sizes_B[s] / (size_t)item) : 0;
      b->base = buffers[s];
      b->dt = u->dtype;
      b->limit = u->dtype.size >= 0 && u->dtype.size < have ? u->dtype.size : have;
      b->item_B = (size_t)item;
      b->elem = (uop_scalar)u->dtype.scalar;
    }
  }
  return HCQ_OK;
}

hcq_status cc_interp_run(const uop *sink, void *const *buffers, const size_t *buffer_sizes_B, size_t nbuffers,
                         const uop_var_val *vars, size_t nvars) {
  HCQ_TRY(cc_kernel_validate(sink));
  interp I = {0};
  hcq_status err = kv_toposort(sink, &I.order, &I.n);
  if (!err) err = setup(&I, buffers, buffer_sizes_B, nbuffers, vars, nvars);
  if (!err) err = compute_free(&I);
  for (uint32_t s = 0; s < sink->nsrc && !err; s++) {
    err = compile_store(&I, sink->src[s]);
    free_progs(&I);
  }
  free_progs(&I);
  free(I.order);
  free(I.vals);
  free(I.bufs);
  free(I.fr);
  kt_map_free(&I.slot);
  kt_map_free(&I.rnum);
  return err;
}
