/* hcq_program: building, laying out and checking the one program description (see program.h). Freestanding. */
#include "hcq/program.h"

#include <string.h>

static bool copy_name(char *dst, size_t cap, const char *src) {
  size_t n = src ? strlen(src) : 0;
  if (n >= cap) return false;
  if (n) memcpy(dst, src, n);
  dst[n] = 0;
  return true;
}

void hcq_program_init(hcq_program *p) {
  memset(p, 0, sizeof *p);
  for (int d = 0; d < 3; d++) p->global[d][0] = p->local[d][0] = '1';
  p->registers = -1;
}

size_t hcq_program_nbufs(const hcq_program *p) {
  size_t n = 0;
  while (n < p->nparams && p->params[n].kind == HCQ_PARAM_BUFFER) n++;
  return n;
}

size_t hcq_program_nvars(const hcq_program *p) { return p->nparams - hcq_program_nbufs(p); }

const hcq_param *hcq_program_var(const hcq_program *p, size_t i) { return &p->params[hcq_program_nbufs(p) + i]; }

static hcq_status add_param(hcq_program *p, hcq_param *out_param) {
  if (p->nparams >= HCQ_PROGRAM_MAX_PARAMS)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "program %s: more than %d parameters", p->name, HCQ_PROGRAM_MAX_PARAMS);
  p->params[p->nparams++] = *out_param;
  return HCQ_OK;
}

hcq_status hcq_program_add_buffer(hcq_program *p, const char *dtype, int64_t nelems, unsigned access) {
  if (hcq_program_nvars(p))
    return hcq_status_make(HCQ_CODE_INVALID, "program %s: buffer added after the variables", p->name);
  hcq_param b = {.kind = HCQ_PARAM_BUFFER, .slot = (int)p->nparams, .nelems = nelems, .access = access};
  if (!copy_name(b.dtype, sizeof b.dtype, dtype) || !b.dtype[0])
    return hcq_status_make(HCQ_CODE_INVALID, "program %s: buffer slot %zu: bad dtype", p->name, p->nparams);
  return add_param(p, &b);
}

hcq_status hcq_program_add_var(hcq_program *p, const char *name, bool ranged, int64_t min, int64_t max) {
  hcq_param v = {.kind = HCQ_PARAM_VAR, .slot = (int)hcq_program_nvars(p), .nelems = 1, .ranged = ranged,
                 .min = min, .max = max};
  memcpy(v.dtype, "int32", 6);
  if (!copy_name(v.name, sizeof v.name, name) || !v.name[0])
    return hcq_status_make(HCQ_CODE_INVALID, "program %s: variable name empty or longer than %d bytes", p->name,
                           HCQ_PROGRAM_NAME_B - 1);
  if (ranged && min > max)
    return hcq_status_make(HCQ_CODE_INVALID, "program %s: variable %s has the empty range %lld..%lld", p->name, name,
                           (long long)min, (long long)max);
  return add_param(p, &v);
}

hcq_status hcq_program_layout(hcq_program *p, uint32_t prefix_B) {
  uint32_t nb = (uint32_t)hcq_program_nbufs(p), nv = (uint32_t)hcq_program_nvars(p);
  for (uint32_t i = 0; i < nb + nv; i++) {
    hcq_param *q = &p->params[i];
    q->size_B = i < nb ? 8u : 4u;
    q->offset_B = i < nb ? hcq_kernarg_buf_offset_B(prefix_B, i) : hcq_kernarg_val_offset_B(prefix_B, nb, i - nb);
  }
  p->kernarg_prefix_B = prefix_B;
  p->kernarg_size_B = hcq_kernarg_size_B(prefix_B, nb, nv);
  return HCQ_OK;
}

hcq_status hcq_program_check(const hcq_program *p) {
  if (!p) return hcq_status_make(HCQ_CODE_INVALID, "program: NULL");
  if (!memchr(p->name, 0, sizeof p->name) || !memchr(p->symbol, 0, sizeof p->symbol) || !p->symbol[0] ||
      !memchr(p->target, 0, sizeof p->target))
    return hcq_status_make(HCQ_CODE_INVALID, "program: name, symbol or target missing or not terminated");
  if (p->nparams > HCQ_PROGRAM_MAX_PARAMS)
    return hcq_status_make(HCQ_CODE_INVALID, "program %s: %zu parameters (at most %d)", p->name, p->nparams,
                           HCQ_PROGRAM_MAX_PARAMS);
  size_t nb = hcq_program_nbufs(p);
  const char *names[HCQ_PROGRAM_MAX_PARAMS];
  int64_t ones[HCQ_PROGRAM_MAX_PARAMS];
  for (size_t i = 0; i < p->nparams; i++) {
    const hcq_param *q = &p->params[i];
    bool is_buf = i < nb;
    if ((is_buf && (q->kind != HCQ_PARAM_BUFFER || q->slot != (int)i)) ||
        (!is_buf && (q->kind != HCQ_PARAM_VAR || q->slot != (int)(i - nb) || !q->name[0])) ||
        !memchr(q->name, 0, sizeof q->name) || !memchr(q->dtype, 0, sizeof q->dtype))
      return hcq_status_make(HCQ_CODE_INVALID, "program %s: parameter %zu is not a buffer of slot %zu or a named "
                             "variable after the buffers", p->name, i, i);
    if ((uint64_t)q->offset_B + q->size_B > p->kernarg_size_B || q->size_B == 0 || q->offset_B < p->kernarg_prefix_B)
      return hcq_status_make(HCQ_CODE_INVALID, "program %s: parameter %zu at bytes %u..+%u lies outside the "
                             "kernel arguments (%u..%u)", p->name, i, q->offset_B, q->size_B, p->kernarg_prefix_B,
                             p->kernarg_size_B);
    for (size_t j = 0; j < i; j++) {
      const hcq_param *o = &p->params[j];
      if (q->offset_B < o->offset_B + o->size_B && o->offset_B < q->offset_B + q->size_B)
        return hcq_status_make(HCQ_CODE_INVALID, "program %s: parameters %zu and %zu overlap", p->name, j, i);
    }
    if (!is_buf) names[i - nb] = q->name, ones[i - nb] = q->ranged && (q->min > 1 || q->max < 1) ? q->min : 1;
  }
  for (int d = 0; d < 6; d++) {
    const char *e = d < 3 ? p->global[d] : p->local[d - 3];
    int64_t v;
    if (!memchr(e, 0, HCQ_PROGRAM_EXPR_B))
      return hcq_status_make(HCQ_CODE_INVALID, "program %s: launch size %d not terminated", p->name, d);
    HCQ_TRY(hcq_status_annotate(hcq_expr_eval(e, names, ones, p->nparams - nb, &v), "program %s: %s size %d '%s'",
                                p->name, d < 3 ? "global" : "local", d % 3, e));
  }
  return HCQ_OK;
}

hcq_status hcq_program_var_values(const hcq_program *p, const hcq_var *vars, size_t n, int64_t *values) {
  size_t nv = hcq_program_nvars(p);
  for (size_t v = 0; v < nv; v++) {
    const hcq_param *q = hcq_program_var(p, v);
    bool found = false;
    for (size_t i = 0; i < n && !found; i++)
      if (vars[i].name && !strcmp(vars[i].name, q->name)) values[v] = vars[i].value, found = true;
    if (!found && q->ranged)
      return hcq_status_make(HCQ_CODE_NOT_FOUND, "kernel %s needs variable %s (%lld..%lld)", p->name, q->name,
                             (long long)q->min, (long long)q->max);
    if (!found) return hcq_status_make(HCQ_CODE_NOT_FOUND, "kernel %s needs variable %s", p->name, q->name);
    if (q->ranged && (values[v] < q->min || values[v] > q->max))
      return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: variable %s = %lld is outside its declared range "
                             "%lld..%lld", p->name, q->name, (long long)values[v], (long long)q->min, (long long)q->max);
    if (values[v] < INT32_MIN || values[v] > INT32_MAX)
      return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: variable %s = %lld does not fit its int32 argument",
                             p->name, q->name, (long long)values[v]);
  }
  return HCQ_OK;
}

hcq_status hcq_program_launch_dims(const hcq_program *p, const int64_t *values, int64_t max_dim, int64_t global[3],
                                   int64_t local[3]) {
  size_t nb = hcq_program_nbufs(p), nv = p->nparams - nb;
  const char *names[HCQ_PROGRAM_MAX_PARAMS];
  for (size_t i = 0; i < nv; i++) names[i] = p->params[nb + i].name;
  for (int d = 0; d < 6; d++) {
    const char *e = d < 3 ? p->global[d] : p->local[d - 3];
    int64_t *out = d < 3 ? &global[d] : &local[d - 3];
    HCQ_TRY(hcq_status_annotate(hcq_expr_eval(e, names, values, nv, out), "kernel %s: launch size", p->name));
    if (*out < 1 || *out > max_dim)
      return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: %s size %d '%s' = %lld is outside 1..%lld", p->name,
                             d < 3 ? "global" : "local", d % 3, e, (long long)*out, (long long)max_dim);
  }
  return HCQ_OK;
}
