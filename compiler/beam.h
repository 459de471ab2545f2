/* BEAM search: choose a kernel's opts by timing candidates on a device (reference: tinygrad
 * tinygrad/codegen/opt/search.py `beam_search`, `get_kernel_actions`, `_time_program`).
 *
 * Start: the unoptimized kernel (noopt), run once on the device with deterministic inputs; its outputs are the
 * reference every candidate must match (cc_float_match rules of krun_compare) before it may win, and its time is
 * the bar to beat. Each round extends every opt list in the beam by one action of the reference's table
 * (UPCAST/UNROLL/LOCAL/GROUP/GROUPTOP/THREAD/NOLOCALS/PADTO/SWAP with its amounts; an action the opt checks of
 * opts.c refuse is skipped, as are upcast products over 256 and local products over 1024). Candidates are
 * deduplicated by their rendered source, compiled, loaded, run once and compared (a wrong one is dropped and
 * counted), then timed (min of 3 runs, stopped early when over 3x the best). The best `width` form the next
 * beam; the search ends when a round brings no gain over the best (1%) or when the time bound is reached (the best
 * so far wins; the bound is checked between candidates, so the search may end one candidate's compile and run
 * late). Round 1 first times the hand-coded heuristic's opts (even past the bound, and not held to the upcast
 * limit), so BEAM keeps the heuristic's choice unless it measures something faster.
 *
 * The winner is cached on disk (compiler/cache.c: MAC'd, owner-checked entries) under a key of the kernel's
 * canonical text, the device (name, arch, target), the target's settings (threads, vector width), the external
 * compiler and its version, hcq's build compiler and the beam width; a second search returns it without timing.
 * IGNORE_BEAM_CACHE=1 (as the reference) or HCQ_CACHE=0 skip the cache. */
#ifndef HCQ_COMPILER_BEAM_H
#define HCQ_COMPILER_BEAM_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler/compiler.h"
#include "compiler/interp.h"
#include "hcq/hcq.h"

#define CC_BEAM_MAX_WIDTH 100
#define CC_BEAM_DEFAULT_SECONDS 20.0
#define CC_BEAM_MAX_SECONDS 86400.0

typedef struct cc_beam_options {
  int width;          /* beam width N, 1..CC_BEAM_MAX_WIDTH */
  double max_seconds; /* time bound; <= 0: $HCQ_BEAM_SECONDS or CC_BEAM_DEFAULT_SECONDS */
  int threads;        /* CPU targets: worker threads (the THREAD opt's limit); <= 0: cores */
  bool progress;      /* a progress line on stderr (round, candidates, best time, elapsed) */
  bool no_cache;      /* neither read nor write the cache */
  const char *source_name; /* names the kernel text in parse errors (a file path); NULL: "<beam>" */
  const uop_var_val *vars; /* variable values to time with; missing ones run at their maximum */
  size_t nvars;
  /* Test hook: called after a candidate's checking run with the device buffers (host views, by slot); whatever it
   * writes is what gets compared with the reference. */
  void (*after_run)(void *user, const cc_opt *opts, size_t nopts, cc_kbuf *bufs, size_t nbufs);
  void *hook_user;
} cc_beam_options;

typedef struct cc_beam_result {
  cc_opt *opts; /* the winner (malloc'd; NULL when nopts is 0: noopt won) */
  size_t nopts;
  double best_ms, noopt_ms; /* device times (0 on a cache hit: nothing was timed) */
  double heuristic_ms;      /* the heuristic's opts as timed in round 1 (0: not timed: a cache hit, or it failed) */
  size_t rounds, timed, wrong, refused, dups, failed; /* refused: the opt checks said no; failed: compile/run error */
  bool cache_hit, timed_out;
  double elapsed_s;
} cc_beam_result;

/* Search the opts of `kernel_text` (docs/FORMATS.md) on `dev` (any runtime device; compiled for its target).
 * Errors: bad options, a kernel that does not parse or whose noopt form fails to run, a lost device. */
hcq_status cc_beam_search(hcq_rt_device *dev, const char *kernel_text, const cc_beam_options *o, cc_beam_result *out);
void cc_beam_result_free(cc_beam_result *r);

/* $BEAM as the reference reads it: unset or empty = 0 (off); else an integer 0..CC_BEAM_MAX_WIDTH, or an error
 * naming the value. */
hcq_status cc_beam_width_from_env(int *out_width);
/* $HCQ_BEAM_SECONDS: unset = CC_BEAM_DEFAULT_SECONDS; else a number in (0, CC_BEAM_MAX_SECONDS], or an error. */
hcq_status cc_beam_seconds_from_env(double *out_s);

/* The size of the action table and its i-th action (op CC_OPT_COUNT past the end), for tests. */
size_t cc_beam_action_count(void);
cc_opt cc_beam_action(size_t i);

#endif
