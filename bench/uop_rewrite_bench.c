/* Nodes per second through uop_graph_rewrite with a trivial rule set (x+0 -> x, constant folding of ADD), for a
 * deep chain and a wide tree, in both modes. Prints a table and one JSON line. */
#include <stdio.h>
#include <time.h>

#include "uop/match.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static const uop *rw_x(uop_rewrite_ctx *rc, const uop *node, const uop_bindings *b) {
  (void)rc;
  (void)node;
  return uop_b(b, "x");
}
static const uop *fold_add(uop_rewrite_ctx *rc, const uop *node, const uop_bindings *b) {
  (void)node;
  return uop_index_const(rc->uctx, uop_b(b, "a")->arg.i + uop_b(b, "b")->arg.i);
}

int main(void) {
  static const uop_rule rules[] = {{"(ADD~ x 0)", rw_x, "add0"}, {"(ADD:index #a #b)", fold_add, "fold"}};
  uop_pm *pm;
  hcq_status st = uop_pm_create(rules, 2, &pm);
  if (st) {
    fprintf(stderr, "uop_rewrite_bench: %s\n", hcq_status_message(st));
    return 1;
  }
  const int n = 200000;
  const char *shapes[2] = {"chain", "tree"};
  double rate[2][2] = {{0}};
  printf("%-6s %-13s %10s %12s\n", "shape", "mode", "nodes", "nodes/s");
  for (int shape = 0; shape < 2; shape++) {
    for (int mode = 0; mode < 2; mode++) {
      uop_ctx *ctx;
      if ((st = uop_ctx_create(&ctx))) return 1;
      const uop *x = uop_var(ctx, "x", 0, 100, uop_dt(UOP_INDEX)), *zero = uop_index_const(ctx, 0);
      const uop *root = x;
      if (shape == 0) { /* (((x + 0) + i) + 0) ...: distinct nodes, half of them rewrite */
        for (int i = 0; i < n / 2; i++)
          root = uop_alu2(ctx, UOP_ADD, uop_alu2(ctx, UOP_ADD, root, zero), uop_index_const(ctx, i + 1));
      } else { /* balanced tree of MAX over (var_i + 0) leaves */
        const uop **level = uop_ctx_alloc(ctx, (size_t)n * sizeof *level);
        int cnt = n / 2;
        for (int i = 0; i < cnt; i++) {
          char name[24];
          snprintf(name, sizeof name, "v%d", i);
          level[i] = uop_alu2(ctx, UOP_ADD, uop_var(ctx, name, 0, 9, uop_dt(UOP_INDEX)), zero);
        }
        while (cnt > 1) {
          int k = 0;
          for (int i = 0; i + 1 < cnt; i += 2) level[k++] = uop_alu2(ctx, UOP_MAX, level[i], level[i + 1]);
          if (cnt % 2) level[k++] = level[cnt - 1];
          cnt = k;
        }
        root = level[0];
      }
      size_t nodes = uop_ctx_node_count(ctx);
      const uop *out;
      double t0 = now_s();
      st = uop_graph_rewrite(ctx, root, pm, (uop_rewrite_mode)mode, NULL, &out);
      double dt = now_s() - t0;
      if (st) {
        fprintf(stderr, "uop_rewrite_bench: %s\n", hcq_status_message(st));
        return 1;
      }
      rate[shape][mode] = (double)nodes / dt;
      printf("%-6s %-13s %10zu %12.0f\n", shapes[shape], mode ? "node_first" : "sources_first", nodes, rate[shape][mode]);
      uop_ctx_destroy(ctx);
    }
  }
  printf("{\"bench\":\"uop_rewrite\",\"chain_sources_first_nodes_per_s\":%.0f,\"chain_node_first_nodes_per_s\":%.0f,"
         "\"tree_sources_first_nodes_per_s\":%.0f,\"tree_node_first_nodes_per_s\":%.0f}\n",
         rate[0][0], rate[0][1], rate[1][0], rate[1][1]);
  uop_pm_destroy(pm);
  return 0;
}
