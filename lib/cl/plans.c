/* plans.c - plans: built once per conversion and engine, run many times */
#include "engine.h"
#include "relayout_cl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const family_names[] = {"reference", "copy",   "rows",
                                           "stage",     "gather", "lines"};

/* 256, or the device's limit (1 when it reported none); on CPU devices
 * less where that would leave fewer than 4 work-groups per compute unit, so
 * that a small tensor still spreads over every core (the PoCL runtime runs a
 * work-group on one thread: a 64 KB conversion in groups of 256 boxes kept
 * 1 of 16 busy). */
static size_t group_size(const relayout_engine *e, int64_t items) {
  size_t g = e->max_group < 256 ? e->max_group : 256;
  int64_t fair = items / (4 * (int64_t)e->compute_units);
  if (!e->is_gpu && fair < (int64_t)g) g = (size_t)fair;
  return g < 1 ? 1 : g;
}

size_t relayout_engine_group_size(const relayout_engine *e, int64_t items) {
  return e && !e->reference ? group_size(e, items) : 1;
}

/* Work sizes: one work-item per step (element, vector, byte or box); for
 * STAGE, a work-group of 256 per box. */
static void sizes(relayout_plan *p) {
  const relayout_engine *e = p->engine;
  const rl_layout_plan *l = &p->layout;
  if (l->family == RL_FAMILY_STAGE) {
    int64_t boxes = 1;
    for (int k = 0; k < l->naxes; k++) {
      int64_t b = (int64_t)1 << l->stage_bits[k];
      boxes *= (l->axes[k].extent + b - 1) / b;
    }
    p->work_dims = 1;
    p->local[0] = 256;
    p->global[0] = (size_t)boxes * 256;
    return;
  }
  int64_t items = p->moved.span;
  if (l->family == RL_FAMILY_ROWS)
    items /= l->vec;
  else if (l->family == RL_FAMILY_GATHER &&
           relayout_dtype_bits(p->moved.dtype) == 4)
    items = (items + 1) / 2;
  else if (l->family == RL_FAMILY_LINES) { /* one box per work-item */
    items = 1;
    for (int k = 0; k < l->naxes; k++) {
      int64_t n = l->axes[k].extent, block = 1;
      for (int b = 0; b < 3; b++)
        if (l->box[b].axis == k) block = l->box[b].block;
      items *= (n + block - 1) / block;
    }
  }
  p->work_dims = 1;
  /* PoCL gives each work-item of a group its own copy of a private array,
   * side by side: in a group, a staged box's buffer would leave the cache */
  p->local[0] = l->staged || l->copy_in ? 1 : group_size(e, items);
  int64_t groups = (items + (int64_t)p->local[0] - 1) / (int64_t)p->local[0];
  p->global[0] = (size_t)groups * p->local[0];
}

/* The plan's kernel from this program (NULL: its build failed, why says
 * how); 0 when there is none. */
static int take_program(relayout_plan *p, cl_program prog,
                        relayout_error *why) {
  cl_int rc = CL_SUCCESS;
  if (prog)
    p->kernel =
        clCreateKernel(prog, rl_kernel_name(&p->layout, &p->moved), &rc);
  if (prog && rc != CL_SUCCESS)
    rl_fail(why, RELAYOUT_ERR_UNSUPPORTED, "kernel creation failed (%d)", rc);
  return p->kernel != NULL;
}

/* As the engine's options say (relayout_kernels): the specialised kernel
 * where it is compiled, or built now; else the generic kernel, the
 * specialised one building in the background; failing all, the
 * reference, the note saying why. */
static void choose_kernel(relayout_plan *p) {
  relayout_engine *e = p->engine;
  relayout_kernels mode = e->kernels;
  relayout_error why = {""}, gwhy = {""};
  rl_warm warm = {.dims = p->work_dims, .channels = p->channels};
  snprintf(warm.kernel, sizeof warm.kernel, "%s",
           rl_kernel_name(&p->layout, &p->moved));
  memcpy(warm.global, p->global, sizeof warm.global);
  memcpy(warm.local, p->local, sizeof warm.local);
  int64_t sb, db;
  rl_desc_size_bytes(&sb, &p->moved_src, NULL);
  rl_desc_size_bytes(&db, &p->moved, NULL);
  warm.src_bytes = (size_t)sb;
  warm.dst_bytes = (size_t)db;
  /* built: the specialised build was tried, and failed */
  int cached = mode == RELAYOUT_KERNELS_CACHED;
  int built =
      !cached && (mode == RELAYOUT_KERNELS_SPECIALISED || !e->build_threads);
  if (mode != RELAYOUT_KERNELS_GENERIC &&
      take_program(p, rl_program_get(e, p->source, built, &why), &why))
    return;
  if (mode != RELAYOUT_KERNELS_SPECIALISED && rl_generic_setup(p, &gwhy)) {
    if (mode == RELAYOUT_KERNELS_GENERIC || cached ||
        (!built && (p->build = rl_build_start(e, p->source, &warm))))
      return;
    /* no thread to build it: now, then; failing that, generic it stays */
    if (!built && take_program(p, rl_program_get(e, p->source, 1, &why), &why))
      rl_generic_release(p);
    return;
  }
  /* no generic kernel: its own, now (stored at once where cached: no
   * builder, nor a later process, would store it) */
  if ((mode == RELAYOUT_KERNELS_AUTO || cached) && !built &&
      take_program(p, rl_program_get(e, p->source, 1 + cached, &why), &why))
    return;
  snprintf(p->note, sizeof p->note, "using the scalar reference: %.200s",
           mode == RELAYOUT_KERNELS_GENERIC ? gwhy.message : why.message);
  p->layout.family = RL_FAMILY_REFERENCE;
}

/* A finished background build taken: the plan switches to its kernel, or
 * (the build failed) stays on the generic one. With `wait`, waits for it. */
static void settle(relayout_plan *p, int wait) {
  cl_program prog;
  relayout_error why;
  int done =
      p->build ? rl_build_poll(p->engine, p->build, wait, &prog, &why) : 0;
  if (!done) return;
  rl_build_release(p->engine, p->build);
  p->build = NULL;
  if (take_program(p, done > 0 ? prog : NULL, &why)) rl_generic_release(p);
}

/* The plan's own copy of the per-channel arrays its dst or src points to,
 * so that the caller's may change after; 0 when out of memory. */
static int keep_channels(relayout_plan *p) {
  rl_desc *q = p->dst.per_channel ? &p->dst : &p->src;
  size_t n = (size_t)q->dims[q->per_channel - 1];
  float *s = malloc(n * (sizeof *s + sizeof *q->qzps) + 1); /* n may be 0 */
  if (!s) return 0;
  int32_t *z = (int32_t *)(void *)(s + n);
  memcpy(s, q->qscales, n * sizeof *s);
  for (size_t c = 0; c < n; c++) z[c] = q->qzps ? q->qzps[c] : 0;
  q->qscales = s;
  q->qzps = z;
  p->qcopy = s;
  return 1;
}

/* A per-channel cast's table on the device: each channel's scale (its f32
 * bits) and zero point, as kernels/cast.cl reads them; NULL on failure. */
static cl_mem channel_table(relayout_engine *e, const rl_desc *dst,
                            const rl_desc *src) {
  const rl_desc *q = dst->per_channel ? dst : src;
  int64_t n = q->dims[q->per_channel - 1];
  size_t bytes = sizeof(cl_int) * 32 * (size_t)(n / 16 + 1);
  cl_int *t = calloc(1, bytes);
  if (!t) return NULL;
  for (int64_t c = 0; c < n; c++) { /* blocks of 16 scales, 16 zero points */
    int64_t at = c / 16 * 32 + c % 16;
    memcpy(&t[at], &q->qscales[c], sizeof *t);
    t[at + 16] = q->qzps ? q->qzps[c] : 0;
  }
  cl_int rc;
  cl_mem m = clCreateBuffer(e->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                            bytes, t, &rc);
  free(t);
  return rc == CL_SUCCESS ? m : NULL;
}

/* A plan for a checked pair; with `widen`, moving the widest units the
 * layouts allow (rl_widen), else element by element. */
static relayout_status plan_create(relayout_plan **out, relayout_engine *engine,
                                   const rl_desc *dst, const rl_desc *src,
                                   int widen, relayout_error *err) {
  relayout_plan *p = calloc(1, sizeof *p);
  if (!p) return rl_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  p->engine = engine;
  p->dst = *dst;
  p->src = *src;
  if ((dst->per_channel || src->per_channel) && !keep_channels(p)) {
    free(p);
    return rl_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  }
  dst = &p->dst;
  src = &p->src;
  rl_desc dst_w, src_w; /* the layouts in the units the kernel moves */
  int cast = rl_is_cast(dst, src);
  if (widen && !cast && !dst->base && !src->base &&
      rl_widen(&dst_w, &src_w, dst, src))
    dst = &dst_w, src = &src_w;
  /* the kernel runs from the axes' origins: the bases are offsets added
   * when it is enqueued (rl_enqueue) */
  p->moved = *dst;
  p->moved_src = *src;
  rl_desc_unbase(&p->moved);
  rl_desc_unbase(&p->moved_src);
  dst = &p->moved;
  src = &p->moved_src;
  rl_plan_layouts(&p->layout, dst, src, rl_engine_cpu_kernels(engine),
                  engine->stream_from);
  if (engine->reference) p->layout.family = RL_FAMILY_REFERENCE;
  /* a box takes 256 work-items */
  if (p->layout.family == RL_FAMILY_STAGE && engine->max_group < 256)
    p->layout.family = RL_FAMILY_GATHER;
  if (p->layout.family != RL_FAMILY_REFERENCE &&
      (dst->per_channel || src->per_channel) &&
      !(p->channels = channel_table(engine, dst, src))) {
    free(p->qcopy);
    free(p);
    return rl_fail(err, RELAYOUT_ERR_NOMEM,
                   "the per-channel table could not be allocated");
  }
  if (p->layout.family == RL_FAMILY_REFERENCE ||
      p->layout.family == RL_FAMILY_COPY) {
    *out = p;
    return RELAYOUT_OK;
  }
  if (!(p->source = rl_codegen(&p->layout, dst, src))) {
    if (p->channels) clReleaseMemObject(p->channels);
    free(p->qcopy);
    free(p);
    return rl_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  }
  sizes(p);
  choose_kernel(p);
  rl_builds_store(engine);
  *out = p;
  return RELAYOUT_OK;
}

relayout_status rl_plan_create(relayout_plan **out, relayout_engine *engine,
                               const rl_desc *dst, const rl_desc *src,
                               relayout_error *err) {
  *out = NULL;
  relayout_status s = rl_check_pair(dst, src, err);
  return s ? s : plan_create(out, engine, dst, src, 1, err);
}

relayout_status relayout_plan_create(relayout_plan **out,
                                     relayout_engine *engine,
                                     const relayout_desc *dst,
                                     const relayout_desc *src,
                                     relayout_error *err) {
  if (!out || !engine || !dst || !src)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  *out = NULL;
  relayout_status s = rl_engine_enter(engine, err);
  if (s) return s;
  s = rl_plan_create(out, engine, rl_cd(dst), rl_cd(src), err);
  rl_engine_leave(engine);
  return s;
}

void relayout_plan_free(relayout_plan *p) {
  if (!p) return;
  relayout_plan_free(p->plain);
  rl_build_release(p->engine, p->build);
  rl_generic_release(p);
  if (p->kernel) clReleaseKernel(p->kernel);
  if (p->channels) clReleaseMemObject(p->channels);
  free(p->qcopy);
  free(p->source);
  free(p);
}

const char *relayout_plan_family(const relayout_plan *p) {
  return p ? family_names[p->layout.family] : "(null)";
}

const char *relayout_plan_note(const relayout_plan *p) {
  return !p ? "" : *p->note ? p->note : p->run_note;
}

const char *relayout_plan_source(const relayout_plan *p) {
  return p && p->source ? p->source : "";
}

const char *relayout_plan_kernel(const relayout_plan *p) {
  return !p                                        ? "(null)"
         : p->layout.family == RL_FAMILY_REFERENCE ? "reference"
         : p->layout.family == RL_FAMILY_COPY      ? "copy"
         : p->kernel                               ? "specialised"
                                                   : "generic";
}

relayout_status relayout_plan_wait(relayout_plan *p, relayout_error *err) {
  if (!p) return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  settle(p, 1);
  return RELAYOUT_OK;
}

cl_int rl_enqueue(relayout_plan *p, cl_mem dst, size_t dst_off, cl_mem src,
                  size_t src_off, cl_uint nwait, const cl_event *wait,
                  cl_event *done) {
  cl_command_queue q = p->engine->queue;
  int64_t bytes, base = p->dst.base * relayout_dtype_bits(p->dst.dtype) / 8;
  rl_desc_size_bytes(&bytes, &p->moved, NULL);
  if (base) { /* the bytes before the destination's origin are padding */
    uint8_t pad = rl_pad_byte(&p->dst);
    cl_int rc = clEnqueueFillBuffer(q, dst, &pad, 1, dst_off, (size_t)base,
                                    nwait, wait, NULL);
    if (rc != CL_SUCCESS) return rc;
    dst_off += (size_t)base, nwait = 0, wait = NULL; /* the queue is in order */
  }
  src_off += (size_t)(p->src.base * relayout_dtype_bits(p->src.dtype) / 8);
  if (p->layout.family == RL_FAMILY_COPY)
    return clEnqueueCopyBuffer(q, src, dst, src_off, dst_off, (size_t)bytes,
                               nwait, wait, done);
  settle(p, 0);
  cl_kernel k = p->kernel ? p->kernel : p->generic;
  cl_long soff = (cl_long)(src_off / rl_unit(p->moved_src.dtype)),
          doff = (cl_long)(dst_off / rl_unit(p->moved.dtype));
  cl_int rc = clSetKernelArg(k, 0, sizeof src, &src);
  rc |= clSetKernelArg(k, 1, sizeof soff, &soff);
  rc |= clSetKernelArg(k, 2, sizeof dst, &dst);
  rc |= clSetKernelArg(k, 3, sizeof doff, &doff);
  if (p->channels && p->kernel) /* the generic kernel's is set up with it */
    rc |= clSetKernelArg(k, 4, sizeof p->channels, &p->channels);
  if (rc != CL_SUCCESS) return CL_INVALID_KERNEL_ARGS;
  rc = p->kernel ? clEnqueueNDRangeKernel(q, k, p->work_dims, NULL, p->global,
                                          p->local, nwait, wait, done)
                 : clEnqueueNDRangeKernel(q, k, 1, NULL, &p->generic_global,
                                          &p->generic_local, nwait, wait, done);
  if (rc == CL_SUCCESS) rl_build_go(p->engine);
  return rc;
}

static relayout_status plan_enqueue(relayout_plan *p, cl_mem dst,
                                    size_t dst_offset, cl_mem src,
                                    size_t src_offset, cl_uint nwait,
                                    const cl_event *wait, cl_event *done,
                                    relayout_error *err) {
  if (p->layout.family == RL_FAMILY_REFERENCE)
    return rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                   "this plan runs on the scalar reference%s%s: it cannot "
                   "enqueue on OpenCL buffers",
                   *p->note ? ": " : "", p->note);
  size_t du = rl_unit(p->dst.dtype), su = rl_unit(p->src.dtype);
  if ((dst_offset % du || src_offset % su) && du == su)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "offsets must be multiples of the %zu-byte element", du);
  if (dst_offset % du || src_offset % su)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "offsets must be multiples of the destination's %zu-byte "
                   "and the source's %zu-byte elements",
                   du, su);
  int64_t sb, db;
  size_t have_s = 0, have_d = 0;
  rl_desc_size_bytes(&sb, &p->src, NULL);
  rl_desc_size_bytes(&db, &p->dst, NULL);
  clGetMemObjectInfo(src, CL_MEM_SIZE, sizeof have_s, &have_s, NULL);
  clGetMemObjectInfo(dst, CL_MEM_SIZE, sizeof have_d, &have_d, NULL);
  if (have_s < src_offset || have_s - src_offset < (uint64_t)sb ||
      have_d < dst_offset || have_d - dst_offset < (uint64_t)db)
    return rl_fail(err, RELAYOUT_ERR_BUFFER,
                   "buffers hold %zu and %zu bytes past their offsets; the "
                   "layouts need %lld (source) and %lld (destination)",
                   have_s > src_offset ? have_s - src_offset : 0,
                   have_d > dst_offset ? have_d - dst_offset : 0, (long long)sb,
                   (long long)db);
  /* offsets off the wider units a widened plan moves: its element by
   * element twin, built on first use */
  relayout_plan *run = p;
  size_t moved = rl_unit(p->moved.dtype);
  if (p->layout.family != RL_FAMILY_COPY && moved > du &&
      (dst_offset % moved || src_offset % moved)) {
    relayout_status s =
        p->plain ? RELAYOUT_OK
                 : plan_create(&p->plain, p->engine, &p->dst, &p->src, 0, err);
    if (s) return s;
    if (p->plain->layout.family == RL_FAMILY_REFERENCE)
      return rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                     "offsets off this plan's %zu-byte units need a kernel "
                     "that moves single elements, which runs on the scalar "
                     "reference: %s",
                     moved, p->plain->note);
    run = p->plain;
  }
  cl_int rc =
      rl_enqueue(run, dst, dst_offset, src, src_offset, nwait, wait, done);
  if (rc != CL_SUCCESS)
    return rl_fail(err, RELAYOUT_ERR_UNSUPPORTED,
                   "enqueueing the conversion failed (OpenCL error %d)", rc);
  return RELAYOUT_OK;
}

relayout_status relayout_plan_enqueue(relayout_plan *p, cl_mem dst,
                                      size_t dst_offset, cl_mem src,
                                      size_t src_offset, cl_uint nwait,
                                      const cl_event *wait, cl_event *done,
                                      relayout_error *err) {
  if (!p || !dst || !src)
    return rl_fail(err, RELAYOUT_ERR_ARGUMENT, "NULL argument");
  relayout_status s = rl_engine_enter(p->engine, err);
  if (s) return s;
  s = plan_enqueue(p, dst, dst_offset, src, src_offset, nwait, wait, done, err);
  rl_engine_leave(p->engine);
  return s;
}
