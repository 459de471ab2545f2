/* Toolchain driver for the LLVM IR targets (reference toolchain.md (a), (b)), through the compile cache.
 *
 *   llvm-cpu:    clang-19 -c -x ir -O2 -fPIC -march=native - -o OUT.o
 *                (a relocatable object for the CPU device's ELF loader, cpu/cpu_elf.h)
 *   amdgpu:gfxN: clang-19 --target=amdgcn-amd-amdhsa -mcpu=gfxN -nogpulib -O3 -c -x ir - -o OUT.o
 *                ld.lld-19 -shared --no-undefined OUT.o -o OUT.hsaco
 *                (-O3 runs the middle end, whose AMDGPU attributor drops the 256 B of hidden kernargs a raw llc
 *                build asks for; -nogpulib: no ROCm device libraries)
 * $HCQ_CLANG and $HCQ_LLD override the tool names. A missing tool is an error naming its Debian package. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compiler/toolchain.h"

extern char **environ;

const char *cc_llvm_clang(void) {
  const char *c = getenv("HCQ_CLANG");
  return c && c[0] ? c : "clang-19";
}

const char *cc_llvm_lld(void) {
  const char *c = getenv("HCQ_LLD");
  return c && c[0] ? c : "ld.lld-19";
}

/* Is `tool` an executable file on $PATH (or a path)? */
static bool on_path(const char *tool) {
  if (strchr(tool, '/')) return access(tool, X_OK) == 0;
  const char *path = getenv("PATH");
  if (!path) return false;
  char dir[4096];
  for (const char *p = path; *p;) {
    const char *colon = strchr(p, ':');
    size_t len = colon ? (size_t)(colon - p) : strlen(p);
    if (len > 0 && len < sizeof dir - 256) {
      snprintf(dir, sizeof dir, "%.*s/%s", (int)len, p, tool);
      if (access(dir, X_OK) == 0) return true;
    }
    if (!colon) break;
    p = colon + 1;
  }
  return false;
}

hcq_status cc_llvm_require(const char *tool, const char *package) {
  if (on_path(tool)) return HCQ_OK;
  return hcq_status_make(HCQ_CODE_UNSUPPORTED, "'%s' not found on PATH: install the Debian package %s", tool, package);
}

static hcq_status temp_path(char *path, size_t cap, const char *what) {
  const char *tmp = getenv("TMPDIR");
  snprintf(path, cap, "%s/hcq-llvm-%s-XXXXXX", tmp && tmp[0] ? tmp : "/tmp", what);
  int fd = mkstemp(path);
  if (fd < 0) return hcq_status_make(HCQ_CODE_IO, "mkstemp(%s): %s", path, strerror(errno));
  close(fd);
  return HCQ_OK;
}

static hcq_status slurp(const char *path, uint8_t **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return hcq_status_make(HCQ_CODE_IO, "open(%s): %s", path, strerror(errno));
  size_t cap = 4096, len = 0;
  uint8_t *buf = malloc(cap + 1);
  while (buf) {
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (len < cap) break;
    uint8_t *nb = realloc(buf, cap * 2 + 1);
    if (!nb) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = nb;
    cap *= 2;
  }
  fclose(f);
  if (!buf) return hcq_status_make(HCQ_CODE_NOMEM, "read %s: out of memory", path);
  buf[len] = 0;
  *out = buf;
  *out_len = len;
  return HCQ_OK;
}

/* Run argv with `input` on stdin and stdout+stderr into a temp file; a failure quotes the command and its output. */
static hcq_status run(char *const argv[], const char *input) {
  char logpath[256];
  HCQ_TRY(temp_path(logpath, sizeof logpath, "log"));
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) {
    unlink(logpath);
    return hcq_status_make(HCQ_CODE_IO, "pipe: %s", strerror(errno));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipefd[0], 0);
  posix_spawn_file_actions_addopen(&fa, 1, logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(pipefd[0]);
  if (rc != 0) {
    close(pipefd[1]);
    unlink(logpath);
    return hcq_status_make(HCQ_CODE_IO, "posix_spawn(%s): %s", argv[0], strerror(rc));
  }
  size_t len = input ? strlen(input) : 0, off = 0;
  while (off < len) {
    ssize_t w = write(pipefd[1], input + off, len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    off += (size_t)w;
  }
  close(pipefd[1]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      unlink(logpath);
      return hcq_status_make(HCQ_CODE_IO, "waitpid(%s): %s", argv[0], strerror(errno));
    }
  hcq_status st = HCQ_OK;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    char cmd[1024];
    size_t n = 0;
    for (int i = 0; argv[i] && n < sizeof cmd - 1; i++)
      n += (size_t)snprintf(cmd + n, sizeof cmd - n, "%s%s", i ? " " : "", argv[i]);
    uint8_t *log = NULL;
    size_t log_len = 0;
    hcq_status_free(slurp(logpath, &log, &log_len));
    st = hcq_status_make(HCQ_CODE_INVALID, "%s failed (exit %d): %s\n%s", argv[0],
                         WIFEXITED(status) ? WEXITSTATUS(status) : -1, cmd, log ? (char *)log : "");
    free(log);
  }
  unlink(logpath);
  return st;
}

/* The flags of a target, as one string (also part of the cache key). */
static const char *llvm_flags(const cc_target *t, char *buf, size_t cap) {
  if (t->kind == CC_TARGET_AMDGPU)
    snprintf(buf, cap, "--target=amdgcn-amd-amdhsa -mcpu=%s -nogpulib -O3 -c -x ir", t->arch);
  else {
    /* Same tuning rule as the C driver: $HCQ_CC_TUNE replaces "native" (a cross run under qemu-user). */
    const char *tune = getenv("HCQ_CC_TUNE");
#if defined(__aarch64__) || defined(__arm__)
    const char *native = "-mcpu=native";
#else
    const char *native = "-march=native";
#endif
    snprintf(buf, cap, "-c -x ir -O2 -fPIC %s", tune && tune[0] ? tune : native);
  }
  return buf;
}

hcq_status cc_llvm_compile(const cc_target *t, const char *source, uint8_t **out_bin, size_t *out_size_B) {
  *out_bin = NULL;
  *out_size_B = 0;
  if (t->kind != CC_TARGET_AMDGPU && t->kind != CC_TARGET_LLVM_CPU)
    return hcq_status_make(HCQ_CODE_INVALID, "cc_llvm_compile: %s is not an LLVM target", t->name);
  const char *clang = cc_llvm_clang(), *lld = cc_llvm_lld();
  bool amd = t->kind == CC_TARGET_AMDGPU;
  HCQ_TRY(cc_llvm_require(clang, "clang-19"));
  if (amd) HCQ_TRY(cc_llvm_require(lld, "lld-19"));
  char objpath[256], sopath[256] = "", flags[256];
  HCQ_TRY(temp_path(objpath, sizeof objpath, "obj"));
  hcq_status st = amd ? temp_path(sopath, sizeof sopath, "hsaco") : HCQ_OK;
  char *fl = strdup(llvm_flags(t, flags, sizeof flags));
  if (!st && !fl) st = hcq_status_make(HCQ_CODE_NOMEM, "llvm compile: out of memory");
  if (!st) {
    char *argv[24];
    int argc = 0;
    argv[argc++] = (char *)clang;
    for (char *tok = strtok(fl, " "); tok && argc < 18; tok = strtok(NULL, " ")) argv[argc++] = tok;
    argv[argc++] = "-";
    argv[argc++] = "-o";
    argv[argc++] = objpath;
    argv[argc] = NULL;
    st = run(argv, source);
  }
  if (!st && amd) {
    char *argv[] = {(char *)lld, "-shared", "--no-undefined", objpath, "-o", sopath, NULL};
    st = run(argv, NULL);
  }
  if (!st) st = slurp(amd ? sopath : objpath, out_bin, out_size_B);
  free(fl);
  unlink(objpath);
  if (sopath[0]) unlink(sopath);
  return st;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

hcq_status cc_llvm_compile_binary(const cc_target *t, cc_program *prog) {
  if (!t || !prog || !prog->source) return hcq_status_make(HCQ_CODE_INVALID, "cc_llvm_compile_binary: no source");
  free(prog->binary);
  prog->binary = NULL;
  prog->binary_size_B = 0;
  prog->external_ms = 0;
  const char *clang = cc_llvm_clang(), *version = NULL;
  HCQ_TRY(cc_llvm_require(clang, "clang-19"));
  HCQ_TRY(cc_toolchain_version(clang, &version));
  char flags[256];
  /* key = target \0 clang \0 lld \0 flags \0 version \0 source */
  char *key = NULL;
  size_t key_len = 0;
  FILE *f = open_memstream(&key, &key_len);
  if (!f) return hcq_status_make(HCQ_CODE_NOMEM, "llvm compile: out of memory");
  fprintf(f, "%s%c%s%c%s%c%s%c%s%c%s", t->name, 0, clang, 0, t->kind == CC_TARGET_AMDGPU ? cc_llvm_lld() : "", 0,
          llvm_flags(t, flags, sizeof flags), 0, version, 0, prog->source);
  fclose(f);
  bool found = false;
  hcq_status st = cc_cache_load(key, key_len, &prog->binary, &prog->binary_size_B, &found);
  if (!st && !found) {
    double t0 = now_ms();
    st = cc_llvm_compile(t, prog->source, &prog->binary, &prog->binary_size_B);
    prog->external_ms = now_ms() - t0;
    if (!st) st = cc_cache_store(key, key_len, prog->binary, prog->binary_size_B);
  }
  free(key);
  return st;
}
