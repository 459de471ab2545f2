/* The expression parser (grammar in text.h). A shift-reduce loop over tokens with an explicit stack of open forms,
 * so nesting depth costs heap, never C stack. Each open form knows the kinds of its remaining slots, which is what
 * the "expected X" of an error names. */
#include <ctype.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uop/text.h"

/* ------------------------------------------------------------------------------------------------ tokens */

enum tok_kind { TOK_LP, TOK_RP, TOK_ATOM, TOK_EOF };

typedef struct tok {
  int kind;
  const char *s;
  size_t len;
  int line, col;
} tok;

typedef struct lexer {
  const char *p, *end, *line_start;
  int line;
} lexer;

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

static tok lex_next(lexer *lx) {
  for (;;) {
    while (lx->p < lx->end && is_space(*lx->p)) {
      if (*lx->p == '\n') {
        lx->line++;
        lx->line_start = lx->p + 1;
      }
      lx->p++;
    }
    if (lx->p < lx->end && *lx->p == ';') {
      while (lx->p < lx->end && *lx->p != '\n') lx->p++;
      continue;
    }
    break;
  }
  tok t = {.s = lx->p, .len = 0, .line = lx->line, .col = (int)(lx->p - lx->line_start) + 1};
  if (lx->p >= lx->end) {
    t.kind = TOK_EOF;
  } else if (*lx->p == '(' || *lx->p == ')') {
    t.kind = *lx->p == '(' ? TOK_LP : TOK_RP;
    t.len = 1;
    lx->p++;
  } else {
    t.kind = TOK_ATOM;
    while (lx->p < lx->end && !is_space(*lx->p) && *lx->p != '(' && *lx->p != ')' && *lx->p != ';') lx->p++;
    t.len = (size_t)(lx->p - t.s);
  }
  return t;
}

/* Quote a token for a message: 'text' (at most 40 bytes, non-printables as '?'), or a word for ( ) and the end. */
static const char *tok_desc(const tok *t, char *buf, size_t cap) {
  if (t->kind == TOK_EOF) return "end of input";
  if (t->kind == TOK_LP) return "'('";
  if (t->kind == TOK_RP) return "')'";
  return uop_text_quote(t->s, t->len, buf, cap);
}

static bool tok_is(const tok *t, const char *word) {
  return t->kind == TOK_ATOM && t->len == strlen(word) && memcmp(t->s, word, t->len) == 0;
}

/* ------------------------------------------------------------------------------------------------ numbers */

/* An optional '-' and decimal digits. Sets the sign and the magnitude; false if not an integer or the magnitude
 * exceeds 2^64-1 (*overflow tells which). */
static bool tok_integer(const tok *t, bool *neg, uint64_t *mag, bool *overflow) {
  *overflow = false;
  size_t i = 0;
  *neg = t->len > 0 && t->s[0] == '-';
  if (*neg) i++;
  if (i >= t->len) return false;
  uint64_t m = 0;
  for (; i < t->len; i++) {
    char c = t->s[i];
    if (c < '0' || c > '9') return false;
    unsigned d = (unsigned)(c - '0');
    if (m > (UINT64_MAX - d) / 10) *overflow = true;
    m = m * 10 + d;
  }
  *mag = m;
  return !*overflow;
}

static bool looks_numeric(const tok *t) {
  size_t i = (t->len > 0 && (t->s[0] == '-' || t->s[0] == '+')) ? 1 : 0;
  return i < t->len && (isdigit((unsigned char)t->s[i]) || t->s[i] == '.');
}

typedef struct int_range {
  int64_t min;
  uint64_t max; /* as unsigned so uint64 fits */
} int_range;

static int_range scalar_int_range(uop_scalar s) {
  switch (s) {
  case UOP_BOOL: return (int_range){0, 1};
  case UOP_INT8: return (int_range){INT8_MIN, INT8_MAX};
  case UOP_UINT8: return (int_range){0, UINT8_MAX};
  case UOP_INT16: return (int_range){INT16_MIN, INT16_MAX};
  case UOP_UINT16: return (int_range){0, UINT16_MAX};
  case UOP_INT32: return (int_range){INT32_MIN, INT32_MAX};
  case UOP_UINT32: return (int_range){0, UINT32_MAX};
  case UOP_UINT64: return (int_range){0, UINT64_MAX};
  default: return (int_range){INT64_MIN, INT64_MAX}; /* index, int64 */
  }
}

static bool scalar_is_int(uop_scalar s) { return s == UOP_INDEX || (s >= UOP_INT8 && s <= UOP_UINT64); }
static bool scalar_is_float(uop_scalar s) { return s >= UOP_FLOAT16 && s <= UOP_FLOAT64; }

/* ------------------------------------------------------------------------------------------------ forms */

typedef enum form_kind { F_ROOT, F_BIN, F_RECIP, F_TRUNC, F_WHERE, F_CAST, F_CONST, F_VAR, F_RANGE, F_SPECIAL } form_kind;

/* Slot kinds: e expression, d dtype, v value (checked once the dtype is known), n name, i integer. */
static const char *const form_slots[] = {
    [F_ROOT] = "e",    [F_BIN] = "ee",    [F_RECIP] = "e",     [F_TRUNC] = "e",     [F_WHERE] = "eee",
    [F_CAST] = "de",   [F_CONST] = "vd",  [F_VAR] = "niid",    [F_RANGE] = "ie",    [F_SPECIAL] = "ne",
};

static const char *slot_desc(char slot) {
  switch (slot) {
  case 'e': return "expression";
  case 'd': return "dtype";
  case 'v': return "constant value";
  case 'n': return "name";
  default: return "integer";
  }
}

static const struct {
  const char *word;
  form_kind kind;
  uop_op op;
} heads[] = {
    {"+", F_BIN, UOP_ADD},       {"*", F_BIN, UOP_MUL},         {"//", F_BIN, UOP_IDIV},     {"%", F_BIN, UOP_MOD},
    {"<", F_BIN, UOP_CMPLT},     {"!=", F_BIN, UOP_CMPNE},      {"&", F_BIN, UOP_AND},       {"|", F_BIN, UOP_OR},
    {"^", F_BIN, UOP_XOR},       {"max", F_BIN, UOP_MAX},       {"<<", F_BIN, UOP_SHL},      {">>", F_BIN, UOP_SHR},
    {"recip", F_RECIP, UOP_RECIP}, {"trunc", F_TRUNC, UOP_TRUNC}, {"where", F_WHERE, UOP_WHERE},
    {"cast", F_CAST, UOP_CAST},  {"const", F_CONST, UOP_CONST}, {"var", F_VAR, UOP_DEFINE_VAR},
    {"range", F_RANGE, UOP_RANGE}, {"special", F_SPECIAL, UOP_SPECIAL},
};

/* One open form. Kept small (64 bytes): a 10 MB line can nest two million deep. The form's atoms (all its atom
 * slots come before its expression slots) live on the parser's side stack from atom_base on. */
typedef struct frame {
  uint8_t kind;   /* form_kind */
  uint8_t n;      /* slots filled */
  uint8_t dt;     /* uop_scalar of a 'd' slot */
  uint8_t head;   /* index into heads[], HEAD_ROOT for the root */
  int line, col;  /* of the '(' */
  uint32_t atom_base;
  const uop *e[3];
  int eline[3], ecol[3];
} frame;

_Static_assert(sizeof(frame) <= 64 || sizeof(void *) != 8, "keep open forms small");
#define HEAD_ROOT 0xff

typedef struct parser {
  uop_ctx *ctx;
  lexer lx;
  frame *stack;
  size_t depth, cap;
  tok *atoms;
  size_t natoms, atoms_cap;
} parser;

static const char *f_head(const frame *f) { return f->head == HEAD_ROOT ? "root" : heads[f->head].word; }
static uop_op f_op(const frame *f) { return heads[f->head].op; }
#define ATOM(f, i) (&ps->atoms[(f)->atom_base + (i)])

static hcq_status perr(int line, int col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static hcq_status perr(int line, int col, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return hcq_status_make(HCQ_CODE_PARSE, "%d:%d: %s", line, col, msg);
}

static hcq_status expected(const char *what, const tok *got) {
  char buf[64];
  return perr(got->line, got->col, "expected %s, got %s", what, tok_desc(got, buf, sizeof buf));
}

/* A node the ctx failed to build: out of memory (the ctx's sticky status) or a core refusal. */
static hcq_status built(parser *ps, const uop *n, const frame *f, const uop **out) {
  if (n) {
    *out = n;
    return HCQ_OK;
  }
  hcq_status st = uop_ctx_status(ps->ctx);
  if (!st) st = hcq_status_make(HCQ_CODE_INTERNAL, "uop_new refused the node");
  return hcq_status_annotate(st, "%d:%d: building (%s ...)", f->line, f->col, f_head(f));
}

static const char *dtname(const uop *n) {
  const char *s = uop_text_dt_name((uop_scalar)n->dtype.scalar);
  return s ? s : "?";
}

/* An expression atom: INT (index), true, false. */
static hcq_status atom_expr(parser *ps, const tok *t, const uop **out) {
  if (tok_is(t, "true") || tok_is(t, "false")) {
    *out = uop_const_bool(ps->ctx, tok_is(t, "true"));
    return *out ? HCQ_OK : uop_ctx_status(ps->ctx);
  }
  bool neg, overflow;
  uint64_t mag;
  char buf[64];
  if (tok_integer(t, &neg, &mag, &overflow)) {
    if (neg ? mag > (uint64_t)INT64_MAX + 1 : mag > (uint64_t)INT64_MAX)
      return perr(t->line, t->col, "integer %s out of range for index (int64)", tok_desc(t, buf, sizeof buf));
    int64_t v = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    *out = uop_index_const(ps->ctx, v);
    return *out ? HCQ_OK : uop_ctx_status(ps->ctx);
  }
  if (overflow) return perr(t->line, t->col, "integer %s out of range for index (int64)", tok_desc(t, buf, sizeof buf));
  if (looks_numeric(t))
    return perr(t->line, t->col, "expected expression (a bare number is an index integer; write (const V DT) for "
                                 "other dtypes), got %s", tok_desc(t, buf, sizeof buf));
  return expected("expression (INT, true, false or '(')", t);
}

/* An integer atom that must fit the dtype s. */
static hcq_status int_in_range(const tok *t, uop_scalar s, int64_t *out) {
  bool neg, overflow;
  uint64_t mag;
  char buf[64];
  if (!tok_integer(t, &neg, &mag, &overflow)) {
    if (!overflow) return expected("integer", t);
  }
  int_range r = scalar_int_range(s);
  bool ok = !overflow && (neg ? mag <= (uint64_t)0 - (uint64_t)r.min : mag <= r.max);
  if (!ok) {
    if (s == UOP_UINT64)
      return perr(t->line, t->col, "integer %s out of range for uint64 (0..%" PRIu64 ")", tok_desc(t, buf, sizeof buf),
                  r.max);
    return perr(t->line, t->col, "integer %s out of range for %s (%" PRId64 "..%" PRIu64 ")",
                tok_desc(t, buf, sizeof buf), uop_text_dt_name(s), r.min, r.max);
  }
  *out = neg ? (int64_t)(0 - mag) : (int64_t)mag;
  return HCQ_OK;
}

static hcq_status build_const(parser *ps, frame *f, const uop **out) {
  const tok *v = ATOM(f, 0);
  char buf[64];
  uop_scalar s = (uop_scalar)f->dt;
  if (s == UOP_BOOL) {
    bool b;
    if (tok_is(v, "true") || tok_is(v, "1")) b = true;
    else if (tok_is(v, "false") || tok_is(v, "0")) b = false;
    else return perr(v->line, v->col, "expected bool value (true, false, 0 or 1), got %s", tok_desc(v, buf, sizeof buf));
    return built(ps, uop_const_bool(ps->ctx, b), f, out);
  }
  if (scalar_is_float(s)) {
    double d;
    if (tok_is(v, "inf") || tok_is(v, "+inf")) d = INFINITY;
    else if (tok_is(v, "-inf")) d = -INFINITY;
    else if (tok_is(v, "nan")) d = NAN;
    else if (uop_text_is_decimal(v->s, v->len)) {
      char tmp[400];
      if (v->len >= sizeof tmp)
        return perr(v->line, v->col, "float constant %s is too long", tok_desc(v, buf, sizeof buf));
      memcpy(tmp, v->s, v->len);
      tmp[v->len] = 0;
      d = strtod(tmp, NULL);
      if (fabs(d) > uop_text_float_max(s))
        return perr(v->line, v->col, "float constant %s out of range for %s", tok_desc(v, buf, sizeof buf),
                    uop_text_dt_name(s));
    } else {
      return perr(v->line, v->col, "expected float value (decimal, inf, -inf or nan), got %s",
                  tok_desc(v, buf, sizeof buf));
    }
    return built(ps, uop_const_float(ps->ctx, uop_dt(s), d), f, out);
  }
  int64_t iv;
  HCQ_TRY(int_in_range(v, s, &iv));
  if (s == UOP_INDEX) return built(ps, uop_index_const(ps->ctx, iv), f, out);
  return built(ps, uop_const_int(ps->ctx, uop_dt(s), iv), f, out);
}

static hcq_status build_var(parser *ps, frame *f, const uop **out) {
  uop_scalar s = (uop_scalar)f->dt;
  const tok *dt = ATOM(f, 3);
  if (!scalar_is_int(s))
    return perr(dt->line, dt->col, "var dtype must be an integer type or index, got %s", uop_text_dt_name(s));
  int64_t lo, hi;
  HCQ_TRY(int_in_range(ATOM(f, 1), s, &lo));
  HCQ_TRY(int_in_range(ATOM(f, 2), s, &hi));
  bool ordered = s == UOP_UINT64 ? (uint64_t)lo <= (uint64_t)hi : lo <= hi;
  if (!ordered) {
    char a[64], b[64];
    return perr(ATOM(f, 1)->line, ATOM(f, 1)->col, "var min %s is greater than max %s", tok_desc(ATOM(f, 1), a, sizeof a),
                tok_desc(ATOM(f, 2), b, sizeof b));
  }
  const char *name = uop_intern_str(ps->ctx, ATOM(f, 0)->s, ATOM(f, 0)->len);
  if (!name) return built(ps, NULL, f, out);
  return built(ps, uop_var(ps->ctx, name, lo, hi, uop_dt(s)), f, out);
}

static hcq_status need_index_end(const frame *f) {
  const uop *end = f->e[0];
  if (end->dtype.scalar != UOP_INDEX)
    return perr(f->eline[0], f->ecol[0], "END of %s must be index, got %s", f_head(f), dtname(end));
  return HCQ_OK;
}

static hcq_status build_bin(parser *ps, frame *f, const uop **out) {
  const uop *a = f->e[0], *b = f->e[1];
  uop_scalar s = (uop_scalar)a->dtype.scalar;
  if (a->dtype.scalar != b->dtype.scalar)
    return perr(f->line, f->col, "operands of %s have different dtypes: %s (at %d:%d) and %s (at %d:%d)", f_head(f),
                dtname(a), f->eline[0], f->ecol[0], dtname(b), f->eline[1], f->ecol[1]);
  bool ok = true;
  const char *need = "";
  switch (f_op(f)) {
  case UOP_IDIV: case UOP_MOD: case UOP_SHL: case UOP_SHR:
    ok = scalar_is_int(s);
    need = "integer";
    break;
  case UOP_AND: case UOP_OR: case UOP_XOR:
    ok = scalar_is_int(s) || s == UOP_BOOL;
    need = "integer or bool";
    break;
  default: break;
  }
  if (!ok) return perr(f->line, f->col, "operands of %s must be %s, got %s", f_head(f), need, uop_text_dt_name(s));
  return built(ps, uop_alu2(ps->ctx, f_op(f), a, b), f, out);
}

static hcq_status build(parser *ps, frame *f, const uop **out) {
  switch (f->kind) {
  case F_BIN: return build_bin(ps, f, out);
  case F_RECIP:
  case F_TRUNC:
    if (!scalar_is_float((uop_scalar)f->e[0]->dtype.scalar))
      return perr(f->eline[0], f->ecol[0], "operand of %s must be a float, got %s", f_head(f), dtname(f->e[0]));
    return built(ps, uop_alu1(ps->ctx, f_op(f), f->e[0]), f, out);
  case F_WHERE:
    if (f->e[0]->dtype.scalar != UOP_BOOL)
      return perr(f->eline[0], f->ecol[0], "condition of where must be bool, got %s", dtname(f->e[0]));
    if (f->e[1]->dtype.scalar != f->e[2]->dtype.scalar)
      return perr(f->line, f->col, "arms of where have different dtypes: %s (at %d:%d) and %s (at %d:%d)",
                  dtname(f->e[1]), f->eline[1], f->ecol[1], dtname(f->e[2]), f->eline[2], f->ecol[2]);
    return built(ps, uop_where(ps->ctx, f->e[0], f->e[1], f->e[2]), f, out);
  case F_CAST: return built(ps, uop_cast(ps->ctx, uop_dt((uop_scalar)f->dt), f->e[0]), f, out);
  case F_CONST: return build_const(ps, f, out);
  case F_VAR: return build_var(ps, f, out);
  case F_RANGE: {
    HCQ_TRY(need_index_end(f));
    int64_t id;
    HCQ_TRY(int_in_range(ATOM(f, 0), UOP_INDEX, &id));
    if (id < 0) return perr(ATOM(f, 0)->line, ATOM(f, 0)->col, "range id must be >= 0, got %" PRId64, id);
    return built(ps, uop_range(ps->ctx, f->e[0], id, UOP_AXIS_LOOP), f, out);
  }
  case F_SPECIAL: {
    HCQ_TRY(need_index_end(f));
    const char *name = uop_intern_str(ps->ctx, ATOM(f, 0)->s, ATOM(f, 0)->len);
    if (!name) return built(ps, NULL, f, out);
    return built(ps, uop_special(ps->ctx, name, f->e[0]), f, out);
  }
  case F_ROOT: break;
  }
  return hcq_status_make(HCQ_CODE_INTERNAL, "text: bad form kind %d", (int)f->kind);
}

static bool is_identifier(const tok *t) {
  if (t->len == 0 || !(isalpha((unsigned char)t->s[0]) || t->s[0] == '_')) return false;
  for (size_t i = 1; i < t->len; i++)
    if (!(isalnum((unsigned char)t->s[i]) || t->s[i] == '_')) return false;
  return true;
}

static hcq_status push_frame(parser *ps, frame f) {
  if (ps->depth == ps->cap) {
    size_t cap = ps->cap ? ps->cap * 2 : 64;
    frame *s = realloc(ps->stack, cap * sizeof *s);
    if (!s) return hcq_status_make(HCQ_CODE_NOMEM, "%d:%d: out of memory at nesting depth %zu", f.line, f.col, ps->depth);
    ps->stack = s;
    ps->cap = cap;
  }
  ps->stack[ps->depth++] = f;
  return HCQ_OK;
}

static hcq_status push_atom(parser *ps, frame *f, const tok *t) {
  if (ps->natoms == ps->atoms_cap) {
    size_t cap = ps->atoms_cap ? ps->atoms_cap * 2 : 64;
    tok *a = realloc(ps->atoms, cap * sizeof *a);
    if (!a) return hcq_status_make(HCQ_CODE_NOMEM, "%d:%d: out of memory", t->line, t->col);
    ps->atoms = a;
    ps->atoms_cap = cap;
  }
  ps->atoms[ps->natoms++] = *t;
  f->n++;
  return HCQ_OK;
}

/* '(' seen at t: read the head and open a form. */
static hcq_status open_form(parser *ps, const tok *lp) {
  tok h = lex_next(&ps->lx);
  if (h.kind != TOK_ATOM) return expected("operator", &h);
  for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
    if (tok_is(&h, heads[i].word)) {
      frame f = {.kind = (uint8_t)heads[i].kind, .head = (uint8_t)i, .line = lp->line, .col = lp->col,
                 .atom_base = (uint32_t)ps->natoms};
      return push_frame(ps, f);
    }
  }
  char buf[64];
  return perr(h.line, h.col, "unknown operator %s (expected one of + * // %% < != & | ^ max << >> recip trunc where "
                             "cast const var range special)", tok_desc(&h, buf, sizeof buf));
}

/* Put an expression into the top frame's next slot (which the caller checked is 'e'). */
static void fill_expr(frame *f, const uop *n, int line, int col) {
  int k = 0;
  for (int i = 0; i < f->n; i++) k += form_slots[f->kind][i] == 'e';
  f->e[k] = n;
  f->eline[k] = line;
  f->ecol[k] = col;
  f->n++;
}

hcq_status uop_parse_at(uop_ctx *ctx, const char *text, size_t len, int first_line, const uop **out) {
  parser ps = {.ctx = ctx, .lx = {.p = text, .end = text + len, .line_start = text, .line = first_line}};
  hcq_status st = HCQ_OK;
  *out = NULL;
  st = push_frame(&ps, (frame){.kind = F_ROOT, .head = HEAD_ROOT});
  while (!st) {
    frame *f = &ps.stack[ps.depth - 1];
    const char *slots = form_slots[f->kind];
    char slot = slots[f->n]; /* 0 when the form is full */
    tok t = lex_next(&ps.lx);
    if (f->kind == F_ROOT && slot == 0) {
      if (t.kind != TOK_EOF) st = expected("end of input", &t);
      else *out = f->e[0];
      break;
    }
    if (t.kind == TOK_EOF) {
      st = expected(slot ? slot_desc(slot) : "')'", &t);
    } else if (t.kind == TOK_LP) {
      if (slot != 'e') st = expected(slot ? slot_desc(slot) : "')'", &t);
      else st = open_form(&ps, &t);
    } else if (t.kind == TOK_RP) {
      if (slot) {
        st = expected(slot_desc(slot), &t);
      } else {
        const uop *n = NULL;
        st = build(&ps, f, &n);
        if (!st) {
          int line = f->line, col = f->col;
          ps.natoms = f->atom_base;
          ps.depth--;
          fill_expr(&ps.stack[ps.depth - 1], n, line, col);
        }
      }
    } else { /* atom */
      switch (slot) {
      case 0: st = expected("')'", &t); break;
      case 'e': {
        const uop *n = NULL;
        st = atom_expr(&ps, &t, &n);
        if (!st) fill_expr(f, n, t.line, t.col);
        break;
      }
      case 'd': {
        uop_scalar s;
        if (!uop_text_dt_lookup(t.s, t.len, &s)) {
          char buf[64];
          st = perr(t.line, t.col, "unknown dtype %s (expected one of index bool int8 uint8 int16 uint16 int32 uint32 "
                                   "int64 uint64 float16 bfloat16 float32 float64)", tok_desc(&t, buf, sizeof buf));
        } else {
          f->dt = (uint8_t)s;
          st = push_atom(&ps, f, &t);
        }
        break;
      }
      case 'n':
        if (!is_identifier(&t)) st = expected("name (letters, digits, _)", &t);
        else st = push_atom(&ps, f, &t);
        break;
      case 'i': {
        bool neg, overflow;
        uint64_t mag;
        if (!tok_integer(&t, &neg, &mag, &overflow) && !overflow) st = expected("integer", &t);
        else st = push_atom(&ps, f, &t); /* range checked at ')' once the dtype is known */
        break;
      }
      default: st = push_atom(&ps, f, &t); break; /* 'v': checked at ')' */
      }
    }
  }
  free(ps.stack);
  free(ps.atoms);
  if (st) *out = NULL;
  return st;
}

hcq_status uop_parse(uop_ctx *ctx, const char *text, size_t len, const uop **out) {
  return uop_parse_at(ctx, text, len, 1, out);
}
