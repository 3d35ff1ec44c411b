/* engine.c - an engine: a device (or the reference), its context and queue,
 * made from the caller's options or around the caller's OpenCL objects */
#include "engine.h"
#include "relayout_cl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The caller's options over the defaults (all zero), for as many fields as
 * the caller's struct has: one built against an older header has fewer. */
static relayout_engine_options options_of(const relayout_engine_options *o) {
  relayout_engine_options all = {.size = sizeof all};
  if (o && o->size)
    memcpy(&all, o, o->size < sizeof all ? o->size : sizeof all);
  all.size = sizeof all;
  return all;
}

static relayout_status check_options(const relayout_engine_options *o,
                                     relayout_error *err) {
  if ((unsigned)o->families > RELAYOUT_FAMILIES_CPU)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "families %d is none of them",
                   (int)o->families);
  if (o->staging_bytes < 0)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "staging_bytes %lld",
                   (long long)o->staging_bytes);
  if ((unsigned)o->kernels > RELAYOUT_KERNELS_CACHED)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "kernels %d is none of them",
                   (int)o->kernels);
  return RELAYOUT_OK;
}

/* The device's limits (largest allocation, work-group size, cache, host
 * memory) and the options' hold on them and on the plans. */
static void set_up(relayout_engine *e, const relayout_engine_options *o) {
  cl_ulong alloc = 0, cache = 0;
  cl_bool unified = CL_FALSE;
  clGetDeviceInfo(e->device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified,
                  &unified, NULL);
  e->host_memory = unified == CL_TRUE && !o->copies;
  e->stage_bytes = (size_t)o->staging_bytes;
  clGetDeviceInfo(e->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof alloc, &alloc,
                  NULL);
  clGetDeviceInfo(e->device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof cache,
                  &cache, NULL);
  clGetDeviceInfo(e->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof e->max_group,
                  &e->max_group, NULL);
  e->max_alloc = alloc;
  if (o->max_alloc > 0 && (uint64_t)o->max_alloc < e->max_alloc)
    e->max_alloc = (uint64_t)o->max_alloc;
  e->cache = cache;
  if (o->cache_dir)
    snprintf(e->cache_dir, sizeof e->cache_dir, "%s", o->cache_dir);
  e->cache_bytes =
      o->cache_bytes > 0 ? (uint64_t)o->cache_bytes : (uint64_t)256 << 20;
  e->families = o->families;
  e->kernels = o->kernels;
  e->finish_builds = o->finish_builds != 0;
  /* by default one build at a time on a CPU device, whose compiler (PoCL)
   * builds one program at a time per process; a GPU's driver, one per CPU */
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  e->build_threads = o->build_threads < 0   ? 0
                     : o->build_threads > 0 ? o->build_threads
                     : !e->is_gpu           ? 1
                     : cpus > 8             ? 8
                     : cpus > 1             ? (int)cpus
                                            : 1;
  if (e->build_threads > RL_MAX_BUILDERS) e->build_threads = RL_MAX_BUILDERS;
  /* CPU plans stream from destinations of 0.3 of the device's cache: there
   * source and destination together (most often the same size) fill 0.6 of
   * it, and repeated conversions stop finding them in the cache
   * (docs/notes/TUNING.md, "The streaming threshold") */
  e->stream_from = e->is_gpu || o->stream_bytes < 0 ? 0
                   : o->stream_bytes > 0            ? o->stream_bytes
                                                    : (int64_t)(cache * 3 / 10);
}

/* A new engine, its lock ready. */
static relayout_engine *engine_new(void) {
  relayout_engine *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  pthread_mutex_init(&e->lock, NULL);
  pthread_cond_init(&e->changed, NULL);
  return e;
}

/* The engine of o's device, or the reference's, in *out. */
static relayout_status engine_open(relayout_engine **out,
                                   const relayout_engine_options *options,
                                   relayout_error *err) {
  relayout_engine_options o = options_of(options);
  relayout_status s = check_options(&o, err);
  if (s) return s;
  rl_found f;
  rl_enumerate(&f);
  char note[RELAYOUT_ERROR_LEN] = "";
  int i;
  s = rl_choose_device(&i, &f, o.device && *o.device ? o.device : "auto", note,
                       sizeof note, err);
  if (s) return s;
  relayout_engine *e = engine_new();
  if (!e) return rl_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  memcpy(e->note, note, sizeof note);
  if (i < 0) {
    e->reference = 1;
    snprintf(e->name, sizeof e->name, "reference");
    *out = e;
    return RELAYOUT_OK;
  }
  relayout_device_info di;
  rl_device_info(&di, f.platform[i], f.device[i]);
  e->device = f.device[i];
  e->owns = 1;
  memcpy(e->name, di.name, sizeof e->name);
  memcpy(e->platform, di.platform, sizeof e->platform);
  clGetDeviceInfo(e->device, CL_DRIVER_VERSION, sizeof e->driver - 1, e->driver,
                  NULL);
  e->compute_units = di.compute_units ? di.compute_units : 1;
  e->is_gpu = di.is_gpu;
  set_up(e, &o);
  cl_int rc;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                   (cl_context_properties)f.platform[i], 0};
  e->context = clCreateContext(props, 1, &e->device, NULL, NULL, &rc);
  if (rc == CL_SUCCESS)
    e->queue = clCreateCommandQueue(e->context, e->device, 0, &rc);
  if (rc != CL_SUCCESS) {
    relayout_engine_free(e);
    return rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                   "cannot open OpenCL device '%s' (error %d)", di.name, rc);
  }
  *out = e;
  return RELAYOUT_OK;
}

relayout_status relayout_engine_create(relayout_engine **out,
                                       const relayout_engine_options *options,
                                       relayout_error *err) {
  if (!out) return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  *out = NULL;
  rl_devices_lock();
  relayout_status s = engine_open(out, options, err);
  rl_devices_unlock();
  return s;
}

relayout_status relayout_engine_wrap(relayout_engine **out, cl_context context,
                                     cl_device_id device,
                                     cl_command_queue queue,
                                     const relayout_engine_options *options,
                                     relayout_error *err) {
  if (!out || !context || !device || !queue)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  relayout_engine_options o = options_of(options);
  relayout_status s = check_options(&o, err);
  if (s) return s;
  relayout_engine *e = engine_new();
  if (!e) return rl_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  cl_platform_id plat = NULL;
  cl_device_type type = 0;
  cl_uint cus = 1;
  e->context = context;
  e->device = device;
  e->queue = queue;
  clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof e->name - 1, e->name, NULL);
  clGetDeviceInfo(device, CL_DRIVER_VERSION, sizeof e->driver - 1, e->driver,
                  NULL);
  clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof plat, &plat, NULL);
  clGetPlatformInfo(plat, CL_PLATFORM_NAME, sizeof e->platform - 1, e->platform,
                    NULL);
  clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  clGetDeviceInfo(device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL);
  e->compute_units = cus ? cus : 1;
  e->is_gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
  set_up(e, &o);
  *out = e;
  return RELAYOUT_OK;
}

void relayout_engine_free(relayout_engine *e) {
  if (!e) return;
  rl_builds_stop(e);
  rl_staging_free(e);
  rl_programs_free(e);
  pthread_cond_destroy(&e->changed);
  pthread_mutex_destroy(&e->lock);
  if (e->owns) {
    if (e->queue) clReleaseCommandQueue(e->queue);
    if (e->context) clReleaseContext(e->context);
  }
  free(e);
}

int rl_engine_cpu_kernels(const relayout_engine *e) {
  return e->families == RELAYOUT_FAMILIES_GPU   ? 0
         : e->families == RELAYOUT_FAMILIES_CPU ? 1
                                                : !e->is_gpu;
}

relayout_status rl_engine_enter(relayout_engine *e, relayout_error *err) {
  pthread_mutex_lock(&e->lock);
  int busy = e->depth && !pthread_equal(e->user, pthread_self());
  if (!busy) {
    e->user = pthread_self();
    e->depth++;
  }
  pthread_mutex_unlock(&e->lock);
  return busy ? rl_fail(err, RELAYOUT_ERR_BUSY,
                        "engine '%s' is in use by another thread: an engine "
                        "and its plans are used by one thread at a time",
                        e->name)
              : RELAYOUT_OK;
}

void rl_engine_leave(relayout_engine *e) {
  pthread_mutex_lock(&e->lock);
  e->depth--;
  pthread_mutex_unlock(&e->lock);
}

const char *relayout_engine_device(const relayout_engine *e) {
  return e ? e->name : "(null)";
}

const char *relayout_engine_note(const relayout_engine *e) {
  return e ? e->note : "";
}

void relayout_engine_builds(const relayout_engine *e, int *from_source,
                            int *from_disk) {
  if (from_source) *from_source = e ? e->built_from_source : 0;
  if (from_disk) *from_disk = e ? e->loaded_from_disk : 0;
}

cl_command_queue relayout_engine_queue(const relayout_engine *e) {
  return e && !e->reference ? e->queue : NULL;
}

cl_context relayout_engine_context(const relayout_engine *e) {
  return e && !e->reference ? e->context : NULL;
}

int relayout_engine_host_memory(const relayout_engine *e) {
  return e && !e->reference && e->host_memory;
}
