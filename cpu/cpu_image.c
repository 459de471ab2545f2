/* cpu_image: reading kernel images, the spec text's one reader and one writer (both of hcq_program), and their
 * launch expressions. Freestanding-friendly: no allocation, no stdio; only mem and str functions and
 * hcq_status_make. */
#include "cpu/cpu_image.h"

#include "hcq/program.h"

#include <elf.h>
#include <string.h>

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rd64(const uint8_t *p) { return rd32(p) | (uint64_t)rd32(p + 4) << 32; }

uint64_t cpu_image_checksum(const uint8_t *spec, size_t spec_B, const uint8_t *elf, size_t elf_B) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < spec_B; i++) h = (h ^ spec[i]) * 0x100000001b3ull;
  for (size_t i = 0; i < elf_B; i++) h = (h ^ elf[i]) * 0x100000001b3ull;
  return h;
}

static const struct {
  const char *name;
  uint16_t machine;
} arches[] = {{"x86_64", EM_X86_64}, {"aarch64", EM_AARCH64}, {"armhf", EM_ARM}};

uint16_t cpu_image_machine_of(const char *arch) {
  for (size_t i = 0; i < sizeof arches / sizeof *arches; i++)
    if (strcmp(arch, arches[i].name) == 0) return arches[i].machine;
  return 0;
}

const char *cpu_image_arch_name(uint16_t machine) {
  for (size_t i = 0; i < sizeof arches / sizeof *arches; i++)
    if (arches[i].machine == machine) return arches[i].name;
  return "?";
}

/* ------------------------------------------------------------------------------------------------ spec text */

typedef struct line_reader {
  const char *p, *end;
  int lineno;
  const char *tok[6];
  size_t toklen[6];
  int ntok;
  const char *rest; /* text after the second token (for "global D EXPR") */
  size_t restlen;
} line_reader;

/* Split the next line at single spaces. Returns false at the end of the text. */
static bool next_line(line_reader *r) {
  if (r->p >= r->end) return false;
  const char *s = r->p, *e = memchr(s, '\n', (size_t)(r->end - s));
  if (!e) e = r->end;
  r->p = e < r->end ? e + 1 : e;
  r->lineno++;
  r->ntok = 0;
  r->rest = NULL;
  r->restlen = 0;
  const char *q = s;
  while (q < e && r->ntok < 6) {
    while (q < e && *q == ' ') q++;
    if (q >= e) break;
    if (r->ntok == 2) {
      r->rest = q;
      r->restlen = (size_t)(e - q);
    }
    const char *t = q;
    while (q < e && *q != ' ') q++;
    r->tok[r->ntok] = t;
    r->toklen[r->ntok++] = (size_t)(q - t);
  }
  return true;
}

static bool tok_is(const line_reader *r, int i, const char *word) {
  return i < r->ntok && r->toklen[i] == strlen(word) && memcmp(r->tok[i], word, r->toklen[i]) == 0;
}

static bool tok_copy(const line_reader *r, int i, char *dst, size_t cap) {
  if (i >= r->ntok || r->toklen[i] == 0 || r->toklen[i] >= cap) return false;
  memcpy(dst, r->tok[i], r->toklen[i]);
  dst[r->toklen[i]] = 0;
  return true;
}

static bool tok_int(const line_reader *r, int i, int64_t *out) {
  if (i >= r->ntok || r->toklen[i] == 0 || r->toklen[i] > 18) return false;
  int64_t v = 0;
  for (size_t k = 0; k < r->toklen[i]; k++) {
    char c = r->tok[i][k];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

static bool valid_text(const uint8_t *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] == 0 || (s[i] < 0x20 && s[i] != '\n') || s[i] >= 0x7f) return false;
  return true;
}

/* A signed integer token (variable ranges): optional '-', then at most 18 digits. */
static bool tok_sint(const line_reader *r, int i, int64_t *out) {
  if (i >= r->ntok || r->toklen[i] == 0) return false;
  size_t k = r->tok[i][0] == '-', n = r->toklen[i];
  if (n == k || n - k > 18) return false;
  int64_t v = 0;
  for (; k < n; k++) {
    char c = r->tok[i][k];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = r->tok[i][0] == '-' ? -v : v;
  return true;
}

static hcq_status spec_error(const line_reader *r, const char *what) {
  return hcq_status_make(HCQ_CODE_INVALID, "kernel image spec line %d: %s", r->lineno, what);
}

/* The image's target: "c:" + its arch. */
const char *cpu_image_arch(const hcq_program *p) {
  return memcmp(p->target, "c:", 2) == 0 && cpu_image_machine_of(p->target + 2) ? p->target + 2 : NULL;
}

/* The spec text into the program description it serializes (hcq/program.h), every field checked: the buffers and
 * variables in order with the default layout, the launch sizes evaluated with every variable 1. */
static hcq_status parse_spec(const uint8_t *text, size_t n, hcq_program *p) {
  hcq_program_init(p);
  if (!valid_text(text, n)) return hcq_status_make(HCQ_CODE_INVALID, "kernel image spec is not printable ASCII text");
  line_reader r = {.p = (const char *)text, .end = (const char *)text + n};
  if (!next_line(&r) || !tok_is(&r, 0, "hcq-kernel-spec") || !tok_is(&r, 1, "1") || r.ntok != 2)
    return spec_error(&r, "expected 'hcq-kernel-spec 1'");
  bool have_end = false;
  while (!have_end && next_line(&r)) {
    if (r.ntok == 0) continue;
    if (tok_is(&r, 0, "name")) {
      if (r.ntok != 2 || !tok_copy(&r, 1, p->symbol, sizeof p->symbol)) return spec_error(&r, "bad 'name NAME'");
      memcpy(p->name, p->symbol, sizeof p->name);
    } else if (tok_is(&r, 0, "arch")) {
      memcpy(p->target, "c:", 2);
      if (r.ntok != 2 || !tok_copy(&r, 1, p->target + 2, 16) || !cpu_image_arch(p))
        return spec_error(&r, "bad 'arch x86_64|aarch64|armhf'");
    } else if (tok_is(&r, 0, "buf")) {
      size_t nb = hcq_program_nbufs(p);
      if (nb >= CPU_IMAGE_MAX_BUFS) return spec_error(&r, "too many buffers");
      char dtype[16];
      int64_t slot, size;
      unsigned access;
      if (r.ntok != 5 || !tok_int(&r, 1, &slot) || slot != (int64_t)nb || !tok_copy(&r, 2, dtype, sizeof dtype) ||
          !tok_int(&r, 3, &size) || size <= 0)
        return spec_error(&r, "bad 'buf SLOT DTYPE ELEMENTS r|w|rw' (slots in order from 0, size > 0)");
      if (tok_is(&r, 4, "r")) access = HCQ_ACCESS_READ;
      else if (tok_is(&r, 4, "w")) access = HCQ_ACCESS_WRITE;
      else if (tok_is(&r, 4, "rw")) access = HCQ_ACCESS_READ | HCQ_ACCESS_WRITE;
      else if (tok_is(&r, 4, "-")) access = 0;
      else return spec_error(&r, "buffer access must be r, w, rw or - (unused)");
      HCQ_TRY(hcq_status_annotate(hcq_program_add_buffer(p, dtype, size, access), "kernel image spec line %d", r.lineno));
    } else if (tok_is(&r, 0, "var")) {
      if (hcq_program_nvars(p) >= CPU_IMAGE_MAX_VARS) return spec_error(&r, "too many vars");
      char name[HCQ_PROGRAM_NAME_B];
      int64_t lo = 0, hi = 0;
      if ((r.ntok != 2 && r.ntok != 4) || !tok_copy(&r, 1, name, sizeof name) ||
          (r.ntok == 4 && (!tok_sint(&r, 2, &lo) || !tok_sint(&r, 3, &hi) || lo > hi)))
        return spec_error(&r, "bad 'var NAME [MIN MAX]' (MIN <= MAX)");
      HCQ_TRY(hcq_status_annotate(hcq_program_add_var(p, name, r.ntok == 4, lo, hi), "kernel image spec line %d",
                                  r.lineno));
    } else if (tok_is(&r, 0, "global")) {
      int64_t d;
      if (r.ntok < 3 || !tok_int(&r, 1, &d) || d > 2 || r.restlen == 0 || r.restlen >= HCQ_PROGRAM_EXPR_B)
        return spec_error(&r, "bad 'global DIM EXPR' (DIM 0..2)");
      memcpy(p->global[d], r.rest, r.restlen);
      p->global[d][r.restlen] = 0;
    } else if (tok_is(&r, 0, "end")) {
      have_end = true;
    } else {
      return spec_error(&r, "unknown keyword");
    }
  }
  if (!have_end) return hcq_status_make(HCQ_CODE_INVALID, "kernel image spec: missing 'end' line (truncated?)");
  if (!p->symbol[0] || !p->target[0])
    return hcq_status_make(HCQ_CODE_INVALID, "kernel image spec: needs 'name' and 'arch'");
  /* every launch expression must evaluate with all vars = 1 (syntax and names checked before anything runs) */
  int64_t ones[CPU_IMAGE_MAX_VARS], v;
  for (size_t i = 0; i < CPU_IMAGE_MAX_VARS; i++) ones[i] = 1;
  for (int d = 0; d < 3; d++) {
    hcq_status st = cpu_image_eval(p, p->global[d], ones, &v);
    if (st) return hcq_status_annotate(st, "kernel image spec: global %d", d);
  }
  HCQ_TRY(hcq_program_layout(p, 0));
  return hcq_status_annotate(hcq_program_check(p), "kernel image");
}

hcq_status cpu_image_parse(const void *data, size_t size_B, cpu_image *out) {
  if (!data || !out) return hcq_status_make(HCQ_CODE_INVALID, "cpu_image_parse: NULL argument");
  memset(out, 0, sizeof *out);
  const uint8_t *p = data;
  if (size_B < 8 || memcmp(p, CPU_IMAGE_MAGIC, 8) != 0)
    return hcq_status_make(HCQ_CODE_INVALID, "not an hcq kernel image (bad magic, %zu bytes)", size_B);
  if (size_B < CPU_IMAGE_HEADER_B)
    return hcq_status_make(HCQ_CODE_INVALID, "truncated kernel image header (%zu of %u bytes)", size_B, CPU_IMAGE_HEADER_B);
  uint32_t version = rd32(p + 8), spec_B = rd32(p + 16), header_B = rd32(p + 20);
  uint16_t machine = (uint16_t)(p[12] | p[13] << 8);
  uint64_t elf_off = rd64(p + 24), elf_B = rd64(p + 32), sum = rd64(p + 40);
  if (version != CPU_IMAGE_VERSION)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel image version %u is not supported (this build reads %u)", version,
                           CPU_IMAGE_VERSION);
  if (header_B != CPU_IMAGE_HEADER_B || spec_B > CPU_IMAGE_MAX_SPEC_B || elf_off < CPU_IMAGE_HEADER_B + (uint64_t)spec_B ||
      elf_off > size_B || elf_B != size_B - elf_off || elf_B == 0)
    return hcq_status_make(HCQ_CODE_INVALID,
                           "kernel image sizes do not add up (header %u, spec %u, ELF %llu at %llu, file %zu bytes): truncated?",
                           header_B, spec_B, (unsigned long long)elf_B, (unsigned long long)elf_off, size_B);
  const uint8_t *spec = p + CPU_IMAGE_HEADER_B;
  for (uint64_t i = CPU_IMAGE_HEADER_B + (uint64_t)spec_B; i < elf_off; i++)
    if (p[i]) return hcq_status_make(HCQ_CODE_INVALID, "kernel image padding byte %llu is not zero: the file is corrupt",
                                     (unsigned long long)i);
  if (cpu_image_checksum(spec, spec_B, p + elf_off, (size_t)elf_B) != sum)
    return hcq_status_make(HCQ_CODE_INVALID, "kernel image checksum mismatch: the file is corrupt");
  HCQ_TRY(parse_spec(spec, spec_B, &out->prog));
  if (cpu_image_machine_of(cpu_image_arch(&out->prog)) != machine)
    return hcq_status_make(HCQ_CODE_INVALID, "kernel image header says %s but its spec says %s",
                           cpu_image_arch_name(machine), cpu_image_arch(&out->prog));
  out->machine = machine;
  out->elf = out->prog.binary = p + elf_off;
  out->elf_size_B = out->prog.binary_size_B = (size_t)elf_B;
  return HCQ_OK;
}

hcq_status cpu_image_check_host(const cpu_image *img, uint16_t host_machine) {
  if (img->machine != host_machine)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel image '%s' is built for %s; this machine is %s", img->prog.name,
                           cpu_image_arch_name(img->machine), cpu_image_arch_name(host_machine));
  return HCQ_OK;
}

/* ------------------------------------------------------------------------------------------------ expressions */

/* The launch expressions use the one evaluator of hcq/program.h. */
hcq_status cpu_image_eval(const hcq_program *p, const char *expr, const int64_t *var_values, int64_t *out) {
  size_t nv = p ? hcq_program_nvars(p) : 0;
  if (!p || !expr || !out || (nv && !var_values) || nv > CPU_IMAGE_MAX_VARS)
    return hcq_status_make(HCQ_CODE_INVALID, "cpu_image_eval: NULL argument");
  const char *names[CPU_IMAGE_MAX_VARS];
  for (size_t i = 0; i < nv; i++) names[i] = hcq_program_var(p, i)->name;
  return hcq_expr_eval(expr, names, var_values, nv, out);
}

/* ------------------------------------------------------------------------------------------------ spec writer */

typedef struct out_buf {
  char *p; /* NULL: only measure */
  size_t cap, len;
} out_buf;

static void put(out_buf *o, const char *s) {
  size_t n = strlen(s);
  if (o->p && o->len + n < o->cap) memcpy(o->p + o->len, s, n + 1);
  o->len += n;
}

static void put_int(out_buf *o, int64_t v) {
  char tmp[24];
  int i = 23;
  tmp[i] = 0;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  do tmp[--i] = (char)('0' + u % 10); while ((u /= 10) && i > 1);
  if (v < 0) tmp[--i] = '-';
  put(o, tmp + i);
}

/* A token: non-empty, no spaces, printable. */
static bool word_ok(const char *s) {
  if (!*s) return false;
  for (; *s; s++)
    if (*s <= ' ' || *s >= 0x7f) return false;
  return true;
}

static bool expr_ok(const char *s) {
  if (!*s) return false;
  for (; *s; s++)
    if (*s < ' ' || *s >= 0x7f) return false;
  return true;
}

hcq_status cpu_image_spec_format(const hcq_program *p, char *buf, size_t cap, size_t *out_len) {
  if (!p || !out_len || (buf && !cap)) return hcq_status_make(HCQ_CODE_INVALID, "cpu_image_spec_format: NULL argument");
  size_t nb = hcq_program_nbufs(p), nv = hcq_program_nvars(p);
  const char *arch = cpu_image_arch(p), *name = p->symbol; /* the image loads its kernel by this symbol */
  if (!arch)
    return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: target '%s' is not an image target (c:x86_64, c:aarch64, "
                           "c:armhf)", p->name, p->target);
  if (!word_ok(name)) return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: symbol '%s' is not one word", p->name, name);
  if (nb > CPU_IMAGE_MAX_BUFS || nv > CPU_IMAGE_MAX_VARS)
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel %s has %zu buffers and %zu variables; an image holds at most "
                           "%d and %d", p->name, nb, nv, CPU_IMAGE_MAX_BUFS, CPU_IMAGE_MAX_VARS);
  for (int d = 0; d < 3; d++)
    if (strcmp(p->local[d], "1") != 0)
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel %s: local size %d '%s': images hold CPU kernels only",
                             p->name, d, p->local[d]);
  out_buf o = {.p = buf, .cap = cap};
  put(&o, "hcq-kernel-spec 1\nname ");
  put(&o, name);
  put(&o, "\narch ");
  put(&o, arch);
  put(&o, "\n");
  for (size_t i = 0; i < nb; i++) {
    const hcq_param *b = &p->params[i];
    if (b->kind != HCQ_PARAM_BUFFER || b->slot != (int)i || !word_ok(b->dtype))
      return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: parameter %zu is not buffer slot %zu with a dtype", p->name, i, i);
    if (b->nelems <= 0)
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "kernel %s: buffer slot %zu has no known size", p->name, i);
    put(&o, "buf ");
    put_int(&o, (int64_t)i);
    put(&o, " ");
    put(&o, b->dtype);
    put(&o, " ");
    put_int(&o, b->nelems);
    bool rd = b->access & HCQ_ACCESS_READ, wr = b->access & HCQ_ACCESS_WRITE;
    put(&o, rd && wr ? " rw\n" : rd ? " r\n" : wr ? " w\n" : " -\n");
  }
  for (size_t i = 0; i < nv; i++) {
    const hcq_param *q = hcq_program_var(p, i);
    if (!word_ok(q->name) || (q->ranged && q->min > q->max))
      return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: variable %zu '%s' is not one word with MIN <= MAX", p->name,
                             i, q->name);
    put(&o, "var ");
    put(&o, q->name);
    if (q->ranged) {
      put(&o, " ");
      put_int(&o, q->min);
      put(&o, " ");
      put_int(&o, q->max);
    }
    put(&o, "\n");
  }
  int64_t ones[CPU_IMAGE_MAX_VARS], v;
  for (size_t i = 0; i < CPU_IMAGE_MAX_VARS; i++) ones[i] = 1;
  for (int d = 0; d < 3; d++) {
    if (!expr_ok(p->global[d]))
      return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: launch size %d is not one line of text", p->name, d);
    HCQ_TRY(hcq_status_annotate(cpu_image_eval(p, p->global[d], ones, &v),
                                "kernel %s: launch size %d '%s' cannot be stored in an image", p->name, d, p->global[d]));
    put(&o, "global ");
    put_int(&o, d);
    put(&o, " ");
    put(&o, p->global[d]);
    put(&o, "\n");
  }
  put(&o, "end\n");
  *out_len = o.len;
  if (buf && o.len >= cap)
    return hcq_status_make(HCQ_CODE_INVALID, "kernel %s: spec of %zu bytes does not fit %zu", p->name, o.len, cap);
  return HCQ_OK;
}
