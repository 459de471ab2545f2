/* The gfx targets the AMD driver supports, as table entries of one code path. Anything else fails closed, by name.
 * Differences and their sources (tinygrad/runtime/ops_amd.py @ 8006595cde, linux 6.1 amdgpu):
 *   gfx9 (gfx90a, gfx942): PM4 gfx9 forms (soc15d.h: ACQUIRE_MEM with CP_COHER_CNTL, 6 body dwords; RELEASE_MEM
 *     EOP_TC_* cache actions), SDMA 4.4 (22-bit copy count), wave64, scratch per-wave granule 1024 bytes.
 *   gfx11/gfx12 (gfx1100, gfx1201): nvd.h forms (ACQUIRE_MEM GCR_CNTL, 7 body dwords), SDMA 6/7 (30-bit count),
 *     wave32 via DISPATCH_INITIATOR CS_W32_EN, RSRC1 PRIV bit (gfx11 only: a CWSR workaround in ops_amd.py),
 *     COMPUTE_STATIC_THREAD_MGMT_SE4..7, scratch granule 256 bytes.
 *   scratch: gfx90a kernels take a private segment buffer V# (and FLAT_SCRATCH_INIT) in user SGPRs; gfx942 and
 *     gfx11+ have architected flat scratch from COMPUTE_DISPATCH_SCRATCH_BASE (ops_amd.py has_scratch_base_registers:
 *     target >= 11 or 9.4.2 / 9.5.0; clang-19 emits no private segment buffer for gfx942). */
#ifndef HCQ_AMD_ARCH_H
#define HCQ_AMD_ARCH_H

#include <stdbool.h>
#include <stdint.h>

#include "base/status.h"

typedef struct amd_arch {
  const char *name;            /* "gfx1100" */
  uint32_t gfx_target_version; /* KFD topology value, major*10000 + minor*100 + step */
  bool gfx9;                   /* soc15 PM4, gc_9_4_2 regs (= gc_9_4_3 ones); else nvd.h, gc_11_0_0 (= gc_12_0_0) */
  bool rsrc1_priv;             /* set COMPUTE_PGM_RSRC1.PRIV (gfx11) */
  bool thread_mgmt_se4_7;      /* COMPUTE_STATIC_THREAD_MGMT_SE4..7 exist (gfx11+) */
  uint32_t cwsr_vgpr_per_cu_B; /* ops_amd.py CWSR sizing: 0x60000 for 11.0.0/12.0.x, 0x80000 for 9.4.x */
  uint32_t scratch_granule_B;  /* per-wave scratch rounding: 256 on gfx11+, 1024 before */
  bool scratch_base_regs;      /* COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI (architected flat scratch): gfx11+ and 9.4.2 */
} amd_arch;

/* The table entry for a KFD gfx_target_version, or an error naming the target and listing the supported ones. */
hcq_status amd_arch_find(uint32_t gfx_target_version, const amd_arch **out);
/* "gfx%d%x%x" of a gfx_target_version (as ops_amd.py names targets). buf >= 16 bytes. */
const char *amd_arch_name(uint32_t gfx_target_version, char *buf, unsigned size_B);

#endif
