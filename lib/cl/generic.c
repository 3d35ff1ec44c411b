/* generic.c - a plan's generic kernel: the engine's program of
 * kernels/generic.cl (built once, on first need, and kept in the disk cache
 * like the rest), the plan's kernel in it, its map as arguments */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

/* The plan's generic program, built on first need: the engine's per width
 * and kernel (its name: `kernel`), tried once; a cast's through the
 * program cache. NULL (why filled) when it cannot be. */
static cl_program program(relayout_engine *e, const rl_desc *dst,
                          const rl_desc *src, const char *kernel,
                          relayout_error *why) {
  int bits = relayout_dtype_bits(dst->dtype), cast = rl_is_cast(dst, src);
  int which = !strcmp(kernel, "rl_generic_map")    ? 2
              : !strcmp(kernel, "rl_generic_tile") ? 1
                                                   : 0;
  int w = bits == 4    ? 0
          : bits == 8  ? 1 + which
          : bits == 16 ? 4 + which
          : bits == 32 ? 7 + which
                       : 10 + which;
  if (cast || !e->generic_tried[w]) {
    char *source = rl_generic_source(dst, src, rl_engine_cpu_kernels(e));
    cl_program prog = source ? rl_program_get(e, source, 1, why) : NULL;
    if (!source) rl_fail(why, RELAYOUT_ERR_NOMEM, "out of memory");
    free(source);
    if (cast) return prog;
    e->generic[w] = prog;
    e->generic_tried[w] = 1;
  } else if (!e->generic[w]) {
    rl_fail(why, RELAYOUT_ERR_UNSUPPORTED, "the generic kernels did not build");
  }
  return e->generic[w];
}

/* A GPU's tiles: a work-group each, at most this many work-groups at once,
 * each going on to the tile this many further. */
#define GPU_GROUPS 65536

/* Work per work-item: on a GPU one element (neighbours write neighbours) or
 * a tile per work-group; on a CPU device a run of elements (or tiles, of 64
 * to 256 elements each), enough runs for every core. */
static int64_t chunk_of(const relayout_engine *e, int64_t units, int tiles) {
  if (!rl_engine_cpu_kernels(e)) return 1;
  int64_t c = units / (16 * (int64_t)e->compute_units);
  int64_t lo = tiles ? 1 : 64, hi = tiles ? 256 : 16384;
  return c < lo ? lo : c > hi ? hi : c;
}

int rl_generic_setup(relayout_plan *p, relayout_error *why) {
  relayout_engine *e = p->engine;
  int nibbles = relayout_dtype_bits(p->moved.dtype) == 4 ||
                relayout_dtype_bits(p->moved_src.dtype) == 4;
  if (nibbles && rl_is_cast(&p->moved, &p->moved_src)) {
    rl_fail(why, RELAYOUT_ERR_UNSUPPORTED,
            "a cast to or from a 4-bit type has no generic kernel");
    return 0;
  }
  int64_t args[RL_GENERIC_LONGS], units;
  int cpu = rl_engine_cpu_kernels(e);
  const char *name = rl_generic_kernel(&p->moved, &p->moved_src, cpu, &units);
  int tiles = !strcmp(name, "rl_generic_tile");
  cl_program prog = program(e, &p->moved, &p->moved_src, name, why);
  if (!prog) return 0;
  int n = rl_generic_args(args, &p->moved, &p->moved_src, cpu, e->stream_from);
  cl_int rc;
  cl_kernel k = clCreateKernel(prog, name, &rc);
  cl_mem buf =
      rc != CL_SUCCESS
          ? NULL
          : clCreateBuffer(e->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                           sizeof *args * (size_t)n, args, &rc);
  cl_long count = p->moved.span;
  cl_long chunk = chunk_of(e, units, tiles);
  if (rc == CL_SUCCESS) {
    rc = clSetKernelArg(k, 4, sizeof buf, &buf);
    rc |= clSetKernelArg(k, 5, sizeof count, &count);
    rc |= clSetKernelArg(k, 6, sizeof chunk, &chunk);
    if (rl_generic_channels(&p->moved, &p->moved_src))
      rc |= clSetKernelArg(k, 7, sizeof p->channels, &p->channels);
  }
  if (rc != CL_SUCCESS) {
    if (buf) clReleaseMemObject(buf);
    if (k) clReleaseKernel(k);
    rl_fail(why, RELAYOUT_ERR_UNSUPPORTED,
            "the generic kernel could not be set up (OpenCL error %d)", rc);
    return 0;
  }
  size_t local = cpu ? 1 : e->max_group < 256 ? e->max_group : 256;
  size_t items = !cpu && tiles
                     ? (size_t)(units < GPU_GROUPS ? units : GPU_GROUPS) * local
                     : (size_t)((units + chunk - 1) / chunk);
  p->generic = k;
  p->generic_args = buf;
  p->generic_local = local;
  p->generic_global = (items + local - 1) / local * local;
  return 1;
}

void rl_generic_release(relayout_plan *p) {
  if (p->generic) clReleaseKernel(p->generic);
  if (p->generic_args) clReleaseMemObject(p->generic_args);
  p->generic = NULL;
  p->generic_args = NULL;
}
