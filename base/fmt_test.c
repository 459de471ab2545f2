/* base_fmt_v against the C library's snprintf (the reference): fixed cases at the integer limits, strings, %%,
 * what it must refuse (-1), short buffers, then random integers of every length. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "base/fmt.h"
#include "base/testing.h"
#include "base/fuzz.h"

/* raw: no format attribute, for the formats the compiler would flag (they test what base_fmt_v refuses) */
static int raw(char *buf, size_t cap, const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  int n = base_fmt_v(buf, cap, f, ap);
  va_end(ap);
  return n;
}
static int fast(char *buf, size_t cap, const char *f, ...) __attribute__((format(printf, 3, 4)));
static int fast(char *buf, size_t cap, const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  int n = base_fmt_v(buf, cap, f, ap);
  va_end(ap);
  return n;
}

/* Both formatters on one format and arguments: equal text and length. */
#define SAME(...)                                      \
  do {                                                 \
    char a_[256], b_[256];                             \
    int na_ = fast(a_, sizeof a_, __VA_ARGS__);        \
    int nb_ = snprintf(b_, sizeof b_, __VA_ARGS__);    \
    CHECK_EQ_INT(na_, nb_);                            \
    if (na_ == nb_) CHECK_EQ_STR(a_, b_);              \
  } while (0)

static void test_fixed(void) {
  SAME("plain text");
  SAME("%s", "");
  SAME("a%sb%sc", "x", "yz");
  SAME("%c%c", 'q', '0');
  SAME("100%%");
  SAME("%d %d %d %d", 0, -1, INT_MAX, INT_MIN);
  SAME("%i", -42);
  SAME("%u %u", 0u, UINT_MAX);
  SAME("%ld %ld", LONG_MAX, LONG_MIN);
  SAME("%lu", ULONG_MAX);
  SAME("%lld %lld %lld", LLONG_MAX, LLONG_MIN, 0ll);
  SAME("%llu %lluull", ULLONG_MAX, 7ull);
  SAME("(%lldll)", -5ll);
  SAME("%zu %zd %zd", (size_t)SIZE_MAX, (ssize_t)-3, (ssize_t)SSIZE_MAX);
  SAME("float%s_u v%u = *(%s*)(%s+%lld);", "4", 3u, "float4", "data0", 1024ll);
}

static void test_refused(void) {
  char b[64];
  CHECK_EQ_INT(fast(b, sizeof b, "%x", 255u), -1);
  CHECK_EQ_INT(fast(b, sizeof b, "%04x", 255u), -1);
  CHECK_EQ_INT(fast(b, sizeof b, "%5d", 1), -1);
  CHECK_EQ_INT(fast(b, sizeof b, "%.9g", 1.5), -1);
  CHECK_EQ_INT(raw(b, sizeof b, "%s", (const char *)NULL), -1);
  CHECK_EQ_INT(raw(b, sizeof b, "trailing %"), -1);
  /* no room: -1, never a cut text; exactly full (text + NUL) fits */
  CHECK_EQ_INT(fast(b, 4, "abcd"), -1);
  CHECK_EQ_INT(fast(b, 5, "abcd"), 4);
  CHECK_EQ_STR(b, "abcd");
  CHECK_EQ_INT(fast(b, 5, "%s", "abcde"), -1);
  CHECK_EQ_INT(fast(b, 3, "%d", -100), -1);
  CHECK_EQ_INT(raw(b, 1, ""), 0);
  CHECK_EQ_INT(raw(b, 0, ""), -1);
}

static void test_random(void) {
  fuzz_rng = fuzz_seed("fmt_test", 0x5eed0f3a7ull);
  for (int i = 0; i < 20000; i++) {
    uint64_t r = fuzz_next();
    int shift = (int)(fuzz_next() % 64); /* every magnitude, not only 19-digit ones */
    long long v = (long long)(r >> shift);
    if (fuzz_next() & 1) v = -v;
    SAME("%lld|%llu|%d|%u|%ld|%zu", v, (unsigned long long)v, (int)v, (unsigned)v, (long)v, (size_t)v);
  }
}

int main(void) {
  test_fixed();
  test_refused();
  test_random();
  return testing_summary("fmt_test");
}
