/* 32-bit Arm relocations patched into plain buffers on any host, compared with hand-encoded instruction words
 * (Arm ARM: A32 BL/B imm24 in bits 23:0, BLX imm with H in bit 24; MOVW/MOVT imm4 19:16 : imm12 11:0.
 * T32 BL/B.W: hw1 = 11110 S imm10, hw2 = 1 1 J1 x J2 imm11 (x = 1 BL, 0 BLX), I1 = NOT(J1^S); MOVW/MOVT T3:
 * hw1 = 11110 i 10 x 100 imm4, hw2 = 0 imm3 Rd imm8). Implicit addends are encoded in the input words the way gcc
 * leaves them in an object: BL -8 (A32), BL -4 (T32). */
#include "cpu/cpu_reloc.h"

#include <elf.h>

#include "base/testing.h"

enum { GOT_BREL = 26, BASE_PREL = 25, THM_CALL = 10 };

/* Apply to a 4-byte word (A32 instruction, data word, or T32 pair read as hw1 | hw2 << 16). */
static uint32_t arm(uint32_t type, uint32_t word, uint64_t P, uint64_t S, uint64_t G, uint64_t GOT, hcq_status *st) {
  uint8_t buf[4];
  memcpy(buf, &word, 4);
  cpu_reloc r = {.type = type, .loc = buf, .avail_B = 4, .P = P, .S = S, .G = G, .GOT = GOT};
  *st = cpu_reloc_apply(EM_ARM, &r);
  memcpy(&word, buf, 4);
  return word;
}

#define T32(hw1, hw2) ((uint32_t)(hw1) | (uint32_t)(hw2) << 16)

#define ARM_OK(type, word, P, S, G, GOT, want)          \
  do {                                                  \
    hcq_status st_;                                     \
    uint32_t got_ = arm(type, word, P, S, G, GOT, &st_); \
    CHECK_OK(st_);                                      \
    CHECK_EQ_INT(got_, want);                           \
  } while (0)

static void test_a32(void) {
  /* bl: target 0x2000 from 0x1000: (0x2000 - 8 - 0x1000) >> 2 = 0x3fe */
  ARM_OK(R_ARM_CALL, 0xebfffffeu, 0x1000, 0x2000, 0, 0, 0xeb0003feu);
  /* bl to Thumb code becomes blx imm: 0x2001 (Thumb, even offset, H=0), 0x2003 (H=1) */
  ARM_OK(R_ARM_CALL, 0xebfffffeu, 0x1000, 0x2001, 0, 0, 0xfa0003feu);
  ARM_OK(R_ARM_CALL, 0xebfffffeu, 0x1000, 0x2003, 0, 0, 0xfb0003feu);
  /* b backwards: (0x1000 - 8 - 0x2000) >> 2 = -0x402 */
  ARM_OK(R_ARM_JUMP24, 0xeafffffeu, 0x2000, 0x1000, 0, 0, 0xeafffbfeu);
  /* movw r0, #0x5678 / movt r0, #0x1234 */
  ARM_OK(R_ARM_MOVW_ABS_NC, 0xe3000000u, 0, 0x12345678, 0, 0, 0xe3050678u);
  ARM_OK(R_ARM_MOVT_ABS, 0xe3400000u, 0, 0x12345678, 0, 0, 0xe3410234u);
  /* PC-relative pair: S - P = 0x00012000 */
  ARM_OK(R_ARM_MOVW_PREL_NC, 0xe3000000u, 0x1000, 0x13000, 0, 0, 0xe3020000u);
  ARM_OK(R_ARM_MOVT_PREL, 0xe3400000u, 0x1000, 0x13000, 0, 0, 0xe3400001u);
  hcq_status st;
  arm(R_ARM_JUMP24, 0xeafffffeu, 0x1000, 0x2001, 0, 0, &st);
  CHECK_ERR(st, HCQ_CODE_INVALID, "cannot switch");
  arm(R_ARM_CALL, 0xebfffffeu, 0, 0x2000008, 0, 0, &st); /* +32 MiB: one past the reach */
  CHECK_ERR(st, HCQ_CODE_INVALID, "R_ARM_CALL");
}

static void test_t32(void) {
  /* bl +0xffc (target 0x2000 from 0x1000, addend -4): f000 fffe (J1 = J2 = 1 for S = 0) */
  ARM_OK(THM_CALL, T32(0xf7ff, 0xfffe), 0x1000, 0x2001, 0, 0, T32(0xf000, 0xfffe));
  /* backwards: target 0x1000 from 0x2000: offset -0x1004 */
  ARM_OK(THM_CALL, T32(0xf7ff, 0xfffe), 0x2000, 0x1001, 0, 0, T32(0xf7fe, 0xfffe));
  /* to Arm code from 0x1002: blx, offset from Align(P,4)=0x1000: 0xffc, bit 12 of hw2 cleared */
  ARM_OK(THM_CALL, T32(0xf7ff, 0xfffe), 0x1002, 0x2000, 0, 0, T32(0xf000, 0xeffe));
  /* b.w +0xffc */
  ARM_OK(R_ARM_THM_JUMP24, T32(0xf7ff, 0xbffe), 0x1000, 0x2001, 0, 0, T32(0xf000, 0xbffe));
  /* beq.w +0xfc: imm11 = 0x7e, addend -4 from imm (encoded f43f affe) */
  ARM_OK(R_ARM_THM_JUMP19, T32(0xf43f, 0xaffe), 0x1000, 0x1101, 0, 0, T32(0xf000, 0x807e));
  /* movw r0, #0x8f01 (i = 1) / movt r0, #0xabcd */
  ARM_OK(R_ARM_THM_MOVW_ABS_NC, T32(0xf240, 0x0000), 0, 0xabcd8f01u, 0, 0, T32(0xf648, 0x7001));
  ARM_OK(R_ARM_THM_MOVT_ABS, T32(0xf2c0, 0x0000), 0, 0xabcd8f01u, 0, 0, T32(0xf6ca, 0x30cd));
  /* movw r3, #0x2000 (PC-relative, Rd = 3 kept) */
  ARM_OK(R_ARM_THM_MOVW_PREL_NC, T32(0xf240, 0x0300), 0x1000, 0x3000, 0, 0, T32(0xf242, 0x0300));
  ARM_OK(R_ARM_THM_MOVT_PREL, T32(0xf2c0, 0x0300), 0x1000, 0x30000, 0, 0, T32(0xf2c0, 0x0302));
  hcq_status st;
  arm(R_ARM_THM_JUMP24, T32(0xf7ff, 0xbffe), 0x1000, 0x2000, 0, 0, &st);
  CHECK_ERR(st, HCQ_CODE_INVALID, "cannot switch");
  arm(THM_CALL, T32(0xf7ff, 0xfffe), 0, 0x1000005, 0, 0, &st); /* +16 MiB: one past the reach */
  CHECK_ERR(st, HCQ_CODE_INVALID, "R_ARM_THM_CALL");
}

/* Branches to a loader trampoline (Arm entry at S, Thumb entry at S + 8) take the entry of their own state. */
static uint32_t to_tramp(uint32_t type, uint32_t word, uint64_t P, uint64_t S, hcq_status *st) {
  uint8_t buf[4];
  memcpy(buf, &word, 4);
  cpu_reloc r = {.type = type, .loc = buf, .avail_B = 4, .P = P, .S = S, .tramp = true};
  *st = cpu_reloc_apply(EM_ARM, &r);
  memcpy(&word, buf, 4);
  return word;
}

static void test_tramp(void) {
  hcq_status st;
  /* b.w tail call from Thumb code at 0x1000: to 0x2008 (Thumb entry): offset 0x1004 */
  CHECK_EQ_INT(to_tramp(R_ARM_THM_JUMP24, T32(0xf7ff, 0xbffe), 0x1000, 0x2000, &st), T32(0xf001, 0xb802));
  CHECK_OK(st);
  /* bl from Thumb code: also the Thumb entry, as BL (no BLX) */
  CHECK_EQ_INT(to_tramp(THM_CALL, T32(0xf7ff, 0xfffe), 0x1000, 0x2000, &st), T32(0xf001, 0xf802));
  CHECK_OK(st);
  /* b from Arm code: the Arm entry */
  CHECK_EQ_INT(to_tramp(R_ARM_JUMP24, 0xeafffffeu, 0x1000, 0x2000, &st), 0xea0003feu);
  CHECK_OK(st);
}

static void test_data(void) {
  ARM_OK(R_ARM_ABS32, 4, 0, 0x1001, 0, 0, 0x1005);                      /* implicit addend 4, Thumb bit kept */
  ARM_OK(R_ARM_TARGET1, 0, 0, 0x12345678, 0, 0, 0x12345678);
  ARM_OK(R_ARM_REL32, 8, 0x1000, 0x5000, 0, 0, 0x4008);
  ARM_OK(GOT_BREL, 0, 0x1000, 0x9999, 0x6008, 0x6000, 8);               /* G - GOT */
  ARM_OK(BASE_PREL, 0xc, 0x1000, 0x6000, 0, 0x6000, 0x500c);            /* GOT + A - P */
  ARM_OK(R_ARM_GOT_PREL, 0xfffffffcu, 0x1000, 0x9999, 0x6004, 0, 0x5000); /* G + A - P */
  ARM_OK(R_ARM_PREL31, 0x80000000u, 0x2000, 0x1000, 0, 0, 0xfffff000u); /* bit 31 preserved */
  ARM_OK(R_ARM_V4BX, 0xe12fff1eu, 0, 0, 0, 0, 0xe12fff1eu);
  /* 32-bit wrap: an address computed past 4 GiB wraps like the hardware */
  ARM_OK(R_ARM_ABS32, 0x10, 0, 0xfffffff8u, 0, 0, 0x8);
  hcq_status st;
  arm(108, 0, 0, 0, 0, 0, &st);
  CHECK_ERR(st, HCQ_CODE_UNSUPPORTED, "type 108 (R_ARM_TLS_LE32)");
  uint8_t buf[4] = {0};
  cpu_reloc r = {.type = R_ARM_ABS32, .loc = buf, .avail_B = 3};
  CHECK_ERR(cpu_reloc_apply(EM_ARM, &r), HCQ_CODE_INVALID, "needs 4 bytes");
  CHECK(cpu_reloc_uses_got(EM_ARM, GOT_BREL) && cpu_reloc_uses_got(EM_ARM, R_ARM_GOT_PREL));
  CHECK(!cpu_reloc_uses_got(EM_ARM, R_ARM_ABS32));
  CHECK(cpu_reloc_is_none(EM_ARM, R_ARM_NONE) && cpu_reloc_is_none(EM_ARM, R_ARM_V4BX));
  /* trampoline: ldr pc, [pc, #-4] ; .word target ; (Thumb) ldr.w pc, [pc, #0] ; .word target */
  uint8_t tr[16];
  CHECK_EQ_INT(cpu_reloc_tramp_size(EM_ARM), 16);
  cpu_reloc_write_tramp(EM_ARM, tr, 0x12345679u);
  uint32_t w;
  memcpy(&w, tr, 4);
  CHECK_EQ_INT(w, 0xe51ff004u);
  memcpy(&w, tr + 4, 4);
  CHECK_EQ_INT(w, 0x12345679u);
  memcpy(&w, tr + 8, 4);
  CHECK_EQ_INT(w, T32(0xf8df, 0xf000));
  memcpy(&w, tr + 12, 4);
  CHECK_EQ_INT(w, 0x12345679u);
}

int main(void) {
  test_a32();
  test_t32();
  test_tramp();
  test_data();
  return testing_summary("cpu_reloc_arm_test");
}
