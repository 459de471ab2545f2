/* THREAD over a symbolic axis it cannot divide (opts.c thread_gated): ceil(N/T) iterations per core_id with every
 * buffer access gated by the original index < N. Checked against the reference interpreter, natively, for lengths
 * that leave the last chunk partly or entirely empty (N < T included), and the heuristic's choice for saxpy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/opt_test_util.h"
#include "base/testing.h"

static uop_ctx *g_ctx;

#define SAXPY                                                                                                        \
  "(kernel saxpy (let y (buf 0 float32 524288)) (let x (buf 1 float32 524288)) (let n (var n 1 524288 index))"      \
  " (let r0 (range 0 n loop)) (let yi (index y r0))"                                                                  \
  " (sink (store yi (+ (* (load (index x r0)) 2.5) (load yi)) r0)))"
/* an outer symbolic axis over rows with an inner reduce: the gate covers the reduce's loads too */
#define ROWSUM                                                                                                       \
  "(kernel rowsum (let out (buf 0 float32 64)) (let x (buf 1 float32 1024)) (let n (var n 1 64 index))"            \
  " (let r0 (range 0 n loop)) (let r1 (range 1 16 reduce))"                                                           \
  " (sink (store (index out r0) (reduce add (load (index x (+ (* r0 16) r1))) r1) r0)))"

static void run(const char *text, const char *opts, int64_t n, const cc_target *t, bool want_thread) {
  uop_var_val vals[1] = {{"n", n}};
  cc_program *p = NULL;
  size_t bad = otu_check_text(g_ctx, text, t, opts, vals, 1, 3, &p);
  if (bad) fprintf(stderr, "  %s with %s, n=%lld: %zu bad elements\n", text, opts ? opts : "heuristic", (long long)n, bad);
  int64_t threads = 0;
  if (p) CHECK((threads = cc_launch_const(p->desc.global[0])) > 0);
  CHECK(want_thread ? threads > 1 : threads == 1);
  cc_program_free(p);
}

int main(void) {
  char dir[] = "/tmp/hcq-thread-gated-test-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  if (!tu_have("cc")) {
    fprintf(stderr, "thread_gated_test: no cc (install gcc): skipped\n");
    return 77;
  }
  CHECK_OK(uop_ctx_create(&g_ctx));
  if (!g_ctx) return testing_summary("thread_gated");
  cc_target t;
  CHECK_OK(cc_target_get("c", 4, &t));
  static const int64_t NS[] = {1, 2, 3, 5, 7, 1000, 524287, 524288};
  for (size_t i = 0; i < sizeof NS / sizeof NS[0]; i++) {
    run(SAXPY, "THREAD:0:3", NS[i], &t, true);
    run(SAXPY, "THREAD:0:4", NS[i], &t, true);
    run(SAXPY, NULL, NS[i], &t, true); /* the heuristic threads it (n up to 2^19) */
  }
  for (int64_t n = 1; n <= 64; n += 9) {
    run(ROWSUM, "THREAD:0:3", n, &t, true);
    run(ROWSUM, "THREAD:0:2,UNROLL:0:4", n, &t, true);
  }
  uop_ctx_destroy(g_ctx);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", dir);
  return testing_summary("thread_gated");
}
