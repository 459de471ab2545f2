/* The verbs of the hcq command. A verb is `int hcq_verb_NAME(int argc, char **argv)` (argv[0] is the verb name),
 * returning the process exit status: 0 ok, 1 failure, 2 usage error. */
#ifndef HCQ_TOOLS_VERBS_H
#define HCQ_TOOLS_VERBS_H

struct hcq_verb {
  const char *name;
  const char *summary;
  int (*main)(int argc, char **argv);
};

int hcq_verb_bench(int argc, char **argv);
int hcq_verb_compile(int argc, char **argv);
int hcq_verb_devices(int argc, char **argv);
int hcq_verb_run(int argc, char **argv);
int hcq_verb_simplify(int argc, char **argv);
int hcq_verb_version(int argc, char **argv);

/* One line per verb; keep sorted by name. */
#define HCQ_VERB_LIST \
  {"bench", "benchmark suite on a device: hcq bench [--dev cpu|amd:N|nv:N] [--json] [--quick]", hcq_verb_bench}, \
  {"compile", "compile a kernel: hcq compile --target c [--opts O | --noopt] [--dump-passes] FILE.uop [-o OUT]", \
   hcq_verb_compile}, \
  {"devices", "list the devices: hcq devices [--json]", hcq_verb_devices}, \
  {"run", "run a kernel: hcq run [--dev cpu] [--var N=V]... [--check] [--in/--out SLOT=F] FILE.uop", hcq_verb_run}, \
  {"simplify", "simplify index expressions: hcq simplify EXPR... | --file F", hcq_verb_simplify}, \
  {"version", "print the version and build configuration", hcq_verb_version},

#endif
