/* Tests of the kernel text format: round trip of every example and of generic forms of every op, typing and
 * validation errors with positions, structure of what the parser builds (checked against nodes built by hand). */
#include <dirent.h>
#include <math.h>

#include "compiler/compiler.h"
#include "compiler/kernel_text.h"
#include "base/testing.h"
#include "uop/uop.h"

static const uop *parse_ok(uop_ctx *ctx, const char *text) {
  const uop *k = NULL;
  hcq_status st = cc_kernel_parse(ctx, text, strlen(text), "t.uop", &k);
  if (st) {
    fprintf(stderr, "parse failed: %s\n--- text:\n%s\n", hcq_status_message(st), text);
    hcq_status_free(st);
  }
  return k;
}

/* print -> parse gives the same node; printing again gives the same text. */
static void check_round_trip(uop_ctx *ctx, const uop *k, const char *what) {
  char *text = NULL, *text2 = NULL;
  hcq_status st = cc_kernel_print(k, &text);
  CHECK(st == HCQ_OK);
  if (st) {
    fprintf(stderr, "%s: print failed: %s\n", what, hcq_status_message(st));
    hcq_status_free(st);
    return;
  }
  const uop *back = parse_ok(ctx, text);
  CHECK(back == k);
  if (back != k) fprintf(stderr, "%s: round trip differs; printed:\n%s\n", what, text);
  if (back) {
    CHECK_OK(cc_kernel_print(back, &text2));
    CHECK_EQ_STR(text, text2);
  }
  free(text);
  free(text2);
}

static void test_examples(void) {
  DIR *d = opendir("examples");
  CHECK(d != NULL);
  if (!d) return;
  int count = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 4, ".uop") != 0) continue;
    char path[512];
    snprintf(path, sizeof path, "examples/%s", e->d_name);
    uop_ctx *ctx;
    CHECK_OK(uop_ctx_create(&ctx));
    const uop *k = NULL;
    hcq_status st = cc_kernel_parse_file(ctx, path, &k);
    CHECK(st == HCQ_OK);
    if (st) {
      fprintf(stderr, "%s: %s\n", path, hcq_status_message(st));
      hcq_status_free(st);
    } else {
      CHECK(k->op == UOP_SINK && k->arg.kind == UOP_ARG_STR);
      CHECK_OK(cc_kernel_validate(k));
      check_round_trip(ctx, k, path);
      count++;
    }
    uop_ctx_destroy(ctx);
  }
  closedir(d);
  CHECK(count >= 19);
}

/* The parser builds exactly the canonical nodes (docs/FORMATS.md) that a hand-built DAG has. */
static void test_structure(void) {
  uop_ctx *ctx;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *k = parse_ok(ctx, "(kernel mm\n"
                               "  (let c (buf 0 float32 16)) (let a (buf 1 float32 16))\n"
                               "  (let r0 (range 0 4)) (let r1 (range 1 4 loop)) (let rk (range 1002 4 reduce))\n"
                               "  (sink (store (index c (+ (* r0 4) r1))\n"
                               "    (reduce add (* (load (index a (+ (* r0 4) rk))) (load (index a (+ (* rk 4) r1))"
                               " (const 0 float32))) rk) r0 r1)))");
  CHECK(k != NULL);
  if (k) {
    uop_dtype f32 = uop_dt(UOP_FLOAT32), ptr = uop_dt_ptr(f32, UOP_AS_GLOBAL, 16);
    const uop *c = uop_new(ctx, UOP_DEFINE_GLOBAL, ptr, NULL, 0, uop_arg_int(0));
    const uop *a = uop_new(ctx, UOP_DEFINE_GLOBAL, ptr, NULL, 0, uop_arg_int(1));
    const uop *four = uop_index_const(ctx, 4);
    const uop *r0 = uop_range(ctx, four, 0, UOP_AXIS_LOOP), *r1 = uop_range(ctx, four, 1, UOP_AXIS_LOOP);
    const uop *rk = uop_range(ctx, four, 1002, UOP_AXIS_REDUCE);
    const uop *ia[] = {a, uop_alu2(ctx, UOP_ADD, uop_alu2(ctx, UOP_MUL, r0, four), rk)};
    const uop *ib[] = {a, uop_alu2(ctx, UOP_ADD, uop_alu2(ctx, UOP_MUL, rk, four), r1)};
    const uop *la = uop_new(ctx, UOP_LOAD, f32, (const uop *[]){uop_new(ctx, UOP_INDEX_OP, ptr, ia, 2, uop_arg_none())},
                            1, uop_arg_none());
    const uop *lb = uop_new(ctx, UOP_LOAD, f32,
                            (const uop *[]){uop_new(ctx, UOP_INDEX_OP, ptr, ib, 2, uop_arg_none()),
                                            uop_const_float(ctx, f32, 0)}, 2, uop_arg_none());
    const uop *red = uop_new(ctx, UOP_REDUCE, f32, (const uop *[]){uop_alu2(ctx, UOP_MUL, la, lb), rk}, 2,
                             uop_arg_int(UOP_ADD));
    const uop *ic[] = {c, uop_alu2(ctx, UOP_ADD, uop_alu2(ctx, UOP_MUL, r0, four), r1)};
    const uop *st = uop_new(ctx, UOP_STORE, uop_dt(UOP_VOID),
                            (const uop *[]){uop_new(ctx, UOP_INDEX_OP, ptr, ic, 2, uop_arg_none()), red, r0, r1}, 4,
                            uop_arg_none());
    const uop *sink = uop_new(ctx, UOP_SINK, uop_dt(UOP_VOID), &st, 1, uop_arg_str(ctx, "mm"));
    CHECK(k == sink);
    check_round_trip(ctx, k, "structure");
  }
  uop_ctx_destroy(ctx);
}

static uop_arg arg_for(uop_ctx *ctx, int kind) {
  static const int64_t lanes[] = {0, 3, 1};
  switch (kind) {
  case UOP_ARG_INT: return uop_arg_int(-7);
  case UOP_ARG_FLOAT: return uop_arg_float(0.1);
  case UOP_ARG_STR: return uop_arg_str(ctx, "not an ident \"x\"\n");
  case UOP_ARG_VAR: return uop_arg_var(ctx, "n", -3, 99);
  case UOP_ARG_RANGE: return uop_arg_range(12, UOP_AXIS_UPCAST);
  case UOP_ARG_INTS: return uop_arg_ints(ctx, lanes, 3);
  default: return uop_arg_none();
  }
}

/* Every op, with several dtypes (vector, pointer, void) and every arg kind, inside a sink: prints and parses back. */
static void test_generic_forms(void) {
  uop_ctx *ctx;
  CHECK_OK(uop_ctx_create(&ctx));
  uop_dtype dts[] = {uop_dt(UOP_FLOAT32), uop_dt_vec(uop_dt(UOP_FLOAT32), 4), uop_dt(UOP_VOID), uop_dt(UOP_INDEX),
                     uop_dt_ptr(uop_dt(UOP_FLOAT16), UOP_AS_LOCAL, 256), uop_dt_ptr(uop_dt_vec(uop_dt(UOP_INT32), 2),
                     UOP_AS_REG, -1), uop_dt_vec(uop_dt(UOP_BOOL), 8)};
  uop_dtype pv = uop_dt_ptr(uop_dt(UOP_FLOAT32), UOP_AS_GLOBAL, 64);
  pv.ptr_v = 4;
  const uop *leaf = uop_index_const(ctx, 5), *fl = uop_const_float(ctx, uop_dt(UOP_FLOAT32), 1.5);
  const uop *all[UOP_OP_COUNT * 8 * 7 + 8];
  size_t n = 0;
  for (int op = 0; op < UOP_OP_COUNT; op++)
    for (size_t d = 0; d < sizeof dts / sizeof *dts; d++)
      for (int kind = UOP_ARG_NONE; kind <= UOP_ARG_INTS; kind++) {
        const uop *src[3] = {leaf, fl, leaf};
        uint32_t nsrc = (uint32_t)((op + kind + (int)d) % 4);
        all[n++] = uop_new(ctx, (uop_op)op, dts[d], src, nsrc, arg_for(ctx, kind));
      }
  all[n++] = uop_new(ctx, UOP_DEFINE_GLOBAL, pv, NULL, 0, uop_arg_int(3));
  all[n++] = uop_const_float(ctx, uop_dt(UOP_FLOAT32), INFINITY);
  all[n++] = uop_const_float(ctx, uop_dt(UOP_FLOAT64), -0.0);
  all[n++] = uop_const_float(ctx, uop_dt(UOP_FLOAT16), 0.5);
  all[n++] = uop_const_int(ctx, uop_dt(UOP_UINT64), -1);
  all[n++] = uop_const_int(ctx, uop_dt(UOP_INT8), -128);
  all[n++] = uop_var(ctx, "true", 0, 1, uop_dt(UOP_INDEX)); /* a reserved word as a var name */
  all[n++] = uop_new(ctx, UOP_SINK, uop_dt(UOP_VOID), &leaf, 1, uop_arg_str(ctx, "inner"));
  const uop *sink = uop_new(ctx, UOP_SINK, uop_dt(UOP_VOID), all, (uint32_t)n, uop_arg_none());
  check_round_trip(ctx, sink, "generic forms");
  /* a root that is not a sink, and a named sink with a quoted name */
  const uop *w = uop_new(ctx, UOP_WMMA, dts[1], all, 3, arg_for(ctx, UOP_ARG_INTS));
  check_round_trip(ctx, w, "non-sink root");
  const uop *named = uop_new(ctx, UOP_SINK, uop_dt(UOP_VOID), all, 3, uop_arg_str(ctx, "my kernel"));
  check_round_trip(ctx, named, "quoted kernel name");
  uop_ctx_destroy(ctx);
}

/* Shared sub-DAGs are printed once (let-bound). */
static void test_sharing(void) {
  uop_ctx *ctx;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *x = uop_var(ctx, "x", 0, 10, uop_dt(UOP_INDEX));
  const uop *e = x;
  for (int i = 0; i < 200; i++) e = uop_alu2(ctx, UOP_ADD, e, e); /* 2^200 paths as a tree */
  const uop *sink = uop_new(ctx, UOP_SINK, uop_dt(UOP_VOID), &e, 1, uop_arg_none());
  char *text = NULL;
  CHECK_OK(cc_kernel_print(sink, &text));
  CHECK(text && strlen(text) < 20000);
  free(text);
  check_round_trip(ctx, sink, "shared chain");
  uop_ctx_destroy(ctx);
}

static void expect_err(const char *text, hcq_code code, const char *needle) {
  uop_ctx *ctx;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *k = NULL;
  hcq_status st = cc_kernel_parse(ctx, text, strlen(text), "e.uop", &k);
  CHECK(k == NULL);
  CHECK(st && hcq_status_code(st) == code && strstr(hcq_status_message(st), needle));
  if (!st || hcq_status_code(st) != code || !strstr(hcq_status_message(st), needle))
    fprintf(stderr, "expected %s containing \"%s\" for:\n%s\ngot: %s\n", hcq_code_name(code), needle, text,
            st ? hcq_status_message(st) : "ok");
  hcq_status_free(st);
  uop_ctx_destroy(ctx);
}

#define HEAD "(kernel k (let o (buf 0 float32 8)) (let a (buf 1 float32 8)) (let r (range 0 8))\n"

static void test_errors(void) {
  expect_err("", HCQ_CODE_PARSE, "e.uop:1:1: expected (kernel ...)");
  expect_err("(kernel k", HCQ_CODE_PARSE, "expected ')'");
  expect_err(HEAD " (sink (store (index o r) (load (index a q)) r)))", HCQ_CODE_PARSE,
             "e.uop:2:42: unknown name 'q'");
  expect_err(HEAD " (sink (store (+ r 1) 1.0 r)))", HCQ_CODE_PARSE, "e.uop:2:8: (store ...): store without a buffer");
  expect_err(HEAD " (sink (store (index o r) (+ (load (index a r)) 1) r)))", HCQ_CODE_PARSE,
             "operands of + have different dtypes: float32 and index");
  expect_err(HEAD " (sink (store (index o r) (const 1 int32) r)))", HCQ_CODE_PARSE,
             "store of a int32 value into a float32 buffer");
  expect_err(HEAD " (sink (store (index o r) (load (index a r) 0) r)))", HCQ_CODE_PARSE,
             "alternative value of load is index");
  expect_err(HEAD " (sink (store (index o r 1) 1.0 r)))", HCQ_CODE_PARSE, "gate of index must be bool");
  expect_err(HEAD " (sink (store (index o r) 1.0 7)))", HCQ_CODE_PARSE, "operand 3 of store must be a range");
  expect_err(HEAD " (sink (store (index o 0) (load (index a r)))))", HCQ_CODE_INVALID,
             "e.uop:2:8: STORE: range e.uop:1:70: RANGE r (id 0, loop) is used outside its scope");
  expect_err(HEAD " (let r2 (range 1 8 reduce))\n (sink (store (index o r) (reduce add (load (index a r2)) r2) r)"
                  " (store (index o r2) 1.0 r)))",
             HCQ_CODE_INVALID, "RANGE r2 (id 1, reduce) is used outside its scope");
  expect_err(HEAD " (let b (buf 1 int32 8)) (sink (store (index o r) (+ (load (index a r)) (cast float32 (load (index b r)))) r)))",
             HCQ_CODE_INVALID, "buffer slot 1 declared twice with different types: ptr.global.float32[8] and "
             "ptr.global.int32[8]");
  expect_err(HEAD " (let r (range 1 8)) (sink))", HCQ_CODE_PARSE, "duplicate let name 'r'");
  expect_err(HEAD " (sink))", HCQ_CODE_INVALID, "kernel has no store");
  expect_err(HEAD " (sink (store (index o r) (exp2 r) r)))", HCQ_CODE_PARSE, "operand of exp2 must be a float");
  expect_err(HEAD " (sink (store (index o r) (const 1e39 float32) r)))", HCQ_CODE_PARSE, "out of range for");
  expect_err(HEAD " (sink (op FOO void _)))", HCQ_CODE_PARSE, "unknown op name 'FOO'");
  expect_err(HEAD " (sink (op ADD float33 _)))", HCQ_CODE_PARSE, "unknown dtype 'float33'");
  expect_err(HEAD " (let x (buf 2 float32 8)))", HCQ_CODE_PARSE, "the last item of a kernel must be its root");
  expect_err(HEAD " (sink (store (index o (+ r (let z 1))) 1.0 r)))", HCQ_CODE_PARSE,
             "'let' is only allowed at the top level");
  expect_err(HEAD " (sink (store (index o r) (reduce sum 1.0 r) r)))", HCQ_CODE_PARSE, "expected reduce op add");
  expect_err(HEAD " (sink (store (index o r) 1.0 r))) extra", HCQ_CODE_PARSE, "expected end of input");
  expect_err(HEAD " (sink (store (index o r) 1.5.2 r)))", HCQ_CODE_PARSE, "bad number '1.5.2'");
  expect_err(HEAD " (sink (store (index o r) 1.0 r r)))", HCQ_CODE_INVALID, "closes the same range twice");
  expect_err("(kernel k (+ 1 2))", HCQ_CODE_PARSE, "a named kernel's root must be a sink");
}

/* Deep nesting costs heap, not C stack: parse, validate, print and re-parse a 100000-deep expression. */
static void test_deep(void) {
  size_t depth = 100000;
  char *t = malloc(depth * 9 + 300);
  size_t o = (size_t)sprintf(t, "(kernel d (let r (range 0 8)) (sink (store (index (buf 0 float32 8) r) ");
  for (size_t i = 0; i < depth; i++) o += (size_t)sprintf(t + o, "(+ ");
  o += (size_t)sprintf(t + o, "1.0");
  for (size_t i = 0; i < depth; i++) o += (size_t)sprintf(t + o, " 1.0)");
  sprintf(t + o, " r)))");
  uop_ctx *ctx;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *k = parse_ok(ctx, t);
  CHECK(k != NULL);
  if (k) check_round_trip(ctx, k, "deep");
  free(t);
  uop_ctx_destroy(ctx);
}

/* Mutated examples (deterministic): every input gives a result or an error, never a crash (run under ASan too). */
static void test_mutations(void) {
  static const char *const files[] = {"examples/conv2d.uop", "examples/softmax.uop", "examples/saxpy.uop"};
  static const char *const words[] = {"(", ")", " ", "r0", "-1", "1.5", "(op ADD float32 _", "let", "x", "\"", "_"};
  uint64_t seed = 12345;
  int parsed = 0;
  for (size_t fi = 0; fi < 3; fi++) {
    FILE *fp = fopen(files[fi], "rb");
    CHECK(fp != NULL);
    if (!fp) continue;
    char src[4096];
    size_t len = fread(src, 1, sizeof src - 1, fp);
    fclose(fp);
    for (int it = 0; it < 700; it++) {
      char buf[8192];
      size_t n = len;
      memcpy(buf, src, len);
      for (int m = 0; m < 1 + it % 3; m++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t pos = (size_t)(seed >> 33) % (n ? n : 1);
        const char *w = words[(seed >> 20) % (sizeof words / sizeof *words)];
        size_t wl = strlen(w), del = (seed >> 10) % 4;
        if (pos + del > n) del = n - pos;
        if (n - del + wl >= sizeof buf) continue;
        memmove(buf + pos + wl, buf + pos + del, n - pos - del);
        memcpy(buf + pos, w, wl);
        n = n - del + wl;
      }
      uop_ctx *ctx;
      CHECK_OK(uop_ctx_create(&ctx));
      const uop *k = NULL;
      hcq_status st = cc_kernel_parse(ctx, buf, n, "m.uop", &k);
      if (!st) {
        parsed++;
        char *text = NULL;
        hcq_status pst = cc_kernel_print(k, &text);
        if (!pst) {
          const uop *back = NULL;
          hcq_status bst = cc_kernel_parse(ctx, text, strlen(text), "p.uop", &back);
          testing_checks++;
          if (back != k) {
            testing_failures++;
            fprintf(stderr, "mutation round trip failed (%s):\n%.*s\n", bst ? hcq_status_message(bst) : "differs",
                    (int)n, buf);
          }
          hcq_status_free(bst);
        }
        hcq_status_free(pst);
        free(text);
      }
      hcq_status_free(st);
      uop_ctx_destroy(ctx);
    }
  }
  CHECK(parsed > 0);
}

/* Later pipeline stages: the linearized program of every small example (DEFINE_REG, ENDRANGE, vectors, ...) prints
 * and parses back to the same nodes. */
static void test_pipeline_stages(void) {
  static const char *const files[] = {"examples/add.uop", "examples/matmul.uop", "examples/softmax.uop",
                                      "examples/conv2d.uop", "examples/masked_store.uop", "examples/saxpy.uop",
                                      "examples/transcendental.uop", "examples/max_rows.uop"};
  cc_target t;
  hcq_status st = cc_target_get("c", 4, &t);
  CHECK(st == HCQ_OK);
  hcq_status_free(st);
  if (st) return;
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    for (int noopt = 0; noopt < 2; noopt++) {
      uop_ctx *ctx;
      CHECK_OK(uop_ctx_create(&ctx));
      const uop *k = NULL;
      cc_program *prog = NULL;
      cc_options o = {.noopt = noopt};
      CHECK_OK(cc_kernel_parse_file(ctx, files[i], &k));
      if (k) CHECK_OK(cc_compile_source(ctx, k, &t, &o, &prog));
      if (prog && prog->nlinear) {
        const uop *all = uop_new(ctx, UOP_SINK, uop_dt(UOP_VOID), prog->linear, (uint32_t)prog->nlinear,
                                 uop_arg_str(ctx, "linear"));
        check_round_trip(ctx, all, files[i]);
      }
      cc_program_free(prog);
      uop_ctx_destroy(ctx);
    }
  }
}

int main(void) {
  test_pipeline_stages();
  test_deep();
  test_mutations();
  test_examples();
  test_structure();
  test_generic_forms();
  test_sharing();
  test_errors();
  return testing_summary("kernel_text_test");
}
