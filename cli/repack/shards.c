/* shards.c - repacking a sharded model: each shard named by
 * model.safetensors.index.json, then the index with its new total_size,
 * all into a temp directory renamed into place at the end */
#include "cli.h"
#include "repack.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *rp_join(const char *dir, const char *name) {
  char *p = malloc(strlen(dir) + strlen(name) + 2);
  if (p) sprintf(p, "%s/%s", dir, name);
  return p;
}

/* The index's weight_map: every value a plain file name in the directory. */
static relayout_status read_index(rp_shards *l, const char *path,
                                  relayout_error *err) {
  json_error_t je;
  relayout_error why;
  int fd = cli_open_regular(path, &why);
  if (fd < 0)
    return cli_fail(err, RELAYOUT_ERR_FILE, "%s: %s", path, why.message);
  json_t *idx = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
  close(fd);
  if (!idx)
    return cli_fail(err, RELAYOUT_ERR_FILE, "%s: %s (line %d)", path, je.text,
                    je.line);
  l->index = idx;
  json_t *map = json_object_get(idx, "weight_map");
  if (!json_is_object(map) || !json_object_size(map))
    return cli_fail(err, RELAYOUT_ERR_FILE,
                    "%s: needs a non-empty \"weight_map\" object", path);
  l->names = calloc(json_object_size(map), sizeof *l->names);
  if (!l->names) return cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  const char *tensor;
  json_t *v;
  json_object_foreach(map, tensor, v) {
    const char *file = json_string_value(v);
    if (!file || !*file || strchr(file, '/') || !strcmp(file, ".") ||
        !strcmp(file, ".."))
      return cli_fail(err, RELAYOUT_ERR_FILE,
                      "%s: tensor '%s' maps to '%s', not a file name in the "
                      "directory",
                      path, tensor, file ? file : "(not a string)");
    int k = 0;
    while (k < l->count && strcmp(l->names[k], file)) k++;
    if (k == l->count) l->names[l->count++] = file;
  }
  return RELAYOUT_OK;
}

/* Every tensor the index names is in the shard it names. */
static relayout_status check_shards(const json_t *idx, const rp_shards *l,
                                    const char *in, relayout_error *err) {
  json_t *map = json_object_get(idx, "weight_map");
  for (int k = 0; k < l->count; k++) {
    char *path = rp_join(in, l->names[k]);
    st_file f;
    relayout_status s =
        path ? st_open(&f, path, err)
             : cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
    int opened = !s;
    const char *tensor;
    json_t *v;
    json_object_foreach(map, tensor, v) {
      if (s || strcmp(json_string_value(v), l->names[k])) continue;
      if (!json_object_get(f.header, tensor) || !strcmp(tensor, "__metadata__"))
        s = cli_fail(err, RELAYOUT_ERR_FILE,
                     "%s/" RP_INDEX_NAME ": tensor '%s' is not in %s", in,
                     tensor, path);
    }
    if (opened) st_close(&f);
    free(path);
    if (s) return s;
  }
  return RELAYOUT_OK;
}

relayout_status rp_read_shards(rp_shards *l, const char *in,
                               relayout_error *err) {
  memset(l, 0, sizeof *l);
  char *index = rp_join(in, RP_INDEX_NAME);
  relayout_status s = index
                          ? read_index(l, index, err)
                          : cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  free(index);
  return s ? s : check_shards(l->index, l, in, err);
}

void rp_shards_free(rp_shards *l) {
  free(l->names);
  json_decref(l->index);
  memset(l, 0, sizeof *l);
}

relayout_status rp_write_index(const char *dir, const char *shown,
                               json_t *index, uint64_t total,
                               relayout_error *err) {
  json_t *meta = json_object_get(index, "metadata");
  if (!json_is_object(meta)) {
    meta = json_object();
    json_object_set_new(index, "metadata", meta);
  }
  json_object_set_new(meta, "total_size", json_integer((json_int_t)total));
  char *path = rp_join(dir, RP_INDEX_NAME);
  errno = 0;
  int bad = !path || json_dump_file(index, path, JSON_INDENT(2));
  free(path);
  return bad ? cli_fail(err, RELAYOUT_ERR_IO, "%s/%s: cannot write: %s", shown,
                        RP_INDEX_NAME,
                        errno ? strerror(errno) : "out of memory")
             : RELAYOUT_OK;
}

static void remove_tree(const char *dir, const rp_shards *l) {
  for (int k = 0; k < l->count; k++) {
    char *p = rp_join(dir, l->names[k]);
    if (p) unlink(p);
    free(p);
  }
  char *p = rp_join(dir, RP_INDEX_NAME);
  if (p) unlink(p);
  free(p);
  rmdir(dir);
}

/* Writes the shards and the index into tmp (NULL: a dry run), which
 * becomes out: messages name out, not tmp. */
static relayout_status write_shards(rp_options *o, const char *in,
                                    const char *out, const char *tmp,
                                    const json_t *idx, const rp_shards *l,
                                    relayout_error *err) {
  uint64_t total = 0;
  json_t *index = json_deep_copy(idx);
  if (!index) return cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  for (int k = 0; k < l->count; k++) {
    char *src = rp_join(in, l->names[k]);
    char *dst = tmp ? rp_join(tmp, l->names[k]) : NULL;
    char *shown = tmp ? rp_join(out, l->names[k]) : NULL;
    uint64_t bytes = 0;
    cli_out file;
    relayout_status s = !src || (tmp && (!dst || !shown))
                            ? cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory")
                        : dst && cli_out_check(&file, dst, 0, err)
                            ? RELAYOUT_ERR_IO
                            : RELAYOUT_OK;
    if (!s) {
      if (dst) file.path = shown;
      s = rp_file(o, src, dst ? &file : NULL, l->names[k], &bytes,
                  json_object_get(index, "weight_map"), err);
    }
    free(src);
    free(dst);
    free(shown);
    if (s) {
      json_decref(index);
      return s;
    }
    total += bytes;
  }
  if (!tmp) {
    json_decref(index);
    return RELAYOUT_OK;
  }
  relayout_status s = rp_write_index(tmp, out, index, total, err);
  json_decref(index);
  return s;
}

relayout_status rp_directory(rp_options *o, const char *in, const char *out,
                             relayout_error *err) {
  rp_shards l;
  char tmp[4096] = "";
  relayout_status s = rp_read_shards(&l, in, err);
  if (!s && out) {
    if (strlen(out) + 16 > sizeof tmp) {
      s = cli_fail(err, RELAYOUT_ERR_IO, "%s: path is too long", out);
    } else {
      cli_sweep_stale(out);
      snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", out);
      mode_t mask = umask(0);
      umask(mask);
      if (!mkdtemp(tmp) || chmod(tmp, 0777 & ~mask)) {
        s = cli_fail(err, RELAYOUT_ERR_IO, "%s: cannot create a directory: %s",
                     out, strerror(errno));
        *tmp = 0;
      }
    }
  }
  if (!s) s = write_shards(o, in, out, out ? tmp : NULL, l.index, &l, err);
  if (!s && out && rename(tmp, out))
    s = cli_fail(err, RELAYOUT_ERR_IO,
                 "%s: cannot move the finished directory into place: %s", out,
                 strerror(errno));
  if (s && *tmp) remove_tree(tmp, &l);
  rp_shards_free(&l);
  return s;
}
