/* nv/: the NV device's runtime ops (nv_rt.c) and its registry entry (hcq/rt_registry.c: {"nv", nv_rt_open,
 * nv_rt_count}). */
#ifndef HCQ_NV_RT_H
#define HCQ_NV_RT_H

#include "hcq/device.h"
#include "nv/nv_dev.h"

hcq_status nv_rt_info(hcq_device *dev, hcq_device_info *out);
hcq_status nv_rt_program_load(hcq_device *dev, hcq_program *prog, uint64_t *out_handle);
void nv_rt_program_free(hcq_device *dev, uint64_t handle);
/* nv_errors.c: a posted channel error as HCQ_CODE_KERNEL_FAULT naming the kernel (once); afterwards the device is
 * stopped and nv_rt_check_live / submits / waits are HCQ_CODE_DEVICE_LOST. */
hcq_status nv_rt_take_error(hcq_device *dev);
hcq_status nv_rt_check_live(hcq_device *dev);
hcq_status nv_rt_signal_wait(hcq_device *dev, const hcq_signal *sig, uint64_t target, uint32_t timeout_ms);
/* The program table take_error names kernels from. */
hcq_status nv_rt_name_program(nv_dev *d, const void *program, const char *name);
void nv_rt_forget_program(nv_dev *d, const void *program);
void nv_rt_destroy(hcq_device *dev);
/* "nv:N" on kif_default() (the hardware, or the mock HCQ_MOCK=nv installed there). */
hcq_status nv_rt_open(unsigned index, hcq_device **out);
/* The valid cards NV_ESC_CARD_INFO lists; no /dev/nvidiactl: an error saying what to do. */
hcq_status nv_rt_count(unsigned *out_n);

#endif
