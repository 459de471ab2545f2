/* Kernels that read the dispatch packet (kernel_code_properties ENABLE_SGPR_DISPATCH_PTR), run on the gfx1100 mock's
 * RDNA3 interpreter. The driver writes an hsa_kernel_dispatch_packet_t image after the kernel arguments, as ops_amd.py
 * does, and passes its address in the user SGPRs before the kernarg pointer (AMDGPUUsage "Initial Kernel Execution
 * State"); the mock loads s0.. from USER_DATA as the CP does. The test kernel (assembled by llvm-mc-19) stores
 * grid_size_x * 1000 + workgroup_size_x, both read from the packet, for every work-item; the expected value is computed
 * here from the launch (grid_size is in work-items: groups x workgroup size, ROCm hsa.h). The packet fields are also
 * checked at their hsa.h offsets. Refusals: argument memory with no room for the packet, a symbolic launch size, and
 * the queue pointer (no amd_queue_t on a PM4 queue). */
#include <string.h>
#include <time.h>

#include "amd/amd_dispatch.h"
#include "amd/amd_hcq.h"
#include "base/testing.h"
#include "compiler/toolchain.h"
#include "emulator_tests/amd_mock_exec.h"
#include "emulator_tests/kfd_mock.h"
#include "emulator_tests/rdna3_test_util.h"
#include "hcq/args.h"
#include "hcq/queue.h"
#include "hcq/signal.h"

/* s[0:1] dispatch packet, s[2:3] kernarg (out), s4 workgroup id x */
static const char k_src[] =
    "s_load_b32 s5, s[0:1], 0x4\n"
    "s_load_b32 s6, s[0:1], 0xc\n"
    "s_load_b64 s[8:9], s[2:3], 0x0\n"
    "s_waitcnt lgkmcnt(0)\n"
    "s_and_b32 s5, s5, 0xffff\n"
    "s_mul_i32 s7, s4, s5\n"
    "s_mul_i32 s10, s6, 1000\n"
    "s_add_u32 s10, s10, s5\n"
    "v_add_nc_u32 v1, s7, v0\n"
    "v_lshlrev_b32 v2, 2, v1\n"
    "v_mov_b32 v3, s10\n"
    "global_store_b32 v2, v3, s[8:9]\n"
    "s_endpgm\n";

static void put(uint8_t *p, const void *v, size_t n) { memcpy(p, v, n); }

static hcq_mem make_program(hcq_device *dev, const r3t_code *c, uint16_t props) {
  hcq_mem m;
  CHECK_OK(dev->ops->mem_alloc(dev, 8192, 0, &m));
  uint8_t *kd = m.host;
  uint32_t kernarg = 8, rsrc1 = 0x60af0000, rsrc2 = 4u << 1 | 1u << 7; /* 4 user SGPRs, TGID_X */
  int64_t entry = 256;
  put(kd + 8, &kernarg, 4);
  put(kd + 16, &entry, 8);
  put(kd + 48, &rsrc1, 4);
  put(kd + 52, &rsrc2, 4);
  put(kd + 56, &props, 2);
  memcpy(kd + 256, c->text, c->text_B);
  return m;
}

static uint32_t u32_at(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t u64_at(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static void test_run(hcq_device *dev, const r3t_code *c) {
  enum { GX = 3, LX = 32, N = GX * LX };
  hcq_mem prog = make_program(dev, c, 0x2 | 0x8 | 0x400), out, karg;
  CHECK_OK(dev->ops->mem_alloc(dev, 4 * N, 0, &out));
  CHECK_OK(dev->ops->mem_alloc(dev, 128, HCQ_MEM_KERNARG, &karg));
  memset(out.host, 0xee, 4 * N);
  memcpy(karg.host, &out.va, 8);
  hcq_args a = {.host = karg.host, .va = karg.va, .size_B = 128, .nbufs = 1};
  hcq_signal *s;
  CHECK_OK(hcq_signal_create(dev, "s", 0, &s));
  hcq_queue *q;
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q));
  hcq_val g[3] = {hcq_imm(GX), hcq_imm(1), hcq_imm(1)}, l[3] = {hcq_imm(LX), hcq_imm(1), hcq_imm(1)};
  CHECK_OK(hcq_queue_exec(q, hcq_imm(prog.va), &a, g, l));
  CHECK_OK(hcq_queue_signal(q, hcq_imm(s->va), hcq_imm(1)));
  CHECK_OK(hcq_queue_submit(q, dev, NULL, 0));
  CHECK_OK(hcq_signal_wait(s, 1, 5000));
  int bad = 0;
  for (int i = 0; i < N; i++) bad += ((uint32_t *)out.host)[i] != (uint32_t)(GX * LX * 1000 + LX);
  CHECK_EQ_INT(bad, 0);
  const uint8_t *pkt = (const uint8_t *)karg.host + 64; /* after the 8 bytes of arguments, 64-byte aligned */
  CHECK_EQ_INT(u32_at(pkt + 4), LX | 1u << 16);   /* workgroup_size_x, _y */
  CHECK_EQ_INT(u32_at(pkt + 8) & 0xffff, 1);      /* workgroup_size_z */
  CHECK_EQ_INT(u32_at(pkt + 12), GX * LX);        /* grid_size_x */
  CHECK_EQ_INT(u32_at(pkt + 16), 1);
  CHECK_EQ_INT(u32_at(pkt + 20), 1);
  CHECK_EQ_INT(u64_at(pkt + 32), prog.va);        /* kernel_object */
  CHECK_EQ_INT(u64_at(pkt + 40), karg.va);        /* kernarg_address */
  /* refusals */
  hcq_args small = a;
  small.size_B = 100;
  CHECK_ERR(hcq_queue_exec(q, hcq_imm(prog.va), &small, g, l), HCQ_CODE_INVALID, "the packet at +64");
  uop_ctx *ctx;
  CHECK_OK(uop_ctx_create(&ctx));
  hcq_val sym[3] = {hcq_sym(uop_var(ctx, "gx", 1, 64, uop_dt(UOP_INT32))), hcq_imm(1), hcq_imm(1)};
  hcq_queue *q2;
  CHECK_OK(hcq_queue_create(dev, HCQ_QUEUE_COMPUTE, &q2));
  CHECK_ERR(hcq_queue_exec(q2, hcq_imm(prog.va), &a, sym, l), HCQ_CODE_UNSUPPORTED, "symbolic launch sizes");
  hcq_mem qptr = make_program(dev, c, 0x4 | 0x8 | 0x400);
  CHECK_ERR(hcq_queue_exec(q2, hcq_imm(qptr.va), &a, g, l), HCQ_CODE_UNSUPPORTED, "the queue pointer");
  hcq_queue_destroy(q2);
  uop_ctx_destroy(ctx);
  hcq_queue_destroy(q);
  hcq_signal_destroy(s);
  dev->ops->mem_free(dev, &qptr);
  dev->ops->mem_free(dev, &prog);
  dev->ops->mem_free(dev, &out);
  dev->ops->mem_free(dev, &karg);
}

int main(void) {
  if (!cc_tool_find("llvm-mc-19", NULL, 0) || !cc_tool_find("ld.lld-19", NULL, 0)) TEST_SKIP("needs llvm-mc-19 and ld.lld-19");
  static uint8_t obj[16384];
  r3t_code c = {0};
  if (!r3t_asm(k_src, obj, sizeof obj, &c)) {
    CHECK(!"llvm-mc-19 assembles the dispatch-packet kernel");
    return testing_summary("amd_dispatch_ptr");
  }
  kif *k;
  kfd_mock *m;
  amd_mock_exec *x;
  amd_hcq *h = NULL;
  CHECK_OK(kif_create(&k));
  CHECK_OK(kfd_mock_create(&(kfd_mock_config){.arch = "gfx1100"}, &m));
  CHECK_OK(amd_mock_exec_attach(m, &x));
  CHECK_OK(kfd_mock_attach(m, k));
  CHECK_OK(amd_hcq_open(k, 0, NULL, &h));
  if (h) test_run(&h->dev, &c);
  const char *f = amd_mock_exec_last_failure(x, false);
  if (*f) fprintf(stderr, "mock: %s\n", f);
  amd_hcq_close(h);
  CHECK_OK(kfd_mock_detach(m));
  kfd_mock_destroy(m);
  amd_mock_exec_free(x);
  kif_destroy(k);
  return testing_summary("amd_dispatch_ptr");
}
