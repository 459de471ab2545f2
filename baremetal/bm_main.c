/* Bare-metal hcq: boots the runtime core on qemu virt without an OS. It parses the kernel images linked in with
 * .incbin (bm_images.S), loads each ELF with the CPU loader (cpu/cpu_elf*.c), allocates the buffers the spec asks
 * for, and runs a single-threaded command queue (cpu_cmd: EXEC through cpu_kernel_run, SIGNAL, TIMESTAMP, WAIT)
 * whose signals are then checked. Results go to the PL011 UART as lines the host test checks
 * (baremetal/baremetal_check.py); the exit status (semihosting) is 0 when every step succeeded.
 *
 * Inputs (exact in float32, so any evaluation order gives the same bits):
 *   saxpy: x[i] = i, y[i] = 1000 - i, n = 64       -> y[i] = 2.5 * i + 1000 - i
 *   sum:   x[i] = i % 16 over the whole buffer       -> 7.5 * elements */
#include <stdint.h>
#include <string.h>

#include <elf.h>

#include "cpu/cpu_elf.h"
#include "cpu/cpu_image.h"
#include "cpu/cpu_kernel.h"
#include "cpu/cpu_mem.h"
#include "cpu/cpu_pool.h"
#include "cpu/cpu_sync.h"
#include "baremetal/bm.h"

extern const uint8_t bm_saxpy_img[], bm_saxpy_img_end[], bm_sum_img[], bm_sum_img_end[];

/* The queue: commands run in order, to completion, on this one core. */
static hcq_status run_queue(const cpu_cmd *cmds, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const cpu_cmd *c = &cmds[i];
    switch (c->kind) {
    case CPU_CMD_EXEC:
      for (int core = 0; core < c->threads; core++) c->fn(c->ctx, core);
      break;
    case CPU_CMD_SIGNAL: cpu_signal_set(c->addr, c->value); break;
    case CPU_CMD_TIMESTAMP: *c->addr = cpu_now_ns(); break;
    case CPU_CMD_WAIT: HCQ_TRY(cpu_signal_wait(c->addr, c->value, c->timeout_ms)); break;
    }
  }
  return HCQ_OK;
}

typedef struct loaded {
  cpu_image img;
  cpu_program *prog;
  void *fn;
  float *bufs[CPU_IMAGE_MAX_BUFS];
} loaded;

static hcq_status load(const uint8_t *start, const uint8_t *end, loaded *k) {
  memset(k, 0, sizeof *k);
  HCQ_TRY(cpu_image_parse(start, (size_t)(end - start), &k->img));
  HCQ_TRY(cpu_image_check_host(&k->img, EM_AARCH64));
  HCQ_TRY(cpu_program_load(k->img.elf, k->img.elf_size_B, &k->prog));
  const hcq_program *p = &k->img.prog;
  HCQ_TRY(cpu_program_symbol(k->prog, p->symbol, &k->fn));
  for (size_t b = 0; b < hcq_program_nbufs(p); b++) {
    if (strcmp(p->params[b].dtype, "float32") != 0)
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "buffer %zu is %s; this demo fills float32 only", b,
                             p->params[b].dtype);
    void *mem;
    HCQ_TRY(cpu_alloc((size_t)p->params[b].nelems * 4, 64, &mem));
    k->bufs[b] = mem;
  }
  bm_printf("loaded %s: %zu buffers, %zu vars, ELF %zu bytes, global %s\n", p->symbol, hcq_program_nbufs(p),
            hcq_program_nvars(p), k->img.elf_size_B, p->global[0]);
  return HCQ_OK;
}

static void print_float(const char *label, int index, float v) {
  uint32_t bits;
  memcpy(&bits, &v, 4);
  int64_t whole = (int64_t)v, frac = (int64_t)((v - (float)whole) * 1000.0f);
  if (frac < 0) frac = -frac;
  bm_printf("%s[%d] = %lld.%03lld (0x%08x)\n", label, index, (long long)whole, (long long)frac, bits);
}

static hcq_status run(void) {
  static loaded sx, sm; /* each holds a program description: off the small bare-metal stack */
  HCQ_TRY(load(bm_saxpy_img, bm_saxpy_img_end, &sx));
  HCQ_TRY(load(bm_sum_img, bm_sum_img_end, &sm));
  if (hcq_program_nbufs(&sx.img.prog) != 2 || hcq_program_nvars(&sx.img.prog) != 1 ||
      hcq_program_nbufs(&sm.img.prog) != 2 || hcq_program_nvars(&sm.img.prog) != 0)
    return hcq_status_make(HCQ_CODE_INVALID, "unexpected kernel signatures (saxpy: y, x, n; sum: out, x)");
  const int n = 64;
  for (int i = 0; i < 2 * n; i++) sx.bufs[0][i] = 1000.0f - (float)i, sx.bufs[1][i] = (float)i;
  int64_t sum_elems = sm.img.prog.params[1].nelems;
  for (int64_t i = 0; i < sum_elems; i++) sm.bufs[1][i] = (float)(i % 16);

  /* launch sizes from the spec's expressions */
  int64_t vals[1] = {n}, g0;
  HCQ_TRY(cpu_image_eval(&sx.img.prog, sx.img.prog.global[0], vals, &g0));
  uint64_t a_sx[3] = {(uintptr_t)sx.bufs[0], (uintptr_t)sx.bufs[1], (uint64_t)n};
  uint64_t a_sm[2] = {(uintptr_t)sm.bufs[0], (uintptr_t)sm.bufs[1]};
  cpu_kernel_args k_sx, k_sm;
  HCQ_TRY(cpu_kernel_args_init(&k_sx, sx.fn, a_sx, 3));
  HCQ_TRY(cpu_kernel_args_init(&k_sm, sm.fn, a_sm, 2));
  static uint64_t signal, t0, t1;
  cpu_cmd cmds[] = {
      {.kind = CPU_CMD_TIMESTAMP, .addr = &t0},
      {.kind = CPU_CMD_EXEC, .threads = 1, .fn = cpu_kernel_run, .ctx = &k_sx},
      {.kind = CPU_CMD_SIGNAL, .addr = &signal, .value = 1},
      {.kind = CPU_CMD_WAIT, .addr = &signal, .value = 1},
      {.kind = CPU_CMD_EXEC, .threads = 1, .fn = cpu_kernel_run, .ctx = &k_sm},
      {.kind = CPU_CMD_SIGNAL, .addr = &signal, .value = 2},
      {.kind = CPU_CMD_TIMESTAMP, .addr = &t1},
  };
  HCQ_TRY(run_queue(cmds, sizeof cmds / sizeof *cmds));
  HCQ_TRY(cpu_signal_wait(&signal, 2, 0));
  bm_printf("queue: %zu commands, signal = %llu, %llu us\n", sizeof cmds / sizeof *cmds,
            (unsigned long long)cpu_signal_load(&signal), (unsigned long long)((t1 - t0) / 1000));
  bm_printf("saxpy n=%d global0=%lld\n", n, (long long)g0);
  for (int i = 0; i < n; i += 9) print_float("saxpy.y", i, sx.bufs[0][i]);
  print_float("saxpy.y", n - 1, sx.bufs[0][n - 1]);
  print_float("saxpy.y", n, sx.bufs[0][n]); /* untouched: past n */
  bm_printf("sum elements=%lld\n", (long long)sum_elems);
  print_float("sum.out", 0, sm.bufs[0][0]);
  bm_printf("heap used %zu bytes\n", bm_heap_used_B());
  return HCQ_OK;
}

int bm_main(void) {
  bm_puts("hcq bare-metal runtime on qemu virt (aarch64, EL1, no OS)\n");
  hcq_status st = run();
  if (st) {
    bm_printf("ERROR: %s\n", hcq_status_message(st));
    return 1;
  }
  bm_puts("hcq bare-metal: done\n");
  return 0;
}
