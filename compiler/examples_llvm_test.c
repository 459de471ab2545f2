/* Every example kernel (every .uop file in examples/) through the LLVM IR renderer:
 *  - llvm-cpu: compiled with clang-19 to a relocatable object, loaded with the CPU device's ELF loader
 *    (cpu_program_load), called once per core_id, and compared with the reference interpreter (integers exactly,
 *    floats within 2e-5 relative + 1e-6 absolute), with --noopt and with the hand-coded heuristic (THREAD, UPCAST,
 *    UNROLL...). Kernels whose buffers exceed 2 MiB (16 MiB with a variable) are compiled but not run.
 *  - amdgpu:gfx1100/gfx90a/gfx942/gfx1201 (--noopt; gfx1100 also with the heuristic): compiled with clang-19 -O3 and linked with ld.lld-19 -shared to a code
 *    object; the test checks the ELF header (EM_AMDGPU, ET_DYN, HSA OS/ABI), that llvm-objdump-19 disassembles the
 *    kernel symbol down to s_endpgm, and that llvm-readelf-19's metadata lists no hidden kernargs
 *    (.kernarg_segment_size = 8 per buffer + 4 per variable, rounded up to 8).
 * Missing tools (clang-19, lld-19, llvm-19) make the affected part print SKIPPED; all missing -> exit 77. */
#include <elf.h>

#include "compiler/examples_test_util.h"
#include "cpu/cpu_elf.h"

#define RUN_LIMIT_B ((size_t)2 << 20)
#define RUN_LIMIT_VAR_B ((size_t)16 << 20)

static int cpu_ran, cpu_compiled, amd_ok;

static void run_cpu(const cc_target *t, const char *path, bool noopt) {
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *sink = NULL;
  cc_program *p = NULL;
  cpu_program *cp = NULL;
  cc_kbuf *ref = NULL, *got = NULL;
  size_t nref = 0, ngot = 0;
  hcq_status st = cc_kernel_parse_file(ctx, path, &sink);
  if (!st) st = cc_compile_source(ctx, sink, t, &(cc_options){.noopt = noopt}, &p);
  if (!st) st = cc_compile_binary(t, p);
  if (st) {
    fprintf(stderr, "%s (%s): %s\n", path, noopt ? "noopt" : "opt", hcq_status_message(st));
    hcq_status_free(st);
    CHECK(!"llvm-cpu compile");
    goto done;
  }
  cpu_compiled++;
  CHECK(strstr(p->source, "i32 %core_id)") != NULL);
  hcq_status bst = cc_kernel_buffers(sink, &ref, &nref);
  if (bst && sizeof(size_t) == 4 && strstr(hcq_status_message(bst), "too large")) {
    /* 32-bit hosts: buffers beyond the address space (examples/big_int64.uop) cannot even be sized */
    printf("llvm-cpu %-28s %-5s compiled, not run (buffers exceed the 32-bit address space)\n", path,
           noopt ? "noopt" : "opt");
    hcq_status_free(bst);
    goto done;
  }
  CHECK_OK(bst);
  CHECK_OK(cc_kernel_buffers(sink, &got, &ngot));
  if (!ref || !got) goto done;
  size_t total = 0;
  for (size_t i = 0; i < nref; i++) total += ref[i].size_B;
  if (total > (hcq_program_nvars(&p->desc) ? RUN_LIMIT_VAR_B : RUN_LIMIT_B)) {
    printf("llvm-cpu %-28s %-5s compiled (%zu B object), not run (%zu MiB of buffers)\n", path,
           noopt ? "noopt" : "opt", p->binary_size_B, total >> 20);
    goto done;
  }
  etu_run r;
  etu_reference(ctx, sink, ref, nref, got, ngot, &r);
  void *fn = NULL;
  st = cpu_program_load(p->binary, p->binary_size_B, &cp);
  if (!st) st = cpu_program_symbol(cp, p->symbol, &fn);
  CHECK_OK(st);
  if (!fn) goto done;
  etu_native(p, fn, ref, nref, got, ngot, &r);
  printf("llvm-cpu %-28s %-5s ran on %lld core ids: %zu elements, %zu mismatches, max abs float error %.3g\n", path,
         noopt ? "noopt" : "opt", (long long)r.threads, r.checked, r.bad, r.worst);
  CHECK_EQ_INT(r.bad, 0);
  cpu_ran++;
done:
  if (cp) cpu_program_destroy(cp);
  cc_program_free(p);
  if (ref) cc_kbufs_free(ref, nref);
  if (got) cc_kbufs_free(got, ngot);
  uop_ctx_destroy(ctx);
}

/* Run a shell command; its stdout is returned (malloc'd). */
static char *capture(const char *cmd) {
  FILE *f = popen(cmd, "r");
  if (!f) return NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) fwrite(chunk, 1, n, m);
  fclose(m);
  pclose(f);
  return buf;
}

static void check_amd(const char *gfx, const char *path, const char *dir, bool noopt) {
  char tname[32];
  snprintf(tname, sizeof tname, "amdgpu:%s", gfx);
  cc_target t;
  CHECK_OK(cc_target_get(tname, 0, &t));
  uop_ctx *ctx = NULL;
  CHECK_OK(uop_ctx_create(&ctx));
  const uop *sink = NULL;
  cc_program *p = NULL;
  hcq_status st = cc_kernel_parse_file(ctx, path, &sink);
  if (!st) st = cc_compile_source(ctx, sink, &t, &(cc_options){.noopt = noopt}, &p);
  if (!st) st = cc_compile_binary(&t, p);
  if (st) {
    fprintf(stderr, "%s %s: %s\n", tname, path, hcq_status_message(st));
    hcq_status_free(st);
    CHECK(!"amdgpu compile+link");
    goto done;
  }
  /* ELF header of a linked code object */
  CHECK(p->binary_size_B >= sizeof(Elf64_Ehdr));
  if (p->binary_size_B < sizeof(Elf64_Ehdr)) goto done;
  Elf64_Ehdr eh;
  memcpy(&eh, p->binary, sizeof eh);
  CHECK(memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0);
  CHECK_EQ_INT(eh.e_machine, 224); /* EM_AMDGPU */
  CHECK_EQ_INT(eh.e_type, ET_DYN);
  CHECK_EQ_INT(eh.e_ident[EI_OSABI], 64); /* ELFOSABI_AMDGPU_HSA */
  char file[512];
  snprintf(file, sizeof file, "%s/%s-%s-%d.hsaco", dir, p->name, gfx, noopt);
  FILE *f = fopen(file, "wb");
  CHECK(f != NULL);
  if (!f) goto done;
  fwrite(p->binary, 1, p->binary_size_B, f);
  fclose(f);
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "llvm-objdump-19 -d --mcpu=%s %s 2>&1", gfx, file);
  char *dis = capture(cmd);
  char sym[300];
  snprintf(sym, sizeof sym, "<%s>:", p->symbol);
  bool ok = dis && strstr(dis, sym) && strstr(dis, "s_endpgm") && !strstr(dis, "<unknown>");
  if (!ok) fprintf(stderr, "%s %s: disassembly lacks %s/s_endpgm:\n%.2000s\n", tname, path, sym, dis ? dis : "");
  CHECK(ok);
  size_t ninsn = 0;
  for (const char *s = dis; s && (s = strchr(s, '\n')); s++) ninsn += s[1] == ' ' || s[1] == '\t';
  free(dis);
  snprintf(cmd, sizeof cmd, "llvm-readelf-19 --notes %s 2>&1", file);
  char *notes = capture(cmd);
  const char *ks = notes ? strstr(notes, ".kernarg_segment_size:") : NULL;
  long kernarg = ks ? strtol(ks + strlen(".kernarg_segment_size:"), NULL, 10) : -1;
  long want = (long)(8 * hcq_program_nbufs(&p->desc) + 4 * hcq_program_nvars(&p->desc));
  want = (want + 7) / 8 * 8;
  /* a trailing i32 may end the segment */
  if (kernarg != want && !(kernarg == want - 4 && hcq_program_nvars(&p->desc) % 2))
    fprintf(stderr, "%s %s: kernarg_segment_size %ld, expected %ld\n", tname, path, kernarg, want);
  CHECK(kernarg == want || (kernarg == want - 4 && hcq_program_nvars(&p->desc) % 2));
  free(notes);
  printf("%-14s %-28s %-5s %6zu B code object, %4zu disassembled lines, kernargs %ld B\n", tname, path,
         noopt ? "noopt" : "opt", p->binary_size_B, ninsn, kernarg);
  amd_ok += ok;
done:
  cc_program_free(p);
  uop_ctx_destroy(ctx);
}

int main(void) {
  char dir[] = "/tmp/hcq-examples-llvm-test-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  setenv("XDG_CACHE_HOME", dir, 1);
  bool have_clang = tu_have("clang-19"), have_lld = tu_have("ld.lld-19"),
       have_objdump = tu_have("llvm-objdump-19") && tu_have("llvm-readelf-19");
  char *names[ETU_MAX_EXAMPLES];
  int count = etu_list_examples(names, ETU_MAX_EXAMPLES);
  CHECK(count >= 10);
  int parts = 0;
  if (!have_clang) {
    printf("*** SKIPPED: llvm-cpu examples: clang-19 not found (Debian package clang-19) ***\n");
  } else {
    parts++;
    cc_target t;
    CHECK_OK(cc_target_get("llvm-cpu", 4, &t));
    for (int i = 0; i < count; i++) {
      char path[512];
      snprintf(path, sizeof path, "examples/%s", names[i]);
      run_cpu(&t, path, true);
      run_cpu(&t, path, false);
    }
    printf("llvm-cpu: %d compiled, %d run and matched the interpreter\n", cpu_compiled, cpu_ran);
  }
  if (!have_clang || !have_lld || !have_objdump) {
    printf("*** SKIPPED: amdgpu examples: need clang-19, ld.lld-19, llvm-objdump-19, llvm-readelf-19 (Debian "
           "packages clang-19, lld-19, llvm-19) ***\n");
  } else {
    parts++;
    static const char *const gfx[] = {"gfx1100", "gfx90a", "gfx942", "gfx1201"};
    for (int g = 0; g < 4; g++)
      for (int i = 0; i < count; i++) {
        char path[512];
        snprintf(path, sizeof path, "examples/%s", names[i]);
        check_amd(gfx[g], path, dir, true);
        if (g == 0) check_amd(gfx[g], path, dir, false); /* the heuristic's opts (LOCAL, UPCAST...) on gfx1100 */
      }
    printf("amdgpu: %d of %d code objects linked and disassembled\n", amd_ok, 5 * count);
  }
  for (int i = 0; i < count; i++) free(names[i]);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
  if (!parts) {
    printf("*** SKIPPED: examples_llvm: no LLVM 19 tools ***\n");
    return 77;
  }
  return testing_summary("examples_llvm");
}
