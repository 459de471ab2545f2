/* Scratch (private segment) on the AMD mock, end to end:
 * - sizing: amd_scratch_plan on the mock gfx1100 topology gives what tinygrad's ops_amd.py (8006595cde,
 *   _ensure_has_local_memory) emits for 128 bytes per lane (a 0xc00000-byte ring, TMPRING_SIZE 0x10200); a request
 *   that overflows TMPRING_SIZE.WAVESIZE is refused;
 * - kernels that spill (matmul_wide_small with big UPCASTs: 36, 92 and the heuristic's 40 bytes per lane, so the
 *   ring grows and is reused) run on amd:0 and match the reference interpreter;
 * - direct PM4: a scratch store lands in the driver's ring at the mock's documented per-wave/per-lane address, and
 *   a dispatch whose scratch was not provided (no TMPRING/base, a ring too small, a freed ring) is refused loudly,
 *   and a lane overrunning its share of WAVESIZE is a page fault. */
#include <time.h>

#include "amd/amd_scratch.h"
#include "emulator_tests/amd_rt_test_util.h"
#include "emulator_tests/rdna3_test_util.h"

static void test_plan(void) {
  art_mock e;
  art_mock_up(&e, "gfx1100", false, false);
  amd_device *d = NULL;
  CHECK_OK(amd_device_open(e.k, 0, NULL, &d));
  if (d) {
    uint64_t size_B = 0;
    uint32_t tmpring = 0;
    CHECK_OK(amd_scratch_plan(&d->node, d->arch, 128, &size_B, &tmpring));
    CHECK(size_B == 0xc00000u);
    CHECK_EQ_INT(tmpring, 0x10200);
    CHECK_ERR(amd_scratch_plan(&d->node, d->arch, 1u << 20, &size_B, &tmpring), HCQ_CODE_UNSUPPORTED, "WAVESIZE");
    amd_device_close(d);
  }
  art_mock_down(&e);
}

static void test_spilling_kernels(void) {
  hcq_rt_device *dev;
  CHECK_OK(hcq_rt_open("amd:0", &dev));
  const char *path = "examples/matmul_wide_small.uop";
  const char *opts[] = {"UPCAST:0:16,UPCAST:1:16", "LOCAL:0:4,UPCAST:0:16,UPCAST:1:16,UNROLL:0:16",
                        "UPCAST:0:16,UPCAST:1:16", NULL};
  FILE *f = fopen(path, "rb");
  char text[4096] = {0};
  size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
  if (f) fclose(f);
  CHECK(n > 0);
  for (int i = 0; i < 4; i++) {
    uop_ctx *ctx = NULL;
    CHECK_OK(uop_ctx_create(&ctx));
    const uop *sink = NULL;
    CHECK_OK(cc_kernel_parse_file(ctx, path, &sink));
    etu_run r = {0};
    char what[200];
    snprintf(what, sizeof what, "%s (%s)", path, opts[i] ? opts[i] : "heuristic");
    art_result res = sink ? art_run(dev, ctx, sink, text, opts[i], (size_t)2 << 20, what, &r) : ART_FAILED;
    printf("%-70s %s: %zu compared, %zu mismatches\n", what, res == ART_OK ? "ok" : "FAILED", r.checked, r.bad);
    CHECK(res == ART_OK && r.checked >= 65536); /* c, plus the inputs a and b */
    uop_ctx_destroy(ctx);
  }
  hcq_rt_close(dev);
}

static void test_direct(void) {
  static uint8_t obj[16384];
  r3t_code c = {0};
  /* every lane stores its work-item id at private offset 4 */
  if (!r3t_asm("scratch_store_b32 off, v0, off offset:4\ns_endpgm\n", obj, sizeof obj, &c)) {
    CHECK(!"llvm-mc-19 assembles the scratch kernel");
    return;
  }
  static uint8_t obj2[16384];
  r3t_code c2 = {0}; /* one dword past the 8 bytes per lane the ring is planned for below */
  if (!r3t_asm("scratch_store_b32 off, v0, off offset:8\ns_endpgm\n", obj2, sizeof obj2, &c2)) {
    CHECK(!"llvm-mc-19 assembles the overrunning kernel");
    return;
  }
  art_mock e;
  art_mock_up(&e, "gfx1100", true, false);
  enum { BAD_NONE, BAD_SMALL, BAD_FREED, BAD_OVERRUN, GOOD };
  for (int t = BAD_NONE; t <= GOOD; t++) {
    amd_device *d = NULL;
    CHECK_OK(amd_device_open(e.k, 0, NULL, &d)); /* a refusal stops the queue: a fresh device per case */
    if (!d) break;
    amd_buf code, sig, ring = {0};
    CHECK_OK(amd_mem_alloc(d, 8192, AMD_MEM_VRAM_HOST, NULL, &code));
    CHECK_OK(amd_mem_alloc(d, 4096, AMD_MEM_GTT_UNCACHED, NULL, &sig));
    const r3t_code *prog = t == BAD_OVERRUN ? &c2 : &c;
    memcpy((void *)(uintptr_t)(code.va + 256), prog->text, prog->text_B);
    uint64_t size_B = 0;
    uint32_t tmpring = 0;
    CHECK_OK(amd_scratch_plan(&d->node, d->arch, 8, &size_B, &tmpring));
    if (t != BAD_NONE) CHECK_OK(amd_mem_alloc(d, t == BAD_SMALL ? size_B / 2 : size_B, AMD_MEM_VRAM, NULL, &ring));
    uint64_t base = ring.va;
    if (t == BAD_FREED) CHECK_OK(amd_mem_free(d, &ring));
    amd_dispatch_desc kd = {.code_va = code.va + 256, .rsrc2 = AMD_GFX11_COMPUTE_PGM_RSRC2__SCRATCH_EN_MASK,
                            .wave32 = true, .local = {64, 1, 1}, .grid = {2, 1, 1},
                            .tmpring_size = t == BAD_NONE ? 0 : tmpring, .scratch_va = base};
    const char *got = art_dispatch_wait(d, e.x, &kd, (volatile uint32_t *)(uintptr_t)sig.va);
    static const char *const want[] = {"RSRC2.SCRATCH_EN with no scratch", "of a live allocation there",
                                       "bytes of a live allocation there",
                                       "scratch write (the private segment is 8 bytes per lane) of address 0x8", ""};
    if (t == GOOD ? *got != 0 : !strstr(got, want[t])) fprintf(stderr, "case %d: got \"%s\"\n", t, got);
    CHECK(t == GOOD ? *got == 0 : strstr(got, want[t]) != NULL);
    if (t == GOOD) { /* the documented model: slot = global wave, lane L at slot*32*lane_B + L*lane_B */
      uint32_t wsize = (tmpring & AMD_GFX11_COMPUTE_TMPRING_SIZE__WAVESIZE_MASK) >> AMD_GFX11_COMPUTE_TMPRING_SIZE__WAVESIZE__SHIFT;
      uint64_t lane_B = wsize * 256u / 32u;
      int bad = 0;
      for (uint32_t g = 0; g < 2; g++)
        for (uint32_t wv = 0; wv < 2; wv++)
          for (uint32_t l = 0; l < 32; l++) {
            uint32_t v;
            memcpy(&v, (const void *)(uintptr_t)(base + ((g * 2 + wv) * 32 + l) * lane_B + 4), 4);
            bad += v != wv * 32 + l;
          }
      CHECK_EQ_INT(bad, 0);
    }
    if (t != BAD_FREED && ring.va) CHECK_OK(amd_mem_free(d, &ring));
    CHECK_OK(amd_mem_free(d, &sig));
    CHECK_OK(amd_mem_free(d, &code));
    amd_device_close(d);
  }
  art_mock_down(&e);
}

int main(void) {
  if (!tu_have("clang-19") || !tu_have("ld.lld-19") || !tu_have("llvm-mc-19")) {
    fprintf(stderr, "SKIP: clang-19, ld.lld-19 or llvm-mc-19 missing\n");
    return 77;
  }
  test_plan();
  test_direct();
  CHECK_OK(amd_mock_install(kif_default()));
  test_spilling_kernels();
  amd_mock_uninstall();
  return testing_summary("amd_scratch");
}
