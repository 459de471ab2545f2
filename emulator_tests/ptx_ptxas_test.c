/* The PTX the interpreter accepts is PTX that ptxas accepts, and the statements it refuses as invalid ptxas refuses
 * too: every instruction kernel of ptx_test_kernels.h (as one module of many entries, which the interpreter parses
 * as well), each invalid statement of PTK_INVALID in an otherwise valid kernel, and every example kernel's PTX for
 * sm_90 and sm_80 go through `ptxas -arch=sm_XX` ($HCQ_PTXAS, else /usr/local/cuda/bin/ptxas; skipped with 77 when
 * neither exists). */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/examples_test_util.h"
#include "emulator_tests/ptx_test_kernels.h"
#include "emulator_tests/ptx_test_util.h"

static const char *g_ptxas;
static char g_dir[] = "/tmp/hcq-ptxas-test-XXXXXX";

/* 1 when ptxas accepts src for arch, 0 when it refuses it (its first error line into why). */
static int ptxas_accepts(const char *src, const char *arch, char *why, size_t cap) {
  char path[300], cmd[1200];
  snprintf(path, sizeof path, "%s/k.ptx", g_dir);
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fputs(src, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "'%s' -arch=%s %s -o %s/k.cubin > %s/err.txt 2>&1", g_ptxas, arch, path, g_dir, g_dir);
  int rc = system(cmd);
  why[0] = 0;
  snprintf(path, sizeof path, "%s/err.txt", g_dir);
  if ((f = fopen(path, "r"))) {
    if (!fgets(why, (int)cap, f)) why[0] = 0;
    fclose(f);
  }
  return rc == 0;
}

static bool we_accept(const char *src, char *why, size_t cap) {
  ptx_module *m = NULL;
  hcq_status st = ptx_module_parse(src, strlen(src), &m);
  ptx_module_free(m);
  why[0] = 0;
  if (st) snprintf(why, cap, "%s", hcq_status_message(st));
  hcq_status_free(st);
  return !st;
}

static void both_accept(const char *what, const char *src, const char *arch) {
  char a[512], b[512];
  bool ours = we_accept(src, a, sizeof a);
  int theirs = ptxas_accepts(src, arch, b, sizeof b);
  if (!ours) fprintf(stderr, "%s: the interpreter refuses it: %s\n", what, a);
  if (theirs != 1) fprintf(stderr, "%s: ptxas -arch=%s refuses it: %s\n", what, arch, b);
  CHECK(ours);
  CHECK_EQ_INT(theirs, 1);
}

int main(void) {
  g_ptxas = getenv("HCQ_PTXAS");
  if (!g_ptxas || !*g_ptxas) g_ptxas = "/usr/local/cuda/bin/ptxas";
  char probe[600];
  snprintf(probe, sizeof probe, "'%s' --version > /dev/null 2>&1", g_ptxas);
  if (access(g_ptxas, X_OK) != 0 || system(probe) != 0) { /* absent, or not runnable here (a cross run) */
    printf("ptx_ptxas: SKIPPED: no runnable ptxas at %s\n", g_ptxas);
    return 77;
  }
  if (!mkdtemp(g_dir)) return 1;
  /* every instruction kernel, as the entries of one module */
  size_t cap = PTK_COUNT * 4096;
  char *all = malloc(cap);
  size_t n = (size_t)snprintf(all, cap, ".version 7.8\n.target sm_90\n.address_size 64\n");
  for (size_t i = 0; i < PTK_COUNT; i++) {
    const char *head = strstr(PTK_HEAD, ".visible .entry t(");
    n += (size_t)snprintf(all + n, cap - n, "// %s\n.visible .entry t%zu(%s%s%s", PTK_KERNELS[i].name, i,
                          head + strlen(".visible .entry t("), PTK_KERNELS[i].body, PTK_TAIL);
  }
  both_accept("the instruction kernels", all, "sm_90");
  free(all);
  /* the invalid statements: refused by both */
  for (size_t i = 0; i < PTK_INVALID_COUNT; i++) {
    char src[4096], a[512], b[512];
    snprintf(src, sizeof src, "%s%s%s", PTK_HEAD, PTK_INVALID[i], PTK_TAIL);
    bool ours = we_accept(src, a, sizeof a);
    int theirs = ptxas_accepts(src, "sm_90", b, sizeof b);
    if (ours) fprintf(stderr, "the interpreter accepts invalid `%s`", PTK_INVALID[i]);
    if (theirs != 0) fprintf(stderr, "ptxas accepts `%s` (the list is wrong)", PTK_INVALID[i]);
    CHECK(!ours);
    CHECK_EQ_INT(theirs, 0);
  }
  /* every example, both targets, with the heuristic's opts */
  char *names[ETU_MAX_EXAMPLES];
  int count = etu_list_examples(names, ETU_MAX_EXAMPLES);
  static const char *const TARGETS[] = {"ptx:sm_90", "ptx:sm_80"};
  for (int ti = 0; ti < 2; ti++) {
    cc_target t;
    CHECK_OK(cc_target_get(TARGETS[ti], 0, &t));
    for (int i = 0; i < count; i++) {
      char path[512];
      snprintf(path, sizeof path, "examples/%s", names[i]);
      uop_ctx *ctx = NULL;
      CHECK_OK(uop_ctx_create(&ctx));
      const uop *sink = NULL;
      cc_program *p = NULL;
      hcq_status st = cc_kernel_parse_file(ctx, path, &sink);
      if (!st) st = cc_compile_source(ctx, sink, &t, &(cc_options){0}, &p);
      CHECK_OK(st);
      if (p) both_accept(path, p->source, t.arch);
      cc_program_free(p);
      uop_ctx_destroy(ctx);
    }
  }
  for (int i = 0; i < count; i++) free(names[i]);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
  return testing_summary("ptx_ptxas");
}
