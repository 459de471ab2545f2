/* Test helpers for the AMD mock end-to-end tests (header-only, for *_test.c): run a kernel's text on an hcq_rt
 * device (compile for its target, load, launch on deterministically filled buffers, sync) and compare with the
 * reference interpreter by the examples' rule (compiler/examples_test_util.h); set up and tear down a KFD mock;
 * a raw PM4 dispatch that waits for its signal or the mock's failure. */
#ifndef HCQ_EMU_AMD_RT_TEST_UTIL_H
#define HCQ_EMU_AMD_RT_TEST_UTIL_H

#include <string.h>
#include <time.h>

#include "amd/amd_dispatch.h"
#include "amd/amd_hcq.h"
#include "autogen/amd_regs_gfx11.h"
#include "compiler/examples_test_util.h"
#include "emulator_tests/amd_mock_exec.h"
#include "emulator_tests/kfd_mock.h"
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

/* A KFD mock of `arch` on a kif of its own, with the RDNA3 executor attached (with_exec) and an amd_hcq opened
 * (with_hcq); false when the hcq did not open. Members not asked for stay NULL. */
typedef struct art_mock {
  kif *k;
  kfd_mock *m;
  amd_mock_exec *x;
  amd_hcq *h;
} art_mock;

static inline bool art_mock_up(art_mock *e, const char *arch, bool with_exec, bool with_hcq) {
  memset(e, 0, sizeof *e);
  CHECK_OK(kif_create(&e->k));
  CHECK_OK(kfd_mock_create(&(kfd_mock_config){.arch = arch}, &e->m));
  if (with_exec) CHECK_OK(amd_mock_exec_attach(e->m, &e->x));
  CHECK_OK(kfd_mock_attach(e->m, e->k));
  if (with_hcq) CHECK_OK(amd_hcq_open(e->k, 0, NULL, &e->h));
  return !with_hcq || e->h != NULL;
}

/* Closes the hcq if open; a caller's amd_device must be closed first. */
static inline void art_mock_down(art_mock *e) {
  if (e->h) amd_hcq_close(e->h);
  CHECK_OK(kfd_mock_detach(e->m));
  kfd_mock_destroy(e->m);
  if (e->x) amd_mock_exec_free(e->x);
  kif_destroy(e->k);
}

/* A raw PM4 dispatch of k on d's compute ring, then a RELEASE_MEM that writes 1 to *sig (cleared first); waits
 * (up to 20 s: a 1 MiB program decodes slowly under ASan) for the signal or the mock's failure. Returns "" when
 * it ran to its signal, else the mock's failure text (or "timed out"). */
static inline const char *art_dispatch_wait(amd_device *d, amd_mock_exec *x, const amd_dispatch_desc *k,
                                            volatile uint32_t *sig) {
  uint32_t w[256];
  amd_cmdbuf b = {.w = w, .cap = 256};
  __atomic_store_n(sig, 0, __ATOMIC_RELEASE);
  CHECK_OK(amd_pm4_dispatch(&b, d, k, NULL));
  amd_pm4_release_mem(&b, false, (uint64_t)(uintptr_t)sig, 1, AMD_RELEASE_DATA32, true, 0);
  CHECK_OK(amd_ring_submit(d, &d->compute, b.w, b.n, NULL, 0));
  for (int i = 0; i < 200000; i++) {
    if (__atomic_load_n(sig, __ATOMIC_ACQUIRE) == 1) return "";
    const char *e = amd_mock_exec_last_failure(x, false);
    if (*e) return amd_mock_exec_last_failure(x, true);
    nanosleep(&(struct timespec){0, 100000}, NULL);
  }
  return "timed out";
}

/* art_dispatch_wait of one gfx11 wave32 of 32 lanes of the code at code_va, with s[0:1] = out_va. */
static inline const char *art_dispatch_wave32(amd_device *d, amd_mock_exec *x, uint64_t code_va, uint64_t out_va,
                                              volatile uint32_t *sig) {
  amd_dispatch_desc k = {.code_va = code_va, .rsrc2 = 2u << AMD_GFX11_COMPUTE_PGM_RSRC2__USER_SGPR__SHIFT,
                         .wave32 = true, .user_sgpr = {(uint32_t)out_va, (uint32_t)(out_va >> 32)},
                         .user_sgpr_count = 2, .local = {32, 1, 1}, .grid = {1, 1, 1}};
  return art_dispatch_wait(d, x, &k, sig);
}

#endif
