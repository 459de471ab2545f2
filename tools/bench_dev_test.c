/* hcq bench --dev amd:0 / nv:0 on the mocks (tools/bench_dev.c), quick sizes, JSON lines: every row is present and
 * verified (the launch rows check the kernel's output or, for the NV CPU-cost rows, the mock's launch count; add and
 * matmul against C loops), the launch rows carry p50/p90/p99 where they should, and the CPU-cost figures are
 * positive. The exit status is 0 only when every row verified. NV needs a 64-bit host and ptxas (skipped without). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/testing.h"
#include "compiler/toolchain.h"
#include "emulator_tests/amd_mock_exec.h"
#include "emulator_tests/nv_mock_ptx.h"
#include "tools/bench_dev.h"

static char out[65536];

/* hcq_bench_dev with stdout captured into out; its exit status. */
static int run(const char *dev) {
  char path[] = "/tmp/hcq_bench_dev_test_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  fflush(stdout);
  int saved = dup(1);
  dup2(fd, 1);
  int rc = hcq_bench_dev(dev, true, true, NULL);
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  ssize_t n = pread(fd, out, sizeof out - 1, 0);
  out[n > 0 ? n : 0] = 0;
  close(fd);
  unlink(path);
  return rc;
}

static void check_rows(const char *dev) {
  CHECK_EQ_INT(run(dev), 0);
  static const char *const names[] = {"launch_latency", "launch_cpu", "graph_replay", "add", "matmul", "mock_exec"};
  for (int i = 0; i < 6; i++) {
    char key[64];
    snprintf(key, sizeof key, "{\"name\":\"%s\"", names[i]);
    const char *line = strstr(out, key);
    CHECK(line != NULL);
    if (!line) continue;
    const char *end = strchr(line, '\n');
    CHECK(end && strstr(line, "\"verified\":true") && strstr(line, "\"verified\":true") < end);
    CHECK(strstr(line, "\"mock\":true") && strstr(line, "\"mock\":true") < end);
    if (i == 0) CHECK(strstr(line, "\"p99_us\":") && strstr(line, "\"p99_us\":") < end);
    double v = -1;
    const char *val = strstr(line, "\"value\":");
    CHECK(val && sscanf(val, "\"value\":%lf", &v) == 1 && v > 0);
  }
  if (testing_failures) fprintf(stderr, "%s output:\n%s\n", dev, out);
}

int main(void) {
  CHECK_OK(amd_mock_install(kif_default()));
  check_rows("amd:0");
  amd_mock_uninstall();
  if (sizeof(void *) < 8) {
    printf("bench_dev_test: nv skipped: the NV driver needs a 64-bit host\n");
    return testing_summary("bench_dev_test");
  }
  char ptxas[512];
  hcq_status st = cc_ptx_ptxas(ptxas, sizeof ptxas);
  if (st) {
    hcq_status_free(st);
    printf("bench_dev_test: nv skipped: needs ptxas\n");
    return testing_summary("bench_dev_test");
  }
  CHECK_OK(nv_mock_env_install(kif_default()));
  check_rows("nv:0");
  return testing_summary("bench_dev_test");
}
