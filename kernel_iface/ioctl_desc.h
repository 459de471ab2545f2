/* Contract between autogen/ (which generates these tables), the drivers (which register them with
 * kif_register_decoder) and kernel_iface/ (whose tracer uses them).
 * Self-contained on purpose: autogen's generated decoders include only this and <stdint.h>/<stddef.h>. */
#ifndef HCQ_KIF_IOCTL_DESC_H
#define HCQ_KIF_IOCTL_DESC_H

#include <stddef.h>
#include <stdint.h>

/* Writes a one-line text form of the argument struct ("field=value field2=0x10 ...") into out, always
 * NUL-terminated, never more than out_size_B bytes. Returns the number of bytes written (excluding NUL). */
typedef size_t (*kif_decode_fn)(const void *arg, size_t arg_size_B, char *out, size_t out_size_B);

typedef struct kif_ioctl_desc {
  const char *name;        /* "AMDKFD_IOC_CREATE_QUEUE" */
  unsigned long request;   /* the full request code passed to ioctl() */
  const char *struct_name; /* "kfd_ioctl_create_queue_args", or NULL */
  size_t arg_size_B;       /* sizeof the argument struct (0 if none) */
  kif_decode_fn decode;    /* NULL: print raw hex */
} kif_ioctl_desc;

/* A table applies to file descriptors whose path starts with path_prefix ("/dev/kfd", "/dev/nvidia"). */
typedef struct kif_ioctl_table {
  const char *path_prefix;
  const kif_ioctl_desc *descs;
  size_t count;
} kif_ioctl_table;

#endif
