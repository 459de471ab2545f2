/* hcq queue core costs: submit of a queue with 100 patched words where one variable changes, and graph replay
 * cost per command. The backend is a minimal one (it only executes SIGNAL so that graph replays can complete),
 * so the numbers are the core's own cost. Prints a table, then one JSON line per result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_words.h"
#include "hcq/graph.h"
#include "hcq/queue_fake_device.h"
#include "hcq/signal.h"

static hcq_status lean_submit(hcq_device *dev, hcq_queue_kind kind, const uint32_t *w, size_t n) {
  (void)kind;
  if (!dev->impl) return HCQ_OK; /* raw word streams (the submit bench) are not commands */
  for (size_t i = 0; i < n;) {
    uint32_t len = w[i] >> 16;
    if (!len || i + len > n) return hcq_status_make(HCQ_CODE_INVALID, "bad header at %zu", i);
    if ((w[i] & 0xffff) == CPU_OP_SIGNAL) {
      uint64_t va = (uint64_t)w[i + 1] | ((uint64_t)w[i + 2] << 32), v = (uint64_t)w[i + 3] | ((uint64_t)w[i + 4] << 32);
      __atomic_store_n((uint64_t *)(uintptr_t)va, v, __ATOMIC_RELEASE);
    }
    i += len;
  }
  return HCQ_OK;
}
static hcq_status lean_alloc(hcq_device *dev, size_t size_B, unsigned flags, hcq_mem *out) {
  (void)dev, (void)flags;
  void *p = aligned_alloc(4096, (size_B + 4095) & ~(size_t)4095);
  if (!p) return hcq_status_make(HCQ_CODE_NOMEM, "bench alloc");
  memset(p, 0, size_B);
  *out = (hcq_mem){.host = p, .va = (uint64_t)(uintptr_t)p, .size_B = size_B};
  return HCQ_OK;
}
static void lean_free(hcq_device *dev, hcq_mem *m) { (void)dev, free(m->host); }
static const hcq_device_ops lean_ops = {
    .backend_name = "bench", .submit = lean_submit, .mem_alloc = lean_alloc, .mem_free = lean_free, .encoder = &cpu_words_encoder};

#define DIE_ON(st)                                                   \
  do {                                                               \
    hcq_status s_ = (st);                                            \
    if (s_) {                                                        \
      fprintf(stderr, "hcq_queue_bench: %s\n", hcq_status_message(s_)); \
      exit(1);                                                       \
    }                                                                \
  } while (0)

typedef struct result {
  const char *name, *unit;
  double value;
  long iters;
} result;
static result results[8];
static int nresults;

/* 100 words: either 100 bare uint64 variables (addresses) or 100 expressions v_k + j over 10 index variables. */
static void bench_submit(uop_ctx *ctx, hcq_device *dev, bool expressions) {
  hcq_queue *q;
  DIE_ON(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
  enum { NV = 100 };
  static char names[NV][16];
  uop_var_val vals[NV];
  int nvars = expressions ? 10 : NV;
  const uop *vars[NV];
  for (int k = 0; k < nvars; k++) {
    snprintf(names[k], sizeof(names[k]), "var%d", k);
    vars[k] = expressions ? uop_var(ctx, names[k], 0, 1 << 30, uop_dt(UOP_INDEX))
                          : uop_var(ctx, names[k], 0, -1, uop_dt(UOP_UINT64));
    vals[k] = (uop_var_val){names[k], k * 1000};
  }
  for (int i = 0; i < 100; i++) {
    const uop *s = expressions ? uop_alu2(ctx, UOP_ADD, vars[i % 10], uop_index_const(ctx, i / 10 + 1)) : vars[i];
    DIE_ON(hcq_queue_emit32(q, hcq_sym(s)));
  }
  DIE_ON(hcq_queue_submit(q, dev, vals, (size_t)nvars));
  long iters = 0;
  uint64_t t0 = hcq_now_ns(), t1;
  do {
    for (int r = 0; r < 1000; r++, iters++) {
      vals[0].value++;
      DIE_ON(hcq_queue_submit(q, dev, vals, (size_t)nvars));
    }
    t1 = hcq_now_ns();
  } while (t1 - t0 < 300000000u);
  hcq_queue_stats st = hcq_queue_get_stats(q);
  if (st.patch_writes != 100 + (uint64_t)iters * (expressions ? 10 : 1)) {
    fprintf(stderr, "hcq_queue_bench: unexpected patch writes %llu\n", (unsigned long long)st.patch_writes);
    exit(1);
  }
  results[nresults++] = (result){expressions ? "submit_100_expr_words_1_var_changes" : "submit_100_var_words_1_var_changes",
                                 "ns_per_submit", (double)(t1 - t0) / (double)iters, iters};
  hcq_queue_destroy(q);
}

/* A graph of NK kernels (2 buffers + 1 value each, from 16 input buffers) on one device; every replay changes all
 * 16 input addresses and the shape variable. */
static void bench_graph(uop_ctx *ctx, hcq_device *dev, int nk, const char *backend) {
  hcq_graph *g;
  DIE_ON(hcq_graph_create(ctx, &g));
  enum { NB = 16 };
  static char names[NB][8];
  const uop *bufv[NB];
  uop_var_val vals[NB + 1];
  for (int i = 0; i < NB; i++) {
    snprintf(names[i], sizeof(names[i]), "buf%d", i);
    bufv[i] = hcq_graph_var(g, names[i]);
    vals[i] = (uop_var_val){names[i], 0x100000000LL + i * 0x1000};
  }
  const uop *n = uop_var(ctx, "n", 1, 1 << 20, uop_dt(UOP_INDEX));
  vals[NB] = (uop_var_val){"n", 64};
  hcq_queue *q;
  DIE_ON(hcq_graph_queue(g, dev, HCQ_QUEUE_COMPUTE, &q));
  for (int k = 0; k < nk; k++) {
    hcq_args a;
    DIE_ON(hcq_graph_args(g, dev, 0, 2, 1, &a));
    hcq_val bufs[2] = {hcq_sym(bufv[k % NB]), hcq_sym(bufv[(k * 7 + 3) % NB])}, v[1] = {hcq_sym(n)};
    DIE_ON(hcq_args_bind(&a, q, NULL, bufs, v));
    hcq_val gl[3] = {hcq_sym(n), hcq_imm(1), hcq_imm(1)}, lo[3] = {hcq_imm(1), hcq_imm(1), hcq_imm(1)};
    DIE_ON(hcq_queue_exec(q, hcq_imm(0x1000 + (uint64_t)k), &a, gl, lo));
  }
  DIE_ON(hcq_graph_finalize(g));
  long replays = 0;
  uint64_t t0 = hcq_now_ns(), t1;
  do {
    for (int r = 0; r < 100; r++, replays++) {
      for (int i = 0; i < NB; i++) vals[i].value += 0x10000;
      vals[NB].value = 64 + (replays & 63);
      DIE_ON(hcq_graph_replay(g, vals, NB + 1, 1000));
    }
    t1 = hcq_now_ns();
  } while (t1 - t0 < 300000000u);
  static char labels[2][80];
  char *label = labels[nresults % 2];
  snprintf(label, sizeof(labels[0]), "graph_replay_%d_kernels_all_inputs_change%s", nk, backend);
  results[nresults++] = (result){label, "ns_per_kernel", (double)(t1 - t0) / (double)replays / nk, replays};
  hcq_graph_destroy(g);
}

int main(void) {
  uop_ctx *ctx;
  DIE_ON(uop_ctx_create(&ctx));
  hcq_device dev, gdev;
  static int decode = 1;
  DIE_ON(hcq_device_init(&dev, &lean_ops, NULL, "BENCH:0"));
  DIE_ON(hcq_device_init(&gdev, &lean_ops, &decode, "BENCH:1"));
  bench_submit(ctx, &dev, false);
  bench_submit(ctx, &dev, true);
  bench_graph(ctx, &gdev, 320, "");
  /* The same graph on the fake GPU backend: PM4-like packets, words in its device memory, its command processor
   * validating and running every packet of each replay. */
  static fake_dev fgpu;
  DIE_ON(fake_dev_init(&fgpu, "FAKEGPU:0", true));
  fgpu.no_log = true;
  bench_graph(ctx, &fgpu.dev, 320, "_fakegpu");
  printf("%-48s %14s %10s\n", "case", "value", "iters");
  for (int i = 0; i < nresults; i++)
    printf("%-48s %10.1f %-13s %ld\n", results[i].name, results[i].value, results[i].unit, results[i].iters);
  for (int i = 0; i < nresults; i++)
    printf("{\"bench\":\"hcq_queue\",\"case\":\"%s\",\"%s\":%.1f,\"iters\":%ld}\n", results[i].name, results[i].unit,
           results[i].value, results[i].iters);
  hcq_device_fini(&dev);
  hcq_device_fini(&gdev);
  fake_dev_fini(&fgpu);
  uop_ctx_destroy(ctx);
  return 0;
}
