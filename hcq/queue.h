/* hcq_queue: a growable stream of 32-bit words with symbolic patches, submitted to a device backend.
 *
 * Any value recorded into a queue may be a constant or a symbol (a `const uop *` of an int/index/bool dtype over
 * named DEFINE_VARs). Constants are written at record time. Symbols are recorded as patches:
 *   - word patches: one word (width 32) or a lo/hi word pair (width 64) inside the stream;
 *   - field patches: 32- or 64-bit fields inside registered side regions (kernel arguments, launch descriptors);
 *   - bitfield patches: (shift, width) inside a word, or an absolute hi:lo bit range of a region, overflow-checked.
 * A patch may carry a mask: new = (old & ~mask) | (value & mask), so bits outside the mask keep their value
 * (unlike the reference, which ORs the unmasked value in: tinygrad/runtime/ops_nv.py). An unmasked 32-bit patch takes
 * only values of int32 or uint32 range: a symbol outside it fails the submit (naming it, its value and the patch)
 * before anything is written, a constant fails when recorded. A variable's value must lie in its DEFINE_VAR's
 * declared range (the kernel was compiled assuming it), checked at submit too (uint64 variables excepted).
 *
 * hcq_queue_submit(q, dev, var_vals, n) evaluates each DISTINCT symbol once (variables looked up by name),
 * validates all of them before writing anything, then rewrites only the patches whose symbol value changed since
 * the previous submit (the first submit writes all), and hands the words to dev->ops->submit.
 *
 * The generic commands (exec, copy, signal, wait, timestamp, memory_barrier) are encoded by the queue's device
 * (hcq_encoder in hcq/device.h): the CPU words of cpu/cpu_words.h, the PM4-like packets of the fake GPU
 * (hcq/queue_fake_device.h), later PM4 and push-buffer methods. Encoders use the raw emission calls below.
 *
 * Errors while recording (bad argument, out of memory) are returned and also stick to the queue: a later submit
 * returns a copy of the first one and submits nothing.
 */
#ifndef HCQ_QUEUE_H
#define HCQ_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hcq/device.h"
#include "base/status.h"
#include "uop/uop.h"


/* Counters since creation (for tests and benchmarks). */
typedef struct hcq_queue_stats {
  uint64_t submits;
  uint64_t syms_evaluated; /* distinct symbol evaluations */
  uint64_t patch_writes;   /* patches written (a 64-bit word patch counts once) */
  uint64_t words_written;  /* stream words whose value a patch changed (unchanged words are not stored) */
} hcq_queue_stats;

/* A queue belongs to a device: the generic commands are encoded by dev->ops->encoder, words live where
 * dev->ops->queue_storage puts them, and submit goes to dev only. */
hcq_status hcq_queue_create(hcq_device *dev, hcq_queue_kind kind, hcq_queue **out_q);
void hcq_queue_destroy(hcq_queue *q); /* NULL is fine */

hcq_queue_kind hcq_queue_kind_of(const hcq_queue *q);
hcq_device *hcq_queue_device(const hcq_queue *q);
const uint32_t *hcq_queue_words(const hcq_queue *q);
size_t hcq_queue_word_count(const hcq_queue *q);
size_t hcq_queue_sym_count(const hcq_queue *q);   /* distinct symbols */
size_t hcq_queue_patch_count(const hcq_queue *q);
hcq_queue_stats hcq_queue_get_stats(const hcq_queue *q);
hcq_status hcq_queue_status(const hcq_queue *q); /* the sticky record error (a copy the caller frees), or OK */

/* ---- raw emission (for backends): placeholders of symbolic words are 0 until the first submit ---- */
/* Append `nwords` zero words; *out_words points at them until the next append (encoders fill constant words). */
hcq_status hcq_queue_reserve(hcq_queue *q, size_t nwords, uint32_t **out_words);
hcq_status hcq_queue_emit32(hcq_queue *q, hcq_val v);
hcq_status hcq_queue_emit64(hcq_queue *q, hcq_val v); /* lo word, then hi word */
/* Patch an already emitted word range: word_index .. +1 (width 32) or +2 (width 64). Constant values are written
 * now (through the mask). mask = 0 means "all bits". */
hcq_status hcq_queue_patch_word(hcq_queue *q, size_t word_index, hcq_val v, unsigned width_bits, uint64_t mask);

/* Side regions: host memory the queue may patch. The memory must outlive the queue (or its next submit). */
hcq_status hcq_queue_add_region(hcq_queue *q, void *host, size_t size_B, uint32_t *out_region);
/* Field at byte `offset_B` of a region, little-endian, any alignment. mask = 0 means "all bits". */
hcq_status hcq_queue_patch_field(hcq_queue *q, uint32_t region, size_t offset_B, hcq_val v, unsigned width_bits,
                                 uint64_t mask);

/* Bitfield patch: bits [shift, shift+width) of the 32-bit word word_index (or of the 64-bit lo/hi pair starting
 * there when shift + width > 32), as hardware headers give them (_SHIFT/_MASK pairs). The value must fit width
 * bits unsigned: a symbol that does not fails the submit naming the patch before anything is written; a constant
 * fails now. Other bits keep their value. */
hcq_status hcq_queue_patch_bits(hcq_queue *q, size_t word_index, unsigned shift, unsigned width, hcq_val v);
/* The same with the field as autogen's _SHIFT/_MASK pair (mask not shifted, e.g. AMD_PM4_COUNT_MASK 0x3fff): the
 * mask must be a contiguous run of low bits. */
hcq_status hcq_queue_patch_shift_mask(hcq_queue *q, size_t word_index, unsigned shift, uint64_t mask, hcq_val v);
/* The same inside a side region, the field given as an absolute bit range hi:lo of the region (QMD-style `hi:lo`;
 * the field may span at most one 64-bit window starting at the 32-bit word that holds bit lo). */
hcq_status hcq_queue_patch_region_bits(hcq_queue *q, uint32_t region, unsigned hi, unsigned lo, hcq_val v);

/* ---- generic commands, encoded by the device (hcq_encoder) ---- */
/* prog: the backend's program handle. args: a bound kernel-argument buffer (hcq/args.h), or NULL for none. */
hcq_status hcq_queue_exec(hcq_queue *q, hcq_val prog, const hcq_args *args, const hcq_val global[3],
                          const hcq_val local[3]);
hcq_status hcq_queue_copy(hcq_queue *q, hcq_val dst_va, hcq_val src_va, hcq_val size_B);
/* sig_va: the device address of a signal's value (hcq_signal.va), or a symbol for a "virtual" signal. */
hcq_status hcq_queue_signal(hcq_queue *q, hcq_val sig_va, hcq_val value);
hcq_status hcq_queue_wait(hcq_queue *q, hcq_val sig_va, hcq_val value);
hcq_status hcq_queue_timestamp(hcq_queue *q, hcq_val sig_va);
hcq_status hcq_queue_memory_barrier(hcq_queue *q);

/* Evaluate symbols, patch changed values, submit. var_vals may be NULL when n == 0. Missing variables fail with
 * HCQ_CODE_NOT_FOUND naming the variable, leaving words, regions and remembered values untouched. */
hcq_status hcq_queue_submit(hcq_queue *q, hcq_device *dev, const uop_var_val *var_vals, size_t n);
/* Hand the current words to the backend without patching (after hcq_queue_apply). */
hcq_status hcq_queue_submit_patched(hcq_queue *q, hcq_device *dev);
/* Only the patching part of submit (graphs patch several queues, then submit them). */
hcq_status hcq_queue_apply(hcq_queue *q, const uop_var_val *var_vals, size_t n);

#endif
