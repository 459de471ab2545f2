/* cpu_kernel: calling a loaded kernel `void k(T* restrict data0, ..., int var0, ..., int core_id)` with a
 * run-time list of arguments. Pointer and integer arguments only (what the C renderer emits); each is passed as
 * a machine word (uintptr_t: the list holds 64-bit values, truncated to 32 bits on armhf), which the x86_64 SysV,
 * AAPCS64 and AAPCS (armhf) ABIs read correctly for int and pointer parameters; core_id is appended last. */
#ifndef HCQ_CPU_KERNEL_H
#define HCQ_CPU_KERNEL_H

#include <stdint.h>

#include "base/status.h"

#define CPU_KERNEL_MAX_ARGS 31 /* plus core_id */

typedef struct cpu_kernel_args {
  void *fn;
  int nargs;
  uint64_t args[CPU_KERNEL_MAX_ARGS];
} cpu_kernel_args;

/* Fill `out` (checks the count). */
hcq_status cpu_kernel_args_init(cpu_kernel_args *out, void *fn, const uint64_t *args, int nargs);
/* A cpu_task_fn: ctx is a cpu_kernel_args. Use it as the fn of a CPU_CMD_EXEC. */
void cpu_kernel_run(void *ctx, int core_id);

#endif
