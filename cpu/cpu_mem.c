#include "cpu/cpu_mem.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

size_t cpu_page_size(void) {
  static size_t cached;
  size_t ps = __atomic_load_n(&cached, __ATOMIC_RELAXED);
  if (!ps) {
    long v = sysconf(_SC_PAGESIZE);
    ps = v > 0 ? (size_t)v : 4096;
    __atomic_store_n(&cached, ps, __ATOMIC_RELAXED);
  }
  return ps;
}

static size_t round_up_pages(size_t size_B) { /* caller checked for overflow */
  size_t ps = cpu_page_size();
  return (size_B + ps - 1) & ~(ps - 1);
}

hcq_status cpu_alloc(size_t size_B, size_t align_B, void **out_ptr) {
  if (!out_ptr) return hcq_status_make(HCQ_CODE_INVALID, "cpu_alloc: out_ptr is NULL");
  *out_ptr = NULL;
  size_t ps = cpu_page_size();
  if (size_B == 0) return hcq_status_make(HCQ_CODE_INVALID, "cpu_alloc: size 0");
  if (align_B == 0) align_B = ps;
  if (align_B & (align_B - 1))
    return hcq_status_make(HCQ_CODE_INVALID, "cpu_alloc: alignment %zu is not a power of two", align_B);
  if (align_B < ps) align_B = ps;
  /* Large buffers: 2 MiB aligned and advised for transparent huge pages (fewer TLB misses for strided kernels such
   * as transposes); the advice is only a hint, ignored where THP is off. */
  enum { HUGE_B = 2u << 20 };
  bool huge = size_B >= 2 * (size_t)HUGE_B;
  if (huge && align_B < HUGE_B) align_B = HUGE_B;
  /* Over-map by the alignment, then trim both ends; reject sizes whose arithmetic would overflow. */
  if (size_B > SIZE_MAX / 2 || align_B > SIZE_MAX / 4)
    return hcq_status_make(HCQ_CODE_NOMEM, "cpu_alloc: cannot map %zu bytes (align %zu): size too large", size_B,
                           align_B);
  size_t len = round_up_pages(size_B);
  size_t span = len + align_B - ps;
  void *p = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return hcq_status_make(HCQ_CODE_NOMEM, "cpu_alloc: cannot map %zu bytes (align %zu): mmap: %s", size_B, align_B,
                           strerror(errno));
  uintptr_t start = (uintptr_t)p, aligned = (start + align_B - 1) & ~(uintptr_t)(align_B - 1);
  if (aligned > start) munmap(p, aligned - start);
  uintptr_t end = start + span, used_end = aligned + len;
  if (end > used_end) munmap((void *)used_end, end - used_end);
#ifdef MADV_HUGEPAGE
  if (huge) (void)madvise((void *)aligned, len, MADV_HUGEPAGE);
#endif
  *out_ptr = (void *)aligned;
  return HCQ_OK;
}

void cpu_free(void *ptr, size_t size_B) {
  if (!ptr || !size_B || size_B > SIZE_MAX / 2) return;
  munmap(ptr, round_up_pages(size_B));
}

void cpu_copyin(void *buf, size_t dst_offset_B, const void *src, size_t size_B) {
  memmove((char *)buf + dst_offset_B, src, size_B);
}

void cpu_copyout(void *dst, const void *buf, size_t src_offset_B, size_t size_B) {
  memmove(dst, (const char *)buf + src_offset_B, size_B);
}

/* ------------------------------------------------------------------------------------------------ guarded buffers */

/* Live buffers, for naming the buffer nearest to a faulting address. */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static cpu_buffer *reg_head;

size_t cpu_buffer_guard_B(void) {
  static size_t cached;
  size_t g = __atomic_load_n(&cached, __ATOMIC_RELAXED);
  if (g) return g;
  g = sizeof(void *) >= 8 ? CPU_GUARD_DEFAULT_B : CPU_GUARD_MIN_B;
  const char *env = getenv("HCQ_CPU_GUARD_B");
  if (env && *env) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(env, &end, 0);
    if (!errno && !*end && v >= CPU_GUARD_MIN_B && v <= CPU_GUARD_DEFAULT_B) g = (size_t)v;
  }
  g = round_up_pages(g);
  __atomic_store_n(&cached, g, __ATOMIC_RELAXED);
  return g;
}

/* Reserve [guard | data pages | guard] PROT_NONE, then open the data pages. */
static void *reserve(size_t guard_B, size_t data_B, size_t align_B, size_t *out_span) {
  if (guard_B > (SIZE_MAX - data_B - align_B) / 2) return NULL;
  size_t span = 2 * guard_B + data_B + align_B;
  void *p = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return NULL;
  *out_span = span;
  return p;
}

hcq_status cpu_buffer_alloc(size_t size_B, cpu_buffer **out) {
  if (!out) return hcq_status_make(HCQ_CODE_INVALID, "cpu_buffer_alloc: out is NULL");
  *out = NULL;
  if (size_B == 0) return hcq_status_make(HCQ_CODE_INVALID, "cpu_buffer_alloc: size 0");
  if (size_B > SIZE_MAX / 4)
    return hcq_status_make(HCQ_CODE_NOMEM, "cpu_buffer_alloc: cannot map %zu bytes: size too large", size_B);
  size_t ps = cpu_page_size(), len = round_up_pages(size_B);
  /* The data pages of large buffers start 2 MiB aligned (transparent huge pages, see cpu_alloc). The buffer ends
   * less than CPU_BUFFER_ALIGN_B bytes before the upper guard, so an overrun faults at once instead of landing in
   * the slack of its last page (a size that is a multiple of the page size starts on the page, or 2 MiB, boundary). */
  enum { HUGE_B = 2u << 20 };
  size_t align_B = size_B >= 2 * (size_t)HUGE_B ? HUGE_B : ps;
  size_t guard_B = cpu_buffer_guard_B(), span = 0;
  uint8_t *map = reserve(guard_B, len, align_B, &span);
  if (!map && guard_B > CPU_GUARD_MIN_B) { /* address space limit (RLIMIT_AS, 32-bit hosts): smaller guards */
    guard_B = round_up_pages(CPU_GUARD_MIN_B);
    map = reserve(guard_B, len, align_B, &span);
  }
  if (!map)
    return hcq_status_make(HCQ_CODE_NOMEM, "cpu_buffer_alloc: cannot reserve %zu bytes with %zu-byte guards: mmap: %s",
                           size_B, guard_B, strerror(errno));
  uintptr_t data = ((uintptr_t)map + guard_B + align_B - 1) & ~(uintptr_t)(align_B - 1);
  if (mprotect((void *)data, len, PROT_READ | PROT_WRITE) != 0) {
    int e = errno;
    munmap(map, span);
    return hcq_status_make(HCQ_CODE_NOMEM, "cpu_buffer_alloc: cannot map %zu bytes: mprotect: %s", size_B, strerror(e));
  }
#ifdef MADV_HUGEPAGE
  if (align_B == HUGE_B) (void)madvise((void *)data, len, MADV_HUGEPAGE);
#endif
  cpu_buffer *b = calloc(1, sizeof *b);
  if (!b) {
    munmap(map, span);
    return hcq_status_make(HCQ_CODE_NOMEM, "cpu_buffer_alloc: bookkeeping");
  }
  size_t tail = (len - size_B) & ~(size_t)(CPU_BUFFER_ALIGN_B - 1);
  *b = (cpu_buffer){.ptr = (void *)(data + tail), .size_B = size_B, .map = map, .map_B = span, .guard_B = guard_B};
  pthread_mutex_lock(&reg_lock);
  b->next = reg_head;
  if (reg_head) reg_head->prev = b;
  reg_head = b;
  pthread_mutex_unlock(&reg_lock);
  *out = b;
  return HCQ_OK;
}

void cpu_buffer_free(cpu_buffer *b) {
  if (!b) return;
  pthread_mutex_lock(&reg_lock);
  if (b->prev) b->prev->next = b->next;
  else reg_head = b->next;
  if (b->next) b->next->prev = b->prev;
  pthread_mutex_unlock(&reg_lock);
  munmap(b->map, b->map_B);
  free(b);
}

const cpu_buffer *cpu_buffer_find(const void *ptr) {
  pthread_mutex_lock(&reg_lock);
  const cpu_buffer *b = reg_head;
  while (b && b->ptr != ptr) b = b->next;
  pthread_mutex_unlock(&reg_lock);
  return b;
}

bool cpu_buffer_describe(const void *addr, char *out, size_t cap) {
  uintptr_t a = (uintptr_t)addr, best_d = UINTPTR_MAX;
  const cpu_buffer *best = NULL;
  pthread_mutex_lock(&reg_lock);
  for (const cpu_buffer *b = reg_head; b; b = b->next) {
    uintptr_t lo = (uintptr_t)b->ptr, hi = lo + b->size_B, m = (uintptr_t)b->map;
    uintptr_t d = a < lo ? lo - a : a >= hi ? a - hi + 1 : 0;
    if (a - m < b->map_B && d < best_d) best_d = d, best = b; /* only within its reservation (guards) */
  }
  bool found = best != NULL;
  if (found) {
    uintptr_t lo = (uintptr_t)best->ptr, hi = lo + best->size_B;
    if (a < lo) snprintf(out, cap, "%zu bytes before buffer %p (%zu bytes)", (size_t)(lo - a), best->ptr, best->size_B);
    else if (a >= hi) snprintf(out, cap, "%zu bytes past the end of buffer %p (%zu bytes)", (size_t)(a - hi), best->ptr, best->size_B);
    else snprintf(out, cap, "inside buffer %p (%zu bytes) at offset %zu", best->ptr, best->size_B, (size_t)(a - lo));
  }
  pthread_mutex_unlock(&reg_lock);
  return found;
}
