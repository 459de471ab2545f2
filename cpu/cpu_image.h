/* cpu_image: ahead-of-time kernel images ("kernel.img", docs/FORMATS.md section "Kernel image").
 *
 * An image is a 48-byte header (magic, version, ELF machine, spec and ELF sizes, checksum), the program spec as
 * text, then a linked kernel (linker_scripts/cpu_kernel.ld) that cpu_program_load() accepts. It lets a machine
 * without a C compiler run kernels: `hcq compile ... --arch aarch64 -o k.img` on the host, `hcq run --image k.img`
 * (or the bare-metal startup) on the target.
 *
 * The reader (cpu_image_parse, cpu_image_eval) needs nothing from libc beyond memcpy/memcmp/memset/strlen and
 * hcq_status_make, so it also builds freestanding (baremetal/). The writer is cpu_image_write.c. */
#ifndef HCQ_CPU_IMAGE_H
#define HCQ_CPU_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

#define CPU_IMAGE_MAGIC "HCQKIMG\0" /* 8 bytes */
#define CPU_IMAGE_VERSION 1u
#define CPU_IMAGE_HEADER_B 48u
#define CPU_IMAGE_MAX_BUFS 16
#define CPU_IMAGE_MAX_VARS 8
#define CPU_IMAGE_NAME_B 64
#define CPU_IMAGE_EXPR_B 128
#define CPU_IMAGE_MAX_SPEC_B (64u << 10)

typedef struct cpu_image_buf {
  int slot;
  char dtype[16];   /* "float32", "int32", ... (uop dtype names) */
  int64_t size;     /* elements */
  bool read, written; /* both false: unused by the code, still a parameter (spec access "-") */
} cpu_image_buf;

/* The program spec: what `hcq run` needs to allocate buffers and launch the kernel. */
typedef struct cpu_image_spec {
  char name[CPU_IMAGE_NAME_B];   /* kernel function = symbol in the ELF */
  char arch[16];                 /* "x86_64", "aarch64", "armhf" */
  size_t nbufs, nvars;
  cpu_image_buf bufs[CPU_IMAGE_MAX_BUFS];      /* in argument (slot) order */
  char vars[CPU_IMAGE_MAX_VARS][CPU_IMAGE_NAME_B]; /* int arguments after the buffers, in order */
  /* 'var NAME MIN MAX': the declared range the kernel was compiled for ('var NAME' alone: not recorded) */
  bool var_ranged[CPU_IMAGE_MAX_VARS];
  int64_t var_min[CPU_IMAGE_MAX_VARS], var_max[CPU_IMAGE_MAX_VARS];
  char global[3][CPU_IMAGE_EXPR_B];            /* launch size expressions (infix text over the vars) */
} cpu_image_spec;

/* A parsed image: views into the caller's bytes (keep them alive). */
typedef struct cpu_image {
  uint16_t machine;        /* ELF e_machine */
  cpu_image_spec spec;
  const uint8_t *elf;
  size_t elf_size_B;
} cpu_image;

/* Validate and parse an image. Errors (before anything runs): bad magic, unknown version, truncated, sizes that
 * do not add up, checksum mismatch (corrupt), malformed spec (line named), spec arch != header machine. It does
 * not check that the machine is this host's: see cpu_image_check_host. */
hcq_status cpu_image_parse(const void *data, size_t size_B, cpu_image *out);
/* HCQ_CODE_UNSUPPORTED naming both architectures when the image is for another machine than `host_machine`. */
hcq_status cpu_image_check_host(const cpu_image *img, uint16_t host_machine);

/* Evaluate a launch expression with integer var values (names from spec.vars). Supports integers, var names,
 * + - * // / % with C precedence, parentheses, unary -, max(a, b), min(a, b). Division by zero is an error. */
hcq_status cpu_image_eval(const cpu_image_spec *spec, const char *expr, const int64_t *var_values, int64_t *out);

/* Render the spec as text into buf (cap bytes, NUL-terminated); returns the text length, or -1 if it does not fit
 * or a field is invalid (a name with spaces or newlines, too many buffers). */
long cpu_image_spec_format(const cpu_image_spec *spec, char *buf, size_t cap);

/* Writer (cpu_image_write.c, hosted): header + spec + ELF into *out (malloc'd). */
hcq_status cpu_image_write(const cpu_image_spec *spec, uint16_t machine, const void *elf, size_t elf_size_B,
                           uint8_t **out, size_t *out_size_B);

/* Checksum used by the header: FNV-1a 64 over the spec bytes then the ELF bytes. */
uint64_t cpu_image_checksum(const uint8_t *spec, size_t spec_B, const uint8_t *elf, size_t elf_B);
/* "aarch64" -> EM_AARCH64 etc.; 0 for an unknown name. And the reverse ("?" for unknown). */
uint16_t cpu_image_machine_of(const char *arch);
const char *cpu_image_arch_name(uint16_t machine);

#endif
