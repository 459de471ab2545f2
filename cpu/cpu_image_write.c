/* cpu_image_write: header + spec text + linked ELF -> one kernel image (format in cpu_image.h, docs/FORMATS.md). */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_image.h"

static void wr32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void wr64(uint8_t *p, uint64_t v) {
  wr32(p, (uint32_t)v);
  wr32(p + 4, (uint32_t)(v >> 32));
}

hcq_status cpu_image_write(const hcq_program *p, const void *elf, size_t elf_size_B, uint8_t **out,
                           size_t *out_size_B) {
  if (!p || !elf || !elf_size_B || !out || !out_size_B)
    return hcq_status_make(HCQ_CODE_INVALID, "cpu_image_write: NULL or empty argument");
  *out = NULL;
  *out_size_B = 0;
  size_t spec_B = 0;
  HCQ_TRY(hcq_status_annotate(cpu_image_spec_format(p, NULL, 0, &spec_B), "cpu_image_write"));
  uint16_t machine = cpu_image_machine_of(cpu_image_arch(p));
  if (elf_size_B < 20 || memcmp(elf, "\177ELF", 4) != 0)
    return hcq_status_make(HCQ_CODE_INVALID, "cpu_image_write: the kernel is not an ELF file");
  uint16_t elf_machine;
  memcpy(&elf_machine, (const uint8_t *)elf + 18, 2);
  if (elf_machine != machine)
    return hcq_status_make(HCQ_CODE_INVALID, "cpu_image_write: the ELF is for machine %u, the program's target is %s",
                           elf_machine, p->target);
  if (spec_B >= CPU_IMAGE_MAX_SPEC_B)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "cpu_image_write: the spec of %s is %zu bytes (at most %u)", p->name,
                           spec_B, CPU_IMAGE_MAX_SPEC_B - 1);
  char *text = malloc(spec_B + 1);
  if (!text) return hcq_status_make(HCQ_CODE_NOMEM, "cpu_image_write: spec buffer");
  hcq_status st = cpu_image_spec_format(p, text, spec_B + 1, &spec_B);
  if (st) {
    free(text);
    return st;
  }
  size_t elf_off = (CPU_IMAGE_HEADER_B + spec_B + 15) & ~(size_t)15, total = elf_off + elf_size_B;
  uint8_t *img = calloc(1, total);
  if (!img) {
    free(text);
    return hcq_status_make(HCQ_CODE_NOMEM, "cpu_image_write: %zu bytes", total);
  }
  memcpy(img, CPU_IMAGE_MAGIC, 8);
  wr32(img + 8, CPU_IMAGE_VERSION);
  img[12] = (uint8_t)machine;
  img[13] = (uint8_t)(machine >> 8);
  wr32(img + 16, (uint32_t)spec_B);
  wr32(img + 20, CPU_IMAGE_HEADER_B);
  wr64(img + 24, elf_off);
  wr64(img + 32, elf_size_B);
  memcpy(img + CPU_IMAGE_HEADER_B, text, spec_B);
  memcpy(img + elf_off, elf, elf_size_B);
  wr64(img + 40, cpu_image_checksum(img + CPU_IMAGE_HEADER_B, spec_B, img + elf_off, elf_size_B));
  free(text);
  *out = img;
  *out_size_B = total;
  return HCQ_OK;
}
