/* devices.c - OpenCL devices: listing them and choosing one */
#include "engine.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* OpenCL drivers may set themselves up on the first queries without a lock
 * of their own (PoCL crashes when threads race there): finding and opening
 * devices is one thread at a time in the process. */
static pthread_mutex_t discovery = PTHREAD_MUTEX_INITIALIZER;

void rl_devices_lock(void) { pthread_mutex_lock(&discovery); }

void rl_devices_unlock(void) { pthread_mutex_unlock(&discovery); }

void rl_enumerate(rl_found *f) {
  cl_platform_id plats[16];
  cl_uint np = 0;
  f->n = 0;
  f->error = clGetPlatformIDs(16, plats, &np);
  if (f->error != CL_SUCCESS) return;
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

void rl_device_info(relayout_device_info *out, cl_platform_id p,
                    cl_device_id d) {
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

static int pick_auto(const rl_found *f) {
  relayout_device_info di;
  for (int i = 0; i < f->n; i++) {
    rl_device_info(&di, f->platform[i], f->device[i]);
    if (di.is_gpu) return i;
  }
  return f->n ? 0 : -1;
}

relayout_status relayout_device_list(relayout_device_info *out, int room,
                                     int *count, int *autopick,
                                     relayout_error *err) {
  if (!count || (room > 0 && !out))
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  rl_found f;
  rl_devices_lock();
  rl_enumerate(&f);
  for (int i = 0; i < f.n && i < room; i++)
    rl_device_info(&out[i], f.platform[i], f.device[i]);
  *count = f.n;
  if (autopick) *autopick = pick_auto(&f);
  rl_devices_unlock();
  return RELAYOUT_OK;
}

static int contains_nocase(const char *hay, const char *needle) {
  size_t n = strlen(needle);
  for (; *hay; hay++)
    if (!strncasecmp(hay, needle, n)) return 1;
  return 0;
}

relayout_status rl_choose_device(int *index, const rl_found *f,
                                 const char *spec, char *note, size_t room,
                                 relayout_error *err) {
  relayout_device_info di;
  *index = -1;
  if (!strcmp(spec, "ref")) return RELAYOUT_OK;
  if (!strcmp(spec, "auto")) {
    *index = pick_auto(f);
    if (*index < 0)
      snprintf(note, room,
               "no OpenCL device found: the scalar reference "
               "does the work");
    return RELAYOUT_OK;
  }
  if (!f->n) /* not the caller's mistake: the drivers found or opened none */
    return rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                   "no OpenCL device found for '%s' (OpenCL error %d): no "
                   "driver is installed, or none could start (a memory "
                   "limit?)",
                   spec, (int)(f->error ? f->error : CL_DEVICE_NOT_FOUND));
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
    rl_device_info(&di, f->platform[i], f->device[i]);
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
