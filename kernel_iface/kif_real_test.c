/* The real backend on ordinary files in a temporary directory; expectations come from direct syscalls. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/testing.h"
#include "kernel_iface/kif.h"

static char dir[64];

static const char *in_dir(const char *name) {
  static char path[4][128];
  static int slot;
  slot = (slot + 1) % 4;
  snprintf(path[slot], sizeof path[slot], "%s/%s", dir, name);
  return path[slot];
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/kif_real_test.XXXXXX");
  if (!mkdtemp(dir)) TEST_SKIP("mkdtemp failed");
  kif *k = NULL;
  CHECK_OK(kif_create(&k));
  if (!k) return testing_summary("kif_real_test");

  /* small files: write, read back, overwrite shorter (truncation), byte-exact content */
  CHECK_OK(kif_write_file(k, in_dir("props"), "simd_count 192\narray_count 12\n", 30));
  char *data = NULL;
  size_t size_B = 0;
  CHECK_OK(kif_read_file(k, in_dir("props"), &data, &size_B));
  CHECK_EQ_INT(size_B, 30);
  CHECK_EQ_STR(data, "simd_count 192\narray_count 12\n");
  free(data);
  CHECK_OK(kif_write_file(k, in_dir("props"), "7", 1));
  CHECK_OK(kif_read_file(k, in_dir("props"), &data, &size_B));
  CHECK_EQ_INT(size_B, 1);
  CHECK_EQ_STR(data, "7");
  free(data);
  /* a file larger than the first 4 KiB read chunk */
  static char big[10000];
  for (size_t i = 0; i < sizeof big; i++) big[i] = (char)('a' + i % 26);
  CHECK_OK(kif_write_file(k, in_dir("big"), big, sizeof big));
  CHECK_OK(kif_read_file(k, in_dir("big"), &data, &size_B));
  CHECK_EQ_INT(size_B, sizeof big);
  CHECK(data && memcmp(data, big, sizeof big) == 0);
  free(data);

  /* missing file: NOT_FOUND naming the path and the errno */
  hcq_status st = kif_read_file(k, in_dir("missing"), &data, &size_B);
  CHECK_EQ_INT(hcq_status_code(st), HCQ_CODE_NOT_FOUND);
  CHECK(strstr(hcq_status_message(st), "missing") != NULL);
  CHECK(strstr(hcq_status_message(st), "ENOENT") != NULL);
  CHECK_EQ_INT(kif_status_errno(st), ENOENT);
  CHECK(data == NULL);
  hcq_status_free(st);

  /* readlink */
  CHECK_EQ_INT(symlink("../some/target", in_dir("link")), 0);
  char *target = NULL;
  CHECK_OK(kif_readlink(k, in_dir("link"), &target));
  CHECK_EQ_STR(target, "../some/target");
  free(target);
  CHECK_ERR(kif_readlink(k, in_dir("props"), &target), HCQ_CODE_IO, "EINVAL");

  /* listdir: sorted, without . and .. */
  CHECK_EQ_INT(mkdir(in_dir("nodes"), 0755), 0);
  const char *names[] = {"10", "2", "1", "b", "a"};
  for (int i = 0; i < 5; i++) {
    char sub[64];
    snprintf(sub, sizeof sub, "nodes/%s", names[i]);
    CHECK_OK(kif_write_file(k, in_dir(sub), "", 0));
  }
  kif_dirlist list = {0};
  CHECK_OK(kif_listdir(k, in_dir("nodes"), &list));
  CHECK_EQ_INT(list.count, 5);
  if (list.count == 5) {
    const char *sorted[] = {"1", "10", "2", "a", "b"}; /* strcmp order */
    for (int i = 0; i < 5; i++) CHECK_EQ_STR(list.names[i], sorted[i]);
  }
  kif_dirlist_free(&list);
  CHECK_ERR(kif_listdir(k, in_dir("props"), &list), HCQ_CODE_IO, "ENOTDIR");
  CHECK_EQ_INT(list.count, 0);

  /* exists */
  CHECK(kif_exists(k, in_dir("props")));
  CHECK(kif_exists(k, in_dir("nodes")));
  CHECK(!kif_exists(k, in_dir("nope")));

  /* open / read / write / close and the fd table */
  int fd = -1;
  CHECK_OK(kif_open(k, in_dir("rw"), O_RDWR | O_CREAT | O_CLOEXEC, &fd));
  CHECK(fd >= 0);
  CHECK_EQ_STR(kif_fd_path(k, fd), in_dir("rw"));
  size_t n = 0;
  CHECK_OK(kif_write(k, fd, "hello", 5, &n));
  CHECK_EQ_INT(n, 5);
  CHECK_EQ_INT(lseek(fd, 0, SEEK_SET), 0);
  char buf[16] = {0};
  CHECK_OK(kif_read(k, fd, buf, sizeof buf, &n));
  CHECK_EQ_INT(n, 5);
  CHECK(memcmp(buf, "hello", 5) == 0);
  CHECK_OK(kif_close(k, fd));
  CHECK(kif_fd_path(k, fd) == NULL);
  CHECK_EQ_INT(fcntl(fd, F_GETFD), -1); /* really closed */
  CHECK_ERR(kif_open(k, in_dir("nope/x"), O_RDONLY, &fd), HCQ_CODE_NOT_FOUND, "nope/x");
  CHECK_EQ_INT(fd, -1);

  /* eventfd: write 3 then 4, one read returns the sum 7 */
  int efd = -1;
  CHECK_OK(kif_eventfd(k, 0, EFD_CLOEXEC, &efd));
  CHECK_EQ_STR(kif_fd_path(k, efd), "[eventfd]");
  uint64_t v = 3;
  CHECK_OK(kif_write(k, efd, &v, 8, &n));
  v = 4;
  CHECK_OK(kif_write(k, efd, &v, 8, &n));
  v = 0;
  CHECK_OK(kif_read(k, efd, &v, 8, &n));
  CHECK_EQ_INT(n, 8);
  CHECK_EQ_INT(v, 7);
  CHECK_ERR(kif_read(k, efd, &v, 4, &n), HCQ_CODE_IO, "EINVAL"); /* eventfd reads need 8 bytes */
  CHECK_OK(kif_close(k, efd));

  /* mmap of a file: contents visible, writes land in the file */
  CHECK_OK(kif_write_file(k, in_dir("map"), "0123456789abcdef", 16));
  CHECK_OK(kif_open(k, in_dir("map"), O_RDWR | O_CLOEXEC, &fd));
  void *p = NULL;
  CHECK_OK(kif_mmap(k, NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0, &p));
  CHECK(p != NULL);
  if (p) {
    CHECK(memcmp(p, "0123456789abcdef", 16) == 0);
    CHECK_OK(kif_mmio_write32(k, (char *)p + 4, 0x44434241)); /* "ABCD" little-endian */
    CHECK_OK(kif_munmap(k, p, 4096));
  }
  CHECK_OK(kif_close(k, fd));
  CHECK_OK(kif_read_file(k, in_dir("map"), &data, &size_B));
  CHECK_EQ_STR(data, "0123ABCD89abcdef");
  free(data);
  /* anonymous mapping, and an mmap error naming the fd */
  CHECK_OK(kif_mmap(k, NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0, &p));
  if (p) {
    ((volatile char *)p)[8191] = 1;
    CHECK_OK(kif_munmap(k, p, 8192));
  }
  CHECK_ERR(kif_mmap(k, NULL, 4096, PROT_READ, MAP_SHARED, 9999, 0, &p), HCQ_CODE_IO, "fd=9999");

  /* bad input */
  CHECK_ERR(kif_open(k, NULL, 0, &fd), HCQ_CODE_INVALID, "NULL");
  CHECK_ERR(kif_close(k, 9999), HCQ_CODE_IO, "EBADF");

  kif_destroy(k);
  /* clean up the temp dir */
  const char *files[] = {"props", "big", "link", "rw", "map", "nodes/10", "nodes/2", "nodes/1", "nodes/a",
                         "nodes/b"};
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) unlink(in_dir(files[i]));
  rmdir(in_dir("nodes"));
  rmdir(dir);
  return testing_summary("kif_real_test");
}
