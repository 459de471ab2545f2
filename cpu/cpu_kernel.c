#include "cpu/cpu_kernel.h"

#include <string.h>

hcq_status cpu_kernel_args_init(cpu_kernel_args *out, void *fn, const uint64_t *args, int nargs) {
  if (!out || !fn || nargs < 0 || (nargs && !args))
    return hcq_status_make(HCQ_CODE_INVALID, "cpu_kernel_args_init: bad argument");
  if (nargs > CPU_KERNEL_MAX_ARGS)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel has %d arguments, at most %d are supported", nargs,
                           CPU_KERNEL_MAX_ARGS);
  memset(out, 0, sizeof *out);
  out->fn = fn;
  out->nargs = nargs;
  if (nargs) memcpy(out->args, args, (size_t)nargs * sizeof *args);
  return HCQ_OK;
}

/* One machine word per argument: 64 bits on x86_64/aarch64, 32 on armhf, where AAPCS passes int and pointer
 * parameters in r0-r3 and then 4-byte stack slots (a 64-bit word would take two). */
typedef uintptr_t u;
typedef void (*call8)(u, u, u, u, u, u, u, u);
typedef void (*call32)(u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u, u,
                       u, u);

void cpu_kernel_run(void *ctx, int core_id) {
  const cpu_kernel_args *k = ctx;
  u a[32] = {0};
  for (int i = 0; i < k->nargs; i++) a[i] = (u)k->args[i];
  a[k->nargs] = (u)(intptr_t)core_id;
  /* Extra trailing arguments are ignored by the callee: the caller owns the stack area in both ABIs. */
  if (k->nargs < 8) {
    ((call8)k->fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
  } else {
    ((call32)k->fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14],
                    a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23], a[24], a[25], a[26], a[27], a[28],
                    a[29], a[30], a[31]);
  }
}
