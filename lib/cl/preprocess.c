/* preprocess.c - preprocessing plans: an AIPP configuration's kernel
 * (lib/codegen/preprocess.c) on an engine, run on host arrays or enqueued
 * on the caller's buffers; the reference where the device cannot */
#include "engine.h"
#include "relayout_cl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct relayout_preprocess_plan {
  relayout_engine *engine;
  relayout_aipp aipp;
  rl_desc dst;
  int64_t frame;    /* bytes a frame */
  cl_kernel kernel; /* NULL: the reference */
  size_t global, local;
  char note[RELAYOUT_ERROR_LEN]; /* why it runs on the reference */
  char run_note[RELAYOUT_ERROR_LEN];
};

/* The kernel, built or from the caches; 0 (with p->note, but on the
 * reference engine, which was asked for) when it cannot. */
static int make_kernel(relayout_preprocess_plan *p) {
  relayout_engine *e = p->engine;
  const rl_desc *d = &p->dst;
  relayout_error why = {""};
  const char *no = relayout_dtype_bits(d->dtype) == 4 ? "a 4-bit output"
                   : d->per_channel ? "an output quantized per channel"
                                    : NULL;
  if (e->reference) return 0;
  if (no) {
    snprintf(p->note, sizeof p->note,
             "using the scalar reference: %s has no preprocessing kernel", no);
    return 0;
  }
  /* a GPU writes neighbours from neighbouring work-items, a CPU device
   * takes runs (rows of pixels), enough of them for every core */
  int cpu = rl_engine_cpu_kernels(e);
  int64_t chunk = 1, units = rl_preprocess_units(d, cpu);
  if (cpu) {
    chunk = units / (16 * (int64_t)e->compute_units);
    chunk = chunk < 64 ? 64 : chunk > 16384 ? 16384 : chunk;
  }
  char *source = rl_codegen_preprocess(&p->aipp, d, p->frame, chunk, cpu);
  cl_program prog = source ? rl_program_get(e, source, 1, &why) : NULL;
  free(source);
  rl_builds_store(e);
  cl_int rc = CL_SUCCESS;
  if (prog) p->kernel = clCreateKernel(prog, "rl_preprocess", &rc);
  if (!p->kernel) {
    snprintf(p->note, sizeof p->note, "using the scalar reference: %.200s",
             !source ? "out of memory"
             : prog  ? "the preprocessing kernel could not be made"
                     : why.message);
    return 0;
  }
  size_t items = (size_t)((units + chunk - 1) / chunk);
  p->local = e->is_gpu ? (e->max_group < 256 ? e->max_group : 256) : 1;
  p->global = (items + p->local - 1) / p->local * p->local;
  return 1;
}

relayout_status relayout_preprocess_plan_create(relayout_preprocess_plan **out,
                                                relayout_engine *engine,
                                                const relayout_aipp *aipp,
                                                const relayout_desc *dst,
                                                relayout_error *err) {
  if (!out || !engine || !aipp || !dst)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  *out = NULL;
  int at[4];
  int64_t frame;
  relayout_status s = rl_preprocess_check(aipp, rl_cd(dst), at, &frame, err);
  if (s) return s;
  relayout_preprocess_plan *p = calloc(1, sizeof *p);
  if (!p) return rl_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  s = rl_engine_enter(engine, err);
  if (s) {
    free(p);
    return s;
  }
  p->engine = engine;
  p->aipp = *aipp;
  p->dst = *rl_cd(dst);
  p->frame = frame;
  make_kernel(p);
  rl_engine_leave(engine);
  *out = p;
  return RELAYOUT_OK;
}

void relayout_preprocess_plan_free(relayout_preprocess_plan *p) {
  if (!p) return;
  if (p->kernel) clReleaseKernel(p->kernel);
  free(p);
}

const char *relayout_preprocess_note(const relayout_preprocess_plan *p) {
  return !p ? "" : *p->note ? p->note : p->run_note;
}

static cl_int enqueue(relayout_preprocess_plan *p, cl_mem dst, size_t dst_off,
                      cl_mem frames, size_t frames_off, cl_uint nwait,
                      const cl_event *wait, cl_event *done) {
  cl_long fo = (cl_long)frames_off,
          doff = (cl_long)(dst_off / rl_unit(p->dst.dtype));
  cl_int rc = clSetKernelArg(p->kernel, 0, sizeof frames, &frames);
  rc |= clSetKernelArg(p->kernel, 1, sizeof fo, &fo);
  rc |= clSetKernelArg(p->kernel, 2, sizeof dst, &dst);
  rc |= clSetKernelArg(p->kernel, 3, sizeof doff, &doff);
  if (rc != CL_SUCCESS) return CL_INVALID_KERNEL_ARGS;
  rc = clEnqueueNDRangeKernel(p->engine->queue, p->kernel, 1, NULL, &p->global,
                              &p->local, nwait, wait, done);
  if (rc == CL_SUCCESS) rl_build_go(p->engine);
  return rc;
}

/* relayout_preprocess_run on arguments checked and sized. */
static relayout_status preprocess_run(relayout_preprocess_plan *p,
                                      void *dst_buf, size_t dst_size,
                                      const void *frames, size_t frames_size,
                                      relayout_error *err) {
  p->run_note[0] = 0;
  if (!p->kernel)
    return relayout_preprocess_ref(&p->aipp, (const relayout_desc *)&p->dst,
                                   dst_buf, dst_size, frames, frames_size, err);
  int64_t db, n = rl_preprocess_frames(&p->dst);
  rl_desc_size_bytes(&db, &p->dst, NULL);
  relayout_engine *e = p->engine;
  /* a device in host memory works on the caller's arrays in place (the
   * output aligned to its element), as relayout_plan_run does; others
   * take them through the engine's transfers (staging.c) */
  int here = e->host_memory && (uintptr_t)dst_buf % rl_unit(p->dst.dtype) == 0;
  size_t fb = (size_t)(n * p->frame);
  cl_int rc = CL_SUCCESS;
  cl_event up = NULL, ran = NULL;
  cl_mem in = clCreateBuffer(
      e->context, CL_MEM_READ_ONLY | (here ? CL_MEM_USE_HOST_PTR : 0), fb,
      here ? (void *)frames : NULL, &rc);
  cl_mem out =
      rc == CL_SUCCESS
          ? clCreateBuffer(e->context,
                           CL_MEM_WRITE_ONLY | (here ? CL_MEM_USE_HOST_PTR : 0),
                           (size_t)db, here ? dst_buf : NULL, &rc)
          : NULL;
  if (rc == CL_SUCCESS && !here) rc = rl_stage_up(e, in, frames, fb, &up);
  if (rc == CL_SUCCESS)
    rc = enqueue(p, out, 0, in, 0, up ? 1 : 0, up ? &up : NULL, &ran);
  if (rc == CL_SUCCESS && !here)
    rc = rl_stage_down(e, dst_buf, out, (size_t)db, ran);
  if (rc == CL_SUCCESS && here) { /* the kernel's writes, seen in dst_buf */
    void *m = clEnqueueMapBuffer(e->queue, out, CL_TRUE, CL_MAP_READ, 0,
                                 (size_t)db, 0, NULL, NULL, &rc);
    if (rc == CL_SUCCESS)
      rc = clEnqueueUnmapMemObject(e->queue, out, m, 0, NULL, NULL);
  }
  /* nothing may use the caller's arrays once this returns */
  cl_int waited = clFinish(e->queue);
  if (rc == CL_SUCCESS) rc = waited;
  rl_staging_drain(e);
  if (up) clReleaseEvent(up);
  if (ran) clReleaseEvent(ran);
  if (out) clReleaseMemObject(out);
  if (in) clReleaseMemObject(in);
  if (rc == CL_SUCCESS) return RELAYOUT_OK;
  snprintf(p->run_note, sizeof p->run_note,
           "preprocessing failed on %s (OpenCL error %d): the scalar "
           "reference did the work",
           e->name, rc);
  return relayout_preprocess_ref(&p->aipp, (const relayout_desc *)&p->dst,
                                 dst_buf, dst_size, frames, frames_size, err);
}

relayout_status relayout_preprocess_run(relayout_preprocess_plan *p,
                                        void *dst_buf, size_t dst_size,
                                        const void *frames, size_t frames_size,
                                        relayout_error *err) {
  if (!p || !dst_buf || !frames)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  relayout_status s =
      rl_preprocess_sizes(&p->dst, dst_size, p->frame, frames_size, err);
  if (!s) s = rl_engine_enter(p->engine, err);
  if (s) return s;
  s = preprocess_run(p, dst_buf, dst_size, frames, frames_size, err);
  rl_engine_leave(p->engine);
  return s;
}

relayout_status relayout_preprocess_enqueue(relayout_preprocess_plan *p,
                                            cl_mem dst, size_t dst_offset,
                                            cl_mem frames, size_t frames_offset,
                                            cl_uint nwait, const cl_event *wait,
                                            cl_event *done,
                                            relayout_error *err) {
  if (!p || !dst || !frames)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  if (!p->kernel)
    return rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                   "this plan runs on the scalar reference: %s: it cannot "
                   "enqueue on OpenCL buffers",
                   p->note);
  size_t unit = rl_unit(p->dst.dtype);
  if (dst_offset % unit)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "the output's offset must be a multiple of its %zu-byte "
                   "element",
                   unit);
  size_t have_d = 0, have_f = 0;
  clGetMemObjectInfo(dst, CL_MEM_SIZE, sizeof have_d, &have_d, NULL);
  clGetMemObjectInfo(frames, CL_MEM_SIZE, sizeof have_f, &have_f, NULL);
  relayout_status s = rl_preprocess_sizes(
      &p->dst, have_d > dst_offset ? have_d - dst_offset : 0, p->frame,
      have_f > frames_offset ? have_f - frames_offset : 0, err);
  if (!s) s = rl_engine_enter(p->engine, err);
  if (s) return s;
  cl_int rc =
      enqueue(p, dst, dst_offset, frames, frames_offset, nwait, wait, done);
  rl_engine_leave(p->engine);
  return rc == CL_SUCCESS
             ? RELAYOUT_OK
             : rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                       "enqueueing the preprocessing failed (OpenCL error %d)",
                       rc);
}
