/* amd_code_object against LLVM's own tools: the examples (examples/NAME.uop) compiled through the library for every amdgpu target
 * (gfx1100, gfx90a, gfx942, gfx1201) and parsed; every field is compared with what llvm-readelf-19 -h -s --notes
 * prints (e_flags and its gfx name, the metadata YAML: kernel name, symbol, segment sizes, wavefront size, SGPR and
 * VGPR counts, each argument's offset, size and kind; the .kd and code symbols) and with the raw descriptor bytes
 * llvm-objdump-19 -s dumps. Then corrupt code objects (another target, an unknown machine value, a metadata target
 * that disagrees with e_flags, a misaligned descriptor, broken msgpack) must be refused by name, and a fixed-seed
 * fuzzer (HCQ_FUZZ_SECONDS, default 3 s) mutates real code objects: never a crash (run under ASan). Skips (77)
 * without clang-19 / ld.lld-19 / llvm-readelf-19. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amd/amd_code_object.h"
#include "amd/amd_msgpack.h"
#include "compiler/compiler.h"
#include "compiler/kernel_text.h"
#include "compiler/toolchain.h"
#include "elf/elf.h"
#include "base/testing.h"
#include "base/fuzz.h"
#include "uop/uop.h"

static char dir[64];

/* What llvm-readelf / llvm-objdump say about one code object. */
typedef struct ref {
  unsigned flags;
  char flags_name[32], target[96], name[128], symbol[136];
  long kernarg, group, priv, wave, sgpr, vgpr;
  long arg_off[64], arg_size[64];
  char arg_kind[64][32];
  int nargs;
  unsigned long long kd_addr, fn_addr;
  uint8_t kd[64];
  int kd_bytes;
} ref;

static void cp(char *d, size_t cap, const char *s) {
  size_t n = strnlen(s, cap - 1);
  memcpy(d, s, n);
  d[n] = 0;
}

static FILE *run(const char *fmt, const char *path) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, fmt, path);
  return popen(cmd, "r");
}

static void read_ref(const char *path, ref *r) {
  memset(r, 0, sizeof *r);
  r->kernarg = r->group = r->priv = r->wave = r->sgpr = r->vgpr = -1;
  char line[512], key[64], val[160];
  FILE *p = run("llvm-readelf-19 -h -s --notes %s", path);
  while (p && fgets(line, sizeof line, p)) {
    unsigned long long v, size;
    char type[32], bind[32], vis[32], ndx[32], name[200];
    if (sscanf(line, " Flags: 0x%x, %31[^,\n ]", &r->flags, r->flags_name) == 2) continue;
    if (sscanf(line, " %*u: %llx %llu %31s %31s %31s %31s %199s", &v, &size, type, bind, vis, ndx, name) == 7) {
      if (strstr(name, ".kd") && !strcmp(type, "OBJECT")) r->kd_addr = v;
      if (!strcmp(type, "FUNC")) r->fn_addr = v;
      continue;
    }
    size_t indent = strspn(line, " -");
    if (sscanf(line + indent, "%63[^:]: %159s", key, val) != 2) continue;
    if (!strcmp(key, "amdhsa.target")) cp(r->target, sizeof r->target, val);
    if (indent == 4) { /* kernel-level keys ("  - .args:" or "    .name:") */
      if (!strcmp(key, ".name")) cp(r->name, sizeof r->name, val);
      if (!strcmp(key, ".symbol")) cp(r->symbol, sizeof r->symbol, val);
      if (!strcmp(key, ".kernarg_segment_size")) r->kernarg = atol(val);
      if (!strcmp(key, ".group_segment_fixed_size")) r->group = atol(val);
      if (!strcmp(key, ".private_segment_fixed_size")) r->priv = atol(val);
      if (!strcmp(key, ".wavefront_size")) r->wave = atol(val);
      if (!strcmp(key, ".sgpr_count")) r->sgpr = atol(val);
      if (!strcmp(key, ".vgpr_count")) r->vgpr = atol(val);
    } else if (indent == 8 && r->nargs < 64) { /* argument keys; a new argument starts at "      - " */
      if (line[6] == '-') r->nargs++;
      int a = r->nargs - 1;
      if (a < 0) continue;
      if (!strcmp(key, ".offset")) r->arg_off[a] = atol(val);
      if (!strcmp(key, ".size")) r->arg_size[a] = atol(val);
      if (!strcmp(key, ".value_kind")) cp(r->arg_kind[a], sizeof r->arg_kind[a], val);
    }
  }
  if (p) pclose(p);
  /* the descriptor's bytes from the hex dump of every section ("ADDR w0 w1 w2 w3  text") */
  p = run("llvm-objdump-19 -s %s", path);
  while (p && fgets(line, sizeof line, p)) {
    unsigned long long addr;
    char w[4][16];
    int n = sscanf(line, " %llx %15s %15s %15s %15s", &addr, w[0], w[1], w[2], w[3]);
    if (n < 2 || strlen(line) < 8 || line[0] != ' ') continue;
    for (int k = 0; k < n - 1; k++) {
      if (strlen(w[k]) != 8) break;
      for (int b = 0; b < 4; b++) {
        unsigned long long a = addr + (unsigned long long)(4 * k + b);
        unsigned byte;
        if (sscanf(w[k] + 2 * b, "%2x", &byte) != 1) break;
        if (a >= r->kd_addr && a < r->kd_addr + 64) r->kd[a - r->kd_addr] = (uint8_t)byte, r->kd_bytes++;
      }
    }
  }
  if (p) pclose(p);
}

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

static void compare(const amd_code_object *co, const ref *r, const char *what) {
  fprintf(stderr, "  %s: %s kernel %s, %zu args, kd at 0x%llx\n", what, co->target,
          co->nkernels ? co->kernels[0].name : "?", co->nkernels ? co->kernels[0].nargs : 0, r->kd_addr);
  CHECK_EQ_INT(co->e_flags, r->flags);
  CHECK_EQ_STR(co->target, r->flags_name);
  CHECK_EQ_STR(co->metadata_target, r->target);
  CHECK_EQ_INT(co->nkernels, 1);
  if (co->nkernels != 1) return;
  const amd_kernel *k = &co->kernels[0];
  CHECK_EQ_STR(k->name, r->name);
  CHECK_EQ_STR(k->symbol, r->symbol);
  CHECK_EQ_INT(k->kernarg_segment_size, r->kernarg);
  CHECK_EQ_INT(k->group_segment_fixed_size, r->group);
  CHECK_EQ_INT(k->private_segment_fixed_size, r->priv);
  CHECK_EQ_INT(k->wavefront_size, r->wave);
  CHECK_EQ_INT(k->sgpr_count, r->sgpr);
  CHECK_EQ_INT(k->vgpr_count, r->vgpr);
  CHECK_EQ_INT(k->nargs, r->nargs);
  for (size_t a = 0; a < k->nargs && (int)a < r->nargs; a++) {
    CHECK_EQ_INT(k->args[a].offset, r->arg_off[a]);
    CHECK_EQ_INT(k->args[a].size, r->arg_size[a]);
    CHECK_EQ_STR(k->args[a].value_kind, r->arg_kind[a]);
  }
  CHECK_EQ_INT(k->kd_vaddr, r->kd_addr);
  CHECK_EQ_INT(k->entry_vaddr, r->fn_addr);
  CHECK_EQ_INT(r->kd_bytes, 64);
  const amd_kernel_descriptor *kd = &k->kd;
  CHECK_EQ_INT(kd->group_segment_fixed_size, rd32(r->kd + 0));
  CHECK_EQ_INT(kd->private_segment_fixed_size, rd32(r->kd + 4));
  CHECK_EQ_INT(kd->kernarg_size, rd32(r->kd + 8));
  CHECK_EQ_INT(kd->kernel_code_entry_byte_offset, (long long)(r->fn_addr - r->kd_addr));
  CHECK_EQ_INT(kd->compute_pgm_rsrc3, rd32(r->kd + 44));
  CHECK_EQ_INT(kd->compute_pgm_rsrc1, rd32(r->kd + 48));
  CHECK_EQ_INT(kd->compute_pgm_rsrc2, rd32(r->kd + 52));
  CHECK_EQ_INT(kd->kernel_code_properties, rd32(r->kd + 56) & 0xffff);
  CHECK_EQ_INT(kd->kernarg_preload, rd32(r->kd + 56) >> 16);
  /* wave32 exactly on the gfx10+ targets; our kernels take their arguments through the kernarg pointer */
  bool rdna = !strcmp(co->target, "gfx1100") || !strcmp(co->target, "gfx1201");
  CHECK_EQ_INT(!!(kd->kernel_code_properties & AMD_KCP_WAVEFRONT_SIZE32), rdna);
  CHECK(kd->kernel_code_properties & AMD_KCP_KERNARG_SEGMENT_PTR);
  CHECK_EQ_INT(k->user_sgpr_count, (rd32(r->kd + 52) >> 1) & 31);
}

/* Compile examples/NAME.uop for amdgpu:GFX through the library; the code object is malloc'd. */
static uint8_t *compile(const char *name, const char *gfx, size_t *n) {
  char target[64], path[128];
  snprintf(target, sizeof target, "amdgpu:%s", gfx);
  snprintf(path, sizeof path, "examples/%s.uop", name);
  cc_target t;
  uop_ctx *ctx = NULL;
  cc_program *prog = NULL;
  const uop *sink = NULL;
  uint8_t *out = NULL;
  hcq_status st = cc_target_get(target, 1, &t);
  if (!st) st = uop_ctx_create(&ctx);
  if (!st) st = cc_kernel_parse_file(ctx, path, &sink);
  if (!st) st = cc_compile_source(ctx, sink, &t, &(cc_options){0}, &prog);
  if (!st) st = cc_compile_binary(&t, prog);
  CHECK_OK(st);
  if (!st && (out = malloc(prog->binary_size_B))) {
    memcpy(out, prog->binary, prog->binary_size_B);
    *n = prog->binary_size_B;
  }
  cc_program_free(prog);
  uop_ctx_destroy(ctx);
  return out;
}

static void put32(uint8_t *b, size_t off, uint32_t v) { memcpy(b + off, &v, 4); }

/* The offset of the metadata note's descriptor in the file (found with elf/, used to corrupt it). */
static size_t metadata_at(const uint8_t *b, size_t n, size_t *len) {
  elf_file f;
  elf_section s;
  hcq_status st = elf_open(&f, b, n);
  if (!st) st = elf_section_find(&f, ".note", &s);
  CHECK_OK(st);
  if (st) return 0;
  *len = s.sh.sh_size - 20; /* one note: 12-byte header, "AMDGPU\0" padded to 8 */
  return s.sh.sh_offset + 20;
}

static void check_corrupt(const uint8_t *obj, size_t n) {
  amd_code_object co;
  uint8_t *b = malloc(n);
  CHECK_ERR(amd_code_object_parse(obj, n, "gfx90a", &co), HCQ_CODE_UNSUPPORTED, "code object is for gfx1100, not gfx90a");
  memcpy(b, obj, n);
  put32(b, offsetof(Elf64_Ehdr, e_flags), 0x040); /* gfx940: a real target we do not support */
  CHECK_ERR(amd_code_object_parse(b, n, NULL, &co), HCQ_CODE_UNSUPPORTED, "EF_AMDGPU_MACH 0x040");
  put32(b, offsetof(Elf64_Ehdr, e_flags), 0x03f); /* says gfx90a, metadata says gfx1100 */
  CHECK_ERR(amd_code_object_parse(b, n, NULL, &co), HCQ_CODE_INVALID, "does not match e_flags (gfx90a)");
  memcpy(b, obj, n);
  b[18] = 62; /* e_machine EM_X86_64 */
  CHECK_ERR(amd_code_object_parse(b, n, NULL, &co), HCQ_CODE_UNSUPPORTED, "not an AMDGPU code object");
  memcpy(b, obj, n);
  b[EI_ABIVERSION] = 1;
  CHECK_ERR(amd_code_object_parse(b, n, NULL, &co), HCQ_CODE_UNSUPPORTED, "ABI version 1");
  /* metadata: a kernarg size that disagrees with the descriptor; a broken msgpack length */
  size_t len = 0, at = metadata_at(obj, n, &len);
  memcpy(b, obj, n);
  uint8_t *hit = memmem(b + at, len, "\xb5.kernarg_segment_size", 22); /* fixstr of 21 bytes */
  CHECK(hit != NULL);
  if (hit) {
    hit[22] ^= 1; /* the positive fixint after the key */
    CHECK_ERR(amd_code_object_parse(b, n, NULL, &co), HCQ_CODE_INVALID, "differ from the metadata");
  }
  memcpy(b, obj, n);
  b[at] = 0xdf; /* map32 with an absurd count */
  CHECK_ERR(amd_code_object_parse(b, n, NULL, &co), HCQ_CODE_INVALID, "msgpack at offset 0x0: array or map count");
  memcpy(b, obj, n);
  b[at] = 0xc1;
  CHECK_ERR(amd_code_object_parse(b, n, NULL, &co), HCQ_CODE_INVALID, "0xc1 is never used");
  /* the descriptor symbol moved off its 64-byte alignment */
  memcpy(b, obj, n);
  elf_file f;
  elf_table t;
  Elf64_Sym s;
  size_t idx = 0;
  CHECK_OK(elf_open(&f, b, n));
  CHECK_OK(elf_table_find(&f, SHT_SYMTAB, &t));
  CHECK_OK(elf_symbol_find(&t, "saxpy.kd", &s, &idx));
  size_t sym_off = (size_t)(t.data - b) + idx * sizeof(Elf64_Sym) + offsetof(Elf64_Sym, st_value);
  uint64_t moved = s.st_value + 4;
  memcpy(b + sym_off, &moved, 8);
  CHECK_ERR(amd_code_object_parse(b, n, NULL, &co), HCQ_CODE_INVALID, "is not 64-byte aligned");
  moved = s.st_value + 0x100000; /* far outside .rodata */
  memcpy(b + sym_off, &moved, 8);
  CHECK_ERR(amd_code_object_parse(b, n, NULL, &co), HCQ_CODE_INVALID, "lies outside its section");
  /* the entry offset pointing into the descriptor's own (non-code) section */
  memcpy(b, obj, n);
  uint64_t zero = 0;
  elf_section ro;
  CHECK_OK(elf_section_get(&f, s.st_shndx, &ro));
  size_t kd_off = ro.sh.sh_offset + (size_t)(s.st_value - ro.sh.sh_addr);
  memcpy(b + kd_off + 16, &zero, 8);
  CHECK_ERR(amd_code_object_parse(b, n, NULL, &co), HCQ_CODE_INVALID, "which is not code");
  free(b);
  const amd_kernel *k;
  CHECK_OK(amd_code_object_parse(obj, n, "gfx1100", &co));
  CHECK_OK(amd_code_object_kernel(&co, "saxpy", &k));
  CHECK_ERR(amd_code_object_kernel(&co, "nope", &k), HCQ_CODE_NOT_FOUND, "kernel 'nope'");
  amd_code_object_free(&co);
}

/* msgpack: values of every width decode to what the spec says; hostile lengths and nesting are refused. */
static void check_msgpack(void) {
  static const uint8_t v[] = {0x7f, 0xe0, 0xcc, 0xff, 0xcd, 0x12, 0x34, 0xce, 0xde, 0xad, 0xbe, 0xef,
                              0xcf, 0x80, 0, 0, 0, 0, 0, 0, 1, 0xd0, 0x80, 0xd1, 0xff, 0xfe, 0xd3, 0xff, 0xff, 0xff,
                              0xff, 0xff, 0xff, 0xff, 0xff, 0xca, 0x3f, 0xc0, 0, 0, 0xcb, 0xc0, 0x04, 0, 0, 0, 0, 0,
                              0, 0xa3, 'a', 'b', 'c', 0xd9, 1, 'x', 0xc3, 0xc0, 0x92, 0x01, 0x81, 0xa1, 'k', 0x02};
  amd_mp m;
  amd_mp_init(&m, v, sizeof v);
  amd_mp_value x;
  const struct {
    amd_mp_type type;
    uint64_t u;
    int64_t i;
    double f;
  } want[] = {{AMD_MP_UINT, 127, 0, 0},         {AMD_MP_INT, 0, -32, 0},     {AMD_MP_UINT, 255, 0, 0},
              {AMD_MP_UINT, 0x1234, 0, 0},      {AMD_MP_UINT, 0xdeadbeef, 0, 0},
              {AMD_MP_UINT, 0x8000000000000001ull, 0, 0}, {AMD_MP_INT, 0, -128, 0}, {AMD_MP_INT, 0, -2, 0},
              {AMD_MP_INT, 0, -1, 0},           {AMD_MP_FLOAT, 0, 0, 1.5},   {AMD_MP_FLOAT, 0, 0, -2.5}};
  for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
    CHECK_OK(amd_mp_next(&m, &x));
    CHECK_EQ_INT(x.type, want[k].type);
    CHECK(x.u == want[k].u && x.i == want[k].i && x.f == want[k].f);
  }
  CHECK_OK(amd_mp_next(&m, &x));
  CHECK(amd_mp_is(&x, "abc"));
  CHECK_OK(amd_mp_next(&m, &x));
  CHECK(amd_mp_is(&x, "x"));
  CHECK_OK(amd_mp_next(&m, &x));
  CHECK(x.type == AMD_MP_BOOL && x.u == 1);
  CHECK_OK(amd_mp_next(&m, &x));
  CHECK_EQ_INT(x.type, AMD_MP_NIL);
  CHECK_OK(amd_mp_skip(&m)); /* [1, {"k": 2}] */
  CHECK_EQ_INT(m.pos, sizeof v);
  CHECK_ERR(amd_mp_next(&m, &x), HCQ_CODE_INVALID, "unexpected end");
  uint8_t deep[64];
  memset(deep, 0x91, sizeof deep); /* [[[[...]]]] without an end */
  amd_mp_init(&m, deep, sizeof deep);
  CHECK_ERR(amd_mp_skip(&m), HCQ_CODE_INVALID, "nesting deeper than 32");
  static const uint8_t longstr[] = {0xdb, 0xff, 0xff, 0xff, 0xf0, 'a'}, bigarr[] = {0xdd, 0, 1, 0, 0, 1, 2};
  amd_mp_init(&m, longstr, sizeof longstr);
  CHECK_ERR(amd_mp_next(&m, &x), HCQ_CODE_INVALID, "runs past the end");
  amd_mp_init(&m, bigarr, sizeof bigarr);
  CHECK_ERR(amd_mp_next(&m, &x), HCQ_CODE_INVALID, "count exceeds the bytes left");
  static const uint8_t trunc[] = {0xcf, 1, 2};
  amd_mp_init(&m, trunc, sizeof trunc);
  CHECK_ERR(amd_mp_next(&m, &x), HCQ_CODE_INVALID, "truncated value");
}

static uint64_t rng = 0x853c49e6748fea9bull;
static uint64_t rnd(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 0x2545f4914f6cdd1dull;
}

/* Mutate the metadata note, the descriptor and the headers of real code objects. */
static void fuzz(uint8_t *const *objs, const size_t *sizes, int nobj, double budget_s) {
  long parsed = 0, total = 0;
  double end = fuzz_now_s() + budget_s;
  while (fuzz_now_s() < end && !testing_failures) {
    for (int rep = 0; rep < 32; rep++, total++) {
      int w = (int)(rnd() % (uint64_t)nobj);
      size_t n = sizes[w], len = 0, at = metadata_at(objs[w], n, &len);
      uint8_t *c = malloc(n);
      memcpy(c, objs[w], n);
      for (int k = 1 + (int)(rnd() % 3); k > 0; k--) {
        size_t off = rnd() % 2 && len ? at + (size_t)(rnd() % len) : (size_t)(rnd() % n);
        c[off] = rnd() % 4 ? (uint8_t)rnd() : (uint8_t)(c[off] ^ (1u << (rnd() % 8)));
      }
      amd_code_object co;
      hcq_status st = amd_code_object_parse(c, rnd() % 16 ? n : (size_t)(rnd() % n), NULL, &co);
      if (!st) {
        parsed++;
        for (size_t i = 0; i < co.nkernels; i++) CHECK(co.kernels[i].entry_vaddr % 256 == 0);
        amd_code_object_free(&co);
      } else {
        CHECK(hcq_status_message(st)[0] && co.kernels == NULL);
        hcq_status_free(st);
      }
      free(c);
    }
  }
  printf("amd_code_object fuzz: %ld of %ld mutated code objects still parsed\n", parsed, total);
}

int main(void) {
  rng = fuzz_seed("amd_code_object_test", rng);
  check_msgpack();
  if (!cc_tool_find("ld.lld-19", NULL, 0) || !cc_tool_find("clang-19", NULL, 0) ||
      !cc_tool_find("llvm-readelf-19", NULL, 0) || !cc_tool_find("llvm-objdump-19", NULL, 0))
    TEST_SKIP("needs clang-19, ld.lld-19, llvm-readelf-19 and llvm-objdump-19 (apt-get install clang-19 lld-19 llvm-19)");
  snprintf(dir, sizeof dir, "/tmp/hcq_amdco_XXXXXX");
  if (!mkdtemp(dir)) TEST_SKIP("cannot create a temp dir");
  static const char *gfx[] = {"gfx1100", "gfx90a", "gfx942", "gfx1201"};
  static const char *examples[] = {"saxpy", "softmax", "matmul", "sum", "conv2d"};
  uint8_t *objs[32];
  size_t sizes[32];
  int nobj = 0;
  for (size_t g = 0; g < 4; g++)
    for (size_t e = 0; e < 5; e++) {
      if (g > 0 && e > 2) continue; /* every example on gfx1100, three on the others (time) */
      size_t n = 0;
      uint8_t *obj = compile(examples[e], gfx[g], &n);
      if (!obj) continue;
      char path[160], what[96];
      snprintf(path, sizeof path, "%s/%s-%s.hsaco", dir, examples[e], gfx[g]);
      FILE *fp = fopen(path, "wb");
      CHECK(fp && fwrite(obj, 1, n, fp) == n);
      if (fp) fclose(fp);
      ref r;
      read_ref(path, &r);
      amd_code_object co;
      CHECK_OK(amd_code_object_parse(obj, n, gfx[g], &co));
      snprintf(what, sizeof what, "%s on %s", examples[e], gfx[g]);
      compare(&co, &r, what);
      amd_code_object_free(&co);
      objs[nobj] = obj, sizes[nobj++] = n;
    }
  CHECK(nobj == 14);
  if (nobj) check_corrupt(objs[0], sizes[0]);
  if (nobj) fuzz(objs, sizes, nobj, fuzz_seconds(3, NULL));
  for (int i = 0; i < nobj; i++) free(objs[i]);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return testing_summary("amd_code_object_test");
}
