/* parts.c - a sharded repack in parts, for several processes or machines
 * on a shared file system: the shards split by bytes, each part's shards
 * written into OUT with a completion record each, a rerun passing over the
 * shards a valid record covers, and the index written from the records
 * alone by --finish. The job (rules, part count, input index and shard
 * sizes, relayout's version) is recorded first; a part of another job is
 * refused. */
#include "cli.h"
#include "repack.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PARTS_DIR ".relayout-parts"
#define JOB_FILE  "job.json"

/* A path under OUT/.relayout-parts (NULL: out of memory). */
static char *parts_path(const char *out, const char *name) {
  char *dir = rp_join(out, PARTS_DIR);
  char *p = dir && name ? rp_join(dir, name) : dir;
  if (p != dir) free(dir);
  return p;
}

static char *record_path(const char *out, const char *shard) {
  char name[4200];
  snprintf(name, sizeof name, "%s.json", shard);
  return parts_path(out, name);
}

/* A safetensors file's checksum, XXH64 as 16 hex digits, and size (a
 * damaged file fails). */
static relayout_status digest(char hex[17], uint64_t *size, const char *path,
                              relayout_error *err) {
  st_file f;
  relayout_status s = st_open(&f, path, err);
  if (s) return s;
  snprintf(hex, 17, "%016llx", (unsigned long long)cli_xxh64(f.map, f.size, 0));
  *size = f.size;
  st_close(&f);
  return RELAYOUT_OK;
}

/* Writes obj to path through a temp file beside it: renamed over path, or
 * (exclusive) linked, failing with EEXIST where path exists. 0 or -1. */
static int put_json(const char *path, const json_t *obj, int exclusive) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) return -1;
  int bad = json_dumpfd(obj, fd, JSON_INDENT(1)) || /* the index's order */
            fsync(fd) || close(fd);
  if (!bad) bad = exclusive ? link(tmp, path) : rename(tmp, path);
  int keep = errno;
  if (exclusive || bad) unlink(tmp);
  errno = keep;
  return bad ? -1 : 0;
}

/* obj's string at key, "" where there is none. */
static const char *text_of(const json_t *obj, const char *key) {
  const char *t = json_string_value(json_object_get(obj, key));
  return t ? t : "";
}

static json_t *load_json(const char *path) {
  relayout_error why;
  int fd = cli_open_regular(path, &why);
  if (fd < 0) return NULL;
  json_t *j = json_loadfd(fd, JSON_REJECT_DUPLICATES, NULL);
  close(fd);
  return j;
}

/* The job: every shard's size and part (rp_balance), and its identity,
 * the sha256 of its description. */
static relayout_status describe(json_t **job, char id[65], const rp_options *o,
                                const rp_shards *l, const char *in,
                                relayout_error *err) {
  uint64_t *size = calloc((size_t)l->count + 1, sizeof *size);
  int *part = calloc((size_t)l->count + 1, sizeof *part);
  relayout_status st = part && size
                           ? RELAYOUT_OK
                           : cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  for (int k = 0; !st && k < l->count; k++) {
    char *p = rp_join(in, l->names[k]);
    struct stat sb;
    if (!p || stat(p, &sb))
      st = cli_fail(err, RELAYOUT_ERR_FILE, "%s/%s: %s", in, l->names[k],
                    p ? strerror(errno) : "out of memory");
    free(p);
    size[k] = st ? 0 : (uint64_t)sb.st_size;
  }
  if (!st) st = rp_balance(part, size, l->count, o->parts, err);
  if (!st) {
    json_t *rules = json_array(), *shards = json_array();
    for (int r = 0; r < o->nrules; r++)
      json_array_append_new(rules, json_string(o->rules[r].text));
    for (int k = 0; k < l->count; k++)
      json_array_append_new(
          shards, json_pack("{s:s, s:I, s:i}", "name", l->names[k], "bytes",
                            (json_int_t)size[k], "part", part[k]));
    *job = json_pack("{s:s, s:i, s:b, s:o, s:i, s:O, s:o}", "relayout",
                     relayout_version_string(), "format", RP_VERSION, "restore",
                     o->restore, "rules", rules, "parts", o->parts, "index",
                     l->index, "shards", shards);
    char *text = *job ? json_dumps(*job, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    if (text) {
      cli_sha256(id, text, strlen(text));
      json_object_set_new(*job, "job", json_string(id));
    }
    if (!text) st = cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
    free(text);
  }
  free(part);
  free(size);
  return st;
}

/* OUT made (or found: a directory without an index) and the job recorded
 * in it, or found recorded there already. */
static relayout_status claim(const char *out, const json_t *job, const char *id,
                             relayout_error *err) {
  char *dir = parts_path(out, NULL), *path = parts_path(out, JOB_FILE),
       *index = rp_join(out, RP_INDEX_NAME);
  relayout_status s = RELAYOUT_OK;
  struct stat st;
  if (!dir || !path || !index)
    s = cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  else if (mkdir(out, 0777) &&
           (errno != EEXIST || stat(out, &st) || !S_ISDIR(st.st_mode)))
    s = cli_fail(err, RELAYOUT_ERR_IO, "%s: cannot make the directory: %s", out,
                 errno == EEXIST ? "a file is there" : strerror(errno));
  else if (!access(index, F_OK))
    s = cli_fail(err, RELAYOUT_ERR_IO,
                 "%s holds a finished checkpoint (%s); parts write into a new "
                 "directory or one their job began",
                 out, RP_INDEX_NAME);
  else if (mkdir(dir, 0777) && errno != EEXIST)
    s = cli_fail(err, RELAYOUT_ERR_IO, "%s: %s", dir, strerror(errno));
  else if (put_json(path, job, 1) && errno != EEXIST)
    s = cli_fail(err, RELAYOUT_ERR_IO, "%s: cannot write: %s", path,
                 strerror(errno));
  if (!s) { /* this job's, or another's */
    json_t *had = load_json(path);
    const char *was = json_string_value(json_object_get(had, "job"));
    if (!was || strcmp(was, id))
      s = cli_fail(err, RELAYOUT_ERR_ARGUMENT,
                   "%s holds parts of another repack (%s: its rules, part "
                   "count, input or relayout version differ); run the same "
                   "command, or write into a new directory",
                   out, path);
    json_decref(had);
  }
  free(dir);
  free(path);
  free(index);
  return s;
}

/* Whether a record covers the shard: this job's, for the input and the
 * output file as they are now. */
static int done(const char *rec_path, const char *id, const char *src,
                const char *dst) {
  json_t *rec = load_json(rec_path);
  char in_hex[17], out_hex[17];
  uint64_t size;
  relayout_error why;
  int ok = rec && !strcmp(text_of(rec, "job"), id) &&
           !digest(out_hex, &size, dst, &why) &&
           !strcmp(text_of(rec, "output_xxh64"), out_hex) &&
           !digest(in_hex, &size, src, &why) &&
           !strcmp(text_of(rec, "input_xxh64"), in_hex);
  json_decref(rec);
  return ok;
}

/* The weight_map's changes a shard made: the names it added (with their
 * file) and those it dropped. */
static void changes(json_t *rec, const json_t *before, const json_t *after) {
  json_t *added = json_object(), *dropped = json_array();
  const char *key;
  json_t *v;
  json_object_foreach((json_t *)after, key, v) {
    if (!json_object_get(before, key)) json_object_set(added, key, v);
  }
  json_object_foreach((json_t *)before, key, v) {
    if (!json_object_get(after, key))
      json_array_append_new(dropped, json_string(key));
  }
  json_object_set_new(rec, "added", added);
  json_object_set_new(rec, "dropped", dropped);
}

/* Shard name written from in into out, and its completion record. */
static relayout_status write_shard(rp_options *o, const char *in,
                                   const char *out, const char *name,
                                   const json_t *map, const char *id,
                                   relayout_error *err) {
  char *src = rp_join(in, name), *dst = rp_join(out, name),
       *rec_path = record_path(out, name);
  json_t *after = json_deep_copy(map);
  relayout_status s = src && dst && rec_path && after
                          ? RELAYOUT_OK
                          : cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  char in_hex[17], out_hex[17];
  uint64_t in_size, out_size, bytes = 0;
  cli_out file;
  if (!s && done(rec_path, id, src, dst)) {
    fprintf(stderr, "relayout repack: %s: done already (its record holds)\n",
            name);
    goto end;
  }
  if (!s) unlink(rec_path); /* a stale record goes before the shard */
  if (!s) s = cli_out_check(&file, dst, 0, err);
  if (!s) s = rp_file(o, src, &file, name, &bytes, after, err);
  if (!s && (s = digest(in_hex, &in_size, src, err)) == RELAYOUT_OK)
    s = digest(out_hex, &out_size, dst, err);
  if (!s) {
    json_t *rec =
        json_pack("{s:s, s:s, s:s, s:s, s:I, s:I}", "job", id, "shard", name,
                  "input_xxh64", in_hex, "output_xxh64", out_hex, "output_size",
                  (json_int_t)out_size, "tensor_bytes", (json_int_t)bytes);
    if (rec) changes(rec, map, after);
    if (!rec || put_json(rec_path, rec, 0))
      s = cli_fail(err, RELAYOUT_ERR_IO, "%s: cannot write: %s", rec_path,
                   rec ? strerror(errno) : "out of memory");
    json_decref(rec);
  }
end:
  json_decref(after);
  free(src);
  free(dst);
  free(rec_path);
  return s;
}

relayout_status rp_part(rp_options *o, const char *in, const char *out,
                        relayout_error *err) {
  rp_shards l;
  json_t *job = NULL;
  char id[65];
  relayout_status s = rp_read_shards(&l, in, err);
  if (!s) s = describe(&job, id, o, &l, in, err);
  if (!s) s = claim(out, job, id, err);
  json_t *shards = json_object_get(job, "shards"),
         *map = json_object_get(l.index, "weight_map");
  int mine = 0;
  for (int k = 0; !s && k < l.count; k++) {
    json_t *x = json_array_get(shards, (size_t)k);
    if (json_integer_value(json_object_get(x, "part")) != o->part) continue;
    mine++;
    if (!(s = cli_stop_requested(err)))
      s = write_shard(o, in, out, l.names[k], map, id, err);
  }
  if (!s && !o->mpi) /* an MPI job's rank 0 writes it itself */
    fprintf(stderr,
            "relayout repack: part %d/%d: its %d of %d shards are done; "
            "once every part is, 'relayout repack --finish %s' writes the "
            "index\n",
            o->part, o->parts, mine, l.count, out);
  json_decref(job);
  rp_shards_free(&l);
  return s;
}

/* Removes what the parts left in out: temp files of its shards and
 * records, the records, the job. */
static void clean(const char *out, const json_t *shards) {
  char *dir = parts_path(out, NULL);
  DIR *d = dir ? opendir(dir) : NULL;
  struct dirent *e;
  while (d && (e = readdir(d))) {
    char *p = strcmp(e->d_name, ".") && strcmp(e->d_name, "..")
                  ? rp_join(dir, e->d_name)
                  : NULL;
    if (p) unlink(p);
    free(p);
  }
  if (d) closedir(d);
  if (dir) rmdir(dir);
  free(dir);
  d = opendir(out);
  size_t k;
  json_t *x;
  while (d && (e = readdir(d))) {
    const char *tail = strstr(e->d_name, ".tmp-");
    json_array_foreach(shards, k, x) {
      const char *name = json_string_value(json_object_get(x, "name"));
      char *p = name && tail && !strncmp(e->d_name, name, strlen(name)) &&
                        e->d_name + strlen(name) == tail && strlen(tail) == 11
                    ? rp_join(out, e->d_name)
                    : NULL;
      if (p) unlink(p);
      free(p);
    }
  }
  if (d) closedir(d);
}

relayout_status rp_finish(const char *out, relayout_error *err) {
  char *path = parts_path(out, JOB_FILE);
  json_t *job = path ? load_json(path) : NULL;
  const char *id = json_string_value(json_object_get(job, "job"));
  json_t *shards = json_object_get(job, "shards");
  json_t *index = json_deep_copy(json_object_get(job, "index"));
  json_t *map = json_object_get(index, "weight_map");
  relayout_status s = RELAYOUT_OK;
  if (!id || !json_is_array(shards) || !json_is_object(map))
    s = cli_fail(err, RELAYOUT_ERR_FILE,
                 "%s: no repack parts to finish (%s is missing or damaged)",
                 out, path ? path : PARTS_DIR "/" JOB_FILE);
  char missing[512] = "";
  int nmissing = 0,
      parts = (int)json_integer_value(json_object_get(job, "parts"));
  uint64_t total = 0;
  size_t k;
  json_t *x;
  for (k = 0; !s && k < json_array_size(shards); k++) {
    x = json_array_get(shards, k);
    const char *name = json_string_value(json_object_get(x, "name"));
    char *rec_path = name ? record_path(out, name) : NULL;
    char *file = name ? rp_join(out, name) : NULL;
    json_t *rec = rec_path ? load_json(rec_path) : NULL;
    struct stat st;
    int ok = rec && file && !strcmp(text_of(rec, "job"), id) &&
             !stat(file, &st) &&
             (json_int_t)st.st_size ==
                 json_integer_value(json_object_get(rec, "output_size"));
    if (ok) {
      const char *key;
      json_t *v, *added = json_object_get(rec, "added");
      size_t i;
      json_object_foreach(added, key, v) { json_object_set(map, key, v); }
      json_array_foreach(json_object_get(rec, "dropped"), i, v) {
        json_object_del(map, json_string_value(v) ? json_string_value(v) : "");
      }
      total +=
          (uint64_t)json_integer_value(json_object_get(rec, "tensor_bytes"));
    } else if (nmissing++ < 5) {
      size_t n = strlen(missing);
      snprintf(missing + n, sizeof missing - n, "%s%s (part %lld/%d)",
               n ? ", " : "", name ? name : "?",
               (long long)json_integer_value(json_object_get(x, "part")),
               parts);
    }
    json_decref(rec);
    free(rec_path);
    free(file);
  }
  if (!s && nmissing)
    s = cli_fail(err, RELAYOUT_ERR_FILE,
                 "%s: %d of %zu shards have no valid completion record: "
                 "%s%s; rerun their parts",
                 out, nmissing, json_array_size(shards), missing,
                 nmissing > 5 ? ", ..." : "");
  char *dir = parts_path(out, NULL), *from = parts_path(out, RP_INDEX_NAME),
       *to = rp_join(out, RP_INDEX_NAME);
  if (!s && (!dir || !from || !to))
    s = cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  if (!s) s = rp_write_index(dir, out, index, total, err);
  if (!s && rename(from, to))
    s = cli_fail(err, RELAYOUT_ERR_IO, "%s: cannot move into place: %s", to,
                 strerror(errno));
  if (!s) clean(out, shards);
  free(dir);
  free(from);
  free(to);
  free(path);
  json_decref(index);
  json_decref(job);
  return s;
}
