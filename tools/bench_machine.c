/* Machine description and OpenBLAS core choice for `hcq bench`: see bench_machine.h. */
#include "tools/bench_machine.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The value of the first "key : value" line of /proc/cpuinfo whose key is `key` (x86 "model name", Arm
 * "CPU part"...), into buf; false when absent. */
static bool cpuinfo_value(const char *key, char *buf, size_t cap) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return false;
  char line[4096];
  bool found = false;
  size_t klen = strlen(key);
  while (!found && fgets(line, sizeof line, f)) {
    if (strncmp(line, key, klen) != 0) continue;
    const char *p = line + klen;
    while (*p == ' ' || *p == '\t') p++;
    if (*p != ':') continue;
    p++;
    while (*p == ' ') p++;
    snprintf(buf, cap, "%s", p);
    buf[strcspn(buf, "\n")] = 0;
    found = true;
  }
  fclose(f);
  return found;
}

#if defined(__x86_64__)
static bool has(const char *feature) {
  /* __builtin_cpu_supports needs literal names; map the few we report */
  if (!strcmp(feature, "avx2")) return __builtin_cpu_supports("avx2");
  if (!strcmp(feature, "fma")) return __builtin_cpu_supports("fma");
  if (!strcmp(feature, "avx512f")) return __builtin_cpu_supports("avx512f");
  if (!strcmp(feature, "avx512bw")) return __builtin_cpu_supports("avx512bw");
  if (!strcmp(feature, "avx512vl")) return __builtin_cpu_supports("avx512vl");
  if (!strcmp(feature, "avx512dq")) return __builtin_cpu_supports("avx512dq");
  return false;
}

/* AVX-512 BF16 (CPUID leaf 7 subleaf 1, EAX bit 5): gcc 12's __builtin_cpu_supports has no name for it, so read
 * the kernel's flag list. */
static bool has_avx512_bf16(void) {
  char flags[4096];
  if (!cpuinfo_value("flags", flags, sizeof flags)) return false;
  for (char *t = strtok(flags, " "); t; t = strtok(NULL, " "))
    if (!strcmp(t, "avx512_bf16")) return true;
  return false;
}
#endif

void bench_machine_line(char *buf, size_t cap) {
  char model[256] = "unknown CPU";
  if (!cpuinfo_value("model name", model, sizeof model) && !cpuinfo_value("Model", model, sizeof model) &&
      !cpuinfo_value("CPU part", model, sizeof model))
    snprintf(model, sizeof model, "unknown CPU");
  struct utsname u;
  const char *arch = uname(&u) == 0 ? u.machine : "?";
  char feats[160] = "";
#if defined(__x86_64__)
  __builtin_cpu_init();
  const char *names[] = {"avx2", "fma", "avx512f", "avx512dq", "avx512bw", "avx512vl"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (has(names[i])) snprintf(feats + strlen(feats), sizeof feats - strlen(feats), "%s%s", *feats ? " " : "", names[i]);
  if (has_avx512_bf16()) snprintf(feats + strlen(feats), sizeof feats - strlen(feats), " avx512_bf16");
#elif defined(__aarch64__)
  snprintf(feats, sizeof feats, "neon");
#endif
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  snprintf(buf, cap, "%s · %s · %s · %ld online CPUs", model, arch, *feats ? feats : "no vector extensions reported",
           online);
}

const char *bench_openblas_best_coretype(void) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  bool avx512 = has("avx512f") && has("avx512bw") && has("avx512vl") && has("avx512dq");
  if (avx512 && has_avx512_bf16()) return "Cooperlake";
  if (avx512) return "SkylakeX";
  if (has("avx2") && has("fma")) return "Haswell";
#endif
  return NULL;
}
