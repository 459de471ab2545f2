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

static int cmp_slot(const void *a, const void *b) {
  int64_t x = (*(const uop *const *)a)->arg.i, y = (*(const uop *const *)b)->arg.i;
  return (x > y) - (x < y);
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

typedef struct scan {
  const uop **bufs, **vars; /* DEFINE_GLOBALs by slot, DEFINE_VARs by name */
  size_t nb, nv;
  const uop *gsize[3], *lsize[3];
} scan;

/* What a compile cannot proceed without: variables that fit an int32 argument, well-named SPECIALs. */
static hcq_status scan_sink(const uop **nodes, size_t count, const cc_target *t, scan *s) {
  for (size_t k = 0; k < count; k++) {
    const uop *n = nodes[k];
    if (n->op == UOP_DEFINE_GLOBAL) {
      s->bufs[s->nb++] = n;
    } else if (n->op == UOP_DEFINE_VAR) {
      /* every renderer passes a variable as a signed 32-bit argument: a wider declared range cannot be honoured */
      bool is_u64 = uop_dt_is_unsigned(n->dtype) && uop_dt_bits(n->dtype) == 64; /* i2 is a bit pattern */
      if (n->arg.kind == UOP_ARG_VAR && ((is_u64 && n->arg.i2 < 0) || n->arg.i < INT32_MIN || n->arg.i2 > INT32_MAX))
        return hcq_status_make(HCQ_CODE_UNSUPPORTED,
                               "variable %s is declared %lld..%lld (%s): kernel variables are int32 arguments",
                               n->arg.str, (long long)n->arg.i, (long long)n->arg.i2, uop_dt_name(n->dtype));
      s->vars[s->nv++] = n;
    } else if (n->op == UOP_SPECIAL && n->nsrc == 1) {
      const char *nm = n->arg.str;
      int dim = nm[strlen(nm) - 1] - '0';
      if (dim < 0 || dim > 2) return hcq_status_make(HCQ_CODE_INTERNAL, "program spec: bad SPECIAL name %s", nm);
      if (nm[0] == 'l' && t->has_local) s->lsize[dim] = n->src[0];
      else s->gsize[dim] = n->src[0];
    }
  }
  qsort(s->bufs, s->nb, sizeof *s->bufs, cmp_slot);
  qsort(s->vars, s->nv, sizeof *s->vars, cmp_var);
  return HCQ_OK;
}

/* The description. An error here leaves desc incomplete but the compile valid (the kernel can still run natively,
 * buffers passed by their slot); it is kept in desc_status. */
static hcq_status describe(const uop **nodes, size_t count, const cc_target *t, const scan *s, cc_program *p) {
  hcq_program *d = &p->desc;
  hcq_program_init(d);
  if (strlen(p->name) >= sizeof d->name || strlen(p->symbol) >= sizeof d->symbol)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel name %s is longer than %d bytes", p->name,
                           HCQ_PROGRAM_NAME_B - 1);
  snprintf(d->name, sizeof d->name, "%s", p->name);
  snprintf(d->symbol, sizeof d->symbol, "%s", p->symbol);
  snprintf(d->target, sizeof d->target, "%s", t->name);
  bool gaps = false;
  for (size_t i = 0; i < s->nb; i++) {
    const uop *def = s->bufs[i];
    unsigned access = 0;
    for (size_t k = 0; k < count; k++)
      if (access_slot(nodes[k]) == def->arg.i) access |= nodes[k]->op == UOP_LOAD ? HCQ_ACCESS_READ : HCQ_ACCESS_WRITE;
    HCQ_TRY(hcq_program_add_buffer(d, uop_dt_name(uop_dt_base_of(def->dtype)), def->dtype.size, access));
    d->params[i].slot = (int)def->arg.i; /* the kernel's slot, so a caller with gaps still passes buffers by slot */
    gaps |= def->arg.i != (int64_t)i;
  }
  for (size_t v = 0; v < s->nv; v++) {
    const uop *n = s->vars[v];
    bool ranged = n->arg.kind == UOP_ARG_VAR;
    HCQ_TRY(hcq_program_add_var(d, n->arg.str, ranged, ranged ? n->arg.i : 0, ranged ? n->arg.i2 : 0));
  }
  for (int dim = 0; dim < 3; dim++) {
    HCQ_TRY(render_dim(p->name, s->gsize[dim], "global", dim, d->global[dim]));
    HCQ_TRY(render_dim(p->name, s->lsize[dim], "local", dim, d->local[dim]));
  }
  for (size_t k = 0; k < p->nlinear; k++) { /* shared memory: the DEFINE_LOCAL buffers */
    const uop *n = p->linear[k];
    if (n->op == UOP_DEFINE_LOCAL && n->dtype.size > 0)
      d->shared_B += (uint32_t)(n->dtype.size * uop_dt_itemsize_B(uop_dt_base_of(n->dtype)));
  }
  if (gaps) return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel %s: buffer slots are not 0..%zu", p->name, s->nb - 1);
  HCQ_TRY(hcq_program_layout(d, 0));
  return hcq_status_annotate(hcq_program_check(d), "describing the compiled kernel");
}

hcq_status cc_program_fill_desc(uop_ctx *ctx, const cc_target *t, const uop *sink, cc_program *p) {
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(ctx, sink, &nodes, &count));
  scan s = {.bufs = calloc(count + 1, sizeof *s.bufs), .vars = calloc(count + 1, sizeof *s.vars)};
  hcq_status st = s.bufs && s.vars ? scan_sink(nodes, count, t, &s)
                                   : hcq_status_make(HCQ_CODE_NOMEM, "program description: out of memory");
  if (!st) p->desc_status = describe(nodes, count, t, &s, p);
  free(s.bufs);
  free(s.vars);
  return st;
}

hcq_status cc_program_describe(const cc_program *prog, const cc_target *t, hcq_program *out) {
  *out = prog->desc;
  if (prog->desc_status)
    return hcq_status_make(hcq_status_code(prog->desc_status), "%s", hcq_status_message(prog->desc_status));
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
