/* Private interface between the compiler's pass files (pipeline.c and the passes it lists).
 *
 * A pass maps a kernel SINK to a new SINK in the same uop_ctx. Passes that rebuild the DAG node by node use
 * cc_rebuild: a walk in topological order that rebuilds each node from its (already rebuilt) sources and then lets
 * a callback replace it. */
#ifndef HCQ_COMPILER_CC_INTERNAL_H
#define HCQ_COMPILER_CC_INTERNAL_H

#include "compiler/compiler.h"

typedef struct cc_pass_ctx {
  uop_ctx *ctx;
  const cc_target *target;
  const cc_options *opts;
  int acc_count; /* DEFINE_REG numbering (reduce) */
  cc_opt *applied; /* the optimizer's applied opts (malloc'd; moved into the program) */
  size_t napplied;
  bool threads_mapped; /* CPU: THREAD -> SPECIAL done before expansion (cc_pass_cpu_threads) */
} cc_pass_ctx;

typedef hcq_status (*cc_pass_fn)(cc_pass_ctx *pc, const uop *sink, const uop **out_sink);

/* Callback of cc_rebuild: n has its rebuilt sources; return n itself to keep it, another node to replace it, or NULL
 * after setting *st for an error. */
typedef const uop *(*cc_rebuild_fn)(void *user, uop_ctx *ctx, const uop *n, hcq_status *st);
hcq_status cc_rebuild(uop_ctx *ctx, const uop *root, cc_rebuild_fn fn, void *user, const uop **out_root);

/* The passes (pipeline.c holds the ordered table). */
hcq_status cc_pass_symbolic(cc_pass_ctx *pc, const uop *sink, const uop **out_sink);
hcq_status cc_pass_merge_ranges(cc_pass_ctx *pc, const uop *sink, const uop **out_sink);
hcq_status cc_pass_reduce(cc_pass_ctx *pc, const uop *sink, const uop **out_sink);
/* group_reduce.c: REDUCEs over GROUP_REDUCE ranges -> shared-memory partials + BARRIER + a second reduce. */
hcq_status cc_pass_group_reduce(cc_pass_ctx *pc, const uop *sink, const uop **out_sink);
/* CPU: a REDUCE over the THREAD range -> per-thread partials in scratch + BARRIER + combine (before the expander) */
hcq_status cc_pass_thread_reduce(cc_pass_ctx *pc, const uop *sink, const uop **out_sink);
hcq_status cc_pass_gpudims(cc_pass_ctx *pc, const uop *sink, const uop **out_sink);
/* CPU targets: the THREAD range -> SPECIAL before expansion (sets threads_mapped; then cc_pass_gpudims is a no-op) */
hcq_status cc_pass_cpu_threads(cc_pass_ctx *pc, const uop *sink, const uop **out_sink);
hcq_status cc_pass_lower_index(cc_pass_ctx *pc, const uop *sink, const uop **out_sink);
hcq_status cc_pass_decompose(cc_pass_ctx *pc, const uop *sink, const uop **out_sink);
/* vectorize.c: scalar lanes -> vector loads/stores/ALU for targets with vector_max >= 2 (c). */
hcq_status cc_pass_vectorize(cc_pass_ctx *pc, const uop *sink, const uop **out_sink);

/* A RANGE id that no RANGE in nodes[0..count) and no id in taken[0..ntaken) uses (opts.c). Ids are names, not an
 * order: max + 1 normally, the smallest free id >= 0 when max + 1 would overflow. */
hcq_status cc_fresh_range_id(const uop *const *nodes, size_t count, const int64_t *taken, size_t ntaken,
                             int64_t *out_id);

/* Count the nodes of op `op` under root (merge_ranges keeps a merge only if IDIV+MOD do not increase). */
size_t cc_count_ops(uop_ctx *ctx, const uop *root, uop_opset ops);

/* Direct linearizer (the semantics of reference tinygrad/codegen/late/linearize.py): the program as a flat list of
 * statements with RANGE opening a loop and ENDRANGE closing it. Definitions (DEFINE_GLOBAL/VAR/REG, SPECIAL) come
 * first; CONSTs and NOOPs are not listed (renderers inline constants). The array lives in the ctx arena. */
hcq_status cc_linearize(uop_ctx *ctx, const uop *sink, const uop ***out_list, size_t *out_count);
/* The listing of a linear program, one statement per line (for --dump-passes). Malloc'd. */
hcq_status cc_linear_listing(const uop *const *list, size_t count, char **out_text);

/* Fill p->desc (program_desc.c) from the final sink and p->linear/name/symbol: buffers in slot order with their
 * access, variables sorted by name with declared ranges, launch sizes rendered as expressions, shared memory. */
hcq_status cc_program_fill_desc(uop_ctx *ctx, const cc_target *t, const uop *sink, cc_program *p);

/* C renderer: the kernel source for a linear program. *out_src is malloc'd. */
hcq_status cc_render_c(const cc_target *t, const char *name, const uop *const *list, size_t count, char **out_src);
/* PTX renderer (render_ptx.c): one .entry for targets "ptx:sm_XY". *out_src is malloc'd. */
hcq_status cc_render_ptx(const cc_target *t, const char *name, const uop *const *list, size_t count, char **out_src);
/* The PTX ISA version a ptx target is rendered with ("7.5" for sm_80, "7.8" for sm_90), chosen from the sm number
 * (a table of the first ISA version supporting each arch); NULL for a malformed arch. */
const char *cc_ptx_isa_version(const char *arch);

/* LLVM IR renderer (llvm-cpu: the c target's ABI with core_id; amdgpu:*: amdgpu_kernel, addrspace(1) buffers). */
hcq_status cc_render_llvm(const cc_target *t, const char *name, const uop *const *list, size_t count, char **out_src);

/* Shortest text of a float32 value that reads back to the same float ("1.5", "0.1"). buf >= 32 bytes. */
char *cc_fmt_float32(float v, char *buf);

#endif
