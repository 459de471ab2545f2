/* Every documented op compiles on every target, or is refused naming the target and the op.
 *
 * The op list is the kernel text's ALU word table (kt_alu_word over every uop op); each word must also be
 * documented in docs/FORMATS.md. For each op and each of the 13 scalar dtypes the parser accepts it for (the
 * documented typing), plus every cast, every same-size bitcast and every reduce, one store goes into a kernel per
 * dtype. Each kernel is compiled to source for every target; a failing kernel is split into its stores, and each
 * failing store must be UNSUPPORTED with a message naming the target and the op. Then the accepted stores of all
 * dtypes are built into one kernel per target and compiled to a binary where the toolchain is installed (c, llvm-cpu,
 * ptxas for ptx:*, ld.lld-19 for amdgpu:gfx1100 and gfx90a). */
#include <ctype.h>

#include "compiler/cc_test_util.h"
#include "compiler/kernel_text_internal.h"
#include "hcq/signal.h"
#include "base/testing.h"

enum { NDT = 13, LEN = 16, MAXE = 1024 };

static const uop_scalar DTS[NDT] = {UOP_BOOL,   UOP_INT8,   UOP_INT16,   UOP_INT32,   UOP_INT64,
                                    UOP_UINT8,  UOP_UINT16, UOP_UINT32,  UOP_UINT64,  UOP_FLOAT16,
                                    UOP_BFLOAT16, UOP_FLOAT32, UOP_FLOAT64};
static const char *TARGETS[] = {"c",        "c:x86_64",       "c:aarch64",    "c:armhf",      "llvm-cpu",      "ptx:sm_80",
                                "ptx:sm_90", "amdgpu:gfx1100", "amdgpu:gfx90a", "amdgpu:gfx942", "amdgpu:gfx1201"};
enum { NT = sizeof TARGETS / sizeof TARGETS[0] };

typedef struct expr {
  char text[256];
  int src, out; /* dtype indices: operands, result */
  const char *op; /* upper-case op name a refusal must mention */
} expr;

static expr ex[MAXE];
static int nex;

static const char *dn(int d) { return uop_dt_name(uop_dt(DTS[d])); }

/* Kernel text with one store per selected expression: operand buffers a/b/c per dtype (slots 3d+1..3d+3), a
 * bool buffer for WHERE, outputs o per dtype (slot 40 + d), stores at distinct offsets, one range each. */
static char *kernel(const bool *sel) {
  char *t = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&t, &len);
  int nstore[NDT] = {0};
  for (int i = 0; i < nex; i++) nstore[ex[i].out] += sel[i];
  fprintf(f, "(kernel ops\n");
  for (int d = 0; d < NDT; d++) {
    fprintf(f, " (let a%d (buf %d %s %d)) (let b%d (buf %d %s %d)) (let c%d (buf %d %s %d))\n", d, 3 * d + 1, dn(d), LEN,
            d, 3 * d + 2, dn(d), LEN, d, 3 * d + 3, dn(d), LEN);
    if (nstore[d]) fprintf(f, " (let o%d (buf %d %s %d))\n", d, 40 + d, dn(d), LEN * nstore[d]);
  }
  fprintf(f, " (sink");
  int off[NDT] = {0}, rid = 0;
  for (int i = 0; i < nex; i++) {
    if (!sel[i]) continue;
    fprintf(f, "\n  (store (index o%d (+ (range %d %d) %d)) ", ex[i].out, rid, LEN, off[ex[i].out]);
    /* the expression uses range R (and reduce range RR); substitute this store's ids */
    for (const char *p = ex[i].text; *p; p++) {
      if (p[0] == '@' && p[1] == 'R' && p[2] == 'R') fprintf(f, "(range %d %d reduce)", 5000 + rid, LEN), p += 2;
      else if (p[0] == '@' && p[1] == 'R') fprintf(f, "(range %d %d)", rid, LEN), p += 1;
      else fputc(*p, f);
    }
    fprintf(f, " (range %d %d))", rid, LEN);
    off[ex[i].out] += LEN;
    rid++;
  }
  fprintf(f, "))\n");
  fclose(f);
  return t;
}

static bool parses(const bool *sel) {
  uop_ctx *ctx = NULL;
  if (uop_ctx_create(&ctx)) return false;
  char *t = kernel(sel);
  const uop *sink = NULL;
  hcq_status st = cc_kernel_parse(ctx, t, strlen(t), "<ops>", &sink);
  bool ok = !st;
  hcq_status_free(st);
  free(t);
  uop_ctx_destroy(ctx);
  return ok;
}

/* Add the expression if the documented typing accepts it (tried alone). */
static void try_add(const char *text, int src, int out, const char *op) {
  if (nex == MAXE) return;
  expr *e = &ex[nex];
  snprintf(e->text, sizeof e->text, "%s", text);
  e->src = src, e->out = out, e->op = op;
  static bool one[MAXE];
  memset(one, 0, sizeof one);
  one[nex] = true;
  nex++;
  if (!parses(one)) nex--;
}

static void build_exprs(void) {
  for (int d = 0; d < NDT; d++) {
    char a[40], b[40], c[40], t[256];
    snprintf(a, sizeof a, "(load (index a%d @R))", d);
    snprintf(b, sizeof b, "(load (index b%d @R))", d);
    snprintf(c, sizeof c, "(load (index c%d @R))", d);
    for (int op = 0; op < UOP_OP_COUNT; op++) {
      const char *w = kt_alu_word((uop_op)op);
      if (!w) continue;
      int ar = uop_op_alu_arity((uop_op)op);
      if (op == UOP_WHERE) snprintf(t, sizeof t, "(where (load (index a0 @R)) %s %s)", a, b);
      else if (ar == 1) snprintf(t, sizeof t, "(%s %s)", w, a);
      else if (ar == 2) snprintf(t, sizeof t, "(%s %s %s)", w, a, b);
      else snprintf(t, sizeof t, "(%s %s %s %s)", w, a, b, c);
      int before = nex;
      try_add(t, d, d, uop_op_name((uop_op)op));
      if (nex == before) try_add(t, d, 0, uop_op_name((uop_op)op)); /* comparisons give bool */
    }
    for (int to = 0; to < NDT; to++) {
      snprintf(t, sizeof t, "(cast %s %s)", dn(to), a);
      try_add(t, d, to, "CAST");
      if (uop_dt_itemsize_B(uop_dt(DTS[to])) == uop_dt_itemsize_B(uop_dt(DTS[d])) && to != d && d && to) {
        snprintf(t, sizeof t, "(bitcast %s %s)", dn(to), a);
        try_add(t, d, to, "BITCAST");
      }
    }
    const char *red[] = {"add", "mul", "max"};
    for (int k = 0; k < 3; k++) {
      snprintf(t, sizeof t, "(reduce %s (load (index a%d @RR)) @RR)", red[k], d);
      try_add(t, d, d, "REDUCE");
    }
  }
}

static bool toolchain_for(const char *target) {
  if (strncmp(target, "c:", 2) == 0) return false;       /* cross C: compile to source only */
  if (getenv("HCQ_QEMU_USER") && strcmp(target, "c") != 0) return false; /* cross runs: the host run covers them */
  /* llc takes seconds per arch on these kernels: one RDNA (gfx1100) and one CDNA (gfx90a) arch build binaries, the
   * other two (same renderer, same backend families) stop at the source */
  if (strcmp(target, "amdgpu:gfx942") == 0 || strcmp(target, "amdgpu:gfx1201") == 0) return false;
  if (strncmp(target, "ptx", 3) == 0) return tu_have(getenv("HCQ_PTXAS") ? getenv("HCQ_PTXAS") : "/usr/local/cuda/bin/ptxas");
  if (strncmp(target, "amdgpu", 6) == 0) return tu_have("clang-19") && tu_have("ld.lld-19");
  if (strcmp(target, "llvm-cpu") == 0) return tu_have("clang-19");
  return true;
}

static hcq_status compile(const char *target, const bool *sel, bool binary) {
  cc_target t;
  HCQ_TRY(cc_target_get(target, 2, &t));
  uop_ctx *ctx = NULL;
  HCQ_TRY(uop_ctx_create(&ctx));
  char *text = kernel(sel);
  const uop *sink = NULL;
  cc_program *p = NULL;
  cc_options o = {0};
  hcq_status st = cc_kernel_parse(ctx, text, strlen(text), "<ops>", &sink);
  if (!st) st = cc_compile_source(ctx, sink, &t, &o, &p);
  if (!st && binary) st = cc_compile_binary(&t, p);
  cc_program_free(p);
  free(text);
  uop_ctx_destroy(ctx);
  return st;
}

static char *read_doc(void) {
  FILE *f = fopen("docs/FORMATS.md", "r");
  if (!f) return NULL;
  char *buf = calloc(1, 1 << 20);
  size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
  (void)n;
  fclose(f);
  return buf;
}

/* The word appears in the forms table of docs/FORMATS.md as a token (inside backticks, | escaped as \|). */
static bool documented(const char *doc, const char *w) {
  size_t wl = strlen(w);
  for (const char *p = doc; (p = strstr(p, w)); p++) {
    char before = p > doc ? p[-1] : ' ', after = p[wl];
    bool lb = before == ' ' || before == '(' || before == '`', rb = after == ' ' || after == '`' || after == ')';
    if (strcmp(w, "|") == 0) lb = before == '\\' && (p[-2] == ' ');
    if (lb && rb && !isalnum((unsigned char)after)) return true;
  }
  return false;
}

int main(void) {
  char *doc = read_doc();
  if (!doc) TEST_SKIP("ops_targets_test: run from the repository root (docs/FORMATS.md)");
  int nwords = 0;
  for (int op = 0; op < UOP_OP_COUNT; op++) {
    const char *w = kt_alu_word((uop_op)op);
    if (!w) continue;
    nwords++;
    if (!documented(doc, w)) fprintf(stderr, "  op word '%s' (%s) is not in docs/FORMATS.md\n", w, uop_op_name((uop_op)op));
    CHECK(documented(doc, w));
  }
  free(doc);
  build_exprs();
  printf("ops_targets: %d op words, %d (op, dtype) stores\n", nwords, nex);
  static bool all[MAXE], sel[MAXE], accepted[MAXE];
  for (int i = 0; i < nex; i++) all[i] = true;
  CHECK(parses(all));
  int refused = 0;
  for (int ti = 0; ti < NT; ti++) {
    const char *tg = TARGETS[ti];
    for (int i = 0; i < nex; i++) accepted[i] = true;
    double t0 = (double)hcq_now_ns() / 1e9;
    for (int d = 0; d < NDT; d++) {
      for (int i = 0; i < nex; i++) sel[i] = ex[i].src == d;
      hcq_status st = compile(tg, sel, false);
      if (!st) continue;
      hcq_status_free(st);
      for (int i = 0; i < nex; i++) { /* split: which store, and is it a clean refusal? */
        if (ex[i].src != d) continue;
        static bool one[MAXE];
        memset(one, 0, sizeof one);
        one[i] = true;
        hcq_status s1 = compile(tg, one, false);
        if (!s1) continue;
        const char *m = hcq_status_message(s1);
        bool clean = hcq_status_code(s1) == HCQ_CODE_UNSUPPORTED && strstr(m, tg) && strstr(m, ex[i].op);
        if (!clean) fprintf(stderr, "  %s: %s on %s: %s\n", tg, ex[i].text, dn(d), m);
        CHECK(clean);
        accepted[i] = false;
        refused++;
        hcq_status_free(s1);
      }
    }
    double t1 = (double)hcq_now_ns() / 1e9;
    if (!toolchain_for(tg)) {
      printf("  %s: sources %.2f s\n", tg, t1 - t0);
      continue;
    }
    hcq_status st = HCQ_OK;
    if (strncmp(tg, "amdgpu", 6) != 0) st = compile(tg, accepted, true);
    for (int d = 0; d < NDT && !st && strncmp(tg, "amdgpu", 6) == 0; d++) { /* llc: slow on one huge function */
      for (int i = 0; i < nex; i++) sel[i] = accepted[i] && ex[i].src == d;
      st = compile(tg, sel, true);
    }
    printf("  %s: sources %.2f s, binary %.2f s\n", tg, t1 - t0, (double)hcq_now_ns() / 1e9 - t1);
    if (st) fprintf(stderr, "  %s: the kernel of every accepted op does not build: %s\n", tg, hcq_status_message(st));
    CHECK(!st);
    hcq_status_free(st);
  }
  printf("ops_targets: %d targets, %d refusals naming the target\n", NT, refused);
  return testing_summary("ops_targets_test");
}
