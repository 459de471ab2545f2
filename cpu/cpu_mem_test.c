/* cpu_mem: alignment, zero fill, copies, and clear errors for sizes that cannot be mapped; guarded device buffers
 * checked against /proc/self/maps. */
#include "cpu/cpu_mem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/testing.h"

/* The /proc/self/maps region holding addr: its permissions ("rw-p") and extent; false if none. */
static bool region_of(uintptr_t addr, char perms[5], uintptr_t *lo, uintptr_t *hi) {
  FILE *f = fopen("/proc/self/maps", "r");
  char line[512];
  bool found = false;
  while (f && !found && fgets(line, sizeof line, f)) {
    unsigned long long a, b;
    if (sscanf(line, "%llx-%llx %4s", &a, &b, perms) == 3 && addr >= a && addr < b) *lo = (uintptr_t)a, *hi = (uintptr_t)b, found = true;
  }
  if (f) fclose(f);
  return found;
}

/* Guarded device buffers: aligned, zeroed, ending less than 16 bytes before a PROT_NONE region of at least the
 * guard size, with one as large before the first page; registered while alive; described by distance. */
static void test_buffers(void) {
  size_t guard = cpu_buffer_guard_B(), ps = cpu_page_size();
  bool qemu = getenv("HCQ_QEMU_USER") != NULL;
  if (qemu) printf("NOTE: qemu-user: the lower guard is not looked up in /proc/self/maps\n");
  CHECK(guard >= CPU_GUARD_MIN_B && guard % ps == 0);
  if (!getenv("HCQ_CPU_GUARD_B")) CHECK_EQ_INT(guard, CPU_GUARD_DEFAULT_B); /* 16 GiB on 64-bit hosts */
  size_t sizes[] = {1, 4, 15, 16, 17, 4095, 4096, 4097, 100000, (size_t)5 << 20, ((size_t)5 << 20) + 3};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    cpu_buffer *b = NULL;
    CHECK_OK(cpu_buffer_alloc(sizes[i], &b));
    if (!b) continue;
    uintptr_t p = (uintptr_t)b->ptr, end = p + sizes[i];
    CHECK_EQ_INT(p % CPU_BUFFER_ALIGN_B, 0);
    uintptr_t page_end = (end + ps - 1) & ~(uintptr_t)(ps - 1);
    CHECK(page_end - end < CPU_BUFFER_ALIGN_B);
    bool zero = true;
    for (size_t k = 0; k < sizes[i]; k += 997) zero &= ((uint8_t *)b->ptr)[k] == 0;
    CHECK(zero);
    memset(b->ptr, 0x5a, sizes[i]);
    char perms[5] = "";
    uintptr_t lo = 0, hi = 0;
    CHECK(region_of(page_end, perms, &lo, &hi) && !strcmp(perms, "---p") && hi - page_end >= guard);
    uintptr_t first = p & ~(uintptr_t)(ps - 1);
    /* qemu-arm 7.2's emulated maps leave out the lower PROT_NONE region (the guard still faults:
     * cpu_device_contain_test checks underruns by running kernels) */
    if (!qemu) CHECK(region_of(first - 1, perms, &lo, &hi) && !strcmp(perms, "---p") && first - lo >= guard);
    CHECK(cpu_buffer_find(b->ptr) == b);
    char d[160];
    CHECK(cpu_buffer_describe((void *)(end + 40), d, sizeof d));
    char want[64];
    snprintf(want, sizeof want, "40 bytes past the end of buffer %p (%zu bytes)", b->ptr, sizes[i]);
    CHECK(strstr(d, want) != NULL);
    CHECK(cpu_buffer_describe((void *)(p - 8), d, sizeof d) && strstr(d, "8 bytes before buffer"));
    void *ptr = b->ptr;
    cpu_buffer_free(b);
    CHECK(cpu_buffer_find(ptr) == NULL);
    CHECK(!cpu_buffer_describe((void *)(end + 40), d, sizeof d));
  }
  cpu_buffer *b = (cpu_buffer *)1;
  CHECK_ERR(cpu_buffer_alloc(0, &b), HCQ_CODE_INVALID, "size 0");
  CHECK_ERR(cpu_buffer_alloc(SIZE_MAX, &b), HCQ_CODE_NOMEM, "too large");
  CHECK(b == NULL);
  cpu_buffer_free(NULL);
}

int main(void) {
  test_buffers();
  size_t aligns[] = {0, 64, 4096, 1 << 16, 1 << 21};
  for (size_t i = 0; i < sizeof aligns / sizeof *aligns; i++) {
    void *p = NULL;
    size_t size_B = 12345 + i * 7;
    CHECK_OK(cpu_alloc(size_B, aligns[i], &p));
    CHECK(p != NULL);
    size_t want = aligns[i] ? aligns[i] : cpu_page_size();
    CHECK_EQ_INT((uintptr_t)p % want, 0);
    unsigned char *b = p;
    int zero = 1;
    for (size_t k = 0; k < size_B; k++) zero &= b[k] == 0;
    CHECK(zero);
    unsigned char src[300], back[300];
    for (int k = 0; k < 300; k++) src[k] = (unsigned char)(k * 31 + 7);
    cpu_copyin(p, size_B - 300, src, 300);
    memset(back, 0, sizeof back);
    cpu_copyout(back, p, size_B - 300, 300);
    CHECK(memcmp(src, back, 300) == 0);
    CHECK_EQ_INT(b[size_B - 300], 7);
    cpu_free(p, size_B);
  }
  void *p = (void *)1;
  if (sizeof(size_t) == 8) {
    CHECK_ERR(cpu_alloc((size_t)((uint64_t)1 << 62), 0, &p), HCQ_CODE_NOMEM, "4611686018427387904");
    CHECK(p == NULL);
    CHECK_ERR(cpu_alloc(SIZE_MAX, 0, &p), HCQ_CODE_NOMEM, "18446744073709551615");
  } else { /* 32-bit: 3.5 GiB cannot be mapped next to the program */
    CHECK_ERR(cpu_alloc((size_t)7 << 29, 0, &p), HCQ_CODE_NOMEM, "3758096384");
    CHECK(p == NULL);
    CHECK_ERR(cpu_alloc(SIZE_MAX, 0, &p), HCQ_CODE_NOMEM, "4294967295");
  }
  CHECK_ERR(cpu_alloc(100, 3000, &p), HCQ_CODE_INVALID, "power of two");
  CHECK_ERR(cpu_alloc(0, 0, &p), HCQ_CODE_INVALID, "size 0");
  cpu_free(NULL, 100);
  return testing_summary("cpu_mem_test");
}
