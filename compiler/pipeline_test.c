/* Pass-level tests of the c pipeline: range merging, reduce-to-accumulator structure, index lowering widths,
 * THREAD -> core_id, target table, opts parsing, dumps. Expected structures are written out by hand. */
#include "compiler/cc_internal.h"
#include "compiler/kernel_text.h"
#include "base/testing.h"

static const uop *parse(uop_ctx *ctx, const char *text) {
  const uop *sink = NULL;
  hcq_status st = cc_kernel_parse(ctx, text, strlen(text), "<test>", &sink);
  if (st) {
    fprintf(stderr, "parse: %s\n", hcq_status_message(st));
    hcq_status_free(st);
  }
  return sink;
}

static size_t count_op(const cc_program *p, uop_op op) {
  size_t n = 0;
  for (size_t i = 0; i < p->nlinear; i++) n += p->linear[i]->op == op;
  return n;
}
static size_t index_of(const cc_program *p, uop_op op, size_t from) {
  for (size_t i = from; i < p->nlinear; i++)
    if (p->linear[i]->op == op) return i;
  return SIZE_MAX;
}

/* the dumps of the passes around the CPU THREAD substitution (test 10) */
static char *after_expand, *after_reduce, *after_gpudims;
static void keep_dump(void *user, const char *pass, const char *text) {
  (void)user;
  char **slot = !strcmp(pass, "expand") ? &after_expand : !strcmp(pass, "remove reduce") ? &after_reduce
              : !strcmp(pass, "add gpudims")                   ? &after_gpudims
                                                               : NULL;
  if (slot && text) {
    free(*slot);
    *slot = strdup(text);
  }
}

static int dumps;
static void count_dump(void *user, const char *pass, const char *text) {
  (void)user;
  (void)pass;
  if (text && text[0]) dumps++;
}

int main(void) {
  cc_target c;
  CHECK_OK(cc_target_get("c", 4, &c));
  CHECK_EQ_INT(c.global_max[0], 4);
  CHECK(c.has_threads && !c.has_local);
  CHECK(!(c.supported_ops & UOP_OPBIT(UOP_EXP2)) && (c.supported_ops & UOP_OPBIT(UOP_SQRT)));
  cc_target bad;
  CHECK_ERR(cc_target_get("cuda", 0, &bad), HCQ_CODE_NOT_FOUND, "known: c");
  cc_target ptx;
  CHECK_OK(cc_target_get("ptx:sm_90", 0, &ptx));
  CHECK(ptx.kind == CC_TARGET_PTX && ptx.has_local);

  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));

  /* 1. a contiguous 2-D add merges into one loop of 32*64 = 2048 */
  const uop *add2d = parse(ctx,
                           "(kernel add2d (let o (buf 0 float32 2048)) (let a (buf 1 float32 2048))"
                           " (let r0 (range 0 32 loop)) (let r1 (range 1 64 loop))"
                           " (sink (store (index o (+ (* r0 64) r1)) (* (load (index a (+ (* r0 64) r1))) 2.0) r0 r1)))");
  cc_program *p = NULL;
  cc_options noopt = {.noopt = true, .dump = count_dump};
  CHECK_OK(cc_compile_source(ctx, add2d, &c, &noopt, &p));
  CHECK(dumps >= 10); /* input + 9 passes + linearize */
  if (p) {
    CHECK_EQ_INT(count_op(p, UOP_RANGE), 1);
    size_t r = index_of(p, UOP_RANGE, 0);
    int64_t end = 0;
    CHECK(r != SIZE_MAX && uop_const_value(p->linear[r]->src[0], &end) && end == 2048);
    CHECK(strstr(p->source, "ridx0 < 2048") != NULL);
    CHECK(strstr(p->source, "/") == NULL && strstr(p->source, "%") == NULL); /* no div/mod left */
    CHECK_EQ_STR(p->name, "add2d");
    CHECK_EQ_INT(hcq_program_nbufs(&p->desc), 2);
    CHECK(p->desc.params[0].access == HCQ_ACCESS_WRITE && p->desc.params[1].access == HCQ_ACCESS_READ);
    cc_program_free(p);
  }

  /* 2. a transposed 2-D copy does not merge (merging would add div/mod) */
  const uop *tr = parse(ctx,
                        "(kernel tr (let o (buf 0 float32 2048)) (let a (buf 1 float32 2048))"
                        " (let r0 (range 0 32 loop)) (let r1 (range 1 64 loop))"
                        " (sink (store (index o (+ (* r0 64) r1)) (load (index a (+ (* r1 32) r0))) r0 r1)))");
  CHECK_OK(cc_compile_source(ctx, tr, &c, &(cc_options){.noopt = true}, &p));
  if (p) {
    CHECK_EQ_INT(count_op(p, UOP_RANGE), 2);
    cc_program_free(p);
  }

  /* 3. reduce -> accumulator: DEFINE_REG, init store before the reduce loop, load+store inside, load after */
  const uop *sum = parse(ctx,
                         "(kernel rowsum (let o (buf 0 float32 8)) (let a (buf 1 float32 128))"
                         " (let r0 (range 0 8 loop)) (let r1000 (range 1000 16 reduce))"
                         " (sink (store (index o r0) (reduce add (load (index a (+ (* r0 16) r1000))) r1000) r0)))");
  CHECK_OK(cc_compile_source(ctx, sum, &c, &(cc_options){.noopt = true}, &p));
  if (p) {
    CHECK_EQ_INT(count_op(p, UOP_DEFINE_REG), 1);
    CHECK_EQ_INT(count_op(p, UOP_RANGE), 2);
    CHECK_EQ_INT(count_op(p, UOP_REDUCE), 0);
    size_t outer = index_of(p, UOP_RANGE, 0), inner = index_of(p, UOP_RANGE, outer + 1);
    CHECK(outer != SIZE_MAX && inner != SIZE_MAX && p->linear[inner]->arg.i == 1000);
    /* the init store: between the two RANGEs, storing the constant 0 into the register */
    size_t init = index_of(p, UOP_STORE, outer);
    CHECK(init < inner && uop_is_const(p->linear[init]->src[1]) && p->linear[init]->src[1]->arg.f == 0.0);
    CHECK(p->linear[init]->src[0]->src[0]->op == UOP_DEFINE_REG);
    /* inside: a LOAD of the register and a STORE back, then ENDRANGE, then the result LOAD */
    size_t upd = index_of(p, UOP_STORE, inner), end = index_of(p, UOP_ENDRANGE, inner);
    CHECK(upd < end && p->linear[upd]->src[0]->src[0]->op == UOP_DEFINE_REG);
    size_t fin = index_of(p, UOP_LOAD, end);
    CHECK(fin != SIZE_MAX && p->linear[fin]->src[0]->src[0]->op == UOP_DEFINE_REG);
    size_t out = index_of(p, UOP_STORE, fin);
    CHECK(out != SIZE_MAX && p->linear[out]->src[0]->src[0]->op == UOP_DEFINE_GLOBAL);
    cc_program_free(p);
  }

  /* 4. index lowering: int32 normally, int64 when a bound exceeds 2^31 */
  const uop *big = parse(ctx,
                         "(kernel big (let o (buf 0 int8 3221225472)) (let a (buf 1 int8 3221225472))"
                         " (let r0 (range 0 3221225472 loop))"
                         " (sink (store (index o r0) (+ (load (index a r0)) (const 1 int8)) r0)))");
  CHECK_OK(cc_compile_source(ctx, big, &c, &(cc_options){.noopt = true}, &p));
  if (p) {
    size_t r = index_of(p, UOP_RANGE, 0);
    CHECK(r != SIZE_MAX && p->linear[r]->dtype.scalar == UOP_INT64);
    CHECK(strstr(p->source, "long long ridx0") != NULL && strstr(p->source, "3221225472ll") != NULL);
    cc_program_free(p);
  }
  /* per node: split over 2 threads, gidx0*1610612736 (<= 1610612736) and ridx0 (< 1610612736) fit int32; only
   * their sum, the element index up to 3221225471, needs int64 */
  cc_opt thread2 = {.op = CC_OPT_THREAD, .axis = 0, .amount = 2};
  cc_target c2;
  CHECK_OK(cc_target_get("c", 2, &c2));
  CHECK_OK(cc_compile_source(ctx, big, &c2, &(cc_options){.opts = &thread2, .nopts = 1}, &p));
  if (p) {
    size_t r = index_of(p, UOP_RANGE, 0), mul = index_of(p, UOP_MUL, 0), add = index_of(p, UOP_ADD, 0);
    CHECK(r != SIZE_MAX && p->linear[r]->dtype.scalar == UOP_INT32 && p->linear[r]->arg.i == 0);
    CHECK(mul != SIZE_MAX && p->linear[mul]->dtype.scalar == UOP_INT32);
    CHECK(add != SIZE_MAX && p->linear[add]->dtype.scalar == UOP_INT64);
    CHECK(strstr(p->source, "for (int ridx0 = 0; ridx0 < 1610612736; ridx0++)") != NULL);
    CHECK(strstr(p->source, "long long alu") != NULL);
    hcq_status st = cc_compile_binary(&c2, p); /* the mixed-width source is valid C */
    if (st && hcq_status_code(st) != HCQ_CODE_UNSUPPORTED) CHECK_OK(st);
    else hcq_status_free(st);
    cc_program_free(p);
  }
  CHECK_OK(cc_compile_source(ctx, sum, &c, &(cc_options){.noopt = true}, &p));
  if (p) {
    size_t r = index_of(p, UOP_RANGE, 0);
    CHECK(r != SIZE_MAX && p->linear[r]->dtype.scalar == UOP_INT32);
    cc_program_free(p);
  }

  /* 5. THREAD range -> SPECIAL gidx0 = core_id; global_size[0] = 4 */
  const uop *thr = parse(ctx,
                         "(kernel thr (let o (buf 0 float32 64)) (let t (range 0 4 thread)) (let r1 (range 1 16 loop))"
                         " (sink (store (index o (+ (* t 16) r1)) 1.0 t r1)))");
  CHECK_OK(cc_compile_source(ctx, thr, &c, &(cc_options){.noopt = true}, &p));
  if (p) {
    CHECK_EQ_INT(count_op(p, UOP_SPECIAL), 1);
    CHECK_EQ_INT(count_op(p, UOP_RANGE), 1);
    int64_t g = 0;
    CHECK((g = cc_launch_const(p->desc.global[0])) == 4);
    CHECK(strstr(p->source, "int gidx0 = core_id;") != NULL);
    cc_program_free(p);
  }

  /* 6. explicit opts go to the optimizer (compiler/opts.c), which refuses invalid ones */
  cc_opt up = {CC_OPT_UPCAST, 0, 4}, bad_up = {CC_OPT_UPCAST, 1, 4};
  CHECK_OK(cc_compile_source(ctx, sum, &c, &(cc_options){.opts = &up, .nopts = 1}, &p));
  if (p) {
    CHECK_EQ_INT(p->napplied_opts, 1);
    cc_program_free(p);
  }
  CHECK_ERR(cc_compile_source(ctx, sum, &c, &(cc_options){.opts = &bad_up, .nopts = 1}, &p), HCQ_CODE_INVALID,
            "upcast is for GLOBAL/LOCAL/LOOP axes");
  /* GPU targets render too (render_ptx_test.c checks the PTX itself) */
  CHECK_OK(cc_compile_source(ctx, sum, &ptx, &(cc_options){.noopt = true}, &p));
  if (p) {
    CHECK(strstr(p->source, ".visible .entry rowsum(") != NULL);
    cc_program_free(p);
    p = NULL;
  }

  /* 7. opts parsing */
  cc_opt *opts = NULL;
  size_t n = 0;
  CHECK_OK(cc_opts_parse(" UPCAST:0:4, THREAD:1:8 ,UNROLL:0:0", &opts, &n));
  CHECK_EQ_INT(n, 3);
  if (n == 3) {
    CHECK(opts[0].op == CC_OPT_UPCAST && opts[0].axis == 0 && opts[0].amount == 4);
    CHECK(opts[1].op == CC_OPT_THREAD && opts[1].axis == 1 && opts[1].amount == 8);
    CHECK(opts[2].op == CC_OPT_UNROLL && opts[2].amount == 0);
  }
  free(opts);
  CHECK_OK(cc_opts_parse("", &opts, &n));
  CHECK_EQ_INT(n, 0);
  free(opts);
  CHECK_ERR(cc_opts_parse("UPCAST:0:4,FOO:1:2", &opts, &n), HCQ_CODE_PARSE, "item 2 at column 12");
  CHECK_ERR(cc_opts_parse("UPCAST:x:4", &opts, &n), HCQ_CODE_PARSE, "axis");
  CHECK_ERR(cc_opts_parse("UPCAST:0:4;", &opts, &n), HCQ_CODE_PARSE, "expected ','");
  CHECK_EQ_STR(cc_opt_name(CC_OPT_GROUPTOP), "GROUPTOP");
  /* formatting is the inverse: every op, extreme axes and amounts, none */
  cc_opt all[CC_OPT_COUNT + 2];
  for (int i = 0; i < CC_OPT_COUNT; i++) all[i] = (cc_opt){(cc_opt_op)i, i * 7 % 5, (int64_t)i * 3};
  all[CC_OPT_COUNT] = (cc_opt){CC_OPT_UPCAST, 1000, INT32_MAX}; /* the largest the parser takes */
  all[CC_OPT_COUNT + 1] = (cc_opt){CC_OPT_KBLOCK, 0, 0};
  char *text = cc_opts_format(all, CC_OPT_COUNT + 2);
  CHECK(text != NULL);
  CHECK_OK(cc_opts_parse(text ? text : "", &opts, &n));
  CHECK_EQ_INT(n, CC_OPT_COUNT + 2);
  for (size_t i = 0; opts && i < n && i < CC_OPT_COUNT + 2; i++)
    CHECK(opts[i].op == all[i].op && opts[i].axis == all[i].axis && opts[i].amount == all[i].amount);
  CHECK(text && strstr(text, "UPCAST:1000:2147483647,KBLOCK:0:0") != NULL);
  free(opts);
  free(text);
  text = cc_opts_format(NULL, 0);
  CHECK_EQ_STR(text ? text : "(null)", "");
  free(text);
  text = cc_opts_format((const cc_opt[]){{CC_OPT_UPCAST, 0, 4}, {CC_OPT_THREAD, 1, 8}}, 2);
  CHECK_EQ_STR(text ? text : "(null)", "UPCAST:0:4,THREAD:1:8");
  free(text);

  /* 8. bad input: not a SINK */
  CHECK_ERR(cc_compile_source(ctx, uop_index_const(ctx, 3), &c, NULL, &p), HCQ_CODE_INVALID, "expected SINK");

  /* 9. a declared buffer the AST never uses leaves a gap in the slots: the kernel compiles (callers pass buffers by
   * slot, params[i].slot), only the runtime description refuses it */
  const uop *gap = parse(ctx,
                         "(kernel gap (let o (buf 0 float32 4)) (let u (buf 1 float32 4)) (let a (buf 2 float32 4))"
                         " (let r0 (range 0 4 loop)) (sink (store (index o r0) (load (index a r0)) r0)))");
  CHECK_OK(cc_compile_source(ctx, gap, &c, &(cc_options){.noopt = true}, &p));
  if (p) {
    CHECK_EQ_INT(hcq_program_nbufs(&p->desc), 2);
    CHECK(p->desc.params[0].slot == 0 && p->desc.params[1].slot == 2);
    CHECK(p->desc.params[1].access == HCQ_ACCESS_READ);
    hcq_program d;
    CHECK_ERR(cc_program_describe(p, &c, &d), HCQ_CODE_UNSUPPORTED, "buffer slots are not 0..1");
    cc_program_free(p);
  }

  /* 10. CPU targets: the THREAD range becomes core_id's SPECIAL before expansion (while the graph is small), so the
   * expanded graph comes out with no THREAD range and gpudims has nothing left to rebuild; a GPU target still maps
   * it (to gidx0) in gpudims */
  const uop *mm = parse(ctx,
                        "(kernel mm (let c (buf 0 float32 4096)) (let a (buf 1 float32 4096)) (let b (buf 2 float32 4096))"
                        " (let r0 (range 0 64 loop)) (let r1 (range 1 64 loop)) (let k (range 2 64 reduce))"
                        " (sink (store (index c (+ (* r0 64) r1))"
                        " (reduce add (* (load (index a (+ (* r0 64) k))) (load (index b (+ (* k 64) r1)))) k) r0 r1)))");
  static const cc_opt tiled[] = {{CC_OPT_THREAD, 0, 4}, {CC_OPT_UPCAST, 1, 8}, {CC_OPT_UPCAST, 0, 4}, {CC_OPT_UNROLL, 0, 4}};
  CHECK_OK(cc_compile_source(ctx, mm, &c, &(cc_options){.opts = tiled, .nopts = 4, .dump = keep_dump}, &p));
  CHECK(after_expand && !strstr(after_expand, " thread)") && strstr(after_expand, "gidx0"));
  CHECK(after_reduce && after_gpudims && !strcmp(after_reduce, after_gpudims));
  if (p) CHECK(strstr(p->source, "core_id") != NULL);
  cc_program_free(p);
  p = NULL;
  CHECK_OK(cc_compile_source(ctx, mm, &ptx, &(cc_options){.opts = tiled + 1, .nopts = 1, .dump = keep_dump}, &p));
  CHECK(after_reduce && after_gpudims && strcmp(after_reduce, after_gpudims)); /* GLOBAL ranges -> gidx in gpudims */
  cc_program_free(p);
  free(after_expand);
  free(after_reduce);
  free(after_gpudims);

  uop_ctx_destroy(ctx);
  return testing_summary("pipeline");
}
