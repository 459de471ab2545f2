/* AMD driver costs on the mock GPU (HCQ_MOCK-free: the mock is installed in-process): the CPU cost of one kernel
 * launch through hcq_rt_launch (record/patch + PM4 into the ring + doorbell; wall time over batches of launches of
 * 64 loaded kernels minus the time in the mock's doorbell hook, kif_slow_mmio_ns: the mock executes on its own
 * thread, and on hardware the doorbell is one store), graph
 * replay per kernel (a graph of 64 dispatches replayed with a new buffer address), and the mock's execution speed
 * (lane-instructions per second of the RDNA3 interpreter on examples/matmul.uop with the heuristic). Prints a
 * table, then one JSON line. Goals (issue 11): launch <= 1 us, replay <= 0.2 us per kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emulator_tests/amd_mock_exec.h"
#include "hcq/args.h"
#include "hcq/graph.h"
#include "hcq/hcq.h"
#include "hcq/queue.h"
#include "hcq/signal.h"
#include "kernel_iface/kif.h"

#define NK 64
#define ROUNDS 50

#define DIE_ON(call)                                                                                                \
  do {                                                                                                              \
    hcq_status st_ = (call);                                                                                        \
    if (st_) {                                                                                                      \
      fprintf(stderr, "amd_mock_bench: %s\n", hcq_status_message(st_));                                             \
      exit(1);                                                                                                      \
    }                                                                                                               \
  } while (0)

static const char *k_tiny = "(kernel tiny (let o (buf 0 int32 32)) (let r (range 0 32 loop))\n"
                            " (sink (store (index o r) (cast int32 r) r)))\n";

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *s = calloc(1, 1 << 20);
  if (s) (void)!fread(s, 1, (1 << 20) - 1, f);
  fclose(f);
  return s;
}

static int64_t dim(const char *e) {
  int64_t v = 1;
  DIE_ON(hcq_expr_eval(e, NULL, NULL, 0, &v));
  return v;
}

int main(void) {
  DIE_ON(amd_mock_install(kif_default()));
  amd_mock_exec *x;
  amd_mock_installed(&x);
  hcq_rt_device *dev;
  DIE_ON(hcq_rt_open("amd:0", &dev));
  hcq_rt_program *p;
  DIE_ON(hcq_rt_program_compile(dev, k_tiny, NULL, &p));
  hcq_rt_kernel *k[NK];
  for (int i = 0; i < NK; i++) DIE_ON(hcq_rt_kernel_load(dev, hcq_rt_program_desc(p), &k[i]));
  hcq_rt_buffer *b[2];
  for (int i = 0; i < 2; i++) DIE_ON(hcq_rt_buffer_alloc(dev, 128, HCQ_RT_MEM_HOST_VISIBLE, &b[i]));
  /* launches */
  double launch_s = 0;
  for (int r = 0; r < ROUNDS; r++) {
    DIE_ON(hcq_rt_sync(dev, 10000));
    uint64_t t0 = hcq_now_ns(), m0 = kif_slow_mmio_ns(kif_default());
    for (int i = 0; i < NK; i++) DIE_ON(hcq_rt_launch(k[i], &b[(r + i) & 1], 1, NULL, 0));
    uint64_t dt = hcq_now_ns() - t0 - (kif_slow_mmio_ns(kif_default()) - m0);
    if (r) launch_s += (double)dt * 1e-9; /* round 0 warms up */
  }
  DIE_ON(hcq_rt_sync(dev, 10000));
  double launch_us = launch_s / ((ROUNDS - 1) * NK) * 1e6;
  /* graph replay */
  hcq_device *d = hcq_rt_lower(dev);
  uop_ctx *ctx;
  DIE_ON(uop_ctx_create(&ctx));
  hcq_graph *g;
  DIE_ON(hcq_graph_create(ctx, &g));
  hcq_queue *q;
  DIE_ON(hcq_graph_queue(g, d, HCQ_QUEUE_COMPUTE, &q));
  const hcq_program *desc = hcq_rt_kernel_program(k[0]);
  hcq_val gl[3], lo[3];
  for (int i = 0; i < 3; i++) gl[i] = hcq_imm((uint64_t)dim(desc->global[i])), lo[i] = hcq_imm((uint64_t)dim(desc->local[i]));
  const uop *out = hcq_graph_var(g, "out");
  for (int i = 0; i < NK; i++) {
    hcq_args a;
    DIE_ON(hcq_graph_args(g, d, 0, 1, 0, &a));
    DIE_ON(hcq_args_bind(&a, q, NULL, (hcq_val[]){hcq_sym(out)}, NULL));
    DIE_ON(hcq_queue_exec(q, hcq_imm(hcq_rt_kernel_handle(k[0])), &a, gl, lo));
  }
  DIE_ON(hcq_graph_finalize(g));
  double replay_s = 0;
  for (int r = 0; r < ROUNDS; r++) {
    DIE_ON(hcq_graph_wait(g, 10000));
    uop_var_val v = {"out", (int64_t)hcq_rt_buffer_va(b[r & 1])};
    uint64_t t0 = hcq_now_ns(), m0 = kif_slow_mmio_ns(kif_default());
    DIE_ON(hcq_graph_replay(g, &v, 1, 10000));
    if (r) replay_s += (double)(hcq_now_ns() - t0 - (kif_slow_mmio_ns(kif_default()) - m0)) * 1e-9;
  }
  DIE_ON(hcq_graph_wait(g, 10000));
  double replay_us = replay_s / ((ROUNDS - 1) * NK) * 1e6;
  int bad = 0;
  for (int i = 0; i < 32; i++) bad += ((int32_t *)hcq_rt_buffer_host(b[1]))[i] != i;
  hcq_graph_destroy(g);
  uop_ctx_destroy(ctx);
  /* execution speed: matmul with the heuristic's opts */
  amd_mock_exec_stats s0, s1;
  amd_mock_exec_stats_get(x, &s0);
  char *text = read_text("examples/matmul.uop");
  hcq_rt_program *mp = NULL;
  hcq_rt_kernel *mk = NULL;
  if (text) DIE_ON(hcq_rt_program_compile(dev, text, NULL, &mp));
  if (mp) DIE_ON(hcq_rt_kernel_load(dev, hcq_rt_program_desc(mp), &mk));
  hcq_rt_buffer *mb[8] = {0};
  size_t nb = mk ? hcq_program_nbufs(hcq_rt_kernel_program(mk)) : 0;
  for (size_t i = 0; i < nb && i < 8; i++) {
    const hcq_param *pa = &hcq_rt_kernel_program(mk)->params[i];
    DIE_ON(hcq_rt_buffer_alloc(dev, (size_t)(pa->nelems > 0 ? pa->nelems : 1) * 8, HCQ_RT_MEM_HOST_VISIBLE, &mb[i]));
  }
  for (int r = 0; mk && r < 3; r++) DIE_ON(hcq_rt_launch(mk, mb, nb, NULL, 0));
  DIE_ON(hcq_rt_sync(dev, 60000));
  amd_mock_exec_stats_get(x, &s1);
  double lane = (double)(s1.lane_insts - s0.lane_insts), sec = (double)(s1.exec_ns - s0.exec_ns) * 1e-9;
  double mlips = sec > 0 ? lane / sec / 1e6 : 0;
  printf("%-44s %10s %8s\n", "amd mock (gfx1100)", "measured", "goal");
  printf("%-44s %8.3f us %8s\n", "launch CPU cost (mock's doorbell hook excluded)", launch_us, "<= 1");
  printf("%-44s %8.3f us %8s\n", "graph replay per kernel (64 per graph)", replay_us, "<= 0.2");
  printf("%-44s %8.1f M/s %7s\n", "mock execution, lane-instructions", mlips, ">= 200");
  printf("{\"bench\":\"amd_mock\",\"launch_us\":%.4f,\"replay_per_kernel_us\":%.4f,\"mock_mlane_insts_per_s\":%.1f,"
         "\"replay_results_ok\":%s}\n", launch_us, replay_us, mlips, bad ? "false" : "true");
  for (size_t i = 0; i < 8; i++) hcq_rt_buffer_free(mb[i]);
  hcq_rt_kernel_free(mk);
  hcq_rt_program_free(mp);
  free(text);
  for (int i = 0; i < NK; i++) hcq_rt_kernel_free(k[i]);
  for (int i = 0; i < 2; i++) hcq_rt_buffer_free(b[i]);
  hcq_rt_program_free(p);
  hcq_rt_close(dev);
  amd_mock_uninstall();
  return bad != 0;
}
