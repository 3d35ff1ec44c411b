/* peer_onednn.c - oneDNN's reorder as a peer (bench --suite)
 *
 * The relayout descriptor becomes a oneDNN blocked memory descriptor: per
 * dim, the stride of its outermost axis; its inner blocks are the other
 * axes, which must form one dense block at the end of the layout, outermost
 * first. Written against oneDNN 2.x (Debian's libdnnl-dev), where
 * dnnl_memory_desc_t is a public struct. Without oneDNN at build time the
 * peer reports that.
 */
#include "peer.h"

#include "../cli/cli.h"
#include "measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef RELAYOUT_HAVE_ONEDNN
void peer_onednn(peer_result *r, const relayout_desc *s, const relayout_desc *d,
                 const unsigned char *in, const unsigned char *want, int runs) {
  (void)s, (void)d, (void)in, (void)want, (void)runs;
  r->seconds = -1;
  snprintf(r->note, sizeof r->note,
           "not built with oneDNN (apt-get install libdnnl-dev, rebuild)");
}
#else
#include <oneapi/dnnl/dnnl.h>

static int data_type(dnnl_data_type_t *t, relayout_dtype dtype) {
  switch (dtype) {
  case RELAYOUT_F32: *t = dnnl_f32; return 1;
  case RELAYOUT_F16: *t = dnnl_f16; return 1;
  case RELAYOUT_BF16: *t = dnnl_bf16; return 1;
  case RELAYOUT_I8: *t = dnnl_s8; return 1;
  case RELAYOUT_U8: *t = dnnl_u8; return 1;
  case RELAYOUT_I32: *t = dnnl_s32; return 1;
  default: return 0;
  }
}

/* d as a oneDNN blocked descriptor; 0 with r->note when it has none. */
static int memory_desc(dnnl_memory_desc_t *md, const relayout_desc *d,
                       peer_result *r) {
  if (!peer_expressible(r, d)) return 0;
  memset(md, 0, sizeof *md);
  if (!data_type(&md->data_type, d->dtype)) {
    snprintf(r->note, sizeof r->note, "no oneDNN type for %s",
             relayout_dtype_name(d->dtype));
    return 0;
  }
  md->ndims = d->ndims;
  md->format_kind = dnnl_blocked;
  dnnl_blocking_desc_t *b = &md->format_desc.blocking;
  int64_t dense = 1; /* the inner block's elements so far, innermost up */
  int inner[RELAYOUT_MAX_AXES], n = 0;
  for (int i = d->naxes - 1; i >= 0; i--) { /* innermost first */
    const relayout_axis *a = &d->axes[i];
    int outermost = 1;
    for (int j = 0; j < d->naxes; j++)
      if (d->axes[j].dim == a->dim && d->axes[j].weight > a->weight)
        outermost = 0;
    if (outermost) {
      b->strides[a->dim] = a->stride;
      continue;
    }
    if (a->stride != dense || n == DNNL_MAX_NDIMS) {
      snprintf(r->note, sizeof r->note,
               "blocks not dense at the end of the layout");
      return 0;
    }
    dense *= a->extent;
    inner[n++] = i;
  }
  for (int k = 0; k < n; k++) { /* outermost block first */
    const relayout_axis *a = &d->axes[inner[n - 1 - k]];
    int64_t weight = 1; /* oneDNN's: the dim's blocks inside this one */
    for (int j = 0; j < n - 1 - k; j++)
      if (d->axes[inner[j]].dim == a->dim) weight *= d->axes[inner[j]].extent;
    if (weight != a->weight) {
      snprintf(r->note, sizeof r->note, "blocks of one dim out of order");
      return 0;
    }
    b->inner_blks[k] = a->extent;
    b->inner_idxs[k] = a->dim;
  }
  b->inner_nblks = n;
  for (int i = 0; i < d->ndims; i++) {
    md->dims[i] = d->dims[i];
    md->padded_dims[i] = d->padded[i];
  }
  return 1;
}

typedef struct reorder {
  dnnl_primitive_t prim;
  dnnl_stream_t stream;
  dnnl_exec_arg_t args[2];
} reorder;

static int run_reorder(void *ctx) {
  reorder *o = ctx;
  return dnnl_primitive_execute(o->prim, o->stream, 2, o->args) !=
                     dnnl_success ||
                 dnnl_stream_wait(o->stream) != dnnl_success
             ? -1
             : 0;
}

void peer_onednn(peer_result *r, const relayout_desc *s, const relayout_desc *d,
                 const unsigned char *in, const unsigned char *want, int runs) {
  dnnl_memory_desc_t smd, dmd;
  dnnl_engine_t eng = NULL;
  dnnl_primitive_desc_t pd = NULL;
  reorder o = {0};
  dnnl_memory_t sm = NULL, dm = NULL;
  int64_t db;
  relayout_desc_size_bytes(&db, d, NULL);
  unsigned char *out = malloc((size_t)db);
  r->seconds = -1;
  if (!out) {
    snprintf(r->note, sizeof r->note, "out of memory");
    return;
  }
  memset(out, 0xA5, (size_t)db); /* poisoned: unwritten bytes show */
  if (!memory_desc(&smd, s, r) || !memory_desc(&dmd, d, r)) goto done;
  if (dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success ||
      dnnl_stream_create(&o.stream, eng, dnnl_stream_default_flags) !=
          dnnl_success) {
    snprintf(r->note, sizeof r->note, "no oneDNN CPU engine");
    goto done;
  }
  if (dnnl_reorder_primitive_desc_create(&pd, &smd, eng, &dmd, eng, NULL) !=
      dnnl_success) {
    snprintf(r->note, sizeof r->note, "oneDNN has no reorder for this pair");
    goto done;
  }
  const char *impl = "?";
  dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
  if (dnnl_primitive_create(&o.prim, pd) != dnnl_success ||
      dnnl_memory_create(&sm, &smd, eng, (void *)in) != dnnl_success ||
      dnnl_memory_create(&dm, &dmd, eng, out) != dnnl_success) {
    snprintf(r->note, sizeof r->note, "oneDNN setup failed");
    goto done;
  }
  o.args[0] = (dnnl_exec_arg_t){DNNL_ARG_FROM, sm};
  o.args[1] = (dnnl_exec_arg_t){DNNL_ARG_TO, dm};
  double t0 = cli_now();
  if (run_reorder(&o)) {
    snprintf(r->note, sizeof r->note, "oneDNN reorder failed");
    goto done;
  }
  r->same = !memcmp(out, want, (size_t)db); /* the first run's output */
  r->runs = peer_runs(cli_now() - t0, runs);
  r->seconds = bench_median(run_reorder, &o, r->runs);
  snprintf(r->note, sizeof r->note, "reorder %s", impl);
done:
  if (sm) dnnl_memory_destroy(sm);
  if (dm) dnnl_memory_destroy(dm);
  if (o.prim) dnnl_primitive_destroy(o.prim);
  if (pd) dnnl_primitive_desc_destroy(pd);
  if (o.stream) dnnl_stream_destroy(o.stream);
  if (eng) dnnl_engine_destroy(eng);
  free(out);
}
#endif
