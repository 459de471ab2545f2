/* Per-device core state: init/fini, the timeline counter and its 32-bit wrap via the shadow signal. */
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "hcq/retire.h"
#include "hcq/signal.h"

void hcq_signal_pages_free(hcq_device *dev); /* hcq/signal.c */

hcq_status hcq_device_init(hcq_device *dev, const hcq_device_ops *ops, void *impl, const char *name) {
  memset(dev, 0, sizeof(*dev));
  if (!ops || !ops->submit || !ops->mem_alloc || !ops->mem_free)
    return hcq_status_make(HCQ_CODE_INVALID, "device '%s': backend ops lack submit/mem_alloc/mem_free", name ? name : "?");
  dev->ops = ops;
  dev->impl = impl;
  snprintf(dev->name, sizeof(dev->name), "%s", name ? name : "dev");
  dev->timeline_value = 1;
  dev->wait_timeout_ms = 30000;
  char sname[64];
  snprintf(sname, sizeof(sname), "timeline:%s", dev->name);
  hcq_status st = hcq_signal_create(dev, sname, 0, &dev->timeline);
  if (!st) {
    snprintf(sname, sizeof(sname), "shadow_timeline:%s", dev->name);
    st = hcq_signal_create(dev, sname, 0, &dev->shadow_timeline);
  }
  if (st) hcq_device_fini(dev);
  return st;
}

void hcq_device_fini(hcq_device *dev) {
  if (!dev->ops) return;
  hcq_retire_all(dev);
  free(dev->retire);
  dev->retire = NULL;
  dev->retire_cap = 0;
  hcq_signal_destroy(dev->timeline);
  hcq_signal_destroy(dev->shadow_timeline);
  dev->timeline = dev->shadow_timeline = NULL;
  hcq_signal_pages_free(dev);
  dev->ops = NULL;
}

uint64_t hcq_timeline_next(hcq_device *dev) {
  /* Values are stored and compared in 32 bits on some devices: never hand out 0xffffffff or more. */
  if (dev->timeline_value >= 0xffffffffu) return 0;
  return dev->timeline_value++;
}

hcq_status hcq_device_synchronize(hcq_device *dev, uint32_t timeout_ms) {
  hcq_status st = hcq_signal_wait(dev->timeline, dev->timeline_value - 1, timeout_ms);
  if (st) return hcq_status_annotate(st, "synchronize %s", dev->name);
  hcq_retire_all(dev); /* all work is done; entries must not outlive a wrap of the timeline values */
  if (dev->timeline_value > HCQ_TIMELINE_WRAP_AT) {
    /* Everything is done, so no queue still refers to the old timeline: swap and restart the count. */
    hcq_signal *old = dev->timeline;
    dev->timeline = dev->shadow_timeline;
    dev->shadow_timeline = old;
    hcq_signal_set(dev->timeline, 0); /* full 64-bit store */
    dev->timeline_value = 1;
    dev->timeline_wraps++;
  }
  return HCQ_OK;
}
