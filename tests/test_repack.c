/* test_repack.c - relayout repack end to end on generated checkpoints:
 * converted tensors equal the reference conversion, restore gives the
 * original back byte for byte, shards and their index, and hostile files
 * refused with a clear error and no output.
 * usage: test_repack PATH/TO/relayout */
#include "check.h"
#include "run_cli.h"

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

/* One tensor of a generated checkpoint and what the rules below should make
 * of it (to == NULL: copied unchanged). */
typedef struct spec {
  const char *name, *dtype;
  relayout_dtype bits;
  int rank;
  int64_t shape[4];
  const char *from, *to;
} spec;

#define RULES                                                                  \
  "--rule 'tf.kernel:4d:HWCN=FRACTAL_Z' --rule 'odd.*:NCHW=NHWC' "             \
  "--rule '*.weight:4d=FRACTAL_Z' "                                            \
  "--rule '*:2d=29' --rule 'emb*=NC1HWC0'"

static const spec model[] = {
    {"conv1.weight", "F16", RELAYOUT_F16, 4, {64, 3, 7, 7}, "ND", "FRACTAL_Z"},
    {"conv1.bias", "F16", RELAYOUT_F16, 1, {64}, NULL, NULL},
    {"layer1.conv.weight",
     "F32",
     RELAYOUT_F32,
     4,
     {17, 5, 3, 3},
     "ND",
     "FRACTAL_Z"},
    {"norm.weight", "F16", RELAYOUT_F16, 1, {7}, NULL, NULL},
    {"fc.weight", "F32", RELAYOUT_F32, 2, {100, 129}, "ND", "FRACTAL_NZ"},
    {"fc.bias", "F32", RELAYOUT_F32, 1, {100}, NULL, NULL},
    {"odd.act", "U8", RELAYOUT_U8, 4, {1, 3, 5, 7}, "NCHW", "NHWC"},
    {"embed.table", "BF16", RELAYOUT_BF16, 2, {50, 33}, "ND", "FRACTAL_NZ"},
    {"q.proj", "I8", RELAYOUT_I8, 2, {33, 65}, "ND", "FRACTAL_NZ"},
    {"tf.kernel", "F32", RELAYOUT_F32, 4, {3, 3, 5, 17}, "HWCN", "FRACTAL_Z"},
    {"mask", "BOOL", RELAYOUT_BOOL, 3, {2, 3, 5}, NULL, NULL},
    {"empty", "F32", RELAYOUT_F32, 2, {0, 4}, NULL, NULL},
};
#define NMODEL ((int)(sizeof model / sizeof model[0]))

static size_t spec_bytes(const spec *s) {
  size_t n = (size_t)relayout_dtype_bits(s->bits) / 8;
  for (int d = 0; d < s->rank; d++) n *= (size_t)s->shape[d];
  return n;
}

static void put_file(const char *path, const void *a, size_t na, const void *b,
                     size_t nb) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(a, 1, na, f) != na || (nb && fwrite(b, 1, nb, f) != nb)) {
    perror(path);
    exit(2);
  }
  fclose(f);
}

/* Header length as 8 little-endian bytes, the text, the data. */
static void put_raw(const char *path, uint64_t len, const char *text,
                    const void *data, size_t nd) {
  size_t nt = strlen(text);
  unsigned char *buf = malloc(8 + nt + nd + 1);
  for (int i = 0; i < 8; i++) buf[i] = (unsigned char)(len >> (8 * i));
  memcpy(buf + 8, text, nt);
  if (nd) memcpy(buf + 8 + nt, data, nd);
  put_file(path, buf, 8 + nt + nd, NULL, 0);
  free(buf);
}

/* A checkpoint of specs[first..first+n) with random contents, written as
 * the safetensors library writes them: compact JSON padded with spaces. */
static void write_specs(const char *path, const spec *specs, int n,
                        int metadata) {
  json_t *h = json_object();
  if (metadata)
    json_object_set_new(h, "__metadata__", json_pack("{s:s}", "format", "pt"));
  size_t total = 0;
  for (int i = 0; i < n; i++) total += spec_bytes(&specs[i]);
  unsigned char *data = malloc(total + 1);
  for (size_t i = 0; i < total; i++) data[i] = (unsigned char)rng_next();
  size_t at = 0;
  for (int i = 0; i < n; i++) {
    const spec *s = &specs[i];
    json_t *shape = json_array();
    for (int d = 0; d < s->rank; d++)
      json_array_append_new(shape, json_integer(s->shape[d]));
    size_t end = at + spec_bytes(s);
    json_object_set_new(h, s->name,
                        json_pack("{s:s, s:o, s:[I,I]}", "dtype", s->dtype,
                                  "shape", shape, "data_offsets",
                                  (json_int_t)at, (json_int_t)end));
    at = end;
  }
  char *text = json_dumps(h, JSON_COMPACT);
  size_t nt = strlen(text), padded = (nt + 7) / 8 * 8;
  char *head = malloc(padded + 1);
  memcpy(head, text, nt);
  memset(head + nt, ' ', padded - nt);
  head[padded] = 0;
  unsigned char *file = malloc(8 + padded + total);
  for (int i = 0; i < 8; i++) file[i] = (unsigned char)(padded >> (8 * i));
  memcpy(file + 8, head, padded);
  memcpy(file + 8 + padded, data, total);
  put_file(path, file, 8 + padded + total, NULL, 0);
  free(file);
  free(head);
  free(text);
  free(data);
  json_decref(h);
}

/* model[first .. first + n) as a safetensors file. */
static void write_model(const char *path, int first, int n, int metadata) {
  write_specs(path, model + first, n, metadata);
}

/* A safetensors file as the test reads it, independently of the CLI. */
typedef struct st_view {
  unsigned char *file;
  size_t size;
  json_t *header;
  const unsigned char *data;
} st_view;

static int read_view(st_view *v, const char *path) {
  memset(v, 0, sizeof *v);
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  fseek(f, 0, SEEK_END);
  v->size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  v->file = malloc(v->size + 1);
  size_t got = fread(v->file, 1, v->size, f);
  fclose(f);
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--) n = n << 8 | v->file[i];
  if (got != v->size || v->size < 8 || n > v->size - 8) return -1;
  v->header = json_loadb((const char *)v->file + 8, n, 0, NULL);
  v->data = v->file + 8 + n;
  return v->header ? 0 : -1;
}

static void free_view(st_view *v) {
  free(v->file);
  json_decref(v->header);
}

/* A tensor's bytes, shape and dtype in a view; NULL when absent. */
static const unsigned char *tensor(const st_view *v, const char *name,
                                   size_t *size, int *rank, int64_t *shape,
                                   const char **dtype) {
  json_t *t = json_object_get(v->header, name);
  if (!t) return NULL;
  json_int_t b =
      json_integer_value(json_array_get(json_object_get(t, "data_offsets"), 0));
  json_int_t e =
      json_integer_value(json_array_get(json_object_get(t, "data_offsets"), 1));
  json_t *s = json_object_get(t, "shape");
  *rank = (int)json_array_size(s);
  for (int i = 0; i < *rank; i++)
    shape[i] = json_integer_value(json_array_get(s, (size_t)i));
  *dtype = json_string_value(json_object_get(t, "dtype"));
  *size = (size_t)(e - b);
  return v->data + b;
}

/* No file and no temp file at path. */
static int absent(const char *path) {
  char cmd[600];
  struct stat st;
  snprintf(cmd, sizeof cmd, "ls '%s'.tmp-* >/dev/null 2>&1", path);
  return stat(path, &st) != 0 && system(cmd) != 0;
}

static int same_files(const char *a, const char *b) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", a, b);
  return system(cmd) == 0;
}

/* Every tensor of specs[first..first+n) in the repacked file out: the
 * reference conversion of its bytes in in, or the bytes unchanged. */
static void check_repacked(const char *in, const char *out, int first, int n) {
  st_view vi, vo;
  CHECK(read_view(&vi, in) == 0 && read_view(&vo, out) == 0, "%s, %s", in, out);
  if (!vi.header || !vo.header) return;
  for (int i = first; i < first + n; i++) {
    const spec *s = &model[i];
    size_t isz, osz;
    int irank, orank;
    int64_t ishape[RELAYOUT_MAX_AXES], oshape[RELAYOUT_MAX_AXES];
    const char *idt, *odt;
    const unsigned char *src = tensor(&vi, s->name, &isz, &irank, ishape, &idt);
    const unsigned char *got = tensor(&vo, s->name, &osz, &orank, oshape, &odt);
    CHECK(src && got && !strcmp(odt, s->dtype), "%s in %s", s->name, out);
    if (!src || !got) continue;
    if (!s->to) {
      CHECK(osz == isz && !memcmp(src, got, isz) && orank == s->rank,
            "%s copied unchanged", s->name);
      continue;
    }
    relayout_layout *a, *b;
    relayout_desc sd, dd;
    int64_t want;
    CHECK_OK(relayout_layout_parse(&a, s->from, &e_));
    CHECK_OK(relayout_layout_parse(&b, s->to, &e_));
    CHECK_OK(relayout_bind(&sd, &dd, a, b, s->bits, s->rank, s->shape, NULL, 0,
                           &e_));
    relayout_desc_size_bytes(&want, &dd, NULL);
    int prank;
    int64_t pshape[RELAYOUT_MAX_AXES];
    relayout_desc_physical_shape(&prank, pshape, &dd);
    CHECK(orank == prank &&
              !memcmp(oshape, pshape, sizeof *pshape * (size_t)prank),
          "%s: stored in %s's physical shape", s->name, s->to);
    CHECK(osz == (size_t)want, "%s: %zu bytes, want %lld", s->name, osz,
          (long long)want);
    if (osz == (size_t)want) {
      unsigned char *ref = malloc(osz);
      CHECK_OK(relayout_convert_ref(&dd, ref, osz, &sd, src, isz, &e_));
      CHECK(!memcmp(ref, got, osz), "%s equals the reference %s -> %s", s->name,
            s->from, s->to);
      free(ref);
    }
    relayout_layout_free(a);
    relayout_layout_free(b);
  }
  free_view(&vi);
  free_view(&vo);
}

static void test_round_trip(int metadata) {
  write_model("m.st", 0, NMODEL, metadata);
  CHECK(cli("repack m.st r.st " RULES) == 0, "repack");
  check_repacked("m.st", "r.st", 0, NMODEL);
  CHECK(cli("repack --restore r.st back.st") == 0, "restore");
  CHECK(same_files("m.st", "back.st"), "restore gives the file back");
  /* The same bytes on the reference, and with slots smaller than most
   * tensors, so that groups, lone tensors and unaligned sources all run. */
  CHECK(cli("repack m.st ref.st --device ref " RULES) == 0, "repack on ref");
  CHECK(same_files("r.st", "ref.st"), "device and reference agree");
  CHECK(cli("repack m.st small.st --max-memory 40K " RULES) == 0, "small");
  CHECK(same_files("r.st", "small.st"), "small slots give the same file");
  /* The upload/download path of discrete GPUs, on the same device. */
  setenv("RELAYOUT_UNIFIED", "0", 1);
  CHECK(cli("repack m.st copied.st " RULES) == 0 &&
            cli("repack m.st small.st --max-memory 40K " RULES) == 0,
        "repack through uploads and downloads");
  unsetenv("RELAYOUT_UNIFIED");
  CHECK(same_files("r.st", "copied.st") && same_files("r.st", "small.st"),
        "uploads and downloads give the same file");
  CHECK(cli("repack r.st x.st " RULES) == 1 && said("restore it first"),
        "a repacked file is not repacked again");
  CHECK(cli("repack --restore m.st x.st") == 1 && said("nothing to restore"),
        "restore needs a repacked file");
  /* A key a restore would take for a record is refused, not lost later. */
  const char *h = "{\"__metadata__\":{\"relayout:x\":\"mine\"},"
                  "\"x\":{\"dtype\":\"U8\",\"shape\":[2,2],"
                  "\"data_offsets\":[0,4]}}";
  put_raw("own.st", strlen(h), h, "abcd", 4);
  CHECK(cli("repack own.st x.st --rule '*=ND'") == 1 &&
            said("'relayout:x' uses the prefix"),
        "metadata under relayout's prefix");
  CHECK(absent("x.st"), "no output after a refusal");
  /* A 'relayout' key of the user's own: one answer from repack and restore */
  h = "{\"__metadata__\":{\"relayout\":\"mine\"},"
      "\"x\":{\"dtype\":\"U8\",\"shape\":[2,2],\"data_offsets\":[0,4]}}";
  put_raw("mine.st", strlen(h), h, "abcd", 4);
  CHECK(cli("repack mine.st x.st --rule '*=ND'") == 1 &&
            said("key 'relayout' holds 'mine', not relayout's marker"),
        "repack of a file with a key 'relayout' of its own");
  CHECK(cli("repack --restore mine.st x.st") == 1 &&
            said("key 'relayout' holds 'mine', not relayout's marker"),
        "restore of the same file says the same");
  /* A rule that selects no tensor is reported; the run ends in a summary */
  CHECK(cli("repack m.st r2.st --rule 'nothing.*=NHWC' " RULES) == 0 &&
            said("warning: rule 'nothing.*=NHWC' selected no tensor") &&
            said("12 tensors (7 converted, 5 copied) into r2.st"),
        "an unused rule and the summary line");
  CHECK(cli("repack m.st r3.st --json --rule 'fc.*:2d=NZ' --rule "
            "'fc.weight=ND' " RULES) == 0,
        "repack --json");
  char *out = slurp("out.txt");
  json_t *j = out ? json_loads(out, 0, NULL) : NULL;
  json_t *unused = json_object_get(j, "unused_rules");
  CHECK(
      json_array_size(unused) == 2 &&
          !strcmp(json_string_value(json_array_get(unused, 0)),
                  "fc.weight=ND") &&
          !strcmp(json_string_value(json_array_get(unused, 1)), "emb*=NC1HWC0"),
      "--json lists the rules that earlier ones shadowed");
  json_decref(j);
  free(out);
}

/* The tensor `name` of model, converted from `from` to `to` and cast to
 * dtype t, equals the bytes stored under that name in out (of dtype name
 * dt); back: the conversion the other way, from the stored tensor. */
static void check_cast(const char *in, const char *out, const char *name,
                       const char *to, relayout_dtype t, const char *dt,
                       int back) {
  const spec *s = model;
  while (strcmp(s->name, name)) s++;
  st_view vi, vo;
  CHECK(read_view(&vi, in) == 0 && read_view(&vo, out) == 0, "%s, %s", in, out);
  size_t isz, osz;
  int irank, orank;
  int64_t ishape[RELAYOUT_MAX_AXES], oshape[RELAYOUT_MAX_AXES];
  const char *idt, *odt;
  const unsigned char *src = tensor(&vi, name, &isz, &irank, ishape, &idt);
  const unsigned char *got = tensor(&vo, name, &osz, &orank, oshape, &odt);
  CHECK(src && got && !strcmp(odt, dt), "%s stored as %s in %s", name, dt, out);
  relayout_layout *a, *b;
  relayout_desc sd, dd;
  CHECK_OK(relayout_layout_parse(&a, "ND", &e_));
  CHECK_OK(relayout_layout_parse(&b, to, &e_));
  if (!back) {
    CHECK_OK(relayout_bind(&sd, &dd, a, b, s->bits, s->rank, s->shape, NULL, 0,
                           &e_));
    CHECK_OK(relayout_desc_retype(&dd, b, t, NULL, &e_));
  } else { /* in holds `to` in dtype t; out, ND in the model's dtype */
    CHECK_OK(relayout_bind(&dd, &sd, a, b, t, s->rank, s->shape, NULL, 0, &e_));
    CHECK_OK(relayout_desc_retype(&dd, a, s->bits, NULL, &e_));
  }
  int64_t want;
  relayout_desc_size_bytes(&want, &dd, NULL);
  if (src && got && osz == (size_t)want) {
    unsigned char *ref = malloc(osz);
    CHECK_OK(relayout_convert_ref(&dd, ref, osz, &sd, src, isz, &e_));
    CHECK(!memcmp(ref, got, osz), "%s equals the reference's cast", name);
    free(ref);
  } else {
    CHECK(0, "%s: %zu bytes, want %lld", name, osz, (long long)want);
  }
  relayout_layout_free(a);
  relayout_layout_free(b);
  free_view(&vi);
  free_view(&vo);
}

/* Rules with a dtype: cast while repacked, the original dtype recorded;
 * restore casts back (exactly where the cast widened, at the stored
 * precision where it narrowed, and says so). */
static void test_casts(void) {
  write_model("m.st", 0, NMODEL, 1);
  CHECK(cli("repack m.st c.st --rule 'layer1.*=FRACTAL_Z:f16' "
            "--rule 'fc.weight=FRACTAL_NZ:bf16' "
            "--rule 'embed.table=FRACTAL_NZ:f32' "
            "--rule 'conv1.weight=FRACTAL_Z:f16'") == 0,
        "repack with casts");
  check_cast("m.st", "c.st", "layer1.conv.weight", "FRACTAL_Z", RELAYOUT_F16,
             "F16", 0);
  check_cast("m.st", "c.st", "fc.weight", "FRACTAL_NZ", RELAYOUT_BF16, "BF16",
             0);
  check_cast("m.st", "c.st", "embed.table", "FRACTAL_NZ", RELAYOUT_F32, "F32",
             0);
  CHECK(cli("repack --restore c.st b.st") == 0 &&
            said("'layer1.conv.weight' was cast from F32 to F16: restored as "
                 "F32, at F16's precision") &&
            said("'fc.weight' was cast from F32 to BF16"),
        "restore of casts, narrowing ones noted");
  CHECK(!said("embed.table"), "a widening cast restores exactly, unnoted");
  check_cast("c.st", "b.st", "layer1.conv.weight", "FRACTAL_Z", RELAYOUT_F16,
             "F32", 1);
  check_cast("c.st", "b.st", "fc.weight", "FRACTAL_NZ", RELAYOUT_BF16, "F32",
             1);
  st_view vm, vb;
  size_t ma, mb;
  int r;
  int64_t sh[RELAYOUT_MAX_AXES];
  const char *dt;
  CHECK(read_view(&vm, "m.st") == 0 && read_view(&vb, "b.st") == 0, "views");
  const unsigned char *x = tensor(&vm, "embed.table", &ma, &r, sh, &dt),
                      *y = tensor(&vb, "embed.table", &mb, &r, sh, &dt);
  int differ = !x || !y || ma != mb || strcmp(dt, "BF16");
  for (size_t i = 0; !differ && i + 1 < ma; i += 2) {
    unsigned v = (unsigned)x[i] | (unsigned)x[i + 1] << 8,
             w = (unsigned)y[i] | (unsigned)y[i + 1] << 8;
    int snan = (v & 0x7F80) == 0x7F80 && (v & 0x7F) && !(v & 0x40);
    differ = w != (snan ? v | 0x40 : v);
  }
  CHECK(!differ, "BF16 -> F32 -> BF16 gives the tensor back (a signalling "
                 "NaN comes back quiet)");
  free_view(&vm);
  free_view(&vb);
  CHECK(cli("repack m.st x.st --rule 'q.proj=FRACTAL_NZ:f16'") != 0 &&
            said("a rule casts F16, BF16, F32 or F64 tensors, not I8"),
        "an integer tensor is not cast");
  CHECK(absent("x.st"), "no output after a refusal");
}

/* A float element's value, from its bits (F32 or BF16, little-endian). */
static double value_at(const unsigned char *p, size_t i, relayout_dtype t) {
  uint32_t u = 0;
  if (t == RELAYOUT_BF16)
    u = (uint32_t)(p[2 * i] | p[2 * i + 1] << 8) << 16;
  else
    memcpy(&u, p + 4 * i, 4);
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* The symmetric i8 scales of model tensor s, written out here from their
 * definition: max finite |x| / 127 per position of its dim `dim` (-1: one
 * for the tensor), rounded once to f32; 1 where a channel has no nonzero
 * finite value. */
static void expected_scales(float *out, const spec *s, const unsigned char *p,
                            int dim) {
  int64_t n = 1, inner = 1, count = dim < 0 ? 1 : s->shape[dim];
  for (int d = 0; d < s->rank; d++) n *= s->shape[d];
  for (int d = dim + 1; dim >= 0 && d < s->rank; d++) inner *= s->shape[d];
  double top[256] = {0};
  for (int64_t i = 0; i < n; i++) {
    double a = fabs(value_at(p, (size_t)i, s->bits));
    int64_t c = dim < 0 ? 0 : i / inner % count;
    if (isfinite(a) && a > top[c]) top[c] = a;
  }
  for (int64_t c = 0; c < count; c++)
    out[c] = top[c] == 0 ? 1.0f : (float)(top[c] / 127);
}

/* The tensor `name` repacked as i8 in `to` with scales along `axis` (0:
 * one): its NAME.scale the expected scales, its bytes the reference's
 * quantization with them; restored, the reference's dequantization of the
 * stored bytes, in the model's dtype. */
static void check_quantized(const char *name, const char *to, char axis,
                            int dim) {
  const spec *s = model;
  while (strcmp(s->name, name)) s++;
  st_view vm, vq, vb;
  CHECK(!read_view(&vm, "m.st") && !read_view(&vq, "q.st") &&
            !read_view(&vb, "b.st"),
        "views");
  size_t msz, qsz, ssz, bsz;
  int r;
  int64_t sh[RELAYOUT_MAX_AXES];
  const char *dt, *qdt, *sdt, *bdt;
  char scale_name[64];
  snprintf(scale_name, sizeof scale_name, "%s.scale", name);
  int sr;
  int64_t ssh[RELAYOUT_MAX_AXES];
  const unsigned char *m = tensor(&vm, name, &msz, &r, sh, &dt),
                      *q = tensor(&vq, name, &qsz, &r, sh, &qdt),
                      *b = tensor(&vb, name, &bsz, &r, sh, &bdt),
                      *sc = tensor(&vq, scale_name, &ssz, &sr, ssh, &sdt);
  float want[256];
  int64_t count = dim < 0 ? 1 : s->shape[dim];
  expected_scales(want, s, m, dim);
  CHECK(q && !strcmp(qdt, "I8") && sc && !strcmp(sdt, "F32") && sr == 1 &&
            ssh[0] == count && ssz == 4 * (size_t)count &&
            !memcmp(sc, want, ssz),
        "%s: I8, its %lld scales in %s (max |x| / 127)", name, (long long)count,
        scale_name);
  CHECK(!tensor(&vb, scale_name, &ssz, &r, sh, &sdt) && b &&
            !strcmp(bdt, s->dtype),
        "%s restored as %s, %s taken back", name, s->dtype, scale_name);
  relayout_layout *a, *l;
  relayout_desc sd, dd;
  CHECK_OK(relayout_layout_parse(&a, "ND", &e_));
  CHECK_OK(relayout_layout_parse(&l, to, &e_));
  CHECK_OK(
      relayout_bind(&sd, &dd, a, l, s->bits, s->rank, s->shape, NULL, 0, &e_));
  CHECK_OK(relayout_desc_retype(&dd, l, RELAYOUT_I8,
                                &(relayout_quant){want[0], 0}, &e_));
  relayout_quant_channels qc = {axis, count, want, NULL};
  if (axis) CHECK_OK(relayout_desc_quantize_channels(&dd, &qc, &e_));
  int64_t qbytes;
  relayout_desc_size_bytes(&qbytes, &dd, NULL);
  unsigned char *ref = malloc((size_t)qbytes), *back = malloc(msz);
  if (q && b && qsz == (size_t)qbytes && bsz == msz) {
    CHECK_OK(relayout_convert_ref(&dd, ref, qsz, &sd, m, msz, &e_));
    CHECK(!memcmp(ref, q, qsz), "%s quantized as the reference does", name);
    CHECK_OK(relayout_convert_ref(&sd, back, msz, &dd, q, qsz, &e_));
    CHECK(!memcmp(back, b, msz), "%s restored to its dequantized values", name);
  } else {
    CHECK(0, "%s: %zu and %zu bytes", name, qsz, bsz);
  }
  free(ref);
  free(back);
  relayout_layout_free(a);
  relayout_layout_free(l);
  free_view(&vm);
  free_view(&vq);
  free_view(&vb);
}

/* A repacked file written by hand whose record says a.scale holds the
 * scales of quantized tensor a; that tensor's dtype and values as given. */
static void write_forged(const char *dtype, const char *shape, const void *sc,
                         size_t nsc) {
  char text[1024];
  int n = snprintf(
      text, sizeof text,
      "{\"__metadata__\":{\"relayout\":\"{\\\"version\\\":2,\\\"had_"
      "metadata\\\":"
      "false}\",\"relayout:a\":\"{\\\"from\\\":\\\"ND\\\",\\\"to\\\":"
      "\\\"ND\\\","
      "\\\"shape\\\":[2,2],\\\"dtype\\\":\\\"I8\\\",\\\"from_dtype\\\":"
      "\\\"F32\\\","
      "\\\"scale\\\":\\\"a.scale\\\",\\\"axis\\\":\\\"\\\"}\"},"
      "\"a\":{\"dtype\":\"I8\",\"shape\":[2,2],\"data_offsets\":[0,4]},"
      "\"a.scale\":{\"dtype\":\"%s\",\"shape\":%s,\"data_offsets\":[4,%zu]}}",
      dtype, shape, 4 + nsc);
  unsigned char data[64] = {1, 2, 3, 4};
  memcpy(data + 4, sc, nsc);
  put_raw("f.st", (uint64_t)n, text, data, 4 + nsc);
}

/* Restores whose scales are not as the record says: the file's fault. */
static void forged_scales(void) {
  float one = 1, zero = 0, two[2] = {1, 2};
  write_forged("F32", "[1]", &one, 4);
  CHECK(cli("repack --restore f.st x.st") == 0 && !absent("x.st"),
        "a hand-made record restores");
  unlink("x.st");
  write_forged("F16", "[2]", &one, 4);
  CHECK(cli("repack --restore f.st x.st") == 1 &&
            said("its scales 'a.scale' are not an F32 tensor of 1 values"),
        "scales of another dtype are refused");
  write_forged("F32", "[2]", two, 8);
  CHECK(cli("repack --restore f.st x.st") == 1 &&
            said("its scales 'a.scale' are not an F32 tensor of 1 values"),
        "scales of another count are refused");
  write_forged("F32", "[1]", &zero, 4);
  CHECK(cli("repack --restore f.st x.st") == 1 &&
            said("its scales 'a.scale': scale 0: a scale must be positive"),
        "a zero scale is refused");
  CHECK(absent("x.st"), "no output after a refusal");
}

/* Quantizing rules: i8 with symmetric scales per channel or per tensor,
 * stored beside each weight and named in its record; restore dequantizes
 * and takes the scales back; every other tensor comes back byte for byte.
 * Then the refusals. */
static void test_quantize(void) {
  write_model("m.st", 0, NMODEL, 1);
  CHECK(cli("repack m.st q.st "
            "--rule 'layer1.*:4d=FRACTAL_Z:i8:per-channel=N' "
            "--rule 'fc.weight=FRACTAL_NZ:i8' "
            "--rule 'embed.table=FRACTAL_NZ:i8:per-channel=m' "
            "--rule '*.weight:4d=FRACTAL_Z'") == 0,
        "repack with quantizing rules");
  char *text = slurp("q.st");
  CHECK(
      text &&
          strstr(text + 8, "\\\"scale\\\":\\\"layer1.conv.weight.scale\\\"") &&
          strstr(text + 8, "\\\"axis\\\":\\\"N\\\""),
      "the record names the scales and their axis");
  free(text);
  CHECK(cli("repack --restore q.st b.st") == 0 &&
            said("'layer1.conv.weight' was quantized to I8: restored as F32, "
                 "its dequantized values") &&
            said("3 scale tensors taken back"),
        "restore of quantized tensors, noted");
  check_quantized("layer1.conv.weight", "FRACTAL_Z", 'N', 0);
  check_quantized("fc.weight", "FRACTAL_NZ", 0, -1);
  check_quantized("embed.table", "FRACTAL_NZ", 'M', 0);
  st_view vm, vb;
  CHECK(!read_view(&vm, "m.st") && !read_view(&vb, "b.st"), "views");
  for (int i = 0; i < NMODEL; i++) {
    if (!strcmp(model[i].name, "layer1.conv.weight") ||
        !strcmp(model[i].name, "fc.weight") ||
        !strcmp(model[i].name, "embed.table"))
      continue;
    size_t x, y;
    int r;
    int64_t sh[RELAYOUT_MAX_AXES];
    const char *dt;
    const unsigned char *a = tensor(&vm, model[i].name, &x, &r, sh, &dt),
                        *b = tensor(&vb, model[i].name, &y, &r, sh, &dt);
    CHECK(a && b && x == y && !memcmp(a, b, x), "%s restored byte for byte",
          model[i].name);
  }
  free_view(&vm);
  free_view(&vb);
  CHECK(cli("repack m.st x.st --rule '*=ND:u8'") == 2 &&
            said("or quantizes to i8"),
        "a rule quantizing to u8 is refused");
  CHECK(cli("repack m.st x.st --rule '*=ND:f16:per-channel=N'") == 2 &&
            said("per-channel= follows the DTYPE of a quantizing rule"),
        "per-channel on a float cast is refused");
  CHECK(cli("repack m.st x.st --rule '*=ND:i8:per-channel=NC'") == 2 &&
            said("per-channel= takes one logical dim") &&
            cli("repack m.st x.st --rule '*=ND:i8:per-channel=1x'") == 2 &&
            said("per-channel= takes one logical dim"),
        "per-channel of two letters, or of a number and a letter, is "
        "refused");
  CHECK(
      cli("repack m.st x.st --rule 'fc.weight=FRACTAL_NZ:i8:per-channel=C'") ==
              2 &&
          said("per-channel=C: the tensor's logical dims are MN"),
      "per-channel along a dim the tensor lacks is refused");
  CHECK(cli("repack m.st x.st --rule 'q.proj=FRACTAL_NZ:i8'") == 2 &&
            said("a quantizing rule takes F16, BF16 or F32 tensors, not I8"),
        "an integer tensor is not quantized");
  static const char pair[] =
      "{\"a\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
      "\"a.scale\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[16,"
      "20]}}";
  float five[5] = {1, 2, 3, 4, 5};
  put_raw("p.st", sizeof pair - 1, pair, five, sizeof five);
  CHECK(cli("repack p.st x.st --rule 'a=ND:i8'") != 0 &&
            said("its scales stored as 'a.scale', but the file has a tensor "
                 "of that name"),
        "scales whose name is taken are refused");
  CHECK(absent("x.st"), "no output after a refusal");
  forged_scales();
}

static void test_reports(void) {
  write_model("m.st", 0, NMODEL, 1);
  CHECK(cli("repack --dry-run m.st d.st " RULES) == 0, "dry run");
  char *out = slurp("out.txt");
  for (int i = 0; out && i < NMODEL; i++)
    CHECK(strstr(out, model[i].name), "dry run names %s", model[i].name);
  CHECK(out && strstr(out, "ND -> FRACTAL_Z(c0=16,b16=16)"),
        "dry run gives the target with its blocks");
  free(out);
  CHECK(absent("d.st"), "dry run writes nothing");

  /* An empty tensor may have huge extents besides its zero: printed whole. */
  char big[600] = "{\"z\":{\"dtype\":\"F64\",\"shape\":[0";
  for (int i = 0; i < 11; i++) strcat(big, ",4611686018427387904");
  strcat(big, "],\"data_offsets\":[0,0]}}");
  put_raw("big.st", strlen(big), big, NULL, 0);
  CHECK(cli("repack --dry-run big.st --rule '*=ND'") == 0, "huge empty tensor");
  out = slurp("out.txt");
  CHECK(out && strstr(out, "x4611686018427387904 copied"), "printed whole: %s",
        out ? out : "");
  free(out);

  CHECK(cli("repack --json m.st j.st " RULES) == 0, "json");
  json_t *j = json_load_file("out.txt", 0, NULL);
  json_t *ts = json_object_get(j, "tensors");
  CHECK(json_array_size(ts) == (size_t)NMODEL, "a record per tensor");
  for (int i = 0; i < NMODEL && i < (int)json_array_size(ts); i++) {
    json_t *t = json_array_get(ts, (size_t)i);
    const char *to = json_string_value(json_object_get(t, "to"));
    CHECK(!strcmp(json_string_value(json_object_get(t, "name")), model[i].name),
          "record %d names %s", i, model[i].name);
    CHECK(model[i].to ? to && !strncmp(to, model[i].to, strlen(model[i].to))
                      : !to,
          "%s: to %s", model[i].name, to ? to : "null");
    CHECK(json_integer_value(json_object_get(t, "bytes_in")) ==
              (json_int_t)spec_bytes(&model[i]),
          "%s: bytes_in", model[i].name);
  }
  CHECK(json_integer_value(json_object_get(j, "bytes_read")) > 0, "totals");
  json_decref(j);
}

static void test_shards(void) {
  mkdir("sh", 0777);
  write_model("sh/model-00001-of-00002.safetensors", 0, 5, 1);
  write_model("sh/model-00002-of-00002.safetensors", 5, NMODEL - 5, 1);
  json_t *map = json_object();
  for (int i = 0; i < NMODEL; i++)
    json_object_set_new(map, model[i].name,
                        json_string(i < 5
                                        ? "model-00001-of-00002.safetensors"
                                        : "model-00002-of-00002.safetensors"));
  json_t *idx = json_pack("{s:{s:i}, s:o}", "metadata", "total_size", 1,
                          "weight_map", map);
  json_dump_file(idx, "sh/model.safetensors.index.json", JSON_INDENT(2));
  CHECK(cli("repack sh sh.out " RULES) == 0, "sharded repack");
  check_repacked("sh/model-00001-of-00002.safetensors",
                 "sh.out/model-00001-of-00002.safetensors", 0, 5);
  check_repacked("sh/model-00002-of-00002.safetensors",
                 "sh.out/model-00002-of-00002.safetensors", 5, NMODEL - 5);
  /* total_size: the sum of the new shards' tensor bytes. */
  json_int_t total = 0;
  const char *shards[] = {"sh.out/model-00001-of-00002.safetensors",
                          "sh.out/model-00002-of-00002.safetensors"};
  for (int k = 0; k < 2; k++) {
    st_view v;
    if (read_view(&v, shards[k])) continue;
    total += (json_int_t)(v.file + v.size - v.data);
    free_view(&v);
  }
  json_t *out = json_load_file("sh.out/model.safetensors.index.json", 0, NULL);
  CHECK(json_integer_value(json_object_get(json_object_get(out, "metadata"),
                                           "total_size")) == total,
        "index total_size is the new size, %lld", (long long)total);
  CHECK(json_equal(json_object_get(out, "weight_map"), map),
        "index weight_map unchanged");
  json_decref(out);
  CHECK(cli("repack --restore sh.out sh.back") == 0, "sharded restore");
  CHECK(same_files("sh/model-00001-of-00002.safetensors",
                   "sh.back/model-00001-of-00002.safetensors") &&
            same_files("sh/model-00002-of-00002.safetensors",
                       "sh.back/model-00002-of-00002.safetensors"),
        "shards restored byte for byte");
  CHECK(cli("repack sh sh.out " RULES) == 2 && said("exists"),
        "an existing output directory is refused");
  /* quantized: the index maps each new scale tensor to its weight's shard;
   * restored, the index is the original's again */
  CHECK(cli("repack sh sh.q --rule 'fc.weight=FRACTAL_NZ:i8' "
            "--rule 'layer1.*=FRACTAL_Z:i8:per-channel=N'") == 0 &&
            cli("repack --restore sh.q sh.qb") == 0,
        "sharded repack with quantizing rules, and its restore");
  json_t *q = json_load_file("sh.q/model.safetensors.index.json", 0, NULL),
         *want = json_deep_copy(map);
  json_object_set_new(want, "fc.weight.scale",
                      json_string("model-00001-of-00002.safetensors"));
  json_object_set_new(want, "layer1.conv.weight.scale",
                      json_string("model-00001-of-00002.safetensors"));
  CHECK(json_equal(json_object_get(q, "weight_map"), want),
        "the index maps the scale tensors to their weights' shard");
  json_decref(q);
  q = json_load_file("sh.qb/model.safetensors.index.json", 0, NULL);
  CHECK(json_equal(json_object_get(q, "weight_map"), map),
        "restored, the index maps the original tensors only");
  json_decref(q);
  json_decref(want);

  json_object_set_new(map, "ghost",
                      json_string("model-00001-of-00002.safetensors"));
  json_dump_file(idx, "sh/model.safetensors.index.json", JSON_INDENT(2));
  CHECK(cli("repack sh sh.bad " RULES) == 1 && said("'ghost' is not in"),
        "index naming a missing tensor");
  json_object_set_new(map, "ghost", json_string("../m.st"));
  json_dump_file(idx, "sh/model.safetensors.index.json", JSON_INDENT(2));
  CHECK(cli("repack sh sh.bad " RULES) == 1 && said("not a file name"),
        "index pointing outside the directory");
  CHECK(absent("sh.bad"), "no output directory after a failure");
  json_decref(idx);
}

/* A hostile or broken file: refused, naming the file and the problem. */
static void refused(const char *what, const char *part) {
  CHECK(cli("repack bad.st x.st --rule '*=ND'") == 1 && said("bad.st") &&
            said(part),
        "%s", what);
  CHECK(absent("x.st"), "%s: no output", what);
}

static void test_hostile(void) {
  unsigned char data[64] = {0};
  put_file("bad.st", "\x10\0\0", 3, NULL, 0);
  refused("a 3-byte file", "too short");
  put_raw("bad.st", (uint64_t)1 << 40, "{}", NULL, 0);
  refused("a huge header length", "above the safetensors limit");
  put_raw("bad.st", 5000, "{}", NULL, 0);
  refused("a header past the end", "runs past the end");
  const struct {
    const char *what, *header, *part;
    size_t data;
  } cases[] = {
      {"not JSON", "{\"a\":", "not valid JSON", 0},
      {"not an object", "[1,2]", "not a JSON object", 0},
      {"duplicate keys",
       "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
       "\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}",
       "duplicate", 1},
      {"overlapping offsets",
       "{\"a\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[0,8]},"
       "\"b\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[4,12]}}",
       "overlaps", 12},
      {"offsets out of range",
       "{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}",
       "run past", 8},
      {"size not shape x dtype",
       "{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}",
       "make 12", 8},
      {"a hole in the data",
       "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
       "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[8,12]}}",
       "belong to no tensor", 12},
      {"unknown dtype",
       "{\"a\":{\"dtype\":\"Q7\",\"shape\":[4],\"data_offsets\":[0,4]}}",
       "unknown dtype 'Q7'", 4},
      {"negative extent",
       "{\"a\":{\"dtype\":\"U8\",\"shape\":[-4],\"data_offsets\":[0,4]}}",
       "not a whole number", 4},
      {"fractional extent",
       "{\"a\":{\"dtype\":\"U8\",\"shape\":[4.0],\"data_offsets\":[0,4]}}",
       "not a whole number", 4},
      {"reversed offsets",
       "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[4,0]}}",
       "begin <= end", 4},
      {"size overflow",
       "{\"a\":{\"dtype\":\"F64\",\"shape\":[4294967296,4294967296],"
       "\"data_offsets\":[0,4]}}",
       "overflows", 4},
      {"rank above the limit",
       "{\"a\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1,1,1,1,1],"
       "\"data_offsets\":[0,1]}}",
       "above the limit", 1},
      {"an unknown field",
       "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4],"
       "\"x\":1}}",
       "unknown field 'x'", 4},
      {"metadata not strings", "{\"__metadata__\":{\"k\":3}}",
       "is not a string", 0},
      {"offsets missing", "{\"a\":{\"dtype\":\"U8\",\"shape\":[4]}}",
       "data_offsets", 4},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    put_raw("bad.st", strlen(cases[i].header), cases[i].header, data,
            cases[i].data);
    refused(cases[i].what, cases[i].part);
  }
  /* Truncated: a valid file cut inside its data. */
  write_model("m.st", 0, 3, 0);
  st_view v;
  read_view(&v, "m.st");
  put_file("bad.st", v.file, v.size - 5, NULL, 0);
  free_view(&v);
  refused("a truncated file", "run past");

  /* Tampered restore records. */
  write_model("m.st", 0, 3, 0);
  CHECK(cli("repack m.st r.st " RULES) == 0, "repack to tamper with");
  read_view(&v, "r.st");
  char *h = json_dumps(v.header, JSON_COMPACT);
  char *at = strstr(h, "[64,3,7,7]");
  if (at) memcpy(at, "[64,3,7,6]", 10);
  put_raw("bad.st", strlen(h), h, v.data, (size_t)(v.file + v.size - v.data));
  CHECK(cli("repack --restore bad.st x.st") == 1 &&
            said("relayout's records differ from those it wrote"),
        "a record edited after repack (its digest)");
  /* as a version 2 file, which has no digest: the record is checked alone */
  at = strstr(h, "\\\"version\\\":3");
  if (at) at[strlen("\\\"version\\\":")] = '2';
  put_raw("bad.st", strlen(h), h, v.data, (size_t)(v.file + v.size - v.data));
  free(h);
  free_view(&v);
  CHECK(at && cli("repack --restore bad.st x.st") == 1 &&
            said("conv1.weight") && said("holds"),
        "a record that does not fit the tensor");
  CHECK(absent("x.st"), "no output from a bad restore");
  CHECK(cli("repack m.st x.st --rule 'conv1.bias=FRACTAL_Z'") == 2 &&
            said("tensor 'conv1.bias'") && said("rule 'conv1.bias=FRACTAL_Z'"),
        "a rule that cannot apply names the tensor and the rule");
  CHECK(absent("x.st"), "no output when a rule cannot apply");
  CHECK(cli("repack m.st nodir/x.st " RULES) == 1 && said("nodir/x.st"),
        "an output that cannot be created");
}

/* old.st, repacked to the grammar of int8 ZN before its fix (N0 = 32,
 * K0 = 16), with its record written as FRACTAL_ZN(c0=32,b16=16) under a
 * marker of metadata version `version`, into path. */
static void write_legacy(const char *path, int version) {
  st_view v;
  CHECK(read_view(&v, "old.st") == 0, "read old.st");
  json_t *meta = json_object_get(v.header, "__metadata__");
  char mark[64], text[512];
  snprintf(mark, sizeof mark, "{\"version\":%d,\"had_metadata\":true}",
           version);
  json_object_set_new(meta, "relayout", json_string(mark));
  const char *rec = json_string_value(json_object_get(meta, "relayout:q.proj"));
  const char *at = rec ? strstr(rec, "...KN32n16k") : NULL;
  CHECK(at != NULL, "the record names the grammar: %s", rec ? rec : "(none)");
  if (at) {
    snprintf(text, sizeof text, "%.*sFRACTAL_ZN(c0=32,b16=16)%s",
             (int)(at - rec), rec, at + strlen("...KN32n16k"));
    json_object_set_new(meta, "relayout:q.proj", json_string(text));
  }
  char *h = json_dumps(v.header, JSON_COMPACT);
  put_raw(path, strlen(h), h, v.data, (size_t)(v.file + v.size - v.data));
  free(h);
  free_view(&v);
}

/* A file repacked before FRACTAL_ZN's fix (metadata version 1) recorded
 * int8 ZN as FRACTAL_ZN(c0=32,b16=16) meaning N0 = 32, K0 = 16: it
 * restores byte for byte, where the same record read as today's ZN would
 * not fit the stored shape. */
static void test_legacy_zn(void) {
  write_model("m.st", 0, NMODEL, 1);
  CHECK(cli("repack m.st old.st --rule 'q.proj:2d=...KN32n16k'") == 0,
        "repack into the old orientation");
  write_legacy("v1.st", 1);
  write_legacy("v2.st", 2);
  CHECK(cli("repack --restore v1.st back.st") == 0, "restore a version 1 file");
  CHECK(same_files("m.st", "back.st"), "it gives the file back");
  CHECK(cli("repack --restore v2.st x.st") == 1 &&
            said("FRACTAL_ZN(c0=32,b16=16) holds 5120 bytes, not the 4608"),
        "read as today's ZN, the record does not fit");
  write_legacy("v9.st", 9);
  CHECK(cli("repack --restore v9.st x.st") == 1 && said("version 9"),
        "a version this relayout does not know");
  CHECK(cli("repack m.st new.st --rule 'q.proj:2d=FRACTAL_ZN'") == 0 &&
            cli("repack --restore new.st back.st") == 0 &&
            same_files("m.st", "back.st"),
        "today's ZN round trip");
}

/* Outputs that are not regular files: streams get the bytes in place, in
 * order (the node, FIFO and link stay what they were); a symlink's file is
 * replaced, the link kept; a directory is refused before any work. */
static void test_outputs(void) {
  struct stat st;
  write_model("m.st", 0, NMODEL, 1);
  CHECK(cli("repack m.st r.st " RULES) == 0, "repack to a file");
  CHECK(cli("repack m.st - " RULES) == 0 && same_files("r.st", "out.txt"),
        "- is standard output");
  CHECK(cli("repack m.st - --max-memory 40K " RULES) == 0 &&
            same_files("r.st", "out.txt"),
        "to standard output in small slots (pieces out of their turn)");
  setenv("RELAYOUT_UNIFIED", "0", 1);
  CHECK(cli("repack m.st - --max-memory 40K " RULES) == 0 &&
            same_files("r.st", "out.txt"),
        "to standard output through uploads and downloads");
  unsetenv("RELAYOUT_UNIFIED");
  CHECK(cli("repack --restore r.st -") == 0 && same_files("m.st", "out.txt"),
        "restore to standard output");
  CHECK(system("mkfifo fifo && (cat fifo > fifo.st &)") == 0, "mkfifo");
  CHECK(cli("repack m.st fifo " RULES) == 0, "repack into a FIFO");
  CHECK(system("sleep 0.2") == 0 && same_files("r.st", "fifo.st"),
        "the FIFO's reader got the file");
  CHECK(!lstat("fifo", &st) && S_ISFIFO(st.st_mode), "the FIFO stays one");
  CHECK(system("ln -s target.st link.st") == 0, "ln -s");
  CHECK(cli("repack m.st link.st " RULES) == 0 &&
            same_files("r.st", "target.st"),
        "repack through a symlink writes the file it names");
  CHECK(!lstat("link.st", &st) && S_ISLNK(st.st_mode), "the link stays one");
  if (!geteuid()) {
    CHECK(system("mknod nulldev c 1 3") == 0, "mknod");
    CHECK(cli("repack m.st nulldev " RULES) == 0, "repack into a device");
    CHECK(!lstat("nulldev", &st) && S_ISCHR(st.st_mode) &&
              st.st_rdev == makedev(1, 3),
          "the device node stays one");
  }
  CHECK(cli("repack m.st /dev/full " RULES) == 1 &&
            said("/dev/full: write failed: No space left on device"),
        "a stream that fails part-way says so");
  CHECK(system("mkdir -p outdir") == 0, "mkdir");
  CHECK(cli("repack m.st outdir " RULES) == 1 && said("outdir: is a directory"),
        "a directory is no single-file output");
  CHECK(cli("show r.st") == 0, "show lists a safetensors file");
  char *out = slurp("out.txt");
  CHECK(out && strstr(out, "r.st: 12 tensors") &&
            strstr(out, "  conv1.weight  F16 (49, 4, 16, 16)  100352 bytes  "
                        "repacked from ND (64, 3, 7, 7) into "
                        "FRACTAL_Z(c0=16,b16=16)") &&
            strstr(out, "  fc.bias  F32 (100,)  400 bytes\n"),
        "show's listing: %s", out ? out : "(none)");
  free(out);
  CHECK(cli("show r.st odd.act") == 0, "show one tensor");
  out = slurp("out.txt");
  CHECK(out && !strncmp(out, "odd.act: U8 (1, 5, 7, 3)\n[[[[", 29),
        "show's tensor: %s", out ? out : "(none)");
  free(out);
  CHECK(cli("show r.st nothing") == 1 && said("r.st has no tensor 'nothing'"),
        "show of a tensor that is not there");
  CHECK(cli("repack sh - " RULES) == 2 && said("new directory"),
        "a directory of shards cannot go to standard output");
}

static void test_usage(void) {
  CHECK(cli("repack --help") == 0, "help");
  char *out = slurp("out.txt");
  CHECK(out && strstr(out, "--rule GLOB[:Nd][:FROM]=TO") &&
            strstr(out, "--restore") && strstr(out, "--max-memory"),
        "help describes the options");
  free(out);
  CHECK(cli("repack m.st x.st") == 2 && said("at least one --rule"), "no rule");
  CHECK(cli("repack --restore m.st x.st --rule '*=ND'") == 2 &&
            said("takes no --rule"),
        "restore with rules");
  CHECK(cli("repack m.st x.st --rule 'a:3d:4d=ND'") == 2 &&
            said("rank is given twice"),
        "a rule with two ranks");
  CHECK(cli("repack m.st x.st --rule 'a=NOPE_X'") == 2 && said("NOPE_X"),
        "a rule with an unknown layout");
  CHECK(cli("repack m.st x.st --rule '*=ND' --max-memory 3Q") == 2 &&
            said("byte count"),
        "a bad --max-memory");
  CHECK(cli("repack m.st m.st --rule '*=ND'") == 2 && said("OUT is the input"),
        "in place");
}

/* path's header with `edit` applied to its metadata, written to out with
 * the same data. */
static void edit_metadata(const char *path, const char *out,
                          void (*edit)(json_t *meta)) {
  st_view v;
  if (read_view(&v, path)) {
    CHECK(0, "%s: unreadable", path);
    return;
  }
  edit(json_object_get(v.header, "__metadata__"));
  char *text = json_dumps(v.header, JSON_COMPACT);
  put_raw(out, strlen(text), text, v.data, (size_t)(v.file + v.size - v.data));
  free(text);
  free_view(&v);
}

static void drop_record(json_t *m) { json_object_del(m, "relayout:fc.weight"); }

/* fc.weight's logical shape, 100 x 129, forged as 100 x 130: the same padded
 * size, and a column of data lost on restore. */
static void forge_shape(json_t *m) {
  json_t *rec = json_loads(
      json_string_value(json_object_get(m, "relayout:fc.weight")), 0, NULL);
  json_object_set_new(rec, "shape", json_pack("[i,i]", 100, 130));
  char *text = json_dumps(rec, JSON_COMPACT);
  json_object_set_new(m, "relayout:fc.weight", json_string(text));
  free(text);
  json_decref(rec);
}

static void add_ghost(json_t *m) {
  json_object_set(m, "relayout:ghost",
                  json_object_get(m, "relayout:fc.weight"));
}

/* A version 2 file (no count nor digest) with a record of no tensor. */
static void ghost_v2(json_t *m) {
  add_ghost(m);
  json_object_set_new(m, "relayout",
                      json_string("{\"version\":2,\"had_metadata\":true}"));
}

/* Restore records lost, forged or added after repack are found: restore
 * refuses the file, writing nothing. */
static void test_damaged_records(void) {
  write_model("r.st", 0, NMODEL, 1);
  CHECK(cli("repack r.st r.p " RULES) == 0, "repack for the damaged records");
  static const struct {
    void (*edit)(json_t *);
    const char *what, *said;
  } cases[] = {
      {drop_record, "a record deleted", "records where its marker counts"},
      {forge_shape, "a shape forged to the same padded size",
       "differ from those it wrote"},
      {add_ghost, "a record of no tensor", "'relayout:ghost' names no tensor"},
      {ghost_v2, "a version 2 record of no tensor", "names no tensor"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    edit_metadata("r.p", "r.bad", cases[i].edit);
    CHECK(cli("repack --restore r.bad r.back") == 1 && said(cases[i].said) &&
              absent("r.back"),
          "%s: restore refuses it", cases[i].what);
  }
}

/* A file of F32 2x2 tensors named names[0..n). */
static void write_small(const char *path, const char *const *names, int n) {
  json_t *h = json_object();
  float data[16][4];
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < 4; k++) data[i][k] = (float)(i * 4 + k + 1);
    json_object_set_new(h, names[i],
                        json_pack("{s:s, s:[i,i], s:[i,i]}", "dtype", "F32",
                                  "shape", 2, 2, "data_offsets", 16 * i,
                                  16 * i + 16));
  }
  char *text = json_dumps(h, JSON_COMPACT);
  put_raw(path, strlen(text), text, data, (size_t)n * 16);
  free(text);
  json_decref(h);
}

/* Names are unique across a sharded checkpoint: a quantized tensor's scales
 * may not take the name of a tensor in another shard. A FIFO as a shard or
 * as the index is refused, not waited on. */
static void test_shard_clash(void) {
  mkdir("cl", 0777);
  static const char *const one[] = {"a", "b"}, *const two[] = {"a.scale"};
  write_small("cl/s1.safetensors", one, 2);
  write_small("cl/s2.safetensors", two, 1);
  json_t *idx =
      json_pack("{s:{s:s, s:s, s:s}}", "weight_map", "a", "s1.safetensors", "b",
                "s1.safetensors", "a.scale", "s2.safetensors");
  json_dump_file(idx, "cl/model.safetensors.index.json", 0);
  CHECK(cli("repack cl cl.out --rule 'a:2d=FRACTAL_NZ:i8:per-channel=M'") ==
                1 &&
            said("stored as 'a.scale', but the checkpoint has a tensor of "
                 "that name in s2.safetensors") &&
            absent("cl.out"),
        "a scale name taken in another shard is refused");
  CHECK(cli("repack cl cl.out --rule 'b:2d=FRACTAL_NZ:i8'") == 0,
        "a free scale name in a sharded checkpoint");
  unlink("cl/s2.safetensors");
  CHECK(mkfifo("cl/s2.safetensors", 0666) == 0 &&
            cli("repack cl cl.f --rule 'b=ND'") == 1 &&
            said("s2.safetensors: not a regular file (a FIFO)"),
        "a FIFO shard is refused at once");
  unlink("cl/model.safetensors.index.json");
  CHECK(mkfifo("cl/model.safetensors.index.json", 0666) == 0 &&
            cli("repack cl cl.f --rule 'b=ND'") == 1 &&
            said("index.json: not a regular file (a FIFO)"),
        "a FIFO index is refused at once");
  json_decref(idx);
}

/* Tensors of one conversion share a plan (make_plans): each still lands
 * at its own place with its own bytes, and restores to them. */
static void test_shared_plans(void) {
  static const char *const names[] = {"e0.w", "e1.w", "e2.w", "e3.w"};
  write_small("same.st", names, 4);
  CHECK(cli("repack same.st same.p --rule '*=FRACTAL_NZ'") == 0 &&
            cli("repack --restore same.p same.b") == 0 &&
            same_files("same.st", "same.b"),
        "four same-shaped tensors repacked and restored byte for byte");
  st_view v;
  if (read_view(&v, "same.p")) return;
  size_t size;
  int rank;
  int64_t shape[4];
  const char *dtype;
  for (int i = 0; i < 4; i++) {
    const unsigned char *p = tensor(&v, names[i], &size, &rank, shape, &dtype);
    float first = 0;
    if (p) memcpy(&first, p, sizeof first);
    CHECK(p && size == 16 * 8 * 4 && first == (float)(i * 4 + 1),
          "%s holds its own first element", names[i]);
  }
  free_view(&v);
}

/* A 3-shard model (shards of 4, 5 and 3 tensors) and its index in dir. */
static void write_sharded(const char *dir) {
  static const int first[4] = {0, 4, 9, NMODEL};
  char path[256];
  mkdir(dir, 0777);
  json_t *map = json_object();
  for (int k = 0; k < 3; k++) {
    snprintf(path, sizeof path, "%s/s-%d.safetensors", dir, k);
    write_model(path, first[k], first[k + 1] - first[k], 1);
    for (int i = first[k]; i < first[k + 1]; i++)
      json_object_set_new(map, model[i].name,
                          json_string(strrchr(path, '/') + 1));
  }
  snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
  json_t *idx = json_pack("{s:{s:i}, s:o}", "metadata", "total_size", 1,
                          "weight_map", map);
  json_dump_file(idx, path, JSON_INDENT(2));
  json_decref(idx);
}

/* dir holds what ref holds, byte for byte, and nothing else. */
static int same_dirs(const char *dir, const char *ref) {
  static const char *const names[] = {"s-0.safetensors", "s-1.safetensors",
                                      "s-2.safetensors",
                                      "model.safetensors.index.json"};
  char a[256], b[256];
  int same = 1;
  for (int i = 0; i < 4; i++) {
    snprintf(a, sizeof a, "%s/%s", dir, names[i]);
    snprintf(b, sizeof b, "%s/%s", ref, names[i]);
    same &= same_files(a, b);
  }
  snprintf(a, sizeof a, "ls -A '%s' | wc -l | grep -qx 4", dir);
  return same && system(a) == 0;
}

#define QRULES RULES " --rule 'fc.weight=FRACTAL_NZ:i8'"

/* A sharded repack in 1, 2 and 3 parts, then --finish: the output and
 * index of one run, byte for byte. A part killed mid-run (its shard cut
 * short, a temp file left, no record), then every part rerun: only that
 * shard is written again. Another job's parts are refused. */
static void test_parts(void) {
  write_sharded("pp");
  CHECK(cli("repack pp pp.ref " QRULES) == 0, "one-process repack");
  for (int n = 1; n <= 3; n++) {
    char out[16];
    snprintf(out, sizeof out, "pp.%d", n);
    for (int i = 0; i < n; i++)
      CHECK(cli("repack pp %s " QRULES " --part %d/%d", out, i, n) == 0 &&
                (i == n - 1 || cli("repack --finish %s", out) == 1),
            "part %d/%d (finish refused before the last)", i, n);
    CHECK(cli("repack --finish %s", out) == 0 && same_dirs(out, "pp.ref"),
          "%d parts and --finish give the one-process output", n);
  }
  /* killed: part 1 of 3 cut its shard short and left a temp file */
  CHECK(cli("repack pp pp.k " QRULES " --part 0/3") == 0 &&
            cli("repack pp pp.k " QRULES " --part 1/3") == 0 &&
            cli("repack pp pp.k " QRULES " --part 2/3") == 0,
        "three parts");
  char killed[64] = "";
  for (int k = 0; k < 3 && !*killed; k++) {
    char rec[96];
    snprintf(rec, sizeof rec, "pp.k/.relayout-parts/s-%d.safetensors.json", k);
    json_t *j = json_load_file(rec, 0, NULL);
    if (j) snprintf(killed, sizeof killed, "s-%d.safetensors", k);
    json_decref(j);
    if (*killed) unlink(rec);
  }
  char path[128];
  snprintf(path, sizeof path, "pp.k/%s", killed);
  CHECK(*killed && truncate(path, 100) == 0, "a shard cut short");
  snprintf(path, sizeof path, "pp.k/%s.tmp-Ab3dEf", killed);
  put_file(path, "x", 1, "", 0);
  CHECK(cli("repack --finish pp.k") == 1 && said(killed) &&
            said("no valid completion record"),
        "finish names the shard without a record");
  struct stat before[3], after[3];
  for (int k = 0; k < 3; k++) {
    snprintf(path, sizeof path, "pp.k/s-%d.safetensors", k);
    stat(path, &before[k]);
  }
  setenv("SLURM_NTASKS", "3", 1);
  for (int i = 0; i < 3; i++) {
    char rank[8];
    snprintf(rank, sizeof rank, "%d", i);
    setenv("SLURM_PROCID", rank, 1);
    CHECK(cli("repack pp pp.k " QRULES " --part auto") == 0,
          "rerun of part %d as Slurm's rank", i);
  }
  unsetenv("SLURM_PROCID");
  unsetenv("SLURM_NTASKS");
  for (int k = 0; k < 3; k++) {
    snprintf(path, sizeof path, "pp.k/s-%d.safetensors", k);
    stat(path, &after[k]);
    int kept = before[k].st_ino == after[k].st_ino &&
               before[k].st_mtim.tv_sec == after[k].st_mtim.tv_sec &&
               before[k].st_mtim.tv_nsec == after[k].st_mtim.tv_nsec;
    CHECK(kept == !!strcmp(path + 5, killed), "%s %s", path,
          kept ? "kept" : "rewritten");
  }
  CHECK(cli("repack --finish pp.k") == 0 && same_dirs("pp.k", "pp.ref"),
        "the rerun job gives the one-process output, its temp file gone");
  /* another job into a job's directory; a finished one; misuse */
  CHECK(cli("repack pp pp.x " QRULES " --part 0/2") == 0 &&
            cli("repack pp pp.x " QRULES " --part 1/3") == 2 &&
            said("parts of another repack") &&
            cli("repack pp pp.x " RULES " --part 1/2") == 2 &&
            said("parts of another repack"),
        "a part count or rules of another job refused");
  CHECK(cli("repack pp pp.ref " QRULES " --part 0/2") == 1 &&
            said("finished checkpoint"),
        "parts into a finished checkpoint refused");
  CHECK(cli("repack pp/s-0.safetensors x.st " RULES " --part 0/2") == 2 &&
            said("one file"),
        "--part of one file refused");
  CHECK(cli("repack pp pp.y " RULES " --part auto") == 2 &&
            said("no launcher's rank"),
        "--part auto outside a launcher refused");
  CHECK(cli("repack pp pp.y " RULES " --part 3/3") == 2 && said("I/N"),
        "--part 3/3 refused");
  CHECK(cli("repack --finish pp") == 1 && said("no repack parts"),
        "--finish of a directory without parts refused");
  CHECK(absent("pp.y"), "nothing written by a refused part");
}

/* Several devices in one process: PoCL's CPU device twice, and a device
 * with the reference. The tensors spread over them (the JSON report names
 * each one's), the output the bytes of one device's. */
static void test_devices(void) {
  setenv("POCL_DEVICES", "pthread pthread", 1);
  write_model("dv.st", 0, NMODEL, 1);
  CHECK(cli("repack pp pp.one " QRULES " --device 0") == 0 &&
            cli("repack pp pp.all " QRULES " --device all") == 0 &&
            same_dirs("pp.all", "pp.one"),
        "--device all (two PoCL devices): the one-device output");
  CHECK(cli("repack dv.st d1.st " RULES " --device ref") == 0 &&
            cli("repack dv.st d2.st " RULES " --device 0,ref --json") == 0 &&
            same_files("d1.st", "d2.st"),
        "--device 0,ref: the reference's output");
  json_t *r = json_load_file("out.txt", 0, NULL), *t;
  size_t i;
  int used[2] = {0, 0};
  json_array_foreach(json_object_get(r, "tensors"), i, t) {
    json_int_t d = json_integer_value(json_object_get(t, "device_index"));
    if (json_object_get(t, "device_index") && d >= 0 && d < 2) used[d]++;
  }
  CHECK(used[0] && used[1], "both devices converted tensors (%d, %d)", used[0],
        used[1]);
  json_decref(r);
  CHECK(cli("repack dv.st d3.st " RULES " --device 0,,1") == 2 &&
            said("an empty item"),
        "an empty item of a device list refused");
  unsetenv("POCL_DEVICES");
}

/* How many tensors of the last --json summary ran on `family`. */
static int ran_on(const char *family) {
  json_t *j = json_load_file("out.txt", 0, NULL), *t;
  size_t i;
  int n = 0;
  json_array_foreach(json_object_get(j, "tensors"), i, t) {
    const char *f = json_string_value(json_object_get(t, "family"));
    n += f && !strcmp(f, family);
  }
  json_decref(j);
  return n;
}

/* The pid a repack named for its background --warm (0: none), after it
 * has exited: polled, since it is not this process's child. */
static int warm_finished(void) {
  char *err = slurp("err.txt");
  const char *at = err ? strstr(err, "(relayout repack --warm, pid ") : NULL;
  int pid = at ? atoi(at + strlen("(relayout repack --warm, pid ")) : 0;
  free(err);
  for (int waited = 0; pid > 0 && waited < 6000; waited++) {
    char path[64], state = 0;
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f || fscanf(f, "%*d (%*[^)]) %c", &state) != 1 || state == 'Z') {
      if (f) fclose(f);
      return pid;
    }
    fclose(f);
    usleep(100000);
  }
  return 0;
}

/* PoCL's compiled kernels under its cache directory dir: one shared
 * object per kernel and work-group size */
static int kernel_count(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *f;
  int n = 0;
  while (d && (f = readdir(d))) {
    char path[4096];
    size_t len = strlen(f->d_name);
    if (f->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", dir, f->d_name);
    struct stat st;
    if (f->d_type == DT_DIR ||
        (f->d_type == DT_UNKNOWN && !lstat(path, &st) && S_ISDIR(st.st_mode)))
      n += kernel_count(path);
    else
      n += len > 3 && !strcmp(f->d_name + len - 3, ".so");
  }
  if (d) closedir(d);
  return n;
}

/* A repack new to relayout's cache runs the generic kernels where it lacks
 * a shape's own and, its output complete, leaves their builds to a
 * `relayout repack --warm` in the background: the next run runs every
 * shape's own kernel, into the same bytes. A --part run builds them before
 * it exits; --warm alone builds them and writes nothing. */
static void test_warm(void) {
  write_model("m.st", 0, NMODEL, 0);
  setenv("RELAYOUT_KERNELS", "auto", 1);
  setenv("RELAYOUT_CACHE_DIR", "warm-cache", 1);
  CHECK(cli("repack m.st p1.st --device cpu --json " RULES) == 0 &&
            ran_on("generic") > 0 &&
            said("ran on the generic kernels, and their own build into the "
                 "cache in the background"),
        "a cold repack runs the generic kernels and names its background "
        "--warm");
  CHECK(warm_finished() > 0, "the background --warm exits");
  CHECK(cli("repack m.st p2.st --device cpu --json " RULES) == 0 &&
            ran_on("generic") == 0 && !said("the output is complete"),
        "the next repack runs every shape's own kernel");
  CHECK(same_files("p1.st", "p2.st"), "both runs give the same file");

  setenv("RELAYOUT_CACHE_DIR", "locked-cache", 1);
  CHECK(mkdir("locked-cache", 0777) == 0, "a cache directory");
  int lock = open("locked-cache/warm.lock", O_RDWR | O_CREAT, 0666);
  CHECK(lock >= 0 && flock(lock, LOCK_EX) == 0, "its warm lock taken");
  CHECK(cli("repack m.st p3.st --device cpu " RULES) == 0 &&
            said("their own do not build now: another relayout repack "
                 "--warm is building into the cache") &&
            same_files("p1.st", "p3.st"),
        "one background --warm per cache: a repack that finds the lock "
        "taken says so, its output whole");
  if (lock >= 0) close(lock);

  setenv("RELAYOUT_CACHE_DIR", "warm-cache2", 1);
  CHECK(cli("repack --warm m.st --device cpu " RULES) == 0 &&
            said(" kernels built into the cache") &&
            cli("repack m.st p4.st --device cpu --json " RULES) == 0 &&
            ran_on("generic") == 0 && same_files("p1.st", "p4.st"),
        "--warm builds every kernel the repack runs");
  CHECK(cli("repack --warm m.st --device cpu " RULES) == 0 &&
            said("every kernel was in the cache"),
        "a second --warm has nothing to build");
  CHECK(cli("repack --warm m.st p5.st " RULES) == 2 &&
            said("--warm takes IN alone") && access("p5.st", F_OK),
        "--warm with OUT refused, nothing written");
  CHECK(cli("repack --warm --dry-run m.st " RULES) == 2 &&
            said("--warm takes IN alone"),
        "--warm with --dry-run refused");
  setenv("RELAYOUT_CACHE_DIR", "off", 1);
  CHECK(cli("repack --warm m.st --device cpu " RULES) == 2 &&
            said("none is set"),
        "--warm without a cache refused");
  setenv("RELAYOUT_CACHE_DIR", "warm-cache3", 1);
  setenv("RELAYOUT_KERNELS", "generic", 1);
  CHECK(cli("repack --warm m.st --device cpu " RULES) == 0 &&
            said(" kernels built into the cache"),
        "--warm builds whatever RELAYOUT_KERNELS says");
  setenv("RELAYOUT_KERNELS", "auto", 1);

  /* per-channel quantizing, cold: on the generic kernels too (each
   * element's channel from its coordinates), then on its own, whose
   * launches --warm made (with the plan's table of channels) so that PoCL
   * compiles none at the next run (in a PoCL cache of its own) */
  setenv("RELAYOUT_CACHE_DIR", "channel-cache", 1);
  char *pocl =
      getenv("POCL_CACHE_DIR") ? strdup(getenv("POCL_CACHE_DIR")) : NULL;
  setenv("POCL_CACHE_DIR", "channel-pocl", 1);
  CHECK(cli("repack m.st c1.st --device cpu --json --rule "
            "'*.weight:4d=FRACTAL_Z:i8:per-channel=N'") == 0 &&
            ran_on("generic") > 0 && said("in the background"),
        "a cold repack of per-channel casts runs the generic kernels");
  CHECK(warm_finished() > 0, "its background --warm exits");
  int warmed = kernel_count("channel-pocl");
  CHECK(cli("repack m.st c2.st --device cpu --json --rule "
            "'*.weight:4d=FRACTAL_Z:i8:per-channel=N'") == 0 &&
            ran_on("generic") == 0 && same_files("c1.st", "c2.st"),
        "the next runs their own kernels, into the same bytes");
  if (!warmed) /* POCL_KERNEL_CACHE=0, or not PoCL's layout */
    printf("skipped: PoCL's cache in channel-pocl holds no compiled "
           "kernel to count\n");
  else
    CHECK(kernel_count("channel-pocl") == warmed,
          "--warm launched every kernel the next run does: PoCL had %d "
          "compiled kernels after it, %d after the run",
          warmed, kernel_count("channel-pocl"));
  if (pocl)
    setenv("POCL_CACHE_DIR", pocl, 1);
  else
    unsetenv("POCL_CACHE_DIR");
  free(pocl);

  /* two shards of layers alike: each shape counted once */
  static const spec layer[2][2] = {
      {{"l0.w", "F16", RELAYOUT_F16, 2, {40, 70}, "ND", "FRACTAL_NZ"},
       {"l0.k", "F32", RELAYOUT_F32, 4, {8, 3, 3, 3}, "ND", "FRACTAL_Z"}},
      {{"l1.w", "F16", RELAYOUT_F16, 2, {40, 70}, "ND", "FRACTAL_NZ"},
       {"l1.k", "F32", RELAYOUT_F32, 4, {8, 3, 3, 3}, "ND", "FRACTAL_Z"}}};
  mkdir("lp", 0777);
  write_specs("lp/a.safetensors", layer[0], 2, 0);
  write_specs("lp/b.safetensors", layer[1], 2, 0);
  json_t *idx = json_pack("{s:{s:i}, s:{s:s, s:s, s:s, s:s}}", "metadata",
                          "total_size", 1, "weight_map", "l0.w",
                          "a.safetensors", "l0.k", "a.safetensors", "l1.w",
                          "b.safetensors", "l1.k", "b.safetensors");
  json_dump_file(idx, "lp/model.safetensors.index.json", 0);
  json_decref(idx);
  setenv("RELAYOUT_CACHE_DIR", "layer-cache", 1);
  CHECK(cli("repack lp lp.out --device cpu --rule '*.w=FRACTAL_NZ' --rule "
            "'*.k=FRACTAL_Z'") == 0 &&
            said("; 2 shapes ran on the generic kernels"),
        "a sharded checkpoint's shapes counted once over its shards");
  CHECK(warm_finished() > 0, "its background --warm exits");

  write_sharded("wp");
  setenv("RELAYOUT_CACHE_DIR", "part-cache", 1);
  CHECK(cli("repack wp wp.1 " QRULES " --device cpu --part 0/1") == 0 &&
            said("the output is complete; building ") &&
            said(" into the cache for the next run") &&
            !said("in the background"),
        "a --part run builds its kernels before it exits, saying so");
  CHECK(cli("repack wp wp.2 " QRULES " --device cpu --part 0/1") == 0 &&
            !said("the output is complete"),
        "and the next part finds them built");
  unsetenv("RELAYOUT_KERNELS");
  unsetenv("RELAYOUT_CACHE_DIR");
}

int main(int argc, char **argv) {
  if (cli_setup(argc, argv, "repack")) return 2;
  test_parts();
  test_devices();
  test_shared_plans();
  test_damaged_records();
  test_shard_clash();
  test_round_trip(1);
  test_round_trip(0);
  test_warm();
  test_casts();
  test_quantize();
  test_reports();
  test_shards();
  test_hostile();
  test_outputs();
  test_legacy_zn();
  test_usage();
  cli_teardown();
  return check_summary();
}
