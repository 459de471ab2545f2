/* PM4 type-3 packet builders for compute queues, over the autogen'd opcodes and fields (autogen/amd_pm4.h).
 * Each builder appends one whole packet to an amd_cmdbuf; a debug build asserts the reserved space and the register
 * windows. Body lengths are those of linux 6.1 amdgpu (gfx_v11_0.c / gfx_v9_0.c ring_emit_* functions) and the
 * reference (ops_amd.py AMDComputeQueue): RELEASE_MEM 7, WAIT_REG_MEM 6, ACQUIRE_MEM 7 (gfx10+) or 6 (gfx9),
 * DISPATCH_DIRECT 4, EVENT_WRITE 1. */
#ifndef HCQ_AMD_PM4_H
#define HCQ_AMD_PM4_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>

#include "autogen/amd_pm4.h"

typedef struct amd_cmdbuf {
  uint32_t *w;
  uint32_t n, cap; /* dwords */
} amd_cmdbuf;

static inline uint32_t *amd_cmd_reserve(amd_cmdbuf *b, uint32_t n) {
  assert(b->n + n <= b->cap && "amd_cmdbuf: packet does not fit the reserved space");
  uint32_t *p = b->w + b->n;
  b->n += n;
  return p;
}

static inline uint32_t amd_lo(uint64_t v) { return (uint32_t)v; }
static inline uint32_t amd_hi(uint64_t v) { return (uint32_t)(v >> 32); }

/* Register writes: SET_SH_REG for [SH_START, SH_END), SET_UCONFIG_REG for [UCONFIG_START, UCONFIG_END). reg_abs is
 * the absolute dword address (segment base + offset). */
static inline bool amd_pm4_reg_ok(uint32_t reg_abs, uint32_t count) {
  return (reg_abs >= AMD_PM4_SET_SH_REG_START && reg_abs + count <= AMD_PM4_SET_SH_REG_END) ||
         (reg_abs >= AMD_PM4_SET_UCONFIG_REG_START && reg_abs + count <= AMD_PM4_SET_UCONFIG_REG_END);
}

static inline void amd_pm4_set_regs(amd_cmdbuf *b, uint32_t reg_abs, const uint32_t *vals, uint32_t count) {
  assert(count >= 1 && amd_pm4_reg_ok(reg_abs, count) && "amd_pm4_set_regs: register outside the SH/UCONFIG windows");
  bool sh = reg_abs < AMD_PM4_SET_SH_REG_END;
  uint32_t *p = amd_cmd_reserve(b, 2 + count);
  p[0] = AMD_PM4_PACKET3(sh ? AMD_PM4_SET_SH_REG : AMD_PM4_SET_UCONFIG_REG, count);
  p[1] = reg_abs - (sh ? AMD_PM4_SET_SH_REG_START : AMD_PM4_SET_UCONFIG_REG_START);
  for (uint32_t i = 0; i < count; i++) p[2 + i] = vals[i];
}

/* Cache invalidation before work. gfx10+: GCR_CNTL bits (full = all, else without GLI and GL2, as ops_amd.py);
 * gfx9: CP_COHER_CNTL actions (soc15d.h). Size "all memory" (2^64-1) from base 0. */
static inline void amd_pm4_acquire_mem(amd_cmdbuf *b, bool gfx9, bool full) {
  if (gfx9) {
    uint32_t cntl = AMD_PM4_GFX9_ACQUIRE_MEM_CP_COHER_CNTL_SH_KCACHE_ACTION_ENA(1) |
                    AMD_PM4_GFX9_ACQUIRE_MEM_CP_COHER_CNTL_TCL1_ACTION_ENA(1);
    if (full)
      cntl |= AMD_PM4_GFX9_ACQUIRE_MEM_CP_COHER_CNTL_SH_ICACHE_ACTION_ENA(1) |
              AMD_PM4_GFX9_ACQUIRE_MEM_CP_COHER_CNTL_TC_ACTION_ENA(1) |
              AMD_PM4_GFX9_ACQUIRE_MEM_CP_COHER_CNTL_TC_WB_ACTION_ENA(1);
    uint32_t *p = amd_cmd_reserve(b, 7);
    p[0] = AMD_PM4_GFX9_PACKET3(AMD_PM4_GFX9_ACQUIRE_MEM, 5);
    p[1] = cntl, p[2] = 0xffffffffu, p[3] = 0xffffffffu, p[4] = 0, p[5] = 0, p[6] = 0xa; /* poll interval */
    return;
  }
  uint32_t gcr = AMD_PM4_ACQUIRE_MEM_GCR_CNTL_GLM_WB(1) | AMD_PM4_ACQUIRE_MEM_GCR_CNTL_GLM_INV(1) |
                 AMD_PM4_ACQUIRE_MEM_GCR_CNTL_GLK_WB(1) | AMD_PM4_ACQUIRE_MEM_GCR_CNTL_GLK_INV(1) |
                 AMD_PM4_ACQUIRE_MEM_GCR_CNTL_GLV_INV(1) | AMD_PM4_ACQUIRE_MEM_GCR_CNTL_GL1_INV(1);
  if (full)
    gcr |= AMD_PM4_ACQUIRE_MEM_GCR_CNTL_GLI_INV(1) | AMD_PM4_ACQUIRE_MEM_GCR_CNTL_GL2_INV(1) |
           AMD_PM4_ACQUIRE_MEM_GCR_CNTL_GL2_WB(1);
  uint32_t *p = amd_cmd_reserve(b, 8);
  p[0] = AMD_PM4_PACKET3(AMD_PM4_ACQUIRE_MEM, 6);
  p[1] = 0, p[2] = 0xffffffffu, p[3] = 0xffffffffu, p[4] = 0, p[5] = 0, p[6] = 0, p[7] = gcr;
}

/* End-of-pipe RELEASE_MEM: write `value` (DATA_SEL 32-bit low, as the reference's signals) or the GPU clock
 * (timestamp, 64-bit) to va; with int_ctxid != 0 also interrupt with that context id (KFD event). */
typedef enum amd_release_data { AMD_RELEASE_DATA32, AMD_RELEASE_DATA64, AMD_RELEASE_CLOCK } amd_release_data;

static inline void amd_pm4_release_mem(amd_cmdbuf *b, bool gfx9, uint64_t va, uint64_t value, amd_release_data data,
                                       bool cache_flush, uint32_t int_ctxid) {
  uint32_t ev = AMD_PM4_RELEASE_MEM_EVENT_TYPE(gfx9 ? AMD_PM4_GFX9_EVENT_CACHE_FLUSH_AND_INV_TS_EVENT
                                                    : AMD_PM4_EVENT_CACHE_FLUSH_AND_INV_TS_EVENT) |
                AMD_PM4_RELEASE_MEM_EVENT_INDEX(AMD_PM4_RELEASE_MEM_EVENT_INDEX_END_OF_PIPE);
  if (cache_flush)
    ev |= gfx9 ? AMD_PM4_GFX9_EOP_TC_WB_ACTION_EN | AMD_PM4_GFX9_EOP_TC_NC_ACTION_EN
               : AMD_PM4_RELEASE_MEM_GCR_GLM_WB | AMD_PM4_RELEASE_MEM_GCR_GLM_INV | AMD_PM4_RELEASE_MEM_GCR_GLV_INV |
                     AMD_PM4_RELEASE_MEM_GCR_GL1_INV | AMD_PM4_RELEASE_MEM_GCR_GL2_INV |
                     AMD_PM4_RELEASE_MEM_GCR_GL2_WB | AMD_PM4_RELEASE_MEM_GCR_SEQ;
  uint32_t ds = data == AMD_RELEASE_DATA32   ? AMD_PM4_RELEASE_MEM_DATA_SEL_SEND_32_BIT_LOW
                : data == AMD_RELEASE_DATA64 ? AMD_PM4_RELEASE_MEM_DATA_SEL_SEND_64_BIT_DATA
                                             : AMD_PM4_RELEASE_MEM_DATA_SEL_SEND_GPU_CLOCK_COUNTER;
  uint32_t is = int_ctxid ? AMD_PM4_RELEASE_MEM_INT_SEL_SEND_INTERRUPT_AFTER_WRITE_CONFIRM
                          : AMD_PM4_RELEASE_MEM_INT_SEL_NONE;
  assert(!(va & (data == AMD_RELEASE_DATA32 ? 3 : 7)) && "amd_pm4_release_mem: misaligned address");
  uint32_t *p = amd_cmd_reserve(b, 8);
  p[0] = AMD_PM4_PACKET3(AMD_PM4_RELEASE_MEM, 6);
  p[1] = ev;
  p[2] = AMD_PM4_RELEASE_MEM_DATA_SEL(ds) | AMD_PM4_RELEASE_MEM_INT_SEL(is) |
         AMD_PM4_RELEASE_MEM_DST_SEL(AMD_PM4_RELEASE_MEM_DST_SEL_MEMORY_CONTROLLER);
  p[3] = amd_lo(va), p[4] = amd_hi(va), p[5] = amd_lo(value), p[6] = amd_hi(value), p[7] = int_ctxid;
}

/* Wait until (mem32[va] & mask) `func` ref; func is AMD_PM4_WAIT_REG_MEM_FUNCTION_*. Poll interval 4 (reference). */
static inline void amd_pm4_wait_mem(amd_cmdbuf *b, uint64_t va, uint32_t func, uint32_t ref, uint32_t mask) {
  assert(!(va & 3) && "amd_pm4_wait_mem: misaligned address");
  uint32_t *p = amd_cmd_reserve(b, 7);
  p[0] = AMD_PM4_PACKET3(AMD_PM4_WAIT_REG_MEM, 5);
  p[1] = AMD_PM4_WAIT_REG_MEM_FUNCTION(func) | AMD_PM4_WAIT_REG_MEM_MEM_SPACE(AMD_PM4_WAIT_REG_MEM_MEM_SPACE_MEM) |
         AMD_PM4_WAIT_REG_MEM_OPERATION(AMD_PM4_WAIT_REG_MEM_OPERATION_WAIT) |
         AMD_PM4_WAIT_REG_MEM_ENGINE(AMD_PM4_WAIT_REG_MEM_ENGINE_ME);
  p[2] = amd_lo(va), p[3] = amd_hi(va), p[4] = ref, p[5] = mask, p[6] = 4;
}

/* HDP flush: write `mask` to req_reg, then wait until (done_reg & mask) == mask (WAIT_REG_MEM operation
 * wr_wait_wr_reg, function EQ, engine ME: linux 6.1 gfx_v11_0_ring_emit_hdp_flush / gfx_v9_0_ring_emit_hdp_flush;
 * the same fields in soc15d.h). Register addresses come from amd/amd_nbio.h. */
static inline void amd_pm4_hdp_flush(amd_cmdbuf *b, uint32_t req_reg, uint32_t done_reg, uint32_t mask) {
  uint32_t *p = amd_cmd_reserve(b, 7);
  p[0] = AMD_PM4_PACKET3(AMD_PM4_WAIT_REG_MEM, 5);
  p[1] = AMD_PM4_WAIT_REG_MEM_FUNCTION(AMD_PM4_WAIT_REG_MEM_FUNCTION_EQ) |
         AMD_PM4_WAIT_REG_MEM_MEM_SPACE(AMD_PM4_WAIT_REG_MEM_MEM_SPACE_REG) |
         AMD_PM4_WAIT_REG_MEM_OPERATION(AMD_PM4_WAIT_REG_MEM_OPERATION_WR_WAIT_WR_REG) |
         AMD_PM4_WAIT_REG_MEM_ENGINE(AMD_PM4_WAIT_REG_MEM_ENGINE_ME);
  p[2] = req_reg, p[3] = done_reg, p[4] = mask, p[5] = mask, p[6] = 0x20; /* poll interval, as linux */
}

static inline void amd_pm4_event_write(amd_cmdbuf *b, uint32_t event, uint32_t index) {
  uint32_t *p = amd_cmd_reserve(b, 2);
  p[0] = AMD_PM4_PACKET3(AMD_PM4_EVENT_WRITE, 0);
  p[1] = AMD_PM4_EVENT_TYPE(event) | AMD_PM4_EVENT_INDEX(index);
}

/* CP DMA (DMA_DATA, nvd.h / soc15d.h): copy `bytes` from src to dst, both addressed through L2 (SRC_SEL/DST_SEL 3,
 * as mesa's radv_cp_dma.c does on gfx9+), on the ME; CP_SYNC makes the CP wait for the copy before its next packet, so
 * a following RELEASE_MEM signals a finished copy. BYTE_COUNT is COMMAND [25:0] (nvd.h; the first command bit is
 * CMD_SAS), but gfx11 copies at most 32767 bytes per packet (mesa src/amd/vulkan/radv_cp_dma.c,
 * cp_dma_max_byte_count); chunks are kept 32-byte aligned as there (SI_CPDMA_ALIGNMENT, for speed). */
#define AMD_PM4_DMA_DATA_DWORDS 7u
#define AMD_PM4_DMA_DATA_COUNT_BITS 26u /* log2(AMD_PM4_DMA_DATA_CMD_SAS) */
#define AMD_PM4_DMA_DATA_GFX11_MAX_B 32767u
_Static_assert(AMD_PM4_DMA_DATA_CMD_SAS == 1u << AMD_PM4_DMA_DATA_COUNT_BITS && AMD_PM4_GFX9_DMA_DATA == AMD_PM4_DMA_DATA &&
                   AMD_PM4_GFX9_DMA_DATA_CMD_SAS == AMD_PM4_DMA_DATA_CMD_SAS &&
                   AMD_PM4_GFX9_DMA_DATA_CP_SYNC == AMD_PM4_DMA_DATA_CP_SYNC &&
                   AMD_PM4_GFX9_DMA_DATA_SRC_SEL_SHIFT == AMD_PM4_DMA_DATA_SRC_SEL_SHIFT &&
                   AMD_PM4_GFX9_DMA_DATA_DST_SEL_SHIFT == AMD_PM4_DMA_DATA_DST_SEL_SHIFT,
               "DMA_DATA has one layout on gfx9 and gfx10+");
/* The largest chunk: gfx9 (CDNA) takes the full field, every other supported target is gfx11+. */
static inline uint32_t amd_pm4_dma_data_max_B(bool gfx9) {
  return (gfx9 ? AMD_PM4_DMA_DATA_CMD_SAS - 1u : AMD_PM4_DMA_DATA_GFX11_MAX_B) & ~31u;
}
static inline void amd_pm4_dma_data(amd_cmdbuf *b, uint64_t dst, uint64_t src, uint32_t bytes) {
  assert(bytes < AMD_PM4_DMA_DATA_CMD_SAS && "amd_pm4_dma_data: byte count over COMMAND [25:0]");
  uint32_t *p = amd_cmd_reserve(b, AMD_PM4_DMA_DATA_DWORDS);
  p[0] = AMD_PM4_PACKET3(AMD_PM4_DMA_DATA, AMD_PM4_DMA_DATA_DWORDS - 2);
  p[1] = AMD_PM4_DMA_DATA_ENGINE(AMD_PM4_DMA_DATA_ENGINE_ME) |
         AMD_PM4_DMA_DATA_SRC_SEL(AMD_PM4_DMA_DATA_SRC_SEL_SRC_ADDR_L2) |
         AMD_PM4_DMA_DATA_DST_SEL(AMD_PM4_DMA_DATA_DST_SEL_DST_ADDR_L2) | AMD_PM4_DMA_DATA_CP_SYNC;
  p[2] = amd_lo(src), p[3] = amd_hi(src), p[4] = amd_lo(dst), p[5] = amd_hi(dst);
  p[6] = bytes; /* memory to memory: CMD_SAS/DAS 0, addresses increment (SAIC/DAIC 0) */
}

/* Grid values are workgroup counts (not threads). */
static inline void amd_pm4_dispatch_direct(amd_cmdbuf *b, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t initiator) {
  uint32_t *p = amd_cmd_reserve(b, 5);
  p[0] = AMD_PM4_PACKET3(AMD_PM4_DISPATCH_DIRECT, 3);
  p[1] = gx, p[2] = gy, p[3] = gz, p[4] = initiator;
}

#endif
