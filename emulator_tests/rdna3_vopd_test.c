/* The RDNA3 decoder on every VOPD opcode (LLVM VOPDInstructions.td, GFX11: X 0-12, Y also 16-18), in both halves:
 * each instruction is assembled by llvm-mc-19, decoded and printed, and must read back as the source text (which
 * is llvm-objdump-19's syntax). The fuzzer once met v_dual_fmaak_f32 printed as "v_dual_dual_fmaak_f32". */
#include "compiler/cc_test_util.h"
#include "emulator_tests/rdna3_test_util.h"

static const char *const X[] = {
    "v_dual_fmac_f32 v0, v1, v2", "v_dual_fmaak_f32 v0, v1, v2, 0x3f400000", "v_dual_fmamk_f32 v0, v1, 0x3f400000, v2",
    "v_dual_mul_f32 v0, v1, v2", "v_dual_add_f32 v0, v1, v2", "v_dual_sub_f32 v0, v1, v2",
    "v_dual_subrev_f32 v0, v1, v2", "v_dual_mul_dx9_zero_f32 v0, v1, v2", "v_dual_mov_b32 v0, v1",
    "v_dual_cndmask_b32 v0, v1, v2", "v_dual_max_f32 v0, v1, v2", "v_dual_min_f32 v0, v1, v2"};
/* the Y half's registers: other VGPR banks and the other destination parity than X's */
static const char *const Y[] = {
    "v_dual_fmac_f32 v7, v6, v5", "v_dual_fmaak_f32 v7, v6, v5, 0x3f400000", "v_dual_fmamk_f32 v7, v6, 0x3f400000, v5",
    "v_dual_mul_f32 v7, v6, v5", "v_dual_add_f32 v7, v6, v5", "v_dual_sub_f32 v7, v6, v5",
    "v_dual_subrev_f32 v7, v6, v5", "v_dual_mul_dx9_zero_f32 v7, v6, v5", "v_dual_mov_b32 v7, v6",
    "v_dual_cndmask_b32 v7, v6, v5", "v_dual_max_f32 v7, v6, v5", "v_dual_min_f32 v7, v6, v5",
    "v_dual_add_nc_u32 v7, v6, v5", "v_dual_lshlrev_b32 v7, v6, v5", "v_dual_and_b32 v7, v6, v5"};
#define NX (sizeof X / sizeof X[0])
#define NY (sizeof Y / sizeof Y[0])

int main(void) {
  if (!tu_have("llvm-mc-19")) {
    fprintf(stderr, "SKIP: llvm-mc-19 missing\n");
    return 77;
  }
  static char src[8192], want[NX + NY][160];
  size_t n = 0, k = 0;
  for (size_t i = 0; i < NX; i++) snprintf(want[k++], sizeof want[0], "%s :: %s", X[i], Y[3]);
  for (size_t i = 0; i < NY; i++) snprintf(want[k++], sizeof want[0], "%s :: %s", X[3], Y[i]);
  for (size_t i = 0; i < k; i++) n += (size_t)snprintf(src + n, sizeof src - n, "%s\n", want[i]);
  snprintf(src + n, sizeof src - n, "s_endpgm\n");
  static uint8_t obj[65536];
  r3t_code c;
  CHECK(r3t_asm(src, obj, sizeof obj, &c));
  rdna3_program *p = NULL;
  rdna3_kd kd = {.code_props = 1u << 10};
  if (c.text) CHECK_OK(rdna3_load(c.text, c.text_B, 0, 0, &kd, &p));
  if (p) {
    CHECK_EQ_INT(rdna3_count(p), k + 1);
    for (size_t i = 0; i < k && i < rdna3_count(p); i++) {
      char got[256];
      rdna3_print(p, i, got, sizeof got);
      r3t_norm(got);
      if (strcmp(got, want[i])) fprintf(stderr, "decoded: %s\nsource:  %s\n", got, want[i]);
      CHECK_EQ_STR(got, want[i]);
    }
  }
  rdna3_free(p);
  return testing_summary("rdna3_vopd");
}
