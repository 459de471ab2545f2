/* Timeline-keyed resource retirement: a resource that queued work still uses (kernel-argument space, ring space,
 * staging buffers, a freed buffer or program) is handed to hcq_retire_at with the timeline value whose signal
 * says that work is done; it is freed by the first hcq_retire_poll that sees the timeline there, or by
 * hcq_device_synchronize (which has seen all work finish, before it may wrap the timeline), or at hcq_device_fini.
 * One list per device, in the core: every backend and the runtime layer retire through it. Not thread-safe: one
 * thread drives a device's submissions. */
#ifndef HCQ_RETIRE_H
#define HCQ_RETIRE_H

#include <stddef.h>
#include <stdint.h>

#include "hcq/device.h"

typedef void (*hcq_retire_fn)(hcq_device *dev, void *ctx, uint64_t arg);

typedef struct hcq_retire_entry {
  uint64_t value;
  hcq_retire_fn fn;
  void *ctx;
  uint64_t arg;
} hcq_retire_entry;

/* Call fn(dev, ctx, arg) once dev's timeline reaches `value`; right away if it already has. On HCQ_CODE_NOMEM
 * nothing is recorded: the caller must wait for the value itself before freeing. */
hcq_status hcq_retire_at(hcq_device *dev, uint64_t value, hcq_retire_fn fn, void *ctx, uint64_t arg);
/* Free everything whose value the timeline reached; returns how many. Cheap when nothing is pending. */
size_t hcq_retire_poll(hcq_device *dev);
/* Free everything (all work is known to be done, or the device is going away). */
void hcq_retire_all(hcq_device *dev);
static inline size_t hcq_retire_pending(const hcq_device *dev) { return dev->nretire; }

#endif
