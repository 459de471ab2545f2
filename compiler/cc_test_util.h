/* Test helpers (header-only, for *_test.c): compile a kernel through the pipeline, build it with the toolchain
 * driver, link the object to a shared object with `cc -shared` and dlopen it (until the CPU device's own ELF loader
 * is on this branch), and call it with buffers, vars and core_id. */
#ifndef HCQ_COMPILER_CC_TEST_UTIL_H
#define HCQ_COMPILER_CC_TEST_UTIL_H

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/compiler.h"
#include "compiler/interp.h"
#include "compiler/kernel_text.h"
#include "compiler/toolchain.h"

typedef struct tu_kernel {
  void *dl;
  void *fn;
  char so_path[300];
} tu_kernel;

/* Object bytes -> .so -> dlopen; the symbol is `name`. */
static inline hcq_status tu_load(const uint8_t *obj, size_t size_B, const char *name, tu_kernel *k) {
  memset(k, 0, sizeof *k);
  char obj_path[200];
  snprintf(obj_path, sizeof obj_path, "/tmp/hcq-tu-%d-XXXXXX.o", (int)getpid());
  int fd = mkstemps(obj_path, 2);
  if (fd < 0) return hcq_status_make(HCQ_CODE_IO, "mkstemps failed");
  if (write(fd, obj, size_B) != (ssize_t)size_B) {
    close(fd);
    unlink(obj_path);
    return hcq_status_make(HCQ_CODE_IO, "write %s failed", obj_path);
  }
  close(fd);
  snprintf(k->so_path, sizeof k->so_path, "%s.so", obj_path);
  char cmd[800];
  /* -lgcc: 32-bit Arm kernels call libgcc helpers (__aeabi_d2lz ...), linked into the .so statically */
  snprintf(cmd, sizeof cmd, "%s -shared -nostdlib %s -lgcc -o %s", cc_toolchain_cc(), obj_path, k->so_path);
  int rc = system(cmd);
  unlink(obj_path);
  if (rc != 0) return hcq_status_make(HCQ_CODE_INVALID, "link failed: %s", cmd);
  k->dl = dlopen(k->so_path, RTLD_NOW | RTLD_LOCAL);
  /* the mapping outlives the name: unlink now so that no path (an early return, a failed check) leaves it behind */
  unlink(k->so_path);
  k->so_path[0] = 0;
  if (!k->dl) return hcq_status_make(HCQ_CODE_INVALID, "dlopen: %s", dlerror());
  k->fn = dlsym(k->dl, name);
  if (!k->fn) return hcq_status_make(HCQ_CODE_NOT_FOUND, "dlsym %s: %s", name, dlerror());
  return HCQ_OK;
}

static inline void tu_unload(tu_kernel *k) {
  if (k->dl) dlclose(k->dl);
  memset(k, 0, sizeof *k);
}

/* Call with up to 10 integer-class arguments (pointers, then ints as 64-bit words, then core_id): on x86_64 and
 * aarch64 every such argument travels in a general register, so int parameters read the low 32 bits. */
static inline void tu_call(const tu_kernel *k, const uintptr_t *args, int nargs) {
  typedef void (*f10)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t,
                      uintptr_t, uintptr_t);
  uintptr_t a[10] = {0};
  for (int i = 0; i < nargs && i < 10; i++) a[i] = args[i];
  ((f10)k->fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9]);
}

/* Compile a parsed kernel with options o to source and object, and load it. *out_prog is the caller's to free. */
static inline hcq_status tu_build_sink(uop_ctx *ctx, const uop *sink, const cc_target *t, const cc_options *o,
                                       cc_program **out_prog, tu_kernel *k) {
  *out_prog = NULL;
  HCQ_TRY(cc_compile_source(ctx, sink, t, o, out_prog));
  HCQ_TRY(cc_compile_binary(t, *out_prog));
  return tu_load((*out_prog)->binary, (*out_prog)->binary_size_B, (*out_prog)->symbol, k);
}

/* Parse kernel text, compile (noopt) to source and object, and load it. *out_prog is the caller's to free. */
static inline hcq_status tu_build(uop_ctx *ctx, const char *text, const cc_target *t, cc_program **out_prog,
                                  tu_kernel *k) {
  *out_prog = NULL;
  const uop *sink = NULL;
  HCQ_TRY(cc_kernel_parse(ctx, text, strlen(text), "<test>", &sink));
  return tu_build_sink(ctx, sink, t, &(cc_options){.noopt = true}, out_prog, k);
}

/* Element i of a buffer of dtype dt, as a double (for float tolerances and messages: an int64/uint64 beyond 2^53
 * rounds, so compare elements with tu_elem_match); NAN for a dtype no buffer has. */
static inline double tu_elem(const void *data, uop_dtype dt, int64_t i) {
  switch (dt.scalar) {
    case UOP_FLOAT16: return cc_f16_to_f32(((const uint16_t *)data)[i]);
    case UOP_BFLOAT16: return cc_bf16_to_f32(((const uint16_t *)data)[i]);
    case UOP_FLOAT32: return ((const float *)data)[i];
    case UOP_FLOAT64: return ((const double *)data)[i];
    case UOP_INT32: return ((const int32_t *)data)[i];
    case UOP_UINT32: return ((const uint32_t *)data)[i];
    case UOP_INT8: return ((const int8_t *)data)[i];
    case UOP_UINT8: return ((const uint8_t *)data)[i];
    case UOP_INT16: return ((const int16_t *)data)[i];
    case UOP_UINT16: return ((const uint16_t *)data)[i];
    case UOP_INT64: return (double)((const int64_t *)data)[i];
    case UOP_UINT64: return (double)((const uint64_t *)data)[i];
    case UOP_BOOL: return ((const uint8_t *)data)[i];
    default: return NAN;
  }
}

/* Does element i of got match want's? Integers and bool exactly, as their own bytes (every bit of an int64 counts;
 * a bool byte other than 0/1 is a mismatch); floats by cc_float_match (NaN matches only NaN, -0 == +0, rel and abs
 * tolerances); a dtype no buffer has never matches, so it cannot pass unchecked. */
static inline bool tu_elem_match(const void *want, const void *got, uop_dtype dt, int64_t i, double rel,
                                 double abs) {
  if (uop_dt_is_float(dt)) return cc_float_match(tu_elem(got, dt, i), tu_elem(want, dt, i), rel, abs);
  if (dt.scalar < UOP_BOOL || dt.scalar > UOP_UINT64) return false;
  size_t item = dt.scalar <= UOP_UINT8 ? 1 : dt.scalar <= UOP_UINT16 ? 2 : dt.scalar <= UOP_UINT32 ? 4 : 8;
  return memcmp((const uint8_t *)want + (size_t)i * item, (const uint8_t *)got + (size_t)i * item, item) == 0;
}

/* Element i as text into buf (integers exactly in their own type, floats with 17 digits). */
static inline const char *tu_elem_str(char *buf, size_t n, const void *data, uop_dtype dt, int64_t i) {
  switch (dt.scalar) {
    case UOP_INT64: snprintf(buf, n, "%lld", (long long)((const int64_t *)data)[i]); break;
    case UOP_UINT64: snprintf(buf, n, "%llu", (unsigned long long)((const uint64_t *)data)[i]); break;
    default: snprintf(buf, n, "%.17g", tu_elem(data, dt, i)); break;
  }
  return buf;
}

/* Brute-force reference of examples/conv2d.uop at (co, y, x): a 3x3 convolution with zero padding 1 of 2 input
 * channels of 16x16 (in) by weights w[co][ci][ky][kx], 4 output channels. */
static inline float tu_conv2d_ref(const float *in, const float *w, int co, int y, int x) {
  float s = 0;
  for (int ci = 0; ci < 2; ci++)
    for (int ky = 0; ky < 3; ky++)
      for (int kx = 0; kx < 3; kx++) {
        int iy = y + ky - 1, ix = x + kx - 1;
        float v = iy >= 0 && iy < 16 && ix >= 0 && ix < 16 ? in[ci * 256 + iy * 16 + ix] : 0.0f;
        s += v * w[co * 18 + ci * 9 + ky * 3 + kx];
      }
  return s;
}

/* An environment variable set for a while (a compiler, its flags, a vector width), then put back as the caller had
 * it (the cross legs set HCQ_CC and HCQ_CC_TUNE themselves). One saved value per tu_env. */
typedef struct tu_env {
  const char *name;
  bool had;
  char old[256];
} tu_env;

static inline void tu_env_set(tu_env *e, const char *name, const char *value) {
  const char *old = getenv(name);
  e->name = name;
  e->had = old && strlen(old) < sizeof e->old;
  if (e->had) snprintf(e->old, sizeof e->old, "%s", old);
  setenv(name, value, 1);
}

static inline void tu_env_restore(tu_env *e) {
  if (!e->name) return;
  if (e->had) setenv(e->name, e->old, 1);
  else unsetenv(e->name);
  e->name = NULL;
}

/* Is a compiler command available? */
static inline bool tu_have(const char *cc) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", cc);
  return system(cmd) == 0;
}

#endif
