/* nv/ on a real NVIDIA GPU: the report `make nv-hw-check` prints (driver, GPU, every example pass/fail against the
 * reference interpreter with device times, launch latency, graph replay per kernel, add / matmul throughput), after
 * the driver-level checks (init, memory of each kind, a copy-engine copy checked byte for byte, a cross-channel
 * semaphore wait, semaphore round trip, copy bandwidth).
 *
 *   nv_hw_check --prepare DIR   (where ptxas is) writes every kernel's cubin + PTX to DIR (nv/nv_hw_prog.h)
 *   nv_hw_check [--conformance BIN] [DIR]
 *                               on the GPU machine: uses DIR's binaries (ptxas not needed), else ptxas; with
 *                               --conformance, runs `BIN --only nv --no-mock --programs DIR` (hcq/conformance_test)
 *                               after the driver checks and folds its cases into the report
 *
 * Exits 77 where /dev/nvidiactl does not exist. With HCQ_MOCK=nv it runs the whole report on the mock (for checking
 * the report itself; it says MOCK and the numbers are the mock's). The summary at the end lists what a reader needs:
 * driver, GPU, SM arch, memory, conformance and example results, launch-to-signal latency percentiles, graph replay
 * per kernel, add and matmul throughput. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "compiler/examples_test_util.h"
#include "emulator_tests/mock_env.h"
#include "hcq/graph.h"
#include "hcq/hcq.h"
#include "hcq/queue.h"
#include "hcq/signal.h"
#include "nv/nv_dev.h"
#include "nv/nv_hw_prog.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
/* What the summary prints (filled as the report runs). */
static struct {
  char driver[72], gpu[72], arch[32];
  uint64_t mem_B;
  int conf_rc, conf_ok, conf_fail; /* conf_rc -1: not run */
  int ex_pass, ex_fail, ex_ran, ex_skip;
  double lat_us[3], graph_us, add_gbs, matmul_gflops;
  char matmul_name[64];
} g_sum = {.conf_rc = -1};

/* The driver-level checks through nv_dev (as before the runtime existed). */
static void driver_checks(kif *k) {
  nv_dev *d = NULL;
  CHECK_OK(nv_dev_open(k, 0, &d));
  if (!d) return;
  printf("driver %s (layout %s), GPU \"%s\", target %s, memory %.1f GiB (%.1f GiB free), classes compute 0x%x copy "
         "0x%x gpfifo 0x%x usermode 0x%x\n", nv_dev_version(d), nv_dev_layout(d)->branch, nv_dev_gpu_name(d),
         nv_dev_target(d), (double)nv_dev_mem_B(d, false) / (1u << 30), (double)nv_dev_mem_B(d, true) / (1u << 30),
         nv_dev_class(d, 'c'), nv_dev_class(d, 'd'), nv_dev_class(d, 'g'), nv_dev_class(d, 'u'));
  snprintf(g_sum.driver, sizeof g_sum.driver, "%s (layout %s)", nv_dev_version(d), nv_dev_layout(d)->branch);
  snprintf(g_sum.gpu, sizeof g_sum.gpu, "%s", nv_dev_gpu_name(d)[0] ? nv_dev_gpu_name(d) : "(RM did not say)");
  snprintf(g_sum.arch, sizeof g_sum.arch, "%s", nv_dev_target(d) + 4);
  g_sum.mem_B = nv_dev_mem_B(d, false);
  const uint64_t n = 64u << 20;
  nv_mem src, dst, sig, gpu;
  CHECK_OK(nv_mem_alloc(d, n, NV_MEM_CPU, &src));
  CHECK_OK(nv_mem_alloc(d, n, NV_MEM_CPU, &dst));
  CHECK_OK(nv_mem_alloc(d, 0x1000, NV_MEM_HOST, &sig));
  CHECK_OK(nv_mem_alloc(d, n, 0, &gpu));
  if (src.cpu && dst.cpu && sig.cpu && gpu.va) {
    for (uint64_t i = 0; i < n / 4; i++) ((uint32_t *)src.cpu)[i] = (uint32_t)(i * 2654435761u);
    memset(dst.cpu, 0, n);
    volatile uint64_t *s = sig.cpu;
    uint32_t w[128];
    nv_push p;
    /* src -> GPU-only memory -> dst, then a four-word release */
    nv_push_init(&p, w, 128);
    nv_push_copy(&p, d, gpu.va, src.va, n);
    nv_push_copy(&p, d, dst.va, gpu.va, n);
    nv_push_copy_release(&p, d, sig.va, 1);
    double t0 = now_s();
    CHECK_OK(nv_chan_submit(d, nv_dev_copy(d), &p));
    CHECK_OK(nv_wait(d, sig.va, 1, 10000));
    double t1 = now_s();
    CHECK(memcmp(src.cpu, dst.cpu, n) == 0);
    printf("copy engine: 2 x %llu MiB in %.3f ms (%.1f GB/s)\n", (unsigned long long)(n >> 20), (t1 - t0) * 1e3,
           2.0 * (double)n / (t1 - t0) / 1e9);
    /* compute waits for the copy channel */
    nv_push_init(&p, w, 128);
    nv_push_sem_acquire(&p, d, sig.va + 16, 5);
    nv_push_sem_release(&p, d, sig.va + 32, 6, true);
    CHECK_OK(nv_chan_submit(d, nv_dev_compute(d), &p));
    CHECK(s[4] == 0);
    nv_push_init(&p, w, 128);
    nv_push_sem_release(&p, d, sig.va + 16, 5, false);
    CHECK_OK(nv_chan_submit(d, nv_dev_copy(d), &p));
    CHECK_OK(nv_wait(d, sig.va + 32, 6, 10000));
    CHECK(s[5] != 0);
    /* round trip: release from the compute channel, host waits */
    const int reps = 2000;
    t0 = now_s();
    for (int i = 1; i <= reps; i++) {
      nv_push_init(&p, w, 128);
      nv_push_sem_release(&p, d, sig.va + 48, 100 + (uint64_t)i, false);
      CHECK_OK(nv_chan_submit(d, nv_dev_compute(d), &p));
      CHECK_OK(nv_wait(d, sig.va + 48, 100 + (uint64_t)i, 10000));
    }
    t1 = now_s();
    printf("semaphore round trip (submit + doorbell + GPU release + host wait): %.2f us\n", (t1 - t0) / reps * 1e6);
  }
  CHECK_OK(nv_mem_free(d, &gpu));
  CHECK_OK(nv_mem_free(d, &sig));
  CHECK_OK(nv_mem_free(d, &dst));
  CHECK_OK(nv_mem_free(d, &src));
  nv_dev_close(d);
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = calloc(1, 1 << 20);
  if (buf && fread(buf, 1, (1 << 20) - 1, f) == 0) buf[0] = 0;
  fclose(f);
  return buf;
}

/* one thread, one store: what a launch costs when the kernel itself costs nothing */
static const char *EMPTY = "(kernel empty (let o (buf 0 int32 1)) (let r (range 0 1)) (sink (store (index o r) (const 1 int32) r)))";
static const char *ADD = "(kernel add (let o (buf 0 float32 256)) (let a (buf 1 float32 256)) (let b (buf 2 float32 256))"
                         " (let r (range 0 256 loop)) (sink (store (index o r) (+ (load (index a r)) (load (index b r))) r)))";

#define COMPARE_LIMIT_B ((size_t)4 << 20) /* the reference interpreter is slow: larger kernels are timed only */

/* One example on dev: pass/fail against the reference (when small), device time, throughput. */
static bool g_mock;

static void run_example(hcq_rt_device *dev, const char *target, const char *dir, const char *name, const char *text,
                        bool noopt) {
  char key[160];
  snprintf(key, sizeof key, "%.100s.%s.%.20s", name, noopt ? "noopt" : "heur", target + 4);
  nv_hw_prog p;
  cc_kbuf *ref = NULL, *got = NULL;
  size_t nref = 0, ngot = 0, total = 0;
  hcq_rt_kernel *k = NULL;
  hcq_rt_buffer *bufs[16] = {0};
  etu_run r = {0};
  bool compare = false;
  int fails = testing_failures;
  hcq_status st = nv_hw_prog_make(target, text, noopt ? "" : NULL, dir, key, false, &p);
  if (!st) st = cc_kernel_buffers(p.sink, &ref, &nref);
  if (!st) st = cc_kernel_buffers(p.sink, &got, &ngot);
  for (size_t i = 0; !st && i < nref; i++) total += ref[i].size_B;
  compare = total <= COMPARE_LIMIT_B || strstr(text, "(var ");
  if (!st && g_mock && total > ((size_t)1 << 20) && !strstr(text, "(var ")) { /* the PTX interpreter would take minutes */
    printf("  %-28s %-6s skipped on the mock (%zu MiB of buffers)\n", name, noopt ? "noopt" : "heur", total >> 20);
    g_sum.ex_skip++;
    goto done;
  }
  if (!st && compare) etu_reference(p.ctx, p.sink, ref, nref, got, ngot, &r);
  else if (!st) st = cc_kbufs_alloc_fill(got, ngot, 7);
  if (!st) st = hcq_rt_kernel_load(dev, &p.desc, &k);
  size_t nb = st ? 0 : hcq_program_nbufs(hcq_rt_kernel_program(k));
  for (size_t i = 0; !st && i < nb && i < 16; i++) {
    for (size_t j = 0; !st && j < ngot; j++)
      if ((size_t)got[j].slot == i) {
        st = hcq_rt_buffer_alloc(dev, got[j].size_B, HCQ_RT_MEM_HOST_VISIBLE, &bufs[i]);
        if (!st) memcpy(hcq_rt_buffer_host(bufs[i]), got[j].data, got[j].size_B);
      }
    if (!st && !bufs[i]) st = hcq_rt_buffer_alloc(dev, 4, HCQ_RT_MEM_HOST_VISIBLE, &bufs[i]);
  }
  hcq_var vars[8];
  for (size_t i = 0; i < r.nvals && i < 8; i++) vars[i] = (hcq_var){r.vals[i].name, r.vals[i].value};
  double best_ms = 0;
  for (int rep = 0; !st && rep < (compare ? 1 : 3); rep++) { /* timed kernels: best of 3 */
    st = hcq_rt_launch(k, bufs, nb, vars, r.nvals);
    if (!st) st = hcq_rt_sync(dev, 60000);
    double ms = hcq_rt_kernel_last_ms(k);
    if (!st && (best_ms == 0 || ms < best_ms)) best_ms = ms;
  }
  for (size_t j = 0; !st && compare && j < ngot; j++)
    if ((size_t)got[j].slot < nb) memcpy(got[j].data, hcq_rt_buffer_host(bufs[got[j].slot]), got[j].size_B);
  if (!st && compare) etu_compare(ref, nref, got, &r);
  char extra[96] = "";
  int mm = 0;
  if (!st && best_ms > 0 && sscanf(name, "matmul_%d", &mm) == 1)
    snprintf(extra, sizeof extra, "  %.1f GFLOP/s", 2.0 * mm * mm * mm / (best_ms * 1e-3) / 1e9);
  else if (!st && best_ms > 0 && !strstr(text, "(var ")) /* a variable's kernels run 777 elements */
    snprintf(extra, sizeof extra, "  %.1f GB/s of buffers", (double)total / (best_ms * 1e-3) / 1e9);
  if (st) printf("  %-28s %-6s FAIL  %s\n", name, noopt ? "noopt" : "heur", hcq_status_message(st));
  else if (!compare) printf("  %-28s %-6s RAN   %9.3f ms (not compared: %zu MiB of buffers)%s\n", name,
                            noopt ? "noopt" : "heur", best_ms, total >> 20, extra);
  else printf("  %-28s %-6s %s  %9.3f ms  %zu elements, %zu mismatches%s\n", name, noopt ? "noopt" : "heur",
              r.bad ? "FAIL" : "PASS", best_ms, r.checked, r.bad, extra);
  CHECK(!st && r.bad == 0);
  (void)fails;
  if (st || r.bad) g_sum.ex_fail++;
  else if (compare) g_sum.ex_pass++;
  else g_sum.ex_ran++;
  if (!st && mm && best_ms > 0 && 2.0 * mm * mm * mm / (best_ms * 1e-3) / 1e9 > g_sum.matmul_gflops) {
    g_sum.matmul_gflops = 2.0 * mm * mm * mm / (best_ms * 1e-3) / 1e9;
    snprintf(g_sum.matmul_name, sizeof g_sum.matmul_name, "%.50s %s", name, noopt ? "noopt" : "heur");
  }
  if (!st && best_ms > 0 && !strncmp(name, "add", 3) && (double)total / (best_ms * 1e-3) / 1e9 > g_sum.add_gbs)
    g_sum.add_gbs = (double)total / (best_ms * 1e-3) / 1e9;
done:
  hcq_status_free(st);
  for (int i = 0; i < 16; i++) hcq_rt_buffer_free(bufs[i]);
  hcq_rt_kernel_free(k);
  if (ref) cc_kbufs_free(ref, nref);
  if (got) cc_kbufs_free(got, ngot);
  nv_hw_prog_free(&p);
}

/* Empty-ish kernel launch-to-signal latency and graph replay per kernel (64 launches per replay). */
static void timings(hcq_rt_device *dev, const char *target, const char *dir) {
  nv_hw_prog p;
  char key[64];
  snprintf(key, sizeof key, "add256.heur.%.20s", target + 4);
  hcq_status st = nv_hw_prog_make(target, ADD, NULL, dir, key, false, &p);
  hcq_rt_kernel *k = NULL;
  if (!st) st = hcq_rt_kernel_load(dev, &p.desc, &k);
  hcq_rt_buffer *b[3] = {0};
  for (int i = 0; !st && i < 3; i++) st = hcq_rt_buffer_alloc(dev, 1024, HCQ_RT_MEM_HOST_VISIBLE, &b[i]);
  double t0;
  enum { NK = 64 };
  uop_ctx *ctx = NULL;
  hcq_graph *g = NULL;
  if (!st) st = uop_ctx_create(&ctx);
  if (!st) st = hcq_graph_create(ctx, &g);
  hcq_device *lower = hcq_rt_lower(dev);
  hcq_queue *q = NULL;
  if (!st) st = hcq_graph_queue(g, lower, HCQ_QUEUE_COMPUTE, &q);
  static const uint32_t zero_prefix[1024];
  const hcq_program *desc = k ? hcq_rt_kernel_program(k) : NULL;
  int64_t gd[3], ld[3];
  if (!st) st = hcq_program_launch_dims(desc, NULL, 1 << 30, gd, ld);
  hcq_val gl[3], lo[3];
  for (int d = 0; !st && d < 3; d++) gl[d] = hcq_imm((uint64_t)gd[d]), lo[d] = hcq_imm((uint64_t)ld[d]);
  for (int i = 0; !st && i < NK; i++) {
    hcq_args a;
    hcq_val bv[3] = {hcq_sym(hcq_graph_var(g, "o")), hcq_sym(hcq_graph_var(g, "a")), hcq_sym(hcq_graph_var(g, "b"))};
    st = hcq_graph_args(g, lower, desc->kernarg_prefix_B / 4, 3, 0, &a);
    if (!st) st = hcq_args_bind(&a, q, zero_prefix, bv, NULL);
    if (!st) st = hcq_queue_exec(q, hcq_imm(hcq_rt_kernel_handle(k)), &a, gl, lo);
  }
  if (!st) st = hcq_graph_finalize(g);
  const int greps = 200;
  t0 = now_s();
  for (int r = 0; !st && r < greps; r++) {
    uop_var_val v[3] = {{"o", (int64_t)hcq_rt_buffer_va(b[r % 3])}, {"a", (int64_t)hcq_rt_buffer_va(b[(r + 1) % 3])},
                        {"b", (int64_t)hcq_rt_buffer_va(b[(r + 2) % 3])}};
    st = hcq_graph_replay(g, v, 3, 5000);
  }
  if (!st) st = hcq_graph_wait(g, 5000);
  if (!st) g_sum.graph_us = (now_s() - t0) / (greps * NK) * 1e6;
  if (!st) printf("graph replay (%d launches per replay, %d replays, wall time incl. the GPU): %.3f us per kernel\n", NK,
                  greps, g_sum.graph_us);
  CHECK_OK(st);
  hcq_graph_destroy(g);
  uop_ctx_destroy(ctx);
  for (int i = 0; i < 3; i++) hcq_rt_buffer_free(b[i]);
  hcq_rt_kernel_free(k);
  nv_hw_prog_free(&p);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Launch-to-signal latency of a one-thread kernel, per launch: hcq_rt_launch until hcq_rt_sync has seen the
 * timeline value it releases (CPU clock; after 20 warm-up launches). */
static void latency(hcq_rt_device *dev, const char *target, const char *dir) {
  nv_hw_prog p;
  char key[64];
  snprintf(key, sizeof key, "empty.heur.%.20s", target + 4);
  hcq_status st = nv_hw_prog_make(target, EMPTY, NULL, dir, key, false, &p);
  hcq_rt_kernel *k = NULL;
  hcq_rt_buffer *b = NULL;
  if (!st) st = hcq_rt_kernel_load(dev, &p.desc, &k);
  if (!st) st = hcq_rt_buffer_alloc(dev, 4, HCQ_RT_MEM_HOST_VISIBLE, &b);
  enum { WARM = 20, REPS = 2000 };
  static double us[REPS];
  int n = g_mock ? REPS / 10 : REPS;
  for (int i = 0; !st && i < WARM + n; i++) {
    double t0 = now_s();
    st = hcq_rt_launch(k, &b, 1, NULL, 0);
    if (!st) st = hcq_rt_sync(dev, 5000);
    if (i >= WARM) us[i - WARM] = (now_s() - t0) * 1e6;
  }
  CHECK_OK(st);
  if (!st) {
    qsort(us, (size_t)n, sizeof us[0], cmp_double);
    for (int q = 0; q < 3; q++) g_sum.lat_us[q] = us[(size_t)n * (q == 0 ? 50 : q == 1 ? 90 : 99) / 100];
    printf("launch-to-signal latency (one-thread kernel, hcq_rt_launch until hcq_rt_sync returns, %d launches): "
           "p50 %.2f us, p90 %.2f us, p99 %.2f us, min %.2f us\n", n, g_sum.lat_us[0], g_sum.lat_us[1],
           g_sum.lat_us[2], us[0]);
  }
  hcq_rt_buffer_free(b);
  hcq_rt_kernel_free(k);
  nv_hw_prog_free(&p);
}

/* The conformance suite in its own process (it stops its device on purpose at the end); its case lines are
 * echoed and counted. */
static void conformance(const char *bin, const char *dir) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s' --only nv%s%s%s%s 2>&1", bin, g_mock ? "" : " --no-mock", dir ? " --programs '" : "",
           dir ? dir : "", dir ? "'" : "");
  printf("conformance suite (%s):\n", cmd);
  fflush(stdout);
  FILE *f = popen(cmd, "r");
  if (!f) {
    printf("  could not start it\n");
    g_sum.conf_rc = 127;
    return;
  }
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    printf("  | %s", line);
    if (strstr(line, "  case ")) {
      if (strstr(line, " ok ")) g_sum.conf_ok++;
      else g_sum.conf_fail++;
    }
  }
  int rc = pclose(f);
  g_sum.conf_rc = rc == -1 ? 127 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
  fflush(stdout);
}

static void summary(bool mock) {
  printf("\n== nv_hw_check summary%s ==\n", mock ? " (MOCK: the emulated GPU, not hardware; numbers are the mock's)" : "");
  printf("driver        %s\n", g_sum.driver);
  printf("GPU           %s, %s, %.1f GiB device memory\n", g_sum.gpu, g_sum.arch, (double)g_sum.mem_B / (1u << 30));
  if (g_sum.conf_rc < 0) printf("conformance   not run (no --conformance)\n");
  else printf("conformance   %s (%d cases ok, %d failed, exit %d)\n",
              g_sum.conf_rc == 0 && !g_sum.conf_fail ? "PASS" : "FAIL", g_sum.conf_ok, g_sum.conf_fail, g_sum.conf_rc);
  printf("examples      %d PASS vs the reference interpreter, %d ran uncompared (too big), %d FAIL, %d skipped on "
         "the mock\n", g_sum.ex_pass, g_sum.ex_ran, g_sum.ex_fail, g_sum.ex_skip);
  printf("latency       launch-to-signal p50 %.2f us, p90 %.2f us, p99 %.2f us\n", g_sum.lat_us[0], g_sum.lat_us[1],
         g_sum.lat_us[2]);
  printf("graph replay  %.3f us per kernel\n", g_sum.graph_us);
  printf("add           %.1f GB/s (best add example)\n", g_sum.add_gbs);
  printf("matmul        %.1f GFLOP/s (%s)\n", g_sum.matmul_gflops, g_sum.matmul_name[0] ? g_sum.matmul_name : "none ran");
}

static int prepare(const char *dir) {
  char *names[ETU_MAX_EXAMPLES];
  int count = etu_list_examples(names, ETU_MAX_EXAMPLES), written = 0;
  for (int i = 0; i <= count + 1; i++) { /* the examples, then add256 and empty (timings) */
    char path[512], key[160], *text;
    if (i < count) snprintf(path, sizeof path, "examples/%s", names[i]);
    text = i < count ? read_text(path) : strdup(i == count ? ADD : EMPTY);
    for (int noopt = 0; text && noopt < 2; noopt++) {
      if (i >= count && noopt) break;
      char base[128];
      snprintf(base, sizeof base, "%s", i < count ? names[i] : i == count ? "add256" : "empty");
      if (strstr(base, ".uop")) *strstr(base, ".uop") = 0;
      snprintf(key, sizeof key, "%s.%s.sm_90", base, noopt ? "noopt" : "heur");
      nv_hw_prog p;
      hcq_status st = nv_hw_prog_make("ptx:sm_90", text, noopt ? "" : NULL, dir, key, true, &p);
      CHECK_OK(st);
      written += st == HCQ_OK;
      nv_hw_prog_free(&p);
    }
    free(text);
    if (i < count) free(names[i]);
  }
  printf("nv_hw_check --prepare: %d binaries for ptx:sm_90 in %s\n", written, dir);
  return testing_summary("nv_hw_check --prepare");
}

int main(int argc, char **argv) {
  if (argc > 2 && !strcmp(argv[1], "--prepare")) return prepare(argv[2]);
  const char *conf_bin = NULL, *dir = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--conformance") && i + 1 < argc) conf_bin = argv[++i];
    else dir = argv[i];
  }
  CHECK_OK(emu_mock_from_env());
  kif *k = kif_default();
  if (!kif_exists(k, "/dev/nvidiactl") || !kif_exists(k, "/dev/nvidia-uvm")) {
    fprintf(stderr, "nv_hw_check: SKIPPED (no /dev/nvidiactl or /dev/nvidia-uvm)\n");
    return 77;
  }
  g_mock = kif_route(k, "/dev/nvidiactl") != NULL; /* HCQ_MOCK=nv installed the emulated GPU */
  printf("== nv_hw_check report%s ==\n", g_mock ? " (MOCK: the emulated GPU, not hardware)" : "");
  double t_start = now_s();
  driver_checks(k);
  if (conf_bin) conformance(conf_bin, dir);
  hcq_rt_device *dev = NULL;
  CHECK_OK(hcq_rt_open("nv:0", &dev));
  if (!dev) return testing_summary("nv_hw_check");
  hcq_device_info info;
  CHECK_OK(hcq_rt_info(dev, &info));
  printf("device %s: arch %s, target %s, %s, binaries from %s\n", info.name, info.arch, info.target,
         info.is_mock ? "MOCK (numbers are the mock's)" : "hardware", dir ? dir : "ptxas");
  char *names[ETU_MAX_EXAMPLES];
  int count = etu_list_examples(names, ETU_MAX_EXAMPLES);
  printf("examples (vs the reference interpreter; device time from timestamps):\n");
  for (int i = 0; i < count; i++) {
    char path[512], base[128];
    snprintf(path, sizeof path, "examples/%s", names[i]);
    snprintf(base, sizeof base, "%s", names[i]);
    if (strstr(base, ".uop")) *strstr(base, ".uop") = 0;
    char *text = read_text(path);
    CHECK(text != NULL);
    for (int noopt = 0; text && noopt < 2; noopt++) run_example(dev, info.target, dir, base, text, noopt);
    free(text);
    free(names[i]);
  }
  latency(dev, info.target, dir);
  timings(dev, info.target, dir);
  hcq_rt_close(dev);
  summary(g_mock);
  CHECK(g_sum.conf_rc <= 0 && !g_sum.conf_fail);
  printf("result        %s in %.0f s\n", testing_failures ? "FAIL" : "PASS", now_s() - t_start);
  return testing_summary("nv_hw_check");
}
