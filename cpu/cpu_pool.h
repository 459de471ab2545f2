/* cpu_pool: persistent worker threads that execute the CPU device's command queue.
 *
 * Threads: `threads` in cpu_pool_create, else $HCQ_CPU_THREADS, else the number of online cores. Thread 0 (the
 * leader) takes commands from the queue in submission order and runs each to completion before the next; an EXEC
 * with N threads calls fn(ctx, core_id) for core_id 0..N-1 spread over the leader and the other workers (any N:
 * workers claim ids until none are left), then joins. Idle threads spin CPU_SPIN_NS (50 us) and then sleep on a
 * futex, so an idle pool burns no CPU. After each command the pool's completion counter (a signal) is set to the
 * command's sequence number.
 *
 * A queue backend hands the pool work by filling cpu_cmd items (copied at submit); the memory an EXEC's ctx
 * points to (e.g. cpu_kernel_args in a kernargs buffer) must stay valid until the command completed.
 *
 * Small submits can run on the submitting thread (cpu_pool_submit_here): when the pool is idle (queue empty, no
 * command running) and every command of a submit is a SIGNAL, a TIMESTAMP, a WAIT already satisfied or a
 * one-thread EXEC marked `run_here`, the submit claims them and the submitter runs them with cpu_pool_run_claimed,
 * in order, once it holds no lock the commands may need. That saves the hand-off to the leader (a wake-up, or on
 * an oversubscribed machine a context switch) that dominates an empty launch. The submitter marks only EXECs it
 * knows to be short; commands submitted meanwhile queue behind them. Likewise an EXEC with N > 1 threads marked
 * `no_wake` does not wake sleeping workers (a futex wake costs 5-20 us on a loaded machine, and the woken worker
 * may preempt the leader): the leader takes the ids no spinning worker claims. */
#ifndef HCQ_CPU_POOL_H
#define HCQ_CPU_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpu/cpu_sync.h"
#include "base/status.h"

typedef struct cpu_pool cpu_pool;
typedef void (*cpu_task_fn)(void *ctx, int core_id);

typedef enum cpu_cmd_kind {
  CPU_CMD_EXEC,      /* fn(ctx, core_id) for core_id in 0..threads-1, joined */
  CPU_CMD_SIGNAL,    /* cpu_signal_set(addr, value) */
  CPU_CMD_WAIT,      /* wait until *addr >= value, at most timeout_ms (a timeout becomes the pool's error) */
  CPU_CMD_TIMESTAMP, /* *addr = cpu_now_ns() */
} cpu_cmd_kind;

typedef struct cpu_cmd {
  cpu_cmd_kind kind;
  int threads;       /* EXEC: number of core_ids, >= 1 */
  cpu_task_fn fn;    /* EXEC */
  void *ctx;         /* EXEC */
  uint64_t *addr;    /* SIGNAL, WAIT, TIMESTAMP */
  uint64_t value;    /* SIGNAL, WAIT */
  uint64_t timeout_ms; /* WAIT */
  int run_here;      /* EXEC with threads == 1: short enough to run on the submitting thread when the pool is idle */
  int no_wake;       /* EXEC with threads > 1: so short in all that waking a sleeping worker costs more than it
                        saves; only workers still spinning join, the rest of the ids run on the leader */
} cpu_cmd;

/* The most worker threads a pool takes (from the argument or $HCQ_CPU_THREADS); `hcq --threads` uses the same. */
#define CPU_POOL_MAX_THREADS 1024
/* threads <= 0: $HCQ_CPU_THREADS or the number of cores. Errors: more than CPU_POOL_MAX_THREADS, bad
 * $HCQ_CPU_THREADS, thread creation. */
hcq_status cpu_pool_create(int threads, cpu_pool **out_pool);
/* Finishes the commands already queued, then stops and joins every thread. NULL is a no-op. */
void cpu_pool_destroy(cpu_pool *pool);
int cpu_pool_threads(const cpu_pool *pool);

/* Append commands (copied) to the queue; *out_seq (optional) receives the sequence number of the last one.
 * Sequence numbers start at 1 and count commands. Safe to call from several threads. */
hcq_status cpu_pool_submit(cpu_pool *pool, const cpu_cmd *cmds, size_t n, uint64_t *out_seq);
/* The same, but a small submit to an idle pool is claimed for the caller (*out_claimed true): the caller must then
 * call cpu_pool_run_claimed, which runs those commands on its thread before any later command runs. */
hcq_status cpu_pool_submit_here(cpu_pool *pool, const cpu_cmd *cmds, size_t n, uint64_t *out_seq, bool *out_claimed);
void cpu_pool_run_claimed(cpu_pool *pool);
/* Wait until every command up to `seq` has completed; HCQ_CODE_TIMEOUT after timeout_ms. */
hcq_status cpu_pool_wait(cpu_pool *pool, uint64_t seq, uint64_t timeout_ms);
/* The first error a command produced since the last call (e.g. a WAIT that timed out), or OK. Caller frees. */
hcq_status cpu_pool_take_error(cpu_pool *pool);

#endif
