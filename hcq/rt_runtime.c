/* The runtime layer: devices from the registry, buffers, synchronize (hcq/hcq.h). Kernels and launches are in
 * hcq/rt_kernel.c, programs in hcq/rt_program.c. */
#include <stdlib.h>
#include <string.h>

#include "hcq/retire.h"
#include "hcq/signal.h"
#include "hcq/rt_private.h"

_Static_assert(HCQ_RT_MEM_DEVICE_LOCAL == HCQ_MEM_DEVICE_LOCAL && HCQ_RT_MEM_HOST_VISIBLE == HCQ_MEM_HOST_VISIBLE &&
                   HCQ_RT_MEM_UNCACHED == HCQ_MEM_UNCACHED,
               "public placement flags are the device's");

static hcq_status open_with(const char *name, hcq_device *lower, bool owned, hcq_rt_device **out) {
  if (!out) return hcq_status_make(HCQ_CODE_INVALID, "hcq_rt_open: NULL out");
  *out = NULL;
  hcq_rt_device *rd = calloc(1, sizeof *rd);
  if (!rd) return hcq_status_make(HCQ_CODE_NOMEM, "device %s", name ? name : "?");
  rd->owned = owned;
  rd->dev = lower;
  hcq_status st = lower ? HCQ_OK : hcq_rt_backend_open(name, &rd->dev);
  if (st) rd->dev = NULL;
  if (!st) st = uop_ctx_create(&rd->ctx);
  if (!st && rd->dev->ops->info) st = rd->dev->ops->info(rd->dev, &rd->info);
  else if (!st) snprintf(rd->info.name, sizeof rd->info.name, "%s", rd->dev->name);
  if (!st && !rd->info.max_global[0]) rd->info.max_global[0] = rd->info.max_global[1] = rd->info.max_global[2] = 1u << 20;
  if (st) {
    hcq_rt_close(rd);
    return st;
  }
  *out = rd;
  return HCQ_OK;
}

hcq_status hcq_rt_open(const char *name, hcq_rt_device **out) { return open_with(name, NULL, true, out); }

hcq_status hcq_rt_wrap(hcq_device *lower, int owned, hcq_rt_device **out) {
  if (!lower || !lower->ops) return hcq_status_make(HCQ_CODE_INVALID, "hcq_rt_wrap: no device");
  return open_with(lower->name, lower, owned != 0, out);
}

void hcq_rt_close(hcq_rt_device *rd) {
  if (!rd) return;
  if (rd->dev) {
    if (!rd->lost) hcq_status_free(hcq_rt_sync(rd, rd->dev->wait_timeout_ms)); /* a lost device never finishes */
    while (rd->kernels) hcq_rt_kernel_free(rd->kernels);
    while (rd->buffers) hcq_rt_buffer_free(rd->buffers);
    hcq_retire_all(rd->dev);
    if (rd->owned && rd->dev->ops->destroy) rd->dev->ops->destroy(rd->dev);
  }
  uop_ctx_destroy(rd->ctx);
  free(rd);
}

hcq_status hcq_rt_info(hcq_rt_device *rd, hcq_device_info *out) {
  if (!rd || !out) return hcq_status_make(HCQ_CODE_INVALID, "hcq_rt_info: NULL argument");
  *out = rd->info;
  return HCQ_OK;
}

hcq_device *hcq_rt_lower(hcq_rt_device *rd) { return rd ? rd->dev : NULL; }

hcq_status hcq_rt_wait_value(hcq_rt_device *rd, uint64_t value, uint32_t timeout_ms) {
  hcq_device *d = rd->dev;
  if (d->ops->signal_wait) return d->ops->signal_wait(d, d->timeline, value, timeout_ms);
  return hcq_signal_wait(d->timeline, value, timeout_ms);
}

hcq_status hcq_rt_sync(hcq_rt_device *rd, uint32_t timeout_ms) {
  if (!rd) return hcq_status_make(HCQ_CODE_INVALID, "hcq_rt_sync: NULL device");
  hcq_device *d = rd->dev;
  hcq_status st = hcq_rt_wait_value(rd, hcq_timeline_last(d), timeout_ms);
  if (!st) st = hcq_device_synchronize(d, timeout_ms); /* done already: wraps the timeline, retires everything */
  hcq_status err = d->ops->take_error ? d->ops->take_error(d) : HCQ_OK;
  rd->lost |= hcq_status_code(st) == HCQ_CODE_DEVICE_LOST || hcq_status_code(err) == HCQ_CODE_DEVICE_LOST;
  if (st) {
    hcq_status_free(err);
    return hcq_status_annotate(st, "synchronizing %s", d->name);
  }
  return err;
}

/* ------------------------------------------------------------------------------------------------ buffers */

hcq_status hcq_rt_buffer_alloc(hcq_rt_device *rd, size_t size_B, unsigned flags, hcq_rt_buffer **out) {
  if (!rd || !out) return hcq_status_make(HCQ_CODE_INVALID, "hcq_rt_buffer_alloc: NULL argument");
  *out = NULL;
  if (flags & ~(unsigned)(HCQ_MEM_DEVICE_LOCAL | HCQ_MEM_HOST_VISIBLE | HCQ_MEM_UNCACHED))
    return hcq_status_make(HCQ_CODE_INVALID, "buffer of %zu bytes: unknown placement flags 0x%x", size_B, flags);
  hcq_rt_buffer *b = calloc(1, sizeof *b);
  if (!b) return hcq_status_make(HCQ_CODE_NOMEM, "buffer of %zu bytes", size_B);
  hcq_retire_poll(rd->dev);
  hcq_status st = rd->dev->ops->mem_alloc(rd->dev, size_B ? size_B : 1, flags, &b->mem);
  if (st) {
    free(b);
    return hcq_status_annotate(st, "%s: buffer of %zu bytes", rd->dev->name, size_B);
  }
  b->rd = rd;
  b->size_B = size_B;
  b->next = rd->buffers;
  if (rd->buffers) rd->buffers->prev = b;
  rd->buffers = b;
  *out = b;
  return HCQ_OK;
}

static void retire_buffer(hcq_device *dev, void *ctx, uint64_t arg) {
  (void)arg;
  hcq_rt_buffer *b = ctx;
  dev->ops->mem_free(dev, &b->mem);
  free(b);
}

void hcq_rt_buffer_free(hcq_rt_buffer *b) {
  if (!b) return;
  hcq_rt_device *rd = b->rd;
  if (b->prev) b->prev->next = b->next;
  else rd->buffers = b->next;
  if (b->next) b->next->prev = b->prev;
  hcq_device *d = rd->dev;
  hcq_status st = hcq_retire_at(d, hcq_timeline_last(d), retire_buffer, b, 0);
  if (st) { /* no room to defer: wait for the work that may use it */
    hcq_status_free(st);
    hcq_status_free(hcq_rt_wait_value(rd, hcq_timeline_last(d), d->wait_timeout_ms));
    retire_buffer(d, b, 0);
  }
}

void *hcq_rt_buffer_host(const hcq_rt_buffer *b) { return b ? b->mem.host : NULL; }
uint64_t hcq_rt_buffer_va(const hcq_rt_buffer *b) { return b ? b->mem.va : 0; }
size_t hcq_rt_buffer_size_B(const hcq_rt_buffer *b) { return b ? b->size_B : 0; }
