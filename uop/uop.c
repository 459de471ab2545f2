/* uop_ctx: arena, hash-consing intern table for nodes, interned strings and int arrays; op names; args; builders. */
#include "uop/uop.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uop/uop_internal.h"

/* ------------------------------------------------------------------------------------------------ arena */

typedef struct arena_chunk {
  struct arena_chunk *next;
  size_t size_B, used_B;
  max_align_t data[];
} arena_chunk;

typedef struct blob { /* interned string or int array */
  const void *ptr;
  size_t len_B;
  uint64_t hash;
} blob;

typedef struct blob_table {
  blob *slots;
  size_t cap, count;
} blob_table;

/* Intern table slot, 8 bytes (the table is the compile's hottest random access; half the size of a hash + pointer
 * slot, it takes half the cache): the node's id + 1 (0 = empty; ctx->nodes maps it to the node) and the upper 32
 * bits of its hash (the lower bits pick the slot), so a probe dereferences a node only when its tag matches. */
typedef struct intern_slot {
  uint32_t id1;
  uint32_t tag;
} intern_slot;

/* Small index constants and the two bools are looked up in a direct table (the rules build them constantly). */
#define SMALL_CONST_MIN (-128)
#define SMALL_CONST_MAX 1023

/* Fewer rehashes while the table is small (a kernel compile makes a few thousand nodes): x4 up to 64k slots. */
#define INTERN_CAP0 4096
#define INTERN_FAST_GROW_MAX 65536

struct uop_ctx {
  arena_chunk *chunks;
  intern_slot *slots;
  size_t cap, count;
  uop **nodes; /* by id, nodes_cap(cap) entries */
  const uop *small_index[SMALL_CONST_MAX - SMALL_CONST_MIN + 1];
  const uop *index_cache[256]; /* other index constants, direct-mapped by value (strides and offsets repeat) */
  const uop *bools[2];
  blob_table strs, ints;
  bool oom;
  uint32_t serial; /* uop_ctx_serial, stamped on every node it makes */
  const void *memo_owner;
  uop_rw_memo memo[UOP_CTX_MEMO_SLOTS];
  uop_visit visit;
  bool memo_busy[UOP_CTX_MEMO_SLOTS];
  struct {
    const uop *root;
    const uop **nodes;
    size_t count;
  } topo[UOP_CTX_TOPO_SLOTS];
};

bool uop_ctx_topo_get(const uop_ctx *ctx, const uop *root, const uop ***out_nodes, size_t *out_count) {
  const __typeof__(ctx->topo[0]) *e = &ctx->topo[root->id % UOP_CTX_TOPO_SLOTS];
  if (e->root != root) return false;
  *out_nodes = e->nodes;
  *out_count = e->count;
  return true;
}

void uop_ctx_topo_put(uop_ctx *ctx, const uop *root, const uop **nodes, size_t count) {
  __typeof__(ctx->topo[0]) *e = &ctx->topo[root->id % UOP_CTX_TOPO_SLOTS];
  e->root = root;
  e->nodes = nodes;
  e->count = count;
}

uop_visit *uop_ctx_visit_acquire(uop_ctx *ctx) {
  if (!ctx || ctx->visit.busy) return NULL;
  uop_visit *v = &ctx->visit;
  if (v->cap < ctx->count) { /* new nodes since the last walk: extend, zeroing only the new part */
    size_t ncap = v->cap > ctx->count ? v->cap * 2 : ctx->count * 2 + 64; /* headroom: passes keep adding nodes */
    uint32_t *nm = realloc(v->mark, ncap * sizeof *nm);
    if (!nm) return NULL;
    memset(nm + v->cap, 0, (ncap - v->cap) * sizeof *nm);
    v->mark = nm;
    const uop **nv = realloc(v->val, ncap * sizeof *nv);
    if (!nv) return NULL; /* mark is longer than cap says: harmless */
    v->val = nv;
    v->cap = ncap;
  }
  if (++v->epoch == 0) { /* wrapped: old stamps could alias the new epoch */
    memset(v->mark, 0, v->cap * sizeof *v->mark);
    v->epoch = 1;
  }
  v->busy = true;
  return v;
}

void uop_ctx_visit_release(uop_ctx *ctx, uop_visit *v) {
  if (ctx && v == &ctx->visit) v->busy = false;
}

static void memo_free(uop_rw_memo *m) {
  base_ptrmap_free(&m->replace);
  free(m->fin);
  free(m->busy);
  m->fin = NULL;
  m->busy = NULL;
  m->fin_cap = 0;
  base_ptrmap_free(&m->inprog);
  base_vec_free(&m->stack);
}

uop_rw_memo *uop_ctx_memo_acquire(uop_ctx *ctx, const void *owner, int slot) {
  if (!ctx || !owner || slot < 0 || slot >= UOP_CTX_MEMO_SLOTS || ctx->memo_busy[slot]) return NULL;
  if (ctx->memo_owner != owner) {
    for (int i = 0; i < UOP_CTX_MEMO_SLOTS; i++)
      if (ctx->memo_busy[i]) return NULL;
    for (int i = 0; i < UOP_CTX_MEMO_SLOTS; i++) memo_free(&ctx->memo[i]);
    ctx->memo_owner = owner;
  }
  ctx->memo_busy[slot] = true;
  return &ctx->memo[slot];
}

void uop_ctx_memo_release(uop_ctx *ctx, int slot) {
  if (ctx && slot >= 0 && slot < UOP_CTX_MEMO_SLOTS) ctx->memo_busy[slot] = false;
}

#define ARENA_CHUNK_B ((size_t)256 * 1024)

/* Spare standard chunks of destroyed contexts, kept for the next one (process-wide, at most SPARE_CHUNKS). A compile
 * fills a few chunks and frees them; given back to the system, they are faulted in again page by page on the next
 * compile (~290 page faults for matmul_512, a third of its time), so a few are kept instead. */
#if defined(__SANITIZE_ADDRESS__)
#define SPARE_CHUNKS 0 /* ASan: free every chunk, so a node used after its context is gone is still caught */
#else
#define SPARE_CHUNKS 8
#endif
static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static arena_chunk *spare_chunks;
static int spare_count;

static arena_chunk *chunk_get(void) {
  pthread_mutex_lock(&spare_lock);
  arena_chunk *c = spare_chunks;
  if (c) {
    spare_chunks = c->next;
    spare_count--;
  }
  pthread_mutex_unlock(&spare_lock);
  return c ? c : malloc(sizeof *c + ARENA_CHUNK_B);
}

static void chunk_put(arena_chunk *c) {
  if (c->size_B == ARENA_CHUNK_B) {
    pthread_mutex_lock(&spare_lock);
    bool keep = spare_count < SPARE_CHUNKS;
    if (keep) {
      c->next = spare_chunks;
      spare_chunks = c;
      spare_count++;
    }
    pthread_mutex_unlock(&spare_lock);
    if (keep) return;
  }
  free(c);
}

/* The intern table of the last destroyed context (slots and the by-id node array), kept for the next one: a compile
 * grows its table to 16k slots (128 KiB); a fresh one each time means a rehash on the way and, as glibc trims the
 * heap top, page faults again. At most INTERN_SPARE_MAX slots (512 KiB) are kept. Clearing it all (rather than
 * generation-tagged slots) is faster in practice: when something else evicted the caches, the memset streams the
 * table back in at once. The node array needs no clearing (ids below count are set). */
#define INTERN_SPARE_MAX 65536
static intern_slot *spare_slots;
static uop **spare_nodes;
static size_t spare_slots_cap;

/* The visit marks of the last destroyed context, kept for the next one with their epoch (stamps of the old
 * context are older epochs, so the arrays need no clearing): a compile's walks grow them to ~2x its node count,
 * and growing them afresh each time (realloc, then zeroing the new part) cost ~1% of a compile. At most
 * VISIT_SPARE_MAX entries are kept. */
#define VISIT_SPARE_MAX ((size_t)1 << 20)
static uop_visit spare_visit;

static void visit_get(uop_visit *v) {
  pthread_mutex_lock(&spare_lock);
  *v = spare_visit;
  spare_visit = (uop_visit){0};
  pthread_mutex_unlock(&spare_lock);
  v->busy = false;
}

static void visit_put(uop_visit *v) {
  if (v->cap <= VISIT_SPARE_MAX) {
    pthread_mutex_lock(&spare_lock);
    if (!spare_visit.mark || spare_visit.cap < v->cap) { /* keep the bigger one */
      uop_visit old = spare_visit;
      spare_visit = *v;
      *v = old;
    }
    pthread_mutex_unlock(&spare_lock);
  }
  free(v->mark);
  free(v->val);
  base_vec_free(&v->stack);
  base_vec_free(&v->order);
}

/* Node array entries for a table of cap slots: the load factor stays at most 1/2, so ids stay below cap/2 + 1. */
static size_t nodes_cap(size_t cap) { return cap / 2 + 1; }

static bool table_get(uop_ctx *ctx) {
  pthread_mutex_lock(&spare_lock);
  ctx->slots = spare_slots;
  ctx->nodes = spare_nodes;
  ctx->cap = spare_slots_cap;
  spare_slots = NULL;
  spare_nodes = NULL;
  pthread_mutex_unlock(&spare_lock);
  if (ctx->slots) {
    memset(ctx->slots, 0, ctx->cap * sizeof *ctx->slots);
    return true;
  }
  ctx->cap = INTERN_CAP0;
  ctx->slots = calloc(INTERN_CAP0, sizeof *ctx->slots);
  ctx->nodes = malloc(nodes_cap(INTERN_CAP0) * sizeof *ctx->nodes);
  return ctx->slots && ctx->nodes;
}

static void table_put(uop_ctx *ctx) {
  intern_slot *s = ctx->slots;
  uop **nodes = ctx->nodes;
  if (s && nodes && ctx->cap <= INTERN_SPARE_MAX) {
    pthread_mutex_lock(&spare_lock);
    if (!spare_slots || spare_slots_cap < ctx->cap) { /* keep the bigger one */
      intern_slot *old = spare_slots;
      uop **old_nodes = spare_nodes;
      spare_slots = s;
      spare_nodes = nodes;
      spare_slots_cap = ctx->cap;
      s = old;
      nodes = old_nodes;
    }
    pthread_mutex_unlock(&spare_lock);
  }
  free(s);
  free(nodes);
}

/* A new chunk for need bytes (the current one lacks room), made the active one unless it is a big block. */
static __attribute__((noinline)) void *arena_alloc_chunk(uop_ctx *ctx, size_t need) {
  size_t sz = need > ARENA_CHUNK_B / 4 ? need : ARENA_CHUNK_B;
  arena_chunk *c = sz == ARENA_CHUNK_B ? chunk_get() : malloc(sizeof *c + sz);
  if (!c) {
    ctx->oom = true;
    return NULL;
  }
  c->size_B = sz;
  c->used_B = need;
  if (need > ARENA_CHUNK_B / 4 && ctx->chunks) { /* big block: keep the current chunk as the active one */
    c->next = ctx->chunks->next;
    ctx->chunks->next = c;
  } else {
    c->next = ctx->chunks;
    ctx->chunks = c;
  }
  return c->data;
}

/* size_B bytes at a multiple of align (8 or 16) in the arena; inlined so that align is a constant. */
static inline __attribute__((always_inline)) void *arena_alloc(uop_ctx *ctx, size_t size_B, size_t align) {
  size_t need = (size_B + 7) & ~(size_t)7;
  if (need < size_B) {
    ctx->oom = true;
    return NULL;
  }
  arena_chunk *c = ctx->chunks;
  size_t at = c ? (c->used_B + align - 1) & ~(align - 1) : 0;
  if (!c || at > c->size_B || c->size_B - at < need) return arena_alloc_chunk(ctx, need);
  c->used_B = at + need;
  return (char *)c->data + at;
}

void *uop_ctx_alloc(uop_ctx *ctx, size_t size_B) { return arena_alloc(ctx, size_B, 16); }

/* ------------------------------------------------------------------------------------------------ hashing */

static inline uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

static uint64_t hash_bytes(const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

/* ------------------------------------------------------------------------------------------------ interned blobs */

static const void *blob_intern(uop_ctx *ctx, blob_table *t, const void *data, size_t len_B, size_t extra_B) {
  uint64_t h = hash_bytes(data, len_B);
  if ((t->count + 1) * 4 > t->cap * 3) {
    size_t ncap = t->cap ? t->cap * 2 : 256;
    blob *ns = calloc(ncap, sizeof *ns);
    if (!ns) {
      ctx->oom = true;
      return NULL;
    }
    for (size_t j = 0; j < t->cap; j++) {
      if (!t->slots[j].ptr) continue;
      size_t i = t->slots[j].hash & (ncap - 1);
      while (ns[i].ptr) i = (i + 1) & (ncap - 1);
      ns[i] = t->slots[j];
    }
    free(t->slots);
    t->slots = ns;
    t->cap = ncap;
  }
  size_t mask = t->cap - 1, i = h & mask;
  for (; t->slots[i].ptr; i = (i + 1) & mask) {
    blob *b = &t->slots[i];
    if (b->hash == h && b->len_B == len_B && memcmp(b->ptr, data, len_B) == 0) return b->ptr;
  }
  char *copy = uop_ctx_alloc(ctx, len_B + extra_B);
  if (!copy) return NULL;
  memcpy(copy, data, len_B);
  memset(copy + len_B, 0, extra_B);
  t->slots[i] = (blob){copy, len_B, h};
  t->count++;
  return copy;
}

const char *uop_intern_str(uop_ctx *ctx, const char *s, size_t len) {
  return blob_intern(ctx, &ctx->strs, s ? s : "", s ? len : 0, 1);
}

const int64_t *uop_intern_ints(uop_ctx *ctx, const int64_t *v, uint32_t n) {
  static const int64_t empty[1] = {0};
  if (n == 0) return empty;
  return blob_intern(ctx, &ctx->ints, v, (size_t)n * sizeof *v, 0);
}

/* ------------------------------------------------------------------------------------------------ ctx */

hcq_status uop_ctx_create(uop_ctx **out_ctx) {
  *out_ctx = NULL;
  uop_ctx *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return hcq_status_make(HCQ_CODE_NOMEM, "uop_ctx_create: out of memory");
  visit_get(&ctx->visit);
  if (!table_get(ctx)) {
    uop_ctx_destroy(ctx);
    return hcq_status_make(HCQ_CODE_NOMEM, "uop_ctx_create: out of memory");
  }
  /* process-wide, never 0 (a zeroed node is of no context); it wraps after 2^32 - 1 contexts */
  static uint32_t next_serial;
  do ctx->serial = __atomic_add_fetch(&next_serial, 1, __ATOMIC_RELAXED);
  while (!ctx->serial);
  *out_ctx = ctx;
  return HCQ_OK;
}

void uop_ctx_destroy(uop_ctx *ctx) {
  if (!ctx) return;
  for (arena_chunk *c = ctx->chunks, *next; c; c = next) {
    next = c->next;
    chunk_put(c);
  }
  table_put(ctx);
  free(ctx->strs.slots);
  free(ctx->ints.slots);
  for (int i = 0; i < UOP_CTX_MEMO_SLOTS; i++) memo_free(&ctx->memo[i]);
  visit_put(&ctx->visit);
  free(ctx);
}

size_t uop_ctx_node_count(const uop_ctx *ctx) { return ctx->count; }

uint32_t uop_ctx_serial(const uop_ctx *ctx) { return ctx->serial; }

bool uop_ctx_is_oom(const uop_ctx *ctx) { return !ctx || ctx->oom; }

hcq_status uop_ctx_status(uop_ctx *ctx) {
  if (!ctx) return hcq_status_make(HCQ_CODE_INVALID, "uop: NULL context");
  if (ctx->oom) return hcq_status_make(HCQ_CODE_NOMEM, "uop: out of memory while building nodes");
  return HCQ_OK;
}

/* ------------------------------------------------------------------------------------------------ ops */

static const char *const op_names[UOP_OP_COUNT] = {
#define UOP_X_NAME(name) #name,
    UOP_OPS(UOP_X_NAME)
#undef UOP_X_NAME
};

const char *uop_op_name(uop_op op) {
  if (op == UOP_INDEX_OP) return "INDEX";
  return (unsigned)op < UOP_OP_COUNT ? op_names[op] : "?";
}

bool uop_op_from_name(const char *name, size_t len, uop_op *out_op) {
  for (int i = 0; i < UOP_OP_COUNT; i++) {
    const char *nm = uop_op_name((uop_op)i);
    if (strlen(nm) == len && memcmp(nm, name, len) == 0) {
      *out_op = (uop_op)i;
      return true;
    }
  }
  return false;
}

bool uop_op_is_commutative(uop_op op) {
  switch (op) {
  case UOP_ADD: case UOP_MUL: case UOP_MAX: case UOP_CMPNE: case UOP_CMPEQ: case UOP_XOR: case UOP_OR: case UOP_AND:
    return true;
  default: return false;
  }
}

int uop_op_alu_arity(uop_op op) {
  switch (op) {
  case UOP_EXP2: case UOP_LOG2: case UOP_SIN: case UOP_SQRT: case UOP_RECIP: case UOP_NEG: case UOP_TRUNC: return 1;
  case UOP_ADD: case UOP_MUL: case UOP_SHL: case UOP_SHR: case UOP_IDIV: case UOP_MAX: case UOP_MOD: case UOP_CMPLT:
  case UOP_CMPNE: case UOP_CMPEQ: case UOP_XOR: case UOP_OR: case UOP_AND: case UOP_SUB: case UOP_FDIV: return 2;
  case UOP_WHERE: case UOP_MULACC: return 3;
  default: return 0;
  }
}

bool uop_op_is_alu(uop_op op) { return uop_op_alu_arity(op) != 0; }

static const char *const axis_names[UOP_AXIS_COUNT] = {"global", "warp", "local", "loop", "group_reduce",
                                                       "reduce", "upcast", "unroll", "thread", "outer"};
const char *uop_axis_name(uop_axis a) { return (unsigned)a < UOP_AXIS_COUNT ? axis_names[a] : "?"; }
char uop_axis_letter(uop_axis a) { return (unsigned)a < UOP_AXIS_COUNT ? "gwlLGRurto"[a] : '?'; }

/* ------------------------------------------------------------------------------------------------ args */

uop_arg uop_arg_none(void) { return (uop_arg){.kind = UOP_ARG_NONE}; }
uop_arg uop_arg_int(int64_t v) { return (uop_arg){.kind = UOP_ARG_INT, .i = v}; }
uop_arg uop_arg_float(double f) { return (uop_arg){.kind = UOP_ARG_FLOAT, .f = f}; }
uop_arg uop_arg_str(uop_ctx *ctx, const char *s) {
  return (uop_arg){.kind = UOP_ARG_STR, .str = uop_intern_str(ctx, s, s ? strlen(s) : 0)};
}
uop_arg uop_arg_var(uop_ctx *ctx, const char *name, int64_t min, int64_t max) {
  return (uop_arg){.kind = UOP_ARG_VAR, .str = uop_intern_str(ctx, name, name ? strlen(name) : 0), .i = min, .i2 = max};
}
uop_arg uop_arg_range(int64_t id, uop_axis axis) { return (uop_arg){.kind = UOP_ARG_RANGE, .i = id, .i2 = axis}; }
uop_arg uop_arg_ints(uop_ctx *ctx, const int64_t *v, uint32_t n) {
  return (uop_arg){.kind = UOP_ARG_INTS, .n = n, .ints = uop_intern_ints(ctx, v, n)};
}

static uint64_t dbits(double f) {
  uint64_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

bool uop_arg_eq(const uop_arg *a, const uop_arg *b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
  case UOP_ARG_NONE: return true;
  case UOP_ARG_INT: return a->i == b->i;
  case UOP_ARG_FLOAT: return dbits(a->f) == dbits(b->f); /* bitwise: NaN equals itself, -0 != 0 */
  case UOP_ARG_STR: return a->str == b->str || (a->str && b->str && strcmp(a->str, b->str) == 0);
  case UOP_ARG_VAR:
    return a->i == b->i && a->i2 == b->i2 && (a->str == b->str || (a->str && b->str && strcmp(a->str, b->str) == 0));
  case UOP_ARG_RANGE: return a->i == b->i && a->i2 == b->i2;
  case UOP_ARG_INTS: return a->n == b->n && (a->ints == b->ints || memcmp(a->ints, b->ints, a->n * sizeof(int64_t)) == 0);
  default: return false;
  }
}

/* Canonical form: only the fields of the kind are set, strings and arrays interned (so they compare by pointer). */
static bool arg_canon(uop_ctx *ctx, const uop_arg *in, uop_arg *out) {
  *out = (uop_arg){.kind = in->kind};
  switch (in->kind) {
  case UOP_ARG_NONE: break;
  case UOP_ARG_INT: out->i = in->i; break;
  case UOP_ARG_FLOAT: out->f = in->f; break;
  case UOP_ARG_VAR: out->i = in->i; out->i2 = in->i2; /* fall through */
  case UOP_ARG_STR:
    out->str = uop_intern_str(ctx, in->str, in->str ? strlen(in->str) : 0);
    if (!out->str) return false;
    break;
  case UOP_ARG_RANGE: out->i = in->i; out->i2 = in->i2; break;
  case UOP_ARG_INTS:
    out->n = in->n;
    out->ints = uop_intern_ints(ctx, in->ints, in->n);
    if (!out->ints) return false;
    break;
  default: out->kind = UOP_ARG_NONE; break;
  }
  return true;
}

/* Canonical args set only their kind's fields (the rest are zero), so equal args hash equal; the fields are folded
 * with xor/rotate and mixed once (uop_new finalizes the whole key), keeping the hot path to a few multiplies. */
static inline __attribute__((always_inline)) uint64_t arg_hash(const uop_arg *a) {
  if (a->kind == UOP_ARG_NONE) return 0x51afd7ed558ccdffull;
  uint64_t h = mix(a->kind, (uint64_t)a->i);
  uint64_t rest = (uint64_t)a->i2 ^ (a->kind == UOP_ARG_FLOAT ? dbits(a->f) : 0) ^ (uint64_t)(uintptr_t)a->str ^
                  ((uint64_t)(uintptr_t)a->ints << 7) ^ ((uint64_t)a->n << 40);
  return rest ? mix(h, rest) : h;
}

static inline __attribute__((always_inline)) uint64_t dtype_hash(uop_dtype dt) {
  uint64_t h = (uint64_t)dt.scalar | (uint64_t)dt.addrspace << 8 | (uint64_t)dt.count << 16;
  if (dt.addrspace != UOP_AS_NONE) h = mix(h | (uint64_t)dt.ptr_v << 32, (uint64_t)dt.size);
  return h;
}

/* Canonical dtype: value types carry ptr_v = 1 and size = -1 so that uop_dt_eq and bytewise identity agree. */
static uop_dtype dtype_canon(uop_dtype dt) {
  if (dt.count == 0) dt.count = 1;
  if (dt.addrspace == UOP_AS_NONE) {
    dt.ptr_v = 1;
    dt.size = -1;
  }
  return dt;
}

/* ------------------------------------------------------------------------------------------------ nodes */

/* The intern hash of a node's key in *out; false when a source is NULL (a failed builder upstream). Inlined: it is
 * on the path of every node built. */
static inline __attribute__((always_inline)) bool node_hash(uop_op op, const uop_dtype *dtype, const uop_arg *a,
                                                            const uop *const *src, uint32_t nsrc, uint64_t *out) {
  uint64_t h = mix(dtype_hash(*dtype) << 8 ^ op ^ (uint64_t)nsrc << 56, arg_hash(a));
  for (uint32_t i = 0; i < nsrc; i++) {
    if (!src[i]) return false;
    h = mix(h, (uint64_t)(uintptr_t)src[i]);
  }
  h ^= h >> 33; /* finalize: the multiplies in mix only carry low bits upwards */
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 29;
  *out = h;
  return true;
}

static bool table_grow(uop_ctx *ctx) {
  size_t ncap = ctx->cap * (ctx->cap < INTERN_FAST_GROW_MAX ? 4 : 2);
  intern_slot *ns = calloc(ncap, sizeof *ns);
  uop **nn = ns ? realloc(ctx->nodes, nodes_cap(ncap) * sizeof *nn) : NULL;
  if (!nn) {
    free(ns);
    return false;
  }
  ctx->nodes = nn;
  for (size_t j = 0; j < ctx->cap; j++) { /* the slot keeps only the hash's upper half: hash the node again */
    if (!ctx->slots[j].id1) continue;
    const uop *n = ctx->nodes[ctx->slots[j].id1 - 1];
    uint64_t h = 0;
    node_hash((uop_op)n->op, &n->dtype, &n->arg, n->src, n->nsrc, &h); /* a node's sources are never NULL */
    size_t i = h & (ncap - 1);
    while (ns[i].id1) i = (i + 1) & (ncap - 1);
    ns[i] = ctx->slots[j];
  }
  free(ctx->slots);
  ctx->slots = ns;
  ctx->cap = ncap;
  return true;
}

/* uop_new with dtype and arg already canonical (taken from a node): find or make the node. */
static const uop *new_canon(uop_ctx *ctx, uop_op op, const uop_dtype *dtp, const uop_arg *ap, const uop *const *src,
                            uint32_t nsrc) {
  const uop_dtype dtype = *dtp;
  const uop_arg a = *ap;
  uint64_t h;
  if (!node_hash(op, &dtype, &a, src, nsrc, &h)) return NULL; /* propagate NULL (oom is already sticky) */
  const uint32_t tag = (uint32_t)(h >> 32);
  size_t mask = ctx->cap - 1, i = h & mask;
  for (; ctx->slots[i].id1; i = (i + 1) & mask) {
    if (ctx->slots[i].tag != tag) continue;
    const uop *n = ctx->nodes[ctx->slots[i].id1 - 1];
    /* both dtypes are canonical, so field equality is uop_dt_eq plus ptr_v */
    if (n->op != op || n->nsrc != nsrc || n->dtype.scalar != dtype.scalar || n->dtype.count != dtype.count ||
        n->dtype.addrspace != dtype.addrspace || n->dtype.ptr_v != dtype.ptr_v || n->dtype.size != dtype.size)
      continue;
    if (n->arg.kind != a.kind || n->arg.i != a.i || !(a.kind == UOP_ARG_NONE || a.kind == UOP_ARG_INT
                                                      || uop_arg_eq(&n->arg, &a)))
      continue;
    uint32_t k = 0;
    while (k < nsrc && n->src[k] == src[k]) k++;
    if (k != nsrc) continue;
    return n;
  }
  if (ctx->count >= UINT32_MAX - 1) {
    ctx->oom = true;
    return NULL;
  }
  _Static_assert(_Alignof(uop) <= 8, "nodes are packed at 8-byte boundaries");
  uop *n = arena_alloc(ctx, sizeof *n + nsrc * sizeof *src, 8);
  if (!n) return NULL;
  const uop **s = (const uop **)(n + 1);
  for (uint32_t i = 0; i < nsrc; i++) s[i] = src[i];
  n->op = (uint8_t)op;
  n->dtype = dtype;
  n->arg = a;
  n->nsrc = nsrc;
  n->src = s;
  n->id = (uint32_t)ctx->count;
  n->ctx_serial_ = ctx->serial;
  n->bounds_done = 0; /* the bounds fields are written before bounds_done is set (bounds.c) */
  ctx->slots[i] = (intern_slot){(uint32_t)ctx->count + 1, tag};
  ctx->nodes[ctx->count++] = n;
  /* load factor at most 1/2: linear probing stays short for misses, the common case when rules build nodes */
  if (ctx->count * 2 > ctx->cap && !table_grow(ctx)) ctx->oom = true; /* node stays valid; later calls fail */
  return n;
}

const uop *uop_new(uop_ctx *ctx, uop_op op, uop_dtype dtype, const uop *const *src, uint32_t nsrc, uop_arg arg) {
  if (!ctx || ctx->oom) return NULL;
  if ((unsigned)op >= UOP_OP_COUNT) return NULL;
  uop_arg a;
  if (!arg_canon(ctx, &arg, &a)) return NULL;
  dtype = dtype_canon(dtype);
  return new_canon(ctx, op, &dtype, &a, src, nsrc);
}

/* ------------------------------------------------------------------------------------------------ builders */

const uop *uop_const_int(uop_ctx *ctx, uop_dtype dt, int64_t v) {
  if (ctx && !ctx->oom && dt.addrspace == UOP_AS_NONE && dt.count <= 1) {
    const uop **slot = NULL;
    if (dt.scalar == UOP_INDEX && v >= SMALL_CONST_MIN && v <= SMALL_CONST_MAX)
      slot = &ctx->small_index[v - SMALL_CONST_MIN];
    else if (dt.scalar == UOP_BOOL && (v == 0 || v == 1))
      slot = &ctx->bools[v];
    if (slot) {
      if (!*slot) *slot = uop_new(ctx, UOP_CONST, uop_dt((uop_scalar)dt.scalar), NULL, 0, uop_arg_int(v));
      return *slot;
    }
    if (dt.scalar == UOP_INDEX) {
      const uop **e = &ctx->index_cache[((uint64_t)v * 0x9E3779B97F4A7C15ull) >> 56];
      if (!*e || (*e)->arg.i != v) *e = uop_new(ctx, UOP_CONST, uop_dt(UOP_INDEX), NULL, 0, uop_arg_int(v));
      return *e;
    }
  }
  if (uop_dt_is_float(dt)) return uop_const_float(ctx, dt, (double)v);
  return uop_new(ctx, UOP_CONST, dt, NULL, 0, uop_arg_int(uop_wrap_to(dt, v)));
}

const uop *uop_const_float(uop_ctx *ctx, uop_dtype dt, double v) {
  if (!uop_dt_is_float(dt)) {
    /* float value for an int dtype: C conversion semantics for in-range values, else 0 */
    int64_t iv = (isfinite(v) && v > -9.2e18 && v < 9.2e18) ? (int64_t)v : 0;
    return uop_const_int(ctx, dt, iv);
  }
  if (dt.scalar == UOP_FLOAT32) v = (double)(float)v;
  return uop_new(ctx, UOP_CONST, dt, NULL, 0, uop_arg_float(v));
}

const uop *uop_const_bool(uop_ctx *ctx, bool v) { return uop_const_int(ctx, uop_dt(UOP_BOOL), v); }
const uop *uop_index_const(uop_ctx *ctx, int64_t v) {
  if (ctx && v >= SMALL_CONST_MIN && v <= SMALL_CONST_MAX && ctx->small_index[v - SMALL_CONST_MIN] && !ctx->oom)
    return ctx->small_index[v - SMALL_CONST_MIN];
  return uop_const_int(ctx, uop_dt(UOP_INDEX), v);
}

const uop *uop_var(uop_ctx *ctx, const char *name, int64_t min, int64_t max, uop_dtype dt) {
  return uop_new(ctx, UOP_DEFINE_VAR, dt, NULL, 0, uop_arg_var(ctx, name, min, max));
}

const uop *uop_range(uop_ctx *ctx, const uop *end, int64_t id, uop_axis axis) {
  return uop_new(ctx, UOP_RANGE, uop_dt(UOP_INDEX), &end, 1, uop_arg_range(id, axis));
}

const uop *uop_special(uop_ctx *ctx, const char *name, const uop *end) {
  return uop_new(ctx, UOP_SPECIAL, uop_dt(UOP_INDEX), &end, 1, uop_arg_str(ctx, name));
}

const uop *uop_alu1(uop_ctx *ctx, uop_op op, const uop *a) {
  if (!a) return NULL;
  return uop_new(ctx, op, a->dtype, &a, 1, uop_arg_none());
}

const uop *uop_alu2(uop_ctx *ctx, uop_op op, const uop *a, const uop *b) {
  if (!a || !b) return NULL;
  const uop *s[2] = {a, b};
  uop_dtype dt = a->dtype;
  if (op == UOP_CMPLT || op == UOP_CMPNE || op == UOP_CMPEQ) dt = uop_dt_vec(uop_dt(UOP_BOOL), a->dtype.count);
  return uop_new(ctx, op, dt, s, 2, uop_arg_none());
}

const uop *uop_where(uop_ctx *ctx, const uop *cond, const uop *a, const uop *b) {
  if (!cond || !a || !b) return NULL;
  const uop *s[3] = {cond, a, b};
  return uop_new(ctx, UOP_WHERE, a->dtype, s, 3, uop_arg_none());
}

const uop *uop_cast(uop_ctx *ctx, uop_dtype dt, const uop *a) {
  if (!a) return NULL;
  return uop_new(ctx, UOP_CAST, dt, &a, 1, uop_arg_none());
}

const uop *uop_replace_src(uop_ctx *ctx, const uop *n, const uop *const *src, uint32_t nsrc) {
  if (!n || !ctx || ctx->oom) return NULL;
  /* a node's dtype and arg are canonical; an arg holding a string or array is interned again (n may be of another
   * context, whose copy would not be this one's) */
  if (n->arg.kind == UOP_ARG_STR || n->arg.kind == UOP_ARG_VAR || n->arg.kind == UOP_ARG_INTS)
    return uop_new(ctx, (uop_op)n->op, n->dtype, src, nsrc, n->arg);
  return new_canon(ctx, (uop_op)n->op, &n->dtype, &n->arg, src, nsrc);
}

bool uop_const_value(const uop *n, int64_t *out_v) {
  if (!n || n->op != UOP_CONST || n->arg.kind != UOP_ARG_INT) return false;
  *out_v = n->arg.i;
  return true;
}
