/* Opt lists as text: "UPCAST:0:4,THREAD:0:2" (OP:AXIS:AMOUNT, comma separated; whitespace around items allowed). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"

static const char *const OPT_NAMES[CC_OPT_COUNT] = {"UPCAST", "UNROLL", "LOCAL", "GROUP", "GROUPTOP",
                                                     "THREAD", "NOLOCALS", "PADTO", "SWAP", "TC", "KBLOCK"};

const char *cc_opt_name(cc_opt_op op) { return (unsigned)op < CC_OPT_COUNT ? OPT_NAMES[op] : "?"; }

/* Parse a decimal integer at *p (optional '-'); false if none or out of range. */
static bool parse_int(const char **p, int64_t lo, int64_t hi, int64_t *out) {
  const char *s = *p;
  bool neg = *s == '-';
  if (neg) s++;
  if (!isdigit((unsigned char)*s)) return false;
  int64_t v = 0;
  while (isdigit((unsigned char)*s)) {
    if (v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (*s++ - '0');
  }
  if (neg) v = -v;
  if (v < lo || v > hi) return false;
  *p = s;
  *out = v;
  return true;
}

hcq_status cc_opts_parse(const char *text, cc_opt **out_opts, size_t *out_count) {
  *out_opts = NULL;
  *out_count = 0;
  if (!text) return hcq_status_make(HCQ_CODE_INVALID, "opts: NULL text");
  size_t cap = 1;
  for (const char *c = text; *c; c++) cap += *c == ',';
  cc_opt *opts = calloc(cap, sizeof *opts);
  if (!opts) return hcq_status_make(HCQ_CODE_NOMEM, "opts: out of memory");
  size_t n = 0;
  const char *p = text;
  while (isspace((unsigned char)*p)) p++;
  if (!*p) {
    *out_opts = opts;
    return HCQ_OK;
  }
  for (int item = 1;; item++) {
    while (isspace((unsigned char)*p)) p++;
    const char *start = p;
    while (isalpha((unsigned char)*p)) p++;
    size_t len = (size_t)(p - start);
    int op = -1;
    for (int k = 0; k < CC_OPT_COUNT; k++)
      if (strlen(OPT_NAMES[k]) == len && strncmp(OPT_NAMES[k], start, len) == 0) op = k;
    int64_t axis = 0, amount = 0;
    const char *what = NULL;
    if (op < 0) what = "an opt name (UPCAST UNROLL LOCAL GROUP GROUPTOP THREAD NOLOCALS PADTO SWAP TC KBLOCK)";
    else if (*p++ != ':') what = "':' after the opt name";
    else if (!parse_int(&p, 0, 1000, &axis)) what = "an axis number 0..1000";
    else if (*p++ != ':') what = "':' after the axis";
    else if (!parse_int(&p, 0, INT32_MAX, &amount)) what = "an amount >= 0";
    if (what) {
      free(opts);
      return hcq_status_make(HCQ_CODE_PARSE, "opts: item %d at column %d: expected %s", item,
                             (int)(start - text) + 1, what);
    }
    opts[n].op = (cc_opt_op)op;
    opts[n].axis = (int)axis;
    opts[n].amount = amount;
    n++;
    while (isspace((unsigned char)*p)) p++;
    if (!*p) break;
    if (*p != ',') {
      free(opts);
      return hcq_status_make(HCQ_CODE_PARSE, "opts: item %d: expected ',' or the end at column %d", item,
                             (int)(p - text) + 1);
    }
    p++;
  }
  *out_opts = opts;
  *out_count = n;
  return HCQ_OK;
}

char *cc_opts_format(const cc_opt *opts, size_t n) {
  size_t cap = 1 + n * 64, len = 0; /* an item: a name under 16 chars, an int, an int64 (20 digits), 3 separators */
  char *s = malloc(cap);
  if (!s) return NULL;
  s[0] = 0;
  for (size_t i = 0; i < n; i++)
    len += (size_t)snprintf(s + len, cap - len, "%s%s:%d:%lld", i ? "," : "", cc_opt_name(opts[i].op), opts[i].axis,
                            (long long)opts[i].amount);
  return s;
}
