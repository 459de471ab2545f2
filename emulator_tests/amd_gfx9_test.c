/* gfx9 (gfx90a, gfx942) scratch at the packet level. The mock cannot run gfx9 machine code, so the proof is the
 * dispatch the driver records for real code objects: clang-19 compiles a kernel with a 256-byte private array indexed
 * at run time (so it lives in scratch: private_segment_fixed_size 260) for -mcpu=gfx90a and -mcpu=gfx942, the code
 * object is loaded into mock GPU memory and hcq_queue_exec records its dispatch. The test decodes the SET_SH_REG
 * packets and checks, against values it computes itself from the code object and the topology:
 * - COMPUTE_TMPRING_SIZE: WAVESIZE = round_up(64 lanes x 260, 1 KiB) / 1 KiB, WAVES = min(CUs x scratch slots, 4095)
 *   (amd_scratch.h), in the gc_9_4_2 bit positions (WAVES 11:0, WAVESIZE 24:12);
 * - gfx90a (kernel_code_properties 0x29: private segment buffer, kernarg pointer, flat scratch init; 8 user SGPRs):
 *   USER_DATA_0..3 = the V# (base, base_hi | SWIZZLE_ENABLE bit 31, NUM_RECORDS 0xffffffff, NUM_FORMAT 4 at 14:12,
 *   DATA_FORMAT 2 at 18:15, INDEX_STRIDE 3 at 22:21, ADD_TID_ENABLE bit 23), USER_DATA_4/5 = kernarg, 6/7 = the
 *   scratch base (GFX9 flat scratch init, AMDGPUUsage); the base is a live allocation covering WAVES x WAVESIZE KiB;
 * - gfx942 (0x8: architected flat scratch): USER_DATA_0/1 = kernarg, COMPUTE_DISPATCH_SCRATCH_BASE_LO/HI = base >> 8.
 * The mock then validates the scratch (the V# or the base register) and refuses the gfx9 ISA by name; a V# whose base
 * is not allocated, whose allocation is too small, or without ADD_TID_ENABLE is refused for that reason instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "amd/amd_code_object.h"
#include "amd/amd_dispatch.h"
#include "amd/amd_hcq.h"
#include "base/testing.h"
#include "compiler/toolchain.h"
#include "elf/elf.h"
#include "emulator_tests/amd_rt_test_util.h"
#include "hcq/args.h"
#include "hcq/queue.h"

static char dir[64];

static const char k_src[] =
    "__kernel void spill(__global int *out, __global const int *in, int n) {\n"
    "  int a[64];\n"
    "  int i = __builtin_amdgcn_workitem_id_x();\n"
    "  for (int j = 0; j < 64; j++) a[j] = in[(i + j * n) & 1023];\n"
    "  out[i] = a[(i * n) & 63];\n"
    "}\n";

static uint8_t *build(const char *gfx, size_t *n) {
  char cl[96], o[96], so[96], cmd[1024];
  snprintf(cl, sizeof cl, "%s/spill.cl", dir);
  snprintf(o, sizeof o, "%s/spill_%s.o", dir, gfx);
  snprintf(so, sizeof so, "%s/spill_%s.hsaco", dir, gfx);
  FILE *f = fopen(cl, "w");
  if (!f || fputs(k_src, f) < 0) return NULL;
  fclose(f);
  snprintf(cmd, sizeof cmd, "clang-19 -x cl -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=%s -O2 -nogpulib -c %s -o %s "
           "&& ld.lld-19 -shared %s -o %s", gfx, cl, o, o, so);
  if (system(cmd) != 0) return NULL;
  f = fopen(so, "rb");
  if (!f) return NULL;
  uint8_t *b = malloc(1 << 20);
  *n = b ? fread(b, 1, 1 << 20, f) : 0;
  fclose(f);
  return b;
}

/* The mock's first complaint, waiting for it. */
static const char *mock_failure(art_mock *e) {
  const char *err = NULL;
  for (int i = 0; i < 20000 && !(err = kfd_mock_last_error(e->m)); i++) nanosleep(&(struct timespec){0, 100000}, NULL);
  return err ? err : "";
}

/* SET_SH_REG writes of a PM4 stream into regs[] (absolute dword addresses), 0xdeadbeef where never written. */
static void decode(const uint32_t *w, size_t n, uint32_t *regs) {
  for (size_t r = 0; r < 0x10000; r++) regs[r] = 0xdeadbeef;
  for (size_t i = 0; i < n;) {
    uint32_t h = w[i], op = (h >> 8) & 0xff, body = ((h >> 16) & 0x3fff) + 1;
    CHECK_EQ_INT(h >> 30, 3);
    if (h >> 30 != 3 || i + 1 + body > n) return;
    if (op == 0x76)
      for (uint32_t j = 1; j < body; j++) regs[(0x2c00 + w[i + 1] + j - 1) & 0xffff] = w[i + 1 + j];
    i += 1 + body;
  }
}

static void test_arch(const char *gfx, const uint8_t *obj, size_t obj_B) {
  art_mock e;
  if (!art_mock_up(&e, gfx, true, true)) return;
  hcq_device *dev = &e.h->dev;
  amd_code_object co;
  CHECK_OK(amd_code_object_parse(obj, obj_B, gfx, &co));
  const amd_kernel *k = co.nkernels ? &co.kernels[0] : NULL;
  CHECK(k && k->private_segment_fixed_size == 260 && (k->kd.compute_pgm_rsrc2 & 1));
  if (!k) return;
  /* the loadable segments at their relative addresses */
  elf_file f;
  CHECK_OK(elf_open(&f, obj, obj_B));
  hcq_mem img, karg, buf;
  CHECK_OK(dev->ops->mem_alloc(dev, 1 << 16, 0, &img));
  for (size_t i = 0; i < f.phnum; i++) {
    Elf64_Phdr ph;
    const uint8_t *data;
    CHECK_OK(elf_segment_get(&f, i, &ph, &data));
    if (ph.p_type == PT_LOAD && data && ph.p_vaddr + ph.p_filesz <= img.size_B)
      memcpy((uint8_t *)img.host + ph.p_vaddr, data, ph.p_filesz);
  }
  CHECK_OK(dev->ops->mem_alloc(dev, 256, 0, &karg));
  CHECK_OK(dev->ops->mem_alloc(dev, 8192, 0, &buf));
  uint64_t ptrs[2] = {buf.va, buf.va + 4096};
  memcpy(karg.host, ptrs, 16);
  hcq_args a = {.host = karg.host, .va = karg.va, .size_B = karg.size_B, .nbufs = 2, .nvals = 1};
  hcq_queue *q;
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
  hcq_val g[3] = {hcq_imm(2), hcq_imm(1), hcq_imm(1)}, l[3] = {hcq_imm(64), hcq_imm(1), hcq_imm(1)};
  CHECK_OK(hcq_queue_exec(q, hcq_imm(img.va + k->kd_vaddr), &a, g, l));
  static uint32_t regs[0x10000];
  decode(hcq_queue_words(q), hcq_queue_word_count(q), regs);
  /* expected, from the code object and the topology */
  const amd_node *nd = &e.h->amd->node;
  uint64_t cus = nd->simd_count / nd->simd_per_cu, slots = cus * nd->max_slots_scratch_cu;
  uint32_t wsize = (64u * 260u + 1023u) / 1024u, waves = slots < 4095 ? (uint32_t)slots : 4095u;
  CHECK_EQ_INT(regs[0x2e18], waves | wsize << 12);            /* COMPUTE_TMPRING_SIZE */
  CHECK_EQ_INT(regs[0x2e13] & 1, 1);                          /* COMPUTE_PGM_RSRC2.SCRATCH_EN */
  uint64_t base = e.h->scratch_ring.mem.va;
  CHECK(base && kfd_mock_bytes_after(e.m, 0, base) >= (uint64_t)waves * wsize * 1024u);
  uint16_t props = k->kd.kernel_code_properties;
  uint32_t nuser = (k->kd.compute_pgm_rsrc2 >> 1) & 31;
  if (!strcmp(gfx, "gfx90a")) {
    CHECK_EQ_INT(props, 0x29);
    CHECK_EQ_INT(nuser, 8);
    uint32_t want[8] = {(uint32_t)base, (uint32_t)(base >> 32) | 1u << 31, 0xffffffffu,
                        4u << 12 | 2u << 15 | 3u << 21 | 1u << 23, (uint32_t)karg.va, (uint32_t)(karg.va >> 32),
                        (uint32_t)base, (uint32_t)(base >> 32)};
    for (int i = 0; i < 8; i++) CHECK_EQ_INT(regs[0x2e40 + i], want[i]);
    CHECK_EQ_INT(regs[0x2e10], 0xdeadbeef); /* no DISPATCH_SCRATCH_BASE on gfx90a */
  } else {
    CHECK_EQ_INT(props, 0x8);
    CHECK_EQ_INT(nuser, 2);
    CHECK_EQ_INT(regs[0x2e40], (uint32_t)karg.va);
    CHECK_EQ_INT(regs[0x2e41], (uint32_t)(karg.va >> 32));
    CHECK_EQ_INT(regs[0x2e10], (uint32_t)(base >> 8));
    CHECK_EQ_INT(regs[0x2e11], (uint32_t)(base >> 40));
  }
  /* the mock accepts the scratch and refuses the ISA */
  CHECK_OK(hcq_queue_submit(q, dev, NULL, 0));
  const char *err = mock_failure(&e);
  CHECK(strstr(err, "executes gfx1100 code only") != NULL);
  if (!strstr(err, "executes gfx1100 code only")) fprintf(stderr, "%s: got %s\n", gfx, err);
  hcq_queue_destroy(q);
  amd_code_object_free(&co);
  dev->ops->mem_free(dev, &buf);
  dev->ops->mem_free(dev, &karg);
  dev->ops->mem_free(dev, &img);
  art_mock_down(&e);
}

/* A gfx90a dispatch with a broken V#: the mock names the scratch problem. */
static void test_bad_rsrc(int which, const char *want) {
  art_mock e;
  if (!art_mock_up(&e, "gfx90a", true, true)) return;
  amd_device *d = e.h->amd;
  amd_buf code, ring;
  CHECK_OK(amd_mem_alloc(d, 4096, AMD_MEM_VRAM_HOST, NULL, &code));
  uint64_t size_B = 0;
  uint32_t tmpring = 0;
  CHECK_OK(amd_scratch_plan(&d->node, d->arch, 16, &size_B, &tmpring));
  CHECK_OK(amd_mem_alloc(d, which == 1 ? size_B / 2 : size_B, AMD_MEM_VRAM, NULL, &ring));
  amd_dispatch_desc k = {.code_va = code.va, .rsrc2 = 1u | 4u << 1, .local = {64, 1, 1}, .grid = {1, 1, 1},
                         .tmpring_size = tmpring, .user_sgpr_count = 4};
  amd_scratch_rsrc_gfx9(which == 0 ? ring.va + size_B + (1u << 20) : ring.va, true, k.user_sgpr);
  if (which == 2) k.user_sgpr[3] &= ~(1u << 23);
  uint32_t w[128];
  amd_cmdbuf b = {.w = w, .cap = 128};
  CHECK_OK(amd_pm4_dispatch(&b, d, &k, NULL));
  CHECK_OK(amd_ring_submit(d, &d->compute, b.w, b.n, NULL, 0));
  const char *err = mock_failure(&e);
  CHECK(strstr(err, want) != NULL);
  if (!strstr(err, want)) fprintf(stderr, "case %d: got %s\n", which, err);
  CHECK_OK(amd_mem_free(d, &ring));
  CHECK_OK(amd_mem_free(d, &code));
  art_mock_down(&e);
}

int main(void) {
  if (!cc_tool_find("clang-19", NULL, 0) || !cc_tool_find("ld.lld-19", NULL, 0))
    TEST_SKIP("needs clang-19 and ld.lld-19 (apt-get install clang-19 lld-19)");
  snprintf(dir, sizeof dir, "/tmp/hcq_amdgfx9_XXXXXX");
  if (!mkdtemp(dir)) TEST_SKIP("cannot create a temp dir");
  static const char *gfx[] = {"gfx90a", "gfx942"};
  for (int i = 0; i < 2; i++) {
    size_t n = 0;
    uint8_t *obj = build(gfx[i], &n);
    CHECK(obj && n > 0);
    if (obj && n) test_arch(gfx[i], obj, n);
    free(obj);
  }
  test_bad_rsrc(0, "private segment buffer V# base");
  test_bad_rsrc(1, "bytes of a live allocation there");
  test_bad_rsrc(2, "lacks ADD_TID_ENABLE");
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return testing_summary("amd_gfx9");
}
