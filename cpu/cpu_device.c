/* cpu_device: see cpu_device.h. Fault catching lives in cpu_device_fault.c. */
#include "cpu/cpu_device.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_device_internal.h"
#include "cpu/cpu_elf.h"
#include "cpu/cpu_kernel.h"
#include "cpu/cpu_mem.h"
#include "hcq/queue.h"
#include "hcq/signal.h"

#define PROGRAM_MAGIC 0x48435150524f4755ull /* "HCQPROGU" */

struct cpu_device_program {
  uint64_t magic;
  cpu_device *dev;
  cpu_program *elf; /* NULL for wrapped host functions */
  void *fn;
  char name[CPU_DEVICE_NAME_MAX];
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
  pthread_mutex_t lock; /* programs, batches, cmds, error */
  cpu_device_program *programs;
  cpu_batch *batches, **batches_tail;
  uint64_t batch_number;
  uint64_t batches_done; /* signal: the pool stores the number of each finished batch */
  cpu_cmd *cmds;
  size_t cmds_cap;
  uint64_t commands;
  hcq_status error;
  int handlers_installed;
};

/* ------------------------------------------------------------------------------------------------ memory ops */

static hcq_status op_mem_alloc(hcq_device *hd, size_t size_B, unsigned flags, hcq_mem *out) {
  (void)hd;
  (void)flags;
  void *p = NULL;
  HCQ_TRY(cpu_alloc(size_B ? size_B : 1, 0, &p));
  *out = (hcq_mem){.host = p, .va = (uint64_t)(uintptr_t)p, .size_B = size_B, .handle = size_B ? size_B : 1};
  return HCQ_OK;
}

static void op_mem_free(hcq_device *hd, hcq_mem *m) {
  (void)hd;
  if (!m || !m->host) return;
  cpu_free(m->host, (size_t)m->handle);
  m->host = NULL;
  m->va = 0;
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

/* Free batches the pool has finished. Caller holds the lock. */
static void reclaim_batches(cpu_device *dev, bool all) {
  uint64_t done = cpu_signal_load(&dev->batches_done);
  while (dev->batches && (all || dev->batches->number <= done)) {
    cpu_batch *b = dev->batches;
    dev->batches = b->next;
    free(b);
  }
  if (!dev->batches) dev->batches_tail = &dev->batches;
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
    uint32_t op = HCQ_HDR_OP(words[i]), len = HCQ_HDR_LEN(words[i]);
    if (op >= HCQ_OP_COUNT || len != hcq_op_length_words[op] || len > count - i)
      return hcq_status_make(HCQ_CODE_INVALID, "cpu device: bad command header 0x%08x at word %zu of %zu", words[i],
                             i, count);
    const uint32_t *a = words + i + 1;
    cpu_cmd *c = b ? &dev->cmds[ncmds] : NULL;
    switch ((hcq_op)op) {
      case HCQ_OP_NOP:
      case HCQ_OP_BARRIER:
      case HCQ_OP_COUNT: break;
      case HCQ_OP_EXEC: {
        uint64_t prog = u64_at(a), args_va = u64_at(a + 2);
        uint32_t nbufs = a[4], nvals = a[5], gx = a[6], gy = a[7], gz = a[8];
        if (!program_known(dev, prog))
          return hcq_status_make(HCQ_CODE_INVALID, "cpu device: EXEC at word %zu names unknown program 0x%llx", i,
                                 (unsigned long long)prog);
        const cpu_device_program *p = (const cpu_device_program *)(uintptr_t)prog;
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
          w->exec.fn = p->fn;
          w->exec.nargs = (int)(nbufs + nvals);
          const uint8_t *ab = (const uint8_t *)(uintptr_t)args_va;
          for (uint32_t k = 0; k < nbufs; k++) memcpy(&w->exec.args[k], ab + 8u * k, 8);
          for (uint32_t k = 0; k < nvals; k++) {
            int32_t v;
            memcpy(&v, ab + 8u * nbufs + 4u * k, 4);
            w->exec.args[nbufs + k] = (uint64_t)(int64_t)v;
          }
          *c = (cpu_cmd){.kind = CPU_CMD_EXEC, .threads = (int)gx, .fn = cpu_device_exec_task, .ctx = w};
        }
        nitems++;
        ncmds++;
        break;
      }
      case HCQ_OP_COPY: {
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
      case HCQ_OP_SIGNAL:
      case HCQ_OP_WAIT:
      case HCQ_OP_TIMESTAMP: {
        uint64_t addr = u64_at(a) + (op == HCQ_OP_TIMESTAMP ? 8 : 0);
        if (!addr || addr % 8)
          return hcq_status_make(HCQ_CODE_INVALID, "cpu device: command %u at word %zu: signal address 0x%llx", op, i,
                                 (unsigned long long)addr);
        if (b) {
          *c = (cpu_cmd){.kind = op == HCQ_OP_SIGNAL ? CPU_CMD_SIGNAL : op == HCQ_OP_WAIT ? CPU_CMD_WAIT : CPU_CMD_TIMESTAMP,
                         .addr = (uint64_t *)(uintptr_t)addr,
                         .value = op == HCQ_OP_TIMESTAMP ? 0 : u64_at(a + 2),
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
  pthread_mutex_lock(&dev->lock);
  hcq_status st = HCQ_OK;
  cpu_batch *b = NULL;
  size_t ncmds = 0, nitems = 0;
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
    dev->cmds[ncmds++] = (cpu_cmd){.kind = CPU_CMD_SIGNAL, .addr = &dev->batches_done, .value = b->number};
  }
  st = cpu_pool_submit(dev->pool, dev->cmds, ncmds, NULL);
  if (st) {
    if (nitems) dev->batch_number--;
    goto out;
  }
  dev->commands += ncmds - (nitems ? 1 : 0);
  if (nitems) {
    *dev->batches_tail = b;
    dev->batches_tail = &b->next;
    b = NULL;
  }
out:
  free(b);
  pthread_mutex_unlock(&dev->lock);
  return st;
}

static const hcq_device_ops cpu_ops = {
    .backend_name = "cpu",
    .submit = op_submit,
    .mem_alloc = op_mem_alloc,
    .mem_free = op_mem_free,
    .wait_sleep = op_wait_sleep,
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
  cpu_pool_destroy(dev->pool); /* runs what is queued, joins the threads */
  dev->pool = NULL;
  hcq_device_fini(&dev->hcq);
  reclaim_batches(dev, true);
  while (dev->programs) cpu_device_program_destroy(dev->programs);
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

hcq_status cpu_device_take_error(cpu_device *dev) {
  if (!dev) return HCQ_OK;
  pthread_mutex_lock(&dev->lock);
  hcq_status st = dev->error;
  dev->error = NULL;
  pthread_mutex_unlock(&dev->lock);
  return st ? st : cpu_pool_take_error(dev->pool);
}

hcq_status cpu_device_signal_wait(cpu_device *dev, const hcq_signal *sig, uint64_t target, uint32_t timeout_ms) {
  (void)dev;
  if (!sig) return hcq_status_make(HCQ_CODE_INVALID, "cpu_device_signal_wait: NULL signal");
  return hcq_status_annotate(cpu_signal_wait((const uint64_t *)(uintptr_t)&sig->mem->value, target, timeout_ms),
                             "signal '%s'", sig->name);
}

hcq_status cpu_device_alloc(cpu_device *dev, size_t size_B, hcq_mem *out_mem) {
  if (!dev || !out_mem) return hcq_status_make(HCQ_CODE_INVALID, "cpu_device_alloc: NULL argument");
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
  if (!dev || !elf || !name || !out_prog) return hcq_status_make(HCQ_CODE_INVALID, "cpu_device_load: NULL argument");
  *out_prog = NULL;
  cpu_program *prog = NULL;
  void *fn = NULL;
  hcq_status st = cpu_program_load(elf, size_B, &prog);
  if (!st) st = cpu_program_symbol(prog, name, &fn);
  if (!st) st = add_program(dev, prog, fn, name, out_prog);
  if (st) {
    cpu_program_destroy(prog);
    return hcq_status_annotate(st, "loading kernel %s", name);
  }
  return HCQ_OK;
}

hcq_status cpu_device_wrap(cpu_device *dev, void *fn, const char *name, cpu_device_program **out_prog) {
  if (!dev || !fn || !name || !out_prog) return hcq_status_make(HCQ_CODE_INVALID, "cpu_device_wrap: NULL argument");
  return add_program(dev, NULL, fn, name, out_prog);
}

void cpu_device_program_destroy(cpu_device_program *p) {
  if (!p) return;
  cpu_device *dev = p->dev;
  pthread_mutex_lock(&dev->lock);
  for (cpu_device_program **pp = &dev->programs; *pp; pp = &(*pp)->next)
    if (*pp == p) {
      *pp = p->next;
      break;
    }
  pthread_mutex_unlock(&dev->lock);
  cpu_program_destroy(p->elf);
  p->magic = 0;
  free(p);
}

uint64_t cpu_device_program_handle(const cpu_device_program *p) { return (uint64_t)(uintptr_t)p; }
void *cpu_device_program_fn(const cpu_device_program *p) { return p ? p->fn : NULL; }
