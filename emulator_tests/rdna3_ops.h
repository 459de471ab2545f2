/* The instructions the RDNA3 interpreter knows: one row per operation, with its GFX11 encoding and opcode.
 * Opcode numbers: LLVM llvm/lib/Target/AMDGPU/{SOP,SM,VOP1,VOP2,VOP3,VOPC,VOPD,DS,FLAT}Instructions.td (GFX11 encodings) = mesa
 * src/amd/compiler/aco_opcodes.py gfx11 column; each checked against llvm-objdump-19 --mcpu=gfx1100 by
 * emulator_tests/rdna3_decode_test.c. A VOP1/VOP2/VOPC operation is also reachable in the VOP3 encoding at
 * 384+op / 256+op / op (ISA guide, "VOP3"), and a VOPD half maps onto the VOP2/VOP1 row of the same operation.
 *
 * X(ID, name, encoding, opcode, sources, flags) */
#ifndef HCQ_EMU_RDNA3_OPS_H
#define HCQ_EMU_RDNA3_OPS_H

enum { E_SOP1, E_SOP2, E_SOPK, E_SOPC, E_SOPP, E_SMEM, E_VOP1, E_VOP2, E_VOPC, E_VOP3, E_VOP3P, E_DS, E_FLAT, E_VOPD, E_MUBUF };

/* flags */
#define F_D64 0x1u     /* 64-bit destination */
#define F_S0_64 0x2u   /* 64-bit sources */
#define F_S1_64 0x4u
#define F_S2_64 0x8u
#define F_FP 0x10u     /* float operands: inline constants are floats, abs/neg apply */
#define F_F16 0x20u    /* 16-bit operands */
#define F_NOSFX 0x40u  /* printed without _e32/_e64 */
#define F_VOP3B 0x80u  /* VOP3 form with an SGPR destination (carry out / VCC) */
#define F_SDST 0x100u  /* destination is an SGPR */
#define F_NODST 0x200u /* v_cmpx: writes EXEC, no destination operand */
#define F_CIN 0x400u   /* reads a lane mask: VCC in the e32 form, src2 in the e64 form */
#define F_COUT 0x800u  /* writes a carry mask: VCC in the e32 form, sdst in the e64 form */
#define F_ALL64 (F_D64 | F_S0_64 | F_S1_64 | F_S2_64)

#define RDNA3_OPS(X)                                                                 \
  /* SOP2 */                                                                         \
  X(S_ADD_U32, "s_add_u32", E_SOP2, 0, 2, 0)                                         \
  X(S_SUB_U32, "s_sub_u32", E_SOP2, 1, 2, 0)                                         \
  X(S_ADD_I32, "s_add_i32", E_SOP2, 2, 2, 0)                                         \
  X(S_SUB_I32, "s_sub_i32", E_SOP2, 3, 2, 0)                                         \
  X(S_ADDC_U32, "s_addc_u32", E_SOP2, 4, 2, 0)                                       \
  X(S_SUBB_U32, "s_subb_u32", E_SOP2, 5, 2, 0)                                       \
  X(S_ABSDIFF_I32, "s_absdiff_i32", E_SOP2, 6, 2, 0)                                 \
  X(S_LSHL_B32, "s_lshl_b32", E_SOP2, 8, 2, 0)                                       \
  X(S_LSHL_B64, "s_lshl_b64", E_SOP2, 9, 2, F_D64 | F_S0_64)                         \
  X(S_LSHR_B32, "s_lshr_b32", E_SOP2, 10, 2, 0)                                      \
  X(S_LSHR_B64, "s_lshr_b64", E_SOP2, 11, 2, F_D64 | F_S0_64)                        \
  X(S_ASHR_I32, "s_ashr_i32", E_SOP2, 12, 2, 0)                                      \
  X(S_ASHR_I64, "s_ashr_i64", E_SOP2, 13, 2, F_D64 | F_S0_64)                        \
  X(S_LSHL1_ADD_U32, "s_lshl1_add_u32", E_SOP2, 14, 2, 0)                            \
  X(S_LSHL2_ADD_U32, "s_lshl2_add_u32", E_SOP2, 15, 2, 0)                            \
  X(S_LSHL3_ADD_U32, "s_lshl3_add_u32", E_SOP2, 16, 2, 0)                            \
  X(S_LSHL4_ADD_U32, "s_lshl4_add_u32", E_SOP2, 17, 2, 0)                            \
  X(S_MIN_I32, "s_min_i32", E_SOP2, 18, 2, 0)                                        \
  X(S_MIN_U32, "s_min_u32", E_SOP2, 19, 2, 0)                                        \
  X(S_MAX_I32, "s_max_i32", E_SOP2, 20, 2, 0)                                        \
  X(S_MAX_U32, "s_max_u32", E_SOP2, 21, 2, 0)                                        \
  X(S_AND_B32, "s_and_b32", E_SOP2, 22, 2, 0)                                        \
  X(S_AND_B64, "s_and_b64", E_SOP2, 23, 2, F_ALL64)                                  \
  X(S_OR_B32, "s_or_b32", E_SOP2, 24, 2, 0)                                          \
  X(S_OR_B64, "s_or_b64", E_SOP2, 25, 2, F_ALL64)                                    \
  X(S_XOR_B32, "s_xor_b32", E_SOP2, 26, 2, 0)                                        \
  X(S_XOR_B64, "s_xor_b64", E_SOP2, 27, 2, F_ALL64)                                  \
  X(S_NAND_B32, "s_nand_b32", E_SOP2, 28, 2, 0)                                      \
  X(S_NOR_B32, "s_nor_b32", E_SOP2, 30, 2, 0)                                        \
  X(S_XNOR_B32, "s_xnor_b32", E_SOP2, 32, 2, 0)                                      \
  X(S_AND_NOT1_B32, "s_and_not1_b32", E_SOP2, 34, 2, 0)                              \
  X(S_AND_NOT1_B64, "s_and_not1_b64", E_SOP2, 35, 2, F_ALL64)                        \
  X(S_OR_NOT1_B32, "s_or_not1_b32", E_SOP2, 36, 2, 0)                                \
  X(S_OR_NOT1_B64, "s_or_not1_b64", E_SOP2, 37, 2, F_ALL64)                          \
  X(S_BFE_U32, "s_bfe_u32", E_SOP2, 38, 2, 0)                                        \
  X(S_BFE_I32, "s_bfe_i32", E_SOP2, 39, 2, 0)                                        \
  X(S_BFE_U64, "s_bfe_u64", E_SOP2, 40, 2, F_D64 | F_S0_64)                          \
  X(S_BFE_I64, "s_bfe_i64", E_SOP2, 41, 2, F_D64 | F_S0_64)                          \
  X(S_BFM_B32, "s_bfm_b32", E_SOP2, 42, 2, 0)                                        \
  X(S_MUL_I32, "s_mul_i32", E_SOP2, 44, 2, 0)                                        \
  X(S_MUL_HI_U32, "s_mul_hi_u32", E_SOP2, 45, 2, 0)                                  \
  X(S_MUL_HI_I32, "s_mul_hi_i32", E_SOP2, 46, 2, 0)                                  \
  X(S_CSELECT_B32, "s_cselect_b32", E_SOP2, 48, 2, 0)                                \
  X(S_CSELECT_B64, "s_cselect_b64", E_SOP2, 49, 2, F_ALL64)                          \
  X(S_PACK_LL_B32_B16, "s_pack_ll_b32_b16", E_SOP2, 50, 2, 0)                        \
  X(S_PACK_LH_B32_B16, "s_pack_lh_b32_b16", E_SOP2, 51, 2, 0)                        \
  X(S_PACK_HH_B32_B16, "s_pack_hh_b32_b16", E_SOP2, 52, 2, 0)                        \
  X(S_PACK_HL_B32_B16, "s_pack_hl_b32_b16", E_SOP2, 53, 2, 0)                        \
  /* SOP1 */                                                                         \
  X(S_MOV_B32, "s_mov_b32", E_SOP1, 0, 1, 0)                                         \
  X(S_MOV_B64, "s_mov_b64", E_SOP1, 1, 1, F_D64 | F_S0_64)                           \
  X(S_CMOV_B32, "s_cmov_b32", E_SOP1, 2, 1, 0)                                       \
  X(S_CMOV_B64, "s_cmov_b64", E_SOP1, 3, 1, F_D64 | F_S0_64)                         \
  X(S_BREV_B32, "s_brev_b32", E_SOP1, 4, 1, 0)                                       \
  X(S_BREV_B64, "s_brev_b64", E_SOP1, 5, 1, F_D64 | F_S0_64)                         \
  X(S_CTZ_I32_B32, "s_ctz_i32_b32", E_SOP1, 8, 1, 0)                                 \
  X(S_CTZ_I32_B64, "s_ctz_i32_b64", E_SOP1, 9, 1, F_S0_64)                           \
  X(S_CLZ_I32_U32, "s_clz_i32_u32", E_SOP1, 10, 1, 0)                                \
  X(S_CLZ_I32_U64, "s_clz_i32_u64", E_SOP1, 11, 1, F_S0_64)                          \
  X(S_SEXT_I32_I8, "s_sext_i32_i8", E_SOP1, 14, 1, 0)                                \
  X(S_SEXT_I32_I16, "s_sext_i32_i16", E_SOP1, 15, 1, 0)                              \
  X(S_BITSET0_B32, "s_bitset0_b32", E_SOP1, 16, 1, 0)                                \
  X(S_BITSET1_B32, "s_bitset1_b32", E_SOP1, 18, 1, 0)                                \
  X(S_ABS_I32, "s_abs_i32", E_SOP1, 21, 1, 0)                                        \
  X(S_BCNT1_I32_B32, "s_bcnt1_i32_b32", E_SOP1, 24, 1, 0)                            \
  X(S_BCNT1_I32_B64, "s_bcnt1_i32_b64", E_SOP1, 25, 1, F_S0_64)                      \
  X(S_NOT_B32, "s_not_b32", E_SOP1, 30, 1, 0)                                        \
  X(S_NOT_B64, "s_not_b64", E_SOP1, 31, 1, F_D64 | F_S0_64)                          \
  X(S_AND_SAVEEXEC_B32, "s_and_saveexec_b32", E_SOP1, 32, 1, 0)                      \
  X(S_OR_SAVEEXEC_B32, "s_or_saveexec_b32", E_SOP1, 34, 1, 0)                        \
  X(S_XOR_SAVEEXEC_B32, "s_xor_saveexec_b32", E_SOP1, 36, 1, 0)                      \
  X(S_AND_NOT0_SAVEEXEC_B32, "s_and_not0_saveexec_b32", E_SOP1, 44, 1, 0)            \
  X(S_OR_NOT0_SAVEEXEC_B32, "s_or_not0_saveexec_b32", E_SOP1, 46, 1, 0)              \
  X(S_AND_NOT1_SAVEEXEC_B32, "s_and_not1_saveexec_b32", E_SOP1, 48, 1, 0)            \
  X(S_OR_NOT1_SAVEEXEC_B32, "s_or_not1_saveexec_b32", E_SOP1, 50, 1, 0)              \
  X(S_AND_NOT0_WREXEC_B32, "s_and_not0_wrexec_b32", E_SOP1, 52, 1, 0)                \
  X(S_AND_NOT1_WREXEC_B32, "s_and_not1_wrexec_b32", E_SOP1, 54, 1, 0)                \
  X(S_GETPC_B64, "s_getpc_b64", E_SOP1, 71, 0, F_D64)                                \
  X(S_SETPC_B64, "s_setpc_b64", E_SOP1, 72, 1, F_S0_64)                              \
  /* SOPC */                                                                         \
  X(S_CMP_EQ_I32, "s_cmp_eq_i32", E_SOPC, 0, 2, 0)                                   \
  X(S_CMP_LG_I32, "s_cmp_lg_i32", E_SOPC, 1, 2, 0)                                   \
  X(S_CMP_GT_I32, "s_cmp_gt_i32", E_SOPC, 2, 2, 0)                                   \
  X(S_CMP_GE_I32, "s_cmp_ge_i32", E_SOPC, 3, 2, 0)                                   \
  X(S_CMP_LT_I32, "s_cmp_lt_i32", E_SOPC, 4, 2, 0)                                   \
  X(S_CMP_LE_I32, "s_cmp_le_i32", E_SOPC, 5, 2, 0)                                   \
  X(S_CMP_EQ_U32, "s_cmp_eq_u32", E_SOPC, 6, 2, 0)                                   \
  X(S_CMP_LG_U32, "s_cmp_lg_u32", E_SOPC, 7, 2, 0)                                   \
  X(S_CMP_GT_U32, "s_cmp_gt_u32", E_SOPC, 8, 2, 0)                                   \
  X(S_CMP_GE_U32, "s_cmp_ge_u32", E_SOPC, 9, 2, 0)                                   \
  X(S_CMP_LT_U32, "s_cmp_lt_u32", E_SOPC, 10, 2, 0)                                  \
  X(S_CMP_LE_U32, "s_cmp_le_u32", E_SOPC, 11, 2, 0)                                  \
  X(S_BITCMP0_B32, "s_bitcmp0_b32", E_SOPC, 12, 2, 0)                                \
  X(S_BITCMP1_B32, "s_bitcmp1_b32", E_SOPC, 13, 2, 0)                                \
  X(S_CMP_EQ_U64, "s_cmp_eq_u64", E_SOPC, 16, 2, F_S0_64 | F_S1_64)                  \
  X(S_CMP_LG_U64, "s_cmp_lg_u64", E_SOPC, 17, 2, F_S0_64 | F_S1_64)                  \
  /* SOPK */                                                                         \
  X(S_MOVK_I32, "s_movk_i32", E_SOPK, 0, 0, 0)                                       \
  X(S_VERSION, "s_version", E_SOPK, 1, 0, 0)                                         \
  X(S_CMOVK_I32, "s_cmovk_i32", E_SOPK, 2, 0, 0)                                     \
  X(S_CMPK_EQ_I32, "s_cmpk_eq_i32", E_SOPK, 3, 0, 0)                                 \
  X(S_CMPK_LG_I32, "s_cmpk_lg_i32", E_SOPK, 4, 0, 0)                                 \
  X(S_CMPK_GT_I32, "s_cmpk_gt_i32", E_SOPK, 5, 0, 0)                                 \
  X(S_CMPK_GE_I32, "s_cmpk_ge_i32", E_SOPK, 6, 0, 0)                                 \
  X(S_CMPK_LT_I32, "s_cmpk_lt_i32", E_SOPK, 7, 0, 0)                                 \
  X(S_CMPK_LE_I32, "s_cmpk_le_i32", E_SOPK, 8, 0, 0)                                 \
  X(S_CMPK_EQ_U32, "s_cmpk_eq_u32", E_SOPK, 9, 0, 0)                                 \
  X(S_CMPK_LG_U32, "s_cmpk_lg_u32", E_SOPK, 10, 0, 0)                                \
  X(S_CMPK_GT_U32, "s_cmpk_gt_u32", E_SOPK, 11, 0, 0)                                \
  X(S_CMPK_GE_U32, "s_cmpk_ge_u32", E_SOPK, 12, 0, 0)                                \
  X(S_CMPK_LT_U32, "s_cmpk_lt_u32", E_SOPK, 13, 0, 0)                                \
  X(S_CMPK_LE_U32, "s_cmpk_le_u32", E_SOPK, 14, 0, 0)                                \
  X(S_ADDK_I32, "s_addk_i32", E_SOPK, 15, 0, 0)                                      \
  X(S_MULK_I32, "s_mulk_i32", E_SOPK, 16, 0, 0)                                      \
  X(S_GETREG_B32, "s_getreg_b32", E_SOPK, 17, 0, 0)                                  \
  X(S_SETREG_B32, "s_setreg_b32", E_SOPK, 18, 0, 0)                                  \
  X(S_SETREG_IMM32_B32, "s_setreg_imm32_b32", E_SOPK, 19, 0, 0)                      \
  X(S_WAITCNT_VSCNT, "s_waitcnt_vscnt", E_SOPK, 24, 0, 0)                            \
  X(S_WAITCNT_VMCNT, "s_waitcnt_vmcnt", E_SOPK, 25, 0, 0)                            \
  X(S_WAITCNT_EXPCNT, "s_waitcnt_expcnt", E_SOPK, 26, 0, 0)                          \
  X(S_WAITCNT_LGKMCNT, "s_waitcnt_lgkmcnt", E_SOPK, 27, 0, 0)                        \
  /* SOPP */                                                                         \
  X(S_NOP, "s_nop", E_SOPP, 0, 0, 0)                                                 \
  X(S_SLEEP, "s_sleep", E_SOPP, 3, 0, 0)                                             \
  X(S_SET_INST_PREFETCH_DISTANCE, "s_set_inst_prefetch_distance", E_SOPP, 4, 0, 0)   \
  X(S_CLAUSE, "s_clause", E_SOPP, 5, 0, 0)                                           \
  X(S_DELAY_ALU, "s_delay_alu", E_SOPP, 7, 0, 0)                                     \
  X(S_WAITCNT_DEPCTR, "s_waitcnt_depctr", E_SOPP, 8, 0, 0)                           \
  X(S_WAITCNT, "s_waitcnt", E_SOPP, 9, 0, 0)                                         \
  X(S_WAIT_IDLE, "s_wait_idle", E_SOPP, 10, 0, 0)                                    \
  X(S_ROUND_MODE, "s_round_mode", E_SOPP, 17, 0, 0)                                  \
  X(S_DENORM_MODE, "s_denorm_mode", E_SOPP, 18, 0, 0)                                \
  X(S_CODE_END, "s_code_end", E_SOPP, 31, 0, 0)                                      \
  X(S_BRANCH, "s_branch", E_SOPP, 32, 0, 0)                                          \
  X(S_CBRANCH_SCC0, "s_cbranch_scc0", E_SOPP, 33, 0, 0)                              \
  X(S_CBRANCH_SCC1, "s_cbranch_scc1", E_SOPP, 34, 0, 0)                              \
  X(S_CBRANCH_VCCZ, "s_cbranch_vccz", E_SOPP, 35, 0, 0)                              \
  X(S_CBRANCH_VCCNZ, "s_cbranch_vccnz", E_SOPP, 36, 0, 0)                            \
  X(S_CBRANCH_EXECZ, "s_cbranch_execz", E_SOPP, 37, 0, 0)                            \
  X(S_CBRANCH_EXECNZ, "s_cbranch_execnz", E_SOPP, 38, 0, 0)                          \
  X(S_ENDPGM, "s_endpgm", E_SOPP, 48, 0, 0)                                          \
  X(S_SETPRIO, "s_setprio", E_SOPP, 53, 0, 0)                                        \
  X(S_SENDMSG, "s_sendmsg", E_SOPP, 54, 0, 0)                                        \
  X(S_ICACHE_INV, "s_icache_inv", E_SOPP, 60, 0, 0)                                  \
  X(S_BARRIER, "s_barrier", E_SOPP, 61, 0, 0)                                        \
  /* SMEM */                                                                         \
  X(S_LOAD_B32, "s_load_b32", E_SMEM, 0, 0, 0)                                       \
  X(S_LOAD_B64, "s_load_b64", E_SMEM, 1, 0, 0)                                       \
  X(S_LOAD_B128, "s_load_b128", E_SMEM, 2, 0, 0)                                     \
  X(S_LOAD_B256, "s_load_b256", E_SMEM, 3, 0, 0)                                     \
  X(S_LOAD_B512, "s_load_b512", E_SMEM, 4, 0, 0)                                     \
  /* VOP2 */                                                                         \
  X(V_CNDMASK_B32, "v_cndmask_b32", E_VOP2, 1, 2, F_CIN)                             \
  X(V_ADD_F32, "v_add_f32", E_VOP2, 3, 2, F_FP)                                      \
  X(V_SUB_F32, "v_sub_f32", E_VOP2, 4, 2, F_FP)                                      \
  X(V_SUBREV_F32, "v_subrev_f32", E_VOP2, 5, 2, F_FP)                                \
  X(V_MUL_DX9_ZERO_F32, "v_mul_dx9_zero_f32", E_VOP2, 7, 2, F_FP)                    \
  X(V_MUL_F32, "v_mul_f32", E_VOP2, 8, 2, F_FP)                                      \
  X(V_MUL_I32_I24, "v_mul_i32_i24", E_VOP2, 9, 2, 0)                                 \
  X(V_MUL_HI_I32_I24, "v_mul_hi_i32_i24", E_VOP2, 10, 2, 0)                          \
  X(V_MUL_U32_U24, "v_mul_u32_u24", E_VOP2, 11, 2, 0)                                \
  X(V_MUL_HI_U32_U24, "v_mul_hi_u32_u24", E_VOP2, 12, 2, 0)                          \
  X(V_MIN_F32, "v_min_f32", E_VOP2, 15, 2, F_FP)                                     \
  X(V_MAX_F32, "v_max_f32", E_VOP2, 16, 2, F_FP)                                     \
  X(V_MIN_I32, "v_min_i32", E_VOP2, 17, 2, 0)                                        \
  X(V_MAX_I32, "v_max_i32", E_VOP2, 18, 2, 0)                                        \
  X(V_MIN_U32, "v_min_u32", E_VOP2, 19, 2, 0)                                        \
  X(V_MAX_U32, "v_max_u32", E_VOP2, 20, 2, 0)                                        \
  X(V_LSHLREV_B32, "v_lshlrev_b32", E_VOP2, 24, 2, 0)                                \
  X(V_LSHRREV_B32, "v_lshrrev_b32", E_VOP2, 25, 2, 0)                                \
  X(V_ASHRREV_I32, "v_ashrrev_i32", E_VOP2, 26, 2, 0)                                \
  X(V_AND_B32, "v_and_b32", E_VOP2, 27, 2, 0)                                        \
  X(V_OR_B32, "v_or_b32", E_VOP2, 28, 2, 0)                                          \
  X(V_XOR_B32, "v_xor_b32", E_VOP2, 29, 2, 0)                                        \
  X(V_XNOR_B32, "v_xnor_b32", E_VOP2, 30, 2, 0)                                      \
  X(V_ADD_CO_CI_U32, "v_add_co_ci_u32", E_VOP2, 32, 2, F_CIN | F_COUT | F_VOP3B)     \
  X(V_SUB_CO_CI_U32, "v_sub_co_ci_u32", E_VOP2, 33, 2, F_CIN | F_COUT | F_VOP3B)     \
  X(V_SUBREV_CO_CI_U32, "v_subrev_co_ci_u32", E_VOP2, 34, 2, F_CIN | F_COUT | F_VOP3B) \
  X(V_ADD_NC_U32, "v_add_nc_u32", E_VOP2, 37, 2, 0)                                  \
  X(V_SUB_NC_U32, "v_sub_nc_u32", E_VOP2, 38, 2, 0)                                  \
  X(V_SUBREV_NC_U32, "v_subrev_nc_u32", E_VOP2, 39, 2, 0)                            \
  X(V_FMAC_F32, "v_fmac_f32", E_VOP2, 43, 2, F_FP)                                   \
  X(V_FMAMK_F32, "v_fmamk_f32", E_VOP2, 44, 2, F_FP | F_NOSFX)                       \
  X(V_FMAAK_F32, "v_fmaak_f32", E_VOP2, 45, 2, F_FP | F_NOSFX)                       \
  X(V_ADD_F16, "v_add_f16", E_VOP2, 50, 2, F_FP | F_F16)                             \
  X(V_SUB_F16, "v_sub_f16", E_VOP2, 51, 2, F_FP | F_F16)                             \
  X(V_SUBREV_F16, "v_subrev_f16", E_VOP2, 52, 2, F_FP | F_F16)                       \
  X(V_MUL_F16, "v_mul_f16", E_VOP2, 53, 2, F_FP | F_F16)                             \
  X(V_FMAC_F16, "v_fmac_f16", E_VOP2, 54, 2, F_FP | F_F16)                           \
  X(V_MAX_F16, "v_max_f16", E_VOP2, 57, 2, F_FP | F_F16)                             \
  X(V_MIN_F16, "v_min_f16", E_VOP2, 58, 2, F_FP | F_F16)                             \
  /* VOP1 */                                                                         \
  X(V_NOP, "v_nop", E_VOP1, 0, 0, 0)                                                 \
  X(V_MOV_B32, "v_mov_b32", E_VOP1, 1, 1, 0)                                         \
  X(V_READFIRSTLANE_B32, "v_readfirstlane_b32", E_VOP1, 2, 1, F_SDST | F_NOSFX)      \
  X(V_CVT_I32_F64, "v_cvt_i32_f64", E_VOP1, 3, 1, F_FP | F_S0_64)                    \
  X(V_CVT_F64_I32, "v_cvt_f64_i32", E_VOP1, 4, 1, F_D64)                             \
  X(V_CVT_F32_I32, "v_cvt_f32_i32", E_VOP1, 5, 1, 0)                                 \
  X(V_CVT_F32_U32, "v_cvt_f32_u32", E_VOP1, 6, 1, 0)                                 \
  X(V_CVT_U32_F32, "v_cvt_u32_f32", E_VOP1, 7, 1, F_FP)                              \
  X(V_CVT_I32_F32, "v_cvt_i32_f32", E_VOP1, 8, 1, F_FP)                              \
  X(V_CVT_F16_F32, "v_cvt_f16_f32", E_VOP1, 10, 1, F_FP)                             \
  X(V_CVT_F32_F16, "v_cvt_f32_f16", E_VOP1, 11, 1, F_FP | F_F16)                     \
  X(V_CVT_F32_F64, "v_cvt_f32_f64", E_VOP1, 15, 1, F_FP | F_S0_64)                   \
  X(V_CVT_F64_F32, "v_cvt_f64_f32", E_VOP1, 16, 1, F_FP | F_D64)                     \
  X(V_CVT_F32_UBYTE0, "v_cvt_f32_ubyte0", E_VOP1, 17, 1, 0)                          \
  X(V_CVT_F32_UBYTE1, "v_cvt_f32_ubyte1", E_VOP1, 18, 1, 0)                          \
  X(V_CVT_F32_UBYTE2, "v_cvt_f32_ubyte2", E_VOP1, 19, 1, 0)                          \
  X(V_CVT_F32_UBYTE3, "v_cvt_f32_ubyte3", E_VOP1, 20, 1, 0)                          \
  X(V_CVT_U32_F64, "v_cvt_u32_f64", E_VOP1, 21, 1, F_FP | F_S0_64)                   \
  X(V_CVT_F64_U32, "v_cvt_f64_u32", E_VOP1, 22, 1, F_D64)                            \
  X(V_TRUNC_F64, "v_trunc_f64", E_VOP1, 23, 1, F_FP | F_D64 | F_S0_64)               \
  X(V_CEIL_F64, "v_ceil_f64", E_VOP1, 24, 1, F_FP | F_D64 | F_S0_64)                 \
  X(V_RNDNE_F64, "v_rndne_f64", E_VOP1, 25, 1, F_FP | F_D64 | F_S0_64)               \
  X(V_FLOOR_F64, "v_floor_f64", E_VOP1, 26, 1, F_FP | F_D64 | F_S0_64)               \
  X(V_FRACT_F32, "v_fract_f32", E_VOP1, 32, 1, F_FP)                                 \
  X(V_TRUNC_F32, "v_trunc_f32", E_VOP1, 33, 1, F_FP)                                 \
  X(V_CEIL_F32, "v_ceil_f32", E_VOP1, 34, 1, F_FP)                                   \
  X(V_RNDNE_F32, "v_rndne_f32", E_VOP1, 35, 1, F_FP)                                 \
  X(V_FLOOR_F32, "v_floor_f32", E_VOP1, 36, 1, F_FP)                                 \
  X(V_EXP_F32, "v_exp_f32", E_VOP1, 37, 1, F_FP)                                     \
  X(V_LOG_F32, "v_log_f32", E_VOP1, 39, 1, F_FP)                                     \
  X(V_RCP_F32, "v_rcp_f32", E_VOP1, 42, 1, F_FP)                                     \
  X(V_RCP_IFLAG_F32, "v_rcp_iflag_f32", E_VOP1, 43, 1, F_FP)                         \
  X(V_RSQ_F32, "v_rsq_f32", E_VOP1, 46, 1, F_FP)                                     \
  X(V_RCP_F64, "v_rcp_f64", E_VOP1, 47, 1, F_FP | F_D64 | F_S0_64)                   \
  X(V_RSQ_F64, "v_rsq_f64", E_VOP1, 49, 1, F_FP | F_D64 | F_S0_64)                   \
  X(V_SQRT_F32, "v_sqrt_f32", E_VOP1, 51, 1, F_FP)                                   \
  X(V_SQRT_F64, "v_sqrt_f64", E_VOP1, 52, 1, F_FP | F_D64 | F_S0_64)                 \
  X(V_SIN_F32, "v_sin_f32", E_VOP1, 53, 1, F_FP)                                     \
  X(V_COS_F32, "v_cos_f32", E_VOP1, 54, 1, F_FP)                                     \
  X(V_NOT_B32, "v_not_b32", E_VOP1, 55, 1, 0)                                        \
  X(V_BFREV_B32, "v_bfrev_b32", E_VOP1, 56, 1, 0)                                    \
  X(V_CLZ_I32_U32, "v_clz_i32_u32", E_VOP1, 57, 1, 0)                                \
  X(V_CTZ_I32_B32, "v_ctz_i32_b32", E_VOP1, 58, 1, 0)                                \
  X(V_FREXP_EXP_I32_F64, "v_frexp_exp_i32_f64", E_VOP1, 60, 1, F_FP | F_S0_64)       \
  X(V_FREXP_MANT_F64, "v_frexp_mant_f64", E_VOP1, 61, 1, F_FP | F_D64 | F_S0_64)     \
  X(V_FRACT_F64, "v_fract_f64", E_VOP1, 62, 1, F_FP | F_D64 | F_S0_64)               \
  X(V_FREXP_EXP_I32_F32, "v_frexp_exp_i32_f32", E_VOP1, 63, 1, F_FP)                 \
  X(V_FREXP_MANT_F32, "v_frexp_mant_f32", E_VOP1, 64, 1, F_FP)                       \
  X(V_CVT_F16_U16, "v_cvt_f16_u16", E_VOP1, 80, 1, F_F16)                            \
  X(V_CVT_F16_I16, "v_cvt_f16_i16", E_VOP1, 81, 1, F_F16)                            \
  X(V_CVT_U16_F16, "v_cvt_u16_f16", E_VOP1, 82, 1, F_FP | F_F16)                     \
  X(V_CVT_I16_F16, "v_cvt_i16_f16", E_VOP1, 83, 1, F_FP | F_F16)                     \
  X(V_RCP_F16, "v_rcp_f16", E_VOP1, 84, 1, F_FP | F_F16)                             \
  X(V_SQRT_F16, "v_sqrt_f16", E_VOP1, 85, 1, F_FP | F_F16)                           \
  X(V_RSQ_F16, "v_rsq_f16", E_VOP1, 86, 1, F_FP | F_F16)                             \
  X(V_LOG_F16, "v_log_f16", E_VOP1, 87, 1, F_FP | F_F16)                             \
  X(V_EXP_F16, "v_exp_f16", E_VOP1, 88, 1, F_FP | F_F16)                             \
  X(V_FLOOR_F16, "v_floor_f16", E_VOP1, 91, 1, F_FP | F_F16)                         \
  X(V_CEIL_F16, "v_ceil_f16", E_VOP1, 92, 1, F_FP | F_F16)                           \
  X(V_TRUNC_F16, "v_trunc_f16", E_VOP1, 93, 1, F_FP | F_F16)                         \
  X(V_RNDNE_F16, "v_rndne_f16", E_VOP1, 94, 1, F_FP | F_F16)                         \
  X(V_SIN_F16, "v_sin_f16", E_VOP1, 96, 1, F_FP | F_F16)                             \
  X(V_COS_F16, "v_cos_f16", E_VOP1, 97, 1, F_FP | F_F16)                             \
  /* VOP3 only */                                                                    \
  X(V_MAD_I32_I24, "v_mad_i32_i24", E_VOP3, 522, 3, 0)                               \
  X(V_MAD_U32_U24, "v_mad_u32_u24", E_VOP3, 523, 3, 0)                               \
  X(V_BFE_U32, "v_bfe_u32", E_VOP3, 528, 3, 0)                                       \
  X(V_BFE_I32, "v_bfe_i32", E_VOP3, 529, 3, 0)                                       \
  X(V_BFI_B32, "v_bfi_b32", E_VOP3, 530, 3, 0)                                       \
  X(V_FMA_F32, "v_fma_f32", E_VOP3, 531, 3, F_FP)                                    \
  X(V_FMA_F64, "v_fma_f64", E_VOP3, 532, 3, F_FP | F_ALL64)                          \
  X(V_ALIGNBIT_B32, "v_alignbit_b32", E_VOP3, 534, 3, 0)                             \
  X(V_ALIGNBYTE_B32, "v_alignbyte_b32", E_VOP3, 535, 3, 0)                           \
  X(V_MIN3_F32, "v_min3_f32", E_VOP3, 537, 3, F_FP)                                  \
  X(V_MIN3_I32, "v_min3_i32", E_VOP3, 538, 3, 0)                                     \
  X(V_MIN3_U32, "v_min3_u32", E_VOP3, 539, 3, 0)                                     \
  X(V_MAX3_F32, "v_max3_f32", E_VOP3, 540, 3, F_FP)                                  \
  X(V_MAX3_I32, "v_max3_i32", E_VOP3, 541, 3, 0)                                     \
  X(V_MAX3_U32, "v_max3_u32", E_VOP3, 542, 3, 0)                                     \
  X(V_MED3_F32, "v_med3_f32", E_VOP3, 543, 3, F_FP)                                  \
  X(V_MED3_I32, "v_med3_i32", E_VOP3, 544, 3, 0)                                     \
  X(V_MED3_U32, "v_med3_u32", E_VOP3, 545, 3, 0)                                     \
  X(V_DIV_FIXUP_F32, "v_div_fixup_f32", E_VOP3, 551, 3, F_FP)                        \
  X(V_DIV_FIXUP_F64, "v_div_fixup_f64", E_VOP3, 552, 3, F_FP | F_ALL64)              \
  X(V_DIV_FMAS_F32, "v_div_fmas_f32", E_VOP3, 567, 3, F_FP)                          \
  X(V_DIV_FMAS_F64, "v_div_fmas_f64", E_VOP3, 568, 3, F_FP | F_ALL64)                \
  X(V_XOR3_B32, "v_xor3_b32", E_VOP3, 576, 3, 0)                                     \
  X(V_MAD_U16, "v_mad_u16", E_VOP3, 577, 3, F_F16)                                   \
  X(V_FMA_F16, "v_fma_f16", E_VOP3, 584, 3, F_FP | F_F16)                            \
  X(V_MIN3_F16, "v_min3_f16", E_VOP3, 585, 3, F_FP | F_F16)                          \
  X(V_MAX3_F16, "v_max3_f16", E_VOP3, 588, 3, F_FP | F_F16)                          \
  X(V_MED3_F16, "v_med3_f16", E_VOP3, 591, 3, F_FP | F_F16)                          \
  X(V_DIV_FIXUP_F16, "v_div_fixup_f16", E_VOP3, 596, 3, F_FP | F_F16)                \
  X(V_MIN3_I16, "v_min3_i16", E_VOP3, 586, 3, F_F16)                                 \
  X(V_MIN3_U16, "v_min3_u16", E_VOP3, 587, 3, F_F16)                                 \
  X(V_MAX3_I16, "v_max3_i16", E_VOP3, 589, 3, F_F16)                                 \
  X(V_MAX3_U16, "v_max3_u16", E_VOP3, 590, 3, F_F16)                                 \
  X(V_MED3_I16, "v_med3_i16", E_VOP3, 592, 3, F_F16)                                 \
  X(V_MED3_U16, "v_med3_u16", E_VOP3, 593, 3, F_F16)                                 \
  X(V_MAD_I16, "v_mad_i16", E_VOP3, 595, 3, F_F16)                                   \
  X(V_PERM_B32, "v_perm_b32", E_VOP3, 580, 3, 0)                                     \
  X(V_XAD_U32, "v_xad_u32", E_VOP3, 581, 3, 0)                                       \
  X(V_LSHL_ADD_U32, "v_lshl_add_u32", E_VOP3, 582, 3, 0)                             \
  X(V_ADD_LSHL_U32, "v_add_lshl_u32", E_VOP3, 583, 3, 0)                             \
  X(V_ADD3_U32, "v_add3_u32", E_VOP3, 597, 3, 0)                                     \
  X(V_LSHL_OR_B32, "v_lshl_or_b32", E_VOP3, 598, 3, 0)                               \
  X(V_AND_OR_B32, "v_and_or_b32", E_VOP3, 599, 3, 0)                                 \
  X(V_OR3_B32, "v_or3_b32", E_VOP3, 600, 3, 0)                                       \
  X(V_MAD_U32_U16, "v_mad_u32_u16", E_VOP3, 601, 3, F_F16)                           \
  X(V_MAD_I32_I16, "v_mad_i32_i16", E_VOP3, 602, 3, F_F16)                           \
  X(V_MAXMIN_F32, "v_maxmin_f32", E_VOP3, 606, 3, F_FP)                              \
  X(V_MINMAX_F32, "v_minmax_f32", E_VOP3, 607, 3, F_FP)                              \
  X(V_MAXMIN_U32, "v_maxmin_u32", E_VOP3, 610, 3, 0)                                 \
  X(V_MINMAX_U32, "v_minmax_u32", E_VOP3, 611, 3, 0)                                 \
  X(V_MAXMIN_I32, "v_maxmin_i32", E_VOP3, 612, 3, 0)                                 \
  X(V_MINMAX_I32, "v_minmax_i32", E_VOP3, 613, 3, 0)                                 \
  X(V_DIV_SCALE_F32, "v_div_scale_f32", E_VOP3, 764, 3, F_FP | F_VOP3B)              \
  X(V_DIV_SCALE_F64, "v_div_scale_f64", E_VOP3, 765, 3, F_FP | F_ALL64 | F_VOP3B)    \
  X(V_MAD_U64_U32, "v_mad_u64_u32", E_VOP3, 766, 3, F_D64 | F_S2_64 | F_VOP3B)       \
  X(V_MAD_I64_I32, "v_mad_i64_i32", E_VOP3, 767, 3, F_D64 | F_S2_64 | F_VOP3B)       \
  X(V_ADD_CO_U32, "v_add_co_u32", E_VOP3, 768, 2, F_VOP3B)                           \
  X(V_SUB_CO_U32, "v_sub_co_u32", E_VOP3, 769, 2, F_VOP3B)                           \
  X(V_SUBREV_CO_U32, "v_subrev_co_u32", E_VOP3, 770, 2, F_VOP3B)                     \
  X(V_ADD_NC_U16, "v_add_nc_u16", E_VOP3, 771, 2, F_F16)                             \
  X(V_SUB_NC_U16, "v_sub_nc_u16", E_VOP3, 772, 2, F_F16)                             \
  X(V_MUL_LO_U16, "v_mul_lo_u16", E_VOP3, 773, 2, F_F16)                             \
  X(V_MAX_U16, "v_max_u16", E_VOP3, 777, 2, F_F16)                                   \
  X(V_MAX_I16, "v_max_i16", E_VOP3, 778, 2, F_F16)                                   \
  X(V_MIN_U16, "v_min_u16", E_VOP3, 779, 2, F_F16)                                   \
  X(V_MIN_I16, "v_min_i16", E_VOP3, 780, 2, F_F16)                                   \
  X(V_ADD_NC_I16, "v_add_nc_i16", E_VOP3, 781, 2, F_F16)                             \
  X(V_SUB_NC_I16, "v_sub_nc_i16", E_VOP3, 782, 2, F_F16)                             \
  X(V_PACK_B32_F16, "v_pack_b32_f16", E_VOP3, 785, 2, F_FP | F_F16)                  \
  X(V_LDEXP_F32, "v_ldexp_f32", E_VOP3, 796, 2, F_FP)                                \
  X(V_BFM_B32, "v_bfm_b32", E_VOP3, 797, 2, 0)                                       \
  X(V_BCNT_U32_B32, "v_bcnt_u32_b32", E_VOP3, 798, 2, 0)                             \
  X(V_MBCNT_LO_U32_B32, "v_mbcnt_lo_u32_b32", E_VOP3, 799, 2, 0)                     \
  X(V_MBCNT_HI_U32_B32, "v_mbcnt_hi_u32_b32", E_VOP3, 800, 2, 0)                     \
  X(V_SUB_NC_I32, "v_sub_nc_i32", E_VOP3, 805, 2, 0)                                 \
  X(V_ADD_NC_I32, "v_add_nc_i32", E_VOP3, 806, 2, 0)                                 \
  X(V_ADD_F64, "v_add_f64", E_VOP3, 807, 2, F_FP | F_ALL64)                          \
  X(V_MUL_F64, "v_mul_f64", E_VOP3, 808, 2, F_FP | F_ALL64)                          \
  X(V_MIN_F64, "v_min_f64", E_VOP3, 809, 2, F_FP | F_ALL64)                          \
  X(V_MAX_F64, "v_max_f64", E_VOP3, 810, 2, F_FP | F_ALL64)                          \
  X(V_LDEXP_F64, "v_ldexp_f64", E_VOP3, 811, 2, F_FP | F_D64 | F_S0_64)              \
  X(V_MUL_LO_U32, "v_mul_lo_u32", E_VOP3, 812, 2, 0)                                 \
  X(V_MUL_HI_U32, "v_mul_hi_u32", E_VOP3, 813, 2, 0)                                 \
  X(V_MUL_HI_I32, "v_mul_hi_i32", E_VOP3, 814, 2, 0)                                 \
  X(V_LSHLREV_B16, "v_lshlrev_b16", E_VOP3, 824, 2, F_F16)                           \
  X(V_LSHRREV_B16, "v_lshrrev_b16", E_VOP3, 825, 2, F_F16)                           \
  X(V_ASHRREV_I16, "v_ashrrev_i16", E_VOP3, 826, 2, F_F16)                           \
  X(V_LSHLREV_B64, "v_lshlrev_b64", E_VOP3, 828, 2, F_D64 | F_S1_64)                 \
  X(V_LSHRREV_B64, "v_lshrrev_b64", E_VOP3, 829, 2, F_D64 | F_S1_64)                 \
  X(V_ASHRREV_I64, "v_ashrrev_i64", E_VOP3, 830, 2, F_D64 | F_S1_64)                 \
  X(V_READLANE_B32, "v_readlane_b32", E_VOP3, 864, 2, F_SDST)                        \
  X(V_WRITELANE_B32, "v_writelane_b32", E_VOP3, 865, 2, 0)                           \
  X(V_AND_B16, "v_and_b16", E_VOP3, 866, 2, F_F16)                                   \
  X(V_OR_B16, "v_or_b16", E_VOP3, 867, 2, F_F16)                                     \
  X(V_XOR_B16, "v_xor_b16", E_VOP3, 868, 2, F_F16)                                   \
  /* VOPD-only halves */                                                             \
  X(V_DUAL_FMAAK_F32, "v_dual_fmaak_f32", E_VOPD, 1, 2, F_FP)                        \
  X(V_DUAL_FMAMK_F32, "v_dual_fmamk_f32", E_VOPD, 2, 2, F_FP)                        \
  /* MUBUF (cache invalidates only) */                                               \
  X(BUFFER_GL0_INV, "buffer_gl0_inv", E_MUBUF, 43, 0, 0)                             \
  X(BUFFER_GL1_INV, "buffer_gl1_inv", E_MUBUF, 44, 0, 0)                             \
  /* DS */                                                                           \
  X(DS_ADD_U32, "ds_add_u32", E_DS, 0, 0, 0)                                         \
  X(DS_STORE_B32, "ds_store_b32", E_DS, 13, 0, 0)                                    \
  X(DS_STORE_2ADDR_B32, "ds_store_2addr_b32", E_DS, 14, 0, 0)                        \
  X(DS_STORE_B8, "ds_store_b8", E_DS, 30, 0, 0)                                      \
  X(DS_STORE_B16, "ds_store_b16", E_DS, 31, 0, 0)                                    \
  X(DS_LOAD_B32, "ds_load_b32", E_DS, 54, 0, 0)                                      \
  X(DS_LOAD_2ADDR_B32, "ds_load_2addr_b32", E_DS, 55, 0, 0)                          \
  X(DS_LOAD_I8, "ds_load_i8", E_DS, 57, 0, 0)                                        \
  X(DS_LOAD_U8, "ds_load_u8", E_DS, 58, 0, 0)                                        \
  X(DS_LOAD_I16, "ds_load_i16", E_DS, 59, 0, 0)                                      \
  X(DS_LOAD_U16, "ds_load_u16", E_DS, 60, 0, 0)                                      \
  X(DS_STORE_B64, "ds_store_b64", E_DS, 77, 0, 0)                                    \
  X(DS_STORE_2ADDR_B64, "ds_store_2addr_b64", E_DS, 78, 0, 0)                        \
  X(DS_LOAD_B64, "ds_load_b64", E_DS, 118, 0, 0)                                     \
  X(DS_LOAD_2ADDR_B64, "ds_load_2addr_b64", E_DS, 119, 0, 0)                         \
  X(DS_STORE_B96, "ds_store_b96", E_DS, 222, 0, 0)                                   \
  X(DS_STORE_B128, "ds_store_b128", E_DS, 223, 0, 0)                                 \
  X(DS_LOAD_B96, "ds_load_b96", E_DS, 254, 0, 0)                                     \
  X(DS_LOAD_B128, "ds_load_b128", E_DS, 255, 0, 0)                                   \
  /* FLAT / GLOBAL / SCRATCH (one opcode space; the name's prefix follows the segment) */ \
  X(M_LOAD_U8, "load_u8", E_FLAT, 16, 0, 0)                                          \
  X(M_LOAD_I8, "load_i8", E_FLAT, 17, 0, 0)                                          \
  X(M_LOAD_U16, "load_u16", E_FLAT, 18, 0, 0)                                        \
  X(M_LOAD_I16, "load_i16", E_FLAT, 19, 0, 0)                                        \
  X(M_LOAD_B32, "load_b32", E_FLAT, 20, 0, 0)                                        \
  X(M_LOAD_B64, "load_b64", E_FLAT, 21, 0, 0)                                        \
  X(M_LOAD_B96, "load_b96", E_FLAT, 22, 0, 0)                                        \
  X(M_LOAD_B128, "load_b128", E_FLAT, 23, 0, 0)                                      \
  X(M_STORE_B8, "store_b8", E_FLAT, 24, 0, 0)                                        \
  X(M_STORE_B16, "store_b16", E_FLAT, 25, 0, 0)                                      \
  X(M_STORE_B32, "store_b32", E_FLAT, 26, 0, 0)                                      \
  X(M_STORE_B64, "store_b64", E_FLAT, 27, 0, 0)                                      \
  X(M_STORE_B96, "store_b96", E_FLAT, 28, 0, 0)                                      \
  X(M_STORE_B128, "store_b128", E_FLAT, 29, 0, 0)                                    \
  X(M_LOAD_D16_U8, "load_d16_u8", E_FLAT, 30, 0, 0)                                  \
  X(M_LOAD_D16_I8, "load_d16_i8", E_FLAT, 31, 0, 0)                                  \
  X(M_LOAD_D16_B16, "load_d16_b16", E_FLAT, 32, 0, 0)                                \
  X(M_LOAD_D16_HI_U8, "load_d16_hi_u8", E_FLAT, 33, 0, 0)                            \
  X(M_LOAD_D16_HI_I8, "load_d16_hi_i8", E_FLAT, 34, 0, 0)                            \
  X(M_LOAD_D16_HI_B16, "load_d16_hi_b16", E_FLAT, 35, 0, 0)                          \
  X(M_STORE_D16_HI_B8, "store_d16_hi_b8", E_FLAT, 36, 0, 0)                          \
  X(M_STORE_D16_HI_B16, "store_d16_hi_b16", E_FLAT, 37, 0, 0)                        \
  /* VOP3P: packed 16-bit (two halves, op_sel / op_sel_hi pick the source halves) */ \
  X(V_PK_MAD_I16, "v_pk_mad_i16", E_VOP3P, 0, 3, F_F16)                              \
  X(V_PK_MUL_LO_U16, "v_pk_mul_lo_u16", E_VOP3P, 1, 2, F_F16)                        \
  X(V_PK_ADD_I16, "v_pk_add_i16", E_VOP3P, 2, 2, F_F16)                              \
  X(V_PK_SUB_I16, "v_pk_sub_i16", E_VOP3P, 3, 2, F_F16)                              \
  X(V_PK_LSHLREV_B16, "v_pk_lshlrev_b16", E_VOP3P, 4, 2, F_F16)                      \
  X(V_PK_LSHRREV_B16, "v_pk_lshrrev_b16", E_VOP3P, 5, 2, F_F16)                      \
  X(V_PK_ASHRREV_I16, "v_pk_ashrrev_i16", E_VOP3P, 6, 2, F_F16)                      \
  X(V_PK_MAX_I16, "v_pk_max_i16", E_VOP3P, 7, 2, F_F16)                              \
  X(V_PK_MIN_I16, "v_pk_min_i16", E_VOP3P, 8, 2, F_F16)                              \
  X(V_PK_MAD_U16, "v_pk_mad_u16", E_VOP3P, 9, 3, F_F16)                              \
  X(V_PK_ADD_U16, "v_pk_add_u16", E_VOP3P, 10, 2, F_F16)                             \
  X(V_PK_SUB_U16, "v_pk_sub_u16", E_VOP3P, 11, 2, F_F16)                             \
  X(V_PK_MAX_U16, "v_pk_max_u16", E_VOP3P, 12, 2, F_F16)                             \
  X(V_PK_MIN_U16, "v_pk_min_u16", E_VOP3P, 13, 2, F_F16)                             \
  X(V_PK_FMA_F16, "v_pk_fma_f16", E_VOP3P, 14, 3, F_FP | F_F16)                      \
  X(V_PK_ADD_F16, "v_pk_add_f16", E_VOP3P, 15, 2, F_FP | F_F16)                      \
  X(V_PK_MUL_F16, "v_pk_mul_f16", E_VOP3P, 16, 2, F_FP | F_F16)                      \
  X(V_PK_MIN_F16, "v_pk_min_f16", E_VOP3P, 17, 2, F_FP | F_F16)                      \
  X(V_PK_MAX_F16, "v_pk_max_f16", E_VOP3P, 18, 2, F_FP | F_F16)                      \
  X(V_DOT2_F32_F16, "v_dot2_f32_f16", E_VOP3P, 19, 3, F_FP)                          \
  X(V_DOT4_I32_IU8, "v_dot4_i32_iu8", E_VOP3P, 22, 3, 0)                             \
  X(V_DOT4_U32_U8, "v_dot4_u32_u8", E_VOP3P, 23, 3, 0)                               \
  X(V_DOT8_I32_IU4, "v_dot8_i32_iu4", E_VOP3P, 24, 3, 0)                             \
  X(V_DOT8_U32_U4, "v_dot8_u32_u4", E_VOP3P, 25, 3, 0)                               \
  X(V_DOT2_F32_BF16, "v_dot2_f32_bf16", E_VOP3P, 26, 3, F_FP)                        \
  X(V_FMA_MIX_F32, "v_fma_mix_f32", E_VOP3P, 32, 3, F_FP)                            \
  X(V_FMA_MIXLO_F16, "v_fma_mixlo_f16", E_VOP3P, 33, 3, F_FP)                        \
  X(V_FMA_MIXHI_F16, "v_fma_mixhi_f16", E_VOP3P, 34, 3, F_FP)

enum {
#define X(id, name, enc, op, nsrc, flags) R3_##id,
  RDNA3_OPS(X)
#undef X
  R3_VOPC_BASE /* compares: R3_VOPC_BASE + VOPC opcode (0..255) */
};
#define R3_NOPS (R3_VOPC_BASE + 256)

#endif
