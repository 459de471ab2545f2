/* --beam N / --beam-seconds S / $BEAM for the verbs (run, compile, bench): parsing and one search with its summary
 * line (compiler/beam.h does the search). */
#ifndef HCQ_TOOLS_BEAM_CLI_H
#define HCQ_TOOLS_BEAM_CLI_H

#include <stdbool.h>

#include "compiler/beam.h"

#define BEAM_CLI_MAX_SECONDS 86400

/* The width when --beam was not given (flag_width < 0): $BEAM (0 = off). False after printing why ("VERB: ..."). */
bool beam_cli_width(const char *verb, long long flag_width, int *out_width);

/* Search the kernel of file `path` (or `text` when path is NULL) on rd; prints "VERB: beam: ..." on stderr unless
 * quiet (and the progress line unless quiet). *out_opts (malloc'd, never NULL) and *out_n: the winner. */
hcq_status beam_cli_search(const char *verb, hcq_rt_device *rd, const char *path, const char *text,
                           const cc_beam_options *o, bool quiet, cc_beam_result *out);

#endif
