#include "cpu/cpu_mem.h"

#include <errno.h>
#include <stdint.h>
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
