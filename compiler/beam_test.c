/* BEAM search on the CPU device with tiny time budgets. No wall-time assertion (speed lives in bench/): the winner
 * is correct (re-run and checked against the reference interpreter, not the search's own reference); the search's
 * own measurements keep its promises (best <= heuristic, best <= noopt); miscompiled candidates (injected by the
 * test hook) never win; past the time bound only the candidate in flight finishes; the second search is a cache
 * hit with the same winner; bad widths and env values are refused. */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/testing.h"
#include "compiler/beam.h"
#include "compiler/interp.h"
#include "cpu/cpu_device.h"
#include "hcq/rt_krun.h"
#include "hcq/signal.h"

static const char *MATMUL =
    "(kernel mm\n"
    "  (let c (buf 0 float32 4096)) (let a (buf 1 float32 4096)) (let b (buf 2 float32 4096))\n"
    "  (let r0 (range 0 64 loop)) (let r1 (range 1 64 loop)) (let k (range 2 64 reduce))\n"
    "  (sink (store (index c (+ (* r0 64) r1))\n"
    "    (reduce add (* (load (index a (+ (* r0 64) k))) (load (index b (+ (* k 64) r1)))) k) r0 r1)))\n";

/* softmax over 64 rows of 256: the heuristic upcasts 16x16x16, past the search's own bound of 256 */
static const char *SOFTMAX =
    "(kernel softmax (let out (buf 0 float32 16384)) (let x (buf 1 float32 16384))"
    " (let r0 (range 0 64 loop)) (let r1 (range 1 256 loop))"
    " (let r1001 (range 1001 256 reduce)) (let r1002 (range 1002 256 reduce)) (let row (* r0 256))"
    " (let negmax (* (reduce max (load (index x (+ row r1001))) r1001) -1.0))"
    " (let sum (reduce add (exp2 (* (+ (load (index x (+ row r1002))) negmax) 1.442695)) r1002))"
    " (sink (store (index out (+ row r1)) (* (exp2 (* (+ (load (index x (+ row r1))) negmax) 1.442695))"
    " (recip sum)) r0 r1)))";

static hcq_rt_device *rd;
static int threads;

static char *opts_text(const cc_opt *o, size_t n) {
  char *s = calloc(1, 16 + n * 40);
  size_t len = 0;
  for (size_t i = 0; s && i < n; i++)
    len += (size_t)sprintf(s + len, "%s%s:%d:%lld", i ? "," : "", cc_opt_name(o[i].op), o[i].axis, (long long)o[i].amount);
  return s;
}

/* Compile text with opts (NULL + noopt), run it twice on the device (a second run must not change the result)
 * and compare every buffer with the interpreter. */
static void run_checked(const char *text, const cc_opt *opts, size_t n, bool noopt) {
  static const cc_opt none;
  cc_options o = {.opts = noopt ? NULL : (n ? opts : &none), .nopts = n, .noopt = noopt};
  krun k = {0};
  cc_kbuf *host = NULL;
  size_t nhost = 0;
  hcq_status st = krun_compile_text_for(&k, text, &o, "c", threads);
  if (!st) st = krun_setup_rt(&k, rd);
  if (!st) krun_fill(&k, 3);
  if (!st) st = cc_kernel_buffers(k.sink, &host, &nhost);
  if (!st) st = cc_kbufs_alloc_fill(host, nhost, 3);
  for (int r = 0; !st && r < 2; r++) st = krun_exec(&k, 10000, NULL);
  krun_cmp cmp = {0};
  if (!st) st = krun_check_interp(&k, host, nhost, 1e-4, 1e-5, &cmp);
  CHECK_OK(st);
  CHECK_EQ_INT(cmp.mismatches, 0);
  CHECK(cmp.checked == 3 * 4096); /* every buffer, inputs too */
  if (host) cc_kbufs_free(host, nhost);
  krun_free(&k);
}

/* What the search measured, as it promises: every time positive, the winner no slower than noopt or than the
 * heuristic's choice (always timed in round 1). */
static void check_recorded(const cc_beam_result *r) {
  CHECK(r->best_ms > 0 && r->noopt_ms > 0);
  CHECK(r->best_ms <= r->noopt_ms);
  CHECK(r->heuristic_ms > 0);
  CHECK(r->best_ms <= r->heuristic_ms);
}

static void test_winner_checked(void) {
  cc_beam_options o = {.width = 2, .max_seconds = 4, .threads = threads, .no_cache = true};
  cc_beam_result r;
  CHECK_OK(cc_beam_search(rd, MATMUL, &o, &r));
  char *ot = opts_text(r.opts, r.nopts);
  printf("beam: [%s] %.4f ms vs noopt %.4f ms, heuristic %.4f ms, %zu rounds, %zu timed, %zu refused, %zu dups, "
         "%.1f s\n", ot, r.best_ms, r.noopt_ms, r.heuristic_ms, r.rounds, r.timed, r.refused, r.dups, r.elapsed_s);
  CHECK(r.timed > 0 && r.refused > 0 && r.wrong == 0 && !r.cache_hit);
  check_recorded(&r);
  /* the winner's text (what the cache stores) parses back to the same opts */
  cc_opt *back = NULL;
  size_t nback = 0;
  if (r.nopts) CHECK_OK(cc_opts_parse(ot, &back, &nback));
  CHECK_EQ_INT(nback, r.nopts);
  for (size_t i = 0; i < r.nopts && i < nback; i++)
    CHECK(back[i].op == r.opts[i].op && back[i].axis == r.opts[i].axis && back[i].amount == r.opts[i].amount);
  free(back);
  free(ot);
  run_checked(MATMUL, r.opts, r.nopts, false);
  run_checked(MATMUL, NULL, 0, true);
  cc_beam_result_free(&r);
}

/* The heuristic's own choice is always timed (even when it upcasts past the search's bound, even past the time
 * bound), and the winner is never slower than it as measured. */
static void test_keeps_heuristic(void) {
  cc_beam_options o = {.width = 1, .max_seconds = 0.01, .threads = threads, .no_cache = true};
  cc_beam_result r;
  CHECK_OK(cc_beam_search(rd, SOFTMAX, &o, &r));
  char *ot = opts_text(r.opts, r.nopts);
  printf("softmax: [%s] %.4f ms, heuristic %.4f ms, noopt %.4f ms\n", ot, r.best_ms, r.heuristic_ms, r.noopt_ms);
  free(ot);
  check_recorded(&r);
  cc_beam_result_free(&r);
}

/* Every candidate with an UPCAST or a THREAD "miscompiles": the search must refuse them, count them, and pick
 * something else. */
static void corrupt(void *user, const cc_opt *opts, size_t n, cc_kbuf *bufs, size_t nbufs) {
  (void)nbufs;
  bool bad = false;
  for (size_t i = 0; i < n; i++) bad |= opts[i].op == CC_OPT_UPCAST || opts[i].op == CC_OPT_THREAD;
  if (!bad) return;
  (*(int *)user)++;
  float *c = bufs[0].data;
  c[(*(int *)user * 37) % 4096] += 0.5f; /* one element off, by far more than the tolerance */
}

static void test_wrong_refused(void) {
  int corrupted = 0;
  cc_beam_options o = {.width = 2, .max_seconds = 3, .threads = threads, .no_cache = true, .after_run = corrupt,
                       .hook_user = &corrupted};
  cc_beam_result r;
  CHECK_OK(cc_beam_search(rd, MATMUL, &o, &r));
  CHECK(corrupted > 0);
  CHECK_EQ_INT(r.wrong, corrupted);
  for (size_t i = 0; i < r.nopts; i++) CHECK(r.opts[i].op != CC_OPT_UPCAST && r.opts[i].op != CC_OPT_THREAD);
  cc_beam_result_free(&r);
}

/* The hook notes when each candidate's checking run ended; past the bound only the candidate in flight may end. */
typedef struct late_count {
  double deadline_s;
  int late, runs;
} late_count;

static void note_late(void *user, const cc_opt *opts, size_t n, cc_kbuf *bufs, size_t nbufs) {
  (void)opts, (void)n, (void)bufs, (void)nbufs;
  late_count *lc = user;
  lc->runs++;
  lc->late += (double)hcq_now_ns() / 1e9 > lc->deadline_s;
}

static void test_time_bound(void) {
  /* 0.05 s: less than one round's pipeline runs over the ~190 actions even with every object in the compile cache */
  late_count lc = {.deadline_s = (double)hcq_now_ns() / 1e9 + 0.05};
  cc_beam_options o = {.width = 8, .max_seconds = 0.05, .threads = threads, .no_cache = true, .after_run = note_late,
                       .hook_user = &lc};
  cc_beam_result r;
  CHECK_OK(cc_beam_search(rd, MATMUL, &o, &r));
  printf("time bound 0.05 s: %d candidates ran, %d after the bound, timed out %d, best %.4f ms\n", lc.runs, lc.late,
         r.timed_out, r.best_ms);
  CHECK(r.timed_out);
  CHECK(lc.runs > 0);
  /* the one in flight when the bound passed (+1: the search's clock starts a moment after ours) */
  CHECK(lc.late <= 2);
  check_recorded(&r);
  cc_beam_result_free(&r);
}

static void test_cache(void) {
  char dir[] = "/tmp/hcq-beam-test-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  setenv("XDG_CACHE_HOME", dir, 1);
  unsetenv("IGNORE_BEAM_CACHE");
  unsetenv("HCQ_CACHE");
  cc_beam_options o = {.width = 1, .max_seconds = 1.5, .threads = threads};
  cc_beam_result a, b, c;
  CHECK_OK(cc_beam_search(rd, MATMUL, &o, &a));
  CHECK(!a.cache_hit);
  /* same kernel written differently (spacing, a comment): the canonical form is the key */
  char *other = NULL;
  CHECK(asprintf(&other, "; the same matmul\n%s", MATMUL) > 0);
  CHECK_OK(cc_beam_search(rd, other, &o, &b));
  CHECK(b.cache_hit);
  CHECK(b.timed == 0 && b.best_ms == 0); /* a hit times nothing */
  CHECK_EQ_INT(b.nopts, a.nopts);
  for (size_t i = 0; i < a.nopts && i < b.nopts; i++)
    CHECK(a.opts[i].op == b.opts[i].op && a.opts[i].axis == b.opts[i].axis && a.opts[i].amount == b.opts[i].amount);
  run_checked(MATMUL, b.opts, b.nopts, false); /* the cached winner still computes the right thing */
  /* another width is another entry, so is another thread count (the target's THREAD limit); IGNORE_BEAM_CACHE
   * skips the cache */
  o.width = 2;
  o.max_seconds = 0.3;
  CHECK_OK(cc_beam_search(rd, MATMUL, &o, &c));
  CHECK(!c.cache_hit);
  cc_beam_result_free(&c);
  o.width = 1;
  o.threads = threads + 1;
  CHECK_OK(cc_beam_search(rd, MATMUL, &o, &c));
  CHECK(!c.cache_hit);
  cc_beam_result_free(&c);
  o.threads = threads;
  o.width = 1;
  setenv("IGNORE_BEAM_CACHE", "1", 1);
  CHECK_OK(cc_beam_search(rd, MATMUL, &o, &c));
  CHECK(!c.cache_hit);
  unsetenv("IGNORE_BEAM_CACHE");
  cc_beam_result_free(&a);
  cc_beam_result_free(&b);
  cc_beam_result_free(&c);
  free(other);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK(system(cmd) == 0);
}

static void test_bad_values(void) {
  cc_beam_result r;
  cc_beam_options o = {.width = 0, .max_seconds = 1, .threads = threads, .no_cache = true};
  CHECK_ERR(cc_beam_search(rd, MATMUL, &o, &r), HCQ_CODE_INVALID, "beam width 0");
  o.width = CC_BEAM_MAX_WIDTH + 1;
  CHECK_ERR(cc_beam_search(rd, MATMUL, &o, &r), HCQ_CODE_INVALID, "beam width");
  o.width = 1;
  o.max_seconds = 1e9;
  CHECK_ERR(cc_beam_search(rd, MATMUL, &o, &r), HCQ_CODE_INVALID, "time bound");
  o.max_seconds = 1;
  CHECK_ERR(cc_beam_search(rd, "(kernel broken", &o, &r), HCQ_CODE_PARSE, "");
  int w;
  static const char *bad_w[] = {"abc", "-1", "101", " 3", "+2", "2x", "99999999999999999999"};
  for (size_t i = 0; i < sizeof bad_w / sizeof bad_w[0]; i++) {
    setenv("BEAM", bad_w[i], 1);
    CHECK_ERR(cc_beam_width_from_env(&w), HCQ_CODE_INVALID, "BEAM=");
  }
  setenv("BEAM", "3", 1);
  CHECK_OK(cc_beam_width_from_env(&w));
  CHECK_EQ_INT(w, 3);
  unsetenv("BEAM");
  CHECK_OK(cc_beam_width_from_env(&w));
  CHECK_EQ_INT(w, 0);
  double s;
  static const char *bad_s[] = {"0", "-1", "x", "nan", "inf", "1e9", "2s"};
  for (size_t i = 0; i < sizeof bad_s / sizeof bad_s[0]; i++) {
    setenv("HCQ_BEAM_SECONDS", bad_s[i], 1);
    CHECK_ERR(cc_beam_seconds_from_env(&s), HCQ_CODE_INVALID, "HCQ_BEAM_SECONDS=");
  }
  setenv("HCQ_BEAM_SECONDS", "0.25", 1);
  CHECK_OK(cc_beam_seconds_from_env(&s));
  CHECK(s == 0.25);
  unsetenv("HCQ_BEAM_SECONDS");
  /* the reference's table without TC: 6x8 UPCAST, 3x5 UNROLL, 7x6+2 LOCAL, 8x3 GROUPTOP, 4x3 GROUP, 7 PADTO,
   * 10 SWAP, 10x3 THREAD, NOLOCALS; then our KBLOCK on the first reduce axis with the heuristic's block (amount 0,
   * any k) and the powers of two it picks (kblock_test: amount 0 is the heuristic's kernel) */
  CHECK_EQ_INT(cc_beam_action_count(), 48 + 15 + 44 + 24 + 12 + 7 + 10 + 30 + 1 + 4);
  bool kblock_auto = false;
  for (size_t i = 0; i < cc_beam_action_count(); i++) {
    cc_opt a = cc_beam_action(i);
    kblock_auto |= a.op == CC_OPT_KBLOCK && a.axis == 0 && a.amount == 0;
  }
  CHECK(kblock_auto);
  CHECK(cc_beam_action(cc_beam_action_count()).op == CC_OPT_COUNT);
}

int main(void) {
  cpu_device *dev = NULL;
  CHECK_OK(cpu_device_create(2, &dev));
  if (!dev) return testing_summary("beam_test");
  threads = cpu_device_threads(dev);
  CHECK_OK(hcq_rt_wrap(cpu_device_hcq(dev), 0, &rd));
  test_bad_values();
  test_winner_checked();
  test_wrong_refused();
  test_keeps_heuristic();
  test_time_bound();
  test_cache();
  hcq_rt_close(rd);
  cpu_device_destroy(dev);
  return testing_summary("beam_test");
}
