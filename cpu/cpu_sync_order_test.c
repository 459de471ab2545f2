/* The ordering every sleep/wake pair of the pool, the signals and the AMD mock relies on (store buffering): two threads
 * each publish their own word with CPU_PUBLISH and then load the other's (seq_cst); in every round at least one of them
 * must see the other's store. Run natively and under qemu-user, where a plain seq_cst store is not enough: the same
 * rounds with __atomic_store_n(SEQ_CST) are counted and printed (not checked: real hardware never reorders them). */
#include "cpu/cpu_sync.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#include "base/testing.h"

#define ROUNDS 50000

static uint32_t word_a, word_b, go, done, seen_by_a;
static int use_exchange;

static void wait_for(const uint32_t *w, uint32_t v) {
  /* a bare load loop, no pause/yield instruction: the sides must leave it within nanoseconds of each other for their
   * stores and loads to overlap (under qemu-user an aarch64 `yield` leaves the translated code) */
  for (unsigned spins = 0; __atomic_load_n(w, __ATOMIC_ACQUIRE) < v; spins++)
    if (spins > 2000) sched_yield(); /* fewer cores than threads: let the other side run */
}

static void publish(uint32_t *w, uint32_t v) {
  if (use_exchange) CPU_PUBLISH(w, v);
  else __atomic_store_n(w, v, __ATOMIC_SEQ_CST);
}

static void *side_a(void *arg) {
  (void)arg;
  for (uint32_t i = 1; i <= ROUNDS; i++) {
    wait_for(&go, i);
    publish(&word_a, i);
    __atomic_store_n(&seen_by_a, __atomic_load_n(&word_b, __ATOMIC_SEQ_CST), __ATOMIC_RELAXED);
    __atomic_store_n(&done, i, __ATOMIC_RELEASE);
  }
  return NULL;
}

/* Rounds in which neither side saw the other's store of that round. */
static unsigned rounds_both_missed(int exchange) {
  use_exchange = exchange;
  word_a = word_b = go = done = seen_by_a = 0;
  pthread_t t;
  if (pthread_create(&t, NULL, side_a, NULL)) {
    CHECK(false);
    return 0;
  }
  unsigned missed = 0;
  for (uint32_t i = 1; i <= ROUNDS; i++) {
    __atomic_store_n(&go, i, __ATOMIC_RELEASE);
    publish(&word_b, i);
    uint32_t seen_by_b = __atomic_load_n(&word_a, __ATOMIC_SEQ_CST);
    wait_for(&done, i);
    missed += seen_by_b < i && __atomic_load_n(&seen_by_a, __ATOMIC_RELAXED) < i;
  }
  pthread_join(t, NULL);
  return missed;
}

int main(void) {
  unsigned plain = rounds_both_missed(0), exchanged = rounds_both_missed(1);
  printf("store buffering over %d rounds: both loads missed the other store in %u with a seq_cst store, %u with "
         "CPU_PUBLISH\n", ROUNDS, plain, exchanged);
  CHECK_EQ_INT(exchanged, 0);
  return testing_summary("cpu_sync_order_test");
}
