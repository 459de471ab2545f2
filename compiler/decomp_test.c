/* Accuracy of the exp2/log2/sin decompositions (compiler/decomp.c) as compiled C, against libm (this test may use
 * libm; the kernels may not). Error is measured in ulps of the libm result; special values must match exactly. */
#include <math.h>

#include "compiler/cc_test_util.h"
#include "hcq/testing.h"

#define N 40000

static double ulp_err_f(float got, float ref) {
  if (isnan(ref)) return isnan(got) ? 0 : 1e30;
  if (isinf(ref)) return got == ref ? 0 : 1e30;
  float u = nextafterf(fabsf(ref), INFINITY) - fabsf(ref);
  return fabs((double)got - (double)ref) / u;
}
static double ulp_err_d(double got, double ref) {
  if (isnan(ref)) return isnan(got) ? 0 : 1e30;
  if (isinf(ref)) return got == ref ? 0 : 1e30;
  double u = nextafter(fabs(ref), INFINITY) - fabs(ref);
  return fabs(got - ref) / u;
}

static float xs[N], ys[N];
static double xd[N], yd[N];

static void fill(const char *fn, bool f64) {
  uint64_t s = 99;
  for (int i = 0; i < N; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    double u = (double)(s >> 11) / 9007199254740992.0; /* [0,1) */
    double x;
    if (strcmp(fn, "exp2") == 0) x = f64 ? -1075 + u * 2100 : -150 + u * 278;
    else if (strcmp(fn, "log2") == 0) x = f64 ? exp2(-1074 + u * 2097) : exp2(-149 + u * 277);
    else x = -2000 + u * 4000;
    if (i < 8) {
      const double special[8] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1.0, -1.0, 0.5};
      x = special[i];
    }
    xd[i] = x;
    xs[i] = (float)x;
  }
}

static void check_fn(uop_ctx *ctx, const cc_target *t, const char *fn, bool f64, double max_ulp) {
  char text[400];
  snprintf(text, sizeof text,
           "(kernel k (let o (buf 0 %s %d)) (let x (buf 1 %s %d)) (let r (range 0 %d loop))"
           " (sink (store (index o r) (%s (load (index x r))) r)))",
           f64 ? "float64" : "float32", N, f64 ? "float64" : "float32", N, N, fn);
  cc_program *p = NULL;
  tu_kernel k = {0};
  CHECK_OK(tu_build(ctx, text, t, &p, &k));
  if (!k.fn) {
    cc_program_free(p);
    return;
  }
  CHECK(strstr(p->source, fn) == NULL); /* no call: decomposed */
  fill(fn, f64);
  tu_call(&k, (uintptr_t[]){f64 ? (uintptr_t)yd : (uintptr_t)ys, f64 ? (uintptr_t)xd : (uintptr_t)xs, 0}, 3);
  double worst = 0;
  int worst_i = 0;
  for (int i = 0; i < N; i++) {
    double ref, e;
    if (f64) {
      ref = strcmp(fn, "exp2") == 0 ? exp2(xd[i]) : strcmp(fn, "log2") == 0 ? log2(xd[i]) : sin(xd[i]);
      e = ulp_err_d(yd[i], ref);
    } else {
      float r = strcmp(fn, "exp2") == 0 ? exp2f(xs[i]) : strcmp(fn, "log2") == 0 ? log2f(xs[i]) : sinf(xs[i]);
      e = ulp_err_f(ys[i], r);
      /* sin near its zeros: measure against ulp(1) scaled by |x| (Cody-Waite reduction error) */
      if (strcmp(fn, "sin") == 0 && fabsf(r) < 1e-3f) e = fabs((double)ys[i] - r) / 0x1p-23;
    }
    if (e > worst) worst = e, worst_i = i;
  }
  printf("%-4s %s: max error %.2f ulp (at x=%.9g) over %d points\n", fn, f64 ? "float64" : "float32", worst,
         f64 ? xd[worst_i] : (double)xs[worst_i], N);
  CHECK(worst <= max_ulp);
  tu_unload(&k);
  cc_program_free(p);
}

int main(void) {
  char dir[] = "/tmp/hcq-decomp-test-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  if (!tu_have(cc_toolchain_cc())) return 77;
  cc_target t;
  CHECK_OK(cc_target_get("c", 1, &t));
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  check_fn(ctx, &t, "exp2", false, 3);
  check_fn(ctx, &t, "log2", false, 3);
  check_fn(ctx, &t, "sin", false, 3);
  check_fn(ctx, &t, "exp2", true, 3);
  check_fn(ctx, &t, "log2", true, 3);
  check_fn(ctx, &t, "sin", true, 3);
  uop_ctx_destroy(ctx);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
  return testing_summary("decomp");
}
