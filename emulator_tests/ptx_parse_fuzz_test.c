/* Robustness fuzzer of the PTX interpreter: valid kernels (the instruction kernels and two compiled examples) are
 * mutated (byte ranges deleted, PTX punctuation and tokens inserted, lines duplicated, swapped or dropped, the
 * text truncated) and parsed; what parses is launched on small checked buffers with a watchdog. Every outcome must
 * be a status, never a crash, a hang or a sanitizer report (the suite runs this under ASan+UBSan too), and every
 * parse error must name a line. Seed: HCQ_FUZZ_SEED (default fixed); budget: HCQ_FUZZ_SECONDS (default 3). */
#include "compiler/examples_test_util.h"
#include "emulator_tests/ptx_test_kernels.h"
#include "emulator_tests/ptx_test_util.h"
#include "base/fuzz.h"

#define MAX_SEEDS (PTK_COUNT + 4)
static char *g_seeds[MAX_SEEDS];
static size_t g_nseeds;

static const char *const TOKENS[] = {";", "{", "}", "[", "]", ",", "%r1", "%rd3", "%p1", "%f2", "@%p0 ", "@!%p1 ", ".v4",
                                     ".f16", ".s8", ".rn", ".rzi", ".shared", ".global", ".param", "0f7FC00000",
                                     "0d", "-1", "0xFFFFFFFF", "bra ", "L:", "bar.sync 0;", "ret;", "+", "\n",
                                     "//", "/*", "*/", "\"", "<99999999>", "[%rd1+-8]", "{%f1, %f2}", "2147483648",
                                     ".reg .b32 %r<3>;", ".shared .align 4 .b8 s[8];", "ld.shared.u32 %r1, [s+4];",
                                     "st.global.v2.u64 [%rd4], {%rd5, %rd7};", ".maxntid 1", "exit;", "%tid.y"};

static void mutate(char *out, size_t cap, const char *src) {
  size_t n = strlen(src) < cap - 1 ? strlen(src) : cap - 1;
  memcpy(out, src, n);
  out[n] = 0;
  for (int k = 0, m = 1 + (int)fuzz_rnd(4); k < m; k++) {
    n = strlen(out);
    uint32_t op = fuzz_rnd(6);
    size_t at = fuzz_rnd((uint32_t)n + 1);
    if (op == 0 && n) { /* delete a range */
      size_t len = 1 + fuzz_rnd(16);
      if (at + len > n) len = n - at;
      memmove(out + at, out + at + len, n - at - len + 1);
    } else if (op <= 2) { /* insert a token or a random byte */
      char tok[64];
      if (fuzz_rnd(4)) snprintf(tok, sizeof tok, "%s", TOKENS[fuzz_rnd(sizeof TOKENS / sizeof TOKENS[0])]);
      else tok[0] = (char)(1 + fuzz_rnd(255)), tok[1] = 0;
      size_t tl = strlen(tok);
      if (n + tl + 1 >= cap) continue;
      memmove(out + at + tl, out + at, n - at + 1);
      memcpy(out + at, tok, tl);
    } else if (op == 3) { /* truncate */
      out[at] = 0;
    } else { /* duplicate or drop a line */
      char *ls = out + at;
      while (ls > out && ls[-1] != '\n') ls--;
      char *le = strchr(ls, '\n');
      if (!le) continue;
      size_t ll = (size_t)(le - ls) + 1;
      if (op == 4) memmove(ls, le + 1, strlen(le + 1) + 1);
      else if (n + ll + 1 < cap) {
        memmove(ls + ll, ls, n - (size_t)(ls - out) + 1);
      }
    }
  }
}

static int64_t g_cases, g_parsed, g_ran, g_run_ok;

static void one(void) {
  static char text[65536];
  mutate(text, sizeof text, g_seeds[fuzz_rnd((uint32_t)g_nseeds)]);
  ptx_module *m = NULL;
  hcq_status st = ptx_module_parse(text, strlen(text), &m);
  g_cases++;
  if (st) {
    const char *msg = hcq_status_message(st);
    if (!strstr(msg, "line ") && !strstr(msg, "no .entry")) {
      fprintf(stderr, "parse error without a line: %s\n", msg);
      CHECK(!"parse error names a line");
    }
    hcq_status_free(st);
    return;
  }
  g_parsed++;
  const ptx_entry_info *e;
  CHECK_OK(ptx_module_entry(m, NULL, &e));
  static uint8_t a[256], b[256];
  ptu_mem mem = {.n = 0};
  uint64_t va[2] = {ptu_add(&mem, a, sizeof a), ptu_add(&mem, b, sizeof b)};
  uint8_t params[256] = {0};
  for (size_t i = 0; i < e->nparams && e->params[i].offset_B + 8 <= sizeof params; i++)
    memcpy(params + e->params[i].offset_B, &va[i & 1], e->params[i].size_B < 8 ? e->params[i].size_B : 8);
  ptx_launch l = {.grid = {1 + fuzz_rnd(2), 1, 1}, .block = {1 + fuzz_rnd(64), 1 + fuzz_rnd(2), 1}, .params = params,
                  .params_size_B = e->params_size_B <= sizeof params ? e->params_size_B : sizeof params,
                  .mem = &(ptx_mem_ops){&mem, ptu_read, ptu_write}, .max_warp_instructions = 20000};
  st = ptx_launch_run(m, &l, NULL);
  g_ran++;
  g_run_ok += st == HCQ_OK;
  hcq_status_free(st);
  ptx_module_free(m);
}

int main(void) {
  fuzz_rng = fuzz_seed("ptx_parse_fuzz", 0x7a3b9c1d2e4f5061ull);
  double budget = fuzz_seconds(3.0, NULL), t0 = fuzz_now_s();
  for (size_t i = 0; i < PTK_COUNT; i++) {
    size_t n = strlen(PTK_HEAD) + strlen(PTK_KERNELS[i].body) + strlen(PTK_TAIL) + 1;
    g_seeds[g_nseeds] = malloc(n);
    snprintf(g_seeds[g_nseeds++], n, "%s%s%s", PTK_HEAD, PTK_KERNELS[i].body, PTK_TAIL);
  }
  static const char *const EXAMPLES[] = {"examples/softmax.uop", "examples/matmul.uop"};
  cc_target t;
  CHECK_OK(cc_target_get("ptx:sm_90", 0, &t));
  for (size_t i = 0; i < 2; i++) {
    uop_ctx *ctx = NULL;
    CHECK_OK(uop_ctx_create(&ctx));
    const uop *sink = NULL;
    cc_program *p = NULL;
    hcq_status st = cc_kernel_parse_file(ctx, EXAMPLES[i], &sink);
    if (!st) st = cc_compile_source(ctx, sink, &t, &(cc_options){0}, &p);
    CHECK_OK(st);
    if (p) g_seeds[g_nseeds++] = strdup(p->source);
    cc_program_free(p);
    uop_ctx_destroy(ctx);
  }
  while (fuzz_now_s() - t0 < budget) one();
  printf("ptx_parse_fuzz: %lld mutants, %lld parsed, %lld launched (%lld ran to the end), %.1f s\n",
         (long long)g_cases, (long long)g_parsed, (long long)g_ran, (long long)g_run_ok, fuzz_now_s() - t0);
  for (size_t i = 0; i < g_nseeds; i++) free(g_seeds[i]);
  CHECK(g_cases > 0);
  return testing_summary("ptx_parse_fuzz");
}
