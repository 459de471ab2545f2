/* The PM4 dispatch sequence (see amd_dispatch.h). */
#include "amd/amd_dispatch.h"

#include <inttypes.h>
#include <string.h>

#include "amd/amd_code_object.h"
#include "amd/amd_scratch.h"

#include "autogen/amd_regs_gfx11.h"
#include "autogen/amd_regs_gfx9.h"

/* Register groups written with one SET_SH_REG must be contiguous in the header we generate from. */
#define CONTIG(P, a, b) _Static_assert(P##b == P##a + 1, #a " and " #b " are adjacent")
CONTIG(AMD_GFX11_COMPUTE_, PGM_LO, PGM_HI);
CONTIG(AMD_GFX11_COMPUTE_, PGM_RSRC1, PGM_RSRC2);
CONTIG(AMD_GFX11_COMPUTE_, STATIC_THREAD_MGMT_SE0, STATIC_THREAD_MGMT_SE1);
CONTIG(AMD_GFX11_COMPUTE_, STATIC_THREAD_MGMT_SE2, STATIC_THREAD_MGMT_SE3);
CONTIG(AMD_GFX11_COMPUTE_, STATIC_THREAD_MGMT_SE6, STATIC_THREAD_MGMT_SE7);
CONTIG(AMD_GFX11_COMPUTE_, START_Z, NUM_THREAD_X);
CONTIG(AMD_GFX11_COMPUTE_, NUM_THREAD_Z, PIPELINESTAT_ENABLE);
CONTIG(AMD_GFX11_COMPUTE_, PIPELINESTAT_ENABLE, PERFCOUNT_ENABLE);
CONTIG(AMD_GFX11_COMPUTE_, USER_DATA_14, USER_DATA_15);
CONTIG(AMD_GFX11_COMPUTE_, DISPATCH_SCRATCH_BASE_LO, DISPATCH_SCRATCH_BASE_HI);
CONTIG(AMD_GFX9_COMPUTE_, PGM_LO, PGM_HI);
CONTIG(AMD_GFX9_COMPUTE_, PGM_RSRC1, PGM_RSRC2);
CONTIG(AMD_GFX9_COMPUTE_, START_Z, NUM_THREAD_X);
CONTIG(AMD_GFX9_COMPUTE_, PIPELINESTAT_ENABLE, PERFCOUNT_ENABLE);
CONTIG(AMD_GFX9_COMPUTE_, USER_DATA_14, USER_DATA_15);
_Static_assert(AMD_GFX9_COMPUTE_PGM_RSRC2__USER_SGPR_MASK == AMD_GFX11_COMPUTE_PGM_RSRC2__USER_SGPR_MASK &&
                   AMD_GFX9_COMPUTE_PGM_RSRC2__SCRATCH_EN_MASK == AMD_GFX11_COMPUTE_PGM_RSRC2__SCRATCH_EN_MASK,
               "RSRC2 USER_SGPR / SCRATCH_EN (read with the gfx11 names for both)");

amd_regs amd_regs_of(const amd_device *d) {
  const uint32_t *b = d->node.gc_base;
#define R(G, n) (b[AMD_##G##_COMPUTE_##n##_BASE_IDX] + AMD_##G##_COMPUTE_##n)
#define MAP(G)                                                                                                        \
  (amd_regs){R(G, PGM_LO), R(G, PGM_RSRC1), R(G, PGM_RSRC3), R(G, TMPRING_SIZE), R(G, DISPATCH_SCRATCH_BASE_LO), R(G, RESTART_X),                     \
             R(G, STATIC_THREAD_MGMT_SE0), R(G, STATIC_THREAD_MGMT_SE2), R(G, STATIC_THREAD_MGMT_SE4),                \
             R(G, USER_DATA_0), R(G, RESOURCE_LIMITS), R(G, START_X),                                                 \
             AMD_##G##_COMPUTE_DISPATCH_INITIATOR__COMPUTE_SHADER_EN_MASK |                                           \
                 AMD_##G##_COMPUTE_DISPATCH_INITIATOR__FORCE_START_AT_000_MASK,                                       \
             0, AMD_##G##_COMPUTE_PGM_RSRC1__PRIV_MASK}
  amd_regs r = d->arch->gfx9 ? MAP(GFX9) : MAP(GFX11);
  if (!d->arch->gfx9) r.w32_en = AMD_GFX11_COMPUTE_DISPATCH_INITIATOR__CS_W32_EN_MASK;
  return r;
#undef MAP
#undef R
}

hcq_status amd_pm4_dispatch(amd_cmdbuf *b, const amd_device *d, const amd_dispatch_desc *k, amd_dispatch_slots *slots) {
  if (k->code_va & 0xff)
    return hcq_status_make(HCQ_CODE_INVALID, "amd %s: kernel entry 0x%" PRIx64 " is not 256-byte aligned", d->name, k->code_va);
  if (k->user_sgpr_count > 16)
    return hcq_status_make(HCQ_CODE_INVALID, "amd %s: %u user SGPRs (at most 16)", d->name, k->user_sgpr_count);
  for (int i = 0; i < 3; i++)
    if (!k->local[i] || !k->grid[i])
      return hcq_status_make(HCQ_CODE_INVALID, "amd %s: empty grid or workgroup in dimension %d", d->name, i);
  if (k->scratch_va & 0xff)
    return hcq_status_make(HCQ_CODE_INVALID, "amd %s: scratch base 0x%" PRIx64 " is not 256-byte aligned", d->name, k->scratch_va);
  if (k->wave32 && d->arch->gfx9) return hcq_status_make(HCQ_CODE_INVALID, "amd %s: wave32 needs gfx10+", d->name);
  if (b->n + AMD_DISPATCH_MAX_DW > b->cap) return hcq_status_make(HCQ_CODE_INVALID, "amd: command buffer full");
  amd_regs r = amd_regs_of(d);
  amd_pm4_acquire_mem(b, d->arch->gfx9, false);
  uint64_t pgm = k->code_va >> 8;
  amd_pm4_set_regs(b, r.pgm_lo, (uint32_t[]){amd_lo(pgm), amd_hi(pgm)}, 2);
  uint32_t rsrc1 = k->rsrc1 | (d->arch->rsrc1_priv ? r.rsrc1_priv : 0);
  amd_pm4_set_regs(b, r.rsrc1, (uint32_t[]){rsrc1, k->rsrc2}, 2);
  amd_pm4_set_regs(b, r.rsrc3, &k->rsrc3, 1);
  amd_pm4_set_regs(b, r.tmpring, &k->tmpring_size, 1);
  /* architected flat scratch (gfx11+, gfx942): the CP derives each wave's FLAT_SCRATCH from this base (ops_amd.py
   * has_scratch_base_registers); gfx90a kernels take a private segment buffer V# in user SGPRs instead */
  if (d->arch->scratch_base_regs && k->scratch_va) {
    uint64_t sb = k->scratch_va >> 8;
    amd_pm4_set_regs(b, r.scratch_base_lo, (uint32_t[]){amd_lo(sb), amd_hi(sb)}, 2);
  }
  amd_pm4_set_regs(b, r.restart_x, (uint32_t[]){0, 0, 0}, 3);
  uint32_t all[4] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu};
  amd_pm4_set_regs(b, r.thread_se0, all, 2);
  amd_pm4_set_regs(b, r.thread_se2, all, 2);
  if (d->arch->thread_mgmt_se4_7) amd_pm4_set_regs(b, r.thread_se4, all, 4);
  amd_dispatch_slots at = {.user_sgpr = b->n + 2};
  if (k->user_sgpr_count) amd_pm4_set_regs(b, r.user_data0, k->user_sgpr, k->user_sgpr_count);
  amd_pm4_set_regs(b, r.limits, (uint32_t[]){0}, 1);
  at.local = b->n + 2 + 3;
  amd_pm4_set_regs(b, r.start_x, (uint32_t[]){0, 0, 0, k->local[0], k->local[1], k->local[2], 0, 0}, 8);
  at.grid = b->n + 1;
  if (slots) *slots = at;
  amd_pm4_dispatch_direct(b, k->grid[0], k->grid[1], k->grid[2], r.initiator_base | (k->wave32 ? r.w32_en : 0));
  amd_pm4_event_write(b, d->arch->gfx9 ? AMD_PM4_GFX9_EVENT_CS_PARTIAL_FLUSH : AMD_PM4_EVENT_CS_PARTIAL_FLUSH,
                      AMD_PM4_EVENT_INDEX_PARTIAL_FLUSH);
  return HCQ_OK;
}

hcq_status amd_user_sgprs(const amd_device *d, uint16_t props, uint32_t count, const amd_user_sgpr_src *s,
                          uint32_t out[16], uint32_t *out_n) {
  static const struct { uint16_t bit; const char *what; } refused[] = {
      {AMD_KCP_QUEUE_PTR, "the queue pointer (a PM4 queue has no amd_queue_t)"},
      {AMD_KCP_DISPATCH_ID, "the dispatch id"},
      {AMD_KCP_USES_DYNAMIC_STACK, "a dynamic stack (its scratch size is unknown)"},
  };
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
    if (props & refused[i].bit)
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "amd %s: the kernel asks for %s (kernel_code_properties 0x%x)",
                             d->name, refused[i].what, props);
  uint16_t known = AMD_KCP_PRIVATE_SEGMENT_BUFFER | AMD_KCP_DISPATCH_PTR | AMD_KCP_KERNARG_SEGMENT_PTR |
                   AMD_KCP_FLAT_SCRATCH_INIT | AMD_KCP_PRIVATE_SEGMENT_SIZE | AMD_KCP_WAVEFRONT_SIZE32;
  if (props & ~known)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "amd %s: kernel_code_properties 0x%x has bits hcq does not know (0x%x)",
                           d->name, props, props & ~known);
  bool buffer_scratch = d->arch->gfx9 && !d->arch->scratch_base_regs; /* gfx90a */
  if ((props & (AMD_KCP_PRIVATE_SEGMENT_BUFFER | AMD_KCP_FLAT_SCRATCH_INIT)) && !buffer_scratch)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "amd %s: the kernel asks for a private segment buffer or flat scratch "
                           "init (kernel_code_properties 0x%x); %s has architected flat scratch, hcq sets them up on "
                           "gfx90a only", d->name, props, d->arch->name);
  uint32_t v[16], n = 0;
  amd_user_sgpr_src z = {0};
  if (!s) s = &z;
  if (props & AMD_KCP_PRIVATE_SEGMENT_BUFFER) amd_scratch_rsrc_gfx9(s->scratch_va, !(props & AMD_KCP_WAVEFRONT_SIZE32), v), n = 4;
  if (props & AMD_KCP_DISPATCH_PTR) v[n++] = amd_lo(s->dispatch_packet_va), v[n++] = amd_hi(s->dispatch_packet_va);
  if (props & AMD_KCP_KERNARG_SEGMENT_PTR) v[n++] = amd_lo(s->kernarg_va), v[n++] = amd_hi(s->kernarg_va);
  /* GFX9 flat scratch init: "the 64 bit address of the base of scratch backing memory being managed by SPI for the
   * queue" (AMDGPUUsage); the kernel prolog adds its wave offset */
  if (props & AMD_KCP_FLAT_SCRATCH_INIT) v[n++] = amd_lo(s->scratch_va), v[n++] = amd_hi(s->scratch_va);
  if (props & AMD_KCP_PRIVATE_SEGMENT_SIZE) v[n++] = s->private_B;
  if (n > count || count > 16)
    return hcq_status_make(HCQ_CODE_INVALID, "amd %s: kernel_code_properties 0x%x enables %u user SGPRs, RSRC2.USER_SGPR "
                           "says %u (at most 16)", d->name, props, n, count);
  while (n < count) v[n++] = 0;
  if (out) memcpy(out, v, n * 4u);
  if (out_n) *out_n = n;
  return HCQ_OK;
}

static void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, v), put16(p + 2, v >> 16); }

void amd_dispatch_packet_write(uint8_t pkt[AMD_DISPATCH_PACKET_B], const uint32_t local[3], const uint32_t grid[3],
                               uint32_t private_B, uint32_t group_B, uint64_t kernel_object, uint64_t kernarg_va) {
  memset(pkt, 0, AMD_DISPATCH_PACKET_B);
  put16(pkt + 2, 3); /* setup: dimensions */
  for (int i = 0; i < 3; i++) put16(pkt + 4 + 2 * i, local[i]), put32(pkt + 12 + 4 * i, local[i] * grid[i]);
  put32(pkt + 24, private_B);
  put32(pkt + 28, group_B);
  put32(pkt + 32, amd_lo(kernel_object)), put32(pkt + 36, amd_hi(kernel_object));
  put32(pkt + 40, amd_lo(kernarg_va)), put32(pkt + 44, amd_hi(kernarg_va));
}
