/* Unit tests for tricky simplifier cases; expected values are hand-computed (C truncating division). */
#include "base/testing.h"
#include "uop/symbolic.h"
#include "uop/text.h"

static uop_ctx *ctx;

static const uop *P(const char *s) {
  const uop *n = NULL;
  CHECK_OK(uop_parse(ctx, s, strlen(s), &n));
  return n;
}

static const uop *S(const uop *n) {
  const uop *out = NULL;
  CHECK_OK(uop_simplify(ctx, n, &out));
  return out;
}

static int64_t eval1(const uop *n, const char *name, int64_t v) {
  uop_var_val vv = {name, v};
  int64_t out = 0;
  CHECK_OK(uop_sym_infer(n, &vv, 1, &out));
  return out;
}

int main(void) {
  CHECK_OK(uop_ctx_create(&ctx));

  /* (idx*-10)//11 must not fold to -idx: at idx = 9 the true value is trunc(-90/11) = -8. */
  const uop *e = P("(// (* (var idx 0 9 index) -10) 11)"), *s = S(e);
  CHECK(s != P("(* (var idx 0 9 index) -1)"));
  CHECK_EQ_INT(eval1(s, "idx", 9), -8);
  CHECK_EQ_INT(eval1(s, "idx", 1), 0);
  CHECK_EQ_INT(eval1(s, "idx", 2), -1);
  e = P("(% (* (var idx 0 9 index) -10) 11)");
  CHECK_EQ_INT(eval1(S(e), "idx", 9), -2); /* -90 - 11*(-8) */

  /* (x//c)*c + x%c -> x for any sign of x */
  CHECK(S(P("(+ (* (// (var x -50 50 index) 7) 7) (% (var x -50 50 index) 7))")) == P("(var x -50 50 index)"));
  /* x%c -> x when 0 <= x < c, and for -c < x <= 0 too */
  CHECK(S(P("(% (var x 0 6 index) 7)")) == P("(var x 0 6 index)"));
  CHECK(S(P("(% (var x -6 0 index) 7)")) == P("(var x -6 0 index)"));
  CHECK(S(P("(% (var x 0 7 index) 7)")) != P("(var x 0 7 index)"));

  /* negative numerators: -7//2 = -3, -7%2 = -1; (x-8)//4 for x in [0,3] is -1 only at x=0? trunc(-8/4)=-2,
   * trunc(-7/4)=-1: must not fold to a constant */
  CHECK(S(P("(// -7 2)")) == P("-3"));
  CHECK(S(P("(% -7 2)")) == P("-1"));
  e = S(P("(// (+ (var x 0 3 index) -8) 4)"));
  CHECK_EQ_INT(eval1(e, "x", 0), -2);
  CHECK_EQ_INT(eval1(e, "x", 1), -1);
  CHECK_EQ_INT(eval1(e, "x", 3), -1);
  e = S(P("(% (+ (var x 0 3 index) -8) 4)"));
  CHECK_EQ_INT(eval1(e, "x", 0), 0);
  CHECK_EQ_INT(eval1(e, "x", 1), -3);
  /* (4z + w)//4 with z of both signs: z=-1, w=1 gives trunc(-3/4) = 0, not z */
  e = S(P("(// (+ (* (var z -2 2 index) 4) (var w 1 3 index)) 4)"));
  uop_var_val vv[2] = {{"z", -1}, {"w", 1}};
  int64_t r = 1;
  CHECK_OK(uop_sym_infer(e, vv, 2, &r));
  CHECK_EQ_INT(r, 0);

  /* uint8 / int8 wraparound in constant folding */
  CHECK(S(P("(+ (const 250 uint8) (const 10 uint8))")) == P("(const 4 uint8)"));
  CHECK(S(P("(* (const 16 uint8) (const 17 uint8))")) == P("(const 16 uint8)"));
  CHECK(S(P("(+ (const 127 int8) (const 1 int8))")) == P("(const -128 int8)"));
  CHECK(S(P("(cast uint8 -1)")) == P("(const 255 uint8)"));

  /* uop_given_valid (reference 4.6) */
  const uop *out = NULL;
  CHECK_OK(uop_given_valid(ctx, P("(< (var x 0 20 index) 5)"), P("(% (var x 0 20 index) 8)"), &out));
  CHECK(out == P("(var x 0 20 index)"));
  CHECK_OK(uop_given_valid(ctx, P("(& (< (var x 0 20 index) 4) (< (var y 0 9 index) 3))"),
                           P("(// (+ (var x 0 20 index) (* (var y 0 9 index) 4)) 4)"), &out));
  CHECK(out == P("(var y 0 9 index)"));
  /* x >= 3 and x < 4 pins x = 3 */
  CHECK_OK(uop_given_valid(ctx, P("(& (!= (< (var x 0 20 index) 3) true) (< (var x 0 20 index) 4))"),
                           P("(+ (var x 0 20 index) (var y 0 9 index))"), &out));
  CHECK(out == P("(+ (var y 0 9 index) 3)"));
  /* unsatisfiable gate */
  out = P("1");
  CHECK_OK(uop_given_valid(ctx, P("(& (< (var x 0 20 index) 3) (!= (< (var x 0 20 index) 5) true))"),
                           P("(var x 0 20 index)"), &out));
  CHECK(out == NULL);
  /* a clause that does not bound anything still holds */
  CHECK_OK(uop_given_valid(ctx, P("(< (var x 0 20 index) (var y 0 9 index))"),
                           P("(where (< (var x 0 20 index) (var y 0 9 index)) 1 2)"), &out));
  CHECK(out == P("1"));
  /* simplify_valid drops an implied clause */
  CHECK_OK(uop_simplify_valid(ctx, P("(& (< (var x 0 20 index) 3) (< (var x 0 20 index) 9))"), &out));
  CHECK(S(out) == P("(< (var x 0 20 index) 3)"));

  /* symbolic range end: RANGE(end) % end -> RANGE, RANGE(end) // end -> 0 */
  const uop *end = P("(var n 1 64 index)");
  const uop *rg = uop_range(ctx, end, 0, UOP_AXIS_LOOP);
  CHECK(S(uop_alu2(ctx, UOP_MOD, rg, end)) == rg);
  CHECK(S(uop_alu2(ctx, UOP_IDIV, rg, end)) == P("0"));

  /* the rule set is built once */
  CHECK(uop_symbolic_pm() != NULL && uop_symbolic_pm() == uop_symbolic_pm());
  /* floor helpers */
  CHECK_EQ_INT(uop_floordiv(-7, 2), -4);
  CHECK_EQ_INT(uop_floormod(-7, 2), 1);
  CHECK_EQ_INT(uop_floordiv(7, -2), -4);
  CHECK_EQ_INT(uop_floormod(7, -2), -1);

  uop_ctx_destroy(ctx);
  return testing_summary("symbolic_test");
}
