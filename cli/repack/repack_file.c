/* repack_file.c - repacking (or restoring) the tensors of one safetensors
 * file: binding each tensor to its rule or its recorded metadata, the new
 * header, then copies and conversions written through a temp file. */
#include "cli.h"
#include "pipeline.h"
#include "repack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rp_item {
  const st_tensor *t;
  int rule; /* repack: index of the rule; -1: copied unchanged */
  int convert;
  relayout_desc src, dst; /* as the input stores it -> as the output will */
  char from[128], to[128];
  const char *out_dtype, *from_dtype; /* the output's; the original's */
  int out_rank;
  int64_t out_shape[RELAYOUT_MAX_AXES];
  uint64_t out_size, out_at; /* out_at: in the output's data section */
  relayout_plan *plan;
  int shared; /* plan is an earlier item's, the same conversion */
  int device; /* the engine (o->engines) its plan is made on */
  /* a quantized tensor's symmetric scales, stored as the F32 tensor
   * scale_name: nscales along logical dim axis (0: one for the tensor) */
  float *scales;
  int64_t nscales;
  char axis;
  char *scale_name;
  uint64_t scale_at; /* repack: in the output's data section */
  int scale_of;      /* restore: the item of its scales (-1: none) */
  int dropped;       /* restore: a scale tensor its weight takes back */
} rp_item;

/* Binds from -> to for an array of `shape` (as `from` stores it, of dtype
 * ft; to holds dtype tt) and fills the item's descriptors, texts and output
 * shape; reverse swaps the sides. */
static relayout_status bind(rp_item *it, const relayout_layout *from,
                            const relayout_layout *to, int rank,
                            const int64_t *shape, relayout_dtype ft,
                            relayout_dtype tt, int reverse,
                            relayout_error *err) {
  relayout_desc s, d;
  relayout_status st =
      relayout_bind(&s, &d, from, to, ft, rank, shape, NULL, 0, err);
  if (!st && tt != ft) st = relayout_desc_retype(&d, to, tt, NULL, err);
  if (!st)
    st =
        relayout_layout_resolved_text(it->from, sizeof it->from, from, ft, err);
  if (!st)
    st = relayout_layout_resolved_text(it->to, sizeof it->to, to, tt, err);
  if (st) return st;
  it->src = reverse ? d : s;
  it->dst = reverse ? s : d;
  it->from_dtype = st_dtype_name(ft);
  it->out_dtype = st_dtype_name(reverse ? ft : tt);
  int64_t in_size, out_size;
  relayout_desc_size_bytes(&in_size, &it->src, NULL);
  relayout_desc_size_bytes(&out_size, &it->dst, NULL);
  if ((uint64_t)in_size != it->t->end - it->t->begin)
    return cli_fail(err, RELAYOUT_ERR_DIMS,
                    "%s holds %lld bytes, not the %llu the tensor has",
                    reverse ? it->to : it->from, (long long)in_size,
                    (unsigned long long)(it->t->end - it->t->begin));
  it->out_size = (uint64_t)out_size;
  relayout_desc_physical_shape(&it->out_rank, it->out_shape, &it->dst);
  it->convert = 1;
  return RELAYOUT_OK;
}

/* The quantized side's scales applied to it: one per tensor, or per
 * channel along it->axis (it->scales, it->nscales of them). */
static relayout_status quantize_side(rp_item *it, relayout_desc *d,
                                     const relayout_layout *layout,
                                     relayout_error *err) {
  if (!it->axis)
    return relayout_desc_retype(d, layout, RELAYOUT_I8,
                                &(relayout_quant){it->scales[0], 0}, err);
  relayout_quant_channels q = {it->axis, it->nscales, it->scales, NULL};
  return relayout_desc_quantize_channels(d, &q, err);
}

/* The channels along `axis` of the bound tensor (1 for axis 0), or -1 with
 * err filled where it has no such dim. */
static int64_t channels(const rp_item *it, char axis, relayout_error *err) {
  char names[RELAYOUT_MAX_DIMS], lab[8];
  int64_t ext[RELAYOUT_MAX_DIMS];
  int n = relayout_desc_dims(&it->src, names, ext);
  for (int i = 0; axis && i < n; i++)
    if (names[i] == axis) return ext[i];
  if (axis)
    cli_fail(err, RELAYOUT_ERR_DIMS,
             "per-channel=%s: the tensor's logical dims are %.*s",
             relayout_dim_label(lab, axis), n, names);
  return axis ? -1 : 1;
}

/* NAME RP_SCALE_SUFFIX into it->scale_name. */
static relayout_status name_scales(rp_item *it, relayout_error *err) {
  it->scale_name = malloc(strlen(it->t->name) + sizeof RP_SCALE_SUFFIX);
  if (!it->scale_name)
    return cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  strcat(strcpy(it->scale_name, it->t->name), RP_SCALE_SUFFIX);
  return RELAYOUT_OK;
}

static relayout_status bind_rule(rp_item *it, const rp_rule *r,
                                 const unsigned char *data,
                                 relayout_error *err) {
  int quant = r->cast && r->dtype == RELAYOUT_I8;
  if (quant && (!cli_float_dtype(it->t->bits) || it->t->bits == RELAYOUT_F64))
    return cli_fail(err, RELAYOUT_ERR_ARGUMENT,
                    "a quantizing rule takes F16, BF16 or F32 tensors, not %s",
                    it->t->dtype);
  if (r->cast && !cli_float_dtype(it->t->bits))
    return cli_fail(err, RELAYOUT_ERR_ARGUMENT,
                    "a rule casts F16, BF16, F32 or F64 tensors, not %s",
                    it->t->dtype);
  relayout_status s =
      bind(it, r->from, r->to, it->t->rank, it->t->shape, it->t->bits,
           r->cast ? r->dtype : it->t->bits, 0, err);
  if (s || !quant) return s;
  it->axis = r->axis;
  if ((it->nscales = channels(it, r->axis, err)) < 0) return RELAYOUT_ERR_DIMS;
  if (!(it->scales = malloc(sizeof *it->scales * (size_t)it->nscales)))
    return cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  if ((s = name_scales(it, err)) ||
      (s = relayout_symmetric_scales(it->scales, it->nscales, &it->src, data,
                                     it->t->end - it->t->begin, r->axis,
                                     RELAYOUT_I8, err)))
    return s;
  return quantize_side(it, &it->dst, r->to, err);
}

/* Files of version 1 recorded FRACTAL_ZN with its blocks the other way
 * round (N0 = c0, K0 = b16: LAYOUTS.md's note); text such a record names
 * is rewritten into the grammar that lays it out as it was written. */
static const char *legacy_text(char *buf, size_t room, const char *text,
                               int version) {
  long long c0, b16;
  int end = 0;
  if (version == 1 &&
      (sscanf(text, "FRACTAL_ZN(c0=%lld,b16=%lld)%n", &c0, &b16, &end) == 2 ||
       sscanf(text, "ZN(c0=%lld,b16=%lld)%n", &c0, &b16, &end) == 2) &&
      !text[end]) {
    snprintf(buf, room, "...KN%lldn%lldk", c0, b16);
    return buf;
  }
  return text;
}

/* A restore: the F32 tensor `name` of the file as the quantized source's
 * scales (it->src, stored in layout b), along axis (0: one). */
static relayout_status take_scales(rp_item *it, const st_file *f,
                                   const char *name, char axis,
                                   const relayout_layout *b,
                                   relayout_error *err) {
  int j = 0;
  while (j < f->ntensors && strcmp(f->tensors[j].name, name)) j++;
  const st_tensor *t = j < f->ntensors ? &f->tensors[j] : NULL;
  it->axis = axis;
  it->scale_of = j;
  int64_t n = channels(it, axis, err);
  if (n < 0) return RELAYOUT_ERR_FILE;
  if (!t || strcmp(t->dtype, "F32") || t->rank != 1 || t->shape[0] != n)
    return cli_fail(err, RELAYOUT_ERR_FILE,
                    "its scales '%s' are not an F32 tensor of %lld values in "
                    "the file",
                    name, (long long)n);
  it->nscales = n;
  if (!(it->scales = malloc(sizeof *it->scales * (size_t)n)))
    return cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  memcpy(it->scales, f->data + t->begin, sizeof *it->scales * (size_t)n);
  relayout_status s = quantize_side(it, &it->src, b, err);
  return s ? cli_fail(err, RELAYOUT_ERR_FILE, "its scales '%s': %s", name,
                      err->message)
           : RELAYOUT_OK;
}

/* A restore: the recorded {"from", "to", "shape", "dtype"} of a tensor, in
 * a file of relayout's metadata version `version`. */
static relayout_status bind_restore(rp_item *it, const char *record,
                                    int version, const st_file *f,
                                    relayout_error *err) {
  json_error_t je;
  json_t *j = json_loads(record, JSON_REJECT_DUPLICATES, &je);
  const char *from = NULL, *to = NULL, *dtype = NULL, *from_dtype = NULL,
             *scale = NULL, *axis = "";
  json_t *shape = NULL;
  relayout_status st = RELAYOUT_ERR_FILE;
  if (!j ||
      json_unpack(j, "{s:s, s:s, s:o, s:s, s?s, s?s, s?s}", "from", &from, "to",
                  &to, "shape", &shape, "dtype", &dtype, "from_dtype",
                  &from_dtype, "scale", &scale, "axis", &axis) ||
      !json_is_array(shape) || json_array_size(shape) > RELAYOUT_MAX_DIMS ||
      strlen(axis) > 1 || (scale && !from_dtype)) {
    cli_fail(err, st,
             "its relayout metadata is not {from, to, shape, dtype} (with "
             "from_dtype, scale and axis where it was quantized)");
    goto done;
  }
  if (strcmp(dtype, it->t->dtype)) {
    cli_fail(err, st, "its relayout metadata says dtype %s, the file says %s",
             dtype, it->t->dtype);
    goto done;
  }
  relayout_dtype ft = it->t->bits;
  if (scale) {
    if (!st_dtype_of(&ft, from_dtype) || !cli_float_dtype(ft) ||
        it->t->bits != RELAYOUT_I8) {
      cli_fail(err, st,
               "its relayout metadata quantizes %s to %s, which no rule does",
               from_dtype, dtype);
      goto done;
    }
    fprintf(stderr,
            "relayout repack: tensor '%s' was quantized to %s: restored as "
            "%s, its dequantized values (q * scale)\n",
            it->t->name, dtype, from_dtype);
  } else if (from_dtype) {
    if (!st_dtype_of(&ft, from_dtype) || !cli_float_dtype(ft) ||
        !cli_float_dtype(it->t->bits)) {
      cli_fail(err, st,
               "its relayout metadata casts %s to %s, which no rule "
               "does",
               from_dtype, dtype);
      goto done;
    }
    /* exact only where the stored type is the wider (f16 and bf16 hold
     * each other's values neither way) */
    if (relayout_dtype_bits(it->t->bits) <= relayout_dtype_bits(ft))
      fprintf(stderr,
              "relayout repack: tensor '%s' was cast from %s to %s: restored "
              "as %s, at %s's precision\n",
              it->t->name, from_dtype, dtype, from_dtype, dtype);
  }
  int rank = (int)json_array_size(shape);
  int64_t dims[RELAYOUT_MAX_DIMS];
  for (int i = 0; i < rank; i++) {
    json_t *v = json_array_get(shape, (size_t)i);
    dims[i] = json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
    if (dims[i] < 1) {
      cli_fail(err, st, "its relayout metadata has a bad shape");
      goto done;
    }
  }
  relayout_layout *a = NULL, *b = NULL;
  char fbuf[128], tbuf[128];
  st = relayout_layout_parse(&a, legacy_text(fbuf, sizeof fbuf, from, version),
                             err);
  if (!st)
    st = relayout_layout_parse(&b, legacy_text(tbuf, sizeof tbuf, to, version),
                               err);
  if (!st) st = bind(it, a, b, rank, dims, ft, it->t->bits, 1, err);
  if (!st && scale) st = take_scales(it, f, scale, axis[0], b, err);
  relayout_layout_free(a);
  relayout_layout_free(b);
  if (st) goto done;
  if (!relayout_desc_holds_shape(&it->src, it->t->rank, it->t->shape))
    st = cli_fail(err, RELAYOUT_ERR_FILE,
                  "its shape is not the physical shape of %s that its relayout "
                  "metadata gives",
                  to);
done:
  json_decref(j);
  return st;
}

/* RP_PREFIX + name, malloc'd (NULL when out of memory). */
static char *record_key(const char *name) {
  char *key = malloc(strlen(RP_PREFIX) + strlen(name) + 1);
  if (key) strcat(strcpy(key, RP_PREFIX), name);
  return key;
}

/* The marker a repacked file carries: 1 (*had receives had_metadata,
 * *version the metadata's version), 0 where it has none, -1 where it is
 * damaged. */
static int repacked(const st_file *f, int *had, int *version) {
  json_t *m = f->metadata ? json_object_get(f->metadata, RP_MARK) : NULL;
  json_t *j = m ? json_loads(json_string_value(m), 0, NULL) : NULL;
  int ok = j && !json_unpack(j, "{s:i, s:b}", "version", version,
                             "had_metadata", had);
  json_decref(j);
  return m ? (ok ? 1 : -1) : 0;
}

/* A metadata key of the input that a restore would take for a record. */
static const char *reserved_key(const st_file *f) {
  const char *k;
  json_t *v;
  if (!f->metadata) return NULL;
  json_object_foreach(f->metadata, k, v) {
    if (!strncmp(k, RP_PREFIX, strlen(RP_PREFIX))) return k;
  }
  return NULL;
}

/* Repacking, each new scale tensor's name is free in the file and in the
 * checkpoint's weight_map (a shard index's, or NULL); restoring, each scale
 * tensor a weight takes back is dropped from the output (and is no weight
 * itself). */
static relayout_status scale_names(const rp_options *o, const st_file *f,
                                   rp_item *items, const json_t *weight_map,
                                   relayout_error *err) {
  for (int i = 0; i < f->ntensors; i++) {
    rp_item *it = &items[i];
    if (o->restore && it->scale_of >= 0) {
      rp_item *sc = &items[it->scale_of];
      if (sc->convert || sc->dropped)
        return cli_fail(err, RELAYOUT_ERR_FILE,
                        "%s: tensor '%s': its scales '%s' are converted or "
                        "shared",
                        f->path, it->t->name, sc->t->name);
      sc->dropped = 1;
      sc->out_size = 0;
    }
    const char *shard =
        !o->restore && it->scale_name
            ? json_string_value(json_object_get(weight_map, it->scale_name))
            : NULL;
    if (!o->restore && it->scale_name &&
        (json_object_get(f->header, it->scale_name) || shard))
      return cli_fail(
          err, RELAYOUT_ERR_FILE,
          "%s: tensor '%s' would be quantized, its scales "
          "stored as '%s', but the %s has a tensor of that name%s%s",
          f->path, it->t->name, it->scale_name,
          weight_map ? "checkpoint" : "file", shard ? " in " : "",
          shard ? shard : "");
  }
  return RELAYOUT_OK;
}

static relayout_status bind_all(rp_options *o, const st_file *f, rp_item *items,
                                const json_t *weight_map, relayout_error *err) {
  int had = 0, version = 0, mark = repacked(f, &had, &version);
  const char *held =
      mark < 0 ? json_string_value(json_object_get(f->metadata, RP_MARK))
               : NULL;
  if (mark < 0)
    return cli_fail(
        err, RELAYOUT_ERR_FILE,
        "%s: __metadata__ key '" RP_MARK "' holds '%.40s', not relayout's "
        "marker; relayout keeps its records under that key, so it neither "
        "repacks nor restores this file",
        f->path, held ? held : "(not a string)");
  if (o->restore && !mark)
    return cli_fail(err, RELAYOUT_ERR_FILE,
                    "%s: was not repacked by relayout (no relayout "
                    "metadata): nothing to restore",
                    f->path);
  if (o->restore && (version < 1 || version > RP_VERSION))
    return cli_fail(err, RELAYOUT_ERR_FILE,
                    "%s: its relayout metadata is of version %d; this "
                    "relayout restores versions 1 to %d",
                    f->path, version, RP_VERSION);
  if (!o->restore && mark)
    return cli_fail(err, RELAYOUT_ERR_FILE,
                    "%s: was repacked by relayout already; restore it first "
                    "(relayout repack --restore)",
                    f->path);
  relayout_status checked =
      o->restore ? rp_records_check(f, version, err) : RELAYOUT_OK;
  if (checked) return checked;
  const char *reserved = o->restore ? NULL : reserved_key(f);
  if (reserved)
    return cli_fail(err, RELAYOUT_ERR_FILE,
                    "%s: __metadata__ key '%s' uses the prefix relayout keeps "
                    "its restore records under",
                    f->path, reserved);
  for (int i = 0; i < f->ntensors; i++) {
    rp_item *it = &items[i];
    it->t = &f->tensors[i];
    it->rule = -1;
    it->scale_of = -1;
    relayout_status s = RELAYOUT_OK;
    char what[300];
    if (o->restore) {
      char *key = record_key(it->t->name);
      json_t *rec = key ? json_object_get(f->metadata, key) : NULL;
      free(key);
      if (!key) s = cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
      /* a record that does not bind is the file's fault, not the user's */
      if (rec && bind_restore(it, json_string_value(rec), version, f, err))
        s = RELAYOUT_ERR_FILE;
      snprintf(what, sizeof what, "restore");
    } else {
      int64_t n = 1;
      for (int d = 0; d < it->t->rank; d++) n *= it->t->shape[d];
      it->rule = n ? rp_rule_match(o->rules, o->nrules, it->t) : -1;
      if (it->rule >= 0) {
        o->rules[it->rule].selected++;
        s = bind_rule(it, &o->rules[it->rule], f->data + it->t->begin, err);
      }
      snprintf(what, sizeof what, "rule '%s'",
               it->rule >= 0 ? o->rules[it->rule].text : "");
    }
    if (s)
      return cli_fail(err, s, "%s: tensor '%s' (%s, rank %d): %s: %s", f->path,
                      it->t->name, it->t->dtype, it->t->rank, what,
                      err->message);
    if (!it->convert) {
      it->out_size = it->t->end - it->t->begin;
      it->out_rank = it->t->rank;
      memcpy(it->out_shape, it->t->shape, sizeof it->t->shape);
    }
  }
  return scale_names(o, f, items, weight_map, err);
}

/* Sets m[key] to value written as JSON text (metadata holds strings only);
 * takes value's reference. */
static void set_dumped(json_t *m, const char *key, json_t *value) {
  char *text = json_dumps(value, JSON_COMPACT);
  json_object_set_new(m, key, json_string(text));
  free(text);
  json_decref(value);
}

/* The output's __metadata__: the input's, plus the restore records when
 * repacking, less them when restoring (NULL: the output has none). *failed
 * is set when a record could not be made. */
static json_t *new_metadata(const rp_options *o, const st_file *f,
                            const rp_item *items, int *failed) {
  json_t *m = f->metadata ? json_deep_copy(f->metadata) : json_object();
  if (o->restore) {
    int had = 0, version;
    repacked(f, &had, &version);
    json_t *keep = json_object();
    const char *k;
    json_t *v;
    json_object_foreach(m, k, v) {
      if (strcmp(k, RP_MARK) && strncmp(k, RP_PREFIX, strlen(RP_PREFIX)))
        json_object_set(keep, k, v);
    }
    json_decref(m);
    if (!had && json_object_size(keep) == 0) {
      json_decref(keep);
      return NULL;
    }
    return keep;
  }
  for (int i = 0; i < f->ntensors; i++) {
    const rp_item *it = &items[i];
    if (!it->convert) continue;
    int cast = strcmp(it->out_dtype, it->t->dtype) != 0;
    char axis[2] = {it->axis, 0};
    json_t *rec = json_pack(
        "{s:s, s:s, s:o, s:s, s:s*, s:s*, s:s*}", "from", it->from, "to",
        it->to, "shape", st_shape(it->t->rank, it->t->shape), "dtype",
        it->out_dtype, "from_dtype", cast ? it->t->dtype : NULL, "scale",
        it->scale_name, "axis", it->scale_name ? axis : NULL);
    char *key = record_key(it->t->name);
    if (key)
      set_dumped(m, key, rec);
    else
      *failed = 1;
    free(key);
  }
  char hex[65];
  int count;
  if (rp_records_digest(hex, &count, m, NULL)) *failed = 1;
  json_t *mark =
      json_pack("{s:i, s:b, s:i, s:s}", "version", RP_VERSION, "had_metadata",
                f->metadata != NULL, "records", count, "sha256", hex);
  set_dumped(m, RP_MARK, mark);
  return m;
}

/* The output header: keys in the input's order, the metadata first when the
 * input had none. Sets each item's out_at (data order is kept). NULL when
 * out of memory. */
static json_t *new_header(const rp_options *o, const st_file *f,
                          rp_item *items) {
  json_t *entries = json_object(), *h = json_object(), *index = json_object();
  uint64_t at = 0;
  for (int i = 0; i < f->ntensors; i++) {
    rp_item *it = &items[i];
    json_object_set_new(index, it->t->name, json_integer(i));
    if (it->dropped) continue;
    it->out_at = at;
    at += it->out_size;
    json_object_set_new(entries, it->t->name,
                        st_entry(it->convert ? it->out_dtype : it->t->dtype,
                                 it->out_rank, it->out_shape, it->out_at, at));
    if (o->restore || !it->scale_name) continue;
    it->scale_at = at;
    at += sizeof(float) * (uint64_t)it->nscales;
    json_object_set_new(entries, it->scale_name,
                        st_entry("F32", 1, &it->nscales, it->scale_at, at));
  }
  int failed = 0;
  json_t *meta = new_metadata(o, f, items, &failed);
  if (meta && !f->metadata) json_object_set(h, "__metadata__", meta);
  const char *k;
  json_t *v;
  json_object_foreach(f->header, k, v) {
    if (!strcmp(k, "__metadata__")) {
      if (meta) json_object_set(h, k, meta);
      continue;
    }
    const rp_item *it = &items[json_integer_value(json_object_get(index, k))];
    if (it->dropped) continue;
    json_object_set(h, k, json_object_get(entries, k));
    if (!o->restore && it->scale_name) /* its scales after it */
      json_object_set(h, it->scale_name,
                      json_object_get(entries, it->scale_name));
  }
  failed |= json_object_size(index) < (size_t)f->ntensors; /* out of memory */
  json_decref(meta);
  json_decref(entries);
  json_decref(index);
  if (failed) {
    json_decref(h);
    return NULL;
  }
  return h;
}

/* "2x17x5x3"; room for RELAYOUT_MAX_AXES extents of up to 19 digits. */
typedef struct shape_text {
  char s[RELAYOUT_MAX_AXES * 20 + 1];
} shape_text;

static shape_text format_shape(int rank, const int64_t *shape) {
  shape_text t = {""};
  size_t n = 0;
  for (int d = 0; d < rank && d < RELAYOUT_MAX_AXES; d++)
    n += (size_t)snprintf(t.s + n, sizeof t.s - n, "%s%lld", d ? "x" : "",
                          (long long)shape[d]);
  return t;
}

static void print_item(const rp_item *it, const rp_options *o) {
  shape_text in = format_shape(it->t->rank, it->t->shape);
  if (it->dropped) {
    printf("  %-40s %-5s %-16s scales, taken back\n", it->t->name, it->t->dtype,
           in.s);
    return;
  }
  if (!it->convert) {
    printf("  %-40s %-5s %-16s copied\n", it->t->name, it->t->dtype, in.s);
    return;
  }
  char dtype[16];
  snprintf(dtype, sizeof dtype, "%s%s%s", it->t->dtype,
           strcmp(it->out_dtype, it->t->dtype) ? "->" : "",
           strcmp(it->out_dtype, it->t->dtype) ? it->out_dtype : "");
  printf("  %-40s %-5s %-16s %s -> %s  %s  %llu -> %llu bytes", it->t->name,
         dtype, in.s, o->restore ? it->to : it->from,
         o->restore ? it->from : it->to,
         format_shape(it->out_rank, it->out_shape).s,
         (unsigned long long)(it->t->end - it->t->begin),
         (unsigned long long)it->out_size);
  if (it->rule >= 0) printf("  (rule %d)", it->rule + 1);
  if (it->scale_name && !o->restore)
    printf("  scales %s: %lld%s%s", it->scale_name, (long long)it->nscales,
           it->axis ? " along " : "", it->axis ? (char[]){it->axis, 0} : "");
  putchar('\n');
}

static void record(rp_options *o, const rp_item *it, const char *label,
                   const pl_job *job) {
  const char *from = o->restore ? it->to : it->from;
  const char *to = o->restore ? it->from : it->to;
  json_t *t =
      json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:s?, s:s?, s:I, s:I}", "file",
                label, "name", it->t->name, "dtype", it->t->dtype, "out_dtype",
                it->convert ? it->out_dtype : it->t->dtype, "shape",
                st_shape(it->t->rank, it->t->shape), "out_shape",
                st_shape(it->out_rank, it->out_shape), "from",
                it->convert ? from : NULL, "to", it->convert ? to : NULL,
                "bytes_in", (json_int_t)(it->t->end - it->t->begin),
                "bytes_out", (json_int_t)it->out_size);
  if (it->convert) o->report.converted++;
  if (it->scale_name && !o->restore)
    json_object_set_new(t, "scale", json_string(it->scale_name));
  if (it->dropped) {
    o->report.taken_back++;
    json_object_set_new(t, "family", json_string("scales, taken back"));
  } else if (job) {
    json_object_set_new(
        t, "device",
        json_string(relayout_engine_device(o->engines[it->device])));
    if (o->nengines > 1) /* which of them, where two have one name */
      json_object_set_new(t, "device_index", json_integer(it->device));
    json_object_set_new(t, "family", json_string(job->where));
    json_object_set_new(t, "seconds", json_real(job->seconds));
  } else if (!o->dry_run) {
    json_object_set_new(t, "family", json_string("copied"));
  }
  json_array_append_new(o->report.tensors, t);
}

/* Writes the header, the copied tensors, then the converted ones (on
 * several engines at once where there are several and out is a file). */
static relayout_status write_out(rp_options *o, const st_file *f,
                                 rp_item *items, const json_t *header,
                                 cli_out *out, pl_job *jobs, int *device,
                                 relayout_error *err) {
  char *head;
  size_t head_len;
  relayout_status s = st_header_bytes(&head, &head_len, header, err);
  if (s) return s;
  s = cli_out_write(out, head, head_len, 0, 0, err);
  free(head);
  int njobs = 0;
  for (int i = 0; i < f->ntensors && !s; i++) {
    rp_item *it = &items[i];
    if (it->dropped) {
      rp_report_progress(&o->report, it->t->end - it->t->begin, 0, 1);
      continue;
    }
    size_t scale_bytes = sizeof(float) * (size_t)it->nscales;
    if (!o->restore && it->scale_name) {
      if ((s = cli_out_write(out, it->scales, scale_bytes,
                             head_len + it->scale_at, 1, err)))
        return s;
      rp_report_progress(&o->report, 0, scale_bytes, 0);
    }
    if (it->convert) {
      int bits = relayout_dtype_bits(relayout_desc_dtype(&it->src));
      device[njobs] = it->device;
      jobs[njobs++] = (pl_job){.plan = it->plan,
                               .src = f->data + it->t->begin,
                               .src_size = it->t->end - it->t->begin,
                               .dst_size = it->out_size,
                               .unit = bits < 8 ? 1 : (size_t)bits / 8,
                               .dst_at = head_len + it->out_at};
      continue;
    }
    if ((s = cli_stop_requested(err))) return s;
    s = cli_out_write(out, f->data + it->t->begin, it->out_size,
                      head_len + it->out_at, 1, err);
    if (!s) rp_report_progress(&o->report, it->out_size, it->out_size, 1);
  }
  pl_output sink = {out, rp_report_progress, &o->report, NULL};
  if (s) return s;
  return o->nengines > 1
             ? pl_run_all(jobs, device, njobs, o->engines, o->nengines,
                          o->max_memory, &sink, err)
             : pl_run(jobs, njobs, o->engine, o->max_memory, &sink, err);
}

/* FNV-1a of an item's two descriptors and its engine. */
static uint64_t conversion_hash(const rp_item *it) {
  uint64_t h = (14695981039346656037u ^ (uint64_t)it->device) * 1099511628211u;
  const unsigned char *p[2] = {(const unsigned char *)&it->src,
                               (const unsigned char *)&it->dst};
  for (int k = 0; k < 2; k++)
    for (size_t i = 0; i < sizeof(relayout_desc); i++)
      h = (h ^ p[k][i]) * 1099511628211u;
  return h;
}

/* Counts the item's conversion in o->missing, unless an earlier file's was
 * the same (a sharded checkpoint's layers share their shapes). */
static void count_missing(rp_options *o, const rp_item *it) {
  rp_conversion c;
  memset(&c, 0, sizeof c); /* padding too: compared whole */
  c.device = it->device;
  c.src = it->src;
  c.dst = it->dst;
  for (int i = 0; i < o->missing; i++)
    if (!memcmp(&o->missing_seen[i], &c, sizeof c)) return;
  rp_conversion *more =
      realloc(o->missing_seen, sizeof c * ((size_t)o->missing + 1));
  if (!more) return; /* out of memory: the message undercounts */
  o->missing_seen = more;
  more[o->missing++] = c;
}

/* Each converted item's engine where there are several, by bytes
 * (rp_balance). A stream takes results in order: one engine. */
static relayout_status spread(rp_options *o, const st_file *f, rp_item *items,
                              const cli_out *out, relayout_error *err) {
  if (o->nengines < 2 || (out && out->stream)) return RELAYOUT_OK;
  uint64_t *bytes = malloc(sizeof *bytes * ((size_t)f->ntensors + 1));
  int *item = malloc(sizeof *item * ((size_t)f->ntensors + 1)),
      *bin = malloc(sizeof *bin * ((size_t)f->ntensors + 1)), n = 0;
  relayout_status s = bytes && item && bin
                          ? RELAYOUT_OK
                          : cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  for (int i = 0; !s && i < f->ntensors; i++)
    if (items[i].convert) {
      bytes[n] = items[i].t->end - items[i].t->begin + items[i].out_size;
      item[n++] = i;
    }
  if (!s) s = rp_balance(bin, bytes, n, o->nengines, err);
  for (int k = 0; !s && k < n; k++) items[item[k]].device = bin[k];
  free(bytes);
  free(item);
  free(bin);
  return s;
}

/* A plan for each converted item; items of one conversion (a model's many
 * same-shaped weights) share the first one's, found by a hash table of
 * 2n slots, so that n tensors make as many plans as they have shapes. */
static relayout_status make_plans(rp_options *o, const st_file *f,
                                  rp_item *items, relayout_error *err) {
  size_t slots = 2 * (size_t)f->ntensors + 1;
  int *table = malloc(sizeof *table * slots);
  if (!table) return cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  for (size_t k = 0; k < slots; k++) table[k] = -1;
  relayout_status s = RELAYOUT_OK;
  for (int i = 0; i < f->ntensors && !s; i++) {
    rp_item *it = &items[i];
    if (!it->convert) continue;
    size_t k = conversion_hash(it) % slots;
    for (; table[k] >= 0; k = (k + 1) % slots) {
      const rp_item *was = &items[table[k]];
      if (was->device == it->device &&
          !memcmp(&was->src, &it->src, sizeof it->src) &&
          !memcmp(&was->dst, &it->dst, sizeof it->dst))
        break;
    }
    if (table[k] >= 0) {
      it->plan = items[table[k]].plan;
      it->shared = 1;
      continue;
    }
    table[k] = i;
    s = relayout_plan_create(&it->plan, o->engines[it->device], &it->dst,
                             &it->src, err);
    if (s)
      s = cli_fail(err, s, "%s: tensor '%s': %s", f->path, it->t->name,
                   err->message);
    else if (!strcmp(relayout_plan_kernel(it->plan), "generic"))
      count_missing(o, it);
  }
  free(table);
  if (s) return s;
  /* with --wait-compile, once every build has started: they run at once */
  for (int i = 0; o->wait_compile && i < f->ntensors; i++)
    if (items[i].convert && !items[i].shared)
      relayout_plan_wait(items[i].plan, NULL);
  return RELAYOUT_OK;
}

/* The shard index's weight_map after this file: its new scale tensors
 * added, those taken back removed. */
static void update_map(json_t *map, const rp_options *o, const st_file *f,
                       const rp_item *items, const char *label) {
  for (int i = 0; map && i < f->ntensors; i++) {
    if (!o->restore && items[i].scale_name)
      json_object_set_new(map, items[i].scale_name, json_string(label));
    if (items[i].dropped) json_object_del(map, items[i].t->name);
  }
}

relayout_status rp_file(rp_options *o, const char *in, cli_out *out,
                        const char *label, uint64_t *out_bytes,
                        json_t *weight_map, relayout_error *err) {
  st_file f;
  relayout_status s = st_open(&f, in, err);
  if (s) return s;
  rp_item *items = calloc((size_t)f.ntensors + 1, sizeof *items);
  pl_job *jobs = calloc((size_t)f.ntensors + 1, sizeof *jobs);
  int *device = calloc((size_t)f.ntensors + 1, sizeof *device);
  json_t *header = NULL;
  if (!items || !jobs || !device) {
    s = cli_fail(err, RELAYOUT_ERR_NOMEM, "%s: out of memory", in);
    goto done;
  }
  if ((s = bind_all(o, &f, items, weight_map, err))) goto done;
  *out_bytes = 0;
  for (int i = 0; i < f.ntensors; i++) {
    uint64_t scales =
        o->restore ? 0 : sizeof(float) * (uint64_t)items[i].nscales;
    *out_bytes += items[i].out_size + scales;
    rp_report_add_work(
        &o->report,
        items[i].t->end - items[i].t->begin + items[i].out_size + scales, 1);
  }
  if (o->dry_run) {
    if (!o->json) printf("%s: %d tensors\n", label, f.ntensors);
    for (int i = 0; i < f.ntensors; i++) {
      if (!o->json) print_item(&items[i], o);
      record(o, &items[i], label, NULL);
    }
    goto done;
  }
  /* --warm: the plans made, their builds queued; the engine finishes them */
  if ((s = spread(o, &f, items, out, err)) ||
      (s = make_plans(o, &f, items, err)) || o->warm)
    goto done;
  header = new_header(o, &f, items);
  if (!header) {
    s = cli_fail(err, RELAYOUT_ERR_NOMEM, "%s: out of memory", in);
    goto done;
  }
  if ((s = cli_out_open(out, err))) goto done;
  s = write_out(o, &f, items, header, out, jobs, device, err);
  if (s)
    cli_out_discard(out);
  else
    s = cli_out_commit(out, err);
  for (int i = 0, j = 0; i < f.ntensors && !s; i++)
    record(o, &items[i], label, items[i].convert ? &jobs[j++] : NULL);
  if (!s) update_map(weight_map, o, &f, items, label);
done:
  for (int i = 0; items && i < f.ntensors; i++) {
    if (!items[i].shared) relayout_plan_free(items[i].plan);
    free(items[i].scales);
    free(items[i].scale_name);
  }
  json_decref(header);
  free(jobs);
  free(device);
  free(items);
  st_close(&f);
  return s;
}
