/* hcq compile --target T [--opts 'OP:AXIS:AMT,...' | --noopt | --beam N [--dev D] [--beam-seconds S]]
 *             [--dump-passes] FILE.uop [-o OUT]
 * Prints the rendered source, or (-o) compiles it through the toolchain and the cache and writes the object. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compiler.h"
#include "compiler/kernel_text.h"
#include "tools/aot.h"
#include "tools/beam_cli.h"
#include "tools/cli_args.h"
#include "tools/verbs.h"

static void usage(FILE *f) {
  fprintf(f, "usage: hcq compile --target T [--opts 'UPCAST:0:4,...' | --noopt] [--dump-passes] [--threads N] "
             "FILE.uop [-o OUT]\n"
             "  targets: c, c:x86_64, c:aarch64, c:armhf, llvm-cpu, ptx:sm_80, ptx:sm_90, amdgpu:gfx1100,\n"
             "           amdgpu:gfx90a, amdgpu:gfx942, amdgpu:gfx1201\n"
             "  prints the source; with -o writes the compiled object (ptx: a cubin from ptxas; cached in "
             "$XDG_CACHE_HOME/hcq)\n"
             "  --arch x86_64|aarch64 (target c) with -o: write a kernel image for `hcq run --image` instead\n"
             "  --beam N (0 to 100; default $BEAM, 0 = off): opts chosen by BEAM search, timed on --dev DEVICE (default\n"
             "           cpu; the target defaults to the device's); --beam-seconds 1 to 86400 (default\n"
             "           $HCQ_BEAM_SECONDS or 20); the winner is cached on disk\n");
}

static void dump_to_stderr(void *user, const char *pass, const char *text) {
  (void)user;
  fprintf(stderr, "==== %s\n%s", pass, text);
  size_t n = strlen(text);
  if (n && text[n - 1] != '\n') fputc('\n', stderr);
}

/* --beam: search on the device (default cpu) whose target is the one compiled for; *opts is the winner. */
static hcq_status beam_compile(const char *file, const char *devname, const char *target, int width,
                               long long threads, long long seconds, cc_opt **opts, size_t *nopts) {
  hcq_rt_device *rd = NULL;
  hcq_device_info info = {0};
  bool cpu = !devname || !strcmp(devname, "cpu") || !strcmp(devname, "cpu:0");
  if (!cpu && threads) return hcq_status_make(HCQ_CODE_INVALID, "--threads applies to the CPU device, not to %s", devname);
  if (cpu && threads) {
    char n[32];
    snprintf(n, sizeof n, "%lld", threads);
    setenv("HCQ_CPU_THREADS", n, 1); /* the registry's CPU device takes its thread count from here */
  }
  HCQ_TRY(hcq_rt_open(devname ? devname : "cpu", &rd));
  hcq_status st = hcq_rt_info(rd, &info);
  if (!st && strcmp(info.target, target) != 0)
    st = hcq_status_make(HCQ_CODE_INVALID, "--beam times on %s, whose target is %s, not %s (pick --dev or --target)",
                         info.name, info.target, target);
  cc_beam_options bo = {.width = width, .max_seconds = (double)seconds, .threads = (int)threads};
  cc_beam_result br;
  if (!st) st = beam_cli_search("hcq compile", rd, file, NULL, &bo, false, &br);
  hcq_rt_close(rd);
  if (st) return st;
  *opts = br.opts ? br.opts : calloc(1, sizeof **opts); /* none: the noopt form won (explicit empty list) */
  *nopts = br.nopts;
  return *opts ? HCQ_OK : hcq_status_make(HCQ_CODE_NOMEM, "opts");
}

int hcq_verb_compile(int argc, char **argv) {
  const char *target = NULL, *opts_text = NULL, *file = NULL, *out_path = NULL, *arch = NULL, *devname = NULL;
  char arch_target[32];
  bool noopt = false, dump = false;
  long long threads = 0, beam_flag = -1, beam_s = 0;
  int beam = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    static const char *const valued[] = {"--target", "--opts", "--threads", "-o", "--arch", "--dev", "--beam",
                                         "--beam-seconds"};
    for (size_t v = 0; v < sizeof valued / sizeof valued[0]; v++)
      if (!strcmp(a, valued[v]) && cli_missing_value("hcq compile", a, i + 1 < argc)) return 2;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(a, "--target") == 0 && i + 1 < argc) target = argv[++i];
    else if (strcmp(a, "--opts") == 0 && i + 1 < argc) opts_text = argv[++i];
    else if (strcmp(a, "--threads") == 0 && i + 1 < argc) {
      if (!cli_parse_int("hcq compile", a, argv[++i], 0, CLI_MAX_THREADS, &threads)) return 2;
    }
    else if (strcmp(a, "--beam") == 0 && i + 1 < argc) {
      if (!cli_parse_int("hcq compile", a, argv[++i], 0, CC_BEAM_MAX_WIDTH, &beam_flag)) return 2;
    } else if (strcmp(a, "--beam-seconds") == 0 && i + 1 < argc) {
      if (!cli_parse_int("hcq compile", a, argv[++i], 1, BEAM_CLI_MAX_SECONDS, &beam_s)) return 2;
    } else if (strcmp(a, "--dev") == 0 && i + 1 < argc) devname = argv[++i];
    else if (strcmp(a, "--noopt") == 0) noopt = true;
    else if (strcmp(a, "--dump-passes") == 0) dump = true;
    else if (strcmp(a, "-o") == 0 && i + 1 < argc) out_path = argv[++i];
    else if (strcmp(a, "--arch") == 0 && i + 1 < argc) arch = argv[++i];
    else if (a[0] != '-' && !file) file = a;
    else {
      fprintf(stderr, "hcq compile: unexpected argument '%s'\n", a);
      usage(stderr);
      return 2;
    }
  }
  if (!file) {
    fprintf(stderr, "hcq compile: no kernel file given\n");
    usage(stderr);
    return 2;
  }
  if (noopt && opts_text) {
    fprintf(stderr, "hcq compile: --opts and --noopt exclude each other\n");
    return 2;
  }
  if (!beam_cli_width("hcq compile", beam_flag, &beam)) return 2;
  if (beam && (noopt || opts_text)) {
    fprintf(stderr, "hcq compile: --beam (or $BEAM) chooses the opts: it excludes --opts and --noopt\n");
    return 2;
  }
  if (devname && !beam) {
    fprintf(stderr, "hcq compile: --dev names the device a --beam search times on; no --beam given\n");
    return 2;
  }
  if (!target) target = "c";
  if (arch) {
    /* a kernel image: the c target for that arch */
    snprintf(arch_target, sizeof arch_target, "c:%s", arch);
    if ((strcmp(target, "c") != 0 && strcmp(target, arch_target) != 0) || !out_path) {
      fprintf(stderr, "hcq compile: --arch %s writes a kernel image: it needs --target c and -o FILE.img\n", arch);
      return 2;
    }
    target = arch_target;
  }
  int rc = 1;
  uop_ctx *ctx = NULL;
  cc_program *prog = NULL;
  cc_opt *opts = NULL;
  size_t nopts = 0;
  cc_target t;
  hcq_status st = beam ? beam_compile(file, devname, target, beam, threads, beam_s, &opts, &nopts) : HCQ_OK;
  if (!st) st = cc_target_get(target, (int)threads, &t);
  if (!st && opts_text) st = cc_opts_parse(opts_text, &opts, &nopts);
  if (!st) st = uop_ctx_create(&ctx);
  const uop *sink = NULL;
  if (!st) st = cc_kernel_parse_file(ctx, file, &sink);
  if (!st) {
    cc_options o = {.opts = opts, .nopts = nopts, .noopt = noopt, .dump = dump ? dump_to_stderr : NULL};
    st = cc_compile_source(ctx, sink, &t, &o, &prog);
  }
  if (!st && !out_path) {
    fputs(prog->source, stdout);
    rc = 0;
  }
  if (!st && arch) {
    st = aot_write_image(prog, arch, out_path);
    if (!st) rc = 0;
  } else if (!st && out_path) {
    st = cc_compile_binary(&t, prog);
    if (!st) {
      FILE *f = fopen(out_path, "wb");
      if (!f || fwrite(prog->binary, 1, prog->binary_size_B, f) != prog->binary_size_B) {
        fprintf(stderr, "hcq compile: cannot write %s\n", out_path);
      } else {
        rc = 0;
      }
      if (f && fclose(f) != 0) rc = 1;
    }
  }
  if (st) fprintf(stderr, "hcq compile: %s\n", hcq_status_message(st));
  hcq_status_free(st);
  cc_program_free(prog);
  free(opts);
  uop_ctx_destroy(ctx);
  return rc;
}
