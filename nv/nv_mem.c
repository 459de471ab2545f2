/* nv/: GPU virtual addresses and memory. CPU and GPU share each address (UVM external ranges at the VA the CPU
 * mapping uses). Two bump windows, never reused: a low one below 2^40 for CPU-visible memory (GPFIFO entries
 * and QMDs must sit below 2^40) and a high one for the rest. Both are reserved PROT_NONE at open so nothing else
 * lands there; where the usual windows are taken (ASan: its shadow gap covers 0x1000000000, its allocator
 * 0x600000000000) fallbacks are used.
 * Page size: 4 KiB for host/uncached/small, 2 MiB for device allocations of 8 MiB and more (reference 6.3). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "nv/nv_internal.h"

static const nv_va_window nv_low_windows[] = {{0x1000000000ull, 0x1000000000ull, 0}, {0x40000000ull, 0x3f000000ull, 0}};
static const nv_va_window nv_high_windows[] = {{0x2000000000ull, 0x10000000000ull, 0},
                                                {0x520000000000ull, 0x10000000000ull, 0}};

/* HCQ_NV_VA_WINDOW_B caps the size of each window (1 MiB .. 1 TiB): reserving terabytes of address space is free
 * on Linux but takes minutes under qemu-user, which tracks every guest page (the qemu test legs set 1 GiB). */
static hcq_status nv_window_cap(uint64_t *out_B) {
  const char *env = getenv("HCQ_NV_VA_WINDOW_B");
  *out_B = UINT64_MAX;
  if (!env || !*env) return HCQ_OK;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(env, &end, 0);
  if (errno || *end || env[0] == '-' || v < (1ull << 20) || v > (1ull << 40) || v % 4096)
    return hcq_status_make(HCQ_CODE_INVALID, "HCQ_NV_VA_WINDOW_B=%s: want a multiple of 4096 from 1 MiB to 1 TiB", env);
  *out_B = v;
  return HCQ_OK;
}

/* Reserves the first free window of `choices`; the error names every address tried and the last failure. */
static hcq_status nv_reserve_one(nv_dev *d, const nv_va_window *choices, size_t n, nv_va_window *out, bool *done,
                                 const char *what) {
  uint64_t cap_B;
  HCQ_TRY(nv_window_cap(&cap_B));
  hcq_status last = HCQ_OK;
  for (size_t i = 0; i < n; i++) {
    void *p = NULL;
    nv_va_window w = choices[i];
    if (w.size_B > cap_B) w.size_B = cap_B;
    hcq_status_free(last);
    last = kif_mmap(d->k, (void *)(uintptr_t)w.base, w.size_B, PROT_NONE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0, &p);
    if (!last && p == (void *)(uintptr_t)w.base) {
      *out = w;
      out->next = out->base;
      *done = true;
      return HCQ_OK;
    }
    if (!last) { /* an old kernel took the address as a hint */
      hcq_status_free(kif_munmap(d->k, p, w.size_B));
      last = hcq_status_make(HCQ_CODE_NOMEM, "placed at %p instead", p);
    }
  }
  return hcq_status_annotate(last, "NV: cannot reserve the %s GPU VA window (tried 0x%llx and 0x%llx)", what,
                             (unsigned long long)choices[0].base, (unsigned long long)choices[n - 1].base);
}

static hcq_status nv_va_alloc(nv_va_window *w, uint64_t size_B, uint64_t align_B, uint64_t *out) {
  uint64_t va = (w->next + align_B - 1) & ~(align_B - 1);
  if (va + size_B < va || va + size_B > w->base + w->size_B)
    return hcq_status_make(HCQ_CODE_NOMEM, "NV: GPU VA window 0x%llx.. full (0x%llx bytes wanted)",
                           (unsigned long long)w->base, (unsigned long long)size_B);
  w->next = va + size_B;
  *out = va;
  return HCQ_OK;
}

/* One pair of windows for the process, shared by every open GPU (as the reference shares one address space): a
 * second device does not need a second 1 GiB hole below 2^40 (under ASan there is room for one only). */
static struct {
  pthread_mutex_t lock;
  nv_va_window low, high;
  bool low_reserved, high_reserved;
  int users;
} nv_va = {.lock = PTHREAD_MUTEX_INITIALIZER};

hcq_status nv_va_reserve(nv_dev *d) {
  pthread_mutex_lock(&nv_va.lock);
  hcq_status st = HCQ_OK;
  if (!nv_va.users) {
    st = nv_reserve_one(d, nv_low_windows, 2, &nv_va.low, &nv_va.low_reserved, "low (below 2^40)");
    if (!st) st = nv_reserve_one(d, nv_high_windows, 2, &nv_va.high, &nv_va.high_reserved, "high");
  }
  if (!st) nv_va.users++, d->low = &nv_va.low, d->high = &nv_va.high;
  else if (!nv_va.users) {
    if (nv_va.low_reserved) hcq_status_free(kif_munmap(d->k, (void *)(uintptr_t)nv_va.low.base, nv_va.low.size_B));
    nv_va.low_reserved = false;
  }
  pthread_mutex_unlock(&nv_va.lock);
  return st;
}

hcq_status nv_va_low_range(nv_dev *d, uint64_t size_B, uint64_t *out_va) {
  pthread_mutex_lock(&nv_va.lock);
  hcq_status st = nv_va_alloc(d->low, size_B, 0x1000, out_va);
  pthread_mutex_unlock(&nv_va.lock);
  return st;
}

void nv_va_release(nv_dev *d) {
  if (!d->low) return;
  pthread_mutex_lock(&nv_va.lock);
  if (--nv_va.users == 0) {
    if (nv_va.low_reserved) hcq_status_free(kif_munmap(d->k, (void *)(uintptr_t)nv_va.low.base, nv_va.low.size_B));
    if (nv_va.high_reserved) hcq_status_free(kif_munmap(d->k, (void *)(uintptr_t)nv_va.high.base, nv_va.high.size_B));
    nv_va.low_reserved = nv_va.high_reserved = false;
  }
  pthread_mutex_unlock(&nv_va.lock);
  d->low = d->high = NULL;
}


/* UVM: make [va, va+size) a GPU range and map RM memory `handle` into it. */
static hcq_status nv_uvm_map(nv_dev *d, uint64_t va, uint64_t size_B, uint32_t handle) {
  UVM_CREATE_EXTERNAL_RANGE_PARAMS r = {.base = va, .length = size_B};
  HCQ_TRY(nv_uvm(d, d->fd_uvm, UVM_CREATE_EXTERNAL_RANGE, &r, &r.rmStatus, "UVM_CREATE_EXTERNAL_RANGE"));
  static _Thread_local UVM_MAP_EXTERNAL_ALLOCATION_PARAMS m; /* 9 KiB: not on the stack */
  memset(&m, 0, sizeof m);
  m.base = va, m.length = size_B, m.gpuAttributesCount = 1, m.rmCtrlFd = d->fd_ctl, m.hClient = d->root;
  m.hMemory = handle;
  memcpy(m.perGpuAttributes[0].gpuUuid.uuid, d->uuid, 16);
  m.perGpuAttributes[0].gpuMappingType = 1; /* UvmGpuMappingTypeReadWriteAtomic */
  return nv_uvm(d, d->fd_uvm, UVM_MAP_EXTERNAL_ALLOCATION, &m, &m.rmStatus, "UVM_MAP_EXTERNAL_ALLOCATION");
}

hcq_status nv_uvm_free(nv_dev *d, uint64_t va, uint64_t size_B) {
  /* 590 removed `length`: both layouts start with base */
  union { UVM_FREE_PARAMS_r570 a; UVM_FREE_PARAMS_r590 b; } u;
  memset(&u, 0, sizeof u);
  bool r590 = d->layout->UVM_FREE_PARAMS_size_B == sizeof(UVM_FREE_PARAMS_r590);
  if (r590) u.b.base = va;
  else u.a.base = va, u.a.length = size_B;
  return nv_uvm(d, d->fd_uvm, UVM_FREE, &u, r590 ? &u.b.rmStatus : &u.a.rmStatus, "UVM_FREE");
}

#define NV_BITS(name, v) ((uint32_t)(v) << name##_SHIFT)

/* Client-chosen handles for OS-descriptor memory: RM needs them unique per client only, but they are drawn from one
 * process-wide counter so that several open GPUs never repeat one (the mock keeps one handle namespace). */
static uint32_t nv_next_host_handle(void) {
  static uint32_t next = 0x1000;
  return __atomic_add_fetch(&next, 1, __ATOMIC_RELAXED);
}

static hcq_status nv_alloc_host(nv_dev *d, nv_mem *out) {
  void *p;
  HCQ_TRY(kif_mmap(d->k, (void *)(uintptr_t)out->va, out->size_B, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0, &p));
  nv_ioctl_nvos02_parameters_with_fd a = {
      .params = {.hRoot = d->root, .hObjectParent = d->device, .hObjectNew = nv_next_host_handle(),
                 .hClass = NV01_MEMORY_SYSTEM_OS_DESCRIPTOR,
                 .flags = NV_BITS(NVOS02_FLAGS_PHYSICALITY, NVOS02_FLAGS_PHYSICALITY_NONCONTIGUOUS) |
                          NV_BITS(NVOS02_FLAGS_COHERENCY, NVOS02_FLAGS_COHERENCY_CACHED) |
                          NV_BITS(NVOS02_FLAGS_MAPPING, NVOS02_FLAGS_MAPPING_NO_MAP),
                 .pMemory = out->va, .limit = out->size_B - 1},
      .fd = -1};
  hcq_status st = kif_ioctl(d->k, d->fd_gpu, NV_ESC_RM_ALLOC_MEMORY, &a);
  if (st) st = hcq_status_annotate(st, "NV RM_ALLOC_MEMORY of host memory at 0x%llx", (unsigned long long)out->va);
  else if (a.params.status)
    st = nv_rm_status(a.params.status, "NV RM_ALLOC_MEMORY of host memory at 0x%llx", (unsigned long long)out->va);
  if (st) {
    hcq_status_free(kif_munmap(d->k, p, out->size_B));
    return st;
  }
  out->handle = a.params.hObjectNew;
  out->cpu = p;
  return HCQ_OK;
}

static hcq_status nv_alloc_device(nv_dev *d, nv_mem *out, uint64_t page_B) {
  bool unc = out->kind & NV_MEM_UNCACHED;
  NV_MEMORY_ALLOCATION_PARAMS a = {0};
  a.owner = d->root;
  a.type = unc ? NVOS32_TYPE_NOTIFIER : NVOS32_TYPE_IMAGE;
  a.flags = NVOS32_ALLOC_FLAGS_MAP_NOT_REQUIRED | NVOS32_ALLOC_FLAGS_MEMORY_HANDLE_PROVIDED |
            NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE | NVOS32_ALLOC_FLAGS_IGNORE_BANK_PLACEMENT |
            (unc ? 0 : NVOS32_ALLOC_FLAGS_PERSISTENT_VIDMEM);
  a.attr = NV_BITS(NVOS32_ATTR_PHYSICALITY, out->kind & NV_MEM_CONTIG ? NVOS32_ATTR_PHYSICALITY_CONTIGUOUS
                                                                       : NVOS32_ATTR_PHYSICALITY_ALLOW_NONCONTIGUOUS) |
           NV_BITS(NVOS32_ATTR_PAGE_SIZE, page_B > 4096 ? NVOS32_ATTR_PAGE_SIZE_HUGE : NVOS32_ATTR_PAGE_SIZE_DEFAULT) |
           NV_BITS(NVOS32_ATTR_LOCATION, unc ? NVOS32_ATTR_LOCATION_PCI : NVOS32_ATTR_LOCATION_VIDMEM);
  a.attr2 = NV_BITS(NVOS32_ATTR2_GPU_CACHEABLE, unc ? NVOS32_ATTR2_GPU_CACHEABLE_NO : NVOS32_ATTR2_GPU_CACHEABLE_YES) |
            NV_BITS(NVOS32_ATTR2_PAGE_SIZE_HUGE, page_B > 4096 ? NVOS32_ATTR2_PAGE_SIZE_HUGE_2MB : 0) |
            NV_BITS(NVOS32_ATTR2_ZBC, NVOS32_ATTR2_ZBC_PREFER_NO_ZBC);
  a.format = 6; /* the reference's value (a pitch kind); not a named constant in the public headers we read */
  a.size = out->size_B, a.alignment = page_B, a.offset = 0, a.limit = out->size_B - 1;
  HCQ_TRY(nv_rm_alloc(d, d->device, unc ? NV01_MEMORY_SYSTEM : NV01_MEMORY_LOCAL_USER, &a, sizeof a, &out->handle,
                      "memory"));
  if (!(out->kind & NV_MEM_CPU)) return HCQ_OK;
  uint32_t flags = NV_BITS(NVOS33_FLAGS_MAPPING, NVOS33_FLAGS_MAPPING_REFLECTED) | NV_BITS(NVOS33_FLAGS_MAP_FIXED, 1) |
                   NV_BITS(NVOS33_FLAGS_RESERVE_ON_UNMAP, 1) |
                   NV_BITS(NVOS33_FLAGS_CACHING_TYPE, NVOS33_FLAGS_CACHING_TYPE_WRITECOMBINED);
  hcq_status st = nv_map_to_cpu(d, out->handle, out->size_B, out->va, flags, unc, &out->cpu);
  if (st) hcq_status_free(nv_rm_free(d, d->device, out->handle));
  return st;
}

hcq_status nv_mem_alloc(nv_dev *d, uint64_t size_B, unsigned kind, nv_mem *out) {
  memset(out, 0, sizeof *out);
  if (!size_B || size_B > (1ull << 40)) return hcq_status_make(HCQ_CODE_INVALID, "nv_mem_alloc: size %llu bytes", (unsigned long long)size_B);
  if (kind & NV_MEM_HOST) kind |= NV_MEM_CPU;
  uint64_t page_B = (kind & (NV_MEM_HOST | NV_MEM_UNCACHED)) || size_B < (8u << 20) ? 4096 : (2u << 20);
  out->size_B = (size_B + page_B - 1) & ~(page_B - 1);
  out->kind = kind;
  pthread_mutex_lock(&nv_va.lock);
  hcq_status vs = nv_va_alloc(kind & NV_MEM_CPU ? d->low : d->high, out->size_B, page_B, &out->va);
  pthread_mutex_unlock(&nv_va.lock);
  HCQ_TRY(vs);
  hcq_status st = kind & NV_MEM_HOST ? nv_alloc_host(d, out) : nv_alloc_device(d, out, page_B);
  if (!st && (st = nv_uvm_map(d, out->va, out->size_B, out->handle))) hcq_status_free(nv_mem_free(d, out));
  if (st) memset(out, 0, sizeof *out);
  return hcq_status_annotate(st, "NV alloc of 0x%llx bytes (%s%s%s)", (unsigned long long)size_B,
                             kind & NV_MEM_HOST ? "host" : "device", kind & NV_MEM_CPU ? ", CPU-mapped" : "",
                             kind & NV_MEM_UNCACHED ? ", uncached" : "");
}

hcq_status nv_mem_free(nv_dev *d, nv_mem *m) {
  if (!m->handle) return HCQ_OK;
  hcq_status st = nv_rm_free(d, d->device, m->handle);
  hcq_status st2 = nv_uvm_free(d, m->va, m->size_B); /* no range yet (a failed alloc): NV_ERR_INVALID_ADDRESS */
  if (m->cpu) {
    hcq_status_free(kif_munmap(d->k, m->cpu, m->size_B));
    /* keep the window reserved: nothing else may land on GPU addresses */
    void *p;
    hcq_status_free(kif_mmap(d->k, m->cpu, m->size_B, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
                             -1, 0, &p));
  }
  memset(m, 0, sizeof *m);
  if (st) hcq_status_free(st2);
  return st ? st : st2;
}
