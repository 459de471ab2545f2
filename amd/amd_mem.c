/* GPU memory over KFD (ops_amd.py KFDIface.alloc/free): reserve a VA, ALLOC_MEMORY_OF_GPU, mmap the BO MAP_FIXED
 * at that VA on the render node (CPU VA == GPU VA), MAP_MEMORY_TO_GPU. Free undoes it in the reverse order, so the
 * address range returns to the process. Every failure undoes what was done before it. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>

#include "amd/amd_device.h"
#include "autogen/kfd.h"

#define PAGE_B 4096ull

/* Flags as ops_amd.py chooses them: every BO writable, executable and never substituted; uncached means coherent
 * uncached GTT; CPU-visible adds PUBLIC. */
static uint32_t kind_flags(amd_mem_kind kind) {
  uint32_t f = AMD_KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | AMD_KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE |
               AMD_KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE;
  switch (kind) {
  case AMD_MEM_VRAM: return f | AMD_KFD_IOC_ALLOC_MEM_FLAGS_VRAM;
  case AMD_MEM_VRAM_HOST: return f | AMD_KFD_IOC_ALLOC_MEM_FLAGS_VRAM | AMD_KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC;
  case AMD_MEM_GTT_UNCACHED:
    return f | AMD_KFD_IOC_ALLOC_MEM_FLAGS_GTT | AMD_KFD_IOC_ALLOC_MEM_FLAGS_COHERENT |
           AMD_KFD_IOC_ALLOC_MEM_FLAGS_UNCACHED | AMD_KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC;
  case AMD_MEM_USERPTR: return f | AMD_KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | AMD_KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC;
  }
  return f;
}

static const char *kind_name(amd_mem_kind k) {
  static const char *const n[] = {"VRAM", "CPU-visible VRAM", "uncached GTT", "userptr"};
  return (unsigned)k < 4 ? n[k] : "?";
}

static hcq_status alloc_error(amd_device *d, hcq_status st, uint64_t size_B, amd_mem_kind kind) {
  int e = kif_status_errno(st);
  if (e == ENOMEM)
    return hcq_status_annotate(st, "amd %s: out of GPU memory allocating %" PRIu64 " bytes of %s (VRAM %" PRIu64 " bytes)",
                               d->name, size_B, kind_name(kind), d->node.vram_size_B);
  if (e == EINVAL && kind == AMD_MEM_VRAM_HOST)
    return hcq_status_annotate(st, "amd %s: CPU-visible VRAM refused: enable resizable BAR (Above 4G decoding) in "
                                   "the firmware setup", d->name);
  return hcq_status_annotate(st, "amd %s: allocating %" PRIu64 " bytes of %s", d->name, size_B, kind_name(kind));
}

hcq_status amd_mem_alloc(amd_device *d, uint64_t size_B, amd_mem_kind kind, void *host_ptr, amd_buf *out) {
  memset(out, 0, sizeof *out);
  if (!size_B) return hcq_status_make(HCQ_CODE_INVALID, "amd %s: allocation of 0 bytes", d->name);
  if (size_B > UINT64_MAX - PAGE_B) return hcq_status_make(HCQ_CODE_INVALID, "amd %s: size %" PRIu64 " too large", d->name, size_B);
  uint64_t size = (size_B + PAGE_B - 1) & ~(PAGE_B - 1);
  bool userptr = kind == AMD_MEM_USERPTR;
  if (host_ptr && (!userptr || ((uintptr_t)host_ptr & (PAGE_B - 1))))
    return hcq_status_make(HCQ_CODE_INVALID, "amd %s: host_ptr %p must be page aligned and only for userptr", d->name, host_ptr);
  void *va = host_ptr;
  bool own = false;
  if (!va) { /* userptr: fresh shared anonymous pages; else a PROT_NONE reservation the BO is mapped over */
    int prot = userptr ? PROT_READ | PROT_WRITE : PROT_NONE;
    int flags = userptr ? MAP_SHARED | MAP_ANONYMOUS : MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
    HCQ_TRY(kif_mmap(d->k, NULL, size, prot, flags, -1, 0, &va));
    own = true;
  }
  uint64_t v = (uint64_t)(uintptr_t)va;
  hcq_status st = HCQ_OK;
  if (v < d->gpuvm_base || v + size - 1 > d->gpuvm_limit)
    st = hcq_status_make(HCQ_CODE_INVALID, "amd %s: VA 0x%" PRIx64 "+0x%" PRIx64 " is outside the GPUVM aperture 0x%" PRIx64
                         "..0x%" PRIx64, d->name, v, size, d->gpuvm_base, d->gpuvm_limit);
  struct amd_kfd_ioctl_alloc_memory_of_gpu_args a = {.va_addr = v, .size = size, .gpu_id = d->node.gpu_id,
                                                     .flags = kind_flags(kind), .mmap_offset = userptr ? v : 0};
  if (!st) {
    st = kif_ioctl(d->k, d->kfd_fd, AMD_KFD_IOC_ALLOC_MEMORY_OF_GPU, &a);
    if (st) st = alloc_error(d, st, size, kind);
  }
  bool allocated = !st, mapped_cpu = false;
  if (!st && !userptr) {
    void *p = NULL;
    st = kif_mmap(d->k, va, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, d->drm_fd, a.mmap_offset, &p);
    if (!st && p != va) st = hcq_status_make(HCQ_CODE_IO, "amd %s: BO mapped at %p, not at its VA %p", d->name, p, va);
    mapped_cpu = !st;
  }
  if (!st) {
    uint32_t ids[1] = {d->node.gpu_id};
    struct amd_kfd_ioctl_map_memory_to_gpu_args mp = {.handle = a.handle, .device_ids_array_ptr = (uintptr_t)ids,
                                                      .n_devices = 1};
    st = kif_ioctl(d->k, d->kfd_fd, AMD_KFD_IOC_MAP_MEMORY_TO_GPU, &mp);
    if (!st && mp.n_success != 1)
      st = hcq_status_make(HCQ_CODE_IO, "amd %s: MAP_MEMORY_TO_GPU mapped on %u of 1 GPUs", d->name, mp.n_success);
  }
  if (!st) {
    *out = (amd_buf){.va = v, .size_B = size, .handle = a.handle, .kind = kind, .own_host = own && userptr};
    return HCQ_OK;
  }
  /* Undo in reverse; keep the first error. */
  if (mapped_cpu) hcq_status_free(kif_munmap(d->k, va, size));
  if (allocated) {
    struct amd_kfd_ioctl_free_memory_of_gpu_args f = {.handle = a.handle};
    hcq_status_free(kif_ioctl(d->k, d->kfd_fd, AMD_KFD_IOC_FREE_MEMORY_OF_GPU, &f));
  }
  if (own && !mapped_cpu) hcq_status_free(kif_munmap(d->k, va, size)); /* else the BO mapping replaced it */
  return st;
}

hcq_status amd_mem_free(amd_device *d, amd_buf *b) {
  if (!b->handle) return HCQ_OK;
  uint32_t ids[1] = {d->node.gpu_id};
  struct amd_kfd_ioctl_unmap_memory_from_gpu_args u = {.handle = b->handle, .device_ids_array_ptr = (uintptr_t)ids,
                                                       .n_devices = 1};
  hcq_status st = kif_ioctl(d->k, d->kfd_fd, AMD_KFD_IOC_UNMAP_MEMORY_FROM_GPU, &u);
  /* The CPU mapping goes either way: for BOs it is the render-node mapping, for own userptr the anonymous pages. */
  hcq_status st2 = (b->kind != AMD_MEM_USERPTR || b->own_host) ? kif_munmap(d->k, (void *)(uintptr_t)b->va, b->size_B)
                                                               : HCQ_OK;
  struct amd_kfd_ioctl_free_memory_of_gpu_args f = {.handle = b->handle};
  hcq_status st3 = kif_ioctl(d->k, d->kfd_fd, AMD_KFD_IOC_FREE_MEMORY_OF_GPU, &f);
  memset(b, 0, sizeof *b);
  if (!st) st = st2; else hcq_status_free(st2);
  if (!st) st = st3; else hcq_status_free(st3);
  return st ? hcq_status_annotate(st, "amd %s: freeing GPU memory", d->name) : HCQ_OK;
}
