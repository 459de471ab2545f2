/* Toolchain driver: run the host C compiler as a subprocess (source on stdin, object to a temp file in the
 * process's private temp directory, stdout+stderr to an anonymous memfd), and cc_compile_binary, which goes
 * through the compile cache. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compiler/toolchain.h"

extern char **environ;

const char *cc_toolchain_cc(void) {
  const char *cc = getenv("HCQ_CC");
  return cc && cc[0] ? cc : "cc";
}

const char *cc_toolchain_tune(void) {
  const char *tune = getenv("HCQ_CC_TUNE");
#if defined(__aarch64__) || defined(__arm__)
  const char *native = "-mcpu=native";
#else
  const char *native = "-march=native";
#endif
  return tune && tune[0] ? tune : native;
}

/* GCC 12 (12.2, Debian 12) miscompiles some groups of int accumulators when its loop vectorizer uses 512-bit
 * vectors: an int32 column sum with UPCAST:0:8 (eight scalar accumulators, `+ 2` after the reduce) gives wrong sums
 * under -march=native / x86-64-v4 on AVX-512, right ones with -mprefer-vector-width=256, without AVX-512 or with
 * clang-19 (found by opt_fuzz, seed 0x3039; compiler/gcc_vec_width_test.c). The kernels' own vector types are not
 * auto-vectorized, so capping gcc's choice at 256 bits costs them nothing. */
static int cc_is_gcc12(const char *cc) { /* -1: its version could not be read */
  const char *text = NULL;
  hcq_status st = cc_toolchain_version(cc, &text);
  if (st) {
    hcq_status_free(st);
    return -1;
  }
  return text && !strstr(text, "clang") && strstr(text, ") 12.") != NULL;
}

/* The flags into out; returns cc_is_gcc12's answer (-1: not known) when x86, else 0; -2 when they do not fit. */
static int flags_into(const char *cc, bool x86, const char *tune, char *out, size_t cap) {
  int gcc12 = x86 ? cc_is_gcc12(cc) : 0;
  int n = snprintf(out, cap, "-c -x c -O2 -fPIC -ffreestanding -fno-builtin -nostdlib -fno-math-errno "
                   "-fno-stack-protector -fno-asynchronous-unwind-tables -fno-ident%s%s%s",
                   gcc12 == 1 ? " -mprefer-vector-width=256" : "", tune[0] ? " " : "", tune);
  return n < 0 || (size_t)n >= cap ? -2 : gcc12;
}

bool cc_toolchain_flags_for(const char *cc, bool x86, const char *tune, char *out, size_t cap) {
  return flags_into(cc, x86, tune ? tune : "", out, cap) != -2;
}

/* Built once per thread for the compiler and tuning flag in use: rebuilt (and the version asked again, which takes
 * the version cache's lock) only when $HCQ_CC or $HCQ_CC_TUNE changed since the last call in this thread. */
const char *cc_toolchain_flags(void) {
  static __thread char buf[512], for_cc[256], for_tune[128];
  static __thread bool valid;
#if defined(__x86_64__) || defined(__i386__)
  const bool x86 = true;
#else
  const bool x86 = false;
#endif
  const char *cc = cc_toolchain_cc(), *tune = cc_toolchain_tune();
  if (valid && !strcmp(for_cc, cc) && !strcmp(for_tune, tune)) return buf;
  int gcc12 = flags_into(cc, x86, tune, buf, sizeof buf);
  /* an unreadable version or names too long to keep are not memoized (the next call builds the string again) */
  valid = gcc12 >= 0 && strlen(cc) < sizeof for_cc && strlen(tune) < sizeof for_tune;
  if (valid) memcpy(for_cc, cc, strlen(cc) + 1), memcpy(for_tune, tune, strlen(tune) + 1);
  return buf;
}

/* Debian package that provides a compiler command. */
static const char *package_for(const char *cc) {
  if (strncmp(cc, "clang-", 6) == 0) return cc;
  if (strcmp(cc, "clang") == 0) return "clang";
  if (strncmp(cc, "gcc-", 4) == 0) return cc;
  return "gcc";
}

hcq_status cc_tool_read_file(const char *path, uint8_t **out, size_t *out_size_B) {
  *out = NULL;
  *out_size_B = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return hcq_status_make(HCQ_CODE_IO, "open(%s): %s", path, strerror(errno));
  struct stat stt;
  if (fstat(fd, &stt) != 0) {
    close(fd);
    return hcq_status_make(HCQ_CODE_IO, "fstat(%s): %s", path, strerror(errno));
  }
  size_t n = (size_t)stt.st_size;
  uint8_t *buf = malloc(n + 1);
  if (!buf) {
    close(fd);
    return hcq_status_make(HCQ_CODE_NOMEM, "read %s: out of memory", path);
  }
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  buf[got] = 0;
  *out = buf;
  *out_size_B = got;
  return HCQ_OK;
}

/* Checked before spawning: posix_spawnp's ENOENT does not reach the parent everywhere (qemu-user runs the child
 * as a plain fork), so callers that want a "not found: install X" message ask here first. */
bool cc_tool_find(const char *cmd, char *out_path, size_t cap) {
  if (strchr(cmd, '/')) {
    if (out_path && cap) snprintf(out_path, cap, "%s", cmd);
    return access(cmd, X_OK) == 0;
  }
  const char *path = getenv("PATH");
  if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
  for (const char *p = path; *p;) {
    const char *end = strchr(p, ':');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    char full[4096];
    if (snprintf(full, sizeof full, "%.*s/%s", (int)(n ? n : 1), n ? p : ".", cmd) < (int)sizeof full &&
        access(full, X_OK) == 0) {
      if (out_path && cap) snprintf(out_path, cap, "%s", full);
      return true;
    }
    p += n + (end ? 1 : 0);
    if (!end) break;
  }
  return false;
}

/* ------------------------------------------------------------------------------------------------ temp files */

/* All named temp files of a process live in one private directory $TMPDIR/hcq-PID-XXXXXX (0700, made on first
 * use, removed at exit). SIGKILL (or a signal's default action) cannot run any cleanup, so the next process that
 * makes its directory first removes every hcq-PID-* directory of ours whose PID is no longer running: a killed
 * compile leaves files only until the next compile. (Compiler logs never have a name: they go to a memfd.) */
static pthread_mutex_t tmp_lock = PTHREAD_MUTEX_INITIALIZER;
static char tmp_dir[PATH_MAX];
static pid_t tmp_owner;

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)ftw;
  if (flag == FTW_DP) rmdir(path);
  else unlink(path);
  return 0;
}

static void rm_tree(const char *path) { nftw(path, rm_entry, 8, FTW_DEPTH | FTW_PHYS); }

static void tmp_cleanup(void) {
  if (tmp_dir[0] && tmp_owner == getpid()) rm_tree(tmp_dir); /* not in a forked child that calls exit() */
}

static void reap_stale(const char *base) {
  DIR *d = opendir(base);
  if (!d) return;
  uid_t me = geteuid();
  for (struct dirent *e; (e = readdir(d));) {
    int pid = 0;
    char c;
    if (sscanf(e->d_name, "hcq-%d-%c", &pid, &c) != 2 || pid <= 0 || pid == (int)getpid()) continue;
    if (kill(pid, 0) == 0 || errno != ESRCH) continue; /* running (or not ours to ask): keep */
    char path[PATH_MAX];
    struct stat st;
    if (snprintf(path, sizeof path, "%s/%s", base, e->d_name) < (int)sizeof path && lstat(path, &st) == 0 &&
        S_ISDIR(st.st_mode) && st.st_uid == me)
      rm_tree(path);
  }
  closedir(d);
}

hcq_status cc_tool_private_dir(char *out, size_t cap) {
  pthread_mutex_lock(&tmp_lock);
  hcq_status st = HCQ_OK;
  if (!tmp_dir[0] || tmp_owner != getpid()) {
    const char *base = getenv("TMPDIR");
    base = base && base[0] ? base : "/tmp";
    reap_stale(base);
    snprintf(tmp_dir, sizeof tmp_dir, "%s/hcq-%d-XXXXXX", base, (int)getpid());
    if (!mkdtemp(tmp_dir)) {
      st = hcq_status_make(HCQ_CODE_IO, "mkdtemp(%s): %s", tmp_dir, strerror(errno));
      tmp_dir[0] = 0;
    } else {
      static bool registered;
      if (!registered) atexit(tmp_cleanup);
      registered = true;
      tmp_owner = getpid();
    }
  }
  if (!st) snprintf(out, cap, "%s", tmp_dir);
  pthread_mutex_unlock(&tmp_lock);
  return st;
}

hcq_status cc_tool_temp(char *path, size_t cap, const char *what) {
  char dir[PATH_MAX];
  HCQ_TRY(cc_tool_private_dir(dir, sizeof dir));
  if (snprintf(path, cap, "%s/%s-XXXXXX", dir, what) >= (int)cap)
    return hcq_status_make(HCQ_CODE_INVALID, "temp path %s/%s-XXXXXX is too long", dir, what);
  int fd = mkstemp(path);
  if (fd < 0) return hcq_status_make(HCQ_CODE_IO, "mkstemp(%s): %s", path, strerror(errno));
  close(fd);
  return HCQ_OK;
}

/* The captured output of a tool, read back from its memfd (at most 4 MiB: a compiler's messages). */
static char *read_log(int fd) {
  size_t cap = 4096, len = 0, max_B = (size_t)4 << 20;
  char *buf = malloc(cap);
  if (!buf || lseek(fd, 0, SEEK_SET) != 0) {
    free(buf);
    return NULL;
  }
  for (;;) {
    if (len + 1 == cap) {
      if (cap > max_B) break;
      char *p = realloc(buf, cap * 2);
      if (!p) break;
      buf = p;
      cap *= 2;
    }
    ssize_t r = read(fd, buf + len, cap - 1 - len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    len += (size_t)r;
  }
  buf[len] = 0;
  return buf;
}

/* Feed `input` to the child's stdin pipe. A child that exits early (bad flag) closes its end: stop at the first
 * write error; its exit status tells the rest. SIGPIPE is blocked in this thread while writing and a SIGPIPE this
 * write raised is consumed, so an early exit cannot kill the calling process (whatever its SIGPIPE disposition). */
static void feed(int fd, const char *input) {
  sigset_t pipe_set, old;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  sigset_t pending;
  bool was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
  size_t len = strlen(input), off = 0;
  bool broken = false;
  while (off < len) {
    ssize_t w = write(fd, input + off, len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      broken = w < 0 && errno == EPIPE;
      break;
    }
    off += (size_t)w;
  }
  if (broken && !was_pending) {
    struct timespec zero = {0, 0};
    while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

hcq_status cc_tool_run(char *const argv[], const char *input, int *out_exit, char **out_log) {
  *out_exit = -1;
  *out_log = NULL;
  int logfd = memfd_create("hcq-tool-log", MFD_CLOEXEC);
  if (logfd < 0) return hcq_status_make(HCQ_CODE_IO, "memfd_create: %s", strerror(errno));
  int pipefd[2] = {-1, -1};
  if (input && pipe2(pipefd, O_CLOEXEC) != 0) {
    close(logfd);
    return hcq_status_make(HCQ_CODE_IO, "pipe: %s", strerror(errno));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (input) posix_spawn_file_actions_adddup2(&fa, pipefd[0], 0);
  else posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, logfd, 1);
  posix_spawn_file_actions_adddup2(&fa, logfd, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (input) {
    close(pipefd[0]);
    if (rc == 0) feed(pipefd[1], input);
    close(pipefd[1]);
  }
  hcq_status st = HCQ_OK;
  int status = 0;
  if (rc != 0) {
    hcq_code code = rc == ENOENT || rc == EACCES || rc == ENOEXEC ? HCQ_CODE_UNSUPPORTED : HCQ_CODE_IO;
    st = hcq_status_make(code, "posix_spawn(%s): %s", argv[0], strerror(rc));
  } else {
    while (waitpid(pid, &status, 0) < 0)
      if (errno != EINTR) {
        st = hcq_status_make(HCQ_CODE_IO, "waitpid(%s): %s", argv[0], strerror(errno));
        break;
      }
  }
  if (!st) {
    *out_exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    *out_log = read_log(logfd);
  }
  close(logfd);
  return st;
}

/* argv[0] must be on PATH; else the error names the Debian package to install. */
static hcq_status run_cc(char *const argv[], const char *input, int *out_exit, char **out_log) {
  if (!cc_tool_find(argv[0], NULL, 0))
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "C compiler '%s' not found: install the Debian package %s "
                           "(or set HCQ_CC)", argv[0], package_for(argv[0]));
  return cc_tool_run(argv, input, out_exit, out_log);
}

/* ------------------------------------------------------------------------------------------------ version */

#define VERSION_SLOTS 8
static pthread_mutex_t version_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  char *cc, *text;
} versions[VERSION_SLOTS];

hcq_status cc_toolchain_version(const char *cc, const char **out_text) {
  *out_text = NULL;
  pthread_mutex_lock(&version_lock);
  for (int i = 0; i < VERSION_SLOTS; i++)
    if (versions[i].cc && strcmp(versions[i].cc, cc) == 0) {
      *out_text = versions[i].text;
      pthread_mutex_unlock(&version_lock);
      return HCQ_OK;
    }
  pthread_mutex_unlock(&version_lock);
  char *argv[] = {(char *)cc, "--version", NULL};
  int exit_code = -1;
  char *text = NULL;
  HCQ_TRY(run_cc(argv, NULL, &exit_code, &text));
  if (!text) return hcq_status_make(HCQ_CODE_IO, "'%s --version': its output could not be read back", cc);
  if (exit_code != 0) {
    hcq_status st = hcq_status_make(HCQ_CODE_UNSUPPORTED, "'%s --version' failed: %s", cc, text);
    free(text);
    return st;
  }
  pthread_mutex_lock(&version_lock);
  int slot = -1;
  for (int i = 0; i < VERSION_SLOTS && slot < 0; i++)
    if (!versions[i].cc || strcmp(versions[i].cc, cc) == 0) slot = i;
  if (slot < 0) slot = 0; /* full: replace the first (the old text stays valid: leaked on purpose, bounded) */
  if (!versions[slot].cc) {
    versions[slot].cc = strdup(cc);
    versions[slot].text = text;
    text = NULL;
  }
  *out_text = versions[slot].text;
  pthread_mutex_unlock(&version_lock);
  free(text);
  if (!*out_text) return hcq_status_make(HCQ_CODE_NOMEM, "compiler version: out of memory");
  return HCQ_OK;
}

/* ------------------------------------------------------------------------------------------------ compile */

hcq_status cc_toolchain_compile_c(const char *source, uint8_t **out_obj, size_t *out_size_B) {
  return cc_toolchain_compile_c_ex(source, NULL, out_obj, out_size_B);
}

hcq_status cc_toolchain_compile_c_ex(const char *source, const char *extra_flags, uint8_t **out_obj,
                                     size_t *out_size_B) {
  *out_obj = NULL;
  *out_size_B = 0;
  const char *cc = cc_toolchain_cc();
  char objpath[256];
  HCQ_TRY(cc_tool_temp(objpath, sizeof objpath, "obj"));
  /* argv: cc, the flags split at spaces, "-", "-o", objpath */
  char *flags = NULL;
  if (asprintf(&flags, "%s%s%s", cc_toolchain_flags(), extra_flags && extra_flags[0] ? " " : "",
               extra_flags ? extra_flags : "") < 0)
    flags = NULL;
  char *argv[40];
  int argc = 0;
  argv[argc++] = (char *)cc;
  if (flags)
    for (char *tok = strtok(flags, " "); tok && argc < 34; tok = strtok(NULL, " ")) argv[argc++] = tok;
  argv[argc++] = "-";
  argv[argc++] = "-o";
  argv[argc++] = objpath;
  argv[argc] = NULL;
  int exit_code = -1;
  char *err = NULL;
  hcq_status st = HCQ_OK;
  if (!flags) st = hcq_status_make(HCQ_CODE_NOMEM, "compile: out of memory");
  if (!st) st = run_cc(argv, source, &exit_code, &err);
  if (!st && exit_code != 0)
    st = hcq_status_make(HCQ_CODE_INVALID, "compile failed (exit %d): %s %s%s%s - -o %s\n%s", exit_code, cc,
                         cc_toolchain_flags(), extra_flags && extra_flags[0] ? " " : "", extra_flags ? extra_flags : "",
                         objpath, err ? err : "");
  if (!st) st = cc_tool_read_file(objpath, out_obj, out_size_B);
  free(err);
  free(flags);
  unlink(objpath);
  return st;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void cc_program_drop_binary(cc_program *prog) {
  free(prog->binary);
  prog->binary = NULL;
  prog->binary_size_B = 0;
  prog->external_ms = 0;
}

hcq_status cc_build_cached(const char *key, size_t key_len, cc_program *prog, cc_build_fn build, const void *ctx) {
  bool found = false;
  hcq_status st = cc_cache_load(key, key_len, &prog->binary, &prog->binary_size_B, &found);
  if (!st && !found) {
    double t0 = now_ms();
    st = build(ctx, prog->source, &prog->binary, &prog->binary_size_B);
    prog->external_ms = now_ms() - t0;
    if (!st) st = cc_cache_store(key, key_len, prog->binary, prog->binary_size_B);
  }
  return st;
}

static hcq_status build_c(const void *ctx, const char *source, uint8_t **out_bin, size_t *out_size_B) {
  return cc_toolchain_compile_c_ex(source, ctx, out_bin, out_size_B); /* ctx: the extra flags */
}

hcq_status cc_compile_binary(const cc_target *t, cc_program *prog) {
  if (!t || !prog || !prog->source) return hcq_status_make(HCQ_CODE_INVALID, "cc_compile_binary: no source");
  if (t->kind == CC_TARGET_AMDGPU || t->kind == CC_TARGET_LLVM_CPU) return cc_llvm_compile_binary(t, prog);
  if (t->kind == CC_TARGET_PTX) return cc_ptx_compile_binary(t, prog);
  if (t->kind != CC_TARGET_C)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "target %s: toolchain not implemented yet", t->name);
  cc_program_drop_binary(prog);
  const char *cc = cc_toolchain_cc(), *version = NULL;
  HCQ_TRY(cc_toolchain_version(cc, &version));
  /* no_fp_contract: a*b+c rounds twice, as the interpreter computes it (tests that compare bit-exactly) */
  const char *extra = t->no_fp_contract ? "-ffp-contract=off" : "";
  /* key = target \0 cc \0 flags \0 version \0 source */
  char *key = NULL;
  size_t key_len = 0;
  FILE *f = open_memstream(&key, &key_len);
  if (!f) return hcq_status_make(HCQ_CODE_NOMEM, "compile: out of memory");
  fprintf(f, "%s%c%s%c%s%s%s%c%s%c%s", t->name, 0, cc, 0, cc_toolchain_flags(), extra[0] ? " " : "", extra, 0, version,
          0, prog->source);
  fclose(f);
  hcq_status st = cc_build_cached(key, key_len, prog, build_c, extra);
  free(key);
  return st;
}
