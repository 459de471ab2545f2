/* RDNA3 decoder and printer: machine words -> r3_inst (rdna3_internal.h), and r3_inst -> llvm-objdump's syntax.
 * Field positions per encoding: LLVM llvm/lib/Target/AMDGPU/{SOP,SM,VOP1,VOP2,VOP3,VOPC,VOPD,DS,FLAT}Instructions.td (the GFX11 Enc classes: SOP1 bits
 * 31-23 = 0x17d, SOPC 0x17e, SOPP 0x17f, SOPK 31-28 = 0xb, SOP2 31-30 = 2, SMEM 31-26 = 0x3d, VOP2 bit 31 = 0,
 * VOP1 31-25 = 0x3f, VOPC 0x3e, VOP3 31-26 = 0x35, VOP3P 31-24 = 0xcc, VOPD 31-26 = 0x32, DS 0x36, FLAT 0x37). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "emulator_tests/rdna3_internal.h"

static const r3_opinfo g_ops[] = {
#define X(id, nm, e, o, ns, fl) {.name = nm, .enc = e, .op = o, .nsrc = ns, .flags = fl},
    RDNA3_OPS(X)
#undef X
};

#define NONE 0xffffu
static uint16_t t_sop1[256], t_sop2[128], t_sopk[32], t_sopc[128], t_sopp[128], t_smem[256], t_vop1[256],
    t_vop2[64], t_vop3[1024], t_ds[256], t_flat[128], t_vop3p[128];
static r3_opinfo g_cmp[256];
static char g_cmp_names[256][24];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

bool r3_vopc_split(unsigned op, int *type, int *cond, bool *cmpx) {
  *cmpx = op >= 128;
  op &= 127;
  if (op < 48) {
    *type = (int)(op / 16), *cond = (int)(op % 16);
    return true;
  }
  if (op >= 125) {
    *type = 9 + (int)(op - 125), *cond = 0;
    return true;
  }
  if (op >= 64 && op < 96) {
    *type = 5 + (int)((op - 64) / 8), *cond = (int)(op % 8);
    return true;
  }
  if ((op >= 49 && op <= 54) || (op >= 57 && op <= 62)) {
    *type = op < 56 ? 3 : 4, *cond = (int)(op % 8);
    return true;
  }
  return false;
}

static void init_tables(void) {
  uint16_t *all[] = {t_sop1, t_sop2, t_sopk, t_sopc, t_sopp, t_smem, t_vop1, t_vop2, t_vop3, t_ds, t_flat, t_vop3p};
  size_t sizes[] = {256, 128, 32, 128, 128, 256, 256, 64, 1024, 256, 128, 128};
  for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++)
    for (size_t i = 0; i < sizes[t]; i++) all[t][i] = NONE;
  for (unsigned id = 0; id < sizeof g_ops / sizeof *g_ops; id++) {
    const r3_opinfo *o = &g_ops[id];
    switch (o->enc) {
      case E_SOP1: t_sop1[o->op] = (uint16_t)id; break;
      case E_SOP2: t_sop2[o->op] = (uint16_t)id; break;
      case E_SOPK: t_sopk[o->op] = (uint16_t)id; break;
      case E_SOPC: t_sopc[o->op] = (uint16_t)id; break;
      case E_SOPP: t_sopp[o->op] = (uint16_t)id; break;
      case E_SMEM: t_smem[o->op] = (uint16_t)id; break;
      case E_VOP1: t_vop1[o->op] = (uint16_t)id, t_vop3[384 + o->op] = (uint16_t)id; break;
      case E_VOP2:
        t_vop2[o->op] = (uint16_t)id;
        if (id != R3_V_FMAMK_F32 && id != R3_V_FMAAK_F32) t_vop3[256 + o->op] = (uint16_t)id;
        break;
      case E_VOP3: t_vop3[o->op] = (uint16_t)id; break;
      case E_DS: t_ds[o->op] = (uint16_t)id; break;
      case E_FLAT: t_flat[o->op] = (uint16_t)id; break;
      case E_VOP3P: t_vop3p[o->op] = (uint16_t)id; break;
      default: break;
    }
  }
  static const char *const tn[] = {"f16", "f32", "f64", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "f32", "f64"};
  static const char *const fc[] = {"f", "lt", "eq", "le", "gt", "lg", "ge", "o", "u", "nge", "nlg", "ngt", "nle", "neq", "nlt", "t"};
  static const char *const ic[] = {"f", "lt", "eq", "le", "gt", "ne", "ge", "t"};
  for (unsigned op = 0; op < 256; op++) {
    int type, cond;
    bool x;
    if (!r3_vopc_split(op, &type, &cond, &x)) continue;
    if (type >= 9) snprintf(g_cmp_names[op], sizeof g_cmp_names[op], "v_cmp%s_class_%s", x ? "x" : "", tn[type]);
    else
      snprintf(g_cmp_names[op], sizeof g_cmp_names[op], "v_cmp%s_%s_%s", x ? "x" : "", type < 3 ? fc[cond] : ic[cond],
               tn[type]);
    bool w64 = type == 2 || type == 7 || type == 8 || type == 11;
    g_cmp[op] = (r3_opinfo){.name = g_cmp_names[op], .enc = E_VOPC, .op = (uint16_t)op, .nsrc = 2,
                            .flags = (type < 3 || type >= 9 ? F_FP : 0) | (w64 ? F_S0_64 : 0) |
                                     (w64 && type != 11 ? F_S1_64 : 0) | (type == 0 || type == 3 || type == 4 || type == 9 ? F_F16 : 0) |
                                     (x ? F_NODST : F_SDST)};
  }
}

const r3_opinfo *r3_info(unsigned id) {
  pthread_once(&g_once, init_tables);
  return r3_info_ready(id);
}

/* After the first r3_decode (which builds the tables): no once-check on the executor's hot path. */
const r3_opinfo *r3_info_ready(unsigned id) { return id >= R3_VOPC_BASE ? &g_cmp[id - R3_VOPC_BASE] : &g_ops[id]; }

/* VOPD opcodes (VOPDInstructions.td, GFX11): X takes 0-12, Y also 16-18. */
static const uint16_t g_vopd[19] = {R3_V_FMAC_F32, R3_V_DUAL_FMAAK_F32, R3_V_DUAL_FMAMK_F32, R3_V_MUL_F32, R3_V_ADD_F32,
                                    R3_V_SUB_F32, R3_V_SUBREV_F32, R3_V_MUL_DX9_ZERO_F32, R3_V_MOV_B32,
                                    R3_V_CNDMASK_B32, R3_V_MAX_F32, R3_V_MIN_F32, NONE, NONE, NONE, NONE,
                                    R3_V_ADD_NC_U32, R3_V_LSHLREV_B32, R3_V_AND_B32};

static const char *enc_name(int e) {
  static const char *const n[] = {"SOP1", "SOP2", "SOPK", "SOPC", "SOPP", "SMEM", "VOP1", "VOP2", "VOPC", "VOP3",
                                  "VOP3P", "DS", "FLAT", "VOPD", "MUBUF"};
  return e >= 0 && e < (int)(sizeof n / sizeof *n) ? n[e] : "unknown";
}

static hcq_status unknown(const uint32_t *w, size_t avail, uint32_t off, const char *enc, unsigned op) {
  return hcq_status_make(HCQ_CODE_UNSUPPORTED,
                         "rdna3: unknown instruction at offset 0x%x: %s opcode %u (words 0x%08" PRIx32 " 0x%08" PRIx32 ")",
                         off, enc, op, w[0], avail > 1 ? w[1] : 0);
}

static int32_t sext(uint32_t v, int bits) { return (int32_t)(v << (32 - bits)) >> (32 - bits); }

hcq_status r3_decode(const uint32_t *w, size_t avail, uint32_t off, r3_inst *in) {
  pthread_once(&g_once, init_tables);
  memset(in, 0, sizeof *in);
  in->off_B = off;
  in->nwords = 1;
  in->w[0] = w[0];
  in->src[0] = in->src[1] = in->src[2] = R3_NULL;
  in->sdst = R3_NULL;
  uint32_t w0 = w[0], w1 = avail > 1 ? w[1] : 0;
  uint16_t id = NONE;
  bool lit = false;
  if (!(w0 >> 31)) {
    unsigned top7 = w0 >> 25;
    if (top7 == 0x3f) { /* VOP1 */
      in->enc = E_VOP1;
      unsigned op = (w0 >> 9) & 0xff;
      if ((id = t_vop1[op]) == NONE) return unknown(w, avail, off, "VOP1", op);
      in->src[0] = w0 & 0x1ff;
      in->dst = (w0 >> 17) & 0xff;
    } else if (top7 == 0x3e) { /* VOPC */
      in->enc = E_VOPC;
      unsigned op = (w0 >> 17) & 0xff;
      int t, c;
      bool x;
      if (!r3_vopc_split(op, &t, &c, &x)) return unknown(w, avail, off, "VOPC", op);
      id = (uint16_t)(R3_VOPC_BASE + op);
      in->src[0] = w0 & 0x1ff;
      in->src[1] = (uint16_t)(R3_VGPR + ((w0 >> 9) & 0xff));
      in->sdst = x ? R3_EXEC : R3_VCC;
    } else { /* VOP2 */
      in->enc = E_VOP2;
      unsigned op = top7 & 0x3f;
      if ((id = t_vop2[op]) == NONE) return unknown(w, avail, off, "VOP2", op);
      in->src[0] = w0 & 0x1ff;
      in->src[1] = (uint16_t)(R3_VGPR + ((w0 >> 9) & 0xff));
      in->dst = (w0 >> 17) & 0xff;
      if (id == R3_V_FMAMK_F32 || id == R3_V_FMAAK_F32) lit = true;
      if (r3_info(id)->flags & F_CIN) in->src[2] = R3_VCC;
      if (r3_info(id)->flags & F_COUT) in->sdst = R3_VCC;
    }
  } else if ((w0 >> 23) == 0x17d) {
    in->enc = E_SOP1;
    unsigned op = (w0 >> 8) & 0xff;
    if ((id = t_sop1[op]) == NONE) return unknown(w, avail, off, "SOP1", op);
    in->src[0] = w0 & 0xff;
    in->dst = (w0 >> 16) & 0x7f;
  } else if ((w0 >> 23) == 0x17e) {
    in->enc = E_SOPC;
    unsigned op = (w0 >> 16) & 0x7f;
    if ((id = t_sopc[op]) == NONE) return unknown(w, avail, off, "SOPC", op);
    in->src[0] = w0 & 0xff;
    in->src[1] = (w0 >> 8) & 0xff;
  } else if ((w0 >> 23) == 0x17f) {
    in->enc = E_SOPP;
    unsigned op = (w0 >> 16) & 0x7f;
    if ((id = t_sopp[op]) == NONE) return unknown(w, avail, off, "SOPP", op);
    in->imm = sext(w0 & 0xffff, 16);
  } else if ((w0 >> 28) == 0xb) {
    in->enc = E_SOPK;
    unsigned op = (w0 >> 23) & 0x1f;
    if ((id = t_sopk[op]) == NONE) return unknown(w, avail, off, "SOPK", op);
    in->imm = sext(w0 & 0xffff, 16);
    in->dst = (w0 >> 16) & 0x7f;
    lit = id == R3_S_SETREG_IMM32_B32;
  } else if ((w0 >> 30) == 2) {
    in->enc = E_SOP2;
    unsigned op = (w0 >> 23) & 0x7f;
    if ((id = t_sop2[op]) == NONE) return unknown(w, avail, off, "SOP2", op);
    in->src[0] = w0 & 0xff;
    in->src[1] = (w0 >> 8) & 0xff;
    in->dst = (w0 >> 16) & 0x7f;
  } else {
    unsigned top6 = w0 >> 26;
    in->nwords = 2;
    if (avail < 2) return hcq_status_make(HCQ_CODE_INVALID, "rdna3: instruction at offset 0x%x (0x%08" PRIx32 ") is cut off by the end of the code", off, w0);
    in->w[1] = w1;
    if (top6 == 0x3d) { /* SMEM */
      in->enc = E_SMEM;
      unsigned op = (w0 >> 18) & 0xff;
      if ((id = t_smem[op]) == NONE) return unknown(w, avail, off, "SMEM", op);
      in->src[0] = (uint16_t)((w0 & 0x3f) << 1);
      in->dst = (w0 >> 6) & 0x7f;
      in->imm = sext(w1 & 0x1fffff, 21);
      in->imm1 = (int32_t)(w1 >> 25);
      in->opsel = (uint8_t)((w0 >> 13) & 3); /* glc, dlc */
    } else if (top6 == 0x35) { /* VOP3 */
      in->enc = E_VOP3;
      unsigned op = (w0 >> 16) & 0x3ff;
      if (op < 256) {
        int t, c;
        bool x;
        if (!r3_vopc_split(op, &t, &c, &x)) return unknown(w, avail, off, "VOP3 (VOPC)", op);
        id = (uint16_t)(R3_VOPC_BASE + op);
        in->sdst = x ? R3_EXEC : (uint16_t)(w0 & 0xff);
      } else if ((id = t_vop3[op]) == NONE) {
        return unknown(w, avail, off, "VOP3", op);
      }
      const r3_opinfo *o = r3_info(id);
      in->dst = w0 & 0xff;
      if (o->flags & F_VOP3B) in->sdst = (w0 >> 8) & 0x7f;
      else in->abs = (w0 >> 8) & 7, in->opsel = (w0 >> 11) & 15;
      in->clamp = (w0 >> 15) & 1;
      in->src[0] = w1 & 0x1ff;
      in->src[1] = (w1 >> 9) & 0x1ff;
      in->src[2] = (w1 >> 18) & 0x1ff;
      in->omod = (w1 >> 27) & 3;
      in->neg = (w1 >> 29) & 7;
      if (o->flags & F_SDST) in->dst = w0 & 0xff;
      if (o->nsrc < 3 && !((o->flags & F_CIN) && o->enc == E_VOP2)) in->src[2] = R3_NULL;
      if (o->nsrc < 2) in->src[1] = R3_NULL;
    } else if (top6 == 0x32) { /* VOPD */
      in->enc = E_VOPD;
      unsigned opx = (w0 >> 22) & 0xf, opy = (w0 >> 17) & 0x1f;
      if (opx > 12 || g_vopd[opx] == NONE) return unknown(w, avail, off, "VOPD (X)", opx);
      if (opy > 18 || g_vopd[opy] == NONE) return unknown(w, avail, off, "VOPD (Y)", opy);
      id = g_vopd[opx];
      in->idy = g_vopd[opy];
      in->src[0] = w0 & 0x1ff;
      in->src[1] = (uint16_t)(R3_VGPR + ((w0 >> 9) & 0xff));
      in->dst = (w1 >> 24) & 0xff;
      in->srcy[0] = w1 & 0x1ff;
      in->srcy[1] = (uint16_t)(R3_VGPR + ((w1 >> 9) & 0xff));
      in->dsty = (uint16_t)((((w1 >> 17) & 0x7f) << 1) | ((in->dst & 1) ^ 1));
      lit = id == R3_V_DUAL_FMAAK_F32 || id == R3_V_DUAL_FMAMK_F32 || in->idy == R3_V_DUAL_FMAAK_F32 ||
            in->idy == R3_V_DUAL_FMAMK_F32 || in->src[0] == R3_LIT || in->srcy[0] == R3_LIT;
    } else if (top6 == 0x36) { /* DS */
      in->enc = E_DS;
      unsigned op = (w0 >> 18) & 0xff;
      if ((id = t_ds[op]) == NONE || ((w0 >> 17) & 1)) return unknown(w, avail, off, (w0 >> 17) & 1 ? "DS (gds)" : "DS", op);
      in->imm = (int32_t)(w0 & 0xff);
      in->imm1 = (int32_t)((w0 >> 8) & 0xff);
      in->src[0] = w1 & 0xff;
      in->src[1] = (w1 >> 8) & 0xff;
      in->src[2] = (w1 >> 16) & 0xff;
      in->dst = (w1 >> 24) & 0xff;
    } else if (top6 == 0x37) { /* FLAT / GLOBAL / SCRATCH */
      in->enc = E_FLAT;
      unsigned op = (w0 >> 18) & 0x7f;
      in->seg = (w0 >> 16) & 3;
      if ((id = t_flat[op]) == NONE || in->seg == 3) return unknown(w, avail, off, "FLAT", op);
      in->imm = sext(w0 & 0x1fff, 13);
      in->opsel = (uint8_t)((w0 >> 13) & 7); /* dlc, glc, slc */
      in->src[0] = w1 & 0xff;
      in->src[1] = (w1 >> 8) & 0xff;
      in->src[2] = (w1 >> 16) & 0x7f;
      in->abs = (w1 >> 23) & 1; /* scratch: SVE (a VGPR address is used) */
      in->dst = (w1 >> 24) & 0xff;
    } else if (top6 == 0x38) { /* MUBUF: only the cache invalidates (no buffer resources in our kernels) */
      in->enc = E_MUBUF;
      unsigned op = (w0 >> 18) & 0xff;
      if (op == 43) id = R3_BUFFER_GL0_INV;
      else if (op == 44) id = R3_BUFFER_GL1_INV;
      else return unknown(w, avail, off, "MUBUF", op);
    } else if ((w0 >> 24) == 0xcc) { /* VOP3P */
      in->enc = E_VOP3P;
      unsigned op = (w0 >> 16) & 0x7f;
      if ((id = t_vop3p[op]) == NONE) return unknown(w, avail, off, "VOP3P", op);
      in->dst = w0 & 0xff;
      in->abs = (w0 >> 8) & 7; /* neg_hi */
      in->opsel = (uint8_t)((w0 >> 11) & 7);
      in->omod = (uint8_t)(((w1 >> 27) & 3) | ((w0 >> 14) & 1) << 2); /* op_sel_hi */
      in->clamp = (w0 >> 15) & 1;
      in->src[0] = w1 & 0x1ff;
      in->src[1] = (w1 >> 9) & 0x1ff;
      in->src[2] = r3_info(id)->nsrc > 2 ? (w1 >> 18) & 0x1ff : R3_NULL;
      in->neg = (w1 >> 29) & 7;
    } else {
      return hcq_status_make(HCQ_CODE_UNSUPPORTED,
                             "rdna3: unknown encoding at offset 0x%x (words 0x%08" PRIx32 " 0x%08" PRIx32 ")", off, w0, w1);
    }
  }
  in->id = id;
  if (in->enc == E_VOP1 || in->enc == E_VOP2 || in->enc == E_VOPC || in->enc == E_SOP1 || in->enc == E_SOP2 ||
      in->enc == E_SOPC || in->enc == E_VOP3 || in->enc == E_VOP3P)
    for (int s = 0; s < 3; s++) lit |= in->src[s] == R3_LIT && (in->enc != E_VOP2 || s == 0) && (in->enc != E_VOPC || s == 0);
  /* operand codes the executor models; DPP (233, 250), SDWA (249), LDS direct (254) and the aperture registers
   * (235-238) are refused rather than read as 0 */
  bool alu = in->enc == E_VOP1 || in->enc == E_VOP2 || in->enc == E_VOPC || in->enc == E_SOP1 ||
             in->enc == E_SOP2 || in->enc == E_SOPC || in->enc == E_VOP3 || in->enc == E_VOP3P || in->enc == E_VOPD;
  for (int k = 0; alu && k < 4; k++) {
    unsigned code = k < 3 ? in->src[k] : (in->enc == E_VOPD ? in->srcy[0] : R3_NULL);
    if ((code > 208 && code < 240) || code == 249 || code == 250 || code == 254)
      return hcq_status_make(HCQ_CODE_UNSUPPORTED,
                             "rdna3: %s instruction at offset 0x%x (words 0x%08" PRIx32 " 0x%08" PRIx32
                             ") uses operand code %u (%s), which the interpreter does not model",
                             enc_name(in->enc), off, w0, w1, code,
                             code == 250 || code == 233 ? "DPP" : code == 249 ? "SDWA" : code == 254 ? "LDS direct" : "reserved or aperture register");
  }
  if (lit) {
    if (avail <= in->nwords)
      return hcq_status_make(HCQ_CODE_INVALID, "rdna3: literal of the %s instruction at offset 0x%x is cut off", enc_name(in->enc), off);
    in->lit = w[in->nwords++];
  }
  return HCQ_OK;
}

/* ---- printing (llvm-objdump syntax) ---- */

typedef struct pbuf {
  char *s;
  size_t n, at;
} pbuf;

__attribute__((format(printf, 2, 3))) static void pf(pbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(b->s + b->at, b->n - b->at, fmt, ap);
  va_end(ap);
  if (k > 0) b->at += (size_t)k;
  if (b->at >= b->n) b->at = b->n - 1;
}

/* A scalar register operand of `regs` dwords. */
static void pr_sreg(pbuf *b, unsigned code, int regs) {
  if (code == R3_NULL) return pf(b, "null");
  if (code == R3_VCC) return pf(b, regs == 2 ? "vcc" : "vcc_lo");
  if (code == R3_VCC + 1) return pf(b, "vcc_hi");
  if (code == R3_EXEC) return pf(b, regs == 2 ? "exec" : "exec_lo");
  if (code == R3_EXEC + 1) return pf(b, "exec_hi");
  if (code == R3_M0) return pf(b, "m0");
  if (code >= 108 && code < 124) {
    if (regs == 1) return pf(b, "ttmp%u", code - 108);
    return pf(b, "ttmp[%u:%u]", code - 108, code - 108 + regs - 1);
  }
  if (regs == 1) return pf(b, "s%u", code);
  pf(b, "s[%u:%u]", code, code + regs - 1);
}

static void pr_vreg(pbuf *b, unsigned v, int regs) {
  if (regs == 1) pf(b, "v%u", v);
  else pf(b, "v[%u:%u]", v, v + regs - 1);
}

/* A source operand: kind 0 integer, 1 f32, 2 f64, 3 f16 (for inline constants), 4 a 16-bit integer (its
 * literal prints as 16 bits). */
static void pr_src(pbuf *b, const r3_inst *in, unsigned code, int regs, int kind, bool abs, bool neg) {
  if (neg) pf(b, "-");
  if (abs) pf(b, "|");
  if (code >= R3_VGPR) pr_vreg(b, code - R3_VGPR, regs);
  else if (code < 128) pr_sreg(b, code, regs);
  else if (code <= 192) pf(b, "%u", code - 128);
  else if (code <= 208) pf(b, "-%u", code - 192);
  else if (code >= 240 && code <= 247) {
    static const char *const fc[] = {"0.5", "-0.5", "1.0", "-1.0", "2.0", "-2.0", "4.0", "-4.0"};
    pf(b, "%s", fc[code - 240]);
  } else if (code == 248) pf(b, "%s", kind == 2 ? "0.15915494309189532" : kind == 3 ? "0.15915494" : "0.15915494");
  else if (code == R3_LIT) pf(b, "0x%" PRIx32, kind == 4 ? in->lit & 0xffff : in->lit);
  else if (code == R3_SCC) pf(b, "src_scc");
  else if (code == R3_VCCZ) pf(b, "src_vccz");
  else if (code == R3_EXECZ) pf(b, "src_execz");
  else pf(b, "src_%u", code);
  if (abs) pf(b, "|");
}

static int src_kind(uint32_t fl, int s) {
  bool w64 = (s == 0 && (fl & F_S0_64)) || (s == 1 && (fl & F_S1_64)) || (s == 2 && (fl & F_S2_64));
  if (!(fl & F_FP)) return 0;
  return w64 ? 2 : (fl & F_F16) ? 3 : 1;
}
static int src_regs(uint32_t fl, int s) {
  return ((s == 0 && (fl & F_S0_64)) || (s == 1 && (fl & F_S1_64)) || (s == 2 && (fl & F_S2_64))) ? 2 : 1;
}

static void pr_mnemonic_vop(pbuf *b, const r3_inst *in, const r3_opinfo *o) {
  pf(b, "%s", o->name);
  if (o->flags & F_NOSFX) return;
  if (in->enc == E_VOP3 && o->enc != E_VOP3) pf(b, "_e64");
  else if (in->enc != E_VOP3) pf(b, "_e32");
}

static void pr_vopd_half(pbuf *b, const r3_inst *in, unsigned id, unsigned dst, const uint16_t *src) {
  const r3_opinfo *o = r3_info(id);
  /* VOP2 ops carry "v_" (their VOPD name is v_dual_ + the rest); the VOPD-only ones already carry "v_dual_" */
  pf(b, "v_dual_%s ", o->name + (strncmp(o->name, "v_dual_", 7) ? 2 : 7));
  pr_vreg(b, dst, 1);
  pf(b, ", ");
  pr_src(b, in, src[0], 1, (o->flags & F_FP) ? 1 : 0, false, false);
  if (id == R3_V_MOV_B32) return;
  if (id == R3_V_DUAL_FMAMK_F32) pf(b, ", 0x%" PRIx32, in->lit);
  pf(b, ", ");
  pr_vreg(b, src[1] - R3_VGPR, 1);
  if (id == R3_V_DUAL_FMAAK_F32) pf(b, ", 0x%" PRIx32, in->lit);
}

static void pr_waitcnt(pbuf *b, uint32_t imm) {
  /* gfx11 s_waitcnt simm16: vmcnt 15:10, lgkmcnt 9:4, expcnt 2:0; a field at its maximum is not printed */
  unsigned vm = (imm >> 10) & 63, lgkm = (imm >> 4) & 63, exp = imm & 7;
  bool any = false;
  if (vm != 63) pf(b, " vmcnt(%u)", vm), any = true;
  if (exp != 7) pf(b, " expcnt(%u)", exp), any = true;
  if (lgkm != 63) pf(b, " lgkmcnt(%u)", lgkm), any = true;
  if (!any) pf(b, " vmcnt(63) expcnt(7) lgkmcnt(63)");
}

static void pr_delay_alu(pbuf *b, uint32_t imm) {
  static const char *const id[] = {"NO_DEP", "VALU_DEP_1", "VALU_DEP_2", "VALU_DEP_3", "VALU_DEP_4",
                                   "TRANS32_DEP_1", "TRANS32_DEP_2", "TRANS32_DEP_3", "FMA_ACCUM_CYCLE_1",
                                   "SALU_CYCLE_1", "SALU_CYCLE_2", "SALU_CYCLE_3"};
  static const char *const skip[] = {"SAME", "NEXT", "SKIP_1", "SKIP_2", "SKIP_3", "SKIP_4", "SKIP_5"};
  unsigned i0 = imm & 15, sk = (imm >> 4) & 7, i1 = (imm >> 7) & 15;
  const char *sep = " ";
  if (i0) pf(b, "%sinstid0(%s)", sep, i0 < 12 ? id[i0] : "?"), sep = " | ";
  if (sk) pf(b, "%sinstskip(%s)", sep, sk < 7 ? skip[sk] : "?"), sep = " | ";
  if (i1) pf(b, "%sinstid1(%s)", sep, i1 < 12 ? id[i1] : "?");
}

void r3_print(const r3_inst *in, char *buf, size_t n) {
  pbuf b = {.s = buf, .n = n};
  buf[0] = 0;
  const r3_opinfo *o = r3_info(in->id);
  uint32_t fl = o->flags;
  int dregs = (fl & F_D64) ? 2 : 1;
  switch (in->enc) {
    case E_SOP1: case E_SOP2: case E_SOPC:
      pf(&b, "%s", o->name);
      if (in->enc != E_SOPC) {
        pf(&b, " ");
        pr_sreg(&b, in->dst, dregs);
        if (o->nsrc) pf(&b, ", ");
      } else {
        pf(&b, " ");
      }
      for (int s = 0; s < o->nsrc; s++) {
        if (s) pf(&b, ", ");
        pr_src(&b, in, in->src[s], src_regs(fl, s), 0, false, false);
      }
      return;
    case E_SOPK:
      pf(&b, "%s ", o->name);
      if (in->id == R3_S_GETREG_B32 || in->id == R3_S_SETREG_B32 || in->id == R3_S_SETREG_IMM32_B32) {
        /* simm16 = hwreg id 5:0, offset 10:6, size-1 15:11 (SOPInstructions.td, hwreg operand) */
        static const char *const hw[] = {[1] = "HW_REG_MODE", [2] = "HW_REG_STATUS", [3] = "HW_REG_TRAPSTS",
                                         [4] = "HW_REG_HW_ID", [5] = "HW_REG_GPR_ALLOC", [6] = "HW_REG_LDS_ALLOC",
                                         [7] = "HW_REG_IB_STS", [23] = "HW_REG_HW_ID1", [24] = "HW_REG_HW_ID2"};
        unsigned h = (unsigned)in->imm & 0xffff, hid = h & 63, ho = (h >> 6) & 31, hs = (h >> 11) + 1;
        char hb[64];
        if (hid < 25 && hw[hid]) snprintf(hb, sizeof hb, "%s", hw[hid]);
        else snprintf(hb, sizeof hb, "%u", hid);
        if (in->id == R3_S_GETREG_B32) pr_sreg(&b, in->dst, 1), pf(&b, ", ");
        if (ho == 0 && hs == 32) pf(&b, "hwreg(%s)", hb);
        else pf(&b, "hwreg(%s, %u, %u)", hb, ho, hs);
        if (in->id == R3_S_SETREG_B32) pf(&b, ", "), pr_sreg(&b, in->dst, 1);
        if (in->id == R3_S_SETREG_IMM32_B32) pf(&b, ", 0x%" PRIx32, in->lit);
        return;
      }
      if (in->id != R3_S_VERSION) {
        pr_sreg(&b, in->dst, 1);
        pf(&b, ", ");
      }
      pf(&b, "0x%x", (unsigned)in->imm & 0xffff);
      return;
    case E_SOPP: {
      pf(&b, "%s", o->name);
      uint32_t imm = (uint32_t)in->imm & 0xffff;
      switch (in->id) {
        case R3_S_WAITCNT: pr_waitcnt(&b, imm); break;
        case R3_S_DELAY_ALU: pr_delay_alu(&b, imm); break;
        case R3_S_CLAUSE: case R3_S_WAITCNT_DEPCTR: case R3_S_ROUND_MODE: case R3_S_SET_INST_PREFETCH_DISTANCE:
          pf(&b, " 0x%x", imm);
          break;
        case R3_S_SENDMSG:
          if (imm == 3) pf(&b, " sendmsg(MSG_DEALLOC_VGPRS)");
          else pf(&b, " sendmsg(%u, %u, %u)", imm & 0xff, (imm >> 4) & 7, (imm >> 8) & 3);
          break;
        case R3_S_ENDPGM: case R3_S_CODE_END: case R3_S_BARRIER: case R3_S_ICACHE_INV: case R3_S_WAIT_IDLE:
          if (imm) pf(&b, " %u", imm);
          break;
        default: pf(&b, " %u", imm);
      }
      return;
    }
    case E_SMEM: {
      int regs = 1 << (o->op <= 4 ? o->op : 0);
      pf(&b, "%s ", o->name);
      pr_sreg(&b, in->dst, regs);
      pf(&b, ", ");
      pr_sreg(&b, in->src[0], 2);
      pf(&b, ", ");
      if ((unsigned)in->imm1 != R3_NULL) {
        pr_sreg(&b, (unsigned)in->imm1, 1);
        if (in->imm) pf(&b, " offset:0x%x", (unsigned)in->imm & 0x1fffff);
      } else if (in->imm) {
        pf(&b, "0x%x", (unsigned)in->imm & 0x1fffff);
      } else {
        pf(&b, "null");
      }
      if (in->opsel & 2) pf(&b, " glc");
      if (in->opsel & 1) pf(&b, " dlc");
      return;
    }
    case E_MUBUF: pf(&b, "%s", o->name); return;
    case E_VOP3P: {
      pf(&b, "%s ", o->name);
      pr_vreg(&b, in->dst, 1);
      /* v_fma_mix*: neg_lo / neg_hi read as neg / abs source modifiers and op_sel_hi defaults to 0 (llvm-objdump-19) */
      bool mix = in->id == R3_V_FMA_MIX_F32 || in->id == R3_V_FMA_MIXLO_F16 || in->id == R3_V_FMA_MIXHI_F16;
      for (int s = 0; s < o->nsrc; s++)
        pf(&b, ", "), pr_src(&b, in, in->src[s], 1, 0, mix && ((in->abs >> s) & 1), mix && ((in->neg >> s) & 1));
      unsigned full = (1u << o->nsrc) - 1;
      if (mix) {
        if (in->opsel & full) pf(&b, " op_sel:[%d,%d,%d]", in->opsel & 1, (in->opsel >> 1) & 1, (in->opsel >> 2) & 1);
        if (in->omod & full) pf(&b, " op_sel_hi:[%d,%d,%d]", in->omod & 1, (in->omod >> 1) & 1, (in->omod >> 2) & 1);
        if (in->clamp) pf(&b, " clamp");
        return;
      }
      /* defaults: op_sel all 0, op_sel_hi all 1 (printed only when different) */
      if (in->opsel & full) {
        pf(&b, " op_sel:[");
        for (int s = 0; s < o->nsrc; s++) pf(&b, "%s%d", s ? "," : "", (in->opsel >> s) & 1);
        pf(&b, "]");
      }
      if ((in->omod & full) != full) {
        pf(&b, " op_sel_hi:[");
        for (int s = 0; s < o->nsrc; s++) pf(&b, "%s%d", s ? "," : "", (in->omod >> s) & 1);
        pf(&b, "]");
      }
      if (in->neg & full) {
        pf(&b, " neg_lo:[");
        for (int s = 0; s < o->nsrc; s++) pf(&b, "%s%d", s ? "," : "", (in->neg >> s) & 1);
        pf(&b, "]");
      }
      if (in->abs & full) {
        pf(&b, " neg_hi:[");
        for (int s = 0; s < o->nsrc; s++) pf(&b, "%s%d", s ? "," : "", (in->abs >> s) & 1);
        pf(&b, "]");
      }
      if (in->clamp) pf(&b, " clamp");
      return;
    }
    case E_VOPD:
      pr_vopd_half(&b, in, in->id, in->dst, in->src);
      pf(&b, " :: ");
      pr_vopd_half(&b, in, in->idy, in->dsty, in->srcy);
      return;
    case E_DS: {
      pf(&b, "%s", o->name);
      static const uint8_t regs_of[] = {[R3_DS_LOAD_B32] = 1, [R3_DS_LOAD_B64] = 2, [R3_DS_LOAD_B96] = 3,
                                        [R3_DS_LOAD_B128] = 4, [R3_DS_LOAD_2ADDR_B32] = 2, [R3_DS_LOAD_2ADDR_B64] = 4,
                                        [R3_DS_LOAD_U8] = 1, [R3_DS_LOAD_I8] = 1, [R3_DS_LOAD_U16] = 1,
                                        [R3_DS_LOAD_I16] = 1, [R3_DS_STORE_B32] = 1, [R3_DS_STORE_B64] = 2,
                                        [R3_DS_STORE_B96] = 3, [R3_DS_STORE_B128] = 4, [R3_DS_STORE_2ADDR_B32] = 1,
                                        [R3_DS_STORE_2ADDR_B64] = 2, [R3_DS_STORE_B8] = 1, [R3_DS_STORE_B16] = 1,
                                        [R3_DS_ADD_U32] = 1};
      bool load = strstr(o->name, "load") != NULL, two = strstr(o->name, "2addr") != NULL;
      pf(&b, " ");
      if (load) {
        pr_vreg(&b, in->dst, regs_of[in->id]);
        pf(&b, ", ");
        pr_vreg(&b, in->src[0], 1);
      } else {
        pr_vreg(&b, in->src[0], 1);
        pf(&b, ", ");
        pr_vreg(&b, in->src[1], regs_of[in->id]);
        if (two) pf(&b, ", "), pr_vreg(&b, in->src[2], regs_of[in->id]);
      }
      if (two) {
        if (in->imm) pf(&b, " offset0:%d", in->imm);
        if (in->imm1) pf(&b, " offset1:%d", in->imm1);
      } else if (in->imm | (in->imm1 << 8)) {
        pf(&b, " offset:%d", in->imm | (in->imm1 << 8));
      }
      return;
    }
    case E_FLAT: {
      static const char *const seg[] = {"flat_", "scratch_", "global_"};
      pf(&b, "%s%s ", seg[in->seg], o->name);
      bool load = o->name[0] == 'l';
      int regs = strstr(o->name, "128") ? 4 : strstr(o->name, "96") ? 3 : strstr(o->name, "64") ? 2 : 1;
      if (load) pr_vreg(&b, in->dst, regs), pf(&b, ", ");
      if (in->seg == 1) {
        if (in->abs) pr_vreg(&b, in->src[0], 1);
        else pf(&b, "off");
      } else {
        pr_vreg(&b, in->src[0], in->seg == 2 && in->src[2] != R3_NULL ? 1 : 2);
      }
      if (!load) pf(&b, ", "), pr_vreg(&b, in->src[1], regs);
      if (in->seg == 2) {
        pf(&b, ", ");
        if (in->src[2] == R3_NULL) pf(&b, "off");
        else pr_sreg(&b, in->src[2], 2);
      } else if (in->seg == 1) {
        pf(&b, ", ");
        if (in->src[2] == R3_NULL) pf(&b, "off");
        else pr_sreg(&b, in->src[2], 1);
      }
      if (in->imm) pf(&b, " offset:%d", in->imm);
      if (in->opsel & 2) pf(&b, " glc");
      if (in->opsel & 4) pf(&b, " slc");
      if (in->opsel & 1) pf(&b, " dlc");
      return;
    }
    default: break;
  }
  /* VOP1 / VOP2 / VOPC / VOP3 */
  pr_mnemonic_vop(&b, in, o);
  if (in->id == R3_V_NOP) return;
  const char *sep = " ";
  bool e64 = in->enc == E_VOP3;
  if (o->enc == E_VOPC) {
    if (!(fl & F_NODST)) {
      pf(&b, "%s", sep);
      pr_sreg(&b, e64 ? in->sdst : R3_VCC, 1);
      sep = ", ";
    }
  } else if (fl & F_SDST) {
    pf(&b, "%s", sep);
    pr_sreg(&b, in->dst, 1);
    sep = ", ";
  } else {
    pf(&b, "%s", sep);
    pr_vreg(&b, in->dst, dregs);
    sep = ", ";
  }
  if ((fl & F_VOP3B) && (e64 || (fl & F_COUT))) {
    pf(&b, "%s", sep);
    pr_sreg(&b, e64 ? in->sdst : R3_VCC, 1);
  }
  int nsrc = o->nsrc;
  for (int s = 0; s < nsrc; s++) {
    pf(&b, ", ");
    if (sep[0] == ' ' && s == 0) b.at -= 2, pf(&b, " ");
    if (in->id == R3_V_FMAMK_F32 && s == 1) pf(&b, "0x%" PRIx32 ", ", in->lit);
    int kind = src_kind(fl, s);
    if ((fl & F_F16) && !(fl & F_FP) && !(s == 2 && (in->id == R3_V_MAD_U32_U16 || in->id == R3_V_MAD_I32_I16))) kind = 4;
    pr_src(&b, in, in->src[s], src_regs(fl, s), kind, e64 && ((in->abs >> s) & 1), e64 && ((in->neg >> s) & 1));
  }
  if (in->id == R3_V_FMAAK_F32) pf(&b, ", 0x%" PRIx32, in->lit);
  if ((fl & F_CIN) && o->enc == E_VOP2) {
    pf(&b, ", ");
    pr_sreg(&b, e64 ? in->src[2] : R3_VCC, 1);
  }
  if (e64 && in->opsel && (fl & F_F16)) {
    pf(&b, " op_sel:[");
    for (int s = 0; s < nsrc; s++) pf(&b, "%d,", (in->opsel >> s) & 1);
    pf(&b, "%d]", (in->opsel >> 3) & 1);
  }
  if (in->clamp) pf(&b, " clamp");
  if (in->omod) pf(&b, " %s", in->omod == 1 ? "mul:2" : in->omod == 2 ? "mul:4" : "div:2");
}
