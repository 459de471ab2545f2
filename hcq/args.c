/* Kernel-argument buffers: layout and binding as queue field patches. */
#include "hcq/args.h"

#include <string.h>

size_t hcq_args_size_B(uint32_t prefix_words, uint32_t nbufs, uint32_t nvals) {
  return hcq_kernarg_size_B(4u * prefix_words, nbufs, nvals);
}

hcq_status hcq_args_init(hcq_args *a, void *host, uint64_t va, size_t size_B, uint32_t prefix_words, uint32_t nbufs,
                         uint32_t nvals) {
  memset(a, 0, sizeof(*a));
  size_t need = hcq_args_size_B(prefix_words, nbufs, nvals);
  if (!host && need)
    return hcq_status_make(HCQ_CODE_INVALID, "kernel args: NULL memory for %u bufs and %u vals", nbufs, nvals);
  if (size_B < need)
    return hcq_status_make(HCQ_CODE_INVALID, "kernel args: %zu bytes needed (%u prefix words, %u bufs, %u vals), %zu given",
                           need, prefix_words, nbufs, nvals, size_B);
  *a = (hcq_args){.host = host, .va = va, .size_B = size_B, .prefix_words = prefix_words, .nbufs = nbufs, .nvals = nvals};
  return HCQ_OK;
}

hcq_status hcq_args_bind(const hcq_args *a, hcq_queue *q, const uint32_t *prefix, const hcq_val *bufs,
                         const hcq_val *vals) {
  if (hcq_args_size_B(a->prefix_words, a->nbufs, a->nvals) == 0) return HCQ_OK;
  if ((a->prefix_words && !prefix) || (a->nbufs && !bufs) || (a->nvals && !vals))
    return hcq_status_make(HCQ_CODE_INVALID, "kernel args bind: missing prefix/bufs/vals array");
  if (a->prefix_words) memcpy(a->host, prefix, 4u * a->prefix_words);
  uint32_t region;
  HCQ_TRY(hcq_queue_add_region(q, a->host, a->size_B, &region));
  for (uint32_t i = 0; i < a->nbufs; i++)
    HCQ_TRY(hcq_queue_patch_field(q, region, hcq_args_buf_offset_B(a, i), bufs[i], 64, 0));
  for (uint32_t i = 0; i < a->nvals; i++)
    HCQ_TRY(hcq_queue_patch_field(q, region, hcq_args_val_offset_B(a, i), vals[i], 32, 0));
  return HCQ_OK;
}
