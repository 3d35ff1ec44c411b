/* engine.h - the OpenCL side: engines, plans and the program cache */
#ifndef RELAYOUT_ENGINE_H
#define RELAYOUT_ENGINE_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "plan.h"

typedef struct rl_program {
  struct rl_program *next;
  uint64_t key;
  char *source;
  cl_program program;
} rl_program;

struct relayout_engine {
  int reference;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
  int owns; /* context and queue are ours to release */
  char name[128], driver[128], platform[128];
  uint64_t max_alloc;
  unsigned compute_units;
  size_t max_group;
  uint64_t cache; /* the device's global memory cache, bytes (0: unknown) */
  int is_gpu;
  int host_memory; /* the device works in host memory: relayout_plan_run
                      wraps the caller's arrays instead of copying them */
  rl_program *programs;
  int built_from_source, loaded_from_disk;
};

struct relayout_plan {
  relayout_engine *engine;
  relayout_desc dst, src;
  relayout_desc moved; /* the destination as the kernel moves it: dst, or
                        * its view in wider units (rl_widen) */
  rl_layout_plan layout;
  char *source;
  cl_kernel kernel;
  cl_uint work_dims;
  size_t local[3], global[3];
  char note[RELAYOUT_ERROR_LEN];
  relayout_plan *plain; /* widened plans: the same conversion element by
                         * element, for offsets off the wider units (built
                         * on first use), or NULL */
};

/* A program for this source on the engine's device: from memory, from the
 * disk cache, or built. On a build failure returns NULL with the log's
 * start in err. */
cl_program rl_program_get(relayout_engine *e, const char *source,
                          relayout_error *err);
void rl_programs_free(relayout_engine *e);

/* split.c: the dim to run in slabs when buffers exceed the device's largest
 * allocation, max_alloc (-1: none, or a slab of it exceeds it too), and the
 * run that does it. */
int rl_split_dim(const relayout_desc *dst, const relayout_desc *src,
                 uint64_t max_alloc);
relayout_status rl_run_split(relayout_plan *p, unsigned char *dst,
                             const unsigned char *src, int dim,
                             relayout_error *note, relayout_error *err);

/* Reads the device's limits into e: largest allocation, work-group size,
 * cache, host memory. RELAYOUT_MAX_ALLOC (bytes) lowers the largest
 * allocation: how tests reach the slab path without gigabyte tensors.
 * RELAYOUT_UNIFIED=0 treats a device that works in host memory as one that
 * does not: how tests on PoCL reach the copies a discrete GPU needs. */
void rl_device_limits(relayout_engine *e);

/* The tuning variables' one reading: 1 with the value of environment
 * variable `name` in *out where it is a finite number and nothing else
 * ("64K" or "1G" is not one), else 0, and the caller keeps its default. */
int rl_env_number(const char *name, double *out);

/* run.c: enqueues the plan's work on buffers, offsets in bytes, after the
 * events in wait (*done, if not NULL, receives the completion event). */
cl_int rl_enqueue(relayout_plan *p, cl_mem dst, size_t dst_off, cl_mem src,
                  size_t src_off, cl_uint nwait, const cl_event *wait,
                  cl_event *done);

/* run.c: the work-group size for `items` work-items on e's device (the
 * bench's copy kernel uses it too, so that both spread alike). */
size_t rl_group_size(const relayout_engine *e, int64_t items);

#endif /* RELAYOUT_ENGINE_H */
