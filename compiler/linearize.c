/* Direct linearizer (reference compiler.md 3, steps 19-22, the [rec] form).
 *
 * 1. Context: every node's context is the union of its sources' child contexts. A RANGE adds itself to its
 *    consumers' context; a STORE removes the ranges it lists (a store closes its loops).
 * 2. Scope: a node is placed in the loop nest of its context, extended by the outer loops of its users that nest
 *    outside its innermost range (so a load that depends only on an inner range is still emitted inside the outer
 *    loop its users live in). Loops nest in range-id order (reduce ranges, ids >= 1000, are innermost).
 * 3. Emission: per scope, its direct nodes and its child loops (each a unit, opened by its RANGE and closed by an
 *    ENDRANGE) are ordered topologically, ties by first appearance in the DAG's toposort. Definitions come first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc_internal.h"
#include "uop/uop_internal.h"

typedef struct rset {
  uint32_t n;
  const uop **r; /* sorted by range_cmp */
} rset;

typedef struct lin {
  uop_ctx *ctx;
  const uop **nodes;
  size_t count;
  uop_ptrmap pos; /* node -> toposort index */
  rset *ctxs;     /* context per node */
  rset *effs;     /* emission scope per node */
  rset *pend;     /* union of the users' scopes per node */
  const uop **out;
  size_t nout, capout;
  hcq_status st;
} lin;

static int range_cmp(const uop *a, const uop *b) {
  if (a->arg.i != b->arg.i) return a->arg.i < b->arg.i ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

static bool rset_has(const rset *s, const uop *r) {
  for (uint32_t i = 0; i < s->n; i++)
    if (s->r[i] == r) return true;
  return false;
}

/* Insert r keeping the order; false on out-of-memory. */
static bool rset_add(rset *s, const uop *r) {
  if (rset_has(s, r)) return true;
  const uop **nr = realloc(s->r, (s->n + 1) * sizeof *nr);
  if (!nr) return false;
  s->r = nr;
  uint32_t i = s->n;
  while (i > 0 && range_cmp(s->r[i - 1], r) > 0) {
    s->r[i] = s->r[i - 1];
    i--;
  }
  s->r[i] = r;
  s->n++;
  return true;
}

static bool is_top(const uop *n) {
  return n->op == UOP_DEFINE_GLOBAL || n->op == UOP_DEFINE_VAR || n->op == UOP_DEFINE_REG ||
         n->op == UOP_SPECIAL || n->op == UOP_CONST || n->op == UOP_VCONST;
}
/* Nodes that take part in ordering but are not statements. */
static bool is_silent(const uop *n) { return is_top(n) || n->op == UOP_NOOP || n->op == UOP_SINK; }

static size_t pos_of(lin *l, const uop *n) { return (size_t)*uop_ptrmap_find(&l->pos, n); }

static bool push(lin *l, const uop *n) {
  if (l->nout == l->capout) {
    size_t nc = l->capout ? l->capout * 2 : 64;
    const uop **no = realloc(l->out, nc * sizeof *no);
    if (!no) return false;
    l->out = no;
    l->capout = nc;
  }
  l->out[l->nout++] = n;
  return true;
}

/* Emit the nodes in list[0..n) (toposort order) whose scope has `depth` ranges, all under the same prefix. */
static void emit_scope(lin *l, uint32_t depth, const size_t *list, size_t n) {
  if (l->st || !n) return;
  /* Units: a direct node, or a child loop (all nodes whose scope continues with the same range). */
  size_t *unit_of = malloc(n * sizeof *unit_of);         /* list index -> unit */
  const uop **unit_range = malloc(n * sizeof *unit_range); /* NULL for a direct node */
  size_t *unit_first = malloc(n * sizeof *unit_first);   /* first list index of the unit */
  size_t nunits = 0;
  uop_ptrmap where = {0}; /* node -> list index + 1 */
  uop_ptrmap unit_by_range = {0};
  uop_ptrmap edges = {0}; /* key from*nunits+to+1 */
  size_t *indeg = NULL, *members = NULL;
  bool *done = NULL;
  if (!unit_of || !unit_range || !unit_first) goto oom;
  for (size_t i = 0; i < n; i++) {
    const uop *u = l->nodes[list[i]];
    if (!uop_ptrmap_put(&where, u, i + 1)) goto oom;
    const rset *e = &l->effs[list[i]];
    if (e->n == depth) {
      unit_range[nunits] = NULL;
      unit_first[nunits] = i;
      unit_of[i] = nunits++;
      continue;
    }
    const uop *r = e->r[depth];
    uintptr_t *m = uop_ptrmap_find(&unit_by_range, r);
    if (m) {
      unit_of[i] = *m;
    } else {
      if (!uop_ptrmap_put(&unit_by_range, r, nunits)) goto oom;
      unit_range[nunits] = r;
      unit_first[nunits] = i;
      unit_of[i] = nunits++;
    }
  }
  /* Dependencies between units: distinct (from, to) unit pairs from the nodes' sources and the loops' RANGE ends. */
  indeg = calloc(nunits, sizeof *indeg);
  done = calloc(nunits, sizeof *done);
  members = malloc(n * sizeof *members);
  if (!indeg || !done || !members) goto oom;
  for (size_t i = 0; i < n + nunits; i++) {
    const uop *u = i < n ? l->nodes[list[i]] : unit_range[i - n];
    if (!u) continue;
    size_t to = i < n ? unit_of[i] : i - n;
    for (uint32_t s = 0; s < u->nsrc; s++) {
      uintptr_t *w = uop_ptrmap_find(&where, u->src[s]);
      if (!w || unit_of[*w - 1] == to) continue;
      size_t from = unit_of[*w - 1];
      const void *key = (const void *)(uintptr_t)(from * nunits + to + 1);
      if (uop_ptrmap_find(&edges, key)) continue;
      if (!uop_ptrmap_put(&edges, key, 1)) goto oom;
      indeg[to]++;
    }
  }
  for (size_t emitted = 0; emitted < nunits; emitted++) {
    size_t pick = SIZE_MAX;
    for (size_t uidx = 0; uidx < nunits; uidx++)
      if (!done[uidx] && indeg[uidx] == 0 && (pick == SIZE_MAX || unit_first[uidx] < unit_first[pick])) pick = uidx;
    if (pick == SIZE_MAX) {
      l->st = hcq_status_make(HCQ_CODE_INTERNAL, "linearize: cyclic dependency between loop scopes");
      goto done;
    }
    for (size_t to = 0; to < nunits; to++)
      if (uop_ptrmap_find(&edges, (const void *)(uintptr_t)(pick * nunits + to + 1))) indeg[to]--;
    done[pick] = true;
    if (!unit_range[pick]) {
      if (!push(l, l->nodes[list[unit_first[pick]]])) goto oom;
      continue;
    }
    size_t nm = 0;
    for (size_t i = unit_first[pick]; i < n; i++)
      if (unit_of[i] == pick) members[nm++] = list[i];
    const uop *r = unit_range[pick];
    if (!push(l, r)) goto oom;
    size_t *sub = malloc(nm * sizeof *sub);
    if (!sub) goto oom;
    memcpy(sub, members, nm * sizeof *sub);
    emit_scope(l, depth + 1, sub, nm);
    free(sub);
    if (l->st) goto done;
    const uop *end = uop_new(l->ctx, UOP_ENDRANGE, uop_dt(UOP_VOID), &r, 1, uop_arg_none());
    if (!end || !push(l, end)) goto oom;
  }
  goto done;
oom:
  if (!l->st) l->st = hcq_status_make(HCQ_CODE_NOMEM, "linearize: out of memory");
done:
  free(unit_of);
  free(unit_range);
  free(unit_first);
  free(indeg);
  free(done);
  free(members);
  uop_ptrmap_free(&where);
  uop_ptrmap_free(&unit_by_range);
  uop_ptrmap_free(&edges);
}

static int top_rank(const uop *n) {
  switch (n->op) {
    case UOP_DEFINE_GLOBAL: return 0;
    case UOP_DEFINE_VAR: return 1;
    case UOP_SPECIAL: return 2;
    default: return 3;
  }
}
static int top_cmp(const void *pa, const void *pb) {
  const uop *a = *(const uop *const *)pa, *b = *(const uop *const *)pb;
  int ra = top_rank(a), rb = top_rank(b);
  if (ra != rb) return ra - rb;
  if (a->op == UOP_DEFINE_VAR) return strcmp(a->arg.str, b->arg.str);
  if (a->op == UOP_SPECIAL) return strcmp(a->arg.str, b->arg.str);
  if (a->arg.i != b->arg.i) return a->arg.i < b->arg.i ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

hcq_status cc_linearize(uop_ctx *ctx, const uop *sink, const uop ***out_list, size_t *out_count) {
  *out_list = NULL;
  *out_count = 0;
  lin l = {.ctx = ctx};
  HCQ_TRY(uop_toposort(ctx, sink, &l.nodes, &l.count));
  l.ctxs = calloc(l.count, sizeof *l.ctxs);
  l.effs = calloc(l.count, sizeof *l.effs);
  l.pend = calloc(l.count, sizeof *l.pend);
  size_t *list = malloc(l.count * sizeof *list);
  const uop **tops = malloc(l.count * sizeof *tops);
  size_t nlist = 0, ntops = 0;
  if (!l.ctxs || !l.effs || !l.pend || !list || !tops) goto oom;
  for (size_t k = 0; k < l.count; k++)
    if (!uop_ptrmap_put(&l.pos, l.nodes[k], k)) goto oom;
  /* 1. contexts */
  for (size_t k = 0; k < l.count; k++) {
    const uop *n = l.nodes[k];
    if (n->op == UOP_SPECIAL) continue;
    for (uint32_t s = 0; s < n->nsrc; s++) {
      const uop *src = n->src[s];
      size_t sp = pos_of(&l, src);
      const rset *sc = &l.ctxs[sp];
      for (uint32_t i = 0; i < sc->n; i++) {
        if (src->op == UOP_STORE) {
          bool closed = false;
          for (uint32_t j = 2; j < src->nsrc; j++) closed |= src->src[j] == sc->r[i];
          if (closed) continue;
        }
        if (!rset_add(&l.ctxs[k], sc->r[i])) goto oom;
      }
      if (src->op == UOP_RANGE && !rset_add(&l.ctxs[k], src)) goto oom;
    }
  }
  /* 2. scopes, users before sources: pend[k] collects the scopes of node k's users. */
  for (size_t k = l.count; k-- > 0;) {
    const uop *n = l.nodes[k];
    rset *e = &l.effs[k];
    const rset *c = &l.ctxs[k];
    for (uint32_t i = 0; i < c->n; i++)
      if (!rset_add(e, c->r[i])) goto oom;
    if (c->n && !is_silent(n) && n->op != UOP_RANGE) {
      const uop *inner = c->r[c->n - 1];
      for (uint32_t i = 0; i < l.pend[k].n; i++)
        if (range_cmp(l.pend[k].r[i], inner) < 0 && !rset_add(e, l.pend[k].r[i])) goto oom;
    }
    for (uint32_t s = 0; s < n->nsrc; s++) {
      rset *p = &l.pend[pos_of(&l, n->src[s])];
      for (uint32_t i = 0; i < e->n; i++)
        if (!rset_add(p, e->r[i])) goto oom;
    }
  }
  /* 3. emission */
  for (size_t k = 0; k < l.count; k++) {
    const uop *n = l.nodes[k];
    if (n->op == UOP_DEFINE_GLOBAL || n->op == UOP_DEFINE_VAR || n->op == UOP_DEFINE_REG || n->op == UOP_SPECIAL)
      tops[ntops++] = n;
    else if (!is_silent(n) && n->op != UOP_RANGE)
      list[nlist++] = k;
  }
  qsort(tops, ntops, sizeof *tops, top_cmp);
  for (size_t i = 0; i < ntops; i++)
    if (!push(&l, tops[i])) goto oom;
  emit_scope(&l, 0, list, nlist);
  if (l.st) goto fail;
  /* 4. check: every value is used inside the scope it was defined in (STOREs are ordering-only sources). */
  for (size_t k = 0; k < l.count && !l.st; k++) {
    const uop *n = l.nodes[k];
    if (is_silent(n) || n->op == UOP_RANGE) continue;
    for (uint32_t s = 0; s < n->nsrc; s++) {
      const uop *src = n->src[s];
      if (is_silent(src) || src->op == UOP_RANGE || src->op == UOP_STORE) continue;
      const rset *se = &l.effs[pos_of(&l, src)], *ne = &l.effs[k];
      bool prefix = se->n <= ne->n;
      for (uint32_t i = 0; i < se->n && prefix; i++) prefix = se->r[i] == ne->r[i];
      if (!prefix) {
        l.st = hcq_status_make(HCQ_CODE_UNSUPPORTED,
                               "linearize: a %s computed in one loop nest is used by a %s outside it",
                               uop_op_name((uop_op)src->op), uop_op_name((uop_op)n->op));
        break;
      }
    }
  }
  if (l.st) goto fail;
  {
    const uop **arr = uop_ctx_alloc(ctx, (l.nout + 1) * sizeof *arr);
    if (!arr) goto oom;
    memcpy(arr, l.out, l.nout * sizeof *arr);
    *out_list = arr;
    *out_count = l.nout;
  }
  goto cleanup;
oom:
  l.st = hcq_status_make(HCQ_CODE_NOMEM, "linearize: out of memory");
fail:
cleanup:
  if (l.ctxs)
    for (size_t k = 0; k < l.count; k++) free(l.ctxs[k].r);
  if (l.effs)
    for (size_t k = 0; k < l.count; k++) free(l.effs[k].r);
  if (l.pend)
    for (size_t k = 0; k < l.count; k++) free(l.pend[k].r);
  free(l.ctxs);
  free(l.effs);
  free(l.pend);
  free(list);
  free(tops);
  free(l.out);
  uop_ptrmap_free(&l.pos);
  return l.st;
}

hcq_status cc_linear_listing(const uop *const *list, size_t count, char **out_text) {
  *out_text = NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return hcq_status_make(HCQ_CODE_NOMEM, "listing: open_memstream failed");
  uop_ptrmap num = {0};
  int depth = 0;
  hcq_status st = HCQ_OK;
  for (size_t k = 0; k < count; k++) {
    const uop *n = list[k];
    if (!uop_ptrmap_put(&num, n, k)) {
      st = hcq_status_make(HCQ_CODE_NOMEM, "listing: out of memory");
      break;
    }
    if (n->op == UOP_ENDRANGE) depth--;
    fprintf(f, "%4zu %*s%s %s%s", k, depth * 2, "", uop_op_name((uop_op)n->op),
            uop_dt_name(uop_dt_scalar_of(n->dtype)), uop_dt_is_ptr(n->dtype) ? "*" : "");
    if (n->arg.kind == UOP_ARG_STR || n->arg.kind == UOP_ARG_VAR) fprintf(f, " %s", n->arg.str);
    else if (n->arg.kind == UOP_ARG_INT) fprintf(f, " %lld", (long long)n->arg.i);
    else if (n->arg.kind == UOP_ARG_RANGE) fprintf(f, " r%lld", (long long)n->arg.i);
    for (uint32_t s = 0; s < n->nsrc; s++) {
      const uop *src = n->src[s];
      uintptr_t *m = uop_ptrmap_find(&num, src);
      int64_t v;
      if (m) fprintf(f, " %%%zu", (size_t)*m);
      else if (uop_const_value(src, &v)) fprintf(f, " %lld", (long long)v);
      else if (src->op == UOP_CONST) fprintf(f, " %g", src->arg.f);
      else fprintf(f, " <%s>", uop_op_name((uop_op)src->op));
    }
    fputc('\n', f);
    if (n->op == UOP_RANGE) depth++;
  }
  fclose(f);
  uop_ptrmap_free(&num);
  if (st) {
    free(buf);
    return st;
  }
  *out_text = buf;
  return HCQ_OK;
}
