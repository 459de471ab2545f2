/* --beam for the verbs (see beam_cli.h). */
#include "tools/beam_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli_args.h"

bool beam_cli_width(const char *verb, long long flag_width, int *out_width) {
  if (flag_width >= 0) {
    *out_width = (int)flag_width;
    return true;
  }
  hcq_status st = cc_beam_width_from_env(out_width);
  if (!st) return true;
  fprintf(stderr, "%s: %s\n", verb, hcq_status_message(st));
  hcq_status_free(st);
  return false;
}

hcq_status beam_cli_search(const char *verb, hcq_rt_device *rd, const char *path, const char *text,
                           const cc_beam_options *o, bool quiet, cc_beam_result *out) {
  uint8_t *file = NULL;
  size_t size = 0;
  if (path) HCQ_TRY(cli_read_file(path, (size_t)64 << 20, &file, &size));
  cc_beam_options opt = *o;
  opt.progress = !quiet;
  if (path) opt.source_name = path;
  hcq_status st = cc_beam_search(rd, path ? (const char *)file : text, &opt, out);
  free(file);
  if (st || quiet) return st;
  char *ot = cc_opts_format(out->opts, out->nopts);
  if (out->cache_hit)
    fprintf(stderr, "%s: beam %d: opts [%s] (cache hit)\n", verb, o->width, ot ? ot : "");
  else
    fprintf(stderr,
            "%s: beam %d: opts [%s], %.4f ms (noopt %.4f ms), %zu rounds, %zu timed, %zu wrong refused, %.1f s%s\n",
            verb, o->width, ot ? ot : "", out->best_ms, out->noopt_ms, out->rounds, out->timed, out->wrong,
            out->elapsed_s, out->timed_out ? " (time bound reached: best so far)" : "");
  free(ot);
  return HCQ_OK;
}
