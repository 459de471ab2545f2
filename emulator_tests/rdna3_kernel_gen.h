/* The random kernel generator of the RDNA3 and AMD mock differential fuzzers (header-only, for *_test.c; moved
 * out of rdna3_fuzz_test.c unchanged): gen() writes one random kernel's text (see rdna3_fuzz_test.c for what it
 * covers) into a fuzz_text, drawing from base/fuzz.h's generator (seed fuzz_rng). */
#ifndef HCQ_EMU_RDNA3_KERNEL_GEN_H
#define HCQ_EMU_RDNA3_KERNEL_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/fuzz.h"

enum { T_F32, T_F64, T_F16, T_I32, T_U32, T_I8, T_U8, T_I16, T_U16 };
static const char *const TN[] = {"float32", "float64", "float16", "int32", "uint32", "int8", "uint8", "int16", "uint16"};

typedef struct kspec {
  int t;          /* T_* */
  int nbufs;
  int64_t n0, n1; /* output dims (n1 = 1: one dim) */
  int64_t nr;     /* reduce size (0: elementwise) */
  bool wild;      /* full-range constants */
} kspec;

static bool is_f(const kspec *k) { return k->t <= T_F16; }

static void konst(fuzz_text *b, const kspec *k) {
  static const char *const WF[] = {"-0.0", "1e-40", "0.1", "1e-45", "1.00000012", "inf", "-inf", "nan", "3e38", "-7.5"};
  static const char *const WI[] = {"2147483647", "-2147483648", "-1", "65536", "0", "7", "-3"};
  static const char *const WU[] = {"4294967295", "2147483648", "0", "1", "65536", "7"};
  if (k->t == T_F16) { /* float16's own extremes: 65504, the smallest subnormal, values that round */
    static const char *const WH[] = {"-0.0", "6e-8", "0.1", "65504.0", "inf", "-inf", "nan", "1.0009765625", "-7.5"};
    const char *v = k->wild && fuzz_rnd(2) ? WH[fuzz_rnd(9)] : (const char *[]){"0.5", "-1.25", "2.0", "0.75", "-3.0"}[fuzz_rnd(5)];
    fuzz_put(b, "(const %s float16)", v);
  } else if (is_f(k)) {
    const char *v = k->wild && fuzz_rnd(2) ? WF[fuzz_rnd(10)] : (const char *[]){"0.5", "-1.25", "2.0", "0.75", "-3.0"}[fuzz_rnd(5)];
    fuzz_put(b, "(const %s %s)", v, TN[k->t]);
  } else if (k->t == T_I32) {
    fuzz_put(b, "(const %s int32)", k->wild && fuzz_rnd(2) ? WI[fuzz_rnd(7)] : (const char *[]){"3", "-2", "5", "1"}[fuzz_rnd(4)]);
  } else if (k->t == T_U32) {
    fuzz_put(b, "(const %s uint32)", k->wild && fuzz_rnd(2) ? WU[fuzz_rnd(6)] : (const char *[]){"3", "2", "5", "1"}[fuzz_rnd(4)]);
  } else { /* 8/16-bit: the type's extremes */
    bool sg = k->t == T_I8 || k->t == T_I16, b8 = k->t == T_I8 || k->t == T_U8;
    static const char *const E[4][3] = {{"127", "-128", "-1"}, {"255", "128", "0"}, {"32767", "-32768", "-1"}, {"65535", "32768", "0"}};
    int row = (b8 ? 0 : 2) + (sg ? 0 : 1);
    fuzz_put(b, "(const %s %s)", k->wild && fuzz_rnd(2) ? E[row][fuzz_rnd(3)] : (const char *[]){"3", "2", "5", "1"}[fuzz_rnd(4)], TN[k->t]);
  }
}

/* A load of buffer j: index by (r0, r1) in one of three ways, optionally gated. */
static void load(fuzz_text *b, const kspec *k) {
  int j = 1 + (int)fuzz_rnd((uint32_t)k->nbufs);
  char base[96], idx[160];
  switch (fuzz_rnd(3)) {
    case 0: snprintf(base, sizeof base, "(+ (* r0 %lld) r1)", (long long)k->n1); break;  /* row-major */
    case 1: snprintf(base, sizeof base, "(+ (* r1 %lld) r0)", (long long)k->n0); break;  /* transposed */
    default: snprintf(base, sizeof base, "r0"); break;                                  /* broadcast over r1 */
  }
  if (k->nr) snprintf(idx, sizeof idx, "(+ (* %s %lld) rr)", base, (long long)k->nr);
  else snprintf(idx, sizeof idx, "%s", base);
  if (fuzz_rnd(5) == 0) {
    fuzz_put(b, "(load (index in%d %s (< r0 %lld)) ", j, idx, (long long)(1 + fuzz_rnd((uint32_t)k->n0)));
    konst(b, k);
    fuzz_put(b, ")");
  } else {
    fuzz_put(b, "(load (index in%d %s))", j, idx);
  }
}

static void expr(fuzz_text *b, kspec *k, int depth);

static void expr2(fuzz_text *b, kspec *k, const char *op, int depth) {
  fuzz_put(b, "(%s ", op);
  expr(b, k, depth - 1);
  fuzz_put(b, " ");
  expr(b, k, depth - 1);
  fuzz_put(b, ")");
}

static void expr(fuzz_text *b, kspec *k, int depth) {
  uint32_t c = depth <= 0 ? fuzz_rnd(3) : fuzz_rnd(16);
  const char *T = TN[k->t];
  if (c <= 1) return load(b, k);
  if (c == 2) return konst(b, k);
  switch (c) {
    case 3: return expr2(b, k, "+", depth);
    case 4: return expr2(b, k, "*", depth);
    case 5: return expr2(b, k, "max", depth);
    case 6: return expr2(b, k, "-", depth);
    case 7: case 8:
      fuzz_put(b, "(where (%s ", (const char *[]){"<", "!=", "=="}[fuzz_rnd(3)]);
      expr(b, k, depth - 1);
      fuzz_put(b, " ");
      expr(b, k, depth - 1);
      fuzz_put(b, ") ");
      expr(b, k, depth - 1);
      fuzz_put(b, " ");
      expr(b, k, depth - 1);
      fuzz_put(b, ")");
      return;
    case 9: /* casts through another type and back */
      if (is_f(k)) {
        if (k->wild) return expr2(b, k, "+", depth); /* out-of-range float -> int is undefined */
        fuzz_put(b, "(cast %s (cast int32 (trunc ", T);
        expr(b, k, depth - 1);
        fuzz_put(b, ")))");
      } else if (k->t >= T_I8) {
        fuzz_put(b, "(cast %s (cast %s ", T, fuzz_rnd(2) ? "int32" : "uint32");
        expr(b, k, depth - 1);
        fuzz_put(b, "))");
      } else {
        fuzz_put(b, "(cast %s (cast %s ", T, fuzz_rnd(2) ? "float64" : "int64");
        expr(b, k, depth - 1);
        fuzz_put(b, "))");
      }
      return;
    default: break;
  }
  if (is_f(k)) {
    switch (c) {
      case 10: /* float16 division: LLVM multiplies by an f32 reciprocal, one half ULP off the reference's
                  correctly rounded quotient at times; both are right */
        return expr2(b, k, k->t == T_F16 ? "*" : "/", depth);
      case 11: case 12: {
        static const char *const U[] = {"recip", "sqrt", "exp2", "log2", "sin", "trunc", "neg"};
        const char *u = U[fuzz_rnd(7)];
        /* float16: only the correctly rounded ones (the reference rounds libm's float result to half, the GPU
         * has its own 1-ULP units: both are right, and they may differ by one half ULP) */
        if (k->t == T_F16 && strcmp(u, "sqrt") && strcmp(u, "trunc") && strcmp(u, "neg")) u = "neg";
        fuzz_put(b, "(%s ", u);
        expr(b, k, depth - 1);
        fuzz_put(b, ")");
        return;
      }
      case 13: /* a precision-sensitive cast */
        fuzz_put(b, "(cast %s (cast %s ", T, k->t == T_F32 ? "float64" : k->t == T_F16 ? (fuzz_rnd(2) ? "float32" : "float64") : "float32");
        expr(b, k, depth - 1);
        fuzz_put(b, "))");
        return;
      default: return expr2(b, k, c == 14 ? "*" : "+", depth);
    }
  }
  switch (c) {
    case 10: case 11:
      /* division by a positive odd divisor (1..7): defined for every dividend. The dividend always includes a
       * load: llc-19 miscompiles `udiv i32 -1, ((x & 7) | 1)` for gfx1100 (a 24-bit float division whose result
       * it masks with 7), which the interpreter reproduces faithfully and the reference does not. */
      fuzz_put(b, "(%s (^ ", c == 10 ? "//" : "%");
      load(b, k);
      fuzz_put(b, " ");
      expr(b, k, depth - 1);
      fuzz_put(b, ")");
      fuzz_put(b, " (| (& ");
      expr(b, k, depth - 1);
      fuzz_put(b, " (const 7 %s)) (const 1 %s)))", T, T);
      return;
    case 12: return expr2(b, k, (const char *[]){"&", "|", "^"}[fuzz_rnd(3)], depth);
    case 13: case 14:
      fuzz_put(b, "(%s ", c == 13 ? "<<" : ">>");
      expr(b, k, depth - 1);
      fuzz_put(b, " (& ");
      expr(b, k, depth - 1);
      fuzz_put(b, " (const 15 %s)))", T);
      return;
    default: fuzz_put(b, "(neg "); expr(b, k, depth - 1); fuzz_put(b, ")"); return;
  }
}

static const int64_t SIZES[] = {1, 3, 4, 7, 16, 32, 33, 64};

static void gen(fuzz_text *b, kspec *k) {
  memset(k, 0, sizeof *k);
  k->t = (int)fuzz_rnd(9);
  k->nbufs = 1 + (int)fuzz_rnd(3);
  k->n0 = SIZES[1 + fuzz_rnd(7)];
  k->n1 = fuzz_rnd(2) ? SIZES[fuzz_rnd(8)] : 1;
  k->nr = fuzz_rnd(3) == 0 ? SIZES[2 + fuzz_rnd(6)] : 0;
  /* float add reduces depend on the order: keep their values benign (the inputs, exact small constants) */
  k->wild = !(k->nr && is_f(k)) && fuzz_rnd(2);
  int64_t out = k->n0 * k->n1, in = out * (k->nr ? k->nr : 1);
  if (k->n1 == 1 && !k->nr) in = k->n0;
  fuzz_put(b, "(kernel fz (let out (buf 0 %s %lld)) ", TN[k->t], (long long)out);
  for (int j = 1; j <= k->nbufs; j++) fuzz_put(b, "(let in%d (buf %d %s %lld)) ", j, j, TN[k->t], (long long)in);
  fuzz_put(b, "(let r0 (range 0 %lld loop)) (let r1 (range 1 %lld loop)) ", (long long)k->n0, (long long)k->n1);
  if (k->nr) fuzz_put(b, "(let rr (range 2 %lld reduce)) ", (long long)k->nr);
  fuzz_put(b, "(sink (store (index out (+ (* r0 %lld) r1)) ", (long long)k->n1);
  if (k->nr) {
    fuzz_put(b, "(reduce %s ", is_f(k) && fuzz_rnd(2) ? "add" : (fuzz_rnd(2) ? "max" : "add"));
    expr(b, k, 2);
    fuzz_put(b, " rr)");
  } else {
    expr(b, k, 3);
  }
  fuzz_put(b, " r0 r1)))");
}

#endif
