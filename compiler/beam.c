/* BEAM search (see beam.h). The device side goes through the runtime layer (hcq/hcq.h) with krun's buffers. */
#include "compiler/beam.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/kernel_text.h"
#include "compiler/opt.h"
#include "compiler/toolchain.h"
#include "hcq/rt_krun.h"
#include "hcq/signal.h"

#define MAX_UPCAST 256  /* reference BEAM_UPCAST_MAX */
#define MAX_LOCAL 1024  /* reference BEAM_LOCAL_MAX */
#define MIN_GAIN 0.01   /* a round must beat the best by 1% (timing noise on a CPU is larger than the reference's
                           absolute 0.01 us) */
#define TIMED_RUNS 3
#define BEAM_KEY_FORMAT 1

/* ------------------------------------------------------------------------------------------------ actions */

/* The reference's action table (search.py `actions`), TC left out (not implemented), PADTO and NOLOCALS always in
 * (the reference gates them behind BEAM_PADTO / NOLOCALS); then our KBLOCK on the first reduce axis (CPU targets;
 * amount 0 is the heuristic's block for any k, kblock.c). */
static cc_opt actions[256];
static size_t nactions;

static void add(cc_opt_op op, const int64_t *amts, size_t namts, int naxes) {
  for (size_t a = 0; a < namts; a++)
    for (int ax = 0; ax < naxes; ax++) actions[nactions++] = (cc_opt){op, ax, amts[a]};
}

static void init_actions(void) {
  if (nactions) return;
  static const int64_t up[] = {0, 2, 3, 4, 5, 7}, unr[] = {0, 4, 7}, loc[] = {2, 3, 4, 8, 13, 16, 29},
                       gtop[] = {13, 16, 28, 29, 32, 49, 64, 256}, grp[] = {0, 4, 8, 16}, pad[] = {32},
                       thr[] = {2, 3, 4, 5, 8, 12, 16, 24, 32, 64}, kbl[] = {0, 32, 64, 128};
#define N(a) (sizeof a / sizeof a[0])
  add(CC_OPT_UPCAST, up, N(up), 8);
  add(CC_OPT_UNROLL, unr, N(unr), 5);
  add(CC_OPT_LOCAL, loc, N(loc), 6);
  add(CC_OPT_GROUPTOP, gtop, N(gtop), 3);
  add(CC_OPT_GROUP, grp, N(grp), 3);
  add(CC_OPT_PADTO, pad, N(pad), 7);
  actions[nactions++] = (cc_opt){CC_OPT_LOCAL, 0, 32};
  actions[nactions++] = (cc_opt){CC_OPT_LOCAL, 6, 2};
  for (int a0 = 0; a0 < 5; a0++)
    for (int a1 = a0 + 1; a1 < 5; a1++) actions[nactions++] = (cc_opt){CC_OPT_SWAP, a0, a1};
  add(CC_OPT_THREAD, thr, N(thr), 3);
  actions[nactions++] = (cc_opt){CC_OPT_NOLOCALS, 0, 0};
  add(CC_OPT_KBLOCK, kbl, N(kbl), 1);
#undef N
}

size_t cc_beam_action_count(void) {
  init_actions();
  return nactions;
}

cc_opt cc_beam_action(size_t i) {
  init_actions();
  return i < nactions ? actions[i] : (cc_opt){CC_OPT_COUNT, 0, 0};
}

/* ------------------------------------------------------------------------------------------------ env */

hcq_status cc_beam_width_from_env(int *out_width) {
  *out_width = 0;
  const char *s = getenv("BEAM");
  if (!s || !s[0]) return HCQ_OK;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || s[0] == ' ' || s[0] == '+' || v < 0 || v > CC_BEAM_MAX_WIDTH)
    return hcq_status_make(HCQ_CODE_INVALID, "BEAM='%s': wants an integer 0 to %d (0 = off)", s, CC_BEAM_MAX_WIDTH);
  *out_width = (int)v;
  return HCQ_OK;
}

hcq_status cc_beam_seconds_from_env(double *out_s) {
  *out_s = CC_BEAM_DEFAULT_SECONDS;
  const char *s = getenv("HCQ_BEAM_SECONDS");
  if (!s || !s[0]) return HCQ_OK;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v > 0) || v > CC_BEAM_MAX_SECONDS)
    return hcq_status_make(HCQ_CODE_INVALID, "HCQ_BEAM_SECONDS='%s': wants a number of seconds above 0, at most %g", s,
                           CC_BEAM_MAX_SECONDS);
  *out_s = v;
  return HCQ_OK;
}

/* ------------------------------------------------------------------------------------------------ state */

typedef struct cand {
  cc_opt *opts;
  size_t n;
  double ms;
} cand;

typedef struct beam_state {
  const cc_beam_options *o;
  hcq_rt_device *dev;
  const char *text; /* canonical kernel text */
  char target[32];
  int threads;
  krun base;           /* the noopt kernel, its buffers and variables */
  uint8_t **snap;      /* inputs per slot */
  uint8_t **ref;       /* the noopt outputs per slot (NULL for buffers it does not write) */
  uint64_t *seen;      /* source hashes (2 per source) */
  size_t nseen, cseen;
  double t0_ms, deadline_ms, best_ms;
  cc_beam_result *res;
  size_t round_cands, round_done;
} beam_state;

static double now_ms(void) { return (double)hcq_now_ns() / 1e6; }

/* On a terminal the line is rewritten after every candidate; elsewhere one line per round. */
static void progress(beam_state *b, bool end_of_round) {
  if (!b->o->progress) return;
  bool tty = isatty(2);
  if (!tty && !end_of_round) return;
  double el = (now_ms() - b->t0_ms) / 1e3;
  fprintf(stderr, "%sbeam: round %zu, %zu/%zu candidates (%zu timed, %zu wrong), best %.4f ms (noopt %.4f), %.1f s%s",
          tty ? "\r" : "", b->res->rounds, b->round_done, b->round_cands, b->res->timed, b->res->wrong, b->best_ms,
          b->res->noopt_ms, el, tty ? "\033[K" : "\n");
  fflush(stderr);
}

static bool seen_source(beam_state *b, const char *src) {
  size_t len = strlen(src);
  uint64_t h0 = cc_hash64(src, len, 1), h1 = cc_hash64(src, len, 2);
  for (size_t i = 0; i < b->nseen; i++)
    if (b->seen[2 * i] == h0 && b->seen[2 * i + 1] == h1) return true;
  if (b->nseen == b->cseen) {
    size_t c = b->cseen ? b->cseen * 2 : 256;
    uint64_t *p = realloc(b->seen, c * 2 * sizeof *p);
    if (!p) return false; /* no dedup beyond this point: only costs time */
    b->seen = p;
    b->cseen = c;
  }
  b->seen[2 * b->nseen] = h0;
  b->seen[2 * b->nseen + 1] = h1;
  b->nseen++;
  return false;
}

/* The reference's upcast/local bounds, on the optimized AST's ranges. */
static hcq_status within_limits(uop_ctx *ctx, const uop *sink, bool *ok) {
  const uop **nodes;
  size_t n;
  HCQ_TRY(uop_toposort(ctx, sink, &nodes, &n));
  int64_t up = 1, lcl = 1;
  for (size_t i = 0; i < n; i++) {
    if (nodes[i]->op != UOP_RANGE) continue;
    int64_t sz = uop_vmax(nodes[i]) + 1;
    uop_axis t = (uop_axis)nodes[i]->arg.i2;
    if (t == UOP_AXIS_UPCAST || t == UOP_AXIS_UNROLL) up = up > MAX_UPCAST ? up : up * sz;
    else if (t == UOP_AXIS_LOCAL || t == UOP_AXIS_WARP || t == UOP_AXIS_GROUP_REDUCE) lcl = lcl > MAX_LOCAL ? lcl : lcl * sz;
  }
  *ok = up <= MAX_UPCAST && lcl <= MAX_LOCAL;
  return HCQ_OK;
}

/* Restore the inputs; outputs the kernel only writes get a sentinel, so a candidate that skips a store fails. */
static void restore(beam_state *b) {
  for (size_t i = 0; i < b->base.nbufs; i++) {
    if (b->base.prog->desc.params[i].access == HCQ_ACCESS_WRITE)
      memset(b->base.bufs[i].data, 0xcd, b->base.bufs[i].size_B);
    else memcpy(b->base.bufs[i].data, b->snap[i], b->base.bufs[i].size_B);
  }
}

/* A wait bound well past the search's own: a slow kernel is not a hung one (on the CPU a timed-out wait costs the
 * device), so the bound covers the time left plus 10x the noopt time plus 10 s. */
static uint32_t run_timeout_ms(beam_state *b) {
  double left = b->deadline_ms - now_ms(), base = b->res->noopt_ms; /* 0 until measured */
  double t = (left > 0 ? left : 0) + 10 * base + 10000;
  return t > 3.6e6 ? 3600000u : (uint32_t)t;
}

static hcq_status launch(beam_state *b, hcq_rt_kernel *k, double *ms) {
  double t0 = now_ms();
  HCQ_TRY(hcq_rt_launch(k, b->base.rbufs, b->base.nbufs, (const hcq_var *)b->base.vv,
                        hcq_program_nvars(&b->base.prog->desc)));
  HCQ_TRY(hcq_rt_sync(b->dev, run_timeout_ms(b)));
  double dev_ms = hcq_rt_kernel_last_ms(k);
  *ms = dev_ms > 0 ? dev_ms : now_ms() - t0; /* a device without timestamps: wall time */
  return HCQ_OK;
}

/* Time one candidate. *out_ms = INFINITY when it is not a valid, new, correct kernel; only a lost device is an
 * error. The heuristic's own choice is not held to the search's upcast/local bounds (it may upcast more). */
static hcq_status evaluate(beam_state *b, const cc_opt *opts, size_t n, bool heuristic, double *out_ms) {
  *out_ms = INFINITY;
  uop_ctx *ctx = NULL;
  cc_program *prog = NULL;
  hcq_rt_kernel *k = NULL;
  cc_target t;
  const uop *sink = NULL, *opt_sink = NULL;
  cc_opt *applied = NULL;
  size_t napplied = 0;
  static const cc_opt none;
  cc_options co = {.opts = n ? opts : &none, .nopts = n};
  hcq_status st = cc_target_get(b->target, b->threads, &t);
  if (!st) st = uop_ctx_create(&ctx);
  if (!st) st = cc_kernel_parse(ctx, b->text, strlen(b->text), "<beam>", &sink);
  if (st) goto out; /* parsed once already: only memory can fail here */
  bool ok = false;
  hcq_status vs = cc_optimize(ctx, sink, &t, &co, &opt_sink, &applied, &napplied);
  free(applied);
  if (!vs && !heuristic) vs = within_limits(ctx, opt_sink, &ok);
  ok |= heuristic;
  if (vs || !ok) {
    hcq_status_free(vs);
    b->res->refused++;
    goto out;
  }
  hcq_status cs = cc_compile_source(ctx, sink, &t, &co, &prog);
  if (!cs && seen_source(b, prog->source)) {
    b->res->dups++;
    goto out;
  }
  if (!cs) cs = cc_compile_binary(&t, prog);
  hcq_program desc;
  if (!cs) cs = cc_program_describe(prog, &t, &desc);
  if (!cs) cs = hcq_rt_kernel_load(b->dev, &desc, &k);
  double ms = INFINITY;
  if (!cs) {
    restore(b);
    cs = launch(b, k, &ms);
  }
  if (cs) {
    if (hcq_status_code(cs) == HCQ_CODE_DEVICE_LOST) st = cs;
    else hcq_status_free(cs);
    b->res->failed++;
    goto out;
  }
  if (b->o->after_run) b->o->after_run(b->o->hook_user, opts, n, b->base.bufs, b->base.nbufs);
  krun_cmp cmp = {.first_bad = -1};
  for (size_t i = 0; i < b->base.nbufs; i++)
    if (b->ref[i])
      krun_compare(b->base.bufs[i].data, b->ref[i], b->base.bufs[i].dtype, b->base.bufs[i].nelems, 1e-4, 1e-5, &cmp);
  if (cmp.mismatches) {
    b->res->wrong++;
    goto out;
  }
  for (int r = 1; r < TIMED_RUNS && ms <= 3 * b->best_ms; r++) {
    double m;
    if ((cs = launch(b, k, &m))) {
      if (hcq_status_code(cs) == HCQ_CODE_DEVICE_LOST) st = cs;
      else hcq_status_free(cs);
      b->res->failed++;
      goto out;
    }
    if (m < ms) ms = m;
  }
  b->res->timed++;
  *out_ms = ms;
out:
  hcq_rt_kernel_free(k);
  cc_program_free(prog);
  uop_ctx_destroy(ctx);
  return st;
}

/* ------------------------------------------------------------------------------------------------ cache */

static hcq_status make_key(beam_state *b, char **out, size_t *out_len) {
  hcq_device_info info = {0};
  HCQ_TRY(hcq_rt_info(b->dev, &info));
  cc_target t;
  HCQ_TRY(cc_target_get(b->target, b->threads, &t));
  /* the external compiler the target uses, and its `--version` text (a missing one leaves it empty: the compile
   * fails anyway) */
  char ptxas[512] = "ptxas";
  if (t.kind == CC_TARGET_PTX) hcq_status_free(cc_ptx_ptxas(ptxas, sizeof ptxas));
  const char *tool = t.kind == CC_TARGET_C ? cc_toolchain_cc() : t.kind == CC_TARGET_PTX ? ptxas : cc_llvm_clang();
  const char *version = "";
  hcq_status_free(cc_toolchain_version(tool, &version));
  char *s = NULL;
  int len = asprintf(&s,
                     "hcq beam %d\nhcq built by %s\ndevice %s arch %s target %s\ntarget %s %s threads %lld vector %d\n"
                     "compiler %s %s flags %s\nwidth %d\n%s",
                     BEAM_KEY_FORMAT, __VERSION__, info.name, info.arch, info.target, t.name, t.arch,
                     (long long)t.global_max[0], t.vector_max, tool, version ? version : "",
                     t.kind == CC_TARGET_C ? cc_toolchain_tune() : "", b->o->width, b->text);
  if (len < 0) return hcq_status_make(HCQ_CODE_NOMEM, "beam cache key");
  *out = s;
  *out_len = (size_t)len;
  return HCQ_OK;
}

static bool use_cache(const cc_beam_options *o) {
  const char *ig = getenv("IGNORE_BEAM_CACHE");
  return !o->no_cache && !(ig && ig[0] && strcmp(ig, "0") != 0);
}

/* A cached winner is the opts text ("" = noopt); one that does not parse counts as a miss. */
static hcq_status cache_get(const char *key, size_t key_len, cc_beam_result *r, bool *hit) {
  uint8_t *data = NULL;
  size_t n = 0;
  bool found = false;
  *hit = false;
  HCQ_TRY(cc_cache_load(key, key_len, &data, &n, &found));
  if (!found) return HCQ_OK;
  char *text = malloc(n + 1);
  if (text) {
    memcpy(text, data, n);
    text[n] = 0;
    hcq_status ps = text[0] ? cc_opts_parse(text, &r->opts, &r->nopts) : HCQ_OK;
    *hit = !ps;
    hcq_status_free(ps);
  }
  free(text);
  free(data);
  return HCQ_OK;
}

static hcq_status cache_put(const char *key, size_t key_len, const cc_beam_result *r) {
  size_t cap = 16 + r->nopts * 40, len = 0;
  char *s = calloc(1, cap);
  if (!s) return hcq_status_make(HCQ_CODE_NOMEM, "beam cache entry");
  for (size_t i = 0; i < r->nopts; i++)
    len += (size_t)snprintf(s + len, cap - len, "%s%s:%d:%lld", i ? "," : "", cc_opt_name(r->opts[i].op),
                            r->opts[i].axis, (long long)r->opts[i].amount);
  hcq_status st = cc_cache_store(key, key_len, (const uint8_t *)s, len);
  free(s);
  return st;
}

/* ------------------------------------------------------------------------------------------------ search */

static void cands_free(cand *c, size_t n) {
  for (size_t i = 0; c && i < n; i++) free(c[i].opts);
  free(c);
}

static int cand_cmp(const void *pa, const void *pb) {
  double a = ((const cand *)pa)->ms, b = ((const cand *)pb)->ms;
  return a < b ? -1 : a > b;
}

/* Noopt run: buffers, variables, the reference outputs and the time to beat. */
static hcq_status setup_base(beam_state *b) {
  hcq_device_info info = {0};
  HCQ_TRY(hcq_rt_info(b->dev, &info));
  snprintf(b->target, sizeof b->target, "%s", info.target);
  cc_options noopt = {.noopt = true};
  HCQ_TRY(krun_compile_text_for(&b->base, b->text, &noopt, b->target, b->threads));
  HCQ_TRY(krun_setup_rt(&b->base, b->dev));
  krun *k = &b->base;
  uop_var_val *all = calloc(hcq_program_nvars(&k->prog->desc) + 1, sizeof *all);
  if (!all) return hcq_status_make(HCQ_CODE_NOMEM, "beam vars");
  for (size_t v = 0; v < hcq_program_nvars(&k->prog->desc); v++) {
    all[v] = (uop_var_val){hcq_program_var(&k->prog->desc, v)->name, k->var_nodes[v]->arg.i2};
    for (size_t i = 0; i < b->o->nvars; i++)
      if (!strcmp(b->o->vars[i].name, hcq_program_var(&k->prog->desc, v)->name)) all[v].value = b->o->vars[i].value;
  }
  hcq_status st = krun_set_vars(k, all, hcq_program_nvars(&k->prog->desc));
  free(all);
  HCQ_TRY(st);
  krun_fill(k, 7);
  b->snap = calloc(k->nbufs + 1, sizeof *b->snap);
  b->ref = calloc(k->nbufs + 1, sizeof *b->ref);
  if (!b->snap || !b->ref) return hcq_status_make(HCQ_CODE_NOMEM, "beam buffers");
  for (size_t i = 0; i < k->nbufs; i++) {
    if (!(b->snap[i] = malloc(k->bufs[i].size_B + 1))) return hcq_status_make(HCQ_CODE_NOMEM, "beam input copy");
    memcpy(b->snap[i], k->bufs[i].data, k->bufs[i].size_B);
  }
  restore(b);
  double ms = INFINITY;
  HCQ_TRY(hcq_status_annotate(launch(b, k->kern, &ms), "beam: the unoptimized kernel"));
  for (size_t i = 0; i < k->nbufs; i++) {
    if (!(k->prog->desc.params[i].access & HCQ_ACCESS_WRITE)) continue;
    if (!(b->ref[i] = malloc(k->bufs[i].size_B + 1))) return hcq_status_make(HCQ_CODE_NOMEM, "beam reference copy");
    memcpy(b->ref[i], k->bufs[i].data, k->bufs[i].size_B);
  }
  /* more timed runs only while they are cheap against the budget (noopt can be very slow) */
  for (int r = 1; r < TIMED_RUNS && ms * TIMED_RUNS < 0.05 * (b->deadline_ms - b->t0_ms); r++) {
    double m;
    restore(b);
    HCQ_TRY(launch(b, k->kern, &m));
    if (m < ms) ms = m;
  }
  b->res->noopt_ms = b->best_ms = ms;
  return HCQ_OK;
}

/* The hand-coded heuristic's choice as an explicit list (what later rounds extend). */
static hcq_status heuristic_opts(beam_state *b, cc_opt **out, size_t *n) {
  uop_ctx *ctx = NULL;
  const uop *sink, *os;
  cc_target t;
  hcq_status st = cc_target_get(b->target, b->threads, &t);
  if (!st) st = uop_ctx_create(&ctx);
  if (!st) st = cc_kernel_parse(ctx, b->text, strlen(b->text), "<beam>", &sink);
  if (!st) st = cc_optimize(ctx, sink, &t, NULL, &os, out, n);
  uop_ctx_destroy(ctx);
  return st;
}

static hcq_status search(beam_state *b) {
  init_actions();
  cc_beam_result *r = b->res;
  cand *beam = calloc(1, sizeof *beam), *next = NULL;
  size_t nbeam = 1, nnext = 0;
  if (!beam) return hcq_status_make(HCQ_CODE_NOMEM, "beam");
  beam[0].ms = b->best_ms; /* noopt: no opts */
  hcq_status st = HCQ_OK;
  bool exiting = false;
  while (!st && !exiting) {
    r->rounds++;
    b->round_cands = nbeam * nactions + (r->rounds == 1);
    b->round_done = 0;
    next = calloc(b->round_cands, sizeof *next);
    nnext = 0;
    if (!next) st = hcq_status_make(HCQ_CODE_NOMEM, "beam candidates");
    bool first = r->rounds == 1;
    for (size_t j = 0; !st && j < nbeam + first && !r->timed_out; j++) {
      bool heur = first && j == 0; /* round 1 also times the heuristic (first: a copy of it is then a dup) */
      size_t bi = heur ? 0 : j - first;
      for (size_t a = 0; !st && a < (heur ? 1 : nactions); a++) {
        if (now_ms() >= b->deadline_ms && !heur) { /* the heuristic is always timed: BEAM never loses to it */
          r->timed_out = true;
          break;
        }
        cand c = {.n = heur ? 0 : beam[bi].n + 1};
        if (heur) {
          st = heuristic_opts(b, &c.opts, &c.n);
        } else if (!(c.opts = malloc(c.n * sizeof *c.opts))) {
          st = hcq_status_make(HCQ_CODE_NOMEM, "beam candidate");
        } else {
          if (beam[bi].n) memcpy(c.opts, beam[bi].opts, beam[bi].n * sizeof *c.opts);
          c.opts[beam[bi].n] = actions[a];
        }
        if (!st) st = evaluate(b, c.opts, c.n, heur, &c.ms);
        if (!st && heur && isfinite(c.ms)) r->heuristic_ms = c.ms;
        b->round_done++;
        if (!st && isfinite(c.ms)) {
          next[nnext++] = c;
          if (c.ms < b->best_ms) b->best_ms = c.ms;
        } else {
          free(c.opts);
        }
        progress(b, false);
      }
    }
    if (st) break;
    progress(b, true);
    qsort(next, nnext, sizeof *next, cand_cmp);
    exiting = nnext == 0 || next[0].ms >= beam[0].ms * (1 - MIN_GAIN) || r->timed_out;
    if (!exiting || (nnext && next[0].ms < beam[0].ms)) {
      size_t keep = exiting ? 1 : (nnext < (size_t)b->o->width ? nnext : (size_t)b->o->width);
      cands_free(beam, nbeam);
      beam = next;
      for (size_t i = keep; i < nnext; i++) free(next[i].opts);
      nbeam = keep;
      next = NULL;
    } else {
      cands_free(next, nnext);
      next = NULL;
    }
  }
  cands_free(next, nnext);
  if (!st) {
    r->opts = beam[0].opts;
    r->nopts = beam[0].n;
    r->best_ms = beam[0].ms;
    beam[0].opts = NULL;
  }
  cands_free(beam, nbeam);
  return st;
}

hcq_status cc_beam_search(hcq_rt_device *dev, const char *kernel_text, const cc_beam_options *o, cc_beam_result *out) {
  memset(out, 0, sizeof *out);
  if (!dev || !kernel_text || !o) return hcq_status_make(HCQ_CODE_INVALID, "cc_beam_search: NULL argument");
  if (o->width < 1 || o->width > CC_BEAM_MAX_WIDTH)
    return hcq_status_make(HCQ_CODE_INVALID, "beam width %d: wants 1 to %d", o->width, CC_BEAM_MAX_WIDTH);
  double secs = o->max_seconds;
  if (!(secs > 0)) {
    HCQ_TRY(cc_beam_seconds_from_env(&secs));
  }
  if (secs > CC_BEAM_MAX_SECONDS)
    return hcq_status_make(HCQ_CODE_INVALID, "beam time bound %g s: wants at most %g", secs, CC_BEAM_MAX_SECONDS);
  beam_state b = {.o = o, .dev = dev, .res = out, .threads = o->threads, .t0_ms = now_ms()};
  b.deadline_ms = b.t0_ms + secs * 1e3;
  /* canonical text: the key does not depend on comments, spacing or the order of lets */
  uop_ctx *ctx = NULL;
  const uop *sink = NULL;
  char *canon = NULL, *key = NULL;
  size_t key_len = 0;
  hcq_status st = uop_ctx_create(&ctx);
  if (!st)
    st = cc_kernel_parse(ctx, kernel_text, strlen(kernel_text), o->source_name ? o->source_name : "<beam>", &sink);
  if (!st) st = cc_kernel_print(sink, &canon);
  uop_ctx_destroy(ctx);
  b.text = canon;
  hcq_device_info info = {0};
  if (!st) st = hcq_rt_info(dev, &info);
  if (!st) snprintf(b.target, sizeof b.target, "%s", info.target);
  bool cache = use_cache(o);
  if (!st && cache) st = make_key(&b, &key, &key_len);
  if (!st && cache) st = cache_get(key, key_len, out, &out->cache_hit);
  if (!st && !out->cache_hit) {
    st = setup_base(&b);
    if (!st) st = search(&b);
    if (b.o->progress && isatty(2)) fputc('\n', stderr);
    if (!st && cache) st = cache_put(key, key_len, out);
  }
  out->elapsed_s = (now_ms() - b.t0_ms) / 1e3;
  for (size_t i = 0; i < b.base.nbufs; i++) {
    if (b.snap) free(b.snap[i]);
    if (b.ref) free(b.ref[i]);
  }
  free(b.snap);
  free(b.ref);
  free(b.seen);
  krun_free(&b.base);
  free(canon);
  free(key);
  if (st) cc_beam_result_free(out);
  return st;
}

void cc_beam_result_free(cc_beam_result *r) {
  if (!r) return;
  free(r->opts);
  r->opts = NULL;
  r->nopts = 0;
}
