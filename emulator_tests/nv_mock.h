/* The emulated NVIDIA kernel driver (RM + UVM) and GPU behind kernel_iface: /dev/nvidiactl, /dev/nvidia0..N and
 * /dev/nvidia-uvm. It keeps the RM object tree with handle and parent checks, answers the escapes, controls and
 * UVM ioctls of the init sequence with the real structs (sizes from the advertised driver branch), backs memory
 * objects at the GPU VA the driver maps them to, and runs GPFIFO channels when the doorbell is rung (see
 * nv_mock_gpfifo.c). Bad calls get the real RM status codes (NV_ERR_*) in the struct's status field.
 *
 * Not thread safe: one driver at a time (as the tests use it). */
#ifndef HCQ_NV_MOCK_H
#define HCQ_NV_MOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "base/status.h"
#include "kernel_iface/kif.h"

typedef struct nv_mock nv_mock;

typedef enum { NV_MOCK_HOPPER = 0, NV_MOCK_ADA, NV_MOCK_BLACKWELL, NV_MOCK_NO_COMPUTE } nv_mock_arch;

typedef struct nv_mock_config {
  const char *version; /* advertised driver version; NULL: $HCQ_MOCK_NV_VERSION or "580.95.05" */
  nv_mock_arch arch;   /* which classes the GPUs offer and the SM version they report */
  int gpu_count;       /* 0 means 1 */
  int gpcs;            /* GR_GET_INFO's GPC count (9 TPCs of 2 SMs each); 0 means 8, an H200's. Fewer keep the
                        * local memory the driver sizes from it small (tests under qemu) */
} nv_mock_config;

/* A decoded compute launch (QMD), handed to the launch hook. */
typedef struct nv_mock_launch {
  uint64_t qmd_va;
  unsigned qmd_version; /* 3 or 5 */
  uint32_t grid[3], block[3];
  uint64_t cbank0_va;
  uint32_t cbank0_size_B;
  uint32_t shared_size_B;
  uint32_t local_size_B; /* local memory per thread (QMD SHADER_LOCAL_MEMORY_HIGH_SIZE), checked against the channel's */
  uint64_t program_va;
} nv_mock_launch;
/* Runs the kernel; returns 0 or a positive errno with a one-line reason in detail (KIF_DETAIL_MAX bytes). */
typedef int (*nv_mock_launch_fn)(void *ctx, nv_mock *m, const nv_mock_launch *launch, char *detail);

hcq_status nv_mock_create(const nv_mock_config *config, nv_mock **out);
/* Claims the NV paths on k. Unregister with nv_mock_detach before destroying either. */
hcq_status nv_mock_attach(nv_mock *m, kif *k);
hcq_status nv_mock_detach(nv_mock *m);
void nv_mock_destroy(nv_mock *m);

void nv_mock_set_launch_hook(nv_mock *m, nv_mock_launch_fn fn, void *ctx);
/* Checks [va, va + size_B) against the live GPU mappings; 0, or EFAULT with an MMU-fault line in detail. For
 * the launch hook (kernel memory accesses). The memory itself is at the same address in this process. */
int nv_mock_check_access(nv_mock *m, uint64_t va, uint64_t size_B, bool write, char *detail);

/* Live RM objects other than root clients, and live UVM ranges (leak checks after the driver closed). */
int nv_mock_live_objects(const nv_mock *m);
int nv_mock_live_ranges(const nv_mock *m);
/* Counters for tests. */
int nv_mock_doorbells(const nv_mock *m);
int nv_mock_launches(const nv_mock *m);
/* Kernel faults (hook errors EFAULT) posted to a channel's error notifier, and the last one's text. A channel whose
 * error notifier is mapped gets the fault as RM posts it (an NvNotification: info32 = Xid 31, status 0xffff) and,
 * as robust-channel recovery does, every channel of that notifier stops: the faulting kernel's releases and all
 * later work never run, doorbells do nothing (the device must be reopened); without one the doorbell fails. */
int nv_mock_faults(const nv_mock *m);
/* Wall time spent running channels inside doorbell writes (benches subtract it: the mock GPU's time). */
uint64_t nv_mock_doorbell_ns(const nv_mock *m);
const char *nv_mock_last_fault(const nv_mock *m);

#endif
