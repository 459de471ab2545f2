/* Values shared by loop nests: stores that share a range, one of them also inside other loops, use one
 * sub-expression (a load, integer and float ALU, a value of two ranges). The linearizer must emit it once per nest
 * (it used to place it in one nest and refuse the kernel: "computed in one loop nest is used by a ... outside it").
 * Every shape runs on c and llvm-cpu, without and with the heuristic opts, against the reference interpreter. */
#include "compiler/cc_test_util.h"
#include "compiler/opt_test_util.h"
#include "base/testing.h"

static const char *SHAPES[] = {
    /* the report: an OR of a load used by // in a 2-deep nest and in a 1-deep one */
    "(kernel s0 (let out (buf 0 int32 80)) (let a (buf 1 int32 4)) (let b (buf 2 int32 16))\n"
    "  (let r0 (range 0 4 loop)) (let r1 (range 1 16 loop)) (let Y (| (load (index b r1)) (const 1 int32)))\n"
    "  (sink (store (index out (+ (* r0 16) r1)) (// (load (index a r0)) Y) r0 r1)\n"
    "        (store (index out (+ r1 64)) (// (const 100 int32) Y) r1)))",
    /* three nests of the inner range: under r0, under r2, alone */
    "(kernel s1 (let out (buf 0 int32 48)) (let a (buf 1 int32 8)) (let b (buf 2 int32 3))\n"
    "  (let r0 (range 0 2 loop)) (let r1 (range 1 8 loop)) (let r2 (range 2 3 loop))\n"
    "  (let Y (* (load (index a r1)) (const 3 int32)))\n"
    "  (sink (store (index out (+ (* r0 8) r1)) (+ Y (const 1 int32)) r0 r1)\n"
    "        (store (index out (+ (+ (* r2 8) r1) 16)) (- Y (load (index b r2))) r2 r1)\n"
    "        (store (index out (+ r1 40)) Y r1)))",
    /* float ALU of a load; the 1-deep store first */
    "(kernel s2 (let out (buf 0 float32 40)) (let x (buf 1 float32 8)) (let w (buf 2 float32 4))\n"
    "  (let r0 (range 0 4 loop)) (let r1 (range 1 8 loop))\n"
    "  (let Y (sqrt (+ (* (load (index x r1)) (load (index x r1))) (const 0.5 float32))))\n"
    "  (sink (store (index out (+ r1 32)) (* Y (const 2 float32)) r1)\n"
    "        (store (index out (+ (* r0 8) r1)) (* (load (index w r0)) Y) r0 r1)))",
    /* a value of two ranges, used in a 2-deep and a 3-deep nest (r2 outermost) */
    "(kernel s3 (let out (buf 0 int32 72)) (let a (buf 1 int32 24))\n"
    "  (let r0 (range 0 3 loop)) (let r1 (range 1 8 loop)) (let r2 (range 2 2 loop))\n"
    "  (let Y (^ (load (index a (+ (* r0 8) r1))) (const 5 int32)))\n"
    "  (sink (store (index out (+ (* r0 8) r1)) Y r0 r1)\n"
    "        (store (index out (+ (+ (+ (* r2 24) (* r0 8)) r1) 24)) (+ Y Y) r2 r0 r1)))",
    /* shared chain: Z uses Y, both used in two nests, and a load shared by all three stores */
    "(kernel s4 (let out (buf 0 int32 40)) (let a (buf 1 int32 8)) (let c (buf 2 int32 2))\n"
    "  (let r0 (range 0 2 loop)) (let r1 (range 1 8 loop)) (let r3 (range 3 2 loop))\n"
    "  (let Y (load (index a r1))) (let Z (max Y (const 7 int32)))\n"
    "  (sink (store (index out (+ (* r0 8) r1)) (* Z (load (index c r0))) r0 r1)\n"
    "        (store (index out (+ (+ (* r3 8) r1) 16)) (+ Z Y) r3 r1)\n"
    "        (store (index out (+ r1 32)) Y r1)))",
};

static void run(const char *text, const char *target, bool noopt) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  cc_target t;
  CHECK_OK(cc_target_get(target, 4, &t));
  size_t bad = SIZE_MAX;
  hcq_status st = otu_text_native_same(ctx, text, &t, &(cc_options){.noopt = noopt}, NULL, 0, 3, &bad, NULL);
  if (st) fprintf(stderr, "%s %s: %s\n%s\n", target, noopt ? "noopt" : "opts", hcq_status_message(st), text);
  else if (bad) fprintf(stderr, "%s %s: %zu elements differ from the interpreter\n%s\n", target, noopt ? "noopt" : "opts", bad, text);
  CHECK(!st && bad == 0);
  hcq_status_free(st);
  uop_ctx_destroy(ctx);
}

int main(void) {
  char dir[] = "/tmp/hcq-linearize-shared-test-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  if (!tu_have("clang-19")) {
    printf("*** SKIPPED: shared values across loop nests: clang-19 not found (Debian package clang-19) ***\n");
  } else {
    const char *targets[] = {"c", "llvm-cpu"};
    for (size_t s = 0; s < sizeof SHAPES / sizeof *SHAPES; s++)
      for (size_t t = 0; t < 2; t++)
        for (int noopt = 0; noopt < 2; noopt++) run(SHAPES[s], targets[t], noopt);
  }
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
  return testing_summary("linearize_shared");
}
