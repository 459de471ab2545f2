/* The AMD mock's kernel executor: DISPATCH_DIRECT state (kfd_mock_dispatch) -> the RDNA3 interpreter, with every
 * memory access checked against the mock's live allocations. The program is what the driver wrote to GPU memory at
 * COMPUTE_PGM_LO/HI; its initial state comes from the registers (RSRC1/2/3, USER_DATA, NUM_THREAD, the initiator),
 * never from a side channel. The interpreter models gfx1100 (wave32) only: a dispatch on a mock of another arch,
 * a wave64 dispatch, scratch, or user SGPRs other than the kernarg pointer are refused with a queue fault naming
 * what. Decoded programs are cached by address and re-checked against the code bytes (and the word after them,
 * which must still end the decode) at every dispatch. Tested by amd_mock_exec_test.c. */
#ifndef HCQ_EMU_AMD_MOCK_EXEC_H
#define HCQ_EMU_AMD_MOCK_EXEC_H

#include <stdbool.h>
#include <stdint.h>

#include "emulator_tests/kfd_mock.h"

typedef struct amd_mock_exec amd_mock_exec;

/* Create an executor and install it as m's dispatch hook. Free it after kfd_mock_destroy (or after detaching). */
hcq_status amd_mock_exec_attach(kfd_mock *m, amd_mock_exec **out);
void amd_mock_exec_free(amd_mock_exec *x);

typedef struct amd_mock_exec_stats {
  uint64_t dispatches, wave_insts, lane_insts, exec_ns, decodes;
} amd_mock_exec_stats;
/* Counters since attach (read after the mock is idle); exec_ns is the executing thread's CPU time. */
void amd_mock_exec_stats_get(const amd_mock_exec *x, amd_mock_exec_stats *out);

/* Stop a dispatch after this many wave-instructions (0: no limit); the queue then faults with the interpreter's
 * "budget" message (tests bound slow unoptimized kernels with it). */
void amd_mock_exec_set_budget(amd_mock_exec *x, uint64_t max_wave_insts);

/* The message of the last dispatch the interpreter refused or stopped ("" if none), optionally cleared. */
const char *amd_mock_exec_last_failure(amd_mock_exec *x, bool clear);

/* HCQ_MOCK=amd: create the mock from the environment (kfd_mock_config_from_env), attach it to k with this
 * executor, for the rest of the process (or until amd_mock_uninstall). A second install is refused. */
hcq_status amd_mock_install(kif *k);
hcq_status amd_mock_install_config(kif *k, const kfd_mock_config *cfg);
/* The installed mock and executor (NULL when none). */
kfd_mock *amd_mock_installed(amd_mock_exec **out_exec);
/* Detach and free the installed mock (every device opened on it must be closed). */
void amd_mock_uninstall(void);

#endif
