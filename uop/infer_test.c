/* sym_infer against hand-computed values, lower_index widths, structural order. */
#include "uop/uop.h"

#include "base/testing.h"

static uop_ctx *ctx;
static const uop *C(int64_t v) { return uop_index_const(ctx, v); }
static const uop *B(uop_op op, const uop *a, const uop *b) { return uop_alu2(ctx, op, a, b); }

static void test_infer(void) {
  uop_dtype idx = uop_dt(UOP_INDEX);
  const uop *x = uop_var(ctx, "x", -100, 100, idx), *y = uop_var(ctx, "y", 1, 10, idx);
  const uop *g = uop_special(ctx, "gidx0", C(64)), *r = uop_range(ctx, C(16), 3, UOP_AXIS_LOOP);
  uop_var_val vals[] = {{"x", -7}, {"y", 2}, {"gidx0", 5}, {"ridx3", 11}};
  int64_t v = 0;
  /* C truncation: -7 / 2 = -3, -7 % 2 = -1 */
  CHECK_OK(uop_sym_infer(B(UOP_IDIV, x, y), vals, 4, &v));
  CHECK_EQ_INT(v, -3);
  CHECK_OK(uop_sym_infer(B(UOP_MOD, x, y), vals, 4, &v));
  CHECK_EQ_INT(v, -1);
  /* (gidx0*16 + ridx3) * x  = (80 + 11) * -7 = -637 */
  CHECK_OK(uop_sym_infer(B(UOP_MUL, B(UOP_ADD, B(UOP_MUL, g, C(16)), r), x), vals, 4, &v));
  CHECK_EQ_INT(v, -637);
  CHECK_OK(uop_sym_infer(B(UOP_MAX, x, y), vals, 4, &v));
  CHECK_EQ_INT(v, 2);
  CHECK_OK(uop_sym_infer(B(UOP_CMPLT, x, y), vals, 4, &v));
  CHECK_EQ_INT(v, 1);
  CHECK_OK(uop_sym_infer(uop_where(ctx, B(UOP_CMPNE, y, C(2)), C(10), C(20)), vals, 4, &v));
  CHECK_EQ_INT(v, 20);
  CHECK_OK(uop_sym_infer(B(UOP_SHL, y, C(4)), vals, 4, &v));
  CHECK_EQ_INT(v, 32);
  CHECK_OK(uop_sym_infer(B(UOP_SHR, x, C(1)), vals, 4, &v)); /* arithmetic: -7 >> 1 = -4 */
  CHECK_EQ_INT(v, -4);
  CHECK_OK(uop_sym_infer(B(UOP_XOR, B(UOP_AND, C(12), C(10)), B(UOP_OR, C(1), C(4))), vals, 4, &v));
  CHECK_EQ_INT(v, 8 ^ 5);
  /* wrapping to the dtype: int8 100 + 100 = -56; uint8 3 - 5 = 254; int32 2^31-1 + 1 */
  uop_dtype i8 = uop_dt(UOP_INT8), u8 = uop_dt(UOP_UINT8), i32 = uop_dt(UOP_INT32);
  CHECK_OK(uop_sym_infer(B(UOP_ADD, uop_const_int(ctx, i8, 100), uop_const_int(ctx, i8, 100)), NULL, 0, &v));
  CHECK_EQ_INT(v, -56);
  CHECK_OK(uop_sym_infer(B(UOP_SUB, uop_const_int(ctx, u8, 3), uop_const_int(ctx, u8, 5)), NULL, 0, &v));
  CHECK_EQ_INT(v, 254);
  CHECK_OK(uop_sym_infer(B(UOP_ADD, uop_const_int(ctx, i32, INT32_MAX), uop_const_int(ctx, i32, 1)), NULL, 0, &v));
  CHECK_EQ_INT(v, INT32_MIN);
  CHECK_OK(uop_sym_infer(uop_cast(ctx, i8, C(300)), NULL, 0, &v));
  CHECK_EQ_INT(v, 44);
  CHECK_OK(uop_sym_infer(B(UOP_CMPLT, uop_const_int(ctx, u8, 200), uop_const_int(ctx, u8, 100)), NULL, 0, &v));
  CHECK_EQ_INT(v, 0);
  uop_dtype u64 = uop_dt(UOP_UINT64);
  CHECK_OK(uop_sym_infer(B(UOP_CMPLT, uop_const_int(ctx, u64, 1), uop_const_int(ctx, u64, -1)), NULL, 0, &v));
  CHECK_EQ_INT(v, 1);
  CHECK_OK(uop_sym_infer(B(UOP_IDIV, uop_const_int(ctx, u64, -1), uop_const_int(ctx, u64, 2)), NULL, 0, &v));
  CHECK_EQ_INT(v, INT64_MAX);
  /* errors name the problem */
  CHECK_ERR(uop_sym_infer(B(UOP_ADD, x, uop_var(ctx, "missing_n", 0, 4, idx)), vals, 4, &v), HCQ_CODE_NOT_FOUND, "missing_n");
  CHECK_ERR(uop_sym_infer(uop_range(ctx, C(4), 9, UOP_AXIS_LOOP), vals, 4, &v), HCQ_CODE_NOT_FOUND, "ridx9");
  CHECK_ERR(uop_sym_infer(B(UOP_IDIV, x, B(UOP_SUB, y, C(2))), vals, 4, &v), HCQ_CODE_INVALID, "division by zero");
  CHECK_ERR(uop_sym_infer(B(UOP_MUL, C(INT64_MAX), C(2)), NULL, 0, &v), HCQ_CODE_INVALID, "overflow");
  CHECK_ERR(uop_sym_infer(uop_const_float(ctx, uop_dt(UOP_FLOAT32), 1.0), NULL, 0, &v), HCQ_CODE_UNSUPPORTED, "float32");
  /* a 100,000-deep chain alternating ops */
  const uop *e = x;
  int64_t want = -7;
  for (int i = 0; i < 100000; i++) {
    if (i % 2) {
      e = B(UOP_ADD, e, C(3));
      want += 3;
    } else {
      e = B(UOP_MOD, e, C(1000));
      want %= 1000;
    }
  }
  CHECK_OK(uop_sym_infer(e, vals, 4, &v));
  CHECK_EQ_INT(v, want);
}

static void test_lower_index(void) {
  uop_dtype idx = uop_dt(UOP_INDEX);
  const uop *g = uop_special(ctx, "gidx0", C(1024)), *r = uop_range(ctx, C(16), 0, UOP_AXIS_LOOP);
  const uop *e = B(UOP_ADD, B(UOP_MUL, g, C(16)), r);
  const uop *out = NULL;
  CHECK_OK(uop_lower_index(ctx, e, &out));
  CHECK(out && out->dtype.scalar == UOP_INT32);
  CHECK(out->src[0]->src[0]->op == UOP_SPECIAL && out->src[0]->src[0]->dtype.scalar == UOP_INT32);
  CHECK(out->src[0]->src[0]->src[0] == uop_const_int(ctx, uop_dt(UOP_INT32), 1024));
  CHECK_EQ_INT(uop_vmax(out), 1023 * 16 + 15);
  int64_t v1 = 0, v2 = 0;
  uop_var_val vals[] = {{"gidx0", 1000}, {"ridx0", 7}};
  CHECK_OK(uop_sym_infer(e, vals, 2, &v1));
  CHECK_OK(uop_sym_infer(out, vals, 2, &v2));
  CHECK_EQ_INT(v1, v2);
  /* a bound above 2^31 makes everything int64 */
  const uop *big = B(UOP_ADD, B(UOP_MUL, g, C(1LL << 22)), r); /* up to 1023 * 2^22 + 15 > 2^31 */
  CHECK_OK(uop_lower_index(ctx, big, &out));
  CHECK(out && out->dtype.scalar == UOP_INT64 && out->src[1]->dtype.scalar == UOP_INT64);
  uop_var_val vals2[] = {{"gidx0", 1023}, {"ridx0", 15}};
  CHECK_OK(uop_sym_infer(out, vals2, 2, &v2));
  CHECK_EQ_INT(v2, 1023LL * (1LL << 22) + 15);
  /* casts to index disappear when the width matches; non-index parts stay */
  const uop *xi = uop_var(ctx, "n", 0, 100, uop_dt(UOP_INT32));
  const uop *c = B(UOP_CMPLT, uop_cast(ctx, idx, xi), C(50));
  CHECK_OK(uop_lower_index(ctx, c, &out));
  CHECK(out == B(UOP_CMPLT, xi, uop_const_int(ctx, uop_dt(UOP_INT32), 50)));
}

static void test_struct_order(void) {
  uop_dtype idx = uop_dt(UOP_INDEX);
  const uop *a = uop_var(ctx, "a", 0, 9, idx), *b = uop_var(ctx, "b", 0, 9, idx);
  const uop *g = uop_special(ctx, "gidx0", C(4)), *l = uop_special(ctx, "lidx0", C(4));
  const uop *r0 = uop_range(ctx, C(4), 0, UOP_AXIS_LOOP), *r1 = uop_range(ctx, C(4), 1, UOP_AXIS_LOOP);
  const uop *cast = uop_cast(ctx, idx, uop_var(ctx, "i", 0, 9, uop_dt(UOP_INT32)));
  const uop *mul = B(UOP_MUL, a, C(2)), *add = B(UOP_ADD, a, C(2));
  /* variables < specials < casts < ALU (op order) < ranges < constants */
  const uop *order[] = {a, b, g, l, cast, add, mul, r0, r1, C(-1), C(3)};
  int n = sizeof order / sizeof order[0];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      int c = uop_struct_cmp(order[i], order[j]);
      CHECK((i < j && c < 0) || (i == j && c == 0) || (i > j && c > 0));
    }
  /* sources decide when the heads are equal; deep chains compare without recursion */
  CHECK(uop_struct_cmp(B(UOP_ADD, a, C(1)), B(UOP_ADD, a, C(2))) < 0);
  CHECK(uop_struct_cmp(B(UOP_ADD, b, C(1)), B(UOP_ADD, a, C(2))) > 0);
  const uop *p = a, *q = a;
  for (int i = 0; i < 100000; i++) {
    p = B(UOP_ADD, p, C(1));
    q = B(UOP_ADD, q, C(i == 0 ? 2 : 1));
  }
  CHECK(uop_struct_cmp(p, q) < 0 && uop_struct_cmp(q, p) > 0);
}

int main(void) {
  CHECK_OK(uop_ctx_create(&ctx));
  test_infer();
  test_lower_index();
  test_struct_order();
  uop_ctx_destroy(ctx);
  return testing_summary("infer_test");
}
