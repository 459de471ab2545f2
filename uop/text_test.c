/* Tests of the expression text format: parse against nodes built directly with the uop API, print against
 * hand-written text, parse(print(n)) == n on hand cases and on random trees, exact error positions, hostile inputs
 * (truncation, unknown words, out-of-range integers, 100,000-deep nesting, 10 MB lines) and the infix render. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "uop/text.h"
#include "uop/uop.h"

static uop_ctx *ctx;

static const uop *P(const char *text) {
  const uop *n = NULL;
  hcq_status st = uop_parse(ctx, text, strlen(text), &n);
  if (st) {
    fprintf(stderr, "parse of \"%.200s\" failed: %s\n", text, hcq_status_message(st));
    hcq_status_free(st);
    return NULL;
  }
  return n;
}

/* Printed form of n (static buffer per call site is not needed: caller frees via the check macros below). */
static char *print_of(const uop *n) {
  char *s = NULL;
  hcq_status st = uop_print(n, &s);
  if (st) {
    fprintf(stderr, "print failed: %s\n", hcq_status_message(st));
    hcq_status_free(st);
    return NULL;
  }
  return s;
}

static char *render_of(const uop *n) {
  char *s = NULL;
  hcq_status st = uop_render(n, &s);
  if (st) {
    fprintf(stderr, "render failed: %s\n", hcq_status_message(st));
    hcq_status_free(st);
    return NULL;
  }
  return s;
}

#define CHECK_PRINT(node, expect)            \
  do {                                       \
    char *s_ = print_of(node);               \
    CHECK_EQ_STR(s_, expect);                \
    free(s_);                                \
  } while (0)

#define CHECK_RENDER(node, expect)           \
  do {                                       \
    char *s_ = render_of(node);              \
    CHECK_EQ_STR(s_, expect);                \
    free(s_);                                \
  } while (0)

/* parse(print(n)) must give n itself. */
static bool roundtrips(const uop *n) {
  char *s = print_of(n);
  if (!s) return false;
  const uop *back = P(s);
  if (back != n) fprintf(stderr, "round trip changed the node: %.300s\n", s);
  free(s);
  return back == n;
}

/* The parse error message (caller frees), or NULL if it parsed. */
static char *parse_error(const char *text, size_t len) {
  const uop *n = NULL;
  hcq_status st = uop_parse(ctx, text, len, &n);
  if (!st) return NULL;
  char *m = hcq_status_code(st) == HCQ_CODE_PARSE ? strdup(hcq_status_message(st)) : strdup("(not a PARSE error)");
  hcq_status_free(st);
  return m;
}

#define CHECK_PARSE_ERR(text, expect)                      \
  do {                                                     \
    char *m_ = parse_error(text, strlen(text));            \
    CHECK_EQ_STR(m_, expect);                              \
    free(m_);                                              \
  } while (0)

/* The parse error must start with `prefix`. */
#define CHECK_PARSE_ERR_PREFIX(text, len, prefix)                                     \
  do {                                                                                \
    char *m_ = parse_error(text, len);                                                \
    CHECK(m_ && strncmp(m_, prefix, strlen(prefix)) == 0);                            \
    if (m_ && strncmp(m_, prefix, strlen(prefix))) fprintf(stderr, "  got: %.300s\n", m_); \
    free(m_);                                                                         \
  } while (0)

static void test_parse_builds_the_right_nodes(void) {
  uop_dtype idx = uop_dt(UOP_INDEX), i32 = uop_dt(UOP_INT32), f32 = uop_dt(UOP_FLOAT32);
  const uop *a = uop_var(ctx, "a", 0, 10, idx), *b = uop_var(ctx, "b", -5, 5, idx);
  CHECK(P("5") == uop_index_const(ctx, 5));
  CHECK(P("-3") == uop_index_const(ctx, -3));
  CHECK(P("-9223372036854775808") == uop_index_const(ctx, INT64_MIN));
  CHECK(P("9223372036854775807") == uop_index_const(ctx, INT64_MAX));
  CHECK(P("true") == uop_const_bool(ctx, true));
  CHECK(P("false") == uop_const_bool(ctx, false));
  CHECK(P("(const 7 int32)") == uop_const_int(ctx, i32, 7));
  CHECK(P("(const -128 int8)") == uop_const_int(ctx, uop_dt(UOP_INT8), -128));
  CHECK(P("(const 255 uint8)") == uop_const_int(ctx, uop_dt(UOP_UINT8), 255));
  CHECK(P("(const 18446744073709551615 uint64)") == uop_const_int(ctx, uop_dt(UOP_UINT64), -1));
  CHECK(P("(const 12 index)") == uop_index_const(ctx, 12));
  CHECK(P("(const 1.5 float32)") == uop_const_float(ctx, f32, 1.5));
  CHECK(P("(const -2.5e3 float64)") == uop_const_float(ctx, uop_dt(UOP_FLOAT64), -2500.0));
  CHECK(P("(const -inf float16)") == uop_const_float(ctx, uop_dt(UOP_FLOAT16), -INFINITY));
  CHECK(P("(const inf bfloat16)") == uop_const_float(ctx, uop_dt(UOP_BFLOAT16), INFINITY));
  CHECK(P("(const 3 float32)") == uop_const_float(ctx, f32, 3.0));
  CHECK(P("(const true bool)") == uop_const_bool(ctx, true));
  CHECK(P("(const 0 bool)") == uop_const_bool(ctx, false));
  CHECK(P("(var a 0 10 index)") == a);
  CHECK(P("(var b -5 5 index)") == b);
  CHECK(P("(var n 0 4294967295 uint32)") == uop_var(ctx, "n", 0, 4294967295LL, uop_dt(UOP_UINT32)));
  static const struct { const char *s; uop_op op; } bins[] = {
      {"+", UOP_ADD}, {"*", UOP_MUL}, {"//", UOP_IDIV}, {"%", UOP_MOD}, {"<", UOP_CMPLT}, {"!=", UOP_CMPNE},
      {"&", UOP_AND}, {"|", UOP_OR}, {"^", UOP_XOR}, {"max", UOP_MAX}, {"<<", UOP_SHL}, {">>", UOP_SHR},
  };
  for (size_t i = 0; i < sizeof bins / sizeof bins[0]; i++) {
    char text[128];
    snprintf(text, sizeof text, "(%s (var a 0 10 index) (var b -5 5 index))", bins[i].s);
    const uop *n = P(text);
    CHECK(n && n->op == bins[i].op && n->nsrc == 2 && n->src[0] == a && n->src[1] == b);
    bool cmp = bins[i].op == UOP_CMPLT || bins[i].op == UOP_CMPNE;
    CHECK(n && n->dtype.scalar == (cmp ? UOP_BOOL : UOP_INDEX));
  }
  CHECK(P("(+ (var a 0 10 index) 3)") == uop_alu2(ctx, UOP_ADD, a, uop_index_const(ctx, 3)));
  const uop *r = P("(range 2 16)");
  CHECK(r && r->op == UOP_RANGE && r->arg.i == 2 && r->arg.i2 == UOP_AXIS_LOOP && r->src[0] == uop_index_const(ctx, 16));
  CHECK(r == uop_range(ctx, uop_index_const(ctx, 16), 2, UOP_AXIS_LOOP));
  CHECK(P("(special gidx0 32)") == uop_special(ctx, "gidx0", uop_index_const(ctx, 32)));
  const uop *lt = uop_alu2(ctx, UOP_CMPLT, a, uop_index_const(ctx, 5));
  CHECK(P("(where (< (var a 0 10 index) 5) (var a 0 10 index) 5)") == uop_where(ctx, lt, a, uop_index_const(ctx, 5)));
  const uop *ca = uop_cast(ctx, f32, a);
  CHECK(P("(cast float32 (var a 0 10 index))") == ca);
  CHECK(P("(recip (cast float32 (var a 0 10 index)))") == uop_alu1(ctx, UOP_RECIP, ca));
  CHECK(P("(trunc (cast float32 (var a 0 10 index)))") == uop_alu1(ctx, UOP_TRUNC, ca));
  /* Layout freedom: whitespace, newlines and comments anywhere between tokens. */
  CHECK(P("  ( +\t(var a 0 10 index) ; a comment ( ) \n\n 3 )  ; trailing\n") ==
        uop_alu2(ctx, UOP_ADD, a, uop_index_const(ctx, 3)));
}

static void test_print_hand_cases(void) {
  CHECK_PRINT(P("  ( +  1\n  2 ) "), "(+ 1 2)");
  CHECK_PRINT(P("(const 12 index)"), "12");
  CHECK_PRINT(P("(const 1 bool)"), "true");
  CHECK_PRINT(P("(const 200 uint8)"), "(const 200 uint8)");
  CHECK_PRINT(P("(const -7 int16)"), "(const -7 int16)");
  CHECK_PRINT(P("(const 18446744073709551615 uint64)"), "(const 18446744073709551615 uint64)");
  CHECK_PRINT(P("(const 0.1 float64)"), "(const 0.1 float64)");
  CHECK_PRINT(P("(const 2.50 float32)"), "(const 2.5 float32)");
  CHECK_PRINT(P("(const 3 float32)"), "(const 3.0 float32)");
  CHECK_PRINT(P("(const -inf float32)"), "(const -inf float32)");
  CHECK_PRINT(P("(var n 0 18446744073709551615 uint64)"), "(var n 0 18446744073709551615 uint64)");
  CHECK_PRINT(P("(% (+ (* (var a 0 9 index) 4) (range 0 4)) 4)"), "(% (+ (* (var a 0 9 index) 4) (range 0 4)) 4)");
  CHECK_PRINT(P("(where (!= (special lidx0 8) 0) (max (var x -3 3 int32) (const 0 int32)) (const 1 int32))"),
              "(where (!= (special lidx0 8) 0) (max (var x -3 3 int32) (const 0 int32)) (const 1 int32))");
  CHECK_PRINT(P("(cast int64 (<< (var a 0 9 index) 2))"), "(cast int64 (<< (var a 0 9 index) 2))");
}

static void test_roundtrip_hand_cases(void) {
  static const char *const cases[] = {
      "0", "-1", "true", "false", "(const 0.5 float16)", "(const nan float32)", "(const -0 float64)",
      "(const 1e-300 float64)", "(const 65504 float16)", "(const -2147483648 int32)", "(const 4294967295 uint32)",
      "(var _x9 -100 100 int64)", "(special gidx2 (+ (var n 1 9 index) 1))", "(range 7 (range 1 5))",
      "(>> (^ (| (& (var a 0 255 uint8) (const 15 uint8)) (const 1 uint8)) (const 3 uint8)) (const 1 uint8))",
      "(// (+ (* (var a 0 10 index) 8) (special lidx0 8)) 4)", "(< (% (var a 0 10 index) 3) 2)",
      "(& (< (var a 0 10 index) 5) (!= (var b 0 3 index) 1))", "(recip (trunc (cast float32 (var a 0 3 index))))",
      "(where true (cast bool (var a 0 1 int8)) false)",
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const uop *n = P(cases[i]);
    CHECK(n && roundtrips(n));
  }
}

/* ---------------------------------------------------------------------------------------------- random trees */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static int rndn(int n) { return (int)(rnd() % (uint64_t)n); }

static const uop_scalar int_types[] = {UOP_INDEX, UOP_INT8, UOP_UINT8, UOP_INT16, UOP_UINT16,
                                       UOP_INT32, UOP_UINT32, UOP_INT64, UOP_UINT64};
static const uop_scalar float_types[] = {UOP_FLOAT16, UOP_BFLOAT16, UOP_FLOAT32, UOP_FLOAT64};

static bool is_float(uop_scalar s) { return s >= UOP_FLOAT16; }

static int64_t rand_int_of(uop_scalar s) {
  int64_t lo = uop_dt_min(uop_dt(s)), hi = uop_dt_max(uop_dt(s));
  switch (rndn(5)) {
  case 0: return lo;
  case 1: return hi;
  case 2: return 0;
  default: return (int64_t)(rnd() % 2001) - 1000;
  }
}

static const uop *gen(uop_scalar s, int depth);

static const uop *gen_leaf(uop_scalar s) {
  if (s == UOP_BOOL) return uop_const_bool(ctx, rndn(2));
  if (is_float(s)) {
    static const double vals[] = {0.0, -0.0, 1.0, -2.5, 0.1, 1e-3, 1024.0, 3.75};
    double v = rndn(8) == 0 ? (rndn(2) ? INFINITY : -INFINITY) : vals[rndn(8)];
    return uop_const_float(ctx, uop_dt(s), v);
  }
  int k = rndn(s == UOP_INDEX ? 5 : 3);
  if (k == 0) {
    int64_t v = rand_int_of(s);
    if (s == UOP_UINT64 || s == UOP_UINT32 || s == UOP_UINT16 || s == UOP_UINT8) v = v < 0 ? -v : v;
    v &= s == UOP_UINT8 ? 0xff : s == UOP_UINT16 ? 0xffff : s == UOP_UINT32 ? 0xffffffffLL : -1;
    if (s == UOP_INT8) v = (int8_t)v;
    if (s == UOP_INT16) v = (int16_t)v;
    if (s == UOP_INT32) v = (int32_t)v;
    return uop_const_int(ctx, uop_dt(s), v);
  }
  if (k == 1 || k == 2) {
    static const char *const names[] = {"a", "b", "n", "x_1"};
    int64_t lo = rndn(2) ? 0 : -rndn(50), hi = rndn(100);
    bool uns = s == UOP_UINT8 || s == UOP_UINT16 || s == UOP_UINT32 || s == UOP_UINT64;
    if (uns) lo = 0;
    return uop_var(ctx, names[rndn(4)], lo, hi, uop_dt(s));
  }
  if (k == 3) return uop_range(ctx, uop_index_const(ctx, 1 + rndn(64)), rndn(4), UOP_AXIS_LOOP);
  return uop_special(ctx, rndn(2) ? "gidx0" : "lidx1", uop_index_const(ctx, 1 + rndn(256)));
}

static const uop *gen(uop_scalar s, int depth) {
  if (depth <= 0 || rndn(4) == 0) return gen_leaf(s);
  int k = rndn(10);
  if (k == 0) { /* where */
    return uop_where(ctx, gen(UOP_BOOL, depth - 1), gen(s, depth - 1), gen(s, depth - 1));
  }
  if (k == 1) { /* cast from something else */
    uop_scalar from = rndn(2) ? int_types[rndn(9)] : float_types[rndn(4)];
    return uop_cast(ctx, uop_dt(s), gen(from, depth - 1));
  }
  if (s == UOP_BOOL) {
    static const uop_op ops[] = {UOP_CMPLT, UOP_CMPNE, UOP_AND, UOP_OR, UOP_XOR};
    uop_op op = ops[rndn(5)];
    if (op == UOP_CMPLT || op == UOP_CMPNE) {
      uop_scalar t = rndn(3) ? int_types[rndn(9)] : float_types[rndn(4)];
      return uop_alu2(ctx, op, gen(t, depth - 1), gen(t, depth - 1));
    }
    return uop_alu2(ctx, op, gen(s, depth - 1), gen(s, depth - 1));
  }
  if (is_float(s)) {
    static const uop_op ops[] = {UOP_ADD, UOP_MUL, UOP_MAX, UOP_RECIP, UOP_TRUNC};
    uop_op op = ops[rndn(5)];
    if (op == UOP_RECIP || op == UOP_TRUNC) return uop_alu1(ctx, op, gen(s, depth - 1));
    return uop_alu2(ctx, op, gen(s, depth - 1), gen(s, depth - 1));
  }
  static const uop_op ops[] = {UOP_ADD, UOP_MUL, UOP_IDIV, UOP_MOD, UOP_MAX, UOP_SHL, UOP_SHR, UOP_AND, UOP_OR, UOP_XOR};
  return uop_alu2(ctx, ops[rndn(10)], gen(s, depth - 1), gen(s, depth - 1));
}

static void test_roundtrip_random(void) {
  const uop_scalar all[] = {UOP_INDEX, UOP_BOOL, UOP_INT8, UOP_UINT8, UOP_INT16, UOP_UINT16, UOP_INT32,
                            UOP_UINT32, UOP_INT64, UOP_UINT64, UOP_FLOAT16, UOP_BFLOAT16, UOP_FLOAT32, UOP_FLOAT64};
  int ok = 0, total = 3000;
  for (int i = 0; i < total; i++) {
    const uop *n = gen(all[rndn(14)], 1 + rndn(7));
    char *s = print_of(n);
    const uop *back = s ? P(s) : NULL;
    char *s2 = back ? print_of(back) : NULL;
    if (back == n && s2 && !strcmp(s, s2)) ok++;
    else fprintf(stderr, "random round trip %d failed: %.300s\n", i, s ? s : "(print failed)");
    free(s);
    free(s2);
  }
  CHECK_EQ_INT(ok, total);
}

/* ---------------------------------------------------------------------------------------------- errors */

static void test_errors_with_positions(void) {
  CHECK_PARSE_ERR("", "1:1: expected expression, got end of input");
  CHECK_PARSE_ERR("  ; only a comment\n", "2:1: expected expression, got end of input");
  CHECK_PARSE_ERR("(+ 1", "1:5: expected expression, got end of input");
  CHECK_PARSE_ERR("(+ 1 2", "1:7: expected ')', got end of input");
  CHECK_PARSE_ERR("(+ 1 2 3)", "1:8: expected ')', got '3'");
  CHECK_PARSE_ERR("(+ 1 2))", "1:8: expected end of input, got ')'");
  CHECK_PARSE_ERR("(+ 1 2) 3", "1:9: expected end of input, got '3'");
  CHECK_PARSE_ERR(")", "1:1: expected expression, got ')'");
  CHECK_PARSE_ERR("()", "1:2: expected operator, got ')'");
  CHECK_PARSE_ERR("((+ 1 2))", "1:2: expected operator, got '('");
  CHECK_PARSE_ERR("(+ 1 x)", "1:6: expected expression (INT, true, false or '('), got 'x'");
  CHECK_PARSE_ERR("(+ 1\n   x)", "2:4: expected expression (INT, true, false or '('), got 'x'");
  CHECK_PARSE_ERR("(+ 1 2.5)", "1:6: expected expression (a bare number is an index integer; write (const V DT) "
                                "for other dtypes), got '2.5'");
  CHECK_PARSE_ERR("(- 1 2)", "1:2: unknown operator '-' (expected one of + * // % < != & | ^ max << >> recip trunc "
                             "where cast const var range special)");
  CHECK_PARSE_ERR("(neg 1)", "1:2: unknown operator 'neg' (expected one of + * // % < != & | ^ max << >> recip trunc "
                             "where cast const var range special)");
  CHECK_PARSE_ERR("(const 1 int33)", "1:10: unknown dtype 'int33' (expected one of index bool int8 uint8 int16 uint16 "
                                     "int32 uint32 int64 uint64 float16 bfloat16 float32 float64)");
  CHECK_PARSE_ERR("(cast 1 2)", "1:7: unknown dtype '1' (expected one of index bool int8 uint8 int16 uint16 "
                                "int32 uint32 int64 uint64 float16 bfloat16 float32 float64)");
  CHECK_PARSE_ERR("(const 300 uint8)", "1:8: integer '300' out of range for uint8 (0..255)");
  CHECK_PARSE_ERR("(const -1 uint64)", "1:8: integer '-1' out of range for uint64 (0..18446744073709551615)");
  CHECK_PARSE_ERR("(const -129 int8)", "1:8: integer '-129' out of range for int8 (-128..127)");
  CHECK_PARSE_ERR("(const 18446744073709551616 uint64)",
                  "1:8: integer '18446744073709551616' out of range for uint64 (0..18446744073709551615)");
  CHECK_PARSE_ERR("9223372036854775808", "1:1: integer '9223372036854775808' out of range for index (int64)");
  CHECK_PARSE_ERR("-9223372036854775809", "1:1: integer '-9223372036854775809' out of range for index (int64)");
  CHECK_PARSE_ERR("(+ 1 99999999999999999999999)",
                  "1:6: integer '99999999999999999999999' out of range for index (int64)");
  CHECK_PARSE_ERR("(const 1.5 int32)", "1:8: expected integer, got '1.5'");
  CHECK_PARSE_ERR("(const yes bool)", "1:8: expected bool value (true, false, 0 or 1), got 'yes'");
  CHECK_PARSE_ERR("(const 0x10 float32)", "1:8: expected float value (decimal, inf, -inf or nan), got '0x10'");
  CHECK_PARSE_ERR("(const 1e39 float32)", "1:8: float constant '1e39' out of range for float32");
  CHECK_PARSE_ERR("(const 70000 float16)", "1:8: float constant '70000' out of range for float16");
  CHECK_PARSE_ERR("(const 1 int32", "1:15: expected ')', got end of input");
  CHECK_PARSE_ERR("(var a 5 1 index)", "1:8: var min '5' is greater than max '1'");
  CHECK_PARSE_ERR("(var 1a 0 1 index)", "1:6: expected name (letters, digits, _), got '1a'");
  CHECK_PARSE_ERR("(var a 0 1.5 index)", "1:10: expected integer, got '1.5'");
  CHECK_PARSE_ERR("(var a 0 300 uint8)", "1:10: integer '300' out of range for uint8 (0..255)");
  CHECK_PARSE_ERR("(var f 0 1 float32)", "1:12: var dtype must be an integer type or index, got float32");
  CHECK_PARSE_ERR("(var a (+ 1 2) 3 index)", "1:8: expected integer, got '('");
  CHECK_PARSE_ERR("(range -1 4)", "1:8: range id must be >= 0, got -1");
  CHECK_PARSE_ERR("(range 0 (const 4 int32))", "1:10: END of range must be index, got int32");
  CHECK_PARSE_ERR("(special 0 4)", "1:10: expected name (letters, digits, _), got '0'");
  CHECK_PARSE_ERR("(special g true)", "1:12: END of special must be index, got bool");
  CHECK_PARSE_ERR("(+ 1 (const 2 int32))", "1:1: operands of + have different dtypes: index (at 1:4) and int32 (at 1:6)");
  CHECK_PARSE_ERR("(* (var a 0 1 int32)\n (var b 0 1 int64))",
                  "1:1: operands of * have different dtypes: int32 (at 1:4) and int64 (at 2:2)");
  CHECK_PARSE_ERR("(< 1 true)", "1:1: operands of < have different dtypes: index (at 1:4) and bool (at 1:6)");
  CHECK_PARSE_ERR("(// (const 1 float32) (const 2 float32))", "1:1: operands of // must be integer, got float32");
  CHECK_PARSE_ERR("(& (const 1 float32) (const 2 float32))", "1:1: operands of & must be integer or bool, got float32");
  CHECK_PARSE_ERR("(recip 2)", "1:8: operand of recip must be a float, got index");
  CHECK_PARSE_ERR("(trunc true)", "1:8: operand of trunc must be a float, got bool");
  CHECK_PARSE_ERR("(where 1 2 3)", "1:8: condition of where must be bool, got index");
  CHECK_PARSE_ERR("(where true 2 false)", "1:1: arms of where have different dtypes: index (at 1:13) and bool (at 1:15)");
  CHECK_PARSE_ERR("(recip (const 1 float32) 2)", "1:26: expected ')', got '2'");
  /* First-line numbering for lines of a larger file. */
  const uop *n = NULL;
  CHECK_ERR(uop_parse_at(ctx, "(+ 1", 4, 42, &n), HCQ_CODE_PARSE, "42:5: expected expression, got end of input");
  CHECK(n == NULL);
  /* Text that is not NUL-terminated: only len bytes count. */
  CHECK(uop_parse(ctx, "(+ 1 2)garbage", 7, &n) == HCQ_OK && n == P("(+ 1 2)"));
  /* Non-printable bytes are shown as '?'. */
  CHECK_PARSE_ERR("(+ 1 \x01\x02)", "1:6: expected expression (INT, true, false or '('), got '?" "?'");
}

/* ---------------------------------------------------------------------------------------------- hostile inputs */

static void test_deep_nesting(void) {
  const int depth = 100000;
  size_t cap = (size_t)depth * 8 + 16, o = 0;
  char *s = malloc(cap);
  for (int i = 0; i < depth; i++) memcpy(s + o, "(+ ", 3), o += 3;
  s[o++] = '1';
  for (int i = 0; i < depth; i++) memcpy(s + o, " 1)", 3), o += 3;
  const uop *n = NULL;
  hcq_status st = uop_parse(ctx, s, o, &n);
  CHECK(st == HCQ_OK && n);
  hcq_status_free(st);
  /* Independent check of the shape: walk down src[0] depth times. */
  const uop *w = n;
  int levels = 0;
  while (w && w->op == UOP_ADD) w = w->src[0], levels++;
  CHECK_EQ_INT(levels, depth);
  CHECK(w == uop_index_const(ctx, 1));
  /* Printer and renderer walk it without recursion; the print is the input text itself. */
  char *p = print_of(n);
  CHECK(p && strlen(p) == o && memcmp(p, s, o) == 0);
  char *r = render_of(n);
  CHECK(r && strlen(r) == (size_t)depth * 4 + 1 && !strncmp(r, "((((", 4) && !strcmp(r + strlen(r) - 3, "+1)"));
  free(r);
  CHECK(uop_parse(ctx, p, strlen(p), &n) == HCQ_OK);
  free(p);
  /* Truncated deep input: a clear error at the end. */
  char expect[128];
  snprintf(expect, sizeof expect, "1:%zu: expected expression, got end of input", (size_t)depth * 5 + 1);
  o = 0;
  for (int i = 0; i < depth; i++) memcpy(s + o, "(+ 1 ", 5), o += 5;
  char *m = parse_error(s, o);
  CHECK_EQ_STR(m, expect);
  free(m);
  free(s);
}

static void test_huge_lines(void) {
  const size_t size = 10u << 20;
  char *s = malloc(size + 64);
  /* One 10 MB atom: rejected, the message quotes only its start. */
  memset(s, 'a', size);
  char *m = parse_error(s, size);
  CHECK_EQ_STR(m, "1:1: expected expression (INT, true, false or '('), got 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'");
  free(m);
  /* 10 MB of digits: out of range, not a wrap-around. */
  memset(s, '7', size);
  m = parse_error(s, size);
  CHECK(m && strstr(m, "out of range for index") && strlen(m) < 200);
  free(m);
  /* 10 MB of blanks then an expression: the column is counted exactly. */
  memset(s, ' ', size);
  memcpy(s + size, "(+ 1 x)", 7);
  m = parse_error(s, size + 7);
  char expect[128];
  snprintf(expect, sizeof expect, "1:%zu: expected expression (INT, true, false or '('), got 'x'", size + 6);
  CHECK_EQ_STR(m, expect);
  free(m);
  /* A valid 10 MB expression: a balanced tree of 2^20 leaves (nesting depth 20). */
  size_t o = 0;
  int stack_depth = 0;
  /* Emit the balanced tree iteratively: leaves count up a binary counter. */
  const int levels = 20;
  for (int i = 0; i < levels; i++) memcpy(s + o, "(+ ", 3), o += 3;
  (void)stack_depth;
  for (uint32_t leaf = 0; leaf < (1u << levels); leaf++) {
    s[o++] = '1';
    if (leaf + 1 == (1u << levels)) break;
    int closes = __builtin_ctz(leaf + 1); /* subtrees completed after this leaf */
    for (int k = 0; k < closes; k++) s[o++] = ')';
    s[o++] = ' ';
    for (int k = 0; k < closes; k++) memcpy(s + o, "(+ ", 3), o += 3;
  }
  for (int i = 0; i < levels; i++) s[o++] = ')';
  CHECK(o > size / 2 && o <= size + 64);
  const uop *n = NULL;
  hcq_status st = uop_parse(ctx, s, o, &n);
  CHECK(st == HCQ_OK);
  hcq_status_free(st);
  /* Hash-consing makes it 21 distinct nodes: each level is (+ x x) of the level below. */
  const uop *w = n;
  int depth = 0;
  while (w && w->op == UOP_ADD && w->src[0] == w->src[1]) w = w->src[0], depth++;
  CHECK_EQ_INT(depth, levels);
  CHECK(w == uop_index_const(ctx, 1));
  /* The printer expands the DAG back into exactly the input text. */
  char *p = print_of(n);
  CHECK(p && strlen(p) == o && memcmp(p, s, o) == 0);
  free(p);
  free(s);
}

/* Mutated valid texts (byte flips, deletions, truncations, token splices): never a crash; an error is a PARSE error
 * with a position; text that still parses round-trips. */
static void test_mutation_fuzz(void) {
  static const char *const seeds[] = {
      "(where (< (var a 0 10 index) 5) (% (+ (* (range 0 4) 3) (special lidx0 8)) 7) (const 3 index))",
      "(cast float32 (max (var x -3 3 int32) (const 0 int32)))",
      "(recip (trunc (const -2.5e3 float64)))",
      "(& (!= (var n 0 18446744073709551615 uint64) (const 1 uint64)) true)",
  };
  static const char *const splices[] = {"(", ")", " ", "-", "1", "9999999999999999999999", "var", "int8", "inf",
                                        ";", "\n", "(const", "x", "//", "true", "\x80"};
  int parsed = 0, errors = 0, bad = 0;
  char buf[512];
  for (int iter = 0; iter < 4000; iter++) {
    const char *seed = seeds[rndn(4)];
    size_t len = strlen(seed);
    memcpy(buf, seed, len);
    int muts = 1 + rndn(3);
    for (int m = 0; m < muts && len > 0; m++) {
      size_t at = (size_t)rndn((int)len);
      switch (rndn(4)) {
      case 0: buf[at] = (char)(32 + rndn(95)); break;
      case 1: memmove(buf + at, buf + at + 1, len - at - 1), len--; break;
      case 2: len = at; break;
      default: {
        const char *sp = splices[rndn(16)];
        size_t sl = strlen(sp);
        if (len + sl >= sizeof buf) break;
        memmove(buf + at + sl, buf + at, len - at);
        memcpy(buf + at, sp, sl);
        len += sl;
      }
      }
    }
    const uop *n = NULL;
    hcq_status st = uop_parse(ctx, buf, len, &n);
    if (st) {
      errors++;
      const char *msg = hcq_status_message(st);
      int line = 0, col = 0;
      if (hcq_status_code(st) != HCQ_CODE_PARSE || sscanf(msg, "%d:%d: ", &line, &col) != 2 || line < 1 || col < 1 ||
          (size_t)col > len + 1) {
        if (bad++ < 5) fprintf(stderr, "fuzz: bad error for \"%.*s\": %s\n", (int)len, buf, msg);
      }
      hcq_status_free(st);
    } else {
      parsed++;
      if (!n || !roundtrips(n)) bad++;
    }
  }
  CHECK_EQ_INT(bad, 0);
  CHECK(parsed > 100 && errors > 1000);
}

/* ---------------------------------------------------------------------------------------------- render */

static void test_render(void) {
  uop_dtype idx = uop_dt(UOP_INDEX);
  const uop *a = uop_var(ctx, "a", 0, 10, idx), *b = uop_var(ctx, "b", 0, 10, idx);
  static const struct { uop_op op; const char *expect; } bins[] = {
      {UOP_ADD, "(a+b)"},   {UOP_MUL, "(a*b)"},   {UOP_IDIV, "(a//b)"}, {UOP_MOD, "(a%b)"},
      {UOP_CMPLT, "(a<b)"}, {UOP_CMPNE, "(a!=b)"}, {UOP_CMPEQ, "(a==b)"}, {UOP_AND, "(a&b)"},
      {UOP_OR, "(a|b)"},    {UOP_XOR, "(a^b)"},   {UOP_SHL, "(a<<b)"},  {UOP_SHR, "(a>>b)"},
      {UOP_MAX, "max(a, b)"}, {UOP_SUB, "(a-b)"},
  };
  for (size_t i = 0; i < sizeof bins / sizeof bins[0]; i++) CHECK_RENDER(uop_alu2(ctx, bins[i].op, a, b), bins[i].expect);
  CHECK_RENDER(P("(where (< (var a 0 10 index) 5) (var a 0 10 index) (var b 0 10 index))"), "(a if (a<5) else b)");
  CHECK_RENDER(P("(recip (cast float32 (var a 0 10 index)))"), "(1/(float)(a))");
  CHECK_RENDER(P("(trunc (cast float64 (var a 0 10 index)))"), "trunc((double)(a))");
  CHECK_RENDER(uop_alu1(ctx, UOP_NEG, a), "(-a)");
  CHECK_RENDER(P("(+ (* (range 0 4) 3) (range 1 3))"), "((ridx0*3)+ridx1)");
  CHECK_RENDER(P("(+ (special lidx0 8) (* (special gidx0 4) 4))"), "(lidx0+(gidx0*4))");
  CHECK_RENDER(P("(< (+ (* (range 0 4) 3) (range 1 3)) 8)"), "(((ridx0*3)+ridx1)<8)");
  CHECK_RENDER(P("true"), "True");
  CHECK_RENDER(P("false"), "False");
  CHECK_RENDER(P("-42"), "-42");
  CHECK_RENDER(P("(const 255 uint8)"), "255");
  CHECK_RENDER(P("(const 18446744073709551615 uint64)"), "18446744073709551615");
  CHECK_RENDER(P("(const -9223372036854775808 int64)"), "-9223372036854775808");
  CHECK_RENDER(P("(const 1.5 float32)"), "1.5");
  CHECK_RENDER(P("(const -inf float32)"), "-inf");
  CHECK_RENDER(P("(const 4 float64)"), "4.0");
  static const struct { const char *dt, *expect; } casts[] = {
      {"int32", "(int)(a)"},      {"int64", "(long)(a)"},     {"int16", "(short)(a)"},   {"int8", "(char)(a)"},
      {"uint8", "(uchar)(a)"},    {"uint16", "(ushort)(a)"},  {"uint32", "(uint)(a)"},   {"uint64", "(ulong)(a)"},
      {"float16", "(half)(a)"},   {"float32", "(float)(a)"},  {"float64", "(double)(a)"}, {"bfloat16", "(bfloat16)(a)"},
      {"bool", "(bool)(a)"},      {"index", "(index)(a)"},
  };
  for (size_t i = 0; i < sizeof casts / sizeof casts[0]; i++) {
    char text[96];
    snprintf(text, sizeof text, "(cast %s (var a 0 10 index))", casts[i].dt);
    CHECK_RENDER(P(text), casts[i].expect);
  }
  const uop *fa = uop_cast(ctx, uop_dt(UOP_FLOAT32), a), *fb = uop_cast(ctx, uop_dt(UOP_FLOAT32), b);
  CHECK_RENDER(uop_alu2(ctx, UOP_FDIV, fa, fb), "((float)(a)/(float)(b))");
  CHECK_RENDER(uop_alu1(ctx, UOP_EXP2, fa), "exp2((float)(a))");
  CHECK_RENDER(uop_alu1(ctx, UOP_SQRT, fa), "sqrt((float)(a))");
  const uop *src3[] = {a, b, uop_index_const(ctx, 1)};
  CHECK_RENDER(uop_new(ctx, UOP_MULACC, idx, src3, 3, uop_arg_none()), "((a*b)+1)");
}

/* Ops outside the grammar print as equivalent grammar text (documented in text.h). */
static void test_print_outside_grammar(void) {
  uop_dtype idx = uop_dt(UOP_INDEX);
  const uop *a = uop_var(ctx, "a", 0, 10, idx), *b = uop_var(ctx, "b", 0, 10, idx);
  const uop *x = uop_var(ctx, "x", 0, 10, uop_dt(UOP_INT32));
  const uop *u = uop_var(ctx, "u", 0, 10, uop_dt(UOP_UINT16));
  CHECK_PRINT(uop_alu1(ctx, UOP_NEG, a), "(* (var a 0 10 index) -1)");
  CHECK_PRINT(uop_alu1(ctx, UOP_NEG, x), "(* (var x 0 10 int32) (const -1 int32))");
  CHECK_PRINT(uop_alu1(ctx, UOP_NEG, u), "(* (var u 0 10 uint16) (const 65535 uint16))");
  CHECK_PRINT(uop_alu2(ctx, UOP_SUB, a, b), "(+ (var a 0 10 index) (* (var b 0 10 index) -1))");
  CHECK_PRINT(uop_alu2(ctx, UOP_CMPEQ, a, b), "(!= (!= (var a 0 10 index) (var b 0 10 index)) true)");
  const uop *fa = uop_cast(ctx, uop_dt(UOP_FLOAT32), a);
  CHECK_PRINT(uop_alu2(ctx, UOP_FDIV, fa, fa), "(* (cast float32 (var a 0 10 index)) (recip (cast float32 (var a 0 10 index))))");
  const uop *src3[] = {a, b, uop_index_const(ctx, 1)};
  CHECK_PRINT(uop_new(ctx, UOP_MULACC, idx, src3, 3, uop_arg_none()), "(+ (* (var a 0 10 index) (var b 0 10 index)) 1)");
  /* Each of these texts parses, to the equal-valued grammar node. */
  const uop *neg = P("(* (var a 0 10 index) -1)");
  CHECK(neg == uop_alu2(ctx, UOP_MUL, a, uop_index_const(ctx, -1)));
  /* No grammar form: a clear error, not garbage. */
  char *s = NULL;
  CHECK_ERR(uop_print(uop_alu1(ctx, UOP_EXP2, fa), &s), HCQ_CODE_UNSUPPORTED, "EXP2");
  CHECK(s == NULL);
  CHECK_ERR(uop_print(uop_cast(ctx, uop_dt_vec(uop_dt(UOP_FLOAT32), 4), a), &s), HCQ_CODE_UNSUPPORTED, "count 4");
}

static void test_fmt_double(void) {
  char buf[32];
  CHECK_EQ_STR(uop_text_fmt_double(0.1, buf), "0.1");
  CHECK_EQ_STR(uop_text_fmt_double(-2.5, buf), "-2.5");
  CHECK_EQ_STR(uop_text_fmt_double(1e300, buf), "1e+300");
  CHECK_EQ_STR(uop_text_fmt_double(1e16, buf), "1e+16");
  CHECK_EQ_STR(uop_text_fmt_double(10.0, buf), "10.0");
  CHECK_EQ_STR(uop_text_fmt_double(-1500.0, buf), "-1500.0");
  CHECK_EQ_STR(uop_text_fmt_double(0.0, buf), "0.0");
  CHECK_EQ_STR(uop_text_fmt_double(-0.0, buf), "-0.0");
  CHECK_EQ_STR(uop_text_fmt_double(123456789.25, buf), "123456789.25");
  CHECK_EQ_STR(uop_text_fmt_double(0.000125, buf), "0.000125");
  CHECK_EQ_STR(uop_text_fmt_double(2.5e-5, buf), "2.5e-05");
  CHECK_EQ_STR(uop_text_fmt_double(1.0 / 3.0, buf), "0.3333333333333333");
  CHECK_EQ_STR(uop_text_fmt_double(-INFINITY, buf), "-inf");
  CHECK_EQ_STR(uop_text_fmt_double(NAN, buf), "nan");
  CHECK_EQ_STR(uop_text_fmt_double((double)0.1f, buf), "0.10000000149011612");
}

/* The decimal syntax shared by the expression and kernel parsers, and the float ranges (IEEE limits by hand). */
static void test_decimal_and_float_max(void) {
  static const char *const yes[] = {"0", "-1", "+2.", ".5", "1.25e-3", "6E+10", "-0.0e0"};
  static const char *const no[] = {"", "-", ".", "e5", "1e", "1e+", "1.2.3", "0x10", "1f", " 1", "inf"};
  for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) CHECK(uop_text_is_decimal(yes[i], strlen(yes[i])));
  for (size_t i = 0; i < sizeof no / sizeof *no; i++) CHECK(!uop_text_is_decimal(no[i], strlen(no[i])));
  CHECK(uop_text_is_decimal("12x", 2)); /* only the n bytes given */
  char q[64];
  CHECK_EQ_STR(uop_text_quote("ab", 2, q, sizeof q), "'ab'");
  CHECK_EQ_STR(uop_text_quote("a\tb\n", 4, q, sizeof q), "'a?b?'");
  CHECK_EQ_STR(uop_text_quote("xyz", 0, q, sizeof q), "''");
  const char *long_word = "0123456789012345678901234567890123456789ABCDE";
  CHECK_EQ_STR(uop_text_quote(long_word, strlen(long_word), q, sizeof q),
               "'0123456789012345678901234567890123456789...'");
  CHECK(uop_text_float_max(UOP_FLOAT16) == 65504.0);                       /* (2 - 2^-10) * 2^15 */
  CHECK(uop_text_float_max(UOP_BFLOAT16) == ldexp(2.0 - ldexp(1, -7), 127)); /* (2 - 2^-7) * 2^127 */
  CHECK(uop_text_float_max(UOP_FLOAT32) == ldexp(2.0 - ldexp(1, -23), 127));
  CHECK(uop_text_float_max(UOP_FLOAT64) == ldexp(2.0 - ldexp(1, -52), 1023));
}

int main(void) {
  CHECK_OK(uop_ctx_create(&ctx));
  if (!ctx) return testing_summary("text_test");
  test_parse_builds_the_right_nodes();
  test_print_hand_cases();
  test_roundtrip_hand_cases();
  test_roundtrip_random();
  test_errors_with_positions();
  test_mutation_fuzz();
  test_deep_nesting();
  test_huge_lines();
  test_render();
  test_print_outside_grammar();
  test_fmt_double();
  test_decimal_and_float_max();
  uop_ctx_destroy(ctx);
  return testing_summary("text_test");
}
