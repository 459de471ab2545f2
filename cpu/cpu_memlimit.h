/* cpu_memlimit: how much memory this process may still fill, so a request that cannot fit is refused with a
 * message instead of ending in the OOM killer (buffers are MAP_NORESERVE mmaps: mapping succeeds, filling kills).
 *
 * The limit is the smallest of:
 *   MemAvailable (/proc/meminfo);
 *   cgroup v2: for the process's cgroup (the "0::PATH" line of /proc/self/cgroup) and each ancestor,
 *     /sys/fs/cgroup/PATH/memory.max - memory.current + inactive_file (memory.stat: page cache it can reclaim);
 *   cgroup v1: the memory controller's line of /proc/self/cgroup, memory.limit_in_bytes - memory.usage_in_bytes
 *     under /sys/fs/cgroup/memory/PATH (limits of 2^62 and more mean none);
 *   RLIMIT_AS - VmSize and RLIMIT_DATA - VmData (/proc/self/status), when set;
 *   on 32-bit hosts, the 4 GiB address space.
 * Requests may use 90% of it (the rest is for the process itself and the page cache).
 * $HCQ_MEMLIMIT_ROOT, when set, is prefixed to the /proc and /sys paths (tests fake the files; the rlimits are
 * then not read). */
#ifndef HCQ_CPU_MEMLIMIT_H
#define HCQ_CPU_MEMLIMIT_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

typedef struct cpu_memlimit {
  uint64_t avail_B;   /* UINT64_MAX when nothing limits */
  char source[192];   /* where avail_B came from, e.g. "cgroup /sys/fs/cgroup/a/memory.max (3072 MiB) - memory.current" */
} cpu_memlimit;

/* root: a directory prefixed to every /proc and /sys path ("" or NULL: the real files, plus the rlimits). */
void cpu_memlimit_query(const char *root, cpu_memlimit *out);

/* Refuse buffers that together do not fit in 90% of the limit: HCQ_CODE_NOMEM naming `what`, the largest buffer
 * (its index in `names`/sizes_B), its size, the total, the limit and its source. names[i] e.g. "buffer slot 2". */
hcq_status cpu_memlimit_check(const char *what, const char *const *names, const size_t *sizes_B, size_t n);

#endif
