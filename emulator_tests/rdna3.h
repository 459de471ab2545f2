/* RDNA3 (gfx11, wave32) interpreter for the AMD mock: runs the machine code LLVM 19 emits for our kernels.
 *
 * rdna3_load decodes the code once into an array of pre-decoded instructions (an unknown instruction is an error
 * naming its encoding, its words and its offset); rdna3_run executes a dispatch workgroup by workgroup, the waves
 * of one workgroup round-robin between s_barrier points, in order (s_waitcnt is a no-op). Every global/flat/scalar
 * memory access goes through rdna3_mem_ops (the mock KFD owns memory); LDS is the interpreter's own, scratch too
 * unless rdna3_dispatch.scratch_va places it in device memory (then through rdna3_mem_ops); both bounds-checked. A failed access is reported like a GPU page fault: the instruction (offset and disassembly), the
 * lane and the address.
 *
 * Facts: encodings and opcode numbers from LLVM's AMDGPU .td files (SOPInstructions.td, VOP1/VOP2/VOP3/VOPC/
 * VOP3P/VOPDInstructions.td, DSInstructions.td, FLATInstructions.td, SMInstructions.td; GFX11 encodings) and
 * mesa's src/amd/compiler/aco_opcodes.py (gfx11 column); kernel descriptor and initial register state from
 * llvm/docs/AMDGPUUsage.rst ("Kernel Descriptor", "Initial Kernel Execution State"); instruction semantics from
 * AMD's "RDNA3 Instruction Set Architecture Reference Guide".
 *
 * Modelled: the instructions in rdna3_ops.h (what LLVM 19 emits for our kernels: SOP1/SOP2/SOPK/SOPC/SOPP, SMEM,
 * VOP1/VOP2/VOPC/VOP3 incl. the SDST forms, VOP3P packed 16-bit, VOPD, DS, GLOBAL/FLAT/SCRATCH, cache
 * invalidates), literals and inline constants (f64 for 64-bit operands, f16 for 16-bit float operands), the MODE
 * register's denormal fields. Transcendentals return the double-precision result rounded once (within the ISA's
 * 1 ULP). Refused with an error naming the instruction: anything else, DPP/SDWA/LDS-direct operands, a rounding
 * mode other than nearest-even, hardware registers other than MODE, clamp on f16 and packed float results and on
 * integer ops other than the saturating add/sub/mad ones, omod outside f32/f64 results. Not modelled: flat addresses in the LDS/scratch apertures (a flat access always goes to rdna3_mem_ops), caches and
 * timing (waves run in order, one at a time). */
#ifndef HCQ_EMU_RDNA3_H
#define HCQ_EMU_RDNA3_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

/* Memory of the device as the mock sees it. read/write return an error status for an address that is not mapped
 * (the interpreter wraps it into a page-fault report). */
typedef struct rdna3_mem_ops {
  void *ctx;
  hcq_status (*read)(void *ctx, uint64_t va, uint32_t size_B, void *out);
  hcq_status (*write)(void *ctx, uint64_t va, uint32_t size_B, const void *in);
} rdna3_mem_ops;

/* The fields of the 64-byte kernel descriptor the interpreter uses (AMDGPUUsage.rst, "Kernel Descriptor"). */
typedef struct rdna3_kd {
  uint32_t group_segment_B;   /* LDS bytes */
  uint32_t private_segment_B; /* scratch bytes per work-item */
  uint32_t kernarg_B;
  int64_t entry_offset_B;     /* kernel_code_entry_byte_offset: code entry relative to the descriptor */
  uint32_t rsrc1, rsrc2, rsrc3;
  uint16_t code_props;        /* kernel_code_properties */
} rdna3_kd;

/* Parse a kernel descriptor (64 bytes, little-endian). Refuses a wave64 kernel (gfx11 wave32 only here). */
hcq_status rdna3_kd_parse(const uint8_t kd[64], rdna3_kd *out);

typedef struct rdna3_program rdna3_program;

/* Decode code[0..code_B) (the code object's text, loaded at code_va) starting at entry_B. */
hcq_status rdna3_load(const uint8_t *code, size_t code_B, uint64_t code_va, size_t entry_B, const rdna3_kd *kd,
                      rdna3_program **out);
void rdna3_free(rdna3_program *p);

/* Number of decoded instructions, and instruction i printed in llvm-objdump's syntax (mnemonic and operands). */
size_t rdna3_count(const rdna3_program *p);
uint32_t rdna3_offset(const rdna3_program *p, size_t i); /* byte offset from the start of code */
void rdna3_print(const rdna3_program *p, size_t i, char *buf, size_t n);

typedef struct rdna3_dispatch {
  uint32_t groups[3];      /* workgroups per dimension */
  uint32_t block[3];       /* work-items per workgroup per dimension */
  uint64_t kernarg_va;
  uint64_t dispatch_ptr_va; /* the AQL packet, for kernels that enable the dispatch pointer */
  /* Non-NULL: s0..s[user_sgpr_count-1] start as these words (what the CP loads from COMPUTE_USER_DATA_*), and the
   * kernarg / dispatch pointers above are not used for the user SGPRs. */
  const uint32_t *user_sgpr;
  uint32_t user_sgpr_count;
  uint64_t max_wave_insts;  /* 0: 1<<32; a wave running longer is reported as a hang */
  uint64_t max_total_insts; /* 0: no limit; else the dispatch stops with HCQ_CODE_TIMEOUT past this many */
  /* Scratch in device memory (the mock's model of gfx11 architected flat scratch): 0 keeps the interpreter's own
   * private memory. Else wave W (counted over the whole dispatch, workgroups in x-y-z order) uses slot
   * W % scratch_slots; lane L's private byte A is at scratch_va + slot * 32 * kd.private_segment_B +
   * L * kd.private_segment_B + A (lane-major, unswizzled: a documented model, not the hardware's interleaving), and
   * goes through rdna3_mem_ops, so it must lie in live memory. */
  uint64_t scratch_va;
  uint32_t scratch_slots;
  /* Optional: called before each executed instruction with one line ("wg X,Y,Z wave W 0xOFF: disassembly
   * | exec=0x.. scc=N"), e.g. for the mock's HCQ_TRACE; slows execution down a lot. */
  void (*trace)(void *user, const char *line);
  void *trace_user;
} rdna3_dispatch;

typedef struct rdna3_stats {
  uint64_t wave_insts;  /* instructions executed, counted once per wave */
  uint64_t lane_insts;  /* per executed instruction, the lanes whose EXEC bit was set when it issued */
} rdna3_stats;

hcq_status rdna3_run(const rdna3_program *p, const rdna3_dispatch *d, const rdna3_mem_ops *mem, rdna3_stats *stats);

#endif
