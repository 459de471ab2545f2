/* The emulated KFD: file tree (sysfs topology, ip_discovery, device nodes), mmap, doorbells and the KFD ioctls.
 * Error codes follow linux 6.1 drivers/gpu/drm/amd/amdkfd/kfd_chardev.c; where the mock refuses something the
 * kernel would accept (AQL queues, an ioctl it does not emulate) it says "mock" in the detail. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "autogen/kfd.h"
#include "emulator_tests/kfd_mock_internal.h"

/* Topology values: gfx1100 as the reference's mock dumps it (tinygrad test/mockgpu/amd/amddriver.py); the others
 * from public spec sheets (MI210: 104 CUs, MI300X per XCC: 38 CUs, RX 9070 XT: 64 CUs). GC segment bases: gfx11
 * from sienna_cichlid_ip_offset.h, gfx9 from vega10_ip_offset.h (GC_BASE INST0 SEG0/1). */
static const kfd_mock_arch k_arches[] = {
    {"gfx1100", 110000, 192, 2, 16, 12, 2, 32, 64, 1, {11, 0, 0}, {6, 0, 0}, {4, 3, 0}, {0x1260, 0xA000, 0x1C000, 0x2402C00}},
    {"gfx1201", 120001, 128, 2, 16, 8, 2, 32, 64, 1, {12, 0, 1}, {7, 0, 1}, {6, 3, 1}, {0x1260, 0xA000, 0x1C000, 0x2402C00}},
    {"gfx90a", 90010, 416, 4, 8, 8, 1, 32, 64, 1, {9, 4, 2}, {4, 4, 2}, {7, 4, 0}, {0x2000, 0xA000, 0, 0}},
    /* gfx1030 (RX 6800 XT, 72 CUs) exists so tests can check that the driver refuses a target it does not support. */
    {"gfx1030", 100300, 144, 2, 16, 8, 2, 32, 64, 1, {10, 3, 0}, {5, 2, 0}, {3, 3, 0}, {0x1260, 0xA000, 0x1C000, 0x2402C00}},
    {"gfx942", 90402, 152, 4, 8, 4, 1, 32, 64, 1, {9, 4, 3}, {4, 4, 2}, {7, 9, 0}, {0x2000, 0xA000, 0, 0}},
};

enum { FILE_KFD = 1, FILE_RENDER = 2 };
#define RENDER_MINOR0 128
#define FILE_TAG(kind, gpu) ((void *)(uintptr_t)((kind) | ((gpu) << 4)))
#define TAG_KIND(p) ((unsigned)(uintptr_t)(p) & 15u)
#define TAG_GPU(p) ((unsigned)(uintptr_t)(p) >> 4)

static uint32_t gpu_id_of(unsigned i) { return 0x1111u * (i + 1); } /* real ids are hashes; any non-zero works */

static int gpu_index(const kfd_mock *m, uint32_t gpu_id) {
  for (unsigned i = 0; i < m->cfg.gpu_count; i++)
    if (gpu_id_of(i) == gpu_id) return (int)i;
  return -1;
}

uint64_t kfd_mock_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t kfd_mock_gpu_clock(const kfd_mock *m) {
  return KFD_MOCK_GPU_CLOCK_START + (kfd_mock_now_ns() - m->created_ns) / 10; /* 100 MHz */
}

void kfd_mock_report(kfd_mock *m, const char *fmt, ...) {
  if (m->last_error) return; /* keep the first: later ones are usually consequences */
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&m->last_error, fmt, ap) < 0) m->last_error = NULL;
  va_end(ap);
  if (m->last_error) fprintf(stderr, "amd mock: %s\n", m->last_error);
}

/* ---- configuration ---------------------------------------------------------------------------------------- */

static const kfd_mock_arch *find_arch(const char *name) {
  for (size_t i = 0; i < sizeof k_arches / sizeof k_arches[0]; i++)
    if (!strcmp(k_arches[i].name, name)) return &k_arches[i];
  return NULL;
}

hcq_status kfd_mock_config_from_env(kfd_mock_config *out) {
  memset(out, 0, sizeof *out);
  const char *arch = getenv("HCQ_MOCK_AMD_ARCH"), *gpus = getenv("HCQ_MOCK_AMD_GPUS");
  out->arch = arch && *arch ? arch : "gfx1100";
  if (!find_arch(out->arch))
    return hcq_status_make(HCQ_CODE_INVALID, "HCQ_MOCK_AMD_ARCH=%s: the amd mock knows gfx1100, gfx1201, gfx90a, gfx942, gfx1030",
                           out->arch);
  if (gpus && *gpus) {
    char *end;
    long n = strtol(gpus, &end, 10);
    if (*end || n < 1 || n > KFD_MOCK_MAX_GPUS)
      return hcq_status_make(HCQ_CODE_INVALID, "HCQ_MOCK_AMD_GPUS=%s: expected 1..%d", gpus, KFD_MOCK_MAX_GPUS);
    out->gpu_count = (unsigned)n;
  }
  return HCQ_OK;
}

static const kif_backend_vtable k_vtable;

hcq_status kfd_mock_create(const kfd_mock_config *cfg, kfd_mock **out) {
  *out = NULL;
  kfd_mock_config c = cfg ? *cfg : (kfd_mock_config){0};
  if (!c.arch) c.arch = "gfx1100";
  if (!c.gpu_count) c.gpu_count = 1;
  if (!c.vram_size_B) c.vram_size_B = 1ull << 30;
  if (!c.wait_timeout_ms) c.wait_timeout_ms = 2000;
  const kfd_mock_arch *a = find_arch(c.arch);
  if (!a) return hcq_status_make(HCQ_CODE_INVALID, "amd mock: unknown arch '%s' (gfx1100, gfx1201, gfx90a, gfx942, gfx1030)", c.arch);
  if (c.gpu_count > KFD_MOCK_MAX_GPUS)
    return hcq_status_make(HCQ_CODE_INVALID, "amd mock: %u GPUs requested, at most %d", c.gpu_count, KFD_MOCK_MAX_GPUS);
  kfd_mock *m = aligned_alloc(4096, (sizeof *m + 4095) & ~(size_t)4095);
  if (!m) return hcq_status_make(HCQ_CODE_NOMEM, "amd mock: out of memory");
  memset(m, 0, sizeof *m);
  m->base.vtable = &k_vtable;
  m->base.name = "amd-mock";
  m->cfg = c;
  m->arch = a;
  m->next_handle = 1;
  m->next_queue_id = 1;
  m->created_ns = kfd_mock_now_ns();
  const char *t = getenv("HCQ_TRACE");
  if (t && *t && strcmp(t, "0")) m->trace = stderr;
  pthread_mutexattr_t ma; /* recursive: the dispatch hook runs under the lock and may call kfd_mock_range_ok */
  pthread_mutexattr_init(&ma);
  pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&m->lock, &ma);
  pthread_mutexattr_destroy(&ma);
  pthread_mutex_init(&m->kick_lock, NULL);
  pthread_cond_init(&m->kick_cond, NULL);
  pthread_cond_init(&m->idle_cond, NULL);
  *out = m;
  return HCQ_OK;
}

static const char *const k_prefixes[] = {"/dev/kfd", "/dev/dri", "/sys/devices/virtual/kfd", "/sys/class/drm"};

hcq_status kfd_mock_attach(kfd_mock *m, kif *k) {
  if (m->k) return hcq_status_make(HCQ_CODE_INVALID, "amd mock: already attached to a kif context");
  HCQ_TRY(kif_register(k, &m->base, k_prefixes, sizeof k_prefixes / sizeof k_prefixes[0]));
  m->k = k;
  return HCQ_OK;
}

hcq_status kfd_mock_detach(kfd_mock *m) {
  if (!m->k) return HCQ_OK;
  HCQ_TRY(kif_unregister(m->k, &m->base));
  m->k = NULL;
  return HCQ_OK;
}

void kfd_mock_destroy(kfd_mock *m) {
  if (!m) return;
  kfd_mock_cp_stop(m);
  if (m->k) {
    hcq_status st = kif_unregister(m->k, &m->base);
    if (st) fprintf(stderr, "amd mock: %s\n", hcq_status_message(st));
    hcq_status_free(st);
  }
  for (unsigned i = 0; i < m->alloc_count; i++)
    if (m->allocs[i].cpu_mapped) munmap((void *)(uintptr_t)m->allocs[i].va, m->allocs[i].size_B);
  for (unsigned i = 0; i < KFD_MOCK_MAX_QUEUES; i++) free(m->queues[i]);
  free(m->allocs);
  free(m->last_error);
  pthread_mutex_destroy(&m->lock);
  pthread_mutex_destroy(&m->kick_lock);
  pthread_cond_destroy(&m->kick_cond);
  pthread_cond_destroy(&m->idle_cond);
  free(m);
}

void kfd_mock_set_dispatch_hook(kfd_mock *m, kfd_mock_dispatch_fn fn, void *user) {
  pthread_mutex_lock(&m->lock);
  m->dispatch_fn = fn;
  m->dispatch_user = user;
  pthread_mutex_unlock(&m->lock);
}

const char *kfd_mock_last_error(kfd_mock *m) {
  pthread_mutex_lock(&m->lock);
  const char *e = m->last_error;
  pthread_mutex_unlock(&m->lock);
  return e;
}

unsigned kfd_mock_live_allocations(kfd_mock *m) {
  pthread_mutex_lock(&m->lock);
  unsigned n = 0;
  for (unsigned i = 0; i < m->alloc_count; i++) n += m->allocs[i].live;
  pthread_mutex_unlock(&m->lock);
  return n;
}

uint64_t kfd_mock_packets_executed(kfd_mock *m) {
  pthread_mutex_lock(&m->lock);
  uint64_t n = m->packets;
  pthread_mutex_unlock(&m->lock);
  return n;
}

/* ---- allocations ------------------------------------------------------------------------------------------ */

kfd_mock_alloc *kfd_mock_find_alloc(kfd_mock *m, unsigned gpu, uint64_t va, uint64_t size_B) {
  for (unsigned i = 0; i < m->alloc_count; i++) {
    kfd_mock_alloc *a = &m->allocs[i];
    bool backed = a->cpu_mapped || (a->flags & AMD_KFD_IOC_ALLOC_MEM_FLAGS_USERPTR);
    if (a->live && backed && (a->mapped >> gpu & 1) && va >= a->va && size_B <= a->size_B &&
        va - a->va <= a->size_B - size_B)
      return a;
  }
  return NULL;
}

bool kfd_mock_range_ok(kfd_mock *m, unsigned gpu, uint64_t va, uint64_t size_B) {
  pthread_mutex_lock(&m->lock);
  bool ok = kfd_mock_find_alloc(m, gpu, va, size_B) != NULL;
  pthread_mutex_unlock(&m->lock);
  return ok;
}

uint64_t kfd_mock_bytes_after(kfd_mock *m, unsigned gpu, uint64_t va) {
  pthread_mutex_lock(&m->lock);
  kfd_mock_alloc *a = kfd_mock_find_alloc(m, gpu, va, 1);
  uint64_t n = a ? a->va + a->size_B - va : 0;
  pthread_mutex_unlock(&m->lock);
  return n;
}

static kfd_mock_alloc *alloc_by_handle(kfd_mock *m, uint64_t handle) {
  for (unsigned i = 0; i < m->alloc_count; i++)
    if (m->allocs[i].live && m->allocs[i].handle == handle) return &m->allocs[i];
  return NULL;
}

/* ---- file tree -------------------------------------------------------------------------------------------- */

#define TOPO "/sys/devices/virtual/kfd/kfd/topology/nodes"

/* Node 0 is the CPU (gpu_id 0), nodes 1..N the GPUs, as on a real system. */
static char *node_properties(const kfd_mock *m, unsigned node) {
  char *s = NULL;
  int n;
  if (node == 0) {
    n = asprintf(&s, "cpu_cores_count 16\nsimd_count 0\nmem_banks_count 1\ncaches_count 0\nio_links_count %u\n"
                     "gfx_target_version 0\ndrm_render_minor 0\n", m->cfg.gpu_count);
  } else {
    const kfd_mock_arch *a = m->arch;
    n = asprintf(&s,
                 "cpu_cores_count 0\nsimd_count %u\nmem_banks_count 1\ncaches_count 0\nio_links_count 1\n"
                 "max_waves_per_simd %u\nlds_size_in_kb %u\ngds_size_in_kb 0\nnum_gws 64\nwave_front_size %u\n"
                 "array_count %u\nsimd_arrays_per_engine %u\ncu_per_simd_array %u\nsimd_per_cu %u\n"
                 "max_slots_scratch_cu %u\ngfx_target_version %u\nvendor_id 4098\ndevice_id 29772\n"
                 "location_id %u\ndomain 0\ndrm_render_minor %u\nhive_id 0\nnum_sdma_engines 2\n"
                 "num_sdma_xgmi_engines 0\nnum_sdma_queues_per_engine 6\nnum_cp_queues 8\nnum_xcc %u\n",
                 a->simd_count, a->max_waves_per_simd, a->lds_size_in_kb, a->gfx_target_version >= 100000 ? 32 : 64,
                 a->array_count, a->simd_arrays_per_engine, a->simd_count / a->simd_per_cu / a->array_count,
                 a->simd_per_cu, a->max_slots_scratch_cu, a->gfx_target_version, 0x300u + node,
                 RENDER_MINOR0 + node - 1, a->num_xcc);
  }
  return n < 0 ? NULL : s;
}

/* Resolve a path of the tree: a file (*text set, malloc()ed) or a directory (*names, a static or
 * built list). Returns ENOENT when it does not exist. */
typedef struct tree_entry {
  char *text;
  const char *names[16];
  char name_buf[16][12];
  unsigned name_count;
  bool dir;
} tree_entry;

static int add_name(tree_entry *e, const char *fmt, unsigned v) {
  if (e->name_count == 16) return ENOMEM;
  snprintf(e->name_buf[e->name_count], sizeof e->name_buf[0], fmt, v);
  e->names[e->name_count] = e->name_buf[e->name_count];
  e->name_count++;
  return 0;
}

static int text_entry(tree_entry *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int text_entry(tree_entry *e, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vasprintf(&e->text, fmt, ap);
  va_end(ap);
  if (n < 0) { e->text = NULL; return ENOMEM; }
  return 0;
}

static int dir_entry(tree_entry *e, const char *const *names, unsigned count) {
  e->dir = true;
  for (unsigned i = 0; i < count && i < 16; i++) e->names[e->name_count++] = names[i];
  return 0;
}

static const unsigned k_hwids[3] = {11, 42, 108}; /* GC, SDMA0, NBIF (reference am.py HW ids) */

static int ip_discovery(const kfd_mock *m, const char *rest, tree_entry *e) {
  const kfd_mock_arch *a = m->arch;
  unsigned hw, inst, used = 0;
  char file[32] = "";
  if (!*rest) { e->dir = true; return add_name(e, "%u", 0); } /* .../ip_discovery/die */
  if (!strcmp(rest, "/0")) {
    e->dir = true;
    for (int i = 0; i < 3; i++) add_name(e, "%u", k_hwids[i]);
    return 0;
  }
  if (sscanf(rest, "/0/%u%n", &hw, (int *)&used) != 1) return ENOENT;
  int which = hw == 11 ? 0 : hw == 42 ? 1 : hw == 108 ? 2 : -1;
  if (which < 0) return ENOENT;
  rest += used;
  if (!*rest) { e->dir = true; return add_name(e, "%u", 0); }
  if (sscanf(rest, "/%u%n", &inst, (int *)&used) != 1 || inst != 0) return ENOENT;
  rest += used;
  if (!*rest) return dir_entry(e, (const char *const[]){"major", "minor", "revision", "base_addr"}, 4);
  if (sscanf(rest, "/%31s", file) != 1) return ENOENT;
  const unsigned *ver = which == 0 ? a->gc_ver : which == 1 ? a->sdma_ver : a->nbif_ver;
  if (!strcmp(file, "major")) return text_entry(e, "%u\n", ver[0]);
  if (!strcmp(file, "minor")) return text_entry(e, "%u\n", ver[1]);
  if (!strcmp(file, "revision")) return text_entry(e, "%u\n", ver[2]);
  if (strcmp(file, "base_addr")) return ENOENT;
  if (which == 0)
    return text_entry(e, "0x%08X\n0x%08X\n0x%08X\n0x%08X\n", a->gc_base[0], a->gc_base[1], a->gc_base[2], a->gc_base[3]);
  if (which == 1) return text_entry(e, "0x00001260\n0x0000A000\n0x0001C000\n0x02402C00\n");
  const uint32_t *nb = kfd_mock_nbio_base;
  return text_entry(e, "0x%08X\n0x%08X\n0x%08X\n0x%08X\n0x%08X\n0x%08X\n", nb[0], nb[1], nb[2], nb[3], nb[4], nb[5]);
}

static int tree_lookup(const kfd_mock *m, const char *path, tree_entry *e) {
  memset(e, 0, sizeof *e);
  unsigned n = m->cfg.gpu_count, node, minor, used = 0;
  if (!strcmp(path, "/sys/devices/virtual/kfd") || !strcmp(path, "/sys/devices/virtual/kfd/kfd"))
    return dir_entry(e, (const char *const[]){strcmp(path, "/sys/devices/virtual/kfd") ? "topology" : "kfd"}, 1);
  if (!strcmp(path, "/sys/devices/virtual/kfd/kfd/topology"))
    return dir_entry(e, (const char *const[]){"nodes", "system_properties", "generation_id"}, 3);
  if (!strcmp(path, "/sys/devices/virtual/kfd/kfd/topology/generation_id")) return text_entry(e, "1\n");
  if (!strcmp(path, "/sys/devices/virtual/kfd/kfd/topology/system_properties"))
    return text_entry(e, "platform_oem 0\nplatform_id 0\nplatform_rev 0\n");
  if (!strcmp(path, TOPO)) {
    e->dir = true;
    for (unsigned i = 0; i <= n; i++) add_name(e, "%u", i);
    return 0;
  }
  if (sscanf(path, TOPO "/%u%n", &node, (int *)&used) == 1 && node <= n) {
    const char *rest = path + used;
    if (!*rest) return dir_entry(e, (const char *const[]){"gpu_id", "name", "properties", "mem_banks"}, 4);
    if (!strcmp(rest, "/gpu_id")) return text_entry(e, "%u\n", node ? gpu_id_of(node - 1) : 0);
    if (!strcmp(rest, "/name")) return text_entry(e, "%s\n", node ? m->arch->name : "");
    if (!strcmp(rest, "/properties")) return (e->text = node_properties(m, node)) ? 0 : ENOMEM;
    if (!strcmp(rest, "/mem_banks")) return dir_entry(e, (const char *const[]){"0"}, 1);
    if (!strcmp(rest, "/mem_banks/0")) return dir_entry(e, (const char *const[]){"properties"}, 1);
    if (!strcmp(rest, "/mem_banks/0/properties")) /* heap_type: 0 system, 1 FB public (kfd_topology.h) */
      return text_entry(e, "heap_type %u\nsize_in_bytes %llu\nflags 0\nwidth 64\nmem_clk_max 1000\n", node ? 1u : 0u,
                        node ? (unsigned long long)m->cfg.vram_size_B : 1ull << 34);
    return ENOENT;
  }
  if (!strcmp(path, "/sys/class/drm")) {
    e->dir = true;
    for (unsigned i = 0; i < n; i++) add_name(e, "renderD%u", RENDER_MINOR0 + i);
    return 0;
  }
  if (sscanf(path, "/sys/class/drm/renderD%u%n", &minor, (int *)&used) == 1 && minor >= RENDER_MINOR0 &&
      minor < RENDER_MINOR0 + n) {
    const char *rest = path + used;
    if (!*rest) return dir_entry(e, (const char *const[]){"device"}, 1);
    if (!strcmp(rest, "/device")) return dir_entry(e, (const char *const[]){"ip_discovery"}, 1);
    if (!strcmp(rest, "/device/ip_discovery")) return dir_entry(e, (const char *const[]){"die"}, 1);
    if (!strncmp(rest, "/device/ip_discovery/die", 24)) return ip_discovery(m, rest + 24, e);
    return ENOENT;
  }
  if (!strcmp(path, "/dev/dri")) {
    e->dir = true;
    for (unsigned i = 0; i < n; i++) add_name(e, "renderD%u", RENDER_MINOR0 + i);
    return 0;
  }
  return ENOENT;
}

static int render_gpu(const kfd_mock *m, const char *path) {
  unsigned minor, used = 0;
  if (sscanf(path, "/dev/dri/renderD%u%n", &minor, (int *)&used) == 1 && !path[used] && minor >= RENDER_MINOR0 &&
      minor < RENDER_MINOR0 + m->cfg.gpu_count)
    return (int)(minor - RENDER_MINOR0);
  return -1;
}

static int op_open(kif_backend *b, kif_file *f, char *detail) {
  kfd_mock *m = (kfd_mock *)b;
  if (!strcmp(f->path, "/dev/kfd")) { f->data = FILE_TAG(FILE_KFD, 0); return 0; }
  int g = render_gpu(m, f->path);
  if (g >= 0) { f->data = FILE_TAG(FILE_RENDER, (unsigned)g); return 0; }
  tree_entry e;
  int err = tree_lookup(m, f->path, &e);
  free(e.text);
  if (err) snprintf(detail, KIF_DETAIL_MAX, "amd mock: no %s", f->path);
  return err;
}

static int op_read_file(kif_backend *b, const char *path, char **out, size_t *size_B, char *detail) {
  tree_entry e;
  int err = tree_lookup((kfd_mock *)b, path, &e);
  if (err) { snprintf(detail, KIF_DETAIL_MAX, "amd mock: no %s", path); return err; }
  if (e.dir) return EISDIR;
  *out = e.text;
  *size_B = strlen(e.text);
  return 0;
}

static int op_listdir(kif_backend *b, const char *path, kif_dirlist *list, char *detail) {
  tree_entry e;
  int err = tree_lookup((kfd_mock *)b, path, &e);
  if (err) { snprintf(detail, KIF_DETAIL_MAX, "amd mock: no %s", path); return err; }
  if (!e.dir) { free(e.text); return ENOTDIR; }
  for (unsigned i = 0; i < e.name_count; i++)
    if ((err = kif_dirlist_add(list, e.names[i]))) return err;
  return 0;
}

static bool op_exists(kif_backend *b, const char *path) {
  kfd_mock *m = (kfd_mock *)b;
  if (!strcmp(path, "/dev/kfd") || render_gpu(m, path) >= 0) return true;
  tree_entry e;
  int err = tree_lookup(m, path, &e);
  free(e.text);
  return err == 0;
}

/* ---- mmap and doorbells ----------------------------------------------------------------------------------- */

static int op_mmap(kif_backend *b, kif_file *f, void *addr, size_t size_B, int prot, int flags, uint64_t offset,
                   void **out, char *detail) {
  kfd_mock *m = (kfd_mock *)b;
  (void)prot;
  if (TAG_KIND(f->data) == FILE_KFD) {
    int g = gpu_index(m, (uint32_t)(offset >> KFD_MOCK_MMAP_GPU_SHIFT) & 0xffffu);
    if ((offset & KFD_MOCK_MMAP_DOORBELL) != KFD_MOCK_MMAP_DOORBELL || g < 0 || (offset & 0x1fff) ||
        size_B > KFD_MOCK_DOORBELL_PAGE_B) {
      snprintf(detail, KIF_DETAIL_MAX, "amd mock: /dev/kfd maps only a doorbell slice (offset 0x%llx, size 0x%zx)",
               (unsigned long long)offset, size_B);
      return EINVAL;
    }
    *out = m->doorbells[g];
    return 0;
  }
  unsigned gpu = TAG_GPU(f->data);
  pthread_mutex_lock(&m->lock);
  kfd_mock_alloc *a = alloc_by_handle(m, offset >> 12);
  int err = 0;
  if (!a || a->gpu != gpu || (offset & 0xfff)) {
    snprintf(detail, KIF_DETAIL_MAX, "amd mock: mmap offset 0x%llx is no live allocation of GPU %u",
             (unsigned long long)offset, gpu);
    err = EINVAL;
  } else if (!(flags & MAP_FIXED) || (uint64_t)(uintptr_t)addr != a->va || size_B != a->size_B || a->cpu_mapped) {
    snprintf(detail, KIF_DETAIL_MAX, "amd mock: map allocation 0x%llx+0x%llx MAP_FIXED at its VA exactly once",
             (unsigned long long)a->va, (unsigned long long)a->size_B);
    err = EINVAL;
  } else {
    /* VRAM/GTT "memory" is host memory placed over the driver's PROT_NONE reservation, so GPU VA == host VA. */
    void *p = mmap(addr, size_B, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) err = errno;
    else { a->cpu_mapped = true; *out = p; }
  }
  pthread_mutex_unlock(&m->lock);
  return err;
}

static int op_munmap(kif_backend *b, kif_file *f, void *addr, size_t size_B) {
  kfd_mock *m = (kfd_mock *)b;
  if (TAG_KIND(f->data) != FILE_RENDER) return 0;
  pthread_mutex_lock(&m->lock);
  for (unsigned i = 0; i < m->alloc_count; i++)
    if (m->allocs[i].cpu_mapped && m->allocs[i].va == (uint64_t)(uintptr_t)addr) m->allocs[i].cpu_mapped = false;
  int err = munmap(addr, size_B) ? errno : 0;
  pthread_mutex_unlock(&m->lock);
  return err;
}

static int op_mmio_write(kif_backend *b, kif_file *f, uint64_t offset, uint64_t value, unsigned width_B, char *detail) {
  kfd_mock *m = (kfd_mock *)b;
  (void)f, (void)value;
  if (width_B != 8 || (offset & 7)) {
    snprintf(detail, KIF_DETAIL_MAX, "amd mock: doorbells are 64-bit slots (got a %u-byte store at 0x%llx)", width_B,
             (unsigned long long)offset);
    return EINVAL;
  }
  kfd_mock_cp_kick(m);
  return 0;
}

/* ---- ioctls ----------------------------------------------------------------------------------------------- */

#define FAIL(err, ...) return (snprintf(detail, KIF_DETAIL_MAX, __VA_ARGS__), (err))

static int need_gpu(kfd_mock *m, uint32_t gpu_id, char *detail) {
  int g = gpu_index(m, gpu_id);
  if (g < 0) snprintf(detail, KIF_DETAIL_MAX, "no GPU with gpu_id 0x%x", gpu_id);
  return g;
}

static int io_apertures(kfd_mock *m, struct amd_kfd_ioctl_get_process_apertures_new_args *a, char *detail) {
  if (a->num_of_nodes == 0) { a->num_of_nodes = m->cfg.gpu_count; return 0; } /* kfd_chardev.c: "return the count" */
  if (!a->kfd_process_device_apertures_ptr) FAIL(EFAULT, "kfd_process_device_apertures_ptr is NULL");
  struct amd_kfd_process_device_apertures *ap = (void *)(uintptr_t)a->kfd_process_device_apertures_ptr;
  unsigned n = a->num_of_nodes < m->cfg.gpu_count ? a->num_of_nodes : m->cfg.gpu_count;
  for (unsigned i = 0; i < n; i++) {
    /* gfx9+ flat apertures (kfd_flat_memory.c): LDS at 1<<48, scratch at 2<<48, GPUVM covers the 47-bit user VA. */
    ap[i] = (struct amd_kfd_process_device_apertures){.lds_base = 1ull << 48, .lds_limit = (1ull << 48) | 0xffffffffull,
                                                      .scratch_base = 2ull << 48, .scratch_limit = (2ull << 48) | 0xffffffffull,
                                                      .gpuvm_base = 1ull << 16, .gpuvm_limit = (1ull << 47) - 1,
                                                      .gpu_id = gpu_id_of(i)};
  }
  a->num_of_nodes = n;
  return 0;
}

static int io_acquire_vm(kfd_mock *m, struct amd_kfd_ioctl_acquire_vm_args *a, char *detail) {
  int g = need_gpu(m, a->gpu_id, detail);
  if (g < 0) return EINVAL;
  const char *p = kif_fd_path(m->k, (int)a->drm_fd);
  if (!p || render_gpu(m, p) != g) FAIL(EINVAL, "drm_fd %d is not GPU %d's render node", (int)a->drm_fd, g);
  m->vm_acquired[g] = true;
  return 0;
}

static int io_alloc(kfd_mock *m, struct amd_kfd_ioctl_alloc_memory_of_gpu_args *a, char *detail) {
  if (a->size == 0) FAIL(EINVAL, "size 0");
  int g = need_gpu(m, a->gpu_id, detail);
  if (g < 0) return EINVAL;
  uint32_t fl = a->flags;
  bool vram = fl & AMD_KFD_IOC_ALLOC_MEM_FLAGS_VRAM, userptr = fl & AMD_KFD_IOC_ALLOC_MEM_FLAGS_USERPTR;
  if (vram + !!(fl & AMD_KFD_IOC_ALLOC_MEM_FLAGS_GTT) + userptr != 1)
    FAIL(EINVAL, "flags 0x%x: exactly one of VRAM, GTT, USERPTR (the mock emulates no DOORBELL/MMIO_REMAP BOs)", fl);
  if ((fl & AMD_KFD_IOC_ALLOC_MEM_FLAGS_PUBLIC) && vram && m->cfg.small_bar)
    FAIL(EINVAL, "host-visible VRAM on a small-BAR GPU (enable resizable BAR)");
  if ((a->va_addr | a->size) & 0xfff) FAIL(EINVAL, "va 0x%llx size 0x%llx not page aligned", (unsigned long long)a->va_addr, (unsigned long long)a->size);
  if (userptr && a->mmap_offset != a->va_addr) FAIL(EINVAL, "userptr: mmap_offset must hold the user address");
  if (vram && a->size > m->cfg.vram_size_B - m->vram_used_B[g])
    FAIL(ENOMEM, "out of VRAM on GPU %d (%llu of %llu bytes used, 0x%llx requested)", g,
         (unsigned long long)m->vram_used_B[g], (unsigned long long)m->cfg.vram_size_B, (unsigned long long)a->size);
  for (unsigned i = 0; i < m->alloc_count; i++) {
    kfd_mock_alloc *o = &m->allocs[i];
    if (o->live && (int)o->gpu == g && a->va_addr < o->va + o->size_B && o->va < a->va_addr + a->size)
      FAIL(EINVAL, "va 0x%llx+0x%llx overlaps live allocation 0x%llx+0x%llx", (unsigned long long)a->va_addr,
           (unsigned long long)a->size, (unsigned long long)o->va, (unsigned long long)o->size_B);
  }
  if (m->alloc_count == m->alloc_cap) {
    unsigned cap = m->alloc_cap ? m->alloc_cap * 2 : 64;
    kfd_mock_alloc *p = realloc(m->allocs, cap * sizeof *p);
    if (!p) return ENOMEM;
    m->allocs = p;
    m->alloc_cap = cap;
  }
  kfd_mock_alloc *n = NULL;
  for (unsigned i = 0; i < m->alloc_count && !n; i++)
    if (!m->allocs[i].live && !m->allocs[i].cpu_mapped) n = &m->allocs[i];
  if (!n) n = &m->allocs[m->alloc_count++];
  *n = (kfd_mock_alloc){.handle = m->next_handle++, .gpu = (unsigned)g, .va = a->va_addr, .size_B = a->size,
                        .flags = fl, .live = true};
  if (vram) m->vram_used_B[g] += a->size;
  a->handle = n->handle;
  if (!userptr) a->mmap_offset = n->handle << 12;
  return 0;
}

static int io_free(kfd_mock *m, struct amd_kfd_ioctl_free_memory_of_gpu_args *a, char *detail) {
  kfd_mock_alloc *al = alloc_by_handle(m, a->handle);
  if (!al) FAIL(EINVAL, "no allocation with handle 0x%llx", (unsigned long long)a->handle);
  al->live = false;
  al->mapped = 0;
  if (al->flags & AMD_KFD_IOC_ALLOC_MEM_FLAGS_VRAM) m->vram_used_B[al->gpu] -= al->size_B;
  return 0;
}

static int io_map(kfd_mock *m, struct amd_kfd_ioctl_map_memory_to_gpu_args *a, bool map, char *detail) {
  if (!a->n_devices) FAIL(EINVAL, "n_devices is 0");
  if (a->n_success > a->n_devices) FAIL(EINVAL, "n_success %u > n_devices %u", a->n_success, a->n_devices);
  kfd_mock_alloc *al = alloc_by_handle(m, a->handle);
  if (!al) FAIL(EINVAL, "no allocation with handle 0x%llx", (unsigned long long)a->handle);
  if (!a->device_ids_array_ptr) FAIL(EFAULT, "device_ids_array_ptr is NULL");
  const uint32_t *ids = (const uint32_t *)(uintptr_t)a->device_ids_array_ptr;
  for (uint32_t i = a->n_success; i < a->n_devices; i++) {
    int g = need_gpu(m, ids[i], detail);
    if (g < 0) return EINVAL;
    if (map) al->mapped |= 1u << g;
    else al->mapped &= ~(1u << g);
    a->n_success = i + 1;
  }
  return 0;
}

static int io_create_queue(kfd_mock *m, struct amd_kfd_ioctl_create_queue_args *a, char *detail) {
  if (a->queue_percentage > 100) FAIL(EINVAL, "queue_percentage %u > 100", a->queue_percentage);
  if (a->queue_priority > 15) FAIL(EINVAL, "queue_priority %u > 15", a->queue_priority);
  if (a->ring_size & (a->ring_size - 1)) FAIL(EINVAL, "ring_size 0x%x is not a power of 2", a->ring_size);
  int g = need_gpu(m, a->gpu_id, detail);
  if (g < 0) return EINVAL;
  if (a->queue_type != AMD_KFD_IOC_QUEUE_TYPE_COMPUTE && a->queue_type != AMD_KFD_IOC_QUEUE_TYPE_SDMA)
    FAIL(EOPNOTSUPP, "queue_type %u: the mock runs only COMPUTE (PM4) and SDMA queues", a->queue_type);
  if (!kfd_mock_find_alloc(m, (unsigned)g, a->ring_base_address, a->ring_size) ||
      !kfd_mock_find_alloc(m, (unsigned)g, a->read_pointer_address, 8) ||
      !kfd_mock_find_alloc(m, (unsigned)g, a->write_pointer_address, 8))
    FAIL(EFAULT, "ring 0x%llx+0x%x, rptr 0x%llx or wptr 0x%llx is not in memory mapped to GPU %d",
         (unsigned long long)a->ring_base_address, a->ring_size, (unsigned long long)a->read_pointer_address,
         (unsigned long long)a->write_pointer_address, g);
  if (a->queue_type == AMD_KFD_IOC_QUEUE_TYPE_COMPUTE && a->eop_buffer_address &&
      !kfd_mock_find_alloc(m, (unsigned)g, a->eop_buffer_address, a->eop_buffer_size))
    FAIL(EFAULT, "EOP buffer 0x%llx+0x%llx is not mapped", (unsigned long long)a->eop_buffer_address,
         (unsigned long long)a->eop_buffer_size);
  unsigned slot;
  int qi = -1;
  for (unsigned i = 0; i < KFD_MOCK_MAX_QUEUES && qi < 0; i++)
    if (!m->queues[i] || !m->queues[i]->live) qi = (int)i;
  if (qi < 0) FAIL(ENOMEM, "mock: all %d queues in use", KFD_MOCK_MAX_QUEUES);
  for (slot = 0; slot < KFD_MOCK_DOORBELL_PAGE_B / 8; slot++) {
    bool taken = false;
    for (unsigned i = 0; i < KFD_MOCK_MAX_QUEUES; i++)
      if (m->queues[i] && m->queues[i]->live && (int)m->queues[i]->gpu == g && m->queues[i]->doorbell_slot == slot)
        taken = true;
    if (!taken) break;
  }
  if (!m->queues[qi] && !(m->queues[qi] = malloc(sizeof(kfd_mock_queue)))) return ENOMEM;
  kfd_mock_queue *q = m->queues[qi];
  memset(q, 0, sizeof *q);
  *q = (kfd_mock_queue){.live = true, .gpu = (unsigned)g, .id = m->next_queue_id++, .type = a->queue_type,
                        .ring_va = a->ring_base_address, .ring_size_B = a->ring_size,
                        .rptr_va = a->read_pointer_address, .wptr_va = a->write_pointer_address, .doorbell_slot = slot};
  a->queue_id = q->id;
  a->doorbell_offset = KFD_MOCK_MMAP_DOORBELL | (uint64_t)a->gpu_id << KFD_MOCK_MMAP_GPU_SHIFT | slot * 8u;
  return 0;
}

static int io_destroy_queue(kfd_mock *m, struct amd_kfd_ioctl_destroy_queue_args *a, char *detail) {
  for (unsigned i = 0; i < KFD_MOCK_MAX_QUEUES; i++)
    if (m->queues[i] && m->queues[i]->live && m->queues[i]->id == a->queue_id) { m->queues[i]->live = false; return 0; }
  FAIL(EINVAL, "no queue %u", a->queue_id);
}

static int io_create_event(kfd_mock *m, struct amd_kfd_ioctl_create_event_args *a, char *detail) {
  if (a->event_page_offset && !m->event_page_va) {
    kfd_mock_alloc *al = alloc_by_handle(m, a->event_page_offset);
    if (!al) FAIL(EINVAL, "event_page_offset 0x%llx is no allocation handle", (unsigned long long)a->event_page_offset);
    m->event_page_va = al->va;
  }
  if (a->event_type == AMD_KFD_IOC_EVENT_SIGNAL && !m->event_page_va) FAIL(EINVAL, "signal event before the event page");
  for (unsigned i = 0; i < KFD_MOCK_MAX_EVENTS; i++) {
    kfd_mock_event *e = &m->events[i];
    if (e->live) continue;
    *e = (kfd_mock_event){.live = true, .type = a->event_type, .auto_reset = a->auto_reset != 0};
    a->event_id = i + 1;
    a->event_slot_index = i;
    a->event_trigger_data = i + 1;
    return 0;
  }
  FAIL(ENOMEM, "mock: all %d events in use", KFD_MOCK_MAX_EVENTS);
}

static kfd_mock_event *event_by_id(kfd_mock *m, uint32_t id) {
  return id >= 1 && id <= KFD_MOCK_MAX_EVENTS && m->events[id - 1].live ? &m->events[id - 1] : NULL;
}

void kfd_mock_signal_event_id(kfd_mock *m, uint32_t id) {
  kfd_mock_event *e = event_by_id(m, id);
  if (!e) return;
  e->signaled = true;
  uint64_t slot = m->event_page_va + 8ull * (id - 1);
  for (unsigned g = 0; m->event_page_va && g < m->cfg.gpu_count; g++)
    if (kfd_mock_find_alloc(m, g, slot, 8)) {
      *(volatile uint64_t *)(uintptr_t)slot = 1; /* the event's mailbox slot */
      break;
    }
}

void kfd_mock_raise_memory_fault(kfd_mock *m, unsigned gpu, uint64_t va) {
  for (unsigned i = 0; i < KFD_MOCK_MAX_EVENTS; i++) {
    kfd_mock_event *e = &m->events[i];
    if (e->live && (e->type == AMD_KFD_IOC_EVENT_MEMORY || e->type == AMD_KFD_IOC_EVENT_HW_EXCEPTION)) {
      e->signaled = true;
      e->fault.va = va;
      e->fault.gpu_id = gpu_id_of(gpu);
    }
  }
}

/* GET_CLOCK_COUNTERS (linux 6.1 kfd_chardev.c kfd_ioctl_get_clock_counters): the GPU counter, CLOCK_MONOTONIC_RAW
 * and CLOCK_BOOTTIME in ns, system_clock_freq 1 GHz. */
static int io_clock_counters(kfd_mock *m, struct amd_kfd_ioctl_get_clock_counters_args *a, char *detail) {
  if (gpu_index(m, a->gpu_id) < 0) FAIL(EINVAL, "no GPU with gpu_id %u", a->gpu_id);
  struct timespec raw, boot;
  clock_gettime(CLOCK_MONOTONIC_RAW, &raw);
  clock_gettime(CLOCK_BOOTTIME, &boot);
  a->gpu_clock_counter = kfd_mock_gpu_clock(m);
  a->cpu_clock_counter = (uint64_t)raw.tv_sec * 1000000000ull + (uint64_t)raw.tv_nsec;
  a->system_clock_counter = (uint64_t)boot.tv_sec * 1000000000ull + (uint64_t)boot.tv_nsec;
  a->system_clock_freq = 1000000000ull;
  return 0;
}

static int io_wait_events(kfd_mock *m, struct amd_kfd_ioctl_wait_events_args *a, char *detail) {
  if (!a->num_events || !a->events_ptr) FAIL(EINVAL, "no events");
  struct amd_kfd_event_data *ev = (void *)(uintptr_t)a->events_ptr;
  uint64_t deadline = kfd_mock_now_ns() + (uint64_t)a->timeout * 1000000ull;
  for (;;) {
    unsigned done = 0;
    for (uint32_t i = 0; i < a->num_events; i++) {
      kfd_mock_event *e = event_by_id(m, ev[i].event_id);
      if (!e) FAIL(EINVAL, "no event %u", ev[i].event_id);
      if (!e->signaled) continue;
      done++;
      if (e->type == AMD_KFD_IOC_EVENT_MEMORY) {
        ev[i].memory_exception_data.va = e->fault.va;
        ev[i].memory_exception_data.gpu_id = e->fault.gpu_id;
        ev[i].memory_exception_data.failure.NotPresent = 1;
      } else if (e->type == AMD_KFD_IOC_EVENT_HW_EXCEPTION) {
        ev[i].hw_exception_data.gpu_id = e->fault.gpu_id;
        ev[i].hw_exception_data.reset_type = 0;
      }
    }
    if (a->wait_for_all ? done == a->num_events : done > 0) {
      for (uint32_t i = 0; i < a->num_events; i++) {
        kfd_mock_event *e = event_by_id(m, ev[i].event_id);
        if (e->auto_reset) e->signaled = false;
      }
      a->wait_result = AMD_KFD_IOC_WAIT_RESULT_COMPLETE;
      return 0;
    }
    if (kfd_mock_now_ns() >= deadline) { a->wait_result = AMD_KFD_IOC_WAIT_RESULT_TIMEOUT; return 0; }
    pthread_mutex_unlock(&m->lock);
    nanosleep(&(struct timespec){0, 100000}, NULL);
    pthread_mutex_lock(&m->lock);
  }
}

static int op_ioctl(kif_backend *b, kif_file *f, unsigned long req, void *arg, char *detail) {
  kfd_mock *m = (kfd_mock *)b;
  if (TAG_KIND(f->data) != FILE_KFD) FAIL(ENOTTY, "the mock's render node takes no ioctls");
  if (!arg) return EFAULT;
  if (req == AMD_KFD_IOC_GET_VERSION) {
    struct amd_kfd_ioctl_get_version_args *v = arg;
    v->major_version = AMD_KFD_IOCTL_MAJOR_VERSION; /* the mock implements the 1.11 interface it was built from */
    v->minor_version = AMD_KFD_IOCTL_MINOR_VERSION;
    return 0;
  }
  pthread_mutex_lock(&m->lock);
  int err;
  switch (req) {
  case AMD_KFD_IOC_GET_PROCESS_APERTURES_NEW: err = io_apertures(m, arg, detail); break;
  case AMD_KFD_IOC_ACQUIRE_VM: err = io_acquire_vm(m, arg, detail); break;
  case AMD_KFD_IOC_ALLOC_MEMORY_OF_GPU: err = io_alloc(m, arg, detail); break;
  case AMD_KFD_IOC_FREE_MEMORY_OF_GPU: err = io_free(m, arg, detail); break;
  case AMD_KFD_IOC_MAP_MEMORY_TO_GPU: err = io_map(m, arg, true, detail); break;
  case AMD_KFD_IOC_UNMAP_MEMORY_FROM_GPU: err = io_map(m, (void *)arg, false, detail); break;
  case AMD_KFD_IOC_CREATE_QUEUE: err = io_create_queue(m, arg, detail); break;
  case AMD_KFD_IOC_GET_CLOCK_COUNTERS: err = io_clock_counters(m, arg, detail); break;
  case AMD_KFD_IOC_DESTROY_QUEUE: err = io_destroy_queue(m, arg, detail); break;
  case AMD_KFD_IOC_CREATE_EVENT: err = io_create_event(m, arg, detail); break;
  case AMD_KFD_IOC_DESTROY_EVENT: {
    kfd_mock_event *e = event_by_id(m, ((struct amd_kfd_ioctl_destroy_event_args *)arg)->event_id);
    if (e) e->live = false;
    err = e ? 0 : (snprintf(detail, KIF_DETAIL_MAX, "no such event"), EINVAL);
    break;
  }
  case AMD_KFD_IOC_SET_EVENT: {
    kfd_mock_event *e = event_by_id(m, ((struct amd_kfd_ioctl_set_event_args *)arg)->event_id);
    if (e) e->signaled = true;
    err = e ? 0 : (snprintf(detail, KIF_DETAIL_MAX, "no such event"), EINVAL);
    break;
  }
  case AMD_KFD_IOC_RESET_EVENT: {
    kfd_mock_event *e = event_by_id(m, ((struct amd_kfd_ioctl_reset_event_args *)arg)->event_id);
    if (e) e->signaled = false;
    err = e ? 0 : (snprintf(detail, KIF_DETAIL_MAX, "no such event"), EINVAL);
    break;
  }
  case AMD_KFD_IOC_WAIT_EVENTS: err = io_wait_events(m, arg, detail); break;
  default:
    snprintf(detail, KIF_DETAIL_MAX, "amd mock does not emulate this KFD ioctl");
    err = ENOTTY;
  }
  pthread_mutex_unlock(&m->lock);
  if (!err && (req == AMD_KFD_IOC_CREATE_QUEUE)) {
    hcq_status st = kfd_mock_cp_start(m);
    if (st) { snprintf(detail, KIF_DETAIL_MAX, "%s", hcq_status_message(st)); hcq_status_free(st); return ENOMEM; }
  }
  return err;
}

static const kif_backend_vtable k_vtable = {
    .open = op_open,
    .ioctl = op_ioctl,
    .mmap = op_mmap,
    .munmap = op_munmap,
    .mmio_write = op_mmio_write,
    .read_file = op_read_file,
    .listdir = op_listdir,
    .exists = op_exists,
};
