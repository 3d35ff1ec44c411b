/* builds.c - specialised programs built in the background
 *
 * A plan whose specialised program is in neither cache runs its generic
 * kernel and queues its source here; the engine's builder threads (started
 * on first need, up to the options' build_threads) take builds in order,
 * several at once, and put each program into the program cache, memory and
 * disk, as rl_program_get does. A build queued before the engine's first
 * launch is held until then (or until its plan waits for it, or is freed):
 * PoCL compiles one program at a time per process, and a first launch
 * compiles for its work-group size, so that first run would otherwise wait
 * for the build. On a CPU device a builder also lets the engine's queue run
 * what it holds before it compiles anything, for the same reason. The plan
 * polls its build when it runs and switches once the program is there. A plan
 * freed first abandons its build: one under way finishes into the cache (a
 * later plan of the same shape finds it); one not started is dropped, or with
 * the engine's finish_builds stays queued, so that the next run of the same
 * shapes (a second repack of a checkpoint) finds every kernel. The engine,
 * freed, waits for the builds under way and the queue.
 *
 * The builders also store the binaries of programs built on other threads
 * (generic programs, plans that build their own) into the disk cache, once
 * a kernel has run and no build is waiting (rl_builds_store starts a
 * builder for them where none runs); the engine, freed, waits for these,
 * and stores those left where no builder could run. PoCL compiles a
 * program's kernels once more for its binary (for the generic program,
 * longer than its build), which a cold first run then does not wait for.
 *
 * On a CPU device PoCL makes a kernel's machine code for its work-group
 * size (and for a grid small or wide) at its first launch, a tenth of a
 * second more, or a second for a large kernel: the builder launches each
 * program's kernel once on buffers of the plan's sizes, on a grid of the
 * plan's class, so that the plan's first run with it compiles nothing.
 */
#define _GNU_SOURCE /* syscall(SYS_gettid) */
#include "engine.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#endif

struct rl_build {
  rl_build *next; /* the queue */
  char *source;
  rl_warm warm;
  int held; /* until the engine's first launch */
  enum { QUEUED, BUILDING, DONE, FAILED } state;
  int abandoned;
  cl_program program;
  relayout_error why;
};

static void build_free(rl_build *b) {
  if (b->warm.channels) clReleaseMemObject(b->warm.channels);
  free(b->source);
  free(b);
}

/* PoCL makes a kernel's machine code apart for grids narrower than this in
 * every dimension (its CPU devices' grid_width_specialization_limit). */
#define POCL_SMALL_GRID 65535

/* The program's kernel launched on buffers of the plan's sizes, on a queue
 * of the builder's own (*q, made on first need): one work-group where the
 * plan's grid is small for PoCL, else work-groups enough to make it wide,
 * within the plan's grid. */
static void warm_up(relayout_engine *e, cl_command_queue *q, cl_program prog,
                    const rl_warm *w) {
  size_t global[3];
  for (cl_uint d = 0; d < w->dims; d++)
    global[d] =
        w->global[d] < POCL_SMALL_GRID
            ? w->local[d]
            : (POCL_SMALL_GRID + w->local[d] - 1) / w->local[d] * w->local[d];
  cl_int rc = CL_SUCCESS;
  if (!*q) *q = clCreateCommandQueue(e->context, e->device, 0, &rc);
  if (rc != CL_SUCCESS) *q = NULL;
  cl_kernel k = *q ? clCreateKernel(prog, w->kernel, &rc) : NULL;
  cl_mem src =
      k ? clCreateBuffer(e->context, CL_MEM_READ_ONLY, w->src_bytes, NULL, &rc)
        : NULL;
  cl_mem dst = src ? clCreateBuffer(e->context, CL_MEM_READ_WRITE, w->dst_bytes,
                                    NULL, &rc)
                   : NULL;
  cl_long zero = 0;
  if (dst && clSetKernelArg(k, 0, sizeof src, &src) == CL_SUCCESS &&
      clSetKernelArg(k, 1, sizeof zero, &zero) == CL_SUCCESS &&
      clSetKernelArg(k, 2, sizeof dst, &dst) == CL_SUCCESS &&
      clSetKernelArg(k, 3, sizeof zero, &zero) == CL_SUCCESS &&
      (!w->channels ||
       clSetKernelArg(k, 4, sizeof w->channels, &w->channels) == CL_SUCCESS) &&
      clEnqueueNDRangeKernel(*q, k, w->dims, NULL, global, w->local, 0, NULL,
                             NULL) == CL_SUCCESS)
    clFinish(*q);
  if (dst) clReleaseMemObject(dst);
  if (src) clReleaseMemObject(src);
  if (k) clReleaseKernel(k);
}

/* The link to the first build not held, or to the queue's end. */
static rl_build **ready(relayout_engine *e) {
  rl_build **at = &e->waiting;
  while (*at && (*at)->held) at = &(*at)->next;
  return at;
}

/* Binaries are asked for once no build waits and a kernel has run, or the
 * engine stops: asking holds PoCL's compiler, which a first launch needs. */
static int may_store(const relayout_engine *e) {
  return e->stopping || (e->launched && !e->waiting);
}

static int stopping(relayout_engine *e) {
  pthread_mutex_lock(&e->lock);
  int s = e->stopping;
  pthread_mutex_unlock(&e->lock);
  return s;
}

/* On a CPU device, until the engine's queue has run what it holds (its
 * first launches compile), or the engine stops: a marker polled, since a
 * command may wait on an event its user completes later. */
static void drained(relayout_engine *e) {
  cl_event m;
  if (e->is_gpu ||
      clEnqueueMarkerWithWaitList(e->queue, 0, NULL, &m) != CL_SUCCESS)
    return;
  clFlush(e->queue);
  cl_int status = CL_QUEUED;
  while (clGetEventInfo(m, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                        &status, NULL) == CL_SUCCESS &&
         status > CL_COMPLETE && !stopping(e))
    usleep(1000);
  clReleaseEvent(m);
}

static void *builder(void *arg) {
  relayout_engine *e = arg;
#ifdef __linux__
  /* builds take the CPU the conversions leave: a CPU device's runs share
   * its cores */
  setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
#endif
  cl_command_queue q = NULL; /* for warm-ups */
  pthread_mutex_lock(&e->lock);
  for (;;) {
    rl_build **at;
    while (!*(at = ready(e)) && !(e->unstored && may_store(e)) && !e->stopping)
      pthread_cond_wait(&e->changed, &e->lock);
    rl_program *unstored = *at || !may_store(e) ? NULL : rl_program_unstored(e);
    if (unstored) {
      pthread_mutex_unlock(&e->lock);
      drained(e);
      rl_program_store(e, unstored);
      pthread_mutex_lock(&e->lock);
      continue;
    }
    if (!*at) break; /* stopping, nothing left */
    rl_build *b = *at;
    *at = b->next;
    b->state = BUILDING;
    e->building++;
    pthread_mutex_unlock(&e->lock);
    drained(e);
    relayout_error why = {""};
    cl_program prog = rl_program_get(e, b->source, 2, &why);
    if (prog && !e->is_gpu && b->warm.kernel[0]) warm_up(e, &q, prog, &b->warm);
    pthread_mutex_lock(&e->lock);
    b->program = prog;
    b->why = why;
    b->state = prog ? DONE : FAILED;
    e->building--;
    if (b->abandoned) build_free(b);
    pthread_cond_broadcast(&e->changed);
  }
  pthread_mutex_unlock(&e->lock);
  if (q) clReleaseCommandQueue(q);
  return NULL;
}

/* One more builder thread, up to the bound. e->lock held. */
static void add_builder(relayout_engine *e) {
  if (e->nbuilders < e->build_threads && !e->stopping &&
      pthread_create(&e->builders[e->nbuilders], NULL, builder, e) == 0)
    e->nbuilders++;
}

int relayout_engine_pending_builds(relayout_engine *e) {
  if (!e) return 0;
  pthread_mutex_lock(&e->lock);
  int n = e->building;
  for (rl_build *b = e->waiting; b; b = b->next) n++;
  pthread_mutex_unlock(&e->lock);
  return n;
}

void rl_builds_store(relayout_engine *e) {
  pthread_mutex_lock(&e->lock);
  if (e->unstored && !e->nbuilders) add_builder(e);
  pthread_mutex_unlock(&e->lock);
}

rl_build *rl_build_start(relayout_engine *e, const char *source,
                         const rl_warm *warm) {
  rl_build *b = calloc(1, sizeof *b);
  if (!b || !(b->source = strdup(source))) {
    free(b);
    return NULL;
  }
  if (warm) b->warm = *warm;
  if (b->warm.channels) clRetainMemObject(b->warm.channels);
  pthread_mutex_lock(&e->lock);
  b->held = !e->launched;
  rl_build **tail = &e->waiting;
  while (*tail) tail = &(*tail)->next;
  *tail = b;
  add_builder(e); /* a thread per build queued, up to the bound */
  int started = e->nbuilders > 0;
  pthread_cond_broadcast(&e->changed);
  pthread_mutex_unlock(&e->lock);
  if (!started) { /* no thread to build it: the caller builds it now */
    rl_build_release(e, b);
    return NULL;
  }
  return b;
}

/* b, held, free to start (its plan waits for it, or is freed with it
 * queued). e->lock held. */
static void unhold(relayout_engine *e, rl_build *b) {
  if (b->held) {
    b->held = 0;
    pthread_cond_broadcast(&e->changed);
  }
}

void rl_build_go(relayout_engine *e) {
  pthread_mutex_lock(&e->lock);
  if (!e->launched) {
    e->launched = 1;
    for (rl_build *b = e->waiting; b; b = b->next) b->held = 0;
    pthread_cond_broadcast(&e->changed);
  }
  pthread_mutex_unlock(&e->lock);
}

int rl_build_poll(relayout_engine *e, rl_build *b, int wait,
                  cl_program *program, relayout_error *why) {
  pthread_mutex_lock(&e->lock);
  if (wait) unhold(e, b);
  while (wait && (b->state == QUEUED || b->state == BUILDING))
    pthread_cond_wait(&e->changed, &e->lock);
  int state = b->state;
  *program = b->program;
  *why = b->why;
  pthread_mutex_unlock(&e->lock);
  return state == DONE ? 1 : state == FAILED ? -1 : 0;
}

void rl_build_release(relayout_engine *e, rl_build *b) {
  if (!b) return;
  pthread_mutex_lock(&e->lock);
  int done = b->state == DONE || b->state == FAILED;
  if (b->state == QUEUED && !e->finish_builds) { /* not started: dropped */
    rl_build **at = &e->waiting;
    while (*at != b) at = &(*at)->next;
    *at = b->next;
    done = 1;
  } else {
    unhold(e, b);
  }
  if (!done) b->abandoned = 1; /* its builder frees it */
  pthread_mutex_unlock(&e->lock);
  if (done) build_free(b);
}

void rl_builds_stop(relayout_engine *e) {
  pthread_mutex_lock(&e->lock);
  e->stopping = 1;
  pthread_cond_broadcast(&e->changed);
  pthread_mutex_unlock(&e->lock);
  for (int i = 0; i < e->nbuilders; i++) pthread_join(e->builders[i], NULL);
  e->nbuilders = 0;
  for (;;) { /* binaries no builder stored (none could run) */
    pthread_mutex_lock(&e->lock);
    rl_program *p = rl_program_unstored(e);
    pthread_mutex_unlock(&e->lock);
    if (!p) break;
    rl_program_store(e, p);
  }
}
