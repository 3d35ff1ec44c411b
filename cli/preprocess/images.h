/* images.h - JPEG and PNG files and raw frames as the frames of an AIPP
 * configuration */
#ifndef RELAYOUT_CLI_IMAGES_H
#define RELAYOUT_CLI_IMAGES_H

#include "relayout_preprocess.h"

#include <stddef.h>
#include <stdint.h>

/* Room for a decoding's message. */
#define CLI_IMAGE_MSG sizeof(((relayout_error *)0)->message)
/* Reads and decodes the JPEG or PNG file `path` into one frame of a's
 * input format and size at out (relayout_image_decode): NULL, or why not
 * (in msg). Safe from any thread. */
const char *cli_image_load(unsigned char *out, const char *path,
                           const relayout_aipp *a, char *msg);

/* Images decoded on a thread per core into `slots` slots of `batch`
 * frames (zeroed at first) ahead of their use: image i into slot
 * (i / batch) % slots, once the batch before in that slot is released.
 * NULL: out of memory, or no thread. */
typedef struct cli_decoder cli_decoder;
cli_decoder *cli_decoder_start(char *const *paths, int n,
                               const relayout_aipp *a, int64_t frame,
                               int64_t batch, int slots);
/* Waits for batch k: its slot's frames, and NULL, or why the first image
 * that failed (*failed, its index) did, once every image before it is
 * done. */
const char *cli_decoder_wait(cli_decoder *d, int64_t k, unsigned char **frames,
                             int *failed);
/* Batch k is used: its slot takes the batch `slots` on. */
void cli_decoder_release(cli_decoder *d, int64_t k);
/* Stops the threads (a running decode finishes) and frees d. */
void cli_decoder_stop(cli_decoder *d);

/* relayout preprocess's FRAMES: one raw file of whole frames, or JPEG and
 * PNG images (paths, directories of them in name order, @LIST files of
 * paths, a line each) decoded into frames of a's format and size (frame
 * bytes each), handed out in batches. The cli_frames_* calls that fail
 * print why and return the exit code. */
typedef struct cli_frames cli_frames;
/* Opens a raw file or stream of frames, or lists the images; *count: the
 * frames, -1 for a stream (known at its end). */
int cli_frames_open(cli_frames **f, int64_t *count, const char *const *inputs,
                    int ninputs, const relayout_aipp *a, int64_t frame,
                    const char *cmd);
/* The input (of the `inputs` f was opened with, or an image they name)
 * that is the file at path, or NULL. */
const char *cli_frames_reads(const cli_frames *f, const char *const *inputs,
                             int ninputs, const char *path);
/* Hands out batches of `batch` frames from now on, images decoding ahead,
 * `slots` batches held at once. */
int cli_frames_start(cli_frames *f, int64_t batch, int slots, const char *cmd);
/* Batch k's frames, `batch` whole ones, once they are there and batch k -
 * slots is released: *got of them the input's (the rest, past its last
 * frame, not), 0 past its end. Batches are taken and released in order;
 * a batch's frames stay until it is released. */
int cli_frames_batch(cli_frames *f, int64_t k, const unsigned char **frames,
                     int64_t *got, const char *cmd);
/* Batch k is used. */
void cli_frames_release(cli_frames *f, int64_t k);
void cli_frames_close(cli_frames *f);

#endif /* RELAYOUT_CLI_IMAGES_H */
