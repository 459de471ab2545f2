/* hcq devices [--json]: the devices hcq can run on. For now the CPU: thread count and ISA features. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "compiler/compiler.h"
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

int hcq_verb_devices(int argc, char **argv) {
  bool json = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) json = true;
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: hcq devices [--json]\n  lists the devices (CPU: worker threads from $HCQ_CPU_THREADS or the "
             "cores, ISA features)\n");
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
  return 0;
}
