/* KFD topology discovery through kernel_iface: nodes/N/{gpu_id,properties,mem_banks}, then the render node's
 * ip_discovery for the GC and NBIO segment bases and the GC/SDMA/NBIO IP versions (hw ids 11, 42 and 108 (NBIF), as
 * in ops_amd.py / am.py). */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amd/amd_device.h"

static hcq_status read_text(kif *k, const char *path, char **out) {
  size_t n;
  return kif_read_file(k, path, out, &n);
}

static bool prop(const char *text, const char *key, uint64_t *v) {
  size_t kl = strlen(key);
  for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
    if (!strncmp(p, key, kl) && p[kl] == ' ') {
      char *end;
      errno = 0;
      unsigned long long x = strtoull(p + kl + 1, &end, 10);
      if (errno || end == p + kl + 1) return false;
      *v = x;
      return true;
    }
  }
  return false;
}

hcq_status amd_topology_parse_properties(const char *text, const char *path, amd_node *n) {
  static const struct { const char *key; size_t off; } keys[] = {
#define K(f) {#f, offsetof(amd_node, f)}
      K(gfx_target_version), K(simd_count), K(simd_per_cu), K(max_waves_per_simd), K(array_count),
      K(simd_arrays_per_engine), K(max_slots_scratch_cu), K(lds_size_in_kb), K(drm_render_minor),
#undef K
  };
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    uint64_t v;
    if (!prop(text, keys[i].key, &v) || v > UINT32_MAX)
      return hcq_status_make(HCQ_CODE_PARSE, "amd: %s: no valid '%s' line", path, keys[i].key);
    *(uint32_t *)((char *)n + keys[i].off) = (uint32_t)v;
  }
  uint64_t xcc = 1;
  prop(text, "num_xcc", &xcc); /* absent before KFD 1.12 kernels: one XCC */
  n->num_xcc = (uint32_t)(xcc ? xcc : 1);
  if (!n->simd_per_cu || !n->simd_count || !n->simd_arrays_per_engine)
    return hcq_status_make(HCQ_CODE_PARSE, "amd: %s: simd_count, simd_per_cu and simd_arrays_per_engine must be non-zero", path);
  return HCQ_OK;
}

static hcq_status read_u(kif *k, const char *path, uint64_t *v, int base) {
  char *t = NULL;
  HCQ_TRY(read_text(k, path, &t));
  char *end;
  errno = 0;
  *v = strtoull(t, &end, base);
  bool bad = errno || end == t;
  free(t);
  return bad ? hcq_status_make(HCQ_CODE_PARSE, "amd: %s: expected a number", path) : HCQ_OK;
}

static hcq_status read_ip(kif *k, amd_node *n, unsigned hwid, unsigned ver[3], uint32_t *bases, unsigned nbases) {
  char dir[160], path[200];
  snprintf(dir, sizeof dir, "/sys/class/drm/renderD%u/device/ip_discovery/die/0/%u/0", n->drm_render_minor, hwid);
  static const char *const parts[3] = {"major", "minor", "revision"};
  for (int i = 0; i < 3; i++) {
    uint64_t v;
    snprintf(path, sizeof path, "%s/%s", dir, parts[i]);
    HCQ_TRY(read_u(k, path, &v, 10));
    ver[i] = (unsigned)v;
  }
  if (!bases) return HCQ_OK;
  snprintf(path, sizeof path, "%s/base_addr", dir);
  char *t = NULL;
  HCQ_TRY(read_text(k, path, &t));
  char *p = t;
  for (unsigned i = 0; i < nbases; i++) {
    char *end;
    unsigned long long v = strtoull(p, &end, 16);
    if (end == p) break;
    bases[i] = (uint32_t)v;
    p = end;
  }
  free(t);
  return HCQ_OK;
}

static hcq_status read_node(kif *k, unsigned node, amd_node *n) {
  char path[160];
  uint64_t v;
  memset(n, 0, sizeof *n);
  n->node = node;
  snprintf(path, sizeof path, AMD_TOPOLOGY_NODES "/%u/gpu_id", node);
  HCQ_TRY(read_u(k, path, &v, 10));
  n->gpu_id = (uint32_t)v;
  if (!n->gpu_id) return HCQ_OK; /* a CPU node */
  snprintf(path, sizeof path, AMD_TOPOLOGY_NODES "/%u/properties", node);
  char *t = NULL;
  HCQ_TRY(read_text(k, path, &t));
  hcq_status st = amd_topology_parse_properties(t, path, n);
  free(t);
  HCQ_TRY(st);
  /* Memory banks: FB heaps (heap_type 1 public, 2 private; kfd_topology.h HSA_MEM_HEAP_TYPE_FB_*). */
  snprintf(path, sizeof path, AMD_TOPOLOGY_NODES "/%u/mem_banks", node);
  kif_dirlist banks = {0};
  st = kif_listdir(k, path, &banks);
  if (st && kif_status_errno(st) == ENOENT) { /* no banks listed: VRAM size unknown (0) */
    hcq_status_free(st);
    st = HCQ_OK;
  }
  for (size_t i = 0; !st && i < banks.count; i++) {
    char bp[220];
    snprintf(bp, sizeof bp, "%s/%s/properties", path, banks.names[i]);
    st = read_text(k, bp, &t);
    if (st) break;
    uint64_t heap = 0, size = 0;
    if (prop(t, "heap_type", &heap) && (heap == 1 || heap == 2) && prop(t, "size_in_bytes", &size)) n->vram_size_B += size;
    free(t);
  }
  kif_dirlist_free(&banks);
  HCQ_TRY(st);
  HCQ_TRY(read_ip(k, n, 11, n->gc_version, n->gc_base, 6));
  HCQ_TRY(read_ip(k, n, 108, n->nbio_version, n->nbio_base, 6));
  return read_ip(k, n, 42, n->sdma_version, NULL, 0);
}

static int cmp_node(const void *a, const void *b) {
  unsigned x = ((const amd_node *)a)->node, y = ((const amd_node *)b)->node;
  return (x > y) - (x < y);
}

hcq_status amd_topology_list(kif *k, amd_node *out, unsigned cap, unsigned *out_count) {
  *out_count = 0;
  kif_dirlist list = {0};
  hcq_status st = kif_listdir(k, AMD_TOPOLOGY_NODES, &list);
  if (st) return hcq_status_annotate(st, "amd: listing the KFD topology");
  unsigned n = 0;
  for (size_t i = 0; i < list.count && !st; i++) {
    char *end;
    unsigned long node = strtoul(list.names[i], &end, 10);
    if (*end) continue;
    amd_node nd;
    st = read_node(k, (unsigned)node, &nd);
    if (!st && nd.gpu_id) {
      if (n == cap) st = hcq_status_make(HCQ_CODE_INVALID, "amd: more than %u GPU nodes", cap);
      else out[n++] = nd;
    }
  }
  kif_dirlist_free(&list);
  if (st) return st;
  qsort(out, n, sizeof *out, cmp_node);
  *out_count = n;
  return HCQ_OK;
}
