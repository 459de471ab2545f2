/* The AMD mock executor's shortcuts keep every check (direct PM4 dispatches of kernels assembled by llvm-mc-19):
 * - decoded programs are reused only while a fresh decode would give the same program: a changed code byte, or
 *   a word after the cached code that now decodes (the decode would run further), decodes again;
 * - the allocation that served the last access is tried first, yet an access just past its end (a hole there,
 *   as kfd_mock_range_ok's full lookup confirms) faults at exactly that address, by the first lane past it;
 * - memory freed after one dispatch faults in the next (nothing is remembered across dispatches). */
#include <inttypes.h>
#include <time.h>

#include "emulator_tests/amd_rt_test_util.h"
#include "emulator_tests/rdna3_test_util.h"

#define LIT 0x12345u

/* lane L stores LIT (a literal word, patched below) at s[0:1] + 4 L */
static const char *k_src = "v_lshlrev_b32 v1, 2, v0\n"
                           "v_mov_b32 v2, 0x12345\n"
                           "global_store_b32 v1, v2, s[0:1]\n"
                           "s_endpgm\n";

#define CHECK_STR_EMPTY(expr)                                                                                       \
  do {                                                                                                              \
    const char *got_ = (expr);                                                                                      \
    if (*got_) fprintf(stderr, "%s:%d: dispatch failed: %s\n", __FILE__, __LINE__, got_);                            \
    CHECK(*got_ == 0);                                                                                              \
  } while (0)

static uint64_t decodes(amd_mock_exec *x) {
  amd_mock_exec_stats s;
  amd_mock_exec_stats_get(x, &s);
  return s.decodes;
}

static int count_eq(const uint32_t *p, int n, uint32_t v) {
  int k = 0;
  for (int i = 0; i < n; i++) k += p[i] == v;
  return k;
}

int main(void) {
  if (!tu_have("llvm-mc-19")) {
    fprintf(stderr, "SKIP: llvm-mc-19 missing\n");
    return 77;
  }
  static uint8_t obj[16384];
  r3t_code c = {0};
  if (!r3t_asm(k_src, obj, sizeof obj, &c)) {
    CHECK(!"llvm-mc-19 assembles the kernel");
    return testing_summary("amd_mock_exec");
  }
  art_mock e;
  art_mock_up(&e, "gfx1100", true, false);
  amd_device *d = NULL;
  CHECK_OK(amd_device_open(e.k, 0, NULL, &d));
  amd_buf code, sig, out;
  CHECK_OK(amd_mem_alloc(d, 8192, AMD_MEM_VRAM_HOST, NULL, &code));
  CHECK_OK(amd_mem_alloc(d, 4096, AMD_MEM_GTT_UNCACHED, NULL, &sig));
  amd_buf spacer; /* allocated just before out and freed: a hole right after out (mappings grow down) */
  CHECK_OK(amd_mem_alloc(d, 4096, AMD_MEM_VRAM_HOST, NULL, &spacer));
  CHECK_OK(amd_mem_alloc(d, 4096, AMD_MEM_VRAM_HOST, NULL, &out));
  CHECK_OK(amd_mem_free(d, &spacer));
  volatile uint32_t *s = (volatile uint32_t *)(uintptr_t)sig.va;
  uint32_t *o = (uint32_t *)(uintptr_t)out.va, *text = (uint32_t *)(uintptr_t)(code.va + 256);
  size_t nw = c.text_B / 4;
  memcpy(text, c.text, c.text_B);
  text[nw] = 0xcc134001u, text[nw + 1] = 0; /* v_dot2_f32_f16: not decoded, so the decode stops here */
  size_t lit = 0;
  for (size_t i = 0; i < nw; i++)
    if (text[i] == LIT) lit = i;
  CHECK(lit > 0);

  /* program cache */
  uint64_t d0 = decodes(e.x);
  CHECK_STR_EMPTY(art_dispatch_wave32(d, e.x, code.va + 256, out.va, s));
  CHECK_EQ_INT(count_eq(o, 32, LIT), 32);
  CHECK_STR_EMPTY(art_dispatch_wave32(d, e.x, code.va + 256, out.va, s));
  CHECK_EQ_INT(decodes(e.x), d0 + 1); /* unchanged bytes: reused */
  text[lit] = 777;                  /* a changed byte: decoded again, and the new value stored */
  CHECK_STR_EMPTY(art_dispatch_wave32(d, e.x, code.va + 256, out.va, s));
  CHECK_EQ_INT(decodes(e.x), d0 + 2);
  CHECK_EQ_INT(count_eq(o, 32, 777), 32);
  text[nw] = 0xbfb00000u; /* s_endpgm where the decode stopped: a fresh decode runs on, so the cached one is stale */
  CHECK_STR_EMPTY(art_dispatch_wave32(d, e.x, code.va + 256, out.va, s));
  CHECK_EQ_INT(decodes(e.x), d0 + 3);
  CHECK_STR_EMPTY(art_dispatch_wave32(d, e.x, code.va + 256, out.va, s));
  CHECK_EQ_INT(decodes(e.x), d0 + 3);

  /* the allocation cache: lanes 0..15 store inside out (cached), lanes 16..31 past its end */
  uint64_t edge = out.va + out.size_B, base = edge - 64;
  CHECK(!kfd_mock_range_ok(e.m, 0, edge, 4)); /* the reference: the full lookup finds no allocation there */
  memset(o, 0, out.size_B);
  const char *got = art_dispatch_wave32(d, e.x, code.va + 256, base, s);
  CHECK_EQ_INT(count_eq(o + out.size_B / 4 - 16, 16, 777), 16); /* lanes 0..15 store before lane 16 faults */
  char want[64];
  snprintf(want, sizeof want, "write of address 0x%" PRIx64 " ", edge);
  if (!strstr(got, want)) fprintf(stderr, "got \"%s\", want \"%s\"\n", got, want);
  CHECK(strstr(got, want) && strstr(got, "lane 16 "));

  /* freed between dispatches: the next access faults */
  CHECK_OK(amd_mem_free(d, &out));
  CHECK_OK(amd_mem_free(d, &sig));
  CHECK_OK(amd_mem_free(d, &code));
  amd_device_close(d);
  d = NULL;
  CHECK_OK(amd_device_open(e.k, 0, NULL, &d)); /* a fresh queue: the one above may have stopped on the fault */
  amd_buf code2, sig2, out2;
  CHECK_OK(amd_mem_alloc(d, 8192, AMD_MEM_VRAM_HOST, NULL, &code2));
  CHECK_OK(amd_mem_alloc(d, 4096, AMD_MEM_GTT_UNCACHED, NULL, &sig2));
  CHECK_OK(amd_mem_alloc(d, 4096, AMD_MEM_VRAM_HOST, NULL, &out2));
  memcpy((void *)(uintptr_t)(code2.va + 256), c.text, c.text_B);
  s = (volatile uint32_t *)(uintptr_t)sig2.va;
  CHECK_STR_EMPTY(art_dispatch_wave32(d, e.x, code2.va + 256, out2.va, s));
  uint64_t gone = out2.va;
  CHECK_OK(amd_mem_free(d, &out2));
  bool still = kfd_mock_range_ok(e.m, 0, gone, 4);
  CHECK(!still);
  got = art_dispatch_wave32(d, e.x, code2.va + 256, gone, s);
  snprintf(want, sizeof want, "write of address 0x%" PRIx64 " ", gone);
  if (!strstr(got, want)) fprintf(stderr, "got \"%s\", want \"%s\"\n", got, want);
  CHECK(strstr(got, want) && strstr(got, "lane 0 "));
  CHECK_OK(amd_mem_free(d, &sig2));
  CHECK_OK(amd_mem_free(d, &code2));
  amd_device_close(d);
  art_mock_down(&e);
  return testing_summary("amd_mock_exec");
}
