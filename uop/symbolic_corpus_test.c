/* Corpus test: uop/testdata/symbolic_corpus.txt holds `INPUT<TAB>EXPECTED` lines (s-expressions; `;` comments,
 * `;; family` headers). For each case: parse both, simplify the input, and require pointer equality with the parsed
 * expected form. Independently, the input and the expected form are evaluated with uop_sym_infer on a grid of
 * variable assignments (every value for small ranges), so a wrong expectation cannot slip in.
 * Then uop/testdata/symbolic_reference.txt (the reference's own simplifier tests with its results): our result must
 * equal the input everywhere and be no bigger (in nodes) than the reference's; the count of bigger ones may only
 * go down (REF_BIGGER_MAX). */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "uop/symbolic.h"
#include "uop/text.h"

#define CORPUS "uop/testdata/symbolic_corpus.txt"
#define REFERENCE "uop/testdata/symbolic_reference.txt"
#define REF_BIGGER_MAX 0 /* ratchet: cases where our result is bigger than the reference's */
#define MAXV 8

typedef struct cvar {
  const char *name;
  int64_t pts[24];
  int npts;
  const uop *end; /* a range's end (its values are 0..end-1 at each point), else NULL */
} cvar;

static void add_vars(uop_ctx *ctx, const uop *root, cvar *vs, int *nv) {
  const uop **nodes;
  size_t n;
  hcq_status st = uop_toposort(ctx, root, &nodes, &n);
  if (st) {
    hcq_status_free(st);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    const uop *u = nodes[i];
    const char *name;
    int64_t lo, hi;
    char buf[32];
    if (u->op == UOP_DEFINE_VAR) {
      name = u->arg.str;
      lo = u->arg.i;
      hi = u->arg.i2;
    } else if (u->op == UOP_RANGE || u->op == UOP_SPECIAL) {
      if (u->op == UOP_RANGE) snprintf(buf, sizeof buf, "ridx%lld", (long long)u->arg.i);
      name = u->op == UOP_RANGE ? uop_intern_str(ctx, buf, strlen(buf)) : u->arg.str;
      lo = uop_vmin(u);
      hi = uop_vmax(u);
    } else {
      continue;
    }
    bool seen = false;
    for (int j = 0; j < *nv; j++) seen |= !strcmp(vs[j].name, name);
    if (seen || *nv == MAXV) continue;
    cvar *v = &vs[(*nv)++];
    v->name = name;
    v->npts = 0;
    v->end = u->op == UOP_RANGE && u->nsrc > 0 ? u->src[0] : NULL;
    if (hi - lo < 24) {
      for (int64_t x = lo; x <= hi; x++) v->pts[v->npts++] = x;
    } else { /* ends, a spread, and points around 0 */
      for (int k = 0; k < 16; k++) v->pts[v->npts++] = lo + (int64_t)((double)(hi - lo) * k / 15.0);
      for (int64_t x = -3; x <= 3; x++)
        if (x > lo && x < hi) v->pts[v->npts++] = x;
    }
  }
}

/* 0 = equal everywhere, otherwise prints the first difference. */
static int equivalent(uop_ctx *ctx, const uop *a, const uop *b, int line) {
  cvar vs[MAXV];
  int nv = 0;
  add_vars(ctx, a, vs, &nv);
  add_vars(ctx, b, vs, &nv);
  uop_var_val vals[MAXV];
  int idx[MAXV] = {0};
  long budget = 400000;
  for (;;) {
    for (int i = 0; i < nv; i++) vals[i] = (uop_var_val){vs[i].name, vs[i].pts[idx[i]]};
    int64_t va, vb;
    bool outside = false; /* a range beyond its (symbolic) end at this point */
    for (int i = 0; i < nv && !outside; i++) {
      int64_t e;
      hcq_status se = vs[i].end ? uop_sym_infer(vs[i].end, vals, nv, &e) : HCQ_OK;
      outside = vs[i].end && (se || vals[i].value >= e);
      hcq_status_free(se);
    }
    hcq_status sa = outside ? hcq_status_make(HCQ_CODE_INVALID, "outside") : uop_sym_infer(a, vals, nv, &va);
    if (!sa) {
      hcq_status sb = uop_sym_infer(b, vals, nv, &vb);
      if (sb || va != vb) {
        fprintf(stderr, "line %d: input and expected differ (%lld vs %lld%s%s) at", line, (long long)va,
                (long long)vb, sb ? ": " : "", sb ? hcq_status_message(sb) : "");
        for (int i = 0; i < nv; i++) fprintf(stderr, " %s=%lld", vals[i].name, (long long)vals[i].value);
        fprintf(stderr, "\n");
        hcq_status_free(sb);
        return 1;
      }
    }
    hcq_status_free(sa);
    if (--budget == 0) return 0;
    int i = 0;
    for (; i < nv; i++) {
      if (++idx[i] < vs[i].npts) break;
      idx[i] = 0;
    }
    if (i == nv) return 0;
  }
}

static void show(const char *what, const uop *n) {
  char *s = NULL;
  hcq_status st = uop_print(n, &s);
  fprintf(stderr, "  %s: %s\n", what, st ? hcq_status_message(st) : s);
  hcq_status_free(st);
  free(s);
}

static size_t node_count(uop_ctx *ctx, const uop *root) {
  const uop **nodes;
  size_t n = 0;
  hcq_status st = uop_toposort(ctx, root, &nodes, &n);
  hcq_status_free(st);
  return n;
}

/* One `INPUT<TAB>EXPECTED` line: parse both, simplify the input. 0 = parsed, -1 = comment/blank, 1 = error. */
static int read_case(uop_ctx *ctx, char *line, int lineno, const uop **in, const uop **want) {
  char *p = line;
  while (*p == ' ') p++;
  if (*p == ';' || *p == '\n' || *p == 0) return -1;
  char *tab = strchr(p, '\t');
  if (!tab) {
    fprintf(stderr, "line %d: no TAB between input and expected\n", lineno);
    return 1;
  }
  hcq_status st = uop_parse_at(ctx, p, (size_t)(tab - p), lineno, in);
  if (!st) st = uop_parse_at(ctx, tab + 1, strlen(tab + 1), lineno, want);
  if (st) {
    fprintf(stderr, "line %d: %s\n", lineno, hcq_status_message(st));
    hcq_status_free(st);
    return 1;
  }
  return 0;
}

/* Our own corpus: the simplified form must be the expected node itself. */
static void run_corpus(uop_ctx *ctx, FILE *f) {
  char line[4096];
  int lineno = 0, cases = 0, families = 0, passed = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    if (!strncmp(line, ";;", 2)) families++;
    const uop *in, *want, *got = NULL;
    int r = read_case(ctx, line, lineno, &in, &want);
    if (r < 0) continue;
    cases++;
    CHECK(r == 0);
    if (r) continue;
    CHECK_OK(uop_simplify(ctx, in, &got));
    int bad = equivalent(ctx, in, want, lineno);
    CHECK(bad == 0);
    if (got != want) {
      fprintf(stderr, "line %d: simplified form differs from the expected one\n", lineno);
      show("input   ", in);
      show("expected", want);
      if (got) show("got     ", got);
      CHECK(false);
    } else if (!bad) {
      passed++;
    }
  }
  printf("symbolic_corpus: %d of %d cases passed, %d families\n", passed, cases, families);
  CHECK(cases >= 150);
}

/* The reference's tests: our result must equal the input everywhere and have no more nodes than the reference's
 * result. HCQ_SYM_SHOW=1 prints every case where ours is bigger. */
static void run_reference(uop_ctx *ctx, FILE *f) {
  char line[4096];
  int lineno = 0, cases = 0, bigger = 0, smaller = 0, unsound = 0;
  const char *env = getenv("HCQ_SYM_SHOW");
  bool verbose = env && *env == '1';
  while (fgets(line, sizeof line, f)) {
    lineno++;
    const uop *in, *ref, *got = NULL;
    int r = read_case(ctx, line, lineno, &in, &ref);
    if (r < 0) continue;
    cases++;
    CHECK(r == 0);
    if (r) continue;
    CHECK_OK(uop_simplify(ctx, in, &got));
    if (!got) continue;
    CHECK(equivalent(ctx, in, got, lineno) == 0);
    if (equivalent(ctx, in, ref, lineno)) { /* the reference folded under floor semantics: nothing to compare */
      unsound++;
      continue;
    }
    size_t ng = node_count(ctx, got), nr = node_count(ctx, ref);
    smaller += ng < nr;
    if (ng > nr) {
      bigger++;
      if (verbose) {
        fprintf(stderr, "reference line %d: %zu nodes, the reference has %zu\n", lineno, ng, nr);
        show("input    ", in);
        show("reference", ref);
        show("got      ", got);
      }
    }
  }
  printf("symbolic_reference: %d cases, %d bigger than the reference's result, %d smaller, %d where the reference's "
         "result differs from its input (printed above)\n", cases, bigger, smaller, unsound);
  CHECK(cases >= 200);
  CHECK(bigger <= REF_BIGGER_MAX);
}

int main(void) {
  uop_ctx *ctx;
  CHECK_OK(uop_ctx_create(&ctx));
  const char *paths[] = {CORPUS, REFERENCE};
  for (int i = 0; i < 2; i++) {
    FILE *f = fopen(paths[i], "r");
    if (!f) {
      fprintf(stderr, "cannot open %s (run from the repository root)\n", paths[i]);
      CHECK(false);
      continue;
    }
    if (i == 0) run_corpus(ctx, f);
    else run_reference(ctx, f);
    fclose(f);
  }
  uop_ctx_destroy(ctx);
  return testing_summary("symbolic_corpus_test");
}
