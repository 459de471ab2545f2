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

hcq_status cpu_image_write(const cpu_image_spec *spec, uint16_t machine, const void *elf, size_t elf_size_B,
                           uint8_t **out, size_t *out_size_B) {
  if (!spec || !elf || !elf_size_B || !out || !out_size_B)
    return hcq_status_make(HCQ_CODE_INVALID, "cpu_image_write: NULL or empty argument");
  *out = NULL;
  *out_size_B = 0;
  if (cpu_image_machine_of(spec->arch) != machine)
    return hcq_status_make(HCQ_CODE_INVALID, "cpu_image_write: spec arch '%s' does not match machine %s", spec->arch,
                           cpu_image_arch_name(machine));
  if (elf_size_B < 20 || memcmp(elf, "\177ELF", 4) != 0)
    return hcq_status_make(HCQ_CODE_INVALID, "cpu_image_write: the kernel is not an ELF file");
  uint16_t elf_machine;
  memcpy(&elf_machine, (const uint8_t *)elf + 18, 2);
  if (elf_machine != machine)
    return hcq_status_make(HCQ_CODE_INVALID, "cpu_image_write: the ELF is for machine %u, the spec says %s",
                           elf_machine, spec->arch);
  char *text = malloc(CPU_IMAGE_MAX_SPEC_B);
  if (!text) return hcq_status_make(HCQ_CODE_NOMEM, "cpu_image_write: spec buffer");
  long spec_B = cpu_image_spec_format(spec, text, CPU_IMAGE_MAX_SPEC_B);
  if (spec_B < 0) {
    free(text);
    return hcq_status_make(HCQ_CODE_INVALID, "cpu_image_write: spec of '%s' has an invalid field (names must be "
                           "single words, at least one access per buffer)", spec->name);
  }
  size_t elf_off = (CPU_IMAGE_HEADER_B + (size_t)spec_B + 15) & ~(size_t)15, total = elf_off + elf_size_B;
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
  memcpy(img + CPU_IMAGE_HEADER_B, text, (size_t)spec_B);
  memcpy(img + elf_off, elf, elf_size_B);
  wr64(img + 40, cpu_image_checksum(img + CPU_IMAGE_HEADER_B, (size_t)spec_B, img + elf_off, elf_size_B));
  free(text);
  *out = img;
  *out_size_B = total;
  return HCQ_OK;
}
