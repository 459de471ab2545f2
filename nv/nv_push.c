/* nv/: push-buffer method builders, GPFIFO channels and submission. Header and field layouts come from
 * autogen (NV_DMA_*, NV_GP_ENTRY*, NV_SEM_EXECUTE_*, NV_LAUNCH_DMA_*), per-class widths from the class headers. */
#include <string.h>
#include <time.h>

#include "nv/nv_internal.h"

#define NV_FIELD(name, v) ((uint32_t)(v) << name##_SHIFT)

void nv_push_init(nv_push *p, uint32_t *words, uint32_t cap) { *p = (nv_push){words, 0, cap, NULL}; }

static void nv_push_bad(nv_push *p, const char *why) {
  if (!p->bad) p->bad = why;
}

static void nv_push_group(nv_push *p, uint32_t op, unsigned subch, uint32_t method, const uint32_t *vals, unsigned n) {
  if (subch >= NV_NUMBER_OF_SUBCHANNELS) return nv_push_bad(p, "subchannel out of range");
  if ((method & 3) || (method >> 2) > NV_DMA_METHOD_ADDRESS_MASK) return nv_push_bad(p, "method offset not a dword below 0x4000");
  if (!n || n > NV_DMA_METHOD_COUNT_MASK) return nv_push_bad(p, "method group count out of range");
  if (p->n + 1 + n > p->cap) return nv_push_bad(p, "push buffer full");
  p->w[p->n++] = NV_FIELD(NV_DMA_SEC_OP, op) | NV_FIELD(NV_DMA_METHOD_COUNT, n) |
                 NV_FIELD(NV_DMA_METHOD_SUBCHANNEL, subch) | NV_FIELD(NV_DMA_METHOD_ADDRESS, method >> 2);
  memcpy(p->w + p->n, vals, n * 4u);
  p->n += n;
}

void nv_push_inc(nv_push *p, unsigned subch, uint32_t method, const uint32_t *vals, unsigned n) {
  nv_push_group(p, NV_DMA_SEC_OP_INC_METHOD, subch, method, vals, n);
}
void nv_push_noninc(nv_push *p, unsigned subch, uint32_t method, const uint32_t *vals, unsigned n) {
  nv_push_group(p, NV_DMA_SEC_OP_NON_INC_METHOD, subch, method, vals, n);
}
void nv_push_immd(nv_push *p, unsigned subch, uint32_t method, uint32_t value) {
  if (value > NV_DMA_IMMD_DATA_MASK) return nv_push_bad(p, "immediate value over 13 bits");
  if (subch >= NV_NUMBER_OF_SUBCHANNELS || (method & 3) || (method >> 2) > NV_DMA_METHOD_ADDRESS_MASK)
    return nv_push_bad(p, "immediate method/subchannel out of range");
  if (p->n + 1 > p->cap) return nv_push_bad(p, "push buffer full");
  p->w[p->n++] = NV_FIELD(NV_DMA_SEC_OP, NV_DMA_SEC_OP_IMMD_DATA_METHOD) | NV_FIELD(NV_DMA_IMMD_DATA, value) |
                 NV_FIELD(NV_DMA_METHOD_SUBCHANNEL, subch) | NV_FIELD(NV_DMA_METHOD_ADDRESS, method >> 2);
}

/* Per-class widths of the upper address halves (0: not in autogen for that class). */
uint64_t nv_sem_hi_mask(uint32_t cls) {
  return cls == HOPPER_CHANNEL_GPFIFO_A      ? NV_HOPPER_CHANNEL_GPFIFO_A_SEM_ADDR_HI_OFFSET_MASK
         : cls == AMPERE_CHANNEL_GPFIFO_A    ? NV_AMPERE_CHANNEL_GPFIFO_A_SEM_ADDR_HI_OFFSET_MASK
         : cls == BLACKWELL_CHANNEL_GPFIFO_A ? NV_BLACKWELL_CHANNEL_GPFIFO_A_SEM_ADDR_HI_OFFSET_MASK
         : cls == BLACKWELL_CHANNEL_GPFIFO_B ? NV_BLACKWELL_CHANNEL_GPFIFO_B_SEM_ADDR_HI_OFFSET_MASK
                                             : 0;
}
static uint64_t nv_copy_hi_mask(uint32_t cls) {
  return cls == HOPPER_DMA_COPY_A      ? NV_HOPPER_DMA_COPY_A_OFFSET_UPPER_MASK
         : cls == AMPERE_DMA_COPY_B    ? NV_AMPERE_DMA_COPY_B_OFFSET_UPPER_MASK
         : cls == AMPERE_DMA_COPY_A    ? NV_AMPERE_DMA_COPY_A_OFFSET_UPPER_MASK
         : cls == BLACKWELL_DMA_COPY_A ? NV_BLACKWELL_DMA_COPY_A_OFFSET_UPPER_MASK
         : cls == BLACKWELL_DMA_COPY_B ? NV_BLACKWELL_DMA_COPY_B_OFFSET_UPPER_MASK
                                       : 0;
}

static void nv_push_sem(nv_push *p, const nv_dev *d, uint64_t addr, uint64_t value, uint32_t exec) {
  uint64_t mask = nv_sem_hi_mask(d->cls_gpfifo);
  if (!mask) return nv_push_bad(p, "SEM_ADDR_HI width of this GPFIFO class is not in autogen");
  if ((addr >> 32) & ~mask || (addr & 7)) return nv_push_bad(p, "semaphore address misaligned or past the class's SEM_ADDR_HI");
  uint32_t v[5] = {(uint32_t)addr, (uint32_t)(addr >> 32), (uint32_t)value, (uint32_t)(value >> 32), exec};
  nv_push_inc(p, NV_SUBCH_HOST, NV_AMPERE_CHANNEL_GPFIFO_A_SEM_ADDR_LO, v, 5);
}

void nv_push_sem_release(nv_push *p, const nv_dev *d, uint64_t addr, uint64_t value, bool timestamp) {
  nv_push_sem(p, d, addr, value,
              NV_FIELD(NV_SEM_EXECUTE_OPERATION, NV_SEM_EXECUTE_OPERATION_RELEASE) |
                  NV_FIELD(NV_SEM_EXECUTE_RELEASE_WFI, NV_SEM_EXECUTE_RELEASE_WFI_EN) |
                  NV_FIELD(NV_SEM_EXECUTE_PAYLOAD_SIZE, NV_SEM_EXECUTE_PAYLOAD_SIZE_64BIT) |
                  NV_FIELD(NV_SEM_EXECUTE_RELEASE_TIMESTAMP, timestamp ? NV_SEM_EXECUTE_RELEASE_TIMESTAMP_EN : 0));
  uint32_t zero = 0;
  nv_push_inc(p, NV_SUBCH_HOST, NV_AMPERE_CHANNEL_GPFIFO_A_NON_STALL_INTERRUPT, &zero, 1);
}

void nv_push_sem_acquire(nv_push *p, const nv_dev *d, uint64_t addr, uint64_t value) {
  nv_push_sem(p, d, addr, value,
              NV_FIELD(NV_SEM_EXECUTE_OPERATION, NV_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ) |
                  NV_FIELD(NV_SEM_EXECUTE_PAYLOAD_SIZE, NV_SEM_EXECUTE_PAYLOAD_SIZE_64BIT));
}

void nv_push_copy(nv_push *p, const nv_dev *d, uint64_t dst, uint64_t src, uint64_t n) {
  uint64_t mask = nv_copy_hi_mask(d->cls_copy);
  if (!mask) return nv_push_bad(p, "OFFSET_UPPER width of this copy class is not in autogen");
  for (uint64_t off = 0; off < n; off += 1ull << 31) {
    uint64_t s = src + off, t = dst + off, len = n - off < (1ull << 31) ? n - off : 1ull << 31;
    if (((s | t) >> 32) & ~mask) return nv_push_bad(p, "copy address past the class's OFFSET_UPPER");
    uint32_t v[4] = {(uint32_t)(s >> 32), (uint32_t)s, (uint32_t)(t >> 32), (uint32_t)t}, l = (uint32_t)len;
    nv_push_inc(p, NV_SUBCH_COPY, NV_HOPPER_DMA_COPY_A_OFFSET_IN_UPPER, v, 4);
    nv_push_inc(p, NV_SUBCH_COPY, NV_HOPPER_DMA_COPY_A_LINE_LENGTH_IN, &l, 1);
    uint32_t launch = NV_FIELD(NV_LAUNCH_DMA_DATA_TRANSFER_TYPE, NV_LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED) |
                      NV_FIELD(NV_LAUNCH_DMA_SRC_MEMORY_LAYOUT, NV_LAUNCH_DMA_MEMORY_LAYOUT_PITCH) |
                      NV_FIELD(NV_LAUNCH_DMA_DST_MEMORY_LAYOUT, NV_LAUNCH_DMA_MEMORY_LAYOUT_PITCH);
    nv_push_inc(p, NV_SUBCH_COPY, NV_HOPPER_DMA_COPY_A_LAUNCH_DMA, &launch, 1);
  }
}

void nv_push_copy_release(nv_push *p, const nv_dev *d, uint64_t sem, uint32_t value) {
  uint64_t mask = nv_copy_hi_mask(d->cls_copy);
  if (!mask) return nv_push_bad(p, "SET_SEMAPHORE_A width of this copy class is not in autogen");
  if ((sem >> 32) & ~mask || (sem & 15)) return nv_push_bad(p, "copy semaphore misaligned or past SET_SEMAPHORE_A");
  uint32_t v[3] = {(uint32_t)(sem >> 32), (uint32_t)sem, value};
  nv_push_inc(p, NV_SUBCH_COPY, NV_HOPPER_DMA_COPY_A_SET_SEMAPHORE_A, v, 3);
  uint32_t launch = NV_FIELD(NV_LAUNCH_DMA_FLUSH_ENABLE, NV_LAUNCH_DMA_FLUSH_ENABLE_TRUE) |
                    NV_FIELD(NV_LAUNCH_DMA_SEMAPHORE_TYPE, NV_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE);
  nv_push_inc(p, NV_SUBCH_COPY, NV_HOPPER_DMA_COPY_A_LAUNCH_DMA, &launch, 1);
}

static uint64_t nv_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Waits until the channel's GP_GET reaches `get` (ring or command-ring reuse). */
static hcq_status nv_chan_wait_get(nv_chan *c, uint32_t get, uint32_t timeout_ms) {
  uint64_t end = nv_now_ms() + timeout_ms;
  while (__atomic_load_n(&c->userd->GPGet, __ATOMIC_ACQUIRE) != get)
    if (nv_now_ms() > end)
      return hcq_status_make(HCQ_CODE_TIMEOUT, "NV %s channel 0x%x: GP_GET stuck at %u (want %u) after %u ms", c->name,
                             c->handle, c->userd->GPGet, get, timeout_ms);
  return HCQ_OK;
}

hcq_status nv_chan_submit(nv_dev *d, nv_chan *c, const nv_push *p) {
  if (p->bad) return hcq_status_make(HCQ_CODE_INVALID, "NV %s push buffer: %s", c->name, p->bad);
  if (!p->n) return HCQ_OK;
  uint64_t size_B = (uint64_t)p->n * 4;
  if (size_B > c->cmd.size_B || p->n > NV_GP_ENTRY1_LENGTH_MASK)
    return hcq_status_make(HCQ_CODE_INVALID, "NV %s push buffer of %u words is too long", c->name, p->n);
  if (c->cmd_off + size_B > c->cmd.size_B) { /* wrap: earlier push buffers must have been fetched */
    HCQ_TRY(nv_chan_wait_get(c, c->put, 10000));
    c->cmd_off = 0;
  }
  uint32_t next = (c->put + 1) % c->entries;
  if (next == __atomic_load_n(&c->userd->GPGet, __ATOMIC_ACQUIRE)) HCQ_TRY(nv_chan_wait_get(c, c->put, 10000));
  uint64_t va = c->cmd.va + c->cmd_off;
  memcpy((uint8_t *)c->cmd.cpu + c->cmd_off, p->w, size_B);
  c->cmd_off += (size_B + 7) & ~7ull;
  uint32_t e0 = (uint32_t)va & (uint32_t)(NV_GP_ENTRY0_GET_MASK << NV_GP_ENTRY0_GET_SHIFT);
  uint32_t e1 = NV_FIELD(NV_GP_ENTRY1_GET_HI, (va >> 32) & NV_GP_ENTRY1_GET_HI_MASK) |
                NV_FIELD(NV_GP_ENTRY1_LEVEL, NV_GP_ENTRY1_LEVEL_SUBROUTINE) | NV_FIELD(NV_GP_ENTRY1_LENGTH, p->n);
  c->ring[c->put] = (uint64_t)e1 << 32 | e0;
  /* push buffer and entry visible before GP_PUT, GP_PUT before the doorbell. These are write-combined mappings,
   * whose stores may pass each other: a full fence on each side (mfence drains the WC buffers on x86) */
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  __atomic_store_n(&c->userd->GPPut, next, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  c->put = next;
  c->nsubmits++;
  return hcq_status_annotate(
      kif_mmio_write32(d->k, (volatile uint32_t *)(d->doorbell + NVC361_NOTIFY_CHANNEL_PENDING), c->token),
      "NV %s channel 0x%x doorbell", c->name, c->handle);
}

hcq_status nv_wait(nv_dev *d, uint64_t addr, uint64_t value, uint32_t timeout_ms) {
  (void)d;
  const uint64_t *p = (const uint64_t *)(uintptr_t)addr;
  uint64_t end = nv_now_ms() + timeout_ms;
  while (__atomic_load_n(p, __ATOMIC_ACQUIRE) < value)
    if (nv_now_ms() > end)
      return hcq_status_make(HCQ_CODE_TIMEOUT, "NV: signal at 0x%llx is %llu, not >= %llu after %u ms",
                             (unsigned long long)addr, (unsigned long long)*p, (unsigned long long)value, timeout_ms);
  return HCQ_OK;
}

hcq_status nv_chan_create(nv_dev *d, nv_chan *c, uint64_t offset_B, uint32_t engine_cls, const char *name) {
  c->name = name;
  c->entries = 0x10000;
  static _Thread_local NV_CHANNEL_ALLOC_PARAMS a;
  memset(&a, 0, sizeof a);
  a.hObjectError = d->notifier.handle, a.hObjectBuffer = d->gpfifo_area.handle;
  a.gpFifoOffset = d->gpfifo_area.va + offset_B, a.gpFifoEntries = c->entries;
  a.hContextShare = d->ctxshare, a.hUserdMemory[0] = d->gpfifo_area.handle;
  a.userdOffset[0] = offset_B + 8ull * c->entries;
  HCQ_TRY(nv_rm_alloc(d, d->chgroup, d->cls_gpfifo, &a, sizeof a, &c->handle, name));
  uint32_t engine, dbg;
  HCQ_TRY(nv_rm_alloc(d, c->handle, engine_cls, NULL, 0, &engine, name));
  if (engine_cls == d->cls_compute) {
    NV83DE_ALLOC_PARAMETERS g = {.hAppClient = d->root, .hClass3dObject = engine};
    HCQ_TRY(nv_rm_alloc(d, d->device, GT200_DEBUGGER, &g, sizeof g, &dbg, "debugger"));
  }
  NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN_PARAMS t = {.workSubmitToken = 0xffffffffu};
  HCQ_TRY(nv_rm_control(d, c->handle, NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN, &t, sizeof t, "GET_WORK_SUBMIT_TOKEN"));
  c->token = t.workSubmitToken;
  uint64_t base; /* a VA range UVM tracks for the channel */
  HCQ_TRY(nv_va_low_range(d, 0x4000000, &base));
  UVM_REGISTER_CHANNEL_PARAMS r = {.rmCtrlFd = d->fd_ctl, .hClient = d->root, .hChannel = c->handle, .base = base,
                                   .length = 0x4000000};
  memcpy(r.gpuUuid.uuid, d->uuid, 16);
  HCQ_TRY(nv_uvm(d, d->fd_uvm, UVM_REGISTER_CHANNEL, &r, &r.rmStatus, "UVM_REGISTER_CHANNEL"));
  c->ring = (uint64_t *)((uint8_t *)d->gpfifo_area.cpu + offset_B);
  c->userd = (volatile AmpereAControlGPFifo *)((uint8_t *)d->gpfifo_area.cpu + a.userdOffset[0]);
  HCQ_TRY(nv_mem_alloc(d, 0x200000, NV_MEM_CPU, &c->cmd));
  /* bind the engine class on its subchannel; compute also gets its local and shared memory windows */
  uint32_t w[16];
  nv_push p;
  nv_push_init(&p, w, 16);
  uint32_t obj = engine_cls;
  nv_push_inc(&p, engine_cls == d->cls_compute ? NV_SUBCH_COMPUTE : NV_SUBCH_COPY, 0, &obj, 1);
  if (engine_cls == d->cls_compute) {
    uint32_t local[2] = {(uint32_t)(NV_LOCAL_WINDOW >> 32), (uint32_t)NV_LOCAL_WINDOW};
    uint32_t shared[2] = {(uint32_t)(NV_SHARED_WINDOW >> 32), (uint32_t)NV_SHARED_WINDOW};
    nv_push_inc(&p, NV_SUBCH_COMPUTE, NV_HOPPER_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_WINDOW_A, local, 2);
    nv_push_inc(&p, NV_SUBCH_COMPUTE, NV_HOPPER_COMPUTE_A_SET_SHADER_SHARED_MEMORY_WINDOW_A, shared, 2);
  }
  return nv_chan_submit(d, c, &p);
}
