/* The limit for writing per-I/O logs: what the page cache of DIR takes
 * from a program that does nothing but write log-like text, 256 KiB at a
 * time (iolab's block), round robin into four new files (the bandwidth,
 * IOPS, clat and lat logs) for SECONDS. Against it, iolab's log bytes per
 * second of a run with a line per I/O (docs/performance.md, goal 5).
 *
 *   cc -O2 -o logwrite_loop bench/logwrite_loop.c
 *   ./logwrite_loop DIR SECONDS   -> "MB/s N"
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s DIR SECONDS\n", argv[0]);
		return 2;
	}
	double secs = atof(argv[2]);
	size_t block = 1 << 18, len = 0;
	char *buf = malloc(block);
	if (!buf)
		return 1;
	/* Lines as a log with a line per I/O has them: time, value, dir, bs, offset. */
	while (len + 40 < block)
		len += sprintf(buf + len, "%zu, %zu, 0, 4096, 0\n", len / 1000, 1300 + len % 7);
	int fd[4];
	char path[4096];
	for (int i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/logwrite_loop.%d", argv[1], i);
		fd[i] = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd[i] < 0) {
			perror(path);
			return 1;
		}
	}
	double t0 = now(), t;
	size_t n = 0;
	do {
		for (int i = 0; i < 4; i++) {
			if (write(fd[i], buf, len) != (ssize_t)len) {
				perror("write");
				return 1;
			}
			n += len;
		}
		t = now();
	} while (t - t0 < secs);
	printf("MB/s %.0f\n", n / (t - t0) / 1e6);
	return 0;
}
