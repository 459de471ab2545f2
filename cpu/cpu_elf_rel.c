/* cpu_elf_rel: loading relocatable objects (ET_REL) into one W^X mapping.
 *
 * Layout (each region starts on a page):  [ code | trampolines ]  [ read-only data | GOT ]  [ data | bss | COMMON ]
 * Pass 1 validates sections and symbols and sizes the regions; pass 2 maps, copies and relocates; pass 3 sets
 * page protections and flushes the instruction cache. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cpu/cpu_elf_internal.h"
#include "cpu/cpu_mem.h"
#include "cpu/cpu_reloc.h"

enum { REGION_TEXT, REGION_RODATA, REGION_DATA, NREGIONS };

#if defined(__arm__)
/* The Arm EABI run-time helpers (libgcc) that gcc and clang call for 64-bit integer division, shifts and
 * conversions between 64-bit integers and floating point, which armv7-a has no instruction for. They are linked
 * into this program from libgcc by naming them here. */
#define ARM_HELPERS(X)                                                                                             \
  X(__aeabi_ldivmod) X(__aeabi_uldivmod) X(__aeabi_idiv) X(__aeabi_uidiv) X(__aeabi_idivmod) X(__aeabi_uidivmod) \
  X(__aeabi_llsl) X(__aeabi_llsr) X(__aeabi_lasr) X(__aeabi_lmul) X(__aeabi_lcmp) X(__aeabi_ulcmp)             \
  X(__aeabi_d2lz) X(__aeabi_d2ulz) X(__aeabi_f2lz) X(__aeabi_f2ulz) X(__aeabi_l2d) X(__aeabi_ul2d)             \
  X(__aeabi_l2f) X(__aeabi_ul2f)
#define DECLARE_HELPER(n) extern void n(void);
ARM_HELPERS(DECLARE_HELPER)
#define HELPER_ENTRY(n) {#n, (void *)n},
#endif

/* Functions a compiler may call even in freestanding code; resolved to the host C library (and libgcc). */
static const struct {
  const char *name;
  void *fn;
} builtins[] = {
    {"memcpy", (void *)memcpy}, {"memset", (void *)memset}, {"memmove", (void *)memmove}, {"memcmp", (void *)memcmp},
#if defined(__arm__)
    ARM_HELPERS(HELPER_ENTRY)
#endif
};

typedef struct rel_loader {
  const cpu_elf_file *f;
  uint16_t machine;
  size_t symsec, nsyms;
  elf_table symtab;
  Elf64_Sym *syms;                /* owned: the symbol table, widened (names checked in plan_symbols) */
  int *sec_region;                /* per section: region, or -1 when not loaded */
  uint64_t *sec_off;              /* per section: offset inside its region */
  uint64_t *sym_extra;            /* per symbol: offset of its trampoline (text) or COMMON slot (data), or ~0 */
  uint64_t *got_off;              /* per symbol: offset of its GOT slot in the rodata region, or ~0 */
  void **builtin;                 /* per symbol: the host function for an undefined built-in */
  uint64_t region_size[NREGIONS]; /* bytes used in each region */
  uint64_t region_start[NREGIONS];
  uint64_t max_align;
  uint64_t got_base;              /* offset of the GOT in the rodata region (_GLOBAL_OFFSET_TABLE_) */
  uint8_t *base;
} rel_loader;

#define NONE_OFF (~(uint64_t)0)

static hcq_status absurd(const char *what, uint64_t v) {
  return hcq_status_make(HCQ_CODE_INVALID, "absurd %s 0x%llx", what, (unsigned long long)v);
}

/* Reserve `size` bytes aligned to `align` in a region; returns the offset. */
static hcq_status reserve(rel_loader *L, int region, uint64_t size, uint64_t align, uint64_t *out_off) {
  if (align == 0) align = 1;
  if (align & (align - 1)) return absurd("alignment (not a power of two)", align);
  if (align > CPU_ELF_MAX_ALIGN_B) return absurd("alignment", align);
  if (size > CPU_ELF_MAX_IMAGE_B) return absurd("size", size);
  uint64_t off = cpu_elf_align_up(L->region_size[region], align);
  if (off + size > CPU_ELF_MAX_IMAGE_B) return absurd("total image size", off + size);
  L->region_size[region] = off + size;
  if (align > L->max_align) L->max_align = align;
  *out_off = off;
  return HCQ_OK;
}

static const char *sym_name(const rel_loader *L, size_t i) {
  const char *n = elf_string(&L->f->ef, L->symtab.strsec, L->syms[i].st_name);
  return n ? n : "?";
}

static hcq_status layout_sections(rel_loader *L) {
  const cpu_elf_file *f = L->f;
  for (size_t i = 0; i < f->shnum; i++) {
    const Elf64_Shdr *s = &f->sh[i];
    L->sec_region[i] = -1; /* contents inside the file: checked when the file was opened */
    if (!(s->sh_flags & SHF_ALLOC) || s->sh_type == SHT_NULL) continue;
    if (s->sh_flags & SHF_TLS)
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "section %s: thread-local storage is not supported in kernels",
                             cpu_elf_section_name(f, i));
    bool w = s->sh_flags & SHF_WRITE, x = s->sh_flags & SHF_EXECINSTR;
    if (w && x)
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "section %s is writable and executable (W^X)",
                             cpu_elf_section_name(f, i));
    int region = x ? REGION_TEXT : w ? REGION_DATA : REGION_RODATA;
    HCQ_TRY(hcq_status_annotate(reserve(L, region, s->sh_size, s->sh_addralign, &L->sec_off[i]), "section %s",
                                cpu_elf_section_name(f, i)));
    L->sec_region[i] = region;
  }
  return HCQ_OK;
}

static hcq_status find_symtab(rel_loader *L) {
  const cpu_elf_file *f = L->f;
  for (size_t i = 0; i < f->shnum; i++)
    if (f->sh[i].sh_type == SHT_SYMTAB) {
      HCQ_TRY(elf_table_open(&f->ef, i, &L->symtab));
      L->symsec = i;
      L->nsyms = L->symtab.count;
      L->syms = malloc((L->nsyms ? L->nsyms : 1) * sizeof *L->syms);
      if (!L->syms) return hcq_status_make(HCQ_CODE_NOMEM, "symbol table of %zu entries", L->nsyms);
      for (size_t k = 0; k < L->nsyms; k++) elf_sym_at(&L->symtab, k, &L->syms[k]);
      return HCQ_OK;
    }
  return HCQ_OK; /* no symbols: allowed for an object without relocations */
}

/* Validate every symbol; reserve trampolines for built-ins and space for COMMON symbols. */
static hcq_status plan_symbols(rel_loader *L) {
  const cpu_elf_file *f = L->f;
  for (size_t i = 1; i < L->nsyms; i++) {
    const Elf64_Sym *s = &L->syms[i];
    if (!elf_string(&f->ef, L->symtab.strsec, s->st_name))
      return hcq_status_make(HCQ_CODE_INVALID, "symbol %zu: name index %u out of range", i, s->st_name);
    if (ELF64_ST_TYPE(s->st_info) == STT_TLS)
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "symbol '%s' is thread-local (not supported in kernels)",
                             sym_name(L, i));
    if (s->st_shndx == SHN_UNDEF) {
      const char *name = sym_name(L, i);
      for (size_t b = 0; b < sizeof builtins / sizeof *builtins; b++)
        if (strcmp(name, builtins[b].name) == 0) L->builtin[i] = builtins[b].fn;
      if (strcmp(name, "_GLOBAL_OFFSET_TABLE_") == 0) continue; /* gcc names it in -fPIC objects */
      if (L->builtin[i]) {
        HCQ_TRY(reserve(L, REGION_TEXT, cpu_reloc_tramp_size(L->machine), 16, &L->sym_extra[i]));
      } else if (ELF64_ST_BIND(s->st_info) != STB_WEAK) {
        return hcq_status_make(HCQ_CODE_NOT_FOUND,
                               "undefined symbol '%s' (kernels must not import anything; the loader provides only "
                               "memcpy, memset, memmove, memcmp, and the __aeabi_* helpers on armhf)", name);
      }
    } else if (s->st_shndx == SHN_COMMON) {
      HCQ_TRY(hcq_status_annotate(reserve(L, REGION_DATA, s->st_size, s->st_value, &L->sym_extra[i]),
                                  "COMMON symbol '%s'", sym_name(L, i)));
    } else if (s->st_shndx == SHN_ABS) {
      continue;
    } else if (s->st_shndx >= f->shnum) {
      return hcq_status_make(HCQ_CODE_INVALID, "symbol '%s': section index %u out of range (%zu sections)",
                             sym_name(L, i), s->st_shndx, f->shnum);
    } else if (s->st_value > f->sh[s->st_shndx].sh_size) {
      return hcq_status_make(HCQ_CODE_INVALID, "symbol '%s': value 0x%llx beyond the end of section %s",
                             sym_name(L, i), (unsigned long long)s->st_value, cpu_elf_section_name(f, s->st_shndx));
    }
  }
  return HCQ_OK;
}

/* Is section i a relocation table for a loaded section? Validates it either way; *out_table is its view. 32-bit
 * Arm objects carry SHT_REL (implicit addends, read from the place by cpu_reloc_apply_arm: A is 0 here). */
static hcq_status rela_target(rel_loader *L, size_t i, bool *out_applies, elf_table *out_table) {
  const cpu_elf_file *f = L->f;
  const Elf64_Shdr *s = &f->sh[i];
  *out_applies = false;
  if (s->sh_type == SHT_REL && L->machine != EM_ARM)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "section %s: SHT_REL relocations are not supported for %s",
                           cpu_elf_section_name(f, i), cpu_machine_name(L->machine));
  if (s->sh_type != SHT_RELA && s->sh_type != SHT_REL) return HCQ_OK;
  if (s->sh_info >= f->shnum)
    return hcq_status_make(HCQ_CODE_INVALID, "section %s: target section %u out of range", cpu_elf_section_name(f, i),
                           s->sh_info);
  if (L->sec_region[s->sh_info] < 0) return HCQ_OK; /* e.g. relocations of debug info */
  HCQ_TRY(elf_table_open(&f->ef, i, out_table));
  if (s->sh_size && (s->sh_link != L->symsec || L->nsyms == 0))
    return hcq_status_make(HCQ_CODE_INVALID, "section %s: links section %u, not the symbol table",
                           cpu_elf_section_name(f, i), s->sh_link);
  *out_applies = true;
  return HCQ_OK;
}

/* Reserve GOT slots for symbols that GOT relocations use. */
static hcq_status plan_got(rel_loader *L) {
  const cpu_elf_file *f = L->f;
  L->got_base = cpu_elf_align_up(L->region_size[REGION_RODATA], 8);
  for (size_t i = 0; i < f->shnum; i++) {
    bool applies;
    elf_table t;
    HCQ_TRY(rela_target(L, i, &applies, &t));
    if (!applies) continue;
    for (size_t k = 0; k < t.count; k++) {
      Elf64_Rela r;
      elf_rela_at(&t, k, &r);
      uint64_t sym = ELF64_R_SYM(r.r_info);
      if (sym >= L->nsyms)
        return hcq_status_make(HCQ_CODE_INVALID, "section %s: relocation %zu names symbol %llu of %zu",
                               cpu_elf_section_name(f, i), k, (unsigned long long)sym, L->nsyms);
      if (cpu_reloc_uses_got(L->machine, (uint32_t)ELF64_R_TYPE(r.r_info)) && L->got_off[sym] == NONE_OFF)
        HCQ_TRY(reserve(L, REGION_RODATA, 8, 8, &L->got_off[sym]));
    }
  }
  return HCQ_OK;
}

static uint64_t addr_in(const rel_loader *L, int region, uint64_t off) {
  return (uint64_t)(uintptr_t)L->base + L->region_start[region] + off;
}

/* Run-time address of symbol i (all checks were done in plan_symbols). */
static hcq_status sym_addr(const rel_loader *L, size_t i, uint64_t *out) {
  const Elf64_Sym *s = &L->syms[i];
  *out = 0;
  if (i == 0) return HCQ_OK;
  if (s->st_shndx == SHN_UNDEF) {
    if (L->builtin[i]) *out = addr_in(L, REGION_TEXT, L->sym_extra[i]);
    else if (strcmp(sym_name(L, i), "_GLOBAL_OFFSET_TABLE_") == 0) *out = addr_in(L, REGION_RODATA, L->got_base);
    return HCQ_OK; /* weak undefined: 0 */
  }
  if (s->st_shndx == SHN_ABS) {
    *out = s->st_value;
    return HCQ_OK;
  }
  if (s->st_shndx == SHN_COMMON) {
    *out = addr_in(L, REGION_DATA, L->sym_extra[i]);
    return HCQ_OK;
  }
  int region = L->sec_region[s->st_shndx];
  if (region < 0)
    return hcq_status_make(HCQ_CODE_INVALID, "symbol '%s' is in section %s, which is not loaded", sym_name(L, i),
                           cpu_elf_section_name(L->f, s->st_shndx));
  *out = addr_in(L, region, L->sec_off[s->st_shndx] + s->st_value);
  return HCQ_OK;
}

static bool collect_addr(void *ctx, size_t i, const Elf64_Sym *s, uint64_t *out) {
  rel_loader *L = ctx;
  if (s->st_shndx != SHN_COMMON && s->st_shndx != SHN_ABS && (s->st_shndx >= L->f->shnum || L->sec_region[s->st_shndx] < 0))
    return false;
  return sym_addr(L, i, out) == HCQ_OK;
}

static hcq_status fill_and_relocate(rel_loader *L) {
  const cpu_elf_file *f = L->f;
  for (size_t i = 0; i < f->shnum; i++)
    if (L->sec_region[i] >= 0 && f->sh[i].sh_type != SHT_NOBITS && f->sh[i].sh_size)
      memcpy(L->base + L->region_start[L->sec_region[i]] + L->sec_off[i], f->ef.data + f->sh[i].sh_offset,
             f->sh[i].sh_size);
  for (size_t i = 1; i < L->nsyms; i++) {
    if (L->builtin[i])
      cpu_reloc_write_tramp(L->machine, L->base + L->region_start[REGION_TEXT] + L->sym_extra[i],
                            (uint64_t)(uintptr_t)L->builtin[i]);
  }
  for (size_t i = 0; i < L->nsyms; i++)
    if (L->got_off[i] != NONE_OFF) {
      uint64_t a;
      HCQ_TRY(sym_addr(L, i, &a));
      memcpy(L->base + L->region_start[REGION_RODATA] + L->got_off[i], &a, 8);
    }
  for (size_t i = 0; i < f->shnum; i++) {
    bool applies;
    elf_table tab;
    HCQ_TRY(rela_target(L, i, &applies, &tab));
    if (!applies) continue;
    size_t t = f->sh[i].sh_info;
    const Elf64_Shdr *ts = &f->sh[t];
    if (ts->sh_type == SHT_NOBITS && f->sh[i].sh_size)
      return hcq_status_make(HCQ_CODE_INVALID, "section %s relocates %s, which has no contents",
                             cpu_elf_section_name(f, i), cpu_elf_section_name(f, t));
    int region = L->sec_region[t];
    for (size_t k = 0; k < tab.count; k++) {
      Elf64_Rela r;
      elf_rela_at(&tab, k, &r);
      uint32_t type = (uint32_t)ELF64_R_TYPE(r.r_info);
      size_t sym = (size_t)ELF64_R_SYM(r.r_info);
      if (r.r_offset >= ts->sh_size)
        return hcq_status_make(HCQ_CODE_INVALID, "section %s: relocation %zu at offset 0x%llx is outside %s (0x%llx bytes)",
                               cpu_elf_section_name(f, i), k, (unsigned long long)r.r_offset,
                               cpu_elf_section_name(f, t), (unsigned long long)ts->sh_size);
      cpu_reloc rel = {.type = type,
                       .loc = L->base + L->region_start[region] + L->sec_off[t] + r.r_offset,
                       .avail_B = ts->sh_size - r.r_offset,
                       .P = addr_in(L, region, L->sec_off[t] + r.r_offset),
                       .A = r.r_addend,
                       .G = L->got_off[sym] != NONE_OFF ? addr_in(L, REGION_RODATA, L->got_off[sym]) : 0,
                       .GOT = addr_in(L, REGION_RODATA, L->got_base),
                       .tramp = L->builtin[sym] != NULL};
      HCQ_TRY(sym_addr(L, sym, &rel.S));
      HCQ_TRY(hcq_status_annotate(cpu_reloc_apply(L->machine, &rel), "%s[%zu] against '%s'",
                                  cpu_elf_section_name(f, i), k, sym_name(L, sym)));
    }
  }
  return HCQ_OK;
}

static hcq_status protect(rel_loader *L) {
  static const int prot[NREGIONS] = {PROT_READ | PROT_EXEC, PROT_READ, PROT_READ | PROT_WRITE};
  size_t ps = cpu_page_size();
  for (int r = 0; r < NREGIONS; r++) {
    uint64_t len = cpu_elf_align_up(L->region_size[r], ps);
    if (!len) continue;
    if (mprotect(L->base + L->region_start[r], len, prot[r]) != 0)
      return hcq_status_make(HCQ_CODE_IO, "mprotect of %llu bytes failed", (unsigned long long)len);
  }
  if (L->region_size[REGION_TEXT]) {
    char *start = (char *)L->base + L->region_start[REGION_TEXT];
    __builtin___clear_cache(start, start + L->region_size[REGION_TEXT]);
  }
  return HCQ_OK;
}

hcq_status cpu_elf_load_rel(const cpu_elf_file *f, cpu_program *prog) {
  rel_loader L = {.f = f, .machine = f->eh->e_machine, .max_align = 1};
  hcq_status st = HCQ_OK;
  if (!f->sh) return hcq_status_make(HCQ_CODE_INVALID, "relocatable object without section headers");
  if (cpu_reloc_tramp_size(L.machine) == 0)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "relocatable objects for %s are not supported",
                           cpu_machine_name(L.machine));
  HCQ_TRY(find_symtab(&L));
  size_t nsym = L.nsyms ? L.nsyms : 1;
  L.sec_region = calloc(f->shnum, sizeof *L.sec_region);
  L.sec_off = calloc(f->shnum, sizeof *L.sec_off);
  L.sym_extra = malloc(nsym * sizeof *L.sym_extra);
  L.got_off = malloc(nsym * sizeof *L.got_off);
  L.builtin = calloc(nsym, sizeof *L.builtin);
  if (!L.sec_region || !L.sec_off || !L.sym_extra || !L.got_off || !L.builtin) {
    st = hcq_status_make(HCQ_CODE_NOMEM, "loader tables for %zu sections, %zu symbols", f->shnum, L.nsyms);
    goto out;
  }
  for (size_t i = 0; i < nsym; i++) L.sym_extra[i] = L.got_off[i] = NONE_OFF;
  if ((st = layout_sections(&L)) || (st = plan_symbols(&L)) || (st = plan_got(&L))) goto out;

  size_t ps = cpu_page_size();
  uint64_t total = 0;
  for (int r = 0; r < NREGIONS; r++) {
    L.region_start[r] = total;
    total += cpu_elf_align_up(L.region_size[r], ps);
  }
  if (total == 0) total = ps;
  if (total > CPU_ELF_MAX_IMAGE_B) {
    st = absurd("total image size", total);
    goto out;
  }
  void *base;
  if ((st = cpu_alloc(total, L.max_align > ps ? L.max_align : ps, &base))) goto out;
  L.base = base;
  prog->base = base;
  prog->size_B = total;
  if ((st = fill_and_relocate(&L)) || (st = protect(&L))) goto out;
  if (L.nsyms) st = cpu_elf_collect_symbols(prog, &L.symtab, collect_addr, &L);
out:
  free(L.syms);
  free(L.sec_region);
  free(L.sec_off);
  free(L.sym_extra);
  free(L.got_off);
  free(L.builtin);
  return st;
}
