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

/* One 16x16 tile: dst[c * ds + r] = src[r * ss + c], r, c < 16. */
static void tile_scalar(float *dst, size_t ds, const float *src, size_t ss) {
  for (size_t c = 0; c < 16; c++)
    for (size_t r = 0; r < 16; r++) dst[c * ds + r] = src[r * ss + c];
}

/* A partial tile at an edge: nr x nc. */
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
#endif

static void tile16(float *dst, size_t ds, const float *src, size_t ss) {
#if defined(__x86_64__)
  if (use_avx512) {
    /* whole-line non-temporal stores need each of the 16 output rows 64-byte aligned */
    bool nt = (((uintptr_t)dst | ds * sizeof(float)) & 63) == 0;
    tile_avx512(dst, ds, src, ss, nt);
    return;
  }
#endif
  tile_scalar(dst, ds, src, ss);
}

void bench_transpose_rows(float *out, const float *x, size_t rows, size_t cols, size_t r0, size_t r1) {
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
#if defined(__x86_64__)
  _mm_sfence(); /* the non-temporal stores are weakly ordered: visible before the pool reports the task done */
#endif
}
