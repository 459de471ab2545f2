/* The PTX interpreter's execution model and its reports, on hand-written kernels with the expected results
 * computed here in C: divergent branches and loops that reconverge, barriers over several warps with shared memory
 * (vector ld/st), special registers over a 3-D grid, parameters at caller-given offsets; and every failure named:
 * out-of-bounds and misaligned global accesses (an MMU fault naming line, text, thread, block, address), shared
 * memory outside its window, a divergent barrier, threads exiting while others wait, a hang (watchdog), bad
 * launches, parse errors naming the line and the statement. */
#include "emulator_tests/ptx_test_kernels.h"
#include "emulator_tests/ptx_test_util.h"
#include "base/testing.h"

#define HEAD ".version 7.8\n.target sm_90\n.address_size 64\n"

typedef struct run {
  uint32_t grid[3], block[3];
  uint64_t budget;
  const uint32_t *offsets;
  size_t noffsets;
  uint32_t shared_B;
} run;

/* Run src's entry with two buffers (in, out) at made-up addresses; the status is the caller's. */
static hcq_status launch(const char *src, const run *r, void *in, size_t in_B, void *out, size_t out_B) {
  ptx_module *m = NULL;
  HCQ_TRY(ptx_module_parse(src, strlen(src), &m));
  ptu_mem mem = {.n = 0};
  uint64_t va[4] = {ptu_add(&mem, in, in_B), ptu_add(&mem, out, out_B), 0, 0};
  uint8_t params[64] = {0}; /* the launch says 32: a parameter at 28 is outside it */
  if (r->offsets) {
    memcpy(params + r->offsets[0], &va[0], 8);
    memcpy(params + r->offsets[1], &va[1], 8);
  } else {
    memcpy(params, va, 16);
  }
  ptx_launch l = {.params = params, .params_size_B = r->offsets ? 32 : 16, .param_offsets = r->offsets,
                  .nparam_offsets = r->noffsets, .shared_size_B = r->shared_B, .mem = &(ptx_mem_ops){&mem, ptu_read, ptu_write},
                  .max_warp_instructions = r->budget};
  memcpy(l.grid, r->grid, sizeof l.grid);
  memcpy(l.block, r->block, sizeof l.block);
  hcq_status st = ptx_launch_run(m, &l, NULL);
  ptx_module_free(m);
  return st;
}

static void expect_error(hcq_status st, const char *const *needles, const char *what) {
  CHECK(st != HCQ_OK);
  const char *msg = hcq_status_message(st);
  for (const char *const *n = needles; *n; n++)
    if (!strstr(msg, *n)) {
      fprintf(stderr, "%s: message lacks '%s': %s\n", what, *n, msg);
      CHECK(!"message");
    }
  hcq_status_free(st);
}

/* ------------------------------------------------------------------------------------------------ model */

/* Thread t of a block of 96 (3 warps): odd and even threads take different paths with loops of t-dependent trip
 * counts, store into shared memory as a v2, wait at a barrier, read their neighbour's pair. */
static const char *const DIVERGE = HEAD
    ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
    "\t.reg .b32 %r<12>;\n\t.reg .b64 %rd<8>;\n\t.reg .pred %p<4>;\n"
    "\t.shared .align 8 .b32 sh[192];\n"
    "\tld.param.u64 %rd1, [pout];\n"
    "\tmov.u32 %r0, %tid.x;\n\tmov.u32 %r1, 0;\n\tmov.u32 %r2, 0;\n"
    "\tand.b32 %r3, %r0, 1;\n\tsetp.eq.u32 %p1, %r3, 0;\n"
    "\t@%p1 bra EVEN;\n"
    "ODD:\n\tadd.s32 %r1, %r1, %r2;\n\tadd.s32 %r2, %r2, 1;\n\tsetp.le.u32 %p2, %r2, %r0;\n\t@%p2 bra ODD;\n"
    "\tbra JOIN;\n"
    "EVEN:\n\tmul.lo.s32 %r1, %r0, 3;\n\tsetp.lt.u32 %p3, %r0, 40;\n\t@!%p3 bra JOIN;\n\tadd.s32 %r1, %r1, 7;\n"
    "JOIN:\n"
    "\tmov.u64 %rd2, sh;\n\tmul.wide.u32 %rd3, %r0, 8;\n\tadd.s64 %rd4, %rd2, %rd3;\n"
    "\tst.shared.v2.u32 [%rd4], {%r0, %r1};\n"
    "\tbar.sync 0;\n"
    "\tadd.s32 %r4, %r0, 1;\n\trem.u32 %r4, %r4, 96;\n\tmul.wide.u32 %rd3, %r4, 8;\n\tadd.s64 %rd4, %rd2, %rd3;\n"
    "\tld.shared.v2.u32 {%r5, %r6}, [%rd4];\n"
    "\tmov.u32 %r7, %ctaid.x;\n\tmad.lo.s32 %r8, %r7, 96, %r0;\n\tmul.wide.u32 %rd3, %r8, 8;\n"
    "\tcvta.to.global.u64 %rd1, %rd1;\n\tadd.s64 %rd5, %rd1, %rd3;\n\tst.global.v2.u32 [%rd5], {%r5, %r6};\n"
    "\tret;\n}\n";

static uint32_t diverge_value(uint32_t t) {
  if (t & 1) {
    uint32_t s = 0;
    for (uint32_t i = 0; i <= t; i++) s += i;
    return s;
  }
  return t * 3 + (t < 40 ? 7 : 0);
}

static void test_divergence_and_barrier(void) {
  uint32_t out[2 * 96 * 2] = {0}, in[4] = {0};
  CHECK_OK(launch(DIVERGE, &(run){.grid = {2, 1, 1}, .block = {96, 1, 1}}, in, sizeof in, out, sizeof out));
  int bad = 0;
  for (uint32_t b = 0; b < 2; b++)
    for (uint32_t t = 0; t < 96; t++) {
      uint32_t nb = (t + 1) % 96;
      bad += out[2 * (b * 96 + t)] != nb || out[2 * (b * 96 + t) + 1] != diverge_value(nb);
    }
  CHECK_EQ_INT(bad, 0);
}

/* %tid/%ntid/%ctaid/%nctaid/%laneid/%warpid over a 3-D launch. */
static const char *const SPECIALS = HEAD
    ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
    "\t.reg .b32 %r<16>;\n\t.reg .b64 %rd<8>;\n"
    "\tld.param.u64 %rd1, [pout];\n"
    "\tmov.u32 %r0, %tid.x;\n\tmov.u32 %r1, %tid.y;\n\tmov.u32 %r2, %tid.z;\n"
    "\tmov.u32 %r3, %ntid.x;\n\tmov.u32 %r4, %ntid.y;\n\tmov.u32 %r5, %ctaid.x;\n\tmov.u32 %r6, %ctaid.y;\n"
    "\tmov.u32 %r7, %ctaid.z;\n\tmov.u32 %r8, %nctaid.x;\n\tmov.u32 %r9, %nctaid.y;\n"
    "\tmad.lo.s32 %r10, %r2, %r4, %r1;\n\tmad.lo.s32 %r10, %r10, %r3, %r0;\n" /* linear tid */
    "\tmad.lo.s32 %r11, %r7, %r9, %r6;\n\tmad.lo.s32 %r11, %r11, %r8, %r5;\n"  /* linear block */
    "\tmov.u32 %r12, %ntid.z;\n\tmul.lo.s32 %r12, %r12, %r4;\n\tmul.lo.s32 %r12, %r12, %r3;\n"
    "\tmad.lo.s32 %r13, %r11, %r12, %r10;\n\tmul.wide.u32 %rd2, %r13, 8;\n\tadd.s64 %rd3, %rd1, %rd2;\n"
    "\tmov.u32 %r14, %laneid;\n\tmov.u32 %r15, %warpid;\n"
    "\tst.global.v2.u32 [%rd3], {%r14, %r15};\n"
    "\tret;\n}\n";

static void test_specials(void) {
  enum { BX = 5, BY = 3, BZ = 4, GX = 2, GY = 3, GZ = 2, N = BX * BY * BZ * GX * GY * GZ };
  uint32_t out[2 * N], in[2];
  memset(out, 0xee, sizeof out);
  CHECK_OK(launch(SPECIALS, &(run){.grid = {GX, GY, GZ}, .block = {BX, BY, BZ}}, in, sizeof in, out, sizeof out));
  int bad = 0;
  for (int i = 0; i < N; i++) {
    int t = i % (BX * BY * BZ);
    bad += out[2 * i] != (uint32_t)(t % 32) || out[2 * i + 1] != (uint32_t)(t / 32);
  }
  CHECK_EQ_INT(bad, 0);
}

/* Parameters at the offsets the caller gives (constant bank 0 as the cubin lays it out), not the natural ones. */
static const char *const COPY = HEAD
    ".visible .entry k(.param .u64 pin, .param .u64 pout)\n.maxntid 64, 1, 1\n{\n"
    "\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<8>;\n"
    "\tld.param.u64 %rd0, [pin];\n\tld.param.u64 %rd1, [pout];\n\tmov.u32 %r0, %tid.x;\n"
    "\tmul.wide.u32 %rd2, %r0, 4;\n\tadd.s64 %rd3, %rd0, %rd2;\n\tadd.s64 %rd4, %rd1, %rd2;\n"
    "\tld.global.u32 %r1, [%rd3];\n\tst.global.u32 [%rd4], %r1;\n\tret;\n}\n";

static void test_params_and_launch_checks(void) {
  uint32_t in[64], out[64] = {0};
  for (int i = 0; i < 64; i++) in[i] = (uint32_t)i * 7u + 1u;
  static const uint32_t OFFS[2] = {16, 0};
  CHECK_OK(launch(COPY, &(run){.grid = {1, 1, 1}, .block = {64, 1, 1}, .offsets = OFFS, .noffsets = 2}, in,
                  sizeof in, out, sizeof out));
  CHECK(!memcmp(in, out, sizeof in));
  static const uint32_t BAD_OFFS[2] = {28, 0};
  expect_error(launch(COPY, &(run){.grid = {1, 1, 1}, .block = {64, 1, 1}, .offsets = BAD_OFFS, .noffsets = 2}, in,
                      sizeof in, out, sizeof out),
               (const char *const[]){"parameter pin", "offset 28", NULL}, "param outside");
  expect_error(launch(COPY, &(run){.grid = {1, 1, 1}, .block = {128, 1, 1}}, in, sizeof in, out, sizeof out),
               (const char *const[]){".maxntid 64", NULL}, "maxntid");
  expect_error(launch(COPY, &(run){.grid = {1, 1, 1}, .block = {2048, 1, 1}}, in, sizeof in, out, sizeof out),
               (const char *const[]){"1024 threads", NULL}, "block too large");
  expect_error(launch(COPY, &(run){.grid = {0, 1, 1}, .block = {1, 1, 1}}, in, sizeof in, out, sizeof out),
               (const char *const[]){"empty grid", NULL}, "empty grid");
  char req[1024];
  snprintf(req, sizeof req, "%s", COPY);
  memcpy(strstr(req, ".maxntid"), ".reqntid", 8);
  expect_error(launch(req, &(run){.grid = {1, 1, 1}, .block = {32, 1, 1}}, in, sizeof in, out, sizeof out),
               (const char *const[]){"is not its .reqntid 64, 1, 1", NULL}, "reqntid");
  CHECK_OK(launch(req, &(run){.grid = {1, 1, 1}, .block = {64, 1, 1}}, in, sizeof in, out, sizeof out));
  ptx_module *m = NULL;
  CHECK_OK(ptx_module_parse(COPY, strlen(COPY), &m));
  const ptx_entry_info *e = NULL;
  expect_error(ptx_module_entry(m, "nope", &e), (const char *const[]){"no entry 'nope'", "has: k", NULL}, "entry");
  ptx_module_free(m);
}

/* ------------------------------------------------------------------------------------------------ faults */

static void test_faults(void) {
  uint32_t in[16] = {0}, out[64] = {0};
  /* a global read past the end of in (16 words for 64 threads): thread 16 is the first to fault */
  expect_error(launch(COPY, &(run){.grid = {1, 1, 1}, .block = {64, 1, 1}}, in, sizeof in, out, sizeof out),
               (const char *const[]){"MMU fault", "global read of 4 bytes at 0x7f0000000040", "line 15",
                                     "`ld.global.u32 %r1, [%rd3]`", "thread (16,0,0) of block (0,0,0)",
                                     "0 bytes past the end of buffer 0", NULL},
               "global oob");
  /* misaligned: a u32 load at in + 2 */
  const char *mis = HEAD
      ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"
      "\tld.param.u64 %rd0, [pin];\n\tld.global.u32 %r1, [%rd0+2];\n\tret;\n}\n";
  expect_error(launch(mis, &(run){.grid = {1, 1, 1}, .block = {1, 1, 1}}, in, sizeof in, out, sizeof out),
               (const char *const[]){"misaligned global read of 4 bytes", "line 9", NULL}, "misaligned");
  /* shared memory outside its window */
  const char *sh2 = HEAD
      ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"
      "\t.shared .align 4 .b8 buf[64];\n\tmov.u32 %r0, %tid.x;\n\tmul.wide.u32 %rd0, %r0, 4;\n"
      "\tmov.u64 %rd1, buf;\n\tadd.s64 %rd2, %rd1, %rd0;\n\tst.shared.u32 [%rd2], %r0;\n\tret;\n}\n";
  expect_error(launch(sh2, &(run){.grid = {1, 1, 1}, .block = {32, 1, 1}}, in, sizeof in, out, sizeof out),
               (const char *const[]){"shared write of 4 bytes at 0x40 is outside the shared window of 64 bytes",
                                     "thread (16,0,0)", NULL},
               "shared oob");
  CHECK_OK(launch(sh2, &(run){.grid = {1, 1, 1}, .block = {16, 1, 1}}, in, sizeof in, out, sizeof out));
  CHECK_OK(launch(sh2, &(run){.grid = {1, 1, 1}, .block = {32, 1, 1}, .shared_B = 128}, in, sizeof in, out,
                  sizeof out));
  expect_error(launch(sh2, &(run){.grid = {1, 1, 1}, .block = {16, 1, 1}, .shared_B = 32}, in, sizeof in, out,
                      sizeof out),
               (const char *const[]){"32 bytes < its 64 bytes of .shared", NULL}, "shared window too small");
  /* a barrier reached by half a warp */
  const char *div = HEAD
      ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n\t.reg .b32 %r<4>;\n\t.reg .pred %p<2>;\n"
      "\tmov.u32 %r0, %laneid;\n\tsetp.lt.u32 %p0, %r0, 8;\n\t@%p0 bra SKIP;\n\tbar.sync 0;\nSKIP:\n\tret;\n}\n";
  expect_error(launch(div, &(run){.grid = {1, 1, 1}, .block = {32, 1, 1}}, in, sizeof in, out, sizeof out),
               (const char *const[]){"divergent barrier", "line 11", "`bar.sync 0`", "thread (8,0,0)", "lane 0", NULL}, "divergent barrier");
  /* warp 1 exits while warp 0 waits */
  const char *ex = HEAD
      ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n\t.reg .b32 %r<4>;\n\t.reg .pred %p<2>;\n"
      "\tmov.u32 %r0, %tid.x;\n\tsetp.ge.u32 %p0, %r0, 32;\n\t@%p0 ret;\n\tbar.sync 0;\n\tret;\n}\n";
  expect_error(launch(ex, &(run){.grid = {1, 1, 1}, .block = {64, 1, 1}}, in, sizeof in, out, sizeof out),
               (const char *const[]){"exited while other threads of its block wait", "thread (32,0,0)", NULL},
               "exit before barrier");
  /* a hang stops at the watchdog */
  const char *hang = HEAD ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\nL:\n\tbra L;\n}\n";
  expect_error(launch(hang, &(run){.grid = {1, 1, 1}, .block = {1, 1, 1}, .budget = 100000}, in, sizeof in, out,
                      sizeof out),
               (const char *const[]){"budget of 100000 warp instructions", NULL}, "watchdog");
}

/* A label at the very end of the body: a branch there ends the thread (the interpreter appends the implicit exit
 * instead of running past its code). */
static void test_label_at_end(void) {
  const char *src = HEAD
      ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"
      "\t.reg .pred %p<2>;\n\tld.param.u64 %rd1, [pout];\n\tmov.u32 %r0, %tid.x;\n\tsetp.lt.u32 %p0, %r0, 2;\n"
      "\t@%p0 bra END;\n\tmul.wide.u32 %rd2, %r0, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\tst.global.u32 [%rd3], %r0;\n"
      "\tret;\nEND:\n}\n";
  uint32_t in[1], out[4] = {9, 9, 9, 9};
  CHECK_OK(launch(src, &(run){.grid = {1, 1, 1}, .block = {4, 1, 1}}, in, sizeof in, out, sizeof out));
  CHECK(out[0] == 9 && out[1] == 9 && out[2] == 2 && out[3] == 3);
  const char *empty = HEAD
      ".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n\t.reg .b32 %r<4>;\n\tld.global.u32 %r0, [ ];\n"
      "\tret;\n}\n";
  ptx_module *m = NULL;
  expect_error(ptx_module_parse(empty, strlen(empty), &m), (const char *const[]){"empty address", "line 7", NULL},
               "empty address");
  ptx_module_free(m);
}

/* Every invalid statement of ptx_test_kernels.h is refused naming its line and its text. */
static void test_parse_errors(void) {
  int head_lines = 0;
  for (const char *c = PTK_HEAD; *c; c++) head_lines += *c == '\n';
  for (size_t i = 0; i < PTK_INVALID_COUNT; i++) {
    char src[4096], line[32], text[128];
    snprintf(src, sizeof src, "%s%s%s", PTK_HEAD, PTK_INVALID[i], PTK_TAIL);
    snprintf(line, sizeof line, "line %d:", head_lines + 1);
    snprintf(text, sizeof text, "`%.*s`", (int)(strlen(PTK_INVALID[i]) - 3), PTK_INVALID[i] + 1);
    ptx_module *m = NULL;
    hcq_status st = ptx_module_parse(src, strlen(src), &m);
    ptx_module_free(m);
    if (strstr(PTK_INVALID[i], "NOWHERE")) {
      expect_error(st, (const char *const[]){line, text, "undefined label NOWHERE", NULL}, PTK_INVALID[i]);
      continue;
    }
    expect_error(st, (const char *const[]){line, text, NULL}, PTK_INVALID[i]);
  }
  static const char *const BAD_MODULES[] = {
      ".version 7.8\n.target sm_90\n.address_size 32\n",
      HEAD ".global .u32 g;\n",
      HEAD ".visible .entry k()\n{\n\t.reg .b32 %r<2>;\n\t.reg .b32 %r<3>;\n\tret;\n}\n",
      HEAD ".visible .entry k()\n{\n\tret;\n",
      HEAD ".visible .entry k()\n{\n\t.reg .b32 %r<2>;\n\tmov.u32 %r0, %r1\n}\n",
      HEAD ".visible .entry k()\n{\n\t.reg .b32 %r<2>;\n\tld.u32 %r0, [%r1];\n\tret;\n}\n",
      HEAD ".visible .entry k()\n{\n\t.reg .f32 %f<2>;\n\tadd.rn.ftz.sat.xyz.f32 %f0, %f1, %f1;\n\tret;\n}\n",
      "",
  };
  for (size_t i = 0; i < sizeof BAD_MODULES / sizeof BAD_MODULES[0]; i++) {
    ptx_module *m = NULL;
    hcq_status st = ptx_module_parse(BAD_MODULES[i], strlen(BAD_MODULES[i]), &m);
    ptx_module_free(m);
    if (!st) fprintf(stderr, "accepted bad module %zu\n", i);
    CHECK(st != HCQ_OK);
    hcq_status_free(st);
  }
}

int main(void) {
  test_divergence_and_barrier();
  test_specials();
  test_params_and_launch_checks();
  test_faults();
  test_parse_errors();
  test_label_at_end();
  return testing_summary("ptx_semantics");
}
