/* LLVM IR renderer (reference tinygrad/renderer/llvmir.py): a linear program -> one textual LLVM IR module (LLVM 19,
 * opaque pointers) holding one function.
 *
 *   llvm-cpu:  define void @NAME(ptr noalias %data0, ..., i32 %var.N, ..., i32 %core_id)
 *              the c target's ABI, so the CPU device runs either; SPECIAL gidx0 (THREAD) is core_id.
 *   amdgpu:*:  define amdgpu_kernel void @NAME(ptr addrspace(1) noalias %data0, ..., i32 %var.N, ...)
 *              with the amdgcn-amd-amdhsa triple and data layout; gidxN/lidxN are llvm.amdgcn.workgroup.id.* and
 *              llvm.amdgcn.workitem.id.*; accumulators are addrspace(5) allocas, shared memory addrspace(3) globals;
 *              "amdgpu-flat-work-group-size"="1,<local size>".
 *
 * Every statement gets the SSA name %v<position>; constants are inlined as typed literals (floats as exact hex).
 * Loops check before the first iteration (a range may be empty with a variable bound): loop_pre_K -> loop_head_K
 * (phi, compare) -> loop_body_K ... loop_latch_K -> loop_head_K, exit to loop_exit_K. Gated loads and stores branch
 * around the memory access, so a masked-off address is never dereferenced. Float compares are ordered (olt, oeq)
 * except != (une), matching C and the reference interpreter; integer ops carry no wrap flags. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc_internal.h"
#include "compiler/pool.h"
#include "compiler/interp.h"
#include "base/ptrmap.h"

/* amdgcn-amd-amdhsa data layout of LLVM 19 (as clang-19 --target=amdgcn-amd-amdhsa prints it): private allocas in
 * addrspace 5 (A5), 32-bit LDS and private pointers. */
#define AMDGPU_DATALAYOUT                                                                                          \
  "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-" \
  "i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-"  \
  "ni:7:8:9"

typedef struct lr {
  const cc_target *t;
  bool amd;
  base_ptrmap str;  /* node -> char*: its SSA name or literal */
  base_ptrmap pos;  /* node -> position in the list */
  cc_pool owned;    /* formatted strings, freed at the end */
  FILE *body, *globals;
  char *decls;     /* intrinsic declarations, one per line */
  size_t ndecls_B;
  FILE *decl_f;
  hcq_status st;
} lr;

static void fail(lr *r, hcq_code code, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fail(lr *r, hcq_code code, const char *f, ...) {
  if (r->st) return;
  char msg[256];
  va_list ap;
  va_start(ap, f);
  vsnprintf(msg, sizeof msg, f, ap);
  va_end(ap);
  r->st = hcq_status_make(code, "render llvm (%s): %s", r->t->name, msg);
}

static char *fmt(lr *r, const char *f, ...) __attribute__((format(printf, 2, 3)));
static char *fmt(lr *r, const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  char *s = NULL;
  if (vasprintf(&s, f, ap) < 0) s = NULL;
  va_end(ap);
  s = cc_pool_keep(&r->owned, s);
  if (!s) {
    fail(r, HCQ_CODE_NOMEM, "out of memory");
    return "?";
  }
  return s;
}

static void emit(lr *r, const char *f, ...) __attribute__((format(printf, 2, 3)));
static void emit(lr *r, const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  vfprintf(r->body, f, ap);
  va_end(ap);
  fputc('\n', r->body);
}

/* Declare an intrinsic once. */
static void declare(lr *r, const char *decl) {
  fflush(r->decl_f);
  if (r->decls && strstr(r->decls, decl)) return;
  fprintf(r->decl_f, "%s\n", decl);
}

static const char *ty(lr *r, uop_dtype dt) {
  if (dt.count != 1 && !uop_dt_is_ptr(dt)) {
    fail(r, HCQ_CODE_UNSUPPORTED, "vector dtype %sx%u (vectors are not rendered yet)", uop_dt_name(dt), (unsigned)dt.count);
    return "void";
  }
  switch (dt.scalar) {
    case UOP_BOOL: return "i1";
    case UOP_INT8: case UOP_UINT8: return "i8";
    case UOP_INT16: case UOP_UINT16: return "i16";
    case UOP_INT32: case UOP_UINT32: return "i32";
    case UOP_INT64: case UOP_UINT64: case UOP_INDEX: return "i64";
    case UOP_FLOAT16: return "half";
    case UOP_BFLOAT16: return "i16"; /* its bits: see bf16_widen */
    case UOP_FLOAT32: return "float";
    case UOP_FLOAT64: return "double";
    default: fail(r, HCQ_CODE_UNSUPPORTED, "no LLVM type for dtype %s", uop_dt_name(dt)); return "void";
  }
}

/* The pointer type of buffers, registers and shared memory. */
static const char *ptr_ty(lr *r, uop_op base) {
  if (!r->amd) return "ptr";
  if (base == UOP_DEFINE_REG) return "ptr addrspace(5)";
  if (base == UOP_DEFINE_LOCAL) return "ptr addrspace(3)";
  return "ptr addrspace(1)";
}

static const char *ptr_of_index(lr *r, const uop *idx) {
  if (idx->op != UOP_INDEX_OP) {
    fail(r, HCQ_CODE_UNSUPPORTED, "LOAD/STORE of a %s (expected INDEX)", uop_op_name((uop_op)idx->op));
    return "ptr";
  }
  return ptr_ty(r, (uop_op)idx->src[0]->op);
}

static const char *render_const(lr *r, const uop *n) {
  uop_dtype dt = n->dtype;
  if (uop_dt_is_float(dt)) {
    double v = n->arg.kind == UOP_ARG_FLOAT ? n->arg.f : (double)n->arg.i;
    uint64_t bits;
    switch (dt.scalar) {
      case UOP_FLOAT64: memcpy(&bits, &v, 8); return fmt(r, "0x%016llX", (unsigned long long)bits);
      case UOP_FLOAT16: return fmt(r, "0xH%04X", (unsigned)cc_f32_to_f16((float)v));
      case UOP_BFLOAT16: return fmt(r, "%u", (unsigned)cc_f32_to_bf16((float)v)); /* an i16 */
      default: {
        double d = (double)(float)v; /* LLVM spells a float constant as the double of the same value */
        memcpy(&bits, &d, 8);
        return fmt(r, "0x%016llX", (unsigned long long)bits);
      }
    }
  }
  if (uop_dt_is_bool(dt)) return n->arg.i ? "true" : "false";
  int bits = uop_dt_bits(dt);
  int64_t v = n->arg.i;
  if (bits < 64) v = (int64_t)((uint64_t)v << (64 - bits)) >> (64 - bits); /* the width's two's complement */
  return fmt(r, "%lld", (long long)v);
}

static const char *get(lr *r, const uop *n) {
  if (n->op == UOP_CONST) return render_const(r, n);
  uintptr_t *m = base_ptrmap_find(&r->str, n);
  if (!m) {
    fail(r, HCQ_CODE_INTERNAL, "%s used before it was rendered", uop_op_name((uop_op)n->op));
    return "?";
  }
  return (const char *)*m;
}

static void set(lr *r, const uop *n, const char *s) {
  if (!base_ptrmap_put(&r->str, n, (uintptr_t)s)) fail(r, HCQ_CODE_NOMEM, "out of memory");
}

/* "f32" etc. for intrinsic names */
static const char *isuffix(uop_dtype dt) {
  switch (dt.scalar) {
    case UOP_FLOAT16: return "f16";
    case UOP_FLOAT64: return "f64";
    default: return "f32";
  }
}

static void f32_to_bf16(lr *r, const char *v, const char *f);
static const char *bf16_widen(lr *r, const char *w, const char *a);

/* A call of a one-argument float intrinsic; bfloat goes through float. */
static void unary_intrinsic(lr *r, const char *v, const char *name, uop_dtype dt, const char *a) {
  const char *t = ty(r, dt);
  if (dt.scalar == UOP_BFLOAT16) {
    declare(r, fmt(r, "declare float @llvm.%s.f32(float)", name));
    bf16_widen(r, fmt(r, "%s.x", v), a);
    emit(r, "  %s.y = call float @llvm.%s.f32(float %s.x)", v, name, v);
    f32_to_bf16(r, v, fmt(r, "%s.y", v));
    return;
  }
  declare(r, fmt(r, "declare %s @llvm.%s.%s(%s)", t, name, isuffix(dt), t));
  emit(r, "  %s = call %s @llvm.%s.%s(%s %s)", v, t, name, isuffix(dt), t, a);
}

/* %v.f: float x rounded to float32 to odd: an inexact result whose last bit is even steps one ulp toward x. Rounding
 * that once more to 16 bits (<= 11 bits of significand, 24 >= 11 + 2) is the correctly rounded result: no double
 * rounding. x is a double (fptrunc) or an integer (sitofp/uitofp, checked by the saturating conversion back). */
static void round_odd_f32(lr *r, const char *v, uop_dtype from, const char *a) {
  const char *tf = ty(r, from);
  bool ff = uop_dt_is_float(from), u = uop_dt_is_unsigned(from) || uop_dt_is_bool(from);
  int bits = uop_dt_bits(from);
  if (ff && bits <= 32) { /* exact */
    if (bits == 32) emit(r, "  %s.f = select i1 true, float %s, float %s", v, a, a);
    else emit(r, "  %s.f = fpext %s %s to float", v, tf, a);
    return;
  }
  if (!ff && bits <= 16) {
    emit(r, "  %s.f = %s %s %s to float", v, u ? "uitofp" : "sitofp", tf, a);
    return;
  }
  if (ff) {
    declare(r, "declare double @llvm.fabs.f64(double)");
    emit(r, "  %s.t = fptrunc double %s to float", v, a);
    emit(r, "  %s.b = fpext float %s.t to double", v, v);
    emit(r, "  %s.ex = fcmp one double %s.b, %s", v, v, a);
    emit(r, "  %s.ax = call double @llvm.fabs.f64(double %s)", v, a);
    emit(r, "  %s.ab = call double @llvm.fabs.f64(double %s.b)", v, v);
    emit(r, "  %s.up = fcmp olt double %s.ab, %s.ax", v, v, v);
  } else {
    const char *cv = u ? "fptoui" : "fptosi";
    declare(r, fmt(r, "declare %s @llvm.%s.sat.%s.f32(float)", tf, cv, tf));
    emit(r, "  %s.t = %s %s %s to float", v, u ? "uitofp" : "sitofp", tf, a);
    emit(r, "  %s.bk = call %s @llvm.%s.sat.%s.f32(float %s.t)", v, tf, cv, tf, v);
    emit(r, "  %s.ov = fcmp oge float %s.t, %s", v, v, bits == 64 ? (u ? "0x43F0000000000000" : "0x43E0000000000000")
                                                                     : (u ? "0x41F0000000000000" : "0x41E0000000000000"));
    emit(r, "  %s.ne = icmp ne %s %s.bk, %s", v, tf, v, a);
    emit(r, "  %s.ex = or i1 %s.ne, %s.ov", v, v, v);
    emit(r, "  %s.g0 = icmp %s %s %s.bk, %s", v, u ? "ugt" : "sgt", tf, v, a);
    emit(r, "  %s.gt = or i1 %s.g0, %s.ov", v, v, v); /* the float is above x */
    if (u) emit(r, "  %s.up = xor i1 %s.gt, true", v, v);
    else {
      emit(r, "  %s.pos = icmp sge %s %s, 0", v, tf, a);
      emit(r, "  %s.up = xor i1 %s.gt, %s.pos", v, v, v); /* |float| < |x| */
    }
  }
  emit(r, "  %s.i = bitcast float %s.t to i32", v, v);
  emit(r, "  %s.d = select i1 %s.up, i32 1, i32 -1", v, v);
  emit(r, "  %s.lo = trunc i32 %s.i to i1", v, v);
  emit(r, "  %s.fix = select i1 %s.lo, i1 false, i1 %s.ex", v, v, v);
  emit(r, "  %s.adj = select i1 %s.fix, i32 %s.d, i32 0", v, v, v);
  emit(r, "  %s.j = add i32 %s.i, %s.adj", v, v, v);
  emit(r, "  %s.f = bitcast i32 %s.j to float", v, v);
}

/* float %f (a register name) -> bfloat %v by integer round-to-nearest-even: no libcall (__truncsfbf2), no
 * flush of subnormals (x86 vcvtneps2bf16 flushes them), no "Cannot select" (AMDGPU). NaN stays a quiet NaN. */
static void f32_to_bf16(lr *r, const char *v, const char *f) {
  emit(r, "  %s.bi = bitcast float %s to i32", v, f);
  emit(r, "  %s.bl = lshr i32 %s.bi, 16", v, v);
  emit(r, "  %s.b1 = and i32 %s.bl, 1", v, v);
  emit(r, "  %s.bb = add i32 %s.b1, 32767", v, v);
  emit(r, "  %s.br = add i32 %s.bi, %s.bb", v, v, v);
  emit(r, "  %s.bh = lshr i32 %s.br, 16", v, v);
  emit(r, "  %s.bq = or i32 %s.bl, 64", v, v);
  emit(r, "  %s.bn = fcmp uno float %s, 0.0", v, f);
  emit(r, "  %s.bs = select i1 %s.bn, i32 %s.bq, i32 %s.bh", v, v, v, v);
  emit(r, "  %s = trunc i32 %s.bs to i16", v, v);
}

/* CAST to float16/bfloat16: through a float32 rounded to odd, then one rounding. */
/* bfloat16 values are their bits, i16, in the IR (ty()): LLVM 19 keeps a bfloat register as a float on CPUs
 * without bf16 arithmetic (x86 before AVX512-BF16) and converts it back with a __truncsfbf2 call, which libgcc 12
 * does not have, at a phi, select or store (a kernel with a bfloat16 accumulator did not load: undefined symbol).
 * bfloat -> float by moving the bits (LLVM 19 cannot select bf16_to_fp for 32-bit Arm either). Returns the register. */
static const char *bf16_widen(lr *r, const char *w, const char *a) {
  emit(r, "  %s.wz = zext i16 %s to i32", w, a);
  emit(r, "  %s.ws = shl i32 %s.wz, 16", w, w);
  emit(r, "  %s = bitcast i32 %s.ws to float", w, w);
  return w;
}

static void to_16(lr *r, const char *v, const uop *n, uop_dtype from, const char *a) {
  round_odd_f32(r, v, from, a);
  if (n->dtype.scalar == UOP_BFLOAT16) f32_to_bf16(r, v, fmt(r, "%s.f", v));
  else emit(r, "  %s = fptrunc float %s.f to half", v, v);
}

static void render_cast(lr *r, const char *v, const uop *n) {
  uop_dtype from = n->src[0]->dtype, to = n->dtype;
  const char *a = get(r, n->src[0]);
  if (n->op == UOP_CAST && from.scalar == UOP_BFLOAT16 && to.scalar != UOP_BFLOAT16) { /* via float (exact) */
    a = bf16_widen(r, fmt(r, "%s.bw", v), a);
    from = uop_dt(UOP_FLOAT32);
  }
  const char *tf = ty(r, from), *tt = ty(r, to);
  bool ff = uop_dt_is_float(from), ft = uop_dt_is_float(to);
  int bf = uop_dt_bits(from), bt = uop_dt_bits(to);
  if (n->op == UOP_BITCAST) {
    if (strcmp(tf, tt) == 0) set(r, n, a);
    else emit(r, "  %s = bitcast %s %s to %s", v, tf, a, tt);
    return;
  }
  /* same width int<->uint: no-op (not int16 <-> bfloat16, which is an i16 too) */
  if (strcmp(tf, tt) == 0 && uop_dt_is_bool(from) == uop_dt_is_bool(to) &&
      (from.scalar == UOP_BFLOAT16) == (to.scalar == UOP_BFLOAT16)) {
    set(r, n, a);
    return;
  }
  if (bt == 16 && ft && !(ff && bf == 16 && from.scalar == to.scalar)) {
    to_16(r, v, n, from, a);
    return;
  }
  if (uop_dt_is_bool(to)) {
    if (ff) emit(r, "  %s = fcmp une %s %s, 0.0", v, tf, a);
    else emit(r, "  %s = icmp ne %s %s, 0", v, tf, a);
  } else if (ff && ft) {
    if (bf == bt) { /* half <-> bfloat */
      emit(r, "  %s.x = fpext %s %s to float", v, tf, a);
      emit(r, "  %s = fptrunc float %s.x to %s", v, v, tt);
    } else {
      emit(r, "  %s = %s %s %s to %s", v, bf < bt ? "fpext" : "fptrunc", tf, a, tt);
    }
  } else if (ff) {
    /* saturating, NaN -> 0 (docs/FORMATS.md); plain fptosi/fptoui are poison out of range */
    const char *sat = uop_dt_is_unsigned(to) ? "fptoui" : "fptosi";
    const char *fs = from.scalar == UOP_FLOAT16 ? "f16" : from.scalar == UOP_BFLOAT16 ? "bf16" : isuffix(from);
    declare(r, fmt(r, "declare %s @llvm.%s.sat.i%d.%s(%s)", tt, sat, bt, fs, tf));
    emit(r, "  %s = call %s @llvm.%s.sat.i%d.%s(%s %s)", v, tt, sat, bt, fs, tf, a);
  } else if (ft && bf == 64 && to.scalar == UOP_FLOAT32) {
    /* AArch64 lowers (vector) i64 -> float through double, which rounds twice: make the double exact-or-odd
     * (at most 53 bits, a sticky bit for the rest), then one rounding to float (53 >= 24 + 2) */
    bool u = uop_dt_is_unsigned(from);
    declare(r, "declare i64 @llvm.ctlz.i64(i64, i1)");
    if (u) emit(r, "  %s.u = or i64 %s, 0", v, a);
    else {
      emit(r, "  %s.ng = icmp slt i64 %s, 0", v, a);
      emit(r, "  %s.na = sub i64 0, %s", v, a);
      emit(r, "  %s.u = select i1 %s.ng, i64 %s.na, i64 %s", v, v, v, a);
    }
    emit(r, "  %s.lz = call i64 @llvm.ctlz.i64(i64 %s.u, i1 false)", v, v);
    emit(r, "  %s.s0 = sub i64 11, %s.lz", v, v);
    emit(r, "  %s.big = icmp sgt i64 %s.s0, 0", v, v);
    emit(r, "  %s.sh = select i1 %s.big, i64 %s.s0, i64 0", v, v, v);
    emit(r, "  %s.t = lshr i64 %s.u, %s.sh", v, v, v);
    emit(r, "  %s.m1 = shl i64 1, %s.sh", v, v);
    emit(r, "  %s.m = sub i64 %s.m1, 1", v, v);
    emit(r, "  %s.lo = and i64 %s.u, %s.m", v, v, v);
    emit(r, "  %s.st = icmp ne i64 %s.lo, 0", v, v);
    emit(r, "  %s.sz = zext i1 %s.st to i64", v, v);
    emit(r, "  %s.t2 = or i64 %s.t, %s.sz", v, v, v);
    emit(r, "  %s.d = uitofp i64 %s.t2 to double", v, v);
    emit(r, "  %s.e = add i64 %s.sh, 1023", v, v);
    emit(r, "  %s.eb = shl i64 %s.e, 52", v, v);
    emit(r, "  %s.p = bitcast i64 %s.eb to double", v, v);
    emit(r, "  %s.dd = fmul double %s.d, %s.p", v, v, v);
    if (!u) {
      emit(r, "  %s.nd = fneg double %s.dd", v, v);
      emit(r, "  %s.sd = select i1 %s.ng, double %s.nd, double %s.dd", v, v, v, v);
    }
    emit(r, "  %s = fptrunc double %s.%s to float", v, v, u ? "dd" : "sd");
  } else if (ft) {
    bool u = uop_dt_is_unsigned(from) || uop_dt_is_bool(from);
    emit(r, "  %s = %s %s %s to %s", v, u ? "uitofp" : "sitofp", tf, a, tt);
  } else if (bf > bt) {
    emit(r, "  %s = trunc %s %s to %s", v, tf, a, tt);
  } else {
    bool u = uop_dt_is_unsigned(from) || uop_dt_is_bool(from);
    emit(r, "  %s = %s %s %s to %s", v, u ? "zext" : "sext", tf, a, tt);
  }
}

/* AMDGPU with LLVM 19 (clang-19): AMDGPUCodeGenPrepare divides 32- and 64-bit integers in float
 * (expandDivRem24) when it can prove enough high bits of both operands, and that path is wrong in several ways:
 * it counts sign bits also for udiv/urem, so leading ones (-1, x | 0xff000000, a sign-extended int8 as uint32)
 * pass as small numbers (https://github.com/llvm/llvm-project/pull/116733, fixed in LLVM 20); an unsigned
 * numerator in [2^23, 2^24) can get a quotient one too large (pull/201186); 23-bit operands can be off by one with
 * the hardware's 1-ulp v_rcp_f32 (pull/202753); signed results are sign-extended from too few bits (pull/203436).
 * An empty inline asm in front of the numerator leaves LLVM no known bits, so it takes its exact 32-bit (or the
 * general 64-bit) expansion. Left alone where LLVM never takes that path: 8- and 16-bit operands (widened by the
 * pass itself, exact in float), and a constant divisor of 32 bits or a positive power of two of 64 bits
 * (divHasSpecialOptimization: magic-number multiplies or shifts). amd_div_test checks the classes on the mock. */
static bool amd_div_opaque(const uop *n, uop_dtype st) {
  int bits = uop_dt_bits(st);
  const uop *d = n->src[1];
  if (bits < 32) return false;
  if (d->op != UOP_CONST) return true;
  return bits > 32 && !(d->arg.i > 0 && (d->arg.i & (d->arg.i - 1)) == 0);
}

/* dt/st: result and operand dtypes; a, b, c: the operands */
static void render_alu_in(lr *r, const char *v, const uop *n, uop_dtype dt, uop_dtype st, const char *a,
                          const char *b, const char *c) {
  uop_op op = (uop_op)n->op;
  bool fl = uop_dt_is_float(st), un = uop_dt_is_unsigned(st) || uop_dt_is_bool(st);
  const char *t = ty(r, st);
  const char *ins = NULL;
  switch (op) {
    case UOP_ADD: ins = fl ? "fadd" : "add"; break;
    case UOP_SUB: ins = fl ? "fsub" : "sub"; break;
    case UOP_MUL: ins = fl ? "fmul" : "mul"; break;
    case UOP_FDIV: ins = "fdiv"; break;
    case UOP_IDIV: ins = un ? "udiv" : "sdiv"; break;
    case UOP_MOD: ins = un ? "urem" : "srem"; break;
    case UOP_SHL: ins = "shl"; break;
    case UOP_SHR: ins = un ? "lshr" : "ashr"; break;
    case UOP_AND: ins = "and"; break;
    case UOP_OR: ins = "or"; break;
    case UOP_XOR: ins = "xor"; break;
    case UOP_CMPLT: ins = fl ? "fcmp olt" : un ? "icmp ult" : "icmp slt"; break;
    case UOP_CMPNE: ins = fl ? "fcmp une" : "icmp ne"; break;
    case UOP_CMPEQ: ins = fl ? "fcmp oeq" : "icmp eq"; break;
    default: break;
  }
  if (ins) {
    if ((op == UOP_FDIV && !fl) || (fl && (op == UOP_IDIV || op == UOP_MOD || op == UOP_SHL || op == UOP_SHR ||
                                           op == UOP_AND || op == UOP_OR || op == UOP_XOR)))
      fail(r, HCQ_CODE_INVALID, "%s on dtype %s", uop_op_name(op), uop_dt_name(st));
    /* (a full-range uint64 amount has vmax -1, the bit pattern of UINT64_MAX: not a safe amount) */
    if ((op == UOP_SHL || op == UOP_SHR) && !fl &&
        !(uop_vmin(n->src[1]) >= 0 && uop_vmax(n->src[1]) >= 0 && uop_vmax(n->src[1]) < uop_dt_bits(st))) {
      /* LLVM: a shift by the width or more is poison; the interpreter (and ptx's clamped shifts) give 0, or the
       * sign for >> of a signed value. A negative amount is huge as unsigned. */
      int bits = uop_dt_bits(st);
      emit(r, "  %s.big = icmp uge %s %s, %d", v, t, b, bits);
      emit(r, "  %s.amt = select i1 %s.big, %s %d, %s %s", v, v, t, bits - 1, t, b);
      if (op == UOP_SHR && !un) { /* ashr by width-1 is the sign fill */
        emit(r, "  %s = ashr %s %s, %s.amt", v, t, a, v);
        return;
      }
      emit(r, "  %s.sh = %s %s %s, %s.amt", v, ins, t, a, v);
      emit(r, "  %s = select i1 %s.big, %s 0, %s %s.sh", v, v, t, t, v);
      return;
    }
    if (op == UOP_IDIV || op == UOP_MOD) {
      const char *num = a;
      if (r->amd && amd_div_opaque(n, st)) {
        emit(r, "  %s.n = call %s asm \"\", \"=v,0\"(%s %s)", v, t, t, a);
        num = fmt(r, "%s.n", v);
      }
      /* A zero divisor is undefined behaviour in LLVM IR (x86 happens to trap, Arm returns 0): trap explicitly on
       * the CPU, as the c target does, so it is a kernel fault and never a silent wrong answer. */
      const uop *d = n->src[1]; /* may be 0: uint64 bounds are bit patterns, [0, -1] is its full range */
      if (!r->amd && (st.scalar == UOP_UINT64 ? uop_vmin(d) == 0 : uop_vmin(d) <= 0 && uop_vmax(d) >= 0)) {
        declare(r, "declare void @llvm.trap()");
        emit(r, "  %s.z = icmp eq %s %s, 0", v, t, b);
        emit(r, "  br i1 %s.z, label %s.dz, label %s.ok\n%s.dz:", v, v, v, v + 1);
        emit(r, "  call void @llvm.trap()\n  unreachable\n%s.ok:", v + 1);
      }
      /* sdiv/srem of MIN by -1 is undefined in LLVM IR (x86 traps); the interpreter wraps: MIN // -1 = MIN, % = 0 */
      if (!un && uop_vmin(n->src[0]) <= uop_dt_min(st) && uop_vmin(n->src[1]) <= -1 && uop_vmax(n->src[1]) >= -1) {
        emit(r, "  %s.m1 = icmp eq %s %s, -1", v, t, b);
        emit(r, "  %s.d = select i1 %s.m1, %s 1, %s %s", v, v, t, t, b);
        emit(r, "  %s.q = %s %s %s, %s.d", v, ins, t, num, v);
        if (op == UOP_IDIV) emit(r, "  %s.ng = sub %s 0, %s", v, t, a);
        emit(r, "  %s = select i1 %s.m1, %s %s, %s %s.q", v, v, t, op == UOP_IDIV ? fmt(r, "%s.ng", v) : "0", t, v);
        return;
      }
      emit(r, "  %s = %s %s %s, %s", v, ins, t, num, b);
      return;
    }
    emit(r, "  %s = %s %s %s, %s", v, ins, t, a, b);
    return;
  }
  switch (op) {
    case UOP_NEG:
      if (fl) emit(r, "  %s = fneg %s %s", v, t, a);
      else emit(r, "  %s = sub %s 0, %s", v, t, a);
      return;
    case UOP_RECIP: emit(r, "  %s = fdiv %s %s, %s", v, t, fl ? "1.0" : "1", a); return;
    case UOP_MAX: /* ints: (a < b) ? b : a; float MAX is decomposed on every target (decomp.c max_ieee) */
      if (fl) {
        fail(r, HCQ_CODE_UNSUPPORTED, "float MAX reached the renderer (decomp.c decomposes it)");
        return;
      }
      emit(r, "  %s.c = %s %s %s, %s", v, fl ? "fcmp olt" : un ? "icmp ult" : "icmp slt", t, a, b);
      emit(r, "  %s = select i1 %s.c, %s %s, %s %s", v, v, t, b, t, a);
      return;
    case UOP_WHERE: {
      const char *tv = ty(r, dt);
      emit(r, "  %s = select i1 %s, %s %s, %s %s", v, a, tv, b, tv, c);
      return;
    }
    case UOP_MULACC: /* fused for floats (one rounding), as the interpreter */
      if (fl) {
        const char *is = dt.scalar == UOP_BFLOAT16 ? "bf16" : isuffix(dt);
        declare(r, fmt(r, "declare %s @llvm.fma.%s(%s, %s, %s)", t, is, t, t, t));
        emit(r, "  %s = call %s @llvm.fma.%s(%s %s, %s %s, %s %s)", v, t, is, t, a, t, b, t, c);
        return;
      }
      emit(r, "  %s.m = mul %s %s, %s", v, t, a, b);
      emit(r, "  %s = add %s %s.m, %s", v, t, v, c);
      return;
    case UOP_SQRT: case UOP_TRUNC: case UOP_EXP2: case UOP_LOG2: case UOP_SIN: {
      if (!fl) {
        fail(r, HCQ_CODE_INVALID, "%s on dtype %s", uop_op_name(op), uop_dt_name(st));
        return;
      }
      const char *name = op == UOP_SQRT ? "sqrt" : op == UOP_TRUNC ? "trunc" : op == UOP_EXP2 ? "exp2"
                       : op == UOP_LOG2 ? "log2" : "sin";
      unary_intrinsic(r, v, name, dt, a);
      return;
    }
    default: fail(r, HCQ_CODE_UNSUPPORTED, "cannot render %s", uop_op_name(op));
  }
}

/* bfloat16 arithmetic is done in float and rounded by f32_to_bf16: LLVM's own float -> bfloat is a libcall or,
 * with AVX512-BF16, vcvtneps2bf16, which flushes subnormal results to zero. */
static void render_alu(lr *r, const char *v, const uop *n) {
  uop_op op = (uop_op)n->op;
  uop_dtype dt = n->dtype, st = n->nsrc ? n->src[0]->dtype : dt; /* operand dtype (compares differ) */
  const char *s[3] = {"", "", ""};
  for (uint32_t i = 0; i < n->nsrc && i < 3; i++) s[i] = get(r, n->src[i]);
  /* every op on bfloat operands but WHERE (compares and MAX too: no bfloat compare on 32-bit Arm); float16 MULACC
   * too: a native f16 fma (AMDGPU) rounds once to 16 bits, the documented fmaf rounds to float32 first */
  bool wrap = (st.scalar == UOP_BFLOAT16 && op != UOP_WHERE) || (dt.scalar == UOP_FLOAT16 && op == UOP_MULACC);
  if (!wrap) {
    render_alu_in(r, v, n, dt, st, s[0], s[1], s[2]);
    return;
  }
  for (uint32_t i = 0; i < n->nsrc && i < 3; i++) {
    const char *w = fmt(r, "%s.x%u", v, i);
    if (st.scalar == UOP_BFLOAT16) bf16_widen(r, w, s[i]);
    else emit(r, "  %s = fpext half %s to float", w, s[i]);
    s[i] = w;
  }
  uop_dtype f32 = uop_dt(UOP_FLOAT32);
  if (uop_dt_is_bool(dt)) { /* compares */
    render_alu_in(r, v, n, dt, f32, s[0], s[1], s[2]);
    return;
  }
  render_alu_in(r, fmt(r, "%s.r", v), n, f32, f32, s[0], s[1], s[2]);
  if (dt.scalar == UOP_BFLOAT16) f32_to_bf16(r, v, fmt(r, "%s.r", v)); /* MAX, NEG: exact */
  else emit(r, "  %s = fptrunc float %s.r to half", v, v);
}

static void render_special(lr *r, const char *v, const uop *n) {
  const char *nm = n->arg.str;
  size_t len = strlen(nm);
  char axis = len ? nm[len - 1] : '?';
  if (axis < '0' || axis > '2' || (nm[0] != 'g' && nm[0] != 'l')) {
    fail(r, HCQ_CODE_UNSUPPORTED, "SPECIAL %s", nm);
    return;
  }
  const char *id;
  if (!r->amd) {
    if (nm[0] != 'g' || axis != '0') {
      fail(r, HCQ_CODE_UNSUPPORTED, "SPECIAL %s (the CPU has only gidx0 = core_id)", nm);
      return;
    }
    id = "%core_id";
  } else {
    const char *fn = nm[0] == 'g' ? "workgroup" : "workitem";
    char xyz = "xyz"[axis - '0'];
    declare(r, fmt(r, "declare i32 @llvm.amdgcn.%s.id.%c()", fn, xyz));
    emit(r, "  %s.id = call i32 @llvm.amdgcn.%s.id.%c()", v, fn, xyz);
    id = fmt(r, "%s.id", v);
  }
  if (uop_dt_bits(n->dtype) == 64) {
    emit(r, "  %s = zext i32 %s to i64", v, id);
    set(r, n, v);
  } else {
    set(r, n, id);
  }
}

static void render_node(lr *r, const uop *n, size_t k) {
  uop_op op = (uop_op)n->op;
  const char *v = fmt(r, "%%v%zu", k);
  /* a value emitted again (once per loop nest) drops the name of its earlier statement */
  bool again = base_ptrmap_find(&r->str, n) && op != UOP_DEFINE_GLOBAL && op != UOP_DEFINE_VAR;
  if (again) set(r, n, 0);
  switch (op) {
    case UOP_DEFINE_GLOBAL: case UOP_DEFINE_VAR: return; /* parameters */
    case UOP_SPECIAL: render_special(r, v, n); return;
    case UOP_DEFINE_REG:
      emit(r, "  %s = alloca [%lld x %s], align 16%s", v, (long long)(n->dtype.size > 0 ? n->dtype.size : 1),
           ty(r, uop_dt_base_of(n->dtype)), r->amd ? ", addrspace(5)" : "");
      set(r, n, v);
      return;
    case UOP_DEFINE_LOCAL: {
      if (!r->amd) {
        fail(r, HCQ_CODE_UNSUPPORTED, "DEFINE_LOCAL on a CPU target");
        return;
      }
      const char *g = fmt(r, "@local%zu", k);
      fprintf(r->globals, "%s = internal unnamed_addr addrspace(3) global [%lld x %s] undef, align 16\n", g,
              (long long)(n->dtype.size > 0 ? n->dtype.size : 1), ty(r, uop_dt_base_of(n->dtype)));
      set(r, n, g);
      return;
    }
    case UOP_RANGE: {
      const char *t = ty(r, n->dtype), *end = get(r, n->src[0]);
      emit(r, "  br label %%loop_pre_%zu\nloop_pre_%zu:\n  br label %%loop_head_%zu\nloop_head_%zu:", k, k, k, k);
      emit(r, "  %s = phi %s [0, %%loop_pre_%zu], [%s.next, %%loop_latch_%zu]", v, t, k, v, k);
      emit(r, "  %s.go = icmp slt %s %s, %s", v, t, v, end);
      emit(r, "  br i1 %s.go, label %%loop_body_%zu, label %%loop_exit_%zu\nloop_body_%zu:", v, k, k, k);
      set(r, n, v);
      return;
    }
    case UOP_ENDRANGE: {
      const uop *rng = n->src[0];
      uintptr_t *p = base_ptrmap_find(&r->pos, rng);
      if (!p || rng->op != UOP_RANGE) {
        fail(r, HCQ_CODE_INTERNAL, "ENDRANGE of an unknown range");
        return;
      }
      size_t rk = *p;
      const char *rv = get(r, rng), *t = ty(r, rng->dtype);
      emit(r, "  br label %%loop_latch_%zu\nloop_latch_%zu:", rk, rk);
      emit(r, "  %s.next = add %s %s, 1", rv, t, rv);
      emit(r, "  br label %%loop_head_%zu\nloop_exit_%zu:", rk, rk);
      return;
    }
    case UOP_IF:
      emit(r, "  br i1 %s, label %%if_%zu, label %%endif_%zu\nif_%zu:", get(r, n->src[0]), k, k, k);
      return;
    case UOP_ENDIF: {
      uintptr_t *p = base_ptrmap_find(&r->pos, n->src[0]);
      if (!p) {
        fail(r, HCQ_CODE_INTERNAL, "ENDIF of an unknown IF");
        return;
      }
      emit(r, "  br label %%endif_%zu\nendif_%zu:", (size_t)*p, (size_t)*p);
      return;
    }
    case UOP_INDEX_OP: {
      const uop *base = n->src[0];
      bool gated = n->nsrc >= 3;
      /* no inbounds on a gated index: a masked-off lane may compute an address outside the buffer */
      emit(r, "  %s = getelementptr %s%s, %s %s, %s %s", v, gated ? "" : "inbounds ", ty(r, uop_dt_base_of(n->dtype)),
           ptr_ty(r, (uop_op)base->op), get(r, base), ty(r, n->src[1]->dtype), get(r, n->src[1]));
      set(r, n, v);
      return;
    }
    case UOP_LOAD: {
      const uop *idx = n->src[0];
      const char *pt = ptr_of_index(r, idx), *t = ty(r, n->dtype), *p = get(r, idx);
      if (idx->op == UOP_INDEX_OP && idx->nsrc >= 3) {
        const uop *alt = n->nsrc > 1 && n->src[1]->op != UOP_STORE && uop_dt_eq(n->src[1]->dtype, n->dtype) ? n->src[1] : NULL;
        const char *alts = alt ? get(r, alt) : uop_dt_is_float(n->dtype) ? "0.0" : uop_dt_is_bool(n->dtype) ? "false" : "0";
        emit(r, "  br label %%gate_%zu\ngate_%zu:", k, k);
        emit(r, "  br i1 %s, label %%load_%zu, label %%loaded_%zu\nload_%zu:", get(r, idx->src[2]), k, k, k);
        emit(r, "  %s.ld = load %s, %s %s\n  br label %%loaded_%zu\nloaded_%zu:", v, t, pt, p, k, k);
        emit(r, "  %s = phi %s [%s.ld, %%load_%zu], [%s, %%gate_%zu]", v, t, v, k, alts, k);
      } else {
        emit(r, "  %s = load %s, %s %s", v, t, pt, p);
      }
      set(r, n, v);
      return;
    }
    case UOP_STORE: {
      const uop *idx = n->src[0], *val = n->src[1];
      const char *pt = ptr_of_index(r, idx), *p = get(r, idx);
      if (idx->op == UOP_INDEX_OP && idx->nsrc >= 3) {
        emit(r, "  br i1 %s, label %%store_%zu, label %%stored_%zu\nstore_%zu:", get(r, idx->src[2]), k, k, k);
        emit(r, "  store %s %s, %s %s\n  br label %%stored_%zu\nstored_%zu:", ty(r, val->dtype), get(r, val), pt, p, k, k);
      } else {
        emit(r, "  store %s %s, %s %s", ty(r, val->dtype), get(r, val), pt, p);
      }
      return;
    }
    case UOP_BARRIER:
      if (r->amd) {
        declare(r, "declare void @llvm.amdgcn.s.barrier()");
        emit(r, "  fence syncscope(\"workgroup\") release\n  call void @llvm.amdgcn.s.barrier()\n"
                "  fence syncscope(\"workgroup\") acquire");
      }
      return;
    case UOP_CAST: case UOP_BITCAST:
      render_cast(r, v, n);
      break;
    default:
      if (!uop_op_is_alu(op)) {
        fail(r, HCQ_CODE_UNSUPPORTED, "cannot render %s", uop_op_name(op));
        return;
      }
      render_alu(r, v, n);
      break;
  }
  uintptr_t *m = base_ptrmap_find(&r->str, n);
  if (!m || !*m) set(r, n, v); /* unless the case named it (a cast to the same type is its operand) */
}

/* The product of the constant lidx sizes (1 without locals; 1024 if one is symbolic). */
static int64_t local_size(const uop *const *list, size_t count) {
  int64_t prod = 1;
  for (size_t k = 0; k < count; k++)
    if (list[k]->op == UOP_SPECIAL && list[k]->arg.str[0] == 'l') {
      int64_t s;
      if (!uop_const_value(list[k]->src[0], &s)) return 1024;
      prod *= s;
    }
  return prod;
}

hcq_status cc_render_llvm(const cc_target *t, const char *name, const uop *const *list, size_t count, char **out_src) {
  *out_src = NULL;
  if (t->kind != CC_TARGET_AMDGPU && t->kind != CC_TARGET_LLVM_CPU)
    return hcq_status_make(HCQ_CODE_INVALID, "render llvm: target %s is not an LLVM target", t->name);
  lr r = {.t = t, .amd = t->kind == CC_TARGET_AMDGPU};
  char *body = NULL, *globals = NULL, *out = NULL;
  size_t body_len = 0, globals_len = 0, out_len = 0;
  r.body = open_memstream(&body, &body_len);
  r.globals = open_memstream(&globals, &globals_len);
  r.decl_f = open_memstream(&r.decls, &r.ndecls_B);
  FILE *f = open_memstream(&out, &out_len);
  if (!r.body || !r.globals || !r.decl_f || !f) fail(&r, HCQ_CODE_NOMEM, "open_memstream failed");
  if (!r.st) {
    if (r.amd) fprintf(f, "target datalayout = \"%s\"\ntarget triple = \"amdgcn-amd-amdhsa\"\n\n", AMDGPU_DATALAYOUT);
    /* signature: buffers by slot, then vars by name (the linearizer's order), then core_id on the CPU */
    fprintf(f, "define %svoid @%s(", r.amd ? "amdgpu_kernel " : "", name);
    bool first = true;
    for (size_t k = 0; k < count && !r.st; k++) {
      const uop *n = list[k];
      if (n->op == UOP_DEFINE_GLOBAL) {
        const char *p = fmt(&r, "%%data%lld", (long long)n->arg.i);
        fprintf(f, "%s%s noalias %s", first ? "" : ", ", ptr_ty(&r, UOP_DEFINE_GLOBAL), p);
        set(&r, n, p);
        first = false;
      } else if (n->op == UOP_DEFINE_VAR) {
        const char *p = fmt(&r, "%%var.%s", n->arg.str);
        fprintf(f, "%si32 %s", first ? "" : ", ", p);
        first = false;
        if (uop_dt_bits(n->dtype) == 64) { /* 64-bit index math: widen once at entry */
          const char *w = fmt(&r, "%%var.%s.64", n->arg.str);
          emit(&r, "  %s = sext i32 %s to i64", w, p);
          p = w;
        }
        set(&r, n, p);
      }
    }
    if (!r.amd) fprintf(f, "%si32 %%core_id", first ? "" : ", ");
    fprintf(f, ") #0 {\nentry:\n");
  }
  /* pos: a node's latest statement (the linearizer emits a RANGE, and a value used in two loop nests, once per nest) */
  for (size_t k = 0; k < count && !r.st; k++)
    if (!base_ptrmap_put(&r.pos, list[k], k)) fail(&r, HCQ_CODE_NOMEM, "out of memory");
    else render_node(&r, list[k], k);
  if (r.body) fclose(r.body);
  if (r.globals) fclose(r.globals);
  if (r.decl_f) fclose(r.decl_f);
  if (!r.st) {
    fputs(body ? body : "", f);
    fputs("  ret void\n}\n\n", f);
    fputs(globals ? globals : "", f);
    fputs(r.decls ? r.decls : "", f);
    fprintf(f, "\nattributes #0 = { nounwind \"no-builtins\" \"no-trapping-math\"=\"true\"");
    if (r.amd) fprintf(f, " \"amdgpu-flat-work-group-size\"=\"1,%lld\"", (long long)local_size(list, count));
    fprintf(f, " }\n");
  }
  if (f) fclose(f);
  free(body);
  free(globals);
  free(r.decls);
  cc_pool_free(&r.owned);
  base_ptrmap_free(&r.str);
  base_ptrmap_free(&r.pos);
  if (r.st) {
    free(out);
    return r.st;
  }
  *out_src = out;
  return HCQ_OK;
}
