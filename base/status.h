/* hcq_status: the one status type of every fallible call in hcq.
 *
 * NULL means success (HCQ_OK). An error is a heap object carrying a code and a message with context
 * (file:line of the input, the ioctl name, the errno...). The caller owns it: either return it upward
 * (optionally annotated with more context) or consume it with hcq_status_free().
 * If allocating the status itself fails, a static "out of memory" status is returned; freeing it is a no-op.
 */
#ifndef HCQ_STATUS_H
#define HCQ_STATUS_H

#include <stdarg.h>
#include <stdbool.h>

typedef enum hcq_code {
  HCQ_CODE_OK = 0,
  HCQ_CODE_INVALID,      /* bad input: malformed text, corrupt file, wrong argument */
  HCQ_CODE_PARSE,        /* text that does not parse (message carries line:column) */
  HCQ_CODE_NOMEM,        /* allocation failed or a size is too large */
  HCQ_CODE_NOT_FOUND,    /* a file, symbol, variable or device that does not exist */
  HCQ_CODE_UNSUPPORTED,  /* valid request we cannot do (missing tool, unknown relocation, ...) */
  HCQ_CODE_IO,           /* an OS call failed (message carries the call and errno) */
  HCQ_CODE_TIMEOUT,      /* a wait did not complete in time */
  HCQ_CODE_INTERNAL,     /* a broken invariant that is not the caller's fault */
} hcq_code;

typedef struct hcq_status_s *hcq_status;
#define HCQ_OK ((hcq_status)0)

/* Make a status with a printf-style message. */
hcq_status hcq_status_make(hcq_code code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
hcq_status hcq_status_makev(hcq_code code, const char *fmt, va_list ap);
/* Prepend context: "CONTEXT: old message". Returns the same (or a replacement) status; OK stays OK. */
hcq_status hcq_status_annotate(hcq_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
hcq_code hcq_status_code(hcq_status st);
const char *hcq_status_message(hcq_status st); /* "" for OK */
const char *hcq_code_name(hcq_code code);
void hcq_status_free(hcq_status st);

/* Propagate an error: HCQ_TRY(call()); */
#define HCQ_TRY(expr)                 \
  do {                                \
    hcq_status hcq_try_st_ = (expr);  \
    if (hcq_try_st_) return hcq_try_st_; \
  } while (0)

#endif
