/* On-disk compile cache (see toolchain.h). An entry is one file named by a 128-bit hash of its key:
 *   header: magic "HCQC" | u32 format version (2) | u64 payload length | 16-byte MAC
 *   payload bytes
 * MAC = SipHash-2-4-128 under the user's secret (file `key`, 16 random bytes, 0600) over
 *   u64 key length | key | payload
 * so an entry written without the secret (forged, copied from another key or user, or of format 1, whose
 * checksums anyone could compute) is rejected and rebuilt, never loaded.
 * Safety: the directory (created 0700) and every directory above it must belong to us or root and not be writable
 * by others (unless sticky, like /tmp); the directory and each entry and the key must belong to us and not be
 * group/world writable. Entries are opened O_NOFOLLOW|O_NONBLOCK and checked with fstat (regular file, bounded
 * size) before reading, so a symlink, directory or FIFO is rejected without blocking. A cache that cannot be used
 * is skipped with one warning per process; the compile then runs uncached. Writes go to a temp file in the
 * directory that is then renamed over the entry (atomic on POSIX); temp files left by a killed store are swept. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compiler/siphash.h"
#include "compiler/toolchain.h"
#include "base/fileio.h"

#define CACHE_MAGIC "HCQC"
#define CACHE_FORMAT 2u
#define HEADER_B 32
#define SECRET_B 16
#define CACHE_MAX_ENTRY_B ((off_t)1 << 28) /* 256 MiB: far above any object; bounds what a bad entry costs */

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static cc_cache_stats stats;
static atomic_bool warned, swept;

static void bump(uint64_t *field) {
  pthread_mutex_lock(&stats_lock);
  (*field)++;
  pthread_mutex_unlock(&stats_lock);
}

cc_cache_stats cc_cache_get_stats(void) {
  pthread_mutex_lock(&stats_lock);
  cc_cache_stats s = stats;
  pthread_mutex_unlock(&stats_lock);
  return s;
}

/* The cache is skipped (not fatal): one warning per process, counted in stats.skipped. */
static void skip(const char *fmt, ...) {
  bump(&stats.skipped);
  if (atomic_exchange(&warned, true)) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "hcq: warning: compile cache not used: %s; compiling without it (HCQ_CACHE=0 silences this)\n",
          msg);
}

uint64_t cc_hash64(const void *data, size_t len, uint64_t seed) {
  const uint8_t *p = data;
  uint64_t h = 0xcbf29ce484222325ull ^ (seed * 0x9E3779B97F4A7C15ull);
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

hcq_status cc_cache_dir(char **out_dir, bool *out_disabled) {
  *out_dir = NULL;
  *out_disabled = false;
  const char *off = getenv("HCQ_CACHE");
  if (off && strcmp(off, "0") == 0) {
    *out_disabled = true;
    return HCQ_OK;
  }
  const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  char *dir = NULL;
  int n;
  if (xdg && xdg[0] == '/') n = asprintf(&dir, "%s/hcq", xdg);
  else if (home && home[0]) n = asprintf(&dir, "%s/.cache/hcq", home);
  else {
    *out_disabled = true; /* nowhere to put it */
    return HCQ_OK;
  }
  if (n < 0) return hcq_status_make(HCQ_CODE_NOMEM, "cache: out of memory");
  *out_dir = dir;
  return HCQ_OK;
}

static void entry_name(const char *key, size_t key_len, char out[40]) {
  snprintf(out, 40, "%016llx%016llx.o", (unsigned long long)cc_hash64(key, key_len, 1),
           (unsigned long long)cc_hash64(key, key_len, 2));
}

hcq_status cc_cache_path(const char *key, size_t key_len, char **out_path) {
  *out_path = NULL;
  char *dir = NULL;
  bool disabled = false;
  HCQ_TRY(cc_cache_dir(&dir, &disabled));
  if (disabled) return hcq_status_make(HCQ_CODE_NOT_FOUND, "cache disabled");
  char name[40];
  entry_name(key, key_len, name);
  int n = asprintf(out_path, "%s/%s", dir, name);
  free(dir);
  if (n < 0) {
    *out_path = NULL;
    return hcq_status_make(HCQ_CODE_NOMEM, "cache: out of memory");
  }
  return HCQ_OK;
}

/* ------------------------------------------------------------------------------------------------ directory */

/* Create the missing directories of path, 0700 (the XDG base directory spec's mode for ~/.cache too). */
static bool mkdirs(const char *path) {
  char buf[PATH_MAX];
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
    skip("%s: path too long", path);
    return false;
  }
  for (char *p = buf + 1;; p++) {
    if (*p && *p != '/') continue;
    char c = *p;
    *p = 0;
    if (mkdir(buf, 0700) != 0 && errno != EEXIST) {
      skip("mkdir(%s): %s", buf, strerror(errno));
      return false;
    }
    if (!c) return true;
    *p = c;
  }
}

/* Every directory above the cache (after resolving symlinks) must belong to us or root and not be writable by
 * others unless sticky: else another user could rename our directory away and put theirs in its place. */
static bool parents_safe(const char *real) {
  char buf[PATH_MAX];
  snprintf(buf, sizeof buf, "%s", real);
  uid_t me = geteuid();
  for (char *slash = strrchr(buf, '/'); slash; slash = strrchr(buf, '/')) {
    *slash = 0;
    const char *d = buf[0] ? buf : "/";
    struct stat st;
    if (stat(d, &st) != 0) {
      skip("stat(%s): %s", d, strerror(errno));
      return false;
    }
    if (st.st_uid != me && st.st_uid != 0) {
      skip("%s (above the cache) belongs to another user (uid %u)", d, (unsigned)st.st_uid);
      return false;
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
      skip("%s (above the cache) is writable by other users (mode %03o)", d, (unsigned)(st.st_mode & 0777));
      return false;
    }
  }
  return true;
}

/* Open a small file in the cache without following a symlink or blocking on a FIFO; it must be a regular file
 * of ours, not writable by others. Returns the fd, or -1 with errno (ENOENT: absent) and *why set. */
static int open_own_file(int dfd, const char *name, struct stat *st, const char **why) {
  *why = NULL;
  int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP) *why = "a symlink";
    return -1;
  }
  if (fstat(fd, st) != 0) *why = "cannot be inspected";
  else if (!S_ISREG(st->st_mode)) *why = hcq_file_kind(st->st_mode);
  else if (st->st_uid != geteuid()) *why = "owned by another user";
  else if (st->st_mode & (S_IWGRP | S_IWOTH)) *why = "writable by other users";
  if (*why) {
    close(fd);
    errno = EPERM;
    return -1;
  }
  return fd;
}

/* A new file in the directory with a random name (O_EXCL, 0600); its name goes to name. */
static int create_temp(int dfd, const char *prefix, char name[64]) {
  for (int attempt = 0; attempt < 16; attempt++) {
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, 0) != sizeof r) r = cc_hash64(&attempt, sizeof attempt, (uint64_t)getpid());
    snprintf(name, 64, "%s%016llx", prefix, (unsigned long long)r);
    int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

/* The per-user secret: read it, or create it atomically (written under a temp name, then linked to `key`, which
 * fails if another process was first; then theirs is read). */
static bool load_secret(int dfd, const char *dir, uint8_t secret[SECRET_B]) {
  for (int attempt = 0; attempt < 2; attempt++) {
    struct stat st;
    const char *why;
    int fd = open_own_file(dfd, "key", &st, &why);
    if (fd >= 0) {
      uint8_t extra;
      bool ok = (st.st_mode & 077) == 0 && st.st_size == SECRET_B && hcq_read_up_to(fd, secret, SECRET_B) == SECRET_B &&
                read(fd, &extra, 1) == 0;
      close(fd);
      if (!ok) skip("%s/key: not a %d-byte file readable only by its owner", dir, SECRET_B);
      return ok;
    }
    if (why || errno != ENOENT) {
      skip("%s/key: %s", dir, why ? why : strerror(errno));
      return false;
    }
    uint8_t fresh[SECRET_B];
    if (getrandom(fresh, sizeof fresh, 0) != (ssize_t)sizeof fresh) {
      skip("getrandom: %s", strerror(errno));
      return false;
    }
    char tmp[64];
    fd = create_temp(dfd, ".key-", tmp);
    if (fd < 0) {
      skip("creating a key in %s: %s", dir, strerror(errno));
      return false;
    }
    bool ok = hcq_write_all(fd, fresh, sizeof fresh);
    ok &= close(fd) == 0;
    int link_err = ok && linkat(dfd, tmp, dfd, "key", 0) != 0 ? errno : 0;
    unlinkat(dfd, tmp, 0);
    if (!ok || (link_err && link_err != EEXIST)) {
      skip("creating %s/key: %s", dir, strerror(ok ? link_err : errno));
      return false;
    }
    if (!link_err) {
      memcpy(secret, fresh, sizeof fresh);
      return true;
    }
  }
  skip("%s/key: cannot be read back", dir);
  return false;
}

typedef struct cache_dir {
  int fd;
  char path[PATH_MAX];
  uint8_t secret[SECRET_B];
} cache_dir;

/* Open the cache directory, checked. false: disabled, or skipped with the warning already given. */
static bool cache_open(cache_dir *c) {
  char *dir = NULL;
  bool disabled = false;
  hcq_status st = cc_cache_dir(&dir, &disabled);
  if (st || disabled) {
    if (st) skip("%s", hcq_status_message(st));
    hcq_status_free(st);
    return false;
  }
  bool ok = mkdirs(dir);
  if (ok && !realpath(dir, c->path)) ok = false, skip("realpath(%s): %s", dir, strerror(errno));
  free(dir);
  if (!ok || !parents_safe(c->path)) return false;
  c->fd = open(c->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (c->fd < 0) {
    skip("open(%s): %s", c->path, strerror(errno));
    return false;
  }
  struct stat sd;
  const char *why = NULL;
  if (fstat(c->fd, &sd) != 0) why = strerror(errno);
  else if (sd.st_uid != geteuid()) why = "it belongs to another user";
  else if (sd.st_mode & (S_IWGRP | S_IWOTH)) why = "it is writable by other users (chmod 700 it)";
  if (why) skip("%s: %s", c->path, why);
  if (why || !load_secret(c->fd, c->path, c->secret)) {
    close(c->fd);
    return false;
  }
  return true;
}

/* ------------------------------------------------------------------------------------------------ entries */

static void put_u32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static void put_u64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i)); }
static uint32_t get_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
  return v;
}
static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static void entry_mac(const uint8_t secret[SECRET_B], const char *key, size_t key_len, const uint8_t *data,
                      size_t size_B, uint8_t out[16]) {
  cc_siphash s;
  uint8_t len[8];
  put_u64(len, key_len);
  cc_siphash_init(&s, secret);
  cc_siphash_add(&s, len, sizeof len);
  cc_siphash_add(&s, key, key_len);
  cc_siphash_add(&s, data, size_B);
  cc_siphash_finish(&s, out);
}

/* Constant time, so a timing side channel does not reveal how much of a forged tag was right. */
static bool tags_equal(const uint8_t *a, const uint8_t *b) {
  uint8_t d = 0;
  for (int i = 0; i < 16; i++) d |= (uint8_t)(a[i] ^ b[i]);
  return d == 0;
}

hcq_status cc_cache_load(const char *key, size_t key_len, uint8_t **out_data, size_t *out_size_B, bool *out_found) {
  *out_data = NULL;
  *out_size_B = 0;
  *out_found = false;
  cache_dir c;
  if (!cache_open(&c)) return HCQ_OK;
  char name[40];
  entry_name(key, key_len, name);
  struct stat st;
  const char *why;
  int fd = open_own_file(c.fd, name, &st, &why);
  if (why) skip("%s/%s is %s: not loaded", c.path, name, why);
  close(c.fd);
  uint8_t *buf = NULL;
  size_t size = 0;
  bool ok = false;
  if (fd >= 0) {
    if (st.st_size >= HEADER_B && st.st_size <= CACHE_MAX_ENTRY_B) {
      size = (size_t)st.st_size;
      buf = malloc(size + 1);
      ok = buf && hcq_read_up_to(fd, buf, size) == (ssize_t)size && read(fd, buf + size, 1) == 0; /* exactly st_size bytes */
    }
    close(fd);
  }
  uint8_t tag[16];
  if (ok) entry_mac(c.secret, key, key_len, buf + HEADER_B, size - HEADER_B, tag);
  ok = ok && memcmp(buf, CACHE_MAGIC, 4) == 0 && get_u32(buf + 4) == CACHE_FORMAT &&
       get_u64(buf + 8) == size - HEADER_B && tags_equal(buf + 16, tag);
  if (!ok) {
    free(buf);
    if (fd >= 0 || why) bump(&stats.corrupt); /* present but unusable: rebuilt and replaced */
    bump(&stats.misses);
    return HCQ_OK;
  }
  memmove(buf, buf + HEADER_B, size - HEADER_B);
  *out_data = buf;
  *out_size_B = size - HEADER_B;
  *out_found = true;
  bump(&stats.hits);
  return HCQ_OK;
}

/* Temp files of stores and key creations that were killed before their rename/link (older than an hour, so not
 * another process's work in progress): removed once per process, on its first store. */
static void sweep_stale(int dfd) {
  int fd2 = dup(dfd);
  DIR *d = fd2 >= 0 ? fdopendir(fd2) : NULL;
  if (!d) {
    if (fd2 >= 0) close(fd2);
    return;
  }
  time_t now = time(NULL);
  for (struct dirent *e; (e = readdir(d));) {
    struct stat st;
    if ((strncmp(e->d_name, ".tmp-", 5) && strncmp(e->d_name, ".key-", 5)) ||
        fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;
    if (S_ISREG(st.st_mode) && st.st_uid == geteuid() && now - st.st_mtime > 3600) unlinkat(dfd, e->d_name, 0);
  }
  closedir(d);
}

hcq_status cc_cache_store(const char *key, size_t key_len, const uint8_t *data, size_t size_B) {
  cache_dir c;
  if (!cache_open(&c)) return HCQ_OK;
  if (!atomic_exchange(&swept, true)) sweep_stale(c.fd);
  char name[40], tmp[64];
  entry_name(key, key_len, name);
  int fd = create_temp(c.fd, ".tmp-", tmp);
  if (fd < 0) {
    skip("creating a file in %s: %s", c.path, strerror(errno));
    close(c.fd);
    return HCQ_OK;
  }
  uint8_t hdr[HEADER_B];
  memcpy(hdr, CACHE_MAGIC, 4);
  put_u32(hdr + 4, CACHE_FORMAT);
  put_u64(hdr + 8, size_B);
  entry_mac(c.secret, key, key_len, data, size_B, hdr + 16);
  bool ok = hcq_write_all(fd, hdr, HEADER_B) && hcq_write_all(fd, data, size_B);
  ok &= close(fd) == 0;
  if (ok && renameat(c.fd, tmp, c.fd, name) != 0) ok = false;
  if (!ok) {
    skip("writing %s/%s: %s", c.path, name, strerror(errno));
    unlinkat(c.fd, tmp, 0);
  } else {
    bump(&stats.writes);
  }
  close(c.fd);
  return HCQ_OK;
}
