/* cpu_image: ahead-of-time kernel images ("kernel.img", docs/FORMATS.md section "Kernel image").
 *
 * An image is a 48-byte header (magic, version, ELF machine, spec and ELF sizes, checksum), the program spec as
 * text, then a linked kernel (linker_scripts/cpu_kernel.ld) that cpu_program_load() accepts. It lets a machine
 * without a C compiler run kernels: `hcq compile ... --arch aarch64 -o k.img` on the host, `hcq run --image k.img`
 * (or the bare-metal startup) on the target.
 *
 * The reader and the spec text's writer (cpu_image.c: cpu_image_parse, cpu_image_spec_format, cpu_image_eval) need
 * nothing from libc beyond the mem and str functions and hcq_status_make, so they also build freestanding
 * (baremetal/). The image writer is cpu_image_write.c. */
#ifndef HCQ_CPU_IMAGE_H
#define HCQ_CPU_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hcq/program.h"
#include "base/status.h"

#define CPU_IMAGE_MAGIC "HCQKIMG\0" /* 8 bytes */
#define CPU_IMAGE_VERSION 1u
#define CPU_IMAGE_HEADER_B 48u
#define CPU_IMAGE_MAX_BUFS 16
#define CPU_IMAGE_MAX_VARS 8
#define CPU_IMAGE_MAX_SPEC_B (64u << 10)

/* A parsed image: views into the caller's bytes (keep them alive). */
typedef struct cpu_image {
  uint16_t machine;        /* ELF e_machine */
  /* The spec, parsed into the program description it serializes: name = symbol = the kernel function, target
   * "c:ARCH", buffers and variables with the default kernel-argument layout, launch sizes, binary = the ELF. */
  hcq_program prog;
  const uint8_t *elf;
  size_t elf_size_B;
} cpu_image;

/* Validate and parse an image. Errors (before anything runs): bad magic, unknown version, truncated, sizes that
 * do not add up, checksum mismatch (corrupt), malformed spec (line named), spec arch != header machine. It does
 * not check that the machine is this host's: see cpu_image_check_host. */
hcq_status cpu_image_parse(const void *data, size_t size_B, cpu_image *out);
/* HCQ_CODE_UNSUPPORTED naming both architectures when the image is for another machine than `host_machine`. */
hcq_status cpu_image_check_host(const cpu_image *img, uint16_t host_machine);

/* The arch of an image's program ("aarch64" for target "c:aarch64"); NULL when the target is not one an image holds. */
const char *cpu_image_arch(const hcq_program *p);

/* Evaluate a launch expression with integer values of p's variables (program order) through hcq_expr_eval. */
hcq_status cpu_image_eval(const hcq_program *p, const char *expr, const int64_t *var_values, int64_t *out);

/* The spec text of a program (the one writer; cpu_image_parse is the one reader): into buf (cap bytes,
 * NUL-terminated; buf NULL only measures and checks), its length in *out_len. Errors name the kernel and the field:
 * a target other than c:x86_64|aarch64|armhf, more buffers/variables than an image holds, a buffer without a
 * known size, a name that is not one word, a local size other than 1, a launch size that does not evaluate with
 * every variable 1, text longer than cap. */
hcq_status cpu_image_spec_format(const hcq_program *p, char *buf, size_t cap, size_t *out_len);

/* Writer (cpu_image_write.c, hosted): header + spec of p + ELF into *out (malloc'd); the ELF's machine must be the
 * one p's target names. */
hcq_status cpu_image_write(const hcq_program *p, const void *elf, size_t elf_size_B, uint8_t **out,
                           size_t *out_size_B);

/* Checksum used by the header: FNV-1a 64 over the spec bytes then the ELF bytes. */
uint64_t cpu_image_checksum(const uint8_t *spec, size_t spec_B, const uint8_t *elf, size_t elf_B);
/* "aarch64" -> EM_AARCH64 etc.; 0 for an unknown name. And the reverse ("?" for unknown). */
uint16_t cpu_image_machine_of(const char *arch);
const char *cpu_image_arch_name(uint16_t machine);

#endif
