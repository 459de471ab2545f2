/* The HDP flush of a memory barrier (amd/amd_nbio.h):
 * - the register table: every NBIO version linux 6.1 maps to a header gives REQ/DONE at NBIO segment 2 + 0x106/0x107,
 *   which with ip_discovery's segment 2 base 0xD20 is 0xe26/0xe27, the pair ops_amd.py's memory_barrier emits on
 *   the reference's mock (reference packet `c0053c00 00000045 00000e26 00000e27 ...`); the mask names CP2..CP9
 *   (bits 2-9 of HDP_FLUSH_DONE in every linux 6.1 nbio sh_mask header); an unknown version fails by name;
 * - the packet hcq_queue_memory_barrier records on the gfx1100 (NBIO 4.3.0) and gfx90a (NBIO 7.4.0) mocks decodes
 *   (PM4 type 3, WAIT_REG_MEM, register space, write-wait-write, EQ) to those registers, and the mock runs it;
 * - NBIO 7.9.0 (gfx942) and NBIF 6.3.1 (gfx1201), newer than linux 6.1: the generated values equal the header lines
 *   of linux v6.12.117 written out below, and the barrier completes on the gfx942 and gfx1201 mocks;
 * - an NBIO version no linux maps to a known header here (7.11 and made-up ones) refuses by name;
 * - the mock rejects a write-wait on any other register and a request with bits no client owns, loudly. */
#include <string.h>
#include <time.h>

#include "amd/amd_hcq.h"
#include "amd/amd_nbio.h"
#include "amd/amd_pm4.h"
#include "autogen/amd_nbio.h"
#include "base/testing.h"
#include "emulator_tests/amd_rt_test_util.h"
#include "hcq/queue.h"
#include "hcq/signal.h"

static const uint32_t k_bases[6] = {0, 0x14, 0xD20, 0x10400, 0x241B000, 0x4040000};
#define MEC_CLIENTS 0x3fcu /* CP2..CP9 */

static void test_table(void) {
  static const unsigned known[][3] = {{2, 1, 1}, {2, 3, 0}, {2, 3, 2}, {3, 3, 3}, {4, 3, 0}, {4, 3, 1}, {6, 1, 0},
                                      {6, 2, 0}, {7, 0, 0}, {7, 0, 1}, {2, 5, 0}, {7, 2, 0}, {7, 3, 0}, {7, 5, 1},
                                      {7, 4, 0}, {7, 4, 1}, {7, 4, 4}, {7, 7, 0}, {7, 7, 1}, {7, 9, 0}, {6, 3, 1}};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
    amd_hdp_regs r = {0};
    CHECK_OK(amd_hdp_regs_find(known[i], k_bases, &r));
    CHECK_EQ_INT(r.req, 0xe26);
    CHECK_EQ_INT(r.done, 0xe27);
    CHECK_EQ_INT(r.ref_and_mask, MEC_CLIENTS);
  }
  static const unsigned unknown[][3] = {{7, 9, 1}, {6, 3, 0}, {7, 11, 0}, {4, 3, 2}, {0, 0, 0}};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    amd_hdp_regs r;
    char want[32];
    snprintf(want, sizeof want, "NBIO %u.%u.%u has no HDP", unknown[i][0], unknown[i][1], unknown[i][2]);
    CHECK_ERR(amd_hdp_regs_find(unknown[i], k_bases, &r), HCQ_CODE_UNSUPPORTED, want);
  }
}

/* The generated NBIO 7.9.0 / NBIF 6.3.1 values against the header lines of linux v6.12.117 (typed from the headers,
 * independent of the spec's copy):
 *   nbio/nbio_7_9_0_offset.h:722-725 and nbif/nbif_6_3_1_offset.h:1773-1776
 *     #define regBIF_BX_PF0_GPU_HDP_FLUSH_REQ 0x0106 / _BASE_IDX 2, regBIF_BX_PF0_GPU_HDP_FLUSH_DONE 0x0107 / _BASE_IDX 2
 *   nbio/nbio_7_9_0_sh_mask.h:2251-2262 and nbif/nbif_6_3_1_sh_mask.h:11104-11115
 *     #define BIF_BX_PF0_GPU_HDP_FLUSH_DONE__CP0_MASK 0x00000001L ... __CP9_MASK 0x00000200L,
 *     __SDMA0_MASK 0x00000400L, __SDMA1_MASK 0x00000800L (CPn at bit n, SDMA0/1 at bits 10/11) */
static void test_newer_headers(void) {
#define HDR(P)                                                                                                    \
  CHECK_EQ_INT(P##BIF_BX_PF0_GPU_HDP_FLUSH_REQ, 0x0106);                                                          \
  CHECK_EQ_INT(P##BIF_BX_PF0_GPU_HDP_FLUSH_REQ_BASE_IDX, 2);                                                      \
  CHECK_EQ_INT(P##BIF_BX_PF0_GPU_HDP_FLUSH_DONE, 0x0107);                                                         \
  CHECK_EQ_INT(P##BIF_BX_PF0_GPU_HDP_FLUSH_DONE_BASE_IDX, 2);                                                     \
  CHECK_EQ_INT(P##BIF_BX_PF0_GPU_HDP_FLUSH_DONE__CP0_MASK, 0x001);                                                \
  CHECK_EQ_INT(P##BIF_BX_PF0_GPU_HDP_FLUSH_DONE__CP2_MASK, 0x004);                                                \
  CHECK_EQ_INT(P##BIF_BX_PF0_GPU_HDP_FLUSH_DONE__CP9_MASK, 0x200);                                                \
  CHECK_EQ_INT(P##BIF_BX_PF0_GPU_HDP_FLUSH_DONE__CP9__SHIFT, 9);                                                  \
  CHECK_EQ_INT(P##BIF_BX_PF0_GPU_HDP_FLUSH_DONE__SDMA0_MASK, 0x400);                                              \
  CHECK_EQ_INT(P##BIF_BX_PF0_GPU_HDP_FLUSH_DONE__SDMA1_MASK, 0x800);
  HDR(AMD_NBIO_V7_9_)
  HDR(AMD_NBIF_V6_3_1_)
#undef HDR
  static const struct { unsigned ver[3]; const char *hdr; } newer[] = {{{7, 9, 0}, "nbio_7_9_0"}, {{6, 3, 1}, "nbif_6_3_1"}};
  for (size_t i = 0; i < 2; i++) {
    amd_hdp_regs r = {0};
    CHECK_OK(amd_hdp_regs_find(newer[i].ver, k_bases, &r));
    CHECK(r.header && strstr(r.header, newer[i].hdr));
  }
}

/* The barrier's words decode to the HDP flush on NBIO registers 0xe26/0xe27, and the mock completes it. */
static void test_barrier(const char *arch) {
  art_mock e;
  if (!art_mock_up(&e, arch, false, true)) return;
  hcq_device *dev = &e.h->dev;
  hcq_signal *s;
  hcq_queue *q;
  CHECK_OK(hcq_signal_create(dev, "s", 0, &s));
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
  CHECK_OK(hcq_queue_memory_barrier(q));
  const uint32_t *w = hcq_queue_words(q);
  CHECK(hcq_queue_word_count(q) >= 7);
  CHECK_EQ_INT(w[0] >> 30, 3);                /* type-3 packet */
  CHECK_EQ_INT((w[0] >> 8) & 0xff, 0x3c);     /* WAIT_REG_MEM */
  CHECK_EQ_INT((w[0] >> 16) & 0x3fff, 5);     /* 6 body dwords */
  CHECK_EQ_INT(w[1] & 7, 3);                  /* function EQ */
  CHECK_EQ_INT((w[1] >> 4) & 3, 0);           /* register space */
  CHECK_EQ_INT((w[1] >> 6) & 3, 1);           /* write, wait, write */
  CHECK_EQ_INT(w[2], 0xe26);
  CHECK_EQ_INT(w[3], 0xe27);
  CHECK_EQ_INT(w[4], MEC_CLIENTS);
  CHECK_EQ_INT(w[5], MEC_CLIENTS);
  CHECK_EQ_INT((w[7] >> 8) & 0xff, 0x58);     /* then ACQUIRE_MEM */
  CHECK_OK(hcq_queue_signal(q, hcq_imm(s->va), hcq_imm(7)));
  CHECK_OK(hcq_queue_submit(q, dev, NULL, 0));
  CHECK_OK(hcq_signal_wait(s, 7, 5000));
  CHECK(kfd_mock_last_error(e.m) == NULL);
  hcq_queue_destroy(q);
  hcq_signal_destroy(s);
  art_mock_down(&e);
}

/* A hand-made write-wait the mock must refuse: the queue stops with the reason in kfd_mock_last_error. */
static void test_mock_rejects(uint32_t req, uint32_t done, uint32_t mask, const char *want) {
  art_mock e;
  if (!art_mock_up(&e, "gfx1100", false, true)) return;
  amd_device *d = e.h->amd;
  uint32_t w[16];
  amd_cmdbuf b = {.w = w, .cap = 16};
  amd_pm4_hdp_flush(&b, req, done, mask);
  CHECK_OK(amd_ring_submit(d, &d->compute, b.w, b.n, NULL, 0));
  const char *err = NULL;
  for (int i = 0; i < 20000 && !(err = kfd_mock_last_error(e.m)); i++) nanosleep(&(struct timespec){0, 100000}, NULL);
  CHECK(err && strstr(err, want));
  if (err && !strstr(err, want)) fprintf(stderr, "got: %s\n", err);
  art_mock_down(&e);
}

int main(void) {
  test_table();
  test_barrier("gfx1100");
  test_barrier("gfx90a");
  test_newer_headers();
  test_barrier("gfx942");  /* NBIO 7.9.0 */
  test_barrier("gfx1201"); /* NBIF 6.3.1 */
  test_mock_rejects(0xe28, 0xe27, MEC_CLIENTS, "no other register is modelled");
  test_mock_rejects(0xe26, 0x2e27, MEC_CLIENTS, "no other register is modelled");
  test_mock_rejects(0xe26, 0xe27, 0xffffffffu, "sets bits no client owns");
  return testing_summary("amd_hdp");
}
