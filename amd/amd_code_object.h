/* amd_code_object: reading an AMDGPU HSA code object (HSACO) as ld.lld-19 links it for our amdgpu:* targets.
 *
 * Sources (LLVM's public AMDGPU documentation, llvm/docs/AMDGPUUsage.rst, LLVM 19/20):
 *  - "ELF Header": ELFCLASS64, EM_AMDGPU, EI_OSABI ELFOSABI_AMDGPU_HSA (64), EI_ABIVERSION 2/3/4 for code object
 *    V4/V5/V6; e_flags bits 0-7 are EF_AMDGPU_MACH (table "AMDGPU EF_AMDGPU_MACH Values": gfx90a 0x03f, gfx1100
 *    0x041, gfx942 0x04c, gfx1201 0x04e), bits 8-9 EF_AMDGPU_FEATURE_XNACK_V4, bits 10-11 ..._SRAMECC_V4.
 *  - "Note Records": one note named "AMDGPU" of type NT_AMDGPU_METADATA (32) holding MessagePack metadata
 *    ("Code Object V3 Metadata" and later): amdhsa.target, amdhsa.kernels[] with .name, .symbol, .kernarg_segment_size,
 *    .group_segment_fixed_size, .private_segment_fixed_size, .wavefront_size, .sgpr_count, .vgpr_count and .args[]
 *    (.name, .offset, .size, .value_kind).
 *  - "Kernel Descriptor": 64 bytes, 64-byte aligned, at symbol <name>.kd: group/private segment fixed size (bytes
 *    0/4), kernarg size (8), kernel_code_entry_byte_offset (16, signed, from the descriptor's own address),
 *    compute_pgm_rsrc3/1/2 (44/48/52), kernel_code_properties (56, 16 bits), kernarg_preload (58, 16 bits).
 * Everything is read through elf/ (validated views); a malformed file is an error naming what and where; a code
 * object for another target than the one asked for is refused naming both. */
#ifndef HCQ_AMD_CODE_OBJECT_H
#define HCQ_AMD_CODE_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

/* EF_AMDGPU_* and note values the reader uses (AMDGPUUsage.rst, see above; not in the system <elf.h>). */
#define AMD_ELFOSABI_AMDGPU_HSA 64
#define AMD_EF_AMDGPU_MACH 0x0ffu
#define AMD_EF_AMDGPU_FEATURE_XNACK_V4 0x300u
#define AMD_EF_AMDGPU_FEATURE_SRAMECC_V4 0xc00u
#define AMD_NT_AMDGPU_METADATA 32
#define AMD_KD_SIZE_B 64

/* kernel_code_properties bits (AMDGPUUsage.rst "Kernel Descriptor": bit 0 ENABLE_SGPR_PRIVATE_SEGMENT_BUFFER ...
 * bit 6 ENABLE_SGPR_PRIVATE_SEGMENT_SIZE, bit 10 ENABLE_WAVEFRONT_SIZE32, bit 11 USES_DYNAMIC_STACK). */
enum {
  AMD_KCP_PRIVATE_SEGMENT_BUFFER = 1u << 0,
  AMD_KCP_DISPATCH_PTR = 1u << 1,
  AMD_KCP_QUEUE_PTR = 1u << 2,
  AMD_KCP_KERNARG_SEGMENT_PTR = 1u << 3,
  AMD_KCP_DISPATCH_ID = 1u << 4,
  AMD_KCP_FLAT_SCRATCH_INIT = 1u << 5,
  AMD_KCP_PRIVATE_SEGMENT_SIZE = 1u << 6,
  AMD_KCP_WAVEFRONT_SIZE32 = 1u << 10,
  AMD_KCP_USES_DYNAMIC_STACK = 1u << 11,
};

/* The 64-byte kernel descriptor, field by field. */
typedef struct amd_kernel_descriptor {
  uint32_t group_segment_fixed_size;
  uint32_t private_segment_fixed_size;
  uint32_t kernarg_size;
  int64_t kernel_code_entry_byte_offset;
  uint32_t compute_pgm_rsrc3, compute_pgm_rsrc1, compute_pgm_rsrc2;
  uint16_t kernel_code_properties;
  uint16_t kernarg_preload;
} amd_kernel_descriptor;

typedef struct amd_kernel_arg {
  char name[64];       /* "" when the metadata has none */
  char value_kind[32]; /* global_buffer, by_value, hidden_* ... */
  uint32_t offset, size;
} amd_kernel_arg;

typedef struct amd_kernel {
  char name[128];
  char symbol[136]; /* the descriptor's symbol, <name>.kd */
  uint32_t kernarg_segment_size, group_segment_fixed_size, private_segment_fixed_size;
  uint32_t wavefront_size, sgpr_count, vgpr_count;
  amd_kernel_arg *args;
  size_t nargs;
  amd_kernel_descriptor kd;
  uint64_t kd_vaddr;   /* address of the descriptor in the code object */
  uint64_t entry_vaddr; /* kd_vaddr + kernel_code_entry_byte_offset: inside an executable section */
  uint32_t user_sgpr_count; /* compute_pgm_rsrc2 bits 1-5 (USER_SGPR_COUNT) */
} amd_kernel;

typedef struct amd_code_object {
  char target[32]; /* "gfx1100", from e_flags */
  uint32_t mach;   /* EF_AMDGPU_MACH */
  uint32_t e_flags;
  uint8_t abi_version;
  char metadata_target[96]; /* amdhsa.target, e.g. "amdgcn-amd-amdhsa--gfx1100" */
  amd_kernel *kernels;
  size_t nkernels;
} amd_code_object;

/* The gfx name for an EF_AMDGPU_MACH value we support (gfx1100, gfx90a, gfx942, gfx1201), or NULL. */
const char *amd_mach_name(uint32_t mach);

/* Parse a code object. want_target ("gfx1100"; NULL accepts any supported target) must match its e_flags and its
 * metadata's amdhsa.target. *out is filled and owns the kernels array: free it with amd_code_object_free. */
hcq_status amd_code_object_parse(const void *data, size_t size_B, const char *want_target, amd_code_object *out);
void amd_code_object_free(amd_code_object *co);
/* The kernel with this name (NULL: the only one); HCQ_CODE_NOT_FOUND names it and lists what there is. */
hcq_status amd_code_object_kernel(const amd_code_object *co, const char *name, const amd_kernel **out);

#endif
