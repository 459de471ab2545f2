/* Kernel sources and C references shared by the ELF loader tests (native and the aarch64 qemu driver). */
#ifndef HCQ_CPU_ELF_TESTKERNELS_H
#define HCQ_CPU_ELF_TESTKERNELS_H

#include <math.h>

/* Kernel A: .rodata table, .rodata.cst literals, .bss, .data, COMMON (-fcommon), a pointer table (R_*_ABS64 /
 * RELATIVE), a static noinline callee (call between functions), a GOT-addressed global. */
#define KERNEL_A_SRC                                                                                   \
  "static const float coef[8] = {1.5f, 2.f, 3.25f, 4.f, -5.f, 6.f, 7.5f, 8.f};\n"                     \
  "static const float *const halves[2] = {coef, coef + 4};\n"                                         \
  "static float acc[16];\n"                                                                            \
  "int common_counter;\n"                                                                              \
  "float gtab[4] = {0.5f, -1.f, 2.f, 0.25f};\n"                                                        \
  "__attribute__((noinline)) static float f2(float x, int i) {\n"                                     \
  "  return x * halves[(i >> 2) & 1][i & 3] + gtab[i & 3] * 0.3f + 1.7f; }\n"                         \
  "void hcq_entry(float *restrict d, const int n, int core_id) {\n"                                   \
  "  for (int i = 0; i < n; i++) { d[i] = f2(d[i], i); acc[i & 15] += d[i]; }\n"                      \
  "  common_counter += core_id; }\n"                                                                   \
  "float get_acc(int i) { return acc[i]; }\n"                                                          \
  "int get_counter(void) { return common_counter; }\n"

static inline float kernel_a_ref(float x, int i) {
  static const float coef[8] = {1.5f, 2.f, 3.25f, 4.f, -5.f, 6.f, 7.5f, 8.f};
  static const float gtab[4] = {0.5f, -1.f, 2.f, 0.25f};
  return x * coef[((i >> 2) & 1) * 4 + (i & 3)] + gtab[i & 3] * 0.3f + 1.7f;
}

/* Kernel B: float vector code (GNU vector extension + an auto-vectorisable loop) and a big struct copy that
 * compilers turn into a memcpy call even when freestanding. */
#define KERNEL_B_SRC                                                                                   \
  "typedef float v4 __attribute__((vector_size(16)));\n"                                               \
  "struct big { float v[1024]; };\n"                                                                   \
  "void saxpy4(v4 *restrict y, const v4 *restrict x, const float a, const int n4, int core_id) {\n"   \
  "  v4 av = {a, a, a, a};\n"                                                                          \
  "  for (int i = core_id; i < n4; i += 1) y[i] = av * x[i] + y[i]; }\n"                              \
  "float dot(const float *restrict a, const float *restrict b, const int n) {\n"                      \
  "  float s = 0; for (int i = 0; i < n; i++) s += a[i] * b[i]; return s; }\n"                       \
  "void copy_big(struct big *restrict dst, const struct big *restrict src) { *dst = *src; }\n"

#endif
