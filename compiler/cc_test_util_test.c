/* The element comparison of the test helpers (tu_elem_match, etu_compare) against plain C comparisons: integers of
 * every width exactly (int64/uint64 values that differ only above 2^53, where a double cannot tell them apart;
 * UINT64_MAX), bool bytes exactly, floats of every width by tolerance with NaN == NaN, -0 == +0 and infinities
 * only equal to themselves, and a dtype no buffer has never matching. */
#include <float.h>

#include "compiler/examples_test_util.h"
#include "base/testing.h"

/* Element 0 of two one-element buffers of scalar s holding the bytes of a and b (little-endian low bytes). */
static bool same_bytes(uop_scalar s, uint64_t a, uint64_t b) {
  return tu_elem_match(&a, &b, uop_dt(s), 0, 0, 0);
}

static bool same_f64(double a, double b, double rel, double abs) {
  return tu_elem_match(&a, &b, uop_dt(UOP_FLOAT64), 0, rel, abs);
}

static bool same_f32(float a, float b) { return tu_elem_match(&a, &b, uop_dt(UOP_FLOAT32), 0, 1e-6, 0); }

static void test_ints(void) {
  static const uop_scalar INTS[] = {UOP_INT8, UOP_UINT8, UOP_INT16, UOP_UINT16, UOP_INT32, UOP_UINT32, UOP_INT64, UOP_UINT64};
  static const int BITS[] = {8, 8, 16, 16, 32, 32, 64, 64};
  for (size_t d = 0; d < sizeof INTS / sizeof INTS[0]; d++) {
    uint64_t top = (uint64_t)1 << (BITS[d] - 1), all = BITS[d] == 64 ? ~(uint64_t)0 : ((uint64_t)1 << BITS[d]) - 1;
    uint64_t vals[] = {0, 1, top - 1, top, top | 1, all, all - 1, 0x5a5a5a5a5a5a5a5aull & all};
    for (size_t i = 0; i < 8; i++)
      for (size_t j = 0; j < 8; j++) CHECK_EQ_INT(same_bytes(INTS[d], vals[i], vals[j]), vals[i] == vals[j]);
  }
  /* the class a comparison through double misses: equal as doubles, different as integers */
  int64_t a = (int64_t)1 << 60, b = a + 1;
  CHECK((double)a == (double)b);
  CHECK(!tu_elem_match(&a, &b, uop_dt(UOP_INT64), 0, 0, 0));
  a = INT64_MIN, b = INT64_MIN + 1;
  CHECK(!tu_elem_match(&a, &b, uop_dt(UOP_INT64), 0, 0, 0));
  uint64_t u = UINT64_MAX, v = UINT64_MAX - 1;
  CHECK(tu_elem_match(&u, &u, uop_dt(UOP_UINT64), 0, 0, 0));
  CHECK(!tu_elem_match(&u, &v, uop_dt(UOP_UINT64), 0, 0, 0));
  /* only the element's own bytes count: the neighbour (element 1) differs */
  int16_t p[2] = {-7, 1}, q[2] = {-7, 2};
  CHECK(tu_elem_match(p, q, uop_dt(UOP_INT16), 0, 0, 0));
  CHECK(!tu_elem_match(p, q, uop_dt(UOP_INT16), 1, 0, 0));
  /* bool: one byte, exactly (a 2 is not a true) */
  CHECK(same_bytes(UOP_BOOL, 1, 1));
  CHECK(!same_bytes(UOP_BOOL, 0, 1));
  CHECK(!same_bytes(UOP_BOOL, 2, 1));
  char s[40];
  CHECK(strcmp(tu_elem_str(s, sizeof s, &u, uop_dt(UOP_UINT64), 0), "18446744073709551615") == 0);
  a = INT64_MIN;
  CHECK(strcmp(tu_elem_str(s, sizeof s, &a, uop_dt(UOP_INT64), 0), "-9223372036854775808") == 0);
}

static void test_floats(void) {
  CHECK(same_f64(NAN, -NAN, 0, 0));
  CHECK(!same_f64(NAN, 1, 1, 1));
  CHECK(!same_f64(1, NAN, 1, 1));
  CHECK(same_f64(-0.0, 0.0, 0, 0));
  CHECK(same_f64(INFINITY, INFINITY, 0, 0));
  CHECK(!same_f64(INFINITY, -INFINITY, 1, 1));
  CHECK(!same_f64(DBL_MAX, INFINITY, 1, 1));
  CHECK(same_f64(1.0, 1.0 + 1e-7, 1e-6, 0));
  CHECK(!same_f64(1.0, 1.0 + 1e-5, 1e-6, 0));
  CHECK(same_f64(0.0, 1e-9, 0, 1e-8));
  CHECK(!same_f64(0.0, 1e-7, 0, 1e-8));
  CHECK(same_f32(NAN, NAN));
  CHECK(!same_f32(3.0f, 3.5f));
  /* float16 1.0 = 0x3c00, 1.5 = 0x3e00, NaN = 0x7e00; bfloat16 1.0 = 0x3f80, 1.5 = 0x3fc0 */
  uint16_t h[] = {0x3c00, 0x3e00, 0x7e00, 0x8000, 0x0000}, bf[] = {0x3f80, 0x3fc0};
  uop_dtype f16 = uop_dt(UOP_FLOAT16), b16 = uop_dt(UOP_BFLOAT16);
  CHECK(tu_elem_match(h, h, f16, 0, 0, 0));
  CHECK(!tu_elem_match(&h[0], &h[1], f16, 0, 1e-3, 0));
  CHECK(!tu_elem_match(&h[0], &h[2], f16, 0, 1e-3, 0));
  CHECK(tu_elem_match(&h[2], &h[2], f16, 0, 0, 0));
  CHECK(tu_elem_match(&h[3], &h[4], f16, 0, 0, 0));
  CHECK(!tu_elem_match(&bf[0], &bf[1], b16, 0, 1e-3, 0));
  CHECK(tu_elem(&bf[1], b16, 0) == 1.5);
  /* a dtype no buffer has never passes unchecked */
  uint64_t z = 0;
  CHECK(!tu_elem_match(&z, &z, uop_dt(UOP_INDEX), 0, 1, 1));
  CHECK(!tu_elem_match(&z, &z, uop_dt(UOP_VOID), 0, 1, 1));
}

/* etu_compare (the examples and GPU tests' check) counts the same mismatches. */
static void test_etu_compare(void) {
  int64_t want[4] = {(int64_t)1 << 62, -((int64_t)1 << 55), 5, INT64_MAX};
  int64_t got[4] = {((int64_t)1 << 62) + 1, -((int64_t)1 << 55) - 1, 5, INT64_MAX};
  uint64_t uw[2] = {UINT64_MAX, 1}, ug[2] = {UINT64_MAX, 1};
  uint16_t hw[2] = {0x3c00, 0x7c00}, hg[2] = {0x3e00, 0x7c00};
  cc_kbuf ref[3] = {{0, uop_dt(UOP_INT64), 4, sizeof want, want}, {1, uop_dt(UOP_UINT64), 2, sizeof uw, uw},
                    {2, uop_dt(UOP_FLOAT16), 2, sizeof hw, hw}};
  cc_kbuf out[3] = {{0, uop_dt(UOP_INT64), 4, sizeof got, got}, {1, uop_dt(UOP_UINT64), 2, sizeof ug, ug},
                    {2, uop_dt(UOP_FLOAT16), 2, sizeof hg, hg}};
  etu_run r;
  etu_compare(ref, 3, out, &r);
  CHECK_EQ_INT(r.checked, 8);
  CHECK_EQ_INT(r.bad, 3); /* two int64 elements past 2^53, the float16 1.0 vs 1.5 */
}

int main(void) {
  test_ints();
  test_floats();
  test_etu_compare();
  return testing_summary("cc_test_util");
}
