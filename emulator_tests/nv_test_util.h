/* Test helpers for the NV mock through the public runtime API (header-only, for emulator_tests/nv_*_test.c): a
 * Hopper mock with the PTX runner attached to kif_default(), so hcq_rt_open("nv:0") reaches it as it would reach
 * /dev/nvidia*, and one kernel run on it compared with the reference interpreter (compiler/examples_test_util.h). */
#ifndef HCQ_EMU_NV_TEST_UTIL_H
#define HCQ_EMU_NV_TEST_UTIL_H

#include <time.h>

#include "compiler/examples_test_util.h"
#include "emulator_tests/nv_mock_ptx.h"
#include "hcq/hcq.h"

typedef struct ntu_env {
  nv_mock *m;
  nv_mock_ptx *ptx;
  hcq_rt_device *dev;
} ntu_env;

static inline void ntu_open(ntu_env *e, const nv_mock_config *cfg) {
  memset(e, 0, sizeof *e);
  CHECK_OK(nv_mock_create(cfg, &e->m));
  CHECK_OK(nv_mock_ptx_create(&e->ptx));
  if (!e->m || !e->ptx) return;
  CHECK_OK(nv_mock_attach(e->m, kif_default()));
  nv_mock_set_launch_hook(e->m, nv_mock_ptx_launch, e->ptx);
  hcq_status st = hcq_rt_open("nv:0", &e->dev);
  /* qemu-user places MAP_FIXED_NOREPLACE mappings elsewhere: the driver cannot reserve its GPU VA windows there */
  if (st && getenv("HCQ_QEMU_USER") && strstr(hcq_status_message(st), "cannot reserve")) {
    printf("skipped: %s (qemu-user does not honour MAP_FIXED_NOREPLACE)\n", hcq_status_message(st));
    hcq_status_free(st);
    exit(77);
  }
  CHECK_OK(st);
}

/* Closes the device, then checks that the driver left no RM object or UVM range behind. */
static inline void ntu_close(ntu_env *e) {
  hcq_rt_close(e->dev);
  if (e->m) {
    CHECK_EQ_INT(nv_mock_live_objects(e->m), 0);
    CHECK_EQ_INT(nv_mock_live_ranges(e->m), 0);
    CHECK_OK(nv_mock_detach(e->m));
  }
  nv_mock_destroy(e->m);
  nv_mock_ptx_destroy(e->ptx);
}

/* Compile `text` for the device with opts (NULL: heuristic, "": none), run it once on filled buffers and compare with
 * the reference interpreter. Returns 1 when run, 0 when skipped (buffers over limit_B), -1 on an error (reported). */
static inline int ntu_run_text(hcq_rt_device *dev, const char *text, const char *opts, size_t limit_B,
                               const char *label) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *sink = NULL;
  cc_kbuf *ref = NULL, *got = NULL;
  size_t nref = 0, ngot = 0, total = 0;
  hcq_rt_program *p = NULL;
  hcq_rt_kernel *k = NULL;
  hcq_rt_buffer *bufs[16] = {0};
  int ret = -1;
  hcq_status st = cc_kernel_parse(ctx, text, strlen(text), label, &sink);
  if (!st) st = cc_kernel_buffers(sink, &ref, &nref);
  if (!st) st = cc_kernel_buffers(sink, &got, &ngot);
  for (size_t i = 0; !st && i < nref; i++) total += ref[i].size_B;
  if (!st && (total > limit_B || nref > 16)) {
    ret = 0;
    goto done;
  }
  if (!st) st = hcq_rt_program_compile(dev, text, opts, &p);
  if (!st) st = hcq_rt_kernel_load(dev, hcq_rt_program_desc(p), &k);
  etu_run r = {0};
  if (!st) etu_reference(ctx, sink, ref, nref, got, ngot, &r);
  size_t nb = st ? 0 : hcq_program_nbufs(hcq_rt_kernel_program(k));
  for (size_t i = 0; !st && i < nb; i++) {
    size_t sz = 4;
    for (size_t j = 0; j < ngot; j++)
      if ((size_t)got[j].slot == i) sz = got[j].size_B;
    st = hcq_rt_buffer_alloc(dev, sz, HCQ_RT_MEM_HOST_VISIBLE, &bufs[i]);
    for (size_t j = 0; !st && j < ngot; j++)
      if ((size_t)got[j].slot == i) memcpy(hcq_rt_buffer_host(bufs[i]), got[j].data, got[j].size_B);
  }
  hcq_var vars[8];
  for (size_t i = 0; i < r.nvals && i < 8; i++) vars[i] = (hcq_var){r.vals[i].name, r.vals[i].value};
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (!st) st = hcq_rt_launch(k, bufs, nb, vars, r.nvals);
  if (!st) st = hcq_rt_sync(dev, 60000);
  for (size_t j = 0; !st && j < ngot; j++)
    if ((size_t)got[j].slot < nb) memcpy(got[j].data, hcq_rt_buffer_host(bufs[got[j].slot]), got[j].size_B);
  if (!st) {
    etu_compare(ref, nref, got, &r);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("%-34.34s %-9s %zu elements, %zu mismatches, max float error %.3g (%.0f ms)\n", label,
           !opts ? "heuristic" : *opts ? opts : "noopt", r.checked, r.bad, r.worst,
           (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
    CHECK_EQ_INT(r.bad, 0);
    ret = 1;
  }
done:
  if (st) {
    fprintf(stderr, "%s (%s): %s\n", label, !opts ? "heuristic" : *opts ? opts : "noopt", hcq_status_message(st));
    CHECK(!"nv run");
    hcq_status_free(st);
  }
  for (int i = 0; i < 16; i++) hcq_rt_buffer_free(bufs[i]);
  hcq_rt_kernel_free(k);
  hcq_rt_program_free(p);
  if (ref) cc_kbufs_free(ref, nref);
  if (got) cc_kbufs_free(got, ngot);
  uop_ctx_destroy(ctx);
  return ret;
}

#endif
