/* uop: the hash-consed UOp IR of hcq.
 *
 * A node is (op, dtype, src[], arg), immutable, owned by a uop_ctx (arena + intern table). Building a node that
 * already exists in the context returns the same pointer, so structural equality is pointer equality.
 * vmin/vmax are computed once per node (lazily) and cached in it.
 *
 * Files: uop.h (this: dtypes, ops, args, nodes, bounds, sym_infer), match.h (pattern matcher, graph_rewrite),
 * symbolic.h (the simplifier rule set), text.h (s-expression parser/printer and infix render).
 * Portability: no __int128 in this API (the library also builds for 32-bit armhf).
 */
#ifndef HCQ_UOP_H
#define HCQ_UOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

/* ------------------------------------------------------------------------------------------------ dtypes */

/* Scalar kinds in promotion-priority order (reference dtype.py). `index` is the unbounded symbolic integer of all
 * index math: is_int(index) is true, but it is not one of the fixed-width ints; it is lowered late to int32/int64. */
typedef enum uop_scalar {
  UOP_VOID,
  UOP_INDEX,
  UOP_BOOL,
  UOP_INT8, UOP_UINT8, UOP_INT16, UOP_UINT16, UOP_INT32, UOP_UINT32, UOP_INT64, UOP_UINT64,
  UOP_FLOAT16, UOP_BFLOAT16, UOP_FLOAT32, UOP_FLOAT64,
  UOP_SCALAR_COUNT
} uop_scalar;

typedef enum uop_addrspace { UOP_AS_NONE = 0, UOP_AS_GLOBAL, UOP_AS_LOCAL, UOP_AS_REG } uop_addrspace;

/* A dtype is a small value. Values: addrspace == NONE, count = vector width (1 = scalar).
 * Pointers: addrspace != NONE; scalar/count describe the pointee, ptr_v is the vector width of the pointer itself
 * (1 normally), size is the buffer size in elements (-1 = unknown). Compare with uop_dt_eq. */
typedef struct uop_dtype {
  uint8_t scalar;    /* uop_scalar */
  uint8_t addrspace; /* uop_addrspace */
  uint16_t count;
  uint16_t ptr_v;
  int64_t size;
} uop_dtype;

uop_dtype uop_dt(uop_scalar s);                                      /* scalar value type */
uop_dtype uop_dt_vec(uop_dtype base, int count);                     /* vector of base's scalar */
uop_dtype uop_dt_ptr(uop_dtype base, uop_addrspace as, int64_t size_elems);
uop_dtype uop_dt_scalar_of(uop_dtype dt);                            /* drops vector count (and pointer-ness) */
uop_dtype uop_dt_base_of(uop_dtype dt);                              /* pointer -> pointee value type */
bool uop_dt_eq(uop_dtype a, uop_dtype b);
bool uop_dt_is_ptr(uop_dtype dt);
bool uop_dt_is_int(uop_dtype dt);      /* fixed-width ints and index (scalar of dt) */
bool uop_dt_is_unsigned(uop_dtype dt);
bool uop_dt_is_float(uop_dtype dt);
bool uop_dt_is_bool(uop_dtype dt);
int uop_dt_itemsize_B(uop_dtype dt);   /* scalar size times count; index reports 8 */
int uop_dt_bits(uop_dtype dt);         /* bits of the scalar; 64 for index */
/* Full representable range of an integer/bool scalar (index: INT64_MIN..INT64_MAX). For uint64 the max is returned
 * as the bit pattern of UINT64_MAX, i.e. -1; use uop_dt_is_unsigned to interpret. */
int64_t uop_dt_min(uop_dtype dt);
int64_t uop_dt_max(uop_dtype dt);
const char *uop_dt_name(uop_dtype dt);    /* scalar grammar name: "index" "bool" "int32" "float16"... */
const char *uop_dt_cname(uop_dtype dt);   /* C-style name used in renders: "int" "long" "uchar" "half" "float"... */
bool uop_dt_from_name(const char *name, size_t len, uop_dtype *out_dt);
/* Least upper dtype of the promotion lattice (bool -> ints -> float16/bfloat16 -> float32 -> float64). */
uop_dtype uop_dt_least_upper(uop_dtype a, uop_dtype b);
/* True if every value of `from` is representable in `to`. */
bool uop_dt_can_safe_cast(uop_dtype from, uop_dtype to);

/* ------------------------------------------------------------------------------------------------ ops */

/* Declaration order matters: it is the first component of the structural order used for canonical operand order
 * (reference tuplize, tinygrad/uop/ops.py: variables < specials < casts < ALU in op order < ranges < constants).
 * The memory op INDEX is spelled UOP_INDEX_OP in C (UOP_INDEX is the index dtype scalar); its name is "INDEX". */
#define UOP_OPS(X)                                                                                    \
  X(SINK) X(NOOP) X(UNROLL) X(CONTRACT) X(GEP) X(VECTORIZE) X(CAT) X(PTRCAT)                          \
  X(DEFINE_GLOBAL) X(DEFINE_LOCAL) X(DEFINE_REG) X(DEFINE_VAR) X(SPECIAL) X(REDUCE) X(WMMA)           \
  X(CAST) X(BITCAST) X(EXP2) X(LOG2) X(SIN) X(SQRT) X(RECIP) X(NEG) X(TRUNC)                           \
  X(LOAD) X(STORE) X(INDEX_OP)                                                                        \
  X(ADD) X(MUL) X(SHL) X(SHR) X(IDIV) X(MAX) X(MOD) X(CMPLT) X(CMPNE) X(CMPEQ) X(XOR) X(OR) X(AND)    \
  X(SUB) X(FDIV) X(WHERE) X(MULACC)                                                                   \
  X(BARRIER) X(RANGE) X(IF) X(ENDRANGE) X(ENDIF) X(VCONST) X(CONST)

typedef enum uop_op {
#define UOP_X_ENUM(name) UOP_##name,
  UOP_OPS(UOP_X_ENUM)
#undef UOP_X_ENUM
  UOP_OP_COUNT
} uop_op;

_Static_assert(UOP_OP_COUNT <= 64, "op sets are 64-bit masks");
typedef uint64_t uop_opset;
#define UOP_OPBIT(op) ((uop_opset)1 << (op))

const char *uop_op_name(uop_op op);                            /* "ADD" */
bool uop_op_from_name(const char *name, size_t len, uop_op *out_op);
bool uop_op_is_commutative(uop_op op); /* ADD MUL MAX CMPNE CMPEQ XOR OR AND */
bool uop_op_is_alu(uop_op op);         /* unary, binary and ternary ALU ops */
int uop_op_alu_arity(uop_op op);       /* 1, 2 or 3 for ALU ops, 0 otherwise */

/* Axis types of RANGE, in reference enum order. Letters for kernel names: g w l L G R u r t o. OUTER (ours, not the
 * reference's): a sequential loop that a STORE closes and whose iterations pass values through that store's buffer
 * (KBLOCK's outer reduce block): nested outside every other loop, never threaded, split or reordered. */
typedef enum uop_axis {
  UOP_AXIS_GLOBAL, UOP_AXIS_WARP, UOP_AXIS_LOCAL, UOP_AXIS_LOOP, UOP_AXIS_GROUP_REDUCE,
  UOP_AXIS_REDUCE, UOP_AXIS_UPCAST, UOP_AXIS_UNROLL, UOP_AXIS_THREAD, UOP_AXIS_OUTER, UOP_AXIS_COUNT
} uop_axis;
const char *uop_axis_name(uop_axis a); /* lower case: "global" "loop" "reduce" ... */
char uop_axis_letter(uop_axis a);

/* ------------------------------------------------------------------------------------------------ args */

typedef enum uop_arg_kind {
  UOP_ARG_NONE,
  UOP_ARG_INT,   /* i: CONST of int/bool/index (uint64 as bit pattern), DEFINE_GLOBAL/LOCAL/REG slot, REDUCE op */
  UOP_ARG_FLOAT, /* f: CONST of a float dtype */
  UOP_ARG_STR,   /* str: SPECIAL name ("gidx0"), SINK kernel name */
  UOP_ARG_VAR,   /* str = name, i = min, i2 = max: DEFINE_VAR */
  UOP_ARG_RANGE, /* i = id, i2 = uop_axis: RANGE */
  UOP_ARG_INTS,  /* ints[n]: GEP lanes, UNROLL/CONTRACT (id,size) pairs, VCONST values (float lanes as double bits) */
} uop_arg_kind;

/* Args are values; strings and int arrays inside are interned in the context (compare by pointer). */
typedef struct uop_arg {
  uint8_t kind;
  uint32_t n;          /* length of ints */
  int64_t i, i2;
  double f;
  const char *str;     /* interned */
  const int64_t *ints; /* interned */
} uop_arg;

/* ------------------------------------------------------------------------------------------------ nodes */

typedef struct uop uop;
struct uop { /* fields ordered for size (120 bytes on LP64): a compile writes thousands of them */
  uop_dtype dtype;
  uop_arg arg;
  uint32_t nsrc;
  uint32_t id;         /* creation order within the context: a cheap deterministic tie-breaker */
  const uop *const *src;
  uint8_t op;          /* uop_op */
  /* Cached, private to uop.c: */
  uint8_t bounds_done;
  uint32_t ctx_serial_;   /* the serial of the context that made it (uop_ctx_serial): graph_rewrite refuses others */
  int64_t vmin_, vmax_;   /* integers/bool/index (uint64 as bit patterns) */
  double fmin_, fmax_;    /* floats */
};

typedef struct uop_ctx uop_ctx;

hcq_status uop_ctx_create(uop_ctx **out_ctx);
void uop_ctx_destroy(uop_ctx *ctx);
size_t uop_ctx_node_count(const uop_ctx *ctx);
/* Arena allocation tied to the context's lifetime (for passes that need scratch that lives with the nodes). */
void *uop_ctx_alloc(uop_ctx *ctx, size_t size_B);
const char *uop_intern_str(uop_ctx *ctx, const char *s, size_t len);
const int64_t *uop_intern_ints(uop_ctx *ctx, const int64_t *v, uint32_t n);

/* Arg constructors. */
uop_arg uop_arg_none(void);
uop_arg uop_arg_int(int64_t v);
uop_arg uop_arg_float(double f);
uop_arg uop_arg_str(uop_ctx *ctx, const char *s);
uop_arg uop_arg_var(uop_ctx *ctx, const char *name, int64_t min, int64_t max);
uop_arg uop_arg_range(int64_t id, uop_axis axis);
uop_arg uop_arg_ints(uop_ctx *ctx, const int64_t *v, uint32_t n);
bool uop_arg_eq(const uop_arg *a, const uop_arg *b);

/* The one node constructor: returns the interned node. Never NULL except on out-of-memory, which is sticky in the
 * context (uop_ctx_status reports it) so that builders can be chained without checking each call. */
const uop *uop_new(uop_ctx *ctx, uop_op op, uop_dtype dtype, const uop *const *src, uint32_t nsrc, uop_arg arg);
hcq_status uop_ctx_status(uop_ctx *ctx); /* HCQ_OK, or an out-of-memory status (caller frees) */

/* Convenience builders (all go through uop_new). Integer constants are wrapped to the dtype's width. */
const uop *uop_const_int(uop_ctx *ctx, uop_dtype dt, int64_t v);
const uop *uop_const_float(uop_ctx *ctx, uop_dtype dt, double v);
const uop *uop_const_bool(uop_ctx *ctx, bool v);
const uop *uop_index_const(uop_ctx *ctx, int64_t v); /* CONST of dtype index */
const uop *uop_var(uop_ctx *ctx, const char *name, int64_t min, int64_t max, uop_dtype dt); /* DEFINE_VAR */
const uop *uop_range(uop_ctx *ctx, const uop *end, int64_t id, uop_axis axis);            /* RANGE, dtype index */
const uop *uop_special(uop_ctx *ctx, const char *name, const uop *end);                    /* SPECIAL, dtype index */
const uop *uop_alu1(uop_ctx *ctx, uop_op op, const uop *a);
/* Binary ALU: result dtype is bool for comparisons, else a's dtype. */
const uop *uop_alu2(uop_ctx *ctx, uop_op op, const uop *a, const uop *b);
const uop *uop_where(uop_ctx *ctx, const uop *cond, const uop *a, const uop *b);
const uop *uop_cast(uop_ctx *ctx, uop_dtype dt, const uop *a);
/* Rebuild `n` with new sources (same op, dtype, arg). */
const uop *uop_replace_src(uop_ctx *ctx, const uop *n, const uop *const *src, uint32_t nsrc);

static inline bool uop_is_const(const uop *n) { return n->op == UOP_CONST; }
/* If n is an integer/bool/index CONST, store its value and return true. */
bool uop_const_value(const uop *n, int64_t *out_v);

/* ------------------------------------------------------------------------------------------------ bounds */

/* Sound bounds, computed once per node (reference tinygrad/uop/ops.py; fixed-width ints wrap, so an expression that may
 * overflow its dtype gets the dtype's full range). For index, INT64_MIN/INT64_MAX mean "unbounded".
 * For float nodes use uop_fmin/uop_fmax (which may be +-inf). For uint64, the values are bit patterns. */
int64_t uop_vmin(const uop *n);
int64_t uop_vmax(const uop *n);
double uop_fmin(const uop *n);
double uop_fmax(const uop *n);

/* ------------------------------------------------------------------------------------------------ evaluation */

/* Variable values keyed by name (the same names as DEFINE_VAR args and SPECIAL names). */
typedef struct uop_var_val { const char *name; int64_t value; } uop_var_val;

/* Evaluate an integer/bool/index expression with C semantics (truncating // and %, wrap to the dtype's width).
 * Ranges are looked up by "ridxN" (N = range id). Errors name the missing variable or the division by zero. */
hcq_status uop_sym_infer(const uop *expr, const uop_var_val *vals, size_t nvals, int64_t *out_value);

/* Lower every `index`-typed node under root, per node, to int32, or int64 when that node's proven bounds or one of
 * its index operands need it (narrower operands are cast up; reference tinygrad/uop/ops.py). A DEFINE_VAR declared
 * outside int32 is an error (kernel variables are 32-bit arguments). */
hcq_status uop_lower_index(uop_ctx *ctx, const uop *root, const uop **out_root);

/* Structural three-way order (reference tuplize, tinygrad/uop/ops.py), memoized: op, then arg, then dtype, then
 * sources. */
int uop_struct_cmp(const uop *a, const uop *b);

/* Iterative topological order (sources before users) of the DAG under root. The array lives in the ctx arena and
 * is read-only: a later call on the same root may return the same array. */
hcq_status uop_toposort(uop_ctx *ctx, const uop *root, const uop ***out_nodes, size_t *out_count);

#endif
