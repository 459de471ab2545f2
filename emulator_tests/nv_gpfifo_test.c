/* The NV mock's GPFIFO processor driven by nv/: method headers against the words the reference emits
 * (runtime.md 6.2/6.4), QMD launches decoded into the launch hook (grid, block, constant bank 0, shared memory,
 * program) with their releases and QMD chains, and loud failures: unknown methods (with method and push-buffer
 * address), MMU faults, per-class address widths, a missing launch hook, misused builders. */
#include "emulator_tests/nv_test_64bit.h"
#include <string.h>

#include "autogen/nv_qmd.h"
#include "emulator_tests/nv_mock.h"
#include "base/testing.h"
#include "nv/nv_internal.h"
#include "nv/nv_program.h"

typedef struct {
  kif *k;
  nv_mock *m;
  nv_dev *d;
} rig;

static void rig_open(rig *r, nv_mock_arch arch) {
  memset(r, 0, sizeof *r);
  nv_mock_config c = {.version = "580.65.06", .arch = arch};
  CHECK_OK(kif_create(&r->k));
  CHECK_OK(nv_mock_create(&c, &r->m));
  CHECK_OK(nv_mock_attach(r->m, r->k));
  CHECK_OK(nv_dev_open(r->k, 0, &r->d));
}

static void rig_close(rig *r) {
  nv_dev_close(r->d);
  CHECK_EQ_INT(nv_mock_live_objects(r->m), 0);
  CHECK_OK(nv_mock_detach(r->m));
  nv_mock_destroy(r->m);
  kif_destroy(r->k);
}

static void check_words(void) {
  rig r;
  rig_open(&r, NV_MOCK_HOPPER);
  if (!r.d) return;
  uint32_t w[64];
  nv_push p;
  nv_push_init(&p, w, 64);
  uint32_t cls = 0xc9c0;
  nv_push_inc(&p, NV_SUBCH_COMPUTE, 0, &cls, 1);
  nv_push_sem_release(&p, r.d, 0x100000010ull, 1, true);
  nv_push_copy(&p, r.d, 0x1000, 0x2000, 0x100);
  nv_push_copy_release(&p, r.d, 0x10000010ull, 5);
  static const uint32_t want[] = {0x20012000, 0x0000c9c0, 0x20050017, 0x00000010, 0x00000001, 0x00000001, 0x00000000,
                                  0x03100001, 0x20010008, 0x00000000, 0x20048100, 0x00000000, 0x00002000, 0x00000000,
                                  0x00001000, 0x20018106, 0x00000100, 0x200180c0, 0x00000182, 0x20038090, 0x00000000,
                                  0x10000010, 0x00000005, 0x200180c0, 0x00000014};
  CHECK_EQ_INT(p.n, sizeof want / 4);
  for (unsigned i = 0; i < p.n && i < sizeof want / 4; i++)
    if (w[i] != want[i]) {
      fprintf(stderr, "  word %u: 0x%08x, want 0x%08x\n", i, w[i], want[i]);
      CHECK(0);
    }
  /* the compute channel's setup push buffer as the reference emits it (runtime.md 6.2, class aside) */
  static const uint32_t setup[] = {0x20012000, 0xcbc0, 0x200221ec, 0x7293, 0, 0x200220a8, 0x7294, 0};
  CHECK(memcmp(nv_dev_compute(r.d)->cmd.cpu, setup, sizeof setup) == 0);
  uint32_t cb[0x58];
  CHECK_OK(nv_program_cbuf0_prefix(r.d, cb, 0x58));
  CHECK(cb[6] == 0 && cb[7] == 0x7294 && cb[8] == 0 && cb[9] == 0x7293 && cb[10] == 0xfffdc0 && cb[11] == 0 && cb[0] == 0);
  CHECK_ERR(nv_program_cbuf0_prefix(r.d, cb, 11), HCQ_CODE_INVALID, "12 words");
  /* immediate: 13-bit value in the header (SEC_OP 4) */
  nv_push_init(&p, w, 64);
  nv_push_immd(&p, 1, 0x1698, 0x1011);
  CHECK_EQ_INT(w[0], 0x901125a6u);
  nv_push_immd(&p, 1, 0x1698, 0x2000);
  CHECK(p.bad && strstr(p.bad, "13 bits"));
  /* per-class widths: Hopper's SEM_ADDR_HI and copy upper halves are 24:0, Ampere/Ada's 7:0 and 16:0 */
  nv_push_init(&p, w, 64);
  nv_push_sem_release(&p, r.d, 1ull << 45, 1, false);
  nv_push_copy(&p, r.d, 1ull << 52, 1ull << 50, 0x10);
  nv_push_copy_release(&p, r.d, 1ull << 52, 1);
  CHECK(p.bad == NULL);
  nv_push_sem_release(&p, r.d, 1ull << 57, 1, false);
  CHECK(p.bad && strstr(p.bad, "SEM_ADDR_HI"));
  /* misuse is sticky and refused at submit */
  nv_push_init(&p, w, 4);
  nv_push_inc(&p, 8, 0, &cls, 1);
  CHECK_ERR(nv_chan_submit(r.d, nv_dev_compute(r.d), &p), HCQ_CODE_INVALID, "subchannel out of range");
  nv_push_init(&p, w, 4);
  nv_push_inc(&p, 0, 0x4000, &cls, 1);
  CHECK_ERR(nv_chan_submit(r.d, nv_dev_compute(r.d), &p), HCQ_CODE_INVALID, "below 0x4000");
  nv_push_init(&p, w, 2);
  uint32_t three[3] = {0};
  nv_push_inc(&p, 0, 0x5c, three, 3);
  CHECK_ERR(nv_chan_submit(r.d, nv_dev_compute(r.d), &p), HCQ_CODE_INVALID, "push buffer full");
  rig_close(&r);
  rig_open(&r, NV_MOCK_ADA);
  if (!r.d) return;
  nv_push_init(&p, w, 64);
  nv_push_sem_release(&p, r.d, 1ull << 40, 1, false);
  CHECK(p.bad && strstr(p.bad, "SEM_ADDR_HI"));
  nv_push_init(&p, w, 64);
  nv_push_copy(&p, r.d, 1ull << 49, 0, 0x10);
  CHECK(p.bad && strstr(p.bad, "OFFSET_UPPER"));
  nv_push_init(&p, w, 64);
  nv_push_copy(&p, r.d, (1ull << 49) - 0x1000, 0, 0x10);
  CHECK(p.bad == NULL);
  rig_close(&r);
}

typedef struct {
  int n;
  nv_mock_launch seen[4];
} hook_log;

static int hook(void *ctx, nv_mock *m, const nv_mock_launch *l, char *detail) {
  hook_log *h = ctx;
  /* the hook sees memory the kernel would touch through the mock's MMU check */
  int err = nv_mock_check_access(m, l->cbank0_va, l->cbank0_size_B, false, detail);
  if (err) return err;
  if (h->n < 4) h->seen[h->n] = *l;
  h->n++;
  return 0;
}

/* Two chained V03 QMDs at args+0x200 -> args+0x300; each releases into sig (+0, +8). Values that would expose
 * swapped fields: every dimension differs, a program address above 4 GiB, a 64-bit payload. */
static void build_qmds(const nv_mem *a, const nv_mem *s) {
  uint32_t *q0 = (uint32_t *)((uint8_t *)a->cpu + 0x200), *q1 = (uint32_t *)((uint8_t *)a->cpu + 0x300);
  memset(q0, 0, 0x200);
  CHECK(nv_qmdv03_00_set_cta_raster_width(q0, 70000) && nv_qmdv03_00_set_cta_raster_height(q0, 3) &&
        nv_qmdv03_00_set_cta_raster_depth(q0, 2));
  CHECK(nv_qmdv03_00_set_cta_thread_dimension0(q0, 32) && nv_qmdv03_00_set_cta_thread_dimension1(q0, 4) &&
        nv_qmdv03_00_set_cta_thread_dimension2(q0, 5));
  CHECK(nv_qmdv03_00_set_constant_buffer_addr_lower(q0, 0, (uint32_t)a->va) &&
        nv_qmdv03_00_set_constant_buffer_addr_upper(q0, 0, a->va >> 32) &&
        nv_qmdv03_00_set_constant_buffer_size_shifted4(q0, 0, 0x160));
  CHECK(nv_qmdv03_00_set_shared_memory_size(q0, 0x400));
  CHECK(nv_qmdv03_00_set_program_address_lower(q0, 0x89abcd00) && nv_qmdv03_00_set_program_address_upper(q0, 0x12));
  CHECK(nv_qmdv03_00_set_release0_enable(q0, 1) && nv_qmdv03_00_set_release0_address_lower(q0, (uint32_t)s->va) &&
        nv_qmdv03_00_set_release0_address_upper(q0, s->va >> 32) &&
        nv_qmdv03_00_set_release0_payload_lower(q0, 0x11) && nv_qmdv03_00_set_release0_payload_upper(q0, 0x2));
  memcpy(q1, q0, 0x100);
  CHECK(nv_qmdv03_00_set_cta_raster_width(q1, 1) && nv_qmdv03_00_set_release0_payload_lower(q1, 0x12) &&
        nv_qmdv03_00_set_release0_address_lower(q1, (uint32_t)(s->va + 8)));
  CHECK(nv_qmdv03_00_set_dependent_qmd0_pointer(q0, (a->va + 0x300) >> 8) && nv_qmdv03_00_set_dependent_qmd0_enable(q0, 1) &&
        nv_qmdv03_00_set_dependent_qmd0_action(q0, 1));
}

static void check_qmd(void) {
  rig r;
  rig_open(&r, NV_MOCK_HOPPER);
  if (!r.d) return;
  nv_mem args, sig;
  CHECK_OK(nv_mem_alloc(r.d, 0x1000, NV_MEM_CPU, &args));
  CHECK_OK(nv_mem_alloc(r.d, 0x1000, NV_MEM_HOST, &sig));
  build_qmds(&args, &sig);
  uint32_t w[32];
  nv_push p;
  nv_push_init(&p, w, 32);
  uint32_t pcas = (uint32_t)((args.va + 0x200) >> 8), action = NV_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_PREFETCH_SCHEDULE;
  nv_push_inc(&p, NV_SUBCH_COMPUTE, NV_HOPPER_COMPUTE_A_SEND_PCAS_A, &pcas, 1);
  nv_push_inc(&p, NV_SUBCH_COMPUTE, NV_HOPPER_COMPUTE_A_SEND_SIGNALING_PCAS2_B, &action, 1);
  /* no hook yet: nothing can run the kernel */
  CHECK_ERR(nv_chan_submit(r.d, nv_dev_compute(r.d), &p), HCQ_CODE_UNSUPPORTED, "no launch hook");
  hook_log h = {0};
  nv_mock_set_launch_hook(r.m, hook, &h);
  /* the failed entry is still pending on the channel: a fresh channel state is needed, so reopen */
  CHECK_OK(nv_mem_free(r.d, &args));
  CHECK_OK(nv_mem_free(r.d, &sig));
  rig_close(&r);

  rig_open(&r, NV_MOCK_HOPPER);
  nv_mock_set_launch_hook(r.m, hook, &h);
  CHECK_OK(nv_mem_alloc(r.d, 0x1000, NV_MEM_CPU, &args));
  CHECK_OK(nv_mem_alloc(r.d, 0x1000, NV_MEM_HOST, &sig));
  build_qmds(&args, &sig);
  nv_push_init(&p, w, 32);
  pcas = (uint32_t)((args.va + 0x200) >> 8);
  nv_push_inc(&p, NV_SUBCH_COMPUTE, NV_HOPPER_COMPUTE_A_SEND_PCAS_A, &pcas, 1);
  nv_push_inc(&p, NV_SUBCH_COMPUTE, NV_HOPPER_COMPUTE_A_SEND_SIGNALING_PCAS2_B, &action, 1);
  CHECK_OK(nv_chan_submit(r.d, nv_dev_compute(r.d), &p));
  CHECK_EQ_INT(h.n, 2);
  const nv_mock_launch *l = &h.seen[0];
  CHECK_EQ_INT(l->qmd_version, 3);
  CHECK_EQ_INT(l->grid[0], 70000);
  CHECK_EQ_INT(l->grid[1], 3);
  CHECK_EQ_INT(l->grid[2], 2);
  CHECK_EQ_INT(l->block[0], 32);
  CHECK_EQ_INT(l->block[1], 4);
  CHECK_EQ_INT(l->block[2], 5);
  CHECK(l->cbank0_va == args.va);
  CHECK_EQ_INT(l->cbank0_size_B, 0x160);
  CHECK_EQ_INT(l->shared_size_B, 0x400);
  CHECK(l->program_va == 0x1289abcd00ull);
  CHECK_EQ_INT(h.seen[1].grid[0], 1);
  CHECK(((volatile uint64_t *)sig.cpu)[0] == 0x200000011ull);
  CHECK(((volatile uint64_t *)sig.cpu)[1] == 0x200000012ull);
  /* a kernel that faults: posted to the channel's error notifier as RM posts an MMU fault (Xid 31, status 0xffff),
   * the text names the channel, the kernel's address and the MMU fault; the channel stops (its releases stay) */
  nv_qmdv03_00_set_constant_buffer_addr_upper((uint32_t *)((uint8_t *)args.cpu + 0x200), 0, 0x7000);
  nv_qmdv03_00_set_dependent_qmd0_enable((uint32_t *)((uint8_t *)args.cpu + 0x200), 0);
  int faults = nv_mock_faults(r.m);
  ((volatile uint64_t *)sig.cpu)[0] = ((volatile uint64_t *)sig.cpu)[1] = 0;
  CHECK_OK(nv_chan_submit(r.d, nv_dev_compute(r.d), &p));
  CHECK_EQ_INT(nv_mock_faults(r.m), faults + 1);
  CHECK(strstr(nv_mock_last_fault(r.m), "kernel at 0x1289abcd00: MMU fault") != NULL);
  const volatile uint8_t *note = r.d->notifier.cpu;
  CHECK(note != NULL && *(const volatile uint32_t *)(note + 8) == 31 && *(const volatile uint16_t *)(note + 14) == 0xffff);
  CHECK(((volatile uint64_t *)sig.cpu)[0] == 0); /* the faulting launch's release is not written */
  CHECK_OK(nv_mem_free(r.d, &args));
  CHECK_OK(nv_mem_free(r.d, &sig));
  rig_close(&r);
}

/* One failing submission per fresh device (a failed entry stays at the channel's GP_GET). */
static void expect_fault(nv_mock_arch arch, int kind, const char *needle) {
  rig r;
  rig_open(&r, arch);
  if (!r.d) return;
  nv_mem a;
  CHECK_OK(nv_mem_alloc(r.d, 0x1000, NV_MEM_CPU, &a));
  uint32_t w[32], v = 7;
  nv_push p;
  nv_push_init(&p, w, 32);
  nv_chan *c = nv_dev_compute(r.d);
  if (kind == 0) {
    nv_push_inc(&p, NV_SUBCH_COMPUTE, 0x1234, &v, 1);
  } else if (kind == 1) {
    nv_push_inc(&p, NV_SUBCH_HOST, 0x44, &v, 1);
  } else if (kind == 2) { /* copy from a hole in the VA space */
    nv_push_copy(&p, r.d, a.va, a.va + 0x10000, 0x100);
    c = nv_dev_copy(r.d);
  } else if (kind == 3) { /* an address with bit 52 set: within Hopper's 24:0 upper half, past Ampere/Ada's 16:0 */
    uint32_t off[4] = {0x100000, 0, 0, (uint32_t)a.va};
    uint32_t len = 4, launch = 0x182;
    nv_push_inc(&p, NV_SUBCH_COPY, NV_HOPPER_DMA_COPY_A_OFFSET_IN_UPPER, off, 4);
    nv_push_inc(&p, NV_SUBCH_COPY, NV_HOPPER_DMA_COPY_A_LINE_LENGTH_IN, &len, 1);
    nv_push_inc(&p, NV_SUBCH_COPY, NV_HOPPER_DMA_COPY_A_LAUNCH_DMA, &launch, 1);
    c = nv_dev_copy(r.d);
  } else { /* methods on a subchannel nothing is bound to */
    nv_push_inc(&p, 2, 0x200, &v, 1);
  }
  hcq_status st = nv_chan_submit(r.d, c, &p);
  CHECK(st && strstr(hcq_status_message(st), needle));
  if (st && !strstr(hcq_status_message(st), needle)) fprintf(stderr, "  got: %s\n", hcq_status_message(st));
  hcq_status_free(st);
  CHECK_OK(nv_mem_free(r.d, &a));
  rig_close(&r);
}

int main(void) {
  NV_TEST_NEEDS_64BIT("nv_gpfifo_test");
  check_words();
  check_qmd();
  expect_fault(NV_MOCK_HOPPER, 0, "method 0x1234 (push buffer 0x");
  expect_fault(NV_MOCK_HOPPER, 0, "unknown compute method");
  expect_fault(NV_MOCK_HOPPER, 1, "unknown host method");
  expect_fault(NV_MOCK_HOPPER, 2, "MMU fault NV_PFAULT_FAULT_TYPE_PTE");
  expect_fault(NV_MOCK_HOPPER, 3, "MMU fault"); /* the width fits; the address is simply unmapped */
  expect_fault(NV_MOCK_ADA, 3, "bits outside the class's UPPER field");
  expect_fault(NV_MOCK_HOPPER, 4, "no class bound");
  return testing_summary("nv_gpfifo_test");
}
