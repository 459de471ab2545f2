/* NV local memory and Blackwell launches on the mock, through the public runtime API.
 * - A hand-written PTX kernel keeps a .local array that it indexes with data-dependent indices (so ptxas keeps it
 *   in local memory: the cubin has a stack); it runs on the Hopper (QMD V03_00) and Blackwell (QMD V05_00, sm_100)
 *   mocks and matches the same computation in C. A second kernel with a larger array grows the device's local
 *   memory; the first still runs after that (outgrown allocations stay until close, no leak at close).
 * - Local memory the channel was given that is too small for the QMD is a clear error (the mock's check), and a
 *   local window smaller than the kernel's .local variables is a fault naming the local access (the interpreter).
 * Needs ptxas (skips without). */
#include "emulator_tests/nv_test_64bit.h"
#include "compiler/toolchain.h"
#include "emulator_tests/nv_test_util.h"
#include "emulator_tests/ptx_interp.h"
#include "autogen/nv_abi.h"
#include "nv/nv_hcq.h"
#include "nv/nv_internal.h"

#define NEL 256

static const char *COPY = "(kernel loc (let o (buf 0 int32 256)) (let a (buf 1 int32 256)) (let r (range 0 256 loop))"
                          " (sink (store (index o r) (load (index a r)) r)))";

/* out[i] = arr[k] + arr[(7k + 3) % n] where arr[(5j + a) % n] = a*j + i for j < n, k = a % n (n a power of two):
 * data-dependent store and load indices keep the array in local memory */
static void local_ptx(char *out, size_t cap, const char *version, const char *arch, const char *name, unsigned n) {
  snprintf(out, cap,
           ".version %s\n.target %s\n.address_size 64\n"
           ".visible .entry %s(.param .u64 p0, .param .u64 p1)\n{\n"
           "  .local .align 4 .b8 arr[%u];\n  .reg .pred %%p<3>;\n  .reg .b32 %%r<16>;\n  .reg .b64 %%rd<12>;\n"
           "  ld.param.u64 %%rd1, [p0];\n  ld.param.u64 %%rd2, [p1];\n"
           "  mov.u32 %%r1, %%ctaid.x;\n  mov.u32 %%r2, %%ntid.x;\n  mov.u32 %%r3, %%tid.x;\n"
           "  mad.lo.s32 %%r4, %%r1, %%r2, %%r3;\n  setp.ge.u32 %%p1, %%r4, %u;\n  @%%p1 bra DONE;\n"
           "  mul.wide.u32 %%rd3, %%r4, 4;\n  add.s64 %%rd4, %%rd2, %%rd3;\n  ld.global.u32 %%r5, [%%rd4];\n"
           "  mov.u64 %%rd5, arr;\n  mov.u32 %%r6, 0;\n"
           "LOOP:\n  mad.lo.s32 %%r7, %%r5, %%r6, %%r4;\n  mad.lo.s32 %%r13, %%r6, 5, %%r5;\n  and.b32 %%r13, %%r13, %u;\n"
           "  mul.wide.u32 %%rd6, %%r13, 4;\n  add.s64 %%rd7, %%rd5, %%rd6;\n"
           "  st.local.u32 [%%rd7], %%r7;\n  add.s32 %%r6, %%r6, 1;\n  setp.lt.u32 %%p2, %%r6, %u;\n  @%%p2 bra LOOP;\n"
           "  and.b32 %%r8, %%r5, %u;\n  mul.wide.u32 %%rd8, %%r8, 4;\n  add.s64 %%rd9, %%rd5, %%rd8;\n"
           "  ld.local.u32 %%r9, [%%rd9];\n  mad.lo.s32 %%r10, %%r8, 7, 3;\n  and.b32 %%r10, %%r10, %u;\n"
           "  mul.wide.u32 %%rd10, %%r10, 4;\n  add.s64 %%rd11, %%rd5, %%rd10;\n  ld.local.u32 %%r11, [%%rd11];\n"
           "  add.s32 %%r12, %%r9, %%r11;\n  add.s64 %%rd4, %%rd1, %%rd3;\n  st.global.u32 [%%rd4], %%r12;\n"
           "DONE:\n  ret;\n}\n",
           version, arch, name, n * 4, NEL, n - 1, n, n - 1, n - 1);
}

static uint32_t local_ref(uint32_t a, uint32_t i, uint32_t n) {
  static uint32_t arr[1024];
  for (uint32_t j = 0; j < n; j++) arr[(5 * j + a) & (n - 1)] = a * j + i;
  uint32_t k = a & (n - 1), k2 = (k * 7 + 3) & (n - 1);
  return arr[k] + arr[k2];
}

/* The compiled COPY program with its binary replaced by the hand kernel (cubin + PTX trailer, as the toolchain
 * writes it). *bin is malloc'd. */
static hcq_status local_program(hcq_rt_program *p, const char *ptxas, const char *arch, unsigned n, hcq_program *out,
                                uint8_t **bin) {
  *out = *hcq_rt_program_desc(p);
  static char ptx[8192];
  local_ptx(ptx, sizeof ptx, strcmp(arch, "sm_100") ? "7.8" : "8.6", arch, out->symbol, n);
  uint8_t *cubin = NULL;
  size_t cubin_B = 0, ptx_B = strlen(ptx);
  HCQ_TRY(cc_ptx_assemble(ptxas, arch, ptx, &cubin, &cubin_B));
  *bin = malloc(cubin_B + ptx_B + 16);
  if (!*bin) return free(cubin), hcq_status_make(HCQ_CODE_NOMEM, "test binary");
  uint64_t len = ptx_B;
  memcpy(*bin, cubin, cubin_B);
  memcpy(*bin + cubin_B, ptx, ptx_B);
  memcpy(*bin + cubin_B + ptx_B, &len, 8);
  memcpy(*bin + cubin_B + ptx_B + 8, CC_PTX_TRAILER_MAGIC, 8);
  free(cubin);
  out->binary = *bin;
  out->binary_size_B = cubin_B + ptx_B + 16;
  return HCQ_OK;
}

static void run_and_check(hcq_rt_device *dev, hcq_rt_kernel *k, unsigned n, const char *label) {
  hcq_rt_buffer *b[2] = {0};
  for (int i = 0; i < 2; i++) CHECK_OK(hcq_rt_buffer_alloc(dev, NEL * 4, HCQ_RT_MEM_HOST_VISIBLE, &b[i]));
  if (!b[0] || !b[1]) return;
  uint32_t *o = hcq_rt_buffer_host(b[0]), *a = hcq_rt_buffer_host(b[1]);
  for (uint32_t i = 0; i < NEL; i++) a[i] = i * 2654435761u ^ 0x9e3779b9u, o[i] = 0xdeadbeef;
  CHECK_OK(hcq_rt_launch(k, b, 2, NULL, 0));
  CHECK_OK(hcq_rt_sync(dev, 10000));
  int bad = 0;
  for (uint32_t i = 0; i < NEL; i++) bad += o[i] != local_ref(a[i], i, n);
  if (bad) printf("%s: %d of %d wrong (o[0] = 0x%x, want 0x%x)\n", label, bad, NEL, o[0], local_ref(a[0], 0, n));
  CHECK_EQ_INT(bad, 0);
  for (int i = 0; i < 2; i++) hcq_rt_buffer_free(b[i]);
}

static void check_arch(const char *ptxas, nv_mock_arch arch_id, const char *arch) {
  ntu_env e;
  ntu_open(&e, &(nv_mock_config){.arch = arch_id, .gpcs = 1}); /* 9 TPCs: local memory of a few MiB */
  if (!e.dev) return;
  hcq_rt_program *p = NULL;
  CHECK_OK(hcq_rt_program_compile(e.dev, COPY, "", &p));
  hcq_program small, big;
  uint8_t *bin_small = NULL, *bin_big = NULL;
  hcq_rt_kernel *ks = NULL, *kb = NULL;
  CHECK_OK(p ? local_program(p, ptxas, arch, 64, &small, &bin_small) : HCQ_OK);
  CHECK_OK(bin_small ? hcq_rt_kernel_load(e.dev, &small, &ks) : HCQ_OK);
  if (ks) {
    const hcq_program *kp = hcq_rt_kernel_program(ks);
    printf("%s: 64-entry local array: %u bytes of local memory per thread, parameters at 0x%x in constant bank 0\n",
           arch, kp->private_B, kp->kernarg_prefix_B);
    /* the driver's constant-bank-0 header fits below the parameters (Blackwell's reaches word 223) */
    CHECK(kp->kernarg_prefix_B >= (arch_id == NV_MOCK_BLACKWELL ? 224u * 4 : 12u * 4));
    CHECK(kp->private_B >= 256);
    run_and_check(e.dev, ks, 64, arch);
  }
  /* a larger array grows the local memory; the first kernel still runs */
  CHECK_OK(p ? local_program(p, ptxas, arch, 256, &big, &bin_big) : HCQ_OK);
  CHECK_OK(bin_big ? hcq_rt_kernel_load(e.dev, &big, &kb) : HCQ_OK);
  if (kb) {
    CHECK(hcq_rt_kernel_program(kb)->private_B >= 1024);
    run_and_check(e.dev, kb, 256, arch);
  }
  if (ks) run_and_check(e.dev, ks, 64, arch);
  /* the device's allocations against the reference's sizing, recomputed here from the mock's GR counts (1 GPC of 9
   * TPCs of 2 SMs, 64 warps each): per thread the stack (n * 4 bytes) + 0x240 rounded to 32 */
  nv_dev *d = nv_hcq_dev(hcq_rt_lower(e.dev));
  CHECK_EQ_INT(d->nlocal_mems, 2); /* the outgrown one stays until close */
  for (uint32_t i = 0; i < d->nlocal_mems && i < 2; i++) {
    uint64_t slm = ((i ? 1024u : 256u) + 0x240 + 31) / 32 * 32;
    uint64_t per_tpc = ((slm * 32 + 0x1ff) / 0x200 * 0x200 * 64 * 2 + 0x7fff) / 0x8000 * 0x8000;
    uint64_t total = (per_tpc * 9 + 0x1ffff) / 0x20000 * 0x20000;
    CHECK(d->local_mems[i].size_B >= total && d->local_mems[i].size_B < total + (2u << 20));
    if (i) CHECK_EQ_INT(d->slm_per_thread_B, slm);
  }
  /* the channel's local memory made too small behind the driver's back: the mock refuses the launch by name */
  if (ks && arch_id == NV_MOCK_HOPPER) {
    nv_dev *d = nv_hcq_dev(hcq_rt_lower(e.dev));
    uint32_t w[4], size[2] = {0, 0x200};
    nv_push pb;
    nv_push_init(&pb, w, 4);
    nv_push_inc(&pb, NV_SUBCH_COMPUTE, NV_HOPPER_COMPUTE_A_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A, size, 2);
    CHECK_OK(nv_chan_submit(d, nv_dev_compute(d), &pb));
    hcq_rt_buffer *b[2] = {0};
    for (int i = 0; i < 2; i++) CHECK_OK(hcq_rt_buffer_alloc(e.dev, NEL * 4, HCQ_RT_MEM_HOST_VISIBLE, &b[i]));
    hcq_status st = hcq_rt_launch(ks, b, 2, NULL, 0);
    if (!st) st = hcq_rt_sync(e.dev, 2000);
    CHECK(st != NULL);
    printf("too small: %s\n", st ? hcq_status_message(st) : "(no error)");
    CHECK(st && strstr(hcq_status_message(st), "local memory is too small"));
    hcq_status_free(st);
    for (int i = 0; i < 2; i++) hcq_rt_buffer_free(b[i]);
  }
  hcq_rt_kernel_free(ks);
  hcq_rt_kernel_free(kb);
  free(bin_small);
  free(bin_big);
  hcq_rt_program_free(p);
  ntu_close(&e);
}

/* The interpreter alone: a local window smaller than the .local variables faults on the access past it. */
static uint8_t g_out[NEL * 4], g_in[NEL * 4];
static hcq_status host_rw(void *ctx, uint64_t va, size_t n, void *buf, bool write) {
  (void)ctx;
  uint8_t *bases[2] = {g_out, g_in};
  for (int i = 0; i < 2; i++) {
    uintptr_t b = (uintptr_t)bases[i];
    if (va >= b && va + n <= b + sizeof g_out) {
      if (write) memcpy((void *)(uintptr_t)va, buf, n);
      else memcpy(buf, (void *)(uintptr_t)va, n);
      return HCQ_OK;
    }
  }
  return hcq_status_make(HCQ_CODE_KERNEL_FAULT, "no memory at 0x%llx", (unsigned long long)va);
}
static hcq_status host_read(void *c, uint64_t va, size_t n, void *out) { return host_rw(c, va, n, out, false); }
static hcq_status host_write(void *c, uint64_t va, size_t n, const void *in) { return host_rw(c, va, n, (void *)in, true); }

static void check_window(void) {
  static char ptx[8192];
  local_ptx(ptx, sizeof ptx, "7.8", "sm_90", "k", 64);
  ptx_module *m = NULL;
  CHECK_OK(ptx_module_parse(ptx, strlen(ptx), &m));
  if (!m) return;
  const ptx_entry_info *info = NULL;
  CHECK_OK(ptx_module_entry(m, NULL, &info));
  if (info) CHECK_EQ_INT(info->static_local_B, 256);
  uint64_t params[2] = {(uintptr_t)g_out, (uintptr_t)g_in};
  ptx_mem_ops ops = {NULL, host_read, host_write};
  for (uint32_t i = 0; i < NEL; i++) ((uint32_t *)g_in)[i] = i * 40503u + 7;
  ptx_launch l = {.grid = {4, 1, 1}, .block = {64, 1, 1}, .params = params, .params_size_B = 16, .mem = &ops,
                  .local_size_given = true, .local_size_B = 256};
  CHECK_OK(ptx_launch_run(m, &l, NULL));
  int bad = 0;
  for (uint32_t i = 0; i < NEL; i++) bad += ((uint32_t *)g_out)[i] != local_ref(((uint32_t *)g_in)[i], i, 64);
  CHECK_EQ_INT(bad, 0);
  /* one word short: the last store of the loop (arr[63]) is outside the window */
  l.local_size_B = 252;
  CHECK_ERR(ptx_launch_run(m, &l, NULL), HCQ_CODE_INVALID, "MMU fault: local write of 4 bytes at 0xfc is outside the local window of 252 bytes");
  ptx_module_free(m);
  /* declarations and symbols are checked at parse time */
  static const char *const bad_decls[][2] = {
      {".local .b32 x[4];\n  .local .b32 x[2];", "local variable x declared twice"},
      {".local .b32 x[4];\n  .reg .b32 %r1;\n  ld.local.u32 %r1, [y+4];", "unknown local variable 'y'"},
      {".local .b32 x[200000];", "local memory beyond 512 KiB per thread"},
  };
  for (size_t i = 0; i < sizeof bad_decls / sizeof *bad_decls; i++) {
    char text[512];
    snprintf(text, sizeof text, ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n  %s\n  ret;\n}\n",
             bad_decls[i][0]);
    ptx_module *b = NULL;
    CHECK_ERR(ptx_module_parse(text, strlen(text), &b), HCQ_CODE_PARSE, bad_decls[i][1]);
    ptx_module_free(b);
  }
}

int main(void) {
  NV_TEST_NEEDS_64BIT("nv_local_test");
  check_window();
  char ptxas[512];
  hcq_status st = cc_ptx_ptxas(ptxas, sizeof ptxas);
  if (st) {
    hcq_status_free(st);
    printf("skipped the mock runs: needs ptxas (CUDA toolkit at /usr/local/cuda)\n");
    return testing_summary("emulator_tests/nv_local_test");
  }
  check_arch(ptxas, NV_MOCK_HOPPER, "sm_90");
  check_arch(ptxas, NV_MOCK_BLACKWELL, "sm_100");
  /* the examples on the Blackwell mock (QMD V05_00, sm_100 cubins), the small ones with the heuristic's opts */
  ntu_env e;
  ntu_open(&e, &(nv_mock_config){.arch = NV_MOCK_BLACKWELL});
  char *names[ETU_MAX_EXAMPLES];
  int count = etu_list_examples(names, ETU_MAX_EXAMPLES), ran = 0;
  for (int i = 0; e.dev && i < count; i++) {
    char path[512];
    snprintf(path, sizeof path, "examples/%s", names[i]);
    char *text = NULL;
    size_t len = 0;
    FILE *f = fopen(path, "rb");
    if (f) {
      text = calloc(1, 1 << 20);
      len = text ? fread(text, 1, (1 << 20) - 1, f) : 0;
      fclose(f);
    }
    CHECK(text && len);
    if (text && len && !strstr(text, "(var ")) ran += ntu_run_text(e.dev, text, NULL, 64u << 10, path) == 1;
    free(text);
  }
  for (int i = 0; i < count; i++) free(names[i]);
  printf("Blackwell mock: %d examples matched the reference interpreter\n", ran);
  CHECK(ran >= 5);
  ntu_close(&e);
  return testing_summary("emulator_tests/nv_local_test");
}
