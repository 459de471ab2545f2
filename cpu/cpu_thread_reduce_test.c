/* Cross-thread reduces (THREAD on a reduce axis: compiler/group_reduce.c, the BARRIER in compiler/render_c.c) on the
 * CPU device, whose pool runs the core_ids on real worker threads: sums, int32 sums (exact in any order, so a lost or
 * doubled partial shows bit for bit), max and products, with UPCAST lanes and UNROLL vector accumulators, for thread
 * counts below, equal to and above the pool's workers, each launched several times in a row (the arrival count must
 * be back at 0 for the next launch). The reference interpreter is the judge. Then the refusals: a kernel that is
 * more than the one reduce, a size the count does not divide, a target without the combine. */
#include <stdlib.h>
#include <string.h>

#include "compiler/interp.h"
#include "compiler/kernel_text.h"
#include "compiler/opt.h"
#include "base/testing.h"
#include "hcq/rt_krun.h"

#define LAUNCHES 4

/* Compile `text` with `opts` for `threads` threads, run it LAUNCHES times (refilled with another seed each time),
 * and compare every buffer with the interpreter each time. The THREAD opt must have applied. */
static void run_case(cpu_device *dev, const char *what, const char *text, const char *opts, int threads) {
  cc_opt *ov = NULL;
  size_t nov = 0;
  CHECK_OK(cc_opts_parse(opts, &ov, &nov));
  cc_options o = {.opts = ov, .nopts = nov};
  krun k = {0};
  hcq_status st = krun_compile_text(&k, text, &o, threads);
  if (!st) st = krun_setup(&k, dev);
  for (int l = 0; l < LAUNCHES && !st; l++) {
    cc_kbuf *host = NULL;
    size_t nhost = 0;
    krun_fill(&k, 11 + (uint64_t)l);
    st = cc_kernel_buffers(k.sink, &host, &nhost);
    if (!st) st = cc_kbufs_alloc_fill(host, nhost, 11 + (uint64_t)l);
    if (!st) st = krun_exec(&k, 30000, NULL);
    krun_cmp cmp = {0};
    if (!st) st = krun_check_interp(&k, host, nhost, 1e-5, 1e-6, &cmp);
    if (!st && cmp.mismatches) {
      fprintf(stderr, "  %s (%s, %d threads), launch %d: %zu mismatches\n", what, opts, threads, l, cmp.mismatches);
      CHECK(!"cross-thread reduce differs from the interpreter");
    }
    if (host) cc_kbufs_free(host, nhost);
  }
  if (st) fprintf(stderr, "  %s (%s, %d threads): %s\n", what, opts, threads, hcq_status_message(st));
  CHECK(!st);
  hcq_status_free(st);
  if (k.prog) CHECK(strstr(k.prog->source, "hcq_arrived") != NULL); /* really the cross-thread combine */
  krun_free(&k);
  free(ov);
}

static void test_runs(void) {
  cpu_device *dev = NULL;
  CHECK_OK(cpu_device_create(2, &dev)); /* two workers: 3 and 8 core_ids are claimed in turns */
  if (!dev) return;
  static const char *SUM = "(kernel s (let o (buf 0 float32 1)) (let x (buf 1 float32 24576)) "
                           "(let r (range 1000 24576 reduce)) (sink (store (index o 0) (reduce add (load (index x r)) r))))";
  static const char *ISUM = "(kernel s (let o (buf 0 int32 1)) (let x (buf 1 int32 24576)) "
                            "(let r (range 1000 24576 reduce)) (sink (store (index o 0) (reduce add (load (index x r)) r))))";
  static const char *MAX = "(kernel m (let o (buf 0 float32 1)) (let x (buf 1 float32 24576)) "
                           "(let r (range 1000 24576 reduce)) (sink (store (index o 0) (reduce max (load (index x r)) r))))";
  /* a product of values near 1 (x/64 + 1 of the fill's small values) stays finite */
  static const char *PROD = "(kernel p (let o (buf 0 float32 1)) (let x (buf 1 float32 384)) "
                            "(let r (range 1000 384 reduce)) "
                            "(sink (store (index o 0) (reduce mul (+ (* (load (index x r)) 0.015625) 1.0) r))))";
  /* four outputs, each a strided column sum: the UPCAST lanes get a slot each */
  static const char *LANES = "(kernel c (let o (buf 0 int32 4)) (let x (buf 1 int32 6144)) (let r0 (range 0 4 loop)) "
                             "(let r (range 1000 1536 reduce)) "
                             "(sink (store (index o r0) (reduce add (load (index x (+ (* r 4) r0))) r) r0)))";
  static const int THREADS[] = {2, 3, 8};
  for (size_t i = 0; i < sizeof THREADS / sizeof THREADS[0]; i++) {
    int t = THREADS[i];
    char plain[32], unrolled[48], lanes[48];
    snprintf(plain, sizeof plain, "THREAD:0:%d", t);
    snprintf(unrolled, sizeof unrolled, "UNROLL:0:16,THREAD:0:%d", t);
    snprintf(lanes, sizeof lanes, "UPCAST:0:4,THREAD:1:%d", t);
    run_case(dev, "float sum", SUM, plain, t);
    run_case(dev, "float sum, vector accumulators", SUM, unrolled, t);
    run_case(dev, "int32 sum, vector accumulators", ISUM, unrolled, t);
    run_case(dev, "int32 sum", ISUM, plain, t);
    run_case(dev, "float max", MAX, unrolled, t);
    run_case(dev, "float product", PROD, plain, t);
    run_case(dev, "int32 column sums (UPCAST lanes)", LANES, lanes, t);
  }
  cpu_device_destroy(dev);
}

/* opts on `text` for `target` must be refused (HCQ_CODE_INVALID) with a message holding `needle`. */
static void expect_refused(const char *target, const char *text, const char *opts, const char *needle) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  if (!ctx) return;
  const uop *kern = NULL, *out = NULL;
  cc_target t;
  cc_opt *ov = NULL;
  size_t nov = 0;
  CHECK_OK(cc_target_get(target, 8, &t));
  CHECK_OK(cc_kernel_parse(ctx, text, strlen(text), "<t>", &kern));
  CHECK_OK(cc_opts_parse(opts, &ov, &nov));
  cc_options o = {.opts = ov, .nopts = nov};
  hcq_status st = kern ? cc_optimize(ctx, kern, &t, &o, &out, NULL, NULL) : HCQ_OK;
  bool ok = st && hcq_status_code(st) == HCQ_CODE_INVALID && strstr(hcq_status_message(st), needle);
  if (!ok) fprintf(stderr, "  %s on %s: expected \"%s\", got \"%s\"\n", opts, target, needle,
                   st ? hcq_status_message(st) : "applied");
  CHECK(ok);
  hcq_status_free(st);
  free(ov);
  uop_ctx_destroy(ctx);
}

static void test_refused(void) {
  static const char *ROWS = "(kernel r (let o (buf 0 float32 8)) (let x (buf 1 float32 512)) (let r0 (range 0 8 loop)) "
                            "(let r (range 1000 64 reduce)) "
                            "(sink (store (index o r0) (reduce add (load (index x (+ (* r0 64) r))) r) r0)))";
  static const char *SUM = "(kernel s (let o (buf 0 float32 1)) (let x (buf 1 float32 96)) "
                           "(let r (range 1000 96 reduce)) (sink (store (index o 0) (reduce add (load (index x r)) r))))";
  /* the reduce inside an output loop: only the last thread would go on past the combine */
  expect_refused("c", ROWS, "THREAD:1:2", "one reduce (r0, loop, is outside it)");
  expect_refused("c", SUM, "THREAD:0:5", "divisible by the amount");
  expect_refused("llvm-cpu", SUM, "THREAD:0:2", "needs the c target");
}

int main(void) {
  test_runs();
  test_refused();
  return testing_summary("cpu_thread_reduce");
}
