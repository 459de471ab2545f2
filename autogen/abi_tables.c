/* Registers autogen's ioctl descriptor tables with a kernel_iface context (names in errors, decoded traces). */
#include "autogen/abi_tables.h"

#include "autogen/kfd_decode.h"
#include "autogen/nv_layout.h"

hcq_status autogen_register_decoders(kif *k) {
  const kif_ioctl_table *const tables[] = {&kfd_ioctl_table, &nv_rm_ioctl_table, &nv_uvm_ioctl_table};
  for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
    hcq_status st = kif_register_decoder(k, tables[i]);
    if (st) return st;
  }
  return HCQ_OK;
}
