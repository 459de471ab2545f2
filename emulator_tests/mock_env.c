/* HCQ_MOCK: see mock_env.h. One line per mock in the table. */
#include "emulator_tests/mock_env.h"
#include "emulator_tests/amd_mock_exec.h"
#include "emulator_tests/nv_mock_ptx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const emu_mock mocks[] = {
    {"amd", amd_mock_install},
    {"nv", nv_mock_env_install},
    {NULL, NULL}, /* end (the AMD and NV mocks add their lines above this one) */
};

const char *emu_mock_names(void) {
  static char names[128];
  size_t len = 0;
  names[0] = 0;
  for (const emu_mock *m = mocks; m->name; m++) {
    int n = snprintf(names + len, sizeof names - len, "%s%s", len ? "," : "", m->name);
    if (n > 0 && (size_t)n < sizeof names - len) len += (size_t)n;
  }
  return len ? names : "none";
}

static const emu_mock *find(const char *name, size_t n) {
  for (const emu_mock *m = mocks; m->name; m++)
    if (strlen(m->name) == n && !strncmp(m->name, name, n)) return m;
  return NULL;
}

hcq_status emu_mock_install(kif *k, const char *spec) {
  if (!spec || !*spec) return HCQ_OK;
  /* check every name first, so a typo installs nothing */
  for (const char *p = spec; *p;) {
    size_t n = strcspn(p, ",");
    if (n == 0 || !find(p, n))
      return hcq_status_make(HCQ_CODE_NOT_FOUND, "HCQ_MOCK=%s: no mock named '%.*s' (known: %s)", spec, (int)n, p,
                             emu_mock_names());
    p += n + (p[n] == ',');
  }
  for (const char *p = spec; *p;) {
    size_t n = strcspn(p, ",");
    HCQ_TRY(hcq_status_annotate(find(p, n)->install(k), "HCQ_MOCK=%s: installing the %.*s mock", spec, (int)n, p));
    p += n + (p[n] == ',');
  }
  return HCQ_OK;
}

hcq_status emu_mock_from_env(void) { return emu_mock_install(kif_default(), getenv("HCQ_MOCK")); }
