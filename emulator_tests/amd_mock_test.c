/* The AMD driver (amd/) on the emulated KFD: init, allocation, SDMA copies split at the count limit, PM4 signals,
 * timestamps and cross-queue waits, the dispatch sequence as the command processor decodes it, ring wrap and
 * back-pressure, page faults and hung waits reported with the packet, two GPUs at once, the KFD error codes for
 * bad arguments, clear errors for a missing/forbidden /dev/kfd and unsupported targets, and fault injection on every
 * call of init and allocation (clean error, nothing leaked, reopen works). Expected values are computed here
 * independently (byte patterns, register numbers from the reference's emitted dwords). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "amd/amd_device.h"
#include "amd/amd_dispatch.h"
#include "amd/amd_sdma_pkt.h"
#include "autogen/kfd.h"
#include "emulator_tests/kfd_mock.h"
#include "base/testing.h"

typedef struct env {
  kif *k;
  kfd_mock *m;
} env;

static bool env_up(env *e, const kfd_mock_config *cfg) {
  memset(e, 0, sizeof *e);
  hcq_status st = kif_create(&e->k);
  if (!st) st = kfd_mock_create(cfg, &e->m);
  if (!st) st = kfd_mock_attach(e->m, e->k);
  CHECK_OK(st);
  return !st;
}

static void env_down(env *e) {
  if (e->m) CHECK_OK(kfd_mock_detach(e->m)); /* fails if the driver left a file open */
  kfd_mock_destroy(e->m);
  kif_destroy(e->k);
}

static bool wait_u32(volatile uint32_t *p, uint32_t want, unsigned timeout_ms) {
  for (unsigned i = 0; i < timeout_ms * 10; i++) {
    if (__atomic_load_n(p, __ATOMIC_ACQUIRE) == want) return true;
    nanosleep(&(struct timespec){0, 100000}, NULL);
  }
  return false;
}

static bool wait_error(kfd_mock *m, const char *needle, unsigned timeout_ms) {
  for (unsigned i = 0; i < timeout_ms * 10; i++) {
    const char *e = kfd_mock_last_error(m);
    if (e && strstr(e, needle)) return true;
    nanosleep(&(struct timespec){0, 100000}, NULL);
  }
  const char *e = kfd_mock_last_error(m);
  fprintf(stderr, "expected a mock error containing \"%s\", got \"%s\"\n", needle, e ? e : "(none)");
  return false;
}

static uint8_t pattern(uint64_t i) { return (uint8_t)(i * 2654435761u >> 13); }

/* Submit SDMA packets built by fn on d->copy. */
#define SDMA_BUF(name, dw, pk)                                                                              \
  uint32_t name##_w[dw], name##_s[pk];                                                                      \
  amd_sdma_buf name = {.b = {.w = name##_w, .cap = dw}, .sizes = name##_s, .packets_cap = pk}
#define SDMA_SUBMIT(d, s) amd_ring_submit((d), &(d)->copy, (s).b.w, (s).b.n, (s).sizes, (s).n_packets)
#define PM4_SUBMIT(d, b) amd_ring_submit((d), &(d)->compute, (b).w, (b).n, NULL, 0)

static void test_init_props(void) {
  env e;
  if (!env_up(&e, NULL)) return;
  amd_device *d = NULL;
  CHECK_OK(amd_device_open(e.k, 0, NULL, &d));
  if (d) {
    CHECK_EQ_STR(d->name, "gfx1100");
    CHECK_EQ_INT(d->kfd_major, 1);
    CHECK_EQ_INT(d->kfd_minor, AMD_KFD_IOCTL_MINOR_VERSION);
    CHECK_EQ_INT(d->node.simd_count / d->node.simd_per_cu, 96); /* CUs of an RX 7900 XTX */
    CHECK_EQ_INT(d->node.lds_size_in_kb, 64);
    CHECK_EQ_INT(d->node.drm_render_minor, 128);
    CHECK_EQ_INT(d->node.gc_base[0], 0x1260);
    CHECK_EQ_INT(d->node.sdma_version[0], 6);
    CHECK(d->sdma_max_copy_B == 1ull << 30);
    CHECK(d->node.vram_size_B == 1ull << 30);
    /* CWSR area by the reference's formulas: 0x2bea000 context + debug area = 0x2c02000 for these props. */
    CHECK(d->compute.cwsr.size_B == 0x2c02000);
    /* Register addresses: the reference's emitted SH offsets 0x20c (PGM_LO), 0x212 (RSRC1), 0x240 (USER_DATA_0). */
    amd_regs r = amd_regs_of(d);
    CHECK_EQ_INT(r.pgm_lo - 0x2c00, 0x20c);
    CHECK_EQ_INT(r.rsrc1 - 0x2c00, 0x212);
    CHECK_EQ_INT(r.rsrc3 - 0x2c00, 0x228);
    CHECK_EQ_INT(r.user_data0 - 0x2c00, 0x240);
    CHECK_EQ_INT(r.start_x - 0x2c00, 0x204);
    CHECK_EQ_INT(r.initiator_base | r.w32_en, 0x8005);
  }
  amd_device_close(d);
  CHECK_EQ_INT(kfd_mock_live_allocations(e.m), 0);
  env_down(&e);
}

/* An SDMA copy longer than one packet's count limit (gfx90a: SDMA 4.4, 22-bit count = 4 MiB per packet). */
static void test_sdma_copy_split(void) {
  env e;
  if (!env_up(&e, &(kfd_mock_config){.arch = "gfx90a"})) return;
  amd_device *d = NULL;
  CHECK_OK(amd_device_open(e.k, 0, NULL, &d));
  if (!d) { env_down(&e); return; }
  CHECK_EQ_STR(d->name, "gfx90a");
  CHECK(d->sdma_max_copy_B == 4ull << 20);
  const uint64_t n = (9ull << 20) + 12, cap = n + 4096;
  amd_buf src, dst, sig;
  CHECK_OK(amd_mem_alloc(d, cap, AMD_MEM_VRAM_HOST, NULL, &src));
  CHECK_OK(amd_mem_alloc(d, cap, AMD_MEM_VRAM_HOST, NULL, &dst));
  CHECK_OK(amd_mem_alloc(d, 4096, AMD_MEM_GTT_UNCACHED, NULL, &sig));
  uint8_t *s = (uint8_t *)(uintptr_t)src.va, *t = (uint8_t *)(uintptr_t)dst.va;
  for (uint64_t i = 0; i < cap; i++) s[i] = pattern(i), t[i] = 0xee;
  SDMA_BUF(sb, 64, 8);
  amd_sdma_copy(&sb, dst.va + 4, src.va + 4, n, d->sdma_max_copy_B);
  CHECK_EQ_INT(sb.n_packets, 3);
  amd_sdma_timestamp(&sb, sig.va + 8);
  amd_sdma_fence(&sb, d->node.sdma_version[0], sig.va, 1);
  CHECK_OK(SDMA_SUBMIT(d, sb));
  CHECK(wait_u32((volatile uint32_t *)(uintptr_t)sig.va, 1, 5000));
  uint64_t bad = 0;
  for (uint64_t i = 0; i < cap; i++) bad += t[i] != (i >= 4 && i < n + 4 ? pattern(i) : 0xee);
  CHECK_EQ_INT(bad, 0);
  CHECK(*(volatile uint64_t *)(uintptr_t)(sig.va + 8) != 0);
  CHECK_OK(amd_mem_free(d, &src));
  CHECK_OK(amd_mem_free(d, &dst));
  CHECK_OK(amd_mem_free(d, &sig));
  CHECK(kfd_mock_last_error(e.m) == NULL);
  amd_device_close(d);
  CHECK_EQ_INT(kfd_mock_live_allocations(e.m), 0);
  env_down(&e);
}

typedef struct seen_dispatch {
  int calls;
  kfd_mock_dispatch d;
} seen_dispatch;

static int record_dispatch(void *user, kfd_mock *m, const kfd_mock_dispatch *d, char *detail) {
  (void)m, (void)detail;
  seen_dispatch *s = user;
  s->calls++;
  s->d = *d;
  return 0;
}

/* PM4: a wait on a signal the SDMA queue sets later (cross-queue), a timestamp, a dispatch, a signal. */
static void test_pm4_cross_queue_dispatch(const char *arch) {
  env e;
  if (!env_up(&e, &(kfd_mock_config){.arch = arch})) return;
  seen_dispatch seen = {0};
  kfd_mock_set_dispatch_hook(e.m, record_dispatch, &seen);
  amd_device *d = NULL;
  CHECK_OK(amd_device_open(e.k, 0, NULL, &d));
  if (!d) { env_down(&e); return; }
  amd_buf sig, code;
  CHECK_OK(amd_mem_alloc(d, 4096, AMD_MEM_GTT_UNCACHED, NULL, &sig));
  CHECK_OK(amd_mem_alloc(d, 8192, AMD_MEM_VRAM_HOST, NULL, &code));
  volatile uint32_t *sdma_sig = (volatile uint32_t *)(uintptr_t)sig.va, *pm4_sig = sdma_sig + 1;
  uint32_t w[256];
  amd_cmdbuf b = {.w = w, .cap = 256};
  amd_pm4_wait_mem(&b, sig.va, AMD_PM4_WAIT_REG_MEM_FUNCTION_GE, 1, 0xffffffffu);
  amd_pm4_acquire_mem(&b, d->arch->gfx9, true);
  amd_pm4_release_mem(&b, d->arch->gfx9, sig.va + 16, 0, AMD_RELEASE_CLOCK, false, 0);
  amd_dispatch_desc k = {.code_va = code.va + 0x100, .rsrc1 = 0x60bc0000, .rsrc2 = 0x84, .rsrc3 = 7,
                         .wave32 = !d->arch->gfx9, .user_sgpr = {0x1234, 0x5678}, .user_sgpr_count = 2,
                         .local = {32, 2, 1}, .grid = {4, 2, 1}, .tmpring_size = 0x10200};
  CHECK_OK(amd_pm4_dispatch(&b, d, &k, NULL));
  amd_pm4_release_mem(&b, d->arch->gfx9, sig.va + 4, 7, AMD_RELEASE_DATA32, true, 0);
  CHECK_OK(PM4_SUBMIT(d, b));
  nanosleep(&(struct timespec){0, 20000000}, NULL);
  CHECK_EQ_INT(*pm4_sig, 0); /* still waiting for the SDMA queue */
  CHECK_EQ_INT(seen.calls, 0);
  SDMA_BUF(sb, 16, 2);
  amd_sdma_fence(&sb, d->node.sdma_version[0], sig.va, 1);
  CHECK_OK(SDMA_SUBMIT(d, sb));
  CHECK(wait_u32(pm4_sig, 7, 5000));
  CHECK_EQ_INT(seen.calls, 1);
  CHECK(seen.d.pgm_addr == code.va + 0x100);
  CHECK_EQ_INT(seen.d.rsrc1, 0x60bc0000u | (strcmp(arch, "gfx1100") ? 0 : 1u << 20)); /* PRIV on gfx11 */
  CHECK_EQ_INT(seen.d.rsrc2, 0x84);
  CHECK_EQ_INT(seen.d.rsrc3, 7);
  CHECK_EQ_INT(seen.d.user_data[0], 0x1234);
  CHECK_EQ_INT(seen.d.user_data[1], 0x5678);
  CHECK_EQ_INT(seen.d.num_thread[0], 32);
  CHECK_EQ_INT(seen.d.num_thread[1], 2);
  CHECK_EQ_INT(seen.d.grid[0], 4);
  CHECK_EQ_INT(seen.d.grid[1], 2);
  CHECK_EQ_INT(seen.d.grid[2], 1);
  CHECK_EQ_INT(seen.d.initiator, d->arch->gfx9 ? 0x5 : 0x8005);
  CHECK_EQ_INT(seen.d.tmpring_size, 0x10200);
  CHECK(*(volatile uint64_t *)(uintptr_t)(sig.va + 16) != 0);
  CHECK(kfd_mock_last_error(e.m) == NULL);
  CHECK_OK(amd_mem_free(d, &sig));
  CHECK_OK(amd_mem_free(d, &code));
  amd_device_close(d);
  env_down(&e);
}

/* Small rings: many more packets than fit; the writer waits for the GPU, SDMA pads with NOPs at the end. */
static void test_ring_wrap(void) {
  env e;
  if (!env_up(&e, NULL)) return;
  amd_device *d = NULL;
  CHECK_OK(amd_device_open(e.k, 0, &(amd_device_options){.compute_ring_B = 4096, .copy_ring_B = 4096}, &d));
  if (!d) { env_down(&e); return; }
  amd_buf sig, a, c;
  CHECK_OK(amd_mem_alloc(d, 4096, AMD_MEM_GTT_UNCACHED, NULL, &sig));
  CHECK_OK(amd_mem_alloc(d, 4096, AMD_MEM_VRAM_HOST, NULL, &a));
  CHECK_OK(amd_mem_alloc(d, 4096, AMD_MEM_VRAM_HOST, NULL, &c));
  volatile uint32_t *s = (volatile uint32_t *)(uintptr_t)sig.va;
  uint32_t w[8 * 40 + 7];
  for (uint32_t round = 1; round <= 20; round++) { /* 20 x 327 dwords through a 1024-dword ring */
    amd_cmdbuf b = {.w = w, .cap = 8 * 40 + 7};
    /* a 7-dword wait that is already satisfied (s[2] stays 0) moves every submission off the 8-dword grid, so
     * the end of the ring falls inside packets and the writer splits them */
    amd_pm4_wait_mem(&b, sig.va + 8, AMD_PM4_WAIT_REG_MEM_FUNCTION_EQ, 0, 0xffffffffu);
    for (uint32_t i = 0; i < 40; i++) amd_pm4_release_mem(&b, false, sig.va, round * 100 + i, AMD_RELEASE_DATA32, false, 0);
    CHECK_OK(PM4_SUBMIT(d, b));
  }
  CHECK(wait_u32(s, 20 * 100 + 39, 5000));
  uint8_t *pa = (uint8_t *)(uintptr_t)a.va, *pc = (uint8_t *)(uintptr_t)c.va;
  for (int i = 0; i < 4096; i++) pa[i] = pattern((uint64_t)i), pc[i] = 0;
  for (uint32_t i = 1; i <= 300; i++) { /* 11-dword units do not divide the ring: packets meet its end */
    SDMA_BUF(sb, 16, 2);
    amd_sdma_copy(&sb, c.va + (i % 64) * 64, a.va + (i % 64) * 64, 64, d->sdma_max_copy_B);
    amd_sdma_fence(&sb, 6, sig.va + 4, i);
    CHECK_OK(SDMA_SUBMIT(d, sb));
  }
  CHECK(wait_u32(s + 1, 300, 5000));
  CHECK(memcmp(pa, pc, 4096) == 0);
  CHECK(kfd_mock_last_error(e.m) == NULL);
  /* Back-pressure: a queue blocked on a CPU signal cannot take more than its ring; the writer times out, never
   * overwriting what the GPU has not read, and the queue drains once the CPU sets the signal. */
  amd_device_close(d);
  CHECK_OK(amd_device_open(e.k, 0, &(amd_device_options){.compute_ring_B = 4096, .ring_wait_timeout_ms = 50}, &d));
  if (d) {
    amd_buf g;
    CHECK_OK(amd_mem_alloc(d, 4096, AMD_MEM_GTT_UNCACHED, NULL, &g));
    volatile uint32_t *gs = (volatile uint32_t *)(uintptr_t)g.va;
    amd_cmdbuf b = {.w = w, .cap = 8 * 40};
    amd_pm4_wait_mem(&b, g.va, AMD_PM4_WAIT_REG_MEM_FUNCTION_EQ, 1, 0xffffffffu);
    CHECK_OK(PM4_SUBMIT(d, b));
    uint32_t first[7];
    memcpy(first, (const void *)d->compute.words, sizeof first);
    hcq_status st = HCQ_OK;
    for (int i = 0; i < 40 && !st; i++) {
      b.n = 0;
      for (int j = 0; j < 40; j++) amd_pm4_release_mem(&b, false, g.va + 4, (uint32_t)(i * 40 + j + 1), AMD_RELEASE_DATA32, false, 0);
      st = PM4_SUBMIT(d, b);
    }
    CHECK_ERR(st, HCQ_CODE_TIMEOUT, "did not consume its ring");
    CHECK(memcmp(first, (const void *)d->compute.words, sizeof first) == 0);
    __atomic_store_n(&gs[0], 1, __ATOMIC_RELEASE); /* the CPU sets the signal the queue waits on */
    CHECK(wait_u32(gs + 1, 3 * 40, 5000)); /* the three batches that fitted after the wait */
    CHECK_OK(amd_mem_free(d, &g));
  }
  CHECK_OK(amd_mem_free(d, &sig));
  CHECK_OK(amd_mem_free(d, &a));
  CHECK_OK(amd_mem_free(d, &c));
  amd_device_close(d);
  env_down(&e);
}

/* A copy from freed memory is a GPU page fault naming packet and address, delivered through the memory event. */
static void test_page_fault_and_hang(void) {
  env e;
  if (!env_up(&e, &(kfd_mock_config){.wait_timeout_ms = 100})) return;
  amd_device *d = NULL;
  CHECK_OK(amd_device_open(e.k, 0, NULL, &d));
  if (!d) { env_down(&e); return; }
  amd_buf a, gone;
  CHECK_OK(amd_mem_alloc(d, 4096, AMD_MEM_VRAM_HOST, NULL, &a));
  CHECK_OK(amd_mem_alloc(d, 4096, AMD_MEM_VRAM_HOST, NULL, &gone));
  uint64_t gone_va = gone.va;
  CHECK_OK(amd_mem_free(d, &gone));
  SDMA_BUF(sb, 16, 2);
  amd_sdma_copy(&sb, a.va, gone_va + 64, 128, d->sdma_max_copy_B);
  CHECK_OK(SDMA_SUBMIT(d, sb));
  char want[64];
  snprintf(want, sizeof want, "page fault: 0x%llx+0x80", (unsigned long long)gone_va + 64);
  CHECK(wait_error(e.m, want, 5000));
  CHECK(strstr(kfd_mock_last_error(e.m), "COPY_LINEAR (source) packet at ring offset 0x0") != NULL);
  struct amd_kfd_event_data ev = {.event_id = d->fault_event_id};
  struct amd_kfd_ioctl_wait_events_args w = {.events_ptr = (uintptr_t)&ev, .num_events = 1, .wait_for_all = 1, .timeout = 1000};
  CHECK_OK(kif_ioctl(e.k, d->kfd_fd, AMD_KFD_IOC_WAIT_EVENTS, &w));
  CHECK_EQ_INT(w.wait_result, AMD_KFD_IOC_WAIT_RESULT_COMPLETE);
  CHECK(ev.memory_exception_data.va == gone_va + 64);
  CHECK_EQ_INT(ev.memory_exception_data.gpu_id, d->node.gpu_id);
  CHECK_OK(amd_mem_free(d, &a));
  amd_device_close(d);
  env_down(&e);

  /* A wait nobody satisfies: after the mock's timeout the queue hangs with its state dumped. */
  if (!env_up(&e, &(kfd_mock_config){.wait_timeout_ms = 100})) return;
  CHECK_OK(amd_device_open(e.k, 0, NULL, &d));
  if (!d) { env_down(&e); return; }
  CHECK_OK(amd_mem_alloc(d, 4096, AMD_MEM_GTT_UNCACHED, NULL, &a));
  uint32_t words[16];
  amd_cmdbuf b = {.w = words, .cap = 16};
  amd_pm4_wait_mem(&b, a.va + 12, AMD_PM4_WAIT_REG_MEM_FUNCTION_GE, 5, 0xffffffffu);
  CHECK_OK(PM4_SUBMIT(d, b));
  CHECK(wait_error(e.m, "wait never completed", 5000));
  CHECK(strstr(kfd_mock_last_error(e.m), "WAIT_REG_MEM packet at ring offset 0x0") != NULL);
  CHECK(strstr(kfd_mock_last_error(e.m), "rptr 0x0 wptr 0x7 (dwords)") != NULL);
  CHECK_OK(amd_mem_free(d, &a));
  amd_device_close(d);
  env_down(&e);
}

/* HCQ_TRACE: the decoded KFD ioctls (kif) and the decoded packets (mock) go to one stream, in order. */
static void test_trace(void) {
  env e;
  if (!env_up(&e, NULL)) return;
  FILE *f = tmpfile();
  if (!f) { CHECK(false); env_down(&e); return; }
  kif_trace_set_output(e.k, f);
  kfd_mock_trace_set_output(e.m, f);
  amd_device *d = NULL;
  CHECK_OK(amd_device_open(e.k, 0, NULL, &d));
  if (d) {
    amd_buf sig;
    CHECK_OK(amd_mem_alloc(d, 4096, AMD_MEM_GTT_UNCACHED, NULL, &sig));
    uint32_t w[16];
    amd_cmdbuf b = {.w = w, .cap = 16};
    amd_pm4_release_mem(&b, false, sig.va, 3, AMD_RELEASE_DATA32, true, 0);
    CHECK_OK(PM4_SUBMIT(d, b));
    SDMA_BUF(sb, 8, 1);
    amd_sdma_fence(&sb, 6, sig.va + 4, 4);
    CHECK_OK(SDMA_SUBMIT(d, sb));
    CHECK(wait_u32((volatile uint32_t *)(uintptr_t)sig.va + 1, 4, 5000));
    CHECK(wait_u32((volatile uint32_t *)(uintptr_t)sig.va, 3, 5000));
    CHECK(kfd_mock_idle(e.m, 5000));
    kfd_mock_trace_set_output(e.m, NULL);
    kif_trace_set_output(e.k, NULL);
    char text[65536] = "";
    rewind(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    CHECK(strstr(text, "AMDKFD_IOC_CREATE_QUEUE") != NULL);
    CHECK(strstr(text, "queue_type=0x1") != NULL || strstr(text, "queue_type=1") != NULL);
    char want[96];
    snprintf(want, sizeof want, "amd-mock pm4 gpu0 q%u @0x0 op=0x49 n=7: c0064900 0070f514 20000000", d->compute.queue_id);
    CHECK(strstr(text, want) != NULL);
    snprintf(want, sizeof want, "amd-mock sdma gpu0 q%u @0x0 op=5 sub=0: 00030005", d->copy.queue_id);
    CHECK(strstr(text, want) != NULL);
    CHECK_OK(amd_mem_free(d, &sig));
  }
  amd_device_close(d);
  fclose(f);
  env_down(&e);
}

/* Malformed packets are rejected loudly with the packet and its offset. */
static void test_bad_packets(void) {
  static const struct { uint32_t w[8]; uint32_t n; const char *want; } cases[] = {
      {{0xc0009900u, 0}, 2, "unknown or unemulated opcode 0x99"},
      {{0xc0017600u, 0x500, 1}, 3, "SET_SH_REG packet at ring offset 0x0"},
      {{0x40000000u}, 1, "type-1 header"},
      {{0xc0034900u, 0, 0, 0, 0}, 5, "RELEASE_MEM packet at ring offset 0x0 (byte 0x0): body of 4 dwords, expected 7"},
      /* DMA_DATA: a short body, GDS as destination, register addressing, over gfx11's 32767 bytes, an unmapped source */
      {{0xc0045000u, 0xe0300000u, 0, 0, 0, 0}, 6, "DMA_DATA packet at ring offset 0x0 (byte 0x0): body of 5 dwords, expected 6"},
      {{0xc0055000u, 0xe0100000u, 0x1000, 0, 0x2000, 0, 16}, 7, "DST_SEL 1: only memory to memory"},
      {{0xc0055000u, 0xe0300000u, 0x1000, 0, 0x2000, 0, 0x04000010u}, 7, "register or non-incrementing"},
      {{0xc0055000u, 0xe0300000u, 0x1000, 0, 0x2000, 0, 40000}, 7, "40000 bytes: gfx11+ copies at most 32767"},
      {{0xc0055000u, 0xe0300000u, 0x1000, 0, 0x2000, 0, 16}, 7, "DMA_DATA (source) packet at ring offset 0x0 (byte 0x0): page fault: 0x1000+0x10"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    env e;
    if (!env_up(&e, NULL)) return;
    amd_device *d = NULL;
    CHECK_OK(amd_device_open(e.k, 0, NULL, &d));
    if (d) {
      CHECK_OK(amd_ring_submit(d, &d->compute, cases[i].w, cases[i].n, NULL, 0));
      CHECK(wait_error(e.m, cases[i].want, 5000));
    }
    amd_device_close(d);
    env_down(&e);
  }
}

/* CP DMA on the compute ring: the builder's words against the encoding written out here from mesa's sid.h fields
 * (PKT3(DMA_DATA 0x50, 5); CONTROL: DST_SEL 3 << 20, SRC_SEL 3 << 29, CP_SYNC bit 31; COMMAND: BYTE_COUNT), then
 * copies of odd sizes at odd offsets, compared with the source pattern (bytes around the destination untouched). */
static void test_dma_data(void) {
  uint32_t w[8];
  amd_cmdbuf b = {.w = w, .cap = 8};
  amd_pm4_dma_data(&b, 0x1122334455ull, 0x66778899aaull, 32736);
  const uint32_t want[7] = {0xc0055000u, 0xe0300000u, 0x778899aau, 0x66u, 0x22334455u, 0x11u, 32736};
  CHECK(b.n == 7 && memcmp(w, want, sizeof want) == 0);
  CHECK_EQ_INT(amd_pm4_dma_data_max_B(false), 32736);
  CHECK_EQ_INT(amd_pm4_dma_data_max_B(true), (1u << 26) - 32);
  env e;
  if (!env_up(&e, NULL)) return;
  amd_device *d = NULL;
  CHECK_OK(amd_device_open(e.k, 0, NULL, &d));
  amd_buf src, dst, sig;
  if (d) {
    CHECK_OK(amd_mem_alloc(d, 65536, AMD_MEM_VRAM_HOST, NULL, &src));
    CHECK_OK(amd_mem_alloc(d, 65536, AMD_MEM_VRAM_HOST, NULL, &dst));
    CHECK_OK(amd_mem_alloc(d, 4096, AMD_MEM_GTT_UNCACHED, NULL, &sig));
    uint8_t *s8 = (uint8_t *)(uintptr_t)src.va, *d8 = (uint8_t *)(uintptr_t)dst.va;
    for (int i = 0; i < 65536; i++) s8[i] = pattern((uint64_t)i);
    const uint32_t sizes[] = {1, 7, 4096, 32735, 32736};
    for (uint32_t t = 0; t < 5; t++) {
      memset(d8, 0xcc, 65536);
      uint32_t so = t * 3 + 1, doff = t * 5 + 2, n = sizes[t];
      uint32_t cmd[16];
      amd_cmdbuf c = {.w = cmd, .cap = 16};
      amd_pm4_dma_data(&c, dst.va + doff, src.va + so, n);
      amd_pm4_release_mem(&c, false, sig.va, t + 1, AMD_RELEASE_DATA32, true, 0);
      CHECK_OK(PM4_SUBMIT(d, c));
      CHECK(wait_u32((volatile uint32_t *)(uintptr_t)sig.va, t + 1, 5000));
      int bad = 0;
      for (uint32_t i = 0; i < 65536; i++) bad += d8[i] != (i >= doff && i < doff + n ? pattern(i - doff + so) : 0xcc);
      CHECK_EQ_INT(bad, 0);
    }
    CHECK(kfd_mock_last_error(e.m) == NULL);
    CHECK_OK(amd_mem_free(d, &src));
    CHECK_OK(amd_mem_free(d, &dst));
    CHECK_OK(amd_mem_free(d, &sig));
  }
  amd_device_close(d);
  env_down(&e);
}

static void test_two_gpus(void) {
  env e;
  if (!env_up(&e, &(kfd_mock_config){.gpu_count = 2})) return;
  amd_device *d[2] = {NULL, NULL};
  CHECK_OK(amd_device_open(e.k, 0, NULL, &d[0]));
  CHECK_OK(amd_device_open(e.k, 1, NULL, &d[1]));
  CHECK_ERR(amd_device_open(e.k, 2, NULL, &(amd_device *){NULL}), HCQ_CODE_NOT_FOUND, "GPU 2 requested, KFD lists 2");
  if (d[0] && d[1]) {
    CHECK(d[0]->node.gpu_id != d[1]->node.gpu_id);
    CHECK_EQ_INT(d[1]->node.drm_render_minor, 129);
    amd_buf s[2], t[2], g[2];
    for (int i = 0; i < 2; i++) {
      CHECK_OK(amd_mem_alloc(d[i], 8192, AMD_MEM_VRAM_HOST, NULL, &s[i]));
      CHECK_OK(amd_mem_alloc(d[i], 8192, AMD_MEM_VRAM_HOST, NULL, &t[i]));
      CHECK_OK(amd_mem_alloc(d[i], 4096, AMD_MEM_GTT_UNCACHED, NULL, &g[i]));
      for (int j = 0; j < 8192; j++) ((uint8_t *)(uintptr_t)s[i].va)[j] = pattern((uint64_t)(j + i));
      SDMA_BUF(sb, 16, 2);
      amd_sdma_copy(&sb, t[i].va, s[i].va, 8192, d[i]->sdma_max_copy_B);
      amd_sdma_fence(&sb, 6, g[i].va, 9);
      CHECK_OK(SDMA_SUBMIT(d[i], sb));
    }
    for (int i = 0; i < 2; i++) {
      CHECK(wait_u32((volatile uint32_t *)(uintptr_t)g[i].va, 9, 5000));
      CHECK(memcmp((void *)(uintptr_t)s[i].va, (void *)(uintptr_t)t[i].va, 8192) == 0);
      /* GPU 1 may not touch GPU 0's memory: a copy across is a page fault. */
      CHECK(!kfd_mock_range_ok(e.m, (unsigned)(1 - i), s[i].va, 8192));
      CHECK_OK(amd_mem_free(d[i], &s[i]));
      CHECK_OK(amd_mem_free(d[i], &t[i]));
      CHECK_OK(amd_mem_free(d[i], &g[i]));
    }
  }
  amd_device_close(d[0]);
  amd_device_close(d[1]);
  env_down(&e);
}

/* The KFD ioctls answer bad arguments with the kernel's errno (kfd_chardev.c, linux 6.1). */
static void test_kfd_errors(void) {
  env e;
  if (!env_up(&e, &(kfd_mock_config){.vram_size_B = 64ull << 20, .small_bar = true})) return;
  amd_device *d = NULL;
  CHECK_OK(amd_device_open(e.k, 0, NULL, &d));
  if (!d) { env_down(&e); return; }
  unsigned live = kfd_mock_live_allocations(e.m);
#define ERRNO_OF(req, arg) (st = kif_ioctl(e.k, d->kfd_fd, (req), (arg)), errn = kif_status_errno(st), hcq_status_free(st), errn)
  hcq_status st;
  int errn;
  struct amd_kfd_ioctl_alloc_memory_of_gpu_args al = {.va_addr = 1ull << 40, .size = 0, .gpu_id = d->node.gpu_id,
                                                      .flags = AMD_KFD_IOC_ALLOC_MEM_FLAGS_VRAM};
  CHECK_EQ_INT(ERRNO_OF(AMD_KFD_IOC_ALLOC_MEMORY_OF_GPU, &al), EINVAL);
  al.size = 4096, al.gpu_id = 0xdead;
  CHECK_EQ_INT(ERRNO_OF(AMD_KFD_IOC_ALLOC_MEMORY_OF_GPU, &al), EINVAL);
  struct amd_kfd_ioctl_free_memory_of_gpu_args fr = {.handle = 0x777};
  CHECK_EQ_INT(ERRNO_OF(AMD_KFD_IOC_FREE_MEMORY_OF_GPU, &fr), EINVAL);
  struct amd_kfd_ioctl_map_memory_to_gpu_args mp = {.handle = d->copy.ring.handle, .n_devices = 0};
  CHECK_EQ_INT(ERRNO_OF(AMD_KFD_IOC_MAP_MEMORY_TO_GPU, &mp), EINVAL);
  struct amd_kfd_ioctl_create_queue_args q = {.ring_size = 3000, .gpu_id = d->node.gpu_id};
  CHECK_EQ_INT(ERRNO_OF(AMD_KFD_IOC_CREATE_QUEUE, &q), EINVAL);
  q.ring_size = 4096, q.queue_priority = 16;
  CHECK_EQ_INT(ERRNO_OF(AMD_KFD_IOC_CREATE_QUEUE, &q), EINVAL);
  q.queue_priority = 0, q.queue_percentage = 101;
  CHECK_EQ_INT(ERRNO_OF(AMD_KFD_IOC_CREATE_QUEUE, &q), EINVAL);
  struct amd_kfd_ioctl_destroy_queue_args dq = {.queue_id = 999};
  CHECK_EQ_INT(ERRNO_OF(AMD_KFD_IOC_DESTROY_QUEUE, &dq), EINVAL);
  struct amd_kfd_ioctl_acquire_vm_args vm = {.drm_fd = (uint32_t)d->kfd_fd, .gpu_id = d->node.gpu_id};
  CHECK_EQ_INT(ERRNO_OF(AMD_KFD_IOC_ACQUIRE_VM, &vm), EINVAL);
  uint32_t tile[64];
  CHECK_EQ_INT(ERRNO_OF(AMD_KFD_IOC_GET_TILE_CONFIG, tile), ENOTTY);
#undef ERRNO_OF
  /* Driver-level messages: OOM and host-visible VRAM on a small BAR. */
  amd_buf b;
  CHECK_ERR(amd_mem_alloc(d, 1ull << 30, AMD_MEM_VRAM, NULL, &b), HCQ_CODE_NOMEM, "out of GPU memory allocating 1073741824 bytes of VRAM");
  CHECK_ERR(amd_mem_alloc(d, 4096, AMD_MEM_VRAM_HOST, NULL, &b), HCQ_CODE_IO, "enable resizable BAR");
  CHECK_ERR(amd_mem_alloc(d, 0, AMD_MEM_VRAM, NULL, &b), HCQ_CODE_INVALID, "allocation of 0 bytes");
  CHECK_EQ_INT(kfd_mock_live_allocations(e.m), live);
  /* userptr: host memory registered at its own address, visible to the GPU. */
  void *host = aligned_alloc(4096, 8192);
  CHECK_OK(amd_mem_alloc(d, 8192, AMD_MEM_USERPTR, host, &b));
  CHECK(b.va == (uint64_t)(uintptr_t)host && kfd_mock_range_ok(e.m, 0, b.va, 8192));
  CHECK_OK(amd_mem_free(d, &b));
  CHECK(!kfd_mock_range_ok(e.m, 0, (uint64_t)(uintptr_t)host, 8192));
  free(host);
  amd_device_close(d);
  env_down(&e);
}

static void test_open_errors(void) {
  kif *k = NULL;
  CHECK_OK(kif_create(&k));
  amd_device *d = NULL;
  if (access("/dev/kfd", F_OK) != 0) CHECK_ERR(amd_device_open(k, 0, NULL, &d), HCQ_CODE_NOT_FOUND, "no /dev/kfd");
  kif_destroy(k);
  env e;
  if (env_up(&e, NULL)) {
    CHECK_OK(kif_fault_path(e.k, "/dev/kfd", EACCES));
    CHECK_ERR(amd_device_open(e.k, 0, NULL, &d), HCQ_CODE_IO, "add the user to the groups render and video");
    kif_fault_reset(e.k);
    env_down(&e);
  }
  if (env_up(&e, &(kfd_mock_config){.arch = "gfx1030"})) {
    CHECK_ERR(amd_device_open(e.k, 0, NULL, &d), HCQ_CODE_UNSUPPORTED,
              "gfx1030 (gfx_target_version 100300) is not supported; supported: gfx1100");
    env_down(&e);
  }
  kfd_mock_config c;
  setenv("HCQ_MOCK_AMD_ARCH", "gfx9999", 1);
  CHECK_ERR(kfd_mock_config_from_env(&c), HCQ_CODE_INVALID, "HCQ_MOCK_AMD_ARCH=gfx9999");
  setenv("HCQ_MOCK_AMD_ARCH", "gfx942", 1);
  setenv("HCQ_MOCK_AMD_GPUS", "3", 1);
  CHECK_OK(kfd_mock_config_from_env(&c));
  CHECK(!strcmp(c.arch, "gfx942") && c.gpu_count == 3);
  setenv("HCQ_MOCK_AMD_GPUS", "0", 1);
  CHECK_ERR(kfd_mock_config_from_env(&c), HCQ_CODE_INVALID, "HCQ_MOCK_AMD_GPUS=0: expected 1..8");
  unsetenv("HCQ_MOCK_AMD_ARCH");
  unsetenv("HCQ_MOCK_AMD_GPUS");
}

/* Every fallible OS call of device open (and then of an allocation) fails once in turn: each gives a clear error,
 * leaves no allocation, queue or file behind, and the next open works. */
static void test_fault_injection(void) {
  env e;
  if (!env_up(&e, NULL)) return;
  int injected = 0, clean = 0;
  for (uint64_t nth = 1; nth < 400 && clean < 3; nth++) {
    CHECK_OK(kif_fault_nth_call(e.k, nth, EIO));
    amd_device *d = NULL;
    hcq_status st = amd_device_open(e.k, 0, NULL, &d);
    kif_fault_reset(e.k);
    if (!st) { amd_device_close(d); clean++; continue; } /* nth is past the last call (or was tolerated) */
    clean = 0;
    injected++;
    const char *msg = hcq_status_message(st);
    if (!strstr(msg, "injected fault")) {
      fprintf(stderr, "fault %llu: message does not name the injected fault: %s\n", (unsigned long long)nth, msg);
      CHECK(false);
    }
    hcq_status_free(st);
    CHECK_EQ_INT(kfd_mock_live_allocations(e.m), 0);
  }
  printf("fault injection: %d calls of device open failed in turn\n", injected);
  CHECK(injected > 20);
  amd_device *d = NULL;
  CHECK_OK(amd_device_open(e.k, 0, NULL, &d));
  if (d) {
    unsigned live = kfd_mock_live_allocations(e.m), alloc_faults = 0;
    for (uint64_t nth = 1; nth < 20; nth++) {
      CHECK_OK(kif_fault_nth_call(e.k, nth, EIO));
      amd_buf b;
      hcq_status st = amd_mem_alloc(d, 8192, AMD_MEM_VRAM_HOST, NULL, &b);
      kif_fault_reset(e.k);
      if (!st) { CHECK_OK(amd_mem_free(d, &b)); break; }
      alloc_faults++;
      hcq_status_free(st);
      CHECK_EQ_INT(kfd_mock_live_allocations(e.m), live);
    }
    CHECK_EQ_INT(alloc_faults, 4); /* reserve VA, ALLOC, mmap, MAP */
  }
  amd_device_close(d);
  env_down(&e); /* fails if a failed open left a file open */
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define RUN(call)                                                                        \
  do {                                                                                   \
    double t0_ = now_s();                                                                \
    call;                                                                                \
    if (getenv("HCQ_TEST_TIMES")) fprintf(stderr, "%-40s %.3f s\n", #call, now_s() - t0_); \
  } while (0)

int main(void) {
  RUN(test_init_props());
  RUN(test_sdma_copy_split());
  RUN(test_pm4_cross_queue_dispatch("gfx1100"));
  RUN(test_pm4_cross_queue_dispatch("gfx90a"));
  RUN(test_ring_wrap());
  RUN(test_page_fault_and_hang());
  RUN(test_bad_packets());
  RUN(test_dma_data());
  RUN(test_trace());
  RUN(test_two_gpus());
  RUN(test_kfd_errors());
  RUN(test_open_errors());
  RUN(test_fault_injection());
  return testing_summary("amd_mock_test");
}
