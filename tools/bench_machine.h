/* What `hcq bench` prints about the machine and its baselines' configuration, so a reader can judge the ratios. */
#ifndef HCQ_TOOLS_BENCH_MACHINE_H
#define HCQ_TOOLS_BENCH_MACHINE_H

#include <stddef.h>

/* "AMD EPYC 9B14 · x86_64 · avx2 fma avx512f avx512bw avx512vl avx512_bf16 · 2 online CPUs" into buf. */
void bench_machine_line(char *buf, size_t cap);
/* The OpenBLAS core type this CPU's features support best (x86_64: "Cooperlake" with AVX-512 BF16, "SkylakeX"
 * with AVX-512 F/BW/VL/DQ, "Haswell" with AVX2+FMA), or NULL to leave OpenBLAS's own detection (other CPUs).
 * OpenBLAS 0.3.21 runs its generic Prescott kernel on x86 CPUs newer than it knows; this avoids that. */
const char *bench_openblas_best_coretype(void);

#endif
