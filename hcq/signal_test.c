/* Signals: layout, pool, bounded waits (timeout, progress, wake from another thread), timeline and its wrap. */
#include "hcq/signal.h"

#include <pthread.h>
#include <stddef.h>
#include <time.h>

#include "hcq/queue_fake_device.h"
#include "base/testing.h"

static int sleep_hook_calls;
static void counting_sleep(hcq_device *dev, const volatile uint64_t *addr, uint64_t observed, uint32_t max_ms) {
  (void)dev;
  sleep_hook_calls++;
  struct timespec ts = {0, 200000};
  if (*addr == observed) nanosleep(&ts, NULL);
  (void)max_ms;
}

static void test_layout_and_pool(fake_dev *f) {
  CHECK_EQ_INT(sizeof(hcq_signal_mem), 16);
  CHECK_EQ_INT(offsetof(hcq_signal_mem, value), 0);
  CHECK_EQ_INT(offsetof(hcq_signal_mem, timestamp_ns), 8);
  enum { N = 300 }; /* more than one 256-slot page */
  hcq_signal *s[N];
  for (int i = 0; i < N; i++) CHECK_OK(hcq_signal_create(&f->dev, "pool", (uint64_t)i << 40, &s[i]));
  int bad = 0;
  for (int i = 0; i < N; i++) {
    if (s[i]->va != (uint64_t)(uintptr_t)s[i]->mem || (s[i]->va & 15)) bad++; /* fake: va == host */
    if (hcq_signal_value(s[i]) != (uint64_t)i << 40) bad++;                  /* initial value, all 64 bits */
    for (int j = 0; j < i; j++)
      if (s[j]->mem == s[i]->mem) bad++;
  }
  CHECK_EQ_INT(bad, 0);
  size_t pages = f->mem_live;
  for (int i = 0; i < N; i++) hcq_signal_destroy(s[i]);
  /* Freed slots are reused: the same number of signals again allocates no new page. */
  for (int i = 0; i < N; i++) CHECK_OK(hcq_signal_create(&f->dev, "again", 1, &s[i]));
  CHECK_EQ_INT(f->mem_live, pages);
  for (int i = 0; i < N; i++) hcq_signal_destroy(s[i]);
}

static void test_wait_timeout(fake_dev *f) {
  hcq_signal *s;
  CHECK_OK(hcq_signal_create(&f->dev, "slowpoke", 3, &s));
  CHECK_OK(hcq_signal_wait(s, 3, 0)); /* already there */
  CHECK_OK(hcq_signal_wait(s, 2, 0));
  CHECK_ERR(hcq_signal_wait(s, 4, 0), HCQ_CODE_TIMEOUT, "slowpoke");
  uint64_t t0 = hcq_now_ns();
  hcq_status st = hcq_signal_wait(s, 5, 50);
  uint64_t ms = (hcq_now_ns() - t0) / 1000000u;
  CHECK(st && hcq_status_code(st) == HCQ_CODE_TIMEOUT);
  CHECK(st && strstr(hcq_status_message(st), "'slowpoke'") && strstr(hcq_status_message(st), "reach 5") &&
        strstr(hcq_status_message(st), "value 3"));
  hcq_status_free(st);
  CHECK(ms >= 50);
  CHECK(ms < 500); /* bounded: never hangs */
  /* With a backend sleep hook, the wait uses it. */
  static hcq_device_ops ops_with_sleep;
  ops_with_sleep = fake_ops;
  ops_with_sleep.wait_sleep = counting_sleep;
  const hcq_device_ops *saved = f->dev.ops;
  f->dev.ops = &ops_with_sleep;
  sleep_hook_calls = 0;
  CHECK_ERR(hcq_signal_wait(s, 5, 20), HCQ_CODE_TIMEOUT, "slowpoke");
  CHECK(sleep_hook_calls > 0);
  f->dev.ops = saved;
  hcq_signal_destroy(s);
}

typedef struct bumper {
  hcq_signal *s;
  int steps, step_ms;
} bumper;

static void *bump_thread(void *arg) {
  bumper *b = arg;
  for (int i = 0; i < b->steps; i++) {
    struct timespec ts = {0, (long)b->step_ms * 1000000L};
    nanosleep(&ts, NULL);
    hcq_signal_set(b->s, hcq_signal_value(b->s) + 1);
  }
  return NULL;
}

static void test_wait_wakes_and_progress(fake_dev *f) {
  hcq_signal *s;
  CHECK_OK(hcq_signal_create(&f->dev, "bumped", 0, &s));
  /* Reached from another thread after ~20 ms. */
  bumper b = {s, 1, 20};
  pthread_t th;
  pthread_create(&th, NULL, bump_thread, &b);
  CHECK_OK(hcq_signal_wait(s, 1, 2000));
  pthread_join(th, NULL);
  /* Progress every 15 ms keeps a 40 ms wait alive for 10 steps (150 ms), then it times out. */
  b = (bumper){s, 10, 15};
  uint64_t t0 = hcq_now_ns();
  pthread_create(&th, NULL, bump_thread, &b);
  CHECK_ERR(hcq_signal_wait(s, 1000, 40), HCQ_CODE_TIMEOUT, "value 11");
  uint64_t ms = (hcq_now_ns() - t0) / 1000000u;
  pthread_join(th, NULL);
  CHECK(ms >= 150);
  CHECK(ms < 1500);
  hcq_signal_destroy(s);
}

static void test_timeline(fake_dev *f) {
  hcq_device *d = &f->dev;
  CHECK_EQ_INT(d->timeline_value, 1);
  CHECK_EQ_INT(hcq_timeline_next(d), 1);
  CHECK_EQ_INT(hcq_timeline_next(d), 2);
  CHECK_EQ_INT(hcq_timeline_last(d), 2);
  CHECK_ERR(hcq_device_synchronize(d, 10), HCQ_CODE_TIMEOUT, "timeline:FAKE:0");
  hcq_signal_set(d->timeline, 2);
  CHECK_OK(hcq_device_synchronize(d, 10));
  CHECK_EQ_INT(d->timeline_wraps, 0);
  /* Near the 32-bit wrap: synchronize swaps to the shadow signal and restarts at 1. */
  hcq_signal *old = d->timeline, *shadow = d->shadow_timeline;
  hcq_signal_set(shadow, 0xdeadbeef00000000ULL); /* garbage in the high word must be cleared by a 64-bit store */
  d->timeline_value = HCQ_TIMELINE_WRAP_AT + 10;
  hcq_signal_set(d->timeline, HCQ_TIMELINE_WRAP_AT + 9);
  CHECK_OK(hcq_device_synchronize(d, 10));
  CHECK(d->timeline == shadow);
  CHECK(d->shadow_timeline == old);
  CHECK_EQ_INT(d->timeline_value, 1);
  CHECK_EQ_INT(hcq_signal_value(d->timeline), 0);
  CHECK_EQ_INT(d->timeline_wraps, 1);
  CHECK_EQ_INT(hcq_timeline_next(d), 1);
  /* At exactly the limit, no wrap yet. */
  hcq_signal_set(d->timeline, HCQ_TIMELINE_WRAP_AT - 1);
  d->timeline_value = HCQ_TIMELINE_WRAP_AT;
  CHECK_OK(hcq_device_synchronize(d, 10));
  CHECK_EQ_INT(d->timeline_wraps, 1);
  /* Nobody synchronized for 2^32 submissions: next refuses with 0 instead of a value that compares wrong. */
  d->timeline_value = 0xfffffffeULL;
  CHECK_EQ_INT(hcq_timeline_next(d), 0xfffffffeULL);
  CHECK_EQ_INT(hcq_timeline_next(d), 0);
  CHECK_EQ_INT(hcq_timeline_next(d), 0);
  d->timeline_value = 1;
  hcq_signal_set(d->timeline, 0);
}

static hcq_status failing_alloc(hcq_device *dev, size_t size_B, unsigned flags, hcq_mem *out) {
  (void)dev, (void)size_B, (void)flags, (void)out;
  return hcq_status_make(HCQ_CODE_NOMEM, "no memory today");
}

int main(void) {
  fake_dev f;
  CHECK_OK(fake_dev_init(&f, "FAKE:0", false));
  test_layout_and_pool(&f);
  test_wait_timeout(&f);
  test_wait_wakes_and_progress(&f);
  test_timeline(&f);
  fake_dev_fini(&f);
  CHECK_EQ_INT(f.mem_live, 0);
  /* A backend whose allocation fails: init reports it, naming the device. */
  static hcq_device_ops bad_ops;
  bad_ops = fake_ops;
  bad_ops.mem_alloc = failing_alloc;
  hcq_device d;
  CHECK_ERR(hcq_device_init(&d, &bad_ops, NULL, "BROKEN:1"), HCQ_CODE_NOMEM, "BROKEN:1");
  static const hcq_device_ops empty_ops = {0};
  CHECK_ERR(hcq_device_init(&d, &empty_ops, NULL, "EMPTY"), HCQ_CODE_INVALID, "EMPTY");
  return testing_summary("hcq/signal_test");
}
