/* Every example kernel (the .uop files in examples/) compiled for ptx:sm_90 and ptx:sm_80, without opts and with the heuristic's
 * (locals, group reduces through shared memory and barriers, upcasts), run through the PTX interpreter on
 * deterministically filled buffers and compared with the reference interpreter (compiler/interp.c) by the rule of
 * compiler/examples_test.c (etu_compare: integers exactly, floats with cc_float_match). Kernels whose buffers exceed
 * 2 MiB (16 MiB with a variable, which runs 777 elements) are compiled but not run. Prints the interpreter's speed
 * in thread-instructions per second. */
#include <time.h>

#include "compiler/examples_test_util.h"
#include "emulator_tests/ptx_test_util.h"

#define RUN_LIMIT_B ((size_t)2 << 20)
#define RUN_LIMIT_VAR_B ((size_t)16 << 20)

static uint64_t g_thread_ins, g_warp_ins, g_full_ins;
static double g_seconds, g_full_seconds;

/* CPU time of this thread: the rate of one core, whatever else runs on the machine */
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Kernels the differential fuzzer (ptx_fuzz_test.c) found the ptx renderer getting wrong, kept as regressions:
 * 64-bit shift amounts beyond 32 bits (were truncated to 32 bits before the shift) and float -> int8/uint8 out of
 * their range (saturated to 16 bits, then wrapped). The fill puts values in [-2, 2) (ints in [-8, 8)). */
static const char *const REGRESSIONS[] = {
    "(kernel shift64 (let out (buf 0 int64 64)) (let a (buf 1 int64 64)) (let b (buf 2 int64 64))"
    " (let r0 (range 0 64 loop)) (sink (store (index out r0)"
    " (+ (<< (load (index a r0)) (+ (load (index b r0)) (const 4294967296 int64)))"
    " (>> (load (index a r0)) (- (load (index b r0)) (const 4294967296 int64)))) r0)))",
    "(kernel sat8 (let o1 (buf 0 int8 64)) (let o2 (buf 1 uint8 64)) (let x (buf 2 float32 64))"
    " (let r0 (range 0 64 loop)) (sink (store (index o1 r0) (cast int8 (* (load (index x r0)) 1000.0)) r0)"
    " (store (index o2 r0) (cast uint8 (* (load (index x r0)) 1000.0)) r0)))",
};

static void run_example(const cc_target *t, const char *path, bool noopt) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *sink = NULL;
  cc_program *p = NULL;
  cc_kbuf *ref = NULL, *got = NULL;
  size_t nref = 0, ngot = 0;
  hcq_status st = path[0] == '(' ? cc_kernel_parse(ctx, path, strlen(path), "<regression>", &sink)
                                 : cc_kernel_parse_file(ctx, path, &sink);
  if (!st) st = cc_compile_source(ctx, sink, t, &(cc_options){.noopt = noopt}, &p);
  if (!st) st = cc_kernel_buffers(sink, &ref, &nref);
  if (st && sizeof(size_t) == 4 && strstr(hcq_status_message(st), "too large")) {
    hcq_status_free(st);
    goto done;
  }
  if (!st) st = cc_kernel_buffers(sink, &got, &ngot);
  if (st) {
    fprintf(stderr, "%s (%s): %s\n", path, t->name, hcq_status_message(st));
    hcq_status_free(st);
    CHECK(!"compile");
    goto done;
  }
  size_t total = 0;
  for (size_t i = 0; i < nref; i++) total += ref[i].size_B;
  bool has_var = hcq_program_nvars(&p->desc) > 0;
  if (total > (has_var ? RUN_LIMIT_VAR_B : RUN_LIMIT_B)) {
    printf("%-28s %-10s %-9s compiled, not run (%zu MiB of buffers)\n", path, t->name, noopt ? "noopt" : "heuristic",
           total >> 20);
    goto done;
  }
  etu_run r;
  etu_reference(ctx, sink, ref, nref, got, ngot, &r);
  ptx_stats stats;
  double t0 = now_s();
  /* one thread per block (noopt) issues an instruction per thread: bound those runs (softmax would take seconds,
   * a minute under ASan) */
  ptu_max_warp_instructions = noopt ? 40000000 : 0;
  st = ptu_run_program(p, got, ngot, r.vals, r.nvals, &stats);
  double dt = now_s() - t0;
  if (st && noopt && strstr(hcq_status_message(st), "budget")) {
    printf("%-28.28s %-10s %-9s compiled, not run (over 40M warp instructions)\n", path, t->name, "noopt");
    hcq_status_free(st);
    goto done;
  }
  if (st) {
    fprintf(stderr, "%s (%s, %s): %s\n", path, t->name, noopt ? "noopt" : "heuristic", hcq_status_message(st));
    hcq_status_free(st);
    CHECK(!"ptx run");
    goto done;
  }
  g_thread_ins += stats.thread_instructions;
  g_warp_ins += stats.warp_instructions;
  g_seconds += dt;
  if (!noopt) g_full_ins += stats.thread_instructions, g_full_seconds += dt;
  etu_compare(ref, nref, got, &r);
  if (path[0] == '(') path = strchr(path, ' ') + 1; /* a regression: print its name */
  printf("%-28.28s %-10s %-9s ran: %zu elements, %zu mismatches, max abs float error %.3g; %.1fM thread-instr in %.3f s\n",
         path, t->name, noopt ? "noopt" : "heuristic", r.checked, r.bad, r.worst,
         (double)stats.thread_instructions / 1e6, dt);
  if (r.bad) fprintf(stderr, "%s (%s, %s): %zu mismatches\n", path, t->name, noopt ? "noopt" : "heuristic", r.bad);
  CHECK_EQ_INT(r.bad, 0);
done:
  cc_program_free(p);
  if (ref) cc_kbufs_free(ref, nref);
  if (got) cc_kbufs_free(got, ngot);
  uop_ctx_destroy(ctx);
}

int main(void) {
  char *names[ETU_MAX_EXAMPLES];
  int count = etu_list_examples(names, ETU_MAX_EXAMPLES);
  CHECK(count >= 10);
  static const char *const TARGETS[] = {"ptx:sm_90", "ptx:sm_80"};
  for (size_t ti = 0; ti < 2; ti++) {
    cc_target t;
    CHECK_OK(cc_target_get(TARGETS[ti], 0, &t));
    for (int i = 0; i < count; i++) {
      char path[512];
      snprintf(path, sizeof path, "examples/%s", names[i]);
      if (ti == 0) run_example(&t, path, true); /* without opts: one thread per block, slow; once is enough */
      run_example(&t, path, false);
    }
    for (size_t i = 0; i < sizeof REGRESSIONS / sizeof REGRESSIONS[0]; i++) {
      run_example(&t, REGRESSIONS[i], true);
      run_example(&t, REGRESSIONS[i], false);
    }
  }
  for (int i = 0; i < count; i++) free(names[i]);
  printf("ptx interpreter, one core: all runs %.1fM thread-instructions (%.1fM warp-instructions) in %.2f s CPU = "
         "%.0fM thread-instructions/s; the heuristic's launches (blocks of many threads) %.0fM/s\n",
         (double)g_thread_ins / 1e6, (double)g_warp_ins / 1e6, g_seconds,
         g_seconds > 0 ? (double)g_thread_ins / g_seconds / 1e6 : 0.0,
         g_full_seconds > 0 ? (double)g_full_ins / g_full_seconds / 1e6 : 0.0);
  return testing_summary("ptx_examples");
}
