/* hcq bench [--dev cpu] [--json] [--quick] [--threads N] [--only NAME[,NAME...]] [--repeat N] [--beam N]: the main
 * job.
 *
 * A fixed suite of kernels compiled by the compiler (c target, hand-coded heuristic) and run on the CPU device
 * through hcq queues. Every result is verified against a direct C reference (in full, or on a sample of rows /
 * entries for the large reductions and matmuls). Baselines are measured in the same run on the same threads, each
 * as many times as the kernel it is compared with was timed, both sides reported as the median of their runs; the
 * pool baselines run interleaved with the kernel's runs (base_once), OpenBLAS as a block after them:
 * elementwise kernels against the best of two STREAM loops (plain and non-temporal stores), matmul against
 * OpenBLAS sgemm (dlopen'd; null when not installed), sum, row_sum, col_sum(_tall) and softmax against plain
 * vectorized C loops on the pool, transpose against STREAM copy (its goal) with a hand-tuned C transpose and
 * OpenBLAS's somatcopy shown beside it, launch overhead against the worker pool's own round trip.
 * --quick uses small sizes (tests). --beam N (or $BEAM): each kernel row also runs with the opts a BEAM search
 * picks (checked against the row's heuristic kernel on the same inputs) and reports both. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/toolchain.h"
#include "hcq/graph.h"
#include "tools/beam_cli.h"
#include "tools/cli_args.h"
#include "tools/bench_base.h"
#include "tools/bench_dev.h"
#include "hcq/rt_krun.h"
#include "tools/bench_machine.h"
#include "tools/bench_simd.h"
#include "tools/bench_transpose.h"
#include "tools/verbs.h"

typedef struct bres {
  const char *name, *metric;
  char size[32];
  double value;
  const char *baseline; /* NULL: none */
  double baseline_value;
  char baseline_config[256]; /* what the baseline ran (ISA, library and core, stores), printed with the result */
  bool verified;
  char *opts; /* the applied opts (bres_set_opts; NULL prints as "-"), never cut: the table's column grows to it */
  double compile_ms, run_ms;
  int reps; /* timed runs behind run_ms (time_runs): the baseline compared with it runs as many times */
  char note[160];
  /* baselines shown beside the row's own but not its ratio (transpose: a hand-tuned C transpose and OpenBLAS's
   * somatcopy, against a goal stated for STREAM copy) */
  struct bres_also {
    const char *name;
    double value;
    char config[256];
  } also[2];
  int nalso;
  double p50, p90, p99; /* launch: latency percentiles (us) of its first run; 0 elsewhere */
  /* --repeat N: the spread over the runs (value above is their median) */
  int runs;
  double value_min, value_max, ratio_min, ratio_max;
  /* --beam: the same kernel with the BEAM winner's opts (value in the row's metric) */
  bool has_beam, beam_verified, beam_cache_hit;
  double beam_value, beam_run_ms, beam_search_s;
  char *beam_opts;
} bres;

typedef struct bench {
  cpu_device *dev;
  int threads;
  bool quick, json;
  double budget_s; /* time per kernel for repetitions */
  int repeat;      /* whole-suite runs (--repeat) */
  int beam;        /* --beam width, 0 = off */
  long long beam_s; /* --beam-seconds, 0 = default */
  hcq_rt_device *rd; /* the CPU device for the searches */
  char machine[512]; /* bench_machine_line */
  bres *res;
  size_t nres, cap;
  size_t nmade; /* results ever made (at least nres: --repeat folds the runs back to one): the ones to free */
  int failures;
} bench;

static bres *new_result(bench *b, const char *name, const char *metric) {
  if (b->nres == b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 16;
    bres *r = realloc(b->res, cap * sizeof *r);
    if (!r) return NULL;
    b->res = r;
    b->cap = cap;
  }
  bres *r = &b->res[b->nres++];
  if (b->nres > b->nmade) b->nmade = b->nres;
  else free(r->opts), free(r->beam_opts); /* a slot reused */
  memset(r, 0, sizeof *r);
  r->name = name;
  r->metric = metric;
  return r;
}

/* *dst = a copy of s ("-" when empty or NULL; NULL when out of memory, printed as "-" too). */
static void bres_set_opts(char **dst, const char *s) {
  free(*dst);
  *dst = strdup(s && *s ? s : "-");
}

static const char *opts_or_dash(const char *s) { return s ? s : "-"; }

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, c = *(const double *)y;
  return a < c ? -1 : a > c;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return v[n / 2];
}

/* ------------------------------------------------------------------------------------------------ kernels */

static char *fmt_kernel(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *fmt_kernel(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = NULL;
  if (vasprintf(&s, fmt, ap) < 0) s = NULL;
  va_end(ap);
  return s;
}

static char *k_add(long n) {
  return fmt_kernel("(kernel add (let out (buf 0 float32 %ld)) (let a (buf 1 float32 %ld)) (let b (buf 2 float32 %ld))"
                    " (let r0 (range 0 %ld loop))"
                    " (sink (store (index out r0) (+ (load (index a r0)) (load (index b r0))) r0)))",
                    n, n, n, n);
}
static char *k_saxpy(long n) {
  return fmt_kernel("(kernel saxpy (let y (buf 0 float32 %ld)) (let x (buf 1 float32 %ld)) (let n (var n 1 %ld index))"
                    " (let r0 (range 0 n loop)) (let yi (index y r0))"
                    " (sink (store yi (+ (* (load (index x r0)) 2.5) (load yi)) r0)))",
                    n, n, n);
}
static char *k_sum(long n) {
  return fmt_kernel("(kernel sum (let out (buf 0 float32 1)) (let x (buf 1 float32 %ld))"
                    " (let r (range 1000 %ld reduce)) (sink (store (index out 0) (reduce add (load (index x r)) r))))",
                    n, n);
}
static char *k_softmax(long rows, long cols) {
  return fmt_kernel(
      "(kernel softmax (let out (buf 0 float32 %ld)) (let x (buf 1 float32 %ld))"
      " (let r0 (range 0 %ld loop)) (let r1 (range 1 %ld loop))"
      " (let r1001 (range 1001 %ld reduce)) (let r1002 (range 1002 %ld reduce)) (let row (* r0 %ld))"
      " (let negmax (* (reduce max (load (index x (+ row r1001))) r1001) -1.0))"
      " (let sum (reduce add (exp2 (* (+ (load (index x (+ row r1002))) negmax) 1.442695)) r1002))"
      " (sink (store (index out (+ row r1)) (* (exp2 (* (+ (load (index x (+ row r1))) negmax) 1.442695))"
      " (recip sum)) r0 r1)))",
      rows * cols, rows * cols, rows, cols, cols, cols, cols);
}
/* out[i] = sum of row i of x (rows x cols, row-major) */
static char *k_row_sum(long rows, long cols) {
  return fmt_kernel("(kernel row_sum (let out (buf 0 float32 %ld)) (let x (buf 1 float32 %ld))"
                    " (let r0 (range 0 %ld loop)) (let r1000 (range 1000 %ld reduce))"
                    " (sink (store (index out r0) (reduce add (load (index x (+ (* r0 %ld) r1000))) r1000) r0)))",
                    rows, rows * cols, rows, cols, cols);
}
/* out[j] = sum of column j of x (rows x cols, row-major) */
static char *k_col_sum(long rows, long cols) {
  return fmt_kernel("(kernel col_sum (let out (buf 0 float32 %ld)) (let x (buf 1 float32 %ld))"
                    " (let r0 (range 0 %ld loop)) (let r1000 (range 1000 %ld reduce))"
                    " (sink (store (index out r0) (reduce add (load (index x (+ (* r1000 %ld) r0))) r1000) r0)))",
                    cols, rows * cols, cols, rows, cols);
}
/* batch independent products c (m x n) = a (m x kk) * b (kk x n), row-major, one after the other */
static char *k_matmul(long batch, long m, long kk, long n) {
  if (batch == 1)
    return fmt_kernel("(kernel matmul (let c (buf 0 float32 %ld)) (let a (buf 1 float32 %ld)) (let b (buf 2 float32 %ld))"
                      " (let r0 (range 0 %ld loop)) (let r1 (range 1 %ld loop)) (let k (range 1002 %ld reduce))"
                      " (sink (store (index c (+ (* r0 %ld) r1))"
                      " (reduce add (* (load (index a (+ (* r0 %ld) k))) (load (index b (+ (* k %ld) r1)))) k) r0 r1)))",
                      m * n, m * kk, kk * n, m, n, kk, n, kk, n);
  return fmt_kernel("(kernel matmul (let c (buf 0 float32 %ld)) (let a (buf 1 float32 %ld)) (let b (buf 2 float32 %ld))"
                    " (let r0 (range 0 %ld loop)) (let r1 (range 1 %ld loop)) (let r2 (range 2 %ld loop))"
                    " (let k (range 1003 %ld reduce))"
                    " (sink (store (index c (+ (+ (* r0 %ld) (* r1 %ld)) r2))"
                    " (reduce add (* (load (index a (+ (+ (* r0 %ld) (* r1 %ld)) k)))"
                    " (load (index b (+ (+ (* r0 %ld) (* k %ld)) r2)))) k) r0 r1 r2)))",
                    batch * m * n, batch * m * kk, batch * kk * n, batch, m, n, kk, m * n, n, m * kk, kk, kk * n, n);
}
static char *k_transpose(long n) {
  return fmt_kernel("(kernel transpose (let out (buf 0 float32 %ld)) (let x (buf 1 float32 %ld))"
                    " (let r0 (range 0 %ld loop)) (let r1 (range 1 %ld loop))"
                    " (sink (store (index out (+ (* r1 %ld) r0)) (load (index x (+ (* r0 %ld) r1))) r0 r1)))",
                    n * n, n * n, n, n, n, n);
}
static const char *k_inc = "(kernel inc (let out (buf 0 float32 1))"
                           " (sink (store (index out 0) (+ (load (index out 0)) 1.0))))";

/* ------------------------------------------------------------------------------------------------ running */

/* Compile + set up + fill; fills r's compile/opts fields. */
static hcq_status prepare(bench *b, krun *k, const char *text, bres *r) {
  if (!text) return hcq_status_make(HCQ_CODE_NOMEM, "kernel text");
  HCQ_TRY(krun_compile_text(k, text, NULL, b->threads));
  HCQ_TRY(krun_setup(k, b->dev));
  krun_fill(k, 11);
  r->compile_ms = k->compile_ms;
  char *o = krun_opts_text(k);
  bres_set_opts(&r->opts, o);
  free(o);
  return HCQ_OK;
}

/* A row's pool baseline run once after each timed kernel run (kernel, baseline, kernel, baseline, ...), so that both
 * sides sample the same moments: on a shared machine the memory bandwidth drifts within a row (a 64 MiB sum went
 * from 2.4 to 1.6 ms over 15 runs), and a baseline timed as a block after the kernel's runs got the later half. Up to
 * four variants (STREAM's plain and non-temporal loops, the column sum's two splits, transpose's two hand-tuned loops),
 * each the median of its runs.
 * Not for OpenBLAS: its own threads keep spinning after a call, on the cores the next kernel run needs. */
#define BASE_MAX_VARIANTS 4
typedef struct base_once {
  hcq_status (*run)(bench *b, void *ctx, int variant, double *out_s); /* one run of the variant, in seconds */
  void *ctx;
  int nvariants; /* 1..BASE_MAX_VARIANTS */
  double median_s[BASE_MAX_VARIANTS];
} base_once;

/* After the first (verified) run: repeat within the time budget, median kernel time in ms; *out_reps (if given) is
 * the number of timed runs. With bo, its baseline runs interleaved (above) and bo->median_s gets their medians. */
static hcq_status time_runs(bench *b, krun *k, double first_ms, double *out_ms, int *out_reps, base_once *bo) {
  int reps = first_ms > 0 ? (int)(b->budget_s * 1000 / first_ms) : 10;
  reps = reps < 1 ? 1 : reps > 15 ? 15 : reps;
  double t[16], u[BASE_MAX_VARIANTS][16];
  int nv = bo ? bo->nvariants : 0;
  for (int i = 0; i < reps; i++) {
    HCQ_TRY(krun_exec(k, 120000, &t[i]));
    for (int v = 0; v < nv; v++) HCQ_TRY(bo->run(b, bo->ctx, v, &u[v][i]));
  }
  *out_ms = median(t, reps);
  for (int v = 0; v < nv; v++) bo->median_s[v] = median(u[v], reps);
  if (out_reps) *out_reps = reps;
  return HCQ_OK;
}

static float *f32(krun *k, int slot) { return (float *)krun_buf(k, slot)->data; }

static bool close_to(double got, double want, double rel, double abs) { return fabs(got - want) <= rel * fabs(want) + abs; }

/* STREAM baseline (variant 0 plain, 1 non-temporal stores): c = a + b, or a copy when b is NULL. */
typedef struct stream_args {
  float *c;
  const float *a, *b;
  size_t n;
} stream_args;

static hcq_status stream_once(bench *b, void *ctx, int variant, double *out_s) {
  const stream_args *s = ctx;
  return bench_stream(cpu_device_pool(b->dev), b->threads, s->c, s->a, s->b, s->n, variant == 1, 1, out_s);
}

/* The row's baseline from the interleaved STREAM runs: the better of plain and non-temporal stores. */
static void stream_report(bench *b, bres *r, const base_once *bo, bool add, double bytes) {
  double plain = bo->median_s[0], nt = bo->median_s[1];
  bool nt_wins = nt < plain;
  r->baseline = add ? (nt_wins ? "stream_add_nt" : "stream_add") : (nt_wins ? "stream_copy_nt" : "stream_copy");
  snprintf(r->baseline_config, sizeof r->baseline_config,
           "STREAM %s loop, best of plain (%.2f GB/s) and non-temporal stores (%.2f GB/s), %d threads",
           add ? "add" : "copy", bytes / plain / 1e9, bytes / nt / 1e9, b->threads);
  r->baseline_value = bytes / (nt_wins ? nt : plain) / 1e9;
}

static hcq_status bench_add(bench *b, long n) {
  bres *r = new_result(b, "add", "GB/s");
  if (!r) return hcq_status_make(HCQ_CODE_NOMEM, "result");
  krun k = {0};
  char *text = k_add(n);
  snprintf(r->size, sizeof r->size, "%ld", n);
  hcq_status st = prepare(b, &k, text, r);
  double ms = 0;
  if (!st) st = krun_exec(&k, 120000, &ms);
  if (!st) {
    const float *o = f32(&k, 0), *x = f32(&k, 1), *y = f32(&k, 2);
    size_t bad = 0;
    for (long i = 0; i < n; i++) bad += o[i] != x[i] + y[i];
    r->verified = bad == 0;
  }
  /* the baseline writes the kernel's output buffer (checked above) */
  stream_args sa = {st ? NULL : f32(&k, 0), st ? NULL : f32(&k, 1), st ? NULL : f32(&k, 2), (size_t)n};
  base_once bo = {stream_once, &sa, 2, {0, 0}};
  if (!st) st = time_runs(b, &k, ms, &r->run_ms, &r->reps, &bo);
  double bytes = 3.0 * 4 * (double)n;
  if (!st) r->value = bytes / (r->run_ms / 1e3) / 1e9;
  if (!st) stream_report(b, r, &bo, true, bytes);
  krun_free(&k);
  free(text);
  return st;
}

static hcq_status bench_saxpy(bench *b, long n) {
  bres *r = new_result(b, "saxpy", "GB/s");
  if (!r) return hcq_status_make(HCQ_CODE_NOMEM, "result");
  krun k = {0};
  char *text = k_saxpy(n);
  /* the stream baseline writes into y0 with 16-byte vector stores: malloc aligns to 8 bytes on 32-bit hosts */
  float *y0 = aligned_alloc(64, ((size_t)n * 4 + 63) & ~(size_t)63);
  snprintf(r->size, sizeof r->size, "%ld", n);
  hcq_status st = y0 ? prepare(b, &k, text, r) : hcq_status_make(HCQ_CODE_NOMEM, "saxpy copy");
  long run_n = n - 3; /* a length that is not a multiple of any vector width */
  if (!st) st = krun_set_vars(&k, &(uop_var_val){"n", run_n}, 1);
  double ms = 0;
  if (!st) {
    memcpy(y0, f32(&k, 0), (size_t)n * 4);
    st = krun_exec(&k, 120000, &ms);
  }
  if (!st) {
    const float *y = f32(&k, 0), *x = f32(&k, 1);
    size_t bad = 0;
    for (long i = 0; i < n; i++) bad += !close_to(y[i], i < run_n ? 2.5 * x[i] + y0[i] : y0[i], 1e-6, 0);
    r->verified = bad == 0;
  }
  stream_args sa = {y0, st ? NULL : f32(&k, 1), st ? NULL : f32(&k, 0), (size_t)run_n};
  base_once bo = {stream_once, &sa, 2, {0, 0}};
  if (!st) st = time_runs(b, &k, ms, &r->run_ms, &r->reps, &bo);
  double bytes = 3.0 * 4 * (double)run_n;
  if (!st) r->value = bytes / (r->run_ms / 1e3) / 1e9;
  if (!st) stream_report(b, r, &bo, true, bytes);
  krun_free(&k);
  free(text);
  free(y0);
  return st;
}

typedef struct sum_args {
  const float *x;
  size_t n;
  double got; /* the baseline's sum */
} sum_args;

static hcq_status sum_once(bench *b, void *ctx, int variant, double *out_s) {
  (void)variant;
  sum_args *s = ctx;
  return bench_base_sum(cpu_device_pool(b->dev), b->threads, s->x, s->n, 1, out_s, &s->got);
}

static hcq_status bench_sum(bench *b, long n) {
  bres *r = new_result(b, "sum", "GB/s");
  if (!r) return hcq_status_make(HCQ_CODE_NOMEM, "result");
  krun k = {0};
  char *text = k_sum(n);
  snprintf(r->size, sizeof r->size, "%ld", n);
  hcq_status st = prepare(b, &k, text, r);
  double ms = 0;
  if (!st) st = krun_exec(&k, 120000, &ms);
  if (!st) {
    const float *x = f32(&k, 1);
    double want = 0, mag = 0;
    for (long i = 0; i < n; i++) want += x[i], mag += fabs(x[i]);
    r->verified = close_to(f32(&k, 0)[0], want, 0, 1e-6 * mag + 1e-6);
  }
  sum_args sa = {st ? NULL : f32(&k, 1), (size_t)n, 0};
  base_once bo = {sum_once, &sa, 1, {0, 0}};
  if (!st) st = time_runs(b, &k, ms, &r->run_ms, &r->reps, &bo);
  if (!st) {
    r->value = 4.0 * (double)n / (r->run_ms / 1e3) / 1e9;
    r->baseline = "c_sum_simd";
    snprintf(r->baseline_config, sizeof r->baseline_config, "C loop, %s vector accumulators, %d threads",
             bench_simd_sum_isa(), b->threads);
    r->baseline_value = 4.0 * (double)n / bo.median_s[0] / 1e9;
    double mag = 0; /* two float sums of rounding values differ by up to their rounding: scale by sum |x| */
    for (long i = 0; i < n; i++) mag += fabs(f32(&k, 1)[i]);
    if (!close_to(sa.got, f32(&k, 0)[0], 1e-5, 1e-6 * mag + 1e-3))
      snprintf(r->note, sizeof r->note, "baseline sum %g differs", sa.got);
  }
  krun_free(&k);
  free(text);
  return st;
}

/* Row-wise baselines' arguments: out (rows for softmax, one per row or column for the sums) from x. */
typedef struct rows_args {
  float *out;
  const float *x;
  size_t rows, cols;
} rows_args;

static hcq_status softmax_once(bench *b, void *ctx, int variant, double *out_s) {
  (void)variant;
  const rows_args *a = ctx;
  return bench_base_softmax(cpu_device_pool(b->dev), b->threads, a->out, a->x, a->rows, a->cols, 1, out_s);
}

static hcq_status row_sum_once(bench *b, void *ctx, int variant, double *out_s) {
  (void)variant;
  const rows_args *a = ctx;
  return bench_base_row_sum(cpu_device_pool(b->dev), b->threads, a->out, a->x, a->rows, a->cols, 1, out_s);
}

/* variant 0: columns split over the threads, 1: rows split (its partial sums added after the join) */
static hcq_status col_sum_once(bench *b, void *ctx, int variant, double *out_s) {
  const rows_args *a = ctx;
  return bench_base_col_sum(cpu_device_pool(b->dev), b->threads, variant == 1, a->out, a->x, a->rows, a->cols, 1,
                            out_s);
}

static hcq_status bench_softmax(bench *b, long rows, long cols) {
  bres *r = new_result(b, "softmax", "GB/s");
  if (!r) return hcq_status_make(HCQ_CODE_NOMEM, "result");
  krun k = {0};
  char *text = k_softmax(rows, cols);
  snprintf(r->size, sizeof r->size, "%ldx%ld", rows, cols);
  hcq_status st = prepare(b, &k, text, r);
  double ms = 0;
  if (!st) st = krun_exec(&k, 120000, &ms);
  if (!st) {
    const float *o = f32(&k, 0), *x = f32(&k, 1);
    size_t bad = 0;
    long step = rows > 64 ? rows / 64 : 1; /* 64 sampled rows */
    for (long row = 0; row < rows; row += step) {
      const float *xr = x + row * cols;
      double mx = -INFINITY, s = 0;
      for (long j = 0; j < cols; j++) mx = xr[j] > mx ? xr[j] : mx;
      for (long j = 0; j < cols; j++) s += exp(xr[j] - mx);
      for (long j = 0; j < cols; j++) bad += !close_to(o[row * cols + j], exp(xr[j] - mx) / s, 1e-4, 1e-7);
    }
    r->verified = bad == 0;
  }
  float *o2 = st ? NULL : malloc((size_t)(rows * cols) * 4);
  if (!st && !o2) st = hcq_status_make(HCQ_CODE_NOMEM, "softmax baseline output");
  rows_args ra = {o2, st ? NULL : f32(&k, 1), (size_t)rows, (size_t)cols};
  base_once bo = {softmax_once, &ra, 1, {0, 0}};
  if (!st) st = time_runs(b, &k, ms, &r->run_ms, &r->reps, &bo);
  if (!st) r->value = 8.0 * (double)(rows * cols) / (r->run_ms / 1e3) / 1e9;
  snprintf(r->note, sizeof r->note, "bytes = read x + write out");
  double s = bo.median_s[0];
  if (!st) {
    r->baseline = "c_softmax_simd";
    snprintf(r->baseline_config, sizeof r->baseline_config, "C loop, %s, %d threads", bench_simd_softmax_isa(),
             b->threads);
    r->baseline_value = 8.0 * (double)(rows * cols) / s / 1e9;
    size_t bad = 0;
    for (long i = 0; i < rows * cols; i += 101) bad += !close_to(o2[i], f32(&k, 0)[i], 1e-4, 1e-7);
    if (bad) snprintf(r->note, sizeof r->note, "baseline disagrees on %zu sampled entries", bad);
  }
  free(o2);
  krun_free(&k);
  free(text);
  return st;
}

/* A float32 dot product of n rounding terms is off by about sqrt(n) roundings of sum |a*b| (the order of the
 * additions, blocked or fused, moves it): the bound the matmul checks use. */
static double matmul_tol(long n, double mag) { return sqrt((double)n) * 0x1p-22 * mag + 1e-6; }

/* Row sums (by_cols false: out[i] = sum_j x[i][j]) or column sums (out[j] = sum_i x[i][j]) of a rows x cols matrix,
 * every output checked against a double sum; GB/s of x read. Baselines: rows split over the threads (row sums), or
 * the faster of columns and rows split (column sums; the config says which). */
static hcq_status bench_reduce2d(bench *b, const char *name, bool by_cols, long rows, long cols) {
  bres *r = new_result(b, name, "GB/s");
  if (!r) return hcq_status_make(HCQ_CODE_NOMEM, "result");
  krun k = {0};
  char *text = by_cols ? k_col_sum(rows, cols) : k_row_sum(rows, cols);
  snprintf(r->size, sizeof r->size, "%ldx%ld", rows, cols);
  hcq_status st = prepare(b, &k, text, r);
  long nout = by_cols ? cols : rows, nred = by_cols ? rows : cols;
  double ms = 0;
  if (!st) st = krun_exec(&k, 120000, &ms);
  double *want = NULL, *mag = NULL;
  if (!st && (!(want = calloc((size_t)nout, sizeof *want)) || !(mag = calloc((size_t)nout, sizeof *mag))))
    st = hcq_status_make(HCQ_CODE_NOMEM, "reduce reference");
  if (!st) {
    const float *o = f32(&k, 0), *x = f32(&k, 1);
    for (long i = 0; i < rows; i++)
      for (long j = 0; j < cols; j++) {
        long e = by_cols ? j : i;
        want[e] += x[i * cols + j];
        mag[e] += fabs(x[i * cols + j]);
      }
    size_t bad = 0;
    for (long e = 0; e < nout; e++) bad += !close_to(o[e], want[e], 0, matmul_tol(nred, mag[e]));
    r->verified = bad == 0;
  }
  double bytes = 4.0 * (double)rows * (double)cols;
  float *o2 = st ? NULL : aligned_alloc(64, ((size_t)nout * 4 + 63) & ~(size_t)63);
  if (!st && !o2) st = hcq_status_make(HCQ_CODE_NOMEM, "reduce baseline output");
  rows_args ra = {o2, st ? NULL : f32(&k, 1), (size_t)rows, (size_t)cols};
  base_once bo = {by_cols ? col_sum_once : row_sum_once, &ra, by_cols ? 2 : 1, {0, 0}};
  if (!st) st = time_runs(b, &k, ms, &r->run_ms, &r->reps, &bo);
  if (!st) r->value = bytes / (r->run_ms / 1e3) / 1e9;
  double s = bo.median_s[0];
  if (!st && !by_cols) {
    r->baseline = "c_row_sum_simd";
    snprintf(r->baseline_config, sizeof r->baseline_config,
             "C loop, %s vector accumulators per row, rows split over %d threads", bench_simd_sum_isa(), b->threads);
  } else if (!st) {
    double s_rows = bo.median_s[1];
    r->baseline = "c_col_sum_simd";
    snprintf(r->baseline_config, sizeof r->baseline_config,
             "C loop, %s vector accumulators across the columns, %d threads, best of columns split (%.2f GB/s) and "
             "rows split (%.2f GB/s)", bench_simd_col_isa(), b->threads, bytes / s / 1e9, bytes / s_rows / 1e9);
    if (s_rows < s) s = s_rows; /* o2 holds the rows-split result (run last); both are checked the same way */
  }
  if (!st) {
    r->baseline_value = bytes / s / 1e9;
    size_t bad = 0;
    for (long e = 0; e < nout; e++) bad += !close_to(o2[e], want[e], 0, matmul_tol(nred, mag[e]));
    if (bad) snprintf(r->note, sizeof r->note, "baseline disagrees on %zu outputs", bad);
  }
  free(o2);
  free(want);
  free(mag);
  krun_free(&k);
  free(text);
  return st;
}

static hcq_status bench_matmul(bench *b, const char *name, long batch, long m, long kk, long n) {
  bres *r = new_result(b, name, "GFLOP/s");
  if (!r) return hcq_status_make(HCQ_CODE_NOMEM, "result");
  krun k = {0};
  char *text = k_matmul(batch, m, kk, n);
  if (batch > 1) snprintf(r->size, sizeof r->size, "%ldx%ldx%ldx%ld", batch, m, kk, n);
  else if (m == kk && kk == n) snprintf(r->size, sizeof r->size, "%ldx%ld", n, n);
  else snprintf(r->size, sizeof r->size, "%ldx%ldx%ld", m, kk, n);
  size_t sa = (size_t)(m * kk), sb = (size_t)(kk * n), sc = (size_t)(m * n);
  hcq_status st = prepare(b, &k, text, r);
  double ms = 0;
  if (!st) st = krun_exec(&k, 120000, &ms);
  if (!st) {
    const float *c = f32(&k, 0), *a = f32(&k, 1), *bb = f32(&k, 2);
    size_t bad = 0;
    uint64_t s = 12345;
    for (int t = 0; t < 512; t++) { /* sampled entries */
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      long p = (long)((s >> 45) % (uint64_t)batch), i = (long)((s >> 25) % (uint64_t)m), j = (long)((s >> 5) % (uint64_t)n);
      const float *ap = a + (size_t)p * sa, *bp = bb + (size_t)p * sb;
      double want = 0, mag = 0;
      for (long q = 0; q < kk; q++) want += (double)ap[i * kk + q] * bp[q * n + j], mag += fabs((double)ap[i * kk + q] * bp[q * n + j]);
      bad += !close_to(c[(size_t)p * sc + (size_t)(i * n + j)], want, 1e-5, matmul_tol(kk, mag));
    }
    r->verified = bad == 0;
    st = time_runs(b, &k, ms, &r->run_ms, &r->reps, NULL); /* OpenBLAS after, as a block (base_once) */
  }
  double flop = 2.0 * (double)batch * (double)m * (double)kk * (double)n;
  if (!st) r->value = flop / (r->run_ms / 1e3) / 1e9;
  if (!st) {
    bool have = false;
    double s = 0;
    float *c2 = malloc(sc * (size_t)batch * 4);
    if (!c2) st = hcq_status_make(HCQ_CODE_NOMEM, "sgemm output");
    if (!st) st = bench_openblas_sgemm_batched(b->threads, (int)batch, (int)m, (int)kk, (int)n, f32(&k, 1), f32(&k, 2),
                                               c2, r->reps, &have, &s);
    if (!st && have) {
      r->baseline = "openblas_sgemm";
      snprintf(r->baseline_config, sizeof r->baseline_config, "%s, %d threads%s", bench_openblas_describe(),
               b->threads, batch > 1 ? ", one cblas_sgemm per product" : "");
      r->baseline_value = flop / s / 1e9;
      size_t bad = 0;
      for (size_t e = 0; e < sc * (size_t)batch; e += 97) {
        size_t p = e / sc, i = (e % sc) / (size_t)n, j = (e % sc) % (size_t)n;
        const float *ap = f32(&k, 1) + p * sa, *bp = f32(&k, 2) + p * sb;
        double mag = 0;
        for (long q = 0; q < kk; q++) mag += fabs((double)ap[i * (size_t)kk + (size_t)q] * bp[(size_t)q * (size_t)n + j]);
        bad += !close_to(c2[e], f32(&k, 0)[e], 1e-5, 2 * matmul_tol(kk, mag));
      }
      if (bad) snprintf(r->note, sizeof r->note, "openblas disagrees on %zu sampled entries", bad);
    } else if (!st) {
      snprintf(r->note, sizeof r->note, "baseline null: libopenblas.so.0 not found (apt-get install libopenblas0)");
    }
    free(c2);
  }
  krun_free(&k);
  free(text);
  return st;
}

/* Transpose's pool baselines: STREAM copy (variants 0, 1: the goal's baseline) and the hand-tuned C transpose in its
 * two shapes (2 blocked, 3 strips). */
typedef struct transpose_args {
  stream_args copy;
  float *out;
  long n;
} transpose_args;

static hcq_status transpose_once(bench *b, void *ctx, int variant, double *out_s) {
  transpose_args *t = ctx;
  if (variant < 2) return stream_once(b, &t->copy, variant, out_s);
  return bench_base_transpose(cpu_device_pool(b->dev), b->threads, variant == 3, t->out, t->copy.a, (size_t)t->n,
                              (size_t)t->n, 1, out_s);
}

static bool is_transpose(const float *out, const float *x, long n) {
  for (long i = 0; i < n; i++)
    for (long j = 0; j < n; j++)
      if (memcmp(&out[j * n + i], &x[i * n + j], sizeof *x)) return false;
  return true;
}

/* An extra baseline for the row's note and the baselines section (r->also; not the row's ratio). */
static void add_also(bres *r, const char *name, double value, const char *config) {
  if (r->nalso >= (int)(sizeof r->also / sizeof *r->also)) return;
  struct bres_also *a = &r->also[r->nalso++];
  a->name = name;
  a->value = value;
  snprintf(a->config, sizeof a->config, "%s", config);
}

static hcq_status bench_transpose(bench *b, long n) {
  bres *r = new_result(b, "transpose", "GB/s");
  if (!r) return hcq_status_make(HCQ_CODE_NOMEM, "result");
  krun k = {0};
  char *text = k_transpose(n);
  snprintf(r->size, sizeof r->size, "%ldx%ld", n, n);
  hcq_status st = prepare(b, &k, text, r);
  double ms = 0;
  if (!st) st = krun_exec(&k, 120000, &ms);
  if (!st) r->verified = is_transpose(f32(&k, 0), f32(&k, 1), n);
  hcq_mem m = {0};
  if (!st) st = cpu_device_alloc(b->dev, (size_t)(n * n) * 4, &m);
  transpose_args ta = {{m.host, st ? NULL : f32(&k, 1), NULL, (size_t)(n * n)}, m.host, n};
  base_once bo = {transpose_once, &ta, 4, {0, 0, 0, 0}};
  if (!st) st = time_runs(b, &k, ms, &r->run_ms, &r->reps, &bo);
  double bytes = 2.0 * 4 * (double)(n * n);
  if (!st) {
    r->value = bytes / (r->run_ms / 1e3) / 1e9;
    stream_report(b, r, &bo, false, bytes);
  }
  char cfg[256];
  /* each shape's output checked: the strips ran last in each timed step; the blocked tiles once more */
  bool both = !st && is_transpose(m.host, f32(&k, 1), n);
  double again = 0;
  if (both) {
    memset(m.host, 0, (size_t)(n * n) * 4);
    st = transpose_once(b, &ta, 2, &again);
    both = !st && is_transpose(m.host, f32(&k, 1), n);
  }
  if (both) {
    double blocked = bytes / bo.median_s[2] / 1e9, strips = bytes / bo.median_s[3] / 1e9;
    snprintf(cfg, sizeof cfg, "C loop, %s, non-temporal line stores, %d threads, best of 16x16 tiles in %dx%d blocks "
             "(%.2f GB/s) and 16x4 strips (%.2f GB/s)", bench_base_transpose_isa(), b->threads,
             BENCH_TRANSPOSE_BLOCK_ROWS, BENCH_TRANSPOSE_BLOCK_COLS, blocked, strips);
    add_also(r, "c_transpose_simd", blocked > strips ? blocked : strips, cfg);
  } else if (!st) {
    r->verified = false;
    snprintf(r->note, sizeof r->note, "c_transpose_simd baseline gave a wrong transpose");
  }
  bool have = false;
  double s = 0;
  if (!st) {
    memset(m.host, 0, (size_t)(n * n) * 4);
    st = bench_openblas_somatcopy(b->threads, (int)n, (int)n, f32(&k, 1), m.host, r->reps, &have, &s);
  }
  if (!st && have) {
    if (is_transpose(m.host, f32(&k, 1), n)) {
      snprintf(cfg, sizeof cfg, "cblas_somatcopy, %s", bench_openblas_describe());
      add_also(r, "openblas_somatcopy", bytes / s / 1e9, cfg);
    } else {
      r->verified = false;
      snprintf(r->note, sizeof r->note, "openblas_somatcopy baseline gave a wrong transpose");
    }
  }
  if (m.host) cpu_device_free(b->dev, &m);
  krun_free(&k);
  free(text);
  return st;
}

/* Launch overhead: submit -> timeline signal of a one-element kernel, median in us; the pool's own round trip is
 * the baseline (what the queue layer adds on top). */
static hcq_status bench_launch(bench *b) {
  bres *r = new_result(b, "launch", "us");
  if (!r) return hcq_status_make(HCQ_CODE_NOMEM, "result");
  krun k = {0};
  snprintf(r->size, sizeof r->size, "1");
  hcq_status st = prepare(b, &k, k_inc, r);
  int reps = b->quick ? 200 : 10000;
  double *t = calloc((size_t)reps, sizeof *t);
  if (!st && !t) st = hcq_status_make(HCQ_CODE_NOMEM, "times");
  if (!st) f32(&k, 0)[0] = 0;
  for (int i = 0; !st && i < reps; i++) {
    uint64_t t0 = hcq_now_ns();
    st = krun_exec(&k, 10000, NULL);
    t[i] = (double)(hcq_now_ns() - t0) / 1e3;
  }
  if (!st) {
    r->verified = f32(&k, 0)[0] == (float)reps;
    r->value = median(t, reps); /* sorts t */
    r->p50 = r->value;
    r->p90 = t[(size_t)((double)reps * 0.90)];
    r->p99 = t[(size_t)((double)reps * 0.99)];
    r->run_ms = r->value / 1e3;
    snprintf(r->note, sizeof r->note, "submit -> signal over %d launches: p50 %.2f p90 %.2f p99 %.2f us", reps,
             r->value, r->p90, r->p99);
    st = bench_pool_roundtrip(cpu_device_pool(b->dev), 1, reps, &r->baseline_value);
    r->baseline = "pool_roundtrip";
    snprintf(r->baseline_config, sizeof r->baseline_config, "the worker pool's own empty-task round trip");
  }
  free(t);
  krun_free(&k);
  return st;
}

/* Graph replay: 100 one-element kernels recorded once in an hcq_graph; per-kernel cost of a replay in us. */
static hcq_status bench_graph(bench *b) {
  enum { KERNELS = 100 };
  bres *r = new_result(b, "graph_replay", "us");
  if (!r) return hcq_status_make(HCQ_CODE_NOMEM, "result");
  krun k = {0};
  snprintf(r->size, sizeof r->size, "%d kernels", KERNELS);
  hcq_status st = prepare(b, &k, k_inc, r);
  hcq_graph *g = NULL;
  hcq_queue *q = NULL;
  hcq_device *hd = cpu_device_hcq(b->dev);
  if (!st) st = hcq_graph_create(k.ctx, &g);
  if (!st) st = hcq_graph_queue(g, hd, HCQ_QUEUE_COMPUTE, &q);
  const uop *buf0 = g ? hcq_graph_var(g, "buf0") : NULL;
  for (int i = 0; !st && i < KERNELS; i++) {
    hcq_args a;
    st = hcq_graph_args(g, hd, 0, 1, 0, &a);
    hcq_val bufs[1] = {hcq_sym(buf0)};
    if (!st) st = hcq_args_bind(&a, q, NULL, bufs, NULL);
    hcq_val one[3] = {hcq_imm(1), hcq_imm(1), hcq_imm(1)};
    if (!st) st = hcq_queue_exec(q, hcq_imm(krun_program_handle(&k)), &a, one, one);
  }
  if (!st) st = hcq_graph_finalize(g);
  int reps = b->quick ? 30 : 300;
  double *t = calloc((size_t)reps, sizeof *t);
  if (!st && !t) st = hcq_status_make(HCQ_CODE_NOMEM, "times");
  if (!st) f32(&k, 0)[0] = 0;
  uop_var_val vv[1] = {{"buf0", (int64_t)hcq_rt_buffer_va(k.rbufs[0])}};
  for (int i = 0; !st && i < reps; i++) {
    uint64_t t0 = hcq_now_ns();
    st = hcq_graph_replay(g, vv, 1, 10000);
    if (!st) st = hcq_graph_wait(g, 10000);
    t[i] = (double)(hcq_now_ns() - t0) / 1e3 / KERNELS;
  }
  if (!st) st = cpu_device_take_error(b->dev);
  if (!st) {
    r->verified = f32(&k, 0)[0] == (float)(reps * KERNELS);
    r->value = median(t, reps);
    r->run_ms = r->value * KERNELS / 1e3;
    snprintf(r->note, sizeof r->note, "per kernel, replay of %d execs", KERNELS);
  }
  free(t);
  hcq_graph_destroy(g);
  krun_free(&k);
  return st;
}

/* Compile times of the matmul kernel: the pipeline (AST -> C, median of 5) and the external compiler (cache off). */
static hcq_status bench_compile(bench *b) {
  bres *re = new_result(b, "compile_pipeline", "us") ? new_result(b, "compile_external", "us") : NULL;
  bres *rp = re ? re - 1 : NULL; /* taken after both: the second new_result may move the array */
  if (!rp || !re) return hcq_status_make(HCQ_CODE_NOMEM, "result");
  char *text = k_matmul(1, 512, 512, 512);
  snprintf(rp->size, sizeof rp->size, "matmul 512");
  snprintf(re->size, sizeof re->size, "matmul 512");
  hcq_status st = text ? HCQ_OK : hcq_status_make(HCQ_CODE_NOMEM, "text");
  double tp[5], te[3];
  const char *old = getenv("HCQ_CACHE");
  char *saved = old ? strdup(old) : NULL;
  for (int i = 0; !st && i < 5; i++) {
    krun k = {0};
    cc_options o = {0};
    st = krun_compile_text(&k, text, &o, b->threads); /* warms the cache; pipeline_ms is measured each time */
    if (!st) {
      tp[i] = k.prog->pipeline_ms * 1e3;
      char *ot = krun_opts_text(&k);
      bres_set_opts(&rp->opts, ot);
      bres_set_opts(&re->opts, ot);
      free(ot);
    }
    if (!st && i < 3) {
      setenv("HCQ_CACHE", "0", 1);
      uint64_t t0 = hcq_now_ns();
      free(k.prog->binary);
      k.prog->binary = NULL;
      st = cc_compile_binary(&k.target, k.prog);
      te[i] = (double)(hcq_now_ns() - t0) / 1e3;
      if (saved) setenv("HCQ_CACHE", saved, 1);
      else unsetenv("HCQ_CACHE");
      re->verified = !st && k.prog->binary && k.prog->binary_size_B > 0;
    }
    rp->verified = !st && k.prog->source && k.prog->source[0];
    krun_free(&k);
  }
  if (!st) {
    rp->value = median(tp, 5);
    re->value = median(te, 3);
    rp->compile_ms = rp->value / 1e3;
    re->compile_ms = re->value / 1e3;
    snprintf(re->note, sizeof re->note, "%s, cache off", cc_toolchain_cc());
  }
  free(saved);
  free(text);
  return st;
}

/* --beam: search, then run the heuristic and the winner on the same fresh inputs; the winner must match the
 * (verified) heuristic kernel's outputs. The row's throughput scales with 1/time, so beam_value = value * t_h / t_b.
 */
static hcq_status beam_row(bench *b, bres *r, const char *text, const uop_var_val *vars, size_t nvars) {
  if (!text) return hcq_status_make(HCQ_CODE_NOMEM, "kernel text");
  cc_beam_options bo = {.width = b->beam, .max_seconds = (double)b->beam_s, .threads = b->threads, .vars = vars,
                        .nvars = nvars};
  cc_beam_result br;
  HCQ_TRY(beam_cli_search("hcq bench", b->rd, NULL, text, &bo, b->json, &br));
  static const cc_opt none;
  cc_options oh = {0}, ob = {.opts = br.nopts ? br.opts : &none, .nopts = br.nopts};
  krun h = {0}, w = {0};
  hcq_status st = krun_compile_text(&h, text, &oh, b->threads);
  if (!st) st = krun_compile_text(&w, text, &ob, b->threads);
  if (!st) st = krun_setup_rt(&h, b->rd);
  if (!st) st = krun_setup_rt(&w, b->rd);
  if (!st) st = krun_set_vars(&h, vars, nvars);
  if (!st) st = krun_set_vars(&w, vars, nvars);
  double hm = 0, wm = 0;
  if (!st) {
    krun_fill(&h, 11);
    krun_fill(&w, 11);
    st = krun_exec(&h, 120000, NULL);
  }
  if (!st) st = krun_exec(&w, 120000, &wm);
  if (!st) {
    krun_cmp cmp = {.first_bad = -1};
    for (size_t i = 0; i < h.nbufs; i++)
      if ((h.prog->desc.params[i].access & HCQ_ACCESS_WRITE))
        krun_compare(w.bufs[i].data, h.bufs[i].data, h.bufs[i].dtype, h.bufs[i].nelems, 1e-4, 1e-5, &cmp);
    r->beam_verified = cmp.mismatches == 0 && r->verified;
    st = time_runs(b, &w, wm, &r->beam_run_ms, NULL, NULL);
  }
  if (!st) st = time_runs(b, &h, wm, &hm, NULL, NULL); /* the heuristic again, now: both times from the same moment */
  if (!st) {
    r->has_beam = true;
    r->beam_value = r->value * hm / r->beam_run_ms;
    r->beam_cache_hit = br.cache_hit;
    r->beam_search_s = br.elapsed_s;
    char *ot = cc_opts_format(br.opts, br.nopts);
    bres_set_opts(&r->beam_opts, ot);
    free(ot);
  }
  krun_free(&h);
  krun_free(&w);
  cc_beam_result_free(&br);
  return st;
}

/* ------------------------------------------------------------------------------------------------ output */

static void json_string(const char *str) {
  putchar('"');
  for (const unsigned char *p = (const unsigned char *)str; *p; p++) {
    if (*p == '"' || *p == '\\') printf("\\%c", *p);
    else if (*p < 0x20) printf("\\u%04x", *p);
    else putchar(*p);
  }
  putchar('"');
}

static void print_json(const bench *b, const bres *r) {
  printf("{\"name\":\"%s\",\"metric\":\"%s\",\"value\":%.6g,\"baseline\":", r->name, r->metric, r->value);
  if (r->baseline) printf("\"%s\",\"baseline_value\":%.6g,\"ratio\":%.4g", r->baseline, r->baseline_value,
                          r->baseline_value > 0 ? r->value / r->baseline_value : 0.0);
  else printf("null,\"baseline_value\":null,\"ratio\":null");
  printf(",\"baseline_config\":");
  json_string(r->baseline_config);
  printf(",\"machine\":");
  json_string(b->machine);
  if (r->nalso) {
    printf(",\"also\":[");
    for (int i = 0; i < r->nalso; i++) {
      printf("%s{\"baseline\":\"%s\",\"value\":%.6g,\"ratio\":%.4g,\"config\":", i ? "," : "", r->also[i].name,
             r->also[i].value, r->also[i].value > 0 ? r->value / r->also[i].value : 0.0);
      json_string(r->also[i].config);
      printf("}");
    }
    printf("]");
  }
  if (r->p90 > 0) printf(",\"p50_us\":%.4g,\"p90_us\":%.4g,\"p99_us\":%.4g", r->p50, r->p90, r->p99);
  if (r->runs > 1)
    printf(",\"runs\":%d,\"value_min\":%.6g,\"value_max\":%.6g,\"ratio_min\":%.4g,\"ratio_max\":%.4g", r->runs,
           r->value_min, r->value_max, r->ratio_min, r->ratio_max);
  if (r->has_beam)
    printf(",\"beam\":%d,\"beam_value\":%.6g,\"beam_opts\":\"%s\",\"beam_run_ms\":%.4f,\"beam_verified\":%s,"
           "\"beam_cache_hit\":%s,\"beam_search_s\":%.2f",
           b->beam, r->beam_value, opts_or_dash(r->beam_opts), r->beam_run_ms, r->beam_verified ? "true" : "false",
           r->beam_cache_hit ? "true" : "false", r->beam_search_s);
  printf(",\"verified\":%s,\"threads\":%d,\"size\":\"%s\",\"opts\":\"%s\",\"compile_ms\":%.3f,\"run_ms\":%.4f,"
         "\"quick\":%s,\"note\":\"%s\"}\n",
         r->verified ? "true" : "false", b->threads, r->size, opts_or_dash(r->opts), r->compile_ms, r->run_ms,
         b->quick ? "true" : "false", r->note);
  fflush(stdout);
}

/* The width of an opts column: 34, or the longest of the run's opts strings (the table never cuts them). */
static int opts_width(const bench *b, bool beam) {
  size_t w = 34;
  for (size_t i = 0; i < b->nres; i++) {
    const char *s = opts_or_dash(beam ? b->res[i].beam_opts : b->res[i].opts);
    if (strlen(s) > w) w = strlen(s);
  }
  return w > 4096 ? 4096 : (int)w;
}

static void print_table(const bench *b) {
  int ow = opts_width(b, false);
  printf("hcq bench on CPU:0, %d threads%s%s\n", b->threads, b->quick ? " (quick sizes)" : "",
         b->repeat > 1 ? ", medians of --repeat runs" : "");
  printf("machine: %s\n", b->machine);
  printf("%-20s %-13s %-*s %9s %10s %10s %-8s %-15s %9s %6s %s\n", "kernel", "size", ow, "opts", "compile", "run ms",
         "value", "metric", "baseline", "base", "ratio", "ok");
  for (size_t i = 0; i < b->nres; i++) {
    const bres *r = &b->res[i];
    char base[32] = "-", ratio[16] = "-";
    if (r->baseline) {
      snprintf(base, sizeof base, "%.2f", r->baseline_value);
      snprintf(ratio, sizeof ratio, "%.2f", r->baseline_value > 0 ? r->value / r->baseline_value : 0.0);
    }
    printf("%-20s %-13s %-*s %9.1f %10.3f %10.2f %-8s %-15s %9s %6s %s%s%s", r->name, r->size, ow, opts_or_dash(r->opts),
           r->compile_ms, r->run_ms, r->value, r->metric, r->baseline ? r->baseline : "null", base, ratio,
           r->verified ? "yes" : "NO", r->note[0] ? "  " : "", r->note);
    for (int a = 0; a < r->nalso; a++)
      printf("%s%s %.2f (ratio %.2f)", a ? ", " : "  also: ", r->also[a].name, r->also[a].value,
             r->also[a].value > 0 ? r->value / r->also[a].value : 0.0);
    printf("\n");
  }
  if (b->repeat > 1) {
    printf("spread over %d runs (the table shows medians):\n", b->repeat);
    for (size_t i = 0; i < b->nres; i++) {
      const bres *r = &b->res[i];
      printf("  %-20s value %.4g .. %.4g %s", r->name, r->value_min, r->value_max, r->metric);
      if (r->baseline) printf(", ratio %.3g .. %.3g", r->ratio_min, r->ratio_max);
      printf("\n");
    }
  }
  if (b->beam) {
    printf("heuristic vs BEAM %d (BEAM's kernel checked against the heuristic's on the same inputs):\n", b->beam);
    int bw = opts_width(b, true);
    printf("  %-17s %-*s %10s  %-*s %10s %6s %s\n", "kernel", ow, "heuristic opts", "value", bw, "beam opts", "beam",
           "x", "ok");
    for (size_t i = 0; i < b->nres; i++) {
      const bres *r = &b->res[i];
      if (!r->has_beam) continue;
      printf("  %-17s %-*s %10.2f  %-*s %10.2f %6.2f %s%s\n", r->name, ow, opts_or_dash(r->opts), r->value, bw,
             opts_or_dash(r->beam_opts),
             r->beam_value, r->value > 0 ? r->beam_value / r->value : 0.0, r->beam_verified ? "yes" : "NO",
             r->beam_cache_hit ? " (cached)" : "");
    }
  }
  printf("baselines (measured in this run):\n");
  for (size_t i = 0; i < b->nres; i++) {
    if (b->res[i].baseline) printf("  %-20s %-15s %s\n", b->res[i].name, b->res[i].baseline, b->res[i].baseline_config);
    for (int a = 0; a < b->res[i].nalso; a++)
      printf("  %-20s %-15s %s (also shown; not the ratio)\n", b->res[i].name, b->res[i].also[a].name,
             b->res[i].also[a].config);
  }
}

static bool wanted(const char *only, const char *name) {
  if (!only) return true;
  size_t n = strlen(name);
  for (const char *p = only; *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == n && !strncmp(p, name, n)) return true;
    if (!e) break;
    p = e + 1;
  }
  return false;
}

/* --repeat: results [0, per) are run 1's, [per, 2 per) run 2's...; fold them into the first `per` entries as the
 * median value (and baseline) with the min/max of the value and the ratio; verified only if every run was. */
static hcq_status aggregate_runs(bench *b, size_t per, int runs) {
  double *v = calloc((size_t)runs * 3, sizeof *v);
  if (!v) return hcq_status_make(HCQ_CODE_NOMEM, "hcq bench --repeat");
  for (size_t i = 0; i < per; i++) {
    bres *r = &b->res[i];
    double *val = v, *base = v + runs, *ratio = v + 2 * runs;
    bool all_ok = true;
    for (int k = 0; k < runs; k++) {
      const bres *x = &b->res[(size_t)k * per + i];
      val[k] = x->value;
      base[k] = x->baseline_value;
      ratio[k] = x->baseline && x->baseline_value > 0 ? x->value / x->baseline_value : 0;
      all_ok &= x->verified && !strcmp(x->name, r->name);
    }
    r->value = median(val, runs); /* sorted: [0] and [runs-1] are the extremes */
    r->value_min = val[0];
    r->value_max = val[runs - 1];
    r->baseline_value = median(base, runs);
    for (int a = 0; a < r->nalso; a++) { /* the also-baselines' medians (present in every run, same order) */
      for (int k = 0; k < runs; k++) {
        const bres *x = &b->res[(size_t)k * per + i];
        base[k] = a < x->nalso ? x->also[a].value : 0;
      }
      r->also[a].value = median(base, runs);
    }
    median(ratio, runs);
    r->ratio_min = ratio[0];
    r->ratio_max = ratio[runs - 1];
    r->runs = runs;
    r->verified = all_ok;
  }
  b->nres = per;
  free(v);
  return HCQ_OK;
}

int hcq_verb_bench(int argc, char **argv) {
  bench b = {0};
  const char *devname = "cpu", *only = NULL;
  int threads = 0, repeat = 1;
  long long beam_flag = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      printf("usage: hcq bench [--dev cpu|amd:N|nv:N] [--json] [--quick] [--threads N] [--only NAME,...] [--repeat N]\n"
             "  --dev amd:N / nv:N: launch_cpu launch_latency graph_replay add matmul mock_exec (tools/bench_dev.c)\n"
             "  results: add saxpy sum softmax row_sum col_sum col_sum_tall matmul_512 matmul_1024 matmul_2048\n"
             "           matmul_1000 matmul_4096x256x4096 matmul_batched_64 transpose launch graph_replay\n"
             "           compile_pipeline compile_external (each verified; baselines measured in the same run)\n"
             "  --repeat N (1..100): run the suite N times; report each row's median with its min..max (value and\n"
             "           ratio; in --json as value_min/value_max/ratio_min/ratio_max)\n"
             "  --beam N (0..100; default $BEAM): kernel rows also report the opts of a BEAM search and their value\n"
             "           (table section; --json: beam_value/beam_opts/beam_verified...); --beam-seconds S (1..86400)\n"
             "           bounds each search (default $HCQ_BEAM_SECONDS or 20)\n");
      return 0;
    } else if (!strcmp(a, "--dev") && i + 1 < argc) devname = argv[++i];
    else if (!strcmp(a, "--json")) b.json = true;
    else if (!strcmp(a, "--quick")) b.quick = true;
    else if ((!strcmp(a, "--threads") || !strcmp(a, "--only") || !strcmp(a, "--dev") || !strcmp(a, "--repeat") ||
              !strcmp(a, "--beam") || !strcmp(a, "--beam-seconds")) &&
             cli_missing_value("hcq bench", a, i + 1 < argc))
      return 2;
    else if (!strcmp(a, "--repeat") && i + 1 < argc) {
      long long n = 0;
      if (!cli_parse_int("hcq bench", a, argv[++i], 1, 100, &n)) return 2;
      repeat = (int)n;
    }
    else if (!strcmp(a, "--beam") && i + 1 < argc) {
      if (!cli_parse_int("hcq bench", a, argv[++i], 0, CC_BEAM_MAX_WIDTH, &beam_flag)) return 2;
    } else if (!strcmp(a, "--beam-seconds") && i + 1 < argc) {
      if (!cli_parse_int("hcq bench", a, argv[++i], 1, BEAM_CLI_MAX_SECONDS, &b.beam_s)) return 2;
    }
    else if (!strcmp(a, "--threads") && i + 1 < argc) {
      long long n = 0;
      if (!cli_parse_int("hcq bench", a, argv[++i], 0, CLI_MAX_THREADS, &n)) return 2;
      threads = (int)n;
    } else if (!strcmp(a, "--only") && i + 1 < argc) only = argv[++i];
    else {
      fprintf(stderr, "hcq bench: unexpected argument '%s'\n", a);
      return 2;
    }
  }
  if (strcmp(devname, "cpu") != 0 && strcmp(devname, "CPU") != 0 && strcmp(devname, "CPU:0") != 0) {
    if (!strncasecmp(devname, "amd", 3) || !strncasecmp(devname, "nv", 2)) return hcq_bench_dev(devname, b.json, b.quick, only);
    fprintf(stderr, "hcq bench: unknown device '%s' (available: cpu, amd:N, nv:N)\n", devname);
    return 2;
  }
  if (!beam_cli_width("hcq bench", beam_flag, &b.beam)) return 2;
  hcq_status st = cpu_device_create(threads, &b.dev);
  if (!st && b.beam) st = hcq_rt_wrap(cpu_device_hcq(b.dev), 0, &b.rd);
  if (st) {
    fprintf(stderr, "hcq bench: %s\n", hcq_status_message(st));
    hcq_status_free(st);
    return 1;
  }
  b.threads = cpu_device_threads(b.dev);
  bench_machine_line(b.machine, sizeof b.machine);
  b.budget_s = b.quick ? 0.02 : 0.4;
  bool q = b.quick;
  struct step {
    const char *name;
    int kind;
    long n, m;
  } steps[] = {
      {"add", 0, q ? 1 << 18 : 1 << 24, 0},     {"saxpy", 1, q ? 1 << 18 : 1 << 24, 0},
      {"sum", 2, q ? 1 << 18 : 1 << 24, 0},     {"softmax", 3, q ? 64 : 4096, q ? 256 : 1024},
      {"row_sum", 12, q ? 64 : 4096, q ? 4096 : 4096}, {"col_sum", 13, q ? 64 : 4096, q ? 4096 : 4096},
      {"col_sum_tall", 13, q ? 1 << 16 : 1 << 20, 16},
      {"matmul_512", 4, q ? 64 : 512, 0},       {"matmul_1024", 4, q ? 96 : 1024, 0},
      {"matmul_2048", 4, q ? 128 : 2048, 0},    {"matmul_1000", 9, q ? 100 : 1000, 0},
      {"matmul_4096x256x4096", 10, q ? 256 : 4096, q ? 16 : 256},
      {"matmul_batched_64", 11, q ? 8 : 256, 64}, {"transpose", 5, q ? 256 : 4096, 0},
      {"launch", 6, 0, 0},                      {"graph_replay", 7, 0, 0},
      {"compile_pipeline", 8, 0, 0},
  };
  int rc = 0;
  b.repeat = repeat;
  size_t per_run = 0;
  for (int run = 0; run < repeat; run++)
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    const struct step *s = &steps[i];
    if (!wanted(only, s->name) && !(s->kind == 8 && wanted(only, "compile_external"))) continue;
    size_t before = b.nres;
    switch (s->kind) {
      case 0: st = bench_add(&b, s->n); break;
      case 1: st = bench_saxpy(&b, s->n); break;
      case 2: st = bench_sum(&b, s->n); break;
      case 3: st = bench_softmax(&b, s->n, s->m); break;
      case 12: case 13: st = bench_reduce2d(&b, s->name, s->kind == 13, s->n, s->m); break;
      case 4: case 9: st = bench_matmul(&b, s->name, 1, s->n, s->n, s->n); break;
      case 10: st = bench_matmul(&b, s->name, 1, s->n, s->m, s->n); break;
      case 11: st = bench_matmul(&b, s->name, s->n, s->m, s->m, s->m); break;
      case 5: st = bench_transpose(&b, s->n); break;
      case 6: st = bench_launch(&b); break;
      case 7: st = bench_graph(&b); break;
      default: st = bench_compile(&b); break;
    }
    bool kernel_row = s->kind <= 5 || s->kind >= 9;
    if (!st && b.beam && kernel_row && b.nres > before) {
      /* the same kernel text the row ran (saxpy at its run length) */
      char *text = s->kind == 0 ? k_add(s->n) : s->kind == 1 ? k_saxpy(s->n) : s->kind == 2 ? k_sum(s->n)
                 : s->kind == 3 ? k_softmax(s->n, s->m) : s->kind == 4 || s->kind == 9 ? k_matmul(1, s->n, s->n, s->n)
                 : s->kind == 10 ? k_matmul(1, s->n, s->m, s->n) : s->kind == 11 ? k_matmul(s->n, s->m, s->m, s->m)
                 : s->kind == 12 ? k_row_sum(s->n, s->m) : s->kind == 13 ? k_col_sum(s->n, s->m)
                 : k_transpose(s->n);
      uop_var_val n_var = {"n", s->n - 3};
      st = beam_row(&b, &b.res[before], text, &n_var, s->kind == 1);
      free(text);
      if (st) b.res[before].has_beam = false;
    }
    if (st) {
      fprintf(stderr, "hcq bench: %s: %s\n", s->name, hcq_status_message(st));
      hcq_status_free(st);
      for (size_t r = before; r < b.nres; r++) b.res[r].verified = false;
      rc = 1;
    }
    for (size_t r = before; r < b.nres; r++) {
      if (!b.res[r].verified) rc = 1;
      if (b.json && repeat == 1) print_json(&b, &b.res[r]);
    }
    if (run == 0) per_run = b.nres;
  }
  if (repeat > 1) {
    /* a failed step leaves a run short: the runs no longer line up, so report the error instead of a median */
    if (b.nres != per_run * (size_t)repeat) {
      fprintf(stderr, "hcq bench: a step failed in some runs; no medians reported\n");
      rc = 1;
      b.nres = per_run;
    } else if ((st = aggregate_runs(&b, per_run, repeat))) {
      fprintf(stderr, "hcq bench: %s\n", hcq_status_message(st));
      hcq_status_free(st);
      rc = 1;
    }
    for (size_t r = 0; b.json && r < b.nres; r++) print_json(&b, &b.res[r]);
  }
  if (!b.json) print_table(&b);
  hcq_rt_close(b.rd);
  cpu_device_destroy(b.dev);
  for (size_t r = 0; r < b.nmade; r++) free(b.res[r].opts), free(b.res[r].beam_opts);
  free(b.res);
  return rc;
}
