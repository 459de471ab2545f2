/* The launch-size evaluator, compiled once and run many times (hcq_expr_compile/hcq_expr_run) and in one step
 * (hcq_expr_eval), against a tree evaluated directly in this file: random expressions over 3 variables with every
 * operator, negative operands (floor vs truncation), max/min, nesting; floor division and C remainder are computed
 * here through double division (exact for |values| < 2^50), not the evaluator's formula. Then the errors: unknown
 * names, a zero divisor only known at run time, too many operations, malformed text. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/testing.h"
#include "base/fuzz.h"
#include "hcq/program.h"

#define LIMIT (1LL << 40)

static uint64_t rng;
static uint32_t next(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (uint32_t)(rng >> 16);
}

static const char *const NAMES[3] = {"n", "m_1", "_k"};
static bool used_var; /* the last generated expression names a variable */

/* Append a random expression of depth <= d to buf; its value for vals into *v. false: a zero divisor or a value
 * beyond LIMIT (the caller draws again). */
static bool gen(char *buf, size_t cap, int d, const int64_t *vals, int64_t *v) {
  size_t at = strlen(buf);
  int kind = d <= 0 ? (int)(next() % 3) : (int)(next() % 11);
  if (kind <= 1) {
    int64_t c = (int64_t)(next() % (kind ? 7 : 100));
    snprintf(buf + at, cap - at, "%lld", (long long)c);
    *v = c;
    return true;
  }
  if (kind == 2) {
    int i = (int)(next() % 3);
    snprintf(buf + at, cap - at, "%s", NAMES[i]);
    *v = vals[i];
    used_var = true;
    return true;
  }
  int64_t a, b;
  if (kind == 3) { /* unary minus on a parenthesized operand */
    snprintf(buf + at, cap - at, "-(");
    if (!gen(buf, cap, d - 1, vals, &a)) return false;
    strncat(buf, ")", cap - strlen(buf) - 1);
    *v = -a;
    return true;
  }
  if (kind == 4 || kind == 5) {
    snprintf(buf + at, cap - at, "%s(", kind == 4 ? "max" : "min");
    if (!gen(buf, cap, d - 1, vals, &a)) return false;
    strncat(buf, ", ", cap - strlen(buf) - 1);
    if (!gen(buf, cap, d - 1, vals, &b)) return false;
    strncat(buf, ")", cap - strlen(buf) - 1);
    *v = kind == 4 ? (a > b ? a : b) : (a < b ? a : b);
    return true;
  }
  /* "/" is floor division too (grammar in program.h); % is the C remainder */
  static const char *const ops[] = {" + ", "-", "*", " // ", "/", " % "};
  if (kind == 10 && next() % 2) kind = 11;
  const char *op = ops[kind - 6];
  strncat(buf, "(", cap - strlen(buf) - 1);
  if (!gen(buf, cap, d - 1, vals, &a)) return false;
  strncat(buf, op, cap - strlen(buf) - 1);
  if (!gen(buf, cap, d - 1, vals, &b)) return false;
  strncat(buf, ")", cap - strlen(buf) - 1);
  switch (kind) {
  case 6: *v = a + b; break;
  case 7: *v = a - b; break;
  case 8: *v = a * b; break;
  case 9: case 10:
    if (b == 0) return false;
    *v = (int64_t)floor((double)a / (double)b);
    break;
  case 11:
    if (b == 0) return false;
    *v = a - b * (int64_t)trunc((double)a / (double)b);
    break;
  }
  return *v > -LIMIT && *v < LIMIT;
}

static void test_random(void) {
  rng = fuzz_seed("program_eval_test", 0x5eed1234abcdull) | 1;
  int checked = 0;
  for (int iter = 0; iter < 4000; iter++) {
    char text[HCQ_PROGRAM_EXPR_B * 4] = "";
    int64_t vals[3] = {(int64_t)(next() % 41) - 20, (int64_t)(next() % 1000), -(int64_t)(next() % 9)};
    int64_t want;
    used_var = false;
    if (!gen(text, sizeof text, 1 + (int)(next() % 4), vals, &want) || strlen(text) >= HCQ_PROGRAM_EXPR_B) continue;
    int64_t got = 7;
    CHECK_OK(hcq_expr_eval(text, NAMES, vals, 3, &got));
    if (got != want) fprintf(stderr, "'%s' n=%lld m_1=%lld _k=%lld\n", text, (long long)vals[0], (long long)vals[1],
                             (long long)vals[2]);
    CHECK_EQ_INT(got, want);
    /* compiled once, run with the same values: the same answer */
    hcq_expr_code c;
    CHECK_OK(hcq_expr_compile(text, NAMES, 3, &c));
    got = 7;
    CHECK_OK(hcq_expr_run(&c, vals, &got));
    CHECK_EQ_INT(got, want);
    CHECK(hcq_expr_is_const(&c) == !used_var);
    checked++;
  }
  CHECK(checked > 1000);
}

/* C remainder (sign of the dividend) and floor division on every sign combination, through one compiled code. */
static void test_signs(void) {
  const char *names[2] = {"a", "b"};
  hcq_expr_code q, r;
  CHECK_OK(hcq_expr_compile("a // b", names, 2, &q));
  CHECK_OK(hcq_expr_compile("a % b", names, 2, &r));
  for (int64_t a = -9; a <= 9; a++)
    for (int64_t b = -4; b <= 4; b++) {
      if (!b) continue;
      int64_t v[2] = {a, b}, gq, gr;
      CHECK_OK(hcq_expr_run(&q, v, &gq));
      CHECK_OK(hcq_expr_run(&r, v, &gr));
      CHECK_EQ_INT(gq, (int64_t)floor((double)a / (double)b));
      CHECK_EQ_INT(gr, a - b * (int64_t)trunc((double)a / (double)b));
    }
  int64_t v[2] = {INT64_MIN, -1}, g;
  CHECK_OK(hcq_expr_run(&q, v, &g)); /* wraps, never traps */
  CHECK_EQ_INT(g, INT64_MIN);
  CHECK_OK(hcq_expr_run(&r, v, &g));
  CHECK_EQ_INT(g, 0);
}

static void test_errors(void) {
  const char *names[1] = {"n"};
  hcq_expr_code c;
  int64_t v;
  CHECK_ERR(hcq_expr_compile("n + q", names, 1, &c), HCQ_CODE_INVALID, "unknown variable at 'q'");
  CHECK_ERR(hcq_expr_compile("(n + 1", names, 1, &c), HCQ_CODE_INVALID, "expected ')'");
  CHECK_ERR(hcq_expr_compile("n 1", names, 1, &c), HCQ_CODE_INVALID, "trailing text");
  CHECK_ERR(hcq_expr_compile("max(n 1)", names, 1, &c), HCQ_CODE_INVALID, "expected ','");
  CHECK_ERR(hcq_expr_compile("1234567890123456789", names, 1, &c), HCQ_CODE_INVALID, "number too long");
  CHECK_ERR(hcq_expr_eval("7 // 0", NULL, NULL, 0, &v), HCQ_CODE_INVALID, "division by zero");
  CHECK_OK(hcq_expr_compile("64 // n", names, 1, &c));
  int64_t zero = 0, two = 2;
  CHECK_ERR(hcq_expr_run(&c, &zero, &v), HCQ_CODE_INVALID, "division by zero");
  CHECK_OK(hcq_expr_run(&c, &two, &v));
  CHECK_EQ_INT(v, 32);
  char deep[80 * 2 + 2] = "";
  for (int i = 0; i < 70; i++) strcat(deep, "(");
  strcat(deep, "1");
  for (int i = 0; i < 70; i++) strcat(deep, ")");
  CHECK_ERR(hcq_expr_eval(deep, NULL, NULL, 0, &v), HCQ_CODE_INVALID, "nested too deeply");
  char longer[2 * HCQ_EXPR_CODE_MAX + 8] = "1";
  for (int i = 0; i < HCQ_EXPR_CODE_MAX / 2 + 1; i++) strcat(longer, "+1");
  CHECK_ERR(hcq_expr_eval(longer, NULL, NULL, 0, &v), HCQ_CODE_INVALID, "more than 128 operations");
  CHECK_ERR(hcq_expr_compile(NULL, names, 1, &c), HCQ_CODE_INVALID, "NULL argument");
}

int main(void) {
  test_random();
  test_signs();
  test_errors();
  return testing_summary("program_eval_test");
}
