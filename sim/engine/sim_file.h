/* sim_file.h -- the one way dtsim opens a file it reads as input (a trace,
 * an edge list, a schedule, a data set): only a regular file, after
 * following symbolic links, so that a FIFO cannot block `open` for ever
 * and a device such as /dev/zero cannot feed an endless stream; and the
 * documented bounds on what such a file may hold (docs/reliability.md).
 * Header-only, like sim_mix.h, so that the scenario loader, topologies/
 * and models/ share it without linking the engine or each other; it uses
 * only POSIX and keeps no state.  It does not read or parse anything.
 */
#ifndef SIM_FILE_H
#define SIM_FILE_H

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Longest line of a trace, edge-list or schedule file, in bytes (the
 * newline excluded): their lines hold three numbers. */
#define SIM_FILE_MAX_LINE 4096
/* Largest trace, edge-list or schedule file, in bytes. */
#define SIM_FILE_MAX_BYTES ((size_t)1 << 28)
/* Longest line of a LIBSVM or CSV data file, in bytes (after gunzip):
 * 64 MiB, a dense row of about four million features. */
#define SIM_FILE_MAX_DATA_LINE ((size_t)1 << 26)

/* What is wrong with a file that is not a regular one, for messages. */
static inline const char *sim_file_kind(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* Opens path for reading if it is a regular file (symbolic links
 * followed) of at most max_bytes bytes (0: any size; for a gzipped file
 * the bound is the caller's, on what it decompresses).  Returns a file
 * descriptor (the caller closes it), or -1: with *kind NULL and errno set
 * when it cannot be opened (EFBIG when it is larger than max_bytes), with
 * *kind naming what it is ("a FIFO", "a character device", ...) when it
 * is not a regular file.  The file is opened with O_NONBLOCK, so that a FIFO
 * swapped in after the stat cannot block either, and checked again with
 * fstat; the flag is then cleared (it means nothing for regular files). */
static inline int sim_file_open_input(const char *path, size_t max_bytes, const char **kind)
{
    struct stat sb;
    *kind = NULL;
    if (stat(path, &sb) != 0)
        return -1;
    if (!S_ISREG(sb.st_mode)) {
        *kind = sim_file_kind(sb.st_mode);
        return -1;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return -1;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (!S_ISREG(sb.st_mode)) {
        *kind = sim_file_kind(sb.st_mode);
        close(fd);
        return -1;
    }
    if (max_bytes > 0 && (unsigned long long)sb.st_size > (unsigned long long)max_bytes) {
        close(fd);
        errno = EFBIG;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl != -1)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

/* Reads one line of f into buf (cap bytes, cap >= 2), without its '\n';
 * the bytes are kept as they are (a NUL byte included) and buf is
 * NUL-terminated.  Returns the line's length, -1 at the end of the file
 * (nothing read) or on a read error (ferror tells), and -2 when the line
 * has more than cap - 1 bytes (the rest of it is left unread: the caller
 * reports the line as too long and stops). */
static inline long sim_file_read_line(FILE *f, char *buf, size_t cap)
{
    size_t n = 0;
    int c;
    while ((c = getc(f)) != EOF && c != '\n') {
        if (n + 1 >= cap) {
            buf[n] = '\0';
            return -2;
        }
        buf[n++] = (char)c;
    }
    buf[n] = '\0';
    if (c == EOF && n == 0)
        return -1;
    return (long)n;
}

#endif
