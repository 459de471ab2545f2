/* krun: one kernel compiled for a device's target and run on it through the runtime layer (hcq/hcq.h:
 * the program described once, loaded as a kernel whose launch queue is recorded once; every krun_exec is one
 * hcq_rt_launch + hcq_rt_sync). What krun adds is the tool's side: kernel text, buffers as cc_kbufs for the
 * reference interpreter, the memory-limit check, comparisons. Shared by `hcq run`, `hcq bench` and the tests. */
#ifndef HCQ_RT_KRUN_H
#define HCQ_RT_KRUN_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler/compiler.h"
#include "compiler/interp.h"
#include "cpu/cpu_device.h"
#include "hcq/args.h"
#include "hcq/queue.h"
#include "hcq/signal.h"
#include "hcq/hcq.h"

typedef struct krun {
  uop_ctx *ctx;
  const uop *sink;
  cc_target target;
  cc_program *prog;
  /* device side (krun_setup / krun_setup_rt) */
  hcq_rt_device *rd; /* the device (krun_setup: a wrapper krun owns; krun_setup_rt: the caller's) */
  bool own_rd;
  hcq_rt_kernel *kern;
  hcq_rt_buffer **rbufs; /* per slot */
  cc_kbuf *bufs; /* data = device memory (host view) */
  size_t nbufs;
  const uop **var_nodes; /* DEFINE_VAR per variable of prog->desc */
  uop_var_val *vv;       /* prog->nvars kernel values */
  double compile_ms;     /* pipeline + external */
} krun;

/* Parse (file or text) and compile for `target` ("c", "amdgpu:gfx1100", "ptx:sm_90": a device's
 * hcq_device_info.target): opts NULL + noopt false = the heuristic. threads: the c target's global_max[0] (the
 * THREAD opt's limit). The plain forms compile for the c target. */
hcq_status krun_compile_file_for(krun *k, const char *path, const cc_options *o, const char *target, int threads);
hcq_status krun_compile_text_for(krun *k, const char *text, const cc_options *o, const char *target, int threads);
hcq_status krun_compile_file(krun *k, const char *path, const cc_options *o, int threads);
hcq_status krun_compile_text(krun *k, const char *text, const cc_options *o, int threads);
/* Load on a device, allocate host-visible buffers (zeroed), record the queue. Buffers beyond the host memory limit
 * (cgroup, MemAvailable, rlimits: cpu_memlimit_check) are HCQ_CODE_NOMEM naming the largest buffer, the limit and
 * its source. krun_setup wraps a CPU device; krun_setup_rt uses any opened device (which stays the caller's). */
hcq_status krun_setup(krun *k, cpu_device *dev);
hcq_status krun_setup_rt(krun *k, hcq_rt_device *rd);
/* Fill every buffer deterministically (cc_fill_buffer, seed + slot). */
void krun_fill(krun *k, uint64_t seed);
/* Set the kernel variables by name (every variable of prog->desc must be given; values checked against the
 * variable's range). */
hcq_status krun_set_vars(krun *k, const uop_var_val *vars, size_t n);
/* Submit and wait (timeout_ms); *out_ms (optional) gets the kernel time from the device timestamps. Errors the
 * device recorded (a kernel fault) are returned. */
hcq_status krun_exec(krun *k, uint32_t timeout_ms, double *out_ms);
/* The loaded program's device handle (for benchmarks that record their own queues). */
uint64_t krun_program_handle(const krun *k);
/* The buffer of a slot, or NULL. */
cc_kbuf *krun_buf(krun *k, int slot);
/* "UPCAST:0:4,THREAD:0:2" of the applied opts (malloc'd; "" for none). */
char *krun_opts_text(const krun *k);
void krun_free(krun *k);

/* Compare got with want element-wise: ints exactly, floats |got-want| <= rel*|want| + abs (NaN == NaN).
 * Reports the mismatches, the largest absolute / relative error over the float elements, and the first mismatch's
 * values as text (integers exactly, as integers). */
typedef struct krun_cmp {
  size_t checked, mismatches;
  size_t float_checked; /* how many of the checked elements are floats (max_abs / max_rel are over these) */
  double max_abs, max_rel;
  int64_t first_bad;    /* -1 */
  int first_bad_slot;   /* the buffer slot of first_bad (set by krun_check_interp; -1: not known) */
  char first_got[40], first_want[40];
} krun_cmp;
void krun_compare(const void *got, const void *want, uop_dtype dt, int64_t nelems, double rel, double abs,
                  krun_cmp *acc);
/* Run the reference interpreter on host copies of `inputs` (same slots/sizes as k->bufs) and compare every
 * buffer with the device's. */
hcq_status krun_check_interp(krun *k, cc_kbuf *host, size_t nhost, double rel, double abs, krun_cmp *out);

/* Available memory in bytes (the smallest limit of cpu/cpu_memlimit.h, else physical pages), 0 if unknown. */
size_t krun_mem_available_B(void);

#endif
