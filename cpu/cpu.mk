# cpu module rules.
#   make tsan-pool   build the worker pool's tests with -fsanitize=thread into build-tsan-pool/ and run them
# The sources it compiles are derived, not listed: each test plus the library files whose objects its link pulls
# out of libhcq.a (the linker's -t -t trace names each member; a member maps back to the LIB_SRCS file of that name).
TSAN_DIR := build-tsan-pool
TSAN_TESTS := cpu/cpu_pool_test.c cpu/cpu_pool_here_test.c

TEST_EXTRA += tsan-pool
.PHONY: tsan-pool
tsan-pool: $(call obj,$(TSAN_TESTS)) $(LIB)
	@mkdir -p $(TSAN_DIR)
	@for t in $(TSAN_TESTS); do n=$$(basename $$t .c); \
	$(CC) $(LDFLAGS) -o $(TSAN_DIR)/trace.out $(BUILD)/obj/$${t%.c}.o $(LIB) $(LDLIBS) -Wl,-t,-t \
	  >$(TSAN_DIR)/trace.txt 2>&1 || { cat $(TSAN_DIR)/trace.txt; exit 1; }; \
	members=$$(sed -n 's#^($(LIB))##p' $(TSAN_DIR)/trace.txt); srcs=$$t; \
	for m in $$members; do s=$$(for f in $(LIB_SRCS); do case $$f in */$${m%.o}.c) echo $$f;; esac; done); \
	  test -n "$$s" || { echo "tsan-pool: no source for library member $$m"; exit 1; }; srcs="$$srcs $$s"; done; \
	echo "tsan-pool: $$srcs"; \
	$(CC) -std=gnu11 -Wall -Wextra -Werror -O1 -g -I. -D_GNU_SOURCE -fsanitize=thread $$srcs \
	  -o $(TSAN_DIR)/$$n -lpthread || exit 1; \
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" setarch $$(uname -m) -R $(TSAN_DIR)/$$n || exit 1; done
