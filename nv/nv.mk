# nv module rules.
#   make nv-hw-check   run nv/nv_hw_test on this machine's NVIDIA GPU (init, memory, copy, waits, timings);
#                      fails where there is no GPU (the test itself exits 77, which this target reports)
.PHONY: nv-hw-check
nv-hw-check: $(BUILD)/tests/nv/nv_hw_test
	@$(BUILD)/tests/nv/nv_hw_test; rc=$$?; \
	if [ $$rc = 77 ]; then echo "nv-hw-check: no NVIDIA GPU here (/dev/nvidiactl missing)"; exit 1; fi; exit $$rc
