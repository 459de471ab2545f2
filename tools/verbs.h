/* The verbs of the hcq command. A verb is `int hcq_verb_NAME(int argc, char **argv)` (argv[0] is the verb name),
 * returning the process exit status: 0 ok, 1 failure, 2 usage error. */
#ifndef HCQ_TOOLS_VERBS_H
#define HCQ_TOOLS_VERBS_H

struct hcq_verb {
  const char *name;
  const char *summary;
  int (*main)(int argc, char **argv);
};

int hcq_verb_compile(int argc, char **argv);
int hcq_verb_simplify(int argc, char **argv);
int hcq_verb_version(int argc, char **argv);

/* One line per verb; keep sorted by name. */
#define HCQ_VERB_LIST \
  {"compile", "compile a kernel: hcq compile --target c [--opts O | --noopt] [--dump-passes] FILE.uop [-o OUT]", \
   hcq_verb_compile}, \
  {"simplify", "simplify index expressions: hcq simplify EXPR... | --file F", hcq_verb_simplify}, \
  {"version", "print the version and build configuration", hcq_verb_version},

#endif
