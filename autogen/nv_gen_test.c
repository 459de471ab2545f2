/* The NVIDIA spec generator: bad spec lines and offset mismatches are rejected with file:line and the item;
 * the committed spec loads. The generator core is #included (it is not part of libhcq). */
#include "autogen/gen/nv_gen.c"

#include "base/testing.h"

#include <unistd.h>

/* Parses text as file "t.txt"; returns the error message ("" when it parsed). */
static const char *parse(nvg_spec *s, const char *text) {
  nvg_free(s);
  s->err[0] = 0;
  if (nvg_parse_text(s, "t.txt", text) == 0) nvg_check(s);
  return s->err;
}

#define CHECK_REJECT(text, needle)                                                   \
  do {                                                                               \
    const char *m_ = parse(&s, text);                                                \
    CHECK(strstr(m_, needle) != NULL);                                               \
    if (!strstr(m_, needle)) fprintf(stderr, "  got \"%s\", want \"%s\"\n", m_, needle); \
  } while (0)

int main(void) {
  nvg_spec s = {0};
  /* a good struct: u32 then u64 is padded to 8; size rounds up to the 8-byte alignment */
  CHECK_EQ_STR(parse(&s, "source: x\nstruct A size=24\nfield a u32 offset=0\nfield b u64 offset=8\n"
                         "field c u8 offset=16 count=3\nend\n"),
               "");
  CHECK_EQ_INT(s.nstructs, 1);
  CHECK_EQ_INT(s.structs[0].align, 8);
  /* nested struct: alignment of the inner struct (4) applies */
  CHECK_EQ_STR(parse(&s, "source: x\nstruct In size=8\nfield a u32 offset=0\nfield b u8 offset=4\nend\n"
                         "struct Out size=12\nfield c u8 offset=0\nfield d struct:In offset=4\nend\n"),
               "");

  CHECK_REJECT("source: x\nstruct A size=16\nfield a u32 offset=0\nfield b u64 offset=4\nend\n",
               "t.txt:4: struct A field b: computed offset 8, spec says 4");
  CHECK_REJECT("source: x\nstruct A size=12\nfield a u32 offset=0\nfield b u64 offset=8\nend\n",
               "t.txt:2: struct A: computed size 16, spec says size=12");
  CHECK_REJECT("source: x\nfrob A\n", "t.txt:2: unknown directive 'frob'");
  CHECK_REJECT("source: x\nstruct A size=4\nfield a u31 offset=0\nend\n", "t.txt:3: field a: unknown type 'u31'");
  CHECK_REJECT("source: x\nfield a u32 offset=0\n", "t.txt:2: field outside a struct");
  CHECK_REJECT("struct A size=4\n", "t.txt:1: struct: no source: line");
  CHECK_REJECT("source: x\nstruct A size=4\nfield a u32 offset=zz\nend\n", "t.txt:3: field: bad number 'zz' in offset=");
  CHECK_REJECT("source: x\nstruct A size=4\nfield a u32 offset=0 colour=red\nend\n",
               "t.txt:3: field: unexpected item 'colour=red'");
  CHECK_REJECT("source: x\nstruct A size=4\nfield a u32 offset=0\n", "t.txt:2: struct A: missing end");
  CHECK_REJECT("source: x\nstruct A size=4\nfield a struct:Nope offset=0\nend\n", "unknown struct type 'Nope'");
  CHECK_REJECT("source: x\nstruct A size=4\nfield a u32 offset=0\nend\nioctl rm X nr=0x2a struct=A req=0xc004462b\n",
               "t.txt:5: ioctl X: computed request 0xc004462a, spec says req=0xc004462b");
  CHECK_REJECT("source: x\nioctl rm X nr=0x2a struct=Missing\n", "t.txt:2: ioctl X: unknown struct 'Missing'");
  CHECK_REJECT("source: x\nqmd V03_00 F 3 7\n", "t.txt:2: qmd F: hi 3 lo 7");
  CHECK_REJECT("source: x\nmethod NOPE M 0x10\n", "t.txt:2: method M: unknown class 'NOPE'");
  CHECK_REJECT("source: x\nclass C 0x1\nmethod C M 0x13\n", "t.txt:3: method M: bad offset '0x13'");
  /* branch variants must cover every branch */
  CHECK_REJECT("source: x\nbranch r1 versions=1\nbranch r2 versions=2\nstruct A size=4 branches=r1\n"
               "field a u32 offset=0\nend\n",
               "t.txt:4: struct A: its variants do not cover every branch");
  CHECK_REJECT("source: x\nstruct A size=4 branches=r9\n", "unknown branch 'r9'");

  /* the committed spec loads and has the expected inventory */
  char *files[] = {"autogen/gen/nv_spec/00_branches.txt", "autogen/gen/nv_spec/10_rm.txt",
                   "autogen/gen/nv_spec/20_uvm.txt", "autogen/gen/nv_spec/30_classes.txt",
                   "autogen/gen/nv_spec/40_qmd.txt"};
  nvg_free(&s);
  CHECK_EQ_INT(nvg_load(&s, 5, files), 0);
  if (s.err[0]) fprintf(stderr, "  %s\n", s.err);
  CHECK_EQ_INT(s.nbranches, 4);
  CHECK(s.nstructs >= 50);
  CHECK(s.nqmds >= 250);
  /* writing into a fresh directory reproduces the committed header byte for byte */
  char dir[] = "/tmp/nv_gen_test_XXXXXX";
  if (mkdtemp(dir)) {
    CHECK_EQ_INT(nvg_write_all(&s, dir), 0);
    char path[64], err[256];
    snprintf(path, sizeof path, "%s/nv_abi.h", dir);
    char *fresh = nvg_read_file(path, err, sizeof err), *committed = nvg_read_file("autogen/nv_abi.h", err, sizeof err);
    CHECK(fresh && committed && strcmp(fresh, committed) == 0);
    free(fresh);
    free(committed);
    static const char *const outs[] = {"nv_abi.h", "nv_qmd.h", "nv_layout.h", "nv_decode.h", "nv_decode.c"};
    for (int i = 0; i < 5; i++) {
      snprintf(path, sizeof path, "%s/%s", dir, outs[i]);
      CHECK_EQ_INT(remove(path), 0);
    }
    rmdir(dir);
  }
  nvg_free(&s);
  return testing_summary("nv_gen_test");
}
