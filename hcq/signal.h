/* hcq signals and the per-device timeline.
 *
 * A signal is 16 bytes of device-visible memory: u64 value at +0, u64 timestamp at +8 (ns, or device ticks that
 * hcq_signal_timestamp_ns converts with the device's rate and offset, e.g. AMD's 100 MHz GPU clock). Devices write the value
 * when a queue reaches a `signal` command; the host waits for value >= target. Slots come from 4 KiB signal pages
 * allocated through the backend (HCQ_MEM_SIGNAL), 256 slots each, recycled through a free list.
 *
 * Timeline protocol (the reference's, tinygrad/runtime/support/hcq.py): every submission waits for timeline >=
 * timeline_value-1 and ends with signal(timeline, hcq_timeline_next(dev)), serializing the device's queues on one
 * counter. 32-bit wrap: AMD packets and the CPU worker store/compare only the low 32 bits of a signal value. Once
 * timeline_value passes HCQ_TIMELINE_WRAP_AT (2^31), hcq_device_synchronize() — which has just seen all work
 * finish — swaps timeline and shadow, stores a full 64-bit 0 into the new timeline and restarts at
 * timeline_value = 1. Queues that must survive a wrap (graphs) refer to the timeline by a symbolic address
 * ("timeline_sig_<dev>"), never by the signal's fixed address. Callers must synchronize at least once every 2^31
 * submissions; hcq_timeline_next() refuses (returns 0) rather than hand out a value >= 2^32 - 1.
 */
#ifndef HCQ_SIGNAL_H
#define HCQ_SIGNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "hcq/device.h"
#include "base/status.h"

typedef struct hcq_signal_mem {
  volatile uint64_t value;
  volatile uint64_t timestamp_ns;
} hcq_signal_mem;
_Static_assert(sizeof(hcq_signal_mem) == 16, "signal layout is u64 value, u64 timestamp");

struct hcq_signal {
  hcq_signal_mem *mem; /* host view */
  uint64_t va;         /* device address of `value`; the timestamp is at va + 8 */
  hcq_device *owner;
  char name[48];       /* for error messages */
};

/* Allocate a signal slot on `dev` and store `initial` as a 64-bit value. `name` may be NULL. */
hcq_status hcq_signal_create(hcq_device *dev, const char *name, uint64_t initial, hcq_signal **out_sig);
void hcq_signal_destroy(hcq_signal *sig); /* NULL is fine */

static inline uint64_t hcq_signal_value(const hcq_signal *sig) { return __atomic_load_n(&sig->mem->value, __ATOMIC_ACQUIRE); }
static inline void hcq_signal_set(hcq_signal *sig, uint64_t v) { __atomic_store_n(&sig->mem->value, v, __ATOMIC_RELEASE); }
/* The timestamp at +8 in ns of hcq_now_ns(), converted with the owner's rate and offset (hcq_device); 0 while none
 * was written. */
static inline uint64_t hcq_signal_timestamp_ns(const hcq_signal *sig) {
  uint64_t raw = __atomic_load_n(&sig->mem->timestamp_ns, __ATOMIC_ACQUIRE);
  const hcq_device *d = sig->owner;
  if (!raw || !d || !d->timestamp_ns_per_tick) return raw;
  return raw * d->timestamp_ns_per_tick + (uint64_t)d->timestamp_offset_ns;
}

/* Wait until value >= target. Spins ~20 us, then sleeps (backend wait_sleep, else nanosleep growing to 1 ms).
 * The timeout clock restarts whenever the value changes (progress). On timeout returns HCQ_CODE_TIMEOUT naming the
 * signal, the target and the value seen. timeout_ms == 0 checks once. */
hcq_status hcq_signal_wait(const hcq_signal *sig, uint64_t target, uint32_t timeout_ms);

/* Timeline: returns timeline_value and increments it. Returns 0 (never a valid timeline value) if the 32-bit
 * space is exhausted because nobody synchronized; submitters must treat 0 as an error. */
uint64_t hcq_timeline_next(hcq_device *dev);
/* The value the timeline reaches when everything submitted so far is done. */
static inline uint64_t hcq_timeline_last(const hcq_device *dev) { return dev->timeline_value - 1; }
/* Wait for all submitted work (timeline >= timeline_value-1), then wrap the timeline if it passed 2^31. */
hcq_status hcq_device_synchronize(hcq_device *dev, uint32_t timeout_ms);

/* Monotonic clock in ns (the core's time base for waits and fake backends' timestamps). */
uint64_t hcq_now_ns(void);

#endif
