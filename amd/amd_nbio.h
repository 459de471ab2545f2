/* The HDP flush registers of a GPU's NBIO (host data path: CPU writes through the PCIe BAR sit in the HDP until
 * flushed). A memory barrier on a compute queue writes the request register and waits for the done register
 * (WAIT_REG_MEM operation wr_wait_wr_reg), as ops_amd.py's memory_barrier and linux 6.1
 * gfx_v11_0_ring_emit_hdp_flush / gfx_v9_0_ring_emit_hdp_flush do. Offsets and bits: autogen/amd_nbio.h, picked by
 * the NBIO IP version ip_discovery reports (hw id 108), as linux amdgpu_discovery.c picks nbio_vX_Y.c (linux 6.1's
 * versions, plus 7.9.0 on gfx942 and 6.3.1 on gfx1201 from linux v6.12). Any other version (7.11, ...) fails closed,
 * by name. */
#ifndef HCQ_AMD_NBIO_H
#define HCQ_AMD_NBIO_H

#include <stdint.h>

#include "base/status.h"

typedef struct amd_hdp_regs {
  uint32_t req, done;     /* absolute dword register addresses (NBIO segment base + offset) */
  uint32_t ref_and_mask;  /* CP2..CP9: every MEC pipe's client bit (see amd_nbio.c) */
  const char *header;     /* the linux header the offsets come from */
} amd_hdp_regs;

/* The HDP flush registers for NBIO version ver (major, minor, revision) with segment bases base[0..5]. */
hcq_status amd_hdp_regs_find(const unsigned ver[3], const uint32_t base[6], amd_hdp_regs *out);

#endif
