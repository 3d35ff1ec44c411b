/* measure.c - timing one conversion next to the device's copy bandwidth
 *
 * Each run is timed on the host around the enqueue and clFinish, so use
 * tensors of 64 MiB and more where launch costs vanish. The copy peers are
 * clEnqueueCopyBuffer and a plain copy kernel (kernels/copy.cl) in the
 * pattern the device runs fastest; on the reference both are memcpy.
 */
#include "measure.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>

extern const char rl_kernel_copy_cl[]; /* kernels/copy.cl, embedded */

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_median(int (*run)(void *), void *ctx, int runs) {
  double t[1000];
  if (runs < 1 || runs > 1000) return -1;
  for (int i = 0; i < 2; i++)
    if (run(ctx)) return -1;
  for (int i = 0; i < runs; i++) {
    double t0 = cli_now();
    if (run(ctx)) return -1;
    t[i] = cli_now() - t0;
  }
  qsort(t, (size_t)runs, sizeof t[0], by_value);
  return runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
}

/* What is timed: a closure over the run's buffers. */
typedef struct job {
  enum {
    CONVERT,
    ENQUEUE_COPY,
    COPY_KERNEL,
    REFERENCE,
    MEMCPY,
    HOST_RUN, /* relayout_plans_run over host */
    HOST_EACH /* relayout_plan_run on each of host in turn */
  } kind;
  relayout_plan *plan;
  relayout_preprocess_plan *pre;
  relayout_engine *engine;
  cl_mem src, dst;
  cl_kernel copy;
  size_t copy_bytes, global, local;
  const relayout_desc *s, *d;
  const unsigned char *hs;
  unsigned char *hd;
  size_t hs_size, hd_size;
  relayout_job *host;
  int nhost;
} job;

/* Host jobs: the reference, memcpy, relayout_plans_run, relayout_plan_run.
 * A run that falls back to the reference (a note) counts as failed. */
/* Whether any of the jobs' plans fell back to the reference. */
static int fell_back(const relayout_job *host, int n) {
  for (int i = 0; i < n; i++)
    if (*relayout_plan_note(host[i].plan)) return 1;
  return 0;
}

static int run_once(void *ctx) {
  job *j = ctx;
  relayout_error err;
  int bad = 0;
  switch (j->kind) {
  case REFERENCE:
    return relayout_convert_ref(j->d, j->hd, j->hd_size, j->s, j->hs,
                                j->hs_size, &err)
               ? -1
               : 0;
  case MEMCPY: memcpy(j->hd, j->hs, j->copy_bytes); return 0;
  case HOST_RUN:
    bad = relayout_plans_run(j->host, j->nhost, &err) != RELAYOUT_OK;
    break;
  case HOST_EACH:
    for (int i = 0; i < j->nhost && !bad; i++) {
      const relayout_job *h = &j->host[i];
      bad = relayout_plan_run(h->plan, h->dst, h->dst_size, h->src, h->src_size,
                              &err) != RELAYOUT_OK ||
            *relayout_plan_note(h->plan);
    }
    break;
  default: return -1; /* device jobs run in batches */
  }
  return bad || fell_back(j->host, j->nhost) ? -1 : 0;
}

/* Device jobs, one or many, of one kind: enqueued back to back and waited
 * on once. */
typedef struct batch {
  job *jobs;
  int n, kind;
} batch;

static int run_batch(void *ctx) {
  batch *b = ctx;
  cl_command_queue q = relayout_engine_queue(b->jobs[0].engine);
  relayout_error err;
  for (int i = 0; i < b->n; i++) {
    job *j = &b->jobs[i];
    cl_int rc = CL_SUCCESS;
    if (b->kind == CONVERT)
      rc = (j->pre ? relayout_preprocess_enqueue(j->pre, j->dst, 0, j->src, 0,
                                                 0, NULL, NULL, &err)
                   : relayout_plan_enqueue(j->plan, j->dst, 0, j->src, 0, 0,
                                           NULL, NULL, &err))
               ? CL_INVALID_OPERATION
               : CL_SUCCESS;
    else if (b->kind == ENQUEUE_COPY)
      rc = clEnqueueCopyBuffer(q, j->src, j->dst, 0, 0, j->copy_bytes, 0, NULL,
                               NULL);
    else
      rc = clEnqueueNDRangeKernel(q, j->copy, 1, NULL, &j->global, &j->local, 0,
                                  NULL, NULL);
    if (rc != CL_SUCCESS) return -1;
  }
  return clFinish(q) == CL_SUCCESS ? 0 : -1;
}

/* Times the copies over b's buffers, once its conversions' results are
 * read: clEnqueueCopyBuffer, then the copy kernel. 0, or -1. */
static int time_copies(bench_result *r, batch *b, int runs) {
  b->kind = ENQUEUE_COPY;
  r->t_enq = bench_median(run_batch, b, runs);
  b->kind = COPY_KERNEL;
  r->t_kernel = r->t_enq < 0 ? -1 : bench_median(run_batch, b, runs);
  return r->t_kernel < 0 ? -1 : 0;
}

void bench_fill(unsigned char *p, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    p[i] = (unsigned char)(0x10 + (uint64_t)(i * 131 + 7) % 48);
}

int bench_is_gpu(relayout_engine *e) {
  cl_context ctx = relayout_engine_context(e);
  cl_device_id dev;
  cl_device_type type = 0;
  if (!ctx ||
      clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL) ||
      clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof type, &type, NULL))
    return 0;
  return (type & CL_DEVICE_TYPE_GPU) != 0;
}

/* The bytes the copy peers move: the smaller side, in 16-byte steps. */
static int64_t copy_size(int64_t src_bytes, int64_t dst_bytes) {
  return (src_bytes < dst_bytes ? src_bytes : dst_bytes) / 16 * 16;
}

/* kernels/copy.cl built for the engine's device, or NULL. */
static cl_program copy_program(relayout_engine *e) {
  cl_context ctx = relayout_engine_context(e);
  cl_device_id dev;
  const char *text = rl_kernel_copy_cl;
  cl_int rc;
  cl_program p = clCreateProgramWithSource(ctx, 1, &text, NULL, &rc);
  clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof dev, &dev, NULL);
  if (rc != CL_SUCCESS || clBuildProgram(p, 1, &dev, "", NULL, NULL)) {
    if (p) clReleaseProgram(p);
    return NULL;
  }
  return p;
}

/* Opens a device job: buffers for its source (holding `in`) and poisoned
 * destination, and the copy kernel that suits the device between them,
 * launched as relayout's kernels are. 0, or -1 (job_close frees what was
 * made). */
static int job_open(job *j, relayout_engine *e, cl_program copy,
                    const unsigned char *in, int64_t src_bytes,
                    int64_t dst_bytes) {
  cl_context ctx = relayout_engine_context(e);
  cl_command_queue q = relayout_engine_queue(e);
  const unsigned char poison = 0xA5;
  int gpu = bench_is_gpu(e);
  size_t per_item = gpu ? 1 : 64; /* 16-byte steps each (RL_COPY_CHUNK) */
  cl_int rc;
  j->engine = e;
  j->copy_bytes = (size_t)copy_size(src_bytes, dst_bytes);
  j->src = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)src_bytes, NULL, &rc);
  j->dst = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)dst_bytes, NULL, &rc);
  if (!j->src || !j->dst ||
      clEnqueueWriteBuffer(q, j->src, CL_TRUE, 0, (size_t)src_bytes, in, 0,
                           NULL, NULL) != CL_SUCCESS ||
      clEnqueueFillBuffer(q, j->dst, &poison, 1, 0, (size_t)dst_bytes, 0, NULL,
                          NULL) != CL_SUCCESS ||
      !(j->copy = clCreateKernel(copy, gpu ? "rl_copy" : "rl_copy_chunk", &rc)))
    return -1;
  cl_long n = (cl_long)(j->copy_bytes / 16);
  clSetKernelArg(j->copy, 0, sizeof j->src, &j->src);
  clSetKernelArg(j->copy, 1, sizeof j->dst, &j->dst);
  clSetKernelArg(j->copy, 2, sizeof n, &n);
  size_t items = (j->copy_bytes / 16 + per_item - 1) / per_item;
  j->local = relayout_engine_group_size(e, (int64_t)items);
  j->global = (items + j->local - 1) / j->local * j->local;
  return 0;
}

static void job_close(job *j) {
  if (j->copy) clReleaseKernel(j->copy);
  if (j->src) clReleaseMemObject(j->src);
  if (j->dst) clReleaseMemObject(j->dst);
}

/* The reference engine: the reference, into a poisoned buffer, against
 * memcpy, in host memory. */
static int measure_host(bench_result *r, const bench_shape *x,
                        const relayout_desc *s, const relayout_desc *d,
                        int runs, int *same) {
  size_t size = (size_t)x->dst_bytes;
  job j = {.s = s,
           .d = d,
           .hs = x->in,
           .hs_size = (size_t)x->src_bytes,
           .hd_size = size};
  unsigned char *result = malloc(size), *scratch = malloc(size);
  int rc = -1;
  *r = (bench_result){.src_bytes = x->src_bytes,
                      .dst_bytes = x->dst_bytes,
                      .copy_bytes = copy_size(x->src_bytes, x->dst_bytes)};
  j.copy_bytes = (size_t)r->copy_bytes;
  if (result && scratch) {
    memset(result, 0xA5, size);
    j.hd = result;
    j.kind = REFERENCE;
    r->t_conv = bench_median(run_once, &j, runs);
    *same = !memcmp(result, x->ref, size);
    j.hd = scratch; /* memcpy leaves the result alone */
    j.kind = MEMCPY;
    r->t_enq = r->t_kernel =
        r->t_conv < 0 ? -1 : bench_median(run_once, &j, runs);
    rc = r->t_enq < 0 ? -1 : 0;
  }
  free(result);
  free(scratch);
  return rc;
}

int bench_measure(bench_result *r, relayout_engine *e, const bench_shape *x,
                  const relayout_desc *s, const relayout_desc *d, int runs,
                  int *same) {
  bench_shape one = *x;
  one.count = 1;
  return relayout_engine_context(e)
             ? bench_measure_batch(r, e, &one, 1, runs, same)
             : measure_host(r, x, s, d, runs, same);
}

int bench_measure_batch(bench_result *r, relayout_engine *e,
                        const bench_shape *shapes, int n, int runs, int *same) {
  int total = 0, rc = -1;
  for (int i = 0; i < n; i++) total += shapes[i].count;
  job *jobs = calloc((size_t)total, sizeof *jobs);
  cl_program copy = relayout_engine_context(e) ? copy_program(e) : NULL;
  batch b = {.jobs = jobs, .n = 0};
  memset(r, 0, sizeof *r);
  *same = 1;
  for (int i = 0; jobs && copy && i < n; i++)
    for (int c = 0; c < shapes[i].count; c++, b.n++) {
      jobs[b.n].plan = shapes[i].plan;
      jobs[b.n].pre = shapes[i].pre;
      if (job_open(&jobs[b.n], e, copy, shapes[i].in, shapes[i].src_bytes,
                   shapes[i].dst_bytes))
        goto done;
      r->src_bytes += shapes[i].src_bytes;
      r->dst_bytes += shapes[i].dst_bytes;
      r->copy_bytes += (int64_t)jobs[b.n].copy_bytes;
    }
  if (!jobs || !copy) goto done;
  b.kind = CONVERT;
  if ((r->t_conv = bench_median(run_batch, &b, runs)) < 0) goto done;
  for (int i = 0, k = 0; i < n; i++) { /* every tensor's result */
    size_t size = (size_t)shapes[i].dst_bytes;
    unsigned char *out = malloc(size);
    if (!out) goto done;
    for (int c = 0; c < shapes[i].count; c++, k++)
      *same &=
          clEnqueueReadBuffer(relayout_engine_queue(e), jobs[k].dst, CL_TRUE, 0,
                              size, out, 0, NULL, NULL) == CL_SUCCESS &&
          !memcmp(out, shapes[i].ref, size);
    free(out);
  }
  rc = time_copies(r, &b, runs);
done:
  for (int i = 0; jobs && i < total; i++) job_close(&jobs[i]);
  free(jobs);
  if (copy) clReleaseProgram(copy);
  return rc;
}

/* Poisons every destination of jobs (0), or says whether each equals its
 * shape's reference result (1). */
static int host_results(const relayout_job *jobs, const bench_shape *shapes,
                        int n, int check) {
  int same = 1;
  for (int i = 0, k = 0; i < n; i++)
    for (int c = 0; c < shapes[i].count; c++, k++)
      if (check)
        same &= !memcmp(jobs[k].dst, shapes[i].ref, jobs[k].dst_size);
      else
        memset(jobs[k].dst, 0xA5, jobs[k].dst_size);
  return same;
}

int bench_host_batch(const bench_shape *shapes, int n, int runs,
                     double *one_call, double *each, int *same) {
  int total = 0, rc = -1;
  for (int i = 0; i < n; i++) total += shapes[i].count;
  relayout_job *jobs = calloc((size_t)total, sizeof *jobs);
  job j = {.host = jobs, .nhost = 0};
  for (int i = 0; jobs && i < n; i++)
    for (int c = 0; c < shapes[i].count; c++, j.nhost++) {
      relayout_job *h = &jobs[j.nhost];
      unsigned char *src = cli_alloc_aligned((size_t)shapes[i].src_bytes);
      *h = (relayout_job){shapes[i].plan, NULL, (size_t)shapes[i].dst_bytes,
                          src, (size_t)shapes[i].src_bytes};
      if (!src || !(h->dst = cli_alloc_aligned(h->dst_size))) goto done;
      memcpy(src, shapes[i].in, h->src_size);
    }
  if (!jobs) goto done;
  host_results(jobs, shapes, n, 0);
  j.kind = HOST_RUN;
  if ((*one_call = bench_median(run_once, &j, runs)) < 0) goto done;
  *same = host_results(jobs, shapes, n, 1);
  if (each) {
    host_results(jobs, shapes, n, 0);
    j.kind = HOST_EACH;
    if ((*each = bench_median(run_once, &j, runs)) < 0) goto done;
    *same &= host_results(jobs, shapes, n, 1);
  }
  rc = 0;
done:
  for (int i = 0; jobs && i < total; i++) {
    free((void *)jobs[i].src);
    free(jobs[i].dst);
  }
  free(jobs);
  return rc;
}
