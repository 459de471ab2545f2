/* compiler: kernel AST (uop DAG rooted at a SINK of STOREs) -> optimized, linearized program -> source -> binary.
 *
 * Contract shared by the compiler's files (pipeline, opts, renderers, toolchain drivers) and its users (hcq run,
 * the CPU device, bench). Everything a compile creates lives in the caller's uop_ctx or in the cc_program.
 *
 * Files (planned): compiler.h (this), target.c (target table), kernel_text.c (kernel grammar, see docs/FORMATS.md),
 * interp.c (reference interpreter), pipeline.c (the pass table), opts.c + heuristic.c, expander.c, reduce.c
 * (REDUCE -> accumulators), gpudims.c, decomp.c, vectorize.c (lanes -> vector loads/stores/ALU, c), linearize.c, render_c.c, render_ptx.c, render_llvm.c,
 * toolchain.c (external compilers), cache.c (on-disk compile cache).
 */
#ifndef HCQ_COMPILER_H
#define HCQ_COMPILER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hcq/program.h"
#include "base/status.h"
#include "uop/uop.h"

/* ------------------------------------------------------------------------------------------------ targets */

typedef enum cc_target_kind { CC_TARGET_C, CC_TARGET_PTX, CC_TARGET_AMDGPU, CC_TARGET_LLVM_CPU } cc_target_kind;

/* A target is data: capabilities, limits and supported ops; the renderer is chosen by kind. */
typedef struct cc_target {
  char name[32];            /* "c", "ptx:sm_90", "amdgpu:gfx1100", "llvm-cpu" */
  cc_target_kind kind;
  char arch[16];            /* "x86_64"/"aarch64"/"armhf" (c, llvm-cpu), "sm_90", "gfx1100" */
  bool has_local;           /* workgroups/local ids (GPU) */
  bool has_threads;         /* THREAD opt: core_id argument (CPU) */
  bool has_shared;          /* shared memory (DEFINE_LOCAL) */
  bool supports_float4;     /* vector loads/stores of float/half by 4/2 */
  int vector_max;           /* c: widest float32 vector the vectorize pass builds (lanes; < 2 = pass off): 4, 8 with
                             * AVX2, 16 with AVX-512 on an x86_64 host; $HCQ_VECTOR_MAX overrides */
  int64_t buf_align_B;      /* c: guaranteed alignment of every buffer argument (the CPU device maps pages) */
  bool cpu_tiles;           /* heuristic: CPU register/transpose tiles instead of the reference's upcasts (c,
                               llvm-cpu; off = the reference's choices) */
  int64_t nt_store_min_B;   /* c on x86_64: non-temporal stores into outputs of at least this size the kernel never
                               reads (0: never) */
  bool fmax_f32_rendered;   /* c: float32 MAX reaches the renderer (render_c.c's HCQ_FMAX macros: IEEE maximum,
                               AVX-512DQ vrangeps where the kernel's ISA has it); else decomposed (decomp.c) */
  bool no_fp_contract;      /* c: -ffp-contract=off, float a*b+c rounded twice like the interpreter (tests; default:
                               the C compiler may fuse it into one fma, as documented) */
  int64_t global_max[3];    /* c: {threads, 0, 0} */
  int64_t local_max[3];
  int64_t shared_max_B;
  uop_opset supported_ops;  /* ALU ops the renderer emits directly; others are decomposed */
  uop_opset f64_decomposed_ops; /* of supported_ops, those still decomposed for float64 (AMDGPU: exp2/log2/sin) */
} cc_target;

/* Fill *out for a target name ("c", "c:aarch64", "llvm-cpu", "ptx:sm_80", "ptx:sm_90", "amdgpu:gfx1100",
 * "amdgpu:gfx90a", "amdgpu:gfx942", "amdgpu:gfx1201"). `threads` sets global_max[0] for CPU targets (<=0: the
 * number of online cores). Unknown names: an error listing the known ones. */
hcq_status cc_target_get(const char *name, int threads, cc_target *out);
/* The arch name of this build's host in target and image names: "x86_64", "aarch64", "armhf" or "unknown". */
const char *cc_host_arch(void);

/* ------------------------------------------------------------------------------------------------ opts */

typedef enum cc_opt_op {
  CC_OPT_UPCAST, CC_OPT_UNROLL, CC_OPT_LOCAL, CC_OPT_GROUP, CC_OPT_GROUPTOP, CC_OPT_THREAD, CC_OPT_NOLOCALS,
  CC_OPT_PADTO, CC_OPT_SWAP, CC_OPT_TC, CC_OPT_KBLOCK, CC_OPT_COUNT
} cc_opt_op;

typedef struct cc_opt {
  cc_opt_op op;
  int axis;        /* axis index as in the reference (ranges of size > 1 in scheduler order) */
  int64_t amount;  /* 0 = the whole axis */
} cc_opt;

/* Parse "UPCAST:0:4,THREAD:0:2" (errors name the item and position). *out_opts is malloc'd. */
hcq_status cc_opts_parse(const char *text, cc_opt **out_opts, size_t *out_count);
/* The inverse: "UPCAST:0:4,THREAD:0:2" ("" for none), malloc'd; NULL only when out of memory. */
char *cc_opts_format(const cc_opt *opts, size_t n);
const char *cc_opt_name(cc_opt_op op);

typedef struct cc_options {
  const cc_opt *opts;   /* explicit opts; NULL = run the hand-coded heuristic (unless noopt) */
  size_t nopts;
  bool noopt;           /* no opts, no heuristic */
  void (*dump)(void *user, const char *pass_name, const char *text); /* per-pass dump (hcq compile --dump-passes) */
  void *dump_user;
} cc_options;

/* ------------------------------------------------------------------------------------------------ programs */

/* The result of a compile: `desc` is its device-facing part (hcq/program.h), filled once by the pipeline: buffers,
 * variables, launch sizes as expressions (evaluate with hcq_program_launch_dims), shared memory. The rest is
 * compiler-only. */
typedef struct cc_program {
  char *name;                  /* the kernel's name as the user wrote it (for messages) */
  char *symbol;                /* its function symbol: `name` mangled to a C/PTX/LLVM identifier (k_int for int) */
  char *source;                /* rendered source (C / PTX / LLVM IR) */
  uint8_t *binary;             /* compiled object/code object; NULL until compiled */
  size_t binary_size_B;
  hcq_program desc;            /* its binary is NULL: cc_program_describe adds it */
  hcq_status desc_status;      /* HCQ_OK, or why desc is incomplete though the kernel compiled (buffer slots with
                                  gaps: params[i].slot is then the kernel's slot; too many parameters; names or
                                  launch sizes too long); cc_program_describe returns it */
  const uop **linear;          /* the linearized program (in the ctx) */
  size_t nlinear;
  cc_opt *applied_opts;        /* what the optimizer applied (explicit or chosen by the heuristic) */
  size_t napplied_opts;
  double pipeline_ms;          /* time from AST to source text */
  double external_ms;          /* time in the external compiler (0 if cached or not compiled) */
} cc_program;

/* AST -> source text (no external compiler). */
hcq_status cc_compile_source(uop_ctx *ctx, const uop *kernel, const cc_target *t, const cc_options *o,
                             cc_program **out_prog);
/* Source -> binary through the toolchain driver and the compile cache; fills prog->binary. */
hcq_status cc_compile_binary(const cc_target *t, cc_program *prog);
void cc_program_free(cc_program *prog);
/* The launch sizes of prog for variable values by name (hcq_program_var_values + hcq_program_launch_dims, the one
 * evaluator); each must lie in 1..max_dim. */
hcq_status cc_program_launch_dims(const cc_program *prog, const hcq_var *vars, size_t n, int64_t max_dim,
                                  int64_t global[3], int64_t local[3]);
/* A launch size expression's value when it names no variable, else -1 (tests). */
int64_t cc_launch_const(const char *expr);
/* prog->desc with `binary` pointing into prog (describe again after cc_compile_binary) and the target named t. */
hcq_status cc_program_describe(const cc_program *prog, const cc_target *t, hcq_program *out);

#endif
