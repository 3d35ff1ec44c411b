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

#include "cli.h"
#include "measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef RELAYOUT_HAVE_ONEDNN
void peer_onednn(peer_result *r, const peer_tensors *t, int n, int runs) {
  (void)t, (void)n, (void)runs;
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
  relayout_dtype dtype = relayout_desc_dtype(d);
  if (!data_type(&md->data_type, dtype)) {
    snprintf(r->note, sizeof r->note, "no oneDNN type for %s",
             relayout_dtype_name(dtype));
    return 0;
  }
  relayout_axis axes[RELAYOUT_MAX_AXES];
  relayout_vdim v[RELAYOUT_MAX_DIMS + 1];
  int naxes = relayout_desc_axes(d, axes);
  relayout_desc_vdims(d, v);
  md->ndims = relayout_desc_dims(d, NULL, md->dims);
  md->format_kind = dnnl_blocked;
  dnnl_blocking_desc_t *b = &md->format_desc.blocking;
  int64_t dense = 1; /* the inner block's elements so far, innermost up */
  int inner[RELAYOUT_MAX_AXES], n = 0;
  for (int i = naxes - 1; i >= 0; i--) { /* innermost first */
    const relayout_axis *a = &axes[i];
    int outermost = 1;
    for (int j = 0; j < naxes; j++)
      if (axes[j].dim == a->dim && axes[j].weight > a->weight) outermost = 0;
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
    const relayout_axis *a = &axes[inner[n - 1 - k]];
    int64_t weight = 1; /* oneDNN's: the dim's blocks inside this one */
    for (int j = 0; j < n - 1 - k; j++)
      if (axes[inner[j]].dim == a->dim) weight *= axes[inner[j]].extent;
    if (weight != a->weight) {
      snprintf(r->note, sizeof r->note, "blocks of one dim out of order");
      return 0;
    }
    b->inner_blks[k] = a->extent;
    b->inner_idxs[k] = a->dim;
  }
  b->inner_nblks = n;
  for (int i = 0; i < md->ndims; i++) md->padded_dims[i] = v[i].padded;
  return 1;
}

/* One tensor's reorder, on memory of its own. */
typedef struct reorder {
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t prim;
  dnnl_memory_t sm, dm;
  unsigned char *src, *dst; /* src NULL: the caller's `in` */
} reorder;

typedef struct reorders {
  dnnl_stream_t stream;
  reorder *o;
  int n;
} reorders;

/* Every tensor's reorder, back to back, and one wait. */
static int run_reorders(void *ctx) {
  reorders *b = ctx;
  for (int i = 0; i < b->n; i++) {
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, b->o[i].sm},
                               {DNNL_ARG_TO, b->o[i].dm}};
    if (dnnl_primitive_execute(b->o[i].prim, b->stream, 2, args) !=
        dnnl_success)
      return -1;
  }
  return dnnl_stream_wait(b->stream) != dnnl_success ? -1 : 0;
}

/* Sets up o, instance `instance` of t: its primitive and memory (instance
 * 0 reads t->in, the others a copy of their own), its
 * destination poisoned. 0, or -1 with r->note. */
static int setup(reorder *o, const peer_tensors *t, int instance,
                 dnnl_engine_t eng, peer_result *r) {
  dnnl_memory_desc_t smd, dmd;
  int64_t sb, db;
  relayout_desc_size_bytes(&sb, t->s, NULL);
  relayout_desc_size_bytes(&db, t->d, NULL);
  if (!memory_desc(&smd, t->s, r) || !memory_desc(&dmd, t->d, r)) return -1;
  /* a quantizing cast: oneDNN multiplies by its output scales */
  dnnl_primitive_attr_t attr = NULL;
  float inv[4096];
  int64_t n = t->q.count;
  for (int64_t i = 0; i < n && n <= 4096; i++) inv[i] = 1.0f / t->q.scales[i];
  if (n > 4096 ||
      (n && (dnnl_primitive_attr_create(&attr) != dnnl_success ||
             dnnl_primitive_attr_set_output_scales(
                 attr, n, n > 1 ? 1 << t->q.dim : 0, inv) != dnnl_success))) {
    if (attr) dnnl_primitive_attr_destroy(attr);
    snprintf(r->note, sizeof r->note, "oneDNN takes no such scales");
    return -1;
  }
  dnnl_status_t st =
      dnnl_reorder_primitive_desc_create(&o->pd, &smd, eng, &dmd, eng, attr);
  if (attr) dnnl_primitive_attr_destroy(attr);
  if (st != dnnl_success) {
    snprintf(r->note, sizeof r->note, "oneDNN has no reorder for this pair");
    return -1;
  }
  if ((instance && !(o->src = malloc((size_t)sb))) ||
      !(o->dst = malloc((size_t)db))) {
    snprintf(r->note, sizeof r->note, "out of memory");
    return -1;
  }
  if (o->src) memcpy(o->src, t->in, (size_t)sb);
  memset(o->dst, 0xA5, (size_t)db); /* poisoned: unwritten bytes show */
  if (dnnl_primitive_create(&o->prim, o->pd) != dnnl_success ||
      dnnl_memory_create(&o->sm, &smd, eng, o->src ? o->src : (void *)t->in) !=
          dnnl_success ||
      dnnl_memory_create(&o->dm, &dmd, eng, o->dst) != dnnl_success) {
    snprintf(r->note, sizeof r->note, "oneDNN setup failed");
    return -1;
  }
  return 0;
}

void peer_onednn(peer_result *r, const peer_tensors *t, int n, int runs) {
  dnnl_engine_t eng = NULL;
  reorders b = {0};
  int total = 0;
  for (int i = 0; i < n; i++) total += t[i].count;
  r->seconds = -1;
  if (!(b.o = calloc((size_t)total, sizeof *b.o))) {
    snprintf(r->note, sizeof r->note, "out of memory");
    return;
  }
  if (dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success ||
      dnnl_stream_create(&b.stream, eng, dnnl_stream_default_flags) !=
          dnnl_success) {
    snprintf(r->note, sizeof r->note, "no oneDNN CPU engine");
    goto done;
  }
  for (int i = 0; i < n; i++)
    for (int c = 0; c < t[i].count; c++)
      if (setup(&b.o[b.n++], &t[i], c, eng, r)) goto done;
  double t0 = cli_now();
  if (run_reorders(&b)) {
    snprintf(r->note, sizeof r->note, "oneDNN reorder failed");
    goto done;
  }
  r->same = 1; /* the first run's outputs */
  for (int i = 0, k = 0; i < n; i++) {
    int64_t db;
    relayout_desc_size_bytes(&db, t[i].d, NULL);
    for (int c = 0; c < t[i].count; c++, k++)
      r->same &= !memcmp(b.o[k].dst, t[i].want, (size_t)db);
  }
  r->runs = peer_runs(cli_now() - t0, runs);
  r->seconds = bench_median(run_reorders, &b, r->runs);
  const char *impl = "?";
  dnnl_primitive_desc_query(b.o[0].pd, dnnl_query_impl_info_str, 0, &impl);
  snprintf(r->note, sizeof r->note, "reorder %s", impl);
done:
  for (int i = 0; i < b.n; i++) {
    if (b.o[i].sm) dnnl_memory_destroy(b.o[i].sm);
    if (b.o[i].dm) dnnl_memory_destroy(b.o[i].dm);
    if (b.o[i].prim) dnnl_primitive_destroy(b.o[i].prim);
    if (b.o[i].pd) dnnl_primitive_desc_destroy(b.o[i].pd);
    free(b.o[i].src);
    free(b.o[i].dst);
  }
  free(b.o);
  if (b.stream) dnnl_stream_destroy(b.stream);
  if (eng) dnnl_engine_destroy(eng);
}
#endif
