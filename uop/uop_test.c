/* Node creation, hash-consing identity, args, dtype table facts. */
#include "uop/uop.h"

#include "base/testing.h"

static void test_dtypes(void) {
  uop_dtype i32 = uop_dt(UOP_INT32), u8 = uop_dt(UOP_UINT8), idx = uop_dt(UOP_INDEX);
  CHECK_EQ_STR(uop_dt_name(i32), "int32");
  CHECK_EQ_STR(uop_dt_cname(i32), "int");
  const char *cn[][2] = {{"int32", "int"},     {"int64", "long"},       {"int16", "short"},  {"int8", "char"},
                         {"uint8", "uchar"},   {"uint16", "ushort"},    {"uint32", "uint"},  {"uint64", "ulong"},
                         {"float16", "half"},  {"float32", "float"},    {"float64", "double"},
                         {"bfloat16", "bfloat16"}, {"bool", "bool"},    {"index", "index"}};
  for (size_t i = 0; i < sizeof cn / sizeof cn[0]; i++) {
    uop_dtype dt;
    CHECK(uop_dt_from_name(cn[i][0], strlen(cn[i][0]), &dt));
    CHECK_EQ_STR(uop_dt_name(dt), cn[i][0]);
    CHECK_EQ_STR(uop_dt_cname(dt), cn[i][1]);
  }
  uop_dtype tmp;
  CHECK(!uop_dt_from_name("int", 3, &tmp));
  CHECK(!uop_dt_from_name("int32x", 6, &tmp));
  CHECK_EQ_INT(uop_dt_min(uop_dt(UOP_INT8)), -128);
  CHECK_EQ_INT(uop_dt_max(uop_dt(UOP_INT8)), 127);
  CHECK_EQ_INT(uop_dt_max(u8), 255);
  CHECK_EQ_INT(uop_dt_min(uop_dt(UOP_INT32)), -2147483648LL);
  CHECK_EQ_INT(uop_dt_max(uop_dt(UOP_UINT32)), 4294967295LL);
  CHECK_EQ_INT(uop_dt_max(uop_dt(UOP_UINT64)), -1);
  CHECK_EQ_INT(uop_dt_min(idx), INT64_MIN);
  CHECK_EQ_INT(uop_dt_max(idx), INT64_MAX);
  CHECK_EQ_INT(uop_dt_max(uop_dt(UOP_BOOL)), 1);
  CHECK(uop_dt_is_int(idx) && !uop_dt_is_unsigned(idx));
  CHECK(uop_dt_is_unsigned(uop_dt(UOP_UINT16)) && !uop_dt_is_unsigned(uop_dt(UOP_INT16)));
  CHECK(uop_dt_is_float(uop_dt(UOP_BFLOAT16)) && !uop_dt_is_int(uop_dt(UOP_FLOAT32)));
  CHECK(!uop_dt_is_int(uop_dt(UOP_BOOL)) && uop_dt_is_bool(uop_dt(UOP_BOOL)));
  CHECK_EQ_INT(uop_dt_itemsize_B(uop_dt_vec(uop_dt(UOP_FLOAT32), 4)), 16);
  CHECK_EQ_INT(uop_dt_itemsize_B(idx), 8);
  CHECK_EQ_INT(uop_dt_bits(uop_dt(UOP_FLOAT16)), 16);
  /* vectors / pointers */
  uop_dtype f4 = uop_dt_vec(uop_dt(UOP_FLOAT32), 4);
  CHECK(uop_dt_eq(uop_dt_scalar_of(f4), uop_dt(UOP_FLOAT32)));
  uop_dtype p = uop_dt_ptr(uop_dt(UOP_FLOAT32), UOP_AS_GLOBAL, 16);
  CHECK(uop_dt_is_ptr(p) && !uop_dt_is_ptr(uop_dt_base_of(p)));
  CHECK(uop_dt_eq(uop_dt_base_of(p), uop_dt(UOP_FLOAT32)));
  CHECK(!uop_dt_eq(p, uop_dt_ptr(uop_dt(UOP_FLOAT32), UOP_AS_GLOBAL, 32)));
  /* promotion lattice (reference dtype.py promo_lattice) */
  struct { uop_scalar a, b, want; } lu[] = {
      {UOP_BOOL, UOP_INT8, UOP_INT8},        {UOP_INT8, UOP_UINT8, UOP_INT16},    {UOP_UINT8, UOP_UINT16, UOP_UINT16},
      {UOP_INT32, UOP_UINT32, UOP_INT64},    {UOP_UINT16, UOP_INT16, UOP_INT32},  {UOP_INT64, UOP_UINT64, UOP_FLOAT16},
      {UOP_FLOAT16, UOP_BFLOAT16, UOP_FLOAT32}, {UOP_INT32, UOP_FLOAT16, UOP_FLOAT16}, {UOP_FLOAT32, UOP_FLOAT64, UOP_FLOAT64},
      {UOP_INT32, UOP_INT64, UOP_INT64},     {UOP_INDEX, UOP_INT32, UOP_INDEX},   {UOP_INDEX, UOP_FLOAT32, UOP_FLOAT32},
      {UOP_BOOL, UOP_BOOL, UOP_BOOL},        {UOP_UINT8, UOP_INT32, UOP_INT32},
  };
  for (size_t i = 0; i < sizeof lu / sizeof lu[0]; i++) {
    CHECK_EQ_STR(uop_dt_name(uop_dt_least_upper(uop_dt(lu[i].a), uop_dt(lu[i].b))), uop_dt_name(uop_dt(lu[i].want)));
    CHECK_EQ_STR(uop_dt_name(uop_dt_least_upper(uop_dt(lu[i].b), uop_dt(lu[i].a))), uop_dt_name(uop_dt(lu[i].want)));
  }
  /* safe casts: every value representable */
  CHECK(uop_dt_can_safe_cast(uop_dt(UOP_BOOL), uop_dt(UOP_FLOAT16)));
  CHECK(uop_dt_can_safe_cast(uop_dt(UOP_UINT8), uop_dt(UOP_INT16)));
  CHECK(!uop_dt_can_safe_cast(uop_dt(UOP_INT8), uop_dt(UOP_UINT16)));
  CHECK(uop_dt_can_safe_cast(uop_dt(UOP_UINT32), uop_dt(UOP_INT64)));
  CHECK(!uop_dt_can_safe_cast(uop_dt(UOP_UINT32), uop_dt(UOP_INT32)));
  CHECK(uop_dt_can_safe_cast(uop_dt(UOP_INT32), uop_dt(UOP_FLOAT64)));
  CHECK(!uop_dt_can_safe_cast(uop_dt(UOP_INT32), uop_dt(UOP_FLOAT32)));
  CHECK(uop_dt_can_safe_cast(uop_dt(UOP_INT16), uop_dt(UOP_FLOAT32)));
  CHECK(uop_dt_can_safe_cast(uop_dt(UOP_UINT8), uop_dt(UOP_FLOAT16)));
  CHECK(!uop_dt_can_safe_cast(uop_dt(UOP_INT16), uop_dt(UOP_FLOAT16)));
  CHECK(uop_dt_can_safe_cast(uop_dt(UOP_FLOAT16), uop_dt(UOP_FLOAT32)));
  CHECK(!uop_dt_can_safe_cast(uop_dt(UOP_FLOAT32), uop_dt(UOP_FLOAT16)));
  CHECK(!uop_dt_can_safe_cast(uop_dt(UOP_FLOAT32), uop_dt(UOP_INT64)));
  CHECK(uop_dt_can_safe_cast(uop_dt(UOP_INT64), uop_dt(UOP_INDEX)));
  CHECK(!uop_dt_can_safe_cast(uop_dt(UOP_INDEX), uop_dt(UOP_INT64)));
}

static void test_ops(void) {
  uop_op op;
  CHECK_EQ_STR(uop_op_name(UOP_ADD), "ADD");
  CHECK(uop_op_from_name("DEFINE_VAR", 10, &op) && op == UOP_DEFINE_VAR);
  CHECK(!uop_op_from_name("ADDX", 4, &op));
  CHECK(uop_op_from_name("INDEX", 5, &op) && op == UOP_INDEX_OP);
  CHECK_EQ_STR(uop_op_name(UOP_INDEX_OP), "INDEX");
  CHECK(uop_op_is_commutative(UOP_CMPNE) && !uop_op_is_commutative(UOP_CMPLT));
  CHECK_EQ_INT(uop_op_alu_arity(UOP_WHERE), 3);
  CHECK_EQ_INT(uop_op_alu_arity(UOP_RECIP), 1);
  CHECK_EQ_INT(uop_op_alu_arity(UOP_CONST), 0);
  CHECK(UOP_DEFINE_VAR < UOP_SPECIAL && UOP_SPECIAL < UOP_CAST && UOP_CAST < UOP_ADD && UOP_ADD < UOP_RANGE &&
        UOP_RANGE < UOP_CONST);
  CHECK_EQ_INT(uop_axis_letter(UOP_AXIS_REDUCE), 'R');
  CHECK_EQ_STR(uop_axis_name(UOP_AXIS_GROUP_REDUCE), "group_reduce");
}

static void test_hash_consing(void) {
  uop_ctx *ctx;
  CHECK_OK(uop_ctx_create(&ctx));
  uop_dtype idx = uop_dt(UOP_INDEX);
  const uop *x = uop_var(ctx, "x", 0, 10, idx), *x2 = uop_var(ctx, "x", 0, 10, idx);
  CHECK(x && x == x2);
  CHECK(x != uop_var(ctx, "x", 0, 11, idx));
  CHECK(x != uop_var(ctx, "y", 0, 10, idx));
  CHECK(x != uop_var(ctx, "x", 0, 10, uop_dt(UOP_INT32)));
  char name[8] = "x";  /* a different buffer with the same text interns to the same node */
  CHECK(x == uop_var(ctx, name, 0, 10, idx));
  const uop *c1 = uop_index_const(ctx, 1);
  const uop *a = uop_alu2(ctx, UOP_ADD, x, c1), *b = uop_alu2(ctx, UOP_ADD, x, uop_index_const(ctx, 1));
  CHECK(a == b);
  CHECK(a != uop_alu2(ctx, UOP_ADD, c1, x));
  CHECK(a->nsrc == 2 && a->src[0] == x && a->src[1] == c1);
  CHECK(uop_dt_eq(uop_alu2(ctx, UOP_CMPLT, x, c1)->dtype, uop_dt(UOP_BOOL)));
  CHECK(x->id < c1->id && c1->id < a->id);
  /* constants wrap to the dtype width */
  int64_t v = 0;
  CHECK(uop_const_value(uop_const_int(ctx, uop_dt(UOP_INT8), 200), &v) && v == -56);
  CHECK(uop_const_value(uop_const_int(ctx, uop_dt(UOP_UINT8), -1), &v) && v == 255);
  CHECK(uop_const_value(uop_const_bool(ctx, true), &v) && v == 1);
  CHECK(uop_const_int(ctx, uop_dt(UOP_UINT8), 255) == uop_const_int(ctx, uop_dt(UOP_UINT8), -1));
  CHECK(uop_const_int(ctx, uop_dt(UOP_INT32), 1) != uop_const_int(ctx, idx, 1));
  const uop *f = uop_const_float(ctx, uop_dt(UOP_FLOAT32), 0.5);
  CHECK(f == uop_const_float(ctx, uop_dt(UOP_FLOAT32), 0.5) && f->arg.kind == UOP_ARG_FLOAT && f->arg.f == 0.5);
  CHECK(uop_const_float(ctx, uop_dt(UOP_FLOAT32), 0.0) != uop_const_float(ctx, uop_dt(UOP_FLOAT32), -0.0));
  CHECK(!uop_const_value(f, &v));
  /* args */
  int64_t lanes[3] = {0, 2, 1}, lanes2[3] = {0, 2, 1};
  uop_arg g1 = uop_arg_ints(ctx, lanes, 3), g2 = uop_arg_ints(ctx, lanes2, 3);
  CHECK(g1.ints == g2.ints && uop_arg_eq(&g1, &g2));
  uop_arg s1 = uop_arg_str(ctx, "gidx0");
  char buf[8] = "gidx0";
  CHECK(s1.str == uop_intern_str(ctx, buf, 5));
  CHECK(uop_special(ctx, "gidx0", uop_index_const(ctx, 4)) == uop_special(ctx, buf, uop_index_const(ctx, 4)));
  const uop *r0 = uop_range(ctx, uop_index_const(ctx, 8), 0, UOP_AXIS_LOOP);
  CHECK(r0 == uop_range(ctx, uop_index_const(ctx, 8), 0, UOP_AXIS_LOOP));
  CHECK(r0 != uop_range(ctx, uop_index_const(ctx, 8), 0, UOP_AXIS_REDUCE));
  const uop *srcs[2] = {c1, x};
  CHECK(uop_replace_src(ctx, a, srcs, 2) == uop_alu2(ctx, UOP_ADD, c1, x));
  /* a manually built arg with garbage in unused fields interns the same */
  uop_arg messy = uop_arg_int(7);
  messy.f = 3.0;
  messy.i2 = 99;
  CHECK(uop_new(ctx, UOP_CONST, idx, NULL, 0, messy) == uop_index_const(ctx, 7));
  /* many nodes: table growth keeps identity */
  const uop *first[1000];
  for (int i = 0; i < 1000; i++) first[i] = uop_alu2(ctx, UOP_MUL, x, uop_index_const(ctx, i));
  int same = 0;
  for (int i = 0; i < 1000; i++) same += first[i] == uop_alu2(ctx, UOP_MUL, x, uop_index_const(ctx, i));
  CHECK_EQ_INT(same, 1000);
  size_t count = uop_ctx_node_count(ctx);
  uop_alu2(ctx, UOP_MUL, x, uop_index_const(ctx, 5));
  CHECK_EQ_INT(uop_ctx_node_count(ctx), count);
  void *mem = uop_ctx_alloc(ctx, 1 << 20);
  CHECK(mem != NULL);
  if (mem) memset(mem, 1, 1 << 20);
  CHECK_OK(uop_ctx_status(ctx));
  uop_ctx_destroy(ctx);
}

/* Contexts made one after another reuse the arena memory of destroyed ones (uop.c keeps spare chunks): every node
 * must start with no cached bounds, and index constants (small table, direct-mapped cache, or interned) must be the
 * one node of their value. Bounds of r*c + k over a RANGE are checked against brute force. */
static void test_fresh_contexts(void) {
  for (int round = 0; round < 4; round++) {
    uop_ctx *ctx = NULL;
    CHECK_OK(uop_ctx_create(&ctx));
    if (!ctx) return;
    int bad = 0;
    for (int i = 0; i < 3000; i++) {
      int64_t end = 1 + (i + round) % 9, c = (i % 2 ? -1 : 1) * (3 + i % 5 + round), k = 1000 + 37 * i - 50 * round;
      const uop *r = uop_range(ctx, uop_index_const(ctx, end), i, UOP_AXIS_LOOP);
      const uop *e = uop_alu2(ctx, UOP_ADD, uop_alu2(ctx, UOP_MUL, r, uop_index_const(ctx, c)), uop_index_const(ctx, k));
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      for (int64_t v = 0; v < end; v++) {
        int64_t x = v * c + k;
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
      }
      bad += uop_vmin(e) != lo || uop_vmax(e) != hi;
      const uop *kc = uop_index_const(ctx, k);
      bad += kc->op != UOP_CONST || kc->arg.i != k || kc->dtype.scalar != UOP_INDEX ||
             kc != uop_const_int(ctx, uop_dt(UOP_INDEX), k) || kc != uop_new(ctx, UOP_CONST, uop_dt(UOP_INDEX), NULL, 0,
                                                                               uop_arg_int(k));
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_OK(uop_ctx_status(ctx));
    uop_ctx_destroy(ctx);
  }
}

/* A destroyed context's intern table is kept for the next one (uop.c): the next context must find none of the old
 * nodes. Each round interns the same 20000 int32 constants (enough to grow the table; 40000 in the last round, past
 * the size a kept table may have); each must be a new node of this context (ids 0.., one per value, equal values one
 * node), and still be found once the table has grown. */
static void test_reused_intern_table(void) {
  for (int round = 0; round < 3; round++) {
    const int64_t n = round == 2 ? 40000 : 20000;
    uop_ctx *ctx = NULL;
    CHECK_OK(uop_ctx_create(&ctx));
    if (!ctx) return;
    CHECK_EQ_INT(uop_ctx_node_count(ctx), 0);
    int bad = 0;
    for (int64_t v = 0; v < n; v++) {
      const uop *c = uop_new(ctx, UOP_CONST, uop_dt(UOP_INT32), NULL, 0, uop_arg_int(v * 7 + round));
      bad += !c || c->id != (uint32_t)v || c->arg.i != v * 7 + round;
      bad += c != uop_new(ctx, UOP_CONST, uop_dt(UOP_INT32), NULL, 0, uop_arg_int(v * 7 + round));
    }
    for (int64_t v = 0; v < n; v++) {
      const uop *c = uop_new(ctx, UOP_CONST, uop_dt(UOP_INT32), NULL, 0, uop_arg_int(v * 7 + round));
      bad += !c || c->id != (uint32_t)v;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(uop_ctx_node_count(ctx), n);
    CHECK_OK(uop_ctx_status(ctx));
    uop_ctx_destroy(ctx);
  }
}

int main(void) {
  test_dtypes();
  test_ops();
  test_hash_consing();
  test_fresh_contexts();
  test_reused_intern_table();
  return testing_summary("uop_test");
}
