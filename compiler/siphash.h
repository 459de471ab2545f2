/* SipHash-2-4 with a 128-bit tag (Aumasson & Bernstein, "SipHash: a fast short-input PRF", 2012): a keyed MAC,
 * used by the compile cache to reject entries not written with the user's secret. Incremental: init, add pieces,
 * finish. */
#ifndef HCQ_COMPILER_SIPHASH_H
#define HCQ_COMPILER_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct cc_siphash {
  uint64_t v[4];
  uint8_t tail[8];
  size_t tail_n;
  uint64_t total_B;
} cc_siphash;

void cc_siphash_init(cc_siphash *s, const uint8_t key[16]);
void cc_siphash_add(cc_siphash *s, const void *data, size_t len);
/* The 16-byte tag, bytes in the order of the reference implementation (two little-endian 64-bit words). */
void cc_siphash_finish(cc_siphash *s, uint8_t out[16]);

#endif
