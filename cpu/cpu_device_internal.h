/* Shared between cpu_device.c and cpu_device_fault.c. */
#ifndef HCQ_CPU_DEVICE_INTERNAL_H
#define HCQ_CPU_DEVICE_INTERNAL_H

#include <stdio.h>

#include "cpu/cpu_device.h"
#include "cpu/cpu_kernel.h"

#define CPU_DEVICE_NAME_MAX 64

/* The context of one EXEC or COPY command, alive until the pool finished it. */
/* The value a faulted kernel's cross-thread reduce arrival count is set to: above any thread count, so every later
 * arrival traps (render_c.c) instead of combining partials of two launches. */
#define CPU_ARRIVED_POISON 0x80000000u

typedef struct cpu_work {
  cpu_device *dev;
  const char *name; /* kernel name (the program outlives its commands) */
  int nbufs;        /* EXEC: exec.args[0..nbufs) are buffer addresses */
  uint64_t *run_ns; /* EXEC: where an id's time x ids is kept (the program's last_run_ns), or NULL */
  uint32_t ids;     /* EXEC: the number of core_ids */
  unsigned *arrived; /* EXEC: the kernel's cross-thread reduce arrival count, or NULL (cpu_device_fault.c) */
  union {
    cpu_kernel_args exec;
    struct {
      void *dst;
      const void *src;
      size_t size_B;
      int parts;
    } copy;
  };
} cpu_work;

/* The pool task of an EXEC: runs the kernel for core_id with faults caught (cpu_device_fault.c). */
void cpu_device_exec_task(void *ctx, int core_id);
void cpu_device_record_error(cpu_device *dev, hcq_status st);
/* Around each kernel call: how many run (a wait that times out while one does makes the device lost). */
void cpu_device_kernel_enter(cpu_device *dev, const char *name);
void cpu_device_kernel_leave(cpu_device *dev);
/* Process-wide SIGSEGV/SIGBUS/SIGFPE/SIGILL/SIGTRAP handlers, reference counted per device. */
hcq_status cpu_device_faults_install(void);
void cpu_device_faults_uninstall(void);
/* The device-interface ops of cpu_device_rt.c. */
hcq_status cpu_device_op_info(hcq_device *dev, hcq_device_info *out);
hcq_status cpu_device_op_program_load(hcq_device *dev, hcq_program *prog, uint64_t *out_handle);
void cpu_device_op_program_free(hcq_device *dev, uint64_t handle);
hcq_status cpu_device_op_signal_wait(hcq_device *dev, const hcq_signal *sig, uint64_t target, uint32_t timeout_ms);
hcq_status cpu_device_op_take_error(hcq_device *dev);
void cpu_device_op_destroy(hcq_device *dev);

#endif
