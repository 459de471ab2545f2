/* The NV mock's kernel runner: the launch hook that runs a decoded QMD on the PTX interpreter. It finds the PTX only
 * through GPU memory: the nv_image_record the driver uploaded right below the QMD's program address
 * (nv/nv_image.h), then the PTX text it points to. Constant bank 0 is read at the QMD's address, the parameters at
 * the offsets the record carries (the cubin's .nv.info); every global access goes through the mock's checked
 * memory, so a bad address is an MMU fault naming the instruction (line), thread, block and address. */
#ifndef HCQ_EMU_NV_MOCK_PTX_H
#define HCQ_EMU_NV_MOCK_PTX_H

#include "emulator_tests/nv_mock.h"
#include "kernel_iface/kif.h"

typedef struct nv_mock_ptx nv_mock_ptx;

hcq_status nv_mock_ptx_create(nv_mock_ptx **out);
void nv_mock_ptx_destroy(nv_mock_ptx *r);
/* The hook (nv_mock_set_launch_hook(m, nv_mock_ptx_launch, r)). */
int nv_mock_ptx_launch(void *ctx, nv_mock *m, const nv_mock_launch *l, char *detail);
/* Thread-instructions run so far (speed figures). */
uint64_t nv_mock_ptx_thread_instructions(const nv_mock_ptx *r);
/* The watchdog: at most this many warp instructions per launch (0: none; default 2^32). */
void nv_mock_ptx_set_budget(nv_mock_ptx *r, uint64_t max_warp_instructions);

/* HCQ_MOCK=nv (emulator_tests/mock_env.c): a Hopper mock ($HCQ_MOCK_NV_VERSION picks the driver branch,
 * $HCQ_MOCK_NV_ARCH=hopper|ada|blackwell the GPU) with this runner, attached to k for the rest of the process. */
hcq_status nv_mock_env_install(kif *k);
/* The mock and runner nv_mock_env_install attached (NULL: none), for speed figures (hcq bench --dev nv). */
nv_mock_ptx *nv_mock_env_runner(nv_mock **out_mock);

#endif
