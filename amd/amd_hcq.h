/* The AMD device as an hcq_device: the hcq_encoder writes PM4 (compute queues) and SDMA (copy queues) from the
 * first word, every symbolic operand recorded as a patch, and submit copies the words into the hardware ring.
 * Signals: PM4 writes the full 64-bit value (RELEASE_MEM DATA_SEL 64-bit); SDMA's FENCE writes 32 bits, so a value
 * there must fit 32 bits (a larger one fails the record or the submit, never truncates; the high word stays 0 from
 * the signal's 64-bit initialisation). Waits compare the low 32 bits (pitfall P1 of the reference).
 *
 * Programs (until the runtime seams land the shared program description): `prog` is the GPU address of a kernel
 * descriptor (LLVM AMDGPUUsage "Kernel Descriptor" layout) in memory this device can read, as AQL's kernel_object.
 * User SGPRs: what kernel_code_properties enables, built by amd_user_sgprs (amd_dispatch.h; the dispatch packet image
 * goes after the kernel arguments). Scratch (RSRC2.SCRATCH_EN, private_segment_fixed_size): architected flat scratch
 * on gfx11+ and gfx942 (COMPUTE_DISPATCH_SCRATCH_BASE + TMPRING_SIZE), the private segment buffer V# and flat scratch
 * init on gfx90a (amd_scratch.h). Memory barriers flush the HDP first (amd_nbio.h).
 *
 * Copies: SDMA COPY_LINEAR on copy queues, CP DMA (DMA_DATA) on compute queues, each split at its packet's byte limit
 * (amd_sdma_pkt.h, amd_pm4.h). A symbolic size is one packet whose count is patched, so its declared range must fit
 * one packet (else UNSUPPORTED); symbolic addresses of later chunks and timestamps (sig + 8) are derived symbols.
 * Timestamps are the GPU's 100 MHz counter (ops_amd.py AMDSignal: timestamp_divider=100, ticks per microsecond):
 * the device sets its hcq_device timestamp rate and the offset to hcq_now_ns() measured through KFD
 * GET_CLOCK_COUNTERS at open, so hcq_signal_timestamp_ns() gives ns on the host's clock. */
#ifndef HCQ_AMD_HCQ_H
#define HCQ_AMD_HCQ_H

#include "amd/amd_device.h"
#include "amd/amd_scratch.h"
#include "hcq/device.h"
#include "uop/uop.h"

#define AMD_HCQ_SUBMIT_LOG 64u /* compute submits whose ring start is kept, for fault naming (a power of 2) */

typedef struct amd_hcq {
  hcq_device dev;
  amd_device *amd;
  uop_ctx *ctx;      /* symbols the encoder derives (SDMA count = size - 1, later chunks' addresses, sig + 8) */
  uint32_t *scratch; /* SDMA packet sizes while submitting */
  size_t scratch_cap;
  struct amd_hcq_prog *progs; /* programs loaded through program_load (amd_hcq_rt.c) */
  char last_kernel[64];       /* the last kernel encoded into a queue, for fault messages */
  amd_scratch scratch_ring;   /* private segment memory of every kernel on this device (amd_scratch.h) */
  uint32_t pgm_lo_reg;        /* COMPUTE_PGM_LO (absolute), to find the program in the ring's words */
  uint64_t submit_start[AMD_HCQ_SUBMIT_LOG]; /* compute ring position (dwords) where submit i began, at i % LOG */
  uint64_t nsubmits;
  hcq_status fault;           /* a fault seen by a wait, not reported yet */
} amd_hcq;

hcq_status amd_hcq_open(kif *k, unsigned index, const amd_device_options *opts, amd_hcq **out);
void amd_hcq_close(amd_hcq *h);

/* Kernel descriptor fields the dispatch needs (byte offsets from LLVM AMDGPUUsage, "Kernel Descriptor"). Named apart
 * from the HSACO reader's amd_kernel_descriptor (amd/amd_code_object.h, another branch), which should replace it. */
typedef struct amd_hcq_kd {
  uint32_t group_segment_B, private_segment_B, kernarg_B;
  int64_t entry_offset;
  uint32_t rsrc1, rsrc2, rsrc3;
  uint16_t properties;
} amd_hcq_kd;
#define AMD_HCQ_KD_SIZE_B 64u
#define AMD_HCQ_KD_PROP_PRIVATE_SEGMENT_BUFFER 0x1u
#define AMD_HCQ_KD_PROP_DISPATCH_PTR 0x2u
#define AMD_HCQ_KD_PROP_QUEUE_PTR 0x4u
#define AMD_HCQ_KD_PROP_KERNARG_SEGMENT_PTR 0x8u
#define AMD_HCQ_KD_PROP_DISPATCH_ID 0x10u
#define AMD_HCQ_KD_PROP_FLAT_SCRATCH_INIT 0x20u
#define AMD_HCQ_KD_PROP_PRIVATE_SEGMENT_SIZE 0x40u
#define AMD_HCQ_KD_PROP_WAVE32 0x400u
/* Parse 64 bytes of kernel descriptor. */
void amd_hcq_kd_parse(const uint8_t kd[AMD_HCQ_KD_SIZE_B], amd_hcq_kd *out);

#endif
