/* host_run.c - plans run on host arrays, one or many with one wait
 *
 * A batch's jobs are checked first, all of them, so that a bad one fails the
 * call before anything is written. Then consecutive jobs the device can run
 * form groups: each group's uploads, kernels and downloads are enqueued back
 * to back and waited on once (on a device that does not work in host memory,
 * through the engine's pinned chunks: staging.c). A job the device cannot
 * take (a reference plan, a buffer beyond the largest allocation) runs
 * alone.
 */
#include "engine.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "job 3: " before err's message in a batch of more than one. */
static relayout_status in_job(relayout_error *err, relayout_status s, int i,
                              int njobs) {
  if (s && err && njobs > 1) {
    char m[RELAYOUT_ERROR_LEN];
    memcpy(m, err->message, sizeof m);
    rl_fail(err, s, "job %d: %s", i, m);
  }
  return s;
}

static int64_t bytes_of(const rl_desc *d) {
  int64_t n;
  rl_desc_size_bytes(&n, d, NULL);
  return n;
}

/* The bytes a job reads or writes: its array, or a destination. */
typedef struct span {
  uintptr_t lo, hi;
  int job, is_dst;
} span;

static int by_start(const void *a, const void *b) {
  const span *x = a, *y = b;
  return (x->lo > y->lo) - (x->lo < y->lo);
}

/* No destination overlaps another job's array or its own source: sorted by
 * start, an array overlaps an earlier one exactly when it starts before the
 * furthest end so far (of any array, for a destination; of a destination,
 * for a source). */
static relayout_status check_overlaps(const relayout_job *jobs, int njobs,
                                      relayout_error *err) {
  span *s = malloc(2 * (size_t)njobs * sizeof *s);
  if (!s) return rl_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  for (int i = 0; i < njobs; i++) {
    uintptr_t d = (uintptr_t)jobs[i].dst, r = (uintptr_t)jobs[i].src;
    s[2 * i] = (span){d, d + (uintptr_t)bytes_of(&jobs[i].plan->dst), i, 1};
    s[2 * i + 1] = (span){r, r + (uintptr_t)bytes_of(&jobs[i].plan->src), i, 0};
  }
  qsort(s, 2 * (size_t)njobs, sizeof *s, by_start);
  const span *any = NULL, *dst = NULL, *hit = NULL, *k = NULL;
  for (size_t i = 0; i < 2 * (size_t)njobs && !hit; i++) {
    k = &s[i];
    if (k->is_dst && any && k->lo < any->hi) hit = any;
    if (!k->is_dst && dst && k->lo < dst->hi) hit = dst;
    if (!any || k->hi > any->hi) any = k;
    if (k->is_dst && (!dst || k->hi > dst->hi)) dst = k;
  }
  relayout_status st = RELAYOUT_OK;
  if (hit && njobs == 1)
    st = rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                 "the destination overlaps the source");
  else if (hit)
    st = rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                 "job %d's %s overlaps job %d's %s: a destination must not "
                 "overlap any array of the batch",
                 k->job, k->is_dst ? "destination" : "source", hit->job,
                 hit->is_dst ? "destination" : "source");
  free(s);
  return st;
}

static relayout_status check_jobs(const relayout_job *jobs, int njobs,
                                  relayout_error *err) {
  if (njobs < 0) return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "%d jobs", njobs);
  if (njobs && !jobs) return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL jobs");
  for (int i = 0; i < njobs; i++) {
    const relayout_job *j = &jobs[i];
    if (!j->plan || !j->dst || !j->src)
      return in_job(err, rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument"),
                    i, njobs);
    if (j->plan->engine != jobs[0].plan->engine)
      return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                     "job %d's plan belongs to another engine than job 0's", i);
    relayout_status s = rl_check_sizes(&j->plan->dst, j->dst_size,
                                       &j->plan->src, j->src_size, err);
    if (s) return in_job(err, s, i, njobs);
  }
  return njobs ? check_overlaps(jobs, njobs, err) : RELAYOUT_OK;
}

/* Whether an array goes to the device as it is: a device that works in host
 * memory is given the array itself where it is aligned to the unit the
 * kernel moves (an element, or a wider unit: rl_widen), as the kernel's
 * accesses need; no copy, the kernel reads or writes the caller's memory in
 * place. */
static int in_place(const relayout_plan *p, const void *host, int dst) {
  return p->engine->host_memory &&
         (uintptr_t)host % rl_unit(dst ? p->moved.dtype : p->moved_src.dtype) ==
             0;
}

/* Device-side bytes a job takes (0 where both arrays are used in place);
 * -1 when it cannot run in a group. */
static int64_t device_bytes(const relayout_job *j) {
  const relayout_plan *p = j->plan;
  int64_t sb = bytes_of(&p->src), db = bytes_of(&p->dst);
  if (p->layout.family == RL_FAMILY_REFERENCE ||
      (uint64_t)sb > p->engine->max_alloc ||
      (uint64_t)db > p->engine->max_alloc)
    return -1;
  return (in_place(p, j->src, 0) ? 0 : sb) + (in_place(p, j->dst, 1) ? 0 : db);
}

/* Enqueues one job: its buffers (mem[0] source, mem[1] destination), the
 * upload of a source not used in place, and the kernel (*ran: its event). */
static cl_int enqueue_job(const relayout_job *j, cl_mem *mem, cl_event *ran) {
  relayout_plan *p = j->plan;
  const relayout_engine *e = p->engine;
  size_t sb = (size_t)bytes_of(&p->src), db = (size_t)bytes_of(&p->dst);
  int src_here = in_place(p, j->src, 0), dst_here = in_place(p, j->dst, 1);
  cl_int rc;
  mem[0] = clCreateBuffer(
      e->context, CL_MEM_READ_ONLY | (src_here ? CL_MEM_USE_HOST_PTR : 0), sb,
      src_here ? (void *)j->src : NULL, &rc);
  if (rc != CL_SUCCESS) return rc;
  mem[1] = clCreateBuffer(
      e->context, CL_MEM_WRITE_ONLY | (dst_here ? CL_MEM_USE_HOST_PTR : 0), db,
      dst_here ? j->dst : NULL, &rc);
  cl_event up = NULL;
  if (rc == CL_SUCCESS && !src_here)
    rc = rl_stage_up(p->engine, mem[0], j->src, sb, &up);
  if (rc == CL_SUCCESS)
    rc = rl_enqueue(p, mem[1], 0, mem[0], 0, up ? 1 : 0, up ? &up : NULL, ran);
  if (up) clReleaseEvent(up);
  return rc;
}

/* Enqueues the way a job's result reaches its array: a download, or, for a
 * destination used in place, a map and unmap, which make the kernel's
 * writes visible in it. */
static cl_int enqueue_result(const relayout_job *j, cl_mem dst, cl_event ran) {
  relayout_plan *p = j->plan;
  cl_command_queue q = p->engine->queue;
  size_t db = (size_t)bytes_of(&p->dst);
  cl_int rc;
  if (!in_place(p, j->dst, 1))
    return rl_stage_down(p->engine, j->dst, dst, db, ran);
  void *m = clEnqueueMapBuffer(q, dst, CL_FALSE, CL_MAP_READ, 0, db, 0, NULL,
                               NULL, &rc);
  return rc == CL_SUCCESS ? clEnqueueUnmapMemObject(q, dst, m, 0, NULL, NULL)
                          : rc;
}

/* Runs n jobs on the device with one wait. */
static cl_int run_group(const relayout_job *jobs, int n) {
  relayout_engine *e = jobs[0].plan->engine;
  cl_command_queue q = e->queue;
  cl_mem *mem = calloc(2 * (size_t)n, sizeof *mem);
  cl_event *ran = calloc((size_t)n, sizeof *ran);
  if (!mem || !ran) {
    free(mem);
    free(ran);
    return CL_OUT_OF_HOST_MEMORY;
  }
  cl_int rc = CL_SUCCESS;
  for (int i = 0; i < n && rc == CL_SUCCESS; i++)
    rc = enqueue_job(&jobs[i], &mem[2 * i], &ran[i]);
  for (int i = 0; i < n && rc == CL_SUCCESS; i++)
    rc = enqueue_result(&jobs[i], mem[2 * i + 1], ran[i]);
  /* The caller's arrays are handed back (and the reference may write them)
   * only once no command uses them: where clFinish fails, the commands may
   * still run, so wait for a marker behind them too. */
  cl_event behind = NULL;
  if (clEnqueueMarkerWithWaitList(q, 0, NULL, &behind) != CL_SUCCESS)
    behind = NULL;
  cl_int waited = clFinish(q);
  if (waited != CL_SUCCESS && behind) clWaitForEvents(1, &behind);
  if (behind) clReleaseEvent(behind);
  rl_staging_drain(e);
  for (int i = 0; i < n; i++)
    if (ran[i]) clReleaseEvent(ran[i]);
  for (int i = 0; i < 2 * n; i++)
    if (mem[i]) clReleaseMemObject(mem[i]);
  free(mem);
  free(ran);
  return rc == CL_SUCCESS ? waited : rc;
}

/* A job the device cannot take in a group: the reference, or slabs. */
/* A plan's job run slab by slab along dim, each slab's plan run as a job. */
static relayout_status run_slabs(const relayout_job *whole, int dim,
                                 relayout_error *err) {
  relayout_plan *p = whole->plan;
  int64_t per = rl_slab_count(p, dim), n = p->dst.dims[dim];
  for (int64_t at = 0; at < n; at += per) {
    relayout_job j;
    relayout_status st = rl_slab_job(&j, p, whole->dst, whole->src, dim, at,
                                     n - at < per ? n - at : per, err);
    if (!st) st = rl_run_jobs(&j, 1, err);
    /* a slab that fell back: the first reason stays the run's */
    if (!st && *relayout_plan_note(j.plan) && !*p->run_note)
      memcpy(p->run_note, relayout_plan_note(j.plan), sizeof p->run_note);
    relayout_plan_free(j.plan);
    if (st) return st;
  }
  return RELAYOUT_OK;
}

static relayout_status run_alone(const relayout_job *j, relayout_error *err) {
  relayout_plan *p = j->plan;
  if (p->layout.family != RL_FAMILY_REFERENCE) {
    int dim = rl_split_dim(&p->dst, &p->src, p->engine->max_alloc);
    if (dim >= 0) return run_slabs(j, dim, err);
    snprintf(p->run_note, sizeof p->run_note,
             "a buffer beyond the device's largest allocation, with no dim to "
             "split it along (outermost in both layouts, in whole-byte slabs "
             "within that allocation): the scalar reference did the work");
  }
  return rl_convert_ref(&p->dst, j->dst, j->dst_size, &p->src, j->src,
                        j->src_size, err);
}

/* Runs jobs [first, first + n) as one group; on a device failure the
 * reference does their work and each job's plan notes it. */
static relayout_status run_or_fall_back(const relayout_job *jobs, int first,
                                        int n, int njobs, relayout_error *err) {
  cl_int rc = run_group(jobs + first, n);
  if (rc == CL_SUCCESS) return RELAYOUT_OK;
  char which[64];
  if (njobs == 1)
    snprintf(which, sizeof which, "the conversion");
  else if (n == 1)
    snprintf(which, sizeof which, "job %d", first);
  else
    snprintf(which, sizeof which, "jobs %d-%d", first, first + n - 1);
  for (int i = first; i < first + n; i++)
    snprintf(jobs[i].plan->run_note, sizeof jobs[i].plan->run_note,
             "%s failed on %s (OpenCL error %d): the scalar reference did the "
             "work",
             which, jobs[first].plan->engine->name, rc);
  for (int i = first; i < first + n; i++) {
    const relayout_job *j = &jobs[i];
    relayout_status s = rl_convert_ref(&j->plan->dst, j->dst, j->dst_size,
                                       &j->plan->src, j->src, j->src_size, err);
    if (s) return in_job(err, s, i, njobs);
  }
  return RELAYOUT_OK;
}

relayout_status rl_run_jobs(const relayout_job *jobs, int njobs,
                            relayout_error *err) {
  relayout_status s = check_jobs(jobs, njobs, err);
  for (int i = 0; i < njobs && !s;) {
    const relayout_engine *e = jobs[i].plan->engine;
    int64_t held = device_bytes(&jobs[i]);
    int n = 1;
    if (held < 0) {
      s = in_job(err, run_alone(&jobs[i], err), i, njobs);
    } else {
      for (int64_t more;
           i + n < njobs && (more = device_bytes(&jobs[i + n])) >= 0 &&
           (uint64_t)(held + more) <= e->max_alloc;
           n++)
        held += more;
      s = run_or_fall_back(jobs, i, n, njobs, err);
    }
    i += n;
  }
  return s;
}

relayout_status relayout_plans_run(const relayout_job *jobs, int njobs,
                                   relayout_error *err) {
  relayout_engine *e = NULL;
  for (int i = 0; jobs && i < njobs; i++)
    if (jobs[i].plan) {
      jobs[i].plan->run_note[0] = 0;
      if (!e) e = jobs[i].plan->engine;
    }
  relayout_status s = e ? rl_engine_enter(e, err) : RELAYOUT_OK;
  if (s) return s;
  s = rl_run_jobs(jobs, njobs, err);
  if (e) rl_engine_leave(e);
  return s;
}

relayout_status relayout_plan_run(relayout_plan *p, void *dst, size_t dst_size,
                                  const void *src, size_t src_size,
                                  relayout_error *err) {
  relayout_job j = {p, dst, dst_size, src, src_size};
  return relayout_plans_run(&j, 1, err);
}
