/* amd_msgpack: see amd_msgpack.h. Type bytes from the MessagePack spec
 * (https://github.com/msgpack/msgpack/blob/master/spec.md, "Formats"). */
#include "amd/amd_msgpack.h"

#include <string.h>

static hcq_status mp_err(const amd_mp *m, size_t at, const char *what) {
  (void)m;
  return hcq_status_make(HCQ_CODE_INVALID, "msgpack at offset 0x%zx: %s", at, what);
}

/* n big-endian bytes at the cursor. */
static hcq_status take_be(amd_mp *m, size_t at, size_t n, uint64_t *out) {
  if (m->size_B - m->pos < n) return mp_err(m, at, "truncated value");
  uint64_t v = 0;
  for (size_t k = 0; k < n; k++) v = v << 8 | m->base[m->pos + k];
  m->pos += n;
  *out = v;
  return HCQ_OK;
}

/* `len` payload bytes at the cursor. */
static hcq_status take_bytes(amd_mp *m, size_t at, uint64_t len, amd_mp_value *out) {
  if (len > m->size_B - m->pos) return mp_err(m, at, "string, binary or extension runs past the end");
  out->str = (const char *)m->base + m->pos;
  out->len = (size_t)len;
  m->pos += (size_t)len;
  return HCQ_OK;
}

/* A container of `count` elements (pairs: 2 per count for a map): each takes at least a byte. */
static hcq_status container(amd_mp *m, size_t at, amd_mp_type type, uint64_t count, amd_mp_value *out) {
  uint64_t min_bytes = type == AMD_MP_MAP ? count * 2 : count;
  if (count > m->size_B || min_bytes > m->size_B - m->pos) return mp_err(m, at, "array or map count exceeds the bytes left");
  out->type = type;
  out->len = (size_t)count;
  return HCQ_OK;
}

hcq_status amd_mp_next(amd_mp *m, amd_mp_value *out) {
  memset(out, 0, sizeof *out);
  size_t at = m->pos;
  if (m->pos >= m->size_B) return mp_err(m, at, "unexpected end of data");
  uint8_t t = m->base[m->pos++];
  uint64_t n = 0;
  if (t <= 0x7f) return out->type = AMD_MP_UINT, out->u = t, HCQ_OK;
  if (t >= 0xe0) return out->type = AMD_MP_INT, out->i = (int8_t)t, HCQ_OK;
  if (t >= 0x80 && t <= 0x8f) return container(m, at, AMD_MP_MAP, t & 0x0f, out);
  if (t >= 0x90 && t <= 0x9f) return container(m, at, AMD_MP_ARRAY, t & 0x0f, out);
  if (t >= 0xa0 && t <= 0xbf) return out->type = AMD_MP_STR, take_bytes(m, at, t & 0x1f, out);
  switch (t) {
  case 0xc0: out->type = AMD_MP_NIL; return HCQ_OK;
  case 0xc2:
  case 0xc3: out->type = AMD_MP_BOOL, out->u = t == 0xc3; return HCQ_OK;
  case 0xc4: case 0xc5: case 0xc6: /* bin 8/16/32 */
    HCQ_TRY(take_be(m, at, (size_t)1 << (t - 0xc4), &n));
    out->type = AMD_MP_BIN;
    return take_bytes(m, at, n, out);
  case 0xc7: case 0xc8: case 0xc9: /* ext 8/16/32: length, type byte, data */
    HCQ_TRY(take_be(m, at, (size_t)1 << (t - 0xc7), &n));
    out->type = AMD_MP_EXT;
    return take_bytes(m, at, n + 1, out);
  case 0xca: {
    uint64_t b = 0;
    HCQ_TRY(take_be(m, at, 4, &b));
    float f;
    uint32_t w = (uint32_t)b;
    memcpy(&f, &w, 4);
    out->type = AMD_MP_FLOAT, out->f = f;
    return HCQ_OK;
  }
  case 0xcb: {
    uint64_t b = 0;
    HCQ_TRY(take_be(m, at, 8, &b));
    memcpy(&out->f, &b, 8);
    out->type = AMD_MP_FLOAT;
    return HCQ_OK;
  }
  case 0xcc: case 0xcd: case 0xce: case 0xcf: /* uint 8/16/32/64 */
    out->type = AMD_MP_UINT;
    return take_be(m, at, (size_t)1 << (t - 0xcc), &out->u);
  case 0xd0: case 0xd1: case 0xd2: case 0xd3: { /* int 8/16/32/64: sign-extend */
    size_t bytes = (size_t)1 << (t - 0xd0);
    HCQ_TRY(take_be(m, at, bytes, &n));
    unsigned shift = (unsigned)(64 - 8 * bytes);
    int64_t v = (int64_t)(n << shift) >> shift;
    if (v >= 0) out->type = AMD_MP_UINT, out->u = (uint64_t)v;
    else out->type = AMD_MP_INT, out->i = v;
    return HCQ_OK;
  }
  case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8: /* fixext 1/2/4/8/16: type byte, data */
    out->type = AMD_MP_EXT;
    return take_bytes(m, at, ((uint64_t)1 << (t - 0xd4)) + 1, out);
  case 0xd9: case 0xda: case 0xdb: /* str 8/16/32 */
    HCQ_TRY(take_be(m, at, (size_t)1 << (t - 0xd9), &n));
    out->type = AMD_MP_STR;
    return take_bytes(m, at, n, out);
  case 0xdc: case 0xdd: /* array 16/32 */
    HCQ_TRY(take_be(m, at, t == 0xdc ? 2 : 4, &n));
    return container(m, at, AMD_MP_ARRAY, n, out);
  case 0xde: case 0xdf: /* map 16/32 */
    HCQ_TRY(take_be(m, at, t == 0xde ? 2 : 4, &n));
    return container(m, at, AMD_MP_MAP, n, out);
  default: return mp_err(m, at, "type byte 0xc1 is never used");
  }
}

static hcq_status skip(amd_mp *m, int depth) {
  size_t at = m->pos;
  if (depth > AMD_MP_MAX_DEPTH) return mp_err(m, at, "nesting deeper than 32");
  amd_mp_value v;
  HCQ_TRY(amd_mp_next(m, &v));
  if (v.type != AMD_MP_ARRAY && v.type != AMD_MP_MAP) return HCQ_OK;
  size_t n = v.type == AMD_MP_MAP ? v.len * 2 : v.len;
  for (size_t k = 0; k < n; k++) HCQ_TRY(skip(m, depth + 1));
  return HCQ_OK;
}

hcq_status amd_mp_skip(amd_mp *m) { return skip(m, 0); }

bool amd_mp_is(const amd_mp_value *v, const char *s) {
  return v->type == AMD_MP_STR && v->len == strlen(s) && memcmp(v->str, s, v->len) == 0;
}

hcq_status amd_mp_u32(amd_mp *m, const char *what, uint32_t *out) {
  size_t at = m->pos;
  amd_mp_value v;
  HCQ_TRY(amd_mp_next(m, &v));
  if (v.type != AMD_MP_UINT || v.u > UINT32_MAX)
    return hcq_status_make(HCQ_CODE_INVALID, "msgpack at offset 0x%zx: %s is not an unsigned 32-bit integer", at, what);
  *out = (uint32_t)v.u;
  return HCQ_OK;
}

hcq_status amd_mp_str(amd_mp *m, const char *what, char *buf, size_t cap) {
  size_t at = m->pos;
  amd_mp_value v;
  HCQ_TRY(amd_mp_next(m, &v));
  if (v.type != AMD_MP_STR) return hcq_status_make(HCQ_CODE_INVALID, "msgpack at offset 0x%zx: %s is not a string", at, what);
  if (v.len >= cap || memchr(v.str, 0, v.len))
    return hcq_status_make(HCQ_CODE_INVALID, "msgpack at offset 0x%zx: %s (%zu bytes) is longer than %zu or holds a NUL",
                           at, what, v.len, cap - 1);
  memcpy(buf, v.str, v.len);
  buf[v.len] = 0;
  return HCQ_OK;
}
