/* The mock's NBIO HDP flush registers: a REQ/DONE pair per GPU. Writing client bits to REQ sets the same bits in DONE
 * (the mock's HDP holds nothing, so every flush completes at once); bits no client owns and any other register are
 * rejected. Offsets: autogen/amd_nbio.h for the NBIO version the mock GPU reports, chosen here by its own table
 * (k_models below), not by the driver's. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "autogen/amd_nbio.h"
#include "emulator_tests/kfd_mock_internal.h"

/* NBIO segment bases the mock's ip_discovery reports for hw id 108 (sienna_cichlid_ip_offset.h / vega10_ip_offset.h
 * NBIO_BASE: the same six values). */
const uint32_t kfd_mock_nbio_base[6] = {0, 0x14, 0xD20, 0x10400, 0x241B000, 0x4040000};

#define CLIENTS(F) (F##__CP0_MASK | F##__CP1_MASK | F##__CP2_MASK | F##__CP3_MASK | F##__CP4_MASK | F##__CP5_MASK | \
                    F##__CP6_MASK | F##__CP7_MASK | F##__CP8_MASK | F##__CP9_MASK | F##__SDMA0_MASK | F##__SDMA1_MASK)

typedef struct hdp_model {
  unsigned ver[3];
  uint32_t req, done, clients; /* absolute dword addresses; the DONE bits that belong to a client */
} hdp_model;

#define MODEL(a, b, c, P, R, F)                                                                                     \
  {{a, b, c}, P##R##_REQ_BASE_IDX, P##R##_REQ, P##R##_DONE_BASE_IDX, P##R##_DONE, CLIENTS(P##F)}

/* NBIO version -> header, as linux amdgpu_discovery.c maps them (4.3.0 -> nbio_4_3_0, 7.4.0 -> nbio_7_4 in 6.1;
 * 7.9.0 -> nbio_7_9_0, 6.3.1 -> nbif_6_3_1 in v6.12). */
static const struct {
  unsigned ver[3];
  uint32_t req_idx, req, done_idx, done, clients;
} k_models[] = {
    MODEL(4, 3, 0, AMD_NBIO_V4_3_, BIF_BX_PF0_GPU_HDP_FLUSH, BIF_BX_PF_GPU_HDP_FLUSH_DONE),
    MODEL(7, 4, 0, AMD_NBIO_V7_4_, GPU_HDP_FLUSH, GPU_HDP_FLUSH_DONE),
    MODEL(7, 9, 0, AMD_NBIO_V7_9_, BIF_BX_PF0_GPU_HDP_FLUSH, BIF_BX_PF0_GPU_HDP_FLUSH_DONE),
    MODEL(6, 3, 1, AMD_NBIF_V6_3_1_, BIF_BX_PF0_GPU_HDP_FLUSH, BIF_BX_PF0_GPU_HDP_FLUSH_DONE),
};

static bool model_of(const kfd_mock *m, hdp_model *out) {
  const unsigned *v = m->arch->nbif_ver;
  const uint32_t *b = kfd_mock_nbio_base;
  for (size_t i = 0; i < sizeof k_models / sizeof k_models[0]; i++) {
    if (memcmp(k_models[i].ver, v, sizeof k_models[i].ver)) continue;
    *out = (hdp_model){{v[0], v[1], v[2]}, b[k_models[i].req_idx] + k_models[i].req,
                       b[k_models[i].done_idx] + k_models[i].done, k_models[i].clients};
    return true;
  }
  return false;
}

int kfd_mock_hdp_write_wait(kfd_mock *m, unsigned gpu, uint32_t req_reg, uint32_t done_reg, uint32_t value,
                            uint32_t mask, uint32_t *out_done, char *err, size_t err_B) {
  hdp_model h;
  const unsigned *v = m->arch->nbif_ver;
  if (!model_of(m, &h))
    return snprintf(err, err_B, "HDP flush on NBIO %u.%u.%u: the mock models the HDP registers of NBIO 4.3.0, "
                    "6.3.1, 7.4.0 and 7.9.0 only", v[0], v[1], v[2]), -1;
  if (req_reg != h.req || done_reg != h.done)
    return snprintf(err, err_B, "write-wait on registers 0x%x / 0x%x: NBIO %u.%u.%u's HDP_FLUSH_REQ / _DONE are "
                    "0x%x / 0x%x; no other register is modelled", req_reg, done_reg, v[0], v[1], v[2], h.req,
                    h.done), -1;
  if (value & ~h.clients)
    return snprintf(err, err_B, "HDP_FLUSH_REQ value 0x%x sets bits no client owns (clients 0x%x)", value, h.clients), -1;
  m->hdp_done[gpu] |= value; /* the mock's HDP holds no writes: the flush is done at once */
  *out_done = m->hdp_done[gpu] & mask;
  return 0;
}
