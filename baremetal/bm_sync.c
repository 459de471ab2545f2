/* Signals and the clock for the single-threaded bare-metal runtime (replaces cpu/cpu_sync.c, which needs futexes):
 * the generic timer gives the time; a wait can only see values already written, since nothing runs concurrently. */
#include <stdint.h>

#include "cpu/cpu_sync.h"

uint64_t cpu_now_ns(void) {
  uint64_t cnt, frq;
  __asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(cnt));
  __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(frq));
  return frq ? (uint64_t)((unsigned __int128)cnt * 1000000000u / frq) : 0;
}

void cpu_signal_set(uint64_t *value_addr, uint64_t value) { __atomic_store_n(value_addr, value, __ATOMIC_RELEASE); }
uint64_t cpu_signal_load(const uint64_t *value_addr) { return __atomic_load_n(value_addr, __ATOMIC_ACQUIRE); }

hcq_status cpu_signal_wait(const uint64_t *value_addr, uint64_t target, uint64_t timeout_ms) {
  (void)timeout_ms;
  uint64_t v = cpu_signal_load(value_addr);
  if (v >= target) return HCQ_OK;
  return hcq_status_make(HCQ_CODE_TIMEOUT, "signal at %p is %llu, waiting for %llu: nothing else runs on bare metal",
                         (const void *)value_addr, (unsigned long long)v, (unsigned long long)target);
}
