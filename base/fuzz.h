/* Seeds and time budgets for the fuzzers (*_test.c; include after base/testing.h). `make test` is deterministic:
 * each fuzzer has its own fixed default seed. Environment:
 *   HCQ_FUZZ_SEED=N        replay seed N (decimal or 0x hex); HCQ_FUZZ_SEED=random draws one (make fuzz)
 *   HCQ_FUZZ_SECONDS=S     the time budget (default: the fuzzer's, 3 s for the time-bounded ones)
 * fuzz_seed() prints the seed in use, and prints it again at exit when a check failed, with the line to replay. */
#ifndef HCQ_FUZZ_H
#define HCQ_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t fuzz_seed_in_use;
static const char *fuzz_name = "fuzz";

static void fuzz_report_seed(void) {
  if (testing_failures)
    fprintf(stderr, "%s: FAILED with seed 0x%llx: replay with HCQ_FUZZ_SEED=0x%llx\n", fuzz_name,
            (unsigned long long)fuzz_seed_in_use, (unsigned long long)fuzz_seed_in_use);
}

/* The seed for this run: HCQ_FUZZ_SEED, else `fixed`. */
static inline uint64_t fuzz_seed(const char *name, uint64_t fixed) {
  const char *env = getenv("HCQ_FUZZ_SEED");
  uint64_t seed = fixed;
  if (env && !strcmp(env, "random")) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    seed = ((uint64_t)ts.tv_sec * 1000000007ull) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
  } else if (env && env[0]) {
    char *end;
    seed = strtoull(env, &end, 0);
    if (*end) {
      fprintf(stderr, "%s: HCQ_FUZZ_SEED='%s' is not a number (or 'random')\n", name, env);
      exit(2);
    }
  }
  if (!seed) seed = 1; /* xorshift generators stay at 0 forever */
  fuzz_seed_in_use = seed;
  fuzz_name = name;
  printf("%s: seed 0x%llx (HCQ_FUZZ_SEED=0x%llx replays it)\n", name, (unsigned long long)seed,
         (unsigned long long)seed);
  fflush(stdout);
  atexit(fuzz_report_seed);
  return seed;
}

/* HCQ_FUZZ_SECONDS, else fallback_s; *out_set tells whether it was given (fuzzers with a fixed iteration count
 * keep it by default and run for the budget only when asked). */
static inline double fuzz_seconds(double fallback_s, int *out_set) {
  const char *env = getenv("HCQ_FUZZ_SECONDS");
  double s = env ? atof(env) : 0;
  if (out_set) *out_set = s > 0;
  return s > 0 ? s : fallback_s;
}

static inline double fuzz_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
