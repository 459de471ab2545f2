/* The fake GPU backend (hcq/queue_fake_device.h) and the seams it exercises: its command processor rejects every
 * class of malformed packet before running any, bitfield patches land in their bits and are overflow-checked at
 * submit, queue words live in the backend's storage and are submitted in place, and a submit rewrites exactly
 * the words whose value changed. Expected words are hand-encoded from the fake's table. */
#include "autogen/amd_pm4.h"
#include "hcq/queue_fake_device.h"
#include "base/testing.h"

static uop_ctx *ctx;

static void test_rejects(void) {
  fake_dev f;
  CHECK_OK(fake_dev_init(&f, "FAKEGPU:0", true));
  hcq_signal *s;
  CHECK_OK(hcq_signal_create(&f.dev, "s", 0, &s));
  uint32_t lo = (uint32_t)s->va, hi = (uint32_t)(s->va >> 32);
  const uint32_t ok[6] = {FAKE_PKT3(FAKE_OP_RELEASE, 5), FAKE_SEL_VALUE, lo, hi, 7, 0};
  CHECK_OK(fake_submit(&f.dev, HCQ_QUEUE_COMPUTE, ok, 6));
  CHECK_EQ_INT(hcq_signal_value(s), 7);
  struct { uint32_t w[12]; size_t n; const char *why; } bad[] = {
      {{0x00050003, lo, hi, 9, 0}, 5, "not a type-3"},                        /* a CPU word list */
      {{FAKE_PKT3(FAKE_OP_RELEASE, 5) | 1, 1, lo, hi, 9, 0}, 6, "reserved"},
      {{FAKE_PKT3(0x7f, 1), 0}, 2, "unknown opcode"},
      {{FAKE_PKT3(FAKE_OP_RELEASE, 4), 1, lo, hi, 9}, 5, "wrong dword count"},
      {{FAKE_PKT3(FAKE_OP_RELEASE, 5), 1, lo, hi, 9}, 5, "past the end"},
      {{FAKE_PKT3(FAKE_OP_RELEASE, 5), 3, lo, hi, 9, 0}, 6, "RELEASE control"},
      {{FAKE_PKT3(FAKE_OP_WAIT, 5), 4, lo, hi, 0, 0}, 6, "WAIT_MEM control"},
      {{FAKE_PKT3(FAKE_OP_RELEASE, 5), 1, lo + 4, hi, 9, 0}, 6, "aligned"},
      {{FAKE_PKT3(FAKE_OP_RELEASE, 5), 1, 0, 0, 9, 0}, 6, "NULL"},
      {{FAKE_PKT3(FAKE_OP_BARRIER, 1), 1}, 2, "BARRIER control"},
      {{FAKE_PKT3(FAKE_OP_EXEC, 9), 0, 0, 0, 0, 0, 1, 1, 1, 0}, 10, "local size 0"},
      {{FAKE_PKT3(FAKE_OP_EXEC, 9), 0, 0, 0, 0, 1, 1, 1, 1, 1 | 1 << 11 | 1 << 22}, 10, "without argument memory"},
      {{FAKE_PKT3(FAKE_OP_EXEC, 9), 5, 0xFA4E0000, 0, 0, 0, 1, 1, 1, 1 | 1 << 11 | 1 << 22}, 10, "unknown program"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    /* A good RELEASE first: a rejected list must run nothing, not even the packets before the bad one. */
    uint32_t w[20];
    memcpy(w, ok, sizeof ok);
    w[4] = 100 + (uint32_t)i;
    memcpy(w + 6, bad[i].w, bad[i].n * 4);
    CHECK_ERR(fake_submit(&f.dev, HCQ_QUEUE_COMPUTE, w, 6 + bad[i].n), HCQ_CODE_INVALID, bad[i].why);
    CHECK_EQ_INT(hcq_signal_value(s), 7);
  }
  hcq_signal_destroy(s);
  fake_dev_fini(&f);
}

static uint32_t stored_exec_local;
static void record_local(const uint32_t gid[3], const uint64_t *bufs, uint32_t nbufs, const int32_t *vals,
                         uint32_t nvals) {
  (void)gid, (void)bufs, (void)nbufs, (void)vals, (void)nvals;
  stored_exec_local++;
}

/* Local sizes are 11/11/10-bit fields of one dword: symbols land in their bits, a value too wide fails the
 * submit naming the field, and nothing is written. */
static void test_bitfields(void) {
  fake_dev f;
  CHECK_OK(fake_dev_init(&f, "FAKEGPU:0", true));
  hcq_queue *q;
  CHECK_OK(hcq_queue_create(&f.dev, HCQ_QUEUE_COMPUTE, &q));
  const uop *lx = uop_var(ctx, "lx", 0, 1 << 20, uop_dt(UOP_INDEX)), *lz = uop_var(ctx, "lz", 0, 1 << 20, uop_dt(UOP_INDEX));
  hcq_val g[3] = {hcq_imm(2), hcq_imm(1), hcq_imm(1)}, l[3] = {hcq_sym(lx), hcq_imm(5), hcq_sym(lz)};
  uint64_t prog = fake_dev_program(&f, record_local);
  CHECK_OK(hcq_queue_exec(q, hcq_imm(prog), NULL, g, l));
  uop_var_val v[2] = {{"lx", 2047}, {"lz", 1023}};
  CHECK_OK(hcq_queue_submit(q, &f.dev, v, 2));
  CHECK_EQ_INT(hcq_queue_words(q)[9], 2047u | 5u << 11 | 1023u << 22);
  CHECK_EQ_INT(f.nexecs, 1);
  if (f.nexecs) CHECK_EQ_INT(f.execs[0].local[0] * 10000 + f.execs[0].local[2], 20471023);
  CHECK_EQ_INT(stored_exec_local, 2);
  v[0].value = 3, v[1].value = 1024; /* lz needs 11 bits */
  CHECK_ERR(hcq_queue_submit(q, &f.dev, v, 2), HCQ_CODE_INVALID, "10-bit field at bit 22");
  CHECK_EQ_INT(hcq_queue_words(q)[9], 2047u | 5u << 11 | 1023u << 22); /* lx not written either */
  v[1].value = 7;
  CHECK_OK(hcq_queue_submit(q, &f.dev, v, 2));
  CHECK_EQ_INT(hcq_queue_words(q)[9], 3u | 5u << 11 | 7u << 22);
  /* Negative values do not fit an unsigned field. */
  const uop *neg = uop_var(ctx, "neg", -5, 5, uop_dt(UOP_INDEX));
  CHECK_OK(hcq_queue_patch_bits(q, 9, 11, 11, hcq_sym(neg)));
  uop_var_val v3[3] = {{"lx", 3}, {"lz", 7}, {"neg", -1}};
  CHECK_ERR(hcq_queue_submit(q, &f.dev, v3, 3), HCQ_CODE_INVALID, "11-bit field at bit 11");
  /* Constants are checked when recorded; bad field shapes are refused. */
  CHECK_ERR(hcq_queue_patch_bits(q, 9, 0, 4, hcq_imm(16)), HCQ_CODE_INVALID, "does not fit");
  hcq_queue_destroy(q);
  CHECK_OK(hcq_queue_create(&f.dev, HCQ_QUEUE_COMPUTE, &q));
  CHECK_ERR(hcq_queue_patch_shift_mask(q, 0, 8, 0xf0, hcq_imm(1)), HCQ_CODE_INVALID, "not a run of low bits");
  hcq_queue_destroy(q);
  CHECK_OK(hcq_queue_create(&f.dev, HCQ_QUEUE_COMPUTE, &q));
  CHECK_ERR(hcq_queue_patch_bits(q, 0, 0, 8, hcq_imm(1)), HCQ_CODE_INVALID, "past the end");
  hcq_queue_destroy(q);
  /* autogen's _SHIFT/_MASK pairs: a PM4 header whose opcode and count are symbols, checked against the macro. */
  CHECK_OK(hcq_queue_create(&f.dev, HCQ_QUEUE_COMPUTE, &q));
  const uop *op = uop_var(ctx, "op", 0, 1 << 20, uop_dt(UOP_INDEX)), *cnt = uop_var(ctx, "cnt", 0, 1 << 20, uop_dt(UOP_INDEX));
  CHECK_OK(hcq_queue_emit32(q, hcq_imm(AMD_PM4_TYPE3_HEADER)));
  CHECK_OK(hcq_queue_patch_shift_mask(q, 0, AMD_PM4_OPCODE_SHIFT, AMD_PM4_OPCODE_MASK, hcq_sym(op)));
  CHECK_OK(hcq_queue_patch_shift_mask(q, 0, AMD_PM4_COUNT_SHIFT, AMD_PM4_COUNT_MASK, hcq_sym(cnt)));
  uop_var_val pv[2] = {{"op", 0x49}, {"cnt", 5}};
  f.execute = false; /* a lone header is not a runnable list */
  CHECK_OK(hcq_queue_submit(q, &f.dev, pv, 2));
  CHECK_EQ_INT(hcq_queue_words(q)[0], AMD_PM4_PACKET3(0x49, 5));
  pv[1].value = 0x4000; /* count is 14 bits */
  CHECK_ERR(hcq_queue_submit(q, &f.dev, pv, 2), HCQ_CODE_INVALID, "14-bit field at bit 16");
  CHECK_EQ_INT(hcq_queue_words(q)[0], AMD_PM4_PACKET3(0x49, 5));
  f.execute = true;
  hcq_queue_destroy(q);

  /* Region fields as hi:lo bit ranges (QMD-style), including one straddling a 32-bit boundary. */
  CHECK_OK(hcq_queue_create(&f.dev, HCQ_QUEUE_COMPUTE, &q));
  uint8_t region[16];
  memset(region, 0xff, sizeof region);
  uint32_t r;
  CHECK_OK(hcq_queue_add_region(q, region, sizeof region, &r));
  const uop *x = uop_var(ctx, "x", 0, 1 << 20, uop_dt(UOP_INDEX));
  CHECK_OK(hcq_queue_patch_region_bits(q, r, 47, 40, hcq_sym(x)));  /* byte 5 */
  CHECK_OK(hcq_queue_patch_region_bits(q, r, 99, 92, hcq_sym(x)));  /* bits 28..35 of word 2..3 */
  CHECK_ERR(hcq_queue_patch_region_bits(q, r, 130, 120, hcq_imm(0)), HCQ_CODE_INVALID, "outside region");
  hcq_queue_destroy(q);
  CHECK_OK(hcq_queue_create(&f.dev, HCQ_QUEUE_COMPUTE, &q));
  CHECK_OK(hcq_queue_add_region(q, region, sizeof region, &r));
  CHECK_OK(hcq_queue_patch_region_bits(q, r, 47, 40, hcq_sym(x)));
  CHECK_OK(hcq_queue_patch_region_bits(q, r, 99, 92, hcq_sym(x)));
  uop_var_val xv = {"x", 0xA5};
  CHECK_OK(hcq_queue_submit(q, &f.dev, &xv, 1));
  uint8_t want[16];
  memset(want, 0xff, sizeof want);
  want[5] = 0xA5;
  want[11] = (uint8_t)(0x0f | 0x50); /* bits 92..95: low nibble 5 of 0xA5 at bits 4..7 of byte 11 */
  want[12] = (uint8_t)(0xf0 | 0x0A); /* bits 96..99: high nibble A in bits 0..3 of byte 12 */
  CHECK(memcmp(region, want, sizeof want) == 0);
  xv.value = 256;
  CHECK_ERR(hcq_queue_submit(q, &f.dev, &xv, 1), HCQ_CODE_INVALID, "8-bit field");
  CHECK(memcmp(region, want, sizeof want) == 0);
  hcq_queue_destroy(q);
  fake_dev_fini(&f);
  CHECK_EQ_INT(f.mem_live, 0);
}

/* Queue words live in the fake's device memory (the queue_storage hook), also after growing, and are submitted
 * in place; a submit rewrites exactly the words whose value changed. */
static void test_storage_and_counts(void) {
  fake_dev f;
  CHECK_OK(fake_dev_init(&f, "FAKEGPU:0", false));
  hcq_queue *q;
  CHECK_OK(hcq_queue_create(&f.dev, HCQ_QUEUE_COMPUTE, &q));
  const uop *a = uop_var(ctx, "a", 0, -1, uop_dt(UOP_UINT64));
  for (int i = 0; i < 300; i++) CHECK_OK(hcq_queue_signal(q, hcq_sym(a), hcq_imm((uint64_t)i)));
  CHECK(hcq_queue_word_count(q) > 256); /* grew past the first block */
  /* Values: first, low word only, high word only, both, unchanged. */
  static const int64_t vals[5] = {0x100000000LL, 0x100000008LL, 0x200000008LL, 0x300000010LL, 0x300000010LL};
  static const uint64_t want[5] = {0, 300, 300, 600, 0};
  for (int r = 0; r < 5; r++) {
    uop_var_val v = {"a", vals[r]};
    uint64_t before = hcq_queue_get_stats(q).words_written;
    CHECK_OK(hcq_queue_submit(q, &f.dev, &v, 1));
    uint64_t written = hcq_queue_get_stats(q).words_written - before;
    if (r > 0) CHECK_EQ_INT(written, f.changed_words_last);
    if (r > 0) CHECK_EQ_INT(written, want[r]);
  }
  CHECK_EQ_INT(f.zero_copy_submits, f.submits);
  CHECK_EQ_INT(f.submits, 5);
  hcq_queue_destroy(q);
  /* A masked 32-bit patch whose symbol changes but whose bits do not rewrites nothing (a bitfield's symbol cannot
   * change without its bits: values must fit the field). */
  CHECK_OK(hcq_queue_create(&f.dev, HCQ_QUEUE_COMPUTE, &q));
  const uop *b = uop_var(ctx, "b", 0, 1 << 20, uop_dt(UOP_INDEX)), *c = uop_var(ctx, "c", 0, 1 << 20, uop_dt(UOP_INDEX));
  const uop *c3 = uop_alu2(ctx, UOP_IDIV, c, uop_index_const(ctx, 3));
  CHECK_OK(hcq_queue_emit32(q, hcq_imm(0)));
  CHECK_OK(hcq_queue_patch_word(q, 0, hcq_sym(b), 32, 0xff));
  CHECK_OK(hcq_queue_emit32(q, hcq_imm(0)));
  CHECK_OK(hcq_queue_patch_bits(q, 1, 4, 12, hcq_sym(c3)));
  static const int64_t bv[4] = {0x101, 0x201, 0x202, 0x202}, cv[4] = {9, 10, 10, 12};
  static const uint64_t bwant[4] = {0, 0, 1, 1};
  for (int r = 0; r < 4; r++) {
    uop_var_val v[2] = {{"b", bv[r]}, {"c", cv[r]}};
    uint64_t before = hcq_queue_get_stats(q).words_written;
    CHECK_OK(hcq_queue_submit(q, &f.dev, v, 2));
    if (r > 0) CHECK_EQ_INT(hcq_queue_get_stats(q).words_written - before, bwant[r]);
    if (r > 0) CHECK_EQ_INT(f.changed_words_last, bwant[r]);
    CHECK_EQ_INT(hcq_queue_words(q)[0], (uint32_t)(bv[r] & 0xff));
    CHECK_EQ_INT(hcq_queue_words(q)[1], (uint32_t)(cv[r] / 3) << 4);
  }
  hcq_queue_destroy(q);
  fake_dev_fini(&f);
  CHECK_EQ_INT(f.mem_live, 0);
}

int main(void) {
  CHECK_OK(uop_ctx_create(&ctx));
  test_rejects();
  test_bitfields();
  test_storage_and_counts();
  uop_ctx_destroy(ctx);
  return testing_summary("hcq/fake_gpu_test");
}
