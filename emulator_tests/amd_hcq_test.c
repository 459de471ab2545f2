/* The AMD device through the generic hcq queue API on the emulated KFD: PM4 from the first word. Signals (64-bit on
 * compute), timestamps, copies on the SDMA queue and a compute queue waiting for them, exec of a kernel descriptor
 * (the mock's dispatch hook stands in for the RDNA3 interpreter: it runs a host function per thread with the
 * arguments it finds through the kernarg pointer in USER_DATA_0/1), graph replay patching only PM4 words, the
 * timeline's 2^31 wrap, copies on both queues (constant and symbolic sizes), and the refusals (unsupported kernel
 * features, symbolic sizes over one packet). Expected values are
 * computed here from the inputs, as in hcq/conformance_test.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "amd/amd_hcq.h"
#include "amd/amd_pm4.h"
#include "emulator_tests/kfd_mock.h"
#include "hcq/args.h"
#include "hcq/graph.h"
#include "hcq/queue.h"
#include "hcq/signal.h"
#include "base/testing.h"

#define TIMEOUT_MS 5000

/* The "kernel": out[tid] = n * 1000 + tid, kernarg = {u64 out, u32 n}. */
static uint64_t g_store_entry;
static int run_store(void *user, kfd_mock *m, const kfd_mock_dispatch *d, char *detail) {
  (void)user;
  if (d->pgm_addr != g_store_entry) return snprintf(detail, 160, "unknown program 0x%llx", (unsigned long long)d->pgm_addr), 1;
  if (kfd_mock_bytes_after(m, d->gpu, d->pgm_addr) != 4096 - 256) return snprintf(detail, 160, "code extent"), 1;
  uint64_t ka = (uint64_t)d->user_data[1] << 32 | d->user_data[0];
  if (!kfd_mock_range_ok(m, d->gpu, ka, 12)) return snprintf(detail, 160, "kernarg 0x%llx unmapped", (unsigned long long)ka), 1;
  uint64_t out;
  int32_t n;
  memcpy(&out, (void *)(uintptr_t)ka, 8);
  memcpy(&n, (void *)(uintptr_t)(ka + 8), 4);
  uint32_t threads = d->grid[0] * d->num_thread[0];
  if (!kfd_mock_range_ok(m, d->gpu, out, 4ull * threads)) return snprintf(detail, 160, "store out of bounds"), 1;
  for (uint32_t t = 0; t < threads; t++) ((int32_t *)(uintptr_t)out)[t] = n * 1000 + (int32_t)t;
  return 0;
}

static hcq_mem make_program(hcq_device *dev, uint16_t properties, uint32_t private_B) {
  hcq_mem m;
  CHECK_OK(dev->ops->mem_alloc(dev, 4096, 0, &m));
  uint8_t *kd = m.host;
  uint32_t kernarg = 12, rsrc1 = 0x60af0000, rsrc2 = 0x8c;
  int64_t entry = 256;
  memcpy(kd + 4, &private_B, 4);
  memcpy(kd + 8, &kernarg, 4);
  memcpy(kd + 16, &entry, 8);
  memcpy(kd + 48, &rsrc1, 4);
  memcpy(kd + 52, &rsrc2, 4);
  memcpy(kd + 56, &properties, 2);
  return m;
}

static void submit_wait(hcq_device *dev, hcq_queue *q, hcq_signal *s, uint64_t v) {
  CHECK_OK(hcq_queue_submit(q, dev, NULL, 0));
  CHECK_OK(hcq_signal_wait(s, v, TIMEOUT_MS));
}

static void test_signal_timestamp_copy(hcq_device *dev) {
  hcq_signal *s, *copied, *done;
  CHECK_OK(hcq_signal_create(dev, "s", 0, &s));
  CHECK_OK(hcq_signal_create(dev, "copied", 0, &copied));
  CHECK_OK(hcq_signal_create(dev, "done", 0, &done));
  hcq_queue *q, *cq;
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &cq));
  CHECK_OK(hcq_queue_memory_barrier(q));
  CHECK_OK(hcq_queue_timestamp(q, hcq_imm(s->va)));
  CHECK_OK(hcq_queue_signal(q, hcq_imm(s->va), hcq_imm(0x123456789ULL))); /* 64-bit on PM4 */
  uint64_t t0 = hcq_now_ns();
  submit_wait(dev, q, s, 0x123456789ULL);
  CHECK_EQ_INT(hcq_signal_value(s), 0x123456789ULL);
  /* the GPU writes 100 MHz ticks from its own epoch; the device converts them to ns of hcq_now_ns() */
  uint64_t ticks = s->mem->timestamp_ns, ts = hcq_signal_timestamp_ns(s);
  CHECK(ticks < t0 / 10 - 1000000000ull || ticks > t0 / 10 + 1000000000ull); /* not the host clock / 10 */
  CHECK(ts + dev->timestamp_early_ns >= t0 && ts <= hcq_now_ns()); /* early by at most the calibration error */
  /* copy on SDMA, then compute waits for it */
  enum { N = 3000 };
  hcq_mem src, dst;
  CHECK_OK(dev->ops->mem_alloc(dev, N, 0, &src));
  CHECK_OK(dev->ops->mem_alloc(dev, N, 0, &dst));
  for (int i = 0; i < N; i++) ((uint8_t *)src.host)[i] = (uint8_t)(i * 7 + 1);
  hcq_queue_destroy(q);
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
  CHECK_OK(hcq_queue_copy(cq, hcq_imm(dst.va + 1), hcq_imm(src.va), hcq_imm(N - 2)));
  CHECK_OK(hcq_queue_timestamp(cq, hcq_imm(copied->va)));
  CHECK_OK(hcq_queue_signal(cq, hcq_imm(copied->va), hcq_imm(1)));
  CHECK_OK(hcq_queue_wait(q, hcq_imm(copied->va), hcq_imm(1)));
  CHECK_OK(hcq_queue_signal(q, hcq_imm(done->va), hcq_imm(5)));
  CHECK_OK(hcq_queue_submit(q, dev, NULL, 0)); /* compute first: it must wait for the copy queue */
  CHECK_OK(hcq_queue_submit(cq, dev, NULL, 0));
  CHECK_OK(hcq_signal_wait(done, 5, TIMEOUT_MS));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += ((uint8_t *)dst.host)[i] != (i == 0 || i == N - 1 ? 0 : (uint8_t)((i - 1) * 7 + 1));
  CHECK_EQ_INT(bad, 0);
  CHECK(copied->mem->timestamp_ns != 0);
  /* refusals: a 33-bit value on SDMA */
  CHECK_ERR(hcq_queue_signal(cq, hcq_imm(copied->va), hcq_imm(1ull << 32)), HCQ_CODE_INVALID, "");
  hcq_queue_destroy(q);
  hcq_queue_destroy(cq);
  hcq_signal_destroy(s);
  hcq_signal_destroy(copied);
  hcq_signal_destroy(done);
  dev->ops->mem_free(dev, &src);
  dev->ops->mem_free(dev, &dst);
}

/* Copies on either queue (SDMA COPY_LINEAR or CP DMA DMA_DATA): sizes around the packet limit and unaligned offsets
 * against a memmove of the same pattern done here (bytes around the destination stay untouched); symbolic sizes and
 * addresses patched per submit; a symbolic size whose range does not fit one packet is refused; a timestamp to a
 * symbolic signal address. */
static void test_copies(hcq_device *dev, amd_hcq *h, hcq_queue_kind kind) {
  bool sdma = kind == HCQ_QUEUE_COPY;
  uint64_t chunk = sdma ? h->amd->sdma_max_copy_B : amd_pm4_dma_data_max_B(h->amd->arch->gfx9);
  enum { CAP = 200000 };
  hcq_mem src, dst;
  CHECK_OK(dev->ops->mem_alloc(dev, CAP, 0, &src));
  CHECK_OK(dev->ops->mem_alloc(dev, CAP, 0, &dst));
  uint8_t *want = malloc(CAP);
  for (int i = 0; i < CAP; i++) ((uint8_t *)src.host)[i] = (uint8_t)(i * 131 + 7 + i / 251);
  hcq_signal *done;
  CHECK_OK(hcq_signal_create(dev, "copied", 0, &done));
  uint64_t sizes[] = {1, 3, 31, 4097, 32735, 32736, 32737, 3 * 32736 + 17, CAP - 8};
  uint64_t v = 0;
  for (size_t t = 0; t < sizeof sizes / sizeof sizes[0] && want; t++) {
    uint64_t n = sizes[t], so = t % 4, doff = (t * 3) % 5;
    memset(dst.host, 0xa5, CAP);
    memset(want, 0xa5, CAP);
    memcpy(want + doff, (uint8_t *)src.host + so, n);
    hcq_queue *q;
    CHECK_OK(hcq_queue_create(dev, kind, &q));
    CHECK_OK(hcq_queue_copy(q, hcq_imm(dst.va + doff), hcq_imm(src.va + so), hcq_imm(n)));
    CHECK_OK(hcq_queue_signal(q, hcq_imm(done->va), hcq_imm(++v)));
    submit_wait(dev, q, done, v);
    CHECK(memcmp(dst.host, want, CAP) == 0);
    hcq_queue_destroy(q);
  }
  /* symbolic: one recorded queue, replayed with fresh addresses and sizes up to one packet */
  uop_ctx *ctx;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *nv = uop_var(ctx, "n", 1, (int64_t)(chunk < 40000 ? chunk : 40000), uop_dt(UOP_INDEX));
  const uop *dv = uop_var(ctx, "d", 0, (int64_t)UINT64_MAX, uop_dt(UOP_UINT64));
  const uop *sv = uop_var(ctx, "s", 0, (int64_t)UINT64_MAX, uop_dt(UOP_UINT64));
  const uop *tv = uop_var(ctx, "t", 0, (int64_t)UINT64_MAX, uop_dt(UOP_UINT64));
  hcq_queue *q;
  CHECK_OK(hcq_queue_create(dev, kind, &q));
  CHECK_OK(hcq_queue_copy(q, hcq_sym(dv), hcq_sym(sv), hcq_sym(nv)));
  CHECK_OK(hcq_queue_timestamp(q, hcq_sym(tv)));
  CHECK_OK(hcq_queue_signal(q, hcq_imm(done->va), hcq_sym(uop_var(ctx, "v", 0, 1 << 30, uop_dt(UOP_INDEX)))));
  int64_t ns[] = {1, 2, 33, 4096, 32736, 17};
  for (size_t r = 0; r < sizeof ns / sizeof ns[0] && want; r++) {
    int64_t n = ns[r] <= uop_vmax(nv) ? ns[r] : uop_vmax(nv);
    uint64_t so = (r * 7) % 64, doff = (r * 5) % 64;
    memset(dst.host, 0x5a, CAP);
    memset(want, 0x5a, CAP);
    memcpy(want + doff, (uint8_t *)src.host + so, (size_t)n);
    done->mem->timestamp_ns = 0;
    uint64_t t0 = hcq_now_ns();
    uop_var_val vals[5] = {{"n", n}, {"d", (int64_t)(dst.va + doff)}, {"s", (int64_t)(src.va + so)},
                           {"t", (int64_t)done->va}, {"v", (int64_t)++v}};
    CHECK_OK(hcq_queue_submit(q, dev, vals, 5));
    CHECK_OK(hcq_signal_wait(done, v, TIMEOUT_MS));
    CHECK(memcmp(dst.host, want, CAP) == 0);
    uint64_t ts = hcq_signal_timestamp_ns(done);
    CHECK(ts + dev->timestamp_early_ns >= t0 && ts <= hcq_now_ns()); /* early by at most the calibration error */
  }
  hcq_queue_destroy(q);
  /* a size whose declared range spans more than one packet is refused, never split wrongly */
  CHECK_OK(hcq_queue_create(dev, kind, &q));
  const uop *big = uop_var(ctx, "big", 1, (int64_t)chunk + 1, uop_dt(UOP_INDEX));
  CHECK_ERR(hcq_queue_copy(q, hcq_imm(dst.va), hcq_imm(src.va), hcq_sym(big)), HCQ_CODE_UNSUPPORTED, "must lie in 1..");
  const uop *zero = uop_var(ctx, "z", 0, 8, uop_dt(UOP_INDEX));
  CHECK_ERR(hcq_queue_copy(q, hcq_imm(dst.va), hcq_imm(src.va), hcq_sym(zero)), HCQ_CODE_UNSUPPORTED, "spans 0..8");
  hcq_queue_destroy(q);
  uop_ctx_destroy(ctx);
  free(want);
  hcq_signal_destroy(done);
  dev->ops->mem_free(dev, &src);
  dev->ops->mem_free(dev, &dst);
}

/* exec in a graph: out and n are variables; each replay patches the PM4/kernarg words that changed. */
static void test_exec_graph(hcq_device *dev) {
  enum { NB = 3, MAXN = 64 };
  hcq_mem prog = make_program(dev, 0x8 | 0x400, 0), bufs[NB];
  g_store_entry = prog.va + 256;
  for (int i = 0; i < NB; i++) CHECK_OK(dev->ops->mem_alloc(dev, MAXN * 4, 0, &bufs[i]));
  uop_ctx *ctx;
  CHECK_OK(uop_ctx_create(&ctx));
  hcq_graph *g;
  CHECK_OK(hcq_graph_create(ctx, &g));
  const uop *out = hcq_graph_var(g, "out"), *n = uop_var(ctx, "n", 1, MAXN, uop_dt(UOP_INDEX));
  hcq_queue *q;
  CHECK_OK(hcq_graph_queue(g, dev, HCQ_QUEUE_COMPUTE, &q));
  hcq_args a;
  CHECK_OK(hcq_graph_args(g, dev, 0, 1, 1, &a));
  hcq_val ab[1] = {hcq_sym(out)}, av[1] = {hcq_sym(n)};
  CHECK_OK(hcq_args_bind(&a, q, NULL, ab, av));
  hcq_val gl[3] = {hcq_sym(n), hcq_imm(1), hcq_imm(1)}, lo[3] = {hcq_imm(1), hcq_imm(1), hcq_imm(1)};
  CHECK_OK(hcq_queue_exec(q, hcq_imm(prog.va), &a, gl, lo));
  CHECK_OK(hcq_graph_finalize(g));
  for (int r = 0; r < 6; r++) {
    int o = r % NB, nv = 1 + (r * 13) % MAXN;
    uop_var_val v[2] = {{"out", (int64_t)bufs[o].va}, {"n", nv}};
    memset(bufs[o].host, 0xee, MAXN * 4);
    CHECK_OK(hcq_graph_replay(g, v, 2, TIMEOUT_MS));
    CHECK_OK(hcq_graph_wait(g, TIMEOUT_MS));
    int bad = 0;
    for (int i = 0; i < MAXN; i++) bad += ((int32_t *)bufs[o].host)[i] != (i < nv ? nv * 1000 + i : (int32_t)0xeeeeeeee);
    CHECK_EQ_INT(bad, 0);
  }
  hcq_graph_destroy(g);
  /* Kernels needing what the encoder does not set up, or whose descriptor contradicts itself (a private segment
   * without RSRC2.SCRATCH_EN), are refused by name. */
  hcq_mem scratchy = make_program(dev, 0x8, 64), qptr = make_program(dev, 0x8 | 0x4, 0);
  hcq_queue *q2;
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q2));
  hcq_val one[3] = {hcq_imm(1), hcq_imm(1), hcq_imm(1)};
  CHECK_ERR(hcq_queue_exec(q2, hcq_imm(scratchy.va), NULL, one, one), HCQ_CODE_INVALID, "SCRATCH_EN is 0 but the private segment is 64 bytes");
  CHECK_ERR(hcq_queue_exec(q2, hcq_imm(qptr.va), NULL, one, one), HCQ_CODE_UNSUPPORTED, "the queue pointer");
  CHECK_ERR(hcq_queue_exec(q2, hcq_imm(prog.va + 8), NULL, one, one), HCQ_CODE_INVALID, "no 64-byte aligned");
  hcq_queue_destroy(q2);
  dev->ops->mem_free(dev, &scratchy);
  dev->ops->mem_free(dev, &qptr);
  for (int i = 0; i < NB; i++) dev->ops->mem_free(dev, &bufs[i]);
  dev->ops->mem_free(dev, &prog);
  uop_ctx_destroy(ctx);
}

static void test_timeline_wrap(hcq_device *dev) {
  CHECK_OK(hcq_device_synchronize(dev, TIMEOUT_MS));
  dev->timeline_value = HCQ_TIMELINE_WRAP_AT + 1;
  hcq_signal_set(dev->timeline, HCQ_TIMELINE_WRAP_AT);
  uint64_t wraps = dev->timeline_wraps;
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
  CHECK_EQ_INT(hcq_signal_value(dev->timeline), hcq_timeline_last(dev));
}

/* CPU cost of one exec submit (record once, then submit = copy into the ring + wptr + doorbell; the mock runs the
 * packets on its own thread). Printed, not asserted: the machine is shared. */
static void measure_exec_submit(hcq_device *dev) {
  hcq_mem prog = make_program(dev, 0x8 | 0x400, 0), out;
  g_store_entry = prog.va + 256;
  CHECK_OK(dev->ops->mem_alloc(dev, 4096, 0, &out));
  hcq_mem am;
  CHECK_OK(dev->ops->mem_alloc(dev, 4096, 0, &am));
  hcq_args a;
  CHECK_OK(hcq_args_init(&a, am.host, am.va, am.size_B, 0, 1, 1));
  hcq_signal *s;
  CHECK_OK(hcq_signal_create(dev, "bench", 0, &s));
  hcq_queue *q;
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
  hcq_val one[3] = {hcq_imm(1), hcq_imm(1), hcq_imm(1)}, ab[1] = {hcq_imm(out.va)}, av[1] = {hcq_imm(3)};
  CHECK_OK(hcq_args_bind(&a, q, NULL, ab, av));
  CHECK_OK(hcq_queue_exec(q, hcq_imm(prog.va), &a, one, one));
  CHECK_OK(hcq_queue_signal(q, hcq_imm(s->va), hcq_imm(1)));
  enum { N = 2000 };
  uint64_t t0 = hcq_now_ns();
  for (int i = 0; i < N; i++) CHECK_OK(hcq_queue_submit(q, dev, NULL, 0));
  uint64_t t1 = hcq_now_ns();
  CHECK_OK(hcq_signal_wait(s, 1, TIMEOUT_MS));
  printf("amd mock: exec+signal submit %.2f us per submit (%zu words; mock execution on its own thread)\n",
         (double)(t1 - t0) / N / 1000.0, hcq_queue_word_count(q));
  hcq_queue_destroy(q);
  hcq_signal_destroy(s);
  dev->ops->mem_free(dev, &am);
  dev->ops->mem_free(dev, &out);
  dev->ops->mem_free(dev, &prog);
}

/* Every KFD call of amd_hcq_open (device open, then the hcq_device's signal pages and the clock calibration) failing
 * in turn: a clear error naming the injected fault, nothing left allocated. */
static void test_open_fault_injection(kif *k, kfd_mock *m) {
  int injected = 0, clean = 0;
  for (uint64_t nth = 1; nth < 400 && clean < 3; nth++) {
    CHECK_OK(kif_fault_nth_call(k, nth, EIO));
    amd_hcq *h = NULL;
    hcq_status st = amd_hcq_open(k, 0, NULL, &h);
    kif_fault_reset(k);
    if (!st) { amd_hcq_close(h); clean++; continue; }
    clean = 0;
    injected++;
    CHECK(strstr(hcq_status_message(st), "injected fault") != NULL);
    hcq_status_free(st);
    CHECK_EQ_INT(kfd_mock_live_allocations(m), 0);
  }
  CHECK(injected > 20);
}

int main(void) {
  kif *k = NULL;
  kfd_mock *m = NULL;
  CHECK_OK(kif_create(&k));
  CHECK_OK(kfd_mock_create(NULL, &m));
  if (k && m) CHECK_OK(kfd_mock_attach(m, k));
  kfd_mock_set_dispatch_hook(m, run_store, NULL);
  amd_hcq *h = NULL;
  CHECK_OK(amd_hcq_open(k, 0, NULL, &h));
  if (h) {
    test_signal_timestamp_copy(&h->dev);
    test_copies(&h->dev, h, HCQ_QUEUE_COMPUTE);
    test_copies(&h->dev, h, HCQ_QUEUE_COPY);
    test_exec_graph(&h->dev);
    test_timeline_wrap(&h->dev);
    test_exec_graph(&h->dev); /* still works after a wrap */
    measure_exec_submit(&h->dev);
    CHECK_OK(hcq_device_synchronize(&h->dev, TIMEOUT_MS));
    CHECK(kfd_mock_last_error(m) == NULL);
    amd_hcq_close(h);
    CHECK_EQ_INT(kfd_mock_live_allocations(m), 0);
    test_open_fault_injection(k, m);
  }
  CHECK_OK(kfd_mock_detach(m));
  kfd_mock_destroy(m);
  kif_destroy(k);
  return testing_summary("amd_hcq_test");
}
