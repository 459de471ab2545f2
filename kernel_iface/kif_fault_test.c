/* Fault injection: the Nth call, every call of one ioctl, every call on a path prefix; the injected errno
 * surfaces in the status and the operation does not run. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/testing.h"
#include "kernel_iface/kif_toy_mock_test.h"

int main(void) {
  kif *k = NULL;
  CHECK_OK(kif_create(&k));
  if (!k) return testing_summary("kif_fault_test");
  static toy_mock toy;
  toy_mock_init(&toy);
  CHECK_OK(kif_register(k, &toy.base, toy_prefixes, 2));
  int fd = -1;
  CHECK_OK(kif_open(k, "/dev/fake", O_RDWR, &fd));
  toy_args args = {0};

  /* Nth call from now: calls 1 and 2 succeed, call 3 fails, call 4 succeeds again */
  CHECK_OK(kif_fault_nth_call(k, 3, EIO));
  CHECK_OK(kif_ioctl(k, fd, TOY_IOC_INC, &args));
  char *data = NULL;
  size_t size_B = 0;
  CHECK_OK(kif_read_file(k, "/sys/fake/gpu_id", &data, &size_B));
  free(data);
  hcq_status st = kif_ioctl(k, fd, TOY_IOC_INC, &args);
  CHECK_EQ_INT(hcq_status_code(st), HCQ_CODE_IO);
  CHECK_EQ_INT(kif_status_errno(st), EIO);
  CHECK(strstr(hcq_status_message(st), "injected fault") != NULL);
  CHECK(strstr(hcq_status_message(st), "EIO") != NULL);
  CHECK(strstr(hcq_status_message(st), "/dev/fake") != NULL);
  hcq_status_free(st);
  CHECK_EQ_INT(args.counter, 1); /* the faulted ioctl did not run */
  CHECK_EQ_INT(toy.ioctls, 1);
  CHECK_OK(kif_ioctl(k, fd, TOY_IOC_INC, &args));
  CHECK_EQ_INT(args.counter, 2);
  kif_fault_reset(k);

  /* every call of one ioctl request; other requests pass; ENOMEM maps to NOMEM */
  CHECK_OK(kif_fault_ioctl(k, TOY_IOC_INC, ENOMEM));
  for (int i = 0; i < 3; i++) {
    st = kif_ioctl(k, fd, TOY_IOC_INC, &args);
    CHECK_EQ_INT(hcq_status_code(st), HCQ_CODE_NOMEM);
    CHECK_EQ_INT(kif_status_errno(st), ENOMEM);
    hcq_status_free(st);
  }
  CHECK_EQ_INT(args.counter, 2);
  CHECK_ERR(kif_ioctl(k, fd, TOY_IOC_REJECT, &args), HCQ_CODE_IO, "toy: step 0 too large"); /* not faulted */
  kif_fault_reset(k);
  CHECK_OK(kif_ioctl(k, fd, TOY_IOC_INC, &args));
  CHECK_EQ_INT(args.counter, 3);

  /* every call on a path prefix (whole components), including fd calls on files opened there */
  CHECK_OK(kif_fault_path(k, "/sys/fake/nodes", EACCES));
  CHECK_ERR(kif_read_file(k, "/sys/fake/nodes/1/props", &data, &size_B), HCQ_CODE_IO, "EACCES");
  CHECK_ERR(kif_listdir(k, "/sys/fake/nodes", &(kif_dirlist){0}), HCQ_CODE_IO, "errno=13");
  CHECK_OK(kif_read_file(k, "/sys/fake/name", &data, &size_B)); /* outside the prefix */
  free(data);
  kif_fault_reset(k);
  CHECK_OK(kif_fault_path(k, "/dev/fake", ETIMEDOUT));
  CHECK_ERR(kif_ioctl(k, fd, TOY_IOC_INC, &args), HCQ_CODE_TIMEOUT, "ETIMEDOUT");
  CHECK_ERR(kif_mmap(k, NULL, 4096, PROT_READ, MAP_SHARED, fd, 0, &(void *){NULL}), HCQ_CODE_TIMEOUT, "mmap");
  int fd2 = -1;
  CHECK_ERR(kif_open(k, "/dev/fake", O_RDWR, &fd2), HCQ_CODE_TIMEOUT, "open /dev/fake");
  CHECK_EQ_INT(fd2, -1);
  CHECK_EQ_INT(toy.opens, 1); /* the mock never saw the faulted open */
  kif_fault_reset(k);

  /* a rule combining op, request and nth: the 2nd INC fails, REJECT calls do not count */
  CHECK_OK(kif_fault_add(k, &(kif_fault){.op = KIF_OP_IOCTL, .match_request = true, .request = TOY_IOC_INC,
                                         .nth = 2, .err = EBUSY}));
  CHECK_OK(kif_ioctl(k, fd, TOY_IOC_INC, &args));
  CHECK_ERR(kif_ioctl(k, fd, TOY_IOC_REJECT, &args), HCQ_CODE_IO, "EINVAL");
  CHECK_ERR(kif_ioctl(k, fd, TOY_IOC_INC, &args), HCQ_CODE_IO, "EBUSY");
  CHECK_OK(kif_ioctl(k, fd, TOY_IOC_INC, &args));
  kif_fault_reset(k);

  /* the doorbell: an injected mmio fault skips the store and the hook */
  void *page = NULL;
  CHECK_OK(kif_mmap(k, NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0, &page));
  CHECK_OK(kif_fault_add(k, &(kif_fault){.op = KIF_OP_MMIO_WRITE, .err = EIO}));
  if (page) {
    CHECK_ERR(kif_mmio_write32(k, page, 77), HCQ_CODE_IO, "injected");
    CHECK_EQ_INT(toy.doorbell_writes, 0);
    CHECK_EQ_INT(toy.doorbell_page[0], 0);
  }
  kif_fault_reset(k);

  /* real backend: the Nth call on a real file; close faults still close */
  char path[] = "/tmp/kif_fault_test.XXXXXX";
  int tmp = mkstemp(path);
  CHECK(tmp >= 0);
  close(tmp);
  int rfd = -1;
  CHECK_OK(kif_fault_nth_call(k, 1, EPERM));
  CHECK_ERR(kif_open(k, path, O_RDONLY, &rfd), HCQ_CODE_IO, path);
  CHECK_OK(kif_open(k, path, O_RDONLY | O_CLOEXEC, &rfd));
  kif_fault_reset(k);
  CHECK_OK(kif_fault_add(k, &(kif_fault){.op = KIF_OP_CLOSE, .err = EINTR}));
  CHECK_ERR(kif_close(k, rfd), HCQ_CODE_IO, "EINTR");
  CHECK_EQ_INT(fcntl(rfd, F_GETFD), -1); /* closed anyway */
  kif_fault_reset(k);
  unlink(path);

  /* invalid rules */
  CHECK_ERR(kif_fault_nth_call(k, 0, EIO), HCQ_CODE_INVALID, "1-based");
  CHECK_ERR(kif_fault_add(k, &(kif_fault){.op = KIF_OP_OPEN, .err = 0}), HCQ_CODE_INVALID, "positive errno");

  CHECK_OK(kif_munmap(k, page, 4096));
  CHECK_OK(kif_close(k, fd));
  CHECK_OK(kif_unregister(k, &toy.base));
  kif_destroy(k);
  return testing_summary("kif_fault_test");
}
