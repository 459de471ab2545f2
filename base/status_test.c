#include "base/status.h"
#include "base/testing.h"

int main(void) {
  CHECK(hcq_status_code(HCQ_OK) == HCQ_CODE_OK);
  CHECK_EQ_STR(hcq_status_message(HCQ_OK), "");
  hcq_status st = hcq_status_make(HCQ_CODE_PARSE, "line %d:%d: expected ')'", 3, 7);
  CHECK(hcq_status_code(st) == HCQ_CODE_PARSE);
  st = hcq_status_annotate(st, "file %s", "k.uop");
  CHECK_EQ_STR(hcq_status_message(st), "file k.uop: line 3:7: expected ')'");
  hcq_status_free(st);
  CHECK(hcq_status_annotate(HCQ_OK, "x") == HCQ_OK);
  /* An OK code is never produced for an error. */
  st = hcq_status_make(HCQ_CODE_OK, "oops");
  CHECK(hcq_status_code(st) == HCQ_CODE_INTERNAL);
  hcq_status_free(st);
  CHECK_ERR(hcq_status_make(HCQ_CODE_IO, "open /dev/kfd: errno 2"), HCQ_CODE_IO, "/dev/kfd");
  return testing_summary("status_test");
}
