/* PTX text -> the interpreter's pre-decoded form (ptx_internal.h). Grammar per NVIDIA's PTX ISA chapters
 * "Syntax" (statements, comments, labels, constants incl. 0f/0d hex floats), "State Spaces, Types, and
 * Variables" (.reg with %r<N> ranges, .shared with .align, .param) and "Directives" (.version, .target,
 * .address_size, .entry with .maxntid/.reqntid). Everything not understood is an error naming the line and the
 * statement: an unknown instruction, modifier, register, label or directive is never skipped. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator_tests/ptx_internal.h"

typedef struct regdecl {
  const char *name; /* prefix for a range ("%r" of %r<8>), else the full name */
  size_t len;
  uint32_t count;   /* range size; 0: a single register */
  int32_t row;
} regdecl;

typedef struct symdecl {
  const char *name;
  size_t len;
  uint32_t offset;
} symdecl;

typedef struct fixup {
  size_t ins;
  const char *name;
  size_t len;
} fixup;

typedef struct parser {
  ptx_module *m;
  char *buf;          /* the text with comments blanked (newlines kept) */
  size_t len, pos;
  uint32_t line;
  hcq_status st;
  /* the entry being built */
  ptx_entry *e;
  size_t capcode, caprows;
  regdecl *regs;
  size_t nregs, capregs;
  symdecl *shared, *labels;
  size_t nshared, capshared, nmodshared, nlabels, caplabels;
  fixup *fix;
  size_t nfix, capfix;
  uint32_t shared_top; /* next free shared byte */
  size_t capentries;
  /* the current statement */
  const char *stext;
  uint32_t sline;
} parser;

static void perr(parser *p, const char *f, ...) __attribute__((format(printf, 2, 3)));
static void perr(parser *p, const char *f, ...) {
  if (p->st) return;
  char msg[256];
  va_list ap;
  va_start(ap, f);
  vsnprintf(msg, sizeof msg, f, ap);
  va_end(ap);
  p->st = hcq_status_make(HCQ_CODE_PARSE, "ptx: line %u: %s in `%s`", p->sline, msg, p->stext ? p->stext : "");
}

static bool grow(parser *p, void **arr, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return true;
  size_t nc = *cap ? *cap * 2 : 16;
  while (nc < need) nc *= 2;
  void *n = realloc(*arr, nc * elem);
  if (!n) {
    if (!p->st) p->st = hcq_status_make(HCQ_CODE_NOMEM, "ptx: out of memory");
    return false;
  }
  *arr = n;
  *cap = nc;
  return true;
}

static const char *keep(parser *p, const char *s, size_t n) {
  ptx_module *m = p->m;
  if (!grow(p, (void **)&m->strings, &m->capstrings, m->nstrings + 1, sizeof *m->strings)) return "";
  char *c = malloc(n + 1);
  if (!c) {
    if (!p->st) p->st = hcq_status_make(HCQ_CODE_NOMEM, "ptx: out of memory");
    return "";
  }
  memcpy(c, s, n);
  c[n] = 0;
  m->strings[m->nstrings++] = c;
  return c;
}

/* ------------------------------------------------------------------------------------------------ lexing */

static void blank_comments(char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '"') { /* strings (.pragma "nounroll") may hold slashes */
      for (i++; i < n && s[i] != '"' && s[i] != '\n'; i++) {}
    } else if (s[i] == '/' && i + 1 < n && s[i + 1] == '/') {
      for (; i < n && s[i] != '\n'; i++) s[i] = ' ';
    } else if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
      for (; i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/'); i++)
        if (s[i] != '\n') s[i] = ' ';
      if (i < n) s[i] = ' ';
      if (i + 1 < n) s[i + 1] = ' ', i++;
    }
  }
}

/* The next statement: its text (whitespace collapsed) and what ended it (';', '{', '}', ':' for a label, 0 at
 * the end). A '{' inside an instruction (vector operands) belongs to it; one after a directive opens a body. */
static char next_stmt(parser *p, char *out, size_t cap) {
  while (p->pos < p->len && isspace((unsigned char)p->buf[p->pos]))
    if (p->buf[p->pos++] == '\n') p->line++;
  p->sline = p->line;
  if (p->pos >= p->len) return 0;
  char c = p->buf[p->pos];
  if (c == '{' || c == '}') {
    p->pos++;
    out[0] = 0;
    return c;
  }
  /* a label: identifier directly followed by ':' */
  size_t q = p->pos;
  while (q < p->len && (isalnum((unsigned char)p->buf[q]) || p->buf[q] == '_' || p->buf[q] == '$')) q++;
  if (q > p->pos && q < p->len && p->buf[q] == ':' && !isdigit((unsigned char)p->buf[p->pos])) {
    size_t n = q - p->pos < cap - 1 ? q - p->pos : cap - 1;
    memcpy(out, p->buf + p->pos, n);
    out[n] = 0;
    p->pos = q + 1;
    return ':';
  }
  bool directive = c == '.';
  /* .version, .target and .address_size end at the end of their line (PTX ISA "Directives": no semicolon) */
  const char *d = p->buf + p->pos;
  bool line_dir = !strncmp(d, ".version", 8) || !strncmp(d, ".target", 7) || !strncmp(d, ".address_size", 13);
  int brace = 0, paren = 0;
  size_t n = 0;
  bool space = false;
  while (p->pos < p->len) {
    char ch = p->buf[p->pos];
    if (ch == '(') paren++;
    if (ch == ')') paren--;
    if (ch == ';' && !brace && !paren) break;
    if (ch == '\n' && line_dir) break;
    if (ch == '{' && directive && !paren) break;
    if (ch == '}' && !directive && brace == 0) break;
    if (ch == '{') brace++;
    if (ch == '}') brace--;
    p->pos++;
    if (ch == '\n') p->line++;
    if (isspace((unsigned char)ch)) {
      space = n > 0;
      continue;
    }
    if (space && n < cap - 1) out[n++] = ' ';
    space = false;
    if (n < cap - 1) out[n++] = ch;
  }
  out[n] = 0;
  if (line_dir) {
    if (p->pos < p->len && p->buf[p->pos] == ';') p->pos++;
    return ';';
  }
  if (p->pos >= p->len) return 0;
  char t = p->buf[p->pos];
  if (t == ';') p->pos++;
  if (t == '{') p->pos++;
  return t;
}

/* Split s at top-level commas (outside [] {} ()) into at most max trimmed pieces; returns the count (-1: too many). */
static int split_commas(char *s, char **out, int max) {
  int n = 0, depth = 0;
  char *start = s;
  for (char *c = s;; c++) {
    if (*c == '[' || *c == '{' || *c == '(') depth++;
    if (*c == ']' || *c == '}' || *c == ')') depth--;
    if ((*c == ',' && depth == 0) || !*c) {
      bool end = !*c;
      *c = 0;
      while (isspace((unsigned char)*start)) start++;
      char *e = c;
      while (e > start && isspace((unsigned char)e[-1])) *--e = 0;
      if (*start || !end || n > 0) {
        if (n >= max) return -1;
        out[n++] = start;
      }
      if (end) break;
      start = c + 1;
    }
  }
  return n;
}

/* ------------------------------------------------------------------------------------------------ rows */

static int32_t add_row(parser *p, ptx_rowkind kind, ptx_type type, uint64_t value) {
  ptx_entry *e = p->e;
  if (kind != PRK_REG)
    for (size_t i = 0; i < e->nrows; i++)
      if (e->rows[i].kind == kind && e->rows[i].value == value) return (int32_t)i;
  if (e->nrows >= (1u << 24)) {
    perr(p, "too many registers");
    return -1;
  }
  if (!grow(p, (void **)&e->rows, &p->caprows, e->nrows + 1, sizeof *e->rows)) return -1;
  e->rows[e->nrows] = (ptx_row){.kind = (uint8_t)kind, .type = (uint8_t)type, .value = value};
  return (int32_t)e->nrows++;
}

static ptx_type type_named(const char *s, size_t n) {
  for (int t = PT_PRED; t < PT_COUNT; t++) {
    const char *nm = ptx_type_name((ptx_type)t);
    if (strlen(nm) == n && !memcmp(nm, s, n)) return (ptx_type)t;
  }
  return PT_NONE;
}

static const char *const SPECIALS[PSR_COUNT] = {
    "%tid.x",    "%tid.y",    "%tid.z",    "%ntid.x", "%ntid.y",   "%ntid.z",   "%ctaid.x",
    "%ctaid.y",  "%ctaid.z",  "%nctaid.x", "%nctaid.y", "%nctaid.z", "%laneid", "%warpid",
};

/* The row of register operand s ("%r3", "%tid.x"); -1 (and an error) when not declared. */
static int32_t reg_row(parser *p, const char *s, ptx_type *out_type) {
  for (int i = 0; i < PSR_COUNT; i++)
    if (!strcmp(s, SPECIALS[i])) {
      if (out_type) *out_type = PT_U32;
      return add_row(p, PRK_SPECIAL, PT_U32, (uint64_t)i);
    }
  size_t n = strlen(s);
  for (size_t i = 0; i < p->nregs; i++) {
    regdecl *r = &p->regs[i];
    if (r->count == 0) {
      if (r->len == n && !memcmp(r->name, s, n)) {
        if (out_type) *out_type = (ptx_type)p->e->rows[r->row].type;
        return r->row;
      }
      continue;
    }
    if (n <= r->len || memcmp(r->name, s, r->len)) continue;
    const char *d = s + r->len;
    if (!isdigit((unsigned char)*d) || (d[0] == '0' && d[1])) continue;
    char *end;
    unsigned long k = strtoul(d, &end, 10);
    if (*end) continue;
    if (k >= r->count) {
      perr(p, "register %s beyond its declaration %.*s<%u>", s, (int)r->len, r->name, r->count);
      return -1;
    }
    if (out_type) *out_type = (ptx_type)p->e->rows[r->row].type;
    return r->row + (int32_t)k;
  }
  perr(p, "undeclared register %s", s);
  return -1;
}

static uint64_t mask_to(uint64_t v, ptx_type t) {
  int b = ptx_type_bits(t);
  return b >= 64 || b == 0 ? v : v & (((uint64_t)1 << b) - 1);
}

/* An immediate operand as the bits of type t (PTX ISA "Constants": integers in decimal/hex/octal/binary with an
 * optional U, 0fXXXXXXXX single and 0dXXXXXXXXXXXXXXXX double hex floats, decimal floats). */
static bool parse_imm(parser *p, const char *s, ptx_type t, uint64_t *out) {
  bool neg = false;
  const char *c = s;
  if (*c == '-' || *c == '+') neg = *c++ == '-';
  if (c[0] == '0' && (c[1] == 'f' || c[1] == 'F' || c[1] == 'd' || c[1] == 'D')) {
    bool dbl = c[1] == 'd' || c[1] == 'D';
    size_t digits = strlen(c + 2);
    char *end;
    errno = 0;
    uint64_t bits = strtoull(c + 2, &end, 16);
    if (*end || digits != (dbl ? 16u : 8u) || errno) {
      perr(p, "bad hex float constant '%s'", s);
      return false;
    }
    if (!ptx_type_float(t) && t != PT_B32 && t != PT_B64) {
      perr(p, "float constant '%s' for a .%s operand", s, ptx_type_name(t));
      return false;
    }
    if (neg) bits ^= dbl ? (uint64_t)1 << 63 : 0x80000000u;
    ptx_type from = dbl ? PT_F64 : PT_F32;
    ptx_type to = ptx_type_float(t) ? t : (ptx_type_bits(t) == 64 ? PT_F64 : PT_F32);
    *out = to == from ? bits : ptx_cvt(bits, to, from, PR_RN, 0);
    return true;
  }
  bool is_float = false;
  for (const char *k = c; *k; k++)
    if (*k == '.' || ((*k == 'e' || *k == 'E') && !(c[0] == '0' && (c[1] == 'x' || c[1] == 'X')))) is_float = true;
  if (is_float) {
    char *end;
    double d = strtod(s, &end);
    if (*end || !ptx_type_float(t)) {
      perr(p, "bad constant '%s' for a .%s operand", s, ptx_type_name(t));
      return false;
    }
    uint64_t bits;
    memcpy(&bits, &d, 8);
    *out = t == PT_F64 ? bits : ptx_cvt(bits, t, PT_F64, PR_RN, 0);
    return true;
  }
  char *end;
  errno = 0;
  int base = 10;
  const char *digits = c;
  if (c[0] == '0' && (c[1] == 'x' || c[1] == 'X')) base = 16, digits = c + 2;
  else if (c[0] == '0' && (c[1] == 'b' || c[1] == 'B')) base = 2, digits = c + 2;
  else if (c[0] == '0' && c[1]) base = 8, digits = c + 1;
  uint64_t v = strtoull(digits, &end, base);
  if (*end == 'U') end++;
  if (end == digits || *end || errno || !isalnum((unsigned char)*digits)) {
    perr(p, "bad constant '%s'", s);
    return false;
  }
  if (neg) v = 0 - v;
  if (ptx_type_float(t)) { /* ptxas: "Arguments mismatch" */
    perr(p, "integer constant '%s' for a .%s operand (write a float constant)", s, ptx_type_name(t));
    return false;
  }
  *out = t == PT_PRED ? v != 0 : mask_to(v, t);
  return true;
}

static const symdecl *find_sym(const symdecl *syms, size_t n, const char *s, size_t len) {
  for (size_t i = 0; i < n; i++)
    if (syms[i].len == len && !memcmp(syms[i].name, s, len)) return &syms[i];
  return NULL;
}

/* A value operand: register, special register, immediate of type t, or a shared variable's address. */
static int32_t operand(parser *p, const char *s, ptx_type t) {
  if (!*s) {
    perr(p, "missing operand");
    return -1;
  }
  if (s[0] == '%') return reg_row(p, s, NULL);
  if (isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '+') {
    uint64_t v;
    if (!parse_imm(p, s, t, &v)) return -1;
    return add_row(p, PRK_CONST, t, v);
  }
  const symdecl *sh = find_sym(p->shared, p->nshared, s, strlen(s));
  if (sh) return add_row(p, PRK_CONST, PT_U64, sh->offset);
  perr(p, "unknown operand '%s'", s);
  return -1;
}

/* A destination: a declared register. */
static int32_t dest(parser *p, const char *s) {
  if (s[0] != '%') {
    perr(p, "destination '%s' is not a register", s);
    return -1;
  }
  for (int i = 0; i < PSR_COUNT; i++)
    if (!strcmp(s, SPECIALS[i])) {
      perr(p, "special register %s is read-only", s);
      return -1;
    }
  return reg_row(p, s, NULL);
}

/* ------------------------------------------------------------------------------------------------ modifiers */

enum {
  M_TYPE = 1 << 0, M_FRND = 1 << 1, M_IRND = 1 << 2, M_SAT = 1 << 3, M_FTZ = 1 << 4, M_APPROX = 1 << 5,
  M_FULL = 1 << 6, M_MUL = 1 << 7, M_CMP = 1 << 8, M_BOOL = 1 << 9, M_SPACE = 1 << 10, M_VEC = 1 << 11,
  M_CACHE = 1 << 12, M_TO = 1 << 13, M_UNI = 1 << 14, M_SYNC = 1 << 15, M_NAN = 1 << 16, M_ALIGNED = 1 << 17,
};

typedef struct opdef {
  const char *name;
  ptx_op op;
  unsigned allowed;
} opdef;

static const opdef OPS[] = {
    {"mov", PO_MOV, M_TYPE},
    {"ld", PO_LD, M_TYPE | M_SPACE | M_VEC | M_CACHE},
    {"st", PO_ST, M_TYPE | M_SPACE | M_VEC | M_CACHE},
    {"cvta", PO_CVTA, M_TYPE | M_SPACE | M_TO},
    {"cvt", PO_CVT, M_TYPE | M_FRND | M_IRND | M_SAT | M_FTZ},
    {"add", PO_ADD, M_TYPE | M_FRND | M_SAT | M_FTZ},
    {"sub", PO_SUB, M_TYPE | M_FRND | M_SAT | M_FTZ},
    {"mul", PO_MUL, M_TYPE | M_FRND | M_MUL | M_SAT | M_FTZ},
    {"mad", PO_MAD, M_TYPE | M_FRND | M_MUL | M_SAT | M_FTZ},
    {"fma", PO_FMA, M_TYPE | M_FRND | M_SAT | M_FTZ},
    {"div", PO_DIV, M_TYPE | M_FRND | M_FULL | M_APPROX | M_FTZ},
    {"rem", PO_REM, M_TYPE},
    {"neg", PO_NEG, M_TYPE | M_FTZ},
    {"abs", PO_ABS, M_TYPE | M_FTZ},
    {"not", PO_NOT, M_TYPE},
    {"and", PO_AND, M_TYPE},
    {"or", PO_OR, M_TYPE},
    {"xor", PO_XOR, M_TYPE},
    {"shl", PO_SHL, M_TYPE},
    {"shr", PO_SHR, M_TYPE},
    {"min", PO_MIN, M_TYPE | M_FTZ | M_NAN},
    {"max", PO_MAX, M_TYPE | M_FTZ | M_NAN},
    {"setp", PO_SETP, M_TYPE | M_CMP | M_BOOL | M_FTZ},
    {"selp", PO_SELP, M_TYPE},
    {"sqrt", PO_SQRT, M_TYPE | M_FRND | M_APPROX | M_FTZ},
    {"rcp", PO_RCP, M_TYPE | M_FRND | M_APPROX | M_FTZ},
    {"ex2", PO_EX2, M_TYPE | M_APPROX | M_FTZ},
    {"lg2", PO_LG2, M_TYPE | M_APPROX | M_FTZ},
    {"sin", PO_SIN, M_TYPE | M_APPROX | M_FTZ},
    {"cos", PO_COS, M_TYPE | M_APPROX | M_FTZ},
    {"bra", PO_BRA, M_UNI},
    {"bar", PO_BAR, M_SYNC},
    {"barrier", PO_BAR, M_SYNC | M_ALIGNED},
    {"ret", PO_RET, 0},
    {"exit", PO_RET, 0},
};

static const char *const CMPS[] = {NULL,  "eq",  "ne",  "lt",  "le",  "gt",  "ge",  "lo",  "ls", "hi",
                                   "hs",  "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
static const char *const RNDS[] = {NULL, "rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi"};

typedef struct mods {
  ptx_type types[2];
  int ntypes;
  ptx_rnd rnd;
  ptx_mulmode mul;
  ptx_cmp cmp;
  ptx_boolop boolop;
  ptx_space space;
  int vec;
  unsigned flags;
  bool to, full, sync;
} mods;

static bool parse_mods(parser *p, const opdef *d, char *mstr, mods *m) {
  memset(m, 0, sizeof *m);
  m->vec = 1;
  for (char *tok = mstr; tok && *tok;) {
    char *dot = strchr(tok, '.');
    if (dot) *dot = 0;
    size_t n = strlen(tok);
    ptx_type t = type_named(tok, n);
    unsigned a = d->allowed;
    bool ok = true;
    if (t != PT_NONE && (a & M_TYPE) && m->ntypes < 2) m->types[m->ntypes++] = t;
    else if ((a & M_CMP) && !m->cmp && (({
               int k = 0;
               for (int i = 1; i < (int)(sizeof CMPS / sizeof *CMPS); i++)
                 if (!strcmp(tok, CMPS[i])) k = i;
               m->cmp = (ptx_cmp)k;
               k;
             }))) {
    } else if ((a & M_BOOL) && (!strcmp(tok, "and") || !strcmp(tok, "or") || !strcmp(tok, "xor")))
      m->boolop = tok[0] == 'a' ? PB_AND : tok[0] == 'o' ? PB_OR : PB_XOR;
    else if ((a & M_MUL) && (!strcmp(tok, "lo") || !strcmp(tok, "hi") || !strcmp(tok, "wide")))
      m->mul = tok[0] == 'l' ? PM_LO : tok[0] == 'h' ? PM_HI : PM_WIDE;
    else if ((a & (M_FRND | M_IRND)) && !m->rnd && (({
               int k = 0;
               for (int i = 1; i < (int)(sizeof RNDS / sizeof *RNDS); i++)
                 if (!strcmp(tok, RNDS[i])) k = i;
               if (k >= PR_RNI && !(a & M_IRND)) k = 0;
               if (k && k < PR_RNI && !(a & M_FRND)) k = 0;
               m->rnd = (ptx_rnd)k;
               k;
             }))) {
    } else if ((a & M_SAT) && !strcmp(tok, "sat")) m->flags |= PF_SAT;
    else if ((a & M_FTZ) && !strcmp(tok, "ftz")) m->flags |= PF_FTZ;
    else if ((a & M_APPROX) && !strcmp(tok, "approx")) m->flags |= PF_APPROX;
    else if ((a & M_FULL) && !strcmp(tok, "full")) m->full = true;
    else if ((a & M_NAN) && !strcmp(tok, "NaN")) m->flags |= PF_NAN;
    else if ((a & M_SPACE) && !strcmp(tok, "global")) m->space = PS_GLOBAL;
    else if ((a & M_SPACE) && !strcmp(tok, "shared")) m->space = PS_SHARED;
    else if ((a & M_SPACE) && !strcmp(tok, "param") && d->op == PO_LD) m->space = PS_PARAM;
    else if ((a & M_VEC) && (!strcmp(tok, "v2") || !strcmp(tok, "v4"))) m->vec = tok[1] - '0';
    else if ((a & M_CACHE) && (!strcmp(tok, "ca") || !strcmp(tok, "cg") || !strcmp(tok, "cs") || !strcmp(tok, "lu") ||
                               !strcmp(tok, "cv") || !strcmp(tok, "wb") || !strcmp(tok, "wt") || !strcmp(tok, "nc") ||
                               !strcmp(tok, "volatile"))) {
      /* cache operators and .volatile change nothing for one thread's view here */
    } else if ((a & M_TO) && !strcmp(tok, "to")) m->to = true;
    else if ((a & M_UNI) && !strcmp(tok, "uni")) {
    } else if ((a & M_SYNC) && !strcmp(tok, "sync")) m->sync = true;
    else if ((a & M_ALIGNED) && !strcmp(tok, "aligned")) {
    } else ok = false;
    if (!ok) {
      perr(p, "unknown or unsupported modifier '.%s' of %s", tok, d->name);
      return false;
    }
    tok = dot ? dot + 1 : NULL;
  }
  return true;
}

/* ------------------------------------------------------------------------------------------------ instructions */

static bool is_int(ptx_type t) { return t != PT_NONE && t != PT_PRED && !ptx_type_float(t); }
static bool is_bits(ptx_type t) { return t == PT_B8 || t == PT_B16 || t == PT_B32 || t == PT_B64; }

static ptx_type wide_of(ptx_type t) {
  switch (t) {
    case PT_S16: return PT_S32;
    case PT_U16: return PT_U32;
    case PT_S32: return PT_S64;
    case PT_U32: return PT_U64;
    default: return PT_NONE;
  }
}

/* An address operand "[base+off]" / "[sym]" / "[sym+off]" into ins (s[0], off, param). */
static bool address(parser *p, char *s, ptx_ins *ins) {
  size_t n = strlen(s);
  if (n < 3 || s[0] != '[' || s[n - 1] != ']') {
    perr(p, "expected an address [..], got '%s'", s);
    return false;
  }
  s[n - 1] = 0;
  char *in = s + 1;
  while (isspace((unsigned char)*in)) in++;
  if (!*in) {
    perr(p, "empty address []");
    return false;
  }
  char *plus = NULL;
  for (char *c = in + 1; *c; c++)
    if (*c == '+' || *c == '-') {
      plus = c;
      break;
    }
  int64_t off = 0;
  if (plus) {
    char *num = plus + (plus[0] == '+' ? 1 : 0);
    while (isspace((unsigned char)*num)) num++;
    char *end;
    errno = 0;
    off = strtoll(num, &end, 0);
    while (isspace((unsigned char)*end)) end++;
    if (*end || errno || end == num) {
      perr(p, "bad address offset in '[%s]'", in);
      return false;
    }
    *plus = 0;
  }
  char *e = in + strlen(in);
  while (e > in && isspace((unsigned char)e[-1])) *--e = 0;
  ins->s[0] = -1;
  ins->param = -1;
  if (in[0] == '%') {
    if ((ins->s[0] = reg_row(p, in, NULL)) < 0) return false;
    if (ins->space == PS_PARAM) {
      perr(p, "parameters are read through their names, not a register");
      return false;
    }
  } else if (isdigit((unsigned char)in[0])) {
    if (plus) {
      perr(p, "bad address '[%s]'", in);
      return false;
    }
    char *end;
    off = (int64_t)strtoull(in, &end, 0);
    if (*end) {
      perr(p, "bad address '[%s]'", in);
      return false;
    }
  } else if (ins->space == PS_PARAM) {
    const ptx_entry *en = p->e;
    size_t i;
    for (i = 0; i < en->info.nparams; i++)
      if (!strcmp(en->params[i].name, in)) break;
    if (i == en->info.nparams) {
      perr(p, "unknown parameter '%s'", in);
      return false;
    }
    ins->param = (int32_t)i;
  } else if (ins->space == PS_SHARED) {
    const symdecl *sh = find_sym(p->shared, p->nshared, in, strlen(in));
    if (!sh) {
      perr(p, "unknown shared variable '%s'", in);
      return false;
    }
    off += sh->offset;
  } else {
    perr(p, "unknown address symbol '%s' (no .global/.const variables here)", in);
    return false;
  }
  ins->off = off;
  return true;
}

/* Operands of a vector "{%a, %b}" (or one register when vec == 1) into rows. */
static bool vec_operands(parser *p, char *s, int vec, int32_t *rows, bool is_dest, ptx_type t) {
  char *items[4];
  int n;
  if (vec == 1) {
    items[0] = s;
    n = 1;
  } else {
    size_t len = strlen(s);
    if (len < 2 || s[0] != '{' || s[len - 1] != '}') {
      perr(p, "expected a vector {..} of %d registers", vec);
      return false;
    }
    s[len - 1] = 0;
    n = split_commas(s + 1, items, 4);
    if (n != vec) {
      perr(p, "expected %d vector elements", vec);
      return false;
    }
  }
  for (int i = 0; i < n; i++)
    if ((rows[i] = is_dest ? dest(p, items[i]) : operand(p, items[i], t)) < 0) return false;
  return true;
}

/* PTX ISA "Operand Type Information": a .bN register or instruction type goes with any type of N bits, a
 * float only with the same float, .uN/.sN with each other; "Operand Size Exceeding Instruction-Type Size": ld, st and cvt also take registers wider than an
 * integer or bit type. Like ptxas ("Arguments mismatch"), anything else is refused. */
static bool compat(ptx_type r, ptx_type t, bool wider_ok) {
  if (r == PT_PRED || t == PT_PRED) return r == t;
  int rb = ptx_type_bits(r), tb = ptx_type_bits(t);
  if (rb != tb) return wider_ok && rb > tb && !ptx_type_float(r) && !ptx_type_float(t);
  if (is_bits(r) || is_bits(t)) return true;
  if (ptx_type_float(r) || ptx_type_float(t)) return r == t;
  return true; /* .uN and .sN */
}

static bool check_one(parser *p, int32_t row, ptx_type t, bool wider_ok, const char *what) {
  if (row < 0 || p->e->rows[row].kind == PRK_CONST) return true;
  ptx_type r = (ptx_type)p->e->rows[row].type;
  if (compat(r, t, wider_ok)) return true;
  perr(p, "%s register of type .%s where the instruction needs .%s", what, ptx_type_name(r), ptx_type_name(t));
  return false;
}

static bool check_operands(parser *p, const ptx_ins *in, const opdef *d) {
  ptx_type t = (ptx_type)in->type, st = (ptx_type)in->stype;
  ptx_type wt = in->mul == PM_WIDE ? wide_of(t) : t;
  bool io = d->op == PO_LD || d->op == PO_ST || d->op == PO_CVT;
  for (int i = 0; i < in->nd; i++)
    if (!check_one(p, in->d[i], d->op == PO_SETP ? PT_PRED : wt, io, "destination")) return false;
  switch (d->op) {
    case PO_LD: case PO_ST:
      if (in->s[0] >= 0) {
        ptx_type r = (ptx_type)p->e->rows[in->s[0]].type;
        if (ptx_type_bits(r) != 64 || ptx_type_float(r)) {
          perr(p, "address register of type .%s (.address_size 64 needs a 64-bit integer register)", ptx_type_name(r));
          return false;
        }
      }
      for (int i = 1; i < in->ns; i++)
        if (!check_one(p, in->s[i], t, true, "source")) return false;
      return true;
    case PO_CVT: return check_one(p, in->s[0], st, true, "source");
    case PO_SHL: case PO_SHR:
      return check_one(p, in->s[0], t, false, "source") && check_one(p, in->s[1], PT_U32, false, "shift amount");
    case PO_SELP: case PO_SETP:
      return check_one(p, in->s[0], t, false, "source") && check_one(p, in->s[1], t, false, "source") &&
             check_one(p, in->s[2], PT_PRED, false, "predicate");
    case PO_BAR: return check_one(p, in->s[0], PT_U32, false, "barrier") && check_one(p, in->s[1], PT_U32, false, "count");
    default:
      for (int i = 0; i < in->ns; i++)
        if (!check_one(p, in->s[i], i == 2 ? wt : t, false, "source")) return false;
      return true;
  }
}

static bool want_args(parser *p, int got, int want, const char *name) {
  if (got != want) perr(p, "%s takes %d operands, got %d", name, want, got);
  return got == want;
}

static void instruction(parser *p, char *text) {
  ptx_ins ins;
  memset(&ins, 0, sizeof ins);
  ins.guard = -1;
  ins.param = -1;
  for (int i = 0; i < 4; i++) ins.d[i] = ins.s[i] = -1;
  ins.line = p->sline;
  ins.text = p->stext;
  char *c = text;
  if (*c == '@') {
    c++;
    if (*c == '!') {
      ins.flags |= PF_GUARD_NEG;
      c++;
    }
    char *sp = strchr(c, ' ');
    if (!sp) {
      perr(p, "a guard without an instruction");
      return;
    }
    *sp = 0;
    ptx_type gt;
    if ((ins.guard = reg_row(p, c, &gt)) < 0) return;
    if (gt != PT_PRED) {
      perr(p, "guard %s is not a predicate", c);
      return;
    }
    c = sp + 1;
  }
  char *sp = strchr(c, ' ');
  char *args = sp ? sp + 1 : c + strlen(c);
  if (sp) *sp = 0;
  char *dot = strchr(c, '.');
  if (dot) *dot = 0;
  const opdef *d = NULL;
  for (size_t i = 0; i < sizeof OPS / sizeof *OPS; i++)
    if (!strcmp(OPS[i].name, c)) d = &OPS[i];
  if (!d) {
    perr(p, "unknown or unsupported instruction '%s'", c);
    return;
  }
  mods m;
  if (!parse_mods(p, d, dot ? dot + 1 : NULL, &m)) return;
  char *a[8];
  int na = split_commas(args, a, 8);
  if (na < 0) {
    perr(p, "too many operands");
    return;
  }
  ins.op = (uint8_t)d->op;
  ins.type = m.ntypes ? (uint8_t)m.types[0] : PT_NONE;
  ins.rnd = (uint8_t)m.rnd;
  ins.mul = (uint8_t)m.mul;
  ins.cmp = (uint8_t)m.cmp;
  ins.boolop = (uint8_t)m.boolop;
  ins.space = (uint8_t)m.space;
  ins.vec = (uint8_t)m.vec;
  ins.flags |= (uint8_t)m.flags;
  ptx_type t = (ptx_type)ins.type;
  int want_types = d->op == PO_CVT ? 2 : (d->op == PO_BRA || d->op == PO_BAR || d->op == PO_RET) ? 0 : 1;
  if (m.ntypes != want_types) {
    perr(p, "%s needs %d type modifier%s", d->name, want_types, want_types == 1 ? "" : "s");
    return;
  }
  bool fl = ptx_type_float(t);
  if ((m.flags & PF_FTZ) && t != PT_F32 && !(d->op == PO_CVT && (m.types[0] == PT_F32 || m.types[1] == PT_F32))) {
    perr(p, ".ftz applies to .f32 only");
    return;
  }
  switch (d->op) {
    case PO_MOV:
      if (!want_args(p, na, 2, "mov")) return;
      ins.d[0] = dest(p, a[0]);
      ins.s[0] = operand(p, a[1], t);
      ins.nd = ins.ns = 1;
      break;
    case PO_LD: case PO_ST: {
      if (!want_args(p, na, 2, d->name)) return;
      if (!m.space) {
        perr(p, "%s needs a state space (.global, .shared%s); generic addressing is not supported", d->name,
             d->op == PO_LD ? ", .param" : "");
        return;
      }
      if (t == PT_PRED || (m.vec > 1 && m.space == PS_PARAM)) {
        perr(p, "bad type or vector for %s", d->name);
        return;
      }
      if (m.vec * ptx_type_bits(t) > 128) {
        perr(p, "vector of %d x %d bits exceeds 128 bits", m.vec, ptx_type_bits(t));
        return;
      }
      ins.stype = ins.type;
      char *addr = d->op == PO_LD ? a[1] : a[0], *regs = d->op == PO_LD ? a[0] : a[1];
      if (!address(p, addr, &ins)) return;
      if (d->op == PO_LD) {
        if (!vec_operands(p, regs, m.vec, ins.d, true, t)) return;
        ins.nd = (uint8_t)m.vec;
      } else {
        if (!vec_operands(p, regs, m.vec, ins.s + 1, false, t)) return;
        ins.ns = (uint8_t)(1 + m.vec);
      }
      break;
    }
    case PO_CVTA:
      if (!want_args(p, na, 2, "cvta")) return;
      if (m.space != PS_GLOBAL || (t != PT_U64 && t != PT_U32)) {
        perr(p, "only cvta(.to).global.u64 is supported");
        return;
      }
      ins.d[0] = dest(p, a[0]);
      ins.s[0] = operand(p, a[1], t);
      ins.nd = ins.ns = 1;
      break;
    case PO_CVT: {
      if (!want_args(p, na, 2, "cvt")) return;
      ptx_type dt = m.types[0], st = m.types[1];
      ins.stype = (uint8_t)st;
      if (dt == PT_PRED || st == PT_PRED || is_bits(dt) || is_bits(st)) {
        perr(p, "cvt between .%s and .%s", ptx_type_name(dt), ptx_type_name(st));
        return;
      }
      bool df = ptx_type_float(dt), sf = ptx_type_float(st);
      /* PTX ISA "cvt": int->float and float narrowing need a float rounding; float->int an integer rounding;
       * float widening none; float->same float an integer rounding or none */
      bool irnd = m.rnd >= PR_RNI, frnd = m.rnd && m.rnd < PR_RNI;
      const char *why = NULL;
      if (!df && sf && !irnd) why = "float-to-integer cvt needs .rni/.rzi/.rmi/.rpi";
      else if (df && !sf && !frnd) why = "integer-to-float cvt needs .rn/.rz/.rm/.rp";
      else if (df && sf && ptx_type_bits(dt) < ptx_type_bits(st) && !frnd) why = "narrowing cvt needs .rn/.rz/.rm/.rp";
      else if (df && sf && ptx_type_bits(dt) > ptx_type_bits(st) && m.rnd) why = "widening cvt takes no rounding";
      else if (df && sf && dt == st && frnd) why = "float-to-same-float cvt takes an integer rounding";
      else if (!df && !sf && m.rnd) why = "integer cvt takes no rounding";
      if (why) {
        perr(p, "%s", why);
        return;
      }
      ins.d[0] = dest(p, a[0]);
      ins.s[0] = operand(p, a[1], st);
      ins.nd = ins.ns = 1;
      break;
    }
    case PO_ADD: case PO_SUB: case PO_MUL: case PO_MAD: case PO_FMA: case PO_DIV: case PO_REM: case PO_AND:
    case PO_OR: case PO_XOR: case PO_MIN: case PO_MAX: case PO_SHL: case PO_SHR: {
      int nsrc = d->op == PO_MAD || d->op == PO_FMA ? 3 : 2;
      if (!want_args(p, na, nsrc + 1, d->name)) return;
      bool logic = d->op == PO_AND || d->op == PO_OR || d->op == PO_XOR;
      bool shift = d->op == PO_SHL || d->op == PO_SHR;
      bool narrow = ptx_type_bits(t) < 16;
      bool bad = logic ? !(t == PT_PRED || (is_bits(t) && !narrow))
                 : d->op == PO_SHL ? !(is_bits(t) && !narrow)
                 : d->op == PO_SHR ? !(is_int(t) && !narrow)
                                   : t == PT_PRED || is_bits(t) || narrow;
      if (bad) {
        perr(p, "%s does not take .%s", d->name, ptx_type_name(t));
        return;
      }
      if (t == PT_F16 || t == PT_BF16) {
        perr(p, "%s.%s is not supported (the renderer computes half floats in f32)", d->name, ptx_type_name(t));
        return;
      }
      if (d->op == PO_FMA && !fl) {
        perr(p, "fma needs a float type");
        return;
      }
      if ((d->op == PO_REM && fl) || (fl && m.mul)) {
        perr(p, "%s.%s is not an instruction", d->name, ptx_type_name(t));
        return;
      }
      if (!fl && (m.rnd || (m.flags & PF_FTZ))) {
        perr(p, "a float rounding or .ftz on integer %s", d->name);
        return;
      }
      if (!fl && is_int(t) && (d->op == PO_MUL || d->op == PO_MAD) && !m.mul) {
        perr(p, "integer %s needs .lo, .hi or .wide", d->name);
        return;
      }
      if (m.mul == PM_WIDE && wide_of(t) == PT_NONE) {
        perr(p, "%s.wide needs a 16- or 32-bit integer type", d->name);
        return;
      }
      if (fl && (d->op == PO_FMA || d->op == PO_MAD) && !m.rnd) {
        perr(p, "%s.%s needs a rounding modifier", d->name, ptx_type_name(t));
        return;
      }
      if (fl && d->op == PO_DIV && !m.rnd && !m.full && !(m.flags & PF_APPROX)) {
        perr(p, "div.%s needs .approx, .full or a rounding modifier", ptx_type_name(t));
        return;
      }
      if ((m.flags & PF_SAT) && !(t == PT_F32 || t == PT_F64 || (t == PT_S32 && (d->op == PO_ADD || d->op == PO_SUB)))) {
        perr(p, ".sat is not supported on %s.%s", d->name, ptx_type_name(t));
        return;
      }
      ptx_type wt = m.mul == PM_WIDE ? wide_of(t) : t;
      ins.d[0] = dest(p, a[0]);
      ins.s[0] = operand(p, a[1], t);
      ins.s[1] = operand(p, a[2], shift ? PT_U32 : t);
      if (nsrc == 3) ins.s[2] = operand(p, a[3], wt);
      ins.nd = 1;
      ins.ns = (uint8_t)nsrc;
      break;
    }
    case PO_NEG: case PO_ABS: case PO_NOT: case PO_SQRT: case PO_RCP: case PO_EX2: case PO_LG2: case PO_SIN:
    case PO_COS: {
      if (!want_args(p, na, 2, d->name)) return;
      bool tr = d->op >= PO_SQRT;
      if (d->op == PO_NOT ? !(is_bits(t) || t == PT_PRED) && t != PT_B8 : tr ? !(t == PT_F32 || t == PT_F64)
                                                                       : !(fl || ptx_type_signed(t))) {
        perr(p, "%s does not take .%s", d->name, ptx_type_name(t));
        return;
      }
      if (d->op >= PO_EX2 && (!(m.flags & PF_APPROX) || t != PT_F32)) {
        perr(p, "%s is supported as %s.approx(.ftz).f32 only", d->name, d->name);
        return;
      }
      if ((d->op == PO_SQRT || d->op == PO_RCP) && !m.rnd && !(m.flags & PF_APPROX)) {
        perr(p, "%s needs .approx or a rounding modifier", d->name);
        return;
      }
      if (t == PT_F16 || t == PT_BF16 || t == PT_B8) {
        perr(p, "%s.%s is not supported", d->name, ptx_type_name(t));
        return;
      }
      ins.d[0] = dest(p, a[0]);
      ins.s[0] = operand(p, a[1], t);
      ins.nd = ins.ns = 1;
      break;
    }
    case PO_SETP: {
      if (na != 3 && na != 4) {
        perr(p, "setp takes 3 or 4 operands");
        return;
      }
      if (!m.cmp || t == PT_PRED || t == PT_F16 || t == PT_BF16 || t == PT_B8 || t == PT_U8 || t == PT_S8) {
        perr(p, "setp needs a comparison and a numeric type");
        return;
      }
      bool fcmp = m.cmp >= PC_EQU || fl;
      if ((fcmp && !fl) || (is_bits(t) && m.cmp != PC_EQ && m.cmp != PC_NE) ||
          (fl && m.cmp >= PC_LO && m.cmp <= PC_HS)) {
        perr(p, "comparison .%s does not apply to .%s", CMPS[m.cmp], ptx_type_name(t));
        return;
      }
      if ((na == 4) != (m.boolop != PB_NONE)) {
        perr(p, "setp with .and/.or/.xor takes a fourth (predicate) operand");
        return;
      }
      char *bar = strchr(a[0], '|');
      if (bar) {
        *bar = 0;
        ins.d[1] = dest(p, bar + 1);
        ins.nd = 2;
      } else {
        ins.nd = 1;
      }
      ins.d[0] = dest(p, a[0]);
      ins.s[0] = operand(p, a[1], t);
      ins.s[1] = operand(p, a[2], t);
      ins.ns = 2;
      if (na == 4) {
        const char *c3 = a[3];
        if (c3[0] == '!') { /* a negated predicate operand */
          perr(p, "negated predicate operands are not supported");
          return;
        }
        ins.s[2] = operand(p, c3, PT_PRED);
        ins.ns = 3;
      }
      break;
    }
    case PO_SELP:
      if (!want_args(p, na, 4, "selp")) return;
      if (t == PT_PRED || t == PT_B8 || t == PT_U8 || t == PT_S8 || t == PT_F16 || t == PT_BF16) {
        perr(p, "selp does not take .%s", ptx_type_name(t));
        return;
      }
      ins.d[0] = dest(p, a[0]);
      ins.s[0] = operand(p, a[1], t);
      ins.s[1] = operand(p, a[2], t);
      ins.s[2] = operand(p, a[3], PT_PRED);
      ins.nd = 1;
      ins.ns = 3;
      break;
    case PO_BRA: {
      if (!want_args(p, na, 1, "bra")) return;
      if (!grow(p, (void **)&p->fix, &p->capfix, p->nfix + 1, sizeof *p->fix)) return;
      p->fix[p->nfix++] = (fixup){p->e->ncode, keep(p, a[0], strlen(a[0])), strlen(a[0])};
      break;
    }
    case PO_BAR: {
      if (!m.sync || na < 1 || na > 2) {
        perr(p, "only bar.sync / barrier.sync with a barrier id (and a thread count) is supported");
        return;
      }
      ins.s[0] = operand(p, a[0], PT_U32);
      if (na == 2) ins.s[1] = operand(p, a[1], PT_U32);
      ins.ns = (uint8_t)na;
      break;
    }
    case PO_RET:
      if (na != 0) {
        perr(p, "%s takes no operands", d->name);
        return;
      }
      break;
    default: perr(p, "internal: unhandled instruction"); return;
  }
  if (p->st) return;
  if (!check_operands(p, &ins, d)) return;
  ins.tbits = (uint8_t)ptx_type_bits(t);
  ins.tsigned = ptx_type_signed(t);
  ins.tfloat = ptx_type_float(t);
  ptx_entry *e = p->e;
  if (!grow(p, (void **)&e->code, &p->capcode, e->ncode + 1, sizeof *e->code)) return;
  e->code[e->ncode++] = ins;
}

/* ------------------------------------------------------------------------------------------------ declarations */

/* ".reg .b32 %r<5>" or ".reg .f32 %f1, %f2" */
static void reg_decl(parser *p, char *s) {
  char *sp = strchr(s, ' ');
  if (!sp || sp[1] != '.') {
    perr(p, "expected .reg .TYPE names");
    return;
  }
  char *ty = sp + 2, *names = strchr(ty, ' ');
  if (!names) {
    perr(p, "expected register names");
    return;
  }
  *names++ = 0;
  ptx_type t = type_named(ty, strlen(ty));
  if (t == PT_NONE || t == PT_B8 || t == PT_U8 || t == PT_S8) {
    perr(p, "bad register type .%s", ty);
    return;
  }
  char *items[64];
  int n = split_commas(names, items, 64);
  if (n <= 0) {
    perr(p, "expected register names");
    return;
  }
  for (int i = 0; i < n && !p->st; i++) {
    char *nm = items[i], *lt = strchr(nm, '<');
    if (nm[0] != '%' || !nm[1]) {
      perr(p, "register name '%s' must start with %%", nm);
      return;
    }
    uint32_t count = 0;
    size_t len = strlen(nm);
    if (lt) {
      char *end;
      unsigned long k = strtoul(lt + 1, &end, 10);
      if (end == lt + 1 || strcmp(end, ">") || k == 0 || k > (1u << 20)) {
        perr(p, "bad register range '%s'", nm);
        return;
      }
      count = (uint32_t)k;
      len = (size_t)(lt - nm);
    }
    for (size_t j = 0; j < p->nregs; j++)
      if (p->regs[j].len == len && !memcmp(p->regs[j].name, nm, len)) {
        perr(p, "register %.*s declared twice", (int)len, nm);
        return;
      }
    if (!grow(p, (void **)&p->regs, &p->capregs, p->nregs + 1, sizeof *p->regs)) return;
    int32_t first = -1;
    for (uint32_t k = 0; k < (count ? count : 1); k++) {
      int32_t r = add_row(p, PRK_REG, t, 0);
      if (r < 0) return;
      if (k == 0) first = r;
    }
    p->regs[p->nregs++] = (regdecl){keep(p, nm, len), len, count, first};
  }
}

static uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

/* ".shared .align 16 .b8 local0[64]" */
static void shared_decl(parser *p, char *s, bool module_level) {
  char *items[8];
  int n = 0;
  for (char *tok = strtok(s, " "); tok && n < 8; tok = strtok(NULL, " ")) items[n++] = tok;
  uint32_t align = 0;
  ptx_type t = PT_NONE;
  char *name = NULL;
  for (int i = 1; i < n; i++) {
    if (!strcmp(items[i], ".align") && i + 1 < n) {
      align = (uint32_t)strtoul(items[++i], NULL, 10);
      if (!align || (align & (align - 1))) {
        perr(p, "bad .align");
        return;
      }
    } else if (items[i][0] == '.' && type_named(items[i] + 1, strlen(items[i] + 1)) != PT_NONE) {
      t = type_named(items[i] + 1, strlen(items[i] + 1));
    } else if (items[i][0] == '.') {
      perr(p, "unsupported .shared attribute %s", items[i]);
      return;
    } else {
      name = items[i];
    }
  }
  if (t == PT_NONE || t == PT_PRED || !name) {
    perr(p, "expected .shared [.align N] .TYPE name[N]");
    return;
  }
  uint64_t count = 1;
  char *br = strchr(name, '[');
  size_t nlen = strlen(name);
  if (br) {
    char *end;
    count = strtoull(br + 1, &end, 10);
    if (end == br + 1 || strcmp(end, "]") || !count) {
      perr(p, "bad array size in %s", name);
      return;
    }
    nlen = (size_t)(br - name);
  }
  uint32_t esize = (uint32_t)ptx_type_bits(t) / 8;
  if (!align) align = esize;
  uint64_t bytes = count * esize;
  uint64_t off = align_up(p->shared_top, align);
  if (off + bytes > (1u << 24)) {
    perr(p, "shared memory beyond 16 MiB");
    return;
  }
  if (find_sym(p->shared, p->nshared, name, nlen)) {
    perr(p, "shared variable %.*s declared twice", (int)nlen, name);
    return;
  }
  if (!grow(p, (void **)&p->shared, &p->capshared, p->nshared + 1, sizeof *p->shared)) return;
  p->shared[p->nshared++] = (symdecl){keep(p, name, nlen), nlen, (uint32_t)off};
  p->shared_top = (uint32_t)(off + bytes);
  if (module_level) {
    p->nmodshared = p->nshared;
    p->m->shared_B = p->shared_top;
  }
}

/* "NAME(.param .u64 a, .param .s32 b) .maxntid 4, 1, 1" */
static void entry_header(parser *p, char *s) {
  ptx_module *m = p->m;
  if (!grow(p, (void **)&m->entries, &p->capentries, m->nentries + 1, sizeof *m->entries)) return;
  ptx_entry *e = &m->entries[m->nentries++];
  memset(e, 0, sizeof *e);
  p->e = e;
  p->capcode = p->caprows = 0;
  p->nregs = p->nlabels = p->nfix = 0;
  p->nshared = p->nmodshared;
  p->shared_top = m->shared_B;
  char *lp = strchr(s, '('), *rp = lp ? strrchr(s, ')') : NULL;
  char *name = s;
  if (!lp || !rp) {
    perr(p, "expected .entry NAME(params)");
    return;
  }
  char *ne = lp;
  while (ne > name && isspace((unsigned char)ne[-1])) ne--;
  if (ne == name) {
    perr(p, "entry without a name");
    return;
  }
  e->info.name = keep(p, name, (size_t)(ne - name));
  *rp = 0;
  char *items[64];
  int n = split_commas(lp + 1, items, 64);
  if (n < 0) {
    perr(p, "more than 64 parameters");
    return;
  }
  e->params = calloc((size_t)(n ? n : 1), sizeof *e->params);
  if (!e->params) {
    perr(p, "out of memory");
    return;
  }
  uint32_t off = 0;
  for (int i = 0; i < n; i++) {
    char *tok[6];
    int k = 0;
    for (char *t = strtok(items[i], " "); t && k < 6; t = strtok(NULL, " ")) tok[k++] = t;
    if (k < 3 || strcmp(tok[0], ".param")) {
      perr(p, "bad parameter '%s'", items[i]);
      return;
    }
    uint32_t align = 0;
    int j = 1;
    if (!strcmp(tok[j], ".align") && k >= 5) align = (uint32_t)strtoul(tok[++j], NULL, 10), j++;
    ptx_type t = tok[j][0] == '.' ? type_named(tok[j] + 1, strlen(tok[j] + 1)) : PT_NONE;
    if (t == PT_NONE || t == PT_PRED || k != j + 2) {
      perr(p, "bad parameter '%s'", tok[j]);
      return;
    }
    char *pname = tok[j + 1], *br = strchr(pname, '[');
    uint32_t count = 1;
    size_t plen = strlen(pname);
    if (br) {
      char *end;
      count = (uint32_t)strtoul(br + 1, &end, 10);
      if (!count || strcmp(end, "]") || count > 4096) {
        perr(p, "bad parameter array '%s'", pname);
        return;
      }
      plen = (size_t)(br - pname);
    }
    uint32_t esize = (uint32_t)ptx_type_bits(t) / 8;
    if (!align) align = esize;
    off = align_up(off, align);
    e->params[i] = (ptx_param_info){keep(p, pname, plen), esize * count, align, off};
    off += esize * count;
  }
  e->info.params = e->params;
  e->info.nparams = (size_t)n;
  e->info.params_size_B = off;
  /* performance directives after the parameter list */
  char *rest = rp + 1;
  while (*rest && !p->st) {
    while (isspace((unsigned char)*rest)) rest++;
    if (!*rest) break;
    char *dir = rest;
    while (*rest && !isspace((unsigned char)*rest)) rest++;
    size_t dl = (size_t)(rest - dir);
    bool ntid = (dl == 8 && !memcmp(dir, ".maxntid", 8)) || (dl == 8 && !memcmp(dir, ".reqntid", 8));
    bool one = (dl == 13 && !memcmp(dir, ".minnctapersm", 13)) || (dl == 8 && !memcmp(dir, ".maxnreg", 8));
    if (!ntid && !one) {
      perr(p, "unsupported entry directive %.*s", (int)dl, dir);
      return;
    }
    for (int d = 0; d < (ntid ? 3 : 1); d++) {
      while (isspace((unsigned char)*rest) || *rest == ',') rest++;
      if (!isdigit((unsigned char)*rest)) {
        if (d > 0 && ntid) break; /* .maxntid x or x, y */
        perr(p, "expected a number after %.*s", (int)dl, dir);
        return;
      }
      unsigned long v = strtoul(rest, &rest, 10);
      if (ntid) e->info.maxntid[d] = (uint32_t)v;
      if (ntid) e->info.reqntid = dir[1] == 'r';
    }
    if (ntid)
      for (int d = 0; d < 3; d++)
        if (!e->info.maxntid[d]) e->info.maxntid[d] = 1;
  }
}

static void finish_entry(parser *p) {
  ptx_entry *e = p->e;
  for (size_t i = 0; i < p->nfix && !p->st; i++) {
    const symdecl *l = find_sym(p->labels, p->nlabels, p->fix[i].name, p->fix[i].len);
    ptx_ins *ins = &e->code[p->fix[i].ins];
    if (!l) {
      p->sline = ins->line;
      p->stext = ins->text;
      perr(p, "undefined label %s", p->fix[i].name);
      return;
    }
    ins->off = l->offset;
  }
  bool label_at_end = false; /* a branch to the end must land on an instruction */
  for (size_t i = 0; i < p->nlabels; i++) label_at_end |= p->labels[i].offset == e->ncode;
  if (!e->ncode || label_at_end || e->code[e->ncode - 1].op != PO_RET || e->code[e->ncode - 1].guard >= 0) {
    /* falling off the end is an implicit exit: append one so the pc never leaves the code */
    ptx_ins r;
    memset(&r, 0, sizeof r);
    r.op = PO_RET;
    r.guard = -1;
    r.param = -1;
    r.line = p->sline;
    r.text = "(end of entry)";
    if (!grow(p, (void **)&e->code, &p->capcode, e->ncode + 1, sizeof *e->code)) return;
    e->code[e->ncode++] = r;
  }
  e->info.static_shared_B = p->shared_top;
  e->info.ninstructions = e->ncode;
  p->e = NULL;
}

/* ------------------------------------------------------------------------------------------------ module */

static void parse_all(parser *p) {
  char text[4096];
  int depth = 0; /* inside an entry body: brace depth */
  bool saw_version = false, saw_target = false;
  for (;;) {
    char t = next_stmt(p, text, sizeof text);
    p->stext = keep(p, text, strlen(text));
    if (p->st) return;
    if (t == 0) {
      if (text[0]) perr(p, "statement without ';'");
      else if (depth) perr(p, "entry body not closed");
      return;
    }
    if (depth) {
      if (t == '{') {
        if (text[0]) {
          perr(p, "unexpected '{'");
          return;
        }
        depth++;
        continue;
      }
      if (t == '}') {
        if (text[0]) {
          perr(p, "statement without ';'");
          return;
        }
        if (--depth == 0) finish_entry(p);
        if (p->st) return;
        continue;
      }
      if (t == ':') {
        if (find_sym(p->labels, p->nlabels, text, strlen(text))) {
          perr(p, "label %s defined twice", text);
          return;
        }
        if (!grow(p, (void **)&p->labels, &p->caplabels, p->nlabels + 1, sizeof *p->labels)) return;
        p->labels[p->nlabels] = (symdecl){keep(p, text, strlen(text)), strlen(text), (uint32_t)p->e->ncode};
        p->nlabels++;
        continue;
      }
      if (!strncmp(text, ".reg ", 5)) reg_decl(p, text);
      else if (!strncmp(text, ".shared ", 8)) shared_decl(p, text, false);
      else if (!strncmp(text, ".pragma ", 8)) {
      } else if (text[0] == '.') perr(p, "unsupported directive in an entry body");
      else instruction(p, text);
      if (p->st) return;
      continue;
    }
    if (t == ':' || t == '}') {
      perr(p, "unexpected %s outside an entry", t == ':' ? "label" : "'}'");
      return;
    }
    if (!strncmp(text, ".version ", 9)) {
      const char *v = text + 9;
      if (!isdigit((unsigned char)v[0]) || v[1] != '.' || !isdigit((unsigned char)v[2])) {
        perr(p, "bad .version");
        return;
      }
      p->m->version = (char *)keep(p, v, strlen(v));
      saw_version = true;
      continue;
    }
    if (!strncmp(text, ".target ", 8)) {
      if (strncmp(text + 8, "sm_", 3)) {
        perr(p, "unsupported .target (expected sm_NN)");
        return;
      }
      p->m->target = (char *)keep(p, text + 8, strlen(text + 8));
      saw_target = true;
      continue;
    }
    if (!strncmp(text, ".address_size ", 14)) {
      if (strcmp(text + 14, "64")) {
        perr(p, "only .address_size 64 is supported");
        return;
      }
      continue;
    }
    if (!strncmp(text, ".shared ", 8)) {
      shared_decl(p, text, true);
      if (p->st) return;
      continue;
    }
    const char *en = !strncmp(text, ".visible .entry ", 16) ? text + 16 : !strncmp(text, ".entry ", 7) ? text + 7 : NULL;
    if (en) {
      if (!saw_version || !saw_target) {
        perr(p, ".entry before .version and .target");
        return;
      }
      if (t != '{') {
        perr(p, "entry declaration without a body");
        return;
      }
      entry_header(p, text + (en - text));
      if (p->st) return;
      depth = 1;
      continue;
    }
    perr(p, "unsupported module-level statement");
    return;
  }
}

void ptx_module_free(ptx_module *m) {
  if (!m) return;
  for (size_t i = 0; i < m->nentries; i++) {
    free(m->entries[i].params);
    free(m->entries[i].code);
    free(m->entries[i].rows);
  }
  free(m->entries);
  for (size_t i = 0; i < m->nstrings; i++) free(m->strings[i]);
  free(m->strings);
  free(m);
}

hcq_status ptx_module_parse(const char *text, size_t len, ptx_module **out) {
  *out = NULL;
  parser p = {.line = 1};
  p.m = calloc(1, sizeof *p.m);
  p.buf = malloc(len + 1);
  if (!p.m || !p.buf) {
    free(p.m);
    free(p.buf);
    return hcq_status_make(HCQ_CODE_NOMEM, "ptx: out of memory");
  }
  memcpy(p.buf, text, len);
  p.buf[len] = 0;
  p.len = strnlen(p.buf, len);
  blank_comments(p.buf, p.len);
  parse_all(&p);
  if (!p.st && !p.m->nentries) p.st = hcq_status_make(HCQ_CODE_PARSE, "ptx: no .entry in the module");
  free(p.buf);
  free(p.regs);
  free(p.shared);
  free(p.labels);
  free(p.fix);
  if (p.st) {
    ptx_module_free(p.m);
    return p.st;
  }
  *out = p.m;
  return HCQ_OK;
}

hcq_status ptx_module_entry(const ptx_module *m, const char *name, const ptx_entry_info **out) {
  *out = NULL;
  for (size_t i = 0; i < m->nentries; i++)
    if (!name || !strcmp(m->entries[i].info.name, name)) {
      *out = &m->entries[i].info;
      return HCQ_OK;
    }
  char list[256] = "";
  size_t n = 0;
  for (size_t i = 0; i < m->nentries && n < sizeof list - 1; i++)
    n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", m->entries[i].info.name);
  return hcq_status_make(HCQ_CODE_NOT_FOUND, "ptx: no entry '%s' (the module has: %s)", name, list);
}
