/* The ELF32 widening (cpu_elf32.c) on any host: an armhf object built with arm-linux-gnueabihf-gcc is widened and
 * its tables are compared with binutils' view of the same file (arm-linux-gnueabihf-readelf -r entry counts,
 * readelf -s symbol values, Thumb bit included); then a fixed-seed fuzzer mutates the 32-bit file and the widening
 * must either refuse it or produce tables that lie inside the widened buffer (run under ASan: make SANITIZE=1).
 * Loading and calling armhf kernels is tested under qemu-arm (cpu_elf_cross_test, and cpu_elf_test in
 * make cross-test ARCH=armhf). Skips (77) without the armhf cross compiler. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_elf_internal.h"
#include "cpu/cpu_elf_testkernels.h"
#include "base/testing.h"
#include "base/fuzz.h"

#define XCC "arm-linux-gnueabihf-gcc"
#define KFLAGS "-O2 -fPIC -ffreestanding -fno-builtin -nostdlib -fno-stack-protector -fno-asynchronous-unwind-tables"

static char dir[64];

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

/* Entry count of relocation section `name` from readelf -r, or -1. */
static long readelf_count(const char *obj, const char *name) {
  char cmd[512], line[512], want[160];
  snprintf(cmd, sizeof cmd, "arm-linux-gnueabihf-readelf -rW %s", obj);
  snprintf(want, sizeof want, "Relocation section '%s' at offset", name);
  FILE *p = popen(cmd, "r");
  long n = -1;
  while (p && fgets(line, sizeof line, p)) {
    char *c = strstr(line, " contains ");
    if (strncmp(line, want, strlen(want)) == 0 && c) n = strtol(c + 10, NULL, 10);
  }
  if (p) pclose(p);
  return n;
}

/* Symbol value from readelf -s (the raw st_value: Thumb functions show bit 0), or -1. */
static long long readelf_value(const char *obj, const char *sym) {
  char cmd[512], line[512];
  snprintf(cmd, sizeof cmd, "arm-linux-gnueabihf-readelf -sW %s", obj);
  FILE *p = popen(cmd, "r");
  long long v = -1;
  while (p && fgets(line, sizeof line, p)) {
    unsigned idx;
    unsigned long long val, size;
    char type[32], bind[32], vis[32], ndx[32], name[256];
    if (sscanf(line, " %u: %llx %llu %31s %31s %31s %31s %255s", &idx, &val, &size, type, bind, vis, ndx, name) == 8 &&
        strcmp(name, sym) == 0)
      v = (long long)val;
  }
  if (p) pclose(p);
  return v;
}

static void check_against_binutils(const char *obj_path, const uint8_t *obj, size_t n) {
  cpu_elf_file f = {.data = obj, .size_B = n};
  uint8_t *owned = NULL;
  CHECK_OK(cpu_elf32_widen(&f, &owned));
  if (!owned) return;
  const Elf32_Ehdr *e32 = (const Elf32_Ehdr *)obj;
  CHECK_EQ_INT(f.eh->e_machine, EM_ARM);
  CHECK_EQ_INT(f.eh->e_type, ET_REL);
  CHECK_EQ_INT(f.eh->e_shnum, e32->e_shnum);
  CHECK_EQ_INT(f.eh->e_shentsize, sizeof(Elf64_Shdr));
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(f.data + f.eh->e_shoff);
  const Elf64_Shdr *strs = &sh[f.eh->e_shstrndx];
  int rel_sections = 0, thm_calls = 0;
  for (size_t i = 0; i < f.eh->e_shnum; i++) {
    const char *name = (const char *)f.data + strs->sh_offset + sh[i].sh_name;
    if (sh[i].sh_type == SHT_REL) CHECK(!"a REL section was left unwidened");
    if (sh[i].sh_type == SHT_RELA) {
      rel_sections++;
      CHECK_EQ_INT(sh[i].sh_entsize, sizeof(Elf64_Rela));
      CHECK_EQ_INT((long)(sh[i].sh_size / sizeof(Elf64_Rela)), readelf_count(obj_path, name));
      const Elf64_Rela *r = (const Elf64_Rela *)(f.data + sh[i].sh_offset);
      for (size_t k = 0; k < sh[i].sh_size / sizeof *r; k++) {
        CHECK(r[k].r_addend == 0);
        thm_calls += ELF64_R_TYPE(r[k].r_info) == 10; /* R_ARM_THM_CALL */
      }
    }
    if (sh[i].sh_type == SHT_SYMTAB) {
      const Elf64_Sym *s = (const Elf64_Sym *)(f.data + sh[i].sh_offset);
      const char *str = (const char *)f.data + sh[sh[i].sh_link].sh_offset;
      for (size_t k = 0; k < sh[i].sh_size / sizeof *s; k++)
        if (strcmp(str + s[k].st_name, "hcq_entry") == 0 || strcmp(str + s[k].st_name, "get_acc") == 0) {
          CHECK_EQ_INT((long long)s[k].st_value, readelf_value(obj_path, str + s[k].st_name));
          CHECK(s[k].st_value & 1); /* Thumb code: bit 0 set in the symbol's value */
          CHECK_EQ_INT(ELF64_ST_TYPE(s[k].st_info), STT_FUNC);
        }
    }
  }
  CHECK(rel_sections >= 4); /* -ffunction-sections: one per function with relocations, plus data */
  CHECK(thm_calls >= 1);    /* hcq_entry calls the noinline f2 */
  free(owned);
}

/* A linked image: program headers and the dynamic section are widened; DT_RELSZ covers readelf's .rel.dyn. */
static void check_image(const char *img_path, const uint8_t *img, size_t n) {
  cpu_elf_file f = {.data = img, .size_B = n};
  uint8_t *owned = NULL;
  CHECK_OK(cpu_elf32_widen(&f, &owned));
  if (!owned) return;
  const Elf32_Ehdr *e32 = (const Elf32_Ehdr *)img;
  CHECK_EQ_INT(f.eh->e_type, ET_DYN);
  CHECK_EQ_INT(f.eh->e_phnum, e32->e_phnum);
  CHECK_EQ_INT(f.eh->e_entry, e32->e_entry);
  const Elf64_Phdr *ph = (const Elf64_Phdr *)(f.data + f.eh->e_phoff);
  long relsz = -1, relent = -1;
  for (size_t i = 0; i < f.eh->e_phnum; i++) {
    if (ph[i].p_type != PT_DYNAMIC) continue;
    const Elf64_Dyn *d = (const Elf64_Dyn *)(f.data + ph[i].p_offset);
    for (size_t k = 0; k < ph[i].p_filesz / sizeof *d && d[k].d_tag != DT_NULL; k++) {
      if (d[k].d_tag == DT_RELSZ) relsz = (long)d[k].d_un.d_val;
      if (d[k].d_tag == DT_RELENT) relent = (long)d[k].d_un.d_val;
    }
  }
  CHECK_EQ_INT(relent, sizeof(Elf32_Rel));
  CHECK(relsz > 0 && relsz / 8 == readelf_count(img_path, ".rel.dyn"));
  free(owned);
}

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 0x9e3779b97f4a7c15ull;
}

static void fuzz(const uint8_t *obj, size_t n, int iterations) {
  uint8_t *b = malloc(n);
  int widened = 0, budget_set = 0; /* HCQ_FUZZ_SECONDS (make fuzz): keep going for that long */
  double end_s = fuzz_now_s() + fuzz_seconds(0, &budget_set) / 2;
  for (int it = 0; it < iterations || (budget_set && fuzz_now_s() < end_s && !testing_failures); it++) {
    memcpy(b, obj, n);
    size_t len = n;
    switch (rnd() % 4) {
    case 0: len = (size_t)(rnd() % n); break;
    case 1: b[rnd() % sizeof(Elf32_Ehdr)] ^= (uint8_t)(1u << (rnd() % 8)); break;
    default:
      for (int k = 1 + (int)(rnd() % 4); k > 0; k--) {
        uint32_t v = rnd() % 3 ? (uint32_t)rnd() : (uint32_t)(rnd() % 64);
        size_t off = (size_t)(rnd() % (n - 3));
        memcpy(b + off, &v, 1 + rnd() % 4);
      }
    }
    /* an exact-size copy so ASan sees any read past the end */
    uint8_t *c = malloc(len ? len : 1);
    memcpy(c, b, len);
    cpu_elf_file f = {.data = c, .size_B = len};
    uint8_t *owned = NULL;
    hcq_status st = len >= EI_NIDENT ? cpu_elf32_widen(&f, &owned) : hcq_status_make(HCQ_CODE_INVALID, "short");
    if (!st) {
      widened++;
      /* every widened table lies inside the widened buffer */
      const Elf64_Shdr *sh = f.eh->e_shoff ? (const Elf64_Shdr *)(f.data + f.eh->e_shoff) : NULL;
      for (size_t i = 0; sh && i < f.eh->e_shnum; i++)
        if (sh[i].sh_type == SHT_RELA || sh[i].sh_type == SHT_SYMTAB)
          CHECK(sh[i].sh_offset <= f.size_B && sh[i].sh_size <= f.size_B - sh[i].sh_offset);
      free(owned);
    } else {
      CHECK(owned == NULL && hcq_status_message(st)[0]);
      hcq_status_free(st);
    }
    free(c);
  }
  printf("fuzz: %d of %d mutated ELF32 files widened\n", widened, iterations);
  free(b);
}

int main(void) {
  if (system(XCC " --version >/dev/null 2>&1") || system("arm-linux-gnueabihf-readelf --version >/dev/null 2>&1"))
    TEST_SKIP("needs arm-linux-gnueabihf-gcc and binutils (gcc-arm-linux-gnueabihf)");
  snprintf(dir, sizeof dir, "/tmp/hcq_elf32_XXXXXX");
  if (!mkdtemp(dir)) TEST_SKIP("cannot create a temp dir");
  char src[128], obj_path[128], cmd[1024];
  snprintf(src, sizeof src, "%s/ka.c", dir);
  snprintf(obj_path, sizeof obj_path, "%s/ka.o", dir);
  FILE *fp = fopen(src, "w");
  CHECK(fp != NULL);
  if (fp) {
    fputs(KERNEL_A_SRC, fp);
    fclose(fp);
  }
  snprintf(cmd, sizeof cmd, XCC " " KFLAGS " -mthumb -mcpu=cortex-a15 -fcommon -ffunction-sections -c %s -o %s", src,
           obj_path);
  CHECK(system(cmd) == 0);
  size_t n = 0;
  uint8_t *obj = slurp(obj_path, &n);
  CHECK(obj && n > sizeof(Elf32_Ehdr));
  if (obj && n > sizeof(Elf32_Ehdr)) {
    check_against_binutils(obj_path, obj, n);
    rng = fuzz_seed("cpu_elf32 fuzz", rng);
    fuzz(obj, n, 4000);
  }
  free(obj);
  char img_path[128];
  snprintf(img_path, sizeof img_path, "%s/kimg.elf", dir);
  snprintf(cmd, sizeof cmd, XCC " " KFLAGS " -mthumb -mcpu=cortex-a15 -c %s -o %s/kimg.o && arm-linux-gnueabihf-ld -pie "
           "--no-dynamic-linker -z norelro -z noexecstack --no-undefined -T linker_scripts/cpu_kernel.ld %s/kimg.o -o %s",
           src, dir, dir, img_path);
  CHECK(system(cmd) == 0);
  uint8_t *img = slurp(img_path, &n);
  CHECK(img && n > sizeof(Elf32_Ehdr));
  if (img && n > sizeof(Elf32_Ehdr)) {
    check_image(img_path, img, n);
    fuzz(img, n, 2000);
  }
  free(img);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return testing_summary("cpu_elf32_test");
}
