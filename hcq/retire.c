/* Timeline-keyed retirement (see retire.h): a small array, polled in order of insertion. */
#include "hcq/retire.h"

#include <stdlib.h>

#include "hcq/signal.h"

hcq_status hcq_retire_at(hcq_device *dev, uint64_t value, hcq_retire_fn fn, void *ctx, uint64_t arg) {
  if (!fn) return hcq_status_make(HCQ_CODE_INVALID, "hcq_retire_at: NULL function");
  if (hcq_signal_value(dev->timeline) >= value) {
    fn(dev, ctx, arg);
    return HCQ_OK;
  }
  if (dev->nretire == dev->retire_cap) {
    size_t cap = dev->retire_cap ? 2 * dev->retire_cap : 16;
    hcq_retire_entry *e = realloc(dev->retire, cap * sizeof *e);
    if (!e) return hcq_status_make(HCQ_CODE_NOMEM, "device %s: retire list of %zu", dev->name, cap);
    dev->retire = e;
    dev->retire_cap = cap;
  }
  dev->retire[dev->nretire++] = (hcq_retire_entry){value, fn, ctx, arg};
  return HCQ_OK;
}

size_t hcq_retire_poll(hcq_device *dev) {
  if (!dev->nretire) return 0;
  uint64_t now = hcq_signal_value(dev->timeline);
  size_t kept = 0, freed = 0;
  for (size_t i = 0; i < dev->nretire; i++) {
    hcq_retire_entry e = dev->retire[i];
    if (e.value <= now) e.fn(dev, e.ctx, e.arg), freed++;
    else dev->retire[kept++] = e;
  }
  dev->nretire = kept;
  return freed;
}

void hcq_retire_all(hcq_device *dev) {
  /* an fn may retire more: take the list first */
  while (dev->nretire) {
    hcq_retire_entry e = dev->retire[--dev->nretire];
    e.fn(dev, e.ctx, e.arg);
  }
}
