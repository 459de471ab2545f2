/* Differential fuzzer of the NV driver path (model: ptx_fuzz_test.c, which covers the PTX renderer's dtypes and
 * operations; this one varies what the driver and the mock's QMD path carry): random kernels over 1-5 buffers of
 * float32 or int32, one or two loop dims whose first size may be a variable (launch sizes from hcq_expr_eval), an
 * optional add/max reduce, with random opts (LOCAL/GROUP/GROUPTOP/UPCAST/UNROLL: blocks of many threads, shared
 * memory through the QMD), the heuristic or none; each compiled for nv:0's target, loaded through nv_cubin
 * (.nv.info parameter offsets), launched through hcq_rt_launch (constant bank 0, QMD grid/block) and compared
 * with the reference interpreter (etu_compare). Seed: HCQ_FUZZ_SEED (default fixed, printed); budget:
 * HCQ_FUZZ_SECONDS (default 3). Needs ptxas (skips without). */
#include "emulator_tests/nv_test_64bit.h"

#include "compiler/toolchain.h"
#include "emulator_tests/nv_test_util.h"
#include "base/fuzz.h"
#include "compiler/kernel_gen_test_util.h"

typedef struct kshape {
  int nloop, nred, nin;
  int64_t size[3];
  bool fl;
} kshape;

static void value(fuzz_text *b, const kshape *k, int depth) {
  const char *dt = k->fl ? "float32" : "int32";
  uint32_t c = depth <= 0 ? fuzz_rnd(3) : fuzz_rnd(8);
  if (c <= 1) {
    fuzz_put(b, "(load (index in%d ", (int)fuzz_rnd((uint32_t)k->nin));
    kg_put_index(b, k->size, NULL, k->nloop + k->nred);
    fuzz_put(b, "))");
  } else if (c == 2) {
    /* one format per dtype (the arguments once shared a format picked at run time); the draws stay in the order
     * the fixed seed's kernels were made with */
    int iv = (int)fuzz_rnd(9) - 4;
    if (k->fl) fuzz_put(b, "(const %.2f float32)", (double)((int)fuzz_rnd(9) - 4) / 4);
    else fuzz_put(b, "(const %d int32)", iv);
  } else if (c == 6) {
    fuzz_put(b, "(where (< ");
    value(b, k, depth - 1);
    fuzz_put(b, " ");
    value(b, k, depth - 1);
    fuzz_put(b, ") ");
    value(b, k, depth - 1);
    fuzz_put(b, " ");
    value(b, k, depth - 1);
    fuzz_put(b, ")");
  } else {
    static const char *const OPS[] = {"+", "-", "*", "max", "+"};
    fuzz_put(b, "(%s ", OPS[fuzz_rnd(5)]);
    value(b, k, depth - 1);
    fuzz_put(b, " ");
    value(b, k, depth - 1);
    fuzz_put(b, ")");
  }
  (void)dt;
}

/* A random value plus every input buffer once (the compiler refuses kernels with unused buffer slots). */
static void value_all(fuzz_text *b, const kshape *k, int depth) {
  static const char *const OPS[] = {"+", "max", "-"};
  for (int j = 0; j < k->nin; j++) fuzz_put(b, "(%s ", OPS[fuzz_rnd(3)]);
  value(b, k, depth);
  for (int j = 0; j < k->nin; j++) {
    fuzz_put(b, " (load (index in%d ", j);
    kg_put_index(b, k->size, NULL, k->nloop + k->nred);
    fuzz_put(b, ")))");
  }
}

static const int64_t SIZES[] = {1, 2, 3, 4, 7, 8, 16, 32, 33, 64, 100};

/* A kernel; *var: its first loop's size is the variable n (range 1..size[0]). */
static void gen(fuzz_text *b, kshape *k, bool *var) {
  memset(k, 0, sizeof *k);
  k->fl = fuzz_rnd(2);
  k->nloop = 1 + (int)fuzz_rnd(2);
  k->nred = fuzz_rnd(3) == 0;
  k->nin = 1 + (int)fuzz_rnd(4);
  int64_t total = 1;
  for (int i = 0; i < k->nloop + k->nred; i++) {
    k->size[i] = SIZES[fuzz_rnd(sizeof SIZES / sizeof SIZES[0])];
    if (total * k->size[i] > 8192) k->size[i] = 2;
    total *= k->size[i];
  }
  *var = k->size[0] > 1 && fuzz_rnd(3) == 0;
  int64_t out_n = 1;
  for (int i = 0; i < k->nloop; i++) out_n *= k->size[i];
  const char *dt = k->fl ? "float32" : "int32";
  fuzz_put(b, "(kernel fz (let out (buf 0 %s %lld)) ", dt, (long long)out_n);
  for (int j = 0; j < k->nin; j++) fuzz_put(b, "(let in%d (buf %d %s %lld)) ", j, j + 1, dt, (long long)total);
  if (*var) fuzz_put(b, "(let n (var n 1 %lld index)) ", (long long)k->size[0]);
  for (int i = 0; i < k->nloop + k->nred; i++) {
    if (i == 0 && *var) fuzz_put(b, "(let r0 (range 0 n loop)) ");
    else fuzz_put(b, "(let r%d (range %d %lld %s)) ", i, i < k->nloop ? i : 1000 + i, (long long)k->size[i],
             i < k->nloop ? "loop" : "reduce");
  }
  fuzz_put(b, "(sink (store (index out ");
  kg_put_index(b, k->size, NULL, k->nloop);
  fuzz_put(b, ") ");
  if (k->nred) {
    fuzz_put(b, "(reduce %s ", fuzz_rnd(3) == 0 ? "max" : "add");
    value_all(b, k, 2);
    fuzz_put(b, " r%d)", k->nloop);
  } else {
    value_all(b, k, 3);
  }
  for (int i = 0; i < k->nloop; i++) fuzz_put(b, " r%d", i);
  fuzz_put(b, ")))");
}

int main(void) {
  NV_TEST_NEEDS_64BIT("nv_fuzz_test");
  char ptxas[512];
  hcq_status st = cc_ptx_ptxas(ptxas, sizeof ptxas);
  if (st) {
    hcq_status_free(st);
    TEST_SKIP("needs ptxas (CUDA toolkit at /usr/local/cuda)");
  }
  fuzz_rng = fuzz_seed("nv_fuzz", 0x6e7666757a7aull);
  ntu_env e;
  ntu_open(&e, &(nv_mock_config){.arch = NV_MOCK_HOPPER});
  double budget = fuzz_seconds(3.0, NULL), t0 = fuzz_now_s();
  int cases = 0, opted = 0;
  while (e.dev && fuzz_now_s() - t0 < budget && testing_failures == 0) {
    static fuzz_text b;
    b.n = 0;
    kshape k;
    bool var;
    gen(&b, &k, &var);
    char opts[96] = "";
    const char *use = fuzz_rnd(3) == 0 ? "" : NULL;
    if (fuzz_rnd(2)) { /* explicit opts (amounts that divide the axis) when they apply, else the heuristic */
      static const char *const OPS[] = {"LOCAL", "UPCAST", "UNROLL", "LOCAL", "GROUP", "GROUPTOP"};
      size_t n = 0;
      for (int i = 0, m = 1 + (int)fuzz_rnd(2); i < m; i++) {
        int op = (int)fuzz_rnd(k.nred ? 6 : 4), ax = op >= 4 ? 0 : (int)fuzz_rnd((uint32_t)k.nloop);
        int64_t size = op >= 4 ? k.size[k.nloop] : k.size[ax], amt = 2;
        for (int64_t a = 32; a >= 2; a /= 2)
          if (size % a == 0 && fuzz_rnd(2)) amt = a;
        n += (size_t)snprintf(opts + n, sizeof opts - n, "%s%s:%d:%lld", i ? "," : "", OPS[op], ax, (long long)amt);
      }
      hcq_rt_program *p = NULL;
      st = hcq_rt_program_compile(e.dev, b.s, opts, &p);
      use = st ? NULL : opts;
      opted += !st;
      hcq_status_free(st);
      hcq_rt_program_free(p);
    }
    int before = testing_failures;
    ntu_run_text(e.dev, b.s, use, 64u << 20, "fuzz");
    if (testing_failures != before) fprintf(stderr, "kernel (opts %s):\n%s\n", use ? (*use ? use : "none") : "heuristic", b.s);
    cases++;
  }
  printf("nv driver fuzz: %d kernels (%d with explicit opts) through nv:0 matched the reference interpreter\n", cases,
         opted);
  CHECK(cases > 0);
  ntu_close(&e);
  return testing_summary("emulator_tests/nv_fuzz_test");
}
