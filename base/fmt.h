/* base_fmt_v: a printf subset without stdio, for hot paths that format many short pieces (the C renderer). */
#ifndef HCQ_BASE_FMT_H
#define HCQ_BASE_FMT_H

#include <stdarg.h>
#include <stddef.h>

/* Formats f into buf (cap bytes, NUL-terminated) as vsnprintf would, for the conversions %s, %c, %%, and %d %i %u
 * with an optional l, ll or z length; no flags, width or precision. Returns the length written, or -1 when f holds anything
 * else, a %s argument is NULL or the text does not fit (then buf is unspecified and the caller formats with
 * vsnprintf on a copy of the va_list it kept). */
int base_fmt_v(char *buf, size_t cap, const char *f, va_list ap);

#endif
