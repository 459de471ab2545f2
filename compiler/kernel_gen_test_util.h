/* Pieces of random kernel text (docs/FORMATS.md kernel text) shared by the kernel fuzzers (opt_fuzz_test.c,
 * emulator_tests/ptx_fuzz_test.c, emulator_tests/nv_fuzz_test.c); header-only, for *_test.c. */
#ifndef HCQ_COMPILER_KERNEL_GEN_TEST_UTIL_H
#define HCQ_COMPILER_KERNEL_GEN_TEST_UTIL_H

#include "base/fuzz.h"

/* The row-major index over n ranges: range dims[i] (named r<dims[i]>, i itself when dims is NULL) of size
 * size[dims[i]], the last one fastest: "(+ (+ (* r0 S0) (* r1 S1) ) r2) "; "0" for no ranges. */
static inline void kg_put_index(fuzz_text *b, const int64_t *size, const int *dims, int n) {
  if (n == 0) {
    fuzz_put(b, "0");
    return;
  }
  for (int i = 0; i < n - 1; i++) fuzz_put(b, "(+ ");
  for (int i = 0; i < n; i++) {
    int64_t stride = 1;
    for (int j = i + 1; j < n; j++) stride *= size[dims ? dims[j] : j];
    int d = dims ? dims[i] : i;
    if (stride == 1) fuzz_put(b, "r%d", d);
    else fuzz_put(b, "(* r%d %lld)", d, (long long)stride);
    fuzz_put(b, i > 0 ? ") " : " ");
  }
}

#endif
