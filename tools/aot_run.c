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
#include "cpu/cpu_reloc.h"
#include "hcq/args.h"
#include "hcq/queue.h"
#include "hcq/signal.h"
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

typedef struct aot_job {
  cpu_device *dev;
  cpu_device_program *dprog;
  hcq_mem mems[CPU_IMAGE_MAX_BUFS], argm;
  size_t nmems;
  hcq_signal *ts0, *ts1;
} aot_job;

static hcq_status load_image(const char *path, uint8_t **bytes, cpu_image *img) {
  size_t size = 0;
  hcq_status st = cli_read_file(path, AOT_MAX_IMAGE_B, bytes, &size);
  if (!st) st = cpu_image_parse(*bytes, size, img);
  if (!st) st = cpu_image_check_host(img, cpu_host_machine());
  return hcq_status_annotate(st, "kernel image %s", path);
}

/* One launch: wait(timeline) · timestamp · exec · timestamp · signal(timeline), all immediate values. */
static hcq_status launch(aot_job *j, const hcq_args *args, const hcq_val *bufv, const hcq_val *varv,
                         const hcq_val g[3], uint32_t timeout_ms, const char *name, double *out_ms) {
  hcq_device *hd = cpu_device_hcq(j->dev);
  uint64_t last = hcq_timeline_last(hd), next = hcq_timeline_next(hd);
  if (next == 0) return hcq_status_make(HCQ_CODE_INTERNAL, "timeline exhausted");
  hcq_queue *q = NULL;
  hcq_val l[3] = {hcq_imm(1), hcq_imm(1), hcq_imm(1)};
  hcq_status st = hcq_queue_create(hd, HCQ_QUEUE_COMPUTE, &q);
  if (!st) st = hcq_args_bind(args, q, NULL, bufv, varv);
  if (!st) st = hcq_queue_wait(q, hcq_imm(hd->timeline->va), hcq_imm(last));
  if (!st) st = hcq_queue_timestamp(q, hcq_imm(j->ts0->va));
  if (!st) st = hcq_queue_exec(q, hcq_imm(cpu_device_program_handle(j->dprog)), args, g, l);
  if (!st) st = hcq_queue_timestamp(q, hcq_imm(j->ts1->va));
  if (!st) st = hcq_queue_signal(q, hcq_imm(hd->timeline->va), hcq_imm(next));
  if (!st) st = hcq_queue_submit(q, hd, NULL, 0);
  if (!st) st = hcq_status_annotate(cpu_device_signal_wait(j->dev, hd->timeline, next, timeout_ms), "running %s", name);
  if (!st) st = cpu_device_take_error(j->dev);
  if (!st) *out_ms = (double)(hcq_signal_timestamp_ns(j->ts1) - hcq_signal_timestamp_ns(j->ts0)) / 1e6;
  hcq_queue_destroy(q);
  return st;
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

static hcq_status run_image(const cpu_image *img, const char **var_names, const int64_t *var_vals, size_t nvars,
                            io_files ins, io_files outs, int threads, uint64_t seed, int repeat, uint32_t timeout_ms) {
  const int *out_slots = outs.slots;
  const char **out_paths = outs.paths;
  size_t nouts = outs.n;
  const cpu_image_spec *sp = &img->spec;
  int64_t vals[CPU_IMAGE_MAX_VARS];
  for (size_t v = 0; v < sp->nvars; v++) {
    bool found = false;
    for (size_t i = 0; i < nvars; i++)
      if (!strcmp(var_names[i], sp->vars[v])) vals[v] = var_vals[i], found = true;
    if (!found) return hcq_status_make(HCQ_CODE_NOT_FOUND, "kernel %s needs variable %s (give --var %s=VALUE)", sp->name, sp->vars[v], sp->vars[v]);
    /* the kernel was compiled for the declared range, and takes the value as an int argument */
    if (sp->var_ranged[v] && (vals[v] < sp->var_min[v] || vals[v] > sp->var_max[v]))
      return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: variable %s = %lld is outside its declared range %lld..%lld",
                             sp->name, sp->vars[v], (long long)vals[v], (long long)sp->var_min[v], (long long)sp->var_max[v]);
    if (vals[v] < INT32_MIN || vals[v] > INT32_MAX)
      return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: variable %s = %lld does not fit its int32 argument", sp->name,
                             sp->vars[v], (long long)vals[v]);
  }
  for (size_t i = 0; i < nvars; i++) {
    bool used = false;
    for (size_t v = 0; v < sp->nvars; v++) used |= !strcmp(var_names[i], sp->vars[v]);
    if (!used) fprintf(stderr, "hcq run: note: kernel %s has no variable %s\n", sp->name, var_names[i]);
  }
  int64_t g[3];
  for (int d = 0; d < 3; d++) {
    HCQ_TRY(hcq_status_annotate(cpu_image_eval(sp, sp->global[d], vals, &g[d]), "launch size %d", d));
    if (g[d] < 1 || g[d] > (1 << 20))
      return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: launch size %d '%s' = %lld is out of range", sp->name, d, sp->global[d], (long long)g[d]);
  }
  uop_dtype dts[CPU_IMAGE_MAX_BUFS];
  size_t sizes_B[CPU_IMAGE_MAX_BUFS];
  for (size_t i = 0; i < sp->nbufs; i++) {
    uop_scalar s;
    if (!uop_text_dt_lookup(sp->bufs[i].dtype, strlen(sp->bufs[i].dtype), &s))
      return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: buffer slot %zu has unknown dtype %s", sp->name, i, sp->bufs[i].dtype);
    dts[i] = uop_dt(s);
    int64_t item = uop_dt_itemsize_B(dts[i]);
    if (sp->bufs[i].slot != (int)i || sp->bufs[i].size < 0 || item <= 0 || sp->bufs[i].size > (INT64_C(1) << 40) / item ||
        (uint64_t)(sp->bufs[i].size * item) > SIZE_MAX) /* 32-bit hosts */
      return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: buffer slot %zu (%lld elements) is unusable", sp->name, i, (long long)sp->bufs[i].size);
    sizes_B[i] = (size_t)(sp->bufs[i].size * item);
  }
  for (size_t o = 0; o < nouts; o++)
    if (out_slots[o] < 0 || (size_t)out_slots[o] >= sp->nbufs)
      return hcq_status_make(HCQ_CODE_INVALID, "--out %d=%s: the kernel has no buffer slot %d", out_slots[o], out_paths[o], out_slots[o]);
  for (size_t o = 0; o < ins.n; o++)
    if (ins.slots[o] < 0 || (size_t)ins.slots[o] >= sp->nbufs)
      return hcq_status_make(HCQ_CODE_INVALID, "--in %d=%s: the kernel has no buffer slot %d", ins.slots[o], ins.paths[o], ins.slots[o]);

  char names_b[CPU_IMAGE_MAX_BUFS][48];
  const char *names[CPU_IMAGE_MAX_BUFS];
  for (size_t i = 0; i < sp->nbufs; i++) snprintf(names_b[i], sizeof names_b[i], "buffer slot %zu", i), names[i] = names_b[i];
  HCQ_TRY(cpu_memlimit_check(sp->name, names, sizes_B, sp->nbufs));

  aot_job j = {0};
  hcq_args args;
  hcq_val bufv[CPU_IMAGE_MAX_BUFS + 1], varv[CPU_IMAGE_MAX_VARS + 1];
  double *times = calloc((size_t)repeat, sizeof *times);
  hcq_status st = times ? HCQ_OK : hcq_status_make(HCQ_CODE_NOMEM, "times");
  if (!st) st = cpu_device_create(threads, &j.dev);
  for (size_t i = 0; !st && i < sp->nbufs; i++) {
    st = hcq_status_annotate(cpu_device_alloc(j.dev, sizes_B[i], &j.mems[i]), "buffer slot %zu of %s", i, sp->name);
    if (!st) {
      j.nmems++;
      cc_fill_buffer(j.mems[i].host, dts[i], sp->bufs[i].size, seed + i);
      bufv[i] = hcq_imm(j.mems[i].va);
    }
  }
  for (size_t o = 0; !st && o < ins.n; o++)
    st = read_input(ins.slots[o], ins.paths[o], j.mems[ins.slots[o]].host, sizes_B[ins.slots[o]]);
  for (size_t v = 0; v < sp->nvars; v++) varv[v] = hcq_imm((uint64_t)vals[v]);
  if (!st) st = cpu_device_load(j.dev, img->elf, img->elf_size_B, sp->name, &j.dprog);
  if (!st) st = cpu_device_alloc(j.dev, hcq_args_size_B(0, (uint32_t)sp->nbufs, (uint32_t)sp->nvars), &j.argm);
  if (!st) st = hcq_args_init(&args, j.argm.host, j.argm.va, j.argm.size_B, 0, (uint32_t)sp->nbufs, (uint32_t)sp->nvars);
  if (!st) st = hcq_signal_create(cpu_device_hcq(j.dev), "t0", 0, &j.ts0);
  if (!st) st = hcq_signal_create(cpu_device_hcq(j.dev), "t1", 0, &j.ts1);
  hcq_val gv[3] = {hcq_imm((uint64_t)g[0]), hcq_imm((uint64_t)g[1]), hcq_imm((uint64_t)g[2])};
  for (int r = 0; !st && r < repeat; r++) {
    st = launch(&j, &args, bufv, varv, gv, timeout_ms, sp->name, &times[r]);
    for (size_t o = 0; !st && r == 0 && o < nouts; o++) {
      FILE *f = fopen(out_paths[o], "wb");
      size_t n = sizes_B[out_slots[o]];
      bool ok = f && fwrite(j.mems[out_slots[o]].host, 1, n, f) == n;
      if (f) ok &= fclose(f) == 0;
      if (!ok) st = hcq_status_make(HCQ_CODE_IO, "--out %d=%s: cannot write", out_slots[o], out_paths[o]);
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
    for (size_t i = 0; i < sp->nbufs; i++) total_B += (double)sizes_B[i];
    printf("%s (image, %s): %.3f ms, %.2f GB/s over %.1f MiB of buffers, %d threads\n", sp->name, sp->arch, ms,
           ms > 0 ? total_B / (ms * 1e6) : 0.0, total_B / (1 << 20), cpu_device_threads(j.dev));
  }
  hcq_signal_destroy(j.ts0);
  hcq_signal_destroy(j.ts1);
  if (j.dev) {
    for (size_t i = 0; i < j.nmems; i++) cpu_device_free(j.dev, &j.mems[i]);
    if (j.argm.host) cpu_device_free(j.dev, &j.argm);
  }
  cpu_device_program_destroy(j.dprog);
  cpu_device_destroy(j.dev);
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
  uint8_t *bytes = NULL;
  cpu_image img;
  hcq_status st = load_image(path, &bytes, &img);
  if (!st)
    st = run_image(&img, var_names, var_vals, nvars, (io_files){in_slots, in_paths, nins},
                   (io_files){out_slots, out_paths, nouts}, (int)threads, (uint64_t)seed, (int)repeat,
                   (uint32_t)timeout_ms);
  rc = st ? 1 : 0;
  if (st) fprintf(stderr, "hcq run: %s\n", hcq_status_message(st));
  hcq_status_free(st);
  free(bytes);
done:
  for (size_t i = 0; i < nvars; i++) free(names_mem[i]);
  return rc;
}
