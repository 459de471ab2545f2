/* Queue core: symbolic patching, change-only writes, masks, 64-bit fields, validation, command encoding. */
#include "hcq/queue.h"

#include "hcq/args.h"
#include "hcq/queue_fake_device.h"
#include "base/testing.h"

static uop_ctx *ctx;
static fake_dev fdev;

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rng(void) { /* xorshift64*, fixed seed */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ULL;
}

static const uop *ivar(const char *name) { return uop_var(ctx, name, INT64_MIN, INT64_MAX, uop_dt(UOP_INDEX)); }
static const uop *u64var(const char *name) { return uop_var(ctx, name, 0, -1, uop_dt(UOP_UINT64)); }
static const uop *add_c(const uop *a, int64_t c) { return uop_alu2(ctx, UOP_ADD, a, uop_index_const(ctx, c)); }

static void test_commands_encoding(void) {
  hcq_queue *q;
  CHECK_OK(hcq_queue_create(&fdev.dev, HCQ_QUEUE_COMPUTE, &q));
  uint8_t argmem[64] = {0};
  hcq_args args;
  CHECK_OK(hcq_args_init(&args, argmem, 0x1122334455667788ULL, sizeof(argmem), 0, 2, 1));
  hcq_val bufs[2] = {hcq_imm(0xA0), hcq_imm(0xB0)}, vals[1] = {hcq_imm(7)};
  CHECK_OK(hcq_args_bind(&args, q, NULL, bufs, vals));
  hcq_val g[3] = {hcq_imm(4), hcq_imm(5), hcq_imm(6)}, l[3] = {hcq_imm(1), hcq_imm(2), hcq_imm(3)};
  CHECK_OK(hcq_queue_wait(q, hcq_imm(0x100000008ULL), hcq_imm(9)));
  CHECK_OK(hcq_queue_memory_barrier(q));
  CHECK_OK(hcq_queue_exec(q, hcq_imm(0xdeadbeefcafeULL), &args, g, l));
  CHECK_OK(hcq_queue_copy(q, hcq_imm(0x10), hcq_imm(0x20), hcq_imm(0x300000000ULL)));
  CHECK_OK(hcq_queue_timestamp(q, hcq_imm(0x40)));
  CHECK_OK(hcq_queue_signal(q, hcq_imm(0x50), hcq_imm(0x1234567890ULL)));
  /* Hand-encoded per the fake GPU's table (hcq/queue_fake_device.h): type-3 header 3 << 30 | (dwords-1) << 16 |
   * opcode << 8. */
  static const uint32_t want[] = {
      0xC0042300, 0x105, 0x00000008, 0x00000001, 9, 0,                      /* wait: WAIT_MEM, >= */
      0xC0002400, 0,                                                        /* barrier */
      0xC0082000, 0xbeefcafe, 0x0000dead, 0x55667788, 0x11223344, 0x00010002, 4, 5, 6,
      1 | 2 << 11 | 3 << 22,                                                /* exec: nbufs|nvals, global, local */
      0xC0052100, 0x10, 0, 0x20, 0, 0, 3,                                   /* copy */
      0xC0042200, 2, 0x40, 0, 0, 0,                                         /* timestamp: RELEASE time */
      0xC0042200, 1, 0x50, 0, 0x34567890, 0x12,                             /* signal: RELEASE value */
  };  CHECK_EQ_INT(hcq_queue_word_count(q), sizeof(want) / 4);
  if (hcq_queue_word_count(q) == sizeof(want) / 4) CHECK(memcmp(hcq_queue_words(q), want, sizeof(want)) == 0);
  CHECK_EQ_INT(hcq_queue_patch_count(q), 0); /* all constants */
  uint64_t b0, b1;
  uint32_t v0;
  memcpy(&b0, argmem, 8);
  memcpy(&b1, argmem + 8, 8);
  memcpy(&v0, argmem + 16, 4);
  CHECK_EQ_INT(b0, 0xA0);
  CHECK_EQ_INT(b1, 0xB0);
  CHECK_EQ_INT(v0, 7);
  hcq_queue_destroy(q);
}

/* 100 patched words over 10 variables; changing one variable rewrites exactly its 10 words. */
static void test_only_changed_words(void) {
  hcq_queue *q;
  CHECK_OK(hcq_queue_create(&fdev.dev, HCQ_QUEUE_COMPUTE, &q));
  char names[10][8];
  const uop *v[10];
  for (int k = 0; k < 10; k++) {
    snprintf(names[k], sizeof(names[k]), "v%d", k);
    v[k] = ivar(names[k]);
  }
  for (int j = 0; j < 10; j++)
    for (int k = 0; k < 10; k++) CHECK_OK(hcq_queue_emit32(q, hcq_sym(add_c(v[k], j))));
  CHECK_EQ_INT(hcq_queue_sym_count(q), 100);
  CHECK_EQ_INT(hcq_queue_patch_count(q), 100);
  uop_var_val vals[10];
  for (int k = 0; k < 10; k++) vals[k] = (uop_var_val){names[k], 1000 * k};
  CHECK_OK(hcq_queue_submit(q, &fdev.dev, vals, 10));
  CHECK_EQ_INT(hcq_queue_get_stats(q).patch_writes, 100);
  CHECK_EQ_INT(fdev.changed_words_last, 100); /* first submission: all new */
  for (int j = 0; j < 10; j++)
    for (int k = 0; k < 10; k++) CHECK_EQ_INT(fdev.last[0][j * 10 + k], 1000 * k + j);
  /* Same values: nothing written. */
  CHECK_OK(hcq_queue_submit(q, &fdev.dev, vals, 10));
  CHECK_EQ_INT(hcq_queue_get_stats(q).patch_writes, 100);
  CHECK_EQ_INT(fdev.changed_words_last, 0);
  /* One variable changes: 10 writes, and the device sees exactly those 10 words change. */
  vals[3].value = 77777;
  CHECK_OK(hcq_queue_submit(q, &fdev.dev, vals, 10));
  CHECK_EQ_INT(hcq_queue_get_stats(q).patch_writes, 110);
  CHECK_EQ_INT(fdev.changed_words_last, 10);
  for (int j = 0; j < 10; j++) CHECK_EQ_INT(fdev.last[0][j * 10 + 3], 77777 + j);
  CHECK_EQ_INT(hcq_queue_get_stats(q).syms_evaluated, 110); /* unchanged inputs are not re-evaluated */
  /* A variable the queue does not use changes nothing; extra var_vals are fine. */
  uop_var_val more[11];
  memcpy(more, vals, sizeof(vals));
  more[10] = (uop_var_val){"unused", 5};
  CHECK_OK(hcq_queue_submit(q, &fdev.dev, more, 11));
  CHECK_EQ_INT(fdev.changed_words_last, 0);
  hcq_queue_destroy(q);
}

static void test_masks_and_64bit(void) {
  hcq_queue *q;
  CHECK_OK(hcq_queue_create(&fdev.dev, HCQ_QUEUE_COMPUTE, &q));
  const uop *x = u64var("x");
  /* Word 0: constant upper half, symbolic low 16 bits. */
  CHECK_OK(hcq_queue_emit32(q, hcq_imm(0xAAAA5555u)));
  CHECK_OK(hcq_queue_patch_word(q, 0, hcq_sym(x), 32, 0xffff));
  /* Words 1-2: a 64-bit symbol (lo, hi). */
  CHECK_OK(hcq_queue_emit64(q, hcq_sym(x)));
  /* Words 3-4: 64-bit, mask covers bits 0..35 only; bits 36.. keep the constant. */
  CHECK_OK(hcq_queue_emit64(q, hcq_imm(0xABCDEF0000000000ULL)));
  CHECK_OK(hcq_queue_patch_word(q, 3, hcq_sym(x), 64, 0xfffffffffULL));
  /* Region fields: unaligned 64-bit at 3, 32-bit masked at 13, 64-bit masked at 20. */
  uint8_t region[32];
  memset(region, 0xEE, sizeof(region));
  uint32_t r;
  CHECK_OK(hcq_queue_add_region(q, region, sizeof(region), &r));
  CHECK_OK(hcq_queue_patch_field(q, r, 3, hcq_sym(x), 64, 0));
  CHECK_OK(hcq_queue_patch_field(q, r, 13, hcq_sym(x), 32, 0x00ff00ffu));
  CHECK_OK(hcq_queue_patch_field(q, r, 20, hcq_sym(x), 64, 0xffffffff00000000ULL));
  CHECK_EQ_INT(hcq_queue_sym_count(q), 1); /* one distinct symbol */
  uint64_t xs[] = {0x123456789ABCDEF0ULL, 0xFFFFFFFFFFFFFFFFULL, 0, 0x0000000F00000001ULL};
  for (size_t t = 0; t < sizeof(xs) / sizeof(xs[0]); t++) {
    uint64_t xv = xs[t];
    uop_var_val vv = {"x", (int64_t)xv};
    CHECK_OK(hcq_queue_submit(q, &fdev.dev, &vv, 1));
    const uint32_t *w = fdev.last[0];
    CHECK_EQ_INT(w[0], 0xAAAA0000u | (uint32_t)(xv & 0xffff));
    CHECK_EQ_INT(w[1], (uint32_t)xv);
    CHECK_EQ_INT(w[2], (uint32_t)(xv >> 32));
    uint64_t w34 = (uint64_t)w[3] | ((uint64_t)w[4] << 32);
    CHECK_EQ_INT(w34, (0xABCDEF0000000000ULL & ~0xfffffffffULL) | (xv & 0xfffffffffULL));
    uint8_t want[32];
    memset(want, 0xEE, sizeof(want));
    for (int b = 0; b < 8; b++) want[3 + b] = (uint8_t)(xv >> (8 * b));
    uint32_t f13 = 0xEEEEEEEEu;
    f13 = (f13 & ~0x00ff00ffu) | ((uint32_t)xv & 0x00ff00ffu);
    for (int b = 0; b < 4; b++) want[13 + b] = (uint8_t)(f13 >> (8 * b));
    for (int b = 4; b < 8; b++) want[20 + b] = (uint8_t)(xv >> (8 * b));
    CHECK(memcmp(region, want, sizeof(want)) == 0);
  }
  hcq_queue_destroy(q);
}

/* 1000 submits with random values, checked against values computed here. */
static void test_thousand_submits(void) {
  hcq_queue *q;
  CHECK_OK(hcq_queue_create(&fdev.dev, HCQ_QUEUE_COMPUTE, &q));
  const uop *a = ivar("a"), *b = ivar("b"), *c = u64var("c");
  const uop *e_sum = uop_alu2(ctx, UOP_ADD, a, b);
  const uop *e_mul = uop_alu2(ctx, UOP_MUL, a, uop_index_const(ctx, 3));
  const uop *e_div = uop_alu2(ctx, UOP_IDIV, b, uop_index_const(ctx, 7));
  const uop *e_mod = uop_alu2(ctx, UOP_MOD, b, uop_index_const(ctx, 7));
  const uop *e_sub = uop_alu2(ctx, UOP_SUB, a, uop_index_const(ctx, 1));
  const uop *e_shr = uop_alu2(ctx, UOP_SHR, c, uop_const_int(ctx, uop_dt(UOP_UINT64), 32));
  const uop *e_and = uop_alu2(ctx, UOP_AND, c, uop_const_int(ctx, uop_dt(UOP_UINT64), 0xffffffff));
  CHECK_OK(hcq_queue_wait(q, hcq_sym(c), hcq_sym(e_sub)));
  CHECK_OK(hcq_queue_emit32(q, hcq_sym(e_sum)));
  CHECK_OK(hcq_queue_emit64(q, hcq_sym(e_mul)));
  CHECK_OK(hcq_queue_emit32(q, hcq_sym(e_div)));
  CHECK_OK(hcq_queue_emit32(q, hcq_sym(e_mod)));
  CHECK_OK(hcq_queue_emit32(q, hcq_sym(e_shr)));
  CHECK_OK(hcq_queue_emit32(q, hcq_sym(e_and)));
  CHECK_OK(hcq_queue_signal(q, hcq_sym(c), hcq_sym(a)));
  uint8_t argmem[32];
  hcq_args args;
  CHECK_OK(hcq_args_init(&args, argmem, (uint64_t)(uintptr_t)argmem, sizeof(argmem), 0, 2, 2));
  hcq_val bufs[2] = {hcq_sym(c), hcq_imm(0x5000)}, vals[2] = {hcq_sym(a), hcq_sym(e_sum)};
  CHECK_OK(hcq_args_bind(&args, q, NULL, bufs, vals));
  int mismatches = 0;
  for (int it = 0; it < 1000; it++) {
    int64_t av = (int64_t)(rng() % 2000000001ULL) - 1000000000, bv = (int64_t)(rng() % 2000001ULL) - 1000000;
    uint64_t cv = rng();
    if (it % 3 == 1) bv = 12345; /* some submits change only a subset */
    uop_var_val vv[3] = {{"b", bv}, {"c", (int64_t)cv}, {"a", av}};
    CHECK_OK(hcq_queue_submit(q, &fdev.dev, vv, 3));
    const uint32_t *w = fdev.last[0];
    uint32_t want[] = {0xC0042300, 0x105, (uint32_t)cv, (uint32_t)(cv >> 32), (uint32_t)(av - 1), (uint32_t)((uint64_t)(av - 1) >> 32),
                       (uint32_t)(av + bv), (uint32_t)(av * 3), (uint32_t)((uint64_t)(av * 3) >> 32),
                       (uint32_t)(bv / 7), (uint32_t)(bv % 7), (uint32_t)(cv >> 32), (uint32_t)cv,
                       0xC0042200, 1, (uint32_t)cv, (uint32_t)(cv >> 32), (uint32_t)av, (uint32_t)((uint64_t)av >> 32)};
    if (fdev.words_last != sizeof(want) / 4 || memcmp(w, want, sizeof(want)) != 0) mismatches++;
    uint64_t b0;
    uint32_t v0, v1;
    memcpy(&b0, argmem, 8);
    memcpy(&v0, argmem + 16, 4);
    memcpy(&v1, argmem + 20, 4);
    if (b0 != cv || v0 != (uint32_t)av || v1 != (uint32_t)(av + bv)) mismatches++;
  }
  CHECK_EQ_INT(mismatches, 0);
  CHECK_EQ_INT(hcq_queue_get_stats(q).submits, 1000);
  hcq_queue_destroy(q);
}

static void test_missing_variable(void) {
  hcq_queue *q;
  CHECK_OK(hcq_queue_create(&fdev.dev, HCQ_QUEUE_COMPUTE, &q));
  const uop *a = ivar("alpha"), *b = ivar("beta_missing");
  uint32_t region_mem[2] = {0x11111111, 0x22222222};
  uint32_t r;
  CHECK_OK(hcq_queue_emit32(q, hcq_sym(a)));
  CHECK_OK(hcq_queue_add_region(q, region_mem, sizeof(region_mem), &r));
  CHECK_OK(hcq_queue_patch_field(q, r, 0, hcq_sym(a), 32, 0));
  CHECK_OK(hcq_queue_emit32(q, hcq_sym(uop_alu2(ctx, UOP_ADD, a, b))));
  size_t submits = fdev.submits;
  uop_var_val only_a = {"alpha", 5};
  CHECK_ERR(hcq_queue_submit(q, &fdev.dev, &only_a, 1), HCQ_CODE_NOT_FOUND, "beta_missing");
  CHECK_EQ_INT(fdev.submits, submits);                    /* nothing submitted */
  CHECK_EQ_INT(hcq_queue_words(q)[0], 0);                 /* nothing written, even for the known variable */
  CHECK_EQ_INT(region_mem[0], 0x11111111);
  CHECK_EQ_INT(hcq_queue_get_stats(q).patch_writes, 0);
  uop_var_val both[2] = {{"alpha", 5}, {"beta_missing", 6}};
  CHECK_OK(hcq_queue_submit(q, &fdev.dev, both, 2));
  CHECK_EQ_INT(hcq_queue_words(q)[0], 5);
  CHECK_EQ_INT(hcq_queue_words(q)[1], 11);
  CHECK_EQ_INT(region_mem[0], 5);
  /* After a good submit, a failing one still leaves the remembered values alone: the next good submit with the
   * same values writes nothing. */
  uop_var_val changed_a = {"alpha", 9};
  CHECK_ERR(hcq_queue_submit(q, &fdev.dev, &changed_a, 1), HCQ_CODE_NOT_FOUND, "beta_missing");
  CHECK_EQ_INT(hcq_queue_words(q)[0], 5);
  uint64_t writes = hcq_queue_get_stats(q).patch_writes;
  CHECK_OK(hcq_queue_submit(q, &fdev.dev, both, 2));
  CHECK_EQ_INT(hcq_queue_get_stats(q).patch_writes, writes);
  /* No var_vals at all. */
  CHECK_ERR(hcq_queue_submit(q, &fdev.dev, NULL, 0), HCQ_CODE_NOT_FOUND, "alpha");
  hcq_queue_destroy(q);
}

static void test_bad_input(void) {
  hcq_queue *q;
  CHECK_OK(hcq_queue_create(&fdev.dev, HCQ_QUEUE_COMPUTE, &q));
  /* Constant nodes are constants: written at once, no patch. */
  CHECK_OK(hcq_queue_emit32(q, hcq_sym(uop_index_const(ctx, 42))));
  CHECK_EQ_INT(hcq_queue_words(q)[0], 42);
  CHECK_EQ_INT(hcq_queue_patch_count(q), 0);
  /* Float symbols cannot be patched. */
  const uop *f = uop_var(ctx, "fv", 0, 10, uop_dt(UOP_FLOAT32));
  if (f) CHECK_ERR(hcq_queue_signal(q, hcq_imm(0), hcq_sym(f)), HCQ_CODE_INVALID, "float32");
  CHECK_ERR(hcq_queue_patch_word(q, 5, hcq_imm(1), 32, 0), HCQ_CODE_INVALID, "past the end");
  /* That error sticks: later recording and submit report it. */
  CHECK_ERR(hcq_queue_emit32(q, hcq_imm(1)), HCQ_CODE_INVALID, "past the end");
  CHECK_ERR(hcq_queue_submit(q, &fdev.dev, NULL, 0), HCQ_CODE_INVALID, "past the end");
  hcq_queue_destroy(q);

  CHECK_OK(hcq_queue_create(&fdev.dev, HCQ_QUEUE_COMPUTE, &q));
  CHECK_ERR(hcq_queue_patch_word(q, 0, hcq_imm(1), 16, 0), HCQ_CODE_INVALID, "width");
  hcq_queue_destroy(q);
  CHECK_OK(hcq_queue_create(&fdev.dev, HCQ_QUEUE_COMPUTE, &q));
  uint32_t r, mem[2];
  CHECK_OK(hcq_queue_add_region(q, mem, sizeof(mem), &r));
  CHECK_ERR(hcq_queue_patch_field(q, r, 4, hcq_imm(1), 64, 0), HCQ_CODE_INVALID, "outside region");
  hcq_queue_destroy(q);
  CHECK_OK(hcq_queue_create(&fdev.dev, HCQ_QUEUE_COMPUTE, &q));
  CHECK_ERR(hcq_queue_patch_field(q, 3, 0, hcq_imm(1), 32, 0), HCQ_CODE_INVALID, "not registered");
  hcq_queue_destroy(q);
}

/* An unmasked 32-bit patch never keeps only the low bits: a value outside int32/uint32 range fails the submit,
 * naming the variable (or symbol), its value and the patch, before anything is written. */
static void test_value_fits_width(void) {
  hcq_queue *q;
  CHECK_OK(hcq_queue_create(&fdev.dev, HCQ_QUEUE_COMPUTE, &q));
  const uop *n = uop_var(ctx, "n", 0, 10000000000LL, uop_dt(UOP_INDEX)), *m = ivar("m");
  uint8_t argmem[16];
  memset(argmem, 0xEE, sizeof argmem);
  hcq_args args;
  CHECK_OK(hcq_args_init(&args, argmem, 0x1000, sizeof argmem, 0, 1, 2));
  hcq_val bufs[1] = {hcq_imm(0x2000)}, vals[2] = {hcq_sym(n), hcq_sym(add_c(m, 1))};
  CHECK_OK(hcq_args_bind(&args, q, NULL, bufs, vals));
  CHECK_OK(hcq_queue_emit32(q, hcq_sym(m)));
  CHECK_OK(hcq_queue_emit64(q, hcq_sym(n))); /* a 64-bit patch takes any value */
  size_t submits = fdev.submits;
  /* n = 5000000000 (0x12A05F200) would have been written as 705032704 */
  uop_var_val v1[2] = {{"n", 5000000000LL}, {"m", 3}};
  CHECK_ERR(hcq_queue_submit(q, &fdev.dev, v1, 2), HCQ_CODE_INVALID,
            "variable 'n' (declared 0..10000000000, index) = 5000000000 does not fit the 32-bit field at byte 8");
  CHECK_EQ_INT(fdev.submits, submits);
  CHECK_EQ_INT(hcq_queue_words(q)[0], 0); /* m's word: nothing written */
  CHECK_EQ_INT(hcq_queue_get_stats(q).patch_writes, 0);
  CHECK_EQ_INT(argmem[8], 0xEE);
  /* an expression: m + 1 = 2^32 */
  uop_var_val v2[2] = {{"n", 5}, {"m", 4294967295LL}};
  CHECK_ERR(hcq_queue_submit(q, &fdev.dev, v2, 2), HCQ_CODE_INVALID, "symbol (m+1) = 4294967296 does not fit");
  /* a variable in a stream word, below int32 */
  uop_var_val v3[2] = {{"n", 5}, {"m", INT32_MIN - 1LL}};
  CHECK_ERR(hcq_queue_submit(q, &fdev.dev, v3, 2), HCQ_CODE_INVALID, "= -2147483649 does not fit");
  CHECK_EQ_INT(fdev.submits, submits);
  /* the edges of the accepted range: uint32 max and int32 min (two's complement), then good values */
  uop_var_val v4[2] = {{"n", 4294967295LL}, {"m", INT32_MIN}};
  CHECK_OK(hcq_queue_submit(q, &fdev.dev, v4, 2));
  uint32_t f_n, f_m1;
  memcpy(&f_n, argmem + 8, 4);
  memcpy(&f_m1, argmem + 12, 4);
  CHECK_EQ_INT(f_n, 0xffffffffu);
  CHECK_EQ_INT(f_m1, 0x80000001u);
  CHECK_EQ_INT(hcq_queue_words(q)[0], 0x80000000u);
  uop_var_val v5[2] = {{"n", 7}, {"m", -2}};
  CHECK_OK(hcq_queue_submit(q, &fdev.dev, v5, 2));
  memcpy(&f_n, argmem + 8, 4);
  CHECK_EQ_INT(f_n, 7);
  CHECK_EQ_INT(hcq_queue_words(q)[0], 0xfffffffeu);
  CHECK_EQ_INT(fdev.submits, submits + 2);
  hcq_queue_destroy(q);
  /* constants are checked when recorded */
  CHECK_OK(hcq_queue_create(&fdev.dev, HCQ_QUEUE_COMPUTE, &q));
  CHECK_ERR(hcq_queue_emit32(q, hcq_imm(0x100000000ULL)), HCQ_CODE_INVALID,
            "constant 4294967296 (0x100000000) does not fit the 32-bit patch of word 0");
  hcq_queue_destroy(q);
  CHECK_OK(hcq_queue_create(&fdev.dev, HCQ_QUEUE_COMPUTE, &q));
  CHECK_OK(hcq_queue_emit32(q, hcq_imm((uint64_t)-5))); /* int32 -5 */
  CHECK_EQ_INT(hcq_queue_words(q)[0], 0xfffffffbu);
  hcq_queue_destroy(q);
}

/* Variables keep to their declared range at submit (the kernel was compiled assuming it). */
static void test_declared_range(void) {
  hcq_queue *q;
  CHECK_OK(hcq_queue_create(&fdev.dev, HCQ_QUEUE_COMPUTE, &q));
  const uop *k = uop_var(ctx, "k", 1, 1000, uop_dt(UOP_INDEX));
  const uop *k2 = uop_var(ctx, "k", 0, 500, uop_dt(UOP_INT32)); /* same name, narrower: 1..500 holds */
  CHECK_OK(hcq_queue_emit32(q, hcq_sym(add_c(k, 10))));
  CHECK_OK(hcq_queue_emit32(q, hcq_sym(k2)));
  CHECK_OK(hcq_queue_emit64(q, hcq_sym(u64var("big")))); /* uint64: any bit pattern */
  size_t submits = fdev.submits;
  uop_var_val v[2] = {{"k", 501}, {"big", -1}};
  CHECK_ERR(hcq_queue_submit(q, &fdev.dev, v, 2), HCQ_CODE_INVALID, "variable 'k' = 501 is outside its declared range 1..500");
  v[0].value = 0;
  CHECK_ERR(hcq_queue_submit(q, &fdev.dev, v, 2), HCQ_CODE_INVALID, "variable 'k' = 0 is outside");
  CHECK_EQ_INT(fdev.submits, submits);
  CHECK_EQ_INT(hcq_queue_words(q)[0], 0);
  v[0].value = 500;
  CHECK_OK(hcq_queue_submit(q, &fdev.dev, v, 2));
  CHECK_EQ_INT(hcq_queue_words(q)[0], 510);
  CHECK_EQ_INT(hcq_queue_words(q)[1], 500);
  CHECK_EQ_INT(hcq_queue_words(q)[2], 0xffffffffu);
  hcq_queue_destroy(q);
}

int main(void) {
  CHECK_OK(uop_ctx_create(&ctx));
  CHECK_OK(fake_dev_init(&fdev, "FAKE:0", false));
  test_commands_encoding();
  test_only_changed_words();
  test_masks_and_64bit();
  test_thousand_submits();
  test_missing_variable();
  test_bad_input();
  test_value_fits_width();
  test_declared_range();
  fake_dev_fini(&fdev);
  CHECK_EQ_INT(fdev.mem_live, 0);
  uop_ctx_destroy(ctx);
  return testing_summary("hcq/queue_test");
}
