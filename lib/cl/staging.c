/* staging.c - host arrays to and from a device that does not work in host
 * memory, through pinned chunks
 *
 * A driver takes a pageable array through a bounce buffer of its own, at a
 * fraction of the link's pace. The engine keeps RL_STAGES chunks of pinned
 * memory (CL_MEM_ALLOC_HOST_PTR, mapped for the engine's life) and a queue
 * each way for the transfers: an array goes chunk by chunk, the host's copy
 * of one chunk overlapping the link's transfer of another, and transfers
 * overlapping the kernels that run on the engine's own queue.
 */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#define RL_STAGES      4
#define RL_STAGE_BYTES ((size_t)8 << 20)

struct rl_staging {
  cl_command_queue up, down;
  cl_mem buf[RL_STAGES];
  unsigned char *map[RL_STAGES];
  cl_event busy[RL_STAGES]; /* the chunk's last transfer, or NULL */
  size_t chunk;
  int next; /* the chunk taken next, round the ring */
};

void rl_staging_free(relayout_engine *e) {
  rl_staging *s = e->staging;
  if (!s) return;
  if (s->up) clFinish(s->up);
  if (s->down) clFinish(s->down);
  for (int i = 0; i < RL_STAGES; i++) {
    if (s->busy[i]) clReleaseEvent(s->busy[i]);
    if (s->map[i])
      clEnqueueUnmapMemObject(s->up, s->buf[i], s->map[i], 0, NULL, NULL);
  }
  if (s->up) clFinish(s->up);
  for (int i = 0; i < RL_STAGES; i++)
    if (s->buf[i]) clReleaseMemObject(s->buf[i]);
  if (s->up) clReleaseCommandQueue(s->up);
  if (s->down) clReleaseCommandQueue(s->down);
  free(s);
  e->staging = NULL;
}

/* The engine's chunks, made on first need; NULL where the device works in
 * host memory, or the chunks cannot be had (the driver's copies then). */
static rl_staging *staging(relayout_engine *e) {
  if (e->host_memory || e->staging_refused) return NULL;
  if (e->staging) return e->staging;
  rl_staging *s = e->staging = calloc(1, sizeof *s);
  cl_int rc = s ? CL_SUCCESS : CL_OUT_OF_HOST_MEMORY;
  if (s) {
    s->chunk = e->stage_bytes ? e->stage_bytes : RL_STAGE_BYTES;
    s->up = clCreateCommandQueue(e->context, e->device, 0, &rc);
  }
  if (rc == CL_SUCCESS)
    s->down = clCreateCommandQueue(e->context, e->device, 0, &rc);
  for (int i = 0; i < RL_STAGES && rc == CL_SUCCESS; i++) {
    s->buf[i] =
        clCreateBuffer(e->context, CL_MEM_ALLOC_HOST_PTR, s->chunk, NULL, &rc);
    if (rc == CL_SUCCESS)
      s->map[i] = clEnqueueMapBuffer(s->up, s->buf[i], CL_TRUE,
                                     CL_MAP_READ | CL_MAP_WRITE, 0, s->chunk, 0,
                                     NULL, NULL, &rc);
  }
  if (rc != CL_SUCCESS) {
    if (s) rl_staging_free(e);
    e->staging_refused = 1;
  }
  return e->staging;
}

/* The next chunk round the ring, once its last transfer is over. */
static int take(rl_staging *s, cl_int *rc) {
  int i = s->next;
  s->next = (i + 1) % RL_STAGES;
  if (s->busy[i]) {
    *rc = clWaitForEvents(1, &s->busy[i]);
    clReleaseEvent(s->busy[i]);
    s->busy[i] = NULL;
  }
  return i;
}

static size_t part(size_t n, size_t at, size_t chunk) {
  return n - at < chunk ? n - at : chunk;
}

cl_int rl_stage_up(relayout_engine *e, cl_mem buf, const void *src, size_t n,
                   cl_event *done) {
  *done = NULL;
  rl_staging *s = staging(e);
  if (!s)
    return clEnqueueWriteBuffer(e->queue, buf, CL_FALSE, 0, n, src, 0, NULL,
                                NULL);
  cl_int rc = CL_SUCCESS;
  int last = -1;
  for (size_t at = 0; at < n && rc == CL_SUCCESS; at += s->chunk) {
    size_t k = part(n, at, s->chunk);
    int i = take(s, &rc);
    if (rc != CL_SUCCESS) break;
    memcpy(s->map[i], (const unsigned char *)src + at, k);
    rc = clEnqueueWriteBuffer(s->up, buf, CL_FALSE, at, k, s->map[i], 0, NULL,
                              &s->busy[i]);
    if (rc == CL_SUCCESS) rc = clFlush(s->up), last = i;
  }
  /* the up queue is in order: its last transfer ends the array's */
  if (rc == CL_SUCCESS && last >= 0 &&
      clRetainEvent(s->busy[last]) == CL_SUCCESS)
    *done = s->busy[last];
  return rc;
}

cl_int rl_stage_down(relayout_engine *e, void *dst, cl_mem buf, size_t n,
                     cl_event after) {
  rl_staging *s = staging(e);
  if (!s)
    return clEnqueueReadBuffer(e->queue, buf, CL_FALSE, 0, n, dst, 0, NULL,
                               NULL);
  size_t chunks = (n + s->chunk - 1) / s->chunk, issued = 0;
  clFlush(e->queue);   /* the kernel these wait for */
  int first = s->next; /* chunk c lies in map[(first + c) % RL_STAGES] */
  cl_int rc = CL_SUCCESS;
  for (size_t c = 0; c < chunks && rc == CL_SUCCESS; c++) {
    for (; issued < chunks && issued < c + RL_STAGES && rc == CL_SUCCESS;
         issued++) {
      int i = take(s, &rc);
      if (rc != CL_SUCCESS) break;
      size_t at = issued * s->chunk;
      rc = clEnqueueReadBuffer(s->down, buf, CL_FALSE, at,
                               part(n, at, s->chunk), s->map[i], after ? 1 : 0,
                               after ? &after : NULL, &s->busy[i]);
      if (rc == CL_SUCCESS) rc = clFlush(s->down);
    }
    int i = (first + (int)(c % RL_STAGES)) % RL_STAGES;
    if (rc == CL_SUCCESS) rc = clWaitForEvents(1, &s->busy[i]);
    if (rc == CL_SUCCESS)
      memcpy((unsigned char *)dst + c * s->chunk, s->map[i],
             part(n, c * s->chunk, s->chunk));
  }
  return rc;
}

void rl_staging_drain(relayout_engine *e) {
  if (!e->staging) return;
  clFinish(e->staging->up);
  clFinish(e->staging->down);
}
