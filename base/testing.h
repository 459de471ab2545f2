/* Minimal test harness shared by every *_test.c: checks count failures and keep going, the test's main
 * returns testing_summary(). Exit code 77 means "skipped": tools/run_tests.sh reports it loudly. */
#ifndef HCQ_TESTING_H
#define HCQ_TESTING_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>

#include "base/status.h"

static int testing_failures;
static long long testing_checks; /* a fuzzer's budget can run past 2^31 checks (elf_test: 2.2e9 in 90 s) */

#define CHECK(cond)                                                                  \
  do {                                                                               \
    testing_checks++;                                                                \
    if (!(cond)) {                                                                   \
      testing_failures++;                                                            \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);       \
    }                                                                                \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                           \
  do {                                                                               \
    long long testing_a_ = (long long)(a), testing_b_ = (long long)(b);              \
    testing_checks++;                                                                \
    if (testing_a_ != testing_b_) {                                                  \
      testing_failures++;                                                            \
      fprintf(stderr, "%s:%d: CHECK_EQ_INT failed: %s == %lld, %s == %lld\n", __FILE__, __LINE__, #a, \
              testing_a_, #b, testing_b_);                                           \
    }                                                                                \
  } while (0)

#define CHECK_EQ_STR(a, b)                                                           \
  do {                                                                               \
    const char *testing_a_ = (a), *testing_b_ = (b);                                 \
    testing_checks++;                                                                \
    if (!testing_a_ || !testing_b_ || strcmp(testing_a_, testing_b_) != 0) {         \
      testing_failures++;                                                            \
      fprintf(stderr, "%s:%d: CHECK_EQ_STR failed:\n  %s = \"%s\"\n  %s = \"%s\"\n", __FILE__, __LINE__, \
              #a, testing_a_ ? testing_a_ : "(null)", #b, testing_b_ ? testing_b_ : "(null)"); \
    }                                                                                \
  } while (0)

/* Expect success; on failure print the status message and free it. */
#define CHECK_OK(expr)                                                               \
  do {                                                                               \
    hcq_status testing_st_ = (expr);                                                 \
    testing_checks++;                                                                \
    if (testing_st_) {                                                               \
      testing_failures++;                                                            \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr,           \
              hcq_status_message(testing_st_));                                      \
      hcq_status_free(testing_st_);                                                  \
    }                                                                                \
  } while (0)

/* Expect an error with the given code whose message contains `needle`. */
#define CHECK_ERR(expr, code_, needle)                                               \
  do {                                                                               \
    hcq_status testing_st_ = (expr);                                                 \
    testing_checks++;                                                                \
    if (!testing_st_ || hcq_status_code(testing_st_) != (code_) ||                   \
        !strstr(hcq_status_message(testing_st_), (needle))) {                        \
      testing_failures++;                                                            \
      fprintf(stderr, "%s:%d: %s: expected %s error containing \"%s\", got %s: \"%s\"\n", __FILE__, \
              __LINE__, #expr, hcq_code_name(code_), (needle),                       \
              hcq_code_name(hcq_status_code(testing_st_)), hcq_status_message(testing_st_)); \
    }                                                                                \
    hcq_status_free(testing_st_);                                                    \
  } while (0)

static inline int testing_summary(const char *name) {
  if (testing_failures) {
    fprintf(stderr, "%s: %d of %lld checks FAILED\n", name, testing_failures, testing_checks);
    return 1;
  }
  printf("%s: %lld checks passed\n", name, testing_checks);
  return 0;
}

/* A test that cannot run here (missing tool): say so and exit 77. Never counts as passed. */
#define TEST_SKIP(...)                                                               \
  do {                                                                               \
    fprintf(stderr, "SKIPPED: " __VA_ARGS__);                                        \
    fprintf(stderr, "\n");                                                           \
    exit(77);                                                                        \
  } while (0)

#endif
