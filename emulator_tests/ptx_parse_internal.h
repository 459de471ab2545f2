/* The PTX parser's shared state and helpers, for ptx_parse.c (lexing, declarations, registers and operands, the
 * module) and ptx_instr.c (instructions: modifiers, operands, type checks). */
#ifndef HCQ_EMU_PTX_PARSE_INTERNAL_H
#define HCQ_EMU_PTX_PARSE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "emulator_tests/ptx_internal.h"

typedef struct regdecl {
  const char *name; /* prefix for a range ("%r" of %r<8>), else the full name */
  size_t len;
  uint32_t count;   /* range size; 0: a single register */
  int32_t row;
} regdecl;

typedef struct symdecl {
  const char *name;
  size_t len;
  uint32_t offset;
} symdecl;

typedef struct fixup {
  size_t ins;
  const char *name;
  size_t len;
} fixup;

typedef struct parser {
  ptx_module *m;
  char *buf;          /* the text with comments blanked (newlines kept) */
  size_t len, pos;
  uint32_t line;
  hcq_status st;
  /* the entry being built */
  ptx_entry *e;
  size_t capcode, caprows;
  regdecl *regs;
  size_t nregs, capregs;
  symdecl *shared, *labels, *locals;
  size_t nshared, capshared, nmodshared, nlabels, caplabels, nlocals, caplocals;
  fixup *fix;
  size_t nfix, capfix;
  uint32_t shared_top; /* next free shared byte */
  uint32_t local_top;  /* next free .local byte (per thread) */
  size_t capentries;
  /* the current statement */
  const char *stext;
  uint32_t sline;
} parser;

/* An error naming the current statement's line and text (the first one wins). */
void ptx_perr(parser *p, const char *f, ...) __attribute__((format(printf, 2, 3)));
bool ptx_grow(parser *p, void **arr, size_t *cap, size_t need, size_t elem);
const char *ptx_keep(parser *p, const char *s, size_t n); /* a copy owned by the module */
int ptx_split_commas(char *s, char **out, int max);
int32_t ptx_add_row(parser *p, ptx_rowkind kind, ptx_type type, uint64_t value);
ptx_type ptx_type_named(const char *s, size_t n);
int32_t ptx_reg_row(parser *p, const char *s, ptx_type *out_type);
int32_t ptx_operand(parser *p, const char *s, ptx_type t); /* register, special register, immediate, shared/local symbol */
int32_t ptx_dest(parser *p, const char *s);
const symdecl *ptx_find_sym(const symdecl *syms, size_t n, const char *s, size_t len);
/* One instruction statement ("@%p add.s32 %r1, %r2, 3") appended to the entry being built. */
void ptx_parse_instruction(parser *p, char *text);

#endif
