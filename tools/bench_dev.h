/* hcq bench --dev amd:N | nv:N (tools/bench_dev.c): the GPU rows, in the CPU suite's table and JSON formats. */
#ifndef HCQ_TOOLS_BENCH_DEV_H
#define HCQ_TOOLS_BENCH_DEV_H

#include <stdbool.h>

/* Runs the rows `only` names (NULL: all; "launch" selects the three launch rows) on devname; the exit status. */
int hcq_bench_dev(const char *devname, bool json, bool quick, const char *only);

#endif
