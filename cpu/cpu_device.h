/* cpu_device: the CPU as an hcq device. Its encoder writes the CPU words (cpu/cpu_words.h), decoded at submit into
 * commands for the worker pool (cpu/cpu_pool.h):
 *   EXEC      -> the kernel called with the argument buffer's u64 buffer addresses then u32 values (sign-extended,
 *                as the renderer's `int` parameters read them), core_id 0..global[0]-1 (as the
 *                reference's tinygrad/runtime/ops_cpu.py);
 *                the arguments are copied at submit, so the argument memory may be patched again right after.
 *   COPY      -> memcpy, split over the pool's threads;
 *   SIGNAL / WAIT / TIMESTAMP -> the pool's commands (a WAIT gives up after the device's wait timeout);
 *   BARRIER, NOP -> nothing: the pool runs commands strictly in order.
 * A malformed list (bad header, unknown program handle, gy/gz != 1) is rejected whole; nothing is queued.
 *
 * Memory (buffers, signal pages, kernel arguments) is cpu_buffer_alloc'd (cpu/cpu_mem.h): va == host address, the
 * data between PROT_NONE guard regions (16 GiB each on 64-bit hosts), so an out-of-bounds kernel access faults.
 * Freeing memory or a program while commands are queued keeps it until the pool has passed them.
 * Programs: a relocatable object or linked image (cpu/cpu_elf.h) loaded with our loader; the kernel is the symbol
 * with the program's name. The handle for hcq_queue_exec is cpu_device_program_handle().
 *
 * Faults: while a kernel runs on a worker, SIGSEGV/SIGBUS/SIGFPE/SIGILL/SIGTRAP are caught (cpu_device_fault.c:
 * the handler runs on its own signal stack with its jump buffer outside the worker's stack and calls nothing
 * lazily bound): that core_id stops, the rest of the command and the later commands still run, and the device
 * records "kernel NAME faulted (SIGSEGV) at ADDR, core_id N: 12 bytes past the end of buffer 0x.. (4 bytes),
 * argument 0" — collect it with cpu_device_take_error(). A fault outside a kernel call gets the previous
 * disposition (normally: the process dies as usual). Not covered: a kernel that overwrites its callers' frames and
 * returns, or one that corrupts memory without faulting (see cpu_mem.h for what the guards miss).
 *
 * Lost device: when cpu_device_signal_wait times out while a kernel is still running (or cpu_device_destroy finds
 * one still running after the wait timeout), the device is lost: the thread cannot be stopped, so everything it
 * may touch (buffers, programs, kernel arguments, the pool, the device) is kept for the rest of the process;
 * frees become no-ops, and submit/alloc/load fail with "device CPU:0 is lost: kernel K still running after T ms;
 * ...; the process must exit to reclaim them". cpu_device_destroy returns at once without joining the thread.
 */
#ifndef HCQ_CPU_DEVICE_H
#define HCQ_CPU_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpu/cpu_pool.h"
#include "hcq/device.h"
#include "base/status.h"

typedef struct cpu_device cpu_device;
typedef struct cpu_device_program cpu_device_program;

/* threads <= 0: $HCQ_CPU_THREADS, else the number of online cores. The hcq device is named "CPU:0". */
hcq_status cpu_device_create(int threads, cpu_device **out_dev);
/* Waits for queued work (bounded by the wait timeout), unloads programs, frees everything. NULL is a no-op. */
void cpu_device_destroy(cpu_device *dev);

hcq_device *cpu_device_hcq(cpu_device *dev);
int cpu_device_threads(const cpu_device *dev);
cpu_pool *cpu_device_pool(cpu_device *dev); /* for host work on the same threads (bench baselines) */
/* How long a queued WAIT command waits before it gives up and records HCQ_CODE_TIMEOUT (default 30000). */
void cpu_device_set_wait_timeout(cpu_device *dev, uint32_t timeout_ms);

/* Device memory (zeroed). Errors name the size. */
hcq_status cpu_device_alloc(cpu_device *dev, size_t size_B, hcq_mem *out_mem);
void cpu_device_free(cpu_device *dev, hcq_mem *mem);

/* Load an ELF object/image and find the kernel `name` in it. The program stays valid until destroyed or the
 * device is destroyed; destroy it only after the commands that use it completed. */
hcq_status cpu_device_load(cpu_device *dev, const void *elf, size_t size_B, const char *name,
                           cpu_device_program **out_prog);
/* The same, for a kernel whose ELF symbol differs from the name messages show (the compiler mangles reserved
 * names: the kernel `int` is the symbol `k_int`). */
hcq_status cpu_device_load_symbol(cpu_device *dev, const void *elf, size_t size_B, const char *symbol,
                                  const char *name, cpu_device_program **out_prog);
/* Use a function already in this process as a kernel (tests, bench baselines). */
hcq_status cpu_device_wrap(cpu_device *dev, void *fn, const char *name, cpu_device_program **out_prog);
void cpu_device_program_destroy(cpu_device_program *prog);
uint64_t cpu_device_program_handle(const cpu_device_program *prog);
void *cpu_device_program_fn(const cpu_device_program *prog);

/* Wait for sig >= target like hcq_signal_wait, but with the pool's spin-then-futex wait, which yields the core
 * while spinning: on a machine with more runnable threads than cores (the pool's spinning workers plus the
 * caller), hcq_signal_wait's 20 us busy spin delays the worker it waits for (measured: 44 us vs 12 us per
 * launch on 2 busy cores). */
hcq_status cpu_device_signal_wait(cpu_device *dev, const hcq_signal *sig, uint64_t target, uint32_t timeout_ms);
/* (A timeout while a kernel runs makes the device lost: HCQ_CODE_DEVICE_LOST with the lost message. To poll a
 * long kernel, read hcq_signal_value instead.) */

/* The registry's entry (hcq/runtime.h): "cpu" or "cpu:0" opens a device with the default threads; the hcq
 * device's ops->destroy closes it. */
hcq_status cpu_device_open(unsigned index, hcq_device **out);

/* True once the device is lost (see above). */
bool cpu_device_is_lost(cpu_device *dev);

/* The first error recorded by queued commands since the last call (kernel faults, WAIT timeouts), or OK.
 * The caller frees it. */
hcq_status cpu_device_take_error(cpu_device *dev);
/* Commands decoded since creation (for tests). */
uint64_t cpu_device_commands(const cpu_device *dev);

/* Small work: an EXEC whose program's last run measured less than this in all (an id's time x ids, on one thread)
 * is marked for the pool (cpu_pool.h): one thread, `run_here` (run on the submitting thread when the pool is idle);
 * more, `no_wake` (sleeping workers are not woken): the hand-off or wake-up costs more than it saves. A program's
 * first run (nothing measured yet) is never marked. */
#define CPU_RUN_HERE_MAX_NS 20000u
/* For tests: the program's last measured work in ns (0: not run yet), and how many EXECs the device marked
 * run_here / no_wake since creation. */
uint64_t cpu_device_program_last_run_ns(const cpu_device_program *prog);
void cpu_device_exec_marks(cpu_device *dev, uint64_t *out_run_here, uint64_t *out_no_wake);

#endif
