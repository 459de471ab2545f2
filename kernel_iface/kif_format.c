/* Text forms used by the tracer and error messages: _IOC decomposition, hex dumps, decoded ioctl arguments,
 * errno names. */
#include "kernel_iface/kif.h"
#include "kernel_iface/kif_internal.h"

#include <errno.h>
#include <linux/ioctl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void kif_format_ioc(unsigned long request, char *out, size_t out_size_B) {
  static const char *const dirs[4] = {"NONE", "W", "R", "RW"};
  unsigned int req = (unsigned int)request;
  unsigned int dir = _IOC_DIR(req) & 3u, type = _IOC_TYPE(req), nr = _IOC_NR(req), size = _IOC_SIZE(req);
  char type_text[8];
  if (type >= 0x21 && type < 0x7f && type != '\'' && type != '\\')
    snprintf(type_text, sizeof type_text, "'%c'", (char)type);
  else
    snprintf(type_text, sizeof type_text, "0x%02x", type);
  snprintf(out, out_size_B, "_IOC(%s,%s,0x%02x,%u)", dirs[dir], type_text, nr, size);
}

size_t kif_ioc_arg_size(unsigned long request) {
  unsigned int req = (unsigned int)request;
  if ((uint64_t)request >> 32) return 0; /* not a 32-bit ioctl number at all (unsigned long may be 32 bits) */
  return _IOC_DIR(req) == _IOC_NONE ? 0 : _IOC_SIZE(req);
}

void kif_format_hex(const void *data, size_t size_B, size_t max_B, char *out, size_t out_size_B) {
  if (out_size_B == 0) return;
  size_t shown = size_B < max_B ? size_B : max_B;
  size_t len = (size_t)snprintf(out, out_size_B, "raw[%zu]=", size_B);
  const unsigned char *bytes = data;
  for (size_t i = 0; i < shown && len + 4 < out_size_B; i++) {
    if (i && i % 4 == 0) out[len++] = ' ';
    len += (size_t)snprintf(out + len, out_size_B - len, "%02x", bytes[i]);
  }
  if (shown < size_B && len + 4 < out_size_B) {
    memcpy(out + len, "...", 4);
    len += 3;
  }
  if (len >= out_size_B) len = out_size_B - 1;
  out[len] = '\0';
}

const kif_ioctl_desc *kif_find_desc(const kif_ioctl_table *const *tables, size_t table_count, const char *path,
                                    unsigned long request) {
  const kif_ioctl_desc *best = NULL;
  size_t best_len = 0;
  for (size_t t = 0; t < table_count; t++) {
    const kif_ioctl_table *table = tables[t];
    if (!table || !table->path_prefix || !path) continue;
    size_t n = strlen(table->path_prefix);
    if (strncmp(path, table->path_prefix, n) != 0 || (best && n <= best_len)) continue;
    for (size_t i = 0; i < table->count; i++) {
      if (table->descs[i].request == request) {
        best = &table->descs[i];
        best_len = n;
        break;
      }
    }
  }
  return best;
}

void kif_format_arg(const kif_ioctl_desc *desc, unsigned long request, const void *arg, char *out,
                    size_t out_size_B) {
  if (out_size_B == 0) return;
  out[0] = '\0';
  if (!arg) {
    snprintf(out, out_size_B, "arg=NULL");
    return;
  }
  size_t size_B = desc && desc->arg_size_B ? desc->arg_size_B : kif_ioc_arg_size(request);
  if (desc && desc->decode && size_B) {
    int len = snprintf(out, out_size_B, "%s{", desc->struct_name ? desc->struct_name : "");
    if (len < 0 || (size_t)len + 2 >= out_size_B) return;
    size_t n = desc->decode(arg, size_B, out + len, out_size_B - (size_t)len - 1);
    if (n > out_size_B - (size_t)len - 2) n = out_size_B - (size_t)len - 2;
    len += (int)n;
    out[len++] = '}';
    out[len] = '\0';
    return;
  }
  if (size_B) {
    kif_format_hex(arg, size_B, 64, out, out_size_B);
    return;
  }
  snprintf(out, out_size_B, "arg=?");
}

const char *kif_errno_name(int err) {
  switch (err) {
#define N(e) case e: return #e;
    N(EPERM) N(ENOENT) N(ESRCH) N(EINTR) N(EIO) N(ENXIO) N(E2BIG) N(ENOEXEC) N(EBADF) N(ECHILD) N(EAGAIN)
    N(ENOMEM) N(EACCES) N(EFAULT) N(EBUSY) N(EEXIST) N(EXDEV) N(ENODEV) N(ENOTDIR) N(EISDIR) N(EINVAL)
    N(ENFILE) N(EMFILE) N(ENOTTY) N(ETXTBSY) N(EFBIG) N(ENOSPC) N(ESPIPE) N(EROFS) N(EMLINK) N(EPIPE)
    N(EDOM) N(ERANGE) N(EDEADLK) N(ENAMETOOLONG) N(ENOLCK) N(ENOSYS) N(ENOTEMPTY) N(ELOOP) N(ENODATA)
    N(ETIME) N(EOVERFLOW) N(EOPNOTSUPP) N(ETIMEDOUT) N(ECANCELED) N(EPROTO) N(EBADMSG)
#undef N
  }
  return NULL;
}
