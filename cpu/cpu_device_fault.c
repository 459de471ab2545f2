/* Catching kernel faults on the worker threads.
 *
 * Each EXEC call sets a thread-local jump buffer around the kernel. The handlers (installed process-wide while a
 * CPU device exists, SA_NODEFER so no signal-mask syscall is needed per call) jump back when the faulting thread
 * is inside a kernel; otherwise they put the previous disposition back and return, so the faulting instruction
 * runs again under it (the default action, or a sanitizer's report). */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>

#include "cpu/cpu_device_internal.h"

static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
#define NFAULT (int)(sizeof fault_signals / sizeof fault_signals[0])

static pthread_mutex_t install_lock = PTHREAD_MUTEX_INITIALIZER;
static int install_refs;
static struct sigaction previous[NFAULT];

static __thread sigjmp_buf *tl_jump;
static __thread void *tl_fault_addr;
static __thread int tl_fault_sig;

static void fault_handler(int sig, siginfo_t *si, void *uctx) {
  sigjmp_buf *j = tl_jump;
  if (j) {
    tl_jump = NULL;
    tl_fault_addr = si ? si->si_addr : NULL;
    tl_fault_sig = sig;
    siglongjmp(*j, 1);
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
  }
  signal(sig, SIG_DFL); /* returning re-executes the faulting instruction under the default action */
}

hcq_status cpu_device_faults_install(void) {
  pthread_mutex_lock(&install_lock);
  if (install_refs++ == 0) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fault_handler;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
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
    default: return "signal";
  }
}

void cpu_device_exec_task(void *ctx, int core_id) {
  cpu_work *const w = ctx;
  sigjmp_buf jump;
  if (sigsetjmp(jump, 0) == 0) {
    tl_jump = &jump;
    cpu_kernel_run(&w->exec, core_id);
    tl_jump = NULL;
    return;
  }
  cpu_device_record_error(w->dev, hcq_status_make(HCQ_CODE_INVALID, "kernel %s faulted (%s) at %p, core_id %d",
                                                  w->name, sig_name(tl_fault_sig), tl_fault_addr, core_id));
}
