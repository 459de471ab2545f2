/* Test helpers for the RDNA3 interpreter (header-only, for *_test.c): a minimal ELF64 walk that finds .text and a
 * kernel's descriptor (<name>.kd) in a code object (until the shared HSACO reader is on this branch), host memory
 * behind rdna3_mem_ops (device address = host address, every access checked against the registered buffers), a
 * run of a compiled cc_program on the interpreter, the cross-check of the decoder against llvm-objdump-19, and
 * the lane kernels of the instruction tests (inputs in v1..v3, the result in v4) with their input generator. */
#ifndef HCQ_EMU_RDNA3_TEST_UTIL_H
#define HCQ_EMU_RDNA3_TEST_UTIL_H

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/compiler.h"
#include "compiler/interp.h"
#include "emulator_tests/rdna3.h"
#include "base/testing.h"

typedef struct r3t_code {
  const uint8_t *text;
  size_t text_B;
  uint64_t text_va;
  uint8_t kd[64];
  uint64_t kd_va;
} r3t_code;

static inline uint64_t r3t_rd(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* Find .text and the descriptor `<symbol>.kd` (NULL symbol: the first *.kd) in an ELF64 code object. */
static inline hcq_status r3t_elf(const uint8_t *b, size_t n, const char *symbol, r3t_code *out) {
  memset(out, 0, sizeof *out);
  if (n < 64 || memcmp(b, "\177ELF", 4) || b[4] != 2) return hcq_status_make(HCQ_CODE_INVALID, "not an ELF64 file");
  uint64_t shoff = r3t_rd(b + 40, 8);
  unsigned shentsize = (unsigned)r3t_rd(b + 58, 2), shnum = (unsigned)r3t_rd(b + 60, 2), shstrndx = (unsigned)r3t_rd(b + 62, 2);
  if (shentsize != 64 || shoff + (uint64_t)shnum * 64 > n || shstrndx >= shnum) return hcq_status_make(HCQ_CODE_INVALID, "bad section table");
#define SH(i, off, w) r3t_rd(b + shoff + (uint64_t)(i) * 64 + (off), (w))
  uint64_t strtab_off = SH(shstrndx, 24, 8);
  int symtab = -1;
  for (unsigned i = 0; i < shnum; i++) {
    uint64_t off = SH(i, 24, 8), size = SH(i, 32, 8);
    const char *name = (const char *)b + strtab_off + SH(i, 0, 4);
    if (off + size > n && SH(i, 4, 4) != 8) return hcq_status_make(HCQ_CODE_INVALID, "section %u out of the file", i);
    if (!strcmp(name, ".text")) out->text = b + off, out->text_B = size, out->text_va = SH(i, 16, 8);
    if (SH(i, 4, 4) == 2) symtab = (int)i;
  }
  if (!out->text || symtab < 0) return hcq_status_make(HCQ_CODE_INVALID, "no .text or no symbol table");
  uint64_t soff = SH(symtab, 24, 8), ssize = SH(symtab, 32, 8), sstr = SH(SH(symtab, 40, 4), 24, 8);
  for (uint64_t s = soff; s + 24 <= soff + ssize; s += 24) {
    const char *nm = (const char *)b + sstr + r3t_rd(b + s, 4);
    size_t l = strlen(nm);
    bool match = symbol ? (!strncmp(nm, symbol, strlen(symbol)) && !strcmp(nm + strlen(symbol), ".kd"))
                        : (l > 3 && !strcmp(nm + l - 3, ".kd"));
    if (!match) continue;
    unsigned shndx = (unsigned)r3t_rd(b + s + 6, 2);
    uint64_t va = r3t_rd(b + s + 8, 8);
    if (shndx >= shnum) break;
    uint64_t foff = SH(shndx, 24, 8) + (va - SH(shndx, 16, 8));
    if (foff + 64 > n) break;
    memcpy(out->kd, b + foff, 64);
    out->kd_va = va;
    return HCQ_OK;
  }
#undef SH
  return hcq_status_make(HCQ_CODE_NOT_FOUND, "no kernel descriptor %s.kd", symbol ? symbol : "*");
}

/* Host memory as device memory: each region [va, va+size) is host memory at the same address. */
typedef struct r3t_mem {
  struct { uint64_t va, size; } r[24];
  int n;
  int64_t reads, writes;
} r3t_mem;

static inline void r3t_mem_add(r3t_mem *m, const void *p, size_t size) {
  if (m->n < 24) m->r[m->n].va = (uint64_t)(uintptr_t)p, m->r[m->n++].size = size;
}
static inline hcq_status r3t_mem_find(r3t_mem *m, uint64_t va, uint32_t size) {
  for (int i = 0; i < m->n; i++)
    if (va >= m->r[i].va && va - m->r[i].va + size <= m->r[i].size) return HCQ_OK;
  return hcq_status_make(HCQ_CODE_INVALID, "no allocation holds [0x%" PRIx64 ", +%u)", va, size);
}
static inline hcq_status r3t_read(void *ctx, uint64_t va, uint32_t size, void *out) {
  r3t_mem *m = ctx;
  HCQ_TRY(r3t_mem_find(m, va, size));
  memcpy(out, (const void *)(uintptr_t)va, size);
  m->reads++;
  return HCQ_OK;
}
static inline hcq_status r3t_write(void *ctx, uint64_t va, uint32_t size, const void *in) {
  r3t_mem *m = ctx;
  HCQ_TRY(r3t_mem_find(m, va, size));
  memcpy((void *)(uintptr_t)va, in, size);
  m->writes++;
  return HCQ_OK;
}

/* Load a code object's kernel `symbol` on the interpreter. */
static inline hcq_status r3t_load(const uint8_t *bin, size_t n, const char *symbol, rdna3_program **out) {
  r3t_code c;
  rdna3_kd kd;
  HCQ_TRY(r3t_elf(bin, n, symbol, &c));
  HCQ_TRY(rdna3_kd_parse(c.kd, &kd));
  int64_t entry = (int64_t)c.kd_va + kd.entry_offset_B - (int64_t)c.text_va;
  if (entry < 0 || (uint64_t)entry >= c.text_B) return hcq_status_make(HCQ_CODE_INVALID, "kernel entry outside .text");
  return rdna3_load(c.text, c.text_B, c.text_va, (size_t)entry, &kd, out);
}

/* Run a compiled amdgpu program on got (kernarg: the buffers' addresses in slot order, then each variable as an
 * i32, as compiler/render_llvm.c declares the parameters); launch: global_size workgroups of local_size items.
 * max_insts: 0 for no limit, else a budget for the whole dispatch (exceeding it is HCQ_CODE_TIMEOUT). */
static inline hcq_status r3t_run(const cc_program *p, cc_kbuf *got, size_t ngot, const uop_var_val *vals,
                                 size_t nvals, uint64_t max_insts, rdna3_stats *stats) {
  rdna3_program *prog = NULL;
  HCQ_TRY(r3t_load(p->binary, p->binary_size_B, p->symbol, &prog));
  uint8_t kernarg[256] __attribute__((aligned(16))) = {0};
  size_t at = 0;
  r3t_mem m = {0};
  for (size_t i = 0; i < ngot && at + 8 <= sizeof kernarg; i++, at += 8) {
    uint64_t va = (uint64_t)(uintptr_t)got[i].data;
    memcpy(kernarg + at, &va, 8);
    r3t_mem_add(&m, got[i].data, got[i].size_B);
  }
  for (size_t v = 0; v < hcq_program_nvars(&p->desc) && at + 4 <= sizeof kernarg; v++, at += 4)
    for (size_t j = 0; j < nvals; j++)
      if (!strcmp(vals[j].name, hcq_program_var(&p->desc, v)->name)) {
        int32_t x = (int32_t)vals[j].value;
        memcpy(kernarg + at, &x, 4);
      }
  r3t_mem_add(&m, kernarg, sizeof kernarg);
  rdna3_dispatch d = {.kernarg_va = (uint64_t)(uintptr_t)kernarg, .max_total_insts = max_insts};
  hcq_status st = HCQ_OK;
  for (int k = 0; k < 3 && !st; k++) {
    int64_t g = cc_launch_const(p->desc.global[k]), l = cc_launch_const(p->desc.local[k]);
    if (g < 1 || l < 1)
      st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "launch sizes must be constants");
    d.groups[k] = (uint32_t)g, d.block[k] = (uint32_t)l;
  }
  if (!st) st = rdna3_run(prog, &d, &(rdna3_mem_ops){.ctx = &m, .read = r3t_read, .write = r3t_write}, stats);
  rdna3_free(prog);
  return st;
}

/* Assemble gfx1100 source with llvm-mc-19 into obj (cap bytes) and find its .text; false if the tool fails. */
static inline bool r3t_asm(const char *src, uint8_t *obj, size_t cap, r3t_code *c) {
  char spath[] = "/tmp/hcq-r3-asm-XXXXXX.s", opath[64], cmd[300];
  int fd = mkstemps(spath, 2);
  if (fd < 0) return false;
  bool ok = write(fd, src, strlen(src)) == (ssize_t)strlen(src);
  close(fd);
  snprintf(opath, sizeof opath, "%s.o", spath);
  snprintf(cmd, sizeof cmd, "llvm-mc-19 -arch=amdgcn -mcpu=gfx1100 -filetype=obj %s -o %s", spath, opath);
  ok = ok && system(cmd) == 0;
  unlink(spath);
  FILE *f = ok ? fopen(opath, "rb") : NULL;
  size_t n = f ? fread(obj, 1, cap, f) : 0;
  if (f) fclose(f);
  unlink(opath);
  if (!n) {
    fprintf(stderr, "llvm-mc-19 failed on:\n%s\n", src);
    return false;
  }
  hcq_status_free(r3t_elf(obj, n, NULL, c)); /* a plain object has no kernel descriptor: the caller makes one */
  return c->text != NULL;
}

/* Collapse runs of blanks to one space and drop trailing blanks. */
static inline void r3t_norm(char *s) {
  char *o = s;
  bool sp = false;
  for (char *p = s; *p; p++) {
    if (isspace((unsigned char)*p)) sp = o != s;
    else {
      if (sp) *o++ = ' ';
      sp = false;
      *o++ = *p;
    }
  }
  *o = 0;
}

/* Disassemble the code object with llvm-objdump-19 and compare every instruction's text with the decoder's.
 * Returns the number of instructions compared (adds failed checks on mismatches); -1 if the tool is missing. */
static inline long r3t_objdump_check(const uint8_t *bin, size_t n, const char *what) {
  char path[] = "/tmp/hcq-r3-objdump-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return -1;
  bool ok = write(fd, bin, n) == (ssize_t)n;
  close(fd);
  char cmd[400];
  snprintf(cmd, sizeof cmd, "llvm-objdump-19 -d --mcpu=gfx1100 %s 2>&1", path);
  FILE *f = ok ? popen(cmd, "r") : NULL;
  if (!f) {
    unlink(path);
    return -1;
  }
  rdna3_program *prog = NULL;
  r3t_code c;
  rdna3_kd kd = {.code_props = 1u << 10};
  hcq_status st = r3t_elf(bin, n, NULL, &c);
  if (!st) st = rdna3_load(c.text, c.text_B, c.text_va, 0, &kd, &prog);
  if (st) {
    fprintf(stderr, "%s: %s\n", what, hcq_status_message(st));
    CHECK(!"decoder failed on the code object");
    hcq_status_free(st);
  }
  long compared = 0, bad = 0;
  size_t idx = 0;
  char line[1024], mine[256];
  while (fgets(line, sizeof line, f)) {
    char *sl = strstr(line, "// ");
    if (line[0] != '\t' || !sl) continue;
    uint64_t addr = strtoull(sl + 3, NULL, 16);
    *sl = 0;
    r3t_norm(line);
    if (!prog) continue;
    while (idx < rdna3_count(prog) && rdna3_offset(prog, idx) + c.text_va < addr) idx++;
    if (idx >= rdna3_count(prog) || rdna3_offset(prog, idx) + c.text_va != addr) {
      if (bad++ < 5) fprintf(stderr, "%s: objdump has `%s` at 0x%" PRIx64 ", the decoder no instruction there\n", what, line, addr);
      continue;
    }
    rdna3_print(prog, idx, mine, sizeof mine);
    r3t_norm(mine);
    compared++;
    if (strcmp(mine, line) && bad++ < 5)
      fprintf(stderr, "%s at 0x%" PRIx64 ":\n  llvm-objdump: %s\n  decoder:      %s\n", what, addr, line, mine);
  }
  pclose(f);
  unlink(path);
  rdna3_free(prog);
  CHECK_EQ_INT(bad, 0);
  return compared;
}

/* ---- lane kernels: three input dwords per lane in v1..v3, one result in v4 ---- */

/* xorshift64 for test inputs; the state is the test's own fixed seed */
static inline uint32_t r3t_rnd32(uint64_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return (uint32_t)(*state >> 11);
}
static inline uint32_t r3t_fb(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float r3t_bf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* Assemble `body` (llvm-mc-19) between the loads of v1..v3 from in[lane][0..2] and the store of v4 to out[lane],
 * and run it on n lanes (a multiple of 32; FLOAT_DENORM_MODE_32 = denorm_mode). With `text`, the instruction under
 * test (after the 12 of the prologue) must print as text. False when it does not assemble or run (the run's error
 * in err when given, else on stderr). */
static inline bool r3t_run_lanes(const char *body, uint32_t denorm_mode, uint32_t (*in)[4], uint32_t *out, int n,
                                 const char *text, char *err, size_t err_n) {
  char src[4096];
  snprintf(src, sizeof src,
           "s_load_b128 s[4:7], s[0:1], 0x0\n"
           "v_lshlrev_b32 v10, 4, v0\n"
           "v_lshlrev_b32 v11, 2, v0\n"
           "s_lshl_b32 s8, s2, 9\n" /* workgroup id (s2) * 32 lanes * 16 bytes */
           "s_lshl_b32 s9, s2, 7\n"
           "s_waitcnt lgkmcnt(0)\n"
           "s_add_u32 s4, s4, s8\n s_addc_u32 s5, s5, 0\n s_add_u32 s6, s6, s9\n s_addc_u32 s7, s7, 0\n"
           "global_load_b96 v[1:3], v10, s[4:5]\n"
           "s_waitcnt vmcnt(0)\n"
           "%s\n"
           "global_store_b32 v11, v4, s[6:7]\n"
           "s_endpgm\n", body);
  static uint8_t obj[65536];
  r3t_code c;
  if (!r3t_asm(src, obj, sizeof obj, &c)) return false;
  /* kernarg pointer in s[0:1] (kernel_code_properties bit 3), wave32 (bit 10); USER_SGPR_COUNT 2, workgroup id x
   * in s2 (rsrc2 bit 7); FLOAT_DENORM_MODE_32 in rsrc1 17:16 */
  rdna3_kd kd = {.code_props = (1u << 3) | (1u << 10), .rsrc2 = (2u << 1) | (1u << 7), .rsrc1 = denorm_mode << 16 | 3u << 18};
  rdna3_program *p = NULL;
  CHECK_OK(rdna3_load(c.text, c.text_B, 0, 0, &kd, &p));
  if (!p) return false;
  if (text) {
    char got[256];
    rdna3_print(p, 12, got, sizeof got);
    r3t_norm(got);
    if (strcmp(got, text)) fprintf(stderr, "decoded: %s\nsource:  %s\n", got, text);
    CHECK_EQ_STR(got, text);
  }
  uint64_t args[2] = {(uint64_t)(uintptr_t)in, (uint64_t)(uintptr_t)out};
  r3t_mem m = {0};
  r3t_mem_add(&m, in, (size_t)n * sizeof *in);
  r3t_mem_add(&m, out, (size_t)n * sizeof *out);
  r3t_mem_add(&m, args, sizeof args);
  rdna3_dispatch d = {.groups = {(uint32_t)n / 32, 1, 1}, .block = {32, 1, 1}, .kernarg_va = (uint64_t)(uintptr_t)args};
  memset(out, 0xcd, (size_t)n * sizeof *out);
  hcq_status st = rdna3_run(p, &d, &(rdna3_mem_ops){.ctx = &m, .read = r3t_read, .write = r3t_write}, NULL);
  rdna3_free(p);
  if (st) {
    if (err) snprintf(err, err_n, "%s", hcq_status_message(st));
    else fprintf(stderr, "%s: %s\n", body, hcq_status_message(st));
    hcq_status_free(st);
    return false;
  }
  return true;
}

/* A lane's check; the first 12 failures (counted in *bad) print the lane's inputs. */
static inline void r3t_expect(bool ok, const char *what, int i, const uint32_t in[4], uint32_t got, uint32_t want,
                              int *bad) {
  if (!ok && (*bad)++ < 12)
    fprintf(stderr, "%s: lane input %d (0x%08x 0x%08x 0x%08x): got 0x%08x, want 0x%08x\n", what, i, in[0], in[1],
            in[2], got, want);
  CHECK(ok);
}

#endif
