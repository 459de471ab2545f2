/* cpu_mem: alignment, zero fill, copies, and clear errors for sizes that cannot be mapped. */
#include "cpu/cpu_mem.h"

#include <stdint.h>

#include "hcq/testing.h"

int main(void) {
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
