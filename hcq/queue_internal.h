/* Private layout of hcq_queue, shared by queue.c and queue_commands.c. */
#ifndef HCQ_QUEUE_INTERNAL_H
#define HCQ_QUEUE_INTERNAL_H

#include "hcq/queue.h"

#define HCQ_STREAM UINT32_MAX /* region id of the word stream itself */

typedef struct hcq_patch {
  uint32_t sym;    /* index into syms */
  uint32_t region; /* HCQ_STREAM or a registered region */
  size_t offset;   /* word index (stream) or byte offset (region) */
  uint64_t mask;   /* bits written; width-limited, never 0 */
  uint8_t width;   /* 32 or 64 */
} hcq_patch;

typedef struct hcq_region {
  void *host;
  size_t size_B;
} hcq_region;

struct hcq_queue {
  hcq_queue_kind kind;
  uint32_t *words;
  size_t nwords, words_cap;
  /* Distinct symbols and their parallel arrays. */
  const uop **syms;
  uint32_t *sym_hint;   /* index in var_vals where the symbol's variable was last found */
  uint64_t *sym_prev;   /* value written at the last apply */
  uint64_t *sym_new;    /* scratch for the current apply */
  uint8_t *sym_changed; /* scratch */
  size_t nsyms, syms_cap;
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

/* Append `nwords` zero words; *out_words points at them until the next append. */
hcq_status hcq_queue_reserve(hcq_queue *q, size_t nwords, uint32_t **out_words);

#endif
