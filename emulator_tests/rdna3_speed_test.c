/* Speed of the RDNA3 interpreter on one core: examples/matmul.uop and examples/softmax.uop compiled for
 * amdgpu:gfx1100 with the default heuristic, each run repeatedly for about 0.5 s of CPU time; prints wave-instructions and
 * lane-instructions (active lanes, EXEC bits, per wave-instruction) per second, and the results must still match the reference
 * interpreter. Nothing is asserted about the speed (sanitizer and emulated builds are slower); the number is
 * what the closing notes report. */
#include <time.h>

#include "compiler/examples_test_util.h"
#include "emulator_tests/rdna3_test_util.h"

/* CPU time of this thread: the machine may be shared, and the figure is per core */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void measure(const cc_target *t, const char *path) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *sink = NULL;
  cc_program *p = NULL;
  cc_kbuf *ref = NULL, *got = NULL;
  size_t nref = 0, ngot = 0;
  CHECK_OK(cc_kernel_parse_file(ctx, path, &sink));
  CHECK_OK(cc_compile_source(ctx, sink, t, &(cc_options){0}, &p));
  if (p) CHECK_OK(cc_compile_binary(t, p));
  CHECK_OK(cc_kernel_buffers(sink, &ref, &nref));
  CHECK_OK(cc_kernel_buffers(sink, &got, &ngot));
  if (!p || !p->binary || !ref || !got) goto done;
  etu_run r;
  etu_reference(ctx, sink, ref, nref, got, ngot, &r);
  rdna3_stats stats = {0};
  int runs = 0;
  double t0 = now_s(), dt;
  do {
    CHECK_OK(r3t_run(p, got, ngot, r.vals, r.nvals, 0, &stats));
    runs++;
    dt = now_s() - t0;
  } while (dt < 0.5 && !testing_failures);
  etu_compare(ref, nref, got, &r);
  CHECK_EQ_INT(r.bad, 0);
  printf("%-24s %d runs: %.2f M wave-instructions/s = %.1f M lane-instructions/s (one core)\n", path, runs,
         stats.wave_insts / dt / 1e6, stats.lane_insts / dt / 1e6);
done:
  cc_program_free(p);
  if (ref) cc_kbufs_free(ref, nref);
  if (got) cc_kbufs_free(got, ngot);
  uop_ctx_destroy(ctx);
}

int main(void) {
  if (!tu_have("clang-19") || !tu_have("ld.lld-19")) {
    fprintf(stderr, "SKIP: clang-19 or ld.lld-19 missing\n");
    return 77;
  }
  cc_target t;
  CHECK_OK(cc_target_get("amdgpu:gfx1100", 0, &t));
  measure(&t, "examples/matmul.uop");
  measure(&t, "examples/softmax.uop");
  return testing_summary("rdna3_speed");
}
