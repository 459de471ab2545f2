/* Differential fuzzer of the RDNA3 interpreter: random kernels (emulator_tests/fuzz_kernel_gen.h, profile
 * KG_RDNA3: float16/32/64 and 8/16/32-bit integers; elementwise over 1-2 dims or with an add/max reduce; loads from
 * 4 buffers, one of another dtype, gated; + - * max mulacc, float / recip sqrt exp2 log2 sin trunc neg, integer
 * // % & | ^ << >>, compares and where, casts; constants over the whole range: -0, subnormals, +-inf, NaN, huge
 * values, INT_MIN/MAX) compiled for amdgpu:gfx1100 without opts or with the default heuristic
 * (locals, upcasts, group reduces through LDS with barriers), run on the interpreter and compared with the
 * reference interpreter (compiler/interp.c) by the examples' rule (compiler/examples_test_util.h). The first 8
 * kernels of a run and every 8th after are also disassembled with llvm-objdump-19 and compared instruction by instruction with the
 * decoder. Seed: HCQ_FUZZ_SEED (fixed default); budget: HCQ_FUZZ_SECONDS (default 3). */
#include "compiler/examples_test_util.h"
#include "emulator_tests/rdna3_test_util.h"
#include "base/fuzz.h"

#include "emulator_tests/fuzz_kernel_gen.h"

static long g_cases, g_run, g_decoded, g_refused;

static void fuzz_case(const cc_target *t, bool check_decode) {
  fuzz_text b = {0};
  kg_spec k;
  kg_gen(&b, &k, &KG_RDNA3);
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *sink = NULL;
  cc_program *p = NULL;
  cc_kbuf *ref = NULL, *got = NULL;
  size_t nref = 0, ngot = 0;
  bool noopt = fuzz_rnd(2);
  hcq_status st = cc_kernel_parse(ctx, b.s, b.n, "<fuzz>", &sink);
  if (!st) st = cc_compile_source(ctx, sink, t, &(cc_options){.noopt = noopt}, &p);
  if (st) { /* the validator refuses some random kernels (e.g. a provable out-of-bounds gate): not our subject */
    g_refused++;
    hcq_status_free(st);
    goto done;
  }
  st = cc_compile_binary(t, p);
  if (st) {
    fprintf(stderr, "compile failed: %s\nkernel: %s\n", hcq_status_message(st), b.s);
    hcq_status_free(st);
    CHECK(!"compile");
    goto done;
  }
  g_cases++;
  if (check_decode) {
    long n = r3t_objdump_check(p->binary, p->binary_size_B, "fuzz kernel");
    if (n > 0) g_decoded += n;
    if (testing_failures) fprintf(stderr, "kernel: %s\n", b.s);
  }
  CHECK_OK(cc_kernel_buffers(sink, &ref, &nref));
  CHECK_OK(cc_kernel_buffers(sink, &got, &ngot));
  etu_run r;
  etu_reference(ctx, sink, ref, nref, got, ngot, &r);
  st = r3t_run(p, got, ngot, r.vals, r.nvals, (uint64_t)1 << 24, NULL);
  if (st) {
    fprintf(stderr, "rdna3 run failed: %s\nkernel (%s): %s\n", hcq_status_message(st), noopt ? "noopt" : "opts", b.s);
    hcq_status_free(st);
    CHECK(!"run");
    goto done;
  }
  g_run++;
  etu_compare(ref, nref, got, &r);
  if (r.bad) {
    fprintf(stderr, "%zu of %zu elements differ (%s); kernel: %s\n", r.bad, r.checked, noopt ? "noopt" : "opts", b.s);
    for (int64_t e = 0, shown = 0; e < ref[0].nelems && shown < 4; e++) {
      char sx[40], sy[40];
      if (!tu_elem_match(ref[0].data, got[0].data, ref[0].dtype, e, 0, 0))
        fprintf(stderr, "  out[%lld]: reference %s, rdna3 %s\n", (long long)e, tu_elem_str(sx, sizeof sx, ref[0].data, ref[0].dtype, e),
                tu_elem_str(sy, sizeof sy, got[0].data, got[0].dtype, e)), shown++;
    }
  }
  CHECK_EQ_INT(r.bad, 0);
done:
  cc_program_free(p);
  if (ref) cc_kbufs_free(ref, nref);
  if (got) cc_kbufs_free(got, ngot);
  uop_ctx_destroy(ctx);
}

int main(void) {
  if (!tu_have("clang-19") || !tu_have("ld.lld-19") || !tu_have("llvm-objdump-19")) {
    fprintf(stderr, "SKIP: clang-19, ld.lld-19 or llvm-objdump-19 missing\n");
    return 77;
  }
  fuzz_rng = fuzz_seed("rdna3_fuzz", 0x5eed3);
  double budget = fuzz_seconds(3.0, NULL), t0 = fuzz_now_s();
  cc_target t;
  CHECK_OK(cc_target_get("amdgpu:gfx1100", 0, &t));
  for (int i = 0; (i < 4 || fuzz_now_s() - t0 < budget) && !testing_failures; i++) fuzz_case(&t, i < 8 || i % 8 == 0);
  printf("rdna3_fuzz: %ld kernels compiled (%ld refused by the validator), %ld run and matched the reference, %ld "
         "instructions checked against llvm-objdump-19, in %.1f s\n", g_cases, g_refused, g_run, g_decoded, fuzz_now_s() - t0);
  return testing_summary("rdna3_fuzz");
}
