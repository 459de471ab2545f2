/* The printer: a node back into the expression grammar of text.h (which also lists how ops outside the grammar are
 * spelled). Explicit work stack, no recursion. */
#include <inttypes.h>
#include <stdio.h>

#include "uop/text.h"
#include "uop/text_buf.h"

enum { ITEM_MINUS_ONE = 1 }; /* special item: the constant -1 in the given dtype */

static const char *grammar_binop(uop_op op) {
  switch (op) {
  case UOP_ADD: return "+";
  case UOP_MUL: return "*";
  case UOP_IDIV: return "//";
  case UOP_MOD: return "%";
  case UOP_CMPLT: return "<";
  case UOP_CMPNE: return "!=";
  case UOP_AND: return "&";
  case UOP_OR: return "|";
  case UOP_XOR: return "^";
  case UOP_MAX: return "max";
  case UOP_SHL: return "<<";
  case UOP_SHR: return ">>";
  default: return NULL;
  }
}

/* The integer value of a CONST written for its dtype: unsigned types as unsigned decimal of their width. */
static void fmt_int_value(char *buf, size_t cap, uop_scalar s, int64_t v) {
  int bits = s == UOP_UINT8 ? 8 : s == UOP_UINT16 ? 16 : s == UOP_UINT32 ? 32 : 64;
  if (s == UOP_UINT8 || s == UOP_UINT16 || s == UOP_UINT32 || s == UOP_UINT64) {
    uint64_t u = (uint64_t)v;
    if (bits < 64) u &= ((uint64_t)1 << bits) - 1;
    snprintf(buf, cap, "%" PRIu64, u);
  } else {
    snprintf(buf, cap, "%" PRId64, v);
  }
}

static void print_const(text_buf *b, const uop *n) {
  uop_scalar s = (uop_scalar)n->dtype.scalar;
  char num[40];
  if (s == UOP_BOOL) {
    text_buf_puts(b, n->arg.i ? "true" : "false");
    return;
  }
  if (s >= UOP_FLOAT16 && s <= UOP_FLOAT64) {
    uop_text_fmt_double(n->arg.kind == UOP_ARG_FLOAT ? n->arg.f : (double)n->arg.i, num);
  } else {
    fmt_int_value(num, sizeof num, s, n->arg.i);
  }
  if (s == UOP_INDEX) {
    text_buf_puts(b, num);
    return;
  }
  char out[96];
  snprintf(out, sizeof out, "(const %s %s)", num, uop_text_dt_name(s));
  text_buf_puts(b, out);
}

static void print_minus_one(text_buf *b, uop_scalar s) {
  char num[40], out[96];
  int64_t v = -1;
  fmt_int_value(num, sizeof num, s, v);
  if (s == UOP_INDEX) {
    text_buf_puts(b, "-1");
    return;
  }
  snprintf(out, sizeof out, "(const %s %s)", num, uop_text_dt_name(s));
  text_buf_puts(b, out);
}

static hcq_status arity(const uop *n, uint32_t want) {
  if (n->nsrc == want) return HCQ_OK;
  return hcq_status_make(HCQ_CODE_INVALID, "print: %s node has %u sources, expected %u", uop_op_name((uop_op)n->op),
                         n->nsrc, want);
}

/* Write n's prefix and push the rest. */
static hcq_status expand(text_buf *b, text_stack *st, const uop *n) {
  uop_op op = (uop_op)n->op;
  uop_scalar s = (uop_scalar)n->dtype.scalar;
  if (n->dtype.count != 1 || n->dtype.addrspace != UOP_AS_NONE || !uop_text_dt_name(s))
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "print: %s node has a dtype outside the expression grammar (scalar %d,"
                           " count %d, addrspace %d)", uop_op_name(op), (int)s, n->dtype.count, n->dtype.addrspace);
  char tmp[96];
  const char *bin = grammar_binop(op);
  if (bin) {
    HCQ_TRY(arity(n, 2));
    text_buf_puts(b, "(");
    text_buf_puts(b, bin);
    text_buf_puts(b, " ");
    text_push_lit(st, ")");
    text_push_node(st, n->src[1]);
    text_push_lit(st, " ");
    text_push_node(st, n->src[0]);
    return HCQ_OK;
  }
  switch (op) {
  case UOP_CONST:
    print_const(b, n);
    return HCQ_OK;
  case UOP_DEFINE_VAR: {
    char lo[40], hi[40];
    fmt_int_value(lo, sizeof lo, s, n->arg.i);
    fmt_int_value(hi, sizeof hi, s, n->arg.i2);
    text_buf_puts(b, "(var ");
    text_buf_puts(b, n->arg.str ? n->arg.str : "?");
    snprintf(tmp, sizeof tmp, " %s %s %s)", lo, hi, uop_text_dt_name(s));
    text_buf_puts(b, tmp);
    return HCQ_OK;
  }
  case UOP_RANGE:
    HCQ_TRY(arity(n, 1));
    snprintf(tmp, sizeof tmp, "(range %" PRId64 " ", n->arg.i);
    text_buf_puts(b, tmp);
    text_push_lit(st, ")");
    text_push_node(st, n->src[0]);
    return HCQ_OK;
  case UOP_SPECIAL:
    HCQ_TRY(arity(n, 1));
    text_buf_puts(b, "(special ");
    text_buf_puts(b, n->arg.str ? n->arg.str : "?");
    text_buf_puts(b, " ");
    text_push_lit(st, ")");
    text_push_node(st, n->src[0]);
    return HCQ_OK;
  case UOP_RECIP:
  case UOP_TRUNC:
    HCQ_TRY(arity(n, 1));
    text_buf_puts(b, op == UOP_RECIP ? "(recip " : "(trunc ");
    text_push_lit(st, ")");
    text_push_node(st, n->src[0]);
    return HCQ_OK;
  case UOP_WHERE:
    HCQ_TRY(arity(n, 3));
    text_buf_puts(b, "(where ");
    text_push_lit(st, ")");
    text_push_node(st, n->src[2]);
    text_push_lit(st, " ");
    text_push_node(st, n->src[1]);
    text_push_lit(st, " ");
    text_push_node(st, n->src[0]);
    return HCQ_OK;
  case UOP_CAST:
    HCQ_TRY(arity(n, 1));
    snprintf(tmp, sizeof tmp, "(cast %s ", uop_text_dt_name(s));
    text_buf_puts(b, tmp);
    text_push_lit(st, ")");
    text_push_node(st, n->src[0]);
    return HCQ_OK;
  case UOP_NEG: /* (* x -1) */
    HCQ_TRY(arity(n, 1));
    if (s == UOP_BOOL) return hcq_status_make(HCQ_CODE_UNSUPPORTED, "print: NEG of bool has no grammar form");
    text_buf_puts(b, "(* ");
    text_push_lit(st, ")");
    text_stack_push(st, (text_item){.special = ITEM_MINUS_ONE, .scalar = s});
    text_push_lit(st, " ");
    text_push_node(st, n->src[0]);
    return HCQ_OK;
  case UOP_SUB: /* (+ a (* b -1)) */
    HCQ_TRY(arity(n, 2));
    if (s == UOP_BOOL) return hcq_status_make(HCQ_CODE_UNSUPPORTED, "print: SUB of bool has no grammar form");
    text_buf_puts(b, "(+ ");
    text_push_lit(st, "))");
    text_stack_push(st, (text_item){.special = ITEM_MINUS_ONE, .scalar = s});
    text_push_lit(st, " ");
    text_push_node(st, n->src[1]);
    text_push_lit(st, " (* ");
    text_push_node(st, n->src[0]);
    return HCQ_OK;
  case UOP_CMPEQ: /* (!= (!= a b) true) */
    HCQ_TRY(arity(n, 2));
    text_buf_puts(b, "(!= (!= ");
    text_push_lit(st, ") true)");
    text_push_node(st, n->src[1]);
    text_push_lit(st, " ");
    text_push_node(st, n->src[0]);
    return HCQ_OK;
  case UOP_FDIV: /* (* a (recip b)) */
    HCQ_TRY(arity(n, 2));
    text_buf_puts(b, "(* ");
    text_push_lit(st, "))");
    text_push_node(st, n->src[1]);
    text_push_lit(st, " (recip ");
    text_push_node(st, n->src[0]);
    return HCQ_OK;
  case UOP_MULACC: /* (+ (* a b) c) */
    HCQ_TRY(arity(n, 3));
    text_buf_puts(b, "(+ (* ");
    text_push_lit(st, ")");
    text_push_node(st, n->src[2]);
    text_push_lit(st, ") ");
    text_push_node(st, n->src[1]);
    text_push_lit(st, " ");
    text_push_node(st, n->src[0]);
    return HCQ_OK;
  default:
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "print: op %s has no form in the expression grammar",
                           uop_op_name(op));
  }
}

hcq_status uop_print(const uop *n, char **out_text) {
  text_buf b = {0};
  text_stack st = {0};
  hcq_status err = HCQ_OK;
  *out_text = NULL;
  text_buf_reserve(&b, 0);
  text_push_node(&st, n);
  while (!err && st.len && !b.failed && !st.failed) {
    text_item it = st.items[--st.len];
    if (it.n) err = expand(&b, &st, it.n);
    else if (it.special == ITEM_MINUS_ONE) print_minus_one(&b, it.scalar);
    else text_buf_puts(&b, it.lit);
  }
  free(st.items);
  if (!err && (b.failed || st.failed))
    err = hcq_status_make(HCQ_CODE_NOMEM, "print: out of memory or output over %zu bytes", UOP_TEXT_MAX_OUTPUT_B);
  if (err) {
    free(b.data);
    return err;
  }
  *out_text = b.data;
  return HCQ_OK;
}
