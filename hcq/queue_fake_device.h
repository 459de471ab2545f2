/* A fake hcq backend for tests and benchmarks (header-only, static functions).
 *
 * submit() keeps a copy of the words it receives per queue kind and counts how many differ from the previous
 * submission of the same length (what actually changed on the "hardware" side). With `execute` set it decodes the
 * word format of hcq/README.md independently of the encoder: SIGNAL stores the 64-bit value, WAIT fails if the
 * value is not yet reached (the fake runs synchronously, so it cannot block), TIMESTAMP stores a time, EXEC and
 * COPY are logged (EXEC with the buffer addresses read from its argument memory). Memory is host memory; va == host.
 */
#ifndef HCQ_QUEUE_FAKE_DEVICE_H
#define HCQ_QUEUE_FAKE_DEVICE_H

#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_words.h"
#include "hcq/args.h"
#include "hcq/queue.h"
#include "hcq/signal.h"

#define FAKE_MAX_BUFS 8

typedef struct fake_exec {
  uint64_t prog, args_va;
  uint32_t nbufs, nvals, global[3], local[3];
  uint64_t bufs[FAKE_MAX_BUFS];
} fake_exec;

typedef struct fake_copy {
  uint64_t dst, src, size_B;
} fake_copy;

typedef struct fake_dev {
  hcq_device dev;
  bool execute;
  uint32_t *last[2];
  size_t last_n[2];
  size_t submits, changed_words_last, words_last;
  size_t mem_live; /* allocations not yet freed */
  fake_exec *execs;
  size_t nexecs, execs_cap;
  fake_copy *copies;
  size_t ncopies, copies_cap;
  uint64_t signals_done, waits_done;
} fake_dev;

static hcq_status fake_mem_alloc(hcq_device *dev, size_t size_B, unsigned flags, hcq_mem *out) {
  (void)flags;
  fake_dev *f = dev->impl;
  void *p = aligned_alloc(4096, (size_B + 4095) & ~(size_t)4095);
  if (!p) return hcq_status_make(HCQ_CODE_NOMEM, "fake alloc %zu", size_B);
  memset(p, 0, size_B);
  *out = (hcq_mem){.host = p, .va = (uint64_t)(uintptr_t)p, .size_B = size_B};
  f->mem_live++;
  return HCQ_OK;
}

static void fake_mem_free(hcq_device *dev, hcq_mem *m) {
  fake_dev *f = dev->impl;
  free(m->host);
  m->host = NULL;
  f->mem_live--;
}

static uint64_t fake_u64(const uint32_t *w) { return (uint64_t)w[0] | ((uint64_t)w[1] << 32); }

static hcq_status fake_execute(fake_dev *f, const uint32_t *w, size_t n) {
  static const size_t len_of[] = {1, 13, 7, 5, 5, 3, 1};
  for (size_t i = 0; i < n;) {
    uint32_t op = w[i] & 0xffff, len = w[i] >> 16;
    if (op >= sizeof(len_of) / sizeof(len_of[0]) || len != len_of[op] || i + len > n)
      return hcq_status_make(HCQ_CODE_INVALID, "fake: bad header 0x%08x at word %zu", w[i], i);
    const uint32_t *a = w + i + 1;
    if (op == 1) {
      if (f->nexecs == f->execs_cap) {
        f->execs_cap = f->execs_cap ? 2 * f->execs_cap : 64;
        f->execs = realloc(f->execs, f->execs_cap * sizeof(*f->execs));
        if (!f->execs) return hcq_status_make(HCQ_CODE_NOMEM, "fake exec log");
      }
      fake_exec *e = &f->execs[f->nexecs++];
      memset(e, 0, sizeof(*e));
      e->prog = fake_u64(a);
      e->args_va = fake_u64(a + 2);
      e->nbufs = a[4];
      e->nvals = a[5];
      for (int k = 0; k < 3; k++) e->global[k] = a[6 + k], e->local[k] = a[9 + k];
      for (uint32_t b = 0; b < e->nbufs && b < FAKE_MAX_BUFS; b++)
        memcpy(&e->bufs[b], (const uint8_t *)(uintptr_t)e->args_va + 8 * b, 8);
    } else if (op == 2) {
      if (f->ncopies == f->copies_cap) {
        f->copies_cap = f->copies_cap ? 2 * f->copies_cap : 64;
        f->copies = realloc(f->copies, f->copies_cap * sizeof(*f->copies));
        if (!f->copies) return hcq_status_make(HCQ_CODE_NOMEM, "fake copy log");
      }
      f->copies[f->ncopies++] = (fake_copy){fake_u64(a), fake_u64(a + 2), fake_u64(a + 4)};
    } else if (op == 3) {
      __atomic_store_n((uint64_t *)(uintptr_t)fake_u64(a), fake_u64(a + 2), __ATOMIC_RELEASE);
      f->signals_done++;
    } else if (op == 4) {
      uint64_t have = __atomic_load_n((uint64_t *)(uintptr_t)fake_u64(a), __ATOMIC_ACQUIRE);
      if (have < fake_u64(a + 2))
        return hcq_status_make(HCQ_CODE_INVALID, "fake: wait at word %zu for %llu would block (value %llu)", i,
                               (unsigned long long)fake_u64(a + 2), (unsigned long long)have);
      f->waits_done++;
    } else if (op == 5) {
      __atomic_store_n((uint64_t *)(uintptr_t)(fake_u64(a) + 8), hcq_now_ns(), __ATOMIC_RELEASE);
    }
    i += len;
  }
  return HCQ_OK;
}

static hcq_status fake_submit(hcq_device *dev, hcq_queue_kind kind, const uint32_t *words, size_t count) {
  fake_dev *f = dev->impl;
  size_t changed = count;
  if (f->last[kind] && f->last_n[kind] == count) {
    changed = 0;
    for (size_t i = 0; i < count; i++) changed += f->last[kind][i] != words[i];
  } else {
    free(f->last[kind]);
    f->last[kind] = malloc((count ? count : 1) * sizeof(uint32_t));
    if (!f->last[kind]) return hcq_status_make(HCQ_CODE_NOMEM, "fake word copy");
    f->last_n[kind] = count;
  }
  if (count) memcpy(f->last[kind], words, count * sizeof(uint32_t));
  f->changed_words_last = changed;
  f->words_last = count;
  f->submits++;
  return f->execute ? fake_execute(f, words, count) : HCQ_OK;
}

static const hcq_device_ops fake_ops = {
    .backend_name = "fake", .submit = fake_submit, .mem_alloc = fake_mem_alloc, .mem_free = fake_mem_free,
    .encoder = &cpu_words_encoder};

static hcq_status fake_dev_init(fake_dev *f, const char *name, bool execute) {
  memset(f, 0, sizeof(*f));
  f->execute = execute;
  return hcq_device_init(&f->dev, &fake_ops, f, name);
}

static void fake_dev_fini(fake_dev *f) {
  hcq_device_fini(&f->dev);
  free(f->last[0]);
  free(f->last[1]);
  free(f->execs);
  free(f->copies);
}

#endif
