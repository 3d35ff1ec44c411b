/* decode.c - images decoded on a thread per core into slots of a batch of
 * frames each, ahead of the batch the device works on: image i goes to
 * slot (i / batch) % slots once the batch that slot held is released. The
 * first failure in the images' order is the one reported; no image after
 * it is started. */
#include "cli.h"
#include "images.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 64

struct cli_decoder {
  char *const *paths;
  int n;
  const relayout_aipp *a;
  int64_t frame, batch;
  int slots;
  unsigned char *frames; /* slots x batch frames */
  pthread_mutex_t lock;
  pthread_cond_t moved; /* an image finished, or a slot was released */
  int next, busy;       /* the next image to start; images started, not done */
  int64_t released;     /* batches released */
  int finished[8];      /* per slot: its batch's images done (or failed) */
  int failed, stop;     /* failed: the first failing image, or n */
  int done, tty, threads; /* images decoded; progress to a terminal */
  double start, shown;
  char why[CLI_IMAGE_MSG];
  pthread_t t[MAX_THREADS];
};

/* The progress line, on a terminal, at most five times a second. */
static void progress(cli_decoder *d, int last) {
  double t = cli_now();
  if (!d->tty || (!last && t - d->shown < 0.2)) return;
  fprintf(stderr, "\rpreprocess: %d/%d images decoded, %.0f a second%s",
          d->done, d->n, d->done / (t - d->start + 1e-9), last ? "\n" : "");
  d->shown = t;
}

static void *decoder(void *arg) {
  cli_decoder *d = arg;
  char msg[CLI_IMAGE_MSG];
  pthread_mutex_lock(&d->lock);
  for (;;) {
    while (!d->stop && d->next < d->failed && d->next < d->n &&
           d->next / d->batch >= d->released + d->slots)
      pthread_cond_wait(&d->moved, &d->lock);
    if (d->stop || d->next >= d->failed || d->next >= d->n) break;
    int i = d->next++;
    d->busy++;
    pthread_mutex_unlock(&d->lock);
    int64_t slot = i / d->batch % d->slots;
    const char *why =
        cli_image_load(d->frames + (slot * d->batch + i % d->batch) * d->frame,
                       d->paths[i], d->a, msg);
    pthread_mutex_lock(&d->lock);
    if (why && i < d->failed) {
      d->failed = i;
      snprintf(d->why, sizeof d->why, "%s", why);
    }
    d->busy--;
    d->finished[slot]++;
    d->done += !why;
    progress(d, 0);
    pthread_cond_broadcast(&d->moved);
  }
  pthread_mutex_unlock(&d->lock);
  return NULL;
}

cli_decoder *cli_decoder_start(char *const *paths, int n,
                               const relayout_aipp *a, int64_t frame,
                               int64_t batch, int slots) {
  cli_decoder *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  *d = (cli_decoder){.paths = paths,
                     .n = n,
                     .a = a,
                     .frame = frame,
                     .batch = batch,
                     .slots = slots < 1   ? 1
                              : slots > 8 ? 8
                                          : slots,
                     .failed = n,
                     .tty = isatty(2),
                     .start = cli_now()};
  /* zeroed: a last, short batch reads whole frames past its images */
  d->frames = calloc((size_t)(d->slots * batch), (size_t)frame);
  if (!d->frames || pthread_mutex_init(&d->lock, NULL) ||
      pthread_cond_init(&d->moved, NULL)) {
    free(d->frames);
    free(d);
    return NULL;
  }
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int want = (int)(cores < 1 ? 1 : cores > MAX_THREADS ? MAX_THREADS : cores);
  while (d->threads < want && d->threads < n &&
         !pthread_create(&d->t[d->threads], NULL, decoder, d))
    d->threads++;
  if (!d->threads) {
    cli_decoder_stop(d);
    return NULL;
  }
  return d;
}

const char *cli_decoder_wait(cli_decoder *d, int64_t k, unsigned char **frames,
                             int *failed) {
  int64_t first = k * d->batch, size = d->n - first;
  if (size > d->batch) size = d->batch;
  int slot = (int)(k % d->slots);
  pthread_mutex_lock(&d->lock);
  /* all of the batch, or a failure in it with every image before it done */
  while (d->finished[slot] < size &&
         !(d->failed < first + size && d->busy == 0))
    pthread_cond_wait(&d->moved, &d->lock);
  int bad = d->failed < first + size;
  if (bad || k == (d->n - 1) / d->batch) progress(d, 1); /* its last line */
  pthread_mutex_unlock(&d->lock);
  *frames = d->frames + slot * d->batch * d->frame;
  *failed = d->failed;
  return bad ? d->why : NULL;
}

void cli_decoder_release(cli_decoder *d, int64_t k) {
  pthread_mutex_lock(&d->lock);
  d->finished[k % d->slots] = 0;
  d->released = k + 1;
  pthread_cond_broadcast(&d->moved);
  pthread_mutex_unlock(&d->lock);
}

void cli_decoder_stop(cli_decoder *d) {
  if (!d) return;
  pthread_mutex_lock(&d->lock);
  d->stop = 1;
  pthread_cond_broadcast(&d->moved);
  pthread_mutex_unlock(&d->lock);
  for (int i = 0; i < d->threads; i++) pthread_join(d->t[i], NULL);
  pthread_cond_destroy(&d->moved);
  pthread_mutex_destroy(&d->lock);
  free(d->frames);
  free(d);
}
