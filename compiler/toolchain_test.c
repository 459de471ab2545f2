#include <signal.h>
/* Toolchain subprocess helpers (cc_tool_*) and the failure reports of the three drivers built on them: a failed
 * tool is reported with its exit code, the command and what it wrote to stdout/stderr; a missing tool names what
 * to install. References are hand-written shell scripts whose output and exit code are known in advance. */
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "compiler/toolchain.h"
#include "base/testing.h"

static char g_dir[] = "/tmp/hcq-toolchain-test-XXXXXX";

/* Write an executable shell script g_dir/name; its path goes to out. */
static void write_script(const char *name, const char *body, char *out, size_t cap) {
  snprintf(out, cap, "%s/%s", g_dir, name);
  FILE *f = fopen(out, "w");
  if (!f) return;
  fprintf(f, "#!/bin/sh\n%s\n", body);
  fclose(f);
  chmod(out, 0755);
}

static void test_find(void) {
  char path[4096] = "";
  CHECK(cc_tool_find("sh", path, sizeof path));
  CHECK(path[0] == '/' && strcmp(path + strlen(path) - 3, "/sh") == 0 && access(path, X_OK) == 0);
  CHECK(!cc_tool_find("/nonexistent/hcq-tool", NULL, 0));
  CHECK(!cc_tool_find("hcq-no-such-tool-on-path", NULL, 0));
  /* a name on a private PATH, and an empty PATH entry meaning "." */
  char script[512];
  write_script("hcq-fake-tool", "exit 0", script, sizeof script);
  const char *saved = getenv("PATH");
  char *saved_copy = saved ? strdup(saved) : NULL;
  char newpath[600];
  snprintf(newpath, sizeof newpath, "/nonexistent:%s", g_dir);
  setenv("PATH", newpath, 1);
  CHECK(cc_tool_find("hcq-fake-tool", path, sizeof path));
  CHECK_EQ_STR(path, script);
  char cwd[4096];
  if (getcwd(cwd, sizeof cwd) && chdir(g_dir) == 0) {
    setenv("PATH", ":/nonexistent", 1);
    CHECK(cc_tool_find("hcq-fake-tool", path, sizeof path));
    CHECK_EQ_STR(path, "./hcq-fake-tool");
    CHECK(chdir(cwd) == 0);
  }
  if (saved_copy) setenv("PATH", saved_copy, 1);
  else unsetenv("PATH");
  free(saved_copy);
}

static void test_run(void) {
  int exit_code = 99;
  char *log = NULL;
  /* stdin is fed; stdout and stderr land in one log, in the order written */
  char *cat_argv[] = {"sh", "-c", "cat; echo to-stderr >&2; exit 3", NULL};
  CHECK_OK(cc_tool_run(cat_argv, "hello\n", &exit_code, &log));
  CHECK_EQ_INT(exit_code, 3);
  CHECK_EQ_STR(log, "hello\nto-stderr\n");
  free(log);
  /* no input: stdin is empty (a reader sees end of file at once) */
  char *wc_argv[] = {"sh", "-c", "wc -c", NULL};
  CHECK_OK(cc_tool_run(wc_argv, NULL, &exit_code, &log));
  CHECK_EQ_INT(exit_code, 0);
  CHECK(log && atoi(log) == 0);
  free(log);
  /* a tool that exits without reading its input (a compiler refusing a flag): its exit code, and this process is
   * not killed by SIGPIPE (default disposition; the input is larger than a pipe buffer so the write must fail) */
  void (*old_pipe)(int) = signal(SIGPIPE, SIG_DFL);
  size_t big_B = (size_t)1 << 20;
  char *big = malloc(big_B + 1);
  memset(big, 'x', big_B);
  big[big_B] = 0;
  char *early_argv[] = {"sh", "-c", "exit 5", NULL};
  for (int i = 0; i < 3; i++) {
    CHECK_OK(cc_tool_run(early_argv, big, &exit_code, &log));
    CHECK_EQ_INT(exit_code, 5);
    free(log);
  }
  sigset_t pending;
  CHECK(sigpending(&pending) == 0 && !sigismember(&pending, SIGPIPE)); /* none left queued either */
  free(big);
  signal(SIGPIPE, old_pipe);
  /* killed by a signal: exit code -1 */
  char *kill_argv[] = {"sh", "-c", "kill -9 $$", NULL};
  CHECK_OK(cc_tool_run(kill_argv, NULL, &exit_code, &log));
  CHECK_EQ_INT(exit_code, -1);
  free(log);
  /* a tool that cannot be started is an error, not an exit code (under qemu-user the exec fails in the forked
   * child instead, which exits 127: the reason callers ask cc_tool_find first) */
  char *missing_argv[] = {"/nonexistent/hcq-tool", NULL};
  log = NULL;
  hcq_status st = cc_tool_run(missing_argv, "x", &exit_code, &log);
  if (st) {
    CHECK_EQ_INT(hcq_status_code(st), HCQ_CODE_UNSUPPORTED);
    CHECK(strstr(hcq_status_message(st), "posix_spawn(/nonexistent/hcq-tool)") != NULL);
    CHECK(log == NULL);
    hcq_status_free(st);
  } else {
    CHECK(getenv("HCQ_QEMU_USER") != NULL);
    CHECK_EQ_INT(exit_code, 127);
  }
  free(log);
  /* temp files */
  char tmp[256];
  CHECK_OK(cc_tool_temp(tmp, sizeof tmp, "unit"));
  struct stat stt;
  CHECK(stat(tmp, &stt) == 0 && stt.st_size == 0 && strstr(tmp, "/unit-") != NULL);
  uint8_t *data = NULL;
  size_t size_B = 99;
  CHECK_OK(cc_tool_read_file(tmp, &data, &size_B));
  CHECK_EQ_INT(size_B, 0);
  CHECK(data && data[0] == 0);
  free(data);
  unlink(tmp);
  CHECK_ERR(cc_tool_read_file("/nonexistent/hcq-file", &data, &size_B), HCQ_CODE_IO, "open(/nonexistent/hcq-file)");
}

/* Each driver's report of a failing tool: exit code, command and the tool's output. */
static void test_driver_failures(void) {
  char fake[512], msg[1200];
  uint8_t *bin = NULL;
  size_t bin_B = 0;

  /* C driver, with a fake compiler that fails after reading its stdin */
  write_script("fake-cc", "cat >/dev/null; echo 'fake-cc: no good' >&2; exit 4", fake, sizeof fake);
  setenv("HCQ_CC", fake, 1);
  snprintf(msg, sizeof msg, "compile failed (exit 4): %s %s - -o ", fake, cc_toolchain_flags());
  CHECK_ERR(cc_toolchain_compile_c("int x;", &bin, &bin_B), HCQ_CODE_INVALID, msg);
  CHECK_ERR(cc_toolchain_compile_c("int x;", &bin, &bin_B), HCQ_CODE_INVALID, "\nfake-cc: no good\n");
  CHECK(bin == NULL);
  setenv("HCQ_CC", "/nonexistent/hcq-cc", 1);
  CHECK_ERR(cc_toolchain_compile_c("int x;", &bin, &bin_B), HCQ_CODE_UNSUPPORTED,
            "C compiler '/nonexistent/hcq-cc' not found: install the Debian package gcc (or set HCQ_CC)");
  unsetenv("HCQ_CC");

  /* LLVM driver: the whole command is quoted */
  write_script("fake-clang", "cat >/dev/null; echo 'fake-clang: bad IR' >&2; exit 1", fake, sizeof fake);
  setenv("HCQ_CLANG", fake, 1);
  cc_target t;
  CHECK_OK(cc_target_get("llvm-cpu", 1, &t));
  snprintf(msg, sizeof msg, "%s failed (exit 1): %s -c -x ir -O2 -fPIC ", fake, fake);
  CHECK_ERR(cc_llvm_compile(&t, "junk", &bin, &bin_B), HCQ_CODE_INVALID, msg);
  CHECK_ERR(cc_llvm_compile(&t, "junk", &bin, &bin_B), HCQ_CODE_INVALID, " - -o ");
  CHECK_ERR(cc_llvm_compile(&t, "junk", &bin, &bin_B), HCQ_CODE_INVALID, "\nfake-clang: bad IR\n");
  setenv("HCQ_CLANG", "/nonexistent/clang-19", 1);
  CHECK_ERR(cc_llvm_compile(&t, "junk", &bin, &bin_B), HCQ_CODE_UNSUPPORTED,
            "'/nonexistent/clang-19' not found on PATH: install the Debian package clang-19");
  unsetenv("HCQ_CLANG");

  /* PTX driver: a fake ptxas that sees an empty stdin and the PTX in its last argument */
  write_script("fake-ptxas", "read line && exit 9; cat \"$5\" >&2; exit 2", fake, sizeof fake);
  snprintf(msg, sizeof msg, "ptxas failed (exit 2): %s -arch=sm_80 -O3 -o OUT IN.ptx\n.version 8.0\n", fake);
  CHECK_ERR(cc_ptx_assemble(fake, "sm_80", ".version 8.0\n", &bin, &bin_B), HCQ_CODE_INVALID, msg);
  /* one that succeeds but writes nothing */
  write_script("empty-ptxas", "exit 0", fake, sizeof fake);
  CHECK_ERR(cc_ptx_assemble(fake, "sm_80", "x", &bin, &bin_B), HCQ_CODE_INVALID, "ptxas wrote an empty cubin");
  /* $HCQ_PTXAS pointing nowhere */
  char path[1024];
  setenv("HCQ_PTXAS", "/nonexistent/ptxas", 1);
  CHECK_ERR(cc_ptx_ptxas(path, sizeof path), HCQ_CODE_UNSUPPORTED, "ptxas '/nonexistent/ptxas' (from $HCQ_PTXAS)");
  setenv("HCQ_PTXAS", fake, 1);
  CHECK_OK(cc_ptx_ptxas(path, sizeof path));
  CHECK_EQ_STR(path, fake);
  unsetenv("HCQ_PTXAS");
}

/* The GCC 12 cap (-mprefer-vector-width=256, x86 only) follows the compiler in use, also when $HCQ_CC changes back
 * and forth in one process (the flags are memoized per compiler): fake compilers whose --version text is the
 * reference. */
static void test_flags_follow_cc(void) {
  char gcc12[512], clang[512];
  write_script("fake-gcc12", "echo 'cc (Debian 12.2.0-14) 12.2.0'", gcc12, sizeof gcc12);
  write_script("fake-clang19", "echo 'Debian clang version 19.1.7 (3)'", clang, sizeof clang);
  const char *saved = getenv("HCQ_CC");
  char *saved_copy = saved ? strdup(saved) : NULL;
#if defined(__x86_64__) || defined(__i386__)
  const bool x86 = true;
#else
  const bool x86 = false;
#endif
  for (int round = 0; round < 3; round++) {
    setenv("HCQ_CC", round == 1 ? clang : gcc12, 1);
    for (int again = 0; again < 2; again++) {
      bool capped = strstr(cc_toolchain_flags(), " -mprefer-vector-width=256") != NULL;
      CHECK_EQ_INT(capped, x86 && round != 1);
    }
  }
  if (saved_copy) setenv("HCQ_CC", saved_copy, 1);
  else unsetenv("HCQ_CC");
  free(saved_copy);
}

/* The tuning flag shared by the C and llvm-cpu drivers, and the host arch name (uname's machine as reference). */
static void test_tune_and_arch(void) {
  const char *saved = getenv("HCQ_CC_TUNE");
  char *saved_copy = saved ? strdup(saved) : NULL;
  setenv("HCQ_CC_TUNE", "-mcpu=cortex-a57", 1);
  CHECK_EQ_STR(cc_toolchain_tune(), "-mcpu=cortex-a57");
  const char *flags = cc_toolchain_flags();
  CHECK(strlen(flags) > 17 && strcmp(flags + strlen(flags) - 17, " -mcpu=cortex-a57") == 0);
  unsetenv("HCQ_CC_TUNE");
#if defined(__aarch64__) || defined(__arm__)
  CHECK_EQ_STR(cc_toolchain_tune(), "-mcpu=native");
#else
  CHECK_EQ_STR(cc_toolchain_tune(), "-march=native");
#endif
  if (saved_copy) setenv("HCQ_CC_TUNE", saved_copy, 1);
  free(saved_copy);
  struct utsname u;
  CHECK(uname(&u) == 0);
  const char *want = !strcmp(u.machine, "x86_64") ? "x86_64" : !strcmp(u.machine, "aarch64") ? "aarch64"
                   : !strncmp(u.machine, "armv7", 5) || !strncmp(u.machine, "armv8l", 6) ? "armhf" : "unknown";
  CHECK_EQ_STR(cc_host_arch(), want);
}

int main(void) {
  if (!mkdtemp(g_dir)) return 1;
  test_find();
  test_run();
  test_driver_failures();
  test_tune_and_arch();
  test_flags_follow_cc();
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup of %s failed\n", g_dir);
  return testing_summary("toolchain");
}
