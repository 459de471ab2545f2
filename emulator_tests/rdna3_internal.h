/* Internals shared by the RDNA3 decoder (rdna3_decode.c) and executor (rdna3_exec.c). */
#ifndef HCQ_EMU_RDNA3_INTERNAL_H
#define HCQ_EMU_RDNA3_INTERNAL_H

#include <stdbool.h>

#include "emulator_tests/rdna3.h"
#include "emulator_tests/rdna3_ops.h"

/* Operand codes (9-bit source field; ISA guide "Scalar/Vector operands"): 0-105 SGPRs, 256-511 VGPRs. */
enum {
  R3_VCC = 106, R3_NULL = 124, R3_M0 = 125, R3_EXEC = 126, R3_CONST0 = 128, R3_VCCZ = 251, R3_EXECZ = 252,
  R3_SCC = 253, R3_LIT = 255, R3_VGPR = 256
};

typedef struct r3_inst {
  uint16_t id;      /* R3_* operation */
  uint8_t enc;      /* E_* encoding as found in the code (E_VOP3 for promoted VOP1/VOP2/VOPC) */
  uint8_t nwords;
  uint8_t seg;      /* FLAT: 0 flat, 1 scratch, 2 global */
  uint8_t abs, neg, opsel, clamp, omod;
  uint16_t dst;     /* VGPR number (VALU), SGPR code (SALU, SMEM data), VDATA-out (DS/FLAT loads) */
  uint16_t sdst;    /* VOP3B / VOPC-e64 SGPR destination */
  uint16_t src[3];  /* operand codes; VOP2 src1 / DS addr,data0,data1 / FLAT addr,data,saddr */
  uint32_t lit;
  int32_t imm;      /* SOPK/SOPP simm16 (sign-extended), SMEM/FLAT offset, DS offset0 */
  int32_t imm1;     /* DS offset1, SMEM soffset code */
  uint32_t target;  /* branch target: instruction index */
  uint32_t off_B;   /* byte offset in code */
  uint32_t w[3];    /* raw words (the literal, if any, in lit) */
  /* VOPD second half */
  uint16_t idy, dsty, srcy[2];
} r3_inst;

struct rdna3_program {
  r3_inst *insts;
  size_t n;
  size_t entry;      /* index of the entry instruction */
  uint64_t code_va;
  rdna3_kd kd;
};

typedef struct r3_opinfo {
  const char *name;
  uint8_t enc;
  uint16_t op;
  uint8_t nsrc;
  uint32_t flags;
} r3_opinfo;

/* Information about operation id (compares are generated). */
const r3_opinfo *r3_info(unsigned id);
const r3_opinfo *r3_info_ready(unsigned id); /* the same, once any instruction was decoded */
/* Decode the instruction at words[0..avail) (offset off_B in code). */
hcq_status r3_decode(const uint32_t *words, size_t avail, uint32_t off_B, r3_inst *out);
void r3_print(const r3_inst *in, char *buf, size_t n);

/* VOPC operation decomposed: type (0 f16, 1 f32, 2 f64, 3 i16, 4 u16, 5 i32, 6 u32, 7 i64, 8 u64, 9 class f16,
 * 10 class f32, 11 class f64), condition (0..15 float / 0..7 integer), cmpx. Returns false for holes. */
bool r3_vopc_split(unsigned op, int *type, int *cond, bool *cmpx);

#endif
