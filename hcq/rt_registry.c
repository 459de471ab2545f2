/* The device registry: one line per backend. A new backend adds its folder and one line here (its open function
 * returns an initialized hcq_device whose ops->destroy closes it). Tests add fakes with hcq_rt_register. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amd/amd_hcq_rt.h"
#include "cpu/cpu_device.h"
#include "hcq/rt_internal.h"
#include "nv/nv_rt.h"

static const hcq_rt_backend builtin[] = {
    {"cpu", cpu_device_open, NULL},
    {"amd", amd_rt_open, amd_rt_count},
    {"nv", nv_rt_open, nv_rt_count},
};

static hcq_rt_backend extra[4];
static size_t nextra;

hcq_status hcq_rt_register(const hcq_rt_backend *b) {
  if (!b || !b->name || !b->open) return hcq_status_make(HCQ_CODE_INVALID, "hcq_rt_register: NULL backend");
  if (nextra == sizeof extra / sizeof *extra)
    return hcq_status_make(HCQ_CODE_NOMEM, "hcq_rt_register %s: registry full", b->name);
  extra[nextra++] = *b;
  return HCQ_OK;
}

const char *hcq_rt_backends(void) {
  static char list[256];
  size_t len = 0;
  list[0] = 0;
  for (size_t i = 0; i < sizeof builtin / sizeof *builtin + nextra; i++) {
    const hcq_rt_backend *b = i < sizeof builtin / sizeof *builtin ? &builtin[i] : &extra[i - sizeof builtin / sizeof *builtin];
    int n = snprintf(list + len, sizeof list - len, "%s\n", b->name);
    if (n > 0 && (size_t)n < sizeof list - len) len += (size_t)n;
  }
  return list;
}

hcq_status hcq_rt_backend_open(const char *name, hcq_device **out) {
  if (!name || !out) return hcq_status_make(HCQ_CODE_INVALID, "hcq_rt_open: NULL argument");
  const char *colon = strchr(name, ':');
  size_t n = colon ? (size_t)(colon - name) : strlen(name);
  unsigned index = 0;
  if (colon) {
    char *end;
    unsigned long v = strtoul(colon + 1, &end, 10);
    if (end == colon + 1 || *end || v > 255 || colon[1] == '-' || colon[1] == '+')
      return hcq_status_make(HCQ_CODE_INVALID, "device name '%s': want BACKEND or BACKEND:INDEX (0..255)", name);
    index = (unsigned)v;
  }
  for (size_t i = 0; i < sizeof builtin / sizeof *builtin + nextra; i++) {
    const hcq_rt_backend *b = i < sizeof builtin / sizeof *builtin ? &builtin[i] : &extra[i - sizeof builtin / sizeof *builtin];
    if (strlen(b->name) == n && !strncmp(b->name, name, n)) return hcq_status_annotate(b->open(index, out), "opening %s", name);
  }
  char known[256];
  snprintf(known, sizeof known, "%s", hcq_rt_backends());
  for (char *c = known; *c; c++)
    if (*c == '\n') *c = c[1] ? ',' : 0;
  return hcq_status_make(HCQ_CODE_NOT_FOUND, "no device backend '%.*s' (known: %s)", (int)n, name, known);
}

hcq_status hcq_rt_device_count(const char *backend, unsigned *out_n) {
  if (!backend || !out_n) return hcq_status_make(HCQ_CODE_INVALID, "hcq_rt_device_count: NULL argument");
  *out_n = 0;
  for (size_t i = 0; i < sizeof builtin / sizeof *builtin + nextra; i++) {
    const hcq_rt_backend *b = i < sizeof builtin / sizeof *builtin ? &builtin[i] : &extra[i - sizeof builtin / sizeof *builtin];
    if (strcmp(b->name, backend) != 0) continue;
    if (!b->count) {
      *out_n = 1;
      return HCQ_OK;
    }
    return hcq_status_annotate(b->count(out_n), "counting %s devices", backend);
  }
  return hcq_status_make(HCQ_CODE_NOT_FOUND, "no device backend '%s'", backend);
}
