/* hcq: the command line. Each verb lives in its own tools/<verb>.c and is listed here. */
#include <stdio.h>
#include <string.h>

#include "emulator_tests/mock_env.h"
#include "tools/verbs.h"

static const struct hcq_verb verbs[] = {
    HCQ_VERB_LIST
};

static void usage(FILE *f) {
  fprintf(f, "usage: hcq VERB [ARGS...]   (hcq VERB --help for details)\n\nverbs:\n");
  for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) fprintf(f, "  %-10s %s\n", verbs[i].name, verbs[i].summary);
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  /* HCQ_MOCK=amd|nv: the emulated drivers answer the drivers' OS calls in this process (emulator_tests/mock_env.h) */
  hcq_status st = emu_mock_from_env();
  if (st) {
    fprintf(stderr, "hcq: %s\n", hcq_status_message(st));
    hcq_status_free(st);
    return 2;
  }
  for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
    if (!strcmp(argv[1], verbs[i].name)) return verbs[i].main(argc - 1, argv + 1);
  fprintf(stderr, "hcq: unknown verb '%s' (try hcq --help)\n", argv[1]);
  return 2;
}
