/* cpu_device: hand-written C kernels (compiled with the toolchain driver, loaded by our ELF loader) run through hcq
 * queues: symbolic launch sizes and values patched per submit, copies, timestamps, the word decoder's rejections,
 * a WAIT that times out (the device keeps running), and a kernel that faults (reported, process still usable).
 * Every result is compared with a brute-force loop in this file. */
#include <stdlib.h>
#include <string.h>

#include "compiler/toolchain.h"
#include "cpu/cpu_device.h"
#include "cpu/cpu_words.h"
#include "hcq/args.h"
#include "hcq/queue.h"
#include "hcq/signal.h"
#include "base/testing.h"

/* out[i] = a[i] * 2 + k for i < n, threads stride by nt. k is negative in the test (checks sign extension). */
static const char *kernel_src =
    "void scale_add(float *restrict out, const float *restrict a, const int n, const int k, const int nt,\n"
    "               int core_id) {\n"
    "  for (int i = core_id; i < n; i += nt) out[i] = a[i] * 2.0f + (float)k;\n"
    "}\n"
    "void poke(int *restrict p, int core_id) { p[core_id * 1024] = 7; }\n"
    "void divide(int *restrict p, const int d, int core_id) { p[core_id] = 100 / d; }\n";

typedef struct fixture {
  cpu_device *dev;
  hcq_device *hd;
  cpu_device_program *scale_add, *poke, *divide;
} fixture;

static void test_exec_symbolic(fixture *f, uop_ctx *ctx) {
  enum { N = 1000 };
  hcq_mem out, in, argm;
  CHECK_OK(cpu_device_alloc(f->dev, N * sizeof(float), &out));
  CHECK_OK(cpu_device_alloc(f->dev, N * sizeof(float), &in));
  CHECK_OK(cpu_device_alloc(f->dev, 4096, &argm));
  float *a = in.host, *o = out.host;
  for (int i = 0; i < N; i++) a[i] = (float)(i % 17) - 3.0f;

  const uop *n = uop_var(ctx, "n", 0, N, uop_dt(UOP_INDEX));
  const uop *nt = uop_var(ctx, "nt", 1, 64, uop_dt(UOP_INDEX));
  hcq_args args;
  CHECK_OK(hcq_args_init(&args, argm.host, argm.va, argm.size_B, 0, 2, 3));
  hcq_queue *q = NULL;
  CHECK_OK(hcq_queue_create(cpu_device_hcq(f->dev), HCQ_QUEUE_COMPUTE, &q));
  hcq_val bufs[2] = {hcq_imm(out.va), hcq_imm(in.va)};
  hcq_val vals[3] = {hcq_sym(n), hcq_imm((uint64_t)(int64_t)-5), hcq_sym(nt)};
  CHECK_OK(hcq_args_bind(&args, q, NULL, bufs, vals));
  /* the timeline value this queue signals is a variable too, so one queue serves every submit */
  const uop *tl_wait = uop_var(ctx, "tl_wait", 0, 1ll << 32, uop_dt(UOP_INDEX));
  const uop *tl_sig = uop_var(ctx, "tl_sig", 0, 1ll << 32, uop_dt(UOP_INDEX));
  hcq_val g[3] = {hcq_sym(nt), hcq_imm(1), hcq_imm(1)}, l[3] = {hcq_imm(1), hcq_imm(1), hcq_imm(1)};
  CHECK_OK(hcq_queue_wait(q, hcq_imm(f->hd->timeline->va), hcq_sym(tl_wait)));
  CHECK_OK(hcq_queue_exec(q, hcq_imm(cpu_device_program_handle(f->scale_add)), &args, g, l));
  CHECK_OK(hcq_queue_signal(q, hcq_imm(f->hd->timeline->va), hcq_sym(tl_sig)));

  static const int64_t sizes[][2] = {{N, 1}, {777, 3}, {N, 5}, {1, 2}, {0, 1}};
  for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
    for (int i = 0; i < N; i++) o[i] = -1000.0f;
    uint64_t last = hcq_timeline_last(f->hd), next = hcq_timeline_next(f->hd);
    uop_var_val vv[] = {{"n", sizes[t][0]}, {"nt", sizes[t][1]}, {"tl_wait", (int64_t)last}, {"tl_sig", (int64_t)next}};
    CHECK_OK(hcq_queue_submit(q, f->hd, vv, 4));
    CHECK_OK(hcq_signal_wait(f->hd->timeline, next, 5000));
    int bad = 0;
    for (int i = 0; i < N; i++) {
      float want = i < sizes[t][0] ? a[i] * 2.0f - 5.0f : -1000.0f;
      bad += o[i] != want;
    }
    CHECK_EQ_INT(bad, 0);
  }
  CHECK_OK(cpu_device_take_error(f->dev));
  hcq_queue_destroy(q);
  cpu_device_free(f->dev, &out);
  cpu_device_free(f->dev, &in);
  cpu_device_free(f->dev, &argm);
}

static void test_copy_timestamp(fixture *f) {
  size_t size = (3u << 20) + 17;
  hcq_mem src, dst;
  CHECK_OK(cpu_device_alloc(f->dev, size, &src));
  CHECK_OK(cpu_device_alloc(f->dev, size, &dst));
  uint8_t *s = src.host, *d = dst.host;
  for (size_t i = 0; i < size; i++) s[i] = (uint8_t)(i * 131 + (i >> 9));
  hcq_signal *ts0 = NULL, *ts1 = NULL;
  CHECK_OK(hcq_signal_create(f->hd, "ts0", 0, &ts0));
  CHECK_OK(hcq_signal_create(f->hd, "ts1", 0, &ts1));
  hcq_queue *q = NULL;
  CHECK_OK(hcq_queue_create(cpu_device_hcq(f->dev), HCQ_QUEUE_COPY, &q));
  uint64_t before = hcq_now_ns();
  CHECK_OK(hcq_queue_wait(q, hcq_imm(f->hd->timeline->va), hcq_imm(hcq_timeline_last(f->hd))));
  CHECK_OK(hcq_queue_timestamp(q, hcq_imm(ts0->va)));
  CHECK_OK(hcq_queue_memory_barrier(q));
  CHECK_OK(hcq_queue_copy(q, hcq_imm(dst.va + 1), hcq_imm(src.va), hcq_imm(size - 1)));
  CHECK_OK(hcq_queue_timestamp(q, hcq_imm(ts1->va)));
  uint64_t v = hcq_timeline_next(f->hd);
  CHECK_OK(hcq_queue_signal(q, hcq_imm(f->hd->timeline->va), hcq_imm(v)));
  CHECK_OK(hcq_queue_submit(q, f->hd, NULL, 0));
  CHECK_OK(hcq_signal_wait(f->hd->timeline, v, 5000));
  uint64_t after = hcq_now_ns();
  CHECK(d[0] == 0);
  size_t bad = 0;
  for (size_t i = 1; i < size; i++) bad += d[i] != s[i - 1];
  CHECK_EQ_INT(bad, 0);
  uint64_t t0 = hcq_signal_timestamp_ns(ts0), t1 = hcq_signal_timestamp_ns(ts1);
  CHECK(before <= t0 && t0 <= t1 && t1 <= after);
  hcq_queue_destroy(q);
  hcq_signal_destroy(ts0);
  hcq_signal_destroy(ts1);
  cpu_device_free(f->dev, &src);
  cpu_device_free(f->dev, &dst);
}

/* A WAIT that never completes times out (recorded as HCQ_CODE_TIMEOUT); the commands after it still run. */
static void test_wait_timeout(fixture *f) {
  hcq_signal *never = NULL, *after = NULL;
  CHECK_OK(hcq_signal_create(f->hd, "never", 0, &never));
  CHECK_OK(hcq_signal_create(f->hd, "after", 0, &after));
  cpu_device_set_wait_timeout(f->dev, 50);
  hcq_queue *q = NULL;
  CHECK_OK(hcq_queue_create(cpu_device_hcq(f->dev), HCQ_QUEUE_COMPUTE, &q));
  CHECK_OK(hcq_queue_wait(q, hcq_imm(never->va), hcq_imm(1)));
  CHECK_OK(hcq_queue_signal(q, hcq_imm(after->va), hcq_imm(3)));
  uint64_t t0 = hcq_now_ns();
  CHECK_OK(hcq_queue_submit(q, f->hd, NULL, 0));
  CHECK_OK(hcq_signal_wait(after, 3, 5000));
  CHECK(hcq_now_ns() - t0 >= 45000000u);
  CHECK_ERR(cpu_device_take_error(f->dev), HCQ_CODE_TIMEOUT, "waited 50 ms");
  CHECK_ERR(cpu_device_signal_wait(f->dev, never, 1, 10), HCQ_CODE_TIMEOUT, "signal 'never'");
  CHECK_OK(cpu_device_signal_wait(f->dev, after, 3, 10));
  CHECK_OK(cpu_device_take_error(f->dev));
  cpu_device_set_wait_timeout(f->dev, 30000);
  hcq_queue_destroy(q);
  hcq_signal_destroy(never);
  hcq_signal_destroy(after);
}

/* A kernel that writes to an unmapped page and one that divides by zero: each is reported with its name; the
 * device then runs the next command normally. */
static void test_fault(fixture *f) {
  hcq_mem argm, ok;
  CHECK_OK(cpu_device_alloc(f->dev, 64, &argm));
  CHECK_OK(cpu_device_alloc(f->dev, 8192, &ok));
  hcq_signal *done = NULL;
  CHECK_OK(hcq_signal_create(f->hd, "done", 0, &done));
  uint64_t bad_addr = 64; /* page 0 is never mapped */
  memcpy(argm.host, &bad_addr, 8);
  hcq_args args;
  CHECK_OK(hcq_args_init(&args, argm.host, argm.va, argm.size_B, 0, 1, 0));
  hcq_queue *q = NULL;
  CHECK_OK(hcq_queue_create(cpu_device_hcq(f->dev), HCQ_QUEUE_COMPUTE, &q));
  hcq_val g[3] = {hcq_imm(2), hcq_imm(1), hcq_imm(1)}, l[3] = {hcq_imm(1), hcq_imm(1), hcq_imm(1)};
  CHECK_OK(hcq_queue_exec(q, hcq_imm(cpu_device_program_handle(f->poke)), &args, g, l));
  CHECK_OK(hcq_queue_signal(q, hcq_imm(done->va), hcq_imm(1)));
  CHECK_OK(hcq_queue_submit(q, f->hd, NULL, 0));
  CHECK_OK(hcq_signal_wait(done, 1, 5000));
  hcq_status st = cpu_device_take_error(f->dev);
  CHECK_ERR(st, HCQ_CODE_INVALID, "kernel poke faulted (SIGSEGV) at 0x");
  hcq_queue_destroy(q);

  /* the same kernel with a good buffer works afterwards */
  memcpy(argm.host, &ok.va, 8);
  CHECK_OK(hcq_queue_create(cpu_device_hcq(f->dev), HCQ_QUEUE_COMPUTE, &q));
  CHECK_OK(hcq_queue_exec(q, hcq_imm(cpu_device_program_handle(f->poke)), &args, g, l));
  CHECK_OK(hcq_queue_signal(q, hcq_imm(done->va), hcq_imm(2)));
  CHECK_OK(hcq_queue_submit(q, f->hd, NULL, 0));
  CHECK_OK(hcq_signal_wait(done, 2, 5000));
  CHECK_OK(cpu_device_take_error(f->dev));
  CHECK_EQ_INT(((int *)ok.host)[0], 7);
  CHECK_EQ_INT(((int *)ok.host)[1024], 7); /* core_id 1 */
  hcq_queue_destroy(q);

#if defined(__x86_64__)
  /* integer division by zero traps on x86_64 (aarch64 returns 0) */
  hcq_args a2;
  uint32_t zero = 0;
  memcpy(argm.host, &ok.va, 8);
  memcpy((uint8_t *)argm.host + 8, &zero, 4);
  CHECK_OK(hcq_args_init(&a2, argm.host, argm.va, argm.size_B, 0, 1, 1));
  CHECK_OK(hcq_queue_create(cpu_device_hcq(f->dev), HCQ_QUEUE_COMPUTE, &q));
  hcq_val g1[3] = {hcq_imm(1), hcq_imm(1), hcq_imm(1)};
  CHECK_OK(hcq_queue_exec(q, hcq_imm(cpu_device_program_handle(f->divide)), &a2, g1, l));
  CHECK_OK(hcq_queue_signal(q, hcq_imm(done->va), hcq_imm(3)));
  CHECK_OK(hcq_queue_submit(q, f->hd, NULL, 0));
  CHECK_OK(hcq_signal_wait(done, 3, 5000));
  CHECK_ERR(cpu_device_take_error(f->dev), HCQ_CODE_INVALID, "kernel divide faulted (SIGFPE)");
  hcq_queue_destroy(q);
#endif
  hcq_signal_destroy(done);
  cpu_device_free(f->dev, &argm);
  cpu_device_free(f->dev, &ok);
}

/* The decoder rejects malformed lists whole. */
static void test_rejects(fixture *f) {
  uint64_t before = cpu_device_commands(f->dev);
  hcq_signal *s = NULL;
  CHECK_OK(hcq_signal_create(f->hd, "rej", 0, &s));
  uint32_t sig_ok[5] = {CPU_HDR(CPU_OP_SIGNAL, 5), (uint32_t)s->va, (uint32_t)(s->va >> 32), 9, 0};
  uint32_t words[16];
  memcpy(words, sig_ok, sizeof sig_ok);
  words[5] = CPU_HDR(CPU_OP_SIGNAL, 4); /* wrong length */
  CHECK_ERR(f->hd->ops->submit(f->hd, HCQ_QUEUE_COMPUTE, words, 6), HCQ_CODE_INVALID, "bad command header");
  words[5] = CPU_HDR(CPU_OP_SIGNAL, 5); /* truncated */
  CHECK_ERR(f->hd->ops->submit(f->hd, HCQ_QUEUE_COMPUTE, words, 8), HCQ_CODE_INVALID, "bad command header");
  words[5] = 99; /* unknown opcode */
  CHECK_ERR(f->hd->ops->submit(f->hd, HCQ_QUEUE_COMPUTE, words, 6), HCQ_CODE_INVALID, "bad command header");
  uint32_t exec[13] = {CPU_HDR(CPU_OP_EXEC, 13), 0x1234, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1};
  CHECK_ERR(f->hd->ops->submit(f->hd, HCQ_QUEUE_COMPUTE, exec, 13), HCQ_CODE_INVALID, "unknown program");
  uint64_t h = cpu_device_program_handle(f->poke);
  exec[1] = (uint32_t)h, exec[2] = (uint32_t)(h >> 32), exec[5] = 1; /* one buffer, no args memory */
  CHECK_ERR(f->hd->ops->submit(f->hd, HCQ_QUEUE_COMPUTE, exec, 13), HCQ_CODE_INVALID, "args missing");
  uint32_t misaligned[5] = {CPU_HDR(CPU_OP_WAIT, 5), (uint32_t)s->va + 4, (uint32_t)(s->va >> 32), 1, 0};
  CHECK_ERR(f->hd->ops->submit(f->hd, HCQ_QUEUE_COMPUTE, misaligned, 5), HCQ_CODE_INVALID, "signal address");
  CHECK_EQ_INT(cpu_device_commands(f->dev), before);
  CHECK_EQ_INT(hcq_signal_value(s), 0); /* the valid signal before the bad header did not run */
  CHECK_OK(f->hd->ops->submit(f->hd, HCQ_QUEUE_COMPUTE, sig_ok, 5));
  CHECK_OK(hcq_signal_wait(s, 9, 5000));
  hcq_signal_destroy(s);
}

/* The CPU encoder writes the words of cpu/cpu_words.h (hand-encoded here from that table). */
static void test_encoding(fixture *f) {
  hcq_queue *q;
  CHECK_OK(hcq_queue_create(f->hd, HCQ_QUEUE_COMPUTE, &q));
  uint8_t argmem[64] = {0};
  hcq_args args;
  CHECK_OK(hcq_args_init(&args, argmem, 0x1122334455667788ULL, sizeof(argmem), 0, 2, 1));
  hcq_val g[3] = {hcq_imm(4), hcq_imm(5), hcq_imm(6)}, l[3] = {hcq_imm(1), hcq_imm(2), hcq_imm(3)};
  CHECK_OK(hcq_queue_wait(q, hcq_imm(0x100000008ULL), hcq_imm(9)));
  CHECK_OK(hcq_queue_memory_barrier(q));
  CHECK_OK(hcq_queue_exec(q, hcq_imm(0xdeadbeefcafeULL), &args, g, l));
  CHECK_OK(hcq_queue_copy(q, hcq_imm(0x10), hcq_imm(0x20), hcq_imm(0x300000000ULL)));
  CHECK_OK(hcq_queue_timestamp(q, hcq_imm(0x40)));
  CHECK_OK(hcq_queue_signal(q, hcq_imm(0x50), hcq_imm(0x1234567890ULL)));
  static const uint32_t want[] = {
      0x00050004, 0x00000008, 0x00000001, 9, 0,                                             /* wait */
      0x00010006,                                                                           /* barrier */
      0x000d0001, 0xbeefcafe, 0x0000dead, 0x55667788, 0x11223344, 2, 1, 4, 5, 6, 1, 2, 3, /* exec */
      0x00070002, 0x10, 0, 0x20, 0, 0, 3,                                                   /* copy */
      0x00030005, 0x40, 0,                                                                  /* timestamp */
      0x00050003, 0x50, 0, 0x34567890, 0x12,                                                /* signal */
  };
  CHECK_EQ_INT(hcq_queue_word_count(q), sizeof(want) / 4);
  if (hcq_queue_word_count(q) == sizeof(want) / 4) CHECK(memcmp(hcq_queue_words(q), want, sizeof(want)) == 0);
  /* A queue belongs to its device. */
  hcq_device other = {.ops = f->hd->ops, .name = "OTHER:0"};
  CHECK_ERR(hcq_queue_submit(q, &other, NULL, 0), HCQ_CODE_INVALID, "belongs to its device");
  hcq_queue_destroy(q);
}

int main(void) {
  char dir[] = "/tmp/hcq-cpu-device-test-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  if (system("command -v cc >/dev/null 2>&1") != 0) TEST_SKIP("no C compiler (install gcc)");
  uint8_t *obj = NULL;
  size_t obj_B = 0;
  CHECK_OK(cc_toolchain_compile_c(kernel_src, &obj, &obj_B));
  if (!obj) return testing_summary("cpu_device_test");

  setenv("HCQ_CPU_THREADS", "3", 1);
  for (int threads = 0; threads <= 4; threads += 2) { /* 0: from $HCQ_CPU_THREADS */
    fixture f = {0};
    CHECK_OK(cpu_device_create(threads, &f.dev));
    if (!f.dev) break;
    CHECK_EQ_INT(cpu_device_threads(f.dev), threads ? threads : 3);
    f.hd = cpu_device_hcq(f.dev);
    CHECK_OK(cpu_device_load(f.dev, obj, obj_B, "scale_add", &f.scale_add));
    CHECK_OK(cpu_device_load(f.dev, obj, obj_B, "poke", &f.poke));
    CHECK_OK(cpu_device_load(f.dev, obj, obj_B, "divide", &f.divide));
    cpu_device_program *none = NULL;
    CHECK_ERR(cpu_device_load(f.dev, obj, obj_B, "missing_kernel", &none), HCQ_CODE_NOT_FOUND, "missing_kernel");
    CHECK_ERR(cpu_device_load(f.dev, obj, 10, "poke", &none), HCQ_CODE_INVALID, "poke");
    uop_ctx *ctx = NULL;
    CHECK_OK(uop_ctx_create(&ctx));
    test_exec_symbolic(&f, ctx);
    test_copy_timestamp(&f);
    test_rejects(&f);
    test_encoding(&f);
    if (threads == 2) {
      test_wait_timeout(&f);
      test_fault(&f);
    }
    CHECK_OK(hcq_device_synchronize(f.hd, 5000));
    uop_ctx_destroy(ctx);
    cpu_device_destroy(f.dev);
  }
  setenv("HCQ_CPU_THREADS", "zero", 1);
  cpu_device *bad = NULL;
  CHECK_ERR(cpu_device_create(0, &bad), HCQ_CODE_INVALID, "HCQ_CPU_THREADS");
  unsetenv("HCQ_CPU_THREADS");
  free(obj);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return testing_summary("cpu_device_test");
}
