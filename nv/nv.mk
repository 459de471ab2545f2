# nv module rules.
#   make nv-hw-prep    (where ptxas is) write every kernel's cubin + PTX for sm_90 (the examples, the timing kernels
#                      and the conformance suite's programs) into $(NV_HW_PREP); copy the tree with that folder to
#                      the GPU machine (or `make nv-hw-bundle`: one tarball of the tracked files plus the folder)
#   make nv-hw-check   on the machine with the NVIDIA GPU (gcc + make + the driver; no CUDA toolkit, no network):
#                      driver checks, the conformance suite on nv (its own process, --no-mock), every example against
#                      the reference interpreter with device times and throughput, launch-to-signal latency
#                      percentiles, graph replay per kernel, then the summary; binaries from $(NV_HW_PREP) when it
#                      exists (else ptxas). Fails where there is no GPU (not part of make test, which has no GPU).
#   NV_HW_MOCK=1 make nv-hw-check   the same flow on the emulated GPU (HCQ_MOCK=nv), labelled MOCK: checks the
#                      report and the prepared binaries end to end, here.
NV_HW_PREP ?= build/nv-hw-prep
NV_HW_BINS := $(BUILD)/tests/nv/nv_hw_check $(BUILD)/tests/hcq/conformance_test
.PHONY: nv-hw-check nv-hw-prep nv-hw-bundle
nv-hw-prep: $(NV_HW_BINS)
	@mkdir -p $(NV_HW_PREP) && $(BUILD)/tests/nv/nv_hw_check --prepare $(NV_HW_PREP) && \
	$(BUILD)/tests/hcq/conformance_test --prepare $(NV_HW_PREP)
nv-hw-check: $(NV_HW_BINS)
	@$(if $(NV_HW_MOCK),HCQ_MOCK=nv )$(BUILD)/tests/nv/nv_hw_check --conformance $(BUILD)/tests/hcq/conformance_test \
	  $(if $(wildcard $(NV_HW_PREP)),$(NV_HW_PREP)); rc=$$?; \
	if [ $$rc = 77 ]; then echo "nv-hw-check: no NVIDIA GPU here (/dev/nvidiactl missing)"; exit 1; fi; exit $$rc
nv-hw-bundle: nv-hw-prep
	@git ls-files > $(BUILD)/nv-hw-files && echo $(NV_HW_PREP) >> $(BUILD)/nv-hw-files && \
	tar czf $(BUILD)/nv-hw-bundle.tar.gz -T $(BUILD)/nv-hw-files && rm -f $(BUILD)/nv-hw-files && \
	echo "nv-hw-bundle: $(BUILD)/nv-hw-bundle.tar.gz (on the GPU machine: tar xzf it, then make nv-hw-check)"

# bench/nv_mock_bench runs the driver on the emulated GPU: it links the emulators too.
$(BUILD)/bench/nv_mock_bench: $(BUILD)/obj/bench/nv_mock_bench.o $(LIB) $(EMU_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(EMU_LIB) $(LIB) $(LDLIBS)
