/* nv/: device open (the init call sequence) and close. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "autogen/nv_layout.h"
#include "nv/nv_internal.h"

/* Preference order per kind: Hopper first, then Ada/Ampere, then Blackwell (issue 12). */
static const uint32_t nv_pref_compute[] = {HOPPER_COMPUTE_A, ADA_COMPUTE_A, AMPERE_COMPUTE_B, AMPERE_COMPUTE_A,
                                           BLACKWELL_COMPUTE_B, BLACKWELL_COMPUTE_A, 0};
static const uint32_t nv_pref_copy[] = {HOPPER_DMA_COPY_A, AMPERE_DMA_COPY_B, AMPERE_DMA_COPY_A,
                                        BLACKWELL_DMA_COPY_B, BLACKWELL_DMA_COPY_A, 0};
static const uint32_t nv_pref_gpfifo[] = {HOPPER_CHANNEL_GPFIFO_A, AMPERE_CHANNEL_GPFIFO_A,
                                          BLACKWELL_CHANNEL_GPFIFO_B, BLACKWELL_CHANNEL_GPFIFO_A, 0};
static const uint32_t nv_pref_usermode[] = {HOPPER_USERMODE_A, TURING_USERMODE_A, BLACKWELL_USERMODE_A, 0};

static uint32_t nv_pick(const uint32_t *pref, const uint32_t *list, uint32_t n) {
  for (; *pref; pref++)
    for (uint32_t i = 0; i < n; i++)
      if (list[i] == *pref) return *pref;
  return 0;
}

static hcq_status nv_choose_classes(nv_dev *d) {
  NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS q = {0};
  HCQ_TRY(nv_rm_control(d, d->device, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, &q, sizeof q, "GPU_GET_CLASSLIST (count)"));
  if (!q.numClasses || q.numClasses > 4096)
    return hcq_status_make(HCQ_CODE_IO, "NV GPU_GET_CLASSLIST: implausible class count %u", q.numClasses);
  uint32_t *list = calloc(q.numClasses, 4);
  if (!list) return hcq_status_make(HCQ_CODE_NOMEM, "NV: class list of %u entries", q.numClasses);
  q.classList = (uint64_t)(uintptr_t)list;
  hcq_status st = nv_rm_control(d, d->device, NV0080_CTRL_CMD_GPU_GET_CLASSLIST, &q, sizeof q, "GPU_GET_CLASSLIST");
  if (!st) {
    d->cls_compute = nv_pick(nv_pref_compute, list, q.numClasses);
    d->cls_copy = nv_pick(nv_pref_copy, list, q.numClasses);
    d->cls_gpfifo = nv_pick(nv_pref_gpfifo, list, q.numClasses);
    d->cls_usermode = nv_pick(nv_pref_usermode, list, q.numClasses);
    if (!d->cls_compute || !d->cls_copy || !d->cls_gpfifo || !d->cls_usermode) {
      char offered[512] = "";
      size_t o = 0;
      for (uint32_t i = 0; i < q.numClasses && o + 8 < sizeof offered; i++)
        o += (size_t)snprintf(offered + o, sizeof offered - o, "%s0x%x", i ? " " : "", list[i]);
      st = hcq_status_make(HCQ_CODE_UNSUPPORTED,
                           "NV GPU %d: no supported %s class (supported: Hopper, Ada, Ampere, Blackwell); the GPU "
                           "offers %s",
                           d->minor, !d->cls_compute ? "compute" : !d->cls_copy ? "copy" : !d->cls_gpfifo ? "GPFIFO channel" : "usermode",
                           offered);
    }
  }
  free(list);
  return st;
}

/* GR info -> SM version -> "ptx:sm_XY" (minor digit as the reference computes it), and the counts local memory is
 * sized from (GPCs, TPCs per GPC, SMs per TPC, warps per SM). */
static hcq_status nv_read_gr_info(nv_dev *d) {
  NV2080_CTRL_GR_INFO info[5] = {{.index = NV2080_CTRL_GR_INFO_INDEX_SM_VERSION},
                                 {.index = NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS},
                                 {.index = NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC},
                                 {.index = NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC},
                                 {.index = NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM}};
  NV2080_CTRL_GR_GET_INFO_PARAMS p = {.grInfoListSize = 5, .grInfoList = (uint64_t)(uintptr_t)info};
  HCQ_TRY(nv_rm_control(d, d->subdevice, NV2080_CTRL_CMD_GR_GET_INFO, &p, sizeof p, "GR_GET_INFO"));
  d->gpcs = info[1].data, d->tpc_per_gpc = info[2].data, d->sm_per_tpc = info[3].data, d->max_warps_per_sm = info[4].data;
  if (!d->gpcs || d->gpcs > 64 || !d->tpc_per_gpc || d->tpc_per_gpc > 64 || !d->sm_per_tpc || d->sm_per_tpc > 8 ||
      !d->max_warps_per_sm || d->max_warps_per_sm > 256)
    return hcq_status_make(HCQ_CODE_IO, "NV GR_GET_INFO: implausible GPCs %u, TPCs per GPC %u, SMs per TPC %u, warps "
                           "per SM %u", d->gpcs, d->tpc_per_gpc, d->sm_per_tpc, d->max_warps_per_sm);
  uint32_t v = d->sm_version = info[0].data, minor = (v & 0xff) > 0xf ? (v & 0xff) >> 4 : v & 0xff;
  if (v == 0xa04) snprintf(d->target, sizeof d->target, "ptx:sm_120");
  else snprintf(d->target, sizeof d->target, "ptx:sm_%u%u", (v >> 8) & 0xff, minor);
  return HCQ_OK;
}

static hcq_status nv_version(nv_dev *d) {
  nv_ioctl_rm_api_version_t v = {.cmd = NV_RM_API_VERSION_CMD_QUERY};
  hcq_status st = kif_ioctl(d->k, d->fd_ctl, NV_ESC_CHECK_VERSION_STR, &v);
  if (st) return hcq_status_annotate(st, "NV CHECK_VERSION_STR");
  if (v.reply != NV_RM_API_VERSION_REPLY_RECOGNIZED)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "NV CHECK_VERSION_STR: the kernel module did not answer the query");
  memcpy(d->version, v.versionString, sizeof v.versionString);
  d->version[sizeof v.versionString] = 0;
  return hcq_status_annotate(nv_layout_for_version(d->version, &d->layout), "NV driver");
}

static hcq_status nv_open_root(nv_dev *d) {
  HCQ_TRY(hcq_status_annotate(kif_open(d->k, "/dev/nvidiactl", O_RDWR | O_CLOEXEC, &d->fd_ctl), "NV open"));
  HCQ_TRY(hcq_status_annotate(kif_open(d->k, "/dev/nvidia-uvm", O_RDWR | O_CLOEXEC, &d->fd_uvm), "NV open"));
  HCQ_TRY(hcq_status_annotate(kif_open(d->k, "/dev/nvidia-uvm", O_RDWR | O_CLOEXEC, &d->fd_uvm2), "NV open"));
  /* names and decoded arguments in errors and HCQ_TRACE=1 traces; UVM's table is the branch's */
  HCQ_TRY(kif_register_decoder(d->k, &nv_rm_ioctl_table));
  HCQ_TRY(nv_version(d));
  HCQ_TRY(kif_register_decoder(d->k, d->layout->uvm_ioctls));
  d->root = 0;
  HCQ_TRY(nv_rm_alloc(d, 0, NV01_ROOT_CLIENT, NULL, 0, &d->root, "root client"));
  /* the build version must agree with the version string the layout came from */
  static _Thread_local NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS b;
  memset(&b, 0, sizeof b);
  HCQ_TRY(nv_rm_control(d, d->root, NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2, &b, sizeof b, "SYSTEM_GET_BUILD_VERSION_V2"));
  b.driverVersionBuffer[sizeof b.driverVersionBuffer - 1] = 0;
  if (strcmp((const char *)b.driverVersionBuffer, d->version) != 0)
    return hcq_status_make(HCQ_CODE_IO, "NV driver: CHECK_VERSION_STR says %s but GET_BUILD_VERSION_V2 says %.64s",
                           d->version, (const char *)b.driverVersionBuffer);
  UVM_INITIALIZE_PARAMS ui = {0};
  HCQ_TRY(nv_uvm(d, d->fd_uvm, UVM_INITIALIZE, &ui, &ui.rmStatus, "UVM_INITIALIZE"));
  /* the reference (and CUDA) ignore a failure here: older modules lack it */
  UVM_MM_INITIALIZE_PARAMS mi = {.uvmFd = d->fd_uvm};
  hcq_status_free(nv_uvm(d, d->fd_uvm2, UVM_MM_INITIALIZE, &mi, &mi.rmStatus, "UVM_MM_INITIALIZE"));
  return HCQ_OK;
}

static hcq_status nv_pick_card(nv_dev *d, int index, uint32_t *gpu_id) {
  nv_ioctl_card_info_t *cards = calloc(64, sizeof *cards);
  if (!cards) return hcq_status_make(HCQ_CODE_NOMEM, "NV: card info");
  hcq_status st = kif_ioctl(d->k, d->fd_ctl, NV_ESC_CARD_INFO, cards);
  int seen = 0;
  if (st) st = hcq_status_annotate(st, "NV CARD_INFO");
  for (int i = 0; !st && i < 64; i++)
    if (cards[i].valid && seen++ == index) {
      d->minor = (int)cards[i].minor_number, *gpu_id = cards[i].gpu_id;
      free(cards);
      return HCQ_OK;
    }
  free(cards);
  return st ? st : hcq_status_make(HCQ_CODE_NOT_FOUND, "NV: no GPU %d (%d found)", index, seen);
}

static hcq_status nv_open_gpu(nv_dev *d, uint32_t gpu_id) {
  HCQ_TRY(nv_open_gpu_fd(d, &d->fd_gpu));
  NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS id = {.gpuId = gpu_id};
  HCQ_TRY(nv_rm_control(d, d->root, NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2, &id, sizeof id, "GPU_GET_ID_INFO_V2"));
  NV0080_ALLOC_PARAMETERS dev = {.deviceId = id.deviceInstance, .hClientShare = d->root,
                                 .vaMode = NV_DEVICE_ALLOCATION_VAMODE_MULTIPLE_VASPACES};
  HCQ_TRY(nv_rm_alloc(d, d->root, NV01_DEVICE_0, &dev, sizeof dev, &d->device, "device"));
  NV2080_ALLOC_PARAMETERS sub = {0};
  HCQ_TRY(nv_rm_alloc(d, d->device, NV20_SUBDEVICE_0, &sub, sizeof sub, &d->subdevice, "subdevice"));
  HCQ_TRY(nv_choose_classes(d));
  HCQ_TRY(nv_rm_alloc(d, d->subdevice, d->cls_usermode, NULL, 0, &d->usermode, "usermode"));
  void *db;
  HCQ_TRY(nv_map_to_cpu(d, d->usermode, 0x10000, 0, NVOS33_FLAGS_ACCESS_WRITE_ONLY << NVOS33_FLAGS_ACCESS_SHIFT, false, &db));
  d->doorbell = db;
  NV2080_CTRL_PERF_BOOST_PARAMS boost = {
      .flags = (NV2080_CTRL_PERF_BOOST_FLAGS_CMD_BOOST_TO_MAX << NV2080_CTRL_PERF_BOOST_FLAGS_CMD_SHIFT) |
               (1u << NV2080_CTRL_PERF_BOOST_FLAGS_CUDA_SHIFT) | (1u << NV2080_CTRL_PERF_BOOST_FLAGS_CUDA_PRIORITY_SHIFT),
      .duration = NV2080_CTRL_PERF_BOOST_DURATION_INFINITE};
  HCQ_TRY(nv_rm_control(d, d->subdevice, NV2080_CTRL_CMD_PERF_BOOST, &boost, sizeof boost, "PERF_BOOST"));
  /* VA space: its params grew at 580 (pasid); the branch layout gives the size RM expects */
  NV_VASPACE_ALLOCATION_PARAMETERS_r580 vas = {
      .vaBase = 0x1000, .vaSize = 0x1fffffb000000ull,
      .flags = NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING | NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED};
  HCQ_TRY(nv_rm_alloc(d, d->device, FERMI_VASPACE_A, &vas, (uint32_t)d->layout->NV_VASPACE_ALLOCATION_PARAMETERS_size_B,
                      &d->vaspace, "VA space"));
  NV2080_CTRL_GPU_GET_GID_INFO_PARAMS gid = {.flags = NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY, .length = 16};
  HCQ_TRY(nv_rm_control(d, d->subdevice, NV2080_CTRL_CMD_GPU_GET_GID_INFO, &gid, sizeof gid, "GPU_GET_GID_INFO"));
  memcpy(d->uuid, gid.data, 16);
  UVM_REGISTER_GPU_PARAMS rg = {.rmCtrlFd = -1};
  memcpy(rg.gpu_uuid.uuid, d->uuid, 16);
  HCQ_TRY(nv_uvm(d, d->fd_uvm, UVM_REGISTER_GPU, &rg, &rg.rmStatus, "UVM_REGISTER_GPU"));
  UVM_REGISTER_GPU_VASPACE_PARAMS rv = {.rmCtrlFd = d->fd_ctl, .hClient = d->root, .hVaSpace = d->vaspace};
  memcpy(rv.gpuUuid.uuid, d->uuid, 16);
  HCQ_TRY(nv_uvm(d, d->fd_uvm, UVM_REGISTER_GPU_VASPACE, &rv, &rv.rmStatus, "UVM_REGISTER_GPU_VASPACE"));
  return HCQ_OK;
}

static hcq_status nv_open_channels(nv_dev *d) {
  NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS g = {.engineType = NV2080_ENGINE_TYPE_GRAPHICS};
  HCQ_TRY(nv_rm_alloc(d, d->device, KEPLER_CHANNEL_GROUP_A, &g, sizeof g, &d->chgroup, "channel group"));
  HCQ_TRY(nv_mem_alloc(d, 0x200000, NV_MEM_CPU | NV_MEM_CONTIG, &d->gpfifo_area));
  HCQ_TRY(nv_mem_alloc(d, 0x10000, NV_MEM_UNCACHED | NV_MEM_CPU, &d->notifier));
  NV_CTXSHARE_ALLOCATION_PARAMETERS cs = {.hVASpace = d->vaspace, .flags = NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC};
  HCQ_TRY(nv_rm_alloc(d, d->chgroup, FERMI_CONTEXT_SHARE_A, &cs, sizeof cs, &d->ctxshare, "context share"));
  HCQ_TRY(nv_chan_create(d, &d->compute, 0, d->cls_compute, "compute"));
  HCQ_TRY(nv_chan_create(d, &d->copy, 0x100000, d->cls_copy, "copy"));
  /* the schedule params grew a byte at 575 (bSkipEnable): send the branch's size */
  NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS_r575 sch = {.bEnable = 1};
  HCQ_TRY(nv_rm_control(d, d->chgroup, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, &sch,
                        (uint32_t)d->layout->NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS_size_B, "GPFIFO_SCHEDULE"));
  HCQ_TRY(nv_read_gr_info(d));
  return nv_read_fb_and_name(d);
}

hcq_status nv_dev_open(kif *k, int index, nv_dev **out) {
  *out = NULL;
  /* CPU and GPU share every address and the driver's VA windows lie above 4 GiB; NVIDIA ships no 32-bit Arm or x86
   * driver for these GPUs either */
  if (sizeof(void *) < 8)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "nv_dev_open(%d): the NV driver needs a 64-bit host (GPU virtual "
                           "addresses above 4 GiB are shared with the CPU)", index);
  nv_dev *d = calloc(1, sizeof *d);
  if (!d) return hcq_status_make(HCQ_CODE_NOMEM, "nv_dev_open");
  d->k = k;
  d->fd_ctl = d->fd_uvm = d->fd_uvm2 = d->fd_gpu = -1;
  hcq_status st = nv_open_root(d);
  uint32_t gpu_id = 0;
  if (!st) st = nv_pick_card(d, index, &gpu_id); /* a GPU that is not there is NOT_FOUND, whatever VA is left */
  if (!st) st = nv_va_reserve(d);
  if (!st) st = nv_open_gpu(d, gpu_id);
  if (!st) st = nv_open_channels(d);
  if (st) {
    nv_dev_close(d);
    return hcq_status_annotate(st, "nv_dev_open(%d)", index);
  }
  *out = d;
  return HCQ_OK;
}

static void nv_chan_destroy(nv_dev *d, nv_chan *c) {
  hcq_status_free(nv_mem_free(d, &c->cmd));
}

void nv_dev_close(nv_dev *d) {
  if (!d) return;
  nv_chan_destroy(d, &d->compute);
  nv_chan_destroy(d, &d->copy);
  nv_qmd_free_all(d);
  free(d->prog_names);
  nv_local_free_all(d);
  hcq_status_free(nv_mem_free(d, &d->gpfifo_area));
  hcq_status_free(nv_mem_free(d, &d->notifier));
  if (d->doorbell) hcq_status_free(kif_munmap(d->k, (void *)d->doorbell, 0x10000));
  /* freeing the root client frees every object below it */
  if (d->root) hcq_status_free(nv_rm_free(d, 0, d->root));
  /* closing the files also frees what a failed RM_FREE/UVM_FREE left (RM and UVM clean up per file); the VA
   * windows go last so nothing the kernel side unmaps lands outside them */
  int *fds[] = {&d->fd_gpu, &d->fd_uvm2, &d->fd_uvm, &d->fd_ctl};
  for (int i = 0; i < 4; i++)
    if (*fds[i] >= 0) hcq_status_free(kif_close(d->k, *fds[i]));
  nv_va_release(d);
  free(d);
}

const char *nv_dev_target(const nv_dev *d) { return d->target; }
const char *nv_dev_version(const nv_dev *d) { return d->version; }
const nv_layout *nv_dev_layout(const nv_dev *d) { return d->layout; }
nv_chan *nv_dev_compute(nv_dev *d) { return &d->compute; }
nv_chan *nv_dev_copy(nv_dev *d) { return &d->copy; }
uint32_t nv_dev_class(const nv_dev *d, char which) {
  return which == 'c' ? d->cls_compute : which == 'd' ? d->cls_copy : which == 'g' ? d->cls_gpfifo : d->cls_usermode;
}
