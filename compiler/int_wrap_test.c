/* Kernel integers wrap on every target, as the reference interpreter says: for each signed and unsigned integer
 * dtype, expressions that overflow (x + x, x * x, x - big, an overflow check the C compiler could fold away when
 * signed overflow is undefined, a max over a square, shifts by any amount, -MIN) run natively on the c and
 * llvm-cpu targets equal to the interpreter, with
 * inputs at the edges of the dtype (MIN, MAX, 0, +-1, any bit pattern). */
#include "compiler/opt_test_util.h"
#include "base/testing.h"

static void edge_fill(cc_kbuf *bufs, size_t n, uint64_t seed) {
  uint64_t r = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < n; i++) {
    uop_dtype dt = bufs[i].dtype;
    int bytes = uop_dt_itemsize_B(uop_dt_base_of(dt));
    int64_t lo = uop_dt_min(uop_dt_base_of(dt)), hi = uop_dt_max(uop_dt_base_of(dt));
    for (int64_t e = 0; e < bufs[i].nelems; e++) {
      r ^= r << 13;
      r ^= r >> 7;
      r ^= r << 17;
      int64_t edge[] = {lo, hi, 0, 1, -1, lo + 1, hi - 1, (int64_t)r};
      int64_t v = edge[e % 8];
      memcpy((char *)bufs[i].data + e * bytes, &v, (size_t)bytes); /* little-endian: the low bytes */
    }
  }
}

/* A uint64 shift by a loaded amount (full range: its bounds' vmax is -1, UINT64_MAX's bit pattern) is guarded on
 * c and llvm-cpu: unguarded, 1 << 64 is C UB and LLVM poison, which can give the right answer by luck. */
static void check_u64_shift_guarded(const cc_target *t, const char *guard) {
  static const char *const text = "(kernel w (let o (buf 0 uint64 64)) (let a (buf 1 uint64 64)) (let r (range 0 64))"
                                  " (sink (store (index o r) (<< (const 1 uint64) (load (index a r))) r)))";
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *k = NULL;
  cc_program *p = NULL;
  CHECK_OK(cc_kernel_parse(ctx, text, strlen(text), "w", &k));
  if (k) CHECK_OK(cc_compile_source(ctx, k, t, &(cc_options){.noopt = true}, &p));
  if (p && !strstr(p->source, guard)) fprintf(stderr, "%s: no \"%s\" in\n%s\n", t->name, guard, p->source);
  CHECK(p && strstr(p->source, guard));
  cc_program_free(p);
  uop_ctx_destroy(ctx);
}

int main(void) {
  char dir[] = "/tmp/hcq-intwrap-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  if (!tu_have(cc_toolchain_cc())) {
    printf("int_wrap: SKIPPED (no C compiler)\n");
    return 77;
  }
  otu_refill = edge_fill;
  static const char *const DTS[] = {"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"};
  static const char *const EXPRS[] = {
      "(+ x x)", "(* x x)", "(- x (const 100 DT))", "(max (const 0 DT) (* (+ x x) (+ x x)))",
      /* x + 100 < x holds only when the addition wrapped */
      "(where (< (+ x (const 100 DT)) x) (const 1 DT) (const 0 DT))",
      "(where (< (* x (const 3 DT)) (const 0 DT)) (const 1 DT) (const 2 DT))",
      /* shifts by any amount (negative, the width or more: 0, or the sign for >> of a signed value), of negative
       * values, and the negation of MIN */
      "(<< x x)", "(>> x x)", "(<< (const 1 DT) x)", "(<< x (const 3 DT))", "(neg x)",
      /* MIN / -1 wraps (x86 would trap), MIN % -1 is 0 */
      "(// x (const -1 DT))", "(% x (const -1 DT))"};
  static const int FIRST_SIGNED_ONLY = 11; /* the -1 divisors: unsigned dtypes have no -1 */
  cc_target c, llvm;
  CHECK_OK(cc_target_get("c", 1, &c));
  CHECK_OK(cc_target_get("llvm-cpu", 1, &llvm));
  bool have_llvm = tu_have("clang-19");
  if (!have_llvm) printf("*** SKIPPED: llvm-cpu part (clang-19 not found: Debian package clang-19) ***\n");
  check_u64_shift_guarded(&c, ">= 64)");
  check_u64_shift_guarded(&llvm, "icmp uge i64");
  cc_options noopt = {.noopt = true};
  int runs = 0;
  for (size_t d = 0; d < sizeof DTS / sizeof DTS[0]; d++)
    for (size_t e = 0; e < sizeof EXPRS / sizeof EXPRS[0]; e++) {
      if ((int)e >= FIRST_SIGNED_ONLY && DTS[d][0] == 'u') continue;
      char expr[300], text[600];
      size_t j = 0;
      for (const char *p = EXPRS[e]; *p && j < sizeof expr - 16; p++) {
        if (strncmp(p, "DT", 2) == 0) {
          j += (size_t)snprintf(expr + j, sizeof expr - j, "%s", DTS[d]);
          p++;
        } else {
          expr[j++] = *p;
        }
      }
      expr[j] = 0;
      snprintf(text, sizeof text, "(kernel w (let o (buf 0 %s 64)) (let a (buf 1 %s 64)) (let r (range 0 64))\n"
               " (let x (load (index a r))) (sink (store (index o r) %s r)))", DTS[d], DTS[d], expr);
      uop_ctx *ctx = NULL;
      CHECK_OK(uop_ctx_create(&ctx));
      const uop *k = NULL;
      CHECK_OK(cc_kernel_parse(ctx, text, strlen(text), "w", &k));
      if (k) { /* the heuristic's opts and --noopt in turn */
        size_t bad = 0;
        CHECK_OK(otu_native_same(ctx, k, &c, (d + e) % 2 ? &noopt : NULL, NULL, 0, e, &bad, NULL));
        if (bad) fprintf(stderr, "%s %s: %zu elements differ from the interpreter\n", DTS[d], expr, bad);
        CHECK_EQ_INT(bad, 0);
        runs++;
        if (have_llvm) {
          CHECK_OK(otu_native_same(ctx, k, &llvm, &noopt, NULL, 0, e, &bad, NULL));
          if (bad) fprintf(stderr, "llvm-cpu %s %s: %zu elements differ from the interpreter\n", DTS[d], expr, bad);
          CHECK_EQ_INT(bad, 0);
          runs++;
        }
      }
      uop_ctx_destroy(ctx);
    }
  printf("int_wrap: %d native runs\n", runs);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
  return testing_summary("int_wrap");
}
