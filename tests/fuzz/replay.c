/* replay.c - runs a fuzz target over its corpus, without libFuzzer
 *
 * Each argument is a file or a directory of files; every file is one input
 * to LLVMFuzzerTestOneInput, which aborts on a failed check. Prints how
 * many inputs ran; an unreadable path or an empty corpus is an error, so
 * the test cannot pass on nothing.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  unsigned char *buf = NULL;
  size_t size = 0, room = 0, got;
  do {
    if (size == room) {
      room = room ? 2 * room : 4096;
      unsigned char *grown = realloc(buf, room);
      if (!grown) {
        fclose(f);
        free(buf);
        return 0;
      }
      buf = grown;
    }
    got = fread(buf + size, 1, room - size, f);
    size += got;
  } while (got);
  int ok = !ferror(f);
  fclose(f);
  if (ok) LLVMFuzzerTestOneInput(buf, size);
  free(buf);
  return ok;
}

int main(int argc, char **argv) {
  long inputs = 0;
  for (int i = 1; i < argc; i++) {
    DIR *dir = opendir(argv[i]);
    if (!dir) {
      if (!replay_file(argv[i])) {
        fprintf(stderr, "replay: cannot read %s\n", argv[i]);
        return 1;
      }
      inputs++;
      continue;
    }
    for (struct dirent *e; (e = readdir(dir));) {
      if (e->d_name[0] == '.') continue;
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
      if (!replay_file(path)) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        closedir(dir);
        return 1;
      }
      inputs++;
    }
    closedir(dir);
  }
  printf("%ld inputs replayed\n", inputs);
  return inputs ? 0 : 1;
}
