/* Toolchain driver and on-disk compile cache for the `c` target.
 *
 * cc_toolchain_compile_c: C source (on stdin) -> relocatable ELF object, with
 *   CC -c -x c -O2 -fPIC -ffreestanding -fno-builtin -nostdlib -fno-math-errno -fno-stack-protector
 *      -fno-asynchronous-unwind-tables -fno-ident -march=native (x86_64; -mcpu=native on arm) - -o OUT
 * (no -fwrapv: render_c.c writes integer ops whose C form could be undefined through unsigned types, so kernel
 *  integers wrap as in the interpreter while proven index arithmetic keeps gcc's strength reduction)
 * (the last flag is $HCQ_CC_TUNE when set, e.g. -mcpu=cortex-a57 for a cross compiler that cannot detect native).
 * CC is $HCQ_CC, or "cc". A missing compiler reports the Debian package to install; a failed compile reports the
 * exact command and the compiler's stderr.
 *
 * Cache: $XDG_CACHE_HOME/hcq (or ~/.cache/hcq); HCQ_CACHE=0 disables it. Entries are keyed by a hash of the source,
 * target, flags and the compiler's `--version` text (read once per process and compiler), written atomically
 * (temp file + rename) with a header (magic, version, payload length, a MAC keyed by a per-user secret): a corrupt,
 * truncated or forged entry is detected, rebuilt and replaced, never loaded. A cache directory, entry or key that
 * is not the user's own, or is writable by others, or is not a regular file, is not used; a cache that cannot be
 * used (not writable, a file in the path...) is skipped with one warning per process. See cache.c. */
#ifndef HCQ_COMPILER_TOOLCHAIN_H
#define HCQ_COMPILER_TOOLCHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler/compiler.h"

/* Subprocess helpers (toolchain.c), shared by the C, LLVM and PTX drivers and `hcq aot`. */
/* Is `cmd` an executable file, directly when it has a '/', else in a $PATH directory (a leading or inner empty
 * entry is ".", a trailing one is ignored; an unset or empty PATH is /usr/local/bin:/usr/bin:/bin)? When out_path
 * is not NULL it receives the file found. */
bool cc_tool_find(const char *cmd, char *out_path, size_t cap);
/* The process's private temp directory $TMPDIR/hcq-PID-XXXXXX (TMPDIR defaults to /tmp; 0700; made on first use,
 * removed at exit; the directories of hcq processes that were killed are removed by the next one that makes its
 * own, so a SIGKILL during a compile leaves nothing behind for long). */
hcq_status cc_tool_private_dir(char *out, size_t cap);
/* Create an empty temp file WHAT-XXXXXX in the private directory; its name goes to path. */
hcq_status cc_tool_temp(char *path, size_t cap, const char *what);
/* A whole file, malloc'd with a NUL after the last byte. */
hcq_status cc_tool_read_file(const char *path, uint8_t **out, size_t *out_size_B);
/* Run argv (argv[0] looked up on $PATH unless it has a '/') with `input` on stdin (/dev/null when NULL) and
 * stdout+stderr captured together (in a memfd: it has no name). On HCQ_OK the tool ran: *out_exit is its exit code (-1 when a signal ended it)
 * and *out_log its output (malloc'd, NUL-terminated; NULL if it could not be read back). An error means the tool
 * could not be started or waited for (UNSUPPORTED when the file cannot be executed, else IO). */
hcq_status cc_tool_run(char *const argv[], const char *input, int *out_exit, char **out_log);

/* The shared path of the three cc_*compile_binary drivers (toolchain.c). cc_program_drop_binary empties
 * prog->binary and external_ms (done first, so a failed build leaves none); cc_build_cached loads `key` from the
 * cache or, on a miss, runs build(ctx, source), records its time in prog->external_ms and stores the result. */
typedef hcq_status (*cc_build_fn)(const void *ctx, const char *source, uint8_t **out_bin, size_t *out_size_B);
void cc_program_drop_binary(cc_program *prog);
hcq_status cc_build_cached(const char *key, size_t key_len, cc_program *prog, cc_build_fn build, const void *ctx);

/* The compiler command in use ($HCQ_CC or "cc"). */
const char *cc_toolchain_cc(void);
/* The CPU tuning flag of host builds (C and llvm-cpu): $HCQ_CC_TUNE when set, else -march=native (-mcpu=native on
 * arm). A cross compiler run under qemu-user cannot detect "native" and needs e.g. -mcpu=cortex-a57. */
const char *cc_toolchain_tune(void);
/* The compile flags (one string, space separated) for the host: cc_toolchain_flags_for($HCQ_CC or cc, host is x86,
 * cc_toolchain_tune()), kept per thread until those change. */
const char *cc_toolchain_flags(void);
/* The freestanding compile flags for compiler cc building for an x86 target or not, ending with `tune` (flags,
 * space separated; NULL or "": none): GCC 12 building for x86 gets -mprefer-vector-width=256. The one source of
 * these flags, for the JIT above and AOT images (tools/aot.c). false when they do not fit in cap bytes. */
bool cc_toolchain_flags_for(const char *cc, bool x86, const char *tune, char *out, size_t cap);
/* `CC --version` text, cached per process and compiler name. */
hcq_status cc_toolchain_version(const char *cc, const char **out_text);

/* Compile source to an object with the current compiler; *out_obj is malloc'd. No cache. */
hcq_status cc_toolchain_compile_c(const char *source, uint8_t **out_obj, size_t *out_size_B);
/* The same with extra flags appended (NULL or "": none), e.g. "-ffp-contract=off". */
hcq_status cc_toolchain_compile_c_ex(const char *source, const char *extra_flags, uint8_t **out_obj,
                                     size_t *out_size_B);

/* LLVM IR targets (toolchain_llvm.c): llvm-cpu -> relocatable object (clang-19 -c -x ir -O2 -fPIC), amdgpu:* ->
 * code object (clang-19 --target=amdgcn-amd-amdhsa -mcpu=ARCH -nogpulib -O3 -mllvm -slp-vectorize-hor=false -c, then
 * ld.lld-19 -shared; toolchain_llvm.c says why).
 * Tools: $HCQ_CLANG (default clang-19) and $HCQ_LLD (default ld.lld-19). No cache in cc_llvm_compile;
 * cc_llvm_compile_binary (what cc_compile_binary calls for these targets) goes through it. */
const char *cc_llvm_clang(void);
const char *cc_llvm_lld(void);
/* HCQ_OK if `tool` is on PATH, else an error naming the Debian package to install. */
hcq_status cc_llvm_require(const char *tool, const char *package);
hcq_status cc_llvm_compile(const cc_target *t, const char *source, uint8_t **out_bin, size_t *out_size_B);
hcq_status cc_llvm_compile_binary(const cc_target *t, cc_program *prog);

/* ptx targets (toolchain_ptx.c): PTX -> cubin with `ptxas -arch=sm_XY -O3`. ptxas is $HCQ_PTXAS, else
 * /usr/local/cuda/bin/ptxas, else on $PATH; cc_ptx_ptxas fills its path or says how to install it.
 * cc_ptx_assemble has no cache; cc_ptx_compile_binary (what cc_compile_binary calls for ptx) goes through it. */
hcq_status cc_ptx_ptxas(char *out_path, size_t cap);
hcq_status cc_ptx_assemble(const char *ptxas, const char *arch, const char *ptx, uint8_t **out_cubin,
                           size_t *out_size_B);
hcq_status cc_ptx_compile_binary(const cc_target *t, cc_program *prog);
/* A ptx target's binary is the cubin followed by the PTX it came from: [cubin][PTX text][u64 PTX bytes][8-byte magic
 * CC_PTX_TRAILER_MAGIC]. ELF readers ignore the tail; the NV driver uploads the PTX beside the code so a GPU without
 * SASS (the NV mock) can run it. cc_ptx_split finds both parts (no tail: *ptx NULL, the whole binary is the cubin). */
#define CC_PTX_TRAILER_MAGIC "HCQPTX01"
void cc_ptx_split(const uint8_t *bin, size_t size_B, size_t *out_cubin_B, const char **out_ptx, size_t *out_ptx_B);

/* Cache statistics of this process (for tests and bench). */
typedef struct cc_cache_stats {
  uint64_t hits, misses, corrupt, writes;
  uint64_t skipped; /* the cache (or an entry) could not be used safely: warned once, compiled without it */
} cc_cache_stats;
cc_cache_stats cc_cache_get_stats(void);

/* The cache directory (malloc'd), or NULL with *out_disabled when HCQ_CACHE=0. */
hcq_status cc_cache_dir(char **out_dir, bool *out_disabled);
/* Look up a key (any bytes); *out_data is malloc'd. *out_found false on a miss or a corrupt entry. Both return
 * HCQ_OK when the cache cannot be used (warned once): only a failure to allocate is an error. */
hcq_status cc_cache_load(const char *key, size_t key_len, uint8_t **out_data, size_t *out_size_B, bool *out_found);
hcq_status cc_cache_store(const char *key, size_t key_len, const uint8_t *data, size_t size_B);
/* The path of a key's entry (malloc'd), for tests that corrupt entries on purpose. */
hcq_status cc_cache_path(const char *key, size_t key_len, char **out_path);

/* 64-bit hash (FNV-1a followed by a mixer) with a seed. */
uint64_t cc_hash64(const void *data, size_t len, uint64_t seed);

#endif
