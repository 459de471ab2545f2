/* cpu_sync: the CPU device's waiting primitives: a monotonic clock, futex wait/wake, bounded spinning, and
 * signals (a 64-bit value in plain memory that only grows; writers wake futex sleepers). */
#ifndef HCQ_CPU_SYNC_H
#define HCQ_CPU_SYNC_H

#include <stdint.h>

#include "base/status.h"

/* Spin this long (measured with CLOCK_MONOTONIC, not in iterations) before sleeping on a futex. */
#define CPU_SPIN_NS 50000u

/* A signal as the queue core lays it out: value, then the timestamp of the write. 16 bytes. */
typedef struct cpu_signal {
  uint64_t value;
  uint64_t timestamp_ns;
} cpu_signal;

uint64_t cpu_now_ns(void); /* CLOCK_MONOTONIC */

/* Sleep while *word == expected, at most timeout_ns (0 = no limit). Spurious returns are allowed. */
void cpu_futex_wait(uint32_t *word, uint32_t expected, uint64_t timeout_ns);
void cpu_futex_wake(uint32_t *word, int count);
/* After this long in a spin loop, also yield the core each round: with more runnable threads than cores, the
 * thread we wait for may be queued behind us on the same core. */
#define CPU_SPIN_YIELD_NS 2000u
void cpu_spin_pause(uint64_t spun_ns);
static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* The store of a Dekker pair (publish a flag, then load the other side's, seq_cst): a seq_cst exchange, not a seq_cst
 * store. qemu-user 7.2 on x86 hosts lets an aarch64 seq_cst load (ldar) pass an earlier seq_cst store (stlr), which
 * the architecture forbids, and a sleeper's flag goes unseen; a fence would do too, but gcc's -fsanitize=thread
 * rejects atomic_thread_fence. cpu_sync_order_test checks the pair wherever the tests run. */
#define CPU_PUBLISH(p, v) ((void)__atomic_exchange_n((p), (v), __ATOMIC_SEQ_CST))

/* Store `value` to the signal word (release) and wake anyone sleeping in cpu_signal_wait on it. */
void cpu_signal_set(uint64_t *value_addr, uint64_t value);
uint64_t cpu_signal_load(const uint64_t *value_addr);
/* Wait until *value_addr >= target: spin CPU_SPIN_NS, then futex-sleep (in slices of at most 10 ms, so a writer
 * that does not wake us, like a GPU, is still seen). After timeout_ms a HCQ_CODE_TIMEOUT error names the signal,
 * its value and the target. */
hcq_status cpu_signal_wait(const uint64_t *value_addr, uint64_t target, uint64_t timeout_ms);

#endif
