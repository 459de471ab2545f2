/* cpu_pool_submit_here / cpu_pool_run_claimed: small submits to an idle pool run on the submitting thread.
 * - claimed: nothing runs before cpu_pool_run_claimed; then every command runs, in order, on the caller's thread,
 *   and the completion counter covers them;
 * - not claimed (the leader runs them, on another thread): an EXEC without run_here, one with threads > 1, a WAIT
 *   not yet satisfied, plain cpu_pool_submit, a pool busy with an earlier command;
 * - a command queued behind claimed ones waits for them, and the leader (asleep by then) is woken to run it;
 * - two threads mixing claimed and queued submits: every command runs exactly once, sequence numbers rise;
 * - a many-thread EXEC marked no_wake runs every id, and sleeping workers are not woken for it (the leader runs
 *   them all); without no_wake a sleeping worker is woken and takes ids. */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "base/testing.h"
#include "cpu/cpu_pool.h"

typedef struct note {
  pthread_t thread;
  int ran;
  int order[8];
  int n;
} note;

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static note *log_to;

static void noted(void *ctx, int core_id) {
  note *nt = ctx;
  if (core_id == 0) nt->thread = pthread_self(); /* one writer: a 2-thread command runs this on two threads */
  __atomic_add_fetch(&nt->ran, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_lock(&log_lock);
  if (log_to && log_to->n < 8) log_to->order[log_to->n++] = nt->n; /* the note's id */
  pthread_mutex_unlock(&log_lock);
}

static void sleep_ms(int ms) { nanosleep(&(struct timespec){0, ms * 1000000L}, NULL); }

static cpu_cmd small_exec(note *nt) {
  return (cpu_cmd){.kind = CPU_CMD_EXEC, .threads = 1, .fn = noted, .ctx = nt, .run_here = 1};
}

static void test_claimed(cpu_pool *p) {
  static note a;
  static uint64_t sig, ts;
  bool claimed = false;
  uint64_t seq = 0;
  /* a claim needs an idle pool: workers may still be on their way back to idle (slow hosts, qemu), in which case
   * the work rightly goes to the pool; try again until a claim is granted */
  cpu_cmd c[3];
  for (int tries = 0; tries < 1000 && !claimed; tries++) {
    memset(&a, 0, sizeof a);
    sig = ts = 0;
    c[0] = small_exec(&a);
    c[1] = (cpu_cmd){.kind = CPU_CMD_SIGNAL, .addr = &sig, .value = 7};
    c[2] = (cpu_cmd){.kind = CPU_CMD_TIMESTAMP, .addr = &ts};
    CHECK_OK(cpu_pool_submit_here(p, c, 3, &seq, &claimed));
    if (!claimed) {
      CHECK_OK(cpu_pool_wait(p, seq, 10000));
      sleep_ms(1);
    }
  }
  CHECK(claimed);
  sleep_ms(2); /* the leader must leave them alone */
  CHECK_EQ_INT(__atomic_load_n(&a.ran, __ATOMIC_SEQ_CST), 0);
  CHECK_EQ_INT(cpu_signal_load(&sig), 0);
  cpu_pool_run_claimed(p);
  CHECK_EQ_INT(a.ran, 1);
  CHECK(pthread_equal(a.thread, pthread_self()));
  CHECK_EQ_INT(cpu_signal_load(&sig), 7);
  CHECK(ts != 0);
  CHECK_OK(cpu_pool_wait(p, seq, 0)); /* complete already */
}

/* Submitted through `how` (0: submit_here, 1: plain submit); must run on a pool thread. */
static void expect_pool_thread(cpu_pool *p, cpu_cmd *c, size_t n, note *nt, int how, uint64_t *release) {
  bool claimed = true;
  uint64_t seq = 0;
  if (how == 0) {
    CHECK_OK(cpu_pool_submit_here(p, c, n, &seq, &claimed));
  } else {
    CHECK_OK(cpu_pool_submit(p, c, n, &seq));
    claimed = false;
  }
  CHECK(!claimed);
  if (claimed) cpu_pool_run_claimed(p);
  if (release) cpu_signal_set(release, 1);
  CHECK_OK(cpu_pool_wait(p, seq, 10000));
  CHECK(nt->ran >= 1);
  CHECK(!pthread_equal(nt->thread, pthread_self()));
}

static void test_not_claimed(cpu_pool *p) {
  static note a;
  memset(&a, 0, sizeof a);
  cpu_cmd c = small_exec(&a);
  c.run_here = 0;
  expect_pool_thread(p, &c, 1, &a, 0, NULL);
  memset(&a, 0, sizeof a);
  c = small_exec(&a);
  c.threads = 2;
  expect_pool_thread(p, &c, 1, &a, 0, NULL);
  memset(&a, 0, sizeof a);
  c = small_exec(&a);
  expect_pool_thread(p, &c, 1, &a, 1, NULL);
  static uint64_t gate;
  gate = 0;
  memset(&a, 0, sizeof a);
  cpu_cmd w[2] = {{.kind = CPU_CMD_WAIT, .addr = &gate, .value = 1, .timeout_ms = 10000}, small_exec(&a)};
  expect_pool_thread(p, w, 2, &a, 0, &gate);
}

static uint64_t busy_gate;
static void busy(void *ctx, int core_id) {
  (void)ctx, (void)core_id;
  while (!cpu_signal_load(&busy_gate)) sleep_ms(1);
}

static void test_busy_and_queued(cpu_pool *p) {
  /* busy: the leader runs an earlier command, so the small one queues behind it */
  static note a;
  memset(&a, 0, sizeof a);
  busy_gate = 0;
  uint64_t seq;
  CHECK_OK(cpu_pool_submit(p, &(cpu_cmd){.kind = CPU_CMD_EXEC, .threads = 1, .fn = busy}, 1, &seq));
  sleep_ms(2);
  cpu_cmd c = small_exec(&a);
  bool claimed = true;
  CHECK_OK(cpu_pool_submit_here(p, &c, 1, &seq, &claimed));
  CHECK(!claimed);
  cpu_signal_set(&busy_gate, 1);
  CHECK_OK(cpu_pool_wait(p, seq, 10000));
  CHECK_EQ_INT(a.ran, 1);
  /* queued behind a claim: runs after it, and the sleeping leader is woken for it */
  static note first, second;
  static note order;
  /* a claim needs an idle pool: right after a wait the workers may still be on their way back to idle (slow hosts,
   * qemu), in which case the work rightly goes to the pool; try again until a claim is granted */
  claimed = false;
  for (int tries = 0; tries < 1000 && !claimed; tries++) {
    memset(&first, 0, sizeof first), memset(&second, 0, sizeof second), memset(&order, 0, sizeof order);
    first.n = 1, second.n = 2;
    log_to = &order;
    c = small_exec(&first);
    CHECK_OK(cpu_pool_submit_here(p, &c, 1, &seq, &claimed));
    if (!claimed) {
      CHECK_OK(cpu_pool_wait(p, seq, 10000));
      sleep_ms(1);
    }
  }
  CHECK(claimed);
  uint64_t seq2;
  cpu_cmd c2 = small_exec(&second);
  CHECK_OK(cpu_pool_submit(p, &c2, 1, &seq2));
  CHECK_EQ_INT(seq2, seq + 1);
  sleep_ms(5); /* longer than the leader spins: it sleeps */
  CHECK_EQ_INT(__atomic_load_n(&second.ran, __ATOMIC_SEQ_CST), 0);
  cpu_pool_run_claimed(p);
  CHECK_OK(cpu_pool_wait(p, seq2, 10000));
  pthread_mutex_lock(&log_lock);
  log_to = NULL;
  pthread_mutex_unlock(&log_lock);
  CHECK_EQ_INT(order.n, 2);
  CHECK_EQ_INT(order.order[0], 1);
  CHECK_EQ_INT(order.order[1], 2);
  CHECK(!pthread_equal(second.thread, pthread_self()));
}

typedef struct mix_arg {
  cpu_pool *p;
  int count[1];
  bool ok;
} mix_arg;

static void count_one(void *ctx, int core_id) {
  (void)core_id;
  __atomic_add_fetch((int *)ctx, 1, __ATOMIC_RELAXED);
}

static void *mix_thread(void *arg) {
  mix_arg *m = arg;
  uint64_t last = 0;
  m->ok = true;
  for (int i = 0; i < 5000; i++) {
    cpu_cmd c = {.kind = CPU_CMD_EXEC, .threads = 1, .fn = count_one, .ctx = m->count, .run_here = i % 7 != 0};
    uint64_t seq = 0;
    bool claimed = false;
    hcq_status st = i % 5 == 0 ? cpu_pool_submit(m->p, &c, 1, &seq) : cpu_pool_submit_here(m->p, &c, 1, &seq, &claimed);
    if (st) {
      hcq_status_free(st);
      m->ok = false;
      return NULL;
    }
    if (claimed) cpu_pool_run_claimed(m->p);
    if (seq <= last) m->ok = false;
    last = seq;
  }
  hcq_status st = cpu_pool_wait(m->p, last, 10000);
  if (st) m->ok = false, hcq_status_free(st);
  return NULL;
}

/* Each id takes 5 ms, so a worker that is woken claims the second id long before the leader is done with the first. */
typedef struct ids_arg {
  pthread_t thread[4];
  int ran;
} ids_arg;

static void slow_id(void *ctx, int core_id) {
  ids_arg *a = ctx;
  a->thread[core_id] = pthread_self();
  sleep_ms(5);
  __atomic_add_fetch(&a->ran, 1, __ATOMIC_SEQ_CST);
}

/* true when every id ran on one thread (the leader) */
static bool ids_on_one_thread(cpu_pool *p, int no_wake) {
  static ids_arg a;
  memset(&a, 0, sizeof a);
  sleep_ms(20); /* the workers spin 50 us, then sleep */
  cpu_cmd c = {.kind = CPU_CMD_EXEC, .threads = 4, .fn = slow_id, .ctx = &a, .no_wake = no_wake};
  uint64_t seq = 0;
  CHECK_OK(cpu_pool_submit(p, &c, 1, &seq));
  CHECK_OK(cpu_pool_wait(p, seq, 10000));
  CHECK_EQ_INT(__atomic_load_n(&a.ran, __ATOMIC_SEQ_CST), 4);
  bool one = true;
  for (int i = 1; i < 4; i++) one &= pthread_equal(a.thread[i], a.thread[0]) != 0;
  return one;
}

/* A worker may rarely still be awake after 20 ms idle on a loaded host (it then rightly joins): a few tries. */
static void test_no_wake(cpu_pool *p) {
  if (cpu_pool_threads(p) < 2) return;
  bool leader_alone = false, helped = false;
  for (int tries = 0; tries < 5 && !leader_alone; tries++) leader_alone = ids_on_one_thread(p, 1);
  for (int tries = 0; tries < 5 && !helped; tries++) helped = !ids_on_one_thread(p, 0);
  CHECK(leader_alone);
  CHECK(helped);
}

static void test_mixed_threads(cpu_pool *p) {
  static mix_arg m[2];
  pthread_t t[2];
  for (int i = 0; i < 2; i++) {
    memset(&m[i], 0, sizeof m[i]);
    m[i].p = p;
    CHECK_EQ_INT(pthread_create(&t[i], NULL, mix_thread, &m[i]), 0);
  }
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 2; i++) {
    CHECK(m[i].ok);
    CHECK_EQ_INT(__atomic_load_n(&m[i].count[0], __ATOMIC_SEQ_CST), 5000);
  }
}

int main(void) {
  for (int threads = 1; threads <= 3; threads++) {
    cpu_pool *p = NULL;
    CHECK_OK(cpu_pool_create(threads, &p));
    if (!p) break;
    test_claimed(p);
    test_not_claimed(p);
    test_busy_and_queued(p);
    test_mixed_threads(p);
    test_no_wake(p);
    test_claimed(p);
    cpu_pool_destroy(p);
  }
  bool claimed = true;
  CHECK_ERR(cpu_pool_submit_here(NULL, NULL, 0, NULL, &claimed), HCQ_CODE_INVALID, "NULL");
  CHECK(!claimed);
  return testing_summary("cpu_pool_here_test");
}
