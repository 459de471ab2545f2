/* krun: see rt_krun.h. */
#include "hcq/rt_krun.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/kernel_text.h"
#include "cpu/cpu_memlimit.h"

static double now_ms(void) { return (double)hcq_now_ns() / 1e6; }

static hcq_status compile(krun *k, const cc_options *o, const char *target, int threads) {
  HCQ_TRY(cc_target_get(target, threads, &k->target));
  cc_options def = {0};
  double t0 = now_ms();
  HCQ_TRY(cc_compile_source(k->ctx, k->sink, &k->target, o ? o : &def, &k->prog));
  HCQ_TRY(cc_compile_binary(&k->target, k->prog));
  k->compile_ms = now_ms() - t0;
  return HCQ_OK;
}

hcq_status krun_compile_file_for(krun *k, const char *path, const cc_options *o, const char *target, int threads) {
  memset(k, 0, sizeof *k);
  HCQ_TRY(uop_ctx_create(&k->ctx));
  HCQ_TRY(cc_kernel_parse_file(k->ctx, path, &k->sink));
  return compile(k, o, target, threads);
}

hcq_status krun_compile_text_for(krun *k, const char *text, const cc_options *o, const char *target, int threads) {
  memset(k, 0, sizeof *k);
  HCQ_TRY(uop_ctx_create(&k->ctx));
  HCQ_TRY(cc_kernel_parse(k->ctx, text, strlen(text), "<bench>", &k->sink));
  return compile(k, o, target, threads);
}

hcq_status krun_compile_file(krun *k, const char *path, const cc_options *o, int threads) {
  return krun_compile_file_for(k, path, o, "c", threads);
}

hcq_status krun_compile_text(krun *k, const char *text, const cc_options *o, int threads) {
  return krun_compile_text_for(k, text, o, "c", threads);
}

size_t krun_mem_available_B(void) {
  cpu_memlimit lim;
  cpu_memlimit_query(getenv("HCQ_MEMLIMIT_ROOT"), &lim);
  if (lim.avail_B != UINT64_MAX) return lim.avail_B > SIZE_MAX ? SIZE_MAX : (size_t)lim.avail_B;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
}

/* The buffers must fit the memory limit (cgroups, MemAvailable, rlimits: cpu/cpu_memlimit.h). */
static hcq_status check_memory(krun *k) {
  char (*names)[48] = calloc(k->nbufs + 1, sizeof *names);
  const char **np = calloc(k->nbufs + 1, sizeof *np);
  size_t *sizes = calloc(k->nbufs + 1, sizeof *sizes);
  hcq_status st = names && np && sizes ? HCQ_OK : hcq_status_make(HCQ_CODE_NOMEM, "krun %s", k->prog->name);
  for (size_t i = 0; !st && i < k->nbufs; i++) {
    snprintf(names[i], sizeof names[i], "buffer slot %d", k->bufs[i].slot);
    np[i] = names[i];
    sizes[i] = k->bufs[i].size_B;
  }
  if (!st) st = cpu_memlimit_check(k->prog->name, np, sizes, k->nbufs);
  free(names);
  free(np);
  free(sizes);
  return st;
}

static const uop *find_var(krun *k, const char *name) {
  const uop **nodes;
  size_t n;
  if (uop_toposort(k->ctx, k->sink, &nodes, &n)) return NULL;
  for (size_t i = 0; i < n; i++)
    if (nodes[i]->op == UOP_DEFINE_VAR && strcmp(nodes[i]->arg.str, name) == 0) return nodes[i];
  return NULL;
}

hcq_status krun_setup(krun *k, cpu_device *dev) {
  hcq_rt_device *rd = NULL;
  HCQ_TRY(hcq_rt_wrap(cpu_device_hcq(dev), 0, &rd));
  k->own_rd = true;
  return krun_setup_rt(k, rd);
}

hcq_status krun_setup_rt(krun *k, hcq_rt_device *rd) {
  cc_program *p = k->prog;
  k->rd = rd;
  HCQ_TRY(cc_kernel_buffers(k->sink, &k->bufs, &k->nbufs));
  HCQ_TRY(check_memory(k));
  k->rbufs = calloc(k->nbufs ? k->nbufs : 1, sizeof *k->rbufs);
  k->var_nodes = calloc(hcq_program_nvars(&p->desc) + 1, sizeof *k->var_nodes);
  k->vv = calloc(hcq_program_nvars(&p->desc) + 1, sizeof *k->vv);
  if (!k->rbufs || !k->var_nodes || !k->vv) return hcq_status_make(HCQ_CODE_NOMEM, "krun %s", p->name);
  for (size_t v = 0; v < hcq_program_nvars(&p->desc); v++) {
    k->var_nodes[v] = find_var(k, hcq_program_var(&p->desc, v)->name);
    if (!k->var_nodes[v])
      return hcq_status_make(HCQ_CODE_INTERNAL, "kernel %s: variable %s not in the AST", p->name,
                             hcq_program_var(&p->desc, v)->name);
    k->vv[v] = (uop_var_val){hcq_program_var(&p->desc, v)->name, k->var_nodes[v]->arg.i2};
  }
  /* the runtime layer: the compiled program described once, loaded, its launch queue recorded */
  hcq_program desc;
  HCQ_TRY(cc_program_describe(p, &k->target, &desc));
  if (hcq_program_nbufs(&desc) != k->nbufs)
    return hcq_status_make(HCQ_CODE_INTERNAL, "kernel %s: %zu buffers in the text, %zu in the program", p->name,
                           k->nbufs, hcq_program_nbufs(&desc));
  HCQ_TRY(hcq_rt_kernel_load(k->rd, &desc, &k->kern));
  for (size_t i = 0; i < k->nbufs; i++) {
    if (k->bufs[i].slot != (int)i)
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel %s: buffer slots are not 0..%zu", p->name, k->nbufs - 1);
    HCQ_TRY(hcq_status_annotate(hcq_rt_buffer_alloc(k->rd, k->bufs[i].size_B, HCQ_RT_MEM_HOST_VISIBLE, &k->rbufs[i]),
                                "buffer slot %d of %s", k->bufs[i].slot, p->name));
    k->bufs[i].data = hcq_rt_buffer_host(k->rbufs[i]);
  }
  return HCQ_OK;
}

void krun_fill(krun *k, uint64_t seed) {
  for (size_t i = 0; i < k->nbufs; i++)
    cc_fill_buffer(k->bufs[i].data, k->bufs[i].dtype, k->bufs[i].nelems, seed + (uint64_t)k->bufs[i].slot);
}

hcq_status krun_set_vars(krun *k, const uop_var_val *vars, size_t n) {
  for (size_t v = 0; v < hcq_program_nvars(&k->prog->desc); v++) {
    const uop *node = k->var_nodes[v];
    bool found = false;
    for (size_t i = 0; i < n; i++) {
      if (strcmp(vars[i].name, hcq_program_var(&k->prog->desc, v)->name) != 0) continue;
      if (vars[i].value < node->arg.i || vars[i].value > node->arg.i2)
        return hcq_status_make(HCQ_CODE_INVALID, "variable %s=%lld is outside its range %lld..%lld", vars[i].name,
                               (long long)vars[i].value, (long long)node->arg.i, (long long)node->arg.i2);
      k->vv[v].value = vars[i].value;
      found = true;
    }
    if (!found)
      return hcq_status_make(HCQ_CODE_NOT_FOUND, "kernel %s needs variable %s (%lld..%lld)", k->prog->name,
                             hcq_program_var(&k->prog->desc, v)->name, (long long)node->arg.i, (long long)node->arg.i2);
  }
  return HCQ_OK;
}

_Static_assert(sizeof(hcq_var) == sizeof(uop_var_val), "hcq_var and uop_var_val share their layout");

hcq_status krun_exec(krun *k, uint32_t timeout_ms, double *out_ms) {
  HCQ_TRY(hcq_rt_launch(k->kern, k->rbufs, k->nbufs, (const hcq_var *)k->vv, hcq_program_nvars(&k->prog->desc)));
  HCQ_TRY(hcq_status_annotate(hcq_rt_sync(k->rd, timeout_ms), "running %s", k->prog->name));
  if (out_ms) *out_ms = hcq_rt_kernel_last_ms(k->kern);
  return HCQ_OK;
}

uint64_t krun_program_handle(const krun *k) { return hcq_rt_kernel_handle(k->kern); }

cc_kbuf *krun_buf(krun *k, int slot) {
  for (size_t i = 0; i < k->nbufs; i++)
    if (k->bufs[i].slot == slot) return &k->bufs[i];
  return NULL;
}

char *krun_opts_text(const krun *k) {
  return cc_opts_format(k->prog ? k->prog->applied_opts : NULL, k->prog ? k->prog->napplied_opts : 0);
}

void krun_free(krun *k) {
  if (!k) return;
  if (k->own_rd) {
    hcq_rt_close(k->rd); /* the wrapper of krun_setup: frees the kernel and the buffers; the cpu device stays */
  } else {
    hcq_rt_kernel_free(k->kern); /* a caller's device: only what krun made on it */
    for (size_t i = 0; k->rbufs && i < k->nbufs; i++) hcq_rt_buffer_free(k->rbufs[i]);
  }
  free(k->bufs);
  free(k->rbufs);
  free(k->var_nodes);
  free(k->vv);
  cc_program_free(k->prog);
  uop_ctx_destroy(k->ctx);
  memset(k, 0, sizeof *k);
}

static double elem_f(const void *d, uop_dtype dt, int64_t i) {
  switch (dt.scalar) {
    case UOP_FLOAT32: return ((const float *)d)[i];
    case UOP_FLOAT64: return ((const double *)d)[i];
    case UOP_FLOAT16: return cc_f16_to_f32(((const uint16_t *)d)[i]);
    case UOP_BFLOAT16: return cc_bf16_to_f32(((const uint16_t *)d)[i]);
    default: return 0;
  }
}

/* Element i as text: integers exactly (signed or not by the dtype), floats to 17 significant digits. */
static void elem_text(const void *d, uop_dtype dt, int64_t i, char *out, size_t cap) {
  if (uop_dt_is_float(dt)) {
    snprintf(out, cap, "%.17g", elem_f(d, dt, i));
    return;
  }
  const uint8_t *p = (const uint8_t *)d + (size_t)i * (size_t)uop_dt_itemsize_B(dt);
  int64_t v;
  uint64_t u;
  switch (uop_dt_itemsize_B(dt)) {
    case 1: v = *(const int8_t *)p, u = *p; break;
    case 2: v = *(const int16_t *)p, u = *(const uint16_t *)p; break;
    case 4: v = *(const int32_t *)p, u = *(const uint32_t *)p; break;
    default: v = *(const int64_t *)p, u = *(const uint64_t *)p; break;
  }
  if (uop_dt_is_unsigned(dt) || dt.scalar == UOP_BOOL) snprintf(out, cap, "%llu", (unsigned long long)u);
  else snprintf(out, cap, "%lld", (long long)v);
}

void krun_compare(const void *got, const void *want, uop_dtype dt, int64_t nelems, double rel, double abs,
                  krun_cmp *acc) {
  size_t item = (size_t)uop_dt_itemsize_B(dt);
  bool is_float = uop_dt_is_float(dt);
  /* normwise term (docs/FORMATS.md): a reduction whose result cancels near 0 carries the rounding of its large
   * terms, which reassociation and fused multiply-adds legitimately change */
  double norm = 0;
  for (int64_t i = 0; is_float && i < nelems; i++) {
    double w = fabs(elem_f(want, dt, i));
    if (isfinite(w) && w > norm) norm = w;
  }
  for (int64_t i = 0; i < nelems; i++) {
    acc->checked++;
    bool bad;
    if (is_float) {
      double g = elem_f(got, dt, i), w = elem_f(want, dt, i);
      bad = !cc_float_match(g, w, rel, abs + rel / 10 * norm);
      if (isfinite(g) && isfinite(w)) {
        double e = fabs(g - w), r = w != 0 ? e / fabs(w) : (e != 0 ? INFINITY : 0);
        if (e > acc->max_abs) acc->max_abs = e;
        if (r > acc->max_rel && isfinite(r)) acc->max_rel = r;
      }
    } else {
      bad = memcmp((const uint8_t *)got + (size_t)i * item, (const uint8_t *)want + (size_t)i * item, item) != 0;
    }
    if (bad) {
      if (acc->mismatches == 0) {
        acc->first_bad = i;
        elem_text(got, dt, i, acc->first_got, sizeof acc->first_got);
        elem_text(want, dt, i, acc->first_want, sizeof acc->first_want);
      }
      acc->mismatches++;
    }
  }
  if (is_float) acc->float_checked += (size_t)(nelems > 0 ? nelems : 0);
}

hcq_status krun_check_interp(krun *k, cc_kbuf *host, size_t nhost, double rel, double abs, krun_cmp *out) {
  memset(out, 0, sizeof *out);
  out->first_bad = -1;
  if (nhost != k->nbufs) return hcq_status_make(HCQ_CODE_INTERNAL, "krun_check_interp: buffer count");
  void **ptrs = calloc(nhost + 1, sizeof *ptrs);
  size_t *sizes = calloc(nhost + 1, sizeof *sizes);
  hcq_status st = HCQ_OK;
  if (!ptrs || !sizes) st = hcq_status_make(HCQ_CODE_NOMEM, "krun_check_interp");
  for (size_t i = 0; !st && i < nhost; i++) {
    if (host[i].slot < 0 || (size_t)host[i].slot >= nhost) st = hcq_status_make(HCQ_CODE_INTERNAL, "slot");
    else {
      ptrs[host[i].slot] = host[i].data;
      sizes[host[i].slot] = host[i].size_B;
    }
  }
  if (!st) st = cc_interp_run(k->sink, ptrs, sizes, nhost, k->vv, hcq_program_nvars(&k->prog->desc));
  out->first_bad_slot = -1;
  for (size_t i = 0; !st && i < nhost; i++) {
    bool clean = out->mismatches == 0;
    krun_compare(k->bufs[i].data, host[i].data, host[i].dtype, host[i].nelems, rel, abs, out);
    if (clean && out->mismatches) out->first_bad_slot = host[i].slot;
  }
  free(ptrs);
  free(sizes);
  return hcq_status_annotate(st, "reference interpreter");
}
