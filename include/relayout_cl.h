/* relayout_cl.h - relayout on OpenCL objects the caller owns
 *
 * For OpenCL applications that chain conversions with their own work: wrap
 * an existing context, device and queue in an engine, and enqueue plans on
 * cl_mem buffers with wait lists and completion events.
 */
#ifndef RELAYOUT_CL_H
#define RELAYOUT_CL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include "relayout.h"
#include "relayout_preprocess.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * An engine on the caller's context, device and queue (an in-order queue),
 * with the options' cache, limits and kernels (their device is ignored;
 * NULL: every default). relayout retains none of the OpenCL objects: they
 * must outlive the engine.
 */
RELAYOUT_API relayout_status relayout_engine_wrap(
    relayout_engine **out, cl_context context, cl_device_id device,
    cl_command_queue queue, const relayout_engine_options *options,
    relayout_error *err);
/** The work-group size relayout launches `items` work-items in on the
 *  engine's device: for a caller that times its own kernel beside
 *  relayout's, spread alike (the bench's copy kernel). */
RELAYOUT_API size_t relayout_engine_group_size(const relayout_engine *engine,
                                               int64_t items);
/** The engine's queue and context (NULL for the reference). */
RELAYOUT_API cl_command_queue
relayout_engine_queue(const relayout_engine *engine);
RELAYOUT_API cl_context relayout_engine_context(const relayout_engine *engine);
/**
 * 1 when the engine's device works in host memory
 * (CL_DEVICE_HOST_UNIFIED_MEMORY, as PoCL's CPU device does): kernels can
 * run on host arrays wrapped with CL_MEM_USE_HOST_PTR, as relayout_plan_run
 * does, instead of copies. 0 otherwise, for the reference, and where the
 * options asked for copies.
 */
RELAYOUT_API int relayout_engine_host_memory(const relayout_engine *engine);

/**
 * Enqueues a preprocessing plan: reads its N frames from byte
 * frames_offset of `frames`, writes the output from byte dst_offset of dst
 * (a multiple of its element size), after the events in wait; *done (if
 * not NULL) receives an event the caller releases. Buffers must belong to
 * the engine's context and be large enough (checked). A plan that runs on
 * the reference cannot enqueue: RELAYOUT_ERR_UNSUPPORTED.
 */
RELAYOUT_API relayout_status relayout_preprocess_enqueue(
    relayout_preprocess_plan *p, cl_mem dst, size_t dst_offset, cl_mem frames,
    size_t frames_offset, cl_uint nwait, const cl_event *wait, cl_event *done,
    relayout_error *err);

/**
 * Enqueues a plan: reads src from byte src_offset, writes dst from byte
 * dst_offset (multiples of the element size; whole bytes for 4-bit types),
 * after the events in wait; *done (if not NULL) receives an event the caller
 * releases. Buffers must belong to the engine's context and be large enough
 * (checked). A reference plan cannot enqueue: RELAYOUT_ERR_UNSUPPORTED.
 * A plan whose kernel moves several elements as one unit (NCHW4 -> CHWN4
 * moves each pixel's 4 int8 channels as one 4-byte word) builds, on the
 * first enqueue at offsets that are not multiples of that unit, a second
 * kernel that moves single elements, and runs that one at such offsets.
 */
RELAYOUT_API relayout_status relayout_plan_enqueue(
    relayout_plan *plan, cl_mem dst, size_t dst_offset, cl_mem src,
    size_t src_offset, cl_uint nwait, const cl_event *wait, cl_event *done,
    relayout_error *err);

#ifdef __cplusplus
}
#endif
#endif /* RELAYOUT_CL_H */
