/* See macro_table.h. Generator-side code: built by autogen/gen/gen_amd.sh, not linked into libhcq. */
#include "autogen/gen/macro_table.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *mt_strndup(const char *s, size_t n) {
  char *p = malloc(n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

/* Remove C comments in place (a comment becomes one space; newlines inside block comments are kept). */
void mt_strip_comments(char *s) {
  char *w = s;
  for (char *r = s; *r;) {
    if (r[0] == '/' && r[1] == '*') {
      r += 2;
      while (*r && !(r[0] == '*' && r[1] == '/')) {
        if (*r == '\n') *w++ = '\n';
        r++;
      }
      if (*r) r += 2;
      *w++ = ' ';
    } else if (r[0] == '/' && r[1] == '/') {
      while (*r && *r != '\n') r++;
    } else {
      *w++ = *r++;
    }
  }
  *w = 0;
}

static hcq_status add_macro(mt_table *t, mt_macro m) {
  if (t->count == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 256;
    mt_macro *p = realloc(t->macros, cap * sizeof *p);
    if (!p) return hcq_status_make(HCQ_CODE_NOMEM, "%s: out of memory", t->path);
    t->macros = p;
    t->cap = cap;
  }
  t->macros[t->count++] = m;
  return HCQ_OK;
}

static void free_macro(mt_macro *m) {
  free(m->name);
  free(m->body);
  for (int i = 0; i < m->nparams; i++) free(m->params[i]);
}

/* One logical line "#define ..." (continuations already joined). Lines that are not #define are ignored. */
static hcq_status parse_define(mt_table *t, const char *s, int line) {
  while (isspace((unsigned char)*s)) s++;
  if (*s != '#') return HCQ_OK;
  s++;
  while (isspace((unsigned char)*s)) s++;
  if (strncmp(s, "define", 6) != 0 || !isspace((unsigned char)s[6])) return HCQ_OK;
  s += 6;
  while (isspace((unsigned char)*s)) s++;
  const char *n0 = s;
  while (isalnum((unsigned char)*s) || *s == '_') s++;
  if (s == n0) return hcq_status_make(HCQ_CODE_PARSE, "%s:%d: #define without a name", t->path, line);
  mt_macro m = {.nparams = -1, .line = line};
  m.name = mt_strndup(n0, (size_t)(s - n0));
  if (!m.name) return hcq_status_make(HCQ_CODE_NOMEM, "%s: out of memory", t->path);
  if (*s == '(') { /* function-like: no space between name and '(' */
    m.nparams = 0;
    s++;
    for (;;) {
      while (isspace((unsigned char)*s)) s++;
      if (*s == ')') { s++; break; }
      const char *p0 = s;
      while (isalnum((unsigned char)*s) || *s == '_') s++;
      if (s == p0 || m.nparams == 4) {
        free_macro(&m);
        return hcq_status_make(HCQ_CODE_PARSE, "%s:%d: unsupported parameter list of macro %.*s", t->path, line,
                               (int)(n0 ? strcspn(n0, "(") : 0), n0);
      }
      m.params[m.nparams++] = mt_strndup(p0, (size_t)(s - p0));
      while (isspace((unsigned char)*s)) s++;
      if (*s == ',') s++;
    }
  }
  while (isspace((unsigned char)*s)) s++;
  size_t len = strlen(s);
  while (len && isspace((unsigned char)s[len - 1])) len--;
  m.body = mt_strndup(s, len);
  if (!m.body) { free_macro(&m); return hcq_status_make(HCQ_CODE_NOMEM, "%s: out of memory", t->path); }
  hcq_status st = add_macro(t, m);
  if (st) free_macro(&m);
  return st;
}

hcq_status mt_load_text(const char *text, const char *label, mt_table *out) {
  memset(out, 0, sizeof *out);
  out->path = strdup(label);
  char *buf = strdup(text);
  if (!out->path || !buf) { free(buf); return hcq_status_make(HCQ_CODE_NOMEM, "%s: out of memory", label); }
  mt_strip_comments(buf);
  hcq_status st = HCQ_OK;
  int line = 1;
  char *p = buf;
  while (*p && !st) {
    /* Join backslash-continued lines into one logical line. */
    int start_line = line;
    char *w = p, *r = p;
    while (*r && *r != '\n') {
      if (r[0] == '\\' && r[1] == '\n') { r += 2; line++; *w++ = ' '; continue; }
      *w++ = *r++;
    }
    char *next = *r ? r + 1 : r;
    *w = 0;
    st = parse_define(out, p, start_line);
    line++;
    p = next;
  }
  free(buf);
  if (st) mt_free(out);
  return st;
}

hcq_status mt_load(const char *path, const char *label, mt_table *out) {
  FILE *f = fopen(path, "rb");
  if (!f) return hcq_status_make(HCQ_CODE_NOT_FOUND, "%s: cannot open %s", label, path);
  char *buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len + 65536 + 1 > cap) {
      cap = cap ? cap * 2 : 1 << 20;
      char *p = realloc(buf, cap);
      if (!p) { free(buf); fclose(f); return hcq_status_make(HCQ_CODE_NOMEM, "%s: out of memory", label); }
      buf = p;
    }
    size_t n = fread(buf + len, 1, 65536, f);
    len += n;
    if (n == 0) break;
  }
  fclose(f);
  buf[len] = 0;
  hcq_status st = mt_load_text(buf, label, out);
  free(buf);
  return st;
}

void mt_free(mt_table *t) {
  for (size_t i = 0; i < t->count; i++) free_macro(&t->macros[i]);
  free(t->macros);
  free(t->path);
  memset(t, 0, sizeof *t);
}

static int same_text(const char *a, const char *b) { /* equal ignoring whitespace */
  for (;;) {
    while (isspace((unsigned char)*a)) a++;
    while (isspace((unsigned char)*b)) b++;
    if (*a != *b) return 0;
    if (!*a) return 1;
    a++, b++;
  }
}

const mt_macro *mt_find(const mt_table *t, const char *name, hcq_status *err) {
  const mt_macro *first = NULL;
  for (size_t i = 0; i < t->count; i++) {
    const mt_macro *m = &t->macros[i];
    if (strcmp(m->name, name) != 0) continue;
    if (!first) { first = m; continue; }
    if (m->nparams != first->nparams || !same_text(m->body, first->body)) {
      if (err && !*err)
        *err = hcq_status_make(HCQ_CODE_INVALID, "%s:%d: %s is defined twice with different values (first at line %d)",
                               t->path, m->line, name, first->line);
      return NULL;
    }
  }
  return first;
}

/* ---- expression evaluator (recursive descent, C precedence for the supported operators) ---- */

typedef struct ev {
  const mt_table *t;
  const mt_macro *m; /* the macro whose body is evaluated */
  const uint64_t *args;
  const char *s;
  int depth;
  hcq_status err;
} ev;

static hcq_status ev_fail(ev *e, const char *what) {
  if (!e->err)
    e->err = hcq_status_make(HCQ_CODE_PARSE, "%s:%d: macro %s: %s near \"%.20s\"", e->t->path, e->m->line,
                             e->m->name, what, e->s);
  return e->err;
}

static void ev_ws(ev *e) { while (isspace((unsigned char)*e->s)) e->s++; }
static uint64_t ev_or(ev *e);

static uint64_t ev_primary(ev *e) {
  ev_ws(e);
  const char *s = e->s;
  if (*s == '(') {
    e->s++;
    uint64_t v = ev_or(e);
    ev_ws(e);
    if (*e->s != ')') { ev_fail(e, "expected )"); return 0; }
    e->s++;
    return v;
  }
  if (*s == '~') { e->s++; return ~ev_primary(e); }
  if (*s == '-') { e->s++; return (uint64_t)0 - ev_primary(e); }
  if (*s == '+') { e->s++; return ev_primary(e); }
  if (*s == '\'') { /* 'K' */
    if (s[1] && s[1] != '\\' && s[2] == '\'') { e->s += 3; return (unsigned char)s[1]; }
    ev_fail(e, "unsupported character literal");
    return 0;
  }
  if (isdigit((unsigned char)*s)) {
    char *end;
    uint64_t v = strtoull(s, &end, 0);
    while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L') end++;
    if (isalnum((unsigned char)*end) || *end == '_' || *end == '.') { ev_fail(e, "bad integer literal"); return 0; }
    e->s = end;
    return v;
  }
  if (isalpha((unsigned char)*s) || *s == '_') {
    const char *n0 = s;
    while (isalnum((unsigned char)*s) || *s == '_') s++;
    size_t n = (size_t)(s - n0);
    e->s = s;
    for (int i = 0; i < e->m->nparams; i++)
      if (strlen(e->m->params[i]) == n && !strncmp(e->m->params[i], n0, n)) return e->args[i];
    char name[256];
    if (n >= sizeof name) { ev_fail(e, "identifier too long"); return 0; }
    memcpy(name, n0, n);
    name[n] = 0;
    hcq_status err = HCQ_OK;
    const mt_macro *ref = mt_find(e->t, name, &err);
    if (err) { if (!e->err) e->err = err; else hcq_status_free(err); return 0; }
    if (!ref) { ev_fail(e, "unknown identifier"); return 0; }
    if (ref->nparams >= 0) { ev_fail(e, "call of a function-like macro is not supported"); return 0; }
    if (e->depth > 16) { ev_fail(e, "macro nesting too deep"); return 0; }
    ev sub = {.t = e->t, .m = ref, .args = NULL, .s = ref->body, .depth = e->depth + 1};
    uint64_t v = ev_or(&sub);
    ev_ws(&sub);
    if (!sub.err && *sub.s) ev_fail(&sub, "trailing text");
    if (sub.err) { if (!e->err) e->err = sub.err; else hcq_status_free(sub.err); return 0; }
    return v;
  }
  ev_fail(e, "unexpected token");
  return 0;
}

static uint64_t ev_mul(ev *e) {
  uint64_t v = ev_primary(e);
  for (;;) {
    ev_ws(e);
    if (*e->s == '*') { e->s++; v *= ev_primary(e); }
    else return v;
  }
}

static uint64_t ev_add(ev *e) {
  uint64_t v = ev_mul(e);
  for (;;) {
    ev_ws(e);
    if (*e->s == '+') { e->s++; v += ev_mul(e); }
    else if (*e->s == '-') { e->s++; v -= ev_mul(e); }
    else return v;
  }
}

static uint64_t ev_shift(ev *e) {
  uint64_t v = ev_add(e);
  for (;;) {
    ev_ws(e);
    int left = e->s[0] == '<' && e->s[1] == '<', right = e->s[0] == '>' && e->s[1] == '>';
    if (!left && !right) return v;
    e->s += 2;
    uint64_t n = ev_add(e);
    if (n >= 64) { ev_fail(e, "shift count out of range"); return 0; }
    v = left ? v << n : v >> n;
  }
}

static uint64_t ev_and(ev *e) {
  uint64_t v = ev_shift(e);
  for (;;) {
    ev_ws(e);
    if (e->s[0] == '&' && e->s[1] != '&') { e->s++; v &= ev_shift(e); }
    else return v;
  }
}

static uint64_t ev_xor(ev *e) {
  uint64_t v = ev_and(e);
  for (;;) {
    ev_ws(e);
    if (*e->s == '^') { e->s++; v ^= ev_and(e); }
    else return v;
  }
}

static uint64_t ev_or(ev *e) {
  uint64_t v = ev_xor(e);
  for (;;) {
    ev_ws(e);
    if (e->s[0] == '|' && e->s[1] != '|') { e->s++; v |= ev_xor(e); }
    else return v;
  }
}

hcq_status mt_eval_macro(const mt_table *t, const mt_macro *m, const uint64_t *args, int nargs, uint64_t *out) {
  int want = m->nparams < 0 ? 0 : m->nparams;
  if (nargs != want)
    return hcq_status_make(HCQ_CODE_INVALID, "%s:%d: macro %s takes %d argument(s), not %d", t->path, m->line,
                           m->name, want, nargs);
  if (!*m->body) return hcq_status_make(HCQ_CODE_INVALID, "%s:%d: macro %s has no value", t->path, m->line, m->name);
  ev e = {.t = t, .m = m, .args = args, .s = m->body};
  uint64_t v = ev_or(&e);
  ev_ws(&e);
  if (!e.err && *e.s) ev_fail(&e, "trailing text");
  if (e.err) return e.err;
  *out = v;
  return HCQ_OK;
}
