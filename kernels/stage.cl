/* stage.cl - GPUs, any affine map: a box through local memory; the
 * generated rl_stage_start, rl_stage_load and rl_stage_store (RL_LOCAL,
 * RL_NAXES, RL_NDIMS) place it */

/* For GPUs, any affine map: each work-group moves one box of the tensor
 * through local memory. The host's header (rl_stage_*) reads the box in
 * source order, so that neighbouring work-items read neighbouring source
 * elements, and writes it in destination order, likewise; each work-item's
 * share is unrolled, with its offsets a base from its id plus a constant per
 * step. A cast (RL_TRANSFORM) is applied as the box is written out; per
 * channel, each element's channel found from its destination offset. */
__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void
rl_stage(__global const RL_TS *restrict src, long src_off,
         __global RL_T *restrict dst, long dst_off RL_QC_ARG) {
  __local RL_TS box[RL_LOCAL];
  RL_I d, s, m[RL_NAXES], x[RL_NDIMS];
  uint lid = (uint)get_local_id(0);
  rl_stage_start((RL_I)get_group_id(0), &d, &s, m, x);
  rl_stage_load(src + src_off + s, box, lid, m, x);
  barrier(CLK_LOCAL_MEM_FENCE);
  rl_stage_store(dst + dst_off + d, box, lid, m, x, d RL_QC_PASS);
}
