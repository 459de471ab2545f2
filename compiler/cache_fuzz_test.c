/* Fuzzer for the compile cache's entry reader (compiler/cache.c). Entries of random payloads are stored, then one
 * entry (or the key file) is damaged at random: bits flipped, bytes replaced, truncated, extended, header fields
 * set to edge values (a huge length), another key's entry copied over it, an entry forged with the right layout
 * under a random secret, replaced by a FIFO, a directory, a symlink (to a valid entry, to /dev/zero), a huge
 * sparse file, made writable by others. Checked against the test's own record of what was stored:
 * - load never fails, blocks (alarm) or crashes; it returns exactly the stored payload, and only when the entry
 *   and the key file are byte-for-byte what the cache wrote (and regular, ours, not writable by others);
 * - store never fails; after it the entry loads again (except where a directory blocks the path).
 * Fixed seed in make test; HCQ_FUZZ_SEED / HCQ_FUZZ_SECONDS (default 3 s) as in base/fuzz.h. */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/siphash.h"
#include "compiler/toolchain.h"
#include "base/testing.h"
#include "base/fuzz.h"

#define NKEYS 4

static size_t rndn(size_t n) { return n ? (size_t)(fuzz_next() % n) : 0; }

static char keys[NKEYS][64];
static uint8_t *payloads[NKEYS];
static size_t payload_B[NKEYS];
static char *paths[NKEYS];
static char dir[200], keyfile[240];

static uint8_t *slurp(const char *path, size_t *n) {
  *n = 0;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (1 << 24)) {
    if (fd >= 0) close(fd);
    return NULL;
  }
  uint8_t *b = malloc((size_t)st.st_size + 1);
  *n = (size_t)read(fd, b, (size_t)st.st_size);
  close(fd);
  return b;
}

static void spit(const char *path, const uint8_t *b, size_t n) {
  unlink(path);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd >= 0) {
    ssize_t w = write(fd, b, n);
    (void)w;
    close(fd);
  }
}

static void remove_any(const char *path) {
  if (unlink(path) != 0) rmdir(path);
}

static void store(int k) { CHECK_OK(cc_cache_store(keys[k], strlen(keys[k]), payloads[k], payload_B[k])); }

/* Load key k: returns whether found; a found payload must be exactly the stored one. */
static bool load(int k) {
  uint8_t *d = NULL;
  size_t n = 0;
  bool found = false;
  CHECK_OK(cc_cache_load(keys[k], strlen(keys[k]), &d, &n, &found));
  if (found) CHECK(n == payload_B[k] && (n == 0 || memcmp(d, payloads[k], n) == 0));
  free(d);
  return found;
}

int main(void) {
  alarm(120);
  fuzz_rng = fuzz_seed("cache_fuzz", 0xcac4e5eedull);
  double budget = fuzz_seconds(3.0, NULL), t0 = fuzz_now_s();
  char root[] = "/tmp/hcq-cache-fuzz-XXXXXX";
  if (!mkdtemp(root)) return 1;
  setenv("XDG_CACHE_HOME", root, 1);
  unsetenv("HCQ_CACHE");
  snprintf(dir, sizeof dir, "%s/hcq", root);
  snprintf(keyfile, sizeof keyfile, "%s/key", dir);
  size_t sizes[NKEYS] = {0, 1, 100, 1 << 20};
  for (int k = 0; k < NKEYS; k++) {
    snprintf(keys[k], sizeof keys[k], "key %d of the cache fuzzer", k);
    payload_B[k] = sizes[k];
    payloads[k] = malloc(sizes[k] + 1);
    for (size_t i = 0; i < sizes[k]; i++) payloads[k][i] = (uint8_t)fuzz_next();
    CHECK_OK(cc_cache_path(keys[k], strlen(keys[k]), &paths[k]));
    store(k);
    CHECK(load(k));
  }
  size_t key_n = 0;
  uint8_t *key_orig = slurp(keyfile, &key_n);
  CHECK(key_orig && key_n == 16);

  long iters = 0, found_after_damage = 0, unchanged = 0;
  while ((fuzz_now_s() - t0 < budget || iters < 300) && testing_failures < 10) {
    iters++;
    int k = (int)rndn(NKEYS);
    size_t n = 0;
    uint8_t *orig = slurp(paths[k], &n);
    CHECK(orig != NULL);
    if (!orig) break;
    uint8_t *b = malloc(n + 64);
    memcpy(b, orig, n);
    size_t m = n;
    bool may_load = false; /* set when the bytes on disk end up unchanged */
    bool damaged_key = false;
    int what = (int)rndn(14);
    switch (what) {
    case 0: /* flip bits */
      for (int f = 1 + (int)rndn(3); f > 0; f--) b[rndn(n)] ^= (uint8_t)(1u << rndn(8));
      break;
    case 1: /* replace a byte */
      b[rndn(n)] = (uint8_t)fuzz_next();
      break;
    case 2: /* truncate */
      m = rndn(n + 1);
      break;
    case 3: /* extend */
      for (size_t e = 1 + rndn(64); e > 0; e--) b[m++] = (uint8_t)fuzz_next();
      break;
    case 4: { /* a header field at an edge value (the length: 0, the real one +-1, huge) */
      static const uint64_t edge[] = {0, 1, 2, 0x7fffffffffffffffull, ~0ull, 1ull << 40};
      int off = (int)(rndn(4) * 8);
      uint64_t v = rndn(3) == 0 ? (uint64_t)(n - 32) + rndn(3) - 1 : edge[rndn(6)];
      for (int i = 0; i < 8; i++) b[off + i] = (uint8_t)(v >> (8 * i));
      break;
    }
    case 5: { /* another key's entry under this name */
      int o = (k + 1 + (int)rndn(NKEYS - 1)) % NKEYS;
      free(b);
      b = slurp(paths[o], &m);
      b = realloc(b, m + 64);
      break;
    }
    case 6: { /* forged: the right layout, a MAC under a random secret */
      uint8_t secret[16];
      for (int i = 0; i < 16; i++) secret[i] = (uint8_t)fuzz_next();
      cc_siphash s;
      uint8_t len[8];
      size_t kl = strlen(keys[k]);
      for (int i = 0; i < 8; i++) len[i] = (uint8_t)(kl >> (8 * i));
      cc_siphash_init(&s, secret);
      cc_siphash_add(&s, len, 8);
      cc_siphash_add(&s, keys[k], kl);
      cc_siphash_add(&s, b + 32, n - 32);
      cc_siphash_finish(&s, b + 16);
      break;
    }
    case 7: /* damage the key file instead */
    case 8: {
      uint8_t kb[40];
      memcpy(kb, key_orig, 16);
      size_t kn = 16;
      if (rndn(2)) kb[rndn(16)] ^= (uint8_t)(1u << rndn(8));
      else kn = rndn(2) ? rndn(16) : 16 + 1 + rndn(20);
      for (size_t i = 16; i < kn; i++) kb[i] = (uint8_t)fuzz_next();
      spit(keyfile, kb, kn);
      damaged_key = true;
      break;
    }
    default:
      break;
    }
    if (what <= 6) {
      spit(paths[k], b, m);
      may_load = m == n && memcmp(b, orig, n) == 0;
      unchanged += may_load;
    } else if (what >= 9) { /* not a regular file of ours */
      remove_any(paths[k]);
      char target[300];
      snprintf(target, sizeof target, "%s/elsewhere", dir);
      switch (what) {
      case 9: CHECK(mkfifo(paths[k], 0600) == 0); break;
      case 10: CHECK(mkdir(paths[k], 0700) == 0); break;
      case 11:
        spit(target, orig, n); /* a symlink to a valid copy: still refused (O_NOFOLLOW) */
        CHECK(symlink(rndn(2) ? target : "/dev/zero", paths[k]) == 0);
        break;
      case 12: { /* huge sparse file with a valid header */
        spit(paths[k], orig, n);
        CHECK(truncate(paths[k], (off_t)1 << (31 + rndn(3))) == 0);
        break;
      }
      default:
        spit(paths[k], orig, n);
        CHECK(chmod(paths[k], rndn(2) ? 0666 : 0620) == 0);
      }
    }
    bool found = load(k);
    if (found && !may_load) {
      found_after_damage++;
      fprintf(stderr, "cache_fuzz: key %d loaded after damage kind %d (%zu -> %zu bytes)\n", k, what, n, m);
      CHECK(0);
    }
    if (!damaged_key && what <= 6 && may_load) CHECK(found);
    /* repair: put the key back, then store (over whatever is at the path) and load again */
    if (damaged_key) spit(keyfile, key_orig, 16);
    if (what == 10) rmdir(paths[k]);
    else if (what == 11 || what == 9) remove_any(paths[k]); /* store would replace these too; keep it simple */
    if (damaged_key) { /* entries written under the old secret are valid again */
      CHECK(load(k) || what <= 6);
    }
    store(k);
    CHECK(load(k));
    free(b);
    free(orig);
  }
  printf("cache_fuzz: %ld damaged entries, %ld left byte-identical, %ld loaded after damage, %.1f s\n", iters,
         unchanged, found_after_damage, fuzz_now_s() - t0);
  for (int k = 0; k < NKEYS; k++) {
    free(payloads[k]);
    free(paths[k]);
  }
  free(key_orig);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", root);
  if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
  return testing_summary("cache_fuzz");
}
