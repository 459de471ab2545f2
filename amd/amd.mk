# amd module rules.
#   make amd-hw-check   run amd/amd_hw_check.c on this machine's AMD GPU through /dev/kfd (no mock): every example
#                       on amd:0 against the reference interpreter, launch latency, graph replay; not part of make
#                       test (it exits 77 without a GPU)
.PHONY: amd-hw-check
amd-hw-check: $(BUILD)/tests/amd/amd_hw_check
	@$(BUILD)/tests/amd/amd_hw_check; rc=$$?; \
	if [ $$rc = 77 ]; then echo "amd-hw-check: no AMD GPU here (see the message above)"; exit 1; fi; exit $$rc

# The mock bench links the emulators (the mock GPU is installed in-process).
$(BUILD)/bench/amd_mock_bench: $(EMU_LIB)
$(BUILD)/bench/amd_mock_bench: BENCH_LDLIBS = $(EMU_LIB) $(LIB) $(LDLIBS)

#   make tsan-amd-mock  the AMD mock's end-to-end tests built with -fsanitize=thread (build-tsan-amd/): the driver
#                       and the test poll memory that the mock's CP thread writes (rings, rptr/wptr, signals, the last
#                       failure), so every such access must be atomic or locked. The NV tests are not in it: the NV
#                       mock reserves fixed GPU VA windows that TSan's shadow memory occupies. -Wno-tsan: gcc warns
#                       that TSan does not model atomic_thread_fence (amd_queue.c orders its doorbell write with one).
TSAN_AMD_DIR := build-tsan-amd
TSAN_AMD_TESTS := $(patsubst %,$(TSAN_AMD_DIR)/tests/emulator_tests/amd_%_test,dispatch_ptr examples fault fuzz \
  gfx9 hcq hdp mock mock_bigcode mock_exec rt scratch)
TEST_EXTRA += tsan-amd-mock
.PHONY: tsan-amd-mock
tsan-amd-mock:
	@$(MAKE) --no-print-directory -j2 BUILD=$(TSAN_AMD_DIR) SANITIZE=0 "EXTRA_CFLAGS=-fsanitize=thread -Wno-tsan" \
	  EXTRA_LDFLAGS=-fsanitize=thread $(TSAN_AMD_TESTS)
	@TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" setarch $$(uname -m) -R \
	  bash tools/run_tests.sh $(TSAN_AMD_TESTS)
