/* uop_sym_infer: evaluate an integer/bool/index expression with variables looked up by name, C semantics. */
#include <stdio.h>
#include <string.h>

#include "uop/uop.h"
#include "uop/uop_internal.h"

typedef struct ival { int64_t *v; size_t n, cap; } ival;

static bool ival_push(ival *a, int64_t x) {
  if (a->n == a->cap) {
    size_t ncap = a->cap ? a->cap * 2 : 64;
    int64_t *nv = realloc(a->v, ncap * sizeof *nv);
    if (!nv) return false;
    a->v = nv;
    a->cap = ncap;
  }
  a->v[a->n++] = x;
  return true;
}

static hcq_status lookup(const char *name, const uop_var_val *vals, size_t nvals, int64_t *out) {
  for (size_t i = 0; i < nvals; i++) {
    if (vals[i].name && strcmp(vals[i].name, name) == 0) {
      *out = vals[i].value;
      return HCQ_OK;
    }
  }
  return hcq_status_make(HCQ_CODE_NOT_FOUND, "sym_infer: no value for variable '%s'", name);
}

/* Operands of fixed-width ops are already wrapped to their dtype; unsigned values are zero-extended. */
static hcq_status eval_binary(const uop *n, int64_t a, int64_t b, int64_t *out) {
  uop_dtype sdt = n->src[0]->dtype; /* operand dtype (for comparisons the result is bool) */
  bool uns = uop_dt_is_unsigned(sdt), idx = sdt.scalar == UOP_INDEX;
  int bits = uop_dt_bits(sdt);
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  int64_t r = 0;
  switch (n->op) {
  case UOP_ADD:
    if (idx && __builtin_add_overflow(a, b, &r)) goto overflow;
    r = (int64_t)(ua + ub);
    break;
  case UOP_SUB:
    if (idx && __builtin_sub_overflow(a, b, &r)) goto overflow;
    r = (int64_t)(ua - ub);
    break;
  case UOP_MUL:
    if (idx && __builtin_mul_overflow(a, b, &r)) goto overflow;
    r = (int64_t)(ua * ub);
    break;
  case UOP_IDIV:
  case UOP_MOD:
    if (b == 0)
      return hcq_status_make(HCQ_CODE_INVALID, "sym_infer: division by zero in %s", n->op == UOP_IDIV ? "IDIV" : "MOD");
    if (uns && sdt.scalar == UOP_UINT64) {
      r = (int64_t)(n->op == UOP_IDIV ? ua / ub : ua % ub);
    } else if (a == INT64_MIN && b == -1) { /* the only overflowing case: wraps to INT64_MIN, remainder 0 */
      if (idx && n->op == UOP_IDIV) goto overflow;
      r = n->op == UOP_IDIV ? INT64_MIN : 0;
    } else {
      r = n->op == UOP_IDIV ? a / b : a % b; /* C truncation */
    }
    break;
  case UOP_MAX:
    r = uns && sdt.scalar == UOP_UINT64 ? (int64_t)(ua > ub ? ua : ub) : (a > b ? a : b);
    break;
  case UOP_CMPLT: r = uns && sdt.scalar == UOP_UINT64 ? ua < ub : a < b; break;
  case UOP_CMPNE: r = a != b; break;
  case UOP_CMPEQ: r = a == b; break;
  case UOP_AND: r = a & b; break;
  case UOP_OR: r = a | b; break;
  case UOP_XOR: r = a ^ b; break;
  case UOP_SHL:
  case UOP_SHR:
    if (b < 0 || b >= bits || b >= 64)
      return hcq_status_make(HCQ_CODE_INVALID, "sym_infer: shift amount %lld out of range for %s", (long long)b,
                             uop_dt_name(sdt));
    if (n->op == UOP_SHL) {
      if (idx && (b >= 63 || a > (INT64_MAX >> b) || a < (INT64_MIN >> b))) goto overflow;
      r = (int64_t)(ua << b);
    } else {
      r = uns ? (int64_t)(ua >> b) : a >> b; /* arithmetic for signed, logical for unsigned */
    }
    break;
  default:
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "sym_infer: cannot evaluate %s", uop_op_name((uop_op)n->op));
  }
  *out = r;
  return HCQ_OK;
overflow:
  return hcq_status_make(HCQ_CODE_INVALID, "sym_infer: index overflow in %s (%lld, %lld)", uop_op_name((uop_op)n->op),
                         (long long)a, (long long)b);
}

static hcq_status eval_node(const uop *n, const int64_t *sv, const uop_var_val *vals, size_t nvals, int64_t *out) {
  uop_dtype dt = n->dtype;
  if (!(uop_dt_is_int(dt) || uop_dt_is_bool(dt)) || uop_dt_is_ptr(dt))
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "sym_infer: cannot evaluate %s of dtype %s", uop_op_name((uop_op)n->op),
                           uop_dt_name(dt));
  int64_t r = 0;
  hcq_status st = HCQ_OK;
  switch (n->op) {
  case UOP_CONST:
    if (!uop_const_value(n, &r)) return hcq_status_make(HCQ_CODE_INVALID, "sym_infer: CONST without an integer value");
    break;
  case UOP_DEFINE_VAR:
  case UOP_SPECIAL:
    if (!n->arg.str) return hcq_status_make(HCQ_CODE_INVALID, "sym_infer: %s without a name", uop_op_name((uop_op)n->op));
    st = lookup(n->arg.str, vals, nvals, &r);
    break;
  case UOP_RANGE: {
    char name[32];
    snprintf(name, sizeof name, "ridx%lld", (long long)n->arg.i);
    st = lookup(name, vals, nvals, &r);
    break;
  }
  case UOP_CAST:
  case UOP_TRUNC:
  case UOP_GEP:
    if (n->nsrc < 1 || uop_dt_is_float(n->src[0]->dtype))
      return hcq_status_make(HCQ_CODE_UNSUPPORTED, "sym_infer: cannot evaluate %s of a float", uop_op_name((uop_op)n->op));
    r = sv[0];
    if (n->op == UOP_CAST && dt.scalar == UOP_INDEX && n->src[0]->dtype.scalar == UOP_UINT64 && r < 0)
      return hcq_status_make(HCQ_CODE_INVALID, "sym_infer: uint64 value does not fit index");
    break;
  case UOP_NEG:
    if (dt.scalar == UOP_INDEX && sv[0] == INT64_MIN) return hcq_status_make(HCQ_CODE_INVALID, "sym_infer: index overflow in NEG");
    r = (int64_t)(0 - (uint64_t)sv[0]);
    break;
  case UOP_WHERE: r = sv[0] ? sv[1] : sv[2]; break;
  case UOP_MULACC: {
    int64_t p = 0;
    if (dt.scalar == UOP_INDEX) {
      if (__builtin_mul_overflow(sv[0], sv[1], &p) || __builtin_add_overflow(p, sv[2], &r))
        return hcq_status_make(HCQ_CODE_INVALID, "sym_infer: index overflow in MULACC");
    } else {
      p = uop_wrap_to(dt, (int64_t)((uint64_t)sv[0] * (uint64_t)sv[1]));
      r = (int64_t)((uint64_t)p + (uint64_t)sv[2]);
    }
    break;
  }
  default:
    if (uop_op_alu_arity((uop_op)n->op) == 2 && n->nsrc == 2) {
      st = eval_binary(n, sv[0], sv[1], &r);
      break;
    }
    return hcq_status_make(HCQ_CODE_UNSUPPORTED, "sym_infer: cannot evaluate %s", uop_op_name((uop_op)n->op));
  }
  if (st) return st;
  *out = uop_wrap_to(dt, r);
  return HCQ_OK;
}

hcq_status uop_sym_infer(const uop *expr, const uop_var_val *vals, size_t nvals, int64_t *out_value) {
  if (!expr) return hcq_status_make(HCQ_CODE_INVALID, "sym_infer: NULL expression");
  base_ptrmap done = {0}; /* node -> index into vals_of */
  ival values = {0};
  base_vec stack = {0};
  hcq_status st = HCQ_OK;
  if (!base_vec_push(&stack, (uintptr_t)expr)) goto oom;
  while (stack.n) {
    const uop *n = (const uop *)stack.v[stack.n - 1];
    if (base_ptrmap_find(&done, n)) {
      stack.n--;
      continue;
    }
    bool ready = true;
    /* RANGE/SPECIAL values come from vals; their bound sources are not evaluated */
    bool leaf = n->op == UOP_RANGE || n->op == UOP_SPECIAL || n->op == UOP_DEFINE_VAR;
    for (uint32_t i = 0; !leaf && i < n->nsrc; i++) {
      if (!base_ptrmap_find(&done, n->src[i])) {
        ready = false;
        if (!base_vec_push(&stack, (uintptr_t)n->src[i])) goto oom;
      }
    }
    if (!ready) continue;
    int64_t sv[3] = {0, 0, 0};
    for (uint32_t i = 0; !leaf && i < n->nsrc && i < 3; i++) sv[i] = values.v[*base_ptrmap_find(&done, n->src[i])];
    int64_t r = 0;
    if ((st = eval_node(n, sv, vals, nvals, &r))) goto done;
    if (!ival_push(&values, r) || !base_ptrmap_put(&done, n, values.n - 1)) goto oom;
    stack.n--;
  }
  *out_value = values.v[*base_ptrmap_find(&done, expr)];
  goto done;
oom:
  st = hcq_status_make(HCQ_CODE_NOMEM, "sym_infer: out of memory");
done:
  base_ptrmap_free(&done);
  base_vec_free(&stack);
  free(values.v);
  return st;
}
