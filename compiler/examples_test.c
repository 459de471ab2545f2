/* Every example kernel (every .uop file in examples/) through the c pipeline, built with cc, loaded and run on deterministically
 * filled buffers, compared with the reference interpreter (compiler/interp.c): integers exactly, floats within
 * 2e-5 relative + 1e-6 absolute (the compiled code may fuse multiply-adds, and exp2/log2/sin are polynomials).
 * Kernels whose buffers exceed 2 MiB in total (16 MiB with a variable length) are compiled but not run, to keep the
 * interpreter within seconds. */
#include "compiler/examples_test_util.h"

#define RUN_LIMIT_B ((size_t)2 << 20)
#define RUN_LIMIT_VAR_B ((size_t)16 << 20) /* kernels with a variable run only 777 iterations */

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
  etu_run r;
  etu_reference(ctx, sink, ref, nref, got, ngot, &r);
  st = tu_load(p->binary, p->binary_size_B, p->symbol, &k);
  CHECK_OK(st);
  st = HCQ_OK;
  if (!k.fn) goto done;
  etu_native(p, k.fn, ref, nref, got, ngot, &r);
  printf("%-28s ran: %zu elements compared, %zu mismatches, max abs float error %.3g\n", path, r.checked, r.bad,
         r.worst);
  CHECK_EQ_INT(r.bad, 0);
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
  char *names[ETU_MAX_EXAMPLES];
  int count = etu_list_examples(names, ETU_MAX_EXAMPLES);
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
