/* The few C library functions the freestanding runtime core uses, for bare metal: mem and str functions, a bump
 * allocator over the linker script's heap, a small vsnprintf (%d %i %u %x %s %c %p %% with l/ll/z and width/0 flags,
 * %.Ns), (v)asprintf for base/status.c, output on the PL011 UART, and the host hooks of the CPU loader
 * (cpu_alloc/cpu_free/cpu_page_size replace cpu/cpu_mem.c; mprotect is a no-op: the MMU is off). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"
#include "cpu/cpu_mem.h"
#include "baremetal/bm.h"

#define UART0_DR ((volatile uint32_t *)0x09000000)
#define UART0_FR ((volatile uint32_t *)0x09000018)

void bm_putc(char c) {
  while (*UART0_FR & (1u << 5)) { /* TX FIFO full */
  }
  *UART0_DR = (uint32_t)(unsigned char)c;
}

void bm_puts(const char *s) {
  for (; *s; s++) {
    if (*s == '\n') bm_putc('\r');
    bm_putc(*s);
  }
}

void *memcpy(void *d, const void *s, size_t n) {
  unsigned char *dp = d;
  const unsigned char *sp = s;
  while (n--) *dp++ = *sp++;
  return d;
}
void *memmove(void *d, const void *s, size_t n) {
  unsigned char *dp = d;
  const unsigned char *sp = s;
  if (dp < sp) while (n--) *dp++ = *sp++;
  else while (n--) dp[n] = sp[n];
  return d;
}
void *memset(void *d, int c, size_t n) {
  unsigned char *dp = d;
  while (n--) *dp++ = (unsigned char)c;
  return d;
}
int memcmp(const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  for (size_t i = 0; i < n; i++)
    if (x[i] != y[i]) return x[i] - y[i];
  return 0;
}
void *memchr(const void *s, int c, size_t n) {
  const unsigned char *p = s;
  for (size_t i = 0; i < n; i++)
    if (p[i] == (unsigned char)c) return (void *)(p + i);
  return NULL;
}
size_t strlen(const char *s) {
  size_t n = 0;
  while (s[n]) n++;
  return n;
}
int strcmp(const char *a, const char *b) {
  while (*a && *a == *b) a++, b++;
  return (unsigned char)*a - (unsigned char)*b;
}
int strncmp(const char *a, const char *b, size_t n) {
  for (; n; n--, a++, b++) {
    if (*a != *b) return (unsigned char)*a - (unsigned char)*b;
    if (!*a) return 0;
  }
  return 0;
}
char *strchr(const char *s, int c) {
  for (;; s++) {
    if (*s == (char)c) return (char *)s;
    if (!*s) return NULL;
  }
}

/* ------------------------------------------------------------------------------------------------ heap */

extern char __heap_start[], __heap_end[];
static uintptr_t heap_next;

static void *bump(size_t n, size_t align) {
  if (!heap_next) heap_next = (uintptr_t)__heap_start;
  uintptr_t p = (heap_next + align - 1) & ~(uintptr_t)(align - 1);
  if (n > (uintptr_t)__heap_end - p) return NULL;
  heap_next = p + n;
  return (void *)p;
}

size_t bm_heap_used_B(void) { return heap_next ? heap_next - (uintptr_t)__heap_start : 0; }

/* Each block keeps its size in front of it, for realloc. free() leaks: the run is short and single-shot. */
void *malloc(size_t n) {
  size_t *p = bump(n + 16, 16);
  if (!p) return NULL;
  p[0] = n;
  return p + 2;
}
void *calloc(size_t a, size_t b) {
  if (b && a > (size_t)-1 / b) return NULL;
  void *p = malloc(a * b);
  if (p) memset(p, 0, a * b);
  return p;
}
void free(void *p) { (void)p; }
void *realloc(void *p, size_t n) {
  void *q = malloc(n);
  if (q && p) {
    size_t old = ((size_t *)p)[-2];
    memcpy(q, p, old < n ? old : n);
  }
  return q;
}
char *strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* ------------------------------------------------------------------------------------------------ formatting */

typedef struct fmt_out {
  char *buf;
  size_t cap, len;
} fmt_out;

static void out_c(fmt_out *o, char c) {
  if (o->len + 1 < o->cap) o->buf[o->len] = c;
  o->len++;
}

static void out_num(fmt_out *o, uint64_t u, unsigned base, bool neg, int width, char pad) {
  char tmp[24];
  int n = 0;
  do tmp[n++] = "0123456789abcdef"[u % base]; while ((u /= base) != 0);
  if (neg) tmp[n++] = '-';
  for (int i = n; i < width; i++) out_c(o, pad);
  while (n) out_c(o, tmp[--n]);
}

int vsnprintf(char *buf, size_t cap, const char *fmt, va_list ap) {
  fmt_out o = {buf, cap, 0};
  for (const char *f = fmt; *f; f++) {
    if (*f != '%') {
      out_c(&o, *f);
      continue;
    }
    f++;
    char pad = ' ';
    int width = 0, prec = -1, lng = 0;
    if (*f == '0') pad = '0', f++;
    while (*f >= '0' && *f <= '9') width = width * 10 + (*f++ - '0');
    if (*f == '.') {
      f++;
      prec = 0;
      if (*f == '*') prec = va_arg(ap, int), f++;
      while (*f >= '0' && *f <= '9') prec = prec * 10 + (*f++ - '0');
    }
    while (*f == 'l' || *f == 'z' || *f == 'j') lng++, f++;
    switch (*f) {
    case 'd':
    case 'i': {
      int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);
      out_num(&o, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, 10, v < 0, width, pad);
      break;
    }
    case 'u':
    case 'x': {
      uint64_t v = lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned);
      out_num(&o, v, *f == 'x' ? 16 : 10, false, width, pad);
      break;
    }
    case 'p': out_c(&o, '0'), out_c(&o, 'x'), out_num(&o, (uintptr_t)va_arg(ap, void *), 16, false, 0, ' '); break;
    case 'c': out_c(&o, (char)va_arg(ap, int)); break;
    case 's': {
      const char *s = va_arg(ap, const char *);
      if (!s) s = "(null)";
      for (int i = 0; s[i] && (prec < 0 || i < prec); i++) out_c(&o, s[i]);
      break;
    }
    case '%': out_c(&o, '%'); break;
    default: out_c(&o, '?'); break;
    }
  }
  if (cap) buf[o.len < cap ? o.len : cap - 1] = 0;
  return (int)o.len;
}

int snprintf(char *buf, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, cap, fmt, ap);
  va_end(ap);
  return n;
}

int vasprintf(char **out, const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  *out = malloc((size_t)n + 1);
  if (!*out) return -1;
  return vsnprintf(*out, (size_t)n + 1, fmt, ap);
}

int asprintf(char **out, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vasprintf(out, fmt, ap);
  va_end(ap);
  return n;
}

void bm_printf(const char *fmt, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  bm_puts(buf);
}

/* ------------------------------------------------------------------------------------------------ loader hooks */

size_t cpu_page_size(void) { return 4096; }

hcq_status cpu_alloc(size_t size_B, size_t align_B, void **out_ptr) {
  if (align_B < 4096) align_B = 4096;
  void *p = bump(size_B, align_B);
  if (!p) return hcq_status_make(HCQ_CODE_NOMEM, "cpu_alloc: %llu bytes: bare-metal heap exhausted", (unsigned long long)size_B);
  memset(p, 0, size_B);
  *out_ptr = p;
  return HCQ_OK;
}
void cpu_free(void *ptr, size_t size_B) { (void)ptr, (void)size_B; }

int mprotect(void *addr, size_t len, int prot) {
  (void)addr, (void)len, (void)prot;
  return 0; /* MMU off: every page is read/write/execute */
}
