/* amd_msgpack: a small, bounded MessagePack reader for the AMDGPU metadata note (NT_AMDGPU_METADATA).
 *
 * Format: the MessagePack specification, https://github.com/msgpack/msgpack/blob/master/spec.md (type bytes,
 * big-endian lengths and numbers). amd_mp_next reads one value's header: scalars and strings completely, arrays
 * and maps as their element count (the caller then reads that many values, or key/value pairs); amd_mp_skip skips
 * one whole value. Every length is checked against the bytes left; container counts larger than the bytes left are
 * refused (each element takes at least one byte) and nesting is limited, so no input can make it loop or recurse
 * without bound. Errors name the offset in the buffer. */
#ifndef HCQ_AMD_MSGPACK_H
#define HCQ_AMD_MSGPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

#define AMD_MP_MAX_DEPTH 32

typedef enum amd_mp_type {
  AMD_MP_NIL, AMD_MP_BOOL, AMD_MP_UINT, AMD_MP_INT, AMD_MP_FLOAT, AMD_MP_STR, AMD_MP_BIN, AMD_MP_EXT, AMD_MP_ARRAY,
  AMD_MP_MAP
} amd_mp_type;

typedef struct amd_mp {
  const uint8_t *base; /* start of the buffer (for offsets in messages) */
  size_t pos, size_B;
} amd_mp;

typedef struct amd_mp_value {
  amd_mp_type type;
  uint64_t u;      /* AMD_MP_UINT, AMD_MP_BOOL (0/1) */
  int64_t i;       /* AMD_MP_INT (negative values) */
  double f;        /* AMD_MP_FLOAT */
  const char *str; /* AMD_MP_STR / BIN / EXT bytes (not NUL-terminated) */
  size_t len;      /* bytes of STR / BIN / EXT; elements of ARRAY; pairs of MAP */
} amd_mp_value;

static inline void amd_mp_init(amd_mp *m, const uint8_t *data, size_t size_B) {
  *m = (amd_mp){.base = data, .pos = 0, .size_B = size_B};
}
hcq_status amd_mp_next(amd_mp *m, amd_mp_value *out);
hcq_status amd_mp_skip(amd_mp *m);
/* Is value v the string s? */
bool amd_mp_is(const amd_mp_value *v, const char *s);
/* A non-negative integer that fits in 32 bits (UINT, or INT >= 0); errors name `what` and the offset. */
hcq_status amd_mp_u32(amd_mp *m, const char *what, uint32_t *out);
/* A string copied into buf (NUL-terminated); too long for cap is an error naming `what`. */
hcq_status amd_mp_str(amd_mp *m, const char *what, char *buf, size_t cap);

#endif
