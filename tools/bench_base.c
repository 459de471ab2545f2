/* Baselines of `hcq bench`: see bench_base.h. */
#include "tools/bench_base.h"

#include "tools/bench_machine.h"
#include "tools/bench_simd.h"
#include "tools/bench_transpose.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

typedef struct stream_job {
  float *c;
  const float *a, *b;
  size_t n;
  int parts;
  bool nt;
} stream_job;

/* Plain loops the C compiler vectorizes; the non-temporal variant writes 4 floats at a time past the cache. */
static void stream_task(void *ctx, int core_id) {
  const stream_job *j = ctx;
  size_t per = (j->n + (size_t)j->parts - 1) / (size_t)j->parts;
  per = (per + 63) & ~(size_t)63; /* 256-byte chunks keep every chunk 16-byte aligned */
  size_t lo = (size_t)core_id * per, hi = lo + per < j->n ? lo + per : j->n;
  if (lo >= hi) return;
  float *restrict c = j->c;
  const float *restrict a = j->a, *restrict b = j->b;
#if defined(__x86_64__)
  if (j->nt) {
    size_t i = lo;
    if (b)
      for (; i + 4 <= hi; i += 4) _mm_stream_ps(c + i, _mm_add_ps(_mm_load_ps(a + i), _mm_load_ps(b + i)));
    else
      for (; i + 4 <= hi; i += 4) _mm_stream_ps(c + i, _mm_load_ps(a + i));
    for (; i < hi; i++) c[i] = b ? a[i] + b[i] : a[i];
    _mm_sfence();
    return;
  }
#endif
  if (b)
    for (size_t i = lo; i < hi; i++) c[i] = a[i] + b[i];
  else
    for (size_t i = lo; i < hi; i++) c[i] = a[i];
}

static hcq_status pool_run(cpu_pool *pool, int threads, cpu_task_fn fn, void *ctx, double *out_s) {
  cpu_cmd cmd = {.kind = CPU_CMD_EXEC, .threads = threads, .fn = fn, .ctx = ctx};
  uint64_t seq = 0, t0 = cpu_now_ns();
  HCQ_TRY(cpu_pool_submit(pool, &cmd, 1, &seq));
  HCQ_TRY(cpu_pool_wait(pool, seq, 60000));
  *out_s = (double)(cpu_now_ns() - t0) / 1e9;
  return HCQ_OK;
}

/* Baselines time each run into t[] and report the median (t[n / 2] of the sorted times, as the hcq rows do): bench.c
 * takes as many runs as the kernel it compares them with had (one at a time, interleaved with the kernel's, for
 * the pool baselines), so both sides are the same statistic of the same count (a best-of-3 baseline against a median
 * kernel leaned against hcq on a noisy machine). */
static int cmp_double(const void *x, const void *y);
static hcq_status check_reps(int reps, const char *who) {
  if (reps < 1 || reps > BENCH_BASE_MAX_REPS)
    return hcq_status_make(HCQ_CODE_INVALID, "%s: reps %d outside 1..%d", who, reps, BENCH_BASE_MAX_REPS);
  return HCQ_OK;
}
static double median_s(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp_double);
  return t[n / 2];
}
static hcq_status pool_run(cpu_pool *pool, int threads, cpu_task_fn fn, void *ctx, double *out_s);
/* reps runs of fn on `parts` core_ids: the median time, s. */
static hcq_status pool_median(cpu_pool *pool, int parts, cpu_task_fn fn, void *ctx, int reps, const char *who,
                              double *out_s) {
  HCQ_TRY(check_reps(reps, who));
  double t[BENCH_BASE_MAX_REPS];
  for (int r = 0; r < reps; r++) HCQ_TRY(pool_run(pool, parts, fn, ctx, &t[r]));
  *out_s = median_s(t, reps);
  return HCQ_OK;
}

hcq_status bench_stream(cpu_pool *pool, int threads, float *c, const float *a, const float *b, size_t n, bool nt,
                        int reps, double *out_s) {
  if (((uintptr_t)c | (uintptr_t)a | (uintptr_t)b) % 16)
    return hcq_status_make(HCQ_CODE_INVALID, "bench_stream: buffers must be 16-byte aligned");
  stream_job j = {c, a, b, n, threads < 1 ? 1 : threads, nt};
  return pool_median(pool, j.parts, stream_task, &j, reps, "bench_stream", out_s);
}

typedef struct sum_job {
  const float *x;
  size_t n;
  int parts;
  double partial[64];
} sum_job;

static void sum_task(void *ctx, int core_id) {
  sum_job *j = ctx;
  size_t per = (j->n + (size_t)j->parts - 1) / (size_t)j->parts;
  size_t lo = (size_t)core_id * per, hi = lo + per < j->n ? lo + per : j->n;
  j->partial[core_id] = lo < hi ? (double)bench_simd_sum(j->x + lo, hi - lo) : 0.0;
}

hcq_status bench_base_sum(cpu_pool *pool, int threads, const float *x, size_t n, int reps, double *out_s,
                          double *out_sum) {
  bench_simd_choose();
  sum_job j = {.x = x, .n = n, .parts = threads < 1 ? 1 : threads > 64 ? 64 : threads};
  HCQ_TRY(pool_median(pool, j.parts, sum_task, &j, reps, "bench_base_sum", out_s));
  double total = 0;
  for (int p = 0; p < j.parts; p++) total += j.partial[p];
  *out_sum = total;
  return HCQ_OK;
}

typedef struct transpose_job {
  float *out;
  const float *x;
  size_t rows, cols;
  int parts;
  bench_transpose_shape shape;
} transpose_job;

/* Rows split in multiples of 16 (whole tiles per thread). */
static void transpose_task(void *ctx, int core_id) {
  const transpose_job *j = ctx;
  size_t per = ((j->rows + (size_t)j->parts - 1) / (size_t)j->parts + 15) & ~(size_t)15;
  size_t lo = (size_t)core_id * per, hi = lo + per < j->rows ? lo + per : j->rows;
  if (lo < hi) bench_transpose_rows(j->shape, j->out, j->x, j->rows, j->cols, lo, hi);
}

const char *bench_base_transpose_isa(void) {
  static const char *isa;
  if (!isa) isa = bench_transpose_choose(true);
  return isa;
}

hcq_status bench_base_transpose(cpu_pool *pool, int threads, bool strips, float *out, const float *x, size_t rows,
                                size_t cols, int reps, double *out_s) {
  bench_base_transpose_isa();
  transpose_job j = {out, x, rows, cols, threads < 1 ? 1 : threads,
                     strips ? BENCH_TRANSPOSE_STRIPS : BENCH_TRANSPOSE_BLOCKED};
  return pool_median(pool, j.parts, transpose_task, &j, reps, "bench_base_transpose", out_s);
}

/* Row-wise jobs (softmax, row sums): rows split over `parts` core_ids. */
typedef struct rows_job {
  float *out;
  const float *x;
  size_t rows, cols;
  int parts;
} rows_job;

static void softmax_task(void *ctx, int core_id) {
  const rows_job *j = ctx;
  size_t per = (j->rows + (size_t)j->parts - 1) / (size_t)j->parts;
  size_t lo = (size_t)core_id * per, hi = lo + per < j->rows ? lo + per : j->rows;
  for (size_t row = lo; row < hi; row++) bench_simd_softmax_row(j->out + row * j->cols, j->x + row * j->cols, j->cols);
}

hcq_status bench_base_softmax(cpu_pool *pool, int threads, float *out, const float *x, size_t rows, size_t cols,
                              int reps, double *out_s) {
  bench_simd_choose();
  rows_job j = {out, x, rows, cols, threads < 1 ? 1 : threads};
  return pool_median(pool, j.parts, softmax_task, &j, reps, "bench_base_softmax", out_s);
}

static void row_sum_task(void *ctx, int core_id) {
  const rows_job *j = ctx;
  size_t per = (j->rows + (size_t)j->parts - 1) / (size_t)j->parts;
  size_t lo = (size_t)core_id * per, hi = lo + per < j->rows ? lo + per : j->rows;
  if (lo < hi) bench_simd_row_sums(j->out + lo, j->x + lo * j->cols, hi - lo, j->cols);
}

hcq_status bench_base_row_sum(cpu_pool *pool, int threads, float *out, const float *x, size_t rows, size_t cols,
                              int reps, double *out_s) {
  bench_simd_choose();
  rows_job j = {out, x, rows, cols, threads < 1 ? 1 : threads};
  return pool_median(pool, j.parts, row_sum_task, &j, reps, "bench_base_row_sum", out_s);
}

typedef struct col_job {
  float *out, *partial; /* partial: parts x cols, split_rows only */
  const float *x;
  size_t rows, cols;
  int parts;
  bool split_rows;
} col_job;

/* Columns split: each thread sums all rows of its column range (16-column multiples) into out. Rows split: each
 * thread sums its rows into its own partial row; thread 0's pass adds them up after the pool joins. */
static void col_sum_task(void *ctx, int core_id) {
  const col_job *j = ctx;
  if (j->split_rows) {
    size_t per = (j->rows + (size_t)j->parts - 1) / (size_t)j->parts;
    size_t lo = (size_t)core_id * per, hi = lo + per < j->rows ? lo + per : j->rows;
    float *acc = j->partial + (size_t)core_id * j->cols;
    memset(acc, 0, j->cols * sizeof *acc);
    if (lo < hi) bench_simd_col_sums_add(acc, j->x + lo * j->cols, hi - lo, j->cols, j->cols);
    return;
  }
  size_t per = ((j->cols + (size_t)j->parts - 1) / (size_t)j->parts + 15) & ~(size_t)15;
  size_t lo = (size_t)core_id * per, hi = lo + per < j->cols ? lo + per : j->cols;
  if (lo >= hi) return;
  memset(j->out + lo, 0, (hi - lo) * sizeof *j->out);
  bench_simd_col_sums_add(j->out + lo, j->x + lo, j->rows, hi - lo, j->cols);
}

hcq_status bench_base_col_sum(cpu_pool *pool, int threads, bool split_rows, float *out, const float *x, size_t rows,
                              size_t cols, int reps, double *out_s) {
  bench_simd_choose();
  col_job j = {.out = out, .x = x, .rows = rows, .cols = cols, .parts = threads < 1 ? 1 : threads,
               .split_rows = split_rows};
  HCQ_TRY(check_reps(reps, "bench_base_col_sum"));
  if (split_rows && !(j.partial = aligned_alloc(64, ((size_t)j.parts * cols * sizeof(float) + 63) & ~(size_t)63)))
    return hcq_status_make(HCQ_CODE_NOMEM, "bench_base_col_sum partials");
  double t[BENCH_BASE_MAX_REPS];
  hcq_status st = HCQ_OK;
  for (int r = 0; !st && r < reps; r++) {
    double s;
    uint64_t t0 = cpu_now_ns();
    st = pool_run(pool, j.parts, col_sum_task, &j, &s);
    if (!st && split_rows) { /* the combine is part of the work */
      memcpy(out, j.partial, cols * sizeof *out);
      for (int p = 1; p < j.parts; p++)
        for (size_t c = 0; c < cols; c++) out[c] += j.partial[(size_t)p * cols + c];
      s = (double)(cpu_now_ns() - t0) / 1e9;
    }
    t[r] = s;
  }
  free(j.partial);
  if (!st) *out_s = median_s(t, reps);
  return st;
}

static void empty_task(void *ctx, int core_id) {
  (void)ctx;
  (void)core_id;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

hcq_status bench_pool_roundtrip(cpu_pool *pool, int threads, int reps, double *out_us) {
  double *t = calloc((size_t)reps, sizeof *t);
  if (!t) return hcq_status_make(HCQ_CODE_NOMEM, "bench_pool_roundtrip");
  hcq_status st = HCQ_OK;
  for (int r = 0; !st && r < reps; r++) st = pool_run(pool, threads, empty_task, NULL, &t[r]);
  if (!st) {
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    *out_us = t[reps / 2] * 1e6;
  }
  free(t);
  return st;
}

typedef void (*sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha, const float *a, int lda,
                         const float *b, int ldb, float beta, float *c, int ldc);
typedef void (*set_threads_fn)(int);

static char openblas_desc[256] = "libopenblas.so.0 not loaded";

/* Load OpenBLAS once, with the core type the CPU supports best unless the user set OPENBLAS_CORETYPE (it is read
 * when the library initializes, so it must be in the environment before dlopen). */
static void *openblas_load(void) {
  static void *lib;
  static bool tried;
  if (tried) return lib;
  tried = true;
  const char *user = getenv("OPENBLAS_CORETYPE"), *pick = user ? NULL : bench_openblas_best_coretype();
  if (pick) setenv("OPENBLAS_CORETYPE", pick, 0);
  lib = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(openblas_desc, sizeof openblas_desc, "libopenblas.so.0 not found (apt-get install libopenblas0)");
    return NULL;
  }
  char *(*corename)(void), *(*config)(void);
  *(void **)&corename = dlsym(lib, "openblas_get_corename");
  *(void **)&config = dlsym(lib, "openblas_get_config");
  snprintf(openblas_desc, sizeof openblas_desc, "%s, core %s (%s)", config ? config() : "OpenBLAS",
           corename ? corename() : "?",
           user ? "OPENBLAS_CORETYPE set by the user" : pick ? "OPENBLAS_CORETYPE chosen from the CPU features"
                                                             : "OpenBLAS's own detection");
  return lib;
}

const char *bench_openblas_describe(void) { return openblas_desc; }

hcq_status bench_openblas_sgemm_batched(int threads, int batch, int m, int k, int n, const float *a, const float *b,
                                        float *c, int reps, bool *out_available, double *out_s) {
  *out_available = false;
  void *lib = openblas_load();
  if (!lib) return HCQ_OK;
  sgemm_fn sgemm;
  set_threads_fn set_threads;
  *(void **)&sgemm = dlsym(lib, "cblas_sgemm");
  *(void **)&set_threads = dlsym(lib, "openblas_set_num_threads");
  if (!sgemm) return HCQ_OK; /* stays loaded (cached by openblas_load) */
  if (set_threads) set_threads(threads);
  enum { ROW_MAJOR = 101, NO_TRANS = 111 };
  size_t sa = (size_t)m * (size_t)k, sb = (size_t)k * (size_t)n, sc = (size_t)m * (size_t)n;
  HCQ_TRY(check_reps(reps, "bench_openblas_sgemm"));
  double t[BENCH_BASE_MAX_REPS];
  for (int r = 0; r <= reps; r++) { /* r == 0 warms up (thread start, page faults) */
    uint64_t t0 = cpu_now_ns();
    for (int i = 0; i < batch; i++)
      sgemm(ROW_MAJOR, NO_TRANS, NO_TRANS, m, n, k, 1.0f, a + (size_t)i * sa, k, b + (size_t)i * sb, n, 0.0f,
            c + (size_t)i * sc, n);
    double s = (double)(cpu_now_ns() - t0) / 1e9;
    if (r > 0) t[r - 1] = s;
  }
  /* The library stays loaded: OpenBLAS's threads do not survive dlclose well. */
  *out_available = true;
  *out_s = median_s(t, reps);
  return HCQ_OK;
}

hcq_status bench_openblas_sgemm(int threads, int n, const float *a, const float *b, float *c, int reps,
                                bool *out_available, double *out_s) {
  return bench_openblas_sgemm_batched(threads, 1, n, n, n, a, b, c, reps, out_available, out_s);
}

typedef void (*somatcopy_fn)(int order, int trans, int rows, int cols, float alpha, const float *a, int lda, float *b,
                             int ldb);

hcq_status bench_openblas_somatcopy(int threads, int rows, int cols, const float *x, float *out, int reps,
                                    bool *out_available, double *out_s) {
  *out_available = false;
  void *lib = openblas_load();
  if (!lib) return HCQ_OK;
  somatcopy_fn omatcopy;
  set_threads_fn set_threads;
  *(void **)&omatcopy = dlsym(lib, "cblas_somatcopy");
  *(void **)&set_threads = dlsym(lib, "openblas_set_num_threads");
  if (!omatcopy) return HCQ_OK;
  if (set_threads) set_threads(threads);
  enum { ROW_MAJOR = 101, TRANS = 112 };
  HCQ_TRY(check_reps(reps, "bench_openblas_somatcopy"));
  double t[BENCH_BASE_MAX_REPS];
  for (int r = 0; r <= reps; r++) { /* r == 0 warms up */
    uint64_t t0 = cpu_now_ns();
    omatcopy(ROW_MAJOR, TRANS, rows, cols, 1.0f, x, cols, out, rows);
    double s = (double)(cpu_now_ns() - t0) / 1e9;
    if (r > 0) t[r - 1] = s;
  }
  *out_available = true;
  *out_s = median_s(t, reps);
  return HCQ_OK;
}
