/* Backend conformance: the same checks against every registered backend (IREE's CTS is the model). A backend
 * entry opens a device and wraps a host function as a program; everything else goes through the generic queue,
 * signal and graph APIs and hcq_device_ops, so a new backend adds one line to `backends` below.
 *
 * Checks: signal/timestamp commands, the timeline and its 2^31 wrap, copies, waits across queues, exec with
 * arguments, graph replay with fresh buffer addresses and variable values (rewriting exactly the words whose
 * value changed, counted against a snapshot of the words), bad and missing variable values. Expected values are
 * computed here from the inputs, not read back from the runtime. */
#include "cpu/cpu_device.h"
#include "hcq/args.h"
#include "hcq/graph.h"
#include "hcq/queue_fake_device.h"
#include "hcq/signal.h"
#include "base/testing.h"

#define TIMEOUT_MS 5000

typedef struct backend backend;
struct backend {
  const char *name;
  hcq_status (*open)(backend *b);
  void (*close)(backend *b);
  uint64_t (*store_prog)(backend *b); /* out[gid] = n * 1000 + gid; args: 1 buffer, 1 value (n) */
  hcq_device *dev;
  void *impl;
  void *prog;
};

/* ---- cpu */
static void cpu_store(int32_t *out, int n, int core_id) { out[core_id] = n * 1000 + core_id; }
static hcq_status cpu_open(backend *b) {
  cpu_device *d;
  HCQ_TRY(cpu_device_create(2, &d));
  b->impl = d;
  b->dev = cpu_device_hcq(d);
  return HCQ_OK;
}
static void cpu_close(backend *b) {
  if (b->prog) cpu_device_program_destroy(b->prog);
  cpu_device_destroy(b->impl);
}
static uint64_t cpu_prog(backend *b) {
  if (!b->prog) CHECK_OK(cpu_device_wrap(b->impl, (void *)cpu_store, "store", (cpu_device_program **)&b->prog));
  return b->prog ? cpu_device_program_handle(b->prog) : 0;
}

/* ---- fake GPU (PM4-like packets, hcq/queue_fake_device.h) */
static void fake_store(const uint32_t gid[3], const uint64_t *bufs, uint32_t nbufs, const int32_t *vals, uint32_t nvals) {
  if (nbufs == 1 && nvals == 1) ((int32_t *)(uintptr_t)bufs[0])[gid[0]] = vals[0] * 1000 + (int32_t)gid[0];
}
static hcq_status fake_open(backend *b) {
  fake_dev *f = calloc(1, sizeof(*f));
  if (!f) return hcq_status_make(HCQ_CODE_NOMEM, "fake device");
  hcq_status st = fake_dev_init(f, "FAKEGPU:0", true);
  f->run_copies = true;
  b->impl = f;
  b->dev = &f->dev;
  return st;
}
static void fake_close(backend *b) {
  fake_dev_fini(b->impl);
  free(b->impl);
}
static uint64_t fake_prog(backend *b) { return fake_dev_program(b->impl, fake_store); }

static backend backends[] = {
    {.name = "cpu", .open = cpu_open, .close = cpu_close, .store_prog = cpu_prog},
    {.name = "fakegpu", .open = fake_open, .close = fake_close, .store_prog = fake_prog},
};

static uop_ctx *ctx;

static void submit_wait(hcq_device *dev, hcq_queue *q, hcq_signal *s, uint64_t v) {
  CHECK_OK(hcq_queue_submit(q, dev, NULL, 0));
  CHECK_OK(hcq_signal_wait(s, v, TIMEOUT_MS));
}

static void test_signal_timestamp(backend *b) {
  hcq_signal *s;
  CHECK_OK(hcq_signal_create(b->dev, "conf", 0, &s));
  hcq_queue *q;
  CHECK_OK(hcq_queue_create(b->dev, HCQ_QUEUE_COMPUTE, &q));
  uint64_t t0 = hcq_now_ns();
  CHECK_OK(hcq_queue_memory_barrier(q));
  CHECK_OK(hcq_queue_timestamp(q, hcq_imm(s->va)));
  CHECK_OK(hcq_queue_signal(q, hcq_imm(s->va), hcq_imm(0x123456789ULL)));
  submit_wait(b->dev, q, s, 0x123456789ULL);
  CHECK_EQ_INT(hcq_signal_value(s), 0x123456789ULL);
  uint64_t ts = hcq_signal_timestamp_ns(s);
  CHECK(ts >= t0 && ts <= hcq_now_ns());
  hcq_queue_destroy(q);
  hcq_signal_destroy(s);
}

static void test_timeline_wrap(backend *b) {
  hcq_device *dev = b->dev;
  CHECK_OK(hcq_device_synchronize(dev, TIMEOUT_MS));
  dev->timeline_value = HCQ_TIMELINE_WRAP_AT + 1; /* as if 2^31 submissions went by */
  hcq_signal_set(dev->timeline, HCQ_TIMELINE_WRAP_AT);
  uint64_t wraps = dev->timeline_wraps;
  hcq_signal *old = dev->timeline;
  for (int i = 0; i < 3; i++) {
    hcq_queue *q;
    CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
    CHECK_OK(hcq_queue_wait(q, hcq_imm(dev->timeline->va), hcq_imm(hcq_timeline_last(dev))));
    uint64_t next = hcq_timeline_next(dev);
    CHECK_OK(hcq_queue_signal(q, hcq_imm(dev->timeline->va), hcq_imm(next)));
    submit_wait(dev, q, dev->timeline, next);
    hcq_queue_destroy(q);
    CHECK_OK(hcq_device_synchronize(dev, TIMEOUT_MS));
  }
  CHECK_EQ_INT(dev->timeline_wraps, wraps + 1);
  CHECK(dev->timeline != old);
  CHECK(hcq_timeline_last(dev) < 4);
  CHECK_EQ_INT(hcq_signal_value(dev->timeline), hcq_timeline_last(dev));
}

/* Copy on the copy queue, then a compute queue waits for it (across queues) and signals. */
static void test_copy_and_cross_queue_wait(backend *b) {
  hcq_device *dev = b->dev;
  enum { N = 3000 };
  hcq_mem src, dst;
  CHECK_OK(dev->ops->mem_alloc(dev, N, 0, &src));
  CHECK_OK(dev->ops->mem_alloc(dev, N, 0, &dst));
  for (int i = 0; i < N; i++) ((uint8_t *)src.host)[i] = (uint8_t)(i * 7 + 1);
  hcq_signal *copied, *done;
  CHECK_OK(hcq_signal_create(dev, "copied", 0, &copied));
  CHECK_OK(hcq_signal_create(dev, "done", 0, &done));
  hcq_queue *cq, *q;
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &cq));
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
  CHECK_OK(hcq_queue_copy(cq, hcq_imm(dst.va + 1), hcq_imm(src.va), hcq_imm(N - 2)));
  CHECK_OK(hcq_queue_signal(cq, hcq_imm(copied->va), hcq_imm(1)));
  CHECK_OK(hcq_queue_wait(q, hcq_imm(copied->va), hcq_imm(1)));
  CHECK_OK(hcq_queue_signal(q, hcq_imm(done->va), hcq_imm(5)));
  CHECK_OK(hcq_queue_submit(cq, dev, NULL, 0));
  submit_wait(dev, q, done, 5);
  int bad = 0;
  for (int i = 0; i < N; i++) {
    uint8_t want = i == 0 || i == N - 1 ? 0 : (uint8_t)((i - 1) * 7 + 1);
    bad += ((uint8_t *)dst.host)[i] != want;
  }
  CHECK_EQ_INT(bad, 0);
  /* A queue belongs to its device and its kind; submitting elsewhere is refused. */
  hcq_device other = {.ops = dev->ops, .name = "OTHER:0"};
  CHECK_ERR(hcq_queue_submit(q, &other, NULL, 0), HCQ_CODE_INVALID, "belongs to its device");
  hcq_queue_destroy(cq);
  hcq_queue_destroy(q);
  hcq_signal_destroy(copied);
  hcq_signal_destroy(done);
  dev->ops->mem_free(dev, &src);
  dev->ops->mem_free(dev, &dst);
}

/* A graph: exec(store, out = buf var, n var) with n threads, then copy the result to a second buffer var. Every
 * replay gets fresh buffers and n; the queue rewrites exactly the words whose value changed. */
static void test_graph(backend *b) {
  hcq_device *dev = b->dev;
  enum { NB = 4, MAXN = 64 };
  hcq_mem bufs[NB];
  for (int i = 0; i < NB; i++) CHECK_OK(dev->ops->mem_alloc(dev, MAXN * 4, 0, &bufs[i]));
  hcq_graph *g;
  CHECK_OK(hcq_graph_create(ctx, &g));
  const uop *out = hcq_graph_var(g, "out"), *cp = hcq_graph_var(g, "cp");
  const uop *n = uop_var(ctx, "n", 1, MAXN, uop_dt(UOP_INDEX));
  hcq_queue *q;
  CHECK_OK(hcq_graph_queue(g, dev, HCQ_QUEUE_COMPUTE, &q));
  hcq_args a;
  CHECK_OK(hcq_graph_args(g, dev, 0, 1, 1, &a));
  hcq_val ab[1] = {hcq_sym(out)}, av[1] = {hcq_sym(n)};
  CHECK_OK(hcq_args_bind(&a, q, NULL, ab, av));
  hcq_val gl[3] = {hcq_sym(n), hcq_imm(1), hcq_imm(1)}, lo[3] = {hcq_imm(1), hcq_imm(1), hcq_imm(1)};
  CHECK_OK(hcq_queue_exec(q, hcq_imm(b->store_prog(b)), &a, gl, lo));
  const uop *bytes = uop_alu2(ctx, UOP_MUL, n, uop_index_const(ctx, 4));
  CHECK_OK(hcq_queue_copy(q, hcq_sym(cp), hcq_sym(out), hcq_sym(bytes)));
  CHECK_OK(hcq_graph_finalize(g));
  uint32_t snap[512];
  for (int r = 0; r < 8; r++) {
    int o = r % NB, c = (r + 1 + r / NB) % NB, nv = 1 + (r * 13) % MAXN;
    if (c == o) c = (c + 1) % NB;
    uop_var_val v[3] = {{"out", (int64_t)bufs[o].va}, {"cp", (int64_t)bufs[c].va}, {"n", nv}};
    if (r == 5) v[2].value = 1 + (4 * 13) % MAXN; /* same n as the previous replay */
    if (r == 5) nv = (int)v[2].value;
    size_t nw = hcq_queue_word_count(q);
    CHECK(nw <= 512);
    if (nw <= 512) memcpy(snap, hcq_queue_words(q), nw * 4);
    uint64_t before = hcq_queue_get_stats(q).words_written;
    memset(bufs[c].host, 0xee, MAXN * 4);
    CHECK_OK(hcq_graph_replay(g, v, 3, TIMEOUT_MS));
    CHECK_OK(hcq_graph_wait(g, TIMEOUT_MS));
    size_t changed = 0;
    for (size_t i = 0; i < nw && nw <= 512; i++) changed += snap[i] != hcq_queue_words(q)[i];
    if (r > 0) CHECK_EQ_INT(hcq_queue_get_stats(q).words_written - before, changed);
    int bad = 0;
    for (int i = 0; i < MAXN; i++) {
      int32_t want = i < nv ? nv * 1000 + i : (int32_t)0xeeeeeeee;
      bad += ((int32_t *)bufs[c].host)[i] != want;
    }
    CHECK_EQ_INT(bad, 0);
  }
  /* Bad values: out of the declared range, or missing: refused before anything is written or submitted. */
  uop_var_val badv[3] = {{"out", (int64_t)bufs[0].va}, {"cp", (int64_t)bufs[1].va}, {"n", MAXN + 1}};
  uint64_t kick = hcq_graph_kickoff(g);
  CHECK_ERR(hcq_graph_replay(g, badv, 3, TIMEOUT_MS), HCQ_CODE_INVALID, "outside its declared range");
  CHECK_ERR(hcq_graph_replay(g, badv, 2, TIMEOUT_MS), HCQ_CODE_NOT_FOUND, "'n'");
  CHECK_EQ_INT(hcq_graph_kickoff(g), kick);
  hcq_graph_destroy(g);
  for (int i = 0; i < NB; i++) dev->ops->mem_free(dev, &bufs[i]);
}

int main(void) {
  CHECK_OK(uop_ctx_create(&ctx));
  for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
    backend *b = &backends[i];
    int before = testing_failures;
    CHECK_OK(b->open(b));
    if (!b->dev) continue;
    test_signal_timestamp(b);
    test_copy_and_cross_queue_wait(b);
    test_graph(b);
    test_timeline_wrap(b);
    test_graph(b); /* graphs keep working after a wrap */
    CHECK_OK(hcq_device_synchronize(b->dev, TIMEOUT_MS));
    b->close(b);
    printf("conformance %s: %s\n", b->name, testing_failures == before ? "ok" : "FAILED");
  }
  uop_ctx_destroy(ctx);
  return testing_summary("hcq/conformance_test");
}
