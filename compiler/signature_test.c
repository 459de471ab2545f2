/* Kernel signatures are stable, and their int32 variables honest: every buffer of the input kernel stays a parameter, in slot order, even when the
 * simplifier removes its only load ((load a) * 0 on ints), so callers can pass buffers by slot. */
#include "compiler/cc_test_util.h"
#include "base/testing.h"

/* out[i] = a[i]*0 + b[i]: slot 1 is dead after simplification */
static const char *KERNEL =
    "(kernel dead1 (let o (buf 0 int32 16)) (let a (buf 1 int32 16)) (let b (buf 2 int32 16)) (let r0 (range 0 16 loop))"
    " (sink (store (index o r0) (+ (* (load (index a r0)) (const 0 int32)) (load (index b r0))) r0)))";

static void check_spec(const cc_program *p) {
  CHECK_EQ_INT(hcq_program_nbufs(&p->desc), 3);
  if (hcq_program_nbufs(&p->desc) != 3) return;
  for (int i = 0; i < 3; i++) CHECK_EQ_INT(p->desc.params[i].slot, i);
  CHECK_EQ_INT(p->desc.params[0].access, HCQ_ACCESS_WRITE);
  CHECK_EQ_INT(p->desc.params[1].access, 0); /* kept, used by nothing */
  CHECK_EQ_INT(p->desc.params[2].access, HCQ_ACCESS_READ);
  CHECK(strcmp(p->desc.params[1].dtype, "int32") == 0 && p->desc.params[1].nelems == 16);
}

/* The three parameter names appear in this order in the source. */
static void check_order(const char *src, const char *p0, const char *p1, const char *p2) {
  const char *a = strstr(src, p0), *b = strstr(src, p1), *c = strstr(src, p2);
  CHECK(a && b && c && a < b && b < c);
}

int main(void) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *sink = NULL;
  CHECK_OK(cc_kernel_parse(ctx, KERNEL, strlen(KERNEL), "<test>", &sink));
  static const char *targets[] = {"c", "llvm-cpu", "ptx:sm_90", "amdgpu:gfx1100"};
  for (size_t i = 0; sink && i < sizeof targets / sizeof targets[0]; i++) {
    cc_target t;
    CHECK_OK(cc_target_get(targets[i], 1, &t));
    for (int noopt = 0; noopt < 2; noopt++) {
      cc_program *p = NULL;
      CHECK_OK(cc_compile_source(ctx, sink, &t, &(cc_options){.noopt = noopt}, &p));
      if (!p) continue;
      /* the simplifier did remove the load of slot 1 */
      size_t loads = 0;
      for (size_t k = 0; k < p->nlinear; k++) loads += p->linear[k]->op == UOP_LOAD;
      CHECK(loads >= 1 && loads < 32);
      check_spec(p);
      if (t.kind == CC_TARGET_C) check_order(p->source, "data0_16,", "data1_16,", "data2_16,");
      else if (t.kind == CC_TARGET_PTX) check_order(p->source, ".param .u64 data0", ".param .u64 data1", ".param .u64 data2");
      else check_order(p->source, "%data0,", "%data1,", "%data2");
      cc_program_free(p);
    }
  }
  /* and the C kernel runs with its buffers passed by slot */
  cc_target c;
  CHECK_OK(cc_target_get("c", 1, &c));
  cc_program *p = NULL;
  tu_kernel k;
  hcq_status st = tu_build(ctx, KERNEL, &c, &p, &k);
  if (st && hcq_status_code(st) == HCQ_CODE_UNSUPPORTED) {
    hcq_status_free(st);
  } else {
    CHECK_OK(st);
    if (!st) {
      int32_t o[16] = {0}, a[16], b[16];
      for (int i = 0; i < 16; i++) a[i] = 1000 + i, b[i] = 7 * i - 3;
      uintptr_t args[4] = {(uintptr_t)o, (uintptr_t)a, (uintptr_t)b, 0};
      tu_call(&k, args, 4);
      int bad = 0;
      for (int i = 0; i < 16; i++) bad += o[i] != 7 * i - 3;
      CHECK_EQ_INT(bad, 0);
      tu_unload(&k);
    }
  }
  cc_program_free(p);

  /* variables are signed 32-bit arguments in every renderer: a declared range beyond int32 is a compile error
   * naming the variable (index vars fail in index lowering, other dtypes when the spec is filled) */
  static const char *wide[] = {
      "(kernel v (let o (buf 0 int64 16)) (let n (var n 0 10000000000 int64)) (let r0 (range 0 16 loop))"
      " (sink (store (index o r0) (+ n (const 1 int64)) r0)))",
      "(kernel v (let o (buf 0 float32 16)) (let n (var n -3000000000 5 index)) (let r0 (range 0 16 loop))"
      " (sink (store (index o r0) (cast float32 n) r0)))",
      "(kernel v (let o (buf 0 uint32 16)) (let n (var n 0 4000000000 uint32)) (let r0 (range 0 16 loop))"
      " (sink (store (index o r0) n r0)))",
  };
  static const char *want[] = {"variable n is declared 0..10000000000 (int64)", "variable n is declared -3000000000..5",
                               "variable n is declared 0..4000000000 (uint32)"};
  for (int i = 0; i < 3; i++) {
    const uop *k = NULL;
    CHECK_OK(cc_kernel_parse(ctx, wide[i], strlen(wide[i]), "<test>", &k));
    if (!k) continue;
    for (int noopt = 0; noopt < 2; noopt++) {
      CHECK_ERR(cc_compile_source(ctx, k, &c, &(cc_options){.noopt = noopt}, &p), HCQ_CODE_UNSUPPORTED, want[i]);
      cc_program_free(p);
      p = NULL;
    }
  }
  /* the int32 edges compile */
  const char *edge = "(kernel v (let o (buf 0 int32 16)) (let n (var n -2147483648 2147483647 int32)) (let r0 (range 0 16 loop))"
                     " (sink (store (index o r0) n r0)))";
  const uop *ek = NULL;
  CHECK_OK(cc_kernel_parse(ctx, edge, strlen(edge), "<test>", &ek));
  if (ek) {
    CHECK_OK(cc_compile_source(ctx, ek, &c, &(cc_options){.noopt = true}, &p));
    if (p) CHECK(hcq_program_nvars(&p->desc) == 1 && strcmp(hcq_program_var(&p->desc, 0)->name, "n") == 0);
    cc_program_free(p);
  }
  uop_ctx_destroy(ctx);
  return testing_summary("signature_test");
}
