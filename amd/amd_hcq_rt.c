/* The AMD device on the runtime seams (see amd_hcq_rt.h). Programs: an HSACO code object (amd/amd_code_object.h)
 * whose loadable segments up to the end of the one holding the kernel's code are copied into GPU memory at their
 * relative addresses (as ops_amd.py's AMDProgram copies the ELF image); the handle is the kernel descriptor's GPU
 * address, which the encoder turns into the dispatch. */
#include "amd/amd_hcq_rt.h"

#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amd/amd_code_object.h"
#include "amd/amd_dispatch.h"
#include "autogen/amd_pm4.h"
#include "autogen/kfd.h"
#include "elf/elf.h"
#include "hcq/signal.h"

typedef struct amd_hcq_prog {
  struct amd_hcq_prog *next;
  amd_buf buf;
  uint64_t kd_va, code_va;
  char name[HCQ_PROGRAM_NAME_B];
} amd_hcq_prog;

hcq_status amd_hcq_op_info(hcq_device *dev, hcq_device_info *out) {
  amd_hcq *h = dev->impl;
  memset(out, 0, sizeof *out);
  snprintf(out->name, sizeof out->name, "%s", dev->name);
  snprintf(out->backend, sizeof out->backend, "amd");
  snprintf(out->arch, sizeof out->arch, "%s", h->amd->arch->name);
  snprintf(out->target, sizeof out->target, "amdgpu:%s", h->amd->arch->name);
  out->mem_device_B = h->amd->node.vram_size_B;
  out->features = HCQ_FEATURE_COPY_QUEUE | HCQ_FEATURE_LOCAL_SIZE | HCQ_FEATURE_TIMESTAMPS;
  out->is_mock = kif_route(h->amd->k, "/dev/kfd") != NULL; /* an emulated KFD claims the path */
  /* a fault is reported once and the compute queue restarted past the faulting dispatch (fault_check); real KFD
   * does not behave like the mock there (amd/README.md), so only the mock claims it */
  if (out->is_mock) out->features |= HCQ_FEATURE_KERNEL_FAULTS;
  for (int i = 0; i < 3; i++) out->max_global[i] = INT32_MAX; /* DISPATCH_DIRECT dims are 32-bit */
  return HCQ_OK;
}

/* The kernel-argument layout the metadata states: explicit arguments in order (buffers then variables, as the
 * compiler declares them), hidden ones ignored. A mismatch with the program's parameters is an error. */
static hcq_status apply_metadata(hcq_program *prog, const amd_kernel *k) {
  size_t n = 0;
  for (size_t i = 0; i < k->nargs; i++) {
    const amd_kernel_arg *a = &k->args[i];
    if (!strncmp(a->value_kind, "hidden_", 7)) continue;
    if (n == prog->nparams)
      return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: the code object declares more than %zu arguments", prog->name,
                             prog->nparams);
    hcq_param *p = &prog->params[n++];
    bool buf = p->kind == HCQ_PARAM_BUFFER;
    if (strcmp(a->value_kind, buf ? "global_buffer" : "by_value") || a->size != (buf ? 8u : 4u))
      return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: argument %zu is %s of %u bytes in the code object, the "
                             "program has a %s", prog->name, n - 1, a->value_kind, a->size, buf ? "buffer" : "variable");
    p->offset_B = a->offset, p->size_B = a->size;
  }
  if (n != prog->nparams)
    return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: the code object declares %zu arguments, the program %zu",
                           prog->name, n, prog->nparams);
  prog->kernarg_prefix_B = 0;
  prog->kernarg_size_B = k->kernarg_segment_size; /* + the dispatch packet after it, as ops_amd.py sizes kernargs */
  if (k->kd.kernel_code_properties & AMD_KCP_DISPATCH_PTR)
    prog->kernarg_size_B = amd_dispatch_packet_offset_B(k->kernarg_segment_size) + AMD_DISPATCH_PACKET_B;
  return HCQ_OK;
}

static hcq_status check_kernel(amd_hcq *h, const hcq_program *prog, const amd_kernel *k) {
  amd_device *d = h->amd;
  unsigned wave = d->arch->gfx9 ? 64 : 32;
  if (k->wavefront_size && k->wavefront_size != wave)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel %s: wave%u code on %s (wave%u)", prog->name,
                           k->wavefront_size, d->name, wave);
  uint32_t priv = k->kd.private_segment_fixed_size;
  if (k->private_segment_fixed_size != priv)
    return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: the metadata says %u bytes of scratch per lane, the kernel "
                           "descriptor %u", prog->name, k->private_segment_fixed_size, priv);
  if (priv) HCQ_TRY(amd_scratch_ensure(h->amd, &h->scratch_ring, priv)); /* fail at load, not at launch */
  HCQ_TRY(hcq_status_annotate(amd_user_sgprs(d, k->kd.kernel_code_properties, k->user_sgpr_count, NULL, NULL, NULL),
                              "kernel %s", prog->name));
  if (k->group_segment_fixed_size > d->node.lds_size_in_kb * 1024u)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel %s: %u bytes of LDS, %s has %u KiB", prog->name,
                           k->group_segment_fixed_size, d->name, d->node.lds_size_in_kb);
  return HCQ_OK;
}

/* Copy the PT_LOAD segments below the end of the one holding `entry` into one GPU allocation. */
static hcq_status load_image(amd_hcq *h, const hcq_program *prog, uint64_t entry, amd_buf *out, uint64_t *out_base) {
  elf_file f;
  HCQ_TRY(elf_open(&f, prog->binary, prog->binary_size_B));
  uint64_t lo = UINT64_MAX, end = 0;
  for (size_t i = 0; i < f.phnum; i++) {
    Elf64_Phdr ph;
    const uint8_t *data;
    HCQ_TRY(elf_segment_get(&f, i, &ph, &data));
    if (ph.p_type != PT_LOAD) continue;
    if (ph.p_vaddr < lo) lo = ph.p_vaddr;
    if (entry >= ph.p_vaddr && entry - ph.p_vaddr < ph.p_memsz) end = ph.p_vaddr + ph.p_memsz;
  }
  if (!end || lo > entry || end - lo > (1u << 30))
    return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: its code at 0x%" PRIx64 " lies in no loadable segment",
                           prog->name, entry);
  HCQ_TRY(amd_mem_alloc(h->amd, (end - lo + 4095) & ~(uint64_t)4095, AMD_MEM_VRAM_HOST, NULL, out));
  uint8_t *base = (uint8_t *)(uintptr_t)out->va;
  memset(base, 0, out->size_B);
  for (size_t i = 0; i < f.phnum; i++) {
    Elf64_Phdr ph;
    const uint8_t *data;
    hcq_status st = elf_segment_get(&f, i, &ph, &data);
    if (st) {
      hcq_status_free(amd_mem_free(h->amd, out));
      return st;
    }
    if (ph.p_type != PT_LOAD || ph.p_vaddr >= end) continue;
    uint64_t n = ph.p_filesz < end - ph.p_vaddr ? ph.p_filesz : end - ph.p_vaddr;
    if (data && n) memcpy(base + (ph.p_vaddr - lo), data, n);
  }
  *out_base = lo;
  return HCQ_OK;
}

hcq_status amd_hcq_op_program_load(hcq_device *dev, hcq_program *prog, uint64_t *out_handle) {
  amd_hcq *h = dev->impl;
  char want[48];
  snprintf(want, sizeof want, "amdgpu:%s", h->amd->arch->name);
  if (strcmp(prog->target, want) != 0)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel %s is compiled for %s; %s runs %s", prog->name, prog->target,
                           dev->name, want);
  amd_code_object co;
  HCQ_TRY(hcq_status_annotate(amd_code_object_parse(prog->binary, prog->binary_size_B, h->amd->arch->name, &co),
                              "kernel %s", prog->name));
  const amd_kernel *k;
  hcq_status st = amd_code_object_kernel(&co, prog->symbol, &k);
  if (!st) st = check_kernel(h, prog, k);
  if (!st) st = apply_metadata(prog, k);
  amd_hcq_prog *p = NULL;
  uint64_t lo = 0;
  if (!st && !(p = calloc(1, sizeof *p))) st = hcq_status_make(HCQ_CODE_NOMEM, "kernel %s", prog->name);
  if (!st) st = load_image(h, prog, k->entry_vaddr, &p->buf, &lo);
  if (st) {
    free(p);
    amd_code_object_free(&co);
    return hcq_status_annotate(st, "loading %s on %s", prog->name, dev->name);
  }
  p->kd_va = p->buf.va + (k->kd_vaddr - lo);
  p->code_va = p->buf.va + (k->entry_vaddr - lo);
  prog->shared_B = k->group_segment_fixed_size;
  prog->registers = (int32_t)k->vgpr_count;
  amd_code_object_free(&co);
  snprintf(p->name, sizeof p->name, "%s", prog->name);
  p->next = h->progs;
  h->progs = p;
  *out_handle = p->kd_va;
  return HCQ_OK;
}

void amd_hcq_op_program_free(hcq_device *dev, uint64_t handle) {
  amd_hcq *h = dev->impl;
  for (amd_hcq_prog **pp = &h->progs; *pp; pp = &(*pp)->next) {
    if ((*pp)->kd_va != handle) continue;
    amd_hcq_prog *p = *pp;
    *pp = p->next;
    hcq_status_free(amd_mem_free(h->amd, &p->buf));
    free(p);
    return;
  }
}

const char *amd_hcq_program_name(amd_hcq *h, uint64_t kd_va) {
  for (amd_hcq_prog *p = h->progs; p; p = p->next)
    if (p->kd_va == kd_va) return p->name;
  return "";
}

void amd_hcq_programs_free(amd_hcq *h) {
  while (h->progs) amd_hcq_op_program_free(&h->dev, h->progs->kd_va);
}

static const char *kernel_name(amd_hcq *h, uint64_t code_va, char *buf, size_t n) {
  for (amd_hcq_prog *p = h->progs; p; p = p->next)
    if (p->code_va == code_va) return p->name;
  snprintf(buf, n, "at code address 0x%" PRIx64, code_va);
  return buf;
}

/* A dispatch found in the compute ring: its program and where its DISPATCH_DIRECT ends (ring position, dwords). */
typedef struct amd_hcq_dispatch {
  uint64_t code_va, ring_end;
} amd_hcq_dispatch;

/* The dispatch the CP stopped in, from the words still in the ring (the last AMD_HCQ_SUBMIT_LOG submits, packets
 * decoded from a submit's start): the first one followed by a 64-bit signal of the timeline that the timeline has not
 * reached (returns 1); with no such signal, the first one whose packets end past rptr (2). 0 when none is found. */
static int faulting_dispatch(amd_hcq *h, uint64_t rptr, amd_hcq_dispatch *out) {
  amd_ring *r = &h->amd->compute;
  uint64_t ring_dw = r->size_B / 4, at = r->put, pgm = 0;
  for (uint64_t i = h->nsubmits > AMD_HCQ_SUBMIT_LOG ? h->nsubmits - AMD_HCQ_SUBMIT_LOG : 0; i < h->nsubmits; i++) {
    uint64_t s = h->submit_start[i % AMD_HCQ_SUBMIT_LOG];
    if (s <= r->put && r->put - s <= ring_dw && s < at) at = s; /* the oldest start whose words are not overwritten */
  }
  const hcq_signal *tl = h->dev.timeline;
  amd_hcq_dispatch first = {0}, late = {0};
  bool pending = false, have_late = false;
#define RW(k) r->words[(at + (k)) & (ring_dw - 1)]
  while (at < r->put) {
    uint32_t hd = RW(0), op = (hd >> AMD_PM4_OPCODE_SHIFT) & AMD_PM4_OPCODE_MASK;
    uint64_t len = ((hd >> AMD_PM4_COUNT_SHIFT) & AMD_PM4_COUNT_MASK) + 2u;
    if (hd >> 30 != 3 || len > r->put - at) break; /* not a packet this encoder wrote */
    if (op == AMD_PM4_SET_SH_REG && len >= 4 && AMD_PM4_SET_SH_REG_START + RW(1) == h->pgm_lo_reg)
      pgm = ((uint64_t)RW(3) << 32 | RW(2)) << 8;
    else if (op == AMD_PM4_DISPATCH_DIRECT) {
      amd_hcq_dispatch x = {.code_va = pgm, .ring_end = at + len};
      if (!pending) first = x, pending = true;
      if (!have_late && x.ring_end > rptr) late = x, have_late = true;
    } else if (op == AMD_PM4_RELEASE_MEM && len == 8 &&
               (RW(2) >> AMD_PM4_RELEASE_MEM_DATA_SEL_SHIFT) == AMD_PM4_RELEASE_MEM_DATA_SEL_SEND_64_BIT_DATA) {
      uint64_t va = (uint64_t)RW(4) << 32 | RW(3), value = (uint64_t)RW(6) << 32 | RW(5);
      if (pending && tl && va == tl->va && value > hcq_signal_value(tl)) return *out = first, 1;
      pending = false;
    }
    at += len;
  }
#undef RW
  *out = late;
  return have_late ? 2 : 0;
}

/* A GPU memory fault KFD reported on the memory-exception event (non-blocking check) becomes h->fault. A compute
 * queue stopped behind it is restarted past the faulting dispatch (amd_ring_restart), so the work queued after it
 * runs and the device lives on; the faulting kernel's writes before the fault stay as they are. */
static hcq_status fault_check(amd_hcq *h) {
  amd_device *d = h->amd;
  struct amd_kfd_event_data ev = {.event_id = d->fault_event_id};
  struct amd_kfd_ioctl_wait_events_args w = {.events_ptr = (uint64_t)(uintptr_t)&ev, .num_events = 1, .timeout = 0};
  hcq_status st = kif_ioctl(d->k, d->kfd_fd, AMD_KFD_IOC_WAIT_EVENTS, &w);
  if (st) return hcq_status_annotate(st, "amd %s: polling the memory-fault event", d->name);
  if (w.wait_result != AMD_KFD_IOC_WAIT_RESULT_COMPLETE) return HCQ_OK;
  struct amd_kfd_ioctl_reset_event_args re = {.event_id = d->fault_event_id}; /* created without auto-reset */
  HCQ_TRY(hcq_status_annotate(kif_ioctl(d->k, d->kfd_fd, AMD_KFD_IOC_RESET_EVENT, &re),
                              "amd %s: resetting the memory-fault event", d->name));
  amd_ring *r = &d->compute;
  uint64_t rptr = r->rptr ? __atomic_load_n(r->rptr, __ATOMIC_ACQUIRE) : r->put; /* no ring: a restart failed */
  amd_hcq_dispatch x = {0};
  int how = rptr != r->put && r->words ? faulting_dispatch(h, rptr, &x) : 0;
  char buf[64], state[160];
  const char *kernel = how ? kernel_name(h, x.code_va, buf, sizeof buf) : h->last_kernel[0] ? h->last_kernel : "unknown";
  uint32_t old_id = r->queue_id, again = 0;
  hcq_status rs = HCQ_OK;
  if (how) {
    rs = amd_ring_restart(d, r, x.ring_end > rptr ? x.ring_end : rptr, &again);
    h->nsubmits = 0; /* the resubmitted words start the new ring at a packet boundary */
    if (!rs) h->submit_start[h->nsubmits++] = 0;
  }
  if (rs)
    snprintf(state, sizeof state, "restarting the compute queue failed (%s): the device must be reopened",
             hcq_status_message(rs));
  else if (how)
    snprintf(state, sizeof state, "the compute queue was recreated as queue %u and the %u dwords queued behind the "
             "faulting dispatch resubmitted: the device keeps working", r->queue_id, again);
  else if (rptr != r->put)
    snprintf(state, sizeof state, "the compute queue is stopped at rptr 0x%" PRIx64 " in words hcq cannot attribute: "
             "the device must be reopened", rptr);
  else
    snprintf(state, sizeof state, "no compute work was stopped by it (a copy queue stopped by it stays stopped until "
             "the device is reopened)");
  hcq_status_free(rs);
  hcq_status f = hcq_status_make(HCQ_CODE_KERNEL_FAULT, "%s: GPU page fault at 0x%" PRIx64 " on the compute queue %u "
                                 "in kernel %s (%s); %s", h->dev.name, (uint64_t)ev.memory_exception_data.va, old_id,
                                 kernel, how == 1 ? "the first dispatch whose timeline value was not reached"
                                         : how ? "the first dispatch not passed by the queue's read pointer"
                                               : "the last one queued",
                                 state);
  if (h->fault) hcq_status_free(f); /* the first one is reported */
  else h->fault = f;
  return HCQ_OK;
}

static hcq_status take_fault(amd_hcq *h) {
  hcq_status f = h->fault;
  h->fault = HCQ_OK;
  return f;
}

hcq_status amd_hcq_op_signal_wait(hcq_device *dev, const hcq_signal *sig, uint64_t target, uint32_t timeout_ms) {
  amd_hcq *h = dev->impl;
  /* wait in slices so that a fault (the queue restarted, the wait goes on) or a stopped queue is seen early */
  hcq_status st = HCQ_OK;
  for (uint32_t waited = 0;;) {
    uint32_t slice = timeout_ms - waited < 20 ? timeout_ms - waited : 20;
    st = hcq_signal_wait(sig, target, slice);
    if (!st) return take_fault(h);
    hcq_status chk = fault_check(h);
    if (chk) {
      hcq_status_free(st);
      return chk;
    }
    waited += slice;
    if (waited >= timeout_ms || hcq_status_code(st) != HCQ_CODE_TIMEOUT) break;
    hcq_status_free(st);
  }
  if (h->fault) {
    hcq_status_free(st);
    return hcq_status_annotate(take_fault(h), "and signal 0x%" PRIx64 " did not reach %" PRIu64 " within %u ms after it",
                               sig->va, target, timeout_ms);
  }
  amd_ring *r = &h->amd->compute;
  if (r->rptr && *r->rptr != *r->wptr) {
    hcq_status_free(st);
    /* blocked on a wait or hung: KFD does not say which, so this is a timeout with the queue's state */
    return hcq_status_make(HCQ_CODE_TIMEOUT, "%s: waiting %u ms for signal 0x%" PRIx64 " to reach %" PRIu64
                           " (it holds %" PRIu64 "): the compute queue %u has not passed rptr 0x%" PRIx64 " of wptr 0x%"
                           PRIx64 " dwords (blocked on a wait or hung; last kernel %s)", dev->name, timeout_ms,
                           sig->va, target, (uint64_t)sig->mem->value, r->queue_id, (uint64_t)*r->rptr,
                           (uint64_t)*r->wptr, h->last_kernel[0] ? h->last_kernel : "none");
  }
  return st;
}

hcq_status amd_hcq_op_take_error(hcq_device *dev) {
  amd_hcq *h = dev->impl;
  HCQ_TRY(fault_check(h));
  return take_fault(h);
}

void amd_hcq_op_destroy(hcq_device *dev) { amd_hcq_close(dev->impl); }

hcq_status amd_rt_open(unsigned index, hcq_device **out) {
  amd_hcq *h;
  HCQ_TRY(amd_hcq_open(kif_default(), index, NULL, &h));
  *out = &h->dev;
  return HCQ_OK;
}

hcq_status amd_rt_count(unsigned *out_n) {
  *out_n = 0;
  kif *k = kif_default();
  int fd;
  HCQ_TRY(amd_device_open_kfd(k, &fd));
  hcq_status_free(kif_close(k, fd));
  amd_node nodes[AMD_MAX_GPUS];
  HCQ_TRY(amd_topology_list(k, nodes, AMD_MAX_GPUS, out_n));
  return HCQ_OK;
}
