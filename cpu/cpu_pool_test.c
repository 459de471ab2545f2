/* Worker pool: every core_id of an N-thread EXEC runs exactly once for many N; commands run in order; waits time
 * out instead of hanging; two threads submitting many small commands; an idle pool burns no CPU; a loaded
 * kernel is called through cpu_kernel_run with its arguments and core_id. */
#include "cpu/cpu_pool.h"

#include <pthread.h>
#include <time.h>

#include "cpu/cpu_kernel.h"
#include "base/testing.h"

typedef struct slots {
  int n;
  int hits[512];
} slots;

static void mark(void *ctx, int core_id) {
  slots *s = ctx;
  if (core_id >= 0 && core_id < 512) __atomic_add_fetch(&s->hits[core_id], 1, __ATOMIC_RELAXED);
}

static hcq_status submit1(cpu_pool *p, cpu_cmd c, uint64_t *seq) { return cpu_pool_submit(p, &c, 1, seq); }

static void test_exec_counts(cpu_pool *p) {
  static slots s;
  int ns[] = {1, 2, 3, 4, 7, 8, 16, 31, 64, 100, 257, 512};
  for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
    for (int rep = 0; rep < 5; rep++) {
      memset(&s, 0, sizeof s);
      uint64_t seq;
      CHECK_OK(submit1(p, (cpu_cmd){.kind = CPU_CMD_EXEC, .threads = ns[k], .fn = mark, .ctx = &s}, &seq));
      CHECK_OK(cpu_pool_wait(p, seq, 10000));
      int ok = 1;
      for (int i = 0; i < 512; i++) ok &= __atomic_load_n(&s.hits[i], __ATOMIC_RELAXED) == (i < ns[k] ? 1 : 0);
      CHECK(ok);
    }
  }
}

/* Ordering: command i appends i to a log; with multi-threaded EXECs in between, each must see the previous. */
typedef struct order_log {
  int len;
  int items[256];
  int violations;
} order_log;
typedef struct order_item {
  order_log *log;
  int index;
  int done;
} order_item;

static void ordered(void *ctx, int core_id) {
  order_item *it = ctx;
  if (core_id == 0) {
    if (__atomic_load_n(&it->log->len, __ATOMIC_ACQUIRE) != it->index) it->log->violations++;
    it->log->items[it->index] = it->index;
  }
  __atomic_add_fetch(&it->done, 1, __ATOMIC_ACQ_REL);
}

static void bump_len(void *ctx, int core_id) {
  order_item *it = ctx;
  (void)core_id;
  if (__atomic_load_n(&it->done, __ATOMIC_ACQUIRE) != 1 + (it->index % 4)) it->log->violations++;
  __atomic_add_fetch(&it->log->len, 1, __ATOMIC_ACQ_REL);
}

static void test_order(cpu_pool *p) {
  static order_log log;
  static order_item items[200];
  memset(&log, 0, sizeof log);
  cpu_cmd cmds[400];
  for (int i = 0; i < 200; i++) {
    items[i] = (order_item){.log = &log, .index = i};
    cmds[2 * i] = (cpu_cmd){.kind = CPU_CMD_EXEC, .threads = 1 + i % 4, .fn = ordered, .ctx = &items[i]};
    cmds[2 * i + 1] = (cpu_cmd){.kind = CPU_CMD_EXEC, .threads = 1, .fn = bump_len, .ctx = &items[i]};
  }
  uint64_t seq;
  CHECK_OK(cpu_pool_submit(p, cmds, 400, &seq));
  CHECK_OK(cpu_pool_wait(p, seq, 10000));
  CHECK_EQ_INT(log.len, 200);
  CHECK_EQ_INT(log.violations, 0);
  /* signals and timestamps in the queue */
  static cpu_signal sig, ts;
  memset(&sig, 0, sizeof sig);
  cpu_cmd c3[3] = {{.kind = CPU_CMD_TIMESTAMP, .addr = &ts.value},
                   {.kind = CPU_CMD_SIGNAL, .addr = &sig.value, .value = 42},
                   {.kind = CPU_CMD_WAIT, .addr = &sig.value, .value = 42, .timeout_ms = 1000}};
  uint64_t before = cpu_now_ns();
  CHECK_OK(cpu_pool_submit(p, c3, 3, &seq));
  CHECK_OK(cpu_signal_wait(&sig.value, 42, 10000));
  CHECK_OK(cpu_pool_wait(p, seq, 10000));
  CHECK(ts.value >= before && ts.value <= cpu_now_ns());
  CHECK_OK(cpu_pool_take_error(p));
}

static void test_timeouts(cpu_pool *p) {
  static cpu_signal never;
  uint64_t t0 = cpu_now_ns();
  CHECK_ERR(cpu_signal_wait(&never.value, 1, 30), HCQ_CODE_TIMEOUT, "waited 30 ms for 1");
  uint64_t dt = cpu_now_ns() - t0;
  CHECK(dt >= 30000000u && dt < 2000000000u);
  /* a WAIT command that never completes: the pool reports it and moves on */
  uint64_t seq;
  CHECK_OK(submit1(p, (cpu_cmd){.kind = CPU_CMD_WAIT, .addr = &never.value, .value = 5, .timeout_ms = 20}, &seq));
  CHECK_ERR(cpu_pool_wait(p, seq, 1), HCQ_CODE_TIMEOUT, "cpu pool: command");
  CHECK_OK(cpu_pool_wait(p, seq, 10000));
  CHECK_ERR(cpu_pool_take_error(p), HCQ_CODE_TIMEOUT, "WAIT command");
  CHECK_OK(cpu_pool_take_error(p));
  /* a signal written later by another thread wakes a sleeping waiter */
  static cpu_signal later;
  CHECK_OK(submit1(p, (cpu_cmd){.kind = CPU_CMD_WAIT, .addr = &never.value, .value = 1, .timeout_ms = 60}, NULL));
  CHECK_OK(submit1(p, (cpu_cmd){.kind = CPU_CMD_SIGNAL, .addr = &later.value, .value = 3}, NULL));
  CHECK_OK(cpu_signal_wait(&later.value, 3, 10000));
  hcq_status_free(cpu_pool_take_error(p));
}

typedef struct stress_arg {
  cpu_pool *pool;
  int sum[4];
  int errors;
} stress_arg;

static void add_one(void *ctx, int core_id) { __atomic_add_fetch((int *)ctx + core_id, 1, __ATOMIC_RELAXED); }

static void *stress_thread(void *arg) {
  stress_arg *a = arg;
  uint64_t seq = 0;
  for (int i = 0; i < 3000; i++) {
    hcq_status st = submit1(a->pool, (cpu_cmd){.kind = CPU_CMD_EXEC, .threads = 1 + i % 4, .fn = add_one, .ctx = a->sum}, &seq);
    if (st) {
      a->errors++;
      hcq_status_free(st);
    }
    if (i % 100 == 99) {
      st = cpu_pool_wait(a->pool, seq, 10000);
      if (st) a->errors++;
      hcq_status_free(st);
    }
  }
  hcq_status st = cpu_pool_wait(a->pool, seq, 10000);
  if (st) a->errors++;
  hcq_status_free(st);
  return NULL;
}

static void test_stress(cpu_pool *p) {
  static stress_arg a[2];
  pthread_t t[2];
  for (int i = 0; i < 2; i++) {
    memset(&a[i], 0, sizeof a[i]);
    a[i].pool = p;
    pthread_create(&t[i], NULL, stress_thread, &a[i]);
  }
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 2; i++) {
    CHECK_EQ_INT(a[i].errors, 0);
    /* i % 4 + 1 threads: core 0 every time, core 1 in 3/4, core 2 in 2/4, core 3 in 1/4 of 3000 */
    CHECK_EQ_INT(a[i].sum[0], 3000);
    CHECK_EQ_INT(a[i].sum[1], 2250);
    CHECK_EQ_INT(a[i].sum[2], 1500);
    CHECK_EQ_INT(a[i].sum[3], 750);
  }
}

static void test_idle(cpu_pool *p) {
  uint64_t seq;
  static slots s;
  CHECK_OK(submit1(p, (cpu_cmd){.kind = CPU_CMD_EXEC, .threads = 64, .fn = mark, .ctx = &s}, &seq));
  CHECK_OK(cpu_pool_wait(p, seq, 10000));
  struct timespec c0, c1, pause = {0, 20 * 1000000};
  nanosleep(&pause, NULL); /* past the spin window */
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
  pause.tv_nsec = 100 * 1000000;
  nanosleep(&pause, NULL);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
  double cpu_ms = (double)(c1.tv_sec - c0.tv_sec) * 1e3 + (double)(c1.tv_nsec - c0.tv_nsec) / 1e6;
  printf("idle pool of %d threads: %.3f ms CPU in 100 ms\n", cpu_pool_threads(p), cpu_ms);
  CHECK(cpu_ms < 5.0);
}

/* A kernel with the renderer's signature, called with run-time arguments through cpu_kernel_run. */
static void kern(float *restrict data0, const float *restrict data1, int n, int scale, int core_id) {
  for (int i = core_id; i < n; i += 4) data0[i] = data1[i] * (float)scale + (float)core_id;
}

static void test_kernel_call(cpu_pool *p) {
  static float out[100], in[100];
  for (int i = 0; i < 100; i++) in[i] = (float)i;
  cpu_kernel_args ka;
  uint64_t args[4] = {(uintptr_t)out, (uintptr_t)in, 100, (uint64_t)(int64_t)-3};
  CHECK_OK(cpu_kernel_args_init(&ka, (void *)kern, args, 4));
  uint64_t seq;
  CHECK_OK(submit1(p, (cpu_cmd){.kind = CPU_CMD_EXEC, .threads = 4, .fn = cpu_kernel_run, .ctx = &ka}, &seq));
  CHECK_OK(cpu_pool_wait(p, seq, 10000));
  int ok = 1;
  for (int i = 0; i < 100; i++) ok &= out[i] == (float)i * -3.f + (float)(i % 4);
  CHECK(ok);
  uint64_t many[40] = {0};
  CHECK_ERR(cpu_kernel_args_init(&ka, (void *)kern, many, 40), HCQ_CODE_UNSUPPORTED, "40 arguments");
}

int main(void) {
  cpu_pool *p = NULL;
  CHECK_OK(cpu_pool_create(4, &p));
  if (!p) return testing_summary("cpu_pool_test");
  CHECK_EQ_INT(cpu_pool_threads(p), 4);
  test_exec_counts(p);
  test_order(p);
  test_timeouts(p);
  test_stress(p);
  test_kernel_call(p);
  test_idle(p);
  cpu_pool_destroy(p);
  /* other sizes, and the environment override */
  for (int n = 1; n <= 3; n++) {
    CHECK_OK(cpu_pool_create(n, &p));
    test_exec_counts(p);
    cpu_pool_destroy(p);
  }
  setenv("HCQ_CPU_THREADS", "3", 1);
  CHECK_OK(cpu_pool_create(0, &p));
  CHECK_EQ_INT(cpu_pool_threads(p), 3);
  cpu_pool_destroy(p);
  setenv("HCQ_CPU_THREADS", "lots", 1);
  CHECK_ERR(cpu_pool_create(0, &p), HCQ_CODE_INVALID, "HCQ_CPU_THREADS='lots'");
  unsetenv("HCQ_CPU_THREADS");
  /* destroy right after submit: queued commands still complete */
  static slots s;
  memset(&s, 0, sizeof s);
  CHECK_OK(cpu_pool_create(2, &p));
  CHECK_OK(submit1(p, (cpu_cmd){.kind = CPU_CMD_EXEC, .threads = 10, .fn = mark, .ctx = &s}, NULL));
  cpu_pool_destroy(p);
  CHECK_EQ_INT(s.hits[9], 1);
  return testing_summary("cpu_pool_test");
}
