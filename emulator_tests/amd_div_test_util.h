/* Shared by amd_div_test.c and amd_div_fuzz_test.c (header-only): the integer dtypes they cover and a constant of
 * one in the kernel text (docs/FORMATS.md). */
#ifndef HCQ_EMU_AMD_DIV_TEST_UTIL_H
#define HCQ_EMU_AMD_DIV_TEST_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct dtinfo {
  const char *name;
  int bits;
  bool uns;
} dtinfo;

static const dtinfo DTS[] = {{"int32", 32, false}, {"uint32", 32, true}, {"int64", 64, false}, {"uint64", 64, true}};

/* v as a constant of the dtype: wrapped to its width, printed in its range; returns buf. Plain static (both
 * includers use it): inlined, GCC bounds its output at the callers (-Wformat-truncation). */
static const char *adt_cst(char *buf, size_t cap, const dtinfo *d, int64_t v) {
  uint64_t u = (uint64_t)v;
  if (d->bits < 64) u &= (UINT64_C(1) << d->bits) - 1;
  if (d->uns) snprintf(buf, cap, "(const %llu %s)", (unsigned long long)u, d->name);
  else if (d->bits < 64) snprintf(buf, cap, "(const %lld %s)", (long long)(int32_t)(uint32_t)u, d->name);
  else snprintf(buf, cap, "(const %lld %s)", (long long)v, d->name);
  return buf;
}

#endif
