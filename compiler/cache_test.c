/* Compile cache: a hit returns the same object without running the compiler; a corrupted or truncated entry is
 * detected, rebuilt and replaced; HCQ_CACHE=0 disables it; a failing compile reports the command and stderr; a
 * missing compiler names the Debian package. */
#include <fcntl.h>
#include <sys/stat.h>

#include "compiler/cc_test_util.h"
#include "base/testing.h"

static const char *SRC = "void k(float* restrict data0_4, int core_id) { data0_4[core_id] = 1.0f; }\n";

static cc_program *prog_of(const char *src) {
  cc_program *p = calloc(1, sizeof *p);
  p->name = strdup("k");
  p->symbol = strdup("k");
  p->source = strdup(src);
  return p;
}

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(*len + 1);
  if (b && fread(b, 1, *len, f) != *len) *len = 0;
  fclose(f);
  return b;
}

int main(void) {
  char dir[] = "/tmp/hcq-cache-test-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  unsetenv("HCQ_CACHE");
  if (!tu_have(cc_toolchain_cc())) return 77;
  cc_target t;
  CHECK_OK(cc_target_get("c", 1, &t));

  /* miss -> compile -> write */
  cc_program *a = prog_of(SRC);
  cc_cache_stats s0 = cc_cache_get_stats();
  CHECK_OK(cc_compile_binary(&t, a));
  cc_cache_stats s1 = cc_cache_get_stats();
  CHECK_EQ_INT(s1.misses - s0.misses, 1);
  CHECK_EQ_INT(s1.writes - s0.writes, 1);
  CHECK(a->binary_size_B > 64 && memcmp(a->binary, "\177ELF", 4) == 0);
  CHECK(a->external_ms > 0);

  /* hit: same bytes, no external compile */
  cc_program *b = prog_of(SRC);
  CHECK_OK(cc_compile_binary(&t, b));
  cc_cache_stats s2 = cc_cache_get_stats();
  CHECK_EQ_INT(s2.hits - s1.hits, 1);
  CHECK(b->external_ms == 0);
  CHECK(b->binary_size_B == a->binary_size_B && memcmp(a->binary, b->binary, a->binary_size_B) == 0);

  /* find the entry: the only *.o file in DIR/hcq */
  char entry[512] = {0};
  char cmd[600];
  snprintf(cmd, sizeof cmd, "ls %s/hcq/*.o", dir);
  FILE *ls = popen(cmd, "r");
  CHECK(ls && fgets(entry, sizeof entry, ls));
  if (ls) pclose(ls);
  entry[strcspn(entry, "\n")] = 0;
  size_t len = 0;
  uint8_t *raw = slurp(entry, &len);
  CHECK(raw && len == a->binary_size_B + 32 && memcmp(raw, "HCQC", 4) == 0);

  /* corrupt one payload byte: detected, rebuilt, replaced */
  raw[32 + len / 2 - 16] ^= 0x5a;
  FILE *f = fopen(entry, "wb");
  CHECK(f && fwrite(raw, 1, len, f) == len);
  if (f) fclose(f);
  cc_program *c = prog_of(SRC);
  CHECK_OK(cc_compile_binary(&t, c));
  cc_cache_stats s3 = cc_cache_get_stats();
  CHECK_EQ_INT(s3.corrupt - s2.corrupt, 1);
  CHECK_EQ_INT(s3.writes - s2.writes, 1);
  CHECK(c->binary_size_B == a->binary_size_B && memcmp(a->binary, c->binary, a->binary_size_B) == 0);
  size_t len2 = 0;
  uint8_t *raw2 = slurp(entry, &len2);
  CHECK(raw2 && len2 == len && memcmp(raw2 + 32, a->binary, a->binary_size_B) == 0);
  free(raw2);

  /* truncate: detected too */
  CHECK(truncate(entry, (off_t)(len - 7)) == 0);
  cc_program *d = prog_of(SRC);
  CHECK_OK(cc_compile_binary(&t, d));
  cc_cache_stats s4 = cc_cache_get_stats();
  CHECK_EQ_INT(s4.corrupt - s3.corrupt, 1);
  CHECK(d->binary_size_B == a->binary_size_B && memcmp(a->binary, d->binary, a->binary_size_B) == 0);
  /* header only (no payload) */
  CHECK(truncate(entry, 10) == 0);
  cc_program *e = prog_of(SRC);
  CHECK_OK(cc_compile_binary(&t, e));
  CHECK_EQ_INT(cc_cache_get_stats().corrupt - s4.corrupt, 1);
  CHECK(e->binary_size_B == a->binary_size_B);

  /* different source -> different key */
  cc_program *g = prog_of("void k(float* restrict data0_4, int core_id) { data0_4[core_id] = 2.0f; }\n");
  cc_cache_stats s5 = cc_cache_get_stats();
  CHECK_OK(cc_compile_binary(&t, g));
  CHECK_EQ_INT(cc_cache_get_stats().misses - s5.misses, 1);

  /* disabled */
  setenv("HCQ_CACHE", "0", 1);
  cc_program *h = prog_of(SRC);
  cc_cache_stats s6 = cc_cache_get_stats();
  CHECK_OK(cc_compile_binary(&t, h));
  cc_cache_stats s7 = cc_cache_get_stats();
  CHECK(s7.hits == s6.hits && s7.misses == s6.misses && h->external_ms > 0);
  unsetenv("HCQ_CACHE");

  /* compile error: the command and the compiler's message */
  cc_program *bad = prog_of("void k(int core_id) { this is not C; }\n");
  CHECK_ERR(cc_compile_binary(&t, bad), HCQ_CODE_INVALID, "-ffreestanding");
  cc_program *bad2 = prog_of("void k(int core_id) { this is not C; }\n");
  CHECK_ERR(cc_compile_binary(&t, bad2), HCQ_CODE_INVALID, "error");
  /* missing compiler */
  setenv("HCQ_CC", "clang-77", 1);
  cc_program *m = prog_of(SRC);
  CHECK_ERR(cc_compile_binary(&t, m), HCQ_CODE_UNSUPPORTED, "install the Debian package clang-77");
  unsetenv("HCQ_CC");

  cc_program *all[] = {a, b, c, d, e, g, h, bad, bad2, m};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cc_program_free(all[i]);
  free(raw);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
  return testing_summary("cache");
}
