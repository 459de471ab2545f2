/* NV mock: RM controls (NV_ESC_RM_CONTROL). The parameter size must be the advertised branch's size for that
 * command (autogen's per-branch control table), so a driver using another branch's layout is refused with
 * NV_ERR_INVALID_PARAM_STRUCT, as RM does. */
#include <string.h>

#include "emulator_tests/nv_mock_internal.h"

static uint32_t nvm_sm_version(const nv_mock *m) {
  return m->arch == NV_MOCK_HOPPER ? 0x900 : m->arch == NV_MOCK_BLACKWELL ? 0xa00 : 0x809;
}

uint32_t nvm_gr_info(const nv_mock *m, uint32_t index, uint32_t *data) {
  switch (index) {
  case NV2080_CTRL_GR_INFO_INDEX_SM_VERSION: *data = nvm_sm_version(m); return NV_OK;
  case NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM: *data = 64; return NV_OK;
  case NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS: *data = (uint32_t)m->gpcs; return NV_OK;
  case NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC: *data = 9; return NV_OK;
  case NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC: *data = 2; return NV_OK;
  default: return NV_ERR_INVALID_ARGUMENT;
  }
}

/* FB_GET_INFO_V2: the emulated GPU's memory (RAM_SIZE / TOTAL / HEAP in KiB; 80 GiB as an H100's, with 1 GiB
 * taken by RM); an index outside the list RM knows is NV_ERR_INVALID_ARGUMENT, a list length of 0 or past the
 * branch's maximum NV_ERR_INVALID_PARAM_STRUCT (the checks of RM's subdeviceCtrlCmdFbGetInfoV2). */
#define NVM_FB_KIB (80ull << 20)
static uint32_t nvm_fb_info(void *a, size_t size_B) {
  uint32_t *w = a, n = w[0], max = (uint32_t)((size_B - 4) / 8);
  if (n == 0 || n > max) return NV_ERR_INVALID_PARAM_STRUCT;
  NV2080_CTRL_FB_INFO *list = (NV2080_CTRL_FB_INFO *)(w + 1);
  for (uint32_t i = 0; i < n; i++) {
    switch (list[i].index) {
    case NV2080_CTRL_FB_INFO_INDEX_RAM_SIZE:
    case NV2080_CTRL_FB_INFO_INDEX_TOTAL_RAM_SIZE:
    case NV2080_CTRL_FB_INFO_INDEX_USABLE_RAM_SIZE: list[i].data = (uint32_t)NVM_FB_KIB; break;
    case NV2080_CTRL_FB_INFO_INDEX_HEAP_SIZE:
    case NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE: list[i].data = (uint32_t)(NVM_FB_KIB - (1u << 20)); break;
    default:
      if (list[i].index >= max) return NV_ERR_INVALID_ARGUMENT;
      list[i].data = 0;
    }
  }
  return NV_OK;
}

/* The class list the GPU reports (common classes first). */
static int nvm_class_list(const nv_mock *m, uint32_t *out, int cap) {
  static const uint32_t common[] = {NV01_ROOT_CLIENT, NV01_DEVICE_0, NV20_SUBDEVICE_0, NV01_MEMORY_SYSTEM,
                                    NV01_MEMORY_LOCAL_USER, FERMI_VASPACE_A, KEPLER_CHANNEL_GROUP_A,
                                    FERMI_CONTEXT_SHARE_A, GT200_DEBUGGER};
  int n = 0, na;
  const uint32_t *arch = nvm_classes(m, &na);
  for (size_t i = 0; i < sizeof common / 4; i++, n++)
    if (n < cap) out[n] = common[i];
  for (int i = 0; i < na; i++, n++)
    if (n < cap) out[n] = arch[i];
  return n;
}

static nvm_kind nvm_ctrl_owner(uint32_t cmd, bool *known) {
  *known = true;
  switch (cmd >> 16) {
  case 0x0000: return NVM_CLIENT;
  case 0x0080: return NVM_DEVICE;
  case 0x2080: return NVM_SUBDEVICE;
  case 0xa06c: return NVM_CHGROUP;
  case 0xc36f: return NVM_CHANNEL;
  case 0x83de: return NVM_DEBUGGER;
  default: *known = false; return NVM_CLIENT;
  }
}

uint32_t nvm_control(nv_mock *m, NVOS54_PARAMETERS *p) {
  nvm_obj *client = nvm_find(m, p->hClient), *o = nvm_find(m, p->hObject);
  if (!client || client->kind != NVM_CLIENT) return NV_ERR_INVALID_CLIENT;
  if (!o) return NV_ERR_INVALID_OBJECT_HANDLE;
  bool known;
  if (nvm_ctrl_owner(p->cmd, &known) != o->kind || !known) return NV_ERR_NOT_SUPPORTED;
  const kif_ioctl_desc *d = NULL;
  for (size_t i = 0; i < m->layout->rm_ctrl_count; i++)
    if (m->layout->rm_ctrls[i].request == p->cmd) d = &m->layout->rm_ctrls[i];
  if (!d) return NV_ERR_NOT_SUPPORTED;
  if (!p->params || p->paramsSize != d->arg_size_B) return NV_ERR_INVALID_PARAM_STRUCT;
  void *a = (void *)(uintptr_t)p->params;
  switch (p->cmd) {
  case NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2: {
    NV0000_CTRL_SYSTEM_GET_BUILD_VERSION_V2_PARAMS *v = a;
    memset(v, 0, sizeof *v);
    snprintf((char *)v->driverVersionBuffer, sizeof v->driverVersionBuffer, "%s", m->version);
    snprintf((char *)v->versionBuffer, sizeof v->versionBuffer, "%s", m->version);
    return NV_OK;
  }
  case NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2: {
    NV0000_CTRL_GPU_GET_ID_INFO_V2_PARAMS *q = a;
    if (!q->gpuId || q->gpuId % 0x100 || q->gpuId / 0x100 > (uint32_t)m->gpu_count) return NV_ERR_INVALID_ARGUMENT;
    q->deviceInstance = q->gpuId / 0x100 - 1;
    return NV_OK;
  }
  case NV0080_CTRL_CMD_GPU_GET_CLASSLIST: {
    NV0080_CTRL_GPU_GET_CLASSLIST_PARAMS *q = a;
    uint32_t tmp[64];
    int n = nvm_class_list(m, tmp, 64);
    if (!q->classList) {
      q->numClasses = (uint32_t)n;
      return NV_OK;
    }
    if (q->numClasses < (uint32_t)n) return NV_ERR_INVALID_PARAM_STRUCT;
    memcpy((void *)(uintptr_t)q->classList, tmp, (size_t)n * 4);
    q->numClasses = (uint32_t)n;
    return NV_OK;
  }
  case NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2: {
    uint32_t *q = a;
    q[0] = (uint32_t)nvm_class_list(m, q + 1, (int)(d->arg_size_B / 4 - 1));
    return NV_OK;
  }
  case NV2080_CTRL_CMD_GPU_GET_GID_INFO: {
    NV2080_CTRL_GPU_GET_GID_INFO_PARAMS *q = a;
    if (q->flags != NV2080_GPU_CMD_GPU_GET_GID_FLAGS_FORMAT_BINARY) return NV_ERR_INVALID_ARGUMENT;
    q->length = 16;
    for (int i = 0; i < 16; i++) q->data[i] = (uint8_t)(0xa0 + i + 16 * o->gpu);
    return NV_OK;
  }
  case NV2080_CTRL_CMD_GR_GET_INFO: {
    NV2080_CTRL_GR_GET_INFO_PARAMS *q = a;
    NV2080_CTRL_GR_INFO *list = (NV2080_CTRL_GR_INFO *)(uintptr_t)q->grInfoList;
    if (!list || !q->grInfoListSize || q->grInfoListSize > 256) return NV_ERR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < q->grInfoListSize; i++) {
      uint32_t st = nvm_gr_info(m, list[i].index, &list[i].data);
      if (st != NV_OK) return st;
    }
    return NV_OK;
  }
  case NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN:
    ((NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS *)a)->workSubmitToken = o->chan->token;
    return NV_OK;
  case NVA06C_CTRL_CMD_GPFIFO_SCHEDULE:
  case NV2080_CTRL_CMD_PERF_BOOST:
  case NV2080_CTRL_CMD_FB_FLUSH_GPU_CACHE:
    return NV_OK;
  case NV2080_CTRL_CMD_FB_GET_INFO_V2:
    return nvm_fb_info(a, d->arg_size_B);
  case NV2080_CTRL_CMD_GPU_GET_NAME_STRING: {
    NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS *q = a;
    if (q->gpuNameStringFlags != NV2080_CTRL_GPU_GET_NAME_STRING_FLAGS_TYPE_ASCII) return NV_ERR_INVALID_ARGUMENT;
    memset(q->gpuNameString, 0, sizeof q->gpuNameString);
    static const char *const names[] = {"hcq mock (Hopper, sm_90)", "hcq mock (Ada, sm_89)", "hcq mock (Blackwell, sm_100)",
                                        "hcq mock (no compute class)"};
    snprintf((char *)q->gpuNameString, sizeof q->gpuNameString, "%s", names[m->arch]);
    return NV_OK;
  }
  case NV2080_CTRL_CMD_GPU_GET_INFO_V2:
    return NV_OK; /* no info indexes emulated: the list comes back unchanged */
  default:
    return NV_ERR_NOT_SUPPORTED;
  }
}
