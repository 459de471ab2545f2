/* The CPU backend's encoder: the generic commands as the words of cpu/cpu_words.h. */
#include "cpu/cpu_words.h"

#include "hcq/args.h"
#include "hcq/queue.h"

const uint8_t cpu_op_length_words[CPU_OP_COUNT] = {
    [CPU_OP_NOP] = 1, [CPU_OP_EXEC] = 13, [CPU_OP_COPY] = 7, [CPU_OP_SIGNAL] = 5,
    [CPU_OP_WAIT] = 5, [CPU_OP_TIMESTAMP] = 3, [CPU_OP_BARRIER] = 1,
};

/* Header, then operand words patched from vals (widths 32 or 64). */
static hcq_status command(hcq_queue *q, cpu_op op, const hcq_val *vals, const uint8_t *widths, size_t n) {
  uint32_t *w;
  HCQ_TRY(hcq_queue_reserve(q, cpu_op_length_words[op], &w));
  w[0] = CPU_HDR(op, cpu_op_length_words[op]);
  size_t at = hcq_queue_word_count(q) - cpu_op_length_words[op] + 1;
  for (size_t i = 0; i < n; i++) {
    HCQ_TRY(hcq_queue_patch_word(q, at, vals[i], widths[i], 0));
    at += widths[i] / 32;
  }
  return HCQ_OK;
}

static hcq_status enc_exec(hcq_queue *q, hcq_val prog, const hcq_args *args, const hcq_val global[3],
                           const hcq_val local[3]) {
  hcq_val v[10] = {prog, hcq_imm(args ? args->va : 0), hcq_imm(args ? args->nbufs : 0), hcq_imm(args ? args->nvals : 0),
                   global[0], global[1], global[2], local[0], local[1], local[2]};
  static const uint8_t widths[10] = {64, 64, 32, 32, 32, 32, 32, 32, 32, 32};
  return command(q, CPU_OP_EXEC, v, widths, 10);
}

static hcq_status enc_copy(hcq_queue *q, hcq_val dst_va, hcq_val src_va, hcq_val size_B) {
  hcq_val v[3] = {dst_va, src_va, size_B};
  static const uint8_t widths[3] = {64, 64, 64};
  return command(q, CPU_OP_COPY, v, widths, 3);
}

static hcq_status enc_signal(hcq_queue *q, hcq_val sig_va, hcq_val value) {
  hcq_val v[2] = {sig_va, value};
  static const uint8_t widths[2] = {64, 64};
  return command(q, CPU_OP_SIGNAL, v, widths, 2);
}

static hcq_status enc_wait(hcq_queue *q, hcq_val sig_va, hcq_val value) {
  hcq_val v[2] = {sig_va, value};
  static const uint8_t widths[2] = {64, 64};
  return command(q, CPU_OP_WAIT, v, widths, 2);
}

static hcq_status enc_timestamp(hcq_queue *q, hcq_val sig_va) {
  static const uint8_t widths[1] = {64};
  return command(q, CPU_OP_TIMESTAMP, &sig_va, widths, 1);
}

static hcq_status enc_barrier(hcq_queue *q) { return command(q, CPU_OP_BARRIER, NULL, NULL, 0); }

const hcq_encoder cpu_words_encoder = {enc_exec, enc_copy, enc_signal, enc_wait, enc_timestamp, enc_barrier};
