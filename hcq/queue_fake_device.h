/* A fake GPU backend for tests and benchmarks (header-only, static functions): its own native packet format,
 * clearly not the CPU's, so that everything above the encoder seam is exercised as a GPU driver would use it.
 *
 * Packets are PM4-like type-3 packets (the AMD PM4 header layout: type [31:30] = 3, count [29:16] = payload
 * dwords - 1, opcode [15:8]; public reference: the "PM4 packet" description in AMD's Radeon/GCN ISA and
 * tinygrad's ops_amd.py). The opcodes and payloads are this fake's own:
 *
 * | opcode | name      | payload dwords                                                                      |
 * |--------|-----------|-------------------------------------------------------------------------------------|
 * | 0x10   | NOP       | any                                                                                 |
 * | 0x20   | EXEC      | 9: prog lo/hi, args lo/hi, nbufs [15:0] | nvals [31:16], gx, gy, gz,               |
 * |        |           |    lx [10:0] | ly [21:11] | lz [31:22]                                                 |
 * | 0x21   | COPY      | 6: dst lo/hi, src lo/hi, size lo/hi                                                 |
 * | 0x22   | RELEASE   | 5: ctl (data_sel [1:0]: 1 = store value, 2 = store time at addr + 8), addr lo/hi,   |
 * |        |           |    value lo/hi                                                                      |
 * | 0x23   | WAIT_MEM  | 5: ctl (function [2:0] = 5: >=, mem [8] = 1), addr lo/hi, ref lo/hi                 |
 * | 0x24   | BARRIER   | 1: ctl = 0                                                                          |
 *
 * The command processor (fake_execute, with `execute` set) decodes this independently of the encoder and rejects
 * anything malformed (wrong type, reserved bits, unknown opcode, wrong count, truncated packet, bad control word,
 * NULL or misaligned signal address, local size 0) naming the packet, before running any packet of the list.
 * RELEASE stores, WAIT_MEM fails if the value is not yet reached (the fake runs synchronously and cannot block),
 * COPY copies (with run_copies set; otherwise it is only logged), EXEC calls a host function registered with fake_dev_program (other program handles are only
 * logged) once per global id with the buffer addresses and values of its argument memory.
 *
 * Device interface (hcq/device.h; the runtime layer opens it as "fakegpu" once a test registers fake_open with
 * hcq_rt_register): info (a mock, target "fake"), program_load (target "fake": the symbol names a host function
 * registered with fake_dev_program_named; the default kernel-argument layout), take_error (a program registered
 * with a NULL function "faults" when executed: HCQ_CODE_KERNEL_FAULT, recorded once, the rest still runs).
 *
 * Queue words live in fake "device" memory (the queue_storage hook): submit reads them in place and counts that
 * in zero_copy_submits. submit() also keeps a copy per queue kind (test instrumentation only) and counts the
 * words that differ from the previous submission of the same length. Memory is host memory; va == host.
 */
#ifndef HCQ_QUEUE_FAKE_DEVICE_H
#define HCQ_QUEUE_FAKE_DEVICE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hcq/args.h"
#include "hcq/queue.h"
#include "hcq/signal.h"

#define FAKE_MAX_BUFS 8
#define FAKE_MAX_PROGS 8
#define FAKE_PROG_TAG 0xFA4E000000000000ULL

enum { FAKE_OP_NOP = 0x10, FAKE_OP_EXEC = 0x20, FAKE_OP_COPY = 0x21, FAKE_OP_RELEASE = 0x22, FAKE_OP_WAIT = 0x23,
       FAKE_OP_BARRIER = 0x24 };
#define FAKE_PKT3(op, payload_dw) ((3u << 30) | ((uint32_t)((payload_dw)-1) << 16) | ((uint32_t)(op) << 8))
#define FAKE_SEL_VALUE 1u
#define FAKE_SEL_TIME 2u
#define FAKE_WAIT_GEQ_MEM (5u | (1u << 8))

/* A host "kernel": gid is the global id, bufs/vals come from the EXEC's argument memory. */
typedef void (*fake_kernel_fn)(const uint32_t gid[3], const uint64_t *bufs, uint32_t nbufs, const int32_t *vals,
                               uint32_t nvals);

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
  bool run_copies; /* COPY moves the bytes (off by default: tests may log copies between made-up addresses) */
  bool no_log;     /* benchmarks: do not keep the exec/copy logs */
  uint32_t *last[2];
  size_t last_n[2];
  size_t submits, changed_words_last, words_last, zero_copy_submits;
  size_t mem_live; /* allocations not yet freed */
  fake_exec *execs;
  size_t nexecs, execs_cap;
  fake_copy *copies;
  size_t ncopies, copies_cap;
  uint64_t signals_done, waits_done;
  fake_kernel_fn progs[FAKE_MAX_PROGS];
  const char *prog_names[FAKE_MAX_PROGS]; /* fake_dev_program_named; NULL for fake_dev_program */
  size_t nprogs;
  hcq_status error; /* the first kernel fault since take_error */
  hcq_mem storage[4]; /* live queue storage blocks (submit checks that words lie in one) */
} fake_dev;

/* ------------------------------------------------------------------------------------------- encoder */

static hcq_status fake_packet(hcq_queue *q, uint32_t op, uint32_t payload_dw, size_t *out_at) {
  uint32_t *w;
  HCQ_TRY(hcq_queue_reserve(q, 1 + payload_dw, &w));
  w[0] = FAKE_PKT3(op, payload_dw);
  *out_at = hcq_queue_word_count(q) - payload_dw; /* index of the first payload dword */
  return HCQ_OK;
}

static hcq_status fake_enc_exec(hcq_queue *q, hcq_val prog, const hcq_args *args, const hcq_val global[3],
                                const hcq_val local[3]) {
  size_t at;
  if (args && (args->nbufs > 0xffff || args->nvals > 0xffff))
    return hcq_status_make(HCQ_CODE_INVALID, "fake exec: %u buffers / %u values do not fit 16 bits", args->nbufs,
                           args->nvals);
  HCQ_TRY(fake_packet(q, FAKE_OP_EXEC, 9, &at));
  HCQ_TRY(hcq_queue_patch_word(q, at, prog, 64, 0));
  HCQ_TRY(hcq_queue_patch_word(q, at + 2, hcq_imm(args ? args->va : 0), 64, 0));
  HCQ_TRY(hcq_queue_patch_bits(q, at + 4, 0, 16, hcq_imm(args ? args->nbufs : 0)));
  HCQ_TRY(hcq_queue_patch_bits(q, at + 4, 16, 16, hcq_imm(args ? args->nvals : 0)));
  for (int k = 0; k < 3; k++) HCQ_TRY(hcq_queue_patch_word(q, at + 5 + k, global[k], 32, 0));
  HCQ_TRY(hcq_queue_patch_bits(q, at + 8, 0, 11, local[0]));
  HCQ_TRY(hcq_queue_patch_bits(q, at + 8, 11, 11, local[1]));
  return hcq_queue_patch_bits(q, at + 8, 22, 10, local[2]);
}

static hcq_status fake_enc_copy(hcq_queue *q, hcq_val dst, hcq_val src, hcq_val size_B) {
  size_t at;
  HCQ_TRY(fake_packet(q, FAKE_OP_COPY, 6, &at));
  HCQ_TRY(hcq_queue_patch_word(q, at, dst, 64, 0));
  HCQ_TRY(hcq_queue_patch_word(q, at + 2, src, 64, 0));
  return hcq_queue_patch_word(q, at + 4, size_B, 64, 0);
}

static hcq_status fake_release(hcq_queue *q, uint32_t sel, hcq_val sig, hcq_val value) {
  size_t at;
  HCQ_TRY(fake_packet(q, FAKE_OP_RELEASE, 5, &at));
  HCQ_TRY(hcq_queue_patch_bits(q, at, 0, 2, hcq_imm(sel)));
  HCQ_TRY(hcq_queue_patch_word(q, at + 1, sig, 64, 0));
  return hcq_queue_patch_word(q, at + 3, value, 64, 0);
}
static hcq_status fake_enc_signal(hcq_queue *q, hcq_val sig, hcq_val value) {
  return fake_release(q, FAKE_SEL_VALUE, sig, value);
}
static hcq_status fake_enc_timestamp(hcq_queue *q, hcq_val sig) { return fake_release(q, FAKE_SEL_TIME, sig, hcq_imm(0)); }

static hcq_status fake_enc_wait(hcq_queue *q, hcq_val sig, hcq_val value) {
  size_t at;
  HCQ_TRY(fake_packet(q, FAKE_OP_WAIT, 5, &at));
  HCQ_TRY(hcq_queue_patch_word(q, at, hcq_imm(FAKE_WAIT_GEQ_MEM), 32, 0));
  HCQ_TRY(hcq_queue_patch_word(q, at + 1, sig, 64, 0));
  return hcq_queue_patch_word(q, at + 3, value, 64, 0);
}

static hcq_status fake_enc_barrier(hcq_queue *q) {
  size_t at;
  return fake_packet(q, FAKE_OP_BARRIER, 1, &at);
}

static const hcq_encoder fake_encoder = {fake_enc_exec, fake_enc_copy, fake_enc_signal, fake_enc_wait,
                                         fake_enc_timestamp, fake_enc_barrier};

/* ------------------------------------------------------------------------------------------- memory */

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
  for (size_t i = 0; i < 4; i++)
    if (f->storage[i].host == m->host) f->storage[i] = (hcq_mem){0};
  free(m->host);
  m->host = NULL;
  f->mem_live--;
}

static hcq_status fake_queue_storage(hcq_device *dev, hcq_queue_kind kind, size_t size_B, hcq_mem *out) {
  (void)kind;
  fake_dev *f = dev->impl;
  HCQ_TRY(fake_mem_alloc(dev, size_B, 0, out));
  for (size_t i = 0; i < 4; i++)
    if (!f->storage[i].host) return f->storage[i] = *out, HCQ_OK;
  return HCQ_OK; /* more than 4 live queues: still fine, just not counted as zero-copy */
}

/* ------------------------------------------------------------------------------------------- command processor */

static uint64_t fake_u64(const uint32_t *w) { return (uint64_t)w[0] | ((uint64_t)w[1] << 32); }

static hcq_status fake_bad(size_t i, uint32_t hdr, const char *why) {
  return hcq_status_make(HCQ_CODE_INVALID, "fake gpu: packet at dword %zu (header 0x%08x): %s", i, hdr, why);
}

/* One pass checks every packet; with `run` it also executes them. */
static hcq_status fake_walk(fake_dev *f, const uint32_t *w, size_t n, bool run) {
  static const uint32_t payload_of[] = {[FAKE_OP_EXEC - 0x20] = 9, [FAKE_OP_COPY - 0x20] = 6,
                                        [FAKE_OP_RELEASE - 0x20] = 5, [FAKE_OP_WAIT - 0x20] = 5,
                                        [FAKE_OP_BARRIER - 0x20] = 1};
  for (size_t i = 0; i < n;) {
    uint32_t h = w[i], op = (h >> 8) & 0xff, payload = ((h >> 16) & 0x3fff) + 1;
    if (h >> 30 != 3) return fake_bad(i, h, "not a type-3 packet");
    if (h & 0xff) return fake_bad(i, h, "reserved bits [7:0] set");
    if (payload > n - i - 1) return fake_bad(i, h, "packet runs past the end of the list");
    if (op != FAKE_OP_NOP && (op < 0x20 || op > FAKE_OP_BARRIER)) return fake_bad(i, h, "unknown opcode");
    if (op != FAKE_OP_NOP && payload != payload_of[op - 0x20]) return fake_bad(i, h, "wrong dword count for the opcode");
    const uint32_t *a = w + i + 1;
    if (op == FAKE_OP_EXEC) {
      uint64_t prog = fake_u64(a), args_va = fake_u64(a + 2);
      uint32_t nbufs = a[4] & 0xffff, nvals = a[4] >> 16, l[3] = {a[8] & 0x7ff, (a[8] >> 11) & 0x7ff, a[8] >> 22};
      if (!l[0] || !l[1] || !l[2]) return fake_bad(i, h, "local size 0");
      if ((nbufs || nvals) && !args_va) return fake_bad(i, h, "arguments without argument memory");
      if ((prog & 0xffff000000000000ULL) == FAKE_PROG_TAG && (prog & 0xffffffffu) >= f->nprogs)
        return fake_bad(i, h, "unknown program");
      if (run && !f->no_log) {
        if (f->nexecs == f->execs_cap) {
          size_t cap = f->execs_cap ? 2 * f->execs_cap : 64;
          fake_exec *e = realloc(f->execs, cap * sizeof(*e));
          if (!e) return hcq_status_make(HCQ_CODE_NOMEM, "fake exec log");
          f->execs = e, f->execs_cap = cap;
        }
        fake_exec *e = &f->execs[f->nexecs++];
        memset(e, 0, sizeof(*e));
        *e = (fake_exec){.prog = prog, .args_va = args_va, .nbufs = nbufs, .nvals = nvals,
                         .global = {a[5], a[6], a[7]}, .local = {l[0], l[1], l[2]}};
        for (uint32_t b = 0; b < nbufs && b < FAKE_MAX_BUFS; b++)
          memcpy(&e->bufs[b], (const uint8_t *)(uintptr_t)args_va + hcq_kernarg_buf_offset_B(0, b), 8);
        if ((prog & 0xffff000000000000ULL) == FAKE_PROG_TAG && !f->progs[prog & 0xffffffffu]) {
          if (!f->error)
            f->error = hcq_status_make(HCQ_CODE_KERNEL_FAULT, "fake gpu: kernel %s faulted at global id 0,0,0",
                                       f->prog_names[prog & 0xffffffffu] ? f->prog_names[prog & 0xffffffffu] : "?");
        } else if ((prog & 0xffff000000000000ULL) == FAKE_PROG_TAG && nbufs <= FAKE_MAX_BUFS && nvals <= 16) {
          int32_t vals[16];
          if (nvals) memcpy(vals, (const uint8_t *)(uintptr_t)args_va + hcq_kernarg_val_offset_B(0, nbufs, 0), 4 * nvals);
          uint32_t gid[3];
          for (gid[2] = 0; gid[2] < a[7]; gid[2]++)
            for (gid[1] = 0; gid[1] < a[6]; gid[1]++)
              for (gid[0] = 0; gid[0] < a[5]; gid[0]++) f->progs[prog & 0xffffffffu](gid, e->bufs, nbufs, vals, nvals);
        }
      }
    } else if (op == FAKE_OP_COPY) {
      uint64_t dst = fake_u64(a), src = fake_u64(a + 2), size = fake_u64(a + 4);
      if (size && (!dst || !src)) return fake_bad(i, h, "copy with a NULL address");
      if (run && !f->no_log) {
        if (f->ncopies == f->copies_cap) {
          size_t cap = f->copies_cap ? 2 * f->copies_cap : 64;
          fake_copy *c = realloc(f->copies, cap * sizeof(*c));
          if (!c) return hcq_status_make(HCQ_CODE_NOMEM, "fake copy log");
          f->copies = c, f->copies_cap = cap;
        }
        f->copies[f->ncopies++] = (fake_copy){dst, src, size};
        if (size && f->run_copies) memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, size);
      }
    } else if (op == FAKE_OP_RELEASE || op == FAKE_OP_WAIT) {
      uint64_t addr = fake_u64(a + 1), v = fake_u64(a + 3);
      if (!addr || addr % 8) return fake_bad(i, h, "signal address NULL or not 8-byte aligned");
      if (op == FAKE_OP_RELEASE && (a[0] & ~3u || !(a[0] & 3u) || (a[0] & 3u) == 3u))
        return fake_bad(i, h, "bad RELEASE control word");
      if (op == FAKE_OP_WAIT && a[0] != FAKE_WAIT_GEQ_MEM) return fake_bad(i, h, "bad WAIT_MEM control word");
      if (run && op == FAKE_OP_RELEASE && a[0] == FAKE_SEL_VALUE) {
        __atomic_store_n((uint64_t *)(uintptr_t)addr, v, __ATOMIC_RELEASE);
        f->signals_done++;
      } else if (run && op == FAKE_OP_RELEASE) {
        __atomic_store_n((uint64_t *)(uintptr_t)(addr + 8), hcq_now_ns(), __ATOMIC_RELEASE);
      } else if (run) {
        uint64_t have = __atomic_load_n((uint64_t *)(uintptr_t)addr, __ATOMIC_ACQUIRE);
        if (have < v)
          return hcq_status_make(HCQ_CODE_INVALID, "fake gpu: wait at dword %zu for %llu would block (value %llu)", i,
                                 (unsigned long long)v, (unsigned long long)have);
        f->waits_done++;
      }
    } else if (op == FAKE_OP_BARRIER && a[0]) {
      return fake_bad(i, h, "bad BARRIER control word");
    }
    i += 1 + payload;
  }
  return HCQ_OK;
}

static hcq_status fake_execute(fake_dev *f, const uint32_t *w, size_t n) {
  HCQ_TRY(fake_walk(f, w, n, false)); /* a malformed list runs nothing */
  return fake_walk(f, w, n, true);
}

static hcq_status fake_submit(hcq_device *dev, hcq_queue_kind kind, const uint32_t *words, size_t count) {
  fake_dev *f = dev->impl;
  for (size_t i = 0; i < 4; i++)
    if (f->storage[i].host && words >= (const uint32_t *)f->storage[i].host &&
        words + count <= (const uint32_t *)f->storage[i].host + f->storage[i].size_B / 4)
      f->zero_copy_submits++;
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

/* ------------------------------------------------------------------------------------------- device interface */

static hcq_status fake_info(hcq_device *dev, hcq_device_info *out) {
  memset(out, 0, sizeof(*out));
  snprintf(out->name, sizeof(out->name), "%s", dev->name);
  snprintf(out->backend, sizeof(out->backend), "fakegpu");
  snprintf(out->arch, sizeof(out->arch), "fake1");
  snprintf(out->target, sizeof(out->target), "fake");
  out->features = HCQ_FEATURE_LOCAL_SIZE | HCQ_FEATURE_KERNEL_FAULTS | HCQ_FEATURE_TIMESTAMPS;
  out->is_mock = true;
  out->max_global[0] = out->max_global[1] = out->max_global[2] = 65535;
  return HCQ_OK;
}

static hcq_status fake_program_load(hcq_device *dev, hcq_program *prog, uint64_t *out_handle) {
  fake_dev *f = dev->impl;
  if (strcmp(prog->target, "fake") != 0)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel %s is compiled for %s; %s runs target fake", prog->name,
                           prog->target, dev->name);
  for (size_t i = 0; i < f->nprogs; i++)
    if (f->prog_names[i] && !strcmp(f->prog_names[i], prog->symbol)) {
      HCQ_TRY(hcq_program_layout(prog, 0));
      *out_handle = FAKE_PROG_TAG | i;
      return HCQ_OK;
    }
  return hcq_status_make(HCQ_CODE_NOT_FOUND, "kernel %s: no symbol %s in the binary", prog->name, prog->symbol);
}

static void fake_program_free(hcq_device *dev, uint64_t handle) { (void)dev, (void)handle; }

static hcq_status fake_take_error(hcq_device *dev) {
  fake_dev *f = dev->impl;
  hcq_status st = f->error;
  f->error = NULL;
  return st;
}

static void fake_dev_fini(fake_dev *f);
static void fake_destroy(hcq_device *dev) {
  fake_dev *f = dev->impl;
  fake_dev_fini(f);
  free(f);
}

static const hcq_device_ops fake_ops = {.backend_name = "fakegpu",
                                        .submit = fake_submit,
                                        .mem_alloc = fake_mem_alloc,
                                        .mem_free = fake_mem_free,
                                        .encoder = &fake_encoder,
                                        .queue_storage = fake_queue_storage,
                                        .info = fake_info,
                                        .program_load = fake_program_load,
                                        .program_free = fake_program_free,
                                        .take_error = fake_take_error,
                                        .destroy = fake_destroy};

static hcq_status fake_dev_init(fake_dev *f, const char *name, bool execute) {
  memset(f, 0, sizeof(*f));
  f->execute = execute;
  return hcq_device_init(&f->dev, &fake_ops, f, name);
}

/* The program handle under which EXEC calls fn. */
static inline uint64_t fake_dev_program(fake_dev *f, fake_kernel_fn fn) {
  if (f->nprogs == FAKE_MAX_PROGS) return 0;
  f->progs[f->nprogs] = fn;
  return FAKE_PROG_TAG | f->nprogs++;
}

/* A program the runtime layer can load by symbol `name` (fn NULL: it faults when executed). */
static inline uint64_t fake_dev_program_named(fake_dev *f, const char *name, fake_kernel_fn fn) {
  if (f->nprogs == FAKE_MAX_PROGS) return 0;
  f->prog_names[f->nprogs] = name;
  f->progs[f->nprogs] = fn;
  return FAKE_PROG_TAG | f->nprogs++;
}

static void fake_dev_fini(fake_dev *f) {
  hcq_device_fini(&f->dev);
  hcq_status_free(f->error);
  free(f->last[0]);
  free(f->last[1]);
  free(f->execs);
  free(f->copies);
}


/* The registry entry (hcq_rt_register(&(hcq_rt_backend){"fakegpu", fake_open})): an executing fake that moves
 * copies, freed by ops->destroy. */
static inline hcq_status fake_open(unsigned index, hcq_device **out) {
  fake_dev *f = calloc(1, sizeof(*f));
  if (!f) return hcq_status_make(HCQ_CODE_NOMEM, "fake device");
  char name[32];
  snprintf(name, sizeof(name), "FAKEGPU:%u", index);
  hcq_status st = fake_dev_init(f, name, true);
  if (st) {
    free(f);
    return st;
  }
  f->run_copies = true;
  *out = &f->dev;
  return HCQ_OK;
}

#endif
