/* PTX interpreter of the NV mock: runs the PTX that compiler/render_ptx.c emits (and a little more), so the mock GPU
 * can execute kernels without SASS. Semantics follow NVIDIA's "Parallel Thread Execution ISA" reference (the section
 * names are cited beside each instruction in ptx_exec.c / ptx_fp.c).
 *
 *   ptx_module_parse(text)  parse once into a pre-decoded form: typed virtual registers as rows of a per-warp
 *                           register file, immediates and special registers as rows too, labels resolved to
 *                           instruction indices, parameter and shared symbols resolved to offsets.
 *   ptx_launch_run(m, &l)   run grid x block threads: every block's threads run in warps of 32 lanes (SIMT with an
 *                           active mask; diverged lanes reconverge at the lowest pc) up to each bar.sync, which all
 *                           threads of the block must reach (a divergent or partial barrier is an error).
 *
 * Global memory is reached only through ptx_mem_ops (the NV mock owns it: it checks every access against live
 * allocations); a failed access is reported like an MMU fault naming the instruction (line and text), the thread,
 * the block and the address. Shared memory is per block, .local memory per thread, both bounds-checked; parameters come from a byte buffer
 * (constant bank 0) at the offsets the caller gives (from the cubin's .nv.info) or, without offsets, the natural
 * layout of the .param list. */
#ifndef HCQ_EMU_PTX_INTERP_H
#define HCQ_EMU_PTX_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

typedef struct ptx_mem_ops {
  void *ctx;
  /* Copy size_B bytes at virtual address va into out / from in. An error (e.g. no live allocation there) becomes
   * the kernel's MMU fault; its message is kept in the fault's. */
  hcq_status (*read)(void *ctx, uint64_t va, size_t size_B, void *out);
  hcq_status (*write)(void *ctx, uint64_t va, size_t size_B, const void *in);
} ptx_mem_ops;

typedef struct ptx_module ptx_module;

typedef struct ptx_param_info {
  const char *name;
  uint32_t size_B, align_B, offset_B; /* offset_B: natural layout (each aligned to align_B, in order) */
} ptx_param_info;

typedef struct ptx_entry_info {
  const char *name;
  const ptx_param_info *params;
  size_t nparams;
  uint32_t params_size_B;   /* natural layout's total */
  uint32_t static_shared_B; /* the .shared variables the entry can reach */
  uint32_t static_local_B;  /* the entry's .local variables (per thread) */
  uint32_t maxntid[3];      /* .maxntid / .reqntid, 0 when absent */
  bool reqntid;             /* .reqntid: the block must be exactly maxntid */
  size_t ninstructions;
} ptx_entry_info;

/* Parse PTX text (len bytes, need not be NUL-terminated). Errors name the line and the statement. */
hcq_status ptx_module_parse(const char *text, size_t len, ptx_module **out);
void ptx_module_free(ptx_module *m);
/* The entry named name (NULL: the only/first one); NOT_FOUND lists the module's entries. */
hcq_status ptx_module_entry(const ptx_module *m, const char *name, const ptx_entry_info **out);

typedef struct ptx_launch {
  const char *entry;            /* NULL: the first entry */
  uint32_t grid[3], block[3];   /* blocks per grid, threads per block (0 is refused) */
  const void *params;           /* constant bank 0 bytes */
  size_t params_size_B;
  const uint32_t *param_offsets; /* per .param, its byte offset in params; NULL: the natural layout */
  size_t nparam_offsets;
  uint32_t shared_size_B;       /* shared window per block; 0: the entry's static shared size; less is refused */
  /* local window per thread (a GPU's from the QMD) when local_size_given, else the entry's .local size; an access
   * outside it or outside the entry's .local variables is a fault like an MMU fault */
  uint32_t local_size_B;
  bool local_size_given;
  const ptx_mem_ops *mem;
  uint64_t max_warp_instructions; /* a watchdog: more issued instructions is an error (a hang); 0: no limit */
} ptx_launch;

typedef struct ptx_stats {
  uint64_t thread_instructions; /* instructions executed, counted per active thread */
  uint64_t warp_instructions;   /* instructions issued, counted per warp */
} ptx_stats;

/* Run the launch to completion. out_stats may be NULL. A fault stops the launch (memory written before it stays). */
hcq_status ptx_launch_run(const ptx_module *m, const ptx_launch *l, ptx_stats *out_stats);

#endif
