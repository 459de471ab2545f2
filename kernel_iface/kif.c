/* The kif context: routes calls to the real or a mock backend, keeps the fd and mapping tables, injects faults
 * and writes trace lines. Layout of a call: begin (sequence number, clock) -> fault check -> backend op ->
 * end (trace line, status). */
#include "kernel_iface/kif.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "kernel_iface/kif_context.h"
#include "kernel_iface/kif_internal.h"

/* ---- small helpers ---------------------------------------------------------------------------------------- */

bool kif_grow_(void **array, size_t *cap, size_t need, size_t elem_B) {
  if (need <= *cap) return true;
  size_t new_cap = *cap ? *cap * 2 : 8;
  while (new_cap < need) new_cap *= 2;
  void *p = realloc(*array, new_cap * elem_B);
  if (!p) return false;
  *array = p;
  *cap = new_cap;
  return true;
}

void kif_lock_(kif *k) { pthread_mutex_lock(&k->mu); }
void kif_unlock_(kif *k) { pthread_mutex_unlock(&k->mu); }

void kif_update_slow_mmio_locked_(kif *k) {
  int slow = k->map_count > 0 || k->trace != NULL || k->fault_count > 0;
  __atomic_store_n(&k->slow_mmio, slow, __ATOMIC_RELAXED);
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void kif_account_slow_mmio_(kif_call *c) {
  __atomic_fetch_add(&c->k->slow_mmio_ns, now_ns() - c->t0_ns, __ATOMIC_RELAXED);
}

uint64_t kif_slow_mmio_ns(kif *k) { return k ? __atomic_load_n(&k->slow_mmio_ns, __ATOMIC_RELAXED) : 0; }

bool kif_is_mock_(kif_backend *b) { return b != kif_real_backend(); }

static hcq_code code_for_errno(int err) {
  switch (err) {
  case ENOENT: case ENODEV: case ENXIO: return HCQ_CODE_NOT_FOUND;
  case ENOMEM: return HCQ_CODE_NOMEM;
  case ENOTTY: case ENOSYS: case EOPNOTSUPP: return HCQ_CODE_UNSUPPORTED;
  case ETIMEDOUT: return HCQ_CODE_TIMEOUT;
  default: return HCQ_CODE_IO;
  }
}

int kif_status_errno(hcq_status st) {
  const char *msg = hcq_status_message(st), *hit = NULL;
  for (const char *p = strstr(msg, "errno="); p; p = strstr(p + 1, "errno=")) hit = p;
  return hit ? atoi(hit + 6) : 0;
}

const char *kif_op_name(kif_op op) {
  static const char *const names[KIF_OP_COUNT_] = {
      [KIF_OP_ANY] = "any", [KIF_OP_OPEN] = "open", [KIF_OP_CLOSE] = "close", [KIF_OP_IOCTL] = "ioctl",
      [KIF_OP_READ] = "read", [KIF_OP_WRITE] = "write", [KIF_OP_EVENTFD] = "eventfd", [KIF_OP_MMAP] = "mmap",
      [KIF_OP_MUNMAP] = "munmap", [KIF_OP_MMIO_WRITE] = "mmio_write", [KIF_OP_READ_FILE] = "read_file",
      [KIF_OP_WRITE_FILE] = "write_file", [KIF_OP_READLINK] = "readlink", [KIF_OP_LISTDIR] = "listdir",
  };
  return (unsigned)op < KIF_OP_COUNT_ ? names[op] : "?";
}

int kif_dirlist_add(kif_dirlist *list, const char *name) {
  if (!kif_grow_((void **)&list->names, &list->capacity, list->count + 1, sizeof *list->names)) return ENOMEM;
  char *copy = strdup(name);
  if (!copy) return ENOMEM;
  list->names[list->count++] = copy;
  return 0;
}

void kif_dirlist_free(kif_dirlist *list) {
  if (!list) return;
  for (size_t i = 0; i < list->count; i++) free(list->names[i]);
  free(list->names);
  memset(list, 0, sizeof *list);
}

/* ---- calls: sequence, faults, trace line, status ---------------------------------------------------------- */

void kif_call_begin_(kif_call *c, kif *k, kif_op op, kif_backend *backend) {
  c->k = k;
  c->op = op;
  c->op_text = kif_op_name(op);
  c->backend = backend ? backend : kif_real_backend();
  c->subject[0] = c->detail[0] = '\0';
  c->injected = false;
  kif_lock_(k);
  c->seq = ++k->seq;
  c->trace = k->trace;
  kif_unlock_(k);
  c->t0_ns = now_ns();
}

/* The errno to inject for this call, or 0. */
int kif_call_fault_(kif_call *c, const char *path, bool has_request, unsigned long request) {
  kif *k = c->k;
  int err = 0;
  kif_lock_(k);
  for (size_t i = 0; i < k->fault_count; i++) {
    kif_fault_rule *r = &k->faults[i];
    if (r->fault.op != KIF_OP_ANY && r->fault.op != c->op) continue;
    if (r->fault.match_request && (!has_request || r->fault.request != request)) continue;
    if (r->prefix && (!path || !kif_path_has_prefix(path, r->prefix))) continue;
    r->seen++;
    if (!err && (r->fault.nth == 0 || r->seen == r->fault.nth)) err = r->fault.err;
  }
  kif_unlock_(k);
  if (err) c->injected = true;
  return err;
}

/* Copies text into out replacing '"', '\\' and control characters, for one-line trace output. */
static void sanitize(const char *text, char *out, size_t out_size_B) {
  size_t n = 0;
  for (; *text && n + 1 < out_size_B; text++, n++) {
    unsigned char ch = (unsigned char)*text;
    out[n] = (ch < 0x20 || ch == 0x7f || ch == '"' || ch == '\\') ? '?' : (char)ch;
  }
  out[n] = '\0';
}

/* One trace line. result NULL: the "before" line of an ioctl (no result, no duration). */
void kif_call_trace_(kif_call *c, const char *tail, int err, const char *result) {
  if (!c->trace) return;
  char line[PATH_MAX + 4096];
  int len = snprintf(line, sizeof line, "kif %llu %s %s", (unsigned long long)c->seq, c->op_text, c->subject);
  if (kif_is_mock_(c->backend)) len += snprintf(line + len, sizeof line - (size_t)len, " [%s]", c->backend->name);
  if (tail && *tail) len += snprintf(line + len, sizeof line - (size_t)len, " %s", tail);
  if (result || err) {
    uint64_t dur_us = c->k->fixed_durations ? 0 : (now_ns() - c->t0_ns) / 1000u;
    if (err) {
      const char *name = kif_errno_name(err);
      char detail[KIF_DETAIL_MAX];
      sanitize(c->detail, detail, sizeof detail);
      len += snprintf(line + len, sizeof line - (size_t)len, " -> err=%s(%d)%s%s%s%s", name ? name : "E?", err,
                      c->injected ? " injected" : "", detail[0] ? " \"" : "", detail, detail[0] ? "\"" : "");
    } else {
      len += snprintf(line + len, sizeof line - (size_t)len, " -> %s", result);
    }
    snprintf(line + len, sizeof line - (size_t)len, " %lluus", (unsigned long long)dur_us);
  }
  size_t n = strlen(line);
  if (n + 1 < sizeof line) line[n++] = '\n', line[n] = '\0';
  else line[sizeof line - 2] = '\n';
  fputs(line, c->trace);
  fflush(c->trace);
}

static hcq_status call_status(kif_call *c, int err) {
  char buf[128];
  const char *text = strerror_r(err, buf, sizeof buf);
  const char *name = kif_errno_name(err);
  return hcq_status_make(code_for_errno(err), "kif %s %s%s%s: %s%s%s(errno=%d %s: %s)", kif_op_name(c->op),
                         c->subject, kif_is_mock_(c->backend) ? " via mock " : "",
                         kif_is_mock_(c->backend) ? c->backend->name : "", c->injected ? "injected fault " : "",
                         c->detail, c->detail[0] ? " " : "", err, name ? name : "E?", text);
}

/* Trace the end of the call and turn err into a status. */
hcq_status kif_call_end_(kif_call *c, int err, const char *tail, const char *ok_result) {
  kif_call_trace_(c, tail, err, ok_result ? ok_result : "ok");
  return err ? call_status(c, err) : HCQ_OK;
}

int kif_not_implemented_(kif_call *c, const char *op) {
  snprintf(c->detail, sizeof c->detail, "mock %s does not implement %s", c->backend->name, op);
  return EOPNOTSUPP;
}

/* ---- routing and the fd table ----------------------------------------------------------------------------- */

kif_backend *kif_route_locked_(kif *k, const char *norm_path) {
  kif_backend *best = NULL;
  size_t best_len = 0;
  for (size_t i = 0; i < k->claim_count; i++) {
    size_t n = strlen(k->claims[i].prefix);
    if ((!best || n > best_len) && kif_path_has_prefix(norm_path, k->claims[i].prefix)) {
      best = k->claims[i].backend;
      best_len = n;
    }
  }
  return best ? best : kif_real_backend();
}

kif_backend *kif_route(kif *k, const char *path) {
  char norm[PATH_MAX];
  if (!k || !path || !kif_path_normalize(path, norm, sizeof norm)) return NULL;
  kif_lock_(k);
  kif_backend *b = kif_route_locked_(k, norm);
  kif_unlock_(k);
  return kif_is_mock_(b) ? b : NULL;
}

/* Find an open fd and take a reference for the duration of a call. */
kif_open_file *kif_of_get_(kif *k, int fd) {
  kif_open_file *found = NULL;
  kif_lock_(k);
  for (size_t i = 0; i < k->file_count; i++) {
    if (k->files[i]->file.fd == fd) {
      found = k->files[i];
      found->refs++;
      break;
    }
  }
  kif_unlock_(k);
  return found;
}

/* Drop a reference; the last one runs the backend's close (unless it already ran) and frees. */
int kif_of_put_(kif *k, kif_open_file *of) {
  if (!of) return 0;
  kif_lock_(k);
  bool last = --of->refs == 0;
  kif_unlock_(k);
  if (!last) return 0;
  int err = 0;
  if (!of->backend_closed && of->backend->vtable->close) err = of->backend->vtable->close(of->backend, &of->file);
  free(of->path);
  free(of);
  return err;
}

/* Remove from the fd table (the fd number is gone); the object lives on while referenced. */
bool kif_of_unlist_(kif *k, int fd, kif_open_file **out_of) {
  bool found = false;
  kif_lock_(k);
  for (size_t i = 0; i < k->file_count; i++) {
    if (k->files[i]->file.fd == fd) {
      *out_of = k->files[i];
      k->files[i] = k->files[--k->file_count];
      found = true;
      break;
    }
  }
  kif_unlock_(k);
  return found;
}

int kif_of_list_(kif *k, kif_open_file *of) {
  int err = 0;
  kif_lock_(k);
  if (kif_grow_((void **)&k->files, &k->file_cap, k->file_count + 1, sizeof *k->files))
    k->files[k->file_count++] = of;
  else
    err = ENOMEM;
  kif_unlock_(k);
  return err;
}

const char *kif_fd_path(kif *k, int fd) {
  if (!k) return NULL;
  const char *path = NULL;
  kif_lock_(k);
  for (size_t i = 0; i < k->file_count; i++)
    if (k->files[i]->file.fd == fd) path = k->files[i]->path;
  kif_unlock_(k);
  return path;
}

/* ---- context ---------------------------------------------------------------------------------------------- */

hcq_status kif_create(kif **out_kif) {
  if (!out_kif) return hcq_status_make(HCQ_CODE_INVALID, "kif_create: out_kif is NULL");
  *out_kif = NULL;
  kif *k = calloc(1, sizeof *k);
  if (!k) return hcq_status_make(HCQ_CODE_NOMEM, "kif_create: out of memory");
  k->placeholder_fd = eventfd(0, EFD_CLOEXEC);
  if (k->placeholder_fd < 0) {
    int err = errno;
    free(k);
    return hcq_status_make(code_for_errno(err), "kif_create: placeholder eventfd failed (errno=%d %s)", err,
                           kif_errno_name(err) ? kif_errno_name(err) : "E?");
  }
  pthread_mutex_init(&k->mu, NULL);
  const char *env = getenv("HCQ_TRACE");
  if (env && *env && strcmp(env, "0") != 0) k->trace = stderr;
  kif_update_slow_mmio_locked_(k);
  *out_kif = k;
  return HCQ_OK;
}

void kif_destroy(kif *k) {
  if (!k) return;
  /* Mock mappings first (each holds a file reference), then files still open. */
  while (k->map_count) {
    kif_mapping m = k->maps[--k->map_count];
    kif_backend *b = m.of->backend;
    if (b->vtable->munmap) b->vtable->munmap(b, &m.of->file, (void *)m.start, m.size_B);
    kif_of_put_(k, m.of);
  }
  while (k->file_count) {
    kif_open_file *of = k->files[--k->file_count];
    if (kif_is_mock_(of->backend)) close(of->file.fd);
    kif_of_put_(k, of);
  }
  for (size_t i = 0; i < k->claim_count; i++) free(k->claims[i].prefix);
  for (size_t i = 0; i < k->fault_count; i++) free(k->faults[i].prefix);
  free(k->claims);
  free(k->files);
  free(k->maps);
  free(k->faults);
  free(k->tables);
  close(k->placeholder_fd);
  pthread_mutex_destroy(&k->mu);
  free(k);
}

static kif *g_default_set;
static kif *g_default_builtin;
static pthread_once_t g_default_once = PTHREAD_ONCE_INIT;

static void create_builtin_default(void) {
  hcq_status st = kif_create(&g_default_builtin);
  hcq_status_free(st); /* on failure kif_default() returns NULL and callers report it */
}

kif *kif_default(void) {
  kif *set = __atomic_load_n(&g_default_set, __ATOMIC_ACQUIRE);
  if (set) return set;
  pthread_once(&g_default_once, create_builtin_default);
  return g_default_builtin;
}

void kif_set_default(kif *k) { __atomic_store_n(&g_default_set, k, __ATOMIC_RELEASE); }

/* ---- registration ----------------------------------------------------------------------------------------- */

hcq_status kif_register(kif *k, kif_backend *backend, const char *const *prefixes, size_t prefix_count) {
  if (!k || !backend || !backend->vtable || !backend->name || (prefix_count && !prefixes))
    return hcq_status_make(HCQ_CODE_INVALID, "kif_register: NULL argument");
  char norm[PATH_MAX];
  for (size_t i = 0; i < prefix_count; i++) {
    if (!prefixes[i] || prefixes[i][0] != '/' || !kif_path_normalize(prefixes[i], norm, sizeof norm))
      return hcq_status_make(HCQ_CODE_INVALID, "kif_register %s: prefix \"%s\" is not an absolute path",
                             backend->name, prefixes[i] ? prefixes[i] : "(null)");
  }
  hcq_status st = HCQ_OK;
  kif_lock_(k);
  size_t first_new = k->claim_count;
  for (size_t i = 0; i < prefix_count && !st; i++) {
    kif_path_normalize(prefixes[i], norm, sizeof norm);
    for (size_t j = 0; j < k->claim_count && !st; j++)
      if (strcmp(k->claims[j].prefix, norm) == 0)
        st = hcq_status_make(HCQ_CODE_INVALID, "kif_register %s: prefix %s already claimed by mock %s",
                             backend->name, norm, k->claims[j].backend->name);
    if (st) break;
    char *copy = strdup(norm);
    if (!copy || !kif_grow_((void **)&k->claims, &k->claim_cap, k->claim_count + 1, sizeof *k->claims)) {
      free(copy);
      st = hcq_status_make(HCQ_CODE_NOMEM, "kif_register %s: out of memory", backend->name);
      break;
    }
    k->claims[k->claim_count++] = (kif_claim){copy, backend};
  }
  if (st) { /* all or nothing */
    while (k->claim_count > first_new) free(k->claims[--k->claim_count].prefix);
  }
  kif_unlock_(k);
  return st;
}

hcq_status kif_unregister(kif *k, kif_backend *backend) {
  if (!k || !backend) return hcq_status_make(HCQ_CODE_INVALID, "kif_unregister: NULL argument");
  size_t open_files = 0, mappings = 0;
  kif_lock_(k);
  for (size_t i = 0; i < k->file_count; i++) open_files += k->files[i]->backend == backend;
  for (size_t i = 0; i < k->map_count; i++) mappings += k->maps[i].of->backend == backend;
  if (!open_files && !mappings) {
    size_t kept = 0;
    for (size_t i = 0; i < k->claim_count; i++) {
      if (k->claims[i].backend == backend) free(k->claims[i].prefix);
      else k->claims[kept++] = k->claims[i];
    }
    k->claim_count = kept;
  }
  kif_unlock_(k);
  if (open_files || mappings)
    return hcq_status_make(HCQ_CODE_INVALID, "kif_unregister %s: %zu files still open, %zu mappings still mapped",
                           backend->name, open_files, mappings);
  return HCQ_OK;
}

/* ---- tracing and faults configuration --------------------------------------------------------------------- */

void kif_trace_set_output(kif *k, FILE *out) {
  if (!k) return;
  kif_lock_(k);
  k->trace = out;
  kif_update_slow_mmio_locked_(k);
  kif_unlock_(k);
}

hcq_status kif_register_decoder(kif *k, const kif_ioctl_table *table) {
  if (!k || !table || !table->path_prefix || (table->count && !table->descs))
    return hcq_status_make(HCQ_CODE_INVALID, "kif_register_decoder: NULL context, table, path_prefix or descs");
  hcq_status st = HCQ_OK;
  kif_lock_(k);
  size_t i = 0;
  while (i < k->table_count && strcmp(k->tables[i]->path_prefix, table->path_prefix) != 0) i++;
  if (i == k->table_count && !kif_grow_((void **)&k->tables, &k->table_cap, i + 1, sizeof *k->tables))
    st = hcq_status_make(HCQ_CODE_NOMEM, "kif_register_decoder %s: out of memory", table->path_prefix);
  else if (i == k->table_count)
    k->tables[k->table_count++] = table;
  else
    k->tables[i] = table; /* same prefix: the newer table replaces the older one */
  kif_unlock_(k);
  return st;
}

void kif_clear_decoders(kif *k) {
  if (!k) return;
  kif_lock_(k);
  k->table_count = 0;
  kif_unlock_(k);
}

void kif_trace_set_fixed_durations(kif *k, bool fixed) {
  if (!k) return;
  kif_lock_(k);
  k->fixed_durations = fixed;
  kif_unlock_(k);
}

hcq_status kif_fault_add(kif *k, const kif_fault *fault) {
  if (!k || !fault) return hcq_status_make(HCQ_CODE_INVALID, "kif_fault_add: NULL argument");
  if (fault->err <= 0 || (unsigned)fault->op >= KIF_OP_COUNT_)
    return hcq_status_make(HCQ_CODE_INVALID, "kif_fault_add: err must be a positive errno (got %d), op valid",
                           fault->err);
  kif_fault_rule rule = {.fault = *fault};
  if (fault->match_request && rule.fault.op == KIF_OP_ANY) rule.fault.op = KIF_OP_IOCTL;
  rule.fault.path_prefix = NULL;
  if (fault->path_prefix) {
    char norm[PATH_MAX];
    if (!kif_path_normalize(fault->path_prefix, norm, sizeof norm))
      return hcq_status_make(HCQ_CODE_INVALID, "kif_fault_add: path prefix too long");
    if (!(rule.prefix = strdup(norm))) return hcq_status_make(HCQ_CODE_NOMEM, "kif_fault_add: out of memory");
  }
  kif_lock_(k);
  bool ok = kif_grow_((void **)&k->faults, &k->fault_cap, k->fault_count + 1, sizeof *k->faults);
  if (ok) k->faults[k->fault_count++] = rule;
  kif_update_slow_mmio_locked_(k);
  kif_unlock_(k);
  if (!ok) {
    free(rule.prefix);
    return hcq_status_make(HCQ_CODE_NOMEM, "kif_fault_add: out of memory");
  }
  return HCQ_OK;
}

void kif_fault_reset(kif *k) {
  if (!k) return;
  kif_lock_(k);
  for (size_t i = 0; i < k->fault_count; i++) free(k->faults[i].prefix);
  k->fault_count = 0;
  kif_update_slow_mmio_locked_(k);
  kif_unlock_(k);
}

hcq_status kif_fault_nth_call(kif *k, uint64_t nth, int err) {
  if (nth == 0) return hcq_status_make(HCQ_CODE_INVALID, "kif_fault_nth_call: nth is 1-based");
  return kif_fault_add(k, &(kif_fault){.op = KIF_OP_ANY, .nth = nth, .err = err});
}

hcq_status kif_fault_ioctl(kif *k, unsigned long request, int err) {
  return kif_fault_add(k, &(kif_fault){.op = KIF_OP_IOCTL, .match_request = true, .request = request, .err = err});
}

hcq_status kif_fault_path(kif *k, const char *path_prefix, int err) {
  if (!path_prefix) return hcq_status_make(HCQ_CODE_INVALID, "kif_fault_path: NULL prefix");
  return kif_fault_add(k, &(kif_fault){.op = KIF_OP_ANY, .path_prefix = path_prefix, .err = err});
}
