/* batches.c - relayout preprocess's frames through one device or several
 * (--device all, or a list): a thread per device, batch k on device k mod
 * n. The batches are taken from the frames in turn and written out in
 * turn, in their order, so the output is byte for byte a one-device run's;
 * only the devices' kernels overlap. */
#include "batches.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The .npy header of `shape` padded to exactly len bytes, at least its
 * own (a version 1 header: its 2-byte length, the dict, spaces, a
 * newline). */
static relayout_status npy_head(char *head, size_t len, const char *descr,
                                int rank, const int64_t *shape,
                                relayout_error *err) {
  size_t own = len;
  relayout_status s = relayout_npy_header(head, &own, descr, rank, shape, err);
  if (s) return s;
  if (head[6] != 1 || len > 65535)
    return cli_fail(err, RELAYOUT_ERR_ARGUMENT, "an .npy header too long");
  memset(head + own - 1, ' ', len - own);
  head[len - 1] = '\n';
  head[8] = (char)((len - 10) & 255);
  head[9] = (char)((len - 10) >> 8);
  return RELAYOUT_OK;
}

/* The run the devices' threads share. A thread holds batch k's take turn
 * while taken == k and its write turn while written == k; `end` is the
 * first batch past the frames, once known. */
typedef struct shared {
  cli_out *o;
  output_plan *w;
  cli_frames *f;
  int64_t batch, frame, batch_out;
  int n;
  const char *cmd;
  pthread_mutex_t lock;
  pthread_cond_t moved;
  int64_t taken, written, end, frames;
  int failed, rc, noted; /* rc: an exit code already printed */
  relayout_error err;    /* else, where failed, why */
} shared;

typedef struct device {
  shared *sh;
  relayout_preprocess_plan *plan;
  int index;
  unsigned char *out;
} device;

/* Waits for turn k of *turn; 0 where the run failed or ended before it. */
static int turn(shared *sh, const int64_t *turn, int64_t k) {
  pthread_mutex_lock(&sh->lock);
  while (!sh->failed && *turn != k && k < sh->end)
    pthread_cond_wait(&sh->moved, &sh->lock);
  int mine = !sh->failed && k < sh->end;
  pthread_mutex_unlock(&sh->lock);
  return mine;
}

/* Passes turn k of *turn on (turn NULL: none); a failure (rc, or status s
 * with err) ends the run. */
static void pass(shared *sh, int64_t *turn, int64_t k, int rc,
                 relayout_status s, const relayout_error *err) {
  pthread_mutex_lock(&sh->lock);
  if (turn) *turn = k + 1;
  if ((rc || s) && !sh->failed) {
    sh->failed = 1;
    sh->rc = rc;
    if (s) sh->err = *err;
  }
  pthread_cond_broadcast(&sh->moved);
  pthread_mutex_unlock(&sh->lock);
}

static void *run_device(void *arg) {
  device *d = arg;
  shared *sh = d->sh;
  relayout_error err;
  for (int64_t k = d->index;; k += sh->n) {
    const unsigned char *frames;
    int64_t got = 0;
    if (!turn(sh, &sh->taken, k)) break;
    int rc = cli_frames_batch(sh->f, k, &frames, &got, sh->cmd);
    if (!rc && got < sh->batch) { /* the last batch, or past the frames */
      pthread_mutex_lock(&sh->lock);
      sh->end = got ? k + 1 : k;
      pthread_mutex_unlock(&sh->lock);
    }
    pass(sh, &sh->taken, k, rc, 0, NULL);
    if (rc || !got) break;
    relayout_status s =
        relayout_preprocess_run(d->plan, d->out, (size_t)sh->batch_out, frames,
                                (size_t)(sh->batch * sh->frame), &err);
    if (!turn(sh, &sh->written, k)) break;
    cli_frames_release(sh->f, k);
    const char *note = relayout_preprocess_note(d->plan);
    if (!s && !sh->noted && *note) /* once, not a batch */
      sh->noted = fprintf(stderr, "relayout %s: %s\n", sh->cmd, note);
    output_plan *w = sh->w;
    if (!s)
      s = cli_out_write(
          sh->o, d->out, (size_t)(w->frame_out ? got * w->frame_out : w->bytes),
          w->head_len + (uint64_t)(sh->frames * w->frame_out), 0, &err);
    sh->frames += got;
    pass(sh, &sh->written, k, 0, s, &err);
    if (s) break;
  }
  return NULL;
}

int pp_run_batches(cli_out *o, output_plan *w,
                   relayout_preprocess_plan *const *plans, int n, cli_frames *f,
                   int64_t batch, int64_t frame, const char *cmd) {
  shared sh = {.o = o,
               .w = w,
               .f = f,
               .batch = batch,
               .frame = frame,
               .batch_out = w->frame_out ? batch * w->frame_out : w->bytes,
               .n = n,
               .cmd = cmd,
               .lock = PTHREAD_MUTEX_INITIALIZER,
               .moved = PTHREAD_COND_INITIALIZER,
               .end = INT64_MAX};
  device *d = calloc((size_t)n, sizeof *d);
  pthread_t *t = calloc((size_t)n, sizeof *t);
  relayout_status s =
      d && t ? cli_out_open(o, &sh.err)
             : cli_fail(&sh.err, RELAYOUT_ERR_NOMEM, "out of memory");
  if (!s && w->head_len && w->counted) /* a stream takes it in order */
    s = cli_out_write(o, w->head, w->head_len, 0, 0, &sh.err);
  int started = 0;
  for (; !s && started < n; started++) {
    d[started] = (device){&sh, plans[started], started,
                          cli_alloc_aligned((size_t)sh.batch_out)};
    if (!d[started].out ||
        pthread_create(&t[started], NULL, run_device, &d[started])) {
      s = cli_fail(&sh.err, RELAYOUT_ERR_NOMEM,
                   "out of memory, or no thread for a device");
      free(d[started].out);
      pass(&sh, NULL, 0, 0, s, &sh.err); /* the started ones stop */
      break;
    }
  }
  for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
  int rc = sh.rc;
  if (!s && sh.failed && !rc) s = RELAYOUT_ERR_FILE; /* sh.err says why */
  if (!s && !rc && !sh.frames)
    s = cli_fail(&sh.err, RELAYOUT_ERR_FILE, "no frames came");
  if (!s && !rc && w->head_len && !w->counted) { /* counted now */
    w->shape[0] = sh.frames;
    s = npy_head(w->head, w->head_len, w->descr, w->rank, w->shape, &sh.err);
    if (!s) s = cli_out_write(o, w->head, w->head_len, 0, 0, &sh.err);
  }
  if (!s && !rc) s = cli_out_commit(o, &sh.err);
  if (s || rc) cli_out_discard(o);
  for (int i = 0; i < started; i++) free(d[i].out);
  free(d);
  free(t);
  return rc ? rc : s ? cli_error(EXIT_WORK, cmd, "%s", sh.err.message) : 0;
}
