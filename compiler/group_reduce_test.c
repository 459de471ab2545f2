/* Tests of the GROUP/GROUPTOP lowering (group_reduce.c) on the GPU targets:
 * - semantics: the linearized program, run by a sequential GPU simulator with barrier phases (gpu_sim_test_util.h)
 *   over every workgroup and thread, writes the same outputs as the reference interpreter on the original kernel,
 *   each output exactly once, with no shared-memory race; run with its barriers ignored it goes wrong;
 * - structure: DEFINE_LOCAL of the right size, STORE to it < BARRIER < LOAD from it, the gated output store,
 *   the launch sizes, PTX .shared, bar.sync, .maxntid and AMDGPU addrspace(3)/s.barrier/flat-work-group-size, and the
 *   real ptxas and llc/ld.lld accept the result (skipped per tool when absent);
 * - grouped reduces inside loops (nested reduces) get a second barrier against the next iteration's stores (the
 *   simulator reports the race without it); loops whose trip count differs between threads are refused;
 * - the heuristic picks GROUPTOP 16 for small, non-symbolic outputs on GPU targets, never on c, and undoes it for a
 *   grouped reduce that cannot be lowered;
 * - random opt lists with GROUP/GROUPTOP, through the whole pipeline and the simulator (fuzz, fixed seed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/gpu_sim_test_util.h"
#include "compiler/opt_test_util.h"
#include "compiler/toolchain.h"
#include "base/testing.h"

static uop_ctx *g_ctx;
static cc_target g_ptx, g_amd, g_c;
static bool g_have_ptxas, g_have_llvm;

static const uop *parse(const char *text) {
  const uop *k = NULL;
  CHECK_OK(cc_kernel_parse(g_ctx, text, strlen(text), "<test>", &k));
  return k;
}
static const uop *parse_file(const char *path) {
  const uop *k = NULL;
  CHECK_OK(cc_kernel_parse_file(g_ctx, path, &k));
  return k;
}

/* Compile with opts text (NULL = heuristic). */
static cc_program *compile(const uop *k, const cc_target *t, const char *opts) {
  if (!k) return NULL;
  cc_opt *list = NULL;
  size_t n = 0;
  if (opts) CHECK_OK(cc_opts_parse(opts, &list, &n));
  cc_options o = {.opts = list, .nopts = n};
  cc_program *p = NULL;
  hcq_status st = cc_compile_source(g_ctx, k, t, opts ? &o : NULL, &p);
  if (st) fprintf(stderr, "  compile %s [%s]: %s\n", t->name, opts ? opts : "heuristic", hcq_status_message(st));
  CHECK_OK(st);
  free(list);
  return p;
}

static int64_t cval(const char *expr) { return cc_launch_const(expr); }

/* Simulate p on filled buffers and compare with the interpreter on k. Returns mismatches (SIZE_MAX on error). */
static size_t sim_diff(const uop *k, const cc_program *p, bool ignore_barriers, size_t *multi, hcq_status *out_st) {
  cc_kbuf *a = NULL, *b = NULL;
  size_t na = 0, nb = 0, bad = SIZE_MAX;
  *multi = 0;
  hcq_status st = cc_kernel_buffers(k, &a, &na);
  if (!st) st = cc_kernel_buffers(k, &b, &nb);
  if (!st) st = cc_kbufs_alloc_fill(a, na, 7);
  if (!st) st = cc_kbufs_alloc_fill(b, nb, 7);
  if (!st) st = otu_interp(k, a, na, NULL, 0);
  if (!st) st = gs_simulate(p, b, nb, ignore_barriers, multi);
  if (!st) bad = otu_diff(a, b, na);
  if (a) cc_kbufs_free(a, na);
  if (b) cc_kbufs_free(b, nb);
  *out_st = st;
  return bad;
}

/* The program equals the reference, writes each output once, and needs its barriers. */
static void check_sim(const uop *k, const cc_program *p, const char *what) {
  if (!k || !p) return;
  size_t multi;
  hcq_status st;
  size_t bad = sim_diff(k, p, false, &multi, &st);
  if (st || bad || multi)
    fprintf(stderr, "  %s: %s, %zu mismatches, %zu outputs written twice\n", what, st ? hcq_status_message(st) : "ok",
            bad, multi);
  CHECK_OK(st);
  CHECK_EQ_INT(bad, 0);
  CHECK_EQ_INT(multi, 0);
  bool has_barrier = false;
  for (size_t i = 0; i < p->nlinear; i++) has_barrier |= p->linear[i]->op == UOP_BARRIER;
  if (!has_barrier) return; /* e.g. the group range was unrolled away */
  bad = sim_diff(k, p, true, &multi, &st);
  if (!st && !bad) fprintf(stderr, "  %s: still right without its barriers\n", what);
  CHECK(st || bad);
  hcq_status_free(st);
}

/* Structure of a lowered program: nlocal DEFINE_LOCALs (the largest of `elems` elements), each written before a
 * BARRIER that comes before its first read; every global store gated. */
static void check_structure(const cc_program *p, int nlocal, int64_t elems, const char *what) {
  if (!p) return;
  int locals = 0;
  int64_t largest = 0;
  size_t gated = 0, gstores = 0;
  for (size_t k = 0; k < p->nlinear; k++) {
    const uop *n = p->linear[k];
    if (n->op == UOP_STORE && n->src[0]->src[0]->op == UOP_DEFINE_GLOBAL) {
      gstores++;
      gated += n->src[0]->nsrc == 3;
    }
    if (n->op != UOP_DEFINE_LOCAL) continue;
    locals++;
    if (n->dtype.size > largest) largest = n->dtype.size;
    size_t first_store = SIZE_MAX, barrier = SIZE_MAX, first_load = SIZE_MAX;
    for (size_t j = 0; j < p->nlinear; j++) {
      const uop *m = p->linear[j];
      bool here = (m->op == UOP_LOAD || m->op == UOP_STORE) && m->src[0]->op == UOP_INDEX_OP && m->src[0]->src[0] == n;
      if (here && m->op == UOP_STORE && first_store == SIZE_MAX) first_store = j;
      if (here && m->op == UOP_LOAD && first_load == SIZE_MAX) first_load = j;
      if (m->op == UOP_BARRIER && first_store != SIZE_MAX && barrier == SIZE_MAX) barrier = j;
    }
    if (!(first_store < barrier && barrier < first_load))
      fprintf(stderr, "  %s: local store %zu, barrier %zu, load %zu\n", what, first_store, barrier, first_load);
    CHECK(first_store < barrier && barrier < first_load);
  }
  CHECK_EQ_INT(locals, nlocal);
  if (largest != elems) fprintf(stderr, "  %s: largest shared buffer %lld\n", what, (long long)largest);
  CHECK_EQ_INT(largest, elems);
  CHECK(gstores > 0);
  CHECK_EQ_INT(gated, gstores);
}

static int count_op(const cc_program *p, uop_op op) {
  int n = 0;
  for (size_t i = 0; p && i < p->nlinear; i++) n += p->linear[i]->op == op;
  return n;
}

static bool applied_has(const cc_program *p, cc_opt_op op, int64_t amount) {
  for (size_t i = 0; p && i < p->napplied_opts; i++)
    if (p->applied_opts[i].op == op && p->applied_opts[i].amount == amount) return true;
  return false;
}

static void check_binary(const cc_target *t, cc_program *p) {
  if (!p || (t->kind == CC_TARGET_PTX ? !g_have_ptxas : !g_have_llvm)) return;
  hcq_status st = cc_compile_binary(t, p);
  if (st) fprintf(stderr, "  %s binary: %s\n", t->name, hcq_status_message(st));
  CHECK_OK(st);
  CHECK(p->binary && p->binary_size_B > 4 && memcmp(p->binary, "\177ELF", 4) == 0);
}


/* The AMDGPU code object's metadata (llvm-readelf-19 --notes), if the tool is there: NULL otherwise. Malloc'd. */
static char *amd_notes(const cc_program *p) {
  if (!p->binary || system("command -v llvm-readelf-19 >/dev/null 2>&1") != 0) return NULL;
  char path[64];
  snprintf(path, sizeof path, "/tmp/hcq-group-%d.co", (int)getpid());
  FILE *f = fopen(path, "wb");
  if (!f) return NULL;
  fwrite(p->binary, 1, p->binary_size_B, f);
  fclose(f);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "llvm-readelf-19 --notes %s", path);
  FILE *pipe = popen(cmd, "r");
  char *text = calloc(1, 1 << 16);
  size_t len = 0;
  if (pipe && text) len = fread(text, 1, (1 << 16) - 1, pipe);
  if (pipe) pclose(pipe);
  unlink(path);
  if (text) text[len] = 0;
  return text;
}

static void test_sum_heuristic(void) {
  const uop *k = parse_file("examples/sum.uop");
  cc_program *p = compile(k, &g_ptx, NULL);
  if (!p) return;
  CHECK(applied_has(p, CC_OPT_GROUPTOP, 16));
  CHECK_EQ_INT(cval(p->desc.local[0]), 16);
  CHECK_EQ_INT(cval(p->desc.local[1]) * cval(p->desc.local[2]), 1);
  CHECK_EQ_INT(cval(p->desc.global[0]) * cval(p->desc.global[1]) * cval(p->desc.global[2]), 1);
  CHECK_EQ_INT(hcq_program_nbufs(&p->desc), 2);
  check_structure(p, 1, 16, "sum ptx");
  CHECK(strstr(p->source, ".shared .align 16 .b8 local0[64];") != NULL);
  CHECK(strstr(p->source, "bar.sync 0;") != NULL);
  CHECK(strstr(p->source, ".maxntid 16, 1, 1") != NULL);
  CHECK(strstr(p->source, ".visible .entry sum(\n\t.param .u64 data0,\n\t.param .u64 data1\n)") != NULL);
  CHECK(strstr(p->source, "st.shared.f32") != NULL && strstr(p->source, "ld.shared.f32") != NULL);
  check_sim(k, p, "sum ptx heuristic");
  check_binary(&g_ptx, p);
  cc_program_free(p);

  /* the example the brief names: 16M floats, GROUPTOP 16, one workgroup of 16 threads */
  const uop *big = parse_file("examples/sum_16M.uop");
  p = compile(big, &g_ptx, NULL);
  CHECK(applied_has(p, CC_OPT_GROUPTOP, 16));
  if (p) CHECK_EQ_INT(cval(p->desc.local[0]), 16);
  cc_program_free(p);

  /* a symbolic output size is not known to be small: no GROUPTOP (the reference resolves the check to False) */
  const uop *sym = parse("(kernel symsum (let o (buf 0 float32 4096)) (let x (buf 1 float32 262144))"
                         " (let n (var n 1 4096 index)) (let r0 (range 0 n loop)) (let r1000 (range 1000 64 reduce))"
                         " (sink (store (index o r0) (reduce add (load (index x (+ (* r0 64) r1000))) r1000) r0)))");
  p = compile(sym, &g_ptx, NULL);
  CHECK(p && !applied_has(p, CC_OPT_GROUPTOP, 16) && count_op(p, UOP_BARRIER) == 0);
  cc_program_free(p);

  /* c: no locals, no GROUPTOP */
  p = compile(k, &g_c, NULL);
  CHECK(p && !applied_has(p, CC_OPT_GROUPTOP, 16));
  for (size_t i = 0; p && i < p->nlinear; i++) CHECK(p->linear[i]->op != UOP_DEFINE_LOCAL);
  cc_program_free(p);
}

static void test_amdgpu(void) {
  static const char *const ARCHS[] = {"amdgpu:gfx1100", "amdgpu:gfx90a", "amdgpu:gfx942", "amdgpu:gfx1201"};
  const uop *k = parse_file("examples/sum.uop");
  for (size_t i = 0; i < sizeof ARCHS / sizeof ARCHS[0]; i++) {
    cc_target t;
    CHECK_OK(cc_target_get(ARCHS[i], 0, &t));
    cc_program *p = compile(k, &t, NULL);
    if (!p) continue;
    CHECK(applied_has(p, CC_OPT_GROUPTOP, 16));
    CHECK_EQ_INT(cval(p->desc.local[0]), 16);
    check_structure(p, 1, 16, ARCHS[i]);
    CHECK(strstr(p->source, "= internal unnamed_addr addrspace(3) global [16 x float] undef") != NULL);
    CHECK(strstr(p->source, "fence syncscope(\"workgroup\") release\n  call void @llvm.amdgcn.s.barrier()\n"
                            "  fence syncscope(\"workgroup\") acquire") != NULL);
    CHECK(strstr(p->source, "\"amdgpu-flat-work-group-size\"=\"1,16\"") != NULL);
    CHECK(strstr(p->source, "@llvm.amdgcn.workitem.id.x()") != NULL);
    CHECK(strstr(p->source, "define amdgpu_kernel void @sum(ptr addrspace(1) noalias %data0, ptr addrspace(1) "
                            "noalias %data1)") != NULL);
    if (i == 0) check_sim(k, p, "sum amdgpu heuristic");
    check_binary(&t, p);
    char *notes = amd_notes(p);
    if (notes) { /* launch metadata: 64 B of LDS, two 8-byte kernargs, workgroups of up to 16 */
      CHECK(strstr(notes, ".group_segment_fixed_size: 64\n") != NULL);
      CHECK(strstr(notes, ".kernarg_segment_size: 16\n") != NULL);
      CHECK(strstr(notes, ".max_flat_workgroup_size: 16\n") != NULL);
    }
    free(notes);
    cc_program_free(p);
  }
  /* a workgroup larger than a wave keeps its barrier through llc */
  cc_program *p = compile(k, &g_amd, "GROUPTOP:0:256");
  if (p) {
    CHECK(strstr(p->source, "\"amdgpu-flat-work-group-size\"=\"1,256\"") != NULL);
    CHECK(strstr(p->source, "[256 x float]") != NULL);
    check_sim(k, p, "sum amdgpu GROUPTOP 256");
    check_binary(&g_amd, p);
  }
  cc_program_free(p);
}

static void test_examples_sim(void) {
  const uop *mr = parse_file("examples/max_rows.uop");
  cc_program *p = compile(mr, &g_ptx, NULL);
  CHECK(applied_has(p, CC_OPT_GROUPTOP, 16));
  if (p) {
    CHECK_EQ_INT(cval(p->desc.global[0]), 64);
    CHECK_EQ_INT(cval(p->desc.local[0]), 16);
  }
  check_structure(p, 1, 16, "max_rows");
  check_sim(mr, p, "max_rows ptx heuristic");
  check_binary(&g_ptx, p);
  cc_program_free(p);

  /* the simulator itself, on an ordinary GPU program (LOCAL dims, no shared memory) */
  const uop *mm0 = parse_file("examples/matmul.uop");
  p = compile(mm0, &g_ptx, NULL);
  if (p) CHECK(cval(p->desc.local[0]) * cval(p->desc.local[1]) > 1);
  check_sim(mm0, p, "matmul ptx heuristic (no group)");
  cc_program_free(p);

  static const struct { const char *opts; int nlocal; int64_t elems; } MM[] = {
      {"GROUP:0:4", 1, 4},
      {"GROUPTOP:0:16,UNROLL:1:2", 1, 16},
      {"GROUPTOP:0:16,UNROLL:0:2", 1, 8},  /* unrollable axis 0 is the group range itself: 16 -> 8 x 2 */
      {"LOCAL:0:4,GROUPTOP:0:8", 1, 32},   /* slots per LOCAL thread: 4 x 8 */
      {"UPCAST:1:4,GROUP:0:8", 4, 8},      /* one buffer per upcast lane, one barrier for all */
      {"GROUP:0:0", 1, 64},                /* the whole reduce: no per-thread loop left */
      {"GROUP:0:4,GROUP:0:2", 1, 8},       /* two group dims (lidx0, lidx1) */
  };
  const uop *mm = parse_file("examples/matmul.uop");
  for (size_t i = 0; i < sizeof MM / sizeof MM[0]; i++) {
    for (int tg = 0; tg < 2; tg++) {
      const cc_target *t = tg ? &g_amd : &g_ptx;
      p = compile(mm, t, MM[i].opts);
      char what[96];
      snprintf(what, sizeof what, "matmul %s [%s]", t->name, MM[i].opts);
      check_structure(p, MM[i].nlocal, MM[i].elems, what);
      CHECK_EQ_INT(count_op(p, UOP_BARRIER), 1);
      check_sim(mm, p, what);
      check_binary(t, p);
      cc_program_free(p);
    }
  }
}

/* softmax (two dependent reduces), both grouped; a kernel with two grouped outputs; a nested reduce. */
static void test_kernels_sim(void) {
  const char *SOFTMAX =
      "(kernel softmax_small (let out (buf 0 float32 512)) (let x (buf 1 float32 512))"
      " (let r0 (range 0 8 loop)) (let r1 (range 1 64 loop))"
      " (let r1001 (range 1001 64 reduce)) (let r1002 (range 1002 64 reduce)) (let row (* r0 64))"
      " (let negmax (* (reduce max (load (index x (+ row r1001))) r1001) -1.0))"
      " (let sum (reduce add (exp2 (* (+ (load (index x (+ row r1002))) negmax) 1.442695)) r1002))"
      " (sink (store (index out (+ row r1)) (* (exp2 (* (+ (load (index x (+ row r1))) negmax) 1.442695)) (recip sum))"
      " r0 r1)))";
  const uop *sm = parse(SOFTMAX);
  static const char *const SM_OPTS[] = {"GROUPTOP:0:16", "GROUPTOP:1:8", "GROUPTOP:0:16,GROUPTOP:1:8"};
  static const int SM_LOCALS[] = {1, 1, 2};
  for (size_t i = 0; i < 3; i++)
    for (int tg = 0; tg < 2; tg++) {
      const cc_target *t = tg ? &g_amd : &g_ptx;
      cc_program *p = compile(sm, t, SM_OPTS[i]);
      char what[96];
      snprintf(what, sizeof what, "softmax %s [%s]", t->name, SM_OPTS[i]);
      check_structure(p, SM_LOCALS[i], SM_OPTS[i][9] == '0' ? 16 : 8, what);
      CHECK_EQ_INT(count_op(p, UOP_BARRIER), SM_LOCALS[i]); /* the sum reduce needs the max first: 2 barriers */
      check_sim(sm, p, what);
      check_binary(t, p);
      cc_program_free(p);
    }

  const char *TWO = "(kernel two (let s (buf 0 float32 4)) (let m (buf 1 float32 4)) (let x (buf 2 float32 512))"
                    " (let r0 (range 0 4 loop)) (let r1000 (range 1000 128 reduce)) (let r2000 (range 2000 128 reduce))"
                    " (sink (store (index s r0) (reduce add (load (index x (+ (* r0 128) r1000))) r1000) r0)"
                    " (store (index m r0) (reduce max (load (index x (+ (* r0 128) r2000))) r2000) r0)))";
  const uop *two = parse(TWO);
  cc_program *p = compile(two, &g_ptx, "GROUPTOP:0:16,GROUP:1:8");
  check_structure(p, 2, 16, "two outputs");
  CHECK_EQ_INT(count_op(p, UOP_BARRIER), 1); /* independent reduces share one barrier */
  check_sim(two, p, "two outputs ptx");
  check_binary(&g_ptx, p);
  cc_program_free(p);

  /* out = sum_i max_j x[i*16+j]: grouping the outer reduce needs one barrier; grouping the inner one puts its
   * barrier inside the outer loop, plus a second one (on the partial) against the next iteration's stores */
  const char *NEST = "(kernel nest (let out (buf 0 float32 1)) (let x (buf 1 float32 256))"
                     " (let r1000 (range 1000 16 reduce)) (let r2000 (range 2000 16 reduce))"
                     " (sink (store (index out 0) (reduce add (reduce max (load (index x (+ (* r1000 16) r2000))) r2000)"
                     " r1000))))";
  const uop *nest = parse(NEST);
  static const struct { const char *opts; int64_t elems; int barriers; } NESTS[] = {
      {"GROUP:0:4", 4, 1}, {"GROUP:1:4", 4, 2}, {"GROUPTOP:1:16", 16, 2},
      {"GROUP:0:4,GROUP:1:4", 16, 3}}; /* both: the inner buffer has a slot per (outer, inner) thread */
  for (size_t i = 0; i < sizeof NESTS / sizeof NESTS[0]; i++)
    for (int tg = 0; tg < 2; tg++) {
      const cc_target *t = tg ? &g_amd : &g_ptx;
      p = compile(nest, t, NESTS[i].opts);
      char what[96];
      snprintf(what, sizeof what, "nest %s [%s]", t->name, NESTS[i].opts);
      check_structure(p, NESTS[i].barriers == 3 ? 2 : 1, NESTS[i].elems, what);
      CHECK_EQ_INT(count_op(p, UOP_BARRIER), NESTS[i].barriers);
      check_sim(nest, p, what);
      check_binary(t, p);
      cc_program_free(p);
    }
  p = compile(nest, &g_ptx, NULL);
  check_sim(nest, p, "nest heuristic");
  cc_program_free(p);

  /* out[i] = sum_{j <= i} max_k x[j*16+k]: the grouped inner reduce sits in a loop whose trip count depends on i.
   * With i a GLOBAL (workgroup) index that is uniform: fine. With i a LOCAL index the threads would disagree on
   * the number of barriers: refused, and the heuristic undoes its GROUPTOP there. */
  const char *TRI = "(kernel tri (let o (buf 0 float32 8)) (let x (buf 1 float32 128)) (let r0 (range 0 8 %s))"
                    " (let r2000 (range 2000 (+ r0 1) reduce)) (let r1000 (range 1000 16 reduce))"
                    " (sink (store (index o r0) (reduce add (reduce max (load (index x (+ (* r2000 16) r1000))) r1000)"
                    " r2000) r0)))";
  char text[512];
  snprintf(text, sizeof text, TRI, "loop");
  const uop *tri = parse(text);
  p = compile(tri, &g_ptx, NULL);
  CHECK(applied_has(p, CC_OPT_GROUPTOP, 16));
  CHECK_EQ_INT(count_op(p, UOP_BARRIER), 2);
  check_sim(tri, p, "tri heuristic");
  cc_program_free(p);
  cc_opt grp[2] = {{CC_OPT_LOCAL, 0, 4}, {CC_OPT_GROUPTOP, 0, 4}};
  cc_program *bad = NULL;
  if (tri)
    CHECK_ERR(cc_compile_source(g_ctx, tri, &g_ptx, &(cc_options){.opts = grp, .nopts = 2}, &bad),
              HCQ_CODE_UNSUPPORTED, "trip count may differ");
  snprintf(text, sizeof text, TRI, "local");
  const uop *tril = parse(text);
  p = compile(tril, &g_ptx, NULL);
  CHECK(p && !applied_has(p, CC_OPT_GROUPTOP, 16) && count_op(p, UOP_BARRIER) == 0);
  if (p) CHECK_EQ_INT(cval(p->desc.local[0]), 8);
  check_sim(tril, p, "tri (local) heuristic");
  cc_program_free(p);
  /* the check the heuristic uses, directly */
  const uop *prep = NULL, *o = NULL;
  CHECK_OK(otu_prep(g_ctx, text, &g_ptx, &prep));
  if (prep) CHECK_OK(otu_opt(g_ctx, prep, &g_ptx, "GROUPTOP:0:16", &o, NULL, NULL));
  if (o) CHECK_ERR(cc_group_reduce_check(g_ctx, o), HCQ_CODE_UNSUPPORTED, "inside the reduce range r2000");
  CHECK_OK(otu_prep(g_ctx, NEST, &g_ptx, &prep));
  if (prep) CHECK_OK(otu_opt(g_ctx, prep, &g_ptx, "GROUP:1:4", &o, NULL, NULL));
  if (o) CHECK_OK(cc_group_reduce_check(g_ctx, o));
}


/* Every example with a reduce, grouped, assembles for ptx and links for amdgpu; conv2d (gated loads, a merged
 * 18-element reduce) is also simulated. */
static void test_all_examples(void) {
  static const struct { const char *file, *opts; bool sim; } EX[] = {
      {"examples/conv2d.uop", "GROUP:0:2", true},      {"examples/conv2d.uop", "GROUPTOP:1:3", true},
      {"examples/conv2d.uop", "GROUP:0:0,GROUP:0:3,GROUP:0:3", true},     {"examples/matmul.uop", "GROUPTOP:0:16", false},
      {"examples/matmul_512.uop", "GROUPTOP:0:16", false}, {"examples/matmul_1024.uop", "GROUPTOP:0:16", false},
      {"examples/matmul_2048.uop", "GROUPTOP:0:16", false}, {"examples/max_rows.uop", "GROUPTOP:0:16", false},
      {"examples/softmax.uop", "GROUPTOP:0:16", false},  {"examples/softmax.uop", "GROUPTOP:0:16,GROUPTOP:1:16", false},
      {"examples/softmax_4096x1024.uop", "GROUPTOP:0:16", false}, {"examples/sum.uop", "GROUPTOP:0:16", false},
      {"examples/sum_16M.uop", "GROUPTOP:0:16", false},
  };
  for (size_t i = 0; i < sizeof EX / sizeof EX[0]; i++) {
    const uop *k = parse_file(EX[i].file);
    for (int tg = 0; tg < 2; tg++) {
      const cc_target *t = tg ? &g_amd : &g_ptx;
      cc_program *p = compile(k, t, EX[i].opts);
      if (!p) continue;
      char what[128];
      snprintf(what, sizeof what, "%s %s [%s]", EX[i].file, t->name, EX[i].opts);
      bool barrier = false;
      for (size_t j = 0; j < p->nlinear; j++) barrier |= p->linear[j]->op == UOP_BARRIER;
      CHECK(barrier);
      if (EX[i].sim && tg == 0) check_sim(k, p, what);
      check_binary(t, p);
      cc_program_free(p);
    }
  }
}

/* Random opt lists (a GROUP/GROUPTOP first, then LOCAL/UPCAST/UNROLL/GROUP) on small kernels, both GPU targets:
 * every list the optimizer accepts compiles, and the simulated program equals the interpreter. Fixed seed. */
static uint32_t g_seed = 12345;
static uint32_t rnd(uint32_t n) {
  g_seed = g_seed * 1103515245u + 12345u;
  return (g_seed >> 8) % n;
}

static void test_fuzz(void) {
  static const char *const KERNELS[] = {
      "(kernel mm16 (let c (buf 0 float32 256)) (let a (buf 1 float32 512)) (let b (buf 2 float32 512))"
      " (let r0 (range 0 16 loop)) (let r1 (range 1 16 loop)) (let r1002 (range 1002 32 reduce))"
      " (sink (store (index c (+ (* r0 16) r1)) (reduce add (* (load (index a (+ (* r0 32) r1002)))"
      " (load (index b (+ (* r1002 16) r1)))) r1002) r0 r1)))",
      "(kernel s2k (let o (buf 0 float32 1)) (let x (buf 1 float32 2048)) (let r1000 (range 1000 2048 reduce))"
      " (sink (store (index o 0) (reduce add (load (index x r1000)) r1000))))",
      "(kernel mx (let o (buf 0 int32 8)) (let x (buf 1 int32 1024)) (let r0 (range 0 8 loop))"
      " (let r1001 (range 1001 128 reduce))"
      " (sink (store (index o r0) (reduce max (load (index x (+ (* r0 128) r1001))) r1001) r0)))",
      "(kernel rows2 (let o (buf 0 float32 32)) (let x (buf 1 float32 2048)) (let r0 (range 0 4 loop))"
      " (let r1 (range 1 8 loop)) (let r1000 (range 1000 8 reduce)) (let r1001 (range 1001 8 reduce))"
      " (sink (store (index o (+ (* r0 8) r1)) (reduce add (* (load (index x (+ (+ (* r0 512) (* r1 64)) (+ (* r1000 8)"
      " r1001)))) 0.5) r1000 r1001) r0 r1)))",
  };
  static const cc_opt_op LATER[] = {CC_OPT_LOCAL, CC_OPT_UPCAST, CC_OPT_UNROLL, CC_OPT_GROUP, CC_OPT_GROUPTOP};
  static const int64_t AMTS[] = {2, 4, 8, 2, 4, 16, 0};
  int compiled = 0, refused = 0, loops = 0;
  for (int c = 0; c < 120; c++) {
    const uop *k = parse(KERNELS[c % 4]);
    const cc_target *t = c % 3 ? &g_ptx : &g_amd;
    cc_opt opts[4];
    int n = 1 + (int)rnd(4);
    for (int i = 0; i < n; i++) {
      opts[i].op = i == 0 ? (rnd(2) ? CC_OPT_GROUP : CC_OPT_GROUPTOP) : LATER[rnd(5)];
      opts[i].axis = (int)rnd(i == 0 ? 2 : 3);
      if (i == 0 && c % 4 != 3) opts[i].axis = 0; /* only rows2 has two reduce axes */
      opts[i].amount = AMTS[rnd(7)];
    }
    cc_program *p = NULL;
    hcq_status st = k ? cc_compile_source(g_ctx, k, t, &(cc_options){.opts = opts, .nopts = (size_t)n}, &p) : NULL;
    if (st && hcq_status_code(st) == HCQ_CODE_INVALID) {
      refused++;
    } else if (st && strstr(hcq_status_message(st), "trip count may differ")) {
      loops++;
    } else if (st && (strstr(hcq_status_message(st), "local dims (at most 3)") ||
                      strstr(hcq_status_message(st), "exceed"))) {
      refused++; /* gpudims does not merge local dims */
    } else {
      if (st) fprintf(stderr, "  fuzz case %d: %s\n", c, hcq_status_message(st));
      CHECK_OK(st);
      st = NULL;
      char what[64];
      snprintf(what, sizeof what, "fuzz case %d (%s)", c, t->name);
      if (p) check_sim(k, p, what);
      compiled++;
    }
    hcq_status_free(st);
    cc_program_free(p);
  }
  printf("fuzz: %d compiled and simulated, %d refused (optimizer, gpudims), %d grouped reduces in a non-uniform loop refused\n",
         compiled, refused, loops);
  CHECK(compiled >= 30);
}

int main(void) {
  if (uop_ctx_create(&g_ctx)) return 1;
  CHECK_OK(cc_target_get("ptx:sm_90", 0, &g_ptx));
  CHECK_OK(cc_target_get("amdgpu:gfx1100", 0, &g_amd));
  CHECK_OK(cc_target_get("c", 2, &g_c));
  setenv("HCQ_CACHE", "0", 1);
  char path[1024];
  hcq_status st = cc_ptx_ptxas(path, sizeof path);
  g_have_ptxas = st == HCQ_OK;
  hcq_status_free(st);
  st = cc_llvm_require(cc_llvm_clang(), "clang-19");
  if (!st) st = cc_llvm_require(cc_llvm_lld(), "lld-19");
  g_have_llvm = st == HCQ_OK;
  hcq_status_free(st);
  if (!g_have_ptxas) fprintf(stderr, "group_reduce: ptxas not found, PTX not assembled\n");
  if (!g_have_llvm) fprintf(stderr, "group_reduce: clang-19/ld.lld-19 not found, AMDGPU not linked\n");
  test_sum_heuristic();
  test_amdgpu();
  test_examples_sim();
  test_kernels_sim();
  test_all_examples();
  test_fuzz();
  uop_ctx_destroy(g_ctx);
  return testing_summary("group_reduce");
}
