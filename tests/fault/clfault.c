/* clfault.c - makes one OpenCL call fail, for tests (LD_PRELOAD)
 *
 * RELAYOUT_FAULT=NAME:N makes the N-th call of the OpenCL entry point NAME
 * fail as a driver out of resources would (CL_OUT_OF_RESOURCES, or NULL with
 * that in errcode_ret); every other call goes to the real OpenCL library.
 * RELAYOUT_FAULT_COUNTS=FILE appends, when the process exits, how many
 * times each entry point below was called: "NAME COUNT" lines.
 * RELAYOUT_FAULT_SOURCE=TEXT puts "#error TEXT" on its own line just before
 * the last string of every program built from source, so that the real
 * compiler fails with a real log (at line 1 where the strings before end
 * in "#line 1").
 * RELAYOUT_FAULT_CRASH=TEXT crashes (SIGSEGV) the first kernel enqueue of
 * a process one of whose arguments holds TEXT, as a broken driver would.
 */
#define CL_TARGET_OPENCL_VERSION 120
#define _GNU_SOURCE
#include <CL/cl.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENTRY_POINTS(X)                                                        \
  X(clCreateContext)                                                           \
  X(clCreateCommandQueue)                                                      \
  X(clCreateBuffer)                                                            \
  X(clCreateProgramWithSource)                                                 \
  X(clCreateProgramWithBinary)                                                 \
  X(clBuildProgram)                                                            \
  X(clGetProgramInfo)                                                          \
  X(clCreateKernel)                                                            \
  X(clSetKernelArg)                                                            \
  X(clEnqueueNDRangeKernel)                                                    \
  X(clEnqueueWriteBuffer)                                                      \
  X(clEnqueueReadBuffer)                                                       \
  X(clEnqueueCopyBuffer)                                                       \
  X(clEnqueueFillBuffer)                                                       \
  X(clEnqueueMapBuffer)                                                        \
  X(clEnqueueUnmapMemObject)                                                   \
  X(clFlush)                                                                   \
  X(clFinish)                                                                  \
  X(clWaitForEvents)

#define INDEX(name) I_##name,
enum { ENTRY_POINTS(INDEX) NENTRIES };
#define NAME(name) #name,
static const char *const names[] = {ENTRY_POINTS(NAME)};
static long calls[NENTRIES];
static int target = -1, crash;
static long target_call;

/* Whether an argument of this process holds text. */
static int in_arguments(const char *text) {
  char buf[65536];
  FILE *f = fopen("/proc/self/cmdline", "rb");
  size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
  if (f) fclose(f);
  buf[n] = 0;
  for (size_t at = 0; at < n; at += strlen(buf + at) + 1)
    if (strstr(buf + at, text)) return 1;
  return 0;
}

__attribute__((constructor)) static void setup(void) {
  const char *c = getenv("RELAYOUT_FAULT_CRASH");
  crash = c && *c && in_arguments(c);
  const char *f = getenv("RELAYOUT_FAULT"), *colon = f ? strchr(f, ':') : NULL;
  if (!colon) return;
  for (int i = 0; i < NENTRIES; i++)
    if (strlen(names[i]) == (size_t)(colon - f) &&
        !strncmp(names[i], f, (size_t)(colon - f)))
      target = i;
  target_call = atol(colon + 1);
}

__attribute__((destructor)) static void report(void) {
  const char *path = getenv("RELAYOUT_FAULT_COUNTS");
  FILE *out = path ? fopen(path, "a") : NULL;
  if (!out) return;
  for (int i = 0; i < NENTRIES; i++)
    if (calls[i]) fprintf(out, "%s %ld\n", names[i], calls[i]);
  fclose(out);
}

/* Counts the call; 1 when it is the one to fail. */
static int fails(int i) {
  if (crash && i == I_clEnqueueNDRangeKernel) { /* past LLVM's handler */
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
  }
  return __atomic_add_fetch(&calls[i], 1, __ATOMIC_SEQ_CST) == target_call &&
         i == target;
}

static void *real(const char *name) { return dlsym(RTLD_NEXT, name); }

/* Entry points that return a status. */
#define STATUS(name, params, args)                                             \
  cl_int name params {                                                         \
    static cl_int(*next) params;                                               \
    if (!next) next = (cl_int(*) params)real(#name);                           \
    return fails(I_##name) ? CL_OUT_OF_RESOURCES : next args;                  \
  }
/* Entry points that return an object and set errcode_ret. */
#define OBJECT(type, name, params, args)                                       \
  type name params {                                                           \
    static type(*next) params;                                                 \
    if (!next) next = (type(*) params)real(#name);                             \
    if (!fails(I_##name)) return next args;                                    \
    if (errcode_ret) *errcode_ret = CL_OUT_OF_RESOURCES;                       \
    return NULL;                                                               \
  }

OBJECT(cl_context, clCreateContext,
       (const cl_context_properties *p, cl_uint n, const cl_device_id *d,
        void(CL_CALLBACK *cb)(const char *, const void *, size_t, void *),
        void *u, cl_int *errcode_ret),
       (p, n, d, cb, u, errcode_ret))
OBJECT(cl_command_queue, clCreateCommandQueue,
       (cl_context c, cl_device_id d, cl_command_queue_properties p,
        cl_int *errcode_ret),
       (c, d, p, errcode_ret))
OBJECT(cl_mem, clCreateBuffer,
       (cl_context c, cl_mem_flags f, size_t s, void *h, cl_int *errcode_ret),
       (c, f, s, h, errcode_ret))
cl_program clCreateProgramWithSource(cl_context c, cl_uint n, const char **s,
                                     const size_t *l, cl_int *errcode_ret) {
  static cl_program (*next)(cl_context, cl_uint, const char **, const size_t *,
                            cl_int *);
  if (!next)
    next = (cl_program(*)(cl_context, cl_uint, const char **, const size_t *,
                          cl_int *))real("clCreateProgramWithSource");
  const char *broken = getenv("RELAYOUT_FAULT_SOURCE");
  if (fails(I_clCreateProgramWithSource)) {
    if (errcode_ret) *errcode_ret = CL_OUT_OF_RESOURCES;
    return NULL;
  }
  if (!broken || n == 0 || n > 7) return next(c, n, s, l, errcode_ret);
  char tail[256];
  snprintf(tail, sizeof tail, "#error %s\n", broken);
  const char *parts[8];
  size_t lens[8];
  for (cl_uint i = 0, j = 0; i < n; i++, j++) {
    if (i == n - 1) {
      parts[j] = tail;
      lens[j++] = strlen(tail);
    }
    parts[j] = s[i];
    lens[j] = l && l[i] ? l[i] : strlen(s[i]);
  }
  return next(c, n + 1, parts, lens, errcode_ret);
}
OBJECT(cl_program, clCreateProgramWithBinary,
       (cl_context c, cl_uint n, const cl_device_id *d, const size_t *l,
        const unsigned char **b, cl_int *st, cl_int *errcode_ret),
       (c, n, d, l, b, st, errcode_ret))
STATUS(clBuildProgram,
       (cl_program p, cl_uint n, const cl_device_id *d, const char *o,
        void(CL_CALLBACK *cb)(cl_program, void *), void *u),
       (p, n, d, o, cb, u))
STATUS(clGetProgramInfo,
       (cl_program p, cl_program_info i, size_t s, void *v, size_t *r),
       (p, i, s, v, r))
OBJECT(cl_kernel, clCreateKernel,
       (cl_program p, const char *n, cl_int *errcode_ret), (p, n, errcode_ret))
STATUS(clSetKernelArg, (cl_kernel k, cl_uint i, size_t s, const void *v),
       (k, i, s, v))
STATUS(clEnqueueNDRangeKernel,
       (cl_command_queue q, cl_kernel k, cl_uint w, const size_t *o,
        const size_t *g, const size_t *l, cl_uint n, const cl_event *e,
        cl_event *ev),
       (q, k, w, o, g, l, n, e, ev))
STATUS(clEnqueueWriteBuffer,
       (cl_command_queue q, cl_mem b, cl_bool blk, size_t o, size_t s,
        const void *p, cl_uint n, const cl_event *e, cl_event *ev),
       (q, b, blk, o, s, p, n, e, ev))
STATUS(clEnqueueReadBuffer,
       (cl_command_queue q, cl_mem b, cl_bool blk, size_t o, size_t s, void *p,
        cl_uint n, const cl_event *e, cl_event *ev),
       (q, b, blk, o, s, p, n, e, ev))
STATUS(clEnqueueCopyBuffer,
       (cl_command_queue q, cl_mem a, cl_mem b, size_t oa, size_t ob, size_t s,
        cl_uint n, const cl_event *e, cl_event *ev),
       (q, a, b, oa, ob, s, n, e, ev))
STATUS(clEnqueueFillBuffer,
       (cl_command_queue q, cl_mem b, const void *p, size_t ps, size_t o,
        size_t s, cl_uint n, const cl_event *e, cl_event *ev),
       (q, b, p, ps, o, s, n, e, ev))
OBJECT(void *, clEnqueueMapBuffer,
       (cl_command_queue q, cl_mem b, cl_bool blk, cl_map_flags f, size_t o,
        size_t s, cl_uint n, const cl_event *e, cl_event *ev,
        cl_int *errcode_ret),
       (q, b, blk, f, o, s, n, e, ev, errcode_ret))
STATUS(clEnqueueUnmapMemObject,
       (cl_command_queue q, cl_mem m, void *p, cl_uint n, const cl_event *e,
        cl_event *ev),
       (q, m, p, n, e, ev))
STATUS(clFlush, (cl_command_queue q), (q))
STATUS(clFinish, (cl_command_queue q), (q))
STATUS(clWaitForEvents, (cl_uint n, const cl_event *e), (n, e))
