/* The vectorized inner loops of the sum and softmax baselines, in the widest ISA this CPU has (chosen at run
 * time): what a user would write with -O3 -march=native and glibc's vector math library (libmvec), not a plain
 * scalar loop. Every variant computes the same thing; only the vector width differs. */
#include "tools/bench_simd.h"

#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* Generic: GNU vector types of 16 bytes (SSE2 on x86_64, NEON on aarch64). */
typedef float v4f __attribute__((vector_size(16)));

static float sum_generic(const float *x, size_t n) {
  v4f a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, v0, v1, v2, v3;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    memcpy(&v0, x + i, sizeof v0);
    memcpy(&v1, x + i + 4, sizeof v1);
    memcpy(&v2, x + i + 8, sizeof v2);
    memcpy(&v3, x + i + 12, sizeof v3);
    a0 += v0, a1 += v1, a2 += v2, a3 += v3;
  }
  float s = 0;
  for (; i < n; i++) s += x[i];
  v4f t = (a0 + a1) + (a2 + a3);
  return s + ((t[0] + t[1]) + (t[2] + t[3]));
}

/* acc[c] += x[r * ld + c] over rows: the row streams through, the accumulator row stays in L1 (wide matrices). */
static void col_add_rows_generic(float *acc, const float *x, size_t rows, size_t cols, size_t ld) {
  for (size_t r = 0; r < rows; r++) {
    const float *xr = x + r * ld;
    size_t c = 0;
    for (; c + 4 <= cols; c += 4) {
      v4f a, v;
      memcpy(&a, acc + c, sizeof a);
      memcpy(&v, xr + c, sizeof v);
      a += v;
      memcpy(acc + c, &a, sizeof a);
    }
    for (; c < cols; c++) acc[c] += xr[c];
  }
}

static void softmax_row_generic(float *o, const float *x, size_t cols) {
  float mx = -INFINITY, s = 0;
  for (size_t c = 0; c < cols; c++) mx = x[c] > mx ? x[c] : mx;
  for (size_t c = 0; c < cols; c++) s += (o[c] = expf(x[c] - mx));
  float inv = 1.0f / s;
  for (size_t c = 0; c < cols; c++) o[c] *= inv;
}

#if defined(__x86_64__)
/* libmvec's vector expf (x86_64 vector function ABI names: 'e' = AVX-512 16 lanes, 'd' = AVX2 8 lanes). */
typedef __m512 (*expf16_fn)(__m512);
typedef __m256 (*expf8_fn)(__m256);
static expf16_fn expf16;
static expf8_fn expf8;

__attribute__((target("avx512f"))) static float sum_avx512(const float *x, size_t n) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    a0 = _mm512_add_ps(a0, _mm512_loadu_ps(x + i));
    a1 = _mm512_add_ps(a1, _mm512_loadu_ps(x + i + 16));
    a2 = _mm512_add_ps(a2, _mm512_loadu_ps(x + i + 32));
    a3 = _mm512_add_ps(a3, _mm512_loadu_ps(x + i + 48));
  }
  float s = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
  for (; i < n; i++) s += x[i];
  return s;
}

/* Column sums, AVX-512. Wide: blocks of COL_BLOCK_ROWS rows; per block, each strip of 64 columns (16 at the edge)
 * is loaded from acc into registers, the block's rows added, and stored back (the rows stream through the cache
 * side by side; acc stays in L1). Narrow (cols == 16, a tall matrix): four register accumulators over interleaved
 * rows. */
#define COL_BLOCK_ROWS 8
__attribute__((target("avx512f"))) static void col_add_rows_avx512(float *acc, const float *x, size_t rows,
                                                                    size_t cols, size_t ld) {
  if (cols == 16) {
    __m512 a0 = _mm512_loadu_ps(acc), a1 = _mm512_setzero_ps(), a2 = a1, a3 = a1;
    size_t r = 0;
    for (; r + 4 <= rows; r += 4) {
      a0 = _mm512_add_ps(a0, _mm512_loadu_ps(x + r * ld));
      a1 = _mm512_add_ps(a1, _mm512_loadu_ps(x + (r + 1) * ld));
      a2 = _mm512_add_ps(a2, _mm512_loadu_ps(x + (r + 2) * ld));
      a3 = _mm512_add_ps(a3, _mm512_loadu_ps(x + (r + 3) * ld));
    }
    for (; r < rows; r++) a0 = _mm512_add_ps(a0, _mm512_loadu_ps(x + r * ld));
    _mm512_storeu_ps(acc, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
    return;
  }
  size_t r = 0;
  for (; r + COL_BLOCK_ROWS <= rows; r += COL_BLOCK_ROWS) {
    const float *xb = x + r * ld;
    size_t c = 0;
    for (; c + 64 <= cols; c += 64) {
      __m512 a0 = _mm512_loadu_ps(acc + c), a1 = _mm512_loadu_ps(acc + c + 16), a2 = _mm512_loadu_ps(acc + c + 32),
             a3 = _mm512_loadu_ps(acc + c + 48);
      for (size_t i = 0; i < COL_BLOCK_ROWS; i++) {
        const float *xi = xb + i * ld + c;
        a0 = _mm512_add_ps(a0, _mm512_loadu_ps(xi));
        a1 = _mm512_add_ps(a1, _mm512_loadu_ps(xi + 16));
        a2 = _mm512_add_ps(a2, _mm512_loadu_ps(xi + 32));
        a3 = _mm512_add_ps(a3, _mm512_loadu_ps(xi + 48));
      }
      _mm512_storeu_ps(acc + c, a0);
      _mm512_storeu_ps(acc + c + 16, a1);
      _mm512_storeu_ps(acc + c + 32, a2);
      _mm512_storeu_ps(acc + c + 48, a3);
    }
    for (; c + 16 <= cols; c += 16) {
      __m512 a = _mm512_loadu_ps(acc + c);
      for (size_t i = 0; i < COL_BLOCK_ROWS; i++) a = _mm512_add_ps(a, _mm512_loadu_ps(xb + i * ld + c));
      _mm512_storeu_ps(acc + c, a);
    }
    for (; c < cols; c++)
      for (size_t i = 0; i < COL_BLOCK_ROWS; i++) acc[c] += xb[i * ld + c];
  }
  for (; r < rows; r++)
    for (size_t c = 0; c < cols; c++) acc[c] += x[r * ld + c];
}

__attribute__((target("avx2"))) static float sum_avx2(const float *x, size_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
    a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + i + 8));
    a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x + i + 16));
    a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x + i + 24));
  }
  __m256 t = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  float s = _mm_cvtss_f32(h);
  for (; i < n; i++) s += x[i];
  return s;
}

__attribute__((target("avx512f"))) static void softmax_row_avx512(float *o, const float *x, size_t cols) {
  size_t c = 0;
  __m512 vm = _mm512_set1_ps(-INFINITY);
  for (; c + 16 <= cols; c += 16) vm = _mm512_max_ps(vm, _mm512_loadu_ps(x + c));
  float mx = _mm512_reduce_max_ps(vm);
  for (; c < cols; c++) mx = x[c] > mx ? x[c] : mx;
  __m512 m = _mm512_set1_ps(mx), vs = _mm512_setzero_ps();
  for (c = 0; c + 16 <= cols; c += 16) {
    __m512 e = expf16(_mm512_sub_ps(_mm512_loadu_ps(x + c), m));
    _mm512_storeu_ps(o + c, e);
    vs = _mm512_add_ps(vs, e);
  }
  float s = _mm512_reduce_add_ps(vs);
  for (; c < cols; c++) s += (o[c] = expf(x[c] - mx));
  __m512 inv = _mm512_set1_ps(1.0f / s);
  for (c = 0; c + 16 <= cols; c += 16) _mm512_storeu_ps(o + c, _mm512_mul_ps(_mm512_loadu_ps(o + c), inv));
  for (; c < cols; c++) o[c] *= 1.0f / s;
}

__attribute__((target("avx2"))) static void softmax_row_avx2(float *o, const float *x, size_t cols) {
  size_t c = 0;
  __m256 vm = _mm256_set1_ps(-INFINITY);
  for (; c + 8 <= cols; c += 8) vm = _mm256_max_ps(vm, _mm256_loadu_ps(x + c));
  float lanes[8], mx = -INFINITY;
  _mm256_storeu_ps(lanes, vm);
  for (int l = 0; l < 8; l++) mx = lanes[l] > mx ? lanes[l] : mx;
  for (; c < cols; c++) mx = x[c] > mx ? x[c] : mx;
  __m256 m = _mm256_set1_ps(mx), vs = _mm256_setzero_ps();
  for (c = 0; c + 8 <= cols; c += 8) {
    __m256 e = expf8(_mm256_sub_ps(_mm256_loadu_ps(x + c), m));
    _mm256_storeu_ps(o + c, e);
    vs = _mm256_add_ps(vs, e);
  }
  _mm256_storeu_ps(lanes, vs);
  float s = 0;
  for (int l = 0; l < 8; l++) s += lanes[l];
  for (; c < cols; c++) s += (o[c] = expf(x[c] - mx));
  __m256 inv = _mm256_set1_ps(1.0f / s);
  for (c = 0; c + 8 <= cols; c += 8) _mm256_storeu_ps(o + c, _mm256_mul_ps(_mm256_loadu_ps(o + c), inv));
  for (; c < cols; c++) o[c] *= 1.0f / s;
}
#endif

typedef enum { ISA_GENERIC, ISA_AVX2, ISA_AVX512 } simd_isa;
static simd_isa isa_sum = ISA_GENERIC, isa_softmax = ISA_GENERIC;
static bool chosen;

/* Called once from the main thread before any worker uses the loops (bench_simd_choose). */
void bench_simd_choose(void) {
  if (chosen) return;
  chosen = true;
#if defined(__x86_64__)
  __builtin_cpu_init();
  bool has512 = __builtin_cpu_supports("avx512f"), has2 = __builtin_cpu_supports("avx2");
  isa_sum = has512 ? ISA_AVX512 : has2 ? ISA_AVX2 : ISA_GENERIC;
  void *mvec = dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL); /* part of libc6; stays loaded */
  if (mvec) {
    *(void **)&expf16 = dlsym(mvec, "_ZGVeN16v_expf");
    *(void **)&expf8 = dlsym(mvec, "_ZGVdN8v_expf");
  }
  isa_softmax = has512 && expf16 ? ISA_AVX512 : has2 && expf8 ? ISA_AVX2 : ISA_GENERIC;
#endif
}

static const char *isa_name(simd_isa i) {
  return i == ISA_AVX512 ? "avx512" : i == ISA_AVX2 ? "avx2"
#if defined(__aarch64__) || defined(__ARM_NEON)
                                                    : "neon";
#elif defined(__x86_64__)
                                                    : "sse2";
#else
                                                    : "generic";
#endif
}

void bench_simd_row_sums(float *out, const float *x, size_t rows, size_t cols) {
  for (size_t r = 0; r < rows; r++) out[r] = bench_simd_sum(x + r * cols, cols);
}

void bench_simd_col_sums_add(float *acc, const float *x, size_t rows, size_t cols, size_t ld) {
#if defined(__x86_64__)
  if (isa_sum == ISA_AVX512) return col_add_rows_avx512(acc, x, rows, cols, ld);
#endif
  col_add_rows_generic(acc, x, rows, cols, ld);
}

const char *bench_simd_sum_isa(void) { return isa_name(isa_sum); }
const char *bench_simd_col_isa(void) { return isa_sum == ISA_AVX512 ? "avx512" : isa_name(ISA_GENERIC); }
const char *bench_simd_softmax_isa(void) {
  return isa_softmax == ISA_GENERIC ? "scalar libm expf" : isa_softmax == ISA_AVX512 ? "avx512 + libmvec expf"
                                                                                     : "avx2 + libmvec expf";
}

float bench_simd_sum(const float *x, size_t n) {
#if defined(__x86_64__)
  if (isa_sum == ISA_AVX512) return sum_avx512(x, n);
  if (isa_sum == ISA_AVX2) return sum_avx2(x, n);
#endif
  return sum_generic(x, n);
}

void bench_simd_softmax_row(float *o, const float *x, size_t cols) {
#if defined(__x86_64__)
  if (isa_softmax == ISA_AVX512) return softmax_row_avx512(o, x, cols);
  if (isa_softmax == ISA_AVX2) return softmax_row_avx2(o, x, cols);
#endif
  softmax_row_generic(o, x, cols);
}
