/* NV driver costs on the mock GPU (HCQ_MOCK=nv's Hopper mock in front of kif_default, so nv:0 is opened as on
 * hardware): the CPU cost of one exec through the public API (hcq_rt_launch: argument checks, launch sizes evaluated,
 * patch + push buffer into the command ring + GPFIFO entry + GP_PUT + doorbell) and through the queue API (a recorded
 * exec + signal, patched with fresh buffers and submitted: the driver's own part), the CPU cost per kernel of an hcq_graph replay (QMD fields and push-buffer
 * words patched, one submit per queue), both with a launch hook that runs nothing and with the mock's channel
 * processing inside the doorbell subtracted (nv_mock_doorbell_ns), and the PTX interpreter's rate in
 * thread-instructions per second of one core on the matmul example. Goals (issue 12): exec <= 1 us, replay <= 0.2
 * us per kernel, >= 100M thread-instructions/s. Prints a table, then one JSON line per result. Needs ptxas. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/examples_test_util.h"
#include "emulator_tests/nv_mock_ptx.h"
#include "hcq/graph.h"
#include "hcq/hcq.h"
#include "hcq/queue.h"
#include "hcq/signal.h"

#define TRY(expr)                                                                   \
  do {                                                                              \
    hcq_status s_ = (expr);                                                         \
    if (s_) {                                                                       \
      fprintf(stderr, "nv_mock_bench: %s: %s\n", #expr, hcq_status_message(s_));    \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int noop_hook(void *ctx, nv_mock *m, const nv_mock_launch *l, char *detail) {
  (void)ctx, (void)m, (void)l, (void)detail;
  return 0;
}

typedef struct result {
  const char *name, *unit;
  double value;
  long iters;
} result;
static result results[8];
static int nresults;

static const char *ADD = "(kernel add (let o (buf 0 float32 256)) (let a (buf 1 float32 256)) (let b (buf 2 float32 256))"
                         " (let r (range 0 256 loop)) (sink (store (index o r) (+ (load (index a r)) (load (index b r))) r)))";

int main(int argc, char **argv) {
  long iters = argc > 1 ? atol(argv[1]) : 20000;
  nv_mock *m;
  nv_mock_ptx *ptx;
  TRY(nv_mock_create(&(nv_mock_config){.arch = NV_MOCK_HOPPER}, &m));
  TRY(nv_mock_ptx_create(&ptx));
  TRY(nv_mock_attach(m, kif_default()));
  hcq_rt_device *dev;
  TRY(hcq_rt_open("nv:0", &dev));
  hcq_rt_program *p;
  TRY(hcq_rt_program_compile(dev, ADD, NULL, &p));
  hcq_rt_kernel *k;
  TRY(hcq_rt_kernel_load(dev, hcq_rt_program_desc(p), &k));
  hcq_rt_buffer *b[3];
  for (int i = 0; i < 3; i++) TRY(hcq_rt_buffer_alloc(dev, 1024, HCQ_RT_MEM_HOST_VISIBLE, &b[i]));

  /* 1. one exec through the public API, the kernel itself not run */
  nv_mock_set_launch_hook(m, noop_hook, NULL);
  for (int i = 0; i < 100; i++) TRY(hcq_rt_launch(k, b, 3, NULL, 0)); /* warm up */
  TRY(hcq_rt_sync(dev, 5000));
  uint64_t mock0 = nv_mock_doorbell_ns(m);
  double t0 = now_s();
  for (long i = 0; i < iters; i++) {
    hcq_rt_buffer *rot[3] = {b[i % 3], b[(i + 1) % 3], b[(i + 2) % 3]}; /* fresh addresses every launch */
    TRY(hcq_rt_launch(k, rot, 3, NULL, 0));
  }
  TRY(hcq_rt_sync(dev, 5000));
  double total = now_s() - t0, mock = (double)(nv_mock_doorbell_ns(m) - mock0) * 1e-9;
  results[nresults++] = (result){"exec_cpu_cost_mock_excluded", "us", (total - mock) / (double)iters * 1e6, iters};
  results[nresults++] = (result){"exec_with_mock_channel_processing", "us", total / (double)iters * 1e6, iters};

  /* 2. graph replay: NK launches of the kernel, every replay with new buffer addresses */
  enum { NK = 64 };
  uop_ctx *ctx;
  TRY(uop_ctx_create(&ctx));
  hcq_graph *g;
  TRY(hcq_graph_create(ctx, &g));
  hcq_device *lower = hcq_rt_lower(dev);
  hcq_queue *q;
  TRY(hcq_graph_queue(g, lower, HCQ_QUEUE_COMPUTE, &q));
  const hcq_program *desc = hcq_rt_kernel_program(k);
  const uop *vo = hcq_graph_var(g, "o"), *va = hcq_graph_var(g, "a"), *vb = hcq_graph_var(g, "b");
  static const uint32_t zero_prefix[1024];
  hcq_val one[3] = {hcq_imm(1), hcq_imm(1), hcq_imm(1)}, gl[3], lo[3];
  int64_t gdim[3], ldim[3];
  TRY(hcq_program_launch_dims(desc, NULL, 1 << 30, gdim, ldim));
  for (int d = 0; d < 3; d++) gl[d] = hcq_imm((uint64_t)gdim[d]), lo[d] = hcq_imm((uint64_t)ldim[d]);
  (void)one;
  for (int i = 0; i < NK; i++) {
    hcq_args a;
    TRY(hcq_graph_args(g, lower, desc->kernarg_prefix_B / 4, 3, 0, &a));
    hcq_val bufs[3] = {hcq_sym(vo), hcq_sym(va), hcq_sym(vb)};
    TRY(hcq_args_bind(&a, q, zero_prefix, bufs, NULL));
    TRY(hcq_queue_exec(q, hcq_imm(hcq_rt_kernel_handle(k)), &a, gl, lo));
  }
  TRY(hcq_graph_finalize(g));

  /* 1b. the driver's own exec: one recorded queue (exec + signal) patched with fresh buffers and submitted */
  hcq_queue *eq;
  TRY(hcq_queue_create(lower, HCQ_QUEUE_COMPUTE, &eq));
  hcq_mem argm;
  TRY(lower->ops->mem_alloc(lower, 4096, HCQ_MEM_KERNARG, &argm));
  hcq_args ea;
  TRY(hcq_args_init(&ea, argm.host, argm.va, argm.size_B, desc->kernarg_prefix_B / 4, 3, 0));
  const uop *eo = uop_var(ctx, "eo", 0, INT64_MAX, uop_dt(UOP_UINT64)), *eav = uop_var(ctx, "ea", 0, INT64_MAX, uop_dt(UOP_UINT64));
  hcq_val ebufs[3] = {hcq_sym(eo), hcq_sym(eav), hcq_imm(hcq_rt_buffer_va(b[2]))};
  TRY(hcq_args_bind(&ea, eq, zero_prefix, ebufs, NULL));
  TRY(hcq_queue_exec(eq, hcq_imm(hcq_rt_kernel_handle(k)), &ea, gl, lo));
  hcq_signal *es;
  TRY(hcq_signal_create(lower, "bench", 0, &es));
  const uop *ev = uop_var(ctx, "ev", 0, INT64_MAX, uop_dt(UOP_UINT64));
  TRY(hcq_queue_signal(eq, hcq_imm(es->va), hcq_sym(ev)));
  mock0 = nv_mock_doorbell_ns(m);
  t0 = now_s();
  for (long i = 0; i < iters; i++) {
    uop_var_val v[3] = {{"eo", (int64_t)hcq_rt_buffer_va(b[i % 2])}, {"ea", (int64_t)hcq_rt_buffer_va(b[(i + 1) % 2])},
                        {"ev", i + 1}};
    TRY(hcq_queue_submit(eq, lower, v, 3));
  }
  TRY(hcq_signal_wait(es, (uint64_t)iters, 5000));
  total = now_s() - t0, mock = (double)(nv_mock_doorbell_ns(m) - mock0) * 1e-9;
  results[nresults++] = (result){"queue_exec_submit_mock_excluded", "us", (total - mock) / (double)iters * 1e6, iters};
  hcq_signal_destroy(es);
  hcq_queue_destroy(eq);
  lower->ops->mem_free(lower, &argm);

  long reps = iters / NK > 10 ? iters / NK : 10;
  mock0 = nv_mock_doorbell_ns(m);
  int launches0 = nv_mock_launches(m);
  t0 = now_s();
  for (long r = 0; r < reps; r++) {
    uop_var_val v[3] = {{"o", (int64_t)hcq_rt_buffer_va(b[r % 3])}, {"a", (int64_t)hcq_rt_buffer_va(b[(r + 1) % 3])},
                        {"b", (int64_t)hcq_rt_buffer_va(b[(r + 2) % 3])}};
    TRY(hcq_graph_replay(g, v, 3, 5000));
  }
  TRY(hcq_graph_wait(g, 5000));
  total = now_s() - t0, mock = (double)(nv_mock_doorbell_ns(m) - mock0) * 1e-9;
  if (nv_mock_launches(m) - launches0 != reps * NK) {
    fprintf(stderr, "nv_mock_bench: %d launches for %ld replays of %d kernels\n", nv_mock_launches(m) - launches0, reps, NK);
    return 1;
  }
  results[nresults++] = (result){"graph_replay_per_kernel_mock_excluded", "us",
                                 (total - mock) / (double)(reps * NK) * 1e6, reps};
  hcq_graph_destroy(g);
  uop_ctx_destroy(ctx);

  /* 3. the PTX interpreter: the matmul example (heuristic opts) on one core */
  nv_mock_set_launch_hook(m, nv_mock_ptx_launch, ptx);
  FILE *f = fopen("examples/matmul.uop", "rb");
  static char text[1 << 16];
  size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
  if (f) fclose(f);
  text[n] = 0;
  hcq_rt_program *mp;
  TRY(hcq_rt_program_compile(dev, text, NULL, &mp));
  hcq_rt_kernel *mk;
  TRY(hcq_rt_kernel_load(dev, hcq_rt_program_desc(mp), &mk));
  const hcq_program *md = hcq_rt_kernel_program(mk);
  size_t nb = hcq_program_nbufs(md);
  hcq_rt_buffer *mb[8];
  for (size_t i = 0; i < nb && i < 8; i++) {
    int64_t ne = md->params[i].nelems > 0 ? md->params[i].nelems : 1;
    TRY(hcq_rt_buffer_alloc(dev, (size_t)ne * 8, HCQ_RT_MEM_HOST_VISIBLE, &mb[i]));
  }
  uint64_t ins0 = nv_mock_ptx_thread_instructions(ptx);
  double c0 = cpu_s();
  int runs = 3;
  for (int r = 0; r < runs; r++) TRY(hcq_rt_launch(mk, mb, nb, NULL, 0));
  TRY(hcq_rt_sync(dev, 60000));
  double cdt = cpu_s() - c0;
  double ins = (double)(nv_mock_ptx_thread_instructions(ptx) - ins0);
  results[nresults++] = (result){"ptx_interp_matmul", "Mthread_instr_per_s", ins / cdt / 1e6, runs};

  printf("%-44s %14s %-20s %s\n", "case", "value", "unit", "iters");
  for (int i = 0; i < nresults; i++)
    printf("%-44s %14.3f %-20s %ld\n", results[i].name, results[i].value, results[i].unit, results[i].iters);
  for (int i = 0; i < nresults; i++)
    printf("{\"bench\":\"nv_mock\",\"case\":\"%s\",\"%s\":%.4f,\"iters\":%ld}\n", results[i].name, results[i].unit,
           results[i].value, results[i].iters);
  for (size_t i = 0; i < nb && i < 8; i++) hcq_rt_buffer_free(mb[i]);
  hcq_rt_kernel_free(mk);
  hcq_rt_program_free(mp);
  for (int i = 0; i < 3; i++) hcq_rt_buffer_free(b[i]);
  hcq_rt_kernel_free(k);
  hcq_rt_program_free(p);
  hcq_rt_close(dev);
  TRY(nv_mock_detach(m));
  nv_mock_destroy(m);
  nv_mock_ptx_destroy(ptx);
  return 0;
}
