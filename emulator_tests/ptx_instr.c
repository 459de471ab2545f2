/* PTX instructions -> decoded ptx_ins (ptx_internal.h): the opcode table with the modifiers each accepts, operand
 * parsing (registers, immediates, addresses, vectors) and the operand type rules ptxas enforces. Semantics of what
 * is decoded here live in ptx_exec.c. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "emulator_tests/ptx_parse_internal.h"

/* ------------------------------------------------------------------------------------------------ modifiers */

enum {
  M_TYPE = 1 << 0, M_FRND = 1 << 1, M_IRND = 1 << 2, M_SAT = 1 << 3, M_FTZ = 1 << 4, M_APPROX = 1 << 5,
  M_FULL = 1 << 6, M_MUL = 1 << 7, M_CMP = 1 << 8, M_BOOL = 1 << 9, M_SPACE = 1 << 10, M_VEC = 1 << 11,
  M_CACHE = 1 << 12, M_TO = 1 << 13, M_UNI = 1 << 14, M_SYNC = 1 << 15, M_NAN = 1 << 16, M_ALIGNED = 1 << 17,
};

typedef struct opdef {
  const char *name;
  ptx_op op;
  unsigned allowed;
} opdef;

static const opdef OPS[] = {
    {"mov", PO_MOV, M_TYPE},
    {"ld", PO_LD, M_TYPE | M_SPACE | M_VEC | M_CACHE},
    {"st", PO_ST, M_TYPE | M_SPACE | M_VEC | M_CACHE},
    {"cvta", PO_CVTA, M_TYPE | M_SPACE | M_TO},
    {"cvt", PO_CVT, M_TYPE | M_FRND | M_IRND | M_SAT | M_FTZ},
    {"add", PO_ADD, M_TYPE | M_FRND | M_SAT | M_FTZ},
    {"sub", PO_SUB, M_TYPE | M_FRND | M_SAT | M_FTZ},
    {"mul", PO_MUL, M_TYPE | M_FRND | M_MUL | M_SAT | M_FTZ},
    {"mad", PO_MAD, M_TYPE | M_FRND | M_MUL | M_SAT | M_FTZ},
    {"fma", PO_FMA, M_TYPE | M_FRND | M_SAT | M_FTZ},
    {"div", PO_DIV, M_TYPE | M_FRND | M_FULL | M_APPROX | M_FTZ},
    {"rem", PO_REM, M_TYPE},
    {"neg", PO_NEG, M_TYPE | M_FTZ},
    {"abs", PO_ABS, M_TYPE | M_FTZ},
    {"not", PO_NOT, M_TYPE},
    {"and", PO_AND, M_TYPE},
    {"or", PO_OR, M_TYPE},
    {"xor", PO_XOR, M_TYPE},
    {"shl", PO_SHL, M_TYPE},
    {"shr", PO_SHR, M_TYPE},
    {"min", PO_MIN, M_TYPE | M_FTZ | M_NAN},
    {"max", PO_MAX, M_TYPE | M_FTZ | M_NAN},
    {"setp", PO_SETP, M_TYPE | M_CMP | M_BOOL | M_FTZ},
    {"selp", PO_SELP, M_TYPE},
    {"sqrt", PO_SQRT, M_TYPE | M_FRND | M_APPROX | M_FTZ},
    {"rcp", PO_RCP, M_TYPE | M_FRND | M_APPROX | M_FTZ},
    {"ex2", PO_EX2, M_TYPE | M_APPROX | M_FTZ},
    {"lg2", PO_LG2, M_TYPE | M_APPROX | M_FTZ},
    {"sin", PO_SIN, M_TYPE | M_APPROX | M_FTZ},
    {"cos", PO_COS, M_TYPE | M_APPROX | M_FTZ},
    {"bra", PO_BRA, M_UNI},
    {"bar", PO_BAR, M_SYNC},
    {"barrier", PO_BAR, M_SYNC | M_ALIGNED},
    {"ret", PO_RET, 0},
    {"exit", PO_RET, 0},
};

static const char *const CMPS[] = {NULL,  "eq",  "ne",  "lt",  "le",  "gt",  "ge",  "lo",  "ls", "hi",
                                   "hs",  "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
static const char *const RNDS[] = {NULL, "rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi"};

typedef struct mods {
  ptx_type types[2];
  int ntypes;
  ptx_rnd rnd;
  ptx_mulmode mul;
  ptx_cmp cmp;
  ptx_boolop boolop;
  ptx_space space;
  int vec;
  unsigned flags;
  bool to, full, sync;
} mods;

static bool parse_mods(parser *p, const opdef *d, char *mstr, mods *m) {
  memset(m, 0, sizeof *m);
  m->vec = 1;
  for (char *tok = mstr; tok && *tok;) {
    char *dot = strchr(tok, '.');
    if (dot) *dot = 0;
    size_t n = strlen(tok);
    ptx_type t = ptx_type_named(tok, n);
    unsigned a = d->allowed;
    bool ok = true;
    if (t != PT_NONE && (a & M_TYPE) && m->ntypes < 2) m->types[m->ntypes++] = t;
    else if ((a & M_CMP) && !m->cmp && (({
               int k = 0;
               for (int i = 1; i < (int)(sizeof CMPS / sizeof *CMPS); i++)
                 if (!strcmp(tok, CMPS[i])) k = i;
               m->cmp = (ptx_cmp)k;
               k;
             }))) {
    } else if ((a & M_BOOL) && (!strcmp(tok, "and") || !strcmp(tok, "or") || !strcmp(tok, "xor")))
      m->boolop = tok[0] == 'a' ? PB_AND : tok[0] == 'o' ? PB_OR : PB_XOR;
    else if ((a & M_MUL) && (!strcmp(tok, "lo") || !strcmp(tok, "hi") || !strcmp(tok, "wide")))
      m->mul = tok[0] == 'l' ? PM_LO : tok[0] == 'h' ? PM_HI : PM_WIDE;
    else if ((a & (M_FRND | M_IRND)) && !m->rnd && (({
               int k = 0;
               for (int i = 1; i < (int)(sizeof RNDS / sizeof *RNDS); i++)
                 if (!strcmp(tok, RNDS[i])) k = i;
               if (k >= PR_RNI && !(a & M_IRND)) k = 0;
               if (k && k < PR_RNI && !(a & M_FRND)) k = 0;
               m->rnd = (ptx_rnd)k;
               k;
             }))) {
    } else if ((a & M_SAT) && !strcmp(tok, "sat")) m->flags |= PF_SAT;
    else if ((a & M_FTZ) && !strcmp(tok, "ftz")) m->flags |= PF_FTZ;
    else if ((a & M_APPROX) && !strcmp(tok, "approx")) m->flags |= PF_APPROX;
    else if ((a & M_FULL) && !strcmp(tok, "full")) m->full = true;
    else if ((a & M_NAN) && !strcmp(tok, "NaN")) m->flags |= PF_NAN;
    else if ((a & M_SPACE) && !strcmp(tok, "global")) m->space = PS_GLOBAL;
    else if ((a & M_SPACE) && !strcmp(tok, "shared")) m->space = PS_SHARED;
    else if ((a & M_SPACE) && !strcmp(tok, "local") && d->op != PO_CVTA) m->space = PS_LOCAL;
    else if ((a & M_SPACE) && !strcmp(tok, "param") && d->op == PO_LD) m->space = PS_PARAM;
    else if ((a & M_VEC) && (!strcmp(tok, "v2") || !strcmp(tok, "v4"))) m->vec = tok[1] - '0';
    else if ((a & M_CACHE) && (!strcmp(tok, "ca") || !strcmp(tok, "cg") || !strcmp(tok, "cs") || !strcmp(tok, "lu") ||
                               !strcmp(tok, "cv") || !strcmp(tok, "wb") || !strcmp(tok, "wt") || !strcmp(tok, "nc") ||
                               !strcmp(tok, "volatile"))) {
      /* cache operators and .volatile change nothing for one thread's view here */
    } else if ((a & M_TO) && !strcmp(tok, "to")) m->to = true;
    else if ((a & M_UNI) && !strcmp(tok, "uni")) {
    } else if ((a & M_SYNC) && !strcmp(tok, "sync")) m->sync = true;
    else if ((a & M_ALIGNED) && !strcmp(tok, "aligned")) {
    } else ok = false;
    if (!ok) {
      ptx_perr(p, "unknown or unsupported modifier '.%s' of %s", tok, d->name);
      return false;
    }
    tok = dot ? dot + 1 : NULL;
  }
  return true;
}

/* ------------------------------------------------------------------------------------------------ instructions */

static bool is_int(ptx_type t) { return t != PT_NONE && t != PT_PRED && !ptx_type_float(t); }
static bool is_bits(ptx_type t) { return t == PT_B8 || t == PT_B16 || t == PT_B32 || t == PT_B64; }

static ptx_type wide_of(ptx_type t) {
  switch (t) {
    case PT_S16: return PT_S32;
    case PT_U16: return PT_U32;
    case PT_S32: return PT_S64;
    case PT_U32: return PT_U64;
    default: return PT_NONE;
  }
}

/* An address operand "[base+off]" / "[sym]" / "[sym+off]" into ins (s[0], off, param). */
static bool address(parser *p, char *s, ptx_ins *ins) {
  size_t n = strlen(s);
  if (n < 3 || s[0] != '[' || s[n - 1] != ']') {
    ptx_perr(p, "expected an address [..], got '%s'", s);
    return false;
  }
  s[n - 1] = 0;
  char *in = s + 1;
  while (isspace((unsigned char)*in)) in++;
  if (!*in) {
    ptx_perr(p, "empty address []");
    return false;
  }
  char *plus = NULL;
  for (char *c = in + 1; *c; c++)
    if (*c == '+' || *c == '-') {
      plus = c;
      break;
    }
  int64_t off = 0;
  if (plus) {
    char *num = plus + (plus[0] == '+' ? 1 : 0);
    while (isspace((unsigned char)*num)) num++;
    char *end;
    errno = 0;
    off = strtoll(num, &end, 0);
    while (isspace((unsigned char)*end)) end++;
    if (*end || errno || end == num) {
      ptx_perr(p, "bad address offset in '[%s]'", in);
      return false;
    }
    *plus = 0;
  }
  char *e = in + strlen(in);
  while (e > in && isspace((unsigned char)e[-1])) *--e = 0;
  ins->s[0] = -1;
  ins->param = -1;
  if (in[0] == '%') {
    if ((ins->s[0] = ptx_reg_row(p, in, NULL)) < 0) return false;
    if (ins->space == PS_PARAM) {
      ptx_perr(p, "parameters are read through their names, not a register");
      return false;
    }
  } else if (isdigit((unsigned char)in[0])) {
    if (plus) {
      ptx_perr(p, "bad address '[%s]'", in);
      return false;
    }
    char *end;
    off = (int64_t)strtoull(in, &end, 0);
    if (*end) {
      ptx_perr(p, "bad address '[%s]'", in);
      return false;
    }
  } else if (ins->space == PS_PARAM) {
    const ptx_entry *en = p->e;
    size_t i;
    for (i = 0; i < en->info.nparams; i++)
      if (!strcmp(en->params[i].name, in)) break;
    if (i == en->info.nparams) {
      ptx_perr(p, "unknown parameter '%s'", in);
      return false;
    }
    ins->param = (int32_t)i;
  } else if (ins->space == PS_SHARED) {
    const symdecl *sh = ptx_find_sym(p->shared, p->nshared, in, strlen(in));
    if (!sh) {
      ptx_perr(p, "unknown shared variable '%s'", in);
      return false;
    }
    off += sh->offset;
  } else if (ins->space == PS_LOCAL) {
    const symdecl *lo = ptx_find_sym(p->locals, p->nlocals, in, strlen(in));
    if (!lo) {
      ptx_perr(p, "unknown local variable '%s'", in);
      return false;
    }
    off += lo->offset;
  } else {
    ptx_perr(p, "unknown address symbol '%s' (no .global/.const variables here)", in);
    return false;
  }
  ins->off = off;
  return true;
}

/* Operands of a vector "{%a, %b}" (or one register when vec == 1) into rows. */
static bool vec_operands(parser *p, char *s, int vec, int32_t *rows, bool is_dest, ptx_type t) {
  char *items[4];
  int n;
  if (vec == 1) {
    items[0] = s;
    n = 1;
  } else {
    size_t len = strlen(s);
    if (len < 2 || s[0] != '{' || s[len - 1] != '}') {
      ptx_perr(p, "expected a vector {..} of %d registers", vec);
      return false;
    }
    s[len - 1] = 0;
    n = ptx_split_commas(s + 1, items, 4);
    if (n != vec) {
      ptx_perr(p, "expected %d vector elements", vec);
      return false;
    }
  }
  for (int i = 0; i < n; i++)
    if ((rows[i] = is_dest ? ptx_dest(p, items[i]) : ptx_operand(p, items[i], t)) < 0) return false;
  return true;
}

/* PTX ISA "Operand Type Information": a .bN register or instruction type goes with any type of N bits, a
 * float only with the same float, .uN/.sN with each other; "Operand Size Exceeding Instruction-Type Size": ld, st and cvt also take registers wider than an
 * integer or bit type. Like ptxas ("Arguments mismatch"), anything else is refused. */
static bool compat(ptx_type r, ptx_type t, bool wider_ok) {
  if (r == PT_PRED || t == PT_PRED) return r == t;
  int rb = ptx_type_bits(r), tb = ptx_type_bits(t);
  if (rb != tb) return wider_ok && rb > tb && !ptx_type_float(r) && !ptx_type_float(t);
  if (is_bits(r) || is_bits(t)) return true;
  if (ptx_type_float(r) || ptx_type_float(t)) return r == t;
  return true; /* .uN and .sN */
}

static bool check_one(parser *p, int32_t row, ptx_type t, bool wider_ok, const char *what) {
  if (row < 0 || p->e->rows[row].kind == PRK_CONST) return true;
  ptx_type r = (ptx_type)p->e->rows[row].type;
  if (compat(r, t, wider_ok)) return true;
  ptx_perr(p, "%s register of type .%s where the instruction needs .%s", what, ptx_type_name(r), ptx_type_name(t));
  return false;
}

static bool check_operands(parser *p, const ptx_ins *in, const opdef *d) {
  ptx_type t = (ptx_type)in->type, st = (ptx_type)in->stype;
  ptx_type wt = in->mul == PM_WIDE ? wide_of(t) : t;
  bool io = d->op == PO_LD || d->op == PO_ST || d->op == PO_CVT;
  for (int i = 0; i < in->nd; i++)
    if (!check_one(p, in->d[i], d->op == PO_SETP ? PT_PRED : wt, io, "destination")) return false;
  switch (d->op) {
    case PO_LD: case PO_ST:
      if (in->s[0] >= 0) {
        ptx_type r = (ptx_type)p->e->rows[in->s[0]].type;
        if (ptx_type_bits(r) != 64 || ptx_type_float(r)) {
          ptx_perr(p, "address register of type .%s (.address_size 64 needs a 64-bit integer register)", ptx_type_name(r));
          return false;
        }
      }
      for (int i = 1; i < in->ns; i++)
        if (!check_one(p, in->s[i], t, true, "source")) return false;
      return true;
    case PO_CVT: return check_one(p, in->s[0], st, true, "source");
    case PO_SHL: case PO_SHR:
      return check_one(p, in->s[0], t, false, "source") && check_one(p, in->s[1], PT_U32, false, "shift amount");
    case PO_SELP: case PO_SETP:
      return check_one(p, in->s[0], t, false, "source") && check_one(p, in->s[1], t, false, "source") &&
             check_one(p, in->s[2], PT_PRED, false, "predicate");
    case PO_BAR: return check_one(p, in->s[0], PT_U32, false, "barrier") && check_one(p, in->s[1], PT_U32, false, "count");
    default:
      for (int i = 0; i < in->ns; i++)
        if (!check_one(p, in->s[i], i == 2 ? wt : t, false, "source")) return false;
      return true;
  }
}

static bool want_args(parser *p, int got, int want, const char *name) {
  if (got != want) ptx_perr(p, "%s takes %d operands, got %d", name, want, got);
  return got == want;
}

void ptx_parse_instruction(parser *p, char *text) {
  ptx_ins ins;
  memset(&ins, 0, sizeof ins);
  ins.guard = -1;
  ins.param = -1;
  for (int i = 0; i < 4; i++) ins.d[i] = ins.s[i] = -1;
  ins.line = p->sline;
  ins.text = p->stext;
  char *c = text;
  if (*c == '@') {
    c++;
    if (*c == '!') {
      ins.flags |= PF_GUARD_NEG;
      c++;
    }
    char *sp = strchr(c, ' ');
    if (!sp) {
      ptx_perr(p, "a guard without an instruction");
      return;
    }
    *sp = 0;
    ptx_type gt;
    if ((ins.guard = ptx_reg_row(p, c, &gt)) < 0) return;
    if (gt != PT_PRED) {
      ptx_perr(p, "guard %s is not a predicate", c);
      return;
    }
    c = sp + 1;
  }
  char *sp = strchr(c, ' ');
  char *args = sp ? sp + 1 : c + strlen(c);
  if (sp) *sp = 0;
  char *dot = strchr(c, '.');
  if (dot) *dot = 0;
  const opdef *d = NULL;
  for (size_t i = 0; i < sizeof OPS / sizeof *OPS; i++)
    if (!strcmp(OPS[i].name, c)) d = &OPS[i];
  if (!d) {
    ptx_perr(p, "unknown or unsupported instruction '%s'", c);
    return;
  }
  mods m;
  if (!parse_mods(p, d, dot ? dot + 1 : NULL, &m)) return;
  char *a[8];
  int na = ptx_split_commas(args, a, 8);
  if (na < 0) {
    ptx_perr(p, "too many operands");
    return;
  }
  ins.op = (uint8_t)d->op;
  ins.type = m.ntypes ? (uint8_t)m.types[0] : PT_NONE;
  ins.rnd = (uint8_t)m.rnd;
  ins.mul = (uint8_t)m.mul;
  ins.cmp = (uint8_t)m.cmp;
  ins.boolop = (uint8_t)m.boolop;
  ins.space = (uint8_t)m.space;
  ins.vec = (uint8_t)m.vec;
  ins.flags |= (uint8_t)m.flags;
  ptx_type t = (ptx_type)ins.type;
  int want_types = d->op == PO_CVT ? 2 : (d->op == PO_BRA || d->op == PO_BAR || d->op == PO_RET) ? 0 : 1;
  if (m.ntypes != want_types) {
    ptx_perr(p, "%s needs %d type modifier%s", d->name, want_types, want_types == 1 ? "" : "s");
    return;
  }
  bool fl = ptx_type_float(t);
  if ((m.flags & PF_FTZ) && t != PT_F32 && !(d->op == PO_CVT && (m.types[0] == PT_F32 || m.types[1] == PT_F32))) {
    ptx_perr(p, ".ftz applies to .f32 only");
    return;
  }
  switch (d->op) {
    case PO_MOV:
      if (!want_args(p, na, 2, "mov")) return;
      ins.d[0] = ptx_dest(p, a[0]);
      ins.s[0] = ptx_operand(p, a[1], t);
      ins.nd = ins.ns = 1;
      break;
    case PO_LD: case PO_ST: {
      if (!want_args(p, na, 2, d->name)) return;
      if (!m.space) {
        ptx_perr(p, "%s needs a state space (.global, .shared, .local%s); generic addressing is not supported", d->name,
             d->op == PO_LD ? ", .param" : "");
        return;
      }
      if (t == PT_PRED || (m.vec > 1 && m.space == PS_PARAM)) {
        ptx_perr(p, "bad type or vector for %s", d->name);
        return;
      }
      if (m.vec * ptx_type_bits(t) > 128) {
        ptx_perr(p, "vector of %d x %d bits exceeds 128 bits", m.vec, ptx_type_bits(t));
        return;
      }
      ins.stype = ins.type;
      char *addr = d->op == PO_LD ? a[1] : a[0], *regs = d->op == PO_LD ? a[0] : a[1];
      if (!address(p, addr, &ins)) return;
      if (d->op == PO_LD) {
        if (!vec_operands(p, regs, m.vec, ins.d, true, t)) return;
        ins.nd = (uint8_t)m.vec;
      } else {
        if (!vec_operands(p, regs, m.vec, ins.s + 1, false, t)) return;
        ins.ns = (uint8_t)(1 + m.vec);
      }
      break;
    }
    case PO_CVTA:
      if (!want_args(p, na, 2, "cvta")) return;
      if (m.space != PS_GLOBAL || (t != PT_U64 && t != PT_U32)) {
        ptx_perr(p, "only cvta(.to).global.u64 is supported");
        return;
      }
      ins.d[0] = ptx_dest(p, a[0]);
      ins.s[0] = ptx_operand(p, a[1], t);
      ins.nd = ins.ns = 1;
      break;
    case PO_CVT: {
      if (!want_args(p, na, 2, "cvt")) return;
      ptx_type dt = m.types[0], st = m.types[1];
      ins.stype = (uint8_t)st;
      if (dt == PT_PRED || st == PT_PRED || is_bits(dt) || is_bits(st)) {
        ptx_perr(p, "cvt between .%s and .%s", ptx_type_name(dt), ptx_type_name(st));
        return;
      }
      bool df = ptx_type_float(dt), sf = ptx_type_float(st);
      /* PTX ISA "cvt": int->float and float narrowing need a float rounding; float->int an integer rounding;
       * float widening none; float->same float an integer rounding or none */
      bool irnd = m.rnd >= PR_RNI, frnd = m.rnd && m.rnd < PR_RNI;
      const char *why = NULL;
      if (!df && sf && !irnd) why = "float-to-integer cvt needs .rni/.rzi/.rmi/.rpi";
      else if (df && !sf && !frnd) why = "integer-to-float cvt needs .rn/.rz/.rm/.rp";
      else if (df && sf && ptx_type_bits(dt) < ptx_type_bits(st) && !frnd) why = "narrowing cvt needs .rn/.rz/.rm/.rp";
      else if (df && sf && ptx_type_bits(dt) > ptx_type_bits(st) && m.rnd) why = "widening cvt takes no rounding";
      else if (df && sf && dt == st && frnd) why = "float-to-same-float cvt takes an integer rounding";
      else if (!df && !sf && m.rnd) why = "integer cvt takes no rounding";
      if (why) {
        ptx_perr(p, "%s", why);
        return;
      }
      ins.d[0] = ptx_dest(p, a[0]);
      ins.s[0] = ptx_operand(p, a[1], st);
      ins.nd = ins.ns = 1;
      break;
    }
    case PO_ADD: case PO_SUB: case PO_MUL: case PO_MAD: case PO_FMA: case PO_DIV: case PO_REM: case PO_AND:
    case PO_OR: case PO_XOR: case PO_MIN: case PO_MAX: case PO_SHL: case PO_SHR: {
      int nsrc = d->op == PO_MAD || d->op == PO_FMA ? 3 : 2;
      if (!want_args(p, na, nsrc + 1, d->name)) return;
      bool logic = d->op == PO_AND || d->op == PO_OR || d->op == PO_XOR;
      bool shift = d->op == PO_SHL || d->op == PO_SHR;
      bool narrow = ptx_type_bits(t) < 16;
      bool bad = logic ? !(t == PT_PRED || (is_bits(t) && !narrow))
                 : d->op == PO_SHL ? !(is_bits(t) && !narrow)
                 : d->op == PO_SHR ? !(is_int(t) && !narrow)
                                   : t == PT_PRED || is_bits(t) || narrow;
      if (bad) {
        ptx_perr(p, "%s does not take .%s", d->name, ptx_type_name(t));
        return;
      }
      if (t == PT_F16 || t == PT_BF16) {
        ptx_perr(p, "%s.%s is not supported (the renderer computes half floats in f32)", d->name, ptx_type_name(t));
        return;
      }
      if (d->op == PO_FMA && !fl) {
        ptx_perr(p, "fma needs a float type");
        return;
      }
      if ((d->op == PO_REM && fl) || (fl && m.mul)) {
        ptx_perr(p, "%s.%s is not an instruction", d->name, ptx_type_name(t));
        return;
      }
      if (!fl && (m.rnd || (m.flags & PF_FTZ))) {
        ptx_perr(p, "a float rounding or .ftz on integer %s", d->name);
        return;
      }
      if (!fl && is_int(t) && (d->op == PO_MUL || d->op == PO_MAD) && !m.mul) {
        ptx_perr(p, "integer %s needs .lo, .hi or .wide", d->name);
        return;
      }
      if (m.mul == PM_WIDE && wide_of(t) == PT_NONE) {
        ptx_perr(p, "%s.wide needs a 16- or 32-bit integer type", d->name);
        return;
      }
      if (fl && (d->op == PO_FMA || d->op == PO_MAD) && !m.rnd) {
        ptx_perr(p, "%s.%s needs a rounding modifier", d->name, ptx_type_name(t));
        return;
      }
      if (fl && d->op == PO_DIV && !m.rnd && !m.full && !(m.flags & PF_APPROX)) {
        ptx_perr(p, "div.%s needs .approx, .full or a rounding modifier", ptx_type_name(t));
        return;
      }
      if ((m.flags & PF_SAT) && !(t == PT_F32 || t == PT_F64 || (t == PT_S32 && (d->op == PO_ADD || d->op == PO_SUB)))) {
        ptx_perr(p, ".sat is not supported on %s.%s", d->name, ptx_type_name(t));
        return;
      }
      ptx_type wt = m.mul == PM_WIDE ? wide_of(t) : t;
      ins.d[0] = ptx_dest(p, a[0]);
      ins.s[0] = ptx_operand(p, a[1], t);
      ins.s[1] = ptx_operand(p, a[2], shift ? PT_U32 : t);
      if (nsrc == 3) ins.s[2] = ptx_operand(p, a[3], wt);
      ins.nd = 1;
      ins.ns = (uint8_t)nsrc;
      break;
    }
    case PO_NEG: case PO_ABS: case PO_NOT: case PO_SQRT: case PO_RCP: case PO_EX2: case PO_LG2: case PO_SIN:
    case PO_COS: {
      if (!want_args(p, na, 2, d->name)) return;
      bool tr = d->op >= PO_SQRT;
      if (d->op == PO_NOT ? !(is_bits(t) || t == PT_PRED) && t != PT_B8 : tr ? !(t == PT_F32 || t == PT_F64)
                                                                       : !(fl || ptx_type_signed(t))) {
        ptx_perr(p, "%s does not take .%s", d->name, ptx_type_name(t));
        return;
      }
      if (d->op >= PO_EX2 && (!(m.flags & PF_APPROX) || t != PT_F32)) {
        ptx_perr(p, "%s is supported as %s.approx(.ftz).f32 only", d->name, d->name);
        return;
      }
      if ((d->op == PO_SQRT || d->op == PO_RCP) && !m.rnd && !(m.flags & PF_APPROX)) {
        ptx_perr(p, "%s needs .approx or a rounding modifier", d->name);
        return;
      }
      if (t == PT_F16 || t == PT_BF16 || t == PT_B8) {
        ptx_perr(p, "%s.%s is not supported", d->name, ptx_type_name(t));
        return;
      }
      ins.d[0] = ptx_dest(p, a[0]);
      ins.s[0] = ptx_operand(p, a[1], t);
      ins.nd = ins.ns = 1;
      break;
    }
    case PO_SETP: {
      if (na != 3 && na != 4) {
        ptx_perr(p, "setp takes 3 or 4 operands");
        return;
      }
      if (!m.cmp || t == PT_PRED || t == PT_F16 || t == PT_BF16 || t == PT_B8 || t == PT_U8 || t == PT_S8) {
        ptx_perr(p, "setp needs a comparison and a numeric type");
        return;
      }
      bool fcmp = m.cmp >= PC_EQU || fl;
      if ((fcmp && !fl) || (is_bits(t) && m.cmp != PC_EQ && m.cmp != PC_NE) ||
          (fl && m.cmp >= PC_LO && m.cmp <= PC_HS)) {
        ptx_perr(p, "comparison .%s does not apply to .%s", CMPS[m.cmp], ptx_type_name(t));
        return;
      }
      if ((na == 4) != (m.boolop != PB_NONE)) {
        ptx_perr(p, "setp with .and/.or/.xor takes a fourth (predicate) operand");
        return;
      }
      char *bar = strchr(a[0], '|');
      if (bar) {
        *bar = 0;
        ins.d[1] = ptx_dest(p, bar + 1);
        ins.nd = 2;
      } else {
        ins.nd = 1;
      }
      ins.d[0] = ptx_dest(p, a[0]);
      ins.s[0] = ptx_operand(p, a[1], t);
      ins.s[1] = ptx_operand(p, a[2], t);
      ins.ns = 2;
      if (na == 4) {
        const char *c3 = a[3];
        if (c3[0] == '!') { /* a negated predicate operand */
          ptx_perr(p, "negated predicate operands are not supported");
          return;
        }
        ins.s[2] = ptx_operand(p, c3, PT_PRED);
        ins.ns = 3;
      }
      break;
    }
    case PO_SELP:
      if (!want_args(p, na, 4, "selp")) return;
      if (t == PT_PRED || t == PT_B8 || t == PT_U8 || t == PT_S8 || t == PT_F16 || t == PT_BF16) {
        ptx_perr(p, "selp does not take .%s", ptx_type_name(t));
        return;
      }
      ins.d[0] = ptx_dest(p, a[0]);
      ins.s[0] = ptx_operand(p, a[1], t);
      ins.s[1] = ptx_operand(p, a[2], t);
      ins.s[2] = ptx_operand(p, a[3], PT_PRED);
      ins.nd = 1;
      ins.ns = 3;
      break;
    case PO_BRA: {
      if (!want_args(p, na, 1, "bra")) return;
      if (!ptx_grow(p, (void **)&p->fix, &p->capfix, p->nfix + 1, sizeof *p->fix)) return;
      p->fix[p->nfix++] = (fixup){p->e->ncode, ptx_keep(p, a[0], strlen(a[0])), strlen(a[0])};
      break;
    }
    case PO_BAR: {
      if (!m.sync || na < 1 || na > 2) {
        ptx_perr(p, "only bar.sync / barrier.sync with a barrier id (and a thread count) is supported");
        return;
      }
      ins.s[0] = ptx_operand(p, a[0], PT_U32);
      if (na == 2) ins.s[1] = ptx_operand(p, a[1], PT_U32);
      ins.ns = (uint8_t)na;
      break;
    }
    case PO_RET:
      if (na != 0) {
        ptx_perr(p, "%s takes no operands", d->name);
        return;
      }
      break;
    default: ptx_perr(p, "internal: unhandled instruction"); return;
  }
  if (p->st) return;
  if (!check_operands(p, &ins, d)) return;
  ins.tbits = (uint8_t)ptx_type_bits(t);
  ins.tsigned = ptx_type_signed(t);
  ins.tfloat = ptx_type_float(t);
  ptx_entry *e = p->e;
  if (!ptx_grow(p, (void **)&e->code, &p->capcode, e->ncode + 1, sizeof *e->code)) return;
  e->code[e->ncode++] = ins;
}
