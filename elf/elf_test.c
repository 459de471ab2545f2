/* elf/ against binutils (readelf -S / -s / -r / -n on objects the host compiler makes: names, types, offsets, sizes,
 * symbol values, relocation counts, note names and types), hand-made corrupt files that must be refused with a
 * message naming what and where, and a fixed-seed fuzzer over mutated real files (time budget
 * HCQ_FUZZ_SECONDS, default 3 s; every view must lie inside the buffer: run under ASan with make SANITIZE=1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf.h"
#include "base/testing.h"
#include "base/fuzz.h"
#include "elf/elf_test_walk.h"

static char dir[64];

static uint8_t *slurp(const char *path, size_t *n) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return NULL;
  fseek(fp, 0, SEEK_END);
  long len = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  uint8_t *b = malloc(len > 0 ? (size_t)len : 1);
  if (b && fread(b, 1, (size_t)len, fp) != (size_t)len) len = 0;
  fclose(fp);
  *n = (size_t)len;
  return b;
}

/* Every section of `f` appears in readelf -SW with the same index, name, type, offset and size. */
static void check_sections(const char *path, const elf_file *f) {
  char cmd[256], line[512];
  snprintf(cmd, sizeof cmd, "readelf -SW %s", path);
  FILE *p = popen(cmd, "r");
  size_t seen = 0;
  while (p && fgets(line, sizeof line, p)) {
    unsigned idx;
    char name[128], type[64];
    unsigned long long addr, off, size;
    char *lb = strchr(line, '[');
    if (!lb || sscanf(lb, "[%u] %127s %63s %llx %llx %llx", &idx, name, type, &addr, &off, &size) != 6 || !idx)
      continue;
    elf_section s;
    CHECK_OK(elf_section_get(f, idx, &s));
    CHECK_EQ_STR(s.name, name);
    CHECK_EQ_INT(s.sh.sh_offset, off);
    CHECK_EQ_INT(s.sh.sh_size, size);
    CHECK_EQ_INT(s.sh.sh_addr, addr);
    if (!strcmp(type, "PROGBITS")) CHECK_EQ_INT(s.sh.sh_type, SHT_PROGBITS);
    if (!strcmp(type, "NOBITS")) CHECK(s.sh.sh_type == SHT_NOBITS && s.data == NULL);
    if (!strcmp(type, "SYMTAB")) CHECK_EQ_INT(s.sh.sh_type, SHT_SYMTAB);
    if (!strcmp(type, "RELA")) CHECK_EQ_INT(s.sh.sh_type, SHT_RELA);
    if (!strcmp(type, "NOTE")) CHECK_EQ_INT(s.sh.sh_type, SHT_NOTE);
    seen++;
  }
  if (p) pclose(p);
  CHECK_EQ_INT(seen + 1, f->shnum); /* all but the null section */
}

/* Every named symbol's value and size as readelf -sW prints them (both .dynsym and .symtab when present). */
static void check_symbols(const char *path, const elf_file *f) {
  elf_table t = {0};
  char cmd[256], line[512], table[64];
  snprintf(cmd, sizeof cmd, "readelf -sW %s", path);
  FILE *p = popen(cmd, "r");
  int checked = 0;
  while (p && fgets(line, sizeof line, p)) {
    if (sscanf(line, "Symbol table '%63[^']'", table) == 1) {
      elf_section s;
      CHECK_OK(elf_section_find(f, table, &s));
      CHECK_OK(elf_table_open(f, s.index, &t));
      continue;
    }
    unsigned idx;
    unsigned long long val, size;
    char type[32], bind[32], vis[32], ndx[32], name[256];
    if (sscanf(line, " %u: %llx %llu %31s %31s %31s %31s %255s", &idx, &val, &size, type, bind, vis, ndx, name) != 8 ||
        !strcmp(type, "SECTION")) /* readelf prints a section symbol with its section's name */
      continue;
    Elf64_Sym s;
    const char *n = NULL;
    CHECK_OK(elf_symbol(&t, idx, &s, &n));
    CHECK_EQ_STR(n, name);
    CHECK_EQ_INT(s.st_value, val);
    CHECK_EQ_INT(s.st_size, size);
    Elf64_Sym found;
    size_t at = 0;
    CHECK_OK(elf_symbol_find(&t, name, &found, &at));
    checked++;
  }
  if (p) pclose(p);
  CHECK(checked >= 3);
}

/* Relocation counts per section (readelf -rW "Relocation section 'X' ... contains N entries"). */
static void check_relocs(const char *path, const elf_file *f) {
  char cmd[256], line[512];
  snprintf(cmd, sizeof cmd, "readelf -rW %s", path);
  FILE *p = popen(cmd, "r");
  int tables = 0;
  while (p && fgets(line, sizeof line, p)) {
    char name[128];
    unsigned long long off;
    long n;
    if (sscanf(line, "Relocation section '%127[^']' at offset 0x%llx contains %ld", name, &off, &n) != 3) continue;
    elf_section s;
    CHECK_OK(elf_section_find(f, name, &s));
    elf_table t;
    CHECK_OK(elf_table_open(f, s.index, &t));
    CHECK_EQ_INT(t.count, n);
    CHECK_EQ_INT(s.sh.sh_offset, off);
    tables++;
  }
  if (p) pclose(p);
  CHECK(tables >= 1);
}

/* The notes of every SHT_NOTE section: owner names and descriptor sizes in readelf -nW's order. */
static void check_notes(const char *path, const elf_file *f) {
  char cmd[256], line[512], owners[16][64];
  unsigned long long sizes[16];
  int nr = 0;
  snprintf(cmd, sizeof cmd, "readelf -nW %s", path);
  FILE *p = popen(cmd, "r");
  while (p && fgets(line, sizeof line, p) && nr < 16)
    if (sscanf(line, " %63s 0x%llx", owners[nr], &sizes[nr]) == 2 && strcmp(owners[nr], "Owner")) nr++;
  if (p) pclose(p);
  int k = 0;
  for (size_t i = 1; i < f->shnum; i++) {
    elf_section s;
    CHECK_OK(elf_section_get(f, i, &s));
    if (s.sh.sh_type != SHT_NOTE) continue;
    elf_note_iter it;
    elf_notes_begin(&it, s.data, s.sh.sh_size, s.sh.sh_addralign, s.name);
    for (;;) {
      elf_note n;
      bool done = true;
      CHECK_OK(elf_note_next(&it, &n, &done));
      if (done) break;
      CHECK(k < nr);
      if (k < nr) {
        CHECK_EQ_STR(n.name, owners[k]);
        CHECK_EQ_INT(n.descsz, sizes[k]);
      }
      k++;
    }
  }
  CHECK(k >= 1);
  CHECK_EQ_INT(k, nr);
}

static void set_bytes(uint8_t *b, size_t off, uint64_t v, size_t n) { memcpy(b + off, &v, n); }

/* Field offsets and sizes of the object's class: the host compiler makes ELF32 objects on armhf (qemu leg). */
static bool c64;
#define OFF(T, field) (c64 ? offsetof(Elf64_##T, field) : offsetof(Elf32_##T, field))
#define SZ(T, field) (c64 ? sizeof(((Elf64_##T *)0)->field) : sizeof(((Elf32_##T *)0)->field))
#define SIZE(T) (c64 ? sizeof(Elf64_##T) : sizeof(Elf32_##T))
#define SET(b, base, T, field, v) set_bytes(b, (base) + OFF(T, field), v, SZ(T, field))

/* Corrupt files: each refused with an error that says what and where. */
static void check_corrupt(const uint8_t *obj, size_t n) {
  elf_file f;
  uint8_t *b = malloc(n);
  CHECK_ERR(elf_open(&f, "hello", 5), HCQ_CODE_INVALID, "not an ELF file");
  char want[128];
  c64 = obj[EI_CLASS] == ELFCLASS64;
  snprintf(want, sizeof want, "truncated ELF header (40 bytes, need %zu)", SIZE(Ehdr));
  CHECK_ERR(elf_open(&f, obj, 40), HCQ_CODE_INVALID, want);
  memcpy(b, obj, n);
  b[EI_DATA] = ELFDATA2MSB;
  CHECK_ERR(elf_open(&f, b, n), HCQ_CODE_UNSUPPORTED, "not little-endian");
  memcpy(b, obj, n);
  b[EI_CLASS] = 7;
  CHECK_ERR(elf_open(&f, b, n), HCQ_CODE_UNSUPPORTED, "ELF class 7");
  memcpy(b, obj, n);
  SET(b, 0, Ehdr, e_shentsize, 44);
  snprintf(want, sizeof want, "bad e_shentsize 44 (expected %zu)", SIZE(Shdr));
  CHECK_ERR(elf_open(&f, b, n), HCQ_CODE_INVALID, want);
  CHECK_ERR(elf_open(&f, obj, n - 1), HCQ_CODE_INVALID, "section headers at 0x");
  memcpy(b, obj, n);
  SET(b, 0, Ehdr, e_shoff, UINT64_MAX - 8); /* overflow in offset + size */
  CHECK_ERR(elf_open(&f, b, n), HCQ_CODE_INVALID, "lie outside the file");
  memcpy(b, obj, n);
  CHECK_OK(elf_open(&f, obj, n));
  SET(b, 0, Ehdr, e_shstrndx, f.shnum);
  CHECK_ERR(elf_open(&f, b, n), HCQ_CODE_INVALID, "section name table index");
  /* per-section corruption: find .text and the symbol table in the copy */
  memcpy(b, obj, n);
  CHECK_OK(elf_open(&f, b, n));
  elf_section text, symtab;
  CHECK_OK(elf_section_find(&f, ".text", &text));
  CHECK_OK(elf_section_find(&f, ".symtab", &symtab));
  size_t text_hdr = f.eh.e_shoff + text.index * SIZE(Shdr);
  size_t sym_hdr = f.eh.e_shoff + symtab.index * SIZE(Shdr);
  SET(b, text_hdr, Shdr, sh_size, n);
  snprintf(want, sizeof want, "section %zu (.text): contents [0x", text.index);
  CHECK_ERR(elf_section_get(&f, text.index, &text), HCQ_CODE_INVALID, want);
  CHECK_ERR(elf_section_find(&f, ".text", &text), HCQ_CODE_INVALID, "(.text)");
  memcpy(b, obj, n);
  SET(b, text_hdr, Shdr, sh_addralign, 24);
  CHECK_ERR(elf_section_get(&f, text.index, &text), HCQ_CODE_INVALID, "alignment 0x18 is not a power of two");
  memcpy(b, obj, n);
  SET(b, text_hdr, Shdr, sh_name, 0x7fffffff);
  CHECK_ERR(elf_section_get(&f, text.index, &text), HCQ_CODE_INVALID, "name offset 0x7fffffff");
  CHECK_EQ_STR(elf_section_name(&f, text.index), "?");
  CHECK_ERR(elf_section_get(&f, f.shnum, &text), HCQ_CODE_INVALID, "out of range");
  memcpy(b, obj, n);
  elf_table t;
  SET(b, sym_hdr, Shdr, sh_entsize, 12);
  CHECK_ERR(elf_table_open(&f, symtab.index, &t), HCQ_CODE_INVALID, "(.symtab): entry size 12");
  memcpy(b, obj, n);
  SET(b, sym_hdr, Shdr, sh_link, symtab.index);
  CHECK_ERR(elf_table_open(&f, symtab.index, &t), HCQ_CODE_INVALID, "is not a string table");
  CHECK_ERR(elf_table_open(&f, text.index, &t), HCQ_CODE_INVALID, "is not a table");
  /* a symbol whose name index points past its string table, and one in a section that does not exist */
  memcpy(b, obj, n);
  CHECK_OK(elf_table_open(&f, symtab.index, &t));
  SET(b, symtab.sh.sh_offset + SIZE(Sym), Sym, st_name, 0x7ffffff0);
  Elf64_Sym s;
  CHECK_ERR(elf_symbol(&t, 1, &s, NULL), HCQ_CODE_INVALID, "symbol 1 of section");
  memcpy(b, obj, n);
  SET(b, symtab.sh.sh_offset + SIZE(Sym), Sym, st_shndx, 0xfe00);
  CHECK_ERR(elf_symbol(&t, 1, &s, NULL), HCQ_CODE_INVALID, "section index 65024 out of range");
  CHECK_ERR(elf_symbol(&t, t.count, &s, NULL), HCQ_CODE_INVALID, "out of range");
  CHECK_ERR(elf_symbol_find(&t, "no_such_symbol", &s, NULL), HCQ_CODE_NOT_FOUND, "no_such_symbol");
  CHECK_ERR(elf_section_find(&f, ".no_such", &text), HCQ_CODE_NOT_FOUND, ".no_such");
  free(b);
  /* notes: a descriptor that runs past the end, a name without its NUL, a truncated header */
  uint32_t note[8] = {4, 8, 1, 0x00554e47 /* "GNU\0" */, 1, 2};
  elf_note_iter it;
  elf_note nt;
  bool done;
  elf_notes_begin(&it, (const uint8_t *)note, 20, 4, ".note.x");
  CHECK_ERR(elf_note_next(&it, &nt, &done), HCQ_CODE_INVALID, ".note.x: note at offset 0x0");
  note[1] = 4;
  note[3] = 0x58554e47; /* "GNUX": no NUL */
  elf_notes_begin(&it, (const uint8_t *)note, 20, 4, ".note.x");
  CHECK_ERR(elf_note_next(&it, &nt, &done), HCQ_CODE_INVALID, "not NUL-terminated");
  note[3] = 0x00554e47;
  elf_notes_begin(&it, (const uint8_t *)note, 28, 4, ".note.x");
  CHECK_OK(elf_note_next(&it, &nt, &done));
  CHECK(!done && nt.namesz == 3 && !strcmp(nt.name, "GNU") && nt.descsz == 4 && nt.type == 1);
  CHECK_ERR(elf_note_next(&it, &nt, &done), HCQ_CODE_INVALID, "truncated note header at offset 0x14");
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 0x2545f4914f6cdd1dull;
}

/* Mutations aimed at the header and the tables (random words, small values, truncation). */
static void fuzz(const uint8_t *const *files, const size_t *sizes, int nfiles, double budget_s) {
  long opened = 0, total = 0;
  double end = fuzz_now_s() + budget_s;
  while (fuzz_now_s() < end && !testing_failures) {
    for (int rep = 0; rep < 64; rep++, total++) {
      int which = (int)(rnd() % (uint64_t)nfiles);
      size_t n = sizes[which], len = n;
      uint8_t *c = malloc(n);
      memcpy(c, files[which], n);
      switch (rnd() % 5) {
      case 0: len = (size_t)(rnd() % n); break;
      case 1: c[rnd() % 64] ^= (uint8_t)(1u << (rnd() % 8)); break;
      default:
        for (int k = 1 + (int)(rnd() % 4); k > 0; k--) {
          uint64_t v = rnd() % 3 ? rnd() : rnd() % 64;
          size_t off = (size_t)(rnd() % (n - 7));
          memcpy(c + off, &v, 1 + rnd() % 8);
        }
      }
      uint8_t *exact = malloc(len ? len : 1); /* exact size, so ASan sees a read past the end */
      memcpy(exact, c, len);
      opened += elf_walk(exact, len);
      free(exact);
      free(c);
    }
  }
  printf("elf fuzz: %ld of %ld mutated files opened and walked\n", opened, total);
}

int main(void) {
  uint64_t seed = fuzz_seed("elf_test", rng);
  rng = seed;
  if (system("cc --version >/dev/null 2>&1") || system("readelf --version >/dev/null 2>&1"))
    TEST_SKIP("needs cc and readelf (binutils)");
  snprintf(dir, sizeof dir, "/tmp/hcq_elf_XXXXXX");
  if (!mkdtemp(dir)) TEST_SKIP("cannot create a temp dir");
  char cmd[1024], obj_path[128], exe_path[128];
  snprintf(obj_path, sizeof obj_path, "%s/k.o", dir);
  snprintf(exe_path, sizeof exe_path, "%s/k.so", dir);
  snprintf(cmd, sizeof cmd,
           "printf 'int tab[4] = {1,2,3,4}; int zero[16]; extern int ext(int);\\n"
           "int get(int i) { return tab[i] + zero[i] + ext(i); }\\nint sum(int n) { int s = 0; "
           "for (int i = 0; i < n; i++) s += get(i); return s; }\\n' > %s/k.c && "
           "cc -O1 -fPIC -c %s/k.c -o %s && cc -shared -Wl,--build-id %s -o %s", dir, dir, obj_path, obj_path, exe_path);
  CHECK(system(cmd) == 0);
  size_t n_obj = 0, n_exe = 0;
  uint8_t *obj = slurp(obj_path, &n_obj), *exe = slurp(exe_path, &n_exe);
  CHECK(obj && exe && n_obj > 64 && n_exe > 64);
  if (obj && exe && n_obj > 64 && n_exe > 64) {
    elf_file f;
    CHECK_OK(elf_open(&f, obj, n_obj));
    CHECK_EQ_INT(f.eh.e_type, ET_REL);
    check_sections(obj_path, &f);
    check_symbols(obj_path, &f);
    check_relocs(obj_path, &f);
    CHECK_OK(elf_open(&f, exe, n_exe));
    CHECK_EQ_INT(f.eh.e_type, ET_DYN);
    CHECK(f.phnum >= 2);
    check_sections(exe_path, &f);
    check_symbols(exe_path, &f);
    check_notes(exe_path, &f);
    check_corrupt(obj, n_obj);
    CHECK(elf_walk(obj, n_obj) && elf_walk(exe, n_exe));
    const uint8_t *files[] = {obj, exe};
    size_t sizes[] = {n_obj, n_exe};
    fuzz(files, sizes, 2, fuzz_seconds(3, NULL));
  }
  free(obj);
  free(exe);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
  return testing_summary("elf_test");
}
