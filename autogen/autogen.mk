# autogen/ rules for the AMD part (the NVIDIA part has its own autogen/nv.mk).
#   make autogen          regenerate the committed AMD outputs in autogen/
#   make autogen-check    regenerate into a temp dir and fail with the diff if anything committed differs
AMD_AUTOGEN_OUTPUTS := kfd.h kfd_abi_list.h kfd_decode.c kfd_decode.h amd_pm4.h amd_sdma.h amd_regs_gfx9.h \
  amd_regs_gfx11.h amd_regs_gfx942.h amd_regs_gfx12.h amd_nbio.h

autogen::
	bash autogen/gen/gen_amd.sh autogen

autogen-check::
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && bash autogen/gen/gen_amd.sh "$$tmp" && rc=0 && \
	for f in $(AMD_AUTOGEN_OUTPUTS); do diff -u "autogen/$$f" "$$tmp/$$f" || rc=1; done; \
	if [ $$rc -ne 0 ]; then echo "autogen-check: committed AMD outputs differ from a fresh run (diff above); run make autogen" >&2; exit 1; fi; \
	echo "autogen-check: AMD outputs up to date"

# The ABI test includes the real linux/kfd_ioctl.h, which needs a drm/drm.h stand-in (Debian ships none).
$(BUILD)/obj/autogen/kfd_abi_test.o: CFLAGS += -Iautogen/gen/shim
