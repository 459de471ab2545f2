/* RDNA3 executor: runs a decoded program (rdna3_decode.c) over a dispatch, workgroup by workgroup. One wave = 32
 * lanes; SGPRs, VGPRs ([register][lane], so an operation is a loop over 32 adjacent values), EXEC/VCC/SCC, LDS per
 * workgroup. The waves of a workgroup run in turn between s_barrier points; everything executes in order, so
 * s_waitcnt is a no-op. Initial state per AMDGPUUsage.rst "Initial Kernel Execution State" (user SGPRs in the
 * order of the enables in kernel_code_properties, then workgroup ids from SGPR USER_SGPR_COUNT on; work-item ids
 * packed in v0 on gfx11: x bits 9:0, y 19:10, z 29:20). The instructions themselves: rdna3_valu.c, rdna3_salu.c,
 * rdna3_mem.c. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator_tests/rdna3_wave.h"

/* ---- errors ---- */

hcq_status r3_fault(ex *c, wave *w, const r3_inst *in, int lane, uint64_t addr, const char *what,
                        hcq_status inner) {
  char dis[192];
  r3_print(in, dis, sizeof dis);
  char who[32] = "scalar unit";
  if (lane >= 0) snprintf(who, sizeof who, "lane %d", lane);
  hcq_status st = hcq_status_make(HCQ_CODE_INVALID,
                                  "rdna3: GPU page fault: %s of address 0x%" PRIx64 " by `%s` at code offset 0x%x, "
                                  "%s of wave %d in workgroup (%u,%u,%u)%s%s",
                                  what, addr, dis, in->off_B, who, w->id, c->wg[0], c->wg[1], c->wg[2],
                                  inner ? ": " : "", inner ? hcq_status_message(inner) : "");
  hcq_status_free(inner);
  return st;
}

hcq_status r3_bad(ex *c, wave *w, const r3_inst *in, const char *why) {
  char dis[192];
  r3_print(in, dis, sizeof dis);
  return hcq_status_make(HCQ_CODE_UNSUPPORTED, "rdna3: `%s` at code offset 0x%x (wave %d, workgroup (%u,%u,%u)): %s",
                         dis, in->off_B, w->id, c->wg[0], c->wg[1], c->wg[2], why);
}

/* ---- control ---- */

/* Run wave w until it ends, reaches a barrier or fails. */
static hcq_status run_wave(ex *c, wave *w, int nwaves, rdna3_stats *stats) {
  const r3_inst *insts = c->p->insts;
  size_t n = c->p->n;
  uint64_t count = 0, lanes = 0;
  uint32_t exec = w->s[R3_EXEC], active = (uint32_t)__builtin_popcount(exec); /* recounted when EXEC changes */
  hcq_status st = HCQ_OK;
  while (!st) {
    if (w->pc >= n) {
      st = hcq_status_make(HCQ_CODE_INVALID, "rdna3: wave %d ran past the end of the code (no s_endpgm)", w->id);
      break;
    }
    const r3_inst *in = &insts[w->pc++];
    count++;
    if (w->s[R3_EXEC] != exec) exec = w->s[R3_EXEC], active = (uint32_t)__builtin_popcount(exec);
    lanes += active; /* the lanes this instruction issues for */
    if (c->d->trace) {
      char dis[192], line[288];
      r3_print(in, dis, sizeof dis);
      snprintf(line, sizeof line, "wg %u,%u,%u wave %d 0x%x: %s | exec=0x%08x scc=%d", c->wg[0], c->wg[1], c->wg[2],
               w->id, in->off_B, dis, w->s[R3_EXEC], w->scc);
      c->d->trace(c->d->trace_user, line);
    }
    switch (in->enc) {
      case E_VOP1: case E_VOP2: case E_VOPC: case E_VOP3: case E_VOP3P: case E_VOPD: st = r3_valu(c, w, in); break;
      case E_SOP1: case E_SOP2: case E_SOPC: st = r3_salu(c, w, in); break;
      case E_SOPK: st = r3_sopk(c, w, in); break;
      case E_SMEM: st = r3_smem(c, w, in); break;
      case E_DS: st = r3_ds(c, w, in); break;
      case E_FLAT: st = r3_flat(c, w, in); break;
      case E_MUBUF: break; /* buffer_gl0_inv / buffer_gl1_inv: no caches are modelled */
      case E_SOPP:
        switch (in->id) {
          case R3_S_ENDPGM: w->state = 2; goto out;
          case R3_S_BARRIER:
            if (nwaves > 1) {
              w->state = 1;
              goto out;
            }
            break;
          case R3_S_BRANCH: w->pc = in->target; break;
          case R3_S_CBRANCH_SCC0: if (!w->scc) w->pc = in->target; break;
          case R3_S_CBRANCH_SCC1: if (w->scc) w->pc = in->target; break;
          case R3_S_CBRANCH_VCCZ: if (!w->s[R3_VCC]) w->pc = in->target; break;
          case R3_S_CBRANCH_VCCNZ: if (w->s[R3_VCC]) w->pc = in->target; break;
          case R3_S_CBRANCH_EXECZ: if (!w->s[R3_EXEC]) w->pc = in->target; break;
          case R3_S_CBRANCH_EXECNZ: if (w->s[R3_EXEC]) w->pc = in->target; break;
          case R3_S_CODE_END: st = r3_bad(c, w, in, "executed the padding after the code (s_code_end)"); break;
          case R3_S_DENORM_MODE: st = r3_set_mode(c, w, in, (w->mode & ~0xf0u) | (((uint32_t)in->imm & 15) << 4)); break;
          case R3_S_ROUND_MODE: st = r3_set_mode(c, w, in, (w->mode & ~0xfu) | ((uint32_t)in->imm & 15)); break;
          default: break; /* s_nop, s_waitcnt*, s_clause, s_delay_alu, s_sendmsg, s_setprio, s_icache_inv */
        }
        break;
      default: st = r3_bad(c, w, in, "not implemented"); break;
    }
    if (c->max_total && stats->wave_insts + count > c->max_total) {
      st = hcq_status_make(HCQ_CODE_TIMEOUT, "rdna3: the dispatch ran over its budget of %" PRIu64 " instructions",
                           c->max_total);
    } else if (w->ninst + count > c->max_insts) {
      st = hcq_status_make(HCQ_CODE_TIMEOUT,
                           "rdna3: wave %d of workgroup (%u,%u,%u) executed %" PRIu64 " instructions without ending "
                           "(a hang?); now at code offset 0x%x",
                           w->id, c->wg[0], c->wg[1], c->wg[2], w->ninst + count, insts[w->pc < n ? w->pc : n - 1].off_B);
    }
  }
out:
  w->ninst += count;
  stats->wave_insts += count;
  stats->lane_insts += lanes;
  return st;
}

static void init_wave(ex *c, wave *w, int wid, uint32_t threads) {
  const rdna3_kd *kd = &c->p->kd;
  memset(w->s, 0, sizeof w->s);
  w->scc = false;
  w->state = 0;
  w->pc = c->p->entry;
  w->ninst = 0;
  w->id = wid;
  if (c->d->scratch_va) {
    uint64_t global = ((uint64_t)c->wg[2] * c->d->groups[1] + c->wg[1]) * c->d->groups[0] + c->wg[0];
    uint64_t slot = (global * (uint64_t)((threads + 31) / 32) + (uint64_t)wid) % c->d->scratch_slots;
    w->scratch_va = c->d->scratch_va + slot * 32u * kd->private_segment_B;
  }
  unsigned sg = 0;
  uint16_t cp = c->d->user_sgpr ? 0 : kd->code_props;
  for (uint32_t i = 0; c->d->user_sgpr && i < c->d->user_sgpr_count && i < 16; i++) w->s[i] = c->d->user_sgpr[i];
  if (cp & 1) sg += 4;                     /* private segment buffer: not modelled (zeros) */
  if (cp & 2) {                            /* dispatch ptr */
    w->s[sg] = (uint32_t)c->d->dispatch_ptr_va, w->s[sg + 1] = (uint32_t)(c->d->dispatch_ptr_va >> 32);
    sg += 2;
  }
  if (cp & 4) sg += 2;                     /* queue ptr */
  if (cp & 8) {                            /* kernarg segment ptr */
    w->s[sg] = (uint32_t)c->d->kernarg_va, w->s[sg + 1] = (uint32_t)(c->d->kernarg_va >> 32);
    sg += 2;
  }
  sg = (kd->rsrc2 >> 1) & 31;              /* USER_SGPR_COUNT: system SGPRs follow */
  for (int d = 0; d < 3; d++)
    if ((kd->rsrc2 >> (7 + d)) & 1) w->s[sg++] = c->wg[d];
  uint32_t base = (uint32_t)wid * 32, bx = c->d->block[0], by = c->d->block[1];
  int ids = (kd->rsrc2 >> 11) & 3;         /* ENABLE_VGPR_WORKITEM_ID: 0 x, 1 x+y, 2 x+y+z */
  uint32_t exec = 0;
  for (int l = 0; l < 32; l++) {
    uint32_t t = base + (uint32_t)l;
    if (t < threads) exec |= 1u << l;
    uint32_t x = t % bx, y = t / bx % by, z = t / (bx * by);
    w->v[0][l] = x | (ids >= 1 ? y << 10 : 0) | (ids >= 2 ? z << 20 : 0);
  }
  w->s[R3_EXEC] = exec;
  /* MODE from rsrc1: FLOAT_ROUND_MODE_32 13:12, _16_64 15:14, FLOAT_DENORM_MODE_32 17:16, _16_64 19:18,
   * ENABLE_DX10_CLAMP 21, ENABLE_IEEE_MODE 23 */
  uint32_t r1 = kd->rsrc1;
  w->mode = ((r1 >> 12) & 15) | ((r1 >> 16) & 15) << 4 | ((r1 >> 21) & 1) << 8 | ((r1 >> 23) & 1) << 9;
  int dm = (w->mode >> 4) & 3;
  w->ftz_in32 = dm == 0 || dm == 2;
  w->ftz_out32 = dm == 0 || dm == 1;
}

hcq_status rdna3_run(const rdna3_program *p, const rdna3_dispatch *d, const rdna3_mem_ops *mem, rdna3_stats *stats) {
  rdna3_stats dummy = {0};
  if (!stats) stats = &dummy;
  uint64_t threads64 = (uint64_t)d->block[0] * d->block[1] * d->block[2];
  if (!threads64 || threads64 > 1024)
    return hcq_status_make(HCQ_CODE_INVALID, "rdna3: a workgroup of %" PRIu64 " work-items (block %ux%ux%u); 1..1024 allowed",
                           threads64, d->block[0], d->block[1], d->block[2]);
  if (d->block[0] > 1024 || d->block[1] > 1024 || d->block[2] > 1024)
    return hcq_status_make(HCQ_CODE_INVALID, "rdna3: block dimension above 1023 cannot be packed in v0");
  if (d->scratch_va && !d->scratch_slots)
    return hcq_status_make(HCQ_CODE_INVALID, "rdna3: scratch in device memory at 0x%" PRIx64 " with no wave slots",
                           d->scratch_va);
  uint32_t threads = (uint32_t)threads64;
  int nwaves = (int)((threads + 31) / 32);
  ex c = {.p = p, .mem = mem, .d = d, .lds_B = p->kd.group_segment_B,
          .max_insts = d->max_wave_insts ? d->max_wave_insts : (1ull << 32), .max_total = d->max_total_insts};
  wave *waves = calloc((size_t)nwaves, sizeof *waves);
  uint32_t(*vregs)[32] = calloc((size_t)nwaves * 256, sizeof *vregs);
  uint8_t *lds = calloc(1, c.lds_B ? c.lds_B : 1);
  size_t priv = d->scratch_va ? 0 : (size_t)p->kd.private_segment_B * 32;
  uint8_t *scratch = priv ? calloc((size_t)nwaves, priv) : NULL;
  hcq_status st = HCQ_OK;
  if (!waves || !vregs || !lds || (priv && !scratch)) {
    st = hcq_status_make(HCQ_CODE_NOMEM, "rdna3: out of memory for %d waves", nwaves);
    goto done;
  }
  c.lds = lds;
  for (int i = 0; i < nwaves; i++) waves[i].v = vregs + (size_t)i * 256, waves[i].scratch = scratch ? scratch + i * priv : NULL;
  for (uint32_t gz = 0; gz < d->groups[2] && !st; gz++)
    for (uint32_t gy = 0; gy < d->groups[1] && !st; gy++)
      for (uint32_t gx = 0; gx < d->groups[0] && !st; gx++) {
        c.wg[0] = gx, c.wg[1] = gy, c.wg[2] = gz;
        memset(lds, 0, c.lds_B);
        for (int i = 0; i < nwaves; i++) init_wave(&c, &waves[i], i, threads);
        for (;;) {
          int waiting = 0;
          for (int i = 0; i < nwaves && !st; i++)
            if (waves[i].state == 0) st = run_wave(&c, &waves[i], nwaves, stats);
          if (st) break;
          for (int i = 0; i < nwaves; i++) waiting += waves[i].state == 1;
          if (!waiting) break;
          for (int i = 0; i < nwaves; i++)
            if (waves[i].state == 1) waves[i].state = 0; /* every live wave reached the barrier: release */
        }
      }
done:
  free(waves);
  free(vregs);
  free(lds);
  free(scratch);
  return st;
}
