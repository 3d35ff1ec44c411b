/* pipeline.c - grouped, overlapped conversions into one output file */
#include "pipeline.h"

#include "cli.h"
#include "relayout_cl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SLOTS = 3, DST_ALIGN = 64, SRC_ALIGN = 8 };

typedef struct pl_slot {
  cl_mem src, dst, pinned; /* src and pinned: not with unified memory */
  unsigned char *staging;  /* results: pinned, mapped for the whole run; or
                              the mapped dst while a group is read out */
  cl_event done;           /* the group's download; NULL when idle */
  int first, count;
  double t0;
} pl_slot;

typedef struct pl_state {
  pl_job *jobs;
  const pl_output *out;
  relayout_engine *engine;
  cl_context context;
  cl_command_queue up, down, kernels;
  int unified; /* the device works in host memory: kernels read the mapped
                  input and results are mapped, not copied */
  size_t cap_src, cap_dst; /* per slot; 0: every job runs alone */
  int nslots;
  pl_slot slot[SLOTS];
  unsigned char *alone; /* results of the jobs that run alone, reused */
  size_t alone_size;
} pl_state;

static size_t align_up(size_t x) {
  return (x + DST_ALIGN - 1) / DST_ALIGN * DST_ALIGN;
}

static relayout_status cl_fail(relayout_error *err, const char *what,
                               cl_int rc) {
  return cli_fail(err, RELAYOUT_ERR_UNSUPPORTED, "%s failed (OpenCL error %d)",
                  what, rc);
}

/* A result into the file, and progress, under the output's lock. */
static relayout_status put(const pl_state *st, const void *data, size_t size,
                           uint64_t at, relayout_error *err) {
  if (st->out->lock) pthread_mutex_lock(st->out->lock);
  relayout_status s = cli_out_write(st->out->file, data, size, at, 0, err);
  if (st->out->lock) pthread_mutex_unlock(st->out->lock);
  return s;
}

static void report(const pl_state *st, uint64_t read, uint64_t written, int n) {
  if (!st->out->progress) return;
  if (st->out->lock) pthread_mutex_lock(st->out->lock);
  st->out->progress(st->out->ctx, read, written, n);
  if (st->out->lock) pthread_mutex_unlock(st->out->lock);
}

/* What ran a job: its family, "generic" where its own kernel was still
 * building, or "reference". */
static const char *where(const relayout_plan *p) {
  const char *k = relayout_plan_kernel(p);
  return *relayout_plan_note(p) || !strcmp(k, "reference") ? "reference"
         : !strcmp(k, "generic")                           ? "generic"
                                 : relayout_plan_family(p);
}

/* Jobs that do not go through the slots: on the reference, too large, or
 * a source in host memory off its element's alignment. */
static int alone(const pl_state *st, const pl_job *j) {
  return !strcmp(relayout_plan_family(j->plan), "reference") ||
         j->src_size > st->cap_src || j->dst_size > st->cap_dst ||
         (st->unified && (uintptr_t)j->src % j->unit);
}

/* How many jobs from first form one group: consecutive, each source at a
 * SRC_ALIGN multiple from the first, the source span and the aligned
 * destinations within one slot. */
static int group_size(const pl_state *st, int first, int njobs) {
  const pl_job *j = st->jobs;
  const unsigned char *base = j[first].src;
  size_t dst = 0;
  int n = 0;
  while (first + n < njobs) {
    const pl_job *x = &j[first + n];
    size_t span = (size_t)(x->src - base) + x->src_size;
    if (alone(st, x) || (size_t)(x->src - base) % SRC_ALIGN ||
        span > st->cap_src || align_up(dst) + x->dst_size > st->cap_dst)
      break;
    dst = align_up(dst) + x->dst_size;
    n++;
  }
  return n;
}

static relayout_status run_alone(pl_state *st, pl_job *j, relayout_error *err) {
  double t0 = cli_now();
  if (j->dst_size > st->alone_size) {
    free(st->alone);
    st->alone_size = 0;
    if (!(st->alone = cli_alloc_aligned(j->dst_size)))
      return cli_fail(err, RELAYOUT_ERR_NOMEM,
                      "cannot allocate %zu bytes for one tensor's result",
                      j->dst_size);
    st->alone_size = j->dst_size;
  }
  relayout_status s = relayout_plan_run(j->plan, st->alone, j->dst_size, j->src,
                                        j->src_size, err);
  if (!s) s = put(st, st->alone, j->dst_size, j->dst_at, err);
  j->seconds = cli_now() - t0;
  j->where = where(j->plan);
  if (!s) report(st, j->src_size, j->dst_size, 1);
  return s;
}

/* Waits for a slot's group and writes its results out. */
static relayout_status finish(pl_state *st, pl_slot *s, relayout_error *err) {
  if (!s->done) return RELAYOUT_OK;
  cl_int rc = clWaitForEvents(1, &s->done);
  clReleaseEvent(s->done);
  s->done = NULL;
  if (rc != CL_SUCCESS) { /* the group may still run: let no command go on */
    clFinish(st->kernels);
    clFinish(st->down);
    return cl_fail(err, "a conversion group", rc);
  }
  double t = cli_now() - s->t0;
  size_t off = 0;
  uint64_t read = 0, written = 0;
  for (int i = s->first; i < s->first + s->count; i++) {
    pl_job *j = &st->jobs[i];
    off = align_up(off);
    relayout_status r = put(st, s->staging + off, j->dst_size, j->dst_at, err);
    if (r) return r;
    off += j->dst_size;
    j->seconds = t;
    j->where = where(j->plan);
    read += j->src_size;
    written += j->dst_size;
  }
  if (st->unified) {
    clEnqueueUnmapMemObject(st->down, s->dst, s->staging, 0, NULL, NULL);
    clFinish(st->down);
    s->staging = NULL;
  }
  report(st, read, written, s->count);
  return RELAYOUT_OK;
}

static relayout_status submit(pl_state *st, pl_slot *s, int first, int count,
                              relayout_error *err) {
  pl_job *j = st->jobs;
  const unsigned char *base = j[first].src;
  const pl_job *last = &j[first + count - 1];
  size_t span = (size_t)(last->src - base) + last->src_size;
  s->first = first;
  s->count = count;
  s->t0 = cli_now();
  cl_event up = NULL, kernels = NULL;
  cl_mem src = s->src;
  cl_int rc;
  if (st->unified) {
    src = clCreateBuffer(st->context, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR,
                         span, (void *)base, &rc);
    if (rc != CL_SUCCESS) return cl_fail(err, "wrapping the input", rc);
  } else {
    rc = clEnqueueWriteBuffer(st->up, src, CL_FALSE, 0, span, base, 0, NULL,
                              &up);
    if (rc != CL_SUCCESS) return cl_fail(err, "an upload", rc);
    clFlush(st->up);
  }
  size_t off = 0;
  relayout_status r = RELAYOUT_OK;
  for (int i = first; i < first + count && !r; i++) {
    off = align_up(off);
    r = relayout_plan_enqueue(
        j[i].plan, s->dst, off, src, (size_t)(j[i].src - base), up ? 1 : 0,
        up ? &up : NULL, i == first + count - 1 ? &kernels : NULL, err);
    off += j[i].dst_size;
  }
  if (up) clReleaseEvent(up);
  if (st->unified) clReleaseMemObject(src); /* kept until the kernels end */
  if (r) return r;
  clFlush(st->kernels);
  if (st->unified)
    s->staging = clEnqueueMapBuffer(st->down, s->dst, CL_FALSE, CL_MAP_READ, 0,
                                    off, 1, &kernels, &s->done, &rc);
  else
    rc = clEnqueueReadBuffer(st->down, s->dst, CL_FALSE, 0, off, s->staging, 1,
                             &kernels, &s->done);
  clReleaseEvent(kernels);
  if (rc != CL_SUCCESS) {
    s->done = NULL;
    return cl_fail(err, "a download", rc);
  }
  clFlush(st->down);
  return RELAYOUT_OK;
}

/* Queues and slot buffers sized for the largest group; on any failure the
 * jobs run alone (cap 0). */
static void open_slots(pl_state *st, int njobs, uint64_t max_memory) {
  cl_command_queue q = relayout_engine_queue(st->engine);
  if (!q) return;
  cl_device_id dev;
  cl_ulong max_alloc = 0;
  clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof dev, &dev, NULL);
  clGetDeviceInfo(dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc,
                  &max_alloc, NULL);
  st->unified = relayout_engine_host_memory(st->engine);
  /* Each slot holds a source, a destination and its pinned staging. */
  uint64_t cap = max_memory / (3 * SLOTS);
  if (cap > max_alloc) cap = max_alloc;
  st->cap_src = st->cap_dst = (size_t)cap;
  /* Shrink the slots to the largest group actually formed. */
  size_t need_src = 0, need_dst = 0;
  int groups = 0;
  for (int i = 0; i < njobs;) {
    int n = group_size(st, i, njobs);
    if (!n) {
      i++;
      continue;
    }
    const pl_job *last = &st->jobs[i + n - 1];
    size_t span = (size_t)(last->src - st->jobs[i].src) + last->src_size,
           dst = 0;
    for (int k = i; k < i + n; k++) dst = align_up(dst) + st->jobs[k].dst_size;
    if (span > need_src) need_src = span;
    if (dst > need_dst) need_dst = dst;
    groups++;
    i += n;
  }
  st->cap_src = st->cap_dst = 0;
  if (!groups) return;
  cl_context ctx = st->context = relayout_engine_context(st->engine);
  cl_int rc = CL_SUCCESS;
  st->kernels = q;
  if (!st->unified) st->up = clCreateCommandQueue(ctx, dev, 0, &rc);
  if (rc == CL_SUCCESS) st->down = clCreateCommandQueue(ctx, dev, 0, &rc);
  if (rc != CL_SUCCESS) return;
  st->nslots = groups < SLOTS ? groups : SLOTS;
  for (int i = 0; i < st->nslots; i++) {
    pl_slot *s = &st->slot[i];
    if (st->unified) {
      s->dst = clCreateBuffer(ctx, CL_MEM_ALLOC_HOST_PTR, need_dst, NULL, &rc);
      if (rc != CL_SUCCESS) return;
      continue;
    }
    s->src = clCreateBuffer(ctx, CL_MEM_READ_ONLY, need_src, NULL, &rc);
    if (rc == CL_SUCCESS)
      s->dst = clCreateBuffer(ctx, CL_MEM_READ_WRITE, need_dst, NULL, &rc);
    if (rc == CL_SUCCESS)
      s->pinned =
          clCreateBuffer(ctx, CL_MEM_ALLOC_HOST_PTR, need_dst, NULL, &rc);
    if (rc == CL_SUCCESS)
      s->staging = clEnqueueMapBuffer(st->down, s->pinned, CL_TRUE,
                                      CL_MAP_READ | CL_MAP_WRITE, 0, need_dst,
                                      0, NULL, NULL, &rc);
    if (rc != CL_SUCCESS) return;
  }
  st->cap_src = (size_t)cap;
  st->cap_dst = (size_t)cap;
}

static void close_slots(pl_state *st) {
  /* nothing may run on past here: a group whose download failed to queue
   * still has kernels reading the caller's mapped input */
  cl_command_queue queues[3] = {st->up, st->kernels, st->down};
  for (int i = 0; i < 3; i++)
    if (queues[i]) clFinish(queues[i]);
  for (int i = 0; i < SLOTS; i++) {
    pl_slot *s = &st->slot[i];
    if (s->done) {
      clWaitForEvents(1, &s->done);
      clReleaseEvent(s->done);
    }
    if (s->staging) {
      clEnqueueUnmapMemObject(st->down, st->unified ? s->dst : s->pinned,
                              s->staging, 0, NULL, NULL);
      clFinish(st->down);
    }
    if (s->pinned) clReleaseMemObject(s->pinned);
    if (s->dst) clReleaseMemObject(s->dst);
    if (s->src) clReleaseMemObject(s->src);
  }
  free(st->alone);
  if (st->up) clReleaseCommandQueue(st->up);
  if (st->down) clReleaseCommandQueue(st->down);
}

/* Finishes every slot in flight, oldest (the one at next) first. */
static relayout_status finish_all(pl_state *st, int next, relayout_error *err) {
  relayout_status r = RELAYOUT_OK;
  for (int k = 0; k < st->nslots && !r; k++)
    r = finish(st, &st->slot[(next + k) % st->nslots], err);
  return r;
}

relayout_status pl_run(pl_job *jobs, int njobs, relayout_engine *engine,
                       uint64_t max_memory, const pl_output *out,
                       relayout_error *err) {
  pl_state st;
  memset(&st, 0, sizeof st);
  st.jobs = jobs;
  st.out = out;
  st.engine = engine;
  open_slots(&st, njobs, max_memory);
  relayout_status r = RELAYOUT_OK;
  int next = 0;
  for (int i = 0; i < njobs && !r;) {
    if ((r = cli_stop_requested(err))) break;
    int n = st.cap_dst ? group_size(&st, i, njobs) : 0;
    if (!n) {
      /* a stream takes results in order: the groups before first */
      if (out->file->stream) r = finish_all(&st, next, err);
      if (!r) r = run_alone(&st, &jobs[i++], err);
      continue;
    }
    pl_slot *s = &st.slot[next];
    next = (next + 1) % st.nslots;
    r = finish(&st, s, err);
    if (!r) r = submit(&st, s, i, n, err);
    i += n;
  }
  if (!r) r = finish_all(&st, next, err);
  close_slots(&st);
  return r;
}

/* One engine's share of pl_run_all. */
typedef struct pl_share {
  pl_job *jobs;
  int njobs;
  relayout_engine *engine;
  uint64_t max_memory;
  const pl_output *out;
  relayout_status status;
  relayout_error err;
} pl_share;

static void *run_share(void *arg) {
  pl_share *x = arg;
  x->status =
      pl_run(x->jobs, x->njobs, x->engine, x->max_memory, x->out, &x->err);
  return NULL;
}

relayout_status pl_run_all(pl_job *jobs, const int *device, int njobs,
                           relayout_engine *const *engines, int nengines,
                           uint64_t max_memory, const pl_output *out,
                           relayout_error *err) {
  pl_share *share = calloc((size_t)nengines, sizeof *share);
  pl_job *copies = malloc(sizeof *copies * ((size_t)njobs + 1));
  pthread_t *threads = calloc((size_t)nengines, sizeof *threads);
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pl_output locked = *out;
  locked.lock = &lock;
  relayout_status s = share && copies && threads
                          ? RELAYOUT_OK
                          : cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  /* each engine's jobs, in the jobs' order (by source address) */
  for (int d = 0, at = 0; !s && d < nengines; d++) {
    share[d] = (pl_share){.jobs = copies + at,
                          .engine = engines[d],
                          .max_memory = max_memory / (uint64_t)nengines,
                          .out = &locked};
    for (int i = 0; i < njobs; i++)
      if (device[i] == d) copies[at + share[d].njobs++] = jobs[i];
    at += share[d].njobs;
  }
  int started = 0;
  for (; !s && started < nengines; started++)
    if (pthread_create(&threads[started], NULL, run_share, &share[started])) {
      s = cli_fail(err, RELAYOUT_ERR_NOMEM, "cannot start a thread");
      break;
    }
  for (int d = 0; d < started; d++) pthread_join(threads[d], NULL);
  for (int d = 0; !s && d < nengines; d++)
    if (share[d].status) {
      s = share[d].status;
      *err = share[d].err;
    }
  /* what ran each job, back in the caller's order */
  for (int d = 0; !s && d < nengines; d++) {
    const pl_job *c = share[d].jobs;
    for (int i = 0; i < njobs; i++)
      if (device[i] == d) jobs[i] = *c++;
  }
  free(share);
  free(copies);
  free(threads);
  return s;
}
