# Embedded targets: cross builds tested under qemu-user (the bare-metal boot is baremetal/baremetal.mk).
#   make cross-test ARCH=aarch64|armhf   cross-build libhcq, hcq and every test into build-ARCH/, then run the tests
#                                        under qemu-user (linker_scripts/cross_run_tests.sh), and a kernel image built
#                                        here for ARCH with the cross hcq (linker_scripts/cross_aot_check.sh)
#   make cross-test-aarch64 / cross-test-armhf
ARCH ?= aarch64
EMB_TRIPLE_aarch64 := aarch64-linux-gnu
EMB_TRIPLE_armhf := arm-linux-gnueabihf
EMB_TRIPLE := $(EMB_TRIPLE_$(ARCH))
# 32-bit glibc: 64-bit off_t/ino_t, or stat/readdir fail with EOVERFLOW on the (64-bit) host's file systems.
EMB_CFLAGS_armhf := -D_FILE_OFFSET_BITS=64

.PHONY: cross-test cross-test-aarch64 cross-test-armhf cross-build-tests
TEST_EXTRA += cross-test-aarch64 cross-test-armhf

# $(HCQ) (the host's hcq) builds the kernel image that linker_scripts/cross_aot_check.sh runs under qemu-user.
cross-test: $(HCQ)
	@test -n "$(EMB_TRIPLE)" || { echo "cross-test: ARCH must be aarch64 or armhf (got '$(ARCH)')"; exit 2; }
	@command -v $(EMB_TRIPLE)-gcc >/dev/null || { echo "cross-test: $(EMB_TRIPLE)-gcc missing (apt-get install gcc-$(EMB_TRIPLE))"; exit 1; }
	$(MAKE) --no-print-directory -j2 BUILD=build-$(ARCH) CC=$(EMB_TRIPLE)-gcc HCQ_CROSS_ARCH=$(ARCH) SANITIZE=0 \
	  EXTRA_CFLAGS="$(EMB_CFLAGS_$(ARCH))" cross-build-tests
	bash linker_scripts/cross_run_tests.sh $(ARCH) build-$(ARCH)
	bash linker_scripts/cross_aot_check.sh $(ARCH) build-$(ARCH) $(HCQ)

cross-test-aarch64:
	@$(MAKE) --no-print-directory cross-test ARCH=aarch64
cross-test-armhf:
	@$(MAKE) --no-print-directory cross-test ARCH=armhf

cross-build-tests: all $(TESTS)

ifneq ($(HCQ_CROSS_ARCH),)
# The cross sysroots carry linux-libc-dev 6.1.4 headers, whose kfd_ioctl.h predates KFD_MIN_QUEUE_RING_SIZE (a 6.1
# stable addition the host's 6.1.19x headers have). The ABI test therefore compiles the host's kfd_ioctl.h, but
# against the target's <linux/types.h> and <asm/ioctl.h>, so sizes and offsets are the target's.
$(BUILD)/kfd_uapi/linux/kfd_ioctl.h: /usr/include/linux/kfd_ioctl.h
	@mkdir -p $(dir $@)
	cp $< $@
$(BUILD)/obj/autogen/kfd_abi_test.o: CFLAGS += -I$(BUILD)/kfd_uapi
$(BUILD)/obj/autogen/kfd_abi_test.o: $(BUILD)/kfd_uapi/linux/kfd_ioctl.h
# aarch64-linux-gnu-gcc 12.2 stops with "internal compiler error: in vect_transform_reduction" on this test at -O2.
$(BUILD)/obj/compiler/interp_test.o: CFLAGS += -fno-tree-vectorize
endif
