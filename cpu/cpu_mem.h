/* cpu_mem: host memory for the CPU device. Anonymous private mmaps: cpu_alloc for the loader's images (aligned as
 * asked), cpu_buffer_alloc for device buffers (between guard regions, below). */
#ifndef HCQ_CPU_MEM_H
#define HCQ_CPU_MEM_H

#include <stdbool.h>
#include <stddef.h>

#include "base/status.h"

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

/* Device buffers: the data pages sit between two PROT_NONE guard regions (address space only, no memory), so a
 * kernel that indexes past either end faults (SIGSEGV, caught and reported by cpu_device) instead of writing into
 * a neighbouring buffer, the heap or the loader's data.
 *
 * Guard size: a C kernel indexes with 32-bit `int`s, so `base + i` lands at most 2^31 elements of at most 8 bytes
 * = 16 GiB (plus one vector) from the buffer; 64-bit hosts put 16 GiB of guard on each side, so every such access
 * lands in the buffer or its own guards. The guards cost address space (32 GiB a buffer: 4096 live buffers in a
 * 47-bit address space) and one mapping each, no memory. 32-bit hosts, an address-space limit (RLIMIT_AS) that
 * refuses the reservation, or $HCQ_CPU_GUARD_B (bytes, CPU_GUARD_MIN_B..CPU_GUARD_DEFAULT_B; the qemu-user test
 * runs use it, where qemu 7.2 takes ~1 s to map 32 GiB) give smaller guards: 1 MiB catches every overrun that
 * walks off the end and strides up to 1 MiB.
 * The buffer ends less than CPU_BUFFER_ALIGN_B bytes before the upper guard page.
 * Not caught: an overrun into those few bytes of alignment slack, an underrun into the slack before the start
 * (the rest of the first page), 64-bit index arithmetic that jumps past the guards, and writes through pointers
 * a kernel loads from memory. Slack is the buffer's own zeroed memory: no neighbour is hit. */
#define CPU_GUARD_DEFAULT_B ((size_t)1 << (sizeof(void *) >= 8 ? 34 : 20))
#define CPU_GUARD_MIN_B ((size_t)1 << 20)
#define CPU_BUFFER_ALIGN_B 16 /* what the c target assumes of buffers (compiler/target.c buf_align_B) */

typedef struct cpu_buffer {
  void *ptr;      /* the buffer, zeroed, CPU_BUFFER_ALIGN_B aligned */
  size_t size_B;
  void *map;      /* the whole reservation, guards included */
  size_t map_B;
  size_t guard_B; /* PROT_NONE bytes at least on each side of the data pages */
  struct cpu_buffer *prev, *next; /* registry of live buffers */
} cpu_buffer;

/* The guard size in use (see above). */
size_t cpu_buffer_guard_B(void);
/* Errors name the size (HCQ_CODE_NOMEM). */
hcq_status cpu_buffer_alloc(size_t size_B, cpu_buffer **out);
void cpu_buffer_free(cpu_buffer *b); /* NULL is a no-op */
/* The live buffer that starts at ptr, or NULL. */
const cpu_buffer *cpu_buffer_find(const void *ptr);
/* Describe addr relative to the live buffer whose reservation (guards included) holds it ("12 bytes past the end
 * of buffer 0x... (4 bytes)"); false when there is none. Takes a lock: not for signal handlers. */
bool cpu_buffer_describe(const void *addr, char *out, size_t cap);

#endif
