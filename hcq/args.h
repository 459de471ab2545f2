/* hcq_args: a kernel-argument buffer whose buffer addresses and variable values may be symbolic.
 *
 * Layout (the reference's CLikeArgsState, tinygrad/runtime/support/hcq.py), little-endian:
 *   byte 0                      prefix[prefix_words]  u32 each, constant (NV constant buffer 0 header; CPU/AMD: none)
 *   byte 4*prefix_words         bufs[nbufs]           u64 device addresses
 *   byte 4*prefix_words+8*nbufs vals[nvals]           u32 variable values (int32/uint32 range, else submit fails)
 * hcq_args_bind registers the buffer as a region of a queue and records every symbolic address/value as a field
 * patch, so each submit of that queue rewrites the arguments that changed. Constants are written at bind time.
 */
#ifndef HCQ_ARGS_H
#define HCQ_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "hcq/queue.h"

struct hcq_args {
  void *host;    /* CPU view of the argument memory */
  uint64_t va;   /* device address */
  size_t size_B; /* capacity of the memory */
  uint32_t prefix_words, nbufs, nvals;
};

/* The layout rule is hcq/program.h's (hcq_kernarg_*). */
size_t hcq_args_size_B(uint32_t prefix_words, uint32_t nbufs, uint32_t nvals);
static inline size_t hcq_args_buf_offset_B(const hcq_args *a, uint32_t i) {
  return hcq_kernarg_buf_offset_B(4u * a->prefix_words, i);
}
static inline size_t hcq_args_val_offset_B(const hcq_args *a, uint32_t i) {
  return hcq_kernarg_val_offset_B(4u * a->prefix_words, a->nbufs, i);
}

/* Describe memory [host, host+size_B) at device address va as an argument buffer; fails if it is too small. */
hcq_status hcq_args_init(hcq_args *a, void *host, uint64_t va, size_t size_B, uint32_t prefix_words, uint32_t nbufs,
                         uint32_t nvals);
/* Write the prefix and constants, record symbolic bufs/vals as patches of q. Arrays may be NULL when empty. */
hcq_status hcq_args_bind(const hcq_args *a, hcq_queue *q, const uint32_t *prefix, const hcq_val *bufs,
                         const hcq_val *vals);

#endif
