/* cpu_pool_bench: submit -> completion latency of an empty kernel with warm workers.
 * One sample = submit {EXEC empty x N threads, SIGNAL sig = i} and cpu_signal_wait(sig >= i), timed with
 * CLOCK_MONOTONIC. Prints a table (median / p90 / p99 per thread count) and one JSON line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_pool.h"

static void empty(void *ctx, int core_id) {
  (void)ctx;
  (void)core_id;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

int main(void) {
  cpu_pool *pool;
  hcq_status st = cpu_pool_create(0, &pool);
  if (st) {
    fprintf(stderr, "cpu_pool_create: %s\n", hcq_status_message(st));
    return 1;
  }
  int P = cpu_pool_threads(pool);
  enum { SAMPLES = 20000, WARMUP = 2000 };
  static uint64_t ns[SAMPLES];
  static cpu_signal sig;
  uint64_t value = 0;
  int counts[3] = {1, P > 1 ? 2 : 1, P};
  double med[3], p90[3], p99[3];
  printf("%-8s %-8s %12s %12s %12s\n", "threads", "samples", "median_us", "p90_us", "p99_us");
  for (int k = 0; k < 3; k++) {
    for (int i = 0; i < WARMUP + SAMPLES; i++) {
      value++;
      cpu_cmd cmds[2] = {{.kind = CPU_CMD_EXEC, .threads = counts[k], .fn = empty},
                         {.kind = CPU_CMD_SIGNAL, .addr = &sig.value, .value = value}};
      uint64_t t0 = cpu_now_ns();
      st = cpu_pool_submit(pool, cmds, 2, NULL);
      if (!st) st = cpu_signal_wait(&sig.value, value, 10000);
      uint64_t t1 = cpu_now_ns();
      if (st) {
        fprintf(stderr, "%s\n", hcq_status_message(st));
        return 1;
      }
      if (i >= WARMUP) ns[i - WARMUP] = t1 - t0;
    }
    qsort(ns, SAMPLES, sizeof *ns, cmp_u64);
    med[k] = ns[SAMPLES / 2] / 1e3;
    p90[k] = ns[SAMPLES * 9 / 10] / 1e3;
    p99[k] = ns[SAMPLES * 99 / 100] / 1e3;
    printf("%-8d %-8d %12.2f %12.2f %12.2f\n", counts[k], SAMPLES, med[k], p90[k], p99[k]);
  }
  printf("{\"bench\":\"cpu_pool\",\"pool_threads\":%d,\"samples\":%d,"
         "\"t1_median_us\":%.3f,\"t1_p99_us\":%.3f,\"t2_median_us\":%.3f,\"tall_median_us\":%.3f,\"tall_p99_us\":%.3f}\n",
         P, SAMPLES, med[0], p99[0], med[1], med[2], p99[2]);
  cpu_pool_destroy(pool);
  return 0;
}
