/* cpu_memlimit: the limit from faked /proc and /sys trees (cgroup v2 with a tighter ancestor, page cache, "max",
 * cgroup v1 with and without a limit, MemAvailable alone, nothing), the refusal message, a real RLIMIT_AS in a
 * child, and a 1 TiB request on this machine. Expected values are the file contents computed here by hand. */
#include "cpu/cpu_memlimit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/testing.h"

#define MiB ((uint64_t)1 << 20)

static char root[64];

static void put(const char *rel, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  for (char *s = path + strlen(root) + 1; (s = strchr(s, '/')); s++) {
    *s = 0;
    mkdir(path, 0700);
    *s = '/';
  }
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  if (f) fputs(text, f), fclose(f);
}

static void fresh(void) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s", root, root);
  CHECK(system(cmd) == 0);
}

static uint64_t query(char *source, size_t cap) {
  cpu_memlimit l;
  cpu_memlimit_query(root, &l);
  snprintf(source, cap, "%s", l.source);
  return l.avail_B;
}

int main(void) {
  snprintf(root, sizeof root, "/tmp/hcq-memlimit-test-%d", (int)getpid());
  char src[256];

  /* nothing readable: no limit */
  fresh();
  CHECK(query(src, sizeof src) == UINT64_MAX);
  CHECK(strstr(src, "no limit") != NULL);

  /* MemAvailable alone */
  put("proc/meminfo", "MemTotal:       67108864 kB\nMemFree:  100 kB\nMemAvailable:   33554432 kB\n");
  CHECK(query(src, sizeof src) == 32768 * MiB);
  CHECK(strstr(src, "MemAvailable") != NULL);

  /* cgroup v2: own group 3 GiB max, 1 GiB used of which 512 MiB inactive page cache -> 2.5 GiB; the parent
   * 2 GiB max with 1900 MiB used -> 148 MiB (tighter); the root's "max" means none */
  put("proc/self/cgroup", "0::/a/b\n");
  put("sys/fs/cgroup/a/b/memory.max", "3221225472\n");
  put("sys/fs/cgroup/a/b/memory.current", "1073741824\n");
  put("sys/fs/cgroup/a/b/memory.stat", "anon 1\nfile 2\ninactive_file 536870912\nactive_file 7\n");
  CHECK(query(src, sizeof src) == 2560 * MiB);
  CHECK(strstr(src, "/sys/fs/cgroup/a/b/memory.max") != NULL && strstr(src, "3072 MiB") != NULL);
  put("sys/fs/cgroup/a/memory.max", "2147483648\n");
  put("sys/fs/cgroup/a/memory.current", "1992294400\n");
  put("sys/fs/cgroup/memory.max", "max\n");
  CHECK(query(src, sizeof src) == 2048 * MiB - 1992294400u);
  CHECK(strstr(src, "cgroup v2 /sys/fs/cgroup/a/memory.max") != NULL);
  /* over its limit already: nothing left */
  put("sys/fs/cgroup/a/memory.current", "3000000000\n");
  CHECK(query(src, sizeof src) == 0);
  put("sys/fs/cgroup/a/memory.max", "max\n");
  CHECK(query(src, sizeof src) == 2560 * MiB);

  /* the refusal names the largest buffer, its size, the limit and its source */
  setenv("HCQ_MEMLIMIT_ROOT", root, 1);
  const char *names[] = {"buffer slot 0", "buffer slot 1", "buffer slot 2"};
  size_t sizes[] = {(size_t)64 << 20, (size_t)3 << 30, (size_t)1 << 20};
  CHECK_ERR(cpu_memlimit_check("kernel k", names, sizes, 3), HCQ_CODE_NOMEM,
            "kernel k: buffer slot 1 needs 3221225472 bytes (3072 MiB; 3137 MiB for all 3 buffers), more than the "
            "2304 MiB this process may use (90% of 2560 MiB available: cgroup v2 /sys/fs/cgroup/a/b/memory.max");
  sizes[1] = (size_t)2 << 20;
  CHECK_OK(cpu_memlimit_check("kernel k", names, sizes, 3));
  CHECK_OK(cpu_memlimit_check("kernel k", names, sizes, 0));

  /* cgroup v1: the memory controller's line; an "unlimited" value is none */
  fresh();
  put("proc/meminfo", "MemAvailable:   33554432 kB\n");
  put("proc/self/cgroup", "5:cpu,cpuacct:/x\n4:memory:/grp\n3:pids:/y\n");
  put("sys/fs/cgroup/memory/grp/memory.limit_in_bytes", "1073741824\n");
  put("sys/fs/cgroup/memory/grp/memory.usage_in_bytes", "268435456\n");
  CHECK(query(src, sizeof src) == 768 * MiB);
  CHECK(strstr(src, "cgroup v1 /sys/fs/cgroup/memory/grp/memory.limit_in_bytes") != NULL);
  put("sys/fs/cgroup/memory/grp/memory.limit_in_bytes", "9223372036854771712\n");
  CHECK(query(src, sizeof src) == 32768 * MiB);
  unsetenv("HCQ_MEMLIMIT_ROOT");

  /* the real files: 1 TiB does not fit this machine (nor any test machine) */
  size_t tib = sizeof(size_t) >= 8 ? (size_t)((uint64_t)1 << 40) : (size_t)0xf0000000u; /* 32-bit: 3.75 GiB */
  const char *one[] = {"buffer slot 0"};
  hcq_status st = cpu_memlimit_check("kernel huge", one, &tib, 1);
  CHECK(st && hcq_status_code(st) == HCQ_CODE_NOMEM && strstr(hcq_status_message(st), "buffer slot 0 needs"));
  if (st) printf("1 TiB here: %s\n", hcq_status_message(st));
  hcq_status_free(st);

  /* RLIMIT_AS in a child: 2 GiB above what it maps now; 4 GiB is refused naming the rlimit */
  pid_t pid = fork();
  if (pid == 0) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long vm_kb = 0;
    while (f && fgets(line, sizeof line, f)) sscanf(line, "VmSize: %llu kB", &vm_kb);
    if (f) fclose(f);
    struct rlimit rl = {.rlim_cur = (rlim_t)(vm_kb * 1024 + ((uint64_t)2 << 30)), .rlim_max = RLIM_INFINITY};
    if (sizeof(rlim_t) < 8 && vm_kb * 1024 + ((uint64_t)2 << 30) > (rlim_t)-1) _exit(0); /* 32-bit: cannot say */
    if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(3);
    struct rlimit back;
    if (getrlimit(RLIMIT_AS, &back) != 0 || back.rlim_cur != rl.rlim_cur) {
      /* qemu-user keeps RLIMIT_AS for itself: setrlimit succeeds, getrlimit still says unlimited */
      fprintf(stderr, "NOTE: RLIMIT_AS did not take effect (qemu-user?): the rlimit part is not checked here\n");
      _exit(0);
    }
    size_t four = sizeof(size_t) >= 8 ? (size_t)((uint64_t)4 << 30) : (size_t)3 << 30;
    hcq_status s = cpu_memlimit_check("kernel k", one, &four, 1);
    bool ok = s && strstr(hcq_status_message(s), "RLIMIT_AS = ");
    if (!ok) fprintf(stderr, "rlimit child: %s\n", s ? hcq_status_message(s) : "OK");
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);

  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", root);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", root);
  return testing_summary("cpu_memlimit_test");
}
