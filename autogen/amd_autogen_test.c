/* Checks the generated AMD packet and register headers against numbers computed by hand from the source headers
 * and the reference's emitted packets (tinygrad/runtime/ops_amd.py), and checks that the generator rejects
 * bad spec lines with spec:line messages. The generator is compiled into this test (it is not in libhcq). */
#include <sys/stat.h>
#include <unistd.h>

#include "autogen/amd_nbio.h"
#include "autogen/amd_pm4.h"
#include "autogen/amd_regs_gfx11.h"
#include "autogen/amd_regs_gfx12.h"
#include "autogen/amd_regs_gfx9.h"
#include "autogen/amd_regs_gfx942.h"
#include "autogen/amd_sdma.h"
#include "base/testing.h"

#define AMDGEN_NO_MAIN
#include "autogen/gen/amdgen.c"
#include "autogen/gen/macro_table.c"

static void check_pm4(void) {
  /* (3 << 30) | (op << 8) | (n << 16) */
  CHECK_EQ_INT(AMD_PM4_PACKET3(AMD_PM4_SET_SH_REG, 2), 0xc0027600u);
  CHECK_EQ_INT(AMD_PM4_PACKET3(AMD_PM4_SET_SH_REG, 1), 0xc0017600u);
  CHECK_EQ_INT(AMD_PM4_PACKET3(AMD_PM4_WAIT_REG_MEM, 5), 0xc0053c00u);
  CHECK_EQ_INT(AMD_PM4_PACKET3(AMD_PM4_ACQUIRE_MEM, 6), 0xc0065800u);
  CHECK_EQ_INT(AMD_PM4_PACKET3(AMD_PM4_RELEASE_MEM, 6), 0xc0064900u);
  CHECK_EQ_INT(AMD_PM4_PACKET3(AMD_PM4_DISPATCH_DIRECT, 3), 0xc0031500u);
  CHECK_EQ_INT(AMD_PM4_PACKET3(AMD_PM4_EVENT_WRITE, 0), 0xc0004600u);
  CHECK_EQ_INT(AMD_PM4_PACKET3(AMD_PM4_INDIRECT_BUFFER, 2), 0xc0023f00u);
  CHECK_EQ_INT(AMD_PM4_GFX9_PACKET3(AMD_PM4_GFX9_SET_SH_REG, 2), 0xc0027600u);
  CHECK_EQ_INT(AMD_PM4_NOP, 0x10);
  CHECK_EQ_INT(AMD_PM4_SET_SH_REG_START, 0x2c00);
  CHECK_EQ_INT(AMD_PM4_SET_UCONFIG_REG_START, 0xc000);
  /* WAIT_REG_MEM info dword for "memory >= ": FUNCTION(5) | MEM_SPACE(1) = 0x15; register poll with OPERATION(1) = 0x45 */
  CHECK_EQ_INT(AMD_PM4_WAIT_REG_MEM_FUNCTION(5) | AMD_PM4_WAIT_REG_MEM_MEM_SPACE(1), 0x15);
  CHECK_EQ_INT(AMD_PM4_WAIT_REG_MEM_FUNCTION(5) | AMD_PM4_WAIT_REG_MEM_OPERATION(1), 0x45);
  /* RELEASE_MEM: CACHE_FLUSH_AND_INV_TS_EVENT(0x14) | EVENT_INDEX(5) = 0x514; with GCR bits 0x70f514 */
  uint32_t ev = AMD_PM4_RELEASE_MEM_EVENT_TYPE(0x14) | AMD_PM4_RELEASE_MEM_EVENT_INDEX(5);
  CHECK_EQ_INT(ev, 0x514);
  CHECK_EQ_INT(ev | AMD_PM4_RELEASE_MEM_GCR_GLM_WB | AMD_PM4_RELEASE_MEM_GCR_GLM_INV | AMD_PM4_RELEASE_MEM_GCR_GLV_INV |
                   AMD_PM4_RELEASE_MEM_GCR_GL1_INV | AMD_PM4_RELEASE_MEM_GCR_GL2_INV | AMD_PM4_RELEASE_MEM_GCR_GL2_WB |
                   AMD_PM4_RELEASE_MEM_GCR_SEQ,
               0x70f514);
  CHECK_EQ_INT(AMD_PM4_RELEASE_MEM_DATA_SEL(1) | AMD_PM4_RELEASE_MEM_INT_SEL(2), 0x22000000u);
  CHECK_EQ_INT(AMD_PM4_RELEASE_MEM_DATA_SEL(3), 0x60000000u);
  /* ACQUIRE_MEM GCR_CNTL full barrier 0xc3f1 */
  CHECK_EQ_INT(AMD_PM4_ACQUIRE_MEM_GCR_CNTL_GLI_INV(1) | AMD_PM4_ACQUIRE_MEM_GCR_CNTL_GLM_WB(1) |
                   AMD_PM4_ACQUIRE_MEM_GCR_CNTL_GLM_INV(1) | AMD_PM4_ACQUIRE_MEM_GCR_CNTL_GLK_WB(1) |
                   AMD_PM4_ACQUIRE_MEM_GCR_CNTL_GLK_INV(1) | AMD_PM4_ACQUIRE_MEM_GCR_CNTL_GLV_INV(1) |
                   AMD_PM4_ACQUIRE_MEM_GCR_CNTL_GL1_INV(1) | AMD_PM4_ACQUIRE_MEM_GCR_CNTL_GL2_INV(1) |
                   AMD_PM4_ACQUIRE_MEM_GCR_CNTL_GL2_WB(1),
               0xc3f1);
  CHECK_EQ_INT(AMD_PM4_EVENT_TYPE(7) | AMD_PM4_EVENT_INDEX(4), 0x407);
  CHECK_EQ_INT(AMD_PM4_INDIRECT_BUFFER_VALID, 1u << 23);
  /* gfx9 forms: full acquire cp_coher_cntl 0x28C40000 (SH_ICACHE 29, SH_KCACHE 27, TC 23, TCL1 22, TC_WB 18) */
  CHECK_EQ_INT(AMD_PM4_GFX9_ACQUIRE_MEM_CP_COHER_CNTL_SH_ICACHE_ACTION_ENA(1) |
                   AMD_PM4_GFX9_ACQUIRE_MEM_CP_COHER_CNTL_SH_KCACHE_ACTION_ENA(1) |
                   AMD_PM4_GFX9_ACQUIRE_MEM_CP_COHER_CNTL_TC_ACTION_ENA(1) |
                   AMD_PM4_GFX9_ACQUIRE_MEM_CP_COHER_CNTL_TCL1_ACTION_ENA(1) |
                   AMD_PM4_GFX9_ACQUIRE_MEM_CP_COHER_CNTL_TC_WB_ACTION_ENA(1),
               0x28C40000u);
  CHECK_EQ_INT(AMD_PM4_GFX9_EOP_TC_WB_ACTION_EN | AMD_PM4_GFX9_EOP_TC_NC_ACTION_EN, (1u << 15) | (1u << 19));
  /* Selector values the reference passes by name (ops_amd.py: CS_PARTIAL_FLUSH, CACHE_FLUSH_AND_INV_TS_EVENT,
   * event_index end_of_pipe, data_sel send_32_bit_low / send_gpu_clock_counter, int_sel after write confirm). */
  CHECK_EQ_INT(AMD_PM4_EVENT_CS_PARTIAL_FLUSH, 7);
  CHECK_EQ_INT(AMD_PM4_EVENT_CACHE_FLUSH_AND_INV_TS_EVENT, 0x14);
  CHECK_EQ_INT(AMD_PM4_EVENT_BOTTOM_OF_PIPE_TS, 0x28);
  CHECK_EQ_INT(AMD_PM4_GFX9_EVENT_CS_PARTIAL_FLUSH, 7);
  CHECK_EQ_INT(AMD_PM4_GFX9_EVENT_CACHE_FLUSH_AND_INV_TS_EVENT, 0x14);
  CHECK_EQ_INT(AMD_PM4_RELEASE_MEM_EVENT_INDEX_END_OF_PIPE, 5);
  CHECK_EQ_INT(AMD_PM4_RELEASE_MEM_DATA_SEL_SEND_32_BIT_LOW, 1);
  CHECK_EQ_INT(AMD_PM4_RELEASE_MEM_DATA_SEL_SEND_64_BIT_DATA, 2);
  CHECK_EQ_INT(AMD_PM4_RELEASE_MEM_DATA_SEL_SEND_GPU_CLOCK_COUNTER, 3);
  CHECK_EQ_INT(AMD_PM4_RELEASE_MEM_INT_SEL_SEND_INTERRUPT_AFTER_WRITE_CONFIRM, 2);
  CHECK_EQ_INT(AMD_PM4_RELEASE_MEM_DST_SEL_MEMORY_CONTROLLER, 0);
  CHECK_EQ_INT(AMD_PM4_WAIT_REG_MEM_FUNCTION_GE, 5);
  CHECK_EQ_INT(AMD_PM4_WAIT_REG_MEM_FUNCTION_EQ, 3);
  CHECK_EQ_INT(AMD_PM4_WAIT_REG_MEM_MEM_SPACE_MEM, 1);
  CHECK_EQ_INT(AMD_PM4_WAIT_REG_MEM_ENGINE_ME, 0);
  CHECK_EQ_INT(AMD_PM4_GFX9_WAIT_REG_MEM_FUNCTION_GE, 5);
  CHECK_EQ_INT(AMD_PM4_GFX9_DATA_SEL_GPU_CLOCK, 3);
  CHECK_EQ_INT(AMD_PM4_EVENT_INDEX_PARTIAL_FLUSH, 4);
}

static void check_sdma(void) {
  /* copy linear header 0x1; fence with MTYPE 3 = 0x00030005; poll >= from memory = 0xD0000008; 0x0FFF0004 */
  CHECK_EQ_INT(AMD_SDMA6_COPY_LINEAR_HEADER_OP(AMD_SDMA6_OP_COPY) |
                   AMD_SDMA6_COPY_LINEAR_HEADER_SUB_OP(AMD_SDMA6_SUBOP_COPY_LINEAR),
               0x1);
  CHECK_EQ_INT(AMD_SDMA6_FENCE_HEADER_OP(AMD_SDMA6_OP_FENCE) | AMD_SDMA6_FENCE_HEADER_MTYPE(3), 0x00030005);
  CHECK_EQ_INT(AMD_SDMA6_POLL_REGMEM_HEADER_OP(AMD_SDMA6_OP_POLL_REGMEM) | AMD_SDMA6_POLL_REGMEM_HEADER_FUNC(5) |
                   AMD_SDMA6_POLL_REGMEM_HEADER_MEM_POLL(1),
               0xD0000008u);
  CHECK_EQ_INT(AMD_SDMA6_POLL_REGMEM_DW5_INTERVAL(4) | AMD_SDMA6_POLL_REGMEM_DW5_RETRY_COUNT(0xfff), 0x0FFF0004);
  CHECK_EQ_INT(AMD_SDMA6_TIMESTAMP_GET_GLOBAL_HEADER_OP(AMD_SDMA6_OP_TIMESTAMP) |
                   AMD_SDMA6_TIMESTAMP_GET_GLOBAL_HEADER_SUB_OP(AMD_SDMA6_SUBOP_TIMESTAMP_GET_GLOBAL),
               0x20D);
  CHECK_EQ_INT(AMD_SDMA6_OP_TRAP, 6);
  /* COUNT is 30 bits on SDMA 6, 22 bits on SDMA 4 and 5; packet sizes in dwords */
  CHECK_EQ_INT(AMD_SDMA6_COPY_LINEAR_COUNT_COUNT_MASK, 0x3FFFFFFF);
  CHECK_EQ_INT(AMD_SDMA4_COPY_LINEAR_COUNT_COUNT_MASK, 0x3FFFFF);
  CHECK_EQ_INT(AMD_SDMA5_COPY_LINEAR_COUNT_COUNT_MASK, 0x3FFFFF);
  CHECK_EQ_INT(AMD_SDMA6_COPY_LINEAR_DWORDS, 7);
  CHECK_EQ_INT(AMD_SDMA6_FENCE_DWORDS, 4);
  CHECK_EQ_INT(AMD_SDMA6_TRAP_DWORDS, 2);
  CHECK_EQ_INT(AMD_SDMA6_POLL_REGMEM_DWORDS, 6);
  CHECK_EQ_INT(AMD_SDMA6_TIMESTAMP_GET_GLOBAL_DWORDS, 3);
  CHECK_EQ_INT(AMD_SDMA6_GCR_REQ_DWORDS, 5);
  CHECK_EQ_INT(AMD_SDMA4_FENCE_DWORDS, 4);
}

static void check_regs(void) {
  /* gc_11_0_0: regCOMPUTE_PGM_LO 0x1bac, USER_DATA_0 0x1be0; + GC seg0 base 0x1260 - 0x2c00 = SH offsets of 5.5 */
  CHECK_EQ_INT(AMD_GFX11_COMPUTE_PGM_LO, 0x1bac);
  CHECK_EQ_INT(AMD_GFX11_COMPUTE_USER_DATA_0, 0x1be0);
  CHECK_EQ_INT(AMD_GFX11_COMPUTE_PGM_LO + 0x1260 - 0x2c00, 0x20c);
  CHECK_EQ_INT(AMD_GFX11_COMPUTE_PGM_RSRC1 + 0x1260 - 0x2c00, 0x212);
  CHECK_EQ_INT(AMD_GFX11_COMPUTE_PGM_RSRC3 + 0x1260 - 0x2c00, 0x228);
  CHECK_EQ_INT(AMD_GFX11_COMPUTE_TMPRING_SIZE + 0x1260 - 0x2c00, 0x218);
  CHECK_EQ_INT(AMD_GFX11_COMPUTE_RESTART_X + 0x1260 - 0x2c00, 0x21b);
  CHECK_EQ_INT(AMD_GFX11_COMPUTE_STATIC_THREAD_MGMT_SE4 + 0x1260 - 0x2c00, 0x22b);
  CHECK_EQ_INT(AMD_GFX11_COMPUTE_START_X + 0x1260 - 0x2c00, 0x204);
  CHECK_EQ_INT(AMD_GFX11_COMPUTE_RESOURCE_LIMITS + 0x1260 - 0x2c00, 0x215);
  CHECK_EQ_INT(AMD_GFX11_COMPUTE_DISPATCH_INITIATOR + 0x1260, 0x2e00);
  CHECK_EQ_INT(AMD_GFX11_COMPUTE_PGM_LO_BASE_IDX, 0);
  CHECK_EQ_INT(AMD_GFX11_GRBM_GFX_INDEX_BASE_IDX, 1);
  CHECK_EQ_INT(AMD_GFX11_GRBM_GFX_INDEX + 0xA000, 0xc200);
  /* DISPATCH_INITIATOR: COMPUTE_SHADER_EN bit 0, FORCE_START_AT_000 bit 2, CS_W32_EN bit 15 -> 0x5 / 0x8005 */
  CHECK_EQ_INT(AMD_GFX11_COMPUTE_DISPATCH_INITIATOR__COMPUTE_SHADER_EN_MASK |
                   AMD_GFX11_COMPUTE_DISPATCH_INITIATOR__FORCE_START_AT_000_MASK,
               0x5);
  CHECK_EQ_INT(AMD_GFX11_COMPUTE_DISPATCH_INITIATOR__CS_W32_EN__SHIFT, 15);
  CHECK_EQ_INT(AMD_GFX11_COMPUTE_PGM_RSRC2__LDS_SIZE__SHIFT, 15);
  /* gc_9_4_2: SOC15 gfx9 offsets, GC seg0 base 0x2000 on gfx9 -> the same absolute 0x2e0c */
  CHECK_EQ_INT(AMD_GFX9_COMPUTE_PGM_LO, 0x0e0c);
  CHECK_EQ_INT(AMD_GFX9_COMPUTE_PGM_LO + 0x2000, 0x2e0c);
  CHECK_EQ_INT(AMD_GFX9_COMPUTE_USER_DATA_15, 0x0e4f);
  CHECK_EQ_INT(AMD_GFX9_COMPUTE_DISPATCH_SCRATCH_BASE_LO, 0x0e10);
  CHECK_EQ_INT(AMD_GFX9_COMPUTE_PGM_RSRC3, 0x0e2d);
  CHECK_EQ_INT(AMD_GFX9_COMPUTE_DISPATCH_INITIATOR__FORCE_START_AT_000__SHIFT, 2);
}

/* HDP flush registers: the reference emits REQ 0xe26 / DONE 0xe27 on NBIO 4.3.0 (segment 2 base 0xD20), the
 * write-wait operation is 1 (nvd.h "1 - wr_wait_wr_reg"); CP2 is bit 2 of HDP_FLUSH_DONE (linux nbio sh_mask). The
 * gfx9 V# bits: LLVM SIInstrInfo.h RSRC_TID_ENABLE = 1 << (32 + 23), RSRC_INDEX_STRIDE_SHIFT = 32 + 21, and
 * ops_amd.py's word 1 `hi | 1 << 31` (SWIZZLE_ENABLE). */
static void check_nbio_rsrc(void) {
  CHECK_EQ_INT(0xD20 + AMD_NBIO_V4_3_BIF_BX_PF0_GPU_HDP_FLUSH_REQ, 0xe26);
  CHECK_EQ_INT(AMD_NBIO_V4_3_BIF_BX_PF0_GPU_HDP_FLUSH_REQ_BASE_IDX, 2);
  CHECK_EQ_INT(0xD20 + AMD_NBIO_V4_3_BIF_BX_PF0_GPU_HDP_FLUSH_DONE, 0xe27);
  CHECK_EQ_INT(AMD_NBIO_V7_4_GPU_HDP_FLUSH_DONE, 0x107);
  CHECK_EQ_INT(AMD_NBIO_V4_3_BIF_BX_PF_GPU_HDP_FLUSH_DONE__CP2_MASK, 4);
  CHECK_EQ_INT(AMD_NBIO_V7_4_GPU_HDP_FLUSH_DONE__CP9_MASK, 0x200);
  CHECK_EQ_INT(AMD_PM4_WAIT_REG_MEM_OPERATION_WR_WAIT_WR_REG, 1);
  CHECK_EQ_INT(AMD_GFX9_SQ_BUF_RSRC_WORD3__ADD_TID_ENABLE__SHIFT, 23);
  CHECK_EQ_INT(AMD_GFX9_SQ_BUF_RSRC_WORD3__INDEX_STRIDE__SHIFT, 21);
  CHECK_EQ_INT(AMD_GFX9_SQ_BUF_RSRC_WORD1__SWIZZLE_ENABLE_MASK, 0x80000000u);
  CHECK_EQ_INT(AMD_GFX9_SQ_BUF_RSRC_WORD1__BASE_ADDRESS_HI_MASK, 0xffff);
}

/* gfx942 (gc_9_4_3) and gfx12 (gc_12_0_0), from the v6.12 lines the spec carries: the registers and fields the
 * dispatch writes (amd_dispatch.c amd_regs_of, the gfx9 / gfx11 tables it uses for them) must be equal, else the
 * driver needs its own table for them. Values written out are from gc_9_4_3_offset.h / gc_12_0_0_offset.h v6.12.117
 * (regCOMPUTE_PGM_LO 0x0e0c / 0x1bac, regCOMPUTE_PGM_RSRC3 0x0e2d / 0x1bc8, regCOMPUTE_USER_DATA_0 0x0e40 / 0x1be0). */
static void check_newer_gc(void) {
#define SAME(A, B, n) CHECK_EQ_INT(AMD_##A##_##n, AMD_##B##_##n); CHECK_EQ_INT(AMD_##A##_##n##_BASE_IDX, AMD_##B##_##n##_BASE_IDX)
#define BOTH(n) SAME(GFX942, GFX9, n); SAME(GFX12, GFX11, n)
#define FSAME(A, B, n) CHECK_EQ_INT(AMD_##A##_##n, AMD_##B##_##n)
#define FBOTH(n) FSAME(GFX942, GFX9, n); FSAME(GFX12, GFX11, n)
  BOTH(COMPUTE_PGM_LO); BOTH(COMPUTE_PGM_HI); BOTH(COMPUTE_PGM_RSRC1); BOTH(COMPUTE_PGM_RSRC2); BOTH(COMPUTE_PGM_RSRC3);
  BOTH(COMPUTE_TMPRING_SIZE); BOTH(COMPUTE_DISPATCH_SCRATCH_BASE_LO); BOTH(COMPUTE_DISPATCH_SCRATCH_BASE_HI);
  BOTH(COMPUTE_RESTART_X); BOTH(COMPUTE_RESTART_Y); BOTH(COMPUTE_RESTART_Z); BOTH(COMPUTE_STATIC_THREAD_MGMT_SE0);
  BOTH(COMPUTE_STATIC_THREAD_MGMT_SE1); BOTH(COMPUTE_STATIC_THREAD_MGMT_SE2); BOTH(COMPUTE_STATIC_THREAD_MGMT_SE3);
  BOTH(COMPUTE_USER_DATA_0); BOTH(COMPUTE_USER_DATA_15); BOTH(COMPUTE_RESOURCE_LIMITS); BOTH(COMPUTE_START_X);
  BOTH(COMPUTE_NUM_THREAD_X); BOTH(COMPUTE_NUM_THREAD_Z); BOTH(COMPUTE_DISPATCH_INITIATOR); BOTH(GRBM_GFX_INDEX);
  SAME(GFX12, GFX11, COMPUTE_STATIC_THREAD_MGMT_SE4); SAME(GFX12, GFX11, COMPUTE_STATIC_THREAD_MGMT_SE7);
  FBOTH(COMPUTE_DISPATCH_INITIATOR__COMPUTE_SHADER_EN_MASK); FBOTH(COMPUTE_DISPATCH_INITIATOR__FORCE_START_AT_000_MASK);
  FBOTH(COMPUTE_PGM_RSRC1__PRIV_MASK); FBOTH(COMPUTE_PGM_RSRC2__USER_SGPR_MASK); FBOTH(COMPUTE_PGM_RSRC2__SCRATCH_EN_MASK);
  FBOTH(COMPUTE_PGM_RSRC2__LDS_SIZE_MASK); FBOTH(COMPUTE_TMPRING_SIZE__WAVES_MASK);
  FSAME(GFX942, GFX9, COMPUTE_TMPRING_SIZE__WAVESIZE_MASK); FSAME(GFX12, GFX11, COMPUTE_DISPATCH_INITIATOR__CS_W32_EN_MASK);
  FBOTH(COMPUTE_TMPRING_SIZE__WAVESIZE__SHIFT);
  /* The one difference: gc_12_0_0 WAVESIZE is 18 bits (0x3FFFF000L), gc_11_0_0's 15 (0x07FFF000L). The driver encodes
   * gfx12 with the gfx11 mask: same bits, a lower limit (amd_scratch.c refuses more, by name). */
  CHECK_EQ_INT(AMD_GFX12_COMPUTE_TMPRING_SIZE__WAVESIZE_MASK, 0x3ffff000u);
  CHECK_EQ_INT(AMD_GFX11_COMPUTE_TMPRING_SIZE__WAVESIZE_MASK & ~AMD_GFX12_COMPUTE_TMPRING_SIZE__WAVESIZE_MASK, 0);
#undef FBOTH
#undef FSAME
#undef BOTH
#undef SAME
  CHECK_EQ_INT(AMD_GFX942_COMPUTE_PGM_LO, 0x0e0c);
  CHECK_EQ_INT(AMD_GFX942_COMPUTE_PGM_RSRC3, 0x0e2d);
  CHECK_EQ_INT(AMD_GFX942_COMPUTE_USER_DATA_0, 0x0e40);
  CHECK_EQ_INT(AMD_GFX12_COMPUTE_PGM_LO, 0x1bac);
  CHECK_EQ_INT(AMD_GFX12_COMPUTE_PGM_RSRC3, 0x1bc8);
  CHECK_EQ_INT(AMD_GFX12_COMPUTE_USER_DATA_0, 0x1be0);
}

/* ---- generator bad input: a tiny fake source tree and spec files written by the test ---- */

static char g_dir[64];

static void write_file(const char *rel, const char *text) {
  char p[256];
  snprintf(p, sizeof p, "%s/%s", g_dir, rel);
  FILE *f = fopen(p, "w");
  if (f) { fputs(text, f); fclose(f); }
}

static hcq_status run_spec(const char *spec) {
  write_file("t.spec", spec);
  char sp[256], out[256];
  snprintf(sp, sizeof sp, "%s/t.spec", g_dir);
  snprintf(out, sizeof out, "%s/out", g_dir);
  return amdgen_run(sp, g_dir, out);
}

static void check_generator_errors(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/hcq_amdgen_test_%d", (int)getpid());
  mkdir(g_dir, 0700);
  char out[300];
  snprintf(out, sizeof out, "%s/out", g_dir);
  mkdir(out, 0700);
  write_file("Makefile", "VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 192\n");
  write_file("p.h", "#define PACKET_TYPE3 3\n#define PACKET3(op, n) ((PACKET_TYPE3 << 30) | (((op) & 0xFF) << 8) | ((n) & 0x3FFF) << 16)\n"
                    "#define PACKET3_NOP 0x10 /* c */\n#define F(x) ((x) << 4)\n#define NOTF(x) ((x) + 3)\n"
                    "#define BAD (1 +)\n#define TWICE 1\n#define TWICE 2\n"
                    "#define regR 0x1bac\n#define regR_BASE_IDX 0\n#define regNOIDX 0x10\n"
                    "#define R__A__SHIFT 0x4\n#define R__A_MASK 0x000000F0L\n"
                    "#define SEL(x) ((x) << 29)\n\t/* 0 - none\n\t * 2 - send 64bit data\n\t */\n#define G(x) ((x) << 1)\n"
                    "typedef enum E {\nE_A = 0x00000007,\nE_B = 0x1 + 2,\n} E;\nenum F2 {\n\tF2_X = 5,\n};\n");
  const char *head = "kernel 6.1.192\noutput o.h O_H\nsource p.h\nprefix T_ PACKET3_\n";
  char spec[1024];
#define SPEC(body) (snprintf(spec, sizeof spec, "%s%s", head, body), spec)
  CHECK_OK(run_spec(SPEC("packet3 PACKET3\nconst PACKET3_NOP\nfield F\nreg R\nfields R\n")));
  char path[400];
  snprintf(path, sizeof path, "%.200s/o.h", out);
  FILE *f = fopen(path, "r");
  char text[4096] = {0};
  if (f) { size_t n = fread(text, 1, sizeof text - 1, f); text[n] = 0; fclose(f); }
  CHECK(strstr(text, "#define T_NOP 0x10u\n") != NULL);
  CHECK(strstr(text, "#define T_F_SHIFT 4\n") != NULL);
  CHECK(strstr(text, "#define T_R 0x1bac\n#define T_R_BASE_IDX 0\n") != NULL);
  CHECK(strstr(text, "#define T_R__A__SHIFT 4\n#define T_R__A_MASK 0x000000f0u\n") != NULL);
  CHECK(strstr(text, "#define T_TYPE3_HEADER 0xc0000000u\n") != NULL);
  CHECK_OK(run_spec(SPEC("choice SEL D64 send 64bit data\nenum E E_A\nenum F2 F2_X FX\n")));
  f = fopen(path, "r");
  memset(text, 0, sizeof text);
  if (f) { size_t n = fread(text, 1, sizeof text - 1, f); text[n] = 0; fclose(f); }
  CHECK(strstr(text, "#define T_SEL_D64 2u\n") != NULL);
  CHECK(strstr(text, "#define T_E_A 7u\n") != NULL);
  CHECK(strstr(text, "#define T_FX 5u\n") != NULL);
  CHECK_ERR(run_spec(SPEC("choice SEL D32 send 32bit data\n")), HCQ_CODE_INVALID,
            "t.spec:5: choice SEL: no line \"N - send 32bit data\" in the comment under p.h:");
  CHECK_ERR(run_spec(SPEC("choice G X none\n")), HCQ_CODE_INVALID, "t.spec:5: choice G: no comment under p.h:");
  CHECK_ERR(run_spec(SPEC("enum E E_C\n")), HCQ_CODE_INVALID, "t.spec:5: enum E: no enumerator E_C in p.h");
  CHECK_ERR(run_spec(SPEC("enum E E_B\n")), HCQ_CODE_INVALID, "t.spec:5: enum E: E_B (p.h:");
  CHECK_ERR(run_spec(SPEC("enum Q E_A\n")), HCQ_CODE_INVALID, "t.spec:5: enum Q: neither");

  /* upstream blocks: the spec carries the source lines itself ('#' inside a line is text, not a comment) */
  CHECK_OK(run_spec(SPEC("upstream x/new.h v6.12\nline #define regU 0x0106\nline #define regU_BASE_IDX 2\n"
                         "line #define U__CP2__SHIFT 0x2\nline #define U__CP2_MASK 0x00000004L\nprefix N_\nreg U\nfields U\n")));
  f = fopen(path, "r");
  memset(text, 0, sizeof text);
  if (f) { size_t n = fread(text, 1, sizeof text - 1, f); text[n] = 0; fclose(f); }
  CHECK(strstr(text, "#define N_U 0x0106\n#define N_U_BASE_IDX 2\n") != NULL);
  CHECK(strstr(text, "#define N_U__CP2__SHIFT 2\n#define N_U__CP2_MASK 0x00000004u\n") != NULL);
  CHECK(strstr(text, "source: x/new.h at linux v6.12 (lines carried in the spec)") != NULL);
  CHECK_ERR(run_spec(SPEC("line #define A 1\n")), HCQ_CODE_INVALID, "t.spec:5: 'line' outside an 'upstream' block");
  CHECK_ERR(run_spec(SPEC("upstream x/new.h v6.12\nline #define A 1\nconst A\nline #define B 2\n")), HCQ_CODE_INVALID,
            "t.spec:8: 'line' outside an 'upstream' block");
  CHECK_ERR(run_spec(SPEC("upstream x/new.h v6.12\nline #define A 1\nreg A\n")), HCQ_CODE_INVALID,
            "t.spec:7: register A: neither regA nor mmA is defined in x/new.h");
  CHECK_ERR(run_spec(SPEC("upstream x/new.h\n")), HCQ_CODE_INVALID, "t.spec:5: 'upstream' takes 2..2 argument(s), got 1");
  CHECK_ERR(run_spec(SPEC("const PACKET3_MISSING\n")), HCQ_CODE_INVALID, "t.spec:5: PACKET3_MISSING: not found in p.h");
  CHECK_ERR(run_spec(SPEC("reg NOPE\n")), HCQ_CODE_INVALID, "t.spec:5: register NOPE: neither regNOPE nor mmNOPE");
  CHECK_ERR(run_spec(SPEC("reg NOIDX\n")), HCQ_CODE_INVALID, "t.spec:5: regNOIDX_BASE_IDX: not found");
  CHECK_ERR(run_spec(SPEC("fields Q\n")), HCQ_CODE_INVALID, "t.spec:5: register Q: no Q__*__SHIFT");
  CHECK_ERR(run_spec(SPEC("field NOTF\n")), HCQ_CODE_INVALID, "t.spec:5: NOTF (p.h:5) is not a plain field shift");
  CHECK_ERR(run_spec(SPEC("field PACKET3_NOP\n")), HCQ_CODE_INVALID, "t.spec:5: PACKET3_NOP: expected a macro with 1");
  CHECK_ERR(run_spec(SPEC("const BAD\n")), HCQ_CODE_PARSE, "p.h:6: macro BAD: unexpected token");
  CHECK_ERR(run_spec(SPEC("const TWICE\n")), HCQ_CODE_INVALID, "p.h:8: TWICE is defined twice with different values");
  CHECK_ERR(run_spec(SPEC("const\n")), HCQ_CODE_INVALID, "t.spec:5: 'const' takes 1..1 argument(s), got 0");
  CHECK_ERR(run_spec(SPEC("frobnicate X\n")), HCQ_CODE_INVALID, "t.spec:5: unknown directive 'frobnicate'");
  CHECK_ERR(run_spec(SPEC("regs R 3 1\n")), HCQ_CODE_INVALID, "t.spec:5: regs: bad range 3..1");
  CHECK_ERR(run_spec(SPEC("sdma COPY\n")), HCQ_CODE_INVALID, "t.spec:5: SDMA packet COPY: no SDMA_PKT_COPY_*_offset");
  CHECK_ERR(run_spec("kernel 6.1.193\n"), HCQ_CODE_INVALID, "t.spec:1: kernel source is 6.1.192");
  CHECK_ERR(run_spec("const X\n"), HCQ_CODE_INVALID, "t.spec:1: const before any 'output' line");
  CHECK_ERR(run_spec("output o.h O_H\nsource missing.h\n"), HCQ_CODE_NOT_FOUND, "t.spec:2: source: missing.h: cannot open");
  CHECK_ERR(run_spec("output o.h O_H\n"), HCQ_CODE_INVALID, "output o.h has no symbols");
#undef SPEC
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  CHECK_EQ_INT(system(cmd), 0);
}

int main(void) {
  check_pm4();
  check_sdma();
  check_regs();
  check_nbio_rsrc();
  check_newer_gc();
  check_generator_errors();
  return testing_summary("amd_autogen_test");
}
