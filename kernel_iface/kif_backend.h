/* The backend vtable behind kif: what a mock driver (emulator_tests/) implements to answer the calls routed to
 * the path prefixes it claims with kif_register(). The real backend implements the same table with syscalls.
 *
 * Convention: every op returns 0 on success or a positive errno (ENOENT for an unknown path, ENOTTY for an
 * ioctl the mock does not implement). kif turns it into an hcq_status that names the op, path, fd and request.
 * Ops that take `detail` may write a one-line reason (at most KIF_DETAIL_MAX bytes, NUL-terminated) that kif
 * appends to the message ("unsupported RM class 0xc9c1"). A NULL op answers EOPNOTSUPP ("mock X does not
 * implement read_file"), except exists (false). Ops run without any kif lock held and may call kif again.
 *
 * Implementations embed kif_backend as their first member and cast `b` back to their own type. */
#ifndef HCQ_KIF_BACKEND_H
#define HCQ_KIF_BACKEND_H

#include "kernel_iface/kif.h"

#define KIF_DETAIL_MAX 160

/* An open file as a backend sees it. kif owns it; `data` belongs to the backend (set it in open). */
typedef struct kif_file {
  int fd;           /* the number the driver sees (for mocks: a placeholder fd) */
  const char *path; /* normalized path it was opened with */
  int flags;
  void *data;       /* backend-private: the real backend leaves it NULL */
} kif_file;

typedef struct kif_backend_vtable {
  int (*open)(kif_backend *b, kif_file *file, char *detail);
  int (*close)(kif_backend *b, kif_file *file);
  int (*ioctl)(kif_backend *b, kif_file *file, unsigned long request, void *arg, char *detail);
  int (*read)(kif_backend *b, kif_file *file, void *buf, size_t size_B, size_t *out_read_B, char *detail);
  int (*write)(kif_backend *b, kif_file *file, const void *buf, size_t size_B, size_t *out_written_B,
               char *detail);
  /* Must return host memory the driver can store to (for a doorbell page: the mock's own page). */
  int (*mmap)(kif_backend *b, kif_file *file, void *addr, size_t size_B, int prot, int flags, uint64_t offset,
              void **out_addr, char *detail);
  int (*munmap)(kif_backend *b, kif_file *file, void *addr, size_t size_B);
  /* A store of width_B (4 or 8) bytes has just been made at map offset + (addr - map start) of `file`. */
  int (*mmio_write)(kif_backend *b, kif_file *file, uint64_t offset, uint64_t value, unsigned width_B,
                    char *detail);
  /* *out_data must be malloc()ed; kif frees it (or hands it to the caller after NUL-terminating a copy). */
  int (*read_file)(kif_backend *b, const char *path, char **out_data, size_t *out_size_B, char *detail);
  int (*write_file)(kif_backend *b, const char *path, const void *data, size_t size_B, char *detail);
  int (*readlink)(kif_backend *b, const char *path, char **out_target, char *detail); /* malloc()ed */
  /* Fill `list` with kif_dirlist_add; order does not matter (kif sorts). */
  int (*listdir)(kif_backend *b, const char *path, kif_dirlist *list, char *detail);
  bool (*exists)(kif_backend *b, const char *path);
} kif_backend_vtable;

struct kif_backend {
  const kif_backend_vtable *vtable;
  const char *name; /* "amd-mock", shown in traces and errors */
};

/* Append a copy of name; returns ENOMEM or 0 (so a listdir op can `return kif_dirlist_add(...)`). */
int kif_dirlist_add(kif_dirlist *list, const char *name);

/* The real backend (syscalls). */
kif_backend *kif_real_backend(void);

#endif
