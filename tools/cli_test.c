/* The verbs' command line and input files (issue 9 item 10), run like `hcq VERB ...` in a forked child with its
 * output captured, an alarm (a hang fails) and, outside ASan, a 4 GiB address-space limit (reading /dev/zero
 * into memory fails the check instead of the machine):
 * - every numeric flag of every verb refuses text that is not an integer in its range, naming the flag and the
 *   accepted range (exit 2), and a flag given last without its value;
 * - --in refuses a directory by name, an endless input (/dev/zero), a short or long file; a pipe of exactly the
 *   buffer's size works; `hcq compile DIR`, `hcq run --image DIR`, `hcq simplify --file DIR` say it is a directory,
 *   and an endless kernel or expression file (/dev/zero) is refused;
 * - an unusable compile cache (a regular file in its path; a directory writable by others) does not fail
 *   `hcq compile -o` or `hcq run --check`, and warns exactly once;
 * - a kernel whose name is mangled for its symbol (`int`) is named as the user wrote it in run's messages. */
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/testing.h"
#include "compiler/interp.h"
#include "compiler/toolchain.h"
#include "tools/cli_args.h"
#include "tools/verbs.h"

static char dir[64];
static char out_text[65536];

/* Run verb with args (NULL-terminated); returns its exit status (128+N for signal N); output in out_text. */
static int verb(int (*fn)(int, char **), const char **args) {
  char path[128];
  snprintf(path, sizeof path, "%s/out.txt", dir);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 1);
    dup2(fd, 2);
    alarm(30);
#if !defined(__SANITIZE_ADDRESS__)
    struct rlimit rl = {(rlim_t)4 << 30, (rlim_t)4 << 30};
    setrlimit(RLIMIT_AS, &rl);
#endif
    int argc = 0;
    while (args[argc]) argc++;
    int rc = fn(argc, (char **)args);
    fflush(stdout);
    fflush(stderr);
    exit(rc); /* (not _exit: atexit removes the private temp directory the verb made) */
  }
  int status = 0;
  waitpid(pid, &status, 0);
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(out_text, 1, sizeof out_text - 1, f) : 0;
  out_text[n] = 0;
  if (f) fclose(f);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static bool says(const char *needle) {
  if (strstr(out_text, needle)) return true;
  fprintf(stderr, "cli_test: expected '%s' in:\n%s\n", needle, out_text);
  return false;
}

static int count(const char *needle) {
  int n = 0;
  for (const char *p = out_text; (p = strstr(p, needle)); p++) n++;
  return n;
}

static void write_zeros(const char *path, size_t n) {
  FILE *f = fopen(path, "wb");
  for (size_t i = 0; f && i < n; i++) fputc(0, f);
  if (f) fclose(f);
}

#define ADD "examples/add.uop" /* three float32 buffers of 4096 elements: 16384 bytes each */

/* `hcq run --check` on a kernel the compiler got wrong (a wrapper adds 3 to the stored value from element 21 on):
 * integer outputs are reported as integers (mismatch count, first slot and element, got and expected; no float
 * error sizes, which read 0 for integers), float ones keep their abs/rel errors. The expected line is computed
 * here from run's fill (seed + slot) and the kernel o = a + b, wrapped to the type. */
static void test_check_integers(void) {
  enum { N = 64, FROM = 21 };
  char cc[160], kpath[160], script[512], want[240];
  snprintf(cc, sizeof cc, "%s/plus3-cc", dir);
  snprintf(script, sizeof script, "#!/bin/sh\nsed 's/^\\( *\\*(data0_[0-9]*+ridx0) = \\)/\\1(ridx0 >= %d ? 3 : 0) + /' | "
           "exec %s \"$@\"\n", FROM, cc_toolchain_cc());
  FILE *f = fopen(cc, "w");
  if (f) fputs(script, f), fclose(f);
  chmod(cc, 0755);
  const char *saved = getenv("HCQ_CC");
  char *saved_copy = saved ? strdup(saved) : NULL;
  setenv("HCQ_CC", cc, 1);
  static const uop_scalar types[] = {UOP_INT32, UOP_UINT8, UOP_INT8, UOP_INT64, UOP_UINT32, UOP_FLOAT32};
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    uop_dtype dt = uop_dt(types[t]);
    const char *name = uop_dt_name(dt);
    snprintf(kpath, sizeof kpath, "%s/add_%s.uop", dir, name);
    f = fopen(kpath, "w");
    if (f) {
      fprintf(f, "(kernel add (let o (buf 0 %s %d)) (let a (buf 1 %s %d)) (let b (buf 2 %s %d)) (let r (range 0 %d))\n"
              " (sink (store (index o r) (+ (load (index a r)) (load (index b r))) r)))\n", name, N, name, N, name, N, N);
      fclose(f);
    }
    const char *args[] = {"run", "--check", "--noopt", "--seed", "5", kpath, NULL};
    CHECK_EQ_INT(verb(hcq_verb_run, args), 1);
    if (uop_dt_is_float(dt)) {
      snprintf(want, sizeof want, "check: %d elements, %d mismatches, max abs error ", 3 * N, N - FROM);
      CHECK(says(want) && !strstr(out_text, "max abs error 0,") && !strstr(out_text, "integers"));
      CHECK(says("; first at buffer slot 0 element 21: got "));
      continue;
    }
    uint8_t raw[2][N * 8];
    cc_fill_buffer(raw[0], dt, N, 5 + 1);
    cc_fill_buffer(raw[1], dt, N, 5 + 2);
    int64_t a, b, sum;
    int size_B = uop_dt_itemsize_B(dt);
    memcpy(&a, raw[0] + FROM * size_B, 8), memcpy(&b, raw[1] + FROM * size_B, 8); /* little-endian hosts */
    uint64_t u = (uint64_t)a + (uint64_t)b, mask = size_B == 8 ? ~0ull : (1ull << (8 * size_B)) - 1, g = (u + 3) & mask;
    u &= mask;
    char got_s[24], want_s[24];
    if (uop_dt_is_unsigned(dt)) {
      snprintf(got_s, sizeof got_s, "%llu", (unsigned long long)g);
      snprintf(want_s, sizeof want_s, "%llu", (unsigned long long)u);
    } else { /* sign-extend from the type's width */
      int sh = 64 - 8 * size_B;
      sum = (int64_t)(u << sh) >> sh;
      snprintf(want_s, sizeof want_s, "%lld", (long long)sum);
      snprintf(got_s, sizeof got_s, "%lld", (long long)((int64_t)(g << sh) >> sh));
    }
    snprintf(want, sizeof want, "check: %d elements, %d mismatches (integers, compared exactly); first at buffer slot 0 "
             "element %d: got %s, expected %s: FAILED", 3 * N, N - FROM, FROM, got_s, want_s);
    CHECK(says(want) && !strstr(out_text, "max abs error"));
    snprintf(want, sizeof want, "(first mismatch: buffer slot 0 element %d, got %s, expected %s)", FROM, got_s, want_s);
    CHECK(says(want));
  }
  if (saved_copy) setenv("HCQ_CC", saved_copy, 1);
  else unsetenv("HCQ_CC");
  free(saved_copy);
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/hcq-cli-test-XXXXXX");
  if (!mkdtemp(dir)) return 1;
  char xdg[128];
  snprintf(xdg, sizeof xdg, "%s/xdg", dir);
  setenv("XDG_CACHE_HOME", xdg, 1);
  unsetenv("HCQ_CACHE");

  /* numeric flags: not an integer, trailing junk, empty, overflow, below and above the range */
  struct {
    int (*fn)(int, char **);
    const char *verb, *flag, *low, *high, *ok;
    const char *pre[3];
  } flags[] = {
      {hcq_verb_run, "run", "--threads", "-1", "1025", "1", {NULL}},
      {hcq_verb_run, "run", "--repeat", "0", "1000001", "1", {NULL}},
      {hcq_verb_run, "run", "--timeout-ms", "0", "4294967296", "1000", {NULL}},
      {hcq_verb_run, "run", "--seed", "-1", "9223372036854775808", "3", {NULL}},
      {hcq_verb_run, "run", "--threads", "-1", "2147483647", NULL, {"--image", "/nonexistent.img", NULL}},
      {hcq_verb_run, "run", "--repeat", "0", "1000001", NULL, {"--image", "/nonexistent.img", NULL}},
      {hcq_verb_run, "run", "--timeout-ms", "0", "4294967296", NULL, {"--image", "/nonexistent.img", NULL}},
      {hcq_verb_run, "run", "--seed", "-5", "99999999999999999999", NULL, {"--image", "/nonexistent.img", NULL}},
      {hcq_verb_compile, "compile", "--threads", "-1", "2147483647", "4", {NULL}},
      {hcq_verb_bench, "bench", "--threads", "-1", "2147483647", NULL, {"--only", "nothing", NULL}},
      {hcq_verb_bench, "bench", "--repeat", "0", "101", NULL, {"--only", "nothing", NULL}},
      {hcq_verb_run, "run", "--beam", "-1", "101", "0", {NULL}},
      {hcq_verb_run, "run", "--beam-seconds", "0", "86401", "1", {NULL}},
      {hcq_verb_compile, "compile", "--beam", "-1", "101", "0", {NULL}},
      {hcq_verb_compile, "compile", "--beam-seconds", "0", "86401", "1", {NULL}},
      {hcq_verb_bench, "bench", "--beam", "-1", "101", NULL, {"--only", "nothing", NULL}},
      {hcq_verb_bench, "bench", "--beam-seconds", "0", "86401", NULL, {"--only", "nothing", NULL}},
  };
  for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
    const char *bad[] = {"abc", "12x", "", " 3", "0x10", "99999999999999999999999", flags[i].low, flags[i].high};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
      const char *args[12] = {flags[i].verb};
      int n = 1;
      for (int p = 0; flags[i].pre[p]; p++) args[n++] = flags[i].pre[p];
      args[n++] = flags[i].flag;
      args[n++] = bad[b];
      args[n++] = ADD;
      int rc = verb(flags[i].fn, args);
      if (rc != 2 || !says(flags[i].flag) || !says("accepted:"))
        fprintf(stderr, "  (hcq %s %s '%s' gave exit %d)\n", flags[i].verb, flags[i].flag, bad[b], rc);
      CHECK_EQ_INT(rc, 2);
    }
    if (flags[i].ok) { /* an accepted value still works */
      const char *args[] = {flags[i].verb, flags[i].flag, flags[i].ok, ADD, NULL};
      CHECK_EQ_INT(verb(flags[i].fn, args), 0);
    }
    const char *last[6] = {flags[i].verb}; /* the value is missing */
    int n = 1;
    for (int p = 0; flags[i].pre[p]; p++) last[n++] = flags[i].pre[p];
    last[n] = flags[i].flag;
    CHECK_EQ_INT(verb(flags[i].fn, last), 2);
    CHECK(says("needs a value"));
  }

  /* $BEAM like the flag: a bad value is refused by every verb (exit 2, naming it); --beam excludes --opts/--noopt;
   * a real search (1 s bound) picks opts, and the second run of the same kernel is a cache hit */
  {
    static const char *bad_env[] = {"abc", "-1", "101", "2x"};
    for (size_t i = 0; i < sizeof bad_env / sizeof bad_env[0]; i++) {
      setenv("BEAM", bad_env[i], 1);
      const char *r[] = {"run", ADD, NULL}, *c[] = {"compile", ADD, NULL}, *b[] = {"bench", "--only", "nothing", NULL};
      CHECK_EQ_INT(verb(hcq_verb_run, r), 2);
      CHECK(says("BEAM="));
      CHECK_EQ_INT(verb(hcq_verb_compile, c), 2);
      CHECK(says("BEAM="));
      CHECK_EQ_INT(verb(hcq_verb_bench, b), 2);
      CHECK(says("BEAM="));
    }
    unsetenv("BEAM");
    const char *both[] = {"run", "--beam", "2", "--noopt", ADD, NULL};
    CHECK_EQ_INT(verb(hcq_verb_run, both), 2);
    CHECK(says("excludes --opts and --noopt"));
    const char *both_c[] = {"compile", "--beam", "2", "--opts", "UPCAST:0:4", ADD, NULL};
    CHECK_EQ_INT(verb(hcq_verb_compile, both_c), 2);
    CHECK(says("excludes --opts and --noopt"));
    const char *search[] = {"run", "--beam", "1", "--beam-seconds", "1", "--check", ADD, NULL};
    CHECK_EQ_INT(verb(hcq_verb_run, search), 0);
    CHECK(says("hcq run: beam 1: opts [") && says("check:") && says(": ok"));
    CHECK_EQ_INT(verb(hcq_verb_run, search), 0);
    CHECK(says("(cache hit)"));
    char bad_uop[128];
    snprintf(bad_uop, sizeof bad_uop, "%s/broken.uop", dir);
    FILE *f = fopen(bad_uop, "w");
    if (f) fputs("(kernel broken (let x (buf 0 float32 4))\n", f), fclose(f);
    const char *broken[] = {"run", "--beam", "1", bad_uop, NULL};
    CHECK_EQ_INT(verb(hcq_verb_run, broken), 1);
    CHECK(says("broken.uop:")); /* a parse error names the file, not the search */
  }

  /* --in: directory, endless device, short and long files, FIFO of the right size */
  char right[128], shortf[128], longf[128], fifo[128], arg[300];
  snprintf(right, sizeof right, "%s/right.bin", dir);
  snprintf(shortf, sizeof shortf, "%s/short.bin", dir);
  snprintf(longf, sizeof longf, "%s/long.bin", dir);
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  write_zeros(right, 16384);
  write_zeros(shortf, 100);
  write_zeros(longf, 16385);
  struct {
    const char *path, *expect;
  } ins[] = {{dir, "is a directory"}, {"/dev/zero", "gives more than"}, {shortf, "the file has 100 bytes"},
             {longf, "the file has 16385 bytes"}};
  for (size_t i = 0; i < sizeof ins / sizeof ins[0]; i++) {
    snprintf(arg, sizeof arg, "1=%s", ins[i].path);
    const char *args[] = {"run", "--in", arg, ADD, NULL};
    CHECK_EQ_INT(verb(hcq_verb_run, args), 1);
    CHECK(says(ins[i].expect) && says("--in 1"));
    CHECK(!strstr(out_text, "9223372036854775807"));
  }
  snprintf(arg, sizeof arg, "1=%s", right);
  const char *in_ok[] = {"run", "--in", arg, ADD, NULL};
  CHECK_EQ_INT(verb(hcq_verb_run, in_ok), 0);
  CHECK(mkfifo(fifo, 0600) == 0);
  for (int size = 16383; size <= 16385; size++) {
    pid_t w = fork();
    if (w == 0) { /* the writer end, like <(head -c SIZE /dev/zero) */
      int fd = open(fifo, O_WRONLY);
      static char zero[16385];
      ssize_t r = write(fd, zero, (size_t)size);
      (void)r;
      _exit(0);
    }
    snprintf(arg, sizeof arg, "1=%s", fifo);
    const char *args[] = {"run", "--in", arg, ADD, NULL};
    int rc = verb(hcq_verb_run, args);
    CHECK_EQ_INT(rc, size == 16384 ? 0 : 1);
    if (size < 16384) CHECK(says("ends after 16383 bytes"));
    if (size > 16384) CHECK(says("gives more than"));
    kill(w, SIGKILL);
    waitpid(w, NULL, 0);
  }

  /* a directory or an endless device where a kernel or an image is expected */
  const char *cdir[] = {"compile", dir, NULL};
  CHECK_EQ_INT(verb(hcq_verb_compile, cdir), 1);
  CHECK(says("is a directory"));
  const char *czero[] = {"compile", "/dev/zero", NULL};
  CHECK_EQ_INT(verb(hcq_verb_compile, czero), 1);
  CHECK(says("more than"));
  const char *idir[] = {"run", "--image", dir, NULL};
  CHECK_EQ_INT(verb(hcq_verb_run, idir), 1);
  CHECK(says("is a directory") && !strstr(out_text, "9223372036854775807"));
  const char *sdir[] = {"simplify", "--file", dir, NULL};
  CHECK_EQ_INT(verb(hcq_verb_simplify, sdir), 1);
  CHECK(says("is a directory"));
  const char *szero[] = {"simplify", "--file", "/dev/zero", NULL};
  CHECK_EQ_INT(verb(hcq_verb_simplify, szero), 1);
  CHECK(says("longer than"));
  /* the image reader's bound (1 GiB for images: too slow to read here) on an endless device and a FIFO */
  uint8_t *data = NULL;
  size_t n = 0;
  CHECK_ERR(cli_read_file("/dev/zero", 1 << 20, &data, &n), HCQ_CODE_INVALID, "more than the 1048576 bytes");
  CHECK(data == NULL);
  CHECK_OK(cli_read_file(right, 16384, &data, &n));
  CHECK(data && n == 16384);
  free(data);
  CHECK_ERR(cli_read_file(right, 16383, &data, &n), HCQ_CODE_INVALID, "16384 bytes is more than the 16383");

  /* an unusable cache: a regular file in its path (works as root too), then a directory writable by others */
  char file_in_path[160], obj[128];
  snprintf(file_in_path, sizeof file_in_path, "%s/file/xdg", dir);
  snprintf(obj, sizeof obj, "%s/file", dir);
  write_zeros(obj, 1);
  setenv("XDG_CACHE_HOME", file_in_path, 1);
  snprintf(obj, sizeof obj, "%s/add.o", dir);
  const char *comp[] = {"compile", "-o", obj, ADD, NULL};
  CHECK_EQ_INT(verb(hcq_verb_compile, comp), 0);
  CHECK_EQ_INT(count("warning: compile cache"), 1);
  struct stat st;
  CHECK(stat(obj, &st) == 0 && st.st_size > 64);
  const char *check[] = {"run", "--check", ADD, NULL};
  CHECK_EQ_INT(verb(hcq_verb_run, check), 0);
  CHECK_EQ_INT(count("warning: compile cache"), 1);
  setenv("XDG_CACHE_HOME", xdg, 1);
  char cache[160];
  snprintf(cache, sizeof cache, "%s/hcq", xdg);
  CHECK(chmod(cache, 0777) == 0);
  CHECK_EQ_INT(verb(hcq_verb_run, check), 0);
  CHECK(says("check:") && says("ok"));
  CHECK_EQ_INT(count("warning: compile cache"), 1);
  CHECK(says("writable by other users"));

  /* a kernel named like a C keyword keeps its name in every message (its symbol is mangled: k_int) */
  char knamed[128];
  snprintf(knamed, sizeof knamed, "%s/int.uop", dir);
  FILE *kf = fopen(knamed, "w");
  if (kf) {
    fputs("(kernel int (let n (var n 1 64 index)) (let o (buf 0 float32 64)) (let r (range 0 n))\n"
          " (sink (store (index o r) (cast float32 r) r)))\n", kf);
    fclose(kf);
  }
  const char *knote[] = {"run", "--var", "m=3", knamed, NULL};
  CHECK_EQ_INT(verb(hcq_verb_run, knote), 0);
  CHECK(says("kernel int has no variable m") && says("int: ") && !strstr(out_text, "k_int"));
  const char *kcheck[] = {"run", "--check", "--var", "n=5", knamed, NULL};
  CHECK_EQ_INT(verb(hcq_verb_run, kcheck), 0);
  CHECK(says("int: ") && !strstr(out_text, "k_int"));
  /* ... fault messages from the device too: 7 % 0 (a divisor known only at run time) */
  snprintf(knamed, sizeof knamed, "%s/int_fault.uop", dir);
  kf = fopen(knamed, "w");
  if (kf) {
    fputs("(kernel int (let o (buf 0 int32 8)) (let a (buf 1 int32 8)) (let r (range 0 8))\n"
          " (sink (store (index o r) (% (const 7 int32) (load (index a r))) r)))\n", kf);
    fclose(kf);
  }
  char zeros[128];
  snprintf(zeros, sizeof zeros, "1=%s/zeros.bin", dir);
  kf = fopen(zeros + 2, "w");
  if (kf) {
    static const char z[32];
    fwrite(z, 1, sizeof z, kf);
    fclose(kf);
  }
  const char *kfault[] = {"run", "--noopt", "--in", zeros, knamed, NULL};
  CHECK_EQ_INT(verb(hcq_verb_run, kfault), 1);
  CHECK(says("kernel int faulted (SIG") && !strstr(out_text, "k_int")); /* SIGFPE on x86, SIGTRAP/SIGILL on Arm */

  test_check_integers();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
  return testing_summary("cli");
}
