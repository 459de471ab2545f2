/* text_buf: a growable byte buffer private to the text printers (uop/text_print.c, uop/render.c and the kernel
 * text printer compiler/kernel_print.c). Appends never fail loudly:
 * an allocation failure or the UOP_TEXT_MAX_OUTPUT_B cap sets `failed`, which the caller checks once at the end. */
#ifndef HCQ_UOP_TEXT_BUF_H
#define HCQ_UOP_TEXT_BUF_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "uop/text.h"

typedef struct text_buf {
  char *data;
  size_t len, cap;
  bool failed;
} text_buf;

static inline bool text_buf_reserve(text_buf *b, size_t extra) {
  if (b->failed) return false;
  if (b->len + extra + 1 <= b->cap) return true;
  if (b->len + extra + 1 > UOP_TEXT_MAX_OUTPUT_B) {
    b->failed = true;
    return false;
  }
  size_t cap = b->cap ? b->cap : 64;
  while (cap < b->len + extra + 1) cap *= 2;
  char *p = realloc(b->data, cap);
  if (!p) {
    b->failed = true;
    return false;
  }
  b->data = p;
  b->cap = cap;
  return true;
}

static inline void text_buf_add(text_buf *b, const char *s, size_t n) {
  if (!text_buf_reserve(b, n)) return;
  memcpy(b->data + b->len, s, n);
  b->len += n;
  b->data[b->len] = 0;
}

static inline void text_buf_puts(text_buf *b, const char *s) { text_buf_add(b, s, strlen(s)); }

/* The work stack of the printer and renderer: what remains to be written, last item first. A node item expands into
 * its prefix (written at once) and pushes its suffix pieces and sources; so nesting costs heap, not C stack. */
typedef struct text_item {
  const uop *n;      /* a node to expand, or NULL for a literal */
  const char *lit;   /* static text */
  int special;       /* printer-private extra item kinds (0 = none) */
  uop_scalar scalar; /* for special items */
} text_item;

typedef struct text_stack {
  text_item *items;
  size_t len, cap;
  bool failed;
} text_stack;

static inline void text_stack_push(text_stack *st, text_item it) {
  if (st->failed) return;
  if (st->len == st->cap) {
    size_t cap = st->cap ? st->cap * 2 : 64;
    text_item *p = realloc(st->items, cap * sizeof *p);
    if (!p) {
      st->failed = true;
      return;
    }
    st->items = p;
    st->cap = cap;
  }
  st->items[st->len++] = it;
}

static inline void text_push_node(text_stack *st, const uop *n) { text_stack_push(st, (text_item){.n = n}); }
static inline void text_push_lit(text_stack *st, const char *lit) { text_stack_push(st, (text_item){.lit = lit}); }

#endif
