/* cpu_pool: see cpu_pool.h. Synchronisation in one place:
 *  - queue: a ring under `lock`; `q_count` (atomic) lets the leader poll without the lock; `q_futex` counts
 *    submits and is the word the leader sleeps on when `leader_sleeping` is set.
 *  - fan-out: the leader publishes a job (fn, ctx, n), then `claim` = (gen << 32 | 0), then `gen` (the word the
 *    helpers sleep on). Participants take ids by CAS on `claim`; a CAS only succeeds while the generation in
 *    `claim` is the job's, so a late helper can never run an id of the next job with the previous job's fn.
 *    `remaining` counts unfinished ids; the leader sleeps on it while `leader_joining` is set.
 *  - `executing` (set under `lock`, cleared atomically) is the token to run commands: the leader takes it with a
 *    command; cpu_pool_submit_here takes it for an idle pool's small submit, which the submitter then runs itself
 *    (cpu_pool_run_claimed). While a submitter holds it the leader leaves the queue alone; the submitter wakes the
 *    leader when it finds commands queued behind its own.
 * Every "check flag, then sleep" pairs with a "publish, then check sleepers" on the other side (CPU_PUBLISH). */
#include "cpu/cpu_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct cpu_pool {
  int nthreads;
  pthread_t *tids;
  int started;

  pthread_mutex_t lock; /* queue ring and error */
  cpu_cmd *ring;
  size_t cap, head, count; /* guarded by lock */
  uint64_t submitted;      /* guarded by lock */
  size_t q_count;          /* atomic mirror of count */
  uint32_t q_futex;
  int leader_sleeping;
  int executing;           /* atomic, taken under lock: a thread is running commands (see the top) */
  size_t claimed;          /* guarded by lock: queued commands a submitter runs itself (cpu_pool_run_claimed) */
  int stopping;            /* atomic: set by destroy */
  hcq_status error;        /* guarded by lock */

  uint64_t done_seq;       /* signal: last completed command */

  /* fan-out of one EXEC; fields written by the leader only while no id of a job is unclaimed */
  cpu_task_fn job_fn;
  void *job_ctx;
  uint32_t job_n;
  uint64_t claim;
  uint32_t gen;
  uint32_t remaining;
  int helper_sleepers;
  int leader_joining;
  int helpers_stop;
};

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define LOAD_SC(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define STORE_SC(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)

/* Run ids of job generation g until none are left. */
static void participate(cpu_pool *p, uint32_t g) {
  for (;;) {
    uint64_t c = LOAD(&p->claim);
    if ((uint32_t)(c >> 32) != g) return;
    uint32_t id = (uint32_t)c;
    if (id >= __atomic_load_n(&p->job_n, __ATOMIC_RELAXED)) return;
    if (!__atomic_compare_exchange_n(&p->claim, &c, c + 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) continue;
    /* id is ours: the job cannot finish (nor its fields change) before we decrement `remaining` */
    cpu_task_fn fn = __atomic_load_n(&p->job_fn, __ATOMIC_RELAXED);
    void *ctx = __atomic_load_n(&p->job_ctx, __ATOMIC_RELAXED);
    fn(ctx, (int)id);
    if (__atomic_sub_fetch(&p->remaining, 1, __ATOMIC_SEQ_CST) == 0 && LOAD_SC(&p->leader_joining))
      cpu_futex_wake(&p->remaining, 1);
  }
}

static void *helper_main(void *arg) {
  cpu_pool *p = arg;
  uint32_t seen = 0;
  for (;;) {
    uint64_t start = cpu_now_ns();
    uint32_t g;
    for (;;) {
      g = LOAD(&p->gen);
      if (g != seen) break;
      uint64_t spun = cpu_now_ns() - start;
      if (spun < CPU_SPIN_NS) {
        cpu_spin_pause(spun);
        continue;
      }
      __atomic_fetch_add(&p->helper_sleepers, 1, __ATOMIC_SEQ_CST);
      if (LOAD_SC(&p->gen) == seen) cpu_futex_wait(&p->gen, seen, 0);
      __atomic_fetch_sub(&p->helper_sleepers, 1, __ATOMIC_SEQ_CST);
      start = cpu_now_ns();
    }
    seen = g;
    if (LOAD(&p->helpers_stop)) return NULL;
    participate(p, g);
  }
}

static void run_exec(cpu_pool *p, const cpu_cmd *c) {
  if (c->threads <= 1 || p->nthreads == 1) {
    for (int id = 0; id < (c->threads < 1 ? 1 : c->threads); id++) c->fn(c->ctx, id);
    return;
  }
  uint32_t g = LOAD(&p->gen) + 1;
  if (g == 0) g = 1; /* helpers start with seen == 0 */
  /* Close the previous job first: a helper that read the old `claim` and then sees the new job_n must fail its
   * CAS, or it would run an id past the old job's end with the new fn. */
  STORE_SC(&p->claim, ((uint64_t)g << 32) | UINT32_MAX);
  __atomic_store_n(&p->job_fn, c->fn, __ATOMIC_RELAXED);
  __atomic_store_n(&p->job_ctx, c->ctx, __ATOMIC_RELAXED);
  __atomic_store_n(&p->job_n, (uint32_t)c->threads, __ATOMIC_RELAXED);
  STORE(&p->remaining, (uint32_t)c->threads);
  STORE(&p->claim, (uint64_t)g << 32);
  CPU_PUBLISH(&p->gen, g);
  int helpers = p->nthreads - 1, want = c->threads - 1 < helpers ? c->threads - 1 : helpers;
  if (!c->no_wake && LOAD_SC(&p->helper_sleepers) > 0) cpu_futex_wake(&p->gen, want);
  participate(p, g);
  /* join: spin, then sleep on `remaining` */
  uint64_t start = cpu_now_ns();
  for (;;) {
    uint32_t r = LOAD(&p->remaining);
    if (r == 0) return;
    uint64_t spun = cpu_now_ns() - start;
    if (spun < CPU_SPIN_NS) {
      cpu_spin_pause(spun);
      continue;
    }
    CPU_PUBLISH(&p->leader_joining, 1);
    r = LOAD_SC(&p->remaining);
    if (r != 0) cpu_futex_wait(&p->remaining, r, 0);
    STORE_SC(&p->leader_joining, 0);
  }
}

static void record_error(cpu_pool *p, hcq_status st) {
  pthread_mutex_lock(&p->lock);
  if (!p->error) p->error = st;
  else hcq_status_free(st);
  pthread_mutex_unlock(&p->lock);
}

static void run_cmd(cpu_pool *p, const cpu_cmd *c, uint64_t seq) {
  switch (c->kind) {
  case CPU_CMD_EXEC: run_exec(p, c); break;
  case CPU_CMD_SIGNAL: cpu_signal_set(c->addr, c->value); break;
  case CPU_CMD_TIMESTAMP: __atomic_store_n(c->addr, cpu_now_ns(), __ATOMIC_RELEASE); break;
  case CPU_CMD_WAIT: {
    hcq_status st = cpu_signal_wait(c->addr, c->value, c->timeout_ms);
    if (st) record_error(p, hcq_status_annotate(st, "cpu pool: WAIT command %llu", (unsigned long long)seq));
    break;
  }
  }
}

/* Leader: take the next command (spin, then sleep); false when stopping with an empty queue. */
static bool next_cmd(cpu_pool *p, cpu_cmd *out, uint64_t *out_seq) {
  uint64_t start = cpu_now_ns();
  for (;;) {
    uint32_t f = LOAD_SC(&p->q_futex);
    if (LOAD(&p->q_count) > 0 && !LOAD(&p->executing)) {
      pthread_mutex_lock(&p->lock);
      if (LOAD(&p->executing)) { /* a submitter runs its own commands first */
        pthread_mutex_unlock(&p->lock);
        continue;
      }
      STORE(&p->executing, 1);
      *out = p->ring[p->head];
      p->head = (p->head + 1) & (p->cap - 1);
      p->count--;
      *out_seq = p->submitted - p->count;
      __atomic_store_n(&p->q_count, p->count, __ATOMIC_RELEASE);
      pthread_mutex_unlock(&p->lock);
      return true;
    }
    if (LOAD(&p->stopping)) return false;
    uint64_t spun = cpu_now_ns() - start;
    if (spun < CPU_SPIN_NS) {
      cpu_spin_pause(spun);
      continue;
    }
    CPU_PUBLISH(&p->leader_sleeping, 1);
    if ((LOAD_SC(&p->q_count) == 0 || LOAD_SC(&p->executing)) && !LOAD_SC(&p->stopping))
      cpu_futex_wait(&p->q_futex, f, 0);
    STORE_SC(&p->leader_sleeping, 0);
    start = cpu_now_ns();
  }
}

static void *leader_main(void *arg) {
  cpu_pool *p = arg;
  cpu_cmd c;
  uint64_t seq;
  while (next_cmd(p, &c, &seq)) {
    run_cmd(p, &c, seq);
    cpu_signal_set(&p->done_seq, seq);
    STORE_SC(&p->executing, 0);
  }
  STORE_SC(&p->helpers_stop, 1);
  __atomic_add_fetch(&p->gen, 1, __ATOMIC_SEQ_CST);
  cpu_futex_wake(&p->gen, 1 << 30);
  return NULL;
}

static hcq_status threads_from_env(int *out) {
  const char *env = getenv("HCQ_CPU_THREADS");
  if (env && *env) {
    char *end;
    errno = 0;
    long v = strtol(env, &end, 10);
    if (errno || *end || v < 1 || v > CPU_POOL_MAX_THREADS)
      return hcq_status_make(HCQ_CODE_INVALID, "HCQ_CPU_THREADS='%s' is not a thread count in 1..%d", env,
                             CPU_POOL_MAX_THREADS);
    *out = (int)v;
    return HCQ_OK;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  *out = n > 0 ? (int)n : 1;
  return HCQ_OK;
}

hcq_status cpu_pool_create(int threads, cpu_pool **out_pool) {
  if (!out_pool) return hcq_status_make(HCQ_CODE_INVALID, "cpu_pool_create: out_pool is NULL");
  *out_pool = NULL;
  if (threads <= 0) HCQ_TRY(threads_from_env(&threads));
  if (threads > CPU_POOL_MAX_THREADS)
    return hcq_status_make(HCQ_CODE_INVALID, "cpu_pool_create: %d threads asked, at most %d", threads,
                           CPU_POOL_MAX_THREADS);
  cpu_pool *p = calloc(1, sizeof *p);
  if (!p) return hcq_status_make(HCQ_CODE_NOMEM, "cpu_pool");
  p->nthreads = threads;
  p->cap = 64;
  p->ring = calloc(p->cap, sizeof *p->ring);
  p->tids = calloc((size_t)threads, sizeof *p->tids);
  pthread_mutex_init(&p->lock, NULL);
  if (!p->ring || !p->tids) {
    cpu_pool_destroy(p);
    return hcq_status_make(HCQ_CODE_NOMEM, "cpu_pool with %d threads", threads);
  }
  for (int i = 0; i < threads; i++) {
    int rc = pthread_create(&p->tids[i], NULL, i == 0 ? leader_main : helper_main, p);
    if (rc) {
      cpu_pool_destroy(p);
      return hcq_status_make(HCQ_CODE_IO, "cpu_pool: pthread_create of worker %d of %d: %s", i, threads, strerror(rc));
    }
    p->started = i + 1;
  }
  *out_pool = p;
  return HCQ_OK;
}

void cpu_pool_destroy(cpu_pool *p) {
  if (!p) return;
  STORE_SC(&p->stopping, 1);
  __atomic_add_fetch(&p->q_futex, 1, __ATOMIC_SEQ_CST);
  cpu_futex_wake(&p->q_futex, 1);
  if (p->started > 0) pthread_join(p->tids[0], NULL);
  else STORE_SC(&p->helpers_stop, 1);
  if (p->started == 0 || p->started < p->nthreads) { /* creation failed part-way: the leader may not exist */
    STORE_SC(&p->helpers_stop, 1);
    __atomic_add_fetch(&p->gen, 1, __ATOMIC_SEQ_CST);
    cpu_futex_wake(&p->gen, 1 << 30);
  }
  for (int i = 1; i < p->started; i++) pthread_join(p->tids[i], NULL);
  pthread_mutex_destroy(&p->lock);
  hcq_status_free(p->error);
  free(p->ring);
  free(p->tids);
  free(p);
}

int cpu_pool_threads(const cpu_pool *p) { return p ? p->nthreads : 0; }

/* Run the commands cpu_pool_submit_here claimed, on this thread (the caller holds `executing`); then hand over to
 * the leader if commands were queued behind them. */
void cpu_pool_run_claimed(cpu_pool *p) {
  for (;;) {
    pthread_mutex_lock(&p->lock);
    if (!p->claimed) {
      pthread_mutex_unlock(&p->lock);
      break;
    }
    cpu_cmd c = p->ring[p->head];
    p->head = (p->head + 1) & (p->cap - 1);
    p->count--;
    p->claimed--;
    uint64_t seq = p->submitted - p->count;
    __atomic_store_n(&p->q_count, p->count, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&p->lock);
    run_cmd(p, &c, seq);
    cpu_signal_set(&p->done_seq, seq);
  }
  CPU_PUBLISH(&p->executing, 0);
  if (LOAD_SC(&p->q_count) > 0) {
    __atomic_add_fetch(&p->q_futex, 1, __ATOMIC_SEQ_CST);
    if (LOAD_SC(&p->leader_sleeping)) cpu_futex_wake(&p->q_futex, 1);
  }
}

static hcq_status submit(cpu_pool *p, const cpu_cmd *cmds, size_t n, uint64_t *out_seq, bool *out_claimed) {
  if (!p || (!cmds && n)) return hcq_status_make(HCQ_CODE_INVALID, "cpu_pool_submit: NULL argument");
  for (size_t i = 0; i < n; i++) {
    const cpu_cmd *c = &cmds[i];
    if ((c->kind == CPU_CMD_EXEC && (!c->fn || c->threads < 1)) ||
        (c->kind != CPU_CMD_EXEC && (!c->addr || (uintptr_t)c->addr % 8)) || (unsigned)c->kind > CPU_CMD_TIMESTAMP)
      return hcq_status_make(HCQ_CODE_INVALID, "cpu_pool_submit: command %zu (kind %d) is malformed", i, (int)c->kind);
  }
  bool small = out_claimed && n > 0;
  for (size_t i = 0; i < n && small; i++) {
    const cpu_cmd *c = &cmds[i];
    small = c->kind == CPU_CMD_EXEC ? c->threads == 1 && c->run_here
                                    : c->kind != CPU_CMD_WAIT || cpu_signal_load(c->addr) >= c->value;
  }
  pthread_mutex_lock(&p->lock);
  bool claim = small && p->count == 0 && !LOAD(&p->executing) && !LOAD(&p->stopping);
  if (claim) STORE_SC(&p->executing, 1), p->claimed = n;
  if (p->count + n > p->cap) {
    size_t cap = p->cap;
    while (cap < p->count + n) cap *= 2;
    cpu_cmd *ring = malloc(cap * sizeof *ring);
    if (!ring) {
      pthread_mutex_unlock(&p->lock);
      return hcq_status_make(HCQ_CODE_NOMEM, "cpu_pool_submit: queue of %zu commands", cap);
    }
    for (size_t i = 0; i < p->count; i++) ring[i] = p->ring[(p->head + i) & (p->cap - 1)];
    free(p->ring);
    p->ring = ring;
    p->cap = cap;
    p->head = 0;
  }
  for (size_t i = 0; i < n; i++) p->ring[(p->head + p->count + i) & (p->cap - 1)] = cmds[i];
  p->count += n;
  p->submitted += n;
  uint64_t seq = p->submitted;
  __atomic_store_n(&p->q_count, p->count, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&p->lock);
  if (out_claimed) *out_claimed = claim;
  if (out_seq) *out_seq = seq;
  if (claim) return HCQ_OK; /* the leader leaves them to the submitter (`executing`): no wake-up */
  __atomic_add_fetch(&p->q_futex, 1, __ATOMIC_SEQ_CST);
  if (LOAD_SC(&p->leader_sleeping)) cpu_futex_wake(&p->q_futex, 1);
  return HCQ_OK;
}

hcq_status cpu_pool_submit(cpu_pool *p, const cpu_cmd *cmds, size_t n, uint64_t *out_seq) {
  return submit(p, cmds, n, out_seq, NULL);
}

hcq_status cpu_pool_submit_here(cpu_pool *p, const cpu_cmd *cmds, size_t n, uint64_t *out_seq, bool *out_claimed) {
  if (out_claimed) *out_claimed = false;
  if (!out_claimed) return hcq_status_make(HCQ_CODE_INVALID, "cpu_pool_submit_here: out_claimed is NULL");
  return submit(p, cmds, n, out_seq, out_claimed);
}

hcq_status cpu_pool_wait(cpu_pool *p, uint64_t seq, uint64_t timeout_ms) {
  if (!p) return hcq_status_make(HCQ_CODE_INVALID, "cpu_pool_wait: NULL pool");
  return hcq_status_annotate(cpu_signal_wait(&p->done_seq, seq, timeout_ms), "cpu pool: command %llu",
                             (unsigned long long)seq);
}

hcq_status cpu_pool_take_error(cpu_pool *p) {
  if (!p) return HCQ_OK;
  pthread_mutex_lock(&p->lock);
  hcq_status st = p->error;
  p->error = NULL;
  pthread_mutex_unlock(&p->lock);
  return st;
}
