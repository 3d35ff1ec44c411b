/* images.c - JPEG and PNG files read and decoded (relayout_image_decode)
 * into frames of an AIPP configuration's input format and size */
#include "images.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>

const char *cli_image_load(unsigned char *out, const char *path,
                           const relayout_aipp *a, char *msg) {
  relayout_error err;
  cli_in in;
  unsigned char *file = NULL;
  if (cli_in_open_file(&in, cli_open_regular(path, &err), &err) ||
      (in.size > ((uint64_t)1 << 30) &&
       cli_fail(&err, RELAYOUT_ERR_FILE, "over 1 GiB: not an image")) ||
      cli_in_read(&in, &file, (size_t)in.size, &err)) {
    cli_in_close(&in);
    snprintf(msg, CLI_IMAGE_MSG, "%s", err.message);
    return msg;
  }
  cli_in_close(&in);
  /* out holds a frame: the caller's buffers are frame-sized */
  relayout_status s =
      relayout_image_decode(out, SIZE_MAX, file, (size_t)in.size, a, &err);
  free(file);
  if (!s) return NULL;
  snprintf(msg, CLI_IMAGE_MSG, "%s", err.message);
  return msg;
}
