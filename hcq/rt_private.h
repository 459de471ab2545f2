/* State shared by the runtime layer's files (hcq/rt_runtime.c, hcq/rt_kernel.c, hcq/rt_program.c). */
#ifndef HCQ_RT_PRIVATE_H
#define HCQ_RT_PRIVATE_H

#include <stdio.h>

#include "hcq/args.h"
#include "hcq/rt_internal.h"
#include "uop/uop.h"

struct hcq_rt_device {
  hcq_device *dev;
  bool owned; /* close dev with the runtime device */
  bool lost;  /* a call reported HCQ_CODE_DEVICE_LOST: close does not wait */
  hcq_device_info info;
  uop_ctx *ctx; /* the launch queues' variables */
  hcq_rt_kernel *kernels;
  hcq_rt_buffer *buffers;
};

struct hcq_rt_buffer {
  hcq_rt_device *rd;
  hcq_mem mem;
  size_t size_B;
  hcq_rt_buffer *next, *prev;
};

/* Wait until the device's timeline reaches value, through the device's wait path. */
hcq_status hcq_rt_wait_value(hcq_rt_device *rd, uint64_t value, uint32_t timeout_ms);

#endif
