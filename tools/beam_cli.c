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

char *beam_cli_opts_text(const cc_opt *opts, size_t n) {
  size_t cap = 16 + n * 40, len = 0;
  char *s = calloc(1, cap);
  for (size_t i = 0; s && i < n; i++)
    len += (size_t)snprintf(s + len, cap - len, "%s%s:%d:%lld", i ? "," : "", cc_opt_name(opts[i].op), opts[i].axis,
                            (long long)opts[i].amount);
  return s;
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
  char *ot = beam_cli_opts_text(out->opts, out->nopts);
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
