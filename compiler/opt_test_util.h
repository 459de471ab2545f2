/* Test helpers for the optimizer tests (header-only): prepare a kernel as the pipeline does before "optimize"
 * (initial symbolic + range merging), apply opts, and compare kernels by running them with the reference
 * interpreter (compiler/interp.c) and, compiled through the whole pipeline, natively once per core_id; the checks
 * (CHECK) of those comparisons and of an opt's refusal. A test's case opens one way: kernel text and opts text
 * parsed (otu_case_open), or parsed, compiled, run and compared in one call (otu_check_text, otu_text_native_same). */
#ifndef HCQ_COMPILER_OPT_TEST_UTIL_H
#define HCQ_COMPILER_OPT_TEST_UTIL_H

#include <math.h>

#include "compiler/cc_internal.h"
#include "compiler/cc_test_util.h"
#include "compiler/interp.h"
#include "compiler/kernel_text.h"
#include "compiler/opt.h"
#include "compiler/opt_internal.h"
#include "base/testing.h"

static inline hcq_status otu_prep_sink(uop_ctx *ctx, const uop *sink, const cc_target *t, const uop **out) {
  cc_pass_ctx pc = {.ctx = ctx, .target = t};
  const uop *a;
  HCQ_TRY(cc_pass_symbolic(&pc, sink, &a));
  return cc_pass_merge_ranges(&pc, a, out);
}

static inline hcq_status otu_prep(uop_ctx *ctx, const char *text, const cc_target *t, const uop **out) {
  const uop *sink;
  HCQ_TRY(cc_kernel_parse(ctx, text, strlen(text), "<test>", &sink));
  return otu_prep_sink(ctx, sink, t, out);
}

/* Apply "OP:AXIS:AMT,..." (NULL: the heuristic). *applied may be NULL. */
static inline hcq_status otu_opt(uop_ctx *ctx, const uop *sink, const cc_target *t, const char *text,
                                 const uop **out, cc_opt **applied, size_t *napplied) {
  cc_opt *opts = NULL;
  size_t n = 0;
  if (text) HCQ_TRY(cc_opts_parse(text, &opts, &n));
  cc_options o = {.opts = opts, .nopts = n};
  cc_opt *app = NULL;
  size_t napp = 0;
  hcq_status st = cc_optimize(ctx, sink, t, text ? &o : NULL, out, &app, &napp);
  free(opts);
  if (applied) {
    *applied = app;
    *napplied = napp;
  } else {
    free(app);
  }
  return st;
}

/* Whether two float results agree: NaN matches NaN (any payload), equal values match (equal infinities, -0 and +0),
 * an infinity matches nothing else, finite values within 1e-4 relative + 1e-5 absolute. */
static inline bool otu_float_same(double x, double y) { return cc_float_match(y, x, 1e-4, 1e-5); }

/* Set by a test: otu_diff compares floats bit for bit (a NaN still matches any NaN; -0 and +0 differ). */
static bool otu_bit_exact;

static inline bool otu_float_bits_same(double x, double y) {
  if (isnan(x) || isnan(y)) return isnan(x) && isnan(y);
  return x == y && signbit(x) == signbit(y);
}

/* Mismatching elements between two buffer sets (ints exact, floats by otu_float_same or otu_float_bits_same). */
static inline size_t otu_diff(const cc_kbuf *a, const cc_kbuf *b, size_t n) {
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) {
    bool fl = uop_dt_is_float(a[i].dtype);
    for (int64_t e = 0; e < a[i].nelems; e++) {
      double x = tu_elem(a[i].data, a[i].dtype, e), y = tu_elem(b[i].data, b[i].dtype, e);
      bad += fl ? !(otu_bit_exact ? otu_float_bits_same(x, y) : otu_float_same(x, y))
                : !tu_elem_match(a[i].data, b[i].data, a[i].dtype, e, 0, 0);
    }
  }
  return bad;
}

/* Set by a test to overwrite the deterministic fill (cc_kbufs_alloc_fill) of otu_same/otu_native_same with its own
 * values (the same call for both buffer sets, so it must be a function of seed). */
static void (*otu_refill)(cc_kbuf *bufs, size_t n, uint64_t seed);

static inline hcq_status otu_interp(const uop *sink, cc_kbuf *b, size_t n, const uop_var_val *vals, size_t nvals) {
  void *bufs[32] = {0};
  size_t sizes[32] = {0};
  for (size_t i = 0; i < n; i++) {
    if (b[i].slot < 0 || b[i].slot >= 32) return hcq_status_make(HCQ_CODE_INVALID, "test: slot %d", b[i].slot);
    bufs[b[i].slot] = b[i].data;
    sizes[b[i].slot] = b[i].size_B;
  }
  return cc_interp_run(sink, bufs, sizes, 32, vals, nvals);
}

/* Run ref and test with the interpreter on identically filled buffers; *bad = mismatching elements. */
static inline hcq_status otu_same(const uop *ref, const uop *test, const uop_var_val *vals, size_t nvals,
                                  uint64_t seed, size_t *bad) {
  *bad = SIZE_MAX;
  cc_kbuf *a = NULL, *b = NULL;
  size_t na = 0, nb = 0;
  hcq_status st = cc_kernel_buffers(ref, &a, &na);
  if (!st) st = cc_kernel_buffers(ref, &b, &nb);
  if (!st) st = cc_kbufs_alloc_fill(a, na, seed);
  if (!st) st = cc_kbufs_alloc_fill(b, nb, seed);
  if (!st && otu_refill) {
    otu_refill(a, na, seed);
    otu_refill(b, nb, seed);
  }
  if (!st) st = otu_interp(ref, a, na, vals, nvals);
  if (!st) st = otu_interp(test, b, nb, vals, nvals);
  if (!st) *bad = otu_diff(a, b, na);
  if (a) cc_kbufs_free(a, na);
  if (b) cc_kbufs_free(b, nb);
  return st;
}

/* Compile `kernel` through the whole pipeline with options o, run it natively once per core_id, and compare with
 * the interpreter on the original kernel. */
static inline hcq_status otu_native_same(uop_ctx *ctx, const uop *kernel, const cc_target *t, const cc_options *o,
                                         const uop_var_val *vals, size_t nvals, uint64_t seed, size_t *bad,
                                         cc_program **out_prog) {
  *bad = SIZE_MAX;
  cc_program *p = NULL;
  tu_kernel k = {0};
  cc_kbuf *a = NULL, *b = NULL;
  size_t na = 0, nb = 0;
  hcq_status st = cc_compile_source(ctx, kernel, t, o, &p);
  if (!st) st = cc_compile_binary(t, p);
  if (!st) st = tu_load(p->binary, p->binary_size_B, p->symbol, &k);
  if (!st) st = cc_kernel_buffers(kernel, &a, &na);
  if (!st) st = cc_kernel_buffers(kernel, &b, &nb);
  if (!st) st = cc_kbufs_alloc_fill(a, na, seed);
  if (!st) st = cc_kbufs_alloc_fill(b, nb, seed);
  if (!st && otu_refill) {
    otu_refill(a, na, seed);
    otu_refill(b, nb, seed);
  }
  if (!st) st = otu_interp(kernel, a, na, vals, nvals);
  if (!st && hcq_program_nbufs(&p->desc) + hcq_program_nvars(&p->desc) + 1 > 10)
    st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "test: too many arguments");
  if (!st) {
    uintptr_t args[10];
    int nargs = 0;
    /* the program's own buffer list: a buffer the simplifier made unused is not a parameter */
    for (size_t i = 0; i < hcq_program_nbufs(&p->desc); i++)
      for (size_t j = 0; j < nb; j++)
        if (b[j].slot == p->desc.params[i].slot) args[nargs++] = (uintptr_t)b[j].data;
    for (size_t v = 0; v < hcq_program_nvars(&p->desc); v++)
      for (size_t j = 0; j < nvals; j++)
        if (strcmp(vals[j].name, hcq_program_var(&p->desc, v)->name) == 0) args[nargs++] = (uintptr_t)vals[j].value;
    int64_t threads = 1;
    if ((threads = cc_launch_const(p->desc.global[0])) < 1) threads = 1;
    for (int64_t core = 0; core < threads; core++) {
      args[nargs] = (uintptr_t)core;
      tu_call(&k, args, nargs + 1);
    }
    *bad = otu_diff(a, b, na);
  }
  tu_unload(&k);
  if (a) cc_kbufs_free(a, na);
  if (b) cc_kbufs_free(b, nb);
  if (out_prog && !st) *out_prog = p;
  else cc_program_free(p);
  return st;
}

/* Count nodes of op under root (and, for RANGE, of axis type `axis` if axis >= 0). */
static inline size_t otu_count(uop_ctx *ctx, const uop *root, uop_op op, int axis) {
  const uop **nodes;
  size_t count, n = 0;
  hcq_status st = uop_toposort(ctx, root, &nodes, &count);
  if (st) {
    hcq_status_free(st);
    return SIZE_MAX;
  }
  for (size_t i = 0; i < count; i++)
    if (nodes[i]->op == op && (axis < 0 || (nodes[i]->op == UOP_RANGE && nodes[i]->arg.i2 == axis))) n++;
  return n;
}

/* The first RANGE of axis type `axis` under root, or NULL. */
static inline const uop *otu_range_of(uop_ctx *ctx, const uop *root, uop_axis axis) {
  const uop **nodes;
  size_t count;
  hcq_status st = uop_toposort(ctx, root, &nodes, &count);
  if (st) {
    hcq_status_free(st);
    return NULL;
  }
  for (size_t i = 0; i < count; i++)
    if (nodes[i]->op == UOP_RANGE && nodes[i]->arg.i2 == axis) return nodes[i];
  return NULL;
}

/* ---- checks shared by the optimizer tests (they count in base/testing.h) ---- */

/* interp(ref) == interp(test) on identically filled buffers (seed); `what` names the case in a failure. */
static inline void otu_check_same(const uop *ref, const uop *test, uint64_t seed, const char *what) {
  if (!ref || !test) {
    CHECK(!"kernel missing");
    return;
  }
  size_t bad = 0;
  hcq_status st = otu_same(ref, test, NULL, 0, seed, &bad);
  if (st) fprintf(stderr, "%s: %s\n", what, hcq_status_message(st));
  CHECK(st == HCQ_OK);
  hcq_status_free(st);
  if (bad) fprintf(stderr, "%s: %zu mismatches\n", what, bad);
  CHECK_EQ_INT(bad, 0);
}

/* A kernel text and an opts text ("OP:AXIS:AMT,...", NULL: the heuristic) parsed for a compile: pass `o` (NULL for
 * the heuristic) as the cc_options. Opened by otu_case_open (checks: the parse, and the opts parse when given), freed
 * by otu_case_close; `o` points into the struct, so it is not copied. */
typedef struct otu_case {
  const uop *sink;
  const cc_options *o;
  cc_options co;
  cc_opt *list;
} otu_case;

/* Whether both parsed. */
static inline bool otu_case_open(uop_ctx *ctx, const char *text, const char *opts, otu_case *c) {
  memset(c, 0, sizeof *c);
  CHECK_OK(cc_kernel_parse(ctx, text, strlen(text), "<test>", &c->sink));
  size_t n = 0;
  bool ok = c->sink != NULL;
  if (opts) {
    hcq_status st = cc_opts_parse(opts, &c->list, &n);
    ok &= !st;
    CHECK_OK(st);
  }
  c->co = (cc_options){.opts = c->list, .nopts = n};
  c->o = opts ? &c->co : NULL;
  return ok;
}

static inline void otu_case_close(otu_case *c) {
  free(c->list);
  memset(c, 0, sizeof *c);
}

/* otu_native_same on a kernel text: parse, compile with options o (NULL: the heuristic), run, compare. For a caller
 * that makes its own checks (one status for the whole case). */
static inline hcq_status otu_text_native_same(uop_ctx *ctx, const char *text, const cc_target *t, const cc_options *o,
                                              const uop_var_val *vals, size_t nvals, uint64_t seed, size_t *bad,
                                              cc_program **out_prog) {
  *bad = SIZE_MAX;
  const uop *sink = NULL;
  HCQ_TRY(cc_kernel_parse(ctx, text, strlen(text), "<test>", &sink));
  return otu_native_same(ctx, sink, t, o, vals, nvals, seed, bad, out_prog);
}

/* `kernel` compiled with opts (NULL: the heuristic) and run natively with vars vals equals the interpreter; *out_prog
 * (may be NULL) gets the program. Checks: the opts parse when given, the run, no mismatch. Returns the mismatches
 * (SIZE_MAX: it did not run), for the caller's own message. */
static inline size_t otu_check_native_vals(uop_ctx *ctx, const uop *kernel, const cc_target *t, const char *opts,
                                           const uop_var_val *vals, size_t nvals, uint64_t seed,
                                           cc_program **out_prog) {
  cc_opt *list = NULL;
  size_t n = 0, bad = SIZE_MAX;
  if (opts) CHECK_OK(cc_opts_parse(opts, &list, &n));
  cc_options co = {.opts = list, .nopts = n};
  CHECK_OK(otu_native_same(ctx, kernel, t, opts ? &co : NULL, vals, nvals, seed, &bad, out_prog));
  if (bad) fprintf(stderr, "native %s: %zu mismatches\n", opts ? opts : "heuristic", bad);
  CHECK_EQ_INT(bad, 0);
  free(list);
  return bad;
}

static inline size_t otu_check_native(uop_ctx *ctx, const uop *kernel, const cc_target *t, const char *opts,
                                      uint64_t seed, cc_program **out_prog) {
  return otu_check_native_vals(ctx, kernel, t, opts, NULL, 0, seed, out_prog);
}

/* otu_check_native_vals on a kernel text: checks its parse first (a failed parse runs nothing: SIZE_MAX). */
static inline size_t otu_check_text(uop_ctx *ctx, const char *text, const cc_target *t, const char *opts,
                                    const uop_var_val *vals, size_t nvals, uint64_t seed, cc_program **out_prog) {
  const uop *sink = NULL;
  CHECK_OK(cc_kernel_parse(ctx, text, strlen(text), "<test>", &sink));
  if (!sink) return SIZE_MAX;
  return otu_check_native_vals(ctx, sink, t, opts, vals, nvals, seed, out_prog);
}

/* Applying opts to `text` is refused (HCQ_CODE_INVALID) with a message that names the opt and contains needle. */
static inline void otu_expect_err(uop_ctx *ctx, const char *text, const cc_target *t, const char *opts,
                                  const char *needle) {
  const uop *s = NULL, *out = NULL;
  CHECK_OK(otu_prep(ctx, text, t, &s));
  if (!s) return;
  hcq_status st = otu_opt(ctx, s, t, opts, &out, NULL, NULL);
  bool ok = st && hcq_status_code(st) == HCQ_CODE_INVALID && strstr(hcq_status_message(st), needle);
  if (!ok) fprintf(stderr, "opts %s: expected error \"%s\", got \"%s\"\n", opts, needle, st ? hcq_status_message(st) : "ok");
  CHECK(ok);
  if (st) CHECK(strstr(hcq_status_message(st), "opt ") != NULL);
  hcq_status_free(st);
}

#endif
