/* Generated NVIDIA ABI: layouts against hand-listed offsets (tinygrad/runtime/autogen/nv_gpu.py,
 * tinygrad/runtime/ops_nv.py), decoders, QMD get/set against hand-computed dword/bit positions, and the driver version
 * pick. */
#include <stddef.h>

#include "autogen/nv_abi.h"
#include "autogen/nv_decode.h"
#include "autogen/nv_layout.h"
#include "autogen/nv_qmd.h"
#include "base/testing.h"

static const kif_ioctl_desc *find(const kif_ioctl_table *t, const char *name) {
  for (size_t i = 0; i < t->count; i++)
    if (!strcmp(t->descs[i].name, name)) return &t->descs[i];
  return NULL;
}

static void test_layouts(void) {
  CHECK_EQ_INT(offsetof(NVOS21_PARAMETERS, pAllocParms), 16);
  CHECK_EQ_INT(offsetof(NVOS21_PARAMETERS, status), 28);
  CHECK_EQ_INT(offsetof(NVOS33_PARAMETERS, flags), 44);
  CHECK_EQ_INT(offsetof(nv_ioctl_nvos33_parameters_with_fd, fd), 48);
  CHECK_EQ_INT(sizeof(nv_ioctl_card_info_t), 72);
  CHECK_EQ_INT(offsetof(nv_ioctl_card_info_t, minor_number), 56);
  CHECK_EQ_INT(offsetof(NV_CHANNEL_ALLOC_PARAMS, tpcConfigID), 360);
  CHECK_EQ_INT(offsetof(NV_CHANNEL_ALLOC_PARAMS, mthdbufMem), 216);
  CHECK_EQ_INT(offsetof(NV_MEMORY_ALLOCATION_PARAMS, numaNode), 120);
  CHECK_EQ_INT(offsetof(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, gpuAttributesCount), 9240);
  CHECK_EQ_INT(offsetof(UVM_MAP_EXTERNAL_ALLOCATION_PARAMS, rmStatus), 9260);
  CHECK_EQ_INT(offsetof(AmpereAControlGPFifo, GPPut), 0x8c);
  CHECK_EQ_INT(offsetof(AmpereAControlGPFifo, GPGet), 0x88);
  CHECK_EQ_INT(sizeof(NV_VASPACE_ALLOCATION_PARAMETERS_r570), 48);
  CHECK_EQ_INT(sizeof(NV_VASPACE_ALLOCATION_PARAMETERS_r580), 56);
  CHECK_EQ_INT(sizeof(UVM_FREE_PARAMS_r580), 24);
  CHECK_EQ_INT(sizeof(UVM_FREE_PARAMS_r590), 16);
  /* request codes from the reference table */
  CHECK_EQ_INT(NV_ESC_RM_ALLOC, 0xc020462b);
  CHECK_EQ_INT(NV_ESC_RM_CONTROL, 0xc020462a);
  CHECK_EQ_INT(NV_ESC_RM_MAP_MEMORY, 0xc038464e);
  CHECK_EQ_INT(NV_ESC_CARD_INFO, 0xd20046c8);
  CHECK_EQ_INT(UVM_INITIALIZE, 0x30000001);
  CHECK_EQ_INT(UVM_MAP_EXTERNAL_ALLOCATION, 0x21);
  CHECK_EQ_INT(HOPPER_COMPUTE_A, 0xcbc0);
  CHECK_EQ_INT(HOPPER_DMA_COPY_A, 0xc8b5);
  CHECK_EQ_INT(NV_AMPERE_COMPUTE_A_SEND_SIGNALING_PCAS2_B, 0x2c0);
  CHECK_EQ_INT(NV_AMPERE_CHANNEL_GPFIFO_A_SEM_EXECUTE, 0x6c);
  CHECK_EQ_INT(NV_HOPPER_DMA_COPY_A_LINE_LENGTH_IN, 0x418);
  CHECK_EQ_INT(NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, 0xa06c0101);
  /* tables */
  CHECK_EQ_STR(nv_rm_ioctl_table.path_prefix, "/dev/nvidia");
  CHECK_EQ_STR(nv_uvm_ioctl_table.path_prefix, "/dev/nvidia-uvm");
  const kif_ioctl_desc *d = find(&nv_rm_ioctl_table, "NV_ESC_RM_CONTROL");
  CHECK(d && d->request == 0xc020462a && d->arg_size_B == 32 && d->decode);
  d = find(&nv_rm_ioctl_table, "NV_ESC_CARD_INFO");
  CHECK(d && d->arg_size_B == 64 * 72);
  d = find(nv_layout_r590.uvm_ioctls, "UVM_FREE");
  CHECK(d && d->request == 0x22 && d->arg_size_B == 16);
  d = find(nv_layout_r570.uvm_ioctls, "UVM_FREE");
  CHECK(d && d->arg_size_B == 24);
}

static void test_decode(void) {
  NVOS21_PARAMETERS p = {.hRoot = 1, .hObjectParent = 2, .hObjectNew = 3, .hClass = 0x2080,
                         .pAllocParms = 0x7f0000001000ull, .paramsSize = 4, .status = 0x51};
  char out[256];
  size_t n = nv_decode_NVOS21_PARAMETERS(&p, sizeof p, out, sizeof out);
  const char *want = "hRoot=0x1 hObjectParent=0x2 hObjectNew=0x3 hClass=0x2080 pAllocParms=0x7f0000001000 "
                     "paramsSize=0x4 status=0x51";
  CHECK_EQ_STR(out, want);
  CHECK_EQ_INT(n, strlen(want));
  /* truncation: always NUL-terminated, never longer than the buffer */
  char small[10];
  n = nv_decode_NVOS21_PARAMETERS(&p, sizeof p, small, sizeof small);
  CHECK_EQ_STR(small, "hRoot=0x1");
  CHECK_EQ_INT(n, 9);
  /* short argument */
  nv_decode_NVOS21_PARAMETERS(&p, 8, out, sizeof out);
  CHECK_EQ_STR(out, "<NVOS21_PARAMETERS: 8 bytes, need 32>");
  /* nested struct, signed field, byte array, scalar array */
  nv_ioctl_card_info_t c;
  memset(&c, 0, sizeof c);
  c.valid = 1;
  c.pci_info.bus = 0x41;
  c.pci_info.device_id = 0x2684;
  c.gpu_id = 0x100;
  c.minor_number = 3;
  memcpy(c.dev_name, "ab", 2);
  nv_decode_nv_ioctl_card_info_t(&c, sizeof c, out, sizeof out);
  CHECK_EQ_STR(out, "valid=1 pci_info={domain=0x0 bus=0x41 slot=0x0 function=0x0 vendor_id=0x0 device_id=0x2684} "
                    "gpu_id=0x100 interrupt_line=0x0 reg_address=0x0 reg_size=0x0 fb_address=0x0 fb_size=0x0 "
                    "minor_number=0x3 dev_name=61620000000000000000");
  UVM_MM_INITIALIZE_PARAMS mm = {.uvmFd = -1, .rmStatus = 0};
  nv_decode_UVM_MM_INITIALIZE_PARAMS(&mm, sizeof mm, out, sizeof out);
  CHECK_EQ_STR(out, "uvmFd=-1 rmStatus=0x0");
  NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS ids;
  memset(&ids, 0xff, sizeof ids);
  ids.gpuIds[0] = 0x100;
  nv_decode_NV0000_CTRL_GPU_GET_ATTACHED_IDS_PARAMS(&ids, sizeof ids, out, sizeof out);
  CHECK_EQ_STR(out, "gpuIds=[0x100,0xffffffff,0xffffffff,0xffffffff,...32]");
  /* the schedule params decoder of each branch sees its own size */
  NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS_r580 sch = {.bEnable = 1, .bSkipSubmit = 0, .bSkipEnable = 1};
  nv_decode_NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS_r575(&sch, sizeof sch, out, sizeof out);
  CHECK_EQ_STR(out, "bEnable=1 bSkipSubmit=0 bSkipEnable=1");
  nv_decode_NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS_r570(&sch, 2, out, sizeof out);
  CHECK_EQ_STR(out, "bEnable=1 bSkipSubmit=0");
}

/* Independent bit-by-bit reference for a field write. */
static void ref_set(uint32_t *q, unsigned hi, unsigned lo, uint64_t v) {
  for (unsigned b = lo; b <= hi; b++) {
    unsigned bit = (unsigned)((v >> (b - lo)) & 1);
    q[b / 32] = (q[b / 32] & ~(1u << (b % 32))) | (bit << (b % 32));
  }
}

static void test_qmd(void) {
  uint32_t q[0x60];
  /* hand-computed positions (open-gpu-doc clc6c0qmd.h): cta_raster_width = dword 12, cta_thread_dimension0 = dword 18
   * bits 31:16 (592 = 18*32+16), qmd_group_id = dword 4 bits 5:0, release0_enable = dword 25 bit 23, cbuf0 size = dword 33 31:19 */
  memset(q, 0, sizeof q);
  CHECK(nv_qmdv03_00_set_cta_raster_width(q, 0x12345678));
  CHECK_EQ_INT(q[12], 0x12345678);
  CHECK(nv_qmdv03_00_set_cta_thread_dimension0(q, 0x20));
  CHECK_EQ_INT(q[18], 0x20u << 16);
  CHECK(nv_qmdv03_00_set_cta_thread_dimension1(q, 3));
  CHECK_EQ_INT(q[19], 3); /* 623:608 = dword 19 bits 15:0 */
  CHECK(nv_qmdv03_00_set_qmd_group_id(q, 0x3f));
  CHECK(nv_qmdv03_00_set_sm_global_caching_enable(q, 1));
  CHECK_EQ_INT(q[4], 0x7f);
  CHECK(nv_qmdv03_00_set_release0_enable(q, 1));
  CHECK_EQ_INT(q[25], 1u << 23);
  CHECK(nv_qmdv03_00_set_constant_buffer_size_shifted4(q, 0, 0x160));
  CHECK(nv_qmdv03_00_set_constant_buffer_invalidate(q, 0, 1));
  CHECK_EQ_INT(q[33], 0x0b040000);
  CHECK(nv_qmdv03_00_set_constant_buffer_valid(q, 2, 1));
  CHECK_EQ_INT(q[20], 1u << 2);
  CHECK(!nv_qmdv03_00_set_constant_buffer_valid(q, 8, 1)); /* index out of range */
  CHECK(!nv_qmdv03_00_set_qmd_group_id(q, 0x40));          /* does not fit in 6 bits */
  CHECK_EQ_INT(nv_qmdv03_00_get_qmd_group_id(q), 0x3f);
  memset(q, 0, sizeof q);
  CHECK(nv_qmdv05_00_set_grid_width(q, 7));
  CHECK_EQ_INT(q[39], 7);
  CHECK(nv_qmdv05_00_set_release_enable(q, 1, 1));
  CHECK_EQ_INT(q[9], 1u << 16); /* 304 = dword 9 bit 16 */
  CHECK(nv_qmdv05_00_set_dependent_qmd_pointer(q, 0, 0xabcdef));
  CHECK_EQ_INT(q[12], 0xabcdef);

  /* every field and index: set/get round trip of two patterns, other bits untouched */
  int bad = 0;
  unsigned total = 0;
  for (unsigned i = 0; i < nv_qmd_field_count; i++) {
    const nv_qmd_field *f = &nv_qmd_fields[i];
    for (unsigned k = 0; k < f->count; k++) {
      unsigned hi = f->hi + k * f->step, lo = f->lo + k * f->step, w = hi - lo + 1;
      uint64_t mask = w == 64 ? ~0ull : (1ull << w) - 1;
      uint64_t pats[2] = {0x5a5a5a5a5a5a5a5aull & mask, mask};
      for (int p = 0; p < 2; p++) {
        uint32_t a[0x60], ref[0x60];
        for (unsigned j = 0; j < 0x60; j++) a[j] = ref[j] = 0x9e3779b9u * (j + 1 + i);
        ref_set(ref, hi, lo, pats[p]);
        if (!nv_qmd_set(a, hi, lo, pats[p]) || memcmp(a, ref, sizeof a) || nv_qmd_get(a, hi, lo) != pats[p]) bad++;
        total++;
      }
    }
  }
  CHECK_EQ_INT(bad, 0);
  CHECK(total > 500);
}

static void test_version(void) {
  const nv_layout *l = NULL;
  CHECK_OK(nv_layout_for_version("570.133.07", &l));
  CHECK(l == &nv_layout_r570);
  CHECK_OK(nv_layout_for_version("580.95.05", &l));
  CHECK(l == &nv_layout_r580);
  CHECK_OK(nv_layout_for_version("575.64", &l));
  CHECK(l == &nv_layout_r575);
  CHECK_OK(nv_layout_for_version("595.45.04", &l));
  CHECK(l == &nv_layout_r590);
  CHECK_EQ_STR(l->branch, "r590");
  CHECK_EQ_INT(nv_layout_r570.NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS_size_B, 2);
  CHECK_EQ_INT(nv_layout_r575.NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS_size_B, 3);
  CHECK_EQ_INT(nv_layout_r590.UVM_FREE_PARAMS_size_B, 16);
  CHECK_EQ_INT(nv_layout_r580.NV_VASPACE_ALLOCATION_PARAMETERS_size_B, 56);
  CHECK_ERR(nv_layout_for_version("535.104.05", &l), HCQ_CODE_UNSUPPORTED, "535.104.05 (branch 535) is not supported");
  CHECK(l == NULL);
  CHECK_ERR(nv_layout_for_version("600.1", &l), HCQ_CODE_UNSUPPORTED, "supported branches: 570, 575, 580, 590, 595");
  CHECK_ERR(nv_layout_for_version("abc", &l), HCQ_CODE_INVALID, "'abc' is not of the form");
  CHECK_ERR(nv_layout_for_version("", &l), HCQ_CODE_INVALID, "not of the form");
  CHECK_ERR(nv_layout_for_version("5801234.1", &l), HCQ_CODE_INVALID, "not of the form");
  CHECK_ERR(nv_layout_for_version(NULL, &l), HCQ_CODE_INVALID, "NULL");
  /* each branch has its control table with the schedule command at that branch's size */
  const kif_ioctl_desc *d = NULL;
  for (size_t i = 0; i < nv_layout_r570.rm_ctrl_count; i++)
    if (nv_layout_r570.rm_ctrls[i].request == NVA06C_CTRL_CMD_GPFIFO_SCHEDULE) d = &nv_layout_r570.rm_ctrls[i];
  CHECK(d && d->arg_size_B == 2);
}

int main(void) {
  test_layouts();
  test_decode();
  test_qmd();
  test_version();
  return testing_summary("nv_abi_test");
}
