/* Robustness fuzzer of the RDNA3 interpreter: code that is not what LLVM emits must give an error, never a crash,
 * an out-of-bounds host access (run under ASan in `make test SANITIZE=1`) or a hang. Programs are the code of
 * compiled example kernels with random words flipped, replaced or shuffled; each is loaded (decode errors are
 * fine and must name an offset) and, when it loads, printed instruction by instruction and run on one small
 * workgroup with an instruction budget, against a memory that holds only a small buffer (its address is in the
 * kernel arguments) so most accesses fault. Seed: HCQ_FUZZ_SEED; budget: HCQ_FUZZ_SECONDS (default 3). */
#include <time.h>

#include "compiler/examples_test_util.h"
#include "emulator_tests/rdna3_test_util.h"
#include "base/fuzz.h"

static uint32_t rnd32(void) { return (uint32_t)(fuzz_next() >> 16); }

typedef struct seed_code {
  uint32_t *w;
  size_t n;
} seed_code;

int main(void) {
  if (!tu_have("clang-19") || !tu_have("ld.lld-19")) {
    fprintf(stderr, "SKIP: clang-19 or ld.lld-19 missing\n");
    return 77;
  }
  fuzz_rng = fuzz_seed("rdna3_robust_fuzz", 0xb0b5);
  double budget = fuzz_seconds(3.0, NULL), t0 = fuzz_now_s();
  cc_target t;
  CHECK_OK(cc_target_get("amdgpu:gfx1100", 0, &t));
  static const char *const src[] = {"examples/softmax.uop", "examples/conv2d.uop", "examples/sum.uop",
                                    "examples/transcendental.uop", "examples/max_rows.uop"};
  seed_code seeds[5] = {0};
  int nseeds = 0;
  for (int i = 0; i < 5; i++) {
    uop_ctx *ctx = NULL;
    CHECK_OK(uop_ctx_create(&ctx));
    const uop *sink = NULL;
    cc_program *p = NULL;
    hcq_status st = cc_kernel_parse_file(ctx, src[i], &sink);
    if (!st) st = cc_compile_source(ctx, sink, &t, &(cc_options){0}, &p);
    if (!st) st = cc_compile_binary(&t, p);
    r3t_code c;
    if (!st) st = r3t_elf(p->binary, p->binary_size_B, p->symbol, &c);
    if (!st) {
      seeds[nseeds].n = c.text_B / 4;
      seeds[nseeds].w = malloc(c.text_B);
      memcpy(seeds[nseeds++].w, c.text, c.text_B);
    }
    CHECK_OK(st);
    cc_program_free(p);
    uop_ctx_destroy(ctx);
  }
  static uint32_t buf[64];
  uint64_t args[4] = {(uint64_t)(uintptr_t)buf, (uint64_t)(uintptr_t)buf, (uint64_t)(uintptr_t)buf, 0};
  r3t_mem m = {0};
  r3t_mem_add(&m, buf, sizeof buf);
  r3t_mem_add(&m, args, sizeof args);
  long cases = 0, loaded = 0, ran_ok = 0, faulted = 0;
  uint32_t *code = NULL;
  while (nseeds && (cases < 50 || fuzz_now_s() - t0 < budget) && !testing_failures) {
    const seed_code *sc = &seeds[rnd32() % (uint32_t)nseeds];
    size_t n = sc->n;
    free(code);
    code = malloc(n * 4);
    memcpy(code, sc->w, n * 4);
    int muts = 1 + (int)(rnd32() % 4);
    for (int k = 0; k < muts; k++) {
      size_t at = rnd32() % n;
      switch (rnd32() % 4) {
        case 0: code[at] ^= 1u << (rnd32() % 32); break;             /* a bit */
        case 1: code[at] = rnd32() << 16 ^ rnd32(); break;            /* a word */
        case 2: code[at] = code[rnd32() % n]; break;                  /* a word from elsewhere */
        default: code[at] = (code[at] & 0xffff0000u) | (rnd32() & 0xffff); break; /* an immediate/operand field */
      }
    }
    rdna3_kd kd = {.code_props = (1u << 3) | (1u << 10), .rsrc2 = (2u << 1) | (7u << 7) | (2u << 11),
                   .rsrc1 = 3u << 16 | 3u << 18, .group_segment_B = rnd32() % 2 ? 0 : 4096,
                   .private_segment_B = rnd32() % 2 ? 0 : 64};
    rdna3_program *p = NULL;
    hcq_status st = rdna3_load((const uint8_t *)code, n * 4, 0x10000, 0, &kd, &p);
    cases++;
    if (st) {
      CHECK(strstr(hcq_status_message(st), "offset") != NULL);
      hcq_status_free(st);
      continue;
    }
    loaded++;
    char line[256];
    bool printed = true;
    for (size_t i = 0; i < rdna3_count(p); i++) {
      rdna3_print(p, i, line, sizeof line);
      printed &= strlen(line) > 0 && strlen(line) < sizeof line - 1;
    }
    CHECK(printed);
    rdna3_dispatch d = {.groups = {2, 1, 1}, .block = {40, 2, 1}, .kernarg_va = (uint64_t)(uintptr_t)args,
                        .max_wave_insts = 20000, .max_total_insts = 200000};
    st = rdna3_run(p, &d, &(rdna3_mem_ops){.ctx = &m, .read = r3t_read, .write = r3t_write}, NULL);
    if (st) faulted++, hcq_status_free(st);
    else ran_ok++;
    rdna3_free(p);
  }
  free(code);
  for (int i = 0; i < nseeds; i++) free(seeds[i].w);
  printf("rdna3_robust_fuzz: %ld mutated programs: %ld refused at load, %ld ran to the end, %ld stopped with an error\n",
         cases, cases - loaded, ran_ok, faulted);
  CHECK(cases > 0);
  return testing_summary("rdna3_robust_fuzz");
}
