/* engine.h - the OpenCL side: engines, plans and the program cache */
#ifndef RELAYOUT_ENGINE_H
#define RELAYOUT_ENGINE_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "plan.h"

#include <pthread.h>

#define RL_MAX_BUILDERS 16
typedef struct rl_build rl_build;
typedef struct rl_staging rl_staging;
/* A plan's launch, for a build to make its kernel's machine code: the
 * kernel, its grid and work-group, the buffers' sizes and a per-channel
 * cast's table of channels (its fifth argument; NULL: none), which the
 * build holds a reference to. */
typedef struct rl_warm {
  char kernel[32];
  cl_uint dims;
  size_t global[3], local[3], src_bytes, dst_bytes;
  cl_mem channels;
} rl_warm;

typedef struct rl_program {
  struct rl_program *next;
  uint64_t key;
  char *source;
  cl_program program;
  int unstored; /* built, its binary not yet in the disk cache */
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
  int host_memory;      /* the device works in host memory: relayout_plan_run
                           wraps the caller's arrays instead of copying them */
  rl_staging *staging;  /* else the pinned chunks host arrays go through
                           (staging.c; NULL until first needed) */
  int staging_refused;  /* ... which the driver would not give */
  size_t stage_bytes;   /* a chunk's bytes (the options'; 0: the default) */
  char cache_dir[4096]; /* the disk cache ("": none), from the options */
  uint64_t cache_bytes; /* its bound */
  relayout_families families;
  int64_t stream_from; /* CPU plans stream into destinations this large
                          (bytes; 0: never) */
  char note[RELAYOUT_ERROR_LEN]; /* why "auto" runs on the reference */
  relayout_kernels kernels;      /* which kernels plans run (the options') */
  int build_threads;             /* background builds at once (0: none) */
  int finish_builds;      /* queued builds outlive their plans (the options') */
  cl_program generic[13]; /* the generic kernels per width (4 to 64 bits)
                           * and kernel, built on first need */
  int generic_tried[13];  /* ... and failed, once tried, if NULL */
  /* the lock guards what builder threads share with the engine's user: */
  pthread_mutex_t lock;
  pthread_cond_t changed; /* a build queued, finished, or the engine stops */
  rl_program *programs;
  int unstored; /* programs whose binaries a builder is to store */
  int launched; /* a kernel of the engine's has been enqueued */
  int built_from_source, loaded_from_disk;
  rl_build *waiting; /* builds not started, oldest first */
  int building;      /* builds under way */
  pthread_t builders[RL_MAX_BUILDERS];
  int nbuilders, stopping;
  pthread_t user; /* the thread inside a call on the engine, while depth */
  int depth;
};

struct relayout_plan {
  relayout_engine *engine;
  rl_desc dst, src;
  rl_desc moved, moved_src; /* the two as the kernel moves them: dst and
                             * src, or their views in wider units (rl_widen) */
  rl_layout_plan layout;
  char *source;
  cl_kernel kernel;  /* the specialised kernel, once it is there */
  rl_build *build;   /* its build under way in the background, or NULL */
  cl_kernel generic; /* the generic kernel, while kernel is NULL */
  cl_mem generic_args;
  cl_mem channels; /* a per-channel cast's table (kernels/cast.cl), or NULL */
  void *qcopy;     /* the plan's copy of the per-channel arrays dst or src
                    * point to, or NULL */
  size_t generic_local, generic_global;
  cl_uint work_dims;
  size_t local[3], global[3];
  char note[RELAYOUT_ERROR_LEN];     /* why its kernel is the reference */
  char run_note[RELAYOUT_ERROR_LEN]; /* why its last run fell back */
  relayout_plan *plain; /* widened plans: the same conversion element by
                         * element, for offsets off the wider units (built
                         * on first use), or NULL */
};

/* cache.c: a program for this source on the engine's device: from memory,
 * from the disk cache (e->cache_dir), or (build_it) built. NULL when it is
 * in neither cache and not built, or its build failed (err: the log's
 * first error line). Built with build_it 1, its binary is stored on disk by
 * a builder thread (rl_builds_store) or when the engine is freed; with 2 (a
 * builder's own builds), before it returns. Safe from any thread. */
cl_program rl_program_get(relayout_engine *e, const char *source, int build_it,
                          relayout_error *err);
/* cache.c: a program whose binary is still to be stored, taken (NULL:
 * none; e->lock held); a program's binary stored into the disk cache. */
rl_program *rl_program_unstored(relayout_engine *e);
void rl_program_store(relayout_engine *e, const rl_program *p);
void rl_programs_free(relayout_engine *e);

/* generic.c: the plan's generic kernel, its arguments set (0, why filled,
 * when it cannot be had); its release. */
int rl_generic_setup(relayout_plan *p, relayout_error *why);
void rl_generic_release(relayout_plan *p);

/* builds.c: a background build of this source (NULL: none could start, the
 * caller builds it), its kernel launched once as `warm` says on CPU
 * devices (kernel "": not); its state (1 built, with the program; -1 failed,
 * with why; 0 not yet), waiting for it with `wait`; the plan's release of it
 * (dropped if not started); the builder threads stopped and joined. */
rl_build *rl_build_start(relayout_engine *e, const char *source,
                         const rl_warm *warm);
/* builds.c: a kernel enqueued; builds queued before the engine's first
 * launch are held until then: a first launch on PoCL compiles for its
 * work-group size, and waits while another thread compiles. */
void rl_build_go(relayout_engine *e);
/* builds.c: a builder started, where none runs, for programs built on the
 * caller's thread whose binaries are still to be stored. */
void rl_builds_store(relayout_engine *e);
int rl_build_poll(relayout_engine *e, rl_build *b, int wait,
                  cl_program *program, relayout_error *why);
void rl_build_release(relayout_engine *e, rl_build *b);
void rl_builds_stop(relayout_engine *e);

/* slabs.c: the dim to run in slabs when buffers exceed the device's largest
 * allocation, max_alloc (-1: none, or a slab of it exceeds it too); how
 * many positions of it a slab holds (at least 1 where rl_split_dim found
 * it); the job of the slab of `count` positions from `at`, with a plan of
 * its own (the caller frees it). */
int rl_split_dim(const rl_desc *dst, const rl_desc *src, uint64_t max_alloc);
int64_t rl_slab_count(const relayout_plan *p, int dim);
relayout_status rl_slab_job(relayout_job *j, relayout_plan *p,
                            unsigned char *dst, const unsigned char *src,
                            int dim, int64_t at, int64_t count,
                            relayout_error *err);

/* devices.c: the OpenCL devices of every platform, in the order indexes
 * use; one's description; the one `spec` names (-1: the reference, with
 * the reason in note where "auto" found none). */
#define RL_MAX_DEVICES 64
typedef struct rl_found {
  cl_platform_id platform[RL_MAX_DEVICES];
  cl_device_id device[RL_MAX_DEVICES];
  int n;
  cl_int error; /* clGetPlatformIDs's */
} rl_found;
void rl_enumerate(rl_found *f);
void rl_devices_lock(void); /* around enumerating and opening devices */
void rl_devices_unlock(void);

/* engine.c: a call's hold on the engine, refused (RELAYOUT_ERR_BUSY) while
 * another thread holds it; released by rl_engine_leave. */
relayout_status rl_engine_enter(relayout_engine *e, relayout_error *err);
void rl_engine_leave(relayout_engine *e);
/* engine.c: whether the engine runs the CPU devices' kernels: its device's
 * kind's, unless its options force the other's. */
int rl_engine_cpu_kernels(const relayout_engine *e);
void rl_device_info(relayout_device_info *out, cl_platform_id p,
                    cl_device_id d);
relayout_status rl_choose_device(int *index, const rl_found *f,
                                 const char *spec, char *note, size_t room,
                                 relayout_error *err);

/* host_run.c: runs jobs as relayout_plans_run does, each fallback recorded
 * in its plan's run_note, which the caller clears where a run begins (the
 * slabs of one run keep theirs). */
relayout_status rl_run_jobs(const relayout_job *jobs, int njobs,
                            relayout_error *err);

/* staging.c: an upload of n bytes of src into buf, enqueued, with *done
 * the event its kernel waits for (NULL: none needed, the engine's queue
 * orders it); a download of buf's n bytes into dst once `after` (NULL:
 * none) has ended, over when it returns where the engine has staging (else
 * enqueued on its queue); both through the pinned chunks on a device that
 * does not work in host memory, else the driver's own copies. Drain: every
 * transfer ended; free: the chunks and their queues released. */
cl_int rl_stage_up(relayout_engine *e, cl_mem buf, const void *src, size_t n,
                   cl_event *done);
cl_int rl_stage_down(relayout_engine *e, void *dst, cl_mem buf, size_t n,
                     cl_event after);
void rl_staging_drain(relayout_engine *e);
void rl_staging_free(relayout_engine *e);

/* plans.c: relayout_plan_create on descriptors checked to be a pair. */
relayout_status rl_plan_create(relayout_plan **out, relayout_engine *engine,
                               const rl_desc *dst, const rl_desc *src,
                               relayout_error *err);
/* plans.c: enqueues the plan's work on buffers, offsets in bytes, after the
 * events in wait (*done, if not NULL, receives the completion event). */
cl_int rl_enqueue(relayout_plan *p, cl_mem dst, size_t dst_off, cl_mem src,
                  size_t src_off, cl_uint nwait, const cl_event *wait,
                  cl_event *done);

#endif /* RELAYOUT_ENGINE_H */
