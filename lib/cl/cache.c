/* cache.c - compiled programs: per engine in memory, and on disk as binaries
 *
 * A disk entry is keyed by device, driver and source. Its file holds a magic,
 * the key, the binary's length and checksum, then the binary: an entry that
 * fails any check, or that the driver refuses, is rebuilt from source and
 * rewritten (through a temp file renamed into place); for a program built
 * outside the builder threads, by one of them later, or when the engine is
 * freed (builds.c). Loading an entry marks it used (its modification
 * time); storing one prunes the directory when its entries exceed the
 * engine's bound, least recently used first, down to three quarters of the
 * bound, and removes temp files a day old.
 *
 * PoCL (3.1) fails an assertion, aborting the process, when it loads a binary
 * whose program.bc is empty; a PoCL build once returned such a binary while
 * another process built the same source. PoCL binaries without program.bc
 * are therefore neither stored nor loaded.
 */
#include "engine.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RL_BIN_MAGIC     "RLBIN001"
#define RL_BUILD_OPTIONS "-cl-std=CL1.2"
/* Before every program: on a CPU without AVX-512, clang warns that 16-wide
 * vector arguments change the calling convention, which is nothing to the
 * kernels (their functions are all in the one program); the tests take any
 * build warning as a failure. Its #line makes a build log's line numbers
 * those of the kernel source. */
static const char rl_prelude[] =
    "#ifdef __clang__\n#pragma clang diagnostic ignored \"-Wpsabi\"\n#endif\n"
    "#line 1\n";

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ULL;
  return h;
}

static uint64_t key_of(const relayout_engine *e, const char *source) {
  uint64_t h = 0xcbf29ce484222325ULL;
  h = fnv(h, e->name, strlen(e->name) + 1);
  h = fnv(h, e->driver, strlen(e->driver) + 1);
  h = fnv(h, e->platform, strlen(e->platform) + 1);
  h = fnv(h, rl_prelude, sizeof rl_prelude);
  return fnv(h, source, strlen(source));
}

/* The engine's cache directory, created if needed; 0 when it has none. */
static int cache_dir(const relayout_engine *e, char *out, size_t size) {
  if (!*e->cache_dir) return 0;
  snprintf(out, size, "%s", e->cache_dir);
  for (char *p = out + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      mkdir(out, 0755);
      *p = '/';
    }
  return mkdir(out, 0755) == 0 || errno == EEXIST;
}

static void entry_path(char *out, size_t size, const char *dir, uint64_t key) {
  snprintf(out, size, "%s/%016llx.bin", dir, (unsigned long long)key);
}

/* Whether a file name is an entry's: 16 hex digits, ".bin". */
static int entry_name(const char *name) {
  if (strlen(name) != 20 || strcmp(name + 16, ".bin")) return 0;
  for (int i = 0; i < 16; i++)
    if (!strchr("0123456789abcdef", name[i])) return 0;
  return 1;
}

typedef struct aged {
  char name[21];
  uint64_t size;
  struct timespec used;
} aged;

static int older(const void *a, const void *b) {
  const struct timespec *x = &((const aged *)a)->used,
                        *y = &((const aged *)b)->used;
  if (x->tv_sec != y->tv_sec) return x->tv_sec < y->tv_sec ? -1 : 1;
  return (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* Whether a file is a temp file (store's) left a day ago or more, by a
 * process that died before renaming it. */
static int stale_temp(const char *name, const struct stat *st) {
  return !strncmp(name, ".tmp-", 5) && strlen(name) == 11 &&
         st->st_mtim.tv_sec < time(NULL) - 86400;
}

/* Entries past the bound removed, least recently used first, down to three
 * quarters of it; `keep` (the entry just stored) stays, and so do files
 * other than entries but stale temp files. An entry another process removed
 * first is skipped. */
static void prune(const char *dir, const char *keep, uint64_t bound) {
  uint64_t total = 0;
  DIR *d = opendir(dir);
  if (!d) return;
  aged *all = NULL;
  size_t n = 0, cap = 0;
  char path[4096 + 1 + sizeof((struct dirent *)0)->d_name];
  for (struct dirent *f; (f = readdir(d));) {
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, f->d_name);
    if (stat(path, &st)) continue;
    if (stale_temp(f->d_name, &st)) unlink(path);
    if (!entry_name(f->d_name)) continue;
    total += (uint64_t)st.st_size;
    if (!strcmp(f->d_name, keep)) continue;
    if (n == cap) {
      aged *more = realloc(all, (cap = cap ? 2 * cap : 64) * sizeof *all);
      if (!more) break;
      all = more;
    }
    memcpy(all[n].name, f->d_name, 21); /* entry_name: 20 characters */
    all[n].size = (uint64_t)st.st_size;
    all[n++].used = st.st_mtim;
  }
  closedir(d);
  if (total > bound && n) {
    qsort(all, n, sizeof *all, older);
    for (size_t i = 0; i < n && total > bound / 4 * 3; i++) {
      snprintf(path, sizeof path, "%s/%s", dir, all[i].name);
      if (!unlink(path)) total -= all[i].size;
    }
  }
  free(all);
}

/* Not a PoCL binary, or one that holds a non-empty program.bc: the file's
 * path, then its length (4 bytes) and contents. */
static int loadable(const unsigned char *bin, size_t len) {
  static const char pocl[] = "poclbin", bc[] = "/program.bc";
  const size_t n = sizeof bc - 1;
  if (len < sizeof pocl || memcmp(bin, pocl, sizeof pocl)) return 1;
  for (size_t i = 0; i + n + 4 <= len; i++)
    if (!memcmp(bin + i, bc, n))
      return bin[i + n] || bin[i + n + 1] || bin[i + n + 2] || bin[i + n + 3];
  return 0;
}

/* The build log's first error line (else its start), in err. The log is
 * read whole: asked for into a buffer shorter than the log, a driver returns
 * nothing (NVIDIA's does). */
static void build_failed(relayout_error *err, relayout_engine *e,
                         cl_program prog) {
  size_t n = 0;
  char *log = NULL;
  if (clGetProgramBuildInfo(prog, e->device, CL_PROGRAM_BUILD_LOG, 0, NULL,
                            &n) == CL_SUCCESS &&
      n > 0 && (log = calloc(1, n + 1)) &&
      clGetProgramBuildInfo(prog, e->device, CL_PROGRAM_BUILD_LOG, n, log,
                            NULL) != CL_SUCCESS)
    *log = 0;
  const char *at = log ? strstr(log, "error") : NULL;
  while (at && at > log && at[-1] != '\n') at--;
  if (!at) at = log ? log + strspn(log, " \n") : "";
  rl_fail(err, RELAYOUT_ERR_UNSUPPORTED, "kernel build failed: %.*s",
          (int)strcspn(at, "\n"), *at ? at : "(the driver gave no log)");
  free(log);
}

static cl_program build(relayout_engine *e, cl_program prog,
                        relayout_error *err) {
  if (clBuildProgram(prog, 1, &e->device, RL_BUILD_OPTIONS, NULL, NULL) ==
      CL_SUCCESS)
    return prog;
  if (err) build_failed(err, e, prog);
  clReleaseProgram(prog);
  return NULL;
}

static cl_program load(relayout_engine *e, const char *path, uint64_t key) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char magic[8];
  uint64_t head[3]; /* key, length, checksum */
  unsigned char *bin = NULL;
  cl_program prog = NULL;
  if (fread(magic, 8, 1, f) == 1 && !memcmp(magic, RL_BIN_MAGIC, 8) &&
      fread(head, sizeof head, 1, f) == 1 && head[0] == key && head[1] > 0 &&
      head[1] < ((uint64_t)1 << 30) && (bin = malloc((size_t)head[1])) &&
      fread(bin, (size_t)head[1], 1, f) == 1 && fgetc(f) == EOF &&
      fnv(0xcbf29ce484222325ULL, bin, (size_t)head[1]) == head[2] &&
      loadable(bin, (size_t)head[1])) {
    size_t len = (size_t)head[1];
    const unsigned char *bins[1] = {bin};
    cl_int status, rc;
    prog = clCreateProgramWithBinary(e->context, 1, &e->device, &len, bins,
                                     &status, &rc);
    if (rc != CL_SUCCESS || status != CL_SUCCESS)
      prog = NULL;
    else
      prog = build(e, prog, NULL);
    if (prog) utimensat(AT_FDCWD, path, NULL, 0); /* used now */
  }
  free(bin);
  fclose(f);
  return prog;
}

static void store(cl_program prog, const char *dir, const char *path,
                  uint64_t key, uint64_t bound) {
  size_t len = 0;
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof len, &len, NULL) !=
          CL_SUCCESS ||
      len == 0)
    return;
  unsigned char *bin = malloc(len);
  unsigned char *bins[1] = {bin};
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s/.tmp-XXXXXX", dir);
  int fd = bin ? mkstemp(tmp) : -1;
  if (fd >= 0 &&
      clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) ==
          CL_SUCCESS &&
      loadable(bin, len)) {
    uint64_t head[3] = {key, len, fnv(0xcbf29ce484222325ULL, bin, len)};
    FILE *f = fdopen(fd, "wb");
    int ok = f && fwrite(RL_BIN_MAGIC, 8, 1, f) == 1 &&
             fwrite(head, sizeof head, 1, f) == 1 &&
             fwrite(bin, len, 1, f) == 1;
    ok = (f ? fclose(f) == 0 : (close(fd), 0)) && ok;
    if (!ok || rename(tmp, path))
      unlink(tmp);
    else
      prune(dir, strrchr(path, '/') + 1, bound);
  } else if (fd >= 0) {
    close(fd);
    unlink(tmp);
  }
  free(bin);
}

/* The cached program of this key and source, or NULL; e->lock held. */
static cl_program in_memory(relayout_engine *e, uint64_t key,
                            const char *source) {
  for (rl_program *p = e->programs; p; p = p->next)
    if (p->key == key && !strcmp(p->source, source)) return p->program;
  return NULL;
}

cl_program rl_program_get(relayout_engine *e, const char *source, int build_it,
                          relayout_error *err) {
  uint64_t key = key_of(e, source);
  pthread_mutex_lock(&e->lock);
  cl_program prog = in_memory(e, key, source);
  pthread_mutex_unlock(&e->lock);
  if (prog) return prog;
  rl_program *entry = calloc(1, sizeof *entry);
  if (!entry || !(entry->source = strdup(source))) {
    free(entry);
    rl_fail(err, RELAYOUT_ERR_NOMEM, "out of memory");
    return NULL;
  }
  char dir[4096], path[4200];
  int have_dir = cache_dir(e, dir, sizeof dir), built = 0;
  if (have_dir) entry_path(path, sizeof path, dir, key);
  prog = have_dir ? load(e, path, key) : NULL;
  if (!prog && build_it) {
    cl_int rc;
    const char *parts[] = {rl_prelude, source};
    size_t len[] = {sizeof rl_prelude - 1, strlen(source)};
    prog = clCreateProgramWithSource(e->context, 2, parts, len, &rc);
    if (rc == CL_SUCCESS)
      prog = build(e, prog, err);
    else {
      rl_fail(err, RELAYOUT_ERR_UNSUPPORTED, "clCreateProgramWithSource: %d",
              rc);
      prog = NULL;
    }
    built = prog != NULL;
  } else if (!prog) {
    rl_fail(err, RELAYOUT_ERR_UNSUPPORTED, "not compiled yet");
  }
  /* a builder asks for the binary, off the caller's path: on PoCL that
   * compiles every kernel of the program once more; an engine of cached
   * kernels leaves it to the process that builds them */
  int later = build_it == 1 && built && have_dir &&
              e->kernels != RELAYOUT_KERNELS_CACHED;
  pthread_mutex_lock(&e->lock);
  cl_program had = prog ? in_memory(e, key, source) : NULL;
  if (prog && !had) { /* another thread may have put it there meanwhile */
    entry->key = key;
    entry->program = prog;
    entry->unstored = later;
    e->unstored += later;
    if (later) pthread_cond_broadcast(&e->changed);
    entry->next = e->programs;
    e->programs = entry;
    entry = NULL;
    if (built)
      e->built_from_source++;
    else
      e->loaded_from_disk++;
  }
  pthread_mutex_unlock(&e->lock);
  if (built && have_dir && build_it == 2 && !had)
    store(prog, dir, path, key, e->cache_bytes);
  if (had) clReleaseProgram(prog);
  if (entry) {
    free(entry->source);
    free(entry);
  }
  return had ? had : prog;
}

rl_program *rl_program_unstored(relayout_engine *e) {
  for (rl_program *p = e->programs; p; p = p->next)
    if (p->unstored) {
      p->unstored = 0;
      e->unstored--;
      return p;
    }
  return NULL;
}

void rl_program_store(relayout_engine *e, const rl_program *p) {
  char dir[4096], path[4200];
  if (!cache_dir(e, dir, sizeof dir)) return;
  entry_path(path, sizeof path, dir, p->key);
  store(p->program, dir, path, p->key, e->cache_bytes);
}

void rl_programs_free(relayout_engine *e) {
  while (e->programs) {
    rl_program *p = e->programs;
    e->programs = p->next;
    clReleaseProgram(p->program);
    free(p->source);
    free(p);
  }
}
