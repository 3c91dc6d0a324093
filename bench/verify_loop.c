/*
 * The limit for a verify=pattern write job: the file written in order
 * with pwrite(2) from one buffer filled once with the pattern, then read
 * back with pread(2), each block compared with that buffer. No
 * statistics at all. Each phase is timed on its own, as fio times a
 * verify job's writes and its read-back. The file is laid out with
 * posix_fallocate first, as both tools lay out a new file.
 *
 *   cc -O2 -o verify_loop verify_loop.c
 *   ./verify_loop FILE BYTES BLOCK PATTERN_BYTE
 *       -> prints "write_mbs N read_mbs N" (10^6 bytes per second)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: %s FILE BYTES BLOCK PATTERN_BYTE\n", argv[0]);
		return 2;
	}
	uint64_t bytes = strtoull(argv[2], NULL, 0);
	size_t bs = strtoull(argv[3], NULL, 0);
	int pattern = (int)strtol(argv[4], NULL, 0);
	if (bs == 0 || bytes < bs) {
		fprintf(stderr, "BLOCK must be at least 1 and at most BYTES\n");
		return 2;
	}
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	char *want = aligned_alloc(4096, (bs + 4095) / 4096 * 4096);
	char *got = aligned_alloc(4096, (bs + 4095) / 4096 * 4096);
	if (!want || !got)
		return 1;
	memset(want, pattern, bs);
	uint64_t blocks = bytes / bs;
	/* Laid out first, as both tools lay out a new file (fallocate). */
	int e = posix_fallocate(fd, 0, (off_t)(blocks * bs));
	if (e) {
		fprintf(stderr, "posix_fallocate: %s\n", strerror(e));
		return 1;
	}

	double t0 = now();
	for (uint64_t i = 0; i < blocks; i++) {
		if (pwrite(fd, want, bs, (off_t)(i * bs)) != (ssize_t)bs) {
			perror("pwrite");
			return 1;
		}
	}
	double t1 = now();
	for (uint64_t i = 0; i < blocks; i++) {
		if (pread(fd, got, bs, (off_t)(i * bs)) != (ssize_t)bs) {
			perror("pread");
			return 1;
		}
		if (memcmp(got, want, bs) != 0) {
			fprintf(stderr, "block %llu differs\n", (unsigned long long)i);
			return 1;
		}
	}
	double t2 = now();
	close(fd);
	unlink(argv[1]);
	printf("write_mbs %.1f read_mbs %.1f\n", blocks * bs / (t1 - t0) / 1e6,
	       blocks * bs / (t2 - t1) / 1e6);
	return 0;
}
