# nv module rules.
#   make nv-hw-prep    (where ptxas is) write every kernel's cubin + PTX for sm_90 into $(NV_HW_PREP)
#   make nv-hw-check   run nv/nv_hw_check.c on this machine's NVIDIA GPU: the driver checks, then the report (driver,
#                      GPU, every example pass/fail with device times, launch latency, graph replay per kernel,
#                      throughput), with the binaries of $(NV_HW_PREP) when that folder exists (no ptxas needed),
#                      else ptxas; fails where there is no GPU (exit 77; not part of make test, which has no GPU)
NV_HW_PREP ?= build/nv-hw-prep
.PHONY: nv-hw-check nv-hw-prep
nv-hw-prep: $(BUILD)/tests/nv/nv_hw_check
	@mkdir -p $(NV_HW_PREP) && $(BUILD)/tests/nv/nv_hw_check --prepare $(NV_HW_PREP)
nv-hw-check: $(BUILD)/tests/nv/nv_hw_check
	@$(BUILD)/tests/nv/nv_hw_check $(if $(wildcard $(NV_HW_PREP)),$(NV_HW_PREP)); rc=$$?; \
	if [ $$rc = 77 ]; then echo "nv-hw-check: no NVIDIA GPU here (/dev/nvidiactl missing)"; exit 1; fi; exit $$rc

# bench/nv_mock_bench runs the driver on the emulated GPU: it links the emulators too.
$(BUILD)/bench/nv_mock_bench: $(BUILD)/obj/bench/nv_mock_bench.o $(LIB) $(EMU_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(EMU_LIB) $(LIB) $(LDLIBS)
