/* cpu_device containment: kernels that misbehave must end in a clean, named error, never in silent corruption
 * of a neighbour, a crash of the fault handler, or a use-after-free.
 *  - out-of-bounds writes and reads, just past either end of a buffer and far (up to the int32 limit on 64-bit
 *    hosts), with neighbouring buffers allocated before and after: a fault naming the kernel, the address and the
 *    buffer argument; every neighbour keeps its bytes;
 *  - a kernel that overwrites its own frame and return address, one that moves its stack pointer into unmapped
 *    memory (the handler needs its own stack), a breakpoint trap (SIGTRAP);
 *  - a buffer freed while a kernel still uses it is kept until the kernel is done;
 *  - a kernel that never ends: the wait times out, the device is lost and keeps its memory (the kernel is seen
 *    still writing), later calls fail naming the loss, destroy returns at once; destroyed without a wait, the
 *    device waits its wait timeout and is then left lost, its memory kept;
 *  - a fault while the dynamic loader's lazy-binding resolver is unusable is still reported.
 * Each case runs in a forked child, so one that kills its process (as before these fixes) fails that case only. */
#include <elf.h>
#include <inttypes.h>
#include <link.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compiler/toolchain.h"
#include "cpu/cpu_device.h"
#include "cpu/cpu_mem.h"
#include "hcq/args.h"
#include "hcq/queue.h"
#include "hcq/signal.h"
#include "base/testing.h"

static const char *kernel_src =
    "void wr(int *restrict p, const int off, int core_id) { (void)core_id; p[off] = 0x5a5a5a5a; }\n"
    "void rd(int *restrict out, const int *restrict p, const int off, int core_id) {\n"
    "  (void)core_id; out[0] = ((const volatile int *)p)[off]; }\n"
    /* overwrite the saved frame pointer and return address (and a little of the caller) with 0x41; the call
     * makes it a non-leaf function, so the return address is on the stack on every architecture (armhf too) */
    "__attribute__((noinline)) static void touch(int *p, int i) { ((volatile int *)p)[i] = 1; }\n"
    "__attribute__((noinline)) void smash(int *restrict p, int core_id) {\n"
    "  volatile char *f = (volatile char *)__builtin_frame_address(0);\n"
    "  for (int i = -32; i < 24; i++) f[i] = 0x41;\n"
    "  touch(p, core_id); touch(p, core_id); }\n" /* not a tail call */
    /* the stack pointer inside the lower guard of buffer p, then a push */
    "void stackbomb(int *restrict p, int core_id) {\n"
    "  char *sp = (char *)p - 65536; (void)core_id;\n"
    "#if defined(__x86_64__)\n"
    "  __asm__ volatile(\"mov %0, %%rsp\\n\\tpush %%rax\" :: \"r\"(sp) : \"memory\");\n"
    "#elif defined(__aarch64__)\n"
    "  __asm__ volatile(\"mov sp, %0\\n\\tstr x0, [sp, #-16]!\" :: \"r\"(sp) : \"memory\");\n"
    "#elif defined(__arm__)\n"
    "  __asm__ volatile(\"mov sp, %0\\n\\tpush {r0}\" :: \"r\"(sp) : \"memory\");\n"
    "#endif\n"
    "  p[0] = 1; }\n"
    "void trap(int *restrict p, int core_id) {\n"
    "  p[core_id] = 1;\n"
    "#if defined(__x86_64__)\n"
    "  __asm__ volatile(\"int3\");\n"
    "#elif defined(__aarch64__)\n"
    "  __asm__ volatile(\"brk #0\");\n"
    "#elif defined(__arm__)\n"
    "  __asm__ volatile(\"bkpt #0\");\n"
    "#endif\n"
    "  p[core_id] = 2; }\n"
    /* waits for flag[0], then writes out[0..n) */
    "void gated(int *restrict out, const int *restrict flag, const int n, int core_id) {\n"
    "  (void)core_id; while (!((const volatile int *)flag)[0]) {}\n"
    "  for (int i = 0; i < n; i++) out[i] = i; }\n"
    "void forever(int *restrict p, int core_id) { for (;;) ((volatile int *)p)[core_id]++; }\n";

static uint8_t *obj;
static size_t obj_B;

typedef struct env {
  cpu_device *dev;
  hcq_device *hd;
  hcq_mem argm;
} env;

static void env_open(env *e) {
  memset(e, 0, sizeof *e);
  CHECK_OK(cpu_device_create(2, &e->dev));
  e->hd = cpu_device_hcq(e->dev);
  CHECK_OK(cpu_device_alloc(e->dev, 256, &e->argm));
}

static void env_close(env *e) {
  cpu_device_free(e->dev, &e->argm);
  cpu_device_destroy(e->dev);
}

static cpu_device_program *load(env *e, const char *name) {
  cpu_device_program *p = NULL;
  CHECK_OK(cpu_device_load(e->dev, obj, obj_B, name, &p));
  return p;
}

/* Submit one EXEC of prog over `threads` core_ids with buffers bufs[0..nb) and int values vals[0..nv); the
 * caller waits. Returns the timeline value that completes it. */
static uint64_t submit(env *e, cpu_device_program *prog, int threads, const uint64_t *bufs, uint32_t nb,
                       const int32_t *vals, uint32_t nv) {
  uint8_t *a = e->argm.host;
  for (uint32_t i = 0; i < nb; i++) memcpy(a + 8 * i, &bufs[i], 8);
  for (uint32_t i = 0; i < nv; i++) memcpy(a + 8 * nb + 4 * i, &vals[i], 4);
  hcq_args args;
  CHECK_OK(hcq_args_init(&args, e->argm.host, e->argm.va, e->argm.size_B, 0, nb, nv));
  hcq_queue *q = NULL;
  CHECK_OK(hcq_queue_create(e->hd, HCQ_QUEUE_COMPUTE, &q));
  hcq_val g[3] = {hcq_imm((uint64_t)threads), hcq_imm(1), hcq_imm(1)}, l[3] = {hcq_imm(1), hcq_imm(1), hcq_imm(1)};
  uint64_t next = hcq_timeline_next(e->hd);
  CHECK_OK(hcq_queue_exec(q, hcq_imm(cpu_device_program_handle(prog)), &args, g, l));
  CHECK_OK(hcq_queue_signal(q, hcq_imm(e->hd->timeline->va), hcq_imm(next)));
  CHECK_OK(hcq_queue_submit(q, e->hd, NULL, 0));
  hcq_queue_destroy(q);
  return next;
}

/* Run to completion; the device's recorded error (or OK). */
static hcq_status run(env *e, cpu_device_program *prog, const uint64_t *bufs, uint32_t nb, const int32_t *vals,
                      uint32_t nv) {
  uint64_t v = submit(e, prog, 1, bufs, nb, vals, nv);
  CHECK_OK(cpu_device_signal_wait(e->dev, e->hd->timeline, v, 10000));
  return cpu_device_take_error(e->dev);
}

static void fill(hcq_mem *m, uint8_t byte) { memset(m->host, byte, m->size_B); }

static bool all_bytes(const hcq_mem *m, uint8_t byte) {
  const uint8_t *b = m->host;
  for (size_t i = 0; i < m->size_B; i++)
    if (b[i] != byte) return false;
  return true;
}

/* Writes and reads at element offsets around buffer B of n ints, between neighbours A (allocated before) and C
 * (after): each must fault naming the kernel and argument 0, and leave A, B and C as they were. */
static void case_oob(void) {
  env e;
  env_open(&e);
  cpu_device_program *wr = load(&e, "wr"), *rd = load(&e, "rd");
  static const int ns[] = {1, 4, 1000, 1024, 4096};
  for (size_t t = 0; t < sizeof ns / sizeof ns[0]; t++) {
    int n = ns[t];
    hcq_mem A, B, C, out;
    CHECK_OK(cpu_device_alloc(e.dev, (size_t)n * 4, &A));
    CHECK_OK(cpu_device_alloc(e.dev, (size_t)n * 4, &B));
    CHECK_OK(cpu_device_alloc(e.dev, (size_t)n * 4, &C));
    CHECK_OK(cpu_device_alloc(e.dev, 64, &out));
    fill(&A, 0xa1), fill(&B, 0xb2), fill(&C, 0xc3);
    /* in bounds first: the kernel works */
    int32_t off = n - 1;
    CHECK_OK(run(&e, wr, &B.va, 1, &off, 1));
    CHECK_EQ_INT(((int *)B.host)[n - 1], 0x5a5a5a5a);
    fill(&B, 0xb2);
    int64_t far = (int64_t)(cpu_buffer_guard_B() / 4) - 4096; /* elements: still inside the guard */
    int64_t offs[] = {n, n + 1, n + 3, n + 1000, n + 262144, -1, -2, -1024, -262144, n + far, -far,
                      INT32_MAX, INT32_MIN};
    for (size_t k = 0; k < sizeof offs / sizeof offs[0]; k++) {
      int64_t o = offs[k];
      if (o < INT32_MIN || o > INT32_MAX) continue;
      /* the buffer ends at most 15 bytes before its guard (16-byte alignment): those few bytes are its own */
      int64_t slack_B = (16 - (int64_t)n * 4 % 16) % 16;
      if (o >= n && (o - n) * 4 < slack_B) continue;
      /* likewise the rest of the first page before the start */
      if (o < 0 && -o * 4 <= (int64_t)((uintptr_t)B.host % cpu_page_size())) continue;
      int64_t past_B = (o >= n ? o - n + 1 : -o) * 4; /* how far the access is from the buffer */
      volatile uint64_t guard_B = cpu_buffer_guard_B(); /* volatile: 32-bit compilers see it cannot be 2^34 */
      if (past_B > (int64_t)guard_B - 4096) {
        CHECK(guard_B < ((uint64_t)1 << 34)); /* a 32-bit index cannot reach past a 16 GiB guard */
        continue; /* smaller guards (HCQ_CPU_GUARD_B, 32-bit hosts) contain only what they cover */
      }
      int32_t v = (int32_t)o;
      hcq_status st = run(&e, wr, &B.va, 1, &v, 1);
      char want[96];
      CHECK_ERR(st, HCQ_CODE_INVALID, "kernel wr faulted (SIGSEGV) at 0x");
      st = run(&e, wr, &B.va, 1, &v, 1);
      CHECK_ERR(st, HCQ_CODE_INVALID, o >= n ? "bytes past the end of buffer" : "bytes before buffer");
      st = run(&e, wr, &B.va, 1, &v, 1);
      CHECK_ERR(st, HCQ_CODE_INVALID, "argument 0");
      uint64_t bufs[2] = {out.va, B.va};
      snprintf(want, sizeof want, "kernel rd faulted (SIGSEGV)");
      CHECK_ERR(run(&e, rd, bufs, 2, &v, 1), HCQ_CODE_INVALID, want);
      bool ok = all_bytes(&A, 0xa1) && all_bytes(&B, 0xb2) && all_bytes(&C, 0xc3);
      if (!ok) fprintf(stderr, "n=%d offset %" PRId64 ": a neighbour changed\n", n, o);
      CHECK(ok);
    }
    cpu_device_free(e.dev, &A);
    cpu_device_free(e.dev, &B);
    cpu_device_free(e.dev, &C);
    cpu_device_free(e.dev, &out);
  }
  env_close(&e);
}

/* Kernels that break their own stack, and a breakpoint: reported, and the device runs the next kernel. */
static void case_stack_trap(void) {
  env e;
  env_open(&e);
  cpu_device_program *wr = load(&e, "wr"), *smash = load(&e, "smash"), *bomb = load(&e, "stackbomb"),
                     *trap = load(&e, "trap");
  hcq_mem B;
  CHECK_OK(cpu_device_alloc(e.dev, 4096, &B));
  for (int round = 0; round < 2; round++) {
    hcq_status st = run(&e, smash, &B.va, 1, NULL, 0);
    CHECK(st && strstr(hcq_status_message(st), "kernel smash faulted ("));
    if (st) fprintf(stderr, "  (expected) %s\n", hcq_status_message(st));
    hcq_status_free(st);
    CHECK_ERR(run(&e, bomb, &B.va, 1, NULL, 0), HCQ_CODE_INVALID, "kernel stackbomb faulted (SIGSEGV)");
    CHECK_ERR(run(&e, trap, &B.va, 1, NULL, 0), HCQ_CODE_INVALID, "kernel trap faulted (SIGTRAP)");
    CHECK_EQ_INT(((int *)B.host)[0], 1); /* the trap stopped the kernel before its second store */
    int32_t off = 5;
    CHECK_OK(run(&e, wr, &B.va, 1, &off, 1));
    CHECK_EQ_INT(((int *)B.host)[5], 0x5a5a5a5a);
  }
  /* every core of a multi-core launch faults on its own stack */
  uint64_t v = submit(&e, bomb, 4, &B.va, 1, NULL, 0);
  CHECK_OK(cpu_device_signal_wait(e.dev, e.hd->timeline, v, 10000));
  CHECK_ERR(cpu_device_take_error(e.dev), HCQ_CODE_INVALID, "kernel stackbomb faulted");
  cpu_device_free(e.dev, &B);
  env_close(&e);
}

/* Freed while a kernel uses it: kept until the kernel is done, then released. */
static void case_deferred_free(void) {
  env e;
  env_open(&e);
  cpu_device_program *gated = load(&e, "gated");
  hcq_mem out, flag;
  enum { N = 4096 };
  CHECK_OK(cpu_device_alloc(e.dev, N * 4, &out));
  CHECK_OK(cpu_device_alloc(e.dev, 64, &flag));
  void *out_ptr = out.host;
  uint64_t bufs[2] = {out.va, flag.va};
  int32_t n = N;
  uint64_t v = submit(&e, gated, 1, bufs, 2, &n, 1);
  cpu_device_free(e.dev, &out); /* the kernel is spinning on the flag and will then write all of out */
  CHECK(cpu_buffer_find(out_ptr) != NULL);
  __atomic_store_n((int *)flag.host, 1, __ATOMIC_RELEASE);
  CHECK_OK(cpu_device_signal_wait(e.dev, e.hd->timeline, v, 10000));
  CHECK_OK(cpu_device_take_error(e.dev));
  cpu_device_free(e.dev, &flag); /* idle now: released at once, and the deferred one with it */
  CHECK(cpu_buffer_find(out_ptr) == NULL);
  env_close(&e);
}

/* The fault path must not need the dynamic loader (a kernel may have overwritten its data): with the program's
 * lazy-binding resolver slot (GOT[2] of DT_PLTGOT, the same on x86_64, aarch64 and arm) zeroed, a kernel fault
 * is still reported. Before the fix, the handler's first siglongjmp went through the resolver and crashed. */
static int find_pltgot(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
    const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    bool now = false;
    uintptr_t got = 0;
    for (; d->d_tag != DT_NULL; d++) {
      /* glibc relocates these entries in place where the section is writable (not on every arch) */
      if (d->d_tag == DT_PLTGOT) got = d->d_un.d_ptr < info->dlpi_addr ? info->dlpi_addr + d->d_un.d_ptr : d->d_un.d_ptr;
      if (d->d_tag == DT_BIND_NOW || (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_BIND_NOW)) ||
          (d->d_tag == DT_FLAGS_1 && (d->d_un.d_val & DF_1_NOW)))
        now = true;
    }
    if (!now) *(uintptr_t **)data = (uintptr_t *)got;
  }
  return 1; /* the first object is the program */
}

static void case_no_lazy_binding(void) {
  uintptr_t *got = NULL;
  dl_iterate_phdr(find_pltgot, &got);
  const char *bind_now = getenv("LD_BIND_NOW");
  if (!got || (bind_now && *bind_now)) {
    printf("NOTE: this program binds at load time: the lazy-binding case is not exercised\n");
    return;
  }
  env e;
  env_open(&e);
  cpu_device_program *wr = load(&e, "wr");
  hcq_mem B;
  CHECK_OK(cpu_device_alloc(e.dev, 4096, &B));
  int32_t off = 3, bad = -300000;
  CHECK_OK(run(&e, wr, &B.va, 1, &off, 1)); /* the normal path, resolved */
  hcq_status st = run(&e, wr, &B.va, 1, &off, 1);
  struct timespec idle = {0, 20000000}; /* let every pool thread go to sleep once (futex) */
  nanosleep(&idle, NULL);
  uintptr_t saved = got[2];
  /* GOT[0..2] may sit in the RELRO page (read-only after start-up): open it for the test */
  void *page = (void *)((uintptr_t)&got[2] & ~(uintptr_t)(cpu_page_size() - 1));
  CHECK(mprotect(page, 2 * cpu_page_size(), PROT_READ | PROT_WRITE) == 0);
  got[2] = 0; /* any lazy binding from here on jumps to 0 */
  uint64_t v = submit(&e, wr, 1, &B.va, 1, &bad, 1);
  hcq_status wait = cpu_device_signal_wait(e.dev, e.hd->timeline, v, 10000);
  hcq_status fault = cpu_device_take_error(e.dev);
  got[2] = saved;
  CHECK_OK(st);
  CHECK_OK(wait);
  CHECK_ERR(fault, HCQ_CODE_INVALID, "kernel wr faulted (SIGSEGV)");
  cpu_device_free(e.dev, &B);
  env_close(&e);
}

static uint64_t now_ms(void) { return hcq_now_ns() / 1000000u; }

/* A kernel that never returns. */
static void case_forever(void) {
  env e;
  env_open(&e);
  cpu_device_program *fv = load(&e, "forever"), *wr = load(&e, "wr");
  hcq_mem B;
  CHECK_OK(cpu_device_alloc(e.dev, 4096, &B));
  volatile int *counter = B.host;
  uint64_t v = submit(&e, fv, 1, &B.va, 1, NULL, 0);
  uint64_t t0 = now_ms();
  CHECK_ERR(cpu_device_signal_wait(e.dev, e.hd->timeline, v, 200), HCQ_CODE_UNSUPPORTED,
            "device CPU:0 is lost: kernel forever still running after 200 ms");
  CHECK(cpu_device_is_lost(e.dev));
  cpu_device_free(e.dev, &B); /* kept: the kernel still writes there */
  cpu_device_program_destroy(fv);
  int before = counter[0];
  struct timespec ts = {0, 20000000};
  nanosleep(&ts, NULL);
  CHECK(counter[0] != before);
  hcq_mem more;
  CHECK_ERR(cpu_device_alloc(e.dev, 64, &more), HCQ_CODE_UNSUPPORTED, "is lost");
  int32_t off = 0;
  uint64_t bufs[1] = {e.argm.va};
  uint8_t *a = e.argm.host;
  memcpy(a, bufs, 8), memcpy(a + 8, &off, 4);
  hcq_args args;
  CHECK_OK(hcq_args_init(&args, e.argm.host, e.argm.va, e.argm.size_B, 0, 1, 1));
  hcq_queue *q = NULL;
  CHECK_OK(hcq_queue_create(e.hd, HCQ_QUEUE_COMPUTE, &q));
  hcq_val g[3] = {hcq_imm(1), hcq_imm(1), hcq_imm(1)};
  CHECK_OK(hcq_queue_exec(q, hcq_imm(cpu_device_program_handle(wr)), &args, g, g));
  CHECK_ERR(hcq_queue_submit(q, e.hd, NULL, 0), HCQ_CODE_UNSUPPORTED, "the process must exit");
  hcq_queue_destroy(q);
  env_close(&e); /* must not join the spinning thread */
  CHECK(now_ms() - t0 < 3000);
  CHECK(counter[0] != before); /* still mapped */
}

/* Destroyed while a kernel never ends (nobody waited for it): destroy waits the device's wait timeout, then leaves
 * the device lost instead of joining the thread or freeing what it writes. */
static void case_destroy_running(void) {
  env e;
  env_open(&e);
  cpu_device_set_wait_timeout(e.dev, 200);
  cpu_device_program *fv = load(&e, "forever");
  hcq_mem B;
  CHECK_OK(cpu_device_alloc(e.dev, 4096, &B));
  volatile int *counter = B.host;
  submit(&e, fv, 1, &B.va, 1, NULL, 0);
  struct timespec ts = {0, 20000000};
  nanosleep(&ts, NULL);
  cpu_device_free(e.dev, &B); /* queued work: deferred */
  uint64_t t0 = now_ms();
  env_close(&e);
  uint64_t took = now_ms() - t0;
  CHECK(took >= 150 && took < 3000);
  int before = counter[0];
  nanosleep(&ts, NULL);
  CHECK(counter[0] != before);
}

/* Run fn in a child; a child killed by a signal (a fault the handler did not contain) is a failure. */
static void in_child(const char *name, void (*fn)(void)) {
  fflush(stdout), fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    testing_failures = 0;
    fn();
    int rc = testing_summary(name);
    fflush(stdout), fflush(stderr);
    _exit(rc); /* _exit: the lost device's thread is still spinning */
  }
  int status = 0;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
  bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!ok) {
    if (WIFSIGNALED(status)) fprintf(stderr, "case %s: killed by signal %d (%s)\n", name, WTERMSIG(status), strsignal(WTERMSIG(status)));
    else fprintf(stderr, "case %s: failed (exit %d)\n", name, WEXITSTATUS(status));
  }
  CHECK(ok);
}

int main(void) {
  char dir[] = "/tmp/hcq-cpu-contain-test-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  if (system("command -v cc >/dev/null 2>&1") != 0) TEST_SKIP("no C compiler (install gcc)");
  CHECK_OK(cc_toolchain_compile_c(kernel_src, &obj, &obj_B));
  if (obj) {
    in_child("oob", case_oob);
    in_child("stack_trap", case_stack_trap);
    in_child("deferred_free", case_deferred_free);
    in_child("forever", case_forever);
    in_child("destroy_running", case_destroy_running);
    in_child("no_lazy_binding", case_no_lazy_binding);
  }
  free(obj);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return testing_summary("cpu_device_contain_test");
}
