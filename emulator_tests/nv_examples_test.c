/* Every example kernel (the .uop files in examples/) on nv:0 (the Hopper mock: the driver uploads cubin + PTX, the mock runs the
 * PTX the QMD's program address leads to) through the public runtime API, without opts and with the heuristic's,
 * compared with the reference interpreter (etu_compare). Kernels whose buffers exceed 1 MiB are skipped (printed),
 * as are unoptimized runs over 256 KiB (16 MiB with a variable: 777 elements run;
 * 64 KiB for an unoptimized reduce) (one thread per block is slow under ASan and qemu). Needs ptxas (skips without). */
#include "emulator_tests/nv_test_64bit.h"
#include "compiler/toolchain.h"
#include "emulator_tests/nv_test_util.h"

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = calloc(1, 1 << 20);
  size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
  (void)n;
  fclose(f);
  return buf;
}

int main(void) {
  NV_TEST_NEEDS_64BIT("nv_examples_test");
  char ptxas[512];
  hcq_status st = cc_ptx_ptxas(ptxas, sizeof ptxas);
  if (st) {
    hcq_status_free(st);
    TEST_SKIP("needs ptxas (CUDA toolkit at /usr/local/cuda)");
  }
  ntu_env e;
  ntu_open(&e, &(nv_mock_config){.arch = NV_MOCK_HOPPER});
  char *names[ETU_MAX_EXAMPLES];
  int count = etu_list_examples(names, ETU_MAX_EXAMPLES), ran = 0, skipped = 0;
  CHECK(count >= 10);
  for (int i = 0; e.dev && i < count; i++) {
    char path[512];
    snprintf(path, sizeof path, "examples/%s", names[i]);
    char *text = read_text(path);
    CHECK(text != NULL);
    if (!text) continue;
    for (int heur = 0; heur < 2; heur++) {
      /* a kernel with a variable runs 777 elements (etu_reference) whatever its buffers' size */
      size_t limit = strstr(text, "(var ") ? (16u << 20) : heur ? (1u << 20) : (256u << 10);
      /* without opts a reduce runs in one thread per output: softmax alone would take 4 s (40 s under ASan) */
      if (!heur && strstr(text, "(reduce")) limit = 64u << 10;
      int r = ntu_run_text(e.dev, text, heur ? NULL : "", limit, path);
      ran += r == 1, skipped += r == 0;
      if (r == 0) printf("%-34.34s %-9s skipped (buffers over the limit)\n", path, heur ? "heuristic" : "noopt");
    }
    free(text);
  }
  for (int i = 0; i < count; i++) free(names[i]);
  printf("nv mock: %d runs matched the reference interpreter, %d skipped by size; %.1fM PTX thread-instructions\n",
         ran, skipped, (double)nv_mock_ptx_thread_instructions(e.ptx) / 1e6);
  CHECK(ran >= 16);
  ntu_close(&e);
  return testing_summary("emulator_tests/nv_examples_test");
}
