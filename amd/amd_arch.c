/* Supported gfx targets (see amd_arch.h for what differs and where each difference comes from). */
#include "amd/amd_arch.h"

#include <stdio.h>

static const amd_arch k_arches[] = {
    {"gfx1100", 110000, false, true, true, 0x60000, 256, true},
    {"gfx1201", 120001, false, false, true, 0x60000, 256, true},
    {"gfx90a", 90010, true, false, false, 0x80000, 1024, false},
    {"gfx942", 90402, true, false, false, 0x80000, 1024, true},
};

const char *amd_arch_name(uint32_t v, char *buf, unsigned size_B) {
  snprintf(buf, size_B, "gfx%u%x%x", v / 10000, (v / 100) % 100, v % 100);
  return buf;
}

hcq_status amd_arch_find(uint32_t v, const amd_arch **out) {
  *out = NULL;
  for (size_t i = 0; i < sizeof k_arches / sizeof k_arches[0]; i++)
    if (k_arches[i].gfx_target_version == v) {
      *out = &k_arches[i];
      return HCQ_OK;
    }
  char name[16];
  return hcq_status_make(HCQ_CODE_UNSUPPORTED,
                         "amd: %s (gfx_target_version %u) is not supported; supported: gfx1100, gfx1201, gfx90a, gfx942",
                         amd_arch_name(v, name, sizeof name), v);
}
