/* hcq run [--dev DEVICE] [--var NAME=VAL]... [--opts O | --noopt | --beam N [--beam-seconds S]] [--check] [--in SLOT=FILE]... [--out SLOT=FILE]...
 *         [--threads N] [--seed S] [--repeat R] [--timeout-ms T] FILE.uop
 * Compiles a kernel for the device's target (c on the CPU), runs it on the device through the runtime layer,
 * optionally checks it against the reference interpreter, and prints the time and throughput. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/aot.h"
#include "tools/beam_cli.h"
#include "tools/cli_args.h"
#include "hcq/rt_krun.h"
#include "tools/verbs.h"

#define MAX_ITEMS 32

static void usage(FILE *f) {
  fprintf(f,
          "usage: hcq run [--dev DEVICE] [--var NAME=VALUE]... [--opts 'UPCAST:0:4,...' | --noopt] [--check]\n"
          "               [--in SLOT=FILE]... [--out SLOT=FILE]... [--threads N] [--seed S] [--repeat R]\n"
          "               [--timeout-ms T] [--beam N [--beam-seconds S]] FILE.uop\n"
          "       hcq run --image K.img [--var NAME=VALUE]... [--in/--out SLOT=FILE]... (see hcq run --image K --help)\n"
          "  Compiles FILE for the device's target (DEVICE: cpu (default), amd:0, nv:1, ...: `hcq devices`; c on\n"
          "  the CPU), fills the buffers deterministically (or from raw little-endian files with --in), runs it on\n"
          "  the device through an hcq queue and prints the kernel time (median of R\n"
          "  runs) and the throughput over all buffer bytes. --check compares every buffer with the reference\n"
          "  interpreter (integers exactly, floats within 1e-4 relative + 1e-5 absolute + 1e-5 of the buffer's\n"
          "  largest; NaN matches any NaN, inf only the same inf, -0 matches +0: docs/FORMATS.md). Variables\n"
          "  default to their maximum.\n"
          "  --threads: CPU worker threads, 1 to 1024 (0 or unset: $HCQ_CPU_THREADS or the number of cores).\n"
          "  --repeat: 1 to 1000000 (default 1). --timeout-ms: 1 to 4294967295 (default 30000) per run.\n"
          "  --seed: 0 to 2^63-1 (default 7).\n"
          "  --beam N (0 to 100; default $BEAM, 0 = off): choose the opts by BEAM search on the device (width N,\n"
          "  candidates checked against the unoptimized kernel, winner cached on disk); --beam-seconds: its time\n"
          "  bound, 1 to 86400 (default $HCQ_BEAM_SECONDS or 20).\n");
}

typedef struct slot_file {
  int slot;
  const char *path;
} slot_file;

static bool parse_slot_file(const char *s, slot_file *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end != '=' || v < 0 || v > 1000 || !end[1]) return false;
  out->slot = (int)v;
  out->path = end + 1;
  return true;
}

static hcq_status read_input(krun *k, const slot_file *in) {
  cc_kbuf *b = krun_buf(k, in->slot);
  if (!b) return hcq_status_make(HCQ_CODE_INVALID, "--in %d=%s: the kernel has no buffer slot %d", in->slot, in->path, in->slot);
  char what[64];
  snprintf(what, sizeof what, "--in %d (buffer slot %d)", in->slot, in->slot);
  return cli_read_exact(what, in->path, b->data, b->size_B);
}

static hcq_status write_output(krun *k, const slot_file *o) {
  cc_kbuf *b = krun_buf(k, o->slot);
  if (!b) return hcq_status_make(HCQ_CODE_INVALID, "--out %d=%s: the kernel has no buffer slot %d", o->slot, o->path, o->slot);
  FILE *f = fopen(o->path, "wb");
  if (!f) return hcq_status_make(HCQ_CODE_IO, "--out %d=%s: cannot create: %s", o->slot, o->path, strerror(errno));
  bool ok = fwrite(b->data, 1, b->size_B, f) == b->size_B;
  ok &= fclose(f) == 0;
  return ok ? HCQ_OK : hcq_status_make(HCQ_CODE_IO, "--out %s: write failed", o->path);
}

/* --check's line: float errors only over float elements (integers are compared exactly, an error size means nothing
 * there), and the first mismatch with its values (integers as integers). */
static void print_check(const krun_cmp *c) {
  char errs[128] = "", first[200] = "";
  if (c->float_checked)
    snprintf(errs, sizeof errs, ", max abs error %.3g, max rel error %.3g%s", c->max_abs, c->max_rel,
             c->float_checked < c->checked ? " over the float elements" : "");
  if (c->float_checked < c->checked)
    snprintf(errs + strlen(errs), sizeof errs - strlen(errs), "%s", c->float_checked ? ", integers exactly" : " (integers, compared exactly)");
  if (c->mismatches)
    snprintf(first, sizeof first, "; first at buffer slot %d element %lld: got %s, expected %s", c->first_bad_slot,
             (long long)c->first_bad, c->first_got, c->first_want);
  printf("check: %zu elements, %zu mismatches%s%s: %s\n", c->checked, c->mismatches, errs, first,
         c->mismatches ? "FAILED" : "ok");
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int hcq_verb_run(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--image")) return aot_run_main(argc, argv); /* a kernel image: tools/aot_run.c */
  const char *file = NULL, *opts_text = NULL, *devname = "cpu";
  bool noopt = false, check = false;
  long long threads = 0, repeat = 1, seed = 7, timeout_ms = 30000, beam_flag = -1, beam_s = 0;
  int beam = 0;
  uop_var_val vars[MAX_ITEMS];
  char *var_names[MAX_ITEMS];
  size_t nvars = 0;
  slot_file ins[MAX_ITEMS], outs[MAX_ITEMS];
  size_t nins = 0, nouts = 0;
  int rc = 2;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool has = i + 1 < argc;
    static const char *const valued[] = {"--dev", "--opts", "--threads", "--repeat", "--seed", "--timeout-ms",
                                         "--var", "--in", "--out", "--beam", "--beam-seconds"};
    for (size_t v = 0; v < sizeof valued / sizeof valued[0]; v++)
      if (!strcmp(a, valued[v]) && cli_missing_value("hcq run", a, has)) goto free_names;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      rc = 0;
      goto free_names;
    } else if (!strcmp(a, "--dev") && has) devname = argv[++i];
    else if (!strcmp(a, "--opts") && has) opts_text = argv[++i];
    else if (!strcmp(a, "--noopt")) noopt = true;
    else if (!strcmp(a, "--check")) check = true;
    else if (!strcmp(a, "--threads") && has) {
      if (!cli_parse_int("hcq run", a, argv[++i], 0, CLI_MAX_THREADS, &threads)) goto free_names;
    } else if (!strcmp(a, "--repeat") && has) {
      if (!cli_parse_int("hcq run", a, argv[++i], 1, CLI_MAX_REPEAT, &repeat)) goto free_names;
    } else if (!strcmp(a, "--seed") && has) {
      if (!cli_parse_int("hcq run", a, argv[++i], 0, INT64_MAX, &seed)) goto free_names;
    } else if (!strcmp(a, "--timeout-ms") && has) {
      if (!cli_parse_int("hcq run", a, argv[++i], 1, UINT32_MAX, &timeout_ms)) goto free_names;
    } else if (!strcmp(a, "--beam") && has) {
      if (!cli_parse_int("hcq run", a, argv[++i], 0, CC_BEAM_MAX_WIDTH, &beam_flag)) goto free_names;
    } else if (!strcmp(a, "--beam-seconds") && has) {
      if (!cli_parse_int("hcq run", a, argv[++i], 1, BEAM_CLI_MAX_SECONDS, &beam_s)) goto free_names;
    }
    else if (!strcmp(a, "--var") && has) {
      const char *s = argv[++i], *eq = strchr(s, '=');
      char *end;
      if (!eq || eq == s || nvars == MAX_ITEMS) {
        fprintf(stderr, "hcq run: --var wants NAME=VALUE, got '%s'\n", s);
        goto free_names;
      }
      errno = 0;
      long long v = strtoll(eq + 1, &end, 0);
      if (errno || end == eq + 1 || *end) {
        fprintf(stderr, "hcq run: --var %s: '%s' is not an integer\n", s, eq + 1);
        goto free_names;
      }
      var_names[nvars] = strndup(s, (size_t)(eq - s));
      vars[nvars] = (uop_var_val){var_names[nvars], v};
      nvars++;
    } else if ((!strcmp(a, "--in") || !strcmp(a, "--out")) && has) {
      bool is_in = a[2] == 'i';
      slot_file sf;
      if (!parse_slot_file(argv[++i], &sf) || (is_in ? nins : nouts) == MAX_ITEMS) {
        fprintf(stderr, "hcq run: %s wants SLOT=FILE (SLOT 0 to 1000, at most %d), got '%s'\n", a, MAX_ITEMS, argv[i]);
        goto free_names;
      }
      if (is_in) ins[nins++] = sf;
      else outs[nouts++] = sf;
    } else if (a[0] != '-' && !file) file = a;
    else {
      fprintf(stderr, "hcq run: unexpected argument '%s'\n", a);
      usage(stderr);
      goto free_names;
    }
  }
  if (!file || (noopt && opts_text)) {
    if (noopt && opts_text) fprintf(stderr, "hcq run: --opts and --noopt exclude each other\n");
    else fprintf(stderr, "hcq run: no kernel file given (hcq run --help)\n");
    goto free_names;
  }
  if (!beam_cli_width("hcq run", beam_flag, &beam)) goto free_names;
  if (beam && (noopt || opts_text)) {
    fprintf(stderr, "hcq run: --beam (or $BEAM) chooses the opts: it excludes --opts and --noopt\n");
    goto free_names;
  }
  rc = 1;
  /* the CPU keeps its own options (--threads); every other device is opened by name from the registry */
  bool is_cpu = !strcmp(devname, "cpu") || !strcmp(devname, "CPU") || !strcmp(devname, "cpu:0") ||
                !strcmp(devname, "CPU:0");
  if (!is_cpu && threads) {
    fprintf(stderr, "hcq run: --threads applies to the CPU device, not to %s\n", devname);
    rc = 2;
    goto free_names;
  }

  krun k = {0};
  cpu_device *dev = NULL;
  hcq_rt_device *rd = NULL;
  hcq_device_info info = {0};
  cc_opt *opts = NULL;
  size_t nopts = 0;
  cc_kbuf *host = NULL;
  size_t nhost = 0;
  double *times = calloc((size_t)repeat, sizeof *times);
  hcq_status st = times ? HCQ_OK : hcq_status_make(HCQ_CODE_NOMEM, "times");
  if (!st && opts_text) st = cc_opts_parse(opts_text, &opts, &nopts);
  if (!st && is_cpu) st = cpu_device_create((int)threads, &dev);
  if (!st && !is_cpu) st = hcq_rt_open(devname, &rd);
  if (!st && !is_cpu) st = hcq_rt_info(rd, &info);
  hcq_rt_device *beam_dev = NULL;
  if (!st && beam) {
    /* the search runs on the device the kernel will run on (the CPU through a runtime wrapper) */
    if (is_cpu) st = hcq_rt_wrap(cpu_device_hcq(dev), 0, &beam_dev);
    cc_beam_options bo = {.width = beam, .max_seconds = (double)beam_s, .threads = is_cpu ? cpu_device_threads(dev) : 1,
                          .vars = vars, .nvars = nvars};
    cc_beam_result br;
    if (!st) st = beam_cli_search("hcq run", is_cpu ? beam_dev : rd, file, NULL, &bo, false, &br);
    hcq_rt_close(beam_dev); /* before krun wraps the CPU device for the run itself */
    if (!st) {
      opts = br.opts; /* the winner, as explicit opts (none: noopt won) */
      nopts = br.nopts;
      if (!opts) opts = calloc(1, sizeof *opts);
      if (!opts) st = hcq_status_make(HCQ_CODE_NOMEM, "opts");
    }
  }
  if (!st) {
    cc_options o = {.opts = opts, .nopts = nopts, .noopt = noopt};
    st = is_cpu ? krun_compile_file(&k, file, &o, cpu_device_threads(dev))
                : krun_compile_file_for(&k, file, &o, info.target, 1);
  }
  if (!st) st = is_cpu ? krun_setup(&k, dev) : krun_setup_rt(&k, rd);
  if (!st) {
    /* variables: given ones, the rest at their maximum */
    uop_var_val all[MAX_ITEMS * 2];
    size_t nall = 0;
    for (size_t i = 0; i < nvars; i++) {
      bool used = false;
      for (size_t v = 0; v < hcq_program_nvars(&k.prog->desc); v++)
        used |= !strcmp(hcq_program_var(&k.prog->desc, v)->name, vars[i].name);
      if (!used) fprintf(stderr, "hcq run: note: kernel %s has no variable %s\n", k.prog->name, vars[i].name);
      all[nall++] = vars[i];
    }
    for (size_t v = 0; v < hcq_program_nvars(&k.prog->desc) && nall < MAX_ITEMS * 2; v++) {
      bool given = false;
      for (size_t i = 0; i < nvars; i++) given |= !strcmp(hcq_program_var(&k.prog->desc, v)->name, vars[i].name);
      if (!given) {
        all[nall++] = (uop_var_val){hcq_program_var(&k.prog->desc, v)->name, k.var_nodes[v]->arg.i2};
        fprintf(stderr, "hcq run: %s=%lld (its maximum; set it with --var)\n", hcq_program_var(&k.prog->desc, v)->name,
                (long long)k.var_nodes[v]->arg.i2);
      }
    }
    st = krun_set_vars(&k, all, nall);
  }
  if (!st) {
    krun_fill(&k, (uint64_t)seed);
    for (size_t i = 0; !st && i < nins; i++) st = read_input(&k, &ins[i]);
  }
  if (!st && check) {
    /* host copies of the inputs for the interpreter */
    st = cc_kernel_buffers(k.sink, &host, &nhost);
    for (size_t i = 0; !st && i < nhost; i++) {
      host[i].data = malloc(host[i].size_B ? host[i].size_B : 1);
      if (!host[i].data) st = hcq_status_make(HCQ_CODE_NOMEM, "host copy of buffer slot %d (%zu bytes)", host[i].slot, host[i].size_B);
      else memcpy(host[i].data, krun_buf(&k, host[i].slot)->data, host[i].size_B);
    }
  }
  for (int r = 0; !st && r < repeat; r++) {
    /* repeated runs start from the same inputs only when the kernel does not read what it writes; the first run's
     * outputs are what --out and --check see */
    st = krun_exec(&k, (uint32_t)timeout_ms, &times[r]);
    if (r == 0 && !st) {
      for (size_t i = 0; !st && i < nouts; i++) st = write_output(&k, &outs[i]);
      if (!st && check) {
        krun_cmp cmp;
        st = krun_check_interp(&k, host, nhost, 1e-4, 1e-5, &cmp);
        if (!st) print_check(&cmp);
        if (!st && cmp.mismatches)
          st = hcq_status_make(HCQ_CODE_INVALID, "kernel %s differs from the reference interpreter (first mismatch: "
                               "buffer slot %d element %lld, got %s, expected %s)", k.prog->name, cmp.first_bad_slot,
                               (long long)cmp.first_bad, cmp.first_got, cmp.first_want);
      }
    }
  }
  if (!st) {
    qsort(times, (size_t)repeat, sizeof *times, cmp_double);
    double ms = times[repeat / 2];
    size_t bytes = 0;
    for (size_t i = 0; i < k.nbufs; i++) bytes += k.bufs[i].size_B;
    char *ot = krun_opts_text(&k);
    char where[96];
    if (is_cpu) snprintf(where, sizeof where, "%d threads", cpu_device_threads(dev));
    else snprintf(where, sizeof where, "%s (%s)%s", info.name, info.target, info.is_mock ? " mock" : "");
    printf("%s: %s, opts [%s], compile %.1f ms, run %.3f ms%s, %.2f GB/s over %zu buffer bytes\n", k.prog->name,
           where, ot ? ot : "", k.compile_ms, ms, repeat > 1 ? " (median)" : "",
           ms > 0 ? (double)bytes / (ms * 1e6) : 0.0, bytes);
    free(ot);
    rc = 0;
  }
  if (st) fprintf(stderr, "hcq run: %s\n", hcq_status_message(st));
  hcq_status_free(st);
  if (host) cc_kbufs_free(host, nhost);
  krun_free(&k);
  cpu_device_destroy(dev);
  hcq_rt_close(rd);
  free(opts);
  free(times);
free_names:
  for (size_t i = 0; i < nvars; i++) free(var_names[i]);
  return rc;
}
