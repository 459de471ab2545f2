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
  uint64_t scratch_va;       /* 256-byte aligned scratch ring; COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI on gfx11+ */
} amd_dispatch_desc;

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
