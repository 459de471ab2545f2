/* The PM4 kernel dispatch sequence (ops_amd.py AMDComputeQueue.exec; reference runtime §5.5): a pre-dispatch
 * ACQUIRE_MEM, the COMPUTE_* registers (program, resources, scratch ring, thread management, user SGPRs, workgroup
 * size), DISPATCH_DIRECT and a CS_PARTIAL_FLUSH. Register addresses are the autogen'd gc_11_0_0 / gc_9_4_2 offsets
 * plus the GC segment base the device read from ip_discovery. */
#ifndef HCQ_AMD_DISPATCH_H
#define HCQ_AMD_DISPATCH_H

#include "amd/amd_device.h"
#include "amd/amd_pm4.h"

typedef struct amd_dispatch_desc {
  uint64_t code_va;          /* kernel entry; must be 256-byte aligned (COMPUTE_PGM_LO/HI hold va >> 8) */
  uint32_t rsrc1, rsrc2, rsrc3;
  bool wave32;               /* sets DISPATCH_INITIATOR.CS_W32_EN (gfx10+) */
  uint32_t user_sgpr[16];
  uint32_t user_sgpr_count;  /* 0..16 */
  uint32_t local[3];         /* workgroup size */
  uint32_t grid[3];          /* workgroup counts */
  uint32_t tmpring_size;     /* COMPUTE_TMPRING_SIZE (0: no scratch) */
  uint64_t scratch_va;       /* 256-byte aligned scratch ring; COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI where the arch has them */
} amd_dispatch_desc;

/* What the user SGPRs a kernel asks for are set from. */
typedef struct amd_user_sgpr_src {
  uint64_t scratch_va;      /* the scratch ring: private segment buffer V# base and FLAT_SCRATCH_INIT (gfx90a) */
  uint64_t dispatch_packet_va; /* an hsa_kernel_dispatch_packet_t image (amd_dispatch_packet_write) */
  uint64_t kernarg_va;
  uint32_t private_B;       /* bytes of scratch per lane (ENABLE_SGPR_PRIVATE_SEGMENT_SIZE) */
} amd_user_sgpr_src;

/* The user SGPRs kernel_code_properties `props` enables, in the order of LLVM AMDGPUUsage "Initial Kernel Execution
 * State" (private segment buffer 4, dispatch ptr 2, queue ptr 2, kernarg segment ptr 2, dispatch id 2, flat scratch
 * init 2, private segment size 1); `count` is RSRC2.USER_SGPR (LLVM may reserve more than it enables: the rest
 * are 0). Bits hcq cannot provide (queue ptr: a PM4 queue has no amd_queue_t, ops_amd.py sets none either;
 * dispatch id; dynamic stack; the private segment buffer and flat scratch init outside gfx90a) are refused by name.
 * s may be NULL to only check props. */
hcq_status amd_user_sgprs(const amd_device *d, uint16_t props, uint32_t count, const amd_user_sgpr_src *s,
                          uint32_t out[16], uint32_t *out_n);

/* The dispatch packet (ops_amd.py exec, for kernels with the dispatch ptr): an hsa_kernel_dispatch_packet_t (ROCm
 * hsa.h: workgroup_size_x/y/z u16 at 4, grid_size_x/y/z u32 at 12 in work-items, private_segment_size 24,
 * group_segment_size 28, kernel_object 32, kernarg_address 40) placed after the kernel arguments, at this offset
 * of the argument memory (64-byte aligned; the argument memory is sized with AMD_DISPATCH_PACKET_B more). */
#define AMD_DISPATCH_PACKET_B 64u
static inline uint32_t amd_dispatch_packet_offset_B(uint32_t kernarg_B) { return (kernarg_B + 63u) & ~63u; }
void amd_dispatch_packet_write(uint8_t pkt[AMD_DISPATCH_PACKET_B], const uint32_t local[3], const uint32_t grid[3],
                               uint32_t private_B, uint32_t group_B, uint64_t kernel_object, uint64_t kernarg_va);

/* Dword upper bound of one dispatch sequence. */
#define AMD_DISPATCH_MAX_DW 96u

/* The absolute register addresses of a device (dword addresses, segment base added). */
typedef struct amd_regs {
  uint32_t pgm_lo, rsrc1, rsrc3, tmpring, scratch_base_lo, restart_x, thread_se0, thread_se2, thread_se4, user_data0, limits, start_x;
  uint32_t initiator_base, w32_en, rsrc1_priv;
} amd_regs;

amd_regs amd_regs_of(const amd_device *d);
/* Where the patchable values landed (dword indices into the command buffer), for graph replay. */
typedef struct amd_dispatch_slots {
  uint32_t user_sgpr; /* user_sgpr[0..count) */
  uint32_t local;     /* COMPUTE_NUM_THREAD_X..Z */
  uint32_t grid;      /* DISPATCH_DIRECT x, y, z */
} amd_dispatch_slots;

/* Appends the sequence; invalid descriptors are an error (nothing is appended). slots may be NULL. */
hcq_status amd_pm4_dispatch(amd_cmdbuf *b, const amd_device *d, const amd_dispatch_desc *k, amd_dispatch_slots *slots);

#endif
