/* PTX text -> the interpreter's pre-decoded form (ptx_internal.h). Grammar per NVIDIA's PTX ISA chapters
 * "Syntax" (statements, comments, labels, constants incl. 0f/0d hex floats), "State Spaces, Types, and
 * Variables" (.reg with %r<N> ranges, .shared with .align, .param) and "Directives" (.version, .target,
 * .address_size, .entry with .maxntid/.reqntid); instruction statements are decoded by ptx_instr.c. Everything not
 * understood is an error naming the line and the statement: an unknown instruction, modifier, register, label or
 * directive is never skipped. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator_tests/ptx_parse_internal.h"

void ptx_perr(parser *p, const char *f, ...) {
  if (p->st) return;
  char msg[256];
  va_list ap;
  va_start(ap, f);
  vsnprintf(msg, sizeof msg, f, ap);
  va_end(ap);
  p->st = hcq_status_make(HCQ_CODE_PARSE, "ptx: line %u: %s in `%s`", p->sline, msg, p->stext ? p->stext : "");
}

bool ptx_grow(parser *p, void **arr, size_t *cap, size_t need, size_t elem) {
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

const char *ptx_keep(parser *p, const char *s, size_t n) {
  ptx_module *m = p->m;
  if (!ptx_grow(p, (void **)&m->strings, &m->capstrings, m->nstrings + 1, sizeof *m->strings)) return "";
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
int ptx_split_commas(char *s, char **out, int max) {
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

int32_t ptx_add_row(parser *p, ptx_rowkind kind, ptx_type type, uint64_t value) {
  ptx_entry *e = p->e;
  if (kind != PRK_REG)
    for (size_t i = 0; i < e->nrows; i++)
      if (e->rows[i].kind == kind && e->rows[i].value == value) return (int32_t)i;
  if (e->nrows >= (1u << 24)) {
    ptx_perr(p, "too many registers");
    return -1;
  }
  if (!ptx_grow(p, (void **)&e->rows, &p->caprows, e->nrows + 1, sizeof *e->rows)) return -1;
  e->rows[e->nrows] = (ptx_row){.kind = (uint8_t)kind, .type = (uint8_t)type, .value = value};
  return (int32_t)e->nrows++;
}

ptx_type ptx_type_named(const char *s, size_t n) {
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
int32_t ptx_reg_row(parser *p, const char *s, ptx_type *out_type) {
  for (int i = 0; i < PSR_COUNT; i++)
    if (!strcmp(s, SPECIALS[i])) {
      if (out_type) *out_type = PT_U32;
      return ptx_add_row(p, PRK_SPECIAL, PT_U32, (uint64_t)i);
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
      ptx_perr(p, "register %s beyond its declaration %.*s<%u>", s, (int)r->len, r->name, r->count);
      return -1;
    }
    if (out_type) *out_type = (ptx_type)p->e->rows[r->row].type;
    return r->row + (int32_t)k;
  }
  ptx_perr(p, "undeclared register %s", s);
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
      ptx_perr(p, "bad hex float constant '%s'", s);
      return false;
    }
    if (!ptx_type_float(t) && t != PT_B32 && t != PT_B64) {
      ptx_perr(p, "float constant '%s' for a .%s operand", s, ptx_type_name(t));
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
      ptx_perr(p, "bad constant '%s' for a .%s operand", s, ptx_type_name(t));
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
    ptx_perr(p, "bad constant '%s'", s);
    return false;
  }
  if (neg) v = 0 - v;
  if (ptx_type_float(t)) { /* ptxas: "Arguments mismatch" */
    ptx_perr(p, "integer constant '%s' for a .%s operand (write a float constant)", s, ptx_type_name(t));
    return false;
  }
  *out = t == PT_PRED ? v != 0 : mask_to(v, t);
  return true;
}

const symdecl *ptx_find_sym(const symdecl *syms, size_t n, const char *s, size_t len) {
  for (size_t i = 0; i < n; i++)
    if (syms[i].len == len && !memcmp(syms[i].name, s, len)) return &syms[i];
  return NULL;
}

/* A value operand: register, special register, immediate of type t, or a shared variable's address. */
int32_t ptx_operand(parser *p, const char *s, ptx_type t) {
  if (!*s) {
    ptx_perr(p, "missing operand");
    return -1;
  }
  if (s[0] == '%') return ptx_reg_row(p, s, NULL);
  if (isdigit((unsigned char)s[0]) || s[0] == '-' || s[0] == '+') {
    uint64_t v;
    if (!parse_imm(p, s, t, &v)) return -1;
    return ptx_add_row(p, PRK_CONST, t, v);
  }
  const symdecl *sh = ptx_find_sym(p->shared, p->nshared, s, strlen(s));
  if (!sh) sh = ptx_find_sym(p->locals, p->nlocals, s, strlen(s)); /* an address in the thread's local window */
  if (sh) return ptx_add_row(p, PRK_CONST, PT_U64, sh->offset);
  ptx_perr(p, "unknown operand '%s'", s);
  return -1;
}

/* A destination: a declared register. */
int32_t ptx_dest(parser *p, const char *s) {
  if (s[0] != '%') {
    ptx_perr(p, "destination '%s' is not a register", s);
    return -1;
  }
  for (int i = 0; i < PSR_COUNT; i++)
    if (!strcmp(s, SPECIALS[i])) {
      ptx_perr(p, "special register %s is read-only", s);
      return -1;
    }
  return ptx_reg_row(p, s, NULL);
}

/* ------------------------------------------------------------------------------------------------ declarations */

/* ".reg .b32 %r<5>" or ".reg .f32 %f1, %f2" */
static void reg_decl(parser *p, char *s) {
  char *sp = strchr(s, ' ');
  if (!sp || sp[1] != '.') {
    ptx_perr(p, "expected .reg .TYPE names");
    return;
  }
  char *ty = sp + 2, *names = strchr(ty, ' ');
  if (!names) {
    ptx_perr(p, "expected register names");
    return;
  }
  *names++ = 0;
  ptx_type t = ptx_type_named(ty, strlen(ty));
  if (t == PT_NONE || t == PT_B8 || t == PT_U8 || t == PT_S8) {
    ptx_perr(p, "bad register type .%s", ty);
    return;
  }
  char *items[64];
  int n = ptx_split_commas(names, items, 64);
  if (n <= 0) {
    ptx_perr(p, "expected register names");
    return;
  }
  for (int i = 0; i < n && !p->st; i++) {
    char *nm = items[i], *lt = strchr(nm, '<');
    if (nm[0] != '%' || !nm[1]) {
      ptx_perr(p, "register name '%s' must start with %%", nm);
      return;
    }
    uint32_t count = 0;
    size_t len = strlen(nm);
    if (lt) {
      char *end;
      unsigned long k = strtoul(lt + 1, &end, 10);
      if (end == lt + 1 || strcmp(end, ">") || k == 0 || k > (1u << 20)) {
        ptx_perr(p, "bad register range '%s'", nm);
        return;
      }
      count = (uint32_t)k;
      len = (size_t)(lt - nm);
    }
    for (size_t j = 0; j < p->nregs; j++)
      if (p->regs[j].len == len && !memcmp(p->regs[j].name, nm, len)) {
        ptx_perr(p, "register %.*s declared twice", (int)len, nm);
        return;
      }
    if (!ptx_grow(p, (void **)&p->regs, &p->capregs, p->nregs + 1, sizeof *p->regs)) return;
    int32_t first = -1;
    for (uint32_t k = 0; k < (count ? count : 1); k++) {
      int32_t r = ptx_add_row(p, PRK_REG, t, 0);
      if (r < 0) return;
      if (k == 0) first = r;
    }
    p->regs[p->nregs++] = (regdecl){ptx_keep(p, nm, len), len, count, first};
  }
}

static uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

/* ".shared .align 16 .b8 local0[64]", or ".local ..." (PTX ISA "Local State Space": per thread) in an entry body */
static void shared_decl(parser *p, char *s, bool module_level) {
  bool local = !strncmp(s, ".local", 6);
  const char *what = local ? "local" : "shared";
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
        ptx_perr(p, "bad .align");
        return;
      }
    } else if (items[i][0] == '.' && ptx_type_named(items[i] + 1, strlen(items[i] + 1)) != PT_NONE) {
      t = ptx_type_named(items[i] + 1, strlen(items[i] + 1));
    } else if (items[i][0] == '.') {
      ptx_perr(p, "unsupported .%s attribute %s", what, items[i]);
      return;
    } else {
      name = items[i];
    }
  }
  if (t == PT_NONE || t == PT_PRED || !name) {
    ptx_perr(p, "expected .%s [.align N] .TYPE name[N]", what);
    return;
  }
  uint64_t count = 1;
  char *br = strchr(name, '[');
  size_t nlen = strlen(name);
  if (br) {
    char *end;
    count = strtoull(br + 1, &end, 10);
    if (end == br + 1 || strcmp(end, "]") || !count) {
      ptx_perr(p, "bad array size in %s", name);
      return;
    }
    nlen = (size_t)(br - name);
  }
  uint32_t esize = (uint32_t)ptx_type_bits(t) / 8;
  if (!align) align = esize;
  uint64_t bytes = count * esize;
  uint64_t off = align_up(local ? p->local_top : p->shared_top, align);
  /* local: CUDA's 512 KiB per thread (CUDA C++ Programming Guide, "Technical Specifications") */
  if (off + bytes > (local ? (1u << 19) : (1u << 24))) {
    ptx_perr(p, local ? "local memory beyond 512 KiB per thread" : "shared memory beyond 16 MiB");
    return;
  }
  if (ptx_find_sym(p->shared, p->nshared, name, nlen) || ptx_find_sym(p->locals, p->nlocals, name, nlen)) {
    ptx_perr(p, "%s variable %.*s declared twice", what, (int)nlen, name);
    return;
  }
  if (local) {
    if (!ptx_grow(p, (void **)&p->locals, &p->caplocals, p->nlocals + 1, sizeof *p->locals)) return;
    p->locals[p->nlocals++] = (symdecl){ptx_keep(p, name, nlen), nlen, (uint32_t)off};
    p->local_top = (uint32_t)(off + bytes);
    return;
  }
  if (!ptx_grow(p, (void **)&p->shared, &p->capshared, p->nshared + 1, sizeof *p->shared)) return;
  p->shared[p->nshared++] = (symdecl){ptx_keep(p, name, nlen), nlen, (uint32_t)off};
  p->shared_top = (uint32_t)(off + bytes);
  if (module_level) {
    p->nmodshared = p->nshared;
    p->m->shared_B = p->shared_top;
  }
}

/* "NAME(.param .u64 a, .param .s32 b) .maxntid 4, 1, 1" */
static void entry_header(parser *p, char *s) {
  ptx_module *m = p->m;
  if (!ptx_grow(p, (void **)&m->entries, &p->capentries, m->nentries + 1, sizeof *m->entries)) return;
  ptx_entry *e = &m->entries[m->nentries++];
  memset(e, 0, sizeof *e);
  p->e = e;
  p->capcode = p->caprows = 0;
  p->nregs = p->nlabels = p->nfix = 0;
  p->nshared = p->nmodshared;
  p->shared_top = m->shared_B;
  p->nlocals = 0, p->local_top = 0;
  char *lp = strchr(s, '('), *rp = lp ? strrchr(s, ')') : NULL;
  char *name = s;
  if (!lp || !rp) {
    ptx_perr(p, "expected .entry NAME(params)");
    return;
  }
  char *ne = lp;
  while (ne > name && isspace((unsigned char)ne[-1])) ne--;
  if (ne == name) {
    ptx_perr(p, "entry without a name");
    return;
  }
  e->info.name = ptx_keep(p, name, (size_t)(ne - name));
  *rp = 0;
  char *items[64];
  int n = ptx_split_commas(lp + 1, items, 64);
  if (n < 0) {
    ptx_perr(p, "more than 64 parameters");
    return;
  }
  e->params = calloc((size_t)(n ? n : 1), sizeof *e->params);
  if (!e->params) {
    ptx_perr(p, "out of memory");
    return;
  }
  uint32_t off = 0;
  for (int i = 0; i < n; i++) {
    char *tok[6];
    int k = 0;
    for (char *t = strtok(items[i], " "); t && k < 6; t = strtok(NULL, " ")) tok[k++] = t;
    if (k < 3 || strcmp(tok[0], ".param")) {
      ptx_perr(p, "bad parameter '%s'", items[i]);
      return;
    }
    uint32_t align = 0;
    int j = 1;
    if (!strcmp(tok[j], ".align") && k >= 5) align = (uint32_t)strtoul(tok[++j], NULL, 10), j++;
    ptx_type t = tok[j][0] == '.' ? ptx_type_named(tok[j] + 1, strlen(tok[j] + 1)) : PT_NONE;
    if (t == PT_NONE || t == PT_PRED || k != j + 2) {
      ptx_perr(p, "bad parameter '%s'", tok[j]);
      return;
    }
    char *pname = tok[j + 1], *br = strchr(pname, '[');
    uint32_t count = 1;
    size_t plen = strlen(pname);
    if (br) {
      char *end;
      count = (uint32_t)strtoul(br + 1, &end, 10);
      if (!count || strcmp(end, "]") || count > 4096) {
        ptx_perr(p, "bad parameter array '%s'", pname);
        return;
      }
      plen = (size_t)(br - pname);
    }
    uint32_t esize = (uint32_t)ptx_type_bits(t) / 8;
    if (!align) align = esize;
    off = align_up(off, align);
    e->params[i] = (ptx_param_info){ptx_keep(p, pname, plen), esize * count, align, off};
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
      ptx_perr(p, "unsupported entry directive %.*s", (int)dl, dir);
      return;
    }
    for (int d = 0; d < (ntid ? 3 : 1); d++) {
      while (isspace((unsigned char)*rest) || *rest == ',') rest++;
      if (!isdigit((unsigned char)*rest)) {
        if (d > 0 && ntid) break; /* .maxntid x or x, y */
        ptx_perr(p, "expected a number after %.*s", (int)dl, dir);
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
    const symdecl *l = ptx_find_sym(p->labels, p->nlabels, p->fix[i].name, p->fix[i].len);
    ptx_ins *ins = &e->code[p->fix[i].ins];
    if (!l) {
      p->sline = ins->line;
      p->stext = ins->text;
      ptx_perr(p, "undefined label %s", p->fix[i].name);
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
    if (!ptx_grow(p, (void **)&e->code, &p->capcode, e->ncode + 1, sizeof *e->code)) return;
    e->code[e->ncode++] = r;
  }
  e->info.static_shared_B = p->shared_top;
  e->info.static_local_B = p->local_top;
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
    p->stext = ptx_keep(p, text, strlen(text));
    if (p->st) return;
    if (t == 0) {
      if (text[0]) ptx_perr(p, "statement without ';'");
      else if (depth) ptx_perr(p, "entry body not closed");
      return;
    }
    if (depth) {
      if (t == '{') {
        if (text[0]) {
          ptx_perr(p, "unexpected '{'");
          return;
        }
        depth++;
        continue;
      }
      if (t == '}') {
        if (text[0]) {
          ptx_perr(p, "statement without ';'");
          return;
        }
        if (--depth == 0) finish_entry(p);
        if (p->st) return;
        continue;
      }
      if (t == ':') {
        if (ptx_find_sym(p->labels, p->nlabels, text, strlen(text))) {
          ptx_perr(p, "label %s defined twice", text);
          return;
        }
        if (!ptx_grow(p, (void **)&p->labels, &p->caplabels, p->nlabels + 1, sizeof *p->labels)) return;
        p->labels[p->nlabels] = (symdecl){ptx_keep(p, text, strlen(text)), strlen(text), (uint32_t)p->e->ncode};
        p->nlabels++;
        continue;
      }
      if (!strncmp(text, ".reg ", 5)) reg_decl(p, text);
      else if (!strncmp(text, ".shared ", 8) || !strncmp(text, ".local ", 7)) shared_decl(p, text, false);
      else if (!strncmp(text, ".pragma ", 8)) {
      } else if (text[0] == '.') ptx_perr(p, "unsupported directive in an entry body");
      else ptx_parse_instruction(p, text);
      if (p->st) return;
      continue;
    }
    if (t == ':' || t == '}') {
      ptx_perr(p, "unexpected %s outside an entry", t == ':' ? "label" : "'}'");
      return;
    }
    if (!strncmp(text, ".version ", 9)) {
      const char *v = text + 9;
      if (!isdigit((unsigned char)v[0]) || v[1] != '.' || !isdigit((unsigned char)v[2])) {
        ptx_perr(p, "bad .version");
        return;
      }
      p->m->version = (char *)ptx_keep(p, v, strlen(v));
      saw_version = true;
      continue;
    }
    if (!strncmp(text, ".target ", 8)) {
      if (strncmp(text + 8, "sm_", 3)) {
        ptx_perr(p, "unsupported .target (expected sm_NN)");
        return;
      }
      p->m->target = (char *)ptx_keep(p, text + 8, strlen(text + 8));
      saw_target = true;
      continue;
    }
    if (!strncmp(text, ".address_size ", 14)) {
      if (strcmp(text + 14, "64")) {
        ptx_perr(p, "only .address_size 64 is supported");
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
        ptx_perr(p, ".entry before .version and .target");
        return;
      }
      if (t != '{') {
        ptx_perr(p, "entry declaration without a body");
        return;
      }
      entry_header(p, text + (en - text));
      if (p->st) return;
      depth = 1;
      continue;
    }
    ptx_perr(p, "unsupported module-level statement");
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
  free(p.locals);
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
