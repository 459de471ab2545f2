/* nv/ on a real NVIDIA GPU (skipped, exit 77, where /dev/nvidiactl does not exist): the init sequence, memory of
 * each kind, a copy-engine copy checked byte for byte, a cross-channel semaphore wait, and two measured numbers
 * (semaphore round trip through GPFIFO + doorbell, copy bandwidth). Prints a short report. */
#include <string.h>
#include <time.h>

#include "base/testing.h"
#include "nv/nv_dev.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(void) {
  kif *k;
  CHECK_OK(kif_create(&k));
  if (!k || !kif_exists(k, "/dev/nvidiactl") || !kif_exists(k, "/dev/nvidia-uvm")) {
    fprintf(stderr, "nv_hw_check: SKIPPED (no /dev/nvidiactl or /dev/nvidia-uvm)\n");
    kif_destroy(k);
    return 77;
  }
  nv_dev *d = NULL;
  CHECK_OK(nv_dev_open(k, 0, &d));
  if (!d) return testing_summary("nv_hw_check");
  printf("driver %s (layout %s), target %s, classes compute 0x%x copy 0x%x gpfifo 0x%x usermode 0x%x\n",
         nv_dev_version(d), nv_dev_layout(d)->branch, nv_dev_target(d), nv_dev_class(d, 'c'), nv_dev_class(d, 'd'),
         nv_dev_class(d, 'g'), nv_dev_class(d, 'u'));
  const uint64_t n = 64u << 20;
  nv_mem src, dst, sig, gpu;
  CHECK_OK(nv_mem_alloc(d, n, NV_MEM_CPU, &src));
  CHECK_OK(nv_mem_alloc(d, n, NV_MEM_CPU, &dst));
  CHECK_OK(nv_mem_alloc(d, 0x1000, NV_MEM_HOST, &sig));
  CHECK_OK(nv_mem_alloc(d, n, 0, &gpu));
  if (src.cpu && dst.cpu && sig.cpu && gpu.va) {
    for (uint64_t i = 0; i < n / 4; i++) ((uint32_t *)src.cpu)[i] = (uint32_t)(i * 2654435761u);
    memset(dst.cpu, 0, n);
    volatile uint64_t *s = sig.cpu;
    uint32_t w[128];
    nv_push p;
    /* src -> GPU-only memory -> dst, then a four-word release */
    nv_push_init(&p, w, 128);
    nv_push_copy(&p, d, gpu.va, src.va, n);
    nv_push_copy(&p, d, dst.va, gpu.va, n);
    nv_push_copy_release(&p, d, sig.va, 1);
    double t0 = now_s();
    CHECK_OK(nv_chan_submit(d, nv_dev_copy(d), &p));
    CHECK_OK(nv_wait(d, sig.va, 1, 10000));
    double t1 = now_s();
    CHECK(memcmp(src.cpu, dst.cpu, n) == 0);
    printf("copy engine: 2 x %llu MiB in %.3f ms (%.1f GB/s)\n", (unsigned long long)(n >> 20), (t1 - t0) * 1e3,
           2.0 * (double)n / (t1 - t0) / 1e9);
    /* compute waits for the copy channel */
    nv_push_init(&p, w, 128);
    nv_push_sem_acquire(&p, d, sig.va + 16, 5);
    nv_push_sem_release(&p, d, sig.va + 32, 6, true);
    CHECK_OK(nv_chan_submit(d, nv_dev_compute(d), &p));
    CHECK(s[4] == 0);
    nv_push_init(&p, w, 128);
    nv_push_sem_release(&p, d, sig.va + 16, 5, false);
    CHECK_OK(nv_chan_submit(d, nv_dev_copy(d), &p));
    CHECK_OK(nv_wait(d, sig.va + 32, 6, 10000));
    CHECK(s[5] != 0);
    /* round trip: release from the compute channel, host waits */
    const int reps = 2000;
    t0 = now_s();
    for (int i = 1; i <= reps; i++) {
      nv_push_init(&p, w, 128);
      nv_push_sem_release(&p, d, sig.va + 48, 100 + (uint64_t)i, false);
      CHECK_OK(nv_chan_submit(d, nv_dev_compute(d), &p));
      CHECK_OK(nv_wait(d, sig.va + 48, 100 + (uint64_t)i, 10000));
    }
    t1 = now_s();
    printf("semaphore round trip (submit + doorbell + GPU release + host wait): %.2f us\n", (t1 - t0) / reps * 1e6);
  }
  CHECK_OK(nv_mem_free(d, &gpu));
  CHECK_OK(nv_mem_free(d, &sig));
  CHECK_OK(nv_mem_free(d, &dst));
  CHECK_OK(nv_mem_free(d, &src));
  nv_dev_close(d);
  kif_destroy(k);
  return testing_summary("nv_hw_check");
}
