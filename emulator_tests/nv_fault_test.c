/* nv/ fault injection on the NV mock: the Nth kernel call of nv_dev_open + an allocation fails (every N until
 * nothing fails any more); each failure is a clear error naming the call, nothing leaks (ASan, and the mock's
 * object and range counts), and a fresh open afterwards works. Also: bad RM calls come back with the real RM
 * status by name. */
#include "emulator_tests/nv_test_64bit.h"
#include <errno.h>
#include <string.h>

#include "emulator_tests/nv_mock.h"
#include "base/testing.h"
#include "nv/nv_internal.h"

static hcq_status open_and_alloc(kif *k, nv_mock *m, nv_dev **out) {
  (void)m;
  HCQ_TRY(nv_dev_open(k, 0, out));
  nv_mem a, h;
  hcq_status st = nv_mem_alloc(*out, 0x2000, NV_MEM_CPU, &a);
  if (st) return st;
  st = nv_mem_alloc(*out, 0x1000, NV_MEM_HOST, &h);
  if (!st) st = nv_mem_free(*out, &h);
  hcq_status st2 = nv_mem_free(*out, &a);
  if (st) hcq_status_free(st2);
  return st ? st : st2;
}

static void one_round(const char *version, kif_op op, uint64_t nth, int *failures, int *successes) {
  kif *k;
  nv_mock *m;
  nv_mock_config c = {.version = version};
  CHECK_OK(kif_create(&k));
  CHECK_OK(nv_mock_create(&c, &m));
  CHECK_OK(nv_mock_attach(m, k));
  CHECK_OK(kif_fault_add(k, &(kif_fault){.op = op, .nth = nth, .err = EIO}));
  nv_dev *d = NULL;
  hcq_status st = open_and_alloc(k, m, &d);
  if (st) {
    ++*failures;
    const char *msg = hcq_status_message(st);
    /* names the NV call (or the kernel call under it) and the injected errno */
    bool named = strstr(msg, "NV") && strstr(msg, "EIO");
    CHECK(named);
    if (!named) fprintf(stderr, "  call %llu: %s\n", (unsigned long long)nth, msg);
    hcq_status_free(st);
  } else {
    ++*successes;
  }
  nv_dev_close(d);
  kif_fault_reset(k);
  CHECK_EQ_INT(nv_mock_live_objects(m), 0);
  CHECK_EQ_INT(nv_mock_live_ranges(m), 0);
  /* reopen works */
  CHECK_OK(open_and_alloc(k, m, &d));
  nv_dev_close(d);
  CHECK_EQ_INT(nv_mock_live_objects(m), 0);
  CHECK_OK(nv_mock_detach(m));
  nv_mock_destroy(m);
  kif_destroy(k);
}

static void bad_calls(const char *version) {
  kif *k;
  nv_mock *m;
  nv_mock_config c = {.version = version};
  CHECK_OK(kif_create(&k));
  CHECK_OK(nv_mock_create(&c, &m));
  CHECK_OK(nv_mock_attach(m, k));
  nv_dev *d;
  CHECK_OK(nv_dev_open(k, 0, &d));
  if (d) {
    CHECK_ERR(nv_rm_free(d, d->device, 0xdead0001u), HCQ_CODE_IO, "NV_ERR_INVALID_OBJECT_HANDLE (0x33)");
    /* the other branch's size of a struct that grew at 575: RM refuses it */
    NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS_r575 s = {.bEnable = 1};
    CHECK_ERR(nv_rm_control(d, d->chgroup, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, &s,
                            d->layout->NVA06C_CTRL_GPFIFO_SCHEDULE_PARAMS_size_B == 2 ? 3 : 2, "GPFIFO_SCHEDULE"),
              HCQ_CODE_IO, "NV_ERR_INVALID_PARAM_STRUCT");
    /* a UVM error must be read from where this branch puts rmStatus (590 moved it) */
    CHECK_ERR(nv_uvm_free(d, 0x12345000, 0x1000), HCQ_CODE_IO, "UVM_FREE: RM status NV_ERR_INVALID_ADDRESS");
    CHECK_ERR(nv_rm_alloc(d, d->device, 0xc9c1, NULL, 0, &(uint32_t){0}, "bogus"), HCQ_CODE_UNSUPPORTED,
              "NV_ERR_INVALID_CLASS (0x22)");
    CHECK_ERR(nv_rm_alloc(d, d->subdevice, KEPLER_CHANNEL_GROUP_A, NULL, 0, &(uint32_t){0}, "misplaced group"),
              HCQ_CODE_IO, "NV_ERR_INVALID_OBJECT_PARENT");
    nv_mem big;
    CHECK_ERR(nv_mem_alloc(d, 1ull << 41, 0, &big), HCQ_CODE_INVALID, "size");
  }
  nv_dev_close(d);
  CHECK_EQ_INT(nv_mock_live_objects(m), 0);
  CHECK_OK(nv_mock_detach(m));
  nv_mock_destroy(m);
  kif_destroy(k);
}

int main(void) {
  NV_TEST_NEEDS_64BIT("nv_fault_test");
  static const char *const all[] = {"570.211.01", "575.64.05", "580.65.06", "590.48.01", "595.45.04"};
  for (int i = 0; i < 5; i++) bad_calls(all[i]);
  /* every ioctl (RM escapes, controls, UVM), open and mmap of init and allocation; two branches */
  static const char *const versions[] = {"575.51.02", "590.44.01"};
  static const kif_op ops[] = {KIF_OP_IOCTL, KIF_OP_OPEN, KIF_OP_MMAP};
  for (int v = 0; v < 2; v++)
    for (int o = 0; o < 3; o++) {
      int failures = 0, successes = 0, run = 0;
      /* stop once the fault lands past every call (several clean runs in a row) */
      for (uint64_t nth = 1; nth < 400 && run < 4; nth++) {
        int before = successes;
        one_round(versions[v], ops[o], nth, &failures, &successes);
        run = successes > before ? run + 1 : 0;
      }
      CHECK(failures >= (ops[o] == KIF_OP_IOCTL ? 30 : 4));
      fprintf(stderr, "nv_fault_test %s %s: %d injected failures, %d runs unaffected\n", versions[v],
              kif_op_name(ops[o]), failures, successes);
    }
  return testing_summary("nv_fault_test");
}
