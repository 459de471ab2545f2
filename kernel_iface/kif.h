/* kernel_iface: the one door to the OS. Drivers (amd/, nv/) make every open, close, ioctl, mmap, munmap,
 * small-file read/write (sysfs), readlink, listdir, existence check, eventfd and doorbell/MMIO store through a
 * `kif` context. A context routes each call either to the real backend (syscalls) or to a registered mock
 * backend that claims a path prefix (the emulated KFD / NV drivers). It can trace every call (HCQ_TRACE=1) and
 * inject faults for tests. See kernel_iface/README.md for the design and the trace line format.
 *
 * Errors: every fallible call returns hcq_status. Messages name the call, the path / fd / ioctl and end with
 * "(errno=N ENAME: text)"; kif_status_errno() recovers N. errno maps to the code: ENOENT/ENODEV/ENXIO ->
 * NOT_FOUND, ENOMEM -> NOMEM, ENOTTY/ENOSYS/EOPNOTSUPP -> UNSUPPORTED, ETIMEDOUT -> TIMEOUT, the rest -> IO.
 *
 * Thread safety: all calls may be made from several threads; the context's tables are locked internally and no
 * lock is held while a backend runs (a mock may call back into kif). Closing an fd while another thread still
 * uses it is the caller's bug, as with the OS. */
#ifndef HCQ_KIF_H
#define HCQ_KIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/status.h"
#include "kernel_iface/ioctl_desc.h"

typedef struct kif kif;
typedef struct kif_backend kif_backend; /* see kif_backend.h */

/* ---- context ---------------------------------------------------------------------------------------------- */

/* A context with only the real backend. Reads HCQ_TRACE: "1" traces to stderr. */
hcq_status kif_create(kif **out_kif);
/* Closes every file still open through it (calling its backend's close), forgets mappings. NULL is a no-op.
 * Mock backends are not owned: they must outlive the context or be unregistered first. */
void kif_destroy(kif *k);

/* Process-wide default context (the one hidden global DESIGN.md allows): created on first use with the real
 * backend; kif_set_default replaces it (the caller keeps ownership of what it sets; NULL restores the built-in
 * one). Drivers take a kif* explicitly; the default is for code that was not handed one. */
kif *kif_default(void);
void kif_set_default(kif *k);

/* ---- mock backends ---------------------------------------------------------------------------------------- */

/* Route paths under each prefix to `backend`. Prefixes are absolute and match whole path components:
 * "/dev/nvidia0" claims "/dev/nvidia0" and "/dev/nvidia0/x" but not "/dev/nvidia01"; a trailing '/' is
 * ignored. The longest claiming prefix wins. A prefix already claimed is an error. */
hcq_status kif_register(kif *k, kif_backend *backend, const char *const *prefixes, size_t prefix_count);
/* Drop every prefix of `backend`. Fails (and changes nothing) while files opened through it are still open. */
hcq_status kif_unregister(kif *k, kif_backend *backend);
/* Which backend a path routes to (NULL = real). For tests and diagnostics. */
kif_backend *kif_route(kif *k, const char *path);

/* ---- files and ioctls ------------------------------------------------------------------------------------- */

/* flags are O_* from <fcntl.h>; with O_CREAT the mode is 0644. Mock fds are real placeholder fds (dups of an
 * eventfd, preferring numbers >= 512) so they can never collide with fds the OS hands out. */
hcq_status kif_open(kif *k, const char *path, int flags, int *out_fd);
hcq_status kif_close(kif *k, int fd);
/* The path an fd was opened with ("[eventfd]" for eventfds), or NULL if kif does not know the fd. The string
 * lives until the fd is closed. */
const char *kif_fd_path(kif *k, int fd);
/* An ioctl returning -1 (or a mock answering an errno) is an error naming the request (by name when a trace
 * table knows it) and the fd's path. fds not opened through kif go to the real backend. */
hcq_status kif_ioctl(kif *k, int fd, unsigned long request, void *arg);
/* read(2)/write(2) on an open fd (eventfds, device files). */
hcq_status kif_read(kif *k, int fd, void *buf, size_t size_B, size_t *out_read_B);
hcq_status kif_write(kif *k, int fd, const void *buf, size_t size_B, size_t *out_written_B);
/* eventfd(2); always real. The fd is closed with kif_close. */
hcq_status kif_eventfd(kif *k, unsigned int initval, int flags, int *out_fd);

/* ---- memory mappings -------------------------------------------------------------------------------------- */

/* mmap(2). fd -1 is an anonymous mapping (always real). A mapping of a mock fd is made by the mock and is
 * remembered, so kif_mmio_write* on it reaches the mock and kif_munmap routes back to it. */
hcq_status kif_mmap(kif *k, void *addr, size_t size_B, int prot, int flags, int fd, uint64_t offset,
                    void **out_addr);
hcq_status kif_munmap(kif *k, void *addr, size_t size_B);

/* Doorbell / MMIO stores. Always a volatile store of the given width at addr; when addr lies in a mapping made
 * by a mock, the mock's mmio_write hook then runs (synchronously, in this thread) and its error is returned.
 * With no mock mappings and tracing off this is a plain store plus two relaxed loads. */
hcq_status kif_mmio_write32(kif *k, volatile void *addr, uint32_t value);
hcq_status kif_mmio_write64(kif *k, volatile void *addr, uint64_t value);
/* Wall time (ns, all threads) spent in MMIO stores that took the slow path (a mock's hook, tracing, faults) since
 * the context was created: what a benchmark subtracts to leave the driver's own cost (a real doorbell is a store). */
uint64_t kif_slow_mmio_ns(kif *k);

/* ---- paths (sysfs and friends) ---------------------------------------------------------------------------- */

/* Whole small file, NUL-terminated for convenience (the NUL is not counted in *out_size_B). Caller free()s
 * *out_data. Files over 16 MiB are refused. */
hcq_status kif_read_file(kif *k, const char *path, char **out_data, size_t *out_size_B);
/* Write (create or truncate, mode 0644) a small file. */
hcq_status kif_write_file(kif *k, const char *path, const void *data, size_t size_B);
/* Caller free()s *out_target. */
hcq_status kif_readlink(kif *k, const char *path, char **out_target);

typedef struct kif_dirlist {
  char **names; /* sorted by strcmp, without "." and ".." */
  size_t count;
  size_t capacity;
} kif_dirlist;
/* *out_list must be zero-initialised or freed; it is overwritten. Free with kif_dirlist_free. */
hcq_status kif_listdir(kif *k, const char *path, kif_dirlist *out_list);
void kif_dirlist_free(kif_dirlist *list);
/* Never fails: false when the path does not exist (or the mock does not answer exists). */
bool kif_exists(kif *k, const char *path);

/* ---- errors ----------------------------------------------------------------------------------------------- */

/* The errno a kif status carries ("errno=N" in its message, last occurrence), or 0. */
int kif_status_errno(hcq_status st);
/* "ENOENT", or NULL for numbers we do not name. */
const char *kif_errno_name(int err);

/* ---- tracing ---------------------------------------------------------------------------------------------- */

/* Route trace lines to `out` (NULL = off). One line per event, flushed; format in README.md. */
void kif_trace_set_output(kif *k, FILE *out);
/* Ioctl names and decoders, for traces and error messages. A driver registers its own tables (autogen's, e.g.
 * autogen_register_decoders) on the context it uses; kernel_iface knows no driver. A table replaces a registered
 * one with the same path_prefix (a driver that learns the NV branch swaps in that branch's UVM table). The table
 * must outlive the context or its replacement. For an fd, tables whose path_prefix is a string prefix of the fd's
 * path are searched longest prefix first. */
hcq_status kif_register_decoder(kif *k, const kif_ioctl_table *table);
/* Forget every registered table. */
void kif_clear_decoders(kif *k);
/* Print durations as "0us" (deterministic traces, for golden tests). */
void kif_trace_set_fixed_durations(kif *k, bool fixed);

/* ---- fault injection (tests) ------------------------------------------------------------------------------ */

typedef enum kif_op {
  KIF_OP_ANY = 0,
  KIF_OP_OPEN,
  KIF_OP_CLOSE,
  KIF_OP_IOCTL,
  KIF_OP_READ,
  KIF_OP_WRITE,
  KIF_OP_EVENTFD,
  KIF_OP_MMAP,
  KIF_OP_MUNMAP,
  KIF_OP_MMIO_WRITE,
  KIF_OP_READ_FILE,
  KIF_OP_WRITE_FILE,
  KIF_OP_READLINK,
  KIF_OP_LISTDIR,
  KIF_OP_COUNT_
} kif_op;
const char *kif_op_name(kif_op op);

/* A rule: calls matching op (ANY = every fallible op), request (only if match_request; implies ioctl) and
 * path_prefix (whole components, on the path or the fd's path; NULL = any) fail with err instead of running.
 * nth = 0 fails every matching call; nth = N fails only the Nth matching call counted from when the rule was
 * added (1-based). An injected close still closes the fd. exists() is never faulted. */
typedef struct kif_fault {
  kif_op op;
  bool match_request;
  unsigned long request;
  const char *path_prefix; /* copied */
  uint64_t nth;
  int err;
} kif_fault;
hcq_status kif_fault_add(kif *k, const kif_fault *fault);
void kif_fault_reset(kif *k);
/* Shorthands: the Nth fallible call from now; every call of one ioctl request; every call on a path prefix. */
hcq_status kif_fault_nth_call(kif *k, uint64_t nth, int err);
hcq_status kif_fault_ioctl(kif *k, unsigned long request, int err);
hcq_status kif_fault_path(kif *k, const char *path_prefix, int err);

#endif
