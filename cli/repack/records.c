/* records.c - a repacked file's restore records taken as a whole: the
 * marker counts them and holds the sha256 of their text, so that a record
 * lost or edited is found before a restore trusts any of them */
#include "cli.h"
#include "repack.h"

#include <stdlib.h>
#include <string.h>

static int by_key(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

relayout_status rp_records_digest(char hex[65], int *count, json_t *metadata,
                                  relayout_error *err) {
  size_t n = 0, bytes = 0, prefix = strlen(RP_PREFIX);
  const char *k;
  json_t *v;
  *count = 0;
  json_object_foreach(metadata, k, v) {
    if (strncmp(k, RP_PREFIX, prefix)) continue;
    n++;
    bytes += strlen(k) +
             strlen(json_string_value(v) ? json_string_value(v) : "") + 2;
  }
  const char **keys = malloc(sizeof *keys * (n ? n : 1));
  char *text = malloc(bytes ? bytes : 1);
  if (!keys || !text) {
    free(keys);
    free(text);
    return cli_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
  }
  n = 0;
  json_object_foreach(metadata, k, v) {
    if (!strncmp(k, RP_PREFIX, prefix)) keys[n++] = k;
  }
  qsort(keys, n, sizeof *keys, by_key); /* the object's order is not kept */
  char *at = text;
  for (size_t i = 0; i < n; i++) {
    const char *value = json_string_value(json_object_get(metadata, keys[i]));
    at = stpcpy(at, keys[i]) + 1;
    at = stpcpy(at, value ? value : "") + 1;
  }
  cli_sha256(hex, text, bytes);
  *count = (int)n;
  free(keys);
  free(text);
  return RELAYOUT_OK;
}

relayout_status rp_records_check(const st_file *f, int version,
                                 relayout_error *err) {
  size_t prefix = strlen(RP_PREFIX);
  const char *k;
  json_t *v;
  json_object_foreach(f->metadata, k, v) {
    if (!strncmp(k, RP_PREFIX, prefix) &&
        (!json_object_get(f->header, k + prefix) ||
         !strcmp(k + prefix, "__metadata__")))
      return cli_fail(err, RELAYOUT_ERR_FILE,
                      "%s: relayout's record '%s' names no tensor of the "
                      "file: it was edited after relayout wrote it",
                      f->path, k);
  }
  if (version < 3) return RELAYOUT_OK; /* older files hold no count */
  json_t *mark = json_loads(
      json_string_value(json_object_get(f->metadata, RP_MARK)), 0, NULL);
  json_t *want = json_object_get(mark, "records");
  const char *sha = json_string_value(json_object_get(mark, "sha256"));
  char hex[65];
  int count;
  relayout_status s = rp_records_digest(hex, &count, f->metadata, err);
  if (!s && (!json_is_integer(want) || !sha))
    s = cli_fail(err, RELAYOUT_ERR_FILE,
                 "%s: relayout's marker lacks the count and digest of its "
                 "records",
                 f->path);
  else if (!s && json_integer_value(want) != count)
    s = cli_fail(err, RELAYOUT_ERR_FILE,
                 "%s: %d relayout records where its marker counts %lld: a "
                 "record was lost or added after relayout wrote the file",
                 f->path, count, (long long)json_integer_value(want));
  else if (!s && strcmp(sha, hex))
    s = cli_fail(err, RELAYOUT_ERR_FILE,
                 "%s: relayout's records differ from those it wrote (their "
                 "sha256 is not the marker's): the file was edited, and a "
                 "restore would not give back its tensors",
                 f->path);
  json_decref(mark);
  return s;
}
