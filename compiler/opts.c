/* Opt application on the kernel AST (reference tinygrad/codegen/opt/postrange.py): the scheduler view (sorted axes),
 * shift_to, and apply_opt with the reference's validity checks for UPCAST, UNROLL, LOCAL, GROUP, GROUPTOP, THREAD,
 * NOLOCALS, PADTO and SWAP, and our KBLOCK (kblock.c). Every opt keeps the kernel in AST form: STORE and REDUCE keep listing the ranges they
 * close, so the reference interpreter runs the result as plain loops. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc_internal.h"
#include "compiler/opt_internal.h"
#include "uop/symbolic.h"
#include "base/ptrmap.h"
#include "base/vec.h"

/* ------------------------------------------------------------------------------------------------ helpers */

static const int AXIS_POS[UOP_AXIS_COUNT] = {
    [UOP_AXIS_GLOBAL] = 0, [UOP_AXIS_WARP] = 1,   [UOP_AXIS_LOCAL] = 2,  [UOP_AXIS_LOOP] = -1,
    [UOP_AXIS_GROUP_REDUCE] = 2, [UOP_AXIS_REDUCE] = 4, [UOP_AXIS_UPCAST] = 3, [UOP_AXIS_UNROLL] = 5,
    [UOP_AXIS_THREAD] = 0, [UOP_AXIS_OUTER] = -2,
};

int64_t cc_axis_size(const uop *rng) {
  int64_t v;
  return uop_const_value(rng->src[0], &v) ? v : -1;
}

uop_axis cc_axis_type(const uop *rng) { return (uop_axis)rng->arg.i2; }

static bool is_holder(const uop *n) { return n->op == UOP_STORE || n->op == UOP_REDUCE; }
static uint32_t first_range(const uop *n) { return n->op == UOP_STORE ? 2 : 1; }

static bool lists(const uop *holder, const uop *rng) {
  for (uint32_t i = first_range(holder); i < holder->nsrc; i++)
    if (holder->src[i] == rng) return true;
  return false;
}

bool cc_uses(const uop *root, const uop *needle) {
  if (root == needle) return true;
  base_ptrmap seen = {0};
  base_vec stack = {0};
  bool found = false, oom = !base_vec_push(&stack, (uintptr_t)root);
  while (!found && !oom && stack.n) {
    const uop *n = (const uop *)stack.v[--stack.n];
    for (uint32_t i = 0; i < n->nsrc && !found; i++) {
      const uop *c = n->src[i];
      if (c == needle) found = true;
      else if (!base_ptrmap_find(&seen, c)) oom = !base_ptrmap_put(&seen, c, 1) || !base_vec_push(&stack, (uintptr_t)c);
    }
  }
  base_ptrmap_free(&seen);
  base_vec_free(&stack);
  return found || oom; /* out of memory: "maybe", the conservative answer for every caller */
}

bool cc_divides(uop_ctx *ctx, const uop *expr, int64_t d, const uop **out) {
  *out = NULL;
  if (d <= 0) return false;
  if (d == 1) {
    *out = expr;
    return true;
  }
  int64_t v;
  if (uop_const_value(expr, &v)) {
    if (v % d) return false;
    *out = uop_const_int(ctx, expr->dtype, v / d);
    return *out != NULL;
  }
  const uop *a, *b;
  if (expr->op == UOP_MUL) {
    if (cc_divides(ctx, expr->src[0], d, &a)) *out = uop_alu2(ctx, UOP_MUL, a, expr->src[1]);
    else if (cc_divides(ctx, expr->src[1], d, &b)) *out = uop_alu2(ctx, UOP_MUL, expr->src[0], b);
    return *out != NULL;
  }
  if (expr->op == UOP_ADD) {
    if (!cc_divides(ctx, expr->src[0], d, &a) || !cc_divides(ctx, expr->src[1], d, &b)) return false;
    *out = uop_alu2(ctx, UOP_ADD, a, b);
    return *out != NULL;
  }
  return false;
}

/* ------------------------------------------------------------------------------------------------ scheduler */

static int rng_cmp(const void *pa, const void *pb) {
  const uop *a = *(const uop *const *)pa, *b = *(const uop *const *)pb;
  int ka = AXIS_POS[cc_axis_type(a)], kb = AXIS_POS[cc_axis_type(b)];
  if (ka != kb) return ka < kb ? -1 : 1;
  if (a->arg.i != b->arg.i) return a->arg.i < b->arg.i ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

hcq_status cc_sched_refresh(cc_sched *s) {
  const uop **nodes;
  size_t count, n = 0;
  HCQ_TRY(uop_toposort(s->ctx, s->sink, &nodes, &count));
  const uop **r = malloc((count ? count : 1) * sizeof *r);
  if (!r) return hcq_status_make(HCQ_CODE_NOMEM, "optimize: out of memory");
  for (size_t k = 0; k < count; k++) {
    const uop *u = nodes[k];
    if (u->op != UOP_RANGE) continue;
    if ((uint64_t)u->arg.i2 >= UOP_AXIS_COUNT) {
      free(r);
      return hcq_status_make(HCQ_CODE_INVALID, "optimize: range r%lld has a bad axis type %lld", (long long)u->arg.i,
                             (long long)u->arg.i2);
    }
    /* OUTER loops (KBLOCK) are out of the view: no opt may split, thread or move them */
    if (uop_vmax(u) > 0 && cc_axis_type(u) != UOP_AXIS_OUTER) r[n++] = u;
  }
  qsort(r, n, sizeof *r, rng_cmp);
  free(s->rngs);
  s->rngs = r;
  s->nrngs = n;
  return HCQ_OK;
}

hcq_status cc_sched_init(cc_sched *s, uop_ctx *ctx, const uop *sink, const cc_target *t) {
  memset(s, 0, sizeof *s);
  s->ctx = ctx;
  s->t = t;
  s->sink = sink;
  if (!sink || sink->op != UOP_SINK) return hcq_status_make(HCQ_CODE_INVALID, "optimize: the kernel root is not a SINK");
  for (uint32_t i = 0; i < sink->nsrc; i++)
    if (sink->src[i]->op != UOP_STORE)
      return hcq_status_make(HCQ_CODE_INVALID, "optimize: SINK source %u is %s, expected STORE", i,
                             uop_op_name((uop_op)sink->src[i]->op));
  return cc_sched_refresh(s);
}

void cc_sched_free(cc_sched *s) {
  free(s->rngs);
  free(s->applied);
  s->rngs = NULL;
  s->applied = NULL;
}

hcq_status cc_sched_bufs(const cc_sched *s, const uop ***out, size_t *out_count) {
  *out = NULL;
  *out_count = 0;
  const uop **nodes;
  size_t count, n = 0;
  HCQ_TRY(uop_toposort(s->ctx, s->sink, &nodes, &count));
  const uop **b = malloc((count ? count : 1) * sizeof *b);
  if (!b) return hcq_status_make(HCQ_CODE_NOMEM, "optimize: out of memory");
  for (size_t k = 0; k < count; k++)
    if (nodes[k]->op == UOP_INDEX_OP && nodes[k]->nsrc >= 2 && nodes[k]->src[0]->op == UOP_DEFINE_GLOBAL)
      b[n++] = nodes[k];
  *out = b;
  *out_count = n;
  return HCQ_OK;
}

bool cc_globalizable(const cc_sched *s, const uop *rng) {
  if (cc_axis_type(rng) != UOP_AXIS_LOOP || s->sink->nsrc == 0) return false;
  /* The reference asks only the first STORE; every store must list it here, or a thread would redo (and race on)
   * the other stores' work. */
  for (uint32_t i = 0; i < s->sink->nsrc; i++)
    if (!lists(s->sink->src[i], rng)) return false;
  return true;
}

static int i64_cmp(const void *pa, const void *pb) {
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  return a < b ? -1 : a > b;
}

hcq_status cc_fresh_range_id(const uop *const *nodes, size_t count, const int64_t *taken, size_t ntaken,
                             int64_t *out_id) {
  size_t n = 0;
  int64_t *ids = malloc((count + ntaken + 1) * sizeof *ids);
  if (!ids) return hcq_status_make(HCQ_CODE_NOMEM, "range ids: out of memory");
  for (size_t k = 0; k < count; k++)
    if (nodes[k]->op == UOP_RANGE) ids[n++] = nodes[k]->arg.i;
  for (size_t k = 0; k < ntaken; k++) ids[n++] = taken[k];
  qsort(ids, n, sizeof *ids, i64_cmp);
  /* ids are names: max + 1 keeps new ids readable; at INT64_MAX take the smallest free id >= 0 instead */
  int64_t id = n ? ids[n - 1] : -1;
  if (id < INT64_MAX) {
    id = id < 0 ? 0 : id + 1;
  } else {
    id = 0;
    for (size_t k = 0; k < n; k++) {
      if (ids[k] < id) continue;
      if (ids[k] > id) break;
      id++; /* ids[k] == id; cannot pass INT64_MAX: fewer than 2^63 ids exist */
    }
  }
  free(ids);
  *out_id = id;
  return HCQ_OK;
}

static hcq_status fresh_id(cc_sched *s, int64_t *out_id) {
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(s->ctx, s->sink, &nodes, &count));
  return cc_fresh_range_id(nodes, count, NULL, 0, out_id);
}

/* ------------------------------------------------------------------------------------------------ rewriting */

/* Replace `from` by `expr` everywhere; in the range lists of STOREs and REDUCEs, `expr` becomes the ranges
 * repl[0..nrepl). */
typedef struct subst_job {
  const uop *from, *expr;
  const uop *repl[2];
  uint32_t nrepl;
} subst_job;

static const uop *subst_fn(void *user, uop_ctx *ctx, const uop *n, hcq_status *st) {
  (void)st;
  subst_job *j = user;
  if (n == j->from) return j->expr;
  if (!is_holder(n)) return n;
  uint32_t hits = 0;
  for (uint32_t i = first_range(n); i < n->nsrc; i++) hits += n->src[i] == j->expr;
  if (!hits) return n;
  const uop **src = malloc((n->nsrc + hits * j->nrepl) * sizeof *src);
  if (!src) return NULL;
  uint32_t k = 0;
  for (uint32_t i = 0; i < n->nsrc; i++) {
    if (i >= first_range(n) && n->src[i] == j->expr) {
      for (uint32_t r = 0; r < j->nrepl; r++) src[k++] = j->repl[r];
    } else {
      src[k++] = n->src[i];
    }
  }
  const uop *out = uop_replace_src(ctx, n, src, k);
  free(src);
  return out;
}

/* Range lists after simplification: a size-1 range folded to a constant leaves the list; any other non-RANGE entry
 * is replaced by the ranges it uses; duplicates go. A REDUCE left without ranges is its source. */
static const uop *flatten_fn(void *user, uop_ctx *ctx, const uop *n, hcq_status *st) {
  (void)user;
  if (!is_holder(n)) return n;
  bool clean = true;
  for (uint32_t i = first_range(n); i < n->nsrc; i++) clean &= n->src[i]->op == UOP_RANGE;
  if (clean && !(n->op == UOP_REDUCE && n->nsrc == 1)) return n;
  if (n->op == UOP_REDUCE && n->nsrc == 1) return n->src[0];
  const uop **nodes;
  size_t cap = n->nsrc;
  for (uint32_t i = first_range(n); i < n->nsrc; i++) {
    size_t c;
    hcq_status e = uop_toposort(ctx, n->src[i], &nodes, &c);
    if (e) {
      *st = e;
      return NULL;
    }
    cap += c;
  }
  const uop **src = malloc(cap * sizeof *src);
  if (!src) return NULL;
  uint32_t k = 0;
  for (uint32_t i = 0; i < n->nsrc; i++) {
    if (i < first_range(n)) {
      src[k++] = n->src[i];
      continue;
    }
    size_t c;
    hcq_status e = uop_toposort(ctx, n->src[i], &nodes, &c);
    if (e) {
      free(src);
      *st = e;
      return NULL;
    }
    for (size_t m = 0; m < c; m++) {
      if (nodes[m]->op != UOP_RANGE) continue;
      bool dup = false;
      for (uint32_t q = first_range(n); q < k && !dup; q++) dup = src[q] == nodes[m];
      if (!dup) src[k++] = nodes[m];
    }
  }
  const uop *out = n->op == UOP_REDUCE && k == 1 ? src[0] : uop_replace_src(ctx, n, src, k);
  free(src);
  return out;
}

/* Simplify the whole kernel and clean its range lists. */
static hcq_status finish(cc_sched *s, const uop *sink, const uop **out) {
  const uop_pm *pm = uop_symbolic_pm();
  if (!pm) return hcq_status_make(HCQ_CODE_INTERNAL, "optimize: the symbolic rule set failed to build");
  const uop *simple;
  HCQ_TRY(uop_graph_rewrite(s->ctx, sink, pm, UOP_REWRITE_SOURCES_FIRST, NULL, &simple));
  return cc_rebuild(s->ctx, simple, flatten_fn, NULL, out);
}

/* shift_to (reference 3.8): split rng (end N, divisible by amount) into a new range of `amount` with type at and
 * rng' of N/amount: rng -> new*(N/amount) + rng' when top, rng'*amount + new otherwise. */
static hcq_status shift_to(cc_sched *s, const uop *rng, int64_t amount, uop_axis at, bool top, const char **why) {
  uop_ctx *ctx = s->ctx;
  const uop *q;
  if (!cc_divides(ctx, rng->src[0], amount, &q)) {
    *why = "the axis size is not divisible by the amount";
    return HCQ_OK;
  }
  HCQ_TRY(uop_simplify(ctx, q, &q));
  int64_t id;
  HCQ_TRY(fresh_id(s, &id));
  const uop *nr = uop_range(ctx, uop_index_const(ctx, amount), id, at);
  const uop *old = uop_range(ctx, q, rng->arg.i, cc_axis_type(rng));
  subst_job j = {.from = rng, .nrepl = 2};
  if (top) {
    j.expr = uop_alu2(ctx, UOP_ADD, uop_alu2(ctx, UOP_MUL, nr, q), old);
    j.repl[0] = nr;
    j.repl[1] = old;
  } else {
    j.expr = uop_alu2(ctx, UOP_ADD, uop_alu2(ctx, UOP_MUL, old, uop_index_const(ctx, amount)), nr);
    j.repl[0] = old;
    j.repl[1] = nr;
  }
  if (!j.expr) return hcq_status_make(HCQ_CODE_NOMEM, "optimize: out of memory");
  const uop *rebuilt;
  HCQ_TRY(cc_rebuild(ctx, s->sink, subst_fn, &j, &rebuilt));
  HCQ_TRY(finish(s, rebuilt, &rebuilt));
  s->sink = rebuilt;
  return cc_sched_refresh(s);
}

/* Replace ranges one for one (SWAP, LOOP -> GLOBAL); range lists follow since their entries are the ranges. */
typedef struct map_job {
  const uop *from[2], *to[2];
  int n;
} map_job;

static const uop *map_fn(void *user, uop_ctx *ctx, const uop *n, hcq_status *st) {
  (void)ctx;
  (void)st;
  map_job *j = user;
  for (int i = 0; i < j->n; i++)
    if (n == j->from[i]) return j->to[i];
  return n;
}

/* ------------------------------------------------------------------------------------------------ PADTO */

/* Does n evaluate to 0 wherever the padded range is out of its old bounds? Gated loads (their INDEX gate mentions
 * the padded range) give 0; the ops that map 0 to 0 keep it. */
static bool zero_when_padded(const uop *n, const uop *prng) {
  switch (n->op) {
    case UOP_CONST: return n->arg.kind == UOP_ARG_FLOAT ? n->arg.f == 0.0 : n->arg.i == 0;
    case UOP_LOAD: {
      const uop *ix = n->src[0];
      if (ix->op != UOP_INDEX_OP || ix->nsrc < 3 || !cc_uses(ix->src[2], prng)) return false;
      return n->nsrc == 1 || (n->src[1]->op == UOP_CONST && zero_when_padded(n->src[1], prng));
    }
    case UOP_MUL: case UOP_AND:
      return zero_when_padded(n->src[0], prng) || zero_when_padded(n->src[1], prng);
    case UOP_ADD: case UOP_SUB: case UOP_MAX: case UOP_OR: case UOP_XOR:
      return zero_when_padded(n->src[0], prng) && zero_when_padded(n->src[1], prng);
    case UOP_NEG: case UOP_CAST: case UOP_BITCAST: case UOP_TRUNC: case UOP_SQRT:
      return zero_when_padded(n->src[0], prng);
    case UOP_WHERE: return zero_when_padded(n->src[1], prng) && zero_when_padded(n->src[2], prng);
    case UOP_IDIV: case UOP_FDIV: {
      int64_t v;
      bool nonzero = n->src[1]->op == UOP_CONST &&
                     (n->src[1]->arg.kind == UOP_ARG_FLOAT ? n->src[1]->arg.f != 0.0 : uop_const_value(n->src[1], &v) && v);
      return nonzero && zero_when_padded(n->src[0], prng);
    }
    case UOP_REDUCE:
      return (n->arg.i == UOP_ADD || n->arg.i == UOP_MAX) && zero_when_padded(n->src[0], prng);
    default: return false;
  }
}

typedef struct pad_job {
  const uop *from, *to, *valid;
} pad_job;

static const uop *pad_fn(void *user, uop_ctx *ctx, const uop *n, hcq_status *st) {
  (void)st;
  pad_job *j = user;
  if (n == j->from) return j->to;
  if (n->op != UOP_INDEX_OP || n->nsrc < 2 || n->src[0]->op != UOP_DEFINE_GLOBAL) return n;
  if (!cc_uses(n->src[1], j->to) && !(n->nsrc > 2 && cc_uses(n->src[2], j->to))) return n;
  const uop *gate = n->nsrc > 2 ? uop_alu2(ctx, UOP_AND, j->valid, n->src[2]) : j->valid;
  const uop *src[3] = {n->src[0], n->src[1], gate};
  return uop_replace_src(ctx, n, src, 3);
}

/* THREAD over a symbolic axis N that `amount` does not provably divide: amount chunks of ceil(N/amount), every
 * global buffer access gated with the original index < N, since the last chunk may run past N. Only for THREAD:
 * its axis is closed by every STORE, so a skipped iteration changes nothing but its own (gated) stores. */
static hcq_status thread_gated(cc_sched *s, const uop *rng, int64_t amount) {
  uop_ctx *ctx = s->ctx;
  const uop *n = rng->src[0];
  const uop *q = uop_alu2(ctx, UOP_IDIV, uop_alu2(ctx, UOP_ADD, n, uop_index_const(ctx, amount - 1)),
                          uop_index_const(ctx, amount));
  if (!q) return hcq_status_make(HCQ_CODE_NOMEM, "optimize: out of memory");
  HCQ_TRY(uop_simplify(ctx, q, &q));
  int64_t id;
  HCQ_TRY(fresh_id(s, &id));
  const uop *nr = uop_range(ctx, uop_index_const(ctx, amount), id, UOP_AXIS_THREAD);
  const uop *old = uop_range(ctx, q, rng->arg.i, cc_axis_type(rng));
  subst_job j = {.from = rng, .nrepl = 2, .repl = {nr, old}};
  j.expr = uop_alu2(ctx, UOP_ADD, uop_alu2(ctx, UOP_MUL, nr, q), old);
  pad_job pj = {.to = nr, .valid = uop_alu2(ctx, UOP_CMPLT, j.expr, n)};
  if (!j.expr || !pj.valid) return hcq_status_make(HCQ_CODE_NOMEM, "optimize: out of memory");
  const uop *rebuilt;
  HCQ_TRY(cc_rebuild(ctx, s->sink, subst_fn, &j, &rebuilt));
  HCQ_TRY(cc_rebuild(ctx, rebuilt, pad_fn, &pj, &rebuilt));
  HCQ_TRY(finish(s, rebuilt, &rebuilt));
  s->sink = rebuilt;
  return cc_sched_refresh(s);
}

/* ------------------------------------------------------------------------------------------------ apply_opt */

static hcq_status opt_error(const cc_sched *s, cc_opt o, const uop *rng, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static hcq_status opt_error(const cc_sched *s, cc_opt o, const uop *rng, const char *fmt, ...) {
  (void)s;
  va_list ap;
  va_start(ap, fmt);
  hcq_status st = hcq_status_makev(HCQ_CODE_INVALID, fmt, ap);
  va_end(ap);
  if (!rng)
    return hcq_status_annotate(st, "opt %s:%d:%lld", cc_opt_name(o.op), o.axis, (long long)o.amount);
  int64_t size = cc_axis_size(rng);
  char sz[32];
  if (size >= 0) snprintf(sz, sizeof sz, "%lld", (long long)size);
  else snprintf(sz, sizeof sz, "symbolic");
  return hcq_status_annotate(st, "opt %s:%d:%lld (axis %d = r%lld, %s, size %s)", cc_opt_name(o.op), o.axis,
                             (long long)o.amount, o.axis, (long long)rng->arg.i, uop_axis_name(cc_axis_type(rng)), sz);
}

static bool any_axis_of(const cc_sched *s, uint32_t type_mask) {
  for (size_t i = 0; i < s->nrngs; i++)
    if (type_mask & (1u << cc_axis_type(s->rngs[i]))) return true;
  return false;
}

static hcq_status push_applied(cc_sched *s, cc_opt o) {
  if (s->napplied == s->capplied) {
    size_t nc = s->capplied ? s->capplied * 2 : 8;
    cc_opt *na = realloc(s->applied, nc * sizeof *na);
    if (!na) return hcq_status_make(HCQ_CODE_NOMEM, "optimize: out of memory");
    s->applied = na;
    s->capplied = nc;
  }
  s->applied[s->napplied++] = o;
  return HCQ_OK;
}

/* The first REDUCE of the kernel (toposort order), or NULL. */
static const uop *first_reduce(const cc_sched *s) {
  const uop **nodes;
  size_t count;
  hcq_status st = uop_toposort(s->ctx, s->sink, &nodes, &count);
  if (st) {
    hcq_status_free(st);
    return NULL;
  }
  for (size_t k = 0; k < count; k++)
    if (nodes[k]->op == UOP_REDUCE) return nodes[k];
  return NULL;
}

#define AX(t) (1u << UOP_AXIS_##t)

/* THREAD on a REDUCE axis (a cross-thread reduce, lowered by group_reduce.c: per-thread partials, then the last
 * thread to arrive combines them). The kernel must be one reduce: every range other than UPCAST/UNROLL is listed by
 * the one REDUCE that lists rng, so nothing but the combine and the stores follows the point where a single thread
 * goes on; the size must be constant and divisible (no gated chunks inside a reduce). A KBLOCKed kernel is refused
 * here (its OUTER range is not the REDUCE's); kblock.c refuses KBLOCK after this THREAD. */
static hcq_status thread_reduce_check(const cc_sched *s, cc_opt o, const uop *rng, int64_t amt) {
  if (s->t->kind != CC_TARGET_C)
    return opt_error(s, o, rng, "THREAD on a reduce axis needs the c target (its cross-thread combine)");
  if (cc_axis_size(rng) < 0 || cc_axis_size(rng) % amt)
    return opt_error(s, o, rng, "THREAD on a reduce axis needs a constant size divisible by the amount");
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(s->ctx, s->sink, &nodes, &count));
  const uop *red = NULL;
  for (size_t k = 0; k < count; k++) {
    const uop *n = nodes[k];
    if (n->op != UOP_REDUCE || !lists(n, rng)) continue;
    if (red) return opt_error(s, o, rng, "THREAD on a reduce axis that two REDUCEs list");
    red = n;
  }
  for (size_t k = 0; k < count && red; k++) {
    const uop *n = nodes[k];
    if (n->op != UOP_RANGE || lists(red, n) || (AX(UPCAST) | AX(UNROLL)) & (1u << cc_axis_type(n))) continue;
    return opt_error(s, o, rng, "THREAD on a reduce axis needs a kernel that is one reduce (r%lld, %s, is outside it)",
                     (long long)n->arg.i, uop_axis_name(cc_axis_type(n)));
  }
  if (!red) return opt_error(s, o, rng, "no REDUCE lists this axis");
  return HCQ_OK;
}

static hcq_status apply_padto(cc_sched *s, cc_opt o, const uop *rng) {
  uop_ctx *ctx = s->ctx;
  int64_t size = cc_axis_size(rng);
  uop_axis at = cc_axis_type(rng);
  if (size < 0) return opt_error(s, o, rng, "PADTO needs an axis of constant size");
  if (at == UOP_AXIS_UPCAST || at == UOP_AXIS_UNROLL || at == UOP_AXIS_THREAD)
    return opt_error(s, o, rng, "cannot pad an %s axis", uop_axis_name(at));
  if (o.amount <= 0) return opt_error(s, o, rng, "PADTO needs an amount > 0");
  if (o.amount > ((int64_t)1 << 40)) return opt_error(s, o, rng, "PADTO amount too large");
  int64_t new_size = (size + o.amount - 1) / o.amount * o.amount;
  if (size <= new_size / 4) return opt_error(s, o, rng, "pad adds more than quadruple the work (%lld -> %lld)",
                                             (long long)size, (long long)new_size);
  if (new_size == size) return push_applied(s, o);
  const uop *nr = uop_range(ctx, uop_index_const(ctx, new_size), rng->arg.i, at);
  pad_job j = {.from = rng, .to = nr, .valid = uop_alu2(ctx, UOP_CMPLT, nr, uop_index_const(ctx, size))};
  if (!j.valid) return hcq_status_make(HCQ_CODE_NOMEM, "optimize: out of memory");
  const uop *rebuilt;
  HCQ_TRY(cc_rebuild(ctx, s->sink, pad_fn, &j, &rebuilt));
  /* Padded iterations must not change results: reduces over the axis must add zeros, and nothing may divide by a
   * padded (zero) integer. */
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(ctx, rebuilt, &nodes, &count));
  for (size_t k = 0; k < count; k++) {
    const uop *n = nodes[k];
    if (n->op == UOP_REDUCE && lists(n, nr)) {
      if (n->arg.i != UOP_ADD)
        return opt_error(s, o, rng, "cannot pad a %s reduce (only ADD reduces are padded)", uop_op_name((uop_op)n->arg.i));
      if (!zero_when_padded(n->src[0], nr))
        return opt_error(s, o, rng, "cannot pad this reduce: an op between the loads and the reduce does not map 0 to 0");
    }
    if ((n->op == UOP_IDIV || n->op == UOP_MOD) && n->dtype.scalar != UOP_INDEX && n->src[1]->op != UOP_CONST &&
        cc_uses(n->src[1], nr))
      return opt_error(s, o, rng, "cannot pad: an integer division by a value that depends on the padded axis");
  }
  HCQ_TRY(finish(s, rebuilt, &rebuilt));
  s->sink = rebuilt;
  HCQ_TRY(cc_sched_refresh(s));
  return push_applied(s, o);
}

static hcq_status apply_swap(cc_sched *s, cc_opt o, const uop *rng) {
  if (o.amount < 0 || (uint64_t)o.amount >= s->nrngs)
    return opt_error(s, o, rng, "SWAP's second axis %lld is not one of the %zu axes", (long long)o.amount, s->nrngs);
  const uop *alt = s->rngs[o.amount];
  /* two GLOBAL axes (the reference), or on CPU targets two LOOP axes: exchanging their ids swaps the loop nest */
  uop_axis at = cc_axis_type(rng);
  bool loops = s->t->has_threads && at == UOP_AXIS_LOOP && cc_axis_type(alt) == UOP_AXIS_LOOP;
  if (!loops && (at != UOP_AXIS_GLOBAL || cc_axis_type(alt) != UOP_AXIS_GLOBAL))
    return opt_error(s, o, rng, "swap is only for two GLOBAL axes (or two LOOP axes on CPU) (axis %lld is %s)",
                     (long long)o.amount, uop_axis_name(cc_axis_type(alt)));
  map_job j = {.n = 2, .from = {rng, alt}};
  j.to[0] = uop_range(s->ctx, rng->src[0], alt->arg.i, at);
  j.to[1] = uop_range(s->ctx, alt->src[0], rng->arg.i, at);
  if (!j.to[0] || !j.to[1]) return hcq_status_make(HCQ_CODE_NOMEM, "optimize: out of memory");
  const uop *rebuilt;
  HCQ_TRY(cc_rebuild(s->ctx, s->sink, map_fn, &j, &rebuilt));
  HCQ_TRY(finish(s, rebuilt, &rebuilt));
  s->sink = rebuilt;
  HCQ_TRY(cc_sched_refresh(s));
  return push_applied(s, o);
}

static hcq_status apply_kblock(cc_sched *s, cc_opt o, const uop *rng) {
  const uop *blocked;
  const char *why;
  HCQ_TRY(cc_kblock(s, rng, o.amount, &blocked, &why));
  if (why) return opt_error(s, o, rng, "%s (amount %lld)", why, (long long)o.amount);
  HCQ_TRY(finish(s, blocked, &blocked));
  s->sink = blocked;
  HCQ_TRY(cc_sched_refresh(s));
  return push_applied(s, o);
}

hcq_status cc_apply_opt(cc_sched *s, cc_opt o) {
  if ((unsigned)o.op >= CC_OPT_COUNT) return hcq_status_make(HCQ_CODE_INVALID, "opt: unknown op %d", (int)o.op);
  if (o.op == CC_OPT_TC) return opt_error(s, o, NULL, "tensor cores (TC) are not implemented");
  if (o.op == CC_OPT_NOLOCALS) {
    if (any_axis_of(s, AX(WARP) | AX(LOCAL) | AX(GROUP_REDUCE)))
      return opt_error(s, o, NULL, "NOLOCALS on a kernel that already has WARP/LOCAL/GROUP_REDUCE axes");
    s->dont_use_locals = true;
    return push_applied(s, o);
  }
  /* The axis: UNROLL counts only the constant reduce axes, GROUP/GROUPTOP only the REDUCE axes. */
  const uop *rng = NULL;
  size_t nsel = 0;
  for (size_t i = 0; i < s->nrngs && !rng; i++) {
    const uop *r = s->rngs[i];
    bool sel = true;
    if (o.op == CC_OPT_UNROLL)
      sel = cc_axis_size(r) >= 0 && (cc_axis_type(r) == UOP_AXIS_REDUCE || cc_axis_type(r) == UOP_AXIS_GROUP_REDUCE);
    else if (o.op == CC_OPT_GROUP || o.op == CC_OPT_GROUPTOP || o.op == CC_OPT_KBLOCK)
      sel = cc_axis_type(r) == UOP_AXIS_REDUCE;
    if (sel && o.axis >= 0 && nsel++ == (size_t)o.axis) rng = r;
  }
  if (!rng) {
    const char *what = o.op == CC_OPT_UNROLL ? "unrollable (constant reduce) axes"
                       : (o.op == CC_OPT_GROUP || o.op == CC_OPT_GROUPTOP || o.op == CC_OPT_KBLOCK) ? "reduce axes"
                                                                                                     : "axes of size > 1";
    return opt_error(s, o, NULL, "axis %d does not exist: the kernel has %zu %s", o.axis, nsel, what);
  }
  if (o.op == CC_OPT_PADTO) return apply_padto(s, o, rng);
  if (o.op == CC_OPT_SWAP) return apply_swap(s, o, rng);
  if (o.op == CC_OPT_KBLOCK) return apply_kblock(s, o, rng);

  uop_axis at = cc_axis_type(rng);
  if ((o.op == CC_OPT_LOCAL || o.op == CC_OPT_GROUP || o.op == CC_OPT_GROUPTOP) && !s->t->has_local)
    return opt_error(s, o, rng, "target %s has no local dims (locals needed for this opt)", s->t->name);
  if (o.amount < 0) return opt_error(s, o, rng, "negative amount");
  int64_t amt = o.amount ? o.amount : uop_vmax(rng) + 1;
  if (amt <= 0 || amt > ((int64_t)1 << 40)) return opt_error(s, o, rng, "bad amount %lld", (long long)amt);

  /* Shared memory budget once a reduce is grouped (reference: GROUP/GROUPTOP, and any opt after grouping). */
  const uop *red = first_reduce(s);
  bool grouped = any_axis_of(s, AX(GROUP_REDUCE));
  if (red && (o.op == CC_OPT_GROUP || o.op == CC_OPT_GROUPTOP || grouped)) {
    int64_t sz = 1;
    for (size_t i = 0; i < s->nrngs; i++) {
      uop_axis t = cc_axis_type(s->rngs[i]);
      if (t == UOP_AXIS_UPCAST || t == UOP_AXIS_WARP || t == UOP_AXIS_LOCAL || t == UOP_AXIS_GROUP_REDUCE) {
        int64_t n = uop_vmax(s->rngs[i]) + 1;
        sz = sz > ((int64_t)1 << 40) / (n ? n : 1) ? ((int64_t)1 << 40) : sz * n;
      }
    }
    int64_t smem = amt * sz * uop_dt_itemsize_B(red->dtype);
    if (smem > s->t->shared_max_B)
      return opt_error(s, o, rng, "exceeds the shared memory: needs %lld bytes, max %lld", (long long)smem,
                       (long long)s->t->shared_max_B);
  }

  uop_axis new_at;
  bool top = false;
  switch (o.op) {
    case CC_OPT_UPCAST:
      if (amt > 16) return opt_error(s, o, rng, "don't upcast more than 16 (amount %lld)", (long long)amt);
      if (at != UOP_AXIS_GLOBAL && at != UOP_AXIS_LOCAL && at != UOP_AXIS_LOOP)
        return opt_error(s, o, rng, "upcast is for GLOBAL/LOCAL/LOOP axes, not %s", uop_axis_name(at));
      new_at = UOP_AXIS_UPCAST;
      break;
    case CC_OPT_UNROLL:
      if (amt > 32) return opt_error(s, o, rng, "don't unroll more than 32 (amount %lld)", (long long)amt);
      new_at = UOP_AXIS_UNROLL;
      break;
    case CC_OPT_LOCAL:
      if (s->dont_use_locals) return opt_error(s, o, rng, "locals are disabled (NOLOCALS)");
      if (at != UOP_AXIS_GLOBAL && at != UOP_AXIS_LOOP)
        return opt_error(s, o, rng, "local is for GLOBAL/LOOP axes, not %s", uop_axis_name(at));
      new_at = UOP_AXIS_LOCAL;
      break;
    case CC_OPT_GROUP:
    case CC_OPT_GROUPTOP:
      if (!s->t->has_shared) return opt_error(s, o, rng, "target %s has no shared memory", s->t->name);
      if (s->dont_use_locals) return opt_error(s, o, rng, "locals are disabled (NOLOCALS)");
      new_at = UOP_AXIS_GROUP_REDUCE;
      top = o.op == CC_OPT_GROUPTOP;
      break;
    case CC_OPT_THREAD: {
      if (!s->t->has_threads) return opt_error(s, o, rng, "target %s does not support threads", s->t->name);
      if (amt > s->t->global_max[0])
        return opt_error(s, o, rng, "too many threads: %lld > the target's %lld", (long long)amt,
                         (long long)s->t->global_max[0]);
      const uop **nodes;
      size_t count;
      HCQ_TRY(uop_toposort(s->ctx, s->sink, &nodes, &count));
      for (size_t k = 0; k < count; k++)
        if (nodes[k]->op == UOP_RANGE && cc_axis_type(nodes[k]) == UOP_AXIS_THREAD)
          return opt_error(s, o, rng, "already threaded (r%lld)", (long long)nodes[k]->arg.i);
      new_at = UOP_AXIS_THREAD;
      top = true;
      if (at == UOP_AXIS_REDUCE) {
        HCQ_TRY(thread_reduce_check(s, o, rng, amt));
        break;
      }
      if (!cc_globalizable(s, rng))
        return opt_error(s, o, rng, "THREAD needs a LOOP axis that every output STORE closes, or the reduce axis of "
                         "a kernel that is one reduce");
      const uop *q;
      if (cc_axis_size(rng) < 0 && !cc_divides(s->ctx, rng->src[0], amt, &q)) {
        HCQ_TRY(thread_gated(s, rng, amt));
        return push_applied(s, o);
      }
      break;
    }
    default: return opt_error(s, o, rng, "unhandled opt");
  }
  const char *why = NULL;
  HCQ_TRY(shift_to(s, rng, amt, new_at, top, &why));
  if (why) return opt_error(s, o, rng, "%s (amount %lld)", why, (long long)amt);
  return push_applied(s, o);
}

hcq_status cc_convert_loop_to_global(cc_sched *s) {
  if (!s->t->has_local) return HCQ_OK;
  for (size_t i = 0; i < s->nrngs; i++) {
    const uop *r = s->rngs[i];
    if (!cc_globalizable(s, r)) continue;
    map_job j = {.n = 1, .from = {r}};
    j.to[0] = uop_range(s->ctx, r->src[0], r->arg.i, UOP_AXIS_GLOBAL);
    const uop *rebuilt;
    HCQ_TRY(cc_rebuild(s->ctx, s->sink, map_fn, &j, &rebuilt));
    s->sink = rebuilt;
    HCQ_TRY(cc_sched_refresh(s));
    i = (size_t)-1; /* the view changed: start over (each pass converts one range for good) */
  }
  return HCQ_OK;
}

/* ------------------------------------------------------------------------------------------------ entry */

hcq_status cc_optimize(uop_ctx *ctx, const uop *sink, const cc_target *t, const cc_options *o, const uop **out_sink,
                       cc_opt **applied, size_t *napplied) {
  *out_sink = sink;
  if (applied) *applied = NULL;
  if (napplied) *napplied = 0;
  if (!ctx || !sink || !t) return hcq_status_make(HCQ_CODE_INVALID, "cc_optimize: NULL argument");
  bool noopt = o && o->noopt;
  if (noopt && !t->has_local) return HCQ_OK;
  cc_sched s;
  hcq_status st = cc_sched_init(&s, ctx, sink, t);
  if (!st) st = cc_convert_loop_to_global(&s); /* GPU targets, even with noopt: one thread per output element */
  if (!st && !noopt) {
    if (o && o->opts) {
      for (size_t i = 0; i < o->nopts && !st; i++) {
        st = cc_apply_opt(&s, o->opts[i]);
        if (st) st = hcq_status_annotate(st, "opt #%zu", i + 1);
      }
    } else {
      st = cc_hand_coded(&s);
    }
  }
  if (!st) {
    *out_sink = s.sink;
    if (applied && napplied) {
      *applied = s.applied;
      *napplied = s.napplied;
      s.applied = NULL;
    }
  }
  cc_sched_free(&s);
  return st;
}
