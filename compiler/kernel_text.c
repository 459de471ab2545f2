/* kernel_text: dtype spelling and the typing rules of the named forms (shared by parser and printer). */
#include <ctype.h>
#include <stdarg.h>
#include <float.h>
#include <inttypes.h>
#include <stdio.h>

#include "compiler/kernel_text_internal.h"
#include "uop/text.h"

/* ------------------------------------------------------------------------------------------------ dtypes */

static const char *const as_names[] = {[UOP_AS_GLOBAL] = "global", [UOP_AS_LOCAL] = "local", [UOP_AS_REG] = "reg"};

char *cc_dtype_str(uop_dtype dt, char *buf, size_t cap) {
  const char *s = dt.scalar < UOP_SCALAR_COUNT ? uop_dt_name(dt) : "?";
  char vec[16] = "";
  if (dt.count != 1) snprintf(vec, sizeof vec, "x%u", (unsigned)dt.count);
  if (dt.addrspace == UOP_AS_NONE) {
    snprintf(buf, cap, "%s%s", s, vec);
    return buf;
  }
  const char *as = dt.addrspace <= UOP_AS_REG ? as_names[dt.addrspace] : "?";
  char pv[16] = "";
  if (dt.ptr_v != 1) snprintf(pv, sizeof pv, ".v%u", (unsigned)dt.ptr_v);
  snprintf(buf, cap, "ptr.%s.%s%s[%" PRId64 "]%s", as, s, vec, dt.size, pv);
  return buf;
}

/* Decimal integer in [lo, hi] occupying s[0..len). */
static bool parse_dec(const char *s, size_t len, int64_t lo, int64_t hi, int64_t *out) {
  size_t i = 0;
  bool neg = len > 0 && s[0] == '-';
  if (neg) i++;
  if (i >= len || len - i > 18) return false;
  int64_t v = 0;
  for (; i < len; i++) {
    if (!isdigit((unsigned char)s[i])) return false;
    v = v * 10 + (s[i] - '0');
  }
  if (neg) v = -v;
  if (v < lo || v > hi) return false;
  *out = v;
  return true;
}

/* SCALAR[xN] or void. */
static bool parse_value_dt(const char *s, size_t len, uop_dtype *out) {
  if (uop_dt_from_name(s, len, out)) return true; /* "index" has an x of its own */
  size_t base = len;
  for (size_t i = len; i > 0; i--) {
    if (s[i - 1] == 'x') {
      base = i - 1;
      break;
    }
  }
  uop_dtype dt;
  if (!uop_dt_from_name(s, base, &dt)) return false;
  int64_t count = 1;
  if (base < len && !parse_dec(s + base + 1, len - base - 1, 1, 65535, &count)) return false;
  *out = uop_dt_vec(dt, (int)count);
  return true;
}

bool cc_dtype_parse(const char *s, size_t len, uop_dtype *out) {
  if (len < 4 || memcmp(s, "ptr.", 4) != 0) return parse_value_dt(s, len, out);
  const char *p = s + 4, *end = s + len;
  int as = -1;
  for (int a = UOP_AS_GLOBAL; a <= UOP_AS_REG; a++) {
    size_t n = strlen(as_names[a]);
    if ((size_t)(end - p) > n && memcmp(p, as_names[a], n) == 0 && p[n] == '.') {
      as = a;
      p += n + 1;
      break;
    }
  }
  if (as < 0) return false;
  const char *lb = memchr(p, '[', (size_t)(end - p));
  if (!lb) return false;
  const char *rb = memchr(lb, ']', (size_t)(end - lb));
  if (!rb) return false;
  uop_dtype base;
  int64_t size, pv = 1;
  if (!parse_value_dt(p, (size_t)(lb - p), &base)) return false;
  if (!parse_dec(lb + 1, (size_t)(rb - lb - 1), -1, INT64_MAX / 2, &size)) return false;
  const char *q = rb + 1;
  if (q < end) {
    if (end - q < 3 || q[0] != '.' || q[1] != 'v' || !parse_dec(q + 2, (size_t)(end - q - 2), 1, 65535, &pv))
      return false;
  }
  uop_dtype dt = uop_dt_ptr(base, (uop_addrspace)as, size);
  dt.ptr_v = (uint16_t)pv;
  *out = dt;
  return true;
}

/* ------------------------------------------------------------------------------------------------ words */

bool kt_is_identifier(const char *s, size_t len) {
  if (len == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return false;
  for (size_t i = 1; i < len; i++)
    if (!(isalnum((unsigned char)s[i]) || s[i] == '_')) return false;
  return true;
}

bool kt_is_reserved(const char *s, size_t len) {
  static const char *const words[] = {"true", "false", "inf", "nan", "_"};
  for (size_t i = 0; i < sizeof words / sizeof *words; i++)
    if (strlen(words[i]) == len && memcmp(words[i], s, len) == 0) return true;
  return false;
}

static const struct {
  const char *word;
  uop_op op;
} alu_words[] = {
    {"+", UOP_ADD},       {"*", UOP_MUL},       {"//", UOP_IDIV},     {"%", UOP_MOD},     {"<", UOP_CMPLT},
    {"!=", UOP_CMPNE},    {"==", UOP_CMPEQ},    {"&", UOP_AND},       {"|", UOP_OR},      {"^", UOP_XOR},
    {"max", UOP_MAX},     {"<<", UOP_SHL},      {">>", UOP_SHR},      {"-", UOP_SUB},     {"/", UOP_FDIV},
    {"recip", UOP_RECIP}, {"trunc", UOP_TRUNC}, {"exp2", UOP_EXP2},   {"log2", UOP_LOG2}, {"sin", UOP_SIN},
    {"sqrt", UOP_SQRT},   {"neg", UOP_NEG},     {"where", UOP_WHERE}, {"mulacc", UOP_MULACC},
};

const char *kt_alu_word(uop_op op) {
  for (size_t i = 0; i < sizeof alu_words / sizeof *alu_words; i++)
    if (alu_words[i].op == op) return alu_words[i].word;
  return NULL;
}

bool kt_alu_from_word(const char *s, size_t len, uop_op *out) {
  for (size_t i = 0; i < sizeof alu_words / sizeof *alu_words; i++) {
    if (strlen(alu_words[i].word) == len && memcmp(alu_words[i].word, s, len) == 0) {
      *out = alu_words[i].op;
      return true;
    }
  }
  return false;
}

/* ------------------------------------------------------------------------------------------------ typing */

static bool is_value(uop_dtype dt) { return dt.addrspace == UOP_AS_NONE && dt.scalar != UOP_VOID; }
static bool is_scalar_int(uop_dtype dt) { return is_value(dt) && dt.count == 1 && uop_dt_is_int(dt); }
static bool is_scalar_bool(uop_dtype dt) { return is_value(dt) && dt.count == 1 && dt.scalar == UOP_BOOL; }

static bool fail(char *msg, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(char *msg, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, cap, fmt, ap);
  va_end(ap);
  return false;
}

#define DTS(dt) cc_dtype_str((dt), (char[80]){0}, 80)

static bool check_ranges(const uop *const *src, uint32_t from, uint32_t nsrc, const char *what, char *msg,
                         size_t cap) {
  for (uint32_t i = from; i < nsrc; i++)
    if (src[i]->op != UOP_RANGE)
      return fail(msg, cap, "operand %u of %s must be a range, got %s", i + 1, what, uop_op_name((uop_op)src[i]->op));
  return true;
}

bool kt_form_dtype(uop_op op, const uop *const *src, uint32_t nsrc, uop_dtype cast_dt, uop_dtype *out_dt, char *msg,
                   size_t cap) {
  int arity = uop_op_alu_arity(op);
  if (arity && op != UOP_CAST && op != UOP_BITCAST) {
    const char *w = kt_alu_word(op);
    if (!w) return fail(msg, cap, "%s has no named form", uop_op_name(op));
    if (nsrc != (uint32_t)arity) return fail(msg, cap, "%s takes %d operands, got %u", w, arity, nsrc);
    for (uint32_t i = 0; i < nsrc; i++)
      if (!is_value(src[i]->dtype))
        return fail(msg, cap, "operand %u of %s must be a value, got %s", i + 1, w, DTS(src[i]->dtype));
    uop_dtype a = src[0]->dtype;
    if (op == UOP_WHERE) {
      if (src[0]->dtype.scalar != UOP_BOOL || src[0]->dtype.count != src[1]->dtype.count)
        return fail(msg, cap, "condition of where must be bool (of the arms' width), got %s", DTS(a));
      if (!kt_dt_same(src[1]->dtype, src[2]->dtype))
        return fail(msg, cap, "arms of where have different dtypes: %s and %s", DTS(src[1]->dtype), DTS(src[2]->dtype));
      *out_dt = src[1]->dtype;
      return true;
    }
    for (uint32_t i = 1; i < nsrc; i++)
      if (!kt_dt_same(src[i]->dtype, a))
        return fail(msg, cap, "operands of %s have different dtypes: %s and %s", w, DTS(a), DTS(src[i]->dtype));
    bool isint = uop_dt_is_int(a), isfloat = uop_dt_is_float(a), isbool = a.scalar == UOP_BOOL;
    switch (op) {
    case UOP_IDIV: case UOP_MOD: case UOP_SHL: case UOP_SHR:
      if (!isint) return fail(msg, cap, "operands of %s must be integers, got %s", w, DTS(a));
      break;
    case UOP_AND: case UOP_OR: case UOP_XOR:
      if (!isint && !isbool) return fail(msg, cap, "operands of %s must be integers or bool, got %s", w, DTS(a));
      break;
    case UOP_FDIV: case UOP_RECIP: case UOP_TRUNC: case UOP_EXP2: case UOP_LOG2: case UOP_SIN: case UOP_SQRT:
      if (!isfloat) return fail(msg, cap, "operand of %s must be a float, got %s", w, DTS(a));
      break;
    case UOP_SUB: case UOP_NEG: case UOP_MULACC:
      if (isbool) return fail(msg, cap, "operands of %s must be numbers, got %s", w, DTS(a));
      break;
    default: break;
    }
    if (op == UOP_CMPLT || op == UOP_CMPNE || op == UOP_CMPEQ) *out_dt = uop_dt_vec(uop_dt(UOP_BOOL), a.count);
    else *out_dt = a;
    return true;
  }
  switch (op) {
  case UOP_CAST:
  case UOP_BITCAST: {
    const char *w = op == UOP_CAST ? "cast" : "bitcast";
    if (nsrc != 1) return fail(msg, cap, "%s takes a dtype and 1 operand", w);
    if (!is_value(cast_dt)) return fail(msg, cap, "%s target must be a value dtype, got %s", w, DTS(cast_dt));
    if (!is_value(src[0]->dtype)) return fail(msg, cap, "operand of %s must be a value, got %s", w, DTS(src[0]->dtype));
    if (op == UOP_BITCAST && uop_dt_itemsize_B(cast_dt) != uop_dt_itemsize_B(src[0]->dtype))
      return fail(msg, cap, "bitcast between dtypes of different sizes: %s to %s", DTS(src[0]->dtype), DTS(cast_dt));
    *out_dt = cast_dt;
    return true;
  }
  case UOP_RANGE:
  case UOP_SPECIAL:
    if (nsrc != 1) return fail(msg, cap, "%s takes 1 end operand", op == UOP_RANGE ? "range" : "special");
    if (!is_scalar_int(src[0]->dtype))
      return fail(msg, cap, "END of %s must be index or an integer, got %s", op == UOP_RANGE ? "range" : "special",
                  DTS(src[0]->dtype));
    *out_dt = src[0]->dtype;
    return true;
  case UOP_INDEX_OP:
    if (nsrc != 2 && nsrc != 3) return fail(msg, cap, "index takes a buffer, an index and an optional gate");
    if (!uop_dt_is_ptr(src[0]->dtype))
      return fail(msg, cap, "first operand of index must be a buffer (pointer), got %s %s",
                  uop_op_name((uop_op)src[0]->op), DTS(src[0]->dtype));
    if (!is_scalar_int(src[1]->dtype))
      return fail(msg, cap, "index operand must be index or an integer, got %s", DTS(src[1]->dtype));
    if (nsrc == 3 && !is_scalar_bool(src[2]->dtype))
      return fail(msg, cap, "gate of index must be bool, got %s", DTS(src[2]->dtype));
    *out_dt = src[0]->dtype;
    return true;
  case UOP_LOAD:
    if (nsrc != 1 && nsrc != 2) return fail(msg, cap, "load takes a pointer and an optional alternative value");
    if (!uop_dt_is_ptr(src[0]->dtype) || src[0]->dtype.ptr_v != 1)
      return fail(msg, cap, "load needs a pointer (index of a buffer), got %s %s", uop_op_name((uop_op)src[0]->op),
                  DTS(src[0]->dtype));
    *out_dt = uop_dt_base_of(src[0]->dtype);
    if (nsrc == 2 && !kt_dt_same(src[1]->dtype, *out_dt))
      return fail(msg, cap, "alternative value of load is %s, but the load gives %s", DTS(src[1]->dtype),
                  DTS(*out_dt));
    return true;
  case UOP_STORE:
    if (nsrc < 2) return fail(msg, cap, "store takes a pointer, a value and the ranges it closes");
    if (!uop_dt_is_ptr(src[0]->dtype) || src[0]->dtype.ptr_v != 1)
      return fail(msg, cap, "store without a buffer: the first operand must be a pointer (index of a buffer), got "
                  "%s %s", uop_op_name((uop_op)src[0]->op), DTS(src[0]->dtype));
    if (!kt_dt_same(src[1]->dtype, uop_dt_base_of(src[0]->dtype)))
      return fail(msg, cap, "store of a %s value into a %s buffer", DTS(src[1]->dtype),
                  DTS(uop_dt_base_of(src[0]->dtype)));
    if (!check_ranges(src, 2, nsrc, "store", msg, cap)) return false;
    *out_dt = uop_dt(UOP_VOID);
    return true;
  case UOP_REDUCE:
    if (nsrc < 1) return fail(msg, cap, "reduce takes a value and the ranges it reduces over");
    if (!is_value(src[0]->dtype)) return fail(msg, cap, "reduce of a non-value %s", DTS(src[0]->dtype));
    if (!check_ranges(src, 1, nsrc, "reduce", msg, cap)) return false;
    *out_dt = src[0]->dtype;
    return true;
  case UOP_SINK:
    *out_dt = uop_dt(UOP_VOID);
    return true;
  default:
    return fail(msg, cap, "%s has no named form", uop_op_name(op));
  }
}
