/* Internals shared by the nv_mock_*.c files (not for drivers). */
#ifndef HCQ_NV_MOCK_INTERNAL_H
#define HCQ_NV_MOCK_INTERNAL_H

#include <stdio.h>

#include "autogen/nv_abi.h"
#include "autogen/nv_layout.h"
#include "emulator_tests/nv_mock.h"
#include "kernel_iface/kif_backend.h"

typedef enum {
  NVM_CLIENT, NVM_DEVICE, NVM_SUBDEVICE, NVM_USERMODE, NVM_VASPACE, NVM_CHGROUP, NVM_CTXSHARE, NVM_CHANNEL,
  NVM_ENGINE, NVM_DEBUGGER, NVM_MEMORY, NVM_OSDESC,
} nvm_kind;

#define NVM_METHODS 0x1000 /* dword methods per subchannel (12-bit method address) */

typedef struct nvm_channel {
  uint64_t gpfifo_va;
  uint32_t entries, token;
  uint64_t userd_va;
  uint32_t bound[NV_NUMBER_OF_SUBCHANNELS]; /* class bound by SET_OBJECT, 0 = none */
  uint32_t *regs;                           /* [subchannel][NVM_METHODS] method values */
  uint32_t resume_dw;                       /* dwords of the current entry already run (stalled acquire) */
  uint32_t error_notifier;                  /* hObjectError: RM posts channel errors (Xid) there */
  bool stalled;
  bool stopped; /* an error was posted to its group's notifier: RC stopped it, nothing more runs (GP_GET stays) */
} nvm_channel;

typedef struct nvm_obj {
  uint32_t handle, parent, cls;
  nvm_kind kind;
  int gpu;
  uint64_t size_B, va; /* memory: size and the VA it is mapped at (0 until mapped) */
  int memfd;           /* memory: backing, -1 for OS descriptors (the driver's own pages) */
  bool cpu_mapped;
  nvm_channel *chan;
  const struct nvm_file *owner; /* clients: the control file that made them (freed when it closes) */
} nvm_obj;

typedef struct nvm_range {
  uint64_t base, length;
  uint32_t hmem;
  bool mapped;
  const struct nvm_file *owner; /* the UVM file (its VA space goes when it closes) */
} nvm_range;

typedef enum { NVM_FILE_CTL, NVM_FILE_GPU, NVM_FILE_UVM } nvm_file_kind;
typedef struct nvm_file {
  int fd;       /* the placeholder fd kif handed out */
  unsigned seq; /* open order: a file a mapping keeps alive after close may share its fd number with a newer one */
  nvm_file_kind kind;
  int gpu;
  uint32_t map_handle; /* set by NV_ESC_RM_MAP_MEMORY naming this fd; consumed by mmap */
  uint64_t map_length;
} nvm_file;

struct nv_mock {
  kif_backend base;
  kif *k;
  char version[64];
  const nv_layout *layout;
  nv_mock_arch arch;
  int gpu_count, gpcs;
  nvm_obj *objs;
  int nobjs, cap_objs;
  nvm_range *ranges;
  int nranges, cap_ranges;
  nvm_file **files; /* open files (owned), looked up by fd for NV_ESC_RM_MAP_MEMORY */
  int nfiles, cap_files;
  unsigned file_seq;
  uint32_t next_handle, next_token;
  _Alignas(4096) unsigned char doorbell[0x10000];
  nv_mock_launch_fn launch_fn;
  void *launch_ctx;
  int doorbells, launches, faults;
  uint64_t doorbell_ns; /* time spent running channels at doorbells (the mock's "GPU" time) */
  char last_fault[KIF_DETAIL_MAX]; /* the last kernel fault posted to an error notifier */
  bool trace;
};

/* objects */
nvm_obj *nvm_find(nv_mock *m, uint32_t handle);
nvm_obj *nvm_find_channel_by_token(nv_mock *m, uint32_t token);
const uint32_t *nvm_classes(const nv_mock *m, int *count);
bool nvm_offers_class(const nv_mock *m, uint32_t cls);
/* RM controls (nv_mock_ctrl.c): returns an NV status for NVOS54 */
uint32_t nvm_control(nv_mock *m, NVOS54_PARAMETERS *p);
/* One GR_GET_INFO value (NV_OK, or NV_ERR_INVALID_ARGUMENT for an index the mock does not know). */
uint32_t nvm_gr_info(const nv_mock *m, uint32_t index, uint32_t *data);
/* frees an object and everything below it */
void nvm_free_tree(nv_mock *m, uint32_t handle);
/* UVM (nv_mock_uvm.c): returns 0 or an errno (the RM status goes into the struct) */
int nvm_uvm_ioctl(nv_mock *m, const nvm_file *f, unsigned long request, void *arg, char *detail);
void nvm_uvm_close(nv_mock *m, const nvm_file *f);
int nvm_map_memory(nv_mock *m, nvm_obj *o, uint64_t va, char *detail);
/* GPFIFO processor (nv_mock_gpfifo.c) */
int nvm_doorbell(nv_mock *m, uint32_t token, char *detail);
void nvm_channel_free(nvm_channel *c);

#endif
