/* llvm-cpu integer // and % by zero: undefined in LLVM IR (x86 traps by luck, Arm returns a value), so the
 * renderer traps explicitly like the c target. Checked in the IR text (a guard exactly where the divisor's range
 * holds 0), and by running the compiled kernel on this host in a child process: a zero divisor must kill it (a
 * fault), never return; nonzero divisors must match the reference interpreter. The qemu legs run it on Arm. */
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/cc_test_util.h"
#include "compiler/interp.h"
#include "cpu/cpu_elf.h"
#include "base/testing.h"

/* out[i] = a[i] OP b[i] for each dtype and op; b's zeros come from the test. */
static const char *KERNEL_FMT =
    "(kernel dz (let o (buf 0 %s 8)) (let a (buf 1 %s 8)) (let b (buf 2 %s 8)) (let r (range 0 8 loop))\n"
    "  (sink (store (index o r) (%s (load (index a r)) (load (index b r))) r)))";

static cc_program *compile_for(uop_ctx *ctx, const char *target, const char *text, bool binary, const uop **sink) {
  cc_target t;
  CHECK_OK(cc_target_get(target, 4, &t));
  cc_program *p = NULL;
  hcq_status st = cc_kernel_parse(ctx, text, strlen(text), "<test>", sink);
  if (!st) st = cc_compile_source(ctx, *sink, &t, &(cc_options){.noopt = true}, &p);
  if (!st && binary) st = cc_compile_binary(&t, p);
  if (st) {
    fprintf(stderr, "%s: %s\n", target, hcq_status_message(st));
    hcq_status_free(st);
    CHECK(!"compile");
    cc_program_free(p);
    return NULL;
  }
  return p;
}

static cc_program *compile(uop_ctx *ctx, const char *text, bool binary, const uop **sink) {
  return compile_for(ctx, "llvm-cpu", text, binary, sink);
}

/* The guard is emitted where the divisor may be 0 and only there. */
static void test_ir(void) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const char *may = "(kernel m (let o (buf 0 int32 8)) (let a (buf 1 int32 8)) (let r (range 0 8 loop))\n"
                    "  (sink (store (index o r) (% (const 7 int32) (& (load (index a r)) (const 7 int32))) r)))";
  const char *never = "(kernel n (let o (buf 0 int32 8)) (let a (buf 1 int32 8)) (let r (range 0 8 loop))\n"
                      "  (sink (store (index o r) (// (const 7 int32) (+ (& (load (index a r)) (const 7 int32)) (const 1 int32))) r)))";
  const uop *sink = NULL;
  cc_program *p = compile(ctx, may, false, &sink);
  if (p) CHECK(strstr(p->source, "call void @llvm.trap()") && strstr(p->source, "icmp eq i32"));
  cc_program_free(p);
  p = compile(ctx, never, false, &sink);
  if (p) CHECK(!strstr(p->source, "@llvm.trap"));
  cc_program_free(p);
  /* every dtype whose load may hold 0, uint64 too (its bounds are bit patterns, the full range is [0, -1]); the c
   * target for Arm likewise */
  const char *dts[] = {"int8", "uint8", "int32", "uint32", "int64", "uint64"};
  for (size_t i = 0; i < sizeof dts / sizeof *dts; i++) {
    char text[300];
    snprintf(text, sizeof text, "(kernel u (let o (buf 0 %s 8)) (let a (buf 1 %s 8)) (let r (range 0 8 loop))\n"
             "  (sink (store (index o r) (// (load (index o r)) (load (index a r))) r)))", dts[i], dts[i]);
    p = compile(ctx, text, false, &sink);
    if (p && !strstr(p->source, "call void @llvm.trap()")) fprintf(stderr, "llvm-cpu %s: no zero guard\n", dts[i]);
    CHECK(p && strstr(p->source, "call void @llvm.trap()"));
    cc_program_free(p);
    p = compile_for(ctx, "c:aarch64", text, false, &sink);
    if (p && !strstr(p->source, "__builtin_trap()")) fprintf(stderr, "c:aarch64 %s: no zero guard\n", dts[i]);
    CHECK(p && strstr(p->source, "__builtin_trap()"));
    cc_program_free(p);
  }
  uop_ctx_destroy(ctx);
}

/* Runs the kernel in a child; returns the wait status. */
static int run_child(void *fn, void *o, void *a, void *b) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    setrlimit(RLIMIT_CORE, &(struct rlimit){0, 0}); /* the expected fault leaves no core file */
    ((void (*)(void *, void *, void *, int))fn)(o, a, b, 0);
    _exit(0);
  }
  int ws = 0;
  if (pid < 0 || waitpid(pid, &ws, 0) != pid) CHECK(!"fork/waitpid");
  return ws;
}

static void test_run(const char *dt, const char *op) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  char text[512];
  snprintf(text, sizeof text, KERNEL_FMT, dt, dt, dt, op);
  const uop *sink = NULL;
  cc_program *p = compile(ctx, text, true, &sink);
  cc_kbuf *ref = NULL, *got = NULL;
  size_t nref = 0, ngot = 0;
  cpu_program *cp = NULL;
  void *fn = NULL;
  if (!p) goto done;
  CHECK_OK(cc_kernel_buffers(sink, &ref, &nref));
  CHECK_OK(cc_kernel_buffers(sink, &got, &ngot));
  CHECK_OK(cc_kbufs_alloc_fill(ref, nref, 5));
  CHECK_OK(cc_kbufs_alloc_fill(got, ngot, 5));
  CHECK_OK(cpu_program_load(p->binary, p->binary_size_B, &cp));
  if (cp) CHECK_OK(cpu_program_symbol(cp, "dz", &fn));
  if (!fn || nref != 3) goto done;
  size_t esz = ref[2].size_B / 8;
  /* nonzero divisors (the fill may hold zeros: make every one 3): the child must finish and match */
  for (int i = 0; i < 8; i++) {
    unsigned char *rb = (unsigned char *)ref[2].data + i * esz, *gb = (unsigned char *)got[2].data + i * esz;
    bool zero = true;
    for (size_t k = 0; k < esz; k++) zero = zero && !rb[k];
    if (zero) rb[0] = gb[0] = 3;
  }
  void *bufs[3] = {ref[0].data, ref[1].data, ref[2].data};
  size_t sizes[3] = {ref[0].size_B, ref[1].size_B, ref[2].size_B};
  CHECK_OK(cc_interp_run(sink, bufs, sizes, 3, NULL, 0));
  ((void (*)(void *, void *, void *, int))fn)(got[0].data, got[1].data, got[2].data, 0);
  CHECK(memcmp(ref[0].data, got[0].data, ref[0].size_B) == 0);
  /* one zero divisor (every numerator kind: the fill's value, 0, 1): a fault, never a normal return */
  for (int num = 0; num < 3; num++) {
    memset((unsigned char *)got[2].data + 5 * esz, 0, esz);
    if (num < 2) memset((unsigned char *)got[1].data + 5 * esz, 0, esz);
    if (num == 1) ((unsigned char *)got[1].data)[5 * esz] = 1;
    int ws = run_child(fn, got[0].data, got[1].data, got[2].data);
    bool returned = WIFEXITED(ws) && WEXITSTATUS(ws) == 0; /* a sanitizer may turn the signal into an exit code */
    if (returned) fprintf(stderr, "%s %s by zero: the kernel returned\n", dt, op);
    CHECK(!returned);
  }
done:
  if (cp) cpu_program_destroy(cp);
  if (ref) cc_kbufs_free(ref, nref);
  if (got) cc_kbufs_free(got, ngot);
  cc_program_free(p);
  uop_ctx_destroy(ctx);
}

int main(void) {
  char dir[] = "/tmp/hcq-llvm-div-zero-test-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  test_ir();
  if (tu_have("clang-19")) {
    const char *dts[] = {"int32", "uint32", "int64", "uint64", "int8", "uint16"};
    for (size_t i = 0; i < sizeof dts / sizeof *dts; i++) {
      test_run(dts[i], "//");
      test_run(dts[i], "%");
    }
  } else {
    printf("*** SKIPPED: llvm-cpu runs of division by zero: clang-19 not found (Debian package clang-19) ***\n");
  }
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
  return testing_summary("llvm_div_zero");
}
