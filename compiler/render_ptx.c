/* PTX renderer (reference tinygrad/renderer/ptx.py, with its traps fixed): a linear program -> one `.visible .entry`.
 *
 *   .version V / .target sm_XY / .address_size 64
 *   .visible .entry NAME(.param .u64 data<slot>..., .param .s32 var_<name>...) .maxntid X, Y, Z { ... }
 *
 * - V comes from a table keyed by the sm number (the first PTX ISA version that supports it, at least 7.5), never
 *   from comparing arch strings (trap 3: "sm_100" < "sm_89").
 * - Every value lives in a virtual register of its class (%p pred, %rs b16, %r b32, %rd b64, %f f32, %fd f64).
 *   Constants are moved into registers once, before the body (floats as hex: 0f3F800000, 0d...).
 * - gidxN/lidxN are %ctaid/%tid. Buffers are generic pointers converted with cvta.to.global.
 * - Gated loads and stores are predicated (@%p ld / @!%p mov alt; @%p st).
 * - Loops test for a zero trip count before the body (trap 4: the reference's do-while assumes end >= 1) and count
 *   in the range's own dtype (int32 or int64).
 * - Float add/sub/mul carry .rn so ptxas does not contract them into fma (results match the C renderer); division,
 *   reciprocal and sqrt are IEEE (.rn). EXP2/LOG2/SIN render as ex2/lg2/sin.approx.f32 when the target lists them;
 *   the ptx targets leave them to the decompositions (accurate to a few ulp, float64 too).
 * - float16/bfloat16 values are 16-bit registers; arithmetic on them is done in float32 and rounded back.
 * - 8-bit ints live in 16-bit registers, kept sign- (int8) or zero- (uint8) extended after every op. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc_internal.h"
#include "compiler/pool.h"
#include "uop/uop_internal.h"

/* ------------------------------------------------------------------------------------------------ ISA version */

typedef struct ptx_arch_row {
  int sm;
  const char *version; /* first PTX ISA version with this target (LLVM NVPTX.td / PTX ISA release notes) */
} ptx_arch_row;

static const ptx_arch_row PTX_ARCHS[] = {
    {70, "6.0"}, {72, "6.1"}, {75, "6.3"}, {80, "7.0"}, {86, "7.1"}, {87, "7.4"}, {88, "9.0"}, {89, "7.8"},
    {90, "7.8"}, {100, "8.6"}, {101, "8.6"}, {103, "8.8"}, {110, "9.0"}, {120, "8.7"}, {121, "8.8"},
};

/* Floor of the versions we emit: 7.5 is what the reference uses for sm_80 and what every driver since CUDA 11.5
 * accepts; the instructions used here (cvt.rn.bf16.f32 is the newest) need at most 7.0. */
#define PTX_MIN_VERSION "7.5"

const char *cc_ptx_isa_version(const char *arch) {
  if (!arch || strncmp(arch, "sm_", 3) != 0) return NULL;
  char *end = NULL;
  long sm = strtol(arch + 3, &end, 10);
  if (end == arch + 3 || *end) return NULL;
  for (size_t i = 0; i < sizeof PTX_ARCHS / sizeof PTX_ARCHS[0]; i++)
    if (PTX_ARCHS[i].sm == sm) {
      const char *v = PTX_ARCHS[i].version;
      /* versions are "M.m" with one-digit minor: compare numerically */
      int vm = (v[0] - '0') * 10 + (v[2] - '0'), fm = (PTX_MIN_VERSION[0] - '0') * 10 + (PTX_MIN_VERSION[2] - '0');
      return vm < fm ? PTX_MIN_VERSION : v;
    }
  return NULL;
}

/* ------------------------------------------------------------------------------------------------ state */

typedef enum rclass { RC_PRED, RC_B16, RC_B32, RC_B64, RC_F32, RC_F64, RC_COUNT } rclass;
static const char *const RC_DECL[RC_COUNT] = {".pred", ".b16", ".b32", ".b64", ".f32", ".f64"};
static const char *const RC_PREFIX[RC_COUNT] = {"%p", "%rs", "%r", "%rd", "%f", "%fd"};

typedef enum mspace { MS_GLOBAL, MS_SHARED, MS_REG } mspace;

/* A rendered INDEX: where it points. */
typedef struct pidx {
  mspace space;
  const char *addr; /* "[%rd3+16]" for memory, the register name for MS_REG */
  const char *gate; /* predicate register, or NULL */
} pidx;

typedef struct pr {
  const cc_target *t;
  base_ptrmap val;   /* node -> const char* register (values), or pidx* (INDEX), or const char** (DEFINE_REG) */
  base_ptrmap label; /* RANGE/IF -> its label number */
  cc_pool owned;      /* strings and arrays handed out, freed at the end */
  int nreg[RC_COUNT];
  int nlabel;
  FILE *pre, *body; /* constants + param loads; the code */
  FILE *decl;       /* .shared declarations */
  hcq_status st;
} pr;

static void fail(pr *r, hcq_code code, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fail(pr *r, hcq_code code, const char *f, ...) {
  if (r->st) return;
  char msg[256];
  va_list ap;
  va_start(ap, f);
  vsnprintf(msg, sizeof msg, f, ap);
  va_end(ap);
  r->st = hcq_status_make(code, "render ptx: %s", msg);
}

static void *own(pr *r, void *s) {
  void *o = cc_pool_keep(&r->owned, s);
  if (!o) fail(r, HCQ_CODE_NOMEM, "out of memory");
  return o;
}

static const char *fmt(pr *r, const char *f, ...) __attribute__((format(printf, 2, 3)));
static const char *fmt(pr *r, const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  char *s = NULL;
  if (vasprintf(&s, f, ap) < 0) s = NULL;
  va_end(ap);
  const char *o = own(r, s);
  return o ? o : "?";
}

static void ins(pr *r, const char *f, ...) __attribute__((format(printf, 2, 3)));
static void ins(pr *r, const char *f, ...) {
  fputc('\t', r->body);
  va_list ap;
  va_start(ap, f);
  vfprintf(r->body, f, ap);
  va_end(ap);
  fputc('\n', r->body);
}

static const char *newreg(pr *r, rclass c) { return fmt(r, "%s%d", RC_PREFIX[c], r->nreg[c]++); }

static void bind(pr *r, const uop *n, const void *v) {
  if (v && !base_ptrmap_put(&r->val, n, (uintptr_t)v)) fail(r, HCQ_CODE_NOMEM, "out of memory");
}

/* ------------------------------------------------------------------------------------------------ types */

static bool is_half(uop_dtype dt) { return dt.scalar == UOP_FLOAT16 || dt.scalar == UOP_BFLOAT16; }
static bool is_8bit(uop_dtype dt) { return dt.scalar == UOP_INT8 || dt.scalar == UOP_UINT8; }

static rclass rclass_of(pr *r, uop_dtype dt) {
  if (uop_dt_is_ptr(dt)) return RC_B64;
  if (dt.count != 1) fail(r, HCQ_CODE_UNSUPPORTED, "vector dtype %s x%u (not rendered yet)", uop_dt_name(dt), dt.count);
  switch (dt.scalar) {
    case UOP_BOOL: return RC_PRED;
    case UOP_INT8: case UOP_UINT8: case UOP_INT16: case UOP_UINT16: case UOP_FLOAT16: case UOP_BFLOAT16: return RC_B16;
    case UOP_INT32: case UOP_UINT32: return RC_B32;
    case UOP_INT64: case UOP_UINT64: return RC_B64;
    case UOP_FLOAT32: return RC_F32;
    case UOP_FLOAT64: return RC_F64;
    default: fail(r, HCQ_CODE_UNSUPPORTED, "no register type for dtype %s", uop_dt_name(dt)); return RC_B32;
  }
}

/* Instruction type of a value of dt (8-bit ints compute in 16 bits). */
static const char *tsuf(pr *r, uop_dtype dt) {
  switch (dt.scalar) {
    case UOP_BOOL: return "pred";
    case UOP_INT8: case UOP_INT16: return "s16";
    case UOP_UINT8: case UOP_UINT16: return "u16";
    case UOP_INT32: return "s32";
    case UOP_UINT32: return "u32";
    case UOP_INT64: return "s64";
    case UOP_UINT64: return "u64";
    case UOP_FLOAT16: return "f16";
    case UOP_BFLOAT16: return "bf16";
    case UOP_FLOAT32: return "f32";
    case UOP_FLOAT64: return "f64";
    default: fail(r, HCQ_CODE_UNSUPPORTED, "no PTX type for dtype %s", uop_dt_name(dt)); return "b32";
  }
}

/* Bit type of the register class ("b32"). */
static const char *bsuf(rclass c) {
  static const char *const b[RC_COUNT] = {"pred", "b16", "b32", "b64", "b32", "b64"};
  return b[c];
}

/* Memory type for ld/st. */
static const char *msuf(pr *r, uop_dtype dt) {
  switch (dt.scalar) {
    case UOP_BOOL: case UOP_UINT8: return "u8";
    case UOP_INT8: return "s8";
    case UOP_FLOAT16: case UOP_BFLOAT16: return "b16";
    default: return tsuf(r, dt);
  }
}

/* After an op that produced an 8-bit int in a 16-bit register: re-extend from bit 7. */
static void fix8(pr *r, uop_dtype dt, const char *reg) {
  if (dt.scalar == UOP_INT8) ins(r, "cvt.s16.s8 %s, %s;", reg, reg);
  else if (dt.scalar == UOP_UINT8) ins(r, "cvt.u16.u8 %s, %s;", reg, reg);
}

/* ------------------------------------------------------------------------------------------------ constants */

/* Immediate text of a constant of dtype dt with value v (ints: i, floats: f). */
static const char *imm(pr *r, uop_dtype dt, int64_t i, double f) {
  switch (dt.scalar) {
    case UOP_FLOAT32: {
      float x = (float)f;
      uint32_t b;
      memcpy(&b, &x, 4);
      return fmt(r, "0f%08X", b);
    }
    case UOP_FLOAT64: {
      uint64_t b;
      memcpy(&b, &f, 8);
      return fmt(r, "0d%016llX", (unsigned long long)b);
    }
    case UOP_FLOAT16: case UOP_BFLOAT16: {
      /* the 16-bit pattern: round the float32 to nearest even */
      float x = (float)f;
      uint32_t b;
      memcpy(&b, &x, 4);
      uint16_t h;
      if (dt.scalar == UOP_BFLOAT16) {
        h = (b & 0x7fffffff) > 0x7f800000 ? (uint16_t)((b >> 16) | 0x40) : (uint16_t)((b + 0x7fff + ((b >> 16) & 1)) >> 16);
      } else {
        uint32_t sign = (b >> 16) & 0x8000, ab = b & 0x7fffffff;
        if (ab > 0x7f800000) h = (uint16_t)(sign | 0x7e00);
        else if (ab >= 0x477ff000) h = (uint16_t)(sign | 0x7c00); /* rounds to >= 65520: inf */
        else if (ab < 0x38800000) { /* subnormal half: value / 2^-24, rounded to nearest even */
          float a;
          memcpy(&a, &ab, 4);
          h = (uint16_t)(sign | (uint32_t)nearbyintf(a * 16777216.0f));
        } else {
          uint32_t m = ab + 0xfff + ((ab >> 13) & 1);
          h = (uint16_t)(sign | ((m - 0x38000000) >> 13));
        }
      }
      return fmt(r, "0x%04X", h);
    }
    case UOP_BOOL: return i ? "1" : "0";
    default: {
      /* 8-bit ints live sign- or zero-extended in 16-bit registers: their constants too (i is already extended) */
      int bits = is_8bit(dt) ? 16 : uop_dt_bits(dt);
      uint64_t u = (uint64_t)i;
      if (bits < 64) u &= ((uint64_t)1 << bits) - 1;
      return fmt(r, "0x%llX", (unsigned long long)u);
    }
  }
}

/* The register holding a constant node, created on first use in the prelude. */
static const char *const_reg(pr *r, const uop *n) {
  uintptr_t *m = base_ptrmap_find(&r->val, n);
  if (m) return (const char *)*m;
  uop_dtype dt = n->dtype;
  rclass c = rclass_of(r, dt);
  const char *reg = newreg(r, c);
  double f = n->arg.kind == UOP_ARG_FLOAT ? n->arg.f : (double)n->arg.i;
  int64_t i = n->arg.kind == UOP_ARG_FLOAT ? (int64_t)n->arg.f : n->arg.i;
  if (c == RC_PRED) fprintf(r->pre, "\tsetp.ne.u32 %s, %d, 0;\n", reg, i != 0);
  else if (uop_dt_is_float(dt)) fprintf(r->pre, "\tmov.%s %s, %s;\n", c == RC_B16 ? "b16" : tsuf(r, dt), reg, imm(r, dt, i, f));
  else fprintf(r->pre, "\tmov.%s %s, %s;\n", bsuf(c), reg, imm(r, dt, i, f));
  bind(r, n, reg);
  return reg;
}

/* The register of a value node. */
static const char *get(pr *r, const uop *n) {
  if (n->op == UOP_CONST) return const_reg(r, n);
  uintptr_t *m = base_ptrmap_find(&r->val, n);
  if (!m) {
    fail(r, HCQ_CODE_INTERNAL, "%s used before it was rendered", uop_op_name((uop_op)n->op));
    return "%?";
  }
  return (const char *)*m;
}

/* A float32 register holding the value of a float16/bfloat16/float32 node (exact widening). */
static const char *as_f32(pr *r, const uop *n) {
  const char *a = get(r, n);
  if (n->dtype.scalar == UOP_FLOAT32) return a;
  const char *d = newreg(r, RC_F32);
  if (n->dtype.scalar == UOP_FLOAT16) {
    ins(r, "cvt.f32.f16 %s, %s;", d, a);
  } else { /* bfloat16: the top half of a float32 */
    const char *w = newreg(r, RC_B32);
    ins(r, "cvt.u32.u16 %s, %s;", w, a);
    ins(r, "shl.b32 %s, %s, 16;", w, w);
    ins(r, "mov.b32 %s, %s;", d, w);
  }
  return d;
}

/* Round a float32 register to a new float16/bfloat16 register. */
static const char *from_f32(pr *r, uop_dtype dt, const char *f) {
  const char *d = newreg(r, RC_B16);
  ins(r, "cvt.rn.%s.f32 %s, %s;", dt.scalar == UOP_FLOAT16 ? "f16" : "bf16", d, f);
  return d;
}

/* ------------------------------------------------------------------------------------------------ ALU */

/* Float ops of a float32/float64 value: the instruction text for op (NULL if not a float op here). */
static const char *float_op(uop_op op) {
  switch (op) {
    case UOP_ADD: return "add.rn";
    case UOP_SUB: return "sub.rn";
    case UOP_MUL: return "mul.rn";
    case UOP_FDIV: return "div.rn"; /* no MAX: max.f32 drops NaN; decomp.c decomposes float MAX (IEEE maximum) */
    default: return NULL;
  }
}

/* Comparison of a and b (registers of dtype sdt) into a new predicate. */
static const char *compare(pr *r, uop_op op, uop_dtype sdt, const char *a, const char *b) {
  const char *d = newreg(r, RC_PRED);
  if (sdt.scalar == UOP_BOOL) {
    if (op == UOP_CMPLT) { /* !a & b */
      const char *na = newreg(r, RC_PRED);
      ins(r, "not.pred %s, %s;", na, a);
      ins(r, "and.pred %s, %s, %s;", d, na, b);
    } else {
      ins(r, "xor.pred %s, %s, %s;", d, a, b);
      if (op == UOP_CMPEQ) ins(r, "not.pred %s, %s;", d, d);
    }
    return d;
  }
  bool fl = uop_dt_is_float(sdt);
  /* C semantics: < and == are ordered, != is unordered (true for nan) */
  const char *cmp = op == UOP_CMPLT ? "lt" : op == UOP_CMPEQ ? "eq" : fl ? "neu" : "ne";
  ins(r, "setp.%s.%s %s, %s, %s;", cmp, tsuf(r, sdt), d, a, b);
  return d;
}

static const char *render_alu(pr *r, const uop *n) {
  uop_op op = (uop_op)n->op;
  uop_dtype dt = n->dtype;
  int arity = uop_op_alu_arity(op);
  if (arity < 1 || n->nsrc < (uint32_t)arity) {
    fail(r, HCQ_CODE_UNSUPPORTED, "cannot render %s", uop_op_name(op));
    return "%?";
  }
  /* comparisons: by the operands' dtype */
  if (op == UOP_CMPLT || op == UOP_CMPNE || op == UOP_CMPEQ) {
    uop_dtype sdt = n->src[0]->dtype;
    if (is_half(sdt)) return compare(r, op, uop_dt(UOP_FLOAT32), as_f32(r, n->src[0]), as_f32(r, n->src[1]));
    return compare(r, op, sdt, get(r, n->src[0]), get(r, n->src[1]));
  }
  if (op == UOP_WHERE) {
    const char *p = get(r, n->src[0]), *a = get(r, n->src[1]), *b = get(r, n->src[2]);
    rclass c = rclass_of(r, dt);
    const char *d = newreg(r, c);
    if (c == RC_PRED) {
      ins(r, "@%s mov.pred %s, %s;", p, d, a);
      ins(r, "@!%s mov.pred %s, %s;", p, d, b);
    } else {
      ins(r, "selp.%s %s, %s, %s, %s;", c == RC_F32 || c == RC_F64 ? tsuf(r, dt) : bsuf(c), d, a, b, p);
    }
    return d;
  }
  /* float16/bfloat16: compute in float32, round back */
  if (is_half(dt)) {
    const char *s[3];
    for (int i = 0; i < arity; i++) s[i] = as_f32(r, n->src[i]);
    const char *d = newreg(r, RC_F32);
    const char *fo = float_op(op);
    if (fo) ins(r, "%s.f32 %s, %s, %s;", fo, d, s[0], s[1]);
    else if (op == UOP_MULACC) ins(r, "fma.rn.f32 %s, %s, %s, %s;", d, s[0], s[1], s[2]);
    else if (op == UOP_NEG) ins(r, "neg.f32 %s, %s;", d, s[0]);
    else if (op == UOP_SQRT) ins(r, "sqrt.rn.f32 %s, %s;", d, s[0]);
    else if (op == UOP_RECIP) ins(r, "rcp.rn.f32 %s, %s;", d, s[0]);
    else if (op == UOP_TRUNC) ins(r, "cvt.rzi.f32.f32 %s, %s;", d, s[0]);
    else if (op == UOP_EXP2) ins(r, "ex2.approx.f32 %s, %s;", d, s[0]);
    else if (op == UOP_LOG2) ins(r, "lg2.approx.f32 %s, %s;", d, s[0]);
    else if (op == UOP_SIN) ins(r, "sin.approx.f32 %s, %s;", d, s[0]);
    else fail(r, HCQ_CODE_UNSUPPORTED, "cannot render %s on %s", uop_op_name(op), uop_dt_name(dt));
    return from_f32(r, dt, d);
  }
  const char *a = get(r, n->src[0]), *b = arity > 1 ? get(r, n->src[1]) : NULL;
  rclass c = rclass_of(r, dt);
  const char *d = newreg(r, c), *t = tsuf(r, dt);
  bool fl = uop_dt_is_float(dt), f64 = dt.scalar == UOP_FLOAT64;
  if (c == RC_PRED) {
    switch (op) {
      case UOP_ADD: case UOP_OR: case UOP_MAX: ins(r, "or.pred %s, %s, %s;", d, a, b); break;
      case UOP_MUL: case UOP_AND: ins(r, "and.pred %s, %s, %s;", d, a, b); break;
      case UOP_XOR: ins(r, "xor.pred %s, %s, %s;", d, a, b); break;
      case UOP_NEG: ins(r, "not.pred %s, %s;", d, a); break;
      default: fail(r, HCQ_CODE_UNSUPPORTED, "cannot render %s on bool", uop_op_name(op));
    }
    return d;
  }
  if (fl) {
    const char *fo = float_op(op);
    if (fo) ins(r, "%s.%s %s, %s, %s;", fo, t, d, a, b);
    else if (op == UOP_MULACC) ins(r, "fma.rn.%s %s, %s, %s, %s;", t, d, a, b, get(r, n->src[2]));
    else if (op == UOP_NEG) ins(r, "neg.%s %s, %s;", t, d, a);
    else if (op == UOP_SQRT) ins(r, "sqrt.rn.%s %s, %s;", t, d, a);
    else if (op == UOP_RECIP) ins(r, "rcp.rn.%s %s, %s;", t, d, a);
    else if (op == UOP_TRUNC) ins(r, "cvt.rzi.%s.%s %s, %s;", t, t, d, a);
    else if ((op == UOP_EXP2 || op == UOP_LOG2 || op == UOP_SIN) && !f64)
      ins(r, "%s.approx.f32 %s, %s;", op == UOP_EXP2 ? "ex2" : op == UOP_LOG2 ? "lg2" : "sin", d, a);
    else fail(r, HCQ_CODE_UNSUPPORTED, "cannot render %s on %s", uop_op_name(op), uop_dt_name(dt));
    return d;
  }
  /* integers */
  switch (op) {
    case UOP_ADD: ins(r, "add.%s %s, %s, %s;", t, d, a, b); break;
    case UOP_SUB: ins(r, "sub.%s %s, %s, %s;", t, d, a, b); break;
    case UOP_MUL: ins(r, "mul.lo.%s %s, %s, %s;", t, d, a, b); break;
    case UOP_IDIV: ins(r, "div.%s %s, %s, %s;", t, d, a, b); break;
    case UOP_MOD: ins(r, "rem.%s %s, %s, %s;", t, d, a, b); break;
    case UOP_MAX: ins(r, "max.%s %s, %s, %s;", t, d, a, b); break;
    case UOP_NEG: ins(r, "neg.%s %s, %s;", uop_dt_is_unsigned(dt) ? fmt(r, "s%s", t + 1) : t, d, a); break;
    case UOP_XOR: ins(r, "xor.%s %s, %s, %s;", bsuf(c), d, a, b); break;
    case UOP_OR: ins(r, "or.%s %s, %s, %s;", bsuf(c), d, a, b); break;
    case UOP_AND: ins(r, "and.%s %s, %s, %s;", bsuf(c), d, a, b); break;
    case UOP_MULACC: ins(r, "mad.lo.%s %s, %s, %s, %s;", t, d, a, b, get(r, n->src[2])); break;
    case UOP_SHL: case UOP_SHR: {
      /* the shift amount is a u32 */
      rclass bc = rclass_of(r, n->src[1]->dtype);
      const char *amt = b;
      if (bc != RC_B32) {
        amt = newreg(r, RC_B32);
        ins(r, "cvt.u32.%s %s, %s;", bc == RC_B64 ? "u64" : "u16", amt, b);
      }
      if (op == UOP_SHL) ins(r, "shl.%s %s, %s, %s;", bsuf(c), d, a, amt);
      else ins(r, "shr.%s %s, %s, %s;", t, d, a, amt);
      break;
    }
    default: fail(r, HCQ_CODE_UNSUPPORTED, "cannot render %s on %s", uop_op_name(op), uop_dt_name(dt));
  }
  if (is_8bit(dt)) fix8(r, dt, d);
  return d;
}

/* ------------------------------------------------------------------------------------------------ casts */

static const char *render_cast(pr *r, const uop *n) {
  uop_dtype to = n->dtype, from = n->src[0]->dtype;
  if (uop_dt_is_ptr(to) || uop_dt_is_ptr(from)) return get(r, n->src[0]); /* pointer casts alias */
  const char *a = get(r, n->src[0]);
  rclass tc = rclass_of(r, to), fc = rclass_of(r, from);
  if (n->op == UOP_BITCAST) {
    if (uop_dt_bits(to) != uop_dt_bits(from) || tc == RC_PRED || fc == RC_PRED) {
      fail(r, HCQ_CODE_UNSUPPORTED, "bitcast %s -> %s", uop_dt_name(from), uop_dt_name(to));
      return "%?";
    }
    if (tc == fc) return a;
    const char *d = newreg(r, tc);
    ins(r, "mov.%s %s, %s;", bsuf(tc), d, a);
    return d;
  }
  if (uop_dt_eq(to, from)) return a;
  bool tf = uop_dt_is_float(to), ff = uop_dt_is_float(from);
  /* bool sources and destinations */
  if (fc == RC_PRED) {
    const char *d = newreg(r, tc);
    if (tc == RC_PRED) return a;
    if (tf && is_half(to)) ins(r, "selp.b16 %s, %s, %s, %s;", d, imm(r, to, 1, 1.0), imm(r, to, 0, 0.0), a);
    else if (tf) ins(r, "selp.%s %s, %s, %s, %s;", tsuf(r, to), d, imm(r, to, 1, 1.0), imm(r, to, 0, 0.0), a);
    else ins(r, "selp.%s %s, 1, 0, %s;", bsuf(tc), d, a);
    return d;
  }
  if (tc == RC_PRED) {
    if (is_half(from)) return compare(r, UOP_CMPNE, uop_dt(UOP_FLOAT32), as_f32(r, n->src[0]), "0f00000000");
    return compare(r, UOP_CMPNE, from, a, imm(r, from, 0, 0.0));
  }
  /* to float16/bfloat16: through float32, exact for float32 and ints of <= 16 bits; float64 and 32/64-bit ints are
   * rounded to float32 to odd first (truncate, then set the last bit if inexact), so that the one rounding to 16
   * bits is correct (24 >= 11 + 2 bits): no double rounding */
  if (is_half(to)) {
    if (is_half(from)) return from_f32(r, to, as_f32(r, n->src[0]));
    const char *f = a;
    if (from.scalar != UOP_FLOAT32 && uop_dt_bits(from) <= 16) {
      f = newreg(r, RC_F32);
      ins(r, "cvt.rn.f32.%s %s, %s;", tsuf(r, from), f, a);
    } else if (from.scalar != UOP_FLOAT32) {
      const char *t = newreg(r, RC_F32), *back = newreg(r, fc), *p = newreg(r, RC_PRED);
      const char *i = newreg(r, RC_B32), *j = newreg(r, RC_B32);
      ins(r, "cvt.rz.f32.%s %s, %s;", tsuf(r, from), t, a);
      if (ff) ins(r, "cvt.f64.f32 %s, %s;", back, t);
      else ins(r, "cvt.rzi.%s.f32 %s, %s;", tsuf(r, from), back, t);
      ins(r, "setp.%s.%s %s, %s, %s;", ff ? "neu" : "ne", tsuf(r, from), p, back, a);
      ins(r, "mov.b32 %s, %s;", i, t);
      ins(r, "or.b32 %s, %s, 1;", j, i);
      ins(r, "selp.b32 %s, %s, %s, %s;", i, j, i, p);
      f = newreg(r, RC_F32);
      ins(r, "mov.b32 %s, %s;", f, i);
    }
    return from_f32(r, to, f);
  }
  /* from float16/bfloat16: widen to float32 exactly, then convert */
  if (is_half(from)) {
    const char *f = as_f32(r, n->src[0]);
    if (to.scalar == UOP_FLOAT32) return f;
    const char *d = newreg(r, tc);
    if (tf) ins(r, "cvt.%s.f32 %s, %s;", tsuf(r, to), d, f);
    else ins(r, "cvt.rzi.%s.f32 %s, %s;", tsuf(r, to), d, f);
    if (is_8bit(to)) fix8(r, to, d);
    return d;
  }
  const char *d = newreg(r, tc);
  if (tf && ff) { /* f32 <-> f64 */
    if (uop_dt_bits(to) < uop_dt_bits(from)) ins(r, "cvt.rn.%s.%s %s, %s;", tsuf(r, to), tsuf(r, from), d, a);
    else ins(r, "cvt.%s.%s %s, %s;", tsuf(r, to), tsuf(r, from), d, a);
  } else if (tf) {
    ins(r, "cvt.rn.%s.%s %s, %s;", tsuf(r, to), tsuf(r, from), d, a);
  } else if (ff) {
    ins(r, "cvt.rzi.%s.%s %s, %s;", tsuf(r, to), tsuf(r, from), d, a);
    if (is_8bit(to)) fix8(r, to, d);
  } else { /* int -> int: extend by the source's signedness, or truncate */
    if (tc == fc) ins(r, "mov.%s %s, %s;", bsuf(tc), d, a);
    else ins(r, "cvt.%s.%s %s, %s;", tsuf(r, to), tsuf(r, from), d, a);
    if (is_8bit(to)) fix8(r, to, d);
  }
  return d;
}

/* ------------------------------------------------------------------------------------------------ memory */

static const pidx *get_idx(pr *r, const uop *n) {
  if (n->op != UOP_INDEX_OP) {
    fail(r, HCQ_CODE_UNSUPPORTED, "LOAD/STORE of a %s (expected INDEX)", uop_op_name((uop_op)n->op));
    return NULL;
  }
  uintptr_t *m = base_ptrmap_find(&r->val, n);
  if (!m) fail(r, HCQ_CODE_INTERNAL, "INDEX used before it was rendered");
  return m ? (const pidx *)*m : NULL;
}

static void render_index(pr *r, const uop *n) {
  const uop *buf = n->src[0], *idx = n->nsrc > 1 ? n->src[1] : NULL;
  pidx *p = own(r, calloc(1, sizeof *p));
  if (!p || !idx) {
    if (!idx) fail(r, HCQ_CODE_UNSUPPORTED, "INDEX without an index");
    return;
  }
  if (n->nsrc > 2) p->gate = get(r, n->src[2]);
  int64_t ci;
  bool is_const = uop_const_value(idx, &ci);
  if (buf->op == UOP_DEFINE_REG) {
    p->space = MS_REG;
    const char **regs = (const char **)*base_ptrmap_find(&r->val, buf);
    int64_t size = buf->dtype.size > 0 ? buf->dtype.size : 1;
    if (!is_const || ci < 0 || ci >= size) {
      fail(r, HCQ_CODE_UNSUPPORTED, "register accumulator index must be a constant in [0, %lld)", (long long)size);
      return;
    }
    p->addr = regs[ci];
    bind(r, n, p);
    return;
  }
  if (buf->op != UOP_DEFINE_GLOBAL && buf->op != UOP_DEFINE_LOCAL) {
    fail(r, HCQ_CODE_UNSUPPORTED, "INDEX into a %s", uop_op_name((uop_op)buf->op));
    return;
  }
  p->space = buf->op == UOP_DEFINE_LOCAL ? MS_SHARED : MS_GLOBAL;
  const char *base = get(r, buf);
  int size_B = uop_dt_itemsize_B(uop_dt_base_of(buf->dtype));
  if (is_const && ci > -(1 << 20) && ci < (1 << 20)) {
    p->addr = fmt(r, "[%s+%lld]", base, (long long)(ci * size_B));
  } else {
    const char *ir = get(r, idx), *off = newreg(r, RC_B64), *addr = newreg(r, RC_B64);
    rclass ic = rclass_of(r, idx->dtype);
    if (ic == RC_B32) ins(r, "mul.wide.%s %s, %s, %d;", tsuf(r, idx->dtype), off, ir, size_B);
    else if (ic == RC_B64) ins(r, "mul.lo.s64 %s, %s, %d;", off, ir, size_B);
    else fail(r, HCQ_CODE_UNSUPPORTED, "index of dtype %s", uop_dt_name(idx->dtype));
    ins(r, "add.s64 %s, %s, %s;", addr, base, off);
    p->addr = fmt(r, "[%s]", addr);
  }
  bind(r, n, p);
}

static void render_load(pr *r, const uop *n) {
  const pidx *p = get_idx(r, n->src[0]);
  if (!p) return;
  uop_dtype dt = n->dtype;
  rclass c = rclass_of(r, dt);
  const char *d = newreg(r, c);
  if (p->space == MS_REG) {
    ins(r, "mov.%s %s, %s;", bsuf(c), d, p->addr);
    bind(r, n, d);
    return;
  }
  const char *sp = p->space == MS_SHARED ? "shared" : "global";
  const uop *alt = n->nsrc > 1 && n->src[1]->op != UOP_STORE && uop_dt_eq(n->src[1]->dtype, dt) ? n->src[1] : NULL;
  const char *g = p->gate ? fmt(r, "@%s ", p->gate) : "";
  if (c == RC_PRED) { /* bools are bytes in memory */
    const char *byte = newreg(r, RC_B16);
    if (p->gate) ins(r, "mov.b16 %s, 0;", byte);
    ins(r, "%sld.%s.u8 %s, %s;", g, sp, byte, p->addr);
    ins(r, "setp.ne.u16 %s, %s, 0;", d, byte);
    if (p->gate && alt) ins(r, "@!%s mov.pred %s, %s;", p->gate, d, get(r, alt));
  } else {
    ins(r, "%sld.%s.%s %s, %s;", g, sp, msuf(r, dt), d, p->addr);
    if (p->gate) {
      const char *a = alt ? get(r, alt) : imm(r, dt, 0, 0.0);
      ins(r, "@!%s mov.%s %s, %s;", p->gate, bsuf(c), d, a);
    }
  }
  bind(r, n, d);
}

static void render_store(pr *r, const uop *n) {
  const pidx *p = get_idx(r, n->src[0]);
  if (!p || n->nsrc < 2) return;
  const uop *v = n->src[1];
  rclass c = rclass_of(r, v->dtype);
  const char *val = get(r, v), *g = p->gate ? fmt(r, "@%s ", p->gate) : "";
  if (p->space == MS_REG) {
    ins(r, "%smov.%s %s, %s;", g, bsuf(c), p->addr, val);
    return;
  }
  const char *sp = p->space == MS_SHARED ? "shared" : "global";
  if (c == RC_PRED) {
    const char *byte = newreg(r, RC_B16);
    ins(r, "selp.u16 %s, 1, 0, %s;", byte, val);
    val = byte;
  }
  ins(r, "%sst.%s.%s %s, %s;", g, sp, msuf(r, v->dtype), p->addr, val);
}

/* ------------------------------------------------------------------------------------------------ statements */

static void render_node(pr *r, const uop *n) {
  uop_op op = (uop_op)n->op;
  switch (op) {
    case UOP_DEFINE_GLOBAL: case UOP_DEFINE_VAR: return; /* parameters, loaded in the prelude */
    case UOP_NOOP: case UOP_CONST: return;
    case UOP_SPECIAL: {
      const char *nm = n->arg.str;
      size_t len = strlen(nm);
      char axis = len ? nm[len - 1] : '?';
      if ((nm[0] != 'g' && nm[0] != 'l') || axis < '0' || axis > '2') {
        fail(r, HCQ_CODE_UNSUPPORTED, "SPECIAL %s", nm);
        return;
      }
      const char *sreg = fmt(r, "%%%s.%c", nm[0] == 'g' ? "ctaid" : "tid", "xyz"[axis - '0']);
      rclass c = rclass_of(r, n->dtype);
      const char *d = newreg(r, c);
      if (c == RC_B32) ins(r, "mov.u32 %s, %s; // %s", d, sreg, nm);
      else {
        const char *t = newreg(r, RC_B32);
        ins(r, "mov.u32 %s, %s; // %s", t, sreg, nm);
        ins(r, "cvt.u%d.u32 %s, %s;", uop_dt_bits(n->dtype), d, t);
      }
      bind(r, n, d);
      return;
    }
    case UOP_DEFINE_REG: {
      int64_t size = n->dtype.size > 0 ? n->dtype.size : 1;
      if (size > 4096) {
        fail(r, HCQ_CODE_UNSUPPORTED, "register accumulator of %lld elements", (long long)size);
        return;
      }
      const char **regs = own(r, calloc((size_t)size, sizeof *regs));
      if (!regs) return;
      rclass c = rclass_of(r, uop_dt_base_of(n->dtype));
      for (int64_t i = 0; i < size; i++) regs[i] = newreg(r, c);
      bind(r, n, regs);
      return;
    }
    case UOP_DEFINE_LOCAL: {
      int64_t size = n->dtype.size > 0 ? n->dtype.size : 1;
      int64_t bytes = size * uop_dt_itemsize_B(uop_dt_base_of(n->dtype));
      if (r->t->shared_max_B > 0 && bytes > r->t->shared_max_B) {
        fail(r, HCQ_CODE_UNSUPPORTED, "shared buffer of %lld bytes exceeds the target's %lld", (long long)bytes,
             (long long)r->t->shared_max_B);
        return;
      }
      fprintf(r->decl, "\t.shared .align 16 .b8 local%lld[%lld];\n", (long long)n->arg.i, (long long)bytes);
      const char *d = newreg(r, RC_B64);
      ins(r, "mov.u64 %s, local%lld;", d, (long long)n->arg.i);
      bind(r, n, d);
      return;
    }
    case UOP_RANGE: {
      rclass c = rclass_of(r, n->dtype);
      if (c != RC_B32 && c != RC_B64) {
        fail(r, HCQ_CODE_UNSUPPORTED, "loop counter of dtype %s", uop_dt_name(n->dtype));
        return;
      }
      const char *t = tsuf(r, n->dtype), *d = newreg(r, c), *end = get(r, n->src[0]), *p = newreg(r, RC_PRED);
      int lbl = r->nlabel++;
      ins(r, "mov.%s %s, 0;", bsuf(c), d);
      ins(r, "setp.ge.%s %s, %s, %s; // zero-trip guard", t, p, d, end);
      ins(r, "@%s bra END_%d;", p, lbl);
      fprintf(r->body, "LOOP_%d:\n", lbl);
      bind(r, n, d);
      if (!base_ptrmap_put(&r->label, n, (uintptr_t)lbl)) fail(r, HCQ_CODE_NOMEM, "out of memory");
      return;
    }
    case UOP_ENDRANGE: {
      const uop *rng = n->nsrc ? n->src[0] : NULL;
      if (!rng || rng->op != UOP_RANGE) {
        fail(r, HCQ_CODE_INTERNAL, "ENDRANGE without its RANGE");
        return;
      }
      const char *reg = get(r, rng), *end = get(r, rng->src[0]), *t = tsuf(r, rng->dtype);
      uintptr_t *m = base_ptrmap_find(&r->label, rng);
      int lbl = m ? (int)*m : -1;
      if (lbl < 0) {
        fail(r, HCQ_CODE_INTERNAL, "ENDRANGE before its RANGE");
        return;
      }
      const char *p = newreg(r, RC_PRED);
      ins(r, "add.%s %s, %s, 1;", t, reg, reg);
      ins(r, "setp.lt.%s %s, %s, %s;", t, p, reg, end);
      ins(r, "@%s bra LOOP_%d;", p, lbl);
      fprintf(r->body, "END_%d:\n", lbl);
      return;
    }
    case UOP_IF: {
      int lbl = r->nlabel++;
      ins(r, "@!%s bra ENDIF_%d;", get(r, n->src[0]), lbl);
      if (!base_ptrmap_put(&r->label, n, (uintptr_t)lbl)) fail(r, HCQ_CODE_NOMEM, "out of memory");
      return;
    }
    case UOP_ENDIF: {
      uintptr_t *m = n->nsrc ? base_ptrmap_find(&r->label, n->src[0]) : NULL;
      if (!m) {
        fail(r, HCQ_CODE_INTERNAL, "ENDIF without its IF");
        return;
      }
      fprintf(r->body, "ENDIF_%d:\n", (int)*m);
      return;
    }
    case UOP_BARRIER: ins(r, "bar.sync 0;"); return;
    case UOP_INDEX_OP: render_index(r, n); return;
    case UOP_LOAD: render_load(r, n); return;
    case UOP_STORE: render_store(r, n); return;
    case UOP_CAST: case UOP_BITCAST: bind(r, n, render_cast(r, n)); return;
    default: break;
  }
  if (!uop_op_is_alu(op)) {
    fail(r, HCQ_CODE_UNSUPPORTED, "cannot render %s", uop_op_name(op));
    return;
  }
  bind(r, n, render_alu(r, n));
}

/* ------------------------------------------------------------------------------------------------ entry */

hcq_status cc_render_ptx(const cc_target *t, const char *name, const uop *const *list, size_t count, char **out_src) {
  *out_src = NULL;
  const char *version = cc_ptx_isa_version(t->arch);
  if (!version)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "render ptx: unknown arch '%s' (expected sm_NN of a known target)",
                           t->arch);
  pr r = {.t = t};
  char *pre = NULL, *body = NULL, *decl = NULL, *out = NULL;
  size_t pre_len = 0, body_len = 0, decl_len = 0, out_len = 0;
  r.pre = open_memstream(&pre, &pre_len);
  r.body = open_memstream(&body, &body_len);
  r.decl = open_memstream(&decl, &decl_len);
  FILE *f = open_memstream(&out, &out_len);
  if (!r.pre || !r.body || !r.decl || !f) {
    r.st = hcq_status_make(HCQ_CODE_NOMEM, "render ptx: open_memstream failed");
    goto done;
  }
  /* launch bounds: the constant local sizes */
  int64_t local[3] = {1, 1, 1};
  bool local_known = true;
  for (size_t k = 0; k < count; k++) {
    const uop *n = list[k];
    if (n->op != UOP_SPECIAL || n->arg.str[0] != 'l' || n->nsrc < 1) continue;
    int d = n->arg.str[strlen(n->arg.str) - 1] - '0';
    int64_t v;
    if (d >= 0 && d < 3 && uop_const_value(n->src[0], &v)) local[d] = v;
    else local_known = false;
  }
  /* parameters: buffers by slot, then vars by name (the linearizer's order) */
  fprintf(f, "//\n// Generated by hcq for %s\n//\n\n.version %s\n.target %s\n.address_size 64\n\n", t->name, version,
          t->arch);
  fprintf(f, ".visible .entry %s(", name);
  int nparams = 0;
  for (size_t k = 0; k < count && !r.st; k++) {
    const uop *n = list[k];
    if (n->op == UOP_DEFINE_GLOBAL) {
      fprintf(f, "%s\n\t.param .u64 data%lld", nparams++ ? "," : "", (long long)n->arg.i);
      const char *raw = newreg(&r, RC_B64), *g = newreg(&r, RC_B64);
      fprintf(r.pre, "\tld.param.u64 %s, [data%lld];\n\tcvta.to.global.u64 %s, %s;\n", raw, (long long)n->arg.i, g, raw);
      bind(&r, n, g);
    } else if (n->op == UOP_DEFINE_VAR) {
      fprintf(f, "%s\n\t.param .s32 var_%s", nparams++ ? "," : "", n->arg.str);
      const char *v = newreg(&r, RC_B32);
      fprintf(r.pre, "\tld.param.s32 %s, [var_%s];\n", v, n->arg.str);
      if (rclass_of(&r, n->dtype) == RC_B64) {
        const char *w = newreg(&r, RC_B64);
        fprintf(r.pre, "\tcvt.s64.s32 %s, %s;\n", w, v);
        v = w;
      } else if (rclass_of(&r, n->dtype) != RC_B32) {
        fail(&r, HCQ_CODE_UNSUPPORTED, "variable %s of dtype %s", n->arg.str, uop_dt_name(n->dtype));
      }
      bind(&r, n, v);
    }
  }
  fprintf(f, "\n)\n");
  if (local_known) fprintf(f, ".maxntid %lld, %lld, %lld\n", (long long)local[0], (long long)local[1], (long long)local[2]);
  for (size_t k = 0; k < count && !r.st; k++) render_node(&r, list[k]);
  fclose(r.pre);
  fclose(r.body);
  fclose(r.decl);
  r.pre = r.body = r.decl = NULL;
  fprintf(f, "{\n");
  for (int c = 0; c < RC_COUNT; c++)
    if (r.nreg[c]) fprintf(f, "\t.reg %s %s<%d>;\n", RC_DECL[c], RC_PREFIX[c], r.nreg[c]);
  fputs(decl ? decl : "", f);
  fputc('\n', f);
  fputs(pre ? pre : "", f);
  fputs(body ? body : "", f);
  fprintf(f, "\tret;\n}\n");
done:
  if (r.pre) fclose(r.pre);
  if (r.body) fclose(r.body);
  if (r.decl) fclose(r.decl);
  if (f) fclose(f);
  free(pre);
  free(body);
  free(decl);
  cc_pool_free(&r.owned);
  base_ptrmap_free(&r.val);
  base_ptrmap_free(&r.label);
  if (r.st) {
    free(out);
    return r.st;
  }
  *out_src = out;
  return HCQ_OK;
}
