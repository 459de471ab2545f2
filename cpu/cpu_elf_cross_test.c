/* The ELF loader on aarch64 and armhf: cross-builds the loader + testdata/elf_cross_driver.c with the cross gcc,
 * builds kernels for that machine (aarch64: object with CALL26/ADRP/LDST/GOT relocations, memcpy call, linked
 * image; armhf: the same kernels as Thumb-2 (gcc's default) and as Arm code, with THM_CALL/CALL, GOT_BREL,
 * BASE_PREL, REL32, ABS32 relocations, a linked image with R_ARM_RELATIVE, and an object whose Thumb and Arm
 * functions call each other; again with clang-19 when present), and runs the driver under qemu-aarch64 /
 * qemu-arm -L /usr/TRIPLE.
 * An architecture whose cross tools are absent is skipped (77 when both are). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/testing.h"
#include "cpu/cpu_elf_testkernels.h"

#define KFLAGS "-O2 -fPIC -ffreestanding -fno-builtin -nostdlib -fno-stack-protector -fno-asynchronous-unwind-tables"
#define LOADER_SRCS "cpu/cpu_elf.c cpu/cpu_elf32.c cpu/cpu_elf_rel.c cpu/cpu_elf_image.c cpu/cpu_reloc.c " \
  "cpu/cpu_reloc_aarch64.c cpu/cpu_reloc_arm.c cpu/cpu_reloc_x86_64.c cpu/cpu_reloc_names.c cpu/cpu_mem.c base/status.c"

/* Thumb entry calling an Arm function, Arm entry calling a Thumb function (BL <-> BLX rewriting), and tail calls
 * to memcpy from both states (B.W / B to the loader's trampoline: R_ARM_THM_JUMP24 / R_ARM_JUMP24). */
#define KERNEL_IW_SRC                                                                                  \
  "__attribute__((noinline, target(\"arm\"))) int arm_f(int x) { return x * 3 + 1; }\n"              \
  "__attribute__((noinline, target(\"thumb\"))) int thumb_f(int x) { return x * 5 - 7; }\n"          \
  "__attribute__((target(\"thumb\"))) int entry_t(int x) { return arm_f(x) + 2; }\n"                 \
  "__attribute__((target(\"arm\"))) int entry_a(int x) { return thumb_f(x) * 2; }\n"                 \
  "__attribute__((target(\"thumb\"))) void *tcopy(void *d, const void *s, unsigned n) {\n"            \
  "  return __builtin_memcpy(d, s, n); }\n"                                                            \
  "__attribute__((target(\"arm\"))) void *acopy(void *d, const void *s, unsigned n) {\n"              \
  "  return __builtin_memcpy(d, s, n); }\n"

static char dir[64];

static int sh(const char *cmd) {
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

static bool have(const char *triple, const char *qemu) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "%s-gcc --version >/dev/null 2>&1 && %s-ld --version >/dev/null 2>&1 && "
           "%s --version >/dev/null 2>&1", triple, triple, qemu);
  return system(cmd) == 0;
}

/* Build the driver and kernels for one machine (kernels with `kcc`, NULL = TRIPLE-gcc; `mode` = extra kernel
 * flags, e.g. -mthumb) and run them. */
static void run_arch(const char *triple, const char *qemu, const char *kcc_in, const char *tune, const char *mode,
                     bool interworking) {
  char cmd[2048], kcc[128];
  const char *d = dir;
  if (kcc_in) snprintf(kcc, sizeof kcc, "%s", kcc_in);
  else snprintf(kcc, sizeof kcc, "%s-gcc", triple);
  fprintf(stderr, "-- %s %s (kernels: %s)\n", triple, mode, kcc);
  /* the driver (with the loader) once per machine */
  snprintf(cmd, sizeof cmd, "test -x %s/driver-%s || %s-gcc -std=gnu11 -O1 -I. -D_GNU_SOURCE cpu/testdata/elf_cross_driver.c "
           LOADER_SRCS " -o %s/driver-%s -lm", d, triple, triple, d, triple);
  CHECK(sh(cmd) == 0);
  snprintf(cmd, sizeof cmd,
           "%s " KFLAGS " %s %s -fcommon -ffunction-sections -c %s/ka.c -o %s/ka.o && "
           "%s " KFLAGS " %s %s -ffunction-sections -c %s/kb.c -o %s/kb.o && "
           "%s " KFLAGS " %s %s -c %s/ka.c -o %s/kimg.o && %s-ld -pie --no-dynamic-linker -z norelro -z noexecstack "
           "--no-undefined -T linker_scripts/cpu_kernel.ld %s/kimg.o -o %s/kimg.elf",
           kcc, tune, mode, d, d, kcc, tune, mode, d, d, kcc, tune, mode, d, d, triple, d, d);
  CHECK(sh(cmd) == 0);
  if (interworking) {
    snprintf(cmd, sizeof cmd, "%s " KFLAGS " %s -ffunction-sections -c %s/kiw.c -o %s/kiw.o", kcc, tune, d, d);
    CHECK(sh(cmd) == 0);
  }
  if (testing_failures) return;
  snprintf(cmd, sizeof cmd, "%s -L /usr/%s %s/driver-%s %s/ka.o %s/kb.o %s/kimg.elf%s%s%s", qemu, triple, d, triple, d,
           d, d, interworking ? " " : "", interworking ? d : "", interworking ? "/kiw.o" : "");
  CHECK(sh(cmd) == 0);
}

int main(void) {
#if !defined(__x86_64__)
  TEST_SKIP("cpu_elf_cross_test cross-runs aarch64/armhf from an x86_64 host; native hosts run cpu_elf_test");
#endif
  bool a64 = have("aarch64-linux-gnu", "qemu-aarch64"), a32 = have("arm-linux-gnueabihf", "qemu-arm");
  if (!a64 && !a32)
    TEST_SKIP("needs aarch64-linux-gnu-gcc/-ld + qemu-aarch64 or arm-linux-gnueabihf-gcc/-ld + qemu-arm "
              "(gcc-aarch64-linux-gnu, gcc-arm-linux-gnueabihf, qemu-user)");
  snprintf(dir, sizeof dir, "/tmp/hcq_cpu_cross_XXXXXX");
  if (!mkdtemp(dir)) TEST_SKIP("cannot create a temp dir");
  CHECK(write_src("ka.c", KERNEL_A_SRC) == 0);
  CHECK(write_src("kb.c", KERNEL_B_SRC) == 0);
  CHECK(write_src("kiw.c", KERNEL_IW_SRC) == 0);
  if (a64) run_arch("aarch64-linux-gnu", "qemu-aarch64", NULL, "-mcpu=cortex-a57", "", false);
  else fprintf(stderr, "aarch64 cross tools absent: skipped\n");
  if (a32) {
    run_arch("arm-linux-gnueabihf", "qemu-arm", NULL, "-mcpu=cortex-a15", "-mthumb", true);
    run_arch("arm-linux-gnueabihf", "qemu-arm", NULL, "-mcpu=cortex-a15", "-marm", true);
    /* clang's objects add .ARM.exidx (R_ARM_PREL31) and GOT_PREL; the llvm-cpu target compiles with clang-19 */
    if (system("clang-19 --version >/dev/null 2>&1") == 0) {
      run_arch("arm-linux-gnueabihf", "qemu-arm", "clang-19 --target=arm-linux-gnueabihf", "-mcpu=cortex-a15", "-mthumb", true);
      run_arch("arm-linux-gnueabihf", "qemu-arm", "clang-19 --target=arm-linux-gnueabihf", "-mcpu=cortex-a15", "-marm", true);
    }
  } else {
    fprintf(stderr, "armhf cross tools absent: skipped\n");
  }
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return testing_summary("cpu_elf_cross_test");
}
