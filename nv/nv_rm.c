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
