/* hcq bench --dev amd:N | nv:N: the GPU rows (tools/bench.c keeps the CPU suite), through the public runtime API
 * (hcq/hcq.h), in the table and JSON line formats of the CPU suite. On a mock (HCQ_MOCK=amd / nv) the table says
 * so; the same rows run unchanged on a real GPU.
 *
 *   launch_cpu     CPU cost of one exec through hcq_rt_launch (record/patch + commands into the ring + doorbell):
 *                  wall time over rounds of launches of 64 loaded kernels, minus the time spent in slow-path MMIO
 *                  stores (kif_slow_mmio_ns: a mock's doorbell hook, which on hardware is one store), median over
 *                  rounds. Rounds are synced, so no launch waits for the device.
 *   launch_latency submit -> signal: hcq_rt_launch + hcq_rt_sync of a small kernel, p50 (p90/p99 beside).
 *   graph_replay   CPU cost per kernel of an hcq_graph replay of 64 execs with a new buffer address, minus MMIO hooks.
 *   mock_exec      the mock's interpreter on the matmul row: lane-instructions/s (AMD, the mock thread's CPU time) or
 *                  thread-instructions/s (NV, this thread's CPU time: the PTX runs inside the doorbell).
 *   add, matmul    through the device, each checked against a C loop (matmul: double accumulation, relative bound).
 * Every row is verified: the launch rows check the kernel's output after the last launch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emulator_tests/amd_mock_exec.h"
#include "emulator_tests/nv_mock_ptx.h"
#include "hcq/device_info.h"
#include "hcq/graph.h"
#include "hcq/hcq.h"
#include "hcq/queue.h"
#include "hcq/signal.h"
#include "kernel_iface/kif.h"
#include "tools/bench_dev.h"
#include "tools/bench_machine.h"

enum { NK = 64, MAX_ROWS = 8 };

typedef struct drow {
  const char *name, *metric;
  char size[32], note[160];
  double value, run_ms, p50, p90, p99;
  bool verified;
} drow;

typedef struct dbench {
  hcq_rt_device *dev;
  hcq_device_info info;
  const char *devname;
  bool quick, json;
  char machine[512];
  drow rows[MAX_ROWS];
  int nrows;
  double matmul_s; /* CPU seconds the matmul row ran (mock_exec) */
  nv_mock *nvm;     /* the NV mock and its PTX runner when HCQ_MOCK=nv installed them */
  nv_mock_ptx *nvx;
} dbench;

/* The NV mock runs kernels inside the doorbell, on the launching thread: for the CPU-cost rows a hook that runs
 * nothing keeps the interpreter out of this thread's caches (the launches are still decoded and counted). */
static int run_nothing(void *ctx, nv_mock *m, const nv_mock_launch *l, char *detail) {
  (void)ctx, (void)m, (void)l, (void)detail;
  return 0;
}
static void nv_exec_off(dbench *b, bool off) {
  if (b->nvm) nv_mock_set_launch_hook(b->nvm, off ? run_nothing : nv_mock_ptx_launch, off ? NULL : b->nvx);
}

static double now_s(void) { return (double)hcq_now_ns() * 1e-9; }
static double thread_cpu_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
static double mmio_s(void) { return (double)kif_slow_mmio_ns(kif_default()) * 1e-9; }

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}
/* Sorts v; the q-quantile. */
static double quantile(double *v, int n, double q) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  int i = (int)((double)n * q);
  return v[i < n ? i : n - 1];
}

static drow *row(dbench *b, const char *name, const char *metric) {
  drow *r = &b->rows[b->nrows++];
  *r = (drow){.name = name, .metric = metric};
  return r;
}

/* out[i] = i for 32 ints: the launch rows' kernel */
static const char *k_tiny = "(kernel tiny (let o (buf 0 int32 32)) (let r (range 0 32 loop))"
                            " (sink (store (index o r) (cast int32 r) r)))";

static hcq_status load(dbench *b, const char *text, hcq_rt_program **p, hcq_rt_kernel **k, double *compile_ms) {
  double t0 = now_s();
  HCQ_TRY(hcq_rt_program_compile(b->dev, text, NULL, p));
  if (compile_ms) *compile_ms = (now_s() - t0) * 1e3;
  return hcq_rt_kernel_load(b->dev, hcq_rt_program_desc(*p), k);
}

static bool tiny_ok(hcq_rt_buffer *buf) {
  const int32_t *o = hcq_rt_buffer_host(buf);
  for (int i = 0; o && i < 32; i++)
    if (o[i] != i) return false;
  return o != NULL;
}

static hcq_status alloc_zeroed(dbench *b, size_t size_B, hcq_rt_buffer **out) {
  HCQ_TRY(hcq_rt_buffer_alloc(b->dev, size_B, HCQ_RT_MEM_HOST_VISIBLE, out));
  if (!hcq_rt_buffer_host(*out)) return hcq_status_make(HCQ_CODE_UNSUPPORTED, "%s: no host-visible memory", b->devname);
  memset(hcq_rt_buffer_host(*out), 0, size_B);
  return HCQ_OK;
}

/* The CPU-cost rounds of launch_cpu and graph_replay: before each round `prep` (not timed), then `body` timed
 * without the mock's doorbell (MMIO hook) time; round 0 warms up and is not kept. per[] gets microseconds per
 * kernel. */
typedef struct rounds_ctx {
  dbench *b;
  hcq_rt_kernel **k;
  hcq_rt_buffer **buf;
  hcq_graph *g;
  int launches0;  /* the NV mock's launch count when counting began */
  bool replay_ok; /* graph replay 0 computed the right output */
} rounds_ctx;
typedef hcq_status (*round_fn)(rounds_ctx *c, int r);

static hcq_status timed_rounds(rounds_ctx *c, int rounds, round_fn prep, round_fn body, double *per, int *n) {
  hcq_status st = HCQ_OK;
  *n = 0;
  for (int r = 0; !st && r <= rounds; r++) {
    if ((st = prep(c, r))) break;
    double t0 = now_s(), m0 = mmio_s();
    st = body(c, r);
    double dt = now_s() - t0 - (mmio_s() - m0);
    if (r) per[(*n)++] = dt / NK * 1e6;
  }
  return st;
}

static hcq_status launch_prep(rounds_ctx *c, int r) {
  (void)r;
  return hcq_rt_sync(c->b->dev, 60000);
}

static hcq_status launch_body(rounds_ctx *c, int r) {
  hcq_status st = HCQ_OK;
  for (int i = 0; !st && i < NK; i++) st = hcq_rt_launch(c->k[i], &c->buf[(r + i) & 1], 1, NULL, 0);
  return st;
}

/* replay 0 runs the kernels and is checked; the timed ones (on the NV mock: counted, not run) follow */
static hcq_status replay_prep(rounds_ctx *c, int r) {
  hcq_status st = hcq_graph_wait(c->g, 60000);
  if (!st && r == 1) {
    c->replay_ok = tiny_ok(c->buf[0]);
    c->launches0 = c->b->nvm ? nv_mock_launches(c->b->nvm) : 0;
    nv_exec_off(c->b, true);
  }
  if (!r) memset(hcq_rt_buffer_host(c->buf[0]), 0, 128);
  return st;
}

static hcq_status replay_body(rounds_ctx *c, int r) {
  uop_var_val v = {"out", (int64_t)hcq_rt_buffer_va(c->buf[r & 1])};
  return hcq_graph_replay(c->g, &v, 1, 60000);
}

/* A row of microseconds per kernel: the median of per[0..n) */
static drow *per_kernel_row(dbench *b, const char *name, double *per, int n) {
  drow *rw = row(b, name, "us");
  snprintf(rw->size, sizeof rw->size, "%d kernels", NK);
  rw->value = quantile(per, n, 0.5);
  return rw;
}

static hcq_status bench_launch(dbench *b) {
  hcq_rt_program *p = NULL;
  hcq_rt_kernel *k[NK] = {0};
  hcq_rt_buffer *buf[2] = {0};
  int rounds = b->quick ? 10 : 200, lat_n = b->quick ? 200 : 10000;
  double *per = calloc((size_t)(rounds > lat_n ? rounds : lat_n), sizeof *per);
  hcq_status st = per ? HCQ_OK : hcq_status_make(HCQ_CODE_NOMEM, "launch times");
  if (!st) st = hcq_rt_program_compile(b->dev, k_tiny, NULL, &p);
  for (int i = 0; !st && i < NK; i++) st = hcq_rt_kernel_load(b->dev, hcq_rt_program_desc(p), &k[i]);
  for (int i = 0; !st && i < 2; i++) st = alloc_zeroed(b, 128, &buf[i]);
  /* submit -> signal */
  for (int i = 0; !st && i < lat_n; i++) {
    double t0 = now_s();
    st = hcq_rt_launch(k[i % NK], &buf[i & 1], 1, NULL, 0);
    if (!st) st = hcq_rt_sync(b->dev, 60000);
    per[i] = (now_s() - t0) * 1e6;
  }
  if (!st) {
    drow *rw = row(b, "launch_latency", "us");
    snprintf(rw->size, sizeof rw->size, "%d launches", lat_n);
    rw->p90 = quantile(per, lat_n, 0.90);
    rw->p99 = quantile(per, lat_n, 0.99);
    rw->value = rw->p50 = quantile(per, lat_n, 0.5);
    rw->run_ms = rw->value / 1e3;
    rw->verified = tiny_ok(buf[0]) && tiny_ok(buf[1]);
    snprintf(rw->note, sizeof rw->note, "launch + sync%s: p50 %.2f p90 %.2f p99 %.2f us",
             b->info.is_mock ? ", mock execution included" : "", rw->p50, rw->p90, rw->p99);
  }
  /* CPU cost: round 0 warms up; the kernel runs (or on the NV mock is counted) */
  for (int i = 0; !st && i < 2; i++) memset(hcq_rt_buffer_host(buf[i]), 0, 128);
  int n = 0;
  rounds_ctx rc = {.b = b, .k = k, .buf = buf, .launches0 = b->nvm ? nv_mock_launches(b->nvm) : 0};
  nv_exec_off(b, true);
  if (!st) st = timed_rounds(&rc, rounds, launch_prep, launch_body, per, &n);
  if (!st) st = hcq_rt_sync(b->dev, 60000);
  nv_exec_off(b, false);
  if (!st) {
    drow *rw = per_kernel_row(b, "launch_cpu", per, n);
    rw->verified = b->nvm ? nv_mock_launches(b->nvm) - rc.launches0 == NK * (rounds + 1) : tiny_ok(buf[0]) && tiny_ok(buf[1]);
    snprintf(rw->note, sizeof rw->note, "hcq_rt_launch wall time minus the mock's doorbell hook%s, median of %d rounds",
             b->nvm ? " (kernels counted, not run)" : "", n);
  }
  /* graph replay: NK execs of the kernel on one queue, every replay with a new output buffer */
  uop_ctx *ctx = NULL;
  hcq_graph *g = NULL;
  if (!st) st = uop_ctx_create(&ctx);
  if (!st) st = hcq_graph_create(ctx, &g);
  hcq_device *d = hcq_rt_lower(b->dev);
  hcq_queue *q = NULL;
  if (!st) st = hcq_graph_queue(g, d, HCQ_QUEUE_COMPUTE, &q);
  const hcq_program *desc = k[0] ? hcq_rt_kernel_program(k[0]) : NULL;
  hcq_val gl[3], lo[3];
  int64_t gd[3], ld[3];
  if (!st) st = hcq_program_launch_dims(desc, NULL, INT32_MAX, gd, ld);
  for (int i = 0; !st && i < 3; i++) gl[i] = hcq_imm((uint64_t)gd[i]), lo[i] = hcq_imm((uint64_t)ld[i]);
  static const uint32_t zero_prefix[1024];
  const uop *out = g ? hcq_graph_var(g, "out") : NULL;
  if (!st && (!out || desc->kernarg_prefix_B / 4 > 1024))
    st = hcq_status_make(HCQ_CODE_NOMEM, "graph variable");
  for (int i = 0; !st && i < NK; i++) {
    hcq_args a;
    st = hcq_graph_args(g, d, desc->kernarg_prefix_B / 4, 1, 0, &a);
    if (!st) st = hcq_args_bind(&a, q, zero_prefix, (hcq_val[]){hcq_sym(out)}, NULL);
    if (!st) st = hcq_queue_exec(q, hcq_imm(hcq_rt_kernel_handle(k[0])), &a, gl, lo);
  }
  if (!st) st = hcq_graph_finalize(g);
  rc.g = g;
  if (!st) st = timed_rounds(&rc, rounds, replay_prep, replay_body, per, &n);
  if (!st) st = hcq_graph_wait(g, 60000);
  nv_exec_off(b, false);
  if (!st) {
    drow *rw = per_kernel_row(b, "graph_replay", per, n);
    rw->verified = rc.replay_ok && (!b->nvm || nv_mock_launches(b->nvm) - rc.launches0 == NK * rounds);
    snprintf(rw->note, sizeof rw->note, "per kernel, replay minus the mock's doorbell hook, median of %d replays", n);
  }
  hcq_graph_destroy(g);
  uop_ctx_destroy(ctx);
  for (int i = 0; i < NK; i++) hcq_rt_kernel_free(k[i]);
  for (int i = 0; i < 2; i++) hcq_rt_buffer_free(buf[i]);
  hcq_rt_program_free(p);
  free(per);
  return st;
}

static char *kernel_text(const char *fmt, long a, long b2, long c, long d, long e, long f, long g, long h, long i) {
  char *s = malloc(1024);
  if (s) snprintf(s, 1024, fmt, a, b2, c, d, e, f, g, h, i);
  return s;
}

/* c = a + b (n floats) */
static hcq_status bench_add(dbench *b) {
  long n = b->quick ? 4096 : 1 << 18;
  char *text = kernel_text("(kernel add (let out (buf 0 float32 %ld)) (let a (buf 1 float32 %ld))"
                           " (let b (buf 2 float32 %ld)) (let r0 (range 0 %ld loop))"
                           " (sink (store (index out r0) (+ (load (index a r0)) (load (index b r0))) r0)))",
                           n, n, n, n, 0, 0, 0, 0, 0);
  hcq_rt_program *p = NULL;
  hcq_rt_kernel *k = NULL;
  hcq_rt_buffer *buf[3] = {0};
  double compile_ms = 0;
  hcq_status st = text ? load(b, text, &p, &k, &compile_ms) : hcq_status_make(HCQ_CODE_NOMEM, "add");
  for (int i = 0; !st && i < 3; i++) st = alloc_zeroed(b, (size_t)n * 4, &buf[i]);
  float *o = st ? NULL : hcq_rt_buffer_host(buf[0]), *x = st ? NULL : hcq_rt_buffer_host(buf[1]),
        *y = st ? NULL : hcq_rt_buffer_host(buf[2]);
  for (long i = 0; !st && i < n; i++) x[i] = (float)(i % 1000) * 0.37f - 11.0f, y[i] = 1.0f / (float)(i + 1);
  double t0 = now_s();
  if (!st) st = hcq_rt_launch(k, buf, 3, NULL, 0);
  if (!st) st = hcq_rt_sync(b->dev, 600000);
  double ms = (now_s() - t0) * 1e3, dev_ms = k ? hcq_rt_kernel_last_ms(k) : 0;
  if (!st) {
    drow *r = row(b, "add", "GB/s");
    snprintf(r->size, sizeof r->size, "%ld", n);
    r->run_ms = dev_ms > 0 ? dev_ms : ms;
    r->value = 12.0 * (double)n / (r->run_ms * 1e-3) / 1e9;
    long bad = 0;
    for (long i = 0; i < n; i++) bad += o[i] != x[i] + y[i];
    r->verified = bad == 0;
    snprintf(r->note, sizeof r->note, "%s; against a C loop%s", dev_ms > 0 ? "device timestamps" : "launch + sync",
             bad ? ", MISMATCH" : "");
  }
  for (int i = 0; i < 3; i++) hcq_rt_buffer_free(buf[i]);
  hcq_rt_kernel_free(k);
  hcq_rt_program_free(p);
  free(text);
  return st;
}

/* c (n x n) = a * b, row-major; the mock's interpreter speed is measured on it */
static hcq_status bench_matmul(dbench *b) {
  long n = b->quick ? 32 : 128;
  char *text = kernel_text("(kernel matmul (let c (buf 0 float32 %ld)) (let a (buf 1 float32 %ld))"
                           " (let b (buf 2 float32 %ld)) (let r0 (range 0 %ld loop)) (let r1 (range 1 %ld loop))"
                           " (let k (range 1002 %ld reduce)) (sink (store (index c (+ (* r0 %ld) r1))"
                           " (reduce add (* (load (index a (+ (* r0 %ld) k))) (load (index b (+ (* k %ld) r1)))) k)"
                           " r0 r1)))",
                           n * n, n * n, n * n, n, n, n, n, n, n);
  hcq_rt_program *p = NULL;
  hcq_rt_kernel *k = NULL;
  hcq_rt_buffer *buf[3] = {0};
  double compile_ms = 0;
  hcq_status st = text ? load(b, text, &p, &k, &compile_ms) : hcq_status_make(HCQ_CODE_NOMEM, "matmul");
  for (int i = 0; !st && i < 3; i++) st = alloc_zeroed(b, (size_t)(n * n) * 4, &buf[i]);
  float *c = st ? NULL : hcq_rt_buffer_host(buf[0]), *x = st ? NULL : hcq_rt_buffer_host(buf[1]),
        *y = st ? NULL : hcq_rt_buffer_host(buf[2]);
  for (long i = 0; !st && i < n * n; i++)
    x[i] = (float)((i * 7) % 13) * 0.25f - 1.5f, y[i] = (float)((i * 5) % 11) * -0.125f + 0.6f;
  double t0 = now_s(), c0 = thread_cpu_s();
  if (!st) st = hcq_rt_launch(k, buf, 3, NULL, 0);
  if (!st) st = hcq_rt_sync(b->dev, 600000);
  b->matmul_s = thread_cpu_s() - c0;
  double ms = (now_s() - t0) * 1e3, dev_ms = k ? hcq_rt_kernel_last_ms(k) : 0;
  if (!st) {
    drow *r = row(b, "matmul", "GFLOP/s");
    snprintf(r->size, sizeof r->size, "%ldx%ld", n, n);
    r->run_ms = dev_ms > 0 ? dev_ms : ms;
    r->value = 2.0 * (double)(n * n * n) / (r->run_ms * 1e-3) / 1e9;
    long bad = 0;
    for (long i = 0; i < n; i++)
      for (long j = 0; j < n; j++) {
        double want = 0, mag = 0;
        for (long kk = 0; kk < n; kk++)
          want += (double)x[i * n + kk] * y[kk * n + j], mag += fabs((double)x[i * n + kk] * y[kk * n + j]);
        bad += !(fabs(c[i * n + j] - want) <= 1e-5 * mag + 1e-6);
      }
    r->verified = bad == 0;
    snprintf(r->note, sizeof r->note, "%s; against a C loop (double)%s", dev_ms > 0 ? "device timestamps" : "launch + sync",
             bad ? ", MISMATCH" : "");
  }
  for (int i = 0; i < 3; i++) hcq_rt_buffer_free(buf[i]);
  hcq_rt_kernel_free(k);
  hcq_rt_program_free(p);
  free(text);
  return st;
}

static void print_json(const dbench *b, const drow *r) {
  printf("{\"name\":\"%s\",\"metric\":\"%s\",\"value\":%.6g,\"baseline\":null,\"baseline_value\":null,\"ratio\":null,"
         "\"baseline_config\":\"\",\"machine\":\"%s\",\"device\":\"%s\",\"mock\":%s",
         r->name, r->metric, r->value, b->machine, b->devname, b->info.is_mock ? "true" : "false");
  if (r->p90 > 0) printf(",\"p50_us\":%.4g,\"p90_us\":%.4g,\"p99_us\":%.4g", r->p50, r->p90, r->p99);
  printf(",\"verified\":%s,\"threads\":1,\"size\":\"%s\",\"opts\":\"-\",\"compile_ms\":0,\"run_ms\":%.4f,"
         "\"quick\":%s,\"note\":\"%s\"}\n",
         r->verified ? "true" : "false", r->size, r->run_ms, b->quick ? "true" : "false", r->note);
}

static void print_table(const dbench *b) {
  printf("hcq bench on %s (%s, %s)%s%s\n", b->devname, b->info.name, b->info.target,
         b->info.is_mock ? ": a MOCK GPU (emulated driver and interpreter; CPU costs are real, device speeds are not)"
                         : "",
         b->quick ? " (quick sizes)" : "");
  printf("machine: %s\n", b->machine);
  printf("%-20s %-13s %-34s %9s %10s %10s %-8s %-15s %9s %6s %s\n", "kernel", "size", "opts", "compile", "run ms",
         "value", "metric", "baseline", "base", "ratio", "ok");
  for (int i = 0; i < b->nrows; i++) {
    const drow *r = &b->rows[i];
    printf("%-20s %-13s %-34.34s %9.1f %10.3f %10.3f %-8s %-15s %9s %6s %s%s%s\n", r->name, r->size, "-", 0.0,
           r->run_ms, r->value, r->metric, "null", "-", "-", r->verified ? "yes" : "NO", r->note[0] ? "  " : "",
           r->note);
  }
}

static bool wanted(const char *only, const char *name) {
  if (!only) return true;
  size_t n = strlen(name);
  for (const char *s = only; *s;) {
    const char *e = strchr(s, ',');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (len == n && !strncmp(s, name, n)) return true;
    s += len + (e != NULL);
  }
  return false;
}

int hcq_bench_dev(const char *devname, bool json, bool quick, const char *only) {
  dbench b = {.devname = devname, .json = json, .quick = quick};
  hcq_status st = hcq_rt_open(devname, &b.dev);
  if (!st) st = hcq_rt_info(b.dev, &b.info);
  if (st) {
    fprintf(stderr, "hcq bench: %s\n", hcq_status_message(st));
    hcq_status_free(st);
    hcq_rt_close(b.dev);
    return 1;
  }
  bench_machine_line(b.machine, sizeof b.machine);
  amd_mock_exec *ax = NULL;
  amd_mock_installed(&ax);
  nv_mock_ptx *nx = nv_mock_env_runner(&b.nvm);
  b.nvx = nx;
  if (b.nvm && strncasecmp(devname, "nv", 2)) b.nvm = NULL;
  bool is_amd = !strncmp(devname, "amd", 3) || !strncmp(devname, "AMD", 3);
  amd_mock_exec_stats s0 = {0}, s1 = {0};
  uint64_t ni0 = 0;
  if (!st && (wanted(only, "launch_cpu") || wanted(only, "launch_latency") || wanted(only, "graph_replay") ||
              wanted(only, "launch")))
    st = hcq_status_annotate(bench_launch(&b), "launch rows");
  if (!st && wanted(only, "add")) st = hcq_status_annotate(bench_add(&b), "add");
  if (!st && (wanted(only, "matmul") || wanted(only, "mock_exec"))) {
    if (ax) amd_mock_exec_stats_get(ax, &s0);
    if (nx) ni0 = nv_mock_ptx_thread_instructions(nx);
    st = hcq_status_annotate(bench_matmul(&b), "matmul");
    if (ax) amd_mock_exec_stats_get(ax, &s1);
    bool amd = is_amd && ax, nv = !is_amd && nx;
    double ins = amd ? (double)(s1.lane_insts - s0.lane_insts) : nv ? (double)(nv_mock_ptx_thread_instructions(nx) - ni0) : 0;
    double sec = amd ? (double)(s1.exec_ns - s0.exec_ns) * 1e-9 : b.matmul_s;
    if (!st && (amd || nv) && sec > 0) {
      drow *r = row(&b, "mock_exec", amd ? "M lane-instr/s" : "M thread-instr/s");
      snprintf(r->size, sizeof r->size, "matmul row");
      r->value = ins / sec / 1e6;
      r->run_ms = sec * 1e3;
      r->verified = b.nrows > 1 && b.rows[b.nrows - 2].verified; /* the matmul it ran */
      snprintf(r->note, sizeof r->note, "%s interpreter, one core (%.3g instructions)", amd ? "RDNA3" : "PTX", ins);
    }
  }
  int rc = 0;
  if (st) {
    fprintf(stderr, "hcq bench: %s: %s\n", devname, hcq_status_message(st));
    hcq_status_free(st);
    rc = 1;
  }
  if (json)
    for (int i = 0; i < b.nrows; i++) print_json(&b, &b.rows[i]);
  else print_table(&b);
  for (int i = 0; i < b.nrows; i++) rc |= !b.rows[i].verified;
  hcq_rt_close(b.dev);
  return rc;
}
