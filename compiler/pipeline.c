/* The compiler's pass pipeline: a fixed table of passes run in order on the kernel SINK, then the linearizer and
 * the renderer (the order is the reference's, tinygrad/codegen/__init__.py, for a kernel that starts in post-lowerer
 * form). Each pass can be dumped as text through cc_options.dump. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/cc_internal.h"
#include "compiler/opt.h"
#include "compiler/kernel_text.h"
#include "uop/symbolic.h"
#include "uop/text.h"
#include "base/ptrmap.h"

/* ------------------------------------------------------------------------------------------------ rebuild walk */

hcq_status cc_rebuild(uop_ctx *ctx, const uop *root, cc_rebuild_fn fn, void *user, const uop **out_root) {
  *out_root = NULL;
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(ctx, root, &nodes, &count));
  /* node id -> its result; only the graph's nodes are set and read (sources of graph nodes are graph nodes), so the
   * array needs no clearing */
  const uop **map = malloc((uop_ctx_node_count(ctx) + 1) * sizeof *map);
  if (!map) return hcq_status_make(HCQ_CODE_NOMEM, "cc_rebuild: out of memory");
  for (size_t k = 0; k < count; k++) map[nodes[k]->id] = nodes[k];
  hcq_status st = HCQ_OK;
  const uop *small[8];
  for (size_t k = 0; k < count && !st; k++) {
    const uop *n = nodes[k];
    const uop **src = n->nsrc <= 8 ? small : malloc(n->nsrc * sizeof *src);
    if (!src) {
      st = hcq_status_make(HCQ_CODE_NOMEM, "cc_rebuild: out of memory");
      break;
    }
    bool changed = false;
    for (uint32_t i = 0; i < n->nsrc; i++) {
      src[i] = map[n->src[i]->id];
      changed |= src[i] != n->src[i];
    }
    const uop *cur = changed ? uop_replace_src(ctx, n, src, n->nsrc) : n;
    if (src != small) free(src);
    const uop *out = cur ? fn(user, ctx, cur, &st) : NULL;
    if (st) break;
    if (!out) {
      st = uop_ctx_status(ctx);
      if (!st) st = hcq_status_make(HCQ_CODE_NOMEM, "cc_rebuild: out of memory");
      break;
    }
    map[n->id] = out;
  }
  if (!st) *out_root = map[root->id];
  free(map);
  return st;
}

size_t cc_count_ops(uop_ctx *ctx, const uop *root, uop_opset ops) {
  const uop **nodes;
  size_t count, found = 0;
  hcq_status st = uop_toposort(ctx, root, &nodes, &count);
  if (st) {
    hcq_status_free(st);
    return SIZE_MAX;
  }
  for (size_t k = 0; k < count; k++)
    if (ops & UOP_OPBIT(nodes[k]->op)) found++;
  return found;
}

/* ------------------------------------------------------------------------------------------------ small passes */

hcq_status cc_pass_symbolic(cc_pass_ctx *pc, const uop *sink, const uop **out_sink) {
  const uop_pm *pm = uop_symbolic_pm();
  if (!pm) return hcq_status_make(HCQ_CODE_INTERNAL, "symbolic: the rule set failed to build");
  return uop_graph_rewrite(pc->ctx, sink, pm, UOP_REWRITE_SOURCES_FIRST, NULL, out_sink);
}

hcq_status cc_pass_lower_index(cc_pass_ctx *pc, const uop *sink, const uop **out_sink) {
  return uop_lower_index(pc->ctx, sink, out_sink);
}

/* Optimizer slot (compiler/opts.c, heuristic.c): explicit opts, or the hand-coded heuristic when none are given;
 * the identity with --noopt. */
static hcq_status pass_optimize(cc_pass_ctx *pc, const uop *sink, const uop **out_sink) {
  free(pc->applied);
  pc->applied = NULL;
  pc->napplied = 0;
  return cc_optimize(pc->ctx, sink, pc->target, pc->opts, out_sink, &pc->applied, &pc->napplied);
}

/* Expander slot (compiler/expander.c): UPCAST/UNROLL ranges -> lanes; on CPU targets the THREAD range becomes its
 * SPECIAL first, while the graph is small (gpudims.c). */
static hcq_status pass_expand(cc_pass_ctx *pc, const uop *sink, const uop **out_sink) {
  const uop *mapped;
  HCQ_TRY(cc_pass_cpu_threads(pc, sink, &mapped));
  return cc_expand(pc->ctx, mapped, pc->target, out_sink);
}

/* ------------------------------------------------------------------------------------------------ the table */

typedef struct cc_pass {
  const char *name;
  cc_pass_fn fn;
} cc_pass;

static const cc_pass PASSES[] = {
    {"initial symbolic", cc_pass_symbolic},        /* 3.6: canonical index math before range merging */
    {"merge ranges", cc_pass_merge_ranges},        /* 3.7: adjacent ranges -> one, if no div/mod is added */
    {"optimize", pass_optimize},                   /* 3.8: opts / heuristic (slot) */
    {"postopt symbolic", cc_pass_symbolic},        /* 3.9 */
    {"thread reduce", cc_pass_thread_reduce},      /* CPU: REDUCE over THREAD -> partials + BARRIER + combine */
    {"expand", pass_expand},                       /* 3.10: expander (slot) */
    {"group reduce", cc_pass_group_reduce},        /* 3.10-11: GROUP_REDUCE -> shared memory + BARRIER */
    {"remove reduce", cc_pass_reduce},             /* 3.12: REDUCE -> DEFINE_REG accumulators */
    {"add gpudims", cc_pass_gpudims},              /* 3.13: THREAD/GLOBAL/LOCAL ranges -> SPECIAL */
    {"lower index", cc_pass_lower_index},          /* 3.15: index -> int32 / int64 */
    {"decompositions", cc_pass_decompose},         /* 3.17: what the target lacks */
    {"vectorize", cc_pass_vectorize},              /* 3.14 rebuilt from lanes: vector loads/stores/ALU (c only) */
};

/* ------------------------------------------------------------------------------------------------ dump */

/* One line per node: "%N = OP dtype arg <- %a %b". Used for --dump-passes. */
static hcq_status dump_graph(uop_ctx *ctx, const uop *root, char **out_text) {
  *out_text = NULL;
  const uop **nodes;
  size_t count;
  HCQ_TRY(uop_toposort(ctx, root, &nodes, &count));
  base_ptrmap num = {0};
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return hcq_status_make(HCQ_CODE_NOMEM, "dump: open_memstream failed");
  hcq_status st = HCQ_OK;
  for (size_t k = 0; k < count; k++) {
    const uop *n = nodes[k];
    if (!base_ptrmap_put(&num, n, k)) {
      st = hcq_status_make(HCQ_CODE_NOMEM, "dump: out of memory");
      break;
    }
    uop_dtype dt = n->dtype;
    fprintf(f, "%%%zu = %s %s%s", k, uop_op_name((uop_op)n->op), uop_dt_name(uop_dt_scalar_of(dt)),
            uop_dt_is_ptr(dt) ? "*" : "");
    if (dt.count > 1) fprintf(f, "x%u", (unsigned)dt.count);
    switch (n->arg.kind) {
      case UOP_ARG_INT: fprintf(f, " %lld", (long long)n->arg.i); break;
      case UOP_ARG_FLOAT: {
        char b[32];
        fprintf(f, " %s", uop_text_fmt_double(n->arg.f, b));
        break;
      }
      case UOP_ARG_STR: fprintf(f, " \"%s\"", n->arg.str); break;
      case UOP_ARG_VAR: fprintf(f, " %s[%lld,%lld]", n->arg.str, (long long)n->arg.i, (long long)n->arg.i2); break;
      case UOP_ARG_RANGE: fprintf(f, " r%lld:%s", (long long)n->arg.i, uop_axis_name((uop_axis)n->arg.i2)); break;
      default: break;
    }
    for (uint32_t i = 0; i < n->nsrc; i++) fprintf(f, "%s%%%zu", i ? " " : " <- ", (size_t)*base_ptrmap_find(&num, n->src[i]));
    fputc('\n', f);
  }
  fclose(f);
  base_ptrmap_free(&num);
  if (st) {
    free(buf);
    return st;
  }
  *out_text = buf;
  return HCQ_OK;
}

static void dump_pass(const cc_options *o, uop_ctx *ctx, const char *name, const uop *sink) {
  if (!o || !o->dump) return;
  char *text = NULL;
  hcq_status st = cc_kernel_print(sink, &text); /* the kernel grammar: a dump can be fed back in */
  if (st) {
    hcq_status_free(st);
    st = dump_graph(ctx, sink, &text); /* one node per line, for anything the printer refuses */
  }
  if (st) {
    o->dump(o->dump_user, name, hcq_status_message(st));
    hcq_status_free(st);
    return;
  }
  o->dump(o->dump_user, name, text);
  free(text);
}

/* ------------------------------------------------------------------------------------------------ program spec */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Identifiers a kernel symbol must not be in some target's source: C keywords (and GNU ones), PTX's predefined
 * WARP_SZ, main, and the renderers' own file-scope names (vector typedefs like float4/int8_u, the C renderer's
 * hcq_/HCQ_ helpers, shared-memory globals localN of PTX and LLVM). Names with two leading underscores or _X are
 * reserved in C. Locals and parameters cannot collide: they shadow or live in their own namespace (%, $). */
static bool reserved_symbol(const char *s) {
  static const char *const WORDS[] = {
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
      "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
      "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "asm",
      "typeof", "bool", "true", "false", "alignas", "alignof", "noreturn", "static_assert", "thread_local", "main",
      "WARP_SZ", "half"};
  for (size_t i = 0; i < sizeof WORDS / sizeof WORDS[0]; i++)
    if (strcmp(s, WORDS[i]) == 0) return true;
  if (s[0] == '_' && (s[1] == '_' || (s[1] >= 'A' && s[1] <= 'Z'))) return true;
  if (strncmp(s, "hcq_", 4) == 0 || strncmp(s, "HCQ_", 4) == 0) return true;
  static const char *const PREFIXES[] = {"local", "float", "double", "int", "char", "short", "long", "half", "bool"};
  for (size_t i = 0; i < sizeof PREFIXES / sizeof PREFIXES[0]; i++) { /* PREFIX DIGITS [_u] */
    size_t n = strlen(PREFIXES[i]), d = n;
    if (strncmp(s, PREFIXES[i], n) != 0) continue;
    while (s[d] >= '0' && s[d] <= '9') d++;
    if (d > n && (s[d] == 0 || strcmp(s + d, "_u") == 0)) return true;
  }
  return false;
}

/* The kernel's symbol from SINK's string arg, kept to [A-Za-z0-9_] (other bytes hex-escaped), prefixed with k_ when
 * it is reserved_symbol; "kernel" if none. The same symbol on every target. */
static const char *kernel_name(const uop *sink) {
  return sink->arg.kind == UOP_ARG_STR && sink->arg.str && sink->arg.str[0] ? sink->arg.str : "kernel";
}

static char *kernel_symbol(const uop *sink) {
  const char *src = kernel_name(sink);
  size_t n = strlen(src);
  char *out = malloc(n * 2 + 4);
  if (!out) return NULL;
  size_t j = 0;
  if (src[0] >= '0' && src[0] <= '9') out[j++] = '_';
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)src[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') {
      out[j++] = (char)c;
    } else {
      static const char hex[] = "0123456789abcdef";
      out[j++] = hex[c >> 4];
      out[j++] = hex[c & 15];
    }
  }
  out[j] = 0;
  if (reserved_symbol(out)) {
    memmove(out + 2, out, j + 1);
    memcpy(out, "k_", 2);
  }
  return out;
}

/* ------------------------------------------------------------------------------------------------ stable signature */

/* The kernel's argument list is every DEFINE_GLOBAL of its input, in slot order, so callers can pass buffers by
 * slot. A buffer whose loads the simplifier removed (x*0) would vanish from the graph: it is kept as an extra source
 * of the SINK (then linearized and rendered as a parameter, with neither read nor written set). */
static hcq_status keep_all_buffers(uop_ctx *ctx, const uop *kernel, const uop *sink, const uop **out_sink) {
  *out_sink = sink;
  const uop **in, **now;
  size_t nin, nnow;
  HCQ_TRY(uop_toposort(ctx, kernel, &in, &nin));
  const uop **keep = NULL;
  size_t nkeep = 0;
  for (size_t k = 0; k < nin; k++) nkeep += in[k]->op == UOP_DEFINE_GLOBAL;
  if (!nkeep) return HCQ_OK;
  HCQ_TRY(uop_toposort(ctx, sink, &now, &nnow));
  keep = malloc((sink->nsrc + nkeep) * sizeof *keep);
  if (!keep) return hcq_status_make(HCQ_CODE_NOMEM, "kernel signature: out of memory");
  size_t n = sink->nsrc;
  memcpy(keep, sink->src, n * sizeof *keep);
  for (size_t k = 0; k < nin; k++) {
    if (in[k]->op != UOP_DEFINE_GLOBAL) continue;
    bool present = false;
    for (size_t j = 0; j < nnow && !present; j++)
      present = now[j]->op == UOP_DEFINE_GLOBAL && now[j]->arg.i == in[k]->arg.i;
    for (size_t j = sink->nsrc; j < n && !present; j++) present = keep[j]->arg.i == in[k]->arg.i;
    if (!present) keep[n++] = in[k];
  }
  if (n != sink->nsrc) *out_sink = uop_replace_src(ctx, sink, keep, (uint32_t)n);
  free(keep);
  if (!*out_sink) return hcq_status_make(HCQ_CODE_NOMEM, "kernel signature: out of memory");
  return HCQ_OK;
}

/* ------------------------------------------------------------------------------------------------ compile */

void cc_program_free(cc_program *prog) {
  if (!prog) return;
  free(prog->name);
  free(prog->symbol);
  free(prog->source);
  free(prog->binary);
  free(prog->applied_opts);
  hcq_status_free(prog->desc_status);
  free(prog);
}

hcq_status cc_compile_source(uop_ctx *ctx, const uop *kernel, const cc_target *t, const cc_options *o,
                             cc_program **out_prog) {
  *out_prog = NULL;
  if (!ctx || !kernel || !t) return hcq_status_make(HCQ_CODE_INVALID, "cc_compile_source: NULL argument");
  if (kernel->op != UOP_SINK)
    return hcq_status_make(HCQ_CODE_INVALID, "cc_compile_source: the kernel root is %s, expected SINK",
                           uop_op_name((uop_op)kernel->op));
  double t0 = now_ms();
  cc_program *p = calloc(1, sizeof *p);
  if (!p) return hcq_status_make(HCQ_CODE_NOMEM, "cc_compile_source: out of memory");
  hcq_status st = HCQ_OK;
  cc_pass_ctx pc = {.ctx = ctx, .target = t, .opts = o};
  const uop *sink = kernel;
  dump_pass(o, ctx, "input", sink);
  for (size_t i = 0; i < sizeof PASSES / sizeof PASSES[0]; i++) {
    const uop *next = NULL;
    st = PASSES[i].fn(&pc, sink, &next);
    if (st) {
      st = hcq_status_annotate(st, "pass '%s'", PASSES[i].name);
      goto fail;
    }
    sink = next;
    dump_pass(o, ctx, PASSES[i].name, sink);
  }
  st = keep_all_buffers(ctx, kernel, sink, &sink);
  if (st) goto fail;
  p->name = strdup(kernel_name(kernel));
  p->symbol = kernel_symbol(kernel);
  if (!p->name || !p->symbol) {
    st = hcq_status_make(HCQ_CODE_NOMEM, "cc_compile_source: out of memory");
    goto fail;
  }
  st = cc_linearize(ctx, sink, &p->linear, &p->nlinear);
  if (st) goto fail;
  if (o && o->dump) {
    char *listing = NULL;
    st = cc_linear_listing(p->linear, p->nlinear, &listing);
    if (st) goto fail;
    o->dump(o->dump_user, "linearize", listing);
    free(listing);
  }
  st = cc_program_fill_desc(ctx, t, sink, p);
  if (st) goto fail;
  if (t->kind == CC_TARGET_PTX) st = cc_render_ptx(t, p->symbol, p->linear, p->nlinear, &p->source);
  else if (t->kind == CC_TARGET_AMDGPU || t->kind == CC_TARGET_LLVM_CPU)
    st = cc_render_llvm(t, p->symbol, p->linear, p->nlinear, &p->source);
  else st = cc_render_c(t, p->symbol, p->linear, p->nlinear, &p->source);
  if (st) goto fail;
  p->applied_opts = pc.applied;
  p->napplied_opts = pc.napplied;
  pc.applied = NULL;
  p->pipeline_ms = now_ms() - t0;
  *out_prog = p;
  return HCQ_OK;
fail:
  free(pc.applied);
  cc_program_free(p);
  return st;
}
