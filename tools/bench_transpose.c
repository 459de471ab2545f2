/* Hand-tuned transpose baseline: see bench_transpose.h. */
#include "tools/bench_transpose.h"

#include <stdint.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

static bool use_avx512;

const char *bench_transpose_choose(bool allow_simd) {
  use_avx512 = false;
#if defined(__x86_64__)
  __builtin_cpu_init();
  use_avx512 = allow_simd && __builtin_cpu_supports("avx512f");
#else
  (void)allow_simd;
#endif
  return use_avx512 ? "avx512" : "scalar";
}

/* A tile of nr x nc in scalar code (the edges, and every tile without AVX-512): dst[c * ds + r] = src[r * ss + c]. */
static void tile_edge(float *dst, size_t ds, const float *src, size_t ss, size_t nr, size_t nc) {
  for (size_t c = 0; c < nc; c++)
    for (size_t r = 0; r < nr; r++) dst[c * ds + r] = src[r * ss + c];
}

#if defined(__x86_64__)
/* 16x16 in registers: pairs of rows interleaved by element (unpack ps), by pairs (unpack pd), then 128-bit lanes
 * regrouped twice (shuffle_f32x4); row j of the result is column j of the tile. */
__attribute__((target("avx512f"))) static void tile_avx512(float *dst, size_t ds, const float *src, size_t ss,
                                                           bool nt) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(src + (size_t)i * ss);
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]);
    __m512d c = _mm512_castps_pd(t[i + 2]), d = _mm512_castps_pd(t[i + 3]);
    r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
    r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
    r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
    r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
  }
  /* r[4g + m], 128-bit lane l: rows 4g..4g+3, column 4l + m */
  for (int m = 0; m < 4; m++) {
    t[m] = _mm512_shuffle_f32x4(r[m], r[4 + m], 0x88);
    t[4 + m] = _mm512_shuffle_f32x4(r[m], r[4 + m], 0xdd);
    t[8 + m] = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0x88);
    t[12 + m] = _mm512_shuffle_f32x4(r[8 + m], r[12 + m], 0xdd);
  }
  for (int m = 0; m < 4; m++) {
    r[m] = _mm512_shuffle_f32x4(t[m], t[8 + m], 0x88);
    r[8 + m] = _mm512_shuffle_f32x4(t[m], t[8 + m], 0xdd);
    r[4 + m] = _mm512_shuffle_f32x4(t[4 + m], t[12 + m], 0x88);
    r[12 + m] = _mm512_shuffle_f32x4(t[4 + m], t[12 + m], 0xdd);
  }
  if (nt)
    for (int j = 0; j < 16; j++) _mm512_stream_ps(dst + (size_t)j * ds, r[j]);
  else
    for (int j = 0; j < 16; j++) _mm512_storeu_ps(dst + (size_t)j * ds, r[j]);
}

/* 16 rows x 4 columns: four 4x4 transposes; output row j gets the 16 rows' column j as one line. */
__attribute__((target("avx512f"))) static void strip_avx512(float *dst, size_t ds, const float *src, size_t ss,
                                                            bool nt) {
  __m128 c[4][4];
  for (int g = 0; g < 4; g++) {
    __m128 a = _mm_loadu_ps(src + (size_t)(4 * g) * ss), b = _mm_loadu_ps(src + (size_t)(4 * g + 1) * ss);
    __m128 e = _mm_loadu_ps(src + (size_t)(4 * g + 2) * ss), d = _mm_loadu_ps(src + (size_t)(4 * g + 3) * ss);
    _MM_TRANSPOSE4_PS(a, b, e, d);
    c[g][0] = a, c[g][1] = b, c[g][2] = e, c[g][3] = d;
  }
  for (int j = 0; j < 4; j++) {
    __m512 v = _mm512_castps128_ps512(c[0][j]);
    v = _mm512_insertf32x4(v, c[1][j], 1);
    v = _mm512_insertf32x4(v, c[2][j], 2);
    v = _mm512_insertf32x4(v, c[3][j], 3);
    if (nt) _mm512_stream_ps(dst + (size_t)j * ds, v);
    else _mm512_storeu_ps(dst + (size_t)j * ds, v);
  }
}

/* whole-line non-temporal stores need each of the output rows 64-byte aligned */
static bool nt_ok(const float *dst, size_t ds) { return (((uintptr_t)dst | ds * sizeof(float)) & 63) == 0; }
#endif

static void strip16x4(float *dst, size_t ds, const float *src, size_t ss) {
#if defined(__x86_64__)
  if (use_avx512) {
    strip_avx512(dst, ds, src, ss, nt_ok(dst, ds));
    return;
  }
#endif
  tile_edge(dst, ds, src, ss, 16, 4);
}

static void tile16(float *dst, size_t ds, const float *src, size_t ss) {
#if defined(__x86_64__)
  if (use_avx512) {
    tile_avx512(dst, ds, src, ss, nt_ok(dst, ds));
    return;
  }
#endif
  tile_edge(dst, ds, src, ss, 16, 16);
}

/* Along each 16-row strip, 4 columns at a time; partial strips and the last columns as edges. */
static void transpose_strips(float *out, const float *x, size_t rows, size_t cols, size_t r0, size_t r1) {
  for (size_t i = r0; i < r1; i += 16) {
    size_t nr = r1 - i < 16 ? r1 - i : 16, j = 0;
    for (; nr == 16 && j + 4 <= cols; j += 4) strip16x4(out + j * rows + i, rows, x + i * cols + j, cols);
    if (j < cols) tile_edge(out + j * rows + i, rows, x + i * cols + j, cols, nr, cols - j);
  }
}

/* Blocks of BLOCK_ROWS x BLOCK_COLS, 16x16 tiles inside, edges partial. */
static void transpose_blocked(float *out, const float *x, size_t rows, size_t cols, size_t r0, size_t r1) {
  for (size_t ib = r0; ib < r1; ib += BENCH_TRANSPOSE_BLOCK_ROWS) {
    size_t ie = r1 - ib < BENCH_TRANSPOSE_BLOCK_ROWS ? r1 : ib + BENCH_TRANSPOSE_BLOCK_ROWS;
    for (size_t jb = 0; jb < cols; jb += BENCH_TRANSPOSE_BLOCK_COLS) {
      size_t je = cols - jb < BENCH_TRANSPOSE_BLOCK_COLS ? cols : jb + BENCH_TRANSPOSE_BLOCK_COLS;
      /* down the block's rows for each 16-column strip: each output row gets one run of the block's height */
      for (size_t j = jb; j < je; j += 16) {
        size_t nc = je - j < 16 ? je - j : 16;
        for (size_t i = ib; i < ie; i += 16) {
          size_t nr = ie - i < 16 ? ie - i : 16;
          float *d = out + j * rows + i;
          const float *s = x + i * cols + j;
          if (nr == 16 && nc == 16) tile16(d, rows, s, cols);
          else tile_edge(d, rows, s, cols, nr, nc);
        }
      }
    }
  }
}

void bench_transpose_rows(bench_transpose_shape shape, float *out, const float *x, size_t rows, size_t cols, size_t r0,
                          size_t r1) {
  if (shape == BENCH_TRANSPOSE_STRIPS) transpose_strips(out, x, rows, cols, r0, r1);
  else transpose_blocked(out, x, rows, cols, r0, r1);
#if defined(__x86_64__)
  _mm_sfence(); /* the non-temporal stores are weakly ordered: visible before the pool reports the task done */
#endif
}
