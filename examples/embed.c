/* Embedding hcq: a C program built against the installed library (`pkg-config --cflags --libs hcq`).
 *
 *   embed [K.img]
 *
 * Opens the cpu device, compiles a kernel from text, launches it again and again with fresh buffers and variable
 * values (each launch replays one recorded queue with the new addresses and values patched in), waits, reads the
 * results back and checks them against a plain C loop; shows how errors come back (a missing variable, a kernel
 * that faults, after which the device keeps working); with K.img (from `hcq compile --arch ARCH -o K.img
 * examples/saxpy.uop`) it also runs an ahead-of-time kernel image. Exit 0 when every check passed. */
#include <hcq.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096
#define TIMEOUT_MS 10000

static const char *axpy = /* y[i] = 3 * x[i] + y[i] for i < n, in int32 (wraps) */
    "(kernel axpy (let y (buf 0 int32 4096)) (let x (buf 1 int32 4096)) (let n (var n 1 4096 index))\n"
    " (let r (range 0 n loop)) (let yi (index y r))\n"
    " (sink (store yi (+ (* (load (index x r)) (const 3 int32)) (load yi)) r)))\n";
static const char *modulo = /* o[i] = 7 % a[i]: faults when a[i] == 0 */
    "(kernel modulo (let o (buf 0 int32 8)) (let a (buf 1 int32 8)) (let r (range 0 8))\n"
    " (sink (store (index o r) (% (const 7 int32) (load (index a r))) r)))\n";

static int failures;
#define EXPECT(cond, ...)                                                     \
  do {                                                                        \
    if (!(cond)) {                                                            \
      fprintf(stderr, "embed: FAILED: " __VA_ARGS__);                         \
      fputc('\n', stderr);                                                    \
      failures++;                                                             \
    }                                                                         \
  } while (0)

/* Report and free a status; true if it was OK. */
static int ok(hcq_status st, const char *what) {
  if (!st) return 1;
  fprintf(stderr, "embed: %s: %s\n", what, hcq_status_message(st));
  hcq_status_free(st);
  failures++;
  return 0;
}

static void replay(hcq_rt_device *dev) {
  hcq_rt_program *prog;
  if (!ok(hcq_rt_program_compile(dev, axpy, NULL, &prog), "compile axpy")) return;
  hcq_rt_kernel *k;
  int loaded = ok(hcq_rt_kernel_load(dev, hcq_rt_program_desc(prog), &k), "load axpy");
  hcq_rt_program_free(prog);
  if (!loaded) return;
  hcq_rt_buffer *b[3];
  static int32_t want[3][N];
  for (int i = 0; i < 3; i++) {
    if (!ok(hcq_rt_buffer_alloc(dev, N * sizeof(int32_t), HCQ_RT_MEM_HOST_VISIBLE, &b[i]), "alloc")) return;
    int32_t *h = hcq_rt_buffer_host(b[i]);
    for (int e = 0; e < N; e++) h[e] = want[i][e] = e * (i + 1) - 1000 * i;
  }
  for (int r = 0; r < 6; r++) { /* queued back to back: the device runs them in order */
    int y = r % 3, x = (r + 1) % 3, n = 1 + (r * 1231) % N;
    hcq_rt_buffer *args[2] = {b[y], b[x]};
    hcq_var vars[1] = {{"n", n}};
    if (!ok(hcq_rt_launch(k, args, 2, vars, 1), "launch")) return;
    for (int e = 0; e < n; e++) want[y][e] = (int32_t)((uint32_t)want[x][e] * 3u + (uint32_t)want[y][e]);
  }
  if (!ok(hcq_rt_sync(dev, TIMEOUT_MS), "sync")) return;
  for (int i = 0; i < 3; i++)
    EXPECT(memcmp(hcq_rt_buffer_host(b[i]), want[i], sizeof want[i]) == 0, "buffer %d differs from the C loop", i);
  /* errors are values: a missing variable is refused before anything runs */
  hcq_status st = hcq_rt_launch(k, b, 2, NULL, 0);
  EXPECT(st && hcq_status_code(st) == HCQ_CODE_NOT_FOUND, "a missing variable must be HCQ_CODE_NOT_FOUND");
  if (st) printf("refused as expected: %s\n", hcq_status_message(st));
  hcq_status_free(st);
  printf("axpy: 6 launches with fresh buffers and n, %llu words rewritten in all: %s\n",
         (unsigned long long)hcq_rt_kernel_words_written(k), failures ? "FAILED" : "ok");
  hcq_rt_kernel_free(k);
  for (int i = 0; i < 3; i++) hcq_rt_buffer_free(b[i]);
}

static void fault(hcq_rt_device *dev) {
  hcq_rt_program *prog;
  if (!ok(hcq_rt_program_compile(dev, modulo, "", &prog), "compile modulo")) return;
  hcq_rt_kernel *k;
  hcq_rt_buffer *b[2];
  int good = ok(hcq_rt_kernel_load(dev, hcq_rt_program_desc(prog), &k), "load modulo");
  hcq_rt_program_free(prog);
  if (!good || !ok(hcq_rt_buffer_alloc(dev, 32, HCQ_RT_MEM_HOST_VISIBLE, &b[0]), "alloc") ||
      !ok(hcq_rt_buffer_alloc(dev, 32, HCQ_RT_MEM_HOST_VISIBLE, &b[1]), "alloc"))
    return;
  int32_t *a = hcq_rt_buffer_host(b[1]), *o = hcq_rt_buffer_host(b[0]);
  for (int i = 0; i < 8; i++) a[i] = i; /* a[0] == 0: 7 % 0 */
  hcq_status st = hcq_rt_launch(k, b, 2, NULL, 0);
  if (!st) st = hcq_rt_sync(dev, TIMEOUT_MS);
  EXPECT(hcq_status_code(st) == HCQ_CODE_KERNEL_FAULT, "7 %% 0 must be HCQ_CODE_KERNEL_FAULT");
  if (st) printf("reported as expected: %s\n", hcq_status_message(st));
  hcq_status_free(st);
  for (int i = 0; i < 8; i++) a[i] = i + 1; /* the device lives on */
  if (ok(hcq_rt_launch(k, b, 2, NULL, 0), "launch") && ok(hcq_rt_sync(dev, TIMEOUT_MS), "sync"))
    for (int i = 0; i < 8; i++) EXPECT(o[i] == 7 % (i + 1), "modulo element %d", i);
  hcq_rt_kernel_free(k);
  hcq_rt_buffer_free(b[0]);
  hcq_rt_buffer_free(b[1]);
}

/* examples/saxpy.uop as an image: y[i] = 2.5 * x[i] + y[i] for i < n */
static void image(hcq_rt_device *dev, const char *path) {
  FILE *f = fopen(path, "rb");
  static unsigned char bytes[1 << 20];
  size_t n = f ? fread(bytes, 1, sizeof bytes, f) : 0;
  if (f) fclose(f);
  EXPECT(n > 0, "cannot read %s", path);
  hcq_rt_program *prog;
  if (!n || !ok(hcq_rt_program_from_image(bytes, n, &prog), path)) return;
  const hcq_program *desc = hcq_rt_program_desc(prog);
  size_t elems = (size_t)desc->params[0].nelems;
  hcq_rt_kernel *k;
  hcq_rt_buffer *b[2];
  int good = ok(hcq_rt_kernel_load(dev, desc, &k), "load image");
  hcq_rt_program_free(prog);
  if (!good || !ok(hcq_rt_buffer_alloc(dev, elems * 4, HCQ_RT_MEM_HOST_VISIBLE, &b[0]), "alloc") ||
      !ok(hcq_rt_buffer_alloc(dev, elems * 4, HCQ_RT_MEM_HOST_VISIBLE, &b[1]), "alloc"))
    return;
  float *y = hcq_rt_buffer_host(b[0]), *x = hcq_rt_buffer_host(b[1]);
  for (size_t i = 0; i < elems; i++) y[i] = (float)i * 0.25f - 7.0f, x[i] = 1.0f / (float)(i + 1);
  int len = 1000;
  if (ok(hcq_rt_launch(k, b, 2, (hcq_var[]){{"n", len}}, 1), "launch image") && ok(hcq_rt_sync(dev, TIMEOUT_MS), "sync")) {
    int bad = 0;
    for (size_t i = 0; i < elems; i++) {
      double xi = 1.0 / (double)(float)(i + 1), yi = (double)((float)i * 0.25f - 7.0f);
      double want = (int)i < len ? 2.5 * (double)(float)xi + yi : yi;
      bad += fabs((double)y[i] - want) > 1e-6 * fabs(want) + 1e-6;
    }
    EXPECT(bad == 0, "image saxpy: %d elements differ", bad);
    printf("image %s: %s\n", hcq_rt_kernel_program(k)->name, bad ? "FAILED" : "ok");
  }
  hcq_rt_kernel_free(k);
  hcq_rt_buffer_free(b[0]);
  hcq_rt_buffer_free(b[1]);
}

int main(int argc, char **argv) {
  hcq_rt_device *dev;
  hcq_status st = hcq_rt_open("gpu-that-is-not-there", &dev);
  EXPECT(hcq_status_code(st) == HCQ_CODE_NOT_FOUND, "an unknown device must be HCQ_CODE_NOT_FOUND");
  hcq_status_free(st);
  if (!ok(hcq_rt_open("cpu", &dev), "open cpu")) return 1;
  hcq_device_info info;
  if (ok(hcq_rt_info(dev, &info), "info")) {
    printf("device %s: backend %s, arch %s, compiles for %s%s\n", info.name, info.backend, info.arch, info.target,
           info.is_mock ? " (mock)" : "");
    EXPECT(!strcmp(info.backend, "cpu") && !info.is_mock, "the cpu device describes itself as cpu, not a mock");
  }
  replay(dev);
  fault(dev);
  if (argc > 1) image(dev, argv[1]);
  hcq_rt_close(dev);
  printf("embed: %s\n", failures ? "FAILED" : "all checks passed");
  return failures ? 1 : 0;
}
