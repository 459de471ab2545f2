/* Private layout of hcq_queue, shared by queue.c and queue_commands.c. */
#ifndef HCQ_QUEUE_INTERNAL_H
#define HCQ_QUEUE_INTERNAL_H

#include "hcq/queue.h"

#define HCQ_STREAM UINT32_MAX /* region id of the word stream itself */

typedef struct hcq_patch {
  uint32_t sym;    /* index into syms */
  uint32_t region; /* HCQ_STREAM or a registered region */
  size_t offset;   /* word index (stream) or byte offset (region) */
  uint64_t mask;   /* bits written inside the 32/64-bit container; never 0 */
  uint8_t width;   /* container: 32 or 64 */
  uint8_t shift;   /* the value is written as (value << shift) & mask */
  uint8_t bits;    /* bitfield patches: the field width the value must fit (0: plain masked patch) */
} hcq_patch;

typedef struct hcq_region {
  void *host;
  size_t size_B;
} hcq_region;

typedef struct hcq_qsym {
  const uop *node;
  uint64_t prev, cur;   /* value written at the last apply; value of the current apply */
  uint32_t var_start, var_count;
  int32_t direct_var;   /* >= 0: the symbol is this 64-bit variable itself, no evaluation needed */
  uint8_t changed;      /* scratch of the current apply */
  uint8_t always_eval;  /* uses names we do not track (RANGE/SPECIAL): evaluate every time */
  uint8_t fit32;        /* written to an unmasked 32-bit patch: its value must fit int32 or uint32 */
  uint8_t field_bits;   /* the narrowest bitfield patch it goes to (0: none): its value must fit that many bits */
  uint32_t fit32_patch; /* the first unmasked 32-bit patch (for the error message) */
  uint32_t field_patch; /* that bitfield patch (for the error message) */
} hcq_qsym;

typedef struct hcq_qvar {
  const char *name;
  uint32_t hint; /* index in var_vals where it was found last time */
  uint64_t prev, cur;
  uint8_t changed;
  uint8_t ranged;     /* lo..hi is checked at submit (not for uint64 variables: their range is the dtype's) */
  int64_t lo, hi;     /* declared range; the intersection when several DEFINE_VARs share the name */
} hcq_qvar;

struct hcq_queue {
  hcq_device *dev;
  hcq_queue_kind kind;
  hcq_mem storage; /* the words' block when dev->ops->queue_storage provides it (host == words) */
  uint32_t *words;
  size_t nwords, words_cap;
  /* Distinct symbols, and the distinct variables they use (a symbol is re-evaluated only when one of its
   * variables changed). */
  hcq_qsym *syms;
  size_t nsyms, syms_cap;
  hcq_qvar *vars;
  size_t nvars, vars_cap;
  uint32_t *sym_vars; /* var indices of symbol i: sym_vars[syms[i].var_start .. + var_count] */
  size_t nsym_vars, sym_vars_cap;
  uint32_t *sym_table; /* open addressing, pointer -> index, UINT32_MAX = empty */
  size_t table_cap;
  hcq_patch *patches;
  size_t npatches, patches_cap;
  hcq_region *regions;
  size_t nregions, regions_cap;
  bool applied; /* false until the first apply: then every patch is written */
  hcq_status err; /* sticky record error */
  hcq_queue_stats stats;
};

/* queue_vars.c: record the variables of symbol `sym_idx`; look up every variable for an apply. */
hcq_status hcq_queue_track_sym_vars(hcq_queue *q, uint32_t sym_idx);
hcq_status hcq_queue_lookup_vars(hcq_queue *q, const uop_var_val *vals, size_t n);


#endif
