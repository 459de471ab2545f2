/* nv/: program load (image upload + QMD V03_00 template, runtime.md 6.6/6.7 of the reference) and exec. */
#include <stdlib.h>
#include <string.h>

#include "autogen/nv_qmd.h"
#include "hcq/args.h"
#include "nv/nv_hcq.h"
#include "nv/nv_internal.h"
#include "nv/nv_program.h"

hcq_status nv_program_load(nv_dev *d, const void *image, uint64_t size_B, const nv_program_info *info,
                           nv_program **out) {
  *out = NULL;
  if (d->cls_compute >= BLACKWELL_COMPUTE_A)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "NV program load: QMD V05_00 (Blackwell) templates are not written yet");
  if (!size_B || info->text_offset_B + info->text_size_B > size_B || !info->text_size_B)
    return hcq_status_make(HCQ_CODE_INVALID, "NV program load: entry 0x%llx+0x%llx outside the %llu-byte image",
                           (unsigned long long)info->text_offset_B, (unsigned long long)info->text_size_B,
                           (unsigned long long)size_B);
  if (info->regs > 255 || info->shared_B > 228 * 1024 || info->cbuf0_size_B > 0x10000)
    return hcq_status_make(HCQ_CODE_INVALID, "NV program load: regs %u, shared %u B, cbank0 %u B out of range",
                           info->regs, info->shared_B, info->cbuf0_size_B);
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
  uint32_t *q = p->qmd;
  uint32_t smem = info->shared_B <= 32 * 1024 ? 32 : info->shared_B <= 64 * 1024 ? 64 : 100;
  /* the reference's template; every value fits its field (checked by the setters) */
  int ok = nv_qmdv03_00_set_qmd_major_version(q, 3) && nv_qmdv03_00_set_sm_global_caching_enable(q, 1) &&
           nv_qmdv03_00_set_qmd_group_id(q, 0x3f) && nv_qmdv03_00_set_invalidate_texture_header_cache(q, 1) &&
           nv_qmdv03_00_set_invalidate_texture_sampler_cache(q, 1) && nv_qmdv03_00_set_invalidate_texture_data_cache(q, 1) &&
           nv_qmdv03_00_set_invalidate_shader_data_cache(q, 1) && nv_qmdv03_00_set_api_visible_call_limit(q, 1) &&
           nv_qmdv03_00_set_sampler_index(q, 1) && nv_qmdv03_00_set_barrier_count(q, 1) &&
           nv_qmdv03_00_set_cwd_membar_type(q, NV_QMDV03_00_CWD_MEMBAR_TYPE_L1_SYSMEMBAR) &&
           nv_qmdv03_00_set_constant_buffer_invalidate(q, 0, 1) && nv_qmdv03_00_set_constant_buffer_valid(q, 0, 1) &&
           /* the reference stores the byte size in the SHIFTED4 field */
           nv_qmdv03_00_set_constant_buffer_size_shifted4(q, 0, info->cbuf0_size_B) &&
           nv_qmdv03_00_set_program_address_lower(q, (uint32_t)p->prog_va) &&
           nv_qmdv03_00_set_program_address_upper(q, p->prog_va >> 32) &&
           nv_qmdv03_00_set_shared_memory_size(q, info->shared_B) && nv_qmdv03_00_set_register_count_v(q, info->regs) &&
           nv_qmdv03_00_set_min_sm_config_shared_mem_size(q, smem * 1024 / 4096 + 1) &&
           nv_qmdv03_00_set_target_sm_config_shared_mem_size(q, smem * 1024 / 4096 + 1) &&
           nv_qmdv03_00_set_max_sm_config_shared_mem_size(q, 0x1a) &&
           nv_qmdv03_00_set_program_prefetch_size(q, (info->text_size_B >> 8) < 0x1ff ? info->text_size_B >> 8 : 0x1ff) &&
           nv_qmdv03_00_set_program_prefetch_addr_lower_shifted(q, (uint32_t)(p->prog_va >> 8)) &&
           nv_qmdv03_00_set_program_prefetch_addr_upper_shifted(q, p->prog_va >> 40) &&
           nv_qmdv03_00_set_sass_version(q, ((d->sm_version & 0xf00) >> 4) | (d->sm_version & 0xf));
  if (!ok) {
    nv_program_free(d, p);
    return hcq_status_make(HCQ_CODE_INTERNAL, "NV program load: a QMD template value does not fit its field");
  }
  *out = p;
  return HCQ_OK;
}

hcq_status nv_program_cbuf0_prefix(const nv_dev *d, uint32_t *words, uint32_t nwords) {
  if (d->cls_compute >= BLACKWELL_COMPUTE_A)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "NV: the Blackwell constant bank 0 header is not written yet");
  if (nwords < 12) return hcq_status_make(HCQ_CODE_INVALID, "NV: constant bank 0 header needs 12 words, got %u", nwords);
  memset(words, 0, nwords * 4u);
  const uint64_t v[3] = {NV_SHARED_WINDOW, NV_LOCAL_WINDOW, 0xfffdc0};
  for (int i = 0; i < 3; i++) words[6 + 2 * i] = (uint32_t)v[i], words[7 + 2 * i] = (uint32_t)(v[i] >> 32);
  return HCQ_OK;
}

#define NV_QMD_CHUNK_B 0x10000u

hcq_status nv_qmd_slot(nv_dev *d, uint32_t **out_host, uint64_t *out_va) {
  if (!d->nqmd_chunks || d->qmd_used_B + NV_QMDV03_00_SIZE_B > NV_QMD_CHUNK_B) {
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
  d->qmd_used_B += 256; /* SEND_PCAS_A takes va >> 8 */
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
  if (args->prefix_words >= 12) HCQ_TRY(nv_program_cbuf0_prefix(d, args->host, args->prefix_words));
  memcpy(qmd, p->qmd, NV_QMDV03_00_SIZE_B);
  if (!nv_qmdv03_00_set_constant_buffer_addr_lower(qmd, 0, (uint32_t)args->va) ||
      !nv_qmdv03_00_set_constant_buffer_addr_upper(qmd, 0, args->va >> 32))
    return hcq_status_make(HCQ_CODE_INVALID, "NV exec: argument buffer 0x%llx past the QMD's address field",
                           (unsigned long long)args->va);
  uint32_t region;
  HCQ_TRY(hcq_queue_add_region(q, qmd, NV_QMDV03_00_SIZE_B, &region));
  static const unsigned grid_hl[3][2] = {{NV_QMDV03_00_CTA_RASTER_WIDTH_HI, NV_QMDV03_00_CTA_RASTER_WIDTH_LO},
                                         {NV_QMDV03_00_CTA_RASTER_HEIGHT_HI, NV_QMDV03_00_CTA_RASTER_HEIGHT_LO},
                                         {NV_QMDV03_00_CTA_RASTER_DEPTH_HI, NV_QMDV03_00_CTA_RASTER_DEPTH_LO}};
  static const unsigned block_hl[3][2] = {{NV_QMDV03_00_CTA_THREAD_DIMENSION0_HI, NV_QMDV03_00_CTA_THREAD_DIMENSION0_LO},
                                          {NV_QMDV03_00_CTA_THREAD_DIMENSION1_HI, NV_QMDV03_00_CTA_THREAD_DIMENSION1_LO},
                                          {NV_QMDV03_00_CTA_THREAD_DIMENSION2_HI, NV_QMDV03_00_CTA_THREAD_DIMENSION2_LO}};
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
