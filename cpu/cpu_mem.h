/* cpu_mem: host memory for the CPU device. Buffers are anonymous private mmaps, aligned as asked. */
#ifndef HCQ_CPU_MEM_H
#define HCQ_CPU_MEM_H

#include <stddef.h>

#include "hcq/status.h"

/* Map size_B bytes (rounded up to whole pages) of zeroed read-write memory whose address is a multiple of
 * align_B (a power of two; 0 means page alignment). A size that cannot be mapped is a HCQ_CODE_NOMEM error
 * naming the size. Free with cpu_free(ptr, size_B) using the same size. */
hcq_status cpu_alloc(size_t size_B, size_t align_B, void **out_ptr);
/* Unmap a buffer from cpu_alloc. NULL is a no-op. */
void cpu_free(void *ptr, size_t size_B);

/* Copies between host memory and a CPU buffer (the CPU device shares the address space; these are memmove,
 * kept as functions so the queue core treats every device alike). dst_offset_B/src_offset_B index the buffer. */
void cpu_copyin(void *buf, size_t dst_offset_B, const void *src, size_t size_B);
void cpu_copyout(void *dst, const void *buf, size_t src_offset_B, size_t size_B);

/* The page size of this host (sysconf), cached. */
size_t cpu_page_size(void);

#endif
