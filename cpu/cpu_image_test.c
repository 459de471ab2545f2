/* cpu_image: format round trip, every rejection (magic, version, truncation, corruption, spec errors, foreign
 * architecture), launch-expression evaluation against hand-computed values, and a real image: a saxpy kernel built
 * with cc + ld -T linker_scripts/cpu_kernel.ld, wrapped, parsed, loaded and run, checked against a plain loop. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_elf.h"
#include "cpu/cpu_image.h"
#include "cpu/cpu_reloc.h"
#include "base/testing.h"

static hcq_program saxpy_spec(const char *arch) {
  hcq_program s;
  hcq_program_init(&s);
  snprintf(s.name, sizeof s.name, "saxpy");
  snprintf(s.symbol, sizeof s.symbol, "saxpy");
  snprintf(s.target, sizeof s.target, "c:%s", arch);
  CHECK_OK(hcq_program_add_buffer(&s, "float32", 1024, HCQ_ACCESS_READ | HCQ_ACCESS_WRITE));
  CHECK_OK(hcq_program_add_buffer(&s, "float32", 1024, HCQ_ACCESS_READ));
  CHECK_OK(hcq_program_add_var(&s, "n", false, 0, 0));
  snprintf(s.global[0], sizeof s.global[0], "((n+3)//4)");
  snprintf(s.global[1], sizeof s.global[1], "1");
  snprintf(s.global[2], sizeof s.global[2], "max(n, 7)%%5");
  return s;
}

/* Minimal "ELF" bytes: the writer checks only the magic and e_machine. */
static void fake_elf(uint8_t *e, size_t n, uint16_t machine) {
  memset(e, 0xab, n);
  memcpy(e, "\177ELF", 4);
  memcpy(e + 18, &machine, 2);
}

static void test_format(void) {
  hcq_program s = saxpy_spec("aarch64");
  uint8_t elf[100];
  fake_elf(elf, sizeof elf, EM_AARCH64);
  uint8_t *img = NULL;
  size_t n = 0;
  CHECK_OK(cpu_image_write(&s, elf, sizeof elf, &img, &n));
  /* header fields at their documented offsets (docs/FORMATS.md) */
  CHECK(memcmp(img, "HCQKIMG", 8) == 0);
  CHECK_EQ_INT(img[8], 1);
  CHECK_EQ_INT(img[12] | img[13] << 8, 183);
  const char *want = "hcq-kernel-spec 1\nname saxpy\narch aarch64\nbuf 0 float32 1024 rw\nbuf 1 float32 1024 r\n"
                     "var n\nglobal 0 ((n+3)//4)\nglobal 1 1\nglobal 2 max(n, 7)%5\nend\n";
  uint32_t spec_B = img[16] | img[17] << 8;
  CHECK_EQ_INT(spec_B, strlen(want));
  CHECK(memcmp(img + 48, want, strlen(want)) == 0);
  CHECK_EQ_INT(n, ((48 + strlen(want) + 15) & ~15u) + sizeof elf);

  cpu_image im;
  CHECK_OK(cpu_image_parse(img, n, &im));
  CHECK_EQ_INT(im.machine, EM_AARCH64);
  /* the spec read back is the program description written: every field */
  CHECK_EQ_STR(im.prog.name, "saxpy");
  CHECK_EQ_STR(im.prog.symbol, "saxpy");
  CHECK_EQ_STR(im.prog.target, "c:aarch64");
  CHECK_EQ_INT(im.prog.nparams, s.nparams);
  for (size_t i = 0; i < s.nparams && i < im.prog.nparams; i++) {
    const hcq_param *a = &s.params[i], *b = &im.prog.params[i];
    CHECK(a->kind == b->kind && !strcmp(a->name, b->name) && a->slot == b->slot && !strcmp(a->dtype, b->dtype) &&
          a->nelems == b->nelems && a->access == b->access && a->ranged == b->ranged);
  }
  for (int d = 0; d < 3; d++) CHECK_EQ_STR(im.prog.global[d], s.global[d]);
  CHECK_EQ_INT(im.prog.kernarg_size_B, 8 + 8 + 4); /* the default layout: two addresses, one int32 */
  CHECK_EQ_INT(im.elf_size_B, sizeof elf);
  CHECK(memcmp(im.elf, elf, sizeof elf) == 0 && im.prog.binary == im.elf && im.prog.binary_size_B == sizeof elf);
  CHECK_OK(cpu_image_check_host(&im, EM_AARCH64));
  CHECK_ERR(cpu_image_check_host(&im, EM_X86_64), HCQ_CODE_UNSUPPORTED, "built for aarch64; this machine is x86_64");

  /* expressions: hand-computed */
  int64_t v, n5[] = {5}, n13[] = {13}, nneg[] = {-7};
  CHECK_OK(cpu_image_eval(&im.prog, im.prog.global[0], n5, &v));
  CHECK_EQ_INT(v, 2);
  CHECK_OK(cpu_image_eval(&im.prog, im.prog.global[2], n5, &v));
  CHECK_EQ_INT(v, 2); /* max(5,7)=7, 7%5 */
  CHECK_OK(cpu_image_eval(&im.prog, im.prog.global[2], n13, &v));
  CHECK_EQ_INT(v, 3);
  CHECK_OK(cpu_image_eval(&im.prog, "n//2", nneg, &v));
  CHECK_EQ_INT(v, -4); /* floor division */
  CHECK_OK(cpu_image_eval(&im.prog, "2+3*4-(10-4)//3+min(n,1)*-2", n13, &v));
  CHECK_EQ_INT(v, 2 + 12 - 2 - 2);
  CHECK_ERR(cpu_image_eval(&im.prog, "n//(n-5)", n5, &v), HCQ_CODE_INVALID, "division by zero");
  CHECK_ERR(cpu_image_eval(&im.prog, "m+1", n5, &v), HCQ_CODE_INVALID, "unknown variable");
  CHECK_ERR(cpu_image_eval(&im.prog, "(n+1", n5, &v), HCQ_CODE_INVALID, "expected ')'");
  CHECK_ERR(cpu_image_eval(&im.prog, "n 1", n5, &v), HCQ_CODE_INVALID, "trailing text");

  /* rejections, each before anything could run */
  CHECK_ERR(cpu_image_parse(elf, sizeof elf, &im), HCQ_CODE_INVALID, "bad magic");
  CHECK_ERR(cpu_image_parse(img, 30, &im), HCQ_CODE_INVALID, "truncated kernel image header");
  CHECK_ERR(cpu_image_parse(img, n - 1, &im), HCQ_CODE_INVALID, "do not add up");
  uint8_t *c = malloc(n);
  memcpy(c, img, n);
  c[8] = 2;
  CHECK_ERR(cpu_image_parse(c, n, &im), HCQ_CODE_UNSUPPORTED, "version 2");
  for (size_t off = 48; off < n; off += 7) { /* a flipped bit anywhere in spec or ELF is caught by the checksum */
    memcpy(c, img, n);
    c[off] ^= 0x10;
    CHECK_ERR(cpu_image_parse(c, n, &im), HCQ_CODE_INVALID, "the file is corrupt");
  }
  memcpy(c, img, n);
  c[12] = EM_X86_64; /* header machine != spec arch (checksum does not cover the header) */
  CHECK_ERR(cpu_image_parse(c, n, &im), HCQ_CODE_INVALID, "header says x86_64 but its spec says aarch64");
  free(c);
  free(img);

  /* the writer refuses what an image cannot hold, naming the field */
  fake_elf(elf, sizeof elf, EM_X86_64);
  CHECK_ERR(cpu_image_write(&s, elf, sizeof elf, &img, &n), HCQ_CODE_INVALID, "ELF is for machine 62");
  fake_elf(elf, sizeof elf, EM_AARCH64);
  hcq_program bad = s;
  snprintf(bad.target, sizeof bad.target, "c");
  CHECK_ERR(cpu_image_write(&bad, elf, sizeof elf, &img, &n), HCQ_CODE_INVALID, "not an image target");
  bad = s;
  snprintf(bad.symbol, sizeof bad.symbol, "two words");
  CHECK_ERR(cpu_image_write(&bad, elf, sizeof elf, &img, &n), HCQ_CODE_INVALID, "symbol 'two words' is not one word");
  bad = s;
  bad.params[1].nelems = -1;
  CHECK_ERR(cpu_image_write(&bad, elf, sizeof elf, &img, &n), HCQ_CODE_UNSUPPORTED, "buffer slot 1 has no known size");
  bad = s;
  snprintf(bad.local[0], sizeof bad.local[0], "4");
  CHECK_ERR(cpu_image_write(&bad, elf, sizeof elf, &img, &n), HCQ_CODE_UNSUPPORTED, "local size 0");
  bad = s;
  snprintf(bad.global[1], sizeof bad.global[1], "m+1");
  CHECK_ERR(cpu_image_write(&bad, elf, sizeof elf, &img, &n), HCQ_CODE_INVALID, "launch size 1 'm+1' cannot be stored");
  char small[16];
  size_t len = 0;
  CHECK_ERR(cpu_image_spec_format(&s, small, sizeof small, &len), HCQ_CODE_INVALID, "does not fit");
}

/* Write a spec text into a valid image (the checksum recomputed) and parse it. */
static hcq_status parse_text(const char *text) {
  uint8_t elf[32];
  fake_elf(elf, sizeof elf, EM_AARCH64);
  size_t spec_B = strlen(text), off = (48 + spec_B + 15) & ~(size_t)15, n = off + sizeof elf;
  uint8_t *img = calloc(1, n);
  memcpy(img, CPU_IMAGE_MAGIC, 8);
  img[8] = 1;
  img[12] = EM_AARCH64;
  img[16] = (uint8_t)spec_B;
  img[17] = (uint8_t)(spec_B >> 8);
  img[20] = 48;
  img[24] = (uint8_t)off;
  img[25] = (uint8_t)(off >> 8);
  img[32] = sizeof elf;
  memcpy(img + 48, text, spec_B);
  memcpy(img + off, elf, sizeof elf);
  uint64_t sum = cpu_image_checksum(img + 48, spec_B, img + off, sizeof elf);
  for (int i = 0; i < 8; i++) img[40 + i] = (uint8_t)(sum >> (8 * i));
  cpu_image im;
  hcq_status st = cpu_image_parse(img, n, &im);
  free(img);
  return st;
}

/* Declared variable ranges and unused buffers round-trip through the spec text. */
static void test_ranges_and_unused(void) {
  hcq_program s = saxpy_spec("aarch64");
  s.nparams = 2; /* the variables again, with ranges */
  CHECK_OK(hcq_program_add_var(&s, "n", true, 1, 1048576));
  CHECK_OK(hcq_program_add_var(&s, "m", true, -2147483648LL, -5));
  s.params[1].access = 0; /* slot 1: neither read nor written, still a parameter */
  char text[1024];
  size_t len = 0;
  CHECK_OK(cpu_image_spec_format(&s, text, sizeof text, &len));
  if (len > 0) {
    CHECK(strstr(text, "\nbuf 1 float32 1024 -\n") != NULL);
    CHECK(strstr(text, "\nvar n 1 1048576\nvar m -2147483648 -5\n") != NULL);
  }
  uint8_t elf[100];
  fake_elf(elf, sizeof elf, EM_AARCH64);
  uint8_t *img = NULL;
  size_t n = 0;
  CHECK_OK(cpu_image_write(&s, elf, sizeof elf, &img, &n));
  cpu_image im;
  CHECK_OK(cpu_image_parse(img, n, &im));
  CHECK(im.prog.params[1].access == 0 && im.prog.params[0].access == (HCQ_ACCESS_READ | HCQ_ACCESS_WRITE));
  const hcq_param *n_var = hcq_program_var(&im.prog, 0), *m_var = hcq_program_var(&im.prog, 1);
  CHECK(n_var->ranged && n_var->min == 1 && n_var->max == 1048576);
  CHECK(m_var->ranged && m_var->min == -2147483648LL && m_var->max == -5);
  free(img);
  CHECK_OK(parse_text("hcq-kernel-spec 1\nname k\narch aarch64\nvar n\nend\n")); /* older images: no range */
  CHECK_ERR(parse_text("hcq-kernel-spec 1\nname k\narch aarch64\nvar n 5 1\nend\n"), HCQ_CODE_INVALID, "line 4: bad 'var");
  CHECK_ERR(parse_text("hcq-kernel-spec 1\nname k\narch aarch64\nvar n 1\nend\n"), HCQ_CODE_INVALID, "line 4: bad 'var");
  CHECK_ERR(parse_text("hcq-kernel-spec 1\nname k\narch aarch64\nvar n - 1\nend\n"), HCQ_CODE_INVALID, "line 4: bad 'var");
}

static void test_spec_errors(void) {
  CHECK_OK(parse_text("hcq-kernel-spec 1\nname k\narch aarch64\nbuf 0 int32 4 w\nend\n"));
  CHECK_ERR(parse_text("hcq-kernel-spec 2\nname k\narch aarch64\nend\n"), HCQ_CODE_INVALID, "line 1");
  CHECK_ERR(parse_text("hcq-kernel-spec 1\nname k\narch aarch64\n"), HCQ_CODE_INVALID, "missing 'end'");
  CHECK_ERR(parse_text("hcq-kernel-spec 1\nname k\narch sparc\nend\n"), HCQ_CODE_INVALID, "line 3");
  CHECK_ERR(parse_text("hcq-kernel-spec 1\nname k\narch aarch64\nbuf 1 int32 4 w\nend\n"), HCQ_CODE_INVALID,
            "line 4: bad 'buf");
  CHECK_ERR(parse_text("hcq-kernel-spec 1\nname k\narch aarch64\nbuf 0 int32 4 x\nend\n"), HCQ_CODE_INVALID,
            "r, w, rw or -");
  CHECK_ERR(parse_text("hcq-kernel-spec 1\nname k\narch aarch64\nglobal 0 q*2\nend\n"), HCQ_CODE_INVALID,
            "global 0: launch expression: unknown variable");
  CHECK_ERR(parse_text("hcq-kernel-spec 1\nname k\narch aarch64\nfrob\nend\n"), HCQ_CODE_INVALID, "line 4: unknown");
  CHECK_ERR(parse_text("hcq-kernel-spec 1\narch aarch64\nend\n"), HCQ_CODE_INVALID, "needs 'name'");
  CHECK_ERR(parse_text("hcq-kernel-spec 1\nname k\x01\narch aarch64\nend\n"), HCQ_CODE_INVALID, "printable");
  CHECK_ERR(parse_text("hcq-kernel-spec 1\nname k\narch armhf\nend\n"), HCQ_CODE_INVALID, "header says aarch64");
  /* the spec is the program description: a buffer after a variable is refused as hcq_program refuses it */
  CHECK_ERR(parse_text("hcq-kernel-spec 1\nname k\narch aarch64\nvar n\nbuf 0 int32 4 w\nend\n"), HCQ_CODE_INVALID,
            "line 5");
  CHECK_ERR(parse_text("hcq-kernel-spec 1\nname k\narch aarch64\nvar n\nbuf 0 int32 4 w\nend\n"), HCQ_CODE_INVALID,
            "buffer added after the variables");
}

#define KSRC                                                                                                    \
  "void saxpy(float* restrict y, const float* restrict x, const int n, int core_id) {\n"                        \
  "  (void)core_id;\n"                                                                                          \
  "  for (int i = 0; i < n; i++) y[i] = x[i] * 2.5f + y[i];\n"                                                  \
  "}\n"

/* A real kernel for this host, through the image: cc -c, ld -T cpu_kernel.ld, write, parse, load, run. */
static void test_real_image(void) {
  if (system("cc --version >/dev/null 2>&1") || system("ld --version >/dev/null 2>&1")) {
    printf("real image part skipped: needs cc and ld\n");
    return;
  }
  char dir[] = "/tmp/hcq_img_XXXXXX", cmd[1024], path[128];
  CHECK(mkdtemp(dir) != NULL);
  snprintf(path, sizeof path, "%s/k.c", dir);
  FILE *f = fopen(path, "w");
  fputs(KSRC, f);
  fclose(f);
  snprintf(cmd, sizeof cmd,
           "cc -O2 -fPIC -ffreestanding -fno-builtin -nostdlib -fno-stack-protector -fno-asynchronous-unwind-tables "
           "-c %s/k.c -o %s/k.o && ld -pie --no-dynamic-linker -z norelro -z noexecstack --no-undefined "
           "--defsym=hcq_entry=saxpy -T linker_scripts/cpu_kernel.ld %s/k.o -o %s/k.elf",
           dir, dir, dir, dir);
  CHECK_EQ_INT(system(cmd), 0);
  snprintf(path, sizeof path, "%s/k.elf", dir);
  f = fopen(path, "rb");
  CHECK(f != NULL);
  static uint8_t elf[1 << 20];
  size_t elf_B = f ? fread(elf, 1, sizeof elf, f) : 0;
  if (f) fclose(f);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
  uint16_t host = cpu_host_machine();
  hcq_program s = saxpy_spec(cpu_image_arch_name(host));
  uint8_t *img = NULL;
  size_t n = 0;
  CHECK_OK(cpu_image_write(&s, elf, elf_B, &img, &n));
  cpu_image im;
  CHECK_OK(cpu_image_parse(img, n, &im));
  CHECK_OK(cpu_image_check_host(&im, host));
  cpu_program *prog = NULL;
  CHECK_OK(cpu_program_load(im.elf, im.elf_size_B, &prog));
  void *fn = NULL;
  if (prog) CHECK_OK(cpu_program_symbol(prog, im.prog.symbol, &fn));
  if (fn) {
    float y[1024], x[1024], want[1024];
    for (int i = 0; i < 1024; i++) {
      x[i] = (float)i * 0.5f;
      y[i] = want[i] = 100.0f - (float)i;
    }
    for (int i = 0; i < 1000; i++) want[i] = x[i] * 2.5f + want[i]; /* exact: small multiples of 1/4 */
    ((void (*)(float *, const float *, int, int))fn)(y, x, 1000, 0);
    int bad = 0;
    for (int i = 0; i < 1024; i++) bad += y[i] != want[i];
    CHECK_EQ_INT(bad, 0);
  }
  cpu_program_destroy(prog);
  free(img);
}

int main(void) {
  test_format();
  test_spec_errors();
  test_ranges_and_unused();
  test_real_image();
  return testing_summary("cpu_image_test");
}
