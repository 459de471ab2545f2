/* Differential fuzzer of the AMD path end to end: random kernels (emulator_tests/fuzz_kernel_gen.h, profile KG_RDNA3) compiled for
 * amd:0 of the AMD mock without opts or with the heuristic, loaded through program_load (HSACO), launched with
 * hcq_rt_launch (PM4 into the ring, the mock's command processor, the RDNA3 interpreter on the mock's checked
 * memory) and compared with the reference interpreter (compiler/examples_test_util.h's rule). Seed: HCQ_FUZZ_SEED
 * (fixed default); budget: HCQ_FUZZ_SECONDS (default 3). */
#include "emulator_tests/amd_rt_test_util.h"
#include "base/fuzz.h"
#include "emulator_tests/fuzz_kernel_gen.h"

static long g_run, g_refused, g_stopped;

static void fuzz_case(hcq_rt_device **dev, const cc_target *t) {
  fuzz_text b = {0};
  kg_spec k;
  kg_gen(&b, &k, &KG_RDNA3);
  bool noopt = fuzz_rnd(2);
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *sink = NULL;
  cc_program *p = NULL;
  hcq_status st = cc_kernel_parse(ctx, b.s, b.n, "<fuzz>", &sink);
  if (!st) st = cc_compile_source(ctx, sink, t, &(cc_options){.noopt = noopt}, &p);
  cc_program_free(p);
  if (st) { /* the validator refuses some random kernels: not our subject */
    g_refused++;
    hcq_status_free(st);
    uop_ctx_destroy(ctx);
    return;
  }
  etu_run r = {0};
  art_result res = art_run(*dev, ctx, sink, b.s, noopt ? "" : NULL, (size_t)8 << 20, "fuzz kernel", &r);
  if (res == ART_OK) g_run++;
  if (res == ART_REFUSED) g_refused++; /* e.g. an unused buffer slot: "buffer slots are not 0..N" */
  if (res == ART_SKIPPED_BUDGET) {
    g_stopped++;
    hcq_rt_close(*dev);
    CHECK_OK(hcq_rt_open("amd:0", dev));
  }
  if (res == ART_FAILED)
    fprintf(stderr, "%zu of %zu elements differ or the run failed (%s); kernel: %s\n", r.bad, r.checked,
            noopt ? "noopt" : "opts", b.s);
  CHECK(res != ART_FAILED);
  uop_ctx_destroy(ctx);
}

int main(void) {
  if (!tu_have("clang-19") || !tu_have("ld.lld-19")) {
    fprintf(stderr, "SKIP: clang-19 or ld.lld-19 missing\n");
    return 77;
  }
  fuzz_rng = fuzz_seed("amd_fuzz", 0xa3d11);
  double budget = fuzz_seconds(3.0, NULL), t0 = fuzz_now_s();
  cc_target t;
  CHECK_OK(cc_target_get("amdgpu:gfx1100", 0, &t));
  CHECK_OK(amd_mock_install(kif_default()));
  amd_mock_exec *x;
  amd_mock_installed(&x);
  amd_mock_exec_set_budget(x, (uint64_t)1 << 24);
  hcq_rt_device *dev;
  CHECK_OK(hcq_rt_open("amd:0", &dev));
  for (int i = 0; (i < 4 || fuzz_now_s() - t0 < budget) && !testing_failures; i++) fuzz_case(&dev, &t);
  printf("amd_fuzz: %ld kernels matched the reference on amd:0 (mock), %ld refused by the validator or the runtime, %ld stopped by "
         "the budget, in %.1f s\n", g_run, g_refused, g_stopped, fuzz_now_s() - t0);
  hcq_rt_close(dev);
  amd_mock_uninstall();
  return testing_summary("amd_fuzz");
}
