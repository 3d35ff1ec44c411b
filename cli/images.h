/* images.h - JPEG and PNG files and raw frames as the frames of an AIPP
 * configuration */
#ifndef RELAYOUT_CLI_IMAGES_H
#define RELAYOUT_CLI_IMAGES_H

#include "relayout_preprocess.h"

#include <stddef.h>
#include <stdint.h>

enum { CLI_IMAGE_NONE, CLI_IMAGE_JPEG, CLI_IMAGE_PNG };
/* What a file's first n bytes say it is. */
int cli_image_kind(const unsigned char *head, size_t n);
/* Room for a decoding's message. */
#define CLI_IMAGE_MSG 256
/* Decodes a JPEG or PNG file held in memory into one frame of a's input
 * format and size at out: NULL, or why not (in msg, or a constant). */
const char *cli_image_decode(unsigned char *out, const unsigned char *file,
                             size_t size, const relayout_aipp *a, char *msg);
/* Reads and decodes the JPEG or PNG file `path` the same way: NULL, or
 * why not. Safe from any thread. */
const char *cli_image_load(unsigned char *out, const char *path,
                           const relayout_aipp *a, char *msg);

/* relayout preprocess's FRAMES: one raw file of whole frames, or JPEG and
 * PNG images (paths, directories of them in name order, @LIST files of
 * paths, a line each) decoded into frames of a's format and size (frame
 * bytes each). *frames (cli_alloc_aligned) holds *n frames. Prints on
 * failure and returns the exit code. */
int cli_frames(unsigned char **frames, int64_t *n, const char *const *inputs,
               int ninputs, const relayout_aipp *a, int64_t frame,
               const char *cmd);

#endif /* RELAYOUT_CLI_IMAGES_H */
