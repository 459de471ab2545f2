/* All generated ioctl tables (KFD, NVIDIA RM escapes, NVIDIA UVM of the newest supported branch). A driver that
 * knows the running NV branch should install that branch's UVM table instead (nv_layout_for_version). */
#ifndef HCQ_AUTOGEN_ABI_TABLES_H
#define HCQ_AUTOGEN_ABI_TABLES_H

#include <stddef.h>

#include "kernel_iface/ioctl_desc.h"

const kif_ioctl_table *const *autogen_ioctl_tables(size_t *out_count);

#endif
