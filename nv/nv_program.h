/* nv/: a loaded GPU program (image in GPU memory + its QMD template: V03_00, or V05_00 on Blackwell) and the exec encoder that launches it.
 * The image is whatever the device runs from the program address: a cubin's packed sections on hardware, or the
 * program image the mock's interpreter reads (the mock finds it through the QMD's program address, never a side
 * channel). The cubin reader (nv_cubin.c, another helper) fills nv_program_info from `.nv.info`. */
#ifndef HCQ_NV_PROGRAM_H
#define HCQ_NV_PROGRAM_H

#include <stdint.h>

#include "hcq/queue.h"
#include "nv/nv_dev.h"

typedef struct nv_program_info {
  uint64_t text_offset_B, text_size_B; /* entry code inside the image */
  uint32_t regs;                       /* registers per thread */
  uint32_t shared_B;                   /* static shared memory (0x400 reserved added by the caller, as the reference) */
  uint32_t cbuf0_size_B;               /* constant bank 0 size: parameters start at its param offset */
  uint32_t local_B;                    /* local memory per thread the code needs (0: none) */
} nv_program_info;

typedef struct nv_program {
  nv_mem mem;           /* the image, CPU-visible, plus a 4 KiB prefetch guard */
  uint64_t prog_va;     /* entry address */
  nv_program_info info;
  uint32_t qmd[96];     /* V03_00 (0x100 bytes) or V05_00 (0x180 bytes) template */
} nv_program;

hcq_status nv_program_load(nv_dev *d, const void *image, uint64_t size_B, const nv_program_info *info,
                           nv_program **out);
void nv_program_free(nv_dev *d, nv_program *p); /* NULL is fine */
/* Constant bank 0's driver header (the argument prefix, hcq_args prefix_words = cbuf0_size_B / 4), as the reference
 * fills it (tinygrad ops_nv.py NVProgram): Ampere..Hopper: words 6..11 = the shared window, the local window and
 * the local-memory limit 0xfffdc0, each lo then hi (at least 12 words); Blackwell: words 188..191 = the shared and
 * local windows (lo, hi) and word 223 = 0xfffdc0 (at least 224 words). The rest is zero. */
hcq_status nv_program_cbuf0_prefix(const nv_dev *d, uint32_t *words, uint32_t nwords);
/* The exec encoder (hcq_encoder.exec): prog = hcq_imm((uintptr_t)program). The QMD goes into a
 * 256-aligned slot of the device's QMD memory (nv_qmd_slot, kept until close) as a queue region, so any argument
 * memory works (graph argument slots are packed); grid and block are patched with
 * hcq_queue_patch_region_bits, so graphs replay by patching QMD fields only. */
hcq_status nv_enc_exec(hcq_queue *q, hcq_val prog, const hcq_args *args, const hcq_val global[3],
                       const hcq_val local[3]);

#endif
