/* LLVM IR renderer and GPU dims: the IR text for hand-checked cases (signatures, literals, intrinsics, launch
 * sizes), a dtype-mixing kernel run on llvm-cpu through the CPU ELF loader against the reference interpreter, and
 * the missing-tool errors. The IR-text checks need no tools; the rest print SKIPPED without clang-19. */
#include <math.h>

#include "compiler/cc_test_util.h"
#include "compiler/interp.h"
#include "cpu/cpu_elf.h"
#include "base/testing.h"

static const char *ADD4D =
    "(kernel add4d (let o (buf 0 float32 120)) (let x (buf 1 float32 120))\n"
    " (let a (range 0 2 loop)) (let b (range 1 3 loop)) (let c (range 2 4 loop)) (let d (range 3 5 loop))\n"
    " (let i (+ (+ (+ (* a 60) (* b 20)) (* c 5)) d)) (let t (+ (+ (+ (* d 24) (* c 6)) (* b 2)) a))\n"
    " (sink (store (index o t) (+ (load (index x i)) 1.0) a b c d)))"; /* a transpose: the ranges do not merge */

static const char *CASTS =
    "(kernel casts (let o0 (buf 0 int8 64)) (let o1 (buf 1 uint8 64)) (let o2 (buf 2 float16 64))\n"
    " (let o3 (buf 3 float64 64)) (let o4 (buf 4 int64 64)) (let o5 (buf 5 uint32 64)) (let o6 (buf 6 bool 64))\n"
    " (let x (buf 7 float32 64)) (let k (buf 8 int32 64)) (let r (range 0 64 loop))\n"
    " (let xv (load (index x r))) (let kv (load (index k r)))\n"
    " (sink (store (index o0 r) (cast int8 (// (* kv (const 37 int32)) (const 3 int32))) r)\n"
    "  (store (index o1 r) (+ (cast uint8 kv) (const 200 uint8)) r)\n"
    "  (store (index o2 r) (* (cast float16 xv) (const 1.5 float16)) r)\n"
    "  (store (index o3 r) (exp2 (cast float64 xv)) r)\n"
    "  (store (index o4 r) (>> (* (cast int64 kv) (const 5000000000 int64)) (const 3 int64)) r)\n"
    "  (store (index o5 r) (% (bitcast uint32 xv) (const 4294967295 uint32)) r)\n"
    "  (store (index o6 r) (< xv (neg (sqrt (const 0.1 float32)))) r)))";

static const char *EXP64 =
    "(kernel e64 (let o (buf 0 float64 16)) (let p (buf 1 float32 16)) (let r (range 0 16 loop))\n"
    " (sink (store (index o r) (* (exp2 (cast float64 (load (index p r)))) (sin (const 2.0 float64))) r)\n"
    "  (store (index p r) (log2 (load (index p r))) r)))";

/* Compile kernel text for a target (source only unless `binary`). */
static cc_program *compile(uop_ctx *ctx, const char *text, const char *target, const char *opts, bool binary) {
  cc_target t;
  CHECK_OK(cc_target_get(target, 4, &t));
  const uop *sink = NULL;
  cc_program *p = NULL;
  cc_opt *ov = NULL;
  size_t no = 0;
  if (opts) CHECK_OK(cc_opts_parse(opts, &ov, &no));
  hcq_status st = cc_kernel_parse(ctx, text, strlen(text), "<test>", &sink);
  if (!st) st = cc_compile_source(ctx, sink, &t, &(cc_options){.noopt = !opts, .opts = ov, .nopts = no}, &p);
  if (!st && binary) st = cc_compile_binary(&t, p);
  free(ov);
  if (st) {
    fprintf(stderr, "%s: %s\n", target, hcq_status_message(st));
    hcq_status_free(st);
    CHECK(!"compile");
    cc_program_free(p);
    return NULL;
  }
  return p;
}

static int64_t size_of(const char *expr) { return cc_launch_const(expr); }

static void test_text(void) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  /* signatures: the c ABI on the CPU, kernargs only on AMDGPU */
  char *saxpy = NULL;
  size_t len = 0;
  FILE *f = fopen("examples/saxpy.uop", "r");
  CHECK(f != NULL);
  if (f) {
    saxpy = calloc(1, 1 << 16);
    len = fread(saxpy, 1, (1 << 16) - 1, f);
    fclose(f);
  }
  CHECK(len > 0);
  cc_program *p = compile(ctx, saxpy, "llvm-cpu", NULL, false);
  if (p) CHECK(strstr(p->source, "define void @saxpy(ptr noalias %data0, ptr noalias %data1, i32 %var.n, i32 %core_id)"));
  cc_program_free(p);
  p = compile(ctx, saxpy, "amdgpu:gfx1100", NULL, false);
  if (p) {
    CHECK(strstr(p->source, "target triple = \"amdgcn-amd-amdhsa\""));
    CHECK(strstr(p->source, "define amdgpu_kernel void @saxpy(ptr addrspace(1) noalias %data0, "
                            "ptr addrspace(1) noalias %data1, i32 %var.n) #0"));
    CHECK(strstr(p->source, "@llvm.amdgcn.workgroup.id.x()"));
    CHECK(strstr(p->source, "\"amdgpu-flat-work-group-size\"=\"1,1\""));
    CHECK(!strstr(p->source, "core_id"));
  }
  cc_program_free(p);
  free(saxpy);

  /* literals: 0.1f is 0x3DCCCCCD = the double 0x3FB99999A0000000; uint32 4294967295 is i32 -1; 1.5 half = 0x3E00;
   * 5000000000 stays a 64-bit literal */
  p = compile(ctx, CASTS, "llvm-cpu", NULL, false);
  if (p) {
    CHECK(strstr(p->source, "float 0x3FB99999A0000000"));
    CHECK(strstr(p->source, "i32 %") && strstr(p->source, ", -1\n"));
    CHECK(strstr(p->source, "0xH3E00"));
    CHECK(strstr(p->source, "5000000000"));
    CHECK(strstr(p->source, "urem i32"));
    CHECK(strstr(p->source, "ashr i64"));
    CHECK(strstr(p->source, "call float @llvm.sqrt.f32(") || !strstr(p->source, "sqrt")); /* may fold */
    CHECK(!strstr(p->source, "llvm.exp2")); /* the CPU decomposes exp2 (no libm) */
  }
  cc_program_free(p);

  /* AMDGPU: exp2/log2/sin natively for float32, decomposed for float64 (llc-19 cannot lower those) */
  p = compile(ctx, EXP64, "amdgpu:gfx90a", NULL, false);
  if (p) {
    CHECK(strstr(p->source, "@llvm.log2.f32("));
    CHECK(!strstr(p->source, "@llvm.exp2.f64(") && !strstr(p->source, "@llvm.log2.f64(") &&
          !strstr(p->source, "@llvm.sin.f64(")); /* (casts use @llvm.fptosi.sat.i32.f64) */
  }
  cc_program_free(p);

  /* gpudims: 4 global dims (2,3,4,5) -> x = 5 (innermost), y = 4, z = 3*2 merged */
  p = compile(ctx, ADD4D, "amdgpu:gfx1100", NULL, false);
  if (p) {
    CHECK_EQ_INT(size_of(p->desc.global[0]), 5);
    CHECK_EQ_INT(size_of(p->desc.global[1]), 4);
    CHECK_EQ_INT(size_of(p->desc.global[2]), 6);
    CHECK(strstr(p->source, "workgroup.id.z"));
  }
  cc_program_free(p);
  /* a dim over 2^31-1 is split: 3*2^30 = 1610612736 x 2 */
  f = fopen("examples/big_int64.uop", "r");
  char big[4096] = {0};
  if (f) {
    CHECK(fread(big, 1, sizeof big - 1, f) > 0);
    fclose(f);
  }
  p = compile(ctx, big, "amdgpu:gfx942", NULL, false);
  if (p) {
    CHECK_EQ_INT(size_of(p->desc.global[0]), 1610612736);
    CHECK_EQ_INT(size_of(p->desc.global[1]), 2);
    CHECK_EQ_INT(size_of(p->desc.global[2]), 1);
  }
  cc_program_free(p);
  /* LOCAL opt: lidx0 of 16, the work-group size attribute follows */
  p = compile(ctx, ADD4D, "amdgpu:gfx1100", "LOCAL:3:5", false);
  if (p) {
    CHECK(strstr(p->source, "@llvm.amdgcn.workitem.id.x()"));
    CHECK(strstr(p->source, "\"amdgpu-flat-work-group-size\"=\"1,5\""));
    CHECK_EQ_INT(size_of(p->desc.local[0]), 5);
  }
  cc_program_free(p);
  uop_ctx_destroy(ctx);
}

static double val(const cc_kbuf *b, int64_t i) {
  const void *d = b->data;
  switch (b->dtype.scalar) {
    case UOP_FLOAT16: return cc_f16_to_f32(((const uint16_t *)d)[i]);
    case UOP_FLOAT32: return ((const float *)d)[i];
    case UOP_FLOAT64: return ((const double *)d)[i];
    case UOP_INT8: return ((const int8_t *)d)[i];
    case UOP_UINT8: case UOP_BOOL: return ((const uint8_t *)d)[i];
    case UOP_INT32: return ((const int32_t *)d)[i];
    case UOP_UINT32: return ((const uint32_t *)d)[i];
    case UOP_INT64: return (double)((const int64_t *)d)[i];
    default: return NAN;
  }
}

/* CASTS on llvm-cpu, loaded with cpu_program_load, against the interpreter. */
static void test_run_casts(void) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  cc_program *p = compile(ctx, CASTS, "llvm-cpu", NULL, true);
  const uop *sink = NULL;
  CHECK_OK(cc_kernel_parse(ctx, CASTS, strlen(CASTS), "<test>", &sink));
  cc_kbuf *ref = NULL, *got = NULL;
  size_t nref = 0, ngot = 0;
  cpu_program *cp = NULL;
  if (!p || !sink) goto done;
  CHECK_OK(cc_kernel_buffers(sink, &ref, &nref));
  CHECK_OK(cc_kernel_buffers(sink, &got, &ngot));
  CHECK_OK(cc_kbufs_alloc_fill(ref, nref, 11));
  CHECK_OK(cc_kbufs_alloc_fill(got, ngot, 11));
  void *bufs[16] = {0};
  size_t sizes[16] = {0};
  for (size_t i = 0; i < nref; i++) {
    bufs[ref[i].slot] = ref[i].data;
    sizes[ref[i].slot] = ref[i].size_B;
  }
  CHECK_OK(cc_interp_run(sink, bufs, sizes, 16, NULL, 0));
  void *fn = NULL;
  CHECK_OK(cpu_program_load(p->binary, p->binary_size_B, &cp));
  if (cp) CHECK_OK(cpu_program_symbol(cp, "casts", &fn));
  if (!fn) goto done;
  typedef void (*k10)(void *, void *, void *, void *, void *, void *, void *, void *, void *, int);
  ((k10)fn)(got[0].data, got[1].data, got[2].data, got[3].data, got[4].data, got[5].data, got[6].data, got[7].data,
            got[8].data, 0);
  size_t bad = 0;
  for (size_t i = 0; i < nref; i++)
    for (int64_t e = 0; e < ref[i].nelems; e++) {
      double a = val(&ref[i], e), b = val(&got[i], e);
      bool ok = uop_dt_is_float(ref[i].dtype) ? fabs(a - b) <= 2e-5 * fabs(a) + 1e-6 : a == b;
      if (!ok && bad++ < 5) fprintf(stderr, "casts: buffer %d [%lld]: interpreter %.17g, llvm-cpu %.17g\n", ref[i].slot,
                                    (long long)e, a, b);
    }
  CHECK_EQ_INT(bad, 0);
done:
  if (cp) cpu_program_destroy(cp);
  if (ref) cc_kbufs_free(ref, nref);
  if (got) cc_kbufs_free(got, ngot);
  cc_program_free(p);
  uop_ctx_destroy(ctx);
}

/* Missing tools name their Debian package; float64 transcendentals link on AMDGPU. */
static void test_tools(void) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  cc_target cpu, amd;
  CHECK_OK(cc_target_get("llvm-cpu", 1, &cpu));
  CHECK_OK(cc_target_get("amdgpu:gfx1201", 1, &amd));
  uint8_t *bin = NULL;
  size_t n = 0;
  setenv("HCQ_CLANG", "/nonexistent/clang-19", 1);
  CHECK_ERR(cc_llvm_compile(&cpu, "", &bin, &n), HCQ_CODE_UNSUPPORTED, "Debian package clang-19");
  unsetenv("HCQ_CLANG");
  if (tu_have("clang-19")) {
    setenv("HCQ_LLD", "ld.lld-nonexistent", 1);
    CHECK_ERR(cc_llvm_compile(&amd, "", &bin, &n), HCQ_CODE_UNSUPPORTED, "Debian package lld-19");
    unsetenv("HCQ_LLD");
    /* bad IR: the error quotes the command and clang's diagnostics */
    CHECK_ERR(cc_llvm_compile(&cpu, "define void @f( {", &bin, &n), HCQ_CODE_INVALID, "clang-19");
  }
  if (tu_have("clang-19") && tu_have("ld.lld-19")) {
    cc_program *p = compile(ctx, EXP64, "amdgpu:gfx1201", NULL, true);
    if (p) CHECK(p->binary_size_B > 1000);
    cc_program_free(p);
  }
  uop_ctx_destroy(ctx);
}

int main(void) {
  char dir[] = "/tmp/hcq-render-llvm-test-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  test_text();
  test_tools();
  if (tu_have("clang-19")) test_run_casts();
  else printf("*** SKIPPED: llvm-cpu run of the casts kernel: clang-19 not found (Debian package clang-19) ***\n");
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
  return testing_summary("render_llvm");
}
