/* NBIO HDP flush register table (see amd_nbio.h). The version lists are linux 6.1 amdgpu_discovery.c's "set NBIO
 * version" switch, plus 7.9.0 -> nbio_v7_9.c and 6.3.1 -> nbif_v6_3_1.c from the same switch in linux v6.12.117
 * (their header lines are carried in autogen/gen/amd.spec); the register and field names per file are
 * nbio_vX_Y.c's get_hdp_flush_{req,done}_offset and hdp_flush_reg table.
 * ref_and_mask: linux flushes with its own ring's bit (gfx_v9_0/gfx_v11_0 ring_emit_hdp_flush: ref_and_mask_cp2 <<
 * pipe on MEC1, ref_and_mask_cp6 << pipe on MEC2). KFD does not tell user space which MEC pipe a user queue runs on,
 * so the request names every MEC client (CP2..CP9) and waits for all of them; ops_amd.py writes 0xffffffff, which
 * also sets bits no client owns. */
#include "amd/amd_nbio.h"

#include <stddef.h>

#include "autogen/amd_nbio.h"

#define MEC_BITS(F) (F##__CP2_MASK | F##__CP3_MASK | F##__CP4_MASK | F##__CP5_MASK | F##__CP6_MASK | F##__CP7_MASK | \
                     F##__CP8_MASK | F##__CP9_MASK)
#define REGS(P, R, F, hdr)                                                                                         \
  {P##R##_REQ_BASE_IDX, P##R##_REQ, P##R##_DONE_BASE_IDX, P##R##_DONE, MEC_BITS(P##F), hdr}

typedef struct hdp_file {
  uint32_t req_idx, req, done_idx, done, mask;
  const char *header;
} hdp_file;

static const hdp_file k_v2_3 = REGS(AMD_NBIO_V2_3_, BIF_BX_PF_GPU_HDP_FLUSH, BIF_BX_PF_GPU_HDP_FLUSH_DONE, "nbio_2_3_offset.h");
static const hdp_file k_v4_3 = REGS(AMD_NBIO_V4_3_, BIF_BX_PF0_GPU_HDP_FLUSH, BIF_BX_PF_GPU_HDP_FLUSH_DONE, "nbio_4_3_0_offset.h");
static const hdp_file k_v6_1 = REGS(AMD_NBIO_V6_1_, BIF_BX_PF0_GPU_HDP_FLUSH, BIF_BX_PF0_GPU_HDP_FLUSH_DONE, "nbio_6_1_offset.h");
static const hdp_file k_v7_0 = REGS(AMD_NBIO_V7_0_, GPU_HDP_FLUSH, GPU_HDP_FLUSH_DONE, "nbio_7_0_offset.h");
static const hdp_file k_v7_2 = REGS(AMD_NBIO_V7_2_, BIF_BX_PF0_GPU_HDP_FLUSH, BIF_BX_PF0_GPU_HDP_FLUSH_DONE, "nbio_7_2_0_offset.h");
static const hdp_file k_v7_4 = REGS(AMD_NBIO_V7_4_, GPU_HDP_FLUSH, GPU_HDP_FLUSH_DONE, "nbio_7_4_offset.h");
static const hdp_file k_v7_7 = REGS(AMD_NBIO_V7_7_, BIF_BX_PF0_GPU_HDP_FLUSH, BIF_BX_PF0_GPU_HDP_FLUSH_DONE, "nbio_7_7_0_offset.h");
static const hdp_file k_v7_9 = REGS(AMD_NBIO_V7_9_, BIF_BX_PF0_GPU_HDP_FLUSH, BIF_BX_PF0_GPU_HDP_FLUSH_DONE, "nbio_7_9_0_offset.h (v6.12)");
static const hdp_file k_v6_3_1 = REGS(AMD_NBIF_V6_3_1_, BIF_BX_PF0_GPU_HDP_FLUSH, BIF_BX_PF0_GPU_HDP_FLUSH_DONE, "nbif_6_3_1_offset.h (v6.12)");

static const struct {
  unsigned major, minor, rev;
  const hdp_file *f;
} k_versions[] = {
    {2, 1, 1, &k_v2_3}, {2, 3, 0, &k_v2_3}, {2, 3, 1, &k_v2_3}, {2, 3, 2, &k_v2_3}, {3, 3, 0, &k_v2_3},
    {3, 3, 1, &k_v2_3}, {3, 3, 2, &k_v2_3}, {3, 3, 3, &k_v2_3}, {4, 3, 0, &k_v4_3}, {4, 3, 1, &k_v4_3},
    {6, 1, 0, &k_v6_1}, {6, 2, 0, &k_v6_1}, {7, 0, 0, &k_v7_0}, {7, 0, 1, &k_v7_0}, {2, 5, 0, &k_v7_0},
    {7, 4, 0, &k_v7_4}, {7, 4, 1, &k_v7_4}, {7, 4, 4, &k_v7_4}, {7, 2, 0, &k_v7_2}, {7, 2, 1, &k_v7_2},
    {7, 3, 0, &k_v7_2}, {7, 5, 0, &k_v7_2}, {7, 5, 1, &k_v7_2}, {7, 7, 0, &k_v7_7}, {7, 7, 1, &k_v7_7},
    {7, 9, 0, &k_v7_9}, {6, 3, 1, &k_v6_3_1},
};

hcq_status amd_hdp_regs_find(const unsigned ver[3], const uint32_t base[6], amd_hdp_regs *out) {
  for (size_t i = 0; i < sizeof k_versions / sizeof k_versions[0]; i++) {
    if (k_versions[i].major != ver[0] || k_versions[i].minor != ver[1] || k_versions[i].rev != ver[2]) continue;
    const hdp_file *f = k_versions[i].f;
    if (f->req_idx >= 6 || f->done_idx >= 6 || (!base[f->req_idx] && f->req_idx))
      return hcq_status_make(HCQ_CODE_INVALID, "amd: NBIO %u.%u.%u: ip_discovery lists no segment %u base for the HDP "
                             "flush registers", ver[0], ver[1], ver[2], f->req_idx);
    *out = (amd_hdp_regs){base[f->req_idx] + f->req, base[f->done_idx] + f->done, f->mask, f->header};
    return HCQ_OK;
  }
  return hcq_status_make(HCQ_CODE_UNSUPPORTED, "amd: NBIO %u.%u.%u has no HDP flush register table (known: NBIO "
                         "2.1.1, 2.3, 2.5, 3.3, 4.3, 6.1, 6.2, 6.3.1, 7.0, 7.2-7.5, 7.7, 7.9.0): memory barriers "
                         "cannot flush the HDP on this GPU", ver[0], ver[1], ver[2]);
}
