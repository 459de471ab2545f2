/* User-chosen names that reach generated source: a kernel named like a C keyword, a PTX predefined identifier, one
 * of our own file-scope names (vector typedefs, hcq_ helpers, shared-memory globals) or a reserved C name, and
 * variables named like our own locals and parameters (core_id, ridx0, data0_64, alu0, ...), compile on every target
 * whose tools are installed (c for every name, llvm-cpu, ptx, amdgpu in turn), and the c kernel runs equal to the reference interpreter
 * (a variable shadowed by a loop counter would not). The program keeps the user's name as its name and inside its
 * symbol. */
#include "compiler/opt_test_util.h"
#include "base/testing.h"

static const char *const KERNEL_NAMES[] = {
    "int", "float", "void", "return", "for", "while", "if", "else", "struct", "union", "typedef", "static", "const",
    "volatile", "restrict", "inline", "auto", "register", "extern", "signed", "unsigned", "char", "short", "long",
    "double", "sizeof", "switch", "case", "default", "break", "continue", "goto", "do", "enum", "asm", "typeof",
    "bool", "true", "false", "main", "WARP_SZ", "float4", "float4_u", "int8", "half2", "local0", "hcq_nt_f4", "HCQ_NT1",
    "__x", "_X", "kernel"};
static const char *const VAR_NAMES[] = {"n", "int", "core_id", "ridx0", "data0_64", "alu0", "val0", "acc0", "cast0",
                                        "float4", "main"};

static bool have(const cc_target *t, bool cc, bool clang, bool lld, bool ptxas) {
  if (t->kind == CC_TARGET_C) return cc;
  if (t->kind == CC_TARGET_PTX) return ptxas;
  return clang && (strncmp(t->name, "amdgpu", 6) != 0 || lld);
}

int main(void) {
  char dir[] = "/tmp/hcq-mangle-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  bool cc = tu_have(cc_toolchain_cc()), clang = tu_have("clang-19"), lld = tu_have("ld.lld-19");
  const char *px = getenv("HCQ_PTXAS");
  bool ptxas = tu_have(px && px[0] ? px : "ptxas") || tu_have("/usr/local/cuda/bin/ptxas");
  static const char *const TARGETS[] = {"c", "llvm-cpu", "ptx:sm_80", "amdgpu:gfx1100"};
  size_t nk = sizeof KERNEL_NAMES / sizeof KERNEL_NAMES[0], nv = sizeof VAR_NAMES / sizeof VAR_NAMES[0];
  int built = 0, ran = 0;
  for (size_t i = 0; i < nk; i++) {
    const char *var = VAR_NAMES[i % nv];
    char text[600];
    /* a loop counter and the variable in one expression: shadowing would change the value */
    snprintf(text, sizeof text,
             "(kernel %s (let %s (var %s 1 16 index)) (let c (buf 0 float32 64)) (let r (range 0 (* %s 4)))\n"
             " (sink (store (index c r) (+ (load (index c r)) (cast float32 (+ (* r 100) %s))) r)))",
             KERNEL_NAMES[i], var, var, var, var);
    uop_ctx *ctx = NULL;
    CHECK_OK(uop_ctx_create(&ctx));
    const uop *k = NULL;
    CHECK_OK(cc_kernel_parse(ctx, text, strlen(text), KERNEL_NAMES[i], &k));
    for (size_t ti = 0; k && ti < sizeof TARGETS / sizeof TARGETS[0]; ti++) {
      cc_target t;
      CHECK_OK(cc_target_get(TARGETS[ti], 2, &t));
      cc_program *p = NULL;
      hcq_status st = cc_compile_source(ctx, k, &t, NULL, &p);
      CHECK_OK(st);
      if (st) continue;
      CHECK_EQ_STR(p->name, KERNEL_NAMES[i]); /* messages name the kernel as written */
      CHECK(strstr(p->symbol, KERNEL_NAMES[i]) != NULL);
      /* every name through the C compiler, the other targets in turn (the external tools are the slow part) */
      if (have(&t, cc, clang, lld, ptxas) && (ti == 0 || ti == 1 + i % 3)) {
        st = cc_compile_binary(&t, p);
        if (st) fprintf(stderr, "kernel %s, var %s, target %s:\n%s\n", KERNEL_NAMES[i], var, t.name, p->source);
        CHECK_OK(st);
        built += !st;
      }
      cc_program_free(p);
    }
    if (k && cc && i % 4 == 0) {
      uop_var_val vals[1] = {{var, 13}};
      cc_target c;
      CHECK_OK(cc_target_get("c", 2, &c));
      size_t bad = 0;
      CHECK_OK(otu_native_same(ctx, k, &c, NULL, vals, 1, i, &bad, NULL));
      CHECK_EQ_INT(bad, 0);
      ran++;
    }
    uop_ctx_destroy(ctx);
  }
  /* the shared-memory globals of the GPU targets: a grouped reduce in a kernel named like one */
  const char *grp = "(kernel local0 (let o (buf 0 float32 1)) (let a (buf 1 float32 1024)) (let r (range 1000 1024 "
                    "reduce))\n (sink (store (index o 0) (reduce add (load (index a r)) r))))";
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *k = NULL;
  CHECK_OK(cc_kernel_parse(ctx, grp, strlen(grp), "local0", &k));
  cc_opt g = {.op = CC_OPT_GROUP, .axis = 0, .amount = 16};
  cc_options o = {.opts = &g, .nopts = 1};
  for (int ti = 2; k && ti < 4; ti++) {
    cc_target t;
    CHECK_OK(cc_target_get(TARGETS[ti], 0, &t));
    cc_program *p = NULL;
    hcq_status st = cc_compile_source(ctx, k, &t, &o, &p);
    CHECK_OK(st);
    if (!st && have(&t, cc, clang, lld, ptxas)) {
      st = cc_compile_binary(&t, p);
      if (st) fprintf(stderr, "%s\n", p->source);
      CHECK_OK(st);
      built += !st;
    }
    cc_program_free(p);
  }
  uop_ctx_destroy(ctx);
  printf("mangle: %zu kernel names, %d binaries built, %d run natively\n", nk, built, ran);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
  return testing_summary("mangle");
}
