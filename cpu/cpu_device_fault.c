/* Catching kernel faults on the worker threads.
 *
 * Each EXEC call arms a per-thread jump buffer around the kernel. The handlers (installed process-wide while a CPU
 * device exists, SA_NODEFER so no signal-mask syscall is needed per call) jump back when the faulting thread is
 * inside a kernel; otherwise they put the previous disposition back and return, so the faulting instruction runs
 * again under it (the default action, or a sanitizer's report).
 *
 * The kernel must not be able to break the handler:
 *  - the jump buffer and the call's context live in a per-thread mapping (fault_area), not on the worker's stack,
 *    which a kernel may overflow or overwrite;
 *  - the handler runs on an alternate signal stack (sigaltstack, SA_ONSTACK) in that mapping, below a guard page,
 *    so a kernel that exhausted or smashed its stack still reports;
 *  - every libc function on the handler's path (siglongjmp, __sigsetjmp, sigaction, sigaltstack) and on the report
 *    after it (snprintf, vasprintf, malloc, pthread_mutex_*) is called once at install, so the program's
 *    lazy-binding slots are resolved before any kernel runs: neither enters the dynamic loader, whose data a
 *    kernel may have overwritten (cpu_device_contain_test zeroes the resolver slot to check this).
 * SIGABRT is not caught: a freestanding kernel has no abort(); SIGABRT comes from host code (assert, sanitizers)
 * and keeps its meaning. Not covered: a kernel that overwrites its callers' frames (beyond its own) and then
 * returns normally, or that writes through a wild 64-bit pointer into the heap, TLS or libc without faulting. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "cpu/cpu_device_internal.h"
#include "cpu/cpu_mem.h"
#include "cpu/cpu_sync.h"

static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP};
#define NFAULT (int)(sizeof fault_signals / sizeof fault_signals[0])

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static int install_refs;
static struct sigaction previous[NFAULT];

/* Per-thread: [fault_area][guard page][alternate signal stack], one mapping. */
typedef struct fault_area {
  sigjmp_buf jump;
  volatile sig_atomic_t armed;
  cpu_work *work;
  int core_id;
  int sig;
  void *addr;
  size_t map_B;
  bool own_stack; /* we installed the alternate stack (else one, e.g. a sanitizer's, was there) */
} fault_area;

#define ALT_STACK_MIN_B ((size_t)64 << 10) /* ours */
#define ALT_STACK_KEEP_B ((size_t)16 << 10) /* an existing one this large is kept (ASan's is 32 KiB) */

static __thread fault_area *tl_area;
static pthread_key_t area_key;
static pthread_once_t area_once = PTHREAD_ONCE_INIT;

static void area_release(void *v) {
  fault_area *a = v;
  if (a->own_stack) {
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
  }
  tl_area = NULL;
  munmap(a, a->map_B);
}

static void area_key_create(void) { (void)pthread_key_create(&area_key, area_release); }

/* The calling thread's fault area, created at its first kernel call; NULL when it cannot be mapped. */
static fault_area *area_get(void) {
  if (tl_area) return tl_area;
  pthread_once(&area_once, area_key_create);
  size_t ps = cpu_page_size();
  size_t head = (sizeof(fault_area) + ps - 1) & ~(ps - 1);
  size_t stack_B = (size_t)SIGSTKSZ > ALT_STACK_MIN_B ? (size_t)SIGSTKSZ : ALT_STACK_MIN_B;
  stack_B = (stack_B + ps - 1) & ~(ps - 1);
  size_t map_B = head + ps + stack_B;
  uint8_t *m = mmap(NULL, map_B, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return NULL;
  if (mprotect(m + head, ps, PROT_NONE) != 0) {
    munmap(m, map_B);
    return NULL;
  }
  fault_area *a = (fault_area *)m;
  a->map_B = map_B;
  stack_t cur;
  if (sigaltstack(NULL, &cur) != 0 || (cur.ss_flags & SS_DISABLE) || cur.ss_size < ALT_STACK_KEEP_B) {
    stack_t ss = {.ss_sp = m + head + ps, .ss_size = stack_B, .ss_flags = 0};
    if (sigaltstack(&ss, NULL) != 0) {
      munmap(m, map_B);
      return NULL;
    }
    a->own_stack = true;
  }
  tl_area = a;
  (void)pthread_setspecific(area_key, a);
  return a;
}

static void fault_handler(int sig, siginfo_t *si, void *uctx) {
  fault_area *a = tl_area;
  if (a && a->armed) {
    a->armed = 0;
    a->addr = si ? si->si_addr : NULL;
    a->sig = sig;
    siglongjmp(a->jump, 1);
  }
  for (int i = 0; i < NFAULT; i++) {
    if (fault_signals[i] != sig) continue;
    const struct sigaction *p = &previous[i];
    if ((p->sa_flags & SA_SIGINFO) && p->sa_sigaction) {
      p->sa_sigaction(sig, si, uctx);
      return;
    }
    if (p->sa_handler != SIG_DFL && p->sa_handler != SIG_IGN) {
      p->sa_handler(sig);
      return;
    }
    break;
  }
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, NULL); /* returning re-executes the faulting instruction under the default action */
}

/* Resolve the lazily bound functions the handler and the report after it use (see the top of this file). */
static void prebind(void) {
  static sigjmp_buf j;
  static volatile int jumped;
  jumped = 0;
  if (sigsetjmp(j, 0) == 0 && !jumped) {
    jumped = 1;
    siglongjmp(j, 1);
  }
  stack_t cur;
  (void)sigaltstack(NULL, &cur);
  char t[32];
  snprintf(t, sizeof t, "%zu%p", sizeof t, (void *)t);
  (void)cpu_buffer_describe(t, t, sizeof t);
  (void)cpu_buffer_find(t);
  hcq_status_free(hcq_status_make(HCQ_CODE_INVALID, "%s%p%d%s", "", (void *)t, 0, t));
}

hcq_status cpu_device_faults_install(void) {
  pthread_mutex_lock(&install_lock);
  if (install_refs++ == 0) {
    prebind();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fault_handler;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < NFAULT; i++) {
      if (sigaction(fault_signals[i], &sa, &previous[i]) != 0) {
        for (int k = 0; k < i; k++) sigaction(fault_signals[k], &previous[k], NULL);
        install_refs = 0;
        pthread_mutex_unlock(&install_lock);
        return hcq_status_make(HCQ_CODE_IO, "sigaction(%s) failed", strsignal(fault_signals[i]));
      }
    }
  }
  pthread_mutex_unlock(&install_lock);
  return HCQ_OK;
}

void cpu_device_faults_uninstall(void) {
  pthread_mutex_lock(&install_lock);
  if (install_refs > 0 && --install_refs == 0)
    for (int i = 0; i < NFAULT; i++) sigaction(fault_signals[i], &previous[i], NULL);
  pthread_mutex_unlock(&install_lock);
}

static const char *sig_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGTRAP: return "SIGTRAP";
    default: return "signal";
  }
}

/* ": 4 bytes past the end of buffer 0x.. (16 bytes), argument 1" for a data address near a buffer. */
static void describe(const cpu_work *w, const void *addr, char *out, size_t cap) {
  out[0] = 0;
  char near[160];
  if (!cpu_buffer_describe(addr, near, sizeof near)) return;
  int arg = -1;
  for (int k = 0; k < w->nbufs && arg < 0; k++) {
    const cpu_buffer *b = cpu_buffer_find((const void *)(uintptr_t)w->exec.args[k]);
    uintptr_t a = (uintptr_t)addr, lo = b ? (uintptr_t)b->map : 0;
    if (b && a >= lo && a - lo < b->map_B) arg = k;
  }
  if (arg >= 0) snprintf(out, cap, ": %s, argument %d", near, arg);
  else snprintf(out, cap, ": %s", near);
}

void cpu_device_exec_task(void *ctx, int core_id) {
  cpu_work *const w = ctx;
  fault_area *a = area_get();
  if (!a) {
    cpu_device_record_error(w->dev, hcq_status_make(HCQ_CODE_NOMEM, "kernel %s, core_id %d: cannot map the "
                                                    "fault-catching area; the kernel was not run", w->name, core_id));
    return;
  }
  cpu_device_kernel_enter(w->dev, w->name);
  a->work = w;
  a->core_id = core_id;
  if (sigsetjmp(a->jump, 0) == 0) {
    uint64_t t0 = w->run_ns ? cpu_now_ns() : 0;
    a->armed = 1;
    cpu_kernel_run(&w->exec, core_id);
    a->armed = 0;
    if (w->run_ns) {
      uint64_t dt = (cpu_now_ns() - t0) * w->ids;
      __atomic_store_n(w->run_ns, dt ? dt : 1, __ATOMIC_RELAXED);
    }
    cpu_device_kernel_leave(w->dev);
    return;
  }
  /* back from the handler: only the fault area is trusted (the kernel may have overwritten this frame) */
  a = tl_area;
  cpu_work *fw = a->work;
  cpu_device_kernel_leave(fw->dev);
  char where[224];
  bool data = a->sig == SIGSEGV || a->sig == SIGBUS;
  if (data) describe(fw, a->addr, where, sizeof where);
  else where[0] = 0;
  /* A cross-thread reduce counts arrivals in the kernel object; a thread that faulted never arrives, so the count
   * would be off for every later launch (an early, partial combine). Poisoned instead: later arrivals trap. */
  if (fw->arrived) {
    bool again = __atomic_exchange_n(fw->arrived, CPU_ARRIVED_POISON, __ATOMIC_RELAXED) >= CPU_ARRIVED_POISON;
    snprintf(where + strlen(where), sizeof where - strlen(where), "%s",
             again ? "; its cross-thread reduce is unusable after an earlier fault: load the kernel again"
                   : "; its cross-thread reduce cannot run again: load the kernel again");
  }
  cpu_device_record_error(fw->dev, hcq_status_make(HCQ_CODE_KERNEL_FAULT, "kernel %s faulted (%s) at %s%p, core_id %d%s",
                                                   fw->name, sig_name(a->sig), data ? "" : "instruction ", a->addr,
                                                   a->core_id, where));
}
