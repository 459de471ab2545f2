/* mkimage (host tool): wrap a linked kernel ELF and its spec into a kernel image (cpu/cpu_image.h).
 *   mkimage --arch A --name KERNEL [--buf DTYPE:ELEMENTS:r|w|rw]... [--var NAME]... [--global EXPR (up to 3)]
 *           -o OUT.img IN.elf
 * Used by `make baremetal-test` until `hcq compile --arch A -o k.img` writes images itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_image.h"
#include "hcq/program.h"

static int usage(void) {
  fprintf(stderr, "usage: mkimage --arch A --name K [--buf DTYPE:N:r|w|rw]... [--var V]... [--global EXPR]... -o OUT IN.elf\n");
  return 2;
}

int main(int argc, char **argv) {
  static hcq_program s;
  hcq_program_init(&s);
  const char *out = NULL, *in = NULL;
  int ng = 0;
  hcq_status st = HCQ_OK;
  for (int i = 1; i < argc && !st; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--arch") && v) snprintf(s.target, sizeof s.target, "c:%.16s", argv[++i]);
    else if (!strcmp(a, "--name") && v) snprintf(s.symbol, sizeof s.symbol, "%s", argv[++i]);
    else if (!strcmp(a, "--var") && v) st = hcq_program_add_var(&s, argv[++i], false, 0, 0);
    else if (!strcmp(a, "--global") && v && ng < 3) snprintf(s.global[ng++], sizeof s.global[0], "%s", argv[++i]);
    else if (!strcmp(a, "-o") && v) out = argv[++i];
    else if (!strcmp(a, "--buf") && v) {
      char dtype[16], acc[4] = "";
      long long n = 0;
      if (sscanf(argv[++i], "%15[^:]:%lld:%3s", dtype, &n, acc) != 3) return usage();
      st = hcq_program_add_buffer(&s, dtype, n, (strchr(acc, 'r') ? HCQ_ACCESS_READ : 0u) |
                                                   (strchr(acc, 'w') ? HCQ_ACCESS_WRITE : 0u));
    } else if (a[0] != '-' && !in) in = a;
    else return usage();
  }
  memcpy(s.name, s.symbol, sizeof s.name);
  if (!out || !in) return usage();
  FILE *f = fopen(in, "rb");
  if (!f) {
    fprintf(stderr, "mkimage: cannot open %s\n", in);
    return 1;
  }
  static unsigned char elf[16 << 20];
  size_t n = fread(elf, 1, sizeof elf, f);
  fclose(f);
  uint8_t *img = NULL;
  size_t img_B = 0;
  if (!st) st = cpu_image_write(&s, elf, n, &img, &img_B);
  if (st) {
    fprintf(stderr, "mkimage: %s\n", hcq_status_message(st));
    return 1;
  }
  f = fopen(out, "wb");
  if (!f || fwrite(img, 1, img_B, f) != img_B || fclose(f) != 0) {
    fprintf(stderr, "mkimage: cannot write %s\n", out);
    return 1;
  }
  free(img);
  return 0;
}
