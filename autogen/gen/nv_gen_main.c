/* nv_gen tool: nv_gen OUTDIR SPEC.txt... -- see nv_gen.c for the spec format. Not part of libhcq. */
#include "nv_gen.c"

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: nv_gen OUTDIR SPEC.txt...\n");
    return 2;
  }
  nvg_spec spec = {0};
  int rc = 0;
  if (nvg_load(&spec, argc - 2, argv + 2) || nvg_write_all(&spec, argv[1])) {
    fprintf(stderr, "nv_gen: %s\n", spec.err);
    rc = 1;
  } else {
    printf("nv_gen: %d structs, %d ioctls, %d controls, %d classes, %d methods, %d QMD fields, %d branches\n",
           spec.nstructs, spec.nioctls, spec.nctrls, spec.nclasses, spec.nmethods, spec.nqmds, spec.nbranches);
  }
  nvg_free(&spec);
  return rc;
}
