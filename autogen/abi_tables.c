/* The ioctl descriptor tables kernel_iface uses by default for names in errors and decoded traces. */
#include "autogen/abi_tables.h"

#include "autogen/kfd_decode.h"
#include "autogen/nv_layout.h"

static const kif_ioctl_table *const tables[] = {&kfd_ioctl_table, &nv_rm_ioctl_table, &nv_uvm_ioctl_table};

const kif_ioctl_table *const *autogen_ioctl_tables(size_t *out_count) {
  *out_count = sizeof tables / sizeof tables[0];
  return tables;
}
