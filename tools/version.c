#include <stdio.h>
#include <string.h>

#include "tools/verbs.h"

int hcq_verb_version(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "--help")) {
    printf("usage: hcq version\n");
    return 0;
  }
  printf("hcq 0.1 (%s, %s)\n", __VERSION__, sizeof(void *) == 8 ? "64-bit" : "32-bit");
  return 0;
}
