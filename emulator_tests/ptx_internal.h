/* The PTX interpreter's pre-decoded form, shared by ptx_parse.c (text -> form), ptx_exec.c (form -> effects) and
 * ptx_fp.c (the float helpers: rounding every conversion with each rounding modifier). */
#ifndef HCQ_EMU_PTX_INTERNAL_H
#define HCQ_EMU_PTX_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "emulator_tests/ptx_interp.h"

/* Types (PTX ISA "Types": fundamental types). */
typedef enum ptx_type {
  PT_NONE, PT_PRED, PT_B8, PT_U8, PT_S8, PT_B16, PT_U16, PT_S16, PT_B32, PT_U32, PT_S32, PT_B64, PT_U64, PT_S64,
  PT_F16, PT_BF16, PT_F32, PT_F64, PT_COUNT
} ptx_type;

int ptx_type_bits(ptx_type t);  /* pred: 1 */
bool ptx_type_signed(ptx_type t);
bool ptx_type_float(ptx_type t);
const char *ptx_type_name(ptx_type t);

typedef enum ptx_op {
  PO_MOV, PO_LD, PO_ST, PO_CVTA, PO_CVT, PO_ADD, PO_SUB, PO_MUL, PO_MAD, PO_FMA, PO_DIV, PO_REM, PO_NEG, PO_ABS,
  PO_NOT, PO_AND, PO_OR, PO_XOR, PO_SHL, PO_SHR, PO_MIN, PO_MAX, PO_SETP, PO_SELP, PO_SQRT, PO_RCP, PO_EX2, PO_LG2,
  PO_SIN, PO_COS, PO_BRA, PO_BAR, PO_RET, PO_COUNT
} ptx_op;

/* Rounding modifiers (PTX ISA "cvt": .rn .rz .rm .rp and the integer ones .rni .rzi .rmi .rpi). */
typedef enum ptx_rnd { PR_NONE, PR_RN, PR_RZ, PR_RM, PR_RP, PR_RNI, PR_RZI, PR_RMI, PR_RPI } ptx_rnd;
/* mul/mad integer modes */
typedef enum ptx_mulmode { PM_NONE, PM_LO, PM_HI, PM_WIDE } ptx_mulmode;
/* setp comparisons (PTX ISA "setp": integer/bit and float compare operators) */
typedef enum ptx_cmp {
  PC_NONE, PC_EQ, PC_NE, PC_LT, PC_LE, PC_GT, PC_GE, PC_LO, PC_LS, PC_HI, PC_HS, PC_EQU, PC_NEU, PC_LTU, PC_LEU,
  PC_GTU, PC_GEU, PC_NUM, PC_NAN
} ptx_cmp;
typedef enum ptx_space { PS_NONE, PS_GLOBAL, PS_SHARED, PS_PARAM, PS_LOCAL } ptx_space;
typedef enum ptx_boolop { PB_NONE, PB_AND, PB_OR, PB_XOR } ptx_boolop;

enum { PF_SAT = 1, PF_FTZ = 2, PF_APPROX = 4, PF_NAN = 8, PF_GUARD_NEG = 16, PF_SYMADDR = 32 };

/* Row kinds of the register file: a virtual register, an immediate, a special register. */
typedef enum ptx_rowkind { PRK_REG, PRK_CONST, PRK_SPECIAL } ptx_rowkind;
typedef enum ptx_special {
  PSR_TID_X, PSR_TID_Y, PSR_TID_Z, PSR_NTID_X, PSR_NTID_Y, PSR_NTID_Z, PSR_CTAID_X, PSR_CTAID_Y, PSR_CTAID_Z,
  PSR_NCTAID_X, PSR_NCTAID_Y, PSR_NCTAID_Z, PSR_LANEID, PSR_WARPID, PSR_COUNT
} ptx_special;

typedef struct ptx_row {
  uint8_t kind;   /* ptx_rowkind */
  uint8_t type;   /* declared type (registers) */
  uint64_t value; /* PRK_CONST: the bits; PRK_SPECIAL: the ptx_special */
} ptx_row;

/* One decoded instruction. Operands are rows (-1: none). */
typedef struct ptx_ins {
  uint8_t op, type, stype; /* type: instruction type (cvt: destination); stype: cvt source / ld-st memory type */
  uint8_t rnd, mul, cmp, space, boolop, flags, vec, nd, ns;
  uint8_t tbits, tsigned, tfloat; /* of type, decoded once */
  int32_t guard;           /* predicate row, -1: always */
  int32_t d[4], s[4];      /* destinations, sources; ld/st: s[0] = address base register or -1 */
  int64_t off;             /* ld/st: address offset; bra: target instruction */
  int32_t param;           /* ld.param [symbol]: parameter index, else -1 */
  uint32_t line;           /* source line, and the statement's text for messages */
  const char *text;
} ptx_ins;

typedef struct ptx_entry {
  ptx_entry_info info;
  ptx_param_info *params;
  ptx_ins *code;
  size_t ncode;
  ptx_row *rows;
  size_t nrows;
} ptx_entry;

struct ptx_module {
  char *version, *target;
  ptx_entry *entries;
  size_t nentries;
  uint32_t shared_B;  /* module-level .shared, laid out before each entry's own */
  char **strings;     /* owned strings (statement texts, names) */
  size_t nstrings, capstrings;
};

/* ptx_fp.c: conversions. Values are raw bits of their type, zero-extended in a uint64_t. */
/* Convert v of type st to dt with the rounding modifier and flags (PF_SAT, PF_FTZ); PTX ISA "cvt". */
uint64_t ptx_cvt(uint64_t v, ptx_type dt, ptx_type st, ptx_rnd rnd, unsigned flags);
/* Round an exact value (-1)^sign * mag * 2^exp2 (sticky: nonzero bits below mag were dropped) to a float type. */
uint64_t ptx_round_float(bool sign, uint64_t mag, int exp2, bool sticky, ptx_type dt, ptx_rnd rnd);
double ptx_f16_to_double(uint16_t h);
double ptx_bf16_to_double(uint16_t h);
/* f32/f64 arithmetic under a rounding mode (PR_RN/RZ/RM/RP): op '+', '-', '*', '/', 's' (sqrt), 'f' (fma). */
float ptx_f32_op(char op, float a, float b, float c, ptx_rnd rnd);
double ptx_f64_op(char op, double a, double b, double c, ptx_rnd rnd);

#define PTX_F32_CANON_NAN 0x7fffffffu
#define PTX_F64_CANON_NAN 0x7fffffffffffffffull

#endif
