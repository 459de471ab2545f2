/* Compares autogen/kfd.h with the real linux/kfd_ioctl.h (compiled here through the drm shim, see autogen.mk):
 * every request code, constant, struct size, member offset and member size. Then checks the generated decoders
 * against hand-written text. */
#include <stddef.h>
#include <sys/ioctl.h>
#include <linux/kfd_ioctl.h>

#include "autogen/kfd.h"
#include "autogen/kfd_abi_list.h"
#include "autogen/kfd_decode.h"
#include "base/testing.h"

static const kif_ioctl_desc *find_desc(const char *name) {
  for (size_t i = 0; i < kfd_ioctl_table.count; i++)
    if (!strcmp(kfd_ioctl_table.descs[i].name, name)) return &kfd_ioctl_table.descs[i];
  return NULL;
}

static void check_abi(void) {
  int n = 0;
#define IOCTL(real, gen, st)                                                      \
  CHECK_EQ_INT((unsigned long)(gen), (unsigned long)(real));                      \
  CHECK_EQ_INT(_IOC_SIZE(real), sizeof(struct st));                               \
  n++;
  AMD_KFD_ABI_IOCTLS(IOCTL)
#undef IOCTL
  /* Completeness, independent of the generated list: the header numbers its ioctls START..END-1. */
  CHECK_EQ_INT(n, AMDKFD_COMMAND_END - AMDKFD_COMMAND_START);
  CHECK_EQ_INT(kfd_ioctl_table.count, n);
  /* Folded at compile time in static initialisers: the real header's (1 << 31) flags would trip UBSan at run time. */
#define REAL(real, gen) (unsigned long long)(unsigned)(real),
#define GEN(real, gen) (unsigned long long)(gen),
  static const unsigned long long real_vals[] = {AMD_KFD_ABI_CONSTS(REAL)}, gen_vals[] = {AMD_KFD_ABI_CONSTS(GEN)};
#undef REAL
#undef GEN
  CHECK_EQ_INT(sizeof real_vals / sizeof *real_vals, AMD_KFD_ABI_NUM_CONSTS);
  for (size_t i = 0; i < sizeof real_vals / sizeof *real_vals; i++) CHECK_EQ_INT(gen_vals[i], real_vals[i]);
#define STRUCT(tag) CHECK_EQ_INT(sizeof(struct amd_##tag), sizeof(struct tag));
  AMD_KFD_ABI_STRUCTS(STRUCT)
#undef STRUCT
#define FIELD(tag, m)                                                             \
  CHECK_EQ_INT(offsetof(struct amd_##tag, m), offsetof(struct tag, m));          \
  CHECK_EQ_INT(sizeof(((struct amd_##tag *)0)->m), sizeof(((struct tag *)0)->m));
  AMD_KFD_ABI_FIELDS(FIELD)
#undef FIELD
#define FLEX(tag, m) CHECK_EQ_INT(offsetof(struct amd_##tag, m), offsetof(struct tag, m));
  AMD_KFD_ABI_FLEX_FIELDS(FLEX)
#undef FLEX
  /* The ioctls the AMD driver uses, against the reference's request table (tinygrad/runtime/autogen/kfd.py). */
  CHECK_EQ_INT(AMD_KFD_IOC_ACQUIRE_VM, 0x40084b15);
  CHECK_EQ_INT(AMD_KFD_IOC_CREATE_EVENT, 0xc0204b08);
  CHECK_EQ_INT(AMD_KFD_IOC_ALLOC_MEMORY_OF_GPU, 0xc0284b16);
  CHECK_EQ_INT(AMD_KFD_IOC_CREATE_QUEUE, 0xc0584b02);
  CHECK_EQ_INT(AMD_KFD_IOC_WAIT_EVENTS, 0xc0184b0c);
  CHECK_EQ_INT(AMD_KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE | AMD_KFD_IOC_ALLOC_MEM_FLAGS_EXECUTABLE |
                   AMD_KFD_IOC_ALLOC_MEM_FLAGS_NO_SUBSTITUTE | AMD_KFD_IOC_ALLOC_MEM_FLAGS_VRAM,
               0xD0000001u);
  CHECK_EQ_INT(sizeof(struct amd_kfd_ioctl_create_queue_args), 88);
  CHECK_EQ_INT(offsetof(struct amd_kfd_ioctl_create_queue_args, ctl_stack_size), 84);
}

static void check_decoders(void) {
  char out[512];
  const kif_ioctl_desc *d = find_desc("AMDKFD_IOC_ALLOC_MEMORY_OF_GPU");
  CHECK(d != NULL);
  if (!d) return;
  CHECK_EQ_INT(d->request, 0xc0284b16);
  CHECK_EQ_STR(d->struct_name, "kfd_ioctl_alloc_memory_of_gpu_args");
  CHECK_EQ_INT(d->arg_size_B, 40);
  struct kfd_ioctl_alloc_memory_of_gpu_args a = {.va_addr = 0x7f0000001000ull, .size = 0x200000, .handle = 0x1234,
                                                 .mmap_offset = 0, .gpu_id = 45678, .flags = 0xd6000002u};
  size_t n = d->decode(&a, sizeof a, out, sizeof out);
  const char *want = "va_addr=0x7f0000001000 size=0x200000 handle=0x1234 mmap_offset=0x0 gpu_id=45678 flags=0xd6000002";
  CHECK_EQ_STR(out, want);
  CHECK_EQ_INT(n, strlen(want));

  /* Short argument: only whole fields inside it, and a note. */
  n = d->decode(&a, 20, out, sizeof out);
  CHECK_EQ_STR(out, "va_addr=0x7f0000001000 size=0x200000 (short argument: 20 of 40 bytes)");
  /* Truncated output buffer: NUL-terminated, never more than the buffer. */
  memset(out, 'x', sizeof out);
  n = d->decode(&a, sizeof a, out, 12);
  CHECK_EQ_STR(out, "va_addr=0x7");
  CHECK_EQ_INT(n, 11);
  CHECK(out[12] == 'x');
  CHECK_EQ_INT(d->decode(&a, sizeof a, out, 0), 0);
  d->decode(NULL, 0, out, sizeof out);
  CHECK_EQ_STR(out, "(null)");

  /* Nested struct arrays are flattened with C designators. */
  d = find_desc("AMDKFD_IOC_GET_PROCESS_APERTURES");
  CHECK(d != NULL);
  if (d) {
    static struct kfd_ioctl_get_process_apertures_args ap;
    ap.process_apertures[6].gpu_id = 77;
    ap.num_of_nodes = 1;
    d->decode(&ap, sizeof ap, out, sizeof out);
    CHECK(strstr(out, "process_apertures[0].lds_base=0x0 ") == out);
    char big[8192];
    d->decode(&ap, sizeof ap, big, sizeof big);
    CHECK(strstr(big, " process_apertures[6].gpu_id=77 process_apertures[6].pad=0 num_of_nodes=1 pad=0") != NULL);
  }
  /* A signed member prints as signed. */
  d = find_desc("AMDKFD_IOC_SET_XNACK_MODE");
  CHECK(d != NULL);
  if (d) {
    struct kfd_ioctl_set_xnack_mode_args x = {.xnack_enabled = -1};
    d->decode(&x, sizeof x, out, sizeof out);
    CHECK_EQ_STR(out, "xnack_enabled=-1");
  }
  d = find_desc("AMDKFD_IOC_CREATE_EVENT");
  CHECK(d != NULL);
  if (d) {
    struct kfd_ioctl_create_event_args e = {.event_page_offset = 0x1000, .event_type = 8, .auto_reset = 1, .event_id = 3};
    d->decode(&e, sizeof e, out, sizeof out);
    CHECK_EQ_STR(out, "event_page_offset=0x1000 event_trigger_data=0 event_type=8 auto_reset=1 node_id=0 event_id=3 "
                      "event_slot_index=0");
  }
  CHECK_EQ_STR(kfd_ioctl_table.path_prefix, "/dev/kfd");
  for (size_t i = 0; i < kfd_ioctl_table.count; i++) CHECK(kfd_ioctl_table.descs[i].decode != NULL);
}

int main(void) {
  check_abi();
  check_decoders();
  return testing_summary("kfd_abi_test");
}
