/* The AMD mock runs programs of more than 1 MiB of code (the decode used to stop at 1 MiB, so a branch past the
 * mark failed the load with "not the start of an instruction"): a kernel assembled by llvm-mc-19 of ~1.25 MiB,
 * straight-line s_nop up to just before 1 MiB, an s_branch across the 1 MiB mark over s_endpgm words (running
 * any of them ends the wave without a store), then the store every lane makes; a direct PM4 dispatch must store
 * the value. Then the code is cut short (a word that does not decode before the branch target): the load fails
 * naming the branch, not a limit. */
#include <time.h>

#include "emulator_tests/amd_rt_test_util.h"
#include "emulator_tests/rdna3_test_util.h"

#define KiB 1024
#define BRANCH_AT (1024 * KiB - 64 * KiB) /* byte offset of the s_branch */
#define TARGET_AT (1024 * KiB + 32 * KiB) /* byte offset of its target */
#define CODE_B (1280 * KiB)
#define NOT_DECODED 0xffffffffu /* an invalid gfx1100 encoding (llvm-mc-19 --disassemble: "invalid instruction encoding"), so the decode stops */

int main(void) {
  if (!tu_have("llvm-mc-19")) {
    fprintf(stderr, "SKIP: llvm-mc-19 missing\n");
    return 77;
  }
  char src[512];
  /* words: 1 (v_lshlrev) + 2 (v_mov with a literal) + nops = BRANCH_AT / 4 */
  snprintf(src, sizeof src,
           "v_lshlrev_b32 v1, 2, v0\n"
           "v_mov_b32 v2, 0x12345\n"
           ".fill %d, 4, 0xbf800000\n" /* s_nop 0 */
           "s_branch L\n"
           ".fill %d, 4, 0xbfb00000\n" /* s_endpgm */
           "L:\n"
           "global_store_b32 v1, v2, s[0:1]\n"
           "s_endpgm\n"
           ".fill %d, 4, 0xbf800000\n",
           BRANCH_AT / 4 - 3, (TARGET_AT - BRANCH_AT) / 4 - 1, (CODE_B - TARGET_AT) / 4 - 3);
  static uint8_t obj[CODE_B + 64 * KiB];
  r3t_code c = {0};
  if (!r3t_asm(src, obj, sizeof obj, &c)) {
    CHECK(!"llvm-mc-19 assembles the kernel");
    return testing_summary("amd_mock_bigcode");
  }
  CHECK_EQ_INT(c.text_B, CODE_B);
  const uint32_t *tw = (const uint32_t *)c.text;
  CHECK_EQ_INT(tw[BRANCH_AT / 4] >> 16, 0xbfa0); /* s_branch where planned (SOPP, gfx11 opcode 32) */
  CHECK_EQ_INT(tw[BRANCH_AT / 4] & 0xffff, (TARGET_AT - BRANCH_AT) / 4 - 1);

  art_mock e;
  art_mock_up(&e, "gfx1100", true, false);
  amd_device *d = NULL;
  CHECK_OK(amd_device_open(e.k, 0, NULL, &d));
  amd_buf code, sig, out;
  CHECK_OK(amd_mem_alloc(d, CODE_B + 64 * KiB, AMD_MEM_VRAM_HOST, NULL, &code));
  CHECK_OK(amd_mem_alloc(d, 4096, AMD_MEM_GTT_UNCACHED, NULL, &sig));
  CHECK_OK(amd_mem_alloc(d, 4096, AMD_MEM_VRAM_HOST, NULL, &out));
  volatile uint32_t *s = (volatile uint32_t *)(uintptr_t)sig.va;
  uint32_t *o = (uint32_t *)(uintptr_t)out.va, *text = (uint32_t *)(uintptr_t)code.va;
  memcpy(text, c.text, c.text_B);
  text[CODE_B / 4] = NOT_DECODED;

  const char *got = art_dispatch_wave32(d, e.x, code.va, out.va, s);
  if (*got) fprintf(stderr, "dispatch failed: %s\n", got);
  CHECK(*got == 0);
  int stored = 0;
  for (int i = 0; i < 32; i++) stored += o[i] == 0x12345u;
  CHECK_EQ_INT(stored, 32);

  /* the code ends between the branch and its target: the load fails, naming the branch and not a limit */
  text[(TARGET_AT - 8 * KiB) / 4] = NOT_DECODED;
  got = art_dispatch_wave32(d, e.x, code.va, out.va, s);
  if (!strstr(got, "not the start of an instruction") || strstr(got, "limit"))
    fprintf(stderr, "cut short: got \"%s\"\n", got);
  CHECK(strstr(got, "not the start of an instruction") && !strstr(got, "limit"));

  CHECK_OK(amd_mem_free(d, &out));
  CHECK_OK(amd_mem_free(d, &sig));
  CHECK_OK(amd_mem_free(d, &code));
  amd_device_close(d);
  art_mock_down(&e);
  return testing_summary("amd_mock_bigcode");
}
