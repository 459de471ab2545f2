/* hcq_device: the interface between the device-independent queue core and one backend (cpu, amd, nv, fakes).
 *
 * A backend fills an hcq_device_ops table and calls hcq_device_init() with it; the core then owns the device's
 * timeline signals and signal pool. The core never interprets backend memory beyond the host pointers it is given.
 *
 * Ownership: the backend owns `impl`; hcq_device_fini() frees what the core allocated (signals) through the ops,
 * then the backend frees its own state.
 */
#ifndef HCQ_DEVICE_H
#define HCQ_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "hcq/device_info.h"
#include "hcq/program.h"
#include "base/status.h"
#include "uop/uop.h"

typedef struct hcq_device hcq_device;
typedef struct hcq_signal hcq_signal;
typedef struct hcq_queue hcq_queue; /* hcq/queue.h */
typedef struct hcq_args hcq_args;   /* hcq/args.h */

/* A value or a symbol. A symbol that is an integer CONST node is treated as a constant. */
typedef struct hcq_val {
  const uop *sym; /* NULL: constant `imm` */
  uint64_t imm;
} hcq_val;
static inline hcq_val hcq_imm(uint64_t v) { return (hcq_val){NULL, v}; }
static inline hcq_val hcq_sym(const uop *s) { return (hcq_val){s, 0}; }

/* Which hardware queue a command stream goes to. Backends without a copy engine run copies on compute. */
typedef enum hcq_queue_kind { HCQ_QUEUE_COMPUTE = 0, HCQ_QUEUE_COPY = 1 } hcq_queue_kind;

/* A block of device-visible memory: `host` is the CPU view, `va` the address the device uses (equal on CPU and
 * on KFD/NV with unified VA). `handle` is backend-private. */
typedef struct hcq_mem {
  void *host;
  uint64_t va;
  size_t size_B;
  uint64_t handle;
} hcq_mem;

/* Memory flavours a core allocation may ask for (backends may ignore what they cannot express). */
enum {
  HCQ_MEM_SIGNAL = 1u << 0,  /* signal page: host-visible, uncached, mapped into every peer device */
  HCQ_MEM_KERNARG = 1u << 1, /* kernel-argument memory: host-written, device-read */
  /* Placement (user buffers): where the memory lives and how the host sees it. None of the three = the backend's
   * default for compute buffers (device-local where that is not host-visible memory's equal). */
  HCQ_MEM_DEVICE_LOCAL = 1u << 2, /* VRAM / device memory */
  HCQ_MEM_HOST_VISIBLE = 1u << 3, /* `host` must be a usable CPU mapping */
  HCQ_MEM_UNCACHED = 1u << 4,     /* CPU writes go straight to memory (write-combined / uncached mapping) */
};

/* What a device is (hcq_device_ops.info): hcq/device_info.h. */

/* How a backend encodes the generic commands into its own native words (CPU words, PM4, push-buffer methods).
 * Each function appends one command to q with hcq_queue_reserve / hcq_queue_emit* and records every symbolic
 * operand as a patch (hcq_queue_patch_word, hcq_queue_patch_bits, hcq_queue_patch_field), so that graphs replay
 * on any backend by patching. The core has already checked that the queue has no sticky error and that every
 * symbolic operand is an integer scalar. Operands have the meaning of hcq/queue.h. */
typedef struct hcq_encoder {
  hcq_status (*exec)(hcq_queue *q, hcq_val prog, const hcq_args *args, const hcq_val global[3], const hcq_val local[3]);
  hcq_status (*copy)(hcq_queue *q, hcq_val dst_va, hcq_val src_va, hcq_val size_B);
  hcq_status (*signal)(hcq_queue *q, hcq_val sig_va, hcq_val value);
  hcq_status (*wait)(hcq_queue *q, hcq_val sig_va, hcq_val value);
  hcq_status (*timestamp)(hcq_queue *q, hcq_val sig_va);
  hcq_status (*memory_barrier)(hcq_queue *q);
} hcq_encoder;

typedef struct hcq_device_ops {
  const char *backend_name; /* "cpu", "amd", "nv", "fake" */
  /* Hand `count` words in the backend's native format (as its encoder wrote them) to the hardware. The words
   * belong to the queue and may be rewritten after this returns: copy them (or bind them) if the hardware reads
   * them later. With queue_storage they lie in memory the backend handed out, at mem.va + 4 * index. */
  hcq_status (*submit)(hcq_device *dev, hcq_queue_kind kind, const uint32_t *words, size_t count);
  /* Device-visible memory, zero-filled. */
  hcq_status (*mem_alloc)(hcq_device *dev, size_t size_B, unsigned flags, hcq_mem *out_mem);
  void (*mem_free)(hcq_device *dev, hcq_mem *mem);
  /* Optional: block up to max_ms while *value_addr still equals `observed` (futex / KFD event). NULL = the core
   * sleeps with a growing nanosleep. Spurious early returns are fine. */
  void (*wait_sleep)(hcq_device *dev, const volatile uint64_t *value_addr, uint64_t observed, uint32_t max_ms);
  /* The encoder of the generic commands. NULL: queues of this device take only raw words (hcq_queue_emit*). */
  const hcq_encoder *encoder;
  /* Optional: word storage for this device's queues (a ring or indirect buffer in device-visible memory), freed
   * with mem_free. The queue grows by allocating a larger block and copying; submit then hands the hardware words
   * it can read in place. NULL = the queue keeps its words on the host heap. */
  hcq_status (*queue_storage)(hcq_device *dev, hcq_queue_kind kind, size_t size_B, hcq_mem *out_mem);

  /* ---- device interface for the runtime layer (hcq/runtime.h); all optional for queue-only backends ---- */
  /* Describe the device. */
  hcq_status (*info)(hcq_device *dev, hcq_device_info *out);
  /* Load prog->binary; *out_handle is what hcq_queue_exec takes. The backend may replace the kernel-argument
   * layout (params[].offset_B/size_B, kernarg_prefix_B, kernarg_size_B) with what the binary states (AMD kernarg
   * metadata, NV .nv.info); the caller re-checks it with hcq_program_check. Errors name the program. */
  hcq_status (*program_load)(hcq_device *dev, hcq_program *prog, uint64_t *out_handle);
  /* Free a loaded program once nothing queued uses it any more (the caller retires it on the timeline). */
  void (*program_free)(hcq_device *dev, uint64_t handle);
  /* The wait path: block until sig reaches target or timeout_ms passes. NULL = hcq_signal_wait. A wait that
   * times out while the device is hung returns HCQ_CODE_DEVICE_LOST, otherwise HCQ_CODE_TIMEOUT. */
  hcq_status (*signal_wait)(hcq_device *dev, const hcq_signal *sig, uint64_t target, uint32_t timeout_ms);
  /* The first error work on the device recorded since the last call (HCQ_CODE_KERNEL_FAULT for a faulting
   * kernel, HCQ_CODE_TIMEOUT for a queued wait that gave up, HCQ_CODE_DEVICE_LOST), or OK. NULL = none ever. */
  hcq_status (*take_error)(hcq_device *dev);
  /* Close a device the registry opened (after hcq_device_fini's users are gone): frees the backend. */
  void (*destroy)(hcq_device *dev);
} hcq_device_ops;

/* The core's per-device state. Backends embed nothing here but `impl`. */
typedef struct hcq_signal_page hcq_signal_page;

#define HCQ_DEVICE_NAME_MAX 32
/* The timeline is swapped to its shadow signal by hcq_device_synchronize once timeline_value passes this (see
 * hcq/signal.h: AMD and CPU compare signal values in 32 bits). */
#define HCQ_TIMELINE_WRAP_AT ((uint64_t)1 << 31)

struct hcq_device {
  const hcq_device_ops *ops;
  void *impl;
  char name[HCQ_DEVICE_NAME_MAX]; /* "CPU:0": used in variable names and error messages */
  hcq_signal *timeline;           /* reaches timeline_value-1 when all submitted work is done */
  hcq_signal *shadow_timeline;    /* the spare the timeline swaps to at a wrap */
  uint64_t timeline_value;        /* the next value hcq_timeline_next() hands out */
  uint64_t timeline_wraps;        /* how many times the timeline was swapped (for tests and stats) */
  hcq_signal_page *signal_pages;  /* signal slot pool (hcq/signal.c) */
  uint32_t wait_timeout_ms;       /* default for synchronize: 30000 */
  struct hcq_retire_entry *retire; /* resources freed once the timeline passes their value (hcq/retire.h) */
  size_t nretire, retire_cap;
  /* Timestamps (hcq_signal_timestamp_ns): a device whose counter is not ns of hcq_now_ns() sets these after init;
   * ns = ticks * timestamp_ns_per_tick + timestamp_offset_ns. 0 ns per tick: the device writes ns already.
   * timestamp_early_ns: how much earlier than the truth a converted time can be (the calibration's uncertainty plus
   * one tick; a converted time is never later than the truth). */
  uint32_t timestamp_ns_per_tick;
  int64_t timestamp_offset_ns;
  uint64_t timestamp_early_ns;
};

/* Create the core state: timeline + shadow signals (value 0), timeline_value = 1. `name` is copied. */
hcq_status hcq_device_init(hcq_device *dev, const hcq_device_ops *ops, void *impl, const char *name);
/* Free the core state (signals must have been destroyed by their users first; the timelines are freed here). */
void hcq_device_fini(hcq_device *dev);

#endif
