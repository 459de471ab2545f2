/* The AMD device's part of the runtime interface (hcq_device_ops info, program_load/free, signal_wait, take_error,
 * destroy) and its registry entry ("amd", "amd:N"). Internal to amd/. */
#ifndef HCQ_AMD_HCQ_RT_H
#define HCQ_AMD_HCQ_RT_H

#include "amd/amd_hcq.h"

hcq_status amd_hcq_op_info(hcq_device *dev, hcq_device_info *out);
hcq_status amd_hcq_op_program_load(hcq_device *dev, hcq_program *prog, uint64_t *out_handle);
void amd_hcq_op_program_free(hcq_device *dev, uint64_t handle);
hcq_status amd_hcq_op_signal_wait(hcq_device *dev, const hcq_signal *sig, uint64_t target, uint32_t timeout_ms);
hcq_status amd_hcq_op_take_error(hcq_device *dev);
void amd_hcq_op_destroy(hcq_device *dev);
/* The name of the loaded program whose descriptor is at kd_va ("" when none). */
const char *amd_hcq_program_name(amd_hcq *h, uint64_t kd_va);
/* Release what program_load left (at close). */
void amd_hcq_programs_free(amd_hcq *h);

/* Registry entry: open GPU `index` of the KFD topology on kif_default(); count the GPU nodes (no /dev/kfd or no
 * permission: an error saying what to do). */
hcq_status amd_rt_open(unsigned index, hcq_device **out);
hcq_status amd_rt_count(unsigned *out_n);

#endif
