/* The runtime layer's private state and its registry (hcq/rt_registry.c). The core (hcq/) does not include this. */
#ifndef HCQ_RT_INTERNAL_H
#define HCQ_RT_INTERNAL_H

#include "hcq/device.h"
#include "hcq/queue.h"
#include "hcq/hcq.h"

/* One backend of the registry: open device `index` (the N of "name:N") as an initialized hcq_device whose
 * ops->destroy closes it. */
typedef struct hcq_rt_backend {
  const char *name;
  hcq_status (*open)(unsigned index, hcq_device **out);
  /* How many devices it has (NULL: exactly one). 0 with an OK status: none here; an error says why none can be
   * found (no /dev/kfd, no permission, an unsupported driver) and `hcq devices` shows it. */
  hcq_status (*count)(unsigned *out_n);
} hcq_rt_backend;

/* Add a backend at run time (tests: the fake GPU). At most 4. */
hcq_status hcq_rt_register(const hcq_rt_backend *b);
/* Find the backend of "name[:index]" and open it. */
hcq_status hcq_rt_backend_open(const char *name, hcq_device **out);

#endif
