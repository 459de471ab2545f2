/* hcq devices [--json]: the devices hcq can run on: the CPU (threads, ISA features), then every other backend of the
 * registry (hcq/rt_registry.c) with each of its devices' info (arch, compiler target, memory, mock or hardware), or
 * why it has none here. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "compiler/compiler.h"
#include "hcq/device_info.h"
#include "hcq/hcq.h"
#include "cpu/cpu_pool.h"
#include "tools/verbs.h"

#if defined(__aarch64__) || defined(__arm__)
#include <sys/auxv.h>
#endif

typedef struct feature {
  const char *name;
  bool have;
} feature;

static size_t cpu_features(feature *out, size_t cap) {
  size_t n = 0;
#define ADD(nm, cond) \
  if (n < cap) out[n++] = (feature){nm, (cond)}
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  ADD("sse4.2", __builtin_cpu_supports("sse4.2"));
  ADD("avx", __builtin_cpu_supports("avx"));
  ADD("avx2", __builtin_cpu_supports("avx2"));
  ADD("fma", __builtin_cpu_supports("fma"));
  ADD("avx512f", __builtin_cpu_supports("avx512f"));
  ADD("avx512bw", __builtin_cpu_supports("avx512bw"));
  ADD("avx512vl", __builtin_cpu_supports("avx512vl"));
#elif defined(__aarch64__)
  unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
  ADD("fp", hw & (1ul << 0));
  ADD("asimd", hw & (1ul << 1));
  ADD("fphp", hw & (1ul << 9));
  ADD("asimdhp", hw & (1ul << 10));
  ADD("asimddp", hw & (1ul << 20));
  ADD("sve", hw & (1ul << 22));
  ADD("sve2", hw2 & (1ul << 1));
  ADD("bf16", hw2 & (1ul << 14));
#elif defined(__arm__)
  unsigned long hw = getauxval(AT_HWCAP); /* HWCAP_ARM_* bits of the Linux uapi */
  ADD("neon", hw & (1ul << 12));
  ADD("vfpv4", hw & (1ul << 16));
  ADD("idiva", hw & (1ul << 17));
#else
  (void)out;
  (void)cap;
#endif
#undef ADD
  return n;
}

/* The CPU model from /proc/cpuinfo ("model name" on x86, often absent on arm). */
static void cpu_model(char *buf, size_t cap) {
  snprintf(buf, cap, "%s", "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (!colon || strncmp(line, "model name", 10) != 0) continue;
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t') v++;
    v[strcspn(v, "\n")] = 0;
    snprintf(buf, cap, "%s", v);
    break;
  }
  fclose(f);
}

static void json_str(const char *s) {
  putchar('"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') printf("\\%c", *s);
    else if ((unsigned char)*s < 0x20) printf("\\u%04x", *s);
    else putchar(*s);
  }
  putchar('"');
}

/* Every backend but the CPU: its devices' info, or why it has none. Returns the exit code (1 if a device that
 * the backend counted cannot be opened). */
static int list_backends(bool json) {
  char names[256];
  snprintf(names, sizeof names, "%s", hcq_rt_backends());
  int rc = 0;
  for (char *save = NULL, *b = strtok_r(names, "\n", &save); b; b = strtok_r(NULL, "\n", &save)) {
    if (!strcmp(b, "cpu")) continue;
    unsigned n = 0;
    hcq_status st = hcq_rt_device_count(b, &n);
    if (st || n == 0) {
      const char *why = st ? hcq_status_message(st) : "no devices";
      if (json) {
        printf("{\"backend\":\"%s\",\"devices\":0,\"why\":", b);
        json_str(why);
        printf("}\n");
      } else {
        printf("%s: none (%s)\n", b, why);
      }
      hcq_status_free(st);
      continue;
    }
    for (unsigned i = 0; i < n; i++) {
      char name[64];
      snprintf(name, sizeof name, "%s:%u", b, i);
      hcq_rt_device *dev = NULL;
      hcq_device_info info;
      st = hcq_rt_open(name, &dev);
      if (!st) st = hcq_rt_info(dev, &info);
      if (st) {
        fprintf(stderr, "hcq devices: %s: %s\n", name, hcq_status_message(st));
        hcq_status_free(st);
        hcq_rt_close(dev);
        rc = 1;
        continue;
      }
      if (json) {
        printf("{\"device\":\"%s\",\"backend\":\"%s\",\"arch\":", info.name, b);
        json_str(info.arch);
        printf(",\"targets\":[");
        json_str(info.target);
        printf("],\"mem_device_B\":%llu,\"mem_host_B\":%llu,\"mock\":%s}\n", (unsigned long long)info.mem_device_B,
               (unsigned long long)info.mem_host_B, info.is_mock ? "true" : "false");
      } else {
        char dev_mem[32] = "unknown", host_mem[32] = "unknown"; /* 0: the backend does not know */
        if (info.mem_device_B) snprintf(dev_mem, sizeof dev_mem, "%.1f GiB", (double)info.mem_device_B / (1u << 30));
        if (info.mem_host_B) snprintf(host_mem, sizeof host_mem, "%.1f GiB", (double)info.mem_host_B / (1u << 30));
        printf("%s  %s  %s%s\n  memory: %s device, %s host\n  targets: %s\n", info.name, b, info.arch,
               info.is_mock ? "  (mock: emulated, not hardware)" : "", dev_mem, host_mem, info.target);
      }
      hcq_rt_close(dev);
    }
  }
  return rc;
}

int hcq_verb_devices(int argc, char **argv) {
  bool json = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) json = true;
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: hcq devices [--json]\n  lists the devices: the CPU (worker threads from $HCQ_CPU_THREADS or the "
             "cores, ISA features), then each GPU backend's devices (HCQ_MOCK=amd|nv: the emulated ones)\n");
      return 0;
    } else {
      fprintf(stderr, "hcq devices: unexpected argument '%s'\n", argv[i]);
      return 2;
    }
  }
  /* the thread count a CPU device would get, with the same rules as the pool */
  cpu_pool *pool = NULL;
  hcq_status st = cpu_pool_create(0, &pool);
  if (st) {
    fprintf(stderr, "hcq devices: %s\n", hcq_status_message(st));
    hcq_status_free(st);
    return 1;
  }
  int threads = cpu_pool_threads(pool);
  cpu_pool_destroy(pool);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  feature f[16];
  size_t nf = cpu_features(f, 16);
  char model[256];
  cpu_model(model, sizeof model);
  if (json) {
    printf("{\"device\":\"CPU:0\",\"backend\":\"cpu\",\"arch\":\"%s\",\"model\":", cc_host_arch());
    json_str(model);
    printf(",\"threads\":%d,\"cores\":%ld,\"features\":[", threads, cores);
    bool first = true;
    for (size_t i = 0; i < nf; i++)
      if (f[i].have) {
        printf("%s\"%s\"", first ? "" : ",", f[i].name);
        first = false;
      }
    printf("],\"targets\":[\"c\"]}\n");
  } else {
    printf("CPU:0  cpu  %s  %s\n  threads %d (of %ld cores)\n  features:", cc_host_arch(), model, threads, cores);
    for (size_t i = 0; i < nf; i++) printf(" %s%s", f[i].have ? "+" : "-", f[i].name);
    printf("\n  targets: c\n");
  }
  return list_backends(json);
}
