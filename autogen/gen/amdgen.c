/* amdgen: writes autogen/amd_*.h from the amdgpu headers of the Debian linux-source-6.1 tarball, driven by a spec
 * (autogen/gen/amd.spec) that names every symbol to extract. Generator-side: built and run by
 * autogen/gen/gen_amd.sh, never linked into libhcq. Usage: amdgen SPEC SRCROOT OUTDIR
 *
 * Spec lines (# starts a comment; every error names spec:line):
 *   pin PACKAGE VERSION      recorded in each output's header comment (gen_amd.sh checks it against dpkg)
 *   kernel X.Y.Z             SRCROOT/Makefile must say VERSION/PATCHLEVEL/SUBLEVEL = X/Y/Z
 *   output FILE GUARD        start a new output header autogen/FILE
 *   title TEXT / note TEXT   comment lines in the output
 *   source PATH              the source header for the following symbols (relative to SRCROOT)
 *   upstream PATH TAG        the source is a header newer than the pinned tarball: PATH at upstream linux TAG,
 *                            whose needed lines the spec carries itself as the `line` directives that follow
 *   line TEXT                one line of the current upstream header, copied verbatim (read like a source line)
 *   prefix OUT [STRIP]       output names are OUT + source name without the leading STRIP
 *   const NAME               object-like macro with an integer value
 *   field NAME               one-parameter macro ((x) << N): emits NAME_SHIFT and NAME(x)
 *   packet3 NAME             the PM4 type-3 header macro NAME(op, n): emits the header builder and field masks
 *   reg NAME                 register offset regNAME (or mmNAME) and its _BASE_IDX
 *   regs NAME FIRST LAST     reg NAME<i> for i in FIRST..LAST
 *   fields NAME              every NAME__F__SHIFT / NAME__F_MASK bitfield of register NAME
 *   sdma PACKET              every SDMA_PKT_<PACKET>_<DW>_<field>_{offset,mask,shift} of one SDMA packet
 *   enum TYPE NAME [OUT]     enumerator NAME of `typedef enum TYPE {...}` or `enum TYPE {...}`, named <prefix>OUT
 *                            (default: NAME without STRIP)
 *   choice FIELD OUT TEXT..  a value documented only in the comment under FIELD's #define, as lines "N - TEXT":
 *                            emits <prefix><FIELD without STRIP>_<OUT> = N; TEXT must match one line exactly
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autogen/gen/macro_table.h"

typedef struct sbuf {
  char *p;
  size_t len, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (b->len + (size_t)n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + (size_t)n + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) return; /* an out-of-memory generator run fails later when the file is short: acceptable for a tool */
    b->p = p;
    b->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

#define AG_MAX_OUTPUTS 16
#define AG_MAX_PINS 8

typedef struct ag_output {
  char file[128];
  char guard[128];
  sbuf head; /* title, notes, sources */
  sbuf body;
  int count; /* symbols emitted */
} ag_output;

typedef struct ag_state {
  const char *spec_path;
  const char *srcroot;
  int line;
  char pins[AG_MAX_PINS][160];
  int npins;
  ag_output out[AG_MAX_OUTPUTS];
  int nout;
  mt_table src;
  int have_src;
  char src_path[512];
  char *raw; /* the source's full text (comments kept), for enum and choice */
  sbuf up;   /* the `line` text of an `upstream` source, parsed when the first symbol is asked of it */
  int up_pending;
  char prefix[64], strip[64];
} ag_state;

static hcq_status spec_err(ag_state *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static hcq_status spec_err(ag_state *s, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return hcq_status_make(HCQ_CODE_INVALID, "%s:%d: %s", s->spec_path, s->line, msg);
}

static const char *out_name(ag_state *s, const char *src_name, char *buf, size_t n) {
  size_t sl = strlen(s->strip);
  if (sl && !strncmp(src_name, s->strip, sl)) src_name += sl;
  snprintf(buf, n, "%s%s", s->prefix, src_name);
  return buf;
}

static void emit_value(sbuf *b, const char *name, uint64_t v) {
  if (v > 0xffffffffull) sb_printf(b, "#define %s 0x%llxull\n", name, (unsigned long long)v);
  else if (v >= 0x10) sb_printf(b, "#define %s 0x%llxu\n", name, (unsigned long long)v);
  else sb_printf(b, "#define %s %lluu\n", name, (unsigned long long)v);
}

static hcq_status need_ctx(ag_state *s, ag_output **o, const char *what) {
  if (!s->nout) return spec_err(s, "%s before any 'output' line", what);
  if (s->up_pending) { /* the upstream block is complete: parse its lines as the source */
    s->up_pending = 0;
    hcq_status st = mt_load_text(s->up.p ? s->up.p : "", s->src_path, &s->src);
    if (st) return hcq_status_annotate(st, "%s:%d: upstream %s", s->spec_path, s->line, s->src_path);
    s->raw = strdup(s->up.p ? s->up.p : "");
    if (!s->raw) return spec_err(s, "out of memory");
    s->have_src = 1;
  }
  if (!s->have_src) return spec_err(s, "%s before any 'source' line", what);
  if (!s->prefix[0]) return spec_err(s, "%s before any 'prefix' line", what);
  *o = &s->out[s->nout - 1];
  return HCQ_OK;
}

static hcq_status lookup(ag_state *s, const char *name, int nparams, const mt_macro **out) {
  hcq_status err = HCQ_OK;
  const mt_macro *m = mt_find(&s->src, name, &err);
  if (err) return hcq_status_annotate(err, "%s:%d", s->spec_path, s->line);
  if (!m) return spec_err(s, "%s: not found in %s", name, s->src_path);
  if (m->nparams != nparams) {
    if (nparams < 0) return spec_err(s, "%s: expected an object-like macro in %s:%d, found one with parameters", name,
                                     s->src_path, m->line);
    return spec_err(s, "%s: expected a macro with %d parameter(s) in %s:%d", name, nparams, s->src_path, m->line);
  }
  *out = m;
  return HCQ_OK;
}

static hcq_status value_of(ag_state *s, const char *name, uint64_t *v) {
  const mt_macro *m;
  HCQ_TRY(lookup(s, name, -1, &m));
  hcq_status st = mt_eval_macro(&s->src, m, NULL, 0, v);
  return st ? hcq_status_annotate(st, "%s:%d: %s", s->spec_path, s->line, name) : HCQ_OK;
}

static hcq_status do_const(ag_state *s, ag_output *o, const char *name) {
  uint64_t v;
  HCQ_TRY(value_of(s, name, &v));
  char on[256];
  emit_value(&o->body, out_name(s, name, on, sizeof on), v);
  o->count++;
  return HCQ_OK;
}

/* snprintf without gcc's truncation warning; names come from source identifiers, far below the buffer sizes. */
static void fmtn(char *d, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fmtn(char *d, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d, n, fmt, ap);
  va_end(ap);
}

static int ctz64(uint64_t v) { int n = 0; while (!(v & 1)) { v >>= 1; n++; } return n; }

static hcq_status do_field(ag_state *s, ag_output *o, const char *name) {
  const mt_macro *m;
  HCQ_TRY(lookup(s, name, 1, &m));
  uint64_t zero, one, a = 0, b = 1;
  hcq_status st = mt_eval_macro(&s->src, m, &a, 1, &zero);
  if (!st) st = mt_eval_macro(&s->src, m, &b, 1, &one);
  if (st) return hcq_status_annotate(st, "%s:%d: %s", s->spec_path, s->line, name);
  if (zero != 0 || one == 0 || (one & (one - 1)) || one > 0x80000000ull)
    return spec_err(s, "%s (%s:%d) is not a plain field shift ((x) << N) of a 32-bit word: %s(0)=0x%llx, %s(1)=0x%llx",
                    name, s->src_path, m->line, name, (unsigned long long)zero, name, (unsigned long long)one);
  char on[256];
  out_name(s, name, on, sizeof on);
  int sh = ctz64(one);
  sb_printf(&o->body, "#define %s_SHIFT %d\n#define %s(x) ((uint32_t)(x) << %d)\n", on, sh, on, sh);
  o->count++;
  return HCQ_OK;
}

/* The field of a header macro f(op, n) that an argument occupies: mask of bits it can set. */
static hcq_status packet3_field(ag_state *s, const mt_macro *m, int arg, uint64_t *mask, uint64_t *base) {
  uint64_t args[2] = {0, 0}, all;
  HCQ_TRY(mt_eval_macro(&s->src, m, args, 2, base));
  args[arg] = 0xffffffffull;
  HCQ_TRY(mt_eval_macro(&s->src, m, args, 2, &all));
  *mask = (all ^ *base) & 0xffffffffull;
  return HCQ_OK;
}

static hcq_status do_packet3(ag_state *s, ag_output *o, const char *name) {
  const mt_macro *m;
  HCQ_TRY(lookup(s, name, 2, &m));
  uint64_t op_mask, n_mask, base, base2;
  hcq_status st = packet3_field(s, m, 0, &op_mask, &base);
  if (!st) st = packet3_field(s, m, 1, &n_mask, &base2);
  if (st) return hcq_status_annotate(st, "%s:%d: %s", s->spec_path, s->line, name);
  base &= 0xffffffffull;
  if (!op_mask || !n_mask || (op_mask & n_mask) || (base & (op_mask | n_mask)))
    return spec_err(s, "%s (%s:%d): opcode and count fields are not disjoint bit ranges", name, s->src_path, m->line);
  int op_sh = ctz64(op_mask), n_sh = ctz64(n_mask);
  uint64_t op_w = op_mask >> op_sh, n_w = n_mask >> n_sh;
  if (op_w & (op_w + 1) || n_w & (n_w + 1))
    return spec_err(s, "%s (%s:%d): opcode or count field is not contiguous", name, s->src_path, m->line);
  char p[128];
  snprintf(p, sizeof p, "%s", s->prefix);
  sb_printf(&o->body,
            "/* Type-3 header from %s(op, n); n = number of body dwords - 1. */\n"
            "#define %sTYPE3_HEADER 0x%08llxu\n#define %sOPCODE_SHIFT %d\n#define %sOPCODE_MASK 0x%llxu\n"
            "#define %sCOUNT_SHIFT %d\n#define %sCOUNT_MASK 0x%llxu\n"
            "#define %sPACKET3(op, n) (%sTYPE3_HEADER | (((uint32_t)(op) & %sOPCODE_MASK) << %sOPCODE_SHIFT) | \\\n"
            "                                 (((uint32_t)(n) & %sCOUNT_MASK) << %sCOUNT_SHIFT))\n",
            name, p, (unsigned long long)base, p, op_sh, p, (unsigned long long)op_w, p, n_sh, p,
            (unsigned long long)n_w, p, p, p, p, p, p);
  o->count++;
  return HCQ_OK;
}

static hcq_status do_reg(ag_state *s, ag_output *o, const char *name) {
  char src[256], idx[300];
  hcq_status err = HCQ_OK;
  snprintf(src, sizeof src, "reg%s", name);
  const mt_macro *m = mt_find(&s->src, src, &err);
  if (!m && !err) {
    snprintf(src, sizeof src, "mm%s", name);
    m = mt_find(&s->src, src, &err);
  }
  if (err) return hcq_status_annotate(err, "%s:%d", s->spec_path, s->line);
  if (!m) return spec_err(s, "register %s: neither reg%s nor mm%s is defined in %s", name, name, name, s->src_path);
  uint64_t off, base_idx;
  HCQ_TRY(value_of(s, src, &off));
  snprintf(idx, sizeof idx, "%s_BASE_IDX", src);
  HCQ_TRY(value_of(s, idx, &base_idx));
  char on[300];
  snprintf(on, sizeof on, "%s%s", s->prefix, name);
  sb_printf(&o->body, "#define %s 0x%04llx\n#define %s_BASE_IDX %llu\n", on, (unsigned long long)off, on,
            (unsigned long long)base_idx);
  o->count++;
  return HCQ_OK;
}

static hcq_status do_fields(ag_state *s, ag_output *o, const char *reg) {
  size_t rl = strlen(reg);
  int found = 0;
  for (size_t i = 0; i < s->src.count; i++) {
    const char *n = s->src.macros[i].name;
    size_t nl = strlen(n);
    if (strncmp(n, reg, rl) || strncmp(n + rl, "__", 2) || nl < rl + 2 + 7 || strcmp(n + nl - 7, "__SHIFT")) continue;
    char field[256], mask[300];
    int fl = (int)(nl - rl - 2 - 7);
    if (fl <= 0 || fl >= (int)sizeof field) continue;
    memcpy(field, n + rl + 2, (size_t)fl);
    field[fl] = 0;
    snprintf(mask, sizeof mask, "%s__%s_MASK", reg, field);
    uint64_t sh, mk;
    HCQ_TRY(value_of(s, n, &sh));
    HCQ_TRY(value_of(s, mask, &mk));
    if (sh >= 32 || !mk || (mk >> sh) << sh != mk || mk > 0xffffffffull)
      return spec_err(s, "%s: field %s has shift %llu but mask 0x%llx in %s", reg, field, (unsigned long long)sh,
                      (unsigned long long)mk, s->src_path);
    sb_printf(&o->body, "#define %s%s__%s__SHIFT %llu\n#define %s%s__%s_MASK 0x%08llxu\n", s->prefix, reg, field,
              (unsigned long long)sh, s->prefix, reg, field, (unsigned long long)mk);
    found++;
  }
  if (!found) return spec_err(s, "register %s: no %s__*__SHIFT bitfields in %s", reg, reg, s->src_path);
  o->count++;
  return HCQ_OK;
}

/* Is `pkt` (e.g. "COPY_LINEAR") the longest SDMA packet name that prefixes macro `n`'s packet part? */
static int sdma_owner_is(const mt_table *t, const char *rest, const char *pkt) {
  size_t pl = strlen(pkt);
  for (size_t i = 0; i < t->count; i++) { /* another packet with a longer matching name owns it */
    const char *n = t->macros[i].name;
    const char *sfx = "_HEADER_op_offset";
    size_t nl = strlen(n), sl = strlen(sfx);
    if (strncmp(n, "SDMA_PKT_", 9) || nl <= 9 + sl || strcmp(n + nl - sl, sfx)) continue;
    size_t ol = nl - 9 - sl;
    if (ol > pl && !strncmp(n + 9, rest, ol) && rest[ol] == '_' && !strncmp(n + 9, pkt, pl)) return 0;
  }
  return 1;
}

static void upcase(char *d, const char *s, size_t n) {
  size_t i = 0;
  for (; s[i] && i + 1 < n; i++) d[i] = (char)toupper((unsigned char)s[i]);
  d[i] = 0;
}

static hcq_status do_sdma(ag_state *s, ag_output *o, const char *pkt) {
  char pre[160];
  fmtn(pre, sizeof pre, "SDMA_PKT_%s_", pkt);
  size_t prl = strlen(pre);
  int found = 0;
  uint64_t max_dw = 0;
  for (size_t i = 0; i < s->src.count; i++) {
    const char *n = s->src.macros[i].name;
    size_t nl = strlen(n);
    if (strncmp(n, pre, prl) || nl < prl + 7 || strcmp(n + nl - 7, "_offset")) continue;
    if (!sdma_owner_is(&s->src, n + 9, pkt)) continue;
    /* <DW>_<field>: the dword name is upper case, the field name starts with a lower-case letter. */
    const char *dw = n + prl, *f = dw;
    while (*f && !(f[0] == '_' && islower((unsigned char)f[1]))) f++;
    if (!*f) return spec_err(s, "%s: cannot split dword and field name in %s", n, s->src_path);
    char dwn[128], fld[128], base[300], key[300], FLD[128];
    fmtn(dwn, sizeof dwn, "%.*s", (int)(f - dw), dw);
    fmtn(fld, sizeof fld, "%.*s", (int)(n + nl - 7 - (f + 1)), f + 1);
    fmtn(base, sizeof base, "%s%s_%s", pre, dwn, fld);
    uint64_t off, mask, shift;
    HCQ_TRY(value_of(s, n, &off));
    fmtn(key, sizeof key, "%s_mask", base);
    HCQ_TRY(value_of(s, key, &mask));
    fmtn(key, sizeof key, "%s_shift", base);
    HCQ_TRY(value_of(s, key, &shift));
    if (shift >= 32 || !mask || (mask << shift) > 0xffffffffull)
      return spec_err(s, "%s: mask 0x%llx << shift %llu does not fit a dword", base, (unsigned long long)mask,
                      (unsigned long long)shift);
    upcase(FLD, fld, sizeof FLD);
    char on[300];
    fmtn(on, sizeof on, "%s%s_%s_%s", s->prefix, pkt, dwn, FLD);
    sb_printf(&o->body, "#define %s_DW %llu\n#define %s_MASK 0x%llxu\n#define %s_SHIFT %llu\n", on,
              (unsigned long long)off, on, (unsigned long long)mask, on, (unsigned long long)shift);
    sb_printf(&o->body, "#define %s(x) (((uint32_t)(x) & 0x%llxu) << %llu)\n", on, (unsigned long long)mask,
              (unsigned long long)shift);
    if (off > max_dw) max_dw = off;
    found++;
  }
  if (!found) return spec_err(s, "SDMA packet %s: no %s*_offset fields in %s", pkt, pre, s->src_path);
  sb_printf(&o->body, "#define %s%s_DWORDS %llu\n", s->prefix, pkt, (unsigned long long)max_dw + 1);
  o->count++;
  return HCQ_OK;
}

static hcq_status read_raw(const char *path, char **out) {
  FILE *f = fopen(path, "rb");
  if (!f) return hcq_status_make(HCQ_CODE_NOT_FOUND, "cannot open %s: %s", path, strerror(errno));
  sbuf b = {0};
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk - 1, f)) > 0) { chunk[n] = 0; sb_printf(&b, "%s", chunk); }
  fclose(f);
  *out = b.p ? b.p : strdup("");
  return *out ? HCQ_OK : hcq_status_make(HCQ_CODE_NOMEM, "out of memory reading %s", path);
}

static int line_of(const char *text, const char *at) {
  int l = 1;
  for (const char *p = text; p < at; p++) l += *p == '\n';
  return l;
}

/* Is text[at..] the identifier `name` with no identifier characters around it? */
static int ident_at(const char *text, const char *at, const char *name) {
  size_t n = strlen(name);
  if (strncmp(at, name, n)) return 0;
  if (at > text && (isalnum((unsigned char)at[-1]) || at[-1] == '_')) return 0;
  return !(isalnum((unsigned char)at[n]) || at[n] == '_');
}

static hcq_status do_enum(ag_state *s, ag_output *o, const char *type, const char *name, const char *out) {
  char head[256];
  fmtn(head, sizeof head, "typedef enum %s {", type);
  const char *b = strstr(s->raw, head);
  if (!b) {
    fmtn(head, sizeof head, "enum %s {", type);
    b = strstr(s->raw, head);
  }
  if (!b) return spec_err(s, "enum %s: neither 'typedef enum %s {' nor '%s' in %s", type, type, head, s->src_path);
  const char *e = strchr(b, '}');
  if (!e) return spec_err(s, "enum %s (%s:%d): no closing brace", type, s->src_path, line_of(s->raw, b));
  for (const char *p = b + strlen(head); p < e; p++) {
    if (!ident_at(s->raw, p, name)) continue;
    const char *q = p + strlen(name);
    while (*q == ' ' || *q == '\t') q++;
    if (*q != '=') continue;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(q + 1, &end, 0);
    while (*end == ' ' || *end == '\t') end++;
    if (errno || (*end != ',' && *end != '\n' && *end != '}'))
      return spec_err(s, "enum %s: %s (%s:%d) is not a plain integer enumerator", type, name, s->src_path,
                      line_of(s->raw, p));
    char on[256];
    if (out) fmtn(on, sizeof on, "%s%s", s->prefix, out);
    else out_name(s, name, on, sizeof on);
    emit_value(&o->body, on, v);
    o->count++;
    return HCQ_OK;
  }
  return spec_err(s, "enum %s: no enumerator %s in %s:%d", type, name, s->src_path, line_of(s->raw, b));
}

/* The comment block right under `#define FIELD(x)` lists "N - meaning" lines; find the one whose meaning is text. */
static hcq_status do_choice(ag_state *s, ag_output *o, const char *field, const char *out, const char *text) {
  const mt_macro *m;
  HCQ_TRY(lookup(s, field, 1, &m));
  const char *p = s->raw;
  for (int l = 1; l < m->line && p; l++) p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
  if (!p) return spec_err(s, "choice %s: line %d is past the end of %s", field, m->line, s->src_path);
  p = strchr(p, '\n');
  while (p && (*p == '\n' || *p == ' ' || *p == '\t')) p++;
  if (!p || strncmp(p, "/*", 2))
    return spec_err(s, "choice %s: no comment under %s:%d listing its values", field, s->src_path, m->line);
  const char *end = strstr(p, "*/");
  if (!end) return spec_err(s, "choice %s (%s:%d): unterminated comment", field, s->src_path, m->line);
  for (const char *q = p + 2; q < end;) {
    const char *nl = memchr(q, '\n', (size_t)(end - q));
    const char *le = nl ? nl : end;
    while (q < le && (*q == ' ' || *q == '\t' || *q == '*')) q++;
    char *dash;
    errno = 0;
    unsigned long v = strtoul(q, &dash, 0);
    if (dash != q && !errno && !strncmp(dash, " - ", 3)) {
      const char *t = dash + 3;
      size_t tl = (size_t)(le - t);
      while (tl && isspace((unsigned char)t[tl - 1])) tl--;
      if (tl == strlen(text) && !strncmp(t, text, tl)) {
        char fn[256], on[320];
        out_name(s, field, fn, sizeof fn);
        fmtn(on, sizeof on, "%s_%s", fn, out);
        sb_printf(&o->body, "/* %s: \"%s\" (%s:%d) */\n", field, text, s->src_path, line_of(s->raw, q));
        emit_value(&o->body, on, v);
        o->count++;
        return HCQ_OK;
      }
    }
    q = nl ? nl + 1 : end;
  }
  return spec_err(s, "choice %s: no line \"N - %s\" in the comment under %s:%d", field, text, s->src_path, m->line);
}

static hcq_status check_kernel(ag_state *s, const char *want) {
  char path[600];
  snprintf(path, sizeof path, "%s/Makefile", s->srcroot);
  FILE *f = fopen(path, "r");
  if (!f) return spec_err(s, "kernel %s: cannot open %s", want, path);
  int v[3] = {-1, -1, -1};
  char line[256];
  const char *keys[3] = {"VERSION = ", "PATCHLEVEL = ", "SUBLEVEL = "};
  while (fgets(line, sizeof line, f))
    for (int i = 0; i < 3; i++)
      if (!strncmp(line, keys[i], strlen(keys[i])) && v[i] < 0) v[i] = atoi(line + strlen(keys[i]));
  fclose(f);
  char got[64];
  snprintf(got, sizeof got, "%d.%d.%d", v[0], v[1], v[2]);
  if (strcmp(got, want))
    return spec_err(s, "kernel source is %s (from %s), the spec pins %s: update the pin and review the diff", got,
                    path, want);
  return HCQ_OK;
}

#define AG_MAX_TOK 16

static hcq_status run_line(ag_state *s, char *line) {
  char *hash = strchr(line, '#');
  char *rest_text = NULL; /* for title/note: the raw text after the keyword */
  char *tok[AG_MAX_TOK];
  int nt = 0;
  char *p = line;
  while (isspace((unsigned char)*p)) p++;
  if (!*p || *p == '#') return HCQ_OK;
  if (!strncmp(p, "line", 4) && (!p[4] || isspace((unsigned char)p[4]))) { /* verbatim: '#' is not a comment */
    if (!s->up_pending) return spec_err(s, "'line' outside an 'upstream' block");
    char *t = p + 4;
    while (*t == ' ' || *t == '\t') t++;
    size_t l = strlen(t);
    while (l && isspace((unsigned char)t[l - 1])) t[--l] = 0;
    sb_printf(&s->up, "%s\n", t);
    return HCQ_OK;
  }
  if (!strncmp(p, "title", 5) || !strncmp(p, "note", 4)) {
    rest_text = p + (p[0] == 't' ? 5 : 4);
    if (*rest_text && !isspace((unsigned char)*rest_text)) rest_text = NULL;
  }
  if (!rest_text && hash) *hash = 0;
  if (rest_text) {
    while (isspace((unsigned char)*rest_text)) rest_text++;
    size_t l = strlen(rest_text);
    while (l && isspace((unsigned char)rest_text[l - 1])) rest_text[--l] = 0;
    if (!s->nout) return spec_err(s, "%s before any 'output' line", p[0] == 't' ? "title" : "note");
    if (strstr(rest_text, "*/")) return spec_err(s, "comment text may not contain */");
    sb_printf(&s->out[s->nout - 1].head, " * %s\n", rest_text);
    return HCQ_OK;
  }
  for (char *t = strtok(p, " \t\r\n"); t; t = strtok(NULL, " \t\r\n")) {
    if (nt == AG_MAX_TOK) return spec_err(s, "too many words");
    tok[nt++] = t;
  }
  if (!nt) return HCQ_OK;
  const char *kw = tok[0];
#define NARGS(lo, hi)                                                                                  \
  if (nt - 1 < (lo) || nt - 1 > (hi)) return spec_err(s, "'%s' takes %d..%d argument(s), got %d", kw, lo, hi, nt - 1)
  ag_output *o = NULL;
  if (!strcmp(kw, "pin")) {
    NARGS(2, 2);
    if (s->npins == AG_MAX_PINS) return spec_err(s, "too many pins");
    snprintf(s->pins[s->npins++], sizeof s->pins[0], "%s %s", tok[1], tok[2]);
    return HCQ_OK;
  }
  if (!strcmp(kw, "kernel")) { NARGS(1, 1); return check_kernel(s, tok[1]); }
  if (!strcmp(kw, "output")) {
    NARGS(2, 2);
    if (s->nout == AG_MAX_OUTPUTS) return spec_err(s, "too many outputs");
    if (strchr(tok[1], '/') || strlen(tok[1]) >= sizeof s->out[0].file) return spec_err(s, "bad output name %s", tok[1]);
    for (int i = 0; i < s->nout; i++)
      if (!strcmp(s->out[i].file, tok[1])) return spec_err(s, "output %s listed twice", tok[1]);
    o = &s->out[s->nout++];
    snprintf(o->file, sizeof o->file, "%s", tok[1]);
    snprintf(o->guard, sizeof o->guard, "%s", tok[2]);
    s->prefix[0] = s->strip[0] = 0;
    return HCQ_OK;
  }
  if (!strcmp(kw, "source") || !strcmp(kw, "upstream")) {
    if (!s->nout) return spec_err(s, "%s before any 'output' line", kw);
    if (s->have_src) mt_free(&s->src);
    s->have_src = s->up_pending = 0;
    free(s->raw);
    s->raw = NULL;
    s->up.len = 0;
    if (s->up.p) s->up.p[0] = 0;
  }
  if (!strcmp(kw, "upstream")) {
    NARGS(2, 2);
    snprintf(s->src_path, sizeof s->src_path, "%s", tok[1]);
    s->up_pending = 1;
    sb_printf(&s->out[s->nout - 1].head, " *   source: %s at linux %s (lines carried in the spec)\n", tok[1], tok[2]);
    return HCQ_OK;
  }
  if (!strcmp(kw, "source")) {
    NARGS(1, 1);
    char full[1024];
    snprintf(full, sizeof full, "%s/%s", s->srcroot, tok[1]);
    snprintf(s->src_path, sizeof s->src_path, "%s", tok[1]);
    hcq_status st = mt_load(full, tok[1], &s->src);
    if (st) return hcq_status_annotate(st, "%s:%d: source", s->spec_path, s->line);
    st = read_raw(full, &s->raw);
    if (st) {
      mt_free(&s->src);
      return hcq_status_annotate(st, "%s:%d: source", s->spec_path, s->line);
    }
    s->have_src = 1;
    sb_printf(&s->out[s->nout - 1].head, " *   source: %s\n", tok[1]);
    return HCQ_OK;
  }
  if (!strcmp(kw, "prefix")) {
    NARGS(1, 2);
    snprintf(s->prefix, sizeof s->prefix, "%s", tok[1]);
    snprintf(s->strip, sizeof s->strip, "%s", nt > 2 ? tok[2] : "");
    return HCQ_OK;
  }
  if (!strcmp(kw, "const")) { NARGS(1, 1); HCQ_TRY(need_ctx(s, &o, kw)); return do_const(s, o, tok[1]); }
  if (!strcmp(kw, "field")) { NARGS(1, 1); HCQ_TRY(need_ctx(s, &o, kw)); return do_field(s, o, tok[1]); }
  if (!strcmp(kw, "packet3")) { NARGS(1, 1); HCQ_TRY(need_ctx(s, &o, kw)); return do_packet3(s, o, tok[1]); }
  if (!strcmp(kw, "reg")) { NARGS(1, 1); HCQ_TRY(need_ctx(s, &o, kw)); return do_reg(s, o, tok[1]); }
  if (!strcmp(kw, "fields")) { NARGS(1, 1); HCQ_TRY(need_ctx(s, &o, kw)); return do_fields(s, o, tok[1]); }
  if (!strcmp(kw, "sdma")) { NARGS(1, 1); HCQ_TRY(need_ctx(s, &o, kw)); return do_sdma(s, o, tok[1]); }
  if (!strcmp(kw, "enum")) {
    NARGS(2, 3);
    HCQ_TRY(need_ctx(s, &o, kw));
    return do_enum(s, o, tok[1], tok[2], nt > 3 ? tok[3] : NULL);
  }
  if (!strcmp(kw, "choice")) {
    if (nt < 4) return spec_err(s, "'choice' takes FIELD OUT TEXT...");
    HCQ_TRY(need_ctx(s, &o, kw));
    char text[512] = "";
    for (int i = 3; i < nt; i++) fmtn(text + strlen(text), sizeof text - strlen(text), "%s%s", i > 3 ? " " : "", tok[i]);
    return do_choice(s, o, tok[1], tok[2], text);
  }
  if (!strcmp(kw, "regs")) {
    NARGS(3, 3);
    HCQ_TRY(need_ctx(s, &o, kw));
    char *e1, *e2;
    errno = 0;
    long a = strtol(tok[2], &e1, 10), b = strtol(tok[3], &e2, 10);
    if (*e1 || *e2 || errno || a < 0 || b < a || b - a > 64) return spec_err(s, "regs: bad range %s..%s", tok[2], tok[3]);
    for (long i = a; i <= b; i++) {
      char n[200];
      snprintf(n, sizeof n, "%s%ld", tok[1], i);
      HCQ_TRY(do_reg(s, o, n));
    }
    return HCQ_OK;
  }
#undef NARGS
  return spec_err(s, "unknown directive '%s'", kw);
}

static hcq_status write_outputs(ag_state *s, const char *outdir) {
  for (int i = 0; i < s->nout; i++) {
    ag_output *o = &s->out[i];
    if (!o->count) return hcq_status_make(HCQ_CODE_INVALID, "%s: output %s has no symbols", s->spec_path, o->file);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", outdir, o->file);
    FILE *f = fopen(path, "w");
    if (!f) return hcq_status_make(HCQ_CODE_IO, "cannot write %s: %s", path, strerror(errno));
    fprintf(f, "/* GENERATED by autogen/gen/amdgen.c from autogen/gen/amd.spec: do not edit; run `make autogen`.\n");
    fprintf(f, "%s", o->head.p ? o->head.p : "");
    for (int k = 0; k < s->npins; k++) fprintf(f, " *   pinned package: %s\n", s->pins[k]);
    fprintf(f, " */\n#ifndef %s\n#define %s\n\n#include <stdint.h>\n\n%s\n#endif\n", o->guard, o->guard,
            o->body.p ? o->body.p : "");
    if (fclose(f) != 0) return hcq_status_make(HCQ_CODE_IO, "cannot write %s: %s", path, strerror(errno));
  }
  return HCQ_OK;
}

/* Run the whole spec; outputs are written only if every line succeeded. */
hcq_status amdgen_run(const char *spec_path, const char *srcroot, const char *outdir) {
  FILE *f = fopen(spec_path, "r");
  if (!f) return hcq_status_make(HCQ_CODE_NOT_FOUND, "cannot open spec %s: %s", spec_path, strerror(errno));
  ag_state *s = calloc(1, sizeof *s);
  if (!s) { fclose(f); return hcq_status_make(HCQ_CODE_NOMEM, "out of memory"); }
  s->spec_path = spec_path;
  s->srcroot = srcroot;
  char line[1024];
  hcq_status st = HCQ_OK;
  while (!st && fgets(line, sizeof line, f)) {
    s->line++;
    if (!strchr(line, '\n') && !feof(f)) st = spec_err(s, "line too long");
    else st = run_line(s, line);
  }
  fclose(f);
  if (!st && !s->nout) st = hcq_status_make(HCQ_CODE_INVALID, "%s: no 'output' lines", spec_path);
  if (!st) st = write_outputs(s, outdir);
  if (s->have_src) mt_free(&s->src);
  free(s->raw);
  free(s->up.p);
  for (int i = 0; i < s->nout; i++) { free(s->out[i].head.p); free(s->out[i].body.p); }
  free(s);
  return st;
}

#ifndef AMDGEN_NO_MAIN
int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: amdgen SPEC SRCROOT OUTDIR\n");
    return 2;
  }
  hcq_status st = amdgen_run(argv[1], argv[2], argv[3]);
  if (st) {
    fprintf(stderr, "amdgen: %s\n", hcq_status_message(st));
    hcq_status_free(st);
    return 1;
  }
  return 0;
}
#endif
