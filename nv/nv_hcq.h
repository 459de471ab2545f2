/* The NV driver as an hcq device (hcq/device.h): the encoder writes push-buffer methods from the queue's first
 * word; submit copies them into the channel's command ring and rings the doorbell. */
#ifndef HCQ_NV_HCQ_H
#define HCQ_NV_HCQ_H

#include "hcq/device.h"
#include "kernel_iface/kif.h"
#include "nv/nv_dev.h"

/* Opens NV GPU `index` through k and wraps it as an hcq device named "NV:<index>". */
hcq_status nv_hcq_open(kif *k, int index, hcq_device **out);
void nv_hcq_close(hcq_device *dev); /* NULL is fine */
nv_dev *nv_hcq_dev(hcq_device *dev);

#endif
