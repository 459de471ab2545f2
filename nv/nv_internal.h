/* nv/ internals shared by nv_*.c. */
#ifndef HCQ_NV_INTERNAL_H
#define HCQ_NV_INTERNAL_H

#include "autogen/nv_abi.h"
#include "nv/nv_dev.h"

/* Where shared and local memory appear in a kernel's generic address space: addresses in the VA hole, the
 * reference's choice (tinygrad/runtime/ops_nv.py), not a hardware constant. */
#define NV_SHARED_WINDOW 0x729400000000ull
#define NV_LOCAL_WINDOW 0x729300000000ull

/* What take_error needs to name a faulting kernel (nv_errors.c): the loaded programs with their names (the launches
 * are decoded from the compute channel's push buffers at fault time). */
typedef struct nv_prog_name { const void *program; char name[64]; } nv_prog_name;

typedef struct nv_va_window { uint64_t base, size_B, next; } nv_va_window;

struct nv_chan {
  uint32_t handle, token, entries, put;
  uint64_t *ring;                      /* GPFIFO entries (CPU view == GPU VA) */
  volatile AmpereAControlGPFifo *userd;
  nv_mem cmd;                          /* command ring the push buffers are copied into */
  uint64_t cmd_off;
  uint64_t nsubmits;                   /* GPFIFO entries written so far (how far back a fault may decode) */
  const char *name;
};

struct nv_dev {
  kif *k;
  const nv_layout *layout;
  char version[72], target[24];
  int fd_ctl, fd_uvm, fd_uvm2, fd_gpu;
  uint32_t root, device, subdevice, usermode, vaspace, chgroup, ctxshare;
  uint32_t cls_compute, cls_copy, cls_gpfifo, cls_usermode;
  uint8_t uuid[16];
  int minor;
  volatile uint8_t *doorbell;
  nv_va_window *low, *high; /* the process's windows (nv_mem.c), shared by every open GPU */
  nv_mem gpfifo_area, notifier;
  nv_chan compute, copy;
  uint32_t sm_version;
  uint64_t fb_B, fb_free_B; /* FB_GET_INFO_V2 RAM_SIZE / HEAP_FREE (0: RM did not say) */
  char gpu_name[NV2080_GPU_MAX_NAME_STRING_LENGTH + 1]; /* GPU_GET_NAME_STRING ("": RM did not say) */
  nv_prog_name *prog_names; /* loaded programs (nv_rt.c), freed at close */
  uint32_t nprog_names, cap_prog_names;
  char stopped[160]; /* set once an error stopped the channel group: why (later work is refused) */
  uint32_t gpcs, tpc_per_gpc, sm_per_tpc, max_warps_per_sm; /* GR info (local memory sizing) */
  uint32_t slm_per_thread_B;  /* local memory per thread the current allocation serves (0: none yet) */
  nv_mem *local_mems;         /* local-memory allocations: the last is current, outgrown ones stay until close */
  uint32_t nlocal_mems;
  nv_mem *qmd_chunks; /* QMD slots for recorded launches (nv_enc_exec), freed at close */
  uint32_t nqmd_chunks, qmd_used_B;
};

/* SEM_ADDR_HI's width on a GPFIFO class (0: not in autogen). */
uint64_t nv_sem_hi_mask(uint32_t cls);
/* Makes the compute channel's local memory serve per_thread_B bytes per thread (grows only; nv_program.c). */
hcq_status nv_local_ensure(nv_dev *d, uint32_t per_thread_B);
void nv_local_free_all(nv_dev *d);
/* QMD V05_00 (Blackwell) when the compute class is BLACKWELL_COMPUTE_A or later, else V03_00 (runtime.md 6.6). */
static inline bool nv_dev_qmd_v5(const nv_dev *d) { return d->cls_compute >= BLACKWELL_COMPUTE_A; }
/* A 256-aligned QMD slot (zeroed, CPU-visible below 2^40) that lives until the device closes. */
hcq_status nv_qmd_slot(nv_dev *d, uint32_t **out_host, uint64_t *out_va);
void nv_qmd_free_all(nv_dev *d);

/* RM / UVM calls: each returns an hcq_status naming the call, the object/class and the RM status by name. */
hcq_status nv_rm_alloc(nv_dev *d, uint32_t parent, uint32_t cls, void *params, uint32_t params_size_B,
                       uint32_t *out_handle, const char *what);
hcq_status nv_rm_control(nv_dev *d, uint32_t obj, uint32_t cmd, void *params, uint32_t params_size_B,
                         const char *what);
hcq_status nv_rm_free(nv_dev *d, uint32_t parent, uint32_t obj);
hcq_status nv_uvm(nv_dev *d, int fd, unsigned long req, void *params, uint32_t *status, const char *what);
hcq_status nv_rm_status(uint32_t status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Opens /dev/nvidia<minor> and registers it with the control fd. */
/* Memory size and GPU name into d (nv_rm.c): an RM refusal leaves them unknown. */
hcq_status nv_read_fb_and_name(nv_dev *d);
hcq_status nv_open_gpu_fd(nv_dev *d, int *out_fd);
/* Maps RM object `handle` (memory or usermode) for the CPU: at va (0: anywhere) */
hcq_status nv_map_to_cpu(nv_dev *d, uint32_t handle, uint64_t size_B, uint64_t va, uint32_t flags, bool system,
                         void **out);
/* UVM_FREE with the branch's layout (590 dropped `length`, moving the status) */
hcq_status nv_uvm_free(nv_dev *d, uint64_t va, uint64_t size_B);
hcq_status nv_va_reserve(nv_dev *d);
/* A VA range of size_B in the low window (for UVM channel ranges); 0-aligned to 4 KiB. */
hcq_status nv_va_low_range(nv_dev *d, uint64_t size_B, uint64_t *out_va);
void nv_va_release(nv_dev *d);
hcq_status nv_chan_create(nv_dev *d, nv_chan *c, uint64_t offset_B, uint32_t engine_cls, const char *name);

#endif
