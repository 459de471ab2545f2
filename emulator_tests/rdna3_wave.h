/* Internals of the RDNA3 executor shared by its parts: the wave and dispatch state, operand values, register
 * writes, and the error builders (rdna3_exec.c). rdna3_valu.c runs vector ALU instructions, rdna3_salu.c scalar
 * ones, rdna3_mem.c the memory instructions; rdna3_exec.c schedules waves and workgroups. */
#ifndef HCQ_EMU_RDNA3_WAVE_H
#define HCQ_EMU_RDNA3_WAVE_H

#include "emulator_tests/rdna3_internal.h"

typedef struct wave {
  uint32_t s[128];
  uint32_t (*v)[32];
  bool scc;
  int state; /* 0 running, 1 at a barrier, 2 ended */
  size_t pc;
  uint64_t ninst;
  int id;
  uint8_t *scratch; /* private_segment_B per lane (interpreter-owned scratch) */
  uint64_t scratch_va; /* the wave's scratch in device memory (rdna3_dispatch.scratch_va set), else 0 */
  uint32_t mode;    /* MODE hardware register: FP_ROUND 3:0, FP_DENORM 7:4 (f32 5:4), DX10_CLAMP 8, IEEE 9 */
  int ftz_in32, ftz_out32; /* from FP_DENORM f32: 0 flush in+out, 1 flush out, 2 flush in, 3 none */
} wave;

typedef struct ex {
  const rdna3_program *p;
  const rdna3_mem_ops *mem;
  const rdna3_dispatch *d;
  uint8_t *lds;
  uint32_t lds_B;
  uint32_t wg[3];
  uint64_t max_insts, max_total;
} ex;

/* A page fault at addr by instruction in (lane -1: the scalar unit); takes ownership of inner. */
hcq_status r3_fault(ex *c, wave *w, const r3_inst *in, int lane, uint64_t addr, const char *what, hcq_status inner);
/* An instruction the executor cannot run as asked. */
hcq_status r3_bad(ex *c, wave *w, const r3_inst *in, const char *why);

hcq_status r3_valu(ex *c, wave *w, const r3_inst *in);
bool r3_is_dot(unsigned id); /* the VOP3P dot products, run by r3_dot (rdna3_dot.c) */
hcq_status r3_dot(ex *c, wave *w, const r3_inst *in);
hcq_status r3_salu(ex *c, wave *w, const r3_inst *in);
hcq_status r3_sopk(ex *c, wave *w, const r3_inst *in);
hcq_status r3_set_mode(ex *c, wave *w, const r3_inst *in, uint32_t mode);
hcq_status r3_smem(ex *c, wave *w, const r3_inst *in);
hcq_status r3_ds(ex *c, wave *w, const r3_inst *in);
hcq_status r3_flat(ex *c, wave *w, const r3_inst *in);

/* ---- operands ---- */

static const uint32_t k_f32[9] = {0x3f000000, 0xbf000000, 0x3f800000, 0xbf800000, 0x40000000, 0xc0000000,
                                  0x40800000, 0xc0800000, 0x3e22f983};
static const uint64_t k_f64[9] = {0x3fe0000000000000, 0xbfe0000000000000, 0x3ff0000000000000, 0xbff0000000000000,
                                  0x4000000000000000, 0xc000000000000000, 0x4010000000000000, 0xc010000000000000,
                                  0x3fc45f306dc9c882};
static const uint16_t k_f16[9] = {0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000, 0xc000, 0x4400, 0xc400, 0x3118};

/* Scalar value of operand code (kind: 0 int, 1 f32, 2 f64 (64-bit), 3 f16, 4 signed int64). */
static inline uint32_t sval32(const wave *w, unsigned code, uint32_t lit, int kind) {
  if (code < 128) return code == R3_NULL ? 0 : w->s[code];
  if (code <= 192) return code - 128;
  if (code <= 208) return (uint32_t)(192 - (int)code);
  if (code >= 240 && code <= 248) return kind == 3 ? k_f16[code - 240] : k_f32[code - 240];
  switch (code) {
    case R3_LIT: return lit;
    case R3_SCC: return w->scc;
    case R3_VCCZ: return w->s[R3_VCC] == 0;
    case R3_EXECZ: return w->s[R3_EXEC] == 0;
    default: return 0;
  }
}
static inline uint64_t sval64(const wave *w, unsigned code, uint32_t lit, int kind) {
  if (code < 128) return code == R3_NULL ? 0 : w->s[code] | (uint64_t)w->s[(code + 1) & 127] << 32;
  if (code <= 192) return code - 128;
  if (code <= 208) return (uint64_t)(int64_t)(192 - (int)code);
  if (code >= 240 && code <= 248) return k_f64[code - 240]; /* a 64-bit operand's float constants are doubles */
  /* A 32-bit literal as a 64-bit operand: a float64's high half; zero-extended for a b64/u64 operand and
   * sign-extended only for an i64 one (LLVM PR #70274, AMDGPU: "either correctly sign extended or
   * incorrectly zero extended by HW"; llc-19 emits s_mov_b64 s[6:7], 0xffffffff for 0x00000000ffffffff). */
  if (code == R3_LIT) return kind == 2 ? (uint64_t)lit << 32 : kind == 4 ? (uint64_t)(int64_t)(int32_t)lit : lit;
  return sval32(w, code, lit, kind);
}

static inline void swrite32(wave *w, unsigned code, uint32_t v) {
  if (code < 128 && code != R3_NULL) w->s[code] = v;
}
static inline void swrite64(wave *w, unsigned code, uint64_t v) {
  if (code < 127 && code != R3_NULL) w->s[code] = (uint32_t)v, w->s[code + 1] = (uint32_t)(v >> 32);
}

#endif
