/* The NV device through the public runtime API on the mock: the registry (nv:N, device count from the card list,
 * the error without /dev/nvidiactl), device info, a kernel on every supported driver branch's layout (570, 575, 580,
 * 590) and on two GPUs at once (each with its own channels), program-load refusals (another SM, a cubin for another
 * SM than its target string says, a missing kernel), a binary without its PTX (loads; the mock refuses to run it,
 * naming why), and a faulting kernel named by take_error (Xid 31 from the error notifier; the device stops and
 * is reopened). Results against the reference interpreter (etu_compare). Needs ptxas (skips without). */
#include "emulator_tests/nv_test_64bit.h"
#include "compiler/toolchain.h"
#include "emulator_tests/nv_test_util.h"
#include "hcq/device.h"
#include "hcq/signal.h"
#include "nv/nv_hcq.h"
#include "nv/nv_internal.h"
#include "nv/nv_rt.h"

static const char *ADD = "(kernel add (let o (buf 0 float32 256)) (let a (buf 1 float32 256)) (let b (buf 2 float32 256))"
                         " (let r (range 0 256 loop)) (sink (store (index o r) (+ (load (index a r)) (load (index b r))) r)))";

static void check_branch(const char *version) {
  ntu_env e;
  ntu_open(&e, &(nv_mock_config){.version = version, .arch = NV_MOCK_HOPPER, .gpu_count = 2});
  unsigned n = 0;
  CHECK_OK(hcq_rt_device_count("nv", &n));
  CHECK_EQ_INT(n, 2);
  hcq_device_info info;
  CHECK_OK(hcq_rt_info(e.dev, &info));
  CHECK_EQ_STR(info.name, "NV:0");
  CHECK_EQ_STR(info.backend, "nv");
  CHECK_EQ_STR(info.arch, "sm_90");
  CHECK_EQ_STR(info.target, "ptx:sm_90");
  CHECK(info.is_mock && (info.features & HCQ_FEATURE_COPY_QUEUE));
  CHECK_EQ_INT(ntu_run_text(e.dev, ADD, NULL, 1 << 20, version), 1);
  /* a second GPU beside the first: its own device, channels and doorbell token */
  hcq_rt_device *d1 = NULL;
  CHECK_OK(hcq_rt_open("nv:1", &d1));
  if (d1) CHECK_EQ_INT(ntu_run_text(d1, ADD, "", 1 << 20, "nv:1"), 1);
  CHECK_EQ_INT(ntu_run_text(e.dev, ADD, "", 1 << 20, "nv:0 again"), 1);
  hcq_rt_device *d2 = NULL;
  CHECK_ERR(hcq_rt_open("nv:2", &d2), HCQ_CODE_NOT_FOUND, "no GPU 2 (2 found)");
  hcq_rt_close(d1);
  ntu_close(&e);
}

static void check_load_errors(void) {
  ntu_env e;
  ntu_open(&e, &(nv_mock_config){.arch = NV_MOCK_HOPPER});
  if (!e.dev) return;
  hcq_rt_program *p = NULL;
  CHECK_OK(hcq_rt_program_compile(e.dev, ADD, NULL, &p));
  if (!p) return ntu_close(&e);
  hcq_program bad = *hcq_rt_program_desc(p);
  hcq_rt_kernel *k = NULL;
  snprintf(bad.target, sizeof bad.target, "ptx:sm_80");
  CHECK_ERR(hcq_rt_kernel_load(e.dev, &bad, &k), HCQ_CODE_UNSUPPORTED, "compiled for ptx:sm_80; NV:0 runs ptx:sm_90");
  bad = *hcq_rt_program_desc(p);
  snprintf(bad.symbol, sizeof bad.symbol, "nope");
  CHECK_ERR(hcq_rt_kernel_load(e.dev, &bad, &k), HCQ_CODE_NOT_FOUND, "nope");
  /* an sm_80 cubin whose target string claims sm_90: the cubin's e_flags decide */
  uop_ctx *ctx;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *sink;
  cc_program *cp = NULL;
  cc_target t80;
  CHECK_OK(cc_target_get("ptx:sm_80", 0, &t80));
  CHECK_OK(cc_kernel_parse(ctx, ADD, strlen(ADD), "add", &sink));
  CHECK_OK(cc_compile_source(ctx, sink, &t80, &(cc_options){0}, &cp));
  CHECK_OK(cp ? cc_compile_binary(&t80, cp) : HCQ_OK);
  hcq_program d80;
  CHECK_OK(cp ? cc_program_describe(cp, &t80, &d80) : HCQ_OK);
  snprintf(d80.target, sizeof d80.target, "ptx:sm_90");
  if (cp) CHECK_ERR(hcq_rt_kernel_load(e.dev, &d80, &k), HCQ_CODE_UNSUPPORTED, "cubin is for sm_80, not sm_90");
  cc_program_free(cp);
  uop_ctx_destroy(ctx);
  CHECK(k == NULL);
  /* without the PTX trailer the image is what hardware runs; the mock cannot run SASS and says so */
  bad = *hcq_rt_program_desc(p);
  const char *ptx;
  size_t cubin_B, ptx_B;
  cc_ptx_split(bad.binary, bad.binary_size_B, &cubin_B, &ptx, &ptx_B);
  CHECK(ptx != NULL && ptx_B > 0 && cubin_B < bad.binary_size_B);
  bad.binary_size_B = cubin_B;
  CHECK_OK(hcq_rt_kernel_load(e.dev, &bad, &k));
  hcq_rt_buffer *bufs[3] = {0};
  for (int i = 0; i < 3; i++) CHECK_OK(hcq_rt_buffer_alloc(e.dev, 1024, HCQ_RT_MEM_HOST_VISIBLE, &bufs[i]));
  hcq_status st = k ? hcq_rt_launch(k, bufs, 3, NULL, 0) : HCQ_OK;
  if (!st) st = hcq_rt_sync(e.dev, 5000);
  CHECK_ERR(st, HCQ_CODE_IO, "no PTX record below the program");
  hcq_rt_kernel_free(k);
  for (int i = 0; i < 3; i++) hcq_rt_buffer_free(bufs[i]);
  hcq_rt_program_free(p);
  ntu_close(&e);
}

static const char *FAULT = "(kernel oob (let o (buf 0 int32 8)) (let a (buf 1 int32 8)) (let r (range 0 8 loop))"
                           " (sink (store (index o r) (load (index a (+ r (* (cast index (- (load (index a r))"
                           " (const 1 int32))) (const 100000000 index))))) r)))";
static const char *FILL = "(kernel fill (let o (buf 0 int32 8)) (let a (buf 1 int32 8)) (let r (range 0 8 loop))"
                          " (sink (store (index o r) (+ (load (index a r)) (const 40 int32)) r)))";

/* Two different kernels queued, the first faulting (it reads 400 MB below its buffer): take_error (via
 * hcq_rt_sync) is Xid 31 by its nverror.h name and names the faulting kernel, not the one behind it, which never
 * runs (robust-channel recovery stops the channel group, as on hardware); later work is HCQ_CODE_DEVICE_LOST, and a
 * reopened device runs again. With the fault second (the first launch completes), the second is named, also when
 * launches from before two timeline wraps (the first at the same address) released larger values. */
static void check_fault_order(bool fault_first, bool wrap) {
  ntu_env e;
  ntu_open(&e, &(nv_mock_config){.arch = NV_MOCK_HOPPER});
  if (!e.dev) return;
  hcq_rt_program *p[2] = {0};
  hcq_rt_kernel *k[2] = {0};
  for (int i = 0; i < 2; i++) {
    CHECK_OK(hcq_rt_program_compile(e.dev, i ? FILL : FAULT, "", &p[i]));
    CHECK_OK(p[i] ? hcq_rt_kernel_load(e.dev, hcq_rt_program_desc(p[i]), &k[i]) : HCQ_OK);
  }
  hcq_rt_buffer *bufs[2] = {0}, *out[2] = {0};
  for (int i = 0; i < 2; i++) CHECK_OK(hcq_rt_buffer_alloc(e.dev, 32, HCQ_RT_MEM_HOST_VISIBLE, &bufs[i]));
  CHECK_OK(hcq_rt_buffer_alloc(e.dev, 32, HCQ_RT_MEM_HOST_VISIBLE, &out[0]));
  out[1] = bufs[1];
  if (!k[0] || !k[1]) goto done;
  if (wrap) {
    /* fill runs just before each of two timeline wraps: its releases (2^31) stay in the channel, the first at the
     * address the timeline has again after the second wrap, where values restart: they are from an older round and
     * must not pass for the first launch the timeline has not reached */
    hcq_device *d = hcq_rt_lower(e.dev);
    uint64_t tl0 = d->timeline->va, wraps = d->timeline_wraps;
    for (int r = 0; r < 2; r++) {
      d->timeline_value = HCQ_TIMELINE_WRAP_AT; /* as if 2^31 submissions went by */
      hcq_signal_set(d->timeline, HCQ_TIMELINE_WRAP_AT - 1);
      CHECK_OK(hcq_rt_launch(k[1], out, 2, NULL, 0));
      CHECK_OK(hcq_rt_sync(e.dev, 5000));
    }
    CHECK(d->timeline->va == tl0 && d->timeline_value == 1 && d->timeline_wraps == wraps + 2);
    CHECK_OK(hcq_rt_launch(k[0], bufs, 2, NULL, 0));
  } else if (fault_first) {
    CHECK_OK(hcq_rt_launch(k[0], bufs, 2, NULL, 0));
    CHECK_OK(hcq_rt_launch(k[1], out, 2, NULL, 0)); /* queued behind the fault */
  } else {
    CHECK_OK(hcq_rt_launch(k[1], out, 2, NULL, 0));
    CHECK_OK(hcq_rt_sync(e.dev, 5000));
    CHECK_OK(hcq_rt_launch(k[0], bufs, 2, NULL, 0));
  }
  hcq_status st = hcq_rt_sync(e.dev, 5000);
  printf("take_error: %s\n", hcq_status_message(st));
  CHECK_EQ_INT(hcq_status_code(st), HCQ_CODE_KERNEL_FAULT);
  const char *msg = hcq_status_message(st);
  CHECK(strstr(msg, "kernel 'oob'") && !strstr(msg, "'fill'"));
  CHECK(strstr(msg, "Xid 31 ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT") && strstr(msg, "compute channel 0x"));
  CHECK(strstr(msg, fault_first && !wrap ? "1 later launch never ran" : "nothing was queued behind it") != NULL);
  CHECK(strstr(msg, "open it again") != NULL);
  hcq_status_free(st);
  CHECK(strstr(nv_mock_last_fault(e.m), "kernel oob") && strstr(nv_mock_last_fault(e.m), "MMU fault"));
  /* fill wrote 40 (its inputs are zero) only when it ran before the fault */
  CHECK_EQ_INT(((int32_t *)hcq_rt_buffer_host(out[0]))[7], fault_first && !wrap ? 0 : 40);
  CHECK_ERR(hcq_rt_sync(e.dev, 5000), HCQ_CODE_DEVICE_LOST, "close the device and open it again");
  CHECK_ERR(hcq_rt_launch(k[1], out, 2, NULL, 0), HCQ_CODE_DEVICE_LOST, "was stopped by Xid 31");
done:
  for (int i = 0; i < 2; i++) hcq_rt_kernel_free(k[i]), hcq_rt_program_free(p[i]), hcq_rt_buffer_free(bufs[i]);
  hcq_rt_buffer_free(out[0]);
  hcq_rt_close(e.dev);
  /* reopened: the device runs again */
  e.dev = NULL;
  CHECK_OK(hcq_rt_open("nv:0", &e.dev));
  if (e.dev) CHECK_EQ_INT(ntu_run_text(e.dev, ADD, "", 1 << 20, "after reopening"), 1);
  ntu_close(&e);
}

/* The faulting kernel is found in the push buffers still in the channel, decoded at fault time: with far more than
 * 64 launches queued behind it (all counted), and right after the command ring wrapped, where the older GPFIFO
 * entries point at words the newer submissions overwrote (those must not be decoded as launches again). */
static void check_fault_after_cmd_wrap(void) {
  ntu_env e;
  ntu_open(&e, &(nv_mock_config){.arch = NV_MOCK_HOPPER});
  if (!e.dev) return;
  hcq_rt_program *p[2] = {0};
  hcq_rt_kernel *k[2] = {0};
  hcq_rt_buffer *bufs[2] = {0}, *out[2] = {0};
  for (int i = 0; i < 2; i++) {
    CHECK_OK(hcq_rt_program_compile(e.dev, i ? FILL : FAULT, "", &p[i]));
    CHECK_OK(p[i] ? hcq_rt_kernel_load(e.dev, hcq_rt_program_desc(p[i]), &k[i]) : HCQ_OK);
    CHECK_OK(hcq_rt_buffer_alloc(e.dev, 32, HCQ_RT_MEM_HOST_VISIBLE, &bufs[i]));
  }
  CHECK_OK(hcq_rt_buffer_alloc(e.dev, 32, HCQ_RT_MEM_HOST_VISIBLE, &out[0]));
  out[1] = bufs[1];
  if (!k[0] || !k[1] || !out[0]) goto done;
  const nv_chan *c = &nv_hcq_dev(hcq_rt_lower(e.dev))->compute;
  /* a kernel launched again waits for its previous launch (its arguments are rewritten), which a fault ends: each
   * launch queued behind the fault is another load of fill */
  enum { BEHIND = 70 };
  hcq_rt_kernel *behind[BEHIND] = {0};
  for (int n = 0; n < BEHIND; n++) CHECK_OK(hcq_rt_kernel_load(e.dev, hcq_rt_program_desc(p[1]), &behind[n]));
  /* fills until the command ring wraps (the wrapping submission lands at offset 0) */
  for (int n = 0; n < 100000; n++) {
    uint64_t off = c->cmd_off;
    CHECK_OK(hcq_rt_launch(k[1], out, 2, NULL, 0));
    if (c->cmd_off < off) break;
  }
  CHECK(c->cmd_off < c->cmd.size_B / 4 && c->nsubmits > 100);
  CHECK_OK(hcq_rt_launch(k[0], bufs, 2, NULL, 0));
  for (int n = 0; n < BEHIND; n++) CHECK_OK(behind[n] ? hcq_rt_launch(behind[n], out, 2, NULL, 0) : HCQ_OK);
  hcq_status st = hcq_rt_sync(e.dev, 20000);
  printf("take_error after the command ring wrapped: %s\n", hcq_status_message(st));
  CHECK_EQ_INT(hcq_status_code(st), HCQ_CODE_KERNEL_FAULT);
  char want[64];
  snprintf(want, sizeof want, "%d later launches never ran", BEHIND);
  CHECK(strstr(hcq_status_message(st), "kernel 'oob'") && strstr(hcq_status_message(st), want));
  hcq_status_free(st);
  for (int n = 0; n < BEHIND; n++) hcq_rt_kernel_free(behind[n]);
done:
  for (int i = 0; i < 2; i++) hcq_rt_kernel_free(k[i]), hcq_rt_program_free(p[i]), hcq_rt_buffer_free(bufs[i]);
  hcq_rt_buffer_free(out[0]);
  ntu_close(&e);
}

int main(void) {
  NV_TEST_NEEDS_64BIT("nv_rt_test");
  if (!kif_exists(kif_default(), "/dev/nvidiactl")) {
    unsigned n = 7;
    CHECK_ERR(hcq_rt_device_count("nv", &n), HCQ_CODE_NOT_FOUND, "HCQ_MOCK=nv");
    CHECK_EQ_INT(n, 0);
  }
  char ptxas[512];
  hcq_status st = cc_ptx_ptxas(ptxas, sizeof ptxas);
  if (st) {
    hcq_status_free(st);
    TEST_SKIP("needs ptxas (CUDA toolkit at /usr/local/cuda)");
  }
  static const char *const versions[] = {"570.86.16", "575.64.05", "580.95.05", "590.48.01"};
  for (size_t i = 0; i < 4; i++) check_branch(versions[i]);
  check_load_errors();
  check_fault_order(true, false);
  check_fault_order(false, false);
  check_fault_order(false, true); /* a launch from before a timeline wrap is not taken for the faulting one */
  check_fault_after_cmd_wrap();
  return testing_summary("emulator_tests/nv_rt_test");
}
