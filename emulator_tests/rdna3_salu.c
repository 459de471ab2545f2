/* RDNA3 scalar ALU: SOP1/SOP2/SOPC/SOPK and the MODE register (s_setreg/s_getreg). SCC rules per AMD's
 * "RDNA3 Instruction Set Architecture Reference Guide" (SCC = carry/borrow, signed overflow, or result != 0). */
#include "emulator_tests/rdna3_wave.h"

/* ---- SALU ---- */

hcq_status r3_set_mode(ex *c, wave *w, const r3_inst *in, uint32_t mode) {
  if (mode & 15) return r3_bad(c, w, in, "a rounding mode other than round-to-nearest-even is not modelled");
  w->mode = mode;
  int dm = (mode >> 4) & 3;
  w->ftz_in32 = dm == 0 || dm == 2;
  w->ftz_out32 = dm == 0 || dm == 1;
  return HCQ_OK;
}

hcq_status r3_salu(ex *c, wave *w, const r3_inst *in) {
  const r3_opinfo *o = r3_info_ready(in->id);
  uint32_t fl = o->flags;
  uint32_t a = 0, b = 0;
  uint64_t a64 = 0, b64 = 0;
  int k0 = in->id == R3_S_ASHR_I64 || in->id == R3_S_BFE_I64 ? 4 : 0; /* signed 64-bit source: literal sign-extends */
  if (o->nsrc > 0) a = sval32(w, in->src[0], in->lit, 0), a64 = (fl & F_S0_64) ? sval64(w, in->src[0], in->lit, k0) : a;
  if (o->nsrc > 1) b = sval32(w, in->src[1], in->lit, 0), b64 = (fl & F_S1_64) ? sval64(w, in->src[1], in->lit, 0) : b;
  uint32_t r = 0;
  uint64_t r64 = 0;
  bool scc = w->scc;
  int32_t sa = (int32_t)a, sb = (int32_t)b;
  switch (in->id) {
    case R3_S_ADD_U32: r64 = (uint64_t)a + b, r = (uint32_t)r64, scc = r64 >> 32; break;
    case R3_S_SUB_U32: r = a - b, scc = b > a; break;
    case R3_S_ADD_I32: r = a + b, scc = ((~(a ^ b)) & (a ^ r)) >> 31; break;
    case R3_S_SUB_I32: r = a - b, scc = ((a ^ b) & (a ^ r)) >> 31; break;
    case R3_S_ADDC_U32: r64 = (uint64_t)a + b + w->scc, r = (uint32_t)r64, scc = r64 >> 32; break;
    case R3_S_SUBB_U32: r = a - b - w->scc, scc = (uint64_t)b + w->scc > a; break;
    case R3_S_ABSDIFF_I32: r = sa > sb ? a - b : b - a, scc = r != 0; break;
    case R3_S_LSHL_B32: r = a << (b & 31), scc = r != 0; break;
    case R3_S_LSHR_B32: r = a >> (b & 31), scc = r != 0; break;
    case R3_S_ASHR_I32: r = (uint32_t)(sa >> (b & 31)), scc = r != 0; break;
    case R3_S_LSHL_B64: r64 = a64 << (b & 63), scc = r64 != 0; break;
    case R3_S_LSHR_B64: r64 = a64 >> (b & 63), scc = r64 != 0; break;
    case R3_S_ASHR_I64: r64 = (uint64_t)((int64_t)a64 >> (b & 63)), scc = r64 != 0; break;
    case R3_S_LSHL1_ADD_U32: case R3_S_LSHL2_ADD_U32: case R3_S_LSHL3_ADD_U32: case R3_S_LSHL4_ADD_U32: {
      int sh = 1 + (int)(in->id - R3_S_LSHL1_ADD_U32);
      r64 = ((uint64_t)a << sh) + b, r = (uint32_t)r64, scc = r64 >> 32 != 0;
      break;
    }
    case R3_S_MIN_I32: r = sa < sb ? a : b, scc = sa < sb; break;
    case R3_S_MIN_U32: r = a < b ? a : b, scc = a < b; break;
    case R3_S_MAX_I32: r = sa > sb ? a : b, scc = sa > sb; break;
    case R3_S_MAX_U32: r = a > b ? a : b, scc = a > b; break;
    case R3_S_AND_B32: r = a & b, scc = r != 0; break;
    case R3_S_OR_B32: r = a | b, scc = r != 0; break;
    case R3_S_XOR_B32: r = a ^ b, scc = r != 0; break;
    case R3_S_NAND_B32: r = ~(a & b), scc = r != 0; break;
    case R3_S_NOR_B32: r = ~(a | b), scc = r != 0; break;
    case R3_S_XNOR_B32: r = ~(a ^ b), scc = r != 0; break;
    case R3_S_AND_NOT1_B32: r = a & ~b, scc = r != 0; break;
    case R3_S_OR_NOT1_B32: r = a | ~b, scc = r != 0; break;
    case R3_S_AND_B64: r64 = a64 & b64, scc = r64 != 0; break;
    case R3_S_OR_B64: r64 = a64 | b64, scc = r64 != 0; break;
    case R3_S_XOR_B64: r64 = a64 ^ b64, scc = r64 != 0; break;
    case R3_S_AND_NOT1_B64: r64 = a64 & ~b64, scc = r64 != 0; break;
    case R3_S_OR_NOT1_B64: r64 = a64 | ~b64, scc = r64 != 0; break;
    case R3_S_BFE_U32: case R3_S_BFE_I32: {
      uint32_t off = b & 31, wd = (b >> 16) & 127;
      if (wd > 32) wd = 32;
      uint32_t v = wd ? (a >> off) & (uint32_t)((1ull << wd) - 1) : 0;
      if (in->id == R3_S_BFE_I32 && wd && wd < 32) v = (uint32_t)((int32_t)(v << (32 - wd)) >> (32 - wd));
      r = v, scc = r != 0;
      break;
    }
    case R3_S_BFE_U64: case R3_S_BFE_I64: {
      uint32_t off = b & 63, wd = (b >> 16) & 127;
      if (wd > 64) wd = 64;
      uint64_t v = wd ? (a64 >> off) & (wd == 64 ? ~0ull : (1ull << wd) - 1) : 0;
      if (in->id == R3_S_BFE_I64 && wd && wd < 64) v = (uint64_t)((int64_t)(v << (64 - wd)) >> (64 - wd));
      r64 = v, scc = r64 != 0;
      break;
    }
    case R3_S_BFM_B32: r = (uint32_t)((1ull << (a & 31)) - 1) << (b & 31); break;
    case R3_S_MUL_I32: r = a * b; break;
    case R3_S_MUL_HI_U32: r = (uint32_t)((uint64_t)a * b >> 32); break;
    case R3_S_MUL_HI_I32: r = (uint32_t)((uint64_t)((int64_t)sa * sb) >> 32); break;
    case R3_S_CSELECT_B32: r = w->scc ? a : b; break;
    case R3_S_CSELECT_B64: r64 = w->scc ? a64 : b64; break;
    case R3_S_PACK_LL_B32_B16: r = (a & 0xffff) | b << 16; break;
    case R3_S_PACK_LH_B32_B16: r = (a & 0xffff) | (b & 0xffff0000u); break;
    case R3_S_PACK_HH_B32_B16: r = a >> 16 | (b & 0xffff0000u); break;
    case R3_S_PACK_HL_B32_B16: r = a >> 16 | b << 16; break;
    case R3_S_MOV_B32: r = a; break;
    case R3_S_MOV_B64: r64 = a64; break;
    case R3_S_CMOV_B32: if (!w->scc) return HCQ_OK; r = a; break;
    case R3_S_CMOV_B64: if (!w->scc) return HCQ_OK; r64 = a64; break;
    case R3_S_NOT_B32: r = ~a, scc = r != 0; break;
    case R3_S_NOT_B64: r64 = ~a64, scc = r64 != 0; break;
    case R3_S_BREV_B32: for (int k = 0; k < 32; k++) r |= ((a >> k) & 1) << (31 - k); break;
    case R3_S_CTZ_I32_B32: r = a ? (uint32_t)__builtin_ctz(a) : 0xffffffffu; break;
    case R3_S_CTZ_I32_B64: r = a64 ? (uint32_t)__builtin_ctzll(a64) : 0xffffffffu; break;
    case R3_S_CLZ_I32_U64: r = a64 ? (uint32_t)__builtin_clzll(a64) : 0xffffffffu; break;
    case R3_S_BCNT1_I32_B64: r = (uint32_t)__builtin_popcountll(a64), scc = r != 0; break;
    case R3_S_BREV_B64: for (int k = 0; k < 64; k++) r64 |= ((a64 >> k) & 1) << (63 - k); break;
    case R3_S_CLZ_I32_U32: r = a ? (uint32_t)__builtin_clz(a) : 0xffffffffu; break;
    case R3_S_SEXT_I32_I8: r = (uint32_t)(int32_t)(int8_t)a; break;
    case R3_S_SEXT_I32_I16: r = (uint32_t)(int32_t)(int16_t)a; break;
    case R3_S_BITSET0_B32: r = w->s[in->dst] & ~(1u << (a & 31)); break;
    case R3_S_BITSET1_B32: r = w->s[in->dst] | (1u << (a & 31)); break;
    case R3_S_ABS_I32: r = sa < 0 ? 0u - a : a, scc = r != 0; break;
    case R3_S_BCNT1_I32_B32: r = (uint32_t)__builtin_popcount(a), scc = r != 0; break;
    case R3_S_AND_SAVEEXEC_B32: case R3_S_OR_SAVEEXEC_B32: case R3_S_XOR_SAVEEXEC_B32:
    case R3_S_AND_NOT0_SAVEEXEC_B32: case R3_S_OR_NOT0_SAVEEXEC_B32: case R3_S_AND_NOT1_SAVEEXEC_B32:
    case R3_S_OR_NOT1_SAVEEXEC_B32: case R3_S_AND_NOT0_WREXEC_B32: case R3_S_AND_NOT1_WREXEC_B32: {
      uint32_t ex0 = w->s[R3_EXEC], nx;
      switch (in->id) {
        case R3_S_AND_SAVEEXEC_B32: nx = a & ex0; break;
        case R3_S_OR_SAVEEXEC_B32: nx = a | ex0; break;
        case R3_S_XOR_SAVEEXEC_B32: nx = a ^ ex0; break;
        case R3_S_AND_NOT0_SAVEEXEC_B32: case R3_S_AND_NOT0_WREXEC_B32: nx = ~a & ex0; break;
        case R3_S_OR_NOT0_SAVEEXEC_B32: nx = ~a | ex0; break;
        case R3_S_AND_NOT1_SAVEEXEC_B32: case R3_S_AND_NOT1_WREXEC_B32: nx = a & ~ex0; break;
        default: nx = a | ~ex0; break;
      }
      w->s[R3_EXEC] = nx;
      w->scc = nx != 0;
      bool wr = in->id == R3_S_AND_NOT0_WREXEC_B32 || in->id == R3_S_AND_NOT1_WREXEC_B32;
      swrite32(w, in->dst, wr ? nx : ex0);
      return HCQ_OK;
    }
    case R3_S_GETPC_B64: r64 = c->p->code_va + in->off_B + 4; break;
    case R3_S_SETPC_B64: {
      uint64_t va = a64;
      if (va < c->p->code_va || va >= c->p->code_va + UINT32_MAX) return r3_bad(c, w, in, "jump outside the code");
      uint32_t off = (uint32_t)(va - c->p->code_va);
      size_t lo_i = 0, hi_i = c->p->n;
      while (lo_i < hi_i) {
        size_t mid = (lo_i + hi_i) / 2;
        if (c->p->insts[mid].off_B < off) lo_i = mid + 1;
        else hi_i = mid;
      }
      if (lo_i >= c->p->n || c->p->insts[lo_i].off_B != off) return r3_bad(c, w, in, "jump to an address that is not an instruction");
      w->pc = lo_i;
      return HCQ_OK;
    }
    /* SOPC */
    case R3_S_CMP_EQ_I32: case R3_S_CMP_EQ_U32: w->scc = a == b; return HCQ_OK;
    case R3_S_CMP_LG_I32: case R3_S_CMP_LG_U32: w->scc = a != b; return HCQ_OK;
    case R3_S_CMP_GT_I32: w->scc = sa > sb; return HCQ_OK;
    case R3_S_CMP_GE_I32: w->scc = sa >= sb; return HCQ_OK;
    case R3_S_CMP_LT_I32: w->scc = sa < sb; return HCQ_OK;
    case R3_S_CMP_LE_I32: w->scc = sa <= sb; return HCQ_OK;
    case R3_S_CMP_GT_U32: w->scc = a > b; return HCQ_OK;
    case R3_S_CMP_GE_U32: w->scc = a >= b; return HCQ_OK;
    case R3_S_CMP_LT_U32: w->scc = a < b; return HCQ_OK;
    case R3_S_CMP_LE_U32: w->scc = a <= b; return HCQ_OK;
    case R3_S_BITCMP0_B32: w->scc = !((a >> (b & 31)) & 1); return HCQ_OK;
    case R3_S_BITCMP1_B32: w->scc = (a >> (b & 31)) & 1; return HCQ_OK;
    case R3_S_CMP_EQ_U64: w->scc = a64 == b64; return HCQ_OK;
    case R3_S_CMP_LG_U64: w->scc = a64 != b64; return HCQ_OK;
    default: return r3_bad(c, w, in, "not implemented");
  }
  if (fl & F_D64) swrite64(w, in->dst, r64);
  else swrite32(w, in->dst, r);
  w->scc = scc;
  return HCQ_OK;
}

hcq_status r3_sopk(ex *c, wave *w, const r3_inst *in) {
  int32_t simm = in->imm;
  uint32_t uimm = (uint32_t)simm & 0xffff, d = w->s[in->dst];
  switch (in->id) {
    case R3_S_MOVK_I32: swrite32(w, in->dst, (uint32_t)simm); break;
    case R3_S_CMOVK_I32: if (w->scc) swrite32(w, in->dst, (uint32_t)simm); break;
    case R3_S_CMPK_EQ_I32: w->scc = (int32_t)d == simm; break;
    case R3_S_CMPK_LG_I32: w->scc = (int32_t)d != simm; break;
    case R3_S_CMPK_GT_I32: w->scc = (int32_t)d > simm; break;
    case R3_S_CMPK_GE_I32: w->scc = (int32_t)d >= simm; break;
    case R3_S_CMPK_LT_I32: w->scc = (int32_t)d < simm; break;
    case R3_S_CMPK_LE_I32: w->scc = (int32_t)d <= simm; break;
    case R3_S_CMPK_EQ_U32: w->scc = d == uimm; break;
    case R3_S_CMPK_LG_U32: w->scc = d != uimm; break;
    case R3_S_CMPK_GT_U32: w->scc = d > uimm; break;
    case R3_S_CMPK_GE_U32: w->scc = d >= uimm; break;
    case R3_S_CMPK_LT_U32: w->scc = d < uimm; break;
    case R3_S_CMPK_LE_U32: w->scc = d <= uimm; break;
    case R3_S_ADDK_I32: {
      uint32_t r = d + (uint32_t)simm;
      w->scc = ((~(d ^ (uint32_t)simm)) & (d ^ r)) >> 31;
      swrite32(w, in->dst, r);
      break;
    }
    case R3_S_MULK_I32: swrite32(w, in->dst, d * (uint32_t)simm); break;
    case R3_S_GETREG_B32: case R3_S_SETREG_B32: case R3_S_SETREG_IMM32_B32: {
      uint32_t hid = uimm & 63, off = (uimm >> 6) & 31, size = (uimm >> 11) + 1;
      uint32_t mask = (uint32_t)(((1ull << size) - 1) << off);
      if (hid != 1) return r3_bad(c, w, in, "only the MODE hardware register is modelled");
      if (in->id == R3_S_GETREG_B32) {
        swrite32(w, in->dst, (w->mode & mask) >> off);
        break;
      }
      uint32_t v = in->id == R3_S_SETREG_B32 ? sval32(w, in->dst, 0, 0) : in->lit;
      return r3_set_mode(c, w, in, (w->mode & ~mask) | ((v << off) & mask));
    }
    case R3_S_VERSION: case R3_S_WAITCNT_VSCNT: case R3_S_WAITCNT_VMCNT: case R3_S_WAITCNT_EXPCNT:
    case R3_S_WAITCNT_LGKMCNT: break;
    default: return r3_bad(c, w, in, "not implemented");
  }
  return HCQ_OK;
}
