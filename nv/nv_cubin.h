/* nv_cubin: reading a cubin as /usr/local/cuda/bin/ptxas makes it from our PTX (one .entry per file).
 *
 * Sources (public): the ELF header values EM_CUDA (190) and, in LLVM's llvm/include/llvm/BinaryFormat/ELF.h,
 * ELFABIVERSION_CUDA_V1 (7: EF_CUDA_SM = e_flags & 0xff) and ELFABIVERSION_CUDA_V2 (8: EF_CUDA_SM_MASK 0xff00,
 * EF_CUDA_SM_OFFSET 8); the cubin sections and .nv.info records as tinygrad reads them in
 * tinygrad/runtime/ops_nv.py (NVProgram: `.text.<fn>`, `.nv.shared.<fn>`, `.nv.constant0.<fn>`, and `.nv.info*` as
 * records of (u8 format, u8 attribute, u16 size-or-value) where format 4 (EIFMT_SVAL) is followed by `size` bytes);
 * attribute numbers as NVIDIA's `cuobjdump -elf` names them (EIATTR_MAX_THREADS 0x05, EIATTR_PARAM_CBANK 0x0a,
 * EIATTR_REQNTID 0x10, EIATTR_FRAME_SIZE 0x11, EIATTR_MIN_STACK_SIZE 0x12, EIATTR_KPARAM_INFO 0x17,
 * EIATTR_CBANK_PARAM_SIZE 0x19, EIATTR_MAX_STACK_SIZE 0x23, EIATTR_REGCOUNT 0x2f). Record layouts:
 *  - EIATTR_PARAM_CBANK (SVAL 8): u32 symbol of .nv.constant0.<fn>, u16 offset of the parameters in bank 0, u16 size;
 *  - EIATTR_KPARAM_INFO (SVAL 12): u32 index, u16 ordinal, u16 offset, u32 flags with the size in bits 18-31;
 *  - EIATTR_CBANK_PARAM_SIZE (HVAL): the parameter bytes;
 *  - EIATTR_MAX_THREADS / EIATTR_REQNTID (SVAL 12): x, y, z;
 *  - in .nv.info: EIATTR_REGCOUNT, EIATTR_FRAME_SIZE, EIATTR_MIN/MAX_STACK_SIZE (SVAL 8): u32 function symbol, u32 value.
 * Everything is read through elf/ (validated views); malformed input is an error naming the section and offset; a
 * cubin for another SM than asked for is refused naming both. */
#ifndef HCQ_NV_CUBIN_H
#define HCQ_NV_CUBIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

enum {
  NV_EIFMT_NVAL = 1, NV_EIFMT_BVAL = 2, NV_EIFMT_HVAL = 3, NV_EIFMT_SVAL = 4,
  NV_EIATTR_MAX_THREADS = 0x05, NV_EIATTR_PARAM_CBANK = 0x0a, NV_EIATTR_REQNTID = 0x10, NV_EIATTR_FRAME_SIZE = 0x11,
  NV_EIATTR_MIN_STACK_SIZE = 0x12, NV_EIATTR_KPARAM_INFO = 0x17, NV_EIATTR_CBANK_PARAM_SIZE = 0x19,
  NV_EIATTR_MAX_STACK_SIZE = 0x23, NV_EIATTR_REGCOUNT = 0x2f,
};

typedef struct nv_cubin_param {
  uint32_t ordinal, offset_B, size_B; /* offset from the start of the parameters in constant bank 0 */
} nv_cubin_param;

typedef struct nv_cubin {
  unsigned sm;          /* 80, 90, ... from e_flags */
  uint32_t e_flags;
  uint8_t abi_version;  /* 7 or 8 */
  char name[128];       /* the kernel (its FUNC symbol) */
  const uint8_t *code;  /* .text.<name> in the caller's buffer */
  uint64_t code_size_B;
  uint64_t code_offset; /* of .text.<name> in the file */
  uint32_t cbank0_size_B;        /* .nv.constant0.<name> */
  uint32_t param_cbank_offset_B; /* EIATTR_PARAM_CBANK: where the parameters start in bank 0 */
  uint32_t param_size_B;         /* EIATTR_CBANK_PARAM_SIZE (equal to EIATTR_PARAM_CBANK's size) */
  nv_cubin_param *params;        /* EIATTR_KPARAM_INFO, sorted by ordinal; owned */
  size_t nparams;
  uint32_t max_threads[3];       /* EIATTR_MAX_THREADS (0 when absent) */
  uint32_t reqntid[3];           /* EIATTR_REQNTID (0 when absent) */
  uint32_t regcount;             /* EIATTR_REGCOUNT */
  uint32_t frame_size_B, min_stack_size_B, max_stack_size_B; /* local memory per thread */
  uint64_t shared_B;             /* .nv.shared.<name> (0 when absent; on sm_90 it includes the reserved 1 KiB) */
} nv_cubin;

/* The SM a cubin's e_flags names for its ABI version, or 0 when the version is not 7 or 8. */
unsigned nv_cubin_sm(uint32_t e_flags, uint8_t abi_version);
/* Parse a cubin. want_sm (0: any) must match; name NULL takes the only kernel. The views point into `data`, which
 * must outlive *out; free with nv_cubin_free. */
hcq_status nv_cubin_parse(const void *data, size_t size_B, unsigned want_sm, const char *name, nv_cubin *out);
void nv_cubin_free(nv_cubin *c);

#endif
