/* The AMD device through the public runtime API on the mock, beyond single launches: two mock GPUs (amd:0 and
 * amd:1) running kernels at once, a graph of real dispatches replayed with fresh buffer addresses and values, and
 * launches across a timeline wrap. Results are computed here from the inputs. */
#include <string.h>

#include "base/testing.h"
#include "compiler/cc_test_util.h"
#include "emulator_tests/amd_mock_exec.h"
#include "hcq/args.h"
#include "hcq/device.h"
#include "hcq/graph.h"
#include "hcq/hcq.h"
#include "hcq/queue.h"
#include "hcq/signal.h"

/* out[i] = n * 1000 + i for i < n */
static const char *k_store = "(kernel store (let o (buf 0 int32 64)) (let n (var n 1 64 index)) (let r (range 0 n loop))\n"
                             " (sink (store (index o r) (+ (* (cast int32 n) (const 1000 int32)) (cast int32 r)) r)))\n";

typedef struct gpu {
  hcq_rt_device *dev;
  hcq_rt_program *p;
  hcq_rt_kernel *k;
  hcq_rt_buffer *b[2];
} gpu;

static void gpu_open(gpu *g, const char *name) {
  memset(g, 0, sizeof *g);
  CHECK_OK(hcq_rt_open(name, &g->dev));
  CHECK_OK(hcq_rt_program_compile(g->dev, k_store, "", &g->p));
  CHECK_OK(hcq_rt_kernel_load(g->dev, hcq_rt_program_desc(g->p), &g->k));
  for (int i = 0; i < 2; i++) CHECK_OK(hcq_rt_buffer_alloc(g->dev, 256, HCQ_RT_MEM_HOST_VISIBLE, &g->b[i]));
}

static void gpu_close(gpu *g) {
  for (int i = 0; i < 2; i++) hcq_rt_buffer_free(g->b[i]);
  hcq_rt_kernel_free(g->k);
  hcq_rt_program_free(g->p);
  hcq_rt_close(g->dev);
}

static int check_store(const hcq_rt_buffer *b, int n, int32_t rest) {
  const int32_t *o = hcq_rt_buffer_host(b);
  int bad = 0;
  for (int i = 0; i < 64; i++) bad += o[i] != (i < n ? n * 1000 + i : rest);
  return bad;
}

/* Both GPUs get launches interleaved before either is synchronized. */
static void test_two_gpus(void) {
  gpu g[2];
  gpu_open(&g[0], "amd:0");
  gpu_open(&g[1], "amd:1");
  hcq_device_info info;
  CHECK_OK(hcq_rt_info(g[1].dev, &info));
  CHECK_EQ_STR(info.name, "AMD:1");
  CHECK(info.is_mock);
  for (int r = 0; r < 6; r++)
    for (int d = 0; d < 2; d++) CHECK_OK(hcq_rt_launch(g[d].k, &g[d].b[r & 1], 1, &(hcq_var){"n", 10 * d + r + 1}, 1));
  for (int d = 0; d < 2; d++) CHECK_OK(hcq_rt_sync(g[d].dev, 5000));
  for (int d = 0; d < 2; d++) {
    CHECK_EQ_INT(check_store(g[d].b[0], 10 * d + 5, 0), 0); /* last even round: r = 4 */
    CHECK_EQ_INT(check_store(g[d].b[1], 10 * d + 6, 0), 0);
  }
  gpu_close(&g[0]);
  gpu_close(&g[1]);
}

/* A graph of 3 real dispatches (n, out are variables) replayed 6 times; each replay's results checked. */
static void test_graph(void) {
  gpu g;
  gpu_open(&g, "amd:0");
  hcq_device *d = hcq_rt_lower(g.dev);
  uop_ctx *ctx;
  CHECK_OK(uop_ctx_create(&ctx));
  hcq_graph *gr;
  CHECK_OK(hcq_graph_create(ctx, &gr));
  hcq_queue *q;
  CHECK_OK(hcq_graph_queue(gr, d, HCQ_QUEUE_COMPUTE, &q));
  const uop *out = hcq_graph_var(gr, "out"), *n = uop_var(ctx, "n", 1, 64, uop_dt(UOP_INDEX));
  const hcq_program *desc = hcq_rt_kernel_program(g.k);
  CHECK_EQ_INT(desc->params[0].offset_B, 0); /* the metadata's layout is the default one here */
  CHECK_EQ_INT(desc->params[1].offset_B, 8);
  for (int i = 0; i < 3; i++) {
    hcq_args a;
    CHECK_OK(hcq_graph_args(gr, d, 0, 1, 1, &a));
    CHECK_OK(hcq_args_bind(&a, q, NULL, (hcq_val[]){hcq_sym(out)}, (hcq_val[]){hcq_sym(n)}));
    hcq_val gl[3], lo[3]; /* the program's launch sizes: "n" or a constant */
    for (int dd = 0; dd < 3; dd++) {
      int64_t gv = 1, lv = 1;
      bool gn = !strcmp(desc->global[dd], "n");
      if (!gn) CHECK_OK(hcq_expr_eval(desc->global[dd], NULL, NULL, 0, &gv));
      CHECK_OK(hcq_expr_eval(desc->local[dd], NULL, NULL, 0, &lv));
      gl[dd] = gn ? hcq_sym(n) : hcq_imm((uint64_t)gv), lo[dd] = hcq_imm((uint64_t)lv);
    }
    CHECK_OK(hcq_queue_exec(q, hcq_imm(hcq_rt_kernel_handle(g.k)), &a, gl, lo));
  }
  CHECK_OK(hcq_graph_finalize(gr));
  for (int r = 0; r < 6; r++) {
    int nv = 1 + (r * 23) % 64;
    memset(hcq_rt_buffer_host(g.b[r & 1]), 0xee, 256);
    uop_var_val v[2] = {{"out", (int64_t)hcq_rt_buffer_va(g.b[r & 1])}, {"n", nv}};
    CHECK_OK(hcq_graph_replay(gr, v, 2, 5000));
    CHECK_OK(hcq_graph_wait(gr, 5000));
    CHECK_EQ_INT(check_store(g.b[r & 1], nv, (int32_t)0xeeeeeeee), 0);
  }
  hcq_graph_destroy(gr);
  uop_ctx_destroy(ctx);
  gpu_close(&g);
}

/* Launches keep working across the timeline's 2^31 wrap (AMD compares signal values in 32 bits). */
static void test_timeline_wrap(void) {
  gpu g;
  gpu_open(&g, "amd:0");
  hcq_device *d = hcq_rt_lower(g.dev);
  CHECK_OK(hcq_rt_sync(g.dev, 5000));
  d->timeline_value = HCQ_TIMELINE_WRAP_AT - 1; /* as if 2^31 submissions went by */
  hcq_signal_set(d->timeline, HCQ_TIMELINE_WRAP_AT - 2);
  uint64_t wraps = d->timeline_wraps;
  for (int r = 0; r < 5; r++) {
    CHECK_OK(hcq_rt_launch(g.k, &g.b[0], 1, &(hcq_var){"n", 3 + r}, 1));
    CHECK_OK(hcq_rt_sync(g.dev, 5000));
    CHECK_EQ_INT(check_store(g.b[0], 3 + r, 0), 0);
  }
  CHECK_EQ_INT(d->timeline_wraps, wraps + 1);
  gpu_close(&g);
}

/* A queue blocked on a wait nobody signals: sync times out stating the queue's state; once the host sets the
 * signal the device carries on (a timeout is not a lost device). */
static void test_blocked_queue(void) {
  gpu g;
  gpu_open(&g, "amd:0");
  hcq_device *d = hcq_rt_lower(g.dev);
  hcq_signal *never;
  CHECK_OK(hcq_signal_create(d, "gate", 0, &never));
  hcq_queue *q;
  CHECK_OK(hcq_queue_create(d, HCQ_QUEUE_COMPUTE, &q));
  CHECK_OK(hcq_queue_wait(q, hcq_imm(never->va), hcq_imm(1)));
  uint64_t v = hcq_timeline_next(d);
  CHECK_OK(hcq_queue_signal(q, hcq_imm(d->timeline->va), hcq_imm(v)));
  CHECK_OK(hcq_queue_submit(q, d, NULL, 0));
  CHECK_ERR(hcq_rt_sync(g.dev, 100), HCQ_CODE_TIMEOUT, "has not passed rptr");
  hcq_signal_set(never, 1);
  CHECK_OK(hcq_rt_sync(g.dev, 5000));
  CHECK_OK(hcq_rt_launch(g.k, &g.b[1], 1, &(hcq_var){"n", 7}, 1));
  CHECK_OK(hcq_rt_sync(g.dev, 5000));
  CHECK_EQ_INT(check_store(g.b[1], 7, 0), 0);
  hcq_queue_destroy(q);
  hcq_signal_destroy(never);
  gpu_close(&g);
}

/* A mock of another arch (gfx1201): the driver loads the gfx1201 code object, the mock refuses the dispatch loudly
 * (its interpreter is gfx1100 only) and the launch ends in a fault, never in silently wrong results. */
static void test_other_arch_refused(void) {
  kfd_mock_config cfg = {.arch = "gfx1201"};
  CHECK_OK(amd_mock_install_config(kif_default(), &cfg));
  gpu g;
  gpu_open(&g, "amd:0");
  hcq_device_info info;
  CHECK_OK(hcq_rt_info(g.dev, &info));
  CHECK_EQ_STR(info.target, "amdgpu:gfx1201");
  CHECK_OK(hcq_rt_launch(g.k, &g.b[0], 1, &(hcq_var){"n", 4}, 1));
  CHECK_ERR(hcq_rt_sync(g.dev, 5000), HCQ_CODE_KERNEL_FAULT, "");
  amd_mock_exec *x;
  amd_mock_installed(&x);
  CHECK(strstr(amd_mock_exec_last_failure(x, false), "executes gfx1100 code only") != NULL);
  gpu_close(&g);
  amd_mock_uninstall();
}

int main(void) {
  if (!tu_have("clang-19") || !tu_have("ld.lld-19")) {
    fprintf(stderr, "SKIP: clang-19 or ld.lld-19 missing\n");
    return 77;
  }
  kfd_mock_config cfg = {.arch = "gfx1100", .gpu_count = 2};
  CHECK_OK(amd_mock_install_config(kif_default(), &cfg));
  test_two_gpus();
  test_graph();
  test_timeline_wrap();
  test_blocked_queue();
  amd_mock_uninstall();
  test_other_arch_refused();
  return testing_summary("amd_rt");
}
