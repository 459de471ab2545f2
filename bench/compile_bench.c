/* compile_bench: per example kernel, the pipeline time (kernel AST -> C source, median of N runs, each in a fresh
 * uop_ctx with the kernel parsed outside the timed region) with --noopt and with the default options (the
 * heuristic runs), and the external compile time (cc on the heuristic's source, no cache, median of 3). Prints a
 * table, then one JSON line per kernel.
 * Usage: compile_bench [-x] [-c] [-k NAME] [N] [examples dir]
 *   -x       skip the external compiler (for profiling the pipeline alone, e.g. under callgrind)
 *   -c       cold: evict the caches before each timed compile (write and read a 64 MiB buffer), as the external
 *            compile does before `hcq bench`'s compile_pipeline row; back to back runs otherwise (warm)
 *   -k NAME  only the kernel file NAME.uop */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/compiler.h"
#include "compiler/kernel_text.h"
#include "compiler/toolchain.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static int cmp_s(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* -c: a buffer larger than L2 and the L3 slice, written then read before each timed compile. */
#define EVICT_B ((size_t)64 << 20)
static unsigned char *evict_buf;
static volatile unsigned evict_sink;
static void evict_caches(void) {
  if (!evict_buf) return;
  memset(evict_buf, (int)(evict_sink & 0xff) + 1, EVICT_B);
  unsigned s = 0;
  for (size_t i = 0; i < EVICT_B; i += 64) s += evict_buf[i];
  evict_sink = s;
}

/* Median pipeline time of n compiles of the kernel at path, each in a fresh context. On success *out_src is the
 * last run's source (caller frees). Returns NULL and prints the error on failure. */
static bool time_pipeline(const char *path, const char *name, const cc_target *t, const cc_options *o, int n,
                          double *times, double *out_med, size_t *out_nodes, char **out_src) {
  *out_src = NULL;
  for (int r = 0; r < n; r++) {
    uop_ctx *ctx = NULL;
    const uop *sink = NULL;
    cc_program *p = NULL;
    hcq_status st = uop_ctx_create(&ctx);
    if (!st) st = cc_kernel_parse_file(ctx, path, &sink);
    if (!st) *out_nodes = uop_ctx_node_count(ctx);
    evict_caches();
    double t0 = now_ms();
    if (!st) st = cc_compile_source(ctx, sink, t, o, &p);
    times[r] = now_ms() - t0;
    if (!st && r == n - 1) {
      *out_src = p->source;
      p->source = NULL;
    }
    cc_program_free(p);
    uop_ctx_destroy(ctx);
    if (st) {
      printf("%-26s error (%s): %s\n", name, o->noopt ? "noopt" : "heuristic", hcq_status_message(st));
      hcq_status_free(st);
      return false;
    }
  }
  qsort(times, (size_t)n, sizeof *times, cmp_d);
  *out_med = times[n / 2];
  return true;
}

int main(int argc, char **argv) {
  bool external = true;
  const char *only = NULL;
  int ai = 1;
  for (; ai < argc && argv[ai][0] == '-'; ai++) {
    if (strcmp(argv[ai], "-x") == 0) external = false;
    else if (strcmp(argv[ai], "-c") == 0) evict_buf = malloc(EVICT_B);
    else if (strcmp(argv[ai], "-k") == 0 && ai + 1 < argc) only = argv[++ai];
    else {
      fprintf(stderr, "usage: compile_bench [-x] [-c] [-k NAME] [N] [examples dir]\n");
      return 2;
    }
  }
  int n = ai < argc ? atoi(argv[ai++]) : 50;
  const char *dirname = ai < argc ? argv[ai++] : "examples";
  if (n < 1) n = 1;
  DIR *d = opendir(dirname);
  if (!d) {
    fprintf(stderr, "compile_bench: cannot open %s\n", dirname);
    return 1;
  }
  char *names[256];
  int count = 0;
  for (struct dirent *e; (e = readdir(d)) && count < 256;) {
    size_t l = strlen(e->d_name);
    if (l <= 4 || strcmp(e->d_name + l - 4, ".uop") != 0) continue;
    if (only && (strlen(only) != l - 4 || strncmp(e->d_name, only, l - 4) != 0)) continue;
    names[count++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)count, sizeof *names, cmp_s);
  cc_target t;
  hcq_status st = cc_target_get("c", 0, &t);
  if (st) return 1;
  double *times = malloc((size_t)n * sizeof *times);
  printf("%-26s %8s %12s %12s %12s %10s\n", "kernel", "nodes", "noopt_ms", "heuristic_ms", "external_ms",
         "source_B");
  static char json[256][320];
  int nj = 0;
  for (int i = 0; i < count; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dirname, names[i]);
    size_t nodes = 0;
    double med_noopt = 0, med_heur = 0, ext[3] = {0, 0, 0};
    char *src_noopt = NULL, *src = NULL;
    bool ok = time_pipeline(path, names[i], &t, &(cc_options){.noopt = true}, n, times, &med_noopt, &nodes,
                            &src_noopt) &&
              time_pipeline(path, names[i], &t, &(cc_options){0}, n, times, &med_heur, &nodes, &src);
    free(src_noopt);
    if (!ok) {
      free(src);
      continue;
    }
    for (int k = 0; k < 3 && external; k++) {
      uint8_t *obj = NULL;
      size_t obj_B = 0;
      double t1 = now_ms();
      st = cc_toolchain_compile_c(src, &obj, &obj_B);
      ext[k] = now_ms() - t1;
      free(obj);
      if (st) {
        printf("%-26s external compile failed: %s\n", names[i], hcq_status_message(st));
        hcq_status_free(st);
        st = HCQ_OK;
        break;
      }
    }
    qsort(ext, 3, sizeof *ext, cmp_d);
    size_t src_B = strlen(src);
    free(src);
    printf("%-26s %8zu %12.3f %12.3f %12.1f %10zu\n", names[i], nodes, med_noopt, med_heur, ext[1], src_B);
    snprintf(json[nj++], sizeof json[0],
             "{\"bench\":\"compile\",\"kernel\":\"%s\",\"ast_nodes\":%zu,\"pipeline_noopt_ms\":%.4f,"
             "\"pipeline_heuristic_ms\":%.4f,\"external_ms\":%.2f,\"runs\":%d,\"compiler\":\"%s\"}",
             names[i], nodes, med_noopt, med_heur, ext[1], n, cc_toolchain_cc());
  }
  for (int j = 0; j < nj; j++) puts(json[j]);
  for (int i = 0; i < count; i++) free(names[i]);
  free(times);
  return 0;
}
