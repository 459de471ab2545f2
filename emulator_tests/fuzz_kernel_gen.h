/* The random kernel generator of the differential GPU fuzzers (header-only, for *_test.c): kg_gen writes one
 * random kernel's text into a fuzz_text, drawing from base/fuzz.h's generator (seed fuzz_rng). A kernel: one dtype,
 * elementwise over 1-2 loop ranges or a reduce add/max over one more; loads of 3 buffers of that dtype and of a 4th
 * buffer of another dtype (read through a cast), gated loads and stores; + - * max neg, comparisons into where
 * (sometimes of an expression with itself: (!= x x) stays true for NaN), mulacc, casts through the other dtype,
 * / recip sqrt trunc exp2 log2 sin on floats, & | ^ << >> // % on integers; constants over the whole dtype when
 * kg_spec.wild. What a target cannot run as the reference does is left out by its profile (kg_profile):
 *   KG_PTX    (ptx_fuzz_test.c): every dtype the PTX renderer keeps in registers, bool as a dtype to cast through;
 *   KG_RDNA3  (rdna3_fuzz_test.c, amd_fuzz_test.c; the LLVM amdgpu path): also transposed and broadcast loads, only
 *             the buffers used declared (in slots 1..: the runtime refuses gaps); no bfloat16, int64 or bool; casts only
 *             between floats or between integers (LLVM's fptosi/fptoui of an out-of-range value is poison); float16
 *             without division, recip and the transcendentals (the reference rounds a correctly rounded result to
 *             half, the GPU's 1-ULP units may differ by one half ULP). */
#ifndef HCQ_EMU_FUZZ_KERNEL_GEN_H
#define HCQ_EMU_FUZZ_KERNEL_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/fuzz.h"
#include "compiler/kernel_gen_test_util.h"

/* dtype numbers: indices into KG_DTYPES */
static const char *const KG_DTYPES[] = {"float16", "bfloat16", "float32", "float64", "int8",   "uint8",
                                        "int16",   "int32",    "uint32",  "int64",   "uint16", "bool"};
enum { KG_F16 = 0, KG_BF16 = 1, KG_BOOL = 11 };
static inline bool kg_is_float(int dt) { return dt < 4; }

typedef struct kg_profile {
  const int *dts;        /* the kernel's dtype is drawn from these */
  uint32_t ndts;
  const int *others_f;   /* the other dtype of a float kernel (NULL: others_i for every kernel) */
  const int *others_i;   /* the other dtype of an integer kernel */
  uint32_t nothers_f, nothers_i;
  bool half_exact;       /* float16: only correctly rounded operations */
  bool dense_slots;      /* declare only the buffers the kernel reads, in slots 1.. (a runtime that loads the
                            compiled program refuses gaps) */
  bool permuted_loads;   /* over two loop ranges, loads also index transposed (r1 major) or broadcast (r0 only) */
} kg_profile;

static const int KG_PTX_DTS[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, KG_PTX_OTHERS[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
static const kg_profile KG_PTX = {KG_PTX_DTS, 11, NULL, KG_PTX_OTHERS, 0, 12, false, false, false};
static const int KG_RDNA3_DTS[] = {0, 2, 3, 4, 5, 6, 7, 8, 10}, KG_RDNA3_OTHERS_F[] = {0, 2, 3},
                 KG_RDNA3_OTHERS_I[] = {4, 5, 6, 7, 8, 10};
static const kg_profile KG_RDNA3 = {KG_RDNA3_DTS, 9, KG_RDNA3_OTHERS_F, KG_RDNA3_OTHERS_I, 3, 6, true, true, true};

typedef struct kg_spec {
  const kg_profile *prof;
  int dt, other;          /* the kernel's dtype, and the dtype of buffer 3 (read through a cast) */
  int nloop, nred;
  int64_t size[3];
  bool wild;              /* full-range constants (and, for the caller, inputs) */
  bool transcendental;    /* uses exp2/log2/sin */
  unsigned used;          /* bit j: buffer in<j> is read */
} kg_spec;

static void kg_konst(fuzz_text *b, const kg_spec *k, int dt) {
  if (kg_is_float(dt)) {
    static const char *const WILD[] = {"-0.0", "inf", "-inf", "nan", "65504.0", "1e-7", "3e38", "0.1"};
    const char *w = WILD[fuzz_rnd(8)];
    if (dt == KG_F16 && !strcmp(w, "3e38")) w = "65504.0"; /* beyond float16: the parser refuses it */
    if (k->wild && fuzz_rnd(3) == 0) fuzz_put(b, "(const %s %s)", w, KG_DTYPES[dt]);
    else fuzz_put(b, "(const %.3f %s)", (double)((int)fuzz_rnd(17) - 8) / 4.0, KG_DTYPES[dt]);
  } else if (dt == KG_BOOL) {
    fuzz_put(b, "(const %s bool)", fuzz_rnd(2) ? "true" : "false");
  } else {
    static const char *const WILD[] = {"-1", "127", "-128", "255", "32767", "2147483647", "-2147483648"};
    if (k->wild && fuzz_rnd(3) == 0) {
      const char *w = WILD[fuzz_rnd(7)];
      long long v = atoll(w);
      int bits = dt == 4 || dt == 5 ? 8 : dt == 6 || dt == 10 ? 16 : dt == 9 ? 64 : 32;
      bool uns = dt == 5 || dt == 8 || dt == 10;
      long long lo = uns ? 0 : bits == 64 ? INT64_MIN : -(1LL << (bits - 1));
      long long hi = bits == 64 ? INT64_MAX : uns ? (1LL << bits) - 1 : (1LL << (bits - 1)) - 1;
      if (v < lo || v > hi) v = 3;
      fuzz_put(b, "(const %lld %s)", v, KG_DTYPES[dt]);
    } else {
      fuzz_put(b, "(const %d %s)", (int)fuzz_rnd(9) - (dt == 5 || dt == 8 || dt == 10 ? 0 : 4), KG_DTYPES[dt]);
    }
  }
}

static void kg_load(fuzz_text *b, kg_spec *k, int buf, bool in_red) {
  k->used |= 1u << buf;
  int d = k->nloop > 0 ? (int)fuzz_rnd((uint32_t)k->nloop) : -1;
  bool gated = d >= 0 && k->size[d] > 1 && fuzz_rnd(5) == 0;
  fuzz_put(b, "(load (index in%d ", buf);
  int n = k->nloop + (in_red ? k->nred : 0), mode = k->prof->permuted_loads && k->nloop == 2 ? (int)fuzz_rnd(3) : 0;
  if (mode == 1) kg_put_index(b, k->size, (const int[]){1, 0, 2}, n);          /* transposed */
  else if (mode == 2) kg_put_index(b, k->size, (const int[]){0, 2}, n - 1);   /* broadcast over r1 */
  else kg_put_index(b, k->size, NULL, n);
  if (gated) {
    fuzz_put(b, " (< r%d %lld))", d, (long long)(1 + fuzz_rnd((uint32_t)k->size[d] - 1)));
    fuzz_put(b, " ");
    kg_konst(b, k, buf == 3 ? k->other : k->dt);
    fuzz_put(b, ")");
  } else {
    fuzz_put(b, "))");
  }
}

/* A value of the kernel's dtype. */
static void kg_expr(fuzz_text *b, kg_spec *k, int depth, bool in_red) {
  int dt = k->dt;
  bool fl = kg_is_float(dt), half = k->prof->half_exact && dt == KG_F16;
  uint32_t c = depth <= 0 ? fuzz_rnd(3) : fuzz_rnd(16);
  switch (c) {
    case 0: case 1: kg_load(b, k, (int)fuzz_rnd(3), in_red); return;
    case 2: kg_konst(b, k, dt); return;
    case 3: /* through the other dtype: a load of buffer 3 cast to ours, or our value cast there and back */
      if (fuzz_rnd(2)) {
        fuzz_put(b, "(cast %s ", KG_DTYPES[dt]);
        kg_load(b, k, 3, in_red);
        fuzz_put(b, ")");
      } else {
        fuzz_put(b, "(cast %s (cast %s ", KG_DTYPES[dt], KG_DTYPES[k->other]);
        kg_expr(b, k, depth - 1, in_red);
        fuzz_put(b, "))");
      }
      return;
    case 4: fuzz_put(b, "(neg "); kg_expr(b, k, depth - 1, in_red); fuzz_put(b, ")"); return;
    case 5: case 6: {
      static const char *const CMP[] = {"<", "!=", "=="};
      fuzz_text *l = malloc(sizeof *l), *r = malloc(sizeof *r);
      l->n = r->n = 0;
      kg_expr(l, k, depth - 1, in_red);
      if (fuzz_rnd(4) == 0) *r = *l;
      else kg_expr(r, k, depth - 1, in_red);
      fuzz_put(b, "(where (%s %s %s) ", CMP[fuzz_rnd(3)], l->s, r->s);
      free(l);
      free(r);
      break;
    }
    case 7:
      fuzz_put(b, "(mulacc ");
      kg_expr(b, k, depth - 1, in_red);
      fuzz_put(b, " ");
      break;
    case 8:
      if (fl) {
        static const char *const UN[] = {"recip", "sqrt", "trunc", "exp2", "log2", "sin"};
        int u = (int)fuzz_rnd(k->wild ? 3 : 6);
        if (half && u != 1 && u != 2) { /* float16: sqrt and trunc only */
          fuzz_put(b, "(neg ");
        } else {
          if (u >= 3) k->transcendental = true;
          fuzz_put(b, "(%s ", UN[u]);
        }
        kg_expr(b, k, depth - 1, in_red);
        fuzz_put(b, ")");
      } else { /* a divisor in 1..8 */
        fuzz_put(b, "(%s ", fuzz_rnd(2) ? "//" : "%");
        kg_expr(b, k, depth - 1, in_red);
        fuzz_put(b, " (+ (& ");
        kg_expr(b, k, depth - 1, in_red);
        fuzz_put(b, " (const 7 %s)) (const 1 %s)))", KG_DTYPES[dt], KG_DTYPES[dt]);
      }
      return;
    default: {
      static const char *const FOPS[] = {"+", "-", "*", "max", "/", "+", "*"};
      static const char *const IOPS[] = {"+", "-", "*", "max", "&", "|", "^", "<<", ">>"};
      const char *op = fl ? FOPS[fuzz_rnd(7)] : IOPS[fuzz_rnd(9)];
      fuzz_put(b, "(%s ", half && !strcmp(op, "/") ? "*" : op);
      break;
    }
  }
  kg_expr(b, k, depth - 1, in_red);
  fuzz_put(b, " ");
  kg_expr(b, k, depth - 1, in_red);
  fuzz_put(b, ")");
}

static const int64_t KG_SIZES[] = {1, 2, 3, 4, 5, 7, 8, 16, 24, 32, 33, 64, 100};

static void kg_gen(fuzz_text *b, kg_spec *k, const kg_profile *prof) {
  memset(k, 0, sizeof *k);
  k->prof = prof;
  k->dt = prof->dts[fuzz_rnd(prof->ndts)];
  bool other_f = prof->others_f && kg_is_float(k->dt);
  k->other = other_f ? prof->others_f[fuzz_rnd(prof->nothers_f)] : prof->others_i[fuzz_rnd(prof->nothers_i)];
  k->nloop = 1 + (int)fuzz_rnd(2);
  /* no float16/bfloat16 sums: f16 rounding per step */
  k->nred = fuzz_rnd(3) == 0 && k->dt != KG_F16 && k->dt != KG_BF16 ? 1 : 0;
  int64_t total = 1;
  for (int i = 0; i < k->nloop + k->nred; i++) {
    k->size[i] = KG_SIZES[fuzz_rnd(sizeof KG_SIZES / sizeof KG_SIZES[0])];
    if (total * k->size[i] > 8192) k->size[i] = 2;
    total *= k->size[i];
  }
  k->wild = !k->nred && fuzz_rnd(2);
  int gd = (int)fuzz_rnd((uint32_t)k->nloop);
  int64_t gate = k->size[gd] > 1 && fuzz_rnd(4) == 0 ? 1 + fuzz_rnd((uint32_t)k->size[gd] - 1) : 0;
  bool mx = k->nred && fuzz_rnd(3) == 0;
  fuzz_text *body = malloc(sizeof *body);
  body->n = 0;
  body->s[0] = 0;
  kg_expr(body, k, k->nred ? 2 : 3, k->nred != 0);
  int64_t out_n = 1, in_n = total;
  for (int i = 0; i < k->nloop; i++) out_n *= k->size[i];
  fuzz_put(b, "(kernel fz (let out (buf 0 %s %lld)) ", KG_DTYPES[k->dt], (long long)out_n);
  for (int j = 0, slot = 1; j < 4; j++)
    if (!prof->dense_slots || (k->used >> j & 1))
      fuzz_put(b, "(let in%d (buf %d %s %lld)) ", j, prof->dense_slots ? slot++ : j + 1,
               KG_DTYPES[j == 3 ? k->other : k->dt], (long long)in_n);
  for (int i = 0; i < k->nloop + k->nred; i++)
    fuzz_put(b, "(let r%d (range %d %lld %s)) ", i, i < k->nloop ? i : 1000 + i, (long long)k->size[i],
             i < k->nloop ? "loop" : "reduce");
  fuzz_put(b, "(sink (store (index out ");
  kg_put_index(b, k->size, NULL, k->nloop);
  if (gate) fuzz_put(b, " (< r%d %lld)", gd, (long long)gate);
  fuzz_put(b, ") ");
  if (k->nred) fuzz_put(b, "(reduce %s %s r%d)", mx ? "max" : "add", body->s, k->nloop);
  else fuzz_put(b, "%s", body->s);
  free(body);
  for (int i = 0; i < k->nloop; i++) fuzz_put(b, " r%d", i);
  fuzz_put(b, ")))");
}

#endif
