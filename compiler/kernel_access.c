/* kernel_access: value checks of a canonical kernel behind kv_validate: loads and stores provably outside their
 * buffer, and integer divisions that provably trap (by 0, or the type's minimum by -1).
 *
 * "Provably" means we show a witness. vmin/vmax are sound over-approximations, so an index whose [vmin, vmax] lies
 * in [0, size) is in bounds; one whose bounds stick out proves nothing by itself (the gate may exclude those
 * points, or the bounds may be loose). We then evaluate the gate and the index exactly (uop_sym_infer) at
 * candidate points: every range and variable the index, the gate and the ranges' ends depend on at its extremes
 * (min, min+1, max-1, max) and next to every constant the gate compares with, ranges inside their (evaluated) ends.
 * A point where the gate holds and the index is outside [0, size) is reported, with the point. Indices that read
 * memory (a load), too many free symbols or an unknown size (-1) are left alone: they cannot be proven in bounds
 * either, and the runtime must contain them (guard pages). This is the reference's validate_index question (is an
 * out-of-bounds value reachable under the gate) answered by search instead of a solver, so it never refuses a
 * kernel that is in bounds. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "compiler/kernel_valid.h"

enum { MAX_SYMS = 12, MAX_CAND = 12, MAX_NODES = 512, MAX_POINTS = 1 << 16, MAX_CONSTS = 16 };

typedef struct sym {
  const uop *n;         /* RANGE or DEFINE_VAR */
  char name[32];        /* the name uop_sym_infer looks up: ridxID or the variable's */
} sym;

typedef struct search {
  const uop *idx, *gate;
  int64_t size;
  sym syms[MAX_SYMS];
  int nsyms;
  int64_t consts[MAX_CONSTS]; /* constants the gate compares with */
  int nconsts;
  const uop *seen[MAX_NODES];
  int nseen;
  bool give_up;
  uop_var_val vals[MAX_SYMS];
  long points;
  bool found;
  int64_t witness_idx;
  int64_t witness[MAX_SYMS];
} search;

/* Post-order walk collecting the free symbols (a range after the symbols of its end). */
static void collect(search *s, const uop *n, bool in_gate) {
  if (s->give_up) return;
  for (int i = 0; i < s->nseen; i++)
    if (s->seen[i] == n) return;
  if (s->nseen == MAX_NODES || n->op == UOP_LOAD || n->op == UOP_SPECIAL) {
    s->give_up = true;
    return;
  }
  s->seen[s->nseen++] = n;
  if (in_gate && (n->op == UOP_CMPLT || n->op == UOP_CMPNE || n->op == UOP_CMPEQ))
    for (int k = 0; k < 2; k++) {
      int64_t c;
      if (uop_const_value(n->src[k], &c) && s->nconsts < MAX_CONSTS) s->consts[s->nconsts++] = c;
    }
  for (uint32_t i = 0; i < n->nsrc; i++) collect(s, n->src[i], in_gate);
  if (n->op != UOP_RANGE && n->op != UOP_DEFINE_VAR) return;
  if (s->nsyms == MAX_SYMS) {
    s->give_up = true;
    return;
  }
  sym *y = &s->syms[s->nsyms];
  y->n = n;
  if (n->op == UOP_RANGE) snprintf(y->name, sizeof y->name, "ridx%" PRId64, n->arg.i);
  else snprintf(y->name, sizeof y->name, "%s", n->arg.str);
  for (int i = 0; i < s->nsyms; i++) /* two symbols under one name: uop_sym_infer cannot tell them apart */
    if (strcmp(s->syms[i].name, y->name) == 0) s->give_up = true;
  s->vals[s->nsyms].name = y->name;
  s->nsyms++;
}

static bool eval(search *s, const uop *e, int k, int64_t *out) {
  hcq_status st = uop_sym_infer(e, s->vals, (size_t)k, out);
  if (!st) return true;
  hcq_status_free(st);
  return false;
}

static void add_cand(int64_t *c, int *n, int64_t v, int64_t lo, int64_t hi) {
  if (v < lo || v > hi || *n == MAX_CAND) return;
  for (int i = 0; i < *n; i++)
    if (c[i] == v) return;
  c[(*n)++] = v;
}

/* Assign symbols k.. in turn; at a full point test the gate and the index. */
static void assign(search *s, int k) {
  if (s->found || s->points >= MAX_POINTS) return;
  if (k == s->nsyms) {
    s->points++;
    int64_t g = 1, v;
    if (s->gate && (!eval(s, s->gate, k, &g) || !g)) return;
    if (!eval(s, s->idx, k, &v) || (v >= 0 && v < s->size)) return;
    s->found = true;
    s->witness_idx = v;
    for (int i = 0; i < k; i++) s->witness[i] = s->vals[i].value;
    return;
  }
  const uop *n = s->syms[k].n;
  int64_t lo, hi;
  if (n->op == UOP_DEFINE_VAR) {
    lo = n->arg.i;
    hi = n->arg.i2;
  } else {
    int64_t end;
    if (!eval(s, n->src[0], k, &end) || end <= 0) return; /* an empty loop runs nothing */
    lo = 0;
    hi = end - 1;
  }
  if (lo > hi) return;
  int64_t c[MAX_CAND];
  int nc = 0;
  add_cand(c, &nc, lo, lo, hi);
  add_cand(c, &nc, hi, lo, hi);
  if (lo < hi) add_cand(c, &nc, lo + 1, lo, hi);
  if (lo < hi) add_cand(c, &nc, hi - 1, lo, hi);
  for (int i = 0; i < s->nconsts; i++)
    for (int d = -1; d <= 1; d++)
      if (!__builtin_add_overflow(s->consts[i], d, &(int64_t){0})) add_cand(c, &nc, s->consts[i] + d, lo, hi);
  for (int i = 0; i < nc && !s->found; i++) {
    s->vals[k].value = c[i];
    assign(s, k + 1);
  }
}

/* Whether some reachable point of `access` (a LOAD or STORE of (index BUF IDX [GATE])) is out of bounds; if so a
 * description of the point in msg. */
static bool provably_oob(const uop *access, char *msg, size_t cap) {
  const uop *index = access->src[0], *buf = index->src[0];
  int64_t size = buf->dtype.size;
  if (size < 0 || index->nsrc < 2) return false;
  const uop *idx = index->src[1];
  if (idx->dtype.scalar == UOP_UINT64) return false; /* its vmin/vmax are bit patterns */
  if (uop_vmin(idx) >= 0 && uop_vmax(idx) < size) return false; /* sound bounds: in bounds */
  static _Thread_local search s; /* ~8 KiB; not on the parser's stack */
  memset(&s, 0, sizeof s);
  s.idx = idx;
  s.gate = index->nsrc > 2 ? index->src[2] : NULL;
  s.size = size;
  collect(&s, idx, false);
  if (s.gate) collect(&s, s.gate, true);
  if (access->op == UOP_STORE) /* the loops a store closes must run for it to run */
    for (uint32_t i = 2; i < access->nsrc; i++) collect(&s, access->src[i], false);
  if (s.give_up) return false;
  assign(&s, 0);
  if (!s.found) return false;
  size_t len = (size_t)snprintf(msg, cap, "index %" PRId64 " (at", s.witness_idx);
  for (int i = 0; i < s.nsyms && len < cap; i++) {
    const uop *n = s.syms[i].n;
    if (n->op == UOP_RANGE)
      len += (size_t)snprintf(msg + len, cap - len, "%s r%" PRId64 "=%" PRId64, i ? "," : "", n->arg.i, s.witness[i]);
    else
      len += (size_t)snprintf(msg + len, cap - len, "%s %s=%" PRId64, i ? "," : "", n->arg.str, s.witness[i]);
  }
  if (len < cap) snprintf(msg + len, cap - len, "%s)", s.nsyms ? "" : " every point");
  return true;
}

hcq_status kv_check_values(const uop *const *order, size_t n, kv_describe_fn describe, void *user) {
  char d1[200], d2[200], w[300];
  for (size_t i = 0; i < n; i++) {
    const uop *u = order[i];
    if ((u->op == UOP_IDIV || u->op == UOP_MOD) && u->nsrc == 2) {
      const uop *a = u->src[0], *b = u->src[1];
      if (uop_vmin(b) == 0 && uop_vmax(b) == 0)
        return hcq_status_make(HCQ_CODE_INVALID, "%s: integer division by zero: the divisor is always 0 (it traps "
                               "at run time)", describe(user, u, d1, sizeof d1));
      /* INT_MIN / -1 overflows (x86 traps); index is exempt: its INT64_MIN means unbounded */
      uop_dtype dt = a->dtype;
      if (dt.scalar != UOP_INDEX && !uop_dt_is_unsigned(dt) && uop_vmin(b) == -1 && uop_vmax(b) == -1 &&
          uop_vmin(a) == uop_dt_min(dt) && uop_vmax(a) == uop_dt_min(dt))
        return hcq_status_make(HCQ_CODE_INVALID, "%s: integer division overflows: %" PRId64 " by -1 does not fit %s "
                               "(it traps at run time)", describe(user, u, d1, sizeof d1), uop_dt_min(dt),
                               uop_dt_name(dt));
    }
    if ((u->op == UOP_LOAD || u->op == UOP_STORE) && u->nsrc >= 1 && u->src[0]->op == UOP_INDEX_OP &&
        u->src[0]->src[0]->op == UOP_DEFINE_GLOBAL && provably_oob(u, w, sizeof w)) {
      const uop *idx = u->src[0]->src[1], *buf = u->src[0]->src[0];
      return hcq_status_make(HCQ_CODE_INVALID, "%s: out-of-bounds %s: %s is outside %s (slot %" PRId64 ", %" PRId64
                             " element%s, valid indices 0..%" PRId64 "); the index ranges over [%" PRId64 ", %" PRId64
                             "]%s", describe(user, u, d1, sizeof d1), u->op == UOP_LOAD ? "load" : "store", w,
                             describe(user, buf, d2, sizeof d2), buf->arg.i, buf->dtype.size,
                             buf->dtype.size == 1 ? "" : "s", buf->dtype.size - 1,
                             uop_vmin(idx), uop_vmax(idx), u->src[0]->nsrc > 2 ? " where its gate holds" : "");
    }
  }
  return HCQ_OK;
}
