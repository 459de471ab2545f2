/* Per-device scratch (private segment) memory, sized as tinygrad/runtime/ops_amd.py @ 8006595cde
 * AMDDevice._ensure_has_local_memory does it, and the COMPUTE_TMPRING_SIZE value that describes it:
 *   max_cu_id   = simd_count / simd_per_cu / num_xcc - 1
 *   max_wave_id = max_waves_per_simd * simd_per_cu - 1 (gfx10.1+), else min((max_cu_id+1)*40, engines*512) - 1
 *   wave_B      = round_up((max_wave_id+1) * lane_B, granule)      (granule 256 on gfx11+, 1024 before)
 *   size_B      = (max_cu_id+1) * max_slots_scratch_cu * wave_B * num_xcc
 *   TMPRING_SIZE.WAVESIZE = wave_B / granule; .WAVES = size_B/num_xcc / wave_B, divided by the shader engines
 *   (array_count / simd_arrays_per_engine) on gfx11+, where the register counts waves per engine.
 * gfx9 (gfx90a, gfx942) departs from it: there ops_amd.py takes max_wave_id + 1 = min(CUs x 40, engines x 512)
 * (4096 on a 104-CU MI210) as the lanes of a wave, so one wave's share is 4096 x lane_B and the ring 14 GiB for 1 KiB
 * per lane. hcq sizes a gfx9 wave as the wave64 it is: wave_B = round_up(64 x lane_B, 1024), WAVESIZE = wave_B / 1024,
 * WAVES = min(CUs x max_slots_scratch_cu, the 12-bit field's maximum), the ring WAVES x wave_B per XCC (WAVES is the
 * reference's own count of scratch slots; sizing by 64 lanes is LLVM's view of a wave64's private segment).
 * The allocation only grows; a smaller request reuses it. */
#ifndef HCQ_AMD_SCRATCH_H
#define HCQ_AMD_SCRATCH_H

#include "amd/amd_device.h"

/* The sizes for lane_B bytes of scratch per lane; a TMPRING field overflow is an error naming the device. */
hcq_status amd_scratch_plan(const amd_node *n, const amd_arch *a, uint32_t lane_B, uint64_t *out_size_B,
                            uint32_t *out_tmpring);

/* The private segment buffer descriptor (a 128-bit buffer resource V#, gc_9_4_2 SQ_BUF_RSRC_WORD0..3) that gfx9
 * kernels without architected flat scratch (gfx90a) take in user SGPRs 0..3 (AMDGPUUsage "Initial Kernel Execution
 * State"). Fields as ops_amd.py's exec writes them: BASE_ADDRESS(_HI) = the scratch ring, SWIZZLE_ENABLE, NUM_RECORDS
 * 0xffffffff, NUM_FORMAT 4, DATA_FORMAT 2, ADD_TID_ENABLE (each lane's private bytes interleaved by the hardware);
 * INDEX_STRIDE 3 (64 lanes) for wave64 as LLVM's SIInstrInfo::getScratchRsrcWords23 computes it ("IndexStride = 64 /
 * 32"), where ops_amd.py always writes 2; ops_amd.py's word 3 (0x20c14000) also sets bit 29, which gc_9_4_2 names no
 * field for, so it is left out. Each wave's byte offset into the ring is the "private segment wave byte offset" system
 * SGPR, which the CP computes and loads after the user SGPRs when RSRC2.SCRATCH_EN (the descriptor's
 * ENABLE_PRIVATE_SEGMENT) is set (AMDGPUUsage "Initial Kernel Execution State"): the driver passes RSRC2 and
 * TMPRING_SIZE, nothing more. */
void amd_scratch_rsrc_gfx9(uint64_t va, bool wave64, uint32_t out[4]);

#define AMD_SCRATCH_RETIRED_MAX 16

typedef struct amd_scratch {
  amd_buf mem;          /* mem.va == 0: none yet */
  uint32_t lane_B;      /* what mem was sized for */
  uint32_t tmpring;     /* COMPUTE_TMPRING_SIZE for mem */
  /* Outgrown rings, freed at close, not on the timeline: recorded queues and graphs keep the old base and
   * TMPRING_SIZE in their words (sized right for their kernels) and may be replayed any time later. */
  amd_buf retired[AMD_SCRATCH_RETIRED_MAX];
  unsigned nretired;
} amd_scratch;

/* Make s cover lane_B bytes per lane (grows by allocating a new VRAM buffer; the old one is retired). */
hcq_status amd_scratch_ensure(amd_device *d, amd_scratch *s, uint32_t lane_B);
void amd_scratch_free(amd_device *d, amd_scratch *s);

#endif
