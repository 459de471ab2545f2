/* The generated ioctl tables (KFD, NVIDIA RM escapes, NVIDIA UVM of the newest supported branch) and their
 * registration with a kernel_iface context: drivers, the tool and tests call this on the context they use. A driver
 * that knows the running NV branch then registers that branch's UVM table over it (nv_layout_for_version). */
#ifndef HCQ_AUTOGEN_ABI_TABLES_H
#define HCQ_AUTOGEN_ABI_TABLES_H

#include "base/status.h"
#include "kernel_iface/kif.h"

hcq_status autogen_register_decoders(kif *k);

#endif
