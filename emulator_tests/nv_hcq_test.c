/* The NV hcq device on the mock: queues of push-buffer methods (signal, wait across the compute and copy
 * channels, copy, timestamp, barrier), symbolic values and copy operands patched between submits, the clear refusals of what is
 * not wired yet (copies on the compute queue), and kernel launches through QMDs. */
#include "emulator_tests/nv_test_64bit.h"
#include <string.h>

#include "emulator_tests/nv_mock.h"
#include "hcq/args.h"
#include "hcq/queue.h"
#include "hcq/signal.h"
#include "base/testing.h"
#include "nv/nv_hcq.h"
#include "nv/nv_program.h"
#include "uop/uop.h"

typedef struct {
  int n;
  nv_mock_launch last;
  uint64_t arg_buf;
  uint32_t arg_val;
} launches;

/* Stands in for the PTX interpreter: records the decoded launch and reads the kernel's arguments where the
 * kernel would (constant bank 0 after the 0x160-byte header), through the mock's access check. */
static int hook(void *ctx, nv_mock *m, const nv_mock_launch *l, char *detail) {
  launches *h = ctx;
  int err = nv_mock_check_access(m, l->cbank0_va, 0x160 + 12, false, detail);
  if (err) return err;
  h->n++, h->last = *l;
  memcpy(&h->arg_buf, (const uint8_t *)(uintptr_t)l->cbank0_va + 0x160, 8);
  memcpy(&h->arg_val, (const uint8_t *)(uintptr_t)l->cbank0_va + 0x168, 4);
  return 0;
}

/* exec: program image + QMD template, the QMD in the argument memory as a region; grid, block and argument values
 * symbolic and patched per submit (graph replay patches QMD fields and argument words only) */
static void check_exec(hcq_device *dev, nv_mock *m, hcq_signal *s, uop_ctx *ctx) {
  nv_dev *d = nv_hcq_dev(dev);
  uint8_t image[0x300];
  for (int i = 0; i < 0x300; i++) image[i] = (uint8_t)i;
  nv_program_info info = {.text_offset_B = 0x100, .text_size_B = 0x80, .regs = 32, .shared_B = 0x400, .cbuf0_size_B = 0x160};
  nv_program *p;
  CHECK_OK(nv_program_load(d, image, sizeof image, &info, &p));
  if (!p) return;
  CHECK(memcmp((const uint8_t *)(uintptr_t)p->prog_va, image + 0x100, 0x80) == 0);
  hcq_mem am;
  CHECK_OK(dev->ops->mem_alloc(dev, 0x1000, HCQ_MEM_KERNARG, &am));
  hcq_args a;
  CHECK_OK(hcq_args_init(&a, am.host, am.va, am.size_B, 0x160 / 4, 1, 1));
  launches h = {0};
  nv_mock_set_launch_hook(m, hook, &h);
  const uop *gx = uop_var(ctx, "gx", 1, 1 << 20, uop_dt(UOP_INDEX)), *ly = uop_var(ctx, "ly", 1, 64, uop_dt(UOP_INDEX));
  const uop *v = uop_var(ctx, "val", 0, 1 << 30, uop_dt(UOP_INDEX));
  hcq_queue *q;
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
  uint32_t prefix[0x160 / 4] = {0};
  hcq_val bufs[1] = {hcq_imm(0x123456789000ull)}, vals[1] = {hcq_sym(v)};
  CHECK_OK(hcq_args_bind(&a, q, prefix, bufs, vals));
  hcq_val g[3] = {hcq_sym(gx), hcq_imm(65535), hcq_imm(3)}, l[3] = {hcq_imm(32), hcq_sym(ly), hcq_imm(2)};
  CHECK_OK(hcq_queue_exec(q, hcq_imm((uintptr_t)p), &a, g, l));
  CHECK_OK(hcq_queue_signal(q, hcq_imm(s->va), hcq_imm(1)));
  uop_var_val vv[3] = {{"gx", 3}, {"ly", 4}, {"val", 7}};
  CHECK_OK(hcq_queue_submit(q, dev, vv, 3));
  CHECK_EQ_INT(h.n, 1);
  CHECK_EQ_INT(h.last.grid[0], 3);
  CHECK_EQ_INT(h.last.grid[1], 65535);
  CHECK_EQ_INT(h.last.grid[2], 3);
  CHECK_EQ_INT(h.last.block[0], 32);
  CHECK_EQ_INT(h.last.block[1], 4);
  CHECK_EQ_INT(h.last.block[2], 2);
  CHECK(h.last.program_va == p->prog_va && h.last.cbank0_va == am.va);
  CHECK_EQ_INT(h.last.cbank0_size_B, 0x160);
  CHECK_EQ_INT(h.last.shared_size_B, 0x400);
  CHECK(h.arg_buf == 0x123456789000ull);
  CHECK_EQ_INT(h.arg_val, 7);
  CHECK(hcq_signal_value(s) == 1);
  vv[0].value = 5, vv[1].value = 2, vv[2].value = 8;
  CHECK_OK(hcq_queue_submit(q, dev, vv, 3));
  CHECK_EQ_INT(h.n, 2);
  CHECK_EQ_INT(h.last.grid[0], 5);
  CHECK_EQ_INT(h.last.block[1], 2);
  CHECK_EQ_INT(h.arg_val, 8);
  /* 32 x 64 x 2 threads: over 1024 */
  hcq_queue *qx;
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &qx));
  hcq_val big[3] = {hcq_imm(32), hcq_imm(64), hcq_imm(2)};
  CHECK_ERR(hcq_queue_exec(qx, hcq_imm((uintptr_t)p), &a, g, big), HCQ_CODE_INVALID, "threads per block");
  hcq_queue_destroy(qx);
  /* grid y is a 16-bit QMD field: 65536 does not fit */
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &qx));
  hcq_val tall[3] = {hcq_imm(1), hcq_imm(65536), hcq_imm(1)};
  CHECK_ERR(hcq_queue_exec(qx, hcq_imm((uintptr_t)p), &a, tall, l), HCQ_CODE_INVALID, "does not fit the 16-bit field");
  hcq_queue_destroy(qx);
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &qx));
  CHECK_ERR(hcq_queue_exec(qx, hcq_imm((uintptr_t)p), &a, g, l), HCQ_CODE_UNSUPPORTED, "compute queue");
  hcq_queue_destroy(qx);
  hcq_queue_destroy(q);
  dev->ops->mem_free(dev, &am);
  nv_program_free(d, p);
}

int main(void) {
  NV_TEST_NEEDS_64BIT("nv_hcq_test");
  kif *k;
  nv_mock *m;
  nv_mock_config c = {.version = "580.95.05"};
  CHECK_OK(kif_create(&k));
  CHECK_OK(nv_mock_create(&c, &m));
  CHECK_OK(nv_mock_attach(m, k));
  hcq_device *dev = NULL;
  CHECK_OK(nv_hcq_open(k, 0, &dev));
  if (!dev) return testing_summary("nv_hcq_test");
  hcq_signal *s1, *s2, *s3, *s4;
  CHECK_OK(hcq_signal_create(dev, "s1", 0, &s1));
  CHECK_OK(hcq_signal_create(dev, "s2", 0, &s2));
  CHECK_OK(hcq_signal_create(dev, "s3", 77, &s3));
  CHECK_OK(hcq_signal_create(dev, "s4", 0, &s4));
  hcq_mem src, dst;
  CHECK_OK(dev->ops->mem_alloc(dev, 0x2000, 0, &src));
  CHECK_OK(dev->ops->mem_alloc(dev, 0x2000, 0, &dst));
  for (int i = 0; i < 0x2000; i++) ((uint8_t *)src.host)[i] = (uint8_t)(i ^ 0x5a);

  /* compute waits for s1 (released by the copy queue after its copy), then signals s2 and timestamps s3 */
  hcq_queue *qc, *qd;
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &qc));
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &qd));
  CHECK_OK(hcq_queue_wait(qc, hcq_imm(s1->va), hcq_imm(0x100000001ull)));
  CHECK_OK(hcq_queue_memory_barrier(qc));
  CHECK_OK(hcq_queue_signal(qc, hcq_imm(s2->va), hcq_imm(2)));
  CHECK_OK(hcq_queue_timestamp(qc, hcq_imm(s3->va)));
  CHECK_OK(hcq_queue_copy(qd, hcq_imm(dst.va + 1), hcq_imm(src.va), hcq_imm(0x1fff)));
  CHECK_OK(hcq_queue_signal(qd, hcq_imm(s1->va), hcq_imm(0x100000001ull)));
  CHECK_OK(hcq_queue_submit(qc, dev, NULL, 0));
  CHECK(hcq_signal_value(s2) == 0); /* blocked on s1 */
  CHECK_OK(hcq_queue_submit(qd, dev, NULL, 0));
  CHECK_OK(hcq_signal_wait(s2, 2, 1000));
  CHECK(hcq_signal_value(s3) == 77 && hcq_signal_timestamp_ns(s3) != 0); /* value untouched */
  int bad = 0;
  for (int i = 0; i < 0x2000; i++) bad += ((uint8_t *)dst.host)[i] != (i == 0 ? 0 : (uint8_t)((i - 1) ^ 0x5a));
  CHECK_EQ_INT(bad, 0);

  /* symbolic payload and address: patched between submits */
  uop_ctx *ctx;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *v = uop_var(ctx, "v", 0, 1 << 30, uop_dt(UOP_INDEX));
  const uop *a = uop_var(ctx, "a", 0, INT64_MAX, uop_dt(UOP_INDEX));
  hcq_queue *qs;
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &qs));
  CHECK_OK(hcq_queue_signal(qs, hcq_sym(a), hcq_sym(v)));
  uop_var_val vals[2] = {{"v", 5}, {"a", (int64_t)s4->va}};
  CHECK_OK(hcq_queue_submit(qs, dev, vals, 2));
  CHECK(hcq_signal_value(s4) == 5);
  vals[0].value = 9, vals[1].value = (int64_t)s1->va;
  CHECK_OK(hcq_queue_submit(qs, dev, vals, 2));
  CHECK(hcq_signal_value(s1) == 9 && hcq_signal_value(s4) == 5);

  /* refusals */
  hcq_queue *qx;
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &qx));
  CHECK_ERR(hcq_queue_copy(qx, hcq_imm(dst.va), hcq_imm(src.va), hcq_imm(16)), HCQ_CODE_UNSUPPORTED, "copy queue");
  hcq_queue_destroy(qx);
  /* symbolic copy: fresh addresses and size per submit (graph replay) */
  const uop *cs = uop_var(ctx, "cs", 0, INT64_MAX, uop_dt(UOP_INDEX)), *cd = uop_var(ctx, "cd", 0, INT64_MAX, uop_dt(UOP_INDEX));
  const uop *cn = uop_var(ctx, "cn", 1, 1 << 20, uop_dt(UOP_INDEX));
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &qx));
  CHECK_OK(hcq_queue_copy(qx, hcq_sym(cd), hcq_sym(cs), hcq_sym(cn)));
  memset(dst.host, 0, 0x2000);
  uop_var_val cv[3] = {{"cs", (int64_t)src.va + 16}, {"cd", (int64_t)dst.va + 0x1000}, {"cn", 100}};
  CHECK_OK(hcq_queue_submit(qx, dev, cv, 3));
  cv[0].value = (int64_t)src.va + 0x800, cv[1].value = (int64_t)dst.va + 3, cv[2].value = 7;
  CHECK_OK(hcq_queue_submit(qx, dev, cv, 3));
  bad = 0;
  for (int i = 0; i < 0x2000; i++) {
    uint8_t want = i >= 0x1000 && i < 0x1000 + 100 ? (uint8_t)((i - 0x1000 + 16) ^ 0x5a)
                   : i >= 3 && i < 10                 ? (uint8_t)((i - 3 + 0x800) ^ 0x5a)
                                                      : 0;
    bad += ((uint8_t *)dst.host)[i] != want;
  }
  CHECK_EQ_INT(bad, 0);
  hcq_queue_destroy(qx);
  check_exec(dev, m, s4, ctx);
  CHECK_OK(hcq_device_synchronize(dev, 1000));

  hcq_queue_destroy(qs);
  hcq_queue_destroy(qc);
  hcq_queue_destroy(qd);
  uop_ctx_destroy(ctx);
  dev->ops->mem_free(dev, &src);
  dev->ops->mem_free(dev, &dst);
  hcq_signal_destroy(s1), hcq_signal_destroy(s2), hcq_signal_destroy(s3), hcq_signal_destroy(s4);
  nv_hcq_close(dev);
  CHECK_EQ_INT(nv_mock_live_objects(m), 0);
  CHECK_EQ_INT(nv_mock_live_ranges(m), 0);
  CHECK_OK(nv_mock_detach(m));
  nv_mock_destroy(m);
  kif_destroy(k);
  return testing_summary("nv_hcq_test");
}
