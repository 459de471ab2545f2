/* Driver for cpu_elf_cross_test: cross-compiled together with the loader for aarch64 and run under qemu-user.
 * argv: kernel A object, kernel B object, kernel A linked image. Loads each, calls it, compares with C. */
#include "cpu/cpu_elf.h"
#include "hcq/testing.h"
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

int main(int argc, char **argv) {
  if (argc != 4) return 2;
  for (int i = 1; i < 4; i++) {
    size_t n;
    uint8_t *b = slurp(argv[i], &n);
    CHECK(b != NULL);
    cpu_program *p = NULL;
    CHECK_OK(cpu_program_load(b, n, &p));
    free(b);
    if (!p) continue;
    if (i == 2) check_kernel_b(p);
    else check_kernel_a(p);
    if (i == 3) CHECK(cpu_program_entry(p) == sym(p, "hcq_entry"));
    cpu_program_destroy(p);
  }
  return testing_summary("aarch64 elf driver");
}
