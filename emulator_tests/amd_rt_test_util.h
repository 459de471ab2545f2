/* Test helpers for the AMD mock end-to-end tests (header-only, for *_test.c): run a kernel's text on an hcq_rt
 * device (compile for its target, load, launch on deterministically filled buffers, sync) and compare with the
 * reference interpreter by the examples' rule (compiler/examples_test_util.h). */
#ifndef HCQ_EMU_AMD_RT_TEST_UTIL_H
#define HCQ_EMU_AMD_RT_TEST_UTIL_H

#include <string.h>

#include "compiler/examples_test_util.h"
#include "emulator_tests/amd_mock_exec.h"
#include "hcq/hcq.h"

/* ART_REFUSED: the compiler or the runtime refused the kernel as unsupported (HCQ_CODE_UNSUPPORTED at compile). */
typedef enum { ART_OK, ART_SKIPPED_SIZE, ART_SKIPPED_BUDGET, ART_REFUSED, ART_FAILED } art_result;

/* Run `text` (already parsed as sink in ctx) with opts (NULL heuristic, "" none, or an opt list) on dev.
 * Buffers over limit_B in total are not run. A dispatch stopped by the mock's budget is ART_SKIPPED_BUDGET (the
 * caller must reopen the device). r gets the comparison. */
static inline art_result art_run(hcq_rt_device *dev, uop_ctx *ctx, const uop *sink, const char *text,
                                 const char *opts, size_t limit_B, const char *what, etu_run *r) {
  cc_kbuf *ref = NULL, *got = NULL;
  size_t nref = 0, ngot = 0;
  art_result res = ART_FAILED;
  hcq_rt_program *p = NULL;
  hcq_rt_kernel *k = NULL;
  hcq_rt_buffer *bufs[16] = {0};
  hcq_status st = cc_kernel_buffers(sink, &ref, &nref);
  if (st && strstr(hcq_status_message(st), "a too large size")) {
    /* a buffer beyond this host's size_t (big_int64's 3 GiB on a 32-bit host): over any limit */
    hcq_status_free(st);
    return ART_SKIPPED_SIZE;
  }
  if (!st) st = cc_kernel_buffers(sink, &got, &ngot);
  size_t total = 0;
  for (size_t i = 0; !st && i < nref; i++) total += ref[i].size_B;
  if (!st && total > limit_B) {
    res = ART_SKIPPED_SIZE;
    goto done;
  }
  if (!st && nref > 16) st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "%zu buffers", nref);
  if (st) goto done;
  etu_reference(ctx, sink, ref, nref, got, ngot, r);
  st = hcq_rt_program_compile(dev, text, opts, &p);
  if (st && hcq_status_code(st) == HCQ_CODE_UNSUPPORTED) res = ART_REFUSED;
  if (!st) st = hcq_rt_kernel_load(dev, hcq_rt_program_desc(p), &k);
  for (size_t i = 0; !st && i < ngot; i++) {
    st = hcq_rt_buffer_alloc(dev, got[i].size_B ? got[i].size_B : 1, HCQ_RT_MEM_HOST_VISIBLE, &bufs[i]);
    if (!st) memcpy(hcq_rt_buffer_host(bufs[i]), got[i].data, got[i].size_B);
  }
  hcq_var vars[8];
  for (size_t i = 0; i < r->nvals; i++) vars[i] = (hcq_var){r->vals[i].name, r->vals[i].value};
  if (!st) st = hcq_rt_launch(k, bufs, ngot, vars, r->nvals);
  if (!st) st = hcq_rt_sync(dev, 60000);
  amd_mock_exec *x = NULL;
  amd_mock_installed(&x);
  if (st && x && hcq_status_code(st) == HCQ_CODE_KERNEL_FAULT &&
      strstr(amd_mock_exec_last_failure(x, true), "over its budget")) {
    res = ART_SKIPPED_BUDGET;
    goto done;
  }
  if (st) {
    if (res != ART_REFUSED) res = ART_FAILED;
    goto done;
  }
  for (size_t i = 0; i < ngot; i++) memcpy(got[i].data, hcq_rt_buffer_host(bufs[i]), got[i].size_B);
  etu_compare(ref, nref, got, r);
  res = r->bad ? ART_FAILED : ART_OK;
done:
  if (st && res != ART_SKIPPED_BUDGET && res != ART_REFUSED) fprintf(stderr, "%s: %s\n", what, hcq_status_message(st));
  hcq_status_free(st);
  hcq_rt_kernel_free(k);
  hcq_rt_program_free(p);
  for (size_t i = 0; i < 16; i++) hcq_rt_buffer_free(bufs[i]);
  if (ref) cc_kbufs_free(ref, nref);
  if (got) cc_kbufs_free(got, ngot);
  return res;
}

#endif
