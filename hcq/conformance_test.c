/* Backend conformance: the same checks against every registered backend (IREE's CTS is the model). A backend
 * entry names the device in the registry (hcq/rt_registry.c; the fake GPU is registered by this test), wraps a host
 * function as a program and describes two programs; everything else goes through the generic queue, signal,
 * graph and runtime APIs and hcq_device_ops, so a new backend adds one line to `backends` below.
 *
 * Checks: signal/timestamp commands, the timeline and its 2^31 wrap, copies, waits across queues, exec with
 * arguments, graph replay with fresh buffer addresses and variable values (rewriting exactly the words whose
 * value changed, counted against a snapshot of the words), bad and missing variable values; through the runtime
 * layer: device info, program load errors, launches with fresh buffers and values, bad values refused before
 * anything is queued, kernel faults (reported once, the device lives on), wait timeouts. Expected values are
 * computed here from the inputs, not read back from the runtime. */
#include "compiler/toolchain.h"
#include "cpu/cpu_device.h"
#include "emulator_tests/amd_mock_exec.h"
#include "emulator_tests/nv_mock_ptx.h"
#include "hcq/args.h"
#include "hcq/graph.h"
#include "hcq/queue_fake_device.h"
#include "hcq/signal.h"
#include "base/testing.h"
#include "hcq/rt_internal.h"
#include "nv/nv_hw_prog.h"

#define TIMEOUT_MS 5000

/* The runtime-level checks use two programs per backend:
 *   store: buffer 0 int32[64] (written), variable n in 1..64; out[i] = n * 1000 + i for i < n
 *   fault: buffers 0 and 1 int32[8]; faults when buffer 1 holds a zero (the buffers are zero-filled) */
typedef struct backend backend;
struct backend {
  const char *name; /* in the registry */
  uint64_t (*store_prog)(backend *b); /* a queue-level handle of `store`: args 1 buffer, 1 value (n) */
  hcq_status (*program)(backend *b, const char *which, hcq_program *out);
  hcq_rt_device *rd;
  hcq_device *dev;
  void *prog;
  hcq_rt_program *progs[2];
  hcq_rt_kernel *kern;   /* a backend whose queue-level `store` is a runtime-loaded kernel (nv) */
  uint32_t prefix_words; /* the queue-level `store`'s argument prefix (NV: constant bank 0 up to the parameters) */
  bool (*available)(void); /* NULL: always; else whether the backend can run here (e.g. needs ptxas) */
};

/* ---- cpu */
static void cpu_store(int32_t *out, int n, int core_id) { out[core_id] = n * 1000 + core_id; }
static uint64_t cpu_prog(backend *b) {
  if (!b->prog) CHECK_OK(cpu_device_wrap(b->dev->impl, (void *)cpu_store, "store", (cpu_device_program **)&b->prog));
  return b->prog ? cpu_device_program_handle(b->prog) : 0;
}
static const char *store =
    "(kernel store (let o (buf 0 int32 64)) (let n (var n 1 64 index)) (let r (range 0 n loop))\n"
    " (sink (store (index o r) (+ (* (cast int32 n) (const 1000 int32)) (cast int32 r)) r)))\n";
static hcq_status cpu_program(backend *b, const char *which, hcq_program *out) {
  static const char *fault = "(kernel fault (let o (buf 0 int32 8)) (let a (buf 1 int32 8)) (let r (range 0 8))\n"
                             " (sink (store (index o r) (% (const 7 int32) (load (index a r))) r)))\n";
  int i = strcmp(which, "store") != 0;
  if (!b->progs[i]) HCQ_TRY(hcq_rt_program_compile(b->rd, i ? fault : store, "", &b->progs[i]));
  *out = *hcq_rt_program_desc(b->progs[i]);
  return HCQ_OK;
}

/* ---- nv (the Hopper mock, HCQ_MOCK=nv's, in front of kif_default): programs compiled for ptx:sm_90. A GPU does
 * not trap on an integer division by zero, so its `fault` reads far below its buffer when buffer 1 holds a zero. */
static const char *nv_fault =
    "(kernel fault (let o (buf 0 int32 8)) (let a (buf 1 int32 8)) (let r (range 0 8))\n"
    " (sink (store (index o r) (load (index a (+ r (* (cast index (- (load (index a r)) (const 1 int32)))"
    " (const 100000000 index))))) r)))\n";
/* `--programs DIR`: the nv programs come from DIR (written by `--prepare DIR` where ptxas is; nv/nv_hw_prog.h), so a
 * GPU machine without the CUDA toolkit runs the suite. */
static const char *g_progs_dir;
static bool g_no_mock;
static nv_hw_prog g_nv_progs[2];
static hcq_status nv_prepared(const char *target, int i, bool prepare, const char *dir) {
  char key[64];
  snprintf(key, sizeof key, "conformance_%s.noopt.%.20s", i ? "fault" : "store", target + 4);
  nv_hw_prog_free(&g_nv_progs[i]);
  return nv_hw_prog_make(target, i ? nv_fault : store, "", dir, key, prepare, &g_nv_progs[i]);
}
static hcq_status nv_program(backend *b, const char *which, hcq_program *out) {
  const char *fault = nv_fault;
  int i = strcmp(which, "store") != 0;
  if (g_progs_dir) {
    hcq_device_info info;
    HCQ_TRY(hcq_rt_info(b->rd, &info));
    if (!g_nv_progs[i].cc) HCQ_TRY(nv_prepared(info.target, i, false, g_progs_dir));
    *out = g_nv_progs[i].desc;
    return HCQ_OK;
  }
  if (strcmp(which, "fault") != 0) return cpu_program(b, which, out);
  if (!b->progs[1]) HCQ_TRY(hcq_rt_program_compile(b->rd, fault, "", &b->progs[1]));
  *out = *hcq_rt_program_desc(b->progs[1]);
  return HCQ_OK;
}
static uint64_t nv_prog(backend *b) {
  hcq_program p;
  if (!b->kern) {
    hcq_status st = b->program(b, "store", &p);
    if (!st) st = hcq_rt_kernel_load(b->rd, &p, &b->kern);
    CHECK_OK(st);
  }
  if (!b->kern) return 0;
  b->prefix_words = hcq_rt_kernel_program(b->kern)->kernarg_prefix_B / 4;
  return hcq_rt_kernel_handle(b->kern);
}
static bool nv_available(void) {
  /* qemu-user places the driver's MAP_FIXED_NOREPLACE VA windows elsewhere (the NV tests skip there too) */
  if (getenv("HCQ_QEMU_USER")) return false;
  if (g_progs_dir) return true;
  char path[512];
  hcq_status st = cc_ptx_ptxas(path, sizeof path);
  hcq_status_free(st);
  return st == HCQ_OK;
}

/* ---- amd (the gfx1100 KFD mock, HCQ_MOCK=amd's, in front of kif_default): programs compiled for amdgpu:gfx1100
 * and run by the mock's RDNA3 interpreter; `store` is a runtime-loaded kernel (nv_prog) and `fault` nv's far
 * out-of-bounds read (a GPU does not trap on an integer division by zero). */
static bool amd_available(void) {
  static int installed; /* the mock goes in front of kif_default once, before the backend is opened */
  if (!cc_tool_find(cc_llvm_clang(), NULL, 0) || !cc_tool_find(cc_llvm_lld(), NULL, 0)) return false;
  if (!installed) {
    hcq_status st = amd_mock_install(kif_default());
    installed = st ? -1 : 1;
    CHECK_OK(st);
  }
  return installed > 0;
}

/* ---- fake GPU (PM4-like packets, hcq/queue_fake_device.h) */
static void fake_store(const uint32_t gid[3], const uint64_t *bufs, uint32_t nbufs, const int32_t *vals, uint32_t nvals) {
  if (nbufs == 1 && nvals == 1) ((int32_t *)(uintptr_t)bufs[0])[gid[0]] = vals[0] * 1000 + (int32_t)gid[0];
}
static uint64_t fake_prog(backend *b) { return fake_dev_program(b->dev->impl, fake_store); }
static hcq_status fake_program(backend *b, const char *which, hcq_program *out) {
  static const uint8_t binary[4] = "FAKE";
  bool store = !strcmp(which, "store");
  fake_dev_program_named(b->dev->impl, which, store ? fake_store : NULL);
  hcq_program_init(out);
  snprintf(out->name, sizeof out->name, "%s", which);
  snprintf(out->symbol, sizeof out->symbol, "%s", which);
  snprintf(out->target, sizeof out->target, "fake");
  out->binary = binary;
  out->binary_size_B = sizeof binary;
  HCQ_TRY(hcq_program_add_buffer(out, "int32", store ? 64 : 8, HCQ_ACCESS_WRITE));
  if (store) HCQ_TRY(hcq_program_add_var(out, "n", true, 1, 64));
  else HCQ_TRY(hcq_program_add_buffer(out, "int32", 8, HCQ_ACCESS_READ));
  snprintf(out->global[0], sizeof out->global[0], store ? "n" : "8");
  return hcq_program_layout(out, 0);
}

static backend backends[] = {
    {.name = "cpu", .store_prog = cpu_prog, .program = cpu_program},
    {.name = "fakegpu", .store_prog = fake_prog, .program = fake_program},
    {.name = "nv", .store_prog = nv_prog, .program = nv_program, .available = nv_available},
    {.name = "amd", .store_prog = nv_prog, .program = nv_program, .available = amd_available},
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
  /* a device converting its own clock may read early by its stated calibration uncertainty, never late */
  CHECK(ts + b->dev->timestamp_early_ns >= t0 && ts <= hcq_now_ns());
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
  uint64_t prog = b->store_prog(b);
  hcq_args a;
  CHECK_OK(hcq_graph_args(g, dev, b->prefix_words, 1, 1, &a));
  hcq_val ab[1] = {hcq_sym(out)}, av[1] = {hcq_sym(n)};
  static const uint32_t zero_prefix[1024]; /* the device fills its own part of the prefix at exec (NV) */
  CHECK_OK(hcq_args_bind(&a, q, b->prefix_words ? zero_prefix : NULL, ab, av));
  hcq_val gl[3] = {hcq_sym(n), hcq_imm(1), hcq_imm(1)}, lo[3] = {hcq_imm(1), hcq_imm(1), hcq_imm(1)};
  CHECK_OK(hcq_queue_exec(q, hcq_imm(prog), &a, gl, lo));
  const uop *bytes = uop_alu2(ctx, UOP_MUL, n, uop_index_const(ctx, 4));
  hcq_device_info info;
  CHECK_OK(dev->ops->info ? dev->ops->info(dev, &info) : HCQ_OK);
  if (dev->ops->info && (info.features & HCQ_FEATURE_COPY_QUEUE)) {
    /* a copy engine: the copy runs on the graph's copy queue after the compute queue's graph signal */
    hcq_queue *cq;
    hcq_signal *ran;
    CHECK_OK(hcq_graph_queue(g, dev, HCQ_QUEUE_COPY, &cq));
    CHECK_OK(hcq_graph_signal(g, dev, &ran));
    CHECK_OK(hcq_queue_signal(q, hcq_imm(ran->va), hcq_imm(1)));
    CHECK_OK(hcq_queue_wait(cq, hcq_imm(ran->va), hcq_imm(1)));
    CHECK_OK(hcq_queue_copy(cq, hcq_sym(cp), hcq_sym(out), hcq_sym(bytes)));
  } else {
    CHECK_OK(hcq_queue_copy(q, hcq_sym(cp), hcq_sym(out), hcq_sym(bytes)));
  }
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

/* Program load errors: another target, a missing symbol, a kernel-argument layout that overlaps. */
static void test_program_load_errors(backend *b) {
  hcq_program p;
  CHECK_OK(b->program(b, "store", &p));
  hcq_rt_kernel *k = NULL;
  hcq_program bad = p;
  const char *other = strcmp(p.target, "amdgpu:gfx1100") ? "amdgpu:gfx1100" : "ptx:sm_90";
  char want[64];
  snprintf(bad.target, sizeof bad.target, "%s", other);
  snprintf(want, sizeof want, "compiled for %s", other);
  CHECK_ERR(hcq_rt_kernel_load(b->rd, &bad, &k), HCQ_CODE_UNSUPPORTED, want);
  bad = p;
  snprintf(bad.symbol, sizeof bad.symbol, "no_such_kernel");
  CHECK_ERR(hcq_rt_kernel_load(b->rd, &bad, &k), HCQ_CODE_NOT_FOUND, "no_such_kernel");
  bad = p;
  bad.params[1].offset_B = 4;
  CHECK_ERR(hcq_rt_kernel_load(b->rd, &bad, &k), HCQ_CODE_INVALID, "overlap");
  bad = p;
  bad.binary = NULL;
  CHECK_ERR(hcq_rt_kernel_load(b->rd, &bad, &k), HCQ_CODE_INVALID, "no binary");
  CHECK(k == NULL);
}

/* Launches through the runtime layer: fresh buffers and n on every launch; bad values refused before anything is
 * queued (the timeline does not move); results against n * 1000 + i computed here. */
static void test_launch_vars(backend *b) {
  hcq_program p;
  CHECK_OK(b->program(b, "store", &p));
  hcq_rt_kernel *k;
  CHECK_OK(hcq_rt_kernel_load(b->rd, &p, &k));
  if (!k) return;
  enum { NB = 3 };
  hcq_rt_buffer *bufs[NB];
  for (int i = 0; i < NB; i++) CHECK_OK(hcq_rt_buffer_alloc(b->rd, 64 * 4, HCQ_RT_MEM_HOST_VISIBLE, &bufs[i]));
  for (int r = 0; r < 7; r++) { /* queued back to back, run in order */
    int o = (r * 2) % NB, n = 1 + (r * 29) % 64;
    CHECK_OK(hcq_rt_launch(k, &bufs[o], 1, &(hcq_var){"n", n}, 1));
  }
  CHECK_OK(hcq_rt_sync(b->rd, TIMEOUT_MS));
  for (int i = 0; i < NB; i++) {
    /* replay the same sequence on the host */
    int32_t want[64] = {0};
    for (int r = 0; r < 7; r++) {
      int o = (r * 2) % NB, n = 1 + (r * 29) % 64;
      for (int e = 0; o == i && e < n; e++) want[e] = n * 1000 + e;
    }
    CHECK(memcmp(hcq_rt_buffer_host(bufs[i]), want, sizeof want) == 0);
  }
  uint64_t tl = b->dev->timeline_value;
  CHECK_ERR(hcq_rt_launch(k, bufs, 1, &(hcq_var){"n", 65}, 1), HCQ_CODE_INVALID, "outside its declared range 1..64");
  CHECK_ERR(hcq_rt_launch(k, bufs, 1, &(hcq_var){"n", 0}, 1), HCQ_CODE_INVALID, "outside its declared range");
  CHECK_ERR(hcq_rt_launch(k, bufs, 1, &(hcq_var){"m", 3}, 1), HCQ_CODE_NOT_FOUND, "needs variable n");
  CHECK_ERR(hcq_rt_launch(k, bufs, 2, &(hcq_var){"n", 3}, 1), HCQ_CODE_INVALID, "takes 1 buffers, 2 given");
  CHECK_EQ_INT(b->dev->timeline_value, tl);
  hcq_rt_kernel_free(k);
  for (int i = 0; i < NB; i++) hcq_rt_buffer_free(bufs[i]);
  CHECK_OK(hcq_rt_sync(b->rd, TIMEOUT_MS));
}

/* A faulting kernel is HCQ_CODE_KERNEL_FAULT naming it, and the device keeps running work afterwards. */
static void test_kernel_fault(backend *b) {
  hcq_program fp, sp;
  CHECK_OK(b->program(b, "fault", &fp));
  CHECK_OK(b->program(b, "store", &sp));
  hcq_rt_kernel *kf, *ks;
  CHECK_OK(hcq_rt_kernel_load(b->rd, &fp, &kf));
  CHECK_OK(hcq_rt_kernel_load(b->rd, &sp, &ks));
  hcq_rt_buffer *bufs[2], *out;
  CHECK_OK(hcq_rt_buffer_alloc(b->rd, 32, HCQ_RT_MEM_HOST_VISIBLE, &bufs[0]));
  CHECK_OK(hcq_rt_buffer_alloc(b->rd, 32, HCQ_RT_MEM_HOST_VISIBLE, &bufs[1]));
  CHECK_OK(hcq_rt_buffer_alloc(b->rd, 256, HCQ_RT_MEM_HOST_VISIBLE, &out));
  CHECK_OK(hcq_rt_launch(kf, bufs, 2, NULL, 0));
  CHECK_OK(hcq_rt_launch(ks, &out, 1, &(hcq_var){"n", 5}, 1)); /* queued behind the fault */
  CHECK_ERR(hcq_rt_sync(b->rd, TIMEOUT_MS), HCQ_CODE_KERNEL_FAULT, "fault");
  CHECK_EQ_INT(((int32_t *)hcq_rt_buffer_host(out))[4], 5004);
  CHECK_OK(hcq_rt_launch(ks, &out, 1, &(hcq_var){"n", 9}, 1));
  CHECK_OK(hcq_rt_sync(b->rd, TIMEOUT_MS)); /* the error was reported once; the device lives on */
  CHECK_EQ_INT(((int32_t *)hcq_rt_buffer_host(out))[8], 9008);
  hcq_rt_kernel_free(kf);
  hcq_rt_kernel_free(ks);
  hcq_rt_buffer_free(bufs[0]);
  hcq_rt_buffer_free(bufs[1]);
  hcq_rt_buffer_free(out);
}

/* A device without HCQ_FEATURE_KERNEL_FAULTS (a fault stops its queues, as on hardware): the fault is
 * HCQ_CODE_KERNEL_FAULT naming the faulting kernel, the kernel queued behind it never runs, and later work is
 * refused as HCQ_CODE_DEVICE_LOST until the device is reopened (run last). */
static void test_kernel_fault_stops(backend *b) {
  hcq_program fp, sp;
  CHECK_OK(b->program(b, "fault", &fp));
  CHECK_OK(b->program(b, "store", &sp));
  hcq_rt_kernel *kf = NULL, *ks = NULL;
  CHECK_OK(hcq_rt_kernel_load(b->rd, &fp, &kf));
  CHECK_OK(hcq_rt_kernel_load(b->rd, &sp, &ks));
  hcq_rt_buffer *bufs[2] = {0}, *out = NULL;
  CHECK_OK(hcq_rt_buffer_alloc(b->rd, 32, HCQ_RT_MEM_HOST_VISIBLE, &bufs[0]));
  CHECK_OK(hcq_rt_buffer_alloc(b->rd, 32, HCQ_RT_MEM_HOST_VISIBLE, &bufs[1]));
  CHECK_OK(hcq_rt_buffer_alloc(b->rd, 256, HCQ_RT_MEM_HOST_VISIBLE, &out));
  if (kf && ks && out) {
    CHECK_OK(hcq_rt_launch(kf, bufs, 2, NULL, 0));
    CHECK_OK(hcq_rt_launch(ks, &out, 1, &(hcq_var){"n", 5}, 1)); /* queued behind the fault */
    CHECK_ERR(hcq_rt_sync(b->rd, TIMEOUT_MS), HCQ_CODE_KERNEL_FAULT, "kernel 'fault'");
    CHECK_EQ_INT(((int32_t *)hcq_rt_buffer_host(out))[4], 0);
    CHECK_ERR(hcq_rt_launch(ks, &out, 1, &(hcq_var){"n", 9}, 1), HCQ_CODE_DEVICE_LOST, "open it again");
  }
  hcq_rt_kernel_free(kf);
  hcq_rt_kernel_free(ks);
  hcq_rt_buffer_free(bufs[0]);
  hcq_rt_buffer_free(bufs[1]);
  hcq_rt_buffer_free(out);
}

/* A wait for a value nobody signals is HCQ_CODE_TIMEOUT after about the time asked for, through the device's
 * own wait path. */
static void test_timeout(backend *b) {
  hcq_signal *s;
  CHECK_OK(hcq_signal_create(b->dev, "never", 0, &s));
  uint64_t t0 = hcq_now_ns();
  hcq_status st = b->dev->ops->signal_wait ? b->dev->ops->signal_wait(b->dev, s, 1, 30) : hcq_signal_wait(s, 1, 30);
  double ms = (double)(hcq_now_ns() - t0) / 1e6;
  CHECK_ERR(st, HCQ_CODE_TIMEOUT, "");
  CHECK(ms >= 25 && ms < 2000);
  hcq_signal_destroy(s);
}

/* The device describes itself. */
static void test_info(backend *b) {
  hcq_device_info info;
  CHECK_OK(hcq_rt_info(b->rd, &info));
  CHECK_EQ_STR(info.backend, b->name);
  CHECK(info.target[0] != 0 && info.max_global[0] >= 64);
  CHECK_EQ_INT(info.is_mock, strcmp(b->name, "cpu") != 0 && !g_no_mock);
}

static double ms_since(uint64_t t0) { return (double)(hcq_now_ns() - t0) / 1e6; }
#define RUN_CASE(fn, b)                                                                                              \
  do {                                                                                                               \
    int f0 = testing_failures;                                                                                       \
    uint64_t t0 = hcq_now_ns();                                                                                      \
    fn(b);                                                                                                           \
    printf("  case %-32s %-4s %9.2f ms\n", #fn, testing_failures == f0 ? "ok" : "FAIL", ms_since(t0));            \
  } while (0)

/* Arguments (none for `make test`: every backend, the NV mock installed):
 *   --only NAME     run one backend; exit 77 when its device is absent
 *   --no-mock       do not install the NV mock (HCQ_MOCK too is ignored): the real device or nothing
 *   --programs DIR  nv programs from DIR (no ptxas needed)   --prepare DIR: write them there (needs ptxas), exit */
int main(int argc, char **argv) {
  const char *only = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--no-mock")) g_no_mock = true;
    else if (!strcmp(argv[i], "--programs") && i + 1 < argc) g_progs_dir = argv[++i];
    else if (!strcmp(argv[i], "--prepare") && i + 1 < argc) {
      for (int k = 0; k < 2; k++) CHECK_OK(nv_prepared("ptx:sm_90", k, true, argv[i + 1]));
      for (int k = 0; k < 2; k++) nv_hw_prog_free(&g_nv_progs[k]);
      printf("conformance --prepare: 2 nv programs for ptx:sm_90 in %s\n", argv[i + 1]);
      return testing_summary("hcq/conformance_test --prepare");
    } else {
      fprintf(stderr, "conformance_test: unknown argument '%s' (--only NAME, --no-mock, --programs DIR, --prepare DIR)\n",
              argv[i]);
      return 2;
    }
  }
  CHECK_OK(uop_ctx_create(&ctx));
  /* a new backend: its own folder, one line in hcq/rt_registry.c; a test-only one is registered here */
  CHECK_OK(hcq_rt_register(&(hcq_rt_backend){"fakegpu", fake_open, NULL}));
  if (!g_no_mock) CHECK_OK(nv_mock_env_install(kif_default())); /* HCQ_MOCK=nv's mock */
  bool found = false;
  for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
    backend *b = &backends[i];
    if (only && strcmp(only, b->name) != 0) continue;
    found = true;
    if (b->available && !b->available()) {
      printf("conformance %s: skipped (needs ptxas, and no qemu-user)\n", b->name);
      continue;
    }
    int before = testing_failures;
    hcq_status st = hcq_rt_open(b->name, &b->rd);
    if (only && hcq_status_code(st) == HCQ_CODE_NOT_FOUND) {
      printf("conformance %s: SKIPPED (%s)\n", b->name, hcq_status_message(st));
      hcq_status_free(st);
      uop_ctx_destroy(ctx);
      return 77;
    }
    CHECK_OK(st);
    if (!b->rd) continue;
    b->dev = hcq_rt_lower(b->rd);
    hcq_device_info info;
    CHECK_OK(hcq_rt_info(b->rd, &info));
    printf("conformance %s: %s (%s, %s)\n", b->name, info.name, info.target, info.is_mock ? "mock" : "hardware");
    RUN_CASE(test_info, b);
    RUN_CASE(test_signal_timestamp, b);
    RUN_CASE(test_copy_and_cross_queue_wait, b);
    RUN_CASE(test_graph, b);
    RUN_CASE(test_timeline_wrap, b);
    RUN_CASE(test_graph, b); /* graphs keep working after a wrap */
    RUN_CASE(test_program_load_errors, b);
    RUN_CASE(test_launch_vars, b);
    RUN_CASE(test_timeout, b);
    if (info.features & HCQ_FEATURE_KERNEL_FAULTS) {
      RUN_CASE(test_kernel_fault, b);
      CHECK_OK(hcq_device_synchronize(b->dev, TIMEOUT_MS));
    } else {
      RUN_CASE(test_kernel_fault_stops, b); /* last: the device is stopped afterwards */
    }
    if (b->prog) cpu_device_program_destroy(b->prog);
    hcq_rt_kernel_free(b->kern);
    hcq_rt_program_free(b->progs[0]);
    hcq_rt_program_free(b->progs[1]);
    hcq_rt_close(b->rd);
    printf("conformance %s: %s\n", b->name, testing_failures == before ? "ok" : "FAILED");
  }
  for (int k = 0; k < 2; k++) nv_hw_prog_free(&g_nv_progs[k]);
  if (only && !found) fprintf(stderr, "conformance_test: no backend '%s' in this suite\n", only);
  CHECK(!only || found);
  uop_ctx_destroy(ctx);
  return testing_summary("hcq/conformance_test");
}
