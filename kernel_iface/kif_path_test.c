/* Path normalization and whole-component prefix matching, against hand-written expectations. */
#include "base/testing.h"
#include "kernel_iface/kif_internal.h"

static const char *norm(const char *in) {
  static char out[256];
  if (!kif_path_normalize(in, out, sizeof out)) return "(too long)";
  return out;
}

int main(void) {
  CHECK_EQ_STR(norm("/dev/kfd"), "/dev/kfd");
  CHECK_EQ_STR(norm("/dev//kfd/"), "/dev/kfd");
  CHECK_EQ_STR(norm("/sys/./devices/virtual/../virtual/kfd"), "/sys/devices/virtual/kfd");
  CHECK_EQ_STR(norm("/.."), "/");
  CHECK_EQ_STR(norm("/a/b/../../.."), "/");
  CHECK_EQ_STR(norm("///"), "/");
  CHECK_EQ_STR(norm("relative/./x"), "relative/./x"); /* relative paths are left alone */
  char small[6];
  CHECK(!kif_path_normalize("/abcdef", small, sizeof small));
  CHECK(kif_path_normalize("/abcd", small, sizeof small));
  CHECK_EQ_STR(small, "/abcd");

  CHECK(kif_path_has_prefix("/dev/nvidia0", "/dev/nvidia0"));
  CHECK(kif_path_has_prefix("/dev/nvidia0/x", "/dev/nvidia0"));
  CHECK(!kif_path_has_prefix("/dev/nvidia01", "/dev/nvidia0"));
  CHECK(!kif_path_has_prefix("/dev/nvidia-uvm", "/dev/nvidia"));
  CHECK(!kif_path_has_prefix("/dev", "/dev/kfd"));
  CHECK(kif_path_has_prefix("/anything", "/"));
  CHECK(!kif_path_has_prefix("relative", "/"));

  /* _IOC decomposition: AMDKFD_IOC_CREATE_QUEUE is _IOWR('K', 0x02, 88 bytes) = 0xc0584b02. */
  char text[64];
  kif_format_ioc(0xc0584b02ul, text, sizeof text);
  CHECK_EQ_STR(text, "_IOC(RW,'K',0x02,88)");
  kif_format_ioc(0x40084b15ul, text, sizeof text); /* ACQUIRE_VM: _IOW */
  CHECK_EQ_STR(text, "_IOC(W,'K',0x15,8)");
  kif_format_ioc(0x25ul, text, sizeof text); /* a raw UVM number */
  CHECK_EQ_STR(text, "_IOC(NONE,0x00,0x25,0)");
  CHECK_EQ_INT(kif_ioc_arg_size(0xc0584b02ul), 88);
  CHECK_EQ_INT(kif_ioc_arg_size(0x30000001ul), 0); /* UVM_INITIALIZE: dir NONE, no size promised */

  unsigned char bytes[5] = {1, 2, 3, 4, 0xff};
  kif_format_hex(bytes, 5, 64, text, sizeof text);
  CHECK_EQ_STR(text, "raw[5]=01020304 ff");
  kif_format_hex(bytes, 5, 4, text, sizeof text);
  CHECK_EQ_STR(text, "raw[5]=01020304...");
  return testing_summary("kif_path_test");
}
