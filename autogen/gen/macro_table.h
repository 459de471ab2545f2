/* Generator-side helper (not part of libhcq): the #define table of one C header and a small integer expression
 * evaluator for macro bodies, so values are read from the source text instead of being retyped.
 * Supported in bodies: integer literals (hex/decimal, U/L suffixes), character literals, identifiers naming other
 * object-like macros of the same file, macro parameters, ( ) ~ - + * << >> & | ^. Anything else is an error. */
#ifndef HCQ_AUTOGEN_MACRO_TABLE_H
#define HCQ_AUTOGEN_MACRO_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

typedef struct mt_macro {
  char *name;
  int nparams;      /* -1: object-like */
  char *params[4];
  char *body;       /* continuation lines joined, comments removed, trimmed */
  int line;
} mt_macro;

typedef struct mt_table {
  char *path;       /* for messages */
  mt_macro *macros;
  size_t count, cap;
} mt_table;

/* Parse every #define in the file at `path`; `label` names the file in messages. */
hcq_status mt_load(const char *path, const char *label, mt_table *out);
/* Parse from a string (tests). */
hcq_status mt_load_text(const char *text, const char *label, mt_table *out);
void mt_free(mt_table *t);
/* Replace C comments in place by one space each, keeping newlines (so line numbers stay right). */
void mt_strip_comments(char *s);
/* The first definition of `name`, or NULL. A second definition with a different body is an error (*err set). */
const mt_macro *mt_find(const mt_table *t, const char *name, hcq_status *err);
/* Evaluate a macro: object-like with nargs == 0, function-like with its arguments. */
hcq_status mt_eval_macro(const mt_table *t, const mt_macro *m, const uint64_t *args, int nargs, uint64_t *out);

#endif
