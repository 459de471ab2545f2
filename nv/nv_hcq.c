/* nv/: the hcq device ops and encoder for NV. Signals and waits are host semaphore methods (they work on every
 * channel, so both queue kinds use them), copies are copy-engine LAUNCH_DMA on the copy queue (symbolic operands
 * through masked patches). A timestamp is a
 * semaphore REDUCTION IADD of 0 with RELEASE_TIMESTAMP: it writes the time at +8 and leaves the value alone, as
 * hcq requires (a plain release would also overwrite the value). Kernel launch: nv_program.c. */
#include <stdlib.h>
#include <string.h>

#include "hcq/queue.h"
#include "hcq/signal.h"
#include "nv/nv_hcq.h"
#include "nv/nv_internal.h"
#include "nv/nv_program.h"
#include "nv/nv_rt.h"

#define NV_FIELD(name, v) ((uint32_t)(v) << name##_SHIFT)

typedef struct nv_hcq {
  hcq_device dev;
  nv_dev *nv;
} nv_hcq;

static nv_dev *nv_of(hcq_queue *q) { return ((nv_hcq *)hcq_queue_device(q)->impl)->nv; }

static uint32_t nv_hdr(uint32_t op, unsigned n, unsigned subch, uint32_t method) {
  return NV_FIELD(NV_DMA_SEC_OP, op) | NV_FIELD(NV_DMA_METHOD_COUNT, n) | NV_FIELD(NV_DMA_METHOD_SUBCHANNEL, subch) |
         NV_FIELD(NV_DMA_METHOD_ADDRESS, method >> 2);
}

/* SEM_ADDR_LO..SEM_EXECUTE: address and payload may be symbols (lo word first, as emit64 writes them). */
static hcq_status nv_enc_sem(hcq_queue *q, hcq_val addr, hcq_val payload, uint32_t exec) {
  const nv_dev *d = nv_of(q);
  uint64_t mask = nv_sem_hi_mask(d->cls_gpfifo);
  if (!mask) return hcq_status_make(HCQ_CODE_UNSUPPORTED, "NV: SEM_ADDR_HI width of class 0x%x not in autogen", d->cls_gpfifo);
  if (!addr.sym && (((addr.imm >> 32) & ~mask) || (addr.imm & 7)))
    return hcq_status_make(HCQ_CODE_INVALID, "NV semaphore address 0x%llx: misaligned or past SEM_ADDR_HI",
                           (unsigned long long)addr.imm);
  HCQ_TRY(hcq_queue_emit32(q, hcq_imm(nv_hdr(NV_DMA_SEC_OP_INC_METHOD, 5, NV_SUBCH_HOST, NV_AMPERE_CHANNEL_GPFIFO_A_SEM_ADDR_LO))));
  HCQ_TRY(hcq_queue_emit64(q, addr));
  HCQ_TRY(hcq_queue_emit64(q, payload));
  return hcq_queue_emit32(q, hcq_imm(exec));
}

static hcq_status nv_enc_signal(hcq_queue *q, hcq_val sig, hcq_val value) {
  HCQ_TRY(nv_enc_sem(q, sig, value,
                     NV_FIELD(NV_SEM_EXECUTE_OPERATION, NV_SEM_EXECUTE_OPERATION_RELEASE) |
                         NV_FIELD(NV_SEM_EXECUTE_RELEASE_WFI, NV_SEM_EXECUTE_RELEASE_WFI_EN) |
                         NV_FIELD(NV_SEM_EXECUTE_PAYLOAD_SIZE, NV_SEM_EXECUTE_PAYLOAD_SIZE_64BIT)));
  uint32_t *w;
  HCQ_TRY(hcq_queue_reserve(q, 2, &w));
  w[0] = nv_hdr(NV_DMA_SEC_OP_INC_METHOD, 1, NV_SUBCH_HOST, NV_AMPERE_CHANNEL_GPFIFO_A_NON_STALL_INTERRUPT);
  return HCQ_OK;
}

static hcq_status nv_enc_wait(hcq_queue *q, hcq_val sig, hcq_val value) {
  return nv_enc_sem(q, sig, value,
                    NV_FIELD(NV_SEM_EXECUTE_OPERATION, NV_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ) |
                        NV_FIELD(NV_SEM_EXECUTE_PAYLOAD_SIZE, NV_SEM_EXECUTE_PAYLOAD_SIZE_64BIT));
}

static hcq_status nv_enc_timestamp(hcq_queue *q, hcq_val sig) {
  return nv_enc_sem(q, sig, hcq_imm(0),
                    NV_FIELD(NV_SEM_EXECUTE_OPERATION, NV_SEM_EXECUTE_OPERATION_REDUCTION) |
                        NV_FIELD(NV_SEM_EXECUTE_REDUCTION, NV_SEM_EXECUTE_REDUCTION_IADD) |
                        NV_FIELD(NV_SEM_EXECUTE_REDUCTION_FORMAT, NV_SEM_EXECUTE_REDUCTION_FORMAT_UNSIGNED) |
                        NV_FIELD(NV_SEM_EXECUTE_RELEASE_WFI, NV_SEM_EXECUTE_RELEASE_WFI_EN) |
                        NV_FIELD(NV_SEM_EXECUTE_PAYLOAD_SIZE, NV_SEM_EXECUTE_PAYLOAD_SIZE_64BIT) |
                        NV_FIELD(NV_SEM_EXECUTE_RELEASE_TIMESTAMP, NV_SEM_EXECUTE_RELEASE_TIMESTAMP_EN));
}

/* A copy with symbolic operands, as one LAUNCH_DMA (so at most 4 GiB - 1, the 32-bit LINE_LENGTH_IN patch).
 * The copy class takes each address upper half first ([hdr][hi src][lo src][hi dst][lo dst]) while a 64-bit
 * patch writes lo then hi; so each address is two masked 64-bit patches: one over the word pair ending at its
 * upper slot (keeping only the high half), one over the pair starting at its lower slot (only the low half). */
static hcq_status nv_enc_copy_sym(hcq_queue *q, hcq_val dst, hcq_val src, hcq_val size_B) {
  const uint64_t hi = 0xffffffff00000000ull, lo = 0xffffffffull;
  size_t b = hcq_queue_word_count(q);
  uint32_t *w;
  HCQ_TRY(hcq_queue_reserve(q, 9, &w));
  w[0] = nv_hdr(NV_DMA_SEC_OP_INC_METHOD, 4, NV_SUBCH_COPY, NV_HOPPER_DMA_COPY_A_OFFSET_IN_UPPER);
  w[5] = nv_hdr(NV_DMA_SEC_OP_INC_METHOD, 1, NV_SUBCH_COPY, NV_HOPPER_DMA_COPY_A_LINE_LENGTH_IN);
  w[7] = nv_hdr(NV_DMA_SEC_OP_INC_METHOD, 1, NV_SUBCH_COPY, NV_HOPPER_DMA_COPY_A_LAUNCH_DMA);
  w[8] = NV_FIELD(NV_LAUNCH_DMA_DATA_TRANSFER_TYPE, NV_LAUNCH_DMA_DATA_TRANSFER_TYPE_NON_PIPELINED) |
         NV_FIELD(NV_LAUNCH_DMA_SRC_MEMORY_LAYOUT, NV_LAUNCH_DMA_MEMORY_LAYOUT_PITCH) |
         NV_FIELD(NV_LAUNCH_DMA_DST_MEMORY_LAYOUT, NV_LAUNCH_DMA_MEMORY_LAYOUT_PITCH);
  HCQ_TRY(hcq_queue_patch_word(q, b + 0, src, 64, hi));
  HCQ_TRY(hcq_queue_patch_word(q, b + 2, src, 64, lo));
  HCQ_TRY(hcq_queue_patch_word(q, b + 2, dst, 64, hi));
  HCQ_TRY(hcq_queue_patch_word(q, b + 4, dst, 64, lo));
  return hcq_queue_patch_word(q, b + 6, size_B, 32, 0);
}

static hcq_status nv_enc_copy(hcq_queue *q, hcq_val dst, hcq_val src, hcq_val size_B) {
  if (hcq_queue_kind_of(q) != HCQ_QUEUE_COPY)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "NV: copies run on the copy queue (the copy class is bound there)");
  if (dst.sym || src.sym || size_B.sym) return nv_enc_copy_sym(q, dst, src, size_B);
  uint32_t w[64];
  nv_push p;
  nv_push_init(&p, w, 64);
  if (size_B.imm > 8ull << 31) return hcq_status_make(HCQ_CODE_INVALID, "NV copy of %llu bytes: at most 16 GiB per command", (unsigned long long)size_B.imm);
  nv_push_copy(&p, nv_of(q), dst.imm, src.imm, size_B.imm);
  if (p.bad) return hcq_status_make(HCQ_CODE_INVALID, "NV copy 0x%llx <- 0x%llx: %s", (unsigned long long)dst.imm,
                                    (unsigned long long)src.imm, p.bad);
  uint32_t *out;
  HCQ_TRY(hcq_queue_reserve(q, p.n, &out));
  memcpy(out, w, p.n * 4u);
  return HCQ_OK;
}

static hcq_status nv_enc_barrier(hcq_queue *q) {
  if (hcq_queue_kind_of(q) == HCQ_QUEUE_COPY) return HCQ_OK; /* the copy engine's releases flush (FLUSH_ENABLE) */
  uint32_t *w;
  HCQ_TRY(hcq_queue_reserve(q, 2, &w));
  w[0] = nv_hdr(NV_DMA_SEC_OP_INC_METHOD, 1, NV_SUBCH_COMPUTE, NV_HOPPER_COMPUTE_A_INVALIDATE_SHADER_CACHES_NO_WFI);
  w[1] = NV_FIELD(NV_INVALIDATE_SHADER_CACHES_NO_WFI_INSTRUCTION, 1) | NV_FIELD(NV_INVALIDATE_SHADER_CACHES_NO_WFI_GLOBAL_DATA, 1) |
         NV_FIELD(NV_INVALIDATE_SHADER_CACHES_NO_WFI_CONSTANT, 1);
  return HCQ_OK;
}

static const hcq_encoder nv_encoder = {nv_enc_exec, nv_enc_copy, nv_enc_signal, nv_enc_wait, nv_enc_timestamp, nv_enc_barrier};

static hcq_status nv_ops_submit(hcq_device *dev, hcq_queue_kind kind, const uint32_t *words, size_t count) {
  nv_dev *d = ((nv_hcq *)dev->impl)->nv;
  if (count > UINT32_MAX) return hcq_status_make(HCQ_CODE_INVALID, "NV submit of %zu words", count);
  HCQ_TRY(nv_rt_check_live(dev));
  nv_push p = {(uint32_t *)(uintptr_t)words, (uint32_t)count, (uint32_t)count, NULL}; /* read only by submit */
  return nv_chan_submit(d, kind == HCQ_QUEUE_COPY ? &d->copy : &d->compute, &p);
}

/* handle = RM handle | kind << 32 */
static hcq_status nv_ops_alloc(hcq_device *dev, size_t size_B, unsigned flags, hcq_mem *out) {
  nv_dev *d = ((nv_hcq *)dev->impl)->nv;
  nv_mem m;
  HCQ_TRY(nv_mem_alloc(d, size_B, flags & HCQ_MEM_SIGNAL ? NV_MEM_HOST : NV_MEM_CPU, &m));
  memset(m.cpu, 0, m.size_B); /* video memory is not zeroed by RM */
  *out = (hcq_mem){m.cpu, m.va, (size_t)m.size_B, (uint64_t)m.handle | (uint64_t)m.kind << 32};
  return HCQ_OK;
}

static void nv_ops_free(hcq_device *dev, hcq_mem *mem) {
  nv_dev *d = ((nv_hcq *)dev->impl)->nv;
  nv_mem m = {mem->va, mem->size_B, (uint32_t)mem->handle, (unsigned)(mem->handle >> 32), mem->host};
  hcq_status_free(nv_mem_free(d, &m));
  memset(mem, 0, sizeof *mem);
}

static const hcq_device_ops nv_ops = {
    .backend_name = "nv", .submit = nv_ops_submit, .mem_alloc = nv_ops_alloc, .mem_free = nv_ops_free,
    .encoder = &nv_encoder, .info = nv_rt_info, .program_load = nv_rt_program_load,
    .program_free = nv_rt_program_free, .take_error = nv_rt_take_error, .signal_wait = nv_rt_signal_wait, .destroy = nv_rt_destroy,
};

hcq_status nv_hcq_open(kif *k, int index, hcq_device **out) {
  *out = NULL;
  nv_hcq *h = calloc(1, sizeof *h);
  if (!h) return hcq_status_make(HCQ_CODE_NOMEM, "nv_hcq_open");
  hcq_status st = nv_dev_open(k, index, &h->nv);
  char name[HCQ_DEVICE_NAME_MAX];
  snprintf(name, sizeof name, "NV:%d", index);
  if (!st) st = hcq_device_init(&h->dev, &nv_ops, h, name);
  if (st) {
    nv_dev_close(h->nv);
    free(h);
    return st;
  }
  *out = &h->dev;
  return HCQ_OK;
}

void nv_hcq_close(hcq_device *dev) {
  if (!dev) return;
  nv_hcq *h = dev->impl;
  hcq_device_fini(dev);
  nv_dev_close(h->nv);
  free(h);
}

nv_dev *nv_hcq_dev(hcq_device *dev) { return ((nv_hcq *)dev->impl)->nv; }
