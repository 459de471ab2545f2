/* HCQ_MOCK: put the emulated GPU drivers in front of the OS for this process, so that the real drivers (amd/, nv/)
 * open the mocks through kernel_iface exactly as they would open the hardware. `HCQ_MOCK=amd`, `HCQ_MOCK=nv` or
 * `HCQ_MOCK=amd,nv`; each mock reads its own settings (HCQ_MOCK_AMD_ARCH, HCQ_MOCK_NV_VERSION, ...). The `hcq`
 * command calls this first; tests call it or install a mock directly. */
#ifndef HCQ_EMU_MOCK_ENV_H
#define HCQ_EMU_MOCK_ENV_H

#include "base/status.h"
#include "kernel_iface/kif.h"

/* One mock: its name in HCQ_MOCK and the function that registers it with k (for the rest of the process). */
typedef struct emu_mock {
  const char *name;
  hcq_status (*install)(kif *k);
} emu_mock;

/* Install the mocks `spec` names ("amd", "nv,amd"; NULL or "" installs none) into k. An unknown name is an
 * HCQ_CODE_NOT_FOUND naming the known ones; nothing is installed then. Installing a mock twice is refused. */
hcq_status emu_mock_install(kif *k, const char *spec);
/* emu_mock_install(kif_default(), getenv("HCQ_MOCK")). */
hcq_status emu_mock_from_env(void);
/* The known mocks, comma-separated ("amd,nv"), in a static string. */
const char *emu_mock_names(void);

#endif
