/* repack.h - what relayout repack's files share: rules, options, the report */
#ifndef RELAYOUT_REPACK_H
#define RELAYOUT_REPACK_H

#include "relayout.h"
#include "safetensors.h"

#include <jansson.h>
#include <stdint.h>

/* Metadata keys of a repacked file: RP_MARK holds {"version",
 * "had_metadata", "records", "sha256"} (the last two: the count of records
 * and the digest rp_records_digest makes of them),
 * RP_PREFIX + name one converted tensor's {"from", "to", "shape", "dtype"}
 * (the dtype stored), "from_dtype" where a rule cast it, and for a
 * quantized one "scale", the name of the F32 tensor of its scales (NAME
 * RP_SCALE_SUFFIX), and "axis", the logical dim they run along ("" for one
 * scale).
 * Version 2: FRACTAL_ZN's blocks as LAYOUTS.md has them since its fix (N0 =
 * b16, K0 = c0); version 1 files recorded them the other way round.
 * Version 3: the marker counts the records and holds their digest. */
#define RP_MARK         "relayout"
#define RP_PREFIX       "relayout:"
#define RP_VERSION      3
#define RP_MAX_RULES    64
#define RP_SCALE_SUFFIX ".scale"

/* --rule GLOB[:Nd][:FROM]=TO[:DTYPE[:per-channel=X]] */
typedef struct rp_rule {
  const char *text;
  char glob[256];
  int rank;              /* 0: any rank */
  relayout_layout *from; /* ND unless given */
  relayout_layout *to;
  int cast; /* a DTYPE was given: a float type, or i8 (quantizing) */
  relayout_dtype dtype;
  char axis;    /* i8: per channel along this logical dim; 0 per tensor */
  int selected; /* tensors it selected (first match wins) */
} rp_rule;

/* Parses one rule; prints the reason and returns EXIT_USAGE when bad. */
int rp_rule_parse(rp_rule *out, const char *text);
void rp_rule_free(rp_rule *rule);
/* The first rule that selects tensor t (by name glob and rank), or -1. */
int rp_rule_match(const rp_rule *rules, int n, const st_tensor *t);

/* The running totals, the progress line and the --json summary. */
typedef struct rp_report {
  uint64_t total_bytes, done_bytes, read_bytes, written_bytes;
  int total_tensors, done_tensors, converted;
  int taken_back; /* restore: scale tensors their weights took back */
  double start, last_print;
  int tty;         /* progress goes to stderr */
  json_t *tensors; /* per tensor, for --json */
} rp_report;

void rp_report_init(rp_report *r);
void rp_report_add_work(rp_report *r, uint64_t bytes, int tensors);
/* pl_progress: bytes read and written by finished tensors. */
void rp_report_progress(void *r, uint64_t read, uint64_t written, int tensors);
struct rp_options;
/* Ends the progress line on a terminal; after a run that succeeded (ok),
 * elsewhere prints a one-line summary on stderr, warns of rules that
 * selected no tensor and, with --json, prints the summary on stdout, those
 * rules included. */
void rp_report_finish(rp_report *r, int ok, const struct rp_options *o,
                      const char *in, const char *out, const char *device);
void rp_report_free(rp_report *r);

/* A conversion as a repack plans it: its engine's index and descriptors. */
typedef struct rp_conversion {
  int device;
  relayout_desc src, dst;
} rp_conversion;

typedef struct rp_options {
  rp_rule rules[RP_MAX_RULES];
  int nrules;
  int restore, dry_run, json, wait_compile;
  int warm;     /* --warm: every plan made, its kernel built; nothing written */
  int deferred; /* the engines run cached kernels only (RELAYOUT_KERNELS_
                 * CACHED): the missing ones build in rp_warm_spawn's process */
  int missing;  /* conversions planned without their own kernel at hand,
                 * each once over every file (missing_seen holds them) */
  rp_conversion *missing_seen;
  int part, parts; /* --part I/N (parts 0: one run makes the whole output) */
  int mpi;         /* --part auto in an MPI job of an MPI build: rp_mpi_run */
  uint64_t max_memory;
  relayout_engine *engine;   /* engines[0] */
  relayout_engine **engines; /* --device all or a list: several */
  int nengines;
  rp_report report;
} rp_options;

struct cli_out;
/* Repacks (or restores) one safetensors file into out, checked already
 * (cli_out_check; NULL with dry_run); label names the file in the report.
 * *out_bytes receives the output's tensor bytes, and weight_map (a shard
 * index's, or NULL) the scale tensors it adds (mapped to label) or drops. */
relayout_status rp_file(rp_options *o, const char *in, struct cli_out *out,
                        const char *label, uint64_t *out_bytes,
                        json_t *weight_map, relayout_error *err);

/* records.c: the sha256 of metadata's records (keys RP_PREFIX...) in key
 * order, and their count; restoring, every record names a tensor of f and
 * (version 3 on) they are those the marker counts and digests. */
relayout_status rp_records_digest(char hex[65], int *count, json_t *metadata,
                                  relayout_error *err);
relayout_status rp_records_check(const st_file *f, int version,
                                 relayout_error *err);

/* shards.c: a sharded checkpoint, its shards named by its index */
#define RP_INDEX_NAME "model.safetensors.index.json"
typedef struct rp_shards {
  json_t *index;      /* the index, owned */
  const char **names; /* distinct shard files, in order of first mention */
  int count;
} rp_shards;
/* dir/name, malloc'd (NULL: out of memory). */
char *rp_join(const char *dir, const char *name);
/* in's index, every tensor it names in the shard it names. */
relayout_status rp_read_shards(rp_shards *l, const char *in,
                               relayout_error *err);
void rp_shards_free(rp_shards *l);
/* index, its metadata.total_size set, written into dir (shown names it). */
relayout_status rp_write_index(const char *dir, const char *shown,
                               json_t *index, uint64_t total,
                               relayout_error *err);

/* Repacks a directory of shards and its model.safetensors.index.json. */
relayout_status rp_directory(rp_options *o, const char *in, const char *out,
                             relayout_error *err);

/* balance.c: bin[i] for n items of bytes[i] over `bins` bins: the largest
 * first, each to the bin with the fewest bytes so far (the lowest on a
 * tie). */
relayout_status rp_balance(int *bin, const uint64_t *bytes, int n, int bins,
                           relayout_error *err);

/* parts.c: a sharded repack split into o->parts parts by bytes; part
 * o->part writes its shards into out, each with a completion record, and
 * passes over those a valid record already covers. rp_finish writes out's
 * index from the records once every shard has one. */
relayout_status rp_part(rp_options *o, const char *in, const char *out,
                        relayout_error *err);
relayout_status rp_finish(const char *out, relayout_error *err);

/* warm.c: `relayout repack --warm in` with o's rules (or --restore) and
 * device (NULL: the default) started in a session of its own at the lowest
 * priority, its output discarded, unless another holds cache_dir's lock;
 * its pid, or -1 with why filled. */
int rp_warm_spawn(const rp_options *o, const char *in, const char *device,
                  const char *cache_dir, char *why, size_t room);

/* mpi.c (-DRELAYOUT_MPI=ON): whether an MPI launcher started this process;
 * rp_part as this rank's part of the job's size, then, once every rank
 * succeeded, rank 0's rp_finish; every rank fails when one does. */
int rp_mpi_launched(void);
relayout_status rp_mpi_run(rp_options *o, const char *in, const char *out,
                           relayout_error *err);

#endif /* RELAYOUT_REPACK_H */
