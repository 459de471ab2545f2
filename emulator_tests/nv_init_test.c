/* nv/ on the NV mock: the init sequence on every supported driver branch's layout, class choice per GPU
 * generation (and fail-closed without a compute class), memory of each kind, copy-engine copies and semaphore
 * signal/wait across channels, and a clean teardown (no RM object or UVM range left). */
#include "emulator_tests/nv_test_64bit.h"
#include <stdlib.h>
#include <string.h>

#include "emulator_tests/nv_mock.h"
#include "base/testing.h"
#include "nv/nv_dev.h"

typedef struct {
  kif *k;
  nv_mock *m;
  nv_dev *d;
} rig;

static hcq_status rig_open(rig *r, const char *version, nv_mock_arch arch) {
  memset(r, 0, sizeof *r);
  nv_mock_config c = {.version = version, .arch = arch};
  HCQ_TRY(kif_create(&r->k));
  HCQ_TRY(nv_mock_create(&c, &r->m));
  HCQ_TRY(nv_mock_attach(r->m, r->k));
  return nv_dev_open(r->k, 0, &r->d);
}

static void rig_close(rig *r) {
  nv_dev_close(r->d);
  if (r->m) {
    CHECK_EQ_INT(nv_mock_live_objects(r->m), 0);
    CHECK_EQ_INT(nv_mock_live_ranges(r->m), 0);
    CHECK_OK(nv_mock_detach(r->m));
  }
  nv_mock_destroy(r->m);
  kif_destroy(r->k);
}

/* copy engine: dst <- src through the copy channel, then a four-word release; values that expose a wrong
 * length, offset or direction (distinct bytes, a guard after the end) */
static void check_copy(rig *r) {
  nv_mem src, dst, sig;
  CHECK_OK(nv_mem_alloc(r->d, 0x3000, NV_MEM_CPU, &src));
  CHECK_OK(nv_mem_alloc(r->d, 0x3000, NV_MEM_CPU, &dst));
  CHECK_OK(nv_mem_alloc(r->d, 0x1000, NV_MEM_HOST, &sig));
  for (int i = 0; i < 0x3000; i++) ((uint8_t *)src.cpu)[i] = (uint8_t)(i * 7 + 1);
  memset(dst.cpu, 0xee, 0x3000);
  uint32_t w[64];
  nv_push p;
  nv_push_init(&p, w, 64);
  nv_push_copy(&p, r->d, dst.va + 3, src.va + 5, 0x2001);
  nv_push_copy_release(&p, r->d, sig.va, 7);
  CHECK_OK(nv_chan_submit(r->d, nv_dev_copy(r->d), &p));
  CHECK_OK(nv_wait(r->d, sig.va, 7, 1000));
  int bad = 0;
  for (int i = 0; i < 0x3000; i++) {
    uint8_t want = i >= 3 && i < 3 + 0x2001 ? (uint8_t)((i - 3 + 5) * 7 + 1) : 0xee;
    bad += ((uint8_t *)dst.cpu)[i] != want;
  }
  CHECK_EQ_INT(bad, 0);
  CHECK(((uint64_t *)sig.cpu)[1] != 0); /* the timestamp of the four-word release */
  CHECK_OK(nv_mem_free(r->d, &src));
  CHECK_OK(nv_mem_free(r->d, &dst));
  CHECK_OK(nv_mem_free(r->d, &sig));
}

/* compute channel waits for a value the copy channel releases later; 64-bit payloads above 2^32 */
static void check_cross_wait(rig *r) {
  nv_mem sig, gpu;
  CHECK_OK(nv_mem_alloc(r->d, 0x1000, NV_MEM_HOST, &sig));
  CHECK_OK(nv_mem_alloc(r->d, 0x800000, 0, &gpu)); /* GPU-only memory, 2 MiB pages */
  CHECK(gpu.cpu == NULL && (gpu.va & 0x1fffff) == 0);
  volatile uint64_t *s = sig.cpu;
  uint32_t w[64];
  nv_push p;
  nv_push_init(&p, w, 64);
  nv_push_sem_acquire(&p, r->d, sig.va, 0x100000005ull);
  nv_push_sem_release(&p, r->d, sig.va + 16, 0x100000009ull, true);
  CHECK_OK(nv_chan_submit(r->d, nv_dev_compute(r->d), &p));
  CHECK(s[2] == 0); /* still waiting */
  nv_push_init(&p, w, 64);
  nv_push_sem_release(&p, r->d, sig.va, 0x100000005ull, false);
  CHECK_OK(nv_chan_submit(r->d, nv_dev_copy(r->d), &p));
  CHECK_OK(nv_wait(r->d, sig.va + 16, 0x100000009ull, 1000));
  CHECK(s[3] != 0); /* timestamp */
  CHECK_OK(nv_mem_free(r->d, &gpu));
  CHECK_OK(nv_mem_free(r->d, &sig));
}

int main(void) {
  NV_TEST_NEEDS_64BIT("nv_init_test");
  static const char *const versions[] = {"570.86.16", "575.64.05", "580.95.05", "590.48.01"};
  for (int v = 0; v < 4; v++) {
    rig r;
    CHECK_OK(rig_open(&r, versions[v], NV_MOCK_HOPPER));
    if (r.d) {
      CHECK_EQ_STR(nv_dev_target(r.d), "ptx:sm_90");
      CHECK_EQ_STR(nv_dev_version(r.d), versions[v]);
      CHECK_EQ_INT(nv_dev_class(r.d, 'c'), 0xcbc0);
      CHECK_EQ_INT(nv_dev_class(r.d, 'd'), 0xc8b5);
      check_copy(&r);
      check_cross_wait(&r);
    }
    rig_close(&r);
  }
  /* Ada: the Ampere-family classes and sm_89 */
  rig r;
  CHECK_OK(rig_open(&r, "580.95.05", NV_MOCK_ADA));
  if (r.d) {
    CHECK_EQ_STR(nv_dev_target(r.d), "ptx:sm_89");
    CHECK_EQ_INT(nv_dev_class(r.d, 'c'), 0xc9c0);
    check_copy(&r);
  }
  rig_close(&r);
  /* Blackwell: its classes and sm_100; semaphores and copies with its classes' address widths */
  CHECK_OK(rig_open(&r, "590.48.01", NV_MOCK_BLACKWELL));
  if (r.d) {
    CHECK_EQ_STR(nv_dev_target(r.d), "ptx:sm_100");
    CHECK_EQ_INT(nv_dev_class(r.d, 'c'), 0xcec0);
    CHECK_EQ_INT(nv_dev_class(r.d, 'g'), 0xc96f);
    check_copy(&r);
  }
  rig_close(&r);
  /* no compute class: fail closed, naming what the GPU offers */
  CHECK_ERR(rig_open(&r, "580.95.05", NV_MOCK_NO_COMPUTE), HCQ_CODE_UNSUPPORTED,
            "no supported compute class (supported: Hopper, Ada, Ampere, Blackwell); the GPU offers 0x41 0x80 0x2080");
  rig_close(&r);
  /* an unsupported branch is refused with the version found and the supported ones */
  CHECK_ERR(rig_open(&r, "535.104.05", NV_MOCK_HOPPER), HCQ_CODE_UNSUPPORTED,
            "NVIDIA driver 535.104.05 (branch 535) is not supported");
  rig_close(&r);
  CHECK_ERR(rig_open(&r, "600.1", NV_MOCK_HOPPER), HCQ_CODE_UNSUPPORTED, "supported branches: 570, 575, 580, 590, 595");
  rig_close(&r);
  return testing_summary("nv_init_test");
}
