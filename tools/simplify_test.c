/* Tests of `hcq simplify`: line alignment, error lines, exact output for expressions whose answer does not depend
 * on the simplifier, and, for every other line, a brute-force check (uop_sym_infer over every variable assignment)
 * that the printed expression equals the input and that its printed bounds contain every value. Finally the verb
 * itself (argument handling, exit status) with stdout captured. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/testing.h"
#include "tools/simplify.h"
#include "tools/verbs.h"
#include "uop/text.h"
#include "uop/uop.h"

static char *write_temp(const char *content, size_t len) {
  char *path = strdup("/tmp/hcq_simplify_test_XXXXXX");
  int fd = mkstemp(path);
  if (fd < 0) {
    free(path);
    return NULL;
  }
  CHECK(write(fd, content, len) == (ssize_t)len);
  close(fd);
  return path;
}

/* Run simplify_stream on `input`; returns the output (malloc'd) and the error-line count. */
static char *run_stream(const char *input, long *errors) {
  char *path = write_temp(input, strlen(input));
  FILE *in = path ? fopen(path, "r") : NULL;
  char *out_buf = NULL;
  size_t out_len = 0;
  FILE *out = open_memstream(&out_buf, &out_len);
  simplify_session *s = simplify_session_create();
  *errors = (in && out && s) ? simplify_stream(s, in, out, stderr) : -2;
  simplify_session_destroy(s);
  if (in) fclose(in);
  if (out) fclose(out);
  if (path) unlink(path);
  free(path);
  return out_buf;
}

/* Split text into lines in place; returns the count. */
static int split_lines(char *text, char **lines, int max) {
  int n = 0;
  for (char *p = text; *p && n < max;) {
    char *nl = strchr(p, '\n');
    lines[n++] = p;
    if (!nl) break;
    *nl = 0;
    p = nl + 1;
  }
  return n;
}

/* ------------------------------------------------------------------------------------------- brute force */

typedef struct var_dom {
  const char *name;
  int64_t lo, hi;
} var_dom;

/* Variables (DEFINE_VAR, SPECIAL, RANGE) under root with constant-bounded domains. */
static int collect_vars(uop_ctx *ctx, const uop *root, var_dom *out, int max) {
  const uop **nodes = NULL;
  size_t count = 0;
  hcq_status st = uop_toposort(ctx, root, &nodes, &count);
  if (st) {
    hcq_status_free(st);
    return -1;
  }
  int n = 0;
  for (size_t i = 0; i < count && n < max; i++) {
    const uop *u = nodes[i];
    if (u->op == UOP_DEFINE_VAR) {
      out[n++] = (var_dom){u->arg.str, u->arg.i, u->arg.i2};
    } else if (u->op == UOP_SPECIAL || u->op == UOP_RANGE) {
      int64_t end;
      if (!uop_const_value(u->src[0], &end)) return -1;
      char buf[32];
      snprintf(buf, sizeof buf, "ridx%" PRId64, u->arg.i);
      out[n++] = (var_dom){u->op == UOP_SPECIAL ? u->arg.str : uop_intern_str(ctx, buf, strlen(buf)), 0, end - 1};
    }
  }
  return n;
}

static int checked_lines;

/* in_text and the printed sexpr must agree on every assignment; the value must lie in [vmin, vmax]. */
static void brute_force_check(const char *in_text, const char *sexpr, const char *vmin_s, const char *vmax_s) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  if (!ctx) return;
  const uop *a = NULL, *b = NULL;
  CHECK_OK(uop_parse(ctx, in_text, strlen(in_text), &a));
  CHECK_OK(uop_parse(ctx, sexpr, strlen(sexpr), &b));
  var_dom vars[8];
  int nv = a ? collect_vars(ctx, a, vars, 8) : -1;
  CHECK(nv >= 0);
  if (!a || !b || nv < 0 || uop_dt_is_float(a->dtype)) goto done;
  int64_t vmin = strtoll(vmin_s, NULL, 10), vmax = strtoll(vmax_s, NULL, 10);
  uop_var_val vals[8];
  int64_t idx[8];
  for (int i = 0; i < nv; i++) vals[i].name = vars[i].name, idx[i] = vars[i].lo;
  long points = 0, bad = 0;
  for (;;) {
    for (int i = 0; i < nv; i++) vals[i].value = idx[i];
    int64_t va = 0, vb = 0;
    hcq_status sa = uop_sym_infer(a, vals, (size_t)nv, &va), sb = uop_sym_infer(b, vals, (size_t)nv, &vb);
    if (!sa && !sb) {
      if (va != vb || va < vmin || va > vmax) {
        if (bad++ == 0)
          fprintf(stderr, "brute force: %s -> %s: value %" PRId64 " vs %" PRId64 " bounds [%" PRId64 ", %" PRId64 "]\n",
                  in_text, sexpr, va, vb, vmin, vmax);
      }
    } else if (!sa != !sb) {
      bad++; /* one side divides by zero and the other does not */
    }
    hcq_status_free(sa);
    hcq_status_free(sb);
    points++;
    int i = 0;
    while (i < nv && idx[i] == vars[i].hi) idx[i] = vars[i].lo, i++;
    if (i == nv) break;
    idx[i]++;
  }
  CHECK_EQ_INT(bad, 0);
  CHECK(points > 0);
  checked_lines++;
done:
  uop_ctx_destroy(ctx);
}

/* ------------------------------------------------------------------------------------------- tests */

static void test_exact_lines(void) {
  const char *input =
      "5\n"
      "\n"
      "; a comment\n"
      "(var a 0 10 index)\n"
      "(+ 1\n"
      "true\n"
      "(// (var a 0 10 index) 0)\n"
      "(+ 1 (% (var a 0 10 index) 0))\r\n"
      "(const 255 uint8)\n"
      "(const 18446744073709551615 uint64)\n"
      "(const 1.5 float32)\n"
      "   (foo 1 2)   ; trailing comment\n"
      "(special gidx0 32)\n"
      "(range 3 7)\n"
      "(var n -4 -2 int32)\n"
      "(const 2 float16)"; /* no final newline */
  long errors = 0;
  char *out = run_stream(input, &errors);
  CHECK(out != NULL);
  if (!out) return;
  CHECK_EQ_INT(errors, 4);
  char *lines[64];
  int n = split_lines(out, lines, 64);
  CHECK_EQ_INT(n, 16); /* one per input line (the last has no newline in the input, one in the output) */
  if (n >= 16) {
    CHECK_EQ_STR(lines[0], "5\t5\t5\t5");
    CHECK_EQ_STR(lines[1], "");
    CHECK_EQ_STR(lines[2], "");
    CHECK_EQ_STR(lines[3], "(var a 0 10 index)\t0\t10\ta");
    CHECK_EQ_STR(lines[4], "!error 5:5: expected expression, got end of input");
    CHECK_EQ_STR(lines[5], "true\t1\t1\tTrue");
    CHECK_EQ_STR(lines[6], "!error division by zero in the input: (a//0)");
    CHECK_EQ_STR(lines[7], "!error modulo by zero in the input: (a%0)");
    CHECK_EQ_STR(lines[8], "(const 255 uint8)\t255\t255\t255");
    CHECK_EQ_STR(lines[9], "(const 18446744073709551615 uint64)\t18446744073709551615\t18446744073709551615\t"
                           "18446744073709551615");
    CHECK_EQ_STR(lines[10], "(const 1.5 float32)\t1.5\t1.5\t1.5");
    CHECK_EQ_STR(lines[11], "!error 12:5: unknown operator 'foo' (expected one of + * // % < != & | ^ max << >> "
                            "recip trunc where cast const var range special)");
    CHECK_EQ_STR(lines[12], "(special gidx0 32)\t0\t31\tgidx0");
    CHECK_EQ_STR(lines[13], "(range 3 7)\t0\t6\tridx3");
    CHECK_EQ_STR(lines[14], "(var n -4 -2 int32)\t-4\t-2\tn");
    CHECK_EQ_STR(lines[15], "(const 2.0 float16)\t2.0\t2.0\t2.0");
  }
  free(out);
}

/* Answers fixed by the semantics (a correct simplifier must reach them; the reference does): the verb is wired to
 * the real simplifier, and a division by zero that only appears after folding is caught in the result. */
static void test_simplified_lines(void) {
  const char *input =
      "(+ (var x 0 9 index) 0)\n"
      "(// (+ (* (special gidx0 16) 4) (special lidx0 4)) 4)\n"
      "(% (* (range 0 16) 4) 4)\n"
      "(< (special gidx0 32) 0)\n"
      "(+ (* (// (var a 0 100 index) 4) 4) (% (var a 0 100 index) 4))\n"
      "(// (var a 0 10 index) (+ 1 -1))\n"
      "(% 5 (+ 2 -2))\n";
  long errors = 0;
  char *out = run_stream(input, &errors);
  CHECK_EQ_INT(errors, 2);
  char *lines[16];
  int n = out ? split_lines(out, lines, 16) : 0;
  CHECK_EQ_INT(n, 7);
  if (n == 7) {
    CHECK_EQ_STR(lines[0], "(var x 0 9 index)\t0\t9\tx");
    CHECK_EQ_STR(lines[1], "(special gidx0 16)\t0\t15\tgidx0");
    CHECK_EQ_STR(lines[2], "0\t0\t0\t0");
    CHECK_EQ_STR(lines[3], "false\t0\t0\tFalse");
    CHECK_EQ_STR(lines[4], "(var a 0 100 index)\t0\t100\ta");
    CHECK_EQ_STR(lines[5], "!error division by zero in the result: (a//0)");
    CHECK_EQ_STR(lines[6], "!error modulo by zero in the result: (5%0)");
  }
  free(out);
}

/* Realistic index expressions: whatever the simplifier does, the result must be equal and the bounds sound. */
static const char *const corpus[] = {
    "(+ (* (special gidx0 16) 4) (special lidx0 4))",
    "(// (+ (* (special gidx0 16) 4) (special lidx0 4)) 4)",
    "(% (+ (* (special gidx0 16) 4) (special lidx0 4)) 4)",
    "(+ (* (// (var a 0 100 index) 4) 4) (% (var a 0 100 index) 4))",
    "(< (+ (* (range 0 4) 3) (range 1 3)) 12)",
    "(// (+ (* (range 0 8) 8) (range 1 8)) 8)",
    "(% (* (range 0 16) 4) 4)",
    "(+ (+ (var x 0 9 index) 0) (* 1 (var y 0 9 index)))",
    "(max (range 0 10) 0)",
    "(where (< (range 0 10) 10) (range 0 10) 0)",
    "(// (* (var n 1 64 index) 6) 3)",
    "(< (special gidx0 32) 0)",
    "(!= (% (range 0 6) 2) 2)",
    "(+ (// (range 0 32) 8) (// (range 0 32) 8))",
    "(% (+ (* (special lidx0 16) 16) (range 0 16)) 256)",
    "(& (< (range 0 4) 3) (< (range 0 4) 4))",
    "(// (var a -10 10 index) 3)",
    "(% (var a -10 10 index) 3)",
    "(// (+ (var a -10 10 index) 12) 4)",
    "(+ (* (range 2 3) 4) (// (+ (* (range 2 3) 4) (range 3 4)) 12))",
    "(* (+ (var a 0 5 int32) (const 3 int32)) (const 2 int32))",
    "(where (!= (var c 0 1 index) 0) (+ (var a 0 7 index) 1) (var a 0 7 index))",
    "(max (* (var a -3 3 index) -1) (var a -3 3 index))",
    "(% (// (+ (* (var a 0 20 index) 6) 5) 2) 3)",
};

static void test_corpus_brute_force(void) {
  size_t cap = 0, len = 0;
  for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) cap += strlen(corpus[i]) + 1;
  char *input = malloc(cap + 1);
  for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++) len += (size_t)sprintf(input + len, "%s\n", corpus[i]);
  long errors = 0;
  char *out = run_stream(input, &errors);
  free(input);
  CHECK_EQ_INT(errors, 0);
  if (!out) return;
  char *lines[64];
  int n = split_lines(out, lines, 64);
  CHECK_EQ_INT(n, (int)(sizeof corpus / sizeof corpus[0]));
  checked_lines = 0;
  for (int i = 0; i < n && i < (int)(sizeof corpus / sizeof corpus[0]); i++) {
    char *f[4] = {lines[i], NULL, NULL, NULL};
    for (int k = 1; k < 4; k++) {
      char *tab = f[k - 1] ? strchr(f[k - 1], '\t') : NULL;
      if (tab) *tab = 0, f[k] = tab + 1;
    }
    CHECK(f[3] != NULL && strchr(f[3], '\t') == NULL);
    if (!f[3]) {
      fprintf(stderr, "line %d: %s\n", i + 1, lines[i]);
      continue;
    }
    /* The render of the printed expression is the printed render. */
    uop_ctx *ctx = NULL;
    CHECK_OK(uop_ctx_create(&ctx));
    const uop *e = NULL;
    char *r = NULL;
    CHECK_OK(uop_parse(ctx, f[0], strlen(f[0]), &e));
    if (e) CHECK_OK(uop_render(e, &r));
    CHECK_EQ_STR(r, f[3]);
    free(r);
    uop_ctx_destroy(ctx);
    brute_force_check(corpus[i], f[0], f[1], f[2]);
  }
  CHECK_EQ_INT(checked_lines, (int)(sizeof corpus / sizeof corpus[0]));
  free(out);
}

/* Thousands of lines in one process: every line answered, in seconds. */
static void test_many_lines(void) {
  const int count = 5000;
  size_t cap = (size_t)count * 160, len = 0;
  char *input = malloc(cap);
  for (int i = 0; i < count; i++)
    len += (size_t)snprintf(input + len, cap - len,
                            "(%% (+ (* (var a 0 %d index) %d) (// (special lidx0 %d) %d)) %d)\n", 10 + i % 97,
                            1 + i % 13, 1 + i % 64, 1 + i % 5, 1 + i % 31);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  long errors = 0;
  char *out = run_stream(input, &errors);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  free(input);
  CHECK_EQ_INT(errors, 0);
  int lines = 0;
  for (char *p = out; p && *p; p++) lines += *p == '\n';
  CHECK_EQ_INT(lines, count);
  double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  printf("simplify: %d lines in %.1f ms (%.1f us/line)\n", count, ms, ms * 1e3 / count);
  free(out);
}

/* Run the verb with stdout captured into a file; returns its exit status and the output (malloc'd). */
static int run_verb(int argc, char **argv, char **out_text) {
  char *path = write_temp("", 0);
  fflush(stdout);
  int saved = dup(1), fd = open(path, O_WRONLY | O_TRUNC);
  dup2(fd, 1);
  close(fd);
  int rc = hcq_verb_simplify(argc, argv);
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  FILE *f = fopen(path, "r");
  char *buf = calloc(1, 1 << 16);
  size_t n = f ? fread(buf, 1, (1 << 16) - 1, f) : 0;
  buf[n] = 0;
  if (f) fclose(f);
  unlink(path);
  free(path);
  *out_text = buf;
  return rc;
}

static void test_verb(void) {
  char *out = NULL;
  char *help[] = {"simplify", "--help"};
  CHECK_EQ_INT(run_verb(2, help, &out), 0);
  CHECK(strstr(out, "usage: hcq simplify") != NULL);
  free(out);
  char *one[] = {"simplify", "(var a 0 10 index)", "", "7"};
  CHECK_EQ_INT(run_verb(4, one, &out), 0);
  CHECK_EQ_STR(out, "(var a 0 10 index)\t0\t10\ta\n\n7\t7\t7\t7\n");
  free(out);
  char *bad[] = {"simplify", "(+ 1", "3"};
  CHECK_EQ_INT(run_verb(3, bad, &out), 1);
  CHECK_EQ_STR(out, "!error 1:5: expected expression, got end of input\n3\t3\t3\t3\n");
  free(out);
  char *file = write_temp("1\n(// 1 0)\n2\n", 12);
  char *fargs[] = {"simplify", "--file", file};
  CHECK_EQ_INT(run_verb(3, fargs, &out), 1);
  CHECK_EQ_STR(out, "1\t1\t1\t1\n!error division by zero in the input: (1//0)\n2\t2\t2\t2\n");
  free(out);
  unlink(file);
  free(file);
  char *missing[] = {"simplify", "--file", "/nonexistent/hcq/file"};
  CHECK_EQ_INT(run_verb(3, missing, &out), 1);
  free(out);
  char *usage1[] = {"simplify", "--file"};
  CHECK_EQ_INT(run_verb(2, usage1, &out), 2);
  free(out);
  char *usage2[] = {"simplify", "--bogus"};
  CHECK_EQ_INT(run_verb(2, usage2, &out), 2);
  free(out);
}

int main(void) {
  test_exact_lines();
  test_simplified_lines();
  test_corpus_brute_force();
  test_many_lines();
  test_verb();
  return testing_summary("simplify_test");
}
