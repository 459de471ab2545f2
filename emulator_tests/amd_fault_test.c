/* A kernel that reads outside every allocation on the AMD mock: the interpreter's access is checked against the
 * mock's live allocations, KFD's memory-exception event carries the address, and hcq_rt_sync returns
 * HCQ_CODE_KERNEL_FAULT naming the kernel, the address and the queue. The driver recreates the stopped compute
 * queue past the faulting dispatch, so the same device then runs the same kernel with in-range indices (the gathered
 * values are computed here). With two different kernels queued, the first faulting, the message names the first (the
 * dispatch whose timeline value was not reached, not the last one queued) and the second still runs. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"
#include "compiler/cc_test_util.h"
#include "emulator_tests/amd_mock_exec.h"
#include "hcq/hcq.h"

static const char *k_gather = "(kernel gather (let o (buf 0 int32 8)) (let x (buf 1 int32 8)) (let ix (buf 2 int32 8))\n"
                              " (let r (range 0 8 loop))\n"
                              " (sink (store (index o r) (load (index x (cast index (load (index ix r))))) r)))\n";

static uint64_t g_x_va; /* x's address in the last run */

/* Launch gather with ix[i] = idx(i); returns the sync status; out gets o. */
static hcq_status run(hcq_rt_device *dev, int32_t (*idx)(int), int32_t out[8]) {
  hcq_rt_program *p = NULL;
  hcq_rt_kernel *k = NULL;
  hcq_rt_buffer *b[3] = {0};
  hcq_status st = hcq_rt_program_compile(dev, k_gather, NULL, &p);
  if (!st) st = hcq_rt_kernel_load(dev, hcq_rt_program_desc(p), &k);
  for (int i = 0; i < 3 && !st; i++) st = hcq_rt_buffer_alloc(dev, 32, HCQ_RT_MEM_HOST_VISIBLE, &b[i]);
  for (int i = 0; i < 8 && !st; i++) {
    ((int32_t *)hcq_rt_buffer_host(b[1]))[i] = 100 + i * i;
    ((int32_t *)hcq_rt_buffer_host(b[2]))[i] = idx(i);
  }
  if (!st) g_x_va = hcq_rt_buffer_va(b[1]);
  if (!st) st = hcq_rt_launch(k, b, 3, NULL, 0);
  if (!st) st = hcq_rt_sync(dev, 5000);
  if (!st) memcpy(out, hcq_rt_buffer_host(b[0]), 32);
  hcq_rt_kernel_free(k);
  hcq_rt_program_free(p);
  for (int i = 0; i < 3; i++) hcq_rt_buffer_free(b[i]);
  return st;
}

static int32_t far_idx(int i) { return i == 5 ? 0x10000000 : i; } /* 1 GiB past x: no allocation there */
static int32_t neg_idx(int i) { return i == 2 ? -0x08000000 : i; }
static int32_t rev_idx(int i) { return 7 - i; }

/* gather (faulting) then triple queued behind it: the fault names gather; triple's results are there after sync. */
static void test_two_kernels(hcq_rt_device *dev) {
  static const char *k_triple = "(kernel triple (let o (buf 0 int32 8)) (let x (buf 1 int32 8)) (let r (range 0 8 loop))\n"
                                " (sink (store (index o r) (* (load (index x r)) (const 3 int32)) r)))\n";
  hcq_rt_program *pg = NULL, *pt = NULL;
  hcq_rt_kernel *kg = NULL, *kt = NULL;
  hcq_rt_buffer *b[5] = {0};
  CHECK_OK(hcq_rt_program_compile(dev, k_gather, NULL, &pg));
  CHECK_OK(hcq_rt_program_compile(dev, k_triple, NULL, &pt));
  if (!pg || !pt) return;
  CHECK_OK(hcq_rt_kernel_load(dev, hcq_rt_program_desc(pg), &kg));
  CHECK_OK(hcq_rt_kernel_load(dev, hcq_rt_program_desc(pt), &kt));
  for (int i = 0; i < 5; i++) CHECK_OK(hcq_rt_buffer_alloc(dev, 32, HCQ_RT_MEM_HOST_VISIBLE, &b[i]));
  if (!kg || !kt || !b[4]) return;
  for (int i = 0; i < 8; i++) {
    ((int32_t *)hcq_rt_buffer_host(b[1]))[i] = 100 + i;
    ((int32_t *)hcq_rt_buffer_host(b[2]))[i] = far_idx(i);
    ((int32_t *)hcq_rt_buffer_host(b[4]))[i] = -7 * i + 1;
  }
  CHECK_OK(hcq_rt_launch(kg, b, 3, NULL, 0));
  hcq_rt_buffer *tb[2] = {b[3], b[4]};
  CHECK_OK(hcq_rt_launch(kt, tb, 2, NULL, 0));
  hcq_status st = hcq_rt_sync(dev, 5000);
  CHECK(st && !strstr(hcq_status_message(st), "triple")); /* not the last kernel queued */
  CHECK_ERR(st, HCQ_CODE_KERNEL_FAULT, "gather");
  for (int i = 0; i < 8; i++) CHECK_EQ_INT(((int32_t *)hcq_rt_buffer_host(b[3]))[i], (-7 * i + 1) * 3);
  CHECK_OK(hcq_rt_launch(kt, tb, 2, NULL, 0)); /* and once more, no error left */
  CHECK_OK(hcq_rt_sync(dev, 5000));
  /* two faulting dispatches back to back, then triple: one report, each restart goes past its own dispatch */
  hcq_rt_kernel *kg2 = NULL;
  CHECK_OK(hcq_rt_kernel_load(dev, hcq_rt_program_desc(pg), &kg2));
  memset(hcq_rt_buffer_host(b[3]), 0, 32);
  CHECK_OK(hcq_rt_launch(kg, b, 3, NULL, 0));
  CHECK_OK(hcq_rt_launch(kg2, b, 3, NULL, 0));
  CHECK_OK(hcq_rt_launch(kt, tb, 2, NULL, 0));
  CHECK_ERR(hcq_rt_sync(dev, 5000), HCQ_CODE_KERNEL_FAULT, "gather");
  for (int i = 0; i < 8; i++) CHECK_EQ_INT(((int32_t *)hcq_rt_buffer_host(b[3]))[i], (-7 * i + 1) * 3);
  CHECK_OK(hcq_rt_sync(dev, 5000));
  hcq_rt_kernel_free(kg2);
  hcq_rt_kernel_free(kg);
  hcq_rt_kernel_free(kt);
  hcq_rt_program_free(pg);
  hcq_rt_program_free(pt);
  for (int i = 0; i < 5; i++) hcq_rt_buffer_free(b[i]);
}

int main(void) {
  if (!tu_have("clang-19") || !tu_have("ld.lld-19")) {
    fprintf(stderr, "SKIP: clang-19 or ld.lld-19 missing\n");
    return 77;
  }
  CHECK_OK(amd_mock_install(kif_default()));
  int32_t (*bad[])(int) = {far_idx, neg_idx};
  for (int t = 0; t < 2; t++) {
    hcq_rt_device *dev;
    CHECK_OK(hcq_rt_open("amd:0", &dev));
    int32_t out[8];
    hcq_status st = run(dev, bad[t], out);
    if (t == 0) { /* the event carries the faulting data address: x + 4 * 0x10000000 */
      const char *at = strstr(hcq_status_message(st), "fault at 0x");
      uint64_t va = at ? strtoull(at + 9, NULL, 16) : 0;
      CHECK(va >= g_x_va + 0x40000000ull && va < g_x_va + 0x40000000ull + 64);
    }
    CHECK_ERR(st, HCQ_CODE_KERNEL_FAULT, "GPU page fault at 0x");
    hcq_rt_close(dev);
  }
  /* each message names the kernel, the address and the queue */
  hcq_rt_device *dev;
  CHECK_OK(hcq_rt_open("amd:0", &dev));
  int32_t out[8];
  hcq_status st = run(dev, far_idx, out);
  const char *msg = hcq_status_message(st);
  CHECK(strstr(msg, "kernel gather") && strstr(msg, "queue") && strstr(msg, "keeps working"));
  hcq_status_free(st);
  CHECK_OK(hcq_rt_sync(dev, 5000)); /* reported once */
  CHECK_OK(run(dev, rev_idx, out)); /* the same device works on */
  for (int i = 0; i < 8; i++) CHECK_EQ_INT(out[i], 100 + (7 - i) * (7 - i));
  test_two_kernels(dev);
  hcq_rt_close(dev);
  amd_mock_uninstall();
  return testing_summary("amd_fault");
}
