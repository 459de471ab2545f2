/* The calls drivers make through kif: each routes to a backend, checks fault rules, traces and reports. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "kernel_iface/kif_context.h"
#include "kernel_iface/kif_internal.h"

#define RESULT_MAX 64
#define ARG_TEXT_MAX 2048

static hcq_status bad_args(const char *fn) { return hcq_status_make(HCQ_CODE_INVALID, "%s: NULL argument", fn); }

static hcq_status path_too_long(const char *fn, const char *path) {
  return hcq_status_make(HCQ_CODE_INVALID, "%s: path too long (errno=%d ENAMETOOLONG): %.64s...", fn,
                         ENAMETOOLONG, path);
}

/* A mock's placeholder fd: a dup of the context's eventfd, numbered from 512 when the limit allows. */
static int placeholder_dup(kif *k) {
  int fd = fcntl(k->placeholder_fd, F_DUPFD_CLOEXEC, 512);
  if (fd < 0 && errno == EINVAL) fd = fcntl(k->placeholder_fd, F_DUPFD_CLOEXEC, 0);
  return fd < 0 ? -errno : fd;
}

/* ---- open / close ----------------------------------------------------------------------------------------- */

hcq_status kif_open(kif *k, const char *path, int flags, int *out_fd) {
  if (out_fd) *out_fd = -1;
  if (!k || !path || !out_fd) return bad_args("kif_open");
  char norm[PATH_MAX];
  if (!kif_path_normalize(path, norm, sizeof norm)) return path_too_long("kif_open", path);
  kif_lock_(k);
  kif_backend *b = kif_route_locked_(k, norm);
  kif_unlock_(k);
  kif_call c;
  kif_call_begin_(&c, k, KIF_OP_OPEN, b);
  snprintf(c.subject, sizeof c.subject, "%s flags=0x%x", norm, (unsigned)flags);
  int err = kif_call_fault_(&c, norm, false, 0);
  kif_open_file *of = NULL;
  if (!err) {
    of = calloc(1, sizeof *of);
    if (!of || !(of->path = strdup(norm))) err = ENOMEM;
  }
  if (!err) {
    of->file = (kif_file){.fd = -1, .path = of->path, .flags = flags};
    of->backend = b;
    of->refs = 1;
    if (kif_is_mock_(b)) {
      int fd = placeholder_dup(k);
      if (fd < 0) err = -fd;
      else of->file.fd = fd;
    }
    if (!err) err = b->vtable->open ? b->vtable->open(b, &of->file, c.detail) : kif_not_implemented_(&c, "open");
    if (!err && (err = kif_of_list_(k, of)) != 0 && b->vtable->close) b->vtable->close(b, &of->file);
    if (err && kif_is_mock_(b) && of->file.fd >= 0) close(of->file.fd);
  }
  if (err && of) {
    free(of->path);
    free(of);
  }
  char result[RESULT_MAX];
  snprintf(result, sizeof result, "ok fd=%d", err ? -1 : of->file.fd);
  if (!err) *out_fd = of->file.fd;
  return kif_call_end_(&c, err, NULL, result);
}

hcq_status kif_close(kif *k, int fd) {
  if (!k) return bad_args("kif_close");
  kif_open_file *of = NULL;
  bool known = kif_of_unlist_(k, fd, &of);
  kif_call c;
  kif_call_begin_(&c, k, KIF_OP_CLOSE, known ? of->backend : NULL);
  snprintf(c.subject, sizeof c.subject, "fd=%d %s", fd, known ? of->path : "?");
  int injected = kif_call_fault_(&c, known ? of->path : NULL, false, 0);
  int err = 0;
  if (!known) {
    err = close(fd) == 0 ? 0 : errno;
  } else if (kif_is_mock_(of->backend)) {
    close(fd); /* the placeholder; the mock's close runs when the last mapping of the file goes */
    err = kif_of_put_(k, of);
  } else {
    err = of->backend->vtable->close(of->backend, &of->file);
    of->backend_closed = true;
    kif_of_put_(k, of);
  }
  if (injected) err = injected; /* the fd is closed regardless, as close(2) does */
  else c.injected = false;
  return kif_call_end_(&c, err, NULL, NULL);
}

/* A kif_file for an fd kif did not open: the real backend works on the bare number. */
static kif_file stray_file(int fd) { return (kif_file){.fd = fd, .path = "?", .flags = 0, .data = NULL}; }

/* ---- ioctl ------------------------------------------------------------------------------------------------ */

hcq_status kif_ioctl(kif *k, int fd, unsigned long request, void *arg) {
  if (!k) return bad_args("kif_ioctl");
  kif_open_file *of = kif_of_get_(k, fd);
  kif_file stray = stray_file(fd);
  kif_file *file = of ? &of->file : &stray;
  kif_call c;
  kif_call_begin_(&c, k, KIF_OP_IOCTL, of ? of->backend : NULL);
  kif_lock_(k);
  const kif_ioctl_desc *desc = kif_find_desc(k->tables, k->table_count, file->path, request);
  kif_unlock_(k);
  char name[64];
  if (desc && desc->name) snprintf(name, sizeof name, "%s", desc->name);
  else kif_format_ioc(request, name, sizeof name);
  snprintf(c.subject, sizeof c.subject, "fd=%d %s %s req=0x%lx", fd, file->path, name, request);
  char arg_text[ARG_TEXT_MAX + 8];
  if (c.trace) {
    memcpy(arg_text, "in ", 3);
    kif_format_arg(desc, request, arg, arg_text + 3, ARG_TEXT_MAX);
    kif_call_trace_(&c, arg_text, 0, NULL);
  }
  int err = kif_call_fault_(&c, of ? of->path : NULL, true, request);
  if (!err) {
    kif_backend *b = c.backend;
    if (b->vtable->ioctl) {
      err = b->vtable->ioctl(b, file, request, arg, c.detail);
    } else {
      snprintf(c.detail, sizeof c.detail, "mock %s has no ioctls", b->name);
      err = ENOTTY;
    }
  }
  if (c.trace) {
    memcpy(arg_text, "out ", 4);
    kif_format_arg(desc, request, arg, arg_text + 4, ARG_TEXT_MAX);
  }
  kif_of_put_(k, of);
  return kif_call_end_(&c, err, c.trace ? arg_text : NULL, NULL);
}

/* ---- read / write / eventfd ------------------------------------------------------------------------------- */

static hcq_status read_or_write(kif *k, kif_op op, int fd, void *rbuf, const void *wbuf, size_t size_B,
                                size_t *out_B) {
  if (out_B) *out_B = 0;
  if (!k || !out_B || (!rbuf && !wbuf && size_B)) return bad_args(op == KIF_OP_READ ? "kif_read" : "kif_write");
  kif_open_file *of = kif_of_get_(k, fd);
  kif_file stray = stray_file(fd);
  kif_file *file = of ? &of->file : &stray;
  kif_call c;
  kif_call_begin_(&c, k, op, of ? of->backend : NULL);
  snprintf(c.subject, sizeof c.subject, "fd=%d %s size=%zu", fd, file->path, size_B);
  int err = kif_call_fault_(&c, of ? of->path : NULL, false, 0);
  kif_backend *b = c.backend;
  if (!err && op == KIF_OP_READ)
    err = b->vtable->read ? b->vtable->read(b, file, rbuf, size_B, out_B, c.detail) : kif_not_implemented_(&c, "read");
  else if (!err)
    err = b->vtable->write ? b->vtable->write(b, file, wbuf, size_B, out_B, c.detail)
                           : kif_not_implemented_(&c, "write");
  kif_of_put_(k, of);
  char result[RESULT_MAX];
  snprintf(result, sizeof result, "ok size=%zu", *out_B);
  return kif_call_end_(&c, err, NULL, result);
}

hcq_status kif_read(kif *k, int fd, void *buf, size_t size_B, size_t *out_read_B) {
  return read_or_write(k, KIF_OP_READ, fd, buf, NULL, size_B, out_read_B);
}

hcq_status kif_write(kif *k, int fd, const void *buf, size_t size_B, size_t *out_written_B) {
  return read_or_write(k, KIF_OP_WRITE, fd, NULL, buf, size_B, out_written_B);
}

hcq_status kif_eventfd(kif *k, unsigned int initval, int flags, int *out_fd) {
  if (out_fd) *out_fd = -1;
  if (!k || !out_fd) return bad_args("kif_eventfd");
  kif_call c;
  kif_call_begin_(&c, k, KIF_OP_EVENTFD, NULL);
  snprintf(c.subject, sizeof c.subject, "initval=%u flags=0x%x", initval, (unsigned)flags);
  int err = kif_call_fault_(&c, NULL, false, 0), fd = -1;
  kif_open_file *of = NULL;
  if (!err) {
    of = calloc(1, sizeof *of);
    if (!of || !(of->path = strdup("[eventfd]"))) err = ENOMEM;
  }
  if (!err && (fd = eventfd(initval, flags)) < 0) err = errno;
  if (!err) {
    of->file = (kif_file){.fd = fd, .path = of->path, .flags = flags};
    of->backend = kif_real_backend();
    of->refs = 1;
    if ((err = kif_of_list_(k, of)) != 0) close(fd);
  }
  if (err && of) {
    free(of->path);
    free(of);
  }
  char result[RESULT_MAX];
  snprintf(result, sizeof result, "ok fd=%d", fd);
  if (!err) *out_fd = fd;
  return kif_call_end_(&c, err, NULL, result);
}

/* ---- mmap / munmap / mmio --------------------------------------------------------------------------------- */

hcq_status kif_mmap(kif *k, void *addr, size_t size_B, int prot, int flags, int fd, uint64_t offset,
                    void **out_addr) {
  if (out_addr) *out_addr = NULL;
  if (!k || !out_addr) return bad_args("kif_mmap");
  kif_open_file *of = fd >= 0 ? kif_of_get_(k, fd) : NULL;
  kif_file stray = stray_file(fd);
  kif_file *file = fd < 0 ? NULL : of ? &of->file : &stray;
  kif_call c;
  kif_call_begin_(&c, k, KIF_OP_MMAP, of ? of->backend : NULL);
  int len = fd < 0 ? snprintf(c.subject, sizeof c.subject, "anon")
                   : snprintf(c.subject, sizeof c.subject, "fd=%d %s", fd, file->path);
  if (addr) len += snprintf(c.subject + len, sizeof c.subject - (size_t)len, " addr=%p", addr);
  snprintf(c.subject + len, sizeof c.subject - (size_t)len, " size=0x%zx prot=0x%x flags=0x%x offset=0x%llx",
           size_B, (unsigned)prot, (unsigned)flags, (unsigned long long)offset);
  int err = kif_call_fault_(&c, of ? of->path : NULL, false, 0);
  kif_backend *b = c.backend;
  void *p = NULL;
  if (!err)
    err = b->vtable->mmap ? b->vtable->mmap(b, file, addr, size_B, prot, flags, offset, &p, c.detail)
                          : kif_not_implemented_(&c, "mmap");
  bool keep_ref = false;
  if (!err && kif_is_mock_(b)) {
    /* Remember the mapping; it keeps a reference to the file (it outlives a close, as in the kernel). */
    kif_lock_(k);
    if (kif_grow_((void **)&k->maps, &k->map_cap, k->map_count + 1, sizeof *k->maps)) {
      k->maps[k->map_count++] = (kif_mapping){(uintptr_t)p, size_B, offset, of};
      keep_ref = true;
      kif_update_slow_mmio_locked_(k);
    } else {
      err = ENOMEM;
    }
    kif_unlock_(k);
    if (err && b->vtable->munmap) b->vtable->munmap(b, file, p, size_B);
  }
  if (!keep_ref) kif_of_put_(k, of);
  char result[RESULT_MAX];
  snprintf(result, sizeof result, "ok addr=%p", p);
  if (!err) *out_addr = p;
  return kif_call_end_(&c, err, NULL, result);
}

/* Index of the mock mapping holding [addr, addr+size_B), or -1. Caller holds the lock. */
static long find_mapping_locked(kif *k, uintptr_t addr, size_t size_B) {
  for (size_t i = 0; i < k->map_count; i++) {
    kif_mapping *m = &k->maps[i];
    if (addr >= m->start && addr - m->start < m->size_B && size_B <= m->size_B - (addr - m->start)) return (long)i;
  }
  return -1;
}

hcq_status kif_munmap(kif *k, void *addr, size_t size_B) {
  if (!k) return bad_args("kif_munmap");
  uintptr_t a = (uintptr_t)addr;
  kif_lock_(k);
  long idx = find_mapping_locked(k, a, size_B);
  kif_open_file *of = NULL;
  uint64_t map_offset = 0;
  if (idx >= 0) {
    of = k->maps[idx].of;
    of->refs++;
    map_offset = k->maps[idx].offset + (a - k->maps[idx].start);
  }
  kif_unlock_(k);
  kif_call c;
  kif_call_begin_(&c, k, KIF_OP_MUNMAP, of ? of->backend : NULL);
  int len = snprintf(c.subject, sizeof c.subject, "addr=%p size=0x%zx", addr, size_B);
  if (of)
    snprintf(c.subject + len, sizeof c.subject - (size_t)len, " map=%s+0x%llx", of->path,
             (unsigned long long)map_offset);
  int err = kif_call_fault_(&c, of ? of->path : NULL, false, 0);
  kif_backend *b = c.backend;
  if (!err && b->vtable->munmap) err = b->vtable->munmap(b, of ? &of->file : NULL, addr, size_B);
  kif_open_file *dropped = NULL;
  if (!err && of) {
    /* Forget the unmapped part: the whole record, or trim a head or tail; a hole in the middle keeps it. */
    kif_lock_(k);
    long i = find_mapping_locked(k, a, size_B);
    if (i >= 0) {
      kif_mapping *m = &k->maps[i];
      if (m->start == a && m->size_B == size_B) {
        dropped = m->of;
        k->maps[i] = k->maps[--k->map_count];
      } else if (m->start == a) {
        m->start += size_B, m->size_B -= size_B, m->offset += size_B;
      } else if (a + size_B == m->start + m->size_B) {
        m->size_B -= size_B;
      }
    }
    kif_update_slow_mmio_locked_(k);
    kif_unlock_(k);
  }
  kif_of_put_(k, of);
  kif_of_put_(k, dropped);
  return kif_call_end_(&c, err, NULL, NULL);
}

static hcq_status mmio_write_slow(kif *k, volatile void *addr, uint64_t value, unsigned width_B) {
  uintptr_t a = (uintptr_t)addr;
  kif_lock_(k);
  long idx = find_mapping_locked(k, a, width_B);
  kif_open_file *of = NULL;
  uint64_t offset = 0;
  if (idx >= 0) {
    of = k->maps[idx].of;
    of->refs++;
    offset = k->maps[idx].offset + (a - k->maps[idx].start);
  }
  kif_unlock_(k);
  kif_call c;
  kif_call_begin_(&c, k, KIF_OP_MMIO_WRITE, of ? of->backend : NULL);
  c.op_text = width_B == 4 ? "mmio32" : "mmio64";
  int err = kif_call_fault_(&c, of ? of->path : NULL, false, 0);
  if (!err) {
    if (width_B == 4) *(volatile uint32_t *)addr = (uint32_t)value;
    else *(volatile uint64_t *)addr = value;
    kif_backend *b = c.backend;
    if (of && b->vtable->mmio_write) err = b->vtable->mmio_write(b, &of->file, offset, value, width_B, c.detail);
  }
  /* the subject only for a trace line or an error: doorbells ring on every launch */
  if (c.trace || err) {
    if (of)
      snprintf(c.subject, sizeof c.subject, "%s+0x%llx value=0x%llx", of->path, (unsigned long long)offset,
               (unsigned long long)value);
    else
      snprintf(c.subject, sizeof c.subject, "addr=%p value=0x%llx", (void *)addr, (unsigned long long)value);
  }
  kif_of_put_(k, of);
  hcq_status st = kif_call_end_(&c, err, NULL, NULL);
  kif_account_slow_mmio_(&c);
  return st;
}

hcq_status kif_mmio_write32(kif *k, volatile void *addr, uint32_t value) {
  if (!k || !__atomic_load_n(&k->slow_mmio, __ATOMIC_RELAXED)) {
    *(volatile uint32_t *)addr = value;
    return HCQ_OK;
  }
  return mmio_write_slow(k, addr, value, 4);
}

hcq_status kif_mmio_write64(kif *k, volatile void *addr, uint64_t value) {
  if (!k || !__atomic_load_n(&k->slow_mmio, __ATOMIC_RELAXED)) {
    *(volatile uint64_t *)addr = value;
    return HCQ_OK;
  }
  return mmio_write_slow(k, addr, value, 8);
}

/* ---- path calls ------------------------------------------------------------------------------------------- */

/* Normalize, route and begin a path call. False (with *out_st) when the path is unusable. */
static bool path_call_begin(kif_call *c, kif *k, kif_op op, const char *path, char *norm, hcq_status *out_st) {
  if (!kif_path_normalize(path, norm, PATH_MAX)) {
    *out_st = path_too_long(kif_op_name(op), path);
    return false;
  }
  kif_lock_(k);
  kif_backend *b = kif_route_locked_(k, norm);
  kif_unlock_(k);
  kif_call_begin_(c, k, op, b);
  snprintf(c->subject, sizeof c->subject, "%s", norm);
  return true;
}

hcq_status kif_read_file(kif *k, const char *path, char **out_data, size_t *out_size_B) {
  if (out_data) *out_data = NULL;
  if (out_size_B) *out_size_B = 0;
  if (!k || !path || !out_data || !out_size_B) return bad_args("kif_read_file");
  kif_call c;
  char norm[PATH_MAX];
  hcq_status st;
  if (!path_call_begin(&c, k, KIF_OP_READ_FILE, path, norm, &st)) return st;
  int err = kif_call_fault_(&c, norm, false, 0);
  kif_backend *b = c.backend;
  char *data = NULL;
  size_t size_B = 0;
  if (!err)
    err = b->vtable->read_file ? b->vtable->read_file(b, norm, &data, &size_B, c.detail)
                               : kif_not_implemented_(&c, "read_file");
  if (!err) {
    char *terminated = realloc(data, size_B + 1);
    if (!terminated) err = ENOMEM;
    else (data = terminated)[size_B] = '\0';
  }
  if (err) free(data);
  char result[RESULT_MAX];
  snprintf(result, sizeof result, "ok size=%zu", size_B);
  if (!err) *out_data = data, *out_size_B = size_B;
  return kif_call_end_(&c, err, NULL, result);
}

hcq_status kif_write_file(kif *k, const char *path, const void *data, size_t size_B) {
  if (!k || !path || (!data && size_B)) return bad_args("kif_write_file");
  kif_call c;
  char norm[PATH_MAX];
  hcq_status st;
  if (!path_call_begin(&c, k, KIF_OP_WRITE_FILE, path, norm, &st)) return st;
  size_t len = strlen(c.subject);
  snprintf(c.subject + len, sizeof c.subject - len, " size=%zu", size_B);
  int err = kif_call_fault_(&c, norm, false, 0);
  kif_backend *b = c.backend;
  if (!err)
    err = b->vtable->write_file ? b->vtable->write_file(b, norm, data, size_B, c.detail)
                                : kif_not_implemented_(&c, "write_file");
  return kif_call_end_(&c, err, NULL, NULL);
}

hcq_status kif_readlink(kif *k, const char *path, char **out_target) {
  if (out_target) *out_target = NULL;
  if (!k || !path || !out_target) return bad_args("kif_readlink");
  kif_call c;
  char norm[PATH_MAX];
  hcq_status st;
  if (!path_call_begin(&c, k, KIF_OP_READLINK, path, norm, &st)) return st;
  int err = kif_call_fault_(&c, norm, false, 0);
  kif_backend *b = c.backend;
  char *target = NULL;
  if (!err)
    err = b->vtable->readlink ? b->vtable->readlink(b, norm, &target, c.detail) : kif_not_implemented_(&c, "readlink");
  char result[PATH_MAX + 16];
  snprintf(result, sizeof result, "ok target=%s", err ? "" : target);
  if (!err) *out_target = target;
  return kif_call_end_(&c, err, NULL, result);
}

static int compare_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

hcq_status kif_listdir(kif *k, const char *path, kif_dirlist *out_list) {
  if (out_list) memset(out_list, 0, sizeof *out_list);
  if (!k || !path || !out_list) return bad_args("kif_listdir");
  kif_call c;
  char norm[PATH_MAX];
  hcq_status st;
  if (!path_call_begin(&c, k, KIF_OP_LISTDIR, path, norm, &st)) return st;
  int err = kif_call_fault_(&c, norm, false, 0);
  kif_backend *b = c.backend;
  if (!err)
    err = b->vtable->listdir ? b->vtable->listdir(b, norm, out_list, c.detail) : kif_not_implemented_(&c, "listdir");
  if (err) kif_dirlist_free(out_list);
  else if (out_list->count > 1) qsort(out_list->names, out_list->count, sizeof *out_list->names, compare_names);
  char result[RESULT_MAX];
  snprintf(result, sizeof result, "ok count=%zu", out_list->count);
  return kif_call_end_(&c, err, NULL, result);
}

bool kif_exists(kif *k, const char *path) {
  if (!k || !path) return false;
  kif_call c;
  char norm[PATH_MAX];
  hcq_status st;
  if (!path_call_begin(&c, k, KIF_OP_ANY, path, norm, &st)) {
    hcq_status_free(st);
    return false;
  }
  c.op_text = "exists";
  kif_backend *b = c.backend;
  bool yes = b->vtable->exists && b->vtable->exists(b, norm);
  kif_call_trace_(&c, NULL, 0, yes ? "true" : "false");
  return yes;
}
