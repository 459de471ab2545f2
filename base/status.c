#include "base/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hcq_status_s {
  hcq_code code;
  char *message;
};

/* Returned when we cannot even allocate the status; never freed. */
static struct hcq_status_s oom_status = {HCQ_CODE_NOMEM, (char *)"out of memory (while reporting an error)"};

hcq_status hcq_status_makev(hcq_code code, const char *fmt, va_list ap) {
  hcq_status st = malloc(sizeof *st);
  if (!st) return &oom_status;
  st->code = code == HCQ_CODE_OK ? HCQ_CODE_INTERNAL : code;
  if (vasprintf(&st->message, fmt, ap) < 0) {
    free(st);
    return &oom_status;
  }
  return st;
}

hcq_status hcq_status_make(hcq_code code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  hcq_status st = hcq_status_makev(code, fmt, ap);
  va_end(ap);
  return st;
}

hcq_status hcq_status_annotate(hcq_status st, const char *fmt, ...) {
  if (!st || st == &oom_status) return st;
  char *prefix = NULL;
  va_list ap;
  va_start(ap, fmt);
  int n = vasprintf(&prefix, fmt, ap);
  va_end(ap);
  if (n < 0) return st;
  char *joined = NULL;
  if (asprintf(&joined, "%s: %s", prefix, st->message) >= 0) {
    free(st->message);
    st->message = joined;
  }
  free(prefix);
  return st;
}

hcq_code hcq_status_code(hcq_status st) { return st ? st->code : HCQ_CODE_OK; }
const char *hcq_status_message(hcq_status st) { return st ? st->message : ""; }

const char *hcq_code_name(hcq_code code) {
  switch (code) {
  case HCQ_CODE_OK: return "ok";
  case HCQ_CODE_INVALID: return "invalid";
  case HCQ_CODE_PARSE: return "parse error";
  case HCQ_CODE_NOMEM: return "out of memory";
  case HCQ_CODE_NOT_FOUND: return "not found";
  case HCQ_CODE_UNSUPPORTED: return "unsupported";
  case HCQ_CODE_IO: return "i/o error";
  case HCQ_CODE_TIMEOUT: return "timeout";
  case HCQ_CODE_INTERNAL: return "internal error";
  }
  return "unknown";
}

void hcq_status_free(hcq_status st) {
  if (!st || st == &oom_status) return;
  free(st->message);
  free(st);
}
