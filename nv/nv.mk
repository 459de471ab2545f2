# nv module rules.
#   make nv-hw-check   run nv/nv_hw_check.c on this machine's NVIDIA GPU (init, memory, copy, waits, timings);
#                      fails where there is no GPU (it exits 77 without one; it is not part of make test, which has no GPU)
.PHONY: nv-hw-check
nv-hw-check: $(BUILD)/tests/nv/nv_hw_check
	@$(BUILD)/tests/nv/nv_hw_check; rc=$$?; \
	if [ $$rc = 77 ]; then echo "nv-hw-check: no NVIDIA GPU here (/dev/nvidiactl missing)"; exit 1; fi; exit $$rc

# bench/nv_mock_bench runs the driver on the emulated GPU: it links the emulators too.
$(BUILD)/bench/nv_mock_bench: $(BUILD)/obj/bench/nv_mock_bench.o $(LIB) $(EMU_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(EMU_LIB) $(LIB) $(LDLIBS)
