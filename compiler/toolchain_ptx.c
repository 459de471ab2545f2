/* Toolchain driver for the ptx targets, through the compile cache:
 *
 *   ptxas -arch=sm_XY -O3 -o OUT.cubin IN.ptx
 *
 * The cubin is what the NV backend loads later (the reference JITs PTX in the CUDA driver; we have no driver JIT).
 * ptxas is $HCQ_PTXAS, else /usr/local/cuda/bin/ptxas, else `ptxas` on $PATH. The cache key holds the target,
 * the flags, `ptxas --version` and the PTX text. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/toolchain.h"

hcq_status cc_ptx_ptxas(char *out_path, size_t cap) {
  const char *env = getenv("HCQ_PTXAS");
  if (env && env[0]) {
    if (cc_tool_find(env, out_path, cap)) return HCQ_OK;
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "ptxas '%s' (from $HCQ_PTXAS) not found or not executable", env);
  }
  if (cc_tool_find("/usr/local/cuda/bin/ptxas", out_path, cap) || cc_tool_find("ptxas", out_path, cap)) return HCQ_OK;
  return hcq_status_make(HCQ_CODE_UNSUPPORTED, "ptxas not found (looked at $HCQ_PTXAS, /usr/local/cuda/bin/ptxas and "
                         "$PATH): install the CUDA toolkit (Debian package nvidia-cuda-toolkit, or NVIDIA's "
                         "cuda-nvcc into /usr/local/cuda)");
}

static hcq_status write_all(const char *path, const char *data, size_t len) {
  int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return hcq_status_make(HCQ_CODE_IO, "open(%s): %s", path, strerror(errno));
  size_t off = 0;
  while (off < len) {
    ssize_t w = write(fd, data + off, len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      close(fd);
      return hcq_status_make(HCQ_CODE_IO, "write(%s): %s", path, strerror(errno));
    }
    off += (size_t)w;
  }
  close(fd);
  return HCQ_OK;
}

hcq_status cc_ptx_assemble(const char *ptxas, const char *arch, const char *ptx, uint8_t **out_cubin,
                           size_t *out_size_B) {
  *out_cubin = NULL;
  *out_size_B = 0;
  char in[256], out[256];
  HCQ_TRY(cc_tool_temp(in, sizeof in, "ptx"));
  hcq_status st = cc_tool_temp(out, sizeof out, "cubin");
  if (st) {
    unlink(in);
    return st;
  }
  char archflag[48];
  snprintf(archflag, sizeof archflag, "-arch=%s", arch);
  char *argv[] = {(char *)ptxas, archflag, "-O3", "-o", out, in, NULL};
  st = write_all(in, ptx, strlen(ptx));
  int exit_code = -1;
  char *msg = NULL;
  if (!st) st = cc_tool_run(argv, NULL, &exit_code, &msg);
  if (!st && exit_code != 0)
    st = hcq_status_make(HCQ_CODE_INVALID, "ptxas failed (exit %d): %s %s -O3 -o OUT IN.ptx\n%s", exit_code, ptxas,
                         archflag, msg ? msg : "");
  free(msg);
  if (!st) st = cc_tool_read_file(out, out_cubin, out_size_B);
  if (!st && *out_size_B == 0) {
    free(*out_cubin);
    *out_cubin = NULL;
    st = hcq_status_make(HCQ_CODE_INVALID, "ptxas wrote an empty cubin");
  }
  unlink(in);
  unlink(out);
  return st;
}

struct ptx_build {
  const char *ptxas, *arch;
};

/* the cubin, then the PTX trailer (toolchain.h) */
static hcq_status build_ptx(const void *ctx, const char *source, uint8_t **out_bin, size_t *out_size_B) {
  const struct ptx_build *b = ctx;
  HCQ_TRY(cc_ptx_assemble(b->ptxas, b->arch, source, out_bin, out_size_B));
  uint64_t ptx_B = strlen(source);
  uint8_t *all = realloc(*out_bin, *out_size_B + ptx_B + 16);
  if (!all) return hcq_status_make(HCQ_CODE_NOMEM, "compile: out of memory");
  memcpy(all + *out_size_B, source, ptx_B);
  memcpy(all + *out_size_B + ptx_B, &ptx_B, 8);
  memcpy(all + *out_size_B + ptx_B + 8, CC_PTX_TRAILER_MAGIC, 8);
  *out_bin = all;
  *out_size_B += ptx_B + 16;
  return HCQ_OK;
}

void cc_ptx_split(const uint8_t *bin, size_t size_B, size_t *out_cubin_B, const char **out_ptx, size_t *out_ptx_B) {
  *out_cubin_B = size_B, *out_ptx = NULL, *out_ptx_B = 0;
  uint64_t ptx_B;
  if (!bin || size_B < 16 || memcmp(bin + size_B - 8, CC_PTX_TRAILER_MAGIC, 8)) return;
  memcpy(&ptx_B, bin + size_B - 16, 8);
  if (ptx_B > size_B - 16) return;
  *out_cubin_B = size_B - 16 - (size_t)ptx_B;
  *out_ptx = (const char *)bin + *out_cubin_B;
  *out_ptx_B = (size_t)ptx_B;
}

hcq_status cc_ptx_compile_binary(const cc_target *t, cc_program *prog) {
  cc_program_drop_binary(prog);
  char ptxas[1024];
  HCQ_TRY(cc_ptx_ptxas(ptxas, sizeof ptxas));
  const char *version = NULL;
  HCQ_TRY(cc_toolchain_version(ptxas, &version));
  char *key = NULL;
  size_t key_len = 0;
  FILE *f = open_memstream(&key, &key_len);
  if (!f) return hcq_status_make(HCQ_CODE_NOMEM, "compile: out of memory");
  fprintf(f, "%s%cptxas -arch=%s -O3 +ptx-trailer%c%s%c%s", t->name, 0, t->arch, 0, version, 0, prog->source);
  fclose(f);
  struct ptx_build b = {ptxas, t->arch};
  hcq_status st = cc_build_cached(key, key_len, prog, build_ptx, &b);
  free(key);
  return st;
}
