/* nv_cubin against independent references: the examples compiled through the library for ptx:sm_80 and ptx:sm_90,
 * and each field compared with
 *  - the PTX the library rendered (its .entry name, each .param's size and naturally aligned offset, .maxntid),
 *  - `ptxas -v` run on the same PTX with the same flags (registers, smem, stack frame, cmem[0] on sm_80),
 *  - `readelf -SW` of the cubin (offset and size of .text.<fn>, sizes of .nv.constant0.<fn> and .nv.shared.<fn>).
 * Then corrupt cubins (another SM, another machine, an unknown ABI version, a record that runs past its section, a
 * parameter outside the parameter bytes, EIATTR_PARAM_CBANK naming another section) must be refused by name, and a
 * fixed-seed fuzzer (HCQ_FUZZ_SECONDS, default 3 s) mutates the .nv.info sections and headers of real cubins: never
 * a crash (run under ASan). Skips (77) without ptxas. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "compiler/kernel_text.h"
#include "compiler/toolchain.h"
#include "elf/elf.h"
#include "base/testing.h"
#include "base/fuzz.h"
#include "nv/nv_cubin.h"
#include "uop/uop.h"

static char dir[64], ptxas[256];

typedef struct ref {
  char name[128];
  long psize[64], poff[64];
  int nparams;
  long maxntid[3];
  long regs, smem, frame, cmem0;
  unsigned long long text_off, text_size, const0_size, shared_size;
} ref;

/* .entry NAME( .param .TYPE NAME, ... ) and .maxntid X, Y, Z from the PTX text. */
static void ptx_ref(const char *ptx, ref *r) {
  const char *e = strstr(ptx, ".entry ");
  CHECK(e != NULL);
  if (!e) return;
  sscanf(e + 7, "%127[^( \n]", r->name);
  long off = 0;
  for (const char *p = strstr(e, ".param ."); p && p < strchr(e, ')'); p = strstr(p + 1, ".param .")) {
    int bits = 0;
    char type[16];
    if (sscanf(p + 8, "%15[a-z]%d", type, &bits) != 2 || r->nparams >= 64) continue;
    long size = bits / 8;
    off = (off + size - 1) / size * size; /* natural alignment */
    r->psize[r->nparams] = size;
    r->poff[r->nparams++] = off;
    off += size;
  }
  const char *m = strstr(e, ".maxntid ");
  if (m) sscanf(m + 9, "%ld, %ld, %ld", &r->maxntid[0], &r->maxntid[1], &r->maxntid[2]);
}

static FILE *run(const char *cmd) { return popen(cmd, "r"); }

static void tools_ref(const char *ptx_path, const char *cubin_path, const char *sm, ref *r) {
  char cmd[768], line[512];
  r->regs = r->smem = r->frame = 0;
  r->cmem0 = -1;
  snprintf(cmd, sizeof cmd, "%s -arch=%s -O3 -v %s -o %s.v 2>&1", ptxas, sm, ptx_path, cubin_path);
  FILE *p = run(cmd);
  while (p && fgets(line, sizeof line, p)) {
    const char *u = strstr(line, "Used ");
    if (u) {
      sscanf(u, "Used %ld registers", &r->regs);
      const char *s = strstr(line, "bytes smem");
      if (s) { /* "..., 64 bytes smem" */
        while (s > line && s[-1] == ' ') s--;
        while (s > line && s[-1] >= '0' && s[-1] <= '9') s--;
        r->smem = atol(s);
      }
      const char *c = strstr(line, "bytes cmem[0]");
      if (c) {
        while (c > line && c[-1] == ' ') c--;
        while (c > line && c[-1] >= '0' && c[-1] <= '9') c--;
        r->cmem0 = atol(c);
      }
    }
    long fr;
    if (sscanf(line, " %ld bytes stack frame", &fr) == 1) r->frame = fr;
  }
  if (p) CHECK(pclose(p) == 0);
  snprintf(cmd, sizeof cmd, "readelf -SW %s 2>/dev/null", cubin_path); /* it warns about cubin sh_info flags */
  p = run(cmd);
  while (p && fgets(line, sizeof line, p)) {
    char name[200], type[64];
    unsigned long long addr, off, size;
    char *lb = strchr(line, ']');
    if (!lb || sscanf(lb + 1, " %199s %63s %llx %llx %llx", name, type, &addr, &off, &size) != 5) continue;
    char want[200];
    snprintf(want, sizeof want, ".text.%s", r->name);
    if (!strcmp(name, want)) r->text_off = off, r->text_size = size;
    snprintf(want, sizeof want, ".nv.constant0.%s", r->name);
    if (!strcmp(name, want)) r->const0_size = size;
    snprintf(want, sizeof want, ".nv.shared.%s", r->name);
    if (!strcmp(name, want)) r->shared_size = size;
  }
  if (p) pclose(p);
}

static void compare(const nv_cubin *c, const ref *r, unsigned sm) {
  CHECK_EQ_INT(c->sm, sm);
  CHECK_EQ_STR(c->name, r->name);
  CHECK_EQ_INT(c->nparams, r->nparams);
  for (size_t i = 0; i < c->nparams && (int)i < r->nparams; i++) {
    CHECK_EQ_INT(c->params[i].ordinal, i);
    CHECK_EQ_INT(c->params[i].size_B, r->psize[i]);
    CHECK_EQ_INT(c->params[i].offset_B, r->poff[i]);
  }
  long end = r->nparams ? r->poff[r->nparams - 1] + r->psize[r->nparams - 1] : 0;
  CHECK_EQ_INT(c->param_size_B, end);
  for (int k = 0; k < 3; k++) CHECK_EQ_INT(c->max_threads[k], r->maxntid[k]);
  CHECK_EQ_INT(c->regcount, r->regs);
  CHECK_EQ_INT(c->frame_size_B, r->frame);
  CHECK_EQ_INT(c->code_offset, r->text_off);
  CHECK_EQ_INT(c->code_size_B, r->text_size);
  CHECK(c->code_size_B > 0 && c->code != NULL);
  CHECK_EQ_INT(c->cbank0_size_B, r->const0_size);
  CHECK_EQ_INT(c->shared_B, r->shared_size);
  /* constant bank 0 ends with the parameters */
  CHECK_EQ_INT(c->param_cbank_offset_B + c->param_size_B, c->cbank0_size_B);
  if (sm == 80) {
    CHECK_EQ_INT(c->cbank0_size_B, r->cmem0);
    CHECK_EQ_INT(c->shared_B, r->smem);
  } else {
    CHECK(c->shared_B >= (uint64_t)r->smem); /* sm_90: the section also holds the reserved shared memory */
  }
}

typedef struct built {
  uint8_t *cubin;
  size_t n;
  char *ptx;
} built;

static bool build(const char *example, const char *sm, built *b) {
  char target[32], path[128];
  snprintf(target, sizeof target, "ptx:%s", sm);
  snprintf(path, sizeof path, "examples/%s.uop", example);
  cc_target t;
  uop_ctx *ctx = NULL;
  cc_program *prog = NULL;
  const uop *sink = NULL;
  hcq_status st = cc_target_get(target, 1, &t);
  if (!st) st = uop_ctx_create(&ctx);
  if (!st) st = cc_kernel_parse_file(ctx, path, &sink);
  if (!st) st = cc_compile_source(ctx, sink, &t, &(cc_options){0}, &prog);
  if (!st) st = cc_compile_binary(&t, prog);
  CHECK_OK(st);
  bool ok = !st;
  if (ok) {
    b->n = prog->binary_size_B;
    b->cubin = malloc(b->n);
    b->ptx = strdup(prog->source);
    ok = b->cubin && b->ptx;
    if (ok) memcpy(b->cubin, prog->binary, b->n);
  }
  cc_program_free(prog);
  uop_ctx_destroy(ctx);
  return ok;
}

static void write_file(const char *path, const void *d, size_t n) {
  FILE *f = fopen(path, "wb");
  CHECK(f && fwrite(d, 1, n, f) == n);
  if (f) fclose(f);
}

/* The file offset of section `name` (or 0). */
static size_t section_off(const uint8_t *b, size_t n, const char *name, size_t *size) {
  elf_file f;
  elf_section s;
  hcq_status st = elf_open(&f, b, n);
  if (!st) st = elf_section_find(&f, name, &s);
  CHECK_OK(st);
  if (st) return 0;
  *size = s.sh.sh_size;
  return s.sh.sh_offset;
}

/* The offset of the first record of attribute `attr` in section [off, off+size), or 0. */
static size_t find_attr(const uint8_t *b, size_t off, size_t size, uint8_t attr) {
  for (size_t at = 0; at + 4 <= size;) {
    if (b[off + at + 1] == attr) return off + at;
    at += 4 + (b[off + at] == NV_EIFMT_SVAL ? (size_t)(b[off + at + 2] | b[off + at + 3] << 8) : 0);
  }
  return 0;
}

static void check_corrupt(const built *bt) {
  const uint8_t *obj = bt->cubin;
  size_t n = bt->n, isz = 0;
  nv_cubin c;
  uint8_t *b = malloc(n);
  CHECK_ERR(nv_cubin_parse(obj, n, 80, NULL, &c), HCQ_CODE_UNSUPPORTED, "cubin is for sm_90, not sm_80");
  CHECK_ERR(nv_cubin_parse(obj, n, 90, "other", &c), HCQ_CODE_NOT_FOUND, "'.text.other'");
  memcpy(b, obj, n);
  b[18] = 224; /* EM_AMDGPU */
  CHECK_ERR(nv_cubin_parse(b, n, 0, NULL, &c), HCQ_CODE_UNSUPPORTED, "not a cubin");
  memcpy(b, obj, n);
  b[EI_ABIVERSION] = 5;
  CHECK_ERR(nv_cubin_parse(b, n, 0, NULL, &c), HCQ_CODE_UNSUPPORTED, "ABI version 5");
  size_t info = section_off(obj, n, ".nv.info.sum", &isz);
  size_t kp = find_attr(obj, info, isz, NV_EIATTR_KPARAM_INFO), cb = find_attr(obj, info, isz, NV_EIATTR_PARAM_CBANK);
  CHECK(kp && cb);
  if (!kp || !cb) goto out;
  memcpy(b, obj, n);
  b[kp + 2] = 0xff; /* SVAL size 0x??ff: past the end of the section */
  b[kp + 3] = 0x7f;
  CHECK_ERR(nv_cubin_parse(b, n, 0, NULL, &c), HCQ_CODE_INVALID, "(.nv.info.sum): attribute 0x17 at offset 0x");
  memcpy(b, obj, n);
  b[kp] = 9;
  CHECK_ERR(nv_cubin_parse(b, n, 0, NULL, &c), HCQ_CODE_INVALID, "has unknown format 9");
  memcpy(b, obj, n);
  b[kp + 4 + 6] = 0xf0; /* the parameter's offset: 0xf0 is beyond 16 parameter bytes */
  CHECK_ERR(nv_cubin_parse(b, n, 0, NULL, &c), HCQ_CODE_INVALID, "lies outside the 16 parameter bytes");
  memcpy(b, obj, n);
  b[kp + 2] = 8; /* KPARAM_INFO of 8 bytes instead of 12 */
  CHECK_ERR(nv_cubin_parse(b, n, 0, NULL, &c), HCQ_CODE_INVALID, "attribute 0x17 at offset 0x");
  memcpy(b, obj, n);
  b[cb + 4] = 1; /* EIATTR_PARAM_CBANK naming symbol 1 (a section symbol of another section) */
  b[cb + 5] = b[cb + 6] = b[cb + 7] = 0;
  CHECK_ERR(nv_cubin_parse(b, n, 0, NULL, &c), HCQ_CODE_INVALID, "EIATTR_PARAM_CBANK at offset");
  memcpy(b, obj, n);
  b[cb + 8] = 0xf0; /* parameter offset in bank 0 far beyond .nv.constant0 */
  b[cb + 9] = 0xff;
  CHECK_ERR(nv_cubin_parse(b, n, 0, NULL, &c), HCQ_CODE_INVALID, "lie outside constant bank 0");
out:
  free(b);
}

static uint64_t rng = 0xda942042e4dd58b5ull;
static uint64_t rnd(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 0x2545f4914f6cdd1dull;
}

static void fuzz(const built *bs, int nb, double budget_s) {
  long parsed = 0, total = 0;
  double end = fuzz_now_s() + budget_s;
  while (fuzz_now_s() < end && !testing_failures) {
    for (int rep = 0; rep < 32; rep++, total++) {
      const built *bt = &bs[rnd() % (uint64_t)nb];
      size_t n = bt->n, isz = 0, gsz = 0;
      char name[160];
      nv_cubin c;
      CHECK_OK(nv_cubin_parse(bt->cubin, n, 0, NULL, &c));
      snprintf(name, sizeof name, ".nv.info.%s", c.name);
      nv_cubin_free(&c);
      size_t info = section_off(bt->cubin, n, name, &isz), ginfo = section_off(bt->cubin, n, ".nv.info", &gsz);
      uint8_t *m = malloc(n);
      memcpy(m, bt->cubin, n);
      for (int k = 1 + (int)(rnd() % 3); k > 0; k--) {
        int where = (int)(rnd() % 4);
        size_t off = where == 0 && isz ? info + rnd() % isz : where == 1 && gsz ? ginfo + rnd() % gsz : rnd() % n;
        m[off] = rnd() % 3 ? (uint8_t)rnd() : (uint8_t)(m[off] ^ (1u << (rnd() % 8)));
      }
      size_t len = rnd() % 16 ? n : (size_t)(rnd() % n);
      uint8_t *exact = malloc(len ? len : 1);
      memcpy(exact, m, len);
      hcq_status st = nv_cubin_parse(exact, len, 0, NULL, &c);
      if (!st) {
        parsed++;
        CHECK(c.code >= exact && c.code + c.code_size_B <= exact + len);
        for (size_t i = 0; i < c.nparams; i++) CHECK(c.params[i].offset_B + c.params[i].size_B <= c.param_size_B);
        nv_cubin_free(&c);
      } else {
        CHECK(hcq_status_message(st)[0] && c.params == NULL);
        hcq_status_free(st);
      }
      free(exact);
      free(m);
    }
  }
  printf("nv_cubin fuzz: %ld of %ld mutated cubins still parsed\n", parsed, total);
}

int main(void) {
  rng = fuzz_seed("nv_cubin_test", rng);
  if (cc_ptx_ptxas(ptxas, sizeof ptxas) != HCQ_OK) TEST_SKIP("needs ptxas (CUDA toolkit at /usr/local/cuda)");
  if (system("readelf --version >/dev/null 2>&1")) TEST_SKIP("needs readelf (binutils)");
  snprintf(dir, sizeof dir, "/tmp/hcq_cubin_XXXXXX");
  if (!mkdtemp(dir)) TEST_SKIP("cannot create a temp dir");
  static const char *examples[] = {"sum", "saxpy", "softmax", "matmul", "conv2d", "max_rows"};
  static const struct {
    const char *name;
    unsigned sm;
  } sms[] = {{"sm_90", 90}, {"sm_80", 80}};
  built bs[12];
  int nb = 0;
  for (int s = 0; s < 2; s++)
    for (int e = 0; e < 6; e++) {
      built b = {0};
      if (!build(examples[e], sms[s].name, &b)) continue;
      char ptx_path[160], cubin_path[160];
      snprintf(ptx_path, sizeof ptx_path, "%s/%s-%s.ptx", dir, examples[e], sms[s].name);
      snprintf(cubin_path, sizeof cubin_path, "%s/%s-%s.cubin", dir, examples[e], sms[s].name);
      write_file(ptx_path, b.ptx, strlen(b.ptx));
      write_file(cubin_path, b.cubin, b.n);
      ref r = {0};
      ptx_ref(b.ptx, &r);
      tools_ref(ptx_path, cubin_path, sms[s].name, &r);
      nv_cubin c;
      CHECK_OK(nv_cubin_parse(b.cubin, b.n, sms[s].sm, NULL, &c));
      compare(&c, &r, sms[s].sm);
      fprintf(stderr, "  %s on %s: %zu params, %u registers, %llu bytes shared, cbank0 %u (params at 0x%x)\n",
              examples[e], sms[s].name, c.nparams, c.regcount, (unsigned long long)c.shared_B, c.cbank0_size_B,
              c.param_cbank_offset_B);
      nv_cubin_free(&c);
      bs[nb++] = b;
    }
  CHECK_EQ_INT(nb, 12);
  if (nb) check_corrupt(&bs[0]); /* sum on sm_90 */
  if (nb) fuzz(bs, nb, fuzz_seconds(3, NULL));
  for (int i = 0; i < nb; i++) free(bs[i].cubin), free(bs[i].ptx);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return testing_summary("nv_cubin_test");
}
