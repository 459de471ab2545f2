/* The CPU backend's native command words (its hcq_encoder; cpu_device.c decodes them at submit).
 *
 * All words are little-endian uint32_t. Every command starts with a header word `opcode | (length_words << 16)`
 * where the length includes the header, so a decoder can check and skip; a header whose length does not match
 * the table rejects the whole list. 64-bit operands are two words, low word first.
 *
 * | op | name      | length | operands after the header                                                        |
 * |----|-----------|--------|----------------------------------------------------------------------------------|
 * | 0  | NOP       | 1      | -                                                                                |
 * | 1  | EXEC      | 13     | prog64 (cpu_device_program*), args64 (argument buffer va, 0 = none), nbufs,      |
 * |    |           |        | nvals, global[3], local[3]                                                       |
 * | 2  | COPY      | 7      | dst64, src64, size64                                                             |
 * | 3  | SIGNAL    | 5      | sig64 (address of the signal's value), value64: 64-bit store                     |
 * | 4  | WAIT      | 5      | sig64, value64: wait until *sig >= value                                         |
 * | 5  | TIMESTAMP | 3      | sig64: store the time in ns at sig + 8                                           |
 * | 6  | BARRIER   | 1      | - (a no-op on the CPU: commands run in order)                                    |
 *
 * EXEC's argument buffer has the layout of hcq/args.h; the worker calls the kernel with those addresses and
 * values for core_id 0..global[0]-1.
 * Example: wait(tl, 1); exec(...); signal(tl, 2) is
 *   00050004 tl_lo tl_hi 1 0 | 000d0001 p_lo p_hi a_lo a_hi nbufs nvals gx gy gz lx ly lz | 00050003 tl_lo tl_hi 2 0
 */
#ifndef CPU_WORDS_H
#define CPU_WORDS_H

#include <stdint.h>

#include "hcq/device.h"

typedef enum cpu_op {
  CPU_OP_NOP = 0,
  CPU_OP_EXEC = 1,
  CPU_OP_COPY = 2,
  CPU_OP_SIGNAL = 3,
  CPU_OP_WAIT = 4,
  CPU_OP_TIMESTAMP = 5,
  CPU_OP_BARRIER = 6,
  CPU_OP_COUNT
} cpu_op;
#define CPU_HDR(op, len) ((uint32_t)(op) | ((uint32_t)(len) << 16))
#define CPU_HDR_OP(w) ((w) & 0xffffu)
#define CPU_HDR_LEN(w) ((w) >> 16)
extern const uint8_t cpu_op_length_words[CPU_OP_COUNT];

/* Encodes the generic commands in the words above (any backend whose hardware reads them may use it). */
extern const hcq_encoder cpu_words_encoder;

#endif
