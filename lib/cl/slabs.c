/* slabs.c - tensors beyond a device's largest allocation, run in slabs
 *
 * When one logical dim is the outermost axis of both layouts, unblocked and
 * unpadded, a slab of it is one contiguous byte range on each side with the
 * same inner strides: the conversion runs slab by slab through plans of the
 * narrowed tensor, each within the device's largest allocation.
 */
#include "engine.h"

#include <string.h>

/* The first axis that counts (extent > 1) of a descriptor. */
static const relayout_axis *outermost(const rl_desc *d) {
  for (int i = 0; i < d->naxes; i++)
    if (d->axes[i].extent > 1) return &d->axes[i];
  return NULL;
}

static int plain_outer(const rl_desc *d, const relayout_axis *a) {
  int bits = relayout_dtype_bits(d->dtype);
  return a && d->compact && !rl_remapped(d) && a->weight == 1 &&
         a->extent == d->dims[a->dim] && d->padded[a->dim] == d->dims[a->dim] &&
         !d->pad_before[a->dim] && (a->stride * bits) % 8 == 0;
}

static int64_t slab_bytes(const rl_desc *d, int dim) {
  for (int i = 0; i < d->naxes; i++)
    if (d->axes[i].dim == dim && d->axes[i].extent > 1)
      return d->axes[i].stride * relayout_dtype_bits(d->dtype) / 8;
  return 0;
}

int rl_split_dim(const rl_desc *dst, const rl_desc *src, uint64_t max_alloc) {
  const relayout_axis *a = outermost(dst), *b = outermost(src);
  if (!plain_outer(dst, a) || !plain_outer(src, b) || a->dim != b->dim ||
      (uint64_t)slab_bytes(dst, a->dim) > max_alloc ||
      (uint64_t)slab_bytes(src, a->dim) > max_alloc)
    return -1;
  return a->dim;
}

/* The descriptor narrowed to positions at..at+count-1 of its outermost dim
 * d (the offset is the caller's; a per-channel quantization along d moves
 * on to channel at). */
static void narrow(rl_desc *out, const rl_desc *in, int d, int64_t at,
                   int64_t count) {
  *out = *in;
  if (out->per_channel == d + 1) {
    out->qscales += at;
    if (out->qzps) out->qzps += at;
  }
  out->dims[d] = out->vdims[d] = out->padded[d] = count;
  for (int i = 0; i < out->naxes; i++)
    if (out->axes[i].dim == d) {
      out->span -= (out->axes[i].extent - count) * out->axes[i].stride;
      out->axes[i].extent = count;
    }
}

int64_t rl_slab_count(const relayout_plan *p, int dim) {
  int64_t ss = slab_bytes(&p->src, dim), ds = slab_bytes(&p->dst, dim);
  return (int64_t)p->engine->max_alloc / (ss > ds ? ss : ds);
}

relayout_status rl_slab_job(relayout_job *j, relayout_plan *p,
                            unsigned char *dst, const unsigned char *src,
                            int dim, int64_t at, int64_t count,
                            relayout_error *err) {
  int64_t ss = slab_bytes(&p->src, dim), ds = slab_bytes(&p->dst, dim);
  rl_desc s, d;
  narrow(&s, &p->src, dim, at, count);
  narrow(&d, &p->dst, dim, at, count);
  *j = (relayout_job){NULL, dst + at * ds, (size_t)(count * ds), src + at * ss,
                      (size_t)(count * ss)};
  return rl_plan_create(&j->plan, p->engine, &d, &s, err);
}
