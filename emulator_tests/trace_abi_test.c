/* End to end: kernel_iface's tracer decodes real KFD and NVIDIA RM argument structs with the autogen tables
 * registered on its context (autogen_register_decoders, as a driver does). A minimal mock answers one ioctl on
 * each device; the expected text is written by hand from the field values set here. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "autogen/abi_tables.h"
#include "autogen/kfd.h"
#include "autogen/nv_abi.h"
#include "base/testing.h"
#include "kernel_iface/kif_backend.h"

static int mock_open(kif_backend *b, kif_file *f, char *detail) {
  (void)b;
  if (!strcmp(f->path, "/dev/kfd") || !strcmp(f->path, "/dev/nvidiactl")) return 0;
  snprintf(detail, KIF_DETAIL_MAX, "no such mock node");
  return ENOENT;
}
static int mock_close(kif_backend *b, kif_file *f) { (void)b, (void)f; return 0; }

static int mock_ioctl(kif_backend *b, kif_file *f, unsigned long req, void *arg, char *detail) {
  (void)b, (void)f;
  if (req == AMD_KFD_IOC_GET_VERSION) {
    struct amd_kfd_ioctl_get_version_args *v = arg;
    v->major_version = 1, v->minor_version = 11;
    return 0;
  }
  if (req == NV_ESC_RM_ALLOC) {
    NVOS21_PARAMETERS *p = arg;
    p->hObjectNew = 0xcafe0001u;
    p->status = 0;
    return 0;
  }
  snprintf(detail, KIF_DETAIL_MAX, "not emulated");
  return ENOTTY;
}

static const kif_backend_vtable vt = {.open = mock_open, .close = mock_close, .ioctl = mock_ioctl};

int main(void) {
  kif *k = NULL;
  CHECK_OK(kif_create(&k));
  CHECK_OK(autogen_register_decoders(k));
  kif_backend mock = {&vt, "abi-mock"};
  const char *prefixes[] = {"/dev/kfd", "/dev/nvidiactl"};
  CHECK_OK(kif_register(k, &mock, prefixes, 2));
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  kif_trace_set_output(k, out);
  kif_trace_set_fixed_durations(k, true);

  int fd = -1;
  CHECK_OK(kif_open(k, "/dev/kfd", O_RDWR, &fd));
  struct amd_kfd_ioctl_get_version_args ver = {0};
  CHECK_OK(kif_ioctl(k, fd, AMD_KFD_IOC_GET_VERSION, &ver));
  CHECK_EQ_INT(ver.minor_version, 11);
  CHECK_OK(kif_close(k, fd));

  int ctl = -1;
  CHECK_OK(kif_open(k, "/dev/nvidiactl", O_RDWR, &ctl));
  NVOS21_PARAMETERS alloc = {.hRoot = 0x11, .hObjectParent = 0x11, .hObjectNew = 0, .hClass = 0x41};
  CHECK_OK(kif_ioctl(k, ctl, NV_ESC_RM_ALLOC, &alloc));
  CHECK_EQ_INT(alloc.hObjectNew, 0xcafe0001u);
  /* An ioctl the mock does not emulate: the error names the ioctl from the autogen table. */
  nv_ioctl_card_info_t cards[64];
  memset(cards, 0, sizeof cards);
  CHECK_ERR(kif_ioctl(k, ctl, NV_ESC_CARD_INFO, cards), HCQ_CODE_UNSUPPORTED, "NV_ESC_CARD_INFO");
  CHECK_OK(kif_close(k, ctl));
  fclose(out);

  CHECK(strstr(buf, "AMDKFD_IOC_GET_VERSION") != NULL);
  CHECK(strstr(buf, "out kfd_ioctl_get_version_args{major_version=1 minor_version=11}") != NULL);
  CHECK(strstr(buf, "NV_ESC_RM_ALLOC") != NULL);
  CHECK(strstr(buf, "hClass=0x41") != NULL || strstr(buf, "hClass=65") != NULL);
  CHECK(strstr(buf, "hObjectNew=0xcafe0001") != NULL || strstr(buf, "hObjectNew=3405643777") != NULL);
  if (testing_failures) fprintf(stderr, "trace was:\n%s", buf);
  free(buf);
  kif_unregister(k, &mock);
  kif_destroy(k);
  return testing_summary("trace_abi_test");
}
