/* nv/ on the NV mock: the init sequence on every supported driver branch's layout, class choice per GPU
 * generation (and fail-closed without a compute class), memory of each kind, copy-engine copies and semaphore
 * signal/wait across channels, and a clean teardown (no RM object or UVM range left). */
#include "emulator_tests/nv_test_64bit.h"
#include <stdlib.h>
#include <string.h>

#include "emulator_tests/nv_mock.h"
#include "base/testing.h"
#include "nv/nv_dev.h"
#include "nv/nv_internal.h"

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

/* Memory size and name (FB_GET_INFO_V2 with the branch's list length, GPU_GET_NAME_STRING), and RM's refusals of
 * bad parameters: a list of 0 or past the maximum, an unknown index, another branch's size, a unicode request. */
static void check_fb(rig *r) {
  CHECK_EQ_INT(nv_dev_mem_B(r->d, false), 80ull << 30); /* the mock's 80 GiB (H100-sized) */
  CHECK_EQ_INT(nv_dev_mem_B(r->d, true), 79ull << 30);
  CHECK(strstr(nv_dev_gpu_name(r->d), "Hopper") != NULL);
  NV2080_CTRL_FB_GET_INFO_V2_PARAMS_r580 fb = {.fbInfoListSize = 0};
  uint32_t size_B = (uint32_t)nv_dev_layout(r->d)->NV2080_CTRL_FB_GET_INFO_V2_PARAMS_size_B;
  CHECK_ERR(nv_rm_control(r->d, r->d->subdevice, NV2080_CTRL_CMD_FB_GET_INFO_V2, &fb, size_B, "fb"), HCQ_CODE_IO,
            "NV_ERR_INVALID_PARAM_STRUCT");
  fb.fbInfoListSize = (size_B - 4) / 8 + 1;
  CHECK_ERR(nv_rm_control(r->d, r->d->subdevice, NV2080_CTRL_CMD_FB_GET_INFO_V2, &fb, size_B, "fb"), HCQ_CODE_IO,
            "NV_ERR_INVALID_PARAM_STRUCT");
  fb.fbInfoListSize = 1, fb.fbInfoList[0].index = 0x1000;
  CHECK_ERR(nv_rm_control(r->d, r->d->subdevice, NV2080_CTRL_CMD_FB_GET_INFO_V2, &fb, size_B, "fb"), HCQ_CODE_IO,
            "NV_ERR_INVALID_ARGUMENT");
  fb.fbInfoList[0].index = NV2080_CTRL_FB_INFO_INDEX_TOTAL_RAM_SIZE;
  uint32_t other_B = size_B == sizeof(NV2080_CTRL_FB_GET_INFO_V2_PARAMS_r570) ? sizeof fb
                                                                              : sizeof(NV2080_CTRL_FB_GET_INFO_V2_PARAMS_r570);
  CHECK_ERR(nv_rm_control(r->d, r->d->subdevice, NV2080_CTRL_CMD_FB_GET_INFO_V2, &fb, other_B, "fb"), HCQ_CODE_IO,
            "NV_ERR_INVALID_PARAM_STRUCT");
  CHECK_OK(nv_rm_control(r->d, r->d->subdevice, NV2080_CTRL_CMD_FB_GET_INFO_V2, &fb, size_B, "fb"));
  CHECK_EQ_INT(fb.fbInfoList[0].data, 80u << 20); /* KiB */
  NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS n = {.gpuNameStringFlags = 7};
  CHECK_ERR(nv_rm_control(r->d, r->d->subdevice, NV2080_CTRL_CMD_GPU_GET_NAME_STRING, &n, sizeof n, "name"),
            HCQ_CODE_IO, "NV_ERR_INVALID_ARGUMENT");
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
      check_fb(&r);
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
