/* The AMD driver over KFD: discovery, memory and queues (the init sequence of tinygrad/runtime/ops_amd.py
 * @ 8006595cde, KFDIface). Every OS call goes through kernel_iface, so the same code runs on /dev/kfd or on the
 * emulated KFD in emulator_tests/. Units: sizes in bytes (_B); PM4 ring positions in dwords, SDMA in bytes. */
#ifndef HCQ_AMD_DEVICE_H
#define HCQ_AMD_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include "amd/amd_arch.h"
#include "base/status.h"
#include "kernel_iface/kif.h"

#define AMD_TOPOLOGY_NODES "/sys/devices/virtual/kfd/kfd/topology/nodes"
#define AMD_MAX_GPUS 64

/* One GPU node of the KFD topology (nodes/N/properties and friends). */
typedef struct amd_node {
  unsigned node;          /* topology node number */
  uint32_t gpu_id;
  uint32_t gfx_target_version;
  uint32_t simd_count, simd_per_cu, max_waves_per_simd, array_count, simd_arrays_per_engine, max_slots_scratch_cu;
  uint32_t lds_size_in_kb, num_xcc, drm_render_minor;
  uint64_t vram_size_B;   /* sum of mem_banks heap_type 1/2 (FB) size_in_bytes */
  unsigned gc_version[3], sdma_version[3], nbio_version[3];
  uint32_t gc_base[6];    /* GC IP segment bases from ip_discovery (hw id 11) */
  uint32_t nbio_base[6];  /* NBIO (NBIF, hw id 108) segment bases: the HDP flush registers (amd_nbio.h) */
} amd_node;

/* List the GPU nodes (gpu_id != 0), sorted by node number. Errors name the file and key. */
hcq_status amd_topology_list(kif *k, amd_node *out, unsigned cap, unsigned *out_count);
/* Parse one properties text ("key value" lines) into *n; missing required keys are an error naming `path`. */
hcq_status amd_topology_parse_properties(const char *text, const char *path, amd_node *n);

typedef enum amd_mem_kind {
  AMD_MEM_VRAM,          /* device-local, not CPU-visible (still mmapped, as KFD requires for the VA) */
  AMD_MEM_VRAM_HOST,     /* CPU-visible VRAM (needs a large BAR) */
  AMD_MEM_GTT_UNCACHED,  /* system memory, uncached, CPU-visible: rings, signals, pointers */
  AMD_MEM_USERPTR,       /* existing host memory registered at its own address */
} amd_mem_kind;

typedef struct amd_buf {
  uint64_t va, size_B, handle;
  amd_mem_kind kind;
  bool own_host; /* userptr memory the driver mmapped itself */
} amd_buf;

typedef struct amd_device amd_device;

typedef struct amd_ring {
  bool sdma;
  uint32_t queue_id;
  amd_buf ring, gart, eop, cwsr;
  volatile uint32_t *words;
  uint32_t size_B;
  volatile uint64_t *rptr, *wptr;
  volatile uint64_t *doorbell;
  uint64_t put; /* PM4: dwords; SDMA: bytes */
} amd_ring;

struct amd_device {
  kif *k;
  int kfd_fd, drm_fd;
  uint32_t kfd_major, kfd_minor; /* GET_VERSION at run time */
  amd_node node;
  const amd_arch *arch;
  char name[16];
  uint64_t gpuvm_base, gpuvm_limit;
  void *doorbell_page;
  uint64_t doorbell_base;
  uint32_t fault_event_id;
  uint64_t sdma_max_copy_B; /* count field limit of the SDMA version (+1) */
  uint32_t ring_wait_timeout_ms;
  amd_ring compute, copy;
};

typedef struct amd_device_options {
  uint32_t compute_ring_B, copy_ring_B; /* powers of 2; 0 = 1 MiB each (the reference uses 16 MiB) */
  uint32_t ring_wait_timeout_ms;        /* how long a submit waits for ring space; 0 = 10000 */
} amd_device_options;

/* Open GPU number `index` (0-based among GPU nodes). Clear errors: no /dev/kfd, permission (group render/video),
 * KFD major version, unsupported gfx target. */
hcq_status amd_device_open(kif *k, unsigned index, const amd_device_options *opts, amd_device **out);
/* Open /dev/kfd; a missing driver or a permission error says what to do. */
hcq_status amd_device_open_kfd(kif *k, int *fd);
/* Destroys the queues, frees every driver buffer, closes the files. NULL is a no-op. */
void amd_device_close(amd_device *d);

hcq_status amd_mem_alloc(amd_device *d, uint64_t size_B, amd_mem_kind kind, void *host_ptr, amd_buf *out);
/* Unmap from the GPU, release the CPU mapping (the VA returns to the process), free. A zeroed buf is a no-op. */
hcq_status amd_mem_free(amd_device *d, amd_buf *b);

hcq_status amd_ring_create(amd_device *d, bool sdma, uint32_t size_B, amd_ring *out);
void amd_ring_destroy(amd_device *d, amd_ring *r);
/* Append whole packets and ring the doorbell. Waits (up to the device's timeout) while the GPU has not consumed the
 * space; SDMA packets never straddle the ring end (the tail is filled with NOPs). `sizes` lists each packet's
 * dword count (SDMA only; NULL for PM4, which may wrap). */
hcq_status amd_ring_submit(amd_device *d, amd_ring *r, const uint32_t *words, uint32_t n_dw, const uint32_t *sizes,
                           uint32_t n_packets);
/* After a fault stopped a PM4 queue: destroy it, create it again (same size, new ring, EOP and CWSR areas) and
 * resubmit the words from ring position `from` (dwords) to put, i.e. what was queued behind the faulting packets.
 * On an error the ring may be gone (the device must be reopened). */
hcq_status amd_ring_restart(amd_device *d, amd_ring *r, uint64_t from, uint32_t *out_resubmitted_dw);

#endif
