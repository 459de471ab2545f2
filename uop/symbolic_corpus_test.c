/* Corpus test: uop/testdata/symbolic_corpus.txt holds `INPUT<TAB>EXPECTED` lines (s-expressions; `;` comments,
 * `;; family` headers). For each case: parse both, simplify the input, and require pointer equality with the parsed
 * expected form. Independently, the input and the expected form are evaluated with uop_sym_infer on a grid of
 * variable assignments (every value for small ranges), so a wrong expectation cannot slip in. */
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "uop/symbolic.h"
#include "uop/text.h"

#define CORPUS "uop/testdata/symbolic_corpus.txt"
#define MAXV 8

typedef struct cvar {
  const char *name;
  int64_t pts[24];
  int npts;
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
    hcq_status sa = uop_sym_infer(a, vals, nv, &va);
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

int main(void) {
  FILE *f = fopen(CORPUS, "r");
  if (!f) {
    fprintf(stderr, "cannot open %s (run from the repository root)\n", CORPUS);
    return 1;
  }
  uop_ctx *ctx;
  CHECK_OK(uop_ctx_create(&ctx));
  char line[4096];
  int lineno = 0, cases = 0, families = 0, passed = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    if (!strncmp(line, ";;", 2)) families++;
    char *p = line;
    while (*p == ' ') p++;
    if (*p == ';' || *p == '\n' || *p == 0) continue;
    char *tab = strchr(p, '\t');
    if (!tab) {
      fprintf(stderr, "line %d: no TAB between input and expected\n", lineno);
      CHECK(false);
      continue;
    }
    cases++;
    const uop *in, *want, *got = NULL;
    hcq_status st = uop_parse_at(ctx, p, (size_t)(tab - p), lineno, &in);
    if (!st) st = uop_parse_at(ctx, tab + 1, strlen(tab + 1), lineno, &want);
    if (st) {
      fprintf(stderr, "line %d: %s\n", lineno, hcq_status_message(st));
      hcq_status_free(st);
      CHECK(false);
      continue;
    }
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
  fclose(f);
  uop_ctx_destroy(ctx);
  printf("symbolic_corpus: %d of %d cases passed, %d families\n", passed, cases, families);
  CHECK(cases >= 150);
  return testing_summary("symbolic_corpus_test");
}
