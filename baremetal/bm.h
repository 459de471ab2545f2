/* Bare-metal support shared by the startup files (baremetal/). */
#ifndef HCQ_BM_H
#define HCQ_BM_H

#include <stdbool.h>
#include <stddef.h>

void bm_putc(char c);
void bm_puts(const char *s);
void bm_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
size_t bm_heap_used_B(void);

#endif
