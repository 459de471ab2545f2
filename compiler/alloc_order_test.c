/* The generated source must not depend on where the context's arena put the nodes: the same kernel compiled in a
 * context whose arena was first padded by P bytes (which moves every node, and moves the arena chunk boundaries to
 * other nodes, so that later nodes may sit at lower addresses) must give the same source as in a fresh context.
 * The reference is the fresh-context compile; kernels with several buffers and vector groups (c target) are the
 * ones whose group order an address comparison would flip. */
#include <string.h>

#include "compiler/compiler.h"
#include "compiler/kernel_text.h"
#include "base/testing.h"

static char *compile_padded(const char *path, const cc_target *t, size_t pad_B) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  /* padding in pieces below the arena's big-block size, so it fills chunks the nodes then share */
  for (size_t left = pad_B; left > 0;) {
    size_t n = left < 4096 ? left : 4096;
    CHECK(uop_ctx_alloc(ctx, n) != NULL);
    left -= n;
  }
  const uop *sink = NULL;
  CHECK_OK(cc_kernel_parse_file(ctx, path, &sink));
  cc_program *p = NULL;
  CHECK_OK(cc_compile_source(ctx, sink, t, &(cc_options){0}, &p));
  char *src = p && p->source ? strdup(p->source) : strdup("");
  cc_program_free(p);
  uop_ctx_destroy(ctx);
  return src;
}

int main(void) {
  cc_target t;
  CHECK_OK(cc_target_get("c", 0, &t));
  static const char *const KERNELS[] = {"examples/matmul_odd_small.uop", "examples/matmul_512.uop"};
  for (size_t k = 0; k < sizeof KERNELS / sizeof *KERNELS; k++) {
    char *ref = compile_padded(KERNELS[k], &t, 0);
    int bad = 0;
    /* pads across one whole 256 KiB arena chunk, so the chunk boundary lands between every few nodes */
    for (size_t pad = 4096; pad <= 300 * 1024 && bad < 3; pad += 4096) {
      char *src = compile_padded(KERNELS[k], &t, pad);
      if (strcmp(src, ref) != 0) {
        fprintf(stderr, "%s: padding the arena by %zu bytes changed the generated source\n", KERNELS[k], pad);
        bad++;
      }
      free(src);
    }
    CHECK_EQ_INT(bad, 0);
    free(ref);
  }
  return testing_summary("alloc_order");
}
