/* frames.c - the FRAMES of relayout preprocess, in batches: one raw file
 * of whole frames, or JPEG and PNG images (paths, directories of them,
 * @LIST files of paths), each decoded into one frame (images.c) ahead of
 * the batch in use (decode.c); a raw file is read a batch at a time */
#include "cli.h"
#include "images.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* A growing list of paths, each malloc'd. */
typedef struct paths {
  char **p;
  int n, cap;
} paths;

static int add(paths *l, const char *path) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 16;
    char **p = realloc(l->p, sizeof *p * (size_t)cap);
    if (!p) return -1;
    l->p = p;
    l->cap = cap;
  }
  return (l->p[l->n] = strdup(path)) ? (l->n++, 0) : -1;
}

static void paths_free(paths *l) {
  for (int i = 0; i < l->n; i++) free(l->p[i]);
  free(l->p);
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A name ending in .jpg, .jpeg or .png, in any case. */
static int image_name(const char *name) {
  static const char *const ends[] = {".jpg", ".jpeg", ".png"};
  size_t n = strlen(name);
  for (int k = 0; k < 3; k++) {
    size_t e = strlen(ends[k]);
    if (n > e && !strcasecmp(name + n - e, ends[k])) return 1;
  }
  return 0;
}

/* The images a directory holds, in name order; 0, or nonzero with err. */
static int add_directory(paths *l, const char *dir, relayout_error *err) {
  DIR *d = opendir(dir);
  if (!d) return cli_fail(err, RELAYOUT_ERR_FILE, "cannot read the directory");
  int first = l->n, bad = 0;
  for (struct dirent *e; !bad && (e = readdir(d));) {
    if (!image_name(e->d_name)) continue;
    char *p = malloc(strlen(dir) + strlen(e->d_name) + 2);
    bad = !p || (sprintf(p, "%s/%s", dir, e->d_name), add(l, p));
    free(p);
  }
  closedir(d);
  if (bad) return cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  if (l->n == first)
    return cli_fail(err, RELAYOUT_ERR_FILE, "no .jpg, .jpeg or .png in it");
  qsort(l->p + first, (size_t)(l->n - first), sizeof *l->p, by_name);
  return 0;
}

/* The paths a list file names, a line each (blank lines skipped); 0, or
 * nonzero with err. */
static int add_list(paths *l, const char *list, relayout_error *err) {
  FILE *f = fopen(list, "r");
  if (!f) return cli_fail(err, RELAYOUT_ERR_FILE, "cannot open the list");
  char line[4096];
  int bad = 0, first = l->n;
  while (!bad && fgets(line, sizeof line, f)) {
    size_t n = strcspn(line, "\r\n");
    if (line[n] == 0 && !feof(f)) {
      bad = cli_fail(err, RELAYOUT_ERR_FILE, "a line over %zu bytes",
                     sizeof line - 1);
      break;
    }
    line[n] = 0;
    if (n && add(l, line)) bad = cli_fail(err, RELAYOUT_ERR_NOMEM, "no memory");
  }
  fclose(f);
  if (!bad && l->n == first)
    bad = cli_fail(err, RELAYOUT_ERR_FILE, "the list names no file");
  return bad ? -1 : 0;
}

struct cli_frames {
  const relayout_aipp *a;
  int64_t frame, count, batch;
  int raw;             /* from a raw file, read a batch at a time */
  cli_in in;           /* the raw file */
  unsigned char *slot; /* its batches: batch k in slot k mod slots */
  int slots;
  int64_t released; /* raw batches released (in order) */
  pthread_mutex_t lock;
  pthread_cond_t moved; /* a raw batch was released */
  const char *path;
  paths images;
  cli_decoder *decoder;
};

/* One raw file of whole frames. */
static int raw_frames(cli_frames *f, const char *path, const char *cmd) {
  relayout_error err;
  cli_in in;
  if (cli_in_open(&in, path, &err))
    return cli_error(EXIT_WORK, cmd, "%s: %s", path, err.message);
  int rc = 0;
  if (!in.stream && (in.size == 0 || in.size % (uint64_t)f->frame))
    rc = cli_error(EXIT_WORK, cmd,
                   "%s: %llu bytes, not a whole number of %lld x %lld frames "
                   "of %lld bytes (frames are never resized)",
                   path, (unsigned long long)in.size,
                   (long long)f->a->src_image_size_w,
                   (long long)f->a->src_image_size_h, (long long)f->frame);
  if (rc) {
    cli_in_close(&in);
    return rc;
  }
  f->raw = 1;
  f->in = in;
  f->path = path;
  f->count = in.stream ? -1 : (int64_t)(in.size / (uint64_t)f->frame);
  return 0;
}

/* Whether path is a regular file that starts as a JPEG or PNG does. */
static int is_image(const char *path) {
  unsigned char head[8];
  relayout_error err;
  int fd = cli_open_regular(path, &err);
  ssize_t got = fd >= 0 ? read(fd, head, sizeof head) : 0;
  if (fd >= 0) close(fd);
  return got > 0 && relayout_image_kind(head, (size_t)got) != 0;
}

int cli_frames_open(cli_frames **out, int64_t *count, const char *const *inputs,
                    int ninputs, const relayout_aipp *a, int64_t frame,
                    const char *cmd) {
  struct stat st;
  cli_frames *f = *out = calloc(1, sizeof *f);
  if (!f) return cli_error(EXIT_WORK, cmd, "out of memory");
  f->a = a;
  f->frame = frame;
  pthread_mutex_init(&f->lock, NULL);
  pthread_cond_init(&f->moved, NULL);
  int rc = 0;
  if (ninputs == 1 && inputs[0][0] != '@' &&
      (stat(inputs[0], &st) || !S_ISDIR(st.st_mode)) && !is_image(inputs[0])) {
    rc = raw_frames(f, inputs[0], cmd);
  } else {
    relayout_error err;
    paths *l = &f->images;
    for (int i = 0; i < ninputs && !rc; i++) {
      const char *in = inputs[i];
      int s =
          in[0] == '@'                            ? add_list(l, in + 1, &err)
          : !stat(in, &st) && S_ISDIR(st.st_mode) ? add_directory(l, in, &err)
          : add(l, in) ? (int)cli_fail(&err, RELAYOUT_ERR_NOMEM, "no memory")
                       : 0;
      if (s) rc = cli_error(EXIT_WORK, cmd, "%s: %s", in, err.message);
    }
    f->count = l->n;
  }
  if (rc) {
    cli_frames_close(f);
    *out = NULL;
  }
  *count = rc ? 0 : f->count;
  return rc;
}

/* Whether path is the file st describes. */
static int is_file(const char *path, const struct stat *st) {
  struct stat s;
  return strcmp(path, "-") && !stat(path, &s) && s.st_dev == st->st_dev &&
         s.st_ino == st->st_ino;
}

const char *cli_frames_reads(const cli_frames *f, const char *const *inputs,
                             int ninputs, const char *path) {
  struct stat st;
  if (!strcmp(path, "-") || stat(path, &st)) return NULL;
  for (int i = 0; i < ninputs; i++)
    if (is_file(inputs[i] + (inputs[i][0] == '@'), &st)) return inputs[i];
  for (int i = 0; i < f->images.n; i++)
    if (is_file(f->images.p[i], &st)) return f->images.p[i];
  return NULL;
}

int cli_frames_start(cli_frames *f, int64_t batch, int slots, const char *cmd) {
  f->batch = batch;
  f->slots = slots;
  int64_t whole = (f->count + batch - 1) / batch * batch;
  if ((uint64_t)(whole > batch ? whole : slots * batch) >
      SIZE_MAX / 2 / (uint64_t)f->frame)
    return cli_error(EXIT_WORK, cmd, "%lld frames of %lld bytes: too large",
                     (long long)f->count, (long long)f->frame);
  if (f->raw) { /* zeroed: a last, short batch reads whole frames after it */
    size_t bytes = (size_t)(slots * batch * f->frame);
    if (!(f->slot = cli_alloc_aligned(bytes)))
      return cli_error(EXIT_WORK, cmd, "out of memory");
    memset(f->slot, 0, bytes);
  }
  if (!f->raw && !(f->decoder = cli_decoder_start(
                       f->images.p, f->images.n, f->a, f->frame, batch, slots)))
    return cli_error(EXIT_WORK, cmd, "out of memory, or no thread to decode");
  return 0;
}

int cli_frames_batch(cli_frames *f, int64_t k, const unsigned char **frames,
                     int64_t *got, const char *cmd) {
  int64_t left = f->count < 0 ? f->batch : f->count - k * f->batch;
  *got = left < f->batch ? (left < 0 ? 0 : left) : f->batch;
  if (!*got) return 0;
  if (f->raw) { /* batches come in order: the input's next frames */
    relayout_error err;
    pthread_mutex_lock(&f->lock); /* until its slot's batch is released */
    while (k >= f->released + f->slots) pthread_cond_wait(&f->moved, &f->lock);
    pthread_mutex_unlock(&f->lock);
    *frames = f->slot + k % f->slots * f->batch * f->frame;
    size_t want = (size_t)(*got * f->frame), bytes;
    if (cli_in_read_some(&f->in, (unsigned char *)*frames, want, &bytes, &err))
      return cli_error(EXIT_WORK, cmd, "%s: %s", f->path, err.message);
    if (f->count >= 0 && bytes < want) /* its size said more */
      return cli_error(EXIT_WORK, cmd, "%s: ended early, changed while read",
                       f->path);
    if (bytes % (size_t)f->frame)
      return cli_error(EXIT_WORK, cmd,
                       "%s: ends %zu bytes into a frame of %lld bytes (frames "
                       "are never resized)",
                       f->path, bytes % (size_t)f->frame, (long long)f->frame);
    *got = (int64_t)(bytes / (size_t)f->frame);
    return 0;
  }
  int failed;
  unsigned char *at;
  const char *why = cli_decoder_wait(f->decoder, k, &at, &failed);
  *frames = at;
  return why ? cli_error(EXIT_WORK, cmd, "%s: %s", f->images.p[failed], why)
             : 0;
}

void cli_frames_release(cli_frames *f, int64_t k) {
  if (f->decoder) cli_decoder_release(f->decoder, k);
  pthread_mutex_lock(&f->lock);
  f->released = k + 1;
  pthread_cond_broadcast(&f->moved);
  pthread_mutex_unlock(&f->lock);
}

void cli_frames_close(cli_frames *f) {
  if (!f) return;
  cli_decoder_stop(f->decoder);
  paths_free(&f->images);
  if (f->raw) cli_in_close(&f->in);
  pthread_cond_destroy(&f->moved);
  pthread_mutex_destroy(&f->lock);
  free(f->slot);
  free(f);
}
