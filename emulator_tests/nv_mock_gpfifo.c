/* NV mock: the GPFIFO processor. A doorbell (NOTIFY_CHANNEL_PENDING = work-submit token) runs that channel's
 * GPFIFO entries from GP_GET to GP_PUT (USERD): each entry names a push buffer, whose method headers
 * (incrementing, non-incrementing, increment-once, immediate) feed methods to the class bound on each
 * subchannel by SET_OBJECT. Host methods (offset < 0x100) run semaphores; the compute class launches QMDs
 * (SEND_SIGNALING_PCAS2_B) through the launch hook; the copy class runs LAUNCH_DMA copies and semaphores.
 * Unknown methods and opcodes stop the channel with the method and the push-buffer address. An acquire that is
 * not yet satisfied stalls the channel at that method group; every doorbell retries stalled channels.
 * Every access is checked against the live GPU mappings (an MMU fault otherwise). Field positions come from
 * autogen (nv_abi.h bits, nv_qmd.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "autogen/nv_qmd.h"
#include "emulator_tests/nv_mock_internal.h"

typedef struct {
  nv_mock *m;
  nvm_obj *o;
  nvm_channel *c;
  uint64_t pb_va; /* address of the method header being run (for messages) */
  char *detail;
} nvm_run;

void nvm_channel_free(nvm_channel *c) {
  free(c->regs);
  free(c);
}

static int nvm_fail(nvm_run *r, int err, const char *fmt, uint32_t subch, uint32_t method, uint32_t value) {
  char what[96];
  snprintf(what, sizeof what, fmt, value);
  snprintf(r->detail, KIF_DETAIL_MAX, "nv-mock: channel 0x%x subch %u method 0x%x (push buffer 0x%llx): %s",
           r->o->handle, subch, method, (unsigned long long)r->pb_va, what);
  return err;
}

static uint32_t *nvm_regs(nvm_run *r, uint32_t subch) { return r->c->regs + (size_t)subch * NVM_METHODS; }
#define REG(subch, method) nvm_regs(r, subch)[(method) / 4]

static uint64_t nvm_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int nvm_access(nvm_run *r, uint64_t va, uint64_t size_B, bool write) {
  return nv_mock_check_access(r->m, va, size_B, write, r->detail);
}

/* The upper address bits a class accepts (per class, from its header via autogen). 0: unknown width. */
static uint64_t nvm_sem_hi_mask(uint32_t gpfifo_class) {
  switch (gpfifo_class) {
  case AMPERE_CHANNEL_GPFIFO_A: return NV_AMPERE_CHANNEL_GPFIFO_A_SEM_ADDR_HI_OFFSET_MASK;
  case HOPPER_CHANNEL_GPFIFO_A: return NV_HOPPER_CHANNEL_GPFIFO_A_SEM_ADDR_HI_OFFSET_MASK;
  case BLACKWELL_CHANNEL_GPFIFO_A: return NV_BLACKWELL_CHANNEL_GPFIFO_A_SEM_ADDR_HI_OFFSET_MASK;
  case BLACKWELL_CHANNEL_GPFIFO_B: return NV_BLACKWELL_CHANNEL_GPFIFO_B_SEM_ADDR_HI_OFFSET_MASK;
  default: return 0;
  }
}
static uint64_t nvm_copy_hi_mask(uint32_t copy_class) {
  switch (copy_class) {
  case AMPERE_DMA_COPY_A: return NV_AMPERE_DMA_COPY_A_OFFSET_UPPER_MASK;
  case AMPERE_DMA_COPY_B: return NV_AMPERE_DMA_COPY_B_OFFSET_UPPER_MASK;
  case HOPPER_DMA_COPY_A: return NV_HOPPER_DMA_COPY_A_OFFSET_UPPER_MASK;
  case BLACKWELL_DMA_COPY_A: return NV_BLACKWELL_DMA_COPY_A_OFFSET_UPPER_MASK;
  case BLACKWELL_DMA_COPY_B: return NV_BLACKWELL_DMA_COPY_B_OFFSET_UPPER_MASK;
  default: return 0;
  }
}

#define FIELD(v, name) (((v) >> name##_SHIFT) & name##_MASK)

static int nvm_sem_execute(nvm_run *r, uint32_t subch, uint32_t v) {
  uint64_t mask = nvm_sem_hi_mask(r->o->cls);
  uint32_t hi = REG(subch, NV_AMPERE_CHANNEL_GPFIFO_A_SEM_ADDR_HI), lo = REG(subch, NV_AMPERE_CHANNEL_GPFIFO_A_SEM_ADDR_LO);
  if (!mask) return nvm_fail(r, ENOTSUP, "SEM_ADDR_HI width of this channel class unknown (0x%x)", subch, 0x6c, r->o->cls);
  if (hi & ~mask) return nvm_fail(r, EINVAL, "SEM_ADDR_HI 0x%x has bits outside the class's OFFSET field", subch, 0x60, hi);
  uint64_t addr = ((uint64_t)hi << 32) | (lo & ~3u);
  bool wide = FIELD(v, NV_SEM_EXECUTE_PAYLOAD_SIZE) == NV_SEM_EXECUTE_PAYLOAD_SIZE_64BIT;
  uint64_t payload = REG(subch, NV_AMPERE_CHANNEL_GPFIFO_A_SEM_PAYLOAD_LO);
  if (wide) payload |= (uint64_t)REG(subch, NV_AMPERE_CHANNEL_GPFIFO_A_SEM_PAYLOAD_HI) << 32;
  uint32_t op = (uint32_t)FIELD(v, NV_SEM_EXECUTE_OPERATION);
  bool ts = FIELD(v, NV_SEM_EXECUTE_RELEASE_TIMESTAMP) == NV_SEM_EXECUTE_RELEASE_TIMESTAMP_EN;
  bool writes = op == NV_SEM_EXECUTE_OPERATION_RELEASE || op == NV_SEM_EXECUTE_OPERATION_REDUCTION;
  if (nvm_access(r, addr, writes && ts ? 16 : wide ? 8 : 4, writes)) return EFAULT;
  void *p = (void *)(uintptr_t)addr;
  uint64_t cur = wide ? __atomic_load_n((uint64_t *)p, __ATOMIC_ACQUIRE) : __atomic_load_n((uint32_t *)p, __ATOMIC_ACQUIRE);
  switch (op) {
  case NV_SEM_EXECUTE_OPERATION_RELEASE:
    if (ts) __atomic_store_n((uint64_t *)p + 1, nvm_now_ns(), __ATOMIC_RELAXED);
    if (wide) __atomic_store_n((uint64_t *)p, payload, __ATOMIC_RELEASE);
    else __atomic_store_n((uint32_t *)p, (uint32_t)payload, __ATOMIC_RELEASE);
    return 0;
  case NV_SEM_EXECUTE_OPERATION_REDUCTION:
    if (FIELD(v, NV_SEM_EXECUTE_REDUCTION) != NV_SEM_EXECUTE_REDUCTION_IADD)
      return nvm_fail(r, ENOTSUP, "SEM_EXECUTE reduction %u not emulated", subch, 0x6c, (uint32_t)FIELD(v, NV_SEM_EXECUTE_REDUCTION));
    if (ts) __atomic_store_n((uint64_t *)p + 1, nvm_now_ns(), __ATOMIC_RELAXED);
    if (wide) __atomic_fetch_add((uint64_t *)p, payload, __ATOMIC_ACQ_REL);
    else __atomic_fetch_add((uint32_t *)p, (uint32_t)payload, __ATOMIC_ACQ_REL);
    return 0;
  case NV_SEM_EXECUTE_OPERATION_ACQUIRE: return cur == payload ? 0 : EAGAIN;
  case NV_SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ: return cur >= payload ? 0 : EAGAIN;
  case NV_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ:
    return (wide ? (int64_t)(cur - payload) : (int32_t)(uint32_t)(cur - payload)) >= 0 ? 0 : EAGAIN;
  default: return nvm_fail(r, ENOTSUP, "SEM_EXECUTE operation %u not emulated", subch, 0x6c, op);
  }
}

static int nvm_host_method(nvm_run *r, uint32_t subch, uint32_t method, uint32_t v) {
  switch (method) {
  case NV_AMPERE_CHANNEL_GPFIFO_A_SET_OBJECT: {
    uint32_t cls = (uint32_t)FIELD(v, NV_SET_OBJECT_NVCLASS);
    for (int i = 0; i < r->m->nobjs; i++)
      if (r->m->objs[i].parent == r->o->handle && r->m->objs[i].cls == cls) {
        r->c->bound[subch] = cls;
        return 0;
      }
    return nvm_fail(r, EINVAL, "SET_OBJECT 0x%x: no object of that class on this channel", subch, method, v);
  }
  case 0x8: /* NOP */
  case NV_AMPERE_CHANNEL_GPFIFO_A_NON_STALL_INTERRUPT:
  case 0x78: /* WFI */
  case NV_AMPERE_CHANNEL_GPFIFO_A_SEM_ADDR_LO:
  case NV_AMPERE_CHANNEL_GPFIFO_A_SEM_ADDR_HI:
  case NV_AMPERE_CHANNEL_GPFIFO_A_SEM_PAYLOAD_LO:
  case NV_AMPERE_CHANNEL_GPFIFO_A_SEM_PAYLOAD_HI:
    return 0;
  case NV_AMPERE_CHANNEL_GPFIFO_A_SEM_EXECUTE: return nvm_sem_execute(r, subch, v);
  default: return nvm_fail(r, EINVAL, "unknown host method (value 0x%x)", subch, method, v);
  }
}

static int nvm_write_release(nvm_run *r, uint64_t addr, uint64_t payload, bool wide) {
  if (nvm_access(r, addr, wide ? 8 : 4, true)) return EFAULT;
  if (wide) __atomic_store_n((uint64_t *)(uintptr_t)addr, payload, __ATOMIC_RELEASE);
  else __atomic_store_n((uint32_t *)(uintptr_t)addr, (uint32_t)payload, __ATOMIC_RELEASE);
  return 0;
}

/* A kernel fault as RM posts it into the channel's error notifier (NvNotification of open-gpu-kernel-modules
 * src/common/sdk/nvidia/inc/nvtypes.h; Xid ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT = 31 from nverror.h; status 0xffff
 * as kernel_rc_notification.c passes it). Returns false when the channel has no CPU-visible notifier. */
static bool nvm_post_fault(nvm_run *r) {
  nvm_obj *n = nvm_find(r->m, r->c->error_notifier);
  if (!n || n->kind != NVM_MEMORY || !n->va || n->size_B < 16) return false;
  struct { uint64_t time_ns; uint32_t info32; uint16_t info16, status; } note = {nvm_now_ns(), 31, 0, 0xffff};
  memcpy((void *)(uintptr_t)n->va, &note, sizeof note);
  r->m->faults++;
  snprintf(r->m->last_fault, sizeof r->m->last_fault, "%s", r->detail);
  /* robust-channel recovery stops every channel posting to this notifier (the channel group) */
  for (int i = 0; i < r->m->nobjs; i++)
    if (r->m->objs[i].kind == NVM_CHANNEL && r->m->objs[i].chan->error_notifier == r->c->error_notifier)
      r->m->objs[i].chan->stopped = true;
  return true;
}

/* A launch that needs local memory needs what the channel was given to cover it: the local window
 * (SET_SHADER_LOCAL_MEMORY_WINDOW_A/B), and an allocation (SET_SHADER_LOCAL_MEMORY_A/B) whose bytes per TPC
 * (NON_THROTTLED_A/B) hold a warp's 32 threads for every warp slot of the TPC's SMs, live for every TPC. */
static int nvm_check_local(nvm_run *r, uint32_t subch, uint32_t per_thread_B) {
  if (!per_thread_B) return 0;
  uint64_t window = (uint64_t)REG(subch, NV_HOPPER_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_WINDOW_A) << 32 |
                    REG(subch, NV_HOPPER_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_WINDOW_B);
  uint64_t base = (uint64_t)REG(subch, NV_HOPPER_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_A) << 32 |
                  REG(subch, NV_HOPPER_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_B);
  uint64_t per_tpc = (uint64_t)REG(subch, NV_HOPPER_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A) << 32 |
                     REG(subch, NV_HOPPER_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B);
  uint32_t warps = 0, sms = 0, tpcs = 0, gpcs = 0;
  nvm_gr_info(r->m, NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM, &warps);
  nvm_gr_info(r->m, NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC, &sms);
  nvm_gr_info(r->m, NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC, &tpcs);
  nvm_gr_info(r->m, NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS, &gpcs);
  uint64_t need = (((uint64_t)per_thread_B * 32 + 0x1ff) & ~0x1ffull) * warps * sms;
  if (!window) return nvm_fail(r, EINVAL, "QMD asks %u bytes of local memory per thread; no local window set", subch, 0x2c0, per_thread_B);
  if (!base || per_tpc < need) {
    int n = snprintf(r->detail, KIF_DETAIL_MAX, "channel 0x%x: QMD local memory %u B/thread; the channel's local "
                     "memory is too small", r->o->handle, per_thread_B);
    if (n > 0 && n < KIF_DETAIL_MAX)
      snprintf(r->detail + n, (size_t)(KIF_DETAIL_MAX - n), " (%llu B/TPC, %llu needed)", (unsigned long long)per_tpc,
               (unsigned long long)need);
    return EINVAL;
  }
  return nvm_access(r, base, per_tpc * tpcs * gpcs, true) ? EFAULT : 0;
}

/* Decodes one QMD, runs it through the hook, then its releases; returns the next QMD of the chain (0: none). */
static int nvm_run_qmd(nvm_run *r, uint32_t subch, uint64_t qmd_va, uint64_t *next) {
  bool v5 = r->c->bound[subch] >= BLACKWELL_COMPUTE_A;
  *next = 0;
  if (nvm_access(r, qmd_va, v5 ? NV_QMDV05_00_SIZE_B : NV_QMDV03_00_SIZE_B, false)) return EFAULT;
  const uint32_t *q = (const uint32_t *)(uintptr_t)qmd_va;
  nv_mock_launch l = {.qmd_va = qmd_va, .qmd_version = v5 ? 5 : 3};
  if (v5) {
    l.grid[0] = (uint32_t)nv_qmdv05_00_get_grid_width(q), l.grid[1] = (uint32_t)nv_qmdv05_00_get_grid_height(q);
    l.grid[2] = (uint32_t)nv_qmdv05_00_get_grid_depth(q);
    l.block[0] = (uint32_t)nv_qmdv05_00_get_cta_thread_dimension0(q);
    l.block[1] = (uint32_t)nv_qmdv05_00_get_cta_thread_dimension1(q);
    l.block[2] = (uint32_t)nv_qmdv05_00_get_cta_thread_dimension2(q);
    l.cbank0_va = (nv_qmdv05_00_get_constant_buffer_addr_upper_shifted6(q, 0) << 32 |
                   nv_qmdv05_00_get_constant_buffer_addr_lower_shifted6(q, 0)) << 6;
    l.cbank0_size_B = (uint32_t)nv_qmdv05_00_get_constant_buffer_size_shifted4(q, 0);
    l.shared_size_B = (uint32_t)nv_qmdv05_00_get_shared_memory_size_shifted7(q) << 7;
    l.program_va = (nv_qmdv05_00_get_program_address_upper_shifted4(q) << 32 |
                    nv_qmdv05_00_get_program_address_lower_shifted4(q)) << 4;
    l.local_size_B = (uint32_t)(nv_qmdv05_00_get_shader_local_memory_high_size_shifted4(q) << 4);
  } else {
    l.grid[0] = (uint32_t)nv_qmdv03_00_get_cta_raster_width(q), l.grid[1] = (uint32_t)nv_qmdv03_00_get_cta_raster_height(q);
    l.grid[2] = (uint32_t)nv_qmdv03_00_get_cta_raster_depth(q);
    l.block[0] = (uint32_t)nv_qmdv03_00_get_cta_thread_dimension0(q);
    l.block[1] = (uint32_t)nv_qmdv03_00_get_cta_thread_dimension1(q);
    l.block[2] = (uint32_t)nv_qmdv03_00_get_cta_thread_dimension2(q);
    l.cbank0_va = nv_qmdv03_00_get_constant_buffer_addr_upper(q, 0) << 32 | nv_qmdv03_00_get_constant_buffer_addr_lower(q, 0);
    /* the reference stores the raw byte size in the SHIFTED4 field (runtime.md 6.6); read it the same way */
    l.cbank0_size_B = (uint32_t)nv_qmdv03_00_get_constant_buffer_size_shifted4(q, 0);
    l.shared_size_B = (uint32_t)nv_qmdv03_00_get_shared_memory_size(q);
    l.program_va = nv_qmdv03_00_get_program_address_upper(q) << 32 | nv_qmdv03_00_get_program_address_lower(q);
    l.local_size_B = (uint32_t)nv_qmdv03_00_get_shader_local_memory_high_size(q);
  }
  int lerr = nvm_check_local(r, subch, l.local_size_B);
  if (lerr) return lerr;
  if (!r->m->launch_fn)
    return nvm_fail(r, ENOTSUP, "QMD at 0x%x: no launch hook installed (nothing can run kernels)", subch, 0x2c0,
                    (uint32_t)qmd_va);
  r->m->launches++;
  int err = r->m->launch_fn(r->m->launch_ctx, r->m, &l, r->detail);
  if (err) { /* name the channel and the kernel (by program address) in front of the hook's reason */
    char why[KIF_DETAIL_MAX];
    snprintf(why, sizeof why, "%s", r->detail);
    int n = snprintf(r->detail, KIF_DETAIL_MAX, "channel 0x%x kernel at 0x%llx: ", r->o->handle,
                     (unsigned long long)l.program_va);
    if (n > 0 && n < KIF_DETAIL_MAX) memcpy(r->detail + n, why, strnlen(why, (size_t)(KIF_DETAIL_MAX - 1 - n)) + 1);
    r->detail[KIF_DETAIL_MAX - 1] = 0;
    if (err != EFAULT || !nvm_post_fault(r)) return err;
    r->detail[0] = 0;
    return ECANCELED; /* posted: the channel stops here, its releases are not written */
  }
  for (unsigned i = 0; i < 2; i++) {
    uint64_t addr, payload;
    bool wide;
    if (v5) {
      if (!nv_qmdv05_00_get_release_enable(q, i)) continue;
      addr = i ? nv_qmdv05_00_get_release_semaphore1_addr_upper(q) << 32 | nv_qmdv05_00_get_release_semaphore1_addr_lower(q)
               : nv_qmdv05_00_get_release_semaphore0_addr_upper(q) << 32 | nv_qmdv05_00_get_release_semaphore0_addr_lower(q);
      payload = i ? nv_qmdv05_00_get_release_semaphore1_payload_upper(q) << 32 | nv_qmdv05_00_get_release_semaphore1_payload_lower(q)
                  : nv_qmdv05_00_get_release_semaphore0_payload_upper(q) << 32 | nv_qmdv05_00_get_release_semaphore0_payload_lower(q);
      wide = nv_qmdv05_00_get_release_payload64b(q, i);
    } else {
      if (!(i ? nv_qmdv03_00_get_release1_enable(q) : nv_qmdv03_00_get_release0_enable(q))) continue;
      addr = i ? nv_qmdv03_00_get_release1_address_upper(q) << 32 | nv_qmdv03_00_get_release1_address_lower(q)
               : nv_qmdv03_00_get_release0_address_upper(q) << 32 | nv_qmdv03_00_get_release0_address_lower(q);
      payload = i ? nv_qmdv03_00_get_release1_payload_upper(q) << 32 | nv_qmdv03_00_get_release1_payload_lower(q)
                  : nv_qmdv03_00_get_release0_payload_upper(q) << 32 | nv_qmdv03_00_get_release0_payload_lower(q);
      /* the reference writes a u64 payload without setting PAYLOAD64B; a 64-bit write covers both */
      wide = true;
    }
    if ((err = nvm_write_release(r, addr, payload, wide))) return err;
  }
  if (v5 ? nv_qmdv05_00_get_dependent_qmd0_enable(q) : nv_qmdv03_00_get_dependent_qmd0_enable(q))
    *next = (v5 ? nv_qmdv05_00_get_dependent_qmd0_pointer(q) : nv_qmdv03_00_get_dependent_qmd0_pointer(q)) << 8;
  return 0;
}

static int nvm_compute_method(nvm_run *r, uint32_t subch, uint32_t method, uint32_t v) {
  switch (method) {
  case NV_HOPPER_COMPUTE_A_SET_SHADER_SHARED_MEMORY_WINDOW_A: case NV_HOPPER_COMPUTE_A_SET_SHADER_SHARED_MEMORY_WINDOW_B:
  case NV_HOPPER_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_WINDOW_A: case NV_HOPPER_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_WINDOW_B:
  case NV_HOPPER_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_A: case NV_HOPPER_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_B:
  case NV_HOPPER_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A:
  case NV_HOPPER_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B:
  case NV_HOPPER_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C:
  case NV_HOPPER_COMPUTE_A_SEND_PCAS_A: case NV_HOPPER_COMPUTE_A_INVALIDATE_SHADER_CACHES_NO_WFI:
    return 0;
  case NV_HOPPER_COMPUTE_A_SEND_SIGNALING_PCAS2_B: {
    uint32_t action = (uint32_t)FIELD(v, NV_SEND_SIGNALING_PCAS2_B_PCAS_ACTION);
    if (action != NV_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_PREFETCH_SCHEDULE &&
        action != NV_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_INVALIDATE_COPY_SCHEDULE &&
        action != NV_SEND_SIGNALING_PCAS2_B_PCAS_ACTION_SCHEDULE)
      return nvm_fail(r, ENOTSUP, "PCAS action %u not emulated", subch, method, action);
    uint64_t qmd = (uint64_t)REG(subch, NV_HOPPER_COMPUTE_A_SEND_PCAS_A) << 8;
    for (int n = 0; qmd; n++) {
      if (n == 1 << 16) return nvm_fail(r, ELOOP, "QMD chain longer than %u", subch, method, 1u << 16);
      int err = nvm_run_qmd(r, subch, qmd, &qmd);
      if (err) return err;
    }
    return 0;
  }
  default: return nvm_fail(r, EINVAL, "unknown compute method (value 0x%x)", subch, method, v);
  }
}

static int nvm_copy_launch(nvm_run *r, uint32_t subch, uint32_t v) {
  uint32_t cls = r->c->bound[subch];
  uint64_t mask = nvm_copy_hi_mask(cls);
  if (!mask) return nvm_fail(r, ENOTSUP, "address widths of copy class 0x%x unknown", subch, 0x300, cls);
  uint32_t ttype = (uint32_t)FIELD(v, NV_LAUNCH_DMA_DATA_TRANSFER_TYPE);
  if (ttype != NV_LAUNCH_DMA_DATA_TRANSFER_TYPE_NONE) {
    if (FIELD(v, NV_LAUNCH_DMA_SRC_MEMORY_LAYOUT) != NV_LAUNCH_DMA_MEMORY_LAYOUT_PITCH ||
        FIELD(v, NV_LAUNCH_DMA_DST_MEMORY_LAYOUT) != NV_LAUNCH_DMA_MEMORY_LAYOUT_PITCH ||
        FIELD(v, NV_LAUNCH_DMA_MULTI_LINE_ENABLE) || FIELD(v, NV_LAUNCH_DMA_REMAP_ENABLE) ||
        FIELD(v, NV_LAUNCH_DMA_SRC_TYPE) || FIELD(v, NV_LAUNCH_DMA_DST_TYPE))
      return nvm_fail(r, ENOTSUP, "LAUNCH_DMA 0x%x: only 1-D pitch copies between virtual addresses", subch, 0x300, v);
    uint32_t in_hi = REG(subch, NV_HOPPER_DMA_COPY_A_OFFSET_IN_UPPER), out_hi = REG(subch, NV_HOPPER_DMA_COPY_A_OFFSET_OUT_UPPER);
    if ((in_hi | out_hi) & ~mask)
      return nvm_fail(r, EINVAL, "OFFSET_*_UPPER 0x%x has bits outside the class's UPPER field", subch, 0x400, in_hi | out_hi);
    uint64_t src = (uint64_t)in_hi << 32 | REG(subch, NV_HOPPER_DMA_COPY_A_OFFSET_IN_LOWER);
    uint64_t dst = (uint64_t)out_hi << 32 | REG(subch, NV_HOPPER_DMA_COPY_A_OFFSET_OUT_LOWER);
    uint64_t n = REG(subch, NV_HOPPER_DMA_COPY_A_LINE_LENGTH_IN);
    if (nvm_access(r, src, n, false) || nvm_access(r, dst, n, true)) return EFAULT;
    memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
  }
  uint32_t stype = (uint32_t)FIELD(v, NV_LAUNCH_DMA_SEMAPHORE_TYPE);
  if (stype == NV_LAUNCH_DMA_SEMAPHORE_TYPE_NONE) return 0;
  uint32_t hi = REG(subch, NV_HOPPER_DMA_COPY_A_SET_SEMAPHORE_A);
  if (hi & ~mask) return nvm_fail(r, EINVAL, "SET_SEMAPHORE_A 0x%x has bits outside the class's UPPER field", subch, 0x240, hi);
  uint64_t addr = (uint64_t)hi << 32 | REG(subch, NV_HOPPER_DMA_COPY_A_SET_SEMAPHORE_B);
  uint32_t payload = REG(subch, NV_HOPPER_DMA_COPY_A_SET_SEMAPHORE_PAYLOAD);
  if (stype == NV_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_ONE_WORD_SEMAPHORE) return nvm_write_release(r, addr, payload, false);
  if (stype != NV_LAUNCH_DMA_SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE)
    return nvm_fail(r, ENOTSUP, "semaphore type %u not emulated", subch, 0x300, stype);
  /* four-word release: payload, a zero word, then the 64-bit timestamp at +8 */
  if (nvm_access(r, addr, 16, true)) return EFAULT;
  uint32_t *p = (uint32_t *)(uintptr_t)addr;
  __atomic_store_n((uint64_t *)(p + 2), nvm_now_ns(), __ATOMIC_RELAXED);
  __atomic_store_n(p + 1, 0u, __ATOMIC_RELAXED);
  __atomic_store_n(p, payload, __ATOMIC_RELEASE);
  return 0;
}

static int nvm_copy_method(nvm_run *r, uint32_t subch, uint32_t method, uint32_t v) {
  switch (method) {
  case NV_HOPPER_DMA_COPY_A_SET_SEMAPHORE_A: case NV_HOPPER_DMA_COPY_A_SET_SEMAPHORE_B:
  case NV_HOPPER_DMA_COPY_A_SET_SEMAPHORE_PAYLOAD: case NV_HOPPER_DMA_COPY_A_OFFSET_IN_UPPER:
  case NV_HOPPER_DMA_COPY_A_OFFSET_IN_LOWER: case NV_HOPPER_DMA_COPY_A_OFFSET_OUT_UPPER:
  case NV_HOPPER_DMA_COPY_A_OFFSET_OUT_LOWER: case NV_HOPPER_DMA_COPY_A_LINE_LENGTH_IN:
    return 0;
  case NV_HOPPER_DMA_COPY_A_LAUNCH_DMA: return nvm_copy_launch(r, subch, v);
  default: return nvm_fail(r, EINVAL, "unknown copy method (value 0x%x)", subch, method, v);
  }
}

static int nvm_method(nvm_run *r, uint32_t subch, uint32_t method, uint32_t v) {
  if (r->m->trace)
    fprintf(stderr, "[nv-mock] ch 0x%x subch %u class 0x%x method 0x%03x = 0x%08x\n", r->o->handle, subch,
            method < 0x100 ? r->o->cls : r->c->bound[subch], method, v);
  REG(subch, method) = v;
  if (method < 0x100) return nvm_host_method(r, subch, method, v);
  uint32_t cls = r->c->bound[subch];
  if (!cls) return nvm_fail(r, EINVAL, "no class bound on this subchannel (value 0x%x)", subch, method, v);
  if ((cls & 0xff) == 0xc0) return nvm_compute_method(r, subch, method, v);
  return nvm_copy_method(r, subch, method, v);
}

/* Runs the push buffer of one GPFIFO entry from c->resume_dw. EAGAIN: stalled (resume_dw = the group's header). */
static int nvm_run_pb(nvm_run *r, uint64_t va, uint32_t ndw) {
  const uint32_t *pb = (const uint32_t *)(uintptr_t)va;
  uint32_t i = r->c->resume_dw;
  while (i < ndw) {
    uint32_t hdr = pb[i], head = i++;
    r->pb_va = va + 4ull * head;
    if (hdr == 0) continue; /* NV_DMA_NOP */
    uint32_t op = (uint32_t)FIELD(hdr, NV_DMA_SEC_OP), count = (uint32_t)FIELD(hdr, NV_DMA_METHOD_COUNT);
    uint32_t subch = (uint32_t)FIELD(hdr, NV_DMA_METHOD_SUBCHANNEL), method = (uint32_t)FIELD(hdr, NV_DMA_METHOD_ADDRESS) * 4;
    int err = 0;
    if (op == NV_DMA_SEC_OP_IMMD_DATA_METHOD) {
      err = nvm_method(r, subch, method, (uint32_t)FIELD(hdr, NV_DMA_IMMD_DATA));
    } else if (op == NV_DMA_SEC_OP_INC_METHOD || op == NV_DMA_SEC_OP_NON_INC_METHOD || op == NV_DMA_SEC_OP_ONE_INC) {
      if (count > ndw - i) return nvm_fail(r, EINVAL, "method group of %u values runs past the push buffer", subch, method, count);
      for (uint32_t k = 0; k < count && !err; k++) {
        uint32_t mk = op == NV_DMA_SEC_OP_INC_METHOD ? method + 4 * k : op == NV_DMA_SEC_OP_ONE_INC && k ? method + 4 : method;
        if (mk >= 4 * NVM_METHODS) return nvm_fail(r, EINVAL, "method offset past 0x%x", subch, mk, 4 * NVM_METHODS);
        err = nvm_method(r, subch, mk, pb[i + k]);
      }
      i += count;
    } else {
      return nvm_fail(r, EINVAL, "push-buffer opcode %u not emulated", subch, method, op);
    }
    if (err == EAGAIN) r->c->resume_dw = head;
    if (err) return err;
  }
  r->c->resume_dw = 0;
  return 0;
}

static int nvm_run_channel(nv_mock *m, nvm_obj *o, char *detail) {
  nvm_channel *c = o->chan;
  nvm_run r = {m, o, c, 0, detail};
  if (c->stopped) return c->stalled = false, 0; /* a doorbell on a stopped channel does nothing */
  if (nvm_access(&r, c->userd_va, sizeof(AmpereAControlGPFifo), true)) return EFAULT;
  volatile AmpereAControlGPFifo *u = (volatile AmpereAControlGPFifo *)(uintptr_t)c->userd_va;
  uint32_t get = u->GPGet, put = __atomic_load_n(&u->GPPut, __ATOMIC_ACQUIRE);
  if (put >= c->entries || get >= c->entries)
    return snprintf(detail, KIF_DETAIL_MAX, "nv-mock: channel 0x%x GP_PUT %u / GP_GET %u past its %u entries",
                    o->handle, put, get, c->entries), EINVAL;
  while (get != put) {
    uint64_t ea = c->gpfifo_va + 8ull * get;
    if (nvm_access(&r, ea, 8, false)) return EFAULT;
    uint64_t e = *(const uint64_t *)(uintptr_t)ea;
    uint32_t e1 = (uint32_t)(e >> 32);
    uint64_t va = (uint64_t)(FIELD((uint32_t)e, NV_GP_ENTRY0_GET) << NV_GP_ENTRY0_GET_SHIFT) |
                  (uint64_t)FIELD(e1, NV_GP_ENTRY1_GET_HI) << 32;
    uint32_t ndw = (uint32_t)FIELD(e1, NV_GP_ENTRY1_LENGTH);
    r.pb_va = va;
    if (ndw && nvm_access(&r, va, 4ull * ndw, false)) return EFAULT;
    int err = ndw ? nvm_run_pb(&r, va, ndw) : 0;
    if (err == ECANCELED) return c->stalled = false, 0;
    c->stalled = err == EAGAIN;
    if (err) return err;
    get = (get + 1) % c->entries;
    u->GPGet = get;
  }
  return 0;
}

int nvm_doorbell(nv_mock *m, uint32_t token, char *detail) {
  nvm_obj *o = nvm_find_channel_by_token(m, token);
  if (!o) return snprintf(detail, KIF_DETAIL_MAX, "nv-mock: doorbell token 0x%x names no channel", token), EINVAL;
  int err = nvm_run_channel(m, o, detail);
  if (err && err != EAGAIN) return err;
  /* a release may have satisfied another channel's acquire: retry stalled channels until nothing moves */
  for (bool moved = true; moved;) {
    moved = false;
    for (int i = 0; i < m->nobjs; i++) {
      nvm_obj *s = &m->objs[i];
      if (s->kind != NVM_CHANNEL || !s->chan->stalled) continue;
      uint32_t before = s->chan->resume_dw, get = ((volatile AmpereAControlGPFifo *)(uintptr_t)s->chan->userd_va)->GPGet;
      err = nvm_run_channel(m, s, detail);
      if (err && err != EAGAIN) return err;
      moved |= !s->chan->stalled || s->chan->resume_dw != before ||
               ((volatile AmpereAControlGPFifo *)(uintptr_t)s->chan->userd_va)->GPGet != get;
    }
  }
  return 0;
}
