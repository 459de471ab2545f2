/* The device-independent commands, encoded in the word format of hcq/README.md. */
#include <stddef.h>

#include "hcq/args.h"
#include "hcq/queue_internal.h"

const uint8_t hcq_op_length_words[HCQ_OP_COUNT] = {
    [HCQ_OP_NOP] = 1, [HCQ_OP_EXEC] = 13, [HCQ_OP_COPY] = 7, [HCQ_OP_SIGNAL] = 5,
    [HCQ_OP_WAIT] = 5, [HCQ_OP_TIMESTAMP] = 3, [HCQ_OP_BARRIER] = 1,
};

/* Append the header, then operand words patched from vals (widths 32 or 64). Validates every operand first so
 * that a bad operand leaves no half-written command behind. */
static hcq_status command(hcq_queue *q, hcq_op op, const hcq_val *vals, const uint8_t *widths, size_t n) {
  if (q->err) return hcq_queue_status(q);
  for (size_t i = 0; i < n; i++) {
    const uop *s = vals[i].sym;
    if (s && (uop_dt_is_ptr(s->dtype) || !(uop_dt_is_int(s->dtype) || uop_dt_is_bool(s->dtype))))
      return hcq_status_make(HCQ_CODE_INVALID, "%s operand %zu: symbol of dtype %s is not an integer",
                             op == HCQ_OP_EXEC ? "exec" : "command", i, uop_dt_name(s->dtype));
  }
  size_t start = q->nwords;
  uint32_t *w;
  HCQ_TRY(hcq_queue_reserve(q, hcq_op_length_words[op], &w));
  w[0] = HCQ_HDR(op, hcq_op_length_words[op]);
  size_t at = start + 1;
  for (size_t i = 0; i < n; i++) {
    HCQ_TRY(hcq_queue_patch_word(q, at, vals[i], widths[i], 0));
    at += widths[i] / 32;
  }
  return HCQ_OK;
}

hcq_status hcq_queue_exec(hcq_queue *q, hcq_val prog, const hcq_args *args, const hcq_val global[3],
                          const hcq_val local[3]) {
  if (!global || !local) return hcq_status_make(HCQ_CODE_INVALID, "exec: NULL global or local size");
  hcq_val v[10] = {prog, hcq_imm(args ? args->va : 0), hcq_imm(args ? args->nbufs : 0), hcq_imm(args ? args->nvals : 0),
                   global[0], global[1], global[2], local[0], local[1], local[2]};
  static const uint8_t widths[10] = {64, 64, 32, 32, 32, 32, 32, 32, 32, 32};
  return command(q, HCQ_OP_EXEC, v, widths, 10);
}

hcq_status hcq_queue_copy(hcq_queue *q, hcq_val dst_va, hcq_val src_va, hcq_val size_B) {
  hcq_val v[3] = {dst_va, src_va, size_B};
  static const uint8_t widths[3] = {64, 64, 64};
  return command(q, HCQ_OP_COPY, v, widths, 3);
}

hcq_status hcq_queue_signal(hcq_queue *q, hcq_val sig_va, hcq_val value) {
  hcq_val v[2] = {sig_va, value};
  static const uint8_t widths[2] = {64, 64};
  return command(q, HCQ_OP_SIGNAL, v, widths, 2);
}

hcq_status hcq_queue_wait(hcq_queue *q, hcq_val sig_va, hcq_val value) {
  hcq_val v[2] = {sig_va, value};
  static const uint8_t widths[2] = {64, 64};
  return command(q, HCQ_OP_WAIT, v, widths, 2);
}

hcq_status hcq_queue_timestamp(hcq_queue *q, hcq_val sig_va) {
  static const uint8_t widths[1] = {64};
  return command(q, HCQ_OP_TIMESTAMP, &sig_va, widths, 1);
}

hcq_status hcq_queue_memory_barrier(hcq_queue *q) { return command(q, HCQ_OP_BARRIER, NULL, NULL, 0); }
