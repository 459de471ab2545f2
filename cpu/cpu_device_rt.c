/* The CPU device's part of the device interface the runtime layer uses (hcq_device_ops info, program_load/free,
 * signal_wait, take_error, destroy) and its registry entry (cpu_device_open: "cpu", "cpu:0"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_device_internal.h"
#include "cpu/cpu_image.h"
#include "cpu/cpu_memlimit.h"
#include "cpu/cpu_reloc.h"

static cpu_device *cpu_of(hcq_device *dev) { return dev->impl; }

hcq_status cpu_device_op_info(hcq_device *dev, hcq_device_info *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->name, sizeof out->name, "%s", dev->name);
  snprintf(out->backend, sizeof out->backend, "cpu");
  snprintf(out->arch, sizeof out->arch, "%s", cpu_image_arch_name(cpu_host_machine()));
  snprintf(out->target, sizeof out->target, "c"); /* the c target compiles for this host */
  cpu_memlimit lim;
  cpu_memlimit_query(getenv("HCQ_MEMLIMIT_ROOT"), &lim);
  out->mem_host_B = lim.avail_B == UINT64_MAX ? 0 : lim.avail_B;
  out->features = HCQ_FEATURE_KERNEL_FAULTS | HCQ_FEATURE_TIMESTAMPS | HCQ_FEATURE_ARGS_AT_SUBMIT; /* copied at EXEC */
  out->max_global[0] = 1u << 20; /* core_id range; gy/gz must be 1 (cpu_device.h) */
  out->max_global[1] = out->max_global[2] = 1;
  return HCQ_OK;
}

/* Any program the compiler's c target produced or an image holds: an ELF object or linked image whose kernel is
 * `symbol`, with the default kernel-argument layout (the CPU words' EXEC passes u64 buffers then int32 values). */
hcq_status cpu_device_op_program_load(hcq_device *dev, hcq_program *prog, uint64_t *out_handle) {
  if (strncmp(prog->target, "c", 1) != 0 || (prog->target[1] && prog->target[1] != ':'))
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel %s is compiled for %s; the cpu device runs target c",
                           prog->name, prog->target);
  if (prog->target[1] == ':' && strcmp(prog->target + 2, cpu_image_arch_name(cpu_host_machine())) != 0)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel %s is built for %s; this machine is %s", prog->name,
                           prog->target + 2, cpu_image_arch_name(cpu_host_machine()));
  if (prog->nparams > CPU_KERNEL_MAX_ARGS)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel %s has %zu parameters (the cpu device passes at most %d)",
                           prog->name, prog->nparams, CPU_KERNEL_MAX_ARGS);
  for (int d = 0; d < 3; d++)
    if (strcmp(prog->local[d], "1") || (d && strcmp(prog->global[d], "1")))
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel %s: launch sizes %s,%s,%s / local %s,%s,%s: the cpu "
                             "device runs one dimension without workgroups", prog->name, prog->global[0],
                             prog->global[1], prog->global[2], prog->local[0], prog->local[1], prog->local[2]);
  HCQ_TRY(hcq_program_layout(prog, 0));
  cpu_device_program *p;
  HCQ_TRY(cpu_device_load_symbol(cpu_of(dev), prog->binary, prog->binary_size_B, prog->symbol, prog->name, &p));
  *out_handle = cpu_device_program_handle(p);
  return HCQ_OK;
}

void cpu_device_op_program_free(hcq_device *dev, uint64_t handle) {
  (void)dev;
  cpu_device_program_destroy((cpu_device_program *)(uintptr_t)handle);
}

hcq_status cpu_device_op_signal_wait(hcq_device *dev, const hcq_signal *sig, uint64_t target, uint32_t timeout_ms) {
  return cpu_device_signal_wait(cpu_of(dev), sig, target, timeout_ms);
}

hcq_status cpu_device_op_take_error(hcq_device *dev) { return cpu_device_take_error(cpu_of(dev)); }

void cpu_device_op_destroy(hcq_device *dev) { cpu_device_destroy(cpu_of(dev)); }

hcq_status cpu_device_open(unsigned index, hcq_device **out) {
  if (index != 0)
    return hcq_status_make(HCQ_CODE_NOT_FOUND, "device cpu:%u does not exist (the cpu device is cpu:0)", index);
  cpu_device *d;
  HCQ_TRY(cpu_device_create(0, &d));
  *out = cpu_device_hcq(d);
  return HCQ_OK;
}
