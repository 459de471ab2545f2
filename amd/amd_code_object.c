/* amd_code_object: HSACO header, metadata note and kernel descriptors (see amd_code_object.h for the sources). */
#include "amd/amd_code_object.h"

#include <stdlib.h>
#include <string.h>

#include "amd/amd_msgpack.h"
#include "elf/elf.h"

static const struct {
  uint32_t mach;
  const char *name;
} machs[] = {{0x03f, "gfx90a"}, {0x041, "gfx1100"}, {0x04c, "gfx942"}, {0x04e, "gfx1201"}};

const char *amd_mach_name(uint32_t mach) {
  for (size_t i = 0; i < sizeof machs / sizeof *machs; i++)
    if (machs[i].mach == mach) return machs[i].name;
  return NULL;
}

static hcq_status bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static hcq_status bad(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  hcq_status st = hcq_status_makev(HCQ_CODE_INVALID, fmt, ap);
  va_end(ap);
  return st;
}

static hcq_status check_header(const elf_file *f, const char *want, amd_code_object *co) {
  const Elf64_Ehdr *eh = &f->eh;
  if (eh->e_machine != EM_AMDGPU)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "not an AMDGPU code object (e_machine %u, want EM_AMDGPU %u)",
                           eh->e_machine, EM_AMDGPU);
  if (f->elfclass != ELFCLASS64) return bad("AMDGPU code object is not ELFCLASS64");
  if (eh->e_ident[EI_OSABI] != AMD_ELFOSABI_AMDGPU_HSA)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "EI_OSABI %u is not ELFOSABI_AMDGPU_HSA (64)", eh->e_ident[EI_OSABI]);
  co->abi_version = eh->e_ident[EI_ABIVERSION];
  if (co->abi_version < 2 || co->abi_version > 4)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED,
                           "code object ABI version %u is not supported (2, 3, 4: code object V4, V5, V6)",
                           co->abi_version);
  if (eh->e_type != ET_DYN) return bad("AMDGPU code object has ELF type %u, want ET_DYN (linked by ld.lld)", eh->e_type);
  co->e_flags = eh->e_flags;
  co->mach = eh->e_flags & AMD_EF_AMDGPU_MACH;
  const char *name = amd_mach_name(co->mach);
  if (!name)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED,
                           "code object for EF_AMDGPU_MACH 0x%03x: not a supported target (gfx1100, gfx90a, gfx942, gfx1201)",
                           co->mach);
  strcpy(co->target, name);
  if (want && strcmp(want, name) != 0)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "code object is for %s, not %s", name, want);
  return HCQ_OK;
}

static hcq_status parse_args(amd_mp *m, amd_kernel *k) {
  amd_mp_value v;
  size_t at = m->pos;
  HCQ_TRY(amd_mp_next(m, &v));
  if (v.type != AMD_MP_ARRAY) return bad("msgpack at offset 0x%zx: kernel '%s' .args is not an array", at, k->name);
  k->args = calloc(v.len ? v.len : 1, sizeof *k->args);
  if (!k->args) return hcq_status_make(HCQ_CODE_NOMEM, "%zu kernel arguments", v.len);
  k->nargs = v.len;
  for (size_t i = 0; i < k->nargs; i++) {
    amd_kernel_arg *a = &k->args[i];
    amd_mp_value map, key;
    at = m->pos;
    HCQ_TRY(amd_mp_next(m, &map));
    if (map.type != AMD_MP_MAP) return bad("msgpack at offset 0x%zx: argument %zu is not a map", at, i);
    bool have_off = false, have_size = false;
    for (size_t p = 0; p < map.len; p++) {
      HCQ_TRY(amd_mp_next(m, &key));
      if (amd_mp_is(&key, ".name")) HCQ_TRY(amd_mp_str(m, ".args[].name", a->name, sizeof a->name));
      else if (amd_mp_is(&key, ".value_kind")) HCQ_TRY(amd_mp_str(m, ".value_kind", a->value_kind, sizeof a->value_kind));
      else if (amd_mp_is(&key, ".offset")) {
        HCQ_TRY(amd_mp_u32(m, ".offset", &a->offset));
        have_off = true;
      } else if (amd_mp_is(&key, ".size")) {
        HCQ_TRY(amd_mp_u32(m, ".size", &a->size));
        have_size = true;
      } else {
        HCQ_TRY(amd_mp_skip(m));
      }
    }
    if (!have_off || !have_size || !a->value_kind[0])
      return bad("kernel '%s': argument %zu lacks .offset, .size or .value_kind", k->name, i);
    if ((uint64_t)a->offset + a->size > k->kernarg_segment_size && k->kernarg_segment_size)
      return bad("kernel '%s': argument %zu ('%s') at [%u, +%u) lies outside the kernarg segment (%u bytes)", k->name,
                 i, a->name, a->offset, a->size, k->kernarg_segment_size);
  }
  return HCQ_OK;
}

static hcq_status parse_kernel(amd_mp *m, amd_kernel *k, size_t index) {
  amd_mp_value map, key;
  size_t at = m->pos;
  HCQ_TRY(amd_mp_next(m, &map));
  if (map.type != AMD_MP_MAP) return bad("msgpack at offset 0x%zx: amdhsa.kernels[%zu] is not a map", at, index);
  size_t args_at = 0;
  bool have_args = false;
  for (size_t p = 0; p < map.len; p++) {
    HCQ_TRY(amd_mp_next(m, &key));
    if (amd_mp_is(&key, ".name")) HCQ_TRY(amd_mp_str(m, ".name", k->name, sizeof k->name));
    else if (amd_mp_is(&key, ".symbol")) HCQ_TRY(amd_mp_str(m, ".symbol", k->symbol, sizeof k->symbol));
    else if (amd_mp_is(&key, ".kernarg_segment_size")) HCQ_TRY(amd_mp_u32(m, ".kernarg_segment_size", &k->kernarg_segment_size));
    else if (amd_mp_is(&key, ".group_segment_fixed_size"))
      HCQ_TRY(amd_mp_u32(m, ".group_segment_fixed_size", &k->group_segment_fixed_size));
    else if (amd_mp_is(&key, ".private_segment_fixed_size"))
      HCQ_TRY(amd_mp_u32(m, ".private_segment_fixed_size", &k->private_segment_fixed_size));
    else if (amd_mp_is(&key, ".wavefront_size")) HCQ_TRY(amd_mp_u32(m, ".wavefront_size", &k->wavefront_size));
    else if (amd_mp_is(&key, ".sgpr_count")) HCQ_TRY(amd_mp_u32(m, ".sgpr_count", &k->sgpr_count));
    else if (amd_mp_is(&key, ".vgpr_count")) HCQ_TRY(amd_mp_u32(m, ".vgpr_count", &k->vgpr_count));
    else if (amd_mp_is(&key, ".args") && !have_args) {
      args_at = m->pos;
      have_args = true;
      HCQ_TRY(amd_mp_skip(m));
    } else {
      HCQ_TRY(amd_mp_skip(m));
    }
  }
  if (!k->name[0] || !k->symbol[0]) return bad("amdhsa.kernels[%zu] lacks .name or .symbol", index);
  if (k->wavefront_size != 32 && k->wavefront_size != 64)
    return bad("kernel '%s': .wavefront_size %u is neither 32 nor 64", k->name, k->wavefront_size);
  if (have_args) { /* read after the map, so .kernarg_segment_size is known whatever the key order */
    amd_mp sub = *m;
    sub.pos = args_at;
    HCQ_TRY(parse_args(&sub, k));
  }
  return HCQ_OK;
}

static hcq_status parse_metadata(const uint8_t *desc, size_t size_B, amd_code_object *co) {
  amd_mp m;
  amd_mp_init(&m, desc, size_B);
  amd_mp_value top, key, v;
  HCQ_TRY(amd_mp_next(&m, &top));
  if (top.type != AMD_MP_MAP) return bad("AMDGPU metadata: the top level is not a map");
  bool have_kernels = false;
  for (size_t p = 0; p < top.len; p++) {
    HCQ_TRY(amd_mp_next(&m, &key));
    if (amd_mp_is(&key, "amdhsa.target")) {
      HCQ_TRY(amd_mp_str(&m, "amdhsa.target", co->metadata_target, sizeof co->metadata_target));
    } else if (amd_mp_is(&key, "amdhsa.kernels") && !have_kernels) {
      size_t at = m.pos;
      HCQ_TRY(amd_mp_next(&m, &v));
      if (v.type != AMD_MP_ARRAY) return bad("msgpack at offset 0x%zx: amdhsa.kernels is not an array", at);
      co->kernels = calloc(v.len ? v.len : 1, sizeof *co->kernels);
      if (!co->kernels) return hcq_status_make(HCQ_CODE_NOMEM, "%zu kernels", v.len);
      co->nkernels = v.len;
      for (size_t i = 0; i < co->nkernels; i++) HCQ_TRY(parse_kernel(&m, &co->kernels[i], i));
      have_kernels = true;
    } else {
      HCQ_TRY(amd_mp_skip(&m));
    }
  }
  if (!have_kernels || co->nkernels == 0) return bad("AMDGPU metadata lists no kernels (amdhsa.kernels)");
  /* amdhsa.target is "amdgcn-amd-amdhsa--gfxNNNN[:feature+-...]": its processor must be e_flags' */
  const char *proc = strstr(co->metadata_target, "--");
  size_t len = proc ? strcspn(proc + 2, ":") : 0;
  if (!proc || len != strlen(co->target) || strncmp(proc + 2, co->target, len) != 0)
    return bad("AMDGPU metadata target '%s' does not match e_flags (%s)", co->metadata_target, co->target);
  return HCQ_OK;
}

static hcq_status find_metadata(const elf_file *f, amd_code_object *co) {
  for (size_t i = 1; i < f->shnum; i++) {
    elf_section s;
    HCQ_TRY(elf_section_get(f, i, &s));
    if (s.sh.sh_type != SHT_NOTE) continue;
    elf_note_iter it;
    elf_notes_begin(&it, s.data, s.sh.sh_size, s.sh.sh_addralign, s.name);
    for (;;) {
      elf_note n;
      bool done;
      HCQ_TRY(elf_note_next(&it, &n, &done));
      if (done) break;
      if (n.type == AMD_NT_AMDGPU_METADATA && n.namesz == 6 && !memcmp(n.name, "AMDGPU", 6))
        return hcq_status_annotate(parse_metadata(n.desc, n.descsz, co), "section %zu (%s)", i, s.name);
    }
  }
  return bad("no NT_AMDGPU_METADATA note (name \"AMDGPU\", type 32) in the code object");
}

static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* The section that holds [vaddr, vaddr + len) in memory, with its bytes when it has any. */
static hcq_status section_at(const elf_file *f, uint64_t vaddr, uint64_t len, elf_section *out) {
  for (size_t i = 1; i < f->shnum; i++) {
    HCQ_TRY(elf_section_get(f, i, out));
    const Elf64_Shdr *s = &out->sh;
    if ((s->sh_flags & SHF_ALLOC) && vaddr >= s->sh_addr && elf_in_range(s->sh_size, vaddr - s->sh_addr, len))
      return HCQ_OK;
  }
  return bad("address 0x%llx (+%llu bytes) is in no loaded section", (unsigned long long)vaddr, (unsigned long long)len);
}

static hcq_status read_descriptor(const elf_file *f, amd_kernel *k) {
  elf_table t;
  hcq_status st = elf_table_find(f, SHT_SYMTAB, &t);
  if (st && hcq_status_code(st) == HCQ_CODE_NOT_FOUND) hcq_status_free(st), st = elf_table_find(f, SHT_DYNSYM, &t);
  HCQ_TRY(st);
  Elf64_Sym sym;
  HCQ_TRY(hcq_status_annotate(elf_symbol_find(&t, k->symbol, &sym, NULL), "kernel '%s' descriptor", k->name));
  if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE || (sym.st_size && sym.st_size != AMD_KD_SIZE_B))
    return bad("kernel descriptor '%s': section %u, size %llu (want a defined 64-byte object)", k->symbol,
               sym.st_shndx, (unsigned long long)sym.st_size);
  if (sym.st_value % AMD_KD_SIZE_B) return bad("kernel descriptor '%s' at 0x%llx is not 64-byte aligned", k->symbol,
                                               (unsigned long long)sym.st_value);
  elf_section s;
  HCQ_TRY(elf_section_get(f, sym.st_shndx, &s));
  if (!s.data || sym.st_value < s.sh.sh_addr || !elf_in_range(s.sh.sh_size, sym.st_value - s.sh.sh_addr, AMD_KD_SIZE_B))
    return bad("kernel descriptor '%s' at 0x%llx lies outside its section %zu (%s)", k->symbol,
               (unsigned long long)sym.st_value, s.index, s.name);
  const uint8_t *d = s.data + (sym.st_value - s.sh.sh_addr);
  amd_kernel_descriptor *kd = &k->kd;
  kd->group_segment_fixed_size = le32(d + 0);
  kd->private_segment_fixed_size = le32(d + 4);
  kd->kernarg_size = le32(d + 8);
  kd->kernel_code_entry_byte_offset = (int64_t)((uint64_t)le32(d + 16) | (uint64_t)le32(d + 20) << 32);
  kd->compute_pgm_rsrc3 = le32(d + 44);
  kd->compute_pgm_rsrc1 = le32(d + 48);
  kd->compute_pgm_rsrc2 = le32(d + 52);
  kd->kernel_code_properties = le16(d + 56);
  kd->kernarg_preload = le16(d + 58);
  k->kd_vaddr = sym.st_value;
  k->user_sgpr_count = (kd->compute_pgm_rsrc2 >> 1) & 0x1f;
  k->entry_vaddr = sym.st_value + (uint64_t)kd->kernel_code_entry_byte_offset;
  /* the descriptor and the metadata must agree, and the entry must be code */
  bool wave32 = kd->kernel_code_properties & AMD_KCP_WAVEFRONT_SIZE32;
  if ((wave32 ? 32u : 64u) != k->wavefront_size)
    return bad("kernel '%s': descriptor says wave%u, metadata .wavefront_size %u", k->name, wave32 ? 32 : 64,
               k->wavefront_size);
  if (kd->kernarg_size != k->kernarg_segment_size || kd->group_segment_fixed_size != k->group_segment_fixed_size ||
      kd->private_segment_fixed_size != k->private_segment_fixed_size)
    return bad("kernel '%s': descriptor sizes (kernarg %u, group %u, private %u) differ from the metadata's (%u, %u, %u)",
               k->name, kd->kernarg_size, kd->group_segment_fixed_size, kd->private_segment_fixed_size,
               k->kernarg_segment_size, k->group_segment_fixed_size, k->private_segment_fixed_size);
  elf_section code;
  HCQ_TRY(hcq_status_annotate(section_at(f, k->entry_vaddr, 4, &code), "kernel '%s' entry (descriptor offset %lld)",
                              k->name, (long long)kd->kernel_code_entry_byte_offset));
  if (!(code.sh.sh_flags & SHF_EXECINSTR) || k->entry_vaddr % 256)
    return bad("kernel '%s': entry 0x%llx is in section %zu (%s), %s", k->name, (unsigned long long)k->entry_vaddr,
               code.index, code.name, (code.sh.sh_flags & SHF_EXECINSTR) ? "not 256-byte aligned" : "which is not code");
  return HCQ_OK;
}

hcq_status amd_code_object_parse(const void *data, size_t size_B, const char *want_target, amd_code_object *out) {
  if (!out) return bad("amd_code_object_parse: NULL argument");
  memset(out, 0, sizeof *out);
  elf_file f;
  hcq_status st = elf_open(&f, data, size_B);
  if (!st) st = check_header(&f, want_target, out);
  if (!st) st = find_metadata(&f, out);
  for (size_t i = 0; !st && i < out->nkernels; i++) st = read_descriptor(&f, &out->kernels[i]);
  if (st) {
    amd_code_object_free(out);
    return hcq_status_annotate(st, "AMDGPU code object");
  }
  return HCQ_OK;
}

void amd_code_object_free(amd_code_object *co) {
  if (!co) return;
  for (size_t i = 0; co->kernels && i < co->nkernels; i++) free(co->kernels[i].args);
  free(co->kernels);
  co->kernels = NULL;
  co->nkernels = 0;
}

hcq_status amd_code_object_kernel(const amd_code_object *co, const char *name, const amd_kernel **out) {
  *out = NULL;
  if (!name && co->nkernels == 1) return *out = &co->kernels[0], HCQ_OK;
  for (size_t i = 0; name && i < co->nkernels; i++)
    if (!strcmp(co->kernels[i].name, name)) return *out = &co->kernels[i], HCQ_OK;
  return hcq_status_make(HCQ_CODE_NOT_FOUND, "kernel '%s' is not in the code object (%zu kernels, first '%s')",
                         name ? name : "(the only one)", co->nkernels, co->nkernels ? co->kernels[0].name : "");
}
