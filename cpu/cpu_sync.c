#include "cpu/cpu_sync.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "signal futexes wait on the low half of the value");

/* Threads sleeping in cpu_signal_wait anywhere in the process: writers skip the wake syscall while it is 0. */
static int signal_sleepers;

uint64_t cpu_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void cpu_futex_wait(uint32_t *word, uint32_t expected, uint64_t timeout_ns) {
  struct timespec ts = {.tv_sec = (time_t)(timeout_ns / 1000000000u), .tv_nsec = (long)(timeout_ns % 1000000000u)};
  syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, timeout_ns ? &ts : NULL, NULL, 0);
}

void cpu_spin_pause(uint64_t spun_ns) {
  for (int i = 0; i < 16; i++) cpu_relax();
  if (spun_ns > CPU_SPIN_YIELD_NS) sched_yield();
}

void cpu_futex_wake(uint32_t *word, int count) { syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0); }

void cpu_signal_set(uint64_t *value_addr, uint64_t value) {
  CPU_PUBLISH(value_addr, value);
  if (__atomic_load_n(&signal_sleepers, __ATOMIC_SEQ_CST) > 0) cpu_futex_wake((uint32_t *)value_addr, 1 << 30);
}

uint64_t cpu_signal_load(const uint64_t *value_addr) { return __atomic_load_n(value_addr, __ATOMIC_ACQUIRE); }

hcq_status cpu_signal_wait(const uint64_t *value_addr, uint64_t target, uint64_t timeout_ms) {
  uint64_t v = cpu_signal_load(value_addr);
  if (v >= target) return HCQ_OK;
  uint64_t start = cpu_now_ns();
  uint64_t timeout_ns = timeout_ms > UINT64_MAX / 2000000u ? UINT64_MAX / 2 : timeout_ms * 1000000u;
  uint64_t now = start;
  while (now - start < CPU_SPIN_NS && now - start < timeout_ns) {
    if (cpu_signal_load(value_addr) >= target) return HCQ_OK;
    cpu_spin_pause(now - start);
    now = cpu_now_ns();
  }
  for (;;) {
    __atomic_fetch_add(&signal_sleepers, 1, __ATOMIC_SEQ_CST);
    v = __atomic_load_n(value_addr, __ATOMIC_SEQ_CST);
    now = cpu_now_ns();
    if (v < target && now - start < timeout_ns) {
      uint64_t left = timeout_ns - (now - start), slice = 10000000u;
      cpu_futex_wait((uint32_t *)value_addr, (uint32_t)v, left < slice ? left : slice);
    }
    __atomic_fetch_sub(&signal_sleepers, 1, __ATOMIC_SEQ_CST);
    v = cpu_signal_load(value_addr);
    if (v >= target) return HCQ_OK;
    if (cpu_now_ns() - start >= timeout_ns)
      return hcq_status_make(HCQ_CODE_TIMEOUT, "signal at %p is %llu, waited %llu ms for %llu", (const void *)value_addr,
                             (unsigned long long)v, (unsigned long long)timeout_ms, (unsigned long long)target);
  }
}
