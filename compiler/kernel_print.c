/* The kernel printer: any DAG -> kernel text that parses back to the same nodes. A node is written in its named
 * form when kt_form_dtype (the parser's own typing rule) rebuilds exactly its dtype and its arg is the one the named
 * form gives; otherwise in the generic (op NAME DT ARG SRC...) form. Explicit work stack, no recursion. */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "compiler/kernel_text_internal.h"
#include "compiler/kernel_valid.h"
#include "uop/text.h"
#include "uop/text_buf.h"

/* ------------------------------------------------------------------------------------------------ named forms */

enum form { F_GENERIC, F_CONST, F_VAR, F_BUF, F_RANGE, F_SPECIAL, F_REDUCE, F_CAST, F_PLAIN };

static int64_t wrap_int(uop_dtype dt, int64_t v) {
  if (dt.scalar == UOP_BOOL) return v != 0;
  int bits = uop_dt_bits(dt);
  if (!uop_dt_is_int(dt) || bits >= 64) return v;
  uint64_t mask = ((uint64_t)1 << bits) - 1, u = (uint64_t)v & mask;
  if (uop_dt_is_unsigned(dt)) return (int64_t)u;
  if (u >> (bits - 1)) u |= ~mask;
  return (int64_t)u;
}

static bool scalar_value(uop_dtype dt) { return dt.addrspace == UOP_AS_NONE && dt.count == 1 && dt.scalar != UOP_VOID; }

static bool const_named(const uop *n) {
  if (n->nsrc || !scalar_value(n->dtype)) return false;
  if (uop_dt_is_float(n->dtype)) {
    double f = n->arg.f;
    if (n->arg.kind != UOP_ARG_FLOAT || isnan(f)) return false;
    if (isfinite(f) && fabs(f) > uop_text_float_max((uop_scalar)n->dtype.scalar)) return false;
    return n->dtype.scalar != UOP_FLOAT32 || (double)(float)f == f;
  }
  return n->arg.kind == UOP_ARG_INT && wrap_int(n->dtype, n->arg.i) == n->arg.i;
}

static bool var_named(const uop *n) {
  if (n->nsrc || !scalar_value(n->dtype) || !uop_dt_is_int(n->dtype) || n->arg.kind != UOP_ARG_VAR || !n->arg.str)
    return false;
  if (!kt_is_identifier(n->arg.str, strlen(n->arg.str))) return false;
  int64_t lo = n->arg.i, hi = n->arg.i2;
  if (wrap_int(n->dtype, lo) != lo || wrap_int(n->dtype, hi) != hi) return false;
  return uop_dt_is_unsigned(n->dtype) ? (uint64_t)lo <= (uint64_t)hi : lo <= hi;
}

static enum form form_of(const uop *n) {
  uop_op op = (uop_op)n->op;
  uop_dtype dt;
  char msg[8];
  switch (op) {
  case UOP_CONST: return const_named(n) ? F_CONST : F_GENERIC;
  case UOP_DEFINE_VAR: return var_named(n) ? F_VAR : F_GENERIC;
  case UOP_DEFINE_GLOBAL:
    return n->nsrc == 0 && n->arg.kind == UOP_ARG_INT && n->arg.i >= 0 && n->arg.i <= INT32_MAX &&
                   n->dtype.addrspace == UOP_AS_GLOBAL && n->dtype.ptr_v == 1 && n->dtype.scalar != UOP_VOID &&
                   n->dtype.size >= -1 && n->dtype.size <= INT64_MAX / 2
               ? F_BUF
               : F_GENERIC;
  case UOP_RANGE:
    if (n->arg.kind != UOP_ARG_RANGE || n->arg.i < 0 || n->arg.i2 < 0 || n->arg.i2 >= UOP_AXIS_COUNT) return F_GENERIC;
    break;
  case UOP_SPECIAL:
    if (n->arg.kind != UOP_ARG_STR || !n->arg.str || !kt_is_identifier(n->arg.str, strlen(n->arg.str)))
      return F_GENERIC;
    break;
  case UOP_REDUCE:
    if (n->arg.kind != UOP_ARG_INT || (n->arg.i != UOP_ADD && n->arg.i != UOP_MUL && n->arg.i != UOP_MAX))
      return F_GENERIC;
    break;
  default:
    if (n->arg.kind != UOP_ARG_NONE) return F_GENERIC;
    break;
  }
  if (!kt_form_dtype(op, n->src, n->nsrc, n->dtype, &dt, msg, sizeof msg) || !kt_dt_same(dt, n->dtype))
    return F_GENERIC;
  switch (op) {
  case UOP_RANGE: return F_RANGE;
  case UOP_SPECIAL: return F_SPECIAL;
  case UOP_REDUCE: return F_REDUCE;
  case UOP_CAST: case UOP_BITCAST: return F_CAST;
  default: return F_PLAIN;
  }
}

/* Constants written as one atom are never let-bound. */
static bool is_atom_const(const uop *n) { return n->op == UOP_CONST && const_named(n); }

/* ------------------------------------------------------------------------------------------------ atoms */

static void put_name(text_buf *b, const char *s) {
  size_t len = strlen(s);
  if (kt_is_identifier(s, len)) {
    text_buf_add(b, s, len);
    return;
  }
  text_buf_puts(b, "\"");
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    char e[8];
    if (c == '"' || c == '\\') snprintf(e, sizeof e, "\\%c", c);
    else if (c < 0x20 || c >= 0x7f) snprintf(e, sizeof e, "\\x%02x", c);
    else snprintf(e, sizeof e, "%c", c);
    text_buf_puts(b, e);
  }
  text_buf_puts(b, "\"");
}

static void fmt_int(char *buf, size_t cap, uop_dtype dt, int64_t v) {
  if (uop_dt_is_unsigned(dt)) snprintf(buf, cap, "%" PRIu64, (uint64_t)v);
  else snprintf(buf, cap, "%" PRId64, v);
}

static void put_const(text_buf *b, const uop *n) {
  char num[48], out[128], dts[80];
  uop_scalar s = (uop_scalar)n->dtype.scalar;
  if (s == UOP_BOOL) {
    text_buf_puts(b, n->arg.i ? "true" : "false");
    return;
  }
  if (uop_dt_is_float(n->dtype)) {
    uop_text_fmt_double(n->arg.f, num);
    if (s == UOP_FLOAT32 && isfinite(n->arg.f)) {
      for (int prec = 1; prec <= 9; prec++) { /* the shortest text that reads back to the same float */
        snprintf(num, sizeof num, "%.*g", prec, n->arg.f);
        if (strtof(num, NULL) == (float)n->arg.f) break;
      }
      text_buf_puts(b, num);
      if (!strpbrk(num, ".e")) text_buf_puts(b, ".0");
      return;
    }
  } else {
    fmt_int(num, sizeof num, n->dtype, n->arg.i);
    if (s == UOP_INDEX) {
      text_buf_puts(b, num);
      return;
    }
  }
  snprintf(out, sizeof out, "(const %s %s)", num, cc_dtype_str(n->dtype, dts, sizeof dts));
  text_buf_puts(b, out);
}

static hcq_status put_arg(text_buf *b, const uop *n) {
  const uop_arg *a = &n->arg;
  char tmp[96];
  switch (a->kind) {
  case UOP_ARG_NONE: text_buf_puts(b, "_"); return HCQ_OK;
  case UOP_ARG_INT:
    snprintf(tmp, sizeof tmp, "%" PRId64, a->i);
    text_buf_puts(b, tmp);
    return HCQ_OK;
  case UOP_ARG_FLOAT:
    text_buf_puts(b, "(f ");
    text_buf_puts(b, uop_text_fmt_double(a->f, tmp));
    text_buf_puts(b, ")");
    return HCQ_OK;
  case UOP_ARG_STR:
    text_buf_puts(b, "(s ");
    put_name(b, a->str ? a->str : "");
    text_buf_puts(b, ")");
    return HCQ_OK;
  case UOP_ARG_VAR:
    text_buf_puts(b, "(v ");
    put_name(b, a->str ? a->str : "");
    snprintf(tmp, sizeof tmp, " %" PRId64 " %" PRId64 ")", a->i, a->i2);
    text_buf_puts(b, tmp);
    return HCQ_OK;
  case UOP_ARG_RANGE:
    if (a->i2 < 0 || a->i2 >= UOP_AXIS_COUNT)
      return hcq_status_make(HCQ_CODE_INVALID, "print: %s #%u has a bad axis %" PRId64, uop_op_name((uop_op)n->op),
                             n->id, a->i2);
    snprintf(tmp, sizeof tmp, "(r %" PRId64 " %s)", a->i, uop_axis_name((uop_axis)a->i2));
    text_buf_puts(b, tmp);
    return HCQ_OK;
  case UOP_ARG_INTS:
    text_buf_puts(b, "(ints");
    for (uint32_t i = 0; i < a->n; i++) {
      snprintf(tmp, sizeof tmp, " %" PRId64, a->ints[i]);
      text_buf_puts(b, tmp);
    }
    text_buf_puts(b, ")");
    return HCQ_OK;
  default:
    return hcq_status_make(HCQ_CODE_INVALID, "print: %s #%u has an unknown arg kind %d", uop_op_name((uop_op)n->op),
                           n->id, a->kind);
  }
}

/* ------------------------------------------------------------------------------------------------ let names */

typedef struct nameset {
  char **keys;
  size_t cap, count;
  bool failed;
} nameset;

static size_t str_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return (size_t)h;
}

static bool nameset_has(const nameset *ns, const char *s) {
  if (!ns->cap) return false;
  for (size_t i = str_hash(s) & (ns->cap - 1); ns->keys[i]; i = (i + 1) & (ns->cap - 1))
    if (strcmp(ns->keys[i], s) == 0) return true;
  return false;
}

static bool nameset_add(nameset *ns, char *s) {
  if ((ns->count + 1) * 2 > ns->cap) {
    size_t cap = ns->cap ? ns->cap * 2 : 64;
    char **k = calloc(cap, sizeof *k);
    if (!k) return false;
    for (size_t j = 0; j < ns->cap; j++) {
      if (!ns->keys[j]) continue;
      size_t i = str_hash(ns->keys[j]) & (cap - 1);
      while (k[i]) i = (i + 1) & (cap - 1);
      k[i] = ns->keys[j];
    }
    free(ns->keys);
    ns->keys = k;
    ns->cap = cap;
  }
  size_t i = str_hash(s) & (ns->cap - 1);
  while (ns->keys[i]) i = (i + 1) & (ns->cap - 1);
  ns->keys[i] = s;
  ns->count++;
  return true;
}

static void nameset_free(nameset *ns) {
  for (size_t i = 0; i < ns->cap; i++) free(ns->keys[i]);
  free(ns->keys);
}

/* A unique let name from a base; NULL on out of memory. Owned by the set. */
static const char *unique_name(nameset *ns, const char *base) {
  char buf[160];
  snprintf(buf, sizeof buf, "%s", base);
  for (int k = 2; nameset_has(ns, buf) || kt_is_reserved(buf, strlen(buf)); k++) snprintf(buf, sizeof buf, "%s_%d", base, k);
  char *s = strdup(buf);
  if (!s || !nameset_add(ns, s)) {
    free(s);
    return NULL;
  }
  return s;
}

static void base_name(const uop *n, enum form f, uint32_t *counter, char *buf, size_t cap) {
  if (f == F_BUF) snprintf(buf, cap, "buf%" PRId64, n->arg.i);
  else if (f == F_VAR) snprintf(buf, cap, "%.60s", n->arg.str);
  else if (n->op == UOP_RANGE && n->arg.kind == UOP_ARG_RANGE && n->arg.i >= 0) snprintf(buf, cap, "r%" PRId64, n->arg.i);
  else if (n->op == UOP_DEFINE_GLOBAL) snprintf(buf, cap, "g%u", (*counter)++);
  else snprintf(buf, cap, "t%u", (*counter)++);
}

/* ------------------------------------------------------------------------------------------------ emit */

static void push(text_stack *st, const uop *n, const char *lit) { text_stack_push(st, (text_item){.n = n, .lit = lit}); }

typedef struct printer {
  text_buf b;
  text_stack st;
  kt_map names; /* node -> let name (const char *) */
  const uop *root;
} printer;

/* Push sources from..nsrc-1 (each preceded by sep) so they come out in order. */
static void push_srcs(printer *p, const uop *n, uint32_t from, const char *sep) {
  for (uint32_t i = n->nsrc; i > from; i--) {
    push(&p->st, n->src[i - 1], NULL);
    push(&p->st, NULL, sep);
  }
}

static hcq_status expand(printer *p, const uop *n) {
  char tmp[200], dts[80];
  enum form f = form_of(n);
  switch (f) {
  case F_CONST: put_const(&p->b, n); return HCQ_OK;
  case F_VAR: {
    char lo[48], hi[48];
    fmt_int(lo, sizeof lo, n->dtype, n->arg.i);
    fmt_int(hi, sizeof hi, n->dtype, n->arg.i2);
    snprintf(tmp, sizeof tmp, "(var %s %s %s %s)", n->arg.str, lo, hi, cc_dtype_str(n->dtype, dts, sizeof dts));
    text_buf_puts(&p->b, tmp);
    return HCQ_OK;
  }
  case F_BUF:
    snprintf(tmp, sizeof tmp, "(buf %" PRId64 " %s %" PRId64 ")", n->arg.i,
             cc_dtype_str(uop_dt_base_of(n->dtype), dts, sizeof dts), n->dtype.size);
    text_buf_puts(&p->b, tmp);
    return HCQ_OK;
  case F_RANGE: {
    static const char *const sfx[UOP_AXIS_COUNT] = {" global)", " warp)", " local)", " loop)", " group_reduce)",
                                                    " reduce)", " upcast)", " unroll)", " thread)", " outer)"};
    snprintf(tmp, sizeof tmp, "(range %" PRId64 " ", n->arg.i);
    text_buf_puts(&p->b, tmp);
    push(&p->st, NULL, sfx[n->arg.i2]);
    push(&p->st, n->src[0], NULL);
    return HCQ_OK;
  }
  case F_SPECIAL:
    text_buf_puts(&p->b, "(special ");
    text_buf_puts(&p->b, n->arg.str);
    text_buf_puts(&p->b, " ");
    push(&p->st, NULL, ")");
    push(&p->st, n->src[0], NULL);
    return HCQ_OK;
  case F_REDUCE:
    text_buf_puts(&p->b, n->arg.i == UOP_ADD ? "(reduce add" : n->arg.i == UOP_MUL ? "(reduce mul" : "(reduce max");
    push(&p->st, NULL, ")");
    push_srcs(p, n, 0, " ");
    return HCQ_OK;
  case F_CAST:
    snprintf(tmp, sizeof tmp, "(%s %s", n->op == UOP_CAST ? "cast" : "bitcast", cc_dtype_str(n->dtype, dts, sizeof dts));
    text_buf_puts(&p->b, tmp);
    push(&p->st, NULL, ")");
    push_srcs(p, n, 0, " ");
    return HCQ_OK;
  case F_PLAIN: {
    const char *w = n->op == UOP_INDEX_OP ? "index" : n->op == UOP_LOAD ? "load" : n->op == UOP_STORE ? "store"
                  : n->op == UOP_SINK ? "sink" : kt_alu_word((uop_op)n->op);
    text_buf_puts(&p->b, "(");
    text_buf_puts(&p->b, w);
    push(&p->st, NULL, ")");
    push_srcs(p, n, 0, n == p->root && n->op == UOP_SINK ? "\n    " : " ");
    return HCQ_OK;
  }
  case F_GENERIC:
    snprintf(tmp, sizeof tmp, "(op %s %s ", uop_op_name((uop_op)n->op), cc_dtype_str(n->dtype, dts, sizeof dts));
    text_buf_puts(&p->b, tmp);
    HCQ_TRY(put_arg(&p->b, n));
    push(&p->st, NULL, ")");
    push_srcs(p, n, 0, " ");
    return HCQ_OK;
  }
  return HCQ_OK;
}

/* Write n (its name if let-bound, unless it is `self`, the node a let is defining). */
static hcq_status emit(printer *p, const uop *top, const uop *self) {
  hcq_status err = HCQ_OK;
  if (top) push(&p->st, top, NULL);
  while (!err && p->st.len && !p->st.failed && !p->b.failed) {
    text_item it = p->st.items[--p->st.len];
    if (!it.n) {
      text_buf_puts(&p->b, it.lit);
      continue;
    }
    intptr_t *nm = it.n != self ? kt_map_find(&p->names, it.n) : NULL;
    if (nm) text_buf_puts(&p->b, (const char *)*nm);
    else err = expand(p, it.n);
  }
  return err;
}

hcq_status cc_kernel_print(const uop *sink, char **out_text) {
  *out_text = NULL;
  const uop **order;
  size_t n;
  HCQ_TRY(kv_toposort(sink, &order, &n));
  printer p = {.root = sink};
  kt_map uses = {0};
  nameset ns = {0};
  hcq_status err = HCQ_OK;
  uint32_t counter = 0;
  for (size_t i = 0; i < n && !uses.failed; i++)
    for (uint32_t s = 0; s < order[i]->nsrc; s++) {
      intptr_t *u = kt_map_put(&uses, order[i]->src[s], 0);
      if (u) (*u)++;
    }
  /* Reserve the names of variables so generated names do not take them. */
  const uop **bound = malloc((n ? n : 1) * sizeof *bound);
  size_t nbound = 0;
  if (!bound || uses.failed) goto nomem;
  for (size_t i = 0; i < n; i++) {
    const uop *u = order[i];
    if (u == sink || is_atom_const(u)) continue;
    intptr_t *cnt = kt_map_find(&uses, u);
    bool always = u->op == UOP_DEFINE_GLOBAL || u->op == UOP_DEFINE_VAR || u->op == UOP_RANGE;
    if (always || (cnt && *cnt > 1)) bound[nbound++] = u;
  }
  /* Buffers (by slot), then variables, then the rest: buffers and variables are leaves, so this stays topological. */
  {
    const uop **sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted) goto nomem;
    size_t m = 0;
    for (int pass = 0; pass < 3; pass++)
      for (size_t i = 0; i < nbound; i++) {
        const uop *u = bound[i];
        int cls = u->op == UOP_DEFINE_GLOBAL ? 0 : u->op == UOP_DEFINE_VAR ? 1 : 2;
        if (cls != pass) continue;
        size_t j = m++;
        for (; pass == 0 && j > 0 && sorted[j - 1]->arg.i > u->arg.i; j--) sorted[j] = sorted[j - 1];
        sorted[j] = u;
      }
    free(bound);
    bound = sorted;
  }
  for (size_t i = 0; i < nbound; i++) {
    if (form_of(bound[i]) != F_VAR || nameset_has(&ns, bound[i]->arg.str) ||
        kt_is_reserved(bound[i]->arg.str, strlen(bound[i]->arg.str)))
      continue;
    const char *nm = unique_name(&ns, bound[i]->arg.str);
    if (!nm || !kt_map_put(&p.names, bound[i], (intptr_t)nm)) goto nomem;
  }
  for (size_t i = 0; i < nbound; i++) {
    if (kt_map_find(&p.names, bound[i])) continue;
    char base[100];
    base_name(bound[i], form_of(bound[i]), &counter, base, sizeof base);
    const char *nm = unique_name(&ns, base);
    if (!nm || !kt_map_put(&p.names, bound[i], (intptr_t)nm)) goto nomem;
  }
  bool named = sink->op == UOP_SINK && sink->arg.kind == UOP_ARG_STR && sink->arg.str &&
               kt_dt_same(sink->dtype, uop_dt(UOP_VOID));
  if (named && kv_is_canonical(sink)) { /* a named kernel is validated when parsed: keep invalid ones generic */
    hcq_status v = kv_validate(sink, NULL, NULL);
    if (v) named = false;
    hcq_status_free(v);
  }
  text_buf_puts(&p.b, "(kernel ");
  if (named) put_name(&p.b, sink->arg.str);
  else text_buf_puts(&p.b, "_");
  for (size_t i = 0; i < nbound && !err; i++) {
    text_buf_puts(&p.b, "\n  (let ");
    text_buf_puts(&p.b, (const char *)*kt_map_find(&p.names, bound[i]));
    text_buf_puts(&p.b, " ");
    err = emit(&p, bound[i], bound[i]);
    text_buf_puts(&p.b, ")");
  }
  if (!err) {
    text_buf_puts(&p.b, "\n  ");
    if (named) { /* the name moves to the kernel form; the sink itself is written as (sink ...) */
      text_buf_puts(&p.b, "(sink");
      push(&p.st, NULL, ")");
      push_srcs(&p, sink, 0, "\n    ");
      err = emit(&p, NULL, NULL);
    } else {
      err = emit(&p, sink, NULL);
    }
    text_buf_puts(&p.b, ")\n");
  }
  if (!err && (p.b.failed || p.st.failed || p.names.failed)) goto nomem;
  goto done;
nomem:
  err = hcq_status_make(HCQ_CODE_NOMEM, "print: out of memory");
done:
  free(order);
  free(bound);
  free(p.st.items);
  kt_map_free(&uses);
  kt_map_free(&p.names);
  nameset_free(&ns);
  if (err) free(p.b.data);
  else *out_text = p.b.data;
  return err;
}
