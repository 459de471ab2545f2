/* PTX renderer tests.
 *
 * - The ISA version table against the first versions NVIDIA documents per target (sm_100 must not fall back to
 *   7.5, the reference's string-comparison trap).
 * - Every example (examples/NAME.uop), for ptx:sm_80 and ptx:sm_90, with the heuristic and with --noopt: structural
 *   facts checked against the kernel itself (header lines, one .param per buffer and variable as counted in the
 *   parsed AST, .maxntid = the program's local size, a zero-trip guard before every loop label, balanced labels),
 *   then assembled by the real ptxas through cc_compile_binary (a cubin is an ELF file: checked by its magic).
 * - Hand-written kernels for what the examples do not reach: every dtype class (float16, bfloat16, bool, uint8,
 *   int64, float64), casts, bitcasts, shifts, gated loads with an alternative value, a loop whose trip count may
 *   be zero, and the .approx transcendentals of a target that lists EXP2/LOG2/SIN; and a hand-built linear program
 *   with a shared buffer, a barrier, an IF block and an int64 loop (ops the pipeline does not produce yet).
 * Without ptxas the structural checks still run, then the test reports SKIPPED loudly and exits 77. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/cc_internal.h"
#include "compiler/examples_test_util.h"
#include "compiler/kernel_text.h"
#include "compiler/toolchain.h"
#include "base/testing.h"

static bool have_ptxas;

static int count_str(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

/* Every "LOOP_k:" label must be preceded by "@%pN bra END_k;" and followed (later) by "END_k:". */
static void check_loops(const char *src, const char *what) {
  int loops = 0;
  for (const char *p = strstr(src, "\nLOOP_"); p; p = strstr(p + 1, "\nLOOP_")) {
    int k = atoi(p + 6);
    char guard[64], end[32];
    snprintf(guard, sizeof guard, " bra END_%d;\n", k);
    snprintf(end, sizeof end, "\nEND_%d:\n", k);
    const char *g = strstr(src, guard), *e = strstr(src, end);
    CHECK(g && g < p);
    CHECK(e && e > p);
    if (!(g && g < p && e && e > p)) fprintf(stderr, "%s: loop %d has no zero-trip guard or end\n", what, k);
    loops++;
  }
  CHECK_EQ_INT(count_str(src, "zero-trip guard"), loops);
}

/* Header, params and launch bounds of a rendered program, against the AST it came from. */
static void check_structure(const cc_program *p, const cc_target *t, const uop *ast, uop_ctx *ctx,
                            const char *what) {
  const char *src = p->source;
  const char *want_version = strcmp(t->arch, "sm_80") == 0 ? ".version 7.5\n" : ".version 7.8\n";
  CHECK(strstr(src, want_version) != NULL);
  char target[32];
  snprintf(target, sizeof target, ".target %s\n", t->arch);
  CHECK(strstr(src, target) != NULL);
  CHECK(strstr(src, ".address_size 64\n") != NULL);
  char entry[160];
  snprintf(entry, sizeof entry, ".visible .entry %s(", p->symbol);
  CHECK(strstr(src, entry) != NULL);
  /* parameters: one .u64 per DEFINE_GLOBAL and one .s32 per DEFINE_VAR of the input kernel */
  const uop **nodes;
  size_t count;
  CHECK_OK(uop_toposort(ctx, ast, &nodes, &count));
  int nbuf = 0, nvar = 0;
  for (size_t i = 0; i < count; i++) {
    nbuf += nodes[i]->op == UOP_DEFINE_GLOBAL;
    nvar += nodes[i]->op == UOP_DEFINE_VAR;
  }
  CHECK_EQ_INT(count_str(src, ".param .u64 data"), nbuf);
  CHECK_EQ_INT(count_str(src, ".param .s32 var_"), nvar);
  CHECK_EQ_INT(count_str(src, "ld.param.u64"), nbuf);
  /* .maxntid X, Y, Z = the local size */
  int64_t l[3];
  for (int d = 0; d < 3; d++) CHECK((l[d] = cc_launch_const(p->desc.local[d])) > 0);
  char maxntid[96];
  snprintf(maxntid, sizeof maxntid, ".maxntid %lld, %lld, %lld\n", (long long)l[0], (long long)l[1], (long long)l[2]);
  CHECK(strstr(src, maxntid) != NULL);
  if (!strstr(src, maxntid)) fprintf(stderr, "%s: expected %s", what, maxntid);
  CHECK(l[0] * l[1] * l[2] <= 1024);
  /* thread ids: one mov from %ctaid / %tid per dim used */
  CHECK_EQ_INT(count_str(src, "%tid."), (l[0] > 1) + (l[1] > 1) + (l[2] > 1));
  check_loops(src, what);
  CHECK(count_str(src, "st.global.") >= 1);
  CHECK(strstr(src, "\tret;\n}\n") != NULL);
}

/* Assemble with ptxas (through the cache); a cubin is an ELF object. */
static void check_assembles(const cc_target *t, cc_program *p, const char *what) {
  if (!have_ptxas) return;
  hcq_status st = cc_compile_binary(t, p);
  if (st) {
    fprintf(stderr, "%s (%s): %s\n--- source ---\n%s\n", what, t->name, hcq_status_message(st), p->source);
    hcq_status_free(st);
    CHECK(!"ptxas");
    return;
  }
  CHECK(p->binary_size_B > 64);
  CHECK(p->binary && memcmp(p->binary, "\x7f" "ELF", 4) == 0);
}

static void test_examples(void) {
  char *names[128];
  size_t n = (size_t)etu_list_examples(names, 128);
  CHECK(n >= 10);
  int assembled = 0;
  const char *targets[] = {"ptx:sm_80", "ptx:sm_90"};
  for (size_t i = 0; i < n; i++) {
    for (int ti = 0; ti < 2; ti++)
      for (int noopt = 0; noopt < 2; noopt++) {
        char path[300], what[400];
        snprintf(path, sizeof path, "examples/%s", names[i]);
        snprintf(what, sizeof what, "%s %s%s", path, targets[ti], noopt ? " --noopt" : "");
        cc_target t;
        CHECK_OK(cc_target_get(targets[ti], 0, &t));
        uop_ctx *ctx = NULL;
        CHECK_OK(uop_ctx_create(&ctx));
        const uop *sink = NULL;
        cc_program *p = NULL;
        hcq_status st = cc_kernel_parse_file(ctx, path, &sink);
        if (!st) st = cc_compile_source(ctx, sink, &t, &(cc_options){.noopt = noopt}, &p);
        if (st) {
          fprintf(stderr, "%s: %s\n", what, hcq_status_message(st));
          hcq_status_free(st);
          CHECK(!"compile");
        } else {
          check_structure(p, &t, sink, ctx, what);
          int before = testing_failures;
          check_assembles(&t, p, what);
          if (have_ptxas && testing_failures == before) assembled++;
        }
        cc_program_free(p);
        uop_ctx_destroy(ctx);
      }
    free(names[i]);
  }
  printf("examples: %zu kernels x {sm_80, sm_90} x {heuristic, noopt}: %d assembled by ptxas\n", n, assembled);
}

/* Compile kernel text for a target (optionally with extra supported ops); returns the program or NULL. */
static cc_program *build(const char *text, const char *target, uop_opset extra_ops, uop_ctx **out_ctx,
                         const uop **out_sink, cc_target *out_t) {
  CHECK_OK(cc_target_get(target, 0, out_t));
  out_t->supported_ops |= extra_ops;
  CHECK_OK(uop_ctx_create(out_ctx));
  cc_program *p = NULL;
  hcq_status st = cc_kernel_parse(*out_ctx, text, strlen(text), "<test>", out_sink);
  if (!st) st = cc_compile_source(*out_ctx, *out_sink, out_t, &(cc_options){.noopt = true}, &p);
  if (st) {
    fprintf(stderr, "build: %s\n", hcq_status_message(st));
    hcq_status_free(st);
    CHECK(!"build");
    return NULL;
  }
  return p;
}

/* Every register class, casts in and out of each, bool memory, 8-bit wrap, half arithmetic. */
static const char ZOO[] =
    "(kernel zoo\n"
    "  (let h (buf 0 float16 64)) (let bf (buf 1 bfloat16 64)) (let m (buf 2 bool 64)) (let u8 (buf 3 uint8 64))\n"
    "  (let d (buf 4 float64 64)) (let q (buf 5 int64 64)) (let x (buf 6 float32 64)) (let w (buf 7 int32 64))\n"
    "  (let s8 (buf 8 int8 64))\n"
    "  (let r0 (range 0 64 loop))\n"
    "  (let v (load (index x r0)))\n"
    "  (let c (< v 0.5))\n"
    "  (sink\n"
    "    (store (index h r0) (+ (* (cast float16 v) (load (index h r0))) (const 1.5 float16)) r0)\n"
    "    (store (index bf r0) (+ (cast bfloat16 (/ v 3.0)) (load (index bf r0))) r0)\n"
    "    (store (index m r0) (^ c (load (index m r0))) r0)\n"
    "    (store (index u8 r0) (+ (load (index u8 r0)) (cast uint8 v)) r0)\n"
    "    (store (index s8 r0) (where (< (load (index s8 r0)) (const -2 int8)) (const -100 int8) (const 7 int8)) r0)\n"
    "    (store (index d r0) (+ (sqrt (cast float64 v)) (exp2 (load (index d r0)))) r0)\n"
    "    (store (index q r0) (<< (cast int64 v) (const 3 int64)) r0)\n"
    "    (store (index w r0) (+ (>> (bitcast int32 v) (const 1 int32))\n"
    "                           (+ (cast int32 (where c (trunc v) (recip v)))\n"
    "                              (+ (cast int32 (load (index m r0))) (// (cast int32 (cast float16 v)) (const 7 int32)))))\n"
    "           r0)))\n";

static void test_zoo(void) {
  const char *targets[] = {"ptx:sm_80", "ptx:sm_90"};
  for (int ti = 0; ti < 2; ti++) {
    uop_ctx *ctx = NULL;
    const uop *sink = NULL;
    cc_target t;
    cc_program *p = build(ZOO, targets[ti], 0, &ctx, &sink, &t);
    if (p) {
      const char *s = p->source;
      /* hand-derived spellings: 1.5 as float16 is 0x3E00; 0.5f is 0x3F000000; 3.0f is 0x40400000 */
      CHECK(strstr(s, "0x3E00") != NULL);
      CHECK(strstr(s, "0f3F000000") != NULL);
      CHECK(strstr(s, "0f40400000") != NULL);
      CHECK(strstr(s, "cvt.rn.f16.f32") != NULL);    /* float32 -> float16 rounds */
      CHECK(strstr(s, "cvt.rn.bf16.f32") != NULL);
      CHECK(strstr(s, "cvt.f32.f16") != NULL);       /* float16 -> float32 is exact: no rounding modifier */
      CHECK(strstr(s, "cvt.f64.f32") != NULL);
      CHECK(strstr(s, "cvt.rzi.s64.f32") != NULL);   /* float -> int truncates toward zero */
      CHECK(strstr(s, "cvt.rzi.u8.f32") != NULL);    /* float -> uint8 saturates to 0..255 (cvt .u8 destination) */
      CHECK(strstr(s, "cvt.u16.u8") != NULL);        /* uint8 re-wrapped after the add */
      /* int8 constants are sign-extended to their 16-bit register: -2 is 0xFFFE (0xFE would compare as 254) */
      CHECK(strstr(s, ", 0xFFFE;") != NULL);
      CHECK(strstr(s, ", 0xFF9C;") != NULL);
      CHECK(strstr(s, "setp.lt.s16") != NULL);
      CHECK(strstr(s, "ld.global.s8") != NULL);
      CHECK(strstr(s, "ld.global.u8") != NULL);      /* bool and uint8 are bytes in memory */
      CHECK(strstr(s, "st.global.u8") != NULL);
      CHECK(strstr(s, "xor.pred") != NULL);
      CHECK(strstr(s, "setp.lt.f32") != NULL);
      CHECK(strstr(s, "selp.") != NULL);
      CHECK(strstr(s, "sqrt.rn.f64") != NULL);
      CHECK(strstr(s, "rcp.rn.f32") != NULL);
      CHECK(strstr(s, "cvt.rzi.f32.f32") != NULL);   /* trunc */
      CHECK(strstr(s, "shl.b64") != NULL);
      CHECK(strstr(s, "shr.s32") != NULL);
      CHECK(strstr(s, "div.s32") != NULL);
      CHECK(strstr(s, "ex2.approx") == NULL);        /* float64 exp2 is decomposed on ptx targets */
      check_loops(s, "zoo");
      check_assembles(&t, p, "zoo");
    }
    cc_program_free(p);
    uop_ctx_destroy(ctx);
  }
}

/* A loop that may run zero times (n in 0..100) and a gated load with an alternative value. */
static const char ZERO_TRIP[] =
    "(kernel zero_trip\n"
    "  (let out (buf 0 float32 1)) (let x (buf 1 float32 100))\n"
    "  (let n (var n 0 100 int32))\n"
    "  (let r (range 1000 n reduce))\n"
    "  (sink (store (index out 0) (reduce add (load (index x r (< r (const 50 int32))) -1.0) r))))\n";

static void test_zero_trip(void) {
  uop_ctx *ctx = NULL;
  const uop *sink = NULL;
  cc_target t;
  cc_program *p = build(ZERO_TRIP, "ptx:sm_90", 0, &ctx, &sink, &t);
  if (p) {
    const char *s = p->source;
    CHECK_EQ_INT(count_str(s, ".param .s32 var_n"), 1);
    CHECK_EQ_INT(count_str(s, "ld.param.s32"), 1);
    CHECK_EQ_INT(count_str(s, "zero-trip guard"), 1);
    CHECK(strstr(s, "setp.ge.s32") != NULL);      /* the guard: counter (0) >= n skips the body */
    check_loops(s, "zero_trip");
    /* the gated load: predicated ld, then the alternative (-1.0f = 0xBF800000) where the gate is off */
    CHECK(strstr(s, "ld.global.f32") && strstr(s, "@%p"));
    CHECK(strstr(s, "0fBF800000") != NULL);
    CHECK(strstr(s, "@!%p") != NULL);
    CHECK_EQ_INT(count_str(s, ".maxntid 1, 1, 1"), 1);
    check_assembles(&t, p, "zero_trip");
  }
  cc_program_free(p);
  uop_ctx_destroy(ctx);
}

/* A target that lists EXP2/LOG2/SIN renders the .approx instructions for float32. */
static void test_approx(void) {
  const char text[] =
      "(kernel approx (let out (buf 0 float32 32)) (let x (buf 1 float32 32)) (let r0 (range 0 32 loop))\n"
      "  (let v (load (index x r0)))\n"
      "  (sink (store (index out r0) (+ (exp2 v) (+ (log2 v) (sin v))) r0)))\n";
  uop_ctx *ctx = NULL;
  const uop *sink = NULL;
  cc_target t;
  uop_opset ops = UOP_OPBIT(UOP_EXP2) | UOP_OPBIT(UOP_LOG2) | UOP_OPBIT(UOP_SIN);
  cc_program *p = build(text, "ptx:sm_80", ops, &ctx, &sink, &t);
  if (p) {
    CHECK(strstr(p->source, "ex2.approx.f32") != NULL);
    CHECK(strstr(p->source, "lg2.approx.f32") != NULL);
    CHECK(strstr(p->source, "sin.approx.f32") != NULL);
    check_assembles(&t, p, "approx");
  }
  cc_program_free(p);
  uop_ctx_destroy(ctx);
  /* the plain ptx target decomposes them: no .approx */
  p = build(text, "ptx:sm_80", 0, &ctx, &sink, &t);
  if (p) CHECK(strstr(p->source, ".approx") == NULL);
  cc_program_free(p);
  uop_ctx_destroy(ctx);
}

/* The renderer on a hand-built linear program with what the pipeline does not produce yet: a shared buffer
 * (DEFINE_LOCAL) written, a barrier, read back reversed, an IF block, and an int64 loop counter. */
static void test_shared_if_loop64(void) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  if (!ctx) return;
  uop_dtype f32 = uop_dt(UOP_FLOAT32), i32 = uop_dt(UOP_INT32), i64 = uop_dt(UOP_INT64), v = uop_dt(UOP_VOID);
  uop_arg none = uop_arg_none();
  const uop *g = uop_new(ctx, UOP_DEFINE_GLOBAL, uop_dt_ptr(f32, UOP_AS_GLOBAL, 64), NULL, 0, uop_arg_int(0));
  const uop *loc = uop_new(ctx, UOP_DEFINE_LOCAL, uop_dt_ptr(f32, UOP_AS_LOCAL, 64), NULL, 0, uop_arg_int(0));
  const uop *c64 = uop_const_int(ctx, i32, 64);
  const uop *lid = uop_new(ctx, UOP_SPECIAL, i32, &c64, 1, uop_arg_str(ctx, "lidx0"));
  const uop *li = uop_new(ctx, UOP_INDEX_OP, loc->dtype, (const uop *[]){loc, lid}, 2, none);
  const uop *val = uop_cast(ctx, f32, lid);
  const uop *st1 = uop_new(ctx, UOP_STORE, v, (const uop *[]){li, val}, 2, none);
  const uop *bar = uop_new(ctx, UOP_BARRIER, v, &st1, 1, none);
  const uop *rev = uop_alu2(ctx, UOP_SUB, uop_const_int(ctx, i32, 63), lid);
  const uop *li2 = uop_new(ctx, UOP_INDEX_OP, loc->dtype, (const uop *[]){loc, rev}, 2, none);
  const uop *ld = uop_new(ctx, UOP_LOAD, f32, (const uop *[]){li2, bar}, 2, none);
  const uop *cond = uop_alu2(ctx, UOP_CMPLT, lid, uop_const_int(ctx, i32, 32));
  const uop *iff = uop_new(ctx, UOP_IF, v, &cond, 1, none);
  const uop *gi = uop_new(ctx, UOP_INDEX_OP, g->dtype, (const uop *[]){g, lid}, 2, none);
  const uop *st2 = uop_new(ctx, UOP_STORE, v, (const uop *[]){gi, ld}, 2, none);
  const uop *endif = uop_new(ctx, UOP_ENDIF, v, &iff, 1, none);
  const uop *rng = uop_new(ctx, UOP_RANGE, i64, (const uop *[]){uop_const_int(ctx, i64, 4)}, 1,
                           uop_arg_range(0, UOP_AXIS_LOOP));
  const uop *gi3 = uop_new(ctx, UOP_INDEX_OP, g->dtype, (const uop *[]){g, rng}, 2, none);
  const uop *st3 = uop_new(ctx, UOP_STORE, v, (const uop *[]){gi3, uop_const_float(ctx, f32, 1.0), rng}, 3, none);
  const uop *endr = uop_new(ctx, UOP_ENDRANGE, v, &rng, 1, none);
  const uop *list[] = {g, loc, lid, li, val, st1, bar, rev, li2, ld, cond, iff, gi, st2, endif, rng, gi3, st3, endr};
  cc_target t;
  CHECK_OK(cc_target_get("ptx:sm_90", 0, &t));
  char *src = NULL;
  CHECK_OK(cc_render_ptx(&t, "shared_k", list, sizeof list / sizeof list[0], &src));
  if (src) {
    CHECK(strstr(src, ".shared .align 16 .b8 local0[256];") != NULL);
    CHECK(strstr(src, "st.shared.f32") != NULL);
    CHECK(strstr(src, "ld.shared.f32") != NULL);
    CHECK(strstr(src, "bar.sync 0;") != NULL);
    CHECK(strstr(src, "bar.sync") < strstr(src, "ld.shared")); /* the read waits for every write */
    CHECK(strstr(src, "mov.u32 %r0, %tid.x;") != NULL);
    CHECK(strstr(src, ".maxntid 64, 1, 1") != NULL);
    CHECK(strstr(src, " bra ENDIF_0;") != NULL && strstr(src, "\nENDIF_0:\n") != NULL);
    CHECK(strstr(src, "setp.ge.s64") != NULL);      /* the int64 loop counts in 64 bits */
    CHECK(strstr(src, "add.s64 %rd") != NULL);
    CHECK(strstr(src, "0f3F800000") != NULL);       /* 1.0f */
    check_loops(src, "shared_k");
    cc_program p = {.source = src, .name = (char *)"shared_k"};
    check_assembles(&t, &p, "shared_k");
    free(p.binary);
  }
  free(src);
  uop_ctx_destroy(ctx);
}

/* cc_compile_binary for ptx goes through the cache: the second build of the same PTX is a hit with the same cubin;
 * a bad ptxas path is a clear error. */
static void test_cache_and_errors(void) {
  char dir[] = "/tmp/hcq-ptx-cache-XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  setenv("XDG_CACHE_HOME", dir, 1);
  unsetenv("HCQ_CACHE");
  uop_ctx *ctx = NULL;
  const uop *sink = NULL;
  cc_target t;
  cc_program *p = build(ZERO_TRIP, "ptx:sm_80", 0, &ctx, &sink, &t);
  if (p && have_ptxas) {
    cc_cache_stats s0 = cc_cache_get_stats();
    CHECK_OK(cc_compile_binary(&t, p));
    uint8_t *first = p->binary ? malloc(p->binary_size_B) : NULL;
    size_t first_size = p->binary_size_B;
    if (first) memcpy(first, p->binary, first_size);
    CHECK_OK(cc_compile_binary(&t, p));
    cc_cache_stats s1 = cc_cache_get_stats();
    CHECK_EQ_INT(s1.misses - s0.misses, 1);
    CHECK_EQ_INT(s1.hits - s0.hits, 1);
    CHECK(first && p->binary_size_B == first_size && memcmp(first, p->binary, first_size) == 0);
    CHECK(p->external_ms == 0); /* served from the cache */
    free(first);
  }
  if (p) {
    setenv("HCQ_PTXAS", "/nonexistent/ptxas", 1);
    CHECK_ERR(cc_compile_binary(&t, p), HCQ_CODE_UNSUPPORTED, "/nonexistent/ptxas");
    unsetenv("HCQ_PTXAS");
  }
  if (p && have_ptxas) { /* ptxas rejects broken PTX: the error carries its message */
    setenv("HCQ_CACHE", "0", 1);
    char *bad = strdup(p->source);
    char *entry = bad ? strstr(bad, "ret;") : NULL;
    if (entry) memcpy(entry, "rxt;", 4);
    free(p->source);
    p->source = bad;
    CHECK_ERR(cc_compile_binary(&t, p), HCQ_CODE_INVALID, "ptxas failed");
  }
  cc_program_free(p);
  uop_ctx_destroy(ctx);
  setenv("HCQ_CACHE", "0", 1);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  CHECK(system(cmd) == 0);
}

static void test_isa_versions(void) {
  /* first PTX ISA version per target (PTX ISA release notes; LLVM NVPTX.td agrees), floored at 7.5 */
  CHECK_EQ_STR(cc_ptx_isa_version("sm_70"), "7.5");
  CHECK_EQ_STR(cc_ptx_isa_version("sm_80"), "7.5");
  CHECK_EQ_STR(cc_ptx_isa_version("sm_86"), "7.5");
  CHECK_EQ_STR(cc_ptx_isa_version("sm_89"), "7.8");
  CHECK_EQ_STR(cc_ptx_isa_version("sm_90"), "7.8");
  CHECK_EQ_STR(cc_ptx_isa_version("sm_100"), "8.6"); /* a string comparison would say 7.5 */
  CHECK_EQ_STR(cc_ptx_isa_version("sm_120"), "8.7");
  CHECK(cc_ptx_isa_version("sm_91") == NULL);
  CHECK(cc_ptx_isa_version("sm_") == NULL);
  CHECK(cc_ptx_isa_version("sm_9x") == NULL);
  CHECK(cc_ptx_isa_version("gfx90a") == NULL);
  CHECK(cc_ptx_isa_version(NULL) == NULL);
  /* the renderer refuses an unknown arch instead of guessing */
  cc_target t;
  CHECK_OK(cc_target_get("ptx:sm_90", 0, &t));
  snprintf(t.arch, sizeof t.arch, "sm_91");
  char *src = NULL;
  CHECK_ERR(cc_render_ptx(&t, "k", NULL, 0, &src), HCQ_CODE_UNSUPPORTED, "sm_91");
  CHECK(src == NULL);
}

int main(void) {
  char ptxas[1024];
  hcq_status st = cc_ptx_ptxas(ptxas, sizeof ptxas);
  have_ptxas = st == HCQ_OK;
  if (st) {
    fprintf(stderr, "note: %s\n", hcq_status_message(st));
    hcq_status_free(st);
  }
  setenv("HCQ_CACHE", "0", 1); /* always run ptxas: the test is about what it accepts */
  test_isa_versions();
  test_examples();
  test_zoo();
  test_zero_trip();
  test_approx();
  test_shared_if_loop64();
  test_cache_and_errors();
  int rc = testing_summary("render_ptx");
  if (rc == 0 && !have_ptxas) {
    fprintf(stderr, "\n*** SKIPPED: ptxas not found: the PTX was checked structurally but not assembled ***\n\n");
    return 77;
  }
  return rc;
}
