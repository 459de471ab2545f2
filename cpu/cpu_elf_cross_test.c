/* The ELF loader on aarch64: cross-builds the loader + testdata/elf_cross_driver.c with aarch64-linux-gnu-gcc,
 * builds aarch64 kernels (object with CALL26/ADRP/LDST/GOT relocations, memcpy call, linked image), and runs the
 * driver under qemu-aarch64 -L /usr/aarch64-linux-gnu. Skips (77) when the cross tools are absent. */
#include <stdio.h>
#include <stdlib.h>

#include "hcq/testing.h"
#include "cpu/cpu_elf_testkernels.h"

#define XCC "aarch64-linux-gnu-gcc"
#define KFLAGS "-O2 -fPIC -ffreestanding -fno-builtin -nostdlib -fno-stack-protector -fno-asynchronous-unwind-tables"
#define LOADER_SRCS "cpu/cpu_elf.c cpu/cpu_elf_rel.c cpu/cpu_elf_image.c cpu/cpu_reloc.c cpu/cpu_reloc_aarch64.c " \
  "cpu/cpu_reloc_x86_64.c cpu/cpu_reloc_names.c cpu/cpu_mem.c hcq/status.c"

static char dir[64];

static int run(const char *fmt, const char *a, const char *b) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, fmt, a, b, dir, dir, dir, dir, dir, dir);
  int rc = system(cmd);
  if (rc != 0) fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
  return rc;
}

static int write_src(const char *name, const char *src) {
  char path[128];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *fp = fopen(path, "w");
  if (!fp) return -1;
  fputs(src, fp);
  return fclose(fp);
}

int main(void) {
#if !defined(__x86_64__)
  TEST_SKIP("cpu_elf_cross_test cross-runs aarch64 from an x86_64 host; native hosts run cpu_elf_test");
#endif
  if (system(XCC " --version >/dev/null 2>&1") || system("qemu-aarch64 --version >/dev/null 2>&1") ||
      system("aarch64-linux-gnu-ld --version >/dev/null 2>&1"))
    TEST_SKIP("needs aarch64-linux-gnu-gcc, aarch64-linux-gnu-ld and qemu-aarch64 (gcc-aarch64-linux-gnu, qemu-user)");
  snprintf(dir, sizeof dir, "/tmp/hcq_cpu_cross_XXXXXX");
  if (!mkdtemp(dir)) TEST_SKIP("cannot create a temp dir");
  CHECK(write_src("ka.c", KERNEL_A_SRC) == 0);
  CHECK(write_src("kb.c", KERNEL_B_SRC) == 0);
  CHECK(run("%s%s" XCC " -std=gnu11 -O1 -I. -D_GNU_SOURCE cpu/testdata/elf_cross_driver.c " LOADER_SRCS
            " -o %s/driver -lm", "", "") == 0);
  CHECK(run("%s%s" XCC " " KFLAGS " -fcommon -ffunction-sections -c %s/ka.c -o %s/ka.o", "", "") == 0);
  CHECK(run("%s%s" XCC " " KFLAGS " -ffunction-sections -c %s/kb.c -o %s/kb.o", "", "") == 0);
  CHECK(run("%s%s" XCC " " KFLAGS " -c %s/ka.c -o %s/kimg.o && aarch64-linux-gnu-ld -pie --no-dynamic-linker -z norelro"
            " -z noexecstack --no-undefined -T linker_scripts/cpu_kernel.ld %s/kimg.o -o %s/kimg.elf", "", "") == 0);
  if (testing_failures == 0) {
    /* -cpu max also exercises the loader against a 64 KiB-page-capable core; the page size stays 4 KiB */
    CHECK(run("%s%sqemu-aarch64 -L /usr/aarch64-linux-gnu %s/driver %s/ka.o %s/kb.o %s/kimg.elf", "", "") == 0);
  }
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return testing_summary("cpu_elf_cross_test");
}
