/* nv_gen: reads the NVIDIA ABI spec (autogen/gen/nv_spec/ files) and writes autogen/nv_abi.h, nv_qmd.h,
 * nv_layout.h and nv_decode.c.
 *
 * This file is the generator's core with no main(): nv_gen_main.c wraps it into the tool, and
 * autogen/nv_gen_test.c #includes it to feed it bad specs. It is NOT part of libhcq.
 *
 * Spec format (one item per line, '#' starts a comment):
 *   source: TEXT                         provenance of the blocks that follow (required before any block)
 *   branch NAME versions=570,575         a layout set and the driver major versions it serves
 *   struct NAME size=N [branches=A,B]    begin a struct; without branches= it is the same on every branch
 *   field NAME TYPE offset=N [count=N]   TYPE: u8 u16 u32 u64 i32 bool handle ptr struct:NAME
 *   end                                  close the struct
 *   ioctl rm NAME nr=0xNN struct=S [count=N] [req=0x...]   RM escape; req (if given) is checked
 *   ioctl uvm NAME req=0xNN struct=S     UVM ioctl: the request is the raw number
 *   ctrl NAME cmd=0xNN struct=S          RM control command and its parameter struct
 *   class NAME 0xNNNN                    class id
 *   method CLASS NAME 0xNNNN             method byte offset in class CLASS
 *   qmd VERSION NAME hi lo [step=N count=N]   QMD bit range; indexed fields add step*i to hi and lo
 *   const NAME VALUE                     a named value (flags, indexes)
 * Every field offset and struct size is also computed here with natural C alignment and must agree with the
 * spec: the two entries guard against transcription errors. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVG_NAME_MAX 96
#define NVG_MAX_BRANCHES 16

typedef enum { NVG_U8, NVG_U16, NVG_U32, NVG_U64, NVG_I32, NVG_BOOL, NVG_HANDLE, NVG_PTR, NVG_STRUCT } nvg_kind;

typedef struct {
  char name[NVG_NAME_MAX];
  nvg_kind kind;
  int sub; /* struct index for NVG_STRUCT */
  unsigned count, offset;
  int line;
} nvg_field;

typedef struct {
  char name[NVG_NAME_MAX];
  unsigned size, align;
  unsigned branch_mask; /* 0: same on every branch */
  nvg_field *fields;
  int nfields;
  const char *source;
  const char *file;
  int line;
} nvg_struct;

typedef struct {
  int is_uvm;
  char name[NVG_NAME_MAX], sname[NVG_NAME_MAX];
  unsigned long long nr_or_req, req_check;
  unsigned count;
  const char *source;
  const char *file;
  int line;
} nvg_ioctl;

typedef struct {
  char name[NVG_NAME_MAX], a[NVG_NAME_MAX], b[NVG_NAME_MAX];
  unsigned long long v, v2;
  unsigned step, count;
  const char *source;
  const char *file;
  int line;
} nvg_item; /* ctrl (a = struct), class, method (a = class), qmd (a = version; v = hi, v2 = lo), const */

typedef struct {
  char name[NVG_NAME_MAX];
  unsigned versions[16];
  int nversions;
  const char *source;
} nvg_branch;

typedef struct {
  nvg_struct *structs;
  int nstructs;
  nvg_ioctl *ioctls;
  int nioctls;
  nvg_item *ctrls, *classes, *methods, *qmds, *consts;
  int nctrls, nclasses, nmethods, nqmds, nconsts;
  nvg_branch branches[NVG_MAX_BRANCHES];
  int nbranches;
  char **strings; /* owned copies: sources and file names */
  int nstrings;
  char err[1024];
} nvg_spec;

static int nvg_fail(nvg_spec *s, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int nvg_fail(nvg_spec *s, const char *file, int line, const char *fmt, ...) {
  int n = snprintf(s->err, sizeof s->err, "%s:%d: ", file, line);
  va_list ap;
  va_start(ap, fmt);
  if (n > 0 && (size_t)n < sizeof s->err) vsnprintf(s->err + n, sizeof s->err - (size_t)n, fmt, ap);
  va_end(ap);
  return -1;
}

static void *nvg_grow(void *p, int n, size_t elem) {
  /* grow by doubling at powers of two; n is the current count */
  if (n && (n & (n - 1))) return p;
  size_t cap = n ? (size_t)n * 2 : 8;
  void *q = realloc(p, cap * elem);
  if (!q) {
    fprintf(stderr, "nv_gen: out of memory\n");
    exit(1); /* tool only, not library code */
  }
  return q;
}

static const char *nvg_keep(nvg_spec *s, const char *text) {
  s->strings = nvg_grow(s->strings, s->nstrings, sizeof *s->strings);
  char *c = strdup(text);
  if (!c) {
    fprintf(stderr, "nv_gen: out of memory\n");
    exit(1);
  }
  s->strings[s->nstrings++] = c;
  return c;
}

static void nvg_free(nvg_spec *s) {
  for (int i = 0; i < s->nstructs; i++) free(s->structs[i].fields);
  free(s->structs);
  free(s->ioctls);
  free(s->ctrls);
  free(s->classes);
  free(s->methods);
  free(s->qmds);
  free(s->consts);
  for (int i = 0; i < s->nstrings; i++) free(s->strings[i]);
  free(s->strings);
  memset(s, 0, sizeof *s);
}

static int nvg_is_ident(const char *t) {
  if (!*t || !(isalpha((unsigned char)*t) || *t == '_')) return 0;
  for (; *t; t++)
    if (!(isalnum((unsigned char)*t) || *t == '_')) return 0;
  return 1;
}

static int nvg_num(const char *t, unsigned long long *out) {
  if (!*t || *t == '-') return 0;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(t, &end, 0);
  if (errno || *end) return 0;
  *out = v;
  return 1;
}

/* Finds "key=" among the tokens; returns its value or NULL. */
static const char *nvg_opt(char **tok, int ntok, int from, const char *key) {
  size_t k = strlen(key);
  for (int i = from; i < ntok; i++)
    if (!strncmp(tok[i], key, k) && tok[i][k] == '=') return tok[i] + k + 1;
  return NULL;
}

/* Every token from `from` on must be one of the allowed key=value options. */
static int nvg_check_opts(nvg_spec *s, const char *file, int line, char **tok, int ntok, int from,
                          const char *const *allowed) {
  for (int i = from; i < ntok; i++) {
    int ok = 0;
    for (const char *const *a = allowed; *a; a++) {
      size_t k = strlen(*a);
      if (!strncmp(tok[i], *a, k) && tok[i][k] == '=') ok = 1;
    }
    if (!ok) return nvg_fail(s, file, line, "%s: unexpected item '%s'", tok[0], tok[i]);
  }
  return 0;
}

static int nvg_num_opt(nvg_spec *s, const char *file, int line, char **tok, int ntok, int from, const char *key,
                       int required, unsigned long long *out) {
  const char *v = nvg_opt(tok, ntok, from, key);
  if (!v) return required ? nvg_fail(s, file, line, "%s: missing %s=", tok[0], key) : 0;
  if (!nvg_num(v, out)) return nvg_fail(s, file, line, "%s: bad number '%s' in %s=", tok[0], v, key);
  return 1;
}

static int nvg_find_struct(const nvg_spec *s, const char *name, unsigned branch_bit) {
  for (int i = 0; i < s->nstructs; i++)
    if (!strcmp(s->structs[i].name, name) &&
        (!branch_bit || !s->structs[i].branch_mask || (s->structs[i].branch_mask & branch_bit)))
      return i;
  return -1;
}

static int nvg_find_branch(const nvg_spec *s, const char *name) {
  for (int i = 0; i < s->nbranches; i++)
    if (!strcmp(s->branches[i].name, name)) return i;
  return -1;
}

static unsigned nvg_kind_size(nvg_kind k) {
  switch (k) {
    case NVG_U8: case NVG_BOOL: return 1;
    case NVG_U16: return 2;
    case NVG_U32: case NVG_I32: case NVG_HANDLE: return 4;
    default: return 8;
  }
}

static const char *const nvg_kind_names[] = {"u8", "u16", "u32", "u64", "i32", "bool", "handle", "ptr"};

/* Closes a struct: computes offsets with natural alignment and compares them with the spec. */
static int nvg_close_struct(nvg_spec *s, nvg_struct *st) {
  unsigned off = 0, align = 1;
  for (int i = 0; i < st->nfields; i++) {
    nvg_field *f = &st->fields[i];
    unsigned fsize, falign;
    if (f->kind == NVG_STRUCT) {
      fsize = s->structs[f->sub].size;
      falign = s->structs[f->sub].align;
    } else {
      fsize = falign = nvg_kind_size(f->kind);
    }
    off = (off + falign - 1) / falign * falign;
    if (off != f->offset)
      return nvg_fail(s, st->file, f->line, "struct %s field %s: computed offset %u, spec says %u", st->name,
                      f->name, off, f->offset);
    off += fsize * f->count;
    if (falign > align) align = falign;
  }
  off = (off + align - 1) / align * align;
  if (st->nfields == 0) return nvg_fail(s, st->file, st->line, "struct %s has no fields", st->name);
  if (off != st->size)
    return nvg_fail(s, st->file, st->line, "struct %s: computed size %u, spec says size=%u", st->name, off,
                    st->size);
  st->align = align;
  return 0;
}

static int nvg_parse_branches(nvg_spec *s, const char *file, int line, const char *list, unsigned *mask) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", list);
  *mask = 0;
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    int b = nvg_find_branch(s, t);
    if (b < 0) return nvg_fail(s, file, line, "struct: unknown branch '%s' (declare it with a branch line)", t);
    *mask |= 1u << b;
  }
  if (!*mask) return nvg_fail(s, file, line, "struct: empty branches=");
  return 0;
}

static int nvg_parse_text(nvg_spec *s, const char *file_in, const char *text) {
  const char *file = nvg_keep(s, file_in);
  const char *source = NULL;
  nvg_struct *open = NULL;
  int line = 0;
  const char *p = text;
  while (*p) {
    line++;
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    char buf[1024];
    if (len >= sizeof buf) return nvg_fail(s, file, line, "line too long");
    memcpy(buf, p, len);
    buf[len] = 0;
    p += len + (eol ? 1 : 0);
    char *hash = strchr(buf, '#');
    if (hash) *hash = 0;
    char *q = buf;
    while (isspace((unsigned char)*q)) q++;
    if (!*q) continue;
    if (!strncmp(q, "source:", 7)) {
      if (open) return nvg_fail(s, file, line, "source: inside struct %s", open->name);
      char *t = q + 7;
      while (isspace((unsigned char)*t)) t++;
      size_t n = strlen(t);
      while (n && isspace((unsigned char)t[n - 1])) t[--n] = 0;
      if (!n) return nvg_fail(s, file, line, "source: needs a text");
      source = nvg_keep(s, t);
      continue;
    }
    char *tok[16];
    int ntok = 0;
    for (char *save = NULL, *t = strtok_r(q, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
      if (ntok == 16) return nvg_fail(s, file, line, "too many items");
      tok[ntok++] = t;
    }
    const char *d = tok[0];
    if (!source) return nvg_fail(s, file, line, "%s: no source: line before this block", d);
    if (open && strcmp(d, "field") && strcmp(d, "end"))
      return nvg_fail(s, file, line, "%s inside struct %s (missing end?)", d, open->name);

    if (!strcmp(d, "field")) {
      if (!open) return nvg_fail(s, file, line, "field outside a struct");
      if (ntok < 4) return nvg_fail(s, file, line, "field: expected 'field NAME TYPE offset=N [count=N]'");
      if (!nvg_is_ident(tok[1])) return nvg_fail(s, file, line, "field: bad name '%s'", tok[1]);
      static const char *const allowed[] = {"offset", "count", NULL};
      if (nvg_check_opts(s, file, line, tok, ntok, 3, allowed)) return -1;
      nvg_field f = {.count = 1, .line = line, .sub = -1};
      snprintf(f.name, sizeof f.name, "%s", tok[1]);
      for (int i = 0; i < open->nfields; i++)
        if (!strcmp(open->fields[i].name, f.name))
          return nvg_fail(s, file, line, "field: duplicate field '%s' in struct %s", f.name, open->name);
      int k;
      for (k = 0; k < 8 && strcmp(tok[2], nvg_kind_names[k]); k++) {}
      if (k < 8) {
        f.kind = (nvg_kind)k;
      } else if (!strncmp(tok[2], "struct:", 7)) {
        f.kind = NVG_STRUCT;
        f.sub = nvg_find_struct(s, tok[2] + 7, open->branch_mask & -open->branch_mask);
        if (f.sub < 0 || &s->structs[f.sub] == open)
          return nvg_fail(s, file, line, "field %s: unknown struct type '%s'", f.name, tok[2] + 7);
        if (s->structs[f.sub].branch_mask && (s->structs[f.sub].branch_mask & open->branch_mask) != open->branch_mask)
          return nvg_fail(s, file, line, "field %s: struct %s does not cover every branch of %s", f.name,
                          tok[2] + 7, open->name);
      } else {
        return nvg_fail(s, file, line, "field %s: unknown type '%s'", f.name, tok[2]);
      }
      unsigned long long v;
      if (nvg_num_opt(s, file, line, tok, ntok, 3, "offset", 1, &v) < 0) return -1;
      f.offset = (unsigned)v;
      int r = nvg_num_opt(s, file, line, tok, ntok, 3, "count", 0, &v);
      if (r < 0) return -1;
      if (r) {
        if (v == 0 || v > 65536) return nvg_fail(s, file, line, "field %s: count=%llu out of range", f.name, v);
        f.count = (unsigned)v;
      }
      open->fields = nvg_grow(open->fields, open->nfields, sizeof *open->fields);
      open->fields[open->nfields++] = f;
    } else if (!strcmp(d, "end")) {
      if (!open) return nvg_fail(s, file, line, "end without struct");
      if (ntok != 1) return nvg_fail(s, file, line, "end: unexpected item '%s'", tok[1]);
      if (nvg_close_struct(s, open)) return -1;
      open = NULL;
    } else if (!strcmp(d, "struct")) {
      if (ntok < 3 || !nvg_is_ident(tok[1]))
        return nvg_fail(s, file, line, "struct: expected 'struct NAME size=N [branches=A,B]'");
      static const char *const allowed[] = {"size", "branches", NULL};
      if (nvg_check_opts(s, file, line, tok, ntok, 2, allowed)) return -1;
      nvg_struct st = {.file = file, .line = line, .source = source};
      snprintf(st.name, sizeof st.name, "%s", tok[1]);
      unsigned long long v;
      if (nvg_num_opt(s, file, line, tok, ntok, 2, "size", 1, &v) < 0) return -1;
      st.size = (unsigned)v;
      const char *br = nvg_opt(tok, ntok, 2, "branches");
      if (br && nvg_parse_branches(s, file, line, br, &st.branch_mask)) return -1;
      for (int i = 0; i < s->nstructs; i++)
        if (!strcmp(s->structs[i].name, st.name) &&
            (!st.branch_mask || !s->structs[i].branch_mask || (s->structs[i].branch_mask & st.branch_mask)))
          return nvg_fail(s, file, line, "struct %s: already defined at %s:%d for an overlapping branch", st.name,
                          s->structs[i].file, s->structs[i].line);
      s->structs = nvg_grow(s->structs, s->nstructs, sizeof *s->structs);
      s->structs[s->nstructs] = st;
      open = &s->structs[s->nstructs++];
    } else if (!strcmp(d, "branch")) {
      if (ntok != 3 || !nvg_is_ident(tok[1]) || strncmp(tok[2], "versions=", 9))
        return nvg_fail(s, file, line, "branch: expected 'branch NAME versions=570,575'");
      if (s->nbranches == NVG_MAX_BRANCHES) return nvg_fail(s, file, line, "branch: too many branches");
      if (nvg_find_branch(s, tok[1]) >= 0) return nvg_fail(s, file, line, "branch %s: duplicate", tok[1]);
      nvg_branch *b = &s->branches[s->nbranches];
      memset(b, 0, sizeof *b);
      snprintf(b->name, sizeof b->name, "%s", tok[1]);
      b->source = source;
      for (char *save = NULL, *t = strtok_r(tok[2] + 9, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        unsigned long long v;
        if (!nvg_num(t, &v) || v == 0 || v > 100000) return nvg_fail(s, file, line, "branch: bad version '%s'", t);
        if (b->nversions == 16) return nvg_fail(s, file, line, "branch: too many versions");
        for (int j = 0; j < s->nbranches; j++)
          for (int k = 0; k < s->branches[j].nversions; k++)
            if (s->branches[j].versions[k] == v)
              return nvg_fail(s, file, line, "branch %s: version %llu already in branch %s", b->name, v,
                              s->branches[j].name);
        b->versions[b->nversions++] = (unsigned)v;
      }
      if (!b->nversions) return nvg_fail(s, file, line, "branch: no versions");
      s->nbranches++;
    } else if (!strcmp(d, "ioctl")) {
      if (ntok < 4 || (strcmp(tok[1], "rm") && strcmp(tok[1], "uvm")) || !nvg_is_ident(tok[2]))
        return nvg_fail(s, file, line, "ioctl: expected 'ioctl rm|uvm NAME nr=/req=N struct=S'");
      nvg_ioctl io = {.is_uvm = !strcmp(tok[1], "uvm"), .count = 1, .file = file, .line = line, .source = source};
      snprintf(io.name, sizeof io.name, "%s", tok[2]);
      static const char *const allowed_rm[] = {"nr", "struct", "count", "req", NULL};
      static const char *const allowed_uvm[] = {"req", "struct", NULL};
      if (nvg_check_opts(s, file, line, tok, ntok, 3, io.is_uvm ? allowed_uvm : allowed_rm)) return -1;
      const char *sn = nvg_opt(tok, ntok, 3, "struct");
      if (!sn) return nvg_fail(s, file, line, "ioctl %s: missing struct=", io.name);
      if (nvg_find_struct(s, sn, 0) < 0) return nvg_fail(s, file, line, "ioctl %s: unknown struct '%s'", io.name, sn);
      snprintf(io.sname, sizeof io.sname, "%s", sn);
      unsigned long long v;
      if (io.is_uvm) {
        if (nvg_num_opt(s, file, line, tok, ntok, 3, "req", 1, &io.nr_or_req) < 0) return -1;
      } else {
        if (nvg_num_opt(s, file, line, tok, ntok, 3, "nr", 1, &io.nr_or_req) < 0) return -1;
        if (io.nr_or_req > 0xff) return nvg_fail(s, file, line, "ioctl %s: nr=0x%llx over 0xff", io.name, io.nr_or_req);
        int r = nvg_num_opt(s, file, line, tok, ntok, 3, "count", 0, &v);
        if (r < 0) return -1;
        if (r) io.count = (unsigned)v;
        if (nvg_num_opt(s, file, line, tok, ntok, 3, "req", 0, &io.req_check) < 0) return -1;
      }
      s->ioctls = nvg_grow(s->ioctls, s->nioctls, sizeof *s->ioctls);
      s->ioctls[s->nioctls++] = io;
    } else if (!strcmp(d, "ctrl") || !strcmp(d, "class") || !strcmp(d, "method") || !strcmp(d, "qmd") ||
               !strcmp(d, "const")) {
      nvg_item it = {.file = file, .line = line, .source = source, .count = 1};
      nvg_item **arr;
      int *n;
      if (!strcmp(d, "ctrl")) {
        static const char *const allowed[] = {"cmd", "struct", NULL};
        if (ntok < 4 || !nvg_is_ident(tok[1])) return nvg_fail(s, file, line, "ctrl: expected 'ctrl NAME cmd=N struct=S'");
        if (nvg_check_opts(s, file, line, tok, ntok, 2, allowed)) return -1;
        if (nvg_num_opt(s, file, line, tok, ntok, 2, "cmd", 1, &it.v) < 0) return -1;
        const char *sn = nvg_opt(tok, ntok, 2, "struct");
        if (!sn) return nvg_fail(s, file, line, "ctrl %s: missing struct=", tok[1]);
        if (nvg_find_struct(s, sn, 0) < 0) return nvg_fail(s, file, line, "ctrl %s: unknown struct '%s'", tok[1], sn);
        snprintf(it.a, sizeof it.a, "%s", sn);
        arr = &s->ctrls, n = &s->nctrls;
      } else if (!strcmp(d, "class") || !strcmp(d, "const")) {
        if (ntok != 3 || !nvg_is_ident(tok[1])) return nvg_fail(s, file, line, "%s: expected '%s NAME VALUE'", d, d);
        if (!nvg_num(tok[2], &it.v)) return nvg_fail(s, file, line, "%s %s: bad number '%s'", d, tok[1], tok[2]);
        if (d[1] == 'l') arr = &s->classes, n = &s->nclasses;
        else arr = &s->consts, n = &s->nconsts;
      } else if (!strcmp(d, "method")) {
        if (ntok != 4 || !nvg_is_ident(tok[1]) || !nvg_is_ident(tok[2]))
          return nvg_fail(s, file, line, "method: expected 'method CLASS NAME OFFSET'");
        int found = 0;
        for (int i = 0; i < s->nclasses; i++) found |= !strcmp(s->classes[i].name, tok[1]);
        if (!found) return nvg_fail(s, file, line, "method %s: unknown class '%s'", tok[2], tok[1]);
        if (!nvg_num(tok[3], &it.v) || (it.v & 3) || it.v > 0x7ffc)
          return nvg_fail(s, file, line, "method %s: bad offset '%s' (dword-aligned, < 0x8000)", tok[2], tok[3]);
        snprintf(it.a, sizeof it.a, "%s", tok[1]);
        arr = &s->methods, n = &s->nmethods;
      } else {
        static const char *const allowed[] = {"step", "count", NULL};
        if (ntok < 5 || !nvg_is_ident(tok[1]) || !nvg_is_ident(tok[2]))
          return nvg_fail(s, file, line, "qmd: expected 'qmd VERSION NAME HI LO [step=N count=N]'");
        if (!nvg_num(tok[3], &it.v) || !nvg_num(tok[4], &it.v2))
          return nvg_fail(s, file, line, "qmd %s: bad bit position '%s %s'", tok[2], tok[3], tok[4]);
        if (it.v < it.v2 || it.v - it.v2 >= 64)
          return nvg_fail(s, file, line, "qmd %s: hi %llu lo %llu: need lo <= hi and width <= 64", tok[2], it.v, it.v2);
        if (nvg_check_opts(s, file, line, tok, ntok, 5, allowed)) return -1;
        unsigned long long step = 0, count = 1;
        int r1 = nvg_num_opt(s, file, line, tok, ntok, 5, "step", 0, &step);
        int r2 = nvg_num_opt(s, file, line, tok, ntok, 5, "count", 0, &count);
        if (r1 < 0 || r2 < 0) return -1;
        if (r1 != r2 || (r1 && (step == 0 || count < 2 || count > 64)))
          return nvg_fail(s, file, line, "qmd %s: step= and count= (>= 2) go together", tok[2]);
        it.step = (unsigned)step;
        it.count = (unsigned)count;
        if (it.v + step * (count - 1) >= 4096)
          return nvg_fail(s, file, line, "qmd %s: bit %llu past the end of a QMD", tok[2], it.v + step * (count - 1));
        snprintf(it.a, sizeof it.a, "%s", tok[1]);
        arr = &s->qmds, n = &s->nqmds;
      }
      snprintf(it.name, sizeof it.name, "%s", d[0] == 'm' ? tok[2] : d[0] == 'q' ? tok[2] : tok[1]);
      for (int i = 0; i < *n; i++)
        if (!strcmp((*arr)[i].name, it.name) && !strcmp((*arr)[i].a, it.a))
          return nvg_fail(s, file, line, "%s %s: duplicate (first at %s:%d)", d, it.name, (*arr)[i].file,
                          (*arr)[i].line);
      *arr = nvg_grow(*arr, *n, sizeof **arr);
      (*arr)[(*n)++] = it;
    } else {
      return nvg_fail(s, file, line, "unknown directive '%s'", d);
    }
  }
  if (open) return nvg_fail(s, file, open->line, "struct %s: missing end", open->name);
  return 0;
}

/* RM escape request: _IOWR('F', nr, size) with size masked to 13 bits. */
static unsigned long long nvg_rm_request(unsigned long long nr, unsigned long long size) {
  return (3ull << 30) | ((size & 0x1fff) << 16) | (0x46ull << 8) | nr;
}

/* Checks that need the whole spec: branch coverage, RM ioctl requests. */
static int nvg_check(nvg_spec *s) {
  unsigned all = s->nbranches ? (1u << s->nbranches) - 1 : 0;
  for (int i = 0; i < s->nstructs; i++) {
    nvg_struct *st = &s->structs[i];
    if (!st->branch_mask) continue;
    unsigned cover = 0;
    for (int j = 0; j < s->nstructs; j++)
      if (!strcmp(s->structs[j].name, st->name)) cover |= s->structs[j].branch_mask;
    if (cover != all)
      return nvg_fail(s, st->file, st->line, "struct %s: its variants do not cover every branch", st->name);
  }
  for (int i = 0; i < s->nioctls; i++) {
    nvg_ioctl *io = &s->ioctls[i];
    int si = nvg_find_struct(s, io->sname, 0);
    if (io->is_uvm) continue;
    if (s->structs[si].branch_mask)
      return nvg_fail(s, io->file, io->line, "ioctl %s: RM escape structs must be the same on every branch",
                      io->name);
    unsigned long long req = nvg_rm_request(io->nr_or_req, (unsigned long long)s->structs[si].size * io->count);
    if (io->req_check && io->req_check != req)
      return nvg_fail(s, io->file, io->line, "ioctl %s: computed request 0x%llx, spec says req=0x%llx", io->name,
                      req, io->req_check);
  }
  return 0;
}

static char *nvg_read_file(const char *path, char *err, size_t err_size) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, err_size, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (n + 1 < cap) break;
    cap *= 2;
    char *nb = realloc(buf, cap);
    if (!nb) free(buf);
    buf = nb;
  }
  fclose(f);
  if (!buf) {
    snprintf(err, err_size, "%s: out of memory", path);
    return NULL;
  }
  buf[n] = 0;
  return buf;
}

/* ------------------------------------------------------------------------------------------------ output */

typedef struct {
  FILE *f;
} nvg_out;

static const char *nvg_ctype(nvg_kind k) {
  static const char *const t[] = {"uint8_t", "uint16_t", "uint32_t", "uint64_t", "int32_t",
                                  "uint8_t", "uint32_t", "uint64_t"};
  return t[k];
}

/* C name of a struct variant: NAME, or NAME_<first branch of the variant>. */
static void nvg_cname(const nvg_spec *s, const nvg_struct *st, char *out, size_t n) {
  if (!st->branch_mask) {
    snprintf(out, n, "%s", st->name);
    return;
  }
  int b = __builtin_ctz(st->branch_mask);
  snprintf(out, n, "%s_%s", st->name, s->branches[b].name);
}

static void nvg_lower(const char *in, char *out, size_t n) {
  size_t i = 0;
  for (; in[i] && i + 1 < n; i++) out[i] = (char)tolower((unsigned char)in[i]);
  out[i] = 0;
}

static const char nvg_banner[] = "/* GENERATED by autogen/gen/nv_gen.c from autogen/gen/nv_spec/: do not edit. */\n";

static void nvg_write_structs(const nvg_spec *s, FILE *f) {
  const char *last_source = NULL;
  for (int i = 0; i < s->nstructs; i++) {
    const nvg_struct *st = &s->structs[i];
    char cn[2 * NVG_NAME_MAX];
    nvg_cname(s, st, cn, sizeof cn);
    if (st->source != last_source) fprintf(f, "\n/* source: %s */\n", st->source), last_source = st->source;
    fprintf(f, "typedef struct %s {\n", cn);
    for (int j = 0; j < st->nfields; j++) {
      const nvg_field *fd = &st->fields[j];
      char tn[2 * NVG_NAME_MAX];
      if (fd->kind == NVG_STRUCT) nvg_cname(s, &s->structs[fd->sub], tn, sizeof tn);
      else snprintf(tn, sizeof tn, "%s", nvg_ctype(fd->kind));
      fprintf(f, "  %s %s", tn, fd->name);
      if (fd->count > 1) fprintf(f, "[%u]", fd->count);
      /* 64-bit members are 8-aligned in the kernel ABI (NV_ALIGN_BYTES(8)), also on 32-bit hosts */
      if (fd->kind == NVG_U64 || fd->kind == NVG_PTR) fprintf(f, " __attribute__((aligned(8)))");
      fprintf(f, ";%s\n", fd->kind == NVG_PTR ? " /* user pointer */" : "");
    }
    fprintf(f, "} %s;\n", cn);
    for (int b = 0; b < s->nbranches; b++)
      if ((st->branch_mask & (1u << b)) && b != __builtin_ctz(st->branch_mask))
        fprintf(f, "typedef %s %s_%s;\n", cn, st->name, s->branches[b].name);
    fprintf(f, "_Static_assert(sizeof(%s) == %u, \"%s size\");\n", cn, st->size, cn);
    for (int j = 0; j < st->nfields; j++)
      fprintf(f, "_Static_assert(__builtin_offsetof(%s, %s) == %u, \"%s.%s offset\");\n", cn, st->fields[j].name,
              st->fields[j].offset, cn, st->fields[j].name);
  }
}

static int nvg_write_abi_h(const nvg_spec *s, FILE *f) {
  fprintf(f, "%s/* NVIDIA RM + UVM ABI: structs, ioctls, control commands, class ids, method offsets. */\n", nvg_banner);
  fprintf(f, "#ifndef HCQ_AUTOGEN_NV_ABI_H\n#define HCQ_AUTOGEN_NV_ABI_H\n\n#include <stdint.h>\n");
  nvg_write_structs(s, f);
  fprintf(f, "\n/* RM escapes: _IOWR('F', nr, sizeof arg). UVM ioctls: the request is the raw number. */\n");
  for (int i = 0; i < s->nioctls; i++) {
    const nvg_ioctl *io = &s->ioctls[i];
    if (io->is_uvm) {
      fprintf(f, "#define %s 0x%llxu /* %s */\n", io->name, io->nr_or_req, io->sname);
    } else {
      unsigned long long size = (unsigned long long)s->structs[nvg_find_struct(s, io->sname, 0)].size * io->count;
      fprintf(f, "#define %s_NR 0x%llxu\n#define %s 0x%llxu /* %s", io->name, io->nr_or_req, io->name,
              nvg_rm_request(io->nr_or_req, size), io->sname);
      if (io->count > 1) fprintf(f, "[%u]", io->count);
      fprintf(f, " */\n");
    }
  }
  fprintf(f, "\n/* RM control commands (NVOS54 cmd) */\n");
  for (int i = 0; i < s->nctrls; i++)
    fprintf(f, "#define %s 0x%llxu /* %s */\n", s->ctrls[i].name, s->ctrls[i].v, s->ctrls[i].a);
  fprintf(f, "\n/* class ids */\n");
  for (int i = 0; i < s->nclasses; i++) fprintf(f, "#define %s 0x%llxu\n", s->classes[i].name, s->classes[i].v);
  fprintf(f, "\n/* method byte offsets: NV_<CLASS>_<METHOD> */\n");
  for (int i = 0; i < s->nmethods; i++)
    fprintf(f, "#define NV_%s_%s 0x%llxu\n", s->methods[i].a, s->methods[i].name, s->methods[i].v);
  fprintf(f, "\n/* named values */\n");
  for (int i = 0; i < s->nconsts; i++) fprintf(f, "#define %s 0x%llxu\n", s->consts[i].name, s->consts[i].v);
  fprintf(f, "\n#endif\n");
  return 0;
}

static int nvg_write_qmd_h(const nvg_spec *s, FILE *f) {
  fprintf(f, "%s/* QMD (compute launch descriptor) bit ranges as (hi, lo) bit positions over a uint32_t[] QMD,\n"
             " * with get/set helpers. A set of a value that does not fit leaves the QMD unchanged and returns 0. */\n",
          nvg_banner);
  fprintf(f, "#ifndef HCQ_AUTOGEN_NV_QMD_H\n#define HCQ_AUTOGEN_NV_QMD_H\n\n#include <stdint.h>\n\n");
  fprintf(f,
          "static inline uint64_t nv_qmd_get(const uint32_t *qmd, unsigned hi, unsigned lo) {\n"
          "  uint64_t v = 0;\n"
          "  for (unsigned b = lo; b <= hi; b++) v |= (uint64_t)((qmd[b / 32] >> (b %% 32)) & 1u) << (b - lo);\n"
          "  return v;\n"
          "}\n\n"
          "static inline int nv_qmd_set(uint32_t *qmd, unsigned hi, unsigned lo, uint64_t v) {\n"
          "  unsigned width = hi - lo + 1;\n"
          "  if (width < 64 && (v >> width) != 0) return 0;\n"
          "  for (unsigned b = lo; b <= hi; b++) {\n"
          "    uint32_t bit = 1u << (b %% 32);\n"
          "    qmd[b / 32] = ((v >> (b - lo)) & 1u) ? (qmd[b / 32] | bit) : (qmd[b / 32] & ~bit);\n"
          "  }\n"
          "  return 1;\n"
          "}\n");
  const char *last_source = NULL, *last_ver = "";
  for (int i = 0; i < s->nqmds; i++) {
    const nvg_item *q = &s->qmds[i];
    if (q->source != last_source || strcmp(q->a, last_ver))
      fprintf(f, "\n/* %s, source: %s */\n", q->a, q->source), last_source = q->source, last_ver = q->a;
    char lv[NVG_NAME_MAX], ln[NVG_NAME_MAX];
    nvg_lower(q->a, lv, sizeof lv);
    nvg_lower(q->name, ln, sizeof ln);
    if (q->step) {
      fprintf(f, "#define NV_QMD%s_%s_HI(i) (%lluu + (i) * %uu)\n#define NV_QMD%s_%s_LO(i) (%lluu + (i) * %uu)\n"
                 "#define NV_QMD%s_%s_COUNT %uu\n",
              q->a, q->name, q->v, q->step, q->a, q->name, q->v2, q->step, q->a, q->name, q->count);
      fprintf(f, "static inline uint64_t nv_qmd%s_get_%s(const uint32_t *q, unsigned i) { return nv_qmd_get(q, %lluu + i * %uu, %lluu + i * %uu); }\n",
              lv, ln, q->v, q->step, q->v2, q->step);
      fprintf(f, "static inline int nv_qmd%s_set_%s(uint32_t *q, unsigned i, uint64_t v) { return i < %uu && nv_qmd_set(q, %lluu + i * %uu, %lluu + i * %uu, v); }\n",
              lv, ln, q->count, q->v, q->step, q->v2, q->step);
    } else {
      fprintf(f, "#define NV_QMD%s_%s_HI %lluu\n#define NV_QMD%s_%s_LO %lluu\n", q->a, q->name, q->v, q->a, q->name,
              q->v2);
      fprintf(f, "static inline uint64_t nv_qmd%s_get_%s(const uint32_t *q) { return nv_qmd_get(q, %lluu, %lluu); }\n",
              lv, ln, q->v, q->v2);
      fprintf(f, "static inline int nv_qmd%s_set_%s(uint32_t *q, uint64_t v) { return nv_qmd_set(q, %lluu, %lluu, v); }\n",
              lv, ln, q->v, q->v2);
    }
  }
  fprintf(f, "\n/* Every field, for iteration (tests, the emulator, the tracer). Indexed fields: count > 1. */\n");
  fprintf(f, "typedef struct nv_qmd_field {\n  const char *version, *name;\n  unsigned hi, lo, step, count;\n} nv_qmd_field;\n");
  fprintf(f, "extern const nv_qmd_field nv_qmd_fields[];\nextern const unsigned nv_qmd_field_count;\n");
  fprintf(f, "\n#endif\n");
  return 0;
}

/* Variant structs: one size per layout set. */
static int nvg_is_first_variant(const nvg_spec *s, int i) {
  return s->structs[i].branch_mask && nvg_find_struct(s, s->structs[i].name, 0) == i;
}

static int nvg_write_layout_h(const nvg_spec *s, FILE *f) {
  fprintf(f, "%s/* Per-driver-branch layout sets: structs whose size changed between NVIDIA driver releases, and the\n"
             " * UVM ioctl and RM control tables of each branch. Pick one from the running version string. */\n",
          nvg_banner);
  fprintf(f, "#ifndef HCQ_AUTOGEN_NV_LAYOUT_H\n#define HCQ_AUTOGEN_NV_LAYOUT_H\n\n#include <stddef.h>\n\n"
             "#include \"autogen/nv_abi.h\"\n#include \"base/status.h\"\n#include \"kernel_iface/ioctl_desc.h\"\n\n");
  fprintf(f, "typedef struct nv_layout {\n  const char *branch;      /* \"r580\" */\n"
             "  const unsigned *majors; /* driver major versions served, 0-terminated */\n");
  for (int i = 0; i < s->nstructs; i++)
    if (nvg_is_first_variant(s, i)) fprintf(f, "  size_t %s_size_B;\n", s->structs[i].name);
  fprintf(f, "  const kif_ioctl_table *uvm_ioctls;\n  const kif_ioctl_desc *rm_ctrls; /* request = NVOS54 cmd */\n"
             "  size_t rm_ctrl_count;\n} nv_layout;\n\n");
  for (int b = 0; b < s->nbranches; b++) fprintf(f, "extern const nv_layout nv_layout_%s;\n", s->branches[b].name);
  fprintf(f, "extern const nv_layout *const nv_layouts[];\nextern const size_t nv_layout_count;\n\n");
  fprintf(f, "/* RM escapes on /dev/nvidiactl and /dev/nvidiaN (same on every branch), and the UVM table of the newest\n"
             " * branch (each layout carries its own). */\n");
  fprintf(f, "extern const kif_ioctl_table nv_rm_ioctl_table;\nextern const kif_ioctl_table nv_uvm_ioctl_table;\n\n");
  fprintf(f, "/* \"580.95.05\" -> &nv_layout_r580. An unsupported or malformed version is an error naming it and the\n"
             " * supported branches. */\nhcq_status nv_layout_for_version(const char *version, const nv_layout **out);\n");
  fprintf(f, "\n#endif\n");
  return 0;
}

static void nvg_write_struct_desc(const nvg_spec *s, FILE *f, int i) {
  const nvg_struct *st = &s->structs[i];
  char cn[2 * NVG_NAME_MAX];
  nvg_cname(s, st, cn, sizeof cn);
  static const char *const kinds[] = {"NVD_U8", "NVD_U16", "NVD_U32", "NVD_U64", "NVD_I32",
                                      "NVD_BOOL", "NVD_U32", "NVD_U64", "NVD_STRUCT"};
  fprintf(f, "static const nvd_field nvd_f_%s[] = {\n", cn);
  for (int j = 0; j < st->nfields; j++) {
    const nvg_field *fd = &st->fields[j];
    char sub[2 * NVG_NAME_MAX + 8] = "NULL";
    if (fd->kind == NVG_STRUCT) {
      char tn[2 * NVG_NAME_MAX];
      nvg_cname(s, &s->structs[fd->sub], tn, sizeof tn);
      snprintf(sub, sizeof sub, "&nvd_s_%s", tn);
    }
    fprintf(f, "  {\"%s\", %s, %u, %u, %s},\n", fd->name, kinds[fd->kind], fd->offset, fd->count, sub);
  }
  fprintf(f, "};\nstatic const nvd_struct nvd_s_%s = {\"%s\", %u, %d, nvd_f_%s};\n", cn, cn, st->size, st->nfields, cn);
  fprintf(f, "size_t nv_decode_%s(const void *arg, size_t arg_size_B, char *out, size_t out_size_B) {\n"
             "  return nvd_decode(&nvd_s_%s, 1, arg, arg_size_B, out, out_size_B);\n}\n",
          cn, cn);
}

static void nvg_write_desc_row(const nvg_spec *s, FILE *f, const char *name, unsigned long long req, const char *sname,
                               unsigned count, unsigned branch_bit) {
  const nvg_struct *st = &s->structs[nvg_find_struct(s, sname, branch_bit)];
  char cn[2 * NVG_NAME_MAX];
  nvg_cname(s, st, cn, sizeof cn);
  if (count > 1)
    fprintf(f, "  {\"%s\", 0x%llxul, \"%s[%u]\", %llu, nvd_decode_%s_x%u},\n", name, req, cn, count,
            (unsigned long long)st->size * count, cn, count);
  else
    fprintf(f, "  {\"%s\", 0x%llxul, \"%s\", %u, nv_decode_%s},\n", name, req, cn, st->size, cn);
}

static const char nvg_decode_core[] =
    "typedef enum { NVD_U8, NVD_U16, NVD_U32, NVD_U64, NVD_I32, NVD_BOOL, NVD_STRUCT } nvd_kind;\n"
    "typedef struct nvd_struct nvd_struct;\n"
    "typedef struct nvd_field {\n  const char *name;\n  nvd_kind kind;\n  uint32_t offset, count;\n"
    "  const nvd_struct *sub;\n} nvd_field;\n"
    "struct nvd_struct {\n  const char *name;\n  uint32_t size, nfields;\n  const nvd_field *fields;\n};\n\n"
    "typedef struct nvd_buf {\n  char *out;\n  size_t cap, len;\n} nvd_buf;\n\n"
    "static void nvd_put(nvd_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));\n"
    "static void nvd_put(nvd_buf *b, const char *fmt, ...) {\n"
    "  if (b->len + 1 >= b->cap) return;\n"
    "  va_list ap;\n  va_start(ap, fmt);\n"
    "  int n = vsnprintf(b->out + b->len, b->cap - b->len, fmt, ap);\n"
    "  va_end(ap);\n"
    "  if (n < 0) return;\n"
    "  b->len = (size_t)n < b->cap - b->len ? b->len + (size_t)n : b->cap - 1;\n"
    "}\n\n"
    "static uint64_t nvd_load(const uint8_t *p, unsigned size) {\n"
    "  uint64_t v = 0;\n  memcpy(&v, p, size); /* little-endian hosts only, like the driver */\n  return v;\n}\n\n"
    "static unsigned nvd_kind_size(nvd_kind k) { return k == NVD_U8 || k == NVD_BOOL ? 1 : k == NVD_U16 ? 2 : k == NVD_U64 ? 8 : 4; }\n\n"
    "static void nvd_struct_fields(nvd_buf *b, const nvd_struct *s, const uint8_t *p);\n\n"
    "static void nvd_scalar(nvd_buf *b, const nvd_field *f, const uint8_t *p) {\n"
    "  if (f->kind == NVD_STRUCT) {\n    nvd_put(b, \"{\");\n    nvd_struct_fields(b, f->sub, p);\n    nvd_put(b, \"}\");\n"
    "  } else if (f->kind == NVD_I32) {\n    nvd_put(b, \"%d\", (int32_t)(uint32_t)nvd_load(p, 4));\n"
    "  } else if (f->kind == NVD_BOOL) {\n    nvd_put(b, \"%u\", (unsigned)p[0]);\n"
    "  } else {\n    nvd_put(b, \"0x%llx\", (unsigned long long)nvd_load(p, nvd_kind_size(f->kind)));\n  }\n}\n\n"
    "/* Byte arrays print as hex (first 32 bytes), other arrays as [a,b,...] (first 4, or 2 structs). */\n"
    "static void nvd_field_value(nvd_buf *b, const nvd_field *f, const uint8_t *p) {\n"
    "  if (f->count == 1) {\n    nvd_scalar(b, f, p);\n    return;\n  }\n"
    "  if (f->kind == NVD_U8) {\n    unsigned n = f->count < 32 ? f->count : 32;\n"
    "    for (unsigned i = 0; i < n; i++) nvd_put(b, \"%02x\", p[i]);\n"
    "    if (n < f->count) nvd_put(b, \"...\");\n    return;\n  }\n"
    "  unsigned esize = f->kind == NVD_STRUCT ? f->sub->size : nvd_kind_size(f->kind);\n"
    "  unsigned shown = f->kind == NVD_STRUCT ? 2 : 4;\n  if (shown > f->count) shown = f->count;\n"
    "  nvd_put(b, \"[\");\n"
    "  for (unsigned i = 0; i < shown; i++) {\n    if (i) nvd_put(b, \",\");\n    nvd_scalar(b, f, p + (size_t)i * esize);\n  }\n"
    "  if (shown < f->count) nvd_put(b, \",...%u]\", f->count);\n  else nvd_put(b, \"]\");\n}\n\n"
    "static void nvd_struct_fields(nvd_buf *b, const nvd_struct *s, const uint8_t *p) {\n"
    "  for (uint32_t i = 0; i < s->nfields; i++) {\n    const nvd_field *f = &s->fields[i];\n"
    "    nvd_put(b, \"%s%s=\", i ? \" \" : \"\", f->name);\n    nvd_field_value(b, f, p + f->offset);\n  }\n}\n\n"
    "/* count > 1: an array argument (CARD_INFO); each element prints as [i]={...}. */\n"
    "static size_t nvd_decode(const nvd_struct *s, unsigned count, const void *arg, size_t arg_size_B, char *out,\n"
    "                         size_t out_size_B) {\n"
    "  if (!out || out_size_B == 0) return 0;\n"
    "  nvd_buf b = {out, out_size_B, 0};\n  out[0] = 0;\n"
    "  size_t need = (size_t)s->size * count;\n"
    "  if (!arg || arg_size_B < need) {\n"
    "    nvd_put(&b, \"<%s: %zu bytes, need %zu>\", s->name, arg ? arg_size_B : 0, need);\n    return b.len;\n  }\n"
    "  if (count == 1) {\n    nvd_struct_fields(&b, s, arg);\n    return b.len;\n  }\n"
    "  for (unsigned i = 0; i < count; i++) {\n"
    "    nvd_put(&b, \"%s[%u]={\", i ? \" \" : \"\", i);\n"
    "    nvd_struct_fields(&b, s, (const uint8_t *)arg + (size_t)i * s->size);\n    nvd_put(&b, \"}\");\n  }\n"
    "  return b.len;\n}\n";

static int nvg_write_decode_c(const nvg_spec *s, FILE *f) {
  fprintf(f, "%s/* Decoders (struct -> \"field=value ...\"), ioctl tables, layout sets and the driver version pick. */\n",
          nvg_banner);
  fprintf(f, "#include <stdarg.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n"
             "#include \"autogen/nv_abi.h\"\n#include \"autogen/nv_decode.h\"\n#include \"autogen/nv_layout.h\"\n"
             "#include \"autogen/nv_qmd.h\"\n\n");
  fputs(nvg_decode_core, f);
  fprintf(f, "\n/* ---- struct descriptors and decoders */\n");
  for (int i = 0; i < s->nstructs; i++) nvg_write_struct_desc(s, f, i);
  /* array decoders for ioctls with count > 1 */
  for (int i = 0; i < s->nioctls; i++) {
    const nvg_ioctl *io = &s->ioctls[i];
    if (io->count <= 1) continue;
    char cn[2 * NVG_NAME_MAX];
    nvg_cname(s, &s->structs[nvg_find_struct(s, io->sname, 0)], cn, sizeof cn);
    fprintf(f, "static size_t nvd_decode_%s_x%u(const void *arg, size_t arg_size_B, char *out, size_t out_size_B) {\n"
               "  return nvd_decode(&nvd_s_%s, %u, arg, arg_size_B, out, out_size_B);\n}\n",
            cn, io->count, cn, io->count);
  }
  fprintf(f, "\n/* ---- RM escapes */\nstatic const kif_ioctl_desc nv_rm_descs[] = {\n");
  int nrm = 0;
  for (int i = 0; i < s->nioctls; i++) {
    const nvg_ioctl *io = &s->ioctls[i];
    if (io->is_uvm) continue;
    unsigned long long size = (unsigned long long)s->structs[nvg_find_struct(s, io->sname, 0)].size * io->count;
    nvg_write_desc_row(s, f, io->name, nvg_rm_request(io->nr_or_req, size), io->sname, io->count, 0);
    nrm++;
  }
  fprintf(f, "};\nconst kif_ioctl_table nv_rm_ioctl_table = {\"/dev/nvidia\", nv_rm_descs, %d};\n", nrm);
  for (int b = 0; b < s->nbranches; b++) {
    const char *bn = s->branches[b].name;
    unsigned bit = 1u << b;
    int nuvm = 0;
    fprintf(f, "\n/* ---- branch %s (source: %s) */\nstatic const kif_ioctl_desc nv_uvm_descs_%s[] = {\n", bn,
            s->branches[b].source, bn);
    for (int i = 0; i < s->nioctls; i++)
      if (s->ioctls[i].is_uvm)
        nvg_write_desc_row(s, f, s->ioctls[i].name, s->ioctls[i].nr_or_req, s->ioctls[i].sname, 1, bit), nuvm++;
    fprintf(f, "};\nstatic const kif_ioctl_table nv_uvm_table_%s = {\"/dev/nvidia-uvm\", nv_uvm_descs_%s, %d};\n", bn,
            bn, nuvm);
    fprintf(f, "static const kif_ioctl_desc nv_ctrl_descs_%s[] = {\n", bn);
    for (int i = 0; i < s->nctrls; i++) nvg_write_desc_row(s, f, s->ctrls[i].name, s->ctrls[i].v, s->ctrls[i].a, 1, bit);
    fprintf(f, "};\nstatic const unsigned nv_majors_%s[] = {", bn);
    for (int k = 0; k < s->branches[b].nversions; k++) fprintf(f, "%u, ", s->branches[b].versions[k]);
    fprintf(f, "0};\nconst nv_layout nv_layout_%s = {\n  .branch = \"%s\",\n  .majors = nv_majors_%s,\n", bn, bn, bn);
    for (int i = 0; i < s->nstructs; i++) {
      if (!nvg_is_first_variant(s, i)) continue;
      fprintf(f, "  .%s_size_B = %u,\n", s->structs[i].name, s->structs[nvg_find_struct(s, s->structs[i].name, bit)].size);
    }
    fprintf(f, "  .uvm_ioctls = &nv_uvm_table_%s,\n  .rm_ctrls = nv_ctrl_descs_%s,\n  .rm_ctrl_count = %d,\n};\n", bn, bn,
            s->nctrls);
  }
  fprintf(f, "\nconst nv_layout *const nv_layouts[] = {");
  for (int b = 0; b < s->nbranches; b++) fprintf(f, "%s&nv_layout_%s", b ? ", " : "", s->branches[b].name);
  fprintf(f, "};\nconst size_t nv_layout_count = %d;\n", s->nbranches);
  int nuvm = 0;
  for (int i = 0; i < s->nioctls; i++) nuvm += s->ioctls[i].is_uvm;
  if (s->nbranches)
    fprintf(f, "const kif_ioctl_table nv_uvm_ioctl_table = {\"/dev/nvidia-uvm\", nv_uvm_descs_%s, %d};\n",
            s->branches[s->nbranches - 1].name, nuvm);
  fprintf(f,
          "\nhcq_status nv_layout_for_version(const char *version, const nv_layout **out) {\n"
          "  static const char supported[] = \"");
  for (int b = 0; b < s->nbranches; b++)
    for (int k = 0; k < s->branches[b].nversions; k++)
      fprintf(f, "%s%u", b || k ? ", " : "", s->branches[b].versions[k]);
  fprintf(f,
          "\";\n"
          "  if (out) *out = NULL;\n"
          "  if (!version || !out) return hcq_status_make(HCQ_CODE_INVALID, \"nv_layout_for_version: NULL argument\");\n"
          "  unsigned major = 0;\n  size_t i = 0;\n"
          "  while (version[i] >= '0' && version[i] <= '9' && i < 6) major = major * 10 + (unsigned)(version[i++] - '0');\n"
          "  if (i == 0 || i == 6 || (version[i] != '.' && version[i] != 0))\n"
          "    return hcq_status_make(HCQ_CODE_INVALID, \"NVIDIA driver version '%%.40s' is not of the form MAJOR.MINOR[.PATCH]\", version);\n"
          "  for (size_t l = 0; l < nv_layout_count; l++)\n"
          "    for (const unsigned *m = nv_layouts[l]->majors; *m; m++)\n"
          "      if (*m == major) {\n        *out = nv_layouts[l];\n        return HCQ_OK;\n      }\n"
          "  return hcq_status_make(HCQ_CODE_UNSUPPORTED,\n"
          "                         \"NVIDIA driver %%.40s (branch %%u) is not supported: its RM/UVM struct layouts are unverified; \"\n"
          "                         \"supported branches: %%s\", version, major, supported);\n}\n");
  fprintf(f, "\n/* ---- QMD fields */\nconst nv_qmd_field nv_qmd_fields[] = {\n");
  for (int i = 0; i < s->nqmds; i++)
    fprintf(f, "  {\"%s\", \"%s\", %llu, %llu, %u, %u},\n", s->qmds[i].a, s->qmds[i].name, s->qmds[i].v, s->qmds[i].v2,
            s->qmds[i].step, s->qmds[i].count);
  fprintf(f, "};\nconst unsigned nv_qmd_field_count = %d;\n", s->nqmds);
  return 0;
}

static int nvg_write_decode_h(const nvg_spec *s, FILE *f) {
  fprintf(f, "%s/* One decoder per struct (kif_decode_fn): writes \"field=value ...\". */\n", nvg_banner);
  fprintf(f, "#ifndef HCQ_AUTOGEN_NV_DECODE_H\n#define HCQ_AUTOGEN_NV_DECODE_H\n\n#include <stddef.h>\n\n");
  for (int i = 0; i < s->nstructs; i++) {
    char cn[2 * NVG_NAME_MAX];
    nvg_cname(s, &s->structs[i], cn, sizeof cn);
    fprintf(f, "size_t nv_decode_%s(const void *arg, size_t arg_size_B, char *out, size_t out_size_B);\n", cn);
  }
  fprintf(f, "\n#endif\n");
  return 0;
}

/* Writes every output into dir (no trailing slash). Returns 0, or -1 with s->err set. */
static int nvg_write_all(nvg_spec *s, const char *dir) {
  static const struct {
    const char *name;
    int (*fn)(const nvg_spec *, FILE *);
  } outs[] = {{"nv_abi.h", nvg_write_abi_h},       {"nv_qmd.h", nvg_write_qmd_h},
              {"nv_layout.h", nvg_write_layout_h}, {"nv_decode.h", nvg_write_decode_h},
              {"nv_decode.c", nvg_write_decode_c}};
  for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, outs[i].name);
    FILE *f = fopen(path, "w");
    if (!f) {
      snprintf(s->err, sizeof s->err, "%.512s: cannot write: %.200s", path, strerror(errno));
      return -1;
    }
    int r = outs[i].fn(s, f);
    if (fclose(f) || r) {
      snprintf(s->err, sizeof s->err, "%.512s: write failed", path);
      return -1;
    }
  }
  return 0;
}

/* Parses every spec file in order, then checks the whole. Returns 0, or -1 with s->err set. */
static int nvg_load(nvg_spec *s, int nfiles, char **files) {
  for (int i = 0; i < nfiles; i++) {
    char *text = nvg_read_file(files[i], s->err, sizeof s->err);
    if (!text) return -1;
    int r = nvg_parse_text(s, files[i], text);
    free(text);
    if (r) return -1;
  }
  return nvg_check(s);
}
