/* NV mock: the UVM ioctls (request = the raw number) and the GPU VA ranges they create. A range becomes
 * accessible to the GPU once an allocation is mapped into it; every method and kernel access is checked
 * against these ranges (nv_mock_check_access). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "autogen/nv_decode.h"
#include "emulator_tests/nv_mock_internal.h"

int nvm_map_memory(nv_mock *m, nvm_obj *o, uint64_t va, char *detail) {
  (void)m;
  if (o->va == va) return 0;
  if (o->va) {
    snprintf(detail, KIF_DETAIL_MAX, "nv-mock: memory 0x%x is already mapped at 0x%llx, not 0x%llx", o->handle,
             (unsigned long long)o->va, (unsigned long long)va);
    return EINVAL;
  }
  void *p = mmap((void *)(uintptr_t)va, o->size_B, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, o->memfd, 0);
  if (p == MAP_FAILED) {
    snprintf(detail, KIF_DETAIL_MAX, "nv-mock: cannot place memory 0x%x at 0x%llx", o->handle, (unsigned long long)va);
    return errno;
  }
  o->va = va;
  return 0;
}

static nvm_range *nvm_range_at(nv_mock *m, uint64_t base) {
  for (int i = 0; i < m->nranges; i++)
    if (m->ranges[i].base == base) return &m->ranges[i];
  return NULL;
}

static uint32_t nvm_create_range(nv_mock *m, const nvm_file *f, uint64_t base, uint64_t length) {
  if (!length || (base & 0xfff) || (length & 0xfff) || base + length < base) return NV_ERR_INVALID_ADDRESS;
  for (int i = 0; i < m->nranges; i++)
    if (base < m->ranges[i].base + m->ranges[i].length && m->ranges[i].base < base + length)
      return NV_ERR_UVM_ADDRESS_IN_USE;
  if (m->nranges == m->cap_ranges) {
    int cap = m->cap_ranges ? 2 * m->cap_ranges : 32;
    nvm_range *r = realloc(m->ranges, (size_t)cap * sizeof *r);
    if (!r) return NV_ERR_NO_MEMORY;
    m->ranges = r, m->cap_ranges = cap;
  }
  m->ranges[m->nranges++] = (nvm_range){base, length, 0, false, f};
  return NV_OK;
}

static uint32_t nvm_map_external(nv_mock *m, UVM_MAP_EXTERNAL_ALLOCATION_PARAMS *p, char *detail) {
  nvm_range *r = NULL;
  for (int i = 0; i < m->nranges; i++)
    if (p->base >= m->ranges[i].base && p->base + p->length <= m->ranges[i].base + m->ranges[i].length)
      r = &m->ranges[i];
  if (!r || !p->length) return NV_ERR_INVALID_ADDRESS;
  nvm_obj *client = nvm_find(m, p->hClient), *o = nvm_find(m, p->hMemory);
  if (!client || client->kind != NVM_CLIENT) return NV_ERR_INVALID_CLIENT;
  if (!o || (o->kind != NVM_MEMORY && o->kind != NVM_OSDESC)) return NV_ERR_OBJECT_NOT_FOUND;
  if (!p->gpuAttributesCount || p->gpuAttributesCount > 256) return NV_ERR_INVALID_ARGUMENT;
  if (p->offset + p->length > o->size_B) return NV_ERR_INVALID_LIMIT;
  if (o->kind == NVM_OSDESC && o->va != p->base) return NV_ERR_INVALID_ADDRESS; /* host pages stay where they are */
  if (o->kind == NVM_MEMORY && (p->offset || nvm_map_memory(m, o, p->base, detail))) return NV_ERR_INVALID_ADDRESS;
  r->hmem = o->handle, r->mapped = true;
  return NV_OK;
}

static uint32_t nvm_free_range(nv_mock *m, uint64_t base) {
  nvm_range *r = nvm_range_at(m, base);
  if (!r) return NV_ERR_INVALID_ADDRESS;
  *r = m->ranges[--m->nranges];
  return NV_OK;
}

void nvm_uvm_close(nv_mock *m, const nvm_file *f) {
  for (int i = m->nranges - 1; i >= 0; i--)
    if (m->ranges[i].owner == f) m->ranges[i] = m->ranges[--m->nranges];
}

int nvm_uvm_ioctl(nv_mock *m, const nvm_file *f, unsigned long request, void *arg, char *detail) {
  uint32_t st = NV_OK, *status;
  switch (request) {
  case UVM_INITIALIZE: status = &((UVM_INITIALIZE_PARAMS *)arg)->rmStatus; break;
  case UVM_MM_INITIALIZE: status = &((UVM_MM_INITIALIZE_PARAMS *)arg)->rmStatus; break;
  case UVM_REGISTER_GPU: {
    UVM_REGISTER_GPU_PARAMS *p = arg;
    status = &p->rmStatus;
    if (p->gpu_uuid.uuid[0] < 0xa0 || p->gpu_uuid.uuid[0] >= 0xa0 + 16 * m->gpu_count) st = NV_ERR_GPU_UUID_NOT_FOUND;
    break;
  }
  case UVM_REGISTER_GPU_VASPACE: {
    UVM_REGISTER_GPU_VASPACE_PARAMS *p = arg;
    nvm_obj *v = nvm_find(m, p->hVaSpace);
    status = &p->rmStatus;
    if (!v || v->kind != NVM_VASPACE) st = NV_ERR_OBJECT_NOT_FOUND;
    break;
  }
  case UVM_ENABLE_PEER_ACCESS: status = &((UVM_ENABLE_PEER_ACCESS_PARAMS *)arg)->rmStatus; break;
  case UVM_REGISTER_CHANNEL: {
    UVM_REGISTER_CHANNEL_PARAMS *p = arg;
    nvm_obj *c = nvm_find(m, p->hChannel);
    status = &p->rmStatus;
    if (!c || c->kind != NVM_CHANNEL) st = NV_ERR_OBJECT_NOT_FOUND;
    break;
  }
  case UVM_CREATE_EXTERNAL_RANGE: {
    UVM_CREATE_EXTERNAL_RANGE_PARAMS *p = arg;
    status = &p->rmStatus;
    st = nvm_create_range(m, f, p->base, p->length);
    break;
  }
  case UVM_MAP_EXTERNAL_ALLOCATION: {
    UVM_MAP_EXTERNAL_ALLOCATION_PARAMS *p = arg;
    status = &p->rmStatus;
    st = nvm_map_external(m, p, detail);
    break;
  }
  case UVM_FREE:
    /* 590 dropped `length`: the status moved (the branch's layout decides where it is) */
    if (m->layout->UVM_FREE_PARAMS_size_B == sizeof(UVM_FREE_PARAMS_r590)) {
      status = &((UVM_FREE_PARAMS_r590 *)arg)->rmStatus;
      st = nvm_free_range(m, ((UVM_FREE_PARAMS_r590 *)arg)->base);
    } else {
      UVM_FREE_PARAMS_r570 *p = arg;
      nvm_range *r = nvm_range_at(m, p->base);
      status = &p->rmStatus;
      st = r && r->length != p->length ? NV_ERR_INVALID_ARGUMENT : nvm_free_range(m, p->base);
    }
    break;
  default:
    snprintf(detail, KIF_DETAIL_MAX, "nv-mock: no UVM ioctl 0x%lx", request);
    return ENOTTY;
  }
  *status = st;
  return 0;
}

int nv_mock_check_access(nv_mock *m, uint64_t va, uint64_t size_B, bool write, char *detail) {
  for (int i = 0; i < m->nranges; i++) {
    const nvm_range *r = &m->ranges[i];
    if (r->mapped && va >= r->base && va + size_B <= r->base + r->length && va + size_B >= va) return 0;
  }
  snprintf(detail, KIF_DETAIL_MAX, "MMU fault %s at 0x%llx: %s of %llu bytes outside every GPU mapping",
           nv_pfault_name(NV_PFAULT_FAULT_TYPE_PTE), (unsigned long long)va, write ? "write" : "read",
           (unsigned long long)size_B);
  return EFAULT;
}
