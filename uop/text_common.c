/* Shared pieces of the expression text module (and the kernel text of compiler/): dtype names (grammar and
 * C-style), decimal syntax, float ranges and float formatting. */
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uop/text.h"

static const char *const grammar_names[UOP_SCALAR_COUNT] = {
    [UOP_INDEX] = "index",     [UOP_BOOL] = "bool",         [UOP_INT8] = "int8",       [UOP_UINT8] = "uint8",
    [UOP_INT16] = "int16",     [UOP_UINT16] = "uint16",     [UOP_INT32] = "int32",     [UOP_UINT32] = "uint32",
    [UOP_INT64] = "int64",     [UOP_UINT64] = "uint64",     [UOP_FLOAT16] = "float16", [UOP_BFLOAT16] = "bfloat16",
    [UOP_FLOAT32] = "float32", [UOP_FLOAT64] = "float64",
};

static const char *const c_names[UOP_SCALAR_COUNT] = {
    [UOP_INDEX] = "index",    [UOP_BOOL] = "bool",        [UOP_INT8] = "char",     [UOP_UINT8] = "uchar",
    [UOP_INT16] = "short",    [UOP_UINT16] = "ushort",    [UOP_INT32] = "int",     [UOP_UINT32] = "uint",
    [UOP_INT64] = "long",     [UOP_UINT64] = "ulong",     [UOP_FLOAT16] = "half",  [UOP_BFLOAT16] = "bfloat16",
    [UOP_FLOAT32] = "float",  [UOP_FLOAT64] = "double",
};

const char *uop_text_dt_name(uop_scalar s) { return (unsigned)s < UOP_SCALAR_COUNT ? grammar_names[s] : NULL; }
const char *uop_text_dt_cname(uop_scalar s) { return (unsigned)s < UOP_SCALAR_COUNT ? c_names[s] : NULL; }

bool uop_text_dt_lookup(const char *name, size_t len, uop_scalar *out_scalar) {
  for (int s = 0; s < UOP_SCALAR_COUNT; s++) {
    const char *g = grammar_names[s];
    if (g && strlen(g) == len && memcmp(g, name, len) == 0) {
      *out_scalar = (uop_scalar)s;
      return true;
    }
  }
  return false;
}

char *uop_text_fmt_double(double v, char *buf) {
  if (isnan(v)) return strcpy(buf, "nan");
  if (isinf(v)) return strcpy(buf, v > 0 ? "inf" : "-inf");
  int prec = 1;
  for (; prec < 17; prec++) {
    snprintf(buf, 32, "%.*g", prec, v);
    double back = strtod(buf, NULL);
    if (memcmp(&back, &v, sizeof v) == 0) break;
  }
  snprintf(buf, 32, "%.*g", prec, v); /* %.17g always round-trips */
  /* Like Python's repr: positional notation below 1e16 (1e+01 -> 10.0), and a float always shows a '.' or an
   * exponent so that it does not read as an integer. */
  char *e = strchr(buf, 'e');
  if (e && fabs(v) < 1e16 && fabs(v) >= 1e-4) {
    int exp10 = atoi(e + 1);
    int decimals = prec - 1 - exp10;
    snprintf(buf, 32, "%.*f", decimals > 0 ? decimals : 0, v);
  }
  if (!strpbrk(buf, ".e")) strcat(buf, ".0");
  return buf;
}

bool uop_text_is_decimal(const char *s, size_t n) {
  size_t i = 0, digits = 0;
  if (i < n && (s[i] == '-' || s[i] == '+')) i++;
  while (i < n && isdigit((unsigned char)s[i])) i++, digits++;
  if (i < n && s[i] == '.') {
    i++;
    while (i < n && isdigit((unsigned char)s[i])) i++, digits++;
  }
  if (!digits) return false;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < n && (s[i] == '-' || s[i] == '+')) i++;
    size_t e = 0;
    while (i < n && isdigit((unsigned char)s[i])) i++, e++;
    if (!e) return false;
  }
  return i == n;
}

double uop_text_float_max(uop_scalar s) {
  switch (s) {
  case UOP_FLOAT16: return 65504.0;
  case UOP_BFLOAT16: return 3.38953138925153547590470800371487866880e38;
  case UOP_FLOAT32: return FLT_MAX;
  default: return DBL_MAX;
  }
}

const char *uop_text_quote(const char *s, size_t len, char *buf, size_t cap) {
  size_t n = len > 40 ? 40 : len, o = 0;
  buf[o++] = '\'';
  for (size_t i = 0; i < n && o + 5 < cap; i++) buf[o++] = isprint((unsigned char)s[i]) ? s[i] : '?';
  if (n < len) o += (size_t)snprintf(buf + o, cap - o, "...");
  buf[o++] = '\'';
  buf[o] = 0;
  return buf;
}
