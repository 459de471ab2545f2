/* Every example kernel (every .uop file in examples/) through the c pipeline, built with cc, loaded and run on deterministically
 * filled buffers, compared with the reference interpreter (compiler/interp.c): integers exactly, floats within
 * 2e-5 relative + 1e-6 absolute (the compiled code may fuse multiply-adds, and exp2/log2/sin are polynomials).
 * Kernels whose buffers exceed 2 MiB in total (16 MiB with a variable length) are compiled but not run, to keep the
 * interpreter within seconds. */
#include <dirent.h>
#include <math.h>

#include "compiler/cc_test_util.h"
#include "compiler/interp.h"
#include "hcq/testing.h"

#define RUN_LIMIT_B ((size_t)2 << 20)
#define RUN_LIMIT_VAR_B ((size_t)16 << 20) /* kernels with a variable run only 777 iterations */

static int cmp_s(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static double elem(const void *data, uop_dtype dt, int64_t i) {
  switch (dt.scalar) {
    case UOP_FLOAT32: return ((const float *)data)[i];
    case UOP_FLOAT64: return ((const double *)data)[i];
    case UOP_INT32: return ((const int32_t *)data)[i];
    case UOP_UINT32: return ((const uint32_t *)data)[i];
    case UOP_INT8: return ((const int8_t *)data)[i];
    case UOP_UINT8: return ((const uint8_t *)data)[i];
    case UOP_INT16: return ((const int16_t *)data)[i];
    case UOP_INT64: return (double)((const int64_t *)data)[i];
    case UOP_BOOL: return ((const uint8_t *)data)[i];
    default: return NAN;
  }
}

static void run_example(const cc_target *t, const char *path) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *sink = NULL;
  cc_program *p = NULL;
  tu_kernel k = {0};
  cc_kbuf *ref = NULL, *got = NULL;
  size_t nref = 0, ngot = 0;
  hcq_status st = cc_kernel_parse_file(ctx, path, &sink);
  if (!st) st = cc_compile_source(ctx, sink, t, &(cc_options){.noopt = true}, &p);
  if (!st) st = cc_compile_binary(t, p);
  if (st) {
    fprintf(stderr, "%s: %s\n", path, hcq_status_message(st));
    hcq_status_free(st);
    CHECK(!"compile");
    goto done;
  }
  CHECK(p->binary_size_B > 0);
  st = cc_kernel_buffers(sink, &ref, &nref);
  if (st && sizeof(size_t) == 4 && strstr(hcq_status_message(st), "too large")) {
    /* 32-bit hosts: buffers beyond the address space (examples/big_int64.uop) cannot even be sized */
    printf("%-28s compiled, not run (buffers exceed the 32-bit address space)\n", path);
    hcq_status_free(st);
    st = HCQ_OK;
    goto done;
  }
  if (!st) st = cc_kernel_buffers(sink, &got, &ngot);
  CHECK_OK(st);
  st = HCQ_OK;
  if (!ref || !got) goto done;
  size_t total = 0;
  for (size_t i = 0; i < nref; i++) total += ref[i].size_B;
  bool has_var = strstr(p->source, "const int ") != NULL;
  if (total > (has_var ? RUN_LIMIT_VAR_B : RUN_LIMIT_B)) {
    printf("%-28s compiled (%zu B object), not run (%zu MiB of buffers)\n", path, p->binary_size_B, total >> 20);
    goto done;
  }
  CHECK_OK(cc_kbufs_alloc_fill(ref, nref, 7));
  CHECK_OK(cc_kbufs_alloc_fill(got, ngot, 7));
  /* variables: min(max, 777) clamped to the declared range */
  const uop **nodes;
  size_t count;
  CHECK_OK(uop_toposort(ctx, sink, &nodes, &count));
  uop_var_val vals[8];
  size_t nvals = 0;
  for (size_t i = 0; i < count && nvals < 8; i++)
    if (nodes[i]->op == UOP_DEFINE_VAR) {
      int64_t v = nodes[i]->arg.i2 < 777 ? nodes[i]->arg.i2 : 777;
      if (v < nodes[i]->arg.i) v = nodes[i]->arg.i;
      vals[nvals].name = nodes[i]->arg.str;
      vals[nvals++].value = v;
    }
  void *bufs[16] = {0};
  size_t sizes[16] = {0};
  for (size_t i = 0; i < nref && ref[i].slot < 16; i++) {
    bufs[ref[i].slot] = ref[i].data;
    sizes[ref[i].slot] = ref[i].size_B;
  }
  CHECK_OK(cc_interp_run(sink, bufs, sizes, 16, vals, nvals));
  st = tu_load(p->binary, p->binary_size_B, p->name, &k);
  CHECK_OK(st);
  st = HCQ_OK;
  if (!k.fn) goto done;
  uintptr_t args[10];
  int nargs = 0;
  for (size_t i = 0; i < ngot && nargs < 8; i++) args[nargs++] = (uintptr_t)got[i].data;
  for (size_t v = 0; v < p->nvars && nargs < 9; v++)
    for (size_t j = 0; j < nvals; j++)
      if (strcmp(vals[j].name, p->var_names[v]) == 0) args[nargs++] = (uintptr_t)vals[j].value;
  int64_t threads = 1;
  CHECK(uop_const_value(p->global_size[0], &threads));
  for (int64_t core = 0; core < threads; core++) {
    args[nargs] = (uintptr_t)core;
    tu_call(&k, args, nargs + 1);
  }
  size_t bad = 0, checked = 0;
  double worst = 0;
  for (size_t i = 0; i < nref; i++) {
    bool is_float = uop_dt_is_float(ref[i].dtype);
    for (int64_t e = 0; e < ref[i].nelems; e++) {
      double a = elem(ref[i].data, ref[i].dtype, e), b = elem(got[i].data, got[i].dtype, e);
      checked++;
      if (is_float) {
        double err = fabs(a - b);
        if (isnan(a) != isnan(b) || (!isnan(a) && !(err <= 2e-5 * fabs(a) + 1e-6))) bad++;
        if (err > worst) worst = err;
      } else {
        bad += a != b;
      }
    }
  }
  printf("%-28s ran: %zu elements compared, %zu mismatches, max abs float error %.3g\n", path, checked, bad, worst);
  CHECK_EQ_INT(bad, 0);
done:
  tu_unload(&k);
  cc_program_free(p);
  if (ref) cc_kbufs_free(ref, nref);
  if (got) cc_kbufs_free(got, ngot);
  uop_ctx_destroy(ctx);
}

int main(void) {
  char dir[] = "/tmp/hcq-examples-test-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  if (!tu_have(cc_toolchain_cc())) return 77;
  cc_target t;
  CHECK_OK(cc_target_get("c", 0, &t));
  DIR *d = opendir("examples");
  CHECK(d != NULL);
  char *names[256];
  int count = 0;
  for (struct dirent *e; d && (e = readdir(d)) && count < 256;) {
    size_t l = strlen(e->d_name);
    if (l > 4 && strcmp(e->d_name + l - 4, ".uop") == 0) names[count++] = strdup(e->d_name);
  }
  if (d) closedir(d);
  qsort(names, (size_t)count, sizeof *names, cmp_s);
  CHECK(count >= 10);
  for (int i = 0; i < count; i++) {
    char path[512];
    snprintf(path, sizeof path, "examples/%s", names[i]);
    run_example(&t, path);
    free(names[i]);
  }
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
  return testing_summary("examples");
}
