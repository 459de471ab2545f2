/* The CPU device's small-work marks (cpu_device.h CPU_RUN_HERE_MAX_NS; the pool's side is cpu_pool_here_test.c):
 * each EXEC is marked from its program's last measured work, run_here for one thread and no_wake for more, never
 * on a program's first run. The decision is checked, not the time: before each submit the test reads the
 * measurement the device decides from and expects the marks the rule gives for it. A tiny kernel must get the
 * short path at least once in many runs; a big one (it spins past the threshold on every id, so its measurement
 * is over it whatever the load) must never get it. */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_device.h"
#include "cpu/cpu_sync.h"
#include "hcq/args.h"
#include "hcq/queue.h"
#include "hcq/signal.h"
#include "base/testing.h"

static void tiny(int core_id) { (void)core_id; }

static void big(int core_id) {
  (void)core_id;
  uint64_t t0 = cpu_now_ns();
  while (cpu_now_ns() - t0 < 2 * (uint64_t)CPU_RUN_HERE_MAX_NS) {
  }
}

/* Runs prog with `ids` core_ids `runs` times, one submit each, waiting for each; checks every submit's marks against
 * the rule applied to the measurement before it. Returns how many submits were marked short. */
static int run_marked(cpu_device *dev, cpu_device_program *prog, uint32_t ids, int runs, hcq_mem *argm,
                      hcq_signal *done, uint64_t *done_value) {
  hcq_device *hd = cpu_device_hcq(dev);
  hcq_args args;
  CHECK_OK(hcq_args_init(&args, argm->host, argm->va, argm->size_B, 0, 0, 0));
  hcq_val g[3] = {hcq_imm(ids), hcq_imm(1), hcq_imm(1)}, l[3] = {hcq_imm(1), hcq_imm(1), hcq_imm(1)};
  int marked = 0, wrong = 0;
  for (int r = 0; r < runs; r++) {
    uint64_t last = cpu_device_program_last_run_ns(prog), here0, nowake0, here1, nowake1;
    bool short_run = last > 0 && last < CPU_RUN_HERE_MAX_NS;
    if (r == 0) CHECK(last == 0); /* a fresh program: nothing measured, never marked */
    cpu_device_exec_marks(dev, &here0, &nowake0);
    hcq_queue *q = NULL;
    CHECK_OK(hcq_queue_create(hd, HCQ_QUEUE_COMPUTE, &q));
    if (!q) return marked;
    CHECK_OK(hcq_queue_exec(q, hcq_imm(cpu_device_program_handle(prog)), &args, g, l));
    CHECK_OK(hcq_queue_signal(q, hcq_imm(done->va), hcq_imm(++*done_value)));
    CHECK_OK(hcq_queue_submit(q, hd, NULL, 0));
    cpu_device_exec_marks(dev, &here1, &nowake1);
    CHECK_OK(hcq_signal_wait(done, *done_value, 10000));
    hcq_queue_destroy(q);
    uint64_t want_here = ids == 1 && short_run, want_nowake = ids > 1 && short_run;
    if (here1 - here0 != want_here || nowake1 - nowake0 != want_nowake) {
      wrong++;
      fprintf(stderr, "  %u ids, run %d, last %llu ns: marked run_here %llu no_wake %llu, want %llu %llu\n", ids, r,
              (unsigned long long)last, (unsigned long long)(here1 - here0), (unsigned long long)(nowake1 - nowake0),
              (unsigned long long)want_here, (unsigned long long)want_nowake);
    }
    marked += short_run;
    CHECK(cpu_device_program_last_run_ns(prog) > 0); /* measured by this run */
  }
  CHECK_EQ_INT(wrong, 0);
  return marked;
}

int main(void) {
  cpu_device *dev = NULL;
  CHECK_OK(cpu_device_create(4, &dev));
  if (!dev) return testing_summary("cpu_device_small");
  hcq_mem argm;
  CHECK_OK(cpu_device_alloc(dev, 64, &argm));
  hcq_signal *done = NULL;
  CHECK_OK(hcq_signal_create(cpu_device_hcq(dev), "done", 0, &done));
  uint64_t done_value = 0;
  static const uint32_t IDS[] = {1, 2, 4};
  for (size_t i = 0; done && i < sizeof IDS / sizeof IDS[0]; i++) {
    cpu_device_program *t = NULL, *b = NULL; /* fresh programs per thread count: a first run each */
    CHECK_OK(cpu_device_wrap(dev, (void *)tiny, "tiny", &t));
    CHECK_OK(cpu_device_wrap(dev, (void *)big, "big", &b));
    if (!t || !b) break;
    int tiny_short = run_marked(dev, t, IDS[i], 50, &argm, done, &done_value);
    int big_short = run_marked(dev, b, IDS[i], 4, &argm, done, &done_value);
    if (!tiny_short) fprintf(stderr, "  tiny kernel, %u ids: never measured under %u ns in 50 runs\n", IDS[i],
                             CPU_RUN_HERE_MAX_NS);
    CHECK(tiny_short > 0);
    CHECK_EQ_INT(big_short, 0);
    CHECK(cpu_device_program_last_run_ns(b) >= 2 * (uint64_t)CPU_RUN_HERE_MAX_NS * IDS[i]);
    CHECK_OK(hcq_device_synchronize(cpu_device_hcq(dev), 5000));
    cpu_device_program_destroy(t);
    cpu_device_program_destroy(b);
  }
  CHECK_OK(cpu_device_take_error(dev));
  hcq_signal_destroy(done);
  cpu_device_free(dev, &argm);
  cpu_device_destroy(dev);
  return testing_summary("cpu_device_small");
}
