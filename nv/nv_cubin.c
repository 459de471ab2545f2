/* nv_cubin: header, kernel sections and .nv.info attributes of a cubin (see nv_cubin.h for the sources). */
#include "nv/nv_cubin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf.h"

static hcq_status bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static hcq_status bad(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  hcq_status st = hcq_status_makev(HCQ_CODE_INVALID, fmt, ap);
  va_end(ap);
  return st;
}

static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

unsigned nv_cubin_sm(uint32_t e_flags, uint8_t abi_version) {
  if (abi_version == 7) return e_flags & 0xff;
  if (abi_version == 8) return (e_flags & 0xff00) >> 8;
  return 0;
}

typedef struct parse_ctx {
  const elf_file *f;
  nv_cubin *c;
  elf_table symtab;
  size_t fn_sym, const0_sec;
  bool have_cbank, have_param_size;
  uint32_t cbank_size_B;
} parse_ctx;

/* One .nv.info record: format, attribute, the u16 (size for SVAL, else the value) and the SVAL payload. */
typedef struct nv_record {
  uint8_t fmt, attr;
  uint16_t v;
  const uint8_t *data;
  size_t at; /* offset in its section, for messages */
} nv_record;

static hcq_status want_sval(const elf_section *s, const nv_record *r, uint16_t size_B) {
  if (r->fmt != NV_EIFMT_SVAL || r->v != size_B)
    return bad("section %zu (%s): attribute 0x%02x at offset 0x%zx has format %u / %u bytes, want EIFMT_SVAL of %u",
               s->index, s->name, r->attr, r->at, r->fmt, r->v, size_B);
  return HCQ_OK;
}

/* Attributes of .nv.info.<name>. */
static hcq_status kernel_attr(parse_ctx *p, const elf_section *s, const nv_record *r) {
  nv_cubin *c = p->c;
  switch (r->attr) {
  case NV_EIATTR_PARAM_CBANK: {
    HCQ_TRY(want_sval(s, r, 8));
    Elf64_Sym sym;
    HCQ_TRY(hcq_status_annotate(elf_symbol(&p->symtab, le32(r->data), &sym, NULL), "EIATTR_PARAM_CBANK"));
    if (sym.st_shndx != p->const0_sec)
      return bad("section %zu (%s): EIATTR_PARAM_CBANK at offset 0x%zx names section %u, not .nv.constant0.%s (%zu)",
                 s->index, s->name, r->at, sym.st_shndx, c->name, p->const0_sec);
    c->param_cbank_offset_B = le16(r->data + 4);
    p->cbank_size_B = le16(r->data + 6);
    p->have_cbank = true;
    return HCQ_OK;
  }
  case NV_EIATTR_CBANK_PARAM_SIZE:
    if (r->fmt != NV_EIFMT_HVAL)
      return bad("section %zu (%s): EIATTR_CBANK_PARAM_SIZE at offset 0x%zx is not EIFMT_HVAL", s->index, s->name, r->at);
    c->param_size_B = r->v;
    p->have_param_size = true;
    return HCQ_OK;
  case NV_EIATTR_KPARAM_INFO: {
    HCQ_TRY(want_sval(s, r, 12));
    nv_cubin_param *q = &c->params[c->nparams++]; /* params has room for every record of the section */
    q->ordinal = le16(r->data + 4);
    q->offset_B = le16(r->data + 6);
    q->size_B = (le32(r->data + 8) >> 18) & 0x3fff;
    return HCQ_OK;
  }
  case NV_EIATTR_MAX_THREADS:
  case NV_EIATTR_REQNTID: {
    HCQ_TRY(want_sval(s, r, 12));
    uint32_t *d = r->attr == NV_EIATTR_MAX_THREADS ? c->max_threads : c->reqntid;
    for (int k = 0; k < 3; k++) d[k] = le32(r->data + 4 * k);
    return HCQ_OK;
  }
  default: return HCQ_OK;
  }
}

/* Attributes of .nv.info that name our function's symbol. */
static hcq_status global_attr(parse_ctx *p, const elf_section *s, const nv_record *r) {
  uint32_t *dst = r->attr == NV_EIATTR_REGCOUNT         ? &p->c->regcount
                  : r->attr == NV_EIATTR_FRAME_SIZE     ? &p->c->frame_size_B
                  : r->attr == NV_EIATTR_MIN_STACK_SIZE ? &p->c->min_stack_size_B
                  : r->attr == NV_EIATTR_MAX_STACK_SIZE ? &p->c->max_stack_size_B
                                                        : NULL;
  if (!dst) return HCQ_OK;
  HCQ_TRY(want_sval(s, r, 8));
  if (le32(r->data) == p->fn_sym) *dst = le32(r->data + 4);
  return HCQ_OK;
}

static hcq_status walk_info(parse_ctx *p, const elf_section *s,
                            hcq_status (*fn)(parse_ctx *, const elf_section *, const nv_record *)) {
  size_t at = 0, n = s->data ? s->sh.sh_size : 0;
  while (at < n) {
    if (n - at < 4) return bad("section %zu (%s): truncated record at offset 0x%zx", s->index, s->name, at);
    nv_record r = {.fmt = s->data[at], .attr = s->data[at + 1], .v = le16(s->data + at + 2), .at = at};
    if (r.fmt < NV_EIFMT_NVAL || r.fmt > NV_EIFMT_SVAL)
      return bad("section %zu (%s): record at offset 0x%zx has unknown format %u", s->index, s->name, at, r.fmt);
    size_t len = r.fmt == NV_EIFMT_SVAL ? r.v : 0;
    if (len > n - at - 4)
      return bad("section %zu (%s): attribute 0x%02x at offset 0x%zx (%zu bytes) runs past the end (%zu bytes)", s->index,
                 s->name, r.attr, at, len, n);
    r.data = s->data + at + 4;
    HCQ_TRY(fn(p, s, &r));
    at += 4 + len;
  }
  return HCQ_OK;
}

/* Section "<prefix><name>"; NOT_FOUND when absent. */
static hcq_status kernel_section(const elf_file *f, const char *prefix, const char *name, elf_section *out) {
  char want[200];
  snprintf(want, sizeof want, "%s%s", prefix, name);
  return elf_section_find(f, want, out);
}

/* The only .text.<fn> section's kernel name. */
static hcq_status only_kernel(const elf_file *f, char *name, size_t cap) {
  size_t found = 0;
  for (size_t i = 1; i < f->shnum; i++) {
    const char *n = elf_section_name(f, i);
    if (strncmp(n, ".text.", 6) != 0) continue;
    if (found++ == 0) snprintf(name, cap, "%s", n + 6);
  }
  if (found != 1) return hcq_status_make(HCQ_CODE_NOT_FOUND, "cubin has %zu .text.<kernel> sections: name the kernel", found);
  if (strlen(name) + 1 >= cap) return bad("kernel name of %zu bytes is too long", strlen(name));
  return HCQ_OK;
}

static hcq_status check_params(const nv_cubin *c, const parse_ctx *p) {
  if (!p->have_cbank || !p->have_param_size)
    return bad("kernel '%s': .nv.info.%s lacks EIATTR_PARAM_CBANK or EIATTR_CBANK_PARAM_SIZE", c->name, c->name);
  if (p->cbank_size_B != c->param_size_B)
    return bad("kernel '%s': EIATTR_PARAM_CBANK size %u differs from EIATTR_CBANK_PARAM_SIZE %u", c->name,
               p->cbank_size_B, c->param_size_B);
  if ((uint64_t)c->param_cbank_offset_B + c->param_size_B > c->cbank0_size_B)
    return bad("kernel '%s': parameters [0x%x, +0x%x) lie outside constant bank 0 (0x%x bytes)", c->name,
               c->param_cbank_offset_B, c->param_size_B, c->cbank0_size_B);
  for (size_t i = 0; i < c->nparams; i++) {
    const nv_cubin_param *q = &c->params[i];
    if (q->ordinal != i)
      return bad("kernel '%s': EIATTR_KPARAM_INFO ordinals are not 0..%zu (found %u at %zu)", c->name, c->nparams - 1,
                 q->ordinal, i);
    if (q->size_B == 0 || (uint64_t)q->offset_B + q->size_B > c->param_size_B)
      return bad("kernel '%s': parameter %u at [0x%x, +0x%x) lies outside the %u parameter bytes", c->name, q->ordinal,
                 q->offset_B, q->size_B, c->param_size_B);
  }
  return HCQ_OK;
}

static hcq_status parse(const void *data, size_t size_B, unsigned want_sm, const char *name, nv_cubin *c) {
  elf_file f;
  HCQ_TRY(elf_open(&f, data, size_B));
  if (f.eh.e_machine != EM_CUDA)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "not a cubin (e_machine %u, want EM_CUDA %u)", f.eh.e_machine, EM_CUDA);
  if (f.elfclass != ELFCLASS64) return bad("cubin is not ELFCLASS64");
  c->e_flags = f.eh.e_flags;
  c->abi_version = f.eh.e_ident[EI_ABIVERSION];
  c->sm = nv_cubin_sm(c->e_flags, c->abi_version);
  if (!c->sm)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "cubin ABI version %u is not supported (7 or 8)", c->abi_version);
  if (want_sm && c->sm != want_sm)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "cubin is for sm_%u, not sm_%u", c->sm, want_sm);
  if (name) {
    if (strlen(name) >= sizeof c->name) return bad("kernel name of %zu bytes is too long", strlen(name));
    strcpy(c->name, name);
  } else {
    HCQ_TRY(only_kernel(&f, c->name, sizeof c->name));
  }
  parse_ctx p = {.f = &f, .c = c};
  elf_section text, const0, info, shared, ginfo;
  HCQ_TRY(hcq_status_annotate(kernel_section(&f, ".text.", c->name, &text), "kernel '%s'", c->name));
  HCQ_TRY(hcq_status_annotate(kernel_section(&f, ".nv.constant0.", c->name, &const0), "kernel '%s'", c->name));
  HCQ_TRY(hcq_status_annotate(kernel_section(&f, ".nv.info.", c->name, &info), "kernel '%s'", c->name));
  if (!(text.sh.sh_flags & SHF_EXECINSTR) || !text.data)
    return bad("section %zu (%s) is not code", text.index, text.name);
  c->code = text.data;
  c->code_size_B = text.sh.sh_size;
  c->code_offset = text.sh.sh_offset;
  if (const0.sh.sh_size > UINT32_MAX) return bad("section %zu (%s): absurd size", const0.index, const0.name);
  c->cbank0_size_B = (uint32_t)const0.sh.sh_size;
  p.const0_sec = const0.index;
  hcq_status st = kernel_section(&f, ".nv.shared.", c->name, &shared);
  if (!st) c->shared_B = shared.sh.sh_size;
  else if (hcq_status_code(st) == HCQ_CODE_NOT_FOUND) hcq_status_free(st);
  else return st;
  /* the kernel's FUNC symbol, defined in its .text section */
  HCQ_TRY(elf_table_find(&f, SHT_SYMTAB, &p.symtab));
  Elf64_Sym sym;
  HCQ_TRY(hcq_status_annotate(elf_symbol_find(&p.symtab, c->name, &sym, &p.fn_sym), "kernel '%s'", c->name));
  if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx != text.index)
    return bad("symbol '%s' is not a function in section %zu (%s)", c->name, text.index, text.name);
  c->params = calloc(info.sh.sh_size / 16 + 1, sizeof *c->params); /* a KPARAM_INFO record takes 16 bytes */
  if (!c->params) return hcq_status_make(HCQ_CODE_NOMEM, "parameter table");
  HCQ_TRY(walk_info(&p, &info, kernel_attr));
  st = elf_section_find(&f, ".nv.info", &ginfo);
  if (!st) HCQ_TRY(walk_info(&p, &ginfo, global_attr));
  else if (hcq_status_code(st) == HCQ_CODE_NOT_FOUND) hcq_status_free(st);
  else return st;
  for (size_t i = 1; i < c->nparams; i++) /* ptxas lists them last to first: sort by ordinal */
    for (size_t k = i; k > 0 && c->params[k - 1].ordinal > c->params[k].ordinal; k--) {
      nv_cubin_param t = c->params[k];
      c->params[k] = c->params[k - 1];
      c->params[k - 1] = t;
    }
  return check_params(c, &p);
}

hcq_status nv_cubin_parse(const void *data, size_t size_B, unsigned want_sm, const char *name, nv_cubin *out) {
  if (!out) return bad("nv_cubin_parse: NULL argument");
  memset(out, 0, sizeof *out);
  hcq_status st = parse(data, size_B, want_sm, name, out);
  if (st) {
    nv_cubin_free(out);
    return hcq_status_annotate(st, "cubin");
  }
  return HCQ_OK;
}

void nv_cubin_free(nv_cubin *c) {
  if (!c) return;
  free(c->params);
  c->params = NULL;
  c->nparams = 0;
}
