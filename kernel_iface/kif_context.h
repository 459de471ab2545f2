/* The kif context's internals, shared by kif.c (context, registration, call machinery) and kif_ops.c (the
 * calls themselves). Not part of the public API. */
#ifndef HCQ_KIF_CONTEXT_H
#define HCQ_KIF_CONTEXT_H

#include <limits.h>
#include <pthread.h>

#include "kernel_iface/kif.h"
#include "kernel_iface/kif_backend.h"

/* One open file. refs: 1 while its fd is open, +1 per mock mapping, +1 per call in flight. */
typedef struct kif_open_file {
  kif_file file;
  kif_backend *backend;
  char *path;
  int refs;
  bool backend_closed; /* the backend's close already ran (real files close at kif_close time) */
} kif_open_file;

typedef struct kif_claim {
  char *prefix;
  kif_backend *backend;
} kif_claim;

/* A mapping made by a mock backend. */
typedef struct kif_mapping {
  uintptr_t start;
  size_t size_B;
  uint64_t offset;
  kif_open_file *of;
} kif_mapping;

typedef struct kif_fault_rule {
  kif_fault fault;
  char *prefix;
  uint64_t seen;
} kif_fault_rule;

struct kif {
  pthread_mutex_t mu;
  int placeholder_fd; /* mock fds are dups of this eventfd */
  kif_claim *claims;
  size_t claim_count, claim_cap;
  kif_open_file **files;
  size_t file_count, file_cap;
  kif_mapping *maps;
  size_t map_count, map_cap;
  kif_fault_rule *faults;
  size_t fault_count, fault_cap;
  FILE *trace;
  const kif_ioctl_table **tables; /* registered decoders (kif_register_decoder); the tables are the caller's */
  size_t table_count, table_cap;
  bool fixed_durations;
  uint64_t seq;
  int slow_mmio; /* atomic: mock mappings, tracing or fault rules exist */
  uint64_t slow_mmio_ns; /* atomic: time spent in slow-path MMIO stores (kif_slow_mmio_ns) */
};

typedef struct kif_call {
  kif *k;
  kif_op op;
  const char *op_text; /* trace name; kif_op_name(op) unless overridden (mmio32, exists) */
  uint64_t seq, t0_ns;
  FILE *trace;
  kif_backend *backend;
  char subject[PATH_MAX + 160];
  char detail[KIF_DETAIL_MAX];
  bool injected;
} kif_call;

void kif_lock_(kif *k);
void kif_unlock_(kif *k);
bool kif_grow_(void **array, size_t *cap, size_t need, size_t elem_B);
void kif_update_slow_mmio_locked_(kif *k);
/* Add the time since c->t0_ns to k->slow_mmio_ns. */
void kif_account_slow_mmio_(kif_call *c);
bool kif_is_mock_(kif_backend *b);

void kif_call_begin_(kif_call *c, kif *k, kif_op op, kif_backend *backend);
int kif_call_fault_(kif_call *c, const char *path, bool has_request, unsigned long request);
/* One trace line; result NULL and err 0: the "before" line of an ioctl. */
void kif_call_trace_(kif_call *c, const char *tail, int err, const char *result);
/* Trace the end of the call and turn err into a status naming op, subject, backend and errno. */
hcq_status kif_call_end_(kif_call *c, int err, const char *tail, const char *ok_result);
int kif_not_implemented_(kif_call *c, const char *op);

kif_backend *kif_route_locked_(kif *k, const char *norm_path);
kif_open_file *kif_of_get_(kif *k, int fd);
int kif_of_put_(kif *k, kif_open_file *of);
bool kif_of_unlist_(kif *k, int fd, kif_open_file **out_of);
int kif_of_list_(kif *k, kif_open_file *of);

#endif
