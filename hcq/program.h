/* hcq_program: the one description of a compiled kernel that the compiler produces (cc_program_describe), AOT
 * images store (cpu/cpu_image.h serializes it), and every device loads (hcq_device_ops.program_load).
 *
 * It holds what a device and a launcher need and nothing compiler-private: names, the binary (borrowed), the target
 * string, launch sizes as expressions over the kernel's variables, the parameters with explicit kinds and their
 * place in the kernel-argument memory, and resource sizes where known.
 *
 * Kernel-argument layout, computed here only (hcq_program_layout): after `prefix_B` bytes the device reserves (NV:
 * constant buffer 0 header; CPU/AMD: none), every buffer's u64 device address in slot order, then every variable as
 * an int32, in the program's variable order (the reference's CLikeArgsState, tinygrad/runtime/support/hcq.py). A
 * device whose binary states its own offsets (AMD code-object kernarg metadata, NV .nv.info parameter offsets)
 * overrides offset_B/size_B and kernarg_size_B in its program_load hook.
 *
 * Launch sizes are infix text (integers, variable names, + - * and // (floor) / % with C precedence, parentheses,
 * unary -, max(a, b), min(a, b)) evaluated by hcq_expr_eval, the one evaluator every launcher uses. This file and
 * program.c need no allocation and no stdio, so the bare-metal port can use them. */
#ifndef HCQ_PROGRAM_H
#define HCQ_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

#define HCQ_PROGRAM_NAME_B 64
#define HCQ_PROGRAM_EXPR_B 128
#define HCQ_PROGRAM_MAX_PARAMS 32 /* buffers + variables */

typedef enum hcq_param_kind { HCQ_PARAM_BUFFER = 1, HCQ_PARAM_VAR = 2 } hcq_param_kind;
enum { HCQ_ACCESS_READ = 1u, HCQ_ACCESS_WRITE = 2u };

typedef struct hcq_param {
  hcq_param_kind kind;
  char name[HCQ_PROGRAM_NAME_B]; /* variables: the kernel's variable name; buffers: "" */
  int slot;                      /* buffers: the DEFINE_GLOBAL slot; variables: position among the variables */
  char dtype[16];                /* buffers: element dtype ("float32"); variables: "int32" */
  int64_t nelems;                /* buffers: elements (-1: unknown) */
  unsigned access;               /* buffers: HCQ_ACCESS_*; 0 = a parameter the code never touches */
  bool ranged;                   /* variables: [min, max] is the declared range the kernel was compiled for */
  int64_t min, max;
  uint32_t offset_B, size_B;     /* place in the kernel-argument memory */
} hcq_param;

typedef struct hcq_program {
  char name[HCQ_PROGRAM_NAME_B];   /* for messages */
  char symbol[HCQ_PROGRAM_NAME_B]; /* the kernel's symbol in the binary */
  char target[32];                 /* compiler target string: "c", "c:aarch64", "ptx:sm_90", "amdgpu:gfx1100" */
  const uint8_t *binary;           /* borrowed: object / linked image / cubin / code object */
  size_t binary_size_B;
  char global[3][HCQ_PROGRAM_EXPR_B]; /* launch sizes ("1" where unused) */
  char local[3][HCQ_PROGRAM_EXPR_B];
  size_t nparams;                  /* buffers first (slots 0..nbufs-1 in order), then the variables */
  hcq_param params[HCQ_PROGRAM_MAX_PARAMS];
  uint32_t kernarg_prefix_B, kernarg_size_B;
  uint32_t shared_B, private_B;    /* shared/LDS and private/scratch bytes per workgroup/lane (0: none/unknown) */
  int32_t registers;               /* per lane, -1 unknown */
} hcq_program;

/* A variable's value by name (same layout as uop_var_val). */
typedef struct hcq_var {
  const char *name;
  int64_t value;
} hcq_var;

/* The default layout's rule, the one place it is written (hcq_program_layout, hcq_args, the CPU device's and the
 * fake GPU's EXEC decoders use it): buffer i's address, then value i after nbufs buffers. */
static inline uint32_t hcq_kernarg_buf_offset_B(uint32_t prefix_B, uint32_t i) { return prefix_B + 8u * i; }
static inline uint32_t hcq_kernarg_val_offset_B(uint32_t prefix_B, uint32_t nbufs, uint32_t i) {
  return prefix_B + 8u * nbufs + 4u * i;
}
static inline uint32_t hcq_kernarg_size_B(uint32_t prefix_B, uint32_t nbufs, uint32_t nvals) {
  return hcq_kernarg_val_offset_B(prefix_B, nbufs, nvals);
}

/* An empty program (every launch size "1", registers -1). */
void hcq_program_init(hcq_program *p);
/* Append a buffer (slot = number of buffers so far) or a variable. Errors: too many, name too long, a buffer
 * after a variable. */
hcq_status hcq_program_add_buffer(hcq_program *p, const char *dtype, int64_t nelems, unsigned access);
hcq_status hcq_program_add_var(hcq_program *p, const char *name, bool ranged, int64_t min, int64_t max);
size_t hcq_program_nbufs(const hcq_program *p);
size_t hcq_program_nvars(const hcq_program *p);
/* The i-th variable's parameter (i < nvars). */
const hcq_param *hcq_program_var(const hcq_program *p, size_t i);

/* The default kernel-argument layout (see the top of this file) after prefix_B bytes. */
hcq_status hcq_program_layout(hcq_program *p, uint32_t prefix_B);
/* Structural checks every loader runs: names set, parameters ordered, layout inside kernarg_size_B without
 * overlaps, launch expressions that parse. Messages name the program and the field. */
hcq_status hcq_program_check(const hcq_program *p);

/* Evaluate an infix expression (grammar at the top) with names[i] = values[i]. Errors name the position. */
hcq_status hcq_expr_eval(const char *expr, const char *const *names, const int64_t *values, size_t n, int64_t *out);

/* The same evaluator in two steps, for launchers that evaluate one expression many times: compile the text once
 * against the variable names (postfix code; variables become indices into names), then run it per launch with
 * values[i] for names[i] and no text work. At most HCQ_EXPR_CODE_MAX operations (one per token at most, so any
 * launch-size field fits). hcq_expr_run takes only code that hcq_expr_compile produced; its one error is a division
 * by zero. */
#define HCQ_EXPR_CODE_MAX 128
#define HCQ_EXPR_CODE_MAX_TEXT "128"
typedef struct hcq_expr_code {
  uint32_t n, nvars;
  uint8_t op[HCQ_EXPR_CODE_MAX];
  int64_t arg[HCQ_EXPR_CODE_MAX]; /* a constant or a variable index */
} hcq_expr_code;
hcq_status hcq_expr_compile(const char *expr, const char *const *names, size_t n, hcq_expr_code *out);
hcq_status hcq_expr_run(const hcq_expr_code *c, const int64_t *values, int64_t *out);
/* No variables: the value is the same on every run. */
bool hcq_expr_is_const(const hcq_expr_code *c);

/* Resolve the kernel's variables from `vars` by name into values[nvars] (program order). Errors: a missing
 * variable (HCQ_CODE_NOT_FOUND, naming it and its range), a value outside the declared range or not an int32
 * (HCQ_CODE_INVALID). Names in `vars` the kernel does not have are ignored. */
hcq_status hcq_program_var_values(const hcq_program *p, const hcq_var *vars, size_t n, int64_t *values);
/* Evaluate the launch sizes for values[nvars]; each must lie in 1..max_dim. */
hcq_status hcq_program_launch_dims(const hcq_program *p, const int64_t *values, int64_t max_dim, int64_t global[3],
                                   int64_t local[3]);

#endif
