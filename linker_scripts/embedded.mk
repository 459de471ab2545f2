# Embedded targets: cross builds tested under qemu-user, and a bare-metal boot under qemu-system.
#   make cross-test ARCH=aarch64|armhf   cross-build libhcq, hcq and every test into build-ARCH/, then run the tests
#                                        under qemu-user (linker_scripts/cross_run_tests.sh), and a kernel image built
#                                        here for ARCH with the cross hcq (linker_scripts/cross_aot_check.sh)
#   make cross-test-aarch64 / cross-test-armhf
#   make baremetal-test                  boot linker_scripts/baremetal/ on qemu-system-aarch64 -M virt (see there)
ARCH ?= aarch64
EMB_TRIPLE_aarch64 := aarch64-linux-gnu
EMB_TRIPLE_armhf := arm-linux-gnueabihf
EMB_TRIPLE := $(EMB_TRIPLE_$(ARCH))
# 32-bit glibc: 64-bit off_t/ino_t, or stat/readdir fail with EOVERFLOW on the (64-bit) host's file systems.
EMB_CFLAGS_armhf := -D_FILE_OFFSET_BITS=64

.PHONY: cross-test cross-test-aarch64 cross-test-armhf cross-build-tests baremetal-test
TEST_EXTRA += cross-test-aarch64 cross-test-armhf baremetal-test

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

# ------------------------------------------------------------------------------------------------ bare metal
# The kernels: `hcq compile --target c:aarch64` renders examples/{saxpy,sum}.uop to C, aarch64-linux-gnu-gcc
# compiles them freestanding, ld links them with linker_scripts/cpu_kernel.ld, mkimage adds the spec (the same
# buffers/vars as the .uop files). The runtime core (ELF loader, relocations, image reader, kernel calls, status)
# is compiled freestanding with the startup in linker_scripts/baremetal/ and the images are .incbin'd.
BM_DIR := $(BUILD)/baremetal
BM_CC := aarch64-linux-gnu-gcc
BM_CPU := -mcpu=cortex-a57 -mstrict-align
BM_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -O2 -g -ffreestanding -fno-builtin -nostdlib -static -fno-pic -fno-pie \
  -fno-stack-protector -fno-asynchronous-unwind-tables $(BM_CPU) -I. -D_GNU_SOURCE
BM_KFLAGS := -O2 -fPIC -ffreestanding -fno-builtin -nostdlib -fno-stack-protector -fno-asynchronous-unwind-tables \
  -fno-ident $(BM_CPU)
BM_CORE := cpu/cpu_elf.c cpu/cpu_elf32.c cpu/cpu_elf_image.c cpu/cpu_elf_rel.c cpu/cpu_reloc.c cpu/cpu_reloc_aarch64.c \
  cpu/cpu_reloc_arm.c cpu/cpu_reloc_x86_64.c cpu/cpu_reloc_names.c cpu/cpu_image.c cpu/cpu_kernel.c hcq/status.c
BM_START := $(addprefix linker_scripts/baremetal/,start.S bm_libc.c bm_sync.c bm_main.c bm_images.S)
BM_ELF := $(BM_DIR)/hcq-baremetal.elf
BM_SPEC_saxpy := --buf float32:1048576:rw --buf float32:1048576:r --var n --global 1
BM_SPEC_sum := --buf float32:1:w --buf float32:65536:r --global 1

$(BM_DIR)/mkimage: linker_scripts/baremetal/mkimage.c cpu/cpu_image.c cpu/cpu_image_write.c hcq/status.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -Wall -Wextra -Werror -O2 -I. -D_GNU_SOURCE $^ -o $@

$(BM_DIR)/%.c: examples/%.uop $(HCQ)
	@mkdir -p $(dir $@)
	$(HCQ) compile --target c:aarch64 --noopt $< > $@

$(BM_DIR)/%.kelf: $(BM_DIR)/%.c linker_scripts/cpu_kernel.ld
	$(BM_CC) $(BM_KFLAGS) -c $< -o $(BM_DIR)/$*.ko
	aarch64-linux-gnu-ld -pie --no-dynamic-linker -z norelro -z noexecstack --no-undefined --defsym=hcq_entry=$* \
	  -T linker_scripts/cpu_kernel.ld $(BM_DIR)/$*.ko -o $@

$(BM_DIR)/%.img: $(BM_DIR)/%.kelf $(BM_DIR)/mkimage
	$(BM_DIR)/mkimage --arch aarch64 --name $* $(BM_SPEC_$*) -o $@ $<

$(BM_ELF): $(BM_START) $(BM_CORE) linker_scripts/baremetal/bm.h linker_scripts/baremetal-aarch64.ld \
    $(BM_DIR)/saxpy.img $(BM_DIR)/sum.img
	$(BM_CC) $(BM_CFLAGS) -DSAXPY_IMG=$(BM_DIR)/saxpy.img -DSUM_IMG=$(BM_DIR)/sum.img -T linker_scripts/baremetal-aarch64.ld \
	  -Wl,--build-id=none -Wl,-z,noexecstack -Wl,--no-warn-rwx-segments $(BM_START) $(BM_CORE) -lgcc -o $@

baremetal-test: $(BM_ELF)
	python3 linker_scripts/baremetal_check.py $(BM_ELF)
