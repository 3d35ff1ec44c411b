/* corpus.c - relayout conform --export and --import: the matrix, and the
 * seeds' worked examples, as a golden corpus of .npy files with a
 * manifest; a corpus run on a device against its expected outputs */
#include "conform.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The seeds' worked examples (LAYOUTS.md section 4): each input holds its
 * elements' indices; tests/test_examples.c and test_formats.c check the
 * reference's output for them against what the seeds print. */
static const struct golden {
  const char *from, *to, *types, *shape, *origin;
} goldens[] = {
    {"ND", "FRACTAL_NZ", "f16", "20x28",
     "seed 000: Ascend's ND (20, 28) -> FRACTAL_NZ (2, 2, 16, 16), the "
     "printed tensor"},
    {"HWCN", "FRACTAL_Z", "f16", "2x2x32x32",
     "seed 000: HWCN (2, 2, 32, 32) -> FRACTAL_Z (8, 2, 16, 16)"},
    {"NDHWC", "FRACTAL_Z_3D", "f16", "48x3x3x2x32",
     "seed 000: NDHWC (48, 3, 3, 2, 32) -> FRACTAL_Z_3D (36, 3, 16, 16)"},
    {"ND", "FRACTAL_ZN", "i8", "40x20",
     "seed 000 and LAYOUTS.md's FRACTAL_ZN note: int8 (40, 20) -> (2, 2, "
     "16, 32)"},
    {"NCHW", "nChw8c", "f32", "2x17x3x5",
     "seed 001: oneDNN's nChw8c offsets, C = 17 padded to 24"},
    {"ND", "((4,2),(4,3)):((4,16),(1,32))", "f32", "8x12",
     "seed 003: CATLASS's ((4,2),(4,3)):((4,16),(1,32)), crd2offset's table"},
    {"NCHW", "TPU_ALIGNED(npus=4,lmem=1024)", "f32", "2x3x4x5",
     "seed 004: TPU aligned strides from NPU 0 (C stride 32, N stride 32)"},
    {"NCHW", "TPU_ALIGNED(npus=4,start=2,lmem=1024)", "f32", "2x3x4x5",
     "seed 004: TPU aligned strides from NPU 2 (N stride 64)"},
    {"NCHW", "TPU_COMPACT(npus=4,lmem=1024)", "f32", "2x3x4x5",
     "seed 004: TPU compact strides (C stride 20)"},
    {"ND", "TPU_MATRIX(npus=4,lmem=1024,w=20)", "f32", "2x40",
     "seed 004: TPU matrix layout, 20 columns per NPU"},
    {"NCHW", "4N", "i8", "6x5x4x5",
     "seed 004: 4N mode, int8 (6, 5, 4, 5), two dummy bytes"},
    {"NCHW", "TPU_COMPACT(npus=4,lmem=1024,start=1,offset=448)", "f32",
     "2x3x4x5",
     "seed 004: a compact tensor at address B = 1472 = 1 * 1024 + 448"},
    {"NCHW", "TPU_COMPACT(npus=4,lmem=1024,start=3,offset=16)", "f32",
     "2x3x4x5",
     "seed 004: a compact tensor at address D = 3088 = 3 * 1024 + 16"},
    {"NCHW",
     "TPU_STRIDED(npus=4,lmem=1024,wstride=2,hstride=16,cstride=56,"
     "nstride=120)",
     "f32", "2x5x3x4", "seed 004: local strides W 2, H 16, C 56, N 120"},
    {"NCHW", "TPU_STRIDED(npus=4,lmem=1024,start=1,wstride=2,nstride=120)",
     "f32", "2x3x1x10", "seed 004: local strides W 2, N 120, from NPU 1"},
    {"NCHW", "TPU_ALIGNED(npus=4,lmem=1024,n0=4)", "i8", "6x5x4x5",
     "seed 004: 4N mode in the aligned layout, (M = 2, 5, 4, 5) int8x4"},
    {"NCHW", "TPU_ALIGNED(npus=4,lmem=1024,n0=2)", "i16", "3x5x4x5",
     "seed 004: 2N mode in the aligned layout, (M = 2, 5, 4, 5) int16x2"},
    {"NCHW", "TPU_COMPACT(npus=4,lmem=1024,n0=2)", "f32", "3x5x2x2",
     "seed 004: 2IC mode, an fp32 [I, O, H, W] weight as (J = 2, 5, 2, 2) "
     "fp32x2"},
    {"NCHW", "FRACTAL_Z(groups=2)", "f16", "16x3x3x3",
     "LAYOUTS.md's grouped FRACTAL_Z: 2 groups of 8 x 3, e = 2"},
    {"NCHW", "FRACTAL_Z(groups=5)", "f16", "15x5x2x3",
     "LAYOUTS.md's grouped FRACTAL_Z: 5 groups of 3 x 5, e = 5"},
    {"NCHW", "FRACTAL_Z(groups=3)", "f16", "21x17x1x2",
     "LAYOUTS.md's grouped FRACTAL_Z: 3 groups of 7 x 17, cin over two C0"},
    {"NCDHW", "FRACTAL_Z_3D(groups=2)", "f16", "16x3x2x3x3",
     "LAYOUTS.md's grouped FRACTAL_Z_3D (GDC1HWN1N0C0): 2 groups of 8 x 3"},
    {"NCHW", "FRACTAL_Z_C04", "f16", "18x3x3x5",
     "LAYOUTS.md's FRACTAL_Z_C04: K = (h * W + w) * 4 + c, (4, 2, 16, 16)"},
    {"ND", "FRACTAL_ZN_RNN(input=20,hidden=5)", "f16", "25x20",
     "LAYOUTS.md's FRACTAL_ZN_RNN: an LSTM's stacked weight, input and "
     "hidden rows and each gate padded apart, (3, 4, 16, 16)"},
    {"ND", "ND_RNN_BIAS(hidden=5)", "f16", "1x20",
     "LAYOUTS.md's ND_RNN_BIAS: 4 gates of 5, each padded to 16"},
};

static const char readme[] =
    "# A relayout conformance corpus\n"
    "\n"
    "Written by `relayout conform --export` (relayout %s, seed %llu). Each\n"
    "case in manifest.json is a conversion and its expected output:\n"
    "\n"
    "- `from`, `to`: the source and destination layouts, every block size\n"
    "  written out (relayout's layout text, docs in relayout's LAYOUTS.md);\n"
    "- `dims`: the logical extents, in the source's logical order;\n"
    "- `dtype`, `to_dtype`: the element types (a cast where they differ);\n"
    "  `from_quant`, `to_quant`: a quantized side's scale and zero point;\n"
    "- `input`, `expected`: .npy files of the source's and destination's\n"
    "  bytes in memory order, padding included (bf16 as `<V2`; 4-bit types\n"
    "  as `|u1` bytes, two elements per byte, the low nibble first), and\n"
    "  `sha256` of each file;\n"
    "- `origin`: for the seeds' worked examples, where the case comes from\n"
    "  (their inputs hold each element's index).\n"
    "\n"
    "To check another implementation: for each case, convert `input` from\n"
    "`from` to `to` (and the types) and compare the bytes with `expected`,\n"
    "padding included. To check a device with relayout:\n"
    "\n"
    "    relayout conform --import DIR --device D [--junit FILE]\n";

typedef struct exporter {
  char dir[4096]; /* the temp directory being written */
  json_t *cases;
  int left_out, failed;
  uint64_t seed;
} exporter;

static int write_file(exporter *x, const char *name, const void *data,
                      size_t n) {
  char path[4200];
  cli_out o;
  relayout_error err;
  snprintf(path, sizeof path, "%s/%s", x->dir, name);
  if (cli_out_check(&o, path, 0, &err) ||
      cli_out_whole(&o, NULL, 0, data, n, &err)) {
    cli_error(EXIT_WORK, "conform", "%s: %s", path, err.message);
    return x->failed = 1;
  }
  return 0;
}

/* The .npy bytes of a descriptor's buffer: its physical shape (4-bit:
 * bytes); NULL when out of memory or its shape does not hold the bytes. */
static unsigned char *npy_of(const relayout_desc *d, const void *data, size_t n,
                             size_t *len) {
  relayout_dtype t = relayout_desc_dtype(d);
  const char *descr = "|u1";
  int rank = 1;
  int64_t shape[RELAYOUT_MAX_AXES] = {(int64_t)n}, elements = 1;
  if (relayout_dtype_bits(t) != 4) {
    relayout_npy_descr(&descr, t, NULL);
    relayout_desc_physical_shape(&rank, shape, d);
    for (int i = 0; i < rank; i++) elements *= shape[i];
    if (elements * (relayout_dtype_bits(t) / 8) != (int64_t)n) {
      rank = 1;
      shape[0] = (int64_t)n / (relayout_dtype_bits(t) / 8);
    }
  }
  size_t head = 0;
  if (relayout_npy_header(NULL, &head, descr, rank, shape, NULL)) return NULL;
  unsigned char *out = malloc(head + n);
  if (!out ||
      relayout_npy_header((char *)out, &head, descr, rank, shape, NULL)) {
    free(out);
    return NULL;
  }
  memcpy(out + head, data, n);
  *len = head + n;
  return out;
}

static json_t *quant_json(const cf_side *x) {
  return x->quantized ? json_pack("{s:f, s:i}", "scale", (double)x->q.scale,
                                  "zero_point", (json_int_t)x->q.zero_point)
                      : json_null();
}

/* One case into the corpus: its input (`index`: each element's index, else
 * filled from the seed), the reference's output, its manifest entry. */
static void put_case(exporter *x, const char *group, const cf_case *k,
                     int index, const char *origin) {
  relayout_layout *a = NULL, *b = NULL;
  relayout_desc s, d;
  relayout_error why;
  unsigned char *in = NULL, *want = NULL, *fin = NULL, *fout = NULL;
  char from[512], to[512], names[2][32], hex[2][65];
  size_t flen[2];
  int64_t sb = 0, db = 0;
  if (!x->failed && cli_interrupted())
    x->failed = cli_error(EXIT_WORK, "conform", "interrupted by signal %d",
                          cli_interrupted());
  if (x->failed) return;
  if (cf_bind(k, &a, &b, &s, &d, &why) ||
      relayout_layout_resolved_text(from, sizeof from, a, k->s.t, &why) ||
      relayout_layout_resolved_text(to, sizeof to, b, k->d.t, &why)) {
    if (origin) { /* a worked example must bind */
      cli_error(EXIT_WORK, "conform", "%s: %s", k->text, why.message);
      x->failed = 1;
    }
    x->left_out++;
    goto done;
  }
  relayout_desc_size_bytes(&sb, &s, NULL);
  relayout_desc_size_bytes(&db, &d, NULL);
  in = malloc((size_t)sb + 1);
  want = malloc((size_t)db + 1);
  if (in && index) {
    int size = relayout_dtype_bits(k->s.t) / 8;
    for (int64_t e = 0; size && e < sb / size; e++)
      for (int i = 0; i < size; i++)
        in[e * size + i] = (unsigned char)((uint64_t)e >> 8 * i);
  } else if (in) {
    cf_fill(in, sb, x->seed, k->text);
  }
  if (!in || !want ||
      relayout_convert_ref(&d, want, (size_t)db, &s, in, (size_t)sb, &why) ||
      !(fin = npy_of(&s, in, (size_t)sb, &flen[0])) ||
      !(fout = npy_of(&d, want, (size_t)db, &flen[1]))) {
    cli_error(EXIT_WORK, "conform", "%s: %s", k->text,
              in && want ? why.message : "out of memory");
    x->failed = 1;
    goto done;
  }
  int n = (int)json_array_size(x->cases) + 1;
  snprintf(names[0], sizeof names[0], "cases/%05d-in.npy", n);
  snprintf(names[1], sizeof names[1], "cases/%05d-out.npy", n);
  cli_sha256(hex[0], fin, flen[0]);
  cli_sha256(hex[1], fout, flen[1]);
  if (write_file(x, names[0], fin, flen[0]) ||
      write_file(x, names[1], fout, flen[1]))
    goto done;
  json_t *dims = json_array();
  for (int i = 0; i < k->rank; i++)
    json_array_append_new(dims, json_integer(k->ext[i]));
  json_t *entry =
      json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:s, s:o, s:o, s:s, s:s, "
                "s:{s:s, s:s}}",
                "name", k->text, "group", group, "from", from, "to", to, "dims",
                dims, "dtype", relayout_dtype_name(k->s.t), "to_dtype",
                relayout_dtype_name(k->d.t), "from_quant", quant_json(&k->s),
                "to_quant", quant_json(&k->d), "input", names[0], "expected",
                names[1], "sha256", "input", hex[0], "expected", hex[1]);
  if (origin) json_object_set_new(entry, "origin", json_string(origin));
  json_array_append_new(x->cases, entry);
done:
  free(in);
  free(want);
  free(fin);
  free(fout);
  relayout_layout_free(a);
  relayout_layout_free(b);
}

static void export_case(void *ctx, const char *group, const cf_case *k) {
  put_case(ctx, group, k, 0, NULL);
}

int cf_export(const char *dir, void (*list)(void *, cf_visit *, void *),
              void *list_ctx, uint64_t seed) {
  struct stat st;
  if (!lstat(dir, &st))
    return cli_error(EXIT_WORK, "conform",
                     "--export %s: it exists (a corpus goes into a new "
                     "directory)",
                     dir);
  exporter x = {.cases = json_array(), .seed = seed};
  cli_sweep_stale(dir);
  cli_defer_signals(); /* a signal stops the export, which removes x.dir */
  snprintf(x.dir, sizeof x.dir, "%s.tmp-XXXXXX", dir);
  char cases[4200];
  if (!mkdtemp(x.dir) ||
      (snprintf(cases, sizeof cases, "%s/cases", x.dir), mkdir(cases, 0777))) {
    json_decref(x.cases);
    return cli_error(EXIT_WORK, "conform", "--export %s: %s", dir,
                     strerror(errno));
  }
  for (size_t i = 0; i < sizeof goldens / sizeof goldens[0]; i++) {
    const struct golden *g = &goldens[i];
    cf_case k = {0};
    snprintf(k.from, sizeof k.from, "%s", g->from);
    snprintf(k.to, sizeof k.to, "%s", g->to);
    if (cf_parse_types(&k, g->types, "conform") ||
        cli_parse_shape(k.ext, &k.rank, g->shape))
      x.failed = 1;
    cf_name(&k);
    put_case(&x, "seeds", &k, 1, g->origin);
  }
  list(list_ctx, export_case, &x);
  char *manifest = NULL, *text = NULL;
  if (!x.failed) {
    json_t *m = json_pack("{s:i, s:s, s:I, s:O}", "version", 1, "relayout",
                          relayout_version_string(), "seed", (json_int_t)seed,
                          "cases", x.cases);
    manifest = json_dumps(m, JSON_INDENT(1));
    json_decref(m);
    size_t n = (size_t)snprintf(NULL, 0, readme, relayout_version_string(),
                                (unsigned long long)seed);
    if ((text = malloc(n + 1)))
      snprintf(text, n + 1, readme, relayout_version_string(),
               (unsigned long long)seed);
    if (!manifest || !text)
      x.failed = cli_error(EXIT_WORK, "conform", "out of memory");
    else if (!write_file(&x, "manifest.json", manifest, strlen(manifest)))
      write_file(&x, "README.md", text, n);
  }
  if (!x.failed && cli_interrupted())
    x.failed = cli_error(EXIT_WORK, "conform", "interrupted by signal %d",
                         cli_interrupted());
  if (!x.failed && rename(x.dir, dir))
    x.failed = cli_error(EXIT_WORK, "conform", "--export %s: %s", dir,
                         strerror(errno));
  if (x.failed) {
    cli_remove_tree(x.dir);
    cli_reraise();
  } else
    printf("%zu cases written to %s (%d of the matrix's do not bind and "
           "are left out)\n",
           json_array_size(x.cases), dir, x.left_out);
  free(manifest);
  free(text);
  json_decref(x.cases);
  return x.failed ? EXIT_WORK : 0;
}

/* A corpus file, named by the manifest: read whole, its sha256 checked,
 * its .npy data returned (in *file, to free) with its size. */
static const unsigned char *corpus_file(const char *dir, const char *name,
                                        const char *sha, unsigned char **file,
                                        size_t *size, relayout_error *err) {
  char path[4200], hex[65];
  relayout_npy_info info;
  size_t n;
  *file = NULL;
  if (!name || !sha || strstr(name, "..") || *name == '/') {
    cli_fail(err, RELAYOUT_ERR_FILE, "a case names no file, or one outside");
    return NULL;
  }
  snprintf(path, sizeof path, "%s/%s", dir, name);
  cli_in in;
  relayout_error why;
  relayout_status s =
      cli_in_open_file(&in, cli_open_beneath(dir, name, &why), &why);
  if (!s) s = cli_in_read_npy(&in, file, &n, &why);
  cli_in_close(&in);
  if (s) {
    cli_fail(err, RELAYOUT_ERR_FILE, "%s: %s", path, why.message);
    return NULL;
  }
  cli_sha256(hex, *file, n);
  if (strcmp(hex, sha)) {
    cli_fail(err, RELAYOUT_ERR_FILE,
             "%s: its sha256 is %s, the manifest says %s", path, hex, sha);
    return NULL;
  }
  if (relayout_npy_parse(&info, *file, n, err)) return NULL;
  *size = (size_t)info.data_size;
  return *file + info.data_offset;
}

/* A manifest entry's quantization into x (null: none). */
static int quant_of(cf_side *x, json_t *q) {
  if (json_is_null(q) || !q) return 0;
  json_t *s = json_object_get(q, "scale"),
         *z = json_object_get(q, "zero_point");
  double scale = json_number_value(s);
  if (!json_is_number(s) || !json_is_integer(z) || !(scale > 0) ||
      !((float)scale > 0) || !isfinite((float)scale) ||
      json_integer_value(z) < INT32_MIN || json_integer_value(z) > INT32_MAX)
    return -1;
  x->quantized = 1;
  x->q.scale = (float)json_number_value(s);
  x->q.zero_point = (int32_t)json_integer_value(z);
  return 0;
}

/* Entry i as a case, its two files read and checked; 0, or a message. */
static int entry_case(const char *dir, json_t *e, cf_case *k,
                      unsigned char **files, const unsigned char **data,
                      size_t *sizes, relayout_error *err) {
  const char *from = json_string_value(json_object_get(e, "from")),
             *to = json_string_value(json_object_get(e, "to")),
             *dt = json_string_value(json_object_get(e, "dtype")),
             *tdt = json_string_value(json_object_get(e, "to_dtype"));
  json_t *dims = json_object_get(e, "dims"),
         *sha = json_object_get(e, "sha256");
  relayout_error e2;
  memset(k, 0, sizeof *k);
  if (!from || !to || !dt || !tdt || !json_is_array(dims) ||
      json_array_size(dims) < 1 || json_array_size(dims) > RELAYOUT_MAX_DIMS ||
      strlen(from) >= sizeof k->from || strlen(to) >= sizeof k->to ||
      relayout_dtype_from_name(&k->s.t, dt, &e2) ||
      relayout_dtype_from_name(&k->d.t, tdt, &e2) ||
      quant_of(&k->s, json_object_get(e, "from_quant")) ||
      quant_of(&k->d, json_object_get(e, "to_quant")))
    return cli_fail(err, RELAYOUT_ERR_FILE,
                    "expected from, to, dims (1 to %d extents), dtype, "
                    "to_dtype and quantizations (an f32 scale above 0, an "
                    "int32 zero point) as --export writes them",
                    RELAYOUT_MAX_DIMS);
  snprintf(k->from, sizeof k->from, "%s", from);
  snprintf(k->to, sizeof k->to, "%s", to);
  k->rank = (int)json_array_size(dims);
  for (int i = 0; i < k->rank; i++) {
    json_t *v = json_array_get(dims, (size_t)i);
    if (!json_is_integer(v) || json_integer_value(v) < 1)
      return cli_fail(err, RELAYOUT_ERR_FILE, "dims: positive integers");
    k->ext[i] = json_integer_value(v);
  }
  int cast = k->s.t != k->d.t || k->s.quantized || k->d.quantized;
  size_t at = 0;
  for (int i = 0; i <= cast; i++) {
    const cf_side *x = i ? &k->d : &k->s;
    at += (size_t)snprintf(k->types + at, sizeof k->types - at, "%s%s",
                           i ? "->" : "", relayout_dtype_name(x->t));
    if (x->quantized && at < sizeof k->types)
      at += (size_t)snprintf(k->types + at, sizeof k->types - at, ":%g:%d",
                             (double)x->q.scale, (int)x->q.zero_point);
  }
  cf_name(k);
  const char *which[2] = {"input", "expected"};
  for (int i = 0; i < 2; i++)
    if (!(data[i] =
              corpus_file(dir, json_string_value(json_object_get(e, which[i])),
                          json_string_value(json_object_get(sha, which[i])),
                          &files[i], &sizes[i], err)))
      return RELAYOUT_ERR_FILE;
  return 0;
}

/* Case i of the manifest: read, checked, bound; with `run`, run on c. 0,
 * or the exit code after saying what is wrong with it. */
static int import_case(conform *c, const char *dir, const char *path, size_t i,
                       json_t *e, int run) {
  cf_case k;
  unsigned char *files[2] = {NULL, NULL};
  const unsigned char *data[2];
  size_t sizes[2];
  relayout_error err = {""};
  relayout_layout *a = NULL, *b = NULL;
  relayout_desc s, d;
  int64_t sb = 0, db = 0;
  int rc = 0;
  const char *group = json_string_value(json_object_get(e, "group"));
  if (entry_case(dir, e, &k, files, data, sizes, &err))
    rc = cli_error(EXIT_WORK, "conform", "%s, case %zu: %s", path, i + 1,
                   err.message);
  else if (cf_bind(&k, &a, &b, &s, &d, &err))
    rc = cli_error(EXIT_WORK, "conform", "%s, case %zu (%s): %s", path, i + 1,
                   k.text, err.message);
  else if (relayout_desc_size_bytes(&sb, &s, NULL) ||
           relayout_desc_size_bytes(&db, &d, NULL) || (size_t)sb != sizes[0] ||
           (size_t)db != sizes[1])
    rc = cli_error(EXIT_WORK, "conform",
                   "%s, case %zu (%s): its files hold %zu and %zu bytes, the "
                   "conversion %lld and %lld",
                   path, i + 1, k.text, sizes[0], sizes[1], (long long)sb,
                   (long long)db);
  else if (run && ++c->seen)
    cf_run(c, group ? group : "corpus", &k, data[0], data[1]);
  relayout_layout_free(a);
  relayout_layout_free(b);
  free(files[0]);
  free(files[1]);
  return rc;
}

int cf_import(conform *c, const char *dir) {
  char path[4200];
  json_error_t jerr;
  relayout_error err;
  snprintf(path, sizeof path, "%s/manifest.json", dir);
  int fd = cli_open_beneath(dir, "manifest.json", &err);
  if (fd < 0)
    return cli_error(EXIT_WORK, "conform", "%s: %s", path, err.message);
  json_t *m = json_loadfd(fd, JSON_REJECT_DUPLICATES, &jerr),
         *cases = json_object_get(m, "cases");
  close(fd);
  json_t *version = json_object_get(m, "version");
  const char *bad =
      !m                      ? jerr.text
      : !json_is_array(cases) ? "no \"cases\" array"
      : !json_is_integer(version) || json_integer_value(version) != 1
          ? "not a corpus of version 1, the one this relayout "
            "reads"
          : NULL;
  if (bad) {
    int rc = cli_error(EXIT_WORK, "conform", "%s: %s", path, bad);
    json_decref(m);
    return rc;
  }
  /* every case checked before any runs: a damaged corpus is an error, not
   * a verdict */
  size_t i;
  json_t *e;
  int rc = 0;
  for (int run = 0; run < 2 && !rc; run++)
    json_array_foreach(
        cases, i, e) if ((rc = import_case(c, dir, path, i, e, run))) break;
  json_decref(m);
  return rc;
}
