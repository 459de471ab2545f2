/* Helpers shared by the kernel_iface sources; not part of the public API. */
#ifndef HCQ_KIF_INTERNAL_H
#define HCQ_KIF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel_iface/ioctl_desc.h"

/* Absolute paths: collapse "//", drop "." and trailing '/', resolve ".." lexically (never above "/").
 * Relative paths are copied unchanged. False if the result does not fit in out_size_B. */
bool kif_path_normalize(const char *path, char *out, size_t out_size_B);
/* Whole-component prefix test on normalized paths: "/dev/nvidia0" is a prefix of "/dev/nvidia0" and
 * "/dev/nvidia0/x", not of "/dev/nvidia01". The prefix "/" matches every absolute path. */
bool kif_path_has_prefix(const char *path, const char *prefix);

/* "_IOC(RW,'K',0x02,88)" for a request number; always NUL-terminated. */
void kif_format_ioc(unsigned long request, char *out, size_t out_size_B);
/* "raw[N]=0a0b0c0d 01020304 ..." of at most max_B bytes ("..." after the cut). */
void kif_format_hex(const void *data, size_t size_B, size_t max_B, char *out, size_t out_size_B);
/* The argument size the _IOC encoding promises, or 0 when the number does not look _IOC-encoded with data. */
size_t kif_ioc_arg_size(unsigned long request);

/* The descriptor for `request` among tables whose path_prefix is a string prefix of `path`, longest first. */
const kif_ioctl_desc *kif_find_desc(const kif_ioctl_table *const *tables, size_t table_count, const char *path,
                                    unsigned long request);
/* The decoded argument: "struct{fields}" via the descriptor's decoder, else a hex dump, else "arg=?". */
void kif_format_arg(const kif_ioctl_desc *desc, unsigned long request, const void *arg, char *out,
                    size_t out_size_B);

#endif
