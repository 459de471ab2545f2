/* hcq simplify: parse expressions, simplify them, print the result with its bounds and infix render.
 * The line processing is exposed here so that tools/simplify_test.c can drive it without a shell. */
#ifndef HCQ_TOOLS_SIMPLIFY_H
#define HCQ_TOOLS_SIMPLIFY_H

#include <stdbool.h>
#include <stdio.h>

typedef struct simplify_session simplify_session;

/* A session keeps one uop ctx, recreated every few thousand lines so memory stays bounded. NULL on OOM. */
simplify_session *simplify_session_create(void);
void simplify_session_destroy(simplify_session *s);

/* Process one input line (text[0..len), no newline) and write exactly one output line to out:
 *   SEXPR \t VMIN \t VMAX \t RENDER       on success
 *   (empty line)                           for a blank or comment-only line
 *   !error MESSAGE                         on a parse error ("LINE:COL: ..."), a division or modulo by a constant
 *                                          zero in the input or the result, or a simplifier failure
 * line_no numbers error positions. Returns false if the line was an error. */
bool simplify_line(simplify_session *s, const char *text, size_t len, int line_no, FILE *out);

/* Every line of in, in order. Returns the number of error lines, or -1 if reading failed (message on err). */
long simplify_stream(simplify_session *s, FILE *in, FILE *out, FILE *err);

#endif
