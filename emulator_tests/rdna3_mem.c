/* RDNA3 memory instructions: SMEM, DS (LDS), FLAT/GLOBAL/SCRATCH. Global, flat and scalar accesses go through
 * the rdna3_mem_ops callbacks (the mock owns device memory); LDS and scratch are the interpreter's own and
 * bounds-checked. Every failed access is a page-fault report naming the instruction, lane and address. */
#include <stdio.h>
#include <string.h>

#include "emulator_tests/rdna3_wave.h"

/* ---- memory ---- */

hcq_status r3_smem(ex *c, wave *w, const r3_inst *in) {
  uint32_t n = 1u << (in->id - R3_S_LOAD_B32);
  uint64_t base = (w->s[in->src[0]] | (uint64_t)w->s[(in->src[0] + 1) & 127] << 32) & 0xffffffffffffull;
  uint64_t va = base + (uint64_t)(int64_t)in->imm + ((unsigned)in->imm1 == R3_NULL ? 0 : w->s[in->imm1]);
  va &= ~3ull; /* the scalar cache ignores the low two address bits */
  uint32_t buf[16];
  if (in->dst + n > 106) return r3_bad(c, w, in, "scalar load past the SGPRs");
  hcq_status st = c->mem->read(c->mem->ctx, va, n * 4, buf);
  if (st) return r3_fault(c, w, in, -1, va, "scalar read", st);
  memcpy(&w->s[in->dst], buf, n * 4);
  return HCQ_OK;
}

static hcq_status lds_check(ex *c, wave *w, const r3_inst *in, int lane, uint32_t addr, uint32_t size) {
  if ((uint64_t)addr + size > c->lds_B) {
    char why[96];
    snprintf(why, sizeof why, "LDS access of %u bytes (the workgroup has %u bytes of LDS)", size, c->lds_B);
    return r3_fault(c, w, in, lane, addr, why, NULL);
  }
  return HCQ_OK;
}

hcq_status r3_ds(ex *c, wave *w, const r3_inst *in) {
  uint32_t exec = w->s[R3_EXEC];
  unsigned a = in->src[0], d0 = in->src[1], d1 = in->src[2], dst = in->dst;
  uint32_t off = (uint32_t)(in->imm | (in->imm1 << 8));
  for (int l = 0; l < 32; l++) {
    if (!((exec >> l) & 1)) continue;
    uint32_t addr = w->v[a][l];
    uint32_t n = 0, sz = 0;
    switch (in->id) {
      case R3_DS_LOAD_B32: n = 1; goto load;
      case R3_DS_LOAD_B64: n = 2; goto load;
      case R3_DS_LOAD_B96: n = 3; goto load;
      case R3_DS_LOAD_B128: n = 4;
      load:
        HCQ_TRY(lds_check(c, w, in, l, addr + off, n * 4));
        for (uint32_t k = 0; k < n; k++) memcpy(&w->v[(dst + k) & 255][l], c->lds + addr + off + 4 * k, 4);
        break;
      case R3_DS_LOAD_U8: case R3_DS_LOAD_I8: case R3_DS_LOAD_U16: case R3_DS_LOAD_I16: {
        sz = in->id == R3_DS_LOAD_U8 || in->id == R3_DS_LOAD_I8 ? 1 : 2;
        HCQ_TRY(lds_check(c, w, in, l, addr + off, sz));
        uint8_t *p = c->lds + addr + off;
        uint32_t v = sz == 1 ? p[0] : (uint32_t)(p[0] | p[1] << 8);
        if (in->id == R3_DS_LOAD_I8) v = (uint32_t)(int32_t)(int8_t)v;
        if (in->id == R3_DS_LOAD_I16) v = (uint32_t)(int32_t)(int16_t)v;
        w->v[dst][l] = v;
        break;
      }
      case R3_DS_LOAD_2ADDR_B32: case R3_DS_LOAD_2ADDR_B64: {
        sz = in->id == R3_DS_LOAD_2ADDR_B32 ? 4 : 8;
        uint32_t a0 = addr + (uint32_t)in->imm * sz, a1 = addr + (uint32_t)in->imm1 * sz;
        HCQ_TRY(lds_check(c, w, in, l, a0, sz));
        HCQ_TRY(lds_check(c, w, in, l, a1, sz));
        uint32_t words = sz / 4;
        for (uint32_t k = 0; k < words; k++) {
          memcpy(&w->v[(dst + k) & 255][l], c->lds + a0 + 4 * k, 4);
          memcpy(&w->v[(dst + words + k) & 255][l], c->lds + a1 + 4 * k, 4);
        }
        break;
      }
      case R3_DS_STORE_B32: n = 1; goto store;
      case R3_DS_STORE_B64: n = 2; goto store;
      case R3_DS_STORE_B96: n = 3; goto store;
      case R3_DS_STORE_B128: n = 4;
      store:
        HCQ_TRY(lds_check(c, w, in, l, addr + off, n * 4));
        for (uint32_t k = 0; k < n; k++) memcpy(c->lds + addr + off + 4 * k, &w->v[(d0 + k) & 255][l], 4);
        break;
      case R3_DS_STORE_B8: case R3_DS_STORE_B16:
        sz = in->id == R3_DS_STORE_B8 ? 1 : 2;
        HCQ_TRY(lds_check(c, w, in, l, addr + off, sz));
        memcpy(c->lds + addr + off, &w->v[d0][l], sz); /* little-endian host: the low bytes */
        break;
      case R3_DS_STORE_2ADDR_B32: case R3_DS_STORE_2ADDR_B64: {
        sz = in->id == R3_DS_STORE_2ADDR_B32 ? 4 : 8;
        uint32_t a0 = addr + (uint32_t)in->imm * sz, a1 = addr + (uint32_t)in->imm1 * sz, words = sz / 4;
        HCQ_TRY(lds_check(c, w, in, l, a0, sz));
        HCQ_TRY(lds_check(c, w, in, l, a1, sz));
        for (uint32_t k = 0; k < words; k++) {
          memcpy(c->lds + a0 + 4 * k, &w->v[(d0 + k) & 255][l], 4);
          memcpy(c->lds + a1 + 4 * k, &w->v[(d1 + k) & 255][l], 4);
        }
        break;
      }
      case R3_DS_ADD_U32: {
        HCQ_TRY(lds_check(c, w, in, l, addr + off, 4));
        uint32_t v;
        memcpy(&v, c->lds + addr + off, 4);
        v += w->v[d0][l];
        memcpy(c->lds + addr + off, &v, 4);
        break;
      }
      default: return r3_bad(c, w, in, "not implemented");
    }
  }
  return HCQ_OK;
}

hcq_status r3_flat(ex *c, wave *w, const r3_inst *in) {
  uint32_t exec = w->s[R3_EXEC];
  unsigned id = in->id;
  bool load = id <= R3_M_LOAD_B128 || (id >= R3_M_LOAD_D16_U8 && id <= R3_M_LOAD_D16_HI_B16);
  static const uint8_t size_of[] = {[R3_M_LOAD_U8 - R3_M_LOAD_U8] = 1, [R3_M_LOAD_I8 - R3_M_LOAD_U8] = 1,
                                    [R3_M_LOAD_U16 - R3_M_LOAD_U8] = 2, [R3_M_LOAD_I16 - R3_M_LOAD_U8] = 2,
                                    [R3_M_LOAD_B32 - R3_M_LOAD_U8] = 4, [R3_M_LOAD_B64 - R3_M_LOAD_U8] = 8,
                                    [R3_M_LOAD_B96 - R3_M_LOAD_U8] = 12, [R3_M_LOAD_B128 - R3_M_LOAD_U8] = 16,
                                    [R3_M_STORE_B8 - R3_M_LOAD_U8] = 1, [R3_M_STORE_B16 - R3_M_LOAD_U8] = 2,
                                    [R3_M_STORE_B32 - R3_M_LOAD_U8] = 4, [R3_M_STORE_B64 - R3_M_LOAD_U8] = 8,
                                    [R3_M_STORE_B96 - R3_M_LOAD_U8] = 12, [R3_M_STORE_B128 - R3_M_LOAD_U8] = 16,
                                    [R3_M_LOAD_D16_U8 - R3_M_LOAD_U8] = 1, [R3_M_LOAD_D16_I8 - R3_M_LOAD_U8] = 1,
                                    [R3_M_LOAD_D16_B16 - R3_M_LOAD_U8] = 2, [R3_M_LOAD_D16_HI_U8 - R3_M_LOAD_U8] = 1,
                                    [R3_M_LOAD_D16_HI_I8 - R3_M_LOAD_U8] = 1, [R3_M_LOAD_D16_HI_B16 - R3_M_LOAD_U8] = 2,
                                    [R3_M_STORE_D16_HI_B8 - R3_M_LOAD_U8] = 1, [R3_M_STORE_D16_HI_B16 - R3_M_LOAD_U8] = 2};
  uint32_t size = size_of[id - R3_M_LOAD_U8], words = (size + 3) / 4;
  unsigned a = in->src[0], dat = in->src[1], sa = in->src[2];
  for (int l = 0; l < 32; l++) {
    if (!((exec >> l) & 1)) continue;
    uint32_t buf[4] = {0};
    if (in->seg == 1) { /* scratch: per-lane private memory */
      uint64_t pa = (uint64_t)(int64_t)in->imm + (in->abs ? w->v[a][l] : 0) + (sa == R3_NULL ? 0 : w->s[sa]);
      uint32_t priv = c->p->kd.private_segment_B;
      if (pa + size > priv) {
        char why[96];
        snprintf(why, sizeof why, "scratch %s (the private segment is %u bytes per lane)", load ? "read" : "write", priv);
        return r3_fault(c, w, in, l, pa, why, NULL);
      }
      if (w->scratch_va) { /* device memory (rdna3_dispatch.scratch_va): checked by the memory callbacks */
        uint64_t va = w->scratch_va + (uint64_t)l * priv + pa;
        if (load) {
          hcq_status st = c->mem->read(c->mem->ctx, va, size, buf);
          if (st) return r3_fault(c, w, in, l, va, "scratch read", st);
        } else {
          for (uint32_t k = 0; k < words; k++) buf[k] = w->v[(dat + k) & 255][l];
          hcq_status st = c->mem->write(c->mem->ctx, va, size, buf);
          if (st) return r3_fault(c, w, in, l, va, "scratch write", st);
          continue;
        }
      } else {
        uint8_t *p = w->scratch + (size_t)l * priv + pa;
        if (load) memcpy(buf, p, size);
        else {
          for (uint32_t k = 0; k < words; k++) buf[k] = w->v[(dat + k) & 255][l];
          memcpy(p, buf, size);
          continue;
        }
      }
    } else {
      uint64_t va;
      if (in->seg == 2 && sa != R3_NULL) va = (w->s[sa] | (uint64_t)w->s[(sa + 1) & 127] << 32) + w->v[a][l];
      else va = w->v[a][l] | (uint64_t)w->v[(a + 1) & 255][l] << 32;
      va += (uint64_t)(int64_t)in->imm;
      if (load) {
        hcq_status st = c->mem->read(c->mem->ctx, va, size, buf);
        if (st) return r3_fault(c, w, in, l, va, "read", st);
      } else {
        for (uint32_t k = 0; k < words; k++) buf[k] = w->v[(dat + k) & 255][l];
        if (id == R3_M_STORE_D16_HI_B8 || id == R3_M_STORE_D16_HI_B16) buf[0] >>= 16;
        hcq_status st = c->mem->write(c->mem->ctx, va, size, buf);
        if (st) return r3_fault(c, w, in, l, va, "write", st);
        continue;
      }
    }
    uint32_t v = buf[0], old = w->v[in->dst][l];
    switch (id) { /* d16 loads fill one half of the VGPR and keep the other */
      case R3_M_LOAD_D16_U8: w->v[in->dst][l] = (old & 0xffff0000u) | (v & 0xff); continue;
      case R3_M_LOAD_D16_I8: w->v[in->dst][l] = (old & 0xffff0000u) | ((uint32_t)(int32_t)(int8_t)v & 0xffff); continue;
      case R3_M_LOAD_D16_B16: w->v[in->dst][l] = (old & 0xffff0000u) | (v & 0xffff); continue;
      case R3_M_LOAD_D16_HI_U8: w->v[in->dst][l] = (old & 0xffff) | (v & 0xff) << 16; continue;
      case R3_M_LOAD_D16_HI_I8: w->v[in->dst][l] = (old & 0xffff) | (uint32_t)(int32_t)(int8_t)v << 16; continue;
      case R3_M_LOAD_D16_HI_B16: w->v[in->dst][l] = (old & 0xffff) | (v & 0xffff) << 16; continue;
      default: break;
    }
    switch (id) {
      case R3_M_LOAD_I8: v = (uint32_t)(int32_t)(int8_t)v; break;
      case R3_M_LOAD_I16: v = (uint32_t)(int32_t)(int16_t)v; break;
      case R3_M_LOAD_U8: v &= 0xff; break;
      case R3_M_LOAD_U16: v &= 0xffff; break;
      default: break;
    }
    buf[0] = v;
    for (uint32_t k = 0; k < words; k++) w->v[(in->dst + k) & 255][l] = buf[k];
  }
  return HCQ_OK;
}
