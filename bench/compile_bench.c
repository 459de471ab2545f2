/* compile_bench: per example kernel, the pipeline time (kernel AST -> C source, median of N runs, each in a fresh
 * uop_ctx with the kernel parsed outside the timed region) and the external compile time (cc on the source, no
 * cache, median of 3). Prints a table, then one JSON line per kernel. Usage: compile_bench [N] [examples dir] */
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

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 50;
  const char *dirname = argc > 2 ? argv[2] : "examples";
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
    if (l > 4 && strcmp(e->d_name + l - 4, ".uop") == 0) names[count++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)count, sizeof *names, cmp_s);
  cc_target t;
  hcq_status st = cc_target_get("c", 0, &t);
  if (st) return 1;
  double *times = malloc((size_t)n * sizeof *times);
  printf("%-26s %8s %12s %12s %10s\n", "kernel", "nodes", "pipeline_ms", "external_ms", "source_B");
  char json[256][256];
  int nj = 0;
  for (int i = 0; i < count; i++) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dirname, names[i]);
    double ext[3] = {0, 0, 0};
    size_t nodes = 0, src_B = 0;
    bool ok = true;
    for (int r = 0; r < n && ok; r++) {
      uop_ctx *ctx = NULL;
      const uop *sink = NULL;
      cc_program *p = NULL;
      st = uop_ctx_create(&ctx);
      if (!st) st = cc_kernel_parse_file(ctx, path, &sink);
      if (!st) nodes = uop_ctx_node_count(ctx);
      double t0 = now_ms();
      if (!st) st = cc_compile_source(ctx, sink, &t, &(cc_options){.noopt = true}, &p);
      times[r] = now_ms() - t0;
      if (!st && r == 0) {
        src_B = strlen(p->source);
        for (int k = 0; k < 3 && !st; k++) {
          uint8_t *obj = NULL;
          size_t obj_B = 0;
          double t1 = now_ms();
          st = cc_toolchain_compile_c(p->source, &obj, &obj_B);
          ext[k] = now_ms() - t1;
          free(obj);
        }
      }
      if (st) {
        printf("%-26s error: %s\n", names[i], hcq_status_message(st));
        hcq_status_free(st);
        st = HCQ_OK;
        ok = false;
      }
      cc_program_free(p);
      uop_ctx_destroy(ctx);
    }
    if (!ok) continue;
    qsort(times, (size_t)n, sizeof *times, cmp_d);
    qsort(ext, 3, sizeof *ext, cmp_d);
    double med = times[n / 2];
    printf("%-26s %8zu %12.3f %12.1f %10zu\n", names[i], nodes, med, ext[1], src_B);
    snprintf(json[nj++], sizeof json[0],
             "{\"bench\":\"compile\",\"kernel\":\"%s\",\"ast_nodes\":%zu,\"pipeline_ms\":%.4f,\"external_ms\":%.2f,"
             "\"runs\":%d,\"compiler\":\"%s\"}",
             names[i], nodes, med, ext[1], n, cc_toolchain_cc());
  }
  for (int j = 0; j < nj; j++) puts(json[j]);
  for (int i = 0; i < count; i++) free(names[i]);
  free(times);
  return 0;
}
