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

static relayout_status bind_rule(rp_item *it, const rp_rule *r,
                                 relayout_error *err) {
  if (r->cast && !cli_float_dtype(it->t->bits))
    return cli_fail(err, RELAYOUT_ERR_ARGUMENT,
                    "a rule casts F16, BF16, F32 or F64 tensors, not %s",
                    it->t->dtype);
  return bind(it, r->from, r->to, it->t->rank, it->t->shape, it->t->bits,
              r->cast ? r->dtype : it->t->bits, 0, err);
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

/* A restore: the recorded {"from", "to", "shape", "dtype"} of a tensor, in
 * a file of relayout's metadata version `version`. */
static relayout_status bind_restore(rp_item *it, const char *record,
                                    int version, relayout_error *err) {
  json_error_t je;
  json_t *j = json_loads(record, JSON_REJECT_DUPLICATES, &je);
  const char *from = NULL, *to = NULL, *dtype = NULL, *from_dtype = NULL;
  json_t *shape = NULL;
  relayout_status st = RELAYOUT_ERR_FILE;
  if (!j ||
      json_unpack(j, "{s:s, s:s, s:o, s:s, s?s}", "from", &from, "to", &to,
                  "shape", &shape, "dtype", &dtype, "from_dtype",
                  &from_dtype) ||
      !json_is_array(shape) || json_array_size(shape) > RELAYOUT_MAX_DIMS) {
    cli_fail(err, st, "its relayout metadata is not {from, to, shape, dtype}");
    goto done;
  }
  if (strcmp(dtype, it->t->dtype)) {
    cli_fail(err, st, "its relayout metadata says dtype %s, the file says %s",
             dtype, it->t->dtype);
    goto done;
  }
  relayout_dtype ft = it->t->bits;
  if (from_dtype) {
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

static relayout_status bind_all(rp_options *o, const st_file *f, rp_item *items,
                                relayout_error *err) {
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
    relayout_status s = RELAYOUT_OK;
    char what[300];
    if (o->restore) {
      char *key = record_key(it->t->name);
      json_t *rec = key ? json_object_get(f->metadata, key) : NULL;
      free(key);
      if (!key) s = cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
      /* a record that does not bind is the file's fault, not the user's */
      if (rec && bind_restore(it, json_string_value(rec), version, err))
        s = RELAYOUT_ERR_FILE;
      snprintf(what, sizeof what, "restore");
    } else {
      int64_t n = 1;
      for (int d = 0; d < it->t->rank; d++) n *= it->t->shape[d];
      it->rule = n ? rp_rule_match(o->rules, o->nrules, it->t) : -1;
      if (it->rule >= 0) {
        o->rules[it->rule].selected++;
        s = bind_rule(it, &o->rules[it->rule], err);
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
  return RELAYOUT_OK;
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
  json_t *mark = json_pack("{s:i, s:b}", "version", RP_VERSION, "had_metadata",
                           f->metadata != NULL);
  set_dumped(m, RP_MARK, mark);
  for (int i = 0; i < f->ntensors; i++) {
    const rp_item *it = &items[i];
    if (!it->convert) continue;
    int cast = strcmp(it->out_dtype, it->t->dtype) != 0;
    json_t *rec =
        json_pack("{s:s, s:s, s:o, s:s, s:s*}", "from", it->from, "to", it->to,
                  "shape", st_shape(it->t->rank, it->t->shape), "dtype",
                  it->out_dtype, "from_dtype", cast ? it->t->dtype : NULL);
    char *key = record_key(it->t->name);
    if (key)
      set_dumped(m, key, rec);
    else
      *failed = 1;
    free(key);
  }
  return m;
}

/* The output header: keys in the input's order, the metadata first when the
 * input had none. Sets each item's out_at (data order is kept). NULL when
 * out of memory. */
static json_t *new_header(const rp_options *o, const st_file *f,
                          rp_item *items) {
  json_t *entries = json_object(), *h = json_object();
  uint64_t at = 0;
  for (int i = 0; i < f->ntensors; i++) {
    rp_item *it = &items[i];
    it->out_at = at;
    at += it->out_size;
    json_object_set_new(entries, it->t->name,
                        st_entry(it->convert ? it->out_dtype : it->t->dtype,
                                 it->out_rank, it->out_shape, it->out_at, at));
  }
  int failed = 0;
  json_t *meta = new_metadata(o, f, items, &failed);
  if (meta && !f->metadata) json_object_set(h, "__metadata__", meta);
  const char *k;
  json_t *v;
  json_object_foreach(f->header, k, v) {
    if (!strcmp(k, "__metadata__")) {
      if (meta) json_object_set(h, k, meta);
    } else {
      json_object_set(h, k, json_object_get(entries, k));
    }
  }
  json_decref(meta);
  json_decref(entries);
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
  if (job) {
    json_object_set_new(t, "device",
                        json_string(relayout_engine_device(o->engine)));
    json_object_set_new(t, "family", json_string(job->where));
    json_object_set_new(t, "seconds", json_real(job->seconds));
  } else if (!o->dry_run) {
    json_object_set_new(t, "family", json_string("copied"));
  }
  json_array_append_new(o->report.tensors, t);
}

/* Writes the header, the copied tensors, then the converted ones. */
static relayout_status write_out(rp_options *o, const st_file *f,
                                 rp_item *items, const json_t *header,
                                 cli_out *out, pl_job *jobs,
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
    if (it->convert) {
      int bits = relayout_dtype_bits(relayout_desc_dtype(&it->src));
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
  pl_output sink = {out, rp_report_progress, &o->report};
  return s ? s : pl_run(jobs, njobs, o->engine, o->max_memory, &sink, err);
}

static relayout_status make_plans(rp_options *o, const st_file *f,
                                  rp_item *items, relayout_error *err) {
  for (int i = 0; i < f->ntensors; i++) {
    rp_item *it = &items[i];
    if (!it->convert) continue;
    relayout_status s =
        relayout_plan_create(&it->plan, o->engine, &it->dst, &it->src, err);
    if (s)
      return cli_fail(err, s, "%s: tensor '%s': %s", f->path, it->t->name,
                      err->message);
  }
  /* with --wait-compile, once every build has started: they run at once */
  for (int i = 0; o->wait_compile && i < f->ntensors; i++)
    if (items[i].convert) relayout_plan_wait(items[i].plan, NULL);
  return RELAYOUT_OK;
}

relayout_status rp_file(rp_options *o, const char *in, cli_out *out,
                        const char *label, uint64_t *out_bytes,
                        relayout_error *err) {
  st_file f;
  relayout_status s = st_open(&f, in, err);
  if (s) return s;
  rp_item *items = calloc((size_t)f.ntensors + 1, sizeof *items);
  pl_job *jobs = calloc((size_t)f.ntensors + 1, sizeof *jobs);
  json_t *header = NULL;
  if (!items || !jobs) {
    s = cli_fail(err, RELAYOUT_ERR_NOMEM, "%s: out of memory", in);
    goto done;
  }
  if ((s = bind_all(o, &f, items, err))) goto done;
  *out_bytes = 0;
  for (int i = 0; i < f.ntensors; i++) {
    *out_bytes += items[i].out_size;
    rp_report_add_work(
        &o->report, items[i].t->end - items[i].t->begin + items[i].out_size, 1);
  }
  if (o->dry_run) {
    if (!o->json) printf("%s: %d tensors\n", label, f.ntensors);
    for (int i = 0; i < f.ntensors; i++) {
      if (!o->json) print_item(&items[i], o);
      record(o, &items[i], label, NULL);
    }
    goto done;
  }
  header = new_header(o, &f, items);
  if (!header) {
    s = cli_fail(err, RELAYOUT_ERR_NOMEM, "%s: out of memory", in);
    goto done;
  }
  if ((s = make_plans(o, &f, items, err))) goto done;
  if ((s = cli_out_open(out, err))) goto done;
  s = write_out(o, &f, items, header, out, jobs, err);
  if (s)
    cli_out_discard(out);
  else
    s = cli_out_commit(out, err);
  for (int i = 0, j = 0; i < f.ntensors && !s; i++)
    record(o, &items[i], label, items[i].convert ? &jobs[j++] : NULL);
done:
  for (int i = 0; items && i < f.ntensors; i++)
    relayout_plan_free(items[i].plan);
  json_decref(header);
  free(jobs);
  free(items);
  st_close(&f);
  return s;
}
