/* batches.h - relayout preprocess's frames through one device or several,
 * in batches, into its output */
#ifndef RELAYOUT_CLI_BATCHES_H
#define RELAYOUT_CLI_BATCHES_H

#include "cli.h"
#include "images.h"

/* What the batches write: the .npy header (of shape, N its first extent;
 * len 0: --raw), first where the frames are counted already (`counted`),
 * else last; and each frame's output bytes (0: the frames are one batch of
 * `bytes`). */
typedef struct output_plan {
  const char *descr;
  int rank, counted;
  int64_t shape[RELAYOUT_MAX_AXES], frame_out, bytes;
  char head[1024];
  size_t head_len;
} output_plan;

/* The frames f through plans[0..n) (one per device) in batches of `batch`
 * frames of `frame` bytes: batch k on plan k mod n, each device's kernel
 * running while the others' do and the next batches decode; the batches
 * taken from f and written at their place in o (after the header) in
 * their order, the header written last once the frames are counted. The
 * exit code. */
int pp_run_batches(cli_out *o, output_plan *w,
                   relayout_preprocess_plan *const *plans, int n, cli_frames *f,
                   int64_t batch, int64_t frame, const char *cmd);

#endif /* RELAYOUT_CLI_BATCHES_H */
