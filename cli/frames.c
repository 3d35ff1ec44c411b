/* frames.c - the FRAMES of relayout preprocess: one raw file of whole
 * frames, or JPEG and PNG images (paths, directories of them, @LIST files
 * of paths), each decoded into one frame (images.c) */
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
  int bad = 0;
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
  return bad ? -1 : 0;
}

/* One raw file of whole frames. */
static int raw_frames(unsigned char **frames, int64_t *n, const char *path,
                      const relayout_aipp *a, int64_t frame, const char *cmd) {
  relayout_error err;
  cli_in in;
  if (cli_in_open(&in, path, &err))
    return cli_error(EXIT_WORK, cmd, "%s: %s", path, err.message);
  int rc = 0;
  if (in.stream)
    rc = cli_error(EXIT_WORK, cmd,
                   "%s: FRAMES must be a regular file (its size gives the "
                   "number of frames)",
                   path);
  else if (in.size == 0 || in.size % (uint64_t)frame)
    rc = cli_error(EXIT_WORK, cmd,
                   "%s: %llu bytes, not a whole number of %lld x %lld frames "
                   "of %lld bytes (frames are never resized)",
                   path, (unsigned long long)in.size,
                   (long long)a->src_image_size_w,
                   (long long)a->src_image_size_h, (long long)frame);
  else if (cli_in_read(&in, frames, (size_t)in.size, &err))
    rc = cli_error(EXIT_WORK, cmd, "%s: %s", path, err.message);
  else
    *n = (int64_t)(in.size / (uint64_t)frame);
  cli_in_close(&in);
  return rc;
}

/* The images decoded on a thread per core, each taking the next; the
 * first failure, in the list's order, is reported. */
typedef struct decoding {
  const paths *l;
  unsigned char *frames;
  const relayout_aipp *a;
  int64_t frame;
  pthread_mutex_t lock;
  int next, failed; /* failed: the first failing index, or l->n */
  int done, tty;    /* images decoded; progress goes to a terminal */
  double start, shown;
  char why[CLI_IMAGE_MSG];
} decoding;

/* The progress line, on a terminal, at most five times a second. */
static void progress(decoding *d, int last) {
  double t = cli_now();
  if (!d->tty || (!last && t - d->shown < 0.2)) return;
  fprintf(stderr, "\rpreprocess: %d/%d images decoded, %.0f a second%s",
          d->done, d->l->n, d->done / (t - d->start + 1e-9), last ? "\n" : "");
  d->shown = t;
}

static void *decoder(void *arg) {
  decoding *d = arg;
  char msg[CLI_IMAGE_MSG];
  for (;;) {
    pthread_mutex_lock(&d->lock);
    int i = d->next < d->failed ? d->next++ : -1;
    pthread_mutex_unlock(&d->lock);
    if (i < 0) return NULL;
    const char *why =
        cli_image_load(d->frames + i * d->frame, d->l->p[i], d->a, msg);
    pthread_mutex_lock(&d->lock);
    if (why && i < d->failed) {
      d->failed = i;
      snprintf(d->why, sizeof d->why, "%s", why);
    }
    d->done += !why;
    progress(d, 0);
    pthread_mutex_unlock(&d->lock);
  }
}

static int decode_all(unsigned char *frames, const paths *l,
                      const relayout_aipp *a, int64_t frame, const char *cmd) {
  decoding d = {.l = l,
                .frames = frames,
                .a = a,
                .frame = frame,
                .lock = PTHREAD_MUTEX_INITIALIZER,
                .failed = l->n,
                .tty = isatty(2),
                .start = cli_now()};
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int n = (int)(cores < 1 ? 1 : cores > 64 ? 64 : cores), started = 0;
  if (n > l->n) n = l->n;
  pthread_t t[64];
  while (started < n - 1 && !pthread_create(&t[started], NULL, decoder, &d))
    started++;
  decoder(&d); /* and this thread too */
  for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
  progress(&d, 1);
  return d.failed < l->n
             ? cli_error(EXIT_WORK, cmd, "%s: %s", l->p[d.failed], d.why)
             : 0;
}

/* Whether path is a regular file that starts as a JPEG or PNG does. */
static int is_image(const char *path) {
  unsigned char head[8];
  FILE *f = fopen(path, "rb");
  size_t got = f ? fread(head, 1, sizeof head, f) : 0;
  if (f) fclose(f);
  return cli_image_kind(head, got) != CLI_IMAGE_NONE;
}

int cli_frames(unsigned char **frames, int64_t *n, const char *const *inputs,
               int ninputs, const relayout_aipp *a, int64_t frame,
               const char *cmd) {
  struct stat st;
  *frames = NULL;
  *n = 0;
  if (ninputs == 1 && inputs[0][0] != '@' &&
      (stat(inputs[0], &st) || !S_ISDIR(st.st_mode)) && !is_image(inputs[0]))
    return raw_frames(frames, n, inputs[0], a, frame, cmd);
  paths l = {0};
  relayout_error err;
  int rc = 0;
  for (int i = 0; i < ninputs && !rc; i++) {
    const char *in = inputs[i];
    int s = in[0] == '@' ? add_list(&l, in + 1, &err)
            : !stat(in, &st) && S_ISDIR(st.st_mode)
                ? add_directory(&l, in, &err)
            : add(&l, in) ? (int)cli_fail(&err, RELAYOUT_ERR_NOMEM, "no memory")
                          : 0;
    if (s) rc = cli_error(EXIT_WORK, cmd, "%s: %s", in, err.message);
  }
  if (!rc && (uint64_t)l.n * (uint64_t)frame > SIZE_MAX / 2)
    rc = cli_error(EXIT_WORK, cmd, "%d frames of %lld bytes: too large", l.n,
                   (long long)frame);
  if (!rc && !(*frames = cli_alloc_aligned((size_t)(l.n * frame))))
    rc = cli_error(EXIT_WORK, cmd, "out of memory");
  if (!rc) rc = decode_all(*frames, &l, a, frame, cmd);
  if (rc) {
    free(*frames);
    *frames = NULL;
  } else {
    *n = l.n;
  }
  paths_free(&l);
  return rc;
}
