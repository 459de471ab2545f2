/* Strict command-line values and bounded input files for the hcq verbs.
 *
 * Numbers: the whole text must be a decimal integer inside [min, max]; else one line on stderr naming the verb,
 * the flag, the text and the accepted range ("hcq run: --threads: 'abc' is not an integer (accepted: 0 to 1024)").
 * Ranges used by the verbs (documented in README.md):
 *   --threads     0 to CLI_MAX_THREADS (0: $HCQ_CPU_THREADS or the number of cores)
 *   --repeat      1 to CLI_MAX_REPEAT
 *   --timeout-ms  1 to 4294967295
 *   --seed        0 to 2^63-1
 * Files: a directory (or socket) is refused by name; a regular file must have exactly the expected size; a FIFO
 * or character device (a pipe from <(...), /dev/zero) is read up to the expected size plus one byte, so an endless
 * input is refused instead of filling memory. */
#ifndef HCQ_TOOLS_CLI_ARGS_H
#define HCQ_TOOLS_CLI_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpu/cpu_pool.h"
#include "base/status.h"

#define CLI_MAX_THREADS CPU_POOL_MAX_THREADS
#define CLI_MAX_REPEAT 1000000

/* Parse `text` for `flag` of `verb` ("hcq run"); false after printing why. */
bool cli_parse_int(const char *verb, const char *flag, const char *text, long long min, long long max,
                   long long *out);
/* A flag that takes a value came last: print "VERB: FLAG needs a value" and return true. */
bool cli_missing_value(const char *verb, const char *flag, bool has_value);

/* Read exactly size_B bytes of `path` into dst; `what` names the flag in errors ("--in 1=x.bin"). */
hcq_status cli_read_exact(const char *what, const char *path, void *dst, size_t size_B);
/* Read a whole file of at most max_B bytes; *out is malloc'd with a NUL after the last byte. */
hcq_status cli_read_file(const char *path, size_t max_B, uint8_t **out, size_t *out_size_B);

#endif
