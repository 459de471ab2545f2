/* State shared by the emulated KFD's files (kfd_mock.c: files and ioctls; kfd_mock_cp.c: the ring executors). */
#ifndef HCQ_KFD_MOCK_INTERNAL_H
#define HCQ_KFD_MOCK_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "emulator_tests/kfd_mock.h"
#include "kernel_iface/kif_backend.h"

#define KFD_MOCK_MAX_QUEUES 64
#define KFD_MOCK_MAX_EVENTS 256
#define KFD_MOCK_DOORBELL_PAGE_B 0x2000 /* one process doorbell slice per GPU, as the reference maps it */

/* The mmap offset of a doorbell slice: KFD_MMAP_TYPE_DOORBELL (3 << 62) | gpu_id << KFD_MMAP_GPU_ID_SHIFT (46)
 * (linux 6.1 drivers/gpu/drm/amd/amdkfd/kfd_priv.h; kernel-internal, the user side only masks the low 13 bits). */
#define KFD_MOCK_MMAP_DOORBELL (3ull << 62)
#define KFD_MOCK_MMAP_GPU_SHIFT 46

typedef struct kfd_mock_arch {
  const char *name;
  uint32_t gfx_target_version;
  unsigned simd_count, simd_per_cu, max_waves_per_simd, array_count, simd_arrays_per_engine, max_slots_scratch_cu;
  unsigned lds_size_in_kb, num_xcc;
  unsigned gc_ver[3], sdma_ver[3], nbif_ver[3];
  uint32_t gc_base[4]; /* GC IP segment bases (ip_discovery base_addr) */
} kfd_mock_arch;

typedef struct kfd_mock_alloc {
  uint64_t handle;
  unsigned gpu;
  uint64_t va, size_B;
  uint32_t flags;
  uint32_t mapped;  /* bit per GPU index */
  bool cpu_mapped;  /* host memory placed at va by mmap on the render node (non-userptr) */
  bool live;
} kfd_mock_alloc;

typedef struct kfd_mock_queue {
  bool live, hung;
  unsigned gpu;
  uint32_t id, type;
  uint64_t ring_va;
  uint32_t ring_size_B;
  uint64_t rptr_va, wptr_va; /* u64 pointers the driver owns */
  unsigned doorbell_slot;    /* 8-byte slot in the GPU's doorbell page */
  uint64_t blocked_since_ns; /* 0 when not waiting */
  uint32_t regs[0x10000];    /* register file (dword address); 256 KiB per queue, allocated with the queue */
} kfd_mock_queue;

typedef struct kfd_mock_event {
  bool live, signaled, auto_reset;
  uint32_t type;
  struct { uint64_t va; uint32_t gpu_id; } fault; /* memory-exception / hw-exception payload */
} kfd_mock_event;

struct kfd_mock {
  kif_backend base; /* first member: kif casts back */
  kfd_mock_config cfg;
  const kfd_mock_arch *arch;
  kif *k;
  pthread_mutex_t lock; /* allocations, queues, events, executor state */
  kfd_mock_alloc *allocs;
  unsigned alloc_count, alloc_cap;
  uint64_t next_handle;
  uint64_t vram_used_B[KFD_MOCK_MAX_GPUS];
  bool vm_acquired[KFD_MOCK_MAX_GPUS];
  _Alignas(4096) uint8_t doorbells[KFD_MOCK_MAX_GPUS][KFD_MOCK_DOORBELL_PAGE_B];
  kfd_mock_queue *queues[KFD_MOCK_MAX_QUEUES];
  uint32_t next_queue_id;
  kfd_mock_event events[KFD_MOCK_MAX_EVENTS]; /* index = event id - 1 */
  uint64_t event_page_va;                      /* 0 until the first CREATE_EVENT with event_page_offset */
  kfd_mock_dispatch_fn dispatch_fn;
  void *dispatch_user;
  char *last_error;
  FILE *trace; /* decoded packets go here (HCQ_TRACE=1: stderr) */
  uint64_t packets;
  uint32_t hdp_done[KFD_MOCK_MAX_GPUS]; /* NBIO HDP_FLUSH_DONE per GPU (kfd_mock_hdp.c) */
  uint64_t created_ns; /* the GPU clock counts from here (kfd_mock_gpu_clock) */
  /* worker */
  pthread_t worker;
  bool worker_started;
  atomic_bool stop_flag;
  pthread_mutex_t kick_lock; /* only for sleeping: a doorbell wakes the worker only when `sleeping` is set */
  pthread_cond_t kick_cond, idle_cond;
  atomic_uint kicks;
  atomic_bool busy, sleeping;
};

uint64_t kfd_mock_now_ns(void);
/* The 100 MHz GPU clock counter (RELEASE_MEM GPU_CLOCK_COUNTER, SDMA GET_GLOBAL, GET_CLOCK_COUNTERS). It starts at
 * an arbitrary count, as a GPU's counts from its power-on, not from the host's clock epoch. */
#define KFD_MOCK_GPU_CLOCK_START 4242424242ull
uint64_t kfd_mock_gpu_clock(const kfd_mock *m);
/* lock held: */
kfd_mock_alloc *kfd_mock_find_alloc(kfd_mock *m, unsigned gpu, uint64_t va, uint64_t size_B);
void kfd_mock_report(kfd_mock *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kfd_mock_raise_memory_fault(kfd_mock *m, unsigned gpu, uint64_t va);
void kfd_mock_signal_event_id(kfd_mock *m, uint32_t event_id);
/* NBIO segment bases of every mock GPU (ip_discovery hw id 108). */
extern const uint32_t kfd_mock_nbio_base[6];
/* WAIT_REG_MEM write-wait on the HDP flush pair: write `value` to req_reg; *out_done = DONE & mask. Returns 0, or -1
 * with err set for a register that is not this GPU's REQ/DONE pair, bits no client owns, or an unmodelled NBIO. */
int kfd_mock_hdp_write_wait(kfd_mock *m, unsigned gpu, uint32_t req_reg, uint32_t done_reg, uint32_t value,
                            uint32_t mask, uint32_t *out_done, char *err, size_t err_B);
/* Run every queue until no progress; lock held. Returns true if any queue is still blocked on a wait. */
bool kfd_mock_cp_run(kfd_mock *m);
/* Start the worker (once) and wake it. */
hcq_status kfd_mock_cp_start(kfd_mock *m);
void kfd_mock_cp_kick(kfd_mock *m);
void kfd_mock_cp_stop(kfd_mock *m);

#endif
