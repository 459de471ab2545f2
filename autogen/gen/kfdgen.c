/* kfdgen: turns the installed linux/kfd_ioctl.h into autogen/kfd.h (self-contained structs, constants and request
 * codes with _Static_asserts), autogen/kfd_abi_list.h (X-macro lists for the ABI test) and autogen/kfd_decode.c
 * (struct -> text decoders in the kernel_iface/ioctl_desc.h form). Generator-side, never linked into libhcq.
 *
 * Two passes, driven by autogen/gen/gen_amd.sh:
 *   kfdgen probe HEADER > probe.c          a C program that includes the real header and prints every sizeof,
 *                                          offsetof, constant and request code the parser found
 *   kfdgen emit HEADER FACTS OUTDIR PINS   writes the outputs from the parse plus the probe's numbers
 * The parser accepts the restricted uapi syntax only (structs, anonymous unions, arrays, enums, #defines) and stops
 * with file:line on anything else, so a header change cannot silently drop a field.
 * Output names: struct X -> struct amd_X; macro AMDKFD_Y -> AMD_KFD_Y; any other macro or enumerator Z -> AMD_Z. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autogen/gen/macro_table.h"

#define KG_NAME 96

typedef struct kg_struct kg_struct;
typedef struct kg_field {
  char name[KG_NAME];   /* empty for an anonymous union */
  char type[KG_NAME];   /* "__u32", or the struct tag for struct members */
  int is_struct;
  int array;            /* -1: not an array, 0: flexible, >0: element count (from the probe) */
  char array_expr[KG_NAME];
  kg_struct *anon;      /* anonymous union members */
  int line;
} kg_field;

struct kg_struct {
  char name[KG_NAME];
  int is_union;
  kg_field *fields;
  int nfields;
  int line;
  long size;            /* from the probe */
  long *offsets;        /* per field, from the probe */
};

typedef struct kg_const {
  char name[KG_NAME];
  int line;
  int is_enum;
  int have;             /* probe value present */
  unsigned long long value;
  int size_B;
} kg_const;

typedef struct kg_ioctl {
  char name[KG_NAME];
  char sname[KG_NAME];
  int line;
  int have;
  unsigned long long request;
} kg_ioctl;

typedef struct kg_model {
  const char *path;
  kg_struct *structs[256];
  int nstructs;
  kg_const consts[512];
  int nconsts;
  kg_ioctl ioctls[128];
  int nioctls;
} kg_model;

static hcq_status kg_err(const kg_model *m, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static hcq_status kg_err(const kg_model *m, int line, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return hcq_status_make(HCQ_CODE_PARSE, "%s:%d: %s", m->path, line, msg);
}

static int copy_name(char *d, const char *s, size_t n) {
  if (n >= KG_NAME) return -1;
  memcpy(d, s, n);
  d[n] = 0;
  return 0;
}

/* ---- tokens of the non-preprocessor text ---- */

typedef struct kg_tok {
  char text[KG_NAME];
  int line;
} kg_tok;

typedef struct kg_lex {
  kg_tok *t;
  int n, cap, pos;
} kg_lex;

static hcq_status lex(const kg_model *m, char *text, kg_lex *lx) {
  int line = 1, bol = 1;
  for (char *p = text; *p;) {
    if (*p == '\n') { line++; bol = 1; p++; continue; }
    if (isspace((unsigned char)*p)) { p++; continue; }
    if (bol && *p == '#') { /* skip the directive and its continuation lines */
      while (*p && *p != '\n') {
        if (p[0] == '\\' && p[1] == '\n') { line++; p += 2; continue; }
        p++;
      }
      continue;
    }
    bol = 0;
    char *s = p;
    if (isalnum((unsigned char)*p) || *p == '_') while (isalnum((unsigned char)*p) || *p == '_') p++;
    else if (strchr("{}[];,=()*", *p)) p++;
    else return kg_err(m, line, "unexpected character '%c'", *p);
    if (lx->n == lx->cap) {
      lx->cap = lx->cap ? lx->cap * 2 : 1024;
      kg_tok *nt = realloc(lx->t, (size_t)lx->cap * sizeof *nt);
      if (!nt) return hcq_status_make(HCQ_CODE_NOMEM, "out of memory");
      lx->t = nt;
    }
    if (copy_name(lx->t[lx->n].text, s, (size_t)(p - s))) return kg_err(m, line, "token too long");
    lx->t[lx->n++].line = line;
  }
  return HCQ_OK;
}

static const kg_tok *peek(kg_lex *lx) { return lx->pos < lx->n ? &lx->t[lx->pos] : NULL; }
static int accept(kg_lex *lx, const char *s) {
  if (lx->pos < lx->n && !strcmp(lx->t[lx->pos].text, s)) { lx->pos++; return 1; }
  return 0;
}
static int last_line(kg_lex *lx) { return lx->n ? lx->t[lx->pos < lx->n ? lx->pos : lx->n - 1].line : 0; }
static int is_ident(const char *s) { return isalpha((unsigned char)*s) || *s == '_'; }

static hcq_status expect(const kg_model *m, kg_lex *lx, const char *s, const char *ctx) {
  if (accept(lx, s)) return HCQ_OK;
  const kg_tok *t = peek(lx);
  return kg_err(m, last_line(lx), "%s: expected '%s', found '%s'", ctx, s, t ? t->text : "end of file");
}

static hcq_status ident(const kg_model *m, kg_lex *lx, char *out, const char *ctx) {
  const kg_tok *t = peek(lx);
  if (!t || !is_ident(t->text)) return kg_err(m, last_line(lx), "%s: expected a name, found '%s'", ctx, t ? t->text : "end of file");
  strcpy(out, t->text);
  lx->pos++;
  return HCQ_OK;
}

static int scalar_type(const char *t) {
  static const char *ok[] = {"__u8", "__u16", "__u32", "__u64", "__s8", "__s16", "__s32", "__s64"};
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
    if (!strcmp(t, ok[i])) return 1;
  return 0;
}

static hcq_status parse_members(kg_model *m, kg_lex *lx, kg_struct *s);

static hcq_status add_field(kg_model *m, kg_struct *s, kg_field f) {
  kg_field *nf = realloc(s->fields, (size_t)(s->nfields + 1) * sizeof *nf);
  if (!nf) return kg_err(m, f.line, "out of memory");
  s->fields = nf;
  s->fields[s->nfields++] = f;
  return HCQ_OK;
}

static hcq_status parse_members(kg_model *m, kg_lex *lx, kg_struct *s) {
  while (!accept(lx, "}")) {
    kg_field f = {.array = -1, .line = last_line(lx)};
    const kg_tok *t = peek(lx);
    if (!t) return kg_err(m, last_line(lx), "struct %s: missing '}'", s->name);
    if (accept(lx, "union")) {
      if (!accept(lx, "{")) return kg_err(m, f.line, "struct %s: only anonymous unions are supported", s->name);
      kg_struct *u = calloc(1, sizeof *u);
      if (!u) return kg_err(m, f.line, "out of memory");
      u->is_union = 1;
      u->line = f.line;
      memcpy(u->name, s->name, sizeof u->name); /* the enclosing struct, for messages */
      f.anon = u;
      HCQ_TRY(parse_members(m, lx, u));
      HCQ_TRY(expect(m, lx, ";", "anonymous union"));
      HCQ_TRY(add_field(m, s, f));
      continue;
    }
    if (accept(lx, "struct")) {
      f.is_struct = 1;
      HCQ_TRY(ident(m, lx, f.type, "struct member type"));
    } else {
      HCQ_TRY(ident(m, lx, f.type, "member type"));
      if (!scalar_type(f.type))
        return kg_err(m, f.line, "struct %s: unsupported member type '%s' (expected __u8..__u64, __s8..__s64 or struct)",
                      s->name, f.type);
    }
    HCQ_TRY(ident(m, lx, f.name, "member name"));
    if (accept(lx, "[")) {
      if (accept(lx, "]")) f.array = 0;
      else {
        const kg_tok *n = peek(lx);
        if (!n || !isalnum((unsigned char)n->text[0]))
          return kg_err(m, f.line, "struct %s: array %s: size must be a name or a number", s->name, f.name);
        strcpy(f.array_expr, n->text);
        lx->pos++;
        f.array = 1; /* the real count comes from the probe */
        HCQ_TRY(expect(m, lx, "]", "array size"));
      }
    }
    HCQ_TRY(expect(m, lx, ";", "member"));
    HCQ_TRY(add_field(m, s, f));
  }
  return HCQ_OK;
}

static hcq_status add_const(kg_model *m, const char *name, int line, int is_enum) {
  if (m->nconsts == (int)(sizeof m->consts / sizeof *m->consts)) return kg_err(m, line, "too many constants");
  kg_const *c = &m->consts[m->nconsts++];
  memset(c, 0, sizeof *c);
  snprintf(c->name, sizeof c->name, "%s", name);
  c->line = line;
  c->is_enum = is_enum;
  return HCQ_OK;
}

static hcq_status parse_enum(kg_model *m, kg_lex *lx) {
  char tag[KG_NAME];
  HCQ_TRY(ident(m, lx, tag, "enum"));
  HCQ_TRY(expect(m, lx, "{", "enum"));
  while (!accept(lx, "}")) {
    char name[KG_NAME];
    int line = last_line(lx);
    HCQ_TRY(ident(m, lx, name, "enumerator"));
    HCQ_TRY(add_const(m, name, line, 1));
    if (accept(lx, "=")) /* the value is taken from the probe; skip its tokens */
      while (peek(lx) && strcmp(peek(lx)->text, ",") && strcmp(peek(lx)->text, "}")) lx->pos++;
    if (!accept(lx, ",") && !(peek(lx) && !strcmp(peek(lx)->text, "}")))
      return kg_err(m, last_line(lx), "enum %s: expected ',' or '}'", tag);
  }
  return expect(m, lx, ";", "enum");
}

/* "AMDKFD_IOWR(0x02, struct kfd_ioctl_create_queue_args)" -> struct name; NULL if it is not an ioctl define. */
static int ioctl_struct(const char *body, char *sname) {
  const char *p = body;
  if (strncmp(p, "AMDKFD_IO", 9)) return 0;
  p = strchr(p, ',');
  if (!p) return 0;
  p++;
  while (isspace((unsigned char)*p)) p++;
  if (strncmp(p, "struct", 6) || !isspace((unsigned char)p[6])) return 0;
  p += 6;
  while (isspace((unsigned char)*p)) p++;
  size_t n = 0;
  while (isalnum((unsigned char)p[n]) || p[n] == '_') n++;
  if (!n || copy_name(sname, p, n)) return 0;
  return 1;
}

static hcq_status kg_parse(const char *path, kg_model *m) {
  memset(m, 0, sizeof *m);
  m->path = path;
  mt_table mt;
  HCQ_TRY(mt_load(path, path, &mt));
  hcq_status st = HCQ_OK;
  for (size_t i = 0; i < mt.count && !st; i++) {
    const mt_macro *d = &mt.macros[i];
    if (d->nparams >= 0 || !*d->body) continue; /* function-like helpers, include guard */
    char sname[KG_NAME];
    if (ioctl_struct(d->body, sname)) {
      if (m->nioctls == (int)(sizeof m->ioctls / sizeof *m->ioctls)) { st = kg_err(m, d->line, "too many ioctls"); break; }
      kg_ioctl *io = &m->ioctls[m->nioctls++];
      memset(io, 0, sizeof *io);
      snprintf(io->name, sizeof io->name, "%s", d->name);
      snprintf(io->sname, sizeof io->sname, "%s", sname);
      io->line = d->line;
    } else if (!strncmp(d->body, "AMDKFD_IO", 9)) {
      st = kg_err(m, d->line, "%s: ioctl define without an argument struct is not supported: %s", d->name, d->body);
    } else {
      st = add_const(m, d->name, d->line, 0);
    }
  }
  mt_free(&mt);
  if (st) return st;

  FILE *f = fopen(path, "rb");
  if (!f) return hcq_status_make(HCQ_CODE_NOT_FOUND, "cannot open %s", path);
  char *text = calloc(1, 1 << 21);
  size_t len = text ? fread(text, 1, (1 << 21) - 1, f) : 0;
  fclose(f);
  if (!text) return hcq_status_make(HCQ_CODE_NOMEM, "out of memory");
  if (len == (1 << 21) - 1) { free(text); return hcq_status_make(HCQ_CODE_INVALID, "%s: file too large", path); }
  mt_strip_comments(text);
  kg_lex lx = {0};
  st = lex(m, text, &lx);
  free(text);
  while (!st && lx.pos < lx.n) {
    int line = last_line(&lx);
    if (accept(&lx, "enum")) { st = parse_enum(m, &lx); continue; }
    if (!accept(&lx, "struct")) { st = kg_err(m, line, "unexpected '%s' at file scope", peek(&lx)->text); break; }
    kg_struct *s = calloc(1, sizeof *s);
    if (!s) { st = kg_err(m, line, "out of memory"); break; }
    s->line = line;
    m->structs[m->nstructs++] = s;
    if (m->nstructs == (int)(sizeof m->structs / sizeof *m->structs)) { st = kg_err(m, line, "too many structs"); break; }
    st = ident(m, &lx, s->name, "struct");
    if (!st) st = expect(m, &lx, "{", "struct definition");
    if (!st) st = parse_members(m, &lx, s);
    if (!st) st = expect(m, &lx, ";", "struct definition");
  }
  free(lx.t);
  if (st) return st;
  for (int i = 0; i < m->nioctls; i++) {
    int found = 0;
    for (int k = 0; k < m->nstructs; k++) found |= !strcmp(m->structs[k]->name, m->ioctls[i].sname);
    if (!found) return kg_err(m, m->ioctls[i].line, "%s: argument struct %s is not defined", m->ioctls[i].name,
                              m->ioctls[i].sname);
  }
  if (!m->nioctls || !m->nstructs) return kg_err(m, 1, "no ioctls or structs found");
  return HCQ_OK;
}

static kg_struct *find_struct(kg_model *m, const char *name) {
  for (int i = 0; i < m->nstructs; i++)
    if (!strcmp(m->structs[i]->name, name)) return m->structs[i];
  return NULL;
}

/* ---- probe ---- */

static void probe_members(FILE *o, const char *sname, const kg_struct *s) {
  for (int i = 0; i < s->nfields; i++) {
    const kg_field *f = &s->fields[i];
    if (f->anon) { probe_members(o, sname, f->anon); continue; }
    if (f->array == 0)
      fprintf(o, "  printf(\"F %s %s %%zu 0\\n\", offsetof(struct %s, %s));\n", sname, f->name, sname, f->name);
    else
      fprintf(o, "  printf(\"F %s %s %%zu %%zu\\n\", offsetof(struct %s, %s), sizeof(((struct %s *)0)->%s));\n", sname,
              f->name, sname, f->name, sname, f->name);
    if (f->array > 0)
      fprintf(o, "  printf(\"A %s %s %%zu\\n\", sizeof(((struct %s *)0)->%s) / sizeof(((struct %s *)0)->%s[0]));\n",
              sname, f->name, sname, f->name, sname, f->name);
  }
}

static void kg_probe(kg_model *m, FILE *o) {
  fprintf(o, "/* probe generated by kfdgen from %s */\n#include <stddef.h>\n#include <stdio.h>\n#include <linux/kfd_ioctl.h>\n"
             "int main(void) {\n", m->path);
  for (int i = 0; i < m->nconsts; i++)
    fprintf(o, "  printf(\"%c %s %%d %%llu\\n\", (int)sizeof(%s), (unsigned long long)(%s));\n",
            m->consts[i].is_enum ? 'E' : 'D', m->consts[i].name, m->consts[i].name, m->consts[i].name);
  for (int i = 0; i < m->nstructs; i++) {
    const kg_struct *s = m->structs[i];
    fprintf(o, "  printf(\"S %s %%zu\\n\", sizeof(struct %s));\n", s->name, s->name);
    probe_members(o, s->name, s);
  }
  for (int i = 0; i < m->nioctls; i++)
    fprintf(o, "  printf(\"I %s %%lu\\n\", (unsigned long)(%s));\n", m->ioctls[i].name, m->ioctls[i].name);
  fprintf(o, "  return 0;\n}\n");
}

/* ---- facts ---- */

static kg_field *find_member(kg_struct *s, const char *name) {
  for (int i = 0; i < s->nfields; i++) {
    kg_field *f = &s->fields[i];
    if (f->anon) {
      kg_field *g = find_member(f->anon, name);
      if (g) return g;
    } else if (!strcmp(f->name, name)) {
      return f;
    }
  }
  return NULL;
}

typedef struct kg_fact_field { long offset, size; } kg_fact_field;

/* Field offsets/sizes live beside the field, found by (struct, member) name. */
typedef struct kg_facts {
  char sname[256][KG_NAME];
  char fname[256 * 24][KG_NAME];
  char fstruct[256 * 24][KG_NAME];
  kg_fact_field ff[256 * 24];
  int nff;
} kg_facts;

static kg_facts g_facts;

static long fact_offset(const char *sname, const char *fname, long *size) {
  for (int i = 0; i < g_facts.nff; i++)
    if (!strcmp(g_facts.fstruct[i], sname) && !strcmp(g_facts.fname[i], fname)) {
      if (size) *size = g_facts.ff[i].size;
      return g_facts.ff[i].offset;
    }
  return -1;
}

static hcq_status kg_read_facts(kg_model *m, const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return hcq_status_make(HCQ_CODE_NOT_FOUND, "cannot open probe output %s", path);
  char line[512];
  int ln = 0;
  hcq_status st = HCQ_OK;
  while (!st && fgets(line, sizeof line, f)) {
    ln++;
    char a[KG_NAME], b[KG_NAME];
    unsigned long long v1, v2;
    if ((line[0] == 'D' || line[0] == 'E') && sscanf(line + 2, "%95s %llu %llu", a, &v1, &v2) == 3) {
      int hit = 0;
      for (int i = 0; i < m->nconsts; i++)
        if (!strcmp(m->consts[i].name, a)) { m->consts[i].have = 1; m->consts[i].size_B = (int)v1; m->consts[i].value = v2; hit = 1; }
      if (!hit) st = hcq_status_make(HCQ_CODE_INVALID, "%s:%d: unknown constant %s", path, ln, a);
    } else if (line[0] == 'S' && sscanf(line + 2, "%95s %llu", a, &v1) == 2) {
      kg_struct *s = find_struct(m, a);
      if (!s) st = hcq_status_make(HCQ_CODE_INVALID, "%s:%d: unknown struct %s", path, ln, a);
      else s->size = (long)v1;
    } else if (line[0] == 'F' && sscanf(line + 2, "%95s %95s %llu %llu", a, b, &v1, &v2) == 4) {
      if (g_facts.nff == (int)(sizeof g_facts.ff / sizeof *g_facts.ff)) { st = hcq_status_make(HCQ_CODE_INVALID, "too many fields"); break; }
      strcpy(g_facts.fstruct[g_facts.nff], a);
      strcpy(g_facts.fname[g_facts.nff], b);
      g_facts.ff[g_facts.nff].offset = (long)v1;
      g_facts.ff[g_facts.nff++].size = (long)v2;
    } else if (line[0] == 'A' && sscanf(line + 2, "%95s %95s %llu", a, b, &v1) == 3) {
      kg_struct *s = find_struct(m, a);
      kg_field *fl = s ? find_member(s, b) : NULL;
      if (!fl) st = hcq_status_make(HCQ_CODE_INVALID, "%s:%d: unknown member %s.%s", path, ln, a, b);
      else fl->array = (int)v1;
    } else if (line[0] == 'I' && sscanf(line + 2, "%95s %llu", a, &v1) == 2) {
      int hit = 0;
      for (int i = 0; i < m->nioctls; i++)
        if (!strcmp(m->ioctls[i].name, a)) { m->ioctls[i].have = 1; m->ioctls[i].request = v1; hit = 1; }
      if (!hit) st = hcq_status_make(HCQ_CODE_INVALID, "%s:%d: unknown ioctl %s", path, ln, a);
    } else {
      st = hcq_status_make(HCQ_CODE_PARSE, "%s:%d: malformed probe line: %s", path, ln, line);
    }
  }
  fclose(f);
  if (st) return st;
  for (int i = 0; i < m->nconsts; i++)
    if (!m->consts[i].have) return kg_err(m, m->consts[i].line, "%s: no value from the probe", m->consts[i].name);
  for (int i = 0; i < m->nioctls; i++)
    if (!m->ioctls[i].have) return kg_err(m, m->ioctls[i].line, "%s: no request code from the probe", m->ioctls[i].name);
  for (int i = 0; i < m->nstructs; i++)
    if (m->structs[i]->size <= 0) return kg_err(m, m->structs[i]->line, "struct %s: no size from the probe", m->structs[i]->name);
  return HCQ_OK;
}

/* ---- emit ---- */

static void out_macro(const char *name, char *buf, size_t n) {
  if (!strncmp(name, "AMDKFD_", 7)) snprintf(buf, n, "AMD_KFD_%s", name + 7);
  else snprintf(buf, n, "AMD_%s", name);
}

static const char *stdint_of(const char *t) {
  static const char *map[][2] = {{"__u8", "uint8_t"}, {"__u16", "uint16_t"}, {"__u32", "uint32_t"}, {"__u64", "uint64_t"},
                                 {"__s8", "int8_t"},  {"__s16", "int16_t"},  {"__s32", "int32_t"},  {"__s64", "int64_t"}};
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (!strcmp(map[i][0], t)) return map[i][1];
  return NULL;
}

static const kg_const *find_const(kg_model *m, const char *name) {
  for (int i = 0; i < m->nconsts; i++)
    if (!strcmp(m->consts[i].name, name)) return &m->consts[i];
  return NULL;
}

static void emit_members(kg_model *m, FILE *o, const kg_struct *s, int indent) {
  for (int i = 0; i < s->nfields; i++) {
    const kg_field *f = &s->fields[i];
    if (f->anon) {
      fprintf(o, "%*sunion {\n", indent, "");
      emit_members(m, o, f->anon, indent + 2);
      fprintf(o, "%*s};\n", indent, "");
      continue;
    }
    char type[2 * KG_NAME];
    if (f->is_struct) snprintf(type, sizeof type, "struct amd_%s", f->type);
    else snprintf(type, sizeof type, "%s", stdint_of(f->type));
    if (f->array < 0) fprintf(o, "%*s%s %s;\n", indent, "", type, f->name);
    else if (f->array == 0) fprintf(o, "%*s%s %s[];\n", indent, "", type, f->name);
    else if (is_ident(f->array_expr) && find_const(m, f->array_expr)) {
      char mn[2 * KG_NAME];
      out_macro(f->array_expr, mn, sizeof mn);
      fprintf(o, "%*s%s %s[%s];\n", indent, "", type, f->name, mn);
    } else {
      fprintf(o, "%*s%s %s[%d];\n", indent, "", type, f->name, f->array);
    }
  }
}

static hcq_status assert_members(kg_model *m, FILE *o, const kg_struct *top, const kg_struct *s) {
  for (int i = 0; i < s->nfields; i++) {
    const kg_field *f = &s->fields[i];
    if (f->anon) { HCQ_TRY(assert_members(m, o, top, f->anon)); continue; }
    long size, off = fact_offset(top->name, f->name, &size);
    if (off < 0) return kg_err(m, f->line, "%s.%s: no offset from the probe", top->name, f->name);
    fprintf(o, "_Static_assert(__builtin_offsetof(struct amd_%s, %s) == %ld, \"%s.%s offset\");\n", top->name, f->name,
            off, top->name, f->name);
    if (f->array != 0)
      fprintf(o, "_Static_assert(sizeof(((struct amd_%s *)0)->%s) == %ld, \"%s.%s size\");\n", top->name, f->name,
              size, top->name, f->name);
  }
  return HCQ_OK;
}

static void list_fields(FILE *o, const kg_struct *top, const kg_struct *s, int flex) {
  for (int i = 0; i < s->nfields; i++) {
    const kg_field *f = &s->fields[i];
    if (f->anon) { list_fields(o, top, f->anon, flex); continue; }
    if ((f->array == 0) == flex) fprintf(o, " \\\n  X(%s, %s)", top->name, f->name);
  }
}

static FILE *open_out(const char *dir, const char *name, char *path, size_t n) {
  snprintf(path, n, "%s/%s", dir, name);
  return fopen(path, "w");
}

static hcq_status kg_emit_header(kg_model *m, const char *dir, const char *pins) {
  char path[1024];
  FILE *o = open_out(dir, "kfd.h", path, sizeof path);
  if (!o) return hcq_status_make(HCQ_CODE_IO, "cannot write %s: %s", path, strerror(errno));
  const kg_const *maj = find_const(m, "KFD_IOCTL_MAJOR_VERSION"), *min = find_const(m, "KFD_IOCTL_MINOR_VERSION");
  fprintf(o, "/* GENERATED by autogen/gen/kfdgen.c from %s: do not edit; run `make autogen`.\n"
             " *   KFD ioctl interface %llu.%llu; pinned package: %s\n"
             " * Every struct, constant and request code of the header, renamed so this file can sit beside the real one:\n"
             " * struct X -> struct amd_X, AMDKFD_Y -> AMD_KFD_Y, other macros and enumerators Z -> AMD_Z.\n"
             " * Sizes and offsets below were measured by compiling the real header (see autogen/gen/gen_amd.sh). */\n"
             "#ifndef HCQ_AUTOGEN_KFD_H\n#define HCQ_AUTOGEN_KFD_H\n\n#include <stdint.h>\n\n",
          m->path, maj ? maj->value : 0ull, min ? min->value : 0ull, pins);
  fprintf(o, "/* Constants (#defines and enumerators). */\n");
  for (int i = 0; i < m->nconsts; i++) {
    const kg_const *c = &m->consts[i];
    char mn[2 * KG_NAME];
    out_macro(c->name, mn, sizeof mn);
    unsigned long long v = c->size_B <= 4 ? (c->value & 0xffffffffull) : c->value;
    if (c->size_B > 4 && v > 0xffffffffull) fprintf(o, "#define %s 0x%llxull\n", mn, v);
    else if (v >= 0x80000000ull) fprintf(o, "#define %s 0x%llxu\n", mn, v);
    else fprintf(o, "#define %s %llu\n", mn, v);
  }
  fprintf(o, "\n");
  for (int i = 0; i < m->nstructs; i++) {
    const kg_struct *s = m->structs[i];
    fprintf(o, "struct amd_%s {\n", s->name);
    emit_members(m, o, s, 2);
    fprintf(o, "};\n_Static_assert(sizeof(struct amd_%s) == %ld, \"sizeof %s\");\n", s->name, s->size, s->name);
    HCQ_TRY(assert_members(m, o, s, s));
    fprintf(o, "\n");
  }
  fprintf(o, "/* Request codes: (dir << 30) | (size << 16) | ('K' << 8) | nr. */\n");
  for (int i = 0; i < m->nioctls; i++) {
    char mn[2 * KG_NAME];
    out_macro(m->ioctls[i].name, mn, sizeof mn);
    fprintf(o, "#define %s 0x%08llxul\n", mn, m->ioctls[i].request);
    fprintf(o, "_Static_assert(((%s >> 16) & 0x3fff) == sizeof(struct amd_%s), \"%s size field\");\n", mn,
            m->ioctls[i].sname, m->ioctls[i].name);
  }
  fprintf(o, "\n#endif\n");
  if (fclose(o)) return hcq_status_make(HCQ_CODE_IO, "cannot write %s", path);

  o = open_out(dir, "kfd_abi_list.h", path, sizeof path);
  if (!o) return hcq_status_make(HCQ_CODE_IO, "cannot write %s: %s", path, strerror(errno));
  fprintf(o, "/* GENERATED by autogen/gen/kfdgen.c from %s: do not edit; run `make autogen`.\n"
             " * X-macro lists of everything autogen/kfd.h mirrors, for tests that compare it with the real header. */\n"
             "#ifndef HCQ_AUTOGEN_KFD_ABI_LIST_H\n#define HCQ_AUTOGEN_KFD_ABI_LIST_H\n\n", m->path);
  fprintf(o, "/* X(real name, generated name) */\n#define AMD_KFD_ABI_CONSTS(X)");
  for (int i = 0; i < m->nconsts; i++) {
    char mn[2 * KG_NAME];
    out_macro(m->consts[i].name, mn, sizeof mn);
    fprintf(o, " \\\n  X(%s, %s)", m->consts[i].name, mn);
  }
  fprintf(o, "\n\n/* X(real name, generated name, argument struct) */\n#define AMD_KFD_ABI_IOCTLS(X)");
  for (int i = 0; i < m->nioctls; i++) {
    char mn[2 * KG_NAME];
    out_macro(m->ioctls[i].name, mn, sizeof mn);
    fprintf(o, " \\\n  X(%s, %s, %s)", m->ioctls[i].name, mn, m->ioctls[i].sname);
  }
  fprintf(o, "\n\n/* X(struct tag): the generated one is amd_<tag> */\n#define AMD_KFD_ABI_STRUCTS(X)");
  for (int i = 0; i < m->nstructs; i++) fprintf(o, " \\\n  X(%s)", m->structs[i]->name);
  fprintf(o, "\n\n/* X(struct tag, member): members with a size */\n#define AMD_KFD_ABI_FIELDS(X)");
  for (int i = 0; i < m->nstructs; i++) list_fields(o, m->structs[i], m->structs[i], 0);
  fprintf(o, "\n\n/* X(struct tag, member): flexible array members (offset only) */\n#define AMD_KFD_ABI_FLEX_FIELDS(X)");
  for (int i = 0; i < m->nstructs; i++) list_fields(o, m->structs[i], m->structs[i], 1);
  fprintf(o, "\n\n#define AMD_KFD_ABI_NUM_IOCTLS %d\n#define AMD_KFD_ABI_NUM_STRUCTS %d\n#define AMD_KFD_ABI_NUM_CONSTS %d\n\n#endif\n",
          m->nioctls, m->nstructs, m->nconsts);
  if (fclose(o)) return hcq_status_make(HCQ_CODE_IO, "cannot write %s", path);
  return HCQ_OK;
}

/* Decoder field formats. */
enum { KG_FMT_DEC = 0, KG_FMT_HEX = 1, KG_FMT_SIGNED = 2 };

static int field_fmt(const char *type, const char *name) {
  if (type[2] == 's') return KG_FMT_SIGNED; /* "__s32" */
  if (!strcmp(type, "__u64") || strstr(name, "flags") || strstr(name, "mask") || strstr(name, "addr") ||
      strstr(name, "ptr") || strstr(name, "offset"))
    return KG_FMT_HEX;
  return KG_FMT_DEC;
}

static int type_size(const char *type) { return atoi(type + 3) / 8; }

/* One table row per scalar leaf, nested structs and arrays expanded; path is a C member designator. */
static hcq_status emit_leaves(kg_model *m, FILE *o, const char *top, const kg_struct *s, const char *prefix, int *count) {
  for (int i = 0; i < s->nfields; i++) {
    const kg_field *f = &s->fields[i];
    if (f->anon) { HCQ_TRY(emit_leaves(m, o, top, f->anon, prefix, count)); continue; }
    if (f->array == 0) continue; /* flexible array: its length is another field; print nothing */
    int n = f->array < 0 ? 1 : f->array;
    for (int k = 0; k < n; k++) {
      char path[256];
      if (f->array < 0) snprintf(path, sizeof path, "%s%s", prefix, f->name);
      else snprintf(path, sizeof path, "%s%s[%d]", prefix, f->name, k);
      if (f->is_struct) {
        kg_struct *sub = find_struct(m, f->type);
        if (!sub) return kg_err(m, f->line, "struct %s is not defined", f->type);
        char p2[300];
        snprintf(p2, sizeof p2, "%s.", path);
        HCQ_TRY(emit_leaves(m, o, top, sub, p2, count));
      } else {
        fprintf(o, "  {\"%s\", __builtin_offsetof(struct amd_%s, %s), %d, %d},\n", path, top, path, type_size(f->type),
                field_fmt(f->type, f->name));
        (*count)++;
      }
    }
  }
  return HCQ_OK;
}

static const char *kg_walker =
    "typedef struct kfd_field {\n"
    "  const char *name;\n"
    "  uint16_t offset_B;\n"
    "  uint8_t size_B;\n"
    "  uint8_t fmt; /* 0 unsigned decimal, 1 hex, 2 signed decimal */\n"
    "} kfd_field;\n\n"
    "static size_t kfd_append(char *out, size_t out_size_B, size_t pos, const char *fmt, ...)\n"
    "    __attribute__((format(printf, 4, 5)));\n"
    "static size_t kfd_append(char *out, size_t out_size_B, size_t pos, const char *fmt, ...) {\n"
    "  if (pos + 1 >= out_size_B) return pos;\n"
    "  va_list ap;\n"
    "  va_start(ap, fmt);\n"
    "  int n = vsnprintf(out + pos, out_size_B - pos, fmt, ap);\n"
    "  va_end(ap);\n"
    "  if (n < 0) return pos;\n"
    "  return pos + (size_t)n < out_size_B ? pos + (size_t)n : out_size_B - 1;\n"
    "}\n\n"
    "/* Prints \"name=value\" for every field inside arg_size_B; a short argument is reported, never over-read. */\n"
    "static size_t kfd_walk(const kfd_field *fields, size_t count, size_t struct_size_B, const void *arg,\n"
    "                       size_t arg_size_B, char *out, size_t out_size_B) {\n"
    "  if (!out || !out_size_B) return 0;\n"
    "  out[0] = 0;\n"
    "  if (!arg) return kfd_append(out, out_size_B, 0, \"(null)\");\n"
    "  size_t pos = 0;\n"
    "  for (size_t i = 0; i < count; i++) {\n"
    "    const kfd_field *f = &fields[i];\n"
    "    if ((size_t)f->offset_B + f->size_B > arg_size_B) break;\n"
    "    const unsigned char *p = (const unsigned char *)arg + f->offset_B;\n"
    "    uint64_t v = 0;\n"
    "    for (unsigned b = 0; b < f->size_B; b++) v |= (uint64_t)p[b] << (8 * b); /* little-endian ABI */\n"
    "    const char *sep = pos ? \" \" : \"\";\n"
    "    if (f->fmt == 1) pos = kfd_append(out, out_size_B, pos, \"%s%s=0x%\" PRIx64, sep, f->name, v);\n"
    "    else if (f->fmt == 2) {\n"
    "      int64_t s = f->size_B == 8 ? (int64_t)v : f->size_B == 4 ? (int32_t)(uint32_t)v\n"
    "                : f->size_B == 2 ? (int16_t)(uint16_t)v : (int8_t)(uint8_t)v;\n"
    "      pos = kfd_append(out, out_size_B, pos, \"%s%s=%\" PRId64, sep, f->name, s);\n"
    "    } else pos = kfd_append(out, out_size_B, pos, \"%s%s=%\" PRIu64, sep, f->name, v);\n"
    "  }\n"
    "  if (arg_size_B < struct_size_B)\n"
    "    pos = kfd_append(out, out_size_B, pos, \"%s(short argument: %zu of %zu bytes)\", pos ? \" \" : \"\", arg_size_B,\n"
    "                     struct_size_B);\n"
    "  return pos;\n"
    "}\n\n";

static hcq_status kg_emit_decoders(kg_model *m, const char *dir) {
  char path[1024];
  FILE *o = open_out(dir, "kfd_decode.c", path, sizeof path);
  if (!o) return hcq_status_make(HCQ_CODE_IO, "cannot write %s: %s", path, strerror(errno));
  fprintf(o, "/* GENERATED by autogen/gen/kfdgen.c from %s: do not edit; run `make autogen`.\n"
             " * Text decoders for every KFD ioctl argument struct and the /dev/kfd ioctl table (kernel_iface contract). */\n"
             "#include <inttypes.h>\n#include <stdarg.h>\n#include <stdio.h>\n\n#include \"autogen/kfd.h\"\n"
             "#include \"autogen/kfd_decode.h\"\n\n%s",
          m->path, kg_walker);
  int done[256] = {0};
  for (int i = 0; i < m->nioctls; i++) {
    kg_struct *s = find_struct(m, m->ioctls[i].sname);
    int si = 0;
    while (m->structs[si] != s) si++;
    if (done[si]) continue;
    done[si] = 1;
    int count = 0;
    fprintf(o, "static const kfd_field kfd_fields_%s[] = {\n", s->name);
    HCQ_TRY(emit_leaves(m, o, s->name, s, "", &count));
    if (!count) fprintf(o, "  {0, 0, 0, 0},\n");
    fprintf(o, "};\n\nstatic size_t kfd_decode_%s(const void *arg, size_t arg_size_B, char *out, size_t out_size_B) {\n"
               "  return kfd_walk(kfd_fields_%s, %d, sizeof(struct amd_%s), arg, arg_size_B, out, out_size_B);\n}\n\n",
            s->name, s->name, count, s->name);
  }
  fprintf(o, "static const kif_ioctl_desc kfd_ioctl_descs[] = {\n");
  for (int i = 0; i < m->nioctls; i++) {
    char mn[2 * KG_NAME];
    out_macro(m->ioctls[i].name, mn, sizeof mn);
    fprintf(o, "  {\"%s\", %s, \"%s\", sizeof(struct amd_%s), kfd_decode_%s},\n", m->ioctls[i].name, mn,
            m->ioctls[i].sname, m->ioctls[i].sname, m->ioctls[i].sname);
  }
  fprintf(o, "};\n\nconst kif_ioctl_table kfd_ioctl_table = {\"/dev/kfd\", kfd_ioctl_descs, %d};\n", m->nioctls);
  if (fclose(o)) return hcq_status_make(HCQ_CODE_IO, "cannot write %s", path);

  o = open_out(dir, "kfd_decode.h", path, sizeof path);
  if (!o) return hcq_status_make(HCQ_CODE_IO, "cannot write %s: %s", path, strerror(errno));
  fprintf(o, "/* GENERATED by autogen/gen/kfdgen.c: do not edit; run `make autogen`. */\n"
             "#ifndef HCQ_AUTOGEN_KFD_DECODE_H\n#define HCQ_AUTOGEN_KFD_DECODE_H\n\n#include \"kernel_iface/ioctl_desc.h\"\n\n"
             "/* Every ioctl of linux/kfd_ioctl.h with its argument decoder; applies to /dev/kfd. */\n"
             "extern const kif_ioctl_table kfd_ioctl_table;\n\n#endif\n");
  if (fclose(o)) return hcq_status_make(HCQ_CODE_IO, "cannot write %s", path);
  return HCQ_OK;
}

/* Two generated names must not collide (AMDKFD_X and KFD_X would both become AMD_KFD_X). */
static hcq_status kg_check_names(kg_model *m) {
  for (int i = 0; i < m->nconsts; i++)
    for (int k = 0; k < m->nioctls; k++) {
      char a[2 * KG_NAME], b[2 * KG_NAME];
      out_macro(m->consts[i].name, a, sizeof a);
      out_macro(m->ioctls[k].name, b, sizeof b);
      if (!strcmp(a, b)) return kg_err(m, m->ioctls[k].line, "%s and %s both map to %s", m->consts[i].name, m->ioctls[k].name, a);
    }
  for (int i = 0; i < m->nconsts; i++)
    for (int k = i + 1; k < m->nconsts; k++) {
      char a[2 * KG_NAME], b[2 * KG_NAME];
      out_macro(m->consts[i].name, a, sizeof a);
      out_macro(m->consts[k].name, b, sizeof b);
      if (!strcmp(a, b)) return kg_err(m, m->consts[k].line, "%s and %s both map to %s", m->consts[i].name, m->consts[k].name, a);
    }
  return HCQ_OK;
}

#ifndef KFDGEN_NO_MAIN
int main(int argc, char **argv) {
  static kg_model m;
  hcq_status st = HCQ_OK;
  if (argc == 3 && !strcmp(argv[1], "probe")) {
    st = kg_parse(argv[2], &m);
    if (!st) kg_probe(&m, stdout);
  } else if (argc == 6 && !strcmp(argv[1], "emit")) {
    st = kg_parse(argv[2], &m);
    if (!st) st = kg_check_names(&m);
    if (!st) st = kg_read_facts(&m, argv[3]);
    if (!st) st = kg_emit_header(&m, argv[4], argv[5]);
    if (!st) st = kg_emit_decoders(&m, argv[4]);
  } else {
    fprintf(stderr, "usage: kfdgen probe HEADER > probe.c | kfdgen emit HEADER FACTS OUTDIR PINS\n");
    return 2;
  }
  if (st) {
    fprintf(stderr, "kfdgen: %s\n", hcq_status_message(st));
    hcq_status_free(st);
    return 1;
  }
  return 0;
}
#endif
