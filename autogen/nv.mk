# NVIDIA part of autogen: autogen/gen/nv_gen.c reads autogen/gen/nv_spec/*.txt (facts with their sources) and
# writes autogen/nv_abi.h, nv_qmd.h, nv_layout.h, nv_decode.h and nv_decode.c (committed).
NVGEN := $(BUILD)/autogen/nv_gen
NV_SPECS := $(sort $(wildcard autogen/gen/nv_spec/*.txt))
NV_OUTS := nv_abi.h nv_qmd.h nv_layout.h nv_decode.h nv_decode.c

$(NVGEN): autogen/gen/nv_gen.c autogen/gen/nv_gen_main.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -Wall -Wextra -Werror -O1 -g $(SANFLAGS) -o $@ autogen/gen/nv_gen_main.c

autogen:: $(NVGEN)
	$(NVGEN) autogen $(NV_SPECS)

autogen-check:: $(NVGEN)
	@d=$$(mktemp -d) && $(NVGEN) $$d $(NV_SPECS) >/dev/null && \
	for f in $(NV_OUTS); do \
	  diff -u autogen/$$f $$d/$$f || { rm -rf $$d; echo "autogen-check: autogen/$$f is stale (run make autogen)"; exit 1; }; \
	done; rm -rf $$d; echo "autogen-check: NVIDIA files up to date"
