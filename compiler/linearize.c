/* Direct linearizer (the semantics of the reference's tinygrad/codegen/late/linearize.py, without its blocks).
 *
 * 1. Context: every node's context is the union of its sources' child contexts. A RANGE adds itself to its
 *    consumers' context; a STORE removes the ranges it lists (a store closes its loops).
 * 2. Scope: a node is placed in the loop nest of its context, extended by the outer loops of its users that nest
 *    outside its innermost range (so a load that depends only on an inner range is still emitted inside the outer
 *    loop its users live in). A value whose users sit in different loop nests (two stores sharing a range, one of
 *    them also inside another loop) gets one instance per nest: the same node emitted once in each (STOREs and
 *    other void nodes are never copied). Range ids are names, not an order: loops nest in an order derived from the graph
 *    (a range used by another range's END is outside it; the ranges live at a node that reads a STORE are outside
 *    the ranges that STORE closes, e.g. the loops around a reduce's accumulator), ties by id.
 * 3. Emission: per scope, its direct nodes and its child loops (each a unit, opened by its RANGE and closed by an
 *    ENDRANGE) are ordered topologically, ties by first appearance in the DAG's toposort. Definitions come first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc_internal.h"
#include "base/ptrmap.h"

/* Range sets are bitsets of W words over the kernel's ranges numbered in nesting order (range_cmp), so a set
 * read in bit order is its loop nest from the outside in. */
typedef struct lin {
  uop_ctx *ctx;
  const uop **nodes;
  size_t count;
  uint32_t *pos;       /* node id -> toposort index (set for the graph's nodes only) */
  uint32_t *rank;      /* toposort index -> bit of a RANGE */
  const uop **ranges;  /* bit -> RANGE */
  size_t nranges, W;   /* words per set */
  uint64_t *ctxs;      /* context per node (W words each) */
  /* instances: a node emitted in one loop nest; numbered by node, each node's ones contiguous from ifirst[node] */
  size_t ninst, capinst;
  uint32_t *inode;     /* instance -> toposort index */
  uint64_t *effs;      /* emission scope per instance (W words each) */
  size_t *isrc;        /* instance -> offset in srcinst of its sources' instances */
  uint32_t *srcinst;   /* the instance each source slot reads */
  size_t nsrcinst, capsrcinst;
  uint32_t *ifirst, *icount; /* per toposort index */
  size_t *rqhead, *rqnext, *rqinst, *rqslot; /* requests: instance rqinst's source slot rqslot wants node k */
  size_t nrq, caprq;
  /* per instance, for the scope being split (valid where stamp == that scope's number): */
  uint32_t *stamp, *slot;   /* member of the scope, at list index slot */
  uint32_t *rstamp, *runit; /* a RANGE opening child unit runit */
  uint32_t nscopes;
  const uop **out;
  size_t nout, capout;
  hcq_status st;
} lin;

static int range_cmp(const uop *a, const uop *b) {
  bool oa = a->arg.i2 == UOP_AXIS_OUTER, ob = b->arg.i2 == UOP_AXIS_OUTER; /* OUTER loops nest outside the rest */
  if (oa != ob) return oa ? -1 : 1;
  if (a->arg.i != b->arg.i) return a->arg.i < b->arg.i ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}
static int range_qcmp(const void *a, const void *b) { return range_cmp(*(const uop *const *)a, *(const uop *const *)b); }

static void bit_set(uint64_t *s, size_t b) { s[b / 64] |= (uint64_t)1 << (b % 64); }
/* Lowest set bit >= from, or SIZE_MAX. */
static size_t bit_next(const uint64_t *s, size_t W, size_t from) {
  for (size_t w = from / 64; w < W; w++) {
    uint64_t x = s[w];
    if (w == from / 64) x &= ~(uint64_t)0 << (from % 64);
    if (x) return w * 64 + (size_t)__builtin_ctzll(x);
  }
  return SIZE_MAX;
}
/* Highest set bit, or SIZE_MAX when empty. */
static size_t bit_last(const uint64_t *s, size_t W) {
  for (size_t w = W; w-- > 0;)
    if (s[w]) return w * 64 + 63 - (size_t)__builtin_clzll(s[w]);
  return SIZE_MAX;
}

static bool is_top(const uop *n) {
  return n->op == UOP_DEFINE_GLOBAL || n->op == UOP_DEFINE_VAR || n->op == UOP_DEFINE_REG ||
         n->op == UOP_SPECIAL || n->op == UOP_CONST || n->op == UOP_VCONST;
}
/* Nodes that take part in ordering but are not statements. */
static bool is_silent(const uop *n) { return is_top(n) || n->op == UOP_NOOP || n->op == UOP_SINK; }

static size_t pos_of(const lin *l, const uop *n) { return l->pos[n->id]; }

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

/* Min-heap of unit numbers: units are numbered in order of first appearance, so the smallest ready number is the
 * ready unit that appears first in the DAG's toposort. */
static void heap_push(size_t *h, size_t *n, size_t v) {
  size_t i = (*n)++;
  while (i > 0 && h[(i - 1) / 2] > v) {
    h[i] = h[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h[i] = v;
}
static size_t heap_pop(size_t *h, size_t *n) {
  size_t top = h[0], v = h[--*n], i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= *n) break;
    if (c + 1 < *n && h[c + 1] < h[c]) c++;
    if (h[c] >= v) break;
    h[i] = h[c];
    i = c;
  }
  if (*n) h[i] = v;
  return top;
}

/* Emit the nodes in list[0..n) (toposort order) whose scopes share the loops before bit `from`. Units
 * are ordered by Kahn's algorithm over unit-level edges (kept with repeats; indegrees count them alike), so a scope
 * costs O(n log n + edges). */
static void emit_scope(lin *l, size_t from, const size_t *list, size_t n) {
  if (l->st || !n) return;
  const uint32_t sc = ++l->nscopes;
  /* Units: a direct node, or a child loop (all nodes whose scope continues with the same range). */
  size_t *unit_of = malloc(n * sizeof *unit_of);           /* list index -> unit */
  const uop **unit_range = malloc(n * sizeof *unit_range); /* NULL for a direct node */
  size_t *unit_first = malloc(n * sizeof *unit_first);     /* first list index of the unit */
  size_t nunits = 0, nedges = 0, capedges = 0, nheap = 0;
  size_t *indeg = NULL, *members = NULL, *moff = NULL, *eoff = NULL, *etarget = NULL, *heap = NULL;
  size_t(*edges)[2] = NULL; /* (from, to) */
  uint64_t *nest = NULL;
  if (!unit_of || !unit_range || !unit_first) goto oom;
  for (size_t i = 0; i < n; i++) {
    l->stamp[list[i]] = sc;
    l->slot[list[i]] = (uint32_t)i;
  }
  for (size_t i = 0; i < n; i++) {
    size_t b = bit_next(&l->effs[list[i] * l->W], l->W, from); /* list holds instances */
    if (b == SIZE_MAX) {
      unit_range[nunits] = NULL;
      unit_first[nunits] = i;
      unit_of[i] = nunits++;
      continue;
    }
    const uop *r = l->ranges[b];
    size_t rp = pos_of(l, r);
    if (l->rstamp[rp] == sc) {
      unit_of[i] = l->runit[rp];
    } else {
      l->rstamp[rp] = sc;
      l->runit[rp] = (uint32_t)nunits;
      unit_range[nunits] = r;
      unit_first[nunits] = i;
      unit_of[i] = nunits++;
    }
  }
  /* Dependencies between units, from the nodes' sources and the RANGE ends of every loop a unit opens, however deep
   * (the END of an inner loop may be computed at this level). */
  indeg = calloc(nunits, sizeof *indeg);
  eoff = calloc(nunits + 1, sizeof *eoff);
  moff = calloc(nunits + 1, sizeof *moff);
  members = malloc(n * sizeof *members);
  heap = malloc(nunits * sizeof *heap);
  nest = calloc(nunits * l->W, sizeof *nest); /* per loop unit: the loops it opens (bits >= from) */
  if (!indeg || !eoff || !moff || !members || !heap || !nest) goto oom;
  for (size_t i = 0; i < n; i++)
    if (unit_range[unit_of[i]])
      for (size_t w = from / 64; w < l->W; w++) {
        uint64_t x = l->effs[list[i] * l->W + w];
        if (w == from / 64) x &= ~(uint64_t)0 << (from % 64);
        nest[unit_of[i] * l->W + w] |= x;
      }
  size_t nb = SIZE_MAX; /* while scanning unit i - n: the loop last scanned */
  for (size_t i = 0; i < n + nunits; i = nb == SIZE_MAX ? i + 1 : i) {
    size_t ui;
    if (i < n) {
      ui = list[i];
    } else {
      nb = bit_next(&nest[(i - n) * l->W], l->W, nb == SIZE_MAX ? from : nb + 1);
      if (nb == SIZE_MAX) continue;
      ui = l->ifirst[pos_of(l, l->ranges[nb])]; /* a RANGE has one instance */
    }
    const uop *u = l->nodes[l->inode[ui]];
    size_t to = i < n ? unit_of[i] : i - n;
    for (uint32_t s = 0; s < u->nsrc; s++) {
      size_t sp = l->srcinst[l->isrc[ui] + s];
      if (l->stamp[sp] != sc) continue;
      size_t from = unit_of[l->slot[sp]];
      if (from == to) continue;
      if (nedges == capedges) {
        size_t nc = capedges ? capedges * 2 : 64;
        size_t(*ne)[2] = realloc(edges, nc * sizeof *ne);
        if (!ne) goto oom;
        edges = ne;
        capedges = nc;
      }
      edges[nedges][0] = from;
      edges[nedges][1] = to;
      nedges++;
      indeg[to]++;
      eoff[from + 1]++;
    }
  }
  /* out-edges grouped by source unit; members grouped by unit, each in list order */
  etarget = malloc((nedges ? nedges : 1) * sizeof *etarget);
  if (!etarget) goto oom;
  for (size_t u = 0; u < nunits; u++) eoff[u + 1] += eoff[u];
  for (size_t k = 0; k < nedges; k++) etarget[eoff[edges[k][0]]++] = edges[k][1];
  for (size_t u = nunits; u > 0; u--) eoff[u] = eoff[u - 1]; /* the fill advanced each start to the next one */
  eoff[0] = 0;
  for (size_t i = 0; i < n; i++) moff[unit_of[i] + 1]++;
  for (size_t u = 0; u < nunits; u++) moff[u + 1] += moff[u];
  for (size_t i = 0; i < n; i++) members[moff[unit_of[i]]++] = list[i];
  for (size_t u = nunits; u > 0; u--) moff[u] = moff[u - 1];
  moff[0] = 0;
  for (size_t u = 0; u < nunits; u++)
    if (!indeg[u]) heap_push(heap, &nheap, u);
  for (size_t emitted = 0; emitted < nunits; emitted++) {
    if (!nheap) {
      l->st = hcq_status_make(HCQ_CODE_INTERNAL, "linearize: cyclic dependency between loop scopes");
      goto done;
    }
    size_t pick = heap_pop(heap, &nheap);
    for (size_t k = eoff[pick]; k < eoff[pick + 1]; k++)
      if (--indeg[etarget[k]] == 0) heap_push(heap, &nheap, etarget[k]);
    if (!unit_range[pick]) {
      if (!push(l, l->nodes[l->inode[list[unit_first[pick]]]])) goto oom;
      continue;
    }
    const uop *r = unit_range[pick];
    if (!push(l, r)) goto oom;
    emit_scope(l, l->rank[pos_of(l, r)] + 1, members + moff[pick], moff[pick + 1] - moff[pick]);
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
  free(members);
  free(moff);
  free(eoff);
  free(etarget);
  free(edges);
  free(heap);
  free(nest);
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

/* Context of every node (step 1) as bitsets over l->rank; false when out of memory. */
static bool contexts(lin *l) {
  const size_t W = l->W;
  uint64_t *closed = calloc(W, sizeof *closed);
  if (!closed) return false;
  for (size_t k = 0; k < l->count; k++) {
    const uop *n = l->nodes[k];
    if (n->op == UOP_SPECIAL) continue;
    uint64_t *c = &l->ctxs[k * W];
    for (uint32_t s = 0; s < n->nsrc; s++) {
      const uop *src = n->src[s];
      size_t sp = pos_of(l, src);
      const uint64_t *sc = &l->ctxs[sp * W];
      if (src->op == UOP_STORE) {
        memset(closed, 0, W * sizeof *closed);
        for (uint32_t j = 2; j < src->nsrc; j++)
          if (src->src[j]->op == UOP_RANGE) bit_set(closed, l->rank[pos_of(l, src->src[j])]);
        for (size_t w = 0; w < W; w++) c[w] |= sc[w] & ~closed[w];
      } else {
        for (size_t w = 0; w < W; w++) c[w] |= sc[w];
      }
      if (src->op == UOP_RANGE) bit_set(c, l->rank[sp]);
    }
  }
  free(closed);
  return true;
}

/* Reorder l->ranges (and l->rank) into a nesting order: outer[b] = the ranges that must enclose range b (those its
 * END uses; those live at a node that reads a STORE closing b), then Kahn's algorithm taking the smallest ready
 * rank, so kernels whose ids already give a valid nesting keep exactly the id order. A cycle (no valid nesting)
 * is broken at the smallest rank; the scope check of step 4 then reports the kernel. */
static bool nest_order(lin *l) {
  const size_t R = l->nranges, W = l->W;
  if (R < 2) return true;
  uint64_t *outer = calloc(R * W, sizeof *outer), *done = calloc(W, sizeof *done);
  const uop **order = malloc(R * sizeof *order);
  bool ok = outer && done && order;
  for (size_t k = 0; ok && k < l->count; k++) {
    const uop *n = l->nodes[k];
    const uint64_t *c = &l->ctxs[k * W];
    if (n->op == UOP_RANGE) {
      uint64_t *o = &outer[(size_t)l->rank[k] * W];
      for (size_t w = 0; w < W; w++) o[w] |= c[w];
    }
    for (uint32_t s = 0; s < n->nsrc; s++) {
      const uop *st = n->src[s];
      if (st->op != UOP_STORE) continue;
      for (uint32_t j = 2; j < st->nsrc; j++) {
        if (st->src[j]->op != UOP_RANGE) continue;
        size_t b = l->rank[pos_of(l, st->src[j])];
        uint64_t *o = &outer[b * W];
        for (size_t w = 0; w < W; w++) o[w] |= c[w];
        o[b / 64] &= ~((uint64_t)1 << (b % 64));
      }
    }
  }
  for (size_t i = 0; ok && i < R; i++) {
    size_t pick = SIZE_MAX, first = SIZE_MAX;
    for (size_t b = 0; b < R && pick == SIZE_MAX; b++) {
      if (done[b / 64] >> (b % 64) & 1) continue;
      if (first == SIZE_MAX) first = b;
      bool ready = true;
      for (size_t w = 0; w < W && ready; w++) ready = !(outer[b * W + w] & ~done[w]);
      if (ready) pick = b;
    }
    if (pick == SIZE_MAX) pick = first;
    bit_set(done, pick);
    order[i] = l->ranges[pick];
  }
  if (ok) {
    memcpy(l->ranges, order, R * sizeof *order);
    for (size_t b = 0; b < R; b++) l->rank[pos_of(l, l->ranges[b])] = (uint32_t)b;
  }
  free(outer);
  free(done);
  free(order);
  return ok;
}

/* *pp (a pointer to an array) resized to n elements of elem_B bytes. */
static bool resize(void *pp, size_t n, size_t elem_B) {
  void **p = pp, *np = realloc(*p, n * elem_B);
  if (!np) return false;
  *p = np;
  return true;
}
static size_t grown(size_t cap, size_t need) {
  size_t nc = cap ? cap * 2 : 64;
  return nc > need ? nc : need;
}

/* A new instance of node k in scope e, asking each of its sources for an instance in that scope. */
static bool new_instance(lin *l, size_t k, const uint64_t *e) {
  const uop *n = l->nodes[k];
  size_t i = l->ninst, ns = l->nsrcinst + n->nsrc, nq = l->nrq + n->nsrc;
  if (i == l->capinst) {
    size_t nc = grown(l->capinst, i + 1);
    if (!resize(&l->inode, nc, sizeof *l->inode) || !resize(&l->isrc, nc, sizeof *l->isrc) ||
        !resize(&l->effs, nc * l->W, sizeof *l->effs))
      return false;
    l->capinst = nc;
  }
  if (ns > l->capsrcinst) {
    size_t nc = grown(l->capsrcinst, ns);
    if (!resize(&l->srcinst, nc, sizeof *l->srcinst)) return false;
    l->capsrcinst = nc;
  }
  if (nq > l->caprq) {
    size_t nc = grown(l->caprq, nq);
    if (!resize(&l->rqnext, nc, sizeof *l->rqnext) || !resize(&l->rqinst, nc, sizeof *l->rqinst) ||
        !resize(&l->rqslot, nc, sizeof *l->rqslot))
      return false;
    l->caprq = nc;
  }
  l->inode[i] = (uint32_t)k;
  memcpy(&l->effs[i * l->W], e, l->W * sizeof *e);
  l->isrc[i] = l->nsrcinst;
  for (uint32_t s = 0; s < n->nsrc; s++) {
    size_t sp = pos_of(l, n->src[s]), q = l->nrq++;
    l->srcinst[l->nsrcinst + s] = UINT32_MAX;
    l->rqinst[q] = i;
    l->rqslot[q] = l->nsrcinst + s;
    l->rqnext[q] = l->rqhead[sp];
    l->rqhead[sp] = q;
  }
  l->nsrcinst += n->nsrc;
  l->ninst++;
  return true;
}

/* Step 2, users before sources: each request gets the instance of scope context + the requester's loops outside
 * the node's innermost range; STOREs and void nodes take the union of all requests in one instance instead. */
static bool scopes(lin *l) {
  const size_t W = l->W;
  uint64_t *e = malloc(W * sizeof *e), *below = malloc(W * sizeof *below);
  bool ok = e && below;
  for (size_t k = l->count; ok && k-- > 0;) {
    const uop *n = l->nodes[k];
    const uint64_t *c = &l->ctxs[k * W];
    size_t inner = bit_last(c, W);
    bool extend = inner != SIZE_MAX && !is_silent(n) && n->op != UOP_RANGE;
    bool copies = extend && n->op != UOP_STORE && n->dtype.scalar != UOP_VOID;
    memset(below, 0, W * sizeof *below);
    for (size_t w = 0; extend && w <= inner / 64; w++)
      below[w] = w < inner / 64 ? ~(uint64_t)0 : ((uint64_t)1 << (inner % 64)) - 1;
    l->ifirst[k] = (uint32_t)l->ninst;
    memcpy(e, c, W * sizeof *e);
    if (!copies) {
      for (size_t q = l->rqhead[k]; q != SIZE_MAX; q = l->rqnext[q])
        for (size_t w = 0; w < W; w++) e[w] |= l->effs[l->rqinst[q] * W + w] & below[w];
      ok = new_instance(l, k, e);
    }
    for (size_t q = l->rqhead[k]; ok && q != SIZE_MAX; q = l->rqnext[q]) {
      size_t found = l->ifirst[k];
      if (copies) {
        for (size_t w = 0; w < W; w++) e[w] = c[w] | (l->effs[l->rqinst[q] * W + w] & below[w]);
        while (found < l->ninst && memcmp(&l->effs[found * W], e, W * sizeof *e)) found++;
        if (found == l->ninst) ok = new_instance(l, k, e);
      }
      if (ok) l->srcinst[l->rqslot[q]] = (uint32_t)found;
    }
    if (ok && l->ninst == l->ifirst[k]) { /* no users: the SINK */
      memcpy(e, c, W * sizeof *e);
      ok = new_instance(l, k, e);
    }
    l->icount[k] = (uint32_t)(l->ninst - l->ifirst[k]);
  }
  free(e);
  free(below);
  return ok;
}

hcq_status cc_linearize(uop_ctx *ctx, const uop *sink, const uop ***out_list, size_t *out_count) {
  *out_list = NULL;
  *out_count = 0;
  lin l = {.ctx = ctx};
  HCQ_TRY(uop_toposort(ctx, sink, &l.nodes, &l.count));
  size_t *list = NULL;
  const uop **tops = malloc(l.count * sizeof *tops);
  size_t nlist = 0, ntops = 0;
  l.pos = malloc((uop_ctx_node_count(ctx) + 1) * sizeof *l.pos);
  l.rank = malloc(l.count * sizeof *l.rank);
  l.ranges = malloc(l.count * sizeof *l.ranges);
  l.rstamp = calloc(l.count, sizeof *l.rstamp);
  l.runit = malloc(l.count * sizeof *l.runit);
  l.ifirst = malloc(l.count * sizeof *l.ifirst);
  l.icount = malloc(l.count * sizeof *l.icount);
  l.rqhead = malloc(l.count * sizeof *l.rqhead);
  if (!tops || !l.pos || !l.rank || !l.ranges || !l.rstamp || !l.runit || !l.ifirst || !l.icount || !l.rqhead) goto oom;
  for (size_t k = 0; k < l.count; k++) l.rqhead[k] = SIZE_MAX;
  if (l.count > UINT32_MAX) {
    l.st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "linearize: %zu nodes is too many", l.count);
    goto fail;
  }
  for (size_t k = 0; k < l.count; k++) {
    l.pos[l.nodes[k]->id] = (uint32_t)k;
    if (l.nodes[k]->op == UOP_RANGE) l.ranges[l.nranges++] = l.nodes[k];
  }
  qsort(l.ranges, l.nranges, sizeof *l.ranges, range_qcmp);
  for (size_t b = 0; b < l.nranges; b++) l.rank[pos_of(&l, l.ranges[b])] = (uint32_t)b;
  const size_t W = l.W = l.nranges / 64 + 1;
  l.ctxs = calloc(l.count * W, sizeof *l.ctxs);
  if (!l.ctxs) goto oom;
  /* 1. contexts, in id order first; then the nesting order from them, and the contexts again in that order */
  if (!contexts(&l) || !nest_order(&l)) goto oom;
  memset(l.ctxs, 0, l.count * W * sizeof *l.ctxs);
  if (!contexts(&l)) goto oom;
  /* 2. scopes: instances of the nodes */
  if (!scopes(&l)) goto oom;
  if (l.ninst > UINT32_MAX) {
    l.st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "linearize: %zu node instances is too many", l.ninst);
    goto fail;
  }
  list = malloc(l.ninst * sizeof *list);
  l.stamp = calloc(l.ninst, sizeof *l.stamp);
  l.slot = malloc(l.ninst * sizeof *l.slot);
  if (!list || !l.stamp || !l.slot) goto oom;
  /* 3. emission */
  for (size_t k = 0; k < l.count; k++) {
    const uop *n = l.nodes[k];
    if (n->op == UOP_DEFINE_GLOBAL || n->op == UOP_DEFINE_VAR || n->op == UOP_DEFINE_REG || n->op == UOP_SPECIAL)
      tops[ntops++] = n;
    else if (!is_silent(n) && n->op != UOP_RANGE)
      for (uint32_t i = 0; i < l.icount[k]; i++) list[nlist++] = l.ifirst[k] + i;
  }
  qsort(tops, ntops, sizeof *tops, top_cmp);
  for (size_t i = 0; i < ntops; i++)
    if (!push(&l, tops[i])) goto oom;
  emit_scope(&l, 0, list, nlist);
  if (l.st) goto fail;
  /* 4. check: every value is used inside the scope it was defined in (STOREs are ordering-only sources). */
  for (size_t i = 0; i < l.ninst && !l.st; i++) {
    const uop *n = l.nodes[l.inode[i]];
    if (is_silent(n) || n->op == UOP_RANGE) continue;
    for (uint32_t s = 0; s < n->nsrc; s++) {
      const uop *src = n->src[s];
      if (is_silent(src) || src->op == UOP_RANGE || src->op == UOP_STORE) continue;
      /* the source's loops are the outermost loops of the user's: se is ne cut after se's last bit */
      const uint64_t *se = &l.effs[l.srcinst[l.isrc[i] + s] * W], *ne = &l.effs[i * W];
      size_t last = bit_last(se, W);
      bool prefix = true;
      for (size_t w = 0; w < W && prefix && last != SIZE_MAX; w++) {
        uint64_t keep = w < last / 64 ? ~(uint64_t)0 : w > last / 64 ? 0 : ~(uint64_t)0 >> (63 - last % 64);
        prefix = (ne[w] & keep) == se[w];
      }
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
  free(l.ctxs);
  free(l.effs);
  free(l.inode);
  free(l.isrc);
  free(l.srcinst);
  free(l.ifirst);
  free(l.icount);
  free(l.rqhead);
  free(l.rqnext);
  free(l.rqinst);
  free(l.rqslot);
  free(list);
  free(tops);
  free(l.out);
  free(l.pos);
  free(l.rank);
  free(l.ranges);
  free(l.stamp);
  free(l.slot);
  free(l.rstamp);
  free(l.runit);
  return l.st;
}

hcq_status cc_linear_listing(const uop *const *list, size_t count, char **out_text) {
  *out_text = NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return hcq_status_make(HCQ_CODE_NOMEM, "listing: open_memstream failed");
  base_ptrmap num = {0};
  int depth = 0;
  hcq_status st = HCQ_OK;
  for (size_t k = 0; k < count; k++) {
    const uop *n = list[k];
    if (!base_ptrmap_put(&num, n, k)) {
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
      uintptr_t *m = base_ptrmap_find(&num, src);
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
  base_ptrmap_free(&num);
  if (st) {
    free(buf);
    return st;
  }
  *out_text = buf;
  return HCQ_OK;
}
