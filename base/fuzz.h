/* Seeds and time budgets for the fuzzers (*_test.c; include after base/testing.h). `make test` is deterministic:
 * each fuzzer has its own fixed default seed. Environment:
 *   HCQ_FUZZ_SEED=N        replay seed N (decimal or 0x hex); HCQ_FUZZ_SEED=random draws one (make fuzz)
 *   HCQ_FUZZ_SECONDS=S     the time budget (default: the fuzzer's, 3 s for the time-bounded ones)
 * fuzz_seed() prints the seed in use, and prints it again at exit when a check failed, with the line to replay.
 * Also here: the fuzzers' one random generator (fuzz_rng, fuzz_next, fuzz_rnd) and text builder (fuzz_text). */
#ifndef HCQ_FUZZ_H
#define HCQ_FUZZ_H

#include <stdarg.h>
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

/* The generator: xorshift64 with shifts 13, 7, 17 (G. Marsaglia, "Xorshift RNGs", Journal of Statistical Software
 * 8(14), 2003), one state per program. Seed it with `fuzz_rng = fuzz_seed(...)`; a zero state stays zero. */
static uint64_t fuzz_rng;
static inline uint64_t fuzz_next(void) {
  fuzz_rng ^= fuzz_rng << 13;
  fuzz_rng ^= fuzz_rng >> 7;
  fuzz_rng ^= fuzz_rng << 17;
  return fuzz_rng;
}
/* A number in [0, n) (0 when n is 0); one step of the generator either way. */
static inline uint32_t fuzz_rnd(uint32_t n) {
  uint64_t x = fuzz_next();
  return n ? (uint32_t)(x % n) : 0;
}

/* Generated text (kernels, PTX, expressions), printf-style. Past the capacity it keeps the first 16383 bytes,
 * NUL-terminated: the text is then cut and will not parse, which the fuzzer reports with the text. */
typedef struct fuzz_text {
  char s[16384];
  size_t n;
} fuzz_text;

__attribute__((format(printf, 2, 3))) static inline void fuzz_put(fuzz_text *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(b->s + b->n, sizeof b->s - b->n, fmt, ap);
  va_end(ap);
  if (k > 0) b->n += (size_t)k;
  if (b->n >= sizeof b->s) b->n = sizeof b->s - 1;
}

#endif
