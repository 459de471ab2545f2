/* nv/: RM escapes and UVM ioctls with their status decoded by name (autogen's nv_status_name). */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "autogen/nv_decode.h"
#include "nv/nv_internal.h"

hcq_status nv_rm_status(uint32_t status, const char *fmt, ...) {
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  const char *name = nv_status_name(status);
  hcq_code code = status == NV_ERR_NO_MEMORY ? HCQ_CODE_NOMEM
                  : status == NV_ERR_NOT_SUPPORTED || status == NV_ERR_INVALID_CLASS ? HCQ_CODE_UNSUPPORTED
                                                                                       : HCQ_CODE_IO;
  return hcq_status_make(code, "%s: RM status %s (0x%x)", what, name ? name : "unknown", status);
}

hcq_status nv_rm_alloc(nv_dev *d, uint32_t parent, uint32_t cls, void *params, uint32_t params_size_B,
                       uint32_t *out_handle, const char *what) {
  /* paramsSize stays 0 as in the reference: RM sizes the parameters by class */
  NVOS21_PARAMETERS p = {.hRoot = d->root, .hObjectParent = parent, .hClass = cls,
                         .pAllocParms = (uint64_t)(uintptr_t)params};
  (void)params_size_B;
  hcq_status st = kif_ioctl(d->k, d->fd_ctl, NV_ESC_RM_ALLOC, &p);
  if (st) return hcq_status_annotate(st, "NV RM_ALLOC of %s (class 0x%x)", what, cls);
  if (p.status) return nv_rm_status(p.status, "NV RM_ALLOC of %s (class 0x%x) under 0x%x", what, cls, parent);
  *out_handle = p.hObjectNew;
  return HCQ_OK;
}

hcq_status nv_rm_control(nv_dev *d, uint32_t obj, uint32_t cmd, void *params, uint32_t params_size_B,
                         const char *what) {
  NVOS54_PARAMETERS p = {.hClient = d->root, .hObject = obj, .cmd = cmd, .params = (uint64_t)(uintptr_t)params,
                         .paramsSize = params_size_B};
  hcq_status st = kif_ioctl(d->k, d->fd_ctl, NV_ESC_RM_CONTROL, &p);
  if (st) return hcq_status_annotate(st, "NV RM_CONTROL %s (0x%x)", what, cmd);
  if (p.status) return nv_rm_status(p.status, "NV RM_CONTROL %s (0x%x) on 0x%x", what, cmd, obj);
  return HCQ_OK;
}

hcq_status nv_rm_free(nv_dev *d, uint32_t parent, uint32_t obj) {
  NVOS00_PARAMETERS p = {.hRoot = d->root, .hObjectParent = parent, .hObjectOld = obj};
  hcq_status st = kif_ioctl(d->k, d->fd_ctl, NV_ESC_RM_FREE, &p);
  if (st) return hcq_status_annotate(st, "NV RM_FREE of 0x%x", obj);
  if (p.status) return nv_rm_status(p.status, "NV RM_FREE of 0x%x", obj);
  return HCQ_OK;
}

hcq_status nv_uvm(nv_dev *d, int fd, unsigned long req, void *params, uint32_t *status, const char *what) {
  hcq_status st = kif_ioctl(d->k, fd, req, params);
  if (st) return hcq_status_annotate(st, "NV %s", what);
  if (*status) return nv_rm_status(*status, "NV %s", what);
  return HCQ_OK;
}

hcq_status nv_open_gpu_fd(nv_dev *d, int *out_fd) {
  char path[32];
  snprintf(path, sizeof path, "/dev/nvidia%d", d->minor);
  int fd;
  HCQ_TRY(hcq_status_annotate(kif_open(d->k, path, O_RDWR | O_CLOEXEC, &fd), "NV open"));
  nv_ioctl_register_fd_t r = {.ctl_fd = d->fd_ctl};
  hcq_status st = kif_ioctl(d->k, fd, NV_ESC_REGISTER_FD, &r);
  if (st) {
    hcq_status_free(kif_close(d->k, fd));
    return hcq_status_annotate(st, "NV REGISTER_FD of %s", path);
  }
  *out_fd = fd;
  return HCQ_OK;
}

hcq_status nv_map_to_cpu(nv_dev *d, uint32_t handle, uint64_t size_B, uint64_t va, uint32_t flags, bool system,
                         void **out) {
  int fd;
  /* RM maps through a fresh fd: a GPU fd for video memory, a control fd for system memory */
  if (system) HCQ_TRY(hcq_status_annotate(kif_open(d->k, "/dev/nvidiactl", O_RDWR | O_CLOEXEC, &fd), "NV open"));
  else HCQ_TRY(nv_open_gpu_fd(d, &fd));
  nv_ioctl_nvos33_parameters_with_fd p = {
      .params = {.hClient = d->root, .hDevice = d->device, .hMemory = handle, .length = size_B, .flags = flags},
      .fd = fd};
  hcq_status st = kif_ioctl(d->k, d->fd_ctl, NV_ESC_RM_MAP_MEMORY, &p);
  if (st) st = hcq_status_annotate(st, "NV RM_MAP_MEMORY of 0x%x", handle);
  else if (p.params.status) st = nv_rm_status(p.params.status, "NV RM_MAP_MEMORY of 0x%x", handle);
  if (!st)
    st = hcq_status_annotate(kif_mmap(d->k, (void *)(uintptr_t)va, size_B, PROT_READ | PROT_WRITE,
                                      MAP_SHARED | (va ? MAP_FIXED : 0), fd, 0, out),
                             "NV CPU mapping of 0x%x", handle);
  hcq_status_free(kif_close(d->k, fd)); /* the mapping keeps the file */
  return st;
}

/* One RM control whose refusal by RM (a status, not a failed ioctl) is not fatal: *refused gets the status. */
static hcq_status nv_rm_control_soft(nv_dev *d, uint32_t cmd, void *params, uint32_t size_B, const char *what,
                                     uint32_t *refused) {
  NVOS54_PARAMETERS p = {.hClient = d->root, .hObject = d->subdevice, .cmd = cmd,
                         .params = (uint64_t)(uintptr_t)params, .paramsSize = size_B};
  HCQ_TRY(hcq_status_annotate(kif_ioctl(d->k, d->fd_ctl, NV_ESC_RM_CONTROL, &p), "NV RM_CONTROL %s (0x%x)", what, cmd));
  *refused = p.status;
  return HCQ_OK;
}

/* Memory size (FB_GET_INFO_V2: RAM_SIZE and HEAP_FREE in KiB; the list length is the branch's) and the marketing
 * name (GPU_GET_NAME_STRING, ASCII). Neither is needed to run work: an RM refusal leaves them unknown (0, ""),
 * a failed ioctl fails the open as every other call does. */
hcq_status nv_read_fb_and_name(nv_dev *d) {
  union {
    NV2080_CTRL_FB_GET_INFO_V2_PARAMS_r580 big;
    NV2080_CTRL_FB_GET_INFO_V2_PARAMS_r570 small;
  } fb;
  memset(&fb, 0, sizeof fb);
  fb.small.fbInfoListSize = 2;
  fb.small.fbInfoList[0].index = NV2080_CTRL_FB_INFO_INDEX_RAM_SIZE;
  fb.small.fbInfoList[1].index = NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE;
  uint32_t refused = 0, size_B = (uint32_t)d->layout->NV2080_CTRL_FB_GET_INFO_V2_PARAMS_size_B;
  HCQ_TRY(nv_rm_control_soft(d, NV2080_CTRL_CMD_FB_GET_INFO_V2, &fb, size_B, "FB_GET_INFO_V2", &refused));
  if (!refused) {
    d->fb_B = (uint64_t)fb.small.fbInfoList[0].data << 10;
    d->fb_free_B = (uint64_t)fb.small.fbInfoList[1].data << 10;
  }
  NV2080_CTRL_GPU_GET_NAME_STRING_PARAMS n = {.gpuNameStringFlags = NV2080_CTRL_GPU_GET_NAME_STRING_FLAGS_TYPE_ASCII};
  HCQ_TRY(nv_rm_control_soft(d, NV2080_CTRL_CMD_GPU_GET_NAME_STRING, &n, sizeof n, "GPU_GET_NAME_STRING", &refused));
  const char *ascii = (const char *)n.gpuNameString;
  if (!refused) snprintf(d->gpu_name, sizeof d->gpu_name, "%.*s", (int)strnlen(ascii, NV2080_GPU_MAX_NAME_STRING_LENGTH), ascii);
  return HCQ_OK;
}

uint64_t nv_dev_mem_B(const nv_dev *d, bool free_now) { return free_now ? d->fb_free_B : d->fb_B; }
const char *nv_dev_gpu_name(const nv_dev *d) { return d->gpu_name; }
