/* Graph build (queues with timeline prologue/epilogue) and replay. Protocol: hcq/graph.h. */
#include "hcq/graph.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GRAPH_ARGS_CHUNK_B (64u * 1024u)
#define GRAPH_VAR_NAME_MAX (HCQ_DEVICE_NAME_MAX + 16)

typedef struct graph_dev {
  hcq_device *dev;
  char tl_sig_name[GRAPH_VAR_NAME_MAX], tl_var_name[GRAPH_VAR_NAME_MAX];
  const uop *tl_sig, *tl_var;
  int main_queue; /* index into queues, -1 until the first queue */
  hcq_mem *args_chunks;
  size_t nargs_chunks, args_used_B; /* bump pointer into the last chunk */
} graph_dev;

typedef struct graph_queue {
  hcq_queue *q;
  int dev; /* index into devs */
  hcq_queue_kind kind;
  hcq_signal *done; /* reaches kickoff when this queue finished a replay */
} graph_queue;

struct hcq_graph {
  uop_ctx *ctx;
  graph_dev *devs;
  size_t ndevs;
  graph_queue *queues;
  size_t nqueues;
  hcq_signal **signals; /* user signals, reset every replay */
  size_t nsignals;
  const uop *kickoff_var;
  uint64_t kickoff;
  bool finalized;
  uop_var_val *vals; /* graph variables first, then the caller's */
  size_t vals_cap;
};

static const uop *u64_var(hcq_graph *g, const char *name) {
  return uop_var(g->ctx, name, 0, (int64_t)UINT64_MAX, uop_dt(UOP_UINT64));
}

const uop *hcq_graph_var(hcq_graph *g, const char *name) { return u64_var(g, name); }

hcq_status hcq_graph_create(uop_ctx *ctx, hcq_graph **out_g) {
  *out_g = NULL;
  hcq_graph *g = calloc(1, sizeof(*g));
  if (!g) return hcq_status_make(HCQ_CODE_NOMEM, "graph");
  g->ctx = ctx;
  g->kickoff_var = u64_var(g, "kickoff_var");
  if (!g->kickoff_var) {
    free(g);
    return hcq_status_make(HCQ_CODE_NOMEM, "graph variables");
  }
  *out_g = g;
  return HCQ_OK;
}

void hcq_graph_destroy(hcq_graph *g) {
  if (!g) return;
  if (g->kickoff) {
    for (size_t i = 0; i < g->nqueues; i++) {
      hcq_status st = hcq_signal_wait(g->queues[i].done, g->kickoff, g->devs[g->queues[i].dev].dev->wait_timeout_ms);
      if (st) {
        fprintf(stderr, "hcq graph destroy: %s\n", hcq_status_message(st));
        hcq_status_free(st);
      }
    }
  }
  for (size_t i = 0; i < g->nqueues; i++) {
    hcq_queue_destroy(g->queues[i].q);
    hcq_signal_destroy(g->queues[i].done);
  }
  for (size_t i = 0; i < g->nsignals; i++) hcq_signal_destroy(g->signals[i]);
  for (size_t d = 0; d < g->ndevs; d++) {
    for (size_t c = 0; c < g->devs[d].nargs_chunks; c++) g->devs[d].dev->ops->mem_free(g->devs[d].dev, &g->devs[d].args_chunks[c]);
    free(g->devs[d].args_chunks);
  }
  free(g->devs);
  free(g->queues);
  free(g->signals);
  free(g->vals);
  free(g);
}

static hcq_status graph_dev_index(hcq_graph *g, hcq_device *dev, int *out_idx) {
  for (size_t d = 0; d < g->ndevs; d++)
    if (g->devs[d].dev == dev) return *out_idx = (int)d, HCQ_OK;
  for (size_t d = 0; d < g->ndevs; d++)
    if (strcmp(g->devs[d].dev->name, dev->name) == 0)
      return hcq_status_make(HCQ_CODE_INVALID, "graph: two devices are both named '%s'", dev->name);
  graph_dev *devs = realloc(g->devs, (g->ndevs + 1) * sizeof(*devs));
  if (!devs) return hcq_status_make(HCQ_CODE_NOMEM, "graph device list");
  g->devs = devs;
  graph_dev *gd = &g->devs[g->ndevs];
  memset(gd, 0, sizeof(*gd));
  gd->dev = dev;
  gd->main_queue = -1;
  snprintf(gd->tl_sig_name, sizeof(gd->tl_sig_name), "timeline_sig_%s", dev->name);
  snprintf(gd->tl_var_name, sizeof(gd->tl_var_name), "timeline_var_%s", dev->name);
  gd->tl_sig = u64_var(g, gd->tl_sig_name);
  gd->tl_var = u64_var(g, gd->tl_var_name);
  if (!gd->tl_sig || !gd->tl_var) return hcq_status_make(HCQ_CODE_NOMEM, "graph variables");
  *out_idx = (int)g->ndevs++;
  return HCQ_OK;
}

hcq_status hcq_graph_queue(hcq_graph *g, hcq_device *dev, hcq_queue_kind kind, hcq_queue **out_q) {
  *out_q = NULL;
  if (g->finalized) return hcq_status_make(HCQ_CODE_INVALID, "graph: queue requested after finalize");
  int d;
  HCQ_TRY(graph_dev_index(g, dev, &d));
  for (size_t i = 0; i < g->nqueues; i++)
    if (g->queues[i].dev == d && g->queues[i].kind == kind) return *out_q = g->queues[i].q, HCQ_OK;
  graph_queue *qs = realloc(g->queues, (g->nqueues + 1) * sizeof(*qs));
  if (!qs) return hcq_status_make(HCQ_CODE_NOMEM, "graph queue list");
  g->queues = qs;
  graph_queue *gq = &g->queues[g->nqueues];
  memset(gq, 0, sizeof(*gq));
  gq->dev = d;
  gq->kind = kind;
  char name[64];
  snprintf(name, sizeof(name), "graph_done:%s:%s", dev->name, kind == HCQ_QUEUE_COPY ? "copy" : "compute");
  HCQ_TRY(hcq_signal_create(dev, name, 0, &gq->done));
  hcq_status st = hcq_queue_create(dev, kind, &gq->q);
  if (!st) st = hcq_queue_wait(gq->q, hcq_sym(g->devs[d].tl_sig), hcq_sym(g->devs[d].tl_var));
  if (st) {
    hcq_queue_destroy(gq->q);
    hcq_signal_destroy(gq->done);
    return st;
  }
  if (g->devs[d].main_queue < 0) g->devs[d].main_queue = (int)g->nqueues;
  g->nqueues++;
  *out_q = gq->q;
  return HCQ_OK;
}

hcq_status hcq_graph_args(hcq_graph *g, hcq_device *dev, uint32_t prefix_words, uint32_t nbufs, uint32_t nvals,
                          hcq_args *out_args) {
  int d;
  HCQ_TRY(graph_dev_index(g, dev, &d));
  graph_dev *gd = &g->devs[d];
  /* 64-byte slots: NV Blackwell QMDs take the constant bank address >> 6 */
  size_t need = (hcq_args_size_B(prefix_words, nbufs, nvals) + 63u) & ~(size_t)63u;
  if (!need) return hcq_args_init(out_args, NULL, 0, 0, 0, 0, 0);
  if (!gd->nargs_chunks || gd->args_chunks[gd->nargs_chunks - 1].size_B - gd->args_used_B < need) {
    hcq_mem *chunks = realloc(gd->args_chunks, (gd->nargs_chunks + 1) * sizeof(*chunks));
    if (!chunks) return hcq_status_make(HCQ_CODE_NOMEM, "graph kernel-argument chunk list");
    gd->args_chunks = chunks;
    size_t size_B = need > GRAPH_ARGS_CHUNK_B ? need : GRAPH_ARGS_CHUNK_B;
    hcq_status st = dev->ops->mem_alloc(dev, size_B, HCQ_MEM_KERNARG, &gd->args_chunks[gd->nargs_chunks]);
    if (st) return hcq_status_annotate(st, "graph kernel arguments on %s", dev->name);
    gd->nargs_chunks++;
    gd->args_used_B = 0;
  }
  hcq_mem *m = &gd->args_chunks[gd->nargs_chunks - 1];
  size_t off = gd->args_used_B;
  gd->args_used_B += need;
  return hcq_args_init(out_args, (uint8_t *)m->host + off, m->va + off, need, prefix_words, nbufs, nvals);
}

hcq_status hcq_graph_signal(hcq_graph *g, hcq_device *dev, hcq_signal **out_sig) {
  hcq_signal **s = realloc(g->signals, (g->nsignals + 1) * sizeof(*s));
  if (!s) return hcq_status_make(HCQ_CODE_NOMEM, "graph signal list");
  g->signals = s;
  char name[64];
  snprintf(name, sizeof(name), "graph_sig%zu:%s", g->nsignals, dev->name);
  HCQ_TRY(hcq_signal_create(dev, name, 0, &g->signals[g->nsignals]));
  *out_sig = g->signals[g->nsignals++];
  return HCQ_OK;
}

hcq_status hcq_graph_finalize(hcq_graph *g) {
  if (g->finalized) return hcq_status_make(HCQ_CODE_INVALID, "graph finalized twice");
  hcq_val kick = hcq_sym(g->kickoff_var);
  for (size_t i = 0; i < g->nqueues; i++) { /* non-main queues: just say "done" */
    graph_queue *gq = &g->queues[i];
    if (g->devs[gq->dev].main_queue != (int)i) HCQ_TRY(hcq_queue_signal(gq->q, hcq_imm(gq->done->va), kick));
  }
  for (size_t d = 0; d < g->ndevs; d++) {
    graph_dev *gd = &g->devs[d];
    if (gd->main_queue < 0) continue; /* a device with argument memory but no queue */
    hcq_queue *mq = g->queues[gd->main_queue].q;
    for (size_t i = 0; i < g->nqueues; i++)
      if (g->queues[i].dev == (int)d && (int)i != gd->main_queue)
        HCQ_TRY(hcq_queue_wait(mq, hcq_imm(g->queues[i].done->va), kick));
    HCQ_TRY(hcq_queue_signal(mq, hcq_imm(g->queues[gd->main_queue].done->va), kick));
    const uop *one = uop_const_int(g->ctx, uop_dt(UOP_UINT64), 1);
    const uop *next = one ? uop_alu2(g->ctx, UOP_ADD, gd->tl_var, one) : NULL;
    if (!next) return hcq_status_make(HCQ_CODE_NOMEM, "graph variables");
    HCQ_TRY(hcq_queue_signal(mq, hcq_sym(gd->tl_sig), hcq_sym(next)));
  }
  g->finalized = true;
  return HCQ_OK;
}

hcq_status hcq_graph_wait(hcq_graph *g, uint32_t timeout_ms) {
  for (size_t i = 0; i < g->nqueues; i++) {
    hcq_status st = hcq_signal_wait(g->queues[i].done, g->kickoff, timeout_ms);
    if (st) return hcq_status_annotate(st, "graph: previous replay %" PRIu64 " not finished", g->kickoff);
  }
  return HCQ_OK;
}

static hcq_status submit_queue(hcq_graph *g, size_t i, size_t nvals) {
  graph_queue *gq = &g->queues[i];
  hcq_device *dev = g->devs[gq->dev].dev;
  (void)nvals; /* already patched by hcq_queue_apply */
  hcq_status st = hcq_queue_submit_patched(gq->q, dev);
  return st ? hcq_status_annotate(st, "graph replay %" PRIu64 ", queue %zu", g->kickoff, i) : HCQ_OK;
}

hcq_status hcq_graph_replay(hcq_graph *g, const uop_var_val *var_vals, size_t n, uint32_t timeout_ms) {
  if (!g->finalized) return hcq_status_make(HCQ_CODE_INVALID, "graph replay before hcq_graph_finalize");
  if (n && !var_vals) return hcq_status_make(HCQ_CODE_INVALID, "graph replay: NULL var_vals with count %zu", n);
  HCQ_TRY(hcq_graph_wait(g, timeout_ms));
  for (size_t d = 0; d < g->ndevs; d++)
    if (g->devs[d].dev->timeline_value > HCQ_TIMELINE_WRAP_AT) HCQ_TRY(hcq_device_synchronize(g->devs[d].dev, timeout_ms));
  size_t nvals = 1 + 2 * g->ndevs + n;
  if (nvals > g->vals_cap) {
    uop_var_val *v = realloc(g->vals, nvals * sizeof(*v));
    if (!v) return hcq_status_make(HCQ_CODE_NOMEM, "graph var_vals (%zu)", nvals);
    g->vals = v;
    g->vals_cap = nvals;
  }
  /* Graph variables first, at fixed positions, so the queues' lookup hints stay valid between replays. */
  g->vals[0] = (uop_var_val){"kickoff_var", (int64_t)(g->kickoff + 1)};
  for (size_t d = 0; d < g->ndevs; d++) {
    hcq_device *dev = g->devs[d].dev;
    g->vals[1 + 2 * d] = (uop_var_val){g->devs[d].tl_sig_name, (int64_t)dev->timeline->va};
    g->vals[2 + 2 * d] = (uop_var_val){g->devs[d].tl_var_name, (int64_t)hcq_timeline_last(dev)};
    if (dev->timeline_value >= 0xffffffffu)
      return hcq_status_make(HCQ_CODE_INVALID, "graph replay: timeline of %s exhausted (synchronize it)", dev->name);
  }
  if (n) memcpy(g->vals + 1 + 2 * g->ndevs, var_vals, n * sizeof(*var_vals));
  /* Patch every queue before submitting any, so a missing variable submits nothing. */
  for (size_t i = 0; i < g->nqueues; i++) {
    hcq_status st = hcq_queue_apply(g->queues[i].q, g->vals, nvals);
    if (st) return hcq_status_annotate(st, "graph replay %" PRIu64 ", queue %zu", g->kickoff + 1, i);
  }
  for (size_t s = 0; s < g->nsignals; s++) hcq_signal_set(g->signals[s], 0);
  g->kickoff++;
  for (size_t i = 0; i < g->nqueues; i++)
    if (g->devs[g->queues[i].dev].main_queue != (int)i) HCQ_TRY(submit_queue(g, i, nvals));
  for (size_t d = 0; d < g->ndevs; d++)
    if (g->devs[d].main_queue >= 0) HCQ_TRY(submit_queue(g, (size_t)g->devs[d].main_queue, nvals));
  for (size_t d = 0; d < g->ndevs; d++)
    if (g->devs[d].main_queue >= 0) (void)hcq_timeline_next(g->devs[d].dev);
  return HCQ_OK;
}

size_t hcq_graph_queue_count(const hcq_graph *g) { return g->nqueues; }
uint64_t hcq_graph_kickoff(const hcq_graph *g) { return g->kickoff; }
