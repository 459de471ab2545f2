/* Graph: 300+ commands over two devices replayed with new buffer addresses each time; every address the fake
 * devices receive is checked after every replay. Also: replay waits for the previous run, timeline wrap,
 * missing variables submit nothing. */
#include "hcq/graph.h"

#include "hcq/queue_fake_device.h"
#include "base/testing.h"

#define NBUF 16
#define NKERN 320
#define NCOPY 24

static uop_ctx *ctx;
static uint64_t rng_state = 0x2545F4914F6CDD1DULL;
static uint64_t rng(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ULL;
}

typedef struct plan {
  hcq_graph *g;
  fake_dev *devs[2];
  char names[NBUF][8];
  int kdev[NKERN], kb0[NKERN], kb1[NKERN];
  int cdst[NCOPY], csrc[NCOPY];
} plan;

/* Kernel k runs on device k % 2 (first half) with buffers b0, b1 and global size (n, 1, 1); copies run on device 0's
 * copy queue. Device 1's second half waits on a graph signal raised by device 0 halfway. */
static void build(plan *p) {
  CHECK_OK(hcq_graph_create(ctx, &p->g));
  const uop *bufv[NBUF];
  for (int i = 0; i < NBUF; i++) {
    snprintf(p->names[i], sizeof(p->names[i]), "buf%d", i);
    bufv[i] = hcq_graph_var(p->g, p->names[i]);
  }
  const uop *n = uop_var(ctx, "n", 1, 1 << 20, uop_dt(UOP_INDEX));
  const uop *n4 = uop_alu2(ctx, UOP_MUL, n, uop_index_const(ctx, 4));
  hcq_signal *half;
  CHECK_OK(hcq_graph_signal(p->g, &p->devs[0]->dev, &half));
  for (int k = 0; k < NKERN; k++) {
    int d = k % 2;
    hcq_queue *q;
    CHECK_OK(hcq_graph_queue(p->g, &p->devs[d]->dev, HCQ_QUEUE_COMPUTE, &q));
    if (k == NKERN / 2 + 1) CHECK_OK(hcq_queue_wait(q, hcq_imm(half->va), hcq_imm(1)));
    p->kdev[k] = d;
    p->kb0[k] = (int)(rng() % NBUF);
    p->kb1[k] = (int)(rng() % NBUF);
    hcq_args a;
    CHECK_OK(hcq_graph_args(p->g, &p->devs[d]->dev, 0, 2, 1, &a));
    hcq_val bufs[2] = {hcq_sym(bufv[p->kb0[k]]), hcq_sym(bufv[p->kb1[k]])}, vals[1] = {hcq_sym(n)};
    CHECK_OK(hcq_args_bind(&a, q, NULL, bufs, vals));
    hcq_val gl[3] = {hcq_sym(n), hcq_imm(1), hcq_imm(1)}, lo[3] = {hcq_imm(1), hcq_imm(1), hcq_imm(1)};
    CHECK_OK(hcq_queue_exec(q, hcq_imm(0x1000 + (uint64_t)k), &a, gl, lo));
    if (k == NKERN / 2) CHECK_OK(hcq_queue_signal(q, hcq_imm(half->va), hcq_imm(1)));
  }
  hcq_queue *cq;
  CHECK_OK(hcq_graph_queue(p->g, &p->devs[0]->dev, HCQ_QUEUE_COPY, &cq));
  for (int c = 0; c < NCOPY; c++) {
    p->cdst[c] = (int)(rng() % NBUF);
    p->csrc[c] = (int)(rng() % NBUF);
    CHECK_OK(hcq_queue_copy(cq, hcq_sym(bufv[p->cdst[c]]), hcq_sym(bufv[p->csrc[c]]), hcq_sym(n4)));
  }
  CHECK_OK(hcq_graph_finalize(p->g));
  CHECK_EQ_INT(hcq_graph_queue_count(p->g), 3);
}

static void clear_logs(plan *p) {
  for (int d = 0; d < 2; d++) p->devs[d]->nexecs = p->devs[d]->ncopies = 0;
}

/* Every address and size the devices saw in this replay must be the current one. */
static int check_replay(plan *p, const uint64_t *addr, int64_t nval) {
  int bad = 0;
  size_t seen[2] = {0, 0};
  for (int k = 0; k < NKERN; k++) {
    fake_dev *f = p->devs[p->kdev[k]];
    size_t i = seen[p->kdev[k]]++;
    if (i >= f->nexecs) return bad + 1;
    const fake_exec *e = &f->execs[i];
    if (e->prog != 0x1000 + (uint64_t)k || e->nbufs != 2 || e->nvals != 1) bad++;
    if (e->bufs[0] != addr[p->kb0[k]] || e->bufs[1] != addr[p->kb1[k]]) bad++;
    uint32_t v0;
    memcpy(&v0, (const uint8_t *)(uintptr_t)e->args_va + 16, 4);
    if (v0 != (uint32_t)nval || e->global[0] != (uint32_t)nval || e->global[1] != 1 || e->local[0] != 1) bad++;
  }
  if (seen[0] != p->devs[0]->nexecs || seen[1] != p->devs[1]->nexecs) bad++;
  if (p->devs[0]->ncopies != NCOPY || p->devs[1]->ncopies != 0) return bad + 1;
  for (int c = 0; c < NCOPY; c++) {
    const fake_copy *cp = &p->devs[0]->copies[c];
    if (cp->dst != addr[p->cdst[c]] || cp->src != addr[p->csrc[c]] || cp->size_B != (uint64_t)nval * 4) bad++;
  }
  return bad;
}

static void fill_vals(plan *p, uop_var_val *vv, uint64_t *addr, int64_t nval) {
  for (int i = 0; i < NBUF; i++) {
    addr[i] = (rng() & 0x0000fffffffffff0ULL) | 0x100000000ULL; /* always above 4 GiB: hi words matter */
    vv[i] = (uop_var_val){p->names[i], (int64_t)addr[i]};
  }
  vv[NBUF] = (uop_var_val){"n", nval};
}

static void test_replays(void) {
  fake_dev f0, f1;
  CHECK_OK(fake_dev_init(&f0, "FAKE:0", true));
  CHECK_OK(fake_dev_init(&f1, "FAKE:1", true));
  plan *p = calloc(1, sizeof(*p));
  p->devs[0] = &f0;
  p->devs[1] = &f1;
  build(p);
  uop_var_val vv[NBUF + 1];
  uint64_t addr[NBUF];
  int bad_replays = 0;
  for (int r = 0; r < 60; r++) {
    int64_t nval = 1 + (int64_t)(rng() % 100000);
    fill_vals(p, vv, addr, nval);
    if (r % 5 == 4) addr[3] = addr[2], vv[3].value = vv[2].value; /* aliasing inputs */
    clear_logs(p);
    hcq_status st = hcq_graph_replay(p->g, vv, NBUF + 1, 1000);
    CHECK_OK(st);
    if (check_replay(p, addr, nval)) bad_replays++;
    /* Each replay advanced each device's timeline by one, and the graph's epilogue signalled exactly that. */
    for (int d = 0; d < 2; d++) {
      hcq_device *dev = &p->devs[d]->dev;
      if (hcq_timeline_last(dev) != (uint64_t)r + 1 || hcq_signal_value(dev->timeline) != (uint64_t)r + 1) bad_replays++;
    }
  }
  CHECK_EQ_INT(bad_replays, 0);
  CHECK_EQ_INT(hcq_graph_kickoff(p->g), 60);

  /* A missing variable: nothing is submitted, nothing advances. */
  size_t submits = f0.submits + f1.submits;
  vv[5].name = "not_buf5";
  CHECK_ERR(hcq_graph_replay(p->g, vv, NBUF + 1, 1000), HCQ_CODE_NOT_FOUND, "buf5");
  CHECK_EQ_INT(f0.submits + f1.submits, submits);
  CHECK_EQ_INT(hcq_graph_kickoff(p->g), 60);
  CHECK_EQ_INT(hcq_timeline_last(&f0.dev), 60);

  /* Timeline wrap between replays: the graph follows the swap through the symbolic timeline address. */
  hcq_signal *old_tl = f0.dev.timeline;
  f0.dev.timeline_value = HCQ_TIMELINE_WRAP_AT + 2;
  hcq_signal_set(f0.dev.timeline, HCQ_TIMELINE_WRAP_AT + 1);
  fill_vals(p, vv, addr, 77);
  clear_logs(p);
  CHECK_OK(hcq_graph_replay(p->g, vv, NBUF + 1, 1000));
  CHECK_EQ_INT(f0.dev.timeline_wraps, 1);
  CHECK(f0.dev.timeline != old_tl);
  CHECK_EQ_INT(hcq_signal_value(f0.dev.timeline), 1); /* the new timeline signal got the epilogue's value */
  CHECK_EQ_INT(hcq_timeline_last(&f0.dev), 1);
  CHECK_EQ_INT(hcq_signal_value(old_tl), HCQ_TIMELINE_WRAP_AT + 1); /* the old one is left alone */
  CHECK_EQ_INT(check_replay(p, addr, 77), 0);
  fill_vals(p, vv, addr, 78);
  clear_logs(p);
  CHECK_OK(hcq_graph_replay(p->g, vv, NBUF + 1, 1000));
  CHECK_EQ_INT(hcq_signal_value(f0.dev.timeline), 2);
  CHECK_EQ_INT(check_replay(p, addr, 78), 0);

  hcq_graph_destroy(p->g);
  free(p);
  fake_dev_fini(&f0);
  fake_dev_fini(&f1);
  CHECK_EQ_INT(f0.mem_live + f1.mem_live, 0);
}

/* A device that never runs anything: the second replay must wait for the first and time out, not patch. */
static void test_replay_waits_for_previous(void) {
  fake_dev f;
  CHECK_OK(fake_dev_init(&f, "IDLE:0", false));
  hcq_graph *g;
  CHECK_OK(hcq_graph_create(ctx, &g));
  hcq_queue *q;
  CHECK_OK(hcq_graph_queue(g, &f.dev, HCQ_QUEUE_COMPUTE, &q));
  const uop *x = hcq_graph_var(g, "x");
  CHECK_OK(hcq_queue_emit64(q, hcq_sym(x)));
  CHECK_ERR(hcq_graph_replay(g, NULL, 0, 10), HCQ_CODE_INVALID, "finalize");
  CHECK_OK(hcq_graph_finalize(g));
  uop_var_val v = {"x", 0x1111};
  CHECK_OK(hcq_graph_replay(g, &v, 1, 10));
  /* The word after the prologue wait (a 6-dword WAIT_MEM packet of the fake GPU) is the x patch. */
  CHECK_EQ_INT(f.last[0][6], 0x1111);
  v.value = 0x2222;
  size_t submits = f.submits;
  uint64_t t0 = hcq_now_ns();
  CHECK_ERR(hcq_graph_replay(g, &v, 1, 30), HCQ_CODE_TIMEOUT, "graph_done:IDLE:0");
  CHECK((hcq_now_ns() - t0) / 1000000u < 1000);
  CHECK_EQ_INT(f.submits, submits);
  CHECK_EQ_INT(hcq_queue_words(q)[6], 0x1111); /* not patched while the device might read it */
  /* The device finishes the first run (done signal = kickoff 1, timeline = 1): the replay goes through. */
  /* The epilogue is signal(done, kickoff) then signal(timeline, tl+1), two 6-dword RELEASE packets: the done
   * packet starts 12 dwords from the end, its address is payload dwords 1-2. */
  uint64_t done_va = 0;
  const uint32_t *w = f.last[0];
  size_t nw = f.last_n[0];
  CHECK(nw >= 19);
  if (nw >= 19 && w[nw - 12] == FAKE_PKT3(FAKE_OP_RELEASE, 5)) done_va = (uint64_t)w[nw - 10] | ((uint64_t)w[nw - 9] << 32);
  CHECK(done_va != 0);
  if (done_va) *(volatile uint64_t *)(uintptr_t)done_va = 1;
  hcq_signal_set(f.dev.timeline, 1);
  CHECK_OK(hcq_graph_replay(g, &v, 1, 30));
  CHECK_EQ_INT(f.last[0][6], 0x2222);
  if (done_va) *(volatile uint64_t *)(uintptr_t)done_va = 2; /* let destroy finish */
  hcq_graph_destroy(g);
  fake_dev_fini(&f);
}

int main(void) {
  CHECK_OK(uop_ctx_create(&ctx));
  test_replays();
  test_replay_waits_for_previous();
  uop_ctx_destroy(ctx);
  return testing_summary("hcq/graph_test");
}
