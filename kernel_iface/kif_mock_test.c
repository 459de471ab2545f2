/* Mock routing: a toy mock claims /dev/fake and /sys/fake/; calls under those prefixes reach it, everything
 * else the real backend. Also: prefix boundaries, longest prefix, fd placeholders, unknown paths and
 * unimplemented ioctls, the doorbell hook, mapping lifetime after close, unregistration. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <stdlib.h>
#include "base/testing.h"
#include "kernel_iface/kif_toy_mock_test.h"

/* A second mock that claims a longer prefix inside the toy's tree. */
static bool inner_exists(kif_backend *b, const char *path) {
  (void)b;
  return strcmp(path, "/sys/fake/inner/x") == 0;
}
static const kif_backend_vtable inner_vtable = {.exists = inner_exists};

int main(void) {
  kif *k = NULL;
  CHECK_OK(kif_create(&k));
  if (!k) return testing_summary("kif_mock_test");
  static toy_mock toy;
  toy_mock_init(&toy);
  CHECK_OK(kif_register(k, &toy.base, toy_prefixes, 2));

  /* routing and prefix boundaries */
  CHECK(kif_route(k, "/dev/fake") == &toy.base);
  CHECK(kif_route(k, "/dev/fake/sub") == &toy.base);
  CHECK(kif_route(k, "/dev//fake/") == &toy.base);
  CHECK(kif_route(k, "/dev/fake0") == NULL);
  CHECK(kif_route(k, "/dev/fak") == NULL);
  CHECK(kif_route(k, "/sys/fake") == &toy.base); /* trailing '/' of the prefix is ignored */
  CHECK(kif_route(k, "/sys/fakes/x") == NULL);
  CHECK(kif_route(k, "/sys/x/../fake/gpu_id") == &toy.base);
  CHECK(kif_route(k, "/tmp") == NULL);
  CHECK_ERR(kif_register(k, &toy.base, (const char *const[]){"/dev/fake/"}, 1), HCQ_CODE_INVALID,
            "already claimed by mock toy");
  CHECK_ERR(kif_register(k, &toy.base, (const char *const[]){"dev/rel"}, 1), HCQ_CODE_INVALID, "absolute");

  kif_backend inner = {.vtable = &inner_vtable, .name = "inner"};
  CHECK_OK(kif_register(k, &inner, (const char *const[]){"/sys/fake/inner"}, 1));
  CHECK(kif_route(k, "/sys/fake/inner/x") == &inner); /* longest prefix wins */
  CHECK(kif_route(k, "/sys/fake/innerx") == &toy.base);
  CHECK(kif_exists(k, "/sys/fake/inner/x"));
  CHECK(!kif_exists(k, "/sys/fake/gpu_id/../inner/y"));
  CHECK_ERR(kif_read_file(k, "/sys/fake/inner/x", &(char *){NULL}, &(size_t){0}), HCQ_CODE_UNSUPPORTED,
            "mock inner does not implement read_file");
  CHECK_OK(kif_unregister(k, &inner));
  CHECK(kif_route(k, "/sys/fake/inner/x") == &toy.base);

  /* the toy's file tree */
  char *data = NULL;
  size_t size_B = 0;
  CHECK_OK(kif_read_file(k, "/sys/fake/gpu_id", &data, &size_B));
  CHECK_EQ_INT(size_B, 2);
  CHECK_EQ_STR(data, "7\n");
  free(data);
  kif_dirlist list = {0};
  CHECK_OK(kif_listdir(k, "/sys/fake/", &list));
  CHECK_EQ_INT(list.count, 3);
  if (list.count == 3) {
    CHECK_EQ_STR(list.names[0], "gpu_id");
    CHECK_EQ_STR(list.names[1], "name");
    CHECK_EQ_STR(list.names[2], "nodes");
  }
  kif_dirlist_free(&list);
  char *target = NULL;
  CHECK_OK(kif_readlink(k, "/sys/fake/nodes/1/device", &target));
  CHECK_EQ_STR(target, "../../../pci/0000:03:00.0");
  free(target);
  CHECK(kif_exists(k, "/sys/fake/nodes/1/props"));
  CHECK(!kif_exists(k, "/sys/fake/nodes/2"));
  CHECK(kif_exists(k, "/tmp")); /* real */

  /* unknown paths under the prefix: errors naming the path, never silent */
  CHECK_ERR(kif_read_file(k, "/sys/fake/nodes/2/gpu_id", &data, &size_B), HCQ_CODE_NOT_FOUND,
            "/sys/fake/nodes/2/gpu_id");
  CHECK_ERR(kif_listdir(k, "/sys/fake/missing", &list), HCQ_CODE_NOT_FOUND, "toy: no directory /sys/fake/missing");
  int fd = -1;
  CHECK_ERR(kif_open(k, "/dev/fake/extra", O_RDWR, &fd), HCQ_CODE_NOT_FOUND, "open /dev/fake/extra");
  CHECK_EQ_INT(fd, -1);
  CHECK_ERR(kif_write_file(k, "/sys/fake/name", "x", 1), HCQ_CODE_UNSUPPORTED, "does not implement write_file");

  /* open: a placeholder fd that is a real, distinct open file descriptor */
  CHECK_OK(kif_open(k, "/dev/fake", O_RDWR | O_CLOEXEC, &fd));
  CHECK(fd >= 0);
  CHECK(fcntl(fd, F_GETFD) != -1); /* the number is held by the kernel: no real open can return it */
  int real_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  CHECK(real_fd >= 0 && real_fd != fd);
  close(real_fd);
  CHECK_EQ_STR(kif_fd_path(k, fd), "/dev/fake");
  CHECK_EQ_INT(toy.opens, 1);
  int fd2 = -1;
  CHECK_OK(kif_open(k, "/dev/fake", O_RDWR, &fd2));
  CHECK(fd2 >= 0 && fd2 != fd);

  /* the ioctl reaches the mock and changes the argument */
  toy_args args = {.counter = 41, .step = 1};
  CHECK_OK(kif_ioctl(k, fd, TOY_IOC_INC, &args));
  CHECK_EQ_INT(args.counter, 42);
  CHECK_OK(kif_ioctl(k, fd2, TOY_IOC_INC, &args));
  CHECK_EQ_INT(args.counter, 43);
  /* a mock's own error comes back with its detail and errno */
  hcq_status st = kif_ioctl(k, fd, TOY_IOC_REJECT, &args);
  CHECK_EQ_INT(kif_status_errno(st), EINVAL);
  CHECK(strstr(hcq_status_message(st), "toy: step 1 too large") != NULL);
  CHECK(strstr(hcq_status_message(st), "/dev/fake") != NULL);
  hcq_status_free(st);
  /* an ioctl the mock does not implement: UNSUPPORTED naming the request (no table: _IOC form + number) */
  st = kif_ioctl(k, fd, TOY_IOC_MISSING, &args);
  CHECK_EQ_INT(hcq_status_code(st), HCQ_CODE_UNSUPPORTED);
  CHECK(strstr(hcq_status_message(st), "_IOC(RW,'T',0x09,8)") != NULL);
  CHECK(strstr(hcq_status_message(st), "req=0xc0085409") != NULL);
  CHECK(strstr(hcq_status_message(st), "ENOTTY") != NULL);
  hcq_status_free(st);
  /* with a table, the error names the ioctl */
  static const kif_ioctl_desc descs[] = {{"TOY_IOC_MISSING", TOY_IOC_MISSING, "toy_args", sizeof(toy_args), NULL}};
  static const kif_ioctl_table table = {"/dev/fake", descs, 1};
  CHECK_OK(kif_register_decoder(k, &table));
  CHECK_ERR(kif_ioctl(k, fd, TOY_IOC_MISSING, &args), HCQ_CODE_UNSUPPORTED, "TOY_IOC_MISSING");
  /* a table for the same prefix replaces it; bad tables are refused */
  static const kif_ioctl_desc descs2[] = {{"TOY_IOC_MISSING_V2", TOY_IOC_MISSING, "toy_args", sizeof(toy_args), NULL}};
  static const kif_ioctl_table table2 = {"/dev/fake", descs2, 1};
  CHECK_OK(kif_register_decoder(k, &table2));
  CHECK_ERR(kif_ioctl(k, fd, TOY_IOC_MISSING, &args), HCQ_CODE_UNSUPPORTED, "TOY_IOC_MISSING_V2");
  static const kif_ioctl_table no_prefix = {NULL, descs2, 1}, no_descs = {"/dev/fake", NULL, 1};
  CHECK_ERR(kif_register_decoder(k, NULL), HCQ_CODE_INVALID, "kif_register_decoder");
  CHECK_ERR(kif_register_decoder(k, &no_prefix), HCQ_CODE_INVALID, "path_prefix");
  CHECK_ERR(kif_register_decoder(k, &no_descs), HCQ_CODE_INVALID, "descs");
  CHECK_ERR(kif_register_decoder(NULL, &table), HCQ_CODE_INVALID, "kif_register_decoder");
  kif_clear_decoders(k);
  hcq_status cleared = kif_ioctl(k, fd, TOY_IOC_MISSING, &args);
  CHECK(strstr(hcq_status_message(cleared), "_IOC(RW,'T',0x09,8)") != NULL);
  hcq_status_free(cleared);
  /* fd-level read is not implemented by the toy */
  CHECK_ERR(kif_read(k, fd, &args, 4, &size_B), HCQ_CODE_UNSUPPORTED, "mock toy does not implement read");

  /* doorbell: mmap the mock's page, ring it; the mock sees offset, value, width, and the store landed */
  void *page = NULL;
  CHECK_OK(kif_mmap(k, NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0, &page));
  CHECK(page == toy.doorbell_page);
  CHECK_ERR(kif_mmap(k, NULL, 4096, PROT_READ, MAP_SHARED, fd, 0x1000, &(void *){NULL}), HCQ_CODE_IO,
            "only the doorbell page");
  if (page) {
    CHECK_OK(kif_mmio_write64(k, (char *)page + 0x10, 0x1234567890ull));
    CHECK_EQ_INT(toy.doorbell_writes, 1);
    CHECK_EQ_INT(toy.last_offset, 0x10);
    CHECK_EQ_INT(toy.last_value, 0x1234567890ull);
    CHECK_EQ_INT(toy.last_width_B, 8);
    uint64_t stored;
    memcpy(&stored, toy.doorbell_page + 0x10, 8);
    CHECK_EQ_INT(stored, 0x1234567890ull);
    CHECK_OK(kif_mmio_write32(k, (char *)page + 0x8, 7));
    CHECK_EQ_INT(toy.last_offset, 0x8);
    CHECK_EQ_INT(toy.last_width_B, 4);
    CHECK_ERR(kif_mmio_write32(k, (char *)page + 0x8, 0xdead), HCQ_CODE_IO, "toy: queue hung");
    /* a store outside any mock mapping is a plain store */
    uint32_t plain = 0;
    CHECK_OK(kif_mmio_write32(k, &plain, 5));
    CHECK_EQ_INT(plain, 5);
    CHECK_EQ_INT(toy.doorbell_writes, 2);
  }

  /* the mapping keeps the file alive after close; the mock's close runs at the last munmap */
  CHECK_OK(kif_close(k, fd));
  CHECK(kif_fd_path(k, fd) == NULL);
  CHECK_EQ_INT(toy.closes, 0);
  CHECK_ERR(kif_unregister(k, &toy.base), HCQ_CODE_INVALID, "1 files still open, 1 mappings");
  if (page) {
    CHECK_OK(kif_mmio_write32(k, (char *)page + 0x4, 9));
    CHECK_EQ_INT(toy.doorbell_writes, 3);
    CHECK_OK(kif_munmap(k, page, 4096));
  }
  CHECK_EQ_INT(toy.munmaps, 1);
  CHECK_EQ_INT(toy.closes, 1);
  CHECK_OK(kif_close(k, fd2));
  CHECK_EQ_INT(toy.closes, 2);
  if (getenv("HCQ_QEMU_USER")) /* qemu-user answers ioctl numbers it does not know with ENOSYS, before the fd */
    CHECK_ERR(kif_ioctl(k, fd2, TOY_IOC_INC, &args), HCQ_CODE_UNSUPPORTED, "ENOSYS");
  else
    CHECK_ERR(kif_ioctl(k, fd2, TOY_IOC_INC, &args), HCQ_CODE_IO, "EBADF"); /* closed: the real backend says so */
  CHECK_OK(kif_unregister(k, &toy.base));
  CHECK(kif_route(k, "/dev/fake") == NULL);

  /* destroy closes what is still open through a mock */
  toy_mock_init(&toy);
  CHECK_OK(kif_register(k, &toy.base, toy_prefixes, 2));
  CHECK_OK(kif_open(k, "/dev/fake", O_RDWR, &fd));
  CHECK_OK(kif_mmap(k, NULL, 64, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0, &page));
  kif_destroy(k);
  CHECK_EQ_INT(toy.closes, 1);
  CHECK_EQ_INT(toy.munmaps, 1);

  /* the process default */
  kif *d = kif_default();
  CHECK(d != NULL);
  CHECK(kif_default() == d);
  kif *mine = NULL;
  CHECK_OK(kif_create(&mine));
  kif_set_default(mine);
  CHECK(kif_default() == mine);
  kif_set_default(NULL);
  CHECK(kif_default() == d);
  kif_destroy(mine);
  return testing_summary("kif_mock_test");
}
