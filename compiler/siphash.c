/* SipHash-2-4, 128-bit output variant, written from the paper's description (see siphash.h). */
#include "compiler/siphash.h"

#include <string.h>

static uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

static uint64_t load64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static void rounds(uint64_t v[4], int n) {
  for (int i = 0; i < n; i++) {
    v[0] += v[1], v[1] = rotl(v[1], 13), v[1] ^= v[0], v[0] = rotl(v[0], 32);
    v[2] += v[3], v[3] = rotl(v[3], 16), v[3] ^= v[2];
    v[0] += v[3], v[3] = rotl(v[3], 21), v[3] ^= v[0];
    v[2] += v[1], v[1] = rotl(v[1], 17), v[1] ^= v[2], v[2] = rotl(v[2], 32);
  }
}

static void block(cc_siphash *s, uint64_t m) {
  s->v[3] ^= m;
  rounds(s->v, 2);
  s->v[0] ^= m;
}

void cc_siphash_init(cc_siphash *s, const uint8_t key[16]) {
  uint64_t k0 = load64(key), k1 = load64(key + 8);
  s->v[0] = k0 ^ 0x736f6d6570736575ull;
  s->v[1] = k1 ^ 0x646f72616e646f6dull ^ 0xee; /* 0xee: the 128-bit variant */
  s->v[2] = k0 ^ 0x6c7967656e657261ull;
  s->v[3] = k1 ^ 0x7465646279746573ull;
  s->tail_n = 0;
  s->total_B = 0;
}

void cc_siphash_add(cc_siphash *s, const void *data, size_t len) {
  const uint8_t *p = data;
  s->total_B += len;
  while (len && s->tail_n) { /* finish a partial word first */
    s->tail[s->tail_n++] = *p++;
    len--;
    if (s->tail_n == 8) {
      block(s, load64(s->tail));
      s->tail_n = 0;
    }
  }
  for (; len >= 8; p += 8, len -= 8) block(s, load64(p));
  memcpy(s->tail, p, len);
  s->tail_n += len;
}

void cc_siphash_finish(cc_siphash *s, uint8_t out[16]) {
  uint64_t b = s->total_B << 56;
  for (size_t i = 0; i < s->tail_n; i++) b |= (uint64_t)s->tail[i] << (8 * i);
  block(s, b);
  uint64_t words[2];
  s->v[2] ^= 0xee;
  rounds(s->v, 4);
  words[0] = s->v[0] ^ s->v[1] ^ s->v[2] ^ s->v[3];
  s->v[1] ^= 0xdd;
  rounds(s->v, 4);
  words[1] = s->v[0] ^ s->v[1] ^ s->v[2] ^ s->v[3];
  for (int w = 0; w < 2; w++)
    for (int i = 0; i < 8; i++) out[8 * w + i] = (uint8_t)(words[w] >> (8 * i));
}
