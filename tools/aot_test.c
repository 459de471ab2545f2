/* Tests of kernel images through the verbs: `hcq compile --arch HOST -o k.img examples/saxpy.uop`, then
 * `hcq run --image k.img --var n=N --out 0=y.bin` with no compiler reachable (HCQ_CC=/nonexistent), comparing y
 * with saxpy computed here in plain C from the same deterministic inputs. A corrupt image and an image for another
 * architecture are refused (cpu_image_parse / cpu_image_check_host messages, and the verb's exit status 1).
 * With aarch64-linux-gnu-gcc present an aarch64 image is also built on an x86_64 host and checked structurally.
 * Under linker_scripts/cross_run_tests.sh (qemu-user) the host arch is aarch64 or armhf, so the first part builds
 * and runs an image for that machine there. */
#include <elf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/interp.h"
#include "compiler/toolchain.h"
#include "cpu/cpu_image.h"
#include "base/testing.h"
#include "tools/verbs.h"

#if defined(__x86_64__)
#define HOST_ARCH "x86_64"
#define OTHER_ARCH "aarch64"
#define HOST_EM EM_X86_64
#elif defined(__arm__)
#define HOST_ARCH "armhf"
#define OTHER_ARCH "aarch64"
#define HOST_EM EM_ARM
#else
#define HOST_ARCH "aarch64"
#define OTHER_ARCH "x86_64"
#define HOST_EM EM_AARCH64
#endif

#define N_ELEMS 1048576 /* examples/saxpy.uop */

static int verb(int (*fn)(int, char **), const char **args) {
  int argc = 0;
  while (args[argc]) argc++;
  return fn(argc, (char **)args);
}

static uint8_t *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc((size_t)size + 1);
  *n = b && fread(b, 1, (size_t)size, f) == (size_t)size ? (size_t)size : 0;
  fclose(f);
  return b;
}

static void spit(const char *path, const uint8_t *b, size_t n) {
  FILE *f = fopen(path, "wb");
  CHECK(f && fwrite(b, 1, n, f) == n);
  if (f) fclose(f);
}

/* Run a verb with stderr sent to `path`; returns the exit status, the text is in the file. */
static int verb_stderr(int (*fn)(int, char **), const char **args, const char *path) {
  fflush(stderr);
  int saved = dup(2);
  FILE *f = fopen(path, "w");
  if (!f || saved < 0) return -1;
  dup2(fileno(f), 2);
  int rc = verb(fn, args);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  fclose(f);
  return rc;
}

static bool file_has(const char *path, const char *text) {
  size_t n = 0;
  char *b = (char *)slurp(path, &n);
  bool found = b && (b[n] = 0, strstr(b, text) != NULL);
  if (!found) fprintf(stderr, "aot_test: '%s' not in: %s\n", text, b ? b : "(unreadable)");
  free(b);
  return found;
}

/* An image is compiled with the same freestanding flags as a JIT build, less the host tuning: a fake compiler that
 * says it is GCC 12 records its command line; on x86_64 the GCC 12 cap (-mprefer-vector-width=256) is there too
 * (the fake's version text is the reference), and never -march=native. */
static void test_image_flags(const char *dir) {
  char fake[256], args[256], img[256], script[1024];
  snprintf(fake, sizeof fake, "%s/fake-gcc12", dir);
  snprintf(args, sizeof args, "%s/args", dir);
  snprintf(img, sizeof img, "%s/never.img", dir);
  snprintf(script, sizeof script, "#!/bin/sh\ncase \"$1\" in --version) echo 'cc (Debian 12.2.0-14) 12.2.0';;\n"
           "*) echo \" $* \" >> %s; exit 3;; esac\n", args);
  spit(fake, (const uint8_t *)script, strlen(script));
  chmod(fake, 0755);
  const char *saved_cc = getenv("HCQ_CC"), *saved_tune = getenv("HCQ_CC_TUNE");
  char *cc_copy = saved_cc ? strdup(saved_cc) : NULL, *tune_copy = saved_tune ? strdup(saved_tune) : NULL;
  setenv("HCQ_CC", fake, 1);
  unsetenv("HCQ_CC_TUNE");
  const char *compile[] = {"compile", "--target", "c", "--arch", HOST_ARCH, "-o", img, "examples/saxpy.uop", NULL};
  char err[256];
  snprintf(err, sizeof err, "%s/err", dir);
  CHECK_EQ_INT(verb_stderr(hcq_verb_compile, compile, err), 1);
  CHECK(file_has(err, "compiling kernel saxpy for " HOST_ARCH));
  size_t line_B = 0;
  char *line = (char *)slurp(args, &line_B);
  CHECK(line != NULL);
  if (line) {
    line[line_B] = 0;
    /* every flag of the JIT's string but its last (the tuning), each as its own argument */
    char jit[512], want[160];
    snprintf(jit, sizeof jit, "%s", cc_toolchain_flags());
    char *last = strrchr(jit, ' ');
    if (last) *last = 0;
    char *save = NULL;
    for (char *tok = strtok_r(jit, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
      snprintf(want, sizeof want, " %s ", tok);
      if (!strstr(line, want)) fprintf(stderr, "aot_test: the image's compile misses %s: %s", tok, line);
      CHECK(strstr(line, want) != NULL);
    }
    CHECK_EQ_INT(strstr(line, " -mprefer-vector-width=256 ") != NULL, !strcmp(HOST_ARCH, "x86_64"));
    CHECK(!strstr(line, "native") && strstr(line, " -ffreestanding ") && strstr(line, "/k.c -o "));
  }
  free(line);
  if (cc_copy) setenv("HCQ_CC", cc_copy, 1);
  else unsetenv("HCQ_CC");
  if (tune_copy) setenv("HCQ_CC_TUNE", tune_copy, 1);
  free(cc_copy);
  free(tune_copy);
  unlink(fake), unlink(args), unlink(err), unlink(img);
}

int main(void) {
  char dir[] = "/tmp/hcq_aot_test_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char img_path[128], out_path[128], bad_path[128], other_path[128];
  snprintf(img_path, sizeof img_path, "%s/saxpy.img", dir);
  snprintf(out_path, sizeof out_path, "%s/y.bin", dir);
  snprintf(bad_path, sizeof bad_path, "%s/corrupt.img", dir);
  snprintf(other_path, sizeof other_path, "%s/other.img", dir);

  /* 1. compile an image for this machine */
  const char *compile[] = {"compile", "--target", "c", "--arch", HOST_ARCH, "-o", img_path, "examples/saxpy.uop", NULL};
  CHECK_EQ_INT(verb(hcq_verb_compile, compile), 0);
  size_t img_B = 0;
  uint8_t *img_bytes = slurp(img_path, &img_B);
  CHECK(img_bytes && img_B > CPU_IMAGE_HEADER_B);
  cpu_image img;
  CHECK_OK(cpu_image_parse(img_bytes, img_B, &img));
  CHECK_EQ_INT(img.machine, HOST_EM);
  CHECK_EQ_STR(img.prog.symbol, "saxpy");
  CHECK_EQ_INT(hcq_program_nbufs(&img.prog), 2);
  CHECK_EQ_INT(img.prog.params[0].nelems, N_ELEMS);
  CHECK_EQ_INT(img.prog.params[0].access, HCQ_ACCESS_READ | HCQ_ACCESS_WRITE);
  CHECK_EQ_INT(img.prog.params[1].access, HCQ_ACCESS_READ);
  CHECK_EQ_STR(img.prog.params[1].dtype, "float32");
  CHECK_EQ_INT(hcq_program_nvars(&img.prog), 1);
  CHECK_EQ_STR(hcq_program_var(&img.prog, 0)->name, "n");

  /* 2. run it without a compiler; y = 2.5 x + y for i < n, from the run verb's fill (seed + slot) */
  const char *saved_cc = getenv("HCQ_CC");
  char *saved = saved_cc ? strdup(saved_cc) : NULL;
  setenv("HCQ_CC", "/nonexistent", 1);
  const int n = 1000;
  const char *run[] = {"run", "--image", img_path, "--var", "n=1000", "--seed", "11", "--threads", "2",
                       "--out", "0=placeholder", NULL};
  char out_arg[160];
  snprintf(out_arg, sizeof out_arg, "0=%s", out_path);
  run[10] = out_arg;
  CHECK_EQ_INT(verb(hcq_verb_run, run), 0);
  size_t y_B = 0;
  float *y = (float *)slurp(out_path, &y_B);
  CHECK_EQ_INT(y_B, (size_t)N_ELEMS * 4);
  float *y0 = malloc(N_ELEMS * 4), *x = malloc(N_ELEMS * 4);
  cc_fill_buffer(y0, uop_dt(UOP_FLOAT32), N_ELEMS, 11);
  cc_fill_buffer(x, uop_dt(UOP_FLOAT32), N_ELEMS, 12);
  size_t bad = 0;
  for (int i = 0; y && y_B == (size_t)N_ELEMS * 4 && i < N_ELEMS; i++) {
    float want = i < n ? x[i] * 2.5f + y0[i] : y0[i];
    bad += y[i] != want; /* inputs are multiples of 1/16 in [-2, 2): exact in float */
  }
  CHECK_EQ_INT(bad, 0);
  /* --in: buffers from files (y = i/16 - 8, x = 1 - i/64 for the first elements; exact in float) */
  char in0[160], in1[160], in0_arg[170], in1_arg[170];
  snprintf(in0, sizeof in0, "%s/y_in.bin", dir);
  snprintf(in1, sizeof in1, "%s/x_in.bin", dir);
  for (int i = 0; i < N_ELEMS; i++) {
    y0[i] = (float)(i % 256) / 16 - 8;
    x[i] = 1 - (float)(i % 128) / 64;
  }
  spit(in0, (const uint8_t *)y0, N_ELEMS * 4);
  spit(in1, (const uint8_t *)x, N_ELEMS * 4);
  snprintf(in0_arg, sizeof in0_arg, "0=%s", in0);
  snprintf(in1_arg, sizeof in1_arg, "1=%s", in1);
  const char *run_in[] = {"run", "--image", img_path, "--var", "n=300", "--in", in0_arg, "--in", in1_arg,
                          "--out", out_arg, NULL};
  CHECK_EQ_INT(verb(hcq_verb_run, run_in), 0);
  free(y);
  y = (float *)slurp(out_path, &y_B);
  bad = 0;
  for (int i = 0; y && y_B == (size_t)N_ELEMS * 4 && i < N_ELEMS; i++)
    bad += y[i] != (i < 300 ? (1 - (float)(i % 128) / 64) * 2.5f + ((float)(i % 256) / 16 - 8) : y0[i]);
  CHECK(y && y_B == (size_t)N_ELEMS * 4);
  CHECK_EQ_INT(bad, 0);
  spit(in1, (const uint8_t *)x, 400); /* a short input file is refused, naming the sizes */
  CHECK_EQ_INT(verb(hcq_verb_run, run_in), 1);
  /* a missing variable is an error naming it */
  const char *run_novar[] = {"run", "--image", img_path, NULL};
  CHECK_EQ_INT(verb(hcq_verb_run, run_novar), 1);
  const char *run_check[] = {"run", "--image", img_path, "--var", "n=4", "--check", NULL};
  CHECK_EQ_INT(verb(hcq_verb_run, run_check), 2);
  /* the image records n's declared range 1..1048576: values outside it (and outside int32) are refused by name */
  const hcq_param *n_var = hcq_program_var(&img.prog, 0);
  CHECK(n_var->ranged && n_var->min == 1 && n_var->max == N_ELEMS);
  char err_path[128];
  snprintf(err_path, sizeof err_path, "%s/stderr.txt", dir);
  const char *run_big[] = {"run", "--image", img_path, "--var", "n=5000000000", NULL};
  CHECK_EQ_INT(verb_stderr(hcq_verb_run, run_big, err_path), 1);
  CHECK(file_has(err_path, "variable n = 5000000000 is outside its declared range 1..1048576"));
  const char *run_over[] = {"run", "--image", img_path, "--var", "n=1048577", NULL};
  CHECK_EQ_INT(verb_stderr(hcq_verb_run, run_over, err_path), 1);
  CHECK(file_has(err_path, "variable n = 1048577 is outside its declared range"));
  /* an image whose spec has no range (older images) still refuses a value that does not fit int32 */
  {
    hcq_program old = img.prog;
    old.params[2].ranged = false; /* after the two buffers */
    uint8_t *old_bytes = NULL;
    size_t old_B = 0;
    char old_path[160];
    snprintf(old_path, sizeof old_path, "%s/norange.img", dir);
    CHECK_OK(cpu_image_write(&old, img.elf, img.elf_size_B, &old_bytes, &old_B));
    if (old_bytes) spit(old_path, old_bytes, old_B);
    const char *run_old[] = {"run", "--image", old_path, "--var", "n=5000000000", NULL};
    CHECK_EQ_INT(verb_stderr(hcq_verb_run, run_old, err_path), 1);
    CHECK(file_has(err_path, "variable n = 5000000000 does not fit its int32 argument"));
    free(old_bytes);
    unlink(old_path);
  }
  unlink(err_path);

  /* 3. a corrupt image (one ELF byte flipped) */
  uint8_t *bad_bytes = malloc(img_B);
  memcpy(bad_bytes, img_bytes, img_B);
  bad_bytes[img_B - 7] ^= 0x40;
  CHECK_ERR(cpu_image_parse(bad_bytes, img_B, &img), HCQ_CODE_INVALID, "corrupt");
  spit(bad_path, bad_bytes, img_B);
  const char *run_bad[] = {"run", "--image", bad_path, "--var", "n=4", NULL};
  CHECK_EQ_INT(verb(hcq_verb_run, run_bad), 1);
  CHECK_ERR(cpu_image_parse(img_bytes, 20, &img), HCQ_CODE_INVALID, "");

  /* 4. an image for another arch: the same ELF with its e_machine changed, written through the writer */
  CHECK_OK(cpu_image_parse(img_bytes, img_B, &img));
  hcq_program other = img.prog;
  snprintf(other.target, sizeof other.target, "c:%s", OTHER_ARCH);
  uint8_t *other_bytes = NULL, *other_elf = malloc(img.elf_size_B);
  size_t other_B = 0;
  memcpy(other_elf, img.elf, img.elf_size_B);
  uint16_t em = cpu_image_machine_of(OTHER_ARCH);
  memcpy(other_elf + offsetof(Elf64_Ehdr, e_machine), &em, 2);
  CHECK_OK(cpu_image_write(&other, other_elf, img.elf_size_B, &other_bytes, &other_B));
  free(other_elf);
  cpu_image oimg;
  CHECK_OK(cpu_image_parse(other_bytes, other_B, &oimg));
  CHECK_ERR(cpu_image_check_host(&oimg, HOST_EM), HCQ_CODE_UNSUPPORTED, "built for " OTHER_ARCH);
  spit(other_path, other_bytes, other_B);
  const char *run_other[] = {"run", "--image", other_path, "--var", "n=4", NULL};
  CHECK_EQ_INT(verb(hcq_verb_run, run_other), 1);

  if (saved) setenv("HCQ_CC", saved, 1);
  else unsetenv("HCQ_CC");
  free(saved);

  /* 5. a cross-built aarch64 image on an x86_64 host (structure only: it cannot run here) */
#if defined(__x86_64__)
  if (access("/usr/bin/aarch64-linux-gnu-gcc", X_OK) == 0 && access("/usr/bin/aarch64-linux-gnu-ld", X_OK) == 0) {
    char a64_path[128];
    snprintf(a64_path, sizeof a64_path, "%s/a64.img", dir);
    const char *compile_a64[] = {"compile", "--target", "c", "--arch", "aarch64", "-o", a64_path, "examples/saxpy.uop", NULL};
    CHECK_EQ_INT(verb(hcq_verb_compile, compile_a64), 0);
    size_t a_B = 0;
    uint8_t *a = slurp(a64_path, &a_B);
    cpu_image aimg;
    CHECK(a != NULL);
    if (a) {
      CHECK_OK(cpu_image_parse(a, a_B, &aimg));
      CHECK_EQ_INT(aimg.machine, EM_AARCH64);
      CHECK_EQ_STR(aimg.prog.target, "c:aarch64");
      const Elf64_Ehdr *eh = (const Elf64_Ehdr *)aimg.elf;
      CHECK(aimg.elf_size_B > sizeof *eh && eh->e_machine == EM_AARCH64 && eh->e_type == ET_DYN);
      CHECK_ERR(cpu_image_check_host(&aimg, HOST_EM), HCQ_CODE_UNSUPPORTED, "built for aarch64");
    }
    free(a);
    unlink(a64_path);
  } else {
    fprintf(stderr, "aot_test: aarch64-linux-gnu-gcc/ld absent: cross image part skipped\n");
  }
#endif

  test_image_flags(dir);
  unlink(img_path);
  unlink(out_path);
  unlink(bad_path);
  unlink(other_path);
  rmdir(dir);
  free(img_bytes);
  free(bad_bytes);
  free(other_bytes);
  free(y);
  free(y0);
  free(x);
  return testing_summary("aot_test");
}
