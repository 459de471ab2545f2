/* aot_run: `hcq run --image k.img` (see aot.h). Everything the kernel needs comes from the image: no compiler,
 * no .uop source. The image is checked (format, checksum, spec, this machine's arch) before anything is loaded. */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/interp.h"
#include "cpu/cpu_device.h"
#include "cpu/cpu_memlimit.h"
#include "hcq/hcq.h"
#include "tools/aot.h"
#include "tools/cli_args.h"
#include "uop/text.h"

#define AOT_MAX_IMAGE_B ((size_t)1 << 30)

static void usage(FILE *f) {
  fprintf(f, "usage: hcq run --image K.img [--var NAME=VALUE]... [--in SLOT=FILE]... [--out SLOT=FILE]...\n"
             "               [--threads N] [--seed S] [--repeat R] [--timeout-ms T]\n"
             "  Runs a kernel image from `hcq compile --arch A -o K.img` on the CPU device (no compiler needed):\n"
             "  every variable of the image must be given; buffers are filled deterministically, or from raw\n"
             "  little-endian files of exactly the buffer's size with --in.\n");
}

static hcq_status load_image(const char *path, hcq_rt_program **out) {
  size_t size = 0;
  uint8_t *bytes = NULL;
  hcq_status st = cli_read_file(path, AOT_MAX_IMAGE_B, &bytes, &size);
  if (!st) st = hcq_rt_program_from_image(bytes, size, out);
  free(bytes);
  return hcq_status_annotate(st, "kernel image %s", path);
}

/* Replace the deterministic fill of buffer `slot` with the raw bytes of `path` (exactly the buffer's size). */
static hcq_status read_input(int slot, const char *path, void *host, size_t size_B) {
  char what[64];
  snprintf(what, sizeof what, "--in %d (buffer slot %d)", slot, slot);
  return cli_read_exact(what, path, host, size_B);
}

typedef struct io_files {
  const int *slots;
  const char **paths;
  size_t n;
} io_files;

/* Everything through the runtime layer: the image's program description, loaded on the cpu device, buffers,
 * launches with the variables by name (checked against their declared ranges there). */
static hcq_status run_image(const hcq_program *sp, const hcq_var *vars, size_t nvars, io_files ins, io_files outs,
                            int threads, uint64_t seed, int repeat, uint32_t timeout_ms) {
  size_t nb = hcq_program_nbufs(sp);
  int64_t vals[HCQ_PROGRAM_MAX_PARAMS], g[3], l[3];
  const char *arch = strchr(sp->target, ':') ? strchr(sp->target, ':') + 1 : sp->target;
  HCQ_TRY(hcq_program_var_values(sp, vars, nvars, vals)); /* early, with the command line's names */
  for (size_t i = 0; i < nvars; i++) {
    bool used = false;
    for (size_t v = 0; v < hcq_program_nvars(sp); v++) used |= !strcmp(vars[i].name, hcq_program_var(sp, v)->name);
    if (!used) fprintf(stderr, "hcq run: note: kernel %s has no variable %s\n", sp->name, vars[i].name);
  }
  HCQ_TRY(hcq_program_launch_dims(sp, vals, 1 << 20, g, l));
  uop_dtype dts[HCQ_PROGRAM_MAX_PARAMS];
  size_t sizes_B[HCQ_PROGRAM_MAX_PARAMS];
  for (size_t i = 0; i < nb; i++) {
    const hcq_param *b = &sp->params[i];
    if (!uop_dt_from_name(b->dtype, strlen(b->dtype), &dts[i]))
      return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: buffer slot %zu has unknown dtype %s", sp->name, i, b->dtype);
    int64_t item = uop_dt_itemsize_B(dts[i]);
    if (b->nelems < 0 || item <= 0 || b->nelems > (INT64_C(1) << 40) / item ||
        (uint64_t)(b->nelems * item) > SIZE_MAX) /* 32-bit hosts */
      return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: buffer slot %zu (%lld elements) is unusable", sp->name, i, (long long)b->nelems);
    sizes_B[i] = (size_t)(b->nelems * item);
  }
  for (size_t o = 0; o < outs.n; o++)
    if (outs.slots[o] < 0 || (size_t)outs.slots[o] >= nb)
      return hcq_status_make(HCQ_CODE_INVALID, "--out %d=%s: the kernel has no buffer slot %d", outs.slots[o], outs.paths[o], outs.slots[o]);
  for (size_t o = 0; o < ins.n; o++)
    if (ins.slots[o] < 0 || (size_t)ins.slots[o] >= nb)
      return hcq_status_make(HCQ_CODE_INVALID, "--in %d=%s: the kernel has no buffer slot %d", ins.slots[o], ins.paths[o], ins.slots[o]);

  char names_b[HCQ_PROGRAM_MAX_PARAMS][48];
  const char *names[HCQ_PROGRAM_MAX_PARAMS];
  for (size_t i = 0; i < nb; i++) snprintf(names_b[i], sizeof names_b[i], "buffer slot %zu", i), names[i] = names_b[i];
  HCQ_TRY(cpu_memlimit_check(sp->name, names, sizes_B, nb));

  cpu_device *dev = NULL;
  hcq_rt_device *rd = NULL;
  hcq_rt_kernel *k = NULL;
  hcq_rt_buffer *bufs[HCQ_PROGRAM_MAX_PARAMS];
  double *times = calloc((size_t)repeat, sizeof *times);
  hcq_status st = times ? HCQ_OK : hcq_status_make(HCQ_CODE_NOMEM, "times");
  if (!st) st = cpu_device_create(threads, &dev);
  if (!st) st = hcq_rt_wrap(cpu_device_hcq(dev), 0, &rd);
  if (!st) st = hcq_rt_kernel_load(rd, sp, &k);
  for (size_t i = 0; !st && i < nb; i++) {
    st = hcq_status_annotate(hcq_rt_buffer_alloc(rd, sizes_B[i], HCQ_RT_MEM_HOST_VISIBLE, &bufs[i]), "buffer slot %zu of %s", i, sp->name);
    if (!st) cc_fill_buffer(hcq_rt_buffer_host(bufs[i]), dts[i], sp->params[i].nelems, seed + i);
  }
  for (size_t o = 0; !st && o < ins.n; o++)
    st = read_input(ins.slots[o], ins.paths[o], hcq_rt_buffer_host(bufs[ins.slots[o]]), sizes_B[ins.slots[o]]);
  for (int r = 0; !st && r < repeat; r++) {
    st = hcq_rt_launch(k, bufs, nb, vars, nvars);
    if (!st) st = hcq_status_annotate(hcq_rt_sync(rd, timeout_ms), "running %s", sp->name);
    if (!st) times[r] = hcq_rt_kernel_last_ms(k);
    for (size_t o = 0; !st && r == 0 && o < outs.n; o++) {
      FILE *f = fopen(outs.paths[o], "wb");
      size_t n = sizes_B[outs.slots[o]];
      bool ok = f && fwrite(hcq_rt_buffer_host(bufs[outs.slots[o]]), 1, n, f) == n;
      if (f) ok &= fclose(f) == 0;
      if (!ok) st = hcq_status_make(HCQ_CODE_IO, "--out %d=%s: cannot write", outs.slots[o], outs.paths[o]);
    }
  }
  if (!st) {
    /* median */
    for (int a = 1; a < repeat; a++)
      for (int b = a; b > 0 && times[b] < times[b - 1]; b--) {
        double t = times[b];
        times[b] = times[b - 1];
        times[b - 1] = t;
      }
    double ms = times[repeat / 2], total_B = 0;
    for (size_t i = 0; i < nb; i++) total_B += (double)sizes_B[i];
    printf("%s (image, %s): %.3f ms, %.2f GB/s over %.1f MiB of buffers, %d threads\n", sp->name, arch, ms,
           ms > 0 ? total_B / (ms * 1e6) : 0.0, total_B / (1 << 20), cpu_device_threads(dev));
  }
  hcq_rt_close(rd); /* kernel and buffers */
  cpu_device_destroy(dev);
  free(times);
  return st;
}

int aot_run_main(int argc, char **argv) {
  const char *path = NULL;
  const char *var_names[CPU_IMAGE_MAX_VARS * 2], *out_paths[32], *in_paths[32];
  int64_t var_vals[CPU_IMAGE_MAX_VARS * 2];
  int out_slots[32], in_slots[32];
  size_t nvars = 0, nouts = 0, nins = 0;
  long long threads = 0, repeat = 1, seed = 7, timeout_ms = 30000;
  char *names_mem[CPU_IMAGE_MAX_VARS * 2];
  int rc = 2;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    static const char *const valued[] = {"--image", "--dev", "--threads", "--repeat", "--seed", "--timeout-ms",
                                         "--var", "--in", "--out"};
    for (size_t v = 0; v < sizeof valued / sizeof valued[0]; v++)
      if (!strcmp(a, valued[v]) && cli_missing_value("hcq run", a, has)) goto done;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      rc = 0;
      goto done;
    } else if (!strcmp(a, "--image") && has) path = argv[++i];
    else if (!strcmp(a, "--dev") && has) {
      const char *d = argv[++i];
      if (strcmp(d, "cpu") && strcmp(d, "CPU") && strcmp(d, "CPU:0")) {
        fprintf(stderr, "hcq run: kernel images run on the cpu device only (got '%s')\n", d);
        goto done;
      }
    } else if (!strcmp(a, "--threads") && has) {
      if (!cli_parse_int("hcq run", a, argv[++i], 0, CLI_MAX_THREADS, &threads)) goto done;
    } else if (!strcmp(a, "--repeat") && has) {
      if (!cli_parse_int("hcq run", a, argv[++i], 1, CLI_MAX_REPEAT, &repeat)) goto done;
    } else if (!strcmp(a, "--seed") && has) {
      if (!cli_parse_int("hcq run", a, argv[++i], 0, INT64_MAX, &seed)) goto done;
    } else if (!strcmp(a, "--timeout-ms") && has) {
      if (!cli_parse_int("hcq run", a, argv[++i], 1, UINT32_MAX, &timeout_ms)) goto done;
    }
    else if (!strcmp(a, "--var") && has) {
      const char *s = argv[++i], *eq = strchr(s, '=');
      char *end;
      if (!eq || eq == s || nvars == CPU_IMAGE_MAX_VARS * 2) {
        fprintf(stderr, "hcq run: --var wants NAME=VALUE, got '%s'\n", s);
        goto done;
      }
      errno = 0;
      long long v = strtoll(eq + 1, &end, 0);
      if (errno || end == eq + 1 || *end) {
        fprintf(stderr, "hcq run: --var %s: '%s' is not an integer\n", s, eq + 1);
        goto done;
      }
      names_mem[nvars] = strndup(s, (size_t)(eq - s));
      var_names[nvars] = names_mem[nvars];
      var_vals[nvars++] = v;
      if (!names_mem[nvars - 1]) goto done;
    } else if ((!strcmp(a, "--out") || !strcmp(a, "--in")) && has) {
      bool out = !strcmp(a, "--out");
      const char *s = argv[++i];
      char *end;
      errno = 0;
      long v = strtol(s, &end, 10);
      if (errno || end == s || *end != '=' || !end[1] || v < 0 || v >= CPU_IMAGE_MAX_BUFS || (out ? nouts : nins) == 32) {
        fprintf(stderr, "hcq run: %s wants SLOT=FILE, got '%s'\n", a, s);
        goto done;
      }
      if (out) {
        out_slots[nouts] = (int)v;
        out_paths[nouts++] = end + 1;
      } else {
        in_slots[nins] = (int)v;
        in_paths[nins++] = end + 1;
      }
    } else if (!strcmp(a, "--check") || !strcmp(a, "--opts") || !strcmp(a, "--noopt")) {
      fprintf(stderr, "hcq run: %s is not available with --image (an image has no kernel source to %s)\n", a,
              !strcmp(a, "--check") ? "interpret" : "compile or match");
      goto done;
    } else {
      fprintf(stderr, "hcq run: unexpected argument '%s'\n", a);
      usage(stderr);
      goto done;
    }
  }
  if (!path) {
    usage(stderr);
    goto done;
  }
  hcq_rt_program *prog = NULL;
  hcq_var vars[CPU_IMAGE_MAX_VARS * 2];
  for (size_t i = 0; i < nvars; i++) vars[i] = (hcq_var){var_names[i], var_vals[i]};
  hcq_status st = load_image(path, &prog);
  if (!st)
    st = run_image(hcq_rt_program_desc(prog), vars, nvars, (io_files){in_slots, in_paths, nins},
                   (io_files){out_slots, out_paths, nouts}, (int)threads, (uint64_t)seed, (int)repeat,
                   (uint32_t)timeout_ms);
  rc = st ? 1 : 0;
  if (st) fprintf(stderr, "hcq run: %s\n", hcq_status_message(st));
  hcq_status_free(st);
  hcq_rt_program_free(prog);
done:
  for (size_t i = 0; i < nvars; i++) free(names_mem[i]);
  return rc;
}
