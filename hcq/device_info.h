/* hcq_device_info: what a device is (its name, arch, compiler target, memory, features, whether it is a mock).
 * Filled by a backend's hcq_device_ops.info (hcq/device.h); public through hcq/hcq.h (hcq_rt_info). */
#ifndef HCQ_DEVICE_INFO_H
#define HCQ_DEVICE_INFO_H

#include <stdbool.h>
#include <stdint.h>

/* What a device is (hcq_device_ops.info). */
enum {
  HCQ_FEATURE_COPY_QUEUE = 1u << 0,   /* HCQ_QUEUE_COPY runs on its own engine */
  HCQ_FEATURE_LOCAL_SIZE = 1u << 1,   /* workgroups: local sizes other than 1 */
  HCQ_FEATURE_KERNEL_FAULTS = 1u << 2, /* a faulting kernel is reported (HCQ_CODE_KERNEL_FAULT), the device lives on */
  HCQ_FEATURE_TIMESTAMPS = 1u << 3,   /* timestamp commands record device time */
  HCQ_FEATURE_ARGS_AT_SUBMIT = 1u << 4, /* kernel arguments are read at submit: their memory may be rewritten right
                                         * after (else a launcher waits for the previous use before rewriting) */
};
typedef struct hcq_device_info {
  char name[32];          /* "CPU:0", "AMD:0" */
  char backend[16];       /* the registry's backend name: "cpu", "amd", "nv", "fakegpu" */
  char arch[32];          /* "x86_64", "gfx1100", "sm_90" */
  char target[32];        /* the compiler target for this arch: "c", "amdgpu:gfx1100", "ptx:sm_90" */
  uint64_t mem_device_B;  /* device-local memory (0: unknown or none) */
  uint64_t mem_host_B;    /* host memory the device can use (0: unknown) */
  unsigned features;      /* HCQ_FEATURE_* */
  bool is_mock;           /* a mock or fake: no real hardware behind it */
  uint32_t max_global[3]; /* largest launch size per dimension */
} hcq_device_info;

#endif
