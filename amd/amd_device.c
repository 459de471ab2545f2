/* Opening an AMD GPU over KFD (ops_amd.py init sequence, reference runtime §5.1): /dev/kfd, GET_VERSION, topology,
 * target check, render node + ACQUIRE_VM, apertures, a memory-fault event, then a PM4 compute and an SDMA queue. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amd/amd_device.h"
#include "amd/amd_sdma_pkt.h"
#include "autogen/kfd.h"
#include "autogen/kfd_decode.h"

hcq_status amd_device_open_kfd(kif *k, int *fd) {
  hcq_status st = kif_open(k, "/dev/kfd", O_RDWR | O_CLOEXEC, fd);
  if (!st) return HCQ_OK;
  int e = kif_status_errno(st);
  if (e == ENOENT || e == ENODEV || e == ENXIO)
    return hcq_status_annotate(st, "amd: no /dev/kfd: the amdgpu kernel driver is not loaded (modprobe amdgpu) or "
                                   "this machine has no AMD GPU (HCQ_MOCK=amd runs the emulated one)");
  if (e == EACCES || e == EPERM)
    return hcq_status_annotate(st, "amd: permission denied on /dev/kfd: add the user to the groups render and video "
                                   "(sudo usermod -aG render,video $USER, then log in again) or add a udev rule giving "
                                   "the render group access to /dev/kfd");
  return hcq_status_annotate(st, "amd: opening /dev/kfd");
}

static hcq_status find_apertures(amd_device *d) {
  struct amd_kfd_ioctl_get_process_apertures_new_args a = {0};
  HCQ_TRY(kif_ioctl(d->k, d->kfd_fd, AMD_KFD_IOC_GET_PROCESS_APERTURES_NEW, &a)); /* 0 nodes: asks for the count */
  if (!a.num_of_nodes || a.num_of_nodes > AMD_MAX_GPUS * 2)
    return hcq_status_make(HCQ_CODE_IO, "amd %s: KFD reports %u nodes with apertures", d->name, a.num_of_nodes);
  struct amd_kfd_process_device_apertures *ap = calloc(a.num_of_nodes, sizeof *ap);
  if (!ap) return hcq_status_make(HCQ_CODE_NOMEM, "amd: out of memory");
  a.kfd_process_device_apertures_ptr = (uintptr_t)ap;
  hcq_status st = kif_ioctl(d->k, d->kfd_fd, AMD_KFD_IOC_GET_PROCESS_APERTURES_NEW, &a);
  bool found = false;
  for (uint32_t i = 0; !st && i < a.num_of_nodes; i++)
    if (ap[i].gpu_id == d->node.gpu_id) {
      d->gpuvm_base = ap[i].gpuvm_base;
      d->gpuvm_limit = ap[i].gpuvm_limit;
      found = true;
    }
  free(ap);
  if (!st && (!found || d->gpuvm_limit <= d->gpuvm_base))
    st = hcq_status_make(HCQ_CODE_IO, "amd %s: no GPUVM aperture for gpu_id 0x%x", d->name, d->node.gpu_id);
  return st;
}

void amd_device_close(amd_device *d) {
  if (!d) return;
  amd_ring_destroy(d, &d->copy);
  amd_ring_destroy(d, &d->compute);
  if (d->doorbell_page) hcq_status_free(kif_munmap(d->k, d->doorbell_page, 0x2000));
  if (d->fault_event_id) {
    struct amd_kfd_ioctl_destroy_event_args e = {.event_id = d->fault_event_id};
    hcq_status_free(kif_ioctl(d->k, d->kfd_fd, AMD_KFD_IOC_DESTROY_EVENT, &e));
  }
  if (d->drm_fd >= 0) hcq_status_free(kif_close(d->k, d->drm_fd));
  if (d->kfd_fd >= 0) hcq_status_free(kif_close(d->k, d->kfd_fd));
  free(d);
}

#define STEP(call, ...)                                                   \
  do {                                                                    \
    hcq_status st_ = (call);                                              \
    if (st_) return hcq_status_annotate(st_, __VA_ARGS__);                \
  } while (0)

static hcq_status device_init(amd_device *d, unsigned index, const amd_device_options *o) {
  HCQ_TRY(kif_register_decoder(d->k, &kfd_ioctl_table)); /* HCQ_TRACE=1 shows the KFD structs decoded */
  HCQ_TRY(amd_device_open_kfd(d->k, &d->kfd_fd));
  struct amd_kfd_ioctl_get_version_args v = {0};
  STEP(kif_ioctl(d->k, d->kfd_fd, AMD_KFD_IOC_GET_VERSION, &v), "amd: asking KFD for its interface version");
  d->kfd_major = v.major_version, d->kfd_minor = v.minor_version;
  if (v.major_version != AMD_KFD_IOCTL_MAJOR_VERSION)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "amd: KFD interface %u.%u, hcq speaks major version %u",
                           v.major_version, v.minor_version, AMD_KFD_IOCTL_MAJOR_VERSION);
  amd_node nodes[AMD_MAX_GPUS];
  unsigned count = 0;
  STEP(amd_topology_list(d->k, nodes, AMD_MAX_GPUS, &count), "amd: discovering GPUs in the KFD topology");
  if (index >= count) return hcq_status_make(HCQ_CODE_NOT_FOUND, "amd: GPU %u requested, KFD lists %u", index, count);
  d->node = nodes[index];
  amd_arch_name(d->node.gfx_target_version, d->name, sizeof d->name);
  HCQ_TRY(amd_arch_find(d->node.gfx_target_version, &d->arch));
  d->sdma_max_copy_B = amd_sdma_max_copy_B(d->node.sdma_version[0]);
  char path[64];
  snprintf(path, sizeof path, "/dev/dri/renderD%u", d->node.drm_render_minor);
  hcq_status st = kif_open(d->k, path, O_RDWR | O_CLOEXEC, &d->drm_fd);
  if (st) return hcq_status_annotate(st, "amd %s: opening its render node", d->name);
  struct amd_kfd_ioctl_acquire_vm_args vm = {.drm_fd = (uint32_t)d->drm_fd, .gpu_id = d->node.gpu_id};
  STEP(kif_ioctl(d->k, d->kfd_fd, AMD_KFD_IOC_ACQUIRE_VM, &vm), "amd %s: acquiring the GPU VM", d->name);
  STEP(find_apertures(d), "amd %s: reading the GPUVM aperture", d->name);
  struct amd_kfd_ioctl_create_event_args ev = {.event_type = AMD_KFD_IOC_EVENT_MEMORY, .node_id = d->node.node};
  STEP(kif_ioctl(d->k, d->kfd_fd, AMD_KFD_IOC_CREATE_EVENT, &ev), "amd %s: creating the memory-fault event", d->name);
  d->fault_event_id = ev.event_id;
  HCQ_TRY(amd_ring_create(d, false, o->compute_ring_B ? o->compute_ring_B : 1u << 20, &d->compute));
  return amd_ring_create(d, true, o->copy_ring_B ? o->copy_ring_B : 1u << 20, &d->copy);
}

hcq_status amd_device_open(kif *k, unsigned index, const amd_device_options *opts, amd_device **out) {
  *out = NULL;
  amd_device *d = calloc(1, sizeof *d);
  if (!d) return hcq_status_make(HCQ_CODE_NOMEM, "amd: out of memory");
  d->k = k;
  d->kfd_fd = d->drm_fd = -1;
  amd_device_options o = opts ? *opts : (amd_device_options){0};
  d->ring_wait_timeout_ms = o.ring_wait_timeout_ms ? o.ring_wait_timeout_ms : 10000;
  hcq_status st = device_init(d, index, &o);
  if (st) {
    amd_device_close(d);
    return st;
  }
  *out = d;
  return HCQ_OK;
}
