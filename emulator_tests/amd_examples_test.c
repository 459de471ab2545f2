/* Every example kernel (the .uop files in examples/), without opts and with the heuristic, on `amd:0` of the AMD mock through
 * the public runtime API (hcq_rt_*: compile for amdgpu:gfx1100, program_load of the HSACO, PM4 dispatch, the
 * mock's command processor, the RDNA3 interpreter), compared with the reference interpreter. Kernels whose buffers
 * exceed 2 MiB are not run; unoptimized kernels over 2^22 wave-instructions are stopped by the mock's budget. */
#include "emulator_tests/amd_rt_test_util.h"

#define RUN_LIMIT_B ((size_t)2 << 20)
#define NOOPT_BUDGET ((uint64_t)1 << 22)

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *s = malloc(1 << 20);
  size_t n = s ? fread(s, 1, (1 << 20) - 1, f) : 0;
  fclose(f);
  if (s) s[n] = 0;
  return s;
}

int main(void) {
  if (!tu_have("clang-19") || !tu_have("ld.lld-19")) {
    fprintf(stderr, "SKIP: clang-19 or ld.lld-19 missing\n");
    return 77;
  }
  CHECK_OK(amd_mock_install(kif_default()));
  amd_mock_exec *x;
  amd_mock_installed(&x);
  hcq_rt_device *dev;
  CHECK_OK(hcq_rt_open("amd:0", &dev));
  char *names[ETU_MAX_EXAMPLES];
  int count = etu_list_examples(names, ETU_MAX_EXAMPLES), ran = 0;
  CHECK(count >= 10);
  for (int i = 0; i < count; i++) {
    char path[512];
    snprintf(path, sizeof path, "examples/%s", names[i]);
    char *text = read_text(path);
    CHECK(text != NULL);
    for (int noopt = 1; text && noopt >= 0; noopt--) {
      uop_ctx *ctx = NULL;
      CHECK_OK(uop_ctx_create(&ctx));
      const uop *sink = NULL;
      CHECK_OK(cc_kernel_parse_file(ctx, path, &sink));
      char what[600];
      snprintf(what, sizeof what, "%s (%s)", path, noopt ? "noopt" : "opts");
      amd_mock_exec_set_budget(x, noopt ? NOOPT_BUDGET : 0);
      etu_run r = {0};
      art_result res = sink ? art_run(dev, ctx, sink, text, noopt ? "" : NULL, RUN_LIMIT_B, what, &r) : ART_FAILED;
      if (res == ART_OK) ran++;
      if (res == ART_SKIPPED_BUDGET) { /* the queue stopped: reopen */
        hcq_rt_close(dev);
        CHECK_OK(hcq_rt_open("amd:0", &dev));
      }
      printf("%-40s %s: %zu elements compared, %zu mismatches, max abs float error %.3g\n", what,
             res == ART_OK ? "ok" : res == ART_SKIPPED_SIZE ? "not run (buffers > 2 MiB)"
                                  : res == ART_SKIPPED_BUDGET ? "stopped by the budget" : "FAILED",
             r.checked, r.bad, r.worst);
      CHECK(res != ART_FAILED && res != ART_REFUSED);
      uop_ctx_destroy(ctx);
    }
    free(text);
    free(names[i]);
  }
  CHECK(ran >= 10);
  amd_mock_exec_stats s;
  amd_mock_exec_stats_get(x, &s);
  printf("amd mock: %llu dispatches, %llu decodes, %llu lane-instructions in %.3f s = %.1f M lane-instructions/s\n",
         (unsigned long long)s.dispatches, (unsigned long long)s.decodes, (unsigned long long)s.lane_insts,
         s.exec_ns * 1e-9, s.exec_ns ? s.lane_insts / (s.exec_ns * 1e-9) / 1e6 : 0.0);
  hcq_rt_close(dev);
  amd_mock_uninstall();
  return testing_summary("amd_examples");
}
