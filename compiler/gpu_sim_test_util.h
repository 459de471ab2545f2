/* Test helper (header-only): a sequential GPU simulator for linearized programs of the GPU targets (the list
 * cc_compile_source leaves in cc_program.linear, after gpudims, index lowering and decompositions).
 *
 * Every workgroup (gidx) runs its threads (lidx) one after another; a thread runs until it reaches a BARRIER or its
 * end, then the next thread runs. When every thread waits at a barrier, all are released (the next phase). So a
 * program that forgot a barrier reads another thread's shared memory before it was written, and the result is
 * wrong. It also checks what a GPU would do wrong silently:
 * - a shared element written by one thread and read or rewritten (with another value) by another thread in the
 *   same barrier phase (a race);
 * - threads of one workgroup that do not reach the same number of barriers;
 * - a global element written more than once in one launch (several threads storing the same output).
 * `ignore_barriers` runs each thread to its end (for the tests that show the barrier matters).
 *
 * Supported: float32/float64/int32/int64/uint32/bool values, the ALU ops the GPU targets render, RANGE/ENDRANGE
 * loops, gated INDEX loads and stores, DEFINE_REG/DEFINE_LOCAL/DEFINE_GLOBAL. Anything else is an error. */
#ifndef HCQ_COMPILER_GPU_SIM_TEST_UTIL_H
#define HCQ_COMPILER_GPU_SIM_TEST_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "compiler/interp.h"
#include "base/ptrmap.h"

typedef struct gs_val {
  int64_t i;
  double f;
  uint8_t *base;   /* INDEX: element 0 of the buffer */
  int64_t elem;    /* INDEX: element number */
  int64_t nelem;   /* INDEX: buffer elements */
  int space;       /* INDEX: 0 global, 1 shared, 2 register */
  int slot;        /* INDEX: global buffer slot or DEFINE_LOCAL position */
  bool gate;       /* INDEX: true unless gated off */
} gs_val;

typedef struct gs_thread {
  size_t pc;
  bool done;
  int barriers;
  gs_val *v;          /* per linear position */
  uint8_t **regs;     /* DEFINE_REG memory per linear position */
  int64_t lid[3];
} gs_thread;

typedef struct gs_sim {
  const uop *const *list;
  size_t n;
  base_ptrmap pos;
  size_t *match;       /* RANGE <-> ENDRANGE positions */
  cc_kbuf *bufs;
  size_t nbufs;
  uint32_t **gwrites;  /* per buffer, per element: stores this launch */
  uint8_t **shared;    /* per linear position of a DEFINE_LOCAL */
  int64_t **sh_wphase, **sh_wtid; /* per shared element: phase and thread of the last write */
  int phase;
  int64_t gid[3];
  bool ignore_barriers;
  hcq_status st;
} gs_sim;

static inline int gs_bytes(uop_dtype dt) { return dt.scalar == UOP_BOOL ? 1 : uop_dt_itemsize_B(uop_dt_scalar_of(dt)); }

static inline void gs_fail(gs_sim *s, const char *what, const uop *n) {
  if (!s->st)
    s->st = hcq_status_make(HCQ_CODE_INVALID, "gpu sim: %s (%s %s)", what, uop_op_name((uop_op)n->op),
                            uop_dt_name(uop_dt_scalar_of(n->dtype)));
}

/* Wrap an integer to dt's width and signedness. */
static inline int64_t gs_wrap(uop_dtype dt, int64_t v) {
  switch (dt.scalar) {
    case UOP_BOOL: return v != 0;
    case UOP_INT32: return (int32_t)v;
    case UOP_UINT32: return (uint32_t)v;
    case UOP_INT8: return (int8_t)v;
    case UOP_UINT8: return (uint8_t)v;
    case UOP_INT16: return (int16_t)v;
    case UOP_UINT16: return (uint16_t)v;
    default: return v;
  }
}
static inline double gs_round(uop_dtype dt, double f) { return dt.scalar == UOP_FLOAT32 ? (double)(float)f : f; }

static inline gs_val gs_get(gs_sim *s, gs_thread *t, const uop *n) {
  uintptr_t *m = base_ptrmap_find(&s->pos, n);
  if (m) return t->v[*m];
  gs_val r = {0};
  if (n->op == UOP_CONST) {
    if (uop_dt_is_float(n->dtype)) r.f = n->arg.kind == UOP_ARG_FLOAT ? n->arg.f : (double)n->arg.i;
    else r.i = gs_wrap(n->dtype, n->arg.i);
    return r;
  }
  gs_fail(s, "a value that is neither in the program nor a constant", n);
  return r;
}

static inline gs_val gs_load_mem(gs_sim *s, const uop *n, const uint8_t *p) {
  gs_val r = {0};
  switch (n->dtype.scalar) {
    case UOP_FLOAT32: { float f; memcpy(&f, p, 4); r.f = f; break; }
    case UOP_FLOAT64: memcpy(&r.f, p, 8); break;
    case UOP_INT32: { int32_t v; memcpy(&v, p, 4); r.i = v; break; }
    case UOP_UINT32: { uint32_t v; memcpy(&v, p, 4); r.i = v; break; }
    case UOP_INT64: memcpy(&r.i, p, 8); break;
    case UOP_BOOL: r.i = *p != 0; break;
    default: gs_fail(s, "load of an unsupported dtype", n);
  }
  return r;
}

static inline void gs_store_mem(gs_sim *s, const uop *n, uop_dtype dt, uint8_t *p, gs_val v) {
  switch (dt.scalar) {
    case UOP_FLOAT32: { float f = (float)v.f; memcpy(p, &f, 4); break; }
    case UOP_FLOAT64: memcpy(p, &v.f, 8); break;
    case UOP_INT32: case UOP_UINT32: { uint32_t x = (uint32_t)v.i; memcpy(p, &x, 4); break; }
    case UOP_INT64: memcpy(p, &v.i, 8); break;
    case UOP_BOOL: *p = v.i != 0; break;
    default: gs_fail(s, "store of an unsupported dtype", n);
  }
}

static inline gs_val gs_alu(gs_sim *s, gs_thread *t, const uop *n) {
  gs_val a = n->nsrc > 0 ? gs_get(s, t, n->src[0]) : (gs_val){0};
  gs_val b = n->nsrc > 1 ? gs_get(s, t, n->src[1]) : (gs_val){0};
  gs_val c = n->nsrc > 2 ? gs_get(s, t, n->src[2]) : (gs_val){0};
  gs_val r = {0};
  uop_dtype dt = n->dtype, st = n->nsrc ? n->src[0]->dtype : dt;
  bool fl = uop_dt_is_float(st), us = uop_dt_is_unsigned(st);
  switch (n->op) {
    case UOP_CMPLT: r.i = fl ? a.f < b.f : us ? (uint64_t)a.i < (uint64_t)b.i : a.i < b.i; return r;
    case UOP_CMPNE: r.i = fl ? a.f != b.f : a.i != b.i; return r;
    case UOP_CMPEQ: r.i = fl ? a.f == b.f : a.i == b.i; return r;
    case UOP_WHERE:
      r = a.i ? b : c;
      return r;
    default: break;
  }
  if (uop_dt_is_float(dt)) {
    switch (n->op) {
      case UOP_ADD: r.f = a.f + b.f; break;
      case UOP_SUB: r.f = a.f - b.f; break;
      case UOP_MUL: r.f = a.f * b.f; break;
      case UOP_FDIV: r.f = a.f / b.f; break;
      case UOP_MAX: r.f = a.f > b.f ? a.f : b.f; break;
      case UOP_NEG: r.f = -a.f; break;
      case UOP_RECIP: r.f = 1.0 / a.f; break;
      case UOP_SQRT: r.f = sqrt(a.f); break;
      case UOP_EXP2: r.f = dt.scalar == UOP_FLOAT32 ? exp2f((float)a.f) : exp2(a.f); break;
      case UOP_LOG2: r.f = dt.scalar == UOP_FLOAT32 ? log2f((float)a.f) : log2(a.f); break;
      case UOP_TRUNC: r.f = trunc(a.f); break;
      case UOP_MULACC: r.f = a.f * b.f + c.f; break;
      default: gs_fail(s, "unsupported float op", n);
    }
    r.f = gs_round(dt, r.f);
    return r;
  }
  uint64_t x = (uint64_t)a.i, y = (uint64_t)b.i;
  switch (n->op) {
    case UOP_ADD: r.i = (int64_t)(x + y); break;
    case UOP_SUB: r.i = (int64_t)(x - y); break;
    case UOP_MUL: r.i = (int64_t)(x * y); break;
    case UOP_MULACC: r.i = (int64_t)(x * y + (uint64_t)c.i); break;
    case UOP_NEG: r.i = (int64_t)(0 - x); break;
    case UOP_AND: r.i = a.i & b.i; break;
    case UOP_OR: r.i = a.i | b.i; break;
    case UOP_XOR: r.i = a.i ^ b.i; break;
    case UOP_SHL: r.i = (int64_t)(x << (y & 63)); break;
    case UOP_SHR: r.i = us ? (int64_t)(x >> (y & 63)) : a.i >> (y & 63); break;
    case UOP_MAX: r.i = us ? (x > y ? a.i : b.i) : (a.i > b.i ? a.i : b.i); break;
    case UOP_IDIV: case UOP_MOD:
      if (b.i == 0) {
        gs_fail(s, "integer division by zero", n);
        break;
      }
      if (us) r.i = (int64_t)(n->op == UOP_IDIV ? x / y : x % y);
      else r.i = n->op == UOP_IDIV ? a.i / b.i : a.i % b.i;
      break;
    default: gs_fail(s, "unsupported integer op", n);
  }
  r.i = gs_wrap(dt, r.i);
  return r;
}

static inline gs_val gs_cast(gs_sim *s, gs_thread *t, const uop *n) {
  gs_val a = gs_get(s, t, n->src[0]), r = {0};
  uop_dtype from = n->src[0]->dtype, to = n->dtype;
  if (n->op == UOP_BITCAST) {
    uint8_t raw[8] = {0};
    gs_store_mem(s, n, from, raw, a);
    return gs_load_mem(s, n, raw);
  }
  if (uop_dt_is_float(to)) r.f = gs_round(to, uop_dt_is_float(from) ? a.f : uop_dt_is_unsigned(from) ? (double)(uint64_t)a.i : (double)a.i);
  else if (to.scalar == UOP_BOOL) r.i = uop_dt_is_float(from) ? a.f != 0 : a.i != 0;
  else r.i = gs_wrap(to, uop_dt_is_float(from) ? (int64_t)a.f : a.i);
  return r;
}

/* Run thread t until a BARRIER (returns true) or its end. */
static inline bool gs_run(gs_sim *s, gs_thread *t, int64_t tid) {
  while (!s->st && t->pc < s->n) {
    size_t k = t->pc++;
    const uop *n = s->list[k];
    gs_val r = {0};
    switch (n->op) {
      case UOP_DEFINE_GLOBAL: {
        r.slot = (int)n->arg.i;
        bool found = false;
        for (size_t b = 0; b < s->nbufs; b++)
          if (s->bufs[b].slot == r.slot) {
            r.base = s->bufs[b].data;
            r.nelem = s->bufs[b].nelems;
            found = true;
          }
        if (!found) gs_fail(s, "no buffer for this slot", n);
        break;
      }
      case UOP_DEFINE_LOCAL:
        r.base = s->shared[k];
        r.nelem = n->dtype.size;
        r.space = 1;
        r.slot = (int)k;
        break;
      case UOP_DEFINE_REG:
        if (!t->regs[k]) t->regs[k] = calloc((size_t)(n->dtype.size > 0 ? n->dtype.size : 1), 8);
        r.base = t->regs[k];
        r.nelem = n->dtype.size > 0 ? n->dtype.size : 1;
        r.space = 2;
        break;
      case UOP_SPECIAL: {
        const char *nm = n->arg.str;
        int d = nm[strlen(nm) - 1] - '0';
        if (d < 0 || d > 2 || (nm[0] != 'g' && nm[0] != 'l')) gs_fail(s, "unknown SPECIAL", n);
        else r.i = nm[0] == 'g' ? s->gid[d] : t->lid[d];
        break;
      }
      case UOP_DEFINE_VAR: gs_fail(s, "variables are not simulated", n); break;
      case UOP_RANGE: {
        gs_val end = gs_get(s, t, n->src[0]);
        if (end.i <= 0) t->pc = s->match[k] + 1;
        r.i = 0;
        break;
      }
      case UOP_ENDRANGE: {
        size_t rk = s->match[k];
        gs_val end = gs_get(s, t, s->list[rk]->src[0]);
        if (++t->v[rk].i < end.i) t->pc = rk + 1;
        continue;
      }
      case UOP_BARRIER:
        t->barriers++;
        if (!s->ignore_barriers) return true;
        continue;
      case UOP_INDEX_OP: {
        r = gs_get(s, t, n->src[0]);
        r.elem = gs_get(s, t, n->src[1]).i;
        r.gate = n->nsrc < 3 || gs_get(s, t, n->src[2]).i;
        if (r.gate && (r.elem < 0 || r.elem >= r.nelem)) gs_fail(s, "out-of-bounds index", n);
        break;
      }
      case UOP_LOAD: {
        gs_val p = gs_get(s, t, n->src[0]);
        if (!p.gate) {
          const uop *alt = n->nsrc > 1 && uop_dt_eq(n->src[1]->dtype, n->dtype) ? n->src[1] : NULL;
          if (alt) r = gs_get(s, t, alt);
          break;
        }
        int sz = p.space == 2 ? 8 : gs_bytes(n->dtype);
        if (p.space == 1 && s->sh_wphase[p.slot][p.elem] == s->phase && s->sh_wtid[p.slot][p.elem] != tid)
          gs_fail(s, "shared memory race: read of an element another thread wrote in the same barrier phase", n);
        r = gs_load_mem(s, n, p.base + p.elem * sz);
        break;
      }
      case UOP_STORE: {
        gs_val p = gs_get(s, t, n->src[0]), v = gs_get(s, t, n->src[1]);
        if (!p.gate) continue;
        uop_dtype dt = n->src[1]->dtype;
        int sz = p.space == 2 ? 8 : gs_bytes(dt);
        uint8_t *addr = p.base + p.elem * sz;
        if (p.space == 1 && s->sh_wphase[p.slot][p.elem] == s->phase && s->sh_wtid[p.slot][p.elem] != tid) {
          uint8_t raw[8] = {0};
          gs_store_mem(s, n, dt, raw, v);
          if (memcmp(raw, addr, (size_t)sz)) gs_fail(s, "shared memory race: two threads store different values", n);
        }
        if (p.space == 1) {
          s->sh_wphase[p.slot][p.elem] = s->phase;
          s->sh_wtid[p.slot][p.elem] = tid;
        }
        if (p.space == 0)
          for (size_t b = 0; b < s->nbufs; b++)
            if (s->bufs[b].slot == p.slot) s->gwrites[b][p.elem]++;
        gs_store_mem(s, n, dt, addr, v);
        continue;
      }
      case UOP_CAST: case UOP_BITCAST: r = gs_cast(s, t, n); break;
      default:
        if (!uop_op_is_alu((uop_op)n->op)) gs_fail(s, "unsupported statement", n);
        else r = gs_alu(s, t, n);
    }
    t->v[k] = r;
  }
  t->done = true;
  return false;
}

/* Run the program on bufs (filled by the caller; results in place). *out_multi: global elements written more than
 * once. */
static inline hcq_status gs_simulate(const cc_program *p, cc_kbuf *bufs, size_t nbufs, bool ignore_barriers,
                                     size_t *out_multi) {
  *out_multi = 0;
  gs_sim s = {.list = p->linear, .n = p->nlinear, .bufs = bufs, .nbufs = nbufs, .ignore_barriers = ignore_barriers};
  int64_t gsz[3], lsz[3];
  for (int d = 0; d < 3; d++) {
    if ((gsz[d] = cc_launch_const(p->desc.global[d])) < 1 || (lsz[d] = cc_launch_const(p->desc.local[d])) < 1)
      return hcq_status_make(HCQ_CODE_INVALID, "gpu sim: launch sizes must be constants");
  }
  int64_t nthreads = lsz[0] * lsz[1] * lsz[2];
  s.match = calloc(s.n + 1, sizeof *s.match);
  s.shared = calloc(s.n + 1, sizeof *s.shared);
  s.sh_wphase = calloc(s.n + 1, sizeof *s.sh_wphase);
  s.sh_wtid = calloc(s.n + 1, sizeof *s.sh_wtid);
  s.gwrites = calloc(nbufs + 1, sizeof *s.gwrites);
  gs_thread *th = calloc((size_t)nthreads, sizeof *th);
  size_t *stack = calloc(s.n + 1, sizeof *stack);
  size_t depth = 0;
  if (!s.match || !s.shared || !s.sh_wphase || !s.sh_wtid || !s.gwrites || !th || !stack) goto oom;
  for (size_t b = 0; b < nbufs; b++)
    if (!(s.gwrites[b] = calloc((size_t)bufs[b].nelems + 1, sizeof **s.gwrites))) goto oom;
  for (size_t k = 0; k < s.n; k++) {
    const uop *n = s.list[k];
    if (!base_ptrmap_put(&s.pos, n, k)) goto oom;
    if (n->op == UOP_RANGE) stack[depth++] = k;
    if (n->op == UOP_ENDRANGE) {
      if (!depth) {
        s.st = hcq_status_make(HCQ_CODE_INVALID, "gpu sim: ENDRANGE without RANGE");
        goto done;
      }
      s.match[k] = stack[--depth];
      s.match[stack[depth]] = k;
    }
    if (n->op == UOP_DEFINE_LOCAL) {
      int64_t e = n->dtype.size > 0 ? n->dtype.size : 1;
      s.shared[k] = calloc((size_t)e, 8);
      s.sh_wphase[k] = calloc((size_t)e, sizeof **s.sh_wphase);
      s.sh_wtid[k] = calloc((size_t)e, sizeof **s.sh_wtid);
      if (!s.shared[k] || !s.sh_wphase[k] || !s.sh_wtid[k]) goto oom;
    }
  }
  for (int64_t i = 0; i < nthreads; i++) {
    th[i].v = calloc(s.n + 1, sizeof *th[i].v);
    th[i].regs = calloc(s.n + 1, sizeof *th[i].regs);
    if (!th[i].v || !th[i].regs) goto oom;
  }
  for (int64_t g = 0; g < gsz[0] * gsz[1] * gsz[2] && !s.st; g++) {
    s.gid[0] = g % gsz[0];
    s.gid[1] = g / gsz[0] % gsz[1];
    s.gid[2] = g / (gsz[0] * gsz[1]);
    for (size_t k = 0; k < s.n; k++)
      if (s.shared[k]) { /* fresh shared memory: huge garbage values make a missing barrier visible */
        int64_t e = s.list[k]->dtype.size > 0 ? s.list[k]->dtype.size : 1;
        memset(s.shared[k], 0x7f, (size_t)e * 8);
        for (int64_t x = 0; x < e; x++) s.sh_wphase[k][x] = -1;
      }
    for (int64_t i = 0; i < nthreads; i++) {
      th[i].pc = 0;
      th[i].done = false;
      th[i].barriers = 0;
      th[i].lid[0] = i % lsz[0];
      th[i].lid[1] = i / lsz[0] % lsz[1];
      th[i].lid[2] = i / (lsz[0] * lsz[1]);
    }
    for (s.phase = 0; !s.st; s.phase++) {
      int waiting = 0, finished = 0;
      for (int64_t i = 0; i < nthreads && !s.st; i++) {
        if (th[i].done) continue;
        if (gs_run(&s, &th[i], i)) waiting++;
        else finished++;
      }
      if (s.st || !waiting) break;
      if (finished) {
        s.st = hcq_status_make(HCQ_CODE_INVALID, "gpu sim: barrier divergence (some threads ended, %d wait)", waiting);
        break;
      }
    }
  }
  for (size_t b = 0; b < nbufs && !s.st; b++)
    for (int64_t e = 0; e < bufs[b].nelems; e++) *out_multi += s.gwrites[b][e] > 1;
  goto done;
oom:
  s.st = hcq_status_make(HCQ_CODE_NOMEM, "gpu sim: out of memory");
done:
  if (th)
    for (int64_t i = 0; i < nthreads; i++) {
      if (th[i].regs)
        for (size_t k = 0; k < s.n; k++) free(th[i].regs[k]);
      free(th[i].regs);
      free(th[i].v);
    }
  if (s.shared)
    for (size_t k = 0; k < s.n; k++) {
      free(s.shared[k]);
      free(s.sh_wphase[k]);
      free(s.sh_wtid[k]);
    }
  if (s.gwrites)
    for (size_t b = 0; b < nbufs; b++) free(s.gwrites[b]);
  free(s.gwrites);
  free(s.shared);
  free(s.sh_wphase);
  free(s.sh_wtid);
  free(s.match);
  free(th);
  free(stack);
  base_ptrmap_free(&s.pos);
  return s.st;
}

#endif
