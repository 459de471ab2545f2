/* The program image the NV driver uploads, and how a GPU without SASS (the NV mock) finds the PTX in it.
 *
 * Layout in GPU memory (one allocation, what nv_program_load copies):
 *
 *   [PTX text][zero padding][nv_image_record: 256 bytes][cubin .text of the kernel ...]
 *                                                         ^ the QMD's program address (256-aligned)
 *
 * Hardware runs the SASS at the program address and never reads the bytes before it. The mock reads the record
 * right below the program address the QMD names (bytes the driver put in GPU memory, through the mock's checked
 * memory), then the PTX it points back to, and interprets that: no side channel between driver and mock. The record
 * also carries the parameter offsets in constant bank 0 that the cubin's .nv.info states, so the mock reads the
 * arguments where the hardware would. */
#ifndef HCQ_NV_IMAGE_H
#define HCQ_NV_IMAGE_H

#include <stdint.h>

#define NV_IMAGE_MAGIC "HCQPTXv1"
#define NV_IMAGE_RECORD_B 256u
#define NV_IMAGE_MAX_PARAMS 48u

typedef struct nv_image_record {
  char magic[8];           /* NV_IMAGE_MAGIC */
  uint32_t ptx_back_B;     /* the PTX starts this many bytes below the program address */
  uint32_t ptx_size_B;
  uint32_t param_base_B;   /* where the parameters start in constant bank 0 (EIATTR_PARAM_CBANK) */
  uint32_t nparams;        /* .param entries of the kernel, in order */
  uint32_t param_offset_B[NV_IMAGE_MAX_PARAMS]; /* from param_base_B (EIATTR_KPARAM_INFO) */
  uint32_t reserved[NV_IMAGE_RECORD_B / 4 - 4 - 2 - NV_IMAGE_MAX_PARAMS];
} nv_image_record;

_Static_assert(sizeof(nv_image_record) == NV_IMAGE_RECORD_B, "nv_image_record is 256 bytes");

#endif
