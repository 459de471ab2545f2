/* `make amd-hw-check`: the examples on a real AMD GPU (amd:0 through /dev/kfd, no mock), each compared with the
 * reference interpreter, with its time; then the launch latency and graph replay per kernel. A prepared program
 * for anyone with a gfx1100 (the project validated AMD on the mock only). Not a *_test: make test does not run it.
 * Exits 77 when there is no AMD GPU (the message says why), 1 when a case fails. */
#include <time.h>

#include "emulator_tests/amd_rt_test_util.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *s = calloc(1, 1 << 20);
  if (s) (void)!fread(s, 1, (1 << 20) - 1, f);
  fclose(f);
  return s;
}

int main(void) {
  hcq_rt_device *dev;
  hcq_status st = hcq_rt_open("amd:0", &dev);
  if (st) {
    fprintf(stderr, "amd-hw-check: %s\n", hcq_status_message(st));
    hcq_status_free(st);
    return 77;
  }
  hcq_device_info info;
  CHECK_OK(hcq_rt_info(dev, &info));
  printf("amd-hw-check: %s %s (%s), %llu MiB VRAM%s\n", info.name, info.arch, info.target,
         (unsigned long long)(info.mem_device_B >> 20), info.is_mock ? " [MOCK]" : "");
  char *names[ETU_MAX_EXAMPLES];
  int count = etu_list_examples(names, ETU_MAX_EXAMPLES), failed = 0;
  for (int i = 0; i < count; i++) {
    char path[512];
    snprintf(path, sizeof path, "examples/%s", names[i]);
    char *text = read_text(path);
    for (int noopt = 1; text && noopt >= 0; noopt--) {
      uop_ctx *ctx = NULL;
      CHECK_OK(uop_ctx_create(&ctx));
      const uop *sink = NULL;
      CHECK_OK(cc_kernel_parse_file(ctx, path, &sink));
      char what[600];
      snprintf(what, sizeof what, "%s (%s)", path, noopt ? "noopt" : "opts");
      etu_run r = {0};
      double t0 = now_s();
      art_result res = sink ? art_run(dev, ctx, sink, text, noopt ? "" : NULL, (size_t)1 << 31, what, &r) : ART_FAILED;
      failed += res != ART_OK;
      printf("%-40s %s  %8.1f ms  (%zu elements, %zu mismatches)\n", what, res == ART_OK ? "pass" : "FAIL",
             (now_s() - t0) * 1e3, r.checked, r.bad);
      uop_ctx_destroy(ctx);
      if (res != ART_OK) { /* the queue may be stopped: reopen */
        hcq_rt_close(dev);
        CHECK_OK(hcq_rt_open("amd:0", &dev));
      }
    }
    free(text);
    free(names[i]);
  }
  /* launch latency: one small kernel, launch + sync, wall time */
  static const char *tiny = "(kernel tiny (let o (buf 0 int32 32)) (let r (range 0 32 loop))\n"
                            " (sink (store (index o r) (cast int32 r) r)))\n";
  hcq_rt_program *p;
  hcq_rt_kernel *k;
  hcq_rt_buffer *b;
  CHECK_OK(hcq_rt_program_compile(dev, tiny, NULL, &p));
  CHECK_OK(hcq_rt_kernel_load(dev, hcq_rt_program_desc(p), &k));
  CHECK_OK(hcq_rt_buffer_alloc(dev, 128, HCQ_RT_MEM_HOST_VISIBLE, &b));
  double t0 = now_s();
  enum { N = 1000 };
  for (int i = 0; i < N && k; i++) {
    CHECK_OK(hcq_rt_launch(k, &b, 1, NULL, 0));
    CHECK_OK(hcq_rt_sync(dev, 5000));
  }
  printf("launch + sync latency: %.2f us (mean of %d)\n", (now_s() - t0) / N * 1e6, N);
  t0 = now_s();
  for (int i = 0; i < N && k; i++) CHECK_OK(hcq_rt_launch(k, &b, 1, NULL, 0));
  CHECK_OK(hcq_rt_sync(dev, 5000));
  printf("back-to-back launches: %.2f us per kernel (graph replay: bench/amd_mock_bench's graph on hardware is "
         "the same code path)\n", (now_s() - t0) / N * 1e6);
  hcq_rt_buffer_free(b);
  hcq_rt_kernel_free(k);
  hcq_rt_program_free(p);
  hcq_rt_close(dev);
  printf("amd-hw-check: %d case(s) failed\n", failed);
  return failed || testing_failures ? 1 : 0;
}
