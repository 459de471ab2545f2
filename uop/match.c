/* Pattern matcher: compiles the pattern language of match.h into small trees, dispatches by op, matches with all
 * bindings (commutative permutations, repeated names) and calls the rule function per binding. */
#include "uop/match.h"
#include "uop/uop_internal.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PNODES 64
#define MAX_KIDS 128
#define MAX_COMM_SRCS 4

enum { PK_ANY, PK_INT, PK_NODE };

typedef struct pnode {
  uint8_t kind;
  uint8_t has_src, any_len, star, comm;
  uint8_t arg_kind; /* 0 none, 1 integer, 2 name */
  int8_t cap;       /* capture index or -1 */
  uint16_t nchild;
  uop_opset ops;
  uint32_t dtypes;  /* bit per uop_scalar; 0 = any */
  int64_t value;    /* PK_INT literal or integer ARG */
  int64_t arg_op;   /* name ARG that is an op name: its enum value, else -1 */
  const char *arg_name;
  struct pnode **child;
} pnode;

typedef struct crule {
  char *pattern, *name;
  uop_rule_fn fn;
  pnode *root;
  uop_opset early; /* ops required among the node's direct sources */
  bool direct;      /* root-only pattern (its sources, if listed, are all '_'): no search, call fn right away */
  bool quick;       /* fixed source list, not '**': pre-check the root and its sources' heads before the search */
  int ncap;
  char *names[UOP_MAX_CAPTURES];
  pnode pool[MAX_PNODES];
  pnode *kids[MAX_KIDS];
  int npool, nkids;
  char namebuf[256]; /* capture names and ARG names */
  int nnamebuf;
} crule;

struct uop_pm {
  uop_pm_memo_slot_fn memo_slot; /* non-NULL: results may be cached per context (uop_pm_set_memo) */
  crule **rules;
  size_t count;
  uint32_t *lists[UOP_OP_COUNT];
  uint32_t nlist[UOP_OP_COUNT];
};

/* ------------------------------------------------------------------------------------------------ compiler */

typedef struct parser {
  const char *s;
  size_t pos;
  size_t rule_index;
  crule *r;
  hcq_status err;
} parser;

static hcq_status perr(parser *p, const char *msg, const char *detail) {
  if (!p->err)
    p->err = hcq_status_make(HCQ_CODE_PARSE, "pattern rule %zu \"%s\": column %zu: %s%s%s", p->rule_index, p->s,
                             p->pos + 1, msg, detail ? ": " : "", detail ? detail : "");
  return p->err;
}

static void skip_ws(parser *p) {
  while (p->s[p->pos] && isspace((unsigned char)p->s[p->pos])) p->pos++;
}

static bool is_delim(char c) { return c == 0 || isspace((unsigned char)c) || c == '(' || c == ')'; }

static pnode *new_pnode(parser *p) {
  if (p->r->npool >= MAX_PNODES) {
    perr(p, "pattern too large", NULL);
    return NULL;
  }
  pnode *n = &p->r->pool[p->r->npool++];
  memset(n, 0, sizeof *n);
  n->cap = -1;
  n->arg_op = -1;
  return n;
}

static const char *save_name(parser *p, const char *s, size_t len) {
  crule *r = p->r;
  if (r->nnamebuf + (int)len + 1 > (int)sizeof r->namebuf) {
    perr(p, "too many names", NULL);
    return NULL;
  }
  char *d = r->namebuf + r->nnamebuf;
  memcpy(d, s, len);
  d[len] = 0;
  r->nnamebuf += (int)len + 1;
  return d;
}

/* Capture index of a name, adding it on first appearance. */
static int capture(parser *p, const char *s, size_t len) {
  crule *r = p->r;
  for (int i = 0; i < r->ncap; i++)
    if (strlen(r->names[i]) == len && memcmp(r->names[i], s, len) == 0) return i;
  if (r->ncap >= UOP_MAX_CAPTURES) {
    perr(p, "too many capture names", NULL);
    return -1;
  }
  const char *d = save_name(p, s, len);
  if (!d) return -1;
  r->names[r->ncap] = (char *)d;
  return r->ncap++;
}

static size_t ident_len(const char *s, bool upper) {
  size_t n = 0;
  while (s[n] && (upper ? (isupper((unsigned char)s[n]) || isdigit((unsigned char)s[n]) || s[n] == '_')
                        : (islower((unsigned char)s[n]) || isdigit((unsigned char)s[n]) || s[n] == '_')))
    n++;
  return n;
}

static uint32_t sbit(uop_scalar s) { return (uint32_t)1 << s; }

static bool dtype_class(const char *s, size_t len, uint32_t *out) {
  uint32_t sints = sbit(UOP_INT8) | sbit(UOP_INT16) | sbit(UOP_INT32) | sbit(UOP_INT64);
  uint32_t uints = sbit(UOP_UINT8) | sbit(UOP_UINT16) | sbit(UOP_UINT32) | sbit(UOP_UINT64);
  uint32_t floats = sbit(UOP_FLOAT16) | sbit(UOP_BFLOAT16) | sbit(UOP_FLOAT32) | sbit(UOP_FLOAT64);
  struct { const char *name; uint32_t set; } classes[] = {
      {"ints", sints | uints},
      {"sints", sints},
      {"uints", uints},
      {"floats", floats},
      {"intlike", sints | uints | sbit(UOP_INDEX) | sbit(UOP_BOOL)},
      {"all_ints", sints | uints | sbit(UOP_INDEX)},
  };
  for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
    if (strlen(classes[i].name) == len && memcmp(classes[i].name, s, len) == 0) {
      *out = classes[i].set;
      return true;
    }
  }
  uop_dtype dt;
  if (uop_dt_from_name(s, len, &dt)) {
    *out = sbit((uop_scalar)dt.scalar);
    return true;
  }
  return false;
}

static bool parse_dtypes(parser *p, uint32_t *out) {
  *out = 0;
  for (;;) {
    size_t len = ident_len(p->s + p->pos, false);
    uint32_t set;
    if (!len || !dtype_class(p->s + p->pos, len, &set)) {
      char name[32];
      snprintf(name, sizeof name, "%.*s", (int)(len ? len : 1), p->s + p->pos);
      perr(p, "unknown dtype", name);
      return false;
    }
    *out |= set;
    p->pos += len;
    if (p->s[p->pos] != '|') return true;
    p->pos++;
  }
}

static pnode *parse_pat(parser *p);

static bool parse_int(parser *p, int64_t *out) {
  const char *start = p->s + p->pos;
  char *end;
  errno = 0;
  long long v = strtoll(start, &end, 10);
  if (end == start || errno || !is_delim(*end)) {
    perr(p, "bad integer", NULL);
    return false;
  }
  *out = v;
  p->pos += (size_t)(end - start);
  return true;
}

static pnode *parse_node(parser *p) {
  pnode *n = new_pnode(p);
  if (!n) return NULL;
  n->kind = PK_NODE;
  /* OPS */
  if (p->s[p->pos] == '*') {
    n->ops = ~(uop_opset)0;
    p->pos++;
  } else {
    for (;;) {
      size_t len = ident_len(p->s + p->pos, true);
      uop_op op;
      if (!len) {
        perr(p, "expected an op name (upper case) or '*'", NULL);
        return NULL;
      }
      if (!uop_op_from_name(p->s + p->pos, len, &op)) {
        char name[40];
        snprintf(name, sizeof name, "%.*s", (int)len, p->s + p->pos);
        perr(p, "unknown op", name);
        return NULL;
      }
      n->ops |= UOP_OPBIT(op);
      p->pos += len;
      if (p->s[p->pos] != '|') break;
      p->pos++;
    }
  }
  /* modifiers */
  while (!is_delim(p->s[p->pos])) {
    char c = p->s[p->pos++];
    if (c == ':') {
      if (!parse_dtypes(p, &n->dtypes)) return NULL;
    } else if (c == '@') {
      size_t len = ident_len(p->s + p->pos, false);
      if (!len || !islower((unsigned char)p->s[p->pos])) {
        perr(p, "expected a capture name after '@'", NULL);
        return NULL;
      }
      if ((n->cap = (int8_t)capture(p, p->s + p->pos, len)) < 0) return NULL;
      p->pos += len;
    } else if (c == '~') {
      n->comm = 1;
    } else if (c == '=') {
      char d = p->s[p->pos];
      if (d == '-' || isdigit((unsigned char)d)) {
        n->arg_kind = 1;
        const char *start = p->s + p->pos;
        char *end;
        errno = 0;
        n->value = strtoll(start, &end, 10);
        if (end == start || errno) {
          perr(p, "bad integer ARG", NULL);
          return NULL;
        }
        p->pos += (size_t)(end - start);
      } else {
        size_t len = 0;
        while (isalnum((unsigned char)p->s[p->pos + len]) || p->s[p->pos + len] == '_') len++;
        if (!len) {
          perr(p, "expected an ARG (integer or name) after '='", NULL);
          return NULL;
        }
        n->arg_kind = 2;
        if (!(n->arg_name = save_name(p, p->s + p->pos, len))) return NULL;
        uop_op op;
        if (uop_op_from_name(p->s + p->pos, len, &op)) n->arg_op = op;
        p->pos += len;
      }
    } else {
      p->pos--;
      char what[2] = {c, 0};
      perr(p, "unexpected character in pattern head", what);
      return NULL;
    }
  }
  /* sources */
  pnode *kids[MAX_PNODES];
  int nk = 0;
  for (;;) {
    skip_ws(p);
    char c = p->s[p->pos];
    if (c == ')') {
      p->pos++;
      break;
    }
    if (!c) {
      perr(p, "missing ')'", NULL);
      return NULL;
    }
    if (strncmp(p->s + p->pos, "...", 3) == 0 && is_delim(p->s[p->pos + 3])) {
      p->pos += 3;
      n->any_len = n->has_src = 1;
      skip_ws(p);
      if (p->s[p->pos] != ')') {
        perr(p, "'...' must be the last source", NULL);
        return NULL;
      }
      continue;
    }
    if (strncmp(p->s + p->pos, "**", 2) == 0 && is_delim(p->s[p->pos + 2])) {
      if (nk) {
        perr(p, "'**' must be the only source", NULL);
        return NULL;
      }
      p->pos += 2;
      n->star = 1;
      skip_ws(p);
      pnode *k = parse_pat(p);
      if (!k) return NULL;
      kids[nk++] = k;
      skip_ws(p);
      if (p->s[p->pos] != ')') {
        perr(p, "'**' takes exactly one pattern", NULL);
        return NULL;
      }
      continue;
    }
    if (n->star) {
      perr(p, "'**' must be the only source", NULL);
      return NULL;
    }
    if (nk >= MAX_PNODES) {
      perr(p, "too many sources", NULL);
      return NULL;
    }
    pnode *k = parse_pat(p);
    if (!k) return NULL;
    kids[nk++] = k;
  }
  if (nk) n->has_src = 1;
  if (n->comm && (n->any_len || n->star)) {
    perr(p, "'~' cannot be combined with '...' or '**'", NULL);
    return NULL;
  }
  if (n->comm && nk > MAX_COMM_SRCS) {
    perr(p, "'~' supports at most 4 sources", NULL);
    return NULL;
  }
  if (p->r->nkids + nk > MAX_KIDS) {
    perr(p, "pattern too large", NULL);
    return NULL;
  }
  n->child = &p->r->kids[p->r->nkids];
  memcpy(n->child, kids, nk * sizeof *kids);
  p->r->nkids += nk;
  n->nchild = (uint16_t)nk;
  return n;
}

static pnode *parse_pat(parser *p) {
  skip_ws(p);
  const char *s = p->s + p->pos;
  if (*s == '(') {
    p->pos++;
    return parse_node(p);
  }
  if (*s == '#') { /* #c or #c:DTYPES = (CONST[:DTYPES]@c) */
    p->pos++;
    size_t len = ident_len(p->s + p->pos, false);
    if (!len || !islower((unsigned char)p->s[p->pos])) {
      perr(p, "expected a capture name after '#'", NULL);
      return NULL;
    }
    pnode *n = new_pnode(p);
    if (!n) return NULL;
    n->kind = PK_NODE;
    n->ops = UOP_OPBIT(UOP_CONST);
    if ((n->cap = (int8_t)capture(p, p->s + p->pos, len)) < 0) return NULL;
    p->pos += len;
    if (p->s[p->pos] == ':') {
      p->pos++;
      if (!parse_dtypes(p, &n->dtypes)) return NULL;
    }
    if (!is_delim(p->s[p->pos])) {
      perr(p, "unexpected character after constant shorthand", NULL);
      return NULL;
    }
    return n;
  }
  if (*s == '-' || isdigit((unsigned char)*s)) {
    pnode *n = new_pnode(p);
    if (!n) return NULL;
    n->kind = PK_INT;
    if (!parse_int(p, &n->value)) return NULL;
    return n;
  }
  if (islower((unsigned char)*s) || *s == '_') {
    size_t len = ident_len(s, false);
    if (!is_delim(s[len])) {
      p->pos += len;
      perr(p, "unexpected character after name", NULL);
      return NULL;
    }
    pnode *n = new_pnode(p);
    if (!n) return NULL;
    n->kind = PK_ANY;
    if (!(len == 1 && *s == '_') && (n->cap = (int8_t)capture(p, s, len)) < 0) return NULL;
    p->pos += len;
    return n;
  }
  if (!*s) {
    perr(p, "unexpected end of pattern", NULL);
    return NULL;
  }
  char what[2] = {*s, 0};
  perr(p, "unexpected character", what);
  return NULL;
}

static int popcount64(uint64_t x) { return __builtin_popcountll(x); }

static hcq_status compile_rule(const uop_rule *rule, size_t index, crule **out) {
  *out = NULL;
  if (!rule->pattern) return hcq_status_make(HCQ_CODE_INVALID, "pattern rule %zu: NULL pattern", index);
  if (!rule->fn)
    return hcq_status_make(HCQ_CODE_INVALID, "pattern rule %zu \"%s\": NULL function", index, rule->pattern);
  crule *r = calloc(1, sizeof *r);
  if (!r) return hcq_status_make(HCQ_CODE_NOMEM, "pattern rule %zu: out of memory", index);
  r->pattern = strdup(rule->pattern);
  r->name = rule->name ? strdup(rule->name) : NULL;
  r->fn = rule->fn;
  if (!r->pattern || (rule->name && !r->name)) {
    free(r->pattern);
    free(r->name);
    free(r);
    return hcq_status_make(HCQ_CODE_NOMEM, "pattern rule %zu: out of memory", index);
  }
  parser p = {.s = r->pattern, .rule_index = index, .r = r};
  r->root = parse_pat(&p);
  if (r->root) {
    skip_ws(&p);
    if (p.s[p.pos]) perr(&p, "trailing text after the pattern", NULL);
  }
  if (p.err) {
    free(r->pattern);
    free(r->name);
    free(r);
    return p.err;
  }
  pnode *root = r->root;
  if (root->kind == PK_NODE && !root->star) {
    r->direct = true;
    for (int i = 0; i < root->nchild; i++)
      if (root->child[i]->kind != PK_ANY || root->child[i]->cap >= 0) r->direct = false;
  }
  r->quick = root->kind == PK_NODE && root->has_src && !root->star && !root->any_len &&
             (!root->comm || root->nchild == 2);
  if (root->kind == PK_NODE && root->has_src && !root->star) {
    for (int i = 0; i < root->nchild; i++) {
      const pnode *k = root->child[i];
      if (k->kind == PK_INT) r->early |= UOP_OPBIT(UOP_CONST);
      if (k->kind == PK_NODE && popcount64(k->ops) == 1) r->early |= k->ops;
    }
  }
  *out = r;
  return HCQ_OK;
}

static void free_rule(crule *r) {
  if (!r) return;
  free(r->pattern);
  free(r->name);
  free(r);
}

void uop_pm_destroy(uop_pm *pm) {
  if (!pm) return;
  for (size_t i = 0; i < pm->count; i++) free_rule(pm->rules[i]);
  free(pm->rules);
  for (int op = 0; op < UOP_OP_COUNT; op++) free(pm->lists[op]);
  free(pm);
}

static uop_opset root_ops(const crule *r) {
  if (r->root->kind == PK_INT) return UOP_OPBIT(UOP_CONST);
  if (r->root->kind == PK_ANY) return ~(uop_opset)0;
  return r->root->ops;
}

static hcq_status build_lists(uop_pm *pm) {
  for (int op = 0; op < UOP_OP_COUNT; op++) {
    uint32_t cnt = 0;
    for (size_t i = 0; i < pm->count; i++) cnt += (root_ops(pm->rules[i]) & UOP_OPBIT(op)) != 0;
    if (!cnt) continue;
    pm->lists[op] = malloc(cnt * sizeof(uint32_t));
    if (!pm->lists[op]) return hcq_status_make(HCQ_CODE_NOMEM, "uop_pm: out of memory");
    for (size_t i = 0; i < pm->count; i++)
      if (root_ops(pm->rules[i]) & UOP_OPBIT(op)) pm->lists[op][pm->nlist[op]++] = (uint32_t)i;
  }
  return HCQ_OK;
}

hcq_status uop_pm_create(const uop_rule *rules, size_t count, uop_pm **out_pm) {
  *out_pm = NULL;
  if (count > UINT32_MAX / 2) return hcq_status_make(HCQ_CODE_INVALID, "uop_pm_create: too many rules");
  uop_pm *pm = calloc(1, sizeof *pm);
  if (!pm || !(pm->rules = calloc(count ? count : 1, sizeof *pm->rules))) {
    free(pm);
    return hcq_status_make(HCQ_CODE_NOMEM, "uop_pm_create: out of memory");
  }
  hcq_status st;
  for (size_t i = 0; i < count; i++) {
    if ((st = compile_rule(&rules[i], i, &pm->rules[i]))) goto fail;
    pm->count = i + 1;
  }
  if ((st = build_lists(pm))) goto fail;
  *out_pm = pm;
  return HCQ_OK;
fail:
  uop_pm_destroy(pm);
  return st;
}

hcq_status uop_pm_concat(const uop_pm *a, const uop_pm *b, uop_pm **out_pm) {
  *out_pm = NULL;
  size_t n = a->count + b->count;
  uop_rule *rules = malloc((n ? n : 1) * sizeof *rules);
  if (!rules) return hcq_status_make(HCQ_CODE_NOMEM, "uop_pm_concat: out of memory");
  for (size_t i = 0; i < n; i++) {
    const crule *r = i < a->count ? a->rules[i] : b->rules[i - a->count];
    rules[i] = (uop_rule){r->pattern, r->fn, r->name};
  }
  hcq_status st = uop_pm_create(rules, n, out_pm);
  free(rules);
  return st;
}

/* ------------------------------------------------------------------------------------------------ matching */

typedef struct goal {
  const pnode *p; /* NULL = commit marker (used by '**') */
  const uop *n;
  const struct goal *next;
} goal;

typedef struct mctx {
  const crule *r;
  uop_rewrite_ctx *rc;
  const uop *root;
  uop_bindings *b;
} mctx;

static const char commit_token;
#define COMMIT ((const uop *)(const void *)&commit_token)

static bool arg_ok(const pnode *p, const uop *n) {
  const uop_arg *a = &n->arg;
  if (p->arg_kind == 1) {
    if (a->kind == UOP_ARG_INT || a->kind == UOP_ARG_RANGE) return a->i == p->value;
    if (a->kind == UOP_ARG_FLOAT) return a->f == (double)p->value;
    return false;
  }
  if (a->kind == UOP_ARG_STR || a->kind == UOP_ARG_VAR) return a->str && strcmp(a->str, p->arg_name) == 0;
  if (a->kind == UOP_ARG_INT) return p->arg_op >= 0 && a->i == p->arg_op;
  return false;
}

static inline __attribute__((always_inline)) bool local_ok(const pnode *p, const uop *n) {
  switch (p->kind) {
  case PK_ANY: return true;
  case PK_INT:
    if (n->op != UOP_CONST) return false;
    if (n->arg.kind == UOP_ARG_INT) return n->arg.i == p->value;
    if (n->arg.kind == UOP_ARG_FLOAT) return n->arg.f == (double)p->value;
    return false;
  default:
    if (!(p->ops & UOP_OPBIT(n->op))) return false;
    if (p->dtypes && !(p->dtypes & sbit((uop_scalar)n->dtype.scalar))) return false;
    if (p->arg_kind && !arg_ok(p, n)) return false;
    return true;
  }
}

static bool next_perm(uint8_t *a, int k) {
  int i = k - 2;
  while (i >= 0 && a[i] >= a[i + 1]) i--;
  if (i < 0) return false;
  int j = k - 1;
  while (a[j] <= a[i]) j--;
  uint8_t t = a[i];
  a[i] = a[j];
  a[j] = t;
  for (int l = i + 1, r = k - 1; l < r; l++, r--) {
    t = a[l];
    a[l] = a[r];
    a[r] = t;
  }
  return true;
}

static const uop *solve(mctx *m, const goal *g);

static const uop *solve_star(mctx *m, const goal *g) {
  /* Every source must match the one child pattern: take the first binding per source and commit to it. */
  static const goal commit_goal = {NULL, NULL, NULL};
  uop_bindings *b = m->b;
  uint32_t before = 0;
  for (int i = 0; i < b->count; i++) before |= b->nodes[i] ? 1u << i : 0;
  const uop *res = NULL;
  for (uint32_t i = 0; i < g->n->nsrc; i++) {
    goal gi = {g->p->child[0], g->n->src[i], &commit_goal};
    if (solve(m, &gi) != COMMIT) goto unbind;
  }
  res = solve(m, g->next);
  if (res == COMMIT) return res;
unbind:
  for (int i = 0; i < b->count; i++)
    if (!(before & (1u << i))) b->nodes[i] = NULL;
  return res;
}

static const uop *solve(mctx *m, const goal *g) {
  if (!g) {
    const uop *r = m->r->fn(m->rc, m->root, m->b);
    return (r && r != m->root) ? r : NULL;
  }
  if (!g->p) return COMMIT;
  const pnode *p = g->p;
  const uop *n = g->n;
  if (!local_ok(p, n)) return NULL;
  bool bound_here = false;
  if (p->cap >= 0) {
    const uop *have = m->b->nodes[p->cap];
    if (have && have != n) return NULL;
    if (!have) {
      m->b->nodes[p->cap] = n;
      bound_here = true;
    }
  }
  const uop *res = NULL;
  if (p->kind != PK_NODE || !p->has_src) {
    res = solve(m, g->next);
  } else if (p->star) {
    res = solve_star(m, g);
  } else {
    int k = p->nchild;
    if (n->nsrc < (uint32_t)k || (!p->any_len && n->nsrc != (uint32_t)k)) goto out;
    if (k == 0) {
      res = solve(m, g->next);
      goto out;
    }
    goal goals[k];
    uint8_t perm[MAX_COMM_SRCS] = {0, 1, 2, 3};
    do {
      for (int j = 0; j < k; j++)
        goals[j] = (goal){p->child[j], n->src[p->comm ? perm[j] : j], j + 1 < k ? &goals[j + 1] : g->next};
      res = solve(m, &goals[0]);
    } while (!res && p->comm && next_perm(perm, k));
  }
out:
  if (bound_here && res != COMMIT) m->b->nodes[p->cap] = NULL;
  return res;
}

/* Necessary conditions for a pattern with a fixed source list: the root's head and count, and each source's head
 * (in either order for a commutative pair). Cheap, and it rejects most rules before the full search. */
static bool quick_ok(const pnode *p, const uop *n) {
  if (n->nsrc != p->nchild || !local_ok(p, n)) return false;
  if (p->comm) {
    const pnode *a = p->child[0], *b = p->child[1];
    return (local_ok(a, n->src[0]) && local_ok(b, n->src[1])) || (local_ok(a, n->src[1]) && local_ok(b, n->src[0]));
  }
  for (uint32_t j = 0; j < n->nsrc; j++)
    if (!local_ok(p->child[j], n->src[j])) return false;
  return true;
}

const uop *uop_pm_rewrite(const uop_pm *pm, uop_rewrite_ctx *rc, const uop *node) {
  if (!pm || !node || node->op >= UOP_OP_COUNT) return NULL;
  uint32_t cnt = pm->nlist[node->op];
  if (!cnt) return NULL;
  const uint32_t *list = pm->lists[node->op];
  uop_opset srcops = 0;
  for (uint32_t i = 0; i < node->nsrc; i++) srcops |= UOP_OPBIT(node->src[i]->op);
  uop_bindings b;
  for (uint32_t k = 0; k < cnt; k++) {
    const crule *r = pm->rules[list[k]];
    if (r->early & ~srcops) continue;
    if (r->direct) {
      /* the whole pattern is the root's head and source count: one check, one binding, the callback */
      const pnode *p = r->root;
      if (!local_ok(p, node)) continue;
      if (p->has_src && (node->nsrc < p->nchild || (!p->any_len && node->nsrc != p->nchild))) continue;
      b.count = r->ncap;
      if (r->ncap) {
        b.names[0] = r->names[0];
        b.nodes[0] = node;
      }
      const uop *res = r->fn(rc, node, &b);
      if (res && res != node) return res;
      continue;
    }
    if (r->quick && !quick_ok(r->root, node)) continue;
    b.count = r->ncap;
    for (int i = 0; i < r->ncap; i++) {
      b.names[i] = r->names[i];
      b.nodes[i] = NULL;
    }
    mctx m = {r, rc, node, &b};
    goal g = {r->root, node, NULL};
    const uop *res = solve(&m, &g);
    if (res && res != COMMIT) return res;
  }
  return NULL;
}

void uop_pm_set_memo(uop_pm *pm, uop_pm_memo_slot_fn slot_fn) {
  if (pm) pm->memo_slot = slot_fn;
}

int uop_pm_memo_slot(const uop_pm *pm) { return pm && pm->memo_slot ? pm->memo_slot() : -1; }

const uop *uop_b(const uop_bindings *b, const char *name) {
  for (int i = 0; i < b->count; i++)
    if (strcmp(b->names[i], name) == 0) return b->nodes[i];
  assert(!"uop_b: capture name not in the rule's pattern");
  return NULL;
}
