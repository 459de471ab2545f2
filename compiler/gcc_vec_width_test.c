/* Integer accumulator groups through the host C compiler, where GCC 12.2's loop vectorizer went wrong twice:
 * allowed 512-bit vectors (-march=native on an AVX-512 CPU), it turned eight scalar int32 accumulators of a column
 * sum with `+ 2` after the reduce (UPCAST:0:8) into wrong sums (cc_toolchain_flags caps it at 256 bits for GCC 12 on
 * x86: compiler/toolchain.c); with three or five accumulators (UPCAST:0:3 over 3 columns, found by opt_fuzz seed
 * 0x15502b66) it loaded at the wrong stride on every x86 ISA, so kernels with integer accumulators are kept from
 * that pass (render_c.c). These kernels run natively on the c target against the reference interpreter, with lane
 * counts around those, int32 and uint32, and the epilogue constant that triggered it. */
#include "compiler/cc_test_util.h"
#include "compiler/opt_test_util.h"
#include "base/testing.h"

static void run(const char *dtype, int cols, int rows, const char *opts) {
  char text[800];
  snprintf(text, sizeof text,
           "(kernel colsum (let out (buf 0 %s %d)) (let a (buf 1 %s %d)) (let r0 (range 0 %d))"
           " (let r1 (range 1 %d reduce))\n"
           " (sink (store (index out r0) (+ (reduce add (load (index a (+ (* r1 %d) r0))) r1) (const 2 %s)) r0)))",
           dtype, cols, dtype, rows * cols, cols, rows, cols, dtype);
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  cc_target t;
  CHECK_OK(cc_target_get("c", 1, &t));
  const uop *sink = NULL;
  cc_opt *o = NULL;
  size_t no = 0, bad = SIZE_MAX;
  hcq_status st = cc_kernel_parse(ctx, text, strlen(text), "<colsum>", &sink);
  if (!st) st = cc_opts_parse(opts, &o, &no);
  if (!st) st = otu_native_same(ctx, sink, &t, &(cc_options){.opts = o, .nopts = no}, NULL, 0, 5, &bad, NULL);
  if (st) fprintf(stderr, "%s %dx%d [%s]: %s\n", dtype, rows, cols, opts, hcq_status_message(st));
  else if (bad) fprintf(stderr, "%s %dx%d [%s]: %zu elements differ from the interpreter\n", dtype, rows, cols, opts, bad);
  CHECK(!st && bad == 0);
  hcq_status_free(st);
  free(o);
  uop_ctx_destroy(ctx);
}

int main(void) {
  char dir[] = "/tmp/hcq-gcc-vec-width-test-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  if (!tu_have(cc_toolchain_cc())) {
    printf("*** SKIPPED: integer accumulator groups: no C compiler '%s' ***\n", cc_toolchain_cc());
  } else {
    const char *dtypes[] = {"int32", "uint32"};
    const char *opts[] = {"UPCAST:0:8", "UPCAST:0:4", "UPCAST:0:16", "UPCAST:0:8,UNROLL:0:2"};
    const int rows[] = {32, 6, 64};
    for (size_t d = 0; d < 2; d++)
      for (size_t o = 0; o < sizeof opts / sizeof *opts; o++)
        for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) run(dtypes[d], 16, rows[r], opts[o]);
    /* accumulator groups of 3 and 5: one per column */
    for (size_t d = 0; d < 2; d++)
      for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
        run(dtypes[d], 3, rows[r], "UPCAST:0:3");
        run(dtypes[d], 5, rows[r], "UPCAST:0:5");
      }
  }
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
  return testing_summary("gcc_vec_width");
}
