/* aot: ahead-of-time kernel images (cpu/cpu_image.h, docs/FORMATS.md "Kernel image") for the hcq command.
 *
 *   hcq compile --target c --arch aarch64|x86_64 -o k.img FILE.uop   -> aot_write_image
 *   hcq run --image k.img [--var N=V]... [--out SLOT=FILE]...        -> aot_run_main (no compiler needed)
 *
 * Building an image: the C source of a compiled cc_program goes through the arch's compiler (host: $HCQ_CC or cc;
 * other arch: TRIPLE-gcc, e.g. aarch64-linux-gnu-gcc) with the toolchain's freestanding flags (cc_toolchain_flags_for,
 * the JIT's own) and $HCQ_CC_TUNE (default: -mcpu=cortex-a57 for aarch64, generic x86-64 for x86_64 — images are
 * meant for other machines, so never -march=native), then the matching ld links it with linker_scripts/cpu_kernel.ld and
 * --defsym=hcq_entry=KERNEL (the way linker_scripts/embedded.mk does). The linker script is found as
 * $HCQ_KERNEL_LD, ./linker_scripts/cpu_kernel.ld, or ../linker_scripts/cpu_kernel.ld beside the hcq binary. */
#ifndef HCQ_TOOLS_AOT_H
#define HCQ_TOOLS_AOT_H

#include <stddef.h>
#include <stdint.h>

#include "compiler/compiler.h"
#include "cpu/cpu_image.h"

/* The program description an image of prog for arch stores (target "c:ARCH"), checked to fit an image. */
hcq_status aot_program_desc(const cc_program *prog, const char *arch, hcq_program *out);
/* Compile prog->source for arch, link, and return the image bytes (*out_img malloc'd). */
hcq_status aot_build_image(const cc_program *prog, const char *arch, uint8_t **out_img, size_t *out_img_B);
/* aot_build_image, then write the file. */
hcq_status aot_write_image(const cc_program *prog, const char *arch, const char *out_path);

/* `hcq run --image ...` (argv as hcq_verb_run gets it). Returns the exit status (0, 1 failure, 2 usage). */
int aot_run_main(int argc, char **argv);

#endif
