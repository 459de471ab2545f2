/* The infix debug render of an expression (format in text.h; reference tinygrad/uop/ops.py). Explicit work stack. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>

#include "uop/text.h"
#include "uop/text_buf.h"

static const char *infix_op(uop_op op) {
  switch (op) {
  case UOP_ADD: return "+";
  case UOP_SUB: return "-";
  case UOP_MUL: return "*";
  case UOP_FDIV: return "/";
  case UOP_IDIV: return "//";
  case UOP_MOD: return "%";
  case UOP_CMPLT: return "<";
  case UOP_CMPNE: return "!=";
  case UOP_CMPEQ: return "==";
  case UOP_AND: return "&";
  case UOP_OR: return "|";
  case UOP_XOR: return "^";
  case UOP_SHL: return "<<";
  case UOP_SHR: return ">>";
  default: return NULL;
  }
}

static const char *func_op(uop_op op) {
  switch (op) {
  case UOP_TRUNC: return "trunc(";
  case UOP_EXP2: return "exp2(";
  case UOP_LOG2: return "log2(";
  case UOP_SIN: return "sin(";
  case UOP_SQRT: return "sqrt(";
  default: return NULL;
  }
}

static const char *cname_of(const uop *n) {
  const char *c = uop_text_dt_cname((uop_scalar)n->dtype.scalar);
  return c ? c : "void";
}

static void render_const(text_buf *b, const uop *n) {
  uop_scalar s = (uop_scalar)n->dtype.scalar;
  char num[40];
  if (s == UOP_BOOL) {
    text_buf_puts(b, n->arg.i ? "True" : "False");
    return;
  }
  if (s >= UOP_FLOAT16 && s <= UOP_FLOAT64) {
    text_buf_puts(b, uop_text_fmt_double(n->arg.kind == UOP_ARG_FLOAT ? n->arg.f : (double)n->arg.i, num));
    return;
  }
  uint64_t u = (uint64_t)n->arg.i;
  switch (s) {
  case UOP_UINT8: snprintf(num, sizeof num, "%" PRIu64, u & 0xff); break;
  case UOP_UINT16: snprintf(num, sizeof num, "%" PRIu64, u & 0xffff); break;
  case UOP_UINT32: snprintf(num, sizeof num, "%" PRIu64, u & 0xffffffffu); break;
  case UOP_UINT64: snprintf(num, sizeof num, "%" PRIu64, u); break;
  default: snprintf(num, sizeof num, "%" PRId64, n->arg.i); break;
  }
  text_buf_puts(b, num);
}

/* Push sources a, sep, b, sep, ..., then `close`, so that they are written in order. */
static void push_list(text_stack *st, const uop *n, const char *sep, const char *close) {
  text_push_lit(st, close);
  for (uint32_t i = n->nsrc; i-- > 0;) {
    text_push_node(st, n->src[i]);
    if (i) text_push_lit(st, sep);
  }
}

static void expand(text_buf *b, text_stack *st, const uop *n) {
  uop_op op = (uop_op)n->op;
  char tmp[64];
  const char *inf = infix_op(op), *fn = func_op(op);
  if (inf && n->nsrc == 2) {
    text_buf_puts(b, "(");
    push_list(st, n, inf, ")");
    return;
  }
  if (fn && n->nsrc == 1) {
    text_buf_puts(b, fn);
    push_list(st, n, ", ", ")");
    return;
  }
  switch (op) {
  case UOP_CONST: render_const(b, n); return;
  case UOP_DEFINE_VAR:
  case UOP_SPECIAL: text_buf_puts(b, n->arg.str ? n->arg.str : "?"); return;
  case UOP_RANGE:
    snprintf(tmp, sizeof tmp, "ridx%" PRId64, n->arg.i);
    text_buf_puts(b, tmp);
    return;
  case UOP_MAX:
    if (n->nsrc != 2) break;
    text_buf_puts(b, "max(");
    push_list(st, n, ", ", ")");
    return;
  case UOP_WHERE: /* (x if c else y) */
    if (n->nsrc != 3) break;
    text_buf_puts(b, "(");
    text_push_lit(st, ")");
    text_push_node(st, n->src[2]);
    text_push_lit(st, " else ");
    text_push_node(st, n->src[0]);
    text_push_lit(st, " if ");
    text_push_node(st, n->src[1]);
    return;
  case UOP_RECIP:
  case UOP_NEG:
    if (n->nsrc != 1) break;
    text_buf_puts(b, op == UOP_RECIP ? "(1/" : "(-");
    push_list(st, n, "", ")");
    return;
  case UOP_CAST:
  case UOP_BITCAST:
    if (n->nsrc != 1) break;
    snprintf(tmp, sizeof tmp, op == UOP_CAST ? "(%s)(" : "bitcast<%s>(", cname_of(n));
    text_buf_puts(b, tmp);
    push_list(st, n, "", ")");
    return;
  case UOP_MULACC: /* ((a*b)+c) */
    if (n->nsrc != 3) break;
    text_buf_puts(b, "((");
    text_push_lit(st, ")");
    text_push_node(st, n->src[2]);
    text_push_lit(st, ")+");
    text_push_node(st, n->src[1]);
    text_push_lit(st, "*");
    text_push_node(st, n->src[0]);
    return;
  default: break;
  }
  /* Anything else: name(a, b, ...) */
  const char *name = uop_op_name(op);
  for (size_t i = 0; name && name[i] && i + 1 < sizeof tmp; i++) tmp[i] = (char)tolower((unsigned char)name[i]), tmp[i + 1] = 0;
  text_buf_puts(b, name ? tmp : "op");
  text_buf_puts(b, "(");
  push_list(st, n, ", ", ")");
}

hcq_status uop_render(const uop *n, char **out_text) {
  text_buf b = {0};
  text_stack st = {0};
  *out_text = NULL;
  text_buf_reserve(&b, 0);
  text_push_node(&st, n);
  while (st.len && !b.failed && !st.failed) {
    text_item it = st.items[--st.len];
    if (it.n) expand(&b, &st, it.n);
    else text_buf_puts(&b, it.lit);
  }
  free(st.items);
  if (b.failed || st.failed) {
    free(b.data);
    return hcq_status_make(HCQ_CODE_NOMEM, "render: out of memory or output over %zu bytes", UOP_TEXT_MAX_OUTPUT_B);
  }
  *out_text = b.data;
  return HCQ_OK;
}
