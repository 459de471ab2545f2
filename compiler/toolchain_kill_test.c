/* A compile killed by SIGKILL or SIGINT (default action: no cleanup can run) must not leave temp files behind
 * for good: its private directory is removed by the next process that compiles (issue 9 item 10). The child
 * compiles with a fake compiler that signals it started and then sleeps; it is killed with its process group;
 * then the parent's first temp file must find TMPDIR holding nothing but its own private directory. */
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/toolchain.h"
#include "base/testing.h"

static int count_entries(const char *dir, const char *except) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "cc.sh") &&
        strcmp(e->d_name, "started") && (!except || strcmp(e->d_name, except)))
      n++;
  if (d) closedir(d);
  return n;
}

int main(void) {
  char root[] = "/tmp/hcq-kill-test-XXXXXX";
  if (!mkdtemp(root)) return 1;
  char tmpdir[128], cc[160], started[160];
  snprintf(tmpdir, sizeof tmpdir, "%s/tmp", root);
  mkdir(tmpdir, 0700);
  setenv("TMPDIR", tmpdir, 1);
  snprintf(cc, sizeof cc, "%s/cc.sh", root);
  snprintf(started, sizeof started, "%s/started", root);
  FILE *f = fopen(cc, "w");
  CHECK(f != NULL);
  if (!f) return 1;
  fprintf(f, "#!/bin/sh\ncat >/dev/null\necho started > %s\nexec sleep 30\n", started);
  fclose(f);
  chmod(cc, 0700);
  setenv("HCQ_CC", cc, 1);

  int sigs[] = {SIGKILL, SIGINT};
  for (int i = 0; i < 2; i++) {
    unlink(started);
    pid_t pid = fork();
    if (pid == 0) {
      setpgid(0, 0);
      signal(SIGINT, SIG_DFL);
      uint8_t *obj = NULL;
      size_t n = 0;
      hcq_status_free(cc_toolchain_compile_c("int x;\n", &obj, &n));
      _exit(0);
    }
    setpgid(pid, pid);
    for (int w = 0; w < 1000 && access(started, F_OK) != 0; w++) usleep(10000);
    CHECK(access(started, F_OK) == 0);
    kill(-pid, sigs[i]); /* the whole group, as a terminal's ^C or a job control kill would */
    if (sigs[i] != SIGKILL) kill(-pid, SIGKILL); /* the fake compiler ignores nothing, but be sure */
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status));
    CHECK(count_entries(tmpdir, NULL) >= 1); /* the killed process's files are there ... */
  }
  /* ... until the next compile in this process makes its private directory */
  char mine[4096];
  CHECK_OK(cc_tool_private_dir(mine, sizeof mine));
  const char *base = strrchr(mine, '/');
  CHECK_EQ_INT(count_entries(tmpdir, base ? base + 1 : NULL), 0);
  /* and the compiler's log never had a name: a failing compile leaves nothing in the private directory */
  setenv("HCQ_CC", "false", 1);
  uint8_t *obj = NULL;
  size_t n = 0;
  hcq_status_free(cc_toolchain_compile_c("int x;\n", &obj, &n));
  CHECK_EQ_INT(count_entries(mine, NULL), 0);

  char cmd[200];
  snprintf(cmd, sizeof cmd, "rm -rf %s", root);
  if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
  return testing_summary("toolchain_kill");
}
