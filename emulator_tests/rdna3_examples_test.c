/* Every example kernel (the .uop files in examples/) compiled for amdgpu:gfx1100 (without opts and with the default
 * heuristic), its decoded instructions checked against llvm-objdump-19, and run on the RDNA3 interpreter on
 * deterministically filled buffers, compared with the reference interpreter (compiler/interp.c) by the examples'
 * rule (compiler/examples_test_util.h). Kernels whose buffers exceed 2 MiB are compiled and decoded but not run,
 * and unoptimized kernels that need over 2^22 wave-instructions are stopped (to keep the test within seconds).
 * Also measures the interpreter's speed (lane-instructions per second) over the runs. */
#include <time.h>

#include "compiler/examples_test_util.h"
#include "emulator_tests/rdna3_test_util.h"

#define RUN_LIMIT_B ((size_t)2 << 20)
#define NOOPT_BUDGET ((uint64_t)1 << 22) /* wave-instructions for an unoptimized kernel (serial loops) */

static uint64_t g_lane_insts;
static double g_run_s;
static long g_decoded;

static double now_s(void) { /* CPU time of this thread (the machine may be shared) */
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void run_example(const cc_target *t, const char *path, bool noopt) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *sink = NULL;
  cc_program *p = NULL;
  cc_kbuf *ref = NULL, *got = NULL;
  size_t nref = 0, ngot = 0;
  char what[600];
  snprintf(what, sizeof what, "%s (%s)", path, noopt ? "noopt" : "opts");
  hcq_status st = cc_kernel_parse_file(ctx, path, &sink);
  if (!st) st = cc_compile_source(ctx, sink, t, &(cc_options){.noopt = noopt}, &p);
  if (!st) st = cc_compile_binary(t, p);
  if (st) {
    fprintf(stderr, "%s: %s\n", what, hcq_status_message(st));
    hcq_status_free(st);
    CHECK(!"compile");
    goto done;
  }
  long n = r3t_objdump_check(p->binary, p->binary_size_B, what);
  if (n > 0) g_decoded += n;
  st = cc_kernel_buffers(sink, &ref, &nref);
  if (st && sizeof(size_t) == 4 && strstr(hcq_status_message(st), "too large")) {
    /* 32-bit hosts: buffers beyond the address space (examples/big_int64.uop) cannot even be sized */
    printf("%-36s %ld instructions decoded, not run (buffers exceed the 32-bit address space)\n", what, n);
    hcq_status_free(st);
    goto done;
  }
  CHECK_OK(st);
  CHECK_OK(cc_kernel_buffers(sink, &got, &ngot));
  if (!ref || !got) goto done;
  size_t total = 0;
  for (size_t i = 0; i < nref; i++) total += ref[i].size_B;
  if (total > RUN_LIMIT_B) {
    printf("%-36s %ld instructions decoded, not run (%zu MiB of buffers)\n", what, n, total >> 20);
    goto done;
  }
  etu_run r;
  etu_reference(ctx, sink, ref, nref, got, ngot, &r);
  rdna3_stats stats = {0};
  double t0 = now_s();
  st = r3t_run(p, got, ngot, r.vals, r.nvals, noopt ? NOOPT_BUDGET : 0, &stats);
  double dt = now_s() - t0;
  if (st && noopt && hcq_status_code(st) == HCQ_CODE_TIMEOUT) {
    printf("%-36s %ld instructions decoded; not run to the end (over %llu wave-instructions)\n", what, n,
           (unsigned long long)NOOPT_BUDGET);
    hcq_status_free(st);
    goto done;
  }
  if (st) {
    fprintf(stderr, "%s: %s\n", what, hcq_status_message(st));
    hcq_status_free(st);
    CHECK(!"run on the RDNA3 interpreter");
    goto done;
  }
  g_lane_insts += stats.lane_insts;
  g_run_s += dt;
  etu_compare(ref, nref, got, &r);
  printf("%-36s %ld instructions decoded; ran %" PRIu64 " wave-instructions: %zu elements compared, %zu mismatches, "
         "max abs float error %.3g\n", what, n, stats.wave_insts, r.checked, r.bad, r.worst);
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
  cc_target t;
  CHECK_OK(cc_target_get("amdgpu:gfx1100", 0, &t));
  char *names[ETU_MAX_EXAMPLES];
  int count = etu_list_examples(names, ETU_MAX_EXAMPLES);
  CHECK(count >= 10);
  for (int i = 0; i < count; i++) {
    char path[512];
    snprintf(path, sizeof path, "examples/%s", names[i]);
    run_example(&t, path, true);
    run_example(&t, path, false);
    free(names[i]);
  }
  CHECK(g_decoded > 500);
  if (g_run_s > 0)
    printf("rdna3 interpreter: %" PRIu64 " lane-instructions in %.3f s = %.1f M lane-instructions/s (one core, "
           "including memory callbacks)\n", g_lane_insts, g_run_s, g_lane_insts / g_run_s / 1e6);
  return testing_summary("rdna3_examples");
}
