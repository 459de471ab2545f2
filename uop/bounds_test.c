/* vmin/vmax soundness by brute force: every value a C program can compute from operands in the source ranges
 * must lie within the node's [vmin, vmax]. The reference is plain C arithmetic on the real C types. */
#include <math.h>

#include "uop/uop.h"

#include "base/testing.h"

static uop_ctx *ctx;

/* C conversion of an exact integer to the dtype (the reference for wrapping). */
static int64_t to_dt(uop_scalar s, int64_t v) {
  switch (s) {
  case UOP_BOOL: return v != 0;
  case UOP_INT8: return (int8_t)v;
  case UOP_UINT8: return (uint8_t)v;
  case UOP_INT16: return (int16_t)v;
  case UOP_UINT16: return (uint16_t)v;
  case UOP_INT32: return (int32_t)v;
  case UOP_UINT32: return (uint32_t)v;
  default: return v;
  }
}

/* Reference evaluation with C semantics (operands promoted to a wide int, result converted back). Returns false
 * when C leaves the result undefined (division by zero, bad shift amount). */
static bool ref_binop(uop_op op, uop_scalar s, int64_t a, int64_t b, int64_t *out) {
  int bits = uop_dt_bits(uop_dt(s));
  int64_t r;
  switch (op) {
  case UOP_ADD: r = a + b; break;
  case UOP_SUB: r = a - b; break;
  case UOP_MUL: r = (int64_t)((uint64_t)a * (uint64_t)b); break; /* low bits are what the C type keeps */
  case UOP_IDIV: if (b == 0) return false; r = a / b; break;
  case UOP_MOD: if (b == 0) return false; r = a % b; break;
  case UOP_MAX: r = a > b ? a : b; break;
  case UOP_CMPLT: *out = a < b; return true;
  case UOP_CMPNE: *out = a != b; return true;
  case UOP_CMPEQ: *out = a == b; return true;
  case UOP_AND: r = a & b; break;
  case UOP_OR: r = a | b; break;
  case UOP_XOR: r = a ^ b; break;
  case UOP_SHL: if (b < 0 || b >= bits) return false; r = (int64_t)((uint64_t)a << b); break;
  case UOP_SHR: if (b < 0 || b >= bits) return false; r = a >> b; break;
  default: return false;
  }
  *out = to_dt(s, r);
  return true;
}

static uint64_t rng = 0x1234567;
static int64_t rnd(int64_t lo, int64_t hi) { /* inclusive */
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  uint64_t span = (uint64_t)hi - (uint64_t)lo + 1, x = rng ^ (rng >> 29);
  return (int64_t)((uint64_t)lo + (span ? x % span : x));
}

/* An operand over [lo, hi]: a CONST when lo == hi, else a DEFINE_VAR. */
static const uop *operand(uop_dtype dt, int64_t lo, int64_t hi, const char *name) {
  return lo == hi ? uop_const_int(ctx, dt, lo) : uop_var(ctx, name, lo, hi, dt);
}

static int64_t pick_end(uop_dtype dt) {
  int64_t mn = uop_dt_min(dt), mx = uop_dt_max(dt);
  switch (rnd(0, 4)) {
  case 0: return rnd(mn, mn + 20);
  case 1: return rnd(mx - 20, mx);
  case 2: {
    int64_t v = rnd(-8, 8);
    return v < mn ? mn : v;
  }
  default: return rnd(mn, mx);
  }
}

static void brute_binary(void) {
  static const uop_op ops[] = {UOP_ADD, UOP_SUB, UOP_MUL, UOP_IDIV, UOP_MOD, UOP_MAX, UOP_CMPLT, UOP_CMPNE,
                               UOP_CMPEQ, UOP_AND, UOP_OR, UOP_XOR, UOP_SHL, UOP_SHR};
  static const uop_scalar dts[] = {UOP_INT8, UOP_UINT8, UOP_INT16, UOP_UINT16, UOP_INT32, UOP_UINT32};
  long checked = 0, bad = 0, tight = 0, trials = 0;
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
    uop_dtype dt = uop_dt(dts[d]);
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
      for (int t = 0; t < 400; t++) {
        int64_t a0 = pick_end(dt), b0 = pick_end(dt);
        int64_t wa = rnd(0, 3) == 0 ? 0 : rnd(0, 40), wb = rnd(0, 3) == 0 ? 0 : rnd(0, 40);
        if (ops[o] == UOP_SHL || ops[o] == UOP_SHR) { b0 = rnd(0, uop_dt_bits(dt) + 2); wb = rnd(0, 2); }
        int64_t a1 = a0 + wa > uop_dt_max(dt) ? uop_dt_max(dt) : a0 + wa;
        int64_t b1 = b0 + wb > uop_dt_max(dt) ? uop_dt_max(dt) : b0 + wb;
        const uop *n = uop_alu2(ctx, ops[o], operand(dt, a0, a1, "a"), operand(dt, b0, b1, "b"));
        int64_t lo = uop_vmin(n), hi = uop_vmax(n);
        trials++;
        int64_t seen_lo = INT64_MAX, seen_hi = INT64_MIN;
        for (int64_t a = a0; a <= a1; a++) {
          for (int64_t b = b0; b <= b1; b++) {
            int64_t r;
            if (!ref_binop(ops[o], dts[d], a, b, &r)) continue;
            checked++;
            if (r < seen_lo) seen_lo = r;
            if (r > seen_hi) seen_hi = r;
            if (r < lo || r > hi) {
              if (bad++ < 10)
                fprintf(stderr, "UNSOUND %s %s: a=%lld in [%lld,%lld] b=%lld in [%lld,%lld] -> %lld not in [%lld,%lld]\n",
                        uop_op_name(ops[o]), uop_dt_name(dt), (long long)a, (long long)a0, (long long)a1, (long long)b,
                        (long long)b0, (long long)b1, (long long)r, (long long)lo, (long long)hi);
            }
          }
        }
        if (seen_lo == lo && seen_hi == hi) tight++;
      }
    }
  }
  CHECK_EQ_INT(bad, 0);
  CHECK(checked > 1000000);
  CHECK(tight * 2 > trials); /* sound and mostly exact: bounds are not just the full range */
  printf("bounds: %ld ranges, %ld evaluations, %ld exact (%.0f%%)\n", trials, checked, tight, 100.0 * tight / trials);
}

/* Exhaustive over all small ranges for int8 ADD/MUL/IDIV/MOD near the edges of the type. */
static void exhaustive_int8_edges(void) {
  uop_dtype dt = uop_dt(UOP_INT8);
  static const uop_op ops[] = {UOP_ADD, UOP_MUL, UOP_IDIV, UOP_MOD, UOP_SUB};
  long bad = 0;
  int64_t ends[] = {-128, -127, -100, -3, -1, 0, 1, 2, 5, 100, 126, 127};
  int ne = sizeof ends / sizeof ends[0];
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
    for (int i = 0; i < ne; i++)
      for (int j = i; j < ne; j++)
        for (int k = 0; k < ne; k++)
          for (int l = k; l < ne; l++) {
            int64_t a0 = ends[i], a1 = ends[j], b0 = ends[k], b1 = ends[l];
            const uop *n = uop_alu2(ctx, ops[o], operand(dt, a0, a1, "a"), operand(dt, b0, b1, "b"));
            int64_t lo = uop_vmin(n), hi = uop_vmax(n);
            for (int64_t a = a0; a <= a1; a++)
              for (int64_t b = b0; b <= b1; b++) {
                int64_t r;
                if (ref_binop(ops[o], UOP_INT8, a, b, &r) && (r < lo || r > hi)) bad++;
              }
          }
  CHECK_EQ_INT(bad, 0);
}

static void brute_cast_where(void) {
  static const uop_scalar dts[] = {UOP_BOOL, UOP_INT8, UOP_UINT8, UOP_INT16, UOP_UINT16, UOP_INT32, UOP_UINT32, UOP_INT64};
  int nd = sizeof dts / sizeof dts[0];
  long bad = 0;
  for (int s = 1; s < nd; s++)
    for (int t = 0; t < nd; t++)
      for (int k = 0; k < 50; k++) {
        uop_dtype sdt = uop_dt(dts[s]), tdt = uop_dt(dts[t]);
        int64_t a0 = pick_end(sdt), w = rnd(0, 300);
        int64_t a1 = a0 > uop_dt_max(sdt) - w ? uop_dt_max(sdt) : a0 + w;
        const uop *n = uop_cast(ctx, tdt, operand(sdt, a0, a1, "c"));
        for (int64_t a = a0; a <= a1; a++) {
          int64_t r = to_dt(dts[t], a);
          if (r < uop_vmin(n) || r > uop_vmax(n)) bad++;
          if (a == INT64_MAX) break;
        }
      }
  CHECK_EQ_INT(bad, 0);
  /* WHERE and NEG on int8 */
  uop_dtype i8 = uop_dt(UOP_INT8);
  for (int k = 0; k < 200; k++) {
    int64_t a0 = pick_end(i8), a1 = a0 + rnd(0, 20), b0 = pick_end(i8), b1 = b0 + rnd(0, 20);
    if (a1 > 127) a1 = 127;
    if (b1 > 127) b1 = 127;
    const uop *c = uop_var(ctx, "p", 0, 1, uop_dt(UOP_BOOL));
    const uop *w = uop_where(ctx, c, operand(i8, a0, a1, "a"), operand(i8, b0, b1, "b"));
    const uop *ng = uop_alu1(ctx, UOP_NEG, operand(i8, a0, a1, "a"));
    for (int64_t a = a0; a <= a1; a++) {
      if (a < uop_vmin(w) || a > uop_vmax(w)) bad++;
      int64_t r = (int8_t)-a;
      if (r < uop_vmin(ng) || r > uop_vmax(ng)) {
        if (bad++ < 5) fprintf(stderr, "NEG %lld [%lld,%lld] -> %lld not in [%lld,%lld]\n", (long long)a, (long long)a0,
                               (long long)a1, (long long)r, (long long)uop_vmin(ng), (long long)uop_vmax(ng));
      }
    }
    for (int64_t b = b0; b <= b1; b++)
      if (b < uop_vmin(w) || b > uop_vmax(w)) bad++;
  }
  CHECK_EQ_INT(bad, 0);
}

static void hand_cases(void) {
  uop_dtype idx = uop_dt(UOP_INDEX), i32 = uop_dt(UOP_INT32);
  const uop *x = uop_var(ctx, "x", 0, 9, idx), *c4 = uop_index_const(ctx, 4);
  CHECK_EQ_INT(uop_vmin(x), 0);
  CHECK_EQ_INT(uop_vmax(x), 9);
  const uop *e = uop_alu2(ctx, UOP_ADD, uop_alu2(ctx, UOP_MUL, x, c4), uop_index_const(ctx, 3));
  CHECK_EQ_INT(uop_vmin(e), 3);
  CHECK_EQ_INT(uop_vmax(e), 39);
  CHECK_EQ_INT(uop_vmax(uop_alu2(ctx, UOP_MOD, e, c4)), 3);
  CHECK_EQ_INT(uop_vmax(uop_alu2(ctx, UOP_IDIV, e, c4)), 9);
  /* RANGE/SPECIAL: [0, end-1] */
  const uop *r = uop_range(ctx, uop_index_const(ctx, 16), 0, UOP_AXIS_LOOP);
  CHECK_EQ_INT(uop_vmin(r), 0);
  CHECK_EQ_INT(uop_vmax(r), 15);
  CHECK_EQ_INT(uop_vmax(uop_special(ctx, "gidx0", x)), 8);
  /* index is unbounded: big products stay exact instead of wrapping */
  const uop *big = uop_alu2(ctx, UOP_MUL, x, uop_index_const(ctx, 1LL << 40));
  CHECK_EQ_INT(uop_vmax(big), 9LL << 40);
  /* the same in int32 overflows: full range */
  const uop *xi = uop_var(ctx, "xi", 0, 9, i32);
  const uop *bigi = uop_alu2(ctx, UOP_MUL, xi, uop_const_int(ctx, i32, 1 << 30));
  CHECK_EQ_INT(uop_vmin(bigi), INT32_MIN);
  CHECK_EQ_INT(uop_vmax(bigi), INT32_MAX);
  /* unbounded index operands */
  const uop *u = uop_var(ctx, "u", INT64_MIN, INT64_MAX, idx);
  CHECK_EQ_INT(uop_vmax(uop_alu2(ctx, UOP_ADD, u, uop_index_const(ctx, 1))), INT64_MAX);
  CHECK_EQ_INT(uop_vmin(uop_alu2(ctx, UOP_ADD, u, uop_index_const(ctx, 1))), INT64_MIN);
  CHECK_EQ_INT(uop_vmax(uop_alu2(ctx, UOP_MOD, u, c4)), 3);
  CHECK_EQ_INT(uop_vmin(uop_alu2(ctx, UOP_MOD, u, c4)), -3);
  CHECK_EQ_INT(uop_vmax(uop_alu2(ctx, UOP_AND, u, uop_index_const(ctx, 7))), 7);
  CHECK_EQ_INT(uop_vmin(uop_alu2(ctx, UOP_IDIV, u, c4)), INT64_MIN);
  /* near-overflow in index is unbounded, not wrapped */
  const uop *hx = uop_var(ctx, "h", INT64_MAX - 10, INT64_MAX - 1, idx);
  CHECK_EQ_INT(uop_vmax(uop_alu2(ctx, UOP_ADD, hx, uop_index_const(ctx, 100))), INT64_MAX);
  /* comparisons and bool */
  CHECK_EQ_INT(uop_vmin(uop_alu2(ctx, UOP_CMPLT, x, uop_index_const(ctx, 10))), 1);
  CHECK_EQ_INT(uop_vmax(uop_alu2(ctx, UOP_CMPLT, x, uop_index_const(ctx, 0))), 0);
  CHECK_EQ_INT(uop_vmax(uop_alu2(ctx, UOP_CMPNE, c4, c4)), 0);
  CHECK_EQ_INT(uop_vmin(uop_alu2(ctx, UOP_CMPNE, x, uop_index_const(ctx, 10))), 1);
  /* uint64: bit patterns */
  uop_dtype u64 = uop_dt(UOP_UINT64);
  const uop *ux = uop_var(ctx, "ux", 0, 100, u64);
  CHECK_EQ_INT(uop_vmax(uop_alu2(ctx, UOP_ADD, ux, uop_const_int(ctx, u64, 5))), 105);
  const uop *huge = uop_const_int(ctx, u64, -1);
  CHECK_EQ_INT(uop_vmin(huge), -1);
  CHECK_EQ_INT(uop_vmax(uop_alu2(ctx, UOP_ADD, ux, huge)), -1); /* may wrap: full range */
  CHECK_EQ_INT(uop_vmin(uop_alu2(ctx, UOP_ADD, ux, huge)), 0);
  /* casts */
  CHECK_EQ_INT(uop_vmax(uop_cast(ctx, uop_dt(UOP_INT8), x)), 9);
  CHECK_EQ_INT(uop_vmax(uop_cast(ctx, uop_dt(UOP_INT8), big)), 127);
  CHECK(uop_fmax(uop_cast(ctx, uop_dt(UOP_FLOAT32), x)) == 9.0);
  CHECK(isinf(uop_fmax(uop_alu2(ctx, UOP_ADD, uop_const_float(ctx, uop_dt(UOP_FLOAT32), 1), uop_const_float(ctx, uop_dt(UOP_FLOAT32), 2)))));
  CHECK(uop_fmin(uop_const_float(ctx, uop_dt(UOP_FLOAT32), 1.5)) == 1.5);
  /* shifts by constants */
  CHECK_EQ_INT(uop_vmax(uop_alu2(ctx, UOP_SHL, xi, uop_const_int(ctx, i32, 2))), 36);
  CHECK_EQ_INT(uop_vmax(uop_alu2(ctx, UOP_SHR, xi, uop_const_int(ctx, i32, 1))), 4);
  /* vectors */
  const uop *vs[2] = {x, c4};
  const uop *vec = uop_new(ctx, UOP_VECTORIZE, uop_dt_vec(idx, 2), vs, 2, uop_arg_none());
  CHECK_EQ_INT(uop_vmax(vec), 9);
  int64_t lanes[1] = {1};
  const uop *gep = uop_new(ctx, UOP_GEP, idx, &vec, 1, uop_arg_ints(ctx, lanes, 1));
  CHECK_EQ_INT(uop_vmin(gep), 0);
  CHECK_EQ_INT(uop_vmax(gep), 9);
}

static void deep_chain(void) {
  /* bounds on a 100,000-deep chain must not recurse */
  const uop *x = uop_var(ctx, "x", 0, 1, uop_dt(UOP_INDEX)), *c = uop_index_const(ctx, 2);
  for (int i = 0; i < 100000; i++) x = uop_alu2(ctx, UOP_ADD, x, c);
  CHECK_EQ_INT(uop_vmax(x), 200001);
}

int main(void) {
  CHECK_OK(uop_ctx_create(&ctx));
  brute_binary();
  exhaustive_int8_edges();
  brute_cast_where();
  hand_cases();
  deep_chain();
  uop_ctx_destroy(ctx);
  return testing_summary("bounds_test");
}
