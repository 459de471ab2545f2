/* Cross-thread reduces (THREAD on a reduce axis: compiler/group_reduce.c, the BARRIER in compiler/render_c.c) on the
 * CPU device, whose pool runs the core_ids on real worker threads: sums, int32 sums (exact in any order, so a lost or
 * doubled partial shows bit for bit), max and products, with UPCAST lanes and UNROLL vector accumulators, for thread
 * counts below, equal to and above the pool's workers, each launched several times in a row (the arrival count must
 * be back at 0 for the next launch). The reference interpreter is the judge. A launch in which one thread faults
 * (the others arrived) must leave no silent wrong answer behind: later launches of that loaded kernel fail with a
 * message saying to load it again, and a fresh load computes the right sum. Then the refusals: a kernel that is
 * more than the one reduce, a size the count does not divide, a target without the combine. */
#include <stdlib.h>
#include <string.h>

#include "compiler/interp.h"
#include "compiler/cc_test_util.h"
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

/* A gather sum, THREAD:0:2: thread 1 reads indices far outside x (a fault) while thread 0 arrives. */
#define GATHER                                                                                                       \
  "(kernel g (let o (buf 0 float32 1)) (let x (buf 1 float32 4096)) (let ix (buf 2 int32 4096))"                    \
  " (let r (range 1000 4096 reduce))"                                                                               \
  " (sink (store (index o 0) (reduce add (load (index x (cast index (load (index ix r))))) r))))"

/* Load GATHER, set x[i] = (i % 8) * scale and the indices (wild: the second half points 2^28 floats away), run
 * once; returns the status. */
static hcq_status gather_run(krun *k, cpu_device *dev, bool load, bool wild, float scale, float *out) {
  if (load) {
    cc_opt *ov = NULL;
    size_t nov = 0;
    CHECK_OK(cc_opts_parse("THREAD:0:2", &ov, &nov));
    cc_options o = {.opts = ov, .nopts = nov};
    hcq_status st = krun_compile_text(k, GATHER, &o, 2);
    free(ov);
    if (!st) st = krun_setup(k, dev);
    if (st) return st;
  }
  cc_kbuf *x = krun_buf(k, 1), *ix = krun_buf(k, 2);
  for (int i = 0; i < 4096; i++) {
    ((float *)x->data)[i] = (float)(i % 8) * scale;
    ((int32_t *)ix->data)[i] = wild && i >= 2048 ? (1 << 28) : (i * 7) % 4096;
  }
  ((float *)krun_buf(k, 0)->data)[0] = -1;
  hcq_status st = krun_exec(k, 30000, NULL);
  *out = ((float *)krun_buf(k, 0)->data)[0];
  return st;
}

static void test_fault(void) {
  cpu_device *dev = NULL;
  CHECK_OK(cpu_device_create(2, &dev));
  if (!dev) return;
  krun k = {0};
  float got = 0;
  CHECK_OK(gather_run(&k, dev, true, false, 1, &got));
  CHECK(got == 4096.0f * 3.5f); /* (i*7) % 4096 runs over every index once: 512 times 0..7 */
  hcq_status st = gather_run(&k, dev, false, true, 1, &got);
  CHECK(st && hcq_status_code(st) == HCQ_CODE_KERNEL_FAULT && strstr(hcq_status_message(st), "load the kernel again"));
  if (st) fprintf(stderr, "  (expected) %s\n", hcq_status_message(st));
  hcq_status_free(st);
  /* the same loaded kernel again, good indices, new values: an error, never a sum of one fresh and one stale
   * partial */
  st = gather_run(&k, dev, false, false, 2, &got);
  if (!st) fprintf(stderr, "  after a fault: ran and wrote %g (the sum is %g)\n", got, 4096.0 * 7);
  CHECK(st && strstr(hcq_status_message(st), "load the kernel again"));
  hcq_status_free(st);
  krun_free(&k);
  krun k2 = {0};
  CHECK_OK(gather_run(&k2, dev, true, false, 2, &got));
  CHECK(got == 4096.0f * 7);
  krun_free(&k2);
  cpu_device_destroy(dev);
}

/* The arrival count's atomic must be inline on aarch64 (gcc and clang default to calls into libgcc's out-of-line
 * helpers there, which a freestanding kernel cannot resolve): the c:aarch64 source, compiled by the cross compilers
 * that are installed, references no undefined symbol. */
static void test_aarch64_atomics(void) {
  if (!tu_have("aarch64-linux-gnu-nm")) {
    fprintf(stderr, "cpu_thread_reduce: aarch64-linux-gnu-nm not installed (binutils-aarch64-linux-gnu): skipped\n");
    return;
  }
  static const char *const CCS[] = {"aarch64-linux-gnu-gcc", "clang-19 --target=aarch64-linux-gnu"};
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *kern = NULL;
  cc_target t;
  cc_program *p = NULL;
  cc_opt *ov = NULL;
  size_t nov = 0;
  static const char *SUM = "(kernel s (let o (buf 0 float32 1)) (let x (buf 1 float32 4096)) "
                           "(let r (range 1000 4096 reduce)) (sink (store (index o 0) (reduce add (load (index x r)) r))))";
  CHECK_OK(cc_target_get("c:aarch64", 2, &t));
  if (ctx) CHECK_OK(cc_kernel_parse(ctx, SUM, strlen(SUM), "<t>", &kern));
  CHECK_OK(cc_opts_parse("UNROLL:0:4,THREAD:0:2", &ov, &nov));
  cc_options o = {.opts = ov, .nopts = nov};
  if (kern) CHECK_OK(cc_compile_source(ctx, kern, &t, &o, &p));
  char dir[] = "/tmp/hcq-thread-reduce-XXXXXX";
  if (p && mkdtemp(dir)) {
    char path[64], cmd[512];
    snprintf(path, sizeof path, "%s/k.c", dir);
    FILE *f = fopen(path, "w");
    if (f) fputs(p->source, f);
    if (f) fclose(f);
    for (size_t i = 0; i < sizeof CCS / sizeof CCS[0]; i++) {
      char tool[64];
      snprintf(tool, sizeof tool, "%.*s", (int)strcspn(CCS[i], " "), CCS[i]);
      if (!tu_have(tool)) continue;
      snprintf(cmd, sizeof cmd, "%s -c -O2 -fPIC -ffreestanding -nostdlib %s/k.c -o %s/k.o && aarch64-linux-gnu-nm -u %s/k.o",
               CCS[i], dir, dir, dir);
      FILE *pp = popen(cmd, "r");
      char out[256] = "";
      size_t n = pp ? fread(out, 1, sizeof out - 1, pp) : 0;
      out[n] = 0;
      int rc = pp ? pclose(pp) : -1;
      if (rc != 0 || n) fprintf(stderr, "  %s: exit %d, undefined symbols: %s\n", CCS[i], rc, out);
      CHECK(rc == 0 && n == 0);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
  }
  cc_program_free(p);
  free(ov);
  uop_ctx_destroy(ctx);
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
  test_fault();
  test_aarch64_atomics();
  test_refused();
  return testing_summary("cpu_thread_reduce");
}
