/* Small POSIX file helpers shared by the compile cache and the command line: whole reads and writes that retry on
 * EINTR, and a name for what a path is when it is not the regular file a caller wanted. */
#ifndef HCQ_FILEIO_H
#define HCQ_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Reads until n bytes or end of input; returns the count (< n only at end of input), or -1 with errno. */
ssize_t hcq_read_up_to(int fd, void *buf, size_t n);
/* Writes all n bytes; false with errno on failure. */
bool hcq_write_all(int fd, const void *buf, size_t n);
/* "a directory", "a FIFO", "a symlink", "a character device", ... for messages ("X is a directory, not a file"). */
const char *hcq_file_kind(mode_t mode);

#endif
