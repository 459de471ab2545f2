/* uop_toposort and uop_substitute over random DAGs, checked against brute force that uses neither ids nor maps:
 * reachability by a naive recursive walk over a plain list, values by direct evaluation. The walks share the
 * context's epoch-stamped marks, so many walks interleaved with node creation (the marks grow) are exercised. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "uop/match.h"
#include "uop/uop.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(uint32_t n) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 33) % n;
}

/* Reachable set of root by plain recursion; list holds each reachable node once (linear-search dedup). */
static bool in_list(const uop *const *list, size_t n, const uop *x) {
  for (size_t i = 0; i < n; i++)
    if (list[i] == x) return true;
  return false;
}
static void reach(const uop *x, const uop **list, size_t *n) {
  if (in_list(list, *n, x)) return;
  list[(*n)++] = x;
  for (uint32_t i = 0; i < x->nsrc; i++) reach(x->src[i], list, n);
}
static size_t index_in(const uop *const *list, size_t n, const uop *x) {
  for (size_t i = 0; i < n; i++)
    if (list[i] == x) return i;
  return SIZE_MAX;
}

/* Value of an index expression; vars by name (a0..a9), memo on a small pointer list to keep the DAG linear. */
typedef struct memo {
  const uop *k[4096];
  int64_t v[4096];
  size_t n;
} memo;
static int64_t eval(const uop *x, const int64_t *vars, memo *m) {
  size_t at = index_in(m->k, m->n, x);
  if (at != SIZE_MAX) return m->v[at];
  int64_t r = 0;
  if (x->op == UOP_CONST) r = x->arg.i;
  else if (x->op == UOP_DEFINE_VAR) r = vars[x->arg.str[1] - '0'];
  else {
    int64_t a = eval(x->src[0], vars, m), b = eval(x->src[1], vars, m);
    r = x->op == UOP_ADD ? (int64_t)((uint64_t)a + (uint64_t)b) : (int64_t)((uint64_t)a * (uint64_t)b);
  }
  if (m->n < 4096) {
    m->k[m->n] = x;
    m->v[m->n++] = r;
  }
  return r;
}

/* A random DAG of ADD/MUL over vars a0..a9 and small constants; returns its nodes in creation order. */
static size_t build(uop_ctx *ctx, const uop **made, size_t want) {
  size_t n = 0;
  char name[3] = "a0";
  for (int v = 0; v < 10; v++) {
    name[1] = (char)('0' + v);
    made[n++] = uop_var(ctx, name, 0, 100, uop_dt(UOP_INDEX));
  }
  for (int c = 1; c <= 5; c++) made[n++] = uop_index_const(ctx, c * 7);
  while (n < want) {
    const uop *a = made[rnd((uint32_t)n)], *b = made[n - 1 - rnd((uint32_t)(n < 8 ? n : 8))];
    const uop *src[2] = {a, b};
    made[n++] = uop_new(ctx, rnd(2) ? UOP_ADD : UOP_MUL, uop_dt(UOP_INDEX), src, 2, uop_arg_none());
  }
  return n;
}

static void check_topo(uop_ctx *ctx, const uop *root) {
  static const uop *ref[8192];
  size_t nref = 0;
  reach(root, ref, &nref);
  const uop **order;
  size_t count;
  CHECK_OK(uop_toposort(ctx, root, &order, &count));
  CHECK_EQ_INT((int64_t)count, (int64_t)nref);
  bool all = true, before = true;
  for (size_t i = 0; i < count; i++) {
    all &= in_list(ref, nref, order[i]) && index_in(order, count, order[i]) == i; /* reachable, once */
    for (uint32_t s = 0; s < order[i]->nsrc; s++) before &= index_in(order, i, order[i]->src[s]) != SIZE_MAX;
  }
  CHECK(all);
  CHECK(before);
  CHECK(count && order[count - 1] == root);
}

int main(void) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  static const uop *made[4096];
  size_t n = build(ctx, made, 200);
  /* walks from many roots, the graph growing between them so the marks must extend */
  for (int round = 0; round < 60; round++) {
    check_topo(ctx, made[n - 1 - rnd(40)]);
    if (round % 10 == 9 && n + 100 < 4096) {
      size_t more = n + 100;
      while (n < more) {
        const uop *src[2] = {made[rnd((uint32_t)n)], made[n - 1]};
        made[n++] = uop_new(ctx, UOP_ADD, uop_dt(UOP_INDEX), src, 2, uop_arg_none());
      }
    }
  }
  /* repeated walks (the order under a root is cached per context): roots that share a cache entry (ids 8 apart) and
   * roots walked again after others, each checked against the brute-force reachable set */
  for (int round = 0; round < 60; round++) {
    const uop *r = made[n - 1 - rnd(64)];
    check_topo(ctx, r);
    for (size_t j = n; j-- > 0;)
      if (made[j] != r && made[j]->id % 8 == r->id % 8) {
        check_topo(ctx, made[j]);
        break;
      }
    check_topo(ctx, r);
  }
  /* substitute: vars -> other values, compared with evaluating the original under those values */
  for (int round = 0; round < 40; round++) {
    int64_t base[10], subst[10];
    const uop *from[3], *to[3];
    for (int v = 0; v < 10; v++) base[v] = subst[v] = rnd(50);
    for (int j = 0; j < 3; j++) {
      int v = (int)rnd(10);
      while (true) {
        bool dup = false;
        for (int q = 0; q < j; q++) dup |= from[q] == made[v];
        if (!dup) break;
        v = (v + 1) % 10;
      }
      subst[v] = rnd(50);
      from[j] = made[v];
      to[j] = uop_index_const(ctx, subst[v]);
    }
    const uop *root = made[n - 1 - rnd(60)], *out = NULL;
    CHECK_OK(uop_substitute(ctx, root, from, to, 3, &out));
    static memo m1, m2;
    m1.n = m2.n = 0;
    CHECK(out && eval(out, base, &m1) == eval(root, subst, &m2));
    if (round % 8 == 0) check_topo(ctx, out); /* walks over nodes the substitution just made */
  }
  /* a source from another context (its id beyond this context's nodes) is an error, not a stray write */
  uop_ctx *other = NULL;
  CHECK_OK(uop_ctx_create(&other));
  const uop *src[2] = {made[n - 1], made[n - 1]};
  const uop *x = uop_new(other, UOP_ADD, uop_dt(UOP_INDEX), src, 2, uop_arg_none());
  const uop **order;
  size_t count;
  CHECK_ERR(uop_toposort(other, x, &order, &count), HCQ_CODE_INVALID, "another context");
  const uop *out = NULL;
  CHECK_ERR(uop_substitute(other, x, NULL, NULL, 0, &out), HCQ_CODE_INVALID, "another context");
  CHECK_ERR(uop_toposort(other, made[n - 1], &order, &count), HCQ_CODE_INVALID, "not a node of this context");
  uop_ctx_destroy(other);
  uop_ctx_destroy(ctx);
  return testing_summary("order_test");
}
