/* The compile's one device-facing description (hcq/program.h), filled once by the pipeline from the final sink and
 * the linearized program: buffers (slot order, read/written), variables (by name, declared ranges), launch sizes
 * rendered as expressions (uop nodes stay inside the compiler), shared memory, the default argument layout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc_internal.h"
#include "compiler/compiler.h"
#include "uop/text.h"

static hcq_status render_dim(const char *kname, const uop *n, const char *what, int d, char *out) {
  int64_t v;
  if (!n || uop_const_value(n, &v)) {
    snprintf(out, HCQ_PROGRAM_EXPR_B, "%lld", n ? (long long)v : 1LL);
    return HCQ_OK;
  }
  char *text = NULL;
  HCQ_TRY(uop_render(n, &text));
  hcq_status st = HCQ_OK;
  if (strlen(text) >= HCQ_PROGRAM_EXPR_B)
    st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel %s: %s size %d '%s' is longer than %d bytes", kname, what, d,
                         text, HCQ_PROGRAM_EXPR_B - 1);
  else snprintf(out, HCQ_PROGRAM_EXPR_B, "%s", text);
  free(text);
  return st;
}

static int cmp_var(const void *a, const void *b) {
  return strcmp((*(const uop *const *)a)->arg.str, (*(const uop *const *)b)->arg.str);
}

/* A DEFINE_GLOBAL's slot when n loads/stores through it, else -1. */
static int64_t access_slot(const uop *n) {
  if ((n->op == UOP_LOAD || n->op == UOP_STORE) && n->nsrc >= 1 && n->src[0]->op == UOP_INDEX_OP &&
      n->src[0]->src[0]->op == UOP_DEFINE_GLOBAL)
    return n->src[0]->src[0]->arg.i;
  return -1;
}

static hcq_status fill(const uop **nodes, size_t count, const cc_target *t, cc_program *p, const uop **vars) {
  hcq_program *d = &p->desc;
  hcq_program_init(d);
  if (strlen(p->name) >= sizeof d->name || strlen(p->symbol) >= sizeof d->symbol)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel name %s is longer than %d bytes", p->name,
                           HCQ_PROGRAM_NAME_B - 1);
  snprintf(d->name, sizeof d->name, "%s", p->name);
  snprintf(d->symbol, sizeof d->symbol, "%s", p->symbol);
  snprintf(d->target, sizeof d->target, "%s", t->name);
  const uop *gsize[3] = {NULL, NULL, NULL}, *lsize[3] = {NULL, NULL, NULL};
  size_t nv = 0;
  int64_t nslots = 0; /* buffers: slots 0..nslots-1, each exactly once */
  for (size_t k = 0; k < count; k++) {
    const uop *n = nodes[k];
    if (n->op == UOP_DEFINE_GLOBAL) {
      nslots++;
    } else if (n->op == UOP_DEFINE_VAR) {
      /* every renderer passes a variable as a signed 32-bit argument: a wider declared range cannot be honoured */
      bool is_u64 = uop_dt_is_unsigned(n->dtype) && uop_dt_bits(n->dtype) == 64; /* i2 is a bit pattern */
      if (n->arg.kind == UOP_ARG_VAR && ((is_u64 && n->arg.i2 < 0) || n->arg.i < INT32_MIN || n->arg.i2 > INT32_MAX))
        return hcq_status_make(HCQ_CODE_UNSUPPORTED,
                               "variable %s is declared %lld..%lld (%s): kernel variables are int32 arguments",
                               n->arg.str, (long long)n->arg.i, (long long)n->arg.i2, uop_dt_name(n->dtype));
      vars[nv++] = n;
    } else if (n->op == UOP_SPECIAL && n->nsrc == 1) {
      const char *nm = n->arg.str;
      int dim = nm[strlen(nm) - 1] - '0';
      if (dim < 0 || dim > 2) return hcq_status_make(HCQ_CODE_INTERNAL, "program spec: bad SPECIAL name %s", nm);
      if (nm[0] == 'l' && t->has_local) lsize[dim] = n->src[0];
      else gsize[dim] = n->src[0];
    }
  }
  for (int64_t s = 0; s < nslots; s++) {
    const uop *def = NULL;
    unsigned access = 0;
    for (size_t k = 0; k < count; k++) {
      const uop *n = nodes[k];
      if (n->op == UOP_DEFINE_GLOBAL && n->arg.i == s) def = n;
      if (access_slot(n) == s) access |= n->op == UOP_LOAD ? HCQ_ACCESS_READ : HCQ_ACCESS_WRITE;
    }
    if (!def)
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel %s: buffer slots are not 0..%lld", p->name,
                             (long long)nslots - 1);
    HCQ_TRY(hcq_program_add_buffer(d, uop_dt_name(uop_dt_base_of(def->dtype)), def->dtype.size, access));
  }
  qsort(vars, nv, sizeof *vars, cmp_var);
  for (size_t v = 0; v < nv; v++) {
    const uop *n = vars[v];
    bool ranged = n->arg.kind == UOP_ARG_VAR;
    HCQ_TRY(hcq_program_add_var(d, n->arg.str, ranged, ranged ? n->arg.i : 0, ranged ? n->arg.i2 : 0));
  }
  for (int dim = 0; dim < 3; dim++) {
    HCQ_TRY(render_dim(p->name, gsize[dim], "global", dim, d->global[dim]));
    HCQ_TRY(render_dim(p->name, lsize[dim], "local", dim, d->local[dim]));
  }
  for (size_t k = 0; k < p->nlinear; k++) { /* shared memory: the DEFINE_LOCAL buffers */
    const uop *n = p->linear[k];
    if (n->op == UOP_DEFINE_LOCAL && n->dtype.size > 0)
      d->shared_B += (uint32_t)(n->dtype.size * uop_dt_itemsize_B(uop_dt_base_of(n->dtype)));
  }
  HCQ_TRY(hcq_program_layout(d, 0));
  return hcq_status_annotate(hcq_program_check(d), "describing the compiled kernel");
}

hcq_status cc_program_fill_desc(uop_ctx *ctx, const cc_target *t, const uop *sink, cc_program *p) {
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(ctx, sink, &nodes, &count));
  const uop **vars = calloc(count + 1, sizeof *vars);
  if (!vars) return hcq_status_make(HCQ_CODE_NOMEM, "program description: out of memory");
  hcq_status st = fill(nodes, count, t, p, vars);
  free(vars);
  return st;
}

hcq_status cc_program_describe(const cc_program *prog, const cc_target *t, hcq_program *out) {
  *out = prog->desc;
  snprintf(out->target, sizeof out->target, "%s", t->name);
  out->binary = prog->binary;
  out->binary_size_B = prog->binary_size_B;
  return HCQ_OK;
}

hcq_status cc_program_launch_dims(const cc_program *prog, const hcq_var *vars, size_t n, int64_t max_dim,
                                  int64_t global[3], int64_t local[3]) {
  int64_t values[HCQ_PROGRAM_MAX_PARAMS];
  HCQ_TRY(hcq_program_var_values(&prog->desc, vars, n, values));
  return hcq_program_launch_dims(&prog->desc, values, max_dim, global, local);
}

int64_t cc_launch_const(const char *expr) {
  int64_t v = -1;
  hcq_status st = hcq_expr_eval(expr, NULL, NULL, 0, &v);
  hcq_status_free(st);
  return st ? -1 : v;
}
