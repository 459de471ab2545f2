/* The NV hcq device on the mock: queues of push-buffer methods (signal, wait across the compute and copy
 * channels, copy, timestamp, barrier), symbolic values patched between submits, and the clear refusals of what is
 * not wired yet (exec, copies on the compute queue, symbolic copy addresses). */
#include <string.h>

#include "emulator_tests/nv_mock.h"
#include "hcq/queue.h"
#include "hcq/signal.h"
#include "hcq/testing.h"
#include "nv/nv_hcq.h"
#include "uop/uop.h"

int main(void) {
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
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COPY, &qx));
  CHECK_ERR(hcq_queue_copy(qx, hcq_sym(a), hcq_imm(src.va), hcq_imm(16)), HCQ_CODE_UNSUPPORTED, "symbolic");
  hcq_queue_destroy(qx);
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &qx));
  hcq_val g[3] = {hcq_imm(1), hcq_imm(1), hcq_imm(1)};
  CHECK_ERR(hcq_queue_exec(qx, hcq_imm(0), NULL, g, g), HCQ_CODE_UNSUPPORTED, "NV exec");
  hcq_queue_destroy(qx);
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
