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
  "struct big { float v[4096]; };\n"                                                                   \
  "void saxpy4(v4 *restrict y, const v4 *restrict x, const float a, const int n4, int core_id) {\n"   \
  "  v4 av = {a, a, a, a};\n"                                                                          \
  "  for (int i = core_id; i < n4; i += 1) y[i] = av * x[i] + y[i]; }\n"                              \
  "float dot(const float *restrict a, const float *restrict b, const int n) {\n"                      \
  "  float s = 0; for (int i = 0; i < n; i++) s += a[i] * b[i]; return s; }\n"                       \
  "void copy_big(struct big *restrict dst, const struct big *restrict src) { *dst = *src; }\n"

/* Checks against the C references (need base/testing.h and cpu/cpu_elf.h included first). */
#if defined(HCQ_TESTING_H) && defined(HCQ_CPU_ELF_H)
static void *sym(cpu_program *p, const char *name) {
  void *a = NULL;
  CHECK_OK(cpu_program_symbol(p, name, &a));
  return a;
}

static void check_kernel_a(cpu_program *p) {
  void (*k)(float *, int, int) = (void (*)(float *, int, int))sym(p, "hcq_entry");
  float (*get_acc)(int) = (float (*)(int))sym(p, "get_acc");
  int (*get_counter)(void) = (int (*)(void))sym(p, "get_counter");
  if (!k || !get_acc || !get_counter) return;
  enum { N = 37 };
  float d[N], want[N], acc[16] = {0};
  for (int i = 0; i < N; i++) d[i] = want[i] = (float)(i * 3 - 20) * 0.125f;
  for (int round = 0; round < 2; round++) {
    k(d, N, 5);
    for (int i = 0; i < N; i++) {
      want[i] = kernel_a_ref(want[i], i);
      acc[i & 15] += want[i];
    }
  }
  int ok = 1;
  for (int i = 0; i < N; i++) ok &= fabsf(d[i] - want[i]) <= 1e-5f * (1 + fabsf(want[i]));
  CHECK(ok);
  ok = 1;
  for (int i = 0; i < 16; i++) ok &= fabsf(get_acc(i) - acc[i]) <= 1e-4f * (1 + fabsf(acc[i]));
  CHECK(ok);
  CHECK_EQ_INT(get_counter(), 10);
}

static void check_kernel_b(cpu_program *p) {
  typedef float v4 __attribute__((vector_size(16)));
  void (*saxpy4)(v4 *, const v4 *, float, int, int) = (void (*)(v4 *, const v4 *, float, int, int))sym(p, "saxpy4");
  float (*dot)(const float *, const float *, int) = (float (*)(const float *, const float *, int))sym(p, "dot");
  void (*copy_big)(void *, const void *) = (void (*)(void *, const void *))sym(p, "copy_big");
  if (saxpy4 && dot && copy_big) {
    enum { N = 64 };
    static v4 x[N / 4], y[N / 4];
    float *xf = (float *)x, *yf = (float *)y, want[N];
    for (int i = 0; i < N; i++) {
      xf[i] = (float)i * 0.5f - 3.f;
      yf[i] = (float)(i % 7);
      want[i] = 2.5f * xf[i] + yf[i];
    }
    saxpy4(y, x, 2.5f, N / 4, 0);
    int ok = 1;
    for (int i = 0; i < N; i++) ok &= fabsf(yf[i] - want[i]) <= 1e-5f * (1 + fabsf(want[i]));
    CHECK(ok);
    float s = 0;
    for (int i = 0; i < N; i++) s += xf[i] * yf[i];
    CHECK(fabsf(dot(xf, yf, N) - s) <= 1e-4f * (1 + fabsf(s)));
    static float src[4096], dst[4096];
    for (int i = 0; i < 4096; i++) src[i] = (float)i;
    copy_big(dst, src);
    CHECK(memcmp(src, dst, sizeof dst) == 0);
  }
}
#endif

#endif
