/* ELF loader: kernels built at test time with the system compiler are loaded and called, results are compared
 * with C references; broken inputs give named errors; a fixed-seed fuzzer mutates valid files and must only ever
 * see "error" or "loaded" (run it under ASan with make SANITIZE=1). */
#include "cpu/cpu_elf.h"

#include <elf.h>
#include <math.h>
#include <stdint.h>
#include <unistd.h>

#include "cpu/cpu_reloc.h"
#include "base/testing.h"
#include "base/fuzz.h"
/* after testing.h: the shared checks use its macros */
#include "cpu/cpu_elf_testkernels.h"

#define KFLAGS "-O2 -fPIC -ffreestanding -fno-builtin -nostdlib -fno-stack-protector -fno-asynchronous-unwind-tables"
#define LDFLAGS_IMG "-pie --no-dynamic-linker -z norelro -z noexecstack --no-undefined -T linker_scripts/cpu_kernel.ld"

/* The file structures of this host's ELF class (armhf objects are ELF32). */
#if UINTPTR_MAX == 0xffffffffu
typedef Elf32_Ehdr T_Ehdr;
typedef Elf32_Shdr T_Shdr;
typedef Elf32_Phdr T_Phdr;
typedef Elf32_Rel T_Rel;
#define T_SHT_REL SHT_REL
#define T_R_INFO(sym, type) ELF32_R_INFO(sym, type)
#define T_R_SYM(info) ELF32_R_SYM(info)
#else
typedef Elf64_Ehdr T_Ehdr;
typedef Elf64_Shdr T_Shdr;
typedef Elf64_Phdr T_Phdr;
typedef Elf64_Rela T_Rel;
#define T_SHT_REL SHT_RELA
#define T_R_INFO(sym, type) ELF64_R_INFO(sym, type)
#define T_R_SYM(info) ELF64_R_SYM(info)
#endif

static char tmpdir[64];

static uint8_t *read_file(const char *path, size_t *out_size) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  fseek(fp, 0, SEEK_END);
  long n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
  if (buf && fread(buf, 1, (size_t)n, fp) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(fp);
  *out_size = (size_t)n;
  return buf;
}

/* Compile `src` with `flags` (and link with `link` when not NULL); returns the output file's bytes. */
static uint8_t *build(const char *name, const char *src, const char *flags, const char *link, size_t *out_size) {
  char path[256], cmd[1024];
  snprintf(path, sizeof path, "%s/%s.c", tmpdir, name);
  FILE *fp = fopen(path, "w");
  if (!fp) return NULL;
  fputs(src, fp);
  fclose(fp);
  snprintf(cmd, sizeof cmd, "cc %s -c %s/%s.c -o %s/%s.o", flags, tmpdir, name, tmpdir, name);
  if (system(cmd) != 0) {
    fprintf(stderr, "build failed: %s\n", cmd);
    return NULL;
  }
  if (link) {
    snprintf(cmd, sizeof cmd, "ld %s %s/%s.o -o %s/%s.elf", link, tmpdir, name, tmpdir, name);
    if (system(cmd) != 0) {
      fprintf(stderr, "link failed: %s\n", cmd);
      return NULL;
    }
    snprintf(path, sizeof path, "%s/%s.elf", tmpdir, name);
  } else {
    snprintf(path, sizeof path, "%s/%s.o", tmpdir, name);
  }
  return read_file(path, out_size);
}

static void test_kernel_a(void) {
  size_t n;
  uint8_t *obj = build("ka", KERNEL_A_SRC, KFLAGS " -fcommon -ffunction-sections -fdata-sections", NULL, &n);
  CHECK(obj != NULL);
  if (!obj) return;
  cpu_program *p = NULL;
  CHECK_OK(cpu_program_load(obj, n, &p));
  if (p) {
    CHECK(cpu_program_entry(p) == NULL);
    check_kernel_a(p);
    void *x;
    CHECK_ERR(cpu_program_symbol(p, "no_such_kernel", &x), HCQ_CODE_NOT_FOUND, "no_such_kernel");
    /* W^X: code pages are not writable; check via /proc/self/maps that no mapping in the program is rwx */
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    int rwx = 0;
    while (maps && fgets(line, sizeof line, maps)) {
      unsigned long lo, hi;
      char perm[5];
      if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perm) == 3 && lo >= (uintptr_t)cpu_program_base(p) &&
          hi <= (uintptr_t)cpu_program_base(p) + cpu_program_size_B(p) && perm[1] == 'w' && perm[2] == 'x')
        rwx = 1;
    }
    if (maps) fclose(maps);
    CHECK(!rwx);
    cpu_program_destroy(p);
  }
  /* The same object without -ffunction-sections (one .text, calls resolved by the assembler), and with
   * -fno-plt -fno-common. */
  free(obj);
  obj = build("ka2", KERNEL_A_SRC, KFLAGS " -fno-common -fno-plt", NULL, &n);
  p = NULL;
  CHECK_OK(cpu_program_load(obj, n, &p));
  if (p) check_kernel_a(p);
  cpu_program_destroy(p);
  free(obj);
  /* A linked image made with the project's linker script. */
  obj = build("kimg", KERNEL_A_SRC, KFLAGS " -ffunction-sections -fdata-sections", LDFLAGS_IMG, &n);
  CHECK(obj != NULL);
  p = NULL;
  if (obj) CHECK_OK(cpu_program_load(obj, n, &p));
  if (p) {
    CHECK(cpu_program_entry(p) != NULL);
    CHECK(cpu_program_entry(p) == sym(p, "hcq_entry"));
    check_kernel_a(p);
  }
  cpu_program_destroy(p);
  free(obj);
}

static void test_kernel_b(const char *flags) {
  size_t n;
  uint8_t *obj = build("kb", KERNEL_B_SRC, flags, NULL, &n);
  CHECK(obj != NULL);
  if (!obj) return;
  cpu_program *p = NULL;
  CHECK_OK(cpu_program_load(obj, n, &p));
  free(obj);
  if (!p) return;
  check_kernel_b(p);
  cpu_program_destroy(p);
}

static void set16(uint8_t *b, size_t off, uint16_t v) { memcpy(b + off, &v, 2); }

static void test_errors(void) {
  size_t n;
  uint8_t *obj = build("ext", "int ext_fn(int);\nint k(int x) { return ext_fn(x) + 1; }\n", KFLAGS, NULL, &n);
  cpu_program *p = NULL;
  if (obj) CHECK_ERR(cpu_program_load(obj, n, &p), HCQ_CODE_NOT_FOUND, "undefined symbol 'ext_fn'");
  CHECK(p == NULL);
  free(obj);

  obj = build("ka3", KERNEL_A_SRC, KFLAGS " -ffunction-sections", NULL, &n);
  if (!obj) return;
  uint8_t *bad = malloc(n);
  /* wrong machine */
  memcpy(bad, obj, n);
  uint16_t other = cpu_host_machine() == EM_X86_64 ? EM_AARCH64 : EM_X86_64;
  set16(bad, 18, other);
  char msg[80];
  snprintf(msg, sizeof msg, "ELF is for %s, this host is %s", other == EM_AARCH64 ? "aarch64" : "x86_64",
           cpu_machine_name(cpu_host_machine()));
  CHECK_ERR(cpu_program_load(bad, n, &p), HCQ_CODE_UNSUPPORTED, msg);
  /* bad e_shentsize (the other class's size) */
  memcpy(bad, obj, n);
  set16(bad, offsetof(T_Ehdr, e_shentsize), sizeof(T_Shdr) == 64 ? 40 : 64);
  CHECK_ERR(cpu_program_load(bad, n, &p), HCQ_CODE_INVALID, sizeof(T_Shdr) == 64 ? "e_shentsize 40" : "x 64 bytes");
  /* section headers beyond the end */
  CHECK_ERR(cpu_program_load(obj, n - 10, &p), HCQ_CODE_INVALID, "outside the file");
  CHECK_ERR(cpu_program_load(obj, 10, &p), HCQ_CODE_INVALID, "ELF");
  CHECK_ERR(cpu_program_load("hello", 5, &p), HCQ_CODE_INVALID, "not an ELF file");
  /* an unhandled relocation type, named: turn the first RELA entry into R_*_TLSGD-like types */
  memcpy(bad, obj, n);
  const T_Ehdr *eh = (const T_Ehdr *)bad;
  const T_Shdr *sh = (const T_Shdr *)(bad + eh->e_shoff);
  int patched = 0;
  for (int i = 0; i < eh->e_shnum && !patched; i++)
    if (sh[i].sh_type == T_SHT_REL && sh[i].sh_size && (sh[sh[i].sh_info].sh_flags & SHF_ALLOC)) {
      T_Rel r;
      memcpy(&r, bad + sh[i].sh_offset, sizeof r);
      uint32_t t = cpu_host_machine() == EM_X86_64 ? R_X86_64_TLSGD
                   : cpu_host_machine() == EM_ARM  ? 108 /* R_ARM_TLS_LE32 */
                                                   : R_AARCH64_TLSGD_ADR_PAGE21;
      r.r_info = T_R_INFO(T_R_SYM(r.r_info), t);
      memcpy(bad + sh[i].sh_offset, &r, sizeof r);
      patched = 1;
    }
  CHECK(patched);
  if (cpu_host_machine() == EM_X86_64)
    CHECK_ERR(cpu_program_load(bad, n, &p), HCQ_CODE_UNSUPPORTED, "type 19 (R_X86_64_TLSGD)");
  else if (cpu_host_machine() == EM_ARM)
    CHECK_ERR(cpu_program_load(bad, n, &p), HCQ_CODE_UNSUPPORTED, "type 108 (R_ARM_TLS_LE32)");
  else
    CHECK_ERR(cpu_program_load(bad, n, &p), HCQ_CODE_UNSUPPORTED, "(R_AARCH64_TLSGD_ADR_PAGE21)");
  free(bad);
  free(obj);
}

/* xorshift64*: fixed seed (HCQ_FUZZ_SEED overrides it, base/fuzz.h), deterministic mutations */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545f4914f6cdd1dull;
}

static const uint64_t interesting[] = {0, 1, 7, 8, 0x40, 0xfff, 0x1000, 0x7fffffff, 0x80000000, 0xffffffff,
                                       0x100000000ull, 0x7fffffffffffffffull, 0xffffffffffffffffull};

static void mutate(uint8_t *b, size_t *n, const uint8_t *orig, size_t orig_n) {
  memcpy(b, orig, orig_n);
  *n = orig_n;
  const T_Ehdr *eh = (const T_Ehdr *)orig;
  int kind = (int)(rnd() % 6);
  uint64_t v = rnd() % 3 == 0 ? interesting[rnd() % (sizeof interesting / sizeof *interesting)] : rnd();
  size_t field_w = (size_t)1 << (rnd() % 4); /* 1, 2, 4, 8 bytes */
  size_t off;
  switch (kind) {
  case 0: /* flip a few bytes anywhere */
    for (int k = 1 + (int)(rnd() % 4); k > 0; k--) b[rnd() % orig_n] ^= (uint8_t)(1u << (rnd() % 8));
    return;
  case 1: /* truncate */
    *n = (size_t)(rnd() % orig_n);
    return;
  case 2: /* an ELF header field */
    off = rnd() % (sizeof(T_Ehdr) - field_w + 1);
    break;
  case 3: /* a section header field (program header for images) */
    if (eh->e_type == ET_REL || rnd() % 2) {
      off = eh->e_shoff + (rnd() % eh->e_shnum) * sizeof(T_Shdr) + rnd() % (sizeof(T_Shdr) - field_w + 1);
    } else {
      off = eh->e_phoff + (rnd() % eh->e_phnum) * sizeof(T_Phdr) + rnd() % (sizeof(T_Phdr) - field_w + 1);
    }
    break;
  default: /* a word inside some section's contents: symbols, relocations, dynamic tables */
  {
    const T_Shdr *sh = (const T_Shdr *)(orig + eh->e_shoff);
    const T_Shdr *s = &sh[rnd() % eh->e_shnum];
    if (s->sh_type == SHT_NOBITS || s->sh_size < 8) return;
    off = s->sh_offset + (rnd() % (s->sh_size - 7) & ~(uint64_t)(field_w - 1));
    break;
  }
  }
  if (off + field_w <= orig_n) memcpy(b + off, &v, field_w);
}

static void fuzz(const uint8_t *orig, size_t orig_n, int iterations, int *out_loaded) {
  uint8_t *b = malloc(orig_n);
  int budget_set = 0; /* HCQ_FUZZ_SECONDS (make fuzz): keep going for that long */
  double end_s = fuzz_now_s() + fuzz_seconds(0, &budget_set) / 2;
  for (int it = 0; it < iterations || (budget_set && fuzz_now_s() < end_s && !testing_failures); it++) {
    size_t n;
    mutate(b, &n, orig, orig_n);
    cpu_program *p = NULL;
    hcq_status st = cpu_program_load(b, n, &p);
    if (!st) {
      (*out_loaded)++;
      void *x;
      hcq_status_free(cpu_program_symbol(p, "hcq_entry", &x));
      cpu_program_destroy(p);
    } else {
      CHECK(p == NULL && hcq_status_message(st)[0] != 0);
      hcq_status_free(st);
    }
  }
  free(b);
}

static void test_fuzz(void) {
  size_t n_obj, n_img;
  uint8_t *obj = build("kf", KERNEL_A_SRC, KFLAGS " -fcommon -ffunction-sections -fno-plt", NULL, &n_obj);
  uint8_t *img = build("kfi", KERNEL_A_SRC, KFLAGS, LDFLAGS_IMG, &n_img);
  CHECK(obj && img);
  if (!obj || !img) return;
  int loaded_obj = 0, loaded_img = 0;
  rng_state = fuzz_seed("cpu_elf fuzz", rng_state);
  fuzz(obj, n_obj, 3000, &loaded_obj);
  fuzz(img, n_img, 2000, &loaded_img);
  printf("fuzz: %d of 3000 mutated objects and %d of 2000 mutated images still loaded\n", loaded_obj, loaded_img);
  /* every prefix of the object fails cleanly */
  int prefix_errors = 0;
  for (size_t len = 0; len < n_obj; len += 7) {
    cpu_program *p = NULL;
    hcq_status st = cpu_program_load(obj, len, &p);
    prefix_errors += st != NULL;
    hcq_status_free(st);
    cpu_program_destroy(p);
  }
  CHECK_EQ_INT(prefix_errors, (n_obj + 6) / 7);
  free(obj);
  free(img);
}

int main(void) {
  if (system("cc --version >/dev/null 2>&1") != 0 || system("ld --version >/dev/null 2>&1") != 0)
    TEST_SKIP("cpu_elf_test needs cc and ld");
  snprintf(tmpdir, sizeof tmpdir, "/tmp/hcq_cpu_elf_XXXXXX");
  if (!mkdtemp(tmpdir)) TEST_SKIP("cannot create a temp dir");
  test_kernel_a();
  test_kernel_b(KFLAGS); /* memcpy via R_X86_64_PLT32 -> trampoline */
  test_kernel_b(KFLAGS " -ffunction-sections -fno-plt"); /* memcpy via GOTPCRELX -> GOT slot */
  test_errors();
  test_fuzz();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
  return testing_summary("cpu_elf_test");
}
