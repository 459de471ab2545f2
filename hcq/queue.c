/* Queue core: word stream, distinct-symbol table, patch lists, apply/submit. Commands live in queue_commands.c. */
#include "hcq/queue.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hcq/queue_internal.h"
#include "uop/text.h"

static hcq_status set_error(hcq_queue *q, hcq_status st) {
  if (st && !q->err) q->err = hcq_status_make(hcq_status_code(st), "%s", hcq_status_message(st));
  return st;
}

static hcq_status grow(void **arr, size_t *cap, size_t need, size_t elem_B) {
  if (need <= *cap) return HCQ_OK;
  size_t ncap = *cap ? *cap : 16;
  while (ncap < need) {
    if (ncap > SIZE_MAX / 2 / elem_B) return hcq_status_make(HCQ_CODE_NOMEM, "queue array of %zu elements", need);
    ncap *= 2;
  }
  void *p = realloc(*arr, ncap * elem_B);
  if (!p) return hcq_status_make(HCQ_CODE_NOMEM, "queue array of %zu elements", ncap);
  *arr = p;
  *cap = ncap;
  return HCQ_OK;
}

hcq_status hcq_queue_create(hcq_device *dev, hcq_queue_kind kind, hcq_queue **out_q) {
  *out_q = NULL;
  if (!dev || !dev->ops) return hcq_status_make(HCQ_CODE_INVALID, "queue create: no device");
  if (kind != HCQ_QUEUE_COMPUTE && kind != HCQ_QUEUE_COPY)
    return hcq_status_make(HCQ_CODE_INVALID, "queue create on %s: unknown queue kind %d", dev->name, (int)kind);
  hcq_queue *q = calloc(1, sizeof(*q));
  if (!q) return hcq_status_make(HCQ_CODE_NOMEM, "queue");
  q->dev = dev;
  q->kind = kind;
  *out_q = q;
  return HCQ_OK;
}

void hcq_queue_destroy(hcq_queue *q) {
  if (!q) return;
  if (q->storage.host) q->dev->ops->mem_free(q->dev, &q->storage);
  else free(q->words);
  free(q->syms);
  free(q->vars);
  free(q->sym_vars);
  free(q->sym_table);
  free(q->patches);
  free(q->regions);
  hcq_status_free(q->err);
  free(q);
}

hcq_queue_kind hcq_queue_kind_of(const hcq_queue *q) { return q->kind; }
hcq_device *hcq_queue_device(const hcq_queue *q) { return q->dev; }
const uint32_t *hcq_queue_words(const hcq_queue *q) { return q->words; }
size_t hcq_queue_word_count(const hcq_queue *q) { return q->nwords; }
size_t hcq_queue_sym_count(const hcq_queue *q) { return q->nsyms; }
size_t hcq_queue_patch_count(const hcq_queue *q) { return q->npatches; }
hcq_queue_stats hcq_queue_get_stats(const hcq_queue *q) { return q->stats; }
hcq_status hcq_queue_status(const hcq_queue *q) {
  return q->err ? hcq_status_make(hcq_status_code(q->err), "%s", hcq_status_message(q->err)) : HCQ_OK;
}

/* ------------------------------------------------------------------------------------------- symbol table */

static size_t ptr_hash(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}

static hcq_status table_rehash(hcq_queue *q, size_t cap) {
  uint32_t *t = malloc(cap * sizeof(*t));
  if (!t) return hcq_status_make(HCQ_CODE_NOMEM, "queue symbol table");
  for (size_t i = 0; i < cap; i++) t[i] = UINT32_MAX;
  for (uint32_t s = 0; s < q->nsyms; s++) {
    size_t h = ptr_hash(q->syms[s].node) & (cap - 1);
    while (t[h] != UINT32_MAX) h = (h + 1) & (cap - 1);
    t[h] = s;
  }
  free(q->sym_table);
  q->sym_table = t;
  q->table_cap = cap;
  return HCQ_OK;
}

/* Index of `sym` in the distinct-symbol list, adding it if new. */
static hcq_status sym_index(hcq_queue *q, const uop *sym, uint32_t *out_idx) {
  if (q->table_cap) {
    size_t h = ptr_hash(sym) & (q->table_cap - 1);
    for (; q->sym_table[h] != UINT32_MAX; h = (h + 1) & (q->table_cap - 1))
      if (q->syms[q->sym_table[h]].node == sym) {
        *out_idx = q->sym_table[h];
        return HCQ_OK;
      }
  }
  if (q->nsyms >= UINT32_MAX - 1) return hcq_status_make(HCQ_CODE_NOMEM, "too many symbols in one queue");
  HCQ_TRY(grow((void **)&q->syms, &q->syms_cap, q->nsyms + 1, sizeof(*q->syms)));
  uint32_t idx = (uint32_t)q->nsyms;
  q->syms[idx] = (hcq_qsym){.node = sym, .direct_var = -1, .changed = 1};
  HCQ_TRY(hcq_queue_track_sym_vars(q, idx));
  q->nsyms++;
  *out_idx = idx;
  if (q->nsyms * 2 > q->table_cap) return table_rehash(q, q->table_cap ? q->table_cap * 2 : 64);
  size_t h = ptr_hash(sym) & (q->table_cap - 1);
  while (q->sym_table[h] != UINT32_MAX) h = (h + 1) & (q->table_cap - 1);
  q->sym_table[h] = idx;
  return HCQ_OK;
}

/* Classify a value: constant (possibly a CONST node) or a valid integer symbol. */
static hcq_status resolve_val(hcq_val v, bool *out_is_const, uint64_t *out_c) {
  *out_is_const = true;
  *out_c = v.imm;
  if (!v.sym) return HCQ_OK;
  int64_t c;
  if (uop_const_value(v.sym, &c)) {
    *out_c = (uint64_t)c;
    return HCQ_OK;
  }
  if (uop_dt_is_ptr(v.sym->dtype) || !(uop_dt_is_int(v.sym->dtype) || uop_dt_is_bool(v.sym->dtype)) ||
      v.sym->dtype.count != 1)
    return hcq_status_make(HCQ_CODE_INVALID, "queue symbol of dtype %s (op %s): only integer scalars can be patched",
                           uop_dt_name(v.sym->dtype), uop_op_name(v.sym->op));
  *out_is_const = false;
  return HCQ_OK;
}

/* ------------------------------------------------------------------------------------------- writes */

static inline uint64_t full_mask(unsigned width_bits) { return width_bits == 64 ? ~0ULL : 0xffffffffULL; }

static inline uint64_t merge(uint64_t old, uint64_t v, uint64_t mask) { return (old & ~mask) | (v & mask); }

/* Returns how many stream words changed value (only those are stored: a replay rewrites exactly the words whose
 * value changed). */
static unsigned write_patch(hcq_queue *q, const hcq_patch *p, uint64_t v) {
  v <<= p->shift;
  if (p->region == HCQ_STREAM) {
    uint32_t *w = q->words + p->offset;
    if (p->width == 32) {
      uint32_t nw = (uint32_t)merge(w[0], v, p->mask);
      if (nw == w[0]) return 0;
      w[0] = nw;
      return 1;
    }
    uint64_t old = (uint64_t)w[0] | ((uint64_t)w[1] << 32), nv = merge(old, v, p->mask);
    unsigned n = 0;
    if ((uint32_t)nv != w[0]) w[0] = (uint32_t)nv, n++;
    if ((uint32_t)(nv >> 32) != w[1]) w[1] = (uint32_t)(nv >> 32), n++;
    return n;
  }
  uint8_t *at = (uint8_t *)q->regions[p->region].host + p->offset;
  if (p->width == 32) {
    uint32_t old;
    memcpy(&old, at, 4);
    old = (uint32_t)merge(old, v, p->mask);
    memcpy(at, &old, 4);
  } else {
    uint64_t old;
    memcpy(&old, at, 8);
    old = merge(old, v, p->mask);
    memcpy(at, &old, 8);
  }
  return 0;
}

/* An unmasked 32-bit patch takes a value of int32 or uint32 range; anything else would lose its high bits. (A
 * masked patch writes value & mask by definition: the caller chose the bits.) */
static bool fits32(uint64_t v) { return (int64_t)v >= INT32_MIN && (int64_t)v <= (int64_t)UINT32_MAX; }

static void describe_patch(const hcq_queue *q, const hcq_patch *p, char *buf, size_t size_B) {
  char field[48] = "the 32-bit";
  if (p->bits) snprintf(field, sizeof field, "the %u-bit field at bit %u of the %u-bit", p->bits, p->shift, p->width);
  if (p->region == HCQ_STREAM) snprintf(buf, size_B, "%s patch of word %zu", field, p->offset);
  else snprintf(buf, size_B, "%s field at byte %zu of region %u (%zu bytes)", field, p->offset, p->region,
                q->regions[p->region].size_B);
}

static hcq_status misfit_bits_error(const hcq_queue *q, const hcq_qsym *s) {
  char where[160], *text = NULL;
  describe_patch(q, &q->patches[s->field_patch], where, sizeof where);
  hcq_status rst = uop_render(s->node, &text);
  hcq_status st = hcq_status_make(HCQ_CODE_INVALID,
                                  "queue submit on %s: %s = %" PRIu64 " (0x%" PRIx64 ") does not fit %s (%u bits, patch %u); "
                                  "nothing was written",
                                  q->dev->name, rst ? uop_op_name((uop_op)s->node->op) : text, s->cur, s->cur, where,
                                  q->patches[s->field_patch].bits, s->field_patch);
  hcq_status_free(rst);
  free(text);
  return st;
}

/* "variable n (declared 0..9) = 5000000000 does not fit ..." or "symbol (a+b) = ... does not fit ...". */
static hcq_status misfit_error(const hcq_queue *q, const hcq_qsym *s) {
  const uop *n = s->node;
  char where[128], value[32];
  describe_patch(q, &q->patches[s->fit32_patch], where, sizeof where);
  if (uop_dt_is_unsigned(n->dtype)) snprintf(value, sizeof value, "%" PRIu64, s->cur);
  else snprintf(value, sizeof value, "%" PRId64, (int64_t)s->cur);
  if (n->op == UOP_DEFINE_VAR && n->arg.str)
    return hcq_status_make(HCQ_CODE_INVALID,
                           "queue submit: variable '%s' (declared %" PRId64 "..%" PRId64 ", %s) = %s does not fit %s "
                           "(int32/uint32 range); nothing was written",
                           n->arg.str, n->arg.i, n->arg.i2, uop_dt_name(n->dtype), value, where);
  char *text = NULL;
  hcq_status rst = uop_render(n, &text);
  hcq_status st = hcq_status_make(HCQ_CODE_INVALID,
                                  "queue submit: symbol %s = %s does not fit %s (int32/uint32 range); nothing was written",
                                  rst ? uop_op_name((uop_op)n->op) : text, value, where);
  hcq_status_free(rst);
  free(text);
  return st;
}

/* shift/bits: a bitfield patch (bits > 0) of `bits` bits at `shift` of the container; bits == 0: a masked patch. */
static hcq_status add_patch(hcq_queue *q, uint32_t region, size_t offset, hcq_val v, unsigned width_bits,
                            uint64_t mask, unsigned shift, unsigned bits) {
  if (width_bits != 32 && width_bits != 64)
    return hcq_status_make(HCQ_CODE_INVALID, "queue patch width %u bits: must be 32 or 64", width_bits);
  mask = mask ? mask & full_mask(width_bits) : full_mask(width_bits);
  if (!mask) return hcq_status_make(HCQ_CODE_INVALID, "queue patch mask selects no bits of a %u-bit field", width_bits);
  bool is_const;
  uint64_t c;
  HCQ_TRY(resolve_val(v, &is_const, &c));
  hcq_patch p = {.region = region, .offset = offset, .width = (uint8_t)width_bits, .mask = mask,
                 .shift = (uint8_t)shift, .bits = (uint8_t)bits};
  bool check32 = !bits && width_bits == 32 && mask == full_mask(32);
  if (bits && bits < 64 && (c >> bits) && is_const) {
    char where[160];
    describe_patch(q, &p, where, sizeof where);
    return hcq_status_make(HCQ_CODE_INVALID, "queue patch: constant %" PRIu64 " (0x%" PRIx64 ") does not fit %s", c, c,
                           where);
  }
  if (is_const) { /* constants are written at record time and never again */
    if (check32 && !fits32(c)) {
      char where[128];
      describe_patch(q, &p, where, sizeof where);
      return hcq_status_make(HCQ_CODE_INVALID, "queue patch: constant %" PRId64 " (0x%" PRIx64 ") does not fit %s",
                             (int64_t)c, c, where);
    }
    write_patch(q, &p, c);
    return HCQ_OK;
  }
  HCQ_TRY(sym_index(q, v.sym, &p.sym));
  HCQ_TRY(grow((void **)&q->patches, &q->patches_cap, q->npatches + 1, sizeof(*q->patches)));
  if (check32 && !q->syms[p.sym].fit32) {
    q->syms[p.sym].fit32 = 1;
    q->syms[p.sym].fit32_patch = (uint32_t)q->npatches;
  }
  if (bits && bits < 64 && (!q->syms[p.sym].field_bits || bits < q->syms[p.sym].field_bits)) {
    q->syms[p.sym].field_bits = (uint8_t)bits;
    q->syms[p.sym].field_patch = (uint32_t)q->npatches;
  }
  q->patches[q->npatches++] = p;
  return HCQ_OK;
}

/* ------------------------------------------------------------------------------------------- public recording */

/* Words in backend-provided storage: grow by doubling into a new block and copying. */
static hcq_status grow_storage(hcq_queue *q, size_t need) {
  if (need <= q->words_cap) return HCQ_OK;
  size_t cap = q->words_cap ? q->words_cap : 256;
  while (cap < need) {
    if (cap > SIZE_MAX / 8) return hcq_status_make(HCQ_CODE_NOMEM, "queue storage of %zu words", need);
    cap *= 2;
  }
  hcq_mem m = {0};
  hcq_status st = q->dev->ops->queue_storage(q->dev, q->kind, cap * sizeof(uint32_t), &m);
  if (st) return hcq_status_annotate(st, "queue storage of %zu words on %s", cap, q->dev->name);
  if (!m.host || m.size_B < cap * sizeof(uint32_t)) {
    if (m.host) q->dev->ops->mem_free(q->dev, &m);
    return hcq_status_make(HCQ_CODE_INVALID, "queue storage on %s: backend gave too little memory", q->dev->name);
  }
  if (q->nwords) memcpy(m.host, q->words, q->nwords * sizeof(uint32_t));
  if (q->storage.host) q->dev->ops->mem_free(q->dev, &q->storage);
  q->storage = m;
  q->words = m.host;
  q->words_cap = cap;
  return HCQ_OK;
}

hcq_status hcq_queue_reserve(hcq_queue *q, size_t nwords, uint32_t **out_words) {
  if (q->err) return hcq_queue_status(q);
  hcq_status st = q->dev->ops->queue_storage ? grow_storage(q, q->nwords + nwords)
                                             : grow((void **)&q->words, &q->words_cap, q->nwords + nwords, sizeof(*q->words));
  if (st) return set_error(q, st);
  *out_words = q->words + q->nwords;
  memset(*out_words, 0, nwords * sizeof(uint32_t));
  q->nwords += nwords;
  return HCQ_OK;
}

hcq_status hcq_queue_patch_word(hcq_queue *q, size_t word_index, hcq_val v, unsigned width_bits, uint64_t mask) {
  if (q->err) return hcq_queue_status(q);
  if (width_bits != 32 && width_bits != 64)
    return set_error(q, hcq_status_make(HCQ_CODE_INVALID, "queue patch width %u bits: must be 32 or 64", width_bits));
  size_t n = width_bits == 64 ? 2 : 1;
  if (word_index > q->nwords || q->nwords - word_index < n)
    return set_error(q, hcq_status_make(HCQ_CODE_INVALID, "queue word patch at %zu (+%zu words) is past the end (%zu words)",
                                        word_index, n, q->nwords));
  return set_error(q, add_patch(q, HCQ_STREAM, word_index, v, width_bits, mask, 0, 0));
}

hcq_status hcq_queue_emit32(hcq_queue *q, hcq_val v) {
  uint32_t *w;
  HCQ_TRY(hcq_queue_reserve(q, 1, &w));
  return hcq_queue_patch_word(q, q->nwords - 1, v, 32, 0);
}

hcq_status hcq_queue_emit64(hcq_queue *q, hcq_val v) {
  uint32_t *w;
  HCQ_TRY(hcq_queue_reserve(q, 2, &w));
  return hcq_queue_patch_word(q, q->nwords - 2, v, 64, 0);
}

hcq_status hcq_queue_add_region(hcq_queue *q, void *host, size_t size_B, uint32_t *out_region) {
  if (q->err) return hcq_queue_status(q);
  if (!host || !size_B) return set_error(q, hcq_status_make(HCQ_CODE_INVALID, "queue region: NULL or empty memory"));
  if (q->nregions >= HCQ_STREAM - 1) return set_error(q, hcq_status_make(HCQ_CODE_NOMEM, "too many queue regions"));
  hcq_status st = grow((void **)&q->regions, &q->regions_cap, q->nregions + 1, sizeof(*q->regions));
  if (st) return set_error(q, st);
  q->regions[q->nregions] = (hcq_region){host, size_B};
  *out_region = (uint32_t)q->nregions++;
  return HCQ_OK;
}

hcq_status hcq_queue_patch_field(hcq_queue *q, uint32_t region, size_t offset_B, hcq_val v, unsigned width_bits,
                                 uint64_t mask) {
  if (q->err) return hcq_queue_status(q);
  if (region >= q->nregions)
    return set_error(q, hcq_status_make(HCQ_CODE_INVALID, "queue field patch: region %u not registered (%zu regions)",
                                        region, q->nregions));
  size_t n = width_bits / 8;
  if (offset_B > q->regions[region].size_B || q->regions[region].size_B - offset_B < n)
    return set_error(q, hcq_status_make(HCQ_CODE_INVALID,
                                        "queue field patch at byte %zu (%u bits) is outside region %u of %zu bytes",
                                        offset_B, width_bits, region, q->regions[region].size_B));
  return set_error(q, add_patch(q, region, offset_B, v, width_bits, mask, 0, 0));
}

static hcq_status bits_mask(unsigned shift, unsigned width, unsigned *out_container, uint64_t *out_mask) {
  if (!width || shift + width > 64 || width > 63)
    return hcq_status_make(HCQ_CODE_INVALID, "queue bitfield of %u bits at bit %u: must lie in 64 bits (1..63 wide)",
                           width, shift);
  *out_container = shift + width > 32 ? 64 : 32;
  *out_mask = (((uint64_t)1 << width) - 1) << shift;
  return HCQ_OK;
}

hcq_status hcq_queue_patch_bits(hcq_queue *q, size_t word_index, unsigned shift, unsigned width, hcq_val v) {
  if (q->err) return hcq_queue_status(q);
  unsigned container = 0;
  uint64_t mask = 0;
  hcq_status st = bits_mask(shift, width, &container, &mask);
  if (st) return set_error(q, st);
  size_t n = container / 32;
  if (word_index > q->nwords || q->nwords - word_index < n)
    return set_error(q, hcq_status_make(HCQ_CODE_INVALID, "queue bitfield patch at word %zu (+%zu words) is past the end "
                                        "(%zu words)", word_index, n, q->nwords));
  return set_error(q, add_patch(q, HCQ_STREAM, word_index, v, container, mask, shift, width));
}

hcq_status hcq_queue_patch_shift_mask(hcq_queue *q, size_t word_index, unsigned shift, uint64_t mask, hcq_val v) {
  if (q->err) return hcq_queue_status(q);
  unsigned width = (unsigned)__builtin_popcountll(mask);
  if (!mask || width > 63 || mask != ((uint64_t)1 << width) - 1)
    return set_error(q, hcq_status_make(HCQ_CODE_INVALID, "queue bitfield mask 0x%" PRIx64 " (shift %u): not a run of low bits",
                                        mask, shift));
  return hcq_queue_patch_bits(q, word_index, shift, width, v);
}

hcq_status hcq_queue_patch_region_bits(hcq_queue *q, uint32_t region, unsigned hi, unsigned lo, hcq_val v) {
  if (q->err) return hcq_queue_status(q);
  if (region >= q->nregions)
    return set_error(q, hcq_status_make(HCQ_CODE_INVALID, "queue bitfield patch: region %u not registered (%zu regions)",
                                        region, q->nregions));
  if (hi < lo) return set_error(q, hcq_status_make(HCQ_CODE_INVALID, "queue bitfield %u:%u: hi below lo", hi, lo));
  size_t offset_B = (size_t)(lo / 32) * 4;
  unsigned shift = lo % 32, container = 0;
  uint64_t mask = 0;
  hcq_status st = bits_mask(shift, hi - lo + 1, &container, &mask);
  if (st) return set_error(q, hcq_status_annotate(st, "region bits %u:%u", hi, lo));
  if (offset_B > q->regions[region].size_B || q->regions[region].size_B - offset_B < container / 8)
    return set_error(q, hcq_status_make(HCQ_CODE_INVALID, "queue bitfield %u:%u is outside region %u of %zu bytes", hi, lo,
                                        region, q->regions[region].size_B));
  return set_error(q, add_patch(q, region, offset_B, v, container, mask, shift, hi - lo + 1));
}

/* ------------------------------------------------------------------------------------------- apply / submit */

hcq_status hcq_queue_apply(hcq_queue *q, const uop_var_val *var_vals, size_t n) {
  if (q->err) return hcq_queue_status(q);
  if (!var_vals && n) return hcq_status_make(HCQ_CODE_INVALID, "queue apply: NULL var_vals with count %zu", n);
  /* Validate: look up every variable and evaluate every symbol before writing anything. */
  HCQ_TRY(hcq_queue_lookup_vars(q, var_vals, n));
  bool any = false;
  for (uint32_t i = 0; i < q->nsyms; i++) {
    hcq_qsym *s = &q->syms[i];
    bool inputs_changed = !q->applied || s->always_eval;
    for (uint32_t k = 0; k < s->var_count && !inputs_changed; k++) inputs_changed = q->vars[q->sym_vars[s->var_start + k]].changed;
    if (!inputs_changed) {
      s->cur = s->prev;
    } else if (s->direct_var >= 0) {
      s->cur = q->vars[s->direct_var].cur;
    } else {
      int64_t v = 0;
      hcq_status st = uop_sym_infer(s->node, var_vals, n, &v);
      if (st) return hcq_status_annotate(st, "queue submit (symbol %u of %zu)", i + 1, q->nsyms);
      s->cur = (uint64_t)v;
      q->stats.syms_evaluated++;
    }
    s->changed = !q->applied || s->cur != s->prev;
    if (!s->changed) continue;
    if (s->fit32 && !fits32(s->cur)) return misfit_error(q, s);
    if (s->field_bits && (s->cur >> s->field_bits)) return misfit_bits_error(q, s);
    any = true;
  }
  if (any) {
    uint64_t writes = 0, words = 0;
    for (size_t k = 0; k < q->npatches; k++) {
      const hcq_patch *p = &q->patches[k];
      if (q->syms[p->sym].changed) {
        words += write_patch(q, p, q->syms[p->sym].cur);
        writes++;
      }
    }
    q->stats.patch_writes += writes;
    q->stats.words_written += words;
    for (uint32_t i = 0; i < q->nsyms; i++) q->syms[i].prev = q->syms[i].cur;
  }
  for (size_t v = 0; v < q->nvars; v++) q->vars[v].prev = q->vars[v].cur;
  q->applied = true;
  return HCQ_OK;
}

hcq_status hcq_queue_submit(hcq_queue *q, hcq_device *dev, const uop_var_val *var_vals, size_t n) {
  HCQ_TRY(hcq_queue_apply(q, var_vals, n));
  return hcq_queue_submit_patched(q, dev);
}

hcq_status hcq_queue_submit_patched(hcq_queue *q, hcq_device *dev) {
  if (q->err) return hcq_queue_status(q);
  if (!q->applied && q->npatches)
    return hcq_status_make(HCQ_CODE_INVALID, "queue with %zu symbolic patches submitted before any values were applied",
                           q->npatches);
  if (dev != q->dev)
    return hcq_status_make(HCQ_CODE_INVALID, "queue of %s submitted to %s: a queue belongs to its device", q->dev->name,
                           dev ? dev->name : "(null)");
  q->stats.submits++;
  hcq_status st = dev->ops->submit(dev, q->kind, q->words, q->nwords);
  return st ? hcq_status_annotate(st, "submit to %s", dev->name) : HCQ_OK;
}
