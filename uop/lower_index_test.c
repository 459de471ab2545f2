/* uop_lower_index: per-node widths, soundness against the unlowered (non-wrapping) value, variable limits. */
#include <stdlib.h>
#include <string.h>

#include "uop/uop.h"

#include "base/testing.h"

static uop_ctx *ctx;
static const uop *C(int64_t v) { return uop_index_const(ctx, v); }
static const uop *B(uop_op op, const uop *a, const uop *b) { return uop_alu2(ctx, op, a, b); }

/* An int32 node may only consume int32 operands: checks every ALU/RANGE/SPECIAL node of a lowered DAG. */
static int narrow_nodes, wide_nodes, bad_nodes;
static void check_widths(const uop *root) {
  const uop **nodes;
  size_t count;
  CHECK_OK(uop_toposort(ctx, root, &nodes, &count));
  for (size_t k = 0; k < count; k++) {
    const uop *n = nodes[k];
    CHECK(n->dtype.scalar != UOP_INDEX || uop_dt_is_ptr(n->dtype));
    bool alu = uop_op_is_alu((uop_op)n->op) && n->op != UOP_CAST;
    if (!alu && n->op != UOP_RANGE && n->op != UOP_SPECIAL) continue;
    if (n->dtype.scalar == UOP_INT32) narrow_nodes++;
    if (n->dtype.scalar == UOP_INT64) wide_nodes++;
    int first_int = -1;
    for (uint32_t i = 0; i < n->nsrc; i++) {
      uop_scalar s = (uop_scalar)n->src[i]->dtype.scalar;
      if (s != UOP_INT32 && s != UOP_INT64) continue;
      if (first_int < 0) first_int = s;
      /* comparisons: both operands of one width; other ops: operands of the node's width */
      bool ok = n->dtype.scalar == UOP_BOOL ? (int)s == first_int : s == n->dtype.scalar;
      if (!ok) bad_nodes++;
    }
  }
}

static void test_per_node(void) {
  const uop *g = uop_special(ctx, "gidx0", C(1024)), *r = uop_range(ctx, C(16), 0, UOP_AXIS_LOOP);
  /* g*2^22 + r reaches 1023*2^22+15 > 2^31: the MUL and ADD are int64, but g and r stay int32 */
  const uop *big = B(UOP_ADD, B(UOP_MUL, g, C(1LL << 22)), r), *out = NULL;
  CHECK_OK(uop_lower_index(ctx, big, &out));
  CHECK(out && out->op == UOP_ADD && out->dtype.scalar == UOP_INT64);
  const uop *mul = out->src[0], *rr = out->src[1];
  CHECK(mul->op == UOP_MUL && mul->dtype.scalar == UOP_INT64);
  CHECK(mul->src[1] == uop_const_int(ctx, uop_dt(UOP_INT64), 1LL << 22));
  CHECK(mul->src[0]->op == UOP_CAST && mul->src[0]->src[0]->op == UOP_SPECIAL &&
        mul->src[0]->src[0]->dtype.scalar == UOP_INT32);
  CHECK(rr->op == UOP_CAST && rr->src[0]->op == UOP_RANGE && rr->src[0]->dtype.scalar == UOP_INT32);
  /* a small sub-expression next to a wide one keeps int32: (g*16 + r) < (g * 2^22) */
  const uop *small = B(UOP_ADD, B(UOP_MUL, g, C(16)), r);
  const uop *cmp = B(UOP_CMPLT, small, B(UOP_MUL, g, C(1LL << 22)));
  CHECK_OK(uop_lower_index(ctx, cmp, &out));
  CHECK(out && out->op == UOP_CMPLT && out->src[0]->op == UOP_CAST);
  CHECK(out->src[0]->src[0]->op == UOP_ADD && out->src[0]->src[0]->dtype.scalar == UOP_INT32);
  CHECK(out->src[1]->op == UOP_MUL && out->src[1]->dtype.scalar == UOP_INT64);
  /* a RANGE whose end is 2^31 has a counter that fits int32, but `ridx < 2^31` must not wrap: int64 */
  const uop *r31 = uop_range(ctx, C(1LL << 31), 1, UOP_AXIS_LOOP);
  CHECK_OK(uop_lower_index(ctx, r31, &out));
  CHECK(out && out->dtype.scalar == UOP_INT64 && out->src[0]->dtype.scalar == UOP_INT64);
  /* an intermediate that leaves int32 widens the op even when the final value fits: (a + a) // 4 */
  const uop *a = uop_var(ctx, "a", 0, INT32_MAX, uop_dt(UOP_INDEX));
  const uop *half = B(UOP_IDIV, B(UOP_ADD, a, a), C(4));
  CHECK(uop_vmax(half) <= INT32_MAX);
  CHECK_OK(uop_lower_index(ctx, half, &out));
  CHECK(out && out->dtype.scalar == UOP_INT64 && out->src[0]->dtype.scalar == UOP_INT64);
  int64_t v = 0;
  uop_var_val va = {"a", INT32_MAX};
  CHECK_OK(uop_sym_infer(out, &va, 1, &v));
  CHECK_EQ_INT(v, (2LL * INT32_MAX) / 4);
  /* variables are int32 kernel arguments: a declared range outside int32 is refused by name */
  const uop *n = uop_var(ctx, "n", 0, 5000000000LL, uop_dt(UOP_INDEX));
  CHECK_ERR(uop_lower_index(ctx, B(UOP_ADD, n, C(1)), &out), HCQ_CODE_UNSUPPORTED, "variable n is declared 0..5000000000");
}

/* ---------------------------------------------------------------- brute force: random expressions near 2^31 */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

#define NVARS 5
static const char *var_names[NVARS] = {"a", "b", "c", "d", "ridx0"};
static const int64_t var_lo[NVARS] = {INT32_MAX - 1000, INT32_MIN, 0, -50, 0};
static const int64_t var_hi[NVARS] = {INT32_MAX, INT32_MIN + 1000, 100000, 50, 69999};
static const uop *leaves[NVARS];

static const uop *gen(int depth) {
  static const int64_t consts[] = {-3, 1, 2, 7, 1000, 65536, INT32_MAX, INT32_MIN, 1LL << 31};
  if (depth == 0 || next_rand() % 4 == 0) {
    if (next_rand() % 3 == 0) return C(consts[next_rand() % (sizeof consts / sizeof consts[0])]);
    return leaves[next_rand() % NVARS];
  }
  const uop *x = gen(depth - 1), *y = gen(depth - 1);
  switch (next_rand() % 7) {
    case 0: return B(UOP_ADD, x, y);
    case 1: return B(UOP_MUL, x, y);
    case 2: return B(UOP_IDIV, x, C((int64_t)(next_rand() % 9) + 2));
    case 3: return B(UOP_MOD, x, C((int64_t)(next_rand() % 9) + 2));
    case 4: return B(UOP_MAX, x, y);
    case 5: return uop_where(ctx, B(UOP_CMPLT, x, y), y, x);
    default: return B(UOP_ADD, B(UOP_MUL, x, C(-1)), y);
  }
}

static void test_brute_force(void) {
  for (int i = 0; i < 4; i++) leaves[i] = uop_var(ctx, var_names[i], var_lo[i], var_hi[i], uop_dt(UOP_INDEX));
  leaves[4] = uop_range(ctx, C(var_hi[4] + 1), 0, UOP_AXIS_LOOP);
  int mismatches = 0, exprs = 0, evals = 0;
  narrow_nodes = wide_nodes = bad_nodes = 0;
  for (int e = 0; e < 400; e++) {
    const uop *expr = gen(1 + e % 4), *low = NULL;
    /* half of them as a comparison, which must cast mixed widths to one */
    if (e % 2) expr = B(UOP_CMPLT, expr, gen(2));
    CHECK_OK(uop_lower_index(ctx, expr, &low));
    if (!low) continue;
    exprs++;
    check_widths(low);
    for (int s = 0; s < 24; s++) {
      uop_var_val vals[NVARS];
      for (int k = 0; k < NVARS; k++) {
        uint64_t span = (uint64_t)(var_hi[k] - var_lo[k]);
        int pick = (int)(next_rand() % 4); /* the ends of each range, and values inside it */
        int64_t v = pick == 0 ? var_lo[k] : pick == 1 ? var_hi[k] : var_lo[k] + (int64_t)(next_rand() % (span + 1));
        vals[k] = (uop_var_val){var_names[k], v};
      }
      int64_t want = 0, got = 0;
      hcq_status st1 = uop_sym_infer(expr, vals, NVARS, &want);
      if (st1) { /* the exact value leaves int64 (sym_infer refuses index overflow): nothing to compare */
        CHECK(strstr(hcq_status_message(st1), "index overflow") != NULL);
        hcq_status_free(st1);
        continue;
      }
      CHECK_OK(uop_sym_infer(low, vals, NVARS, &got));
      evals++;
      if (want != got && mismatches++ < 3)
        fprintf(stderr, "lower_index mismatch: expression %d sample %d: %lld vs %lld\n", e, s, (long long)want,
                (long long)got);
    }
  }
  CHECK_EQ_INT(mismatches, 0);
  CHECK_EQ_INT(bad_nodes, 0);
  CHECK(exprs == 400 && evals > 400 * 12);
  /* both widths occur: the per-node choice is exercised, not one width for everything */
  CHECK(narrow_nodes > 100 && wide_nodes > 100);
}

int main(void) {
  CHECK_OK(uop_ctx_create(&ctx));
  test_per_node();
  test_brute_force();
  uop_ctx_destroy(ctx);
  return testing_summary("lower_index_test");
}
