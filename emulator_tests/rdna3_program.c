/* RDNA3 program loading: kernel descriptor parsing and decoding the code once into r3_inst[] (branch targets
 * resolved to instruction indices). Kernel descriptor layout: llvm/docs/AMDGPUUsage.rst, "Kernel Descriptor"
 * (code object V3+): group_segment_fixed_size @0, private_segment_fixed_size @4, kernarg_size @8,
 * kernel_code_entry_byte_offset @16 (i64), compute_pgm_rsrc3 @44, rsrc1 @48, rsrc2 @52,
 * kernel_code_properties @56 (u16; bit 10 ENABLE_WAVEFRONT_SIZE32). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "emulator_tests/rdna3_internal.h"

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

hcq_status rdna3_kd_parse(const uint8_t kd[64], rdna3_kd *out) {
  memset(out, 0, sizeof *out);
  out->group_segment_B = rd32(kd);
  out->private_segment_B = rd32(kd + 4);
  out->kernarg_B = rd32(kd + 8);
  out->entry_offset_B = (int64_t)(rd32(kd + 16) | (uint64_t)rd32(kd + 20) << 32);
  out->rsrc3 = rd32(kd + 44);
  out->rsrc1 = rd32(kd + 48);
  out->rsrc2 = rd32(kd + 52);
  out->code_props = (uint16_t)(kd[56] | kd[57] << 8);
  if (!(out->code_props & (1u << 10)))
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "rdna3: kernel descriptor asks for wave64 (kernel_code_properties 0x%x "
                           "lacks ENABLE_WAVEFRONT_SIZE32); the interpreter runs wave32 only", out->code_props);
  if (out->group_segment_B > 65536)
    return hcq_status_make(HCQ_CODE_INVALID, "rdna3: kernel descriptor asks for %u bytes of LDS; gfx1100 has 65536",
                           out->group_segment_B);
  return HCQ_OK;
}

static size_t find_off(const rdna3_program *p, uint32_t off) {
  size_t lo = 0, hi = p->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (p->insts[mid].off_B < off) lo = mid + 1;
    else hi = mid;
  }
  return lo < p->n && p->insts[lo].off_B == off ? lo : (size_t)-1;
}

hcq_status rdna3_load(const uint8_t *code, size_t code_B, uint64_t code_va, size_t entry_B, const rdna3_kd *kd,
                      rdna3_program **out) {
  *out = NULL;
  if (code_B % 4 || entry_B % 4 || entry_B >= code_B || code_B > (size_t)1 << 30)
    return hcq_status_make(HCQ_CODE_INVALID, "rdna3: code of %zu bytes with entry at %zu (both must be multiples of 4, "
                           "entry inside the code)", code_B, entry_B);
  size_t nw = code_B / 4;
  uint32_t *words = malloc(code_B);
  rdna3_program *p = calloc(1, sizeof *p);
  if (p) p->insts = calloc(nw, sizeof *p->insts);
  if (!words || !p || !p->insts) {
    free(words);
    rdna3_free(p);
    return hcq_status_make(HCQ_CODE_NOMEM, "rdna3: out of memory decoding %zu bytes of code", code_B);
  }
  for (size_t i = 0; i < nw; i++) words[i] = rd32(code + 4 * i);
  p->code_va = code_va;
  p->kd = *kd;
  hcq_status st = HCQ_OK;
  for (size_t at = 0; at < nw && !st;) {
    r3_inst *in = &p->insts[p->n];
    st = r3_decode(words + at, nw - at, (uint32_t)(at * 4), in);
    if (st) break;
    p->n++;
    at += in->nwords;
  }
  for (size_t i = 0; i < p->n && !st; i++) {
    r3_inst *in = &p->insts[i];
    if (in->enc != E_SOPP || in->id < R3_S_BRANCH || in->id > R3_S_CBRANCH_EXECNZ) continue;
    int64_t t = (int64_t)in->off_B + 4 + (int64_t)in->imm * 4;
    size_t k = t >= 0 && t < (int64_t)code_B ? find_off(p, (uint32_t)t) : (size_t)-1;
    if (k == (size_t)-1)
      st = hcq_status_make(HCQ_CODE_INVALID, "rdna3: branch at code offset 0x%x goes to 0x%" PRIx64
                           ", which is not the start of an instruction", in->off_B, (uint64_t)t);
    in->target = (uint32_t)k;
  }
  if (!st && (p->entry = find_off(p, (uint32_t)entry_B)) == (size_t)-1)
    st = hcq_status_make(HCQ_CODE_INVALID, "rdna3: entry offset 0x%zx is not the start of an instruction", entry_B);
  free(words);
  if (st) {
    rdna3_free(p);
    return st;
  }
  *out = p;
  return HCQ_OK;
}

void rdna3_free(rdna3_program *p) {
  if (!p) return;
  free(p->insts);
  free(p);
}

size_t rdna3_count(const rdna3_program *p) { return p->n; }
uint32_t rdna3_offset(const rdna3_program *p, size_t i) { return i < p->n ? p->insts[i].off_B : 0; }
void rdna3_print(const rdna3_program *p, size_t i, char *buf, size_t n) {
  if (i >= p->n) {
    if (n) buf[0] = 0;
    return;
  }
  r3_print(&p->insts[i], buf, n);
}
