/* A toy mock backend shared by the kernel_iface tests (included, not linked): it claims /dev/fake and
 * /sys/fake/, serves a tiny file tree, one ioctl that increments a counter in its argument struct, and a
 * doorbell page whose stores it records. */
#ifndef HCQ_KIF_TOY_MOCK_TEST_H
#define HCQ_KIF_TOY_MOCK_TEST_H

#include <errno.h>
#include <linux/ioctl.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_iface/kif_backend.h"

typedef struct toy_args {
  uint32_t counter;
  uint32_t step;
} toy_args;

#define TOY_IOC_INC _IOWR('T', 0x01, toy_args)
#define TOY_IOC_REJECT _IOW('T', 0x02, toy_args)
#define TOY_IOC_MISSING _IOWR('T', 0x09, toy_args) /* the mock does not implement it */

typedef struct toy_mock {
  kif_backend base;
  int opens, closes, ioctls, munmaps;
  int doorbell_writes;
  uint64_t last_offset, last_value;
  unsigned last_width_B;
  _Alignas(4096) unsigned char doorbell_page[4096];
} toy_mock;

static const char *toy_file_text(const char *path) {
  if (strcmp(path, "/sys/fake/gpu_id") == 0) return "7\n";
  if (strcmp(path, "/sys/fake/name") == 0) return "toy\n";
  if (strcmp(path, "/sys/fake/nodes/1/props") == 0) return "simd_count 4\nlds_size_in_kb 64\n";
  return NULL;
}

static bool toy_is_dir(const char *path) {
  return strcmp(path, "/sys/fake") == 0 || strcmp(path, "/sys/fake/nodes") == 0 ||
         strcmp(path, "/sys/fake/nodes/1") == 0;
}

static int toy_open(kif_backend *b, kif_file *file, char *detail) {
  toy_mock *m = (toy_mock *)b;
  if (strcmp(file->path, "/dev/fake") != 0 && !toy_file_text(file->path)) {
    snprintf(detail, KIF_DETAIL_MAX, "toy: no device %s", file->path);
    return ENOENT;
  }
  m->opens++;
  file->data = m;
  return 0;
}

static int toy_close(kif_backend *b, kif_file *file) {
  (void)file;
  ((toy_mock *)b)->closes++;
  return 0;
}

static int toy_ioctl(kif_backend *b, kif_file *file, unsigned long request, void *arg, char *detail) {
  toy_mock *m = (toy_mock *)b;
  (void)file;
  m->ioctls++;
  switch (request) {
  case TOY_IOC_INC:
    ((toy_args *)arg)->counter += 1;
    return 0;
  case TOY_IOC_REJECT:
    snprintf(detail, KIF_DETAIL_MAX, "toy: step %u too large", ((toy_args *)arg)->step);
    return EINVAL;
  default:
    snprintf(detail, KIF_DETAIL_MAX, "toy: no ioctl nr 0x%x", (unsigned)_IOC_NR(request));
    return ENOTTY;
  }
}

static int toy_mmap(kif_backend *b, kif_file *file, void *addr, size_t size_B, int prot, int flags,
                    uint64_t offset, void **out_addr, char *detail) {
  (void)file, (void)addr, (void)prot, (void)flags;
  toy_mock *m = (toy_mock *)b;
  if (offset != 0 || size_B > sizeof m->doorbell_page) {
    snprintf(detail, KIF_DETAIL_MAX, "toy: only the doorbell page at offset 0 maps");
    return EINVAL;
  }
  *out_addr = m->doorbell_page;
  return 0;
}

static int toy_munmap(kif_backend *b, kif_file *file, void *addr, size_t size_B) {
  (void)file, (void)addr, (void)size_B;
  ((toy_mock *)b)->munmaps++;
  return 0;
}

static int toy_mmio_write(kif_backend *b, kif_file *file, uint64_t offset, uint64_t value, unsigned width_B,
                          char *detail) {
  (void)file;
  toy_mock *m = (toy_mock *)b;
  if (value == 0xdead) {
    snprintf(detail, KIF_DETAIL_MAX, "toy: queue hung");
    return EIO;
  }
  m->doorbell_writes++;
  m->last_offset = offset;
  m->last_value = value;
  m->last_width_B = width_B;
  return 0;
}

static int toy_read_file(kif_backend *b, const char *path, char **out_data, size_t *out_size_B, char *detail) {
  (void)b;
  if (toy_is_dir(path)) return EISDIR;
  const char *text = toy_file_text(path);
  if (!text) {
    snprintf(detail, KIF_DETAIL_MAX, "toy: no file %s", path);
    return ENOENT;
  }
  size_t n = strlen(text);
  if (!(*out_data = malloc(n))) return ENOMEM;
  memcpy(*out_data, text, n);
  *out_size_B = n;
  return 0;
}

static int toy_readlink(kif_backend *b, const char *path, char **out_target, char *detail) {
  (void)b, (void)detail;
  if (strcmp(path, "/sys/fake/nodes/1/device") != 0) return toy_file_text(path) || toy_is_dir(path) ? EINVAL : ENOENT;
  return (*out_target = strdup("../../../pci/0000:03:00.0")) ? 0 : ENOMEM;
}

static int toy_listdir(kif_backend *b, const char *path, kif_dirlist *list, char *detail) {
  (void)b;
  static const char *const root[] = {"name", "nodes", "gpu_id"}; /* deliberately unsorted */
  static const char *const nodes[] = {"1"};
  static const char *const node1[] = {"props", "device"};
  const char *const *names = NULL;
  size_t count = 0;
  if (strcmp(path, "/sys/fake") == 0) names = root, count = 3;
  else if (strcmp(path, "/sys/fake/nodes") == 0) names = nodes, count = 1;
  else if (strcmp(path, "/sys/fake/nodes/1") == 0) names = node1, count = 2;
  else if (toy_file_text(path)) return ENOTDIR;
  else {
    snprintf(detail, KIF_DETAIL_MAX, "toy: no directory %s", path);
    return ENOENT;
  }
  for (size_t i = 0; i < count; i++) {
    int err = kif_dirlist_add(list, names[i]);
    if (err) return err;
  }
  return 0;
}

static bool toy_exists(kif_backend *b, const char *path) {
  (void)b;
  return toy_is_dir(path) || toy_file_text(path) || strcmp(path, "/dev/fake") == 0 ||
         strcmp(path, "/sys/fake/nodes/1/device") == 0;
}

static const kif_backend_vtable toy_vtable = {
    .open = toy_open,
    .close = toy_close,
    .ioctl = toy_ioctl,
    .mmap = toy_mmap,
    .munmap = toy_munmap,
    .mmio_write = toy_mmio_write,
    .read_file = toy_read_file,
    .readlink = toy_readlink,
    .listdir = toy_listdir,
    .exists = toy_exists,
    /* read, write, write_file: left NULL on purpose (tests the "does not implement" error) */
};

static void toy_mock_init(toy_mock *m) {
  memset(m, 0, sizeof *m);
  m->base.vtable = &toy_vtable;
  m->base.name = "toy";
}

static const char *const toy_prefixes[] = {"/dev/fake", "/sys/fake/"};

#endif
