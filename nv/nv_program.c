/* nv/: program load (image upload + QMD V03_00 / V05_00 template, runtime.md 6.6/6.7 of the reference), local
 * memory, and exec. */
#include <stdlib.h>
#include <string.h>

#include "autogen/nv_qmd.h"
#include "hcq/args.h"
#include "nv/nv_hcq.h"
#include "nv/nv_internal.h"
#include "nv/nv_program.h"

/* The reference's template fields shared by V03_00 and V05_00 (tinygrad ops_nv.py NVProgram; runtime.md 6.6). */
#define NV_QMD_COMMON(V, q, info, prog_va, smem_cfg, sass, membar)                                                    \
  (nv_qmd##V##_set_qmd_group_id(q, 0x3f) && nv_qmd##V##_set_invalidate_texture_header_cache(q, 1) &&                 \
   nv_qmd##V##_set_invalidate_texture_sampler_cache(q, 1) && nv_qmd##V##_set_invalidate_texture_data_cache(q, 1) &&  \
   nv_qmd##V##_set_invalidate_shader_data_cache(q, 1) && nv_qmd##V##_set_api_visible_call_limit(q, 1) &&             \
   nv_qmd##V##_set_sampler_index(q, 1) && nv_qmd##V##_set_barrier_count(q, 1) &&                                     \
   nv_qmd##V##_set_cwd_membar_type(q, membar) &&                                                                   \
   nv_qmd##V##_set_constant_buffer_invalidate(q, 0, 1) && nv_qmd##V##_set_constant_buffer_valid(q, 0, 1) &&          \
   /* the reference stores the byte size in the SHIFTED4 field */                                                    \
   nv_qmd##V##_set_constant_buffer_size_shifted4(q, 0, (info)->cbuf0_size_B) &&                                      \
   nv_qmd##V##_set_min_sm_config_shared_mem_size(q, smem_cfg) &&                                                     \
   nv_qmd##V##_set_target_sm_config_shared_mem_size(q, smem_cfg) &&                                                  \
   nv_qmd##V##_set_max_sm_config_shared_mem_size(q, 0x1a) &&                                                         \
   nv_qmd##V##_set_program_prefetch_size(q, ((info)->text_size_B >> 8) < 0x1ff ? (info)->text_size_B >> 8 : 0x1ff) && \
   nv_qmd##V##_set_program_prefetch_addr_lower_shifted(q, (uint32_t)((prog_va) >> 8)) &&                             \
   nv_qmd##V##_set_program_prefetch_addr_upper_shifted(q, (prog_va) >> 40) && nv_qmd##V##_set_sass_version(q, sass))

static int nv_qmd_template(const nv_dev *d, nv_program *p, const nv_program_info *info) {
  uint32_t *q = p->qmd, smem = info->shared_B <= 32 * 1024 ? 32 : info->shared_B <= 64 * 1024 ? 64 : 100;
  uint32_t smem_cfg = smem * 1024 / 4096 + 1, sass = ((d->sm_version & 0xf00) >> 4) | (d->sm_version & 0xf);
  uint64_t va = p->prog_va;
  if (nv_dev_qmd_v5(d)) /* V5: code address >> 4, shared >> 7, local >> 4 (clcec0qmd.h field names) */
    return NV_QMD_COMMON(v05_00, q, info, va, smem_cfg, sass, NV_QMDV05_00_CWD_MEMBAR_TYPE_L1_SYSMEMBAR) &&
           !(va & 15) &&
           nv_qmdv05_00_set_qmd_major_version(q, 5) && nv_qmdv05_00_set_qmd_type(q, NV_QMDV05_00_QMD_TYPE_GRID_CTA) &&
           nv_qmdv05_00_set_register_count(q, info->regs) &&
           nv_qmdv05_00_set_program_address_lower_shifted4(q, (uint32_t)(va >> 4)) &&
           nv_qmdv05_00_set_program_address_upper_shifted4(q, va >> 36) &&
           nv_qmdv05_00_set_shared_memory_size_shifted7(q, (info->shared_B + 127) >> 7) &&
           nv_qmdv05_00_set_shader_local_memory_high_size_shifted4(q, d->slm_per_thread_B >> 4);
  return NV_QMD_COMMON(v03_00, q, info, va, smem_cfg, sass, NV_QMDV03_00_CWD_MEMBAR_TYPE_L1_SYSMEMBAR) &&
         nv_qmdv03_00_set_qmd_major_version(q, 3) &&
         nv_qmdv03_00_set_sm_global_caching_enable(q, 1) && nv_qmdv03_00_set_register_count_v(q, info->regs) &&
         nv_qmdv03_00_set_program_address_lower(q, (uint32_t)va) && nv_qmdv03_00_set_program_address_upper(q, va >> 32) &&
         nv_qmdv03_00_set_shared_memory_size(q, info->shared_B) &&
         nv_qmdv03_00_set_shader_local_memory_high_size(q, d->slm_per_thread_B);
}

hcq_status nv_program_load(nv_dev *d, const void *image, uint64_t size_B, const nv_program_info *info,
                           nv_program **out) {
  *out = NULL;
  if (!size_B || info->text_offset_B + info->text_size_B > size_B || !info->text_size_B)
    return hcq_status_make(HCQ_CODE_INVALID, "NV program load: entry 0x%llx+0x%llx outside the %llu-byte image",
                           (unsigned long long)info->text_offset_B, (unsigned long long)info->text_size_B,
                           (unsigned long long)size_B);
  if (info->regs > 255 || info->shared_B > 228 * 1024 || info->cbuf0_size_B > 0x10000)
    return hcq_status_make(HCQ_CODE_INVALID, "NV program load: regs %u, shared %u B, cbank0 %u B out of range",
                           info->regs, info->shared_B, info->cbuf0_size_B);
  /* local memory first: the QMD carries the per-thread size the channel's allocation serves (as the reference) */
  HCQ_TRY(hcq_status_annotate(nv_local_ensure(d, info->local_B), "NV program load"));
  nv_program *p = calloc(1, sizeof *p);
  if (!p) return hcq_status_make(HCQ_CODE_NOMEM, "NV program load");
  /* the extra 4 KiB keeps instruction prefetch inside the allocation */
  hcq_status st = nv_mem_alloc(d, ((size_B + 0xfff) & ~0xfffull) + 0x1000, NV_MEM_CPU, &p->mem);
  if (st) {
    free(p);
    return hcq_status_annotate(st, "NV program load");
  }
  memcpy(p->mem.cpu, image, size_B);
  p->info = *info;
  p->prog_va = p->mem.va + info->text_offset_B;
  /* every value fits its field (checked by the setters) */
  if (!nv_qmd_template(d, p, info)) {
    nv_program_free(d, p);
    return hcq_status_make(HCQ_CODE_INTERNAL, "NV program load: a QMD V0%d template value does not fit its field",
                           nv_dev_qmd_v5(d) ? 5 : 3);
  }
  *out = p;
  return HCQ_OK;
}

hcq_status nv_program_cbuf0_prefix(const nv_dev *d, uint32_t *words, uint32_t nwords) {
  bool v5 = nv_dev_qmd_v5(d);
  uint32_t need = v5 ? 224 : 12;
  if (nwords < need)
    return hcq_status_make(HCQ_CODE_INVALID, "NV: the %s constant bank 0 header needs %u words, got %u",
                           v5 ? "Blackwell" : "Ampere..Hopper", need, nwords);
  memset(words, 0, nwords * 4u);
  const uint64_t v[3] = {NV_SHARED_WINDOW, NV_LOCAL_WINDOW, 0xfffdc0};
  if (v5) {
    for (int i = 0; i < 2; i++) words[188 + 2 * i] = (uint32_t)v[i], words[189 + 2 * i] = (uint32_t)(v[i] >> 32);
    words[223] = (uint32_t)v[2];
  } else {
    for (int i = 0; i < 3; i++) words[6 + 2 * i] = (uint32_t)v[i], words[7 + 2 * i] = (uint32_t)(v[i] >> 32);
  }
  return HCQ_OK;
}

/* Local memory is CUDA's at most 512 KiB per thread (CUDA C++ Programming Guide, "Technical Specifications per
 * Compute Capability": maximum amount of local memory per thread). */
#define NV_MAX_LOCAL_PER_THREAD_B (512u * 1024u)

static uint64_t nv_round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

static uint64_t nv_local_hi_mask(uint32_t cls) {
  switch (cls) {
  case AMPERE_COMPUTE_A: return NV_AMPERE_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER_MASK;
  case AMPERE_COMPUTE_B: return NV_AMPERE_COMPUTE_B_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER_MASK;
  case ADA_COMPUTE_A: return NV_ADA_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER_MASK;
  case HOPPER_COMPUTE_A: return NV_HOPPER_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER_MASK;
  case BLACKWELL_COMPUTE_A: return NV_BLACKWELL_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER_MASK;
  case BLACKWELL_COMPUTE_B: return NV_BLACKWELL_COMPUTE_B_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER_MASK;
  default: return 0;
  }
}

/* Sized as the reference sizes it (tinygrad ops_nv.py NVDevice._ensure_has_local_memory): per thread rounded up to
 * 32 bytes; per TPC round_up(round_up(per_thread * 32, 0x200) * max_warps_per_sm * sm_per_tpc, 0x8000) (a warp's 32
 * threads, every warp slot of every SM of the TPC); in all round_up(per_TPC * TPCs per GPC * GPCs, 0x20000). Then
 * SET_SHADER_LOCAL_MEMORY_A/B (address) and NON_THROTTLED_A/B/C (bytes per TPC, max SM count 0xff) on the compute
 * channel, which runs them in order before any later launch. Outgrown allocations stay until close: launches
 * submitted earlier may still use them. */
hcq_status nv_local_ensure(nv_dev *d, uint32_t per_thread_B) {
  if (per_thread_B <= d->slm_per_thread_B) return HCQ_OK;
  if (per_thread_B > NV_MAX_LOCAL_PER_THREAD_B)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "NV: %u bytes of local memory per thread (at most %u)", per_thread_B,
                           NV_MAX_LOCAL_PER_THREAD_B);
  uint64_t slm = nv_round_up(per_thread_B, 32);
  uint64_t per_tpc = nv_round_up(nv_round_up(slm * 32, 0x200) * d->max_warps_per_sm * d->sm_per_tpc, 0x8000);
  uint64_t total = nv_round_up(per_tpc * d->tpc_per_gpc * d->gpcs, 0x20000);
  uint64_t hi_mask = nv_local_hi_mask(d->cls_compute);
  if (!hi_mask) return hcq_status_make(HCQ_CODE_UNSUPPORTED, "NV: SET_SHADER_LOCAL_MEMORY_A width of compute class 0x%x unknown", d->cls_compute);
  if ((per_tpc >> 32) & ~(uint64_t)NV_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A_SIZE_UPPER_MASK)
    return hcq_status_make(HCQ_CODE_INVALID, "NV: local memory of 0x%llx bytes per TPC past NON_THROTTLED_A",
                           (unsigned long long)per_tpc);
  nv_mem *l = realloc(d->local_mems, (d->nlocal_mems + 1) * sizeof *l);
  if (!l) return hcq_status_make(HCQ_CODE_NOMEM, "NV local-memory list");
  d->local_mems = l;
  nv_mem *m = &l[d->nlocal_mems];
  HCQ_TRY(hcq_status_annotate(nv_mem_alloc(d, total, 0, m), "NV local memory (%llu bytes per thread, %llu per TPC)",
                              (unsigned long long)slm, (unsigned long long)per_tpc));
  d->nlocal_mems++;
  if ((m->va >> 32) & ~hi_mask)
    return hcq_status_make(HCQ_CODE_INVALID, "NV local memory at 0x%llx past SET_SHADER_LOCAL_MEMORY_A",
                           (unsigned long long)m->va);
  uint32_t w[8];
  nv_push p;
  nv_push_init(&p, w, 8);
  uint32_t addr[2] = {(uint32_t)(m->va >> 32), (uint32_t)m->va};
  uint32_t size[3] = {(uint32_t)(per_tpc >> 32), (uint32_t)per_tpc, 0xff};
  nv_push_inc(&p, NV_SUBCH_COMPUTE, NV_HOPPER_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_A, addr, 2);
  nv_push_inc(&p, NV_SUBCH_COMPUTE, NV_HOPPER_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A, size, 3);
  HCQ_TRY(hcq_status_annotate(nv_chan_submit(d, &d->compute, &p), "NV local memory setup"));
  d->slm_per_thread_B = (uint32_t)slm;
  return HCQ_OK;
}

void nv_local_free_all(nv_dev *d) {
  for (uint32_t i = 0; i < d->nlocal_mems; i++) hcq_status_free(nv_mem_free(d, &d->local_mems[i]));
  free(d->local_mems);
  d->local_mems = NULL, d->nlocal_mems = 0, d->slm_per_thread_B = 0;
}

#define NV_QMD_CHUNK_B 0x10000u

hcq_status nv_qmd_slot(nv_dev *d, uint32_t **out_host, uint64_t *out_va) {
  uint32_t stride = nv_dev_qmd_v5(d) ? 512 : 256; /* SEND_PCAS_A takes va >> 8: 256-aligned slots */
  if (!d->nqmd_chunks || d->qmd_used_B + stride > NV_QMD_CHUNK_B) {
    nv_mem *c = realloc(d->qmd_chunks, (d->nqmd_chunks + 1) * sizeof *c);
    if (!c) return hcq_status_make(HCQ_CODE_NOMEM, "NV QMD chunk list");
    d->qmd_chunks = c;
    HCQ_TRY(hcq_status_annotate(nv_mem_alloc(d, NV_QMD_CHUNK_B, NV_MEM_CPU, &c[d->nqmd_chunks]), "NV QMD memory"));
    memset(c[d->nqmd_chunks].cpu, 0, NV_QMD_CHUNK_B);
    d->nqmd_chunks++;
    d->qmd_used_B = 0;
  }
  nv_mem *c = &d->qmd_chunks[d->nqmd_chunks - 1];
  *out_host = (uint32_t *)((uint8_t *)c->cpu + d->qmd_used_B);
  *out_va = c->va + d->qmd_used_B;
  d->qmd_used_B += stride;
  return HCQ_OK;
}

void nv_qmd_free_all(nv_dev *d) {
  for (uint32_t i = 0; i < d->nqmd_chunks; i++) hcq_status_free(nv_mem_free(d, &d->qmd_chunks[i]));
  free(d->qmd_chunks);
  d->qmd_chunks = NULL, d->nqmd_chunks = 0;
}

void nv_program_free(nv_dev *d, nv_program *p) {
  if (!p) return;
  hcq_status_free(nv_mem_free(d, &p->mem));
  free(p);
}

hcq_status nv_enc_exec(hcq_queue *q, hcq_val prog, const hcq_args *args, const hcq_val global[3],
                       const hcq_val local[3]) {
  if (hcq_queue_kind_of(q) == HCQ_QUEUE_COPY)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "NV exec: kernels run on the compute queue, not the copy queue");
  if (prog.sym || !prog.imm) return hcq_status_make(HCQ_CODE_INVALID, "NV exec: the program must be a loaded nv_program");
  const nv_program *p = (const nv_program *)(uintptr_t)prog.imm;
  if (!args) return hcq_status_make(HCQ_CODE_INVALID, "NV exec: constant bank 0 lives in the argument buffer (args NULL)");
  uint64_t qmd_va;
  uint32_t *qmd;
  nv_dev *d = nv_hcq_dev(hcq_queue_device(q));
  HCQ_TRY(nv_qmd_slot(d, &qmd, &qmd_va));
  /* the driver's part of constant bank 0 (shared / local windows): constant, written once at record time */
  bool v5 = nv_dev_qmd_v5(d);
  if (args->prefix_words >= (v5 ? 224u : 12u)) HCQ_TRY(nv_program_cbuf0_prefix(d, args->host, args->prefix_words));
  uint32_t qmd_B = v5 ? NV_QMDV05_00_SIZE_B : NV_QMDV03_00_SIZE_B;
  memcpy(qmd, p->qmd, qmd_B);
  /* V5 takes the constant bank address >> 6 */
  bool ok = v5 ? !(args->va & 63) && nv_qmdv05_00_set_constant_buffer_addr_lower_shifted6(qmd, 0, (uint32_t)(args->va >> 6)) &&
                     nv_qmdv05_00_set_constant_buffer_addr_upper_shifted6(qmd, 0, args->va >> 38)
               : nv_qmdv03_00_set_constant_buffer_addr_lower(qmd, 0, (uint32_t)args->va) &&
                     nv_qmdv03_00_set_constant_buffer_addr_upper(qmd, 0, args->va >> 32);
  if (!ok)
    return hcq_status_make(HCQ_CODE_INVALID, "NV exec: argument buffer 0x%llx not %sin the QMD's constant-bank field",
                           (unsigned long long)args->va, v5 ? "64-byte aligned or not " : "");
  uint32_t region;
  HCQ_TRY(hcq_queue_add_region(q, qmd, qmd_B, &region));
  static const unsigned grid3[3][2] = {{NV_QMDV03_00_CTA_RASTER_WIDTH_HI, NV_QMDV03_00_CTA_RASTER_WIDTH_LO},
                                       {NV_QMDV03_00_CTA_RASTER_HEIGHT_HI, NV_QMDV03_00_CTA_RASTER_HEIGHT_LO},
                                       {NV_QMDV03_00_CTA_RASTER_DEPTH_HI, NV_QMDV03_00_CTA_RASTER_DEPTH_LO}};
  static const unsigned block3[3][2] = {{NV_QMDV03_00_CTA_THREAD_DIMENSION0_HI, NV_QMDV03_00_CTA_THREAD_DIMENSION0_LO},
                                        {NV_QMDV03_00_CTA_THREAD_DIMENSION1_HI, NV_QMDV03_00_CTA_THREAD_DIMENSION1_LO},
                                        {NV_QMDV03_00_CTA_THREAD_DIMENSION2_HI, NV_QMDV03_00_CTA_THREAD_DIMENSION2_LO}};
  static const unsigned grid5[3][2] = {{NV_QMDV05_00_GRID_WIDTH_HI, NV_QMDV05_00_GRID_WIDTH_LO},
                                       {NV_QMDV05_00_GRID_HEIGHT_HI, NV_QMDV05_00_GRID_HEIGHT_LO},
                                       {NV_QMDV05_00_GRID_DEPTH_HI, NV_QMDV05_00_GRID_DEPTH_LO}};
  static const unsigned block5[3][2] = {{NV_QMDV05_00_CTA_THREAD_DIMENSION0_HI, NV_QMDV05_00_CTA_THREAD_DIMENSION0_LO},
                                        {NV_QMDV05_00_CTA_THREAD_DIMENSION1_HI, NV_QMDV05_00_CTA_THREAD_DIMENSION1_LO},
                                        {NV_QMDV05_00_CTA_THREAD_DIMENSION2_HI, NV_QMDV05_00_CTA_THREAD_DIMENSION2_LO}};
  const unsigned(*grid_hl)[2] = v5 ? grid5 : grid3, (*block_hl)[2] = v5 ? block5 : block3;
  /* block limits of the reference (1024, 1024, 64; 1024 threads) when known now; the field widths always */
  static const uint64_t block_max[3] = {1024, 1024, 64};
  uint64_t threads = 1;
  for (int i = 0; i < 3; i++) {
    if (!local[i].sym && (local[i].imm == 0 || local[i].imm > block_max[i]))
      return hcq_status_make(HCQ_CODE_INVALID, "NV exec: block[%d] = %llu (1..%llu)", i, (unsigned long long)local[i].imm,
                             (unsigned long long)block_max[i]);
    if (!global[i].sym && global[i].imm == 0) return hcq_status_make(HCQ_CODE_INVALID, "NV exec: grid[%d] = 0", i);
    threads *= local[i].sym ? 1 : local[i].imm;
    HCQ_TRY(hcq_queue_patch_region_bits(q, region, grid_hl[i][0], grid_hl[i][1], global[i]));
    HCQ_TRY(hcq_queue_patch_region_bits(q, region, block_hl[i][0], block_hl[i][1], local[i]));
  }
  if (threads > 1024) return hcq_status_make(HCQ_CODE_INVALID, "NV exec: %llu threads per block (at most 1024)", (unsigned long long)threads);
  uint32_t *w;
  HCQ_TRY(hcq_queue_reserve(q, 4, &w));
  w[0] = (NV_DMA_SEC_OP_INC_METHOD << NV_DMA_SEC_OP_SHIFT) | (1u << NV_DMA_METHOD_COUNT_SHIFT) |
         (NV_SUBCH_COMPUTE << NV_DMA_METHOD_SUBCHANNEL_SHIFT) | (NV_HOPPER_COMPUTE_A_SEND_PCAS_A >> 2);
  w[1] = (uint32_t)(qmd_va >> 8);
  w[2] = (NV_DMA_SEC_OP_INC_METHOD << NV_DMA_SEC_OP_SHIFT) | (1u << NV_DMA_METHOD_COUNT_SHIFT) |
         (NV_SUBCH_COMPUTE << NV_DMA_METHOD_SUBCHANNEL_SHIFT) | (NV_HOPPER_COMPUTE_A_SEND_SIGNALING_PCAS2_B >> 2);
  w[3] = NV_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_PREFETCH_SCHEDULE;
  return HCQ_OK;
}
