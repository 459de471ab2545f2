/* base_fmt_v (base/fmt.h): decimal integers and strings copied in a loop; vsnprintf costs ~1000 instructions a
 * call for the same short pieces. */
#include "base/fmt.h"

#include <stdbool.h>
#include <string.h>
#include <sys/types.h>

/* Decimal digits of v, sign first when neg, ending at end (exclusive); returns the first char. */
static char *put_dec(char *end, unsigned long long v, bool neg) {
  char *p = end;
  do {
    *--p = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  if (neg) *--p = '-';
  return p;
}

int base_fmt_v(char *buf, size_t cap, const char *f, va_list ap) {
  size_t n = 0;
  for (; *f; f++) {
    if (*f != '%') {
      if (n + 1 >= cap) return -1;
      buf[n++] = *f;
      continue;
    }
    f++;
    int lng = 0;
    bool z = false;
    while (*f == 'l' && lng < 2) lng++, f++;
    if (*f == 'z' && !lng) z = true, f++;
    char tmp[24];
    const char *s;
    size_t len;
    switch (*f) {
      case '%':
        if (lng || z) return -1;
        s = "%", len = 1;
        break;
      case 's':
        if (lng || z) return -1;
        s = va_arg(ap, const char *);
        if (!s) return -1; /* glibc prints "(null)": left to it */
        len = strlen(s);
        break;
      case 'c':
        if (lng || z) return -1;
        tmp[0] = (char)va_arg(ap, int);
        s = tmp, len = 1;
        break;
      case 'd': case 'i': {
        long long v = z ? (long long)va_arg(ap, ssize_t) : lng == 2 ? va_arg(ap, long long)
                      : lng == 1 ? (long long)va_arg(ap, long) : (long long)va_arg(ap, int);
        unsigned long long m = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
        s = put_dec(tmp + sizeof tmp, m, v < 0);
        len = (size_t)(tmp + sizeof tmp - s);
        break;
      }
      case 'u': {
        unsigned long long v = z ? (unsigned long long)va_arg(ap, size_t) : lng == 2 ? va_arg(ap, unsigned long long)
                               : lng == 1 ? (unsigned long long)va_arg(ap, unsigned long)
                                          : (unsigned long long)va_arg(ap, unsigned);
        s = put_dec(tmp + sizeof tmp, v, false);
        len = (size_t)(tmp + sizeof tmp - s);
        break;
      }
      default: return -1;
    }
    if (n + len >= cap) return -1;
    memcpy(buf + n, s, len);
    n += len;
  }
  if (n >= cap) return -1;
  buf[n] = 0;
  return (int)n;
}
