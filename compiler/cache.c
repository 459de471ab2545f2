/* On-disk compile cache (see toolchain.h). An entry is one file named by a 128-bit key hash:
 *   header: magic "HCQC" | u32 format version | u64 payload length | u64 payload checksum | u64 key checksum
 *   payload bytes
 * Writes go to a temp file in the same directory that is then renamed over the entry (atomic on POSIX). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/toolchain.h"

#define CACHE_MAGIC "HCQC"
#define CACHE_FORMAT 1u
#define HEADER_B 32

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static cc_cache_stats stats;

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

static hcq_status mkdirs(const char *path) {
  char buf[4096];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) return hcq_status_make(HCQ_CODE_IO, "mkdir(%s): %s", buf, strerror(errno));
    *p = '/';
  }
  if (mkdir(buf, 0755) != 0 && errno != EEXIST) return hcq_status_make(HCQ_CODE_IO, "mkdir(%s): %s", buf, strerror(errno));
  return HCQ_OK;
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

hcq_status cc_cache_path(const char *key, size_t key_len, char **out_path) {
  *out_path = NULL;
  char *dir = NULL;
  bool disabled = false;
  HCQ_TRY(cc_cache_dir(&dir, &disabled));
  if (disabled) return hcq_status_make(HCQ_CODE_NOT_FOUND, "cache disabled");
  char *path = NULL;
  int n = asprintf(&path, "%s/%016llx%016llx.o", dir, (unsigned long long)cc_hash64(key, key_len, 1),
                   (unsigned long long)cc_hash64(key, key_len, 2));
  free(dir);
  if (n < 0) return hcq_status_make(HCQ_CODE_NOMEM, "cache: out of memory");
  *out_path = path;
  return HCQ_OK;
}

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

hcq_status cc_cache_load(const char *key, size_t key_len, uint8_t **out_data, size_t *out_size_B, bool *out_found) {
  *out_data = NULL;
  *out_size_B = 0;
  *out_found = false;
  char *dir = NULL;
  bool disabled = false;
  HCQ_TRY(cc_cache_dir(&dir, &disabled));
  free(dir);
  if (disabled) return HCQ_OK;
  char *path = NULL;
  HCQ_TRY(cc_cache_path(key, key_len, &path));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  free(path);
  if (fd < 0) {
    bump(&stats.misses);
    return HCQ_OK; /* a miss (or unreadable: rebuilt and rewritten) */
  }
  struct stat stt;
  uint8_t *buf = NULL;
  size_t size = 0;
  if (fstat(fd, &stt) == 0 && stt.st_size >= HEADER_B && stt.st_size < ((off_t)1 << 31)) {
    size = (size_t)stt.st_size;
    buf = malloc(size);
    size_t got = 0;
    while (buf && got < size) {
      ssize_t r = read(fd, buf + got, size - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += (size_t)r;
    }
    if (got != size) size = 0;
  }
  close(fd);
  bool ok = buf && size >= HEADER_B && memcmp(buf, CACHE_MAGIC, 4) == 0 && get_u32(buf + 4) == CACHE_FORMAT &&
            get_u64(buf + 8) == size - HEADER_B &&
            get_u64(buf + 16) == cc_hash64(buf + HEADER_B, size - HEADER_B, 3) &&
            get_u64(buf + 24) == cc_hash64(key, key_len, 4);
  if (!ok) {
    free(buf);
    bump(&stats.corrupt);
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

hcq_status cc_cache_store(const char *key, size_t key_len, const uint8_t *data, size_t size_B) {
  char *dir = NULL;
  bool disabled = false;
  HCQ_TRY(cc_cache_dir(&dir, &disabled));
  if (disabled) return HCQ_OK;
  hcq_status st = mkdirs(dir);
  char *path = NULL, *tmp = NULL;
  if (!st) st = cc_cache_path(key, key_len, &path);
  if (!st && asprintf(&tmp, "%s/.tmp-XXXXXX", dir) < 0) {
    tmp = NULL;
    st = hcq_status_make(HCQ_CODE_NOMEM, "cache: out of memory");
  }
  free(dir);
  if (st) {
    free(path);
    free(tmp);
    return st;
  }
  int fd = mkstemp(tmp);
  if (fd < 0) {
    st = hcq_status_make(HCQ_CODE_IO, "cache: mkstemp(%s): %s", tmp, strerror(errno));
    free(path);
    free(tmp);
    return st;
  }
  uint8_t hdr[HEADER_B];
  memcpy(hdr, CACHE_MAGIC, 4);
  put_u32(hdr + 4, CACHE_FORMAT);
  put_u64(hdr + 8, size_B);
  put_u64(hdr + 16, cc_hash64(data, size_B, 3));
  put_u64(hdr + 24, cc_hash64(key, key_len, 4));
  bool ok = true;
  const uint8_t *parts[2] = {hdr, data};
  size_t lens[2] = {HEADER_B, size_B};
  for (int p = 0; p < 2 && ok; p++) {
    size_t off = 0;
    while (off < lens[p]) {
      ssize_t w = write(fd, parts[p] + off, lens[p] - off);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        ok = false;
        break;
      }
      off += (size_t)w;
    }
  }
  if (close(fd) != 0) ok = false;
  if (ok && rename(tmp, path) != 0) ok = false;
  if (!ok) {
    st = hcq_status_make(HCQ_CODE_IO, "cache: writing %s: %s", path, strerror(errno));
    unlink(tmp);
  } else {
    bump(&stats.writes);
  }
  free(path);
  free(tmp);
  return st;
}
