/* Pattern matcher features, compile errors, graph_rewrite fixed points in both modes, deep chains, cycles, and
 * nodes of another context refused (graph_rewrite's memo is indexed by node id). */
#include "uop/match.h"
#include "uop/uop_internal.h"

#include "base/testing.h"

static uop_ctx *ctx;
static uop_dtype IDX;

/* A rule function that records the bindings it was called with and returns a marker node. */
static int calls;
static const uop *seen_x, *seen_y, *seen_c;
static const uop *marker;

static const uop *rec_fn(uop_rewrite_ctx *rc, const uop *node, const uop_bindings *b) {
  (void)rc;
  (void)node;
  calls++;
  seen_x = seen_y = seen_c = NULL;
  for (int i = 0; i < b->count; i++) {
    if (!strcmp(b->names[i], "x")) seen_x = b->nodes[i];
    if (!strcmp(b->names[i], "y")) seen_y = b->nodes[i];
    if (!strcmp(b->names[i], "c")) seen_c = b->nodes[i];
  }
  return marker;
}

/* Compile one rule with rec_fn and try it on node. */
static const uop *try1(const char *pattern, const uop *node) {
  uop_rule r = {pattern, rec_fn, NULL};
  uop_pm *pm;
  hcq_status st = uop_pm_create(&r, 1, &pm);
  if (st) {
    fprintf(stderr, "compile %s: %s\n", pattern, hcq_status_message(st));
    hcq_status_free(st);
    return NULL;
  }
  uop_rewrite_ctx rc = {ctx, NULL};
  calls = 0;
  const uop *res = uop_pm_rewrite(pm, &rc, node);
  uop_pm_destroy(pm);
  return res;
}

static const uop *C(int64_t v) { return uop_index_const(ctx, v); }
static const uop *ADD(const uop *a, const uop *b) { return uop_alu2(ctx, UOP_ADD, a, b); }
static const uop *MUL(const uop *a, const uop *b) { return uop_alu2(ctx, UOP_MUL, a, b); }

static void test_features(void) {
  const uop *x = uop_var(ctx, "x", 0, 10, IDX), *y = uop_var(ctx, "y", 0, 10, IDX);
  marker = uop_var(ctx, "marker", 0, 0, IDX);
  /* positional vs commutative */
  CHECK(try1("(ADD x 0)", ADD(x, C(0))) == marker && seen_x == x);
  CHECK(try1("(ADD x 0)", ADD(C(0), x)) == NULL);
  CHECK(try1("(ADD~ x 0)", ADD(C(0), x)) == marker && seen_x == x);
  CHECK(try1("(ADD~ x 0)", ADD(x, C(1))) == NULL);
  /* op sets, wildcard op */
  CHECK(try1("(ADD|MUL x y)", MUL(x, y)) == marker && seen_x == x && seen_y == y);
  CHECK(try1("(ADD|MUL x y)", uop_alu2(ctx, UOP_MAX, x, y)) == NULL);
  CHECK(try1("(* x y)", uop_alu2(ctx, UOP_MAX, x, y)) == marker);
  /* repeated names must bind the same node */
  CHECK(try1("(ADD x x)", ADD(x, x)) == marker && seen_x == x);
  CHECK(try1("(ADD x x)", ADD(x, y)) == NULL);
  /* (x//c)*c + x%c in every order */
  const uop *c4 = C(4);
  const uop *e1 = ADD(MUL(uop_alu2(ctx, UOP_IDIV, x, c4), c4), uop_alu2(ctx, UOP_MOD, x, c4));
  const uop *e2 = ADD(uop_alu2(ctx, UOP_MOD, x, c4), MUL(c4, uop_alu2(ctx, UOP_IDIV, x, c4)));
  const char *pat = "(ADD~ (MUL~ (IDIV x #c) #c) (MOD x #c))";
  CHECK(try1(pat, e1) == marker && seen_x == x && seen_c == c4);
  CHECK(try1(pat, e2) == marker && seen_x == x && seen_c == c4);
  const uop *e3 = ADD(MUL(uop_alu2(ctx, UOP_IDIV, x, c4), C(5)), uop_alu2(ctx, UOP_MOD, x, c4));
  CHECK(try1(pat, e3) == NULL);
  /* dtype sets */
  const uop *xi = uop_var(ctx, "xi", 0, 10, uop_dt(UOP_INT32));
  const uop *ai = uop_alu2(ctx, UOP_ADD, xi, uop_const_int(ctx, uop_dt(UOP_INT32), 0));
  CHECK(try1("(ADD:index x 0)", ADD(x, C(0))) == marker);
  CHECK(try1("(ADD:index x 0)", ai) == NULL);
  CHECK(try1("(ADD:ints x 0)", ai) == marker);
  CHECK(try1("(ADD:sints x 0)", ai) == marker);
  CHECK(try1("(ADD:uints x 0)", ai) == NULL);
  CHECK(try1("(ADD:all_ints x 0)", ADD(x, C(0))) == marker);
  CHECK(try1("(ADD:floats|bool x 0)", ai) == NULL);
  CHECK(try1("(ADD:int8|int32 x 0)", ai) == marker);
  const uop *fv = uop_alu2(ctx, UOP_ADD, uop_var(ctx, "f", 0, 0, uop_dt_vec(uop_dt(UOP_FLOAT32), 4)),
                           uop_const_float(ctx, uop_dt_vec(uop_dt(UOP_FLOAT32), 4), 0.0));
  CHECK(try1("(ADD:float32 x 0)", fv) == marker); /* vectors match scalar sets; float CONST equal to 0 */
  /* INT literals match int constants by value, float constants by equality */
  CHECK(try1("(MUL x -1)", MUL(x, C(-1))) == marker);
  CHECK(try1("(MUL x 1)", MUL(x, C(-1))) == NULL);
  /* '...' allows extra sources; '**' constrains all */
  const uop *s3[3] = {x, y, C(2)};
  const uop *sink = uop_new(ctx, UOP_SINK, uop_dt(UOP_VOID), s3, 3, uop_arg_none());
  CHECK(try1("(SINK x)", sink) == NULL);
  CHECK(try1("(SINK x ...)", sink) == marker && seen_x == x);
  CHECK(try1("(SINK x y #c ...)", sink) == marker && seen_c == s3[2]);
  CHECK(try1("(SINK x y #c z ...)", sink) == NULL);
  CHECK(try1("(SINK ** (DEFINE_VAR|CONST))", sink) == marker);
  CHECK(try1("(SINK ** (DEFINE_VAR))", sink) == NULL);
  const uop *s2[2] = {x, x};
  const uop *sink2 = uop_new(ctx, UOP_SINK, uop_dt(UOP_VOID), s2, 2, uop_arg_none());
  CHECK(try1("(SINK ** x)", sink2) == marker && seen_x == x); /* one name across all sources */
  CHECK(try1("(SINK ** x)", sink) == NULL);
  const uop *sink0 = uop_new(ctx, UOP_SINK, uop_dt(UOP_VOID), NULL, 0, uop_arg_none());
  CHECK(try1("(SINK ** (CONST))", sink0) == marker); /* vacuous */
  /* no source list = no constraint; @ capture; =ARG */
  CHECK(try1("(SINK@x)", sink) == marker && seen_x == sink);
  CHECK(try1("(CONST=2)", C(2)) == marker);
  CHECK(try1("(CONST=-3)", C(-3)) == marker);
  CHECK(try1("(CONST=2)", C(3)) == NULL);
  const uop *g0 = uop_special(ctx, "gidx0", C(4));
  CHECK(try1("(SPECIAL=gidx0)", g0) == marker);
  CHECK(try1("(SPECIAL=lidx0)", g0) == NULL);
  CHECK(try1("(DEFINE_VAR=x)", x) == marker);
  const uop *r5 = uop_range(ctx, C(8), 5, UOP_AXIS_LOOP);
  CHECK(try1("(RANGE=5)", r5) == marker);
  const uop *red = uop_new(ctx, UOP_REDUCE, IDX, &x, 1, uop_arg_int(UOP_ADD));
  CHECK(try1("(REDUCE=ADD x)", red) == marker && seen_x == x);
  CHECK(try1("(REDUCE=MUL x)", red) == NULL);
  /* #c:index */
  CHECK(try1("(ADD x #c:index)", ADD(x, C(3))) == marker && seen_c == C(3));
  CHECK(try1("(ADD x #c:int32)", ADD(x, C(3))) == NULL);
  /* head modifiers together */
  CHECK(try1("(ADD:index@y~ x 0)", ADD(C(0), x)) == marker && seen_y == ADD(C(0), x));
  /* all bindings tried: the function rejects the first permutation */
  CHECK(try1("_", x) == marker);
}

/* A function that accepts only when x is a DEFINE_VAR: with ADD~ (x, y) on ADD(const, var) the first binding has
 * x = const, the second x = var. */
static const uop *var_only(uop_rewrite_ctx *rc, const uop *node, const uop_bindings *b) {
  (void)rc;
  (void)node;
  calls++;
  const uop *x = uop_b(b, "x");
  return x->op == UOP_DEFINE_VAR ? x : NULL;
}

static const uop *const_marker(uop_rewrite_ctx *rc, const uop *node, const uop_bindings *b) {
  (void)rc;
  (void)node;
  (void)b;
  return marker;
}

static void test_bindings_and_order(void) {
  const uop *x = uop_var(ctx, "x", 0, 10, IDX);
  uop_rule r = {"(ADD~ x y)", var_only, NULL};
  uop_pm *pm;
  CHECK_OK(uop_pm_create(&r, 1, &pm));
  uop_rewrite_ctx rc = {ctx, NULL};
  calls = 0;
  CHECK(uop_pm_rewrite(pm, &rc, ADD(C(1), x)) == x);
  CHECK_EQ_INT(calls, 2);
  uop_pm_destroy(pm);
  /* first matching rule wins; concat keeps a's rules first */
  uop_rule ra = {"(ADD x y)", const_marker, "a"}, rb = {"(ADD x y)", var_only, "b"};
  uop_pm *pa, *pb, *pab, *pba;
  CHECK_OK(uop_pm_create(&ra, 1, &pa));
  CHECK_OK(uop_pm_create(&rb, 1, &pb));
  CHECK_OK(uop_pm_concat(pa, pb, &pab));
  CHECK_OK(uop_pm_concat(pb, pa, &pba));
  CHECK(uop_pm_rewrite(pab, &rc, ADD(x, C(1))) == marker);
  CHECK(uop_pm_rewrite(pba, &rc, ADD(x, C(1))) == x);
  CHECK(uop_pm_rewrite(pba, &rc, ADD(C(1), x)) == marker); /* b declines (x is a const), a matches */
  CHECK(uop_pm_rewrite(pba, &rc, MUL(C(1), x)) == NULL);
  uop_pm_destroy(pa);
  uop_pm_destroy(pb);
  uop_pm_destroy(pab);
  uop_pm_destroy(pba);
}

static void test_errors(void) {
  struct { const char *pat, *needle; } bad[] = {
      {"(ADD x", "missing ')'"},
      {"(ADDX x y)", "unknown op: ADDX"},
      {"(ADD:int33 x y)", "unknown dtype"},
      {"(ADD x y))", "trailing text"},
      {"(add x y)", "expected an op name"},
      {"(ADD ... x)", "'...' must be the last"},
      {"(ADD x ** y)", "'**' must be the only"},
      {"(ADD ** x y)", "'**' takes exactly one"},
      {"(ADD~ x ...)", "'~' cannot be combined"},
      {"(ADD@ x)", "capture name after '@'"},
      {"(ADD x $)", "unexpected character"},
      {"(ADD x 12a)", "bad integer"},
      {"(ADD x #)", "capture name after '#'"},
      {"", "unexpected end"},
      {"(ADD~ a b c d e)", "at most 4"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    uop_rule rules[2] = {{"(ADD x 0)", rec_fn, NULL}, {bad[i].pat, rec_fn, NULL}};
    uop_pm *pm = NULL;
    hcq_status st = uop_pm_create(rules, 2, &pm);
    CHECK(st && pm == NULL);
    if (!st) {
      fprintf(stderr, "pattern %s compiled\n", bad[i].pat);
      uop_pm_destroy(pm);
      continue;
    }
    const char *msg = hcq_status_message(st);
    CHECK(strstr(msg, "rule 1") != NULL);
    CHECK(strstr(msg, bad[i].needle) != NULL);
    CHECK(strstr(msg, "column") != NULL);
    if (!strstr(msg, bad[i].needle)) fprintf(stderr, "  got: %s\n", msg);
    hcq_status_free(st);
  }
  uop_pm *pm = NULL;
  CHECK_ERR(uop_pm_create(&(uop_rule){"(ADDX x y)", rec_fn, NULL}, 1, &pm), HCQ_CODE_PARSE, "column 2");
  CHECK_ERR(uop_pm_create(&(uop_rule){"(ADD x y)", NULL, NULL}, 1, &pm), HCQ_CODE_INVALID, "NULL function");
}

/* ---- toy rule set: x+0 -> x, x*1 -> x, constant folding of ADD and MUL on index */
static const uop *rw_x(uop_rewrite_ctx *rc, const uop *node, const uop_bindings *b) {
  (void)rc;
  (void)node;
  return uop_b(b, "x");
}
static const uop *fold_add(uop_rewrite_ctx *rc, const uop *node, const uop_bindings *b) {
  (void)node;
  return uop_index_const(rc->uctx, uop_b(b, "a")->arg.i + uop_b(b, "b")->arg.i);
}
static const uop *fold_mul(uop_rewrite_ctx *rc, const uop *node, const uop_bindings *b) {
  (void)node;
  return uop_index_const(rc->uctx, uop_b(b, "a")->arg.i * uop_b(b, "b")->arg.i);
}
/* (x + c1) + c2 -> x + (c1 + c2) */
static const uop *reassoc(uop_rewrite_ctx *rc, const uop *node, const uop_bindings *b) {
  (void)node;
  return uop_alu2(rc->uctx, UOP_ADD, uop_b(b, "x"),
                  uop_alu2(rc->uctx, UOP_ADD, uop_b(b, "c1"), uop_b(b, "c2")));
}

static const uop_rule toy[] = {
    {"(ADD~ x 0)", rw_x, "add0"},
    {"(MUL~ x 1)", rw_x, "mul1"},
    {"(ADD:index #a #b)", fold_add, "fold_add"},
    {"(MUL:index #a #b)", fold_mul, "fold_mul"},
    {"(ADD (ADD x #c1) #c2)", reassoc, "reassoc"},
};

static void test_rewrite(void) {
  uop_pm *pm;
  CHECK_OK(uop_pm_create(toy, sizeof toy / sizeof toy[0], &pm));
  const uop *x = uop_var(ctx, "x", 0, 10, IDX);
  /* ((x*1) + (2*3)) + (0 + -6) -> x */
  const uop *e = ADD(ADD(MUL(x, C(1)), MUL(C(2), C(3))), ADD(C(0), C(-6)));
  for (int mode = 0; mode < 2; mode++) {
    const uop *out = NULL;
    CHECK_OK(uop_graph_rewrite(ctx, e, pm, (uop_rewrite_mode)mode, NULL, &out));
    CHECK(out == x);
    /* ((x + 1) + 2) + 3 -> x + 6 */
    CHECK_OK(uop_graph_rewrite(ctx, ADD(ADD(ADD(x, C(1)), C(2)), C(3)), pm, (uop_rewrite_mode)mode, NULL, &out));
    CHECK(out == ADD(x, C(6)));
    /* already at a fixed point: same node */
    CHECK_OK(uop_graph_rewrite(ctx, ADD(x, C(6)), pm, (uop_rewrite_mode)mode, NULL, &out));
    CHECK(out == ADD(x, C(6)));
  }
  /* deep chain: ((((x+1)+1)+1)...) 100,000 deep -> x + 100000, through rewrite, toposort and sym_infer */
  const int depth = 100000;
  const uop *chain = x;
  for (int i = 0; i < depth; i++) chain = ADD(chain, C(1));
  CHECK_OK(uop_ctx_status(ctx));
  for (int mode = 0; mode < 2; mode++) {
    const uop *out = NULL;
    CHECK_OK(uop_graph_rewrite(ctx, chain, pm, (uop_rewrite_mode)mode, NULL, &out));
    CHECK(out == ADD(x, C(depth)));
  }
  const uop **nodes;
  size_t count;
  CHECK_OK(uop_toposort(ctx, chain, &nodes, &count));
  CHECK_EQ_INT(count, depth + 2); /* x, the const 1, and the ADDs */
  CHECK(nodes[count - 1] == chain);
  /* every source comes before its user (positions by node id) */
  size_t *pos = calloc(uop_ctx_node_count(ctx), sizeof *pos);
  for (size_t i = 0; i < count; i++) pos[nodes[i]->id] = i + 1;
  int ordered = 1;
  for (size_t i = 0; i < count; i++)
    for (uint32_t j = 0; j < nodes[i]->nsrc; j++)
      if (!pos[nodes[i]->src[j]->id] || pos[nodes[i]->src[j]->id] > i) ordered = 0;
  CHECK(ordered);
  free(pos);
  int64_t v = 0;
  uop_var_val vals[] = {{"x", 7}};
  CHECK_OK(uop_sym_infer(chain, vals, 1, &v));
  CHECK_EQ_INT(v, 7 + depth);
  CHECK_EQ_INT(uop_vmax(chain), 10 + depth);
  CHECK_EQ_INT(uop_vmin(chain), depth);
  /* a wide DAG with sharing: 2^k paths, linear work */
  const uop *d = x;
  for (int i = 0; i < 60; i++) d = ADD(MUL(d, C(1)), MUL(C(1), d));
  const uop *out = NULL;
  CHECK_OK(uop_graph_rewrite(ctx, d, pm, UOP_REWRITE_SOURCES_FIRST, NULL, &out));
  CHECK(out != NULL && out->op == UOP_ADD);
  uop_pm_destroy(pm);
}

/* ---- cycles and divergence */
static const uop *to_b(uop_rewrite_ctx *rc, const uop *node, const uop_bindings *b) {
  (void)node;
  (void)b;
  return uop_var(rc->uctx, "b", 0, 1, uop_dt(UOP_INDEX));
}
static const uop *to_a(uop_rewrite_ctx *rc, const uop *node, const uop_bindings *b) {
  (void)node;
  (void)b;
  return uop_var(rc->uctx, "a", 0, 1, uop_dt(UOP_INDEX));
}
static const uop *grow(uop_rewrite_ctx *rc, const uop *node, const uop_bindings *b) {
  (void)b;
  return uop_index_const(rc->uctx, node->arg.i + 1);
}
static const uop *wrap_cast(uop_rewrite_ctx *rc, const uop *node, const uop_bindings *b) {
  (void)b;
  return uop_alu2(rc->uctx, UOP_ADD, node, uop_index_const(rc->uctx, 0));
}

static void test_cycles(void) {
  uop_rule ab[] = {{"(DEFINE_VAR=a)", to_b, NULL}, {"(DEFINE_VAR=b)", to_a, NULL}};
  uop_pm *pm;
  CHECK_OK(uop_pm_create(ab, 2, &pm));
  const uop *a = uop_var(ctx, "a", 0, 1, IDX), *out = NULL;
  CHECK_ERR(uop_graph_rewrite(ctx, ADD(a, C(1)), pm, UOP_REWRITE_NODE_FIRST, NULL, &out), HCQ_CODE_INVALID, "cycle");
  CHECK(out == NULL);
  CHECK_ERR(uop_graph_rewrite(ctx, ADD(a, C(1)), pm, UOP_REWRITE_SOURCES_FIRST, NULL, &out), HCQ_CODE_INVALID, "cycle");
  uop_pm_destroy(pm);
  /* x -> x + 0 together with x + 0 -> x: a cycle through a node that contains the original */
  uop_rule wr[] = {{"(ADD~ x 0)", rw_x, NULL}, {"(DEFINE_VAR)", wrap_cast, NULL}};
  CHECK_OK(uop_pm_create(wr, 2, &pm));
  CHECK_ERR(uop_graph_rewrite(ctx, a, pm, UOP_REWRITE_NODE_FIRST, NULL, &out), HCQ_CODE_INVALID, "cycle");
  CHECK_ERR(uop_graph_rewrite(ctx, a, pm, UOP_REWRITE_SOURCES_FIRST, NULL, &out), HCQ_CODE_INVALID, "cycle");
  uop_pm_destroy(pm);
  /* divergence without a cycle: c -> c+1 forever hits a limit instead of hanging */
  uop_rule g[] = {{"(CONST:index)", grow, NULL}};
  CHECK_OK(uop_pm_create(g, 1, &pm));
  CHECK_ERR(uop_graph_rewrite(ctx, C(0), pm, UOP_REWRITE_NODE_FIRST, NULL, &out), HCQ_CODE_INVALID, "in a row");
  CHECK_ERR(uop_graph_rewrite(ctx, C(0), pm, UOP_REWRITE_SOURCES_FIRST, NULL, &out), HCQ_CODE_INVALID, "limit");
  uop_pm_destroy(pm);
}

/* ---- nodes of another context: refused with a status naming the node, never looked up by id */
static const uop *g_foreign;
static const uop *to_foreign(uop_rewrite_ctx *rc, const uop *node, const uop_bindings *b) {
  (void)rc;
  (void)node;
  (void)b;
  return g_foreign;
}
static int slot0(void) { return 0; }

static void test_foreign(void) {
  uop_ctx *other = NULL;
  CHECK_OK(uop_ctx_create(&other));
  if (!other) return;
  /* ids start at 0 in every context: y's id is one of ctx's too (the memo slot it would have hit) */
  const uop *y = uop_var(other, "y", 0, 10, IDX), *y1 = uop_alu2(other, UOP_ADD, y, uop_index_const(other, 1));
  const uop *x = uop_var(ctx, "x", 0, 10, IDX), *out = NULL;
  CHECK(y->id < uop_ctx_node_count(ctx));
  uop_pm *pm = NULL, *memo = NULL;
  CHECK_OK(uop_pm_create(toy, sizeof toy / sizeof toy[0], &pm));
  CHECK_OK(uop_pm_create(toy, sizeof toy / sizeof toy[0], &memo));
  uop_pm_set_memo(memo, slot0); /* sources-first: the by-id memo of the context */
  uop_pm *pms[2] = {pm, memo};
  for (int p = 0; p < 2; p++)
    for (int mode = 0; mode < 2; mode++) {
      uop_rewrite_mode m = (uop_rewrite_mode)mode;
      /* fill the memo with ctx's nodes first, so a wrong slot would hold an answer */
      CHECK_OK(uop_graph_rewrite(ctx, ADD(MUL(x, C(1)), C(0)), pms[p], m, NULL, &out));
      CHECK(out == x);
      CHECK_ERR(uop_graph_rewrite(ctx, y1, pms[p], m, NULL, &out), HCQ_CODE_INVALID, "ADD (node 2) is of another uop context");
      CHECK(out == NULL);
      /* a node of ctx with a source of the other */
      CHECK_ERR(uop_graph_rewrite(ctx, ADD(x, y), pms[p], m, NULL, &out), HCQ_CODE_INVALID,
                "DEFINE_VAR (node 0) is of another uop context");
      CHECK_ERR(uop_graph_rewrite(ctx, ADD(MUL(x, C(1)), y1), pms[p], m, NULL, &out), HCQ_CODE_INVALID,
                "of another uop context");
    }
  /* a rule whose result is of the other context */
  uop_rule r[] = {{"(DEFINE_VAR=x)", to_foreign, NULL}};
  uop_pm *fp = NULL;
  CHECK_OK(uop_pm_create(r, 1, &fp));
  g_foreign = y;
  for (int mode = 0; mode < 2; mode++)
    CHECK_ERR(uop_graph_rewrite(ctx, ADD(x, C(3)), fp, (uop_rewrite_mode)mode, NULL, &out), HCQ_CODE_INVALID,
              "DEFINE_VAR (node 0) is of another uop context");
  uop_pm_set_memo(fp, slot0);
  CHECK_ERR(uop_graph_rewrite(ctx, ADD(x, C(3)), fp, UOP_REWRITE_SOURCES_FIRST, NULL, &out), HCQ_CODE_INVALID,
            "of another uop context");
  /* substitute: the root, a map entry, a source */
  const uop *from[1] = {x}, *to[1] = {C(2)}, *ffrom[1] = {y}, *fto[1] = {y};
  CHECK_ERR(uop_substitute(ctx, y1, from, to, 1, &out), HCQ_CODE_INVALID, "root is not of this context");
  CHECK_ERR(uop_substitute(ctx, ADD(x, C(1)), ffrom, to, 1, &out), HCQ_CODE_INVALID, "not of this context");
  CHECK_ERR(uop_substitute(ctx, ADD(x, C(1)), from, fto, 1, &out), HCQ_CODE_INVALID, "not of this context");
  CHECK_ERR(uop_substitute(ctx, MUL(ADD(x, y), C(2)), from, to, 1, &out), HCQ_CODE_INVALID, "source from another");
  /* the context still works */
  CHECK_OK(uop_graph_rewrite(ctx, ADD(MUL(x, C(1)), C(0)), memo, UOP_REWRITE_SOURCES_FIRST, NULL, &out));
  CHECK(out == x);
  uop_pm_destroy(fp);
  uop_pm_destroy(memo);
  uop_pm_destroy(pm);
  uop_ctx_destroy(other);
}

static void test_substitute(void) {
  const uop *x = uop_var(ctx, "x", 0, 10, IDX), *y = uop_var(ctx, "y", 0, 10, IDX);
  const uop *e = MUL(ADD(x, C(1)), x), *out = NULL;
  const uop *from[1] = {x}, *to[1] = {y};
  CHECK_OK(uop_substitute(ctx, e, from, to, 1, &out));
  CHECK(out == MUL(ADD(y, C(1)), y));
  const uop *to2[1] = {ADD(x, C(1))}; /* x -> x+1 is one-shot */
  CHECK_OK(uop_substitute(ctx, e, from, to2, 1, &out));
  CHECK(out == MUL(ADD(ADD(x, C(1)), C(1)), ADD(x, C(1))));
  const uop *from3[1] = {ADD(x, C(1))}, *to3[1] = {C(5)};
  CHECK_OK(uop_substitute(ctx, e, from3, to3, 1, &out));
  CHECK(out == MUL(C(5), x));
  CHECK_OK(uop_substitute(ctx, e, from3, to3, 0, &out));
  CHECK(out == e);
}

int main(void) {
  CHECK_OK(uop_ctx_create(&ctx));
  IDX = uop_dt(UOP_INDEX);
  test_features();
  test_bindings_and_order();
  test_errors();
  test_rewrite();
  test_cycles();
  test_substitute();
  test_foreign();
  uop_ctx_destroy(ctx);
  return testing_summary("match_test");
}
