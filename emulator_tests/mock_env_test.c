/* HCQ_MOCK parsing (mock_env.h): unknown names are refused naming the known ones and install nothing; an empty or
 * missing spec installs nothing. Each mock's own install is tested with that mock. */
#include <string.h>

#include "base/testing.h"
#include "emulator_tests/mock_env.h"

int main(void) {
  kif *k = NULL;
  CHECK_OK(kif_create(&k));
  CHECK_OK(emu_mock_install(k, NULL));
  CHECK_OK(emu_mock_install(k, ""));
  static const char *const bad[] = {"bogus", ",", "amd,,nv", "amdx", "nv,bogus"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    hcq_status st = emu_mock_install(k, bad[i]);
    CHECK(st != NULL && hcq_status_code(st) == HCQ_CODE_NOT_FOUND);
    CHECK(st && strstr(hcq_status_message(st), "known: ") != NULL);
    hcq_status_free(st);
  }
  kif_destroy(k);
  return testing_summary("mock_env_test");
}
