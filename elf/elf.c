/* elf: header, section, segment, string, table and note views (see elf.h). */
#include "elf/elf.h"

#include <string.h>

static bool is64(const elf_file *f) { return f->elfclass == ELFCLASS64; }

static hcq_status bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static hcq_status bad(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  hcq_status st = hcq_status_makev(HCQ_CODE_INVALID, fmt, ap);
  va_end(ap);
  return st;
}

hcq_status elf_open(elf_file *f, const void *data, size_t size_B) {
  if (!f || (!data && size_B)) return bad("elf_open: NULL argument");
  memset(f, 0, sizeof *f);
  const uint8_t *d = data;
  if (size_B < EI_NIDENT || memcmp(d, ELFMAG, SELFMAG) != 0)
    return bad("not an ELF file (bad magic, %zu bytes)", size_B);
  if (d[EI_CLASS] != ELFCLASS32 && d[EI_CLASS] != ELFCLASS64)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "ELF class %u is neither ELFCLASS32 nor ELFCLASS64", d[EI_CLASS]);
  if (d[EI_DATA] != ELFDATA2LSB)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "ELF data encoding %u is not little-endian", d[EI_DATA]);
  f->data = d;
  f->size_B = size_B;
  f->elfclass = d[EI_CLASS];
  size_t ehsize = is64(f) ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
  size_t shentsize = is64(f) ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
  size_t phentsize = is64(f) ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
  if (size_B < ehsize) return bad("truncated ELF header (%zu bytes, need %zu)", size_B, ehsize);
  Elf64_Ehdr *eh = &f->eh;
  if (is64(f)) {
    memcpy(eh, d, sizeof *eh);
  } else {
    Elf32_Ehdr e;
    memcpy(&e, d, sizeof e);
    memcpy(eh->e_ident, e.e_ident, EI_NIDENT);
    eh->e_type = e.e_type, eh->e_machine = e.e_machine, eh->e_version = e.e_version, eh->e_entry = e.e_entry;
    eh->e_phoff = e.e_phoff, eh->e_shoff = e.e_shoff, eh->e_flags = e.e_flags, eh->e_ehsize = e.e_ehsize;
    eh->e_phentsize = e.e_phentsize, eh->e_phnum = e.e_phnum, eh->e_shentsize = e.e_shentsize;
    eh->e_shnum = e.e_shnum, eh->e_shstrndx = e.e_shstrndx;
  }
  if (eh->e_version != EV_CURRENT || d[EI_VERSION] != EV_CURRENT)
    return bad("ELF version %u is not EV_CURRENT", eh->e_version);
  if (eh->e_shoff != 0) {
    if (eh->e_shentsize != shentsize) return bad("bad e_shentsize %u (expected %zu)", eh->e_shentsize, shentsize);
    if (eh->e_shnum == 0 || eh->e_shstrndx == SHN_XINDEX)
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "extended section numbering (e_shnum 0) is not supported");
    if (!elf_in_range(size_B, eh->e_shoff, (uint64_t)eh->e_shnum * shentsize))
      return bad("section headers at 0x%llx (%u x %zu bytes) lie outside the file (%zu bytes)",
                 (unsigned long long)eh->e_shoff, eh->e_shnum, shentsize, size_B);
    if (eh->e_shstrndx >= eh->e_shnum)
      return bad("section name table index %u out of range (%u sections)", eh->e_shstrndx, eh->e_shnum);
    f->shnum = eh->e_shnum;
  }
  if (eh->e_phoff != 0 && eh->e_phnum != 0) {
    if (eh->e_phentsize != phentsize) return bad("bad e_phentsize %u (expected %zu)", eh->e_phentsize, phentsize);
    if (eh->e_phnum == PN_XNUM)
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "extended program header numbering (PN_XNUM) is not supported");
    if (!elf_in_range(size_B, eh->e_phoff, (uint64_t)eh->e_phnum * phentsize))
      return bad("program headers at 0x%llx (%u x %zu bytes) lie outside the file (%zu bytes)",
                 (unsigned long long)eh->e_phoff, eh->e_phnum, phentsize, size_B);
    f->phnum = eh->e_phnum;
  }
  return HCQ_OK;
}

/* Section header i < shnum, widened; no checks on its contents. */
static void read_shdr(const elf_file *f, size_t i, Elf64_Shdr *out) {
  if (is64(f)) {
    memcpy(out, f->data + f->eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof *out);
    return;
  }
  Elf32_Shdr s;
  memcpy(&s, f->data + f->eh.e_shoff + i * sizeof s, sizeof s);
  *out = (Elf64_Shdr){.sh_name = s.sh_name, .sh_type = s.sh_type, .sh_flags = s.sh_flags, .sh_addr = s.sh_addr,
                      .sh_offset = s.sh_offset, .sh_size = s.sh_size, .sh_link = s.sh_link, .sh_info = s.sh_info,
                      .sh_addralign = s.sh_addralign, .sh_entsize = s.sh_entsize};
}

const char *elf_string(const elf_file *f, size_t strsec, uint64_t index) {
  if (strsec == 0 || strsec >= f->shnum) return NULL;
  Elf64_Shdr s;
  read_shdr(f, strsec, &s);
  if (s.sh_type != SHT_STRTAB || !elf_in_range(f->size_B, s.sh_offset, s.sh_size) || index >= s.sh_size) return NULL;
  const char *str = (const char *)f->data + s.sh_offset + index;
  return memchr(str, 0, s.sh_size - index) ? str : NULL;
}

const char *elf_section_name(const elf_file *f, size_t i) {
  if (i >= f->shnum) return "?";
  Elf64_Shdr s;
  read_shdr(f, i, &s);
  if (s.sh_name == 0) return "";
  const char *n = elf_string(f, f->eh.e_shstrndx, s.sh_name);
  return n ? n : "?";
}

hcq_status elf_section_get(const elf_file *f, size_t i, elf_section *out) {
  memset(out, 0, sizeof *out);
  if (i >= f->shnum) return bad("section index %zu out of range (%zu sections)", i, f->shnum);
  Elf64_Shdr *s = &out->sh;
  read_shdr(f, i, s);
  out->index = i;
  out->name = s->sh_name ? elf_string(f, f->eh.e_shstrndx, s->sh_name) : "";
  if (!out->name) return bad("section %zu: name offset 0x%x is not in the section name table", i, s->sh_name);
  if (s->sh_addralign & (s->sh_addralign - 1))
    return bad("section %zu (%s): alignment 0x%llx is not a power of two", i, out->name,
               (unsigned long long)s->sh_addralign);
  if (s->sh_type == SHT_NOBITS || s->sh_type == SHT_NULL) return HCQ_OK;
  if (!elf_in_range(f->size_B, s->sh_offset, s->sh_size))
    return bad("section %zu (%s): contents [0x%llx, +0x%llx) lie outside the file (%zu bytes)", i, out->name,
               (unsigned long long)s->sh_offset, (unsigned long long)s->sh_size, f->size_B);
  out->data = f->data + s->sh_offset;
  return HCQ_OK;
}

hcq_status elf_section_find(const elf_file *f, const char *name, elf_section *out) {
  for (size_t i = 1; i < f->shnum; i++)
    if (!strcmp(elf_section_name(f, i), name)) return elf_section_get(f, i, out);
  memset(out, 0, sizeof *out);
  return hcq_status_make(HCQ_CODE_NOT_FOUND, "no section named '%s'", name);
}

hcq_status elf_segment_get(const elf_file *f, size_t i, Elf64_Phdr *out, const uint8_t **out_data) {
  memset(out, 0, sizeof *out);
  if (out_data) *out_data = NULL;
  if (i >= f->phnum) return bad("program header index %zu out of range (%zu headers)", i, f->phnum);
  if (is64(f)) {
    memcpy(out, f->data + f->eh.e_phoff + i * sizeof *out, sizeof *out);
  } else {
    Elf32_Phdr p;
    memcpy(&p, f->data + f->eh.e_phoff + i * sizeof p, sizeof p);
    *out = (Elf64_Phdr){.p_type = p.p_type, .p_flags = p.p_flags, .p_offset = p.p_offset, .p_vaddr = p.p_vaddr,
                        .p_paddr = p.p_paddr, .p_filesz = p.p_filesz, .p_memsz = p.p_memsz, .p_align = p.p_align};
  }
  if (out->p_type == PT_LOAD && out->p_filesz > out->p_memsz)
    return bad("segment %zu: file size 0x%llx exceeds its memory size 0x%llx", i, (unsigned long long)out->p_filesz,
               (unsigned long long)out->p_memsz);
  if (!elf_in_range(f->size_B, out->p_offset, out->p_filesz))
    return bad("segment %zu: file bytes [0x%llx, +0x%llx) lie outside the file (%zu bytes)", i,
               (unsigned long long)out->p_offset, (unsigned long long)out->p_filesz, f->size_B);
  if (out_data && out->p_filesz) *out_data = f->data + out->p_offset;
  return HCQ_OK;
}

/* The class's entry size for a table type; 0 when the type is not a table. */
static size_t entsize_of(const elf_file *f, uint32_t type) {
  switch (type) {
  case SHT_SYMTAB:
  case SHT_DYNSYM: return is64(f) ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
  case SHT_REL: return is64(f) ? sizeof(Elf64_Rel) : sizeof(Elf32_Rel);
  case SHT_RELA: return is64(f) ? sizeof(Elf64_Rela) : sizeof(Elf32_Rela);
  case SHT_DYNAMIC: return is64(f) ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
  default: return 0;
  }
}

hcq_status elf_table_open(const elf_file *f, size_t section, elf_table *out) {
  memset(out, 0, sizeof *out);
  elf_section s;
  HCQ_TRY(elf_section_get(f, section, &s));
  size_t ent = entsize_of(f, s.sh.sh_type);
  if (!ent) return bad("section %zu (%s): type %u is not a table", section, s.name, s.sh.sh_type);
  if (s.sh.sh_entsize != ent || s.sh.sh_size % ent)
    return bad("section %zu (%s): entry size %llu / size %llu, expected entries of %zu", section, s.name,
               (unsigned long long)s.sh.sh_entsize, (unsigned long long)s.sh.sh_size, ent);
  uint32_t type = s.sh.sh_type;
  if (type == SHT_SYMTAB || type == SHT_DYNSYM) {
    Elf64_Shdr link = {0};
    if (s.sh.sh_link > 0 && s.sh.sh_link < f->shnum) read_shdr(f, s.sh.sh_link, &link);
    if (link.sh_type != SHT_STRTAB)
      return bad("section %zu (%s): its string table index %u is not a string table", section, s.name, s.sh.sh_link);
    out->strsec = s.sh.sh_link;
  } else if (type == SHT_REL || type == SHT_RELA) {
    if (s.sh.sh_info >= f->shnum || s.sh.sh_link >= f->shnum)
      return bad("section %zu (%s): target section %u or symbol table %u out of range (%zu sections)", section,
                 s.name, s.sh.sh_info, s.sh.sh_link, f->shnum);
  }
  *out = (elf_table){.f = f, .data = s.data, .count = s.sh.sh_size / ent, .entsize_B = ent, .type = type,
                     .section = section, .strsec = out->strsec};
  return HCQ_OK;
}

hcq_status elf_table_find(const elf_file *f, uint32_t type, elf_table *out) {
  for (size_t i = 1; i < f->shnum; i++) {
    Elf64_Shdr s;
    read_shdr(f, i, &s);
    if (s.sh_type == type) return elf_table_open(f, i, out);
  }
  memset(out, 0, sizeof *out);
  return hcq_status_make(HCQ_CODE_NOT_FOUND, "no section of type %u", type);
}

hcq_status elf_table_dynamic(const elf_file *f, const Elf64_Phdr *ph, elf_table *out) {
  memset(out, 0, sizeof *out);
  size_t ent = entsize_of(f, SHT_DYNAMIC);
  if (ph->p_type != PT_DYNAMIC || !elf_in_range(f->size_B, ph->p_offset, ph->p_filesz) || ph->p_filesz % ent)
    return bad("PT_DYNAMIC at 0x%llx (0x%llx bytes) is not a whole number of %zu-byte entries inside the file",
               (unsigned long long)ph->p_offset, (unsigned long long)ph->p_filesz, ent);
  *out = (elf_table){.f = f, .data = f->data + ph->p_offset, .count = ph->p_filesz / ent, .entsize_B = ent,
                     .type = SHT_DYNAMIC};
  return HCQ_OK;
}

void elf_sym_at(const elf_table *t, size_t i, Elf64_Sym *out) {
  const uint8_t *p = t->data + i * t->entsize_B;
  if (is64(t->f)) {
    memcpy(out, p, sizeof *out);
    return;
  }
  Elf32_Sym s;
  memcpy(&s, p, sizeof s);
  *out = (Elf64_Sym){.st_name = s.st_name, .st_info = s.st_info, .st_other = s.st_other, .st_shndx = s.st_shndx,
                     .st_value = s.st_value, .st_size = s.st_size};
}

void elf_rela_at(const elf_table *t, size_t i, Elf64_Rela *out) {
  const uint8_t *p = t->data + i * t->entsize_B;
  memset(out, 0, sizeof *out);
  if (is64(t->f)) {
    memcpy(out, p, t->entsize_B); /* Elf64_Rel is a prefix of Elf64_Rela */
    return;
  }
  Elf32_Rela r = {0};
  memcpy(&r, p, t->entsize_B); /* Elf32_Rel is a prefix of Elf32_Rela */
  *out = (Elf64_Rela){.r_offset = r.r_offset, .r_info = ELF64_R_INFO(ELF32_R_SYM(r.r_info), ELF32_R_TYPE(r.r_info)),
                      .r_addend = t->type == SHT_RELA ? r.r_addend : 0};
}

void elf_dyn_at(const elf_table *t, size_t i, Elf64_Dyn *out) {
  const uint8_t *p = t->data + i * t->entsize_B;
  if (is64(t->f)) {
    memcpy(out, p, sizeof *out);
    return;
  }
  Elf32_Dyn d;
  memcpy(&d, p, sizeof d);
  *out = (Elf64_Dyn){.d_tag = d.d_tag, .d_un.d_val = d.d_un.d_val};
}

hcq_status elf_symbol(const elf_table *t, size_t i, Elf64_Sym *out, const char **out_name) {
  if (i >= t->count) return bad("symbol index %zu out of range (%zu symbols)", i, t->count);
  elf_sym_at(t, i, out);
  const char *name = out->st_name ? elf_string(t->f, t->strsec, out->st_name) : "";
  if (!name)
    return bad("symbol %zu of section %zu (%s): name index %u out of range", i, t->section,
               elf_section_name(t->f, t->section), out->st_name);
  if (out->st_shndx != SHN_UNDEF && out->st_shndx < SHN_LORESERVE && out->st_shndx >= t->f->shnum)
    return bad("symbol %zu ('%s'): section index %u out of range (%zu sections)", i, name, out->st_shndx,
               t->f->shnum);
  if (out_name) *out_name = name;
  return HCQ_OK;
}

hcq_status elf_symbol_find(const elf_table *t, const char *name, Elf64_Sym *out, size_t *out_index) {
  for (size_t i = 1; i < t->count; i++) {
    elf_sym_at(t, i, out);
    const char *n = out->st_name ? elf_string(t->f, t->strsec, out->st_name) : NULL;
    if (n && !strcmp(n, name)) {
      if (out_index) *out_index = i;
      return elf_symbol(t, i, out, NULL);
    }
  }
  memset(out, 0, sizeof *out);
  return hcq_status_make(HCQ_CODE_NOT_FOUND, "no symbol named '%s'", name);
}

void elf_notes_begin(elf_note_iter *it, const uint8_t *data, size_t size_B, uint64_t align_B, const char *where) {
  *it = (elf_note_iter){.data = data, .size_B = data ? size_B : 0, .align = align_B == 8 ? 8 : 4, .where = where};
}

static uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) & ~(a - 1); }

hcq_status elf_note_next(elf_note_iter *it, elf_note *out, bool *out_done) {
  memset(out, 0, sizeof *out);
  *out_done = it->pos >= it->size_B;
  if (*out_done) return HCQ_OK;
  uint64_t at = it->pos, rest = it->size_B - at;
  if (rest < 12) return bad("%s: truncated note header at offset 0x%llx", it->where, (unsigned long long)at);
  uint32_t w[3];
  memcpy(w, it->data + at, sizeof w);
  uint64_t name_off = at + 12, desc_off = align_up(name_off + w[0], it->align), end = align_up(desc_off + w[1], it->align);
  if (desc_off + w[1] > it->size_B)
    return bad("%s: note at offset 0x%llx (name %u bytes, descriptor %u bytes) runs past the end (%zu bytes)",
               it->where, (unsigned long long)at, w[0], w[1], it->size_B);
  const char *name = (const char *)it->data + name_off;
  if (w[0] && name[w[0] - 1] != 0)
    return bad("%s: note at offset 0x%llx: name is not NUL-terminated", it->where, (unsigned long long)at);
  *out = (elf_note){.type = w[2], .name = w[0] ? name : "", .namesz = w[0] ? w[0] - 1 : 0,
                    .desc = it->data + desc_off, .descsz = w[1]};
  it->pos = end < it->size_B ? end : it->size_B;
  return HCQ_OK;
}
