/* The emulated command processors: PM4 (compute queues) and SDMA (copy queues). A worker thread, woken by doorbell
 * stores, runs every queue until no queue makes progress. Packet formats come from autogen/amd_pm4.h and
 * autogen/amd_sdma.h (the same headers the driver builds with; the SDMA packets used here have the same layout in
 * SDMA 4, 5 and 6, asserted below, only the copy count width differs). Every packet is decoded in full: an unknown
 * opcode, a wrong body length, a register write outside its window or an address outside the live allocations
 * stops the queue with an error naming the packet and its ring offset. HCQ_TRACE=1 prints each decoded packet. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "amd/amd_pm4.h"
#include "autogen/amd_pm4.h"
#include "autogen/amd_regs_gfx11.h"
#include "autogen/amd_regs_gfx9.h"
#include "autogen/amd_sdma.h"
#include "autogen/kfd.h"
#include "emulator_tests/kfd_mock_internal.h"

_Static_assert(AMD_SDMA4_FENCE_DATA_DATA_DW == AMD_SDMA6_FENCE_DATA_DATA_DW &&
                   AMD_SDMA4_POLL_REGMEM_HEADER_FUNC_SHIFT == AMD_SDMA6_POLL_REGMEM_HEADER_FUNC_SHIFT &&
                   AMD_SDMA4_POLL_REGMEM_MASK_MASK_DW == AMD_SDMA6_POLL_REGMEM_MASK_MASK_DW &&
                   AMD_SDMA4_COPY_LINEAR_DST_ADDR_HI_DST_ADDR_63_32_DW == AMD_SDMA6_COPY_LINEAR_DST_ADDR_HI_DST_ADDR_63_32_DW &&
                   AMD_SDMA5_COPY_LINEAR_DWORDS == AMD_SDMA6_COPY_LINEAR_DWORDS &&
                   AMD_SDMA4_TIMESTAMP_GET_GLOBAL_DWORDS == AMD_SDMA6_TIMESTAMP_GET_GLOBAL_DWORDS,
               "SDMA 4/5/6 packet layouts the mock decodes with the SDMA6 names");
_Static_assert(AMD_PM4_GFX9_RELEASE_MEM == AMD_PM4_RELEASE_MEM && AMD_PM4_GFX9_ACQUIRE_MEM == AMD_PM4_ACQUIRE_MEM &&
                   AMD_PM4_GFX9_SET_SH_REG == AMD_PM4_SET_SH_REG && AMD_PM4_GFX9_WAIT_REG_MEM == AMD_PM4_WAIT_REG_MEM,
               "gfx9 and gfx11 PM4 opcodes the mock decodes");

void kfd_mock_trace_set_output(kfd_mock *m, FILE *out) {
  pthread_mutex_lock(&m->lock);
  m->trace = out;
  pthread_mutex_unlock(&m->lock);
}

static bool is_gfx9(const kfd_mock *m) { return m->arch->gfx_target_version < 100000; }

/* A queue's view for the executors. */
typedef struct qexec {
  kfd_mock *m;
  kfd_mock_queue *q;
  volatile uint64_t *rptr, *wptr;
  const volatile uint32_t *ring;
  uint64_t ring_dw; /* power of 2 */
  uint64_t pos;     /* PM4: dwords; SDMA: bytes */
  bool failed;
} qexec;

static uint32_t rd(const qexec *x, uint64_t dw) { return x->ring[dw & (x->ring_dw - 1)]; }

static void dump_words(char *out, size_t n, const qexec *x, uint64_t dw, unsigned count) {
  size_t at = 0;
  for (unsigned i = 0; i < count && at + 10 < n; i++) at += (size_t)snprintf(out + at, n - at, " %08x", rd(x, dw + i));
}

/* Stop the queue with an error that names the packet and dumps the queue state. */
static void qfail(qexec *x, uint64_t pkt_dw, const char *what, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void qfail(qexec *x, uint64_t pkt_dw, const char *what, const char *fmt, ...) {
  char msg[256], words[100];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  dump_words(words, sizeof words, x, pkt_dw, 8);
  kfd_mock_queue *q = x->q;
  kfd_mock_report(x->m,
                  "GPU %u %s queue %u: %s packet at ring offset 0x%" PRIx64 " (byte 0x%" PRIx64 "): %s; queue state: "
                  "ring 0x%" PRIx64 " size 0x%x, rptr 0x%" PRIx64 " wptr 0x%" PRIx64 " (%s), words:%s",
                  q->gpu, q->type == AMD_KFD_IOC_QUEUE_TYPE_SDMA ? "SDMA" : "PM4 compute", q->id, what,
                  pkt_dw & (x->ring_dw - 1), (pkt_dw & (x->ring_dw - 1)) * 4, msg, q->ring_va, q->ring_size_B,
                  (uint64_t)__atomic_load_n(x->rptr, __ATOMIC_RELAXED),
                  (uint64_t)__atomic_load_n(x->wptr, __ATOMIC_RELAXED), q->type == AMD_KFD_IOC_QUEUE_TYPE_SDMA ? "bytes" : "dwords", words);
  q->hung = true;
  x->failed = true;
}

/* Host pointer for [va, va+size) if the GPU may touch it; else a page fault naming the packet. */
static void *gpu_mem(qexec *x, uint64_t pkt_dw, const char *what, uint64_t va, uint64_t size_B) {
  if (kfd_mock_find_alloc(x->m, x->q->gpu, va, size_B)) return (void *)(uintptr_t)va;
  kfd_mock_raise_memory_fault(x->m, x->q->gpu, va);
  qfail(x, pkt_dw, what, "page fault: 0x%" PRIx64 "+0x%" PRIx64 " is not inside a live allocation mapped to GPU %u", va,
        size_B, x->q->gpu);
  return NULL;
}


static bool compare(uint32_t func, uint32_t v, uint32_t ref) {
  switch (func) {
  case AMD_PM4_WAIT_REG_MEM_FUNCTION_ALWAYS: return true;
  case AMD_PM4_WAIT_REG_MEM_FUNCTION_LT: return v < ref;
  case AMD_PM4_WAIT_REG_MEM_FUNCTION_LE: return v <= ref;
  case AMD_PM4_WAIT_REG_MEM_FUNCTION_EQ: return v == ref;
  case AMD_PM4_WAIT_REG_MEM_FUNCTION_NE: return v != ref;
  case AMD_PM4_WAIT_REG_MEM_FUNCTION_GE: return v >= ref;
  case AMD_PM4_WAIT_REG_MEM_FUNCTION_GT: return v > ref;
  default: return false;
  }
}

/* The wait is unsatisfied: remember since when; past the timeout the queue hangs with its state dumped. */
static int wait_blocked(qexec *x, uint64_t pkt_dw, const char *what, uint64_t va, uint32_t v, uint32_t ref) {
  uint64_t now = kfd_mock_now_ns();
  if (!x->q->blocked_since_ns) x->q->blocked_since_ns = now;
  else if (now - x->q->blocked_since_ns > (uint64_t)x->m->cfg.wait_timeout_ms * 1000000ull)
    qfail(x, pkt_dw, what, "wait never completed: memory 0x%" PRIx64 " holds 0x%x, waiting for 0x%x (timeout %u ms)", va,
          v, ref, x->m->cfg.wait_timeout_ms);
  return 0;
}

/* Register addresses (dword, absolute) of the gfx the mock emulates. */
typedef struct regmap {
  uint32_t pgm_lo, pgm_hi, rsrc1, rsrc2, rsrc3, num_thread_x, user_data0, tmpring, limits, scratch_lo, scratch_hi;
} regmap;

static regmap regs_of(const kfd_mock *m) {
  const uint32_t *b = m->arch->gc_base;
#define R9(n) (b[AMD_GFX9_##n##_BASE_IDX] + AMD_GFX9_##n)
#define R11(n) (b[AMD_GFX11_##n##_BASE_IDX] + AMD_GFX11_##n)
#define MAP(R)                                                                                                     \
  (regmap){R(COMPUTE_PGM_LO), R(COMPUTE_PGM_HI), R(COMPUTE_PGM_RSRC1), R(COMPUTE_PGM_RSRC2), R(COMPUTE_PGM_RSRC3),   \
           R(COMPUTE_NUM_THREAD_X), R(COMPUTE_USER_DATA_0), R(COMPUTE_TMPRING_SIZE), R(COMPUTE_RESOURCE_LIMITS),     \
           R(COMPUTE_DISPATCH_SCRATCH_BASE_LO), R(COMPUTE_DISPATCH_SCRATCH_BASE_HI)}
  return is_gfx9(m) ? MAP(R9) : MAP(R11);
#undef MAP
#undef R9
#undef R11
}

static void dispatch(qexec *x, uint64_t at, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t initiator) {
  const uint32_t *r = x->q->regs;
  regmap rm = regs_of(x->m);
  kfd_mock_dispatch d = {.gpu = x->q->gpu, .grid = {gx, gy, gz}, .initiator = initiator};
  d.pgm_addr = ((uint64_t)r[rm.pgm_hi] << 32 | r[rm.pgm_lo]) << 8;
  d.rsrc1 = r[rm.rsrc1], d.rsrc2 = r[rm.rsrc2], d.rsrc3 = r[rm.rsrc3];
  for (int i = 0; i < 3; i++) d.num_thread[i] = r[rm.num_thread_x + i];
  for (int i = 0; i < 16; i++) d.user_data[i] = r[rm.user_data0 + i];
  d.tmpring_size = r[rm.tmpring], d.resource_limits = r[rm.limits];
  d.scratch_base = ((uint64_t)r[rm.scratch_hi] << 32 | r[rm.scratch_lo]) << 8;
  if (!gx || !gy || !gz || !d.num_thread[0] || !d.num_thread[1] || !d.num_thread[2])
    return qfail(x, at, "DISPATCH_DIRECT", "empty grid %ux%ux%u or workgroup %ux%ux%u", gx, gy, gz, d.num_thread[0],
                 d.num_thread[1], d.num_thread[2]);
  if (!gpu_mem(x, at, "DISPATCH_DIRECT (program)", d.pgm_addr, 4)) return;
  if (!x->m->dispatch_fn)
    return qfail(x, at, "DISPATCH_DIRECT", "no kernel executor is installed (program 0x%" PRIx64 ")", d.pgm_addr);
  char detail[KIF_DETAIL_MAX] = "";
  if (x->m->dispatch_fn(x->m->dispatch_user, x->m, &d, detail))
    qfail(x, at, "DISPATCH_DIRECT", "kernel at 0x%" PRIx64 " failed: %s", d.pgm_addr, detail);
}

/* One PM4 packet at x->pos (dwords). Returns the packet length in dwords, or 0 (blocked or failed). */
static uint64_t pm4_packet(qexec *x, uint64_t avail) {
  uint64_t at = x->pos;
  uint32_t h = rd(x, at);
  if (h >> 30 != 3) return qfail(x, at, "PM4", "type-%u header 0x%08x (only type-3 packets are emitted)", h >> 30, h), 0;
  uint32_t op = (h >> AMD_PM4_OPCODE_SHIFT) & AMD_PM4_OPCODE_MASK;
  uint64_t n = ((h >> AMD_PM4_COUNT_SHIFT) & AMD_PM4_COUNT_MASK) + 1; /* body dwords */
  if (n + 1 > avail) return qfail(x, at, "PM4", "opcode 0x%x with %" PRIu64 " body dwords runs past wptr", op, n), 0;
#define B(i) rd(x, at + 1 + (i))
#define NEED(name, want) \
  if (n != (want)) return qfail(x, at, name, "body of %" PRIu64 " dwords, expected %u", n, (unsigned)(want)), 0
  if (x->m->trace) {
    char words[100];
    dump_words(words, sizeof words, x, at, n + 1 < 8 ? (unsigned)n + 1 : 8);
    fprintf(x->m->trace, "amd-mock pm4 gpu%u q%u @0x%" PRIx64 " op=0x%02x n=%" PRIu64 ":%s\n", x->q->gpu, x->q->id,
            at & (x->ring_dw - 1), op, n, words);
  }
  switch (op) {
  case AMD_PM4_NOP: break;
  case AMD_PM4_SET_SH_REG:
  case AMD_PM4_SET_UCONFIG_REG: {
    bool sh = op == AMD_PM4_SET_SH_REG;
    uint32_t start = sh ? AMD_PM4_SET_SH_REG_START : AMD_PM4_SET_UCONFIG_REG_START;
    uint32_t end = sh ? AMD_PM4_SET_SH_REG_END : AMD_PM4_SET_UCONFIG_REG_END; /* first register past the window */
    uint64_t reg = (uint64_t)start + B(0);
    if (n < 2 || reg + n - 1 > end || reg + n - 1 > 0xffff)
      return qfail(x, at, sh ? "SET_SH_REG" : "SET_UCONFIG_REG", "registers 0x%" PRIx64 "..+%" PRIu64 " leave 0x%x..0x%x",
                   reg, n - 1, start, end), 0;
    for (uint64_t i = 1; i < n; i++) x->q->regs[reg + i - 1] = B(i);
    break;
  }
  case AMD_PM4_ACQUIRE_MEM: NEED("ACQUIRE_MEM", is_gfx9(x->m) ? 6 : 7); break; /* caches are not modelled */
  case AMD_PM4_EVENT_WRITE: NEED("EVENT_WRITE", 1); break;
  case AMD_PM4_RELEASE_MEM: {
    NEED("RELEASE_MEM", 7);
    uint32_t sel = B(1), data_sel = sel >> AMD_PM4_RELEASE_MEM_DATA_SEL_SHIFT;
    uint32_t int_sel = (sel >> AMD_PM4_RELEASE_MEM_INT_SEL_SHIFT) & 7;
    uint64_t va = (uint64_t)B(3) << 32 | B(2), data = (uint64_t)B(5) << 32 | B(4);
    if (data_sel == AMD_PM4_RELEASE_MEM_DATA_SEL_SEND_32_BIT_LOW) {
      uint32_t *p = gpu_mem(x, at, "RELEASE_MEM", va, 4);
      if (!p) return 0;
      __atomic_store_n(p, (uint32_t)data, __ATOMIC_RELEASE);
    } else if (data_sel == AMD_PM4_RELEASE_MEM_DATA_SEL_SEND_64_BIT_DATA ||
               data_sel == AMD_PM4_RELEASE_MEM_DATA_SEL_SEND_GPU_CLOCK_COUNTER) {
      uint64_t *p = gpu_mem(x, at, "RELEASE_MEM", va, 8);
      if (!p) return 0;
      __atomic_store_n(p, data_sel == AMD_PM4_RELEASE_MEM_DATA_SEL_SEND_64_BIT_DATA ? data : kfd_mock_gpu_clock(x->m), __ATOMIC_RELEASE);
    } else if (data_sel != AMD_PM4_RELEASE_MEM_DATA_SEL_NONE) {
      return qfail(x, at, "RELEASE_MEM", "DATA_SEL %u is not emulated", data_sel), 0;
    }
    if (int_sel >= AMD_PM4_RELEASE_MEM_INT_SEL_SEND_INTERRUPT_AFTER_WRITE_CONFIRM) kfd_mock_signal_event_id(x->m, B(6));
    break;
  }
  case AMD_PM4_WAIT_REG_MEM: {
    NEED("WAIT_REG_MEM", 6);
    uint32_t info = B(0), func = info & 7, space = (info >> AMD_PM4_WAIT_REG_MEM_MEM_SPACE_SHIFT) & 3;
    uint32_t oper = (info >> AMD_PM4_WAIT_REG_MEM_OPERATION_SHIFT) & 3;
    if (space == AMD_PM4_WAIT_REG_MEM_MEM_SPACE_REG) { /* the HDP flush: write REQ, wait on DONE (kfd_mock_hdp.c) */
      if (oper != AMD_PM4_WAIT_REG_MEM_OPERATION_WR_WAIT_WR_REG)
        return qfail(x, at, "WAIT_REG_MEM", "register polls are emulated only as write-wait (HDP flush)"), 0;
      char err[200];
      uint32_t done;
      if (kfd_mock_hdp_write_wait(x->m, x->q->gpu, B(1), B(2), B(3), B(4), &done, err, sizeof err))
        return qfail(x, at, "WAIT_REG_MEM (HDP flush)", "%s", err), 0;
      if (!compare(func, done, B(3))) return wait_blocked(x, at, "WAIT_REG_MEM (HDP flush)", B(2), done, B(3));
      break;
    }
    if (space != AMD_PM4_WAIT_REG_MEM_MEM_SPACE_MEM || func > AMD_PM4_WAIT_REG_MEM_FUNCTION_GT)
      return qfail(x, at, "WAIT_REG_MEM", "info 0x%x: bad memory space or function", info), 0;
    uint64_t va = (uint64_t)B(2) << 32 | B(1);
    uint32_t *p = gpu_mem(x, at, "WAIT_REG_MEM", va, 4);
    if (!p) return 0;
    uint32_t v = __atomic_load_n(p, __ATOMIC_ACQUIRE) & B(4);
    if (!compare(func, v, B(3))) return wait_blocked(x, at, "WAIT_REG_MEM", va, v, B(3));
    break;
  }
  case AMD_PM4_WRITE_DATA: {
    if (n < 4) return qfail(x, at, "WRITE_DATA", "body of %" PRIu64 " dwords, expected >= 4", n), 0;
    uint32_t dst = (B(0) >> AMD_PM4_WRITE_DATA_DST_SEL_SHIFT) & 0xf;
    if (dst != 5 && dst != AMD_PM4_WRITE_DATA_DST_SEL_MEM)
      return qfail(x, at, "WRITE_DATA", "DST_SEL %u is not emulated (memory only)", dst), 0;
    uint64_t va = (uint64_t)B(2) << 32 | B(1);
    uint32_t *p = gpu_mem(x, at, "WRITE_DATA", va, (n - 3) * 4);
    if (!p) return 0;
    for (uint64_t i = 3; i < n; i++) p[i - 3] = B(i);
    break;
  }
  case AMD_PM4_DMA_DATA: {
    NEED("DMA_DATA", AMD_PM4_DMA_DATA_DWORDS - 1);
    uint32_t ctl = B(0), cmd = B(5);
    uint32_t src_sel = (ctl >> AMD_PM4_DMA_DATA_SRC_SEL_SHIFT) & 3, dst_sel = (ctl >> AMD_PM4_DMA_DATA_DST_SEL_SHIFT) & 3;
    uint64_t bytes = cmd & (AMD_PM4_DMA_DATA_CMD_SAS - 1u);
    if ((src_sel != AMD_PM4_DMA_DATA_SRC_SEL_SRC_ADDR_L2 && src_sel != AMD_PM4_DMA_DATA_SRC_SEL_SRC_ADDR_SAS) ||
        (dst_sel != AMD_PM4_DMA_DATA_DST_SEL_DST_ADDR_L2 && dst_sel != AMD_PM4_DMA_DATA_DST_SEL_DST_ADDR_DAS))
      return qfail(x, at, "DMA_DATA", "SRC_SEL %u / DST_SEL %u: only memory to memory is emulated", src_sel, dst_sel), 0;
    if (cmd & (AMD_PM4_DMA_DATA_CMD_SAS | AMD_PM4_DMA_DATA_CMD_DAS | AMD_PM4_DMA_DATA_CMD_SAIC | AMD_PM4_DMA_DATA_CMD_DAIC))
      return qfail(x, at, "DMA_DATA", "COMMAND 0x%08x: register or non-incrementing addresses are not emulated", cmd), 0;
    if (!is_gfx9(x->m) && bytes > AMD_PM4_DMA_DATA_GFX11_MAX_B)
      return qfail(x, at, "DMA_DATA", "%" PRIu64 " bytes: gfx11+ copies at most %u per packet", bytes,
                   AMD_PM4_DMA_DATA_GFX11_MAX_B), 0;
    uint64_t src = (uint64_t)B(2) << 32 | B(1), dst = (uint64_t)B(4) << 32 | B(3);
    if (!bytes) break; /* a zero-byte DMA only synchronises */
    void *s = gpu_mem(x, at, "DMA_DATA (source)", src, bytes);
    void *d = s ? gpu_mem(x, at, "DMA_DATA (destination)", dst, bytes) : NULL;
    if (!d) return 0;
    memmove(d, s, bytes);
    break;
  }
  case AMD_PM4_DISPATCH_DIRECT:
    NEED("DISPATCH_DIRECT", 4);
    dispatch(x, at, B(0), B(1), B(2), B(3));
    if (x->failed) return 0;
    break;
  default:
    return qfail(x, at, "PM4", "unknown or unemulated opcode 0x%x", op), 0;
  }
#undef B
#undef NEED
  return n + 1;
}

/* One SDMA packet at x->pos (bytes). Returns its length in bytes, or 0. */
static uint64_t sdma_packet(qexec *x, uint64_t avail_B) {
  uint64_t at = x->pos / 4;
  uint32_t h = rd(x, at), op = h & AMD_SDMA6_COPY_LINEAR_HEADER_OP_MASK;
  uint32_t sub = (h >> AMD_SDMA6_COPY_LINEAR_HEADER_SUB_OP_SHIFT) & AMD_SDMA6_COPY_LINEAR_HEADER_SUB_OP_MASK;
#define B(i) rd(x, at + (i))
#define LEN(name, dw)                                                                                        \
  if ((uint64_t)(dw) * 4 > avail_B) return qfail(x, at, name, "packet of %u dwords runs past wptr", (unsigned)(dw)), 0
  if (x->m->trace) {
    char words[100];
    dump_words(words, sizeof words, x, at, 7);
    fprintf(x->m->trace, "amd-mock sdma gpu%u q%u @0x%" PRIx64 " op=%u sub=%u:%s\n", x->q->gpu, x->q->id, x->pos, op, sub, words);
  }
  unsigned major = x->m->arch->sdma_ver[0];
  switch (op) {
  case AMD_SDMA6_OP_NOP: return 4 + 4ull * ((h >> AMD_SDMA6_NOP_HEADER_COUNT_SHIFT) & AMD_SDMA6_NOP_HEADER_COUNT_MASK);
  case AMD_SDMA6_OP_COPY: {
    if (sub != AMD_SDMA6_SUBOP_COPY_LINEAR) return qfail(x, at, "SDMA COPY", "sub-op %u is not emulated", sub), 0;
    LEN("SDMA COPY_LINEAR", AMD_SDMA6_COPY_LINEAR_DWORDS);
    uint32_t mask = major >= 6 ? AMD_SDMA6_COPY_LINEAR_COUNT_COUNT_MASK : AMD_SDMA4_COPY_LINEAR_COUNT_COUNT_MASK;
    uint64_t size = (uint64_t)(B(AMD_SDMA6_COPY_LINEAR_COUNT_COUNT_DW) & mask) + 1;
    uint64_t src = (uint64_t)B(4) << 32 | B(3), dst = (uint64_t)B(6) << 32 | B(5);
    void *s = gpu_mem(x, at, "SDMA COPY_LINEAR (source)", src, size);
    void *d = s ? gpu_mem(x, at, "SDMA COPY_LINEAR (destination)", dst, size) : NULL;
    if (!d) return 0;
    memmove(d, s, size);
    return AMD_SDMA6_COPY_LINEAR_DWORDS * 4;
  }
  case AMD_SDMA6_OP_FENCE: {
    LEN("SDMA FENCE", AMD_SDMA6_FENCE_DWORDS);
    uint64_t va = (uint64_t)B(2) << 32 | B(1);
    uint32_t *p = gpu_mem(x, at, "SDMA FENCE", va, 4);
    if (!p) return 0;
    __atomic_store_n(p, B(AMD_SDMA6_FENCE_DATA_DATA_DW), __ATOMIC_RELEASE);
    return AMD_SDMA6_FENCE_DWORDS * 4;
  }
  case AMD_SDMA6_OP_TRAP:
    LEN("SDMA TRAP", AMD_SDMA6_TRAP_DWORDS);
    kfd_mock_signal_event_id(x->m, B(1) & AMD_SDMA6_TRAP_INT_CONTEXT_INT_CONTEXT_MASK);
    return AMD_SDMA6_TRAP_DWORDS * 4;
  case AMD_SDMA6_OP_POLL_REGMEM: {
    LEN("SDMA POLL_REGMEM", AMD_SDMA6_POLL_REGMEM_DWORDS);
    uint32_t func = (h >> AMD_SDMA6_POLL_REGMEM_HEADER_FUNC_SHIFT) & AMD_SDMA6_POLL_REGMEM_HEADER_FUNC_MASK;
    if (!((h >> AMD_SDMA6_POLL_REGMEM_HEADER_MEM_POLL_SHIFT) & 1))
      return qfail(x, at, "SDMA POLL_REGMEM", "register polls are not emulated"), 0;
    uint64_t va = (uint64_t)B(2) << 32 | B(1);
    uint32_t *p = gpu_mem(x, at, "SDMA POLL_REGMEM", va, 4);
    if (!p) return 0;
    uint32_t v = __atomic_load_n(p, __ATOMIC_ACQUIRE) & B(4);
    if (!compare(func, v, B(3))) return wait_blocked(x, at, "SDMA POLL_REGMEM", va, v, B(3));
    return AMD_SDMA6_POLL_REGMEM_DWORDS * 4;
  }
  case AMD_SDMA6_OP_TIMESTAMP: {
    if (sub != AMD_SDMA6_SUBOP_TIMESTAMP_GET_GLOBAL) return qfail(x, at, "SDMA TIMESTAMP", "sub-op %u", sub), 0;
    LEN("SDMA TIMESTAMP", AMD_SDMA6_TIMESTAMP_GET_GLOBAL_DWORDS);
    uint64_t va = (uint64_t)B(2) << 32 | B(1);
    if (va & 7) return qfail(x, at, "SDMA TIMESTAMP", "address 0x%" PRIx64 " is not 8-byte aligned", va), 0;
    uint64_t *p = gpu_mem(x, at, "SDMA TIMESTAMP", va, 8);
    if (!p) return 0;
    __atomic_store_n(p, kfd_mock_gpu_clock(x->m), __ATOMIC_RELEASE);
    return AMD_SDMA6_TIMESTAMP_GET_GLOBAL_DWORDS * 4;
  }
  default:
    return qfail(x, at, "SDMA", "unknown or unemulated opcode %u (sub-op %u)", op, sub), 0;
  }
#undef B
#undef LEN
}

/* Run one queue until it is empty, blocked or failed. Returns true on progress. */
static bool run_queue(kfd_mock *m, kfd_mock_queue *q) {
  if (!q->live || q->hung) return false;
  qexec x = {.m = m, .q = q};
  if (!kfd_mock_find_alloc(m, q->gpu, q->ring_va, q->ring_size_B) || !kfd_mock_find_alloc(m, q->gpu, q->rptr_va, 8) ||
      !kfd_mock_find_alloc(m, q->gpu, q->wptr_va, 8)) {
    kfd_mock_report(m, "GPU %u queue %u: its ring or pointers were freed while the queue is live", q->gpu, q->id);
    q->hung = true;
    return false;
  }
  x.rptr = (volatile uint64_t *)(uintptr_t)q->rptr_va;
  x.wptr = (volatile uint64_t *)(uintptr_t)q->wptr_va;
  x.ring = (const volatile uint32_t *)(uintptr_t)q->ring_va;
  x.ring_dw = q->ring_size_B / 4;
  bool sdma = q->type == AMD_KFD_IOC_QUEUE_TYPE_SDMA, progress = false;
  for (;;) {
    uint64_t w = __atomic_load_n(x.wptr, __ATOMIC_ACQUIRE), r = *x.rptr;
    if (r == w) break;
    if (w - r > (sdma ? q->ring_size_B : x.ring_dw)) {
      x.pos = r;
      qfail(&x, sdma ? r / 4 : r, "ring", "wptr 0x%" PRIx64 " is more than a ring ahead of rptr", w);
      break;
    }
    x.pos = r;
    uint64_t len = sdma ? sdma_packet(&x, w - r) : pm4_packet(&x, w - r);
    if (!len) break;
    q->blocked_since_ns = 0;
    m->packets++;
    __atomic_store_n(x.rptr, r + len, __ATOMIC_RELEASE);
    progress = true;
  }
  return progress;
}

bool kfd_mock_cp_run(kfd_mock *m) {
  bool progress = true;
  while (progress) {
    progress = false;
    for (unsigned i = 0; i < KFD_MOCK_MAX_QUEUES; i++)
      if (m->queues[i]) progress |= run_queue(m, m->queues[i]);
  }
  for (unsigned i = 0; i < KFD_MOCK_MAX_QUEUES; i++)
    if (m->queues[i] && m->queues[i]->live && !m->queues[i]->hung && m->queues[i]->blocked_since_ns) return true;
  return false;
}

#define WORKER_SPIN_NS 50000 /* poll for the next doorbell this long before sleeping (doorbells stay cheap) */

static void *worker(void *arg) {
  kfd_mock *m = arg;
  for (;;) {
    uint64_t idle_since = kfd_mock_now_ns();
    while (!atomic_load(&m->kicks) && !atomic_load(&m->stop_flag) && kfd_mock_now_ns() - idle_since < WORKER_SPIN_NS) {
    }
    if (!atomic_load(&m->kicks) && !atomic_load(&m->stop_flag)) {
      pthread_mutex_lock(&m->kick_lock);
      /* Dekker with kfd_mock_cp_kick (a read-modify-write, then a load): a kick either sees `sleeping` or this thread
       * sees its count. An exchange, not a seq_cst store: qemu-user 7.2 on x86 hosts lets a seq_cst load pass a
       * seq_cst store (aarch64 stlr; ldar), and a kick was lost (the CI's AMD launch rows waited 60 s on an unread
       * queue). Fences would do too, but gcc's -fsanitize=thread rejects them (cpu/cpu_sync.h: CPU_PUBLISH). */
      atomic_exchange(&m->sleeping, true);
      while (!atomic_load(&m->kicks) && !atomic_load(&m->stop_flag)) pthread_cond_wait(&m->kick_cond, &m->kick_lock);
      atomic_store(&m->sleeping, false);
      pthread_mutex_unlock(&m->kick_lock);
    }
    if (atomic_load(&m->stop_flag)) break;
    atomic_store(&m->busy, true);
    atomic_store(&m->kicks, 0);
    pthread_mutex_lock(&m->lock);
    bool blocked = kfd_mock_cp_run(m);
    pthread_mutex_unlock(&m->lock);
    atomic_store(&m->busy, false);
    if (blocked && !atomic_load(&m->kicks)) { /* re-poll waits: memory may change without a doorbell (CPU-set signals) */
      nanosleep(&(struct timespec){0, 20000}, NULL);
      atomic_fetch_add(&m->kicks, 1);
    }
  }
  return NULL;
}

hcq_status kfd_mock_cp_start(kfd_mock *m) {
  pthread_mutex_lock(&m->kick_lock);
  int err = 0;
  if (!m->worker_started) {
    err = pthread_create(&m->worker, NULL, worker, m);
    m->worker_started = err == 0;
  }
  pthread_mutex_unlock(&m->kick_lock);
  return err ? hcq_status_make(HCQ_CODE_NOMEM, "amd mock: cannot start the command processor thread (%d)", err) : HCQ_OK;
}

void kfd_mock_cp_kick(kfd_mock *m) {
  atomic_fetch_add(&m->kicks, 1); /* a read-modify-write: the load below cannot pass it (see worker) */
  if (atomic_load(&m->sleeping)) {
    pthread_mutex_lock(&m->kick_lock);
    pthread_cond_signal(&m->kick_cond);
    pthread_mutex_unlock(&m->kick_lock);
  }
}

void kfd_mock_cp_stop(kfd_mock *m) {
  pthread_mutex_lock(&m->kick_lock);
  bool started = m->worker_started;
  atomic_store(&m->stop_flag, true);
  pthread_cond_signal(&m->kick_cond);
  pthread_mutex_unlock(&m->kick_lock);
  if (started) pthread_join(m->worker, NULL);
  m->worker_started = false;
}

bool kfd_mock_idle(kfd_mock *m, uint32_t timeout_ms) {
  uint64_t deadline = kfd_mock_now_ns() + (uint64_t)timeout_ms * 1000000ull;
  for (;;) {
    bool quiet = !atomic_load(&m->kicks) && !atomic_load(&m->busy);
    if (quiet) {
      pthread_mutex_lock(&m->lock);
      bool pending = false;
      for (unsigned i = 0; i < KFD_MOCK_MAX_QUEUES; i++) {
        kfd_mock_queue *q = m->queues[i];
        if (q && q->live && !q->hung && !q->blocked_since_ns && kfd_mock_find_alloc(m, q->gpu, q->wptr_va, 8) &&
            __atomic_load_n((volatile uint64_t *)(uintptr_t)q->wptr_va, __ATOMIC_ACQUIRE) !=
                __atomic_load_n((volatile uint64_t *)(uintptr_t)q->rptr_va, __ATOMIC_ACQUIRE))
          pending = true;
      }
      pthread_mutex_unlock(&m->lock);
      if (!pending) return true;
    }
    if (kfd_mock_now_ns() >= deadline) return false;
    nanosleep(&(struct timespec){0, 50000}, NULL);
  }
}
