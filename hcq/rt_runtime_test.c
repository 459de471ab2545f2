/* The runtime layer on the cpu device: open by name, compile kernel text, launch again and again with fresh
 * buffers and variable values (a replay of one recorded queue), results against a host computation, and every
 * refused argument (names, counts, sizes, ranges) refused before anything is queued. */
#include <stdlib.h>
#include <string.h>

#include "hcq/device.h"
#include "base/testing.h"
#include "hcq/hcq.h"

#define TIMEOUT_MS 10000
#define N 4096

static const char *axpy =
    "(kernel axpy\n"
    "  (let y (buf 0 int32 4096))\n"
    "  (let x (buf 1 int32 4096))\n"
    "  (let n (var n 1 4096 index))\n"
    "  (let r0 (range 0 n loop))\n"
    "  (let yi (index y r0))\n"
    "  (sink (store yi (+ (* (load (index x r0)) (const 3 int32)) (load yi)) r0)))\n";

static void test_open(void) {
  hcq_rt_device *d = NULL;
  CHECK_ERR(hcq_rt_open("nosuch", &d), HCQ_CODE_NOT_FOUND, "no device backend 'nosuch' (known: cpu");
  CHECK_ERR(hcq_rt_open("cpu:1", &d), HCQ_CODE_NOT_FOUND, "cpu:1 does not exist");
  CHECK_ERR(hcq_rt_open("cpu:x", &d), HCQ_CODE_INVALID, "BACKEND:INDEX");
  CHECK_ERR(hcq_rt_open("cpu:-1", &d), HCQ_CODE_INVALID, "BACKEND:INDEX");
  CHECK(d == NULL);
  CHECK_OK(hcq_rt_open("cpu:0", &d));
  hcq_device_info info;
  CHECK_OK(hcq_rt_info(d, &info));
  CHECK_EQ_STR(info.backend, "cpu");
  CHECK_EQ_STR(info.target, "c");
  CHECK(!info.is_mock);
  CHECK(info.features & HCQ_FEATURE_KERNEL_FAULTS);
  hcq_rt_close(d);
}

static void test_launch_replay(void) {
  hcq_rt_device *d;
  CHECK_OK(hcq_rt_open("cpu", &d));
  hcq_rt_program *p;
  CHECK_OK(hcq_rt_program_compile(d, axpy, NULL, &p));
  if (!p) return hcq_rt_close(d);
  const hcq_program *desc = hcq_rt_program_desc(p);
  CHECK_EQ_INT(hcq_program_nbufs(desc), 2);
  CHECK_EQ_INT(hcq_program_nvars(desc), 1);
  CHECK_EQ_INT(desc->params[0].access, HCQ_ACCESS_READ | HCQ_ACCESS_WRITE);
  CHECK_EQ_INT(desc->params[1].access, HCQ_ACCESS_READ);
  hcq_rt_kernel *k;
  CHECK_OK(hcq_rt_kernel_load(d, desc, &k));
  hcq_rt_program_free(p); /* the kernel keeps what it needs */
  enum { NB = 3 };
  hcq_rt_buffer *b[NB];
  int32_t *want = calloc(NB * N, sizeof *want);
  for (int i = 0; i < NB; i++) {
    CHECK_OK(hcq_rt_buffer_alloc(d, N * 4, HCQ_RT_MEM_HOST_VISIBLE, &b[i]));
    int32_t *h = hcq_rt_buffer_host(b[i]);
    for (int e = 0; e < N; e++) h[e] = want[i * N + e] = (int32_t)(e * 7 - i * 1000 + (e % 3 ? INT32_MAX / 5 : 0));
  }
  /* 12 launches, each with another (y, x) pair and n, queued without waiting in between */
  uint64_t words = 0;
  for (int r = 0; r < 12; r++) {
    int yi = r % NB, xi = (r + 1 + r / NB) % NB, n = r == 5 ? 4096 : 1 + (r * 977) % N;
    if (xi == yi) xi = (xi + 1) % NB;
    hcq_rt_buffer *args[2] = {b[yi], b[xi]};
    CHECK_OK(hcq_rt_launch(k, args, 2, &(hcq_var){"n", n}, 1));
    for (int e = 0; e < n; e++)
      want[yi * N + e] = (int32_t)((uint32_t)want[xi * N + e] * 3u + (uint32_t)want[yi * N + e]);
    uint64_t now = hcq_rt_kernel_words_written(k);
    if (r > 0) CHECK(now - words <= 8); /* buffer addresses, n, the timeline values: never the whole stream */
    words = now;
  }
  CHECK_OK(hcq_rt_sync(d, TIMEOUT_MS));
  int bad = 0;
  for (int i = 0; i < NB; i++) bad += memcmp(hcq_rt_buffer_host(b[i]), &want[i * N], N * 4) != 0;
  CHECK_EQ_INT(bad, 0);
  CHECK(hcq_rt_kernel_last_ms(k) >= 0);

  /* refused arguments: nothing queued */
  hcq_device *lower = hcq_rt_lower(d);
  uint64_t tl = lower->timeline_value;
  hcq_rt_buffer *small, *args[2] = {b[0], b[1]};
  CHECK_OK(hcq_rt_buffer_alloc(d, N * 4 - 4, HCQ_RT_MEM_HOST_VISIBLE, &small));
  CHECK_ERR(hcq_rt_launch(k, args, 1, &(hcq_var){"n", 1}, 1), HCQ_CODE_INVALID, "takes 2 buffers, 1 given");
  CHECK_ERR(hcq_rt_launch(k, args, 2, NULL, 0), HCQ_CODE_NOT_FOUND, "needs variable n (1..4096)");
  CHECK_ERR(hcq_rt_launch(k, args, 2, &(hcq_var){"n", 0}, 1), HCQ_CODE_INVALID, "outside its declared range 1..4096");
  CHECK_ERR(hcq_rt_launch(k, args, 2, &(hcq_var){"n", 4097}, 1), HCQ_CODE_INVALID, "outside its declared range");
  args[1] = small;
  CHECK_ERR(hcq_rt_launch(k, args, 2, &(hcq_var){"n", 1}, 1), HCQ_CODE_INVALID, "buffer slot 1 has 16380 bytes");
  args[1] = NULL;
  CHECK_ERR(hcq_rt_launch(k, args, 2, &(hcq_var){"n", 1}, 1), HCQ_CODE_INVALID, "buffer slot 1 is NULL");
  CHECK_ERR(hcq_rt_buffer_alloc(d, 64, 1u << 9, &small), HCQ_CODE_INVALID, "placement flags");
  CHECK_EQ_INT(lower->timeline_value, tl);
  CHECK_OK(hcq_rt_sync(d, TIMEOUT_MS));
  /* a buffer of another device */
  hcq_rt_device *d2;
  CHECK_OK(hcq_rt_open("cpu", &d2));
  hcq_rt_buffer *other;
  CHECK_OK(hcq_rt_buffer_alloc(d2, N * 4, HCQ_RT_MEM_HOST_VISIBLE, &other));
  args[1] = other;
  CHECK_ERR(hcq_rt_launch(k, args, 2, &(hcq_var){"n", 1}, 1), HCQ_CODE_INVALID, "belongs to another device");
  hcq_rt_close(d2); /* frees `other` */
  /* free while queued: retired on the timeline, the launch still sees its memory */
  args[1] = b[1];
  CHECK_OK(hcq_rt_launch(k, args, 2, &(hcq_var){"n", N}, 1));
  hcq_rt_buffer_free(b[1]);
  hcq_rt_kernel_free(k);
  CHECK_OK(hcq_rt_sync(d, TIMEOUT_MS));
  CHECK_EQ_INT(lower->nretire, 0);
  free(want);
  hcq_rt_close(d); /* frees the rest */
}

static void test_program_errors(void) {
  hcq_rt_device *d;
  CHECK_OK(hcq_rt_open("cpu", &d));
  hcq_rt_program *p = NULL;
  CHECK_ERR(hcq_rt_program_compile(d, "(kernel k", NULL, &p), HCQ_CODE_PARSE, "kernel text");
  CHECK_ERR(hcq_rt_program_compile(d, axpy, "BOGUS:0:1", &p), HCQ_CODE_PARSE, "expected an opt name");
  uint8_t junk[64] = "HCQ";
  CHECK_ERR(hcq_rt_program_from_image(junk, sizeof junk, &p), HCQ_CODE_INVALID, "not an hcq kernel image");
  CHECK(p == NULL);
  CHECK_OK(hcq_rt_program_compile(d, axpy, "", &p));
  hcq_program bad = *hcq_rt_program_desc(p);
  hcq_rt_kernel *k = NULL;
  snprintf(bad.target, sizeof bad.target, "ptx:sm_90");
  CHECK_ERR(hcq_rt_kernel_load(d, &bad, &k), HCQ_CODE_UNSUPPORTED, "compiled for ptx:sm_90");
  bad = *hcq_rt_program_desc(p);
  snprintf(bad.symbol, sizeof bad.symbol, "not_there");
  CHECK_ERR(hcq_rt_kernel_load(d, &bad, &k), HCQ_CODE_NOT_FOUND, "not_there");
  bad = *hcq_rt_program_desc(p);
  bad.binary_size_B = 16;
  hcq_status st = hcq_rt_kernel_load(d, &bad, &k);
  CHECK(st != NULL);
  hcq_status_free(st);
  bad = *hcq_rt_program_desc(p);
  bad.params[0].offset_B = 4;
  CHECK_ERR(hcq_rt_kernel_load(d, &bad, &k), HCQ_CODE_INVALID, "overlap");
  CHECK(k == NULL);
  hcq_rt_program_free(p);
  hcq_rt_close(d);
}

int main(void) {
  test_open();
  test_launch_replay();
  test_program_errors();
  return testing_summary("rt_runtime_test");
}
