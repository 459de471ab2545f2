/* SDMA packet builders over autogen/amd_sdma.h. The packets used (COPY_LINEAR, FENCE, TRAP, POLL_REGMEM,
 * TIMESTAMP_GET_GLOBAL) have the same dword layout in SDMA 4, 5 and 6 (asserted), so the SDMA6 names build all of
 * them; only the copy COUNT width differs: 22 bits (SDMA 4/5) or 30 bits (SDMA 6). Each builder records its packet's
 * dword count in `sizes` so the ring writer can keep packets whole across the ring end. */
#ifndef HCQ_AMD_SDMA_PKT_H
#define HCQ_AMD_SDMA_PKT_H

#include "amd/amd_pm4.h"
#include "autogen/amd_sdma.h"

_Static_assert(AMD_SDMA4_COPY_LINEAR_DWORDS == AMD_SDMA6_COPY_LINEAR_DWORDS &&
                   AMD_SDMA4_FENCE_DWORDS == AMD_SDMA6_FENCE_DWORDS &&
                   AMD_SDMA4_POLL_REGMEM_DWORDS == AMD_SDMA6_POLL_REGMEM_DWORDS &&
                   AMD_SDMA4_POLL_REGMEM_HEADER_FUNC_SHIFT == AMD_SDMA6_POLL_REGMEM_HEADER_FUNC_SHIFT &&
                   AMD_SDMA5_POLL_REGMEM_HEADER_MEM_POLL_SHIFT == AMD_SDMA6_POLL_REGMEM_HEADER_MEM_POLL_SHIFT &&
                   AMD_SDMA4_TIMESTAMP_GET_GLOBAL_DWORDS == AMD_SDMA6_TIMESTAMP_GET_GLOBAL_DWORDS &&
                   AMD_SDMA4_TRAP_DWORDS == AMD_SDMA6_TRAP_DWORDS && AMD_SDMA4_OP_FENCE == AMD_SDMA6_OP_FENCE,
               "SDMA 4/5/6 layouts of the packets hcq emits");

/* Bytes one COPY_LINEAR can move: COUNT holds bytes - 1. */
static inline uint64_t amd_sdma_max_copy_B(unsigned sdma_major) {
  return (uint64_t)(sdma_major >= 6 ? AMD_SDMA6_COPY_LINEAR_COUNT_COUNT_MASK : AMD_SDMA4_COPY_LINEAR_COUNT_COUNT_MASK) + 1;
}

typedef struct amd_sdma_buf {
  amd_cmdbuf b;
  uint32_t *sizes; /* dwords per packet */
  uint32_t n_packets, packets_cap;
} amd_sdma_buf;

static inline uint32_t *amd_sdma_reserve(amd_sdma_buf *s, uint32_t n) {
  assert(s->n_packets < s->packets_cap && "amd_sdma_buf: too many packets");
  s->sizes[s->n_packets++] = n;
  return amd_cmd_reserve(&s->b, n);
}

/* Copy size_B bytes, split at the COUNT limit: ceil(size / max) packets. */
static inline void amd_sdma_copy(amd_sdma_buf *s, uint64_t dst, uint64_t src, uint64_t size_B, uint64_t max_B) {
  for (uint64_t off = 0; off < size_B; off += max_B) {
    uint64_t n = size_B - off < max_B ? size_B - off : max_B;
    uint32_t *p = amd_sdma_reserve(s, AMD_SDMA6_COPY_LINEAR_DWORDS);
    p[0] = AMD_SDMA6_COPY_LINEAR_HEADER_OP(AMD_SDMA6_OP_COPY) | AMD_SDMA6_COPY_LINEAR_HEADER_SUB_OP(AMD_SDMA6_SUBOP_COPY_LINEAR);
    p[1] = (uint32_t)(n - 1); /* fits: n <= max_B = mask + 1 */
    p[2] = 0;
    p[3] = amd_lo(src + off), p[4] = amd_hi(src + off), p[5] = amd_lo(dst + off), p[6] = amd_hi(dst + off);
  }
}

/* 32-bit fence write. MTYPE 3 (uncached) on SDMA 5+, as ops_amd.py sets it for gfx10+. */
static inline void amd_sdma_fence(amd_sdma_buf *s, unsigned sdma_major, uint64_t va, uint32_t value) {
  assert(!(va & 3) && "amd_sdma_fence: misaligned address");
  uint32_t *p = amd_sdma_reserve(s, AMD_SDMA6_FENCE_DWORDS);
  p[0] = AMD_SDMA6_FENCE_HEADER_OP(AMD_SDMA6_OP_FENCE) | (sdma_major >= 5 ? AMD_SDMA6_FENCE_HEADER_MTYPE(3) : 0);
  p[1] = amd_lo(va), p[2] = amd_hi(va), p[3] = value;
}

static inline void amd_sdma_trap(amd_sdma_buf *s, uint32_t ctx) {
  uint32_t *p = amd_sdma_reserve(s, AMD_SDMA6_TRAP_DWORDS);
  p[0] = AMD_SDMA6_TRAP_HEADER_OP(AMD_SDMA6_OP_TRAP);
  p[1] = AMD_SDMA6_TRAP_INT_CONTEXT_INT_CONTEXT(ctx);
}

/* Poll memory until (mem32[va] & mask) func ref (func uses the WAIT_REG_MEM numbering: 3 ==, 5 >=). */
static inline void amd_sdma_poll_mem(amd_sdma_buf *s, uint64_t va, uint32_t func, uint32_t ref, uint32_t mask) {
  uint32_t *p = amd_sdma_reserve(s, AMD_SDMA6_POLL_REGMEM_DWORDS);
  p[0] = AMD_SDMA6_POLL_REGMEM_HEADER_OP(AMD_SDMA6_OP_POLL_REGMEM) | AMD_SDMA6_POLL_REGMEM_HEADER_FUNC(func) |
         AMD_SDMA6_POLL_REGMEM_HEADER_MEM_POLL(1);
  p[1] = amd_lo(va), p[2] = amd_hi(va), p[3] = ref, p[4] = mask;
  p[5] = AMD_SDMA6_POLL_REGMEM_DW5_INTERVAL(4) | AMD_SDMA6_POLL_REGMEM_DW5_RETRY_COUNT(0xfff);
}

/* 64-bit global timestamp at va (8-byte aligned). */
static inline void amd_sdma_timestamp(amd_sdma_buf *s, uint64_t va) {
  assert(!(va & 7) && "amd_sdma_timestamp: misaligned address");
  uint32_t *p = amd_sdma_reserve(s, AMD_SDMA6_TIMESTAMP_GET_GLOBAL_DWORDS);
  p[0] = AMD_SDMA6_TIMESTAMP_GET_GLOBAL_HEADER_OP(AMD_SDMA6_OP_TIMESTAMP) |
         AMD_SDMA6_TIMESTAMP_GET_GLOBAL_HEADER_SUB_OP(AMD_SDMA6_SUBOP_TIMESTAMP_GET_GLOBAL);
  p[1] = amd_lo(va), p[2] = amd_hi(va);
}

#endif
