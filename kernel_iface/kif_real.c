/* The real backend: each op is the system call it names. Errors come back as errno values. */
#include "kernel_iface/kif_backend.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define KIF_READ_FILE_MAX_B ((size_t)16 << 20)

static int real_open(kif_backend *b, kif_file *file, char *detail) {
  (void)b, (void)detail;
  int fd = open(file->path, file->flags, 0644);
  if (fd < 0) return errno;
  file->fd = fd;
  return 0;
}

static int real_close(kif_backend *b, kif_file *file) {
  (void)b;
  return close(file->fd) == 0 ? 0 : errno;
}

static int real_ioctl(kif_backend *b, kif_file *file, unsigned long request, void *arg, char *detail) {
  (void)b, (void)detail;
  int ret;
  do ret = ioctl(file->fd, request, arg);
  while (ret == -1 && errno == EINTR);
  return ret == -1 ? errno : 0;
}

static int real_read(kif_backend *b, kif_file *file, void *buf, size_t size_B, size_t *out_read_B, char *detail) {
  (void)b, (void)detail;
  ssize_t n;
  do n = read(file->fd, buf, size_B);
  while (n < 0 && errno == EINTR);
  if (n < 0) return errno;
  *out_read_B = (size_t)n;
  return 0;
}

static int real_write(kif_backend *b, kif_file *file, const void *buf, size_t size_B, size_t *out_written_B,
                      char *detail) {
  (void)b, (void)detail;
  ssize_t n;
  do n = write(file->fd, buf, size_B);
  while (n < 0 && errno == EINTR);
  if (n < 0) return errno;
  *out_written_B = (size_t)n;
  return 0;
}

static int real_mmap(kif_backend *b, kif_file *file, void *addr, size_t size_B, int prot, int flags,
                     uint64_t offset, void **out_addr, char *detail) {
  (void)b, (void)detail;
  void *p = mmap(addr, size_B, prot, flags, file ? file->fd : -1, (off_t)offset);
  if (p == MAP_FAILED) return errno;
  *out_addr = p;
  return 0;
}

static int real_munmap(kif_backend *b, kif_file *file, void *addr, size_t size_B) {
  (void)b, (void)file;
  return munmap(addr, size_B) == 0 ? 0 : errno;
}

static int real_read_file(kif_backend *b, const char *path, char **out_data, size_t *out_size_B, char *detail) {
  (void)b;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  size_t cap = 4096, len = 0;
  char *data = malloc(cap);
  int err = data ? 0 : ENOMEM;
  while (!err) {
    if (len == cap) {
      if (cap >= KIF_READ_FILE_MAX_B) {
        snprintf(detail, KIF_DETAIL_MAX, "file larger than %zu bytes", KIF_READ_FILE_MAX_B);
        err = EFBIG;
        break;
      }
      char *grown = realloc(data, cap * 2);
      if (!grown) {
        err = ENOMEM;
        break;
      }
      data = grown;
      cap *= 2;
    }
    ssize_t n = read(fd, data + len, cap - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) err = errno;
    else if (n == 0) break;
    else len += (size_t)n;
  }
  close(fd);
  if (err) {
    free(data);
    return err;
  }
  *out_data = data;
  *out_size_B = len;
  return 0;
}

static int real_write_file(kif_backend *b, const char *path, const void *data, size_t size_B, char *detail) {
  (void)b;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  int err = 0;
  size_t done = 0;
  while (done < size_B) {
    ssize_t n = write(fd, (const char *)data + done, size_B - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      snprintf(detail, KIF_DETAIL_MAX, "after %zu of %zu bytes", done, size_B);
      break;
    }
    done += (size_t)n;
  }
  if (close(fd) != 0 && !err) err = errno;
  return err;
}

static int real_readlink(kif_backend *b, const char *path, char **out_target, char *detail) {
  (void)b, (void)detail;
  for (size_t cap = 256; cap <= ((size_t)1 << 20); cap *= 2) {
    char *buf = malloc(cap);
    if (!buf) return ENOMEM;
    ssize_t n = readlink(path, buf, cap);
    if (n < 0) {
      int err = errno;
      free(buf);
      return err;
    }
    if ((size_t)n < cap) {
      buf[n] = '\0';
      *out_target = buf;
      return 0;
    }
    free(buf); /* possibly truncated: retry bigger */
  }
  return ENAMETOOLONG;
}

static int real_listdir(kif_backend *b, const char *path, kif_dirlist *list, char *detail) {
  (void)b, (void)detail;
  DIR *dir = opendir(path);
  if (!dir) return errno;
  int err = 0;
  for (;;) {
    errno = 0;
    struct dirent *entry = readdir(dir);
    if (!entry) {
      err = errno;
      break;
    }
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
    if ((err = kif_dirlist_add(list, entry->d_name))) break;
  }
  closedir(dir);
  return err;
}

static bool real_exists(kif_backend *b, const char *path) {
  (void)b;
  return access(path, F_OK) == 0;
}

static const kif_backend_vtable real_vtable = {
    .open = real_open,
    .close = real_close,
    .ioctl = real_ioctl,
    .read = real_read,
    .write = real_write,
    .mmap = real_mmap,
    .munmap = real_munmap,
    .mmio_write = NULL,
    .read_file = real_read_file,
    .write_file = real_write_file,
    .readlink = real_readlink,
    .listdir = real_listdir,
    .exists = real_exists,
};

static kif_backend real_backend = {.vtable = &real_vtable, .name = "real"};

kif_backend *kif_real_backend(void) { return &real_backend; }
