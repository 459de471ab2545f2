/* cpu_memlimit: see cpu_memlimit.h. */
#include "cpu/cpu_memlimit.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define MiB(x) ((x) >> 20)

/* Offer a candidate: keep the smaller. */
static void offer(cpu_memlimit *out, uint64_t avail_B, const char *fmt, const char *a, uint64_t b) {
  if (avail_B >= out->avail_B) return;
  out->avail_B = avail_B;
  snprintf(out->source, sizeof out->source, fmt, a, b);
}

static bool read_u64(const char *path, uint64_t *out) {
  FILE *f = fopen(path, "r");
  if (!f) return false;
  char buf[64];
  bool ok = fgets(buf, sizeof buf, f) != NULL;
  fclose(f);
  if (!ok) return false;
  char *end;
  unsigned long long v = strtoull(buf, &end, 10);
  if (end == buf || (*end && *end != '\n')) return false; /* "max" */
  *out = v;
  return true;
}

/* The value of "KEY <n>" in a file of such lines (memory.stat) or "KEY: <n> kB" (meminfo, status; scaled). */
static bool read_key(const char *path, const char *key, uint64_t *out) {
  FILE *f = fopen(path, "r");
  if (!f) return false;
  char line[256];
  size_t kl = strlen(key);
  bool found = false;
  while (!found && fgets(line, sizeof line, f)) {
    if (strncmp(line, key, kl) != 0 || (line[kl] != ' ' && line[kl] != ':' && line[kl] != '\t')) continue;
    char *p = line + kl + (line[kl] == ':'), *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (end == p) continue;
    *out = strstr(end, "kB") ? (uint64_t)v * 1024 : (uint64_t)v;
    found = true;
  }
  fclose(f);
  return found;
}

static uint64_t sub0(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

/* cgroup v2: the cgroup and its ancestors. */
static void cgroup_v2(const char *root, const char *cg, cpu_memlimit *out) {
  char dir[1024], path[1100];
  snprintf(dir, sizeof dir, "%s/sys/fs/cgroup%s", root, strcmp(cg, "/") ? cg : "");
  for (;;) {
    uint64_t max, cur, inactive = 0;
    snprintf(path, sizeof path, "%s/memory.max", dir);
    if (read_u64(path, &max)) {
      snprintf(path, sizeof path, "%s/memory.current", dir);
      if (!read_u64(path, &cur)) cur = 0;
      snprintf(path, sizeof path, "%s/memory.stat", dir);
      (void)read_key(path, "inactive_file", &inactive);
      snprintf(path, sizeof path, "%s/memory.max", dir + strlen(root));
      const char *src = path;
      offer(out, sub0(max, sub0(cur, inactive)), "cgroup v2 %.120s = %" PRIu64 " MiB minus memory.current", src, MiB(max));
    }
    char *slash = strrchr(dir, '/');
    if (!slash || (size_t)(slash - dir) < strlen(root) + strlen("/sys/fs/cgroup")) break;
    *slash = 0;
  }
}

static void cgroup_v1(const char *root, const char *cg, cpu_memlimit *out) {
  char path[1100];
  uint64_t lim, use = 0;
  snprintf(path, sizeof path, "%s/sys/fs/cgroup/memory%s/memory.limit_in_bytes", root, strcmp(cg, "/") ? cg : "");
  if (!read_u64(path, &lim) || lim >= ((uint64_t)1 << 62)) return;
  char upath[1100];
  snprintf(upath, sizeof upath, "%s/sys/fs/cgroup/memory%s/memory.usage_in_bytes", root, strcmp(cg, "/") ? cg : "");
  (void)read_u64(upath, &use);
  offer(out, sub0(lim, use), "cgroup v1 %.120s = %" PRIu64 " MiB minus memory.usage_in_bytes", path + strlen(root), MiB(lim));
}

static void cgroups(const char *root, cpu_memlimit *out) {
  char path[1100], line[1024];
  snprintf(path, sizeof path, "%s/proc/self/cgroup", root);
  FILE *f = fopen(path, "r");
  if (!f) return;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2) continue;
    *c1 = *c2 = 0;
    const char *ctrls = c1 + 1, *cg = c2 + 1;
    if (!strcmp(line, "0") && !*ctrls) {
      cgroup_v2(root, cg, out);
    } else {
      char list[256];
      snprintf(list, sizeof list, ",%s,", ctrls);
      if (strstr(list, ",memory,")) cgroup_v1(root, cg, out);
    }
  }
  fclose(f);
}

static void rlimits(cpu_memlimit *out) {
  static const struct { int res; const char *name, *key; } lims[] = {{RLIMIT_AS, "RLIMIT_AS", "VmSize"},
                                                                      {RLIMIT_DATA, "RLIMIT_DATA", "VmData"}};
  for (size_t i = 0; i < sizeof lims / sizeof lims[0]; i++) {
    struct rlimit rl;
    if (getrlimit(lims[i].res, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) continue;
    uint64_t used = 0;
    (void)read_key("/proc/self/status", lims[i].key, &used);
    offer(out, sub0((uint64_t)rl.rlim_cur, used), "%s = %" PRIu64 " MiB minus what the process maps", lims[i].name,
          MiB((uint64_t)rl.rlim_cur));
  }
}

void cpu_memlimit_query(const char *root, cpu_memlimit *out) {
  out->avail_B = UINT64_MAX;
  snprintf(out->source, sizeof out->source, "no limit found");
  bool fake = root && *root;
  if (!fake) root = "";
  char path[1100];
  uint64_t v;
  snprintf(path, sizeof path, "%s/proc/meminfo", root);
  if (read_key(path, "MemAvailable", &v)) offer(out, v, "MemAvailable in %s (%" PRIu64 " MiB)", "/proc/meminfo", MiB(v));
  cgroups(root, out);
  if (fake) return;
  rlimits(out);
  if (sizeof(void *) < 8) offer(out, SIZE_MAX, "the %s-bit address space (%" PRIu64 " MiB)", "32", MiB((uint64_t)SIZE_MAX + 1));
}

hcq_status cpu_memlimit_check(const char *what, const char *const *names, const size_t *sizes_B, size_t n) {
  uint64_t total = 0;
  size_t big = 0;
  for (size_t i = 0; i < n; i++) {
    total += sizes_B[i] > UINT64_MAX - total ? UINT64_MAX - total : sizes_B[i];
    if (sizes_B[i] > sizes_B[big]) big = i;
  }
  if (n == 0) return HCQ_OK;
  cpu_memlimit lim;
  cpu_memlimit_query(getenv("HCQ_MEMLIMIT_ROOT"), &lim);
  uint64_t usable = lim.avail_B == UINT64_MAX ? UINT64_MAX : lim.avail_B / 10 * 9;
  if (total <= usable) return HCQ_OK;
  return hcq_status_make(HCQ_CODE_NOMEM,
                         "%s: %s needs %zu bytes (%" PRIu64 " MiB; %" PRIu64 " MiB for all %zu buffers), more than "
                         "the %" PRIu64 " MiB this process may use (90%% of %" PRIu64 " MiB available: %s)",
                         what, names[big], sizes_B[big], MiB((uint64_t)sizes_B[big]), MiB(total), n, MiB(usable),
                         MiB(lim.avail_B), lim.source);
}
