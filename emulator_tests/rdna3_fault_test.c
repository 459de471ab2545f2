/* The RDNA3 interpreter's error paths and execution model, on kernels assembled by llvm-mc-19:
 * - a global store, a global load, a scalar load and an LDS access out of bounds are reported like a GPU page
 *   fault naming the instruction (disassembly and code offset), the lane and the address, and the run stops;
 * - an instruction the decoder does not know is refused at load time, naming its encoding, words and offset;
 * - a wave64 kernel descriptor is refused; a branch into the middle of an instruction is refused;
 * - an endless loop ends with HCQ_CODE_TIMEOUT naming the wave, not a hang;
 * - s_barrier: two waves of one workgroup exchange values through LDS (each reads what the other wrote before the
 *   barrier), EXEC masking of a partial last wave, and the work-item ids packed in v0 (x 9:0, y 19:10);
 * - lane-instructions count only the lanes EXEC enables;
 * - scratch: each lane's private memory is its own, and an access past private_segment_fixed_size faults. */
#include "emulator_tests/rdna3_test_util.h"

static uint8_t g_obj[65536];
static uint32_t g_buf[256];

/* kernarg ptr in s[0:1], wave32, USER_SGPR_COUNT 2, workgroup id x in s2, work-item ids x and y in v0 */
static const rdna3_kd KD = {.code_props = (1u << 3) | (1u << 10), .rsrc2 = (2u << 1) | (1u << 7) | (1u << 11),
                            .rsrc1 = 3u << 16 | 3u << 18, .group_segment_B = 256};

static char g_trace[4096];
static rdna3_stats g_stats; /* of the last run */
static void trace(void *user, const char *line) {
  (void)user;
  size_t n = strlen(g_trace);
  snprintf(g_trace + n, sizeof g_trace - n, "%s\n", line);
}

static hcq_status run(const char *src, rdna3_kd kd, uint32_t block_x, uint32_t block_y, uint32_t groups,
                      uint64_t max_insts) {
  r3t_code c;
  if (!r3t_asm(src, g_obj, sizeof g_obj, &c)) return hcq_status_make(HCQ_CODE_INTERNAL, "llvm-mc failed");
  rdna3_program *p = NULL;
  HCQ_TRY(rdna3_load(c.text, c.text_B, 0x1000, 0, &kd, &p));
  uint64_t args[1] = {(uint64_t)(uintptr_t)g_buf};
  r3t_mem m = {0};
  r3t_mem_add(&m, g_buf, sizeof g_buf);
  r3t_mem_add(&m, args, sizeof args);
  rdna3_dispatch d = {.groups = {groups, 1, 1}, .block = {block_x, block_y, 1}, .kernarg_va = (uint64_t)(uintptr_t)args,
                      .max_wave_insts = max_insts, .trace = trace};
  g_trace[0] = 0;
  g_stats = (rdna3_stats){0};
  hcq_status st = rdna3_run(p, &d, &(rdna3_mem_ops){.ctx = &m, .read = r3t_read, .write = r3t_write}, &g_stats);
  rdna3_free(p);
  return st;
}

/* st must fail and its message contain every string in want (NULL-terminated). */
static void expect_error(hcq_status st, const char *what, const char *const *want) {
  CHECK(st != HCQ_OK);
  if (!st) {
    fprintf(stderr, "%s: no error\n", what);
    return;
  }
  const char *msg = hcq_status_message(st);
  printf("%s -> %s\n", what, msg);
  for (int i = 0; want[i]; i++)
    if (!strstr(msg, want[i])) {
      fprintf(stderr, "%s: message lacks \"%s\"\n", what, want[i]);
      CHECK(!"message");
    }
  hcq_status_free(st);
}

static void test_page_faults(void) {
  char addr[64];
  /* lane 5 stores past the buffer's end (the others in bounds) */
  const char *store = "s_load_b64 s[4:5], s[0:1], 0x0\n"
                      "v_and_b32 v1, 0x3ff, v0\n"
                      "v_lshlrev_b32 v2, 2, v1\n"
                      "v_cmp_eq_u32 vcc_lo, 5, v1\n"
                      "v_cndmask_b32 v2, v2, 0x800, vcc_lo\n"
                      "s_waitcnt lgkmcnt(0)\n"
                      "global_store_b32 v2, v1, s[4:5] offset:16\n"
                      "s_endpgm\n";
  snprintf(addr, sizeof addr, "0x%" PRIx64, (uint64_t)(uintptr_t)g_buf + 0x800 + 16);
  expect_error(run(store, KD, 32, 1, 1, 0), "global store out of bounds",
               (const char *const[]){"page fault", "write", addr, "global_store_b32 v2, v1, s[4:5] offset:16",
                                     "lane 5", "code offset 0x", NULL});
  const char *load = "s_load_b64 s[4:5], s[0:1], 0x0\n"
                     "v_mov_b32 v2, -16\n"
                     "s_waitcnt lgkmcnt(0)\n"
                     "global_load_b128 v[4:7], v2, s[4:5]\n"
                     "s_endpgm\n";
  snprintf(addr, sizeof addr, "0x%" PRIx64, (uint64_t)(uintptr_t)g_buf + 0xfffffff0u);
  expect_error(run(load, KD, 32, 1, 1, 0), "global load out of bounds",
               (const char *const[]){"page fault", "read", addr, "global_load_b128", "lane 0", NULL});
  const char *sload = "s_load_b64 s[4:5], s[0:1], 0x0\n"
                      "s_waitcnt lgkmcnt(0)\n"
                      "s_load_b32 s6, s[4:5], 0x400\n"
                      "s_endpgm\n";
  snprintf(addr, sizeof addr, "0x%" PRIx64, (uint64_t)(uintptr_t)g_buf + 0x400);
  expect_error(run(sload, KD, 32, 1, 1, 0), "scalar load out of bounds",
               (const char *const[]){"page fault", "scalar read", addr, "s_load_b32 s6, s[4:5], 0x400", "wave 0", NULL});
  const char *lds = "v_and_b32 v1, 0x3ff, v0\n"
                    "v_lshlrev_b32 v2, 3, v1\n"
                    "ds_store_b64 v2, v[0:1]\n"
                    "s_endpgm\n";
  expect_error(run(lds, KD, 64, 1, 1, 0), "LDS store out of bounds",
               (const char *const[]){"page fault", "LDS", "ds_store_b64 v2, v[0:1]", "lane 0 of wave 1", "0x100", NULL});
}

static void test_refusals(void) {
  /* v_wmma_f32_16x16x16_f16 (VOP3P) is not among the operations the interpreter knows */
  expect_error(run("s_nop 0\nv_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]\ns_endpgm\n", KD, 32, 1, 1, 0),
               "unknown instruction",
               (const char *const[]){"unknown instruction", "offset 0x4", "VOP3P opcode 64", "0xcc404000", NULL});
  /* DPP is not modelled: refused, not read as a zero operand */
  expect_error(run("v_mov_b32_dpp v1, v2 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf\ns_endpgm\n", KD, 32, 1, 1, 0),
               "DPP operand", (const char *const[]){"offset 0x0", "operand code 250", "DPP", NULL});
  rdna3_kd w64 = KD;
  w64.code_props &= (uint16_t)~(1u << 10);
  uint8_t raw[64] = {0};
  memcpy(raw + 48, &w64.rsrc1, 4);
  memcpy(raw + 52, &w64.rsrc2, 4);
  memcpy(raw + 56, &w64.code_props, 2);
  rdna3_kd parsed;
  expect_error(rdna3_kd_parse(raw, &parsed), "wave64 descriptor", (const char *const[]){"wave64", NULL});
  /* a branch whose target is the literal of a two-word instruction */
  static const uint32_t code[] = {0xbfa00001u /* s_branch +1 -> offset 8 */, 0x7e0202ffu, 0x12345678u, 0xbfb00000u};
  rdna3_program *p = NULL;
  expect_error(rdna3_load((const uint8_t *)code, sizeof code, 0, 0, &KD, &p), "branch into an instruction",
               (const char *const[]){"branch at code offset 0x0", "0x8", "not the start of an instruction", NULL});
  expect_error(run("s_branch -1\ns_endpgm\n", KD, 32, 1, 1, 1000), "endless loop",
               (const char *const[]){"wave 0", "1001 instructions", NULL});
  /* the trace hook sees every executed instruction */
  CHECK(strstr(g_trace, "wg 0,0,0 wave 0 0x0: s_branch 65535 | exec=0xffffffff scc=0\n") == g_trace);
}

static void test_barrier_and_ids(void) {
  /* 48 work-items as 16x3 (two waves, the second half empty): each stores its linear id to LDS, s_barrier, then
   * reads the id of the item 24 places further (mod 48: across waves) and stores id | other << 8 | x << 16 | y << 24 */
  const char *src = "s_load_b64 s[4:5], s[0:1], 0x0\n"
                    "v_and_b32 v1, 0x3ff, v0\n"          /* x */
                    "v_bfe_u32 v2, v0, 10, 10\n"         /* y */
                    "v_lshl_add_u32 v3, v2, 4, v1\n"     /* id = y * 16 + x */
                    "v_lshlrev_b32 v4, 2, v3\n"
                    "ds_store_b32 v4, v3\n"
                    "s_waitcnt lgkmcnt(0)\n"
                    "s_barrier\n"
                    "v_add_nc_u32 v5, 24, v3\n"
                    "v_cmp_le_u32 vcc_lo, 48, v5\n"
                    "v_subrev_nc_u32 v6, 48, v5\n"
                    "v_cndmask_b32 v5, v5, v6, vcc_lo\n"
                    "v_lshlrev_b32 v5, 2, v5\n"
                    "ds_load_b32 v6, v5\n"
                    "s_waitcnt lgkmcnt(0)\n"
                    "v_lshl_or_b32 v7, v6, 8, v3\n"
                    "v_lshl_or_b32 v7, v1, 16, v7\n"
                    "v_lshl_or_b32 v7, v2, 24, v7\n"
                    "global_store_b32 v4, v7, s[4:5]\n"
                    "s_endpgm\n";
  memset(g_buf, 0xee, sizeof g_buf);
  hcq_status st = run(src, KD, 16, 3, 1, 0);
  CHECK_OK(st);
  for (uint32_t id = 0; id < 48; id++) {
    uint32_t want = id | ((id + 24) % 48) << 8 | (id % 16) << 16 | (id / 16) << 24;
    if (g_buf[id] != want) fprintf(stderr, "item %u: 0x%08x, want 0x%08x\n", id, g_buf[id], want);
    CHECK(g_buf[id] == want);
  }
  CHECK(g_buf[48] == 0xeeeeeeeeu); /* lanes past the block are off in EXEC */
  /* 20 instructions per wave: 32 lanes in wave 0, 16 in wave 1 */
  CHECK_EQ_INT(g_stats.wave_insts, 2 * 20);
  CHECK_EQ_INT(g_stats.lane_insts, 20 * 32 + 20 * 16);
}

/* lane-instructions count the lanes whose EXEC bit is set when each instruction issues (not 32 per instruction):
 * v_cmpx narrows EXEC to lanes 0..15 and the three instructions after it (s_endpgm included) count 16 each */
static void test_lane_count(void) {
  const char *src = "v_and_b32 v1, 0x3ff, v0\n"
                    "v_cmpx_gt_u32 16, v1\n"
                    "v_add_nc_u32 v2, 1, v1\n"
                    "v_add_nc_u32 v2, 1, v2\n"
                    "s_endpgm\n";
  CHECK_OK(run(src, KD, 32, 1, 3, 0));
  CHECK_EQ_INT(g_stats.wave_insts, 3 * 5);
  CHECK_EQ_INT(g_stats.lane_insts, 3 * (2 * 32 + 3 * 16));
  CHECK_OK(run(src, KD, 7, 1, 1, 0)); /* a partial wave: 7 lanes throughout */
  CHECK_EQ_INT(g_stats.lane_insts, 5 * 7);
}

static void test_scratch(void) {
  rdna3_kd kd = KD;
  kd.private_segment_B = 16;
  const char *src = "s_load_b64 s[4:5], s[0:1], 0x0\n"
                    "v_and_b32 v1, 0x3ff, v0\n"
                    "v_mov_b32 v3, 4\n"
                    "v_mul_u32_u24 v2, v1, 3\n"
                    "scratch_store_b32 v3, v2, off offset:8\n" /* private address 12 of every lane */
                    "scratch_store_b32 off, v1, off\n"
                    "scratch_load_b32 v4, off, off offset:12\n"
                    "scratch_load_b32 v5, v3, off offset:-4\n"
                    "v_lshl_or_b32 v4, v5, 16, v4\n"
                    "v_lshlrev_b32 v6, 2, v1\n"
                    "s_waitcnt lgkmcnt(0)\n"
                    "global_store_b32 v6, v4, s[4:5]\n"
                    "s_endpgm\n";
  memset(g_buf, 0, sizeof g_buf);
  CHECK_OK(run(src, kd, 64, 1, 1, 0));
  for (uint32_t l = 0; l < 64; l++) CHECK(g_buf[l] == (3 * l | l << 16));
  expect_error(run("v_mov_b32 v1, 1\nscratch_store_b32 off, v1, off offset:16\ns_endpgm\n", kd, 32, 1, 1, 0),
               "scratch out of bounds", (const char *const[]){"page fault", "scratch write", "0x10", "16 bytes per lane",
                                                                "scratch_store_b32 off, v1, off offset:16", NULL});
}

int main(void) {
  if (system("command -v llvm-mc-19 >/dev/null 2>&1") != 0) {
    fprintf(stderr, "SKIP: llvm-mc-19 missing\n");
    return 77;
  }
  test_page_faults();
  test_refusals();
  test_barrier_and_ids();
  test_lane_count();
  test_scratch();
  return testing_summary("rdna3_fault");
}
