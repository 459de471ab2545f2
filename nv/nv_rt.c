/* nv/: the NV device's part of the runtime seams (hcq_device_ops info / program_load / program_free / take_error /
 * destroy) and its registry entry ("nv", "nv:N"; nv_rt_count from the card list).
 *
 * program_load: the binary of a ptx target is a cubin from ptxas followed by the PTX it came from
 * (compiler/toolchain.h, CC_PTX_TRAILER_MAGIC). The cubin is read by nv_cubin (SM checked against the device, the
 * parameter offsets of .nv.info replace the default layout, registers, shared and local memory go into the QMD); the
 * upload is [PTX][record][.text] as nv/nv_image.h describes, so a GPU without SASS (the mock) finds the PTX below
 * the program address the QMD names.
 *
 * take_error / signal_wait: nv_errors.c. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/toolchain.h"
#include "nv/nv_cubin.h"
#include "nv/nv_hcq.h"
#include "nv/nv_image.h"
#include "nv/nv_internal.h"
#include "nv/nv_program.h"
#include "nv/nv_rt.h"

static unsigned nv_sm_of(const char *target) {
  return strncmp(target, "ptx:sm_", 7) == 0 ? (unsigned)strtoul(target + 7, NULL, 10) : 0;
}

hcq_status nv_rt_info(hcq_device *dev, hcq_device_info *out) {
  nv_dev *d = nv_hcq_dev(dev);
  memset(out, 0, sizeof *out);
  snprintf(out->name, sizeof out->name, "%s", dev->name);
  snprintf(out->backend, sizeof out->backend, "nv");
  snprintf(out->target, sizeof out->target, "%s", nv_dev_target(d));
  snprintf(out->arch, sizeof out->arch, "%s", nv_dev_target(d) + 4);
  out->is_mock = kif_route(d->k, "/dev/nvidiactl") != NULL;
  out->mem_device_B = nv_dev_mem_B(d, false);
  out->features = HCQ_FEATURE_COPY_QUEUE | HCQ_FEATURE_LOCAL_SIZE | HCQ_FEATURE_TIMESTAMPS;
  /* no HCQ_FEATURE_KERNEL_FAULTS: a fault is reported naming the kernel, but robust-channel recovery stops the
   * channel group (the mock does the same); the device must be reopened (nv_errors.c) */
  /* grid limits of compute capability 9.0 (CUDA C Programming Guide, "Technical Specifications") */
  out->max_global[0] = 0x7fffffffu, out->max_global[1] = out->max_global[2] = 65535;
  return HCQ_OK;
}

/* The upload: [PTX][pad][record][.text], the code 256-aligned. */
static hcq_status nv_build_image(const hcq_program *prog, const nv_cubin *c, const char *ptx, size_t ptx_B,
                                 uint8_t **out, size_t *out_B, uint64_t *text_off) {
  size_t ptx_pad = (ptx_B + 255) & ~(size_t)255, size = ptx_pad + NV_IMAGE_RECORD_B + c->code_size_B;
  uint8_t *img = calloc(1, size);
  if (!img) return hcq_status_make(HCQ_CODE_NOMEM, "kernel %s: image of %zu bytes", prog->name, size);
  if (ptx) {
    memcpy(img, ptx, ptx_B);
    nv_image_record r = {.ptx_back_B = (uint32_t)(ptx_pad + NV_IMAGE_RECORD_B), .ptx_size_B = (uint32_t)ptx_B,
                         .param_base_B = c->param_cbank_offset_B, .nparams = (uint32_t)c->nparams};
    memcpy(r.magic, NV_IMAGE_MAGIC, 8);
    for (size_t i = 0; i < c->nparams; i++) r.param_offset_B[i] = c->params[i].offset_B;
    memcpy(img + ptx_pad, &r, sizeof r);
  }
  memcpy(img + ptx_pad + NV_IMAGE_RECORD_B, c->code, c->code_size_B);
  *out = img, *out_B = size, *text_off = ptx_pad + NV_IMAGE_RECORD_B;
  return HCQ_OK;
}

/* The cubin's parameter table over the program's parameters (buffers then variables, the PTX .param order). */
static hcq_status nv_apply_layout(hcq_program *prog, const nv_cubin *c) {
  if (c->nparams != prog->nparams || c->nparams > NV_IMAGE_MAX_PARAMS)
    return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: the cubin has %zu parameters, the program %zu (at most %u)",
                           prog->name, c->nparams, prog->nparams, NV_IMAGE_MAX_PARAMS);
  HCQ_TRY(hcq_program_layout(prog, c->param_cbank_offset_B));
  for (size_t i = 0; i < c->nparams; i++) {
    uint32_t want = prog->params[i].kind == HCQ_PARAM_BUFFER ? 8 : 4;
    if (c->params[i].size_B != want)
      return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: cubin parameter %zu is %u bytes, the program's %u", prog->name,
                             i, c->params[i].size_B, want);
    prog->params[i].offset_B = c->param_cbank_offset_B + c->params[i].offset_B;
    prog->params[i].size_B = want;
  }
  prog->kernarg_prefix_B = c->param_cbank_offset_B;
  prog->kernarg_size_B = c->param_cbank_offset_B + c->param_size_B;
  return hcq_program_check(prog);
}

hcq_status nv_rt_program_load(hcq_device *dev, hcq_program *prog, uint64_t *out_handle) {
  nv_dev *d = nv_hcq_dev(dev);
  unsigned sm = nv_sm_of(nv_dev_target(d));
  if (strcmp(prog->target, nv_dev_target(d)) != 0)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel %s is compiled for %s; %s runs %s", prog->name, prog->target,
                           dev->name, nv_dev_target(d));
  if (!prog->binary || !prog->binary_size_B) return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: no binary", prog->name);
  size_t cubin_B, ptx_B;
  const char *ptx;
  cc_ptx_split(prog->binary, prog->binary_size_B, &cubin_B, &ptx, &ptx_B);
  nv_cubin c;
  HCQ_TRY(hcq_status_annotate(nv_cubin_parse(prog->binary, cubin_B, sm, prog->symbol, &c), "kernel %s", prog->name));
  hcq_status st = nv_apply_layout(prog, &c);
  /* local memory: the cubin's stack plus the 0x240 bytes the reference adds (ops_nv.py: EIATTR_MIN_STACK_SIZE +
   * 0x240); a kernel without a stack or frame gets none */
  uint32_t stack_B = c.min_stack_size_B > c.frame_size_B ? c.min_stack_size_B : c.frame_size_B;
  uint32_t local_B = stack_B ? stack_B + 0x240 : 0;
  uint8_t *img = NULL;
  size_t img_B = 0;
  uint64_t text_off = 0;
  if (!st) st = nv_build_image(prog, &c, ptx, ptx_B, &img, &img_B, &text_off);
  nv_program *p = NULL;
  if (!st) {
    nv_program_info info = {.text_offset_B = text_off, .text_size_B = c.code_size_B, .regs = c.regcount,
                            .shared_B = (uint32_t)c.shared_B, .cbuf0_size_B = c.cbank0_size_B,
                            .local_B = local_B};
    st = hcq_status_annotate(nv_program_load(d, img, img_B, &info, &p), "kernel %s", prog->name);
  }
  if (!st) {
    prog->registers = (int32_t)c.regcount;
    prog->shared_B = (uint32_t)c.shared_B;
    prog->private_B = local_B;
    st = nv_rt_name_program(d, p, prog->name);
    if (st) nv_program_free(d, p);
    else *out_handle = (uint64_t)(uintptr_t)p;
  }
  free(img);
  nv_cubin_free(&c);
  return st;
}

void nv_rt_program_free(hcq_device *dev, uint64_t handle) {
  nv_rt_forget_program(nv_hcq_dev(dev), (const void *)(uintptr_t)handle);
  nv_program_free(nv_hcq_dev(dev), (nv_program *)(uintptr_t)handle);
}

void nv_rt_destroy(hcq_device *dev) { nv_hcq_close(dev); }

hcq_status nv_rt_open(unsigned index, hcq_device **out) {
  return nv_hcq_open(kif_default(), (int)index, out);
}

hcq_status nv_rt_count(unsigned *out_n) {
  *out_n = 0;
  kif *k = kif_default();
  if (!kif_exists(k, "/dev/nvidiactl"))
    return hcq_status_make(HCQ_CODE_NOT_FOUND, "no /dev/nvidiactl: load the NVIDIA kernel module (open or "
                           "proprietary, 570-590 series) or run with HCQ_MOCK=nv for the emulated GPU");
  int fd;
  HCQ_TRY(hcq_status_annotate(kif_open(k, "/dev/nvidiactl", O_RDWR | O_CLOEXEC, &fd), "NV open"));
  nv_ioctl_card_info_t *cards = calloc(64, sizeof *cards);
  hcq_status st = cards ? kif_ioctl(k, fd, NV_ESC_CARD_INFO, cards) : hcq_status_make(HCQ_CODE_NOMEM, "NV card info");
  for (int i = 0; !st && i < 64; i++) *out_n += cards[i].valid != 0;
  free(cards);
  hcq_status_free(kif_close(k, fd));
  return hcq_status_annotate(st, "NV CARD_INFO");
}
