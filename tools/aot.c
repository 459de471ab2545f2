/* aot: building kernel images (see aot.h). */
#include "tools/aot.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/toolchain.h"
#include "cpu/cpu_elf.h"
#include "uop/text.h"

extern char **environ;

static const char *triple_of(const char *arch) {
  if (!strcmp(arch, "aarch64")) return "aarch64-linux-gnu";
  if (!strcmp(arch, "x86_64")) return "x86_64-linux-gnu";
  if (!strcmp(arch, "armhf")) return "arm-linux-gnueabihf";
  return NULL;
}

/* The Debian package providing a tool: TRIPLE-gcc -> gcc-TRIPLE, TRIPLE-ld -> binutils-TRIPLE (x86_64 spelled
 * x86-64 in package names), cc -> gcc, ld -> binutils. */
static void package_for(const char *tool, char *out, size_t cap) {
  const char *base = strrchr(tool, '/') ? strrchr(tool, '/') + 1 : tool;
  size_t n = strlen(base);
  bool is_ld = n >= 2 && !strcmp(base + n - 2, "ld");
  const char *dash = strrchr(base, '-');
  if (!dash || (size_t)(dash - base) < 3) {
    snprintf(out, cap, "%s", is_ld ? "binutils" : (!strcmp(base, "cc") ? "gcc" : base));
    return;
  }
  char triple[64];
  snprintf(triple, sizeof triple, "%.*s", (int)(dash - base), base);
  if (!strncmp(triple, "x86_64", 6)) triple[3] = '-';
  snprintf(out, cap, "%s-%s", is_ld ? "binutils" : "gcc", triple);
}

static hcq_status read_all(const char *path, size_t max_B, uint8_t **out, size_t *out_B) {
  *out = NULL;
  *out_B = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return hcq_status_make(HCQ_CODE_IO, "cannot open %s: %s", path, strerror(errno));
  hcq_status st = HCQ_OK;
  long size = -1;
  if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  if (size < 0 || fseek(f, 0, SEEK_SET) != 0) st = hcq_status_make(HCQ_CODE_IO, "cannot size %s", path);
  else if ((size_t)size > max_B)
    st = hcq_status_make(HCQ_CODE_INVALID, "%s has %ld bytes, more than the %zu allowed", path, size, max_B);
  else if (!(*out = malloc((size_t)size + 1))) st = hcq_status_make(HCQ_CODE_NOMEM, "reading %s", path);
  else if (size && fread(*out, 1, (size_t)size, f) != (size_t)size) st = hcq_status_make(HCQ_CODE_IO, "short read of %s", path);
  fclose(f);
  if (st) {
    free(*out);
    *out = NULL;
  } else {
    *out_B = (size_t)size;
  }
  return st;
}

/* Run argv with stdout+stderr into logpath; a failure reports the command and the log. */
static hcq_status run_tool(char *const argv[], const char *logpath) {
  if (!cc_tool_find(argv[0], NULL, 0)) {
    char pkg[96];
    package_for(argv[0], pkg, sizeof pkg);
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "'%s' not found: install the Debian package %s", argv[0], pkg);
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc) return hcq_status_make(HCQ_CODE_IO, "posix_spawn(%s): %s", argv[0], strerror(rc));
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return hcq_status_make(HCQ_CODE_IO, "waitpid(%s): %s", argv[0], strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return HCQ_OK;
  char cmd[2048] = "";
  size_t len = 0;
  for (int i = 0; argv[i] && len < sizeof cmd; i++)
    len += (size_t)snprintf(cmd + len, sizeof cmd - len, "%s%s", i ? " " : "", argv[i]);
  uint8_t *log = NULL;
  size_t log_B = 0;
  hcq_status_free(read_all(logpath, 1 << 20, &log, &log_B));
  if (log) log[log_B > 4000 ? 4000 : log_B] = 0;
  hcq_status st = hcq_status_make(HCQ_CODE_IO, "`%s` failed (status %d):\n%s", cmd, status, log ? (char *)log : "");
  free(log);
  return st;
}

static hcq_status find_linker_script(char *out, size_t cap) {
  const char *env = getenv("HCQ_KERNEL_LD");
  if (env && *env) {
    if (access(env, R_OK) != 0) return hcq_status_make(HCQ_CODE_NOT_FOUND, "HCQ_KERNEL_LD=%s: not readable", env);
    snprintf(out, cap, "%s", env);
    return HCQ_OK;
  }
  if (access("linker_scripts/cpu_kernel.ld", R_OK) == 0) {
    snprintf(out, cap, "linker_scripts/cpu_kernel.ld");
    return HCQ_OK;
  }
  char exe[3000];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) {
      *slash = 0;
      snprintf(out, cap, "%s/../linker_scripts/cpu_kernel.ld", exe);
      if (access(out, R_OK) == 0) return HCQ_OK;
    }
  }
  return hcq_status_make(HCQ_CODE_NOT_FOUND, "linker_scripts/cpu_kernel.ld not found (run from the hcq source tree "
                         "or set HCQ_KERNEL_LD)");
}

hcq_status aot_program_desc(const cc_program *prog, const char *arch, hcq_program *desc) {
  cc_target t = {.kind = CC_TARGET_C};
  snprintf(t.name, sizeof t.name, "c:%.16s", arch);
  HCQ_TRY(cc_program_describe(prog, &t, desc));
  size_t spec_B;
  return cpu_image_spec_format(desc, NULL, 0, &spec_B); /* refuse what an image cannot hold before compiling */
}

static hcq_status build_in(const char *dir, const cc_program *prog, const char *arch, uint8_t **elf, size_t *elf_B) {
  char src[4200], obj[4200], kelf[4200], logp[4200], script[4096], defsym[256], cc[256], ld[256];
  snprintf(src, sizeof src, "%s/k.c", dir);
  snprintf(obj, sizeof obj, "%s/k.o", dir);
  snprintf(kelf, sizeof kelf, "%s/k.elf", dir);
  snprintf(logp, sizeof logp, "%s/log", dir);
  HCQ_TRY(find_linker_script(script, sizeof script));
  FILE *f = fopen(src, "w");
  if (!f) return hcq_status_make(HCQ_CODE_IO, "cannot create %s: %s", src, strerror(errno));
  bool ok = fputs(prog->source, f) >= 0;
  ok &= fclose(f) == 0;
  if (!ok) return hcq_status_make(HCQ_CODE_IO, "cannot write %s", src);
  /* the host arch uses $HCQ_CC (or cc) and the ld next to it; another arch its cross tools */
  const char *env_cc = getenv("HCQ_CC");
  if (!strcmp(arch, cc_host_arch())) {
    snprintf(cc, sizeof cc, "%s", env_cc && *env_cc ? env_cc : "cc");
    size_t n = strlen(cc);
    if (n > 4 && !strcmp(cc + n - 4, "-gcc")) snprintf(ld, sizeof ld, "%.*s-ld", (int)(n - 4), cc);
    else snprintf(ld, sizeof ld, "ld");
  } else {
    snprintf(cc, sizeof cc, "%s-gcc", triple_of(arch));
    snprintf(ld, sizeof ld, "%s-ld", triple_of(arch));
  }
  /* the toolchain's freestanding flags with this arch's tuning (never -march=native: images go to other machines) */
  const char *tune = getenv("HCQ_CC_TUNE");
  if (!tune || !*tune) tune = !strcmp(arch, "aarch64") ? "-mcpu=cortex-a57" : !strcmp(arch, "armhf") ? "-mcpu=cortex-a15 -mfpu=neon-vfpv4" : "";
  char flags[512], *cargv[48] = {cc};
  int cargc = 1;
  if (!cc_toolchain_flags_for(cc, !strcmp(arch, "x86_64"), tune, flags, sizeof flags))
    return hcq_status_make(HCQ_CODE_INVALID, "compiling kernel %s for %s: $HCQ_CC_TUNE '%s' is too long", prog->name, arch, tune);
  char *save = NULL;
  for (char *tok = strtok_r(flags, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    if (cargc == 44)
      return hcq_status_make(HCQ_CODE_INVALID, "compiling kernel %s for %s: too many flags in $HCQ_CC_TUNE '%s'", prog->name, arch, tune);
    cargv[cargc++] = tok;
  }
  cargv[cargc++] = src;
  cargv[cargc++] = "-o";
  cargv[cargc++] = obj;
  cargv[cargc] = NULL;
  HCQ_TRY(hcq_status_annotate(run_tool(cargv, logp), "compiling kernel %s for %s", prog->name, arch));
  snprintf(defsym, sizeof defsym, "--defsym=hcq_entry=%s", prog->symbol);
  char *largv[] = {ld, "-pie", "--no-dynamic-linker", "-z", "norelro", "-z", "noexecstack", "--no-undefined",
                   defsym, "-T", script, obj, "-o", kelf, NULL};
  HCQ_TRY(hcq_status_annotate(run_tool(largv, logp), "linking kernel %s for %s", prog->name, arch));
  return read_all(kelf, (size_t)CPU_ELF_MAX_IMAGE_B, elf, elf_B);
}

hcq_status aot_build_image(const cc_program *prog, const char *arch, uint8_t **out_img, size_t *out_img_B) {
  *out_img = NULL;
  *out_img_B = 0;
  hcq_program desc;
  HCQ_TRY(aot_program_desc(prog, arch, &desc));
  char dir[4096];
  HCQ_TRY(cc_tool_private_dir(dir, sizeof dir - 16));
  strcat(dir, "/aot-XXXXXX"); /* inside the private directory: a killed build is cleaned up by the next one */
  if (!mkdtemp(dir)) return hcq_status_make(HCQ_CODE_IO, "mkdtemp(%s): %s", dir, strerror(errno));
  uint8_t *elf = NULL;
  size_t elf_B = 0;
  hcq_status st = build_in(dir, prog, arch, &elf, &elf_B);
  const char *names[] = {"k.c", "k.o", "k.elf", "log"};
  for (size_t i = 0; i < 4; i++) {
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, names[i]);
    unlink(p);
  }
  rmdir(dir);
  if (!st) st = cpu_image_write(&desc, elf, elf_B, out_img, out_img_B);
  free(elf);
  return st;
}

hcq_status aot_write_image(const cc_program *prog, const char *arch, const char *out_path) {
  uint8_t *img = NULL;
  size_t img_B = 0;
  HCQ_TRY(aot_build_image(prog, arch, &img, &img_B));
  FILE *f = fopen(out_path, "wb");
  bool ok = f && fwrite(img, 1, img_B, f) == img_B;
  if (f) ok &= fclose(f) == 0;
  free(img);
  return ok ? HCQ_OK : hcq_status_make(HCQ_CODE_IO, "cannot write %s: %s", out_path, strerror(errno));
}
