/* Signal slots (a free-list pool over backend signal pages) and bounded waits. */
#include "hcq/signal.h"

#include <sched.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIGNAL_PAGE_B 4096u
#define SLOTS_PER_PAGE (SIGNAL_PAGE_B / sizeof(hcq_signal_mem))

struct hcq_signal_page {
  hcq_signal_page *next;
  hcq_mem mem;
  uint32_t nfree;
  uint16_t free_slots[SLOTS_PER_PAGE]; /* stack of free slot indices */
};

uint64_t hcq_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static hcq_status page_new(hcq_device *dev, hcq_signal_page **out_page) {
  hcq_signal_page *p = calloc(1, sizeof(*p));
  if (!p) return hcq_status_make(HCQ_CODE_NOMEM, "signal page bookkeeping for %s", dev->name);
  hcq_status st = dev->ops->mem_alloc(dev, SIGNAL_PAGE_B, HCQ_MEM_SIGNAL, &p->mem);
  if (st) {
    free(p);
    return hcq_status_annotate(st, "allocating a signal page on %s", dev->name);
  }
  if (!p->mem.host || (p->mem.va & 15) || ((uintptr_t)p->mem.host & 15)) {
    dev->ops->mem_free(dev, &p->mem);
    free(p);
    return hcq_status_make(HCQ_CODE_INTERNAL, "%s backend returned a signal page that is not 16-byte aligned", dev->name);
  }
  for (uint32_t i = 0; i < SLOTS_PER_PAGE; i++) p->free_slots[i] = (uint16_t)(SLOTS_PER_PAGE - 1 - i);
  p->nfree = SLOTS_PER_PAGE;
  p->next = dev->signal_pages;
  dev->signal_pages = p;
  *out_page = p;
  return HCQ_OK;
}

hcq_status hcq_signal_create(hcq_device *dev, const char *name, uint64_t initial, hcq_signal **out_sig) {
  *out_sig = NULL;
  hcq_signal_page *p = dev->signal_pages;
  while (p && p->nfree == 0) p = p->next;
  if (!p) HCQ_TRY(page_new(dev, &p));
  hcq_signal *sig = calloc(1, sizeof(*sig));
  if (!sig) return hcq_status_make(HCQ_CODE_NOMEM, "signal on %s", dev->name);
  uint16_t slot = p->free_slots[--p->nfree];
  sig->mem = (hcq_signal_mem *)p->mem.host + slot;
  sig->va = p->mem.va + (uint64_t)slot * sizeof(hcq_signal_mem);
  sig->owner = dev;
  snprintf(sig->name, sizeof(sig->name), "%s", name ? name : "signal");
  sig->mem->timestamp_ns = 0;
  hcq_signal_set(sig, initial); /* always a full 64-bit store (reference pitfall P1) */
  *out_sig = sig;
  return HCQ_OK;
}

void hcq_signal_destroy(hcq_signal *sig) {
  if (!sig) return;
  for (hcq_signal_page *p = sig->owner->signal_pages; p; p = p->next) {
    hcq_signal_mem *base = p->mem.host;
    if (sig->mem >= base && sig->mem < base + SLOTS_PER_PAGE) {
      p->free_slots[p->nfree++] = (uint16_t)(sig->mem - base);
      break;
    }
  }
  free(sig);
}

/* Called from hcq_device_fini: release every page. */
void hcq_signal_pages_free(hcq_device *dev);
void hcq_signal_pages_free(hcq_device *dev) {
  hcq_signal_page *p = dev->signal_pages;
  while (p) {
    hcq_signal_page *next = p->next;
    dev->ops->mem_free(dev, &p->mem);
    free(p);
    p = next;
  }
  dev->signal_pages = NULL;
}

static void sleep_ns(uint64_t ns) {
  struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

hcq_status hcq_signal_wait(const hcq_signal *sig, uint64_t target, uint32_t timeout_ms) {
  uint64_t seen = hcq_signal_value(sig);
  if (seen >= target) return HCQ_OK;
  const uint64_t spin_ns = 20000;
  uint64_t start = hcq_now_ns(), progress_at = start, sleep_for_ns = 10000;
  for (;;) {
    uint64_t now = hcq_now_ns();
    uint64_t v = hcq_signal_value(sig);
    if (v >= target) return HCQ_OK;
    if (v != seen) { /* progress restarts the clock */
      seen = v;
      progress_at = now;
    }
    uint64_t waited_ns = now - progress_at;
    if (waited_ns >= (uint64_t)timeout_ms * 1000000u)
      return hcq_status_make(HCQ_CODE_TIMEOUT,
                             "signal '%s' (va 0x%" PRIx64 ") did not reach %" PRIu64 " within %u ms (value %" PRIu64 ")",
                             sig->name, sig->va, target, timeout_ms, v);
    if (now - start < spin_ns) {
      /* After a short pure spin, give the core away each round: on an oversubscribed machine the thread that will
       * set the signal may be waiting for this very core. */
      if (now - start > 2000) sched_yield();
#if defined(__x86_64__) || defined(__i386__)
      else __builtin_ia32_pause();
#endif
      continue;
    }
    uint64_t left_ns = (uint64_t)timeout_ms * 1000000u - waited_ns;
    uint64_t nap = sleep_for_ns < left_ns ? sleep_for_ns : left_ns;
    if (sig->owner && sig->owner->ops->wait_sleep) {
      uint32_t ms = (uint32_t)(nap / 1000000u);
      sig->owner->ops->wait_sleep(sig->owner, &sig->mem->value, v, ms ? ms : 1);
    } else {
      sleep_ns(nap);
    }
    if (sleep_for_ns < 1000000u) sleep_for_ns *= 2;
  }
}
