/* cc_program_describe: the device-facing part of a compile as the one program description (hcq/program.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "uop/text.h"

static hcq_status render_dim(const cc_program *prog, const uop *n, const char *what, int d, char *out) {
  int64_t v;
  if (!n || uop_const_value(n, &v)) {
    snprintf(out, HCQ_PROGRAM_EXPR_B, "%lld", n ? (long long)v : 1LL);
    return HCQ_OK;
  }
  char *text = NULL;
  HCQ_TRY(uop_render(n, &text));
  hcq_status st = HCQ_OK;
  if (strlen(text) >= HCQ_PROGRAM_EXPR_B)
    st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel %s: %s size %d '%s' is longer than %d bytes", prog->name, what,
                         d, text, HCQ_PROGRAM_EXPR_B - 1);
  else snprintf(out, HCQ_PROGRAM_EXPR_B, "%s", text);
  free(text);
  return st;
}

hcq_status cc_program_describe(const cc_program *prog, const cc_target *t, hcq_program *out) {
  hcq_program_init(out);
  if (strlen(prog->name) >= sizeof out->name || strlen(prog->symbol) >= sizeof out->symbol)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel name %s is longer than %d bytes", prog->name,
                           HCQ_PROGRAM_NAME_B - 1);
  snprintf(out->name, sizeof out->name, "%s", prog->name);
  snprintf(out->symbol, sizeof out->symbol, "%s", prog->symbol);
  snprintf(out->target, sizeof out->target, "%s", t->name);
  out->binary = prog->binary;
  out->binary_size_B = prog->binary_size_B;
  for (size_t i = 0; i < prog->nbufs; i++) {
    const cc_buffer *b = &prog->bufs[i];
    if (b->slot != (int)i)
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel %s: buffer slots are not 0..%zu", prog->name, prog->nbufs - 1);
    HCQ_TRY(hcq_program_add_buffer(out, uop_dt_name(b->dtype), b->size,
                                   (b->read ? HCQ_ACCESS_READ : 0u) | (b->written ? HCQ_ACCESS_WRITE : 0u)));
  }
  for (size_t v = 0; v < prog->nvars; v++) {
    const uop *decl = NULL;
    for (size_t k = 0; k < prog->nlinear && !decl; k++) {
      const uop *n = prog->linear[k];
      if (n->op == UOP_DEFINE_VAR && n->arg.kind == UOP_ARG_VAR && !strcmp(n->arg.str, prog->var_names[v])) decl = n;
    }
    HCQ_TRY(hcq_program_add_var(out, prog->var_names[v], decl != NULL, decl ? decl->arg.i : 0, decl ? decl->arg.i2 : 0));
  }
  for (int d = 0; d < 3; d++) {
    HCQ_TRY(render_dim(prog, prog->global_size[d], "global", d, out->global[d]));
    HCQ_TRY(render_dim(prog, prog->local_size[d], "local", d, out->local[d]));
  }
  for (size_t k = 0; k < prog->nlinear; k++) { /* shared memory: the DEFINE_LOCAL buffers */
    const uop *n = prog->linear[k];
    if (n->op == UOP_DEFINE_LOCAL && n->dtype.size > 0)
      out->shared_B += (uint32_t)(n->dtype.size * uop_dt_itemsize_B(uop_dt_base_of(n->dtype)));
  }
  HCQ_TRY(hcq_program_layout(out, 0));
  return hcq_status_annotate(hcq_program_check(out), "describing the compiled kernel");
}
