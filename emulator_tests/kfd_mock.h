/* The emulated AMD KFD driver and GPU ("amd mock"), behind kernel_iface. It claims /dev/kfd, /dev/dri/renderD*,
 * /sys/devices/virtual/kfd and /sys/class/drm, answers the KFD ioctls with the real structs (autogen/kfd.h) and the
 * error codes of linux 6.1 drivers/gpu/drm/amd/amdkfd/kfd_chardev.c, backs every allocation with host memory at the
 * same VA, and runs the PM4 (compute) and SDMA (copy) rings the driver writes on a worker thread woken by the
 * doorbell. Every address a packet touches is checked against the live allocations mapped to that GPU; a miss is
 * a page fault naming the packet, its ring offset and the address, reported through KFD's memory-exception events.
 *
 * Kernels are not executed here: DISPATCH_DIRECT collects the dispatch state (kfd_mock_dispatch) and calls the
 * hook installed with kfd_mock_set_dispatch_hook (the RDNA3 interpreter, or a test's checker). */
#ifndef HCQ_KFD_MOCK_H
#define HCQ_KFD_MOCK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/status.h"
#include "kernel_iface/kif.h"

typedef struct kfd_mock kfd_mock;

#define KFD_MOCK_MAX_GPUS 8

typedef struct kfd_mock_config {
  const char *arch;        /* "gfx1100" (default), "gfx90a", "gfx942", "gfx1201" */
  unsigned gpu_count;      /* 1..KFD_MOCK_MAX_GPUS (0 = 1) */
  uint64_t vram_size_B;    /* per GPU; 0 = 1 GiB. Allocations beyond it fail with ENOMEM like amdgpu. */
  bool small_bar;          /* host-visible VRAM refused with EINVAL (kfd_chardev.c: "small bar") */
  uint32_t wait_timeout_ms; /* a ring wait unsatisfied this long hangs the queue; 0 = 2000 */
} kfd_mock_config;

/* Config from the environment: HCQ_MOCK_AMD_ARCH, HCQ_MOCK_AMD_GPUS. Unknown values are an error. */
hcq_status kfd_mock_config_from_env(kfd_mock_config *out);

hcq_status kfd_mock_create(const kfd_mock_config *cfg, kfd_mock **out);
/* Claim the mock's paths on `k`. A mock serves one context at a time. */
hcq_status kfd_mock_attach(kfd_mock *m, kif *k);
/* Unregister from the context (fails while files of the mock are still open there). */
hcq_status kfd_mock_detach(kfd_mock *m);
/* Stops the worker, unregisters, frees host memory still allocated. NULL is a no-op. */
void kfd_mock_destroy(kfd_mock *m);

/* The state DISPATCH_DIRECT hands to the kernel executor (register values as the driver wrote them). */
typedef struct kfd_mock_dispatch {
  unsigned gpu;              /* index 0.. */
  uint64_t pgm_addr;         /* (PGM_HI:PGM_LO) << 8 */
  uint32_t rsrc1, rsrc2, rsrc3;
  uint32_t user_data[16];
  uint32_t num_thread[3];    /* workgroup size */
  uint32_t grid[3];          /* workgroup counts */
  uint32_t initiator;
  uint32_t tmpring_size;
  uint32_t resource_limits;
  uint64_t scratch_base;     /* (SCRATCH_BASE_HI:LO) << 8 */
} kfd_mock_dispatch;

/* Returns 0, or non-zero with `detail` (< 160 bytes) filled: the queue faults with that text. */
typedef int (*kfd_mock_dispatch_fn)(void *user, kfd_mock *m, const kfd_mock_dispatch *d, char *detail);
void kfd_mock_set_dispatch_hook(kfd_mock *m, kfd_mock_dispatch_fn fn, void *user);

/* Print every decoded PM4/SDMA packet to `out` (NULL = off), one line each: "amd-mock pm4 gpuG qQ @OFFSET op=0xOP
 * n=BODY: words..." or "amd-mock sdma gpuG qQ @BYTE op=OP sub=SUB: words...". HCQ_TRACE=1 (not "0") at create
 * time sets stderr, beside kif's ioctl trace. */
void kfd_mock_trace_set_output(kfd_mock *m, FILE *out);

/* For executors: is [va, va+size_B) inside one live allocation mapped to GPU `gpu`? Callable from the hook. */
bool kfd_mock_range_ok(kfd_mock *m, unsigned gpu, uint64_t va, uint64_t size_B);
/* Bytes from va to the end of the live allocation holding it (0 if none): how much code an executor may decode
 * from a program address (the reference's mock uses "the rest of the mapped range"). Callable from the hook. */
uint64_t kfd_mock_bytes_after(kfd_mock *m, unsigned gpu, uint64_t va);

/* The first fault or hang the mock reported (page fault, bad packet, wait timeout), with the queue state; NULL if
 * none. Valid until kfd_mock_destroy. */
const char *kfd_mock_last_error(kfd_mock *m);
/* Live allocations (for leak checks in tests). */
unsigned kfd_mock_live_allocations(kfd_mock *m);
/* Packets executed so far (all queues). */
uint64_t kfd_mock_packets_executed(kfd_mock *m);
/* Block until every queue is idle (rptr == wptr) or blocked; returns false after timeout_ms. */
bool kfd_mock_idle(kfd_mock *m, uint32_t timeout_ms);

#endif
