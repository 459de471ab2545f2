/* Padded register tiles on the c target (heuristic.c PADTO + vectorize.c lane gates + render_c.c): a matmul whose
 * width whole 16-lane tiles do not cover keeps each 16 lanes of its tile (one vector, or two in the 32-lane tile)
 * one full-width vector (the edge tile's gates differ per lane: they must not split the vectors), never touches memory outside its buffers (each buffer ends at a PROT_NONE
 * guard: cpu_mem.h), never reads the output before it has written it (the output starts as NaN/inf), and computes
 * what the reference interpreter computes on the original kernel. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/opt_test_util.h"
#include "cpu/cpu_mem.h"
#include "base/testing.h"

static char *matmul_text(int m, int k, int n) {
  char *t = malloc(700);
  if (t)
    snprintf(t, 700,
             "(kernel mm (let c (buf 0 float32 %d)) (let a (buf 1 float32 %d)) (let b (buf 2 float32 %d))"
             " (let r0 (range 0 %d loop)) (let r1 (range 1 %d loop)) (let k (range 1002 %d reduce))"
             " (sink (store (index c (+ (* r0 %d) r1))"
             " (reduce add (* (load (index a (+ (* r0 %d) k))) (load (index b (+ (* k %d) r1)))) k) r0 r1)))",
             m * n, m * k, k * n, m, n, k, n, k, n);
  return t;
}

/* The output before the kernel runs: NaN, +inf, -inf in turn (a value read before it is written shows). */
static void poison(float *c, int64_t n) {
  static const float P[3] = {NAN, INFINITY, -INFINITY};
  for (int64_t i = 0; i < n; i++) c[i] = P[i % 3];
}

/* Compile text with opts (NULL: the heuristic), run it natively on guarded buffers and compare with the
 * interpreter. Returns the source (malloc'd) or NULL. */
static char *run_guarded(uop_ctx *ctx, const cc_target *t, const char *text, const char *opts) {
  otu_case c;
  otu_case_open(ctx, text, opts, &c);
  const uop *sink = c.sink;
  cc_program *p = NULL;
  tu_kernel k = {0};
  cc_kbuf *ref = NULL, *got = NULL;
  size_t nref = 0, ngot = 0;
  cpu_buffer *g[3] = {0};
  hcq_status st = sink ? tu_build_sink(ctx, sink, t, c.o, &p, &k) : HCQ_OK;
  if (!st && p) st = cc_kernel_buffers(sink, &ref, &nref);
  if (!st && p) st = cc_kernel_buffers(sink, &got, &ngot);
  if (!st && p) st = cc_kbufs_alloc_fill(ref, nref, 11);
  if (!st && p && (nref != 3 || hcq_program_nbufs(&p->desc) != 3)) st = hcq_status_make(HCQ_CODE_INVALID, "3 buffers");
  if (!st && p) poison(ref[0].data, ref[0].nelems);
  for (size_t i = 0; !st && p && i < 3; i++) {
    st = cpu_buffer_alloc(ref[i].size_B, &g[i]);
    if (!st) { /* it ends less than CPU_BUFFER_ALIGN_B bytes before its upper guard: an overrun faults */
      got[i].data = g[i]->ptr;
      memcpy(got[i].data, ref[i].data, ref[i].size_B);
    }
  }
  if (!st && p) st = otu_interp(sink, ref, nref, NULL, 0);
  size_t bad = SIZE_MAX;
  if (!st && p) {
    uintptr_t args[4];
    for (size_t i = 0; i < 3; i++)
      for (size_t j = 0; j < 3; j++)
        if (got[j].slot == p->desc.params[i].slot) args[i] = (uintptr_t)got[j].data;
    int64_t threads = cc_launch_const(p->desc.global[0]);
    for (int64_t core = 0; core < (threads < 1 ? 1 : threads); core++) {
      args[3] = (uintptr_t)core;
      tu_call(&k, args, 4);
    }
    bad = otu_diff(ref, got, nref);
  }
  if (st) {
    fprintf(stderr, "vectorize_pad: %s\n", hcq_status_message(st));
    hcq_status_free(st);
  }
  CHECK_EQ_INT((long long)bad, 0);
  char *src = p && p->source && !bad ? strdup(p->source) : NULL;
  if (bad) fprintf(stderr, "  %zu elements differ: %s\n  opts %s\n", bad, text, opts ? opts : "(heuristic)");
  tu_unload(&k);
  for (size_t i = 0; got && i < ngot; i++) got[i].data = NULL; /* the guarded buffers' own memory */
  cc_kbufs_free(got, ngot);
  cc_kbufs_free(ref, nref);
  for (size_t i = 0; i < 3; i++) cpu_buffer_free(g[i]);
  cc_program_free(p);
  otu_case_close(&c);
  return src;
}

/* The widest vector type is there and half of it is not: no lane tile split at a gate. */
static bool full_width(const char *src, int vmax) {
  char full[48], half[48];
  snprintf(full, sizeof full, "typedef float float%d ", vmax);
  snprintf(half, sizeof half, "typedef float float%d ", vmax / 2);
  return strstr(src, full) && !strstr(src, half);
}

int main(void) {
  if (!tu_have(cc_toolchain_cc())) return 77;
  cc_target t;
  CHECK_OK(cc_target_get("c", 2, &t));
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  /* widths 1..33 around the tiles, heights that need a row pad or not, depths that do not divide anything */
  static const int SHAPES[][3] = {{1, 1, 1},   {3, 3, 3},   {15, 7, 15},  {17, 5, 17},  {33, 3, 33}, {17, 33, 40},
                                  {24, 9, 31}, {8, 15, 1000}, {3, 17, 1000}, {40, 3, 17}, {120, 2, 33}};
  /* explicit opts: the heuristic's tile for an odd 1000-wide matmul, and with a row pad, a KBLOCK, lanes 8; the
   * wide tile, alone and with a row pad */
  static const char *OPTS[] = {
      NULL,
      "PADTO:1:32,UPCAST:1:16",
      "PADTO:1:32,PADTO:0:16,UPCAST:1:16,UPCAST:0:8,THREAD:0:2",
      "PADTO:1:16,UPCAST:1:16,UPCAST:0:2",
      "PADTO:1:8,UPCAST:1:8",
      "PADTO:1:64,UPCAST:1:16,UPCAST:1:2", /* the wide tile (AVX-512): two vectors a row, 32 lanes apart */
      "PADTO:1:64,PADTO:0:16,UPCAST:1:16,UPCAST:1:2,UPCAST:0:8,THREAD:0:2",
  };
  /* the host's widest vectors, then 4-float ones (as on aarch64 and armhf, where 4 floats fill the alignment) */
  cc_target t4 = t;
  t4.vector_max = 4;
  int full = 0, wide = 0;
  for (int pass = 0; pass < 2; pass++)
  for (size_t s = 0; s < sizeof SHAPES / sizeof SHAPES[0]; s++) {
    const cc_target tt = pass ? t4 : t;
    int vmax = tt.vector_max;
    int m = SHAPES[s][0], kk = SHAPES[s][1], n = SHAPES[s][2];
    char *text = matmul_text(m, kk, n);
    for (size_t oi = 0; text && oi < sizeof OPTS / sizeof OPTS[0]; oi++) {
      const char *o = OPTS[oi];
      if (o && strstr(o, "UPCAST:0:8") && m % 8) continue; /* the row pad is 16: 8 divides it only then */
      if (o && strstr(o, "UPCAST:0:2") && m % 2) continue;
      int pad = o ? atoi(o + strlen("PADTO:1:")) : 0;
      if (pad && n <= (n + pad - 1) / pad * pad / 4) continue; /* PADTO refuses more than quadruple the work */
      char *src = run_guarded(ctx, &tt, text, o);
      /* a 16-lane tile: full vectors on every row, whatever the edge (rows at any offset fold where vectors are
       * wider than the buffers' alignment, x86's 16 floats; on 4-float targets only rows that stay aligned) */
      bool rows_fold = vmax * 4 > tt.buf_align_B || n % vmax == 0;
      if (src && o && strstr(o, "UPCAST:1:16") && n > 1 && vmax >= 4 && rows_fold) {
        wide++;
        full += full_width(src, vmax);
        if (!full_width(src, vmax)) fprintf(stderr, "  split vectors: %dx%dx%d %s\n%s\n", m, kk, n, o, src);
      }
      free(src);
    }
    /* the KBLOCK the heuristic picks for big panels, on a depth it divides */
    if (text && kk % 3 == 0 && n >= 16 && n > (n + 31) / 32 * 8) {
      char o[96];
      snprintf(o, sizeof o, "PADTO:1:32,UPCAST:1:16,KBLOCK:0:%d", kk / 3);
      free(run_guarded(ctx, &tt, text, o));
    }
    free(text);
  }
  CHECK(wide > 0);
  CHECK_EQ_INT(full, wide);
  uop_ctx_destroy(ctx);
  return testing_summary("vectorize_pad");
}
