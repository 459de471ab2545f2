/* Test helper (include after base/testing.h): open a buffer with elf/ and visit every view it offers (sections,
 * strings, segments, symbol / relocation / dynamic tables, notes), checking that each one lies inside the buffer.
 * Returns whether elf_open accepted the file; errors along the way are freed (they are expected on mutated input). */
#ifndef HCQ_ELF_TEST_WALK_H
#define HCQ_ELF_TEST_WALK_H

#include "elf/elf.h"

static int elf_walk_inside(const uint8_t *buf, size_t n, const void *p, uint64_t len) {
  const uint8_t *q = p;
  return q >= buf && (size_t)(q - buf) <= n && len <= n - (size_t)(q - buf);
}

static void elf_walk_table(const elf_table *t, const uint8_t *buf, size_t n) {
  CHECK(elf_walk_inside(buf, n, t->data, (uint64_t)t->count * t->entsize_B));
  for (size_t k = 0; k < t->count; k++) {
    if (t->type == SHT_SYMTAB || t->type == SHT_DYNSYM) {
      Elf64_Sym s;
      const char *name = NULL;
      hcq_status st = elf_symbol(t, k, &s, &name);
      if (!st && s.st_name) CHECK(name && elf_walk_inside(buf, n, name, strlen(name) + 1));
      hcq_status_free(st);
    } else if (t->type == SHT_DYNAMIC) {
      Elf64_Dyn d;
      elf_dyn_at(t, k, &d);
    } else {
      Elf64_Rela r;
      elf_rela_at(t, k, &r);
    }
  }
}

static void elf_walk_notes(const uint8_t *data, size_t size, uint64_t align, const uint8_t *buf, size_t n) {
  elf_note_iter it;
  elf_notes_begin(&it, data, size, align, "notes");
  for (int guard = 0; guard < 100000; guard++) {
    elf_note note;
    bool done;
    hcq_status st = elf_note_next(&it, &note, &done);
    if (st || done) {
      CHECK(!st || hcq_status_message(st)[0]);
      hcq_status_free(st);
      return;
    }
    if (note.namesz) CHECK(elf_walk_inside(buf, n, note.name, note.namesz + 1));
    CHECK(elf_walk_inside(buf, n, note.desc, note.descsz));
  }
  CHECK(!"note iteration did not end");
}

static bool elf_walk(const uint8_t *buf, size_t n) {
  elf_file f;
  hcq_status st = elf_open(&f, buf, n);
  if (st) {
    CHECK(hcq_status_message(st)[0]);
    hcq_status_free(st);
    return false;
  }
  for (size_t i = 0; i < f.shnum; i++) {
    elf_section s;
    CHECK(elf_section_name(&f, i) != NULL);
    if ((st = elf_section_get(&f, i, &s))) {
      hcq_status_free(st);
      continue;
    }
    CHECK(s.name != NULL);
    if (s.sh.sh_name) CHECK(elf_walk_inside(buf, n, s.name, strlen(s.name) + 1));
    if (s.data) CHECK(elf_walk_inside(buf, n, s.data, s.sh.sh_size));
    if (s.sh.sh_type == SHT_NOTE && s.data) elf_walk_notes(s.data, s.sh.sh_size, s.sh.sh_addralign, buf, n);
    elf_table t;
    if (!(st = elf_table_open(&f, i, &t))) elf_walk_table(&t, buf, n);
    hcq_status_free(st);
  }
  for (size_t i = 0; i < f.phnum; i++) {
    Elf64_Phdr ph;
    const uint8_t *d;
    if ((st = elf_segment_get(&f, i, &ph, &d))) {
      hcq_status_free(st);
      continue;
    }
    if (d) CHECK(elf_walk_inside(buf, n, d, ph.p_filesz));
    if (ph.p_type == PT_NOTE && d) elf_walk_notes(d, ph.p_filesz, ph.p_align, buf, n);
    elf_table t;
    if (ph.p_type == PT_DYNAMIC && !(st = elf_table_dynamic(&f, &ph, &t))) elf_walk_table(&t, buf, n);
    hcq_status_free(st);
  }
  return true;
}

#endif
