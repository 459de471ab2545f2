/* Integer // and % on amd:0 (the AMD mock: amdgpu:gfx1100 through clang-19, run by the RDNA3 interpreter) against
 * the reference interpreter, over the operands LLVM 19's AMDGPU backend misjudges (render_llvm.c, amd_div_opaque):
 * numerators and divisors whose high bits it can prove (constants such as -1 and MIN, `| top ones`, `& 0xffffff`,
 * arithmetic `>>`, sign-extended int8 loads) so that it would divide in float with 24 bits, on int32, uint32,
 * int64 and uint64, each value class from 0, 1, -1, MIN, MAX, 2^23+1, 2^24 +-1 and 0xc00002 (= 12582914, where a
 * 24-bit float quotient is one too large) to huge and tiny. The same kernels and inputs run on the CPU (`cpu`, the
 * c target), natively compiled for llvm-cpu, and, where ptxas is installed and the host is 64-bit, on nv:0 (the NV
 * mock's PTX interpreter): int32 and uint64 there (the external compilers take most of the time). Each store has its own ranges, ending at a variable n (= 16, N = M) and compiled without
 * opts, so that no compiler unrolls them (the kernels stay small and fast to compile). */
#include <time.h>

#include "compiler/kernel_text.h"
#include "compiler/toolchain.h"
#include "emulator_tests/amd_div_test_util.h"
#include "emulator_tests/amd_rt_test_util.h"
#include "emulator_tests/mock_env.h"

#define N 16 /* numerators */
#define M N  /* divisors (the ranges share one end, n) */
#define MAX_STORES 160

/* One store of the kernel: what it computes and where its elements start in out. */
typedef struct store_desc {
  char what[512];
  int64_t off;
  bool const_num; /* numerator is a constant: M elements, else N*M */
  int64_t num;
} store_desc;

typedef struct kernel_desc {
  char *text;
  store_desc st[MAX_STORES];
  int nst;
  int64_t out_elems;
} kernel_desc;

/* pattern with the tokens X, Y (a[rr], b[rs]) and XC, YC (int8 c[rr], e[rs] cast to the dtype) written out with
 * the store's ranges rr (0..N) and rs (0..M) */
static void expand(FILE *f, const dtinfo *d, const char *pat, int rr, int rs) {
  for (const char *p = pat; *p;) {
    bool start = p == pat || p[-1] == ' ' || p[-1] == '(';
    if (start && (p[0] == 'X' || p[0] == 'Y')) {
      bool narrow = p[1] == 'C';
      int rng = p[0] == 'X' ? rr : rs;
      const char *buf = p[0] == 'X' ? (narrow ? "c" : "a") : (narrow ? "e" : "b");
      if (narrow) fprintf(f, "(cast %s (load (index %s (range %d n))))", d->name, buf, rng);
      else fprintf(f, "(load (index %s (range %d n)))", buf, rng);
      p += narrow ? 2 : 1;
    } else {
      fputc(*p++, f);
    }
  }
}

static void build_kernel(const dtinfo *d, kernel_desc *k) {
  char c1[64], c2[64], c3[64];
  const int b = d->bits;
  /* numerator patterns over X (a[r0]) and XC (int8 c[r0], cast): the known-bits classes */
  char nums[6][100];
  int nn = 0;
  snprintf(nums[nn++], 100, "X");
  snprintf(nums[nn++], 100, "(| X %s)", adt_cst(c1, sizeof c1, d, (int64_t)(~UINT64_C(0) << 24)));   /* top ones */
  if (b == 64) snprintf(nums[nn++], 100, "(| X %s)", adt_cst(c1, sizeof c1, d, (int64_t)(~UINT64_C(0) << 32)));
  snprintf(nums[nn++], 100, "(& X %s)", adt_cst(c1, sizeof c1, d, 0xffffff));                        /* 24 bits */
  snprintf(nums[nn++], 100, "(>> X %s)", adt_cst(c1, sizeof c1, d, b - 24));                         /* >> (sign) */
  snprintf(nums[nn++], 100, "XC");                                                               /* sext int8 */
  const int64_t cnums[] = {-1, 0xc00002}; /* all ones; 24 bits over 2^23 (MIN, MAX: in a[], against -1 too) */
  /* divisor patterns over Y (b[r1]) and YC (int8 e[r1], cast); never 0 */
  char dens[5][100];
  int nd = 0, nd_var;
  snprintf(dens[nd++], 100, "(| Y %s)", adt_cst(c1, sizeof c1, d, 1));
  snprintf(dens[nd++], 100, "(| (& Y %s) %s)", adt_cst(c1, sizeof c1, d, 7), adt_cst(c2, sizeof c2, d, 1));
  snprintf(dens[nd++], 100, "(| Y %s)", adt_cst(c1, sizeof c1, d, -8));
  snprintf(dens[nd++], 100, "(| YC %s)", adt_cst(c1, sizeof c1, d, 1));
  nd_var = nd;
  if (b == 64) snprintf(dens[nd++], 100, "%s", adt_cst(c1, sizeof c1, d, 3)); /* LLVM shrinks it to 32/24 bits */

  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  CHECK(f != NULL);
  if (!f) return;
  k->nst = 0;
  int64_t off = 0;
  const char *ops[2] = {"//", "%"};
  for (int o = 0; o < 2; o++) {
    for (int i = 0; i < nn; i++)
      for (int j = 0; j < nd && k->nst < MAX_STORES; j++) {
        store_desc *s = &k->st[k->nst++];
        CHECK(snprintf(s->what, sizeof s->what, "(%s %s %s)", ops[o], nums[i], dens[j]) < (int)sizeof s->what);
        s->off = off;
        s->const_num = false;
        off += N * M;
      }
    for (size_t i = 0; i < sizeof cnums / sizeof *cnums; i++)
      for (int j = 0; j < nd_var && k->nst < MAX_STORES; j++) {
        store_desc *s = &k->st[k->nst++];
        CHECK(snprintf(s->what, sizeof s->what, "(%s %s %s)", ops[o], adt_cst(c3, sizeof c3, d, cnums[i]), dens[j]) <
              (int)sizeof s->what);
        s->off = off;
        s->const_num = true;
        s->num = cnums[i];
        off += M;
      }
  }
  k->out_elems = off;
  fprintf(f, "(kernel div_%s\n  (let out (buf 0 %s %lld))\n  (let a (buf 1 %s %d))\n  (let b (buf 2 %s %d))\n"
             "  (let c (buf 3 int8 %d))\n  (let e (buf 4 int8 %d))\n  (let n (var n 1 %d index))\n  (sink\n",
          d->name, d->name, (long long)off, d->name, N, d->name, M, N, M, N);
  for (int s = 0; s < k->nst; s++) {
    const store_desc *sd = &k->st[s];
    int rr = 2 * s, rs = 2 * s + 1;
    if (sd->const_num)
      fprintf(f, "    (store (index out (+ (range %d n) %lld)) ", rs, (long long)sd->off);
    else
      fprintf(f, "    (store (index out (+ (+ (* (range %d n) %d) (range %d n)) %lld)) ", rr, M, rs, (long long)sd->off);
    expand(f, d, sd->what, rr, rs);
    if (sd->const_num) fprintf(f, " (range %d n))\n", rs);
    else fprintf(f, " (range %d n) (range %d n))\n", rr, rs);
  }
  fprintf(f, "  ))\n");
  fclose(f);
  k->text = text;
}

/* The inputs: numerators and divisors from 0, +-1, MIN, MAX, around 2^23 and 2^24, and huge/tiny. */
static void fill_inputs(const dtinfo *d, cc_kbuf *bufs, size_t n) {
  const int64_t nv[N] = {0, 1, -1, INT64_MIN, INT64_MAX, (1 << 24) - 1, 1 << 24, (1 << 24) + 1, (1 << 23) + 1,
                         0xc00002, -(1 << 23), -(1 << 24) - 1, INT64_MIN + 3, INT64_MAX - 5,
                         (int64_t)0x123456789abcdefull, -7};
  const int64_t dv[M] = {1, -1, 2, 3, 7, 8, -8, INT64_MAX, INT64_MIN, 255, 4095, 4096, (1 << 24) + 1, -3, 0x5555,
                         0};
  const int8_t cv[N] = {0, 1, -1, -128, 127, -2, 2, 100, -100, 64, -64, 3, -3, -127, 126, 5};
  const int8_t ev[M] = {-1, 1, -128, 127, -2, 3, -7, 0, 64, -64, 5, -5, 100, -100, 2, -3};
  for (size_t i = 0; i < n; i++) {
    cc_kbuf *k = &bufs[i];
    memset(k->data, 0, k->size_B);
    for (int64_t e = 0; e < k->nelems && k->slot >= 1; e++) {
      int64_t v = k->slot == 1 ? nv[e] : k->slot == 2 ? dv[e] : k->slot == 3 ? cv[e] : ev[e];
      /* 32-bit dtypes: MIN/MAX of the width, not of int64 */
      if (d->bits == 32 && (v == INT64_MIN || v == INT64_MIN + 3)) v = INT32_MIN + (v - INT64_MIN);
      if (d->bits == 32 && (v == INT64_MAX || v == INT64_MAX - 5)) v = INT32_MAX - (INT64_MAX - v);
      if (k->slot >= 3) ((int8_t *)k->data)[e] = (int8_t)v;
      else if (d->bits == 32) ((uint32_t *)k->data)[e] = (uint32_t)(uint64_t)v;
      else ((uint64_t *)k->data)[e] = (uint64_t)v;
    }
  }
}

static uint64_t elem(const void *data, int bits, int64_t i) {
  return bits == 32 ? ((const uint32_t *)data)[i] : ((const uint64_t *)data)[i];
}

/* Compare out (slot 0) of got with ref, store by store; returns the mismatches (the first few printed). */
static size_t compare(const char *devname, const dtinfo *d, const kernel_desc *k, const cc_kbuf *ref,
                      const cc_kbuf *got) {
  size_t bad = 0;
  for (int s = 0; s < k->nst; s++) {
    const store_desc *sd = &k->st[s];
    size_t bad_here = 0;
    for (int64_t e = 0; e < (sd->const_num ? M : N * M); e++) {
      uint64_t want = elem(ref[0].data, d->bits, sd->off + e), have = elem(got[0].data, d->bits, sd->off + e);
      if (want == have) continue;
      if (bad_here++ < 2) {
        int64_t ni = sd->const_num ? -1 : e / M, di = sd->const_num ? e : e % M;
        fprintf(stderr, "%s %s %s at a[%lld] b[%lld] (c[%lld] e[%lld]): want 0x%llx got 0x%llx\n", devname, d->name,
                sd->what, (long long)ni, (long long)di, (long long)ni, (long long)di, (unsigned long long)want,
                (unsigned long long)have);
      }
    }
    if (bad_here > 2) fprintf(stderr, "%s %s %s: %zu elements differ\n", devname, d->name, sd->what, bad_here);
    bad += bad_here;
  }
  return bad;
}

/* The kernel's buffers for a run, filled with the inputs. */
static void make_bufs(uop_ctx **ctx, const kernel_desc *k, const dtinfo *d, cc_kbuf **bufs, size_t *n) {
  const uop *sink = NULL;
  CHECK_OK(uop_ctx_create(ctx));
  CHECK_OK(cc_kernel_parse(*ctx, k->text, strlen(k->text), "<amd_div_test>", &sink));
  CHECK_OK(cc_kernel_buffers(sink, bufs, n));
  for (size_t i = 0; i < *n; i++) CHECK(((*bufs)[i].data = calloc(1, (*bufs)[i].size_B)) != NULL);
  fill_inputs(d, *bufs, *n);
}

/* A kernel built by `build` for d, its buffers, and the interpreter's results (n = N) in ref. */
typedef struct div_case {
  kernel_desc *k;
  uop_ctx *ctx;
  cc_kbuf *ref;
  size_t nref;
} div_case;

static bool case_open(const dtinfo *d, void (*build)(const dtinfo *, kernel_desc *), div_case *c) {
  memset(c, 0, sizeof *c);
  c->k = calloc(1, sizeof *c->k);
  CHECK(c->k != NULL);
  if (!c->k) return false;
  build(d, c->k);
  make_bufs(&c->ctx, c->k, d, &c->ref, &c->nref);
  const uop *sink = NULL;
  CHECK_OK(cc_kernel_parse(c->ctx, c->k->text, strlen(c->k->text), "<amd_div_test>", &sink));
  void *ptrs[5] = {0};
  size_t sizes[5] = {0};
  for (size_t i = 0; i < c->nref && c->ref[i].slot < 5; i++) {
    ptrs[c->ref[i].slot] = c->ref[i].data;
    sizes[c->ref[i].slot] = c->ref[i].size_B;
  }
  if (sink) CHECK_OK(cc_interp_run(sink, ptrs, sizes, 5, &(uop_var_val){"n", N}, 1));
  return true;
}

static void case_close(div_case *c) {
  cc_kbufs_free(c->ref, c->nref);
  uop_ctx_destroy(c->ctx);
  free(c->k->text);
  free(c->k);
}

/* llvm-cpu: compiled without opts and called natively (buffers, n, core_id) once per core_id. */
static size_t run_llvm_cpu(const cc_target *t, const dtinfo *d, const kernel_desc *k, const cc_kbuf *ref) {
  uop_ctx *ctx = NULL;
  cc_kbuf *got = NULL;
  size_t ngot = 0, bad = 0;
  make_bufs(&ctx, k, d, &got, &ngot);
  const uop *sink = NULL;
  CHECK_OK(cc_kernel_parse(ctx, k->text, strlen(k->text), "<amd_div_test>", &sink));
  cc_program *p = NULL;
  tu_kernel kern = {0};
  hcq_status st = tu_build_sink(ctx, sink, t, &(cc_options){.noopt = true}, &p, &kern);
  if (st) {
    fprintf(stderr, "llvm-cpu %s: %s\n", d->name, hcq_status_message(st));
    CHECK(false);
    bad = 1;
  } else {
    uintptr_t args[8];
    int nargs = 0;
    for (size_t i = 0; i < ngot; i++) args[nargs++] = (uintptr_t)got[i].data;
    args[nargs++] = N;
    int64_t threads = cc_launch_const(p->desc.global[0]);
    CHECK(threads > 0);
    for (int64_t core = 0; core < threads; core++) {
      args[nargs] = (uintptr_t)core;
      tu_call(&kern, args, nargs + 1);
    }
    bad = compare("llvm-cpu", d, k, ref, got);
  }
  hcq_status_free(st);
  tu_unload(&kern);
  cc_program_free(p);
  cc_kbufs_free(got, ngot);
  uop_ctx_destroy(ctx);
  return bad;
}

/* Run kernel k (dtype d) on dev and compare out with ref; returns the mismatches (the first few printed). */
static size_t run_dev(hcq_rt_device *dev, const char *devname, const dtinfo *d, const kernel_desc *k,
                      const cc_kbuf *ref, const char *opts) {
  cc_kbuf *got = NULL;
  size_t ngot = 0;
  uop_ctx *ctx = NULL;
  make_bufs(&ctx, k, d, &got, &ngot);
  hcq_rt_program *p = NULL;
  hcq_rt_kernel *kern = NULL;
  hcq_rt_buffer *bufs[8] = {0};
  hcq_status st = hcq_rt_program_compile(dev, k->text, opts, &p);
  if (!st) st = hcq_rt_kernel_load(dev, hcq_rt_program_desc(p), &kern);
  for (size_t i = 0; !st && i < ngot; i++) {
    st = hcq_rt_buffer_alloc(dev, got[i].size_B, HCQ_RT_MEM_HOST_VISIBLE, &bufs[i]);
    if (!st) memcpy(hcq_rt_buffer_host(bufs[i]), got[i].data, got[i].size_B);
  }
  if (!st) st = hcq_rt_launch(kern, bufs, ngot, &(hcq_var){"n", N}, 1);
  if (!st) st = hcq_rt_sync(dev, 60000);
  size_t bad = 0;
  if (st) {
    fprintf(stderr, "%s %s: %s\n", devname, d->name, hcq_status_message(st));
    CHECK(false);
    bad = 1;
  } else {
    memcpy(got[0].data, hcq_rt_buffer_host(bufs[0]), got[0].size_B);
    bad = compare(devname, d, k, ref, got);
  }
  hcq_status_free(st);
  hcq_rt_kernel_free(kern);
  hcq_rt_program_free(p);
  for (size_t i = 0; i < 8; i++) hcq_rt_buffer_free(bufs[i]);
  cc_kbufs_free(got, ngot);
  uop_ctx_destroy(ctx);
  return bad;
}

/* One divisor Y = b[r1] | 1 shared by a guarded division (a[r0] may be MIN: render_llvm selects Y == -1 apart) and
 * by constant numerators (never MIN: no guard). LLVM then unswitches on Y == -1 and, in that copy, divides by a
 * known |Y| = 1 with a 64-bit reciprocal literal (s_mov_b64 s, 0xffffffff): 100 // -1 gave -1 while the RDNA3
 * interpreter sign-extended such literals. The kernels above give each store its own divisor load, so LLVM never
 * saw a divisor known to be -1 there; and with a variable bound n LLVM does not unswitch, so these loops have
 * constant bounds. Divisors include -1, -3, -7 and MIN+1; with and without the heuristic opts. */
static void build_shared_kernel(const dtinfo *d, kernel_desc *k) {
  char c1[64];
  const int64_t cnums[] = {100, -100, 7, -1, 0xc00002, INT64_MAX};
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  CHECK(f != NULL);
  if (!f) return;
  k->nst = 0;
  store_desc *s0 = &k->st[k->nst++];
  snprintf(s0->what, sizeof s0->what, "(// X (| Y 1))");
  s0->off = 0;
  int64_t off = N * M;
  fprintf(f, "(kernel divy_%s\n  (let out (buf 0 %s %lld))\n  (let a (buf 1 %s %d))\n  (let b (buf 2 %s %d))\n"
             "  (let r1 (range 1 %d)) (let r0 (range 0 %d))\n"
             "  (let Y (| (load (index b r1)) %s))\n  (sink\n"
             "    (store (index out (+ (* r0 %d) r1)) (// (load (index a r0)) Y) r0 r1)\n",
          d->name, d->name, (long long)(N * M + 2 * M * (int64_t)(sizeof cnums / sizeof *cnums)), d->name, N,
          d->name, M, M, N, adt_cst(c1, sizeof c1, d, 1), M);
  const char *ops[2] = {"//", "%"};
  for (int o = 0; o < 2; o++)
    for (size_t i = 0; i < sizeof cnums / sizeof *cnums; i++) {
      int64_t v = d->bits == 32 && cnums[i] == INT64_MAX ? INT32_MAX : cnums[i];
      store_desc *s = &k->st[k->nst++];
      snprintf(s->what, sizeof s->what, "(%s %s (| Y 1))", ops[o], adt_cst(c1, sizeof c1, d, v));
      s->off = off, s->const_num = true, s->num = v;
      fprintf(f, "    (store (index out (+ r1 %lld)) (%s %s Y) r1)\n", (long long)off, ops[o], c1);
      off += M;
    }
  fprintf(f, "  ))\n");
  fclose(f);
  k->out_elems = off;
  k->text = text;
}

static void test_shared_divisor(hcq_rt_device *amd) {
  for (size_t t = 0; t < sizeof DTS / sizeof *DTS; t += 2) { /* int32, int64: the signed ones */
    const dtinfo *d = &DTS[t];
    div_case c;
    if (!case_open(d, build_shared_kernel, &c)) return;
    kernel_desc *k = c.k;
    for (int h = 0; h < 2; h++) {
      size_t bad = run_dev(amd, "amd:0", d, k, c.ref, h ? NULL : "");
      printf("amd:0    %-6s shared divisor, %s: %zu of %lld differ from the interpreter\n", d->name,
             h ? "heuristic opts" : "no opts", bad, (long long)k->out_elems);
      CHECK(bad == 0);
    }
    case_close(&c);
  }
}

static double ms_since(const struct timespec *t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-6;
}

int main(void) {
  if (!tu_have("clang-19") || !tu_have("ld.lld-19")) TEST_SKIP("needs clang-19 and ld.lld-19");
  char ptxas[512];
  hcq_status pst = cc_ptx_ptxas(ptxas, sizeof ptxas);
  bool nv = !pst && sizeof(void *) == 8;
  hcq_status_free(pst);
  if (!nv) printf("amd_div: nv:0 not checked (needs ptxas and a 64-bit host)\n");
  CHECK_OK(emu_mock_install(kif_default(), nv ? "amd,nv" : "amd"));
  const char *devnames[3] = {"amd:0", "cpu", "nv:0"};
  int ndev = nv ? 3 : 2;
  hcq_rt_device *devs[3] = {0};
  for (int i = 0; i < ndev; i++) CHECK_OK(hcq_rt_open(devnames[i], &devs[i]));
  cc_target llvm_cpu;
  CHECK_OK(cc_target_get("llvm-cpu", 1, &llvm_cpu));
  for (size_t t = 0; t < sizeof DTS / sizeof *DTS; t++) {
    const dtinfo *d = &DTS[t];
    /* the other targets (external compilers take most of the time): int32 and uint64, each signedness and width */
    bool others = t == 0 || t == 3;
    div_case c;
    if (!case_open(d, build_kernel, &c)) break;
    kernel_desc *k = c.k;
    for (int i = 0; i <= ndev; i++) {
      if (i > 0 && !others) break;
      struct timespec t0;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      const char *name = i < ndev ? devnames[i] : "llvm-cpu";
      size_t bad = i < ndev ? (devs[i] ? run_dev(devs[i], name, d, k, c.ref, "") : 1) : run_llvm_cpu(&llvm_cpu, d, k, c.ref);
      printf("%-8s %-6s %d stores, %lld elements: %zu differ from the interpreter (%.0f ms with the compile)\n", name,
             d->name, k->nst, (long long)k->out_elems, bad, ms_since(&t0));
      CHECK(bad == 0);
    }
    case_close(&c);
  }
  if (devs[0]) test_shared_divisor(devs[0]);
  for (int i = 0; i < ndev; i++) hcq_rt_close(devs[i]);
  amd_mock_uninstall();
  return testing_summary("amd_div");
}
