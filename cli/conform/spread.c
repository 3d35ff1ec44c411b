/* spread.c - a matrix over several devices (--device all, --device 0,2):
 * a thread per device takes the next case in turn; the cases are recorded
 * in the matrix's order, so the reports are those of one device's run */
#include "conform.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct job {
  char group[16];
  cf_case k;
  int64_t index; /* in the matrix */
  int verdict, done;
  char *details;
} job;

typedef struct jobs {
  conform *c;
  job *list;
  int n, cap, next, stop, running;
  pthread_mutex_t lock;
} jobs;

typedef struct worker {
  jobs *q;
  relayout_engine *e, *against;
  const char *name, *item; /* the device's name, its --device item */
} worker;

/* The matrix's cases of this part, collected (enumerate's visitor). */
static void collect(void *ctx, const char *group, const cf_case *k) {
  jobs *q = ctx;
  conform *c = q->c;
  if (c->seen++ % c->parts != c->part || q->stop) return;
  if (q->n == q->cap) {
    int cap = q->cap ? 2 * q->cap : 256;
    job *more = realloc(q->list, sizeof *more * (size_t)cap);
    if (!more) {
      q->stop = 1; /* reported as out of memory by cf_spread */
      return;
    }
    q->list = more;
    q->cap = cap;
  }
  job *j = &q->list[q->n++];
  memset(j, 0, sizeof *j);
  snprintf(j->group, sizeof j->group, "%s", group);
  j->k = *k;
  j->index = c->seen - 1;
}

static void *work(void *arg) {
  worker *w = arg;
  jobs *q = w->q;
  for (;;) {
    pthread_mutex_lock(&q->lock);
    if (!q->stop && cli_interrupted()) q->stop = 1;
    int i = q->stop || q->next == q->n ? -1 : q->next++;
    pthread_mutex_unlock(&q->lock);
    if (i < 0) break;
    job *j = &q->list[i];
    char *details = NULL;
    int v = cf_check(q->c, w->e, w->against, w->name, w->item, &j->k, NULL,
                     NULL, q->c->plant == i + 1, &details);
    pthread_mutex_lock(&q->lock);
    j->verdict = v;
    j->details = details;
    j->done = 1;
    pthread_mutex_unlock(&q->lock);
  }
  pthread_mutex_lock(&q->lock);
  q->running--;
  pthread_mutex_unlock(&q->lock);
  return NULL;
}

/* Records the done cases from *at on, in order, up to the first not done
 * (all that are done where `all`). */
static void record_done(jobs *q, int *at, int all) {
  for (; *at < q->n; ++*at) {
    job *j = &q->list[*at];
    pthread_mutex_lock(&q->lock);
    int done = j->done;
    pthread_mutex_unlock(&q->lock);
    if (!done && !all) return;
    if (!done) continue;
    cf_record(q->c, j->index, j->group, &j->k, j->verdict,
              j->details ? j->details : "out of memory");
    free(j->details);
    j->details = NULL;
  }
}

/* The matrix's cases on engines[0..n), named items[i] on the command line,
 * against[i] their references (NULL: the scalar one). */
static int spread(conform *c, relayout_engine **engines,
                  relayout_engine **against, char **items, int n,
                  void (*list)(void *, cf_visit *, void *), void *list_ctx) {
  jobs q = {.c = c, .lock = PTHREAD_MUTEX_INITIALIZER};
  list(list_ctx, collect, &q);
  if (q.stop) {
    free(q.list);
    return cli_error(EXIT_WORK, "conform", "out of memory");
  }
  worker *w = calloc((size_t)n, sizeof *w);
  pthread_t *t = calloc((size_t)n, sizeof *t);
  int started = 0, at = 0;
  for (; w && t && started < n; started++) {
    w[started] =
        (worker){&q, engines[started], against[started],
                 relayout_engine_device(engines[started]), items[started]};
    q.running++;
    if (pthread_create(&t[started], NULL, work, &w[started])) {
      q.running--;
      break;
    }
  }
  /* the main thread records what is done, in order, as it is done */
  for (int running = started; running;) {
    struct timespec nap = {0, 50 * 1000 * 1000};
    nanosleep(&nap, NULL);
    record_done(&q, &at, 0);
    pthread_mutex_lock(&q.lock);
    running = q.running;
    pthread_mutex_unlock(&q.lock);
  }
  for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
  record_done(&q, &at, 1);
  if (q.stop && !c->interrupted) c->interrupted = cli_interrupted();
  free(q.list);
  free(w);
  free(t);
  return started ? 0
                 : cli_error(EXIT_WORK, "conform",
                             "could not start a thread per device");
}

int cf_spread(conform *c, void (*list)(void *, cf_visit *, void *),
              void *list_ctx) {
  relayout_engine_options o;
  relayout_engine **e = NULL, **against = NULL;
  char **items = NULL; /* each device's --device item, for its reruns */
  int n = 0, nitems = 0, rc;
  cli_engine_options(&o, c->device_arg);
  if ((rc = cli_engines(&e, &n, &o, c->device_arg, "conform")) ||
      (rc = cli_device_items(&items, &nitems, c->device_arg, "conform")))
    goto done;
  if (!(against = calloc((size_t)n, sizeof *against)))
    rc = cli_error(EXIT_WORK, "conform", "out of memory");
  for (int i = 0; i < n && !rc; i++)
    if (strcmp(c->against_name, "ref"))
      rc = cli_engine(&against[i], c->against_name, "conform");
  size_t at = 0, room = sizeof c->devices;
  for (int i = 0; i < n && at < room; i++)
    at += (size_t)snprintf(c->devices + at, room - at, "%s%s", i ? ", " : "",
                           relayout_engine_device(e[i]));
  c->device = c->devices;
  if (!rc) rc = spread(c, e, against, items, n, list, list_ctx);
done:
  for (int i = 0; against && i < n; i++) relayout_engine_free(against[i]);
  free(against);
  cli_device_items_free(items, nitems);
  cli_engines_free(e, n);
  return rc;
}
