/* Test helpers for the PTX interpreter (header-only, for emulator_tests/ptx_*_test.c): a checked global memory of
 * buffers at made-up GPU virtual addresses (not host pointers, so the interpreter can only reach them through
 * ptx_mem_ops), and the run of a compiled program (cc_program of a ptx target) on cc_kbuf buffers. */
#ifndef HCQ_EMU_PTX_TEST_UTIL_H
#define HCQ_EMU_PTX_TEST_UTIL_H

#include <stdio.h>
#include <string.h>

#include "compiler/compiler.h"
#include "compiler/interp.h"
#include "emulator_tests/ptx_interp.h"

#define PTU_MAX_BUFS 16
#define PTU_VA_BASE 0x7f0000000000ull
#define PTU_VA_STRIDE 0x100000000ull /* 4 GiB apart: an overrun never lands in a neighbour */

typedef struct ptu_mem {
  struct {
    uint64_t va;
    size_t size_B;
    uint8_t *host;
  } b[PTU_MAX_BUFS];
  int n;
} ptu_mem;

static inline uint64_t ptu_add(ptu_mem *m, void *host, size_t size_B) {
  uint64_t va = PTU_VA_BASE + (uint64_t)m->n * PTU_VA_STRIDE;
  m->b[m->n].va = va;
  m->b[m->n].size_B = size_B;
  m->b[m->n].host = host;
  m->n++;
  return va;
}

static inline uint8_t *ptu_find(ptu_mem *m, uint64_t va, size_t size_B) {
  for (int i = 0; i < m->n; i++)
    if (va >= m->b[i].va && va - m->b[i].va <= m->b[i].size_B && size_B <= m->b[i].size_B - (va - m->b[i].va))
      return m->b[i].host + (va - m->b[i].va);
  return NULL;
}

static inline hcq_status ptu_miss(ptu_mem *m, uint64_t va) {
  for (int i = 0; i < m->n; i++)
    if (va >= m->b[i].va && va < m->b[i].va + PTU_VA_STRIDE)
      return hcq_status_make(HCQ_CODE_INVALID, "%llu bytes past the end of buffer %d (%zu bytes at 0x%llx)",
                             (unsigned long long)(va - m->b[i].va - m->b[i].size_B), i, m->b[i].size_B,
                             (unsigned long long)m->b[i].va);
  return hcq_status_make(HCQ_CODE_INVALID, "no live allocation");
}

static inline hcq_status ptu_read(void *ctx, uint64_t va, size_t size_B, void *out) {
  uint8_t *p = ptu_find(ctx, va, size_B);
  if (!p) return ptu_miss(ctx, va);
  memcpy(out, p, size_B);
  return HCQ_OK;
}

static inline hcq_status ptu_write(void *ctx, uint64_t va, size_t size_B, const void *in) {
  uint8_t *p = ptu_find(ctx, va, size_B);
  if (!p) return ptu_miss(ctx, va);
  memcpy(p, in, size_B);
  return HCQ_OK;
}

/* Run program p (compiled for a ptx target) over bufs with the variables vals: parameters "dataN" get buffer slot
 * N's address, "var_X" the value of X; grid and block come from p's launch sizes. */
/* The watchdog of ptu_run_program's launches (0: none). */
static uint64_t ptu_max_warp_instructions;

static inline hcq_status ptu_run_program(const cc_program *p, cc_kbuf *bufs, size_t nbufs, const uop_var_val *vals,
                                         size_t nvals, ptx_stats *stats) {
  ptx_module *m = NULL;
  HCQ_TRY(ptx_module_parse(p->source, strlen(p->source), &m));
  const ptx_entry_info *e;
  hcq_status st = ptx_module_entry(m, p->symbol, &e);
  ptu_mem mem = {.n = 0};
  uint8_t params[512] = {0};
  ptx_launch l = {.entry = p->symbol, .params = params, .mem = &(ptx_mem_ops){&mem, ptu_read, ptu_write},
                  .max_warp_instructions = ptu_max_warp_instructions};
  for (size_t i = 0; i < nbufs && i < PTU_MAX_BUFS; i++) ptu_add(&mem, bufs[i].data, bufs[i].size_B);
  for (size_t i = 0; !st && i < e->nparams; i++) {
    const ptx_param_info *pi = &e->params[i];
    if (pi->offset_B + pi->size_B > sizeof params) {
      st = hcq_status_make(HCQ_CODE_INVALID, "too many parameters");
      break;
    }
    int slot;
    if (sscanf(pi->name, "data%d", &slot) == 1) {
      size_t k = 0;
      while (k < nbufs && bufs[k].slot != slot) k++;
      if (k == nbufs) st = hcq_status_make(HCQ_CODE_INVALID, "no buffer for parameter %s", pi->name);
      else memcpy(params + pi->offset_B, &mem.b[k].va, 8);
    } else if (!strncmp(pi->name, "var_", 4)) {
      size_t k = 0;
      while (k < nvals && strcmp(vals[k].name, pi->name + 4)) k++;
      if (k == nvals) st = hcq_status_make(HCQ_CODE_INVALID, "no value for parameter %s", pi->name);
      else {
        int32_t v = (int32_t)vals[k].value;
        memcpy(params + pi->offset_B, &v, 4);
      }
    } else {
      st = hcq_status_make(HCQ_CODE_INVALID, "unexpected parameter %s", pi->name);
    }
  }
  l.params_size_B = e ? e->params_size_B : 0;
  int64_t g[3] = {1, 1, 1}, b[3] = {1, 1, 1};
  if (!st) st = cc_program_launch_dims(p, (const hcq_var *)vals, nvals, 0x7fffffff, g, b);
  for (int d = 0; d < 3 && !st; d++) {
    if (b[d] > 1024)
      st = hcq_status_make(HCQ_CODE_INVALID, "launch size %lld x %lld on axis %d", (long long)g[d], (long long)b[d], d);
    l.grid[d] = (uint32_t)g[d];
    l.block[d] = (uint32_t)b[d];
  }
  if (!st) st = ptx_launch_run(m, &l, stats);
  ptx_module_free(m);
  return st;
}

#endif
