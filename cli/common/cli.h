/* cli.h - what the relayout command's files share */
#ifndef RELAYOUT_CLI_H
#define RELAYOUT_CLI_H

#include "relayout.h"
#include "relayout_npy.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes: 0 success, 1 the work failed, 2 the command line was wrong. */
enum { EXIT_WORK = 1, EXIT_USAGE = 2 };

/* One subcommand's options: names without "--"; values point into argv. */
typedef struct cli_opt {
  const char *name;
  const char *value; /* NULL until given; the last one when repeated */
  int is_flag;       /* takes no value; value is "1" when given */
  const char **all;  /* when set, the option repeats: every value, in order */
  int count, max;    /* values in all, and its room */
} cli_opt;

/* Splits argv into options and at most max_pos positionals; returns 0, or an
 * exit code after printing the reason. */
int cli_parse(int argc, char **argv, cli_opt *opts, const char **pos,
              int max_pos, int *npos, const char *cmd, const char *usage);
const char *cli_get(const cli_opt *opts, const char *name);

int cli_parse_int(int64_t *out, const char *text, const char *what);
/* A byte count with an optional K, M, G or T suffix (powers of 1024). */
int cli_parse_bytes(int64_t *out, const char *text, const char *what);
int cli_parse_dims(relayout_dim_value *out, int *n, const char *text);
/* A logical dim named on the command line: a letter (any case), or an ND
 * dim's index; *out its name as descriptors give it ('A'..'Z', '0'+i).
 * 0, or -1 when text is neither. */
int cli_parse_dim_name(char *out, const char *text);
int cli_parse_shape(int64_t *out, int *rank, const char *text);
/* --part I/N (0 <= I < N), or auto: the rank and size a launcher set (Open
 * MPI, PMI, Slurm, torchrun, GitLab CI's parallel jobs). 0, or the exit
 * code after printing the reason. */
int cli_parse_part(int *part, int *parts, const char *text, const char *cmd);
/* Parses the two sides of a conversion and applies --c0 (if given) to
 * whichever side has a c0 parameter; prints on failure. */
int cli_layouts(relayout_layout **from, relayout_layout **to, const char *src,
                const char *dst, const char *c0, const char *cmd);

/* What IN holds: the array's shape and dtype and where its bytes are. */
typedef struct cli_input {
  unsigned char *file;
  size_t size;
  const unsigned char *data;
  size_t data_size;
  int rank, fortran, raw;
  int64_t shape[RELAYOUT_MAX_AXES];
  relayout_dtype dtype;
  char descr[16]; /* .npy only */
  void *keep;     /* per-channel quantization arrays (cli_cast) */
} cli_input;
/* Reads IN: raw bytes of --shape and --dtype where shape is given, else a
 * .npy file (--dtype, where given, reinterprets its elements); prints on
 * failure and returns the exit code. */
int cli_input_read(cli_input *x, const char *in, const char *shape,
                   const char *dtype, const char *cmd);
/* Binds from -> to for IN with --dims and the cast options; *descr: the
 * output's .npy dtype. Prints on failure and returns the exit code. */
int cli_input_bind(relayout_desc *s, relayout_desc *d, const char **descr,
                   cli_input *x, const relayout_layout *from,
                   const relayout_layout *to, const cli_opt *opts,
                   const char *cmd);

/* A scale: a positive finite number; a zero point: a whole number within a
 * million of 0 (the dtype's range is the library's check). */
int cli_parse_scale(float *out, const char *text, const char *what,
                    const char *cmd);
int cli_parse_zero_point(int32_t *out, const char *text, const char *what,
                         const char *cmd);
/* 1 where an option's value names a .npy file (ends in .npy). */
int cli_is_npy_name(const char *text);
/* 1 for f16, bf16, f32 and f64. */
int cli_float_dtype(relayout_dtype t);
/* The cast options, as each command that takes them lists them. */
#define CLI_CAST_OPTIONS                                                       \
  {.name = "to-dtype"}, {.name = "scale"}, {.name = "zero-point"},             \
      {.name = "from-scale"}, {.name = "from-zero-point"}, {                   \
    .name = "axis"                                                             \
  }
/* Applies the cast options (--to-dtype, --scale, --zero-point,
 * --from-scale, --from-zero-point, each a number or, per channel along
 * --axis, a .npy file) to a bound pair; prints on failure. *keep: the
 * per-channel arrays the descriptors point to, for the caller to free after
 * the conversion. */
int cli_cast(relayout_desc *dst, relayout_desc *src, const relayout_layout *to,
             const relayout_layout *from, void **keep, const cli_opt *opts,
             const char *cmd);
/* The engine options the command's environment asks for (README, "The
 * command"): device (NULL: RELAYOUT_DEVICE, else auto), RELAYOUT_CACHE_DIR
 * (else the XDG cache), RELAYOUT_CACHE_MB, RELAYOUT_MAX_ALLOC,
 * RELAYOUT_UNIFIED=0, RELAYOUT_FAMILIES, RELAYOUT_STREAM_BYTES,
 * RELAYOUT_KERNELS. */
void cli_engine_options(relayout_engine_options *o, const char *device);
/* Opens the engine so; prints the one-line note when auto falls back to
 * the reference. cli_engine_from opens it with options of the caller's
 * (device: --device's value, for messages). */
int cli_engine(relayout_engine **out, const char *device, const char *cmd);
/* Engines for --device all (every OpenCL device) or a comma-separated list
 * (indices, names, gpu, cpu, ref), each opened as cli_engine_from opens
 * one; a single device gives one. *out malloc'd, *n engines; 0, or the
 * exit code after printing why (nothing left open). */
int cli_engines(relayout_engine ***out, int *n,
                const relayout_engine_options *o, const char *device,
                const char *cmd);
void cli_engines_free(relayout_engine **e, int n);
/* The devices --device all or a list names, each as a --device value of
 * its own (all: every OpenCL device's index); one item where there is no
 * list. *items malloc'd; 0, or the exit code after printing why. */
int cli_device_items(char ***items, int *n, const char *spec, const char *cmd);
/* args.c: --device's comma-separated list into its items (as
 * cli_device_items, all aside); a list with an empty item is refused. */
int cli_parse_device_list(char ***items, int *n, const char *spec,
                          const char *cmd);
void cli_device_items_free(char **items, int n);
/* Whether --device's value names several devices (all, or a list). */
int cli_several_devices(const char *spec);
int cli_engine_from(relayout_engine **out, const relayout_engine_options *o,
                    const char *device, const char *cmd);

/* Pins PoCL's CPU worker threads one to a CPU (POCL_AFFINITY=1) where
 * that is safe and the caller left POCL_AFFINITY unset; call before any
 * OpenCL call. cli_pin_state says what it did, for relayout devices. */
void cli_pin_pocl(void);
const char *cli_pin_state(void);

/* SHA-256 of n bytes as lowercase hex. */
void cli_sha256(char hex[65], const void *data, size_t n);
/* XXH64 of a buffer with a seed (xxHash's specification). */
uint64_t cli_xxh64(const void *data, size_t n, uint64_t seed);

/* Seconds on the monotonic clock. */
double cli_now(void);

/* Fills err with the message (which may quote err->message); returns
 * status. */
relayout_status cli_fail(relayout_error *err, relayout_status status,
                         const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prints "relayout CMD: error: ..." to stderr (CMD "": the command
 * cli_set_command named), control bytes escaped; returns code. */
int cli_error(int code, const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* s to f, control bytes (a terminal's escape codes) written as \xNN. */
void cli_put_text(FILE *f, const char *s);
void cli_set_command(const char *name);
/* The exit code for a library status about the user's input: 2 where the
 * command line was wrong (layout text, dims, dtypes, a layout that does not
 * bind), 1 for the rest (files, memory, devices). */
int cli_exit_code(relayout_status status);

/* n bytes (at least 1) starting on a page, freed with free(); NULL when
 * out of memory. For the arrays relayout_plan_run gets: a CPU device runs
 * in place on them, and its streamed stores pay only from a cache line
 * (large mallocs start 16 bytes past one). */
void *cli_alloc_aligned(size_t n);

/* A command's input: a path, or "-" for standard input. A regular file
 * is read whole; a stream (standard input, a FIFO, a device) is read for
 * exactly the bytes its format says it holds, then must end. Messages do
 * not name the path: the caller does. */
typedef struct cli_in {
  int fd;
  int stream;    /* not a regular file */
  uint64_t size; /* a regular file's */
} cli_in;
relayout_status cli_in_open(cli_in *in, const char *path, relayout_error *err);
/* A regular file, opened without waiting on a FIFO: its descriptor, or -1
 * with err saying what it is instead. */
int cli_open_regular(const char *path, relayout_error *err);
/* cli_open_regular on dir/name, refused where links lead it out of dir. */
int cli_open_beneath(const char *dir, const char *name, relayout_error *err);
/* fd, from cli_open_regular or cli_open_beneath (-1: failed, err set
 * already), as an input. */
relayout_status cli_in_open_file(cli_in *in, int fd, relayout_error *err);
void cli_in_close(cli_in *in);
/* Exactly n bytes (a regular file must hold n), in cli_alloc_aligned
 * memory. */
relayout_status cli_in_read(cli_in *in, unsigned char **data, size_t n,
                            relayout_error *err);
/* Up to n bytes, into data, fewer only at the input's end (*got). */
relayout_status cli_in_read_some(cli_in *in, void *data, size_t n, size_t *got,
                                 relayout_error *err);
/* A whole .npy file: from a stream its header says how much follows. */
relayout_status cli_in_read_npy(cli_in *in, unsigned char **data, size_t *size,
                                relayout_error *err);
/* Open, read, close: a .npy file whole, or exactly n bytes. */
relayout_status cli_read_npy(const char *path, unsigned char **data,
                             size_t *size, relayout_error *err);
relayout_status cli_read_exact(const char *path, unsigned char **data, size_t n,
                               relayout_error *err);

/* A command's output. A path (symlinks followed) gets a regular file,
 * written through a temp file beside it and renamed into place: a failed or
 * interrupted run leaves nothing, and the link stays a link. "-" (standard
 * output), a device, a FIFO or a socket is a stream: written in place, in
 * order, no temp file; a failure part-way leaves what was written. */
typedef struct cli_out {
  const char *path;          /* as given, for messages */
  char target[4096];         /* the file a regular output becomes */
  int stream;                /* 1: written in place, in order */
  int fd;                    /* open: the temp file or the stream */
  uint64_t next;             /* a stream's bytes written */
  struct cli_piece *pending; /* a stream's pieces ahead of next */
} cli_out;
/* Says where path's output goes, refusing before any work what cannot take
 * it: a directory, a path whose directory is missing or not writable, and
 * a stream where can_stream is 0 (a directory of shards). */
relayout_status cli_out_check(cli_out *o, const char *path, int can_stream,
                              relayout_error *err);
/* Opens the temp file (removing this output's temp files a day old, left
 * by a run that was killed) or the stream. */
relayout_status cli_out_open(cli_out *o, relayout_error *err);
/* Writes size bytes at byte `at` of the output. A stream takes them in
 * order: pieces that come ahead of their turn are held back until the
 * bytes before them came, by reference where `lasting` (the data stays put
 * until cli_out_commit), else as a copy. */
relayout_status cli_out_write(cli_out *o, const void *data, size_t size,
                              uint64_t at, int lasting, relayout_error *err);
/* A regular file: fsync, then the temp file renamed into place. A stream:
 * closed, failing if a gap was left. */
relayout_status cli_out_commit(cli_out *o, relayout_error *err);
void cli_out_discard(cli_out *o);
/* Open, head and body written, commit. */
relayout_status cli_out_whole(cli_out *o, const void *head, size_t head_size,
                              const void *body, size_t body_size,
                              relayout_error *err);
/* Removes target's temp files and directories (target.tmp-XXXXXX) a day
 * old: left by a run that was killed. Newer ones may be another run's. */
void cli_sweep_stale(const char *target);
/* Removes path: a file, or a directory with all it holds (links not
 * followed). */
void cli_remove_tree(const char *path);

/* SIGINT, SIGTERM and SIGHUP remove the temp file being written and end the
 * process; SIGPIPE is ignored (a write to a closed reader fails, and says
 * so). After cli_defer_signals they only set cli_interrupted() (the signal
 * number): the command stops between steps, removes its own output and
 * calls cli_reraise. */
void cli_install_cleanup(void);
void cli_defer_signals(void);
int cli_interrupted(void);
/* RELAYOUT_ERR_IO "interrupted by signal N" once a deferred signal came,
 * else RELAYOUT_OK. */
relayout_status cli_stop_requested(relayout_error *err);
void cli_reraise(void);
/* 1 when both paths name one file: one that exists, or one name in one
 * directory ("-" names none). */
int cli_same_file(const char *a, const char *b);

/* An .npy array (header for shape, then data) into o, whole. */
relayout_status cli_write_npy(cli_out *o, const char *descr, int rank,
                              const int64_t *shape, const void *data,
                              size_t size, relayout_error *err);

int cmd_bench(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_conform(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_formats(int argc, char **argv);
int cmd_preprocess(int argc, char **argv);
int cmd_repack(int argc, char **argv);
int cmd_sample(int argc, char **argv);
int cmd_show(int argc, char **argv);

#endif /* RELAYOUT_CLI_H */
