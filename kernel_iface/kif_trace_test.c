/* The tracer: a recorded sequence of calls against the toy mock (plus two real calls) must print exactly the
 * expected lines, once durations, fd numbers and addresses are masked. Uses a test-local kif_ioctl_table with
 * one decoder, one descriptor without a decoder, and one request it does not know. */
#include <errno.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/testing.h"
#include "kernel_iface/kif_toy_mock_test.h"

static size_t decode_toy_args(const void *arg, size_t arg_size_B, char *out, size_t out_size_B) {
  if (arg_size_B < sizeof(toy_args)) return (size_t)snprintf(out, out_size_B, "?");
  const toy_args *a = arg;
  int n = snprintf(out, out_size_B, "counter=%u step=%u", a->counter, a->step);
  return n < 0 ? 0 : (size_t)n < out_size_B ? (size_t)n : out_size_B - 1;
}

static const kif_ioctl_desc toy_descs[] = {
    {"TOY_IOC_INC", TOY_IOC_INC, "toy_args", sizeof(toy_args), decode_toy_args},
    {"TOY_IOC_REJECT", TOY_IOC_REJECT, "toy_args", sizeof(toy_args), NULL},
};
static const kif_ioctl_table toy_table = {"/dev/fake", toy_descs, 2};
/* A table for another prefix holding the same request number: must not be used for /dev/fake. */
static const kif_ioctl_desc other_descs[] = {{"OTHER_IOC", TOY_IOC_INC, "other", 8, NULL}};
static const kif_ioctl_table other_table = {"/dev/other", other_descs, 1};

/* Replace the digits of "<digits>us" at line end, of "fd=<digits>", and the hex of "addr=0x<hex>". */
static void mask(const char *in, char *out) {
  while (*in) {
    if (strncmp(in, "fd=", 3) == 0 && in[3] >= '0' && in[3] <= '9') {
      memcpy(out, "fd=N", 4), out += 4, in += 3;
      while (*in >= '0' && *in <= '9') in++;
    } else if (strncmp(in, "addr=0x", 7) == 0) {
      memcpy(out, "addr=ADDR", 9), out += 9, in += 7;
      while ((*in >= '0' && *in <= '9') || (*in >= 'a' && *in <= 'f')) in++;
    } else if (*in == ' ' && in[1] >= '0' && in[1] <= '9') {
      const char *p = in + 1;
      while (*p >= '0' && *p <= '9') p++;
      if (strncmp(p, "us\n", 3) == 0) {
        memcpy(out, " Nus", 4), out += 4, in = p + 2;
      } else {
        *out++ = *in++;
      }
    } else {
      *out++ = *in++;
    }
  }
  *out = '\0';
}

static const char expected[] =
    "kif 1 open /dev/fake flags=0x2 [toy] -> ok fd=N Nus\n"
    "kif 2 ioctl fd=N /dev/fake TOY_IOC_INC req=0xc0085401 [toy] in toy_args{counter=41 step=1}\n"
    "kif 2 ioctl fd=N /dev/fake TOY_IOC_INC req=0xc0085401 [toy] out toy_args{counter=42 step=1} -> ok Nus\n"
    "kif 3 ioctl fd=N /dev/fake _IOC(RW,'T',0x09,8) req=0xc0085409 [toy] in raw[8]=2a000000 01000000\n"
    "kif 3 ioctl fd=N /dev/fake _IOC(RW,'T',0x09,8) req=0xc0085409 [toy] out raw[8]=2a000000 01000000"
    " -> err=ENOTTY(25) \"toy: no ioctl nr 0x9\" Nus\n"
    "kif 4 ioctl fd=N /dev/fake TOY_IOC_REJECT req=0x40085402 [toy] in raw[8]=2a000000 01000000\n"
    "kif 4 ioctl fd=N /dev/fake TOY_IOC_REJECT req=0x40085402 [toy] out raw[8]=2a000000 01000000"
    " -> err=EINVAL(22) \"toy: step 1 too large\" Nus\n"
    "kif 5 read_file /sys/fake/gpu_id [toy] -> ok size=2 Nus\n"
    "kif 6 listdir /sys/fake [toy] -> ok count=3 Nus\n"
    "kif 7 exists /sys/fake/nodes/2 [toy] -> false Nus\n"
    "kif 8 readlink /sys/fake/nodes/1/device [toy] -> ok target=../../../pci/0000:03:00.0 Nus\n"
    "kif 9 mmap fd=N /dev/fake size=0x1000 prot=0x3 flags=0x1 offset=0x0 [toy] -> ok addr=ADDR Nus\n"
    "kif 10 mmio64 /dev/fake+0x10 value=0x5 [toy] -> ok Nus\n"
    "kif 11 mmio32 /dev/fake+0x8 value=0xdead [toy] -> err=EIO(5) \"toy: queue hung\" Nus\n"
    "kif 12 munmap addr=ADDR size=0x1000 map=/dev/fake+0x0 [toy] -> ok Nus\n"
    "kif 13 ioctl fd=N /dev/fake TOY_IOC_INC req=0xc0085401 [toy] in toy_args{counter=42 step=1}\n"
    "kif 13 ioctl fd=N /dev/fake TOY_IOC_INC req=0xc0085401 [toy] out toy_args{counter=42 step=1}"
    " -> err=EIO(5) injected Nus\n"
    "kif 14 close fd=N /dev/fake [toy] -> ok Nus\n"
    "kif 15 read_file /nonexistent/kif_trace_test -> err=ENOENT(2) Nus\n"
    "kif 16 eventfd initval=3 flags=0x80000 -> ok fd=N Nus\n"
    "kif 17 read fd=N [eventfd] size=8 -> ok size=8 Nus\n"
    "kif 18 close fd=N [eventfd] -> ok Nus\n";

int main(void) {
  kif *k = NULL;
  CHECK_OK(kif_create(&k));
  if (!k) return testing_summary("kif_trace_test");
  static toy_mock toy;
  toy_mock_init(&toy);
  CHECK_OK(kif_register(k, &toy.base, toy_prefixes, 2));
  CHECK_OK(kif_register_decoder(k, &other_table));
  CHECK_OK(kif_register_decoder(k, &toy_table));

  char *text = NULL;
  size_t text_size = 0;
  FILE *out = open_memstream(&text, &text_size);
  CHECK(out != NULL);
  if (!out) return testing_summary("kif_trace_test");
  kif_trace_set_output(k, out);

  int fd = -1;
  CHECK_OK(kif_open(k, "/dev/fake", O_RDWR, &fd));
  toy_args args = {.counter = 41, .step = 1};
  CHECK_OK(kif_ioctl(k, fd, TOY_IOC_INC, &args));
  hcq_status_free(kif_ioctl(k, fd, TOY_IOC_MISSING, &args));
  hcq_status_free(kif_ioctl(k, fd, TOY_IOC_REJECT, &args));
  char *data = NULL;
  size_t size_B = 0;
  CHECK_OK(kif_read_file(k, "/sys/fake/gpu_id", &data, &size_B));
  free(data);
  kif_dirlist list = {0};
  CHECK_OK(kif_listdir(k, "/sys/fake", &list));
  kif_dirlist_free(&list);
  CHECK(!kif_exists(k, "/sys/fake/nodes/2"));
  char *target = NULL;
  CHECK_OK(kif_readlink(k, "/sys/fake/nodes/1/device", &target));
  free(target);
  void *page = NULL;
  CHECK_OK(kif_mmap(k, NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0, &page));
  if (page) {
    CHECK_OK(kif_mmio_write64(k, (char *)page + 0x10, 5));
    hcq_status_free(kif_mmio_write32(k, (char *)page + 0x8, 0xdead));
    CHECK_OK(kif_munmap(k, page, 4096));
  }
  CHECK_OK(kif_fault_ioctl(k, TOY_IOC_INC, EIO));
  hcq_status_free(kif_ioctl(k, fd, TOY_IOC_INC, &args));
  kif_fault_reset(k);
  CHECK_OK(kif_close(k, fd));
  hcq_status_free(kif_read_file(k, "/nonexistent/kif_trace_test", &data, &size_B));
  int efd = -1;
  CHECK_OK(kif_eventfd(k, 3, EFD_CLOEXEC, &efd));
  uint64_t value = 0;
  CHECK_OK(kif_read(k, efd, &value, 8, &size_B));
  CHECK_EQ_INT(value, 3);
  CHECK_OK(kif_close(k, efd));

  kif_trace_set_output(k, NULL);
  fclose(out);
  char *masked = malloc(text_size + 1);
  if (masked) {
    mask(text, masked);
    CHECK_EQ_STR(masked, expected);
    /* every line of the raw text ends in a duration "<digits>us" or is an ioctl "in" line */
    for (char *line = text; *line;) {
      char *nl = strchr(line, '\n');
      CHECK(nl != NULL);
      if (!nl) break;
      const char *in = strstr(line, " in ");
      CHECK(strncmp(nl - 2, "us", 2) == 0 || (in && in < nl));
      line = nl + 1;
    }
  }
  free(masked);
  free(text);

  /* fixed durations: a deterministic "0us" */
  text = NULL;
  out = open_memstream(&text, &text_size);
  kif_trace_set_fixed_durations(k, true);
  kif_trace_set_output(k, out);
  CHECK(kif_exists(k, "/sys/fake/name"));
  kif_trace_set_output(k, NULL);
  fclose(out);
  CHECK_EQ_STR(text, "kif 19 exists /sys/fake/name [toy] -> true 0us\n");
  free(text);

  CHECK_OK(kif_unregister(k, &toy.base));
  kif_destroy(k);
  return testing_summary("kif_trace_test");
}
