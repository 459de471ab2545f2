/* Driver for cpu_elf_cross_test: cross-compiled together with the loader for aarch64 or armhf and run under
 * qemu-user. argv: kernel A object, kernel B object, kernel A linked image[, interworking object (armhf)].
 * Loads each, calls it, compares with C. */
#include "cpu/cpu_elf.h"
#include "base/testing.h"
#include "cpu/cpu_elf_testkernels.h"

static uint8_t *slurp(const char *path, size_t *n) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  fseek(fp, 0, SEEK_END);
  long len = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  uint8_t *b = malloc(len > 0 ? (size_t)len : 1);
  if (b && fread(b, 1, (size_t)len, fp) != (size_t)len) len = 0;
  fclose(fp);
  *n = (size_t)len;
  return b;
}

/* Arm <-> Thumb calls across sections (see KERNEL_IW_SRC in cpu_elf_cross_test.c). */
static void check_interworking(cpu_program *p) {
  int (*t)(int) = (int (*)(int))sym(p, "entry_t");
  int (*a)(int) = (int (*)(int))sym(p, "entry_a");
  void *(*tc)(void *, const void *, unsigned) = (void *(*)(void *, const void *, unsigned))sym(p, "tcopy");
  void *(*ac)(void *, const void *, unsigned) = (void *(*)(void *, const void *, unsigned))sym(p, "acopy");
  if (!t || !a || !tc || !ac) return;
  for (int x = -3; x < 4; x++) {
    CHECK_EQ_INT(t(x), (x * 3 + 1) + 2);
    CHECK_EQ_INT(a(x), (x * 5 - 7) * 2);
  }
  char src[64], d1[64] = {0}, d2[64] = {0};
  for (int i = 0; i < 64; i++) src[i] = (char)(i * 7 + 1);
  CHECK(tc(d1, src, 61) == d1 && memcmp(d1, src, 61) == 0 && d1[61] == 0);
  CHECK(ac(d2, src, 33) == d2 && memcmp(d2, src, 33) == 0 && d2[33] == 0);
}

int main(int argc, char **argv) {
  if (argc != 4 && argc != 5) return 2;
  for (int i = 1; i < argc; i++) {
    size_t n;
    uint8_t *b = slurp(argv[i], &n);
    CHECK(b != NULL);
    cpu_program *p = NULL;
    CHECK_OK(cpu_program_load(b, n, &p));
    free(b);
    if (!p) continue;
    if (i == 2) check_kernel_b(p);
    else if (i == 4) check_interworking(p);
    else check_kernel_a(p);
    if (i == 3) CHECK(cpu_program_entry(p) == sym(p, "hcq_entry"));
    cpu_program_destroy(p);
  }
  return testing_summary(sizeof(void *) == 4 ? "armhf elf driver" : "aarch64 elf driver");
}
