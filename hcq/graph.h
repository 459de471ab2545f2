/* hcq_graph: record commands across devices once, replay them with new variable values.
 *
 * Build: hcq_graph_queue(g, dev, kind) hands out the graph's queue for (device, kind); record commands into it
 * with the ordinary queue API, using symbols for everything that changes between replays — input buffer
 * addresses are plain uint64 variables ("buf0", ...; hcq_graph_var makes one). Kernel arguments come from
 * graph-owned memory (hcq_graph_args); signals that order queues inside one replay come from hcq_graph_signal
 * (reset to 0 before every replay, so use values 1, 2, ... within a run). Then hcq_graph_finalize.
 *
 * Each queue starts with wait(timeline_sig_<dev>, timeline_var_<dev>) — the device's timeline signal by symbolic
 * address, so a timeline wrap (hcq/signal.h) does not leave a stale address in a recorded queue. Each queue ends
 * by signalling its own done signal with kickoff_var (a counter that grows every replay). A device's first queue
 * (its "main" queue) also waits for the device's other graph queues and then signals
 * timeline_sig_<dev> = timeline_var_<dev> + 1, which is exactly the value hcq_timeline_next hands out.
 *
 * Replay: (1) CPU-wait every queue's done signal for the previous replay, so no queue or argument buffer is patched
 * while a device may still read it (reference pitfall P10); (2) wrap device timelines that passed 2^31; (3) reset
 * graph signals, kickoff += 1; (4) patch and submit: first the non-main queues in creation order, then the main
 * queues in creation order; (5) advance each device's timeline.
 * Graph variables: kickoff_var, timeline_sig_<dev>, timeline_var_<dev> (all uint64); the caller must not use
 * these names.
 */
#ifndef HCQ_GRAPH_H
#define HCQ_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "hcq/args.h"
#include "hcq/queue.h"
#include "hcq/signal.h"
#include "uop/uop.h"

typedef struct hcq_graph hcq_graph;

/* ctx: where the graph builds its variable nodes; it must outlive the graph. */
hcq_status hcq_graph_create(uop_ctx *ctx, hcq_graph **out_g);
/* Waits (bounded by each device's wait_timeout_ms) for the last replay, then frees everything. */
void hcq_graph_destroy(hcq_graph *g);

/* A uint64 variable node with this name (input buffer addresses). NULL only on out-of-memory. */
const uop *hcq_graph_var(hcq_graph *g, const char *name);
hcq_status hcq_graph_queue(hcq_graph *g, hcq_device *dev, hcq_queue_kind kind, hcq_queue **out_q);
/* Kernel-argument memory on dev (16-byte aligned slot), described by *out_args; bind it with hcq_args_bind. */
hcq_status hcq_graph_args(hcq_graph *g, hcq_device *dev, uint32_t prefix_words, uint32_t nbufs, uint32_t nvals,
                          hcq_args *out_args);
/* A signal on dev owned by the graph; its value is reset to 0 before every replay. */
hcq_status hcq_graph_signal(hcq_graph *g, hcq_device *dev, hcq_signal **out_sig);
/* Append the epilogues. No recording afterwards. */
hcq_status hcq_graph_finalize(hcq_graph *g);

hcq_status hcq_graph_replay(hcq_graph *g, const uop_var_val *var_vals, size_t n, uint32_t timeout_ms);
/* Wait until the last replay finished on every device. */
hcq_status hcq_graph_wait(hcq_graph *g, uint32_t timeout_ms);

size_t hcq_graph_queue_count(const hcq_graph *g);
uint64_t hcq_graph_kickoff(const hcq_graph *g); /* replays so far */

#endif
