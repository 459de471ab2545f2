/* hcq simplify EXPR... | --file F: one output line per input line (format in tools/simplify.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/simplify.h"
#include "tools/verbs.h"
#include "uop/symbolic.h"
#include "uop/text.h"
#include "uop/uop.h"

/* ---- SIMPLIFIER HOOK ------------------------------------------------------------------------------------------
 * The one place the verb calls the simplifier (uop/symbolic.h). */
static hcq_status run_simplifier(uop_ctx *ctx, const uop *expr, const uop **out) {
  return uop_simplify(ctx, expr, out);
}
/* ---- end of SIMPLIFIER HOOK ---------------------------------------------------------------------------------- */

/* A fresh ctx once the current one holds this many nodes: keeps a long --file run's memory bounded. */
#define SIMPLIFY_CTX_MAX_NODES 200000

struct simplify_session {
  uop_ctx *ctx;
};

simplify_session *simplify_session_create(void) {
  simplify_session *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  hcq_status st = uop_ctx_create(&s->ctx);
  if (st) {
    hcq_status_free(st);
    free(s);
    return NULL;
  }
  return s;
}

void simplify_session_destroy(simplify_session *s) {
  if (!s) return;
  uop_ctx_destroy(s->ctx);
  free(s);
}

static bool blank_or_comment(const char *text, size_t len) {
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    if (c == ';') {
      while (i < len && text[i] != '\n') i++;
      continue;
    }
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\v' && c != '\f') return false;
  }
  return true;
}

/* An IDIV or MOD whose divisor is the constant 0, anywhere under root: an error naming it. */
static hcq_status check_div_zero(uop_ctx *ctx, const uop *root, const char *where) {
  const uop **nodes = NULL;
  size_t count = 0;
  HCQ_TRY(uop_toposort(ctx, root, &nodes, &count));
  for (size_t i = 0; i < count; i++) {
    const uop *n = nodes[i];
    int64_t v;
    if ((n->op == UOP_IDIV || n->op == UOP_MOD) && n->nsrc == 2 && uop_const_value(n->src[1], &v) && v == 0) {
      char *r = NULL;
      hcq_status rst = uop_render(n, &r);
      hcq_status_free(rst);
      if (r && strlen(r) > 80) strcpy(r + 72, " ...");
      hcq_status st = hcq_status_make(HCQ_CODE_INVALID, "%s by zero in %s: %s", n->op == UOP_IDIV ? "division" : "modulo",
                                      where, r ? r : "?");
      free(r);
      return st;
    }
  }
  return HCQ_OK;
}

/* Bounds as text: integers (uint64 unsigned), bool 0/1, floats as shortest decimals or inf/-inf. */
static void fmt_bound(const uop *n, bool upper, char *buf, size_t cap) {
  uop_dtype dt = n->dtype;
  if (uop_dt_is_float(dt)) {
    char tmp[32];
    snprintf(buf, cap, "%s", uop_text_fmt_double(upper ? uop_fmax(n) : uop_fmin(n), tmp));
  } else if (dt.scalar == UOP_UINT64) {
    snprintf(buf, cap, "%" PRIu64, (uint64_t)(upper ? uop_vmax(n) : uop_vmin(n)));
  } else {
    snprintf(buf, cap, "%" PRId64, upper ? uop_vmax(n) : uop_vmin(n));
  }
}

static hcq_status process(simplify_session *s, const char *text, size_t len, int line_no, FILE *out) {
  const uop *expr = NULL, *simple = NULL;
  HCQ_TRY(uop_parse_at(s->ctx, text, len, line_no, &expr));
  HCQ_TRY(check_div_zero(s->ctx, expr, "the input"));
  HCQ_TRY(run_simplifier(s->ctx, expr, &simple));
  HCQ_TRY(check_div_zero(s->ctx, simple, "the result"));
  char *sexpr = NULL, *render = NULL;
  hcq_status st = uop_print(simple, &sexpr);
  if (!st) st = uop_render(simple, &render);
  if (!st) {
    char lo[40], hi[40];
    fmt_bound(simple, false, lo, sizeof lo);
    fmt_bound(simple, true, hi, sizeof hi);
    fprintf(out, "%s\t%s\t%s\t%s\n", sexpr, lo, hi, render);
  }
  free(sexpr);
  free(render);
  return st;
}

bool simplify_line(simplify_session *s, const char *text, size_t len, int line_no, FILE *out) {
  if (blank_or_comment(text, len)) {
    fputc('\n', out);
    return true;
  }
  if (uop_ctx_node_count(s->ctx) > SIMPLIFY_CTX_MAX_NODES) {
    uop_ctx *fresh = NULL;
    hcq_status st = uop_ctx_create(&fresh);
    if (st) {
      fprintf(out, "!error %s\n", hcq_status_message(st));
      hcq_status_free(st);
      return false;
    }
    uop_ctx_destroy(s->ctx);
    s->ctx = fresh;
  }
  hcq_status st = process(s, text, len, line_no, out);
  if (!st) return true;
  /* The message is one line: newlines in it (none are expected) would break the line alignment. */
  const char *msg = hcq_status_message(st);
  fputs("!error ", out);
  for (const char *p = msg; *p; p++) fputc(*p == '\n' || *p == '\t' ? ' ' : *p, out);
  fputc('\n', out);
  hcq_status_free(st);
  return false;
}

#define SIMPLIFY_MAX_LINE_B (1 << 20) /* an endless line (/dev/zero) is an error, not an out-of-memory kill */

long simplify_stream(simplify_session *s, FILE *in, FILE *out, FILE *err) {
  size_t cap = 256;
  char *line = malloc(cap);
  long errors = 0;
  int line_no = 0, c = 0;
  while (line && c != EOF) {
    size_t len = 0;
    while ((c = getc(in)) != EOF && c != '\n') {
      if (len == SIMPLIFY_MAX_LINE_B) {
        fprintf(err, "hcq simplify: line %d is longer than %d bytes\n", line_no + 1, SIMPLIFY_MAX_LINE_B);
        free(line);
        return -1;
      }
      if (len + 1 >= cap) {
        char *p = realloc(line, cap * 2);
        if (!p) {
          fprintf(err, "hcq simplify: line %d: out of memory\n", line_no + 1);
          free(line);
          return -1;
        }
        line = p;
        cap *= 2;
      }
      line[len++] = (char)c;
    }
    if (c == EOF && len == 0) break; /* no last line without a newline */
    line_no++;
    if (len && line[len - 1] == '\r') len--;
    if (!simplify_line(s, line, len, line_no, out)) errors++;
  }
  bool failed = !line || ferror(in);
  int err_no = errno;
  free(line);
  if (failed) {
    fprintf(err, "hcq simplify: read error after line %d: %s\n", line_no, line ? strerror(err_no) : "out of memory");
    return -1;
  }
  return errors;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: hcq simplify EXPR...\n"
          "       hcq simplify --file FILE      (FILE '-' = stdin; one expression per line)\n"
          "\n"
          "Simplifies each expression and prints one line per input line:\n"
          "  SEXPR<TAB>VMIN<TAB>VMAX<TAB>RENDER\n"
          "SEXPR is the simplified expression in the input grammar, VMIN/VMAX its proven bounds (bool as 0/1,\n"
          "floats as decimals or inf/-inf, uint64 unsigned; for index, -9223372036854775808 and 9223372036854775807\n"
          "mean unbounded), RENDER its infix form. Blank and comment-only (;) lines give an empty line, so output\n"
          "lines align with input lines. A line that does not parse, or divides by a constant zero, gives\n"
          "'!error MESSAGE' and the run goes on.\n"
          "\n"
          "Grammar:\n"
          "  expr := INT | true | false | (const V DT) | (var NAME MIN MAX DT) | (range N END) | (special NAME END)\n"
          "        | (OP A B) with OP in + * // %% < != & | ^ max << >> | (recip A) | (trunc A) | (where C A B)\n"
          "        | (cast DT A)\n"
          "  DT   := index bool int8 uint8 int16 uint16 int32 uint32 int64 uint64 float16 bfloat16 float32 float64\n"
          "A bare INT is an index constant; // and %% truncate toward zero; ; starts a comment.\n"
          "\n"
          "Exit status: 0 all lines ok, 1 some line was an error (or reading failed), 2 usage error.\n"
          "Example: hcq simplify '(%% (+ (* (var a 0 9 index) 4) 3) 4)'\n");
}

int hcq_verb_simplify(int argc, char **argv) {
  const char *file = NULL;
  int first_expr = 1;
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--file")) {
    if (argc != 3) {
      fprintf(stderr, "hcq simplify: --file takes exactly one FILE (try hcq simplify --help)\n");
      return 2;
    }
    file = argv[2];
  } else if (argv[1][0] == '-' && argv[1][1] == '-') {
    fprintf(stderr, "hcq simplify: unknown option '%s' (try hcq simplify --help)\n", argv[1]);
    return 2;
  }
  simplify_session *s = simplify_session_create();
  if (!s) {
    fprintf(stderr, "hcq simplify: out of memory\n");
    return 1;
  }
  long errors = 0;
  if (file) {
    FILE *in = strcmp(file, "-") ? fopen(file, "r") : stdin;
    struct stat st;
    if (in && fstat(fileno(in), &st) == 0 && S_ISDIR(st.st_mode)) {
      fclose(in);
      fprintf(stderr, "hcq simplify: '%s' is a directory, not a file of expressions\n", file);
      simplify_session_destroy(s);
      return 1;
    }
    if (!in) {
      fprintf(stderr, "hcq simplify: cannot open '%s': %s\n", file, strerror(errno));
      simplify_session_destroy(s);
      return 1;
    }
    errors = simplify_stream(s, in, stdout, stderr);
    if (in != stdin) fclose(in);
  } else {
    for (int i = first_expr; i < argc; i++)
      if (!simplify_line(s, argv[i], strlen(argv[i]), 1, stdout)) errors++;
  }
  simplify_session_destroy(s);
  if (fflush(stdout) != 0) {
    fprintf(stderr, "hcq simplify: writing the output failed: %s\n", strerror(errno));
    return 1;
  }
  return errors != 0 ? 1 : 0;
}
