/* interp: the reference interpreter of kernel ASTs (canonical form, docs/FORMATS.md), and the buffer
 * helpers shared by tests, `hcq run` and the bench.
 *
 * cc_interp_run executes the kernel directly on host buffers, independent of the compiler pipeline: each STORE's
 * ranges become nested loops (ends evaluated with the variable values), REDUCE loops over its ranges accumulating
 * ADD/MUL/MAX from the identity (0, 1, -inf / the dtype's minimum), gated INDEX/LOAD give the alternative value
 * (0 when the load has none), gated STOREs skip. Integers wrap to their dtype; // and % truncate (C); division by
 * zero is an error. float32 math is done in float, float64 in double, float16/bfloat16 in float rounded to the
 * dtype after every operation. Nodes are evaluated once per iteration of the innermost loop they depend on (a
 * precompiled per-loop-level program), so loop-invariant work is hoisted.
 */
#ifndef HCQ_COMPILER_INTERP_H
#define HCQ_COMPILER_INTERP_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "uop/uop.h"

/* buffers[i] / buffer_sizes_B[i] are the memory of DEFINE_GLOBAL slot i (unused slots may be NULL/0). Every slot the
 * kernel uses must be < nbuffers. vars give every DEFINE_VAR's value by name (checked against its min..max).
 * Out-of-bounds accesses (beyond the smaller of the declared size and the given bytes) are an error naming the
 * buffer slot and the index; nothing is written after the first error. */
hcq_status cc_interp_run(const uop *sink, void *const *buffers, const size_t *buffer_sizes_B, size_t nbuffers,
                         const uop_var_val *vars, size_t nvars);

/* A buffer of a kernel: slot, element dtype, elements (declared size), bytes; data owned by the caller. */
typedef struct cc_kbuf {
  int slot;
  uop_dtype dtype;
  int64_t nelems;
  size_t size_B;
  void *data;
} cc_kbuf;

/* The buffers a kernel uses, sorted by slot (data NULL). *out is malloc'd. Error if a buffer's size is unknown. */
hcq_status cc_kernel_buffers(const uop *sink, cc_kbuf **out, size_t *out_count);
/* Allocate each buffer's data and fill it deterministically (cc_fill_buffer with seed + slot). */
hcq_status cc_kbufs_alloc_fill(cc_kbuf *bufs, size_t count, uint64_t seed);
void cc_kbufs_free(cc_kbuf *bufs, size_t count); /* frees the data and the array */

/* Deterministic fill: floats are odd multiples of 2^-16 in [-2, 2) (+2^-40 for float64), so that they round in
 * every narrower float type while sums stay nearly exact,
 * signed ints in [-8, 8), unsigned ints in [0, 16), bool 0/1. */
void cc_fill_buffer(void *data, uop_dtype dt, int64_t nelems, uint64_t seed);

/* The float rule of every check against the interpreter (docs/FORMATS.md, checks): NaN matches any NaN, an
 * infinity only the same infinity, -0 matches +0, finite values when |got - want| <= rel |want| + abs. */
bool cc_float_match(double got, double want, double rel, double abs);

/* float16 / bfloat16 conversions (round to nearest even). */
uint16_t cc_f32_to_f16(float f);
float cc_f16_to_f32(uint16_t h);
uint16_t cc_f32_to_bf16(float f);
float cc_bf16_to_f32(uint16_t h);
/* Correctly rounded (one rounding, RNE, overflow to inf, subnormals, NaN kept) from double. */
uint16_t cc_f64_to_f16(double x);
uint16_t cc_f64_to_bf16(double x);
/* x rounded to nearest even in a format with `man` mantissa bits, normal exponents emin..emax (inf beyond). */
double cc_round_format(double x, int man, int emin, int emax);
/* An integer as a double rounded to odd when it has more than 53 bits: rounding that double once more to any
 * format of at most 51 bits gives the correctly rounded integer (no double rounding). */
double cc_int_to_f64_odd(int64_t v, bool is_unsigned);

#endif
