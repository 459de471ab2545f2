/* hcq_expr_eval: the launch-size evaluator (grammar in hcq/program.h). Recursive descent over the text; wrapping
 * 64-bit arithmetic, floor division for / and //, C remainder for %, so that it matches the infix the compiler
 * renders (uop_render). Freestanding: no allocation, no stdio. */
#include <string.h>

#include "hcq/program.h"

typedef struct expr_parser {
  const char *s;
  const char *const *names;
  const int64_t *vals;
  size_t n;
  hcq_status err;
  int depth;
} expr_parser;

static void skip_ws(expr_parser *e) {
  while (*e->s == ' ') e->s++;
}

static int64_t fail(expr_parser *e, const char *what) {
  if (!e->err) e->err = hcq_status_make(HCQ_CODE_INVALID, "launch expression: %s at '%.20s'", what, e->s);
  return 0;
}

static int64_t parse_sum(expr_parser *e);

static bool ident_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

static int64_t parse_name(expr_parser *e) {
  const char *start = e->s;
  while (ident_char(*e->s)) e->s++;
  size_t n = (size_t)(e->s - start);
  skip_ws(e);
  bool is_max = n == 3 && memcmp(start, "max", 3) == 0, is_min = n == 3 && memcmp(start, "min", 3) == 0;
  if ((is_max || is_min) && *e->s == '(') {
    e->s++;
    int64_t a = parse_sum(e);
    skip_ws(e);
    if (*e->s != ',') return fail(e, "expected ',' in max/min");
    e->s++;
    int64_t b = parse_sum(e);
    skip_ws(e);
    if (*e->s != ')') return fail(e, "expected ')' after max/min");
    e->s++;
    return is_max ? (a > b ? a : b) : (a < b ? a : b);
  }
  for (size_t i = 0; i < e->n; i++)
    if (strlen(e->names[i]) == n && memcmp(e->names[i], start, n) == 0) return e->vals[i];
  e->s = start;
  return fail(e, "unknown variable");
}

static int64_t parse_atom(expr_parser *e) {
  skip_ws(e);
  if (++e->depth > 64) return fail(e, "nested too deeply");
  int64_t v = 0;
  char c = *e->s;
  if (c == '(') {
    e->s++;
    v = parse_sum(e);
    skip_ws(e);
    if (*e->s != ')') return fail(e, "expected ')'");
    e->s++;
  } else if (c == '-') {
    e->s++;
    v = (int64_t)(0 - (uint64_t)parse_atom(e));
  } else if (c >= '0' && c <= '9') {
    int n = 0;
    while (*e->s >= '0' && *e->s <= '9') {
      if (++n > 18) return fail(e, "number too long");
      v = v * 10 + (*e->s++ - '0');
    }
  } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
    v = parse_name(e);
  } else {
    return fail(e, "unexpected character");
  }
  e->depth--;
  return v;
}

static int64_t parse_product(expr_parser *e) {
  int64_t v = parse_atom(e);
  for (;;) {
    skip_ws(e);
    char c = *e->s;
    if (c != '*' && c != '/' && c != '%') return v;
    e->s += (c == '/' && e->s[1] == '/') ? 2 : 1;
    int64_t r = parse_atom(e);
    if (e->err) return 0;
    if (c == '*') v = (int64_t)((uint64_t)v * (uint64_t)r);
    else if (r == 0) return fail(e, "division by zero");
    else if (r == -1) v = c == '%' ? 0 : (int64_t)(0 - (uint64_t)v);
    else if (c == '/') {
      int64_t q = v / r; /* floor division (// of the reference) */
      v = (q * r != v && ((v < 0) != (r < 0))) ? q - 1 : q;
    } else {
      v = v % r;
    }
  }
}

static int64_t parse_sum(expr_parser *e) {
  int64_t v = parse_product(e);
  for (;;) {
    skip_ws(e);
    char c = *e->s;
    if (c != '+' && c != '-') return v;
    e->s++;
    int64_t r = parse_product(e);
    v = (int64_t)(c == '+' ? (uint64_t)v + (uint64_t)r : (uint64_t)v - (uint64_t)r);
  }
}

hcq_status hcq_expr_eval(const char *expr, const char *const *names, const int64_t *values, size_t n, int64_t *out) {
  if (!expr || !out || (n && (!names || !values))) return hcq_status_make(HCQ_CODE_INVALID, "hcq_expr_eval: NULL argument");
  expr_parser e = {.s = expr, .names = names, .vals = values, .n = n};
  int64_t v = parse_sum(&e);
  skip_ws(&e);
  if (!e.err && *e.s) fail(&e, "trailing text");
  if (e.err) return e.err;
  *out = v;
  return HCQ_OK;
}
