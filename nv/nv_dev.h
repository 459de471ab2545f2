/* nv/: the NVIDIA driver base over RM + UVM (Hopper first, then Ada/Ampere, Blackwell), through kernel_iface.
 * nv_dev_open runs the init sequence (runtime.md 6.2 of the reference, rebuilt from the public headers): root
 * client, driver version check and branch layout, UVM, the GPU's device/subdevice, class choice, usermode
 * doorbell page, VA space, channel group, context share, a compute and a copy GPFIFO channel, GR info -> the
 * compiler target ("ptx:sm_90"). Every RM/UVM failure names the call, the object and the RM status by name.
 * Numbers come from autogen/nv_abi.h; struct sizes that changed between branches from autogen/nv_layout.h. */
#ifndef HCQ_NV_DEV_H
#define HCQ_NV_DEV_H

#include <stdbool.h>
#include <stdint.h>

#include "autogen/nv_layout.h"
#include "base/status.h"
#include "kernel_iface/kif.h"

typedef struct nv_dev nv_dev;

/* Memory kinds for nv_mem_alloc (bit flags). */
enum {
  NV_MEM_CPU = 1,      /* also mapped for the CPU at the same VA (below 2^40: GPFIFO/QMD/push buffers) */
  NV_MEM_HOST = 2,     /* host pages registered with RM (signals, kernargs staging); implies CPU */
  NV_MEM_UNCACHED = 4, /* system memory, uncached for the GPU */
  NV_MEM_CONTIG = 8,   /* physically contiguous */
};

typedef struct nv_mem {
  uint64_t va, size_B;
  uint32_t handle;
  unsigned kind;
  void *cpu; /* == (void *)va when CPU-visible, else NULL */
} nv_mem;

typedef struct nv_chan nv_chan; /* a GPFIFO channel */

/* Opens GPU `index` (0-based among valid cards) through k. */
hcq_status nv_dev_open(kif *k, int index, nv_dev **out);
/* Frees what open made (root client, internal memory, mappings, fds). Memory the caller allocated must be freed
 * first. NULL is a no-op. */
void nv_dev_close(nv_dev *d);

const char *nv_dev_target(const nv_dev *d);   /* "ptx:sm_90" */
const char *nv_dev_version(const nv_dev *d);  /* driver version string, "580.95.05" */
const nv_layout *nv_dev_layout(const nv_dev *d);
uint64_t nv_dev_mem_B(const nv_dev *d, bool free_now); /* device memory (FB_GET_INFO_V2), 0: unknown */
const char *nv_dev_gpu_name(const nv_dev *d);          /* "NVIDIA H200"; "": unknown */
uint32_t nv_dev_class(const nv_dev *d, char which); /* 'c' compute, 'd' copy, 'g' gpfifo, 'u' usermode */
nv_chan *nv_dev_compute(nv_dev *d);
nv_chan *nv_dev_copy(nv_dev *d);

hcq_status nv_mem_alloc(nv_dev *d, uint64_t size_B, unsigned kind, nv_mem *out);
hcq_status nv_mem_free(nv_dev *d, nv_mem *m);

/* ---- push buffers: method builders (debug assertions; a bad call also makes nv_chan_submit fail) ---------- */
typedef struct nv_push {
  uint32_t *w;
  uint32_t n, cap;
  const char *bad; /* first misuse, or NULL */
} nv_push;

/* Subchannels as the reference uses them. */
enum { NV_SUBCH_HOST = 0, NV_SUBCH_COMPUTE = 1, NV_SUBCH_COPY = 4 };

void nv_push_init(nv_push *p, uint32_t *words, uint32_t cap);
/* Incrementing method group: values go to method, method+4, ... */
void nv_push_inc(nv_push *p, unsigned subch, uint32_t method, const uint32_t *vals, unsigned n);
/* Non-incrementing: every value to the same method. */
void nv_push_noninc(nv_push *p, unsigned subch, uint32_t method, const uint32_t *vals, unsigned n);
/* Immediate: the value (13 bits) lives in the header. */
void nv_push_immd(nv_push *p, unsigned subch, uint32_t method, uint32_t value);
/* Host semaphores (subchannel 0, the channel class's SEM_* methods). The address is checked against the
 * channel class's SEM_ADDR_HI width. */
void nv_push_sem_release(nv_push *p, const nv_dev *d, uint64_t addr, uint64_t value, bool timestamp);
void nv_push_sem_acquire(nv_push *p, const nv_dev *d, uint64_t addr, uint64_t value);
/* Copy engine (subchannel 4): dst <- src, n bytes (split at 2 GiB); release `value` (32-bit, four-word) at sem. */
void nv_push_copy(nv_push *p, const nv_dev *d, uint64_t dst, uint64_t src, uint64_t n);
void nv_push_copy_release(nv_push *p, const nv_dev *d, uint64_t sem, uint32_t value);

/* Copies the words into the channel's command ring, writes a GPFIFO entry, publishes GP_PUT, rings the doorbell. */
hcq_status nv_chan_submit(nv_dev *d, nv_chan *c, const nv_push *p);
/* Waits until the u64 at addr (a CPU-visible VA) is >= value. */
hcq_status nv_wait(nv_dev *d, uint64_t addr, uint64_t value, uint32_t timeout_ms);

#endif
