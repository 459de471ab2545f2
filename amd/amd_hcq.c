/* hcq_device_ops and hcq_encoder of the AMD device (see amd_hcq.h). */
#include "amd/amd_hcq.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "amd/amd_dispatch.h"
#include "amd/amd_hcq_rt.h"
#include "amd/amd_nbio.h"
#include "amd/amd_sdma_pkt.h"
#include "autogen/amd_regs_gfx11.h"
#include "hcq/args.h"
#include "hcq/queue.h"
#include "hcq/signal.h"
#include "autogen/kfd.h"

_Static_assert(AMD_GFX11_COMPUTE_PGM_RSRC2__LDS_SIZE__SHIFT == 15 && AMD_GFX11_COMPUTE_PGM_RSRC2__LDS_SIZE_MASK == 0xff8000u,
               "LDS_SIZE field (the same in gc_9_4_2)");

static amd_hcq *hq(hcq_queue *q) { return hcq_queue_device(q)->impl; }
static bool is_copy(hcq_queue *q) { return hcq_queue_kind_of(q) == HCQ_QUEUE_COPY; }
static bool constant(hcq_val v, uint64_t *out) {
  if (!v.sym) return *out = v.imm, true;
  if (v.sym->op == UOP_CONST) return *out = (uint64_t)v.sym->arg.i, true;
  return false;
}

void amd_hcq_kd_parse(const uint8_t kd[AMD_HCQ_KD_SIZE_B], amd_hcq_kd *k) {
  memcpy(&k->group_segment_B, kd + 0, 4);
  memcpy(&k->private_segment_B, kd + 4, 4);
  memcpy(&k->kernarg_B, kd + 8, 4);
  memcpy(&k->entry_offset, kd + 16, 8);
  memcpy(&k->rsrc3, kd + 44, 4);
  memcpy(&k->rsrc1, kd + 48, 4);
  memcpy(&k->rsrc2, kd + 52, 4);
  memcpy(&k->properties, kd + 56, 2);
}

/* Append the words of a command buffer to the queue; returns the index of its first word. */
static hcq_status append(hcq_queue *q, const uint32_t *w, uint32_t n, size_t *at) {
  uint32_t *dst;
  HCQ_TRY(hcq_queue_reserve(q, n, &dst));
  memcpy(dst, w, n * 4u);
  *at = hcq_queue_word_count(q) - n;
  return HCQ_OK;
}

static hcq_status enc_exec(hcq_queue *q, hcq_val prog, const hcq_args *args, const hcq_val global[3],
                           const hcq_val local[3]) {
  amd_hcq *h = hq(q);
  amd_device *d = h->amd;
  uint64_t kd_va;
  if (is_copy(q)) return hcq_status_make(HCQ_CODE_INVALID, "amd %s: kernels run on compute queues, not on the copy queue", d->name);
  if (!constant(prog, &kd_va)) return hcq_status_make(HCQ_CODE_UNSUPPORTED, "amd %s: a symbolic program address", d->name);
  if (!kd_va || (kd_va & 63)) /* LLVM aligns kernel descriptors to 64 bytes */
    return hcq_status_make(HCQ_CODE_INVALID, "amd %s: program 0x%" PRIx64 " is no 64-byte aligned kernel descriptor", d->name, kd_va);
  amd_hcq_kd kd;
  amd_hcq_kd_parse((const uint8_t *)(uintptr_t)kd_va, &kd); /* unified VA: the descriptor is host-readable */
  HCQ_TRY(amd_user_sgprs(d, kd.properties, 16, NULL, NULL, NULL)); /* refuses what hcq cannot provide, by name */
  bool scratch = (kd.rsrc2 & AMD_GFX11_COMPUTE_PGM_RSRC2__SCRATCH_EN_MASK) != 0;
  if (scratch != (kd.private_segment_B != 0))
    return hcq_status_make(HCQ_CODE_INVALID, "amd %s: kernel 0x%" PRIx64 ": RSRC2.SCRATCH_EN is %d but the private "
                           "segment is %u bytes", d->name, kd_va, scratch, kd.private_segment_B);
  HCQ_TRY(amd_scratch_ensure(d, &h->scratch_ring, kd.private_segment_B));
  if (kd.kernarg_B && !args)
    return hcq_status_make(HCQ_CODE_INVALID, "amd %s: kernel 0x%" PRIx64 " takes %u bytes of arguments, none given", d->name, kd_va, kd.kernarg_B);
  uint32_t lds = (kd.group_segment_B + 511) / 512;
  if (lds * 512 > d->node.lds_size_in_kb * 1024u)
    return hcq_status_make(HCQ_CODE_INVALID, "amd %s: kernel wants %u bytes of LDS, the GPU has %u KiB", d->name,
                           kd.group_segment_B, d->node.lds_size_in_kb);
  const char *pname = amd_hcq_program_name(h, kd_va);
  snprintf(h->last_kernel, sizeof h->last_kernel, "%s", *pname ? pname : "at descriptor 0x");
  if (!*pname) snprintf(h->last_kernel, sizeof h->last_kernel, "at descriptor 0x%" PRIx64, kd_va);
  uint64_t kargs = args ? args->va : 0;
  amd_dispatch_desc k = {.code_va = kd_va + (uint64_t)kd.entry_offset, .rsrc1 = kd.rsrc1,
                         .rsrc2 = kd.rsrc2 | (lds << AMD_GFX11_COMPUTE_PGM_RSRC2__LDS_SIZE__SHIFT), .rsrc3 = kd.rsrc3,
                         .wave32 = (kd.properties & AMD_HCQ_KD_PROP_WAVE32) != 0,
                         .tmpring_size = scratch ? h->scratch_ring.tmpring : 0,
                         .scratch_va = scratch ? h->scratch_ring.mem.va : 0};
  bool dims_const = true;
  for (int i = 0; i < 3; i++) {
    uint64_t v;
    bool cl = constant(local[i], &v);
    k.local[i] = cl ? (uint32_t)v : 1; /* symbolic: patched below */
    bool cg = constant(global[i], &v);
    k.grid[i] = cg ? (uint32_t)v : 1;
    dims_const &= cl && cg;
  }
  amd_user_sgpr_src src = {.scratch_va = h->scratch_ring.mem.va, .kernarg_va = kargs, .private_B = kd.private_segment_B};
  if (kd.properties & AMD_HCQ_KD_PROP_DISPATCH_PTR) { /* ops_amd.py: the packet follows the kernel arguments */
    uint32_t off = amd_dispatch_packet_offset_B(kd.kernarg_B);
    if (!args || !args->host || args->size_B < (uint64_t)off + AMD_DISPATCH_PACKET_B)
      return hcq_status_make(HCQ_CODE_INVALID, "amd %s: kernel 0x%" PRIx64 " reads the dispatch packet: its argument "
                             "memory needs %u bytes (arguments, then the packet at +%u), it has %zu", d->name, kd_va,
                             off + AMD_DISPATCH_PACKET_B, off, args ? args->size_B : 0);
    if (!dims_const)
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "amd %s: kernel 0x%" PRIx64 " reads the dispatch packet: symbolic "
                             "launch sizes are not patched into it", d->name, kd_va);
    for (int i = 0; i < 3; i++)
      if ((uint64_t)k.local[i] * k.grid[i] > UINT32_MAX || k.local[i] > UINT16_MAX)
        return hcq_status_make(HCQ_CODE_INVALID, "amd %s: dimension %d (%u x %u) overflows the dispatch packet's "
                               "grid_size / workgroup_size", d->name, i, k.grid[i], k.local[i]);
    amd_dispatch_packet_write((uint8_t *)args->host + off, k.local, k.grid, kd.private_segment_B, kd.group_segment_B,
                              kd_va, kargs);
    src.dispatch_packet_va = kargs + off;
  }
  HCQ_TRY(amd_user_sgprs(d, kd.properties, (kd.rsrc2 & AMD_GFX11_COMPUTE_PGM_RSRC2__USER_SGPR_MASK) >>
                                               AMD_GFX11_COMPUTE_PGM_RSRC2__USER_SGPR__SHIFT,
                         &src, k.user_sgpr, &k.user_sgpr_count));
  uint32_t w[AMD_DISPATCH_MAX_DW];
  amd_cmdbuf b = {.w = w, .cap = AMD_DISPATCH_MAX_DW};
  amd_dispatch_slots s;
  HCQ_TRY(amd_pm4_dispatch(&b, d, &k, &s));
  size_t at;
  HCQ_TRY(append(q, w, b.n, &at));
  for (int i = 0; i < 3; i++) {
    HCQ_TRY(hcq_queue_patch_bits(q, at + s.local + i, 0, 32, local[i]));
    HCQ_TRY(hcq_queue_patch_bits(q, at + s.grid + i, 0, 32, global[i]));
  }
  return HCQ_OK;
}

/* v + off as a value: a constant, or a symbol derived in the device's own context. */
static hcq_status plus(amd_hcq *h, hcq_val v, int64_t off, hcq_val *out) {
  uint64_t c;
  if (constant(v, &c)) return *out = hcq_imm(c + (uint64_t)off), HCQ_OK;
  const uop *e = uop_alu2(h->ctx, UOP_ADD, v.sym, uop_const_int(h->ctx, v.sym->dtype, off));
  if (!e) return hcq_status_make(HCQ_CODE_NOMEM, "amd %s: out of memory deriving a symbol", h->amd->name);
  *out = hcq_sym(e);
  return HCQ_OK;
}

#define COPY_MAX_PACKETS 4096u /* per copy command: the words must fit a submit into the ring */

/* SDMA COPY_LINEAR (copy queues) or CP DMA DMA_DATA (compute queues), split at the packet's byte limit. */
static hcq_status enc_copy(hcq_queue *q, hcq_val dst, hcq_val src, hcq_val size_B) {
  amd_hcq *h = hq(q);
  amd_device *d = h->amd;
  bool sdma = is_copy(q);
  uint64_t chunk = sdma ? d->sdma_max_copy_B : amd_pm4_dma_data_max_B(d->arch->gfx9), n;
  const char *what = sdma ? "SDMA COPY_LINEAR" : "DMA_DATA";
  if (!constant(size_B, &n)) { /* one packet whose count is patched: the declared range must fit it */
    int64_t lo = uop_vmin(size_B.sym), hi = uop_vmax(size_B.sym);
    if (lo < 1 || hi < lo || (uint64_t)hi > chunk)
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "amd %s: a symbolic copy size must lie in 1..%" PRIu64 " bytes (one "
                             "%s packet); this one spans %" PRId64 "..%" PRId64, d->name, chunk, what, lo, hi);
    n = 1;
  }
  if (!n) return HCQ_OK;
  uint64_t chunks = (n + chunk - 1) / chunk;
  if (chunks > COPY_MAX_PACKETS)
    return hcq_status_make(HCQ_CODE_INVALID, "amd %s: a copy of %" PRIu64 " bytes needs %" PRIu64 " %s packets (%" PRIu64
                           " bytes each), over %u per copy", d->name, n, chunks, what, chunk, COPY_MAX_PACKETS);
  for (uint64_t c = 0; c < chunks; c++) {
    uint64_t off = c * chunk, len = n - off < chunk ? n - off : chunk;
    uint32_t w[8], sz[1];
    size_t at;
    if (sdma) {
      amd_sdma_buf sb = {.b = {.w = w, .cap = 8}, .sizes = sz, .packets_cap = 1};
      amd_sdma_copy(&sb, 0, 0, len, chunk);
      HCQ_TRY(append(q, w, sb.b.n, &at));
    } else {
      amd_cmdbuf b = {.w = w, .cap = 8};
      amd_pm4_dma_data(&b, 0, 0, (uint32_t)len);
      HCQ_TRY(append(q, w, b.n, &at));
    }
    hcq_val s, t;
    HCQ_TRY(plus(h, src, (int64_t)off, &s));
    HCQ_TRY(plus(h, dst, (int64_t)off, &t));
    HCQ_TRY(hcq_queue_patch_word(q, at + (sdma ? 3 : 2), s, 64, 0));
    HCQ_TRY(hcq_queue_patch_word(q, at + (sdma ? 5 : 4), t, 64, 0));
    if (!size_B.sym || constant(size_B, &n)) continue;
    if (!sdma) HCQ_TRY(hcq_queue_patch_bits(q, at + 6, 0, AMD_PM4_DMA_DATA_COUNT_BITS, size_B));
    else {
      hcq_val count; /* COUNT holds bytes - 1 */
      HCQ_TRY(plus(h, size_B, -1, &count));
      HCQ_TRY(hcq_queue_patch_shift_mask(q, at + 1, 0, d->node.sdma_version[0] >= 6 ? AMD_SDMA6_COPY_LINEAR_COUNT_COUNT_MASK
                                                                                   : AMD_SDMA4_COPY_LINEAR_COUNT_COUNT_MASK, count));
    }
  }
  return HCQ_OK;
}

static hcq_status enc_signal(hcq_queue *q, hcq_val sig, hcq_val value) {
  amd_device *d = hq(q)->amd;
  uint32_t w[16], sz[2];
  size_t at;
  if (is_copy(q)) { /* FENCE writes 32 bits: the value must fit them (a larger one fails, never truncates) */
    amd_sdma_buf sb = {.b = {.w = w, .cap = 16}, .sizes = sz, .packets_cap = 2};
    amd_sdma_fence(&sb, d->node.sdma_version[0], 0, 0);
    HCQ_TRY(append(q, w, sb.b.n, &at));
    HCQ_TRY(hcq_queue_patch_word(q, at + 1, sig, 64, 0));
    return hcq_queue_patch_bits(q, at + 3, 0, 32, value);
  }
  amd_cmdbuf b = {.w = w, .cap = 16};
  amd_pm4_release_mem(&b, d->arch->gfx9, 0, 0, AMD_RELEASE_DATA64, true, 0);
  HCQ_TRY(append(q, w, b.n, &at));
  HCQ_TRY(hcq_queue_patch_word(q, at + 3, sig, 64, 0));
  return hcq_queue_patch_word(q, at + 5, value, 64, 0);
}

static hcq_status enc_wait(hcq_queue *q, hcq_val sig, hcq_val value) {
  uint32_t w[16], sz[1];
  size_t at;
  if (is_copy(q)) {
    amd_sdma_buf sb = {.b = {.w = w, .cap = 16}, .sizes = sz, .packets_cap = 1};
    amd_sdma_poll_mem(&sb, 0, AMD_PM4_WAIT_REG_MEM_FUNCTION_GE, 0, 0xffffffffu);
    HCQ_TRY(append(q, w, sb.b.n, &at));
  } else {
    amd_cmdbuf b = {.w = w, .cap = 16};
    amd_pm4_wait_mem(&b, 0, AMD_PM4_WAIT_REG_MEM_FUNCTION_GE, 0, 0xffffffffu);
    HCQ_TRY(append(q, w, b.n, &at));
  }
  HCQ_TRY(hcq_queue_patch_word(q, at + 1 + !is_copy(q), sig, 64, 0));
  return hcq_queue_patch_word(q, at + 3 + !is_copy(q), value, 32, 0xffffffffu);
}

static hcq_status enc_timestamp(hcq_queue *q, hcq_val sig) {
  amd_hcq *h = hq(q);
  uint32_t w[16], sz[1];
  size_t at;
  hcq_val ts; /* the timestamp goes to sig + 8 */
  HCQ_TRY(plus(h, sig, 8, &ts));
  if (is_copy(q)) {
    amd_sdma_buf sb = {.b = {.w = w, .cap = 16}, .sizes = sz, .packets_cap = 1};
    amd_sdma_timestamp(&sb, 0);
    HCQ_TRY(append(q, w, sb.b.n, &at));
    return hcq_queue_patch_word(q, at + 1, ts, 64, 0);
  }
  amd_cmdbuf b = {.w = w, .cap = 16};
  amd_pm4_release_mem(&b, h->amd->arch->gfx9, 0, 0, AMD_RELEASE_CLOCK, false, 0);
  HCQ_TRY(append(q, w, b.n, &at));
  return hcq_queue_patch_word(q, at + 3, ts, 64, 0);
}

/* ops_amd.py memory_barrier: HDP flush (amd_nbio.h), then a full ACQUIRE_MEM. */
static hcq_status enc_barrier(hcq_queue *q) {
  if (is_copy(q)) return HCQ_OK; /* SDMA runs its packets in order; nothing to invalidate */
  amd_device *d = hq(q)->amd;
  amd_hdp_regs hdp;
  HCQ_TRY(hcq_status_annotate(amd_hdp_regs_find(d->node.nbio_version, d->node.nbio_base, &hdp), "amd %s: memory barrier", d->name));
  uint32_t w[16];
  size_t at;
  amd_cmdbuf b = {.w = w, .cap = 16};
  amd_pm4_hdp_flush(&b, hdp.req, hdp.done, hdp.ref_and_mask);
  amd_pm4_acquire_mem(&b, d->arch->gfx9, true);
  return append(q, w, b.n, &at);
}

static const hcq_encoder k_encoder = {enc_exec, enc_copy, enc_signal, enc_wait, enc_timestamp, enc_barrier};

/* Packet lengths of the SDMA words this encoder wrote (the ring writer keeps packets whole). */
static hcq_status sdma_sizes(amd_hcq *h, const uint32_t *w, size_t n, uint32_t *out_packets) {
  uint32_t np = 0;
  for (size_t i = 0; i < n;) {
    uint32_t op = w[i] & 0xff, len;
    switch (op) {
    case AMD_SDMA6_OP_COPY: len = AMD_SDMA6_COPY_LINEAR_DWORDS; break;
    case AMD_SDMA6_OP_FENCE: len = AMD_SDMA6_FENCE_DWORDS; break;
    case AMD_SDMA6_OP_POLL_REGMEM: len = AMD_SDMA6_POLL_REGMEM_DWORDS; break;
    case AMD_SDMA6_OP_TIMESTAMP: len = AMD_SDMA6_TIMESTAMP_GET_GLOBAL_DWORDS; break;
    case AMD_SDMA6_OP_TRAP: len = AMD_SDMA6_TRAP_DWORDS; break;
    default:
      return hcq_status_make(HCQ_CODE_INVALID, "amd %s: SDMA word %zu (0x%08x) starts no packet hcq encodes", h->amd->name, i, w[i]);
    }
    if (len > n - i) return hcq_status_make(HCQ_CODE_INVALID, "amd %s: SDMA packet at word %zu is cut off", h->amd->name, i);
    if (np == h->scratch_cap) {
      size_t cap = h->scratch_cap ? h->scratch_cap * 2 : 256;
      uint32_t *p = realloc(h->scratch, cap * sizeof *p);
      if (!p) return hcq_status_make(HCQ_CODE_NOMEM, "amd: out of memory");
      h->scratch = p, h->scratch_cap = cap;
    }
    h->scratch[np++] = len;
    i += len;
  }
  *out_packets = np;
  return HCQ_OK;
}

static hcq_status op_submit(hcq_device *dev, hcq_queue_kind kind, const uint32_t *w, size_t n) {
  amd_hcq *h = dev->impl;
  if (n > UINT32_MAX) return hcq_status_make(HCQ_CODE_INVALID, "amd: %zu words in one submit", n);
  if (kind != HCQ_QUEUE_COPY) {
    amd_ring *r = &h->amd->compute;
    uint64_t base = r->put;
    HCQ_TRY(amd_ring_submit(h->amd, r, w, (uint32_t)n, NULL, 0));
    h->submit_start[h->nsubmits++ % AMD_HCQ_SUBMIT_LOG] = base; /* a fault scans the ring's words from here */
    return HCQ_OK;
  }
  uint32_t np = 0;
  HCQ_TRY(sdma_sizes(h, w, n, &np));
  return amd_ring_submit(h->amd, &h->amd->copy, w, (uint32_t)n, h->scratch, np);
}

static hcq_status op_mem_alloc(hcq_device *dev, size_t size_B, unsigned flags, hcq_mem *out) {
  amd_hcq *h = dev->impl;
  amd_buf b;
  HCQ_TRY(amd_mem_alloc(h->amd, size_B ? size_B : 1, (flags & HCQ_MEM_SIGNAL) ? AMD_MEM_GTT_UNCACHED : AMD_MEM_VRAM_HOST,
                        NULL, &b));
  memset((void *)(uintptr_t)b.va, 0, b.size_B);
  *out = (hcq_mem){.host = (void *)(uintptr_t)b.va, .va = b.va, .size_B = size_B, .handle = b.handle};
  return HCQ_OK;
}

static void op_mem_free(hcq_device *dev, hcq_mem *m) {
  amd_hcq *h = dev->impl;
  if (!m->handle) return;
  amd_buf b = {.va = m->va, .size_B = (m->size_B + 4095) & ~(size_t)4095, .handle = m->handle, .kind = AMD_MEM_VRAM_HOST};
  hcq_status_free(amd_mem_free(h->amd, &b));
  memset(m, 0, sizeof *m);
}

static const hcq_device_ops k_ops = {
    .backend_name = "amd", .submit = op_submit, .mem_alloc = op_mem_alloc, .mem_free = op_mem_free,
    .encoder = &k_encoder, .info = amd_hcq_op_info, .program_load = amd_hcq_op_program_load,
    .program_free = amd_hcq_op_program_free, .signal_wait = amd_hcq_op_signal_wait,
    .take_error = amd_hcq_op_take_error, .destroy = amd_hcq_op_destroy};

/* GPU clock ticks to hcq_now_ns(): 100 MHz (ops_amd.py AMDSignal, timestamp_divider=100 ticks per microsecond), the
 * offset from KFD GET_CLOCK_COUNTERS between two host clock reads: the tightest of a few tries (a preempted or
 * blocked call would put the offset off by up to its duration), taken against the read before the call, so that a
 * converted time is never later than the truth: it errs early by at most that call's duration. That its
 * gpu_clock_counter is the counter
 * RELEASE_MEM's GPU_CLOCK_COUNTER and SDMA's GET_GLOBAL write is an assumption checked on the mock only. */
#define AMD_HCQ_NS_PER_TICK 10u
static hcq_status calibrate_clock(amd_hcq *h) {
  amd_device *d = h->amd;
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 16 && best > 2000; i++) {
    struct amd_kfd_ioctl_get_clock_counters_args a = {.gpu_id = d->node.gpu_id};
    uint64_t t0 = hcq_now_ns();
    HCQ_TRY(hcq_status_annotate(kif_ioctl(d->k, d->kfd_fd, AMD_KFD_IOC_GET_CLOCK_COUNTERS, &a),
                                "amd %s: reading the GPU clock (GET_CLOCK_COUNTERS)", d->name));
    uint64_t t1 = hcq_now_ns();
    if (t1 - t0 >= best) continue;
    best = t1 - t0;
    h->dev.timestamp_offset_ns = (int64_t)t0 - (int64_t)(a.gpu_clock_counter * AMD_HCQ_NS_PER_TICK);
  }
  h->dev.timestamp_early_ns = best + AMD_HCQ_NS_PER_TICK;
  h->dev.timestamp_ns_per_tick = AMD_HCQ_NS_PER_TICK;
  return HCQ_OK;
}

hcq_status amd_hcq_open(kif *k, unsigned index, const amd_device_options *opts, amd_hcq **out) {
  *out = NULL;
  amd_hcq *h = calloc(1, sizeof *h);
  if (!h) return hcq_status_make(HCQ_CODE_NOMEM, "amd: out of memory");
  hcq_status st = amd_device_open(k, index, opts, &h->amd);
  char name[HCQ_DEVICE_NAME_MAX];
  snprintf(name, sizeof name, "AMD:%u", index);
  if (!st) st = uop_ctx_create(&h->ctx);
  if (!st) st = hcq_device_init(&h->dev, &k_ops, h, name);
  if (!st) st = calibrate_clock(h);
  if (st) {
    if (h->dev.ops) hcq_device_fini(&h->dev);
    uop_ctx_destroy(h->ctx);
    amd_device_close(h->amd);
    free(h);
    return st;
  }
  h->pgm_lo_reg = amd_regs_of(h->amd).pgm_lo;
  *out = h;
  return HCQ_OK;
}

void amd_hcq_close(amd_hcq *h) {
  if (!h) return;
  hcq_device_fini(&h->dev);
  amd_hcq_programs_free(h);
  amd_scratch_free(h->amd, &h->scratch_ring);
  amd_device_close(h->amd);
  uop_ctx_destroy(h->ctx);
  hcq_status_free(h->fault);
  free(h->scratch);
  free(h);
}
