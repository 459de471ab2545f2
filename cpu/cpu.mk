# cpu module rules.
#   make tsan-pool   build cpu_pool_test with -fsanitize=thread into build-tsan-pool/ and run it
TSAN_DIR := build-tsan-pool
TSAN_SRCS := cpu/cpu_pool_test.c cpu/cpu_pool.c cpu/cpu_sync.c cpu/cpu_kernel.c hcq/status.c

TEST_EXTRA += tsan-pool
.PHONY: tsan-pool
tsan-pool: $(TSAN_SRCS)
	@mkdir -p $(TSAN_DIR)
	$(CC) -std=gnu11 -Wall -Wextra -Werror -O1 -g -I. -D_GNU_SOURCE -fsanitize=thread $(TSAN_SRCS) \
	  -o $(TSAN_DIR)/cpu_pool_test -lpthread
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" setarch $$(uname -m) -R $(TSAN_DIR)/cpu_pool_test
