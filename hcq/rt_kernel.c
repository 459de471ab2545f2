/* Kernels: a program loaded on a device with its launch queue recorded once,
 *   wait(timeline, TLW) · timestamp(t0) · exec(program, args, global, local) · timestamp(t1) · signal(timeline, TLS)
 * where the timeline's address and values, every buffer address, every variable and every non-constant launch
 * size are queue variables: a launch is one hcq_queue_submit with their values, which rewrites only the words
 * (and kernel-argument fields) whose value changed. Arguments are laid out at the program's param offsets (the
 * device may have overridden the default layout in program_load).
 *
 * Everything a launch can know at load is worked out there: launch sizes are compiled once (constants evaluated,
 * the rest kept as postfix code over the variables), buffer size needs are in bytes, and the queue-variable values
 * carry the very name pointers the queue recorded, so a launch does no text work and no allocation. */
#include <stdlib.h>
#include <string.h>

#include "hcq/retire.h"
#include "hcq/signal.h"
#include "hcq/rt_private.h"

enum { V_TIMELINE, V_TLW, V_TLS, V_G0, V_L0 = V_G0 + 3, V_FIXED = V_L0 + 3 }; /* then buffers, then variables */

struct hcq_rt_kernel {
  hcq_rt_device *rd;
  hcq_program prog;
  uint64_t handle;
  bool loaded;
  hcq_mem argm;
  hcq_args args;
  hcq_queue *q;
  hcq_signal *ts0, *ts1;
  uop_var_val vv[V_FIXED + HCQ_PROGRAM_MAX_PARAMS];
  size_t nvv;
  int64_t dim[6];             /* global 0..2, local 0..2: the value of a constant launch size */
  hcq_expr_code *dim_code[6]; /* the compiled expression of a non-constant one (NULL: constant) */
  uint64_t need_B[HCQ_PROGRAM_MAX_PARAMS]; /* bytes each buffer slot must have (0: unknown) */
  uint64_t last_value; /* timeline value of the last launch (0: none) */
  uint64_t last_wraps; /* the device's timeline_wraps then: a wrap since means that launch is done */
  hcq_rt_kernel *next, *prev;
};

/* The timeline value the last launch signals, or 0 once a timeline wrap (which waits for all work) passed it. */
static uint64_t pending_value(const hcq_rt_kernel *k, const hcq_device *d) {
  return k->last_wraps == d->timeline_wraps ? k->last_value : 0;
}

static const char *const dim_names[6] = {"__hcq_g0", "__hcq_g1", "__hcq_g2", "__hcq_l0", "__hcq_l1", "__hcq_l2"};
static const char *const buf_names[HCQ_PROGRAM_MAX_PARAMS] = {
    "__hcq_b0",  "__hcq_b1",  "__hcq_b2",  "__hcq_b3",  "__hcq_b4",  "__hcq_b5",  "__hcq_b6",  "__hcq_b7",
    "__hcq_b8",  "__hcq_b9",  "__hcq_b10", "__hcq_b11", "__hcq_b12", "__hcq_b13", "__hcq_b14", "__hcq_b15",
    "__hcq_b16", "__hcq_b17", "__hcq_b18", "__hcq_b19", "__hcq_b20", "__hcq_b21", "__hcq_b22", "__hcq_b23",
    "__hcq_b24", "__hcq_b25", "__hcq_b26", "__hcq_b27", "__hcq_b28", "__hcq_b29", "__hcq_b30", "__hcq_b31"};

static const uop *u64_var(uop_ctx *ctx, const char *name) {
  return uop_var(ctx, name, 0, (int64_t)UINT64_MAX, uop_dt(UOP_UINT64));
}

static const char *dim_text(const hcq_program *p, int slot) { return slot < 3 ? p->global[slot] : p->local[slot - 3]; }

/* A launch size, compiled once: an immediate when its expression has no variables, else the variable `name` whose
 * value each launch computes from the compiled code. */
static hcq_status dim_val(hcq_rt_kernel *k, int slot, const char *const *names, size_t nv, hcq_val *out) {
  const char *expr = dim_text(&k->prog, slot);
  hcq_expr_code *c = malloc(sizeof *c);
  if (!c) return hcq_status_make(HCQ_CODE_NOMEM, "kernel %s: launch size", k->prog.name);
  hcq_status st = hcq_expr_compile(expr, names, nv, c);
  if (!st && hcq_expr_is_const(c)) st = hcq_expr_run(c, NULL, &k->dim[slot]);
  if (st || hcq_expr_is_const(c)) {
    free(c);
    if (st) return hcq_status_annotate(st, "kernel %s: launch size '%s'", k->prog.name, expr);
    *out = hcq_imm((uint64_t)k->dim[slot]);
    return HCQ_OK;
  }
  k->dim_code[slot] = c;
  const uop *s = uop_var(k->rd->ctx, dim_names[slot], 1, INT32_MAX, uop_dt(UOP_INT32));
  if (!s) return hcq_status_make(HCQ_CODE_NOMEM, "kernel %s: launch variables", k->prog.name);
  k->vv[V_G0 + slot].name = s->arg.str;
  *out = hcq_sym(s);
  return HCQ_OK;
}

static int64_t itemsize_of(const char *dtype) {
  uop_dtype dt;
  return uop_dt_from_name(dtype, strlen(dtype), &dt) ? uop_dt_itemsize_B(dt) : 0;
}

static hcq_status record(hcq_rt_kernel *k) {
  hcq_device *d = k->rd->dev;
  uop_ctx *ctx = k->rd->ctx;
  hcq_program *p = &k->prog;
  size_t nb = hcq_program_nbufs(p), nv = hcq_program_nvars(p);
  HCQ_TRY(d->ops->mem_alloc(d, p->kernarg_size_B ? p->kernarg_size_B : 4, HCQ_MEM_KERNARG, &k->argm));
  /* exec's argument descriptor: the memory and its counts (the layout inside is the program's) */
  k->args = (hcq_args){.host = k->argm.host, .va = k->argm.va, .size_B = k->argm.size_B,
                       .prefix_words = p->kernarg_prefix_B / 4, .nbufs = (uint32_t)nb, .nvals = (uint32_t)nv};
  HCQ_TRY(hcq_queue_create(d, HCQ_QUEUE_COMPUTE, &k->q));
  /* the values a launch hands the queue, named by the pointers the queue records (compared by pointer first) */
  static const char *const fixed[V_FIXED] = {"__hcq_timeline", "__hcq_tlw", "__hcq_tls", "__hcq_g0", "__hcq_g1",
                                             "__hcq_g2", "__hcq_l0", "__hcq_l1", "__hcq_l2"};
  for (size_t i = 0; i < V_FIXED; i++) k->vv[i] = (uop_var_val){fixed[i], 1};
  k->nvv = V_FIXED + p->nparams;
  uint32_t region;
  HCQ_TRY(hcq_queue_add_region(k->q, k->argm.host, k->argm.size_B, &region));
  for (size_t i = 0; i < p->nparams; i++) {
    const hcq_param *q = &p->params[i];
    const uop *s = i < nb ? u64_var(ctx, buf_names[i])
                          : uop_var(ctx, q->name, q->ranged ? q->min : INT32_MIN, q->ranged ? q->max : INT32_MAX,
                                    uop_dt(UOP_INT32));
    if (!s) return hcq_status_make(HCQ_CODE_NOMEM, "kernel %s: argument variables", p->name);
    k->vv[V_FIXED + i] = (uop_var_val){s->arg.str, 0};
    HCQ_TRY(hcq_queue_patch_field(k->q, region, q->offset_B, hcq_sym(s), 8 * q->size_B, 0));
    int64_t item = i < nb ? itemsize_of(q->dtype) : 0;
    if (q->nelems > 0 && item > 0 && __builtin_mul_overflow((uint64_t)q->nelems, (uint64_t)item, &k->need_B[i]))
      k->need_B[i] = UINT64_MAX;
  }
  HCQ_TRY(hcq_signal_create(d, "t0", 0, &k->ts0));
  HCQ_TRY(hcq_signal_create(d, "t1", 0, &k->ts1));
  const uop *tl = u64_var(ctx, "__hcq_timeline"), *tlw = u64_var(ctx, "__hcq_tlw"), *tls = u64_var(ctx, "__hcq_tls");
  if (!tl || !tlw || !tls) return hcq_status_make(HCQ_CODE_NOMEM, "kernel %s: queue variables", p->name);
  k->vv[V_TIMELINE].name = tl->arg.str, k->vv[V_TLW].name = tlw->arg.str, k->vv[V_TLS].name = tls->arg.str;
  const char *names[HCQ_PROGRAM_MAX_PARAMS];
  for (size_t i = nb; i < p->nparams; i++) names[i - nb] = p->params[i].name;
  hcq_val g[3], l[3];
  for (int dd = 0; dd < 3; dd++) {
    HCQ_TRY(dim_val(k, dd, names, nv, &g[dd]));
    HCQ_TRY(dim_val(k, 3 + dd, names, nv, &l[dd]));
  }
  HCQ_TRY(hcq_queue_wait(k->q, hcq_sym(tl), hcq_sym(tlw)));
  HCQ_TRY(hcq_queue_timestamp(k->q, hcq_imm(k->ts0->va)));
  HCQ_TRY(hcq_queue_exec(k->q, hcq_imm(k->handle), &k->args, g, l));
  HCQ_TRY(hcq_queue_timestamp(k->q, hcq_imm(k->ts1->va)));
  HCQ_TRY(hcq_queue_signal(k->q, hcq_sym(tl), hcq_sym(tls)));
  return HCQ_OK;
}

hcq_status hcq_rt_kernel_load(hcq_rt_device *rd, const hcq_program *prog, hcq_rt_kernel **out) {
  if (!rd || !prog || !out) return hcq_status_make(HCQ_CODE_INVALID, "hcq_rt_kernel_load: NULL argument");
  *out = NULL;
  hcq_device *d = rd->dev;
  HCQ_TRY(hcq_status_annotate(hcq_program_check(prog), "loading on %s", d->name));
  if (!d->ops->program_load || !d->ops->encoder)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "device %s cannot load programs", d->name);
  if (!prog->binary || !prog->binary_size_B)
    return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: no binary to load", prog->name);
  hcq_rt_kernel *k = calloc(1, sizeof *k);
  if (!k) return hcq_status_make(HCQ_CODE_NOMEM, "kernel %s", prog->name);
  k->rd = rd;
  k->prog = *prog;
  hcq_retire_poll(d);
  hcq_status st = d->ops->program_load(d, &k->prog, &k->handle);
  k->loaded = !st;
  k->prog.binary = NULL; /* borrowed for the load only */
  k->prog.binary_size_B = 0;
  if (!st) st = hcq_status_annotate(hcq_program_check(&k->prog), "kernel arguments as %s laid them out", d->name);
  if (!st) st = record(k);
  k->next = rd->kernels;
  if (rd->kernels) rd->kernels->prev = k;
  rd->kernels = k;
  if (st) {
    hcq_rt_kernel_free(k);
    return st;
  }
  *out = k;
  return HCQ_OK;
}

static void retire_kernel(hcq_device *d, void *ctx, uint64_t arg) {
  (void)arg;
  hcq_rt_kernel *k = ctx;
  hcq_queue_destroy(k->q);
  hcq_signal_destroy(k->ts0);
  hcq_signal_destroy(k->ts1);
  if (k->argm.host) d->ops->mem_free(d, &k->argm);
  if (k->loaded) d->ops->program_free(d, k->handle);
  for (int i = 0; i < 6; i++) free(k->dim_code[i]);
  free(k);
}

void hcq_rt_kernel_free(hcq_rt_kernel *k) {
  if (!k) return;
  hcq_rt_device *rd = k->rd;
  if (k->prev) k->prev->next = k->next;
  else rd->kernels = k->next;
  if (k->next) k->next->prev = k->prev;
  uint64_t last = pending_value(k, rd->dev);
  hcq_status st = hcq_retire_at(rd->dev, last, retire_kernel, k, 0);
  if (st) {
    hcq_status_free(st);
    hcq_status_free(hcq_rt_wait_value(rd, last, rd->dev->wait_timeout_ms));
    retire_kernel(rd->dev, k, 0);
  }
}

const hcq_program *hcq_rt_kernel_program(const hcq_rt_kernel *k) { return k ? &k->prog : NULL; }

/* The six launch sizes for the variables' values: constants as loaded, the rest from their compiled code; each in
 * 1..INT32_MAX (the messages of hcq_program_launch_dims). */
static hcq_status launch_dims(const hcq_rt_kernel *k, const int64_t *vals, int64_t g[3], int64_t l[3]) {
  const hcq_program *p = &k->prog;
  for (int dd = 0; dd < 6; dd++) {
    int64_t *out = dd < 3 ? &g[dd] : &l[dd - 3];
    *out = k->dim[dd];
    if (k->dim_code[dd])
      HCQ_TRY(hcq_status_annotate(hcq_expr_run(k->dim_code[dd], vals, out), "kernel %s: launch size '%s'", p->name,
                                  dim_text(p, dd)));
    if (*out < 1 || *out > INT32_MAX)
      return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: %s size %d '%s' = %lld is outside 1..%lld", p->name,
                             dd < 3 ? "global" : "local", dd % 3, dim_text(p, dd), (long long)*out,
                             (long long)INT32_MAX);
  }
  return HCQ_OK;
}

hcq_status hcq_rt_launch(hcq_rt_kernel *k, hcq_rt_buffer *const *bufs, size_t nbufs, const hcq_var *vars,
                         size_t nvars) {
  if (!k) return hcq_status_make(HCQ_CODE_INVALID, "hcq_rt_launch: NULL kernel");
  hcq_rt_device *rd = k->rd;
  hcq_device *d = rd->dev;
  const hcq_program *p = &k->prog;
  size_t nb = hcq_program_nbufs(p);
  if (nbufs != nb || (nb && !bufs))
    return hcq_status_make(HCQ_CODE_INVALID, "kernel %s takes %zu buffers, %zu given", p->name, nb, nbufs);
  for (size_t i = 0; i < nb; i++) {
    const hcq_param *q = &p->params[i];
    if (!bufs[i]) return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: buffer slot %zu is NULL", p->name, i);
    if (bufs[i]->rd != rd)
      return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: buffer slot %zu belongs to another device", p->name, i);
    if (k->need_B[i] > bufs[i]->size_B)
      return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: buffer slot %zu has %zu bytes; the kernel uses %lld %s "
                             "elements (%llu bytes)", p->name, i, bufs[i]->size_B, (long long)q->nelems, q->dtype,
                             (unsigned long long)k->need_B[i]);
  }
  int64_t vals[HCQ_PROGRAM_MAX_PARAMS], g[3], l[3];
  if (p->nparams > nb) HCQ_TRY(hcq_program_var_values(p, vars, nvars, vals));
  HCQ_TRY(launch_dims(k, vals, g, l));
  for (int dd = 0; dd < 3; dd++)
    if (g[dd] > (int64_t)rd->info.max_global[dd])
      return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: global size %d '%s' = %lld exceeds %s's %u", p->name, dd,
                             p->global[dd], (long long)g[dd], d->name, rd->info.max_global[dd]);
  /* arguments read later by the device: the previous launch must be done before they are rewritten */
  if (!(rd->info.features & HCQ_FEATURE_ARGS_AT_SUBMIT) && pending_value(k, d))
    HCQ_TRY(hcq_rt_wait_value(rd, pending_value(k, d), d->wait_timeout_ms));
  if (d->timeline_value > HCQ_TIMELINE_WRAP_AT) HCQ_TRY(hcq_rt_sync(rd, d->wait_timeout_ms));
  for (int dd = 0; dd < 3; dd++) k->vv[V_G0 + dd].value = g[dd], k->vv[V_L0 + dd].value = l[dd];
  for (size_t i = 0; i < nb; i++) k->vv[V_FIXED + i].value = (int64_t)bufs[i]->mem.va;
  for (size_t i = nb; i < p->nparams; i++) k->vv[V_FIXED + i].value = vals[i - nb];
  /* the value this launch signals is taken from the timeline only once the submit succeeded */
  uint64_t last = hcq_timeline_last(d), next = d->timeline_value;
  if (next >= 0xffffffffu) return hcq_status_make(HCQ_CODE_INTERNAL, "device %s: timeline exhausted", d->name);
  k->vv[V_TIMELINE].value = (int64_t)d->timeline->va;
  k->vv[V_TLW].value = (int64_t)last;
  k->vv[V_TLS].value = (int64_t)next;
  hcq_status st = hcq_queue_submit(k->q, d, k->vv, k->nvv);
  if (st) {
    rd->lost |= hcq_status_code(st) == HCQ_CODE_DEVICE_LOST;
    return hcq_status_annotate(st, "launching %s", p->name);
  }
  k->last_value = hcq_timeline_next(d);
  k->last_wraps = d->timeline_wraps;
  hcq_retire_poll(d);
  return HCQ_OK;
}

double hcq_rt_kernel_last_ms(const hcq_rt_kernel *k) {
  if (!k || !(k->rd->info.features & HCQ_FEATURE_TIMESTAMPS)) return 0;
  return (double)(hcq_signal_timestamp_ns(k->ts1) - hcq_signal_timestamp_ns(k->ts0)) / 1e6;
}

uint64_t hcq_rt_kernel_handle(const hcq_rt_kernel *k) { return k ? k->handle : 0; }

uint64_t hcq_rt_kernel_words_written(const hcq_rt_kernel *k) { return k ? hcq_queue_get_stats(k->q).words_written : 0; }
