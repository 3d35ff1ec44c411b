/* test_onednn_tags.c - oneDNN's format tags mean in relayout what they mean
 * in oneDNN: a plain ND array converted to each tag by relayout's reference
 * equals oneDNN's reorder from abcd to that tag, byte for byte (padding
 * included), at f32 and s8. Built where the bench finds oneDNN 2.x. */
#include "check.h"

#include <oneapi/dnnl/dnnl.h>

static const struct {
  const char *text;
  dnnl_format_tag_t tag;
} tags[] = {
    {"acdb", dnnl_acdb},
    {"cdba", dnnl_cdba},
    {"bacd", dnnl_bacd},
    {"abdc", dnnl_abdc},
    {"dcab", dnnl_dcab},
    {"bcda", dnnl_bcda},
    {"aBcd8b", dnnl_aBcd8b},
    {"aBcd16b", dnnl_aBcd16b},
    {"aBcd4b", dnnl_aBcd4b},
    {"Abcd8a", dnnl_Abcd8a},
    {"Acdb16a", dnnl_Acdb16a},
    {"Acdb32a", dnnl_Acdb32a},
    {"ABcd16a16b", dnnl_ABcd16a16b},
    {"ABcd8b8a", dnnl_ABcd8b8a},
    {"BAcd16a16b", dnnl_BAcd16a16b},
    {"aBCd16b16c", dnnl_aBCd16b16c},
    {"ABcd4b16a4b", dnnl_ABcd4b16a4b},
};

/* ND (dims) -> tag through oneDNN's reorder into out (poisoned first). */
static int onednn(unsigned char *out, size_t size, const void *in,
                  const int64_t *extents, dnnl_data_type_t dt,
                  dnnl_format_tag_t tag) {
  dnnl_dims_t dims = {0};
  memcpy(dims, extents, 4 * sizeof *extents);
  dnnl_engine_t eng;
  dnnl_stream_t stream;
  dnnl_memory_desc_t smd, dmd;
  dnnl_memory_t sm, dm;
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t prim;
  if (dnnl_engine_create(&eng, dnnl_cpu, 0) ||
      dnnl_stream_create(&stream, eng, dnnl_stream_default_flags))
    return -1;
  int bad =
      dnnl_memory_desc_init_by_tag(&smd, 4, dims, dt, dnnl_abcd) ||
      dnnl_memory_desc_init_by_tag(&dmd, 4, dims, dt, tag) ||
      dnnl_memory_desc_get_size(&dmd) != size ||
      dnnl_memory_create(&sm, &smd, eng, (void *)in) ||
      dnnl_memory_create(&dm, &dmd, eng, out) ||
      dnnl_reorder_primitive_desc_create(&pd, &smd, eng, &dmd, eng, NULL) ||
      dnnl_primitive_create(&prim, pd);
  if (!bad) {
    dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, sm}, {DNNL_ARG_TO, dm}};
    bad = dnnl_primitive_execute(prim, stream, 2, args) ||
          dnnl_stream_wait(stream);
    dnnl_primitive_destroy(prim);
    dnnl_primitive_desc_destroy(pd);
    dnnl_memory_destroy(sm);
    dnnl_memory_destroy(dm);
  }
  dnnl_stream_destroy(stream);
  dnnl_engine_destroy(eng);
  return bad ? -1 : 0;
}

int main(void) {
  const int64_t dims[4] = {19, 21, 3, 5};
  const struct {
    relayout_dtype t;
    dnnl_data_type_t dt;
  } types[] = {{RELAYOUT_F32, dnnl_f32}, {RELAYOUT_I8, dnnl_s8}};
  relayout_layout *nd;
  CHECK_OK(relayout_layout_parse(&nd, "ND", &e_));
  for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
    size_t in_size =
        (size_t)(19 * 21 * 3 * 5 * relayout_dtype_bits(types[k].t) / 8);
    unsigned char *in = malloc(in_size);
    for (size_t i = 0; i < in_size; i++) in[i] = (unsigned char)rng_next();
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++) {
      relayout_layout *l;
      relayout_desc s, d;
      int64_t bytes;
      CHECK_OK(relayout_layout_parse(&l, tags[i].text, &e_));
      CHECK_OK(relayout_bind(&s, &d, nd, l, types[k].t, 4, dims, NULL, 0, &e_));
      relayout_desc_size_bytes(&bytes, &d, NULL);
      guarded want = guarded_alloc((size_t)bytes, 0xA5),
              got = guarded_alloc((size_t)bytes, 0x5A);
      CHECK(onednn(want.data, want.size, in, dims, types[k].dt, tags[i].tag) ==
                0,
            "oneDNN reorder to %s (%zu bytes)", tags[i].text, want.size);
      CHECK_OK(
          relayout_convert_ref(&d, got.data, got.size, &s, in, in_size, &e_));
      CHECK(!memcmp(want.data, got.data, want.size),
            "%s %s: relayout's bytes are not oneDNN's", tags[i].text,
            relayout_dtype_name(types[k].t));
      guarded_free(&want);
      guarded_free(&got);
      relayout_layout_free(l);
    }
    free(in);
  }
  relayout_layout_free(nd);
  return check_summary();
}
