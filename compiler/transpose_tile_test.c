/* The CPU heuristic's transpose tile (heuristic.c cpu_transpose_tile) on kernels whose store and load are contiguous
 * along different axes: 2-D transposes and a 3-D permute, float32 / float16 / int8 / uint64, sizes that are
 * multiples of the tile and sizes that are not (padded: PADTO, gated tail). Each kernel, compiled with the heuristic
 * for the c target (with and without non-temporal stores), must compute what the reference interpreter computes,
 * and must get the 16 (store axis) x 4 (load axis) tile whenever each axis is a multiple of twice its tile or at
 * least 8 tiles long; a shorter odd axis leaves the kernel untiled. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/opt_test_util.h"
#include "base/testing.h"

static uop_ctx *g_ctx;

/* out[c][r] = x[r][c] for an r x c matrix: r0 is the store's unit-stride axis, r1 the load's. */
static char *transpose_text(const char *dt, long r, long c) {
  char *s = NULL;
  if (asprintf(&s,
               "(kernel tr (let out (buf 0 %s %ld)) (let x (buf 1 %s %ld)) (let r0 (range 0 %ld loop))"
               " (let r1 (range 1 %ld loop)) (sink (store (index out (+ (* r1 %ld) r0))"
               " (load (index x (+ (* r0 %ld) r1))) r0 r1)))",
               dt, r * c, dt, r * c, r, c, r, c) < 0)
    return NULL;
  return s;
}

/* out[c][a][b] = x[a][b][c]: the store is contiguous along b (r1), the load along c (r2). */
static char *permute3_text(const char *dt, long a, long b, long c) {
  char *s = NULL;
  long n = a * b * c;
  if (asprintf(&s,
               "(kernel p3 (let out (buf 0 %s %ld)) (let x (buf 1 %s %ld)) (let r0 (range 0 %ld loop))"
               " (let r1 (range 1 %ld loop)) (let r2 (range 2 %ld loop))"
               " (sink (store (index out (+ (+ (* r2 %ld) (* r0 %ld)) r1))"
               " (load (index x (+ (+ (* r0 %ld) (* r1 %ld)) r2))) r0 r1 r2)))",
               dt, n, dt, n, a, b, c, a * b, b, b * c, c) < 0)
    return NULL;
  return s;
}

/* The UPCAST amounts applied to axes `store_axis` and `load_axis` (0 when none), and whether a PADTO was; with
 * store_axis < 0, the first UPCAST by 16 and the first by 4 on any axes. */
static void tile_of(const cc_program *p, int store_axis, int load_axis, int64_t *up_s, int64_t *up_l, bool *pad) {
  *up_s = *up_l = 0;
  *pad = false;
  for (size_t i = 0; p && i < p->napplied_opts; i++) {
    const cc_opt *o = &p->applied_opts[i];
    bool any = store_axis < 0;
    if (o->op == CC_OPT_UPCAST && !*up_s && (any ? o->amount == 16 : o->axis == store_axis)) *up_s = o->amount;
    else if (o->op == CC_OPT_UPCAST && !*up_l && (any ? o->amount == 4 : o->axis == load_axis)) *up_l = o->amount;
    *pad |= o->op == CC_OPT_PADTO;
  }
}

static void check_one(const char *what, char *text, const cc_target *t, int store_axis, int load_axis,
                      bool want_tile, bool want_pad) {
  if (!text) {
    CHECK(false);
    return;
  }
  cc_program *p = NULL;
  size_t bad = otu_check_text(g_ctx, text, t, NULL, NULL, 0, 11, &p);
  free(text);
  int64_t up_s, up_l;
  bool pad;
  tile_of(p, store_axis, load_axis, &up_s, &up_l, &pad);
  bool tiled = up_s == 16 && up_l == 4;
  if (bad || tiled != want_tile || pad != want_pad)
    fprintf(stderr, "  %s (HCQ_CC=%s, nt from %lld B): %zu bad, upcast store %lld load %lld (want tile %d), pad %d\n",
            what, getenv("HCQ_CC"), (long long)t->nt_store_min_B, bad, (long long)up_s, (long long)up_l, want_tile, pad);
  CHECK_EQ_INT(tiled, want_tile);
  CHECK_EQ_INT(pad, want_pad);
  cc_program_free(p);
}

/* ndt: how many of the dtypes (the first ndt) to check. */
static void run_all(const cc_target *t, size_t ndt) {
  static const char *DT[] = {"float32", "float16", "int8", "uint64"};
  static const struct { long r, c; bool tile, pad, all; } SH[] = {
      {64, 64, true, false, false},  /* multiples of 32 x 8 */
      {130, 67, true, true, true},   /* both axes padded: 130 -> 160, 67 -> 72 */
      {128, 100, true, true, false}, /* the load axis padded */
      {200, 48, true, true, true},   /* the store axis padded */
      {100, 30, false, false, true}, /* the store axis under 8 tiles and not a multiple: untiled */
  };
  for (size_t d = 0; d < ndt && d < sizeof DT / sizeof DT[0]; d++) {
    for (size_t i = 0; i < sizeof SH / sizeof SH[0]; i++) {
      if (d && !SH[i].all) continue; /* the other dtypes: the shapes that differ most (kept fast) */
      char what[96];
      snprintf(what, sizeof what, "transpose %s %ldx%ld", DT[d], SH[i].r, SH[i].c);
      check_one(what, transpose_text(DT[d], SH[i].r, SH[i].c), t, 0, 1, SH[i].tile, SH[i].pad);
    }
    char what[96];
    snprintf(what, sizeof what, "permute3 %s 3x136x37", DT[d]);
    check_one(what, permute3_text(DT[d], 3, 136, 37), t, -1, -1, true, true);
  }
}

/* Non-temporal stores in a padded tile (x86_64): a gated 16-float row into 64-byte aligned output rows (128x100:
 * the load axis padded, so the output's row index is gated) is one whole-line NT store under its gate; gated stores
 * into rows that are not line-aligned (132x67: a 132-float row stride, float4 stores) stay plain, since NT pieces
 * of a line written apart reach memory as partial-line writes. */
static void check_nt_gated(const cc_target *nt) {
  static const struct { long r, c; bool want16, want_none; } SH[] = {{128, 100, true, false}, {132, 67, false, true}};
  for (size_t i = 0; i < sizeof SH / sizeof SH[0]; i++) {
    char *text = transpose_text("float32", SH[i].r, SH[i].c);
    cc_program *p = NULL;
    size_t bad = text ? otu_check_text(g_ctx, text, nt, NULL, NULL, 0, 13, &p) : SIZE_MAX;
    free(text);
    if (!p) continue;
    const char *body = strstr(p->source, "core_id)"); /* past the macro definitions */
    bool has16 = body && strstr(body, "HCQ_NT_V16((") != NULL;
    bool any = body && (has16 || strstr(body, "HCQ_NT4(") || strstr(body, "HCQ_NT1("));
    if (bad || has16 != SH[i].want16 || any == SH[i].want_none)
      fprintf(stderr, "  nt gated %ldx%ld (HCQ_CC=%s): %zu bad, 64-byte nt %d, any nt %d\n", SH[i].r, SH[i].c,
              getenv("HCQ_CC"), bad, has16, any);
    CHECK_EQ_INT(has16, SH[i].want16);
    CHECK_EQ_INT(any, !SH[i].want_none);
    cc_program_free(p);
  }
}

int main(void) {
  char dir[] = "/tmp/hcq-transpose-tile-test-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  if (!tu_have("cc")) {
    fprintf(stderr, "transpose_tile_test: no cc (install gcc): skipped\n");
    return 77;
  }
  CHECK_OK(uop_ctx_create(&g_ctx));
  if (!g_ctx) return testing_summary("transpose_tile");
  cc_target t;
  CHECK_OK(cc_target_get("c", 2, &t));
  setenv("HCQ_CC", "cc", 1);
  run_all(&t, 4);
  if (t.nt_store_min_B > 0) { /* x86_64: the non-temporal store paths too (float32, float16) */
    cc_target nt = t;
    nt.nt_store_min_B = 1024;
    run_all(&nt, 2);
    if (nt.vector_max >= 16) check_nt_gated(&nt); /* 16-float rows need AVX-512's vectors */
  }
  uop_ctx_destroy(g_ctx);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", dir);
  return testing_summary("transpose_tile");
}
