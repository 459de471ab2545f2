/* dtypes: the scalar table, vector/pointer constructors, the promotion lattice and safe casts. */
#include "uop/uop.h"

#include <string.h>

typedef struct scalar_info {
  const char *name, *cname;
  int8_t size_B;   /* itemsize of one element */
  int8_t bits;     /* value bits (index: 64) */
  int8_t is_int, is_unsigned, is_float;
  int8_t mantissa; /* floats: significand digits incl. the implicit bit, for int->float safe casts */
} scalar_info;

static const scalar_info scalars[UOP_SCALAR_COUNT] = {
    [UOP_VOID] = {"void", "void", 0, 0, 0, 0, 0, 0},
    [UOP_INDEX] = {"index", "index", 8, 64, 1, 0, 0, 0},
    [UOP_BOOL] = {"bool", "bool", 1, 1, 0, 0, 0, 0},
    [UOP_INT8] = {"int8", "char", 1, 8, 1, 0, 0, 0},
    [UOP_UINT8] = {"uint8", "uchar", 1, 8, 1, 1, 0, 0},
    [UOP_INT16] = {"int16", "short", 2, 16, 1, 0, 0, 0},
    [UOP_UINT16] = {"uint16", "ushort", 2, 16, 1, 1, 0, 0},
    [UOP_INT32] = {"int32", "int", 4, 32, 1, 0, 0, 0},
    [UOP_UINT32] = {"uint32", "uint", 4, 32, 1, 1, 0, 0},
    [UOP_INT64] = {"int64", "long", 8, 64, 1, 0, 0, 0},
    [UOP_UINT64] = {"uint64", "ulong", 8, 64, 1, 1, 0, 0},
    [UOP_FLOAT16] = {"float16", "half", 2, 16, 0, 0, 1, 11},
    [UOP_BFLOAT16] = {"bfloat16", "bfloat16", 2, 16, 0, 0, 1, 8},
    [UOP_FLOAT32] = {"float32", "float", 4, 32, 0, 0, 1, 24},
    [UOP_FLOAT64] = {"float64", "double", 8, 64, 0, 0, 1, 53},
};

static const scalar_info *info(uop_dtype dt) {
  return &scalars[dt.scalar < UOP_SCALAR_COUNT ? dt.scalar : UOP_VOID];
}

uop_dtype uop_dt(uop_scalar s) {
  uop_dtype dt = {.scalar = (uint8_t)s, .addrspace = UOP_AS_NONE, .count = 1, .ptr_v = 1, .size = -1};
  return dt;
}

uop_dtype uop_dt_vec(uop_dtype base, int count) {
  uop_dtype dt = uop_dt((uop_scalar)base.scalar);
  dt.count = (uint16_t)(count < 1 ? 1 : count);
  return dt;
}

uop_dtype uop_dt_ptr(uop_dtype base, uop_addrspace as, int64_t size_elems) {
  uop_dtype dt = base;
  dt.addrspace = (uint8_t)(as == UOP_AS_NONE ? UOP_AS_GLOBAL : as);
  dt.ptr_v = 1;
  dt.size = size_elems;
  return dt;
}

uop_dtype uop_dt_scalar_of(uop_dtype dt) { return uop_dt((uop_scalar)dt.scalar); }

uop_dtype uop_dt_base_of(uop_dtype dt) {
  if (dt.addrspace == UOP_AS_NONE) return dt;
  return uop_dt_vec(dt, dt.count);
}

bool uop_dt_eq(uop_dtype a, uop_dtype b) {
  if (a.scalar != b.scalar || a.addrspace != b.addrspace || a.count != b.count) return false;
  if (a.addrspace == UOP_AS_NONE) return true;
  return a.ptr_v == b.ptr_v && a.size == b.size;
}

bool uop_dt_is_ptr(uop_dtype dt) { return dt.addrspace != UOP_AS_NONE; }
bool uop_dt_is_int(uop_dtype dt) { return info(dt)->is_int; }
bool uop_dt_is_unsigned(uop_dtype dt) { return info(dt)->is_unsigned; }
bool uop_dt_is_float(uop_dtype dt) { return info(dt)->is_float; }
bool uop_dt_is_bool(uop_dtype dt) { return dt.scalar == UOP_BOOL; }
int uop_dt_itemsize_B(uop_dtype dt) { return info(dt)->size_B * (dt.count ? dt.count : 1); }
int uop_dt_bits(uop_dtype dt) { return info(dt)->bits; }

int64_t uop_dt_min(uop_dtype dt) {
  const scalar_info *si = info(dt);
  if (dt.scalar == UOP_BOOL || si->is_unsigned) return 0;
  if (!si->is_int || si->bits >= 64) return INT64_MIN;
  return -((int64_t)1 << (si->bits - 1));
}

int64_t uop_dt_max(uop_dtype dt) {
  const scalar_info *si = info(dt);
  if (dt.scalar == UOP_BOOL) return 1;
  if (dt.scalar == UOP_UINT64) return -1; /* bit pattern of UINT64_MAX */
  if (!si->is_int || si->bits >= 64) return INT64_MAX;
  if (si->is_unsigned) return (int64_t)(((uint64_t)1 << si->bits) - 1);
  return ((int64_t)1 << (si->bits - 1)) - 1;
}

const char *uop_dt_name(uop_dtype dt) { return info(dt)->name; }
const char *uop_dt_cname(uop_dtype dt) { return info(dt)->cname; }

bool uop_dt_from_name(const char *name, size_t len, uop_dtype *out_dt) {
  for (int s = 0; s < UOP_SCALAR_COUNT; s++) {
    if (strlen(scalars[s].name) == len && memcmp(scalars[s].name, name, len) == 0) {
      *out_dt = uop_dt((uop_scalar)s);
      return true;
    }
  }
  return false;
}

/* Promotion lattice edges (reference dtype.py promo_lattice without the fp8 types, whose only role there is to sit
 * between the 64-bit ints and float16/bfloat16). `index` is an unbounded int: joined with bool or any int it stays
 * index; joined with a float it behaves like int64. */
static uint32_t bit(uop_scalar s) { return (uint32_t)1 << s; }

static uint32_t parents_direct(uop_scalar s) {
  switch (s) {
  case UOP_BOOL: return bit(UOP_INT8) | bit(UOP_UINT8);
  case UOP_INT8: return bit(UOP_INT16);
  case UOP_INT16: return bit(UOP_INT32);
  case UOP_INT32: return bit(UOP_INT64);
  case UOP_INT64: return bit(UOP_FLOAT16) | bit(UOP_BFLOAT16);
  case UOP_UINT8: return bit(UOP_INT16) | bit(UOP_UINT16);
  case UOP_UINT16: return bit(UOP_INT32) | bit(UOP_UINT32);
  case UOP_UINT32: return bit(UOP_INT64) | bit(UOP_UINT64);
  case UOP_UINT64: return bit(UOP_FLOAT16) | bit(UOP_BFLOAT16);
  case UOP_INDEX: return bit(UOP_FLOAT16) | bit(UOP_BFLOAT16);
  case UOP_FLOAT16: return bit(UOP_FLOAT32);
  case UOP_BFLOAT16: return bit(UOP_FLOAT32);
  case UOP_FLOAT32: return bit(UOP_FLOAT64);
  default: return 0;
  }
}

static uint32_t ancestors(uop_scalar s) {
  uint32_t set = bit(s), frontier = bit(s);
  while (frontier) {
    uint32_t next = 0;
    for (int i = 0; i < UOP_SCALAR_COUNT; i++)
      if (frontier & bit((uop_scalar)i)) next |= parents_direct((uop_scalar)i);
    frontier = next & ~set;
    set |= next;
  }
  return set;
}

/* The scalar enum order is the promotion priority order. */
static int priority(int s) { return s; }

uop_dtype uop_dt_least_upper(uop_dtype a, uop_dtype b) {
  if (a.scalar == UOP_VOID || b.scalar == UOP_VOID) return uop_dt(UOP_VOID);
  int count = a.count > b.count ? a.count : b.count;
  bool a_intlike = a.scalar == UOP_BOOL || uop_dt_is_int(a), b_intlike = b.scalar == UOP_BOOL || uop_dt_is_int(b);
  if ((a.scalar == UOP_INDEX && b_intlike) || (b.scalar == UOP_INDEX && a_intlike))
    return uop_dt_vec(uop_dt(UOP_INDEX), count);
  uint32_t common = ancestors((uop_scalar)a.scalar) & ancestors((uop_scalar)b.scalar);
  int best = -1;
  for (int s = 0; s < UOP_SCALAR_COUNT; s++)
    if ((common & bit((uop_scalar)s)) && (best < 0 || priority(s) < priority(best))) best = s;
  if (best < 0) return uop_dt(UOP_VOID);
  return uop_dt_vec(uop_dt((uop_scalar)best), count);
}

bool uop_dt_can_safe_cast(uop_dtype from, uop_dtype to) {
  const scalar_info *f = info(from), *t = info(to);
  if (from.scalar == to.scalar || from.scalar == UOP_BOOL) return true;
  if (from.scalar == UOP_VOID || to.scalar == UOP_VOID || to.scalar == UOP_BOOL) return false;
  if (to.scalar == UOP_INDEX) return f->is_int;  /* index is unbounded */
  if (from.scalar == UOP_INDEX) return false;
  if (f->is_int && t->is_int) { /* range containment */
    if (f->is_unsigned) return t->is_unsigned ? t->bits >= f->bits : t->bits > f->bits;
    return !t->is_unsigned && t->bits >= f->bits;
  }
  if (f->is_int && t->is_float) return f->bits - (f->is_unsigned ? 0 : 1) <= t->mantissa;
  if (f->is_float && t->is_float) {
    if (to.scalar == UOP_FLOAT64) return true;
    if (to.scalar == UOP_FLOAT32) return from.scalar == UOP_FLOAT16 || from.scalar == UOP_BFLOAT16;
    return false;
  }
  return false;
}
