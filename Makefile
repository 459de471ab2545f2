# hcq — one Makefile, wildcard-driven: a new foo.c in a module directory joins build/libhcq.a,
# a new foo_test.c beside it becomes a test. Modules may add rules in their own module.mk.
#
#   make            build build/libhcq.a and build/hcq
#   make test       build and run every test (installs missing Debian packages when root)
#   make test SANITIZE=1   the same under ASan+UBSan (in build-san/)
#   make fuzz       every fuzzer with one random seed, HCQ_FUZZ_SECONDS (default 120) each
#   make run        the main job
#   make bench      benchmarks
#   make clean

.DEFAULT_GOAL := all
SANITIZE ?= 0
ifeq ($(SANITIZE),1)
BUILD ?= build-san
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else
BUILD ?= build
SANFLAGS :=
endif

CC ?= cc
OPT ?= -O2
CFLAGS := -std=gnu11 -Wall -Wextra -Werror $(OPT) -g -MMD -MP -I. -D_GNU_SOURCE $(SANFLAGS) $(EXTRA_CFLAGS)
LDFLAGS := $(SANFLAGS) $(EXTRA_LDFLAGS)
LDLIBS := -lpthread -lm -ldl

TEST_EXTRA :=
LIB_DIRS := base hcq uop compiler elf cpu amd nv kernel_iface autogen
LIB_SRCS := $(filter-out %_test.c,$(wildcard $(addsuffix /*.c,$(LIB_DIRS))))
EMU_SRCS := $(filter-out %_test.c,$(wildcard emulator_tests/*.c))
TOOL_SRCS := $(filter-out %_test.c,$(wildcard tools/*.c))
TEST_SRCS := $(wildcard $(addsuffix /*_test.c,$(LIB_DIRS) emulator_tests tools))
BENCH_SRCS := $(wildcard bench/*.c)

LIB := $(BUILD)/libhcq.a
EMU_LIB := $(BUILD)/libhcq_emu.a
HCQ := $(BUILD)/hcq
TESTS := $(patsubst %.c,$(BUILD)/tests/%,$(TEST_SRCS))
BENCHES := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

.PHONY: all test run bench clean deps test-only autogen autogen-check fuzz
# Modules add recipes to these with double-colon rules in their own DIR/*.mk.
autogen::
autogen-check::
all: $(LIB) $(HCQ)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(LIB): $(call obj,$(LIB_SRCS))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(EMU_LIB): $(call obj,$(EMU_SRCS))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# The command links the emulated drivers too: HCQ_MOCK=amd|nv puts them in front of the OS (emulator_tests/mock_env.h).
$(HCQ): $(call obj,$(TOOL_SRCS)) $(LIB) $(EMU_LIB)
	$(CC) $(LDFLAGS) -o $@ $(call obj,$(TOOL_SRCS)) $(EMU_LIB) $(LIB) $(LDLIBS)

# A test is one C file linking the library and the emulators. Only the tests of the `hcq` command itself (the
# verbs: tools/*_test.c, and cpu_e2e_test's `hcq run`/`hcq bench` cases) also link its objects but main: they call
# the verbs in-process, since under qemu-user (no binfmt_misc) a test cannot exec the cross-built binary.
TOOL_LIB_OBJS := $(call obj,$(filter-out tools/main.c,$(TOOL_SRCS)))
VERB_TESTS := $(BUILD)/tests/emulator_tests/cpu_e2e_test $(filter $(BUILD)/tests/tools/%,$(TESTS))
$(BUILD)/tests/%: $(BUILD)/obj/%.o $(LIB) $(EMU_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(if $(filter $@,$(VERB_TESTS)),$(TOOL_LIB_OBJS)) $(EMU_LIB) $(LIB) $(LDLIBS)
$(VERB_TESTS): $(TOOL_LIB_OBJS)

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS) $(BENCH_LDLIBS)

deps:
	@bash tools/deps.sh test

# `make test` is the whole suite and what CI runs: packages, the generated-header check, every test, then every
# test again under ASan+UBSan (build-san/), then the extra checks modules list in TEST_EXTRA (e.g. TSan, qemu).
# Tests run from the repository root; each prints its own summary. Exit 77 = skipped (reported loudly).
test: deps
	@$(MAKE) --no-print-directory autogen-check
	@$(MAKE) --no-print-directory -j2 test-only
	@echo "== sanitizer pass (ASan+UBSan)"
	@$(MAKE) --no-print-directory -j2 SANITIZE=1 test-only
	@for t in $(TEST_EXTRA); do echo "== $$t"; $(MAKE) --no-print-directory $$t || exit 1; done

test-only: all $(TESTS)
	@bash tools/run_tests.sh $(TESTS)
	@echo "== the conformance suite on the Blackwell NV mock (QMD V05_00, sm_100)"
	@HCQ_MOCK_NV_ARCH=blackwell bash tools/run_tests.sh $(BUILD)/tests/hcq/conformance_test

# `make fuzz` (nightly-style, not part of `make test`): every fuzzer in the tree (tests named *fuzz*_test, and the
# ELF reader, loader and GPU program reader tests, which fuzz when given a budget) for HCQ_FUZZ_SECONDS (default 120)
# each, all with one random seed printed first (HCQ_FUZZ_SEED=N reruns a seed); a failing fuzzer is named with the
# seed to rerun it.
FUZZERS := $(foreach t,$(TESTS),$(if $(findstring fuzz,$(notdir $(t))),$(t))) \
  $(filter %/cpu_elf_test %/cpu_elf32_test %/elf_test %/amd_code_object_test %/nv_cubin_test,$(TESTS))
fuzz: all $(FUZZERS)
	@seed=$${HCQ_FUZZ_SEED:-$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}; secs=$${HCQ_FUZZ_SECONDS:-120}; \
	echo "make fuzz: seed $$seed, $$secs s per fuzzer: $(notdir $(FUZZERS))"; fail=0; \
	for t in $(FUZZERS); do echo "== $$t (HCQ_FUZZ_SEED=$$seed)"; \
	  HCQ_FUZZ_SEED=$$seed HCQ_FUZZ_SECONDS=$$secs $$t || { echo "FAILED: $$t; rerun: HCQ_FUZZ_SEED=$$seed $$t"; fail=1; }; \
	done; exit $$fail

run: all
	@bash tools/deps.sh run
	@bash tools/main_job.sh $(HCQ)

bench: all $(BENCHES)
	@for b in $(BENCHES); do echo "== $$b"; $$b || exit 1; done

clean:
	rm -rf build build-san build-*

-include $(wildcard */*.mk)
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
.SECONDARY:
