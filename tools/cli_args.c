/* Strict numeric flags and bounded input reads for the verbs (see cli_args.h). */
#include "tools/cli_args.h"
#include "base/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool cli_parse_int(const char *verb, const char *flag, const char *text, long long min, long long max,
                   long long *out) {
  char *end = NULL;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  bool is_int = text[0] && end != text && !*end && text[0] != ' ' && text[0] != '\t' && text[0] != '+';
  if (is_int && errno != ERANGE && v >= min && v <= max) {
    *out = v;
    return true;
  }
  if (!is_int) fprintf(stderr, "%s: %s: '%s' is not an integer (accepted: %lld to %lld)\n", verb, flag, text, min, max);
  else fprintf(stderr, "%s: %s %s is out of range (accepted: %lld to %lld)\n", verb, flag, text, min, max);
  return false;
}

bool cli_missing_value(const char *verb, const char *flag, bool has_value) {
  if (has_value) return false;
  fprintf(stderr, "%s: %s needs a value\n", verb, flag);
  return true;
}

/* Open for reading; refuses what cannot be a byte stream. *out_regular tells whether st_size is meaningful. */
static hcq_status open_input(const char *what, const char *path, int *out_fd, struct stat *st) {
  const char *sep = what[0] ? ": " : "";
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return hcq_status_make(HCQ_CODE_IO, "%s%scannot open %s: %s", what, sep, path, strerror(errno));
  if (fstat(fd, st) != 0) {
    hcq_status s = hcq_status_make(HCQ_CODE_IO, "%s%scannot inspect %s: %s", what, sep, path, strerror(errno));
    close(fd);
    return s;
  }
  if (S_ISDIR(st->st_mode) || S_ISSOCK(st->st_mode)) {
    close(fd);
    return hcq_status_make(HCQ_CODE_INVALID, "%s%s%s is %s, not a file", what, sep, path, hcq_file_kind(st->st_mode));
  }
  *out_fd = fd;
  return HCQ_OK;
}

hcq_status cli_read_exact(const char *what, const char *path, void *dst, size_t size_B) {
  int fd = -1;
  struct stat st;
  HCQ_TRY(open_input(what, path, &fd, &st));
  hcq_status s = HCQ_OK;
  if (S_ISREG(st.st_mode) && (uint64_t)st.st_size != size_B) {
    s = hcq_status_make(HCQ_CODE_INVALID, "%s: the file has %lld bytes, the buffer holds %zu", what,
                        (long long)st.st_size, size_B);
  } else {
    ssize_t got = hcq_read_up_to(fd, dst, size_B);
    uint8_t extra;
    ssize_t more = got == (ssize_t)size_B ? hcq_read_up_to(fd, &extra, 1) : 0;
    if (got < 0 || more < 0) s = hcq_status_make(HCQ_CODE_IO, "%s: reading %s: %s", what, path, strerror(errno));
    else if ((size_t)got < size_B)
      s = hcq_status_make(HCQ_CODE_INVALID, "%s: %s ends after %zd bytes, the buffer holds %zu", what, path, got,
                          size_B);
    else if (more)
      s = hcq_status_make(HCQ_CODE_INVALID, "%s: %s (%s) gives more than the buffer's %zu bytes", what, path,
                          hcq_file_kind(st.st_mode), size_B);
  }
  close(fd);
  return s;
}

hcq_status cli_read_file(const char *path, size_t max_B, uint8_t **out, size_t *out_size_B) {
  *out = NULL;
  *out_size_B = 0;
  int fd = -1;
  struct stat st;
  HCQ_TRY(open_input("", path, &fd, &st));
  if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max_B) {
    close(fd);
    return hcq_status_make(HCQ_CODE_INVALID, "%s: %lld bytes is more than the %zu accepted", path,
                           (long long)st.st_size, max_B);
  }
  size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536, len = 0;
  uint8_t *buf = malloc(cap + 1);
  hcq_status s = buf ? HCQ_OK : hcq_status_make(HCQ_CODE_NOMEM, "reading %s: out of memory", path);
  while (!s) {
    if (len == cap) {
      if (cap > max_B) break;
      uint8_t *p = realloc(buf, cap * 2 + 1);
      if (!p) s = hcq_status_make(HCQ_CODE_NOMEM, "reading %s: out of memory", path);
      else buf = p, cap *= 2;
      continue;
    }
    ssize_t r = hcq_read_up_to(fd, buf + len, cap - len);
    if (r < 0) s = hcq_status_make(HCQ_CODE_IO, "reading %s: %s", path, strerror(errno));
    else if (r == 0) break;
    else len += (size_t)r;
  }
  close(fd);
  if (!s && len > max_B)
    s = hcq_status_make(HCQ_CODE_INVALID, "%s (%s) gives more than the %zu bytes accepted", path,
                        hcq_file_kind(st.st_mode), max_B);
  if (s) {
    free(buf);
    return s;
  }
  buf[len] = 0;
  *out = buf;
  *out_size_B = len;
  return HCQ_OK;
}
