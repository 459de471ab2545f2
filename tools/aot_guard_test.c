/* Containment through the verbs (issue 9 items 4, 5, 8):
 *  - a kernel image whose spec under-declares a buffer (1 element where the kernel writes 65536, on 2 threads):
 *    `hcq run --image` must end with a kernel fault naming the kernel and the buffer, not exit 0 or crash;
 *  - specs asking for more memory than the limit: 1 TiB on this machine (3.75 GiB on 32-bit hosts), and 1 GiB inside a faked 512 MiB cgroup
 *    (HCQ_MEMLIMIT_ROOT), refused before anything is mapped, naming the buffer, its size and the limit's source;
 *  - `hcq run --timeout-ms 300` on a kernel that never ends exits 1 promptly saying the device is lost, although
 *    the worker thread still spins (the process exits through exit(), so LSan's leak check runs too).
 * Each run is a forked child with stderr in a file. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cpu/cpu_image.h"
#include "cpu/cpu_reloc.h"
#include "hcq/signal.h"
#include "base/testing.h"
#include "tools/verbs.h"

#if defined(__x86_64__)
#define HOST_ARCH "x86_64"
#elif defined(__arm__)
#define HOST_ARCH "armhf"
#else
#define HOST_ARCH "aarch64"
#endif

static char dir[] = "/tmp/hcq_aot_guard_test_XXXXXX";

static void write_file(const char *path, const void *b, size_t n) {
  FILE *f = fopen(path, "wb");
  CHECK(f && fwrite(b, 1, n, f) == n);
  if (f) fclose(f);
}

static char *read_file(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)size + 1);
  *n = b && fread(b, 1, (size_t)size, f) == (size_t)size ? (size_t)size : 0;
  if (b) b[*n] = 0;
  fclose(f);
  return b;
}

/* Run `hcq run ARGS` in a child (stderr to a file, leaving through exit()); its exit status (-signal when killed),
 * the milliseconds it took, and whether its stderr holds every one of want[]. */
static int run_child(const char **args, const char *const *want, size_t nwant, double *out_ms) {
  char err_path[128];
  snprintf(err_path, sizeof err_path, "%s/stderr.txt", dir);
  fflush(stdout), fflush(stderr);
  uint64_t t0 = hcq_now_ns();
  pid_t pid = fork();
  if (pid == 0) {
    FILE *f = fopen(err_path, "w");
    if (!f) _exit(99);
    dup2(fileno(f), 2);
    int argc = 0;
    while (args[argc]) argc++;
    exit(hcq_verb_run(argc, (char **)args));
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1000;
  *out_ms = (double)(hcq_now_ns() - t0) / 1e6;
  size_t n = 0;
  char *text = read_file(err_path, &n);
  for (size_t i = 0; i < nwant; i++) {
    bool has = text && strstr(text, want[i]);
    if (!has) fprintf(stderr, "aot_guard_test: '%s' not in stderr: %s\n", want[i], text ? text : "(none)");
    CHECK(has);
  }
  free(text);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

/* Compile `src` to an image, then rewrite its spec's buffer 0 to `elems` elements. */
static void make_image(const char *name, const char *src, int64_t elems, const char *img_path) {
  char uop_path[128];
  snprintf(uop_path, sizeof uop_path, "%s/%s.uop", dir, name);
  write_file(uop_path, src, strlen(src));
  const char *compile[] = {"compile", "--target", "c", "--arch", HOST_ARCH, "-o", img_path, uop_path, NULL};
  CHECK_EQ_INT(hcq_verb_compile(8, (char **)compile), 0);
  size_t n = 0;
  uint8_t *bytes = (uint8_t *)read_file(img_path, &n);
  cpu_image img;
  CHECK_OK(cpu_image_parse(bytes, n, &img));
  img.prog.params[0].nelems = elems;
  uint8_t *out = NULL;
  size_t out_B = 0;
  CHECK_OK(cpu_image_write(&img.prog, img.elf, img.elf_size_B, &out, &out_B));
  if (out) write_file(img_path, out, out_B);
  free(out);
  free(bytes);
}

int main(void) {
  CHECK(mkdtemp(dir) != NULL);
  char cache[160];
  snprintf(cache, sizeof cache, "%s/cache", dir);
  setenv("XDG_CACHE_HOME", cache, 1);
  if (system("command -v cc >/dev/null 2>&1") != 0) TEST_SKIP("no C compiler (install gcc)");
  double ms = 0;

  /* 1. an image whose spec under-declares the buffer it writes */
  char img[160];
  snprintf(img, sizeof img, "%s/under.img", dir);
  make_image("under", "(kernel under\n  (let a (buf 0 float32 65536))\n  (let r0 (range 0 65536 loop))\n"
                      "  (sink (store (index a r0) 1.0 r0)))\n", 1, img);
  const char *run_under[] = {"run", "--image", img, "--threads", "2", NULL};
  const char *want_under[] = {"kernel under faulted (SIGSEGV)", "past the end of buffer", "argument 0"};
  CHECK_EQ_INT(run_child(run_under, want_under, 3, &ms), 1);

  /* 2. memory limits: 1 TiB here; 1 GiB in a faked 512 MiB cgroup */
  snprintf(img, sizeof img, "%s/huge.img", dir);
  make_image("huge", "(kernel huge\n  (let a (buf 0 float32 64))\n  (let r0 (range 0 64 loop))\n"
                     "  (sink (store (index a r0) 1.0 r0)))\n", sizeof(size_t) >= 8 ? (int64_t)1 << 38 : (int64_t)0x3c000000, img); /* 1 TiB; 3.75 GiB on 32-bit hosts */
  const char *run_huge[] = {"run", "--image", img, NULL};
  const char *want_huge[] = {"huge: buffer slot 0 needs", "available: "};
  CHECK_EQ_INT(run_child(run_huge, want_huge, 2, &ms), 1);
  snprintf(img, sizeof img, "%s/gib.img", dir);
  make_image("gib", "(kernel gib\n  (let a (buf 0 float32 64))\n  (let r0 (range 0 64 loop))\n"
                    "  (sink (store (index a r0) 1.0 r0)))\n", (int64_t)1 << 28, img);
  char fake[64], cmd[1200];
  snprintf(fake, sizeof fake, "%s/root", dir);
  snprintf(cmd, sizeof cmd,
           "mkdir -p %s/proc/self %s/sys/fs/cgroup/job && echo '0::/job' > %s/proc/self/cgroup && "
           "echo 536870912 > %s/sys/fs/cgroup/job/memory.max && echo 0 > %s/sys/fs/cgroup/job/memory.current",
           fake, fake, fake, fake, fake);
  CHECK(system(cmd) == 0);
  setenv("HCQ_MEMLIMIT_ROOT", fake, 1);
  const char *run_gib[] = {"run", "--image", img, NULL};
  const char *want_gib[] = {"gib: buffer slot 0 needs 1073741824 bytes", "cgroup v2 /sys/fs/cgroup/job/memory.max = 512 MiB"};
  CHECK_EQ_INT(run_child(run_gib, want_gib, 2, &ms), 1);
  unsetenv("HCQ_MEMLIMIT_ROOT");

  /* 3. a kernel that never ends, with a timeout */
  char uop[160];
  snprintf(uop, sizeof uop, "%s/forever.uop", dir);
  const char *forever = "(kernel forever\n  (let a (buf 0 int32 16))\n  (let n (var n 1 2000000000 index))\n"
                        "  (let r0 (range 0 n loop))\n  (let r1 (range 1 n loop))\n"
                        "  (sink (store (index a (% (+ r0 r1) 16)) (cast int32 r1) r0 r1)))\n";
  write_file(uop, forever, strlen(forever));
  const char *run_forever[] = {"run", "--timeout-ms", "300", "--threads", "2", uop, NULL};
  const char *want_forever[] = {"device CPU:0 is lost: kernel forever still running after 300 ms",
                                "the process must exit to reclaim them"};
  CHECK_EQ_INT(run_child(run_forever, want_forever, 2, &ms), 1);
  printf("timed-out run exited after %.0f ms (timeout 300 ms, compile included)\n", ms);
  CHECK(ms < 10000);

  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return testing_summary("aot_guard_test");
}
