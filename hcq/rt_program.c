/* Programs for the runtime layer: compiled from kernel text for a device's target, or read from an AOT image. */
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "compiler/kernel_text.h"
#include "cpu/cpu_image.h"
#include "cpu/cpu_reloc.h"
#include "hcq/rt_private.h"

struct hcq_rt_program {
  hcq_program desc;
  uop_ctx *ctx;     /* compiled: the compile's nodes */
  cc_program *cc;   /* compiled: owns the binary */
  uint8_t *image;   /* image: owns the bytes the binary points into */
};

hcq_status hcq_rt_program_compile(hcq_rt_device *rd, const char *text, const char *opts, hcq_rt_program **out) {
  if (!rd || !text || !out) return hcq_status_make(HCQ_CODE_INVALID, "hcq_rt_program_compile: NULL argument");
  *out = NULL;
  hcq_rt_program *p = calloc(1, sizeof *p);
  if (!p) return hcq_status_make(HCQ_CODE_NOMEM, "program");
  cc_target t;
  cc_opt *list = NULL;
  cc_options o = {0};
  const uop *sink;
  hcq_status st = cc_target_get(rd->info.target[0] ? rd->info.target : "c", 0, &t);
  if (!st && opts) {
    o.noopt = !*opts;
    if (*opts) st = cc_opts_parse(opts, &list, &o.nopts);
    o.opts = list;
  }
  if (!st) st = uop_ctx_create(&p->ctx);
  if (!st) st = cc_kernel_parse(p->ctx, text, strlen(text), "<kernel text>", &sink);
  if (!st) st = cc_compile_source(p->ctx, sink, &t, &o, &p->cc);
  if (!st) st = cc_compile_binary(&t, p->cc);
  if (!st) st = cc_program_describe(p->cc, &t, &p->desc);
  free(list);
  if (st) {
    hcq_rt_program_free(p);
    return st;
  }
  *out = p;
  return HCQ_OK;
}

hcq_status hcq_rt_program_from_image(const void *bytes, size_t size_B, hcq_rt_program **out) {
  if (!bytes || !out) return hcq_status_make(HCQ_CODE_INVALID, "hcq_rt_program_from_image: NULL argument");
  *out = NULL;
  hcq_rt_program *p = calloc(1, sizeof *p);
  uint8_t *copy = malloc(size_B ? size_B : 1);
  if (!p || !copy) {
    free(p);
    free(copy);
    return hcq_status_make(HCQ_CODE_NOMEM, "kernel image of %zu bytes", size_B);
  }
  memcpy(copy, bytes, size_B);
  p->image = copy;
  cpu_image img;
  hcq_status st = cpu_image_parse(copy, size_B, &img);
  if (!st) st = cpu_image_check_host(&img, cpu_host_machine());
  if (!st) p->desc = img.prog;
  if (st) {
    hcq_rt_program_free(p);
    return st;
  }
  *out = p;
  return HCQ_OK;
}

const hcq_program *hcq_rt_program_desc(const hcq_rt_program *p) { return p ? &p->desc : NULL; }

void hcq_rt_program_free(hcq_rt_program *p) {
  if (!p) return;
  cc_program_free(p->cc);
  uop_ctx_destroy(p->ctx);
  free(p->image);
  free(p);
}
