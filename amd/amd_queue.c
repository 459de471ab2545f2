/* User-mode queues over KFD (ops_amd.py create_queue / signal_doorbell): ring and pointer page in uncached GTT,
 * EOP and the CWSR (context save) area in VRAM sized by the reference's formulas, CREATE_QUEUE, the doorbell slice
 * mapped once per device. Submission never overwrites ring space the GPU has not consumed (the reference does not
 * check on PM4, pitfall P11). */
#include <errno.h>
#include <stdlib.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "amd/amd_device.h"
#include "autogen/kfd.h"

#define PAGE_B 4096u
#define GART_WPTR_OFF 0x38 /* amd_queue_t.write_dispatch_id */
#define GART_RPTR_OFF 0x80 /* amd_queue_t.read_dispatch_id */
#define EOP_B 0x1000u

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* Context save area (ops_amd.py, gfx >= 10.1 formulas; gfx9 keeps the older wave count and control stack). */
static void cwsr_sizes(const amd_device *d, uint64_t *ctx_B, uint32_t *ctl_B, uint64_t *total_B) {
  const amd_node *n = &d->node;
  uint64_t cu = n->simd_count / n->simd_per_cu / n->num_xcc;
  uint64_t waves;
  if (!d->arch->gfx9) waves = (uint64_t)n->max_waves_per_simd * n->simd_per_cu;
  else {
    uint64_t a = cu * 40, b = (uint64_t)n->array_count / n->simd_arrays_per_engine * 512;
    waves = a < b ? a : b;
  }
  uint64_t wg = round_up((d->arch->cwsr_vgpr_per_cu_B + 0x4000 + 0x10000 + 0x1000) * cu, PAGE_B);
  uint64_t ctl = d->arch->gfx9 ? round_up(waves * 8 + 8 + 40, PAGE_B) : round_up(12 * cu * waves + 8 + 40, PAGE_B);
  uint64_t dbg = round_up(cu * waves * 32, 64);
  *ctx_B = wg + ctl;
  *ctl_B = (uint32_t)ctl;
  *total_B = round_up((wg + ctl + dbg) * n->num_xcc, PAGE_B);
}

void amd_ring_destroy(amd_device *d, amd_ring *r) {
  if (r->queue_id) {
    struct amd_kfd_ioctl_destroy_queue_args a = {.queue_id = r->queue_id};
    hcq_status_free(kif_ioctl(d->k, d->kfd_fd, AMD_KFD_IOC_DESTROY_QUEUE, &a));
  }
  amd_buf *bufs[4] = {&r->ring, &r->gart, &r->eop, &r->cwsr};
  for (int i = 0; i < 4; i++) hcq_status_free(amd_mem_free(d, bufs[i]));
  memset(r, 0, sizeof *r);
}

hcq_status amd_ring_create(amd_device *d, bool sdma, uint32_t size_B, amd_ring *r) {
  memset(r, 0, sizeof *r);
  if (size_B < 1024 || (size_B & (size_B - 1)))
    return hcq_status_make(HCQ_CODE_INVALID, "amd %s: ring size %u is not a power of 2 >= 1024", d->name, size_B);
  r->sdma = sdma;
  hcq_status st = amd_mem_alloc(d, size_B, AMD_MEM_GTT_UNCACHED, NULL, &r->ring);
  if (!st) st = amd_mem_alloc(d, PAGE_B, AMD_MEM_GTT_UNCACHED, NULL, &r->gart);
  uint64_t ctx = 0, total = 0;
  uint32_t ctl = 0;
  if (!sdma) {
    cwsr_sizes(d, &ctx, &ctl, &total);
    if (!st) st = amd_mem_alloc(d, EOP_B, AMD_MEM_VRAM, NULL, &r->eop);
    if (!st) st = amd_mem_alloc(d, total, AMD_MEM_VRAM, NULL, &r->cwsr);
  }
  struct amd_kfd_ioctl_create_queue_args a = {
      .ring_base_address = r->ring.va, .ring_size = size_B, .gpu_id = d->node.gpu_id,
      .queue_type = sdma ? AMD_KFD_IOC_QUEUE_TYPE_SDMA : AMD_KFD_IOC_QUEUE_TYPE_COMPUTE,
      .queue_percentage = 100, .queue_priority = 15, .write_pointer_address = r->gart.va + GART_WPTR_OFF,
      .read_pointer_address = r->gart.va + GART_RPTR_OFF, .eop_buffer_address = r->eop.va,
      .eop_buffer_size = r->eop.size_B, .ctx_save_restore_address = r->cwsr.va,
      .ctx_save_restore_size = (uint32_t)ctx, .ctl_stack_size = ctl};
  if (!st) st = kif_ioctl(d->k, d->kfd_fd, AMD_KFD_IOC_CREATE_QUEUE, &a);
  if (!st) r->queue_id = a.queue_id;
  if (!st && !d->doorbell_page) {
    uint64_t base = a.doorbell_offset & ~(uint64_t)0x1fff;
    st = kif_mmap(d->k, NULL, 0x2000, PROT_READ | PROT_WRITE, MAP_SHARED, d->kfd_fd, base, &d->doorbell_page);
    if (!st) d->doorbell_base = base;
  }
  if (!st && (a.doorbell_offset & ~(uint64_t)0x1fff) != d->doorbell_base)
    st = hcq_status_make(HCQ_CODE_IO, "amd %s: queue doorbell 0x%" PRIx64 " is outside the mapped slice 0x%" PRIx64,
                         d->name, a.doorbell_offset, d->doorbell_base);
  if (st) {
    amd_ring_destroy(d, r);
    return hcq_status_annotate(st, "amd %s: creating the %s queue", d->name, sdma ? "SDMA" : "compute");
  }
  r->words = (volatile uint32_t *)(uintptr_t)r->ring.va;
  r->size_B = size_B;
  r->wptr = (volatile uint64_t *)(uintptr_t)(r->gart.va + GART_WPTR_OFF);
  r->rptr = (volatile uint64_t *)(uintptr_t)(r->gart.va + GART_RPTR_OFF);
  r->doorbell = (volatile uint64_t *)((char *)d->doorbell_page + (a.doorbell_offset - d->doorbell_base));
  *r->wptr = 0;
  *r->rptr = 0;
  return HCQ_OK;
}

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Ring words, then wptr, a full fence, then the 64-bit doorbell (pitfall P6). */
static hcq_status publish(amd_device *d, amd_ring *r) {
  __atomic_store_n(r->wptr, r->put, __ATOMIC_RELEASE);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  return kif_mmio_write64(d->k, r->doorbell, r->put);
}

/* Wait until `need` units past put are free (units: dwords for PM4, bytes for SDMA). Whole packets written but not
 * yet published are published first, so the GPU can make the room. */
static hcq_status wait_space(amd_device *d, amd_ring *r, uint64_t need, uint64_t ring_units) {
  uint64_t start = 0;
  for (;;) {
    uint64_t rp = __atomic_load_n(r->rptr, __ATOMIC_ACQUIRE);
    if (r->put + need - rp <= ring_units) return HCQ_OK;
    if (*r->wptr != r->put) HCQ_TRY(publish(d, r));
    uint64_t t = now_ms();
    if (!start) start = t;
    else if (t - start > d->ring_wait_timeout_ms)
      return hcq_status_make(HCQ_CODE_TIMEOUT, "amd %s: %s queue %u did not consume its ring for %u ms (rptr 0x%" PRIx64
                             ", put 0x%" PRIx64 ", ring 0x%x bytes): the GPU is hung or waiting on a signal that never comes",
                             d->name, r->sdma ? "SDMA" : "compute", r->queue_id, d->ring_wait_timeout_ms, rp, r->put, r->size_B);
    nanosleep(&(struct timespec){0, 20000}, NULL);
  }
}

hcq_status amd_ring_submit(amd_device *d, amd_ring *r, const uint32_t *w, uint32_t n_dw, const uint32_t *sizes,
                           uint32_t n_packets) {
  uint32_t ring_dw = r->size_B / 4;
  if (!r->sdma) {
    if (n_dw > ring_dw)
      return hcq_status_make(HCQ_CODE_INVALID, "amd %s: %u dwords do not fit the %u-dword compute ring", d->name, n_dw, ring_dw);
    HCQ_TRY(wait_space(d, r, n_dw, ring_dw));
    /* at most two copies (the second after the wrap); publish()'s release store orders them before wptr */
    uint32_t *ring = (uint32_t *)(uintptr_t)r->words, pos = (uint32_t)(r->put & (ring_dw - 1));
    uint32_t first = ring_dw - pos < n_dw ? ring_dw - pos : n_dw;
    if (first) memcpy(ring + pos, w, first * 4ull);
    if (n_dw > first) memcpy(ring, w + first, (n_dw - first) * 4ull);
    r->put += n_dw;
  } else {
    for (uint32_t p = 0, at = 0; p < n_packets; at += sizes[p++]) {
      uint64_t pos_dw = (r->put / 4) & (ring_dw - 1);
      uint64_t pad = pos_dw + sizes[p] > ring_dw ? ring_dw - pos_dw : 0; /* packets never straddle the end */
      if (sizes[p] > ring_dw)
        return hcq_status_make(HCQ_CODE_INVALID, "amd %s: SDMA packet of %u dwords exceeds the ring", d->name, sizes[p]);
      HCQ_TRY(wait_space(d, r, (pad + sizes[p]) * 4, r->size_B));
      uint32_t *ring = (uint32_t *)(uintptr_t)r->words;
      if (pad) memset(ring + pos_dw, 0, pad * 4); /* zero = SDMA NOP */
      r->put += pad * 4;
      pos_dw = (r->put / 4) & (ring_dw - 1);
      memcpy(ring + pos_dw, w + at, sizes[p] * 4ull);
      r->put += sizes[p] * 4ull;
    }
  }
  return publish(d, r);
}

hcq_status amd_ring_restart(amd_device *d, amd_ring *r, uint64_t from, uint32_t *out_resubmitted) {
  *out_resubmitted = 0;
  if (r->sdma) return hcq_status_make(HCQ_CODE_UNSUPPORTED, "amd %s: restarting an SDMA queue", d->name);
  uint32_t ring_dw = r->size_B / 4, size_B = r->size_B;
  if (from > r->put || r->put - from > ring_dw)
    return hcq_status_make(HCQ_CODE_INTERNAL, "amd %s: restart point 0x%" PRIx64 " outside the ring's unconsumed "
                           "words (put 0x%" PRIx64 ")", d->name, from, r->put);
  uint32_t n = (uint32_t)(r->put - from);
  uint32_t *keep = n ? malloc(n * 4u) : NULL;
  if (n && !keep) return hcq_status_make(HCQ_CODE_NOMEM, "amd %s: saving %u ring dwords", d->name, n);
  for (uint32_t i = 0; i < n; i++) keep[i] = r->words[(from + i) & (ring_dw - 1)]; /* rare: one word at a time */
  amd_ring_destroy(d, r);
  hcq_status st = amd_ring_create(d, false, size_B, r);
  if (!st && n) st = amd_ring_submit(d, r, keep, n, NULL, 0);
  free(keep);
  if (!st) *out_resubmitted = n;
  return st;
}
