/* mkimage (host tool): wrap a linked kernel ELF and its spec into a kernel image (cpu/cpu_image.h).
 *   mkimage --arch A --name KERNEL [--buf DTYPE:ELEMENTS:r|w|rw]... [--var NAME]... [--global EXPR (up to 3)]
 *           -o OUT.img IN.elf
 * Used by `make baremetal-test` until `hcq compile --arch A -o k.img` writes images itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_image.h"

static int usage(void) {
  fprintf(stderr, "usage: mkimage --arch A --name K [--buf DTYPE:N:r|w|rw]... [--var V]... [--global EXPR]... -o OUT IN.elf\n");
  return 2;
}

int main(int argc, char **argv) {
  cpu_image_spec s = {0};
  const char *out = NULL, *in = NULL;
  int ng = 0;
  for (int d = 0; d < 3; d++) snprintf(s.global[d], sizeof s.global[d], "1");
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--arch") && v) snprintf(s.arch, sizeof s.arch, "%s", argv[++i]);
    else if (!strcmp(a, "--name") && v) snprintf(s.name, sizeof s.name, "%s", argv[++i]);
    else if (!strcmp(a, "--var") && v && s.nvars < CPU_IMAGE_MAX_VARS) snprintf(s.vars[s.nvars++], CPU_IMAGE_NAME_B, "%s", argv[++i]);
    else if (!strcmp(a, "--global") && v && ng < 3) snprintf(s.global[ng++], CPU_IMAGE_EXPR_B, "%s", argv[++i]);
    else if (!strcmp(a, "-o") && v) out = argv[++i];
    else if (!strcmp(a, "--buf") && v && s.nbufs < CPU_IMAGE_MAX_BUFS) {
      cpu_image_buf *b = &s.bufs[s.nbufs];
      char acc[4] = "";
      long long n = 0;
      if (sscanf(argv[++i], "%15[^:]:%lld:%3s", b->dtype, &n, acc) != 3) return usage();
      b->slot = (int)s.nbufs++;
      b->size = n;
      b->read = strchr(acc, 'r') != NULL;
      b->written = strchr(acc, 'w') != NULL;
    } else if (a[0] != '-' && !in) in = a;
    else return usage();
  }
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
  hcq_status st = cpu_image_write(&s, cpu_image_machine_of(s.arch), elf, n, &img, &img_B);
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
