/* device.c - OpenCL devices: listing, choosing one, the engine around it */
#include "engine.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RL_MAX_DEVICES 64

typedef struct found {
  cl_platform_id platform[RL_MAX_DEVICES];
  cl_device_id device[RL_MAX_DEVICES];
  int n;
} found;

static void enumerate(found *f) {
  cl_platform_id plats[16];
  cl_uint np = 0;
  f->n = 0;
  if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS) return;
  for (cl_uint p = 0; p < np && p < 16; p++) {
    cl_device_id devs[RL_MAX_DEVICES];
    cl_uint nd = 0;
    if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, RL_MAX_DEVICES, devs,
                       &nd) != CL_SUCCESS)
      continue;
    for (cl_uint d = 0; d < nd && f->n < RL_MAX_DEVICES; d++) {
      f->platform[f->n] = plats[p];
      f->device[f->n++] = devs[d];
    }
  }
}

static void info(relayout_device_info *out, cl_platform_id p, cl_device_id d) {
  memset(out, 0, sizeof *out);
  cl_device_type type = 0;
  cl_ulong mem = 0, alloc = 0;
  cl_uint cus = 0;
  clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof out->name - 1, out->name, NULL);
  clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof out->platform - 1,
                    out->platform, NULL);
  clGetDeviceInfo(d, CL_DEVICE_OPENCL_C_VERSION, sizeof out->opencl_c - 1,
                  out->opencl_c, NULL);
  clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL);
  clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
  clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof alloc, &alloc, NULL);
  clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL);
  out->is_gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
  out->compute_units = cus;
  out->global_mem = mem;
  out->max_alloc = alloc;
}

static int pick_auto(const found *f) {
  relayout_device_info di;
  for (int i = 0; i < f->n; i++) {
    info(&di, f->platform[i], f->device[i]);
    if (di.is_gpu) return i;
  }
  return f->n ? 0 : -1;
}

relayout_status relayout_device_list(relayout_device_info *out, int room,
                                     int *count, int *autopick,
                                     relayout_error *err) {
  if (!count || (room > 0 && !out))
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  found f;
  enumerate(&f);
  for (int i = 0; i < f.n && i < room; i++)
    info(&out[i], f.platform[i], f.device[i]);
  *count = f.n;
  if (autopick) *autopick = pick_auto(&f);
  return RELAYOUT_OK;
}

static int contains_nocase(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (; *hay; hay++)
    if (!strncasecmp(hay, needle, n)) return 1;
  return 0;
}

/* *index = the device `spec` names, or -1 for the reference. */
static relayout_status choose(int *index, const found *f, const char *spec,
                              relayout_error *note, relayout_error *err) {
  relayout_device_info di;
  *index = -1;
  if (!strcmp(spec, "ref")) return RELAYOUT_OK;
  if (!strcmp(spec, "auto")) {
    *index = pick_auto(f);
    if (*index < 0)
      rl_fail(note, RELAYOUT_OK,
              "relayout: no OpenCL device found; using the scalar reference");
    return RELAYOUT_OK;
  }
  int want_gpu = !strcmp(spec, "gpu"), want_cpu = !strcmp(spec, "cpu");
  int digits = *spec != 0;
  for (const char *p = spec; *p; p++) digits &= isdigit((unsigned char)*p) != 0;
  if (digits) {
    long i = strtol(spec, NULL, 10);
    if (i < f->n) {
      *index = (int)i;
      return RELAYOUT_OK;
    }
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "device %ld does not exist: %d OpenCL device%s found", i,
                   f->n, f->n == 1 ? "" : "s");
  }
  for (int i = 0; i < f->n; i++) {
    info(&di, f->platform[i], f->device[i]);
    if ((want_gpu && di.is_gpu) || (want_cpu && !di.is_gpu) ||
        (!want_gpu && !want_cpu && contains_nocase(di.name, spec))) {
      *index = i;
      return RELAYOUT_OK;
    }
  }
  return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                 "no OpenCL device matches '%s' (%d device%s found; "
                 "'relayout devices' lists them)",
                 spec, f->n, f->n == 1 ? "" : "s");
}

void rl_device_limits(relayout_engine *e) {
  cl_ulong alloc = 0, cache = 0;
  cl_bool unified = CL_FALSE;
  clGetDeviceInfo(e->device, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified,
                  &unified, NULL);
  const char *force = getenv("RELAYOUT_UNIFIED");
  e->host_memory = unified == CL_TRUE && !(force && !strcmp(force, "0"));
  clGetDeviceInfo(e->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof alloc, &alloc,
                  NULL);
  clGetDeviceInfo(e->device, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, sizeof cache,
                  &cache, NULL);
  clGetDeviceInfo(e->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof e->max_group,
                  &e->max_group, NULL);
  e->max_alloc = alloc;
  e->cache = cache;
  double v;
  if (rl_env_number("RELAYOUT_MAX_ALLOC", &v) && v >= 1 &&
      v < (double)e->max_alloc)
    e->max_alloc = (uint64_t)v;
}

int rl_env_number(const char *name, double *out) {
  const char *v = getenv(name);
  char *end = NULL;
  double x = v && *v ? strtod(v, &end) : 0;
  if (!end || *end || !isfinite(x)) return 0;
  *out = x;
  return 1;
}

relayout_status relayout_engine_create(relayout_engine **out,
                                       const char *device, relayout_error *note,
                                       relayout_error *err) {
  if (!out) return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  *out = NULL;
  if (note) note->message[0] = 0;
  const char *spec = device ? device : getenv("RELAYOUT_DEVICE");
  if (!spec || !*spec) spec = "auto";
  found f;
  enumerate(&f);
  int i;
  relayout_status s = choose(&i, &f, spec, note, err);
  if (s) return s;
  relayout_engine *e = calloc(1, sizeof *e);
  if (!e) return rl_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  if (i < 0) {
    e->reference = 1;
    snprintf(e->name, sizeof e->name, "reference");
    *out = e;
    return RELAYOUT_OK;
  }
  relayout_device_info di;
  info(&di, f.platform[i], f.device[i]);
  e->device = f.device[i];
  e->owns = 1;
  memcpy(e->name, di.name, sizeof e->name);
  memcpy(e->platform, di.platform, sizeof e->platform);
  clGetDeviceInfo(e->device, CL_DRIVER_VERSION, sizeof e->driver - 1, e->driver,
                  NULL);
  rl_device_limits(e);
  e->compute_units = di.compute_units ? di.compute_units : 1;
  e->is_gpu = di.is_gpu;
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

void relayout_engine_free(relayout_engine *e) {
  if (!e) return;
  rl_programs_free(e);
  if (e->owns) {
    if (e->queue) clReleaseCommandQueue(e->queue);
    if (e->context) clReleaseContext(e->context);
  }
  free(e);
}

const char *relayout_engine_device(const relayout_engine *e) {
  return e ? e->name : "(null)";
}
