/* The launch-size evaluator (grammar in hcq/program.h), in two steps: hcq_expr_compile parses the text once
 * (recursive descent) into postfix code over variable indices; hcq_expr_run evaluates that code with no text work,
 * so a launcher compiles at load and only runs per launch. hcq_expr_eval is the two in a row. Wrapping 64-bit
 * arithmetic, floor division for / and //, C remainder for %, so that it matches the infix the compiler renders
 * (uop_render). Freestanding: no allocation, no stdio. */
#include <string.h>

#include "hcq/program.h"

enum { OP_CONST, OP_VAR, OP_NEG, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_MAX, OP_MIN };

typedef struct expr_parser {
  const char *s;
  const char *const *names;
  size_t n;
  hcq_expr_code *code;
  hcq_status err;
  int depth;
} expr_parser;

static void skip_ws(expr_parser *e) {
  while (*e->s == ' ') e->s++;
}

static void fail(expr_parser *e, const char *what) {
  if (!e->err) e->err = hcq_status_make(HCQ_CODE_INVALID, "launch expression: %s at '%.20s'", what, e->s);
}

static void emit(expr_parser *e, uint8_t op, int64_t arg) {
  hcq_expr_code *c = e->code;
  if (c->n == HCQ_EXPR_CODE_MAX) return fail(e, "more than " HCQ_EXPR_CODE_MAX_TEXT " operations");
  c->op[c->n] = op;
  c->arg[c->n++] = arg;
}

static void parse_sum(expr_parser *e);

static bool ident_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

static void parse_name(expr_parser *e) {
  const char *start = e->s;
  while (ident_char(*e->s)) e->s++;
  size_t n = (size_t)(e->s - start);
  skip_ws(e);
  bool is_max = n == 3 && memcmp(start, "max", 3) == 0, is_min = n == 3 && memcmp(start, "min", 3) == 0;
  if ((is_max || is_min) && *e->s == '(') {
    e->s++;
    parse_sum(e);
    skip_ws(e);
    if (*e->s != ',') return fail(e, "expected ',' in max/min");
    e->s++;
    parse_sum(e);
    skip_ws(e);
    if (*e->s != ')') return fail(e, "expected ')' after max/min");
    e->s++;
    return emit(e, is_max ? OP_MAX : OP_MIN, 0);
  }
  for (size_t i = 0; i < e->n; i++)
    if (strlen(e->names[i]) == n && memcmp(e->names[i], start, n) == 0) return emit(e, OP_VAR, (int64_t)i);
  e->s = start;
  fail(e, "unknown variable");
}

static void parse_atom(expr_parser *e) {
  skip_ws(e);
  if (++e->depth > 64) return fail(e, "nested too deeply");
  char c = *e->s;
  if (c == '(') {
    e->s++;
    parse_sum(e);
    skip_ws(e);
    if (*e->s != ')') return fail(e, "expected ')'");
    e->s++;
  } else if (c == '-') {
    e->s++;
    parse_atom(e);
    emit(e, OP_NEG, 0);
  } else if (c >= '0' && c <= '9') {
    int n = 0;
    int64_t v = 0;
    while (*e->s >= '0' && *e->s <= '9') {
      if (++n > 18) return fail(e, "number too long");
      v = v * 10 + (*e->s++ - '0');
    }
    emit(e, OP_CONST, v);
  } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
    parse_name(e);
  } else {
    return fail(e, "unexpected character");
  }
  e->depth--;
}

static void parse_product(expr_parser *e) {
  parse_atom(e);
  while (!e->err) {
    skip_ws(e);
    char c = *e->s;
    if (c != '*' && c != '/' && c != '%') return;
    e->s += (c == '/' && e->s[1] == '/') ? 2 : 1;
    parse_atom(e);
    emit(e, c == '*' ? OP_MUL : c == '/' ? OP_DIV : OP_MOD, 0);
  }
}

static void parse_sum(expr_parser *e) {
  parse_product(e);
  while (!e->err) {
    skip_ws(e);
    char c = *e->s;
    if (c != '+' && c != '-') return;
    e->s++;
    parse_product(e);
    emit(e, c == '+' ? OP_ADD : OP_SUB, 0);
  }
}

hcq_status hcq_expr_compile(const char *expr, const char *const *names, size_t n, hcq_expr_code *out) {
  if (!expr || !out || (n && !names)) return hcq_status_make(HCQ_CODE_INVALID, "hcq_expr_compile: NULL argument");
  out->n = 0;
  out->nvars = (uint32_t)n;
  expr_parser e = {.s = expr, .names = names, .n = n, .code = out};
  parse_sum(&e);
  skip_ws(&e);
  if (!e.err && *e.s) fail(&e, "trailing text");
  if (e.err) out->n = 0;
  return e.err;
}

bool hcq_expr_is_const(const hcq_expr_code *c) {
  for (uint32_t i = 0; i < c->n; i++)
    if (c->op[i] == OP_VAR) return false;
  return true;
}

/* Wrapping arithmetic through uint64 (signed overflow is undefined in C). */
static int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

hcq_status hcq_expr_run(const hcq_expr_code *c, const int64_t *values, int64_t *out) {
  int64_t st[HCQ_EXPR_CODE_MAX];
  uint32_t sp = 0;
  for (uint32_t i = 0; i < c->n; i++) {
    int64_t r = sp ? st[sp - 1] : 0, *l = sp > 1 ? &st[sp - 2] : NULL;
    switch (c->op[i]) {
    case OP_CONST: st[sp++] = c->arg[i]; continue;
    case OP_VAR: st[sp++] = values[c->arg[i]]; continue;
    case OP_NEG: st[sp - 1] = wrap_sub(0, r); continue;
    default: break;
    }
    sp--; /* a binary operator: *l op= r */
    switch (c->op[i]) {
    case OP_ADD: *l = wrap_add(*l, r); break;
    case OP_SUB: *l = wrap_sub(*l, r); break;
    case OP_MUL: *l = wrap_mul(*l, r); break;
    case OP_MAX: *l = *l > r ? *l : r; break;
    case OP_MIN: *l = *l < r ? *l : r; break;
    default: /* OP_DIV, OP_MOD */
      if (r == 0) return hcq_status_make(HCQ_CODE_INVALID, "launch expression: division by zero");
      if (r == -1) *l = c->op[i] == OP_MOD ? 0 : wrap_sub(0, *l); /* INT64_MIN / -1 would trap */
      else if (c->op[i] == OP_MOD) *l %= r;
      else {
        int64_t q = *l / r; /* floor division (// of the reference) */
        *l = (q * r != *l && ((*l < 0) != (r < 0))) ? q - 1 : q;
      }
    }
  }
  *out = sp ? st[0] : 0;
  return HCQ_OK;
}

hcq_status hcq_expr_eval(const char *expr, const char *const *names, const int64_t *values, size_t n, int64_t *out) {
  if (!expr || !out || (n && (!names || !values))) return hcq_status_make(HCQ_CODE_INVALID, "hcq_expr_eval: NULL argument");
  hcq_expr_code c;
  HCQ_TRY(hcq_expr_compile(expr, names, n, &c));
  return hcq_expr_run(&c, values, out);
}
