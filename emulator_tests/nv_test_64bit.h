/* The NV driver runs on 64-bit hosts only (nv_dev_open refuses 32-bit ones: CPU and GPU share addresses above
 * 4 GiB, and NVIDIA ships no 32-bit driver for these GPUs). Its tests say so and skip (exit 77) on armhf. */
#ifndef HCQ_EMU_NV_TEST_64BIT_H
#define HCQ_EMU_NV_TEST_64BIT_H

#include <stdio.h>

#define NV_TEST_NEEDS_64BIT(name)                                                                     \
  do {                                                                                                \
    if (sizeof(void *) < 8) {                                                                         \
      printf("%s: skipped: the NV driver needs a 64-bit host (nv_dev_open refuses 32-bit ones)\n", name); \
      return 77;                                                                                      \
    }                                                                                                 \
  } while (0)

#endif
