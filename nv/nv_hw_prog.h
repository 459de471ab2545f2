/* Programs for `make nv-hw-check` on a machine that may lack ptxas: `nv_hw_check --prepare DIR` (here, with ptxas)
 * writes each kernel's binary (cubin + PTX trailer, compiler/toolchain.h) to DIR/<key>.bin; on the GPU machine the
 * kernel is compiled to PTX again (no external tool) and described, and the prepared binary is used when its PTX
 * trailer equals the fresh PTX (a stale one is refused by name). Without a prepared file, ptxas is used if present. */
#ifndef HCQ_NV_HW_PROG_H
#define HCQ_NV_HW_PROG_H

#include "compiler/compiler.h"
#include "compiler/kernel_text.h"
#include "compiler/toolchain.h"
#include "hcq/program.h"

typedef struct nv_hw_prog {
  uop_ctx *ctx;
  const uop *sink;
  cc_program *cc;
  uint8_t *bytes; /* the prepared binary (owned) */
  hcq_program desc;
} nv_hw_prog;

/* opts: NULL heuristic, "" none. dir NULL: compile with ptxas. prepare: compile with ptxas and write DIR/key.bin. */
static inline hcq_status nv_hw_prog_make(const char *target, const char *text, const char *opts, const char *dir,
                                         const char *key, bool prepare, nv_hw_prog *out) {
  memset(out, 0, sizeof *out);
  cc_target t;
  HCQ_TRY(cc_target_get(target, 0, &t));
  cc_opt *list = NULL;
  cc_options o = {0};
  hcq_status st = HCQ_OK;
  if (opts) {
    o.noopt = !*opts;
    if (*opts) st = cc_opts_parse(opts, &list, &o.nopts);
    o.opts = list;
  }
  if (!st) st = uop_ctx_create(&out->ctx);
  if (!st) st = cc_kernel_parse(out->ctx, text, strlen(text), key, &out->sink);
  if (!st) st = cc_compile_source(out->ctx, out->sink, &t, &o, &out->cc);
  free(list);
  char path[512];
  snprintf(path, sizeof path, "%s/%s.bin", dir ? dir : ".", key);
  FILE *f = !st && dir && !prepare ? fopen(path, "rb") : NULL;
  if (f) { /* a prepared binary: its PTX must be this compile's */
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    out->bytes = n > 0 ? malloc((size_t)n) : NULL;
    if (!out->bytes || fread(out->bytes, 1, (size_t)n, f) != (size_t)n) st = hcq_status_make(HCQ_CODE_IO, "reading %s", path);
    fclose(f);
    const char *ptx = NULL;
    size_t cubin_B, ptx_B;
    if (!st) cc_ptx_split(out->bytes, (size_t)n, &cubin_B, &ptx, &ptx_B);
    if (!st && (!ptx || ptx_B != strlen(out->cc->source) || memcmp(ptx, out->cc->source, ptx_B)))
      st = hcq_status_make(HCQ_CODE_INVALID, "%s is stale (its PTX is not this build's): run nv_hw_check --prepare "
                           "again where ptxas is", path);
    if (!st) st = cc_program_describe(out->cc, &t, &out->desc);
    if (!st) out->desc.binary = out->bytes, out->desc.binary_size_B = (size_t)n;
    return st;
  }
  if (!st) st = cc_compile_binary(&t, out->cc);
  if (!st) st = cc_program_describe(out->cc, &t, &out->desc);
  if (!st && prepare) {
    FILE *w = fopen(path, "wb");
    if (!w || fwrite(out->desc.binary, 1, out->desc.binary_size_B, w) != out->desc.binary_size_B)
      st = hcq_status_make(HCQ_CODE_IO, "writing %s", path);
    if (w) fclose(w);
  }
  return st;
}

static inline void nv_hw_prog_free(nv_hw_prog *p) {
  cc_program_free(p->cc);
  uop_ctx_destroy(p->ctx);
  free(p->bytes);
  memset(p, 0, sizeof *p);
}

#endif
