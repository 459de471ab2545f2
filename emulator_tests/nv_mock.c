/* NV mock: the backend (files, RM escapes, object tree, mappings). Controls are in nv_mock_ctrl.c, UVM in
 * nv_mock_uvm.c, channels in nv_mock_gpfifo.c. Escape numbers, structs and status codes come from autogen. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "autogen/nv_decode.h"
#include "emulator_tests/nv_mock_internal.h"

static const uint32_t nvm_common[] = {NV01_ROOT_CLIENT, NV01_DEVICE_0, NV20_SUBDEVICE_0, NV01_MEMORY_SYSTEM,
                                      NV01_MEMORY_LOCAL_USER, NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, FERMI_VASPACE_A,
                                      KEPLER_CHANNEL_GROUP_A, FERMI_CONTEXT_SHARE_A, GT200_DEBUGGER};
static const uint32_t nvm_hopper[] = {TURING_USERMODE_A, HOPPER_USERMODE_A, AMPERE_CHANNEL_GPFIFO_A,
                                      HOPPER_CHANNEL_GPFIFO_A, HOPPER_COMPUTE_A, HOPPER_DMA_COPY_A};
static const uint32_t nvm_ada[] = {TURING_USERMODE_A, AMPERE_CHANNEL_GPFIFO_A, ADA_COMPUTE_A, AMPERE_DMA_COPY_B};
static const uint32_t nvm_blackwell[] = {HOPPER_USERMODE_A, BLACKWELL_USERMODE_A, BLACKWELL_CHANNEL_GPFIFO_A,
                                         BLACKWELL_COMPUTE_B, BLACKWELL_DMA_COPY_B};
static const uint32_t nvm_no_compute[] = {TURING_USERMODE_A, AMPERE_CHANNEL_GPFIFO_A, AMPERE_DMA_COPY_B};

const uint32_t *nvm_classes(const nv_mock *m, int *count) {
  switch (m->arch) {
  case NV_MOCK_HOPPER: *count = (int)(sizeof nvm_hopper / 4); return nvm_hopper;
  case NV_MOCK_ADA: *count = (int)(sizeof nvm_ada / 4); return nvm_ada;
  case NV_MOCK_BLACKWELL: *count = (int)(sizeof nvm_blackwell / 4); return nvm_blackwell;
  default: *count = (int)(sizeof nvm_no_compute / 4); return nvm_no_compute;
  }
}

bool nvm_offers_class(const nv_mock *m, uint32_t cls) {
  int n;
  const uint32_t *c = nvm_classes(m, &n);
  for (int i = 0; i < n; i++)
    if (c[i] == cls) return true;
  for (size_t i = 0; i < sizeof nvm_common / 4; i++)
    if (nvm_common[i] == cls) return true;
  return false;
}

nvm_obj *nvm_find(nv_mock *m, uint32_t handle) {
  for (int i = 0; i < m->nobjs; i++)
    if (m->objs[i].handle == handle && handle) return &m->objs[i];
  return NULL;
}

nvm_obj *nvm_find_channel_by_token(nv_mock *m, uint32_t token) {
  for (int i = 0; i < m->nobjs; i++)
    if (m->objs[i].kind == NVM_CHANNEL && m->objs[i].chan->token == token) return &m->objs[i];
  return NULL;
}

static void nvm_release(nvm_obj *o) {
  if (o->memfd >= 0) close(o->memfd);
  /* GPU memory the mock mapped goes back to an inaccessible reservation; the driver's own pages stay */
  if (o->kind == NVM_MEMORY && o->va)
    mmap((void *)(uintptr_t)o->va, o->size_B, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  if (o->chan) nvm_channel_free(o->chan);
}

/* Frees handle and every object below it. */
void nvm_free_tree(nv_mock *m, uint32_t handle) {
  for (int i = 0; i < m->nobjs; i++)
    if (m->objs[i].parent == handle && m->objs[i].handle != handle) {
      nvm_free_tree(m, m->objs[i].handle);
      i = -1; /* the array changed */
    }
  for (int i = 0; i < m->nobjs; i++)
    if (m->objs[i].handle == handle) {
      nvm_release(&m->objs[i]);
      m->objs[i] = m->objs[--m->nobjs];
      return;
    }
}

static nvm_obj *nvm_add(nv_mock *m, uint32_t handle, uint32_t parent, uint32_t cls, nvm_kind kind) {
  if (m->nobjs == m->cap_objs) {
    int cap = m->cap_objs ? m->cap_objs * 2 : 64;
    nvm_obj *n = realloc(m->objs, (size_t)cap * sizeof *n);
    if (!n) return NULL;
    m->objs = n, m->cap_objs = cap;
  }
  nvm_obj *o = &m->objs[m->nobjs++];
  memset(o, 0, sizeof *o);
  o->handle = handle, o->parent = parent, o->cls = cls, o->kind = kind, o->memfd = -1;
  nvm_obj *p = nvm_find(m, parent);
  o->gpu = p ? p->gpu : 0;
  return o;
}

/* The kind a class makes and the parent kind it needs. */
static bool nvm_class_kind(const nv_mock *m, uint32_t cls, nvm_kind *kind, nvm_kind *parent) {
  switch (cls) {
  case NV01_DEVICE_0: *kind = NVM_DEVICE, *parent = NVM_CLIENT; return true;
  case NV20_SUBDEVICE_0: *kind = NVM_SUBDEVICE, *parent = NVM_DEVICE; return true;
  case FERMI_VASPACE_A: *kind = NVM_VASPACE, *parent = NVM_DEVICE; return true;
  case KEPLER_CHANNEL_GROUP_A: *kind = NVM_CHGROUP, *parent = NVM_DEVICE; return true;
  case FERMI_CONTEXT_SHARE_A: *kind = NVM_CTXSHARE, *parent = NVM_CHGROUP; return true;
  case GT200_DEBUGGER: *kind = NVM_DEBUGGER, *parent = NVM_DEVICE; return true;
  case NV01_MEMORY_SYSTEM: case NV01_MEMORY_LOCAL_USER: *kind = NVM_MEMORY, *parent = NVM_DEVICE; return true;
  case TURING_USERMODE_A: case HOPPER_USERMODE_A: case BLACKWELL_USERMODE_A:
    *kind = NVM_USERMODE, *parent = NVM_SUBDEVICE;
    return nvm_offers_class(m, cls);
  case AMPERE_CHANNEL_GPFIFO_A: case HOPPER_CHANNEL_GPFIFO_A: case BLACKWELL_CHANNEL_GPFIFO_A:
    *kind = NVM_CHANNEL, *parent = NVM_CHGROUP;
    return nvm_offers_class(m, cls);
  default:
    *kind = NVM_ENGINE, *parent = NVM_CHANNEL; /* compute and copy classes */
    return (cls & 0xff) != 0 && ((cls & 0xff) == 0xc0 || (cls & 0xff) == 0xb5) && nvm_offers_class(m, cls);
  }
}

static uint32_t nvm_new_handle(nv_mock *m, uint32_t requested) {
  if (requested) return nvm_find(m, requested) ? 0 : requested;
  while (nvm_find(m, ++m->next_handle)) {}
  return m->next_handle;
}

static uint32_t nvm_alloc_channel(nv_mock *m, nvm_obj *o, const NV_CHANNEL_ALLOC_PARAMS *p) {
  nvm_obj *userd = nvm_find(m, p->hUserdMemory[0]), *ctx = nvm_find(m, p->hContextShare);
  if (!userd || userd->kind != NVM_MEMORY || !ctx || ctx->kind != NVM_CTXSHARE) return NV_ERR_INVALID_OBJECT_HANDLE;
  if (!userd->va) return NV_ERR_INVALID_STATE; /* the mock needs to know where USERD lives */
  if (!p->gpFifoEntries || (p->gpFifoEntries & (p->gpFifoEntries - 1))) return NV_ERR_INVALID_ARGUMENT;
  if (p->userdOffset[0] + sizeof(AmpereAControlGPFifo) > userd->size_B) return NV_ERR_INVALID_OFFSET;
  nvm_channel *c = calloc(1, sizeof *c);
  uint32_t *regs = calloc((size_t)NV_NUMBER_OF_SUBCHANNELS * NVM_METHODS, 4);
  if (!c || !regs) return free(c), free(regs), NV_ERR_NO_MEMORY;
  c->regs = regs;
  c->gpfifo_va = p->gpFifoOffset, c->entries = p->gpFifoEntries;
  c->userd_va = userd->va + p->userdOffset[0];
  c->token = ++m->next_token;
  c->error_notifier = p->hObjectError;
  o->chan = c;
  return NV_OK;
}

/* NV_ESC_RM_ALLOC */
static uint32_t nvm_rm_alloc(nv_mock *m, const nvm_file *f, NVOS21_PARAMETERS *p) {
  if (p->hClass == NV01_ROOT_CLIENT || p->hClass == NV01_ROOT) {
    uint32_t h = nvm_new_handle(m, p->hObjectNew);
    if (!h) return NV_ERR_INSERT_DUPLICATE_NAME;
    nvm_obj *c = nvm_add(m, h, h, p->hClass, NVM_CLIENT);
    if (!c) return NV_ERR_NO_MEMORY;
    c->owner = f;
    p->hObjectNew = h;
    return NV_OK;
  }
  nvm_obj *client = nvm_find(m, p->hRoot), *parent = nvm_find(m, p->hObjectParent);
  if (!client || client->kind != NVM_CLIENT) return NV_ERR_INVALID_CLIENT;
  nvm_kind kind, pkind;
  if (!nvm_class_kind(m, p->hClass, &kind, &pkind)) return NV_ERR_INVALID_CLASS;
  if (!parent || parent->kind != pkind) return NV_ERR_INVALID_OBJECT_PARENT;
  const void *params = (const void *)(uintptr_t)p->pAllocParms;
  uint64_t size_B = 0;
  if (kind == NVM_MEMORY) {
    if (!params) return NV_ERR_INVALID_ARGUMENT;
    size_B = ((const NV_MEMORY_ALLOCATION_PARAMS *)params)->size;
    if (!size_B || (size_B & 0xfff) || size_B > (64ull << 30)) return NV_ERR_INVALID_LIMIT;
  }
  if ((kind == NVM_CHANNEL || kind == NVM_VASPACE || kind == NVM_DEVICE || kind == NVM_CTXSHARE) && !params)
    return NV_ERR_INVALID_ARGUMENT;
  if (kind == NVM_VASPACE) {
    /* RM copies in the class's parameter struct at this branch's size (paramsSize is not used): a driver that
     * passes an older branch's shorter struct is over-read here, which ASan reports */
    unsigned char copy[64];
    memcpy(copy, params, m->layout->NV_VASPACE_ALLOCATION_PARAMETERS_size_B);
  }
  if (kind == NVM_DEVICE && ((const NV0080_ALLOC_PARAMETERS *)params)->deviceId >= (uint32_t)m->gpu_count)
    return NV_ERR_INVALID_ARGUMENT;
  if (kind == NVM_CTXSHARE) {
    nvm_obj *vas = nvm_find(m, ((const NV_CTXSHARE_ALLOCATION_PARAMETERS *)params)->hVASpace);
    if (!vas || vas->kind != NVM_VASPACE) return NV_ERR_INVALID_OBJECT_HANDLE;
  }
  uint32_t h = nvm_new_handle(m, p->hObjectNew);
  if (!h) return NV_ERR_INSERT_DUPLICATE_NAME;
  nvm_obj *o = nvm_add(m, h, p->hObjectParent, p->hClass, kind);
  if (!o) return NV_ERR_NO_MEMORY;
  if (kind == NVM_DEVICE) o->gpu = (int)((const NV0080_ALLOC_PARAMETERS *)params)->deviceId;
  uint32_t st = NV_OK;
  if (kind == NVM_MEMORY) {
    o->size_B = size_B;
    o->memfd = memfd_create("nv_mock_mem", MFD_CLOEXEC);
    if (o->memfd < 0 || ftruncate(o->memfd, (off_t)size_B) != 0) st = NV_ERR_NO_MEMORY;
  } else if (kind == NVM_CHANNEL) {
    st = nvm_alloc_channel(m, o, params);
  }
  if (st != NV_OK) {
    nvm_free_tree(m, h);
    return st;
  }
  p->hObjectNew = h;
  return NV_OK;
}

static uint32_t nvm_rm_free(nv_mock *m, NVOS00_PARAMETERS *p) {
  nvm_obj *client = nvm_find(m, p->hRoot), *o = nvm_find(m, p->hObjectOld);
  if (!client || client->kind != NVM_CLIENT) return NV_ERR_INVALID_CLIENT;
  if (!o) return NV_ERR_INVALID_OBJECT_HANDLE;
  if (o->kind != NVM_CLIENT && o->parent != p->hObjectParent) return NV_ERR_INVALID_OBJECT_PARENT;
  nvm_free_tree(m, o->handle);
  return NV_OK;
}

static uint32_t nvm_alloc_os_desc(nv_mock *m, NVOS02_PARAMETERS *p) {
  nvm_obj *client = nvm_find(m, p->hRoot), *dev = nvm_find(m, p->hObjectParent);
  if (!client || client->kind != NVM_CLIENT) return NV_ERR_INVALID_CLIENT;
  if (p->hClass != NV01_MEMORY_SYSTEM_OS_DESCRIPTOR) return NV_ERR_INVALID_CLASS;
  if (!dev || dev->kind != NVM_DEVICE) return NV_ERR_INVALID_OBJECT_PARENT;
  if (!p->pMemory || (p->pMemory & 0xfff) || ((p->limit + 1) & 0xfff)) return NV_ERR_INVALID_ADDRESS;
  uint32_t h = nvm_new_handle(m, p->hObjectNew);
  if (!h) return NV_ERR_INSERT_DUPLICATE_NAME;
  nvm_obj *o = nvm_add(m, h, p->hObjectParent, p->hClass, NVM_OSDESC);
  if (!o) return NV_ERR_NO_MEMORY;
  o->va = p->pMemory, o->size_B = p->limit + 1;
  p->hObjectNew = h;
  return NV_OK;
}

/* The newest open file with that fd (a file a mapping keeps alive after close may share the number). */
static nvm_file *nvm_file_of_fd(nv_mock *m, int fd) {
  nvm_file *best = NULL;
  for (int i = 0; i < m->nfiles; i++)
    if (m->files[i]->fd == fd && (!best || m->files[i]->seq > best->seq)) best = m->files[i];
  return best;
}

static uint32_t nvm_map(nv_mock *m, nv_ioctl_nvos33_parameters_with_fd *w) {
  NVOS33_PARAMETERS *p = &w->params;
  nvm_obj *client = nvm_find(m, p->hClient), *o = nvm_find(m, p->hMemory), *dev = nvm_find(m, p->hDevice);
  if (!client || client->kind != NVM_CLIENT) return NV_ERR_INVALID_CLIENT;
  if (!dev || (dev->kind != NVM_DEVICE && dev->kind != NVM_SUBDEVICE)) return NV_ERR_INVALID_OBJECT_PARENT;
  if (!o || (o->kind != NVM_MEMORY && o->kind != NVM_USERMODE)) return NV_ERR_INVALID_OBJECT_HANDLE;
  if (o->kind == NVM_MEMORY && (p->offset + p->length > o->size_B || !p->length)) return NV_ERR_INVALID_LIMIT;
  nvm_file *f = nvm_file_of_fd(m, w->fd);
  if (!f || f->kind == NVM_FILE_UVM) return NV_ERR_INVALID_ARGUMENT;
  f->map_handle = o->handle, f->map_length = p->length;
  p->pLinearAddress = 0;
  return NV_OK;
}

static int nvm_card_info(nv_mock *m, nv_ioctl_card_info_t *cards) {
  memset(cards, 0, sizeof(nv_ioctl_card_info_t) * 64);
  for (int i = 0; i < m->gpu_count; i++) {
    cards[i].valid = 1;
    cards[i].gpu_id = 0x100 * (uint32_t)(i + 1);
    cards[i].minor_number = (uint32_t)i;
    cards[i].pci_info.vendor_id = 0x10de;
    cards[i].pci_info.device_id = m->arch == NV_MOCK_HOPPER ? 0x2335 : 0x2684; /* H200, RTX 4090 */
  }
  return 0;
}

static int nvm_ioctl(kif_backend *b, kif_file *file, unsigned long request, void *arg, char *detail) {
  nv_mock *m = (nv_mock *)b;
  nvm_file *f = file->data;
  if (f->kind == NVM_FILE_UVM) return nvm_uvm_ioctl(m, f, request, arg, detail);
  switch (request) {
  case NV_ESC_RM_ALLOC: ((NVOS21_PARAMETERS *)arg)->status = nvm_rm_alloc(m, f, arg); return 0;
  case NV_ESC_RM_FREE: ((NVOS00_PARAMETERS *)arg)->status = nvm_rm_free(m, arg); return 0;
  case NV_ESC_RM_CONTROL: ((NVOS54_PARAMETERS *)arg)->status = nvm_control(m, arg); return 0;
  case NV_ESC_RM_ALLOC_MEMORY: {
    nv_ioctl_nvos02_parameters_with_fd *w = arg;
    w->params.status = nvm_alloc_os_desc(m, &w->params);
    return 0;
  }
  case NV_ESC_RM_MAP_MEMORY: {
    nv_ioctl_nvos33_parameters_with_fd *w = arg;
    if (f->kind != NVM_FILE_CTL) return snprintf(detail, KIF_DETAIL_MAX, "nv-mock: RM_MAP_MEMORY goes to nvidiactl"), EINVAL;
    w->params.status = nvm_map(m, w);
    return 0;
  }
  case NV_ESC_CARD_INFO:
    if (f->kind != NVM_FILE_CTL) return EINVAL;
    return nvm_card_info(m, arg);
  case NV_ESC_REGISTER_FD: return f->kind == NVM_FILE_GPU ? 0 : EINVAL;
  case NV_ESC_CHECK_VERSION_STR: {
    nv_ioctl_rm_api_version_t *v = arg;
    if (v->cmd == NV_RM_API_VERSION_CMD_QUERY) {
      snprintf((char *)v->versionString, sizeof v->versionString, "%s", m->version);
      v->reply = NV_RM_API_VERSION_REPLY_RECOGNIZED;
    } else {
      v->reply = strncmp((const char *)v->versionString, m->version, sizeof v->versionString) == 0
                     ? NV_RM_API_VERSION_REPLY_RECOGNIZED
                     : NV_RM_API_VERSION_REPLY_UNRECOGNIZED;
    }
    return 0;
  }
  default:
    snprintf(detail, KIF_DETAIL_MAX, "nv-mock: no RM escape 0x%lx (nr 0x%lx)", request, request & 0xff);
    return ENOTTY;
  }
}

static int nvm_open(kif_backend *b, kif_file *file, char *detail) {
  nv_mock *m = (nv_mock *)b;
  nvm_file nf = {0};
  if (strcmp(file->path, "/dev/nvidiactl") == 0) nf.kind = NVM_FILE_CTL;
  else if (strcmp(file->path, "/dev/nvidia-uvm") == 0) nf.kind = NVM_FILE_UVM;
  else {
    char *end;
    long minor = strtol(file->path + 11, &end, 10);
    if (end == file->path + 11 || *end || minor < 0 || minor >= m->gpu_count) {
      snprintf(detail, KIF_DETAIL_MAX, "nv-mock: no device %s (%d GPUs)", file->path, m->gpu_count);
      return ENOENT;
    }
    nf.kind = NVM_FILE_GPU, nf.gpu = (int)minor;
  }
  if (m->nfiles == m->cap_files) {
    int cap = m->cap_files ? 2 * m->cap_files : 16;
    nvm_file **n = realloc(m->files, (size_t)cap * sizeof *n);
    if (!n) return ENOMEM;
    m->files = n, m->cap_files = cap;
  }
  nvm_file *f = malloc(sizeof *f);
  if (!f) return ENOMEM;
  *f = nf;
  f->fd = file->fd, f->seq = ++m->file_seq;
  m->files[m->nfiles++] = f;
  file->data = f;
  return 0;
}

static int nvm_close(kif_backend *b, kif_file *file) {
  nv_mock *m = (nv_mock *)b;
  /* as the kernel driver does: a closing control file frees its clients, a closing UVM file its VA space */
  for (int i = 0; i < m->nobjs; i++)
    if (m->objs[i].kind == NVM_CLIENT && m->objs[i].owner == file->data) nvm_free_tree(m, m->objs[i].handle), i = -1;
  nvm_uvm_close(m, file->data);
  for (int i = 0; i < m->nfiles; i++)
    if (m->files[i] == file->data) {
      free(m->files[i]);
      m->files[i] = m->files[--m->nfiles];
      break;
    }
  return 0;
}

static int nvm_mmap(kif_backend *b, kif_file *file, void *addr, size_t size_B, int prot, int flags, uint64_t offset,
                    void **out_addr, char *detail) {
  nv_mock *m = (nv_mock *)b;
  nvm_file *f = file->data;
  (void)prot, (void)flags;
  nvm_obj *o = nvm_find(m, f->map_handle);
  f->map_handle = 0;
  if (!o || offset) {
    snprintf(detail, KIF_DETAIL_MAX, "nv-mock: mmap of %s without a preceding NV_ESC_RM_MAP_MEMORY", file->path);
    return EINVAL;
  }
  if (o->kind == NVM_USERMODE) {
    if (size_B > sizeof m->doorbell) return EINVAL;
    *out_addr = m->doorbell;
    return 0;
  }
  if (!addr || size_B != o->size_B) {
    snprintf(detail, KIF_DETAIL_MAX, "nv-mock: memory 0x%x maps whole (0x%llx bytes) at a fixed address", o->handle,
             (unsigned long long)o->size_B);
    return EINVAL;
  }
  int err = nvm_map_memory(m, o, (uint64_t)(uintptr_t)addr, detail);
  if (err) return err;
  o->cpu_mapped = true;
  *out_addr = addr;
  return 0;
}

static int nvm_munmap(kif_backend *b, kif_file *file, void *addr, size_t size_B) {
  nv_mock *m = (nv_mock *)b;
  (void)file;
  if ((unsigned char *)addr == m->doorbell) return 0;
  for (int i = 0; i < m->nobjs; i++)
    if (m->objs[i].kind == NVM_MEMORY && m->objs[i].va == (uint64_t)(uintptr_t)addr) m->objs[i].cpu_mapped = false;
  /* the pages stay while the GPU mapping lives; nvm_release or UVM_FREE takes them back */
  (void)size_B;
  return 0;
}

static int nvm_mmio_write(kif_backend *b, kif_file *file, uint64_t offset, uint64_t value, unsigned width_B,
                          char *detail) {
  nv_mock *m = (nv_mock *)b;
  (void)file;
  if (offset != NVC361_NOTIFY_CHANNEL_PENDING || width_B != 4) {
    snprintf(detail, KIF_DETAIL_MAX, "nv-mock: usermode store at 0x%llx (width %u): only NOTIFY_CHANNEL_PENDING 0x%x",
             (unsigned long long)offset, width_B, NVC361_NOTIFY_CHANNEL_PENDING);
    return EINVAL;
  }
  m->doorbells++;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int err = nvm_doorbell(m, (uint32_t)value, detail);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  m->doorbell_ns += (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec));
  return err;
}

static bool nvm_exists(kif_backend *b, const char *path) {
  nv_mock *m = (nv_mock *)b;
  if (!strcmp(path, "/dev/nvidiactl") || !strcmp(path, "/dev/nvidia-uvm")) return true;
  char *end;
  long minor = strtol(path + 11, &end, 10);
  return strncmp(path, "/dev/nvidia", 11) == 0 && end != path + 11 && !*end && minor >= 0 && minor < m->gpu_count;
}

static const kif_backend_vtable nvm_vtable = {
    .open = nvm_open, .close = nvm_close, .ioctl = nvm_ioctl, .mmap = nvm_mmap,
    .munmap = nvm_munmap, .mmio_write = nvm_mmio_write, .exists = nvm_exists,
};

hcq_status nv_mock_create(const nv_mock_config *config, nv_mock **out) {
  *out = NULL;
  nv_mock *m = aligned_alloc(4096, (sizeof(nv_mock) + 4095) & ~(size_t)4095);
  if (!m) return hcq_status_make(HCQ_CODE_NOMEM, "nv_mock_create: out of memory");
  memset(m, 0, sizeof *m);
  m->base.vtable = &nvm_vtable;
  m->base.name = "nv-mock";
  const char *v = config && config->version ? config->version : getenv("HCQ_MOCK_NV_VERSION");
  snprintf(m->version, sizeof m->version, "%s", v && *v ? v : "580.95.05");
  /* a branch we have no layout for is still advertised (the driver must refuse it); the mock itself then
   * answers with the newest layout */
  hcq_status st = nv_layout_for_version(m->version, &m->layout);
  if (st && hcq_status_code(st) != HCQ_CODE_UNSUPPORTED) {
    free(m);
    return hcq_status_annotate(st, "nv_mock_create");
  }
  hcq_status_free(st);
  if (!m->layout) m->layout = nv_layouts[nv_layout_count - 1];
  m->arch = config ? config->arch : NV_MOCK_HOPPER;
  m->gpu_count = config && config->gpu_count > 0 ? config->gpu_count : 1;
  m->gpcs = config && config->gpcs > 0 ? config->gpcs : 8;
  m->next_handle = 0xcaf00000u;
  m->next_token = 0x40;
  const char *t = getenv("HCQ_TRACE");
  m->trace = t && strcmp(t, "1") == 0;
  *out = m;
  return HCQ_OK;
}

static const char *const nvm_prefixes[] = {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia0", "/dev/nvidia1",
                                           "/dev/nvidia2",   "/dev/nvidia3",    "/dev/nvidia4", "/dev/nvidia5",
                                           "/dev/nvidia6",   "/dev/nvidia7"};

hcq_status nv_mock_attach(nv_mock *m, kif *k) {
  size_t n = 2 + (size_t)(m->gpu_count < 8 ? m->gpu_count : 8);
  HCQ_TRY(kif_register(k, &m->base, nvm_prefixes, n));
  m->k = k;
  return HCQ_OK;
}

hcq_status nv_mock_detach(nv_mock *m) {
  if (!m->k) return HCQ_OK;
  HCQ_TRY(kif_unregister(m->k, &m->base));
  m->k = NULL;
  return HCQ_OK;
}

void nv_mock_destroy(nv_mock *m) {
  if (!m) return;
  while (m->nobjs) nvm_free_tree(m, m->objs[0].handle);
  free(m->objs);
  free(m->ranges);
  for (int i = 0; i < m->nfiles; i++) free(m->files[i]);
  free(m->files);
  free(m);
}

void nv_mock_set_launch_hook(nv_mock *m, nv_mock_launch_fn fn, void *ctx) { m->launch_fn = fn, m->launch_ctx = ctx; }

int nv_mock_live_objects(const nv_mock *m) {
  int n = 0;
  for (int i = 0; i < m->nobjs; i++) n += m->objs[i].kind != NVM_CLIENT;
  return n;
}
int nv_mock_live_ranges(const nv_mock *m) { return m->nranges; }
int nv_mock_doorbells(const nv_mock *m) { return m->doorbells; }
int nv_mock_launches(const nv_mock *m) { return m->launches; }
int nv_mock_faults(const nv_mock *m) { return m->faults; }
uint64_t nv_mock_doorbell_ns(const nv_mock *m) { return m->doorbell_ns; }
const char *nv_mock_last_fault(const nv_mock *m) { return m->last_fault; }
