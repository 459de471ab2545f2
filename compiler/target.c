/* The target table: a target is data (capabilities, limits, the ALU ops its renderer emits directly). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/compiler.h"

/* C-family ops every renderer of this compiler emits directly. */
#define OPS_C_COMMON                                                                                           \
  (UOP_OPBIT(UOP_ADD) | UOP_OPBIT(UOP_SUB) | UOP_OPBIT(UOP_MUL) | UOP_OPBIT(UOP_IDIV) | UOP_OPBIT(UOP_MOD) |   \
   UOP_OPBIT(UOP_FDIV) | UOP_OPBIT(UOP_NEG) | UOP_OPBIT(UOP_SHL) | UOP_OPBIT(UOP_SHR) | UOP_OPBIT(UOP_CMPLT) | \
   UOP_OPBIT(UOP_CMPNE) | UOP_OPBIT(UOP_CMPEQ) | UOP_OPBIT(UOP_XOR) | UOP_OPBIT(UOP_OR) | UOP_OPBIT(UOP_AND) | \
   UOP_OPBIT(UOP_WHERE) | UOP_OPBIT(UOP_CAST) | UOP_OPBIT(UOP_BITCAST) | UOP_OPBIT(UOP_MULACC))

typedef struct target_row {
  const char *name;
  cc_target_kind kind;
  const char *arch;
} target_row;

static const target_row TARGETS[] = {
    {"c", CC_TARGET_C, NULL},
    {"c:x86_64", CC_TARGET_C, "x86_64"},
    {"c:aarch64", CC_TARGET_C, "aarch64"},
    {"c:armhf", CC_TARGET_C, "armhf"},
    {"llvm-cpu", CC_TARGET_LLVM_CPU, NULL},
    {"ptx:sm_80", CC_TARGET_PTX, "sm_80"},
    {"ptx:sm_90", CC_TARGET_PTX, "sm_90"},
    {"ptx:sm_100", CC_TARGET_PTX, "sm_100"}, /* Blackwell (ptxas 12.8+) */
    {"amdgpu:gfx1100", CC_TARGET_AMDGPU, "gfx1100"},
    {"amdgpu:gfx90a", CC_TARGET_AMDGPU, "gfx90a"},
    {"amdgpu:gfx942", CC_TARGET_AMDGPU, "gfx942"},
    {"amdgpu:gfx1201", CC_TARGET_AMDGPU, "gfx1201"},
};

const char *cc_host_arch(void) {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#elif defined(__arm__)
  return "armhf";
#else
  return "unknown";
#endif
}

/* The widest float32 vector worth building for a c target: 16 lanes with AVX-512, 8 with AVX2 when the target is
 * this x86_64 host (kernels are built with -march=native), else 4 (SSE, NEON). Wider GCC vectors than the hardware
 * has are still correct (split by the compiler), so a cross-built image only loses speed. HCQ_VECTOR_MAX (0..16)
 * overrides it; 0 or 1 turns the vectorize pass off (for before/after measurements). */
static int vector_max_for(const char *arch) {
  const char *env = getenv("HCQ_VECTOR_MAX");
  if (env && *env) {
    char *end;
    long v = strtol(env, &end, 10);
    if (!*end && v >= 0 && v <= 16) return (int)v;
  }
#if defined(__x86_64__)
  if (strcmp(arch, "x86_64") == 0) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return 16;
    if (__builtin_cpu_supports("avx2")) return 8;
  }
#else
  (void)arch;
#endif
  return 4;
}

hcq_status cc_target_get(const char *name, int threads, cc_target *out) {
  memset(out, 0, sizeof *out);
  if (!name) return hcq_status_make(HCQ_CODE_INVALID, "cc_target_get: NULL name");
  const target_row *row = NULL;
  for (size_t i = 0; i < sizeof TARGETS / sizeof TARGETS[0]; i++)
    if (strcmp(TARGETS[i].name, name) == 0) row = &TARGETS[i];
  if (!row) {
    char known[512];
    size_t len = 0;
    for (size_t i = 0; i < sizeof TARGETS / sizeof TARGETS[0]; i++)
      len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "", TARGETS[i].name);
    return hcq_status_make(HCQ_CODE_NOT_FOUND, "unknown target '%s' (known: %s)", name, known);
  }
  snprintf(out->name, sizeof out->name, "%s", row->name);
  out->kind = row->kind;
  snprintf(out->arch, sizeof out->arch, "%s", row->arch ? row->arch : cc_host_arch());
  if (row->kind == CC_TARGET_C || row->kind == CC_TARGET_LLVM_CPU) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    out->has_threads = true; /* llvm-cpu kernels take the same core_id argument as c kernels */
    out->supports_float4 = true;
    if (row->kind == CC_TARGET_C) {
      /* float4 everywhere (SSE/NEON). Buffer alignment promised to the kernel: the CPU device maps buffers
       * 16-byte aligned (cpu_buffer_alloc), tests use malloc, which is 16-byte aligned on 64-bit glibc but only 8 on armhf;
       * accesses wider than this use the unaligned vector types. */
      out->vector_max = vector_max_for(out->arch);
      out->buf_align_B = 16; /* callers promise 16-byte aligned buffers (CPU device: CPU_BUFFER_ALIGN_B) */
    }
    out->cpu_tiles = true;
    out->global_max[0] = threads > 0 ? threads : (cores > 0 ? cores : 1);
    /* c renders SQRT and TRUNC with compiler builtins and float32 MAX with its own macros; float MAX of other
     * dtypes, EXP2, LOG2, SIN and RECIP are decomposed (llvm-cpu: every float MAX). */
    out->supported_ops = OPS_C_COMMON | UOP_OPBIT(UOP_SQRT) | UOP_OPBIT(UOP_TRUNC);
    out->fmax_f32_rendered = row->kind == CC_TARGET_C;
    /* big write-only outputs bypass the cache (no read for ownership); 16 MiB: about half of a typical L3 */
    if (row->kind == CC_TARGET_C && strcmp(out->arch, "x86_64") == 0) out->nt_store_min_B = (int64_t)16 << 20;
  } else {
    /* GPU targets: the limits are the reference's (AMD: global_max (2^31-1, 65535, 65535)). */
    out->has_local = out->has_shared = true;
    out->supports_float4 = true;
    out->global_max[0] = out->global_max[1] = out->global_max[2] = (int64_t)1 << 31;
    if (row->kind == CC_TARGET_AMDGPU) {
      out->global_max[0] = INT32_MAX;
      out->global_max[1] = out->global_max[2] = 65535;
    }
    out->local_max[0] = 1024;
    out->local_max[1] = 1024;
    out->local_max[2] = 64;
    out->shared_max_B = row->kind == CC_TARGET_PTX ? 49152 : 65536;
    /* MAX: integer max only; float MAX is decomposed on every target (decomp.c max_ieee: IEEE maximum) */
    out->supported_ops = OPS_C_COMMON | UOP_OPBIT(UOP_SQRT) | UOP_OPBIT(UOP_MAX) | UOP_OPBIT(UOP_EXP2) |
                         UOP_OPBIT(UOP_LOG2) | UOP_OPBIT(UOP_SIN) | UOP_OPBIT(UOP_TRUNC) | UOP_OPBIT(UOP_RECIP);
    /* llc-19 lowers llvm.exp2/log2/sin natively for f32 and f16 on AMDGPU, but not for f64 ("no libcall
     * available for fexp2", "Cannot select fsin"): decompose those. Its f32 sin is v_sin_f32 of x * (1/2pi)
     * rounded to float (gfx90a), with no exact reduction: wrong for large |x|. sin is decomposed for every dtype. */
    if (row->kind == CC_TARGET_AMDGPU) {
      out->f64_decomposed_ops = UOP_OPBIT(UOP_EXP2) | UOP_OPBIT(UOP_LOG2);
      out->supported_ops &= ~UOP_OPBIT(UOP_SIN);
    }
    if (row->kind == CC_TARGET_PTX) {
      /* CUDA grids: x up to 2^31-1 blocks, y and z up to 65535. ex2/lg2/sin.approx.f32 are only approximate
       * (lg2: 2^-22 absolute, sin: 2^-20.9 absolute within [-pi, pi] and worse outside) and have no float64 form:
       * the ptx targets use the decompositions, accurate to a few ulp (render_ptx.c can still emit the
       * .approx forms for a target that lists these ops). */
      out->global_max[0] = INT32_MAX;
      out->global_max[1] = out->global_max[2] = 65535;
      out->supported_ops &= ~(UOP_OPBIT(UOP_EXP2) | UOP_OPBIT(UOP_LOG2) | UOP_OPBIT(UOP_SIN));
    }
  }
  return HCQ_OK;
}
