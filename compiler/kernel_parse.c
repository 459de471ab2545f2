/* The kernel parser (grammar in kernel_text.h and docs/FORMATS.md).
 *
 * Two phases, neither recursive: (1) read the text into a flat array of s-expression items in pre-order (a list's
 * subtree is the contiguous range [i, end)); (2) for each top-level item in order, build its expression lists
 * post-order with an explicit stack, resolving atoms and let names as each list is built. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

#include "compiler/kernel_text_internal.h"
#include "compiler/kernel_valid.h"
#include "uop/text.h"

enum { SX_LIST, SX_ATOM, SX_STR };

typedef struct sx {
  uint8_t kind;
  int line, col;
  const char *s; /* atom text (strings: including the quotes) */
  size_t len;
  int32_t parent, pos, end, nchild, first, next;
  const uop *val; /* built expression */
} sx;

typedef struct kparser {
  uop_ctx *ctx;
  const char *file;
  sx *items;
  size_t n, cap;
  kt_map lets;  /* interned name -> node */
  kt_map where; /* node -> item index of its first spelling */
  kt_map names; /* node -> interned let name */
} kparser;

static hcq_status kerr(kparser *ps, hcq_code code, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static hcq_status kerr(kparser *ps, hcq_code code, int line, int col, const char *fmt, ...) {
  char msg[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return hcq_status_make(code, "%s:%d:%d: %s", ps->file, line, col, msg);
}

static const char *quote(const sx *t, char *buf, size_t cap) {
  if (t->kind == SX_LIST) return "a list";
  return uop_text_quote(t->s, t->len, buf, cap);
}
#define Q(t) quote((t), (char[64]){0}, 64)

static bool atom_is(const sx *t, const char *w) {
  return t->kind == SX_ATOM && t->len == strlen(w) && memcmp(t->s, w, t->len) == 0;
}

/* ------------------------------------------------------------------------------------------------ phase 1 */

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

static hcq_status add_item(kparser *ps, sx it, int32_t *out) {
  if (ps->n == ps->cap) {
    size_t cap = ps->cap ? ps->cap * 2 : 256;
    if (cap > (size_t)INT32_MAX) return kerr(ps, HCQ_CODE_NOMEM, it.line, it.col, "input has too many items");
    sx *p = realloc(ps->items, cap * sizeof *p);
    if (!p) return kerr(ps, HCQ_CODE_NOMEM, it.line, it.col, "out of memory reading the input");
    ps->items = p;
    ps->cap = cap;
  }
  *out = (int32_t)ps->n;
  ps->items[ps->n++] = it;
  return HCQ_OK;
}

static hcq_status read_items(kparser *ps, const char *text, size_t len) {
  const char *p = text, *end = text + len, *line_start = text;
  int line = 1;
  int32_t open = -1, last_child = -1; /* innermost open list; the last child added to it */
  int32_t *lasts = NULL;              /* last child of each open list, by depth */
  size_t depth = 0, lcap = 0;
  hcq_status st = HCQ_OK;
  int32_t top = -1;
  for (;;) {
    while (p < end && (is_space(*p) || *p == ';')) {
      if (*p == ';') {
        while (p < end && *p != '\n') p++;
        continue;
      }
      if (*p == '\n') {
        line++;
        line_start = p + 1;
      }
      p++;
    }
    int col = (int)(p - line_start) + 1;
    if (p >= end) {
      if (open >= 0) st = kerr(ps, HCQ_CODE_PARSE, line, col, "expected ')' to close the list opened at %d:%d, got "
                               "end of input", ps->items[open].line, ps->items[open].col);
      else if (top < 0) st = kerr(ps, HCQ_CODE_PARSE, line, col, "expected (kernel ...), got end of input");
      break;
    }
    if (*p == ')') {
      if (open < 0) {
        st = kerr(ps, HCQ_CODE_PARSE, line, col, "unexpected ')'");
        break;
      }
      ps->items[open].end = (int32_t)ps->n;
      int32_t closed = open;
      open = ps->items[closed].parent;
      depth--;
      last_child = depth ? lasts[depth - 1] : -1; /* == closed when it has a parent */
      p++;
      continue;
    }
    if (open < 0 && top >= 0) {
      st = kerr(ps, HCQ_CODE_PARSE, line, col, "expected end of input after the kernel form");
      break;
    }
    sx it = {.line = line, .col = col, .s = p, .parent = open, .first = -1, .next = -1};
    if (*p == '(') {
      it.kind = SX_LIST;
      p++;
    } else if (*p == '"') {
      it.kind = SX_STR;
      p++;
      while (p < end && *p != '"' && *p != '\n') p += (*p == '\\' && p + 1 < end) ? 2 : 1;
      if (p >= end || *p != '"') {
        st = kerr(ps, HCQ_CODE_PARSE, line, col, "unterminated string");
        break;
      }
      p++;
    } else {
      it.kind = SX_ATOM;
      while (p < end && !is_space(*p) && *p != '(' && *p != ')' && *p != ';' && *p != '"') p++;
    }
    it.len = (size_t)(p - it.s);
    int32_t idx = -1;
    if ((st = add_item(ps, it, &idx))) break;
    sx *t = &ps->items[idx];
    t->end = idx + 1;
    if (open >= 0) {
      sx *o = &ps->items[open];
      t->pos = o->nchild++;
      if (last_child >= 0) ps->items[last_child].next = idx;
      else o->first = idx;
      lasts[depth - 1] = idx;
      last_child = idx;
    } else {
      top = idx;
    }
    if (t->kind == SX_LIST) {
      if (depth == lcap) {
        size_t c = lcap ? lcap * 2 : 64;
        int32_t *l = realloc(lasts, c * sizeof *l);
        if (!l) {
          st = kerr(ps, HCQ_CODE_NOMEM, line, col, "out of memory at nesting depth %zu", depth);
          break;
        }
        lasts = l;
        lcap = c;
      }
      lasts[depth++] = -1;
      open = idx;
      last_child = -1;
    } else if (open < 0) {
      st = kerr(ps, HCQ_CODE_PARSE, line, col, "expected (kernel ...), got %s", Q(t));
      break;
    }
  }
  free(lasts);
  return st;
}

/* ------------------------------------------------------------------------------------------------ atoms */

static const sx *child(const kparser *ps, const sx *list, int k) {
  int32_t i = list->first;
  while (i >= 0 && k-- > 0) i = ps->items[i].next;
  return i >= 0 ? &ps->items[i] : NULL;
}

static bool tok_int(const sx *t, int64_t lo, int64_t hi, int64_t *out) {
  if (t->kind != SX_ATOM) return false;
  size_t i = 0;
  bool neg = t->len > 0 && t->s[0] == '-';
  if (neg) i++;
  if (i >= t->len) return false;
  uint64_t m = 0;
  for (; i < t->len; i++) {
    if (!isdigit((unsigned char)t->s[i])) return false;
    unsigned d = (unsigned)(t->s[i] - '0');
    if (m > (UINT64_MAX - d) / 10) return false;
    m = m * 10 + d;
  }
  if (neg ? m > (uint64_t)INT64_MAX + 1 : m > (uint64_t)INT64_MAX) return false;
  int64_t v = neg ? (int64_t)(0 - m) : (int64_t)m;
  if (v < lo || v > hi) return false;
  *out = v;
  return true;
}

/* A float value token: decimal, inf, -inf, nan. */
static bool tok_float(const sx *t, double *out) {
  if (t->kind != SX_ATOM) return false;
  if (atom_is(t, "inf") || atom_is(t, "+inf")) *out = INFINITY;
  else if (atom_is(t, "-inf")) *out = -INFINITY;
  else if (atom_is(t, "nan")) *out = NAN;
  else if (uop_text_is_decimal(t->s, t->len) && t->len < 400) {
    char tmp[400];
    memcpy(tmp, t->s, t->len);
    tmp[t->len] = 0;
    *out = strtod(tmp, NULL);
  } else {
    return false;
  }
  return true;
}

static hcq_status oom(kparser *ps, const sx *t) {
  hcq_status st = uop_ctx_status(ps->ctx);
  if (!st) st = hcq_status_make(HCQ_CODE_NOMEM, "out of memory");
  return hcq_status_annotate(st, "%s:%d:%d", ps->file, t->line, t->col);
}

/* Name or quoted string -> interned string. */
static hcq_status tok_name(kparser *ps, const sx *t, bool allow_string, const char **out) {
  if (t->kind == SX_ATOM && kt_is_identifier(t->s, t->len)) {
    *out = uop_intern_str(ps->ctx, t->s, t->len);
    return *out ? HCQ_OK : oom(ps, t);
  }
  if (t->kind != SX_STR || !allow_string)
    return kerr(ps, HCQ_CODE_PARSE, t->line, t->col, "expected name (letters, digits, _)%s, got %s",
                allow_string ? " or \"string\"" : "", Q(t));
  char *buf = malloc(t->len);
  if (!buf) return oom(ps, t);
  size_t o = 0;
  for (size_t i = 1; i + 1 < t->len; i++) {
    char c = t->s[i];
    if (c == '\\') {
      char e = t->s[++i];
      if (e == 'x' && i + 2 < t->len && isxdigit((unsigned char)t->s[i + 1]) && isxdigit((unsigned char)t->s[i + 2])) {
        char hex[3] = {t->s[i + 1], t->s[i + 2], 0};
        c = (char)strtol(hex, NULL, 16);
        i += 2;
      } else if (e == 'n') c = '\n';
      else if (e == 't') c = '\t';
      else c = e;
      if (c == 0) {
        free(buf);
        return kerr(ps, HCQ_CODE_PARSE, t->line, t->col, "strings cannot contain NUL");
      }
    }
    buf[o++] = c;
  }
  *out = uop_intern_str(ps->ctx, buf, o);
  free(buf);
  return *out ? HCQ_OK : oom(ps, t);
}

static hcq_status atom_expr(kparser *ps, const sx *t, const uop **out) {
  int64_t v;
  double d;
  if (t->kind == SX_STR) return kerr(ps, HCQ_CODE_PARSE, t->line, t->col, "expected expression, got a string");
  if (atom_is(t, "true") || atom_is(t, "false")) {
    *out = uop_const_bool(ps->ctx, atom_is(t, "true"));
  } else if (tok_int(t, INT64_MIN, INT64_MAX, &v)) {
    *out = uop_index_const(ps->ctx, v);
  } else if (uop_text_is_decimal(t->s, t->len) && tok_float(t, &d)) {
    if (fabs(d) > uop_text_float_max(UOP_FLOAT32))
      return kerr(ps, HCQ_CODE_PARSE, t->line, t->col, "float32 constant %s out of range", Q(t));
    *out = uop_const_float(ps->ctx, uop_dt(UOP_FLOAT32), d);
  } else if (kt_is_identifier(t->s, t->len) && !kt_is_reserved(t->s, t->len)) {
    const char *name = uop_intern_str(ps->ctx, t->s, t->len);
    if (!name) return oom(ps, t);
    intptr_t *slot = kt_map_find(&ps->lets, name);
    if (!slot) return kerr(ps, HCQ_CODE_PARSE, t->line, t->col, "unknown name %s (not bound by an earlier let)", Q(t));
    *out = (const uop *)*slot;
    return HCQ_OK;
  } else {
    if (isdigit((unsigned char)t->s[0]) || t->s[0] == '-')
      return kerr(ps, HCQ_CODE_PARSE, t->line, t->col, "bad number %s (integers are index, decimals float32; "
                  "write (const V DT) for other dtypes)", Q(t));
    return kerr(ps, HCQ_CODE_PARSE, t->line, t->col, "expected expression (INT, DECIMAL, true, false, a let name or "
                "'('), got %s", Q(t));
  }
  return *out ? HCQ_OK : oom(ps, t);
}

static hcq_status operand(kparser *ps, const sx *list, int k, const uop **out) {
  const sx *c = child(ps, list, k);
  if (!c) return kerr(ps, HCQ_CODE_PARSE, list->line, list->col, "missing operand %d", k);
  if (c->kind == SX_LIST) {
    *out = c->val;
    return HCQ_OK;
  }
  return atom_expr(ps, c, out);
}

static hcq_status dtype_atom(kparser *ps, const sx *t, uop_dtype *out) {
  if (!t) return hcq_status_make(HCQ_CODE_PARSE, "missing dtype");
  if (t->kind != SX_ATOM || !cc_dtype_parse(t->s, t->len, out))
    return kerr(ps, HCQ_CODE_PARSE, t->line, t->col, "unknown dtype %s (expected e.g. float32, int32x4, index, "
                "ptr.global.float32[4096])", Q(t));
  return HCQ_OK;
}

static hcq_status int_atom(kparser *ps, const sx *t, int64_t lo, int64_t hi, const char *what, int64_t *out) {
  if (tok_int(t, lo, hi, out)) return HCQ_OK;
  return kerr(ps, HCQ_CODE_PARSE, t->line, t->col, "expected %s (integer in %" PRId64 "..%" PRId64 "), got %s", what,
              lo, hi, Q(t));
}

static hcq_status axis_atom(kparser *ps, const sx *t, uop_axis *out) {
  for (int a = 0; a < UOP_AXIS_COUNT; a++) {
    if (atom_is(t, uop_axis_name((uop_axis)a))) {
      *out = (uop_axis)a;
      return HCQ_OK;
    }
  }
  return kerr(ps, HCQ_CODE_PARSE, t->line, t->col, "unknown axis %s (expected global warp local loop group_reduce "
              "reduce upcast unroll thread)", Q(t));
}

/* ------------------------------------------------------------------------------------------------ forms */

/* Range of an integer dtype for const/var values (uint64 as unsigned, returned via umax). */
static void dt_int_range(uop_scalar s, int64_t *lo, uint64_t *umax) {
  switch (s) {
  case UOP_BOOL: *lo = 0, *umax = 1; break;
  case UOP_INT8: *lo = INT8_MIN, *umax = INT8_MAX; break;
  case UOP_UINT8: *lo = 0, *umax = UINT8_MAX; break;
  case UOP_INT16: *lo = INT16_MIN, *umax = INT16_MAX; break;
  case UOP_UINT16: *lo = 0, *umax = UINT16_MAX; break;
  case UOP_INT32: *lo = INT32_MIN, *umax = INT32_MAX; break;
  case UOP_UINT32: *lo = 0, *umax = UINT32_MAX; break;
  case UOP_UINT64: *lo = 0, *umax = UINT64_MAX; break;
  default: *lo = INT64_MIN, *umax = INT64_MAX; break;
  }
}

/* An integer token that must fit scalar s; uint64 values above INT64_MAX come back as their bit pattern. */
static hcq_status int_in_dt(kparser *ps, const sx *t, uop_scalar s, int64_t *out) {
  int64_t lo;
  uint64_t umax;
  dt_int_range(s, &lo, &umax);
  if (s == UOP_UINT64 && t->kind == SX_ATOM && t->len > 0 && t->s[0] != '-') {
    uint64_t m = 0;
    bool ok = true;
    for (size_t i = 0; i < t->len && ok; i++) {
      unsigned d = (unsigned)(t->s[i] - '0');
      if (d > 9 || m > (UINT64_MAX - d) / 10) ok = false;
      else m = m * 10 + d;
    }
    if (ok) {
      *out = (int64_t)m;
      return HCQ_OK;
    }
  }
  int64_t v;
  if (tok_int(t, lo, umax > INT64_MAX ? INT64_MAX : (int64_t)umax, &v)) {
    *out = v;
    return HCQ_OK;
  }
  return kerr(ps, HCQ_CODE_PARSE, t->line, t->col, "expected a %s value, got %s", uop_text_dt_name(s), Q(t));
}

static hcq_status build_const(kparser *ps, const sx *l, const uop **out) {
  if (l->nchild != 3) return kerr(ps, HCQ_CODE_PARSE, l->line, l->col, "const takes a value and a dtype: (const V DT)");
  const sx *v = child(ps, l, 1), *d = child(ps, l, 2);
  uop_dtype dt;
  HCQ_TRY(dtype_atom(ps, d, &dt));
  uop_scalar s = (uop_scalar)dt.scalar;
  if (dt.count != 1 || dt.addrspace != UOP_AS_NONE || s == UOP_VOID)
    return kerr(ps, HCQ_CODE_PARSE, d->line, d->col, "const needs a scalar dtype (use the generic op form for vector "
                "constants), got %s", Q(d));
  if (s == UOP_BOOL) {
    if (atom_is(v, "true") || atom_is(v, "1")) *out = uop_const_bool(ps->ctx, true);
    else if (atom_is(v, "false") || atom_is(v, "0")) *out = uop_const_bool(ps->ctx, false);
    else return kerr(ps, HCQ_CODE_PARSE, v->line, v->col, "expected bool value (true, false, 0 or 1), got %s", Q(v));
  } else if (uop_dt_is_float(dt)) {
    double f;
    if (!tok_float(v, &f))
      return kerr(ps, HCQ_CODE_PARSE, v->line, v->col, "expected float value (decimal, inf, -inf or nan), got %s", Q(v));
    if (isfinite(f) && fabs(f) > uop_text_float_max(s))
      return kerr(ps, HCQ_CODE_PARSE, v->line, v->col, "float constant %s out of range for %s", Q(v), Q(d));
    *out = uop_const_float(ps->ctx, dt, f);
  } else {
    int64_t iv;
    HCQ_TRY(int_in_dt(ps, v, s, &iv));
    *out = uop_const_int(ps->ctx, dt, iv);
  }
  return *out ? HCQ_OK : oom(ps, l);
}

static hcq_status build_var(kparser *ps, const sx *l, const uop **out) {
  if (l->nchild != 5)
    return kerr(ps, HCQ_CODE_PARSE, l->line, l->col, "var takes a name, min, max and dtype: (var NAME MIN MAX DT)");
  const char *name;
  HCQ_TRY(tok_name(ps, child(ps, l, 1), false, &name));
  uop_dtype dt;
  const sx *d = child(ps, l, 4);
  HCQ_TRY(dtype_atom(ps, d, &dt));
  if (dt.count != 1 || dt.addrspace != UOP_AS_NONE || !uop_dt_is_int(dt))
    return kerr(ps, HCQ_CODE_PARSE, d->line, d->col, "var dtype must be an integer type or index, got %s", Q(d));
  int64_t lo, hi;
  HCQ_TRY(int_in_dt(ps, child(ps, l, 2), (uop_scalar)dt.scalar, &lo));
  HCQ_TRY(int_in_dt(ps, child(ps, l, 3), (uop_scalar)dt.scalar, &hi));
  if (uop_dt_is_unsigned(dt) ? (uint64_t)lo > (uint64_t)hi : lo > hi)
    return kerr(ps, HCQ_CODE_PARSE, l->line, l->col, "var min is greater than max");
  *out = uop_var(ps->ctx, name, lo, hi, dt);
  return *out ? HCQ_OK : oom(ps, l);
}

/* (op NAME DT ARG SRC...) */
static hcq_status parse_arg(kparser *ps, const sx *a, uop_arg *out) {
  int64_t v;
  if (atom_is(a, "_")) {
    *out = uop_arg_none();
    return HCQ_OK;
  }
  if (tok_int(a, INT64_MIN, INT64_MAX, &v)) {
    *out = uop_arg_int(v);
    return HCQ_OK;
  }
  const sx *h = a->kind == SX_LIST ? child(ps, a, 0) : NULL;
  if (!h || h->kind != SX_ATOM)
    return kerr(ps, HCQ_CODE_PARSE, a->line, a->col, "expected arg (_, INT, (f V), (s NAME), (v NAME MIN MAX), (r ID "
                "AXIS) or (ints ...)), got %s", Q(a));
  int n = a->nchild;
  if (atom_is(h, "f") && n == 2) {
    double f;
    const sx *t = child(ps, a, 1);
    if (!tok_float(t, &f)) return kerr(ps, HCQ_CODE_PARSE, t->line, t->col, "expected float value, got %s", Q(t));
    *out = uop_arg_float(f);
    return HCQ_OK;
  }
  if (atom_is(h, "s") && n == 2) {
    *out = (uop_arg){.kind = UOP_ARG_STR};
    return tok_name(ps, child(ps, a, 1), true, &out->str);
  }
  if (atom_is(h, "v") && n == 4) {
    *out = (uop_arg){.kind = UOP_ARG_VAR};
    HCQ_TRY(tok_name(ps, child(ps, a, 1), true, &out->str));
    HCQ_TRY(int_atom(ps, child(ps, a, 2), INT64_MIN, INT64_MAX, "var min", &out->i));
    return int_atom(ps, child(ps, a, 3), INT64_MIN, INT64_MAX, "var max", &out->i2);
  }
  if (atom_is(h, "r") && n == 3) {
    int64_t id;
    uop_axis ax;
    HCQ_TRY(int_atom(ps, child(ps, a, 1), INT64_MIN, INT64_MAX, "range id", &id));
    HCQ_TRY(axis_atom(ps, child(ps, a, 2), &ax));
    *out = uop_arg_range(id, ax);
    return HCQ_OK;
  }
  if (atom_is(h, "ints")) {
    int64_t *v = malloc((size_t)(n > 1 ? n - 1 : 1) * sizeof *v);
    if (!v) return oom(ps, a);
    hcq_status st = HCQ_OK;
    for (int i = 1; i < n && !st; i++) st = int_atom(ps, child(ps, a, i), INT64_MIN, INT64_MAX, "int", &v[i - 1]);
    if (!st) *out = uop_arg_ints(ps->ctx, v, (uint32_t)(n - 1));
    free(v);
    if (!st && !out->ints) st = oom(ps, a);
    return st;
  }
  return kerr(ps, HCQ_CODE_PARSE, a->line, a->col, "bad arg %s: expected (f V), (s NAME), (v NAME MIN MAX), (r ID AXIS) "
              "or (ints ...)", Q(h));
}

#define MAX_SRC_STACK 16

/* Collect operands k..nchild-1 of l into src (malloc'd when many). */
static hcq_status operands_from(kparser *ps, const sx *l, int k, const uop ***src, uint32_t *nsrc, const uop **small) {
  int n = l->nchild - k;
  if (n < 0) n = 0;
  const uop **s = n <= MAX_SRC_STACK ? small : malloc((size_t)n * sizeof *s);
  if (!s) return oom(ps, l);
  const sx *c = child(ps, l, k);
  for (int i = 0; i < n; i++, c = c->next >= 0 ? &ps->items[c->next] : NULL) {
    hcq_status st = c->kind == SX_LIST ? (s[i] = c->val, HCQ_OK) : atom_expr(ps, c, &s[i]);
    if (st) {
      if (s != small) free(s);
      return st;
    }
  }
  *src = s;
  *nsrc = (uint32_t)n;
  return HCQ_OK;
}

static hcq_status build_list(kparser *ps, const sx *l, const uop **out) {
  const sx *h = child(ps, l, 0);
  if (!h || h->kind != SX_ATOM) return kerr(ps, HCQ_CODE_PARSE, l->line, l->col, "expected operator after '('");
  if (atom_is(h, "const")) return build_const(ps, l, out);
  if (atom_is(h, "var")) return build_var(ps, l, out);
  if (atom_is(h, "let") || atom_is(h, "kernel"))
    return kerr(ps, HCQ_CODE_PARSE, h->line, h->col, "%s is only allowed at the top level of a kernel", Q(h));
  const uop *small[MAX_SRC_STACK], **src = NULL;
  uint32_t nsrc = 0;
  hcq_status st = HCQ_OK;
  uop_op op;
  uop_arg arg = uop_arg_none();
  uop_dtype dt = uop_dt(UOP_VOID), cast_dt = uop_dt(UOP_VOID);
  bool generic = false;
  if (atom_is(h, "buf")) {
    if (l->nchild != 4)
      return kerr(ps, HCQ_CODE_PARSE, l->line, l->col, "buf takes a slot, a dtype and a size: (buf SLOT DT SIZE)");
    int64_t slot, size;
    HCQ_TRY(int_atom(ps, child(ps, l, 1), 0, INT32_MAX, "buffer slot", &slot));
    HCQ_TRY(dtype_atom(ps, child(ps, l, 2), &dt));
    if (dt.addrspace != UOP_AS_NONE || dt.scalar == UOP_VOID)
      return kerr(ps, HCQ_CODE_PARSE, child(ps, l, 2)->line, child(ps, l, 2)->col, "buf element dtype must be a "
                  "value dtype, got %s", Q(child(ps, l, 2)));
    HCQ_TRY(int_atom(ps, child(ps, l, 3), -1, INT64_MAX / 2, "buffer size in elements (-1 = unknown)", &size));
    *out = uop_new(ps->ctx, UOP_DEFINE_GLOBAL, uop_dt_ptr(dt, UOP_AS_GLOBAL, size), NULL, 0, uop_arg_int(slot));
    return *out ? HCQ_OK : oom(ps, l);
  }
  if (atom_is(h, "range") || atom_is(h, "special")) {
    bool range = atom_is(h, "range");
    op = range ? UOP_RANGE : UOP_SPECIAL;
    if (range ? (l->nchild != 3 && l->nchild != 4) : l->nchild != 3)
      return kerr(ps, HCQ_CODE_PARSE, l->line, l->col, range ? "range takes an id, an end and an optional axis: "
                  "(range ID END [AXIS])" : "special takes a name and an end: (special NAME END)");
    if (range) {
      int64_t id;
      uop_axis ax = UOP_AXIS_LOOP;
      HCQ_TRY(int_atom(ps, child(ps, l, 1), 0, INT64_MAX, "range id", &id));
      if (l->nchild == 4) HCQ_TRY(axis_atom(ps, child(ps, l, 3), &ax));
      arg = uop_arg_range(id, ax);
    } else {
      arg = (uop_arg){.kind = UOP_ARG_STR};
      HCQ_TRY(tok_name(ps, child(ps, l, 1), false, &arg.str));
    }
    const uop *end;
    HCQ_TRY(operand(ps, l, 2, &end));
    src = small;
    src[0] = end;
    nsrc = 1;
  } else if (atom_is(h, "cast") || atom_is(h, "bitcast")) {
    op = atom_is(h, "cast") ? UOP_CAST : UOP_BITCAST;
    if (l->nchild != 3) return kerr(ps, HCQ_CODE_PARSE, l->line, l->col, "%s takes a dtype and an operand", Q(h));
    HCQ_TRY(dtype_atom(ps, child(ps, l, 1), &cast_dt));
    HCQ_TRY(operands_from(ps, l, 2, &src, &nsrc, small));
  } else if (atom_is(h, "reduce")) {
    op = UOP_REDUCE;
    const sx *r = child(ps, l, 1);
    if (!r) return kerr(ps, HCQ_CODE_PARSE, l->line, l->col, "reduce takes add|mul|max, a value and ranges");
    if (atom_is(r, "add")) arg = uop_arg_int(UOP_ADD);
    else if (atom_is(r, "mul")) arg = uop_arg_int(UOP_MUL);
    else if (atom_is(r, "max")) arg = uop_arg_int(UOP_MAX);
    else return kerr(ps, HCQ_CODE_PARSE, r->line, r->col, "expected reduce op add, mul or max, got %s", Q(r));
    HCQ_TRY(operands_from(ps, l, 2, &src, &nsrc, small));
  } else if (atom_is(h, "op")) {
    generic = true;
    if (l->nchild < 4)
      return kerr(ps, HCQ_CODE_PARSE, l->line, l->col, "op takes an op name, a dtype and an arg: (op NAME DT ARG SRC...)");
    const sx *n = child(ps, l, 1);
    if (n->kind != SX_ATOM || !uop_op_from_name(n->s, n->len, &op))
      return kerr(ps, HCQ_CODE_PARSE, n->line, n->col, "unknown op name %s (expected e.g. ADD, DEFINE_REG)", Q(n));
    HCQ_TRY(dtype_atom(ps, child(ps, l, 2), &dt));
    HCQ_TRY(parse_arg(ps, child(ps, l, 3), &arg));
    HCQ_TRY(operands_from(ps, l, 4, &src, &nsrc, small));
  } else {
    if (atom_is(h, "index")) op = UOP_INDEX_OP;
    else if (atom_is(h, "load")) op = UOP_LOAD;
    else if (atom_is(h, "store")) op = UOP_STORE;
    else if (atom_is(h, "sink")) op = UOP_SINK;
    else if (!kt_alu_from_word(h->s, h->len, &op))
      return kerr(ps, HCQ_CODE_PARSE, h->line, h->col, "unknown operator %s (expected a form such as buf index load "
                  "store range reduce sink const var cast where + * max exp2 ..., or op)", Q(h));
    HCQ_TRY(operands_from(ps, l, 1, &src, &nsrc, small));
  }
  if (!generic) {
    char msg[400];
    if (!kt_form_dtype(op, src, nsrc, cast_dt, &dt, msg, sizeof msg)) {
      st = kerr(ps, HCQ_CODE_PARSE, l->line, l->col, "(%.*s ...): %s", (int)h->len, h->s, msg);
      goto done;
    }
  }
  *out = uop_new(ps->ctx, op, dt, src, nsrc, arg);
  if (!*out) st = oom(ps, l);
done:
  if (src && src != small) free(src);
  return st;
}

/* Which operands of a list are expressions (so that the post-order pass builds them). */
static bool expr_slot(const kparser *ps, const sx *list, int pos) {
  const sx *h = child(ps, list, 0);
  if (pos == 0 || !h || h->kind != SX_ATOM) return false;
  if (atom_is(h, "const") || atom_is(h, "var") || atom_is(h, "buf")) return false;
  if (atom_is(h, "range") || atom_is(h, "special") || atom_is(h, "cast") || atom_is(h, "bitcast")) return pos == 2;
  if (atom_is(h, "reduce")) return pos >= 2;
  if (atom_is(h, "op")) return pos >= 4;
  return true;
}

/* Build the expression at item e (a list or an atom) post-order. */
static hcq_status build_expr(kparser *ps, int32_t e, const uop **out) {
  sx *root = &ps->items[e];
  if (root->kind != SX_LIST) return atom_expr(ps, root, out);
  int32_t *stack = malloc((size_t)(root->end - e) * sizeof *stack);
  if (!stack) return oom(ps, root);
  size_t sp = 0;
  hcq_status st = HCQ_OK;
  for (int32_t i = e; i <= root->end && !st; i++) {
    while (sp && (i == root->end || ps->items[stack[sp - 1]].end <= i) && !st) {
      int32_t j = stack[--sp];
      sx *l = &ps->items[j];
      st = build_list(ps, l, &l->val);
      if (!st) {
        intptr_t *w = kt_map_put(&ps->where, l->val, j);
        if (!w) st = oom(ps, l);
      }
    }
    if (i == root->end || st) break;
    sx *t = &ps->items[i];
    if (t->kind != SX_LIST) continue;
    if (i != e && !expr_slot(ps, &ps->items[t->parent], t->pos)) {
      i = t->end - 1; /* a non-expression list (an arg): its parent reads it */
      continue;
    }
    stack[sp++] = i;
  }
  free(stack);
  if (!st) *out = root->val;
  return st;
}

/* ------------------------------------------------------------------------------------------------ kernel */

static const char *describe(void *user, const uop *n, char *buf, size_t cap) {
  kparser *ps = user;
  intptr_t *w = kt_map_find(&ps->where, n), *name = kt_map_find(&ps->names, n);
  const char *op = uop_op_name((uop_op)n->op);
  if (w) {
    const sx *t = &ps->items[*w];
    if (name) snprintf(buf, cap, "%s:%d:%d: %s %s", ps->file, t->line, t->col, op, (const char *)*name);
    else snprintf(buf, cap, "%s:%d:%d: %s", ps->file, t->line, t->col, op);
  } else {
    snprintf(buf, cap, "%s: %s #%u", ps->file, op, n->id);
  }
  return buf;
}

static hcq_status parse_kernel(kparser *ps, const uop **out) {
  const sx *k = &ps->items[0];
  const sx *h = child(ps, k, 0);
  if (k->kind != SX_LIST || !h || !atom_is(h, "kernel"))
    return kerr(ps, HCQ_CODE_PARSE, k->line, k->col, "expected (kernel NAME ...)");
  if (k->nchild < 3) return kerr(ps, HCQ_CODE_PARSE, k->line, k->col, "kernel needs a name and a root expression");
  const sx *nm = child(ps, k, 1);
  const char *name = NULL;
  if (!atom_is(nm, "_")) HCQ_TRY(tok_name(ps, nm, true, &name));
  const uop *root = NULL;
  for (const sx *it = child(ps, k, 2); it; it = it->next >= 0 ? &ps->items[it->next] : NULL) {
    const sx *ih = it->kind == SX_LIST ? child(ps, it, 0) : NULL;
    if (ih && atom_is(ih, "let")) {
      if (it->next < 0) return kerr(ps, HCQ_CODE_PARSE, it->line, it->col, "the last item of a kernel must be its root "
                                    "expression, not a let");
      if (it->nchild != 3) return kerr(ps, HCQ_CODE_PARSE, it->line, it->col, "let takes a name and an expression: "
                                       "(let NAME EXPR)");
      const sx *ln = child(ps, it, 1);
      if (ln->kind != SX_ATOM || !kt_is_identifier(ln->s, ln->len) || kt_is_reserved(ln->s, ln->len))
        return kerr(ps, HCQ_CODE_PARSE, ln->line, ln->col, "expected let name (letters, digits, _), got %s", Q(ln));
      const char *lname = uop_intern_str(ps->ctx, ln->s, ln->len);
      if (!lname) return oom(ps, ln);
      if (kt_map_find(&ps->lets, lname))
        return kerr(ps, HCQ_CODE_PARSE, ln->line, ln->col, "duplicate let name %s", Q(ln));
      const uop *v;
      HCQ_TRY(build_expr(ps, (int32_t)(child(ps, it, 2) - ps->items), &v));
      intptr_t *slot = kt_map_put(&ps->lets, lname, (intptr_t)v);
      if (!slot) return oom(ps, it);
      if (!kt_map_find(&ps->names, v) && !kt_map_put(&ps->names, v, (intptr_t)lname)) return oom(ps, it);
      continue;
    }
    if (it->next >= 0) return kerr(ps, HCQ_CODE_PARSE, it->line, it->col, "expected (let NAME EXPR) before the root "
                                   "expression, got %s", ih ? Q(ih) : Q(it));
    HCQ_TRY(build_expr(ps, (int32_t)(it - ps->items), &root));
  }
  if (!root) return kerr(ps, HCQ_CODE_PARSE, k->line, k->col, "kernel has no root expression");
  if (name) {
    if (root->op != UOP_SINK)
      return kerr(ps, HCQ_CODE_PARSE, k->line, k->col, "a named kernel's root must be a sink, got %s (write "
                  "(kernel _ ROOT) for other roots)", uop_op_name((uop_op)root->op));
    if (root->arg.kind != UOP_ARG_NONE)
      return kerr(ps, HCQ_CODE_PARSE, k->line, k->col, "the root sink of a named kernel must not carry an arg");
    uop_arg a = {.kind = UOP_ARG_STR, .str = name};
    const uop *r = uop_new(ps->ctx, UOP_SINK, root->dtype, root->src, root->nsrc, a);
    if (!r) return oom(ps, k);
    intptr_t *w = kt_map_find(&ps->where, root);
    if (w && !kt_map_put(&ps->where, r, *w)) return oom(ps, k);
    root = r;
  }
  if (name && kv_is_canonical(root)) HCQ_TRY(kv_validate(root, describe, ps));
  *out = root;
  return HCQ_OK;
}

hcq_status cc_kernel_parse(uop_ctx *ctx, const char *text, size_t len, const char *filename_for_errors,
                           const uop **out_sink) {
  kparser ps = {.ctx = ctx, .file = filename_for_errors ? filename_for_errors : "<input>"};
  *out_sink = NULL;
  hcq_status st = read_items(&ps, text, len);
  if (!st) st = parse_kernel(&ps, out_sink);
  if (!st && (ps.lets.failed || ps.where.failed || ps.names.failed))
    st = hcq_status_make(HCQ_CODE_NOMEM, "%s: out of memory", ps.file);
  if (st) *out_sink = NULL;
  free(ps.items);
  kt_map_free(&ps.lets);
  kt_map_free(&ps.where);
  kt_map_free(&ps.names);
  return st;
}

hcq_status cc_kernel_parse_file(uop_ctx *ctx, const char *path, const uop **out_sink) {
  FILE *f = fopen(path, "rb");
  if (!f) return hcq_status_make(HCQ_CODE_NOT_FOUND, "open %s: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fileno(f), &sb) == 0 && (S_ISDIR(sb.st_mode) || S_ISSOCK(sb.st_mode))) {
    fclose(f);
    return hcq_status_make(HCQ_CODE_INVALID, "%s is a %s, not a kernel file", path,
                           S_ISDIR(sb.st_mode) ? "directory" : "socket");
  }
  const size_t max_B = (size_t)16 << 20; /* far above any kernel; an endless input (/dev/zero) stops here */
  char *data = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len > max_B) {
      free(data);
      fclose(f);
      return hcq_status_make(HCQ_CODE_INVALID, "%s: more than %zu bytes: not a kernel file", path, max_B);
    }
    if (len + 65536 > cap) {
      cap = cap ? cap * 2 : 65536;
      char *p = realloc(data, cap);
      if (!p) {
        free(data);
        fclose(f);
        return hcq_status_make(HCQ_CODE_NOMEM, "reading %s: out of memory", path);
      }
      data = p;
    }
    size_t n = fread(data + len, 1, cap - len, f);
    len += n;
    if (n == 0) break;
  }
  bool err = ferror(f);
  int err_no = errno;
  fclose(f);
  if (err) {
    free(data);
    return hcq_status_make(HCQ_CODE_IO, "read %s failed: %s", path, strerror(err_no));
  }
  hcq_status st = cc_kernel_parse(ctx, data, len, path, out_sink);
  free(data);
  return st;
}
