/* Lexical path normalization and whole-component prefix matching, used to route paths to mock backends. */
#include "kernel_iface/kif_internal.h"

#include <string.h>

bool kif_path_normalize(const char *path, char *out, size_t out_size_B) {
  if (!path || !out || out_size_B == 0) return false;
  if (path[0] != '/') {
    size_t n = strlen(path);
    if (n + 1 > out_size_B) return false;
    memcpy(out, path, n + 1);
    return true;
  }
  size_t len = 0; /* out holds "/a/b" without trailing slash; "" stands for the root while building */
  const char *p = path;
  while (*p) {
    while (*p == '/') p++;
    if (!*p) break;
    const char *end = p;
    while (*end && *end != '/') end++;
    size_t n = (size_t)(end - p);
    if (n == 1 && p[0] == '.') {
      /* skip */
    } else if (n == 2 && p[0] == '.' && p[1] == '.') {
      while (len > 0 && out[len - 1] != '/') len--;
      if (len > 0) len--; /* drop the '/' too */
    } else {
      if (len + 1 + n + 1 > out_size_B) return false;
      out[len++] = '/';
      memcpy(out + len, p, n);
      len += n;
    }
    p = end;
  }
  if (len == 0) {
    if (out_size_B < 2) return false;
    out[len++] = '/';
  }
  out[len] = '\0';
  return true;
}

bool kif_path_has_prefix(const char *path, const char *prefix) {
  if (!path || !prefix) return false;
  if (strcmp(prefix, "/") == 0) return path[0] == '/';
  size_t n = strlen(prefix);
  return strncmp(path, prefix, n) == 0 && (path[n] == '\0' || path[n] == '/');
}
