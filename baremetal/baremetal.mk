# The bare-metal port: the runtime core booted on qemu-system-aarch64 -M virt without an OS.
#   make baremetal-test   build build/baremetal/hcq-baremetal.elf and check its UART output (baremetal_check.py)
# Startup, libc shim and the test program live here; the linker script is linker_scripts/baremetal-aarch64.ld.
.PHONY: baremetal-test
TEST_EXTRA += baremetal-test

# The kernels: `hcq compile --target c --arch aarch64 --noopt -o K.img` (tools/aot.c) renders examples/{saxpy,sum}.uop
# to C, compiles it with aarch64-linux-gnu-gcc and the toolchain's own freestanding flags (cc_toolchain_flags_for:
# the JIT's and every kernel image's; no copy of them here) tuned by HCQ_CC_TUNE=$(BM_CPU), links it with
# linker_scripts/cpu_kernel.ld and writes the image with the program's spec; the images are .incbin'd.
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
BM_CANDIDATES := $(filter-out %_test.c hcq/rt_%.c,$(wildcard base/*.c cpu/*.c elf/*.c hcq/*.c))
BM_CORE_OBJS := $(patsubst %.c,$(BM_DIR)/obj/%.o,$(BM_CANDIDATES))
BM_CORE := $(BM_DIR)/libcore.a
BM_START := $(addprefix baremetal/,start.S bm_libc.c bm_sync.c bm_main.c bm_images.S)
BM_ELF := $(BM_DIR)/hcq-baremetal.elf

$(BM_DIR)/%.img: examples/%.uop $(HCQ) linker_scripts/cpu_kernel.ld
	@mkdir -p $(dir $@)
	HCQ_CC_TUNE="$(BM_CPU)" HCQ_KERNEL_LD=linker_scripts/cpu_kernel.ld \
	  $(HCQ) compile --target c --arch aarch64 --noopt -o $@ $<

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
