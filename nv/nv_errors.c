/* nv/: channel errors as hcq_status, naming the faulting kernel.
 *
 * RM posts a channel error (an MMU fault, Xid 31, ...) into the channels' error notifier, an NvNotification
 * (autogen NvNotification, from open-gpu-kernel-modules nvtypes.h; the Xid names from nverror.h). The notifier
 * carries no kernel, but robust-channel recovery stops the channel group where the fault happened: the timeline
 * semaphore holds the value of the last launch that completed. So on an error the push buffers still in the compute
 * channel are decoded for their launches (SEND_PCAS_A: the QMD address) and the timeline values they release; the
 * first launch whose value the timeline has not reached is the faulting one, and its QMD's program address names
 * the kernel among the loaded programs. Submits record nothing.
 *
 * After an error the channel group is stopped for good (RC tears it down): take_error says so, and every later
 * submit or wait on the device is HCQ_CODE_DEVICE_LOST until it is closed and opened again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autogen/nv_decode.h"
#include "autogen/nv_qmd.h"
#include "hcq/signal.h"
#include "nv/nv_hcq.h"
#include "nv/nv_internal.h"
#include "nv/nv_program.h"
#include "nv/nv_rt.h"

#define HDR(w, f) ((uint32_t)(((w) >> f##_SHIFT) & f##_MASK))

hcq_status nv_rt_name_program(nv_dev *d, const void *program, const char *name) {
  if (d->nprog_names == d->cap_prog_names) {
    uint32_t cap = d->cap_prog_names ? 2 * d->cap_prog_names : 16;
    nv_prog_name *n = realloc(d->prog_names, cap * sizeof *n);
    if (!n) return hcq_status_make(HCQ_CODE_NOMEM, "kernel %s: program name table", name);
    d->prog_names = n, d->cap_prog_names = cap;
  }
  nv_prog_name *e = &d->prog_names[d->nprog_names++];
  e->program = program;
  snprintf(e->name, sizeof e->name, "%s", name);
  return HCQ_OK;
}

void nv_rt_forget_program(nv_dev *d, const void *program) {
  for (uint32_t i = 0; i < d->nprog_names; i++)
    if (d->prog_names[i].program == program) {
      d->prog_names[i] = d->prog_names[--d->nprog_names];
      return;
    }
}

/* The kernel a QMD launches, by its program address (read from the QMD only here, on the error path). */
static const char *nv_qmd_kernel(const nv_dev *d, uint64_t qmd_va) {
  bool v5 = d->cls_compute >= BLACKWELL_COMPUTE_A, ours = false;
  uint64_t size_B = v5 ? NV_QMDV05_00_SIZE_B : NV_QMDV03_00_SIZE_B;
  /* only the device's own QMD slots are read (a raw submission may name any address) */
  for (uint32_t i = 0; i < d->nqmd_chunks && !ours; i++)
    ours = qmd_va >= d->qmd_chunks[i].va && qmd_va + size_B <= d->qmd_chunks[i].va + d->qmd_chunks[i].size_B;
  if (!ours) return NULL;
  const uint32_t *q = (const uint32_t *)(uintptr_t)qmd_va;
  uint64_t pa = v5
                    ? (nv_qmdv05_00_get_program_address_upper_shifted4(q) << 32 |
                       nv_qmdv05_00_get_program_address_lower_shifted4(q)) << 4
                    : nv_qmdv03_00_get_program_address_upper(q) << 32 | nv_qmdv03_00_get_program_address_lower(q);
  for (uint32_t i = 0; i < d->nprog_names; i++)
    if (((const nv_program *)d->prog_names[i].program)->prog_va == pa) return d->prog_names[i].name;
  return NULL;
}

/* A GPFIFO entry's push buffer address and length (nv_chan_submit writes them). */
static uint64_t nv_entry_va(uint64_t e) {
  return (e & (NV_GP_ENTRY0_GET_MASK << NV_GP_ENTRY0_GET_SHIFT)) | (uint64_t)HDR(e >> 32, NV_GP_ENTRY1_GET_HI) << 32;
}
static uint32_t nv_entry_words(uint64_t e) { return HDR(e >> 32, NV_GP_ENTRY1_LENGTH); }

/* How many of the compute channel's newest GPFIFO entries still hold their push buffer words: walking back from
 * GP_PUT, an entry ends before the next one in the command ring, except once where the command ring wrapped; past
 * that wrap, an entry is intact only above the newest words (the command ring restarted at 0 and grew to cmd_off). */
static uint32_t nv_intact_entries(const nv_chan *c) {
  uint64_t limit = c->nsubmits < c->entries - 1u ? c->nsubmits : c->entries - 1u, next_off = c->cmd.size_B;
  bool wrapped = false;
  uint32_t back = 0;
  for (; back < limit; back++) {
    uint64_t e = c->ring[(c->put + c->entries - 1u - back) % c->entries];
    uint64_t va = nv_entry_va(e), len_B = 4ull * nv_entry_words(e), off = va - c->cmd.va;
    if (va < c->cmd.va || off >= c->cmd.size_B || len_B > c->cmd.size_B - off) break; /* not one of ours */
    if (off + len_B > next_off) {
      if (wrapped) break;
      wrapped = true;
    }
    if (wrapped && off < c->cmd_off) break;
    next_off = off;
  }
  return back;
}

/* Which launch faulted, decoded at fault time from the push buffers still in the compute channel (as AMD decodes its
 * ring): the first launch (SEND_PCAS_A: the QMD address) followed by a release of the timeline that the timeline has
 * not reached. The timeline wraps only once all work is done, swapping with its shadow and restarting its values:
 * a release of the shadow, or a release smaller than the one before, ends an older round, whose launches all ran.
 * Only words our encoders write are decoded; others are skipped. Nothing of this runs at submit. */
static void nv_name_fault(hcq_device *dev, nv_dev *d, char *out, size_t cap) {
  const nv_chan *c = &d->compute;
  uint64_t tl_va = dev->timeline ? dev->timeline->va : 0, now = dev->timeline ? hcq_signal_value(dev->timeline) : 0;
  uint64_t shadow_va = dev->shadow_timeline ? dev->shadow_timeline->va : 0, pend_qmd = 0, qmd = 0, value = 0, last = 0;
  bool pending = false, found = false;
  unsigned pend_n = 0, later = 0; /* launches since the last release; behind the one found */
  for (uint32_t back = c->ring && c->cmd.cpu ? nv_intact_entries(c) : 0; back > 0; back--) {
    uint64_t e = c->ring[(c->put + c->entries - back) % c->entries];
    const uint32_t *w = (const uint32_t *)((const uint8_t *)c->cmd.cpu + (nv_entry_va(e) - c->cmd.va));
    size_t n = nv_entry_words(e);
    for (size_t i = 0; i < n;) {
      uint32_t hdr = w[i++], op = HDR(hdr, NV_DMA_SEC_OP), count = HDR(hdr, NV_DMA_METHOD_COUNT);
      uint32_t subch = HDR(hdr, NV_DMA_METHOD_SUBCHANNEL), method = HDR(hdr, NV_DMA_METHOD_ADDRESS) * 4;
      if (op != NV_DMA_SEC_OP_INC_METHOD && op != NV_DMA_SEC_OP_NON_INC_METHOD && op != NV_DMA_SEC_OP_ONE_INC) continue;
      if (count > n - i) break;
      const uint32_t *v = w + i;
      i += count;
      if (subch == NV_SUBCH_COMPUTE && method == NV_HOPPER_COMPUTE_A_SEND_PCAS_A && count >= 1) {
        if (!pending) pend_qmd = (uint64_t)v[0] << 8, pending = true, pend_n = 0;
        pend_n++;
        if (found) later++;
      } else if (subch == NV_SUBCH_HOST && method == NV_AMPERE_CHANNEL_GPFIFO_A_SEM_ADDR_LO && count == 5 &&
                 op == NV_DMA_SEC_OP_INC_METHOD && HDR(v[4], NV_SEM_EXECUTE_OPERATION) == NV_SEM_EXECUTE_OPERATION_RELEASE) {
        uint64_t va = (uint64_t)v[1] << 32 | v[0], x = (uint64_t)v[3] << 32 | v[2];
        if (va == shadow_va) found = pending = false; /* the other timeline's round: all done before the swap */
        if (va != tl_va) continue;
        if (x < last) found = false; /* the timeline wrapped back to this address: what came before is done */
        last = x;
        if (!found && pending && x > now) found = true, qmd = pend_qmd, value = x, later = pend_n - 1;
        pending = false;
      }
    }
  }
  if (found) {
    const char *name = nv_qmd_kernel(d, qmd);
    char behind[64] = "nothing was queued behind it";
    if (later) snprintf(behind, sizeof behind, "%u later launch%s never ran", later, later == 1 ? "" : "es");
    snprintf(out, cap, "kernel '%s' (the first launch the timeline has not passed: it releases %llu, the timeline "
             "holds %llu; %s)", name ? name : "(not a loaded program)", (unsigned long long)value, (unsigned long long)now, behind);
    return;
  }
  snprintf(out, cap, "a kernel not known (every launch still in the channel passed the timeline, which holds %llu: the "
           "fault came from work submitted outside the runtime's launches)", (unsigned long long)now);
}

hcq_status nv_rt_take_error(hcq_device *dev) {
  nv_dev *d = nv_hcq_dev(dev);
  volatile NvNotification *n = d->notifier.cpu;
  if (!n || !n->status) return HCQ_OK;
  uint32_t xid = n->info32;
  uint16_t info16 = n->info16;
  n->status = 0;
  char who[256];
  nv_name_fault(dev, d, who, sizeof who);
  const char *xname = nv_xid_name(xid);
  snprintf(d->stopped, sizeof d->stopped, "Xid %u %s on channel group 0x%x", xid, xname ? xname : "(unnamed)",
           d->chgroup);
  return hcq_status_make(HCQ_CODE_KERNEL_FAULT, "%s: %s faulted on compute channel 0x%x of channel group 0x%x: Xid %u "
                         "%s (info16 0x%x, from the channels' error notifier). Robust-channel recovery stopped the "
                         "channel group (compute 0x%x and copy 0x%x): nothing more runs on this device; close it and "
                         "open it again (its buffers and kernels go with it)", dev->name, who, d->compute.handle,
                         d->chgroup, xid, xname ? xname : "(not in nverror.h's channel list)", info16,
                         d->compute.handle, d->copy.handle);
}

hcq_status nv_rt_check_live(hcq_device *dev) {
  nv_dev *d = nv_hcq_dev(dev);
  if (!d->stopped[0]) return HCQ_OK;
  return hcq_status_make(HCQ_CODE_DEVICE_LOST, "%s was stopped by %s (reported before): close the device and open "
                         "it again", dev->name, d->stopped);
}

/* Waits in slices so that a posted channel error (which stops the work the wait is for) ends the wait early. */
hcq_status nv_rt_signal_wait(hcq_device *dev, const hcq_signal *sig, uint64_t target, uint32_t timeout_ms) {
  HCQ_TRY(nv_rt_check_live(dev));
  volatile NvNotification *n = nv_hcq_dev(dev)->notifier.cpu;
  for (uint32_t waited = 0;;) {
    uint32_t slice = timeout_ms - waited < 20 ? timeout_ms - waited : 20;
    hcq_status st = hcq_signal_wait(sig, target, slice);
    if (!st) return HCQ_OK;
    if (n && n->status) {
      hcq_status_free(st);
      return nv_rt_take_error(dev);
    }
    waited += slice;
    if (waited >= timeout_ms || hcq_status_code(st) != HCQ_CODE_TIMEOUT) return st;
    hcq_status_free(st);
  }
}
