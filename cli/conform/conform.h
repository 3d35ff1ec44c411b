/* conform.h - relayout conform's cases (cases.c): the matrix (conform.c)
 * run on a device, or written to and read from a golden corpus (corpus.c);
 * where an output differs (diff.c), for conform and verify */
#ifndef RELAYOUT_CONFORM_H
#define RELAYOUT_CONFORM_H

#include "cli.h"

#include <jansson.h>

/* Where an output differs from the reference's: of span elements (padding
 * of them padding), count differ (in_padding in padding); the first k, at
 * their element offsets, padding or not, data ones' logical coordinates in
 * text. */
typedef struct cli_diff {
  int64_t span, padding, count, in_padding;
  int k;
  int64_t *at;
  int *pad;
  char (*text)[96];
} cli_diff;
/* Finds the differences, the first `report` of them kept; -1 when out of
 * memory. */
int cli_diff_find(cli_diff *r, const unsigned char *want,
                  const unsigned char *got, const relayout_desc *d, int report);
/* A line per kept difference: data or padding, coordinate, element, bits. */
void cli_diff_print(FILE *f, const cli_diff *r, const unsigned char *want,
                    const unsigned char *got, const relayout_desc *d);
void cli_diff_free(cli_diff *r);

/* One side's element type, quantized or not. */
typedef struct cf_side {
  relayout_dtype t;
  int quantized;
  relayout_quant q;
} cf_side;

/* A conversion: FROM -> TO at logical extents, from type s to type d;
 * text is how it is named and what --case takes: "FROM->TO TYPES AxBxC"
 * (TYPES: "f16", or a cast "f32->i8:0.05:-3", scale and zero point after
 * a quantized side's name). */
typedef struct cf_case {
  char from[256], to[256], types[64], text[768];
  cf_side s, d;
  int rank;
  int64_t ext[RELAYOUT_MAX_DIMS];
} cf_case;

/* Parses TYPES into k->s and k->d; prints why not (under cmd). */
int cf_parse_types(cf_case *k, const char *types, const char *cmd);
/* Sets k->text from the rest. */
void cf_name(cf_case *k);
/* Binds a case (the source's quantization, then the destination's type);
 * the layouts parsed into *a and *b, freed by the caller; 0, or the
 * reason in why. */
int cf_bind(const cf_case *k, relayout_layout **a, relayout_layout **b,
            relayout_desc *s, relayout_desc *d, relayout_error *why);
/* The next number of a splitmix64 sequence. */
uint64_t cf_mix(uint64_t *s);
/* A case's input bytes: from the seed and the case's text alone, so that
 * --case reruns it exactly. */
void cf_fill(unsigned char *p, int64_t n, uint64_t seed, const char *text);

/* One run: its settings, its cases, and its tallies per group (a family
 * of formats, or a corpus) and type. */
typedef struct cf_tally {
  char group[16], types[64];
  int n[3]; /* pass, fail, skip */
} cf_tally;
typedef struct conform {
  relayout_engine *engine, *against; /* against NULL: the reference */
  const char *device, *device_arg, *against_name; /* device: its name */
  char devices[1024]; /* several devices' names (cf_spread) */
  uint64_t seed;
  int plant, ncases, ntallies;
  cf_tally tallies[512];
  json_t *cases;
  int tty;
  int skips_fail; /* a skip counts as a failure (an imported corpus's) */
  /* --part I/N: the cases of the matrix whose index is I modulo N; seen:
   * the matrix's cases so far; matrix: what makes it this matrix (the
   * options that choose its cases), for --merge */
  int part, parts;
  int64_t seen;
  char matrix[512];
  int interrupted; /* by this signal: the reports are incomplete */
  int isolate;     /* each case in a child process */
  double last_progress;
} conform;

enum { CF_PASS, CF_FAIL, CF_SKIP };
extern const char *const cf_verdicts[3]; /* "pass", "fail", "skip" */

/* Runs a case on c->engine into a poisoned buffer and compares the output
 * with `want` (NULL: the reference's, or c->against's), on `in` (NULL: the
 * filled input); records it as the matrix's case c->seen - 1 and returns
 * its verdict. */
int cf_run(conform *c, const char *group, const cf_case *k,
           const unsigned char *in, const unsigned char *want);
/* cf_run's check alone, on engine e (named `device`; `rerun_device` is
 * the --device of the rerun line) against `against` (NULL: the
 * reference), its output planted with an error where `planted`: the
 * verdict, and its details in *details (malloc'd; NULL when out of
 * memory). Touches nothing of c: each device's thread runs its own. */
int cf_check(const conform *c, relayout_engine *e, relayout_engine *against,
             const char *device, const char *rerun_device, const cf_case *k,
             const unsigned char *in, const unsigned char *want, int planted,
             char **details);
/* Records the matrix's case `index`, its verdict and details: tallied,
 * printed where it is not a pass, in the reports. */
void cf_record(conform *c, int64_t index, const char *group, const cf_case *k,
               int verdict, const char *details);
/* isolate.c: runs a case in a child process (relayout conform --case), so
 * that a crash of the driver fails that case alone; records its verdict. */
void cf_run_isolated(conform *c, const char *group, const cf_case *k);
/* The table (where `table`), then the reports asked for (their outputs
 * checked before the run); the exit code. */
int cf_finish(conform *c, cli_out *junit, cli_out *json, int table);

/* relayout conform --export DIR and --import DIR (corpus.c). The export
 * writes the matrix `list` enumerates; the import runs DIR on c. */
typedef void cf_visit(void *ctx, const char *group, const cf_case *k);
int cf_export(const char *dir, void (*list)(void *, cf_visit *, void *),
              void *list_ctx, uint64_t seed);
int cf_import(conform *c, const char *dir);

/* merge.c: the JSON reports of a matrix's parts as one run in c (its cases
 * in the matrix's order, its tallies), finished as cf_finish does: the
 * exit code, after saying what is missing, doubled or mixed. */
int cf_merge(conform *c, const char *const *paths, int n, cli_out *junit,
             cli_out *json);
/* spread.c: the matrix `list` enumerates on the devices c->device_arg
 * lists (all, or several), a thread each taking the next case; the cases
 * recorded in the matrix's order, c->device naming the devices: 0, or the
 * exit code. */
int cf_spread(conform *c, void (*list)(void *, cf_visit *, void *),
              void *list_ctx);
/* cases.c: the tally of group and types, made where there is none. */
cf_tally *cf_tally_of(conform *c, const char *group, const char *types);

#endif /* RELAYOUT_CONFORM_H */
