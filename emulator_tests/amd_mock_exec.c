/* The AMD mock's kernel executor (see amd_mock_exec.h). Register fields: linux 6.1 gc_11_0_0_sh_mask.h as
 * autogen/amd_regs_gfx11.h holds them (COMPUTE_PGM_RSRC2 SCRATCH_EN, USER_SGPR, LDS_SIZE in 512-byte units on gfx11
 * (the driver's amd_hcq.c writes the same granule); COMPUTE_DISPATCH_INITIATOR CS_W32_EN). */
#include "emulator_tests/amd_mock_exec.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "autogen/amd_regs_gfx11.h"
#include "autogen/amd_regs_gfx9.h"
#include "emulator_tests/kfd_mock_internal.h"
#include "emulator_tests/rdna3.h"
#include "emulator_tests/rdna3_internal.h"

#define CACHE_N 128 /* decoded programs kept (benchmarks load 64 kernels) */
/* Decode at most this much from the program address (the end of its allocation comes first for every loaded code
 * object; the cap only bounds a program address inside a huge buffer). A load that fails past it names it. */
#define MAX_CODE_B ((uint64_t)64 << 20)

typedef struct centry {
  unsigned gpu;
  uint64_t pgm, code_B;
  uint32_t rsrc1, rsrc2, rsrc3, private_B; /* private_B: the lane share of scratch the program was loaded with */
  uint8_t *code; /* the bytes it was decoded from */
  rdna3_program *p;
  uint64_t used;
} centry;

struct amd_mock_exec {
  kfd_mock *m;
  centry cache[CACHE_N];
  uint64_t tick;
  uint64_t budget; /* wave-instructions per dispatch, 0 = none */
  amd_mock_exec_stats st;
  /* written on the mock's CP thread, read by tests polling from theirs: whole strings only, under fail_lock (an
   * unlocked read caught snprintf half way and saw a truncated message) */
  pthread_mutex_t fail_lock;
  char last_failure[KIF_DETAIL_MAX];
  bool faulted; /* the current dispatch raised a memory fault with its address */
};

/* Memory callbacks of one dispatch. The dispatch hook runs under the mock's lock (kfd_mock_cp_run), so no
 * allocation can be freed, unmapped or added while a kernel runs: the bounds of the allocation that served the last
 * access stay valid for the whole dispatch and are tried first (kernels touch few buffers, the mock may hold
 * hundreds). Anything outside them still goes through the full lookup, so every access is checked. */
typedef struct memctx {
  kfd_mock *m;
  unsigned gpu;
  bool *faulted;
  uint64_t lo, hi; /* [lo, hi): the last allocation an access fitted in (empty at first) */
} memctx;

/* KFD's memory-exception event carries the first faulting address (the driver's take_error reads it). */
static void fault(memctx *x, uint64_t va) {
  kfd_mock_raise_memory_fault(x->m, x->gpu, va);
  *x->faulted = true;
}

static bool mem_ok(memctx *x, uint64_t va, uint32_t n) {
  if (va >= x->lo && n <= x->hi - x->lo && va - x->lo <= x->hi - x->lo - n) return true;
  kfd_mock_alloc *a = kfd_mock_find_alloc(x->m, x->gpu, va, n);
  if (!a) return false;
  x->lo = a->va, x->hi = a->va + a->size_B;
  return true;
}

static hcq_status mem_rd(void *c, uint64_t va, uint32_t n, void *out) {
  memctx *x = c;
  if (!mem_ok(x, va, n))
    return fault(x, va), hcq_status_make(HCQ_CODE_KERNEL_FAULT, "read of %u bytes at 0x%" PRIx64 " outside every live allocation "
                           "mapped to gpu %u", n, va, x->gpu);
  memcpy(out, (const void *)(uintptr_t)va, n);
  return HCQ_OK;
}
static hcq_status mem_wr(void *c, uint64_t va, uint32_t n, const void *in) {
  memctx *x = c;
  if (!mem_ok(x, va, n))
    return fault(x, va), hcq_status_make(HCQ_CODE_KERNEL_FAULT, "write of %u bytes at 0x%" PRIx64 " outside every live allocation "
                           "mapped to gpu %u", n, va, x->gpu);
  memcpy((void *)(uintptr_t)va, in, n);
  return HCQ_OK;
}

static uint64_t now_ns(void) { /* CPU time of the mock's worker thread: the machine may be shared */
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int fail(char *detail, hcq_status st) {
  snprintf(detail, KIF_DETAIL_MAX, "%s", hcq_status_message(st));
  hcq_status_free(st);
  return 1;
}

/* Does the decode stop at word `at` of [w, w + n): the end of the words, or a word that does not decode? */
static bool decode_stops(const uint32_t *w, uint64_t n, uint64_t at) {
  if (at >= n) return true;
  r3_inst in;
  hcq_status st = r3_decode(w + at, n - at, (uint32_t)(at * 4), &in);
  hcq_status_free(st);
  return st != HCQ_OK;
}

/* The decoded program for this dispatch: a cached one whose code bytes are unchanged, or a fresh decode. */
static hcq_status program_for(amd_mock_exec *x, const kfd_mock_dispatch *d, const rdna3_kd *kd, rdna3_program **out) {
  uint64_t avail = kfd_mock_bytes_after(x->m, d->gpu, d->pgm_addr);
  uint64_t max_B = (avail < MAX_CODE_B ? avail : MAX_CODE_B) & ~(uint64_t)3;
  const uint8_t *code = (const uint8_t *)(uintptr_t)d->pgm_addr;
  const uint32_t *w = (const uint32_t *)code;
  /* The hardware fetches as it goes; the interpreter decodes ahead, so it takes the words that decode from the
   * program address on (what follows the code, padding or data, ends it). A branch past them fails the load, a
   * wave running past them fails the run: both loudly. A cached program is the same decode when its bytes are
   * unchanged and the word after them still ends the decode, so a hit costs a compare, not a decode of up to
   * MAX_CODE_B. */
  centry *victim = &x->cache[0];
  for (int i = 0; i < CACHE_N; i++) {
    centry *e = &x->cache[i];
    if (e->p && e->gpu == d->gpu && e->pgm == d->pgm_addr && e->code_B <= max_B && e->rsrc1 == d->rsrc1 &&
        e->rsrc2 == d->rsrc2 && e->rsrc3 == d->rsrc3 && e->private_B == kd->private_segment_B &&
        !memcmp(e->code, code, e->code_B) && decode_stops(w, max_B / 4, e->code_B / 4)) {
      e->used = ++x->tick;
      *out = e->p;
      return HCQ_OK;
    }
    if (e->used < victim->used) victim = e;
  }
  uint64_t ok = 0;
  for (r3_inst in; ok < max_B / 4;) {
    hcq_status st = r3_decode(w + ok, max_B / 4 - ok, (uint32_t)(ok * 4), &in);
    if (st) {
      if (!ok) return st;
      hcq_status_free(st);
      break;
    }
    ok += in.nwords;
  }
  uint64_t code_B = ok * 4;
  rdna3_program *p;
  hcq_status st = rdna3_load(code, code_B, d->pgm_addr, 0, kd, &p);
  if (st && code_B == max_B && max_B < avail)
    return hcq_status_annotate(st, "amd mock: the program's code was decoded only up to the mock's limit of %llu MiB",
                               (unsigned long long)(MAX_CODE_B >> 20));
  HCQ_TRY(st);
  uint8_t *copy = malloc(code_B);
  if (!copy) {
    rdna3_free(p);
    return hcq_status_make(HCQ_CODE_NOMEM, "amd mock: out of memory caching a program");
  }
  memcpy(copy, code, code_B);
  rdna3_free(victim->p);
  free(victim->code);
  *victim = (centry){d->gpu, d->pgm_addr, code_B, d->rsrc1, d->rsrc2, d->rsrc3, kd->private_segment_B, copy, p, ++x->tick};
  x->st.decodes++;
  *out = p;
  return HCQ_OK;
}

/* gfx9 scratch, checked before the ISA refusal (the interpreter cannot run gfx9 code): gfx90a takes a private
 * segment buffer V# in USER_DATA_0..3 (base_hi and ADD_TID_ENABLE from gc_9_4_2 SQ_BUF_RSRC_WORD1/3), gfx942 the
 * COMPUTE_DISPATCH_SCRATCH_BASE registers; either must cover TMPRING_SIZE's WAVES x WAVESIZE x 1 KiB (the gfx9
 * granule of ops_amd.py's _ensure_has_local_memory) inside one live allocation. Returns non-zero with detail set. */
static int check_gfx9_scratch(kfd_mock *m, const kfd_mock_dispatch *d, char *detail) {
  if (!(d->rsrc2 & AMD_GFX9_COMPUTE_PGM_RSRC2__SCRATCH_EN_MASK)) return 0;
  uint32_t waves = (d->tmpring_size & AMD_GFX9_COMPUTE_TMPRING_SIZE__WAVES_MASK) >> AMD_GFX9_COMPUTE_TMPRING_SIZE__WAVES__SHIFT;
  uint32_t wsize = (d->tmpring_size & AMD_GFX9_COMPUTE_TMPRING_SIZE__WAVESIZE_MASK) >> AMD_GFX9_COMPUTE_TMPRING_SIZE__WAVESIZE__SHIFT;
  uint64_t need = (uint64_t)waves * wsize * 1024u, base;
  const char *what;
  if (m->arch->gfx_target_version == 90402) {
    base = d->scratch_base, what = "DISPATCH_SCRATCH_BASE";
  } else {
    uint32_t nuser = (d->rsrc2 & AMD_GFX9_COMPUTE_PGM_RSRC2__USER_SGPR_MASK) >> AMD_GFX9_COMPUTE_PGM_RSRC2__USER_SGPR__SHIFT;
    if (nuser < 4)
      return snprintf(detail, KIF_DETAIL_MAX, "RSRC2.SCRATCH_EN with %u user SGPRs: no room for the private segment "
                      "buffer V# in USER_DATA_0..3", nuser), 1;
    base = (uint64_t)(d->user_data[1] & AMD_GFX9_SQ_BUF_RSRC_WORD1__BASE_ADDRESS_HI_MASK) << 32 | d->user_data[0];
    what = "private segment buffer V# base";
    if (!(d->user_data[3] & AMD_GFX9_SQ_BUF_RSRC_WORD3__ADD_TID_ENABLE_MASK))
      return snprintf(detail, KIF_DETAIL_MAX, "private segment buffer V# word 3 0x%08x lacks ADD_TID_ENABLE (lanes would "
                      "share their scratch)", d->user_data[3]), 1;
  }
  uint64_t have = base ? kfd_mock_bytes_after(m, d->gpu, base) : 0;
  if (!waves || !wsize || have < need)
    return snprintf(detail, KIF_DETAIL_MAX, "%s 0x%" PRIx64 ": TMPRING_SIZE 0x%x (%u waves x %u KiB = 0x%" PRIx64
                    " bytes) but 0x%" PRIx64 " bytes of a live allocation there", what, base, d->tmpring_size, waves,
                    wsize, need, have), 1;
  return 0;
}

static int run_dispatch_(amd_mock_exec *x, kfd_mock *m, const kfd_mock_dispatch *d, char *detail) {
  if (m->arch->gfx_target_version < 100000 && check_gfx9_scratch(m, d, detail)) return 1;
  if (strcmp(m->arch->name, "gfx1100") != 0)
    return snprintf(detail, KIF_DETAIL_MAX, "the mock executes gfx1100 code only (this mock GPU is %s)", m->arch->name), 1;
  if (!(d->initiator & AMD_GFX11_COMPUTE_DISPATCH_INITIATOR__CS_W32_EN_MASK))
    return snprintf(detail, KIF_DETAIL_MAX, "wave64 dispatch (initiator 0x%x lacks CS_W32_EN): the mock runs wave32",
                    d->initiator), 1;
  uint64_t scratch_va = 0;
  uint32_t scratch_slots = 0, lane_B = 0;
  if (d->rsrc2 & AMD_GFX11_COMPUTE_PGM_RSRC2__SCRATCH_EN_MASK) {
    /* gfx11 architected flat scratch: the CP gives each wave WAVESIZE x 256 bytes of the ring at
     * DISPATCH_SCRATCH_BASE; WAVES counts waves per shader engine (ops_amd.py _ensure_has_local_memory) */
    uint32_t waves = (d->tmpring_size & AMD_GFX11_COMPUTE_TMPRING_SIZE__WAVES_MASK) >> AMD_GFX11_COMPUTE_TMPRING_SIZE__WAVES__SHIFT;
    uint32_t wsize = (d->tmpring_size & AMD_GFX11_COMPUTE_TMPRING_SIZE__WAVESIZE_MASK) >>
                     AMD_GFX11_COMPUTE_TMPRING_SIZE__WAVESIZE__SHIFT;
    uint32_t engines = m->arch->array_count / m->arch->simd_arrays_per_engine;
    uint64_t need = (uint64_t)waves * engines * wsize * 256u;
    if (!waves || !wsize || !d->scratch_base)
      return snprintf(detail, KIF_DETAIL_MAX, "RSRC2.SCRATCH_EN with no scratch: TMPRING_SIZE 0x%x (WAVES %u, WAVESIZE %u), "
                      "DISPATCH_SCRATCH_BASE 0x%" PRIx64, d->tmpring_size, waves, wsize, d->scratch_base), 1;
    uint64_t have = kfd_mock_bytes_after(m, d->gpu, d->scratch_base);
    if (have < need)
      return snprintf(detail, KIF_DETAIL_MAX, "scratch at 0x%" PRIx64 " (TMPRING_SIZE 0x%x: %u waves x %u SEs x %u bytes = "
                      "0x%" PRIx64 " bytes) but only 0x%" PRIx64 " bytes of a live allocation there", d->scratch_base,
                      d->tmpring_size, waves, engines, wsize * 256u, need, have), 1;
    scratch_va = d->scratch_base, scratch_slots = waves * engines, lane_B = wsize * 256u / 32u;
  }
  uint32_t nuser = (d->rsrc2 & AMD_GFX11_COMPUTE_PGM_RSRC2__USER_SGPR_MASK) >> AMD_GFX11_COMPUTE_PGM_RSRC2__USER_SGPR__SHIFT;
  /* the interpreter's view of the initial state, built from the registers: s0..s[nuser-1] = USER_DATA_0.. as the CP
   * loads them (whatever the kernel descriptor asked the driver to put there: kernarg, dispatch packet pointers) */
  rdna3_kd kd = {.rsrc1 = d->rsrc1, .rsrc2 = d->rsrc2, .rsrc3 = d->rsrc3,
                 .group_segment_B = ((d->rsrc2 & AMD_GFX11_COMPUTE_PGM_RSRC2__LDS_SIZE_MASK) >>
                                     AMD_GFX11_COMPUTE_PGM_RSRC2__LDS_SIZE__SHIFT) * 512u,
                 .private_segment_B = lane_B, /* each lane's share of the wave's WAVESIZE bytes */
                 .code_props = (uint16_t)(1u << 10)};
  rdna3_program *p = NULL;
  hcq_status st = program_for(x, d, &kd, &p);
  if (st) return fail(detail, hcq_status_annotate(st, "decoding the program at 0x%" PRIx64, d->pgm_addr));
  memctx mc = {m, d->gpu, &x->faulted, 0, 0};
  rdna3_mem_ops mem = {&mc, mem_rd, mem_wr};
  rdna3_dispatch rd = {.groups = {d->grid[0], d->grid[1], d->grid[2]},
                       .block = {d->num_thread[0], d->num_thread[1], d->num_thread[2]},
                       .user_sgpr = d->user_data, .user_sgpr_count = nuser,
                       .max_total_insts = x->budget, .scratch_va = scratch_va, .scratch_slots = scratch_slots};
  rdna3_stats s = {0};
  uint64_t t0 = now_ns();
  st = rdna3_run(p, &rd, &mem, &s);
  x->st.exec_ns += now_ns() - t0;
  x->st.dispatches++;
  x->st.wave_insts += s.wave_insts;
  x->st.lane_insts += s.lane_insts;
  return st ? fail(detail, st) : 0;
}

/* The hook: any failure stops the queue and reaches the driver through KFD's memory-exception event (a refused or
 * undecodable program as a fault at the program address, like a trap), and is kept for tests. */
static int run_dispatch(void *user, kfd_mock *m, const kfd_mock_dispatch *d, char *detail) {
  amd_mock_exec *x = user;
  x->faulted = false;
  if (!run_dispatch_(x, m, d, detail)) return 0;
  if (!x->faulted) kfd_mock_raise_memory_fault(m, d->gpu, d->pgm_addr);
  pthread_mutex_lock(&x->fail_lock);
  snprintf(x->last_failure, sizeof x->last_failure, "%s", detail);
  pthread_mutex_unlock(&x->fail_lock);
  return 1;
}

hcq_status amd_mock_exec_attach(kfd_mock *m, amd_mock_exec **out) {
  amd_mock_exec *x = calloc(1, sizeof *x);
  if (!x) return hcq_status_make(HCQ_CODE_NOMEM, "amd mock: out of memory");
  x->m = m;
  pthread_mutex_init(&x->fail_lock, NULL);
  kfd_mock_set_dispatch_hook(m, run_dispatch, x);
  *out = x;
  return HCQ_OK;
}

void amd_mock_exec_free(amd_mock_exec *x) {
  if (!x) return;
  for (int i = 0; i < CACHE_N; i++) {
    rdna3_free(x->cache[i].p);
    free(x->cache[i].code);
  }
  pthread_mutex_destroy(&x->fail_lock);
  free(x);
}

void amd_mock_exec_set_budget(amd_mock_exec *x, uint64_t max_wave_insts) { x->budget = max_wave_insts; }

const char *amd_mock_exec_last_failure(amd_mock_exec *x, bool clear) {
  static _Thread_local char copy[KIF_DETAIL_MAX];
  pthread_mutex_lock(&x->fail_lock);
  snprintf(copy, sizeof copy, "%s", x->last_failure);
  if (clear) x->last_failure[0] = 0;
  pthread_mutex_unlock(&x->fail_lock);
  return copy;
}

void amd_mock_exec_stats_get(const amd_mock_exec *x, amd_mock_exec_stats *out) { *out = x->st; }

static kfd_mock *g_mock;
static amd_mock_exec *g_exec;

hcq_status amd_mock_install_config(kif *k, const kfd_mock_config *cfg) {
  if (g_mock) return hcq_status_make(HCQ_CODE_INVALID, "the amd mock is already installed");
  kfd_mock *m;
  HCQ_TRY(kfd_mock_create(cfg, &m));
  amd_mock_exec *x = NULL;
  hcq_status st = amd_mock_exec_attach(m, &x);
  if (!st) st = kfd_mock_attach(m, k);
  if (st) {
    kfd_mock_destroy(m);
    amd_mock_exec_free(x);
    return st;
  }
  g_mock = m, g_exec = x;
  return HCQ_OK;
}

hcq_status amd_mock_install(kif *k) {
  kfd_mock_config cfg;
  HCQ_TRY(kfd_mock_config_from_env(&cfg));
  return amd_mock_install_config(k, &cfg);
}

kfd_mock *amd_mock_installed(amd_mock_exec **out_exec) {
  if (out_exec) *out_exec = g_exec;
  return g_mock;
}

void amd_mock_uninstall(void) {
  kfd_mock_destroy(g_mock);
  amd_mock_exec_free(g_exec);
  g_mock = NULL, g_exec = NULL;
}
