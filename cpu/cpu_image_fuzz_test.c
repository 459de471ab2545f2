/* Fuzzer for the kernel image reader (cpu_image_parse, cpu_image_eval; docs/FORMATS.md "Kernel image").
 * Inputs: valid images whose spec text is mutated (bytes, dictionary tokens, whole lines duplicated, dropped,
 * swapped, repeated past the limits, deep parentheses) and then re-wrapped with correct sizes and checksum (the
 * checksum is not a secret, so this is what a hostile file looks like), plus header fields set to edge values
 * and truncated/extended files. Checked:
 * - no crash, hang or sanitizer report; an error always has a message and leaves no half-filled result used;
 * - an accepted image is consistent: strings terminated inside their arrays, counts within the limits, slots in
 *   order, sizes > 0, header machine == spec arch, the ELF view inside the input and running to its end, every
 *   launch expression evaluates with vars = 1;
 * - round trip: cpu_image_spec_format of an accepted image's program re-parses to the same program;
 * - cpu_image_eval on random expression trees equals a reference computed here while generating them (floor
 *   division, C remainder only on non-negative operands, max/min, unary minus), whenever no step overflows; with
 *   overflow or random var values it must still return without undefined behaviour (UBSan).
 * Fixed seed in make test; HCQ_FUZZ_SEED / HCQ_FUZZ_SECONDS (default 3 s) as in base/fuzz.h. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_image.h"
#include "base/testing.h"
#include "base/fuzz.h"

static size_t rndn(size_t n) { return n ? (size_t)(fuzz_next() % n) : 0; }

static const char *BASES[] = {
    "hcq-kernel-spec 1\nname saxpy\narch x86_64\nbuf 0 float32 1048576 rw\nbuf 1 float32 1048576 r\n"
    "var n 1 1048576\nglobal 0 ((n+3)//4)\nglobal 1 1\nglobal 2 1\nend\n",
    "hcq-kernel-spec 1\nname k\narch aarch64\nbuf 0 int64 16 w\nbuf 1 float16 7 -\nbuf 2 int8 1 rw\nvar a\n"
    "var b -5 5\nglobal 0 max(a, b)*2 - min(a,3)\nglobal 1 (a+b)%7\nglobal 2 -(-a)//1\nend\n",
    "hcq-kernel-spec 1\narch armhf\nname m\nbuf 0 float32 4096 r\nend\n",
};

static const char *DICT[] = {
    "hcq-kernel-spec 1\n", "name ", "arch ", "x86_64", "aarch64", "armhf", "buf ", "var ", "global ", "end\n", "end",
    "\n", " ", "  ", "rw", "r", "w", "-", "0", "1", "2", "3", "15", "16", "17", "-1", "999999999999999999",
    "9999999999999999999", "9223372036854775807", "-9223372036854775808", "(", ")", "max(", "min(", ",", "*", "/",
    "//", "%", "+", "n", "a", "b", "float32", "\t", "\x7f", "\x80", "\r", "global 0 ", "buf 0 float32 1 r\n",
    "var v 9 1\n", "global 3 1\n", "global 0 1//0\n", "global 0 1%0\n",
};

/* FNV-1a 64 over spec then ELF: the header checksum (docs/FORMATS.md), written here from the format's text. */
static uint64_t fnv(const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < na; i++) h = (h ^ a[i]) * 0x100000001b3ull;
  for (size_t i = 0; i < nb; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}
static void le(uint8_t *p, uint64_t v, int n) { for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i)); }

/* header + spec + zero padding to 16 + a small fake ELF; *n gets the size. Exact-size malloc (ASan sees overreads). */
static uint8_t *wrap(const char *spec, size_t spec_B, uint16_t machine, size_t *n) {
  uint8_t elf[64];
  memset(elf, 0x5a, sizeof elf);
  memcpy(elf, "\177ELF", 4);
  le(elf + 18, machine, 2);
  size_t off = (48 + spec_B + 15) & ~(size_t)15;
  *n = off + sizeof elf;
  uint8_t *b = calloc(1, *n);
  memcpy(b, "HCQKIMG\0", 8);
  le(b + 8, 1, 4);
  le(b + 12, machine, 2);
  le(b + 16, spec_B, 4);
  le(b + 20, 48, 4);
  le(b + 24, off, 8);
  le(b + 32, sizeof elf, 8);
  memcpy(b + 48, spec, spec_B);
  memcpy(b + off, elf, sizeof elf);
  le(b + 40, fnv((const uint8_t *)spec, spec_B, elf, sizeof elf), 8);
  return b;
}

static uint16_t machine_for(const char *spec) {
  return strstr(spec, "arch aarch64") ? EM_AARCH64 : strstr(spec, "arch armhf") ? EM_ARM : EM_X86_64;
}

/* The spec text as lines, mutated. */
static size_t mutate_text(const char *base, char *out, size_t cap) {
  size_t n = strlen(base);
  memcpy(out, base, n);
  for (int k = rndn(2) ? 1 : 2 + (int)rndn(3); k > 0; k--) {
    size_t pos = rndn(n + 1);
    switch (rndn(8)) {
    case 0: /* flip or replace a byte */
      if (n) out[rndn(n)] = rndn(2) ? (char)(fuzz_next() & 0xff) : (char)(out[rndn(n)] ^ (1 << rndn(8)));
      break;
    case 1: /* delete a span */
      if (n) {
        size_t len = 1 + rndn(8);
        if (pos + len > n) len = n - pos;
        memmove(out + pos, out + pos + len, n - pos - len);
        n -= len;
      }
      break;
    case 2:
    case 3: { /* insert a dictionary token */
      const char *t = DICT[rndn(sizeof DICT / sizeof DICT[0])];
      size_t len = strlen(t);
      if (n + len < cap) {
        memmove(out + pos + len, out + pos, n - pos);
        memcpy(out + pos, t, len);
        n += len;
      }
      break;
    }
    case 4: { /* repeat one line many times (past CPU_IMAGE_MAX_BUFS / VARS) */
      char *ls = memchr(out, '\n', n);
      size_t start = 0;
      for (size_t skip = rndn(6); ls && skip; skip--) {
        start = (size_t)(ls - out) + 1;
        ls = memchr(out + start, '\n', n - start);
      }
      if (!ls) break;
      size_t len = (size_t)(ls - out) + 1 - start;
      for (int r = (int)rndn(20); r > 0 && n + len < cap; r--) {
        memmove(out + start + len, out + start, n - start);
        n += len;
      }
      break;
    }
    case 5: /* truncate */
      n = rndn(n + 1);
      break;
    case 6: { /* a deeply nested or long launch expression */
      char e[600];
      int depth = (int)rndn(100), len = 0;
      len += snprintf(e + len, sizeof e - (size_t)len, "global %d ", (int)rndn(3));
      for (int d = 0; d < depth && len < 280; d++) e[len++] = rndn(3) ? '(' : '-';
      len += snprintf(e + len, sizeof e - (size_t)len, "1");
      for (int d = 0; d < depth && len < 580; d++) e[len++] = ')';
      e[len++] = '\n';
      if (n + (size_t)len < cap) {
        memmove(out + pos + len, out + pos, n - pos);
        memcpy(out + pos, e, (size_t)len);
        n += (size_t)len;
      }
      break;
    }
    default: { /* swap two bytes (reorders fields or lines) */
      if (n > 1) {
        size_t a = rndn(n), b = rndn(n);
        char t = out[a];
        out[a] = out[b];
        out[b] = t;
      }
    }
    }
  }
  return n;
}

static bool terminated(const char *s, size_t cap) { return memchr(s, 0, cap) != NULL; }

static bool same_program(const hcq_program *a, const hcq_program *b) {
  if (strcmp(a->name, b->name) || strcmp(a->symbol, b->symbol) || strcmp(a->target, b->target) ||
      a->nparams != b->nparams || a->kernarg_size_B != b->kernarg_size_B)
    return false;
  for (size_t i = 0; i < a->nparams; i++) {
    const hcq_param *x = &a->params[i], *y = &b->params[i];
    if (x->kind != y->kind || strcmp(x->name, y->name) || x->slot != y->slot || strcmp(x->dtype, y->dtype) ||
        x->nelems != y->nelems || x->access != y->access || x->ranged != y->ranged || x->offset_B != y->offset_B ||
        (x->ranged && (x->min != y->min || x->max != y->max)))
      return false;
  }
  for (int d = 0; d < 3; d++)
    if (strcmp(a->global[d], b->global[d]) || strcmp(a->local[d], b->local[d])) return false;
  return true;
}

static long accepted, rejected, evals, eval_checked;

static void check_image(const uint8_t *data, size_t n) {
  cpu_image img;
  hcq_status st = cpu_image_parse(data, n, &img);
  if (st) {
    rejected++;
    CHECK(hcq_status_message(st)[0] != 0);
    hcq_status_free(st);
    return;
  }
  accepted++;
  const hcq_program *sp = &img.prog;
  size_t nb = hcq_program_nbufs(sp), nv = hcq_program_nvars(sp);
  CHECK(terminated(sp->symbol, sizeof sp->symbol) && sp->symbol[0] && !strcmp(sp->name, sp->symbol));
  CHECK(nb <= CPU_IMAGE_MAX_BUFS && nv <= CPU_IMAGE_MAX_VARS && nb + nv == sp->nparams);
  CHECK(cpu_image_arch(sp) && img.machine == cpu_image_machine_of(cpu_image_arch(sp)));
  CHECK(img.elf > data && img.elf + img.elf_size_B == data + n && img.elf_size_B > 0);
  CHECK(sp->binary == img.elf && sp->binary_size_B == img.elf_size_B);
  CHECK_OK(hcq_program_check(sp));
  for (size_t i = 0; i < nb && i < CPU_IMAGE_MAX_BUFS; i++)
    CHECK(sp->params[i].kind == HCQ_PARAM_BUFFER && sp->params[i].slot == (int)i && sp->params[i].nelems > 0 &&
          terminated(sp->params[i].dtype, sizeof sp->params[i].dtype));
  for (size_t i = 0; i < nv && i < CPU_IMAGE_MAX_VARS; i++) {
    const hcq_param *q = hcq_program_var(sp, i);
    CHECK(terminated(q->name, sizeof q->name) && (!q->ranged || q->min <= q->max));
  }
  int64_t ones[CPU_IMAGE_MAX_VARS], vals[CPU_IMAGE_MAX_VARS], v;
  static const int64_t edge[] = {0, 1, -1, 2, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN};
  for (int i = 0; i < CPU_IMAGE_MAX_VARS; i++) {
    ones[i] = 1;
    vals[i] = rndn(2) ? edge[rndn(8)] : (int64_t)fuzz_next();
  }
  for (int d = 0; d < 3; d++) {
    CHECK(terminated(sp->global[d], sizeof sp->global[d]));
    CHECK_OK(cpu_image_eval(sp, sp->global[d], ones, &v));
    hcq_status_free(cpu_image_eval(sp, sp->global[d], vals, &v)); /* any values: an answer or an error, no UB */
  }
  /* round trip through the formatter */
  char text[CPU_IMAGE_MAX_SPEC_B];
  size_t len = 0;
  CHECK_OK(cpu_image_spec_format(sp, text, sizeof text, &len));
  if (len > 0) {
    size_t n2;
    uint8_t *again = wrap(text, len, img.machine, &n2);
    static cpu_image img2;
    CHECK_OK(cpu_image_parse(again, n2, &img2));
    CHECK(same_program(sp, &img2.prog));
    free(again);
  }
}

/* ---- launch expressions against a reference ---- */

typedef struct gen {
  char s[HCQ_PROGRAM_EXPR_B * 4];
  int len;
  bool overflow;
} gen;

static const char *VARS[] = {"n", "m_2", "Big"};

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Emit a random expression into g, return its value under vals (reference semantics). */
static int64_t gen_expr(gen *g, const int64_t *vals, int depth) {
  int64_t r, a, b;
  int kind = depth > 4 ? (int)rndn(2) : (int)rndn(9);
  if (g->len > (int)sizeof g->s - 80) kind = 0;
  switch (kind) {
  case 0: /* literal */
    r = rndn(4) ? (int64_t)rndn(100) : (int64_t)(fuzz_next() % 1000000000000000000ull);
    g->len += snprintf(g->s + g->len, sizeof g->s - (size_t)g->len, "%lld", (long long)r);
    return r;
  case 1: {
    int i = (int)rndn(3);
    g->len += snprintf(g->s + g->len, sizeof g->s - (size_t)g->len, "%s", VARS[i]);
    return vals[i];
  }
  case 2: /* unary minus of a parenthesized expression */
    g->len += snprintf(g->s + g->len, sizeof g->s - (size_t)g->len, "-(");
    a = gen_expr(g, vals, depth + 1);
    g->len += snprintf(g->s + g->len, sizeof g->s - (size_t)g->len, ")");
    if (a == INT64_MIN) g->overflow = true;
    return a == INT64_MIN ? a : -a;
  case 3:
  case 4: { /* max / min */
    bool mx = kind == 3;
    g->len += snprintf(g->s + g->len, sizeof g->s - (size_t)g->len, mx ? "max(" : "min( ");
    a = gen_expr(g, vals, depth + 1);
    g->len += snprintf(g->s + g->len, sizeof g->s - (size_t)g->len, " , ");
    b = gen_expr(g, vals, depth + 1);
    g->len += snprintf(g->s + g->len, sizeof g->s - (size_t)g->len, ")");
    return mx ? (a > b ? a : b) : (a < b ? a : b);
  }
  default: { /* binary, always parenthesized so precedence is explicit */
    static const char *ops[] = {"+", "-", "*", "//", "/", "%"};
    g->len += snprintf(g->s + g->len, sizeof g->s - (size_t)g->len, "(");
    a = gen_expr(g, vals, depth + 1);
    int op = (int)rndn(6);
    int at = g->len;
    g->len += snprintf(g->s + g->len, sizeof g->s - (size_t)g->len, " %s ", ops[op]);
    b = gen_expr(g, vals, depth + 1);
    g->len += snprintf(g->s + g->len, sizeof g->s - (size_t)g->len, ")");
    if ((op >= 3 && b == 0) || (op == 5 && (a < 0 || b < 0))) { /* avoid: turn it into + */
      memcpy(g->s + at, " + ", 3);
      if (op == 3) memcpy(g->s + at, " +  ", 4);
      op = 0;
    }
    switch (op) {
    case 0: g->overflow |= __builtin_add_overflow(a, b, &r); return r;
    case 1: g->overflow |= __builtin_sub_overflow(a, b, &r); return r;
    case 2: g->overflow |= __builtin_mul_overflow(a, b, &r); return r;
    case 3:
    case 4:
      if (a == INT64_MIN && b == -1) {
        g->overflow = true;
        return a;
      }
      return floor_div(a, b);
    default: return a % b;
    }
  }
  }
}

static void fuzz_eval(void) {
  static hcq_program sp;
  hcq_program_init(&sp);
  for (int i = 0; i < 3; i++) CHECK_OK(hcq_program_add_var(&sp, VARS[i], false, 0, 0));
  int64_t vals[CPU_IMAGE_MAX_VARS] = {0};
  for (int i = 0; i < 3; i++) vals[i] = rndn(3) ? (int64_t)rndn(2000) - 1000 : (int64_t)fuzz_next();
  gen g = {.len = 0};
  int64_t want = gen_expr(&g, vals, 0);
  int64_t got = 0;
  hcq_status st = cpu_image_eval(&sp, g.s, vals, &got);
  evals++;
  if (!g.overflow) {
    eval_checked++;
    if (st || got != want) {
      fprintf(stderr, "eval '%s' (n=%lld m_2=%lld Big=%lld): got %lld (%s), want %lld\n", g.s, (long long)vals[0],
              (long long)vals[1], (long long)vals[2], (long long)got, st ? hcq_status_message(st) : "ok",
              (long long)want);
      CHECK(0);
    }
  }
  hcq_status_free(st);
}

int main(void) {
  fuzz_rng = fuzz_seed("cpu_image_fuzz", 0x1badcafe5eedull);
  double budget = fuzz_seconds(3.0, NULL), t0 = fuzz_now_s();
  char text[CPU_IMAGE_MAX_SPEC_B + 4096];
  /* the bases themselves are valid */
  for (size_t b = 0; b < sizeof BASES / sizeof BASES[0]; b++) {
    size_t n;
    uint8_t *img = wrap(BASES[b], strlen(BASES[b]), machine_for(BASES[b]), &n);
    cpu_image im;
    CHECK_OK(cpu_image_parse(img, n, &im));
    free(img);
  }
  long iters = 0;
  while ((fuzz_now_s() - t0 < budget || iters < 2000) && testing_failures < 10) {
    for (int k = 0; k < 64; k++, iters++) {
      const char *base = BASES[rndn(sizeof BASES / sizeof BASES[0])];
      size_t len = mutate_text(base, text, sizeof text);
      size_t n;
      uint8_t *img = wrap(text, len, rndn(8) ? machine_for(base) : (uint16_t)rndn(200), &n);
      if (rndn(6) == 0) { /* a header field or the length, without fixing the checksum */
        static const uint64_t edge[] = {0, 1, 47, 48, 49, 0xffff, 0x10000, 0x10001, 0xffffffffull, 1ull << 63, ~0ull};
        int fields[] = {8, 12, 16, 20, 24, 32, 40};
        int f = fields[rndn(7)], w = f == 12 ? 2 : f < 24 ? 4 : 8;
        le(img + f, edge[rndn(11)], w);
      }
      size_t use = rndn(10) == 0 ? rndn(n + 1) : n; /* truncated */
      uint8_t *exact = malloc(use ? use : 1);
      memcpy(exact, img, use);
      check_image(exact, use);
      free(exact);
      free(img);
      fuzz_eval();
    }
  }
  printf("cpu_image_fuzz: %ld images (%ld accepted, %ld rejected), %ld expressions (%ld checked against the "
         "reference), %.1f s\n", iters, accepted, rejected, evals, eval_checked, fuzz_now_s() - t0);
  CHECK(accepted > 0 && rejected > 0 && eval_checked > 0);
  return testing_summary("cpu_image_fuzz");
}
