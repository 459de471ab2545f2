/* cpu_device: see cpu_device.h. Fault catching lives in cpu_device_fault.c.
 *
 * Nothing a queued or running kernel may touch is freed under it: buffers and programs freed while work is still
 * queued are kept on a deferred list until the pool has passed every batch, and a lost device (a kernel still
 * running after a timed-out wait) keeps everything for the rest of the process. */
#include "cpu/cpu_device.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_device_internal.h"
#include "cpu/cpu_elf.h"
#include "cpu/cpu_kernel.h"
#include "cpu/cpu_mem.h"
#include "cpu/cpu_words.h"
#include "hcq/queue.h"
#include "hcq/signal.h"

#define PROGRAM_MAGIC 0x48435150524f4755ull /* "HCQPROGU" */

struct cpu_device_program {
  uint64_t magic;
  cpu_device *dev;
  cpu_program *elf; /* NULL for wrapped host functions */
  void *fn;
  unsigned *arrived; /* a cross-thread reduce's arrival count (render_c.c), or NULL */
  char name[CPU_DEVICE_NAME_MAX];
  uint64_t last_run_ns; /* atomic: its last run's work on one thread: an id's time x ids (0: not known yet) */
  cpu_device_program *next;
};

/* One submit's work items (exec and copy contexts); freed once the pool passed the batch's completion signal. */
typedef struct cpu_batch {
  struct cpu_batch *next;
  uint64_t number;
  size_t count;
  cpu_work items[];
} cpu_batch;

struct cpu_device {
  hcq_device hcq;
  cpu_pool *pool;
  pthread_mutex_t lock; /* programs, batches, cmds, error, deferred frees, lost message */
  cpu_device_program *programs;
  cpu_device_program *doomed; /* destroyed while work was queued: freed once the device is idle */
  cpu_buffer **deferred;      /* buffers freed while work was queued: likewise */
  size_t ndeferred, deferred_cap;
  int running;               /* atomic: kernel calls in progress */
  const char *running_name;  /* atomic: the kernel last entered */
  int lost;                  /* atomic: a kernel outlived a wait; nothing is freed any more */
  char lost_msg[256];
  cpu_device *next_lost;     /* lost devices stay reachable (they are never freed) */
  cpu_batch *batches, **batches_tail;
  uint64_t batch_number;
  uint64_t batches_done; /* signal: the pool stores the number of each finished batch */
  cpu_cmd *cmds;
  size_t cmds_cap;
  uint64_t commands;
  uint64_t marked_run_here, marked_no_wake; /* EXECs the decoder marked short (cpu_device_exec_marks) */
  hcq_status error;
  int handlers_installed;
};

static pthread_mutex_t lost_lock = PTHREAD_MUTEX_INITIALIZER;
static cpu_device *lost_devices;

static bool is_lost(cpu_device *dev) { return __atomic_load_n(&dev->lost, __ATOMIC_ACQUIRE) != 0; }

static hcq_status lost_error(cpu_device *dev) {
  pthread_mutex_lock(&dev->lock);
  hcq_status st = hcq_status_make(HCQ_CODE_DEVICE_LOST, "%s", dev->lost_msg);
  pthread_mutex_unlock(&dev->lock);
  return st;
}

/* Mark the device lost (once): a kernel (or queued work) outlived a wait of after_ms. */
static void mark_lost(cpu_device *dev, uint32_t after_ms) {
  pthread_mutex_lock(&dev->lock);
  if (!dev->lost) {
    const char *name = __atomic_load_n(&dev->running_name, __ATOMIC_ACQUIRE);
    bool running = __atomic_load_n(&dev->running, __ATOMIC_ACQUIRE) > 0;
    snprintf(dev->lost_msg, sizeof dev->lost_msg,
             "device %s is lost: %s %s %s after %" PRIu32 " ms; its buffers, code and arguments are kept (freeing "
             "them is a no-op); the process must exit to reclaim them",
             dev->hcq.name, running ? "kernel" : "queued work (last kernel", name ? name : "?",
             running ? "still running" : "not finished)", after_ms);
    __atomic_store_n(&dev->lost, 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&dev->lock);
}

void cpu_device_kernel_enter(cpu_device *dev, const char *name) {
  __atomic_store_n(&dev->running_name, name, __ATOMIC_RELEASE);
  __atomic_add_fetch(&dev->running, 1, __ATOMIC_ACQ_REL);
}

void cpu_device_kernel_leave(cpu_device *dev) { __atomic_sub_fetch(&dev->running, 1, __ATOMIC_ACQ_REL); }

/* ------------------------------------------------------------------------------------------------ memory ops */

static hcq_status op_mem_alloc(hcq_device *hd, size_t size_B, unsigned flags, hcq_mem *out) {
  (void)flags;
  if (is_lost(hd->impl)) return lost_error(hd->impl);
  cpu_buffer *b = NULL;
  HCQ_TRY(cpu_buffer_alloc(size_B ? size_B : 1, &b));
  *out = (hcq_mem){.host = b->ptr, .va = (uint64_t)(uintptr_t)b->ptr, .size_B = size_B, .handle = (uintptr_t)b};
  return HCQ_OK;
}

static void reclaim_batches(cpu_device *dev, bool all);

/* Put b on the deferred list. Without memory for the list it is simply never freed (still never under a kernel). */
static void defer_buffer(cpu_device *dev, cpu_buffer *b) {
  if (dev->ndeferred == dev->deferred_cap) {
    size_t cap = dev->deferred_cap ? 2 * dev->deferred_cap : 16;
    cpu_buffer **d = realloc(dev->deferred, cap * sizeof *d);
    if (!d) return;
    dev->deferred = d;
    dev->deferred_cap = cap;
  }
  dev->deferred[dev->ndeferred++] = b;
}

static void op_mem_free(hcq_device *hd, hcq_mem *m) {
  if (!m || !m->host) return;
  cpu_device *dev = hd->impl;
  cpu_buffer *b = (cpu_buffer *)(uintptr_t)m->handle;
  m->host = NULL;
  m->va = 0;
  pthread_mutex_lock(&dev->lock);
  if (!dev->lost) { /* a lost device keeps its buffers: the registry still holds them */
    reclaim_batches(dev, false);
    if (dev->batches) defer_buffer(dev, b);
    else cpu_buffer_free(b);
  }
  pthread_mutex_unlock(&dev->lock);
}

static void op_wait_sleep(hcq_device *hd, const volatile uint64_t *value_addr, uint64_t observed, uint32_t max_ms) {
  (void)hd;
  /* cpu_signal_wait registers as a sleeper, so the pool's signal store wakes us. A timeout is not an error here. */
  hcq_status_free(cpu_signal_wait((const uint64_t *)(uintptr_t)value_addr, observed + 1, max_ms));
}

/* ------------------------------------------------------------------------------------------------ work items */

void cpu_device_record_error(cpu_device *dev, hcq_status st) {
  pthread_mutex_lock(&dev->lock);
  if (!dev->error) dev->error = st;
  else hcq_status_free(st);
  pthread_mutex_unlock(&dev->lock);
}

static void copy_task(void *ctx, int core_id) {
  const cpu_work *w = ctx;
  size_t part = (w->copy.size_B + (size_t)w->copy.parts - 1) / (size_t)w->copy.parts;
  part = (part + 63) & ~(size_t)63;
  size_t start = (size_t)core_id * part;
  if (start >= w->copy.size_B) return;
  size_t n = w->copy.size_B - start < part ? w->copy.size_B - start : part;
  memmove((uint8_t *)w->copy.dst + start, (const uint8_t *)w->copy.src + start, n);
}

/* ------------------------------------------------------------------------------------------------ submit */

static uint64_t u64_at(const uint32_t *w) { return (uint64_t)w[0] | ((uint64_t)w[1] << 32); }

static bool program_known(cpu_device *dev, uint64_t handle) {
  for (const cpu_device_program *p = dev->programs; p; p = p->next)
    if ((uint64_t)(uintptr_t)p == handle) return true;
  return false;
}

static void program_free(cpu_device_program *p) {
  cpu_program_destroy(p->elf);
  p->magic = 0;
  free(p);
}

/* Free batches the pool has finished, and once none is left what was freed while they ran. Caller holds the
 * lock; `all` only after the pool was joined. */
static void reclaim_batches(cpu_device *dev, bool all) {
  uint64_t done = cpu_signal_load(&dev->batches_done);
  while (dev->batches && (all || dev->batches->number <= done)) {
    cpu_batch *b = dev->batches;
    dev->batches = b->next;
    free(b);
  }
  if (dev->batches) return;
  dev->batches_tail = &dev->batches;
  for (size_t i = 0; i < dev->ndeferred; i++) cpu_buffer_free(dev->deferred[i]);
  dev->ndeferred = 0;
  while (dev->doomed) {
    cpu_device_program *p = dev->doomed;
    dev->doomed = p->next;
    program_free(p);
  }
}

static hcq_status grow_cmds(cpu_device *dev, size_t n) {
  if (n <= dev->cmds_cap) return HCQ_OK;
  size_t cap = dev->cmds_cap ? dev->cmds_cap : 64;
  while (cap < n) cap *= 2;
  cpu_cmd *c = realloc(dev->cmds, cap * sizeof *c);
  if (!c) return hcq_status_make(HCQ_CODE_NOMEM, "cpu device: command list of %zu", cap);
  dev->cmds = c;
  dev->cmds_cap = cap;
  return HCQ_OK;
}

/* Decode words[0..count) into dev->cmds and the batch's items; *ncmds / *nitems get the counts. When `b` is NULL
 * only validates and counts. Caller holds the lock. */
static hcq_status decode(cpu_device *dev, const uint32_t *words, size_t count, cpu_batch *b, size_t *out_ncmds,
                         size_t *out_nitems) {
  size_t ncmds = 0, nitems = 0;
  uint32_t timeout_ms = dev->hcq.wait_timeout_ms;
  for (size_t i = 0; i < count;) {
    uint32_t op = CPU_HDR_OP(words[i]), len = CPU_HDR_LEN(words[i]);
    if (op >= CPU_OP_COUNT || len != cpu_op_length_words[op] || len > count - i)
      return hcq_status_make(HCQ_CODE_INVALID, "cpu device: bad command header 0x%08x at word %zu of %zu", words[i],
                             i, count);
    const uint32_t *a = words + i + 1;
    cpu_cmd *c = b ? &dev->cmds[ncmds] : NULL;
    switch ((cpu_op)op) {
      case CPU_OP_NOP:
      case CPU_OP_BARRIER:
      case CPU_OP_COUNT: break;
      case CPU_OP_EXEC: {
        uint64_t prog = u64_at(a), args_va = u64_at(a + 2);
        uint32_t nbufs = a[4], nvals = a[5], gx = a[6], gy = a[7], gz = a[8];
        if (!program_known(dev, prog))
          return hcq_status_make(HCQ_CODE_INVALID, "cpu device: EXEC at word %zu names unknown program 0x%llx", i,
                                 (unsigned long long)prog);
        cpu_device_program *p = (cpu_device_program *)(uintptr_t)prog;
        if ((uint64_t)nbufs + nvals > CPU_KERNEL_MAX_ARGS || (nbufs + nvals > 0 && args_va == 0))
          return hcq_status_make(HCQ_CODE_INVALID,
                                 "cpu device: EXEC of %s at word %zu: %u buffers + %u values (at most %d, args %s)",
                                 p->name, i, nbufs, nvals, CPU_KERNEL_MAX_ARGS, args_va ? "given" : "missing");
        if (gy > 1 || gz > 1 || gx > (uint32_t)INT32_MAX)
          return hcq_status_make(HCQ_CODE_INVALID, "cpu device: EXEC of %s: global size %u,%u,%u (only x is used)",
                                 p->name, gx, gy, gz);
        if (gx == 0) break; /* nothing to run */
        if (b) {
          cpu_work *w = &b->items[nitems];
          memset(w, 0, sizeof *w);
          w->dev = dev;
          w->name = p->name;
          w->nbufs = (int)nbufs;
          w->exec.fn = p->fn;
          w->arrived = p->arrived;
          w->exec.nargs = (int)(nbufs + nvals);
          const uint8_t *ab = (const uint8_t *)(uintptr_t)args_va;
          for (uint32_t k = 0; k < nbufs; k++) memcpy(&w->exec.args[k], ab + hcq_kernarg_buf_offset_B(0, k), 8);
          for (uint32_t k = 0; k < nvals; k++) {
            int32_t v;
            memcpy(&v, ab + hcq_kernarg_val_offset_B(0, nbufs, k), 4);
            w->exec.args[nbufs + k] = (uint64_t)(int64_t)v;
          }
          uint64_t last = __atomic_load_n(&p->last_run_ns, __ATOMIC_RELAXED);
          bool short_run = last > 0 && last < CPU_RUN_HERE_MAX_NS;
          w->run_ns = &p->last_run_ns;
          w->ids = gx;
          *c = (cpu_cmd){.kind = CPU_CMD_EXEC, .threads = (int)gx, .fn = cpu_device_exec_task, .ctx = w,
                         .run_here = gx == 1 && short_run, .no_wake = gx > 1 && short_run};
        }
        nitems++;
        ncmds++;
        break;
      }
      case CPU_OP_COPY: {
        uint64_t dst = u64_at(a), src = u64_at(a + 2), size_B = u64_at(a + 4);
        if (size_B == 0) break;
        if (!dst || !src || size_B > SIZE_MAX / 2)
          return hcq_status_make(HCQ_CODE_INVALID, "cpu device: COPY at word %zu: dst 0x%llx src 0x%llx size %llu", i,
                                 (unsigned long long)dst, (unsigned long long)src, (unsigned long long)size_B);
        if (b) {
          cpu_work *w = &b->items[nitems];
          memset(w, 0, sizeof *w);
          w->dev = dev;
          w->name = "copy";
          w->copy.dst = (void *)(uintptr_t)dst;
          w->copy.src = (const void *)(uintptr_t)src;
          w->copy.size_B = (size_t)size_B;
          size_t parts = size_B / ((size_t)1 << 20); /* >= 1 MiB per thread */
          int threads = cpu_pool_threads(dev->pool);
          w->copy.parts = parts < 1 ? 1 : parts > (size_t)threads ? threads : (int)parts;
          *c = (cpu_cmd){.kind = CPU_CMD_EXEC, .threads = w->copy.parts, .fn = copy_task, .ctx = w};
        }
        nitems++;
        ncmds++;
        break;
      }
      case CPU_OP_SIGNAL:
      case CPU_OP_WAIT:
      case CPU_OP_TIMESTAMP: {
        uint64_t addr = u64_at(a) + (op == CPU_OP_TIMESTAMP ? 8 : 0);
        if (!addr || addr % 8)
          return hcq_status_make(HCQ_CODE_INVALID, "cpu device: command %u at word %zu: signal address 0x%llx", op, i,
                                 (unsigned long long)addr);
        if (b) {
          *c = (cpu_cmd){.kind = op == CPU_OP_SIGNAL ? CPU_CMD_SIGNAL : op == CPU_OP_WAIT ? CPU_CMD_WAIT : CPU_CMD_TIMESTAMP,
                         .addr = (uint64_t *)(uintptr_t)addr,
                         .value = op == CPU_OP_TIMESTAMP ? 0 : u64_at(a + 2),
                         .timeout_ms = timeout_ms};
        }
        ncmds++;
        break;
      }
    }
    i += len;
  }
  *out_ncmds = ncmds;
  *out_nitems = nitems;
  return HCQ_OK;
}

static hcq_status op_submit(hcq_device *hd, hcq_queue_kind kind, const uint32_t *words, size_t count) {
  (void)kind; /* copies run on the same pool */
  cpu_device *dev = hd->impl;
  if (count && !words) return hcq_status_make(HCQ_CODE_INVALID, "cpu device: submit of %zu words from NULL", count);
  if (is_lost(dev)) return lost_error(dev);
  pthread_mutex_lock(&dev->lock);
  hcq_status st = HCQ_OK;
  cpu_batch *b = NULL;
  size_t ncmds = 0, nitems = 0;
  bool here = false; /* the pool left this small submit to us (cpu_pool_submit_here) */
  reclaim_batches(dev, false);
  st = decode(dev, words, count, NULL, &ncmds, &nitems);
  if (st || ncmds == 0) goto out;
  b = calloc(1, sizeof *b + nitems * sizeof(cpu_work));
  if (!b) {
    st = hcq_status_make(HCQ_CODE_NOMEM, "cpu device: %zu work items", nitems);
    goto out;
  }
  st = grow_cmds(dev, ncmds + 1);
  if (!st) st = decode(dev, words, count, b, &ncmds, &nitems);
  if (st) goto out;
  if (nitems) {
    b->number = ++dev->batch_number;
    b->count = nitems;
    /* the batch is done right after its last EXEC/COPY: before the signals that follow it, so a caller that saw
     * those can free what the batch used at once */
    size_t at = ncmds;
    while (at > 0 && dev->cmds[at - 1].kind != CPU_CMD_EXEC) at--;
    memmove(&dev->cmds[at + 1], &dev->cmds[at], (ncmds - at) * sizeof *dev->cmds);
    dev->cmds[at] = (cpu_cmd){.kind = CPU_CMD_SIGNAL, .addr = &dev->batches_done, .value = b->number};
    ncmds++;
  }
  st = cpu_pool_submit_here(dev->pool, dev->cmds, ncmds, NULL, &here);
  if (st) {
    if (nitems) dev->batch_number--;
    goto out;
  }
  dev->commands += ncmds - (nitems ? 1 : 0);
  for (size_t i = 0; i < ncmds; i++) {
    dev->marked_run_here += (uint64_t)dev->cmds[i].run_here;
    dev->marked_no_wake += (uint64_t)dev->cmds[i].no_wake;
  }
  if (nitems) {
    *dev->batches_tail = b;
    dev->batches_tail = &b->next;
    b = NULL;
  }
out:
  free(b);
  pthread_mutex_unlock(&dev->lock);
  if (here) cpu_pool_run_claimed(dev->pool); /* unlocked: a kernel's fault report takes the lock */
  return st;
}

static const hcq_device_ops cpu_ops = {
    .backend_name = "cpu",
    .submit = op_submit,
    .mem_alloc = op_mem_alloc,
    .mem_free = op_mem_free,
    .wait_sleep = op_wait_sleep,
    .encoder = &cpu_words_encoder,
    .info = cpu_device_op_info,
    .program_load = cpu_device_op_program_load,
    .program_free = cpu_device_op_program_free,
    .signal_wait = cpu_device_op_signal_wait,
    .take_error = cpu_device_op_take_error,
    .destroy = cpu_device_op_destroy,
};

/* ------------------------------------------------------------------------------------------------ lifecycle */

hcq_status cpu_device_create(int threads, cpu_device **out_dev) {
  if (!out_dev) return hcq_status_make(HCQ_CODE_INVALID, "cpu_device_create: out_dev is NULL");
  *out_dev = NULL;
  cpu_device *dev = calloc(1, sizeof *dev);
  if (!dev) return hcq_status_make(HCQ_CODE_NOMEM, "cpu device");
  pthread_mutex_init(&dev->lock, NULL);
  dev->batches_tail = &dev->batches;
  hcq_status st = cpu_pool_create(threads, &dev->pool);
  if (!st) st = hcq_device_init(&dev->hcq, &cpu_ops, dev, "CPU:0");
  if (!st) st = cpu_device_faults_install();
  if (st) {
    if (dev->hcq.ops) hcq_device_fini(&dev->hcq);
    cpu_pool_destroy(dev->pool);
    pthread_mutex_destroy(&dev->lock);
    free(dev);
    return hcq_status_annotate(st, "cpu device");
  }
  dev->handlers_installed = 1;
  *out_dev = dev;
  return HCQ_OK;
}

void cpu_device_destroy(cpu_device *dev) {
  if (!dev) return;
  /* Kernels or copies still unfinished after the wait timeout make the device lost: its threads cannot be joined,
   * and what they may touch (the device, pool, batches, buffers, programs, fault handlers) stays for the process. */
  uint64_t want = dev->batch_number;
  if (!is_lost(dev) && cpu_signal_load(&dev->batches_done) < want) {
    uint32_t t = dev->hcq.wait_timeout_ms;
    hcq_status_free(cpu_signal_wait(&dev->batches_done, want, t));
    if (cpu_signal_load(&dev->batches_done) < want) mark_lost(dev, t);
  }
  if (is_lost(dev)) {
    pthread_mutex_lock(&lost_lock);
    dev->next_lost = lost_devices;
    lost_devices = dev;
    pthread_mutex_unlock(&lost_lock);
    return;
  }
  cpu_pool_destroy(dev->pool); /* runs what is queued, joins the threads */
  dev->pool = NULL;
  reclaim_batches(dev, true);
  hcq_device_fini(&dev->hcq);
  while (dev->programs) cpu_device_program_destroy(dev->programs);
  free(dev->deferred);
  if (dev->handlers_installed) cpu_device_faults_uninstall();
  hcq_status_free(dev->error);
  free(dev->cmds);
  pthread_mutex_destroy(&dev->lock);
  free(dev);
}

hcq_device *cpu_device_hcq(cpu_device *dev) { return dev ? &dev->hcq : NULL; }
int cpu_device_threads(const cpu_device *dev) { return dev ? cpu_pool_threads(dev->pool) : 0; }
cpu_pool *cpu_device_pool(cpu_device *dev) { return dev ? dev->pool : NULL; }
void cpu_device_set_wait_timeout(cpu_device *dev, uint32_t timeout_ms) {
  if (dev) dev->hcq.wait_timeout_ms = timeout_ms;
}
uint64_t cpu_device_commands(const cpu_device *dev) { return dev ? dev->commands : 0; }

void cpu_device_exec_marks(cpu_device *dev, uint64_t *out_run_here, uint64_t *out_no_wake) {
  pthread_mutex_lock(&dev->lock);
  *out_run_here = dev->marked_run_here;
  *out_no_wake = dev->marked_no_wake;
  pthread_mutex_unlock(&dev->lock);
}

uint64_t cpu_device_program_last_run_ns(const cpu_device_program *prog) {
  return __atomic_load_n(&prog->last_run_ns, __ATOMIC_RELAXED);
}

hcq_status cpu_device_take_error(cpu_device *dev) {
  if (!dev) return HCQ_OK;
  pthread_mutex_lock(&dev->lock);
  hcq_status st = dev->error;
  dev->error = NULL;
  pthread_mutex_unlock(&dev->lock);
  return st ? st : cpu_pool_take_error(dev->pool);
}

hcq_status cpu_device_signal_wait(cpu_device *dev, const hcq_signal *sig, uint64_t target, uint32_t timeout_ms) {
  if (!sig) return hcq_status_make(HCQ_CODE_INVALID, "cpu_device_signal_wait: NULL signal");
  hcq_status st = cpu_signal_wait((const uint64_t *)(uintptr_t)&sig->mem->value, target, timeout_ms);
  if (st && hcq_status_code(st) == HCQ_CODE_TIMEOUT && dev && __atomic_load_n(&dev->running, __ATOMIC_ACQUIRE) > 0 &&
      cpu_signal_load((const uint64_t *)(uintptr_t)&sig->mem->value) < target) {
    mark_lost(dev, timeout_ms);
    hcq_status_free(st);
    st = lost_error(dev);
    return hcq_status_annotate(st, "waiting for signal '%s' to reach %" PRIu64, sig->name, target);
  }
  return hcq_status_annotate(st, "signal '%s'", sig->name);
}

bool cpu_device_is_lost(cpu_device *dev) { return dev && is_lost(dev); }

hcq_status cpu_device_alloc(cpu_device *dev, size_t size_B, hcq_mem *out_mem) {
  if (!dev || !out_mem) return hcq_status_make(HCQ_CODE_INVALID, "cpu_device_alloc: NULL argument");
  if (is_lost(dev)) return lost_error(dev);
  memset(out_mem, 0, sizeof *out_mem);
  return hcq_status_annotate(op_mem_alloc(&dev->hcq, size_B, 0, out_mem), "cpu device buffer of %zu bytes", size_B);
}

void cpu_device_free(cpu_device *dev, hcq_mem *mem) {
  if (dev) op_mem_free(&dev->hcq, mem);
}

/* ------------------------------------------------------------------------------------------------ programs */

static hcq_status add_program(cpu_device *dev, cpu_program *elf, void *fn, const char *name,
                              cpu_device_program **out_prog) {
  cpu_device_program *p = calloc(1, sizeof *p);
  if (!p) return hcq_status_make(HCQ_CODE_NOMEM, "cpu program %s", name);
  p->magic = PROGRAM_MAGIC;
  p->dev = dev;
  p->elf = elf;
  p->fn = fn;
  snprintf(p->name, sizeof p->name, "%s", name);
  pthread_mutex_lock(&dev->lock);
  p->next = dev->programs;
  dev->programs = p;
  pthread_mutex_unlock(&dev->lock);
  *out_prog = p;
  return HCQ_OK;
}

hcq_status cpu_device_load(cpu_device *dev, const void *elf, size_t size_B, const char *name,
                           cpu_device_program **out_prog) {
  return cpu_device_load_symbol(dev, elf, size_B, name, name, out_prog);
}

hcq_status cpu_device_load_symbol(cpu_device *dev, const void *elf, size_t size_B, const char *symbol,
                                  const char *name, cpu_device_program **out_prog) {
  if (!dev || !elf || !symbol || !name || !out_prog)
    return hcq_status_make(HCQ_CODE_INVALID, "cpu_device_load: NULL argument");
  *out_prog = NULL;
  if (is_lost(dev)) return lost_error(dev);
  cpu_program *prog = NULL;
  void *fn = NULL;
  hcq_status st = cpu_program_load(elf, size_B, &prog);
  if (!st) st = cpu_program_symbol(prog, symbol, &fn);
  void *arrived = NULL;
  if (!st) hcq_status_free(cpu_program_symbol(prog, "hcq_arrived", &arrived)); /* absent: no cross-thread reduce */
  if (!st) st = add_program(dev, prog, fn, name, out_prog);
  if (st) {
    cpu_program_destroy(prog);
    return hcq_status_annotate(st, "loading kernel %s", name);
  }
  (*out_prog)->arrived = arrived;
  return HCQ_OK;
}

hcq_status cpu_device_wrap(cpu_device *dev, void *fn, const char *name, cpu_device_program **out_prog) {
  if (!dev || !fn || !name || !out_prog) return hcq_status_make(HCQ_CODE_INVALID, "cpu_device_wrap: NULL argument");
  if (is_lost(dev)) return lost_error(dev);
  return add_program(dev, NULL, fn, name, out_prog);
}

void cpu_device_program_destroy(cpu_device_program *p) {
  if (!p) return;
  cpu_device *dev = p->dev;
  pthread_mutex_lock(&dev->lock);
  if (dev->lost) { /* its code may be running: keep it (it stays on dev->programs) */
    pthread_mutex_unlock(&dev->lock);
    return;
  }
  for (cpu_device_program **pp = &dev->programs; *pp; pp = &(*pp)->next)
    if (*pp == p) {
      *pp = p->next;
      break;
    }
  reclaim_batches(dev, false);
  if (dev->batches) { /* queued commands may still call it */
    p->next = dev->doomed;
    dev->doomed = p;
    p = NULL;
  }
  pthread_mutex_unlock(&dev->lock);
  if (p) program_free(p);
}

uint64_t cpu_device_program_handle(const cpu_device_program *p) { return (uint64_t)(uintptr_t)p; }
void *cpu_device_program_fn(const cpu_device_program *p) { return p ? p->fn : NULL; }
