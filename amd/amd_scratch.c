/* Scratch sizing and allocation (see amd_scratch.h). */
#include "amd/amd_scratch.h"

#include <inttypes.h>

#include "autogen/amd_regs_gfx11.h"
#include "autogen/amd_regs_gfx9.h"

_Static_assert(AMD_GFX11_COMPUTE_TMPRING_SIZE__WAVES__SHIFT == AMD_GFX9_COMPUTE_TMPRING_SIZE__WAVES__SHIFT &&
                   AMD_GFX11_COMPUTE_TMPRING_SIZE__WAVESIZE__SHIFT == AMD_GFX9_COMPUTE_TMPRING_SIZE__WAVESIZE__SHIFT &&
                   AMD_GFX11_COMPUTE_TMPRING_SIZE__WAVES_MASK == AMD_GFX9_COMPUTE_TMPRING_SIZE__WAVES_MASK,
               "TMPRING_SIZE.WAVES/WAVESIZE sit at the same bits (WAVESIZE is wider on gfx11)");

hcq_status amd_scratch_plan(const amd_node *n, const amd_arch *a, uint32_t lane_B, uint64_t *out_size_B,
                            uint32_t *out_tmpring) {
  uint32_t xcc = n->num_xcc ? n->num_xcc : 1;
  if (!n->simd_per_cu || !n->simd_arrays_per_engine || n->simd_count / n->simd_per_cu / xcc == 0)
    return hcq_status_make(HCQ_CODE_INVALID, "amd %s: topology has no compute units to size scratch for", a->name);
  uint64_t cus = n->simd_count / n->simd_per_cu / xcc, engines = n->array_count / n->simd_arrays_per_engine;
  uint64_t waves_per_cu = n->max_waves_per_simd * n->simd_per_cu;
  uint64_t g = a->scratch_granule_B;
  uint32_t wvmax = AMD_GFX11_COMPUTE_TMPRING_SIZE__WAVES_MASK >> AMD_GFX11_COMPUTE_TMPRING_SIZE__WAVES__SHIFT;
  uint64_t wave_B = (waves_per_cu * lane_B + g - 1) / g * g;
  uint64_t per_xcc = cus * n->max_slots_scratch_cu * wave_B;
  if (n->gfx_target_version < 100100) { /* gfx9: see amd_scratch.h */
    wave_B = (64ull * lane_B + g - 1) / g * g;
    uint64_t slots = cus * n->max_slots_scratch_cu < wvmax ? cus * n->max_slots_scratch_cu : wvmax;
    per_xcc = slots * wave_B;
  }
  bool gfx11 = n->gfx_target_version >= 110000;
  if (gfx11 && !engines) return hcq_status_make(HCQ_CODE_INVALID, "amd %s: topology has no shader engines", a->name);
  uint64_t waves = wave_B ? per_xcc / (gfx11 ? wave_B * engines : wave_B) : 0, wsize = wave_B / g;
  uint32_t wmask = gfx11 ? AMD_GFX11_COMPUTE_TMPRING_SIZE__WAVESIZE_MASK : AMD_GFX9_COMPUTE_TMPRING_SIZE__WAVESIZE_MASK;
  uint32_t wsmax = wmask >> AMD_GFX11_COMPUTE_TMPRING_SIZE__WAVESIZE__SHIFT;
  if (wsize > wsmax || waves > wvmax)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "amd %s: %u bytes of scratch per lane need WAVESIZE %" PRIu64
                           " (max %u) and WAVES %" PRIu64 " (max %u) in COMPUTE_TMPRING_SIZE", a->name, lane_B, wsize,
                           wsmax, waves, wvmax);
  *out_size_B = per_xcc * xcc;
  *out_tmpring = (uint32_t)(waves << AMD_GFX11_COMPUTE_TMPRING_SIZE__WAVES__SHIFT |
                            wsize << AMD_GFX11_COMPUTE_TMPRING_SIZE__WAVESIZE__SHIFT);
  return HCQ_OK;
}

#define RSRC(W, F, v) (((uint32_t)(v) << AMD_GFX9_SQ_BUF_RSRC_WORD##W##__##F##__SHIFT) & AMD_GFX9_SQ_BUF_RSRC_WORD##W##__##F##_MASK)

void amd_scratch_rsrc_gfx9(uint64_t va, bool wave64, uint32_t out[4]) {
  out[0] = RSRC(0, BASE_ADDRESS, va);
  out[1] = RSRC(1, BASE_ADDRESS_HI, va >> 32) | RSRC(1, SWIZZLE_ENABLE, 1);
  out[2] = RSRC(2, NUM_RECORDS, 0xffffffffu);
  out[3] = RSRC(3, NUM_FORMAT, 4) | RSRC(3, DATA_FORMAT, 2) | RSRC(3, INDEX_STRIDE, wave64 ? 3 : 2) |
           RSRC(3, ADD_TID_ENABLE, 1);
}

hcq_status amd_scratch_ensure(amd_device *d, amd_scratch *s, uint32_t lane_B) {
  if (!lane_B || (s->mem.va && lane_B <= s->lane_B)) return HCQ_OK;
  uint64_t size_B;
  uint32_t tmpring;
  HCQ_TRY(amd_scratch_plan(&d->node, d->arch, lane_B, &size_B, &tmpring));
  if (s->mem.va && s->nretired == AMD_SCRATCH_RETIRED_MAX)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "amd %s: scratch grew %u times; reopen the device", d->name,
                           AMD_SCRATCH_RETIRED_MAX);
  amd_buf b;
  HCQ_TRY(hcq_status_annotate(amd_mem_alloc(d, size_B, AMD_MEM_VRAM, NULL, &b),
                              "amd %s: %" PRIu64 " bytes of scratch for %u bytes per lane", d->name, size_B, lane_B));
  if (s->mem.va) s->retired[s->nretired++] = s->mem; /* queued dispatches may still use it */
  s->mem = b, s->lane_B = lane_B, s->tmpring = tmpring;
  return HCQ_OK;
}

void amd_scratch_free(amd_device *d, amd_scratch *s) {
  for (unsigned i = 0; i < s->nretired; i++) hcq_status_free(amd_mem_free(d, &s->retired[i]));
  if (s->mem.va) hcq_status_free(amd_mem_free(d, &s->mem));
  *s = (amd_scratch){0};
}
