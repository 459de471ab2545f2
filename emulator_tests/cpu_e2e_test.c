/* End to end on the CPU device: every example kernel (every .uop file in examples/) parsed, compiled by the pipeline (heuristic
 * opts and --noopt), loaded by our ELF loader and run through an hcq queue on a device with a random thread count
 * (1..4, fixed seed), compared with the reference interpreter. Kernels whose buffers exceed 2 MiB (16 MiB with a
 * variable, which runs 777 iterations) are compiled but not run; the >2^31-element one is only compiled.
 * Random shapes of elementwise, row-reduce and matmul kernels go the same way (the compiler's own kernel fuzzer,
 * compiler/opt_fuzz_test.c, is test-local and not exposed).
 * Then the error paths (unparsable kernel with file:line:col, a buffer larger than memory, a WAIT that times out
 * followed by a normal run) and `hcq bench --quick --json` in-process: every line verified with the fields the
 * main job promises; the table of one row shows the run's longest opts string whole. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/examples_test_util.h"
#include "base/testing.h"
#include "hcq/rt_krun.h"
#include "tools/verbs.h"

#define RUN_LIMIT_B ((size_t)2 << 20)
#define RUN_LIMIT_VAR_B ((size_t)16 << 20)

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static int rand_threads(void) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return 1 + (int)((rng >> 33) % 4);
}


static void run_example(const char *path, bool noopt) {
  int threads = rand_threads();
  cpu_device *dev = NULL;
  CHECK_OK(cpu_device_create(threads, &dev));
  if (!dev) return;
  krun k = {0};
  cc_kbuf *host = NULL;
  size_t nhost = 0;
  cc_options o = {.noopt = noopt};
  hcq_status st = krun_compile_file(&k, path, &o, threads);
  if (st) {
    fprintf(stderr, "%s: %s\n", path, hcq_status_message(st));
    CHECK(!"compile");
    hcq_status_free(st);
    goto done;
  }
  st = cc_kernel_buffers(k.sink, &host, &nhost);
  if (st && sizeof(size_t) == 4 && strstr(hcq_status_message(st), "too large")) {
    /* 32-bit hosts: buffers beyond the address space (examples/big_int64.uop) cannot even be sized */
    printf("%-30s %-6s compiled, not run (buffers exceed the 32-bit address space)\n", path, noopt ? "noopt" : "heur");
    hcq_status_free(st);
    goto done;
  }
  CHECK_OK(st);
  size_t total = 0;
  for (size_t i = 0; i < nhost; i++) total += host[i].size_B;
  if (total > (hcq_program_nvars(&k.prog->desc) ? RUN_LIMIT_VAR_B : RUN_LIMIT_B)) {
    printf("%-30s %-6s compiled, not run (%zu MiB of buffers)\n", path, noopt ? "noopt" : "heur", total >> 20);
    goto done;
  }
  CHECK_OK(krun_setup(&k, dev));
  uop_var_val vv[8];
  size_t nv = 0;
  for (size_t v = 0; v < hcq_program_nvars(&k.prog->desc) && nv < 8; v++) {
    int64_t lo = k.var_nodes[v]->arg.i, hi = k.var_nodes[v]->arg.i2, x = hi < 777 ? hi : 777;
    vv[nv++] = (uop_var_val){hcq_program_var(&k.prog->desc, v)->name, x < lo ? lo : x};
  }
  CHECK_OK(krun_set_vars(&k, vv, nv));
  krun_fill(&k, 7);
  CHECK_OK(cc_kbufs_alloc_fill(host, nhost, 7));
  CHECK_OK(krun_exec(&k, 30000, NULL));
  krun_cmp cmp = {0};
  CHECK_OK(krun_check_interp(&k, host, nhost, 1e-4, 1e-5, &cmp));
  char *ot = krun_opts_text(&k);
  printf("%-30s %-6s %d threads, opts [%s]: %zu elements, %zu mismatches, max abs err %.3g\n", path,
         noopt ? "noopt" : "heur", threads, ot ? ot : "", cmp.checked, cmp.mismatches, cmp.max_abs);
  free(ot);
  CHECK(cmp.checked > 0);
  CHECK_EQ_INT(cmp.mismatches, 0);
done:
  if (host) cc_kbufs_free(host, nhost);
  krun_free(&k);
  cpu_device_destroy(dev);
}

static void test_examples(void) {
  char *names[ETU_MAX_EXAMPLES];
  int count = etu_list_examples(names, ETU_MAX_EXAMPLES);
  CHECK(count >= 10);
  for (int i = 0; i < count; i++) {
    char path[512];
    snprintf(path, sizeof path, "examples/%s", names[i]);
    run_example(path, false);
    run_example(path, true);
    free(names[i]);
  }
}

/* Random shapes (sizes that are not multiples of any vector width or thread count) through the heuristic and the
 * device with random thread counts, against the interpreter. */
static void run_text(const char *text, int threads) {
  cpu_device *dev = NULL;
  CHECK_OK(cpu_device_create(threads, &dev));
  krun k = {0};
  cc_kbuf *host = NULL;
  size_t nhost = 0;
  hcq_status st = krun_compile_text(&k, text, NULL, threads);
  if (!st) st = krun_setup(&k, dev);
  if (!st) st = cc_kernel_buffers(k.sink, &host, &nhost);
  if (!st) st = cc_kbufs_alloc_fill(host, nhost, 5);
  if (!st) {
    krun_fill(&k, 5);
    st = krun_exec(&k, 30000, NULL);
  }
  krun_cmp cmp = {0};
  if (!st) st = krun_check_interp(&k, host, nhost, 1e-4, 1e-5, &cmp);
  if (st || cmp.mismatches) {
    char *ot = krun_opts_text(&k);
    fprintf(stderr, "random kernel (%d threads, opts [%s]) failed: %s\n%s\n", threads, ot ? ot : "",
            st ? hcq_status_message(st) : "mismatch", text);
    free(ot);
  }
  CHECK_OK(st);
  CHECK_EQ_INT(cmp.mismatches, 0);
  if (host) cc_kbufs_free(host, nhost);
  krun_free(&k);
  cpu_device_destroy(dev);
}

static long rnd(long n) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return 1 + (long)((rng >> 33) % (uint64_t)n);
}

static void test_random_shapes(void) {
  char text[1024];
  for (int i = 0; i < 8; i++) {
    long n = rnd(5000);
    snprintf(text, sizeof text,
             "(kernel ew (let o (buf 0 float32 %ld)) (let a (buf 1 float32 %ld)) (let b (buf 2 float32 %ld))"
             " (let r (range 0 %ld loop)) (sink (store (index o r) (+ (* (load (index a r)) (load (index b r))) 0.5) r)))",
             n, n, n, n);
    run_text(text, rand_threads());
    long rows = rnd(70), cols = rnd(300);
    snprintf(text, sizeof text,
             "(kernel red (let o (buf 0 float32 %ld)) (let x (buf 1 float32 %ld)) (let r0 (range 0 %ld loop))"
             " (let r1 (range 1001 %ld reduce)) (sink (store (index o r0) (reduce %s (load (index x (+ (* r0 %ld) r1)))"
             " r1) r0)))",
             rows, rows * cols, rows, cols, i % 2 ? "max" : "add", cols);
    run_text(text, rand_threads());
    long m = rnd(40), nn = rnd(40), kk = rnd(40);
    snprintf(text, sizeof text,
             "(kernel mm (let c (buf 0 float32 %ld)) (let a (buf 1 float32 %ld)) (let b (buf 2 float32 %ld))"
             " (let r0 (range 0 %ld loop)) (let r1 (range 1 %ld loop)) (let k (range 1002 %ld reduce))"
             " (sink (store (index c (+ (* r0 %ld) r1)) (reduce add (* (load (index a (+ (* r0 %ld) k)))"
             " (load (index b (+ (* k %ld) r1)))) k) r0 r1)))",
             m * nn, m * kk, kk * nn, m, nn, kk, nn, kk, nn);
    run_text(text, rand_threads());
  }
}

static void test_errors(const char *dir) {
  /* unparsable kernel: the error names file:line:col */
  char path[256];
  snprintf(path, sizeof path, "%s/bad.uop", dir);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (!f) return;
  fputs("(kernel bad\n  (let out (buf 0 float32 16))\n  (sink (store (index out 0) (+ 1.0 ))))\n", f);
  fclose(f);
  krun k = {0};
  hcq_status st = krun_compile_file(&k, path, NULL, 1);
  CHECK(hcq_status_code(st) == HCQ_CODE_PARSE || hcq_status_code(st) == HCQ_CODE_INVALID);
  char want[300];
  snprintf(want, sizeof want, "%s:3:", path);
  CHECK(strstr(hcq_status_message(st), want) != NULL);
  hcq_status_free(st);
  krun_free(&k);
  char *argv1[] = {"run", path, NULL};
  CHECK_EQ_INT(hcq_verb_run(2, argv1), 1);

  /* --in / --out: raw little-endian files; a size mismatch names the slot and both sizes */
  char in1[256], in2[256], outp[256], bad_in[256];
  snprintf(in1, sizeof in1, "%s/a.bin", dir);
  snprintf(in2, sizeof in2, "%s/b.bin", dir);
  snprintf(outp, sizeof outp, "%s/out.bin", dir);
  snprintf(bad_in, sizeof bad_in, "%s/short.bin", dir);
  static float fa[4096], fb[4096], fo[4096];
  for (int i = 0; i < 4096; i++) fa[i] = (float)i * 0.5f, fb[i] = (float)(4096 - i);
  FILE *fw = fopen(in1, "wb");
  if (fw) fwrite(fa, 4, 4096, fw), fclose(fw);
  fw = fopen(in2, "wb");
  if (fw) fwrite(fb, 4, 4096, fw), fclose(fw);
  fw = fopen(bad_in, "wb");
  if (fw) fwrite(fb, 4, 100, fw), fclose(fw);
  char a1[300], a2[300], a3[300];
  snprintf(a1, sizeof a1, "1=%s", in1);
  snprintf(a2, sizeof a2, "2=%s", in2);
  snprintf(a3, sizeof a3, "0=%s", outp);
  char *argv_io[] = {"run", "--check", "--in", a1, "--in", a2, "--out", a3, "examples/add.uop", NULL};
  CHECK_EQ_INT(hcq_verb_run(9, argv_io), 0);
  FILE *fr = fopen(outp, "rb");
  CHECK(fr && fread(fo, 4, 4096, fr) == 4096 && fgetc(fr) == EOF);
  if (fr) fclose(fr);
  int wrong = 0;
  for (int i = 0; i < 4096; i++) wrong += fo[i] != fa[i] + fb[i];
  CHECK_EQ_INT(wrong, 0);
  snprintf(a2, sizeof a2, "2=%s", bad_in);
  CHECK_EQ_INT(hcq_verb_run(9, argv_io), 1); /* "the file has 400 bytes, buffer slot 2 holds 16384" */

  /* a buffer larger than memory (4 TiB): a clear error, nothing allocated */
  cpu_device *dev = NULL;
  CHECK_OK(cpu_device_create(2, &dev));
  if (!dev) return;
  const char *huge = "(kernel huge (let out (buf 0 float32 1099511627776)) (let r (range 0 1099511627776 loop))"
                     " (sink (store (index out r) 1.0 r)))";
  CHECK_OK(krun_compile_text(&k, huge, &(cc_options){.noopt = true}, 2));
  if (sizeof(size_t) == 4) /* 32-bit hosts: 4 TiB has no size_t size at all */
    CHECK_ERR(krun_setup(&k, dev), HCQ_CODE_INVALID, "too large");
  else
    CHECK_ERR(krun_setup(&k, dev), HCQ_CODE_NOMEM, "huge: buffer slot 0 needs 4398046511104 bytes");
  krun_free(&k);
  snprintf(path, sizeof path, "%s/huge.uop", dir);
  f = fopen(path, "w");
  if (f) {
    fputs(huge, f);
    fclose(f);
  }
  char *argv2[] = {"run", "--noopt", path, NULL};
  CHECK_EQ_INT(hcq_verb_run(3, argv2), 1);

  /* a WAIT on a signal nobody sets: HCQ_CODE_TIMEOUT, then the device runs the next kernel normally */
  hcq_device *hd = cpu_device_hcq(dev);
  hcq_signal *never = NULL;
  CHECK_OK(hcq_signal_create(hd, "never", 0, &never));
  cpu_device_set_wait_timeout(dev, 30);
  hcq_queue *q = NULL;
  CHECK_OK(hcq_queue_create(hd, HCQ_QUEUE_COMPUTE, &q));
  CHECK_OK(hcq_queue_wait(q, hcq_imm(never->va), hcq_imm(1)));
  uint64_t v = hcq_timeline_next(hd);
  CHECK_OK(hcq_queue_signal(q, hcq_imm(hd->timeline->va), hcq_imm(v)));
  CHECK_OK(hcq_queue_submit(q, hd, NULL, 0));
  CHECK_OK(hcq_signal_wait(hd->timeline, v, 5000));
  CHECK_ERR(cpu_device_take_error(dev), HCQ_CODE_TIMEOUT, "waited 30 ms");
  hcq_queue_destroy(q);
  hcq_signal_destroy(never);
  CHECK_OK(krun_compile_file(&k, "examples/add.uop", NULL, 2));
  CHECK_OK(krun_setup(&k, dev));
  krun_fill(&k, 3);
  CHECK_OK(krun_exec(&k, 5000, NULL));
  const float *o = krun_buf(&k, 0)->data, *a = krun_buf(&k, 1)->data, *b = krun_buf(&k, 2)->data;
  int bad = 0;
  for (int i = 0; i < 4096; i++) bad += o[i] != a[i] + b[i];
  CHECK_EQ_INT(bad, 0);
  krun_free(&k);
  cpu_device_destroy(dev);
}

/* krun on a device opened by name (the path `hcq run --dev NAME` takes for every device but the CPU shorthand):
 * compile for the device's own target from its info, run, check against the reference interpreter; the device
 * stays the caller's after krun_free. */
static void test_device_by_name(void) {
  hcq_rt_device *rd = NULL;
  hcq_device_info info;
  CHECK_OK(hcq_rt_open("cpu:0", &rd));
  if (!rd) return;
  CHECK_OK(hcq_rt_info(rd, &info));
  CHECK(!strcmp(info.target, "c"));
  for (int round = 0; round < 2; round++) { /* twice: the device outlives the first krun */
    krun k = {0};
    CHECK_OK(krun_compile_file_for(&k, "examples/softmax.uop", NULL, info.target, 2));
    CHECK_OK(krun_setup_rt(&k, rd));
    krun_fill(&k, 11 + (uint64_t)round);
    cc_kbuf *host = NULL;
    size_t nhost = 0;
    CHECK_OK(cc_kernel_buffers(k.sink, &host, &nhost));
    for (size_t i = 0; host && i < nhost; i++) {
      host[i].data = malloc(host[i].size_B);
      memcpy(host[i].data, krun_buf(&k, host[i].slot)->data, host[i].size_B);
    }
    CHECK_OK(krun_exec(&k, 5000, NULL));
    krun_cmp cmp;
    CHECK_OK(krun_check_interp(&k, host, nhost, 1e-4, 1e-5, &cmp));
    CHECK(cmp.checked > 0 && cmp.mismatches == 0);
    if (host) cc_kbufs_free(host, nhost);
    krun_free(&k);
  }
  krun k = {0};
  CHECK_ERR(krun_compile_file_for(&k, "examples/add.uop", NULL, "no-such-target", 2), HCQ_CODE_NOT_FOUND, "");
  krun_free(&k);
  hcq_rt_close(rd);
}

static const char *const required_names[] = {"add", "saxpy", "sum", "softmax", "row_sum", "col_sum", "col_sum_tall",
                                              "matmul_512", "matmul_1024",
                                              "matmul_2048", "matmul_1000", "matmul_4096x256x4096",
                                              "matmul_batched_64", "transpose", "launch", "graph_replay",
                                              "compile_pipeline", "compile_external"};
#define NREQ (sizeof required_names / sizeof required_names[0])

/* hcq bench in-process with stdout into out_path; its exit status (-1: stdout could not be redirected). */
static int bench_into(const char *out_path, int argc, char **argv) {
  fflush(stdout);
  int saved = dup(1), fd = open(out_path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
  if (saved < 0 || fd < 0) {
    if (saved >= 0) close(saved);
    if (fd >= 0) close(fd);
    return -1;
  }
  dup2(fd, 1);
  close(fd);
  int rc = hcq_verb_bench(argc, argv);
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  return rc;
}

/* The table's opts column is as wide as the run's longest opts string (never cut): the row shows `opts` whole and
 * the header's next column ("compile", 9 wide, right-aligned) ends where the row's does, 1 + 9 past the opts. */
static void test_bench_table(const char *dir, const char *name, const char *opts) {
  char out_path[256];
  snprintf(out_path, sizeof out_path, "%s/bench.txt", dir);
  char *argv[] = {"bench", "--quick", "--threads", "2", "--only", (char *)name, NULL};
  CHECK_EQ_INT(bench_into(out_path, 6, argv), 0);
  FILE *f = fopen(out_path, "r");
  CHECK(f != NULL);
  if (!f) return;
  char line[4096];
  long header_compile_end = -1, row_end = -1;
  while (fgets(line, sizeof line, f)) {
    fputs(line, stdout);
    const char *c = strstr(line, " compile ");
    if (!strncmp(line, "kernel ", 7) && c) header_compile_end = (long)(c - line + strlen(" compile"));
    const char *o = strstr(line, opts);
    if (!strncmp(line, name, strlen(name)) && o && o[strlen(opts)] == ' ') row_end = (long)(o - line + strlen(opts));
  }
  fclose(f);
  if (row_end < 0 || header_compile_end != row_end + 10)
    fprintf(stderr, "bench table: opts [%s] of %s not shown whole (row: to %ld, header's compile to %ld)\n", opts,
            name, row_end, header_compile_end);
  CHECK(row_end > 0);
  CHECK_EQ_INT(header_compile_end, row_end + 10);
}

static void test_bench(const char *dir) {
  char out_path[256];
  snprintf(out_path, sizeof out_path, "%s/bench.jsonl", dir);
  char *argv[] = {"bench", "--quick", "--json", "--threads", "2", NULL};
  int rc = bench_into(out_path, 5, argv);
  CHECK_EQ_INT(rc, 0);
  FILE *f = fopen(out_path, "r");
  CHECK(f != NULL);
  if (!f) return;
  char line[4096], longest[64] = "", longest_opts[512] = "";
  bool seen[NREQ] = {0};
  int lines = 0;
  while (fgets(line, sizeof line, f)) {
    lines++;
    fputs(line, stdout);
    CHECK(line[0] == '{' && strstr(line, "}\n"));
    CHECK(strstr(line, "\"verified\":true") != NULL);
    CHECK(strstr(line, "\"threads\":2") != NULL);
    static const char *const fields[] = {"\"name\":\"", "\"metric\":\"", "\"value\":", "\"baseline\":",
                                         "\"baseline_value\":", "\"ratio\":"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) CHECK(strstr(line, fields[i]) != NULL);
    CHECK(strstr(line, "\"metric\":\"GB/s\"") || strstr(line, "\"metric\":\"GFLOP/s\"") ||
          strstr(line, "\"metric\":\"us\""));
    /* baseline null <=> ratio null */
    CHECK((strstr(line, "\"baseline\":null") != NULL) == (strstr(line, "\"ratio\":null") != NULL));
    for (size_t i = 0; i < NREQ; i++) {
      char key[64];
      snprintf(key, sizeof key, "\"name\":\"%s\",", required_names[i]);
      if (strstr(line, key)) seen[i] = true;
    }
    /* transpose shows the hand-tuned C transpose beside its STREAM ratio (present on every CPU: a scalar variant) */
    if (strstr(line, "\"name\":\"transpose\","))
      CHECK(strstr(line, "\"also\":[{\"baseline\":\"c_transpose_simd\",\"value\":") != NULL);
    const char *v = strstr(line, "\"value\":");
    CHECK(v && strtod(v + 8, NULL) > 0);
    const char *o = strstr(line, "\"opts\":\""), *n = strstr(line, "\"name\":\"");
    const char *oe = o ? strchr(o + 8, '"') : NULL, *ne = n ? strchr(n + 8, '"') : NULL;
    if (oe && ne && oe - (o + 8) > (long)strlen(longest_opts) && oe - (o + 8) < (long)sizeof longest_opts &&
        ne - (n + 8) < (long)sizeof longest) {
      snprintf(longest_opts, sizeof longest_opts, "%.*s", (int)(oe - (o + 8)), o + 8);
      snprintf(longest, sizeof longest, "%.*s", (int)(ne - (n + 8)), n + 8);
    }
  }
  fclose(f);
  /* the table shows the longest opts string of the JSON run whole (quick softmax: 70 characters) */
  CHECK(strlen(longest_opts) > 34);
  if (longest[0]) test_bench_table(dir, longest, longest_opts);
  CHECK_EQ_INT(lines, (int)NREQ);
  for (size_t i = 0; i < NREQ; i++) {
    if (!seen[i]) fprintf(stderr, "bench result %s missing\n", required_names[i]);
    CHECK(seen[i]);
  }
}

int main(void) {
  char dir[] = "/tmp/hcq-cpu-e2e-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  if (system("command -v cc >/dev/null 2>&1") != 0) TEST_SKIP("no C compiler (install gcc)");
  test_examples();
  test_device_by_name();
  test_random_shapes();
  test_errors(dir);
  test_bench(dir);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return testing_summary("cpu_e2e_test");
}
