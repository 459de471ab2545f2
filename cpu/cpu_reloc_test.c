/* Relocation encodings patched into plain buffers on any host, compared with hand-encoded instruction words
 * (A64 encodings from the Arm ARM: BL imm26 in bits 25:0; ADRP immlo 30:29 / immhi 23:5; ADD/LDR imm12 21:10
 * scaled by the access size; MOVK imm16 20:5). */
#include "cpu/cpu_reloc.h"

#include <elf.h>

#include "base/testing.h"

static uint32_t a64(uint32_t type, uint32_t insn, uint64_t P, uint64_t S, int64_t A, uint64_t G, hcq_status *out_st) {
  uint8_t buf[4];
  memcpy(buf, &insn, 4);
  cpu_reloc r = {.type = type, .loc = buf, .avail_B = 4, .P = P, .S = S, .A = A, .G = G};
  *out_st = cpu_reloc_apply(EM_AARCH64, &r);
  memcpy(&insn, buf, 4);
  return insn;
}

#define A64_OK(type, insn, P, S, A, G, want)                   \
  do {                                                         \
    hcq_status st_;                                            \
    uint32_t got_ = a64(type, insn, P, S, A, G, &st_);         \
    CHECK_OK(st_);                                             \
    CHECK_EQ_INT(got_, want);                                  \
  } while (0)

static void test_aarch64(void) {
  A64_OK(R_AARCH64_CALL26, 0x94000000u, 0x1000, 0x2000, 0, 0, 0x94000400u);  /* bl +0x1000 */
  A64_OK(R_AARCH64_CALL26, 0x94000000u, 0x1000, 0x0, 0, 0, 0x97fffc00u);     /* bl -0x1000 */
  A64_OK(R_AARCH64_JUMP26, 0x14000000u, 0x1000, 0x1008, 4, 0, 0x14000003u);  /* b +12 */
  A64_OK(R_AARCH64_ADR_PREL_PG_HI21, 0x90000000u, 0x10000, 0x12345678, 0, 0, 0xb00919a0u);
  A64_OK(R_AARCH64_ADD_ABS_LO12_NC, 0x91000000u, 0, 0x12345678, 0, 0, 0x9119e000u);
  A64_OK(R_AARCH64_LDST8_ABS_LO12_NC, 0x39400000u, 0, 0x12345678, 0, 0, 0x3959e000u);
  A64_OK(R_AARCH64_LDST16_ABS_LO12_NC, 0x79400000u, 0, 0x12345678, 0, 0, 0x794cf000u);
  A64_OK(R_AARCH64_LDST32_ABS_LO12_NC, 0xb9400000u, 0, 0x12345678, 0, 0, 0xb9467800u);
  A64_OK(R_AARCH64_LDST64_ABS_LO12_NC, 0xf9400000u, 0, 0x12345678, 0, 0, 0xf9433c00u);
  A64_OK(R_AARCH64_LDST128_ABS_LO12_NC, 0x3dc00000u, 0, 0x12345670, 0, 0, 0x3dc19c00u);
  A64_OK(R_AARCH64_MOVW_UABS_G1_NC, 0xf2a00000u, 0, 0x12345678, 0, 0, 0xf2a24680u); /* movk x0,#0x1234,lsl 16 */
  A64_OK(R_AARCH64_MOVW_UABS_G0_NC, 0xf2800000u, 0, 0x12345678, 0, 0, 0xf28acf00u); /* movk x0,#0x5678 */
  A64_OK(R_AARCH64_MOVW_UABS_G3, 0xf2e00000u, 0, 0xabcd000000000000ull, 0, 0, 0xf2f579a0u);
  A64_OK(R_AARCH64_ADR_GOT_PAGE, 0x90000000u, 0x1000, 0, 0, 0x5000, 0x90000020u);
  A64_OK(R_AARCH64_LD64_GOT_LO12_NC, 0xf9400000u, 0, 0, 0, 0x5ff8, 0xf947fc00u);
  A64_OK(R_AARCH64_CONDBR19, 0x54000000u, 0x1000, 0x1010, 0, 0, 0x54000080u); /* b.eq +16 */
  hcq_status st;
  a64(R_AARCH64_CALL26, 0x94000000u, 0, 0x8000000, 0, 0, &st); /* +128 MiB: one past the reach */
  CHECK_ERR(st, HCQ_CODE_INVALID, "R_AARCH64_CALL26");
  a64(R_AARCH64_MOVW_UABS_G0, 0xd2800000u, 0, 0x10000, 0, 0, &st);
  CHECK_ERR(st, HCQ_CODE_INVALID, "does not fit");
  a64(R_AARCH64_TLSLE_ADD_TPREL_HI12, 0x91000000u, 0, 0, 0, 0, &st);
  CHECK_ERR(st, HCQ_CODE_UNSUPPORTED, "type 549 (R_AARCH64_TLSLE_ADD_TPREL_HI12)");
  /* data relocations */
  uint8_t buf[8] = {0};
  cpu_reloc r = {.type = R_AARCH64_ABS64, .loc = buf, .avail_B = 8, .S = 0x1122334455667788ull, .A = 8};
  CHECK_OK(cpu_reloc_apply(EM_AARCH64, &r));
  uint64_t v64;
  memcpy(&v64, buf, 8);
  CHECK(v64 == 0x1122334455667790ull);
  r = (cpu_reloc){.type = R_AARCH64_PREL32, .loc = buf, .avail_B = 4, .P = 0x1000, .S = 0x2000, .A = 4};
  CHECK_OK(cpu_reloc_apply(EM_AARCH64, &r));
  uint32_t v32;
  memcpy(&v32, buf, 4);
  CHECK_EQ_INT(v32, 0x1004);
  r.avail_B = 3;
  CHECK_ERR(cpu_reloc_apply(EM_AARCH64, &r), HCQ_CODE_INVALID, "needs 4 bytes");
  /* trampoline: ldr x16, #8 ; br x16 ; .quad target */
  uint8_t tr[16];
  cpu_reloc_write_tramp(EM_AARCH64, tr, 0x0123456789abcdefull);
  memcpy(&v32, tr, 4);
  CHECK_EQ_INT(v32, 0x58000050u);
  memcpy(&v32, tr + 4, 4);
  CHECK_EQ_INT(v32, 0xd61f0200u);
  memcpy(&v64, tr + 8, 8);
  CHECK(v64 == 0x0123456789abcdefull);
}

static void test_x86_64(void) {
  uint8_t buf[8];
  uint32_t v32;
  cpu_reloc r = {.type = R_X86_64_PC32, .loc = buf, .avail_B = 8, .P = 0x1000, .S = 0x2000, .A = -4};
  CHECK_OK(cpu_reloc_apply(EM_X86_64, &r));
  memcpy(&v32, buf, 4);
  CHECK_EQ_INT(v32, 0xffc);
  r.S = 0;
  CHECK_OK(cpu_reloc_apply(EM_X86_64, &r));
  memcpy(&v32, buf, 4);
  CHECK_EQ_INT(v32, 0xffffeffcu); /* -0x1004 */
  r = (cpu_reloc){.type = R_X86_64_REX_GOTPCRELX, .loc = buf, .avail_B = 4, .P = 0x1000, .S = 0x9999, .A = -4,
                  .G = 0x3000};
  CHECK_OK(cpu_reloc_apply(EM_X86_64, &r));
  memcpy(&v32, buf, 4);
  CHECK_EQ_INT(v32, 0x1ffc);
  r = (cpu_reloc){.type = R_X86_64_32S, .loc = buf, .avail_B = 4, .S = 0x7fff00000000ull};
  CHECK_ERR(cpu_reloc_apply(EM_X86_64, &r), HCQ_CODE_INVALID, "-fPIC");
  r = (cpu_reloc){.type = R_X86_64_PC32, .loc = buf, .avail_B = 4, .P = 0, .S = 0x80000000ull};
  CHECK_ERR(cpu_reloc_apply(EM_X86_64, &r), HCQ_CODE_INVALID, "R_X86_64_PC32");
  r = (cpu_reloc){.type = R_X86_64_GOTTPOFF, .loc = buf, .avail_B = 4};
  CHECK_ERR(cpu_reloc_apply(EM_X86_64, &r), HCQ_CODE_UNSUPPORTED, "type 22 (R_X86_64_GOTTPOFF)");
  uint8_t tr[16];
  cpu_reloc_write_tramp(EM_X86_64, tr, 0x0123456789abcdefull);
  static const uint8_t want[8] = {0xff, 0x25, 0, 0, 0, 0, 0xef, 0xcd};
  CHECK(memcmp(tr, want, 8) == 0);
  CHECK_ERR(cpu_reloc_apply(EM_RISCV, &r), HCQ_CODE_UNSUPPORTED, "riscv");
}

int main(void) {
  test_aarch64();
  test_x86_64();
  return testing_summary("cpu_reloc_test");
}
