/*
 * The limit: a tight loop of pread(2) at random 4 KiB offsets of a file,
 * with no statistics at all. iolab's psync engine is measured against it.
 *
 *   cc -O2 -o pread_loop pread_loop.c
 *   ./pread_loop FILE SECONDS      -> prints "iops N"
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
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
	if (argc != 3) {
		fprintf(stderr, "usage: %s FILE SECONDS\n", argv[0]);
		return 2;
	}
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	struct stat st;
	fstat(fd, &st);
	uint64_t blocks = st.st_size / 4096;
	double secs = atof(argv[2]);
	char *buf = aligned_alloc(4096, 4096);
	uint64_t x = 88172645463325252ULL, n = 0;
	double start = now(), end = start + secs;
	for (;;) {
		/* Check the clock every 1024 reads: the loop stays syscall-bound. */
		for (int i = 0; i < 1024; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			if (pread(fd, buf, 4096, (off_t)((x % blocks) * 4096)) != 4096) {
				perror("pread");
				return 1;
			}
		}
		n += 1024;
		if (now() >= end)
			break;
	}
	printf("iops %.0f\n", n / (now() - start));
	return 0;
}
