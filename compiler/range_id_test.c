/* Range ids are names, not an order: the example kernels with their range ids redrawn at random (huge ones up to
 * INT64_MAX, reduce ids below loop ids, loop ids in reverse) compile through the whole pipeline
 * (heuristic opts, which split ranges and make new ids, and --noopt) and run natively equal to the reference
 * interpreter; on a GPU target the GROUP opts (new reduce ids) compile. Two nested ranges sharing one id, and an
 * inner loop whose END is computed outside all loops, run right too. Seed: HCQ_FUZZ_SEED (printed on failure). */
#include <inttypes.h>

#include "compiler/opt_test_util.h"
#include "base/testing.h"

static uint64_t g_rng;
static uint64_t rnd64(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

static int64_t draw_id(void) {
  static const int64_t POOL[] = {INT64_MAX, INT64_MAX - 1, INT64_MAX - 2, 0, 1, 2, 3, 999, 1000, 1001, 2000,
                                 (int64_t)1 << 31, ((int64_t)1 << 31) - 1};
  if (rnd64() % 3) return POOL[rnd64() % (sizeof POOL / sizeof POOL[0])];
  return (int64_t)(rnd64() >> 1);
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  return strdup(buf);
}

/* text with every "(range ID" given a fresh distinct id (ids[k] for the k-th range, in text order) */
static char *renumber(const char *text, const int64_t *ids, int *nranges) {
  size_t cap = strlen(text) + 64 * 32;
  char *out = malloc(cap), *o = out;
  int k = 0;
  for (const char *p = text; *p;) {
    if (strncmp(p, "(range ", 7) == 0 && k < 32) {
      o += sprintf(o, "(range %" PRId64, ids[k++]);
      p += 7;
      while (*p == '-' || (*p >= '0' && *p <= '9')) p++;
    } else {
      *o++ = *p++;
    }
  }
  *o = 0;
  *nranges = k;
  return out;
}

static const char *const EXAMPLES[] = {"matmul", "softmax", "sum", "max_rows", "conv2d", "transpose", "masked_store",
                                       "saxpy", "add"};

static void one(uop_ctx *ctx, const cc_target *c, const cc_target *gpu, const char *name, const char *text,
                bool have_cc, uint64_t seed) {
  int64_t ids[32];
  int n = 0;
  free(renumber(text, ids, &n)); /* count the ranges */
  int mode = (int)(rnd64() % 3);
  for (int i = 0; i < n; i++) {
    bool fresh;
    do { /* distinct */
      ids[i] = mode == 0 ? draw_id() : mode == 1 ? INT64_MAX - i : 5000 - 1000 * i; /* descending: reduce < loop */
      fresh = true;
      for (int j = 0; j < i; j++) fresh &= ids[j] != ids[i];
    } while (!fresh);
  }
  char *t = renumber(text, ids, &n);
  const uop *k = NULL;
  hcq_status st = cc_kernel_parse(ctx, t, strlen(t), name, &k);
  CHECK_OK(st);
  uop_var_val vals[1] = {{"n", 1000}};
  for (int v = 0; k && v < 2; v++) {
    cc_options noopt = {.noopt = true};
    size_t bad = 0;
    if (have_cc) {
      st = otu_native_same(ctx, k, c, v ? &noopt : NULL, vals, 1, seed, &bad, NULL);
      CHECK_OK(st);
      if (!st) CHECK_EQ_INT(bad, 0);
    } else {
      cc_program *p = NULL;
      CHECK_OK(cc_compile_source(ctx, k, c, v ? &noopt : NULL, &p));
      cc_program_free(p);
    }
    cc_program *p = NULL;
    CHECK_OK(cc_compile_source(ctx, k, gpu, v ? &noopt : NULL, &p));
    cc_program_free(p);
  }
  if (k && (strcmp(name, "sum") == 0 || strcmp(name, "max_rows") == 0)) { /* GROUP makes new reduce ids */
    cc_opt g = {.op = CC_OPT_GROUP, .axis = 0, .amount = 16};
    cc_options o = {.opts = &g, .nopts = 1};
    cc_program *p = NULL;
    CHECK_OK(cc_compile_source(ctx, k, gpu, &o, &p));
    cc_program_free(p);
  }
  if (testing_failures) {
    fprintf(stderr, "kernel %s with ids", name);
    for (int i = 0; i < n; i++) fprintf(stderr, " %" PRId64, ids[i]);
    fprintf(stderr, "\n");
  }
  free(t);
}

int main(void) {
  char dir[] = "/tmp/hcq-rangeid-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  const char *env = getenv("HCQ_FUZZ_SEED");
  uint64_t seed = env ? strtoull(env, NULL, 0) : 0x1d5;
  g_rng = seed ^ 0x9e3779b97f4a7c15ull;
  if (!g_rng) g_rng = 1;
  bool have_cc = tu_have(cc_toolchain_cc());
  cc_target c, gpu;
  CHECK_OK(cc_target_get("c", 4, &c));
  CHECK_OK(cc_target_get("ptx:sm_90", 0, &gpu));
  for (int round = 0; round < 2 && !testing_failures; round++)
    for (size_t e = 0; e < sizeof EXAMPLES / sizeof EXAMPLES[0] && !testing_failures; e++) {
      char path[200];
      snprintf(path, sizeof path, "examples/%s.uop", EXAMPLES[e]);
      char *text = read_text(path);
      CHECK(text != NULL);
      if (!text) continue;
      uop_ctx *ctx = NULL;
      CHECK_OK(uop_ctx_create(&ctx));
      one(ctx, &c, &gpu, EXAMPLES[e], text, have_cc, seed);
      uop_ctx_destroy(ctx);
      free(text);
    }
  /* two nested ranges named alike: the inner one must not shadow the outer one's uses */
  const char *dup = "(kernel dup (let c (buf 0 int32 64)) (let a (range 5 8)) (let b (range 5 8 reduce))\n"
                    " (sink (store (index c (* a 8)) (reduce add (cast int32 (+ a (* b 8))) b) a)))";
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *k = NULL;
  CHECK_OK(cc_kernel_parse(ctx, dup, strlen(dup), "dup", &k));
  cc_options noopt = {.noopt = true};
  size_t bad = 0;
  if (k && have_cc) {
    CHECK_OK(otu_native_same(ctx, k, &c, &noopt, NULL, 0, 1, &bad, NULL));
    CHECK_EQ_INT(bad, 0);
  }
  /* an inner loop (by id) whose END is computed outside every loop */
  const char *sym = "(kernel sym (let out (buf 0 int32 960)) (let in0 (buf 1 int32 192)) (let in2 (buf 2 int32 960))\n"
                    " (let n (var n 1 2 index)) (let r0 (range 5005 (* n 4))) (let r1 (range 4002 24)) (let r2 (range 3009 5))"
                    " (sink (store (index out (+ (+ (* r0 120) (* r1 5)) r2))\n (+ (load (index in0 (+ (* r0 24) r1)))"
                    " (* (load (index in2 (+ (+ (* r1 40) (* r0 5)) r2))) (load (index in0 (+ (* r0 24) r1))))) r0 r1 r2)))";
  CHECK_OK(cc_kernel_parse(ctx, sym, strlen(sym), "sym", &k));
  uop_var_val n4[1] = {{"n", 2}};
  for (int v = 0; k && have_cc && v < 2; v++) {
    CHECK_OK(otu_native_same(ctx, k, &c, v ? &noopt : NULL, n4, 1, 2, &bad, NULL));
    CHECK_EQ_INT(bad, 0);
  }
  uop_ctx_destroy(ctx);
  if (testing_failures) fprintf(stderr, "range_id: seed 0x%" PRIx64 " (HCQ_FUZZ_SEED)\n", seed);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
  return testing_summary("range_id");
}
