/* The NV mock's kernel runner (nv_mock_ptx.h). Parsed modules are cached by program address and a hash of the PTX
 * bytes (a program freed and another loaded at the same address is parsed again). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulator_tests/nv_mock_ptx.h"
#include "emulator_tests/ptx_interp.h"
#include "kernel_iface/kif_backend.h"
#include "nv/nv_image.h"

#define NVP_CACHE 32

typedef struct nvp_entry {
  uint64_t program_va, hash;
  uint32_t size_B;
  ptx_module *mod;
} nvp_entry;

struct nv_mock_ptx {
  nvp_entry cache[NVP_CACHE];
  unsigned next;
  uint64_t thread_instructions, budget;
};

typedef struct nvp_mem {
  nv_mock *m;
} nvp_mem;

static hcq_status nvp_read(void *ctx, uint64_t va, size_t size_B, void *out) {
  char detail[KIF_DETAIL_MAX];
  if (nv_mock_check_access(((nvp_mem *)ctx)->m, va, size_B, false, detail))
    return hcq_status_make(HCQ_CODE_KERNEL_FAULT, "%s", detail);
  memcpy(out, (const void *)(uintptr_t)va, size_B);
  return HCQ_OK;
}

static hcq_status nvp_write(void *ctx, uint64_t va, size_t size_B, const void *in) {
  char detail[KIF_DETAIL_MAX];
  if (nv_mock_check_access(((nvp_mem *)ctx)->m, va, size_B, true, detail))
    return hcq_status_make(HCQ_CODE_KERNEL_FAULT, "%s", detail);
  memcpy((void *)(uintptr_t)va, in, size_B);
  return HCQ_OK;
}

hcq_status nv_mock_ptx_create(nv_mock_ptx **out) {
  *out = calloc(1, sizeof **out);
  if (!*out) return hcq_status_make(HCQ_CODE_NOMEM, "nv mock ptx runner");
  (*out)->budget = 1ull << 32;
  return HCQ_OK;
}

void nv_mock_ptx_destroy(nv_mock_ptx *r) {
  if (!r) return;
  for (int i = 0; i < NVP_CACHE; i++) ptx_module_free(r->cache[i].mod);
  free(r);
}

uint64_t nv_mock_ptx_thread_instructions(const nv_mock_ptx *r) { return r->thread_instructions; }
void nv_mock_ptx_set_budget(nv_mock_ptx *r, uint64_t max_warp_instructions) { r->budget = max_warp_instructions; }

static uint64_t nvp_hash(const uint8_t *p, size_t n) { /* FNV-1a */
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

static int nvp_fail(char *detail, int err, hcq_status st, const char *fmt, unsigned long long a) {
  int n = snprintf(detail, KIF_DETAIL_MAX, fmt, a);
  if (st && n > 0 && n < KIF_DETAIL_MAX) snprintf(detail + n, (size_t)(KIF_DETAIL_MAX - n), ": %s", hcq_status_message(st));
  hcq_status_free(st);
  return err;
}

/* The module for the PTX the record below program_va points to. */
static int nvp_module(nv_mock_ptx *r, nv_mock *m, uint64_t program_va, nv_image_record *rec, const ptx_module **out,
                      char *detail) {
  uint64_t rec_va = program_va - NV_IMAGE_RECORD_B;
  if (program_va < NV_IMAGE_RECORD_B || nv_mock_check_access(m, rec_va, NV_IMAGE_RECORD_B, false, detail) ||
      memcmp((const void *)(uintptr_t)rec_va, NV_IMAGE_MAGIC, 8) != 0)
    return nvp_fail(detail, ENOEXEC, NULL, "nv-mock: no PTX record below the program at 0x%llx (the mock runs only "
                    "the PTX a driver uploads before the code, nv/nv_image.h; it cannot run SASS)", program_va);
  memcpy(rec, (const void *)(uintptr_t)rec_va, sizeof *rec);
  uint64_t ptx_va = program_va - rec->ptx_back_B;
  if (rec->ptx_back_B < NV_IMAGE_RECORD_B + rec->ptx_size_B || rec->ptx_back_B > program_va ||
      rec->nparams > NV_IMAGE_MAX_PARAMS || nv_mock_check_access(m, ptx_va, rec->ptx_size_B, false, detail))
    return nvp_fail(detail, ENOEXEC, NULL, "nv-mock: the PTX record below the program at 0x%llx is inconsistent",
                    program_va);
  const uint8_t *text = (const uint8_t *)(uintptr_t)ptx_va;
  uint64_t h = nvp_hash(text, rec->ptx_size_B);
  for (int i = 0; i < NVP_CACHE; i++) {
    nvp_entry *e = &r->cache[i];
    if (e->mod && e->program_va == program_va && e->hash == h && e->size_B == rec->ptx_size_B) return *out = e->mod, 0;
  }
  ptx_module *mod;
  hcq_status st = ptx_module_parse((const char *)text, rec->ptx_size_B, &mod);
  if (st) return nvp_fail(detail, ENOEXEC, st, "nv-mock: the PTX of the program at 0x%llx", program_va);
  nvp_entry *e = &r->cache[r->next++ % NVP_CACHE];
  ptx_module_free(e->mod);
  *e = (nvp_entry){program_va, h, rec->ptx_size_B, mod};
  *out = mod;
  return 0;
}

int nv_mock_ptx_launch(void *ctx, nv_mock *m, const nv_mock_launch *l, char *detail) {
  nv_mock_ptx *r = ctx;
  nv_image_record rec;
  const ptx_module *mod = NULL;
  int err = nvp_module(r, m, l->program_va, &rec, &mod, detail);
  if (err) return err;
  if (l->cbank0_size_B < rec.param_base_B || nv_mock_check_access(m, l->cbank0_va, l->cbank0_size_B, false, detail))
    return nvp_fail(detail, EFAULT, NULL, "nv-mock: constant bank 0 at 0x%llx (MMU fault or smaller than the "
                    "parameter base)", (unsigned long long)l->cbank0_va);
  nvp_mem mem = {m};
  ptx_mem_ops ops = {&mem, nvp_read, nvp_write};
  ptx_launch pl = {.params = (const uint8_t *)(uintptr_t)l->cbank0_va + rec.param_base_B,
                   .params_size_B = l->cbank0_size_B - rec.param_base_B, .param_offsets = rec.param_offset_B,
                   .nparam_offsets = rec.nparams, .shared_size_B = 0, .mem = &ops,
                   /* the QMD's local window; none means the SASS has no stack (ptxas kept any .local array in
                    * registers), so the PTX's .local variables get their declared size */
                   .local_size_B = l->local_size_B, .local_size_given = l->local_size_B != 0,
                   .max_warp_instructions = r->budget};
  memcpy(pl.grid, l->grid, sizeof pl.grid);
  memcpy(pl.block, l->block, sizeof pl.block);
  const ptx_entry_info *e = NULL;
  hcq_status st = ptx_module_entry(mod, NULL, &e);
  if (!st && l->shared_size_B > e->static_shared_B) pl.shared_size_B = l->shared_size_B; /* dynamic shared */
  ptx_stats stats = {0};
  if (!st) st = ptx_launch_run(mod, &pl, &stats);
  r->thread_instructions += stats.thread_instructions;
  if (!st) return 0;
  /* a memory fault is the kernel's (posted as Xid 31); anything else is the launch's */
  int code = hcq_status_code(st) == HCQ_CODE_KERNEL_FAULT || strstr(hcq_status_message(st), "MMU") ? EFAULT : EINVAL;
  snprintf(detail, KIF_DETAIL_MAX, "kernel %s: %s", e && e->name ? e->name : "?", hcq_status_message(st));
  hcq_status_free(st);
  return code;
}

static nv_mock_ptx *env_runner;
static nv_mock *env_mock;

nv_mock_ptx *nv_mock_env_runner(nv_mock **out_mock) {
  if (out_mock) *out_mock = env_mock;
  return env_runner;
}

hcq_status nv_mock_env_install(kif *k) {
  static nv_mock *m;
  static nv_mock_ptx *r;
  if (m) return hcq_status_make(HCQ_CODE_INVALID, "the nv mock is installed already");
  nv_mock_config cfg = {0};
  const char *arch = getenv("HCQ_MOCK_NV_ARCH");
  if (arch && *arch) {
    if (!strcmp(arch, "hopper")) cfg.arch = NV_MOCK_HOPPER;
    else if (!strcmp(arch, "ada")) cfg.arch = NV_MOCK_ADA;
    else if (!strcmp(arch, "blackwell")) cfg.arch = NV_MOCK_BLACKWELL;
    else return hcq_status_make(HCQ_CODE_INVALID, "HCQ_MOCK_NV_ARCH=%s: want hopper, ada or blackwell", arch);
  }
  HCQ_TRY(nv_mock_create(&cfg, &m));
  hcq_status st = nv_mock_ptx_create(&r);
  if (!st) st = nv_mock_attach(m, k);
  if (st) {
    nv_mock_ptx_destroy(r);
    nv_mock_destroy(m);
    m = NULL, r = NULL;
    return st;
  }
  nv_mock_set_launch_hook(m, nv_mock_ptx_launch, r);
  env_runner = r, env_mock = m;
  return HCQ_OK;
}
