/* hcq_program: the kernel-argument layout against the byte offsets the CPU device decodes (hcq/args.h rule,
 * restated here independently: buffers are u64 in slot order, then int32 values), structural checks, variable
 * resolution (missing, out of range, beyond int32) and launch sizes against C arithmetic. */
#include "hcq/program.h"

#include <stdio.h>
#include <string.h>

#include "base/testing.h"

static void build(hcq_program *p, int nb, int nv) {
  hcq_program_init(p);
  snprintf(p->name, sizeof p->name, "k");
  snprintf(p->symbol, sizeof p->symbol, "k");
  for (int i = 0; i < nb; i++) CHECK_OK(hcq_program_add_buffer(p, "float32", 16 + i, HCQ_ACCESS_READ));
  for (int v = 0; v < nv; v++) {
    char n[8];
    snprintf(n, sizeof n, "v%d", v);
    CHECK_OK(hcq_program_add_var(p, n, true, -5, 1000));
  }
}

static void test_layout(void) {
  for (int nb = 0; nb <= 5; nb++)
    for (int nv = 0; nv <= 4; nv++)
      for (uint32_t prefix = 0; prefix <= 8; prefix += 8) {
        hcq_program p;
        build(&p, nb, nv);
        CHECK_OK(hcq_program_layout(&p, prefix));
        CHECK_EQ_INT(p.kernarg_size_B, prefix + 8u * (uint32_t)nb + 4u * (uint32_t)nv);
        for (int i = 0; i < nb + nv; i++) {
          uint32_t want = i < nb ? prefix + 8u * (uint32_t)i : prefix + 8u * (uint32_t)nb + 4u * (uint32_t)(i - nb);
          CHECK_EQ_INT(p.params[i].offset_B, want);
          CHECK_EQ_INT(p.params[i].size_B, i < nb ? 8 : 4);
        }
        CHECK_EQ_INT(hcq_program_nbufs(&p), nb);
        CHECK_EQ_INT(hcq_program_nvars(&p), nv);
        CHECK_OK(hcq_program_check(&p));
      }
}

/* A device override (binary metadata) is checked: overlaps and offsets past the end are refused. */
static void test_override_checked(void) {
  hcq_program p;
  build(&p, 2, 1);
  CHECK_OK(hcq_program_layout(&p, 0));
  p.params[1].offset_B = 4; /* overlaps buffer 0 */
  CHECK_ERR(hcq_program_check(&p), HCQ_CODE_INVALID, "overlap");
  CHECK_OK(hcq_program_layout(&p, 0));
  p.params[2].offset_B = p.kernarg_size_B; /* past the end */
  CHECK_ERR(hcq_program_check(&p), HCQ_CODE_INVALID, "outside the kernel arguments");
  CHECK_OK(hcq_program_layout(&p, 0));
  snprintf(p.global[0], sizeof p.global[0], "v0 +");
  CHECK_ERR(hcq_program_check(&p), HCQ_CODE_INVALID, "global size 0");
  CHECK_ERR(hcq_program_add_buffer(&p, "float32", 1, 0), HCQ_CODE_INVALID, "after the variables");
  char longname[100];
  memset(longname, 'a', sizeof longname - 1);
  longname[99] = 0;
  CHECK_ERR(hcq_program_add_var(&p, longname, false, 0, 0), HCQ_CODE_INVALID, "longer than");
  CHECK_ERR(hcq_program_add_var(&p, "w", true, 3, 2), HCQ_CODE_INVALID, "empty range");
  hcq_program full;
  build(&full, HCQ_PROGRAM_MAX_PARAMS, 0);
  CHECK_ERR(hcq_program_add_buffer(&full, "float32", 1, 0), HCQ_CODE_UNSUPPORTED, "parameters");
}

static void test_vars_and_dims(void) {
  hcq_program p;
  build(&p, 1, 2);
  snprintf(p.global[0], sizeof p.global[0], "(v0+3)//4");
  snprintf(p.global[1], sizeof p.global[1], "max(v1, 1)");
  snprintf(p.local[0], sizeof p.local[0], "min(v0, 4)");
  CHECK_OK(hcq_program_layout(&p, 0));
  CHECK_OK(hcq_program_check(&p));
  int64_t vals[2];
  hcq_var vv[3] = {{"v1", 7}, {"zzz", 1}, {"v0", 13}};
  CHECK_OK(hcq_program_var_values(&p, vv, 3, vals));
  CHECK_EQ_INT(vals[0], 13);
  CHECK_EQ_INT(vals[1], 7);
  int64_t g[3], l[3];
  for (int64_t a = -5; a <= 40; a++)
    for (int64_t b = -5; b <= 5; b++) {
      int64_t v[2] = {a, b};
      int64_t want0 = a + 3 >= 0 ? (a + 3) / 4 : -((-(a + 3) + 3) / 4), want1 = b > 1 ? b : 1, wl = a < 4 ? a : 4;
      hcq_status st = hcq_program_launch_dims(&p, v, 1 << 20, g, l);
      if (want0 < 1 || wl < 1) {
        CHECK(st != NULL && hcq_status_code(st) == HCQ_CODE_INVALID);
        hcq_status_free(st);
        continue;
      }
      CHECK(st == NULL);
      hcq_status_free(st);
      CHECK_EQ_INT(g[0], want0);
      CHECK_EQ_INT(g[1], want1);
      CHECK_EQ_INT(g[2], 1);
      CHECK_EQ_INT(l[0], wl);
    }
  CHECK_ERR(hcq_program_var_values(&p, vv, 1, vals), HCQ_CODE_NOT_FOUND, "needs variable v0 (-5..1000)");
  hcq_var hi[2] = {{"v0", 1001}, {"v1", 0}}, lo[2] = {{"v0", -6}, {"v1", 0}};
  CHECK_ERR(hcq_program_var_values(&p, hi, 2, vals), HCQ_CODE_INVALID, "outside its declared range -5..1000");
  CHECK_ERR(hcq_program_var_values(&p, lo, 2, vals), HCQ_CODE_INVALID, "outside its declared range");
  /* an unranged variable still has to fit its int32 argument */
  hcq_program u;
  build(&u, 0, 0);
  CHECK_OK(hcq_program_add_var(&u, "n", false, 0, 0));
  hcq_var big = {"n", (int64_t)INT32_MAX + 1}, neg = {"n", (int64_t)INT32_MIN};
  CHECK_ERR(hcq_program_var_values(&u, &big, 1, vals), HCQ_CODE_INVALID, "int32");
  CHECK_OK(hcq_program_var_values(&u, &neg, 1, vals));
  int64_t huge[1] = {INT64_MAX / 2};
  snprintf(u.global[0], sizeof u.global[0], "n*4");
  CHECK_ERR(hcq_program_launch_dims(&u, huge, 1 << 20, g, l), HCQ_CODE_INVALID, "outside 1..1048576");
}

int main(void) {
  test_layout();
  test_override_checked();
  test_vars_and_dims();
  return testing_summary("hcq/program_test");
}
