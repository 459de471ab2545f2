/* The generic commands: checked here once, encoded by the queue's device (hcq_encoder in hcq/device.h). */
#include <stddef.h>

#include "hcq/args.h"
#include "hcq/queue_internal.h"

/* Sticky error, encoder present, and every symbolic operand an integer scalar, before the encoder writes a word
 * (so that a bad operand leaves no half-written command behind). */
static hcq_status check(hcq_queue *q, const char *cmd, const hcq_val *vals, size_t n) {
  if (q->err) return hcq_queue_status(q);
  if (!q->dev->ops->encoder)
    return hcq_status_make(HCQ_CODE_INVALID, "%s: device %s (%s) has no command encoder", cmd, q->dev->name,
                           q->dev->ops->backend_name);
  for (size_t i = 0; i < n; i++) {
    const uop *s = vals[i].sym;
    if (s && (uop_dt_is_ptr(s->dtype) || !(uop_dt_is_int(s->dtype) || uop_dt_is_bool(s->dtype))))
      return hcq_status_make(HCQ_CODE_INVALID, "%s operand %zu: symbol of dtype %s is not an integer", cmd, i,
                             uop_dt_name(s->dtype));
  }
  return HCQ_OK;
}

hcq_status hcq_queue_exec(hcq_queue *q, hcq_val prog, const hcq_args *args, const hcq_val global[3],
                          const hcq_val local[3]) {
  if (!global || !local) return hcq_status_make(HCQ_CODE_INVALID, "exec: NULL global or local size");
  hcq_val v[7] = {prog, global[0], global[1], global[2], local[0], local[1], local[2]};
  HCQ_TRY(check(q, "exec", v, 7));
  return q->dev->ops->encoder->exec(q, prog, args, global, local);
}

hcq_status hcq_queue_copy(hcq_queue *q, hcq_val dst_va, hcq_val src_va, hcq_val size_B) {
  hcq_val v[3] = {dst_va, src_va, size_B};
  HCQ_TRY(check(q, "copy", v, 3));
  return q->dev->ops->encoder->copy(q, dst_va, src_va, size_B);
}

hcq_status hcq_queue_signal(hcq_queue *q, hcq_val sig_va, hcq_val value) {
  hcq_val v[2] = {sig_va, value};
  HCQ_TRY(check(q, "signal", v, 2));
  return q->dev->ops->encoder->signal(q, sig_va, value);
}

hcq_status hcq_queue_wait(hcq_queue *q, hcq_val sig_va, hcq_val value) {
  hcq_val v[2] = {sig_va, value};
  HCQ_TRY(check(q, "wait", v, 2));
  return q->dev->ops->encoder->wait(q, sig_va, value);
}

hcq_status hcq_queue_timestamp(hcq_queue *q, hcq_val sig_va) {
  HCQ_TRY(check(q, "timestamp", &sig_va, 1));
  return q->dev->ops->encoder->timestamp(q, sig_va);
}

hcq_status hcq_queue_memory_barrier(hcq_queue *q) {
  HCQ_TRY(check(q, "memory_barrier", NULL, 0));
  return q->dev->ops->encoder->memory_barrier(q);
}
