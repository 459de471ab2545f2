/* Toolchain driver for the LLVM IR targets, through the compile cache.
 *
 *   llvm-cpu:    clang-19 -c -x ir -O2 -fPIC -march=native - -o OUT.o
 *                (a relocatable object for the CPU device's ELF loader, cpu/cpu_elf.h)
 *   amdgpu:gfxN: clang-19 --target=amdgcn-amd-amdhsa -mcpu=gfxN -nogpulib -O3 -mllvm -slp-vectorize-hor=false
 *                  -c -x ir - -o OUT.o
 *                ld.lld-19 -shared --no-undefined OUT.o -o OUT.hsaco
 *                (-O3 runs the middle end, whose AMDGPU attributor drops the 256 B of hidden kernargs a raw llc
 *                build asks for; -nogpulib: no ROCm device libraries; -slp-vectorize-hor=false: LLVM 19's AMDGPU
 *                instruction selection crashes (SIGSEGV in SelectionDAG::FoldConstantArithmetic) on an i8 `mul`
 *                vector fed to llvm.vector.reduce.add, at any width on every gfx, which the SLP vectorizer builds
 *                from an unrolled int8 multiply-add reduce (found by amd_fuzz, seed 0x15502b66); the loop vectorizer
 *                leaves such loops scalar on AMDGPU)
 * $HCQ_CLANG and $HCQ_LLD override the tool names. A missing tool is an error naming its Debian package. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/toolchain.h"

const char *cc_llvm_clang(void) {
  const char *c = getenv("HCQ_CLANG");
  return c && c[0] ? c : "clang-19";
}

const char *cc_llvm_lld(void) {
  const char *c = getenv("HCQ_LLD");
  return c && c[0] ? c : "ld.lld-19";
}

hcq_status cc_llvm_require(const char *tool, const char *package) {
  if (cc_tool_find(tool, NULL, 0)) return HCQ_OK;
  return hcq_status_make(HCQ_CODE_UNSUPPORTED, "'%s' not found on PATH: install the Debian package %s", tool, package);
}

/* Run argv with `input` on stdin (none when NULL); a failure quotes the command and its output. */
static hcq_status run(char *const argv[], const char *input) {
  int exit_code = -1;
  char *log = NULL;
  HCQ_TRY(cc_tool_run(argv, input, &exit_code, &log));
  hcq_status st = HCQ_OK;
  if (exit_code != 0) {
    char cmd[1024];
    size_t n = 0;
    for (int i = 0; argv[i] && n < sizeof cmd - 1; i++)
      n += (size_t)snprintf(cmd + n, sizeof cmd - n, "%s%s", i ? " " : "", argv[i]);
    st = hcq_status_make(HCQ_CODE_INVALID, "%s failed (exit %d): %s\n%s", argv[0], exit_code, cmd, log ? log : "");
  }
  free(log);
  return st;
}

/* The flags of a target, as one string (also part of the cache key). */
static const char *llvm_flags(const cc_target *t, char *buf, size_t cap) {
  if (t->kind == CC_TARGET_AMDGPU)
    snprintf(buf, cap, "--target=amdgcn-amd-amdhsa -mcpu=%s -nogpulib -O3 -mllvm -slp-vectorize-hor=false -c -x ir",
             t->arch);
  else
    snprintf(buf, cap, "-c -x ir -O2 -fPIC %s", cc_toolchain_tune()); /* same tuning rule as the C driver */
  return buf;
}

hcq_status cc_llvm_compile(const cc_target *t, const char *source, uint8_t **out_bin, size_t *out_size_B) {
  *out_bin = NULL;
  *out_size_B = 0;
  if (t->kind != CC_TARGET_AMDGPU && t->kind != CC_TARGET_LLVM_CPU)
    return hcq_status_make(HCQ_CODE_INVALID, "cc_llvm_compile: %s is not an LLVM target", t->name);
  const char *clang = cc_llvm_clang(), *lld = cc_llvm_lld();
  bool amd = t->kind == CC_TARGET_AMDGPU;
  HCQ_TRY(cc_llvm_require(clang, "clang-19"));
  if (amd) HCQ_TRY(cc_llvm_require(lld, "lld-19"));
  char objpath[256], sopath[256] = "", flags[256];
  HCQ_TRY(cc_tool_temp(objpath, sizeof objpath, "llvm-obj"));
  hcq_status st = amd ? cc_tool_temp(sopath, sizeof sopath, "llvm-hsaco") : HCQ_OK;
  char *fl = strdup(llvm_flags(t, flags, sizeof flags));
  if (!st && !fl) st = hcq_status_make(HCQ_CODE_NOMEM, "llvm compile: out of memory");
  if (!st) {
    char *argv[24];
    int argc = 0;
    argv[argc++] = (char *)clang;
    for (char *tok = strtok(fl, " "); tok && argc < 18; tok = strtok(NULL, " ")) argv[argc++] = tok;
    argv[argc++] = "-";
    argv[argc++] = "-o";
    argv[argc++] = objpath;
    argv[argc] = NULL;
    st = run(argv, source);
  }
  if (!st && amd) {
    char *argv[] = {(char *)lld, "-shared", "--no-undefined", objpath, "-o", sopath, NULL};
    st = run(argv, NULL);
  }
  if (!st) st = cc_tool_read_file(amd ? sopath : objpath, out_bin, out_size_B);
  free(fl);
  unlink(objpath);
  if (sopath[0]) unlink(sopath);
  return st;
}

static hcq_status build_llvm(const void *ctx, const char *source, uint8_t **out_bin, size_t *out_size_B) {
  return cc_llvm_compile(ctx, source, out_bin, out_size_B);
}

hcq_status cc_llvm_compile_binary(const cc_target *t, cc_program *prog) {
  if (!t || !prog || !prog->source) return hcq_status_make(HCQ_CODE_INVALID, "cc_llvm_compile_binary: no source");
  cc_program_drop_binary(prog);
  const char *clang = cc_llvm_clang(), *version = NULL;
  HCQ_TRY(cc_llvm_require(clang, "clang-19"));
  HCQ_TRY(cc_toolchain_version(clang, &version));
  char flags[256];
  /* key = target \0 clang \0 lld \0 flags \0 version \0 source */
  char *key = NULL;
  size_t key_len = 0;
  FILE *f = open_memstream(&key, &key_len);
  if (!f) return hcq_status_make(HCQ_CODE_NOMEM, "llvm compile: out of memory");
  fprintf(f, "%s%c%s%c%s%c%s%c%s%c%s", t->name, 0, clang, 0, t->kind == CC_TARGET_AMDGPU ? cc_llvm_lld() : "", 0,
          llvm_flags(t, flags, sizeof flags), 0, version, 0, prog->source);
  fclose(f);
  hcq_status st = cc_build_cached(key, key_len, prog, build_llvm, t);
  free(key);
  return st;
}
