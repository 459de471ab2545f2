/* Kernel-argument buffers: layout offsets (hand-computed), prefix and constants written at bind, symbolic
 * addresses and values patched per submit, size validation. */
#include "hcq/args.h"

#include "hcq/queue_fake_device.h"
#include "base/testing.h"

int main(void) {
  uop_ctx *ctx;
  CHECK_OK(uop_ctx_create(&ctx));
  fake_dev f;
  CHECK_OK(fake_dev_init(&f, "FAKE:0", false));

  /* 2 prefix words, 3 buffers, 2 values: 8 + 24 + 8 = 40 bytes. */
  CHECK_EQ_INT(hcq_args_size_B(2, 3, 2), 40);
  CHECK_EQ_INT(hcq_args_size_B(0, 0, 0), 0);
  uint8_t mem[48];
  memset(mem, 0xCC, sizeof(mem));
  hcq_args a;
  CHECK_ERR(hcq_args_init(&a, mem, 0x7000, 39, 2, 3, 2), HCQ_CODE_INVALID, "40 bytes needed");
  CHECK_OK(hcq_args_init(&a, mem, 0x7000, sizeof(mem), 2, 3, 2));
  CHECK_EQ_INT(hcq_args_buf_offset_B(&a, 0), 8);
  CHECK_EQ_INT(hcq_args_buf_offset_B(&a, 2), 24);
  CHECK_EQ_INT(hcq_args_val_offset_B(&a, 0), 32);
  CHECK_EQ_INT(hcq_args_val_offset_B(&a, 1), 36);

  hcq_queue *q;
  CHECK_OK(hcq_queue_create(&f.dev, HCQ_QUEUE_COMPUTE, &q));
  const uop *in0 = uop_var(ctx, "in0", 0, -1, uop_dt(UOP_UINT64));
  const uop *n = uop_var(ctx, "n", 0, 1 << 30, uop_dt(UOP_INDEX));
  uint32_t prefix[2] = {0xAABBCCDD, 0x01020304};
  hcq_val bufs[3] = {hcq_imm(0x1111222233334444ULL), hcq_sym(in0), hcq_imm(0x10)};
  hcq_val vals[2] = {hcq_sym(uop_alu2(ctx, UOP_ADD, n, uop_index_const(ctx, 1))), hcq_imm(0xFFFFFFFFu)};
  CHECK_ERR(hcq_args_bind(&a, q, prefix, NULL, vals), HCQ_CODE_INVALID, "missing");
  CHECK_OK(hcq_args_bind(&a, q, prefix, bufs, vals));
  CHECK_EQ_INT(hcq_queue_patch_count(q), 2);
  /* Constants are already there; the symbolic slots are untouched until a submit. */
  static const uint8_t want_const[] = {0xDD, 0xCC, 0xBB, 0xAA, 0x04, 0x03, 0x02, 0x01,
                                       0x44, 0x44, 0x33, 0x33, 0x22, 0x22, 0x11, 0x11};
  CHECK(memcmp(mem, want_const, sizeof(want_const)) == 0);
  CHECK_EQ_INT(mem[16], 0xCC);
  CHECK_EQ_INT(mem[24], 0x10);
  CHECK_EQ_INT(mem[40], 0xCC); /* past the layout: never touched */
  for (int r = 0; r < 3; r++) {
    uop_var_val vv[2] = {{"in0", (int64_t)(0x8000000000ULL * (uint64_t)(r + 1) + 0x40)}, {"n", 100 + r}};
    CHECK_OK(hcq_queue_submit(q, &f.dev, vv, 2));
    uint64_t b1;
    uint32_t v0, v1;
    memcpy(&b1, mem + 16, 8);
    memcpy(&v0, mem + 32, 4);
    memcpy(&v1, mem + 36, 4);
    CHECK_EQ_INT(b1, 0x8000000000ULL * (uint64_t)(r + 1) + 0x40);
    CHECK_EQ_INT(v0, 101 + r);
    CHECK_EQ_INT(v1, 0xFFFFFFFFu);
    CHECK(memcmp(mem, want_const, sizeof(want_const)) == 0);
    CHECK_EQ_INT(mem[40], 0xCC);
  }
  hcq_queue_destroy(q);
  fake_dev_fini(&f);
  uop_ctx_destroy(ctx);
  return testing_summary("hcq/args_test");
}
