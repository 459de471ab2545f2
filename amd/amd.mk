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
