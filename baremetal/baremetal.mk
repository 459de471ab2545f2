# The bare-metal port: the runtime core booted on qemu-system-aarch64 -M virt without an OS.
#   make baremetal-test   build build/baremetal/hcq-baremetal.elf and check its UART output (baremetal_check.py)
# Startup, libc shim and the test program live here; the linker script is linker_scripts/baremetal-aarch64.ld.
.PHONY: baremetal-test
TEST_EXTRA += baremetal-test

# The kernels: `hcq compile --target c:aarch64` renders examples/{saxpy,sum}.uop to C, aarch64-linux-gnu-gcc
# compiles them freestanding, ld links them with linker_scripts/cpu_kernel.ld, mkimage adds the spec (the same
# buffers/vars as the .uop files), and the images are .incbin'd.
# The runtime core (ELF loader, relocations, image reader, kernel calls, status) is not listed by hand: every library
# source of BM_CANDIDATES that compiles freestanding goes into an archive, and the linker takes from it exactly the
# objects the port's files need (the port's bm_sync.c and bm_libc.c come first, so cpu_sync.c, cpu_mem.c, libc are
# not pulled). A candidate that does not compile becomes an empty object; should the port need it, the link fails and
# its compiler errors are printed (it is retried when any header changes). $(BM_DIR)/core.map lists what was
# pulled and why.
BM_DIR := $(BUILD)/baremetal
BM_CC := aarch64-linux-gnu-gcc
BM_CPU := -mcpu=cortex-a57 -mstrict-align
BM_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -O2 -g -ffreestanding -fno-builtin -nostdlib -static -fno-pic -fno-pie \
  -fno-stack-protector -fno-asynchronous-unwind-tables $(BM_CPU) -I. -D_GNU_SOURCE
BM_KFLAGS := -O2 -fPIC -ffreestanding -fno-builtin -nostdlib -fno-stack-protector -fno-asynchronous-unwind-tables \
  -fno-ident $(BM_CPU)
BM_CANDIDATES := $(filter-out %_test.c,$(wildcard cpu/*.c hcq/*.c))
BM_CORE_OBJS := $(patsubst %.c,$(BM_DIR)/obj/%.o,$(BM_CANDIDATES))
BM_CORE := $(BM_DIR)/libcore.a
BM_START := $(addprefix baremetal/,start.S bm_libc.c bm_sync.c bm_main.c bm_images.S)
BM_ELF := $(BM_DIR)/hcq-baremetal.elf
BM_SPEC_saxpy := --buf float32:1048576:rw --buf float32:1048576:r --var n --global 1
BM_SPEC_sum := --buf float32:1:w --buf float32:65536:r --global 1

$(BM_DIR)/mkimage: baremetal/mkimage.c cpu/cpu_image.c cpu/cpu_image_write.c base/status.c
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

$(BM_DIR)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(BM_CC) $(BM_CFLAGS) -MMD -MP -c $< -o $@ 2>$@.err || \
	  { $(BM_CC) -c -x c /dev/null -o $@ && echo '$@: $(wildcard */*.h)' >$(@:.o=.d); }

$(BM_CORE): $(BM_CORE_OBJS)
	rm -f $@ && aarch64-linux-gnu-ar rcs $@ $^

$(BM_ELF): $(BM_START) $(BM_CORE) baremetal/bm.h linker_scripts/baremetal-aarch64.ld \
    $(BM_DIR)/saxpy.img $(BM_DIR)/sum.img
	$(BM_CC) $(BM_CFLAGS) -DSAXPY_IMG=$(BM_DIR)/saxpy.img -DSUM_IMG=$(BM_DIR)/sum.img -T linker_scripts/baremetal-aarch64.ld \
	  -Wl,--build-id=none -Wl,-z,noexecstack -Wl,--no-warn-rwx-segments -Wl,-Map,$(BM_DIR)/core.map \
	  $(BM_START) $(BM_CORE) -lgcc -o $@ || \
	  { for e in $(BM_CORE_OBJS:=.err); do test -s $$e && { echo "== $$e"; cat $$e; }; done; exit 1; }

baremetal-test: $(BM_ELF)
	python3 baremetal/baremetal_check.py $(BM_ELF)
