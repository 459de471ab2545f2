/* Test helpers for the tests that run every example kernel (header-only, for *_test.c): the sorted list of
 * the .uop files in examples/, and the check of a compiled kernel against the reference interpreter (compiler/interp.c) on
 * deterministically filled buffers: integers exactly, floats within 2e-5 relative + 1e-6 absolute + 4e-6 of the
 * buffer's largest finite value (reductions: reassociation and fused multiply-adds move cancelled results). */
#ifndef HCQ_COMPILER_EXAMPLES_TEST_UTIL_H
#define HCQ_COMPILER_EXAMPLES_TEST_UTIL_H

#include <dirent.h>
#include <math.h>

#include "compiler/cc_test_util.h"
#include "compiler/interp.h"
#include "base/testing.h"

#define ETU_MAX_EXAMPLES 256

static int etu_cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The file names (not paths) of the .uop files in examples/, sorted, malloc'd; returns how many (at most max). */
static inline int etu_list_examples(char *names[], int max) {
  DIR *d = opendir("examples");
  CHECK(d != NULL);
  int count = 0;
  for (struct dirent *e; d && (e = readdir(d)) && count < max;) {
    size_t l = strlen(e->d_name);
    if (l > 4 && strcmp(e->d_name + l - 4, ".uop") == 0) names[count++] = strdup(e->d_name);
  }
  if (d) closedir(d);
  qsort(names, (size_t)count, sizeof *names, etu_cmp_names);
  return count;
}

/* One kernel run: the variables' values, then what the comparison found. */
typedef struct etu_run {
  uop_var_val vals[8];
  size_t nvals;
  int64_t threads;
  size_t checked, bad;
  double worst;
} etu_run;

/* Fill ref and got alike (seed 7), give each variable min(max, 777) clamped to its range, and run the interpreter
 * on ref. */
static inline void etu_reference(uop_ctx *ctx, const uop *sink, cc_kbuf *ref, size_t nref, cc_kbuf *got,
                                 size_t ngot, etu_run *r) {
  CHECK_OK(cc_kbufs_alloc_fill(ref, nref, 7));
  CHECK_OK(cc_kbufs_alloc_fill(got, ngot, 7));
  const uop **nodes;
  size_t count;
  CHECK_OK(uop_toposort(ctx, sink, &nodes, &count));
  r->nvals = 0;
  for (size_t i = 0; i < count && r->nvals < 8; i++)
    if (nodes[i]->op == UOP_DEFINE_VAR) {
      int64_t v = nodes[i]->arg.i2 < 777 ? nodes[i]->arg.i2 : 777;
      if (v < nodes[i]->arg.i) v = nodes[i]->arg.i;
      r->vals[r->nvals].name = nodes[i]->arg.str;
      r->vals[r->nvals++].value = v;
    }
  void *bufs[16] = {0};
  size_t sizes[16] = {0};
  for (size_t i = 0; i < nref && ref[i].slot < 16; i++) {
    bufs[ref[i].slot] = ref[i].data;
    sizes[ref[i].slot] = ref[i].size_B;
  }
  CHECK_OK(cc_interp_run(sink, bufs, sizes, 16, r->vals, r->nvals));
}

/* Compare got with ref (after a run): r->checked elements, r->bad mismatches, r->worst the largest float error. */
static inline void etu_compare(const cc_kbuf *ref, size_t nref, const cc_kbuf *got, etu_run *r) {
  r->bad = r->checked = 0;
  r->worst = 0;
  for (size_t i = 0; i < nref; i++) {
    bool is_float = uop_dt_is_float(ref[i].dtype);
    /* Normwise term for reductions: a result that cancels to near 0 carries the rounding of its large terms, which
     * reassociation (opts) and fused multiply-adds change; bound it by the buffer's largest finite value. */
    double norm = 0;
    for (int64_t e = 0; is_float && e < ref[i].nelems; e++) {
      double a = fabs(tu_elem(ref[i].data, ref[i].dtype, e));
      if (isfinite(a) && a > norm) norm = a;
    }
    for (int64_t e = 0; e < ref[i].nelems; e++) {
      r->checked++;
      r->bad += !tu_elem_match(ref[i].data, got[i].data, ref[i].dtype, e, 2e-5, 1e-6 + 4e-6 * norm);
      if (is_float) {
        double err = fabs(tu_elem(ref[i].data, ref[i].dtype, e) - tu_elem(got[i].data, got[i].dtype, e));
        if (err > r->worst) r->worst = err;
      }
    }
  }
}

/* Call the compiled kernel fn once per core_id of global_size[0] on got (buffers, then variables, then core_id)
 * and compare got with ref; r->bad counts mismatching elements. */
static inline void etu_native(const cc_program *p, void *fn, const cc_kbuf *ref, size_t nref, cc_kbuf *got,
                              size_t ngot, etu_run *r) {
  tu_kernel k = {.fn = fn};
  uintptr_t args[10];
  int nargs = 0;
  for (size_t i = 0; i < ngot && nargs < 8; i++) args[nargs++] = (uintptr_t)got[i].data;
  for (size_t v = 0; v < hcq_program_nvars(&p->desc) && nargs < 9; v++)
    for (size_t j = 0; j < r->nvals; j++)
      if (strcmp(r->vals[j].name, hcq_program_var(&p->desc, v)->name) == 0) args[nargs++] = (uintptr_t)r->vals[j].value;
  r->threads = 1;
  CHECK((r->threads = cc_launch_const(p->desc.global[0])) > 0);
  for (int64_t core = 0; core < r->threads; core++) {
    args[nargs] = (uintptr_t)core;
    tu_call(&k, args, nargs + 1);
  }
  etu_compare(ref, nref, got, r);
}

#endif
