/* hcq.h: the public C API of hcq (link with `pkg-config --cflags --libs hcq`).
 *
 * One device is opened by name from a registry (one line per backend): "cpu" (= "cpu:0"), later "amd:0", "nv:1".
 * A program is the one kernel description (hcq/program.h): compile it from kernel text (docs/FORMATS.md) for the
 * device's own target, or read it from an AOT kernel image (`hcq compile --arch A -o k.img`). Loading it on a
 * device gives a kernel whose launch queue is recorded once; every hcq_rt_launch replays that queue with the
 * buffers' addresses and the variables' values patched in (only the words whose value changed are rewritten),
 * so a loop of launches is a graph replay. Launches run in order on the device's timeline; hcq_rt_sync waits for
 * all of them and reports the errors the device recorded.
 *
 *   hcq_rt_device *dev;   hcq_rt_open("cpu", &dev);
 *   hcq_rt_program *p;    hcq_rt_program_compile(dev, text, NULL, &p);    (or hcq_rt_program_from_image)
 *   hcq_rt_kernel *k;     hcq_rt_kernel_load(dev, hcq_rt_program_desc(p), &k);
 *   hcq_rt_buffer *b[2];  hcq_rt_buffer_alloc(dev, n * 4, HCQ_RT_MEM_HOST_VISIBLE, &b[0]); ...
 *   hcq_rt_launch(k, b, 2, (hcq_var[]){{"n", n}}, 1);
 *   hcq_rt_sync(dev, 5000);   then read hcq_rt_buffer_host(b[0])
 *
 * Errors: every call returns an hcq_status (NULL = success; hcq_status_message, hcq_status_code; free it with
 * hcq_status_free). Codes of note: HCQ_CODE_NOT_FOUND (unknown device or backend, a missing variable),
 * HCQ_CODE_INVALID (a bad value, buffer count or size), HCQ_CODE_KERNEL_FAULT (a kernel faulted; the device keeps
 * working), HCQ_CODE_TIMEOUT (a wait ran out of time), HCQ_CODE_DEVICE_LOST (the device cannot run anything more:
 * close it). Nothing here exits or aborts.
 *
 * Threads: one thread at a time per device (its kernels and buffers included).
 */
#ifndef HCQ_PUBLIC_H
#define HCQ_PUBLIC_H

#include <stddef.h>
#include <stdint.h>

#include "hcq/device_info.h"
#include "hcq/program.h"
#include "base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hcq_rt_device hcq_rt_device;
typedef struct hcq_rt_buffer hcq_rt_buffer;
typedef struct hcq_rt_program hcq_rt_program;
typedef struct hcq_rt_kernel hcq_rt_kernel;
typedef struct hcq_device hcq_device;           /* the lower layer (hcq/device.h), for drivers and tests */

/* Memory placement flags for hcq_rt_buffer_alloc (the values of HCQ_MEM_* in hcq/device.h). */
#define HCQ_RT_MEM_DEVICE_LOCAL (1u << 2) /* device memory */
#define HCQ_RT_MEM_HOST_VISIBLE (1u << 3) /* hcq_rt_buffer_host gives a CPU mapping */
#define HCQ_RT_MEM_UNCACHED (1u << 4)     /* write-combined / uncached CPU mapping */

/* ---- devices */
/* Open "BACKEND" or "BACKEND:INDEX" ("cpu", "cpu:0"). Unknown backend: HCQ_CODE_NOT_FOUND listing the known ones. */
hcq_status hcq_rt_open(const char *name, hcq_rt_device **out);
/* Waits for queued work (bounded by the device's wait timeout), frees every kernel and buffer still open, closes
 * the device. NULL is fine. */
void hcq_rt_close(hcq_rt_device *dev);
/* The backends the registry knows, one per line ("cpu\n..."), in a static string. */
const char *hcq_rt_backends(void);
/* How many devices a backend has here (open them as "BACKEND:0".."BACKEND:N-1"). An error explains why there are
 * none (e.g. no /dev/kfd, no permission); 0 with no error: the driver is there but has no device. */
hcq_status hcq_rt_device_count(const char *backend, unsigned *out_n);
/* Name, arch, compiler target, memory sizes, features, whether it is a mock. */
hcq_status hcq_rt_info(hcq_rt_device *dev, hcq_device_info *out);
hcq_device *hcq_rt_lower(hcq_rt_device *dev);
/* Use a device opened through its backend's own API (e.g. with backend options) with the runtime layer; with
 * `owned`, hcq_rt_close also closes it (ops->destroy), else it only frees the runtime's state. */
hcq_status hcq_rt_wrap(hcq_device *lower, int owned, hcq_rt_device **out);
/* Wait until every launch so far finished (HCQ_CODE_TIMEOUT, or HCQ_CODE_DEVICE_LOST for a hung device), then
 * return the first error the device recorded (HCQ_CODE_KERNEL_FAULT naming the kernel), or OK. */
hcq_status hcq_rt_sync(hcq_rt_device *dev, uint32_t timeout_ms);

/* ---- buffers (zero-filled) */
hcq_status hcq_rt_buffer_alloc(hcq_rt_device *dev, size_t size_B, unsigned flags, hcq_rt_buffer **out);
/* Freed once the launches queued so far are done (timeline-keyed retirement). NULL is fine. */
void hcq_rt_buffer_free(hcq_rt_buffer *buf);
void *hcq_rt_buffer_host(const hcq_rt_buffer *buf); /* CPU view (HCQ_RT_MEM_HOST_VISIBLE), else NULL */
uint64_t hcq_rt_buffer_va(const hcq_rt_buffer *buf);
size_t hcq_rt_buffer_size_B(const hcq_rt_buffer *buf);

/* ---- programs */
/* Compile kernel text for dev's target. opts: "UPCAST:0:4,THREAD:0:2", "" = no opts, NULL = the heuristic. */
hcq_status hcq_rt_program_compile(hcq_rt_device *dev, const char *kernel_text, const char *opts, hcq_rt_program **out);
/* Read an AOT kernel image (bytes are copied). Errors: corrupt, truncated, another machine's arch. */
hcq_status hcq_rt_program_from_image(const void *bytes, size_t size_B, hcq_rt_program **out);
const hcq_program *hcq_rt_program_desc(const hcq_rt_program *p);
void hcq_rt_program_free(hcq_rt_program *p);

/* ---- kernels: a program loaded on a device with its launch queue recorded */
/* prog (and its binary) need to stay valid only during the call. Errors: wrong target, malformed program,
 * binary the loader refuses (named). */
hcq_status hcq_rt_kernel_load(hcq_rt_device *dev, const hcq_program *prog, hcq_rt_kernel **out);
/* Retired once its launches are done. NULL is fine. */
void hcq_rt_kernel_free(hcq_rt_kernel *k);
const hcq_program *hcq_rt_kernel_program(const hcq_rt_kernel *k); /* with the device's layout */
/* Queue one launch: bufs[i] is buffer slot i (exactly the program's buffer count, each large enough for the
 * parameter's elements), vars give every variable by name (checked against its declared range and int32;
 * extra names are ignored). Nothing is queued when an argument is refused. */
hcq_status hcq_rt_launch(hcq_rt_kernel *k, hcq_rt_buffer *const *bufs, size_t nbufs, const hcq_var *vars,
                         size_t nvars);
/* Device time of the kernel's last finished launch in ms (after hcq_rt_sync), 0 if the device has no timestamps. */
double hcq_rt_kernel_last_ms(const hcq_rt_kernel *k);
/* The device's handle of the loaded program (what hcq_queue_exec takes), for recording one's own queues. */
uint64_t hcq_rt_kernel_handle(const hcq_rt_kernel *k);
/* Stream words the kernel's queue rewrote in total (a launch with nothing changed rewrites none). */
uint64_t hcq_rt_kernel_words_written(const hcq_rt_kernel *k);

#ifdef __cplusplus
}
#endif

#endif
