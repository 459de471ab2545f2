/* Simplifications per second over a fixed, generated set of kernel-style index expressions (div/mod by constants,
 * gates), a fresh uop_ctx per batch (so nothing is cached between batches). Prints a table and one JSON line. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "uop/symbolic.h"

static uint64_t rs = 12345;
static uint32_t rnd(uint32_t n) {
  rs = rs * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)((rs >> 33) % n);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define BATCH 256

/* distinct = 1: every expression of a batch gets its own reduce range id, so no two roots (and no subtrees that
 * contain the range) are the same node; the gidx/lidx parts stay shared, as in a real kernel. */
static int distinct;
static int next_range_id;

/* One expression of kernel index math: ((gidx*L + lidx)*U + ridx)//D % M, or its modulo split, under a gate. */
static const uop *make_expr(uop_ctx *ctx, int kind) {
  static const int64_t gs[] = {16, 32, 64, 128}, ls[] = {4, 8, 16}, us[] = {1, 3, 4}, ds[] = {2, 3, 4, 12, 16};
  int64_t G = gs[rnd(4)], L = ls[rnd(3)], U = us[rnd(3)], D = ds[rnd(5)];
  const uop *g = uop_special(ctx, "gidx0", uop_index_const(ctx, G));
  const uop *l = uop_special(ctx, "lidx0", uop_index_const(ctx, L));
  const uop *r = uop_range(ctx, uop_index_const(ctx, U), distinct ? ++next_range_id : 1, UOP_AXIS_REDUCE);
  const uop *idx = uop_alu2(ctx, UOP_ADD, uop_alu2(ctx, UOP_MUL, uop_alu2(ctx, UOP_ADD, uop_alu2(ctx, UOP_MUL, g,
                             uop_index_const(ctx, L)), l), uop_index_const(ctx, U)), r);
  switch (kind) {
  case 0: /* ((g*L+l)*U+r)//D % 16 */
    return uop_alu2(ctx, UOP_MOD, uop_alu2(ctx, UOP_IDIV, idx, uop_index_const(ctx, D)), uop_index_const(ctx, 16));
  case 1: /* (idx//D)*D + idx%D */
    return uop_alu2(ctx, UOP_ADD, uop_alu2(ctx, UOP_MUL, uop_alu2(ctx, UOP_IDIV, idx, uop_index_const(ctx, D)),
                                           uop_index_const(ctx, D)), uop_alu2(ctx, UOP_MOD, idx, uop_index_const(ctx, D)));
  case 2: { /* gated: where(idx < bound & l < 2, idx % (L*U), 0) */
    const uop *gate = uop_alu2(ctx, UOP_AND, uop_alu2(ctx, UOP_CMPLT, idx, uop_index_const(ctx, G * L * U / 2)),
                               uop_alu2(ctx, UOP_CMPLT, l, uop_index_const(ctx, 2)));
    return uop_where(ctx, gate, uop_alu2(ctx, UOP_MOD, idx, uop_index_const(ctx, L * U)), uop_index_const(ctx, 0));
  }
  default: /* (idx + 3) // (L*U) < 2 with a shifted constant */
    return uop_alu2(ctx, UOP_CMPLT, uop_alu2(ctx, UOP_IDIV, uop_alu2(ctx, UOP_ADD, idx, uop_index_const(ctx, 3)),
                                              uop_index_const(ctx, L * U)), uop_index_const(ctx, 2));
  }
}

/* Usage: simplify_bench [budget_s] [batches] [distinct]: with batches > 0, exactly that many batches per family
 * run (a fixed amount of work, for instruction counts under callgrind) instead of a time budget; distinct = 1 makes
 * every expression of a batch a different node (see make_expr), 0 (default) keeps the original mix, in which a
 * batch repeats expressions; a fourth argument runs only that family (0..3). */
int main(int argc, char **argv) {
  double budget_s = argc > 1 ? atof(argv[1]) : 1.0;
  long fixed_batches = argc > 2 ? atol(argv[2]) : 0;
  distinct = argc > 3 ? atoi(argv[3]) : 0;
  int only = argc > 4 ? atoi(argv[4]) : -1; /* run one family only */
  static const char *names[] = {"divmod chain", "recombine", "gated mod", "lt of div"};
  double best[4];
  long total = 0;
  double total_s = 0;
  printf("%-14s %12s %10s\n", "family", "expr/s", "us/expr");
  for (int kind = 0; kind < 4; kind++) {
    if (only >= 0 && kind != only) continue;
    long done = 0;
    double t0 = now_s(), spent = 0;
    rs = 12345 + kind;
    while (fixed_batches > 0 ? done < fixed_batches * BATCH : spent < budget_s / 4) {
      uop_ctx *ctx;
      if (uop_ctx_create(&ctx)) return 1;
      const uop *in[BATCH];
      next_range_id = 0;
      for (int i = 0; i < BATCH; i++) in[i] = make_expr(ctx, kind);
      double t1 = now_s();
      for (int i = 0; i < BATCH; i++) {
        const uop *out;
        hcq_status st = uop_simplify(ctx, in[i], &out);
        if (st) {
          fprintf(stderr, "simplify failed: %s\n", hcq_status_message(st));
          return 1;
        }
      }
      spent += now_s() - t1;
      done += BATCH;
      uop_ctx_destroy(ctx);
      if (fixed_batches <= 0 && now_s() - t0 > 10 * budget_s) break;
    }
    best[kind] = done / spent;
    total += done;
    total_s += spent;
    printf("%-14s %12.0f %10.2f\n", names[kind], best[kind], 1e6 / best[kind]);
  }
  double rate = total / total_s;
  printf("%-14s %12.0f %10.2f\n", "all", rate, 1e6 / rate);
  printf("{\"name\":\"simplify%s\",\"metric\":\"expr/s\",\"value\":%.0f}\n", distinct ? "_distinct" : "", rate);
  return 0;
}
