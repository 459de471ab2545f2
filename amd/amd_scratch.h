/* Per-device scratch (private segment) memory, sized as tinygrad/runtime/ops_amd.py @ 8006595cde
 * AMDDevice._ensure_has_local_memory does it, and the COMPUTE_TMPRING_SIZE value that describes it:
 *   max_cu_id   = simd_count / simd_per_cu / num_xcc - 1
 *   max_wave_id = max_waves_per_simd * simd_per_cu - 1 (gfx10.1+), else min((max_cu_id+1)*40, engines*512) - 1
 *   wave_B      = round_up((max_wave_id+1) * lane_B, granule)      (granule 256 on gfx11+, 1024 before)
 *   size_B      = (max_cu_id+1) * max_slots_scratch_cu * wave_B * num_xcc
 *   TMPRING_SIZE.WAVESIZE = wave_B / granule; .WAVES = size_B/num_xcc / wave_B, divided by the shader engines
 *   (array_count / simd_arrays_per_engine) on gfx11+, where the register counts waves per engine.
 * The allocation only grows; a smaller request reuses it. */
#ifndef HCQ_AMD_SCRATCH_H
#define HCQ_AMD_SCRATCH_H

#include "amd/amd_device.h"

/* The sizes for lane_B bytes of scratch per lane; a TMPRING field overflow is an error naming the device. */
hcq_status amd_scratch_plan(const amd_node *n, const amd_arch *a, uint32_t lane_B, uint64_t *out_size_B,
                            uint32_t *out_tmpring);

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
